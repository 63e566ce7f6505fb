// SPDX-License-Identifier: GPL-2.0
/*
 * idle-replay: the oracle, a governor that knows the future.
 *
 * It asks the engine when the next wakeup of any kind will arrive (timers,
 * interrupts, and the tick if the tick code would refuse to stop it), and
 * picks the deepest enabled state within the latency limit whose target
 * residency (its break-even time, see platform.c) fits into that time.  It
 * stops the tick whenever the tick would otherwise end the idle period
 * first.  Under the lab's energy model no governor can use less idle
 * energy on the same timeline.
 */

#include <stdlib.h>

#include "replay.h"

static bool usable(const struct cpuidle_driver *drv,
		   const struct cpuidle_device *dev, int i, s64 limit)
{
	return !dev->states_usage[i].disable &&
	       drv->states[i].exit_latency_ns <= limit;
}

static int first_enabled(const struct cpuidle_device *dev, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!dev->states_usage[i].disable)
			return i;
	return 0;
}

static int deepest_fit(const struct cpuidle_driver *drv,
		       const struct cpuidle_device *dev, u64 idle, s64 limit)
{
	int i, best = -1;

	for (i = 0; i < drv->state_count; i++) {
		if (!usable(drv, dev, i, limit))
			continue;
		if (best < 0 || (u64)drv->states[i].target_residency_ns <= idle)
			best = i;
	}
	return best >= 0 ? best : first_enabled(dev, drv->state_count);
}

static int oracle_select(struct cpuidle_driver *drv, struct cpuidle_device *dev,
			 bool *stop_tick)
{
	struct machine *m = replay_machine;
	u64 now = engine_now(m);
	u64 next = engine_future_arrival(m, dev->cpu);
	u64 tick = engine_next_tick(m, dev->cpu);
	u64 end = next;
	int idx;

	if (!engine_can_stop_tick(m, dev->cpu))
		end = min(end, tick);
	idx = deepest_fit(drv, dev, end == U64_MAX ? U64_MAX : end - now,
			  engine_latency_req(m, dev->cpu));
	*stop_tick = next > tick &&
		     !(drv->states[idx].flags & CPUIDLE_FLAG_POLLING);
	return idx;
}

static struct cpuidle_governor oracle = {
	.name = "oracle",
	.select = oracle_select,
};

struct cpuidle_governor *oracle_governor(void)
{
	return &oracle;
}
