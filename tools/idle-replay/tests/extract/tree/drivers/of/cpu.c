// SPDX-License-Identifier: GPL-2.0
/* Fake: which list a CPU's idle states come from. */

struct device_node *of_get_cpu_state_node(struct device_node *cpu_node, int index)
{
	if (!of_parse_phandle_with_args(cpu_node, "power-domains", "#power-domain-cells", 0, &args)) {
		state_node = of_parse_phandle(args.np, "domain-idle-states", index);
		if (state_node)
			return state_node;
	}
	return of_parse_phandle(cpu_node, "cpu-idle-states", index);
}
