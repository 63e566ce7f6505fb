// SPDX-License-Identifier: GPL-2.0
/*
 * idle-replay: the report's view of what users feel.  Per family over the
 * whole corpus, one table per concern, in this order: throughput (work per
 * second in closed loops), added wakeup latency, energy per unit of work,
 * miss ratio; then the closed-loop runs where ours loses work, and the
 * shared lock-ins: runs where a reference policy or the oracle does at
 * least twice the work of the best baseline, which no yardstick made of
 * the governors themselves can show.  Every number comes from families.c
 * (the family medians) or from the runs' results.
 */

#include <math.h>
#include <stdlib.h>

#include "replay.h"
#include "report.h"

/* A lock-in: the best reference or the oracle does this many times more. */
#define LOCKIN_FACTOR	2.0

/*
 * The governors in the order the report's tables show them: ours, the
 * baselines, the extras, then the yardsticks (the oracle, the references).
 */
static int report_order(const struct corpus *c, int *order)
{
	static const enum gov_role roles[] = {
		ROLE_OURS, ROLE_BASE, ROLE_MAINLINE, ROLE_EXTRA, ROLE_ORACLE,
		ROLE_REFERENCE,
	};
	size_t k;
	int g, n = 0;

	for (k = 0; k < ARRAY_SIZE(roles); k++)
		for (g = 0; g < c->ng; g++)
			if (c->gov[g]->role == roles[k])
				order[n++] = g;
	return n;
}

static void cell(FILE *f, double v, int decimals)
{
	if (isfinite(v))
		fprintf(f, " %.*f", decimals, v);
	else
		fprintf(f, " -");
}

/* A table's head: @lead's @nlead columns, then one per governor. */
static void head(FILE *f, const struct corpus *c, const int *order, int n,
		 const char *lead, int nlead)
{
	int k;

	fprintf(f, "| %s |", lead);
	for (k = 0; k < n; k++)
		fprintf(f, " %s |", c->gov[order[k]]->label);
	fprintf(f, "\n|");
	for (k = 0; k < nlead; k++)
		fprintf(f, "---|");
	for (k = 0; k < n; k++)
		fprintf(f, "---:|");
	fputc('\n', f);
}

enum concern { C_WORK, C_LATENCY, C_ENERGY, C_MISS };

/* One family's row of the table of @what: each governor's median(s). */
static void concern_row(FILE *f, const struct fam_stats *fs, int fi,
			const int *order, int n, enum concern what)
{
	int k;

	fprintf(f, "| %s%s |", fs->fam[fi], fs->closed[fi] ? "*" : "");
	for (k = 0; k < n; k++) {
		const struct fam_stat *st = &fs->st[fi][order[k]];

		switch (what) {
		case C_WORK:
			cell(f, st->med_work_base, 1);
			fprintf(f, " /");
			cell(f, st->med_work_oracle, 1);
			break;
		case C_LATENCY:
			cell(f, st->med_lat_mean, 1);
			fprintf(f, " /");
			cell(f, st->med_lat_p99, 0);
			break;
		case C_ENERGY:
			cell(f, st->med_energy, 1);
			break;
		case C_MISS:
			cell(f, st->med_miss, 2);
			break;
		}
		fprintf(f, " |");
	}
	fputc('\n', f);
}

static void concern_table(FILE *f, const struct corpus *c,
			  const struct fam_stats *fs, enum concern what)
{
	static const char *const text[] = {
		[C_WORK] = "### Throughput\n\n"
			"Work per second in the closed-loop scenarios (the lab's IOPS and\n"
			"loop-time proxy), median over the tables: % of the best baseline's /\n"
			"% of the oracle's.  The families without a closed loop are left out.\n\n",
		[C_LATENCY] = "### Added wakeup latency\n\n"
			"What idling added to the wakeups that brought work (the exit latency,\n"
			"then reflect()), median over the tables: mean / 99th percentile, us.\n\n",
		[C_ENERGY] = "### Energy per unit of work\n\n"
			"Median over the tables, % of the yardstick: the oracle's energy in an\n"
			"open loop (every governor serves the same work there), the best of ours\n"
			"and the baselines per work item in a closed one (marked *).\n\n",
		[C_MISS] = "### Miss ratio\n\n"
			"Above + below, % of the idle entries, median over the tables.\n\n",
	};
	int order[MAX_GOVS], n = report_order(c, order), fi;

	fputs(text[what], f);
	head(f, c, order, n, "family", 1);
	for (fi = 0; fi < fs->nf; fi++)
		if (what != C_WORK || fs->closed[fi])
			concern_row(f, fs, fi, order, n, what);
}

/* The closed-loop runs where ours does less work than the best baseline. */
static void work_losses(FILE *f, const struct corpus *c, double pct)
{
	int ours = corpus_gov(c, gov_by_role(ROLE_OURS, NULL));
	int s, p, b, n, total = 0, runs = 0;

	fprintf(f, "\n### Where ours loses work\n\n");
	if (ours < 0 || !isfinite(pct)) {
		fprintf(f, "Not evaluated: the run has no `teo`, or no work target (gates.conf).\n");
		return;
	}
	fprintf(f, "Closed-loop runs where ours does less work than the best baseline of the\n"
		"run less %.1f %% (the work target): per scenario the tables, with ours' work\n"
		"in %% of that baseline's.\n\n", pct);
	for (s = 0; s < c->ns; s++) {
		if (!c->sc[s].closed)
			continue;
		for (n = 0, p = 0; p < c->np; p++)
			n += work_lost(c, s, p, ours, pct, &b);
		runs += c->np;
		total += n;
		if (!n)
			continue;
		fprintf(f, "- %s, %d of %d tables:", c->sc[s].name, n, c->np);
		for (n = 0, p = 0; p < c->np; p++)
			if (work_lost(c, s, p, ours, pct, &b))
				fprintf(f, "%s %s %.1f %%", n++ ? "," : "", c->ps[p].name,
					corpus_result(c, s, p, ours)->work_base);
		fputc('\n', f);
	}
	fprintf(f, "%sOurs loses work in %d of %d closed-loop scenario x table runs.\n",
		total ? "\n" : "", total, runs);
}

/*
 * The most work the oracle or a reference policy did in run (@s, @p), and
 * the most a baseline did.
 */
static void best_work(const struct corpus *c, int s, int p, u64 *base, u64 *best)
{
	int g;

	*base = *best = 0;
	for (g = 0; g < c->ng; g++) {
		const struct result *r = corpus_result(c, s, p, g);

		if (gov_is_baseline(c->gov[g]))
			*base = max(*base, r->items);
		if (c->gov[g]->role == ROLE_ORACLE || c->gov[g]->role == ROLE_REFERENCE)
			*best = max(*best, r->items);
	}
}

/*
 * A shared lock-in: in closed-loop run (@s, @p) the best reference or the
 * oracle does at least LOCKIN_FACTOR times the best baseline's work.
 */
static bool lockin(const struct corpus *c, int s, int p)
{
	u64 base, best;

	if (!c->sc[s].closed)
		return false;
	best_work(c, s, p, &base, &best);
	return best && (double)best >= LOCKIN_FACTOR * (double)base;
}

/* Governor @g's work in run (@s, @p), % of the most the oracle or a reference did. */
static double of_possible(const struct corpus *c, int s, int p, int g)
{
	u64 base, best;

	best_work(c, s, p, &base, &best);
	return best ? 100.0 * corpus_result(c, s, p, g)->items / best : NAN;
}

int lockins_count(const struct corpus *c)
{
	int s, p, n = 0;

	for (s = 0; s < c->ns; s++)
		for (p = 0; p < c->np; p++)
			n += lockin(c, s, p);
	return n;
}

/* Per scenario: its lock-ins, those ours shares, each governor's median. */
static void lockins_summary(FILE *f, const struct corpus *c, const int *order,
			    int n, int ours)
{
	double *v = xcalloc(c->np, sizeof(*v));
	int s, p, k, m, shared;

	head(f, c, order, n, "scenario | runs | ours too", 3);
	for (s = 0; s < c->ns; s++) {
		for (m = shared = 0, p = 0; p < c->np; p++) {
			if (!lockin(c, s, p))
				continue;
			m++;
			shared += ours >= 0 &&
				  of_possible(c, s, p, ours) < 100 / LOCKIN_FACTOR;
		}
		if (!m)
			continue;
		fprintf(f, "| %s | %d | %d |", c->sc[s].name, m, shared);
		for (k = 0; k < n; k++) {
			for (m = 0, p = 0; p < c->np; p++)
				if (lockin(c, s, p))
					v[m++] = of_possible(c, s, p, order[k]);
			cell(f, vmedian(v, m), 1);
			fprintf(f, " |");
		}
		fputc('\n', f);
	}
	free(v);
}

static void lockins_section(FILE *f, const struct corpus *c)
{
	int order[MAX_GOVS], n = report_order(c, order), s, p, k, runs = 0;
	int total = lockins_count(c);
	int ours = corpus_gov(c, gov_by_role(ROLE_OURS, NULL));

	fprintf(f, "\n## Shared lock-ins\n\n"
		"In a closed loop the yardstick is the best of ours and the baselines, so\n"
		"a lock-in they share (every CPU parked in a deep state, each hop paying\n"
		"its exit) looks fine there.  The reference policies (`ref-shallow`: the\n"
		"shallowest halting state, tick kept; `ref-fit`: the deepest state the\n"
		"sleep length fits) and the oracle show it.  A shared lock-in is a\n"
		"closed-loop run where one of them does at least %.0f times the work of\n"
		"the best baseline; each governor's work there is given in %% of the most\n"
		"the oracle or a reference did (lockins.tsv: every run, with the work in\n"
		"%% of the best baseline, the oracle and the best reference).\n\n",
		LOCKIN_FACTOR);
	for (s = 0; s < c->ns; s++)
		runs += c->sc[s].closed ? c->np : 0;
	fprintf(f, "Shared lock-ins: %d of %d closed-loop scenario x table runs.\n",
		total, runs);
	if (!total)
		return;
	fprintf(f, "Per scenario the runs, how many of them ours shares (less than %.0f %%\n"
		"of that work), and each governor's median over them:\n\n",
		100 / LOCKIN_FACTOR);
	lockins_summary(f, c, order, n, ours);
	fprintf(f, "\n<details><summary>Every shared lock-in</summary>\n\n");
	head(f, c, order, n, "scenario | table", 2);
	for (s = 0; s < c->ns; s++) {
		for (p = 0; p < c->np; p++) {
			if (!lockin(c, s, p))
				continue;
			fprintf(f, "| %s | %s |", c->sc[s].name, c->ps[p].name);
			for (k = 0; k < n; k++) {
				cell(f, of_possible(c, s, p, order[k]), 1);
				fprintf(f, " |");
			}
			fputc('\n', f);
		}
	}
	fprintf(f, "\n</details>\n");
}

/* lockins.tsv: one row per governor of each lock-in run. */
void lockins_tsv(FILE *f, const struct corpus *c)
{
	int s, p, g;

	fprintf(f, "scenario\ttable\tgovernor\trole\twork_items\twork_pct_best_baseline\twork_pct_oracle\twork_pct_best_reference\n");
	for (s = 0; s < c->ns; s++) {
		for (p = 0; p < c->np; p++) {
			if (!lockin(c, s, p))
				continue;
			for (g = 0; g < c->ng; g++) {
				const struct result *r = corpus_result(c, s, p, g);

				fprintf(f, "%s\t%s\t%s\t%s\t%llu\t", c->sc[s].name,
					c->ps[p].name, c->gov[g]->label,
					gov_role_name(c->gov[g]->role),
					(unsigned long long)r->items);
				tsv_num(f, r->work_base, 3);
				fputc('\t', f);
				tsv_num(f, r->work_oracle, 3);
				fputc('\t', f);
				tsv_num(f, r->work_ref, 3);
				fputc('\n', f);
			}
		}
	}
}

/* The report's first part: per family, one table per concern. */
void throughput_sections(FILE *f, const struct corpus *c,
			 const struct fam_stats *fs, double work_pct)
{
	fprintf(f, "\n## Per family, over the corpus\n\n"
		"Ours against the baselines, then the oracle and the reference policies;\n"
		"per table the mean over the family's scenarios, then the median over the\n"
		"%d tables (families.tsv has these numbers and more).\n\n", c->np);
	concern_table(f, c, fs, C_WORK);
	fputc('\n', f);
	concern_table(f, c, fs, C_LATENCY);
	fputc('\n', f);
	concern_table(f, c, fs, C_ENERGY);
	fputc('\n', f);
	concern_table(f, c, fs, C_MISS);
	work_losses(f, c, work_pct);
	lockins_section(f, c);
}

/* A family's own table: every governor, the same measures side by side. */
void family_table(FILE *f, const struct corpus *c, const struct fam_stats *fs,
		  int fi)
{
	int order[MAX_GOVS], n = report_order(c, order), k;

	fprintf(f, "\nOver the %d tables (median of the per-table means; work in closed loops,\n"
		"%% of the best baseline, the oracle and the best reference; runs of the\n"
		"family where it did less work than the best baseline, and where it spent\n"
		"more than %.0f %% above the best baseline's energy):\n\n"
		"| governor | work %% best baseline | work %% oracle | work %% best reference | latency mean (us) | latency p99 (us) | energy %% | miss %% | runs losing work | runs > %.0f %% energy |\n"
		"|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
		c->np, TARGET_WORST, TARGET_WORST);
	for (k = 0; k < n; k++) {
		static const int decimals[] = { 1, 1, 1, 1, 0, 1, 2, 0 };
		const struct fam_stat *st = &fs->st[fi][order[k]];
		const double v[ARRAY_SIZE(decimals)] = {
			st->med_work_base, st->med_work_oracle, st->med_work_ref,
			st->med_lat_mean, st->med_lat_p99, st->med_energy,
			st->med_miss, st->work_lost < 0 ? NAN : st->work_lost,
		};
		size_t i;

		fprintf(f, "| %s |", c->gov[order[k]]->label);
		for (i = 0; i < ARRAY_SIZE(v); i++) {
			cell(f, v[i], decimals[i]);
			fprintf(f, " |");
		}
		fprintf(f, " %d / %d |\n", st->energy_over, st->runs);
	}
}
