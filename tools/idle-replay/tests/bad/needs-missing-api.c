// SPDX-License-Identifier: GPL-2.0
/*
 * A governor that uses a kernel call the replay shim does not provide: the
 * build must fail and name it (tick_nohz_get_next_hrtimer).
 */
#include <linux/cpuidle.h>
#include <linux/tick.h>

static int probe_select(struct cpuidle_driver *drv, struct cpuidle_device *dev,
			bool *stop_tick)
{
	return tick_nohz_get_next_hrtimer() > 0;
}

static struct cpuidle_governor probe_governor = {
	.name = "probe",
	.select = probe_select,
};

static int __init probe_init(void)
{
	return cpuidle_register_governor(&probe_governor);
}

postcore_initcall(probe_init);
