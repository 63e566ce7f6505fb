// SPDX-License-Identifier: GPL-2.0
/*
 * idle-replay: the kernel calls of the shim (kapi.h), answered from the
 * simulated machine that is running (replay_machine).
 */

#include "replay.h"

long replay_tick_nsec = 4000000;

struct gov_entry replay_govs[MAX_GOVS];
int replay_ngovs;

int replay_register_governor(struct cpuidle_governor *gov, const char *label)
{
	int i;

	for (i = 0; i < replay_ngovs; i++)
		if (!strcmp(replay_govs[i].label, label))
			die("two governors are labelled '%s'", label);
	if (replay_ngovs == MAX_GOVS)
		die("more than %d governors", MAX_GOVS);
	replay_govs[replay_ngovs].label = label;
	replay_govs[replay_ngovs].gov = gov;
	replay_ngovs++;
	return 0;
}

const struct gov_entry *gov_find(const char *label)
{
	int i;

	for (i = 0; i < replay_ngovs; i++)
		if (!strcmp(replay_govs[i].label, label))
			return &replay_govs[i];
	return NULL;
}
