// SPDX-License-Identifier: GPL-2.0
/*
 * idle-replay: the simulated machine.
 *
 * Every CPU runs the idle loop of the kernel in miniature: it selects a
 * state through the governor, sleeps in it until a wakeup (an arrival, the
 * tick, or the polling time limit), pays the exit latency, lets the
 * governor reflect, then either serves the work that arrived or selects
 * again.  The cpuidle core's bookkeeping (last_residency_ns, usage, time,
 * above, below, poll_time_limit) and the tick (its period, stopping it,
 * the woken-by-tick flag) follow the rules written down in ../README.
 */

#include <stdlib.h>

#include "replay.h"

/*
 * IDLE: the governor has chosen; the state is entered at @entry (after the
 * governor's own cost) and left at the wakeup.  REFLECT: the governor's
 * reflect() runs after the resume, before the work.
 */
enum cpu_phase { CP_IDLE, CP_WAKING, CP_REFLECT, CP_BUSY };
enum wake_cause { WAKE_ARRIVAL, WAKE_TICK, WAKE_POLL_LIMIT };

struct sim_cpu {
	struct cpuidle_device dev;
	enum cpu_phase phase;
	u64 t;			/* WAKING: resume; REFLECT, BUSY: their end */
	u64 entry;		/* when the state was entered */
	u64 wake;		/* when the wakeup arrived */
	enum wake_cause cause;
	int state;		/* state entered */
	int cur_stream;		/* stream whose work is being served */
	u64 poll_deadline;
	u64 tick_next;
	bool tick_stopped;
	bool got_tick;
	bool tick_ran;		/* the tick ran when the state was selected */
	bool stop_req;		/* ... and the governor let it stop */
	long rec;		/* index of the recorded call to reflect, -1 */
	s64 qos_ns;
	int ctl_pos;
	/* adaptation after phase switches */
	u64 next_switch;
	bool adapting;
	u64 adapt_entries, adapt_ok;
};

struct stream {
	const struct stream_tpl *tpl;
	int cpu;
	u64 next;		/* pending arrival, U64_MAX: none */
	u64 work;
	u64 stop;
	size_t pos;
	struct rng rng;
};

struct machine {
	const struct scenario *scn;
	const struct platform *plat;
	const struct gov_entry *gov;
	const struct run_opts *opts;
	struct metrics *m;
	struct cpuidle_driver drv;
	int ncpu;
	struct sim_cpu cpu[MAX_CPUS];
	int nst;
	struct stream st[MAX_STREAMS];
	u64 end;
	u64 clock;		/* what local_clock() returns */
	unsigned int cur;	/* CPU whose governor is being called */
	s64 queried_sleep, queried_delta;
	u64 sleep_calls;	/* tick_nohz_get_sleep_length() in this call */
	struct event_note ev;	/* events of the current select() */
};

struct machine *replay_machine;

/* --- the shim's kernel calls --------------------------------------------- */

const struct call *replay_playback;
bool replay_playback_reflect;

unsigned int replay_current_cpu(void)
{
	if (replay_playback)
		return replay_playback->cpu;
	return replay_machine->cur;
}

u64 local_clock(void)
{
	if (replay_playback)
		return replay_playback_reflect ? replay_playback->clock_reflect :
						 replay_playback->clock_select;
	return replay_machine->clock;
}

static u64 next_timer(struct machine *m, unsigned int cpu)
{
	u64 t = U64_MAX;
	int i;

	for (i = 0; i < m->nst; i++) {
		struct stream *s = &m->st[i];

		if (s->cpu == (int)cpu && s->tpl->kind == EV_TIMER && s->next < t)
			t = s->next;
	}
	return t;
}

ktime_t tick_nohz_get_sleep_length(ktime_t *delta_next)
{
	struct machine *m = replay_machine;
	struct sim_cpu *c;
	u64 timer;
	s64 sleep;

	if (replay_playback) {
		*delta_next = replay_playback->delta_next;
		return replay_playback->sleep_length;
	}
	c = &m->cpu[m->cur];
	timer = next_timer(m, m->cur);
	sleep = timer == U64_MAX ? (s64)MAX_DEFER_NS : (s64)(timer - m->clock);

	if (c->tick_stopped)
		*delta_next = sleep;
	else
		*delta_next = (s64)(min(c->tick_next, timer) - m->clock);
	m->queried_sleep = sleep;
	m->queried_delta = *delta_next;
	m->sleep_calls++;
	return sleep;
}

bool tick_nohz_tick_stopped(void)
{
	if (replay_playback)
		return replay_playback->tick_stopped;
	return replay_machine->cpu[replay_machine->cur].tick_stopped;
}

bool tick_nohz_idle_got_tick(void)
{
	struct sim_cpu *c;
	bool got;

	if (replay_playback)
		return replay_playback->got_tick;
	c = &replay_machine->cpu[replay_machine->cur];
	got = c->got_tick;
	c->got_tick = false;
	return got;
}

s64 cpuidle_governor_latency_req(unsigned int cpu)
{
	if (replay_playback)
		return replay_playback->latency_req;
	return replay_machine->cpu[cpu].qos_ns;
}

/* --- trace events of a traced governor ------------------------------------ */

const char *replay_event_words[MAX_EVENT_WORDS];

/* The index of @word in replay_event_words[], added if new. */
static u8 event_word(const char *word)
{
	int i;

	for (i = 0; i < MAX_EVENT_WORDS && replay_event_words[i]; i++)
		if (!strcmp(replay_event_words[i], word))
			return (u8)i;
	if (i == MAX_EVENT_WORDS)
		die("more than %d different words in trace events", MAX_EVENT_WORDS);
	replay_event_words[i] = word;
	return (u8)i;
}

void replay_event_select(int candidate, int state, const char *reason,
			 s64 sleep_length_ns, bool stop_tick)
{
	struct event_note *e;

	if (!replay_machine)
		return;		/* the overhead playback: nothing to check */
	e = &replay_machine->ev;
	e->selects++;
	e->candidate = (s8)candidate;
	e->state = (s8)state;
	e->reason = event_word(reason);
	e->sleep_length = sleep_length_ns;
	e->stop_tick = stop_tick;
}

void replay_event_update(int state, const char *kind, int bin)
{
	if (!replay_machine)
		return;
	replay_machine->ev.updates++;
	replay_machine->ev.kind = event_word(kind);
	replay_machine->ev.update_state = (s8)state;
	replay_machine->ev.bin = (s8)bin;
}

/* --- services for the oracle --------------------------------------------- */

u64 engine_now(struct machine *m)
{
	return m->clock;
}

u64 engine_end(struct machine *m)
{
	return m->end;
}

/*
 * How far the oracle plans ahead: to the end of the run, or, in runs cut
 * after a number of decisions (the random contract and differential cases),
 * 100 ms at a time.
 */
u64 engine_plan_end(struct machine *m)
{
	if (!m->opts->max_decisions)
		return m->end;
	return min(m->end, m->clock + (u64)(100 * MS));
}

const struct scenario *engine_scenario(struct machine *m)
{
	return m->scn;
}

const struct platform *engine_platform(struct machine *m)
{
	return m->plat;
}

/* The next arrival at @cpu (with work, if @need_work). */
u64 engine_next_arrival(struct machine *m, unsigned int cpu, bool need_work)
{
	u64 t = U64_MAX;
	int i;

	for (i = 0; i < m->nst; i++)
		if (m->st[i].cpu == (int)cpu && m->st[i].next < t &&
		    (!need_work || m->st[i].work))
			t = m->st[i].next;
	return t;
}

/*
 * When the ring token will reach @cpu, assuming the CPUs on the way wake
 * without delay: a lower bound, drawn from a copy of the token's random
 * sequence so the real draws are not disturbed.
 */
static u64 ring_eta(struct machine *m, const struct stream *s, int cpu)
{
	const struct stream_tpl *tp = s->tpl;
	struct rng r = s->rng;
	int at = s->cpu;
	u64 t;

	if (s->next != U64_MAX)		/* waiting for CPU @at */
		t = s->next + s->work;
	else				/* in service on CPU @at */
		t = m->cpu[at].t;
	for (;;) {
		t += dist_draw(&tp->gap, &r);
		at = (at + 1) % m->ncpu;
		if (at == cpu || t > s->stop)
			return t > s->stop ? U64_MAX : t;
		t += dist_draw(&tp->work, &r);
	}
}

/*
 * The next arrival at @cpu, including ring tokens still on their way (ring
 * tokens always bring work).
 */
u64 engine_future_arrival(struct machine *m, unsigned int cpu, bool need_work)
{
	u64 t = engine_next_arrival(m, cpu, need_work);
	int i;

	for (i = 0; i < m->nst; i++) {
		const struct stream *s = &m->st[i];

		if (s->tpl->mode == SM_RING && s->cpu != (int)cpu)
			t = min(t, ring_eta(m, s, cpu));
	}
	return t;
}

u64 engine_next_tick(struct machine *m, unsigned int cpu)
{
	return m->cpu[cpu].tick_stopped ? U64_MAX : m->cpu[cpu].tick_next;
}

/* The tick code stops the tick only if no timer is due before the next tick. */
bool engine_can_stop_tick(struct machine *m, unsigned int cpu)
{
	return m->cpu[cpu].tick_stopped || next_timer(m, cpu) > m->cpu[cpu].tick_next;
}

s64 engine_latency_req(struct machine *m, unsigned int cpu)
{
	return m->cpu[cpu].qos_ns;
}

/* --- streams of arrivals ------------------------------------------------- */

static void stream_set(struct machine *m, struct stream *s, u64 t)
{
	(void)m;
	if (t > s->stop) {
		s->next = U64_MAX;
		return;
	}
	s->next = t;
	s->work = dist_draw(&s->tpl->work, &s->rng);
}

static void stream_list_next(struct stream *s)
{
	const struct stream_tpl *tp = s->tpl;

	if (s->pos >= tp->nlist) {
		s->next = U64_MAX;
		return;
	}
	s->next = SIM_T0 + tp->list[s->pos].t;
	s->work = tp->list[s->pos].work;
	s->pos++;
}

static void stream_start(struct machine *m, struct stream *s, u64 salt)
{
	const struct stream_tpl *tp = s->tpl;

	rng_seed(&s->rng, m->scn->seed, salt);
	s->stop = tp->stop ? SIM_T0 + tp->stop : m->end;
	s->next = U64_MAX;
	if (tp->mode == SM_LIST)
		stream_list_next(s);
	else
		stream_set(m, s, SIM_T0 + tp->start + dist_draw(&tp->gap, &s->rng));
}

static void streams_init(struct machine *m)
{
	int i, cpu;

	m->nst = 0;
	for (i = 0; i < m->scn->nstreams; i++) {
		const struct stream_tpl *tp = &m->scn->streams[i];
		int first = tp->cpu < 0 ? 0 : tp->cpu;
		int last = tp->cpu < 0 && tp->mode != SM_RING ? m->ncpu - 1 : first;

		for (cpu = first; cpu <= last; cpu++) {
			struct stream *s = &m->st[m->nst];

			if (m->nst == MAX_STREAMS)
				die("scenario %s: more than %d streams",
				    m->scn->name, MAX_STREAMS);
			s->tpl = tp;
			s->cpu = cpu;
			s->pos = 0;
			stream_start(m, s, (u64)i << 16 | (u64)cpu);
			m->nst++;
		}
	}
}

/* The CPU took the pending arrival of @s into service. */
static void stream_consume(struct machine *m, struct stream *s)
{
	switch (s->tpl->mode) {
	case SM_PERIODIC:
		stream_set(m, s, s->next + dist_draw(&s->tpl->gap, &s->rng));
		break;
	case SM_LIST:
		stream_list_next(s);
		break;
	default:
		s->next = U64_MAX;	/* re-armed when the work is done */
	}
}

/* The CPU finished the work of @s at @t. */
static void stream_done(struct machine *m, struct stream *s, u64 t)
{
	if (s->tpl->mode == SM_RING)
		s->cpu = (s->cpu + 1) % m->ncpu;
	if (s->tpl->mode == SM_RING || s->tpl->mode == SM_CHAIN)
		stream_set(m, s, t + dist_draw(&s->tpl->gap, &s->rng));
}

static int by_arrival(const void *a, const void *b)
{
	const struct arrival *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Every arrival still to come at @cpu until the end of the run, in the order
 * the CPU will take them, drawn from copies of the streams (open loops only:
 * periodic and recorded streams do not depend on the CPU).
 */
size_t engine_cpu_arrivals(struct machine *m, unsigned int cpu,
			   struct arrival **out)
{
	struct arrival *a = NULL;
	size_t n = 0, cap = 0;
	int i;

	for (i = 0; i < m->nst; i++) {
		struct stream c = m->st[i];

		if (c.cpu != (int)cpu)
			continue;
		if (c.tpl->mode == SM_CHAIN || c.tpl->mode == SM_RING)
			die("engine_cpu_arrivals: %s is a closed loop", m->scn->name);
		while (c.next != U64_MAX && c.next <= engine_plan_end(m)) {
			if (n == cap) {
				cap = cap ? 2 * cap : 1024;
				a = xrealloc(a, cap * sizeof(*a));
			}
			a[n] = (struct arrival){ c.next, c.work, (u64)i << 40 | n };
			n++;
			stream_consume(m, &c);
		}
	}
	qsort(a, n, sizeof(*a), by_arrival);
	*out = a;
	return n;
}

/* Earliest stream with an arrival for @cpu at or before @t, -1 if none. */
static int pending_stream(struct machine *m, int cpu, u64 t, bool need_work)
{
	int i, best = -1;

	for (i = 0; i < m->nst; i++) {
		struct stream *s = &m->st[i];

		if (s->cpu != cpu || s->next > t || (need_work && !s->work))
			continue;
		if (best < 0 || s->next < m->st[best].next)
			best = i;
	}
	return best;
}

/* --- the cpuidle core ---------------------------------------------------- */

static bool state_enabled(const struct sim_cpu *c, int i)
{
	return !c->dev.states_usage[i].disable;
}

static u64 poll_limit(struct machine *m, struct sim_cpu *c);

u64 engine_poll_limit(struct machine *m, unsigned int cpu)
{
	return poll_limit(m, &m->cpu[cpu]);
}

/* Polling time limit, computed the way the core does (cpuidle_poll_time). */
static u64 poll_limit(struct machine *m, struct sim_cpu *c)
{
	u64 cap = TICK_NSEC / 16;
	int i;

	if (c->dev.poll_limit_ns)
		return c->dev.poll_limit_ns;
	c->dev.poll_limit_ns = cap;
	for (i = 1; i < m->drv.state_count; i++) {
		s64 res = m->drv.states[i].target_residency_ns;

		if (!state_enabled(c, i) || res < 10 * (s64)US)
			continue;
		c->dev.poll_limit_ns = min((u64)res, cap);
		break;
	}
	return c->dev.poll_limit_ns;
}

/* Count the entry the way cpuidle_enter_state() does. */
static void core_account(struct machine *m, struct sim_cpu *c, s64 diff)
{
	struct cpuidle_state_usage *u = &c->dev.states_usage[c->state];
	const struct cpuidle_state *st = m->drv.states;
	int i;

	c->dev.last_residency_ns = diff;
	u->time_ns += diff;
	u->usage++;
	if (diff < st[c->state].target_residency_ns) {
		for (i = c->state - 1; i >= 0; i--) {
			if (state_enabled(c, i)) {
				u->above++;
				break;
			}
		}
		return;
	}
	if (diff <= st[c->state].exit_latency_ns)
		return;
	for (i = c->state + 1; i < m->drv.state_count; i++) {
		if (!state_enabled(c, i))
			continue;
		if (diff - st[c->state].exit_latency_ns >= st[i].target_residency_ns)
			u->below++;
		break;
	}
}

static void apply_ctl(struct machine *m, int cpu, const struct ctl_ev *e)
{
	struct sim_cpu *c = &m->cpu[cpu];
	s64 qos = c->qos_ns;
	unsigned int mask = 0;
	int i;

	if (!ctl_resolve(m->plat, e, &qos, &mask))
		return;
	if (e->kind == CTL_QOS || e->kind == CTL_QOS_ROLE) {
		c->qos_ns = qos;
		return;
	}
	for (i = 0; i < CPUIDLE_STATE_MAX; i++)
		c->dev.states_usage[i].disable = (mask >> i) & 1;
	c->dev.poll_limit_ns = 0;
}

static void apply_ctls(struct machine *m, int cpu, u64 now)
{
	struct sim_cpu *c = &m->cpu[cpu];

	while (c->ctl_pos < m->scn->nctl &&
	       SIM_T0 + m->scn->ctl[c->ctl_pos].t <= now) {
		const struct ctl_ev *e = &m->scn->ctl[c->ctl_pos++];

		if (e->cpu < 0 || e->cpu == cpu)
			apply_ctl(m, cpu, e);
	}
}

/* --- metrics ------------------------------------------------------------- */

static void note_latency(struct metrics *mt, u64 lat)
{
	mt->wakeups++;
	mt->lat_sum_ns += lat;
	mt->lat_hist[lat_bin(lat)]++;
}

static void note_adaptation(struct machine *m, struct sim_cpu *c, bool miss)
{
	struct metrics *mt = m->m;

	if (!m->scn->phase)
		return;
	while (c->wake >= c->next_switch) {
		if (c->adapting) {
			mt->adapt_switches++;
			mt->adapt_entries += c->adapt_entries;
		}
		c->adapting = true;
		c->adapt_entries = 0;
		c->adapt_ok = 0;
		c->next_switch += m->scn->phase;
	}
	if (!c->adapting)
		return;
	c->adapt_entries++;
	c->adapt_ok = miss ? 0 : c->adapt_ok + 1;
	if (c->adapt_ok == 8) {
		mt->adapt_switches++;
		mt->adapt_entries += c->adapt_entries - 8;
		c->adapting = false;
	}
}

static void note_tick(struct machine *m, struct sim_cpu *c, u64 entry)
{
	u64 tick = (entry / TICK_NSEC + 1) * TICK_NSEC;

	if (!c->tick_ran)
		return;
	if (!c->stop_req && c->cause == WAKE_TICK)
		m->m->tick_kept_hit++;
	if (c->stop_req && c->cause != WAKE_TICK && c->wake < tick)
		m->m->tick_stop_early++;
}

/*
 * The energy of an idle period in state @s entered at @entry, woken at @wake
 * and resumed at @resume (see platform_finish()).
 */
double period_energy(const struct platform *p, int s, u64 entry, u64 wake,
		     u64 resume)
{
	return p->overhead[s] + p->power[s] * (double)(wake - entry) +
	       p->exit_power[s] * (double)(resume - wake);
}

/* Spread the time in state @s over [@from, @to) on the trap windows. */
static void note_windows(struct machine *m, int s, u64 from, u64 to)
{
	struct windows *w = m->opts->win;
	u64 end;
	int i;

	if (!w)
		return;
	for (; from < to; from = end) {
		i = (int)((from - SIM_T0) / WINDOW_NS);
		if (i >= w->n)
			return;
		end = min(to, (u64)(SIM_T0 + (u64)(i + 1) * WINDOW_NS));
		w->t[i][s] += end - from;
	}
}

static void note_entry(struct machine *m, struct sim_cpu *c)
{
	struct cpuidle_state_usage *u = &c->dev.states_usage[c->state];
	u64 above = u->above, below = u->below, entry = c->entry;
	int s = c->state;

	core_account(m, c, (s64)(c->t - entry));
	m->m->usage[s]++;
	m->m->time_ns[s] += c->t - entry;
	m->m->above[s] += u->above - above;
	m->m->below[s] += u->below - below;
	m->m->energy += period_energy(m->plat, s, entry, c->wake, c->t);
	note_windows(m, s, entry, c->t);
	note_tick(m, c, entry);
	note_adaptation(m, c, u->above != above || u->below != below);
}

/* --- the governor's own cost --------------------------------------------- */

/*
 * The busy time a governor call of @own ns costs, with the sleep-length
 * queries it made: 0 unless the run charges costs (never for the oracle).
 * It is busy time at a busy CPU's power, and counts in the energy.
 */
static u64 charge(struct machine *m, u64 own)
{
	u64 ns;

	m->m->sleep_calls += m->sleep_calls;
	if (!m->opts->costs || m->gov->role == ROLE_ORACLE)
		return 0;
	ns = own + m->sleep_calls * replay_sleep_length_ns;
	m->m->gov_ns += ns;
	m->m->energy += (double)ns;
	return ns;
}

/* --- selection ----------------------------------------------------------- */

static struct decision *log_slot(struct decision_log *l)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 4096;
		l->d = realloc(l->d, l->cap * sizeof(*l->d));
		if (!l->d)
			die("out of memory");
	}
	return &l->d[l->n++];
}

/* Record a selection; @in holds the inputs captured before it. */
static void log_decision(struct machine *m, struct sim_cpu *c,
			 const struct decision *in, int idx, bool stop)
{
	struct decision *d = log_slot(m->opts->log);
	int i;

	*d = *in;
	d->t = m->clock - SIM_T0;
	d->sleep_length = m->queried_sleep;
	d->delta_tick = m->queried_delta;
	d->latency_req = c->qos_ns;
	d->disabled = 0;
	for (i = 0; i < m->drv.state_count; i++)
		d->disabled |= (!state_enabled(c, i)) << i;
	d->cpu = (s8)m->cur;
	d->idx = (s8)idx;
	d->stop_tick = stop;
	d->ev = m->ev;
}

static struct call *rec_slot(struct call_rec *r)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 4096;
		r->c = xrealloc(r->c, r->cap * sizeof(*r->c));
	}
	memset(&r->c[r->n], 0, sizeof(r->c[r->n]));
	return &r->c[r->n++];
}

/* Record a select() for the overhead measurement; @in holds its inputs. */
static void rec_select(struct machine *m, struct sim_cpu *c,
		       const struct call *in, int idx)
{
	struct call *k = rec_slot(m->opts->rec);

	*k = *in;
	k->sleep_length = m->queried_sleep;
	k->delta_next = m->queried_delta;
	k->idx = (s8)idx;
	c->rec = (long)(m->opts->rec->n - 1);
}

static void rec_reflect(struct machine *m, struct sim_cpu *c)
{
	struct call *k;

	if (!m->opts->rec || c->rec < 0)
		return;
	k = &m->opts->rec->c[c->rec];
	k->clock_reflect = m->clock;
	k->got_tick = c->got_tick;
	k->poll_at_reflect = c->dev.poll_time_limit;
	k->reflected = 1;
	c->rec = -1;
}

static int call_select(struct machine *m, struct sim_cpu *c, bool *stop)
{
	struct call in = {
		.clock_select = m->clock, .latency_req = c->qos_ns,
		.last_residency = c->dev.last_residency_ns,
		.cpu = (s8)m->cur, .tick_stopped = c->tick_stopped,
		.poll_limit_hit = c->dev.poll_time_limit,
	};
	int i;

	struct cpuidle_driver drv_before;
	struct cpuidle_device dev_before;
	int idx;

	if (m->opts->inv) {
		drv_before = m->drv;
		dev_before = c->dev;
	}
	*stop = true;
	m->queried_sleep = -1;
	m->queried_delta = -1;
	m->sleep_calls = 0;
	memset(&m->ev, 0, sizeof(m->ev));
	idx = m->gov->gov->select(&m->drv, &c->dev, stop);
	if (m->opts->rec) {
		for (i = 0; i < m->drv.state_count; i++)
			in.disabled |= (!state_enabled(c, i)) << i;
		rec_select(m, c, &in, idx);
	}
	if (m->opts->inv)
		inv_check(m->opts->inv, &m->drv, &c->dev, &drv_before,
			  &dev_before, c->qos_ns, c->tick_stopped, idx, *stop);
	return idx;
}

static void enter_idle(struct machine *m, int cpu, u64 now)
{
	struct sim_cpu *c = &m->cpu[cpu];
	struct decision in = {
		.last_state = (s8)c->dev.last_state_idx,
		.last_residency = c->dev.last_residency_ns,
		.poll_limit_hit = c->dev.poll_time_limit,
		.tick_stopped = c->tick_stopped,
	};
	bool stop;
	int idx;

	m->cur = cpu;
	m->clock = now;
	if (c->tick_next <= now)
		c->tick_next = (now / TICK_NSEC + 1) * TICK_NSEC;
	idx = call_select(m, c, &stop);
	if (m->opts->log)
		log_decision(m, c, &in, idx, stop);
	if (idx < 0 || idx >= m->drv.state_count)
		idx = 0;	/* reported by the contract check */
	m->m->decisions++;
	if (m->opts->debug)
		fprintf(stderr, "%s cpu%d t=%.6f ms sleep=%lld delta=%lld tick_stopped=%d last=%d res=%llu -> %d stop=%d\n",
			m->gov->label, cpu, (now - SIM_T0) / 1e6,
			(long long)m->queried_sleep, (long long)m->queried_delta,
			c->tick_stopped, in.last_state,
			(unsigned long long)in.last_residency, idx, stop);
	c->tick_ran = !c->tick_stopped;
	c->stop_req = c->tick_ran && stop;
	m->m->tick_running += c->tick_ran;
	if (stop && !c->tick_stopped && engine_can_stop_tick(m, cpu))
		c->tick_stopped = true;
	c->state = idx;
	c->phase = CP_IDLE;
	/*
	 * The CPU cannot idle while the governor computes: the state is
	 * entered after select()'s cost, and what arrives meanwhile (with
	 * interrupts off) wakes it as soon as it is in.
	 */
	c->entry = now + charge(m, m->gov->select_ns);
	if (m->drv.states[idx].flags & CPUIDLE_FLAG_POLLING) {
		c->dev.poll_time_limit = 0;
		c->poll_deadline = c->entry + poll_limit(m, c);
	}
}

/* Take arrivals into service at @now: start the first with work, or idle. */
static void serve(struct machine *m, int cpu, u64 now)
{
	struct sim_cpu *c = &m->cpu[cpu];
	int i;

	while ((i = pending_stream(m, cpu, now, false)) >= 0) {
		struct stream *s = &m->st[i];
		u64 work = s->work;

		stream_consume(m, s);
		if (!work) {
			stream_done(m, s, now);
			continue;
		}
		m->m->items++;
		c->phase = CP_BUSY;
		c->tick_stopped = false;	/* leaving the idle loop */
		c->got_tick = false;
		c->cur_stream = i;
		c->t = now + work;
		return;
	}
	apply_ctls(m, cpu, now);
	enter_idle(m, cpu, now);
}

/* --- the idle period ----------------------------------------------------- */

static bool state_polls(struct machine *m, struct sim_cpu *c)
{
	return m->drv.states[c->state].flags & CPUIDLE_FLAG_POLLING;
}

static u64 idle_event_time(struct machine *m, int cpu)
{
	struct sim_cpu *c = &m->cpu[cpu];
	u64 t = engine_next_arrival(m, cpu, false);

	if (!c->tick_stopped)
		t = min(t, c->tick_next);
	if (state_polls(m, c))
		t = min(t, c->poll_deadline);
	return t;
}

static u64 local_time(struct machine *m, int cpu)
{
	struct sim_cpu *c = &m->cpu[cpu];

	return c->phase == CP_IDLE ? max(idle_event_time(m, cpu), c->entry) : c->t;
}

static void start_waking(struct machine *m, struct sim_cpu *c, u64 now,
			 enum wake_cause cause)
{
	c->wake = now;
	c->cause = cause;
	c->phase = CP_WAKING;
	c->t = now + m->drv.states[c->state].exit_latency_ns;
	if (cause == WAKE_TICK)
		c->got_tick = true;
	if (cause == WAKE_POLL_LIMIT)
		c->dev.poll_time_limit = 1;
}

/*
 * Polling goes on through interrupts that bring no work (the tick among
 * them): only work or the time limit ends it.
 */
static void poll_event(struct machine *m, int cpu, u64 now)
{
	struct sim_cpu *c = &m->cpu[cpu];
	int i = pending_stream(m, cpu, now, false);

	if (i >= 0 && m->st[i].work) {
		start_waking(m, c, now, WAKE_ARRIVAL);
	} else if (i >= 0) {
		stream_consume(m, &m->st[i]);
		stream_done(m, &m->st[i], now);
	} else if (!c->tick_stopped && c->tick_next <= now) {
		c->got_tick = true;
		c->tick_next += TICK_NSEC;
	} else {
		start_waking(m, c, now, WAKE_POLL_LIMIT);
	}
}

static void idle_event(struct machine *m, int cpu, u64 now)
{
	struct sim_cpu *c = &m->cpu[cpu];

	if (state_polls(m, c)) {
		poll_event(m, cpu, now);
		return;
	}
	if (!c->tick_stopped && c->tick_next <= now) {	/* < : during select() */
		c->tick_next += TICK_NSEC;
		start_waking(m, c, now, WAKE_TICK);
		return;
	}
	start_waking(m, c, now, WAKE_ARRIVAL);
}

/* reflect(); the busy time it costs. */
static u64 call_reflect(struct machine *m, struct sim_cpu *c)
{
	struct cpuidle_driver drv_before;
	struct cpuidle_device dev_before;

	rec_reflect(m, c);
	if (!m->gov->gov->reflect)
		return 0;
	if (m->opts->inv) {
		drv_before = m->drv;
		dev_before = c->dev;
	}
	m->sleep_calls = 0;
	m->gov->gov->reflect(&c->dev, c->state);
	if (m->opts->inv)
		inv_check_reflect(m->opts->inv, &m->drv, &c->dev, &drv_before,
				  &dev_before);
	return charge(m, m->gov->reflect_ns);
}

/*
 * The CPU resumes: the core's bookkeeping, then reflect(), whose cost
 * delays the work that woke the CPU (the idle loop runs it before the
 * scheduler), then the work or the next selection.
 */
static void finish_waking(struct machine *m, int cpu, u64 now)
{
	struct sim_cpu *c = &m->cpu[cpu];
	u64 busy;
	int i;

	note_entry(m, c);
	i = pending_stream(m, cpu, now, true);
	m->cur = cpu;
	m->clock = now;
	busy = call_reflect(m, c);
	if (i >= 0)
		note_latency(m->m, now + busy - m->st[i].next);
	c->got_tick = false;	/* the idle loop reads and clears it too */
	if (busy) {
		c->phase = CP_REFLECT;
		c->t = now + busy;
		return;
	}
	serve(m, cpu, now);
}

static void process(struct machine *m, int cpu, u64 now)
{
	struct sim_cpu *c = &m->cpu[cpu];

	switch (c->phase) {
	case CP_IDLE:
		idle_event(m, cpu, now);
		break;
	case CP_WAKING:
		finish_waking(m, cpu, now);
		break;
	case CP_REFLECT:
		serve(m, cpu, now);
		break;
	case CP_BUSY:
		stream_done(m, &m->st[c->cur_stream], now);
		serve(m, cpu, now);
		break;
	}
}

/* --- a run --------------------------------------------------------------- */

static void machine_init(struct machine *m, const struct scenario *s,
			 const struct platform *p, const struct gov_entry *g)
{
	int i, j;

	m->scn = s;
	m->plat = p;
	m->gov = g;
	m->drv = p->drv;
	m->ncpu = s->ncpu;
	m->end = SIM_T0 + s->duration;
	replay_tick_nsec = (NSEC_PER_SEC + s->hz / 2) / s->hz;
	replay_machine = m;
	for (i = 0; i < m->ncpu; i++) {
		struct sim_cpu *c = &m->cpu[i];

		c->dev.cpu = i;
		c->dev.registered = 1;
		c->dev.enabled = 1;
		c->dev.last_state_idx = -1;
		c->rec = -1;
		for (j = 0; j < p->drv.state_count; j++)
			c->dev.states_usage[j].disable = (p->off_mask >> j) & 1;
		c->qos_ns = QOS_NONE_NS;
		c->next_switch = SIM_T0 + s->phase;
		m->cur = i;
		if (g->gov->enable && g->gov->enable(&m->drv, &c->dev))
			die("governor %s failed to enable CPU %d", g->label, i);
	}
	streams_init(m);
}

static int next_cpu(struct machine *m, u64 *when)
{
	int i, best = 0;
	u64 t, bt = U64_MAX;

	for (i = 0; i < m->ncpu; i++) {
		t = local_time(m, i);
		if (t < bt) {
			bt = t;
			best = i;
		}
	}
	*when = bt;
	return best;
}

static void machine_loop(struct machine *m)
{
	u64 now, limit = m->opts->max_decisions;
	int cpu;

	for (cpu = 0; cpu < m->ncpu; cpu++)
		serve(m, cpu, SIM_T0);
	for (;;) {
		cpu = next_cpu(m, &now);
		if (now > m->end || (limit && m->m->decisions >= limit))
			break;
		process(m, cpu, now);
	}
}

/*
 * Charge the idle periods still open when the run ends: up to the end, or
 * with the whole exit if the CPU is already waking up (the oracle counts
 * them the same way).  Their time counts in the time shares too.
 */
static void machine_finish(struct machine *m)
{
	int cpu;

	for (cpu = 0; cpu < m->ncpu; cpu++) {
		struct sim_cpu *c = &m->cpu[cpu];
		u64 to;

		/* Busy, or still in select() (its cost is charged already). */
		if (c->phase == CP_BUSY || c->phase == CP_REFLECT ||
		    (c->phase == CP_IDLE && c->entry > m->end))
			continue;
		if (c->phase == CP_IDLE)
			m->m->energy += period_energy(m->plat, c->state, c->entry,
						      m->end, m->end);
		else
			m->m->energy += period_energy(m->plat, c->state, c->entry,
						      c->wake, c->t);
		to = c->phase == CP_IDLE ? m->end : min(c->t, m->end);
		m->m->time_ns[c->state] += to - c->entry;
		note_windows(m, c->state, c->entry, to);
	}
}

void run_one(const struct scenario *s, const struct platform *p,
	     const struct gov_entry *g, const struct run_opts *o,
	     struct metrics *mt)
{
	static const struct run_opts none;
	struct machine *m = xcalloc(1, sizeof(*m));

	if (s->ncpu < 1 || s->ncpu > MAX_CPUS)
		die("scenario %s: %d CPUs (1..%d)", s->name, s->ncpu, MAX_CPUS);
	memset(mt, 0, sizeof(*mt));
	m->opts = o ? o : &none;
	m->m = mt;
	machine_init(m, s, p, g);
	machine_loop(m);
	machine_finish(m);
	mt->sim_ns = s->duration * (u64)s->ncpu;
	replay_machine = NULL;
	free(m);
}
