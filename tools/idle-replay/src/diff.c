// SPDX-License-Identifier: GPL-2.0
/*
 * idle-replay: the differential check (two governors must take the same
 * decision at every step) and the regression gate (our teo's energy and
 * miss ratio against the base tree's), over every scenario on every
 * platform.
 */

#include <stdlib.h>
#include <time.h>

#include "replay.h"
#include "cli.h"

/* Regression gate tolerances, relative energy and absolute miss ratio. */
#define GATE_ENERGY	0.01
#define GATE_MISS	0.005

/* Decisions per random case of the differential check. */
#define RANDOM_CASE	2000

struct check_totals {
	u64 runs, decisions, divergent, gate_failed;
};

static u64 random_divergent;

static void print_inputs(const struct decision *d)
{
	printf("    cpu %d at %.6f ms: last state %d, last residency %llu ns, poll limit hit %d,\n"
	       "    tick stopped %d, latency limit %lld ns, disabled mask 0x%x\n",
	       d->cpu, d->t / 1e6, d->last_state,
	       (unsigned long long)d->last_residency, d->poll_limit_hit,
	       d->tick_stopped, (long long)d->latency_req, d->disabled);
}

static void print_choice(const char *gov, const struct decision *d)
{
	printf("    %-10s -> state %d, stop_tick %d (sleep length %lld ns, delta tick %lld ns; -1: not queried)\n",
	       gov, d->idx, d->stop_tick, (long long)d->sleep_length,
	       (long long)d->delta_tick);
}

static bool same_choice(const struct decision *a, const struct decision *b)
{
	return a->idx == b->idx && a->stop_tick == b->stop_tick;
}

static void report_divergence(const struct scenario *s, const struct platform *p,
			      const struct gov_entry *ga, const struct gov_entry *gb,
			      const struct decision_log *la,
			      const struct decision_log *lb, size_t i)
{
	size_t k = i > 3 ? i - 3 : 0;

	printf("DIVERGENCE %s on %s: first at decision %zu of %zu\n", s->name,
	       p->name, i, min(la->n, lb->n));
	print_inputs(&la->d[i]);
	print_choice(ga->label, &la->d[i]);
	print_choice(gb->label, &lb->d[i]);
	printf("    decisions before it (both):\n");
	for (; k < i; k++)
		printf("      #%zu cpu %d t=%.6f ms -> state %d stop %d, sleep length %lld\n",
		       k, la->d[k].cpu, la->d[k].t / 1e6, la->d[k].idx,
		       la->d[k].stop_tick, (long long)la->d[k].sleep_length);
}

static bool compare_logs(const struct decision_log *la,
			 const struct decision_log *lb, size_t *at)
{
	size_t i, n = min(la->n, lb->n);

	for (i = 0; i < n; i++) {
		if (!same_choice(&la->d[i], &lb->d[i])) {
			*at = i;
			return false;
		}
	}
	*at = n;
	return la->n == lb->n;
}

static double miss_ratio(const struct metrics *m)
{
	u64 use = 0, miss = 0;
	int i;

	for (i = 0; i < CPUIDLE_STATE_MAX; i++) {
		use += m->usage[i];
		miss += m->above[i] + m->below[i];
	}
	return use ? (double)miss / (double)use : 0;
}

static bool gate(const struct scenario *s, const struct platform *p,
		 const struct metrics *ma, const struct metrics *mb)
{
	double ea = ma->energy / ma->sim_ns, eb = mb->energy / mb->sim_ns;
	double xa = miss_ratio(ma), xb = miss_ratio(mb);

	if (ea <= eb * (1 + GATE_ENERGY) + 1e-12 && xa <= xb + GATE_MISS)
		return true;
	printf("GATE %s on %s: energy %.4g vs %.4g (x%.4f), miss ratio %.4f vs %.4f\n",
	       s->name, p->name, ea, eb, eb > 0 ? ea / eb : 0, xa, xb);
	return false;
}

static void check_one(const struct scenario *s, const struct platform *p,
		      const struct gov_entry *ga, const struct gov_entry *gb,
		      struct check_totals *t, u64 limit)
{
	struct decision_log la = { 0 }, lb = { 0 };
	struct run_opts oa = { .log = &la, .max_decisions = limit };
	struct run_opts ob = { .log = &lb, .max_decisions = limit };
	struct metrics *ma = xcalloc(2, sizeof(*ma)), *mb = ma + 1;
	size_t at;

	run_one(s, p, ga, &oa, ma);
	run_one(s, p, gb, &ob, mb);
	t->runs++;
	t->decisions += la.n;
	if (!compare_logs(&la, &lb, &at)) {
		t->divergent++;
		if (at < min(la.n, lb.n))
			report_divergence(s, p, ga, gb, &la, &lb, at);
		else
			printf("DIVERGENCE %s on %s: %zu vs %zu decisions\n",
			       s->name, p->name, la.n, lb.n);
	}
	if (!limit && !gate(s, p, ma, mb))
		t->gate_failed++;
	free(la.d);
	free(lb.d);
	free(ma);
}

static void pick_pair(const struct cli *c, const struct gov_entry **a,
		      const struct gov_entry **b)
{
	char buf[128], *comma;

	snprintf(buf, sizeof(buf), "%s", c->diff ? c->diff : "teo,teo-6.12");
	comma = strchr(buf, ',');
	if (!comma)
		die("--diff wants two governor labels: A,B");
	*comma = 0;
	*a = gov_find(buf);
	*b = gov_find(comma + 1);
	if (!*a || !*b)
		die("--diff %s: unknown governor", c->diff);
}

/*
 * The same comparison on the contract check's random tables and timelines:
 * disabled states, latency limits, stopped ticks and odd tables that the
 * scenarios do not reach.
 */
static void check_random(const struct cli *c, const struct gov_entry *ga,
			 const struct gov_entry *gb)
{
	struct scenario *s = xcalloc(1, sizeof(*s));
	struct check_totals t = { 0 };
	struct platform p;
	u64 k, cases = c->decisions ? c->decisions / RANDOM_CASE : 1000;

	s->ctl = xcalloc(RANDOM_CTL_MAX, sizeof(*s->ctl));
	for (k = 0; k < cases; k++) {
		random_case(c->seed, k, &p, s);
		check_one(s, &p, ga, gb, &t, RANDOM_CASE);
	}
	printf("differential %s vs %s on random tables: %llu cases, %llu decisions each, %llu divergent\n",
	       ga->label, gb->label, (unsigned long long)t.runs,
	       (unsigned long long)t.decisions, (unsigned long long)t.divergent);
	random_divergent = t.divergent;
	free(s->ctl);
	free(s);
}

int cmd_check(int argc, char **argv)
{
	struct cli c = cli_parse(argc, argv, "data diff scenario platform decisions seed");
	const struct gov_entry *ga, *gb;
	struct check_totals t = { 0 };
	struct scenario *sc;
	struct platform *ps;
	int ns = scenarios_build(&sc), np = cli_platforms(&c, &ps), i, j;
	struct timespec t0, t1;

	pick_pair(&c, &ga, &gb);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	for (i = 0; i < ns; i++) {
		if (!cli_scenario_wanted(&c, &sc[i]))
			continue;
		for (j = 0; j < np; j++)
			check_one(&sc[i], &ps[j], ga, gb, &t, 0);
	}
	check_random(&c, ga, gb);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
	printf("differential %s vs %s: %llu scenario x platform runs, %llu decisions each, %llu divergent\n",
	       ga->label, gb->label, (unsigned long long)t.runs,
	       (unsigned long long)t.decisions, (unsigned long long)t.divergent);
	printf("speed (informational): %.2e decisions/s, both governors, logging included\n",
	       2.0 * t.decisions / (t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9));
	printf("regression gate (%s energy <= %s energy x %.2f, miss ratio <= +%.3f): %llu of %llu runs fail\n",
	       ga->label, gb->label, 1 + GATE_ENERGY, GATE_MISS,
	       (unsigned long long)t.gate_failed, (unsigned long long)t.runs);
	return t.divergent || t.gate_failed || random_divergent;
}
