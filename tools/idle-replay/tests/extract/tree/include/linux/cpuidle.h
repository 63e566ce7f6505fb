/* SPDX-License-Identifier: GPL-2.0 */
/* Fake: the one constant the extractor reads. */
#define CPUIDLE_STATE_MAX	10
