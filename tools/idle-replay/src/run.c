// SPDX-License-Identifier: GPL-2.0
/*
 * idle-replay: the corpus pass.  Every selected scenario runs on every
 * platform of the corpus under every selected governor (the oracle first),
 * and each run is reduced to a struct result.  The cells (scenario,
 * platform) are shared out between worker processes; each sends its results
 * back through a temporary file.
 */

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "replay.h"
#include "run.h"

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

/*
 * Energy per ns of CPU time in an open loop (every governor serves the same
 * arrivals), per work item served in a closed one (where the exit latencies
 * decide how much work gets done).
 */
static double energy_rate(const struct metrics *m, bool closed)
{
	if (closed && m->items)
		return m->energy / (double)m->items;
	return m->energy / (double)m->sim_ns;
}

static void derive(struct result *r, const struct metrics *m, bool closed)
{
	u64 use = sum(m->usage), time = sum(m->time_ns);
	int i;

	r->decisions = m->decisions;
	r->items = m->items;
	r->energy_rate = energy_rate(m, closed);
	r->above = pct(sum(m->above), use);
	r->below = pct(sum(m->below), use);
	r->miss = r->above + r->below;
	r->wakeups = m->wakeups;
	r->lat_mean = m->wakeups ? (double)m->lat_sum_ns / m->wakeups / US : 0;
	r->lat_p99 = p99_us(m);
	r->tick_wrong = pct(m->tick_kept_hit + m->tick_stop_early, m->tick_running);
	r->adapt = m->adapt_switches ? (double)m->adapt_entries / m->adapt_switches : -1;
	for (i = 0; i < CPUIDLE_STATE_MAX; i++) {
		r->share[i] = pct(m->time_ns[i], time);
		r->usage[i] = m->usage[i];
		r->time_ns[i] = m->time_ns[i];
		r->above_n[i] = m->above[i];
		r->below_n[i] = m->below[i];
	}
	r->cpu_seconds = m->cpu_seconds;
	r->gov_ns = m->gov_ns;
	r->sleep_calls = m->sleep_calls;
	r->diverged = -1;
}

/* Total variation distance of the time shares, in % (0: same as oracle). */
static double tvd(const struct result *a, const struct result *o)
{
	double d = 0;
	int i;

	for (i = 0; i < CPUIDLE_STATE_MAX; i++)
		d += a->share[i] > o->share[i] ? a->share[i] - o->share[i] :
						 o->share[i] - a->share[i];
	return d / 2;
}

/*
 * How much of window @w's idle time the governor spent shallower than the
 * oracle did: the largest excess, over every depth k, of the governor's
 * share of time in states 0..k over the oracle's (-1: no idle time).
 */
static double shallow_excess(const struct windows *g, const struct windows *o,
			     int w)
{
	u64 tg = sum(g->t[w]), to = sum(o->t[w]), cg = 0, co = 0;
	double best = 0;
	int k;

	if (!tg || !to)
		return -1;
	for (k = 0; k < CPUIDLE_STATE_MAX - 1; k++) {
		cg += g->t[w][k];
		co += o->t[w][k];
		best = max(best, (double)cg / tg - (double)co / to);
	}
	return best;
}

/*
 * The trap detector: the longest run of consecutive windows in which the
 * governor spent at least half of its idle time shallower than the oracle.
 */
static void trap(struct result *r, const struct windows *g,
		 const struct windows *o, u64 duration)
{
	int w, run = 0, best = 0, start = 0;
	u64 len;

	for (w = 0; w < g->n; w++) {
		run = shallow_excess(g, o, w) >= 0.5 ? run + 1 : 0;
		if (run > best) {
			best = run;
			start = w - run + 1;
		}
	}
	/* The last window may be cut by the end of the run. */
	len = min((u64)best * (u64)WINDOW_NS,
		  duration - min(duration, (u64)start * (u64)WINDOW_NS));

	r->trap_s = (double)len / SEC;
	r->trap_start_s = best ? start * (double)WINDOW_NS / SEC : 0;
	r->trap_share = 100.0 * (double)len / (double)duration;
}

bool trapped(const struct result *r, const struct scenario *s)
{
	return r->trap_s >= 1.0 && r->trap_share >= 10;
}

/* @part in % of @whole; NAN if there is no whole to measure against. */
static double pct_of(u64 part, u64 whole)
{
	return whole ? 100.0 * (double)part / (double)whole : NAN;
}

/*
 * Closed loops only (an open loop's work is fixed by its arrivals): work in
 * % of the most any baseline did and of the oracle's (rs[0]).
 */
static void relate_work(struct result *rs, int ng,
			const struct gov_entry *const *gs, bool closed)
{
	u64 base = 0;
	int g;

	for (g = 0; g < ng; g++)
		if (gov_is_baseline(gs[g]))
			base = max(base, rs[g].items);
	for (g = 0; g < ng; g++) {
		rs[g].work_base = closed ? pct_of(rs[g].items, base) : NAN;
		rs[g].work_oracle = closed ? pct_of(rs[g].items, rs[0].items) : NAN;
	}
}

/*
 * The yardstick: the oracle in an open loop; in a closed loop, where the
 * oracle is no lower bound, the best energy and the most work among ours
 * and the baselines (the oracle's own result is then relative to them).
 */
static void relate(struct result *rs, int ng, const struct gov_entry *const *gs,
		   bool closed)
{
	double ref = rs[0].energy_rate;
	u64 items = rs[0].items;
	bool any = false;
	int g;

	relate_work(rs, ng, gs, closed);

	for (g = 1; closed && g < ng; g++) {
		if (!gov_in_reference(gs[g]))
			continue;
		ref = any ? min(ref, rs[g].energy_rate) : rs[g].energy_rate;
		items = any ? max(items, rs[g].items) : rs[g].items;
		any = true;
	}
	for (g = 0; g < ng; g++) {
		rs[g].energy_rel = ref > 0 ? 100.0 * rs[g].energy_rate / ref : 100.0;
		rs[g].work_rel = items ? 100.0 * (double)rs[g].items / (double)items : 100.0;
		rs[g].tvd = tvd(&rs[g], &rs[0]);
	}
}

/* --- the decision differential of two governors ------------------------- */

static bool same_choice(const struct decision *a, const struct decision *b)
{
	return a->idx == b->idx && a->stop_tick == b->stop_tick;
}

/* Index of the first differing decision, or -1 if the logs are equal. */
long first_divergence(const struct decision_log *a, const struct decision_log *b)
{
	size_t i, n = min(a->n, b->n);

	for (i = 0; i < n; i++)
		if (!same_choice(&a->d[i], &b->d[i]))
			return (long)i;
	return a->n == b->n ? -1 : (long)n;
}

/* Describe the first divergence of two logs in @buf. */
void describe_divergence(char *buf, size_t n, const char *what,
			 const char *la, const struct decision_log *a,
			 const char *lb, const struct decision_log *b, long at)
{
	const struct decision *x = &a->d[at], *y = &b->d[at];
	int len;

	if ((size_t)at >= a->n || (size_t)at >= b->n) {
		snprintf(buf, n, "DIVERGENCE %s: %zu vs %zu decisions\n", what,
			 a->n, b->n);
		return;
	}
	len = snprintf(buf, n,
		"DIVERGENCE %s: first at decision %ld of %zu\n"
		"    cpu %d at %.6f ms: last state %d, last residency %llu ns, poll limit hit %d,\n"
		"    tick stopped %d, latency limit %lld ns, disabled mask 0x%x\n",
		what, at, min(a->n, b->n), x->cpu, x->t / 1e6, x->last_state,
		(unsigned long long)x->last_residency, x->poll_limit_hit,
		x->tick_stopped, (long long)x->latency_req, x->disabled);
	if (len < 0 || (size_t)len >= n)
		return;
	snprintf(buf + len, n - len,
		 "    %-10s -> state %d, stop_tick %d (sleep length %lld ns)\n"
		 "    %-10s -> state %d, stop_tick %d (sleep length %lld ns)\n",
		 la, x->idx, x->stop_tick, (long long)x->sleep_length,
		 lb, y->idx, y->stop_tick, (long long)y->sleep_length);
}

/* --- one cell ------------------------------------------------------------ */

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void windows_alloc(struct windows *w, const struct scenario *s)
{
	w->n = (int)((s->duration + WINDOW_NS - 1) / WINDOW_NS);
	w->t = xcalloc(w->n, sizeof(*w->t));
}

/* The governor index of the comparison partners (-1 if absent). */
static void pair_index(const struct corpus *c, int *a, int *b)
{
	int g;

	*a = *b = -1;
	for (g = 0; g < c->ng; g++) {
		if (c->pair[0] && !strcmp(c->gov[g]->label, c->pair[0]))
			*a = g;
		if (c->pair[1] && !strcmp(c->gov[g]->label, c->pair[1]))
			*b = g;
	}
}

/*
 * The decisions of @g for the comparison of a pair, into @log: from a run
 * that charges no cost, so that two governors see the same timeline
 * whatever their own costs are (the comparison is of decisions).
 */
static void pair_log(const struct scenario *s, const struct platform *p,
		     const struct gov_entry *g, struct decision_log *log)
{
	struct run_opts o = { .log = log };
	struct metrics *m = xcalloc(1, sizeof(*m));

	run_one(s, p, g, &o, m);
	free(m);
}

/*
 * Run every governor of @c on scenario @si and platform @pi into @out,
 * each charged its own cost (costs.conf).
 */
void run_cell(const struct corpus *c, int si, int pi, struct result *out)
{
	const struct scenario *s = &c->sc[si];
	struct run_opts o = {
		.debug = getenv("IDLE_REPLAY_DEBUG") != NULL, .costs = true,
	};
	struct windows *win = xcalloc(c->ng, sizeof(*win));
	struct decision_log logs[2] = { { 0 } };
	struct metrics *m = xcalloc(1, sizeof(*m));
	int g, pa, pb;
	long at;

	pair_index(c, &pa, &pb);
	for (g = 0; g < c->ng; g++) {
		struct decision_log *log = g == pa ? &logs[0] : g == pb ? &logs[1] : NULL;
		double t0;

		if (log && gov_costs_anything(c->gov[g])) {
			pair_log(s, &c->ps[pi], c->gov[g], log);
			log = NULL;
		}
		t0 = cpu_now();
		windows_alloc(&win[g], s);
		o.win = &win[g];
		o.log = log;
		oracle_plan_misses = 0;
		run_one(s, &c->ps[pi], c->gov[g], &o, m);
		m->cpu_seconds = cpu_now() - t0;
		memset(&out[g], 0, sizeof(out[g]));
		out[g].s = si;
		out[g].p = pi;
		out[g].g = g;
		derive(&out[g], m, s->closed);
		out[g].plan_misses = oracle_plan_misses;
		trap(&out[g], &win[g], &win[0], s->duration);
	}
	relate(out, c->ng, c->gov, s->closed);
	if (pa >= 0 && pb >= 0) {
		at = first_divergence(&logs[0], &logs[1]);
		out[pa].diverged = at >= 0;
		if (at >= 0) {
			char what[128];

			snprintf(what, sizeof(what), "%s on %s", s->name, c->ps[pi].name);
			describe_divergence(out[pa].divergence, sizeof(out[pa].divergence),
					    what, c->gov[pa]->label, &logs[0],
					    c->gov[pb]->label, &logs[1], at);
		}
	}
	for (g = 0; g < c->ng; g++)
		free(win[g].t);
	free(win);
	free(logs[0].d);
	free(logs[1].d);
	free(m);
}

/* --- the pass, shared out between processes ------------------------------- */

static void worker(const struct corpus *c, int k, int jobs, FILE *f)
{
	struct result *rs = xcalloc(c->ng, sizeof(*rs));
	int cell, n = c->ns * c->np;

	for (cell = k; cell < n; cell += jobs) {
		run_cell(c, cell / c->np, cell % c->np, rs);
		if (fwrite(rs, sizeof(*rs), c->ng, f) != (size_t)c->ng)
			die("worker %d: cannot write its results: %s", k, strerror(errno));
	}
	free(rs);
}

static void collect(struct corpus *c, FILE *f, int k)
{
	struct result r;

	rewind(f);
	while (fread(&r, sizeof(r), 1, f) == 1) {
		if (r.s < 0 || r.s >= c->ns || r.p < 0 || r.p >= c->np ||
		    r.g < 0 || r.g >= c->ng)
			die("worker %d sent a bad result", k);
		*corpus_result(c, r.s, r.p, r.g) = r;
	}
	if (ferror(f))
		die("cannot read the results of worker %d", k);
	fclose(f);
}

void corpus_run(struct corpus *c, int jobs)
{
	FILE *files[64];
	pid_t pids[64];
	int k, status;

	c->res = xcalloc((size_t)c->ns * c->np * c->ng, sizeof(*c->res));
	if (jobs <= 1) {
		for (k = 0; k < c->ns * c->np; k++)
			run_cell(c, k / c->np, k % c->np,
				 corpus_result(c, k / c->np, k % c->np, 0));
		return;
	}
	fflush(NULL);
	for (k = 0; k < jobs; k++) {
		files[k] = tmpfile();
		if (!files[k])
			die("cannot create a temporary file: %s", strerror(errno));
		pids[k] = fork();
		if (pids[k] < 0)
			die("cannot fork: %s", strerror(errno));
		if (!pids[k]) {
			worker(c, k, jobs, files[k]);
			if (fflush(files[k]))
				_exit(1);
			_exit(0);
		}
	}
	for (k = 0; k < jobs; k++) {
		if (waitpid(pids[k], &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			die("worker %d of %d failed", k, jobs);
		collect(c, files[k], k);
	}
}

struct result *corpus_result(const struct corpus *c, int s, int p, int g)
{
	return &c->res[((size_t)s * c->np + p) * c->ng + g];
}

/* Index of the scenario's own platform in the corpus, -1 if absent. */
int corpus_home(const struct corpus *c, int s)
{
	const struct platform *p = platform_find(c->ps, c->np, c->sc[s].platform);

	return p ? (int)(p - c->ps) : -1;
}

int corpus_gov(const struct corpus *c, const struct gov_entry *g)
{
	int i;

	for (i = 0; g && i < c->ng; i++)
		if (c->gov[i] == g)
			return i;
	return -1;
}
