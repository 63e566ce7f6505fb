// SPDX-License-Identifier: GPL-2.0
/*
 * idle-replay: per-family statistics over the corpus, the targets our teo is
 * judged by, the regression gate against every baseline, the oracle gate and
 * the list of intended differences from the base tree's teo.
 */

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "replay.h"
#include "run.h"

/* Tolerances of the targets (issue 10): energy %, miss points, worst %. */
#define TARGET_ENERGY	1.0
#define TARGET_MISS	0.5
#define TARGET_WORST	5.0
#define TARGET_MEAN	110.0
/* "Loses on a table": more than this above the best other governor. */
#define LOSS_ENERGY	1.0
#define LOSS_MISS	0.5
/* The oracle gate's rounding allowance, relative. */
#define ORACLE_SLACK	1e-9

/* --- family statistics --------------------------------------------------- */

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median_of(const double *v, int n)
{
	double *t = xcalloc(n, sizeof(*t)), m;

	memcpy(t, v, n * sizeof(*t));
	qsort(t, n, sizeof(*t), by_value);
	m = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
	free(t);
	return m;
}

/* Mean energy and miss of governor @g over family @fam's scenarios on @p. */
static void family_mean(const struct corpus *c, const char *fam, int p, int g,
			double *e, double *x, bool *closed)
{
	int s, n = 0;

	*e = *x = 0;
	for (s = 0; s < c->ns; s++) {
		const struct result *r = corpus_result(c, s, p, g);

		if (strcmp(c->sc[s].family, fam))
			continue;
		*e += r->energy_rel;
		*x += r->miss;
		*closed |= c->sc[s].closed;
		n++;
	}
	*e /= n;
	*x /= n;
}

static bool family_present(const struct corpus *c, const char *fam)
{
	int s;

	for (s = 0; s < c->ns; s++)
		if (!strcmp(c->sc[s].family, fam))
			return true;
	return false;
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

void fam_stats_build(const struct corpus *c, struct fam_stats *fs)
{
	int i, g, p;

	memset(fs, 0, sizeof(*fs));
	for (i = 0; i < replay_nfamilies; i++) {
		const char *fam = replay_families[i];
		struct fam_stat *st = fs->st[fs->nf];

		if (!family_present(c, fam))
			continue;
		fs->fam[fs->nf] = fam;
		for (g = 0; g < c->ng; g++) {
			st[g].n = c->np;
			st[g].energy = xcalloc(2 * c->np, sizeof(double));
			st[g].miss = st[g].energy + c->np;
			for (p = 0; p < c->np; p++)
				family_mean(c, fam, p, g, &st[g].energy[p],
					    &st[g].miss[p], &fs->closed[fs->nf]);
			st[g].med_energy = median_of(st[g].energy, c->np);
			st[g].med_miss = median_of(st[g].miss, c->np);
			st[g].worst_energy = vmax(st[g].energy, c->np);
			st[g].worst_miss = vmax(st[g].miss, c->np);
		}
		for (g = 1; g < c->ng; g++)
			st[g].losses = losses(c, st, g);
		fs->nf++;
	}
}

void fam_stats_free(struct fam_stats *fs)
{
	int f, g;

	for (f = 0; f < fs->nf; f++)
		for (g = 0; g < MAX_GOVS; g++)
			free(fs->st[f][g].energy);
}

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

/* The best baseline's median energy and miss, and per table its energy. */
static void baseline_best(const struct corpus *c, const struct fam_stat *st,
			  double *e, double *x, double *per_table)
{
	int g, p;

	*e = *x = INFINITY;
	for (p = 0; p < c->np; p++)
		per_table[p] = INFINITY;
	for (g = 0; g < c->ng; g++) {
		if (!gov_is_baseline(c->gov[g]))
			continue;
		*e = min(*e, st[g].med_energy);
		*x = min(*x, st[g].med_miss);
		for (p = 0; p < c->np; p++)
			per_table[p] = min(per_table[p], st[g].energy[p]);
	}
}

/* Ours' worst energy ratio to the best baseline over the tables. */
static double worst_ratio(const struct corpus *c, const double *ours,
			  const double *best, int *where)
{
	double w = 0;
	int p;

	*where = 0;
	for (p = 0; p < c->np; p++) {
		if (ours[p] / best[p] > w) {
			w = ours[p] / best[p];
			*where = p;
		}
	}
	return w;
}

int targets_section(FILE *f, const struct corpus *c, const struct fam_stats *fs)
{
	int ours = corpus_gov(c, gov_by_role(ROLE_OURS, NULL));
	double *best = xcalloc(c->np, sizeof(*best)), sum = 0, be, bx, w;
	int fi, g, missed = 0, nbase = 0, where;

	for (g = 0; g < c->ng; g++)
		nbase += gov_is_baseline(c->gov[g]);
	fprintf(f, "\n## Targets\n\n");
	if (ours < 0 || !nbase) {
		fprintf(f, "Not evaluated: the run has no `teo` or no baseline.\n");
		free(best);
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
	for (fi = 0; fi < fs->nf; fi++) {
		const struct fam_stat *st = fs->st[fi];
		bool ok_e, ok_x, ok_w;

		baseline_best(c, st, &be, &bx, best);
		w = worst_ratio(c, st[ours].energy, best, &where);
		ok_e = st[ours].med_energy <= be * (1 + TARGET_ENERGY / 100) + 1e-9;
		ok_x = st[ours].med_miss <= bx + TARGET_MISS + 1e-9;
		ok_w = w <= 1 + TARGET_WORST / 100 + 1e-9;
		missed += !ok_e + !ok_x + !ok_w;
		sum += st[ours].med_energy;
		fprintf(f, "| %s%s |", fs->fam[fi], fs->closed[fi] ? "*" : "");
		for (g = 0; g < c->ng; g++)
			if (g == 0 || g == ours || gov_is_baseline(c->gov[g]))
				fprintf(f, " %.1f / %.2f |", st[g].med_energy, st[g].med_miss);
		fprintf(f, " %.1f <= %.1f %s | %.2f <= %.2f %s | %+.1f %% (%s) %s |\n",
			st[ours].med_energy, be * (1 + TARGET_ENERGY / 100), met(ok_e),
			st[ours].med_miss, bx + TARGET_MISS, met(ok_x),
			100 * (w - 1), c->ps[where].name, met(ok_w));
	}
	sum /= fs->nf;
	missed += sum > TARGET_MEAN;
	fprintf(f, "\nMean over the %d families of ours' median energy: %.1f %% of the yardstick (target <= %.0f %%): **%s**.\n",
		fs->nf, sum, TARGET_MEAN, met(sum <= TARGET_MEAN));
	fprintf(f, "\nTargets missed: %d of %d.\n", missed, 3 * fs->nf + 1);
	free(best);
	return missed;
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

static bool family_known(const char *name)
{
	int i;

	for (i = 0; i < replay_nfamilies; i++)
		if (!strcmp(name, replay_families[i]))
			return true;
	return false;
}

/* A threshold: a decimal number, or "-" (the rule only reports). */
static int threshold(const char *tok, double *v, bool *active)
{
	char *end;

	if (!tok)
		return -1;
	if (!strcmp(tok, "-")) {
		*active = false;
		return 0;
	}
	*v = strtod(tok, &end);
	return *end || end == tok || !isfinite(*v) || *v < 0 ? -1 : 0;
}

static int gate_line(const char *path, int line, char *buf, struct gate_conf *gc)
{
	char *comment = strchr(buf, '#'), *role, *kind, *tok[3];
	struct gate_rule *r = &gc->r[gc->n];
	int i;

	/* A comment runs to the end of the line. */
	if (comment)
		*comment = 0;
	role = first_token(buf);
	if (!role)
		return 0;
	if (gc->n == (int)ARRAY_SIZE(gc->r))
		return gerr(path, line, "too many rules");
	if (!strcmp(role, "base"))
		r->role = ROLE_BASE;
	else if (!strcmp(role, "mainline"))
		r->role = ROLE_MAINLINE;
	else
		return gerr(path, line, "the first word must be base or mainline");
	kind = strtok(NULL, " \t");
	if (!kind || (strcmp(kind, "teo") && strcmp(kind, "menu")))
		return gerr(path, line, "the second word must be teo or menu");
	snprintf(r->kind, sizeof(r->kind), "%s", kind);
	r->active = true;
	r->family[0] = 0;
	for (i = 0; i < 3; i++)
		tok[i] = strtok(NULL, " \t");
	/* An optional family name before the thresholds narrows the rule. */
	if (tok[0] && isalpha((unsigned char)tok[0][0])) {
		if (!family_known(tok[0]))
			return gerr(path, line, "unknown scenario family (want S1 ... S9, P or X)");
		snprintf(r->family, sizeof(r->family), "%s", tok[0]);
		tok[0] = tok[1];
		tok[1] = tok[2];
		tok[2] = strtok(NULL, " \t");
	}
	if (threshold(tok[0], &r->energy_pct, &r->active) ||
	    threshold(tok[1], &r->miss_pts, &r->active) ||
	    threshold(tok[2], &r->worst_pct, &r->active) || strtok(NULL, " \t"))
		return gerr(path, line, "want ROLE KIND [FAMILY] ENERGY_% MISS_POINTS WORST_TABLE_% (numbers >= 0, or - to only report)");
	gc->n++;
	return 0;
}

int gates_load(const char *path, struct gate_conf *gc)
{
	FILE *f = fopen(path, "r");
	char buf[256];
	int line = 0, rc = 0;

	memset(gc, 0, sizeof(*gc));
	if (!f) {
		fprintf(stderr, "idle-replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (!rc) {
		rc = read_line(f, buf, sizeof(buf), path, ++line);
		if (!rc)
			rc = gate_line(path, line, buf, gc);
	}
	fclose(f);
	return rc < 0 ? -1 : 0;
}

static int gate_family(FILE *f, const struct corpus *c, const struct fam_stats *fs,
		       int fi, const struct gate_rule *r, int ours, int b)
{
	const struct fam_stat *st = fs->st[fi];
	double e = st[ours].med_energy, be = st[b].med_energy;
	double w = 0;
	int p, where = 0;
	bool ok;

	for (p = 0; p < c->np; p++) {
		if (st[ours].energy[p] / st[b].energy[p] > w) {
			w = st[ours].energy[p] / st[b].energy[p];
			where = p;
		}
	}
	ok = !r->active ||
	     (e <= be * (1 + r->energy_pct / 100) + 1e-9 &&
	      st[ours].med_miss <= st[b].med_miss + r->miss_pts + 1e-9 &&
	      w <= 1 + r->worst_pct / 100 + 1e-9);
	fprintf(f, "| %s | %s | %.1f vs %.1f | %.2f vs %.2f | %+.1f %% (%s) | %s |\n",
		fs->fam[fi], c->gov[b]->label, e, be, st[ours].med_miss,
		st[b].med_miss, 100 * (w - 1), c->ps[where].name,
		!r->active ? "report only" : ok ? "pass" : "**FAIL**");
	return !ok;
}

/* The last rule for @general's baseline naming @family, else @general. */
static const struct gate_rule *rule_for(const struct gate_conf *gc,
					const struct gate_rule *general,
					const char *family)
{
	const struct gate_rule *r = general;
	int i;

	for (i = 0; i < gc->n; i++)
		if (gc->r[i].role == general->role &&
		    !strcmp(gc->r[i].kind, general->kind) &&
		    !strcmp(gc->r[i].family, family))
			r = &gc->r[i];
	return r;
}

int regression_gate(FILE *f, const struct corpus *c, const struct fam_stats *fs,
		    const struct gate_conf *gc)
{
	int ours = corpus_gov(c, gov_by_role(ROLE_OURS, NULL));
	int i, fi, b, failed = 0;

	fprintf(f, "\n## Regression gate\n\n"
		"Per family, ours against each baseline on the median table (energy %%,\n"
		"miss %%) and on its worst table (energy ratio), with the thresholds of\n"
		"tools/idle-replay/gates.conf:\n\n");
	for (i = 0; i < gc->n; i++) {
		const struct gate_rule *r = &gc->r[i];

		fprintf(f, "- %s %s%s%s: ",
			r->role == ROLE_BASE ? "base" : "mainline", r->kind,
			r->family[0] ? ", family " : "", r->family);
		if (r->active)
			fprintf(f, "energy +%.1f %%, miss +%.2f point, worst table +%.1f %%\n",
				r->energy_pct, r->miss_pts, r->worst_pct);
		else
			fprintf(f, "report only\n");
	}
	if (ours < 0) {
		fprintf(f, "\nNot evaluated: the run has no `teo`.\n");
		return 0;
	}
	fprintf(f, "\n| family | baseline | median energy | median miss | worst table | result |\n"
		"|---|---|---:|---:|---:|---|\n");
	for (i = 0; i < gc->n; i++) {
		if (gc->r[i].family[0])
			continue;
		b = corpus_gov(c, gov_by_role(gc->r[i].role, gc->r[i].kind));
		if (b < 0)
			continue;
		for (fi = 0; fi < fs->nf; fi++)
			failed += gate_family(f, c, fs, fi,
					      rule_for(gc, &gc->r[i], fs->fam[fi]),
					      ours, b);
	}
	fprintf(f, "\n**%s**: %d family x baseline comparisons fail.\n",
		failed ? "FAILED" : "PASSED", failed);
	return failed;
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
