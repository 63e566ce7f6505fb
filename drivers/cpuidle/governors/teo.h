/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal interface of the timer events oriented (teo) cpuidle governor.
 *
 * Only teo.c includes this header: the per-CPU bookkeeping layout and the
 * constants that shape the metrics.
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
};

#endif /* __CPUIDLE_GOVERNOR_TEO_H */
