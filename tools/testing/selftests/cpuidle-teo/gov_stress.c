// SPDX-License-Identifier: GPL-2.0
/*
 * Stress: while a mixed idle workload runs on every CPU, switch between all
 * available governors in a loop and toggle the "disable" file of random
 * states on random CPUs.  Afterwards the kernel must be healthy: every
 * switch took effect, the workload ran throughout, idle still works, and
 * the kernel log has no new report of a kernel bug.
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

/*
 * The kernel log check must see every kind of report it names and nothing
 * else: first lines of reports as the kernels of today print them, and
 * ordinary lines that hold the same words elsewhere.
 */
static void check_kmsg_patterns(void)
{
	static const char * const reports[] = {
		"BUG: kernel NULL pointer dereference, address: 0000000000000008",
		"BUG: KASAN: slab-use-after-free in teo_update+0x1c/0x2a0",
		"BUG: sleeping function called from invalid context at kernel/sched/completion.c:111",
		"WARNING: CPU: 1 PID: 0 at drivers/cpuidle/cpuidle.c:230 cpuidle_enter_state+0x3c/0x4e0",
		"WARNING: drivers/cpuidle/cpuidle.c:230 at cpuidle_enter_state+0x3c/0x4e0, CPU#1: swapper/1/0",
		"WARNING: possible circular locking dependency detected",
		"WARNING: suspicious RCU usage",
		"Oops: general protection fault, probably for non-canonical address 0xdffffc0000000001: 0000 [#1] PREEMPT SMP KASAN",
		"Internal error: Oops: 0000000096000005 [#1] PREEMPT SMP",
		"Kernel panic - not syncing: Fatal exception",
		"rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:",
		"rcu: INFO: rcu_sched self-detected stall on CPU",
		"rcu: INFO: rcu_preempt detected expedited stalls on CPUs/tasks: {",
		"INFO: rcu_tasks detected stalls on tasks:",
		"watchdog: BUG: soft lockup - CPU#0 stuck for 26s! [swapper/0:0]",
		"watchdog: CPU1: Watchdog detected hard LOCKUP on cpu 1",
		"INFO: task kworker/0:1:12 blocked for more than 122 seconds.",
		"UBSAN: array-index-out-of-bounds in drivers/cpuidle/governors/teo.c:300:7",
	};
	static const char * const ordinary[] = {
		"cpuidle: using governor teo",
		"Run /init as init process",
		"Freeing unused kernel image (initmem) memory: 2048K",
		"rcu: Hierarchical RCU implementation.",
		"\tRCU CPU stall warnings timeout set to 21 (rcu_cpu_stall_timeout).",
		"NMI watchdog: Perf NMI watchdog permanently disabled",
		"watchdog: Delayed init of the lockup detector failed: -19",
		"ACPI FFH: OperationRegion handler could not be installed",
		"Future hung task reports are suppressed, see sysctl kernel.hung_task_warnings",
	};
	unsigned int i, missed = 0, wrong = 0;

	for (i = 0; i < ARRAY_SIZE(reports); i++) {
		if (!kmsg_is_report(reports[i])) {
			ksft_print_msg("not recognised as a report: %s\n",
				       reports[i]);
			missed++;
		}
	}
	for (i = 0; i < ARRAY_SIZE(ordinary); i++) {
		if (kmsg_is_report(ordinary[i])) {
			ksft_print_msg("taken for a report: %s\n", ordinary[i]);
			wrong++;
		}
	}
	ksft_test_result(!missed && !wrong,
			 "kernel log check: %u of %zu report lines recognised, %u of %zu ordinary lines taken for one\n",
			 (unsigned int)ARRAY_SIZE(reports) - missed,
			 ARRAY_SIZE(reports), wrong, ARRAY_SIZE(ordinary));
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
	ksft_set_plan(5);
	check_kmsg_patterns();
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
