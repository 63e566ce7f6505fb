// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the timer events oriented (teo) cpuidle governor.
 *
 * teo.c includes this file at its end when CONFIG_CPU_IDLE_GOV_TEO_KUNIT_TEST
 * is set, so the tests call the governor's callbacks (enable, select,
 * reflect) as the cpuidle core does, and nothing of the governor is exported.
 *
 * The tests fake the inputs the governor takes from the tick and clock code
 * (the sleep length and the time to the next tick, whether the tick is
 * stopped and whether it woke the CPU, the local clock) and the PM QoS
 * latency limit.  They also redirect the lookup of the per-CPU data to data
 * of their own, so they never touch the statistics of a CPU the running
 * governor uses.
 *
 * A case plays a history of idle periods, each ended by a timer at the sleep
 * length, an interrupt, the tick or a polling timeout, then asks for a
 * decision and checks the state and the tick decision.  Durations are picked
 * so that every case holds for any HZ from 100 to 1000.
 */

#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/limits.h>

#define TEO_US(us)	((s64)(us) * NSEC_PER_USEC)
#define TEO_TICK	((s64)TICK_NSEC)
/* A sleep length far beyond every state of the tables below and the tick. */
#define TEO_LONG	(10 * TEO_TICK)

/*
 * One idle state of a fake driver: exit latency, target residency.  A table
 * ends with TEO_END.
 */
struct teo_test_state {
	s64 lat_ns;
	s64 res_ns;
	bool polls;
};

#define TEO_END		{ -1, -1 }

/* Residencies 1 us, 50 us, 400 us, 1.5 ms: one state per order of magnitude. */
static const struct teo_test_state teo_ladder[] = {
	{ TEO_US(1), TEO_US(1) },
	{ TEO_US(20), TEO_US(50) },
	{ TEO_US(100), TEO_US(400) },
	{ TEO_US(500), TEO_US(1500) },
	TEO_END,
};

/* The two deepest states last at least a tick period. */
static const struct teo_test_state teo_deep[] = {
	{ TEO_US(1), TEO_US(1) },
	{ TEO_US(20), TEO_US(50) },
	{ TEO_US(100), TEO_TICK },
	{ TEO_US(300), 3 * TEO_TICK },
	TEO_END,
};

/* Every state is shallower than a tick period. */
static const struct teo_test_state teo_short[] = {
	{ TEO_US(1), TEO_US(1) },
	{ TEO_US(20), TEO_US(50) },
	{ TEO_US(50), TEO_TICK / 4 },
	{ TEO_US(100), TEO_TICK / 2 },
	TEO_END,
};

/* Every state is shallower than a tick period, the deepest slow to leave. */
static const struct teo_test_state teo_slow_exit[] = {
	{ TEO_US(1), TEO_US(1) },
	{ TEO_US(20), TEO_US(50) },
	{ TEO_US(50), TEO_TICK / 4 },
	{ TEO_TICK / 4, TEO_TICK / 2 },
	TEO_END,
};

/* A polling state 0, as on x86 (Sapphire Rapids: POLL, C1, C1E, C6). */
static const struct teo_test_state teo_poll[] = {
	{ 0, 0, true },
	{ TEO_US(1), TEO_US(1) },
	{ TEO_US(2), TEO_US(4) },
	{ TEO_US(290), TEO_US(800) },
	TEO_END,
};

/* MediaTek MT8196: an s2idle state with a residency of UINT_MAX us. */
static const struct teo_test_state teo_mt8196[] = {
	{ TEO_US(1), TEO_US(1) },
	{ TEO_US(349), TEO_US(6710) },
	{ TEO_US(434), TEO_US(6710) },
	{ TEO_US(20000), TEO_US(UINT_MAX) },
	TEO_END,
};

/* Qualcomm sc7280: a cluster state whose exit latency exceeds its residency. */
static const struct teo_test_state teo_sc7280[] = {
	{ TEO_US(1), TEO_US(1) },
	{ TEO_US(10200), TEO_US(9826) },
	TEO_END,
};

static const struct teo_test_state teo_single[] = {
	{ TEO_US(1), TEO_US(1) },
	TEO_END,
};

/* One state, two tick periods deep. */
static const struct teo_test_state teo_single_deep[] = {
	{ TEO_US(100), 2 * TEO_TICK },
	TEO_END,
};

/* How an idle period ends. */
enum teo_test_wakeup {
	TEO_WAKE_TIMER,		/* the timer at the sleep length */
	TEO_WAKE_IRQ,		/* an interrupt after idle_ns */
	TEO_WAKE_TICK,		/* the tick, after idle_ns */
	TEO_WAKE_POLL,		/* polling ran out of time after idle_ns */
};

/* One idle period of a history. */
struct teo_period {
	enum teo_test_wakeup wakeup;
	s64 sleep_ns;
	s64 idle_ns;
};

#define BY_TIMER(sleep)		{ TEO_WAKE_TIMER, (sleep), 0 }
#define BY_IRQ(idle, sleep)	{ TEO_WAKE_IRQ, (sleep), (idle) }
#define BY_TICK(idle, sleep)	{ TEO_WAKE_TICK, (sleep), (idle) }
#define BY_POLL_OUT(idle, sleep)	{ TEO_WAKE_POLL, (sleep), (idle) }

/* The fake cpuidle core of one test and the inputs it feeds the governor. */
struct teo_fake {
	struct cpuidle_driver drv;
	struct cpuidle_device dev;
	struct teo_cpu data;
	s64 sleep_ns;
	s64 delta_tick_ns;
	bool tick_stopped;
	bool tick_woke;
	s64 latency_limit_ns;
	u64 now_ns;
	unsigned int sleep_queries;
	bool stop_tick;
};

static struct teo_fake *teo_fake_of_test(void)
{
	return kunit_get_current_test()->priv;
}

static struct teo_cpu *teo_fake_cpu_data(struct cpuidle_device *dev)
{
	return &teo_fake_of_test()->data;
}

static ktime_t teo_fake_sleep_length(ktime_t *delta_tick)
{
	struct teo_fake *f = teo_fake_of_test();

	f->sleep_queries++;
	*delta_tick = f->delta_tick_ns;
	return f->sleep_ns;
}

static bool teo_fake_tick_stopped(void)
{
	return teo_fake_of_test()->tick_stopped;
}

/* Like tick_nohz_idle_got_tick(), reading the flag clears it. */
static bool teo_fake_tick_woke_cpu(void)
{
	struct teo_fake *f = teo_fake_of_test();
	bool woke = f->tick_woke;

	f->tick_woke = false;
	return woke;
}

static s64 teo_fake_latency_limit_ns(unsigned int cpu)
{
	return teo_fake_of_test()->latency_limit_ns;
}

static u64 teo_fake_clock_ns(void)
{
	return teo_fake_of_test()->now_ns;
}

/* Set up a fake driver with the states of @states and enable teo on it. */
static struct teo_fake *teo_fake_new(struct kunit *test,
				     const struct teo_test_state *states)
{
	struct teo_fake *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	int count = 0;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, f);
	while (states[count].lat_ns >= 0)
		count++;
	KUNIT_ASSERT_LE(test, count, CPUIDLE_STATE_MAX);
	test->priv = f;
	kunit_activate_static_stub(test, teo_cpu_data, teo_fake_cpu_data);
	kunit_activate_static_stub(test, teo_sleep_length, teo_fake_sleep_length);
	kunit_activate_static_stub(test, teo_tick_stopped, teo_fake_tick_stopped);
	kunit_activate_static_stub(test, teo_tick_woke_cpu, teo_fake_tick_woke_cpu);
	kunit_activate_static_stub(test, teo_latency_limit_ns,
				   teo_fake_latency_limit_ns);
	kunit_activate_static_stub(test, teo_clock_ns, teo_fake_clock_ns);

	f->drv.state_count = count;
	for (i = 0; i < count; i++) {
		struct cpuidle_state *s = &f->drv.states[i];

		s->exit_latency_ns = states[i].lat_ns;
		s->target_residency_ns = states[i].res_ns;
		s->exit_latency = div_s64(states[i].lat_ns, NSEC_PER_USEC);
		s->target_residency = div_s64(states[i].res_ns, NSEC_PER_USEC);
		if (states[i].polls)
			s->flags |= CPUIDLE_FLAG_POLLING;
	}
	f->dev.last_state_idx = -1;
	f->delta_tick_ns = TEO_TICK;
	f->latency_limit_ns = S64_MAX;
	f->now_ns = NSEC_PER_SEC;
	KUNIT_ASSERT_EQ(test, teo_governor.enable(&f->drv, &f->dev), 0);
	return f;
}

/* Ask for a decision with sleep length @sleep_ns, as the idle loop does. */
static int teo_decide(struct teo_fake *f, s64 sleep_ns)
{
	f->sleep_ns = sleep_ns;
	f->stop_tick = true;
	return teo_governor.select(&f->drv, &f->dev, &f->stop_tick);
}

/*
 * Play one idle period: select, stay idle, wake up as @p says, reflect.
 * Return the state entered.
 */
static int teo_play_one(struct teo_fake *f, const struct teo_period *p)
{
	s64 tick_ns = f->delta_tick_ns;
	s64 idle_ns = p->wakeup == TEO_WAKE_TIMER ? p->sleep_ns : p->idle_ns;
	int idx;

	/* The tick fires first: it is due when this period ends. */
	if (p->wakeup == TEO_WAKE_TICK)
		f->delta_tick_ns = idle_ns;
	idx = teo_decide(f, p->sleep_ns);
	f->delta_tick_ns = tick_ns;

	f->tick_woke = p->wakeup == TEO_WAKE_TICK;
	/* Only a polling state can time out; any other one saw an interrupt. */
	f->dev.poll_time_limit = p->wakeup == TEO_WAKE_POLL &&
				 (f->drv.states[idx].flags & CPUIDLE_FLAG_POLLING);
	f->now_ns += idle_ns;
	f->dev.last_residency_ns = idle_ns;
	teo_governor.reflect(&f->dev, idx);
	/* Some work before the next idle period. */
	f->now_ns += TEO_US(10);
	return idx;
}

/* Play @reps times the sequence of @n periods at @seq. */
static void teo_play_seq(struct teo_fake *f, int reps,
			 const struct teo_period *seq, int n)
{
	int r, i;

	for (r = 0; r < reps; r++)
		for (i = 0; i < n; i++)
			teo_play_one(f, &seq[i]);
}

/* teo_play(f, reps, PERIOD, ...): play the periods given, @reps times over. */
#define teo_play(f, reps, ...)						\
	teo_play_seq(f, reps, (const struct teo_period[]){ __VA_ARGS__ },	\
		     ARRAY_SIZE(((const struct teo_period[]){ __VA_ARGS__ })))

/* Enough wakeups for the decaying metrics to forget everything before. */
#define TEO_STEADY	60

/* ---------------------------------------------------------- histories */

/* Timers far away and nothing else: the deepest state, tick stopped. */
static void teo_timer_wakeups_go_deep(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_ladder);

	teo_play(f, TEO_STEADY, BY_TIMER(TEO_LONG));
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 3);
	KUNIT_EXPECT_TRUE(test, f->stop_tick);
}

/* Interrupts at 200 us before far timers: the 50 us state, tick kept. */
static void teo_early_wakeups_go_shallow(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_ladder);

	teo_play(f, TEO_STEADY, BY_IRQ(TEO_US(200), TEO_LONG));
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 1);
	KUNIT_EXPECT_FALSE(test, f->stop_tick);
}

/* With no history, the deepest state that fits the sleep length. */
static void teo_sleep_length_bounds_the_state(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_ladder);

	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_US(800)), 2);
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_US(100)), 1);
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_US(30)), 0);
	KUNIT_EXPECT_FALSE(test, f->stop_tick);
}

/*
 * A timer at 800 us wins three wakeups in four and an interrupt at 200 us
 * takes the fourth: the 400 us state the timer allows is kept.  Read against
 * the deepest state instead, the timer's own hits would count as timers the
 * sleep length rules out and the interrupts would look like the norm.
 */
static void teo_timer_majority_keeps_candidate(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_ladder);

	teo_play(f, TEO_STEADY / 4, BY_TIMER(TEO_US(800)), BY_TIMER(TEO_US(800)),
		 BY_TIMER(TEO_US(800)), BY_IRQ(TEO_US(200), TEO_LONG));
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_US(800)), 2);
}

/*
 * Far timers end two fifths of the idle periods, interrupts at 1.2 ms one
 * fifth and interrupts at 20 us two fifths.  The idle duration exceeded
 * 400 us in three fifths of them (and eight times the 100 us exit latency),
 * so that state is the pick, although the median of the early wakeups
 * alone lies at 20 us.
 */
static void teo_walk_weighs_all_wakeups(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_ladder);

	teo_play(f, TEO_STEADY / 5, BY_TIMER(TEO_LONG), BY_IRQ(TEO_US(20), TEO_LONG),
		 BY_IRQ(TEO_US(1200), TEO_LONG), BY_TIMER(TEO_LONG),
		 BY_IRQ(TEO_US(20), TEO_LONG));
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 2);
}

/*
 * Interrupts at 1.2 ms, before a timer at 1.4 ms of the same bin: they are
 * intercepts, so a later far timer still gets the 400 us state they allow,
 * not the 1.5 ms state that a count of hits would give.
 */
static void teo_early_wakeup_in_timer_bin_is_intercept(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_ladder);

	teo_play(f, TEO_STEADY, BY_IRQ(TEO_US(1200), TEO_US(1400)));
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 2);
}

/*
 * A timer due at 0.9 tick periods, with the tick firing first at 0.1: the
 * tick is no wakeup of the workload, so once the tick is far enough away,
 * the state that the timer allows is picked.
 */
static void teo_tick_before_timer_is_safety_net(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_short);
	s64 timer_ns = TEO_TICK * 9 / 10;

	teo_play(f, TEO_STEADY, BY_TICK(TEO_TICK / 10, timer_ns));
	KUNIT_EXPECT_EQ(test, teo_decide(f, timer_ns), 3);
	KUNIT_EXPECT_FALSE(test, f->stop_tick);
}

/*
 * Interrupts at 0.5 us send the CPU polling; when polling then times out
 * with the timer far away, the CPU could have slept: the deepest state comes
 * back within a few periods, not the 4 us state where the polls ended.
 */
static void teo_poll_timeout_is_safety_net(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_poll);
	int n;

	teo_play(f, TEO_STEADY, BY_IRQ(TEO_US(1) / 2, TEO_LONG));
	KUNIT_ASSERT_EQ(test, teo_decide(f, TEO_LONG), 0);
	for (n = 0; n < 8 && teo_decide(f, TEO_LONG) != 3; n++)
		teo_play(f, 1, BY_POLL_OUT(TEO_US(5), TEO_LONG));
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 3);
}

/*
 * With the tick stopped, nothing may end a shallow state until the next
 * timer: early wakeups at 200 us get the tick-long state, not the 50 us one.
 */
static void teo_stopped_tick_passes_shallow_states(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_deep);

	teo_play(f, TEO_STEADY, BY_IRQ(TEO_US(200), TEO_LONG));
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 1);
	f->tick_stopped = true;
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 2);
}

/* A kept tick ends the idle period: the state must fit before it. */
static void teo_kept_tick_bounds_the_state(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_short);
	s64 timer_ns = TEO_TICK * 9 / 10;

	KUNIT_EXPECT_EQ(test, teo_decide(f, timer_ns), 3);
	KUNIT_EXPECT_FALSE(test, f->stop_tick);
	f->delta_tick_ns = TEO_TICK / 8;
	KUNIT_EXPECT_EQ(test, teo_decide(f, timer_ns), 1);
	KUNIT_EXPECT_FALSE(test, f->stop_tick);
}

/*
 * One early wakeup long ago, then only timers at 200 us: its intercept
 * decays to nothing, and a far timer gets the deepest state.  A residue
 * left in the bin would be the only wakeup that bears on that selection,
 * and would send it to state 0 for good.
 */
static void teo_old_intercept_cannot_steer_for_good(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_ladder);

	teo_play(f, 1, BY_IRQ(TEO_US(20), TEO_LONG));
	teo_play(f, 2 * TEO_STEADY, BY_TIMER(TEO_US(200)));
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 3);
}

/*
 * Every metric keeps 7/8 of its value on an update, and the wakeup adds
 * PULSE to one: after a run of early wakeups, it takes six timer wakeups
 * for the timers' share to outweigh the interrupts' again.
 */
static void teo_adaptation_follows_decay(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_ladder);

	teo_play(f, TEO_STEADY, BY_IRQ(TEO_US(200), TEO_LONG));
	teo_play(f, 5, BY_TIMER(TEO_LONG));
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 1);
	teo_play(f, 1, BY_TIMER(TEO_LONG));
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 3);
}

/* Enabling the governor on a CPU forgets what it learned there. */
static void teo_enable_forgets_history(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_ladder);

	teo_play(f, TEO_STEADY, BY_IRQ(TEO_US(200), TEO_LONG));
	KUNIT_ASSERT_EQ(test, teo_decide(f, TEO_LONG), 1);
	KUNIT_ASSERT_EQ(test, teo_governor.enable(&f->drv, &f->dev), 0);
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 3);
}

/*
 * Interrupts at 400 us and at 1.5 tick periods in turn: the walk settles on
 * the 50 us state.  Only the first kind came within a tick period, about
 * half of the wakeups, so the tick may stop: the long ones could not have
 * been cut short by it.
 */
static void teo_tick_kept_for_short_intercepts_only(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_deep);

	teo_play(f, TEO_STEADY / 2, BY_IRQ(TEO_TICK * 3 / 2, TEO_LONG),
		 BY_IRQ(TEO_US(400), TEO_LONG));
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 1);
	KUNIT_EXPECT_TRUE(test, f->stop_tick);
}

/*
 * With the tick stopped but the next timer 1.5 tick periods away, early
 * wakeups at 200 us get the 50 us state: the timer bounds the stay anyway.
 */
static void teo_stopped_tick_near_timer_allows_shallow(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_deep);

	teo_play(f, TEO_STEADY, BY_IRQ(TEO_US(200), TEO_LONG));
	f->tick_stopped = true;
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_TICK * 3 / 2), 1);
}

/*
 * Above a polling state 0, early wakeups at 10 us against a far timer in
 * three periods of five settle on the 4 us C1E.  The tick stays for it,
 * although the early wakeups are not frequent enough to keep it by
 * themselves.
 */
static void teo_polling_neighbour_keeps_tick(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_poll);

	teo_play(f, TEO_STEADY / 5, BY_IRQ(TEO_US(10), TEO_LONG), BY_TIMER(TEO_LONG),
		 BY_IRQ(TEO_US(10), TEO_LONG), BY_TIMER(TEO_LONG),
		 BY_IRQ(TEO_US(10), TEO_LONG));
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 2);
	KUNIT_EXPECT_FALSE(test, f->stop_tick);
}

/*
 * One early wakeup sends a fresh CPU to a shallow state with the tick kept,
 * and the tick then ends the next idle period: the tick was the timer
 * expected, not a sign that the CPU could have slept to its far timer.  The
 * early wakeup, and the tick that cut the period short (a rare one, see
 * teo_rare_tick_cut_is_intercept()), decide the next selection: the 50 us
 * state.
 */
static void teo_kept_tick_is_expected_timer(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_deep);

	teo_play(f, 1, BY_IRQ(TEO_US(200), TEO_LONG),
		 BY_TICK(TEO_TICK / 2, TEO_LONG));
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 1);
}

/* The hits of all state bins of @f's CPU. */
static unsigned int teo_hits(const struct teo_fake *f)
{
	unsigned int hits = 0;
	int i;

	for (i = 0; i < f->drv.state_count; i++)
		hits += f->data.bins[i].hits;
	return hits;
}

/*
 * Above a polling state 0, interrupts at 10 us keep a CPU in the 4 us C1E
 * with the tick.  Then the tick runs late, already due at every selection
 * (as it can in a virtual machine), while the interrupts go on: the
 * overdue tick is no timer to expect, and each interrupt is still an
 * intercept at 10 us.  Taken for the expected timer, the overdue tick would
 * make every wakeup a hit in state 0's bin, and once those hits outweighed
 * the intercepts the CPU would enter C6, whose exit the next interrupt
 * pays.
 */
static void teo_overdue_tick_is_no_expected_timer(struct kunit *test)
{
	const struct teo_period irq = BY_IRQ(TEO_US(10), TEO_LONG);
	struct teo_fake *f = teo_fake_new(test, teo_poll);
	int deepest = 0;
	int i;

	teo_play(f, TEO_STEADY, irq);
	KUNIT_ASSERT_EQ(test, teo_decide(f, TEO_LONG), 2);
	KUNIT_ASSERT_FALSE(test, f->stop_tick);
	f->delta_tick_ns = -TEO_US(1);
	for (i = 0; i < TEO_STEADY; i++)
		deepest += teo_play_one(f, &irq) == 3;
	KUNIT_EXPECT_EQ(test, deepest, 0);
	KUNIT_EXPECT_EQ(test, teo_hits(f), 0);
}

/*
 * Interrupts at 200 us keep the CPU in the 50 us state with the tick, and
 * then the tick comes first once: the interrupt is late.  That tick cut is
 * an early wakeup at its measured length, no hit, and the interrupts still
 * decide.
 */
static void teo_rare_tick_cut_is_intercept(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_ladder);

	teo_play(f, TEO_STEADY, BY_IRQ(TEO_US(200), TEO_LONG));
	teo_play(f, 1, BY_TICK(TEO_TICK / 2, TEO_LONG));
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 1);
	KUNIT_EXPECT_FALSE(test, f->stop_tick);
	KUNIT_EXPECT_EQ(test, teo_hits(f), 0);
}

/*
 * Interrupts at 200 us keep a CPU in the 50 us state with the tick, and
 * then the tick cuts three periods in a row: the interrupts have stopped
 * coming.  The first two cuts weigh no more than one fresh wakeup and count
 * as intercepts; the third weighs more and follows a cut: it is the
 * expected timer again, a hit in the bin of the tick at half a period
 * (state 1), not in the far timer's.
 */
static void teo_frequent_tick_cuts_are_hits(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_deep);

	teo_play(f, TEO_STEADY, BY_IRQ(TEO_US(200), TEO_LONG));
	teo_play(f, 3, BY_TICK(TEO_TICK / 2, TEO_LONG));
	teo_decide(f, TEO_LONG);
	KUNIT_EXPECT_EQ(test, teo_hits(f), PULSE);
	KUNIT_EXPECT_EQ(test, f->data.bins[1].hits, PULSE);
}

/*
 * Interrupts at 200 us keep a CPU in the 50 us state with the tick, and
 * then the tick cuts every other period while the interrupts go on.  From
 * the third cut on the cuts weigh more than one fresh wakeup, but each one
 * follows an interrupt and the interrupts outnumber them: every cut counts
 * as an intercept, none as a hit, and the interrupts still decide.
 */
static void teo_cut_between_interrupts_is_intercept(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_deep);

	teo_play(f, TEO_STEADY, BY_IRQ(TEO_US(200), TEO_LONG));
	teo_play(f, 4, BY_TICK(TEO_TICK / 2, TEO_LONG),
		 BY_IRQ(TEO_US(200), TEO_LONG));
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 1);
	KUNIT_EXPECT_EQ(test, teo_hits(f), 0);
}

/*
 * Interrupts at 600 us exceed the 400 us residency of state 2 but not eight
 * times its 100 us exit latency: they count for the 50 us state.
 */
static void teo_interrupts_need_room_for_exit(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_ladder);

	teo_play(f, TEO_STEADY, BY_IRQ(TEO_US(600), TEO_LONG));
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 1);
}

/*
 * Timers at 100 us end three periods of five, interrupts at 600 us the
 * others: the CPU is mostly woken by timers, so the interrupts count by
 * residency alone, for the 400 us state a timer at 1.4 ms allows.
 */
static void teo_timer_cpu_classifies_by_residency(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_ladder);

	teo_play(f, TEO_STEADY / 5, BY_TIMER(TEO_US(100)),
		 BY_IRQ(TEO_US(600), TEO_US(1400)), BY_TIMER(TEO_US(100)),
		 BY_IRQ(TEO_US(600), TEO_US(1400)), BY_TIMER(TEO_US(100)));
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_US(1400)), 2);
}

/*
 * Above a polling state 0, interrupts at 10 us get the 4 us C1E: its 2 us
 * exit latency is too short to count.
 */
static void teo_microsecond_exits_do_not_count(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_poll);

	teo_play(f, TEO_STEADY, BY_IRQ(TEO_US(10), TEO_LONG));
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 2);
}

/*
 * Every state below a tick period, the deepest with an exit latency of a
 * quarter tick: interrupts at 1.5 tick periods are no hits past the tick,
 * as they do not reach eight times that latency.  They count for state 2.
 */
static void teo_long_interrupts_need_room_past_tick(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_slow_exit);

	teo_play(f, TEO_STEADY, BY_IRQ(TEO_TICK * 3 / 2, TEO_LONG));
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 2);
}

/*
 * A CPU woken by timers at 200 us turns to interrupts at 1.5 tick periods,
 * three in four wakeups.  Those land past the tick and the timers alone
 * stay in the state bins, but they are no timer majority: the interrupts
 * must not reach the deepest state, whose exit latency they do not cover
 * eight times.  They count for state 2.
 */
static void teo_tick_bin_wakeups_are_no_timer_hits(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_slow_exit);

	teo_play(f, TEO_STEADY, BY_TIMER(TEO_US(200)));
	teo_play(f, TEO_STEADY / 4, BY_IRQ(TEO_TICK * 3 / 2, TEO_LONG),
		 BY_IRQ(TEO_TICK * 3 / 2, TEO_LONG),
		 BY_IRQ(TEO_TICK * 3 / 2, TEO_LONG), BY_TIMER(TEO_US(200)));
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 2);
}

static struct kunit_case teo_history_cases[] = {
	KUNIT_CASE(teo_timer_wakeups_go_deep),
	KUNIT_CASE(teo_early_wakeups_go_shallow),
	KUNIT_CASE(teo_sleep_length_bounds_the_state),
	KUNIT_CASE(teo_timer_majority_keeps_candidate),
	KUNIT_CASE(teo_walk_weighs_all_wakeups),
	KUNIT_CASE(teo_early_wakeup_in_timer_bin_is_intercept),
	KUNIT_CASE(teo_tick_before_timer_is_safety_net),
	KUNIT_CASE(teo_poll_timeout_is_safety_net),
	KUNIT_CASE(teo_stopped_tick_passes_shallow_states),
	KUNIT_CASE(teo_kept_tick_bounds_the_state),
	KUNIT_CASE(teo_old_intercept_cannot_steer_for_good),
	KUNIT_CASE(teo_adaptation_follows_decay),
	KUNIT_CASE(teo_enable_forgets_history),
	KUNIT_CASE(teo_tick_kept_for_short_intercepts_only),
	KUNIT_CASE(teo_stopped_tick_near_timer_allows_shallow),
	KUNIT_CASE(teo_polling_neighbour_keeps_tick),
	KUNIT_CASE(teo_kept_tick_is_expected_timer),
	KUNIT_CASE(teo_overdue_tick_is_no_expected_timer),
	KUNIT_CASE(teo_rare_tick_cut_is_intercept),
	KUNIT_CASE(teo_frequent_tick_cuts_are_hits),
	KUNIT_CASE(teo_cut_between_interrupts_is_intercept),
	KUNIT_CASE(teo_interrupts_need_room_for_exit),
	KUNIT_CASE(teo_timer_cpu_classifies_by_residency),
	KUNIT_CASE(teo_microsecond_exits_do_not_count),
	KUNIT_CASE(teo_long_interrupts_need_room_past_tick),
	KUNIT_CASE(teo_tick_bin_wakeups_are_no_timer_hits),
	{}
};

static struct kunit_suite teo_history_suite = {
	.name = "cpuidle_teo_history",
	.test_cases = teo_history_cases,
};

/* --------------------------------------------------------- properties */

/*
 * Interrupts at 20 us make the intercept logic settle on state 0; the sleep
 * length is still fetched on that selection.  A latency limit of 0 settles
 * the choice before the intercept logic runs, and then it is not fetched.
 */
static void teo_bailout_queries_sleep_length(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_ladder);
	unsigned int queries;

	teo_play(f, TEO_STEADY, BY_IRQ(TEO_US(20), TEO_LONG));
	queries = f->sleep_queries;
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 0);
	KUNIT_EXPECT_EQ(test, f->sleep_queries, queries + 1);

	f = teo_fake_new(test, teo_ladder);
	f->latency_limit_ns = 0;
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 0);
	KUNIT_EXPECT_EQ(test, f->sleep_queries, 0);
}

/*
 * After a selection settled on state 0, a wakeup by the timer at the sleep
 * length scores a hit of PULSE in the timer's bin: the shallow choice can
 * prove itself wrong.
 */
static void teo_bailout_timer_wakeup_scores_hit(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_ladder);

	teo_play(f, TEO_STEADY, BY_IRQ(TEO_US(20), TEO_LONG));
	KUNIT_ASSERT_EQ(test, teo_decide(f, TEO_US(200)), 0);
	teo_play(f, 1, BY_TIMER(TEO_US(200)));
	teo_decide(f, TEO_US(200));
	KUNIT_EXPECT_EQ(test, f->data.bins[1].hits, PULSE);
	KUNIT_EXPECT_EQ(test, f->data.bins[1].intercepts, 0);
}

/*
 * No window of recent intercepts: after a long run of far timers, five
 * interrupts in a row leave the deepest state in place, and the sixth turns
 * the decayed metrics.
 */
static void teo_no_recent_intercepts_window(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_ladder);

	teo_play(f, TEO_STEADY, BY_TIMER(TEO_LONG));
	teo_play(f, 5, BY_IRQ(TEO_US(400), TEO_LONG));
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 3);
	teo_play(f, 1, BY_IRQ(TEO_US(400), TEO_LONG));
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 1);
}

/* The metrics start at PULSE and keep 7/8 of their value on each update. */
static void teo_metrics_pulse_and_decay(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_ladder);

	teo_play(f, 1, BY_TIMER(TEO_US(200)));
	teo_decide(f, TEO_US(200));
	KUNIT_EXPECT_EQ(test, f->data.bins[1].hits, PULSE);
	teo_play(f, 1, BY_IRQ(TEO_US(20), TEO_US(200)));
	teo_decide(f, TEO_US(200));
	KUNIT_EXPECT_EQ(test, f->data.bins[1].hits, PULSE - (PULSE >> DECAY_SHIFT));
	KUNIT_EXPECT_EQ(test, f->data.bins[0].intercepts, PULSE);
}

/*
 * The tests never write the statistics of a CPU that the running governor
 * uses.  With preemption off this CPU cannot go idle, so its data can only
 * change if a test writes to it, and the fake device even names this CPU.
 */
static void teo_tests_leave_cpu_data_alone(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_ladder);
	struct teo_cpu *before, *real;
	bool same;

	before = kunit_kzalloc(test, sizeof(*before), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, before);
	preempt_disable();
	f->dev.cpu = smp_processor_id();
	real = per_cpu_ptr(&teo_cpus, f->dev.cpu);
	*before = *real;
	teo_play(f, TEO_STEADY, BY_IRQ(TEO_US(200), TEO_LONG));
	teo_governor.enable(&f->drv, &f->dev);
	same = !memcmp(before, real, sizeof(*real));
	preempt_enable();
	KUNIT_EXPECT_TRUE(test, same);
}

static struct kunit_case teo_property_cases[] = {
	KUNIT_CASE(teo_bailout_queries_sleep_length),
	KUNIT_CASE(teo_bailout_timer_wakeup_scores_hit),
	KUNIT_CASE(teo_no_recent_intercepts_window),
	KUNIT_CASE(teo_metrics_pulse_and_decay),
	KUNIT_CASE(teo_tests_leave_cpu_data_alone),
	{}
};

static struct kunit_suite teo_property_suite = {
	.name = "cpuidle_teo_properties",
	.test_cases = teo_property_cases,
};

/* -------------------------------------------------------------- edges */

/* The latency limit caps the choice; with a limit of 0 only state 0 is left. */
static void teo_latency_limit_caps_state(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_ladder);

	teo_play(f, TEO_STEADY, BY_TIMER(TEO_LONG));
	f->latency_limit_ns = TEO_US(100);
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 2);
	f->latency_limit_ns = TEO_US(99);
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 1);
	f->latency_limit_ns = 0;
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 0);
	KUNIT_EXPECT_FALSE(test, f->stop_tick);
}

/* No state within the limit, not even state 0: state 0 all the same. */
static void teo_no_state_within_limit(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_sc7280);

	f->latency_limit_ns = TEO_US(1) - 1;
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 0);
	KUNIT_EXPECT_FALSE(test, f->stop_tick);
}

/* With state 0 disabled, neither the walk nor the sleep length picks it. */
static void teo_state0_disabled(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_ladder);

	f->dev.states_usage[0].disable = CPUIDLE_STATE_DISABLED_BY_USER;
	teo_play(f, TEO_STEADY, BY_IRQ(TEO_US(20), TEO_LONG));
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 1);
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_US(30)), 1);
	KUNIT_EXPECT_FALSE(test, f->stop_tick);
}

/*
 * State 0 disabled and a limit below every enabled state's latency: the
 * shallowest enabled state, never the disabled one.
 */
static void teo_no_disabled_state_under_limit(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_ladder);

	f->dev.states_usage[0].disable = CPUIDLE_STATE_DISABLED_BY_USER;
	f->latency_limit_ns = 0;
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 1);
	KUNIT_EXPECT_FALSE(test, f->stop_tick);
}

/*
 * A limit that only the shallowest enabled state meets decides alone: the
 * sleep length is not fetched, and the tick stops only for a deep state.
 */
static void teo_limit_leaving_one_state_skips_sleep_length(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_deep);

	f->latency_limit_ns = TEO_US(19);
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 0);
	KUNIT_EXPECT_FALSE(test, f->stop_tick);
	f->dev.states_usage[0].disable = CPUIDLE_STATE_DISABLED_BY_USER;
	f->dev.states_usage[1].disable = CPUIDLE_STATE_DISABLED_BY_USER;
	f->latency_limit_ns = TEO_US(100);
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 2);
	KUNIT_EXPECT_TRUE(test, f->stop_tick);
	KUNIT_EXPECT_EQ(test, f->sleep_queries, 0);
}

/* One state enabled: that one, the tick stopped only if it is deep enough. */
static void teo_one_state_enabled(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_deep);
	int i;

	for (i = 0; i < 3; i++)
		f->dev.states_usage[i].disable = CPUIDLE_STATE_DISABLED_BY_USER;
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_US(100)), 3);
	KUNIT_EXPECT_TRUE(test, f->stop_tick);

	f->dev.states_usage[1].disable = 0;
	f->dev.states_usage[3].disable = CPUIDLE_STATE_DISABLED_BY_USER;
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 1);
	KUNIT_EXPECT_FALSE(test, f->stop_tick);
}

/* Every state disabled: state 0 with the tick kept, as the core expects. */
static void teo_all_states_disabled(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_ladder);
	int i;

	for (i = 0; i < 4; i++)
		f->dev.states_usage[i].disable = CPUIDLE_STATE_DISABLED_BY_DRIVER;
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 0);
	KUNIT_EXPECT_FALSE(test, f->stop_tick);
}

/*
 * A driver with one state: state 0, with the tick stopped only if that
 * state outlasts a tick period.
 */
static void teo_single_state_driver(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_single);

	teo_play(f, TEO_STEADY, BY_TIMER(TEO_LONG));
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 0);
	KUNIT_EXPECT_FALSE(test, f->stop_tick);

	f = teo_fake_new(test, teo_single_deep);
	teo_play(f, TEO_STEADY, BY_TIMER(TEO_LONG));
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 0);
	KUNIT_EXPECT_TRUE(test, f->stop_tick);
}

/*
 * CPUIDLE_STATE_MAX states, residencies 10 us * 3^i and exit latencies of a
 * tenth of that: a steady timer picks the state its sleep length allows, and
 * interrupts at 1.9 times the residency of state 4 get that state.
 */
static void teo_max_states(struct kunit *test)
{
	struct teo_test_state states[CPUIDLE_STATE_MAX + 1];
	struct teo_fake *f;
	s64 res_ns = TEO_US(10);
	int i;

	for (i = 0; i < CPUIDLE_STATE_MAX; i++, res_ns *= 3)
		states[i] = (struct teo_test_state){ res_ns / 10, res_ns };
	states[i] = (struct teo_test_state)TEO_END;

	for (i = 0; i < CPUIDLE_STATE_MAX; i++) {
		s64 sleep_ns = states[i].res_ns * 3 / 2;

		f = teo_fake_new(test, states);
		teo_play(f, TEO_STEADY, BY_TIMER(sleep_ns));
		KUNIT_EXPECT_EQ_MSG(test, teo_decide(f, sleep_ns), i,
				    "timer at %lld ns", sleep_ns);
	}

	f = teo_fake_new(test, states);
	teo_play(f, TEO_STEADY, BY_IRQ(states[4].res_ns * 19 / 10, TEO_LONG * 100));
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG * 100), 4);
}

/* A residency of UINT_MAX us is never picked for a timer of seconds. */
static void teo_huge_residency(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_mt8196);

	teo_play(f, TEO_STEADY, BY_TIMER(10 * NSEC_PER_SEC));
	KUNIT_EXPECT_EQ(test, teo_decide(f, 10 * NSEC_PER_SEC), 2);
	KUNIT_EXPECT_TRUE(test, f->stop_tick);
}

/*
 * Exit latency above residency: the state is picked for a far timer and
 * left out by a limit below its latency.
 */
static void teo_latency_above_residency(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_sc7280);
	s64 sleep_ns = 5 * TEO_US(10200);

	teo_play(f, TEO_STEADY, BY_TIMER(sleep_ns));
	KUNIT_EXPECT_EQ(test, teo_decide(f, sleep_ns), 1);
	KUNIT_EXPECT_TRUE(test, f->stop_tick);
	f->latency_limit_ns = TEO_US(10000);
	KUNIT_EXPECT_EQ(test, teo_decide(f, sleep_ns), 0);
}

/* A polling state 0 never runs with the tick stopped. */
static void teo_polling_state0(struct kunit *test)
{
	struct teo_fake *f = teo_fake_new(test, teo_poll);
	int i;

	teo_play(f, TEO_STEADY, BY_IRQ(TEO_US(1) / 2, TEO_LONG));
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 0);
	KUNIT_EXPECT_FALSE(test, f->stop_tick);

	f = teo_fake_new(test, teo_poll);
	for (i = 1; i < 4; i++)
		f->dev.states_usage[i].disable = CPUIDLE_STATE_DISABLED_BY_USER;
	KUNIT_EXPECT_EQ(test, teo_decide(f, TEO_LONG), 0);
	KUNIT_EXPECT_FALSE(test, f->stop_tick);
}

static struct kunit_case teo_edge_cases[] = {
	KUNIT_CASE(teo_latency_limit_caps_state),
	KUNIT_CASE(teo_no_state_within_limit),
	KUNIT_CASE(teo_state0_disabled),
	KUNIT_CASE(teo_no_disabled_state_under_limit),
	KUNIT_CASE(teo_limit_leaving_one_state_skips_sleep_length),
	KUNIT_CASE(teo_one_state_enabled),
	KUNIT_CASE(teo_all_states_disabled),
	KUNIT_CASE(teo_single_state_driver),
	KUNIT_CASE(teo_max_states),
	KUNIT_CASE(teo_huge_residency),
	KUNIT_CASE(teo_latency_above_residency),
	KUNIT_CASE(teo_polling_state0),
	{}
};

static struct kunit_suite teo_edge_suite = {
	.name = "cpuidle_teo_edges",
	.test_cases = teo_edge_cases,
};

kunit_test_suites(&teo_history_suite, &teo_property_suite, &teo_edge_suite);
