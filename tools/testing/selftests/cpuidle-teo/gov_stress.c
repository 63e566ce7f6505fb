// SPDX-License-Identifier: GPL-2.0
/*
 * Stress: while a mixed idle workload runs on every CPU, switch between all
 * available governors in a loop and toggle the "disable" file of random
 * states on random CPUs.  Afterwards the kernel must be healthy: every
 * switch took effect, idle still works, and the kernel log has no new
 * warning, BUG, oops or stall report.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kselftest.h"
#include "cpuidle_util.h"

#define SWITCHES	400
#define MIX_ROUNDS	150

static void *workload(void *arg)
{
	run_idle_mix(MIX_ROUNDS);
	return arg;
}

int main(void)
{
	char names[MAX_GOVERNORS][NAME_LEN], cur[NAME_LEN];
	struct idle_snap after;
	unsigned long long usage = 0;
	int i, n, fd, bad, wrong = 0;
	pthread_t tid;

	ksft_print_header();
	cpuidle_setup("teo");
	n = list_governors(names, MAX_GOVERNORS);
	fd = kmsg_open();
	if (fd < 0)
		ksft_exit_skip("cannot read /dev/kmsg\n");
	ksft_print_msg("%d governors, %d states, %d CPUs, %d switches\n", n,
		       nr_states, nr_cpus, SWITCHES);
	ksft_set_plan(3);
	srand(1);

	if (pthread_create(&tid, NULL, workload, NULL))
		ksft_exit_fail_msg("pthread_create failed\n");
	for (i = 0; i < SWITCHES; i++) {
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
	pthread_join(tid, NULL);
	cpuidle_restore();

	ksft_test_result(!wrong, "%d governor switches, %d did not take effect\n",
			 SWITCHES, wrong);

	/* Idle still works after all that, under teo. */
	write_governor("teo");
	reload_states();
	measure_idle_mix(10, &after);
	for (i = 0; i < nr_states; i++)
		usage += after.st[i].usage;
	ksft_test_result(usage > 0, "idle entries after the stress: %llu\n", usage);

	bad = kmsg_bad_lines(fd);
	ksft_test_result(!bad, "kernel log: %d bug reports during the test\n", bad);
	ksft_finished();
}
