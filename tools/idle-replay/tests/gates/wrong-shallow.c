// SPDX-License-Identifier: GPL-2.0
/*
 * Built wrong on purpose, for the energy targets' negative test: the
 * shallowest enabled state, with the tick kept, on every idle period.  It
 * keeps the cpuidle contract and loses no work, but in an open loop of
 * long idle periods it spends far more energy than the baselines.
 */
#include <linux/cpuidle.h>

static int shallow_select(struct cpuidle_driver *drv, struct cpuidle_device *dev,
			  bool *stop_tick)
{
	int i;

	*stop_tick = false;
	for (i = 0; i < drv->state_count; i++)
		if (!dev->states_usage[i].disable)
			return i;
	return 0;
}

static struct cpuidle_governor shallow_governor = {
	.name = "wrong-shallow",
	.rating = 1,
	.select = shallow_select,
};

static int __init shallow_init(void)
{
	return cpuidle_register_governor(&shallow_governor);
}

postcore_initcall(shallow_init);
