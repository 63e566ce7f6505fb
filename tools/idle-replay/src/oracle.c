// SPDX-License-Identifier: GPL-2.0
/*
 * idle-replay: the oracle, a governor that knows the future.
 *
 * The engine charges an idle period in state i its entry overhead, its power
 * until the wakeup and the exit power during the exit latency (platform.c).  The oracle may take the
 * states any governor may take: the enabled ones within the latency limit,
 * or, when none is within it, any enabled state and state 0 (what the
 * governors fall back to, contract notes N1 and N2).
 *
 * Open loop (the arrivals do not depend on the decisions): the cheapest
 * state for one period is not always the cheapest choice, because a
 * state's exit latency delays the work and with it every later idle period
 * (and may swallow arrivals that come during the exit).  So at its first
 * decision on a CPU the oracle lists every arrival still to come and finds,
 * by dynamic programming over the idle entries the CPU can reach (each one
 * is fixed by the time it happens), the decisions of least total energy to
 * the end of the run; it then follows that plan.  No governor can use less
 * energy on that timeline, and the oracle gate checks it.
 *
 * Closed loop (chained or ring arrivals): the next arrival depends on when
 * the CPU finished its work, so there is no fixed timeline to plan over.
 * The oracle prices each state over the period that ends at the next
 * arrival (a polling state up to its time limit, then the cheapest halting
 * state) and takes the cheapest; the report compares closed loops against
 * the best governor instead.
 *
 * The tick never ends an oracle's idle period: the oracle lets the tick
 * stop whenever it would come before the next arrival, and the tick code
 * refuses only when a timer comes before the tick anyway.
 */

#include <math.h>
#include <stdlib.h>

#include "replay.h"

u64 oracle_plan_misses;

/* --- what the oracle may take at a given time ----------------------------- */

/* Disabled-state mask and latency limit from time @t on. */
struct limits {
	u64 t;
	unsigned int mask;
	s64 qos;
};

struct plan {
	bool built;
	struct arrival *a;
	size_t na;
	u64 *work_sum;		/* work of arrivals 0..i */
	size_t *next_work;	/* first arrival >= i that brings work */
	s64 *gmax;		/* sparse table of a[m+1] - work_sum[m] */
	int levels;
	struct limits *lim;
	size_t nlim;
	double *alpha;		/* [interval][state]: see plan_build() */
	double *after_poll;	/* value after a polling wakeup by arrival i */
	int n;			/* states */
	int poll;		/* index of the polling state, -1: none */
	u64 end;
	const struct platform *p;
	const struct cpuidle_driver *drv;
};

static struct plan plans[MAX_CPUS];

static const struct limits *limits_at(const struct plan *pl, u64 t)
{
	size_t lo = 0, hi = pl->nlim;

	while (hi - lo > 1) {	/* the last change at or before t */
		size_t mid = (lo + hi) / 2;

		if (pl->lim[mid].t <= t)
			lo = mid;
		else
			hi = mid;
	}
	return &pl->lim[lo];
}

static bool allowed(const struct cpuidle_driver *drv, unsigned int mask,
		    s64 qos, int i)
{
	bool any_within = false;
	int k;

	for (k = 0; k < drv->state_count; k++)
		any_within |= !(mask >> k & 1) && drv->states[k].exit_latency_ns <= qos;
	if (any_within)
		return !(mask >> i & 1) && drv->states[i].exit_latency_ns <= qos;
	return !(mask >> i & 1) || i == 0;
}

/* The core's polling time limit for disabled mask @mask (cpuidle_poll_time). */
static u64 poll_limit(const struct cpuidle_driver *drv, unsigned int mask)
{
	u64 cap = TICK_NSEC / 16;
	int i;

	for (i = 1; i < drv->state_count; i++)
		if (!(mask >> i & 1) && drv->states[i].target_residency_ns >= 10 * (s64)US)
			return min((u64)drv->states[i].target_residency_ns, cap);
	return cap;
}

/* First arrival after @t. */
static size_t after(const struct plan *pl, u64 t)
{
	size_t lo = 0, hi = pl->na;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (pl->a[mid].t <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static u64 work_before(const struct plan *pl, size_t k)
{
	return k ? pl->work_sum[k - 1] : 0;
}

/*
 * The CPU resumes at @r with arrivals @k... not yet taken: it serves those
 * that have come, oldest first, and the ones that come meanwhile; when is it
 * idle again?  The first m >= k with a[m+1] > r + work(k..m) ends it, found
 * on the sparse table of a[m+1] - work(0..m) in O(log n).
 */
static u64 served(const struct plan *pl, size_t k, u64 r)
{
	s64 c = (s64)(r - work_before(pl, k));
	size_t pos = k;
	int lvl;

	if (k >= pl->na || pl->a[k].t > r)
		return r;
	for (lvl = pl->levels - 1; lvl >= 0; lvl--) {
		size_t step = (size_t)1 << lvl;

		if (pos + step <= pl->na && pl->gmax[lvl * pl->na + pos] <= c)
			pos += step;
	}
	return r + pl->work_sum[pos] - work_before(pl, k);
}

/*
 * Polling up to the time limit and then entering a halting state is never
 * cheaper than entering that halting state at once when nothing arrives and
 * no limit changes before the deadline: it ends at the same wakeup, having
 * burnt the polling power meanwhile.
 */
static bool poll_pointless(const struct plan *pl, const struct limits *l,
			   size_t k, u64 deadline)
{
	int h;

	if (k < pl->na && pl->a[k].t <= deadline)
		return false;
	if (limits_at(pl, deadline) != l)
		return false;
	for (h = 0; h < pl->n; h++)
		if (h != pl->poll && allowed(pl->drv, l->mask, l->qos, h))
			return true;
	return false;
}

/*
 * The least energy from an idle entry at @t to the end of the run, and the
 * state that starts it (@choice, may be NULL).  A halting state j entered
 * before arrival k (the first after t) costs alpha[k][j] - p(j) * t with
 * everything after it; a polling state is followed through its time limits
 * until a wakeup with work, whose continuation is after_poll[].
 */
static double value(const struct plan *pl, u64 t, int *choice)
{
	const struct platform *p = pl->p;
	double best = INFINITY, acc = 0, v;
	bool first = true;
	u64 cur = t;
	int j;

	for (;;) {
		size_t k = after(pl, cur), w;
		const struct limits *l = limits_at(pl, cur);
		u64 d, r;

		for (j = 0; j < pl->n; j++) {
			if (j == pl->poll || !allowed(pl->drv, l->mask, l->qos, j))
				continue;
			v = acc + pl->alpha[k * pl->n + j] - p->power[j] * (double)cur;
			if (v < best) {
				best = v;
				if (choice)
					*choice = first ? j : pl->poll;
			}
		}
		if (pl->poll < 0 || !allowed(pl->drv, l->mask, l->qos, pl->poll))
			break;
		d = cur + poll_limit(pl->drv, l->mask);
		w = k < pl->na ? pl->next_work[k] : pl->na;
		if (w < pl->na && pl->a[w].t <= d) {
			r = pl->a[w].t + (u64)pl->drv->states[pl->poll].exit_latency_ns;
			v = acc + period_energy(p, pl->poll, cur, pl->a[w].t, r) +
			    pl->after_poll[w];
		} else if (d > pl->end) {
			v = acc + period_energy(p, pl->poll, cur, pl->end, pl->end);
		} else if (poll_pointless(pl, l, k, d)) {
			break;
		} else {	/* woken by the time limit: the choice comes again */
			r = d + (u64)pl->drv->states[pl->poll].exit_latency_ns;
			acc += period_energy(p, pl->poll, cur, d, r);
			cur = r > pl->end ? r : served(pl, k, r);
			first = false;
			if (cur <= pl->end)
				continue;
			v = acc;
		}
		if (v < best) {
			best = v;
			if (choice)
				*choice = pl->poll;
		}
		break;
	}
	return best;
}

/* The value once the CPU, woken at @wake, resumes at @r. */
static double continuation(const struct plan *pl, size_t k, u64 r)
{
	u64 next;

	if (r > pl->end)
		return 0;
	next = served(pl, k, r);
	return next > pl->end ? 0 : value(pl, next, NULL);
}

static void limits_build(struct plan *pl, struct machine *m, unsigned int cpu)
{
	const struct scenario *s = engine_scenario(m);
	struct limits cur = { 0, engine_platform(m)->off_mask, (s64)QOS_NONE_NS };
	int k;

	pl->lim = xcalloc(s->nctl + 1, sizeof(*pl->lim));
	pl->lim[pl->nlim++] = cur;
	for (k = 0; k < s->nctl; k++) {
		const struct ctl_ev *e = &s->ctl[k];

		if ((e->cpu >= 0 && e->cpu != (int)cpu) ||
		    !ctl_resolve(engine_platform(m), e, &cur.qos, &cur.mask))
			continue;
		cur.t = SIM_T0 + e->t;
		pl->lim[pl->nlim++] = cur;
	}
}

static void tables_build(struct plan *pl)
{
	size_t i, n = pl->na, step;
	int lvl;

	pl->work_sum = xcalloc(n + 1, sizeof(*pl->work_sum));
	pl->next_work = xcalloc(n + 1, sizeof(*pl->next_work));
	for (i = 0; i < n; i++)
		pl->work_sum[i] = (i ? pl->work_sum[i - 1] : 0) + pl->a[i].work;
	pl->next_work[n] = n;
	for (i = n; i-- > 0;)
		pl->next_work[i] = pl->a[i].work ? i : pl->next_work[i + 1];
	for (pl->levels = 1; ((size_t)1 << pl->levels) <= n; pl->levels++)
		;
	pl->gmax = xcalloc((size_t)pl->levels * (n ? n : 1), sizeof(*pl->gmax));
	for (i = 0; i < n; i++)
		pl->gmax[i] = i + 1 < n ? (s64)(pl->a[i + 1].t - pl->work_sum[i]) :
			      S64_MAX;
	for (lvl = 1; lvl < pl->levels; lvl++) {
		step = (size_t)1 << (lvl - 1);
		for (i = 0; i + 2 * step <= n; i++)
			pl->gmax[lvl * n + i] = max(pl->gmax[(lvl - 1) * n + i],
						    pl->gmax[(lvl - 1) * n + i + step]);
	}
}

/*
 * Backwards over the arrivals: alpha[k][j] is what entering halting state j
 * before arrival k costs, plus the best from the next entry on, minus the
 * part that depends on the entry time (p(j) * t).  After the last arrival
 * (k = na) the state is kept to the end.
 */
static void plan_build(struct plan *pl, struct machine *m,
		       const struct cpuidle_driver *drv, unsigned int cpu)
{
	const struct platform *p = engine_platform(m);
	size_t k;
	int j;

	pl->p = p;
	pl->drv = drv;
	pl->n = drv->state_count;
	pl->poll = drv->states[0].flags & CPUIDLE_FLAG_POLLING ? 0 : -1;
	pl->end = engine_plan_end(m);
	pl->na = engine_cpu_arrivals(m, cpu, &pl->a);
	limits_build(pl, m, cpu);
	tables_build(pl);
	pl->alpha = xcalloc((pl->na + 1) * pl->n, sizeof(*pl->alpha));
	pl->after_poll = xcalloc(pl->na + 1, sizeof(*pl->after_poll));
	for (j = 0; j < pl->n; j++)
		pl->alpha[pl->na * pl->n + j] = p->overhead[j] +
			p->power[j] * (double)pl->end;
	for (k = pl->na; k-- > 0;) {
		u64 wake = pl->a[k].t;

		for (j = 0; j < pl->n; j++) {
			u64 r = wake + (u64)drv->states[j].exit_latency_ns;

			if (j == pl->poll)
				continue;
			pl->alpha[k * pl->n + j] = period_energy(p, j, 0, wake, r) +
						   continuation(pl, k, r);
		}
		if (pl->poll >= 0)
			pl->after_poll[k] = continuation(pl, k, wake +
				(u64)drv->states[pl->poll].exit_latency_ns);
	}
	pl->built = true;
}

static void plan_free(struct plan *pl)
{
	free(pl->a);
	free(pl->work_sum);
	free(pl->next_work);
	free(pl->gmax);
	free(pl->lim);
	free(pl->alpha);
	free(pl->after_poll);
	memset(pl, 0, sizeof(*pl));
}

/* --- closed loops: one period at a time ------------------------------------ */

static u64 dev_mask(const struct cpuidle_device *dev, int n)
{
	unsigned int mask = 0;
	int i;

	for (i = 0; i < n; i++)
		mask |= (dev->states_usage[i].disable ? 1U : 0U) << i;
	return mask;
}

/* A period of state @i from @from, woken at @to: what the engine charges. */
static double greedy_cost(struct machine *m, const struct cpuidle_driver *drv,
			  int i, u64 from, u64 to)
{
	const struct platform *p = engine_platform(m);
	u64 end = engine_end(m);

	if (to > end)
		return period_energy(p, i, from, end, end);
	return period_energy(p, i, from, to,
			     to + (u64)drv->states[i].exit_latency_ns);
}

/* The cheapest allowed halting state for [@from, @to); -1 if none. */
static double cheapest_halting(struct machine *m, const struct cpuidle_driver *drv,
			       unsigned int mask, s64 qos, u64 from, u64 to)
{
	double cost, best = -1;
	int i;

	for (i = 0; i < drv->state_count; i++) {
		if (!allowed(drv, mask, qos, i) ||
		    drv->states[i].flags & CPUIDLE_FLAG_POLLING)
			continue;
		cost = greedy_cost(m, drv, i, from, to);
		if (best < 0 || cost < best)
			best = cost;
	}
	return best;
}

/*
 * The cheapest state for the period that ends at the next arrival; a
 * polling state that would reach its time limit first is priced with the
 * cheapest halting state for the rest of the period.
 */
static int greedy(struct machine *m, const struct cpuidle_driver *drv,
		  const struct cpuidle_device *dev, unsigned int mask, s64 qos)
{
	u64 now = engine_now(m), next = engine_future_arrival(m, dev->cpu, false);
	double cost, rest, best_cost = 0;
	int i, best = -1;

	for (i = 0; i < drv->state_count; i++) {
		u64 limit = now + engine_poll_limit(m, dev->cpu);

		if (!allowed(drv, mask, qos, i))
			continue;
		cost = greedy_cost(m, drv, i, now, next);
		if (drv->states[i].flags & CPUIDLE_FLAG_POLLING && limit < next &&
		    limit < engine_end(m)) {
			rest = cheapest_halting(m, drv, mask, qos, limit, next);
			if (rest >= 0)
				cost = greedy_cost(m, drv, i, now, limit) + rest;
		}
		if (best < 0 || cost < best_cost) {
			best = i;
			best_cost = cost;
		}
	}
	return best < 0 ? 0 : best;
}

/* --- the governor ------------------------------------------------------------ */

static int oracle_enable(struct cpuidle_driver *drv, struct cpuidle_device *dev)
{
	plan_free(&plans[dev->cpu]);
	return 0;
}

static int oracle_select(struct cpuidle_driver *drv, struct cpuidle_device *dev,
			 bool *stop_tick)
{
	struct machine *m = replay_machine;
	struct plan *pl = &plans[dev->cpu];
	unsigned int mask = (unsigned int)dev_mask(dev, drv->state_count);
	s64 qos = engine_latency_req(m, dev->cpu);
	u64 now = engine_now(m);
	int idx = -1;

	if (pl->built && now >= pl->end && pl->end < engine_end(m))
		plan_free(pl);	/* planned to a horizon: plan the next stretch */
	if (!engine_scenario(m)->closed && !pl->built)
		plan_build(pl, m, drv, dev->cpu);
	if (pl->built) {
		value(pl, now, &idx);
		if (idx < 0 || !allowed(drv, mask, qos, idx) ||
		    limits_at(pl, now)->mask != mask || limits_at(pl, now)->qos != qos)
			idx = -1;
	}
	if (idx < 0) {
		oracle_plan_misses += pl->built;
		idx = greedy(m, drv, dev, mask, qos);
	}
	*stop_tick = engine_future_arrival(m, dev->cpu, false) >
		     engine_next_tick(m, dev->cpu) &&
		     !(drv->states[idx].flags & CPUIDLE_FLAG_POLLING);
	return idx;
}

static struct cpuidle_governor oracle = {
	.name = "oracle",
	.enable = oracle_enable,
	.select = oracle_select,
};

struct cpuidle_governor *oracle_governor(void)
{
	return &oracle;
}

/* Free the plans of the last run (leak checkers want it). */
void oracle_release(void)
{
	int cpu;

	for (cpu = 0; cpu < MAX_CPUS; cpu++)
		plan_free(&plans[cpu]);
}
