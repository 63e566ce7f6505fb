// SPDX-License-Identifier: GPL-2.0
/* Fake: how the core treats the _UNUSABLE and _OFF flags at registration. */

static int fake_register_device(struct cpuidle_device *dev)
{
	for (i = 0; i < drv->state_count; i++) {
		if (drv->states[i].flags & CPUIDLE_FLAG_UNUSABLE)
			dev->states_usage[i].disable |= CPUIDLE_STATE_DISABLED_BY_DRIVER;
		if (drv->states[i].flags & CPUIDLE_FLAG_OFF)
			dev->states_usage[i].disable |= CPUIDLE_STATE_DISABLED_BY_USER;
	}
	return 0;
}
