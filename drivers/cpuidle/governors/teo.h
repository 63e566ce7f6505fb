/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal interface of the timer events oriented (teo) cpuidle governor.
 *
 * Only teo.c and its trace events include this header: the per-CPU
 * bookkeeping layout, the constants that shape the metrics, and what a
 * selection decides and why.
 */

#ifndef __CPUIDLE_GOVERNOR_TEO_H
#define __CPUIDLE_GOVERNOR_TEO_H

#include <linux/cpuidle.h>
#include <linux/ktime.h>
#include <linux/types.h>

/*
 * Amount added to a metric by the update that selects it.  With the decay
 * below, no metric ever exceeds 8 * PULSE (see teo_decay()), so the sum of
 * all metrics of a CPU stays far below UINT_MAX / 2.
 */
#define PULSE		1024

/* Every update keeps 7/8 of each metric: m -= m >> DECAY_SHIFT. */
#define DECAY_SHIFT	3

/**
 * struct teo_bin - Wakeup statistics of one idle state bin.
 * @hits: Decaying count of wakeups at the foreseen timer (or by a safety
 *	net) whose sleep length fell into this bin.
 * @intercepts: Decaying count of wakeups before the foreseen timer whose
 *	measured idle duration fell into this bin.
 *
 * Bin i covers idle durations from the target residency of state i up to
 * (not including) the target residency of state i + 1; the last bin is
 * open-ended.
 */
struct teo_bin {
	unsigned int hits;
	unsigned int intercepts;
};

/**
 * struct teo_cpu - Per-CPU state of the governor.
 * @selected_at_ns: Local clock when the last idle state was selected.
 * @span_ns: Time from that selection to the wakeup, or @timer_ns if a safety
 *	net woke the CPU; set by teo_reflect().
 * @sleep_length_ns: Time to the next timer event found by the last selection,
 *	KTIME_MAX if it was not queried.
 * @timer_ns: Time to the timer the last selection expected to end the idle
 *	period: the sleep length, or the tick where the intercepts chose a
 *	state with the tick kept and the tick comes first.
 * @bins: Hits and intercepts of every idle state bin.
 * @total: Sum of all metrics, including @tick_hits, after the last update.
 * @tick_hits: Hits-only metric of an extra bin that starts at the tick period;
 *	kept when the deepest state's target residency is below it.
 * @short_intercepts: Decaying count of the intercepts whose measured idle
 *	duration was below the tick period; a part of @total, not an addition.
 * @tick_cuts: Decaying count of the wakeups by a tick kept for the
 *	intercepts that came before the next timer; not a part of @total.
 * @tick_cut: The last wakeup was such a tick; set by teo_reflect().
 */
struct teo_cpu {
	u64 selected_at_ns;
	s64 span_ns;
	s64 sleep_length_ns;
	s64 timer_ns;
	struct teo_bin bins[CPUIDLE_STATE_MAX];
	unsigned int total;
	unsigned int tick_hits;
	unsigned int short_intercepts;
	unsigned int tick_cuts;
	bool tick_cut;
};

/**
 * enum teo_select_reason - The rule that settled an idle state selection.
 * @TEO_SELECT_NO_CHOICE: The driver has one state: state 0.
 * @TEO_SELECT_NONE_ENABLED: Every state is disabled: state 0 all the same.
 * @TEO_SELECT_ONE_ENABLED: Exactly one state is enabled: that one.
 * @TEO_SELECT_LATENCY_LIMIT: The PM QoS latency limit ruled out deeper states.
 * @TEO_SELECT_DEEPEST: The deepest enabled state fits the sleep length and
 *	the latency limit.
 * @TEO_SELECT_SLEEP_LENGTH: Deeper states do not fit the sleep length.
 * @TEO_SELECT_INTERCEPTS: Intercepts dominated and the walk down the bins
 *	stopped in a state shallower than the candidate.
 * @TEO_SELECT_SHORT_IDLE: Most recent wakeups were intercepts within
 *	a tick period, so the selection planned for a short idle period and
 *	keeps the tick unless it is stopped already.
 *
 * teo_select() records the last of these rules that applied.  The last two
 * mean that early wakeups decided, so with the tick kept the next update
 * takes the tick for the expected timer.  Whatever the reason, a kept tick
 * also limits the state to one that fits before the tick.
 */
enum teo_select_reason {
	TEO_SELECT_NO_CHOICE,
	TEO_SELECT_NONE_ENABLED,
	TEO_SELECT_ONE_ENABLED,
	TEO_SELECT_LATENCY_LIMIT,
	TEO_SELECT_DEEPEST,
	TEO_SELECT_SLEEP_LENGTH,
	TEO_SELECT_INTERCEPTS,
	TEO_SELECT_SHORT_IDLE,
};

/**
 * enum teo_update_kind - How a wakeup is credited.
 * @TEO_UPDATE_HIT: The expected timer (or a safety net) ended the idle
 *	period: a hit in the bin of that timer.
 * @TEO_UPDATE_INTERCEPT: Something else woke the CPU first: an intercept in
 *	the bin of the measured idle duration.
 * @TEO_UPDATE_TICK_HIT: The CPU stayed idle past the tick period: a hit in
 *	the extra bin beyond the deepest state.
 */
enum teo_update_kind {
	TEO_UPDATE_HIT,
	TEO_UPDATE_INTERCEPT,
	TEO_UPDATE_TICK_HIT,
};

/**
 * struct teo_selection - What a selection learns and decides.
 * @first: Shallowest enabled state, -1 if none is enabled.
 * @deepest: Deepest enabled state, -1 if none is enabled.
 * @constraint: Deepest enabled state above 0 within the latency limit, else
 *	the shallowest enabled state.
 * @candidate: Deepest enabled state that fits the sleep length and the
 *	latency limit, where the intercept test starts; -1 when the selection
 *	ends before it.
 * @state: State chosen so far; the one to enter at the end.
 * @reason: Rule that settled @state.
 * @intercepts_below: Sum of the intercepts of the bins below @candidate.
 * @hits_below: Sum of the hits of the bins below @candidate.
 * @tick_stopped: Whether the tick was already stopped when the selection
 *	began.
 */
struct teo_selection {
	int first;
	int deepest;
	int constraint;
	int candidate;
	int state;
	enum teo_select_reason reason;
	unsigned int intercepts_below;
	unsigned int hits_below;
	bool tick_stopped;
};

#endif /* __CPUIDLE_GOVERNOR_TEO_H */
