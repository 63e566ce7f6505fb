// SPDX-License-Identifier: GPL-2.0
/*
 * A timer-driven idle pattern: one thread, pinned to one CPU, sleeps 50 ms
 * at a time.  Every wakeup is a timer the governor can see coming, which
 * teo's design trusts most, so teo should spend as much of the idle time
 * in the deepest enabled state as menu does.
 *
 * Background activity of a real machine (device interrupts, IPIs,
 * housekeeping timers) ends some of these idle periods early for every
 * governor alike, so no absolute share is asserted: teo and menu run the
 * same pattern in alternation, ROUNDS times each, in the same run, and the
 * median deepest-state share of teo must not be more than TOLERANCE_PCT
 * percentage points below menu's.  The "too shallow" (below) and "too
 * deep" (above) counts are printed for both, as information.  Without
 * menu there is nothing to compare with and the check is skipped, with
 * teo's numbers printed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../kselftest.h"
#include "cpuidle_util.h"

#define SLEEP_US	50000
#define SLEEPS		40
#define ROUNDS		3
#define TOLERANCE_PCT	10

struct timer_round {
	double deep_pct;	/* share of idle time in the deepest state */
	double below_pct;	/* idle entries too shallow */
	double above_pct;	/* idle entries too deep */
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median_deep(const struct timer_round *r, int n)
{
	double v[ROUNDS];
	int i;

	for (i = 0; i < n; i++)
		v[i] = r[i].deep_pct;
	qsort(v, n, sizeof(v[0]), cmp_double);
	return v[n / 2];
}

static void print_round(const char *gov, int i, const struct timer_round *r)
{
	ksft_print_msg("round %d, %s: deepest %.1f%% of idle time, below %.1f%%, above %.1f%%\n",
		       i, gov, r->deep_pct, r->below_pct, r->above_pct);
}

static void run_round(const char *gov, int cpu, int deepest,
		      struct timer_round *r)
{
	unsigned long long time_us = 0, usage = 0, above = 0, below = 0;
	struct idle_snap before, after;
	char title[96];
	int i, s;

	if (write_governor(gov))
		ksft_exit_fail_msg("cannot switch to %s\n", gov);
	/* Two sleeps to let the governor's statistics settle first. */
	sleep_us(SLEEP_US);
	sleep_us(SLEEP_US);
	read_snap(cpu, &before);
	for (i = 0; i < SLEEPS; i++)
		sleep_us(SLEEP_US);
	read_snap(cpu, &after);
	snap_delta(&after, &before);

	snprintf(title, sizeof(title), "%s, CPU %d idle while sleeping 50 ms at a time:",
		 gov, cpu);
	print_snap(title, &after);
	for (s = 0; s < nr_states; s++) {
		time_us += after.st[s].time_us;
		usage += after.st[s].usage;
		above += after.st[s].above;
		below += after.st[s].below;
	}
	r->deep_pct = time_us ? 100.0 * after.st[deepest].time_us / time_us : 0;
	r->below_pct = usage ? 100.0 * below / usage : 0;
	r->above_pct = usage ? 100.0 * above / usage : 0;
}

int main(void)
{
	struct timer_round teo[ROUNDS], menu[ROUNDS];
	double teo_deep, menu_deep;
	int cpu, deepest, i;
	bool have_menu;

	ksft_print_header();
	cpuidle_setup("teo");
	deepest = deepest_usable(~0ULL);
	if (!deepest)
		ksft_exit_skip("no enabled idle state deeper than state 0\n");
	if (states[deepest].residency_us * 2 > SLEEP_US)
		ksft_exit_skip("deepest state %s needs %llu us, too long for %d us sleeps\n",
			       states[deepest].name, states[deepest].residency_us,
			       SLEEP_US);
	have_menu = governor_available("menu");

	/* The last CPU: usually the least busy with housekeeping. */
	cpu = cpus[nr_cpus - 1];
	if (pin_self(cpu))
		ksft_exit_fail_msg("cannot run on CPU %d\n", cpu);
	ksft_set_plan(1);

	for (i = 0; i < ROUNDS; i++) {
		run_round("teo", cpu, deepest, &teo[i]);
		if (have_menu)
			run_round("menu", cpu, deepest, &menu[i]);
	}
	for (i = 0; i < ROUNDS; i++) {
		print_round("teo", i, &teo[i]);
		if (have_menu)
			print_round("menu", i, &menu[i]);
	}
	teo_deep = median_deep(teo, ROUNDS);
	if (!have_menu) {
		ksft_test_result_skip("no menu to compare with; teo: %.1f%% of idle time in %s\n",
				      teo_deep, states[deepest].name);
		ksft_finished();
	}
	menu_deep = median_deep(menu, ROUNDS);
	/* Median share of idle time in the deepest state; teo may trail a bit. */
	ksft_test_result(teo_deep + TOLERANCE_PCT >= menu_deep,
			 "timer wakeups, %s: teo %.1f%%, menu %.1f%% (slack %d)\n",
			 states[deepest].name, teo_deep, menu_deep, TOLERANCE_PCT);
	ksft_finished();
}
