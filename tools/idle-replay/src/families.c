// SPDX-License-Identifier: GPL-2.0
/*
 * idle-replay: per-family statistics over the corpus, the one place that
 * computes them.  Per table a family's value is the mean over the
 * family's scenarios on that table; a family's number is the median of
 * those over the tables.  The targets, the report's tables and
 * families.tsv all read them from here.
 */

#include <math.h>
#include <stdlib.h>

#include "replay.h"
#include "run.h"

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of the finite values of @v; NAN if there is none. */
static double median_of(const double *v, int n)
{
	double *t = xcalloc(n, sizeof(*t)), m;
	int i, k = 0;

	for (i = 0; i < n; i++)
		if (isfinite(v[i]))
			t[k++] = v[i];
	qsort(t, k, sizeof(*t), by_value);
	m = !k ? NAN : k % 2 ? t[k / 2] : (t[k / 2 - 1] + t[k / 2]) / 2;
	free(t);
	return m;
}

static bool in_family(const struct scenario *s, const char *fam)
{
	return !fam || !strcmp(s->family, fam);
}

/* Sums of finite values, for the means over a family's scenarios. */
struct mean {
	double sum;
	int n;
};

static void add(struct mean *m, double v)
{
	if (isfinite(v)) {
		m->sum += v;
		m->n++;
	}
}

static double mean_of(const struct mean *m)
{
	return m->n ? m->sum / m->n : NAN;
}

enum { M_ENERGY, M_MISS, M_WORK_BASE, M_WORK_ORACLE, M_LAT_MEAN, M_LAT_P99, NR_M };

/* Per table the mean over family @fam's scenarios of each measure of @g. */
static void table_means(const struct corpus *c, const char *fam, int p, int g,
			double *out[NR_M], unsigned int *loops)
{
	struct mean m[NR_M] = { { 0 } };
	int s, k;

	for (s = 0; s < c->ns; s++) {
		const struct result *r = corpus_result(c, s, p, g);

		if (!in_family(&c->sc[s], fam))
			continue;
		add(&m[M_ENERGY], r->energy_rel);
		add(&m[M_MISS], r->miss);
		add(&m[M_WORK_BASE], r->work_base);
		add(&m[M_WORK_ORACLE], r->work_oracle);
		add(&m[M_LAT_MEAN], r->wakeups ? r->lat_mean : NAN);
		add(&m[M_LAT_P99], r->wakeups ? r->lat_p99 : NAN);
		*loops |= c->sc[s].closed ? LOOP_CLOSED : LOOP_OPEN;
	}
	for (k = 0; k < NR_M; k++)
		out[k][p] = mean_of(&m[k]);
}

/*
 * Runs of family @fam where governor @g did less work than the best
 * baseline less @work_pct (closed loops; -1 without a bound, NAN), and
 * runs where its energy is more than TARGET_WORST % above the lowest of
 * the baselines' there.
 */
static void run_losses(const struct corpus *c, const char *fam, int g,
		       double work_pct, struct fam_stat *st)
{
	int s, p, k, b;

	st->work_lost = isfinite(work_pct) ? 0 : -1;
	for (s = 0; s < c->ns; s++) {
		if (!in_family(&c->sc[s], fam))
			continue;
		for (p = 0; p < c->np; p++) {
			double best = INFINITY;

			st->runs++;
			if (isfinite(work_pct))
				st->work_lost += work_lost(c, s, p, g, work_pct, &b);
			for (k = 0; k < c->ng; k++)
				if (gov_is_baseline(c->gov[k]))
					best = min(best, corpus_result(c, s, p, k)->energy_rel);
			st->energy_over += isfinite(best) &&
				corpus_result(c, s, p, g)->energy_rel >
				best * (1 + TARGET_WORST / 100) + 1e-9;
		}
	}
}

/* Tables where @g is more than the tolerance above the best other one. */
static int losses(const struct corpus *c, const struct fam_stat *st, int g)
{
	int p, k, n = 0;

	for (p = 0; p < c->np; p++) {
		double be = INFINITY, bx = INFINITY;

		for (k = 1; k < c->ng; k++) {
			if (k == g || (!gov_in_reference(c->gov[k]) &&
				       gov_in_reference(c->gov[g])))
				continue;
			be = min(be, st[k].energy[p]);
			bx = min(bx, st[k].miss[p]);
		}
		n += st[g].energy[p] > be * (1 + LOSS_ENERGY / 100) ||
		     st[g].miss[p] > bx + LOSS_MISS;
	}
	return n;
}

/*
 * Every governor's statistics over family @fam (NULL: every scenario) into
 * @st[0..ng-1]; which loops its scenarios are (LOOP_*).
 */
unsigned int fam_stat_fill(const struct corpus *c, const char *fam,
			   double work_pct, struct fam_stat *st)
{
	unsigned int loops = 0;
	int g, p, k;

	for (g = 0; g < c->ng; g++) {
		double *v[NR_M];

		memset(&st[g], 0, sizeof(st[g]));
		st[g].n = c->np;
		st[g].energy = xcalloc((size_t)NR_M * c->np, sizeof(double));
		for (k = 0; k < NR_M; k++)
			v[k] = st[g].energy + (size_t)k * c->np;
		st[g].miss = v[M_MISS];
		st[g].work_base = v[M_WORK_BASE];
		st[g].work_oracle = v[M_WORK_ORACLE];
		st[g].lat_mean = v[M_LAT_MEAN];
		st[g].lat_p99 = v[M_LAT_P99];
		for (p = 0; p < c->np; p++)
			table_means(c, fam, p, g, v, &loops);
		st[g].med_energy = median_of(st[g].energy, c->np);
		st[g].med_miss = median_of(st[g].miss, c->np);
		st[g].worst_energy = vmax(st[g].energy, c->np);
		st[g].worst_miss = vmax(st[g].miss, c->np);
		st[g].med_work_base = median_of(st[g].work_base, c->np);
		st[g].med_work_oracle = median_of(st[g].work_oracle, c->np);
		st[g].med_lat_mean = median_of(st[g].lat_mean, c->np);
		st[g].med_lat_p99 = median_of(st[g].lat_p99, c->np);
		run_losses(c, fam, g, work_pct, &st[g]);
	}
	for (g = 1; g < c->ng; g++)
		st[g].losses = losses(c, st, g);
	return loops;
}

void fam_stat_free(struct fam_stat *st, int ng)
{
	int g;

	for (g = 0; g < ng; g++) {
		free(st[g].energy);
		st[g].energy = NULL;
	}
}

static bool family_present(const struct corpus *c, const char *fam)
{
	int s;

	for (s = 0; s < c->ns; s++)
		if (!strcmp(c->sc[s].family, fam))
			return true;
	return false;
}

void fam_stats_build(const struct corpus *c, double work_pct,
		     struct fam_stats *fs)
{
	int i;

	memset(fs, 0, sizeof(*fs));
	for (i = 0; i < replay_nfamilies; i++) {
		const char *fam = replay_families[i];

		if (!family_present(c, fam))
			continue;
		fs->fam[fs->nf] = fam;
		fs->loops[fs->nf] = fam_stat_fill(c, fam, work_pct, fs->st[fs->nf]);
		fs->closed[fs->nf] = fs->loops[fs->nf] & LOOP_CLOSED;
		fs->nf++;
	}
}

void fam_stats_free(struct fam_stats *fs)
{
	int f;

	for (f = 0; f < fs->nf; f++)
		fam_stat_free(fs->st[f], MAX_GOVS);
}

/* --- families.tsv ----------------------------------------------------------- */

static const char *loop_word(unsigned int loops)
{
	return loops == LOOP_OPEN ? "open" : loops == LOOP_CLOSED ? "closed" : "mixed";
}

static void families_rows(FILE *f, const struct corpus *c, const char *fam,
			  unsigned int loops, const struct fam_stat *st)
{
	struct best_base b = { .table = xcalloc(c->np, sizeof(int)) };
	bool any = best_baseline(c, st, &b);
	int g;

	for (g = 0; g < c->ng; g++) {
		const struct fam_stat *t = &st[g];
		const double v[] = {
			t->med_energy, t->med_miss, t->med_work_base,
			t->med_work_oracle, t->med_lat_mean, t->med_lat_p99,
		};
		size_t i;

		fprintf(f, "%s\t%s\t%s\t%s\t%d\t%d", fam, loop_word(loops),
			c->gov[g]->label, gov_role_name(c->gov[g]->role), t->runs,
			t->n);
		for (i = 0; i < ARRAY_SIZE(v); i++) {
			fputc('\t', f);
			tsv_num(f, v[i], 4);
		}
		fprintf(f, "\t%s\t%s\t", any ? c->gov[b.energy]->label : "-",
			any ? c->gov[b.miss]->label : "-");
		tsv_num(f, t->work_lost < 0 ? NAN : t->work_lost, 0);
		fprintf(f, "\t%d\n", t->energy_over);
	}
	free(b.table);
}

/*
 * families.tsv: per family (and "all", every scenario) and governor the
 * statistics above, and the family's best baselines under the targets'
 * rule.  The README ("Machine-readable output") describes the columns.
 */
void families_tsv(const char *path, const struct corpus *c,
		  const struct fam_stats *fs, double work_pct)
{
	struct output *o = output_open(path);
	FILE *f = output_file(o);
	struct fam_stat *all = xcalloc(c->ng, sizeof(*all));
	unsigned int loops;
	int fi;

	fprintf(f, "family\tloop\tgovernor\trole\truns\ttables\tenergy_pct\tmiss_pct\twork_pct_best_baseline\twork_pct_oracle\tlat_mean_us\tlat_p99_us\tbest_energy_baseline\tbest_miss_baseline\twork_lost_runs\tenergy_over_runs\n");
	for (fi = 0; fi < fs->nf; fi++)
		families_rows(f, c, fs->fam[fi], fs->loops[fi], fs->st[fi]);
	loops = fam_stat_fill(c, NULL, work_pct, all);
	families_rows(f, c, "all", loops, all);
	fam_stat_free(all, c->ng);
	free(all);
	output_close(o);
}
