// SPDX-License-Identifier: GPL-2.0
/* Fake: two static driver tables, one from a macro and an enum. */
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
		.name = "Deep Sleep",
	},
	.state_count = ACME_MAX_STATES,
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
