// SPDX-License-Identifier: GPL-2.0
/*
 * teo's trace events on a live kernel: with power:teo_select and
 * power:teo_update enabled in a trace instance of their own, three phases of
 * mixed timer and pipe wakeups run on every CPU (the rules as they are, a
 * state disabled on every CPU, a PM QoS latency limit held through
 * /dev/cpu_dma_latency), and the recorded teo_select events must show that
 *
 *  - every selection with a candidate (candidate >= 0) chose a state no
 *    deeper than the candidate, and the candidate is no deeper than the
 *    deepest state enabled on that CPU;
 *  - every other selection has candidate -1 and ended before the intercept
 *    test: its reason is no-choice, none-enabled, one-enabled or
 *    latency-limit;
 *  - every selection with reason intercepts chose a state shallower than
 *    its candidate and had queried the sleep length (sleep_length is not
 *    -1): without it the next update could not tell a timer wakeup from an
 *    intercept, and a shallow choice could never prove itself wrong;
 *  - no selection picked the disabled state;
 *  - no selection picked a state whose exit latency is beyond the limit.
 *
 * The events are read CPU by CPU from the instance's per-CPU trace files,
 * and only the fields the checks need are taken from them, by name
 * ("name=value" in the event's output): teo_select's state, candidate,
 * reason and sleep_length, teo_update's kind.  A teo_select event without
 * one of its four fails the test, naming the field.
 *
 * A few events of the first phase are printed: a selection with reason
 * intercepts after an intercept, and one with reason sleep-length or
 * deepest after a hit, each with the update before it.  The test skips
 * without root, a cpuidle driver, teo, tracefs or the two events, and where
 * tracefs refuses the writes it needs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest.h"
#include "cpuidle_util.h"

#define PHASE_MS	1500
#define MIX_ROUNDS	40
#define BUFFER_KB	"8192"
#define INSTANCE	"cpuidle_teo_selftest"
#define MAX_REASONS	16
#define LINE_LEN	512
/* Room for a file of our trace instance. */
#define IPATH_LEN	(2 * PATH_LEN)
#define TRACEFS		"/sys/kernel/tracing"
#define DEBUGFS_TRACING	"/sys/kernel/debug/tracing"

/* The fields of one teo_select event that the checks use. */
struct select_event {
	int candidate, state;
	char reason[24];
	long long sleep_length;		/* -1: not queried */
};

/* What one phase changes, and what its events showed. */
struct phase {
	const char *name;
	int disabled;			/* state disabled on every CPU, or -1 */
	long long limit_us;		/* PM QoS limit held, or -1 */
	unsigned long long selects, updates;
	unsigned long long walked, walk_bad, order_bad, early_bad;
	unsigned long long disabled_picked, over_limit;
	int *deepest;			/* per CPU of cpus[]: deepest enabled */
	char first_bad[LINE_LEN];
	char reason[MAX_REASONS][24];
	unsigned long long reason_count[MAX_REASONS];
};

/* The events traced, both in the power system. */
static const char *const events[] = { "teo_select", "teo_update" };

static char instance[PATH_LEN];		/* our trace instance */
/* Its events/power/<event>/enable files, one per events[]. */
static char enable_path[ARRAY_SIZE(events)][IPATH_LEN];
static bool mounted_tracefs;

/* Only open/write/close: also used from the signal handler.  0 or -errno. */
static int put_file(const char *path, const char *val)
{
	size_t len = strlen(val);
	ssize_t n;
	int fd, err;

	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, len);
	err = errno;
	close(fd);
	if (n < 0)
		return -err;
	return n == (ssize_t)len ? 0 : -EIO;
}

/* A write of the set-up: skip where tracefs refuses it, fail otherwise. */
static void setup_put(const char *path, const char *val)
{
	int err = put_file(path, val);

	if (write_refused(err))
		ksft_exit_skip("cannot write %s: %s\n", path, strerror(-err));
	if (err)
		ksft_exit_fail_msg("cannot write %s: %s\n", path, strerror(-err));
}

static void instance_path(char *buf, size_t len, const char *file)
{
	snprintf(buf, len, "%s/%s", instance, file);
}

/* Async-signal-safe: the paths are formatted at setup. */
static void trace_cleanup(void)
{
	unsigned int i;

	if (!instance[0])
		return;
	for (i = 0; i < ARRAY_SIZE(events); i++)
		if (enable_path[i][0])
			put_file(enable_path[i], "0");
	rmdir(instance);
	if (mounted_tracefs)
		umount(TRACEFS);
}

static void cleanup_on_signal(int sig)
{
	trace_cleanup();
	cpuidle_restore();
	_exit(128 + sig);
}

static bool is_tracefs(const char *root)
{
	char path[PATH_LEN];

	snprintf(path, sizeof(path), "%s/trace", root);
	return !access(path, F_OK);
}

/* The tracefs root, mounted if the kernel offers it but nobody mounted it. */
static const char *find_tracefs(void)
{
	if (is_tracefs(TRACEFS))
		return TRACEFS;
	if (is_tracefs(DEBUGFS_TRACING))
		return DEBUGFS_TRACING;
	if (!access(TRACEFS, F_OK) &&
	    !mount("nodev", TRACEFS, "tracefs", 0, NULL)) {
		mounted_tracefs = true;
		return TRACEFS;
	}
	return NULL;
}

/* Skip unless @root (tracefs or our instance) has the event power:@event. */
static void require_event(const char *root, const char *event)
{
	char path[IPATH_LEN];

	snprintf(path, sizeof(path), "%s/events/power/%s", root, event);
	if (access(path, F_OK))
		ksft_exit_skip("%s is missing: this kernel has no power:%s trace event\n",
			       path, event);
}

static void setup_trace(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	char path[IPATH_LEN];
	struct sigaction sa;
	const char *root;
	unsigned int i;

	root = find_tracefs();
	if (!root)
		ksft_exit_skip("no tracefs at %s or %s (CONFIG_TRACING off?)\n",
			       TRACEFS, DEBUGFS_TRACING);
	for (i = 0; i < ARRAY_SIZE(events); i++)
		require_event(root, events[i]);

	snprintf(instance, sizeof(instance), "%s/instances/" INSTANCE, root);
	rmdir(instance);	/* left over by a run that was killed */
	if (mkdir(instance, 0700)) {
		if (write_refused(-errno))
			ksft_exit_skip("cannot create the trace instance %s: %s\n",
				       instance, strerror(errno));
		ksft_exit_fail_msg("cannot create the trace instance %s: %s\n",
				   instance, strerror(errno));
	}
	for (i = 0; i < ARRAY_SIZE(events); i++)
		snprintf(enable_path[i], sizeof(enable_path[i]),
			 "%s/events/power/%s/enable", instance, events[i]);
	atexit(trace_cleanup);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = cleanup_on_signal;
	sigfillset(&sa.sa_mask);
	for (i = 0; i < ARRAY_SIZE(sigs); i++)
		sigaction(sigs[i], &sa, NULL);
	for (i = 0; i < ARRAY_SIZE(events); i++)
		require_event(instance, events[i]);

	instance_path(path, sizeof(path), "tracing_on");
	setup_put(path, "0");
	instance_path(path, sizeof(path), "buffer_size_kb");
	if (put_file(path, BUFFER_KB))
		ksft_print_msg("could not set %s to %s KiB; events may be overwritten\n",
			       path, BUFFER_KB);
	for (i = 0; i < ARRAY_SIZE(events); i++)
		setup_put(enable_path[i], "1");
	ksft_print_msg("tracing power:teo_select and power:teo_update in %s\n",
		       instance);
}

static long long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000LL +
	       (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Trace mixed timer and pipe wakeups on every CPU for PHASE_MS. */
static void trace_workload(void)
{
	char path[IPATH_LEN];
	struct timespec t0;
	int failed;

	instance_path(path, sizeof(path), "trace");
	if (put_file(path, ""))
		ksft_exit_fail_msg("cannot clear %s\n", path);
	/* Leave any state entered under the old rules before tracing. */
	wake_all_cpus();
	instance_path(path, sizeof(path), "tracing_on");
	if (put_file(path, "1"))
		ksft_exit_fail_msg("cannot start tracing through %s\n", path);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		failed = run_idle_mix(MIX_ROUNDS);
	while (!failed && ms_since(&t0) < PHASE_MS);
	if (put_file(path, "0"))
		ksft_exit_fail_msg("cannot stop tracing through %s\n", path);
	if (failed)
		ksft_exit_fail_msg("the idle workload failed\n");
}

/*
 * The text of event @event in a trace line (after "EVENT: "), or NULL if
 * the line holds another event.
 */
static const char *event_fields(const char *line, const char *event)
{
	size_t n = strlen(event);
	const char *p = line;

	while ((p = strstr(p, event))) {
		if (p > line && p[-1] == ' ' && p[n] == ':' && p[n + 1] == ' ')
			return p + n + 2;
		p += n;
	}
	return NULL;
}

/*
 * Copy the value of the field @name ("name=value", up to the next space)
 * of the event text @text to @buf; false if the event has no such field.
 */
static bool get_field(const char *text, const char *name, char *buf,
		      size_t len)
{
	size_t n = strlen(name), v;
	const char *p = text;

	for (;;) {
		p += strspn(p, " ");
		if (!*p || *p == '\n')
			return false;
		if (!strncmp(p, name, n) && p[n] == '=')
			break;
		p += strcspn(p, "\n ");
	}
	p += n + 1;
	v = strcspn(p, "\n ");
	if (v >= len)
		v = len - 1;
	memcpy(buf, p, v);
	buf[v] = '\0';
	return true;
}

/* Exit with a clear message: the event's fields are not what we need. */
static void missing_field(const char *event, const char *name,
			  const char *line)
{
	ksft_exit_fail_msg("%s event without a '%s' field (or not a number): %s",
			   event, name, line);
}

static long long get_number(const char *text, const char *name,
			    const char *line)
{
	char buf[32], *end;
	long long val;

	if (!get_field(text, name, buf, sizeof(buf)))
		missing_field("teo_select", name, line);
	val = strtoll(buf, &end, 10);
	if (end == buf || *end)
		missing_field("teo_select", name, line);
	return val;
}

/* Parse a teo_select line; false if @line holds another event. */
static bool parse_select(const char *line, struct select_event *e)
{
	const char *text = event_fields(line, "teo_select");

	if (!text)
		return false;
	e->state = get_number(text, "state", line);
	e->candidate = get_number(text, "candidate", line);
	e->sleep_length = get_number(text, "sleep_length", line);
	if (!get_field(text, "reason", e->reason, sizeof(e->reason)))
		missing_field("teo_select", "reason", line);
	return true;
}

static void count_reason(struct phase *ph, const char *reason)
{
	int i;

	for (i = 0; i < MAX_REASONS && ph->reason[i][0]; i++)
		if (!strcmp(ph->reason[i], reason))
			break;
	if (i == MAX_REASONS)
		return;
	snprintf(ph->reason[i], sizeof(ph->reason[i]), "%s", reason);
	ph->reason_count[i]++;
}

static void note_bad(struct phase *ph, const char *line, const char *why)
{
	if (!ph->first_bad[0])
		snprintf(ph->first_bad, sizeof(ph->first_bad), "%s: %s", why,
			 line);
}

/* The reasons of a selection that ended before the intercept test. */
static bool early_reason(const char *reason)
{
	static const char *const early[] = {
		"no-choice", "none-enabled", "one-enabled", "latency-limit",
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(early); i++)
		if (!strcmp(reason, early[i]))
			return true;
	return false;
}

static void check_select(struct phase *ph, int deepest,
			 const struct select_event *e, const char *line)
{
	ph->selects++;
	count_reason(ph, e->reason);
	if (e->candidate >= 0) {
		if (e->state > e->candidate || e->candidate > deepest) {
			ph->order_bad++;
			note_bad(ph, line,
				 "state deeper than the candidate, or the candidate than the deepest enabled state");
		}
	} else if (e->candidate != -1 || !early_reason(e->reason)) {
		ph->early_bad++;
		note_bad(ph, line,
			 "no candidate, but not a selection that ended before the intercept test");
	}
	if (!strcmp(e->reason, "intercepts")) {
		ph->walked++;
		if (e->sleep_length == -1 || e->state >= e->candidate) {
			ph->walk_bad++;
			note_bad(ph, line, "bad intercept walk");
		}
	}
	if (ph->disabled >= 0 && e->state == ph->disabled) {
		ph->disabled_picked++;
		note_bad(ph, line, "disabled state selected");
	}
	if (ph->limit_us >= 0 && e->state >= 0 && e->state < nr_states &&
	    states[e->state].latency_us > (unsigned long long)ph->limit_us) {
		ph->over_limit++;
		note_bad(ph, line, "state beyond the PM QoS limit selected");
	}
}

/* The event text of a trace line, without the task and timestamp columns. */
static const char *event_text(const char *line)
{
	const char *p = strstr(line, " teo_");

	return p ? p + 1 : line;
}

/* Print an update and the selection after it, once per kind of sample. */
static void print_sample(const char *what, bool *done, const char *update,
			 const char *line)
{
	if (*done || !update[0])
		return;
	*done = true;
	ksft_print_msg("sample, %s:\n", what);
	ksft_print_msg("  %s", event_text(update));
	ksft_print_msg("  %s", event_text(line));
}

/* The events of CPU cpus[@i], from its own trace file of our instance. */
static void read_cpu_trace(struct phase *ph, int i, bool samples,
			   bool *walk_done, bool *timer_done)
{
	char last_update[LINE_LEN] = "", last_kind[16] = "";
	char path[IPATH_LEN], *line = NULL;
	const char *text;
	struct select_event e;
	size_t len = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/trace", instance, cpus[i]);
	f = fopen(path, "r");
	if (!f)
		ksft_exit_fail_msg("cannot read %s: %s\n", path, strerror(errno));
	while (getline(&line, &len, f) > 0) {
		if (!i && !strncmp(line, "# entries-in-buffer", 19)) {
			ksft_print_msg("%s: %s", ph->name, line + 2);
			continue;
		}
		text = event_fields(line, "teo_update");
		if (text) {
			ph->updates++;
			snprintf(last_update, sizeof(last_update), "%s", line);
			if (!get_field(text, "kind", last_kind, sizeof(last_kind)))
				last_kind[0] = '\0';
			continue;
		}
		if (!parse_select(line, &e))
			continue;
		check_select(ph, ph->deepest[i], &e, line);
		if (!samples)
			continue;
		if (!strcmp(e.reason, "intercepts") &&
		    !strcmp(last_kind, "intercept"))
			print_sample("intercept-heavy (the walk after an intercept)",
				     walk_done, last_update, line);
		else if ((!strcmp(e.reason, "sleep-length") ||
			  !strcmp(e.reason, "deepest")) &&
			 !strcmp(last_kind, "hit"))
			print_sample("timer-driven (a hit, then the state that fits the timer)",
				     timer_done, last_update, line);
	}
	free(line);
	fclose(f);
}

static void read_trace(struct phase *ph, bool samples)
{
	bool walk_done = false, timer_done = false;
	int i;

	for (i = 0; i < nr_cpus; i++)
		read_cpu_trace(ph, i, samples, &walk_done, &timer_done);
}

static void print_phase(const struct phase *ph)
{
	char buf[LINE_LEN];
	int i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < MAX_REASONS && ph->reason[i][0]; i++)
		n += snprintf(buf + n, sizeof(buf) - n, " %s %llu",
			      ph->reason[i], ph->reason_count[i]);
	ksft_print_msg("%s: %llu teo_select, %llu teo_update events; reasons:%s\n",
		       ph->name, ph->selects, ph->updates, buf);
	if (ph->first_bad[0])
		ksft_print_msg("%s: first problem: %s", ph->name, ph->first_bad);
}

static void run_phase(struct phase *ph, bool samples)
{
	int32_t limit;
	int i, fd = -1;

	if (ph->disabled >= 0 && set_state_disabled(ph->disabled, true))
		ksft_exit_fail_msg("cannot disable state%d\n", ph->disabled);
	ph->deepest = calloc(nr_cpus, sizeof(*ph->deepest));
	if (!ph->deepest)
		ksft_exit_fail_msg("out of memory\n");
	for (i = 0; i < nr_cpus; i++)
		ph->deepest[i] = deepest_enabled_cpu(cpus[i]);
	if (ph->limit_us >= 0) {
		limit = (int32_t)ph->limit_us;
		fd = open("/dev/cpu_dma_latency", O_RDWR);
		if (fd < 0 || write(fd, &limit, sizeof(limit)) != sizeof(limit))
			ksft_exit_fail_msg("/dev/cpu_dma_latency: %s\n",
					   strerror(errno));
	}
	trace_workload();
	if (fd >= 0)
		close(fd);	/* drops the limit */
	if (ph->disabled >= 0)
		set_state_disabled(ph->disabled, false);
	read_trace(ph, samples);
	print_phase(ph);
}

/*
 * A limit that forbids the deepest state but allows state 0 (else the
 * governor may have nothing to pick within it), or -1 if there is none.
 */
static long long pick_limit(void)
{
	unsigned long long deep = states[nr_states - 1].latency_us;
	unsigned long long limit = states[0].latency_us;
	int s;

	if (access("/dev/cpu_dma_latency", W_OK))
		return -1;
	for (s = nr_states - 2; s > 0; s--) {
		if (states[s].latency_us < deep) {
			if (states[s].latency_us > limit)
				limit = states[s].latency_us;
			break;
		}
	}
	return limit < deep && limit <= INT32_MAX ? (long long)limit : -1;
}

int main(void)
{
	struct phase ph[3] = {
		{ .name = "rules as they are", .disabled = -1, .limit_us = -1 },
		{ .name = "one state disabled", .disabled = -1, .limit_us = -1 },
		{ .name = "latency limit held", .disabled = -1, .limit_us = -1 },
	};
	unsigned long long selects = 0, walked = 0, walk_bad = 0;
	unsigned long long order_bad = 0, early_bad = 0;
	bool empty = false;
	int i;

	ksft_print_header();
	cpuidle_setup("teo");
	if (nr_states < 2)
		ksft_exit_skip("only one idle state: teo has no choice to trace\n");
	setup_trace();
	ksft_set_plan(4);

	ph[1].disabled = nr_states > 2 ? nr_states - 2 : 1;
	ph[2].limit_us = pick_limit();
	for (i = 0; i < 3; i++) {
		if (i == 2 && ph[2].limit_us < 0)
			continue;
		run_phase(&ph[i], i == 0);
		selects += ph[i].selects;
		walked += ph[i].walked;
		walk_bad += ph[i].walk_bad;
		order_bad += ph[i].order_bad;
		early_bad += ph[i].early_bad;
		empty |= !ph[i].selects;
	}

	ksft_test_result(!empty && !order_bad && !early_bad,
			 "%llu selections traced, every phase has some; %llu with the state deeper than the candidate or the candidate than the deepest state, %llu without a candidate and with a reason other than no-choice, none-enabled, one-enabled or latency-limit\n",
			 selects, order_bad, early_bad);
	if (!walked)
		ksft_test_result_skip("no selection with reason intercepts\n");
	else
		ksft_test_result(!walk_bad,
				 "%llu selections with reason intercepts, %llu of them not shallower than the candidate or without the sleep length\n",
				 walked, walk_bad);
	ksft_test_result(ph[1].selects && !ph[1].disabled_picked,
			 "state%d (%s) disabled on every CPU: selected %llu times in %llu selections\n",
			 ph[1].disabled, states[ph[1].disabled].name,
			 ph[1].disabled_picked, ph[1].selects);
	if (ph[2].limit_us < 0)
		ksft_test_result_skip("no limit both allows state 0 and forbids the deepest\n");
	else
		ksft_test_result(ph[2].selects && !ph[2].over_limit,
				 "latency limit %lld us held: %llu selections of a state beyond it in %llu\n",
				 ph[2].limit_us, ph[2].over_limit, ph[2].selects);
	ksft_finished();
}
