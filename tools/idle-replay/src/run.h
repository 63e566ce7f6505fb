/* SPDX-License-Identifier: GPL-2.0 */
/* idle-replay: the corpus pass (run.c) and what reads its results. */
#ifndef IDLE_REPLAY_RUN_H
#define IDLE_REPLAY_RUN_H

#include "replay.h"

struct corpus {
	const struct gov_entry *gov[MAX_GOVS];	/* the oracle first */
	int ng;
	struct scenario *sc;
	int ns;
	struct platform *ps;
	int np;
	const char *pair[2];	/* labels whose decisions are compared */
	struct result *res;	/* [scenario][platform][governor] */
};

void run_cell(const struct corpus *c, int si, int pi, struct result *out);
void corpus_run(struct corpus *c, int jobs);
struct result *corpus_result(const struct corpus *c, int s, int p, int g);
int corpus_home(const struct corpus *c, int s);
int corpus_gov(const struct corpus *c, const struct gov_entry *g);
void run_json(FILE *f, const struct corpus *c, const struct result *rs);
long first_divergence(const struct decision_log *a, const struct decision_log *b);
void describe_divergence(char *buf, size_t n, const char *what,
			 const char *la, const struct decision_log *a,
			 const char *lb, const struct decision_log *b, long at);

/* --- family statistics, targets and gates (gates.c) -------------------- */

/* Tolerances of the targets: energy %, miss points, worst table %, mean %. */
#define TARGET_ENERGY	1.0
#define TARGET_MISS	0.5
#define TARGET_WORST	5.0
#define TARGET_MEAN	110.0
/* "Loses on a table": more than this above the best other governor. */
#define LOSS_ENERGY	1.0
#define LOSS_MISS	0.5

/*
 * One governor's results in one family over the tables of the corpus
 * (families.c).  Per table: the mean over the family's scenarios, of the
 * runs that have the value (NAN where none has); the medians are over the
 * tables that have one.
 */
struct fam_stat {
	int n;			/* tables */
	int runs;		/* scenario x table runs */
	double *energy, *miss;	/* per table */
	double *work_base, *work_oracle, *work_ref;	/* closed loops, % */
	double *lat_mean, *lat_p99;		/* added latency, us */
	double med_energy, med_miss, worst_energy, worst_miss;
	double med_work_base, med_work_oracle, med_work_ref;
	double med_lat_mean, med_lat_p99;
	int losses;		/* tables where it loses to the best other one */
	int work_lost;		/* runs with less work than the best baseline */
	int energy_over;	/* runs with energy > TARGET_WORST % above it */
};

#define LOOP_OPEN	1U
#define LOOP_CLOSED	2U

struct fam_stats {
	int nf;
	const char *fam[16];
	bool closed[16];	/* any closed-loop scenario in the family */
	unsigned int loops[16];	/* LOOP_* of its scenarios */
	struct fam_stat st[16][MAX_GOVS];
};

unsigned int fam_stat_fill(const struct corpus *c, const char *fam,
			   double work_pct, struct fam_stat *st);
void fam_stat_free(struct fam_stat *st, int ng);
void fam_stats_build(const struct corpus *c, double work_pct,
		     struct fam_stats *fs);
void fam_stats_free(struct fam_stats *fs);
void families_tsv(const char *path, const struct corpus *c,
		  const struct fam_stats *fs, double work_pct);

/* The targets against one baseline (role and kind): fixed bounds. */
struct gate_rule {
	enum gov_role role;
	char kind[8];
	double energy_pct, miss_pts, worst_pct;
};

struct gate_conf {
	struct gate_rule r[8];
	int n;
	bool has_work;
	double work_pct;	/* closed loops: ours >= best baseline less this */
};

bool family_known(const char *name);

int gates_load(const char *path, struct gate_conf *gc);

/* The documented misses of the targets (misses.c). */
enum miss_metric { MM_ENERGY, MM_MISS, MM_TABLE_ENERGY, MM_WORK, NR_MISS_METRICS };

struct known_miss {
	char where[40];		/* family, or scenario for work */
	char table[40];		/* "median" for the family medians */
	char base[40];		/* baseline label, "best" for work */
	int metric;
	int line;
	bool seen;		/* the run evaluated it */
};

struct known_misses {
	const char *path;
	struct known_miss *k;
	int n;
};

/* Misses lines printed of each kind before "... and N more". */
#define MISS_LINES	20

struct miss_tally {
	int evaluated, missed[NR_MISS_METRICS], listed, unlisted, stale, skipped;
	bool all_tables;	/* every table of the corpus ran */
	FILE *draft;		/* every miss in the list's format, or NULL */
};

int known_misses_load(const char *path, struct known_misses *km);
void known_misses_free(struct known_misses *km);
const char *miss_metric_name(int m);
struct known_miss *known_find(const struct known_misses *km, const char *where,
			      const char *table, const char *base, int m);
bool work_lost(const struct corpus *c, int s, int p, int ours, double pct,
	       int *best);
void misses_tsv_head(FILE *f);
void work_section(FILE *f, const struct miss_tally *t);
int misses_gate(FILE *f, const struct corpus *c, const struct fam_stats *fs,
		const struct gate_conf *gc, struct known_misses *km,
		struct miss_tally *t);

/* Intended differences of ours against the base tree's teo. */
struct intended {
	char id[32];
	char text[160];
	char kunit[64];
};

int intended_load(const char *path, const char *kunit_src,
		  struct intended **out);

/* Decisions of one random table of the differential (diff.c). */
#define RANDOM_CASE	2000

u64 random_differential(const struct gov_entry *a, const struct gov_entry *b,
			u64 cases, u64 seed, FILE *log, u64 *decisions);

/* The best baseline of a family (gates.c: the one rule for it). */
struct best_base {
	int energy, miss;	/* lowest median energy, lowest median miss */
	int *table;		/* per table: lowest energy there */
};

bool best_baseline(const struct corpus *c, const struct fam_stat *st,
		   struct best_base *b);

/* Ours' targets in one family. */
struct family_targets {
	int ours;
	struct best_base best;
	double energy_bound, miss_bound;
	double worst;		/* ours' largest energy ratio to the best baseline */
	int worst_table;
	bool ok_energy, ok_miss, ok_worst;
};

bool family_targets(const struct corpus *c, const struct fam_stats *fs, int fi,
		    struct family_targets *t);
void family_targets_free(struct family_targets *t);

/* What the targets gate found: the targets, those missed, those listed. */
struct target_tally {
	int evaluated, missed, listed;
};

/* Each writes its section to @f and returns the number of failures. */
int oracle_gate(FILE *f, const struct corpus *c);
int targets_section(FILE *f, const struct corpus *c, const struct fam_stats *fs,
		    const struct known_misses *km, const char *tsv);
int targets_gate(FILE *f, const struct corpus *c, const struct fam_stats *fs,
		 const struct known_misses *km, struct target_tally *tt);
int regression_gate(FILE *f, const struct corpus *c, const struct fam_stats *fs,
		    const struct gate_conf *gc, struct known_misses *km,
		    struct miss_tally *t);
int intended_section(FILE *f, const struct corpus *c,
		     const struct intended *d, int nd, u64 random_divergent);
int mutants_gate(FILE *f, const struct corpus *c, const struct intended *d,
		 int nd, const char *dir, u64 cases, u64 seed);
void versus_section(FILE *f, const struct corpus *c, const struct fam_stats *fs,
		    int fi);

#endif /* IDLE_REPLAY_RUN_H */
