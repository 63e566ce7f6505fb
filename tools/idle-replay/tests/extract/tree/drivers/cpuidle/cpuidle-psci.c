// SPDX-License-Identifier: GPL-2.0
/* Fake: the PSCI driver's own WFI state 0; its other states come from DT. */

static const struct of_device_id psci_idle_state_match[] = {
	{ .compatible = "arm,idle-state", },
	{ },
};

static int fake_psci_idle_init_cpu(struct cpuidle_driver *drv)
{
	drv->states[0].exit_latency = 1;
	drv->states[0].target_residency = 1;
	strcpy(drv->states[0].name, "WFI");
	return dt_init_idle_driver(drv, psci_idle_state_match, 1);
}
