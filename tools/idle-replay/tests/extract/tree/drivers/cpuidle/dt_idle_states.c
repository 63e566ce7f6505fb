// SPDX-License-Identifier: GPL-2.0
/* Fake: how a DT idle state becomes a cpuidle state. */

static int fake_init_state_node(struct cpuidle_state *s, struct device_node *n)
{
	if (of_property_read_u32(n, "wakeup-latency-us", &s->exit_latency)) {
		read_u32(n, "entry-latency-us", &entry_latency);
		read_u32(n, "exit-latency-us", &exit_latency);
		s->exit_latency = entry_latency + exit_latency;
	}
	return of_property_read_u32(n, "min-residency-us", &s->target_residency);
}

int fake_dt_init_idle_driver(struct cpuidle_driver *drv)
{
	for (i = 0; ; i++) {
		state_node = of_get_cpu_state_node(cpu_node, i);
		if (!of_device_is_available(state_node)) {
			of_node_put(state_node);
			continue;
		}
	}
}
