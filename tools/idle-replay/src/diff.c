// SPDX-License-Identifier: GPL-2.0
/*
 * idle-replay: the strict differential check.  Two governors run on the
 * same timelines, each on its own simulated machine, and must take the same
 * state and tick decision at every step: every scenario on every platform
 * of the corpus, then random tables and timelines (disabled states, latency
 * limits, stopped ticks and odd tables the scenarios do not reach).  Used to
 * prove "no functional change" and, with --events, that trace calls change
 * no decision: B is then a traced build of A, and its trace events must
 * also tell the truth about every decision (events.c).  A chain A,B,C,...
 * (the governor after each patch of a series) compares each governor with
 * the next and runs each once.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "replay.h"
#include "cli.h"
#include "run.h"

/* Checked in the second governor's decisions when set (diff --events). */
static struct event_stats *diff_events;

/* The most governors one --diff compares, in a chain. */
#define MAX_CHAIN	64

/*
 * The counts of one pair of a chain: the older one's decisions, the runs
 * in which the newer one decided otherwise.
 */
struct pair_counts {
	u64 dec, div;
};

/*
 * Run each of the @n governors of @chain once on one timeline and compare
 * each one's decisions with the next one's, counting into @pc[k] for the
 * pair (k, k + 1).  Each governor runs once however many pairs it is in,
 * so a chain of n costs n runs, not 2(n - 1).  @log: the first five
 * divergences of each pair.
 */
static void diff_chain_one(const struct scenario *s, const struct platform *p,
			   const struct gov_entry *const *chain, int n,
			   u64 limit, struct pair_counts *pc, FILE *log)
{
	struct decision_log prev = { 0 }, cur;
	struct metrics *m = xcalloc(1, sizeof(*m));
	char what[128], buf[512];
	long at;
	int k;

	snprintf(what, sizeof(what), "%s on %s", s->name, p->name);
	for (k = 0; k < n; k++) {
		struct run_opts o = { .log = &cur, .max_decisions = limit };

		memset(&cur, 0, sizeof(cur));
		run_one(s, p, chain[k], &o, m);
		if (k > 0) {
			pc[k - 1].dec += prev.n;
			at = first_divergence(&prev, &cur);
			if (at >= 0 && log && pc[k - 1].div < 5) {
				describe_divergence(buf, sizeof(buf), what,
						    chain[k - 1]->label, &prev,
						    chain[k]->label, &cur, at);
				fputs(buf, log);
			}
			pc[k - 1].div += at >= 0;
			if (diff_events && k == 1)
				events_check(diff_events, what, &cur);
			free(prev.d);
		}
		prev = cur;
	}
	free(prev.d);
	free(m);
}

/* The same for one pair; true if @a and @b decided alike. */
static bool diff_one(const struct scenario *s, const struct platform *p,
		     const struct gov_entry *a, const struct gov_entry *b,
		     u64 limit, u64 *decisions)
{
	const struct gov_entry *pair[2] = { a, b };
	struct pair_counts pc = { 0 };

	diff_chain_one(s, p, pair, 2, limit, &pc, NULL);
	*decisions += pc.dec;
	return !pc.div;
}

/* The chain on @cases random tables, counting into @pc per pair. */
static void random_chain(const struct gov_entry *const *chain, int n,
			 u64 cases, u64 seed, struct pair_counts *pc, FILE *log)
{
	struct scenario *s = xcalloc(1, sizeof(*s));
	struct platform p;
	u64 k;

	s->ctl = xcalloc(RANDOM_CTL_MAX, sizeof(*s->ctl));
	for (k = 0; k < cases; k++) {
		random_case(seed, k, &p, s);
		diff_chain_one(s, &p, chain, n, RANDOM_CASE, pc, log);
	}
	free(s->ctl);
	free(s);
}

/*
 * The differential on @cases random tables; the number that diverge, and
 * the decisions each governor made in *@decisions if that is not NULL.
 */
u64 random_differential(const struct gov_entry *a, const struct gov_entry *b,
			u64 cases, u64 seed, FILE *log, u64 *decisions)
{
	const struct gov_entry *pair[2] = { a, b };
	struct pair_counts pc = { 0 };

	random_chain(pair, 2, cases, seed, &pc, log);
	if (log)
		fprintf(log, "differential %s vs %s on random tables: %llu cases, %llu decisions each, %llu divergent\n",
			a->label, b->label, (unsigned long long)cases,
			(unsigned long long)pc.dec, (unsigned long long)pc.div);
	if (decisions)
		*decisions = pc.dec;
	return pc.div;
}

/*
 * The counts of a differential as a tab-separated table, one row per pair
 * of the chain in its order, for the programs that use them (scripts/teo
 * replay diff and series, the trace gate of scripts/teo replay check): the
 * display lines are for people and may change.  With --events (one pair),
 * two more columns: the decisions checked against their trace events and
 * the inconsistent ones.
 */
static void write_counts(const char *path, int pairs, u64 runs,
			 const struct pair_counts *sc, u64 rcases,
			 const struct pair_counts *rnd,
			 const struct event_stats *es)
{
	FILE *f = fopen(path, "w");
	int k;

	if (!f)
		die("cannot write %s: %s", path, strerror(errno));
	fprintf(f, "runs\tdecisions\tdivergent\trandom_cases\trandom_decisions\trandom_divergent%s\n",
		es ? "\tevents_decisions\tevents_inconsistent" : "");
	for (k = 0; k < pairs; k++) {
		fprintf(f, "%llu\t%llu\t%llu\t%llu\t%llu\t%llu",
			(unsigned long long)runs, (unsigned long long)sc[k].dec,
			(unsigned long long)sc[k].div, (unsigned long long)rcases,
			(unsigned long long)rnd[k].dec,
			(unsigned long long)rnd[k].div);
		if (es)
			fprintf(f, "\t%llu\t%llu", (unsigned long long)es->decisions,
				(unsigned long long)es->inconsistent);
		fputc('\n', f);
	}
	if (fclose(f))
		die("cannot write %s: %s", path, strerror(errno));
}

/* The governors --diff names, A,B or a chain A,B,C,...; their number. */
static int pick_chain(const struct cli *c, const struct gov_entry **chain)
{
	char buf[MAX_CHAIN * 32], *label, *rest;
	int n = 0;

	if (!c->diff)
		die("diff needs --diff A,B");
	if (strlen(c->diff) >= sizeof(buf))
		die("--diff: a chain of at most %d governors", MAX_CHAIN);
	snprintf(buf, sizeof(buf), "%s", c->diff);
	for (rest = buf; (label = strsep(&rest, ","));) {
		if (n == MAX_CHAIN)
			die("--diff: a chain of at most %d governors", MAX_CHAIN);
		chain[n] = gov_find(label);
		if (!chain[n])
			die("--diff %s: unknown governor '%s' (see 'idle-replay list')",
			    c->diff, label);
		n++;
	}
	if (n < 2)
		die("--diff wants at least two governor labels: A,B");
	return n;
}

/*
 * Compares each governor of the --diff chain with the next: prints the
 * first divergences, then per pair "differential A vs B: R scenario x
 * platform runs, D decisions each, N divergent" and the random-table
 * line; with --out FILE writes the same counts there as a table
 * (write_counts).  Exit 0 whether or not they diverge.
 */
int cmd_diff(int argc, char **argv)
{
	struct cli c = cli_parse(argc, argv,
				 "data diff scenario platform decisions seed events out");
	const struct gov_entry *chain[MAX_CHAIN];
	struct pair_counts sc[MAX_CHAIN] = { 0 }, rnd[MAX_CHAIN] = { 0 };
	struct event_stats *es = NULL;
	struct scenario *scs;
	struct platform *ps;
	u64 runs = 0, dec = 0, rcases;
	int n, ns, np, i, j, k;
	struct timespec t0, t1;

	n = pick_chain(&c, chain);
	if (c.events && n != 2)
		die("--events checks one pair: --diff A,B");
	if (c.events)
		diff_events = es = xcalloc(1, sizeof(*es));
	ns = cli_scenarios(&c, &scs);
	np = cli_platforms(&c, &ps);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	for (i = 0; i < ns; i++) {
		for (j = 0; j < np; j++) {
			runs++;
			diff_chain_one(&scs[i], &ps[j], chain, n, 0, sc, stdout);
		}
	}
	rcases = c.decisions ? c.decisions / RANDOM_CASE : 1000;
	random_chain(chain, n, rcases, c.seed, rnd, stdout);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
	if (c.out)
		write_counts(c.out, n - 1, runs, sc, rcases, rnd, es);
	for (k = 0; k < n - 1; k++) {
		printf("differential %s vs %s on random tables: %llu cases, %llu decisions each, %llu divergent\n",
		       chain[k]->label, chain[k + 1]->label,
		       (unsigned long long)rcases,
		       (unsigned long long)rnd[k].dec,
		       (unsigned long long)rnd[k].div);
		printf("differential %s vs %s: %llu scenario x platform runs, %llu decisions each, %llu divergent\n",
		       chain[k]->label, chain[k + 1]->label,
		       (unsigned long long)runs, (unsigned long long)sc[k].dec,
		       (unsigned long long)sc[k].div);
		dec += sc[k].dec + rnd[k].dec;
	}
	printf("speed (informational): %.2e decisions/s, all %d governors, logging included\n",
	       (double)n / (n - 1) * dec /
	       (t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9), n);
	if (es) {
		events_print(stdout, chain[1]->label, es);
		diff_events = NULL;
		free(es);
	}
	free(ps);
	scenarios_free(scs, ns);
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
			if (!diff_one(&sc[i], &ps[j], a, b, 0, &dec)) {
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
		if (!diff_one(s, &p, a, b, RANDOM_CASE, &dec)) {
			snprintf(where, n, "random case %llu", (unsigned long long)k);
			break;
		}
	}
	free(s->ctl);
	free(s);
	return k < cases;
}
