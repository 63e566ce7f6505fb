/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Trace events of the timer events oriented (teo) cpuidle governor: which
 * rule decided each idle state selection, and how the wakeup after it was
 * accounted.  Documentation/admin-guide/pm/teo.rst explains every field.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM cpuidle_teo

#if !defined(_TRACE_CPUIDLE_TEO_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_CPUIDLE_TEO_H

#include <linux/ktime.h>
#include <linux/limits.h>
#include <linux/tracepoint.h>
#include <linux/types.h>

#ifndef __TEO_TRACE_ENUMS_ONCE
#define __TEO_TRACE_ENUMS_ONCE

/**
 * enum teo_select_reason - The rule that settled an idle state selection.
 * @TEO_SELECT_NO_CHOICE: The driver has fewer than two states: state 0.
 * @TEO_SELECT_NONE_ENABLED: Every state is disabled: state 0 all the same.
 * @TEO_SELECT_ONE_ENABLED: Exactly one state is enabled: that one.
 * @TEO_SELECT_DEEPEST: The deepest enabled state fits the sleep length and
 *	the latency limit, and no later rule moved away from it.
 * @TEO_SELECT_LATENCY_LIMIT: The PM QoS latency limit ruled out deeper states.
 * @TEO_SELECT_SLEEP_LENGTH: Deeper states do not fit the sleep length.
 * @TEO_SELECT_INTERCEPTS: Intercepts dominated and the walk down the bins
 *	stopped in a state shallower than the candidate.
 * @TEO_SELECT_TICK_FIT: The tick is kept and the state had to fit into the
 *	time until it comes.
 *
 * Each rule of teo_select() may only make the choice shallower, so the
 * reason is the last rule that did; the ones before it show in the deepest
 * and candidate fields of the teo_select event.
 */
enum teo_select_reason {
	TEO_SELECT_NO_CHOICE,
	TEO_SELECT_NONE_ENABLED,
	TEO_SELECT_ONE_ENABLED,
	TEO_SELECT_DEEPEST,
	TEO_SELECT_LATENCY_LIMIT,
	TEO_SELECT_SLEEP_LENGTH,
	TEO_SELECT_INTERCEPTS,
	TEO_SELECT_TICK_FIT,
};

/**
 * enum teo_update_kind - Which metric an update credited.
 * @TEO_UPDATE_HIT: The timer ended the idle period: a hit in its bin.
 * @TEO_UPDATE_INTERCEPT: Something else woke the CPU first: an intercept in
 *	the bin of the measured idle duration.
 * @TEO_UPDATE_TICK_HIT: The CPU slept past the tick period: a hit in the
 *	extra bin beyond the deepest state.
 */
enum teo_update_kind {
	TEO_UPDATE_HIT,
	TEO_UPDATE_INTERCEPT,
	TEO_UPDATE_TICK_HIT,
};

/* In a trace, -1 for "not known" reads better than KTIME_MAX or U64_MAX. */
static inline s64 teo_trace_ns(u64 ns, u64 unknown)
{
	return ns == unknown ? -1 : (s64)ns;
}

#endif /* __TEO_TRACE_ENUMS_ONCE */

TRACE_DEFINE_ENUM(TEO_SELECT_NO_CHOICE);
TRACE_DEFINE_ENUM(TEO_SELECT_NONE_ENABLED);
TRACE_DEFINE_ENUM(TEO_SELECT_ONE_ENABLED);
TRACE_DEFINE_ENUM(TEO_SELECT_DEEPEST);
TRACE_DEFINE_ENUM(TEO_SELECT_LATENCY_LIMIT);
TRACE_DEFINE_ENUM(TEO_SELECT_SLEEP_LENGTH);
TRACE_DEFINE_ENUM(TEO_SELECT_INTERCEPTS);
TRACE_DEFINE_ENUM(TEO_SELECT_TICK_FIT);
TRACE_DEFINE_ENUM(TEO_UPDATE_HIT);
TRACE_DEFINE_ENUM(TEO_UPDATE_INTERCEPT);
TRACE_DEFINE_ENUM(TEO_UPDATE_TICK_HIT);

/* The words the events print for the enums above. */
#define show_teo_select_reason(reason)					\
	__print_symbolic(reason,					\
			 { TEO_SELECT_NO_CHOICE,	"no-choice" },		\
			 { TEO_SELECT_NONE_ENABLED,	"none-enabled" },	\
			 { TEO_SELECT_ONE_ENABLED,	"one-enabled" },	\
			 { TEO_SELECT_DEEPEST,		"deepest" },		\
			 { TEO_SELECT_LATENCY_LIMIT,	"latency-limit" },	\
			 { TEO_SELECT_SLEEP_LENGTH,	"sleep-length" },	\
			 { TEO_SELECT_INTERCEPTS,	"intercepts-walk" },	\
			 { TEO_SELECT_TICK_FIT,		"tick-fit" })

#define show_teo_update_kind(kind)					\
	__print_symbolic(kind,						\
			 { TEO_UPDATE_HIT,		"hit" },		\
			 { TEO_UPDATE_INTERCEPT,	"intercept" },		\
			 { TEO_UPDATE_TICK_HIT,		"tick-hit" })

/*
 * teo_select - An idle state selection, with the rule that settled it.
 *
 * @sleep_length_ns is KTIME_MAX when the selection did not query it (the
 * event shows -1), and @delta_tick_ns is then a default of half a tick
 * period.  Any other negative sleep length is real: the next timer event
 * was already due when the CPU went idle, its interrupt not yet taken.
 * The four sums are those the intercept test compares; the first two are
 * 0 when there was no choice to make.
 */
TRACE_EVENT(teo_select,
	    TP_PROTO(unsigned int cpu, int deepest, int candidate, int state,
		     enum teo_select_reason reason, s64 sleep_length_ns,
		     s64 delta_tick_ns, bool stop_tick,
		     unsigned int intercepts_below, unsigned int hits_below,
		     unsigned int total, unsigned int short_intercepts),

	    TP_ARGS(cpu, deepest, candidate, state, reason, sleep_length_ns,
		    delta_tick_ns, stop_tick, intercepts_below, hits_below,
		    total, short_intercepts),

	    TP_STRUCT__entry(__field(u32, cpu)
			     __field(s8, deepest)
			     __field(s8, candidate)
			     __field(s8, state)
			     __field(u8, reason)
			     __field(bool, stop_tick)
			     __field(s64, sleep_length_ns)
			     __field(s64, delta_tick_ns)
			     __field(u32, intercepts_below)
			     __field(u32, hits_below)
			     __field(u32, total)
			     __field(u32, short_intercepts)),

	    TP_fast_assign(__entry->cpu = cpu;
			   __entry->deepest = deepest;
			   __entry->candidate = candidate;
			   __entry->state = state;
			   __entry->reason = reason;
			   __entry->stop_tick = stop_tick;
			   __entry->sleep_length_ns =
				teo_trace_ns(sleep_length_ns, KTIME_MAX);
			   __entry->delta_tick_ns = delta_tick_ns;
			   __entry->intercepts_below = intercepts_below;
			   __entry->hits_below = hits_below;
			   __entry->total = total;
			   __entry->short_intercepts = short_intercepts),

	    TP_printk("cpu=%u deepest=%d candidate=%d state=%d reason=%s sleep_length=%lld%s delta_tick=%lld tick=%s intercepts_below=%u hits_below=%u total=%u short_intercepts=%u",
		      __entry->cpu, __entry->deepest, __entry->candidate,
		      __entry->state, show_teo_select_reason(__entry->reason),
		      __entry->sleep_length_ns,
		      __entry->sleep_length_ns == -1 ? " (not queried)" : "",
		      __entry->delta_tick_ns,
		      __entry->stop_tick ? "stop" : "keep",
		      __entry->intercepts_below, __entry->hits_below,
		      __entry->total, __entry->short_intercepts)
);

/*
 * teo_update - How the last wakeup went into the metrics.
 *
 * @measured_ns is U64_MAX when the CPU is taken to have slept for the
 * whole sleep length (it woke at or after the timer, or a safety net woke
 * it); @sleep_length_ns is KTIME_MAX when it was not queried.  @bin is the
 * bin credited; for a tick hit it is the extra bin, one past the deepest.
 */
TRACE_EVENT(teo_update,
	    TP_PROTO(unsigned int cpu, int state, u64 residency_ns,
		     u64 measured_ns, s64 sleep_length_ns,
		     enum teo_update_kind kind, int bin),

	    TP_ARGS(cpu, state, residency_ns, measured_ns, sleep_length_ns,
		    kind, bin),

	    TP_STRUCT__entry(__field(u32, cpu)
			     __field(s8, state)
			     __field(u8, kind)
			     __field(s8, bin)
			     __field(s64, residency_ns)
			     __field(s64, measured_ns)
			     __field(s64, sleep_length_ns)),

	    TP_fast_assign(__entry->cpu = cpu;
			   __entry->state = state;
			   __entry->kind = kind;
			   __entry->bin = bin;
			   __entry->residency_ns = residency_ns;
			   __entry->measured_ns =
				teo_trace_ns(measured_ns, U64_MAX);
			   __entry->sleep_length_ns =
				teo_trace_ns(sleep_length_ns, KTIME_MAX)),

	    TP_printk("cpu=%u state=%d residency=%lld measured=%lld%s sleep_length=%lld%s kind=%s bin=%d",
		      __entry->cpu, __entry->state, __entry->residency_ns,
		      __entry->measured_ns,
		      __entry->measured_ns == -1 ? " (whole sleep length)" : "",
		      __entry->sleep_length_ns,
		      __entry->sleep_length_ns == -1 ? " (not queried)" : "",
		      show_teo_update_kind(__entry->kind), __entry->bin)
);

#endif /* _TRACE_CPUIDLE_TEO_H */

/* This part must be outside protection */
#include <trace/define_trace.h>
