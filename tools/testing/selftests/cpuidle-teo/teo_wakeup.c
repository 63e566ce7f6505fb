// SPDX-License-Identifier: GPL-2.0
/*
 * Waker/wakee workload under teo.  A wakee thread on one CPU is woken every
 * N us, either through a pipe written by a waker thread on another CPU
 * (a non-timer wakeup the governor cannot see coming) or by its own timer.
 * N is swept across the platform's target residencies.
 *
 * Asserted: every wakeup arrives, whatever states teo picks for the wait;
 * one that has not come PEER_WAIT_MS after it was due fails the test
 * rather than hanging it.  For each N the wakee CPU's share of idle
 * entries per state and its "above" (too deep) and "below" (too shallow)
 * percentages are printed, for information only: how often a governor
 * misses depends on the machine and its other activity, so no share is
 * asserted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest.h"
#include "cpuidle_util.h"

#define MAX_POINTS	20
#define WARMUP		10

enum mode { PIPE, TIMER };

struct run {
	enum mode mode;
	unsigned long long n_us;
	int count;
	int fds[2];
	int wakee_cpu;
	int waker_cpu;
	atomic_int received;
};

static unsigned long long points[MAX_POINTS];
static int nr_points;

static void add_point(unsigned long long n_us)
{
	int i, j;

	if (!n_us || n_us > 10000 || nr_points == MAX_POINTS)
		return;
	for (i = 0; i < nr_points && points[i] <= n_us; i++)
		if (points[i] == n_us)
			return;
	for (j = nr_points; j > i; j--)
		points[j] = points[j - 1];
	points[i] = n_us;
	nr_points++;
}

static void make_points(void)
{
	static const unsigned long long fixed[] = { 5, 10, 30, 100, 300, 1000, 3000 };
	unsigned long long r;
	unsigned int i;
	int s;

	for (i = 0; i < ARRAY_SIZE(fixed); i++)
		add_point(fixed[i]);
	for (s = 1; s < nr_states; s++) {
		r = states[s].residency_us;
		if (r < 10)
			continue;
		add_point(r / 2);
		add_point(r);
		add_point(r + r / 2);
	}
}

static void *wakee(void *arg)
{
	struct run *run = arg;
	char c;
	int i;

	if (pin_self(run->wakee_cpu))
		return NULL;
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	for (i = 0; i < run->count; i++) {
		if (run->mode == TIMER)
			sleep_us(run->n_us);
		else if (read(run->fds[0], &c, 1) != 1)
			break;	/* end of file: the waker stopped */
		atomic_fetch_add(&run->received, 1);
	}
	return NULL;
}

/* Closes the write end when done, so that the wakee never waits for it. */
static void *waker(void *arg)
{
	struct run *run = arg;
	char c = 'w';
	int i;

	if (!pin_self(run->waker_cpu)) {
		prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
		for (i = 0; i < run->count; i++) {
			sleep_us(run->n_us);
			if (write(run->fds[1], &c, 1) != 1)
				break;
		}
	}
	close(run->fds[1]);
	return NULL;
}

/*
 * Wait for the wakee until PEER_WAIT_MS after its last wakeup was due: a
 * wakeup that never comes (a lost timer or IPI) fails the test instead of
 * hanging it.
 */
static void join_wakee(struct run *run, pthread_t tw)
{
	unsigned long long wait_ns;
	struct timespec t;

	wait_ns = run->count * run->n_us * 1000ULL + PEER_WAIT_MS * 1000000ULL;
	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += wait_ns / 1000000000;
	t.tv_nsec += wait_ns % 1000000000;
	if (t.tv_nsec >= 1000000000) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000;
	}
	if (pthread_timedjoin_np(tw, NULL, &t))
		ksft_exit_fail_msg("CPU %d: %d of %d %s wakeups every %llu us, none for %d ms\n",
				   run->wakee_cpu, atomic_load(&run->received),
				   run->count, run->mode == PIPE ? "pipe" : "timer",
				   run->n_us, PEER_WAIT_MS);
}

/*
 * Run @count wakeups, through a pipe of their own; false if a thread
 * failed or a wakeup did not arrive.
 */
static bool do_wakeups(struct run *run, int count)
{
	bool waker_started = false;
	pthread_t tw, tk;

	run->count = count;
	atomic_store(&run->received, 0);
	if (pipe(run->fds))
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
	if (run->mode == PIPE)
		waker_started = !pthread_create(&tk, NULL, waker, run);
	if (!waker_started)
		close(run->fds[1]);
	if (pthread_create(&tw, NULL, wakee, run))
		atomic_store(&run->received, -1);
	else
		join_wakee(run, tw);
	if (waker_started)
		pthread_join(tk, NULL);
	close(run->fds[0]);
	return atomic_load(&run->received) == count;
}

/* Wakeups made and lost over a sweep. */
struct sweep_result {
	unsigned long long sent;
	unsigned long long lost;
};

static void count_wakeups(struct run *run, int count, struct sweep_result *res)
{
	res->sent += count;
	if (!do_wakeups(run, count))
		res->lost += atomic_load(&run->received) < 0 ?
			     count : count - atomic_load(&run->received);
}

/* Print one line of the sweep's table: N, entries, above, below, per state. */
static void print_point(unsigned long long n_us, const struct idle_snap *d)
{
	unsigned long long usage = 0, above = 0, below = 0;
	char line[512];
	int s, len;

	for (s = 0; s < nr_states; s++) {
		usage += d->st[s].usage;
		above += d->st[s].above;
		below += d->st[s].below;
	}
	len = snprintf(line, sizeof(line), "  %6llu %7llu %6.1f%% %6.1f%% |",
		       n_us, usage, usage ? 100.0 * above / usage : 0.0,
		       usage ? 100.0 * below / usage : 0.0);
	for (s = 0; s < nr_states; s++)
		len += snprintf(line + len, sizeof(line) - len, " %6.1f%%",
				usage ? 100.0 * d->st[s].usage / usage : 0.0);
	ksft_print_msg("%s\n", line);
}

static void sweep(enum mode mode, struct run *run, struct sweep_result *res)
{
	struct idle_snap before, after;
	char line[512];
	int p, s, count, len;

	ksft_print_msg("teo, %s wakeups of CPU %d every N us:\n",
		       mode == PIPE ? "pipe (non-timer)" : "timer", run->wakee_cpu);
	len = snprintf(line, sizeof(line), "  %6s %7s %7s %7s |", "N(us)",
		       "entries", "above%", "below%");
	for (s = 0; s < nr_states; s++)
		len += snprintf(line + len, sizeof(line) - len, " %7.7s",
				states[s].name);
	ksft_print_msg("%s  (share of entries per state, %%)\n", line);

	run->mode = mode;
	for (p = 0; p < nr_points; p++) {
		run->n_us = points[p];
		count = 100000 / points[p];
		count = count < 30 ? 30 : count > 200 ? 200 : count;

		count_wakeups(run, WARMUP, res);
		read_snap(run->wakee_cpu, &before);
		count_wakeups(run, count, res);
		read_snap(run->wakee_cpu, &after);
		snap_delta(&after, &before);
		print_point(points[p], &after);
	}
}

int main(void)
{
	struct sweep_result pipe_res = { 0 }, timer_res = { 0 };
	struct run run;

	ksft_print_header();
	cpuidle_setup("teo");
	if (nr_cpus < 2)
		ksft_exit_skip("needs two CPUs (a waker and a wakee)\n");
	if (!deepest_usable(~0ULL))
		ksft_exit_skip("no enabled idle state deeper than state 0\n");

	memset(&run, 0, sizeof(run));
	run.wakee_cpu = cpus[nr_cpus - 1];
	run.waker_cpu = cpus[0];
	make_points();

	ksft_set_plan(2);
	sweep(PIPE, &run, &pipe_res);
	ksft_test_result(!pipe_res.lost,
			 "pipe wakeups: %llu of %llu arrived\n",
			 pipe_res.sent - pipe_res.lost, pipe_res.sent);
	sweep(TIMER, &run, &timer_res);
	ksft_test_result(!timer_res.lost,
			 "timer wakeups: %llu of %llu arrived\n",
			 timer_res.sent - timer_res.lost, timer_res.sent);
	ksft_finished();
}
