// SPDX-License-Identifier: GPL-2.0
/*
 * idle-replay: the targets our teo is judged by, the regression gate against
 * every baseline, the oracle gate and the list of intended differences from
 * the base tree's teo.
 */

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "replay.h"
#include "run.h"

/* The oracle gate's rounding allowance, relative. */
#define ORACLE_SLACK	1e-9

/* --- the oracle gate ----------------------------------------------------- */

/* In an open loop no governor may use less energy than the oracle. */
int oracle_gate(FILE *f, const struct corpus *c)
{
	int s, p, g, runs = 0, bad = 0, shown = 0;
	u64 misses = 0;

	fprintf(f, "\n## Oracle gate\n\n"
		"In an open loop (the arrivals do not depend on the decisions) the oracle\n"
		"takes, for every idle period, the state of least energy under the same\n"
		"constraints: no governor may come out below it.  Closed loops (chained\n"
		"or ring arrivals, where exit latencies move the timeline) are measured\n"
		"against the best of ours and the baselines instead.\n\n");
	for (s = 0; s < c->ns; s++) {
		if (c->sc[s].closed)
			continue;
		for (p = 0; p < c->np; p++) {
			const struct result *o = corpus_result(c, s, p, 0);

			misses += o->plan_misses;
			for (g = 1; g < c->ng; g++) {
				const struct result *r = corpus_result(c, s, p, g);

				runs++;
				if (r->energy_rate >= o->energy_rate * (1 - ORACLE_SLACK))
					continue;
				if (bad++ < 10)
					fprintf(f, "- BELOW THE ORACLE: %s on %s, %s at %.4f %%\n",
						c->sc[s].name, c->ps[p].name,
						c->gov[g]->label, r->energy_rel);
				shown++;
			}
		}
	}
	fprintf(f, "%s**%s**: %d open-loop runs (%d tables), %d below the oracle; the oracle left its plan at %llu decisions.\n",
		shown ? "\n" : "", bad || misses ? "FAILED" : "PASSED", runs, c->np,
		bad, (unsigned long long)misses);
	return bad + (misses ? 1 : 0);
}

/* --- targets ------------------------------------------------------------- */

static const char *met(bool ok)
{
	return ok ? "MET" : "MISSED";
}

/*
 * The best baseline of a family (@st: every governor's statistics there),
 * the one rule every reader of the targets shares (the targets,
 * families.tsv, the report): the baseline of the lowest median energy and,
 * separately, the one of the lowest median miss (the first in the run's
 * order on a tie); per table the one of the lowest energy there.  False
 * if the run has no baseline.
 */
bool best_baseline(const struct corpus *c, const struct fam_stat *st,
		   struct best_base *b)
{
	int g, p;

	b->energy = b->miss = -1;
	for (g = 0; g < c->ng; g++) {
		if (!gov_is_baseline(c->gov[g]))
			continue;
		if (b->energy < 0 || st[g].med_energy < st[b->energy].med_energy)
			b->energy = g;
		if (b->miss < 0 || st[g].med_miss < st[b->miss].med_miss)
			b->miss = g;
	}
	if (b->energy < 0)
		return false;
	for (p = 0; p < c->np; p++) {
		b->table[p] = -1;
		for (g = 0; g < c->ng; g++)
			if (gov_is_baseline(c->gov[g]) &&
			    (b->table[p] < 0 || st[g].energy[p] < st[b->table[p]].energy[p]))
				b->table[p] = g;
	}
	return true;
}

/* Ours' targets in family @fi; false if the run has no ours or no baseline. */
bool family_targets(const struct corpus *c, const struct fam_stats *fs, int fi,
		    struct family_targets *t)
{
	const struct fam_stat *st = fs->st[fi];
	struct best_base *b = &t->best;
	int p;

	memset(t, 0, sizeof(*t));
	b->table = xcalloc(c->np, sizeof(*b->table));
	t->ours = corpus_gov(c, gov_by_role(ROLE_OURS, NULL));
	if (t->ours < 0 || !best_baseline(c, st, b))
		return false;
	t->energy_bound = st[b->energy].med_energy * (1 + TARGET_ENERGY / 100);
	t->miss_bound = st[b->miss].med_miss + TARGET_MISS;
	t->ok_energy = st[t->ours].med_energy <= t->energy_bound + 1e-9;
	t->ok_miss = st[t->ours].med_miss <= t->miss_bound + 1e-9;
	for (p = 0; p < c->np; p++) {
		double r = st[t->ours].energy[p] / st[b->table[p]].energy[p];

		if (!p || r > t->worst) {
			t->worst = r;
			t->worst_table = p;
		}
	}
	t->ok_worst = t->worst <= 1 + TARGET_WORST / 100 + 1e-9;
	return true;
}

void family_targets_free(struct family_targets *t)
{
	free(t->best.table);
	t->best.table = NULL;
}

/* The three targets of each family, in the order the table shows them. */
enum family_target { FT_ENERGY, FT_MISS, FT_WORST, NR_FAMILY_TARGETS };

static const char *const family_target_name[NR_FAMILY_TARGETS] = {
	[FT_ENERGY] = "energy", [FT_MISS] = "miss", [FT_WORST] = "worst-table",
};

/* The metric of known-misses that names a miss of each family target. */
static const int family_target_metric[NR_FAMILY_TARGETS] = {
	[FT_ENERGY] = MM_ENERGY, [FT_MISS] = MM_MISS,
	[FT_WORST] = MM_TABLE_ENERGY,
};

static bool family_target_met(const struct family_targets *t, int k)
{
	return k == FT_ENERGY ? t->ok_energy : k == FT_MISS ? t->ok_miss :
	       t->ok_worst;
}

/* The baseline target @k is measured against: the best one for it. */
static int family_target_base(const struct family_targets *t, int k)
{
	return k == FT_ENERGY ? t->best.energy : k == FT_MISS ? t->best.miss :
	       t->best.table[t->worst_table];
}

static const char *family_target_table(const struct corpus *c,
				       const struct family_targets *t, int k)
{
	return k == FT_WORST ? c->ps[t->worst_table].name : "median";
}

/*
 * The line of @km that documents the miss of target @k of family @fam, or
 * NULL.  Each family target is a bound of the regression gate against one
 * baseline (gates.conf gives every baseline the bounds the targets use),
 * so missing it is that gate's miss against the target's best baseline,
 * and the line of that miss documents it.  The regression gate judges the
 * same line: were gates.conf ever looser than the targets, or without a
 * baseline, the line would fail there as stale, so a missed target never
 * passes on a line that gate does not confirm.
 */
static const struct known_miss *
family_target_line(const struct corpus *c, const char *fam,
		   const struct family_targets *t, int k,
		   const struct known_misses *km)
{
	if (!km)
		return NULL;
	return known_find(km, fam, family_target_table(c, t, k),
			  c->gov[family_target_base(t, k)]->label,
			  family_target_metric[k]);
}

/* The line's key (WHERE TABLE BASELINE METRIC) for target @k of @fam. */
static void family_target_key(char *buf, size_t n, const struct corpus *c,
			      const char *fam, const struct family_targets *t,
			      int k)
{
	snprintf(buf, n, "%s %s %s %s", fam, family_target_table(c, t, k),
		 c->gov[family_target_base(t, k)]->label,
		 miss_metric_name(family_target_metric[k]));
}

static const char *file_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * A target's cell: MET or MISSED and, given a list of documented misses,
 * whether a missed one is listed there (file:line).
 */
static const char *target_verdict(char *buf, size_t n, const struct corpus *c,
				  const char *fam, const struct family_targets *t,
				  int k, const struct known_misses *km)
{
	const struct known_miss *line;

	if (family_target_met(t, k) || !km)
		return met(family_target_met(t, k));
	line = family_target_line(c, fam, t, k, km);
	if (!line)
		return "MISSED, not listed";
	snprintf(buf, n, "MISSED, listed: %s:%d", file_name(km->path), line->line);
	return buf;
}

/* Targets are judged only in a run that has ours and a baseline. */
static bool targets_judged(const struct corpus *c)
{
	int g;

	if (corpus_gov(c, gov_by_role(ROLE_OURS, NULL)) < 0)
		return false;
	for (g = 0; g < c->ng; g++)
		if (gov_is_baseline(c->gov[g]))
			return true;
	return false;
}

/* The mean over the families of ours' median energy. */
static double mean_family_energy(const struct fam_stats *fs, int ours)
{
	double sum = 0;
	int fi;

	for (fi = 0; fi < fs->nf; fi++)
		sum += fs->st[fi][ours].med_energy;
	return fs->nf ? sum / fs->nf : 0;
}

static void target_row(FILE *f, const char *fam, bool closed, const char *target,
		       double ours, const char *base, double base_value,
		       double bound, bool ok, const char *table)
{
	fprintf(f, "%s\t%s\t%s\t", fam, closed ? "closed" : "open", target);
	tsv_num(f, ours, 6);
	fprintf(f, "\t%s\t", base);
	tsv_num(f, base_value, 6);
	fputc('\t', f);
	tsv_num(f, bound, 6);
	fprintf(f, "\t%s\t%s\n", ok ? "met" : "missed", table);
}

/*
 * The targets as TSV, one row per target: per family energy (median, %),
 * miss (median, %) and worst-table (ours' energy on its worst table
 * against the best baseline's there), then mean-energy over the families.
 */
static void targets_tsv(const char *path, const struct corpus *c,
			const struct fam_stats *fs)
{
	struct output *o = output_open(path);
	FILE *f = output_file(o);
	struct family_targets t;
	double sum = 0;
	int fi;

	fprintf(f, "family\tloop\ttarget\tours\tbaseline\tbaseline_value\tbound\tverdict\ttable\n");
	for (fi = 0; fi < fs->nf; fi++) {
		const struct fam_stat *st = fs->st[fi];
		const char *fam = fs->fam[fi];
		bool closed = fs->closed[fi];
		int w;

		if (!family_targets(c, fs, fi, &t)) {
			family_targets_free(&t);
			break;
		}
		w = t.best.table[t.worst_table];
		target_row(f, fam, closed, "energy", st[t.ours].med_energy,
			   c->gov[t.best.energy]->label, st[t.best.energy].med_energy,
			   t.energy_bound, t.ok_energy, "-");
		target_row(f, fam, closed, "miss", st[t.ours].med_miss,
			   c->gov[t.best.miss]->label, st[t.best.miss].med_miss,
			   t.miss_bound, t.ok_miss, "-");
		target_row(f, fam, closed, "worst-table",
			   st[t.ours].energy[t.worst_table], c->gov[w]->label,
			   st[w].energy[t.worst_table],
			   st[w].energy[t.worst_table] * (1 + TARGET_WORST / 100),
			   t.ok_worst, c->ps[t.worst_table].name);
		sum += st[t.ours].med_energy;
		family_targets_free(&t);
	}
	if (fi == fs->nf && fs->nf) {
		sum /= fs->nf;
		fprintf(f, "all\t-\tmean-energy\t");
		tsv_num(f, sum, 6);
		fprintf(f, "\t-\t-\t%.6f\t%s\t-\n", TARGET_MEAN,
			sum <= TARGET_MEAN ? "met" : "missed");
	}
	output_close(o);
}

/* One family's row of the targets table; returns its missed targets. */
static int targets_row(FILE *f, const struct corpus *c, const struct fam_stats *fs,
		       int fi, const struct known_misses *km, int *listed)
{
	const struct fam_stat *st = fs->st[fi];
	const char *fam = fs->fam[fi];
	struct family_targets t;
	char cell[NR_FAMILY_TARGETS][96];
	const char *v[NR_FAMILY_TARGETS];
	int g, k, missed = 0;

	family_targets(c, fs, fi, &t);
	for (k = 0; k < NR_FAMILY_TARGETS; k++) {
		v[k] = target_verdict(cell[k], sizeof(cell[k]), c, fam, &t, k, km);
		missed += !family_target_met(&t, k);
		*listed += !family_target_met(&t, k) &&
			   family_target_line(c, fam, &t, k, km);
	}
	fprintf(f, "| %s%s |", fam, fs->closed[fi] ? "*" : "");
	for (g = 0; g < c->ng; g++)
		if (g == 0 || g == t.ours || gov_is_baseline(c->gov[g]))
			fprintf(f, " %.1f / %.2f |", st[g].med_energy, st[g].med_miss);
	fprintf(f, " %.1f <= %.1f %s | %.2f <= %.2f %s | %+.1f %% (%s) %s |\n",
		st[t.ours].med_energy, t.energy_bound, v[FT_ENERGY],
		st[t.ours].med_miss, t.miss_bound, v[FT_MISS],
		100 * (t.worst - 1), c->ps[t.worst_table].name, v[FT_WORST]);
	family_targets_free(&t);
	return missed;
}

/*
 * The targets table; given a list of documented misses (@km), each missed
 * family target says whether it is listed.  Returns the targets missed.
 */
int targets_section(FILE *f, const struct corpus *c, const struct fam_stats *fs,
		    const struct known_misses *km, const char *tsv)
{
	int ours = corpus_gov(c, gov_by_role(ROLE_OURS, NULL));
	int fi, g, missed = 0, listed = 0;
	double mean;

	fprintf(f, "\n## Targets\n\n");
	if (tsv)
		targets_tsv(tsv, c, fs);
	if (!targets_judged(c)) {
		fprintf(f, "Not evaluated: the run has no `teo` or no baseline.\n");
		return 0;
	}
	fprintf(f, "What our teo is judged by, per scenario family over all %d tables of the\n"
		"corpus: energy (%% of the yardstick: the oracle in an open loop, the best\n"
		"governor in a closed one, marked *) and miss (%%) on the median table,\n"
		"for ours, the baselines and the oracle.  Targets: median energy at most\n"
		"the best baseline's + %.0f %%, median miss at most the best baseline's +\n"
		"%.1f point, no table more than %.0f %% above the best baseline's energy,\n"
		"and the mean over families of ours' median energy at most %.0f %%.\n\n",
		c->np, TARGET_ENERGY, TARGET_MISS, TARGET_WORST, TARGET_MEAN);
	fprintf(f, "| family |");
	for (g = 0; g < c->ng; g++)
		if (g == 0 || g == ours || gov_is_baseline(c->gov[g]))
			fprintf(f, " %s |", c->gov[g]->label);
	fprintf(f, " energy target | miss target | worst table |\n|---|");
	for (g = 0; g < c->ng; g++)
		if (g == 0 || g == ours || gov_is_baseline(c->gov[g]))
			fprintf(f, "---:|");
	fprintf(f, "---|---|---|\n");
	for (fi = 0; fi < fs->nf; fi++)
		missed += targets_row(f, c, fs, fi, km, &listed);
	mean = mean_family_energy(fs, ours);
	missed += mean > TARGET_MEAN;
	fprintf(f, "\nMean over the %d families of ours' median energy: %.1f %% of the yardstick (target <= %.0f %%): **%s**.\n",
		fs->nf, mean, TARGET_MEAN, met(mean <= TARGET_MEAN));
	fprintf(f, "\nTargets missed: %d of %d", missed, NR_FAMILY_TARGETS * fs->nf + 1);
	if (km)
		fprintf(f, ", %d of them listed in %s", listed, km->path);
	fprintf(f, ".\n");
	return missed;
}

/* What target @k of family @fi measured, for the gate's line. */
static void family_target_text(char *buf, size_t n, const struct corpus *c,
			       const struct fam_stat *st,
			       const struct family_targets *t, int k)
{
	if (k == FT_ENERGY)
		snprintf(buf, n, "median energy %.1f, bound %.1f",
			 st[t->ours].med_energy, t->energy_bound);
	else if (k == FT_MISS)
		snprintf(buf, n, "median miss %.2f, bound %.2f",
			 st[t->ours].med_miss, t->miss_bound);
	else
		snprintf(buf, n, "energy on %s %+.1f %% against the best baseline's there, bound +%.0f %%",
			 c->ps[t->worst_table].name, 100 * (t->worst - 1),
			 TARGET_WORST);
}

/* The targets of family @fi in the gate; returns its failures. */
static int family_targets_gate(FILE *f, const struct corpus *c,
			       const struct fam_stats *fs, int fi,
			       const struct known_misses *km,
			       struct target_tally *tt)
{
	const char *fam = fs->fam[fi];
	struct family_targets t;
	char key[160], what[160];
	int k, bad = 0;

	family_targets(c, fs, fi, &t);
	for (k = 0; k < NR_FAMILY_TARGETS; k++) {
		tt->evaluated++;
		if (family_target_met(&t, k))
			continue;
		tt->missed++;
		if (family_target_line(c, fam, &t, k, km)) {
			tt->listed++;
			continue;
		}
		family_target_key(key, sizeof(key), c, fam, &t, k);
		family_target_text(what, sizeof(what), c, fs->st[fi], &t, k);
		fprintf(f, "- TARGET NOT LISTED: %s %s against %s needs the line `%s CAUSE` in %s: %s\n",
			fam, family_target_name[k],
			c->gov[family_target_base(&t, k)]->label, key,
			km ? km->path : "a documented-misses file (--known-misses, none given)",
			what);
		bad++;
	}
	family_targets_free(&t);
	return bad;
}

/*
 * The targets as a gate (check --targets).  A missed family target passes
 * if the documented misses list it (family_target_line()); the mean over
 * the families has no line in that list and fails whenever it is missed.
 */
int targets_gate(FILE *f, const struct corpus *c, const struct fam_stats *fs,
		 const struct known_misses *km, struct target_tally *tt)
{
	int ours = corpus_gov(c, gov_by_role(ROLE_OURS, NULL));
	int fi, bad = 0;
	double mean;

	memset(tt, 0, sizeof(*tt));
	if (!targets_judged(c)) {
		fprintf(f, "\n**PASSED**: targets gate: not evaluated (the run has no `teo` or no baseline).\n");
		return 0;
	}
	fprintf(f, "\n");
	for (fi = 0; fi < fs->nf; fi++)
		bad += family_targets_gate(f, c, fs, fi, km, tt);
	mean = mean_family_energy(fs, ours);
	tt->evaluated++;
	if (mean > TARGET_MEAN) {
		tt->missed++;
		bad++;
		fprintf(f, "- TARGET MISSED: the mean over the %d families of ours' median energy, %.1f %% (bound %.0f %%): no documented miss can stand for it\n",
			fs->nf, mean, TARGET_MEAN);
	}
	fprintf(f, "%s**%s**: targets gate: %d of %d targets missed, ",
		bad ? "\n" : "", bad ? "FAILED" : "PASSED", tt->missed,
		tt->evaluated);
	if (km)
		fprintf(f, "%d of them listed in %s.\n", tt->listed, km->path);
	else
		fprintf(f, "none listed: no documented-misses file given.\n");
	return bad;
}

/* --- ours against each baseline ------------------------------------------ */

static const char *verdict(double de, double dx)
{
	bool worse = de > TARGET_ENERGY || dx > TARGET_MISS;
	bool better = de < -TARGET_ENERGY || dx < -TARGET_MISS;

	return worse && better ? "mixed" : worse ? "worse" : better ? "better" :
	       "comparable";
}

void versus_section(FILE *f, const struct corpus *c, const struct fam_stats *fs,
		    int fi)
{
	int ours = corpus_gov(c, gov_by_role(ROLE_OURS, NULL)), g, p;
	const struct fam_stat *st = fs->st[fi];

	if (ours < 0)
		return;
	fprintf(f, "\nOurs against each baseline over the %d tables (median energy change in %%,\n"
		"median miss change in points; tables where ours is better / worse by more\n"
		"than 1 %% energy or 0.5 point miss):\n\n", c->np);
	for (g = 0; g < c->ng; g++) {
		int better = 0, worse = 0;
		double de, dx;

		if (!gov_is_baseline(c->gov[g]) && c->gov[g]->role != ROLE_EXTRA)
			continue;
		for (p = 0; p < c->np; p++) {
			double e = 100 * (st[ours].energy[p] / st[g].energy[p] - 1);
			double x = st[ours].miss[p] - st[g].miss[p];

			better += e < -LOSS_ENERGY || x < -LOSS_MISS;
			worse += e > LOSS_ENERGY || x > LOSS_MISS;
		}
		de = 100 * (st[ours].med_energy / st[g].med_energy - 1);
		dx = st[ours].med_miss - st[g].med_miss;
		fprintf(f, "- vs %s: energy %+.1f %%, miss %+.2f, better on %d, worse on %d tables: **%s**\n",
			c->gov[g]->label, de, dx, better, worse, verdict(de, dx));
	}
}

/* --- the regression gate ------------------------------------------------- */

static int gerr(const char *path, int line, const char *what)
{
	fprintf(stderr, "idle-replay: %s:%d: %s\n", path, line, what);
	return -1;
}

bool family_known(const char *name)
{
	int i;

	for (i = 0; i < replay_nfamilies; i++)
		if (!strcmp(name, replay_families[i]))
			return true;
	return false;
}

/* A bound: a decimal number >= 0. */
static int bound(const char *tok, double *v)
{
	char *end;

	if (!tok)
		return -1;
	*v = strtod(tok, &end);
	return *end || end == tok || !isfinite(*v) || *v < 0 ? -1 : 0;
}

/* "work best PCT": closed loops, ours' work against the best baseline's. */
static int work_line(const char *path, int line, struct gate_conf *gc)
{
	char *who = strtok(NULL, " \t"), *pct = strtok(NULL, " \t");

	if (!who || strcmp(who, "best") || bound(pct, &gc->work_pct) ||
	    strtok(NULL, " \t"))
		return gerr(path, line, "want: work best PERCENT (ours' work done at least the best baseline's less PERCENT)");
	if (gc->has_work)
		return gerr(path, line, "the work target is given twice");
	gc->has_work = true;
	return 0;
}

static int gate_line(const char *path, int line, char *buf, struct gate_conf *gc)
{
	char *comment = strchr(buf, '#'), *role, *kind, *tok[4];
	struct gate_rule *r = &gc->r[gc->n];
	int i;

	/* A comment runs to the end of the line. */
	if (comment)
		*comment = 0;
	role = first_token(buf);
	if (!role)
		return 0;
	if (!strcmp(role, "work"))
		return work_line(path, line, gc);
	if (gc->n == (int)ARRAY_SIZE(gc->r))
		return gerr(path, line, "too many rules");
	if (!strcmp(role, "base"))
		r->role = ROLE_BASE;
	else if (!strcmp(role, "mainline"))
		r->role = ROLE_MAINLINE;
	else
		return gerr(path, line, "the first word must be base, mainline or work");
	kind = strtok(NULL, " \t");
	if (!kind || (strcmp(kind, "teo") && strcmp(kind, "menu")))
		return gerr(path, line, "the second word must be teo or menu");
	snprintf(r->kind, sizeof(r->kind), "%s", kind);
	for (i = 0; i < 4; i++)
		tok[i] = strtok(NULL, " \t");
	/*
	 * No rule per family: a bound set to where a family stands today is a
	 * ratchet.  A family that misses a target is a documented miss.
	 */
	if (tok[0] && isalpha((unsigned char)tok[0][0]))
		return gerr(path, line, "no bounds per family: the targets hold for every family, and a family that misses one is listed in known-misses with its cause");
	if (bound(tok[0], &r->energy_pct) || bound(tok[1], &r->miss_pts) ||
	    bound(tok[2], &r->worst_pct) || tok[3])
		return gerr(path, line, "want ROLE KIND ENERGY_% MISS_POINTS WORST_TABLE_% (numbers >= 0)");
	for (i = 0; i < gc->n; i++)
		if (gc->r[i].role == r->role && !strcmp(gc->r[i].kind, r->kind))
			return gerr(path, line, "this baseline's targets are given twice");
	gc->n++;
	return 0;
}

static int gate_line_cb(const char *path, int line, char *buf, void *gc)
{
	return gate_line(path, line, buf, gc);
}

int gates_load(const char *path, struct gate_conf *gc)
{
	char buf[256];

	memset(gc, 0, sizeof(*gc));
	return read_lines(path, buf, sizeof(buf), gate_line_cb, gc);
}

/* One row of the family x baseline table. */
static void gate_row(FILE *f, const struct corpus *c, const struct fam_stats *fs,
		     int fi, int ours, int b)
{
	const struct fam_stat *st = fs->st[fi];
	double w = 0;
	int p, where = 0;

	for (p = 0; p < c->np; p++) {
		if (st[ours].energy[p] / st[b].energy[p] > w) {
			w = st[ours].energy[p] / st[b].energy[p];
			where = p;
		}
	}
	fprintf(f, "| %s | %s | %.1f vs %.1f | %.2f vs %.2f | %+.1f %% (%s) |\n",
		fs->fam[fi], c->gov[b]->label, st[ours].med_energy, st[b].med_energy,
		st[ours].med_miss, st[b].med_miss, 100 * (w - 1), c->ps[where].name);
}

int regression_gate(FILE *f, const struct corpus *c, const struct fam_stats *fs,
		    const struct gate_conf *gc, struct known_misses *km,
		    struct miss_tally *t)
{
	int ours = corpus_gov(c, gov_by_role(ROLE_OURS, NULL));
	int i, fi, b;

	fprintf(f, "\n## Regression gate\n\n"
		"The targets (tools/idle-replay/gates.conf), fixed bounds for every family:\n\n");
	for (i = 0; i < gc->n; i++)
		fprintf(f, "- against %s %s: median energy +%.1f %%, median miss +%.2f point, every table's energy +%.1f %%\n",
			gc->r[i].role == ROLE_BASE ? "base" : "mainline", gc->r[i].kind,
			gc->r[i].energy_pct, gc->r[i].miss_pts, gc->r[i].worst_pct);
	if (gc->has_work)
		fprintf(f, "- closed loops, every scenario x table: ours' work done at least the best baseline's less %.1f %%\n",
			gc->work_pct);
	if (ours < 0) {
		fprintf(f, "\nNot evaluated: the run has no `teo`.\n");
		return 0;
	}
	fprintf(f, "\n| family | baseline | median energy | median miss | worst table |\n"
		"|---|---|---:|---:|---:|\n");
	for (i = 0; i < gc->n; i++) {
		b = corpus_gov(c, gov_by_role(gc->r[i].role, gc->r[i].kind));
		for (fi = 0; b >= 0 && fi < fs->nf; fi++)
			gate_row(f, c, fs, fi, ours, b);
	}
	return misses_gate(f, c, fs, gc, km, t);
}

/* --- intended differences ------------------------------------------------ */

/* Does the KUnit source define the case @name? */
static bool kunit_has(const char *src, const char *name)
{
	char pat[2][96];

	snprintf(pat[0], sizeof(pat[0]), "KUNIT_CASE(%s)", name);
	snprintf(pat[1], sizeof(pat[1]), "KUNIT_CASE_PARAM(%s,", name);
	return strstr(src, pat[0]) || strstr(src, pat[1]);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t n = 0, got;
	char chunk[4096];

	if (!f)
		return NULL;
	while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		buf = xrealloc(buf, n + got + 1);
		memcpy(buf + n, chunk, got);
		n += got;
	}
	fclose(f);
	if (!buf)
		buf = xcalloc(1, 1);
	buf[n] = 0;
	return buf;
}

static int intended_line(const char *path, int line, char *buf,
			 const char *kunit, struct intended *d, int n)
{
	char *id = first_token(buf), *kcase, *text;
	int i;

	if (!id)
		return 0;
	kcase = strtok(NULL, " \t");
	text = strtok(NULL, "");
	if (!kcase || !text)
		return gerr(path, line, "want ID KUNIT_CASE DESCRIPTION");
	if (strspn(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") != strlen(id) ||
	    strlen(id) >= sizeof(d->id))
		return gerr(path, line, "the ID must be one word of letters, digits, - and _ (under 32)");
	for (i = 0; i < n; i++)
		if (!strcmp(d[i].id, id))
			return gerr(path, line, "the ID is used twice");
	if (strlen(kcase) >= sizeof(d->kunit) || !kunit_has(kunit, kcase)) {
		char msg[160];

		snprintf(msg, sizeof(msg), "KUnit case '%.60s' is not in the KUnit suites", kcase);
		return gerr(path, line, msg);
	}
	snprintf(d[n].id, sizeof(d[n].id), "%s", id);
	snprintf(d[n].kunit, sizeof(d[n].kunit), "%s", kcase);
	snprintf(d[n].text, sizeof(d[n].text), "%s", text + strspn(text, " \t"));
	return 1;
}

int intended_load(const char *path, const char *kunit_src,
		  struct intended **out)
{
	FILE *f = fopen(path, "r");
	char *kunit = slurp(kunit_src), buf[512];
	struct intended *d = NULL;
	int line = 0, n = 0, rc = 0;

	if (!f || !kunit) {
		fprintf(stderr, "idle-replay: %s: %s\n", f ? kunit_src : path,
			strerror(errno));
		if (f)
			fclose(f);
		free(kunit);
		return -1;
	}
	while (rc >= 0) {
		rc = read_line(f, buf, sizeof(buf), path, ++line);
		if (rc)
			break;
		d = xrealloc(d, (n + 1) * sizeof(*d));
		rc = intended_line(path, line, buf, kunit, d, n);
		n += rc > 0;
	}
	fclose(f);
	free(kunit);
	if (rc < 0) {
		free(d);
		return -1;
	}
	*out = d;
	return n;
}

int intended_section(FILE *f, const struct corpus *c,
		     const struct intended *d, int nd, u64 random_divergent)
{
	int ours = corpus_gov(c, gov_by_role(ROLE_OURS, NULL));
	int base = corpus_gov(c, gov_by_role(ROLE_BASE, "teo"));
	int s, p, runs = 0, div = 0, i;

	fprintf(f, "\n## Intended differences from %s\n\n",
		base >= 0 ? c->gov[base]->label : "the base teo");
	if (ours < 0 || base < 0) {
		fprintf(f, "Not evaluated: the run lacks ours or the base tree's teo.\n");
		return 0;
	}
	for (s = 0; s < c->ns; s++) {
		for (p = 0; p < c->np; p++) {
			const struct result *r = corpus_result(c, s, p, ours);

			runs += r->diverged >= 0;
			div += r->diverged > 0;
		}
	}
	fprintf(f, "Measured: ours takes another state or tick decision than %s somewhere in\n"
		"%d of %d scenario x table runs and in %llu random cases.  Listed in\n"
		"tools/idle-replay/intended-differences (each covered by a KUnit case):\n\n",
		c->gov[base]->label, div, runs, (unsigned long long)random_divergent);
	for (i = 0; i < nd; i++)
		fprintf(f, "- %s: %s (KUnit: %s)\n", d[i].id, d[i].text, d[i].kunit);
	if (!nd)
		fprintf(f, "- none: ours must decide exactly like %s\n", c->gov[base]->label);
	if ((div || random_divergent) && !nd) {
		fprintf(f, "\n**FAILED**: ours differs from %s but no difference is listed.\n",
			c->gov[base]->label);
		return 1;
	}
	if (!div && !random_divergent && nd)
		fprintf(f, "\nNote: differences are listed but none was measured.\n");
	return 0;
}

/* --- the mutant of each intended difference --------------------------------- */

bool first_divergent_run(const struct gov_entry *a, const struct gov_entry *b,
			 const struct scenario *sc, int ns,
			 const struct platform *ps, int np, u64 cases, u64 seed,
			 char *where, size_t n, u64 *runs);

/* The value of header line "@key: ..." of the mutant patch @text, or NULL. */
static char *patch_header(const char *text, const char *key, char *buf, size_t n)
{
	size_t k = strlen(key);
	const char *l;

	for (l = text; l && *l && *l != '\n'; l = strchr(l, '\n'), l = l ? l + 1 : l) {
		if (!strncmp(l, key, k) && l[k] == ':') {
			l += k + 1;
			l += strspn(l, " \t");
			snprintf(buf, n, "%.*s", (int)strcspn(l, "\n"), l);
			return buf;
		}
	}
	return NULL;
}

static bool listed_in(const char *list, const char *word)
{
	char buf[256], *tok, *save;

	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save))
		if (!strcmp(tok, word))
			return true;
	return false;
}

/* One line: why difference @d has no mutant that can stand for it, or NULL. */
static const char *mutant_problem(const struct intended *d, const char *dir,
				  char *msg, size_t n)
{
	char path[512], kind[64], kunit[256], *text;

	snprintf(path, sizeof(path), "%s/%s.patch", dir, d->id);
	text = slurp(path);
	if (!text) {
		snprintf(msg, n, "no mutant %s: each listed difference is the rule one mutant reverts", path);
		return msg;
	}
	if (!patch_header(text, "Kind", kind, sizeof(kind)) || strcmp(kind, "rule"))
		snprintf(msg, n, "%s is not a rule mutant (Kind: rule): a property is no difference from the base teo", path);
	else if (!patch_header(text, "KUnit", kunit, sizeof(kunit)) ||
		 !listed_in(kunit, d->kunit))
		snprintf(msg, n, "%s names KUnit case(s) '%s', not %s", path,
			 patch_header(text, "KUnit", kunit, sizeof(kunit)) ? kunit : "",
			 d->kunit);
	else
		msg = NULL;
	free(text);
	return msg;
}

int mutants_gate(FILE *f, const struct corpus *c, const struct intended *d,
		 int nd, const char *dir, u64 cases, u64 seed)
{
	const struct gov_entry *ours = gov_by_role(ROLE_OURS, NULL), *m;
	char label[64], where[160], msg[2048];
	int i, bad = 0;
	u64 runs;

	fprintf(f, "\n## Each intended difference changes decisions\n\n"
		"Every listed difference is the rule one mutant of %s reverts; that\n"
		"mutant (ours with the rule reverted) must decide otherwise than ours\n"
		"somewhere: each scenario on each table in turn, then %llu random cases,\n"
		"up to the first divergence.\n\n", dir, (unsigned long long)cases);
	for (i = 0; ours && i < nd; i++) {
		snprintf(label, sizeof(label), "mutant-%s", d[i].id);
		m = gov_find(label);
		if (mutant_problem(&d[i], dir, msg, sizeof(msg))) {
			fprintf(f, "- NO MUTANT: %s: %s\n", d[i].id, msg);
			bad++;
		} else if (!m || m->role != ROLE_MUTANT) {
			fprintf(f, "- NO MUTANT: %s: governor %s is not built (scripts/replay.sh builds one per listed difference)\n",
				d[i].id, label);
			bad++;
		} else if (!first_divergent_run(ours, m, c->sc, c->ns, c->ps, c->np,
						cases, seed, where,
						sizeof(where), &runs)) {
			fprintf(f, "- NO DIVERGENCE: %s: %s decides like %s in %llu runs and random cases: reverting the rule changes no decision the lab can see\n",
				d[i].id, label, ours->label, (unsigned long long)runs);
			bad++;
		} else {
			fprintf(f, "- %s: %s diverges from %s in %s (run %llu)\n",
				d[i].id, label, ours->label, where,
				(unsigned long long)runs);
		}
	}
	fprintf(f, "\n**%s**: %d of %d listed differences without a diverging mutant.\n",
		bad ? "FAILED" : "PASSED", bad, nd);
	return bad;
}
