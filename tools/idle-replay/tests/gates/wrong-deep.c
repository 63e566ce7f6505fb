// SPDX-License-Identifier: GPL-2.0
/*
 * Built wrong on purpose, for the work target's negative test: the deepest
 * enabled state within the latency limit, whatever the recent wakeups say.
 * It keeps the cpuidle contract, but in a token ring every hop pays the
 * deep state's exit latency, so it does far less work than the baselines.
 */
#include <linux/cpuidle.h>

static int deep_select(struct cpuidle_driver *drv, struct cpuidle_device *dev,
		       bool *stop_tick)
{
	s64 limit = cpuidle_governor_latency_req(dev->cpu);
	int i, idx = 0;

	for (i = 1; i < drv->state_count; i++)
		if (!dev->states_usage[i].disable &&
		    drv->states[i].exit_latency_ns <= limit)
			idx = i;
	*stop_tick = !(drv->states[idx].flags & CPUIDLE_FLAG_POLLING);
	return idx;
}

static struct cpuidle_governor deep_governor = {
	.name = "wrong-deep",
	.rating = 1,
	.select = deep_select,
};

static int __init deep_init(void)
{
	return cpuidle_register_governor(&deep_governor);
}

postcore_initcall(deep_init);
