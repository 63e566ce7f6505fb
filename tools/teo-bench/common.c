// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers of the teo benchmark's workload programs (common.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

const char *prog = "teo-bench";

static void vsay(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: error: ", prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void die_usage(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
	exit(EXIT_USAGE);
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
	exit(1);
}

const char *next_option(int argc, char **argv, int *i, const char *const *opts,
			const char *usage, const char **value)
{
	const char *opt = argv[*i];

	if (!strcmp(opt, "--help") || !strcmp(opt, "-h")) {
		fputs(usage, stdout);
		exit(0);
	}
	while (*opts && strcmp(*opts, opt))
		opts++;
	if (!*opts)
		die_usage("unknown option '%s' (see --help)", opt);
	if (*i + 1 >= argc)
		die_usage("%s needs a value", opt);
	*value = argv[++*i];
	return opt;
}

long parse_long(const char *opt, const char *text, long min, long max)
{
	char *end;
	long v;

	/* Plain decimal only: no sign, no blanks, no hex. */
	if (!text || text[0] < '0' || text[0] > '9')
		die_usage("%s: '%s' is not a whole number", opt, text ? text : "");
	errno = 0;
	v = strtol(text, &end, 10);
	if (*end || errno)
		die_usage("%s: '%s' is not a whole number", opt, text);
	if (v < min || v > max)
		die_usage("%s: %ld is outside %ld..%ld", opt, v, min, max);
	return v;
}

double parse_seconds(const char *opt, const char *text, double max)
{
	char *end;
	double v;

	if (!text || ((text[0] < '0' || text[0] > '9') && text[0] != '.'))
		die_usage("%s: '%s' is not a number of seconds", opt, text ? text : "");
	errno = 0;
	v = strtod(text, &end);
	if (*end || errno || !isfinite(v))
		die_usage("%s: '%s' is not a number of seconds", opt, text);
	if (v <= 0 || v > max)
		die_usage("%s: %s s is not above 0 and at most %g", opt, text, max);
	return v;
}

int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void busy_until(int64_t from, int64_t ns)
{
	while (now_ns() - from < ns)
		;
}

int allowed_cpus(int *cpus, int max)
{
	cpu_set_t set;
	int cpu, n = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		die("sched_getaffinity: %s", strerror(errno));
	for (cpu = 0; cpu < CPU_SETSIZE && n < max; cpu++)
		if (CPU_ISSET(cpu, &set))
			cpus[n++] = cpu;
	return n;
}

void pipe_io(int fd, void *buf, size_t len, int out, const char *what)
{
	ssize_t n;

	do
		n = out ? write(fd, buf, len) : read(fd, buf, len);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)len)
		die("%s: %s", what, n < 0 ? strerror(errno) : out ? "short write" : "short read");
}

void pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	/* Pid 0: the calling thread only. */
	if (sched_setaffinity(0, sizeof(set), &set))
		die("cannot pin a thread to CPU %d: %s", cpu, strerror(errno));
}
