// SPDX-License-Identifier: GPL-2.0
/*
 * teo-interval: a waker thread wakes a sleeper thread on another CPU
 * through a pipe every I us: short idle periods ended by an IPI, never by
 * a timer.  The waker spins on the clock between wakeups (its own CPU
 * never idles) and waits, spinning, until the sleeper has taken the
 * message before it schedules the next one, so the wakeups per second
 * achieved fall short of 1e6 / I when waking the sleeper takes longer
 * than the interval.  The wakeup latency is the time from the waker's
 * write to the sleeper's read returning; it includes the exit latency of
 * the idle state the sleeper's CPU was in.
 *
 * With --pm-qos US it holds /dev/cpu_dma_latency open with that limit for
 * the whole run (0: no idle state with an exit latency).
 *
 * Prints one JSON object on stdout:
 *   {"program": "teo-interval", "cpus": [WAKER, SLEEPER], "interval_us": I,
 *    "pm_qos_us": null or US, "runtime_s": S, "elapsed_s": E,
 *    "wakeups": N, "late": L, "wakeups_per_s": X, "target_per_s": T,
 *    "lat_avg_us": A, "lat_max_us": M,
 *    "lat_hist_us": {"BUCKET": COUNT, ...}, "lat_overflow": O}
 * The histogram has 1 us buckets up to HIST_US; "late" counts the
 * wakeups scheduled after their time because the previous one was not
 * taken yet.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

#define HIST_US 10000
#define PM_QOS_DEV "/dev/cpu_dma_latency"

static const char usage[] =
"usage: teo-interval [--interval-us I] [--runtime S] [--pm-qos US]\n"
"\n"
"Wake a thread on the second CPU this process may use from a thread on the\n"
"first, through a pipe, every I us, for S seconds; print the wakeups per\n"
"second achieved and the wakeup latency as one JSON object.\n"
"\n"
"  --interval-us I  1..1000000 (default 20)\n"
"  --runtime S      seconds, above 0 and at most 3600 (default 10)\n"
"  --pm-qos US      hold a PM QoS limit of US microseconds on\n"
"                   " PM_QOS_DEV " for the run (0..100000000)\n";

static const char *const options[] = { "--interval-us", "--runtime", "--pm-qos", NULL };

struct message {
	int64_t sent_ns;
	int64_t seq;
};

struct wakee {
	int cpu;
	int fd;
	/* The last message taken; the waker spins on it. */
	_Atomic int64_t taken;
	long hist[HIST_US];
	long overflow;
	int64_t sum_ns;
	int64_t max_ns;
	long count;
};

static void *sleeper(void *arg)
{
	struct wakee *w = arg;
	struct message m;
	int64_t lat;

	pin_to(w->cpu);
	for (;;) {
		pipe_io(w->fd, &m, sizeof(m), 0, "the woken thread's read");
		if (m.seq < 0)
			return NULL;
		lat = now_ns() - m.sent_ns;
		if (lat < 0)
			lat = 0;
		if (lat / 1000 < HIST_US)
			w->hist[lat / 1000]++;
		else
			w->overflow++;
		w->sum_ns += lat;
		if (lat > w->max_ns)
			w->max_ns = lat;
		w->count++;
		atomic_store_explicit(&w->taken, m.seq, memory_order_release);
	}
}

static void send_message(int fd, int64_t seq)
{
	struct message m = { now_ns(), seq };

	pipe_io(fd, &m, sizeof(m), 1, "the waker's write");
}

/* Hold a PM QoS limit of @us while the descriptor stays open. */
static int hold_pm_qos(long us)
{
	int32_t value = us;
	int fd = open(PM_QOS_DEV, O_WRONLY);

	if (fd < 0)
		die("cannot set a PM QoS limit: %s: %s", PM_QOS_DEV, strerror(errno));
	if (write(fd, &value, sizeof(value)) != sizeof(value))
		die("cannot set a PM QoS limit: write to %s: %s", PM_QOS_DEV, strerror(errno));
	return fd;
}

int main(int argc, char **argv)
{
	static struct wakee w;
	int allowed[2], fds[2], i, err, qos_fd = -1;
	long interval_us = 20, qos = -1, late = 0, b;
	double runtime = 10, elapsed;
	int64_t t0, end, next, interval_ns, seq, t, last;
	pthread_t thread;

	prog = "teo-interval";
	for (i = 1; i < argc; i++) {
		const char *value, *opt = next_option(argc, argv, &i, options, usage, &value);

		if (!strcmp(opt, "--interval-us"))
			interval_us = parse_long(opt, value, 1, 1000000);
		else if (!strcmp(opt, "--pm-qos"))
			qos = parse_long(opt, value, 0, 100000000);
		else
			runtime = parse_seconds(opt, value, 3600);
	}
	if (allowed_cpus(allowed, 2) < 2)
		die("the waker and the sleeper need 2 CPUs, this process may use 1");
	if (qos >= 0)
		qos_fd = hold_pm_qos(qos);
	if (pipe(fds))
		die("pipe: %s", strerror(errno));
	w.cpu = allowed[1];
	w.fd = fds[0];
	err = pthread_create(&thread, NULL, sleeper, &w);
	if (err)
		die("pthread_create: %s", strerror(err));

	pin_to(allowed[0]);
	interval_ns = (int64_t)interval_us * 1000;
	/* Let the sleeper reach its first read before the clock starts. */
	usleep(10000);
	t0 = now_ns();
	end = t0 + (int64_t)(runtime * 1e9);
	next = t0 + interval_ns;
	last = t0;
	for (seq = 1;; seq++) {
		busy_until(next, 0);
		if (now_ns() >= end)
			break;
		send_message(fds[1], seq);
		while (atomic_load_explicit(&w.taken, memory_order_acquire) != seq)
			;
		last = now_ns();
		next += interval_ns;
		if (last > next) {
			late++;
			next = last;
		}
	}
	send_message(fds[1], -1);
	pthread_join(thread, NULL);
	if (qos_fd >= 0)
		close(qos_fd);

	elapsed = (last - t0) / 1e9;
	printf("{\"program\": \"teo-interval\", \"cpus\": [%d, %d], \"interval_us\": %ld",
	       allowed[0], allowed[1], interval_us);
	if (qos >= 0)
		printf(", \"pm_qos_us\": %ld", qos);
	else
		printf(", \"pm_qos_us\": null");
	t = w.count ? w.sum_ns / w.count : 0;
	printf(", \"runtime_s\": %g, \"elapsed_s\": %.6f", runtime, elapsed);
	printf(", \"wakeups\": %ld, \"late\": %ld", w.count, late);
	printf(", \"wakeups_per_s\": %.3f, \"target_per_s\": %.3f",
	       elapsed > 0 ? w.count / elapsed : 0.0, 1e6 / interval_us);
	printf(", \"lat_avg_us\": %.3f, \"lat_max_us\": %.3f, \"lat_hist_us\": {",
	       t / 1e3, w.max_ns / 1e3);
	for (i = 0, b = 0; b < HIST_US; b++) {
		if (!w.hist[b])
			continue;
		printf("%s\"%ld\": %ld", i++ ? ", " : "", b, w.hist[b]);
	}
	printf("}, \"lat_overflow\": %ld}\n", w.overflow);
	return 0;
}
