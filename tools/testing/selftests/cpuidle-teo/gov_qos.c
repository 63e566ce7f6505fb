// SPDX-License-Identifier: GPL-2.0
/*
 * Under every governor the kernel offers (haltpoll aside, see
 * governors_to_test()), a CPU latency limit held open through
 * /dev/cpu_dma_latency must be honoured: while it is held, no idle state
 * whose exit latency is above the limit is entered.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../kselftest.h"
#include "cpuidle_util.h"

#define ROUNDS	60

static void check_limit(const char *gov, int32_t limit_us)
{
	struct idle_snap after;
	unsigned long long entered = 0, allowed = 0;
	char title[128];
	int fd, s, mix;

	fd = open("/dev/cpu_dma_latency", O_RDWR);
	if (fd < 0) {
		ksft_test_result_fail("%s, limit %d us: /dev/cpu_dma_latency: %s\n",
				      gov, limit_us, strerror(errno));
		return;
	}
	if (write(fd, &limit_us, sizeof(limit_us)) != sizeof(limit_us)) {
		ksft_test_result_fail("%s, limit %d us: write: %s\n", gov,
				      limit_us, strerror(errno));
		close(fd);
		return;
	}
	mix = measure_idle_mix(ROUNDS, &after);
	close(fd);	/* drops the limit */
	if (mix) {
		ksft_test_result_fail("%s, limit %d us: the idle workload failed\n",
				      gov, limit_us);
		return;
	}

	snprintf(title, sizeof(title), "%s, latency limit %d us held:", gov,
		 limit_us);
	print_snap(title, &after);
	for (s = 0; s < nr_states; s++) {
		if (states[s].latency_us > (unsigned long long)limit_us)
			entered += after.st[s].usage;
		else
			allowed += after.st[s].usage;
	}
	if (!allowed)
		ksft_test_result_fail("%s, limit %d us: no idle entries at all\n",
				      gov, limit_us);
	else
		ksft_test_result(entered == 0,
				 "%s, limit %d us: %llu entries above it, %llu within\n",
				 gov, limit_us, entered, allowed);
}

int main(void)
{
	char govs[MAX_GOVERNORS][NAME_LEN];
	unsigned long long deep_lat, low_lat = 0;
	int g, n, s, per_gov, err;

	ksft_print_header();
	cpuidle_setup(NULL);
	if (access("/dev/cpu_dma_latency", W_OK))
		ksft_exit_skip("/dev/cpu_dma_latency: %s\n", strerror(errno));

	deep_lat = states[nr_states - 1].latency_us;
	if (nr_states < 2 || !deep_lat)
		ksft_exit_skip("no idle state with a non-zero exit latency to forbid\n");
	n = governors_to_test(govs, MAX_GOVERNORS);
	if (!n)
		ksft_exit_skip("no governor to test\n");
	/* The smallest non-zero latency, if it leaves more than one state out. */
	for (s = 0; s < nr_states; s++) {
		if (states[s].latency_us) {
			low_lat = states[s].latency_us;
			break;
		}
	}
	if (low_lat >= deep_lat - 1)
		low_lat = 0;

	per_gov = low_lat ? 2 : 1;
	ksft_set_plan(n * per_gov);
	for (g = 0; g < n; g++) {
		err = write_governor(govs[g]);
		if (err) {
			ksft_test_result_fail("cannot switch to %s: %s\n", govs[g],
					      strerror(-err));
			if (low_lat)
				ksft_test_result_skip("%s: not selected\n", govs[g]);
			continue;
		}
		/* Forbid only the deepest state, then all but the shallow ones. */
		check_limit(govs[g], deep_lat - 1);
		if (low_lat)
			check_limit(govs[g], low_lat);
	}
	ksft_finished();
}
