/* SPDX-License-Identifier: GPL-2.0 */
/*
 * idle-replay: run cpuidle governors on simulated idle timelines.
 *
 * Shared declarations of the lab.  See ../README for the model.
 */
#ifndef IDLE_REPLAY_H
#define IDLE_REPLAY_H

#include <stdio.h>
#include <linux/cpuidle.h>

#define MAX_CPUS	12
/*
 * Governors one lab binary holds: its own nine and, for the series check,
 * a chain of the base's teo, one source per patch that changes the
 * governor, and the base's teo again.
 */
#define MAX_GOVS	64
#define MAX_STREAMS	96
#define MAX_LISTED	64		/* states a platform file may list */
#define LAT_BINS	4096		/* added-latency histogram, see lat_bin() */
#define US		1000ULL
#define MS		1000000ULL
#define SEC		1000000000ULL
#define SIM_T0		SEC		/* the simulated clock starts at 1 s */
#define MAX_DEFER_NS	(4 * SEC)	/* sleep length with no timer queued */
#define QOS_NONE_NS	(2000 * SEC)	/* the kernel's default CPU latency QoS */
#define WINDOW_NS	SEC	/* time-in-state windows of the trap metric */

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* --- errors ------------------------------------------------------------ */

void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t size);
char *first_token(char *buf);
int read_line(FILE *f, char *buf, size_t n, const char *path, int line);
int read_lines(const char *path, char *buf, size_t n,
	       int (*fn)(const char *path, int line, char *buf, void *ctx),
	       void *ctx);
int parse_decimal(const char *tok, unsigned long long max,
		  unsigned long long *v);
double vmin(const double *v, int n);
double vmax(const double *v, int n);
double vmedian(const double *v, int n);

/* --- random numbers ---------------------------------------------------- */

struct rng {
	u64 s;
};

void rng_seed(struct rng *r, u64 seed, u64 salt);
u64 rng_next(struct rng *r);
u64 rng_below(struct rng *r, u64 n);	/* uniform in [0, n) */
double rng_unit(struct rng *r);		/* uniform in [0, 1) */
u64 rng_loguni(struct rng *r, u64 lo, u64 hi);

enum dist_kind { D_CONST, D_UNIFORM, D_EXP, D_LOGUNI, D_BIMODAL };

/*
 * A distribution of durations in ns.  CONST: a.  UNIFORM: [a, b].
 * EXP: a plus an exponential variate of mean b.  LOGUNI: log-uniform in
 * [a, b].  BIMODAL: pct percent uniform in [a, b], the rest in [c, d].
 */
struct dist {
	enum dist_kind kind;
	u64 a, b, c, d;
	unsigned int pct;
};

u64 dist_draw(const struct dist *d, struct rng *r);

/* --- platforms --------------------------------------------------------- */

struct platform {
	char name[32];
	char title[64];
	char origin[160];			/* the file it came from */
	struct cpuidle_driver drv;
	char names[CPUIDLE_STATE_MAX][CPUIDLE_NAME_LEN];
	double power[CPUIDLE_STATE_MAX];	/* idle power while in state */
	double overhead[CPUIDLE_STATE_MAX];	/* energy of an entry */
	double exit_power[CPUIDLE_STATE_MAX];	/* power while waking up */
	char power_from[CPUIDLE_STATE_MAX];	/* POWER_FROM_* */
	unsigned int power_usage[CPUIDLE_STATE_MAX];	/* mW, the source's */
	unsigned int mw_mask;		/* states whose power_usage is given */
	unsigned int off_mask;		/* disabled by default (CPUIDLE_FLAG_OFF) */
	int listed;			/* states in the file, may exceed 10 */
	bool unsorted;			/* target residencies not sorted */
	char dups[96];			/* other files with the same table */
};

/* Where a state's power comes from (platform_finish()). */
#define POWER_FROM_POLL		'p'	/* a polling state: a busy CPU's */
#define POWER_FROM_FILE		'f'	/* power= of the platform file */
#define POWER_FROM_SOURCE	's'	/* ratio of the source's power_usage */
#define POWER_FROM_HALVING	'h'	/* half of the state above's */

int platform_load(const char *path, struct platform *p);
void platform_finish(struct platform *p);
double platform_break_even(const struct platform *p, int i);
const char *platform_power_kind(const struct platform *p);
void platform_power_note(const struct platform *p, char *buf, size_t n);
void platforms_write_tsv(FILE *f, const struct platform *ps, int n);
double period_energy(const struct platform *p, int s, u64 entry, u64 wake,
		     u64 resume);
int platforms_load_dirs(const char *const *dirs, int ndirs,
			struct platform **out);
const struct platform *platform_find(const struct platform *ps, int n,
				     const char *name);

/* --- timelines --------------------------------------------------------- */

enum ev_kind { EV_TIMER, EV_IRQ };
enum stream_mode { SM_PERIODIC, SM_CHAIN, SM_RING, SM_LIST };
/*
 * Control events: a PM QoS limit or a disabled-state mask as given (traces,
 * random cases), or one chosen by the roles of the table's states (the X
 * family, which runs on every table): see ctl_resolve().
 */
enum ctl_kind { CTL_QOS, CTL_DISABLE, CTL_QOS_ROLE, CTL_DISABLE_ROLES };

/* Roles of a table's states, for CTL_DISABLE_ROLES (a mask of them). */
#define SROLE_POLL	1U	/* the polling state */
#define SROLE_SHALLOW	2U	/* the shallowest halting state */
#define SROLE_BETWEEN	4U	/* halting states between it and the deepest */
#define SROLE_DEEPEST	8U	/* the deepest state, if not the shallowest */

/* Limits for CTL_QOS_ROLE. */
enum qos_role {
	QOS_ABOVE_SHALLOW,	/* between the shallowest halting state's exit
				 * latency and the next state's */
};

/* One recorded wakeup of a trace file. */
struct trace_ev {
	u64 t;
	u64 work;
};

/*
 * A source of wakeups.  PERIODIC: arrivals every @gap regardless of the CPU.
 * CHAIN: the next arrival comes @gap after the CPU finished the previous
 * one's work.  RING: a token passed around CPUs 0..ncpu-1, @gap after the
 * previous CPU finished its work.  LIST: recorded arrivals of a trace.
 */
struct stream_tpl {
	enum stream_mode mode;
	enum ev_kind kind;
	struct dist gap;
	struct dist work;
	u64 start, stop;	/* active window from the start, 0: to the end */
	int cpu;		/* -1: one instance on every CPU */
	const struct trace_ev *list;
	size_t nlist;
};

struct ctl_ev {
	u64 t;			/* from the start */
	int cpu;		/* -1: all CPUs */
	enum ctl_kind kind;
	s64 value;		/* QoS limit in ns, or the disabled-state mask */
};

struct scenario {
	char name[48];
	char family[8];
	char title[96];
	char platform[32];	/* platform of the report */
	int hz;
	int ncpu;
	u64 duration;
	u64 seed;
	u64 phase;		/* phase length for the adaptation metric */
	unsigned int sweep_us;	/* wakeup interval of a sweep point */
	bool closed;		/* exit latencies feed back into the timeline */
	int nstreams;
	struct stream_tpl streams[MAX_STREAMS];
	int nctl;
	struct ctl_ev *ctl;	/* sorted by time */
};

int scenarios_build(struct scenario **out);
unsigned int state_roles(const struct platform *p, unsigned int roles);
bool ctl_resolve(const struct platform *p, const struct ctl_ev *e, s64 *qos,
		 unsigned int *mask);
void scenarios_free(struct scenario *sc, int n);
void scenario_finish(struct scenario *s);
const char *family_title(const char *family);
extern const char *const replay_families[];
extern const int replay_nfamilies;

/* Trace files and the perf/trace-cmd converter (trace.c). */
int trace_load(const char *path, struct scenario *s);
void trace_free(struct scenario *s);
int trace_convert(FILE *in, const char *name, FILE *out, int hz,
		  unsigned int poll_mask);

/* --- governors --------------------------------------------------------- */

/*
 * What a governor is to the lab: the oracle, ours (this repository's teo),
 * a baseline from the base tree or from the newest mainline tree, an extra
 * source given on the command line (shown, never a baseline), or the twin:
 * ours built with its trace events recording, which only the trace gate
 * runs (diff --events) and no report or gate shows, or a mutant: ours with
 * one rule reverted (tools/teo-mutants), which only the intended-differences
 * gate runs against ours, or a reference: a fixed policy of the lab
 * (refs.c), run like the oracle in every scenario, never a baseline.
 */
enum gov_role {
	ROLE_ORACLE, ROLE_OURS, ROLE_BASE, ROLE_MAINLINE, ROLE_EXTRA, ROLE_TWIN,
	ROLE_MUTANT, ROLE_REFERENCE, NR_ROLES
};

struct gov_entry {
	const char *label;
	struct cpuidle_governor *gov;
	enum gov_role role;
	const char *source;		/* the file, or what the lab's own is */
	bool builtin;			/* the lab's own code, no source file */
	u64 select_ns, reflect_ns;	/* own cost per call (costs.conf) */
};

/* The build's list of governors (govlist.c, written by the Makefile). */
struct gov_expect {
	const char *label, *source, *role;
};
extern const struct gov_expect replay_expected_govs[];

extern struct gov_entry replay_govs[MAX_GOVS];
extern int replay_ngovs;
struct cpuidle_governor *oracle_governor(void);
void refs_register(void);
const struct gov_entry *gov_find(const char *label);
const struct gov_entry *gov_by_role(enum gov_role role, const char *kind);
const char *gov_role_name(enum gov_role role);
bool gov_is_baseline(const struct gov_entry *g);
bool gov_in_reference(const struct gov_entry *g);
void gov_judge_as_ours(const char *label);
int govs_always(const struct gov_entry **out);
bool gov_always(const struct gov_entry *g);
void govs_init(void);

/*
 * The governors' own cost on the timeline (costs.conf, or the file named by
 * IDLE_REPLAY_COSTS): ns per call of tick_nohz_get_sleep_length(); each
 * governor's select_ns and reflect_ns.  The oracle is charged nothing.
 */
extern u64 replay_sleep_length_ns;
int costs_validate(const char *path);
bool gov_costs_anything(const struct gov_entry *g);

/* --- machine-readable output (output.c) ---------------------------------- */

struct output;
struct output *output_open(const char *path);
FILE *output_file(struct output *o);
void output_close(struct output *o);
void tsv_text(FILE *f, const char *s);
void tsv_num(FILE *f, double v, int decimals);
void json_str(FILE *f, const char *s);
void json_num(FILE *f, double v);

/* --- metrics ----------------------------------------------------------- */

/* Idle time per state in consecutive windows of WINDOW_NS (trap metric). */
struct windows {
	int n;
	u64 (*t)[CPUIDLE_STATE_MAX];
};

struct metrics {
	u64 decisions;
	u64 usage[CPUIDLE_STATE_MAX];
	u64 time_ns[CPUIDLE_STATE_MAX];	/* incl. periods open at the end */
	u64 above[CPUIDLE_STATE_MAX];
	u64 below[CPUIDLE_STATE_MAX];
	double energy;
	u64 sim_ns;
	u64 items;		/* work items served */
	u64 wakeups;		/* wakeups from idle that brought work */
	u64 lat_sum_ns;
	u64 lat_hist[LAT_BINS];
	u64 tick_running;	/* decisions taken with the tick running */
	u64 tick_kept_hit;	/* tick kept, and the tick ended the idle */
	u64 tick_stop_early;	/* stop asked, but woken before the tick */
	u64 adapt_switches;
	u64 adapt_entries;
	u64 gov_ns;		/* busy time charged for the governor's calls */
	u64 sleep_calls;	/* calls of tick_nohz_get_sleep_length() */
	double cpu_seconds;
};

/*
 * What the report and the gates need of one governor's run of one scenario
 * on one platform.  Fixed size, no pointers the parallel workers could not
 * send: the scenario, platform and governor are indices.
 */
struct result {
	int s, p, g;			/* scenario, platform, governor index */
	u64 decisions, items;
	double energy_rate;		/* energy per ns (open) or per item */
	double energy_rel;		/* % of the yardstick */
	double work_rel;		/* work items, % of the yardstick */
	/*
	 * Closed loops: work items in % of the best baseline's, of the
	 * oracle's and of the best reference policy's (NAN in open loops, or
	 * without a baseline or a reference).
	 */
	double work_base, work_oracle, work_ref;
	u64 wakeups;			/* wakeups that brought work */
	double miss, above, below, lat_mean, lat_p99, tick_wrong, adapt;
	double tvd;			/* time-in-state distance to the oracle */
	double trap_s, trap_start_s;	/* longest shallow stretch */
	double trap_share;		/* ... in % of the run */
	double share[CPUIDLE_STATE_MAX];	/* time share per state, % */
	u64 usage[CPUIDLE_STATE_MAX];		/* the core's counters, */
	u64 time_ns[CPUIDLE_STATE_MAX];		/* summed over CPUs */
	u64 above_n[CPUIDLE_STATE_MAX];
	u64 below_n[CPUIDLE_STATE_MAX];
	double cpu_seconds;
	u64 gov_ns;			/* busy time charged for its own calls */
	u64 sleep_calls;		/* tick_nohz_get_sleep_length() calls */
	int diverged;			/* -1: not compared, 0/1 vs the partner */
	u64 plan_misses;		/* oracle: decisions off its plan */
	char divergence[480];		/* first divergence, for the log */
};

bool trapped(const struct result *r, const struct scenario *s);

/* Latency histogram: 1 us bins up to 1 ms, 16 us bins above, to ~49 ms. */
static inline int lat_bin(u64 lat_ns)
{
	u64 us = lat_ns / US;

	if (us >= 1024)
		us = 1024 + (us - 1024) / 16;
	return us < LAT_BINS ? (int)us : LAT_BINS - 1;
}

static inline double lat_bin_us(int b)
{
	return b < 1024 ? b : 1024 + (b - 1024) * 16.0;
}

/* --- the engine -------------------------------------------------------- */

/*
 * What a traced governor's trace events said during one select() call
 * (see shim/include/trace/define_trace.h).  The words are indices
 * into replay_event_words[].
 */
struct event_note {
	s64 sleep_length;	/* -1: not queried */
	s8 candidate, state;	/* candidate -1: none */
	u8 selects;		/* selection events seen */
	u8 stop_tick, reason;
	u8 updates;		/* update events seen */
	u8 kind;
	s8 update_state, bin;
};

#define MAX_EVENT_WORDS	32
extern const char *replay_event_words[MAX_EVENT_WORDS];

/* Inputs and outputs of one selection, for the differential check. */
struct decision {
	u64 t;
	s64 sleep_length;	/* -1: not queried */
	s64 delta_tick;
	s64 latency_req;
	u64 last_residency;
	u16 disabled;
	s8 cpu, last_state, idx;
	u8 stop_tick, tick_stopped, poll_limit_hit, got_tick;
	struct event_note ev;
};

struct decision_log {
	struct decision *d;
	size_t n, cap;
};

/* Contract checks (check.c) see every selection. */
struct inv_stats;
/*
 * One select() and the reflect() after it, with every answer the kernel
 * calls gave, for the overhead measurement (overhead.c), which plays them
 * back without the engine.
 */
struct call {
	u64 clock_select, clock_reflect;
	s64 sleep_length, delta_next, latency_req;
	u64 last_residency;
	u16 disabled;
	s8 cpu, idx;
	u8 tick_stopped, poll_limit_hit, got_tick, reflected;
	u8 poll_at_reflect;
};

struct call_rec {
	struct call *c;
	size_t n, cap;
};

/*
 * The trace gate (diff --events): a traced governor's events against its
 * decisions.  Each writes what it found to @log.
 */
struct event_stats {
	u64 decisions, inconsistent;
	u64 reasons[MAX_EVENT_WORDS];
	u64 kinds[MAX_EVENT_WORDS];
	char first[320];	/* the first inconsistency */
};

void events_check(struct event_stats *st, const char *what,
		  const struct decision_log *l);
void events_print(FILE *f, const char *label, const struct event_stats *st);

/* Set while the overhead measurement plays calls back. */
extern const struct call *replay_playback;
extern bool replay_playback_reflect;

struct run_opts {
	struct decision_log *log;	/* record decisions if set */
	struct inv_stats *inv;		/* check the contract if set */
	struct windows *win;		/* time in state per window if set */
	struct call_rec *rec;		/* record every governor call if set */
	u64 max_decisions;		/* stop early, 0: no limit */
	bool debug;			/* print every decision to stderr */
	bool costs;			/* charge the governor's own cost */
};

void run_one(const struct scenario *s, const struct platform *p,
	     const struct gov_entry *g, const struct run_opts *o,
	     struct metrics *m);

/* An arrival of an open-loop timeline, for the oracle's plan. */
struct arrival {
	u64 t, work, seq;
};

/* Engine services for the shim and the oracle. */
struct machine;
extern struct machine *replay_machine;
u64 engine_next_arrival(struct machine *m, unsigned int cpu, bool need_work);
u64 engine_future_arrival(struct machine *m, unsigned int cpu, bool need_work);
u64 engine_next_tick(struct machine *m, unsigned int cpu);
bool engine_can_stop_tick(struct machine *m, unsigned int cpu);
u64 engine_now(struct machine *m);
u64 engine_end(struct machine *m);
u64 engine_plan_end(struct machine *m);
u64 engine_poll_limit(struct machine *m, unsigned int cpu);
s64 engine_latency_req(struct machine *m, unsigned int cpu);
const struct platform *engine_platform(struct machine *m);
const struct scenario *engine_scenario(struct machine *m);
size_t engine_cpu_arrivals(struct machine *m, unsigned int cpu,
			   struct arrival **out);
extern u64 oracle_plan_misses;
void oracle_release(void);

/* --- checks (check.c) -------------------------------------------------- */

void inv_check(struct inv_stats *st, const struct cpuidle_driver *drv,
	       const struct cpuidle_device *dev,
	       const struct cpuidle_driver *drv_before,
	       const struct cpuidle_device *dev_before, s64 latency_req,
	       bool tick_stopped, int idx, bool stop_tick);
void inv_check_reflect(struct inv_stats *st, const struct cpuidle_driver *drv,
		       const struct cpuidle_device *dev,
		       const struct cpuidle_driver *drv_before,
		       const struct cpuidle_device *dev_before);
#define RANDOM_CTL_MAX	400
void random_case(u64 seed, u64 k, struct platform *p, struct scenario *s);
int cmd_check(int argc, char **argv);
int cmd_targets(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_fuzz(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_overhead(int argc, char **argv);

#endif /* IDLE_REPLAY_H */
