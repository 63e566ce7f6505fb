/* SPDX-License-Identifier: GPL-2.0 */
/* Fake: a state initializer macro, as arch headers give drivers. */
#define ARM_CPUIDLE_WFI_STATE_PWR(p) {\
	.exit_latency		= 1,\
	.target_residency	= 1,\
	.power_usage		= p,\
	.name			= "WFI",\
}
#define ARM_CPUIDLE_WFI_STATE ARM_CPUIDLE_WFI_STATE_PWR(UINT_MAX)
