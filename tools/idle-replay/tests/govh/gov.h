/* SPDX-License-Identifier: GPL-2.0 */
/* A gov.h of its own: the lab must compile probe.c against this one. */
#define REPLAY_TEST_OWN_GOV_H 1
