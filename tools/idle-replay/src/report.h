/* SPDX-License-Identifier: GPL-2.0 */
/* idle-replay: what the report modules share. */
#ifndef IDLE_REPLAY_REPORT_H
#define IDLE_REPLAY_REPORT_H

#include "replay.h"
#include "run.h"

void table_head(FILE *f);
void table_row(FILE *f, const struct corpus *c, const struct result *r);
int compare(const struct result *a, const struct result *b);
const char *compare_word(int cmp);

void corpus_section(FILE *f, const struct corpus *c);
void seed_directions(FILE *f, const struct corpus *c);
void seed001_section(FILE *f, const struct corpus *c, const struct fam_stats *fs);
void trap_section(FILE *f, const struct corpus *c);
void distribution_table(FILE *f, const struct corpus *c,
			const struct fam_stats *fs, int fi);
void speed_section(FILE *f, const struct corpus *c);
void write_tsv(FILE *f, const struct corpus *c);
void write_plot_files(const struct corpus *c, const struct fam_stats *fs,
		      const char *dir);
FILE *report_file(const char *dir, const char *name);

void throughput_sections(FILE *f, const struct corpus *c,
			 const struct fam_stats *fs, double work_pct);
void family_table(FILE *f, const struct corpus *c, const struct fam_stats *fs,
		  int fi);
int lockins_count(const struct corpus *c);
void lockins_tsv(FILE *f, const struct corpus *c);

#endif /* IDLE_REPLAY_REPORT_H */
