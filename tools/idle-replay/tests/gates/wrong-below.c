// SPDX-License-Identifier: GPL-2.0
/*
 * Built wrong on purpose, for the oracle gate's negative test: always the
 * deepest state of the table, disabled or over the latency limit as it may
 * be.  Where a state is disabled (tests/data/off.plat) it idles deeper
 * than anything the rules allow, so it comes out below the oracle.
 */
#include <linux/cpuidle.h>

static int below_select(struct cpuidle_driver *drv, struct cpuidle_device *dev,
			bool *stop_tick)
{
	*stop_tick = true;
	return drv->state_count - 1;
}

static struct cpuidle_governor below_governor = {
	.name = "wrong-below",
	.rating = 1,
	.select = below_select,
};

static int __init below_init(void)
{
	return cpuidle_register_governor(&below_governor);
}

postcore_initcall(below_init);
