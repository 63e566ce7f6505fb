// SPDX-License-Identifier: GPL-2.0
/*
 * Fake: three static driver tables, one from a macro and an enum, one with
 * the power_usage (mW) of every state.
 */
#include <asm/cpuidle.h>

#define ACME_DEEP_EXIT	30

enum { ACME_WFI, ACME_DEEP, ACME_MAX_STATES };

static struct cpuidle_driver acme_idle_driver = {
	.name = "acme_idle",
	.states[ACME_WFI] = ARM_CPUIDLE_WFI_STATE,
	.states[ACME_DEEP] = {
		.enter = acme_enter,
		.exit_latency = ACME_DEEP_EXIT,
		.target_residency = 3 * ACME_DEEP_EXIT,
		.power_usage = 5,	/* alone: no ratio to take */
		.name = "Deep Sleep",
	},
	.state_count = ACME_MAX_STATES,
};

#define ACME_WFI_MW	400

static struct cpuidle_driver acme_lp_driver = {
	.name = "acme_lp",
	.states = {
		ARM_CPUIDLE_WFI_STATE_PWR(ACME_WFI_MW),
		{
			.enter = acme_enter,
			.exit_latency = 40,
			.target_residency = 300,
			.power_usage = ACME_WFI_MW / 4,
			.name = "Retention",
		},
		{
			.enter = acme_enter,
			.exit_latency = 900,
			.target_residency = 2000,
			.power_usage = 0,
			.name = "Off",
		},
	},
	.state_count = 3,
};

static struct cpuidle_state acme_lpar_states[] = {
	{ /* a polling state 0 */
		.name = "snooze",
		.exit_latency = 0,
		.target_residency = 0,
		.enter = &acme_snooze,
		.flags = CPUIDLE_FLAG_POLLING },
	{ /* not filled in: skipped */
		.name = "spare",
		.enter = NULL },
	{
		.name = "nap",
		.exit_latency = 010,	/* octal, as C reads it */
		.target_residency = 0x50,
		.enter = &acme_nap },
};

static void acme_fixup(void)
{
	acme_lpar_states[2].target_residency = firmware_residency;
}
