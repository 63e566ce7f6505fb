// SPDX-License-Identifier: GPL-2.0
/*
 * idle-replay: the governor registry.  Each governor source registers itself
 * from its initcall (a constructor, see kapi.h) under the label the build
 * gave it; govs_init() then checks the build's list (govlist.c), gives each
 * its role and puts them in report order.
 */

#include <stdlib.h>

#include "replay.h"

long replay_tick_nsec = 4000000;

struct gov_entry replay_govs[MAX_GOVS];
int replay_ngovs;

int replay_register_governor(struct cpuidle_governor *gov, const char *label)
{
	int i;

	for (i = 0; i < replay_ngovs; i++)
		if (!strcmp(replay_govs[i].label, label))
			die("governor '%s' registered twice (a source may register one governor)",
			    label);
	if (replay_ngovs == MAX_GOVS)
		die("more than %d governors (at %s); raise MAX_GOVS in replay.h", MAX_GOVS, label);
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

/* The label's kind: "teo" for teo-7.3, "menu" for menu-6.12. */
static bool kind_is(const char *label, const char *kind)
{
	size_t n = strlen(kind);

	return !strncmp(label, kind, n) && (!label[n] || label[n] == '-');
}

const struct gov_entry *gov_by_role(enum gov_role role, const char *kind)
{
	int i;

	for (i = 0; i < replay_ngovs; i++)
		if (replay_govs[i].role == role &&
		    (!kind || kind_is(replay_govs[i].label, kind)))
			return &replay_govs[i];
	return NULL;
}

bool gov_is_baseline(const struct gov_entry *g)
{
	return g->role == ROLE_BASE || g->role == ROLE_MAINLINE;
}

/* The governors whose best result is the yardstick of a closed loop. */
bool gov_in_reference(const struct gov_entry *g)
{
	return g->role == ROLE_OURS || gov_is_baseline(g);
}

static enum gov_role role_of(const char *name)
{
	static const char *const names[] = {
		[ROLE_ORACLE] = "oracle", [ROLE_OURS] = "ours",
		[ROLE_BASE] = "base", [ROLE_MAINLINE] = "mainline",
		[ROLE_EXTRA] = "extra", [ROLE_TWIN] = "twin",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(names[i], name))
			return (enum gov_role)i;
	die("govlist: unknown role '%s'", name);
}

/* Oracle, ours, base teo and menu, mainline teo and menu, extras by name. */
static int by_rank(const void *a, const void *b)
{
	const struct gov_entry *x = a, *y = b;

	if (x->role != y->role)
		return (int)x->role - (int)y->role;
	if (x->role != ROLE_EXTRA && kind_is(x->label, "teo") != kind_is(y->label, "teo"))
		return kind_is(x->label, "teo") ? -1 : 1;
	return strcmp(x->label, y->label);
}

void govs_init(void)
{
	const struct gov_expect *e;
	struct gov_entry *g;

	replay_register_governor(oracle_governor(), "oracle");
	replay_govs[replay_ngovs - 1].role = ROLE_ORACLE;
	replay_govs[replay_ngovs - 1].source = "the lab (src/oracle.c)";
	for (e = replay_expected_govs; e->label; e++) {
		g = (struct gov_entry *)gov_find(e->label);
		if (!g)
			die("governor '%s' (%s) registered nothing: the source has no postcore_initcall() calling cpuidle_register_governor()",
			    e->label, e->source);
		g->role = role_of(e->role);
		g->source = e->source;
	}
	for (g = replay_govs; g < replay_govs + replay_ngovs; g++)
		if (!g->source)
			die("governor '%s' is not in the build's list", g->label);
	qsort(replay_govs, replay_ngovs, sizeof(*replay_govs), by_rank);
}
