// SPDX-License-Identifier: GPL-2.0
/*
 * idle-replay: the report's summary sections, its TSV and its plots.
 */

#include <errno.h>
#include <stdlib.h>

#include "replay.h"
#include "report.h"

static const struct result *prim_of(const struct report *rp, const char *name)
{
	int s;

	for (s = 0; s < rp->ns; s++)
		if (!strcmp(rp->sc[s].name, name))
			return &rp->prim[s * rp->ng];
	return NULL;
}

static void io_direction(FILE *f, const struct report *rp, int s)
{
	const struct result *rs = &rp->prim[s * rp->ng];
	const struct result *t = result_of(rs, rp->ng, "teo");
	const struct result *m = result_of(rs, rp->ng, "menu-6.12");

	if (!t || !m)
		return;
	fprintf(f, "- %s (%s): teo miss %.2f %% vs menu %.2f %%, energy %.1f vs %.1f %% of oracle, added latency %.1f vs %.1f us: **%s**.\n",
		rs->scn->name, rs->plat->name, t->miss, m->miss, t->energy_rel,
		m->energy_rel, t->lat_mean, m->lat_mean,
		t->miss < m->miss && t->energy_rel <= m->energy_rel + 2 ?
		"reproduced (teo beats menu)" : "NOT reproduced");
}

static void edge_direction(FILE *f, const struct report *rp, unsigned int us)
{
	char name[48];
	const struct result *rs, *t, *m;

	snprintf(name, sizeof(name), "s6-pipe-%uus", us);
	rs = prim_of(rp, name);
	if (!rs)
		return;
	t = result_of(rs, rp->ng, "teo");
	m = result_of(rs, rp->ng, "menu-6.12");
	if (!t || !m)
		return;
	fprintf(f, "- %s (%s): teo above/below %.2f / %.2f %% vs menu %.2f / %.2f %%: **%s**.\n",
		name, rs->plat->name, t->above, t->below, m->above, m->below,
		t->miss + 1 < m->miss ? "reproduced (teo beats menu)" :
		m->miss + 1 < t->miss ? "NOT reproduced (menu beats teo)" :
		"NOT reproduced (no clear difference)");
}

void seed_directions(FILE *f, const struct report *rp)
{
	static const unsigned int edge[] = { 30, 100, 120, 130 };
	size_t i;
	int s;

	fprintf(f, "\n## The seed threads' direction\n\n"
		"Intercept-heavy IO (S4; the seed measured IOPS, the lab's proxy is the\n"
		"added wakeup latency and the miss ratio):\n\n");
	for (s = 0; s < rp->ns; s++)
		if (!strcmp(rp->sc[s].family, "S4"))
			io_direction(f, rp, s);
	fprintf(f, "\nPipe wakeups near the CEDE residency edge (120 us) on the two-state POWER10\n"
		"table (S6):\n\n");
	for (i = 0; i < ARRAY_SIZE(edge); i++)
		edge_direction(f, rp, edge[i]);
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), by_value);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Median energy and miss of one governor over all scenarios on platform p. */
static void platform_medians(const struct report *rp, int p, int g, double *e,
			     double *x)
{
	double *ve = xcalloc(2 * rp->ns, sizeof(*ve)), *vx = ve + rp->ns;
	int s;

	for (s = 0; s < rp->ns; s++) {
		const struct result *r = &rp->all[(s * rp->np + p) * rp->ng + g];

		ve[s] = r->energy_rel;
		vx[s] = r->miss;
	}
	*e = median(ve, rp->ns);
	*x = median(vx, rp->ns);
	free(ve);
}

static void platform_tally(const struct report *rp, int p, int *tally)
{
	int s;

	memset(tally, 0, 4 * sizeof(*tally));
	for (s = 0; s < rp->ns; s++) {
		const struct result *rs = &rp->all[(s * rp->np + p) * rp->ng];
		const struct result *t = result_of(rs, rp->ng, "teo");
		const struct result *m = result_of(rs, rp->ng, "menu-6.12");

		if (t && m)
			tally[compare(t, m) + 1]++;
	}
}

static void platform_row(FILE *f, const struct report *rp, int p)
{
	int g, tally[4];
	double e, x;

	platform_tally(rp, p, tally);
	fprintf(f, "| %s | %d / %d / %d / %d |", rp->ps[p].name, tally[0],
		tally[1], tally[2], tally[3]);
	for (g = 1; g < rp->ng; g++) {
		platform_medians(rp, p, g, &e, &x);
		fprintf(f, " %.1f / %.2f |", e, x);
	}
	fputc('\n', f);
}

void platform_section(FILE *f, const struct report *rp)
{
	int p;

	fprintf(f, "\n## Every scenario on every platform\n\n"
		"Medians over all %d scenarios, each run on each table (the scenario's HZ and\n"
		"timeline, the platform's states). \"teo vs menu\": in how many scenarios teo\n"
		"is better than / comparable to / worse than / mixed against menu-6.12\n"
		"(better: more than 2 points less energy or 1 point fewer misses, and not\n"
		"worse on the other).\n\n", rp->ns);
	gov_head(f, "platform | teo vs menu", "---|---:|", rp->gov, 1, rp->ng,
		 "energy % / miss %");
	for (p = 0; p < rp->np; p++)
		platform_row(f, rp, p);
}

void speed_section(FILE *f, const struct report *rp)
{
	int g, i, n = rp->ns * rp->np;

	fprintf(f, "\n## Speed of the tool (informational, varies per run)\n\n"
		"| governor | decisions | CPU seconds | decisions/s |\n|---|---:|---:|---:|\n");
	for (g = 0; g < rp->ng; g++) {
		double sec = 0, dec = 0;

		for (i = 0; i < n; i++) {
			sec += rp->all[i * rp->ng + g].m.cpu_seconds;
			dec += rp->all[i * rp->ng + g].m.decisions;
		}
		fprintf(f, "| %s | %.0f | %.2f | %.2e |\n", rp->gov[g]->label,
			dec, sec, sec > 0 ? dec / sec : 0);
	}
}

void write_tsv(FILE *f, const struct report *rp)
{
	int i, n = rp->ns * rp->np * rp->ng;

	fprintf(f, "scenario\tfamily\tplatform\tgovernor\tdecisions\tenergy_pct_of_oracle\tmiss_pct\tabove_pct\tbelow_pct\tlat_mean_us\tlat_p99_us\twrong_tick_pct\tadapt_entries\n");
	for (i = 0; i < n; i++) {
		const struct result *r = &rp->all[i];

		fprintf(f, "%s\t%s\t%s\t%s\t%llu\t%.3f\t%.4f\t%.4f\t%.4f\t%.3f\t%.1f\t%.3f\t%.2f\n",
			r->scn->name, r->scn->family, r->plat->name, r->gov,
			(unsigned long long)r->m.decisions, r->energy_rel,
			r->miss, r->above, r->below, r->lat_mean, r->lat_p99,
			r->tick_wrong, r->adapt);
	}
}

/* --- plots --------------------------------------------------------------- */

FILE *report_file(const char *dir, const char *name)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		die("cannot write %s: %s", path, strerror(errno));
	return f;
}

static void energy_latency_data(const struct report *rp, const char *dir)
{
	FILE *f = report_file(dir, "energy-latency.dat");
	int g, s;

	for (g = 0; g < rp->ng; g++) {
		fprintf(f, "# %s\n", rp->gov[g]->label);
		for (s = 0; s < rp->ns; s++) {
			const struct result *r = &rp->prim[s * rp->ng + g];

			fprintf(f, "%.3f %.3f %s\n", r->lat_mean, r->energy_rel,
				r->scn->name);
		}
		fprintf(f, "\n\n");
	}
	fclose(f);
}

static void sweep_data(const struct report *rp, const char *dir,
		       const char *kind)
{
	char name[64];
	FILE *f;
	int g, s;

	snprintf(name, sizeof(name), "sweep-%s.dat", kind);
	f = report_file(dir, name);
	fprintf(f, "# interval_us then above%% below%% for each governor but the oracle\n");
	for (s = 0; s < rp->ns; s++) {
		const struct result *rs = &rp->prim[s * rp->ng];

		if (!rs->scn->sweep_us || !strstr(rs->scn->name, kind))
			continue;
		fprintf(f, "%u", rs->scn->sweep_us);
		for (g = 1; g < rp->ng; g++)
			fprintf(f, " %.4f %.4f", rs[g].above, rs[g].below);
		fputc('\n', f);
	}
	fclose(f);
}

static void gp_sweep(FILE *f, const struct report *rp, const char *kind)
{
	int g;

	fprintf(f, "set output 'sweep-%s.svg'\nset title '%s wakeups at a fixed interval (S6, POWER10)'\n"
		"set xlabel 'wakeup interval (us)'\nset ylabel '%% of idle entries'\n"
		"set logscale x\nunset logscale y\nset yrange [0:*]\nplot ", kind, kind);
	for (g = 1; g < rp->ng; g++)
		fprintf(f, "%s'sweep-%s.dat' using 1:%d with linespoints lc %d dt 1 title '%s above', "
			"'' using 1:%d with linespoints lc %d dt 2 title '%s below'",
			g > 1 ? ", \\\n     " : "", kind, 2 * g, g, rp->gov[g]->label,
			2 * g + 1, g, rp->gov[g]->label);
	fprintf(f, "\n");
}

static void gp_energy(FILE *f, const struct report *rp)
{
	int g;

	fprintf(f, "set output 'energy-latency.svg'\nset title 'every scenario on its own platform'\n"
		"set xlabel 'added wakeup latency, mean (us)'\nset ylabel 'idle energy, %% of the oracle'\n"
		"set logscale x\nset logscale y\nplot ");
	for (g = 0; g < rp->ng; g++)
		fprintf(f, "%s'energy-latency.dat' index %d using ($1+0.1):2 with points pt %d ps 0.8 title '%s'",
			g ? ", \\\n     " : "", g, 5 + g, rp->gov[g]->label);
	fprintf(f, "\n");
}

void write_plot_files(const struct report *rp, const char *dir)
{
	FILE *f;

	energy_latency_data(rp, dir);
	sweep_data(rp, dir, "pipe");
	sweep_data(rp, dir, "timer");
	f = report_file(dir, "plots.gp");
	fprintf(f, "# gnuplot script written by idle-replay report\n"
		"set terminal svg size 960,600 dynamic background rgb 'white'\n"
		"set key outside right\nset grid\n");
	gp_energy(f, rp);
	gp_sweep(f, rp, "pipe");
	gp_sweep(f, rp, "timer");
	fclose(f);
}
