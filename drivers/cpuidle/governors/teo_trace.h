/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Trace events of the timer events oriented (teo) cpuidle governor, in the
 * power system next to cpu_idle: which state each selection chose and why,
 * and how the wakeup after it was credited.
 *
 * The fields describe decisions, not the statistics behind them, so that
 * they can stay as they are when the way teo keeps its statistics changes.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM power

#if !defined(_TEO_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TEO_TRACE_H

#include <linux/ktime.h>
#include <linux/tracepoint.h>

#include "teo.h"

TRACE_DEFINE_ENUM(TEO_SELECT_NO_CHOICE);
TRACE_DEFINE_ENUM(TEO_SELECT_NONE_ENABLED);
TRACE_DEFINE_ENUM(TEO_SELECT_ONE_ENABLED);
TRACE_DEFINE_ENUM(TEO_SELECT_LATENCY_LIMIT);
TRACE_DEFINE_ENUM(TEO_SELECT_DEEPEST);
TRACE_DEFINE_ENUM(TEO_SELECT_SLEEP_LENGTH);
TRACE_DEFINE_ENUM(TEO_SELECT_INTERCEPTS);
TRACE_DEFINE_ENUM(TEO_SELECT_SHORT_IDLE);
TRACE_DEFINE_ENUM(TEO_UPDATE_HIT);
TRACE_DEFINE_ENUM(TEO_UPDATE_INTERCEPT);
TRACE_DEFINE_ENUM(TEO_UPDATE_TICK_HIT);

#define show_teo_select_reason(reason)					\
	__print_symbolic(reason,					\
			 { TEO_SELECT_NO_CHOICE,	"no-choice" },		\
			 { TEO_SELECT_NONE_ENABLED,	"none-enabled" },	\
			 { TEO_SELECT_ONE_ENABLED,	"one-enabled" },	\
			 { TEO_SELECT_LATENCY_LIMIT,	"latency-limit" },	\
			 { TEO_SELECT_DEEPEST,		"deepest" },		\
			 { TEO_SELECT_SLEEP_LENGTH,	"sleep-length" },	\
			 { TEO_SELECT_INTERCEPTS,	"intercepts" },		\
			 { TEO_SELECT_SHORT_IDLE,	"short-idle" })

#define show_teo_update_kind(kind)					\
	__print_symbolic(kind,						\
			 { TEO_UPDATE_HIT,		"hit" },		\
			 { TEO_UPDATE_INTERCEPT,	"intercept" },		\
			 { TEO_UPDATE_TICK_HIT,		"tick-hit" })

/*
 * teo_select - The end of an idle state selection.
 *
 * The sleep length is -1 when the selection did not query it; any other
 * negative value is real (the next timer was due already).
 */
TRACE_EVENT(teo_select,
	    TP_PROTO(unsigned int cpu, const struct teo_selection *sel,
		     s64 sleep_length_ns, bool stop_tick),

	    TP_ARGS(cpu, sel, sleep_length_ns, stop_tick),

	    TP_STRUCT__entry(__field(u32, cpu)
			     __field(s8, state)
			     __field(s8, candidate)
			     __field(u8, reason)
			     __field(bool, stop_tick)
			     __field(s64, sleep_length_ns)),

	    TP_fast_assign(__entry->cpu = cpu;
			   __entry->state = sel->state;
			   __entry->candidate = sel->candidate;
			   __entry->reason = sel->reason;
			   __entry->stop_tick = stop_tick;
			   __entry->sleep_length_ns =
				sleep_length_ns == KTIME_MAX ? -1 :
							       sleep_length_ns),

	    TP_printk("cpu=%u state=%d candidate=%d reason=%s sleep_length=%lld tick=%s",
		      __entry->cpu, __entry->state, __entry->candidate,
		      show_teo_select_reason(__entry->reason),
		      __entry->sleep_length_ns,
		      __entry->stop_tick ? "stop" : "keep")
);

/*
 * teo_update - How the wakeup from @state was credited: @kind in @bin, the
 * bin of the expected timer for a hit and of the measured idle duration for
 * an intercept.  A tick hit's bin is the extra one, past the deepest state.
 */
TRACE_EVENT(teo_update,
	    TP_PROTO(unsigned int cpu, int state, enum teo_update_kind kind,
		     int bin),

	    TP_ARGS(cpu, state, kind, bin),

	    TP_STRUCT__entry(__field(u32, cpu)
			     __field(s8, state)
			     __field(u8, kind)
			     __field(s8, bin)),

	    TP_fast_assign(__entry->cpu = cpu;
			   __entry->state = state;
			   __entry->kind = kind;
			   __entry->bin = bin),

	    TP_printk("cpu=%u state=%d kind=%s bin=%d",
		      __entry->cpu, __entry->state,
		      show_teo_update_kind(__entry->kind), __entry->bin)
);

#endif /* _TEO_TRACE_H */

/* The header lives next to teo.c, which adds its folder to the path. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE teo_trace

/* This part must be outside protection */
#include <trace/define_trace.h>
