// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the cpuidle-teo selftests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <regex.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest.h"
#include "cpuidle_util.h"

/*
 * The inode numbers of the initial user and PID namespaces, which the
 * kernel fixes (USER_NS_INIT_INO and PID_NS_INIT_INO in the UAPI header
 * <linux/nsfs.h> of newer kernels).
 */
#define INIT_USER_NS_INO	0xEFFFFFFDU
#define INIT_PID_NS_INO		0xEFFFFFFCU

int nr_cpus;
int *cpus;
int nr_states;
struct idle_state states[MAX_STATES];

/* CPUs a cpu_set_t of the affinity calls must have room for. */
static int cpu_set_cpus = CPU_SETSIZE;

static char saved_gov[NAME_LEN];
/* Per CPU in cpus[]: the "disable" values found at setup, -1 if unread. */
static signed char (*saved_disable)[MAX_STATES];
/*
 * The "disable" files, named once at setup: the restore code also runs in
 * a signal handler, where only async-signal-safe calls (open, write,
 * close) may be made, so it must not format paths.
 */
static char (*disable_paths)[MAX_STATES][PATH_LEN];
static bool saved;

int read_file(const char *path, char *buf, int len)
{
	int fd, n, err;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	err = errno;
	close(fd);
	if (n < 0)
		return -err;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return n;
}

/* Only open/write/close: also used from the signal handler. */
int write_file(const char *path, const char *val)
{
	int fd, n, err, len = 0;

	while (val[len])
		len++;

	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = write(fd, val, len);
	err = errno;
	close(fd);
	if (n < 0)
		return -err;
	return n == len ? 0 : -EIO;
}

static int read_ull(const char *path, unsigned long long *val)
{
	char buf[64];

	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	*val = strtoull(buf, NULL, 10);
	return 0;
}

static void state_path(char *buf, int len, int cpu, int state,
		       const char *file)
{
	snprintf(buf, len, "/sys/devices/system/cpu/cpu%d/cpuidle/state%d/%s",
		 cpu, state, file);
}

int read_governor(char *buf, int len)
{
	return read_file(CPUIDLE_DIR "/current_governor", buf, len) > 0 ? 0 : -1;
}

int write_governor(const char *gov)
{
	return write_file(CPUIDLE_DIR "/current_governor", gov);
}

int list_governors(char names[][NAME_LEN], int max)
{
	char buf[256], *tok, *save = NULL;
	int n = 0;

	if (read_file(CPUIDLE_DIR "/available_governors", buf, sizeof(buf)) <= 0)
		return 0;
	for (tok = strtok_r(buf, " \t\n", &save); tok && n < max;
	     tok = strtok_r(NULL, " \t\n", &save)) {
		snprintf(names[n], NAME_LEN, "%s", tok);
		n++;
	}
	return n;
}

int set_state_disabled_cpu(int cpu, int state, bool disable)
{
	char path[PATH_LEN];

	state_path(path, sizeof(path), cpu, state, "disable");
	return write_file(path, disable ? "1" : "0");
}

int set_state_disabled(int state, bool disable)
{
	int i, err, ret = 0;

	for (i = 0; i < nr_cpus; i++) {
		err = set_state_disabled_cpu(cpus[i], state, disable);
		if (err && !ret)
			ret = err;
	}
	reload_states();
	return ret;
}

void reload_states(void)
{
	char path[PATH_LEN];
	unsigned long long val;
	int s;

	for (s = 0; s < nr_states; s++) {
		state_path(path, sizeof(path), cpus[0], s, "disable");
		states[s].disabled = !read_ull(path, &val) && val;
	}
}

int deepest_enabled_cpu(int cpu)
{
	char path[PATH_LEN];
	unsigned long long val;
	int s;

	for (s = nr_states - 1; s >= 0; s--) {
		state_path(path, sizeof(path), cpu, s, "disable");
		if (read_ull(path, &val) || !val)
			return s;
	}
	return -1;
}

/* Async-signal-safe: see disable_paths. */
void cpuidle_restore(void)
{
	int i, s;

	if (!saved)
		return;
	for (i = 0; i < nr_cpus; i++)
		for (s = 0; s < nr_states; s++)
			if (saved_disable[i][s] >= 0)
				write_file(disable_paths[i][s],
					   saved_disable[i][s] ? "1" : "0");
	if (saved_gov[0])
		write_file(CPUIDLE_DIR "/current_governor", saved_gov);
}

static void restore_on_signal(int sig)
{
	cpuidle_restore();
	_exit(128 + sig);
}

static void install_restore_handler(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa;
	unsigned int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = restore_on_signal;
	sigfillset(&sa.sa_mask);
	for (i = 0; i < ARRAY_SIZE(sigs); i++)
		sigaction(sigs[i], &sa, NULL);
}

/*
 * The calling thread's affinity mask, in a set large enough for every CPU
 * the kernel knows (it refuses a smaller one with EINVAL); its size in
 * *@size.  Also sets cpu_set_cpus for the later affinity calls.
 */
static cpu_set_t *get_affinity(size_t *size)
{
	cpu_set_t *set;
	int n;

	for (n = CPU_SETSIZE;; n *= 2) {
		set = CPU_ALLOC(n);
		if (!set)
			ksft_exit_fail_msg("out of memory\n");
		*size = CPU_ALLOC_SIZE(n);
		if (!sched_getaffinity(0, *size, set)) {
			cpu_set_cpus = n;
			return set;
		}
		CPU_FREE(set);
		if (errno != EINVAL || n >= (1 << 24))
			ksft_exit_fail_msg("sched_getaffinity: %s\n",
					   strerror(errno));
	}
}

/*
 * A set with room for cpu_set_cpus CPUs (see get_affinity()) that holds
 * @cpu alone, or NULL.
 */
static cpu_set_t *one_cpu_set(int cpu, size_t *size)
{
	cpu_set_t *set = CPU_ALLOC(cpu_set_cpus);

	if (!set)
		return NULL;
	*size = CPU_ALLOC_SIZE(cpu_set_cpus);
	CPU_ZERO_S(*size, set);
	CPU_SET_S(cpu, *size, set);
	return set;
}

static bool has_cpuidle(int cpu)
{
	char path[PATH_LEN];

	snprintf(path, sizeof(path),
		 "/sys/devices/system/cpu/cpu%d/cpuidle/state0", cpu);
	return !access(path, F_OK);
}

/* CPUs that are online, have cpuidle sysfs and that we may run on. */
static void find_cpus(void)
{
	cpu_set_t *mask;
	size_t size;
	int cpu, max;

	mask = get_affinity(&size);
	max = size * 8;
	cpus = calloc(CPU_COUNT_S(size, mask) + 1, sizeof(*cpus));
	if (!cpus)
		ksft_exit_fail_msg("out of memory\n");
	nr_cpus = 0;
	for (cpu = 0; cpu < max; cpu++)
		if (CPU_ISSET_S(cpu, size, mask) && has_cpuidle(cpu))
			cpus[nr_cpus++] = cpu;
	CPU_FREE(mask);
}

static void find_states(void)
{
	char path[PATH_LEN];
	struct idle_state *st;
	int s;

	for (s = 0; s < MAX_STATES; s++) {
		st = &states[s];
		state_path(path, sizeof(path), cpus[0], s, "name");
		if (read_file(path, st->name, sizeof(st->name)) < 0)
			break;
		state_path(path, sizeof(path), cpus[0], s, "latency");
		read_ull(path, &st->latency_us);
		state_path(path, sizeof(path), cpus[0], s, "residency");
		read_ull(path, &st->residency_us);
	}
	nr_states = s;
	reload_states();
}

bool governor_available(const char *gov)
{
	char names[MAX_GOVERNORS][NAME_LEN];
	int i, n;

	n = list_governors(names, MAX_GOVERNORS);
	for (i = 0; i < n; i++)
		if (!strcmp(names[i], gov))
			return true;
	return false;
}

int governors_to_test(char names[][NAME_LEN], int max)
{
	char all[MAX_GOVERNORS][NAME_LEN];
	int i, n, kept = 0;

	n = list_governors(all, MAX_GOVERNORS);
	for (i = 0; i < n && kept < max; i++) {
		/*
		 * haltpoll is made for the two states of the haltpoll driver
		 * and by design looks at neither "disable" nor PM QoS limits
		 * other than 0.
		 */
		if (!strcmp(all[i], "haltpoll")) {
			ksft_print_msg("not testing haltpoll: by design it ignores %s\n",
				       "disabled states and latency limits");
			continue;
		}
		memcpy(names[kept++], all[i], NAME_LEN);
	}
	return kept;
}

/*
 * Why this process runs in a container, or NULL.  cpuidle's settings are
 * the whole machine's: a test in a container must not change them for
 * the host and its other tenants.  The namespaces' inode numbers come
 * from the kernel, so a root file system copied from a container image
 * does not fool the test as a marker file such as /.dockerenv would.
 */
static const char *container_reason(void)
{
	struct stat st;

	if (!stat("/proc/self/ns/user", &st) && st.st_ino != INIT_USER_NS_INO)
		return "a user namespace other than the initial one";
	if (!stat("/proc/self/ns/pid", &st) && st.st_ino != INIT_PID_NS_INO)
		return "a PID namespace other than the initial one";
	return NULL;
}

bool write_refused(int err)
{
	return err == -EROFS || err == -EACCES || err == -EPERM;
}

/*
 * Write the value of @path back to it, which changes nothing, to learn
 * whether the tests may write there: skip when the system refuses it (a
 * read-only sysfs, a security policy), fail on any other error.
 */
static void skip_unless_writable(const char *path)
{
	char buf[NAME_LEN];
	int err;

	err = read_file(path, buf, sizeof(buf));
	if (err <= 0)
		ksft_exit_fail_msg("cannot read %s: %s\n", path,
				   err ? strerror(-err) : "empty");
	err = write_file(path, buf);
	if (write_refused(err))
		ksft_exit_skip("cannot write %s: %s\n", path, strerror(-err));
	if (err)
		ksft_exit_fail_msg("cannot write %s: %s\n", path, strerror(-err));
}

static void save_settings(void)
{
	unsigned long long val;
	int i, s;

	if (read_governor(saved_gov, sizeof(saved_gov)))
		saved_gov[0] = '\0';
	disable_paths = calloc(nr_cpus, sizeof(*disable_paths));
	saved_disable = calloc(nr_cpus, sizeof(*saved_disable));
	if (!disable_paths || !saved_disable)
		ksft_exit_fail_msg("out of memory\n");
	for (i = 0; i < nr_cpus; i++) {
		for (s = 0; s < nr_states; s++) {
			state_path(disable_paths[i][s], PATH_LEN, cpus[i], s,
				   "disable");
			saved_disable[i][s] = read_ull(disable_paths[i][s], &val) ?
					      -1 : !!val;
		}
	}
	saved = true;
	atexit(cpuidle_restore);
	install_restore_handler();
}

void cpuidle_setup(const char *gov)
{
	char buf[256], path[PATH_LEN];
	const char *why;
	int err, s, n;

	if (geteuid())
		ksft_exit_skip("must be run as root\n");
	why = container_reason();
	if (why)
		ksft_exit_skip("in a container (%s): %s\n", why,
			       "cpuidle settings are the whole machine's");
	n = read_file(CPUIDLE_DIR "/current_driver", buf, sizeof(buf));
	if (n <= 0)
		ksft_exit_skip("no cpuidle driver (%s/current_driver is %s)\n",
			       CPUIDLE_DIR, n < 0 ? "missing" : "empty");
	if (!strcmp(buf, "none"))
		ksft_exit_skip("no cpuidle driver (current_driver is none)\n");
	find_cpus();
	if (!nr_cpus)
		ksft_exit_skip("no CPU with cpuidle states to run on\n");
	find_states();
	if (nr_states < 1)
		ksft_exit_skip("no idle states on CPU %d\n", cpus[0]);

	if (gov && !governor_available(gov))
		ksft_exit_skip("governor %s is not available (not built in?)\n",
			       gov);

	skip_unless_writable(CPUIDLE_DIR "/current_governor");
	state_path(path, sizeof(path), cpus[0], 0, "disable");
	skip_unless_writable(path);

	save_settings();
	if (gov) {
		err = write_governor(gov);
		if (err)
			ksft_exit_fail_msg("cannot switch to governor %s: %s\n",
					   gov, strerror(-err));
	}
	ksft_print_msg("driver %s, governor %s, %d CPUs, %d states:\n", buf,
		       gov ? gov : saved_gov, nr_cpus, nr_states);
	for (s = 0; s < nr_states; s++)
		ksft_print_msg("  state%d %-14s latency %6llu us residency %7llu us%s\n",
			       s, states[s].name, states[s].latency_us,
			       states[s].residency_us,
			       states[s].disabled ? " (disabled)" : "");
}

void read_snap(int cpu, struct idle_snap *snap)
{
	static const char * const files[] = { "usage", "time", "above", "below" };
	char path[PATH_LEN];
	unsigned long long val;
	int i, s, f, first = 0, last = nr_cpus;

	memset(snap, 0, sizeof(*snap));
	if (cpu >= 0) {
		for (i = 0; i < nr_cpus; i++)
			if (cpus[i] == cpu)
				break;
		first = i;
		last = i + 1;
	}
	for (i = first; i < last && i < nr_cpus; i++) {
		for (s = 0; s < nr_states; s++) {
			unsigned long long *dst[] = {
				&snap->st[s].usage, &snap->st[s].time_us,
				&snap->st[s].above, &snap->st[s].below,
			};

			for (f = 0; f < 4; f++) {
				state_path(path, sizeof(path), cpus[i], s, files[f]);
				if (!read_ull(path, &val))
					*dst[f] += val;
			}
		}
	}
}

void snap_delta(struct idle_snap *after, const struct idle_snap *before)
{
	int s;

	for (s = 0; s < nr_states; s++) {
		after->st[s].usage -= before->st[s].usage;
		after->st[s].time_us -= before->st[s].time_us;
		after->st[s].above -= before->st[s].above;
		after->st[s].below -= before->st[s].below;
	}
}

int deepest_usable(unsigned long long max_latency_us)
{
	int s;

	for (s = nr_states - 1; s > 0; s--)
		if (!states[s].disabled && states[s].latency_us <= max_latency_us)
			return s;
	return 0;
}

int pin_self(int cpu)
{
	cpu_set_t *set;
	size_t size;
	int ret;

	set = one_cpu_set(cpu, &size);
	if (!set) {
		errno = ENOMEM;
		return -1;
	}
	ret = sched_setaffinity(0, size, set);
	CPU_FREE(set);
	return ret;
}

static void *wake_one(void *arg)
{
	return arg;
}

void wake_all_cpus(void)
{
	pthread_attr_t attr;
	pthread_t *tid;
	cpu_set_t *set;
	size_t size;
	int i, err;

	tid = calloc(nr_cpus, sizeof(*tid));
	if (!tid)
		ksft_exit_fail_msg("out of memory\n");
	for (i = 0; i < nr_cpus; i++) {
		set = one_cpu_set(cpus[i], &size);
		if (!set)
			ksft_exit_fail_msg("out of memory\n");
		pthread_attr_init(&attr);
		pthread_attr_setaffinity_np(&attr, size, set);
		err = pthread_create(&tid[i], &attr, wake_one, NULL);
		if (err)
			ksft_exit_fail_msg("pthread_create: %s\n", strerror(err));
		pthread_attr_destroy(&attr);
		CPU_FREE(set);
	}
	for (i = 0; i < nr_cpus; i++)
		pthread_join(tid[i], NULL);
	free(tid);
}

void sleep_us(unsigned long long us)
{
	struct timespec ts = {
		.tv_sec = us / 1000000,
		.tv_nsec = (us % 1000000) * 1000,
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

int wait_readable(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int n;

	do
		n = poll(&pfd, 1, ms);
	while (n < 0 && errno == EINTR);
	return n;
}

/*
 * The workers of run_idle_mix() form a ring: each wakes the next through
 * its pipe, then waits for the previous one.  A worker that stops, for
 * whatever reason, closes the write end it owns, so that the next one
 * reads end of file instead of waiting, and stops too: the whole ring
 * ends, and no worker waits longer than PEER_WAIT_MS for a peer.
 */
struct mix_worker {
	pthread_t tid;
	int cpu;
	int rounds;
	int in;		/* read end of this worker's pipe */
	int out;	/* write end of the next worker's pipe, closed by us */
	const char *error;	/* why this worker stopped early, or NULL */
	int err;		/* errno of it, or 0 */
	bool peer_stopped;	/* it stopped because the previous one did */
};

static bool mix_step(struct mix_worker *w, unsigned int sleep_len_us)
{
	char c = 'x';
	int n;

	sleep_us(sleep_len_us);
	/* Wake the next CPU's worker, then wait for ours: no timer. */
	if (write(w->out, &c, 1) != 1) {
		w->error = "write to the next worker";
		w->err = errno;
		return false;
	}
	n = wait_readable(w->in, PEER_WAIT_MS);
	if (!n) {
		w->error = "no token from the previous worker in time";
		return false;
	}
	if (n > 0)
		n = read(w->in, &c, 1);
	if (n == 1)
		return true;
	if (!n) {
		/* End of file: the previous worker stopped. */
		w->peer_stopped = true;
		w->error = "the previous worker stopped";
	} else {
		w->error = "read from the previous worker";
		w->err = errno;
	}
	return false;
}

static void *mix_work(void *arg)
{
	static const unsigned int sleeps_us[] = {
		20, 80, 200, 500, 1000, 3000, 8000,
	};
	struct mix_worker *w = arg;
	int r;

	if (pin_self(w->cpu)) {
		w->error = "cannot run on its CPU";
		w->err = errno;
	} else {
		for (r = 0; r < w->rounds; r++)
			if (!mix_step(w, sleeps_us[(r + w->cpu) %
						   ARRAY_SIZE(sleeps_us)]))
				break;
	}
	close(w->out);
	return NULL;
}

/* Print why workers failed; those that only followed a peer are counted. */
static int report_mix(const struct mix_worker *w, int n)
{
	int i, failed = 0, followed = 0;

	for (i = 0; i < n; i++) {
		if (!w[i].error)
			continue;
		if (w[i].peer_stopped) {
			followed++;
			continue;
		}
		failed++;
		ksft_print_msg("idle workload: worker on CPU %d: %s%s%s\n",
			       w[i].cpu, w[i].error, w[i].err ? ": " : "",
			       w[i].err ? strerror(w[i].err) : "");
	}
	if (followed)
		ksft_print_msg("idle workload: %d workers stopped after a peer did\n",
			       followed);
	return failed || followed ? -1 : 0;
}

int run_idle_mix(int rounds)
{
	struct mix_worker *w;
	int (*fds)[2];
	int i, err, started, ret;

	w = calloc(nr_cpus, sizeof(*w));
	fds = calloc(nr_cpus, sizeof(*fds));
	if (!w || !fds)
		ksft_exit_fail_msg("out of memory\n");
	for (i = 0; i < nr_cpus; i++)
		if (pipe(fds[i]))
			ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
	for (i = 0; i < nr_cpus; i++) {
		w[i].cpu = cpus[i];
		w[i].rounds = rounds;
		w[i].in = fds[i][0];
		w[i].out = fds[(i + 1) % nr_cpus][1];
	}
	for (started = 0; started < nr_cpus; started++) {
		err = pthread_create(&w[started].tid, NULL, mix_work, &w[started]);
		if (err) {
			w[started].error = "pthread_create";
			w[started].err = err;
			break;
		}
	}
	/* A worker that never started closes its write end all the same. */
	for (i = started; i < nr_cpus; i++)
		close(w[i].out);
	for (i = 0; i < started; i++)
		pthread_join(w[i].tid, NULL);
	ret = report_mix(w, nr_cpus);
	for (i = 0; i < nr_cpus; i++)
		close(fds[i][0]);
	free(fds);
	free(w);
	return ret;
}

int measure_idle_mix(int rounds, struct idle_snap *delta)
{
	struct idle_snap before;
	int ret;

	wake_all_cpus();
	read_snap(-1, &before);
	ret = run_idle_mix(rounds);
	read_snap(-1, delta);
	snap_delta(delta, &before);
	return ret;
}

void print_snap(const char *title, const struct idle_snap *snap)
{
	unsigned long long usage = 0, time_us = 0;
	int s;

	for (s = 0; s < nr_states; s++) {
		usage += snap->st[s].usage;
		time_us += snap->st[s].time_us;
	}
	ksft_print_msg("%s\n", title);
	ksft_print_msg("  %-16s %8s %6s %10s %7s %7s\n", "state", "usage",
		       "use%", "time%", "above%", "below%");
	for (s = 0; s < nr_states; s++) {
		const struct idle_counts *c = &snap->st[s];
		double u = c->usage ? c->usage : 1;

		ksft_print_msg("  %-16s %8llu %5.1f%% %9.1f%% %6.1f%% %6.1f%%\n",
			       states[s].name, c->usage,
			       usage ? 100.0 * c->usage / usage : 0.0,
			       time_us ? 100.0 * c->time_us / time_us : 0.0,
			       100.0 * c->above / u, 100.0 * c->below / u);
	}
}

int kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

/*
 * The first line of each kind of kernel report, anchored as the kernel
 * prints it: at the start of the message, after the prefix of the code
 * that prints it where it has one ("rcu: ", "watchdog: ").
 */
static const char * const report_patterns[] = {
	"^BUG: ",		/* BUG(), KASAN, KFENCE, might_sleep(), lockdep */
	"^WARNING: ",		/* WARN(), lockdep, suspicious RCU usage */
	"^Oops: ",		/* x86 */
	"^Internal error: ",	/* arm, arm64 */
	"^Kernel panic - not syncing: ",
	"^(rcu: )?INFO: rcu_[a-z_]+ (self-)?detected (expedited )?stalls? on ",
	"^watchdog: BUG: soft lockup - CPU#",
	"^watchdog: (CPU[0-9]+: )?Watchdog detected hard LOCKUP on cpu ",
	"^INFO: task .+ blocked.* for more than [0-9]+ seconds\\.",
	"^UBSAN: ",
};

bool kmsg_is_report(const char *msg)
{
	static regex_t re[ARRAY_SIZE(report_patterns)];
	static bool compiled;
	unsigned int i;

	if (!compiled) {
		for (i = 0; i < ARRAY_SIZE(re); i++)
			if (regcomp(&re[i], report_patterns[i],
				    REG_EXTENDED | REG_NOSUB))
				ksft_exit_fail_msg("bad pattern %s\n",
						   report_patterns[i]);
		compiled = true;
	}
	for (i = 0; i < ARRAY_SIZE(re); i++)
		if (!regexec(&re[i], msg, 0, NULL, 0))
			return true;
	return false;
}

/*
 * One /dev/kmsg record is "PRIO,SEQ,TIME,FLAGS;MESSAGE\n", then lines of
 * context that start with a space.  Only the kernel's own messages count
 * (facility 0, PRIO >> 3): a message written to /dev/kmsg from user space
 * always gets another facility.  The message is cut at its newline.
 */
static const char *kernel_message(char *rec)
{
	char *msg, *end;
	unsigned long prio;

	prio = strtoul(rec, &end, 10);
	if (end == rec || *end != ',' || prio >> 3)
		return NULL;
	msg = strchr(end, ';');
	if (!msg)
		return NULL;
	msg++;
	end = strchr(msg, '\n');
	if (end)
		*end = '\0';
	return msg;
}

int kmsg_bad_lines(int fd)
{
	char rec[8192];
	const char *msg;
	int n, count = 0;

	for (;;) {
		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* records were overwritten; go on */
		if (n <= 0)
			break;
		rec[n] = '\0';
		msg = kernel_message(rec);
		if (msg && kmsg_is_report(msg)) {
			ksft_print_msg("kernel log: %s\n", msg);
			count++;
		}
	}
	return count;
}
