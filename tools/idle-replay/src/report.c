// SPDX-License-Identifier: GPL-2.0
/*
 * idle-replay: the report (report.md, results.tsv and the plot files), and
 * the check command that evaluates the same gates without writing a report.
 */

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "replay.h"
#include "cli.h"
#include "report.h"

/* --- tables -------------------------------------------------------------- */

static void share(FILE *f, const struct corpus *c, const struct result *r)
{
	const struct platform *p = &c->ps[r->p];
	const char *sep = "";
	int i;

	for (i = 0; i < p->drv.state_count; i++) {
		if (r->share[i] < 0.5)
			continue;
		fprintf(f, "%s%s %.0f%%", sep, p->names[i], r->share[i]);
		sep = " ";
	}
}

void table_head(FILE *f)
{
	fprintf(f, "| scenario | governor | energy %% | work done %% | miss %% | above %% | below %% | added latency mean / p99 (us) | wrong tick %% | adapt (entries) | TVD %% | trap (s) | time share per state |\n");
	fprintf(f, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
}

void table_row(FILE *f, const struct corpus *c, const struct result *r)
{
	const struct scenario *s = &c->sc[r->s];

	fprintf(f, "| %s%s | %s | %.1f | %.1f | %.2f | %.2f | %.2f | ",
		s->name, s->closed ? "*" : "", c->gov[r->g]->label, r->energy_rel,
		r->work_rel, r->miss, r->above, r->below);
	/* No wakeup brought work: there is no latency to show. */
	if (r->wakeups)
		fprintf(f, "%.1f / %.0f", r->lat_mean, r->lat_p99);
	else
		fprintf(f, "- / -");
	fprintf(f, " | %.1f |", r->tick_wrong);
	if (r->adapt < 0)
		fprintf(f, " - |");
	else
		fprintf(f, " %.1f |", r->adapt);
	fprintf(f, " %.1f | %.1f | ", r->tvd, r->trap_s);
	share(f, c, r);
	fprintf(f, " |\n");
}

static void gov_head(FILE *f, const char *lead, const char *rule,
		     const struct corpus *c, int from, const char *cells)
{
	int g;

	fprintf(f, "| %s |", lead);
	for (g = from; g < c->ng; g++)
		fprintf(f, " %s %s |", c->gov[g]->label, cells);
	fprintf(f, "\n|%s", rule);
	for (g = from; g < c->ng; g++)
		fprintf(f, "---:|");
	fputc('\n', f);
}

static void compact_row(FILE *f, const struct corpus *c, const struct result *rs)
{
	const struct scenario *s = &c->sc[rs->s];
	int g;

	fprintf(f, "| %s%s |", s->name, s->closed ? "*" : "");
	for (g = 0; g < c->ng; g++)
		fprintf(f, " %.1f / %.2f / %.1f / %.1f |", rs[g].energy_rel,
			rs[g].miss, rs[g].lat_mean, rs[g].work_rel);
	fputc('\n', f);
}

static void sweep_row(FILE *f, const struct corpus *c, const struct result *rs)
{
	const struct scenario *s = &c->sc[rs->s];
	int g;

	fprintf(f, "| %s | %u |", strstr(s->name, "pipe") ? "pipe" : "timer",
		s->sweep_us);
	for (g = 1; g < c->ng; g++)
		fprintf(f, " %.2f / %.2f |", rs[g].above, rs[g].below);
	fputc('\n', f);
}

/* --- verdicts ------------------------------------------------------------ */

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

const char *compare_word(int cmp)
{
	static const char *const word[] = { "better than", "comparable to",
					    "worse than", "mixed against" };

	return word[cmp + 1];
}

static bool same_result(const struct result *a, const struct result *b)
{
	return a->decisions == b->decisions && a->energy_rate == b->energy_rate &&
	       !memcmp(a->share, b->share, sizeof(a->share)) && a->miss == b->miss;
}

static void verdict(FILE *f, const struct corpus *c, const struct result *rs)
{
	int ours = corpus_gov(c, gov_by_role(ROLE_OURS, NULL)), g;
	const char *sep = ": ";

	if (ours < 0)
		return;
	fprintf(f, "- **%s** (teo %.1f %% / miss %.2f %%)", c->sc[rs->s].name,
		rs[ours].energy_rel, rs[ours].miss);
	for (g = 0; g < c->ng; g++) {
		if (!gov_is_baseline(c->gov[g]))
			continue;
		fprintf(f, "%steo %s %s", sep,
			same_result(&rs[ours], &rs[g]) ? "identical to" :
			compare_word(compare(&rs[ours], &rs[g])), c->gov[g]->label);
		sep = "; ";
	}
	fprintf(f, ".\n");
}

/* --- the report ---------------------------------------------------------- */

static void family_home(FILE *f, const struct corpus *c, const char *fam)
{
	int s, n = 0, home = -1;

	for (s = 0; s < c->ns; s++) {
		if (strcmp(c->sc[s].family, fam))
			continue;
		n++;
		if (home < 0)
			home = corpus_home(c, s);
	}
	if (home < 0) {
		fprintf(f, "The family's own platform is not in the corpus.\n");
		return;
	}
	fprintf(f, "On its own platform, %s:\n\n", c->ps[home].title);
	if (!strcmp(fam, "S6"))
		gov_head(f, "wakeup | interval (us)", "---|---:|", c, 1,
			 "above % / below %");
	else if (n > 3)
		gov_head(f, "scenario", "---|", c, 0,
			 "energy % / miss % / lat us / work %");
	else
		table_head(f);
	for (s = 0; s < c->ns; s++) {
		const struct result *rs;
		int p = corpus_home(c, s), g;

		if (strcmp(c->sc[s].family, fam) || p < 0)
			continue;
		rs = corpus_result(c, s, p, 0);
		if (!strcmp(fam, "S6"))
			sweep_row(f, c, rs);
		else if (n > 3)
			compact_row(f, c, rs);
		else
			for (g = 0; g < c->ng; g++)
				table_row(f, c, &rs[g]);
	}
	fputc('\n', f);
	for (s = 0; s < c->ns; s++)
		if (!strcmp(c->sc[s].family, fam) && corpus_home(c, s) >= 0)
			verdict(f, c, corpus_result(c, s, corpus_home(c, s), 0));
}

static void family_section(FILE *f, const struct corpus *c,
			   const struct fam_stats *fs, int fi)
{
	const char *fam = fs->fam[fi];

	fprintf(f, "\n## %s: %s\n\n", fam, family_title(fam));
	if (fs->closed[fi])
		fprintf(f, "Closed loop (marked *): energy and work are in %% of the best of ours and\n"
			"the baselines, not of the oracle (which is no lower bound there).\n\n");
	family_table(f, c, fs, fi);
	fputc('\n', f);
	family_home(f, c, fam);
	distribution_table(f, c, fs, fi);
	versus_section(f, c, fs, fi);
}

static void intro(FILE *f, const struct corpus *c)
{
	int g;

	fprintf(f, "# idle-replay report\n\n");
	fprintf(f, "Simulated idle timelines replayed through unmodified governor sources; the\n"
		"model, the metrics and how to read this page are in `tools/idle-replay/README`.\n"
		"Energy is idle energy in %% of the yardstick: the oracle in open-loop\n"
		"scenarios (a lower bound there, checked by the oracle gate), the best of ours\n"
		"and the baselines in closed-loop ones (marked *, per work item).\n"
		"Miss = above + below (the cpuidle core's counters, %% of entries), TVD is\n"
		"the total variation distance of the time shares per state to the oracle's,\n"
		"trap is the longest stretch in which at least half of the idle time was\n"
		"spent shallower than the oracle (windows of %.1f s).\n\nGovernors:\n\n",
		(double)WINDOW_NS / SEC);
	for (g = 0; g < c->ng; g++) {
		static const char *const role[] = {
			"the lab's oracle", "ours", "baseline, base tree",
			"baseline, mainline tree", "extra",
			"ours with its trace events recording",
			"ours with one rule reverted",
			"a reference policy of the lab, never a baseline"
		};

		fprintf(f, "- `%s`: %s (%s)\n", c->gov[g]->label,
			role[c->gov[g]->role], c->gov[g]->source);
	}
}

/* Everything the report, the check and the targets share. */
struct evaluation {
	struct corpus c;
	struct fam_stats fs;
	struct gate_conf gc;
	struct known_misses km;
	bool has_known;
	struct miss_tally tally;
	struct intended *d;
	int nd;
	u64 random_div;
};

struct gate_results {
	int oracle, targets, regression, intended;
};

static void write_report(FILE *f, struct evaluation *ev, struct gate_results *gr)
{
	const struct corpus *c = &ev->c;
	const struct fam_stats *fs = &ev->fs;
	const struct intended *d = ev->d;
	int fi, nd = ev->nd;
	u64 random_div = ev->random_div;

	intro(f, c);
	throughput_sections(f, c, fs, ev->gc.has_work ? ev->gc.work_pct : NAN);
	gr->targets = targets_section(f, c, fs, ev->has_known ? &ev->km : NULL,
				      NULL);
	gr->regression = regression_gate(f, c, fs, &ev->gc,
					 ev->has_known ? &ev->km : NULL, &ev->tally);
	work_section(f, &ev->tally);
	gr->oracle = oracle_gate(f, c);
	gr->intended = intended_section(f, c, d, nd, random_div);
	trap_section(f, c);
	seed001_section(f, c, fs);
	seed_directions(f, c);
	for (fi = 0; fi < fs->nf; fi++)
		family_section(f, c, fs, fi);
	corpus_section(f, c);
	fprintf(f, "\n## Plots\n\n![energy over the corpus](corpus-energy.svg)\n\n"
		"![miss over the corpus](corpus-miss.svg)\n\n"
		"![energy vs added latency](energy-latency.svg)\n");
	for (fi = 0; fi < fs->nf; fi++)
		if (!strcmp(fs->fam[fi], "S6"))
			fprintf(f, "\n![pipe wakeups: above/below vs interval](sweep-pipe.svg)\n\n"
				"![timer wakeups: above/below vs interval](sweep-timer.svg)\n");
	speed_section(f, c);
}

/* --- the commands -------------------------------------------------------- */

static void corpus_govs(struct corpus *c, const struct cli *cl)
{
	int g;

	c->ng = govs_always(c->gov);
	for (g = 0; g < cl->ngov; g++)
		if (!gov_always(cl->gov[g]))
			c->gov[c->ng++] = cl->gov[g];
}

/* Runs of ours and the base tree's teo are compared decision by decision. */
static void corpus_setup(struct corpus *c, const struct cli *cl)
{
	const struct gov_entry *ours = gov_by_role(ROLE_OURS, NULL);
	const struct gov_entry *base = gov_by_role(ROLE_BASE, "teo");

	corpus_govs(c, cl);
	c->ns = cli_scenarios(cl, &c->sc);
	c->np = cli_platforms(cl, &c->ps);
	if (ours && base) {
		c->pair[0] = ours->label;
		c->pair[1] = base->label;
	}
}

/* The corpus pass, the family statistics and what the gates read. */
static struct evaluation *evaluate(const struct cli *cl)
{
	struct evaluation *ev = xcalloc(1, sizeof(*ev));
	const struct gov_entry *ours, *base = gov_by_role(ROLE_BASE, "teo");

	if (cl->gates && gates_load(cl->gates, &ev->gc))
		die("%s: bad regression gate file (see above)", cl->gates);
	if (cl->known) {
		if (known_misses_load(cl->known, &ev->km))
			die("%s: bad documented-misses file (see above)", cl->known);
		ev->has_known = true;
	}
	if (cl->ours)
		gov_judge_as_ours(cl->ours);
	ours = gov_by_role(ROLE_OURS, NULL);
	if (cl->intended) {
		ev->nd = intended_load(cl->intended, cl->kunit ? cl->kunit :
				       "drivers/cpuidle/governors/tests/teo_kunit.c",
				       &ev->d);
		if (ev->nd < 0)
			die("%s: bad intended-differences file (see above)", cl->intended);
	}
	corpus_setup(&ev->c, cl);
	ev->tally.all_tables = !cl->platform;
	corpus_run(&ev->c, (int)cl->jobs);
	fam_stats_build(&ev->c, ev->gc.has_work ? ev->gc.work_pct : NAN, &ev->fs);
	if (cl->intended && ours && base)
		ev->random_div = random_differential(ours, base, cl->decisions ?
						     cl->decisions / RANDOM_CASE : 1000,
						     cl->seed, NULL, NULL);
	return ev;
}

static void evaluation_free(struct evaluation *ev)
{
	fam_stats_free(&ev->fs);
	known_misses_free(&ev->km);
	free(ev->d);
	free(ev->c.res);
	free(ev->c.ps);
	scenarios_free(ev->c.sc, ev->c.ns);
	free(ev);
}

/* DIR/families.tsv, from the statistics the report shows. */
static void families_tsv_at(const char *dir, const struct evaluation *ev)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/families.tsv", dir);
	families_tsv(path, &ev->c, &ev->fs,
		     ev->gc.has_work ? ev->gc.work_pct : NAN);
}

/*
 * The --out folder this run created, removed again if a bad input stops it;
 * by this process only, not by a replay job forked from it.
 */
static const char *created_out;
static pid_t created_by;

static void remove_created_out(void)
{
	if (created_out && getpid() == created_by)
		rmdir(created_out);
}

/*
 * Create the --out folder before the replay, which takes minutes, so that
 * one that cannot be created stops the run at once; but bad input found
 * while the corpus is set up must leave nothing behind, so a folder made
 * here goes again unless the replay got as far as writing into it.
 */
static void make_out_folder(const char *out)
{
	if (!mkdir(out, 0777)) {
		created_out = out;
		created_by = getpid();
		atexit(remove_created_out);
	} else if (errno != EEXIST) {
		die("cannot create %s: %s", out, strerror(errno));
	}
}

int cmd_report(int argc, char **argv)
{
	struct cli cl = cli_parse(argc, argv,
		"data out gov scenario platform jobs gates intended kunit seed known-misses ours");
	struct evaluation *ev;
	struct gate_results gr;
	FILE *f;

	if (!cl.out)
		die("report needs --out DIR");
	make_out_folder(cl.out);
	ev = evaluate(&cl);
	created_out = NULL;
	ev->tally.draft = report_file(cl.out, "misses.tsv");
	misses_tsv_head(ev->tally.draft);
	f = report_file(cl.out, "report.md");
	write_report(f, ev, &gr);
	fclose(f);
	fclose(ev->tally.draft);
	f = report_file(cl.out, "results.tsv");
	write_tsv(f, &ev->c);
	fclose(f);
	f = report_file(cl.out, "lockins.tsv");
	lockins_tsv(f, &ev->c);
	fclose(f);
	f = report_file(cl.out, "tables.tsv");
	platforms_write_tsv(f, ev->c.ps, ev->c.np);
	fclose(f);
	write_plot_files(&ev->c, &ev->fs, cl.out);
	families_tsv_at(cl.out, ev);
	printf("wrote %s/report.md, results.tsv, families.tsv, lockins.tsv and the plot data\n",
	       cl.out);
	evaluation_free(ev);
	return 0;
}

/* The first divergences of ours from the base teo, for the check's log. */
static void show_divergences(const struct corpus *c, int most)
{
	int ours = corpus_gov(c, gov_by_role(ROLE_OURS, NULL)), s, p;

	for (s = 0; ours >= 0 && s < c->ns; s++) {
		for (p = 0; p < c->np; p++) {
			const struct result *r = corpus_result(c, s, p, ours);

			if (r->diverged > 0 && most-- > 0)
				fputs(r->divergence, stdout);
		}
	}
}

/* The check's last line: how many gates failed, and what the targets did. */
static void gates_line(int failed, const struct cli *cl,
		       const struct target_tally *tt)
{
	printf("\ngates: %d of %d failed", failed,
	       2 + !!cl->intended + !!(cl->intended && cl->mutants) + cl->targets);
	if (cl->targets)
		printf(" (targets included: %d of %d missed, %d of them listed)\n",
		       tt->missed, tt->evaluated, tt->listed);
	else
		printf(" (targets reported, not gated)\n");
}

/*
 * The gates: the oracle gate, the regression gate against every baseline,
 * the intended differences, and with --targets the targets, where each
 * missed family target must be listed in the documented misses.  The
 * sections go to stdout; the exit status says whether a gate failed.
 */
int cmd_check(int argc, char **argv)
{
	struct cli cl = cli_parse(argc, argv,
		"data gov scenario platform jobs gates intended kunit seed targets known-misses draft-misses ours mutants decisions");
	struct evaluation *ev = evaluate(&cl);
	const struct known_misses *km = ev->has_known ? &ev->km : NULL;
	struct target_tally tt = { 0 };
	int failed = 0;

	if (cl.draft) {
		ev->tally.draft = fopen(cl.draft, "w");
		if (!ev->tally.draft)
			die("cannot write %s: %s", cl.draft, strerror(errno));
		misses_tsv_head(ev->tally.draft);
	}
	show_divergences(&ev->c, 5);
	failed += oracle_gate(stdout, &ev->c) ? 1 : 0;
	failed += regression_gate(stdout, &ev->c, &ev->fs, &ev->gc,
				  ev->has_known ? &ev->km : NULL, &ev->tally) ? 1 : 0;
	if (ev->tally.draft && fclose(ev->tally.draft))
		die("cannot write %s: %s", cl.draft, strerror(errno));
	if (cl.intended)
		failed += intended_section(stdout, &ev->c, ev->d, ev->nd,
					   ev->random_div) ? 1 : 0;
	if (cl.intended && cl.mutants)
		failed += mutants_gate(stdout, &ev->c, ev->d, ev->nd, cl.mutants,
				       cl.decisions ? cl.decisions / 2000 : 1000,
				       cl.seed) ? 1 : 0;
	targets_section(stdout, &ev->c, &ev->fs, km, NULL);
	if (cl.targets)
		failed += targets_gate(stdout, &ev->c, &ev->fs, km, &tt) ? 1 : 0;
	gates_line(failed, &cl, &tt);
	evaluation_free(ev);
	return failed ? 1 : 0;
}

/* The targets alone: exit 1 if any is missed. */
int cmd_targets(int argc, char **argv)
{
	struct cli cl = cli_parse(argc, argv, "data gov scenario platform jobs seed ours tsv");
	struct evaluation *ev = evaluate(&cl);
	int missed = targets_section(stdout, &ev->c, &ev->fs, NULL, cl.tsv);

	evaluation_free(ev);
	return missed ? 1 : 0;
}
