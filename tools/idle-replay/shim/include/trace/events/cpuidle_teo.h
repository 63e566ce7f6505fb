/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The teo trace events in the replay lab.
 *
 * The event definitions are this repository's own header, named by the
 * build in REPLAY_TEO_EVENTS_H (include/trace/events/cpuidle_teo.h of the
 * governor's tree, else of this repository), read with the TRACE_EVENT()
 * of kapi.h.  Each event's entry is filled by the header's TP_fast_assign()
 * code and handed to the engine through the hooks below; the engine keeps
 * it with the decision so that the lab can check that the event tells what
 * the governor did.
 *
 * With REPLAY_TRACE_OFF the trace calls are macros that drop their
 * arguments without evaluating them: the governor then runs as if it had
 * no trace calls at all.  scripts/replay.sh check requires the two builds
 * to decide alike.
 */
#ifndef REPLAY_SHIM_TRACE_CPUIDLE_TEO_H
#define REPLAY_SHIM_TRACE_CPUIDLE_TEO_H

#include "../../../kapi.h"

#ifndef REPLAY_TEO_EVENTS_H
#error "REPLAY_TEO_EVENTS_H must name include/trace/events/cpuidle_teo.h (the lab's Makefile sets it)"
#endif

#ifndef REPLAY_TRACE_OFF
struct replay_entry_teo_select;
struct replay_entry_teo_update;
static inline void replay_hook_teo_select(const struct replay_entry_teo_select *e);
static inline void replay_hook_teo_update(const struct replay_entry_teo_update *e);
#endif

#include REPLAY_TEO_EVENTS_H

#ifdef REPLAY_TRACE_OFF

#define trace_teo_select(...)	do { } while (0)
#define trace_teo_update(...)	do { } while (0)

#else

/* The hooks name reasons and kinds with the header's own words. */
static inline void replay_hook_teo_select(const struct replay_entry_teo_select *e)
{
	replay_event_select(e->deepest, e->candidate, e->state,
			    show_teo_select_reason(e->reason),
			    e->sleep_length_ns, e->stop_tick);
}

static inline void replay_hook_teo_update(const struct replay_entry_teo_update *e)
{
	replay_event_update(e->state, show_teo_update_kind(e->kind), e->bin);
}

#endif /* REPLAY_TRACE_OFF */

#endif /* REPLAY_SHIM_TRACE_CPUIDLE_TEO_H */
