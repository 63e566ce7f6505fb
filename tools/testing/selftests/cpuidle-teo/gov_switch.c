// SPDX-License-Identifier: GPL-2.0
/*
 * Switching governors through current_governor works between every pair of
 * available governors, in both directions, and current_governor_ro shows
 * the governor in use; writing a bogus governor name fails and leaves the
 * current governor as it was.  Nothing here is specific to teo: it is
 * switched to like any other governor, and a kernel without it only lacks
 * those pairs.
 */
#include <stdio.h>
#include <string.h>

#include "../kselftest.h"
#include "cpuidle_util.h"

/* Switch to @gov; true if the write worked and both files show it. */
static bool switch_to(const char *gov)
{
	char cur[NAME_LEN], ro[NAME_LEN];
	int err;

	err = write_governor(gov);
	if (err) {
		ksft_print_msg("writing %s to current_governor: %s\n", gov,
			       strerror(-err));
		return false;
	}
	if (read_governor(cur, sizeof(cur)) ||
	    read_file(CPUIDLE_DIR "/current_governor_ro", ro, sizeof(ro)) <= 0) {
		ksft_print_msg("cannot read the governor back after writing %s\n",
			       gov);
		return false;
	}
	if (strcmp(cur, gov) || strcmp(ro, gov)) {
		ksft_print_msg("wrote %s, current_governor shows %s, current_governor_ro %s\n",
			       gov, cur, ro);
		return false;
	}
	return true;
}

static void check_pairs(char names[][NAME_LEN], int n)
{
	int from, to, pairs = 0;
	bool ok = true;

	if (n < 2) {
		ksft_test_result_skip("only one governor (%s): nothing to switch between\n",
				      n ? names[0] : "none");
		return;
	}
	for (from = 0; from < n; from++) {
		for (to = 0; to < n; to++) {
			if (from == to)
				continue;
			pairs++;
			if (!switch_to(names[from]) || !switch_to(names[to])) {
				ksft_print_msg("switch %s -> %s failed\n",
					       names[from], names[to]);
				ok = false;
			}
		}
	}
	ksft_test_result(ok, "switch between every pair of the %d governors (%d pairs)\n",
			 n, pairs);
}

static void check_bogus_name(void)
{
	char before[NAME_LEN], after[NAME_LEN];

	if (read_governor(before, sizeof(before))) {
		ksft_test_result_fail("cannot read current_governor\n");
		return;
	}
	if (!write_governor("no-such-governor")) {
		ksft_test_result_fail("writing a bogus governor name succeeded\n");
		return;
	}
	if (read_governor(after, sizeof(after))) {
		ksft_test_result_fail("cannot read current_governor\n");
		return;
	}
	ksft_test_result(!strcmp(after, before),
			 "bogus governor name refused, governor %s (was %s)\n",
			 after, before);
}

int main(void)
{
	char names[MAX_GOVERNORS][NAME_LEN];
	int i, n;

	ksft_print_header();
	cpuidle_setup(NULL);
	n = list_governors(names, MAX_GOVERNORS);
	for (i = 0; i < n; i++)
		ksft_print_msg("available governor: %s\n", names[i]);
	if (!governor_available("teo"))
		ksft_print_msg("teo is not available (CONFIG_CPU_IDLE_GOV_TEO is off)\n");

	ksft_set_plan(2);
	check_pairs(names, n);
	check_bogus_name();
	ksft_finished();
}
