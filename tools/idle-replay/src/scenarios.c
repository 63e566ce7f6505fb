// SPDX-License-Identifier: GPL-2.0
/*
 * idle-replay: the generated scenarios, one family per row of the
 * background doc's scenario table, plus phase changes and constraints.
 *
 * All randomness comes from the scenario's seed (a hash of its name), so
 * every run of a scenario sees the same timeline.
 */

#include <stdlib.h>

#include "replay.h"

#define CONST(x)		((struct dist){ D_CONST, (x), 0, 0, 0, 0 })
#define UNI(lo, hi)		((struct dist){ D_UNIFORM, (lo), (hi), 0, 0, 0 })
#define EXPD(off, mean)		((struct dist){ D_EXP, (off), (mean), 0, 0, 0 })
#define BIMOD(p, a, b, c, d)	((struct dist){ D_BIMODAL, (a), (b), (c), (d), (p) })

struct scn_list {
	struct scenario *v;
	int n, cap;
};

static const struct {
	const char *id, *title;
} families[] = {
	{ "S1", "Idle, tick-dominated, HZ=1000 (MT8196)" },
	{ "S2", "Idle desktop (i5-10600K)" },
	{ "S3", "Token ping-pong over 2/6/12 CPUs with a work sweep (i5-10600K)" },
	{ "S4", "Intercept-heavy IO: fio randread psync iodepth=1 (RK3399, HZ=100)" },
	{ "S5", "Timer-driven IO every 50 ms, dm-delay (RK3399, HZ=100)" },
	{ "S6", "Pipe vs timer wakeups at a fixed interval (POWER10)" },
	{ "S7", "hackbench-like bursts, very short idle (RK3399, HZ=100)" },
	{ "S8", "Server mix, SPECjbb-like (Granite Rapids, HZ=1000)" },
	{ "S9", "Tick already stopped, shallow history, far timer (Sapphire Rapids)" },
	{ "P", "Phase changes: how fast a governor adapts" },
	{ "X", "PM QoS latency limits and disabled states" },
	{ "TR", "Recorded trace" },
};

/* The families in report order (TR, recorded traces, is not one of them). */
const char *const replay_families[] = {
	"S1", "S2", "S3", "S4", "S5", "S6", "S7", "S8", "S9", "P", "X"
};
const int replay_nfamilies = ARRAY_SIZE(replay_families);

/*
 * A scenario is a closed loop when an arrival is scheduled from the end of
 * earlier work (chained or ring streams): the exit latencies a governor
 * pays then move the rest of its timeline.
 */
void scenario_finish(struct scenario *s)
{
	int i;

	s->closed = false;
	for (i = 0; i < s->nstreams; i++)
		if (s->streams[i].mode == SM_CHAIN || s->streams[i].mode == SM_RING)
			s->closed = true;
}

void scenarios_free(struct scenario *sc, int n)
{
	int i;

	for (i = 0; i < n; i++)
		free(sc[i].ctl);
	free(sc);
}

const char *family_title(const char *family)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(families); i++)
		if (!strcmp(families[i].id, family))
			return families[i].title;
	return family;
}

static u64 name_seed(const char *name)
{
	u64 h = 0xcbf29ce484222325ULL;

	for (; *name; name++)
		h = (h ^ (u8)*name) * 0x100000001b3ULL;
	return h;
}

static struct scenario *scn_new(struct scn_list *l, const char *family,
				const char *platform, int hz, int ncpu,
				u64 duration)
{
	struct scenario *s;

	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		if (!l->v)
			die("out of memory");
	}
	s = &l->v[l->n++];
	memset(s, 0, sizeof(*s));
	snprintf(s->family, sizeof(s->family), "%s", family);
	snprintf(s->platform, sizeof(s->platform), "%s", platform);
	s->hz = hz;
	s->ncpu = ncpu;
	s->duration = duration;
	return s;
}

static void scn_name(struct scenario *s, const char *name, const char *title)
{
	snprintf(s->name, sizeof(s->name), "%s", name);
	snprintf(s->title, sizeof(s->title), "%s", title);
	s->seed = name_seed(name);
}

static struct stream_tpl *add(struct scenario *s, enum stream_mode mode,
			      enum ev_kind kind, struct dist gap,
			      struct dist work)
{
	struct stream_tpl *t = &s->streams[s->nstreams++];

	t->mode = mode;
	t->kind = kind;
	t->gap = gap;
	t->work = work;
	t->cpu = -1;
	return t;
}

static void windowed(struct stream_tpl *t, u64 start, u64 stop)
{
	t->start = start;
	t->stop = stop;
}

/* Housekeeping every CPU has: a timer roughly every 100 ms. */
static void background(struct scenario *s)
{
	add(s, SM_PERIODIC, EV_TIMER, UNI(90 * MS, 110 * MS), UNI(10 * US, 30 * US));
}

static void add_ctl(struct scenario *s, u64 t, enum ctl_kind kind, s64 v)
{
	s->ctl = realloc(s->ctl, (s->nctl + 1) * sizeof(*s->ctl));
	if (!s->ctl)
		die("out of memory");
	s->ctl[s->nctl++] = (struct ctl_ev){ t, -1, kind, v };
}

static void s1_idle(struct scn_list *l)
{
	struct scenario *s = scn_new(l, "S1", "mt8196", 1000, 1, 60 * SEC);

	scn_name(s, "s1-idle-hz1000", "fully idle, sparse timers and device interrupts");
	background(s);
	add(s, SM_PERIODIC, EV_TIMER, UNI(2 * MS, 15 * MS), UNI(5 * US, 15 * US));
	add(s, SM_PERIODIC, EV_TIMER, CONST(1 * SEC), UNI(100 * US, 200 * US));
	add(s, SM_PERIODIC, EV_IRQ, EXPD(0, 700 * MS), UNI(20 * US, 40 * US));
}

static void s2_desktop(struct scn_list *l)
{
	struct scenario *s = scn_new(l, "S2", "i5-10600k", 250, 2, 4 * SEC);

	scn_name(s, "s2-desktop-idle", "compositor frames, app polling, sparse interrupts");
	add(s, SM_PERIODIC, EV_TIMER, UNI(16500 * US, 16800 * US), UNI(50 * US, 300 * US));
	add(s, SM_PERIODIC, EV_TIMER, UNI(3900 * US, 4100 * US), UNI(5 * US, 15 * US));
	add(s, SM_PERIODIC, EV_IRQ, EXPD(0, 25 * MS), UNI(10 * US, 40 * US));
	add(s, SM_PERIODIC, EV_TIMER, CONST(1 * SEC), CONST(200 * US));
}

static void s3_pingpong(struct scn_list *l, int ncpu, u64 work_us)
{
	struct scenario *s = scn_new(l, "S3", "i5-10600k", 250, ncpu, 1 * SEC);
	struct stream_tpl *t;
	char name[48], title[96];

	snprintf(name, sizeof(name), "s3-pingpong-%dcpu-w%llu", ncpu,
		 (unsigned long long)work_us);
	snprintf(title, sizeof(title), "token around %d CPUs, %llu us of work per hop",
		 ncpu, (unsigned long long)work_us);
	scn_name(s, name, title);
	t = add(s, SM_RING, EV_IRQ, UNI(2 * US, 4 * US),
		UNI(work_us * 900, work_us * 1100));
	t->cpu = 0;
	background(s);
}

static void s4_fio(struct scn_list *l, const char *name, u64 min_us,
		   u64 mean_us)
{
	struct scenario *s = scn_new(l, "S4", "rk3399", 100, 1, 3 * SEC);
	char title[96];

	snprintf(title, sizeof(title),
		 "read completes %llu us + exp(mean %llu us) after submission",
		 (unsigned long long)min_us, (unsigned long long)mean_us);
	scn_name(s, name, title);
	add(s, SM_CHAIN, EV_IRQ, EXPD(min_us * US, mean_us * US), UNI(12 * US, 25 * US));
	background(s);
}

static void s5_timer_io(struct scn_list *l)
{
	struct scenario *s = scn_new(l, "S5", "rk3399", 100, 1, 5 * SEC);

	scn_name(s, "s5-timer-io-50ms", "each read delayed by a 50 ms timer");
	add(s, SM_CHAIN, EV_TIMER, UNI(50 * MS, 50 * MS + 50 * US), UNI(20 * US, 40 * US));
	background(s);
}

static void s6_sweep(struct scn_list *l, enum ev_kind kind, unsigned int n_us)
{
	struct scenario *s = scn_new(l, "S6", "power10", 250, 1, SEC / 2);
	const char *what = kind == EV_IRQ ? "pipe" : "timer";
	char name[48], title[96];
	u64 n = n_us * US;

	snprintf(name, sizeof(name), "s6-%s-%uus", what, n_us);
	snprintf(title, sizeof(title), "%s wakeup every %u us", what, n_us);
	scn_name(s, name, title);
	s->sweep_us = n_us;
	/*
	 * A pipe wakeup comes from a waker on another CPU whose own timer does
	 * not wait for this CPU (open loop); a timer wakeup is armed by the
	 * wakee after its work (closed loop).
	 */
	add(s, kind == EV_IRQ ? SM_PERIODIC : SM_CHAIN, kind,
	    UNI(n - n / 50, n + n / 50), UNI(2 * US, 4 * US));
	background(s);
}

static void s7_hackbench(struct scn_list *l)
{
	struct scenario *s = scn_new(l, "S7", "rk3399", 100, 2, 1 * SEC);

	scn_name(s, "s7-hackbench", "message bursts, idle of a few us between");
	add(s, SM_CHAIN, EV_IRQ, EXPD(1 * US, 10 * US), EXPD(5 * US, 60 * US));
	add(s, SM_PERIODIC, EV_IRQ, EXPD(0, 300 * US), UNI(10 * US, 50 * US));
}

static void server_streams(struct scenario *s)
{
	add(s, SM_PERIODIC, EV_IRQ, EXPD(0, 400 * US), EXPD(50 * US, 150 * US));
	add(s, SM_CHAIN, EV_TIMER, UNI(1 * MS, 4 * MS), UNI(5 * US, 20 * US));
	add(s, SM_PERIODIC, EV_TIMER, UNI(3900 * US, 4100 * US), CONST(5 * US));
}

static void s8_server(struct scn_list *l)
{
	struct scenario *s = scn_new(l, "S8", "gnr", 1000, 2, 2 * SEC);

	scn_name(s, "s8-server-mix", "requests, request timeouts, housekeeping");
	server_streams(s);
}

static void s9_tick_stopped(struct scn_list *l)
{
	struct scenario *s = scn_new(l, "S9", "spr", 250, 1, 4 * SEC);

	scn_name(s, "s9-tick-stopped",
		 "bursts of work-less interrupts, then long gaps to a far timer");
	/* A device: its interrupts do not wait for this CPU (open loop). */
	add(s, SM_PERIODIC, EV_IRQ, BIMOD(90, 20 * US, 40 * US, 20 * MS, 80 * MS), CONST(0));
	add(s, SM_PERIODIC, EV_TIMER, CONST(1 * SEC), CONST(50 * US));
}

#define CHAIN(k, g, w) \
	(&(struct stream_tpl){ .mode = SM_CHAIN, .kind = (k), .gap = (g), .work = (w) })

/* Streams @a and @b take turns, @ph each, from the start to the end. */
static void alternate(struct scenario *s, u64 ph, const struct stream_tpl *a,
		      const struct stream_tpl *b)
{
	u64 t;

	s->phase = ph;
	for (t = 0; t < s->duration; t += 2 * ph) {
		windowed(add(s, a->mode, a->kind, a->gap, a->work), t, t + ph);
		windowed(add(s, b->mode, b->kind, b->gap, b->work), t + ph, t + 2 * ph);
	}
	background(s);
}

static void p_io_idle(struct scn_list *l)
{
	struct scenario *s = scn_new(l, "P", "rk3399", 100, 1, 2 * SEC);

	scn_name(s, "p-io-idle", "fio-like IO and 50 ms timers alternate every 250 ms");
	alternate(s, 250 * MS,
		  CHAIN(EV_IRQ, EXPD(150 * US, 60 * US), UNI(12 * US, 25 * US)),
		  CHAIN(EV_TIMER, UNI(50 * MS, 50 * MS + 50 * US), UNI(20 * US, 40 * US)));
}

static void p_pipe(struct scn_list *l)
{
	struct scenario *s = scn_new(l, "P", "power10", 250, 1, 1 * SEC);

	scn_name(s, "p-pipe-30-300", "pipe wakeups alternate between 30 and 300 us");
	alternate(s, 100 * MS,
		  CHAIN(EV_IRQ, UNI(29 * US, 31 * US), UNI(2 * US, 4 * US)),
		  CHAIN(EV_IRQ, UNI(294 * US, 306 * US), UNI(2 * US, 4 * US)));
}

/* --- the roles of a table's states (the X family) ------------------------- */

static bool polls(const struct platform *p, int i)
{
	return p->drv.states[i].flags & CPUIDLE_FLAG_POLLING;
}

/* The first state that is enabled by default and does not poll, -1: none. */
static int shallowest_halting(const struct platform *p)
{
	int i;

	for (i = 0; i < p->drv.state_count; i++)
		if (!(p->off_mask >> i & 1) && !polls(p, i))
			return i;
	return -1;
}

/*
 * The states of @p that have one of @roles (SROLE_*), as a mask.  Roles are
 * given among the states enabled by default, by index (the kernel's order
 * of depth): a polling state 0; the first halting state; the last state if
 * it is a halting state other than that one; and the halting states in
 * between.  A role the table does not have adds nothing.
 */
unsigned int state_roles(const struct platform *p, unsigned int roles)
{
	int n = p->drv.state_count, h = shallowest_halting(p), d = -1, i;
	unsigned int mask = 0;

	for (i = n - 1; i >= 0 && d < 0; i--)
		if (!(p->off_mask >> i & 1))
			d = i;
	if (d == h || (d >= 0 && polls(p, d)))
		d = -1;
	if (roles & SROLE_POLL && n && polls(p, 0) && !(p->off_mask & 1))
		mask |= 1U;
	if (roles & SROLE_SHALLOW && h >= 0)
		mask |= 1U << h;
	if (roles & SROLE_DEEPEST && d >= 0)
		mask |= 1U << d;
	for (i = h + 1; roles & SROLE_BETWEEN && h >= 0 && i < d; i++)
		if (!(p->off_mask >> i & 1))
			mask |= 1U << i;
	return mask;
}

/*
 * A whole number of microseconds at least the shallowest halting state's
 * exit latency and below that of the next state enabled by default, as a
 * user would write it to /dev/cpu_dma_latency; false if the next state
 * exits no slower (or there is none).
 */
static bool limit_above_shallow(const struct platform *p, s64 *qos)
{
	int h = shallowest_halting(p), i;
	s64 lo, hi;

	if (h < 0)
		return false;
	for (i = h + 1; i < p->drv.state_count && p->off_mask >> i & 1; i++)
		;
	if (i >= p->drv.state_count)
		return false;
	lo = p->drv.states[h].exit_latency_ns / (s64)US;
	hi = p->drv.states[i].exit_latency_ns / (s64)US;
	if (hi <= lo)
		return false;
	*qos = (lo + hi) / 2 * (s64)US;
	return true;
}

/*
 * What control event @e does on table @p: a latency limit (*qos, ns) or a
 * disabled-state mask (*mask), whichever its kind sets.  False: the table
 * has no state of the role the event names, and the event is skipped.
 */
bool ctl_resolve(const struct platform *p, const struct ctl_ev *e, s64 *qos,
		 unsigned int *mask)
{
	switch (e->kind) {
	case CTL_QOS:
		*qos = e->value < 0 ? (s64)QOS_NONE_NS : e->value;
		return true;
	case CTL_DISABLE:
		*mask = (unsigned int)e->value;
		return true;
	case CTL_QOS_ROLE:
		return limit_above_shallow(p, qos);
	case CTL_DISABLE_ROLES:
		/* States off by default stay off. */
		*mask = p->off_mask | state_roles(p, (unsigned int)e->value);
		return true;
	}
	return false;
}

/*
 * The server mix under PM QoS limits and disabled states, chosen by the
 * roles of each table's states (state_roles()), not by index: a mask of
 * indices chosen for one table means other states on the next one.
 */
static void x_constraints(struct scn_list *l)
{
	struct scenario *s = scn_new(l, "X", "gnr", 1000, 2, 2 * SEC);

	scn_name(s, "x-qos-disable", "server mix under QoS limits and disabled states");
	server_streams(s);
	add_ctl(s, 400 * MS, CTL_QOS_ROLE, QOS_ABOVE_SHALLOW);
	add_ctl(s, 800 * MS, CTL_QOS, -1);
	add_ctl(s, 1200 * MS, CTL_DISABLE_ROLES, SROLE_DEEPEST);
	add_ctl(s, 1400 * MS, CTL_DISABLE_ROLES, SROLE_DEEPEST | SROLE_BETWEEN);
	add_ctl(s, 1600 * MS, CTL_DISABLE_ROLES, SROLE_POLL);
	add_ctl(s, 1700 * MS, CTL_QOS, 0);
	add_ctl(s, 1800 * MS, CTL_DISABLE_ROLES,
		SROLE_POLL | SROLE_BETWEEN | SROLE_DEEPEST);
	add_ctl(s, 1900 * MS, CTL_QOS, -1);
	add_ctl(s, 1900 * MS, CTL_DISABLE_ROLES, 0);
}

int scenarios_build(struct scenario **out)
{
	static const unsigned int sweep[] = {
		5, 10, 30, 100, 120, 130, 150, 200, 300, 400, 500
	};
	static const int cpus[] = { 2, 6, 12 };
	static const u64 work[] = { 10, 100, 1000 };
	struct scn_list l = { 0 };
	size_t i, j;

	s1_idle(&l);
	s2_desktop(&l);
	for (i = 0; i < 3; i++)
		for (j = 0; j < 3; j++)
			s3_pingpong(&l, cpus[i], work[j]);
	s4_fio(&l, "s4-fio-nvme", 150, 60);
	s4_fio(&l, "s4-fio-mmc", 250, 150);
	s5_timer_io(&l);
	for (i = 0; i < ARRAY_SIZE(sweep); i++)
		s6_sweep(&l, EV_IRQ, sweep[i]);
	for (i = 0; i < ARRAY_SIZE(sweep); i++)
		s6_sweep(&l, EV_TIMER, sweep[i]);
	s7_hackbench(&l);
	s8_server(&l);
	s9_tick_stopped(&l);
	p_io_idle(&l);
	p_pipe(&l);
	x_constraints(&l);
	for (i = 0; i < (size_t)l.n; i++)
		scenario_finish(&l.v[i]);
	*out = l.v;
	return l.n;
}
