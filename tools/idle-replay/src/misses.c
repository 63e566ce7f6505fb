// SPDX-License-Identifier: GPL-2.0
/*
 * idle-replay: the misses of the targets, one by one, against the list of
 * documented misses (tools/idle-replay/known-misses).  A miss that is not
 * listed fails the gate; so does a listed miss that no longer misses, so
 * the list can only shrink.  The targets gate (gates.c) looks up each
 * missed family target in the same list.  One entry names one miss:
 *
 *   WHERE TABLE BASELINE METRIC CAUSE...
 *
 *   energy        WHERE a family, TABLE "median": ours' median energy over
 *                 the tables above the baseline's by more than the bound
 *   miss          the same for the median miss ratio (points)
 *   table-energy  WHERE a family, TABLE a table: ours' energy on that table
 *                 (mean over the family's scenarios) above the baseline's
 *   work          WHERE a closed-loop scenario, TABLE a table, BASELINE
 *                 "best": ours' work done below the best baseline's
 */

#include <math.h>
#include <stdlib.h>

#include "replay.h"
#include "run.h"

static const char *const metric_name[NR_MISS_METRICS] = {
	[MM_ENERGY] = "energy", [MM_MISS] = "miss",
	[MM_TABLE_ENERGY] = "table-energy", [MM_WORK] = "work",
};

/* Fewer words than this is no cause. */
#define CAUSE_MIN_WORDS	6

static int kerr(const char *path, int line, const char *what)
{
	fprintf(stderr, "idle-replay: %s:%d: %s\n", path, line, what);
	return -1;
}

static bool plain_word(const char *w)
{
	return w[0] && strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == strlen(w);
}

static int words(const char *s)
{
	int n = 0;
	bool in = false;

	for (; *s; s++) {
		bool sp = *s == ' ' || *s == '\t';

		n += !sp && !in;
		in = !sp;
	}
	return n;
}

static int known_line(const char *path, int line, char *buf,
		      struct known_misses *km)
{
	char *tok[4], *cause;
	struct known_miss *k;
	int i, m;

	tok[0] = first_token(buf);
	if (!tok[0])
		return 0;
	for (i = 1; i < 4; i++)
		tok[i] = strtok(NULL, " \t");
	cause = strtok(NULL, "");
	if (!tok[3])
		return kerr(path, line, "want WHERE TABLE BASELINE METRIC CAUSE");
	for (i = 0; i < 4; i++)
		if (!plain_word(tok[i]) || strlen(tok[i]) >= sizeof(km->k->table))
			return kerr(path, line, "WHERE, TABLE, BASELINE and METRIC are plain words (letters, digits, . _ -): no wildcards");
	for (m = 0; m < NR_MISS_METRICS; m++)
		if (!strcmp(tok[3], metric_name[m]))
			break;
	if (m == NR_MISS_METRICS)
		return kerr(path, line, "METRIC must be energy, miss, table-energy or work");
	if ((m == MM_ENERGY || m == MM_MISS) != !strcmp(tok[1], "median"))
		return kerr(path, line, "energy and miss are family medians (TABLE 'median'); table-energy and work name one table");
	if ((m == MM_WORK) != !strcmp(tok[2], "best"))
		return kerr(path, line, "work is measured against the best baseline (BASELINE 'best'); the other metrics name one baseline");
	if (m != MM_WORK && !family_known(tok[0]))
		return kerr(path, line, "WHERE of energy, miss and table-energy is a scenario family (S1 ... S9, P, X)");
	if (m == MM_WORK && family_known(tok[0]))
		return kerr(path, line, "WHERE of work is one closed-loop scenario, not a family");
	if (!cause || words(cause) < CAUSE_MIN_WORDS || strstr(cause, "CAUSE?"))
		return kerr(path, line, "the measured cause is missing: say in words why it misses");
	for (i = 0; i < km->n; i++) {
		k = &km->k[i];
		if (k->metric == m && !strcmp(k->where, tok[0]) &&
		    !strcmp(k->table, tok[1]) && !strcmp(k->base, tok[2])) {
			char msg[96];

			snprintf(msg, sizeof(msg), "the same miss is listed on line %d", k->line);
			return kerr(path, line, msg);
		}
	}
	km->k = xrealloc(km->k, (km->n + 1) * sizeof(*km->k));
	k = &km->k[km->n++];
	memset(k, 0, sizeof(*k));
	snprintf(k->where, sizeof(k->where), "%s", tok[0]);
	snprintf(k->table, sizeof(k->table), "%s", tok[1]);
	snprintf(k->base, sizeof(k->base), "%s", tok[2]);
	k->metric = m;
	k->line = line;
	return 0;
}

static int known_line_cb(const char *path, int line, char *buf, void *km)
{
	return known_line(path, line, buf, km);
}

int known_misses_load(const char *path, struct known_misses *km)
{
	char buf[1024];

	memset(km, 0, sizeof(*km));
	km->path = path;
	return read_lines(path, buf, sizeof(buf), known_line_cb, km);
}

void known_misses_free(struct known_misses *km)
{
	free(km->k);
	km->k = NULL;
	km->n = 0;
}

const char *miss_metric_name(int m)
{
	return metric_name[m];
}

struct known_miss *known_find(const struct known_misses *km, const char *where,
			      const char *table, const char *base, int m)
{
	int i;

	for (i = 0; i < km->n; i++) {
		struct known_miss *k = &km->k[i];

		if (k->metric == m && !strcmp(k->where, where) &&
		    !strcmp(k->table, table) && !strcmp(k->base, base))
			return k;
	}
	return NULL;
}

/*
 * One evaluated target: @missed says whether it misses, @what the measured
 * value and its bound.  Returns the failures it adds (0 or 1).
 */
static int judge(FILE *f, struct miss_tally *t, struct known_misses *km,
		 const char *where, const char *table, const char *base, int m,
		 bool missed, const char *what)
{
	struct known_miss *k = km ? known_find(km, where, table, base, m) : NULL;

	if (k)
		k->seen = true;
	t->evaluated++;
	if (missed) {
		t->missed[m]++;
		if (t->draft)
			fprintf(t->draft, "%s\t%s\t%s\t%s\t%s\t%s\n", where, table,
				base, metric_name[m], k ? "listed" : "not-listed", what);
		if (k) {
			t->listed++;
			return 0;
		}
		if (t->unlisted++ < MISS_LINES)
			fprintf(f, "- NOT LISTED: `%s %s %s %s`: %s\n", where, table,
				base, metric_name[m], what);
		return 1;
	}
	if (!k)
		return 0;
	if (t->stale++ < MISS_LINES)
		fprintf(f, "- STALE: %s:%d: `%s %s %s %s` no longer misses: %s; delete the line\n",
			km->path, k->line, where, table, base, metric_name[m], what);
	return 1;
}

/* Energy and miss of ours against baseline @b in family @fi. */
static int family_misses(FILE *f, const struct corpus *c, const struct fam_stats *fs,
			 int fi, const struct gate_rule *r, int ours, int b,
			 struct known_misses *km, struct miss_tally *t)
{
	const struct fam_stat *st = fs->st[fi];
	const char *fam = fs->fam[fi], *bl = c->gov[b]->label;
	double e = st[ours].med_energy, be = st[b].med_energy, ratio;
	double x = st[ours].med_miss, bx = st[b].med_miss;
	char what[160];
	int p, bad = 0;

	snprintf(what, sizeof(what), "median energy %.1f vs %.1f (%+.1f %%, bound +%.1f %%)",
		 e, be, 100 * (e / be - 1), r->energy_pct);
	bad += judge(f, t, km, fam, "median", bl, MM_ENERGY,
		     e > be * (1 + r->energy_pct / 100) + 1e-9, what);
	snprintf(what, sizeof(what), "median miss %.2f vs %.2f (%+.2f point, bound +%.2f)",
		 x, bx, x - bx, r->miss_pts);
	bad += judge(f, t, km, fam, "median", bl, MM_MISS,
		     x > bx + r->miss_pts + 1e-9, what);
	for (p = 0; p < c->np; p++) {
		ratio = st[ours].energy[p] / st[b].energy[p];
		snprintf(what, sizeof(what), "energy %.1f vs %.1f on the table (%+.1f %%, bound +%.1f %%)",
			 st[ours].energy[p], st[b].energy[p], 100 * (ratio - 1),
			 r->worst_pct);
		bad += judge(f, t, km, fam, c->ps[p].name, bl, MM_TABLE_ENERGY,
			     ratio > 1 + r->worst_pct / 100 + 1e-9, what);
	}
	return bad;
}

/* The baseline that did the most work on scenario @s, table @p. */
static int best_worker(const struct corpus *c, int s, int p)
{
	int g, best = -1;

	for (g = 0; g < c->ng; g++) {
		if (!gov_is_baseline(c->gov[g]))
			continue;
		if (best < 0 || corpus_result(c, s, p, g)->items >
				corpus_result(c, s, p, best)->items)
			best = g;
	}
	return best;
}

bool work_lost(const struct corpus *c, int s, int p, int ours, double pct,
	       int *best)
{
	const struct result *r = corpus_result(c, s, p, ours);

	*best = best_worker(c, s, p);
	if (*best < 0 || !c->sc[s].closed)
		return false;
	return (double)r->items <
	       (double)corpus_result(c, s, p, *best)->items * (1 - pct / 100) - 1e-9;
}

static int work_misses(FILE *f, const struct corpus *c, int ours, double pct,
		       struct known_misses *km, struct miss_tally *t)
{
	int s, p, b, bad = 0;
	char what[192];

	for (s = 0; s < c->ns; s++) {
		if (!c->sc[s].closed)
			continue;
		for (p = 0; p < c->np; p++) {
			bool lost = work_lost(c, s, p, ours, pct, &b);
			const struct result *r = corpus_result(c, s, p, ours);

			if (b < 0)
				continue;
			snprintf(what, sizeof(what), "ours did %llu work items, %s (the best baseline) %llu: %.1f %% (bound %.1f %%)",
				 (unsigned long long)r->items, c->gov[b]->label,
				 (unsigned long long)corpus_result(c, s, p, b)->items,
				 corpus_result(c, s, p, b)->items ?
				 100.0 * r->items / corpus_result(c, s, p, b)->items : 100.0,
				 100 - pct);
			bad += judge(f, t, km, c->sc[s].name, c->ps[p].name, "best",
				     MM_WORK, lost, what);
		}
	}
	return bad;
}

static bool run_has_gov(const struct corpus *c, const char *label)
{
	int g;

	for (g = 0; g < c->ng; g++)
		if (!strcmp(c->gov[g]->label, label))
			return true;
	return false;
}

static bool run_has_where(const struct corpus *c, const char *where)
{
	int s;

	for (s = 0; s < c->ns; s++)
		if (!strcmp(c->sc[s].name, where) || !strcmp(c->sc[s].family, where))
			return true;
	return false;
}

static bool run_has_table(const struct corpus *c, const char *table)
{
	int p;

	for (p = 0; p < c->np; p++)
		if (!strcmp(c->ps[p].name, table))
			return true;
	return false;
}

/*
 * An entry the run never evaluated although its baseline and scenario ran:
 * it names a table that is not in the corpus, or a scenario that is open
 * (no work target) -- a typo or a table gone, which must not pass for a
 * documented miss.
 */
static int unevaluated(FILE *f, const struct corpus *c, struct known_misses *km,
		       struct miss_tally *t)
{
	int i, bad = 0;

	for (i = 0; km && i < km->n; i++) {
		const struct known_miss *k = &km->k[i];

		if (k->seen)
			continue;
		if ((strcmp(k->base, "best") && !run_has_gov(c, k->base)) ||
		    !run_has_where(c, k->where) ||
		    (strcmp(k->table, "median") && !run_has_table(c, k->table) &&
		     !t->all_tables)) {
			t->skipped++;
			continue;
		}
		bad++;
		fprintf(f, "- STALE: %s:%d: `%s %s %s %s` names nothing this run measures (no such table, or an open-loop scenario for work); delete or correct the line\n",
			km->path, k->line, k->where, k->table, k->base,
			metric_name[k->metric]);
		t->stale++;
	}
	return bad;
}

int misses_gate(FILE *f, const struct corpus *c, const struct fam_stats *fs,
		const struct gate_conf *gc, struct known_misses *km,
		struct miss_tally *t)
{
	int ours = corpus_gov(c, gov_by_role(ROLE_OURS, NULL));
	int i, fi, b, failed = 0;

	if (ours < 0)
		return 0;
	fprintf(f, "\nEach target, per family x baseline and per closed-loop scenario x table,\n"
		"against the documented misses (%s, %d entries):\n\n",
		km && km->path ? km->path : "none given", km ? km->n : 0);
	for (i = 0; i < gc->n; i++) {
		b = corpus_gov(c, gov_by_role(gc->r[i].role, gc->r[i].kind));
		if (b < 0)
			continue;
		for (fi = 0; fi < fs->nf; fi++)
			failed += family_misses(f, c, fs, fi, &gc->r[i], ours, b, km, t);
	}
	if (gc->has_work)
		failed += work_misses(f, c, ours, gc->work_pct, km, t);
	failed += unevaluated(f, c, km, t);
	if (t->unlisted > MISS_LINES)
		fprintf(f, "- ... and %d more not listed\n", t->unlisted - MISS_LINES);
	if (t->stale > MISS_LINES)
		fprintf(f, "- ... and %d more stale\n", t->stale - MISS_LINES);
	fprintf(f, "\n%s%d targets evaluated, %d missed (energy %d, miss %d, table-energy %d, work %d): %d documented, %d not listed; %d listed misses stale, %d entries not measured by this run.\n",
		failed ? "**FAILED**: " : "**PASSED**: ", t->evaluated,
		t->missed[MM_ENERGY] + t->missed[MM_MISS] +
		t->missed[MM_TABLE_ENERGY] + t->missed[MM_WORK],
		t->missed[MM_ENERGY], t->missed[MM_MISS], t->missed[MM_TABLE_ENERGY],
		t->missed[MM_WORK], t->listed, t->unlisted, t->stale, t->skipped);
	return failed;
}

/* The misses as TSV, one per line (report: misses.tsv; check --draft-misses). */
void misses_tsv_head(FILE *f)
{
	fprintf(f, "where\ttable\tbaseline\tmetric\tlisted\tmeasured\n");
}

/* The report's summary of the documented misses this run met. */
void work_section(FILE *f, const struct miss_tally *t)
{
	fprintf(f, "\nDocumented misses (tools/idle-replay/known-misses) met by this run: %d of %d misses (energy %d, miss %d, table-energy %d, work %d); %d not listed, %d listed misses stale.  The runs where ours loses work are listed under \"Where ours loses work\" above.\n",
		t->listed, t->missed[MM_ENERGY] + t->missed[MM_MISS] +
		t->missed[MM_TABLE_ENERGY] + t->missed[MM_WORK],
		t->missed[MM_ENERGY], t->missed[MM_MISS], t->missed[MM_TABLE_ENERGY],
		t->missed[MM_WORK], t->unlisted, t->stale);
}
