// SPDX-License-Identifier: GPL-2.0
/*
 * idle-replay: the strict differential check.  Two governors run on the
 * same timelines, each on its own simulated machine, and must take the same
 * state and tick decision at every step: every scenario on every platform
 * of the corpus, then random tables and timelines (disabled states, latency
 * limits, stopped ticks and odd tables the scenarios do not reach).  Used to
 * prove "no functional change" and, with --events, that trace calls change
 * no decision: B is then a traced build of A, and its trace events must
 * also tell the truth about every decision (events.c).
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "replay.h"
#include "cli.h"
#include "run.h"

/* Checked in B's decisions when set (diff --events). */
static struct event_stats *diff_events;

/* Run @a and @b on one timeline; true if they decided alike.  @log: details. */
static bool diff_one(const struct scenario *s, const struct platform *p,
		     const struct gov_entry *a, const struct gov_entry *b,
		     u64 limit, u64 *decisions, FILE *log)
{
	struct decision_log la = { 0 }, lb = { 0 };
	struct run_opts oa = { .log = &la, .max_decisions = limit };
	struct run_opts ob = { .log = &lb, .max_decisions = limit };
	struct metrics *m = xcalloc(1, sizeof(*m));
	long at;
	char what[128], buf[512];

	run_one(s, p, a, &oa, m);
	run_one(s, p, b, &ob, m);
	*decisions += la.n;
	at = first_divergence(&la, &lb);
	snprintf(what, sizeof(what), "%s on %s", s->name, p->name);
	if (at >= 0 && log) {
		describe_divergence(buf, sizeof(buf), what, a->label, &la,
				    b->label, &lb, at);
		fputs(buf, log);
	}
	if (diff_events)
		events_check(diff_events, what, &lb);
	free(la.d);
	free(lb.d);
	free(m);
	return at < 0;
}

/*
 * The differential on @cases random tables; the number that diverge, and
 * the decisions each governor made in *@decisions if that is not NULL.
 */
u64 random_differential(const struct gov_entry *a, const struct gov_entry *b,
			u64 cases, u64 seed, FILE *log, u64 *decisions)
{
	struct scenario *s = xcalloc(1, sizeof(*s));
	struct platform p;
	u64 k, div = 0, dec = 0;

	s->ctl = xcalloc(RANDOM_CTL_MAX, sizeof(*s->ctl));
	for (k = 0; k < cases; k++) {
		random_case(seed, k, &p, s);
		div += !diff_one(s, &p, a, b, RANDOM_CASE, &dec, div < 5 ? log : NULL);
	}
	if (log)
		fprintf(log, "differential %s vs %s on random tables: %llu cases, %llu decisions each, %llu divergent\n",
			a->label, b->label, (unsigned long long)cases,
			(unsigned long long)dec, (unsigned long long)div);
	if (decisions)
		*decisions = dec;
	free(s->ctl);
	free(s);
	return div;
}

/*
 * The counts of a differential as one tab-separated row under its header,
 * for the programs that use them (scripts/teo series, the trace gate of
 * scripts/teo replay check): the display lines above are for people and
 * may change.  With --events, two more columns: the decisions checked
 * against their trace events and the inconsistent ones.
 */
static void write_counts(const char *path, u64 runs, u64 dec, u64 div,
			 u64 rcases, u64 rdec, u64 rdiv,
			 const struct event_stats *es)
{
	FILE *f = fopen(path, "w");

	if (!f)
		die("cannot write %s: %s", path, strerror(errno));
	fprintf(f, "runs\tdecisions\tdivergent\trandom_cases\trandom_decisions\trandom_divergent%s\n",
		es ? "\tevents_decisions\tevents_inconsistent" : "");
	fprintf(f, "%llu\t%llu\t%llu\t%llu\t%llu\t%llu",
		(unsigned long long)runs, (unsigned long long)dec,
		(unsigned long long)div, (unsigned long long)rcases,
		(unsigned long long)rdec, (unsigned long long)rdiv);
	if (es)
		fprintf(f, "\t%llu\t%llu", (unsigned long long)es->decisions,
			(unsigned long long)es->inconsistent);
	fputc('\n', f);
	if (fclose(f))
		die("cannot write %s: %s", path, strerror(errno));
}

static void pick_pair(const struct cli *c, const struct gov_entry **a,
		      const struct gov_entry **b)
{
	char buf[128], *comma;

	if (!c->diff)
		die("diff needs --diff A,B");
	snprintf(buf, sizeof(buf), "%s", c->diff);
	comma = strchr(buf, ',');
	if (!comma)
		die("--diff wants two governor labels: A,B");
	*comma = 0;
	*a = gov_find(buf);
	*b = gov_find(comma + 1);
	if (!*a || !*b)
		die("--diff %s: unknown governor (see 'idle-replay list')", c->diff);
}

/*
 * Prints the first divergences, then "differential A vs B: R scenario x
 * platform runs, D decisions each, N divergent" and the random-table line;
 * with --out FILE writes the same counts there as a table (write_counts).
 * Exit 0 whether or not they diverge.
 */
int cmd_diff(int argc, char **argv)
{
	struct cli c = cli_parse(argc, argv,
				 "data diff scenario platform decisions seed events out");
	struct event_stats *es = NULL;
	const struct gov_entry *ga, *gb;
	struct scenario *sc;
	struct platform *ps;
	u64 runs = 0, dec = 0, div = 0, rcases, rdec, rdiv;
	int ns, np, i, j;
	struct timespec t0, t1;

	pick_pair(&c, &ga, &gb);
	if (c.events)
		diff_events = es = xcalloc(1, sizeof(*es));
	ns = cli_scenarios(&c, &sc);
	np = cli_platforms(&c, &ps);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	for (i = 0; i < ns; i++) {
		for (j = 0; j < np; j++) {
			runs++;
			div += !diff_one(&sc[i], &ps[j], ga, gb, 0, &dec,
					 div < 5 ? stdout : NULL);
		}
	}
	rcases = c.decisions ? c.decisions / RANDOM_CASE : 1000;
	rdiv = random_differential(ga, gb, rcases, c.seed, stdout, &rdec);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
	if (c.out)
		write_counts(c.out, runs, dec, div, rcases, rdec, rdiv, es);
	printf("differential %s vs %s: %llu scenario x platform runs, %llu decisions each, %llu divergent\n",
	       ga->label, gb->label, (unsigned long long)runs,
	       (unsigned long long)dec, (unsigned long long)div);
	printf("speed (informational): %.2e decisions/s, both governors, logging included\n",
	       2.0 * dec / (t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9));
	if (es) {
		events_print(stdout, gb->label, es);
		diff_events = NULL;
		free(es);
	}
	free(ps);
	scenarios_free(sc, ns);
	return 0;
}

/*
 * The first run in which @b decides otherwise than @a: every scenario on
 * every table in turn, then @cases random cases.  True if one diverges,
 * with its name in @where; @runs counts the runs and cases compared.
 */
bool first_divergent_run(const struct gov_entry *a, const struct gov_entry *b,
			 const struct scenario *sc, int ns,
			 const struct platform *ps, int np, u64 cases, u64 seed,
			 char *where, size_t n, u64 *runs)
{
	struct scenario *s;
	struct platform p;
	u64 dec = 0, k;
	int i, j;

	*runs = 0;
	for (i = 0; i < ns; i++) {
		for (j = 0; j < np; j++) {
			++*runs;
			if (!diff_one(&sc[i], &ps[j], a, b, 0, &dec, NULL)) {
				snprintf(where, n, "%s on %s", sc[i].name, ps[j].name);
				return true;
			}
		}
	}
	s = xcalloc(1, sizeof(*s));
	s->ctl = xcalloc(RANDOM_CTL_MAX, sizeof(*s->ctl));
	for (k = 0; k < cases; k++) {
		++*runs;
		random_case(seed, k, &p, s);
		if (!diff_one(s, &p, a, b, RANDOM_CASE, &dec, NULL)) {
			snprintf(where, n, "random case %llu", (unsigned long long)k);
			break;
		}
	}
	free(s->ctl);
	free(s);
	return k < cases;
}
