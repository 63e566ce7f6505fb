/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the cpuidle-teo selftests: the cpuidle sysfs files,
 * a restore-on-exit of everything the tests change, and small idle
 * workloads.
 */
#ifndef CPUIDLE_UTIL_H
#define CPUIDLE_UTIL_H

#include <stdbool.h>

#define CPUIDLE_DIR		"/sys/devices/system/cpu/cpuidle"
#define MAX_STATES		10
#define MAX_GOVERNORS		8
#define NAME_LEN		32
#define PATH_LEN		128

struct idle_state {
	char name[NAME_LEN];
	unsigned long long latency_us;
	unsigned long long residency_us;
	bool disabled;
};

/* Counters of one state, summed over the CPUs they were read from. */
struct idle_counts {
	unsigned long long usage;
	unsigned long long time_us;
	unsigned long long above;
	unsigned long long below;
};

struct idle_snap {
	struct idle_counts st[MAX_STATES];
};

/* The machine as cpuidle_setup() found it. */
extern int nr_cpus;
extern int *cpus;		/* the CPUs tested, nr_cpus of them */
extern int nr_states;
extern struct idle_state states[MAX_STATES];

/*
 * Skip the whole test (exit code 4, with a reason) unless running as root,
 * outside a container, on a kernel with a cpuidle driver and the governor
 * @gov (NULL: any), with cpuidle's sysfs files writable; otherwise record
 * the governor and every state's "disable" value so that they are put
 * back at exit or on SIGINT, SIGTERM and SIGHUP, switch to @gov and fill
 * in the globals above.
 */
void cpuidle_setup(const char *gov);
/* Put back the governor and the "disable" values, as at exit. */
void cpuidle_restore(void);

/* Read or write a sysfs file; 0 (or the length read) or -errno. */
int read_file(const char *path, char *buf, int len);
int write_file(const char *path, const char *val);
/*
 * Whether -errno @err says that the system refuses the write (a read-only
 * file system, a security policy), which makes a test skip, not fail.
 */
bool write_refused(int err);

int read_governor(char *buf, int len);
/* 0 or -errno. */
int write_governor(const char *gov);
int list_governors(char names[][NAME_LEN], int max);
bool governor_available(const char *gov);
/*
 * The available governors that promise to honour disabled states and PM
 * QoS limits: all but haltpoll, which is made for its own driver.
 */
int governors_to_test(char names[][NAME_LEN], int max);

/* Set "disable" of @state on every CPU in cpus[]; 0 or the first -errno. */
int set_state_disabled(int state, bool disable);
int set_state_disabled_cpu(int cpu, int state, bool disable);
/* Refresh states[].disabled from CPU cpus[0]. */
void reload_states(void);
/* Deepest state enabled on @cpu, read from its sysfs files; -1 if none. */
int deepest_enabled_cpu(int cpu);

/* Read the counters of all states on @cpu (-1: all CPUs in cpus[]). */
void read_snap(int cpu, struct idle_snap *snap);
/* @after - @before, in place in @after. */
void snap_delta(struct idle_snap *after, const struct idle_snap *before);
/* Deepest state that is enabled and allowed by @max_latency_us. */
int deepest_usable(unsigned long long max_latency_us);

/* Make every CPU in cpus[] leave idle once (runs a thread on each). */
void wake_all_cpus(void);
/* Pin the calling thread to @cpu; 0 or -1 with errno set. */
int pin_self(int cpu);

/*
 * Wait until @fd can be read, at most @ms milliseconds: a thread woken
 * through a pipe must not hang for ever when its peer has died.  1 when
 * readable (data or end of file), 0 on timeout, -1 on error.
 */
int wait_readable(int fd, int ms);
/* How long the tests' threads wait for a peer before giving up. */
#define PEER_WAIT_MS		10000

/*
 * A mixed idle workload on every CPU in cpus[]: timer sleeps of lengths
 * spread from microseconds to milliseconds and wakeups through a pipe,
 * @rounds times per CPU.  0, or -1 (with the reason printed) when a worker
 * failed; the others then stop too instead of waiting for it.
 */
int run_idle_mix(int rounds);

/*
 * Make every CPU leave idle once (so that a state entered before a change
 * of the rules is left before the first snapshot), then run
 * run_idle_mix(@rounds) and store the counter deltas over all CPUs in
 * @delta.  0 or -1 as run_idle_mix().
 */
int measure_idle_mix(int rounds, struct idle_snap *delta);

/* Sleep @us microseconds on a timer. */
void sleep_us(unsigned long long us);

/* Print @snap (deltas) as a table, one line per state, as TAP comments. */
void print_snap(const char *title, const struct idle_snap *snap);

/*
 * Kernel log: kmsg_open() returns a descriptor positioned at the end of
 * the log; kmsg_bad_lines() then reads what the kernel logged since and
 * prints and counts the lines that start a kernel report (BUG, WARNING,
 * Oops, RCU stall, lockup, hung task, KASAN, UBSAN, lockdep).
 * kmsg_is_report() is its test of one message.
 */
int kmsg_open(void);
int kmsg_bad_lines(int fd);
bool kmsg_is_report(const char *msg);

#endif /* CPUIDLE_UTIL_H */
