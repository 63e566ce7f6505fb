/* SPDX-License-Identifier: GPL-2.0 */
/* idle-replay: command-line options shared by the commands. */
#ifndef IDLE_REPLAY_CLI_H
#define IDLE_REPLAY_CLI_H

#include "replay.h"

struct cli {
	const char *data;	/* folder of the platform files */
	const char *out;
	const char *scenario;	/* scenario name or family filter */
	const char *platform;	/* platform name or file */
	const char *trace;
	const char *must_pass;	/* comma-separated governor labels */
	const char *diff;	/* "A,B": governors the differential compares */
	u64 decisions, seed;
	int hz;
	const struct gov_entry *gov[MAX_GOVS];
	int ngov;
	char *args[16];		/* positional arguments */
	int nargs;
};

struct cli cli_parse(int argc, char **argv, const char *allowed);
bool cli_listed(const char *list, const char *label);
int cli_platforms(const struct cli *c, struct platform **out);
bool cli_scenario_wanted(const struct cli *c, const struct scenario *s);

#endif /* IDLE_REPLAY_CLI_H */
