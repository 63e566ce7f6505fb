// SPDX-License-Identifier: GPL-2.0
/*
 * idle-replay: metrics derivation, the Markdown report, its data files and
 * the gnuplot script for its plots.
 */

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#include "replay.h"
#include "cli.h"
#include "report.h"

/* --- derived metrics ----------------------------------------------------- */

static u64 sum(const u64 *v)
{
	u64 s = 0;
	int i;

	for (i = 0; i < CPUIDLE_STATE_MAX; i++)
		s += v[i];
	return s;
}

static double pct(u64 part, u64 whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

static double p99_us(const struct metrics *m)
{
	u64 want = m->wakeups - m->wakeups / 100, seen = 0;
	int b;

	for (b = 0; b < LAT_BINS; b++) {
		seen += m->lat_hist[b];
		if (seen >= want && seen)
			return lat_bin_us(b);
	}
	return 0;
}

/* Idle energy per work item served (per unit of time if there is no work). */
static double energy_rate(const struct metrics *m)
{
	return m->energy / (double)(m->items ? m->items : m->sim_ns);
}

void result_derive(struct result *r, const struct result *oracle)
{
	const struct metrics *m = &r->m, *o = &oracle->m;
	u64 use = sum(m->usage);
	double eo = energy_rate(o);

	r->above = pct(sum(m->above), use);
	r->below = pct(sum(m->below), use);
	r->miss = r->above + r->below;
	r->energy_rel = eo > 0 && !m->items == !o->items ?
			100.0 * energy_rate(m) / eo : 100.0;
	r->work_rel = o->items ? 100.0 * m->items / o->items : 100.0;
	r->lat_mean = m->wakeups ? (double)m->lat_sum_ns / m->wakeups / US : 0;
	r->lat_p99 = p99_us(m);
	r->tick_wrong = pct(m->tick_kept_hit + m->tick_stop_early, m->tick_running);
	r->adapt = m->adapt_switches ? (double)m->adapt_entries / m->adapt_switches : -1;
}

/* --- running a set ------------------------------------------------------- */

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Run every governor of @gs (the oracle first) on one scenario/platform. */
void run_set(const struct scenario *s, const struct platform *p,
	     const struct gov_entry *const *gs, int ng, struct result *out)
{
	struct run_opts o = { .debug = getenv("IDLE_REPLAY_DEBUG") != NULL };
	int g;

	for (g = 0; g < ng; g++) {
		double t0 = cpu_now();

		out[g].scn = s;
		out[g].plat = p;
		out[g].gov = gs[g]->label;
		run_one(s, p, gs[g], &o, &out[g].m);
		out[g].m.cpu_seconds = cpu_now() - t0;
	}
	for (g = 0; g < ng; g++)
		result_derive(&out[g], &out[0]);
}

/* --- tables -------------------------------------------------------------- */

static void share(FILE *f, const struct result *r)
{
	u64 total = sum(r->m.time_ns);
	const char *sep = "";
	int i;

	for (i = 0; i < r->plat->drv.state_count; i++) {
		double x = pct(r->m.time_ns[i], total);

		if (x < 0.5)
			continue;
		fprintf(f, "%s%s %.0f%%", sep, r->plat->names[i], x);
		sep = " ";
	}
}

static void adapt_cell(FILE *f, const struct result *r)
{
	if (r->adapt < 0)
		fprintf(f, " - |");
	else
		fprintf(f, " %.1f |", r->adapt);
}

void table_head(FILE *f)
{
	fprintf(f, "| scenario | governor | energy %% of oracle | work done %% of oracle | miss %% | above %% | below %% | added latency mean / p99 (us) | wrong tick %% | adapt (entries) | time share per state |\n");
	fprintf(f, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
}

void table_row(FILE *f, const struct result *r)
{
	fprintf(f, "| %s | %s | %.1f | %.1f | %.2f | %.2f | %.2f | %.1f / %.0f | %.1f |",
		r->scn->name, r->gov, r->energy_rel, r->work_rel, r->miss, r->above,
		r->below, r->lat_mean, r->lat_p99, r->tick_wrong);
	adapt_cell(f, r);
	fputc(' ', f);
	share(f, r);
	fprintf(f, " |\n");
}

/*
 * A table header: the @lead columns, then one "<label> @cells" column per
 * governor from index @from on.
 */
void gov_head(FILE *f, const char *lead, const char *rule,
	      const struct gov_entry *const *gs, int from, int ng,
	      const char *cells)
{
	int g;

	fprintf(f, "| %s |", lead);
	for (g = from; g < ng; g++)
		fprintf(f, " %s %s |", gs[g]->label, cells);
	fprintf(f, "\n|%s", rule);
	for (g = from; g < ng; g++)
		fprintf(f, "---:|");
	fputc('\n', f);
}

static void compact_row(FILE *f, const struct result *rs, int ng)
{
	int g;

	fprintf(f, "| %s |", rs[0].scn->name);
	for (g = 0; g < ng; g++)
		fprintf(f, " %.1f / %.2f / %.1f / %.1f |", rs[g].energy_rel,
			rs[g].miss, rs[g].lat_mean, rs[g].work_rel);
	fputc('\n', f);
}

static void sweep_row(FILE *f, const struct result *rs, int ng)
{
	int g;

	fprintf(f, "| %s | %u |", strstr(rs[0].scn->name, "pipe") ? "pipe" : "timer",
		rs[0].scn->sweep_us);
	for (g = 1; g < ng; g++)
		fprintf(f, " %.2f / %.2f |", rs[g].above, rs[g].below);
	fputc('\n', f);
}

/* --- verdicts ------------------------------------------------------------ */

const struct result *result_of(const struct result *rs, int ng,
			       const char *label)
{
	int g;

	for (g = 0; g < ng; g++)
		if (!strcmp(rs[g].gov, label))
			return &rs[g];
	return NULL;
}

/* -1: a better, 1: b better, 0: within the noise, 2: mixed. */
int compare(const struct result *a, const struct result *b)
{
	double de = a->energy_rel - b->energy_rel, dm = a->miss - b->miss;
	int e = de < -2 ? -1 : de > 2 ? 1 : 0;
	int m = dm < -1 ? -1 : dm > 1 ? 1 : 0;

	if (e == m || !m)
		return e;
	if (!e)
		return m;
	return 2;
}

static bool same_result(const struct result *a, const struct result *b)
{
	return a->m.decisions == b->m.decisions && a->m.energy == b->m.energy &&
	       !memcmp(a->m.usage, b->m.usage, sizeof(a->m.usage)) &&
	       !memcmp(a->m.above, b->m.above, sizeof(a->m.above));
}

static void verdict(FILE *f, const struct result *rs, int ng)
{
	static const char *const word[] = { "better than", "comparable to",
					    "worse than", "mixed against" };
	const struct result *a = result_of(rs, ng, "teo");
	const struct result *b = result_of(rs, ng, "menu-6.12");
	const struct result *base = result_of(rs, ng, "teo-6.12");

	if (!a || !b)
		return;
	fprintf(f, "- **%s**: teo %s menu-6.12 (energy %.1f vs %.1f %% of oracle, miss %.2f vs %.2f %%, latency %.1f vs %.1f us)",
		rs[0].scn->name, word[compare(a, b) + 1], a->energy_rel,
		b->energy_rel, a->miss, b->miss, a->lat_mean, b->lat_mean);
	if (base)
		fprintf(f, "; %s teo-6.12", same_result(a, base) ?
			"identical to" : "differs from");
	fprintf(f, ".\n");
}

/* --- the report ---------------------------------------------------------- */

static void family_section(FILE *f, const struct report *rp, const char *fam)
{
	int s, n = 0;

	for (s = 0; s < rp->ns; s++)
		n += !strcmp(rp->sc[s].family, fam);
	if (!n)
		return;
	fprintf(f, "\n## %s: %s\n\nPlatform %s.\n\n", fam, family_title(fam),
		report_primary(rp, fam)->plat->title);
	if (!strcmp(fam, "S6"))
		gov_head(f, "wakeup | interval (us)", "---|---:|", rp->gov, 1,
			 rp->ng, "above % / below %");
	else if (n > 3)
		gov_head(f, "scenario", "---|", rp->gov, 0, rp->ng,
			 "energy % / miss % / lat us / work %");
	else
		table_head(f);
	for (s = 0; s < rp->ns; s++) {
		const struct result *rs = &rp->prim[s * rp->ng];

		if (strcmp(rp->sc[s].family, fam))
			continue;
		if (!strcmp(fam, "S6"))
			sweep_row(f, rs, rp->ng);
		else if (n > 3)
			compact_row(f, rs, rp->ng);
		else
			for (int g = 0; g < rp->ng; g++)
				table_row(f, &rs[g]);
	}
	fputc('\n', f);
	for (s = 0; s < rp->ns; s++)
		if (!strcmp(rp->sc[s].family, fam))
			verdict(f, &rp->prim[s * rp->ng], rp->ng);
}

const struct result *report_primary(const struct report *rp, const char *fam)
{
	int s;

	for (s = 0; s < rp->ns; s++)
		if (!strcmp(rp->sc[s].family, fam))
			return &rp->prim[s * rp->ng];
	return rp->prim;
}

static void intro(FILE *f, const struct report *rp)
{
	int g;

	fprintf(f, "# idle-replay report\n\n");
	fprintf(f, "Simulated idle timelines replayed through unmodified governor sources; the\n"
		"model, the metrics and how to read this page are in `tools/idle-replay/README`.\n"
		"Energy is idle energy per unit of time relative to the oracle (100 = the\n"
		"oracle; lower is impossible), miss = above + below (the cpuidle core's\n"
		"counters, in %% of entries), added latency is the exit latency paid by\n"
		"wakeups that brought work, wrong tick is in %% of decisions taken with the\n"
		"tick running, adapt is the number of entries after a phase switch before\n"
		"8 entries in a row were neither above nor below.\n\nGovernors:");
	for (g = 0; g < rp->ng; g++)
		fprintf(f, " `%s`", rp->gov[g]->label);
	fprintf(f, ".\n");
}

static void write_report(FILE *f, const struct report *rp)
{
	static const char *const fams[] = {
		"S1", "S2", "S3", "S4", "S5", "S6", "S7", "S8", "S9", "P", "X", "TR"
	};
	size_t i;

	intro(f, rp);
	seed_directions(f, rp);
	for (i = 0; i < ARRAY_SIZE(fams); i++)
		family_section(f, rp, fams[i]);
	platform_section(f, rp);
	fprintf(f, "\n## Plots\n\n![energy vs added latency](energy-latency.svg)\n\n"
		"![pipe wakeups: above/below vs interval](sweep-pipe.svg)\n\n"
		"![timer wakeups: above/below vs interval](sweep-timer.svg)\n");
	speed_section(f, rp);
}

static void write_all(const struct report *rp, const char *dir)
{
	FILE *f = report_file(dir, "report.md");

	write_report(f, rp);
	fclose(f);
	f = report_file(dir, "results.tsv");
	write_tsv(f, rp);
	fclose(f);
	write_plot_files(rp, dir);
}

static void run_primary(struct report *rp)
{
	int s;

	for (s = 0; s < rp->ns; s++) {
		const struct platform *p = platform_find(rp->ps, rp->np,
							 rp->sc[s].platform);

		if (!p)
			die("scenario %s: no platform '%s'", rp->sc[s].name,
			    rp->sc[s].platform);
		run_set(&rp->sc[s], p, rp->gov, rp->ng, &rp->prim[s * rp->ng]);
	}
}

static void run_all_platforms(struct report *rp)
{
	int s, p;

	for (s = 0; s < rp->ns; s++)
		for (p = 0; p < rp->np; p++)
			run_set(&rp->sc[s], &rp->ps[p], rp->gov, rp->ng,
				&rp->all[(s * rp->np + p) * rp->ng]);
}

static void report_govs(struct report *rp, const struct cli *c)
{
	int g;

	rp->gov[rp->ng++] = gov_find("oracle");
	for (g = 0; g < c->ngov; g++)
		if (strcmp(c->gov[g]->label, "oracle"))
			rp->gov[rp->ng++] = c->gov[g];
}

int cmd_report(int argc, char **argv)
{
	struct cli c = cli_parse(argc, argv, "data out gov scenario");
	struct report *rp = xcalloc(1, sizeof(*rp));
	struct scenario *all;
	int n = scenarios_build(&all), s;

	if (!c.out)
		die("report needs --out DIR");
	if (mkdir(c.out, 0777) && errno != EEXIST)
		die("cannot create %s: %s", c.out, strerror(errno));
	report_govs(rp, &c);
	rp->sc = xcalloc(n, sizeof(*rp->sc));
	for (s = 0; s < n; s++)
		if (cli_scenario_wanted(&c, &all[s]))
			rp->sc[rp->ns++] = all[s];
	rp->np = cli_platforms(&c, &rp->ps);
	rp->prim = xcalloc((size_t)rp->ns * rp->ng, sizeof(*rp->prim));
	rp->all = xcalloc((size_t)rp->ns * rp->np * rp->ng, sizeof(*rp->all));
	run_primary(rp);
	run_all_platforms(rp);
	write_all(rp, c.out);
	printf("wrote %s/report.md, results.tsv and the plot data\n", c.out);
	return 0;
}
