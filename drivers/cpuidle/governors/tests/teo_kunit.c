// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the timer events oriented (teo) cpuidle governor.
 *
 * The tests drive the governor through a fake cpuidle driver and device and
 * redirect its five inputs (sleep length, tick stopped, tick woke the CPU,
 * PM QoS latency limit, local clock) to values chosen by each test.  They
 * also redirect teo_cpu_data() to statistics each test allocates for itself,
 * so they never write the per-CPU data of a CPU the running governor uses:
 * built in or as a module, they can run while teo governs every CPU.
 *
 * Every expected value is worked out by hand from the rules that the
 * DOC: teo-description section of teo.c and the kernel-doc comments of its
 * functions state; the comments show the arithmetic.
 *
 * Notation used in the comments:
 *   T       TICK_NSEC (4 ms with HZ=250; the tests hold for HZ 100..1000)
 *   H[i]    hits of bin i, I[i] intercepts of bin i, TH the tick bin hits
 *   ib, hb  intercepts and hits of the bins below the candidate state
 *   R       total - hb, the wakeups that bear on a selection
 *   lat/res exit latency / target residency of a state
 * Decay: m -> m - (m >> 3), or 0 when m >> 3 is 0 (m < 8); PULSE = 1024 is
 * then added to one metric.
 *
 * The rules the comments apply, in short.  A wakeup is a hit in the bin of
 * the sleep length only if the CPU woke at or after the timer (or a safety
 * net woke it: polling timed out, or the tick fired) or the measured idle
 * time is less than lat / 2 short of the sleep length; any other wakeup is
 * an intercept in the bin of the measured idle time.  A selection with a
 * choice fetches the sleep length first; the candidate is the deepest
 * enabled state within the latency limit that fits into it.  The walk runs
 * when 2 * ib > R; it starts from R - ib (what lies at or above the
 * candidate), adds the intercepts of the bins below the candidate one by
 * one, deepest first, and stops at the first bin where 2 * sum > R.
 */

#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/bits.h>
#include <linux/cpuidle.h>
#include <linux/cpumask.h>
#include <linux/irqflags.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/limits.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/string.h>

#include "../teo.h"

#define TEO_US(us)	((s64)(us) * NSEC_PER_USEC)
#define TEO_MS(ms)	((s64)(ms) * NSEC_PER_MSEC)
#define TEO_TICK	((s64)TICK_NSEC)

/* Steady value of a metric that receives PULSE on every update. */
#define TEO_MAX_METRIC	(8 * PULSE)

/* Number of bins the hand-written bin tables below describe. */
#define TEO_TEST_BINS	4

/* A long history: every metric reaches its steady value well before. */
#define TEO_LONG_RUN	200

/* One idle state of a fake driver. */
struct teo_test_state {
	s64 lat_ns;
	s64 res_ns;
	bool polls;
};

struct teo_test_driver {
	const struct teo_test_state *states;
	int count;
};

#define TEO_DRIVER(name)	\
	{ .states = name##_states, .count = ARRAY_SIZE(name##_states) }

/*
 * Update tests.  Bins: 0 [0, 10 us), 1 [10, 100 us), 2 [100, 600 us),
 * 3 [600 us, ...).  The deepest residency is below T for every HZ up to 1000,
 * so the extra tick bin [T, ...) exists.
 */
static const struct teo_test_state teo_ladder_states[] = {
	{ .lat_ns = 0, .res_ns = 0, .polls = true },
	{ .lat_ns = TEO_US(2), .res_ns = TEO_US(10) },
	{ .lat_ns = TEO_US(40), .res_ns = TEO_US(100) },
	{ .lat_ns = TEO_US(200), .res_ns = TEO_US(600) },
};

static const struct teo_test_driver teo_ladder = TEO_DRIVER(teo_ladder);

/* The same with a deepest residency of exactly T: no tick bin. */
static const struct teo_test_state teo_ladder_tick_states[] = {
	{ .lat_ns = 0, .res_ns = 0, .polls = true },
	{ .lat_ns = TEO_US(2), .res_ns = TEO_US(10) },
	{ .lat_ns = TEO_US(40), .res_ns = TEO_US(100) },
	{ .lat_ns = TEO_US(200), .res_ns = TEO_TICK },
};

static const struct teo_test_driver teo_ladder_tick =
	TEO_DRIVER(teo_ladder_tick);

/*
 * Selection tests.  Bins: 0 [1, 50 us), 1 [50, 400 us), 2 [400, 1500 us),
 * 3 [1500 us, ...).  No state polls.
 */
static const struct teo_test_state teo_sel_states[] = {
	{ .lat_ns = TEO_US(1), .res_ns = TEO_US(1) },
	{ .lat_ns = TEO_US(20), .res_ns = TEO_US(50) },
	{ .lat_ns = TEO_US(100), .res_ns = TEO_US(400) },
	{ .lat_ns = TEO_US(500), .res_ns = TEO_US(1500) },
};

static const struct teo_test_driver teo_sel = TEO_DRIVER(teo_sel);

/* Two states at least a tick deep, for the stopped-tick rules. */
static const struct teo_test_state teo_deep_states[] = {
	{ .lat_ns = TEO_US(1), .res_ns = TEO_US(1) },
	{ .lat_ns = TEO_US(20), .res_ns = TEO_US(50) },
	{ .lat_ns = TEO_US(100), .res_ns = TEO_TICK },
	{ .lat_ns = TEO_US(300), .res_ns = 3 * TEO_TICK },
};

static const struct teo_test_driver teo_deep = TEO_DRIVER(teo_deep);

/* All states shallower than a tick, for the tick decision. */
static const struct teo_test_state teo_short_states[] = {
	{ .lat_ns = TEO_US(1), .res_ns = TEO_US(1) },
	{ .lat_ns = TEO_US(20), .res_ns = TEO_US(50) },
	{ .lat_ns = TEO_US(50), .res_ns = TEO_TICK / 4 },
	{ .lat_ns = TEO_US(100), .res_ns = TEO_TICK / 2 },
};

static const struct teo_test_driver teo_short = TEO_DRIVER(teo_short);

static const struct teo_test_state teo_one_states[] = {
	{ .lat_ns = TEO_US(1), .res_ns = TEO_US(1) },
};

static const struct teo_test_driver teo_one = TEO_DRIVER(teo_one);

/* Intel Sapphire Rapids: POLL 0/0, C1 1/1, C1E 2/4, C6 290/800 us. */
static const struct teo_test_state teo_spr_states[] = {
	{ .lat_ns = 0, .res_ns = 0, .polls = true },
	{ .lat_ns = TEO_US(1), .res_ns = TEO_US(1) },
	{ .lat_ns = TEO_US(2), .res_ns = TEO_US(4) },
	{ .lat_ns = TEO_US(290), .res_ns = TEO_US(800) },
};

static const struct teo_test_driver teo_spr = TEO_DRIVER(teo_spr);

/* Arm RK3399: WFI 1/1, cpu-sleep 370/900, cluster-sleep 900/2000 us. */
static const struct teo_test_state teo_rk3399_states[] = {
	{ .lat_ns = TEO_US(1), .res_ns = TEO_US(1) },
	{ .lat_ns = TEO_US(370), .res_ns = TEO_US(900) },
	{ .lat_ns = TEO_US(900), .res_ns = TEO_US(2000) },
};

static const struct teo_test_driver teo_rk3399 = TEO_DRIVER(teo_rk3399);

/* Qualcomm sc7280 cluster state: exit latency 10200 us above residency. */
static const struct teo_test_state teo_sc7280_states[] = {
	{ .lat_ns = TEO_US(1), .res_ns = TEO_US(1) },
	{ .lat_ns = TEO_US(10200), .res_ns = TEO_US(9826) },
};

static const struct teo_test_driver teo_sc7280 = TEO_DRIVER(teo_sc7280);

/*
 * MediaTek MT8196: WFI 1/1, cpuoff 349/6710, clusteroff 434/6710 and s2idle
 * 20000/4294967295 us (a residency of UINT_MAX microseconds).
 */
static const struct teo_test_state teo_mt8196_states[] = {
	{ .lat_ns = TEO_US(1), .res_ns = TEO_US(1) },
	{ .lat_ns = TEO_US(349), .res_ns = TEO_US(6710) },
	{ .lat_ns = TEO_US(434), .res_ns = TEO_US(6710) },
	{ .lat_ns = TEO_US(20000), .res_ns = TEO_US(4294967295U) },
};

static const struct teo_test_driver teo_mt8196 = TEO_DRIVER(teo_mt8196);

/* Two states sharing one residency: bin 1 is empty, [100 us, 100 us). */
static const struct teo_test_state teo_twin_states[] = {
	{ .lat_ns = TEO_US(1), .res_ns = TEO_US(1) },
	{ .lat_ns = TEO_US(20), .res_ns = TEO_US(100) },
	{ .lat_ns = TEO_US(30), .res_ns = TEO_US(100) },
	{ .lat_ns = TEO_US(200), .res_ns = TEO_US(600) },
};

static const struct teo_test_driver teo_twin = TEO_DRIVER(teo_twin);

/*
 * Per-test state of the fake cpuidle core and of the redirected inputs.
 * The redirected functions find it through kunit_get_current_test().
 */
struct teo_test_ctx {
	struct cpuidle_driver *drv;
	struct cpuidle_device *dev;
	s64 sleep_length_ns;
	s64 delta_tick_ns;
	s64 latency_limit_ns;
	u64 now_ns;
	bool tick_stopped;
	bool tick_woke;
	unsigned int sleep_length_calls;
	unsigned int tick_woke_calls;
	unsigned int latency_limit_calls;
	unsigned int clock_calls;
	unsigned int cpu_data_calls;
	struct teo_cpu *cpu_data;
};

static struct teo_test_ctx *teo_test_current(void)
{
	return kunit_get_current_test()->priv;
}

static ktime_t teo_fake_sleep_length(ktime_t *delta_tick)
{
	struct teo_test_ctx *ctx = teo_test_current();

	ctx->sleep_length_calls++;
	/* The next clock event is the tick or an earlier timer. */
	*delta_tick = min(ctx->delta_tick_ns, ctx->sleep_length_ns);
	return ctx->sleep_length_ns;
}

static bool teo_fake_tick_stopped(void)
{
	return teo_test_current()->tick_stopped;
}

/* Like the tick code's flag, reading it clears it. */
static bool teo_fake_tick_woke_cpu(void)
{
	struct teo_test_ctx *ctx = teo_test_current();
	bool woke = ctx->tick_woke;

	ctx->tick_woke_calls++;
	ctx->tick_woke = false;
	return woke;
}

static s64 teo_fake_latency_limit_ns(unsigned int cpu)
{
	struct teo_test_ctx *ctx = teo_test_current();

	ctx->latency_limit_calls++;
	return ctx->latency_limit_ns;
}

static u64 teo_fake_clock_ns(void)
{
	struct teo_test_ctx *ctx = teo_test_current();

	ctx->clock_calls++;
	return ctx->now_ns;
}

/* The test's own statistics, whatever CPU the fake device names. */
static struct teo_cpu *teo_fake_cpu_data(struct cpuidle_device *dev)
{
	struct teo_test_ctx *ctx = teo_test_current();

	ctx->cpu_data_calls++;
	return ctx->cpu_data;
}

static struct teo_cpu *teo_test_data(struct teo_test_ctx *ctx)
{
	return teo_cpu_data(ctx->dev);
}

/* Reset the governor's data, as the core does when it enables a CPU. */
static void teo_test_enable(struct teo_test_ctx *ctx)
{
	unsigned long flags;

	local_irq_save(flags);
	teo_enable_device(ctx->drv, ctx->dev);
	local_irq_restore(flags);
	ctx->dev->last_state_idx = -1;
}

/* Replace the states of the fake driver and enable all of them. */
static void teo_test_load(struct teo_test_ctx *ctx,
			  const struct teo_test_driver *table)
{
	struct cpuidle_driver *drv = ctx->drv;
	int i;

	memset(drv->states, 0, sizeof(drv->states));
	memset(ctx->dev->states_usage, 0, sizeof(ctx->dev->states_usage));
	for (i = 0; i < table->count; i++) {
		const struct teo_test_state *s = &table->states[i];

		drv->states[i].exit_latency_ns = s->lat_ns;
		drv->states[i].target_residency_ns = s->res_ns;
		drv->states[i].exit_latency = div_s64(s->lat_ns, NSEC_PER_USEC);
		drv->states[i].target_residency = div_s64(s->res_ns,
							  NSEC_PER_USEC);
		drv->states[i].flags = s->polls ? CPUIDLE_FLAG_POLLING : 0;
	}
	drv->state_count = table->count;
}

/* Disable the states whose bits are set in @mask. */
static void teo_test_disable(struct teo_test_ctx *ctx, unsigned long mask)
{
	int i;

	for (i = 0; i < CPUIDLE_STATE_MAX; i++)
		ctx->dev->states_usage[i].disable = !!(mask & BIT(i));
}

/* Ask the governor for a state; *stop_tick starts true as in the core. */
static int teo_test_select(struct teo_test_ctx *ctx, bool *stop_tick)
{
	unsigned long flags;
	int idx;

	*stop_tick = true;
	local_irq_save(flags);
	idx = teo_select(ctx->drv, ctx->dev, stop_tick);
	local_irq_restore(flags);
	return idx;
}

/*
 * The CPU left state @idx @span_ns after the selection, with @idle_ns of
 * measured idle time; report it as the core does.
 */
static void teo_test_wake(struct teo_test_ctx *ctx, int idx, u64 idle_ns,
			  u64 span_ns)
{
	unsigned long flags;

	ctx->now_ns += span_ns;
	ctx->dev->last_residency_ns = idle_ns;
	local_irq_save(flags);
	teo_reflect(ctx->dev, idx);
	local_irq_restore(flags);
}

static void teo_test_update(struct teo_test_ctx *ctx)
{
	unsigned long flags;

	local_irq_save(flags);
	teo_update(ctx->drv, ctx->dev);
	local_irq_restore(flags);
}

/*
 * Put the governor where a selection that found a sleep length of @sleep_ns
 * would leave it, so that an update test can pick the entered state itself.
 */
static void teo_test_arm(struct teo_test_ctx *ctx, s64 sleep_ns)
{
	teo_test_data(ctx)->sleep_length_ns = sleep_ns;
	teo_test_data(ctx)->selected_at_ns = ctx->now_ns;
}

/*
 * One complete idle period: selected with a sleep length of @sleep_ns,
 * entered in state @idx and ended after @idle_ns, then accounted.
 */
static void teo_test_account(struct teo_test_ctx *ctx, s64 sleep_ns, int idx,
			     u64 idle_ns)
{
	teo_test_arm(ctx, sleep_ns);
	teo_test_wake(ctx, idx, idle_ns, idle_ns);
	teo_test_update(ctx);
}

/* One idle period cut short by a non-timer wakeup after @idle_ns. */
static int teo_test_intercept(struct teo_test_ctx *ctx, s64 sleep_ns,
			      u64 idle_ns, bool *stop_tick)
{
	int idx;

	ctx->sleep_length_ns = sleep_ns;
	idx = teo_test_select(ctx, stop_tick);
	teo_test_wake(ctx, idx, idle_ns, idle_ns);
	return idx;
}

/*
 * One idle period ended by the timer @sleep_ns away, or by the tick first if
 * the governor kept it and it comes earlier.
 */
static int teo_test_timer(struct teo_test_ctx *ctx, s64 sleep_ns,
			  bool *stop_tick)
{
	int idx;

	ctx->sleep_length_ns = sleep_ns;
	idx = teo_test_select(ctx, stop_tick);
	if (!*stop_tick && ctx->delta_tick_ns < sleep_ns) {
		ctx->tick_woke = true;
		teo_test_wake(ctx, idx, ctx->delta_tick_ns, ctx->delta_tick_ns);
	} else {
		teo_test_wake(ctx, idx, sleep_ns, sleep_ns);
	}
	return idx;
}

/* Run @count timer cycles; return how many did not select @expected. */
static int teo_test_timers(struct teo_test_ctx *ctx, s64 sleep_ns, int count,
			   int expected)
{
	int misses = 0;
	bool stop_tick;

	while (count--)
		misses += teo_test_timer(ctx, sleep_ns, &stop_tick) != expected;
	return misses;
}

/* Run @count intercept cycles; return how many did not select @expected. */
static int teo_test_intercepts(struct teo_test_ctx *ctx, s64 sleep_ns,
			       u64 idle_ns, int count, int expected)
{
	int misses = 0;
	bool stop_tick;

	while (count--)
		misses += teo_test_intercept(ctx, sleep_ns, idle_ns,
					     &stop_tick) != expected;
	return misses;
}

/* Hand-written metrics of the first TEO_TEST_BINS bins. */
struct teo_test_bins {
	unsigned int hits[TEO_TEST_BINS];
	unsigned int intercepts[TEO_TEST_BINS];
	unsigned int tick_hits;
	unsigned int total;
};

static void teo_test_set_bins(struct kunit *test, struct teo_test_ctx *ctx,
			      const struct teo_test_bins *b)
{
	struct teo_cpu *cpu_data = teo_test_data(ctx);
	unsigned int sum = b->tick_hits;
	int i;

	for (i = 0; i < TEO_TEST_BINS; i++) {
		cpu_data->bins[i].hits = b->hits[i];
		cpu_data->bins[i].intercepts = b->intercepts[i];
		sum += b->hits[i] + b->intercepts[i];
	}
	cpu_data->tick_hits = b->tick_hits;
	cpu_data->total = b->total;
	/* Catch a slip in a hand-written table: total is the sum. */
	KUNIT_ASSERT_EQ(test, b->total, sum);
}

/* Sum of all metrics; the largest one goes to *@largest. */
static unsigned int teo_test_sum(struct teo_test_ctx *ctx,
				 unsigned int *largest)
{
	struct teo_cpu *cpu_data = teo_test_data(ctx);
	unsigned int sum = cpu_data->tick_hits;
	int i;

	*largest = cpu_data->tick_hits;
	for (i = 0; i < CPUIDLE_STATE_MAX; i++) {
		sum += cpu_data->bins[i].hits + cpu_data->bins[i].intercepts;
		*largest = max3(*largest, cpu_data->bins[i].hits,
				cpu_data->bins[i].intercepts);
	}
	return sum;
}

enum teo_test_metric {
	TEO_HIT,
	TEO_INTERCEPT,
	TEO_TICK_HIT,
};

/*
 * Expect @metric of @bin to hold @value and every other metric to be 0;
 * @what names the step in a failure message.
 */
static void teo_test_expect_only_in(struct kunit *test, const char *what,
				    enum teo_test_metric metric, int bin,
				    unsigned int value)
{
	struct teo_cpu *cpu_data = teo_test_data(test->priv);
	int i;

	for (i = 0; i < CPUIDLE_STATE_MAX; i++) {
		bool mine = i == bin;

		KUNIT_EXPECT_EQ_MSG(test, cpu_data->bins[i].hits,
				    mine && metric == TEO_HIT ? value : 0,
				    "%s: hits of bin %d", what, i);
		KUNIT_EXPECT_EQ_MSG(test, cpu_data->bins[i].intercepts,
				    mine && metric == TEO_INTERCEPT ? value : 0,
				    "%s: intercepts of bin %d", what, i);
	}
	KUNIT_EXPECT_EQ_MSG(test, cpu_data->tick_hits,
			    metric == TEO_TICK_HIT ? value : 0,
			    "%s: tick bin hits", what);
}

static void teo_test_expect_only(struct kunit *test, enum teo_test_metric metric,
				 int bin, unsigned int value)
{
	teo_test_expect_only_in(test, "after the update", metric, bin, value);
}

/* Hits of a CPU that stays idle past the deepest state (or the tick). */
static unsigned int teo_test_deep_hits(struct teo_test_ctx *ctx)
{
	struct teo_cpu *cpu_data = teo_test_data(ctx);

	return cpu_data->tick_hits +
	       cpu_data->bins[ctx->drv->state_count - 1].hits;
}

static int teo_test_init(struct kunit *test)
{
	struct teo_test_ctx *ctx;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	ctx->drv = kunit_kzalloc(test, sizeof(*ctx->drv), GFP_KERNEL);
	ctx->dev = kunit_kzalloc(test, sizeof(*ctx->dev), GFP_KERNEL);
	ctx->cpu_data = kunit_kzalloc(test, sizeof(*ctx->cpu_data), GFP_KERNEL);
	if (!ctx->drv || !ctx->dev || !ctx->cpu_data)
		return -ENOMEM;

	ctx->sleep_length_ns = KTIME_MAX;
	ctx->delta_tick_ns = TEO_TICK;
	ctx->latency_limit_ns = S64_MAX;
	ctx->now_ns = NSEC_PER_SEC;
	/*
	 * Any CPU number does: the latency limit and the governor's data that
	 * depend on it are redirected below.
	 */
	ctx->dev->cpu = 0;
	test->priv = ctx;

	/* Private statistics: the live ones of that CPU stay untouched. */
	kunit_activate_static_stub(test, teo_cpu_data, teo_fake_cpu_data);

	/* The real inputs must not run in a preemptible test thread. */
	kunit_activate_static_stub(test, teo_sleep_length,
				   teo_fake_sleep_length);
	kunit_activate_static_stub(test, teo_tick_stopped,
				   teo_fake_tick_stopped);
	kunit_activate_static_stub(test, teo_tick_woke_cpu,
				   teo_fake_tick_woke_cpu);
	kunit_activate_static_stub(test, teo_latency_limit_ns,
				   teo_fake_latency_limit_ns);
	kunit_activate_static_stub(test, teo_clock_ns, teo_fake_clock_ns);

	teo_test_load(ctx, &teo_sel);
	teo_test_enable(ctx);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* cpuidle_teo_update: how one wakeup is accounted */

struct teo_update_case {
	const char *desc;
	const struct teo_test_driver *drv;	/* NULL: teo_ladder */
	int entered;
	s64 sleep_ns;
	u64 idle_ns;
	u64 span_ns;
	bool poll_timeout;
	bool tick_woke;
	enum teo_test_metric metric;
	int bin;
};

/*
 * All on teo_ladder: bins 0 [0, 10 us), 1 [10, 100), 2 [100, 600),
 * 3 [600 us, T), tick bin [T, ...).  State 0 has no exit latency, so the
 * measured idle time of a wakeup from it is last_residency_ns itself, and
 * half of its exit latency is 0: such a wakeup is a hit only if the CPU
 * woke at or after the timer (span >= sleep length).  The timer bin is the
 * bin of the sleep length (the tick bin once it reaches T).
 */
static const struct teo_update_case teo_update_cases[] = {
	{
		/* Span == sleep length: the whole 5 us, bin 0 (10 us > 5). */
		.desc = "hit in bin 0: woke by a 5 us timer",
		.entered = 0, .sleep_ns = TEO_US(5),
		.idle_ns = TEO_US(5), .span_ns = TEO_US(5),
		.metric = TEO_HIT, .bin = 0,
	}, {
		.desc = "hit in bin 1: woke by a 50 us timer",
		.entered = 0, .sleep_ns = TEO_US(50),
		.idle_ns = TEO_US(50), .span_ns = TEO_US(50),
		.metric = TEO_HIT, .bin = 1,
	}, {
		.desc = "hit in bin 2: woke by a 300 us timer",
		.entered = 0, .sleep_ns = TEO_US(300),
		.idle_ns = TEO_US(300), .span_ns = TEO_US(300),
		.metric = TEO_HIT, .bin = 2,
	}, {
		/* 900 us < T for every HZ up to 1000: bin 3, not the tick bin. */
		.desc = "hit in bin 3: woke by a 900 us timer",
		.entered = 0, .sleep_ns = TEO_US(900),
		.idle_ns = TEO_US(900), .span_ns = TEO_US(900),
		.metric = TEO_HIT, .bin = 3,
	}, {
		/*
		 * Idle and timer both in bin 0, but the CPU woke 5 - 3 = 2 us
		 * before the timer, which is not below lat(0) / 2 = 0.
		 */
		.desc = "early in the timer's bin 0: 3 us idle, 5 us timer",
		.entered = 0, .sleep_ns = TEO_US(5),
		.idle_ns = TEO_US(3), .span_ns = TEO_US(3),
		.metric = TEO_INTERCEPT, .bin = 0,
	}, {
		/* Both in bin 1, 50 - 20 = 30 us early. */
		.desc = "early in the timer's bin 1: 20 us idle, 50 us timer",
		.entered = 0, .sleep_ns = TEO_US(50),
		.idle_ns = TEO_US(20), .span_ns = TEO_US(20),
		.metric = TEO_INTERCEPT, .bin = 1,
	}, {
		/* Both in bin 2, 300 - 150 = 150 us early. */
		.desc = "early in the timer's bin 2: 150 us idle, 300 us timer",
		.entered = 0, .sleep_ns = TEO_US(300),
		.idle_ns = TEO_US(150), .span_ns = TEO_US(150),
		.metric = TEO_INTERCEPT, .bin = 2,
	}, {
		/* Both in bin 3, 900 - 700 = 200 us early. */
		.desc = "early in the timer's bin 3: 700 us idle, 900 us timer",
		.entered = 0, .sleep_ns = TEO_US(900),
		.idle_ns = TEO_US(700), .span_ns = TEO_US(700),
		.metric = TEO_INTERCEPT, .bin = 3,
	}, {
		.desc = "intercept in bin 0: 5 us idle, 300 us timer",
		.entered = 0, .sleep_ns = TEO_US(300),
		.idle_ns = TEO_US(5), .span_ns = TEO_US(5),
		.metric = TEO_INTERCEPT, .bin = 0,
	}, {
		.desc = "intercept in bin 1: 50 us idle, 900 us timer",
		.entered = 0, .sleep_ns = TEO_US(900),
		.idle_ns = TEO_US(50), .span_ns = TEO_US(50),
		.metric = TEO_INTERCEPT, .bin = 1,
	}, {
		.desc = "intercept in bin 2: 200 us idle, 900 us timer",
		.entered = 0, .sleep_ns = TEO_US(900),
		.idle_ns = TEO_US(200), .span_ns = TEO_US(200),
		.metric = TEO_INTERCEPT, .bin = 2,
	}, {
		/* Timer in the tick bin, 800 us idle in bin 3 (T >= 1 ms). */
		.desc = "intercept in bin 3: 800 us idle, 3T timer",
		.entered = 0, .sleep_ns = 3 * TEO_TICK,
		.idle_ns = TEO_US(800), .span_ns = TEO_US(800),
		.metric = TEO_INTERCEPT, .bin = 3,
	}, {
		/*
		 * Sleep length 3T >= T and 2T of idle >= T: the tick bin, which
		 * records idle periods past T whatever ended them.
		 */
		.desc = "tick bin hit: 2T idle, 3T timer",
		.entered = 0, .sleep_ns = 3 * TEO_TICK,
		.idle_ns = 2 * TEO_TICK, .span_ns = 2 * TEO_TICK,
		.metric = TEO_TICK_HIT,
	}, {
		/*
		 * res(2) <= idle: the bin starts at the residency.  200 us
		 * before the timer: an intercept, in bin 2 (the next case is
		 * 1 ns shorter and lands in bin 1).
		 */
		.desc = "idle equal to a residency: 100 us idle, 300 us timer",
		.entered = 0, .sleep_ns = TEO_US(300),
		.idle_ns = TEO_US(100), .span_ns = TEO_US(100),
		.metric = TEO_INTERCEPT, .bin = 2,
	}, {
		.desc = "idle 1 ns below a residency: bin 1, 300 us timer",
		.entered = 0, .sleep_ns = TEO_US(300),
		.idle_ns = TEO_US(100) - 1, .span_ns = TEO_US(100) - 1,
		.metric = TEO_INTERCEPT, .bin = 1,
	}, {
		/* Whole sleep length; res(2) <= 100 us: timer bin 2. */
		.desc = "timer equal to a residency: woke by a 100 us timer",
		.entered = 0, .sleep_ns = TEO_US(100),
		.idle_ns = TEO_US(100), .span_ns = TEO_US(100),
		.metric = TEO_HIT, .bin = 2,
	}, {
		/* res(2) = 100 us > 100 us - 1 ns: timer bin 1. */
		.desc = "timer 1 ns below a residency: woke by it",
		.entered = 0, .sleep_ns = TEO_US(100) - 1,
		.idle_ns = TEO_US(100) - 1, .span_ns = TEO_US(100) - 1,
		.metric = TEO_HIT, .bin = 1,
	}, {
		/* Unknown sleep length: infinite, so the timer bin is TH. */
		.desc = "unknown sleep length, 50 us idle",
		.entered = 0, .sleep_ns = KTIME_MAX,
		.idle_ns = TEO_US(50), .span_ns = TEO_US(50),
		.metric = TEO_INTERCEPT, .bin = 1,
	}, {
		.desc = "unknown sleep length, 2T idle",
		.entered = 0, .sleep_ns = KTIME_MAX,
		.idle_ns = 2 * TEO_TICK, .span_ns = 2 * TEO_TICK,
		.metric = TEO_TICK_HIT,
	}, {
		/*
		 * lat(2) = 40 us: 125 - 20 = 105 us, still bin 2 (the next
		 * case moves to bin 1); 300 - 105 = 195 us short of the timer,
		 * not below 20 us: an intercept.
		 */
		.desc = "exit latency: half of 40 us off 125 us idle",
		.entered = 2, .sleep_ns = TEO_US(300),
		.idle_ns = TEO_US(125), .span_ns = TEO_US(125),
		.metric = TEO_INTERCEPT, .bin = 2,
	}, {
		/* 115 - 20 = 95 us: the correction moves it to bin 1. */
		.desc = "exit latency: half of 40 us off 115 us idle",
		.entered = 2, .sleep_ns = TEO_US(300),
		.idle_ns = TEO_US(115), .span_ns = TEO_US(115),
		.metric = TEO_INTERCEPT, .bin = 1,
	}, {
		/* 15 < 40 us: halved to 7.5 us, bin 0 (15 - 20 would wrap). */
		.desc = "idle below exit latency: 15 us halved",
		.entered = 2, .sleep_ns = TEO_US(300),
		.idle_ns = TEO_US(15), .span_ns = TEO_US(15),
		.metric = TEO_INTERCEPT, .bin = 0,
	}, {
		/* 25 < 40 us: 12.5 us, bin 1 (25 - 20 = 5 us would be bin 0). */
		.desc = "idle below exit latency: 25 us halved",
		.entered = 2, .sleep_ns = TEO_US(300),
		.idle_ns = TEO_US(25), .span_ns = TEO_US(25),
		.metric = TEO_INTERCEPT, .bin = 1,
	}, {
		/* Span == sleep length: whole sleep length, timer bin 2. */
		.desc = "woke at the timer: 90 us idle, 300 us span",
		.entered = 2, .sleep_ns = TEO_US(300),
		.idle_ns = TEO_US(90), .span_ns = TEO_US(300),
		.metric = TEO_HIT, .bin = 2,
	}, {
		.desc = "woke after the timer: 90 us idle, 350 us span",
		.entered = 2, .sleep_ns = TEO_US(300),
		.idle_ns = TEO_US(90), .span_ns = TEO_US(350),
		.metric = TEO_HIT, .bin = 2,
	}, {
		/* 90 - 20 = 70 us measured: bin 1. */
		.desc = "woke 1 ns before the timer: 90 us idle",
		.entered = 2, .sleep_ns = TEO_US(300),
		.idle_ns = TEO_US(90), .span_ns = TEO_US(300) - 1,
		.metric = TEO_INTERCEPT, .bin = 1,
	}, {
		/* Safety net: counts as the whole 900 us, bin 3. */
		.desc = "polling timed out after 20 us, 900 us timer",
		.entered = 0, .sleep_ns = TEO_US(900),
		.idle_ns = TEO_US(20), .span_ns = TEO_US(20),
		.poll_timeout = true,
		.metric = TEO_HIT, .bin = 3,
	}, {
		.desc = "polling woken after 20 us, 900 us timer",
		.entered = 0, .sleep_ns = TEO_US(900),
		.idle_ns = TEO_US(20), .span_ns = TEO_US(20),
		.metric = TEO_INTERCEPT, .bin = 1,
	}, {
		/* Safety net: counts as the whole 3T, tick bin. */
		.desc = "tick woke the CPU after T, 3T timer",
		.entered = 3, .sleep_ns = 3 * TEO_TICK,
		.idle_ns = TEO_TICK, .span_ns = TEO_TICK,
		.tick_woke = true,
		.metric = TEO_TICK_HIT,
	}, {
		/* T - lat(3) / 2 = T - 100 us, in [600 us, T): bin 3. */
		.desc = "other wakeup after T, 3T timer",
		.entered = 3, .sleep_ns = 3 * TEO_TICK,
		.idle_ns = TEO_TICK, .span_ns = TEO_TICK,
		.metric = TEO_INTERCEPT, .bin = 3,
	}, {
		/*
		 * Every tick wakeup is a safety net, also with a sleep length
		 * that is not beyond T: the whole T, and T >= T is the tick bin.
		 */
		.desc = "tick woke the CPU after 300 us, T timer",
		.entered = 1, .sleep_ns = TEO_TICK,
		.idle_ns = TEO_US(300), .span_ns = TEO_US(300),
		.tick_woke = true,
		.metric = TEO_TICK_HIT,
	}, {
		/* Safety net: the whole 900 us, bin 3 (900 us < T). */
		.desc = "tick woke the CPU after 500 us, 900 us timer",
		.entered = 1, .sleep_ns = TEO_US(900),
		.idle_ns = TEO_US(500), .span_ns = TEO_US(500),
		.tick_woke = true,
		.metric = TEO_HIT, .bin = 3,
	},
};

KUNIT_ARRAY_PARAM_DESC(teo_update_cases, teo_update_cases, desc);

/* Account the single wakeup that @c describes in fresh statistics. */
static void teo_test_run_update(struct teo_test_ctx *ctx,
				const struct teo_update_case *c)
{
	teo_test_load(ctx, c->drv ? c->drv : &teo_ladder);
	teo_test_enable(ctx);
	ctx->tick_woke = c->tick_woke;
	ctx->dev->poll_time_limit = c->poll_timeout;
	teo_test_arm(ctx, c->sleep_ns);
	teo_test_wake(ctx, c->entered, c->idle_ns, c->span_ns);
	teo_test_update(ctx);
}

/* Run @count cases of a table, each in fresh statistics. */
static void teo_test_expect_updates(struct kunit *test,
				    const struct teo_update_case *cases,
				    int count)
{
	struct teo_test_ctx *ctx = test->priv;
	int i;

	for (i = 0; i < count; i++) {
		const struct teo_update_case *c = &cases[i];

		teo_test_run_update(ctx, c);
		teo_test_expect_only_in(test, c->desc, c->metric, c->bin,
					PULSE);
		KUNIT_EXPECT_EQ_MSG(test, teo_test_data(ctx)->total, PULSE,
				    "%s: total", c->desc);
	}
}

/* One wakeup scores exactly one PULSE, in the expected metric. */
static void teo_update_classifies(struct kunit *test)
{
	teo_test_expect_updates(test, test->param_value, 1);
}

/*
 * A hit needs the timer: the same bin as the sleep length is not enough.
 * On teo_ladder_tick (no tick bin: the deepest residency is T) the last bin
 * [T, ...) has no end, so every long wakeup shares it with a far timer.
 */
static const struct teo_update_case teo_hit_timer_cases[] = {
	{
		/*
		 * 2T - lat(3) / 2 = 2T - 100 us >= T: bin 3, the bin of the
		 * 10T timer too; 10T - (2T - 100 us) = 8T + 100 us short of
		 * it, not below 100 us: an intercept.
		 */
		.desc = "last bin, 2T idle, 10T timer",
		.drv = &teo_ladder_tick,
		.entered = 3, .sleep_ns = 10 * TEO_TICK,
		.idle_ns = 2 * TEO_TICK, .span_ns = 2 * TEO_TICK,
		.metric = TEO_INTERCEPT, .bin = 3,
	}, {
		/* Span == sleep length: the whole 10T, a hit in bin 3. */
		.desc = "last bin, woke by the 10T timer",
		.drv = &teo_ladder_tick,
		.entered = 3, .sleep_ns = 10 * TEO_TICK,
		.idle_ns = 10 * TEO_TICK, .span_ns = 10 * TEO_TICK,
		.metric = TEO_HIT, .bin = 3,
	}, {
		/*
		 * teo_ladder, from state 2 (lat 40 us): 25 us < 40 us is halved
		 * to 12.5 us, bin 1, the bin of the 32.499 us timer too; the
		 * measured time is 32499 - 12500 = 19999 ns short of the timer,
		 * below lat / 2 = 20000 ns: the timer ended it, a hit.
		 */
		.desc = "within half the exit latency of the timer",
		.entered = 2, .sleep_ns = TEO_US(32) + 499,
		.idle_ns = TEO_US(25), .span_ns = TEO_US(25),
		.metric = TEO_HIT, .bin = 1,
	}, {
		/* 1 ns later timer: 32500 - 12500 = 20000 ns, not below. */
		.desc = "half the exit latency short of the timer",
		.entered = 2, .sleep_ns = TEO_US(32) + 500,
		.idle_ns = TEO_US(25), .span_ns = TEO_US(25),
		.metric = TEO_INTERCEPT, .bin = 1,
	},
};

static void teo_update_hit_needs_timer(struct kunit *test)
{
	teo_test_expect_updates(test, teo_hit_timer_cases,
				ARRAY_SIZE(teo_hit_timer_cases));
}

/*
 * The tick is no event of the workload: a wakeup by it counts as the whole
 * sleep length even when the timer is due within the tick period, after
 * the next tick.  teo_ladder, state 3 entered (lat 200 us).
 */
static const struct teo_update_case teo_tick_net_cases[] = {
	{
		/*
		 * The whole 900 us: bin 3 (600 <= 900 us < T), the timer bin.
		 * Counted by its time, 850 - 100 = 750 us would be bin 3 too,
		 * but 900 - 750 = 150 us short of the timer, not below 100 us:
		 * an intercept, as the third case shows.
		 */
		.desc = "tick after 850 us, 900 us timer",
		.entered = 3, .sleep_ns = TEO_US(900),
		.idle_ns = TEO_US(850), .span_ns = TEO_US(850),
		.tick_woke = true,
		.metric = TEO_HIT, .bin = 3,
	}, {
		/*
		 * A timer one tick period away, the tick 100 us before it:
		 * the whole T, and T >= T is the tick bin.  By its time it
		 * would be T - 200 us (>= 800 us, bin 3) under a tick-bin
		 * timer: an intercept.
		 */
		.desc = "tick after T - 100 us, T timer",
		.entered = 3, .sleep_ns = TEO_TICK,
		.idle_ns = TEO_TICK - TEO_US(100),
		.span_ns = TEO_TICK - TEO_US(100),
		.tick_woke = true,
		.metric = TEO_TICK_HIT,
	}, {
		.desc = "other wakeup after 850 us, 900 us timer",
		.entered = 3, .sleep_ns = TEO_US(900),
		.idle_ns = TEO_US(850), .span_ns = TEO_US(850),
		.metric = TEO_INTERCEPT, .bin = 3,
	},
};

static void teo_update_tick_wakeup_is_safety_net(struct kunit *test)
{
	teo_test_expect_updates(test, teo_tick_net_cases,
				ARRAY_SIZE(teo_tick_net_cases));
}

/*
 * The tick's flag is read, and so cleared, on every wakeup: one that ends
 * in a polling timeout must not leave it set for the next wakeup, which
 * would then pass for a tick wakeup.
 */
static void teo_update_tick_flag_read_every_wakeup(struct kunit *test)
{
	struct teo_test_ctx *ctx = test->priv;

	teo_test_load(ctx, &teo_ladder);
	ctx->dev->poll_time_limit = true;
	ctx->tick_woke = true;
	teo_test_arm(ctx, 3 * TEO_TICK);
	teo_test_wake(ctx, 0, TEO_US(20), TEO_US(20));
	KUNIT_EXPECT_EQ(test, teo_test_data(ctx)->span_ns, 3 * TEO_TICK);
	KUNIT_EXPECT_EQ(test, ctx->tick_woke_calls, 1);
	KUNIT_EXPECT_FALSE(test, ctx->tick_woke);

	/* An interrupt 20 us into the next 3T sleep: its own span. */
	teo_test_arm(ctx, 3 * TEO_TICK);
	teo_test_wake(ctx, 0, TEO_US(20), TEO_US(20));
	KUNIT_EXPECT_EQ(test, teo_test_data(ctx)->span_ns, TEO_US(20));
	KUNIT_EXPECT_EQ(test, ctx->tick_woke_calls, 2);
}

/* Reflect consumes the polling timeout and spans the whole sleep length. */
static void teo_update_poll_timeout_consumed(struct kunit *test)
{
	struct teo_test_ctx *ctx = test->priv;

	teo_test_load(ctx, &teo_ladder);
	ctx->dev->poll_time_limit = true;
	teo_test_arm(ctx, TEO_US(900));
	teo_test_wake(ctx, 0, TEO_US(20), TEO_US(20));

	KUNIT_EXPECT_FALSE(test, ctx->dev->poll_time_limit);
	KUNIT_EXPECT_EQ(test, teo_test_data(ctx)->span_ns, TEO_US(900));

	/* The next wakeup is an ordinary one again. */
	teo_test_arm(ctx, TEO_US(900));
	teo_test_wake(ctx, 0, TEO_US(20), TEO_US(20));
	KUNIT_EXPECT_EQ(test, teo_test_data(ctx)->span_ns, TEO_US(20));
}

/* The tick bin is kept only while the deepest residency is below T. */
static void teo_update_tick_bin_below_tick(struct kunit *test)
{
	struct teo_test_ctx *ctx = test->priv;

	/* Deepest residency 600 us < T: a 2T timer wakeup is a TH hit. */
	teo_test_load(ctx, &teo_ladder);
	teo_test_account(ctx, 2 * TEO_TICK, 3, 2 * TEO_TICK);

	teo_test_expect_only(test, TEO_TICK_HIT, 0, PULSE);
	KUNIT_EXPECT_EQ(test, teo_test_data(ctx)->total, PULSE);
}

static void teo_update_no_tick_bin_at_tick(struct kunit *test)
{
	struct teo_test_ctx *ctx = test->priv;

	/*
	 * Deepest residency == T: no tick bin, the same wakeup hits bin 3,
	 * and a stale TH is neither decayed (800 stays) nor in total.
	 */
	teo_test_load(ctx, &teo_ladder_tick);
	teo_test_data(ctx)->tick_hits = 800;
	teo_test_account(ctx, 2 * TEO_TICK, 3, 2 * TEO_TICK);

	KUNIT_EXPECT_EQ(test, teo_test_data(ctx)->tick_hits, 800);
	KUNIT_EXPECT_EQ(test, teo_test_data(ctx)->total, PULSE);
	teo_test_data(ctx)->tick_hits = 0;
	teo_test_expect_only(test, TEO_HIT, 3, PULSE);
}

/* One update decays every metric by m >> 3 before adding PULSE. */
static void teo_update_decay_one_step(struct kunit *test)
{
	struct teo_test_ctx *ctx = test->priv;
	struct teo_cpu *cpu_data = teo_test_data(ctx);

	teo_test_load(ctx, &teo_ladder);
	cpu_data->bins[1].hits = 8000;
	cpu_data->bins[2].intercepts = 7;
	cpu_data->bins[0].intercepts = 9;
	cpu_data->bins[3].hits = 16;
	cpu_data->tick_hits = 1000;
	cpu_data->total = 1;	/* stale: the update recomputes it */

	/* A hit in bin 0: woke by a 5 us timer, from state 0. */
	teo_test_account(ctx, TEO_US(5), 0, TEO_US(5));

	/*
	 * 8000 - 1000; 7 >> 3 = 0, too small to decay: dropped to 0;
	 * 9 - 1; 16 - 2.
	 */
	KUNIT_EXPECT_EQ(test, cpu_data->bins[1].hits, 7000);
	KUNIT_EXPECT_EQ(test, cpu_data->bins[2].intercepts, 0);
	KUNIT_EXPECT_EQ(test, cpu_data->bins[0].intercepts, 8);
	KUNIT_EXPECT_EQ(test, cpu_data->bins[3].hits, 14);
	/* 1000 - 125; the new hit is not decayed: 0 + 1024. */
	KUNIT_EXPECT_EQ(test, cpu_data->tick_hits, 875);
	KUNIT_EXPECT_EQ(test, cpu_data->bins[0].hits, PULSE);
	/* 7000 + 0 + 8 + 14 + 875 + 1024 */
	KUNIT_EXPECT_EQ(test, cpu_data->total, 8921);
}

/*
 * Repeated hits: m(k+1) = m(k) - m(k) / 8 + 1024, rounded down.  Each is a
 * wakeup by a 300 us timer from state 0: the whole sleep length, bin 2.
 */
static void teo_update_decay_series(struct kunit *test)
{
	/*
	 * 0 -> 1024; 1024 - 128 + 1024 = 1920; 1920 - 240 + 1024 = 2704;
	 * 2704 - 338 + 1024 = 3390; 3390 - 423 + 1024 = 3991.
	 */
	static const unsigned int expected[] = { 1024, 1920, 2704, 3390, 3991 };
	struct teo_test_ctx *ctx = test->priv;
	struct teo_cpu *cpu_data = teo_test_data(ctx);
	unsigned int k;

	teo_test_load(ctx, &teo_ladder);
	for (k = 0; k < ARRAY_SIZE(expected); k++) {
		teo_test_account(ctx, TEO_US(300), 0, TEO_US(300));
		KUNIT_EXPECT_EQ_MSG(test, cpu_data->bins[2].hits, expected[k],
				    "after %u hits", k + 1);
		KUNIT_EXPECT_EQ(test, cpu_data->total, expected[k]);
	}
}

/*
 * The gap to 8 * PULSE shrinks as d -> d - ceil(d / 8) (which is
 * floor(7d / 8)), from 8192 to 0 in under 100 steps, and 8192 is a fixed
 * point: 8192 - 1024 + 1024.  So 200 hits leave exactly 8 * PULSE.  (The
 * drop to zero of a metric below 8 plays no part: the metric starts at 0,
 * where decaying and dropping agree, and is at least 1024 from then on.)
 */
static void teo_update_decay_saturates(struct kunit *test)
{
	struct teo_test_ctx *ctx = test->priv;
	int k;

	teo_test_load(ctx, &teo_ladder);
	for (k = 0; k < TEO_LONG_RUN; k++)
		teo_test_account(ctx, TEO_US(300), 0, TEO_US(300));
	teo_test_expect_only(test, TEO_HIT, 2, TEO_MAX_METRIC);
	KUNIT_EXPECT_EQ(test, teo_test_data(ctx)->total, TEO_MAX_METRIC);
}

/*
 * A metric too small to lose anything to the shift (m < 8, m >> 3 = 0)
 * drops to zero instead of staying forever.
 */
static void teo_update_residue_drops_to_zero(struct kunit *test)
{
	struct teo_test_ctx *ctx = test->priv;
	struct teo_cpu *cpu_data = teo_test_data(ctx);
	bool stop_tick;
	int k;

	teo_test_load(ctx, &teo_ladder);
	cpu_data->bins[0].intercepts = 7;
	cpu_data->bins[1].hits = 1;
	cpu_data->bins[1].intercepts = 8;
	cpu_data->bins[2].hits = 15;
	cpu_data->bins[2].intercepts = 16;
	cpu_data->tick_hits = 7;

	/* Woke by a 900 us timer: a hit in bin 3. */
	teo_test_account(ctx, TEO_US(900), 0, TEO_US(900));
	/* 7 -> 0, 1 -> 0, 8 - 1 = 7, 15 - 1 = 14, 16 - 2 = 14, TH 7 -> 0. */
	KUNIT_EXPECT_EQ(test, cpu_data->bins[0].intercepts, 0);
	KUNIT_EXPECT_EQ(test, cpu_data->bins[1].hits, 0);
	KUNIT_EXPECT_EQ(test, cpu_data->bins[1].intercepts, 7);
	KUNIT_EXPECT_EQ(test, cpu_data->bins[2].hits, 14);
	KUNIT_EXPECT_EQ(test, cpu_data->bins[2].intercepts, 14);
	KUNIT_EXPECT_EQ(test, cpu_data->tick_hits, 0);
	/* 7 + 14 + 14 + 1024 */
	KUNIT_EXPECT_EQ(test, cpu_data->total, 1059);

	/* Again: 7 -> 0, 14 - 1 = 13 twice, H[3] 1024 - 128 + 1024. */
	teo_test_account(ctx, TEO_US(900), 0, TEO_US(900));
	KUNIT_EXPECT_EQ(test, cpu_data->bins[1].intercepts, 0);
	KUNIT_EXPECT_EQ(test, cpu_data->bins[2].hits, 13);
	KUNIT_EXPECT_EQ(test, cpu_data->bins[2].intercepts, 13);
	KUNIT_EXPECT_EQ(test, cpu_data->bins[3].hits, 1920);
	/* 13 + 13 + 1920 */
	KUNIT_EXPECT_EQ(test, cpu_data->total, 1946);

	/*
	 * The life of one intercept: a 5 us wakeup under a 300 us timer
	 * (bin 0), then hits in bin 2 only.  1024 decays as 896, 784, 686,
	 * 601, 526, 461, 404, 354, 310, 272, 238, 209, 183, 161, 141, 124,
	 * 109, 96, 84, 74, 65, 57, 50, 44, 39, 35, 31, 28, 25, 22, 20, 18,
	 * 16, 14, 13, 12, 11, 10, 9, 8 (40 updates), 8 - 1 = 7 (41) and
	 * 7 >> 3 = 0: gone at the 42nd.
	 */
	teo_test_enable(ctx);
	teo_test_account(ctx, TEO_US(300), 0, TEO_US(5));
	for (k = 0; k < 41; k++)
		teo_test_account(ctx, TEO_US(300), 0, TEO_US(300));
	KUNIT_EXPECT_EQ(test, cpu_data->bins[0].intercepts, 7);
	teo_test_account(ctx, TEO_US(300), 0, TEO_US(300));
	KUNIT_EXPECT_EQ(test, cpu_data->bins[0].intercepts, 0);

	/*
	 * What a residue would decide.  teo_sel: 200 wakeups by a 1 ms
	 * timer (hits in bin 2, [400, 1500 us)), one 5 us interrupt (from
	 * state 2: 5 < lat 100 us, halved to 2.5 us, bin 0), then 42 more
	 * 1 ms timers.  Each of those selections has candidate 2 with
	 * ib = I[0] <= 1024 against R = H[2] + I[0], H[2] >= 7168: no walk,
	 * state 2.  Their updates fold in the interrupt and decay it 41
	 * times, to 7 as above; the next selection decays it to 0.  With a
	 * 10T timer its candidate is 3, ib = I[0] + I[1] + I[2] = 0: no walk,
	 * state 3 (10T >= T stops the tick).  Had the 7 stayed, hb = H[2]
	 * would leave R = 7 and 2 * 7 > 7: the walk would add 0, 0, 7 from
	 * 0 and stop at state 0 (14 > 7), with the tick kept.
	 */
	teo_test_load(ctx, &teo_sel);
	teo_test_enable(ctx);
	KUNIT_EXPECT_EQ(test, teo_test_timers(ctx, TEO_MS(1), TEO_LONG_RUN, 2),
			0);
	KUNIT_EXPECT_EQ(test, teo_test_intercept(ctx, TEO_MS(1), TEO_US(5),
						 &stop_tick), 2);
	KUNIT_EXPECT_EQ(test, teo_test_timers(ctx, TEO_MS(1), 42, 2), 0);
	KUNIT_EXPECT_EQ(test, cpu_data->bins[0].intercepts, 7);
	ctx->sleep_length_ns = 10 * TEO_TICK;
	KUNIT_EXPECT_EQ(test, teo_test_select(ctx, &stop_tick), 3);
	KUNIT_EXPECT_TRUE(test, stop_tick);
	KUNIT_EXPECT_EQ(test, cpu_data->bins[0].intercepts, 0);
}

/* Bins of disabled states decay and count in total too. */
static void teo_update_decays_disabled_states(struct kunit *test)
{
	struct teo_test_ctx *ctx = test->priv;
	struct teo_cpu *cpu_data = teo_test_data(ctx);

	teo_test_load(ctx, &teo_ladder);
	teo_test_disable(ctx, BIT(1) | BIT(2));
	cpu_data->bins[1].intercepts = 800;
	cpu_data->bins[2].hits = 400;

	/* A hit in bin 3: woke by a 900 us timer. */
	teo_test_account(ctx, TEO_US(900), 0, TEO_US(900));

	/* 800 - 100, 400 - 50, total 700 + 350 + 1024. */
	KUNIT_EXPECT_EQ(test, cpu_data->bins[1].intercepts, 700);
	KUNIT_EXPECT_EQ(test, cpu_data->bins[2].hits, 350);
	KUNIT_EXPECT_EQ(test, cpu_data->bins[3].hits, PULSE);
	KUNIT_EXPECT_EQ(test, cpu_data->total, 2074);
}

/* A selection folds in the last wakeup once, and only after a wakeup. */
static void teo_update_once_per_wakeup(struct kunit *test)
{
	struct teo_test_ctx *ctx = test->priv;
	struct teo_cpu *cpu_data = teo_test_data(ctx);
	bool stop_tick;
	int idx;

	teo_test_load(ctx, &teo_ladder);
	/* Empty bins, 300 us timer: state 3 (600 us) does not fit, 2 does. */
	ctx->sleep_length_ns = TEO_US(300);
	idx = teo_test_select(ctx, &stop_tick);
	KUNIT_EXPECT_EQ(test, idx, 2);
	KUNIT_EXPECT_EQ(test, cpu_data->total, 0);

	/* 30 us < lat(2) = 40 us: halved to 15 us, an intercept in bin 1. */
	teo_test_wake(ctx, idx, TEO_US(30), TEO_US(30));
	teo_test_select(ctx, &stop_tick);
	teo_test_expect_only(test, TEO_INTERCEPT, 1, PULSE);
	KUNIT_EXPECT_EQ(test, ctx->dev->last_state_idx, -1);

	/* No wakeup reported since: nothing decays, nothing is added. */
	teo_test_select(ctx, &stop_tick);
	teo_test_expect_only(test, TEO_INTERCEPT, 1, PULSE);
	KUNIT_EXPECT_EQ(test, cpu_data->total, PULSE);
}

static struct kunit_case teo_update_test_cases[] = {
	KUNIT_CASE_PARAM(teo_update_classifies, teo_update_cases_gen_params),
	KUNIT_CASE(teo_update_hit_needs_timer),
	KUNIT_CASE(teo_update_tick_wakeup_is_safety_net),
	KUNIT_CASE(teo_update_tick_flag_read_every_wakeup),
	KUNIT_CASE(teo_update_poll_timeout_consumed),
	KUNIT_CASE(teo_update_tick_bin_below_tick),
	KUNIT_CASE(teo_update_no_tick_bin_at_tick),
	KUNIT_CASE(teo_update_decay_one_step),
	KUNIT_CASE(teo_update_decay_series),
	KUNIT_CASE(teo_update_decay_saturates),
	KUNIT_CASE(teo_update_residue_drops_to_zero),
	KUNIT_CASE(teo_update_decays_disabled_states),
	KUNIT_CASE(teo_update_once_per_wakeup),
	{}
};

static struct kunit_suite teo_update_suite = {
	.name = "cpuidle_teo_update",
	.init = teo_test_init,
	.test_cases = teo_update_test_cases,
};

/* ---------------------------------------------------------------------- */
/* cpuidle_teo_select: the choice of a state and of the tick */

struct teo_no_choice_case {
	const char *desc;
	const struct teo_test_driver *drv;
	unsigned long disabled;
	int expected;
	bool stop_tick;
};

/*
 * With at most one usable state, that state (or 0) is returned at once,
 * without the sleep length; a single enabled state may stop the tick if
 * its residency reaches T (the expected idle time is its residency).
 */
static const struct teo_no_choice_case teo_no_choice_cases[] = {
	{
		.desc = "a single state",
		.drv = &teo_one, .expected = 0, .stop_tick = false,
	}, {
		.desc = "no state enabled",
		.drv = &teo_sel, .disabled = GENMASK(3, 0),
		.expected = 0, .stop_tick = false,
	}, {
		.desc = "only state 0 enabled",
		.drv = &teo_sel, .disabled = GENMASK(3, 1),
		.expected = 0, .stop_tick = false,
	}, {
		.desc = "only a 50 us state enabled",
		.drv = &teo_sel, .disabled = BIT(0) | BIT(2) | BIT(3),
		.expected = 1, .stop_tick = false,
	}, {
		.desc = "only a T/2 state enabled",
		.drv = &teo_short, .disabled = GENMASK(2, 0),
		.expected = 3, .stop_tick = false,
	}, {
		.desc = "only a T state enabled",
		.drv = &teo_deep, .disabled = BIT(0) | BIT(1) | BIT(3),
		.expected = 2, .stop_tick = true,
	}, {
		.desc = "only a 3T state enabled",
		.drv = &teo_deep, .disabled = GENMASK(2, 0),
		.expected = 3, .stop_tick = true,
	},
};

KUNIT_ARRAY_PARAM_DESC(teo_no_choice_cases, teo_no_choice_cases, desc);

static void teo_select_no_choice(struct kunit *test)
{
	const struct teo_no_choice_case *c = test->param_value;
	struct teo_test_ctx *ctx = test->priv;
	bool stop_tick;
	int idx;

	teo_test_load(ctx, c->drv);
	teo_test_disable(ctx, c->disabled);
	ctx->sleep_length_ns = 10 * TEO_TICK;
	idx = teo_test_select(ctx, &stop_tick);

	KUNIT_EXPECT_EQ(test, idx, c->expected);
	KUNIT_EXPECT_EQ(test, stop_tick, c->stop_tick);
	KUNIT_EXPECT_EQ(test, ctx->sleep_length_calls, 0);
	KUNIT_EXPECT_EQ(test, teo_test_data(ctx)->sleep_length_ns, KTIME_MAX);
}

/* Without a choice, the wakeups are still accounted. */
static void teo_select_single_state_counts_wakeups(struct kunit *test)
{
	struct teo_test_ctx *ctx = test->priv;
	bool stop_tick;

	teo_test_load(ctx, &teo_one);
	/*
	 * Sleep length unknown (infinite): the timer bin is the tick bin
	 * (1 us < T); 50 - 0.5 = 49.5 us lands in bin 0, an intercept.
	 */
	teo_test_intercept(ctx, 10 * TEO_TICK, TEO_US(50), &stop_tick);
	teo_test_select(ctx, &stop_tick);

	teo_test_expect_only(test, TEO_INTERCEPT, 0, PULSE);
	KUNIT_EXPECT_EQ(test, teo_test_data(ctx)->total, PULSE);
}

/* A disabled deepest state makes the next one the candidate. */
static void teo_select_deepest_disabled(struct kunit *test)
{
	struct teo_test_ctx *ctx = test->priv;
	bool stop_tick;
	int idx;

	teo_test_disable(ctx, BIT(3));
	ctx->sleep_length_ns = 10 * TEO_TICK;
	idx = teo_test_select(ctx, &stop_tick);

	KUNIT_EXPECT_EQ(test, idx, 2);
	KUNIT_EXPECT_TRUE(test, stop_tick);
	KUNIT_EXPECT_EQ(test, ctx->sleep_length_calls, 1);
}

struct teo_fit_case {
	const char *desc;
	s64 sleep_ns;
	unsigned long disabled;
	int expected;
};

/*
 * teo_sel residencies 1, 50, 400, 1500 us; empty bins, so no walk: the
 * result is the candidate, the deepest enabled state that fits into the
 * sleep length, or the shallowest enabled one if none fits.
 */
static const struct teo_fit_case teo_fit_cases[] = {
	{ "10T timer: deepest", 10 * TEO_TICK, 0, 3 },
	{ "200 us timer: 50 us state", TEO_US(200), 0, 1 },
	{ "400 us timer: 400 us state", TEO_US(400), 0, 2 },
	{ "400 us - 1 ns timer: 50 us state", TEO_US(400) - 1, 0, 1 },
	{ "800 us timer, 400 us state disabled", TEO_US(800), BIT(2), 1 },
	{ "200 us timer, 50 us state disabled", TEO_US(200), BIT(1), 0 },
	{ "0 ns timer: shallowest", 0, 0, 0 },
	{ "0 ns timer, state 0 disabled", 0, BIT(0), 1 },
};

KUNIT_ARRAY_PARAM_DESC(teo_fit_cases, teo_fit_cases, desc);

static void teo_select_fits_sleep_length(struct kunit *test)
{
	const struct teo_fit_case *c = test->param_value;
	struct teo_test_ctx *ctx = test->priv;
	bool stop_tick;
	int idx;

	teo_test_disable(ctx, c->disabled);
	ctx->sleep_length_ns = c->sleep_ns;
	idx = teo_test_select(ctx, &stop_tick);

	KUNIT_EXPECT_EQ(test, idx, c->expected);
	KUNIT_EXPECT_EQ(test, ctx->sleep_length_calls, 1);
	KUNIT_EXPECT_EQ(test, teo_test_data(ctx)->sleep_length_ns, c->sleep_ns);
}

struct teo_latency_case {
	const char *desc;
	s64 limit_ns;
	int expected;
};

/*
 * teo_sel exit latencies 1, 20, 100, 500 us, 10T timer.  The deepest state
 * above 0 within the limit caps the choice; 0 when none is.  There is a
 * choice of states either way, so the sleep length is queried and recorded
 * every time, also when the limit leaves state 0 alone.
 */
static const struct teo_latency_case teo_latency_cases[] = {
	{ "limit 0", 0, 0 },
	{ "limit 19 us", TEO_US(19), 0 },
	{ "limit 20 us", TEO_US(20), 1 },
	{ "limit 99 us", TEO_US(99), 1 },
	{ "limit 100 us", TEO_US(100), 2 },
	{ "limit 499 us", TEO_US(499), 2 },
	{ "limit 500 us", TEO_US(500), 3 },
	{ "no limit", S64_MAX, 3 },
};

KUNIT_ARRAY_PARAM_DESC(teo_latency_cases, teo_latency_cases, desc);

static void teo_select_latency_limit(struct kunit *test)
{
	const struct teo_latency_case *c = test->param_value;
	struct teo_test_ctx *ctx = test->priv;
	bool stop_tick;
	int idx;

	ctx->latency_limit_ns = c->limit_ns;
	ctx->sleep_length_ns = 10 * TEO_TICK;
	idx = teo_test_select(ctx, &stop_tick);

	KUNIT_EXPECT_EQ(test, idx, c->expected);
	/* 10T expected idle stops the tick for any state above 0. */
	KUNIT_EXPECT_EQ(test, stop_tick, c->expected > 0);
	KUNIT_EXPECT_EQ(test, ctx->sleep_length_calls, 1);
	KUNIT_EXPECT_EQ(test, teo_test_data(ctx)->sleep_length_ns,
			10 * TEO_TICK);
}

/* A disabled state within the limit does not count for it. */
static void teo_select_latency_limit_disabled_state(struct kunit *test)
{
	struct teo_test_ctx *ctx = test->priv;
	bool stop_tick;
	int idx;

	/* lat(2) = 100 us <= 150 us, but state 2 is off: state 1. */
	teo_test_disable(ctx, BIT(2));
	ctx->latency_limit_ns = TEO_US(150);
	ctx->sleep_length_ns = 10 * TEO_TICK;
	idx = teo_test_select(ctx, &stop_tick);

	KUNIT_EXPECT_EQ(test, idx, 1);
}

struct teo_poll_case {
	const char *desc;
	bool polls;
	s64 c1e_res_ns;
	s64 limit_ns;
	int expected;
	bool stop_tick;
};

/*
 * Sapphire Rapids table, 10T timer, empty bins.  A polling state 0 buys no
 * shortcut: however shallow the candidate left by the latency limit, the
 * sleep length is queried and recorded, and 10T >= T stops the tick for a
 * state that does not poll (C1 1 us, C1E, C6).  State 0 itself, left by a
 * limit of 0, keeps the tick.
 */
static const struct teo_poll_case teo_poll_cases[] = {
	{ "POLL, limit 0: POLL", true, TEO_US(4), 0, 0, false },
	{ "POLL, C1 (1 us) by limit", true, TEO_US(4), TEO_US(1), 1, true },
	{ "POLL, C1E (4 us) by limit", true, TEO_US(4), TEO_US(2), 2, true },
	{ "POLL, C1E at 15 us - 1 ns", true, TEO_US(15) - 1, TEO_US(2), 2,
	  true },
	{ "POLL, C1E at 15 us", true, TEO_US(15), TEO_US(2), 2, true },
	{ "no polling state 0, C1E 4 us", false, TEO_US(4), TEO_US(2), 2,
	  true },
	{ "POLL, C6 (800 us)", true, TEO_US(4), S64_MAX, 3, true },
};

KUNIT_ARRAY_PARAM_DESC(teo_poll_cases, teo_poll_cases, desc);

static void teo_select_no_polling_shortcut(struct kunit *test)
{
	const struct teo_poll_case *c = test->param_value;
	struct teo_test_ctx *ctx = test->priv;
	bool stop_tick;
	int idx;

	teo_test_load(ctx, &teo_spr);
	if (!c->polls)
		ctx->drv->states[0].flags = 0;
	ctx->drv->states[2].target_residency_ns = c->c1e_res_ns;
	ctx->latency_limit_ns = c->limit_ns;
	ctx->sleep_length_ns = 10 * TEO_TICK;
	idx = teo_test_select(ctx, &stop_tick);

	KUNIT_EXPECT_EQ(test, idx, c->expected);
	KUNIT_EXPECT_EQ(test, stop_tick, c->stop_tick);
	KUNIT_EXPECT_EQ(test, ctx->sleep_length_calls, 1);
	KUNIT_EXPECT_EQ(test, teo_test_data(ctx)->sleep_length_ns,
			10 * TEO_TICK);
}

struct teo_walk_case {
	const char *desc;
	const struct teo_test_driver *drv;
	unsigned long disabled;
	bool tick_stopped;
	s64 limit_ns;		/* 0: no latency limit */
	struct teo_test_bins bins;
	int expected;
};

/*
 * The intercept rule on hand-made bins, with a 10T timer so the sleep length
 * never limits the result.  Candidate 3 unless a latency limit caps it;
 * with candidate 3, ib = I[0] + I[1] + I[2], hb = H[0] + H[1] + H[2] and
 * R = total - hb.  The walk runs when 2 * ib > R; it starts from R - ib,
 * adds I[2], I[1], I[0] and stops at the first bin where 2 * sum > R.
 */
static const struct teo_walk_case teo_walk_cases[] = {
	{
		/*
		 * ib 4500: 9000 > 6500.  From 2000: 2500 (5000 > 6500? no),
		 * 5500 (11000 > 6500): state 1.
		 */
		.desc = "intercepts mostly in bin 1",
		.drv = &teo_sel,
		.bins = { .intercepts = { 1000, 3000, 500, 0 },
			  .hits = { 0, 0, 0, 2000 }, .total = 6500 },
		.expected = 1,
	}, {
		/* ib 5000: 10000 > 6000.  From 1000: 1500, 2000, 6000 (> 3000). */
		.desc = "intercepts mostly in bin 0",
		.drv = &teo_sel,
		.bins = { .intercepts = { 4000, 500, 500, 0 },
			  .hits = { 0, 0, 0, 1000 }, .total = 6000 },
		.expected = 0,
	}, {
		/* ib 3000: 6000 > 6000 fails, no walk. */
		.desc = "intercepts equal to the rest",
		.drv = &teo_sel,
		.bins = { .intercepts = { 0, 3000, 0, 0 },
			  .hits = { 0, 0, 0, 3000 }, .total = 6000 },
		.expected = 3,
	}, {
		/*
		 * ib 3000: 6000 > 5999, walk.  From 2999: 2999 (5998 > 5999?
		 * no), 5999 (> 2999.5): state 1.
		 */
		.desc = "intercepts one above the rest",
		.drv = &teo_sel,
		.bins = { .intercepts = { 0, 3000, 0, 0 },
			  .hits = { 0, 0, 0, 2999 }, .total = 5999 },
		.expected = 1,
	}, {
		/*
		 * ib 3000, hb 2000: 6000 > 7000 - 2000 = 5000.  From 2000:
		 * 2000 (4000 > 5000? no), 5000 (10000 > 5000): state 1.
		 */
		.desc = "hits below the candidate do not count against",
		.drv = &teo_sel,
		.bins = { .intercepts = { 0, 3000, 0, 0 },
			  .hits = { 0, 2000, 0, 2000 }, .total = 7000 },
		.expected = 1,
	}, {
		/*
		 * ib 5000: 10000 > 6000.  From 1000: 3000 at bin 2, exactly
		 * half of R (6000 > 6000 fails), 5000 (10000 > 6000): state 1.
		 */
		.desc = "exactly half of the wakeups does not stop the walk",
		.drv = &teo_sel,
		.bins = { .intercepts = { 1000, 2000, 2000, 0 },
			  .hits = { 0, 0, 0, 1000 }, .total = 6000 },
		.expected = 1,
	}, {
		/* ib 1000: 2000 > 5000 fails; I[3] is not below state 3. */
		.desc = "intercepts of the last bin are not below it",
		.drv = &teo_sel,
		.bins = { .intercepts = { 1000, 0, 0, 4000 }, .total = 5000 },
		.expected = 3,
	}, {
		/*
		 * ib 4000: 8000 > 5000.  From 1000: 1500 at 2 (the last
		 * enabled state met), 4500 (9000 > 5000) at disabled 1: 2.
		 */
		.desc = "walk stops at a disabled state",
		.drv = &teo_sel, .disabled = BIT(1),
		.bins = { .intercepts = { 500, 3000, 500, 0 },
			  .hits = { 0, 0, 0, 1000 }, .total = 5000 },
		.expected = 2,
	}, {
		/* As above with 2 off too: no enabled state met, keep 3. */
		.desc = "walk meets no enabled state",
		.drv = &teo_sel, .disabled = BIT(1) | BIT(2),
		.bins = { .intercepts = { 500, 3000, 500, 0 },
			  .hits = { 0, 0, 0, 1000 }, .total = 5000 },
		.expected = 3,
	}, {
		/* Sums as for bin 0 above; stop at disabled 0: last met, 1. */
		.desc = "walk stops at a disabled state 0",
		.drv = &teo_sel, .disabled = BIT(0),
		.bins = { .intercepts = { 4000, 500, 500, 0 },
			  .hits = { 0, 0, 0, 1000 }, .total = 6000 },
		.expected = 1,
	}, {
		/*
		 * Limit 50 us: lat(1) = 20 us is the deepest within it, so the
		 * candidate is 1 before any walk; ib = I[0] = 0: no walk.
		 * (Against candidate 3 the walk would have stopped at 2.)
		 */
		.desc = "latency limit caps the candidate before the walk",
		.drv = &teo_sel, .limit_ns = TEO_US(50),
		.bins = { .intercepts = { 0, 500, 3000, 0 },
			  .hits = { 0, 0, 0, 1000 }, .total = 4500 },
		.expected = 1,
	}, {
		/*
		 * Limit 100 us: candidate 2, ib = I[0] + I[1] = 4000, hb 0:
		 * 8000 > 6500.  From 6500 - 4000 = 2500: 5500 at bin 1
		 * (11000 > 6500): state 1.
		 */
		.desc = "latency limit above the walk result",
		.drv = &teo_sel, .limit_ns = TEO_US(100),
		.bins = { .intercepts = { 1000, 3000, 500, 0 },
			  .hits = { 0, 0, 0, 2000 }, .total = 6500 },
		.expected = 1,
	}, {
		/* teo_deep, tick running: from 1000: 1500, 2000, 6000: 0. */
		.desc = "tick running: walk to state 0",
		.drv = &teo_deep,
		.bins = { .intercepts = { 4000, 500, 500, 0 },
			  .hits = { 0, 0, 0, 1000 }, .total = 6000 },
		.expected = 0,
	}, {
		/*
		 * Tick stopped: 2 (res T) is kept as the fallback, 1 (50 us)
		 * is passed over, the walk stops at 0 (1 us): fallback 2.
		 */
		.desc = "tick stopped: walk passes states below T",
		.drv = &teo_deep, .tick_stopped = true,
		.bins = { .intercepts = { 4000, 500, 500, 0 },
			  .hits = { 0, 0, 0, 1000 }, .total = 6000 },
		.expected = 2,
	}, {
		/* 2 off: state 1 (50 us) is met first and ends the walk. */
		.desc = "tick stopped: no state of T or more below",
		.drv = &teo_deep, .tick_stopped = true, .disabled = BIT(2),
		.bins = { .intercepts = { 4000, 500, 500, 0 },
			  .hits = { 0, 0, 0, 1000 }, .total = 6000 },
		.expected = 3,
	},
};

KUNIT_ARRAY_PARAM_DESC(teo_walk_cases, teo_walk_cases, desc);

static void teo_select_intercept_walk(struct kunit *test)
{
	const struct teo_walk_case *c = test->param_value;
	struct teo_test_ctx *ctx = test->priv;
	bool stop_tick;
	int idx;

	teo_test_load(ctx, c->drv);
	teo_test_disable(ctx, c->disabled);
	teo_test_set_bins(test, ctx, &c->bins);
	ctx->tick_stopped = c->tick_stopped;
	if (c->limit_ns)
		ctx->latency_limit_ns = c->limit_ns;
	ctx->sleep_length_ns = 10 * TEO_TICK;
	idx = teo_test_select(ctx, &stop_tick);

	KUNIT_EXPECT_EQ(test, idx, c->expected);
	/* A selection with a choice fetches the sleep length first. */
	KUNIT_EXPECT_EQ(test, ctx->sleep_length_calls, 1);
	/* Selection alone never changes the bins. */
	KUNIT_EXPECT_EQ(test, teo_test_data(ctx)->total, c->bins.total);
}

/*
 * The candidate is the deepest enabled state within the latency limit that
 * fits into the sleep length, and the intercept check is read against it,
 * not against a deeper state that this sleep length rules out.
 */
static void teo_select_candidate_fits_sleep_length(struct kunit *test)
{
	static const struct teo_test_bins own_bin = {
		.intercepts = { 1000, 0, 0, 0 }, .hits = { 0, 3000, 0, 0 },
		.total = 4000,
	};
	static const struct teo_test_bins limited = {
		.intercepts = { 4000, 0, 0, 0 }, .hits = { 0, 0, 5000, 0 },
		.total = 9000,
	};
	struct teo_test_ctx *ctx = test->priv;
	unsigned int calls;
	bool stop_tick;
	int idx;

	/*
	 * teo_sel, 300 us timer: candidate 1 (50 us; 400 us does not fit).
	 * ib = I[0] = 1000, hb = 0, R = 4000: 2000 > 4000 fails, state 1.
	 * The hits of bin 1 are idle periods that reached the candidate's
	 * residency.  Read against state 3 they would be hits below it:
	 * R = 4000 - 3000 = 1000, 2000 > 1000, and the walk (0, 0, then
	 * 1000 > 500) would end at state 0.  300 us < T keeps the tick, and
	 * 50 us fits into the 300 us to the next timer.
	 */
	teo_test_set_bins(test, ctx, &own_bin);
	ctx->sleep_length_ns = TEO_US(300);
	idx = teo_test_select(ctx, &stop_tick);
	KUNIT_EXPECT_EQ(test, idx, 1);
	KUNIT_EXPECT_FALSE(test, stop_tick);

	/*
	 * Limit 100 us, 10T timer: candidate 2 (lat 100 us; 500 us is over
	 * the limit).  ib = I[0] + I[1] = 4000, hb = 0, R = 9000: 8000 > 9000
	 * fails, state 2.  Intercepts 4000 <= 9000 / 2 + 9000 / 8 = 5625,
	 * so 10T stops the tick.  Read against state 3, H[2] would be below
	 * it: R = 4000, and the walk (0, 0, then 4000 > 2000) would end at
	 * state 0.
	 */
	teo_test_set_bins(test, ctx, &limited);
	ctx->latency_limit_ns = TEO_US(100);
	ctx->sleep_length_ns = 10 * TEO_TICK;
	idx = teo_test_select(ctx, &stop_tick);
	KUNIT_EXPECT_EQ(test, idx, 2);
	KUNIT_EXPECT_TRUE(test, stop_tick);

	/*
	 * MT8196: clusteroff (6710 us) fits a 100 ms timer, s2idle (4295 s)
	 * never does.  200 wakeups by a 100 ms timer: candidate 2, the tick
	 * stopped (100 ms >= T), each a hit in the bin of 100 ms, bin 2
	 * (res(1) = res(2): bin 1 is empty).  Then one interrupt 50 us into
	 * clusteroff: 50 < lat 434 us, halved to 25 us, an intercept in
	 * bin 0.  Each of the next 20 selections has candidate 2, ib = I[0]
	 * <= 1024, hb = 0 and R = H[2] + I[0] with H[2] >= 7168: no walk,
	 * clusteroff again, and each queries the sleep length.  Read against
	 * s2idle, whose bin stays empty, hb would be H[2] and R = I[0]:
	 * 2 * I[0] > I[0] as long as anything is left of the intercept, and
	 * every one of them would walk down to WFI with the tick kept.
	 */
	teo_test_load(ctx, &teo_mt8196);
	teo_test_enable(ctx);
	ctx->latency_limit_ns = S64_MAX;
	KUNIT_EXPECT_EQ(test,
			teo_test_timers(ctx, TEO_MS(100), TEO_LONG_RUN, 2), 0);
	KUNIT_EXPECT_EQ(test, teo_test_intercept(ctx, TEO_MS(100), TEO_US(50),
						 &stop_tick), 2);
	calls = ctx->sleep_length_calls;
	KUNIT_EXPECT_EQ(test, teo_test_timers(ctx, TEO_MS(100), 20, 2), 0);
	KUNIT_EXPECT_EQ(test, ctx->sleep_length_calls - calls, 20);
	KUNIT_EXPECT_GT(test, teo_test_data(ctx)->bins[0].intercepts, 0);
	ctx->sleep_length_ns = TEO_MS(100);
	KUNIT_EXPECT_EQ(test, teo_test_select(ctx, &stop_tick), 2);
	KUNIT_EXPECT_TRUE(test, stop_tick);
}

/*
 * The walk weighs every wakeup that bears on the selection, not only the
 * intercepts below the candidate: with idle durations spread over all the
 * bins, the median of those intercepts alone lies too shallow.
 */
static void teo_select_walk_counts_all_wakeups(struct kunit *test)
{
	static const struct teo_test_bins spread = {
		.intercepts = { 1000, 1500, 1500, 2000 }, .total = 6000,
	};
	static const struct teo_test_bins far = {
		.intercepts = { 2000, 1000, 0, 2500 }, .total = 5500,
	};
	struct teo_test_ctx *ctx = test->priv;
	bool stop_tick;

	/*
	 * teo_sel, 10T timer, candidate 3.  Recent wakeups, all before their
	 * timers: 1000 under 50 us, 1500 in [50, 400 us), 1500 in [400,
	 * 1500 us) and 2000 from 1500 us on.  ib = 4000, hb = 0, R = 6000:
	 * 8000 > 6000, walk.  From R - ib = 2000: + I[2] = 3500, 7000 > 6000:
	 * state 2, as 3500 of the 6000 idle periods lasted 400 us or more.
	 * The intercepts below state 3 alone would stop at their median, in
	 * bin 1: 1500 of 4000 from 400 us on (3000 > 4000 fails), 3000 from
	 * 50 us on (6000 > 4000).
	 */
	teo_test_set_bins(test, ctx, &spread);
	ctx->sleep_length_ns = 10 * TEO_TICK;
	KUNIT_EXPECT_EQ(test, teo_test_select(ctx, &stop_tick), 2);

	/*
	 * 2000 under 50 us, 1000 in [50, 400 us), none in [400, 1500 us),
	 * 2500 from 1500 us on.  ib = 3000, R = 5500: 6000 > 5500, walk.
	 * From 2500: 2500 (5000 > 5500 fails), 3500 (7000 > 5500): state 1,
	 * as 3500 of 5500 lasted 50 us or more.  Their median alone, 2000 of
	 * 3000 under 50 us, would be state 0 (1000: 2000 > 3000 fails, then
	 * 3000: 6000 > 3000).
	 */
	teo_test_set_bins(test, ctx, &far);
	KUNIT_EXPECT_EQ(test, teo_test_select(ctx, &stop_tick), 1);
}

struct teo_tick_case {
	const char *desc;
	const struct teo_test_driver *drv;
	struct teo_test_bins bins;
	s64 sleep_ns;
	s64 delta_tick_ns;	/* 0: the next tick in T */
	bool tick_stopped;
	int expected;
	bool stop_tick;
};

/*
 * The tick decision.  teo_short (all states below T, so it has a tick bin)
 * unless said otherwise; the empty bins of most cases never start a walk.
 */
static const struct teo_tick_case teo_tick_cases[] = {
	{
		/* Deepest state T/2 fits a T timer; T >= T stops the tick. */
		.desc = "an expected idle time of one tick stops it",
		.drv = &teo_short, .sleep_ns = TEO_TICK,
		.expected = 3, .stop_tick = true,
	}, {
		/* T - 1 ns: tick kept; T/2 also fits the next tick (T). */
		.desc = "an expected idle time below one tick keeps it",
		.drv = &teo_short, .sleep_ns = TEO_TICK - 1,
		.expected = 3, .stop_tick = false,
	}, {
		/*
		 * Intercepts of all bins (here all in I[3], none below the
		 * candidate, so no walk): 5200 > 8000 / 2 + 8000 / 8 = 5000
		 * makes the expected idle time T/2: the tick stays.
		 */
		.desc = "intercepts over 5/8 of the total keep the tick",
		.drv = &teo_short,
		.bins = { .intercepts = { 0, 0, 0, 5200 }, .tick_hits = 2800,
			  .total = 8000 },
		.sleep_ns = 10 * TEO_TICK,
		.expected = 3, .stop_tick = false,
	}, {
		/* 5000 > 5000 fails: the 10T sleep length stands. */
		.desc = "intercepts of exactly 5/8 of the total stop the tick",
		.drv = &teo_short,
		.bins = { .intercepts = { 0, 0, 0, 5000 }, .tick_hits = 3000,
			  .total = 8000 },
		.sleep_ns = 10 * TEO_TICK,
		.expected = 3, .stop_tick = true,
	}, {
		/* The same 5200/8000, but state 3 is 3T deep (no tick bin). */
		.desc = "the intercept share does not matter for deep states",
		.drv = &teo_deep,
		.bins = { .intercepts = { 0, 0, 0, 5200 },
			  .hits = { 0, 0, 0, 2800 }, .total = 8000 },
		.sleep_ns = 10 * TEO_TICK,
		.expected = 3, .stop_tick = true,
	}, {
		/*
		 * A kept tick wakes the CPU first: the state must fit before
		 * it.  3T/4 timer: state 3 (T/2) fits, tick kept (3T/4 < T);
		 * next tick in T/3 < T/2: down to state 2 (T/4).
		 */
		.desc = "a kept tick sooner than the state: shallower state",
		.drv = &teo_short, .sleep_ns = 3 * TEO_TICK / 4,
		.delta_tick_ns = TEO_TICK / 3,
		.expected = 2, .stop_tick = false,
	}, {
		/* Next tick in T/2: state 3 fits exactly. */
		.desc = "a kept tick as far as the state's residency",
		.drv = &teo_short, .sleep_ns = 3 * TEO_TICK / 4,
		.delta_tick_ns = TEO_TICK / 2,
		.expected = 3, .stop_tick = false,
	}, {
		/*
		 * With the tick already stopped, the tick decision changes
		 * nothing: as two cases above, but state 3 and *stop_tick
		 * left as the core set it.
		 */
		.desc = "tick already stopped",
		.drv = &teo_short, .sleep_ns = 3 * TEO_TICK / 4,
		.delta_tick_ns = TEO_TICK / 3, .tick_stopped = true,
		.expected = 3, .stop_tick = true,
	},
};

KUNIT_ARRAY_PARAM_DESC(teo_tick_cases, teo_tick_cases, desc);

static void teo_select_tick_decision(struct kunit *test)
{
	const struct teo_tick_case *c = test->param_value;
	struct teo_test_ctx *ctx = test->priv;
	bool stop_tick;
	int idx;

	teo_test_load(ctx, c->drv);
	teo_test_set_bins(test, ctx, &c->bins);
	ctx->sleep_length_ns = c->sleep_ns;
	if (c->delta_tick_ns)
		ctx->delta_tick_ns = c->delta_tick_ns;
	ctx->tick_stopped = c->tick_stopped;
	idx = teo_test_select(ctx, &stop_tick);

	KUNIT_EXPECT_EQ(test, idx, c->expected);
	KUNIT_EXPECT_EQ(test, stop_tick, c->stop_tick);
}

static struct kunit_case teo_select_test_cases[] = {
	KUNIT_CASE_PARAM(teo_select_no_choice, teo_no_choice_cases_gen_params),
	KUNIT_CASE(teo_select_single_state_counts_wakeups),
	KUNIT_CASE(teo_select_deepest_disabled),
	KUNIT_CASE_PARAM(teo_select_fits_sleep_length,
			 teo_fit_cases_gen_params),
	KUNIT_CASE_PARAM(teo_select_latency_limit,
			 teo_latency_cases_gen_params),
	KUNIT_CASE(teo_select_latency_limit_disabled_state),
	KUNIT_CASE_PARAM(teo_select_no_polling_shortcut,
			 teo_poll_cases_gen_params),
	KUNIT_CASE_PARAM(teo_select_intercept_walk, teo_walk_cases_gen_params),
	KUNIT_CASE(teo_select_candidate_fits_sleep_length),
	KUNIT_CASE(teo_select_walk_counts_all_wakeups),
	KUNIT_CASE_PARAM(teo_select_tick_decision, teo_tick_cases_gen_params),
	{}
};

static struct kunit_suite teo_select_suite = {
	.name = "cpuidle_teo_select",
	.init = teo_test_init,
	.test_cases = teo_select_test_cases,
};

/* ---------------------------------------------------------------------- */
/*
 * cpuidle_teo_properties: three properties DOC: teo-description states
 * (the sleep length is fetched on every selection that has a choice, so
 * also whenever the intercept walk or the latency limit ends at a shallow
 * state; no CPU utilization input; no separate window of recent
 * intercepts)
 */

/* teo_sel bins that make the intercept walk end at state 0 (see above). */
static const struct teo_test_bins teo_walk_to_zero_bins = {
	.intercepts = { 4000, 500, 500, 0 }, .hits = { 0, 0, 0, 1000 },
	.total = 6000,
};

/*
 * The walk to state 0 still records the timer.  300 us timer: candidate 1
 * (400 us does not fit); ib = I[0] = 4000, hb = 0, R = 6000: 8000 > 6000.
 * From R - ib = 2000: + I[0] = 6000, 12000 > 6000: state 0, tick kept.
 */
static void teo_props_walk_to_zero_queries(struct kunit *test)
{
	struct teo_test_ctx *ctx = test->priv;
	bool stop_tick;
	int idx;

	teo_test_set_bins(test, ctx, &teo_walk_to_zero_bins);
	ctx->sleep_length_ns = TEO_US(300);
	idx = teo_test_select(ctx, &stop_tick);

	KUNIT_EXPECT_EQ(test, idx, 0);
	KUNIT_EXPECT_FALSE(test, stop_tick);
	KUNIT_EXPECT_EQ(test, ctx->sleep_length_calls, 1);
	KUNIT_EXPECT_EQ(test, teo_test_data(ctx)->sleep_length_ns, TEO_US(300));
}

/*
 * Even when state 0 polls.  Sapphire Rapids, 300 us timer: candidate C1E
 * (4 us; C6 800 us does not fit); ib = I[0] + I[1] = 4500, hb = 0,
 * R = 6000: 9000 > 6000.  From 1500: 2000 at C1 (4000 > 6000 fails), 6000
 * at POLL (12000 > 6000): state 0.
 */
static void teo_props_walk_to_zero_queries_anyway(struct kunit *test)
{
	struct teo_test_ctx *ctx = test->priv;
	bool stop_tick;
	int idx;

	teo_test_load(ctx, &teo_spr);
	teo_test_set_bins(test, ctx, &teo_walk_to_zero_bins);
	ctx->sleep_length_ns = TEO_US(300);
	idx = teo_test_select(ctx, &stop_tick);

	KUNIT_EXPECT_EQ(test, idx, 0);
	KUNIT_EXPECT_FALSE(test, stop_tick);
	KUNIT_EXPECT_EQ(test, ctx->sleep_length_calls, 1);
	KUNIT_EXPECT_EQ(test, teo_test_data(ctx)->sleep_length_ns, TEO_US(300));
}

/*
 * State 0 reached through the latency limit alone (limit 0: no state above
 * 0 qualifies) still records the timer, so the wakeup can be judged: when
 * the CPU then wakes at the 300 us timer, span = sleep length makes it a
 * hit in bin 1 ([50, 400 us)).  Unrecorded (infinite), the timer bin would
 * be bin 3 (or the tick bin when 1500 us < T) and 300 - 0.5 us would count
 * as an intercept in bin 1.
 */
static void teo_props_limit_to_zero_queries(struct kunit *test)
{
	struct teo_test_ctx *ctx = test->priv;
	bool stop_tick;
	int idx;

	ctx->latency_limit_ns = 0;
	ctx->sleep_length_ns = TEO_US(300);
	idx = teo_test_select(ctx, &stop_tick);

	KUNIT_EXPECT_EQ(test, idx, 0);
	KUNIT_EXPECT_FALSE(test, stop_tick);
	KUNIT_EXPECT_EQ(test, ctx->sleep_length_calls, 1);
	KUNIT_EXPECT_EQ(test, teo_test_data(ctx)->sleep_length_ns, TEO_US(300));

	teo_test_wake(ctx, idx, TEO_US(300), TEO_US(300));
	teo_test_select(ctx, &stop_tick);
	teo_test_expect_only(test, TEO_HIT, 1, PULSE);
}

/*
 * A walk that ends at a shallow state other than 0 records the timer too,
 * polling state 0 or not.  Sapphire Rapids, 10T timer: candidate C6;
 * I[1] = 4000, H[3] = 1000: ib = 4000, hb = 0, R = 5000: 8000 > 5000.
 * From 1000: 1000 at C1E (2000 > 5000 fails), 5000 at C1 (10000 > 5000):
 * C1, 1 us.  Intercepts 4000 > 5000 / 2 + 5000 / 8 = 3125 make the
 * expected idle time T/2: the tick stays, and 1 us fits before it.
 */
static void teo_props_shallow_walk_queries(struct kunit *test)
{
	static const struct teo_test_bins bins = {
		.intercepts = { 0, 4000, 0, 0 }, .hits = { 0, 0, 0, 1000 },
		.total = 5000,
	};
	struct teo_test_ctx *ctx = test->priv;
	bool stop_tick;
	int idx;

	teo_test_load(ctx, &teo_spr);
	teo_test_set_bins(test, ctx, &bins);
	ctx->sleep_length_ns = 10 * TEO_TICK;
	idx = teo_test_select(ctx, &stop_tick);

	KUNIT_EXPECT_EQ(test, idx, 1);
	KUNIT_EXPECT_FALSE(test, stop_tick);
	KUNIT_EXPECT_EQ(test, ctx->sleep_length_calls, 1);
	KUNIT_EXPECT_EQ(test, teo_test_data(ctx)->sleep_length_ns,
			10 * TEO_TICK);
}

/*
 * After a walk to state 0 with a 300 us timer, the CPU wakes at that timer:
 * the recorded sleep length makes it a hit in bin 1 ([50, 400 us)).  Had
 * the sleep length not been recorded (infinite), 300 - 0.5 us would have
 * counted as an intercept in bin 1.  Next update from the walk-to-0 bins:
 * I[0] 4000 - 500 = 3500, I[1] and I[2] 500 - 62 = 438, H[3] 1000 - 125 =
 * 875, H[1] 0 + 1024; total 3500 + 438 + 438 + 875 + 1024 = 6275.
 */
static void teo_props_walk_to_zero_timer_is_hit(struct kunit *test)
{
	struct teo_test_ctx *ctx = test->priv;
	struct teo_cpu *cpu_data = teo_test_data(ctx);
	bool stop_tick;
	int idx;

	teo_test_set_bins(test, ctx, &teo_walk_to_zero_bins);
	idx = teo_test_timer(ctx, TEO_US(300), &stop_tick);
	KUNIT_ASSERT_EQ(test, idx, 0);
	teo_test_select(ctx, &stop_tick);

	KUNIT_EXPECT_EQ(test, cpu_data->bins[1].hits, PULSE);
	KUNIT_EXPECT_EQ(test, cpu_data->bins[1].intercepts, 438);
	KUNIT_EXPECT_EQ(test, cpu_data->bins[0].intercepts, 3500);
	KUNIT_EXPECT_EQ(test, cpu_data->total, 6275);
}

/* The same selection followed by an early wakeup is an intercept. */
static void teo_props_walk_to_zero_irq_is_intercept(struct kunit *test)
{
	struct teo_test_ctx *ctx = test->priv;
	struct teo_cpu *cpu_data = teo_test_data(ctx);
	bool stop_tick;
	int idx;

	/* 20 - 0.5 us: bin 0; timer in bin 1.  I[0] 3500 + 1024. */
	teo_test_set_bins(test, ctx, &teo_walk_to_zero_bins);
	idx = teo_test_intercept(ctx, TEO_US(300), TEO_US(20), &stop_tick);
	KUNIT_ASSERT_EQ(test, idx, 0);
	teo_test_select(ctx, &stop_tick);

	KUNIT_EXPECT_EQ(test, cpu_data->bins[0].intercepts, 4524);
	KUNIT_EXPECT_EQ(test, cpu_data->bins[1].hits, 0);
	KUNIT_EXPECT_EQ(test, cpu_data->total, 6275);
}

struct teo_decision {
	int idx;
	bool stop_tick;
	unsigned int sleep_length_calls;
};

static struct teo_decision teo_test_decide(struct teo_test_ctx *ctx,
					   s64 sleep_ns)
{
	unsigned int calls = ctx->sleep_length_calls;
	struct teo_decision d;

	ctx->sleep_length_ns = sleep_ns;
	d.idx = teo_test_select(ctx, &d.stop_tick);
	d.sleep_length_calls = ctx->sleep_length_calls - calls;
	return d;
}

static void teo_test_expect_decision(struct kunit *test,
				     const struct teo_decision *got,
				     const struct teo_decision *want)
{
	KUNIT_EXPECT_EQ(test, got->idx, want->idx);
	KUNIT_EXPECT_EQ(test, got->stop_tick, want->stop_tick);
	KUNIT_EXPECT_EQ(test, got->sleep_length_calls,
			want->sleep_length_calls);
}

static void teo_test_put_bins(struct teo_test_ctx *ctx,
			      const struct teo_cpu *from)
{
	struct teo_cpu *cpu_data = teo_test_data(ctx);

	memcpy(cpu_data->bins, from->bins, sizeof(cpu_data->bins));
	cpu_data->total = from->total;
	cpu_data->tick_hits = from->tick_hits;
}

/*
 * No window of recent intercepts: the choice is a function of the bins.
 * History A (200 timer wakeups, then 5 intercepts) ends deep (see the
 * adaptation suite: I = 3991 < H = 4202).  History B (40 intercepts) ends
 * in state 0, and its last wakeups are all intercepts, which a recent
 * window would remember; with A's bins put back it must decide as A.
 */
static void teo_props_no_recent_window(struct kunit *test)
{
	struct teo_test_ctx *ctx = test->priv;
	struct teo_decision a, b, d;
	struct teo_cpu *snap;

	snap = kunit_kzalloc(test, sizeof(*snap), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, snap);
	teo_test_load(ctx, &teo_rk3399);

	teo_test_timers(ctx, TEO_MS(10), TEO_LONG_RUN, 2);
	teo_test_intercepts(ctx, TEO_MS(10), TEO_US(50), 5, 2);
	a = teo_test_decide(ctx, TEO_MS(10));
	KUNIT_EXPECT_EQ(test, a.idx, 2);
	*snap = *teo_test_data(ctx);

	teo_test_enable(ctx);
	teo_test_intercepts(ctx, TEO_MS(10), TEO_US(50), 40, 0);
	b = teo_test_decide(ctx, TEO_MS(10));
	KUNIT_EXPECT_EQ(test, b.idx, 0);

	teo_test_put_bins(ctx, snap);
	d = teo_test_decide(ctx, TEO_MS(10));
	teo_test_expect_decision(test, &d, &a);

	/* And with no history at all. */
	teo_test_enable(ctx);
	teo_test_put_bins(ctx, snap);
	d = teo_test_decide(ctx, TEO_MS(10));
	teo_test_expect_decision(test, &d, &a);
}

/*
 * No utilization (or other hidden) input: with the same bins and the same
 * faked inputs, every selection decides the same and consults each input
 * once.  RK3399 bins, 10 ms timer, candidate 2: ib 3000, hb 0, R 5500:
 * 6000 > 5500, walk.  From 2500: + I[1] = 5000, 10000 > 5500: state 1
 * (900 us); 3000 > 5500 / 2 + 5500 / 8 = 3437 fails, so 10 ms stops the
 * tick.
 */
static void teo_props_same_inputs_same_decision(struct kunit *test)
{
	static const struct teo_test_bins bins = {
		.intercepts = { 500, 2500, 0 }, .hits = { 0, 0, 2500 },
		.total = 5500,
	};
	static const struct teo_decision want = {
		.idx = 1, .stop_tick = true, .sleep_length_calls = 1,
	};
	struct teo_test_ctx *ctx = test->priv;
	struct teo_decision d;
	int k;

	teo_test_load(ctx, &teo_rk3399);
	teo_test_set_bins(test, ctx, &bins);
	for (k = 0; k < 50; k++) {
		unsigned int limit_calls = ctx->latency_limit_calls;
		unsigned int clock_calls = ctx->clock_calls;

		d = teo_test_decide(ctx, TEO_MS(10));
		teo_test_expect_decision(test, &d, &want);
		KUNIT_EXPECT_EQ(test, ctx->latency_limit_calls - limit_calls, 1);
		KUNIT_EXPECT_EQ(test, ctx->clock_calls - clock_calls, 1);
	}
	KUNIT_EXPECT_EQ(test, teo_test_data(ctx)->total, 5500);
}

static struct kunit_case teo_props_test_cases[] = {
	KUNIT_CASE(teo_props_walk_to_zero_queries),
	KUNIT_CASE(teo_props_walk_to_zero_queries_anyway),
	KUNIT_CASE(teo_props_limit_to_zero_queries),
	KUNIT_CASE(teo_props_shallow_walk_queries),
	KUNIT_CASE(teo_props_walk_to_zero_timer_is_hit),
	KUNIT_CASE(teo_props_walk_to_zero_irq_is_intercept),
	KUNIT_CASE(teo_props_no_recent_window),
	KUNIT_CASE(teo_props_same_inputs_same_decision),
	{}
};

static struct kunit_suite teo_props_suite = {
	.name = "cpuidle_teo_properties",
	.init = teo_test_init,
	.test_cases = teo_props_test_cases,
};

/* ---------------------------------------------------------------------- */
/* cpuidle_teo_adaptation: how fast the bins follow a changing workload */

/*
 * RK3399 (residencies 1, 900, 2000 us) and a 10 ms timer, so candidate 2.
 * A timer wakeup comes at the timer (span = sleep length) or, when the tick
 * was kept, by the tick first, a safety net: either way the whole 10 ms, in
 * the tick bin (2000 us < T, 10 ms >= T) or, for HZ >= 500, in bin 2: a
 * deep hit, written H, never below the candidate.  Intercepts land in bin
 * b (bin 0 for 50 us: 50/2 = 25 us from state 2, 49.5 us from state 0;
 * bin 1 for 1500 us: 1500 - 450 = 1050 us from state 2, 1500 - 185 =
 * 1315 us from state 1), written I.  Nothing else is ever added, so
 * ib = I, hb = 0, R = total = H + I, and the walk runs iff 2I > H + I,
 * that is I > H.  It starts from R - ib = H.  For b = 1 it stops in bin 1
 * (2 * (H + I) > H + I); for b = 0, bin 1 adds nothing and 2H > H + I
 * fails (H < I), then bin 0 brings H + I: so the selection is state b.
 *
 * Both metrics follow m -> m - (m >> 3) (+ 1024 for the one that grows),
 * and a metric below 8 drops to 0.  After TEO_LONG_RUN wakeups of one kind,
 * the growing metric is exactly 8192 (see teo_update_decay_saturates) and
 * the other is 0: 8192 decays without a pulse to 8 -> 7 -> 0 (7 >> 3 = 0)
 * in 58 updates, well within TEO_LONG_RUN.
 */

struct teo_adapt_case {
	const char *desc;
	u64 idle_ns;
	int shallow;
};

static const struct teo_adapt_case teo_adapt_cases[] = {
	{ "50 us intercepts, state 0", TEO_US(50), 0 },
	{ "1500 us intercepts, state 1", TEO_US(1500), 1 },
};

KUNIT_ARRAY_PARAM_DESC(teo_adapt_cases, teo_adapt_cases, desc);

/*
 * From H = 8192, I = 0, each selection first folds in the previous wakeup;
 * after j intercepts:
 *   j:  1     2     3     4     5     6
 *   H:  7168  6272  5488  4802  4202  3677
 *   I:  1024  1920  2704  3390  3991  4517
 * I > H first at j = 6: the 6 selections before go deep, the 7th shallow.
 */
#define TEO_ADAPT_N	6

static void teo_adapt_goes_shallow(struct kunit *test)
{
	const struct teo_adapt_case *c = test->param_value;
	struct teo_test_ctx *ctx = test->priv;
	struct teo_cpu *cpu_data = teo_test_data(ctx);
	bool stop_tick;
	int j, idx;

	teo_test_load(ctx, &teo_rk3399);
	KUNIT_EXPECT_EQ(test, teo_test_timers(ctx, TEO_MS(10), TEO_LONG_RUN, 2),
			0);
	/* Fold in the last of them: the steady state. */
	teo_test_select(ctx, &stop_tick);
	KUNIT_EXPECT_EQ(test, teo_test_deep_hits(ctx), TEO_MAX_METRIC);
	KUNIT_EXPECT_EQ(test, cpu_data->total, TEO_MAX_METRIC);

	for (j = 1; j <= TEO_ADAPT_N; j++) {
		idx = teo_test_intercept(ctx, TEO_MS(10), c->idle_ns,
					 &stop_tick);
		KUNIT_EXPECT_EQ_MSG(test, idx, 2, "selection %d", j);
	}
	idx = teo_test_intercept(ctx, TEO_MS(10), c->idle_ns, &stop_tick);
	KUNIT_EXPECT_EQ(test, idx, c->shallow);
	KUNIT_EXPECT_EQ(test, cpu_data->bins[c->shallow].intercepts, 4517);
	KUNIT_EXPECT_EQ(test, teo_test_deep_hits(ctx), 3677);
}

/*
 * After TEO_LONG_RUN timer and then TEO_LONG_RUN intercept wakeups,
 * H = 0 and I = 8192.  After m timer wakeups (each H becomes
 * H - (H >> 3) + 1024, each I becomes I - (I >> 3)):
 *   m:  1     2     3     4     5     6
 *   H:  1024  1920  2704  3390  3991  4517
 *   I:  7168  6272  5488  4802  4202  3677
 * I > H up to m = 5: the 6 selections after the intercepts (which see m =
 * 0 .. 5) stay shallow, the 7th is deep again.  A shallow selection that
 * keeps the tick is woken by it before the 10 ms timer: the tick safety
 * net makes that a deep hit too.
 */
#define TEO_ADAPT_M	6

static void teo_adapt_returns_deep(struct kunit *test)
{
	const struct teo_adapt_case *c = test->param_value;
	struct teo_test_ctx *ctx = test->priv;
	struct teo_cpu *cpu_data = teo_test_data(ctx);
	bool stop_tick;
	int m, idx;

	teo_test_load(ctx, &teo_rk3399);
	teo_test_timers(ctx, TEO_MS(10), TEO_LONG_RUN, 2);
	teo_test_intercepts(ctx, TEO_MS(10), c->idle_ns, TEO_LONG_RUN,
			    c->shallow);
	teo_test_select(ctx, &stop_tick);
	KUNIT_EXPECT_EQ(test, cpu_data->bins[c->shallow].intercepts,
			TEO_MAX_METRIC);
	KUNIT_EXPECT_EQ(test, teo_test_deep_hits(ctx), 0);
	KUNIT_EXPECT_EQ(test, cpu_data->total, TEO_MAX_METRIC);

	for (m = 1; m <= TEO_ADAPT_M; m++) {
		idx = teo_test_timer(ctx, TEO_MS(10), &stop_tick);
		KUNIT_EXPECT_EQ_MSG(test, idx, c->shallow, "selection %d", m);
	}
	idx = teo_test_timer(ctx, TEO_MS(10), &stop_tick);
	KUNIT_EXPECT_EQ(test, idx, 2);
	KUNIT_EXPECT_EQ(test, cpu_data->bins[c->shallow].intercepts, 3677);
	KUNIT_EXPECT_EQ(test, teo_test_deep_hits(ctx), 4517);
}

static struct kunit_case teo_adapt_test_cases[] = {
	KUNIT_CASE_PARAM(teo_adapt_goes_shallow, teo_adapt_cases_gen_params),
	KUNIT_CASE_PARAM(teo_adapt_returns_deep, teo_adapt_cases_gen_params),
	{}
};

static struct kunit_suite teo_adapt_suite = {
	.name = "cpuidle_teo_adaptation",
	.init = teo_test_init,
	.test_cases = teo_adapt_test_cases,
};

/* ---------------------------------------------------------------------- */
/* cpuidle_teo_drivers: unusual but real idle state tables */

/*
 * CPUIDLE_STATE_MAX states, state i with residency i * 100 us and exit
 * latency i * 10 us: bin i is [i * 100, i * 100 + 100 us).  The deepest
 * residency, 900 us, is below T, so the tick bin exists.
 */
static void teo_test_load_max(struct teo_test_ctx *ctx)
{
	struct cpuidle_driver *drv = ctx->drv;
	int i;

	teo_test_load(ctx, &teo_one);
	for (i = 0; i < CPUIDLE_STATE_MAX; i++) {
		drv->states[i].exit_latency_ns = TEO_US(10 * i);
		drv->states[i].target_residency_ns = TEO_US(100 * i);
		drv->states[i].exit_latency = 10 * i;
		drv->states[i].target_residency = 100 * i;
	}
	drv->state_count = CPUIDLE_STATE_MAX;
}

/* Middle of bin @i of the CPUIDLE_STATE_MAX table. */
static s64 teo_max_bin_ns(int i)
{
	return TEO_US(100 * i + 50);
}

static void teo_drivers_max_states_bins(struct kunit *test)
{
	struct teo_test_ctx *ctx = test->priv;
	int i;

	teo_test_load_max(ctx);
	for (i = 0; i < CPUIDLE_STATE_MAX; i++) {
		/* Timer wakeup from state 0 in the middle of bin i. */
		teo_test_enable(ctx);
		teo_test_account(ctx, teo_max_bin_ns(i), 0, teo_max_bin_ns(i));
		teo_test_expect_only(test, TEO_HIT, i, PULSE);

		if (i == CPUIDLE_STATE_MAX - 1)
			break;
		/* Idle in bin i, timer in the last bin (950 us < T). */
		teo_test_enable(ctx);
		teo_test_account(ctx, teo_max_bin_ns(CPUIDLE_STATE_MAX - 1), 0,
				 teo_max_bin_ns(i));
		teo_test_expect_only(test, TEO_INTERCEPT, i, PULSE);
	}
}

static void teo_drivers_max_states_select(struct kunit *test)
{
	struct teo_test_ctx *ctx = test->priv;
	struct teo_cpu *cpu_data = teo_test_data(ctx);
	bool stop_tick;
	int i, idx;

	teo_test_load_max(ctx);
	ctx->sleep_length_ns = 10 * TEO_TICK;
	idx = teo_test_select(ctx, &stop_tick);
	KUNIT_EXPECT_EQ(test, idx, CPUIDLE_STATE_MAX - 1);

	/* 450 us timer: the deepest fitting residency is 400 us. */
	ctx->sleep_length_ns = TEO_US(450);
	idx = teo_test_select(ctx, &stop_tick);
	KUNIT_EXPECT_EQ(test, idx, 4);

	/*
	 * I[5..8] = 1000, H[9] = 1000, 10T timer: candidate 9, ib 4000,
	 * hb 0, R 5000: 8000 > 5000.  Walk from R - ib = 1000: 2000 at 8
	 * (4000 > 5000 fails), 3000 at 7 (6000 > 5000): state 7.
	 */
	for (i = 5; i <= 8; i++)
		cpu_data->bins[i].intercepts = 1000;
	cpu_data->bins[9].hits = 1000;
	cpu_data->total = 5000;
	ctx->sleep_length_ns = 10 * TEO_TICK;
	idx = teo_test_select(ctx, &stop_tick);
	KUNIT_EXPECT_EQ(test, idx, 7);
}

/* Equal residencies: the deeper state of the two owns the bin. */
static void teo_drivers_equal_residency(struct kunit *test)
{
	struct teo_test_ctx *ctx = test->priv;
	bool stop_tick;
	int idx;

	teo_test_load(ctx, &teo_twin);

	/* Timer wakeup at 300 us: deepest res <= 300 us is state 2. */
	teo_test_account(ctx, TEO_US(300), 0, TEO_US(300));
	teo_test_expect_only(test, TEO_HIT, 2, PULSE);

	/* 150 - 0.5 us of idle under a 900 us timer: intercept in bin 2. */
	teo_test_enable(ctx);
	teo_test_account(ctx, TEO_US(900), 0, TEO_US(150));
	teo_test_expect_only(test, TEO_INTERCEPT, 2, PULSE);

	/* 100 us timer: state 3 (600 us) is too deep, state 2 fits. */
	teo_test_enable(ctx);
	ctx->sleep_length_ns = TEO_US(100);
	idx = teo_test_select(ctx, &stop_tick);
	KUNIT_EXPECT_EQ(test, idx, 2);

	teo_test_disable(ctx, BIT(2));
	idx = teo_test_select(ctx, &stop_tick);
	KUNIT_EXPECT_EQ(test, idx, 1);

	/* 99 us: neither fits. */
	teo_test_disable(ctx, 0);
	ctx->sleep_length_ns = TEO_US(99);
	idx = teo_test_select(ctx, &stop_tick);
	KUNIT_EXPECT_EQ(test, idx, 0);
}

/* sc7280: exit latency 10200 us above the 9826 us residency. */
static void teo_drivers_latency_above_residency(struct kunit *test)
{
	struct teo_test_ctx *ctx = test->priv;
	bool stop_tick;
	int idx;

	teo_test_load(ctx, &teo_sc7280);

	/* 10000 us idle < 10200 us latency: halved to 5000 us, bin 0. */
	teo_test_account(ctx, TEO_MS(20), 1, TEO_US(10000));
	teo_test_expect_only(test, TEO_INTERCEPT, 0, PULSE);

	/* 20 ms timer: the state fits, 20 ms >= T stops the tick. */
	teo_test_enable(ctx);
	ctx->sleep_length_ns = TEO_MS(20);
	idx = teo_test_select(ctx, &stop_tick);
	KUNIT_EXPECT_EQ(test, idx, 1);
	KUNIT_EXPECT_TRUE(test, stop_tick);

	/* A 9826 us timer fits the residency; 1 ns less does not. */
	ctx->sleep_length_ns = TEO_US(9826);
	KUNIT_EXPECT_EQ(test, teo_test_select(ctx, &stop_tick), 1);
	ctx->sleep_length_ns = TEO_US(9826) - 1;
	KUNIT_EXPECT_EQ(test, teo_test_select(ctx, &stop_tick), 0);

	/* A limit between residency and latency rules the state out. */
	ctx->latency_limit_ns = TEO_US(10000);
	ctx->sleep_length_ns = TEO_MS(20);
	KUNIT_EXPECT_EQ(test, teo_test_select(ctx, &stop_tick), 0);
}

/* MT8196 s2idle: a residency of UINT_MAX microseconds. */
static void teo_drivers_huge_residency(struct kunit *test)
{
	const s64 huge = TEO_US(4294967295U);
	struct teo_test_ctx *ctx = test->priv;
	bool stop_tick;

	teo_test_load(ctx, &teo_mt8196);
	KUNIT_EXPECT_EQ(test, ctx->drv->states[3].target_residency_ns,
			4294967295000LL);

	/* 10 s timer: s2idle (4295 s) is too deep; clusteroff fits. */
	ctx->sleep_length_ns = 10LL * NSEC_PER_SEC;
	KUNIT_EXPECT_EQ(test, teo_test_select(ctx, &stop_tick), 2);
	KUNIT_EXPECT_TRUE(test, stop_tick);
	ctx->sleep_length_ns = huge - 1;
	KUNIT_EXPECT_EQ(test, teo_test_select(ctx, &stop_tick), 2);
	ctx->sleep_length_ns = huge;
	KUNIT_EXPECT_EQ(test, teo_test_select(ctx, &stop_tick), 3);

	/* Timer wakeup after 5000 s in s2idle: a hit in bin 3. */
	teo_test_enable(ctx);
	teo_test_account(ctx, 5000LL * NSEC_PER_SEC, 3, 5000ULL * NSEC_PER_SEC);
	teo_test_expect_only(test, TEO_HIT, 3, PULSE);

	/* 10 ms idle in clusteroff: 10000 - 217 us, bin 2 (1 is empty). */
	teo_test_enable(ctx);
	teo_test_account(ctx, 5000LL * NSEC_PER_SEC, 2, TEO_MS(10));
	teo_test_expect_only(test, TEO_INTERCEPT, 2, PULSE);
}

/* A polling state never lets the tick stop, whatever its residency. */
static void teo_drivers_polling_state_keeps_tick(struct kunit *test)
{
	static const struct teo_test_state teo_poll_states[] = {
		{ .lat_ns = 0, .res_ns = 2 * TEO_TICK, .polls = true },
		{ .lat_ns = TEO_US(1), .res_ns = 3 * TEO_TICK },
	};
	static const struct teo_test_driver teo_poll = TEO_DRIVER(teo_poll);
	struct teo_test_ctx *ctx = test->priv;
	bool stop_tick;

	/* Only state 0 enabled: expected idle = 2T, but it polls. */
	teo_test_load(ctx, &teo_poll);
	teo_test_disable(ctx, BIT(1));
	KUNIT_EXPECT_EQ(test, teo_test_select(ctx, &stop_tick), 0);
	KUNIT_EXPECT_FALSE(test, stop_tick);

	ctx->drv->states[0].flags = 0;
	KUNIT_EXPECT_EQ(test, teo_test_select(ctx, &stop_tick), 0);
	KUNIT_EXPECT_TRUE(test, stop_tick);
}

/*
 * An unordered table pins the stopped-tick walk rule: once a state at least
 * T deep was met, a shallower one is passed over instead of ending the walk.
 * State 0 (2T) is deeper than state 1 (50 us).  10T timer: candidate 3
 * (3T fits).  Walk-to-0 bins: ib 5000, hb 0, R 6000: 10000 > 6000.  From
 * R - ib = 1000: 1500 at 2 (T deep: the fallback), 2000 at 1 (50 us: passed
 * over), 6000 > 6000 / 2 at state 0, 2T deep and enabled: state 0, with
 * the tick kept; the sleep length was queried first, as on every selection
 * with a choice.
 */
static void teo_drivers_unordered_residency(struct kunit *test)
{
	static const struct teo_test_state teo_unordered_states[] = {
		{ .lat_ns = TEO_US(1), .res_ns = 2 * TEO_TICK },
		{ .lat_ns = TEO_US(2), .res_ns = TEO_US(50) },
		{ .lat_ns = TEO_US(3), .res_ns = TEO_TICK },
		{ .lat_ns = TEO_US(4), .res_ns = 3 * TEO_TICK },
	};
	static const struct teo_test_driver teo_unordered =
		TEO_DRIVER(teo_unordered);
	struct teo_test_ctx *ctx = test->priv;
	bool stop_tick;

	teo_test_load(ctx, &teo_unordered);
	teo_test_set_bins(test, ctx, &teo_walk_to_zero_bins);
	ctx->tick_stopped = true;
	ctx->sleep_length_ns = 10 * TEO_TICK;

	KUNIT_EXPECT_EQ(test, teo_test_select(ctx, &stop_tick), 0);
	KUNIT_EXPECT_FALSE(test, stop_tick);
	KUNIT_EXPECT_EQ(test, ctx->sleep_length_calls, 1);
}

/*
 * The governor keeps its statistics where teo_cpu_data() points, and the
 * test points it at its own copy: a selection, a wakeup and the update that
 * follows change that copy, and it is not the live data of any CPU.
 */
static void teo_drivers_private_data(struct kunit *test)
{
	struct teo_test_ctx *ctx = test->priv;
	unsigned int largest;
	bool stop_tick;
	int cpu;

	teo_test_load(ctx, &teo_rk3399);
	ctx->cpu_data_calls = 0;
	teo_test_timer(ctx, TEO_MS(10), &stop_tick);
	teo_test_select(ctx, &stop_tick);
	KUNIT_EXPECT_GT(test, ctx->cpu_data_calls, 0);
	/* The update after the wakeup credited a metric in the test's copy. */
	KUNIT_EXPECT_GT(test, teo_test_sum(ctx, &largest), 0);

	kunit_deactivate_static_stub(test, teo_cpu_data);
	for_each_possible_cpu(cpu) {
		ctx->dev->cpu = cpu;
		KUNIT_EXPECT_PTR_NE(test, teo_cpu_data(ctx->dev), ctx->cpu_data);
	}
	ctx->dev->cpu = 0;
	kunit_activate_static_stub(test, teo_cpu_data, teo_fake_cpu_data);
}

/* Enabling the device again forgets everything. */
static void teo_drivers_enable_resets(struct kunit *test)
{
	struct teo_test_ctx *ctx = test->priv;
	struct teo_cpu *zero;
	bool stop_tick;

	zero = kunit_kzalloc(test, sizeof(*zero), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, zero);
	teo_test_load(ctx, &teo_rk3399);
	teo_test_timers(ctx, TEO_MS(10), 20, 2);
	teo_test_intercepts(ctx, TEO_MS(10), TEO_US(50), 20, 0);
	teo_test_select(ctx, &stop_tick);
	KUNIT_ASSERT_NE(test, teo_test_data(ctx)->total, 0);

	teo_test_enable(ctx);
	KUNIT_EXPECT_MEMEQ(test, teo_test_data(ctx), zero, sizeof(*zero));

	/* The intercept history is gone: deepest state again. */
	ctx->sleep_length_ns = TEO_MS(10);
	KUNIT_EXPECT_EQ(test, teo_test_select(ctx, &stop_tick), 2);
}

/*
 * No sum can overflow.  A metric m <= 8192 becomes m - (m >> 3) <= 7168
 * after a decay, plus at most one PULSE: <= 8192 again, so every metric
 * stays <= 8 * PULSE forever.  total sums at most 2 * CPUIDLE_STATE_MAX + 1
 * = 21 metrics, <= 172032, and the selection sums (2 * intercepts, total,
 * 5/8 of total) stay below 2^19, far from UINT_MAX.  The tests below drive
 * the extremes and check both bounds and that total is the exact sum.
 */
static void teo_drivers_saturated_bins(struct kunit *test)
{
	struct teo_test_ctx *ctx = test->priv;
	struct teo_cpu *cpu_data = teo_test_data(ctx);
	unsigned int largest;
	int i;

	teo_test_load_max(ctx);
	for (i = 0; i < CPUIDLE_STATE_MAX; i++) {
		cpu_data->bins[i].hits = TEO_MAX_METRIC;
		cpu_data->bins[i].intercepts = TEO_MAX_METRIC;
	}
	cpu_data->tick_hits = TEO_MAX_METRIC;
	cpu_data->total = 21 * TEO_MAX_METRIC;

	/* Timer wakeup in bin 5: it alone stays at 8192, 20 drop to 7168. */
	teo_test_account(ctx, teo_max_bin_ns(5), 0, teo_max_bin_ns(5));

	KUNIT_EXPECT_EQ(test, cpu_data->bins[5].hits, TEO_MAX_METRIC);
	KUNIT_EXPECT_EQ(test, cpu_data->bins[5].intercepts, 7168);
	KUNIT_EXPECT_EQ(test, cpu_data->bins[0].hits, 7168);
	KUNIT_EXPECT_EQ(test, cpu_data->tick_hits, 7168);
	/* 20 * 7168 + 8192 */
	KUNIT_EXPECT_EQ(test, cpu_data->total, 151552);
	KUNIT_EXPECT_EQ(test, teo_test_sum(ctx, &largest), cpu_data->total);
	KUNIT_EXPECT_EQ(test, largest, TEO_MAX_METRIC);
}

#define TEO_OVERFLOW_RUN	2000

static void teo_drivers_all_hits(struct kunit *test)
{
	struct teo_test_ctx *ctx = test->priv;
	bool stop_tick;

	/* 950 us timer wakeups: all deepest-state hits (950 us < T). */
	teo_test_load_max(ctx);
	KUNIT_EXPECT_EQ(test,
			teo_test_timers(ctx, teo_max_bin_ns(9),
					TEO_OVERFLOW_RUN, 9), 0);
	teo_test_select(ctx, &stop_tick);
	teo_test_expect_only(test, TEO_HIT, 9, TEO_MAX_METRIC);
	KUNIT_EXPECT_EQ(test, teo_test_data(ctx)->total, TEO_MAX_METRIC);
}

static void teo_drivers_all_intercepts(struct kunit *test)
{
	struct teo_test_ctx *ctx = test->priv;
	bool stop_tick;

	/*
	 * 50 us wakeups under a 950 us timer: from state 9, 50 < 90 us is
	 * halved to 25 us; from state 0, 50 us.  Always bin 0.  The first
	 * selection is deep (empty bins), all later ones walk to state 0:
	 * candidate 9, ib = R = I[0], the walk starts from 0 and only bin 0
	 * brings it above R / 2.
	 */
	teo_test_load_max(ctx);
	teo_test_intercept(ctx, teo_max_bin_ns(9), TEO_US(50), &stop_tick);
	KUNIT_EXPECT_EQ(test,
			teo_test_intercepts(ctx, teo_max_bin_ns(9), TEO_US(50),
					    TEO_OVERFLOW_RUN, 0), 0);
	teo_test_select(ctx, &stop_tick);
	teo_test_expect_only(test, TEO_INTERCEPT, 0, TEO_MAX_METRIC);
	KUNIT_EXPECT_EQ(test, teo_test_data(ctx)->total, TEO_MAX_METRIC);
}

/* Hits and intercepts in every bin in turn: bounds hold after each update. */
static void teo_drivers_round_robin(struct kunit *test)
{
	struct teo_test_ctx *ctx = test->priv;
	unsigned int largest, worst = 0, mismatches = 0;
	bool stop_tick;
	int k;

	teo_test_load_max(ctx);
	for (k = 0; k < 3 * TEO_OVERFLOW_RUN; k++) {
		s64 bin_ns = teo_max_bin_ns(k % CPUIDLE_STATE_MAX);

		if (k & 1)
			teo_test_intercept(ctx, teo_max_bin_ns(9), bin_ns,
					   &stop_tick);
		else
			teo_test_timer(ctx, bin_ns, &stop_tick);
		if (teo_test_sum(ctx, &largest) != teo_test_data(ctx)->total)
			mismatches++;
		worst = max(worst, largest);
	}
	KUNIT_EXPECT_EQ(test, mismatches, 0);
	KUNIT_EXPECT_LE(test, worst, TEO_MAX_METRIC);
	KUNIT_EXPECT_GT(test, worst, 0);
}

static struct kunit_case teo_drivers_test_cases[] = {
	KUNIT_CASE(teo_drivers_max_states_bins),
	KUNIT_CASE(teo_drivers_max_states_select),
	KUNIT_CASE(teo_drivers_equal_residency),
	KUNIT_CASE(teo_drivers_latency_above_residency),
	KUNIT_CASE(teo_drivers_huge_residency),
	KUNIT_CASE(teo_drivers_polling_state_keeps_tick),
	KUNIT_CASE(teo_drivers_unordered_residency),
	KUNIT_CASE(teo_drivers_private_data),
	KUNIT_CASE(teo_drivers_enable_resets),
	KUNIT_CASE(teo_drivers_saturated_bins),
	KUNIT_CASE(teo_drivers_all_hits),
	KUNIT_CASE(teo_drivers_all_intercepts),
	KUNIT_CASE(teo_drivers_round_robin),
	{}
};

static struct kunit_suite teo_drivers_suite = {
	.name = "cpuidle_teo_drivers",
	.init = teo_test_init,
	.test_cases = teo_drivers_test_cases,
};

kunit_test_suites(&teo_update_suite, &teo_select_suite, &teo_props_suite,
		  &teo_adapt_suite, &teo_drivers_suite);

MODULE_DESCRIPTION("KUnit tests for the teo cpuidle governor");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING");
