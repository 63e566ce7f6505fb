// SPDX-License-Identifier: GPL-2.0
/*
 * idle-replay: the contract every governor owes the cpuidle core, and the
 * randomized run that checks it (fuzz).  The list is in ../README.
 */

#include <stdlib.h>

#include "replay.h"
#include "cli.h"

enum finding {
	V_RANGE, V_DISABLED, V_LATENCY, V_ENABLED, V_POLL_TICK,
	V_SELECT_WRITES, V_REFLECT_WRITES,
	N_FALLBACK0, N_OVER_LIMIT, N_POLL_STOPPED, N_UNSORTED,
	NR_FINDINGS
};
#define FIRST_NOTE N_FALLBACK0

static const char *const finding_text[NR_FINDINGS] = {
	[V_RANGE] = "C1 state index out of range",
	[V_DISABLED] = "C2 disabled state returned while an enabled state within the latency limit exists",
	[V_LATENCY] = "C2 state over the latency limit returned while an enabled state within it exists",
	[V_ENABLED] = "C3 disabled state other than 0 returned while a state is enabled",
	[V_POLL_TICK] = "C4 tick allowed to stop on a polling state while the tick runs",
	[V_SELECT_WRITES] = "C5 select changed the driver table or the per-state usage data",
	[V_REFLECT_WRITES] = "C5 reflect changed the driver table or the per-state usage data",
	[N_FALLBACK0] = "N1 disabled state 0 returned: no enabled state is within the latency limit",
	[N_OVER_LIMIT] = "N2 enabled state over the latency limit returned: no enabled state is within it",
	[N_POLL_STOPPED] = "N3 stop_tick left true on a polling state, tick already stopped",
	[N_UNSORTED] = "N4 state over the latency limit returned while an enabled state within it exists, on a table whose exit latencies are not sorted",
};

struct inv_stats {
	const char *gov;
	const char *ctx;
	u64 checks;
	u64 case_start;
	u64 count[NR_FINDINGS];
	char first[NR_FINDINGS][200];
};

static void record(struct inv_stats *st, enum finding f,
		   const struct cpuidle_device *dev, s64 limit, bool stopped,
		   int idx, bool stop)
{
	unsigned int mask = 0;
	int i;

	if (st->count[f]++)
		return;
	for (i = 0; i < CPUIDLE_STATE_MAX; i++)
		mask |= (dev->states_usage[i].disable ? 1U : 0U) << i;
	snprintf(st->first[f], sizeof(st->first[f]),
		 "%s, decision %llu: disabled=0x%x limit=%lldns tick_stopped=%d -> state %d stop_tick=%d",
		 st->ctx ? st->ctx : "?",
		 (unsigned long long)(st->checks - st->case_start), mask,
		 (long long)limit, stopped, idx, stop);
}

static bool writes(const struct cpuidle_driver *drv,
		   const struct cpuidle_device *dev,
		   const struct cpuidle_driver *drv_before,
		   const struct cpuidle_device *dev_before)
{
	return memcmp(drv, drv_before, sizeof(*drv)) ||
	       memcmp(dev->states_usage, dev_before->states_usage,
		      sizeof(dev->states_usage));
}

static bool latencies_sorted(const struct cpuidle_driver *drv)
{
	int i;

	for (i = 1; i < drv->state_count; i++)
		if (drv->states[i].exit_latency_ns < drv->states[i - 1].exit_latency_ns)
			return false;
	return true;
}

/* Which of C2/C3 the returned state breaks, or a note, or nothing. */
static int limit_finding(const struct cpuidle_driver *drv,
			 const struct cpuidle_device *dev, s64 limit, int idx)
{
	bool any_enabled = false, any_ok = false;
	bool enabled = !dev->states_usage[idx].disable;
	int i;

	for (i = 0; i < drv->state_count; i++) {
		if (dev->states_usage[i].disable)
			continue;
		any_enabled = true;
		any_ok |= drv->states[i].exit_latency_ns <= limit;
	}
	if (any_ok && !enabled)
		return V_DISABLED;
	if (any_ok && drv->states[idx].exit_latency_ns > limit)
		return latencies_sorted(drv) ? V_LATENCY : N_UNSORTED;
	if (any_ok || !any_enabled)
		return -1;
	if (!enabled)
		return idx ? V_ENABLED : N_FALLBACK0;
	return N_OVER_LIMIT;
}

void inv_check(struct inv_stats *st, const struct cpuidle_driver *drv,
	       const struct cpuidle_device *dev,
	       const struct cpuidle_driver *drv_before,
	       const struct cpuidle_device *dev_before, s64 limit,
	       bool stopped, int idx, bool stop)
{
	int f;

	st->checks++;
	if (writes(drv, dev, drv_before, dev_before))
		record(st, V_SELECT_WRITES, dev, limit, stopped, idx, stop);
	if (idx < 0 || idx >= drv->state_count) {
		record(st, V_RANGE, dev, limit, stopped, idx, stop);
		return;
	}
	f = limit_finding(drv, dev, limit, idx);
	if (f >= 0)
		record(st, f, dev, limit, stopped, idx, stop);
	if ((drv->states[idx].flags & CPUIDLE_FLAG_POLLING) && stop)
		record(st, stopped ? N_POLL_STOPPED : V_POLL_TICK, dev, limit,
		       stopped, idx, stop);
}

void inv_check_reflect(struct inv_stats *st, const struct cpuidle_driver *drv,
		       const struct cpuidle_device *dev,
		       const struct cpuidle_driver *drv_before,
		       const struct cpuidle_device *dev_before)
{
	if (writes(drv, dev, drv_before, dev_before))
		record(st, V_REFLECT_WRITES, dev, 0, false, dev->last_state_idx,
		       false);
}

/* --- random machines ----------------------------------------------------- */

/* Most real tables have exit latencies that grow with the depth. */
static void sort_latencies(struct cpuidle_driver *drv)
{
	int i, j;

	for (i = 1; i < drv->state_count; i++) {
		s64 lat = drv->states[i].exit_latency_ns;

		for (j = i; j > 0 && drv->states[j - 1].exit_latency_ns > lat; j--)
			drv->states[j].exit_latency_ns = drv->states[j - 1].exit_latency_ns;
		drv->states[j].exit_latency_ns = lat;
	}
}

static void random_platform(struct rng *r, struct platform *p)
{
	struct cpuidle_driver *drv = &p->drv;
	bool poll = rng_below(r, 2);
	s64 res = 0;
	int i;

	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "random");
	drv->state_count = 1 + (int)rng_below(r, CPUIDLE_STATE_MAX);
	for (i = 0; i < drv->state_count; i++) {
		struct cpuidle_state *st = &drv->states[i];
		u64 pick = rng_below(r, 20);

		if (i && pick >= 2)
			res += rng_loguni(r, 1 * US, 5 * MS);
		if (i && pick == 1 && i == drv->state_count - 1)
			res = (s64)UINT_MAX * NSEC_PER_USEC;
		st->target_residency_ns = i || !poll ? res : 0;
		st->exit_latency_ns = rng_below(r, 7) ? res * (s64)(1 + rng_below(r, 100)) / 100 :
				      res + res * (s64)rng_below(r, 200) / 100 + 1000;
		snprintf(p->names[i], CPUIDLE_NAME_LEN, "S%d", i);
	}
	if (poll) {
		drv->states[0].flags = CPUIDLE_FLAG_POLLING;
		drv->states[0].exit_latency_ns = 0;
	}
	if (rng_below(r, 4))
		sort_latencies(drv);
	platform_finish(p);
}

static struct dist random_gap(struct rng *r)
{
	u64 lo = rng_loguni(r, 1 * US, 20 * MS);

	return (struct dist){ .kind = D_LOGUNI, .a = lo,
			      .b = lo * (1 + rng_below(r, 20)) };
}

static struct dist random_work(struct rng *r)
{
	struct dist d = { .kind = D_LOGUNI, .a = 1 * US, .b = 2 * MS };

	if (!rng_below(r, 4))
		d = (struct dist){ .kind = D_CONST };
	return d;
}

static void random_streams(struct rng *r, struct scenario *s)
{
	int i, n = 2 + (int)rng_below(r, 4);

	for (i = 0; i < n; i++) {
		struct stream_tpl *t = &s->streams[s->nstreams++];

		t->mode = rng_below(r, 2) ? SM_PERIODIC : SM_CHAIN;
		if (s->ncpu > 1 && !rng_below(r, 6))
			t->mode = SM_RING;
		t->kind = rng_below(r, 2) ? EV_TIMER : EV_IRQ;
		t->gap = random_gap(r);
		t->work = random_work(r);
		t->cpu = t->mode == SM_RING ? 0 : -1;
	}
}

static s64 random_ctl_value(struct rng *r, enum ctl_kind kind)
{
	u64 pick = rng_below(r, 10);

	if (kind == CTL_DISABLE)
		return pick < 2 ? 0 : pick == 2 ? 0x3ff : (s64)rng_below(r, 1024);
	if (pick < 3)
		return -1;
	if (pick < 5)
		return 0;
	return (s64)rng_loguni(r, 100, 20 * MS);
}

static void random_ctls(struct rng *r, struct scenario *s)
{
	u64 t = 0;

	s->nctl = 0;
	while (s->nctl < RANDOM_CTL_MAX) {
		enum ctl_kind kind = rng_below(r, 2) ? CTL_QOS : CTL_DISABLE;

		t += rng_loguni(r, 100 * US, 50 * MS);
		if (t >= s->duration)
			break;
		s->ctl[s->nctl++] = (struct ctl_ev){
			t, (int)rng_below(r, s->ncpu + 1) - 1, kind,
			random_ctl_value(r, kind)
		};
	}
}

static void random_scenario(struct rng *r, struct scenario *s, u64 seed)
{
	static const int hz[] = { 100, 250, 1000 };
	struct ctl_ev *ctl = s->ctl;

	memset(s, 0, sizeof(*s));
	s->ctl = ctl;
	snprintf(s->name, sizeof(s->name), "fuzz-%llu", (unsigned long long)seed);
	s->hz = hz[rng_below(r, 3)];
	s->ncpu = 1 + (int)rng_below(r, 2);
	s->duration = 2 * SEC;
	s->seed = seed;
	random_streams(r, s);
	random_ctls(r, s);
	scenario_finish(s);
}

/* Random case @k of the series @seed; @s->ctl must hold 400 entries. */
void random_case(u64 seed, u64 k, struct platform *p, struct scenario *s)
{
	struct rng r;

	rng_seed(&r, seed, k);
	random_platform(&r, p);
	random_scenario(&r, s, seed * 1000003 + k);
}

/* --- fuzz command ---------------------------------------------------------- */

static void inv_print(const struct inv_stats *st, u64 cases)
{
	bool clean = true;
	int f;

	printf("%-12s %10llu decisions in %llu random cases\n", st->gov,
	       (unsigned long long)st->checks, (unsigned long long)cases);
	for (f = 0; f < NR_FINDINGS; f++) {
		if (!st->count[f])
			continue;
		clean &= f >= FIRST_NOTE;
		printf("  %s %-9llu %s\n      first: %s\n",
		       f < FIRST_NOTE ? "VIOLATION" : "note     ",
		       (unsigned long long)st->count[f], finding_text[f],
		       st->first[f]);
	}
	if (clean)
		printf("  no contract violations\n");
}

static bool inv_violated(const struct inv_stats *st)
{
	int f;

	for (f = 0; f < FIRST_NOTE; f++)
		if (st->count[f])
			return true;
	return false;
}

static bool fuzz_gov(const struct gov_entry *g, u64 want, u64 seed)
{
	struct scenario *s = xcalloc(1, sizeof(*s));
	struct inv_stats *st = xcalloc(1, sizeof(*st));
	struct run_opts o = { .inv = st };
	struct platform p;
	struct metrics *mt = xcalloc(1, sizeof(*mt));
	char ctx[96];
	u64 k;
	bool bad;

	s->ctl = xcalloc(RANDOM_CTL_MAX, sizeof(*s->ctl));
	st->gov = g->label;
	for (k = 0; st->checks < want; k++) {
		random_case(seed, k, &p, s);
		snprintf(ctx, sizeof(ctx), "case %llu (%d states%s%s, HZ=%d)",
			 (unsigned long long)k, p.drv.state_count,
			 p.drv.states[0].flags & CPUIDLE_FLAG_POLLING ? ", poll" : "",
			 latencies_sorted(&p.drv) ? "" : ", unsorted latencies",
			 s->hz);
		st->ctx = ctx;
		st->case_start = st->checks;
		o.max_decisions = min(want - st->checks, (u64)2000);
		run_one(s, &p, g, &o, mt);
	}
	inv_print(st, k);
	bad = inv_violated(st);
	free(s->ctl);
	free(s);
	free(st);
	free(mt);
	return bad;
}

int cmd_fuzz(int argc, char **argv)
{
	struct cli c = cli_parse(argc, argv, "decisions seed gov must-pass");
	u64 want = c.decisions ? c.decisions : 1000000;
	int i, bad = 0;

	printf("contract check: %llu decisions per governor, seed %llu\n",
	       (unsigned long long)want, (unsigned long long)c.seed);
	for (i = 0; i < c.ngov; i++) {
		bool v = fuzz_gov(c.gov[i], want, c.seed);

		/* The lab's own policies must keep the contract too. */
		if (v && (cli_listed(c.must_pass, c.gov[i]->label) ||
			  c.gov[i]->builtin))
			bad = 1;
	}
	return bad;
}
