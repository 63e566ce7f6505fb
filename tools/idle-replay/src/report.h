/* SPDX-License-Identifier: GPL-2.0 */
/* idle-replay: what the report modules share. */
#ifndef IDLE_REPLAY_REPORT_H
#define IDLE_REPLAY_REPORT_H

#include "replay.h"

struct report {
	const struct gov_entry *gov[MAX_GOVS];	/* the oracle first */
	int ng;
	struct scenario *sc;
	int ns;
	struct platform *ps;
	int np;
	struct result *prim;	/* [scenario][gov] on the scenario's platform */
	struct result *all;	/* [scenario][platform][gov] */
};

void run_set(const struct scenario *s, const struct platform *p,
	     const struct gov_entry *const *gs, int ng, struct result *out);
const struct result *report_primary(const struct report *rp, const char *fam);
int compare(const struct result *a, const struct result *b);
void table_head(FILE *f);
void gov_head(FILE *f, const char *lead, const char *rule,
	      const struct gov_entry *const *gs, int from, int ng,
	      const char *cells);
const struct result *result_of(const struct result *rs, int ng,
			       const char *label);
void table_row(FILE *f, const struct result *r);

void seed_directions(FILE *f, const struct report *rp);
void platform_section(FILE *f, const struct report *rp);
void speed_section(FILE *f, const struct report *rp);
void write_tsv(FILE *f, const struct report *rp);
void write_plot_files(const struct report *rp, const char *dir);
FILE *report_file(const char *dir, const char *name);

#endif /* IDLE_REPLAY_REPORT_H */
