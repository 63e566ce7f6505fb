// SPDX-License-Identifier: GPL-2.0
/* Fake: the polling state the core offers drivers as their state 0. */

void cpuidle_poll_state_init(struct cpuidle_driver *drv)
{
	struct cpuidle_state *state = &drv->states[0];

	snprintf(state->name, CPUIDLE_NAME_LEN, "POLL");
	state->exit_latency = 0;
	state->target_residency = 0;
	state->flags = CPUIDLE_FLAG_POLLING;
}
