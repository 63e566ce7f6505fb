// SPDX-License-Identifier: GPL-2.0
/*
 * A governor source that compiles but never registers its governor (no
 * postcore_initcall): the lab must say so instead of running without it.
 */
#include <linux/cpuidle.h>

static int quiet_select(struct cpuidle_driver *drv, struct cpuidle_device *dev,
			bool *stop_tick)
{
	return 0;
}

struct cpuidle_governor quiet_governor = {
	.name = "quiet",
	.select = quiet_select,
};
