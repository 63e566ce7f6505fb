// SPDX-License-Identifier: GPL-2.0
/*
 * A timer-driven idle pattern under teo: one thread, pinned to one CPU,
 * sleeps 50 ms at a time.  Every wakeup is a timer the governor can see
 * coming, so the CPU should spend the large majority of its idle time in
 * the deepest enabled state, and few idle periods should be too shallow
 * ("below": the miss this pattern provokes in a governor that distrusts
 * the timer).  "Above" misses are printed but not bounded: here they come
 * from interrupts that are no part of the pattern (device, IPI), which no
 * governor can foresee.  The bounds are ratios of the kernel's own
 * counters, never a measured time.
 */
#include <stdio.h>

#include "../kselftest.h"
#include "cpuidle_util.h"

#define SLEEP_US	50000
#define SLEEPS		40
/* "Large majority": at least this share of idle time in the deepest state. */
#define DEEP_SHARE_PCT	75
/* "Few misses": at most this share of the CPU's idle entries too shallow. */
#define MISS_PCT	25

int main(void)
{
	unsigned long long time_us = 0, usage = 0, above = 0, below = 0;
	unsigned long long deep_time;
	struct idle_snap before, after;
	int cpu, deepest, i, s;

	ksft_print_header();
	cpuidle_setup("teo");
	deepest = deepest_usable(~0ULL);
	if (!deepest)
		ksft_exit_skip("no enabled idle state deeper than state 0\n");
	if (states[deepest].residency_us * 2 > SLEEP_US)
		ksft_exit_skip("deepest state %s needs %llu us, too long for %d us sleeps\n",
			       states[deepest].name, states[deepest].residency_us,
			       SLEEP_US);

	/* The last CPU: usually the least busy with housekeeping. */
	cpu = cpus[nr_cpus - 1];
	if (pin_self(cpu))
		ksft_exit_fail_msg("cannot run on CPU %d\n", cpu);
	ksft_set_plan(2);

	/* Two sleeps to let the governor's metrics settle first. */
	sleep_us(SLEEP_US);
	sleep_us(SLEEP_US);
	read_snap(cpu, &before);
	for (i = 0; i < SLEEPS; i++)
		sleep_us(SLEEP_US);
	read_snap(cpu, &after);

	snap_delta(&after, &before);
	print_snap("CPU idle while sleeping 50 ms at a time:", &after);
	for (s = 0; s < nr_states; s++) {
		time_us += after.st[s].time_us;
		usage += after.st[s].usage;
		above += after.st[s].above;
		below += after.st[s].below;
	}
	deep_time = after.st[deepest].time_us;

	ksft_test_result(time_us && deep_time * 100 >= time_us * DEEP_SHARE_PCT,
			 "deepest state %s holds %llu of %llu us of idle time (want >= %d%%)\n",
			 states[deepest].name, deep_time, time_us, DEEP_SHARE_PCT);
	ksft_test_result(usage && below * 100 <= usage * MISS_PCT,
			 "%llu of %llu idle periods too shallow (want <= %d%%), %llu too deep\n",
			 below, usage, MISS_PCT, above);
	ksft_finished();
}
