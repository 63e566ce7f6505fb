// SPDX-License-Identifier: GPL-2.0
/*
 * With teo as the governor, an idle state whose "disable" file is set on
 * every CPU must not be entered (its usage count must not move) while a
 * mixed idle workload runs; the other states must still be used.
 */
#include <stdio.h>

#include "../kselftest.h"
#include "cpuidle_util.h"

#define ROUNDS	60

static void check_disabled(int state)
{
	unsigned long long others = 0;
	struct idle_snap after;
	char title[96];
	int s;

	if (set_state_disabled(state, true)) {
		ksft_test_result_fail("disable state%d (%s): cannot write\n",
				      state, states[state].name);
		return;
	}
	measure_idle_mix(ROUNDS, &after);
	set_state_disabled(state, false);

	snprintf(title, sizeof(title), "state%d (%s) disabled on all CPUs:",
		 state, states[state].name);
	print_snap(title, &after);
	for (s = 0; s < nr_states; s++)
		if (s != state)
			others += after.st[s].usage;

	if (!others)
		ksft_test_result_fail("disable state%d (%s): no idle entries at all\n",
				      state, states[state].name);
	else
		ksft_test_result(after.st[state].usage == 0,
				 "disable state%d (%s): entered %llu times, other states %llu\n",
				 state, states[state].name,
				 after.st[state].usage, others);
}

int main(void)
{
	int deepest;

	ksft_print_header();
	cpuidle_setup("teo");
	if (nr_states < 2)
		ksft_exit_skip("only one idle state: nothing to disable\n");

	deepest = nr_states - 1;
	ksft_set_plan(nr_states > 2 ? 2 : 1);
	check_disabled(deepest);
	/* A middle state too: teo must step over the hole in the table. */
	if (nr_states > 2)
		check_disabled(deepest - 1);

	ksft_finished();
}
