/* SPDX-License-Identifier: GPL-2.0 */
/* idle-replay: command-line options shared by the commands. */
#ifndef IDLE_REPLAY_CLI_H
#define IDLE_REPLAY_CLI_H

#include "replay.h"

#define MAX_DATA_DIRS	8
#define MAX_SCENARIO_OPTS	16

struct cli {
	const char *data[MAX_DATA_DIRS];	/* folders of platform files */
	int ndata;
	const char *out;
	const char *scenario[MAX_SCENARIO_OPTS];	/* names or families */
	int nscenario;
	const char *platform;	/* platform name or file */
	const char *trace;
	const char *must_pass;	/* comma-separated governor labels */
	const char *diff;	/* "A,B": governors the differential compares */
	const char *gates;	/* regression gate thresholds file */
	const char *intended;	/* intended differences file */
	const char *kunit;	/* KUnit source the intended differences name */
	const char *known;	/* documented misses of the targets */
	const char *draft;	/* write every miss in known-misses' format */
	const char *mutants;	/* folder of the mutants the differences name */
	const char *ours;	/* judge this governor as ours (the gates' tests) */
	const char *json;	/* run: the results as JSON to this file */
	const char *tsv;	/* overhead, targets: the numbers as TSV */
	u64 decisions, seed, jobs, rounds;
	int hz;
	bool targets;		/* --targets: the targets are a gate too */
	bool per_state;		/* --per-state: run prints the counters */
	bool events;		/* --events: check B's trace events (diff) */
	const struct gov_entry *gov[MAX_GOVS];
	int ngov;
	char *args[16];		/* positional arguments */
	int nargs;
};

struct cli cli_parse(int argc, char **argv, const char *allowed);
bool cli_listed(const char *list, const char *label);
int cli_platforms(const struct cli *c, struct platform **out);
bool cli_scenario_wanted(const struct cli *c, const struct scenario *s);
int cli_scenarios(const struct cli *c, struct scenario **out);

#endif /* IDLE_REPLAY_CLI_H */
