// SPDX-License-Identifier: GPL-2.0
/*
 * Stress: while a mixed idle workload runs on every CPU, switch between all
 * available governors in a loop and toggle the "disable" file of random
 * states on random CPUs.  Afterwards the kernel must be healthy: every
 * switch took effect, the workload ran throughout, idle still works, and
 * the kernel log has no new warning, BUG, oops or stall report.
 *
 * The default run makes DEFAULT_SWITCHES switches, a few seconds' worth,
 * to stay within the suite's time budget.  For a long run set
 * CPUIDLE_STRESS_SWITCHES, and lift the runner's timeout, e.g.:
 *
 *   CPUIDLE_STRESS_SWITCHES=200000 ./run_kselftest.sh \
 *	-t cpuidle-teo:gov_stress -o 7200
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kselftest.h"
#include "cpuidle_util.h"

#define DEFAULT_SWITCHES	200

static atomic_bool stop;
static atomic_bool workload_failed;

static void *workload(void *arg)
{
	while (!atomic_load(&stop))
		if (run_idle_mix(10)) {
			atomic_store(&workload_failed, true);
			break;
		}
	return arg;
}

static long switches_wanted(void)
{
	const char *env = getenv("CPUIDLE_STRESS_SWITCHES");
	char *end;
	long n;

	if (!env || !*env)
		return DEFAULT_SWITCHES;
	n = strtol(env, &end, 10);
	if (*end || n <= 0)
		ksft_exit_fail_msg("CPUIDLE_STRESS_SWITCHES=%s is not a positive number\n",
				   env);
	return n;
}

int main(void)
{
	char names[MAX_GOVERNORS][NAME_LEN], cur[NAME_LEN];
	unsigned long long usage = 0;
	struct idle_snap after;
	long i, switches, wrong = 0;
	int n, fd, bad, s, err, mix;
	pthread_t tid;

	ksft_print_header();
	switches = switches_wanted();
	cpuidle_setup(NULL);
	n = list_governors(names, MAX_GOVERNORS);
	fd = kmsg_open();
	if (fd < 0)
		ksft_exit_skip("cannot read /dev/kmsg\n");
	ksft_print_msg("%d governors, %d states, %d CPUs, %ld switches\n", n,
		       nr_states, nr_cpus, switches);
	ksft_set_plan(4);
	srand(1);

	err = pthread_create(&tid, NULL, workload, NULL);
	if (err)
		ksft_exit_fail_msg("pthread_create: %s\n", strerror(err));
	for (i = 0; i < switches && !atomic_load(&workload_failed); i++) {
		const char *gov = names[i % n];

		if (write_governor(gov) || read_governor(cur, sizeof(cur)) ||
		    strcmp(cur, gov))
			wrong++;
		if (nr_states > 1)
			set_state_disabled_cpu(cpus[rand() % nr_cpus],
					       rand() % nr_states, rand() & 1);
		/* Give the idle loop a moment under this combination. */
		if (!(i % 8))
			sleep_us(1000);
	}
	atomic_store(&stop, true);
	pthread_join(tid, NULL);
	cpuidle_restore();

	ksft_test_result(!wrong, "%ld governor switches, %ld did not take effect\n",
			 i, wrong);
	ksft_test_result(!atomic_load(&workload_failed),
			 "the idle workload ran through the switches\n");

	/* Idle still works after all that. */
	reload_states();
	mix = measure_idle_mix(10, &after);
	for (s = 0; s < nr_states; s++)
		usage += after.st[s].usage;
	ksft_test_result(!mix && usage > 0,
			 "idle entries after the stress: %llu%s\n", usage,
			 mix ? ", but the idle workload failed" : "");

	bad = kmsg_bad_lines(fd);
	ksft_test_result(!bad, "kernel log: %d bug reports during the test\n", bad);
	ksft_finished();
}
