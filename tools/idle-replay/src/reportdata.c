// SPDX-License-Identifier: GPL-2.0
/*
 * idle-replay: the report's summary sections, its TSV and its plots.
 */

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "replay.h"
#include "report.h"

static int scenario_index(const struct corpus *c, const char *name)
{
	int s;

	for (s = 0; s < c->ns; s++)
		if (!strcmp(c->sc[s].name, name))
			return s;
	return -1;
}

/* The results of scenario @name on its own platform, or NULL. */
static const struct result *home_of(const struct corpus *c, const char *name)
{
	int s = scenario_index(c, name), p = s >= 0 ? corpus_home(c, s) : -1;

	return p >= 0 ? corpus_result(c, s, p, 0) : NULL;
}

/* --- the corpus ---------------------------------------------------------- */

void corpus_section(FILE *f, const struct corpus *c)
{
	int p, trunc = 0, unsorted = 0, off = 0, dups = 0;

	for (p = 0; p < c->np; p++) {
		trunc += c->ps[p].listed > c->ps[p].drv.state_count;
		unsorted += c->ps[p].unsorted;
		off += c->ps[p].off_mask != 0;
		dups += c->ps[p].dups[0] != 0;
	}
	fprintf(f, "\n## Corpus\n\n"
		"%d scenarios on each of %d distinct idle-state tables (%d found under\n"
		"other names too: listed once).  Tables are run as the kernel would register\n"
		"them: %d list more than CPUIDLE_STATE_MAX states (the first %d are used, as\n"
		"the drivers do), %d have target residencies out of order, %d have states\n"
		"disabled by default (CPUIDLE_FLAG_OFF).  None is skipped.\n\n"
		"| table | from | states (exit latency / target residency, us) | notes |\n"
		"|---|---|---|---|\n", c->ns, c->np, dups, trunc, CPUIDLE_STATE_MAX,
		unsorted, off);
	for (p = 0; p < c->np; p++) {
		const struct platform *pl = &c->ps[p];
		const char *base = strrchr(pl->origin, '/');
		int i;

		fprintf(f, "| %s | %s |", pl->name, base ? base + 1 : pl->origin);
		for (i = 0; i < pl->drv.state_count; i++)
			fprintf(f, " %s %lld/%lld%s", pl->names[i],
				(long long)pl->drv.states[i].exit_latency_ns / 1000,
				(long long)pl->drv.states[i].target_residency_ns / 1000,
				pl->off_mask >> i & 1 ? " (off)" : "");
		fprintf(f, " |");
		if (pl->listed > pl->drv.state_count)
			fprintf(f, " %d states listed, %d used;", pl->listed,
				pl->drv.state_count);
		if (pl->unsorted)
			fprintf(f, " unsorted residencies;");
		if (pl->dups[0])
			fprintf(f, " also %s", pl->dups);
		fprintf(f, " |\n");
	}
}

/* --- distribution over the tables ---------------------------------------- */

void distribution_table(FILE *f, const struct corpus *c,
			const struct fam_stats *fs, int fi)
{
	const struct fam_stat *st = fs->st[fi];
	int g, s, p, traps;

	fprintf(f, "\nThe worst of the %d tables (per table the mean over the family's\n"
		"scenarios) in energy and miss, tables where the governor loses to the\n"
		"best other one (more than 1 %% energy or 0.5 point miss), runs with a\n"
		"trap (a shallow stretch of at least 1 s and 10 %% of the run):\n\n"
		"| governor | worst energy %% | worst miss %% | tables lost | trapped runs |\n"
		"|---|---:|---:|---:|---:|\n", c->np);
	for (g = 0; g < c->ng; g++) {
		traps = 0;
		for (s = 0; s < c->ns; s++) {
			if (strcmp(c->sc[s].family, fs->fam[fi]))
				continue;
			for (p = 0; p < c->np; p++)
				traps += trapped(corpus_result(c, s, p, g), &c->sc[s]);
		}
		fprintf(f, "| %s | %.1f | %.2f | ", c->gov[g]->label,
			st[g].worst_energy, st[g].worst_miss);
		if (g)
			fprintf(f, "%d | %d |\n", st[g].losses, traps);
		else
			fprintf(f, "- | %d |\n", traps);
	}
}

/* --- traps --------------------------------------------------------------- */

void trap_section(FILE *f, const struct corpus *c)
{
	const struct result *rs = home_of(c, "s1-idle-hz1000");
	int g;

	if (!rs)
		return;
	fprintf(f, "\n## The idle trap (S1, %s, %.0f s)\n\n"
		"A fully idle HZ=1000 machine.  Trap: the longest stretch of %.1f s\n"
		"windows in which at least half of the idle time went to shallower states\n"
		"than the oracle's; miss %% alone hides it.\n\n"
		"| governor | energy %% | miss %% | TVD %% | trap (s) | trap %% of run | trap starts at (s) | time share per state |\n"
		"|---|---:|---:|---:|---:|---:|---:|---|\n",
		c->ps[rs->p].name, c->sc[rs->s].duration / 1e9,
		(double)WINDOW_NS / SEC);
	for (g = 0; g < c->ng; g++) {
		const struct platform *p = &c->ps[rs->p];
		int i;

		fprintf(f, "| %s | %.1f | %.2f | %.1f | %.1f | %.1f | %.1f |",
			c->gov[g]->label, rs[g].energy_rel, rs[g].miss, rs[g].tvd,
			rs[g].trap_s, rs[g].trap_share, rs[g].trap_start_s);
		for (i = 0; i < p->drv.state_count; i++)
			if (rs[g].share[i] >= 0.05)
				fprintf(f, " %s %.1f%%", p->names[i], rs[g].share[i]);
		fprintf(f, " |\n");
	}
}

/* --- seed 001 ------------------------------------------------------------ */

static int deepest_share_gov(const struct corpus *c, const char *suffix)
{
	int g;
	size_t n = strlen(suffix);

	for (g = 0; g < c->ng; g++) {
		size_t l = strlen(c->gov[g]->label);

		if (l > n && !strcmp(c->gov[g]->label + l - n, suffix))
			return g;
	}
	return -1;
}

/*
 * Seed 001 ("avoid selecting the deepest idle state over-eagerly") as a
 * variant of the base tree's teo: testers measured idle package power
 * 1.75 W -> 9.40 W on an i5-10600K desktop, 69.6 % instead of 98-99 % of
 * idle time in the deepest state.
 */
void seed001_section(FILE *f, const struct corpus *c, const struct fam_stats *fs)
{
	int v = deepest_share_gov(c, "-seed001");
	int b = corpus_gov(c, gov_by_role(ROLE_BASE, "teo"));
	const struct result *rs = home_of(c, "s2-desktop-idle");
	int fi, last;

	if (v < 0 || b < 0)
		return;
	fprintf(f, "\n## Seed 001: \"avoid selecting the deepest idle state over-eagerly\"\n\n"
		"`%s` is %s with the seed's change (the intercept test also counts the\n"
		"hits below the candidate), built at run time.  Testers measured on an idle\n"
		"i5-10600K desktop: package power 1.75 W -> 9.40 W (+437 %%), 69.6 %% instead\n"
		"of 98-99 %% of idle time in the deepest state.\n\n",
		c->gov[v]->label, c->gov[b]->label);
	if (rs) {
		last = c->ps[rs->p].drv.state_count - 1;
		fprintf(f, "S2 on %s: energy %.1f %% -> %.1f %% of the oracle (%+.1f %%), deepest state %.1f %% -> %.1f %% of idle time, miss %.2f -> %.2f %%.\n\n",
			c->ps[rs->p].name, rs[b].energy_rel, rs[v].energy_rel,
			100 * (rs[v].energy_rate / rs[b].energy_rate - 1),
			rs[b].share[last], rs[v].share[last], rs[b].miss, rs[v].miss);
	}
	fprintf(f, "| family | %s median energy %% | %s median energy %% | change | %s tables lost |\n"
		"|---|---:|---:|---:|---:|\n", c->gov[b]->label, c->gov[v]->label,
		c->gov[v]->label);
	for (fi = 0; fi < fs->nf; fi++) {
		const struct fam_stat *st = fs->st[fi];

		fprintf(f, "| %s | %.1f | %.1f | %+.1f %% | %d |\n", fs->fam[fi],
			st[b].med_energy, st[v].med_energy,
			100 * (st[v].med_energy / st[b].med_energy - 1), st[v].losses);
	}
}

/* --- the seed threads' direction ----------------------------------------- */

static void io_direction(FILE *f, const struct corpus *c, const struct result *rs,
			 int t, int m)
{
	fprintf(f, "- %s (%s): teo miss %.2f %% vs %s %.2f %%, energy %.1f vs %.1f %%, added latency %.1f vs %.1f us: **%s**.\n",
		c->sc[rs->s].name, c->ps[rs->p].name, rs[t].miss,
		c->gov[m]->label, rs[m].miss, rs[t].energy_rel, rs[m].energy_rel,
		rs[t].lat_mean, rs[m].lat_mean,
		rs[t].miss < rs[m].miss && rs[t].energy_rel <= rs[m].energy_rel + 2 ?
		"reproduced (teo beats menu)" : "NOT reproduced");
}

static void edge_direction(FILE *f, const struct corpus *c, unsigned int us,
			   int t, int m)
{
	const struct result *rs;
	char name[48];

	snprintf(name, sizeof(name), "s6-pipe-%uus", us);
	rs = home_of(c, name);
	if (!rs)
		return;
	fprintf(f, "- %s (%s): teo above/below %.2f / %.2f %% vs %s %.2f / %.2f %%: **%s**.\n",
		name, c->ps[rs->p].name, rs[t].above, rs[t].below,
		c->gov[m]->label, rs[m].above, rs[m].below,
		rs[t].miss + 1 < rs[m].miss ? "reproduced (teo beats menu)" :
		rs[m].miss + 1 < rs[t].miss ? "NOT reproduced (menu beats teo)" :
		"NOT reproduced (no clear difference)");
}

void seed_directions(FILE *f, const struct corpus *c)
{
	static const unsigned int edge[] = { 30, 100, 120, 130 };
	int t = corpus_gov(c, gov_by_role(ROLE_OURS, NULL));
	int m = corpus_gov(c, gov_by_role(ROLE_BASE, "menu"));
	size_t i;
	int s;

	if (t < 0 || m < 0)
		return;
	fprintf(f, "\n## The seed threads' direction\n\n"
		"Intercept-heavy IO (S4; the seed measured IOPS, the lab's proxy is the\n"
		"added wakeup latency and the miss ratio):\n\n");
	for (s = 0; s < c->ns; s++)
		if (!strcmp(c->sc[s].family, "S4") && corpus_home(c, s) >= 0)
			io_direction(f, c, corpus_result(c, s, corpus_home(c, s), 0), t, m);
	fprintf(f, "\nPipe wakeups near the CEDE residency edge (120 us) on the two-state POWER10\n"
		"table (S6):\n\n");
	for (i = 0; i < ARRAY_SIZE(edge); i++)
		edge_direction(f, c, edge[i], t, m);
}

void speed_section(FILE *f, const struct corpus *c)
{
	int g, i, n = c->ns * c->np;

	fprintf(f, "\n## Speed of the tool (informational, varies per run)\n\n"
		"| governor | decisions | CPU seconds | decisions/s |\n|---|---:|---:|---:|\n");
	for (g = 0; g < c->ng; g++) {
		double sec = 0, dec = 0;

		for (i = 0; i < n; i++) {
			sec += c->res[i * c->ng + g].cpu_seconds;
			dec += c->res[i * c->ng + g].decisions;
		}
		fprintf(f, "| %s | %.0f | %.2f | %.2e |\n", c->gov[g]->label,
			dec, sec, sec > 0 ? dec / sec : 0);
	}
}

/*
 * Work items served, per second and relative to the best baseline, the
 * oracle and the best reference (closed loops), and the time share of
 * each state used: NAME=PCT;...
 */
static void tsv_tail(FILE *f, const struct corpus *c, const struct result *r)
{
	const struct platform *p = &c->ps[r->p];
	const double w[] = { r->work_base, r->work_oracle, r->work_ref };
	const char *sep = "";
	size_t k;
	int i;

	fprintf(f, "\t%llu\t%.3f", (unsigned long long)r->items,
		(double)r->items * SEC / (double)c->sc[r->s].duration);
	for (k = 0; k < ARRAY_SIZE(w); k++) {
		fputc('\t', f);
		tsv_num(f, w[k], 3);
	}
	fputc('\t', f);
	for (i = 0; i < p->drv.state_count; i++) {
		if (r->share[i] < 0.05)
			continue;
		fprintf(f, "%s%s=%.1f", sep, p->names[i], r->share[i]);
		sep = ";";
	}
	fputc('\n', f);
}

void write_tsv(FILE *f, const struct corpus *c)
{
	size_t i, n = (size_t)c->ns * c->np * c->ng;

	fprintf(f, "scenario\tfamily\tloop\tplatform\tgovernor\trole\tdecisions\tenergy_pct\twork_pct\tmiss_pct\tabove_pct\tbelow_pct\tlat_mean_us\tlat_p99_us\twrong_tick_pct\tadapt_entries\ttvd_pct\ttrap_s\ttrap_pct\titems\twork_per_s\twork_pct_best_baseline\twork_pct_oracle\twork_pct_best_reference\tstate_shares\n");
	for (i = 0; i < n; i++) {
		const struct result *r = &c->res[i];
		const struct scenario *s = &c->sc[r->s];

		fprintf(f, "%s\t%s\t%s\t%s\t%s\t%s\t%llu\t%.3f\t%.3f\t%.4f\t%.4f\t%.4f\t",
			s->name, s->family, s->closed ? "closed" : "open",
			c->ps[r->p].name, c->gov[r->g]->label,
			gov_role_name(c->gov[r->g]->role),
			(unsigned long long)r->decisions, r->energy_rel, r->work_rel,
			r->miss, r->above, r->below);
		tsv_num(f, r->wakeups ? r->lat_mean : NAN, 3);
		fputc('\t', f);
		tsv_num(f, r->wakeups ? r->lat_p99 : NAN, 1);
		fprintf(f, "\t%.3f\t", r->tick_wrong);
		tsv_num(f, r->adapt < 0 ? NAN : r->adapt, 2);
		fprintf(f, "\t%.2f\t%.1f\t%.1f", r->tvd, r->trap_s, r->trap_share);
		tsv_tail(f, c, r);
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

static void energy_latency_data(const struct corpus *c, const char *dir)
{
	FILE *f = report_file(dir, "energy-latency.dat");
	int g, s;

	for (g = 0; g < c->ng; g++) {
		fprintf(f, "# %s\n", c->gov[g]->label);
		for (s = 0; s < c->ns; s++) {
			int p = corpus_home(c, s);
			const struct result *r;

			if (p < 0)
				continue;
			r = corpus_result(c, s, p, g);
			fprintf(f, "%.3f %.3f %s\n", r->lat_mean, r->energy_rel,
				c->sc[s].name);
		}
		fprintf(f, "\n\n");
	}
	fclose(f);
}

/* Rows of the sweep; 0 if the run has no S6 point of this kind. */
static int sweep_data(const struct corpus *c, const char *dir, const char *kind)
{
	char name[64];
	FILE *f;
	int g, s, n = 0;

	snprintf(name, sizeof(name), "sweep-%s.dat", kind);
	f = report_file(dir, name);
	fprintf(f, "# interval_us then above%% below%% for each governor but the oracle\n");
	for (s = 0; s < c->ns; s++) {
		int p = corpus_home(c, s);
		const struct result *rs;

		if (p < 0 || !c->sc[s].sweep_us || !strstr(c->sc[s].name, kind))
			continue;
		rs = corpus_result(c, s, p, 0);
		fprintf(f, "%u", c->sc[s].sweep_us);
		for (g = 1; g < c->ng; g++)
			fprintf(f, " %.4f %.4f", rs[g].above, rs[g].below);
		fputc('\n', f);
		n++;
	}
	fclose(f);
	return n;
}

static void gp_sweep(FILE *f, const struct corpus *c, const char *kind)
{
	int g;

	fprintf(f, "set output 'sweep-%s.svg'\nset title '%s wakeups at a fixed interval (S6, POWER10)'\n"
		"set xlabel 'wakeup interval (us)'\nset ylabel '%% of idle entries'\n"
		"set logscale x\nunset logscale y\nset yrange [0:*]\nset xrange [*:*]\nset xtics auto\nplot ", kind, kind);
	for (g = 1; g < c->ng; g++)
		fprintf(f, "%s'sweep-%s.dat' using 1:%d with linespoints lc %d dt 1 title '%s above', "
			"'' using 1:%d with linespoints lc %d dt 2 title '%s below'",
			g > 1 ? ", \\\n     " : "", kind, 2 * g, g, c->gov[g]->label,
			2 * g + 1, g, c->gov[g]->label);
	fprintf(f, "\n");
}

static void gp_energy(FILE *f, const struct corpus *c)
{
	int g;

	fprintf(f, "set output 'energy-latency.svg'\nset title 'every scenario on its own platform'\n"
		"set xlabel 'added wakeup latency, mean (us)'\nset ylabel 'idle energy, %% of the yardstick'\n"
		"set logscale x\nset logscale y\nset yrange [*:*]\nset xrange [*:*]\nset xtics auto\nplot ");
	for (g = 0; g < c->ng; g++)
		fprintf(f, "%s'energy-latency.dat' index %d using ($1+0.1):2 with points pt %d ps 0.8 title '%s'",
			g ? ", \\\n     " : "", g, 5 + g, c->gov[g]->label);
	fprintf(f, "\n");
}

static int quartiles(const double *v, int n, double q[5])
{
	double *t = xcalloc(n, sizeof(*t));
	int i;

	memcpy(t, v, n * sizeof(*t));
	for (i = 1; i < n; i++) {
		double x = t[i];
		int j = i;

		for (; j > 0 && t[j - 1] > x; j--)
			t[j] = t[j - 1];
		t[j] = x;
	}
	q[0] = t[0];
	q[1] = t[(n - 1) / 4];
	q[2] = t[(n - 1) / 2];
	q[3] = t[3 * (n - 1) / 4];
	q[4] = t[n - 1];
	free(t);
	return 0;
}

/* Box plots per family and governor: min, quartiles, max over the tables. */
static void corpus_plot(const struct corpus *c, const struct fam_stats *fs,
			const char *dir, FILE *gp, bool miss)
{
	const char *what = miss ? "miss" : "energy";
	char name[64];
	double q[5], w = 0.8 / c->ng;
	FILE *f;
	int fi, g;

	snprintf(name, sizeof(name), "corpus-%s.dat", what);
	f = report_file(dir, name);
	for (g = 0; g < c->ng; g++) {
		fprintf(f, "# %s: x min q1 median q3 max\n", c->gov[g]->label);
		for (fi = 0; fi < fs->nf; fi++) {
			const struct fam_stat *st = &fs->st[fi][g];

			quartiles(miss ? st->miss : st->energy, st->n, q);
			fprintf(f, "%.3f %g %g %g %g %g\n", fi + 1 - 0.4 + w * (g + 0.5),
				q[0], q[1], q[2], q[3], q[4]);
		}
		fprintf(f, "\n\n");
	}
	fclose(f);
	fprintf(gp, "set output 'corpus-%s.svg'\nset title '%s over the %d tables of the corpus, per family (min, quartiles, max)'\n"
		"unset logscale x\nset logscale y\nset yrange [*:*]\nset xrange [0.5:%d.5]\n"
		"set xlabel 'scenario family'\nset ylabel '%s'\nset xtics (",
		what, what, c->np, fs->nf, miss ? "miss, % of entries (+0.01)" :
		"energy, % of the yardstick");
	for (fi = 0; fi < fs->nf; fi++)
		fprintf(gp, "%s'%s' %d", fi ? ", " : "", fs->fam[fi], fi + 1);
	fprintf(gp, ")\nset boxwidth %.3f absolute\nset style fill solid 0.3\nplot ", w * 0.9);
	for (g = 0; g < c->ng; g++)
		fprintf(gp, "%s'corpus-%s.dat' index %d using 1:($3+%s):($2+%s):($6+%s):($5+%s) with candlesticks whiskerbars lc %d title '%s', "
			"'' index %d using 1:($4+%s):($4+%s):($4+%s):($4+%s) with candlesticks lc %d notitle",
			g ? ", \\\n     " : "", what, g, miss ? "0.01" : "0",
			miss ? "0.01" : "0", miss ? "0.01" : "0", miss ? "0.01" : "0",
			g + 1, c->gov[g]->label, g, miss ? "0.01" : "0",
			miss ? "0.01" : "0", miss ? "0.01" : "0", miss ? "0.01" : "0",
			g + 1);
	fprintf(gp, "\n");
}

void write_plot_files(const struct corpus *c, const struct fam_stats *fs,
		      const char *dir)
{
	FILE *f;
	int pipe, timer;

	energy_latency_data(c, dir);
	pipe = sweep_data(c, dir, "pipe");
	timer = sweep_data(c, dir, "timer");
	f = report_file(dir, "plots.gp");
	fprintf(f, "# gnuplot script written by idle-replay report\n"
		"set terminal svg size 960,600 dynamic background rgb 'white'\n"
		"set key outside right\nset grid\n");
	gp_energy(f, c);
	if (fs->nf) {
		corpus_plot(c, fs, dir, f, false);
		corpus_plot(c, fs, dir, f, true);
	}
	if (pipe)
		gp_sweep(f, c, "pipe");
	if (timer)
		gp_sweep(f, c, "timer");
	fclose(f);
}
