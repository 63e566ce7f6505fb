/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the workload programs of the teo benchmark share: option parsing
 * with one-line errors, the clock, busy work and CPU pinning.
 */
#ifndef TEO_BENCH_COMMON_H
#define TEO_BENCH_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* Exit status of bad input (as every command of the teo tooling). */
#define EXIT_USAGE 2

/* The program's name in messages, set by main(). */
extern const char *prog;

void die_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/*
 * The option at argv[*@i], one of @opts (a NULL-terminated list of
 * options that each take a value), with its value in *@value; *@i moves
 * past the value.  --help prints @usage and exits; an unknown option or a
 * missing value is a usage error.
 */
const char *next_option(int argc, char **argv, int *i, const char *const *opts,
			const char *usage, const char **value);

/*
 * The value of option @opt as a whole number in [@min, @max], or a usage
 * error naming the option.
 */
long parse_long(const char *opt, const char *text, long min, long max);

/* The value of option @opt as seconds, above 0 and at most @max. */
double parse_seconds(const char *opt, const char *text, double max);

/* CLOCK_MONOTONIC in ns. */
int64_t now_ns(void);

/*
 * Spin on the clock until @ns have passed since @from: work that keeps
 * the CPU busy without a timer the governor could see.
 */
void busy_until(int64_t from, int64_t ns);

/*
 * The CPUs this process may run on, in ascending order, into @cpus (room
 * for @max); their count.
 */
int allowed_cpus(int *cpus, int max);

/*
 * Read (@out false) or write (@out true) @len bytes of @buf on the pipe
 * @fd, or die naming @what.
 */
void pipe_io(int fd, void *buf, size_t len, int out, const char *what);

/* Pin the calling thread to @cpu, or die. */
void pin_to(int cpu);

#endif
