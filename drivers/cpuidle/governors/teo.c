// SPDX-License-Identifier: GPL-2.0
/*
 * Timer events oriented CPU idle governor
 *
 * Copyright (C) 2018 - 2021 Intel Corporation
 * Author: Rafael J. Wysocki <rafael.j.wysocki@intel.com>
 *
 * Picks an idle state from the time to the next timer event and from
 * statistics of how often wakeups arrived before that timer.
 */

/**
 * DOC: teo-description
 *
 * The next timer event is the one wakeup source whose time is known before a
 * CPU goes idle: the tick code can tell how long the CPU would sleep if the
 * scheduler tick were stopped (the *sleep length*).  Most wakeups on most
 * systems are timers, so the sleep length is the best single predictor of
 * the idle duration.  It is not free to compute, though, and other
 * interrupts (devices, IPIs) can end the idle period well before it.
 *
 * The governor therefore keeps, per CPU, one *bin* for every idle state of
 * the driver.  Bin i holds idle durations from the target residency of state
 * i up to the target residency of state i + 1, and the last bin has no upper
 * end.  After every wakeup the governor compares two durations:
 *
 * - the sleep length found when the state was selected, and
 * - the measured idle duration, that is the residency reported by the core
 *   less half of the exit latency of the entered state (exit latency is
 *   rarely paid in full), or half of the residency when it is shorter than
 *   the exit latency.
 *
 * If the time from the selection to the wakeup reaches the sleep length,
 * the timer woke the CPU as foreseen and the bin of the sleep length scores
 * a *hit*.  The same holds when a safety net woke the CPU (the polling state
 * ran out of time, or the tick fired): it could have slept until the timer.
 * A tick kept because early wakeups were expected is the timer of that
 * period instead (unless it was already due when the state was chosen),
 * and its bin scores the hit; but while such ticks rarely come first, or
 * come between early wakeups that still outnumber them, the measured
 * duration scores an intercept: the early wakeup was late, not absent.
 * Otherwise something else woke the CPU first and the bin of the measured
 * duration scores an *intercept*, even when that is the timer's own bin: a
 * wide bin also holds wakeups that came long before the timer.  Both
 * metrics of every bin decay by one eighth on each update before one of them
 * grows by a fixed pulse, so the statistics follow the recent past with no
 * time window to manage; a metric too small to decay by an eighth drops to
 * zero.
 *
 * When the deepest state's target residency is below the tick period, an
 * extra bin starting at the tick period counts only hits.  It tells how often
 * the CPU really stayed idle beyond the tick, which matters for deciding
 * whether to stop it.
 *
 * To select a state, the governor first fetches the sleep length, on every
 * selection that has a choice to make: the next update needs it to tell an
 * intercept from a timer wakeup (without it every wakeup would count as an
 * intercept and a shallow choice could never prove itself wrong), and no
 * state deeper than it can pay off.  The candidate is the deepest enabled
 * state within the PM QoS latency limit that fits into the sleep length.
 *
 * An intercept counts in the bin of the deepest state the idle period would
 * have paid off in.  Where the CPU is mostly woken by events it cannot
 * foresee (timer hits are not the majority of the recent wakeups), that
 * takes more than the target residency: the idle period must also be at
 * least eight times the state's exit latency, unless that latency is only a
 * few microseconds.  Each such wakeup waits for the exit before its work
 * runs, and in a closed loop (a token passed around CPUs) the exits of the
 * other CPUs make up the idle periods that would otherwise justify a deep
 * state, so the loop could lock into running at the pace of its exits.
 *
 * If the intercepts of all bins below the candidate outweigh everything
 * recorded in its own bin and above, early wakeups are the norm, and the
 * governor walks down the bins to the deepest state whose target residency
 * the idle duration exceeded in more than half of those recent wakeups.
 * With the tick already stopped and the next timer more than two tick
 * periods away, states shallower than a tick period are passed over:
 * nothing might take the CPU out of them until that timer.
 *
 * The tick is stopped only when the expected idle duration reaches the tick
 * period and the chosen state neither polls nor is one of the few-microsecond
 * states next to a polling state 0 (x86); for a state shallower than the
 * tick period, the intercepts that came within a tick period must also be
 * no more than five eighths of the recent wakeups.  When the tick is kept,
 * the chosen state also has to fit into the time until the next tick.
 *
 * The governor deliberately does not look at CPU utilization (a busy CPU
 * can still have long idle periods and an idle one short ones) and keeps no
 * separate window of recent intercepts: the decaying bins already adapt
 * within a few wakeups.  It has no tunables.
 */

#include <linux/cpuidle.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/percpu.h>
#include <linux/sched/clock.h>
#include <linux/string.h>
#include <linux/tick.h>

#include "gov.h"
#include "teo.h"

#define CREATE_TRACE_POINTS
#include "teo_trace.h"

static DEFINE_PER_CPU(struct teo_cpu, teo_cpus);

/*
 * The KUnit tests at the end of this file replace the governor's inputs from
 * the tick and clock code, and the lookup of its per-CPU data, with values of
 * their own.  Without them the redirections below compile to nothing.
 */
#ifdef CONFIG_CPU_IDLE_GOV_TEO_KUNIT_TEST
#include <kunit/static_stub.h>
#define TEO_TEST_REDIRECT(...) KUNIT_STATIC_STUB_REDIRECT(__VA_ARGS__)
#else
#define TEO_TEST_REDIRECT(...) do { } while (0)
#endif

/**
 * teo_cpu_data - Get the governor's data for a CPU.
 * @dev: Target CPU.
 *
 * Return: the per-CPU governor state of @dev.
 */
static struct teo_cpu *teo_cpu_data(struct cpuidle_device *dev)
{
	TEO_TEST_REDIRECT(teo_cpu_data, dev);
	return per_cpu_ptr(&teo_cpus, dev->cpu);
}

/**
 * teo_sleep_length - Get the time to the next timer event.
 * @delta_tick: Where to store the time to the next tick.
 *
 * Return: the time until the next timer if the tick were stopped, in ns.
 */
static ktime_t teo_sleep_length(ktime_t *delta_tick)
{
	TEO_TEST_REDIRECT(teo_sleep_length, delta_tick);
	return tick_nohz_get_sleep_length(delta_tick);
}

/**
 * teo_tick_stopped - Check whether the tick is stopped on this CPU.
 *
 * Return: true if the tick has already been stopped.
 */
static bool teo_tick_stopped(void)
{
	TEO_TEST_REDIRECT(teo_tick_stopped);
	return tick_nohz_tick_stopped();
}

/**
 * teo_tick_woke_cpu - Check whether the tick ended the last idle period.
 *
 * The underlying tick helper clears its flag, so call this once per wakeup.
 *
 * Return: true if the tick woke this CPU up.
 */
static bool teo_tick_woke_cpu(void)
{
	TEO_TEST_REDIRECT(teo_tick_woke_cpu);
	return tick_nohz_idle_got_tick();
}

/**
 * teo_latency_limit_ns - Get the exit latency limit for a CPU.
 * @cpu: Target CPU.
 *
 * Return: the largest exit latency allowed by PM QoS, in ns.
 */
static s64 teo_latency_limit_ns(unsigned int cpu)
{
	TEO_TEST_REDIRECT(teo_latency_limit_ns, cpu);
	return cpuidle_governor_latency_req(cpu);
}

/**
 * teo_clock_ns - Read the local clock.
 *
 * Return: the local clock of this CPU, in ns.
 */
static u64 teo_clock_ns(void)
{
	TEO_TEST_REDIRECT(teo_clock_ns);
	return local_clock();
}

/**
 * teo_decay - Let a metric lose one 2^DECAY_SHIFT-th of its value.
 * @metric: Metric to decay.
 *
 * A metric that grows by PULSE on an update never exceeds 8 * PULSE: from
 * m <= 8 * PULSE, the next value is at most m - (m - 7) / 8 + PULSE, which is
 * below 8 * PULSE + 1.
 *
 * A value too small to lose anything to the shift (below 8) drops to zero.
 * Left alone it would stay forever, and a bin whose competitors are all
 * empty (the bin of a state nothing ever fits, such as a suspend-only state)
 * lets even such a residue decide: one old intercept could then send every
 * selection down the intercept walk for good.
 *
 * Every update decays two metrics per bin, and which of them are too small
 * to lose anything changes from bin to bin and from one update to the next.
 * Masking the result costs less than the mispredicted jumps of a branch.
 */
static void teo_decay(unsigned int *metric)
{
	unsigned int value = *metric;
	unsigned int loss = value >> DECAY_SHIFT;

	*metric = (value - loss) & -(unsigned int)(loss != 0);
}

/**
 * teo_measured_idle_ns - Estimate how long the CPU was really idle.
 * @drv: cpuidle driver of the CPU.
 * @dev: Target CPU.
 * @cpu_data: Governor data of @dev.
 *
 * Return: the idle duration to classify, U64_MAX when the CPU is deemed to
 * have slept until the timer it expected: that timer (or a safety net) woke it.
 */
static u64 teo_measured_idle_ns(struct cpuidle_driver *drv,
				struct cpuidle_device *dev,
				struct teo_cpu *cpu_data)
{
	u64 lat_ns = drv->states[dev->last_state_idx].exit_latency_ns;
	u64 idle_ns = dev->last_residency_ns;

	/* Woken by the foreseen timer or later, or by a safety net. */
	if (cpu_data->span_ns >= cpu_data->timer_ns)
		return U64_MAX;

	/* The full exit latency is the worst case; take half as typical. */
	if (idle_ns >= lat_ns)
		return idle_ns - lat_ns / 2;

	return idle_ns / 2;
}

/*
 * A wakeup the governor cannot foresee delays the work it brings by the
 * exit latency of the state the CPU is in.  A state is worth entering for
 * such wakeups only when the idle period is at least this many times its
 * exit latency, for exit latencies longer than TEO_LATENCY_FLOOR_NS: below
 * that the exit is within the cost of any wakeup.
 */
#define TEO_LATENCY_FACTOR	8
#define TEO_LATENCY_FLOOR_NS	(15 * NSEC_PER_USEC)

/**
 * teo_intercept_threshold_ns - Get the idle duration an intercept needs.
 * @drv: cpuidle driver.
 * @i: Index of the state.
 * @mind_latency: Whether the exit latency counts.
 *
 * An intercept belongs in the bin of state i if the idle period would have
 * paid off in state i: it reached the target residency and, where the CPU
 * is mostly woken by events it could not foresee, TEO_LATENCY_FACTOR times
 * the exit latency.  In a closed loop such as a token passed between CPUs,
 * the exit latency of each CPU lengthens the idle periods of the others;
 * judged by residency alone, a deep state with a long exit latency then
 * justifies itself, and the loop runs at the pace of the exits.
 *
 * Return: the smallest idle duration in ns that counts for state @i.
 */
static u64 teo_intercept_threshold_ns(struct cpuidle_driver *drv, int i,
				      bool mind_latency)
{
	u64 residency_ns = drv->states[i].target_residency_ns;
	u64 lat_ns = drv->states[i].exit_latency_ns;

	if (!mind_latency || lat_ns < TEO_LATENCY_FLOOR_NS)
		return residency_ns;

	return max(residency_ns, TEO_LATENCY_FACTOR * lat_ns);
}

/**
 * teo_intercept_bin - Find the bin of an early wakeup.
 * @drv: cpuidle driver.
 * @timer_bin: Bin of the expected timer; the wakeup cannot be beyond it.
 * @idle_ns: Measured idle duration.
 * @mind_latency: Whether exit latencies count, see
 *	teo_intercept_threshold_ns().
 *
 * Return: the deepest bin up to @timer_bin whose threshold @idle_ns reached,
 * else 0.
 */
static int teo_intercept_bin(struct cpuidle_driver *drv, int timer_bin,
			     u64 idle_ns, bool mind_latency)
{
	int i, bin = 0;

	for (i = 0; i <= timer_bin; i++) {
		if (teo_intercept_threshold_ns(drv, i, mind_latency) <= idle_ns)
			bin = i;
	}
	return bin;
}

/**
 * teo_credit - Add one PULSE to the metric a wakeup is credited to.
 * @cpu_data: Governor data of the CPU.
 * @kind: How the wakeup is credited.
 * @bin: Bin credited; ignored for a tick hit.
 * @idle_ns: Measured idle duration of the wakeup.
 */
static void teo_credit(struct teo_cpu *cpu_data, enum teo_update_kind kind,
		       int bin, u64 idle_ns)
{
	switch (kind) {
	case TEO_UPDATE_TICK_HIT:
		cpu_data->tick_hits += PULSE;
		break;
	case TEO_UPDATE_HIT:
		cpu_data->bins[bin].hits += PULSE;
		break;
	case TEO_UPDATE_INTERCEPT:
		cpu_data->bins[bin].intercepts += PULSE;
		if (idle_ns < TICK_NSEC)
			cpu_data->short_intercepts += PULSE;
		break;
	}
}

/**
 * teo_update - Account the last wakeup in the metrics of a CPU.
 * @drv: cpuidle driver of the CPU.
 * @dev: Target CPU, woken up from state @dev->last_state_idx.
 *
 * Decay all metrics, then credit one PULSE: a hit to the bin of the expected
 * timer if it ended the idle period, an intercept to the bin of the measured
 * idle duration otherwise, the timer's own bin included.
 */
static void teo_update(struct cpuidle_driver *drv, struct cpuidle_device *dev)
{
	struct teo_cpu *cpu_data = teo_cpu_data(dev);
	s64 timer_ns = cpu_data->timer_ns;
	u64 idle_ns = teo_measured_idle_ns(drv, dev, cpu_data);
	int deepest = drv->state_count - 1;
	unsigned int total = 0, hits = 0;
	int timer_bin = 0, hit_bin, credited;
	enum teo_update_kind kind;
	bool mind_latency;
	int i;

	teo_decay(&cpu_data->short_intercepts);
	teo_decay(&cpu_data->tick_cuts);
	if (cpu_data->tick_cut)
		cpu_data->tick_cuts += PULSE;

	for (i = 0; i <= deepest; i++) {
		struct teo_bin *bin = &cpu_data->bins[i];

		teo_decay(&bin->hits);
		teo_decay(&bin->intercepts);
		total += bin->hits + bin->intercepts;
		hits += bin->hits;

		/* Bins beyond the timer cannot hold either duration. */
		if (drv->states[i].target_residency_ns <= timer_ns)
			timer_bin = i;
	}

	hit_bin = timer_bin;

	if (drv->states[deepest].target_residency_ns < TICK_NSEC) {
		teo_decay(&cpu_data->tick_hits);
		total += cpu_data->tick_hits;
		/* A timer beyond the tick lies in the extra bin past it. */
		if (timer_ns >= TICK_NSEC)
			hit_bin = deepest + 1;
	}

	/*
	 * Mostly woken by timers: their idle periods were foreseen.  The
	 * wakeups past the tick count in the total but not as hits, as their
	 * bin holds long interrupts as well as far timers: a CPU whose long
	 * interrupts all land there must not pass for a timer CPU on the few
	 * timer hits left in the state bins.
	 */
	mind_latency = 2 * hits <= total;

	/*
	 * A wakeup at the timer (U64_MAX passes both tests) or one past the
	 * tick period that would have paid off in the deepest state counts in
	 * the extra bin, when the timer lies there.  A hit goes to the bin
	 * of the timer, so only an intercept needs a search of the bins.
	 */
	if (hit_bin > deepest && idle_ns >= TICK_NSEC &&
	    idle_ns >= teo_intercept_threshold_ns(drv, deepest, mind_latency)) {
		kind = TEO_UPDATE_TICK_HIT;
		credited = hit_bin;
	} else if (idle_ns == U64_MAX) {
		kind = TEO_UPDATE_HIT;
		credited = hit_bin;
	} else {
		kind = TEO_UPDATE_INTERCEPT;
		credited = teo_intercept_bin(drv, timer_bin, idle_ns,
					     mind_latency);
	}

	teo_credit(cpu_data, kind, credited, idle_ns);
	cpu_data->total = total + PULSE;
	trace_teo_update(dev->cpu, dev->last_state_idx, kind, credited);
}

/**
 * teo_expected_timer_ns - Find the timer that should end the idle period.
 * @cpu_data: Governor data of the CPU.
 * @delta_tick_ns: Time to the next tick.
 * @tick_expected: The intercepts chose the state and the tick is kept.
 *
 * A tick that wakes the CPU is a safety net as a rule: the CPU could have
 * slept until the next timer.  Not when the intercepts chose a shallow
 * state and kept the tick for it, though: they foresaw an early wakeup,
 * and a tick that comes first tells only that this one took until the
 * tick.  Counting it as a sleep to the next timer would make a deep state
 * look right after every quiet tick period, and a CPU that the early
 * wakeups of a closed loop keep busy (a ping-pong) would lock into a state
 * whose exit latency then lengthens its own idle periods.  Such a tick is
 * the timer the CPU expected, and its wakeup a hit in the tick's bin,
 * unless it is one that teo_tick_cut_counts() as an intercept.
 *
 * A tick that was already due when the state was chosen is not the timer
 * to expect, though.  Its interrupt is pending, or the tick runs late, as
 * it can in a virtual machine.  As the expected timer it would be due
 * before any wakeup could come: every wakeup of a late tick's idle periods
 * would be a hit in state 0's bin, whatever ended them.  Those hits crowd
 * out the intercepts that chose the state until a selection takes the
 * deepest state that fits the sleep length, whose exit the next early
 * wakeup pays in full.  The sleep length is the timer to expect then, and
 * a wakeup by that tick is a safety net like that of any tick the
 * intercepts did not keep.
 *
 * Return: the time to the expected timer, KTIME_MAX if there is none.
 */
static s64 teo_expected_timer_ns(struct teo_cpu *cpu_data, s64 delta_tick_ns,
				 bool tick_expected)
{
	if (!tick_expected || delta_tick_ns <= 0)
		return cpu_data->sleep_length_ns;

	return min(cpu_data->sleep_length_ns, delta_tick_ns);
}

/**
 * teo_state_enabled - Check whether an idle state may be used on a CPU.
 * @dev: Target CPU.
 * @i: Index of the state.
 *
 * Return: true unless the user or the driver disabled state @i on @dev.
 */
static bool teo_state_enabled(struct cpuidle_device *dev, int i)
{
	return !dev->states_usage[i].disable;
}

/**
 * teo_state_polls - Check whether an idle state is a polling one.
 * @drv: cpuidle driver.
 * @i: Index of the state.
 *
 * Return: true if state @i busy-polls instead of stopping the CPU.
 */
static bool teo_state_polls(struct cpuidle_driver *drv, int i)
{
	return drv->states[i].flags & CPUIDLE_FLAG_POLLING;
}

/**
 * teo_state_safe_without_tick - Check a state against a stopped tick.
 * @drv: cpuidle driver.
 * @sel: Selection data (its @tick_stopped is used).
 * @i: Index of the state.
 * @sleep_length_ns: Time to the next timer event.
 *
 * Once the tick is stopped, only the next timer is sure to wake the CPU, so
 * a state shallower than the tick period could waste power until then if
 * the early wakeup the statistics promise does not come.  With that timer
 * at most two tick periods away, the risk is no larger than with the tick
 * running, and a shallow state keeps the wakeup latency of a CPU whose tick
 * stays stopped (nohz_full) as low as the statistics allow.
 *
 * Return: true if the tick runs, the next timer is at most two tick periods
 * away, or state @i is at least a tick period deep.
 */
static bool teo_state_safe_without_tick(struct cpuidle_driver *drv,
					const struct teo_selection *sel, int i,
					s64 sleep_length_ns)
{
	return !sel->tick_stopped || sleep_length_ns <= 2 * TICK_NSEC ||
	       drv->states[i].target_residency_ns >= TICK_NSEC;
}

/**
 * teo_fit_shallower - Find a shallower enabled state for an idle duration.
 * @drv: cpuidle driver.
 * @dev: Target CPU.
 * @idx: Current choice, too deep for @duration_ns.
 * @duration_ns: Idle duration to fit into.
 *
 * Return: the deepest enabled state below @idx whose target residency does not
 * exceed @duration_ns, else the shallowest enabled state below @idx, else @idx.
 */
static int teo_fit_shallower(struct cpuidle_driver *drv,
			     struct cpuidle_device *dev, int idx,
			     s64 duration_ns)
{
	int i;

	for (i = idx - 1; i >= 0; i--) {
		if (!teo_state_enabled(dev, i))
			continue;

		idx = i;
		if (drv->states[i].target_residency_ns <= duration_ns)
			break;
	}
	return idx;
}

/**
 * teo_scan_states - Find the enabled states and the latency constraint.
 * @drv: cpuidle driver.
 * @dev: Target CPU.
 * @latency_limit_ns: Largest exit latency allowed.
 * @sel: Where to store the results; the candidate is not known yet.
 */
static void teo_scan_states(struct cpuidle_driver *drv,
			    struct cpuidle_device *dev, s64 latency_limit_ns,
			    struct teo_selection *sel)
{
	int i;

	sel->first = teo_state_enabled(dev, 0) ? 0 : -1;
	sel->deepest = sel->first;
	sel->constraint = 0;
	sel->candidate = -1;

	for (i = 1; i < drv->state_count; i++) {
		if (!teo_state_enabled(dev, i))
			continue;

		if (sel->first < 0)
			sel->first = i;
		sel->deepest = i;
		if (drv->states[i].exit_latency_ns <= latency_limit_ns)
			sel->constraint = i;
	}
	/*
	 * With state 0 disabled and no enabled state within the limit, the
	 * least bad choice is the shallowest enabled state, not a disabled one.
	 */
	if (sel->constraint < sel->first)
		sel->constraint = sel->first;
}

/**
 * teo_sum_below_candidate - Sum the metrics of the bins below the candidate.
 * @cpu_data: Governor data of the CPU.
 * @sel: Selection data; @candidate is read, the two sums are written.
 */
static void teo_sum_below_candidate(struct teo_cpu *cpu_data,
				    struct teo_selection *sel)
{
	int i;

	sel->intercepts_below = 0;
	sel->hits_below = 0;
	for (i = 0; i < sel->candidate; i++) {
		sel->intercepts_below += cpu_data->bins[i].intercepts;
		sel->hits_below += cpu_data->bins[i].hits;
	}
}

/**
 * teo_intercepts_dominate - Check whether early wakeups are the norm.
 * @cpu_data: Governor data of the CPU.
 * @sel: Selection data, with the sums below the candidate.
 *
 * Return: true if the intercepts below the candidate state outweigh all the
 * hits and intercepts of its bin and the bins above it.
 */
static bool teo_intercepts_dominate(struct teo_cpu *cpu_data,
				    struct teo_selection *sel)
{
	/* total includes hits_below, so this cannot wrap. */
	return 2 * sel->intercepts_below > cpu_data->total - sel->hits_below;
}

/**
 * teo_walk_intercepts - Find the state most recent wakeups allowed for.
 * @drv: cpuidle driver.
 * @dev: Target CPU.
 * @cpu_data: Governor data of @dev.
 * @sel: Selection data, with the sums below the candidate.
 *
 * The wakeups that tell how deep to go are the intercepts below the
 * candidate and everything recorded in its bin and above; the hits below it
 * are timers that this selection's sleep length rules out.  Walk down from
 * the candidate adding the intercepts of the bins passed to those at or
 * above it, and stop in the bin that brings the sum above half of those
 * wakeups: the idle duration exceeded that bin's state residency in most of
 * the recent cases.  Counting only the intercepts below the candidate would
 * stop at their median and ignore every longer idle period, which sends a
 * CPU with a wide spread of idle durations too shallow.  When the tick is
 * stopped and the next timer is far, shallow states are not acceptable (see
 * teo_state_safe_without_tick()); a shallow state met before any acceptable
 * one ends the walk at the candidate.
 *
 * Return: the state at the stopping bin if it is enabled and acceptable,
 * else the shallowest acceptable enabled state passed, else the candidate.
 */
static int teo_walk_intercepts(struct cpuidle_driver *drv,
			       struct cpuidle_device *dev,
			       struct teo_cpu *cpu_data, struct teo_selection *sel)
{
	/* total includes hits_below, and both sums fit in total. */
	unsigned int relevant = cpu_data->total - sel->hits_below;
	unsigned int sum = relevant - sel->intercepts_below;
	int fallback = sel->candidate;
	int i;

	for (i = sel->candidate - 1; i >= 0; i--) {
		sum += cpu_data->bins[i].intercepts;

		if (2 * sum > relevant) {
			if (teo_state_enabled(dev, i) &&
			    teo_state_safe_without_tick(drv, sel, i,
							cpu_data->sleep_length_ns))
				return i;
			break;
		}

		if (!teo_state_enabled(dev, i))
			continue;

		if (!teo_state_safe_without_tick(drv, sel, i,
						 cpu_data->sleep_length_ns)) {
			if (fallback == sel->candidate)
				break;
			continue;
		}

		fallback = i;
	}
	return fallback;
}

/*
 * Halting states whose target residency is below this are only a few
 * microseconds deep.
 */
#define TEO_SHALLOW_RESIDENCY_NS	(15 * NSEC_PER_USEC)

/**
 * teo_state_next_to_polling - Check for a shallow state above a polling one.
 * @drv: cpuidle driver.
 * @sel: Selection data (its @deepest is used).
 * @i: Index of the state.
 *
 * Where state 0 polls (x86), the halting states right above it are only a
 * few microseconds deep: they save little over the deeper states that the
 * next selection can still reach when the tick wakes the CPU, so stopping
 * the tick for one of them cannot pay off, while an early wakeup that does
 * not come would leave the CPU in it until the next timer.  Without a
 * deeper enabled state the tick has nothing better to lead to.
 *
 * Return: true if state 0 polls and state @i is a shallow halting state
 * below the deepest enabled one.
 */
static bool teo_state_next_to_polling(struct cpuidle_driver *drv,
				      struct teo_selection *sel, int i)
{
	return i > 0 && i < sel->deepest && teo_state_polls(drv, 0) &&
	       drv->states[i].target_residency_ns < TEO_SHALLOW_RESIDENCY_NS;
}

/**
 * teo_keep_tick_and_fit - Keep the tick and fit the state before the tick.
 * @drv: cpuidle driver.
 * @dev: Target CPU.
 * @sel: Selection data (its @first is used).
 * @idx: State chosen so far.
 * @delta_tick_ns: Time to the next tick.
 * @stop_tick: Tick decision to clear.
 *
 * The tick will wake the CPU within @delta_tick_ns, so a state with a longer
 * target residency cannot pay off.
 *
 * Return: the state to enter.
 */
static int teo_keep_tick_and_fit(struct cpuidle_driver *drv,
				 struct cpuidle_device *dev,
				 struct teo_selection *sel, int idx,
				 s64 delta_tick_ns, bool *stop_tick)
{
	*stop_tick = false;

	if (idx > sel->first &&
	    drv->states[idx].target_residency_ns > delta_tick_ns)
		return teo_fit_shallower(drv, dev, idx, delta_tick_ns);

	return idx;
}

/**
 * teo_intercepts_decided - Check whether early wakeups settled a selection.
 * @sel: Selection data.
 *
 * Return: true if the intercept walk chose the state or the selection
 * planned for a short idle period because of the intercepts within a tick.
 */
static bool teo_intercepts_decided(const struct teo_selection *sel)
{
	return sel->reason == TEO_SELECT_INTERCEPTS ||
	       sel->reason == TEO_SELECT_SHORT_IDLE;
}

/**
 * teo_select - Pick the idle state for a CPU about to go idle.
 * @drv: cpuidle driver of the CPU.
 * @dev: Target CPU.
 * @stop_tick: Set to false here if the tick must keep running.
 *
 * Return: the index of the idle state to enter.
 */
static int teo_select(struct cpuidle_driver *drv, struct cpuidle_device *dev,
		      bool *stop_tick)
{
	struct teo_cpu *cpu_data = teo_cpu_data(dev);
	s64 latency_limit_ns = teo_latency_limit_ns(dev->cpu);
	ktime_t delta_tick = TICK_NSEC / 2;
	struct teo_selection sel;
	s64 expected_ns;
	int walked;

	if (dev->last_state_idx >= 0) {
		teo_update(drv, dev);
		dev->last_state_idx = -1;
	}

	cpu_data->selected_at_ns = teo_clock_ns();
	/*
	 * Unknown until queried.  Infinite for the next update, which then
	 * counts the wakeup as an intercept, or as a hit of the extra bin
	 * past the tick if the CPU stayed idle that long.
	 */
	cpu_data->sleep_length_ns = KTIME_MAX;

	teo_scan_states(drv, dev, latency_limit_ns, &sel);
	/* Interrupts are off: the tick cannot stop or restart until idle. */
	sel.tick_stopped = teo_tick_stopped();

	if (sel.deepest < 0) {
		sel.reason = TEO_SELECT_NONE_ENABLED;
		goto keep_tick_shallowest;
	}

	if (sel.deepest == sel.first) {
		/* One state to use; stop the tick only if it is deep enough. */
		sel.reason = drv->state_count < 2 ? TEO_SELECT_NO_CHOICE :
						    TEO_SELECT_ONE_ENABLED;
		sel.state = sel.deepest;
		expected_ns = drv->states[sel.state].target_residency_ns;
		goto tick_decision;
	}

	if (sel.constraint == sel.first) {
		/*
		 * The latency limit leaves one state (a PM QoS limit of 0, say):
		 * no timer could change the choice, so the sleep length is not
		 * worth its cost.  Stop the tick only if the state is deep enough.
		 */
		sel.reason = TEO_SELECT_LATENCY_LIMIT;
		sel.state = sel.first;
		expected_ns = drv->states[sel.state].target_residency_ns;
		goto tick_decision;
	}

	/*
	 * The sleep length is fetched before anything else is decided.  No
	 * state deeper than it can pay off, so the intercept statistics are
	 * read against the deepest state that fits it: read against the
	 * deepest state of all, they would compare early wakeups with the
	 * empty bin of a state nothing ever fits.  And the next update has
	 * to know whether the timer or something else ended this idle period,
	 * or a shallow choice could never prove itself wrong.
	 */
	expected_ns = teo_sleep_length(&delta_tick);
	cpu_data->sleep_length_ns = expected_ns;

	sel.state = sel.deepest;
	sel.reason = TEO_SELECT_DEEPEST;
	if (sel.constraint < sel.state) {
		sel.state = sel.constraint;
		sel.reason = TEO_SELECT_LATENCY_LIMIT;
	}
	if (drv->states[sel.state].target_residency_ns > expected_ns) {
		sel.state = teo_fit_shallower(drv, dev, sel.state, expected_ns);
		sel.reason = TEO_SELECT_SLEEP_LENGTH;
	}

	sel.candidate = sel.state;
	teo_sum_below_candidate(cpu_data, &sel);
	if (sel.state > 0 && teo_intercepts_dominate(cpu_data, &sel)) {
		walked = teo_walk_intercepts(drv, dev, cpu_data, &sel);
		if (walked < sel.state) {
			sel.state = walked;
			sel.reason = TEO_SELECT_INTERCEPTS;
		}
	}

	if (!sel.state)
		goto keep_tick_shallowest;

	/*
	 * Mostly woken before the tick by something else than a timer: plan
	 * for a short idle period.  Intercepts beyond the tick period do not
	 * count here; the tick would not have disturbed those idle periods.
	 */
	if (drv->states[sel.state].target_residency_ns < TICK_NSEC &&
	    cpu_data->short_intercepts > cpu_data->total / 2 + cpu_data->total / 8) {
		expected_ns = TICK_NSEC / 2;
		sel.reason = TEO_SELECT_SHORT_IDLE;
	}

tick_decision:
	if ((!teo_state_polls(drv, sel.state) &&
	     !teo_state_next_to_polling(drv, &sel, sel.state) &&
	     expected_ns >= TICK_NSEC) || sel.tick_stopped)
		goto out;

	sel.state = teo_keep_tick_and_fit(drv, dev, &sel, sel.state,
					  delta_tick, stop_tick);
	goto out;

keep_tick_shallowest:
	*stop_tick = false;
	sel.state = 0;
out:
	cpu_data->timer_ns = teo_expected_timer_ns(cpu_data, delta_tick,
						   teo_intercepts_decided(&sel) &&
						   !*stop_tick);
	trace_teo_select(dev->cpu, &sel, cpu_data->sleep_length_ns, *stop_tick);
	return sel.state;
}

/**
 * teo_tick_cut_counts - Tell whether a tick cut counts as an early wakeup.
 * @cpu_data: Governor data of the CPU.
 * @after_cut: The wakeup before this one was a tick cut as well.
 *
 * A tick kept for the intercepts that wakes the CPU before its next timer
 * (a tick cut) ends a period that the early wakeups were expected to end
 * first.  Taken for the expected timer, a hit in the tick's bin below the
 * candidate, it weighs neither for the shallow state nor against it.  In a
 * closed loop, such as a token passed between CPUs, a hop that waits for a
 * deep state's exit lengthens the idle periods of the other CPUs: those
 * periods keep counting for the deep state, the cuts count for nothing,
 * and the loop locks in at the pace of the exits.  Taken as an intercept
 * at its measured length, a cut counts for the shallow state in which the
 * loop runs fast.
 *
 * Rare tick cuts count: those that weigh no more than a 2^-DECAY_SHIFT
 * share of the decaying total, which is what one fresh wakeup weighs in a
 * full history.  So does a cut between two early wakeups, however often it
 * comes, while the cuts make up at most half of the intercepts within the
 * tick (the cuts that counted among them): the early wakeups still come,
 * and the tick only cut one of their periods short.  A slow ring can have
 * a cut after every other hop; taken for the expected timer, those cuts
 * would send it into the deep state.  A cut right after a cut, or cuts that
 * outnumber the early wakeups, mean those have stopped coming, and counting
 * every tick as one would hold an idle CPU in a shallow state for good:
 * those cuts are the expected timer again.
 *
 * Return: true if the tick cut counts as an intercept at its measured length.
 */
static bool teo_tick_cut_counts(const struct teo_cpu *cpu_data, bool after_cut)
{
	if (cpu_data->tick_cuts <= cpu_data->total >> DECAY_SHIFT)
		return true;

	return !after_cut &&
	       2 * cpu_data->tick_cuts <= cpu_data->short_intercepts;
}

/**
 * teo_reflect - Note which idle state a CPU entered.
 * @dev: Target CPU.
 * @state: Index of the state entered.
 *
 * Called by the core after the CPU wakes up, before the next selection.
 */
static void teo_reflect(struct cpuidle_device *dev, int state)
{
	struct teo_cpu *cpu_data = teo_cpu_data(dev);
	/* Read (and so clear) the tick's flag on every wakeup. */
	bool woken_by_tick = teo_tick_woke_cpu();
	bool after_cut = cpu_data->tick_cut;

	dev->last_state_idx = state;

	/*
	 * A safety net, not the workload, ended the idle period if polling
	 * timed out or the tick fired: the CPU is taken to have slept until
	 * the timer it expected (see teo_expected_timer_ns()).  That holds
	 * for a tick that came before a timer due within the tick period too:
	 * the tick is no event of the workload, and counting it as an
	 * intercept just before a periodic timer would keep such a CPU out of
	 * the state that the timer allows.  A tick that cut short a period
	 * the intercepts planned is the exception, see teo_tick_cut_counts().
	 */
	cpu_data->tick_cut = woken_by_tick && !dev->poll_time_limit &&
			     cpu_data->timer_ns < cpu_data->sleep_length_ns;
	if (cpu_data->tick_cut && teo_tick_cut_counts(cpu_data, after_cut)) {
		cpu_data->timer_ns = cpu_data->sleep_length_ns;
	} else if (dev->poll_time_limit || woken_by_tick) {
		dev->poll_time_limit = false;
		cpu_data->span_ns = cpu_data->timer_ns;
		return;
	}

	cpu_data->span_ns = teo_clock_ns() - cpu_data->selected_at_ns;
}

/**
 * teo_enable_device - Reset the governor's data for a CPU.
 * @drv: cpuidle driver of the CPU.
 * @dev: Target CPU.
 *
 * Return: 0, enabling cannot fail.
 */
static int teo_enable_device(struct cpuidle_driver *drv,
			     struct cpuidle_device *dev)
{
	memset(teo_cpu_data(dev), 0, sizeof(struct teo_cpu));
	return 0;
}

static struct cpuidle_governor teo_governor = {
	.name =		"teo",
	.rating =	19,
	.enable =	teo_enable_device,
	.select =	teo_select,
	.reflect =	teo_reflect,
};

/**
 * teo_governor_init - Register the governor with the cpuidle core.
 *
 * Return: 0 on success, a negative error code otherwise.
 */
static int __init teo_governor_init(void)
{
	return cpuidle_register_governor(&teo_governor);
}

postcore_initcall(teo_governor_init);

#ifdef CONFIG_CPU_IDLE_GOV_TEO_KUNIT_TEST
#include "tests/teo_kunit.c"
#endif
