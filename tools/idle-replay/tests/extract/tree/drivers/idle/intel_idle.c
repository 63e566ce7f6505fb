// SPDX-License-Identifier: GPL-2.0
/*
 * Fake intel_idle.c: a few state tables and the lines of the registration
 * logic that tools/idle-replay/extract-tables.py checks before it trusts
 * its model of the driver.
 */

static int max_cstate = CPUIDLE_STATE_MAX - 1;

/* C1E is unusable by default, C6 starts disabled; hex and expressions. */
static struct cpuidle_state alpha_cstates[] __initdata = {
	{
		.name = "C1",
		.flags = MWAIT2flg(0x00),
		.exit_latency = 1,
		.target_residency = 2,
		.enter = &intel_idle,
		.enter_s2idle = intel_idle_s2idle, },
	{
		.name = "C1E",
		.flags = MWAIT2flg(0x01) | CPUIDLE_FLAG_UNUSABLE,
		.exit_latency = 5,
		.target_residency = 10,
		.enter = &intel_idle,
		.enter_s2idle = intel_idle_s2idle, },
	{
		.name = "C6",
		.flags = MWAIT2flg(0x20) | CPUIDLE_FLAG_OFF,
		.exit_latency = 0x64,
		.target_residency = (100 * 3),
		.enter = &intel_idle,
		.enter_s2idle = intel_idle_s2idle, },
	{
		.enter = NULL }
};

/* The same numbers under other names: one table in the corpus. */
static struct cpuidle_state alpha2_cstates[] __initdata = {
	{
		.name = "C1-A2",
		.exit_latency = 1,
		.target_residency = 2,
		.enter = &intel_idle, },
	{
		.name = "C6-A2",
		.flags = CPUIDLE_FLAG_OFF,
		.exit_latency = 100,
		.target_residency = 300,
		.enter = &intel_idle, },
	{
		.enter = NULL }
};

/* Target residencies that go down: written, with a note. */
static struct cpuidle_state brk_cstates[] __initdata = {
	{
		.name = "C1",
		.exit_latency = 2,
		.target_residency = 20,
		.enter = &intel_idle, },
	{
		.name = "C3",
		.exit_latency = 10,
		.target_residency = 15,
		.enter = &intel_idle, },
	{
		.enter = NULL }
};

/* Ten entries: intel_idle registers the first nine (max_cstate). */
static struct cpuidle_state many_cstates[] __initdata = {
	{ .name = "S1", .exit_latency = 1, .target_residency = 1, .enter = &intel_idle, },
	{ .name = "S2", .exit_latency = 2, .target_residency = 2, .enter = &intel_idle, },
	{ .name = "S3", .exit_latency = 3, .target_residency = 3, .enter = &intel_idle, },
	{ .name = "S4", .exit_latency = 4, .target_residency = 4, .enter = &intel_idle, },
	{ .name = "S5", .exit_latency = 5, .target_residency = 5, .enter = &intel_idle, },
	{ .name = "S6", .exit_latency = 6, .target_residency = 6, .enter = &intel_idle, },
	{ .name = "S7", .exit_latency = 7, .target_residency = 7, .enter = &intel_idle, },
	{ .name = "S8", .exit_latency = 8, .target_residency = 8, .enter = &intel_idle, },
	{ .name = "S9", .exit_latency = 9, .target_residency = 9, .enter = &intel_idle, },
	{ .name = "S10", .exit_latency = 10, .target_residency = 10, .enter = &intel_idle, },
	{ .enter = NULL }
};

static const struct idle_cpu idle_cpu_alpha __initconst = {
	.state_table = alpha_cstates,
};

static const struct idle_cpu idle_cpu_alpha_x __initconst = {
	.state_table = alpha_cstates,
	.use_acpi = true,
};

static const struct idle_cpu idle_cpu_brk __initconst = {
	.state_table = brk_cstates,
};

static const struct x86_cpu_id intel_idle_ids[] __initconst = {
	X86_MATCH_VFM(INTEL_ALPHA,	&idle_cpu_alpha),
	X86_MATCH_VFM(INTEL_ALPHA_X,	&idle_cpu_alpha_x),
	X86_MATCH_VFM(INTEL_BRK,	&idle_cpu_brk),
	{}
};

static bool __init intel_idle_max_cstate_reached(int cstate)
{
	return cstate + 1 > max_cstate;
}

static void __init alpha_idle_state_table_update(void)
{
	if (fake_msr_says_so())
		alpha_cstates[2].exit_latency = 90;
}

static void __init intel_idle_init_cstates_icpu(struct cpuidle_driver *drv)
{
	int cstate;

	switch (boot_cpu_data.x86_vfm) {
	case INTEL_ALPHA_X:
		alpha_idle_state_table_update();
		break;
	}

	for (cstate = 0; cstate < CPUIDLE_STATE_MAX; ++cstate) {
		if (intel_idle_max_cstate_reached(cstate))
			break;

		if (!cpuidle_state_table[cstate].enter &&
		    !cpuidle_state_table[cstate].enter_s2idle)
			break;

		if (cpuidle_state_table[cstate].flags & CPUIDLE_FLAG_UNUSABLE) {
			pr_debug("state %s is disabled\n", cpuidle_state_table[cstate].name);
			continue;
		}

		drv->states[drv->state_count++] = cpuidle_state_table[cstate];
	}
}

static void __init intel_idle_cpuidle_driver_init(struct cpuidle_driver *drv)
{
	cpuidle_poll_state_init(drv);
	drv->state_count = 1;
	intel_idle_init_cstates_icpu(drv);
}
