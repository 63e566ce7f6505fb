/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Part of the replay shim.  An event header includes this file once its
 * events are declared (TRACE_EVENT() is in kapi.h, and the header is read
 * only once).  For teo's events (drivers/cpuidle/governors/teo_trace.h of
 * the governor's own tree) it defines the hooks that hand each filled
 * entry to the engine, naming reasons and kinds with the header's words,
 * so that the lab can check that the events tell what the governor did.
 */
#include "../../kapi.h"

#if defined(show_teo_select_reason) && !defined(REPLAY_TRACE_OFF) && \
	!defined(REPLAY_TEO_HOOKS)
#define REPLAY_TEO_HOOKS

static inline void replay_hook_teo_select(const struct replay_entry_teo_select *e)
{
	replay_event_select(e->candidate, e->state,
			    show_teo_select_reason(e->reason),
			    e->sleep_length_ns, e->stop_tick);
}

static inline void replay_hook_teo_update(const struct replay_entry_teo_update *e)
{
	replay_event_update(e->state, show_teo_update_kind(e->kind), e->bin);
}

#endif
