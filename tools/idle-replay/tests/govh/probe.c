// SPDX-License-Identifier: GPL-2.0
/*
 * A governor source with a gov.h next to it: the quoted include must find
 * that one, not the base tree's (each tree's teo.c and menu.c build against
 * their own tree's gov.h).
 */
#include <linux/cpuidle.h>

#include "gov.h"

#ifndef REPLAY_TEST_OWN_GOV_H
#error "gov.h came from somewhere else than the source's own folder"
#endif

static int probe_select(struct cpuidle_driver *drv, struct cpuidle_device *dev,
			bool *stop_tick)
{
	return 0;
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
