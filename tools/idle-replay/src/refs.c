// SPDX-License-Identifier: GPL-2.0
/*
 * idle-replay: two reference policies, fixed rules built into the lab like
 * the oracle and run next to it in every scenario (role "reference").
 *
 * In a closed loop the yardstick is the best of ours and the baselines,
 * so a lock-in they all share (every CPU of a token ring parked in a deep
 * state, each hop paying its exit) looks fine there: they all do about the
 * same work.  The oracle shows that more was possible, but it knows the
 * future.  These two know nothing of it; if one of them does far more
 * work than every governor, the governors share a lock-in that a plain
 * rule avoids.  Neither is a candidate governor: no history, no
 * intercepts.
 *
 *   ref-shallow  always the shallowest enabled halting state within the PM
 *                QoS limit (state 0 if there is none), tick kept: what no
 *                exit latency can lock in.
 *   ref-fit      queries the sleep length on every selection and takes the
 *                deepest enabled state within the limit whose target
 *                residency fits it (the shallowest enabled one within the
 *                limit if none fits; state 0 if none is within it); lets
 *                the tick stop only when the sleep length reaches beyond
 *                the next tick, and never on a polling state.
 *
 * They use only the kernel API a governor has (the shim), so they also run
 * in the overhead playback and the contract check.  Their own arithmetic
 * costs nothing on the timeline (costs.conf: gov ref-* 0 0), but every
 * sleep-length query of ref-fit is charged as any governor's.
 */

#include "replay.h"

/* Enabled and within the latency limit @limit. */
static bool usable(const struct cpuidle_driver *drv,
		   const struct cpuidle_device *dev, int i, s64 limit)
{
	return !dev->states_usage[i].disable &&
	       drv->states[i].exit_latency_ns <= limit;
}

static int shallow_select(struct cpuidle_driver *drv, struct cpuidle_device *dev,
			  bool *stop_tick)
{
	s64 limit = cpuidle_governor_latency_req(dev->cpu);
	int i;

	*stop_tick = false;
	for (i = 0; i < drv->state_count; i++)
		if (usable(drv, dev, i, limit) &&
		    !(drv->states[i].flags & CPUIDLE_FLAG_POLLING))
			return i;
	return 0;
}

static int fit_select(struct cpuidle_driver *drv, struct cpuidle_device *dev,
		      bool *stop_tick)
{
	s64 limit = cpuidle_governor_latency_req(dev->cpu);
	ktime_t delta_next;
	s64 sleep = tick_nohz_get_sleep_length(&delta_next);
	int i, idx = -1;

	for (i = 0; i < drv->state_count; i++)
		if (usable(drv, dev, i, limit) &&
		    (idx < 0 || drv->states[i].target_residency_ns <= sleep))
			idx = i;
	if (idx < 0)
		idx = 0;
	/* With the tick stopped, delta_next is the sleep length: kept. */
	*stop_tick = sleep > delta_next &&
		     !(drv->states[idx].flags & CPUIDLE_FLAG_POLLING);
	return idx;
}

static struct cpuidle_governor ref_shallow = {
	.name = "ref-shallow",
	.select = shallow_select,
};

static struct cpuidle_governor ref_fit = {
	.name = "ref-fit",
	.select = fit_select,
};

/* Register the reference policies; govs_init() gives them their role. */
void refs_register(void)
{
	replay_register_governor(&ref_shallow, "ref-shallow");
	replay_register_governor(&ref_fit, "ref-fit");
}
