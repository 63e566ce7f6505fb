// SPDX-License-Identifier: GPL-2.0
/*
 * teo-ring: a token passed around N threads, each pinned to a CPU of its
 * own, through pipes, with W us of busy work per hop: the "ping-pong" test
 * of cpuidle governors.  Every hop wakes the next CPU with an IPI, never a
 * timer, so the wakeup is one the governor cannot see coming; a governor
 * that sends the waiting CPUs too deep pays the exit latency on every hop,
 * and the laps per second show it.
 *
 * Prints one JSON object on stdout:
 *   {"program": "teo-ring", "threads": N, "cpus": [...], "work_us": W,
 *    "runtime_s": S, "elapsed_s": E, "laps": L, "hops": H,
 *    "laps_per_s": X, "us_per_hop": Y}
 * elapsed_s runs from the first hop to the end of the last full lap.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

#define MAX_THREADS 256
/* The token that ends the run when it has gone round once. */
#define STOP (-1)

static const char usage[] =
"usage: teo-ring [--threads N] [--work-us W] [--runtime S]\n"
"\n"
"Pass a token around N threads, one pinned to each of the first N CPUs\n"
"this process may use, through pipes; each thread spins W us on the clock\n"
"before it passes the token on.  After S seconds print laps per second\n"
"and us per hop as one JSON object.\n"
"\n"
"  --threads N   2 up to the CPUs allowed (default: all of them)\n"
"  --work-us W   busy work per hop, 0..1000000 us (default 10)\n"
"  --runtime S   seconds, above 0 and at most 3600 (default 10)\n";

static const char *const options[] = { "--threads", "--work-us", "--runtime", NULL };

struct ring {
	int n;
	int cpus[MAX_THREADS];
	/* Thread i reads pipes[i][0]; it writes pipes[(i + 1) % n][1]. */
	int pipes[MAX_THREADS][2];
	int64_t work_ns;
	pthread_barrier_t start;
};

struct hop {
	struct ring *ring;
	int index;
};

static int64_t take(struct ring *r, int i)
{
	int64_t token;

	pipe_io(r->pipes[i][0], &token, sizeof(token), 0, "a thread's read from its pipe");
	return token;
}

static void pass(struct ring *r, int i, int64_t token)
{
	pipe_io(r->pipes[(i + 1) % r->n][1], &token, sizeof(token), 1,
		"a thread's write to the next pipe");
}

static void *member(void *arg)
{
	struct hop *h = arg;
	struct ring *r = h->ring;
	int64_t token;

	pin_to(r->cpus[h->index]);
	pthread_barrier_wait(&r->start);
	for (;;) {
		token = take(r, h->index);
		if (token == STOP) {
			pass(r, h->index, STOP);
			return NULL;
		}
		busy_until(now_ns(), r->work_ns);
		pass(r, h->index, token);
	}
}

int main(int argc, char **argv)
{
	static struct ring r;
	static struct hop hops[MAX_THREADS];
	pthread_t threads[MAX_THREADS];
	int allowed[MAX_THREADS];
	int nallowed, i, err;
	long threads_opt = 0, work_us = 10;
	double runtime = 10;
	int64_t t0, end, last, t;
	long laps = 0;
	double elapsed;

	prog = "teo-ring";
	for (i = 1; i < argc; i++) {
		const char *value, *opt = next_option(argc, argv, &i, options, usage, &value);

		if (!strcmp(opt, "--threads"))
			threads_opt = parse_long(opt, value, 2, MAX_THREADS);
		else if (!strcmp(opt, "--work-us"))
			work_us = parse_long(opt, value, 0, 1000000);
		else
			runtime = parse_seconds(opt, value, 3600);
	}
	nallowed = allowed_cpus(allowed, MAX_THREADS);
	if (threads_opt > nallowed)
		die_usage("--threads: %ld threads need as many CPUs, this process may use %d",
			  threads_opt, nallowed);
	r.n = threads_opt ? threads_opt : nallowed;
	if (r.n < 2)
		die("a ring needs 2 CPUs or more, this process may use %d", nallowed);
	memcpy(r.cpus, allowed, sizeof(int) * r.n);
	r.work_ns = (int64_t)work_us * 1000;
	for (i = 0; i < r.n; i++)
		if (pipe(r.pipes[i]))
			die("pipe: %s", strerror(errno));
	pthread_barrier_init(&r.start, NULL, r.n);
	for (i = 1; i < r.n; i++) {
		hops[i].ring = &r;
		hops[i].index = i;
		err = pthread_create(&threads[i], NULL, member, &hops[i]);
		if (err)
			die("pthread_create: %s", strerror(err));
	}

	/* Thread 0 is this one: it counts the laps and ends the run. */
	pin_to(r.cpus[0]);
	pthread_barrier_wait(&r.start);
	t0 = now_ns();
	end = t0 + (int64_t)(runtime * 1e9);
	last = t0;
	busy_until(t0, r.work_ns);
	pass(&r, 0, 0);
	for (;;) {
		int64_t token = take(&r, 0);

		t = now_ns();
		laps++;
		last = t;
		if (t >= end)
			break;
		busy_until(t, r.work_ns);
		pass(&r, 0, token + 1);
	}
	pass(&r, 0, STOP);
	if (take(&r, 0) != STOP)
		die("the stop token did not come back");
	for (i = 1; i < r.n; i++)
		pthread_join(threads[i], NULL);

	elapsed = (last - t0) / 1e9;
	printf("{\"program\": \"teo-ring\", \"threads\": %d, \"cpus\": [", r.n);
	for (i = 0; i < r.n; i++)
		printf("%s%d", i ? ", " : "", r.cpus[i]);
	printf("], \"work_us\": %ld, \"runtime_s\": %g, \"elapsed_s\": %.6f",
	       work_us, runtime, elapsed);
	printf(", \"laps\": %ld, \"hops\": %ld, \"laps_per_s\": %.3f, \"us_per_hop\": %.3f}\n",
	       laps, laps * r.n, elapsed > 0 ? laps / elapsed : 0.0,
	       laps ? elapsed * 1e6 / (laps * r.n) : 0.0);
	return 0;
}
