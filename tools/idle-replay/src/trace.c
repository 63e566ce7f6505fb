// SPDX-License-Identifier: GPL-2.0
/*
 * idle-replay: trace files (recorded timelines) and the converter from
 * `perf script` / `trace-cmd report` text.  The format is in ../README.
 */

#include <errno.h>
#include <stdlib.h>

#include "replay.h"

#define TRACE_MAGIC	"idle-replay-trace"
#define TRACE_SLACK	(10 * MS)	/* run on after the last event */
#define TRACE_MAX_T	(1000000ULL * SEC)	/* 11.6 days: no time can wrap */
#define TRACE_MAX_WORK	(1000ULL * SEC)

struct tparse {
	const char *path;
	int line;
	struct scenario *s;
	struct trace_ev *ev[MAX_CPUS][2];	/* [cpu][timer, irq] */
	size_t n[MAX_CPUS][2], cap[MAX_CPUS][2];
	u64 last[MAX_CPUS];
	u64 end;
	int cpus;
	bool magic;
};

static int terr(struct tparse *tp, const char *what, const char *tok)
{
	fprintf(stderr, "idle-replay: %s:%d: %s%s%s%s\n", tp->path, tp->line,
		what, tok ? " '" : "", tok ? tok : "", tok ? "'" : "");
	return -1;
}

/*
 * A plain decimal number (no octal, no hex, no sign) up to @max; "-1" too
 * if @minus_one.
 */
static int tnum(struct tparse *tp, const char *tok, const char *what,
		bool minus_one, u64 max, s64 *v)
{
	unsigned long long x;
	char msg[96];

	if (!tok) {
		snprintf(msg, sizeof(msg), "truncated line: missing %s", what);
		return terr(tp, msg, NULL);
	}
	if (minus_one && !strcmp(tok, "-1")) {
		*v = -1;
		return 0;
	}
	if (tok[0] == '-') {
		snprintf(msg, sizeof(msg), "negative %s:", what);
		return terr(tp, msg, tok);
	}
	if (parse_decimal(tok, ~0ULL, &x)) {
		bool digits = strspn(tok, "0123456789") == strlen(tok) && tok[0] != '0';

		snprintf(msg, sizeof(msg), digits ? "%s above %llu:" :
			 "%s is not a plain decimal number:", what,
			 (unsigned long long)max);
		return terr(tp, msg, tok);
	}
	if (x > max) {
		snprintf(msg, sizeof(msg), "%s above %llu:", what,
			 (unsigned long long)max);
		return terr(tp, msg, tok);
	}
	*v = (s64)x;
	return 0;
}

/* A disabled-state mask: decimal, or hex with 0x; states 0..9 only. */
static int tmask(struct tparse *tp, const char *tok, s64 *v)
{
	unsigned long long x;
	char *end;

	if (!tok)
		return terr(tp, "truncated line: missing disable mask", NULL);
	if (!strncmp(tok, "0x", 2) && tok[2] && strspn(tok + 2, "0123456789abcdefABCDEF") == strlen(tok + 2)) {
		errno = 0;
		x = strtoull(tok + 2, &end, 16);
		if (errno)
			x = ~0ULL;
	} else if (parse_decimal(tok, ~0ULL, &x)) {
		return terr(tp, "disable mask is neither decimal nor 0x-hex:", tok);
	}
	if (x >> CPUIDLE_STATE_MAX)
		return terr(tp, "disable mask has bits above state 9:", tok);
	*v = (s64)x;
	return 0;
}

static int push_ev(struct tparse *tp, int cpu, int kind, u64 t, u64 work)
{
	size_t *n = &tp->n[cpu][kind], *cap = &tp->cap[cpu][kind];

	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 1024;
		tp->ev[cpu][kind] = xrealloc(tp->ev[cpu][kind],
					     *cap * sizeof(struct trace_ev));
	}
	tp->ev[cpu][kind][(*n)++] = (struct trace_ev){ t, work };
	return 0;
}

static int parse_cpu(struct tparse *tp, const char *tok, int *cpu)
{
	s64 v;

	if (tnum(tp, tok, "cpu", false, ~0ULL, &v))
		return -1;
	if (v >= MAX_CPUS || (tp->cpus && v >= tp->cpus))
		return terr(tp, "cpu out of range:", tok);
	*cpu = (int)v;
	return 0;
}

static int parse_ctl(struct tparse *tp, u64 t, int cpu, const char *kind,
		     const char *tok)
{
	struct scenario *s = tp->s;
	bool qos = !strcmp(kind, "qos");
	s64 v;

	if (qos ? tnum(tp, tok, "latency limit", true, 4000ULL * SEC, &v) :
		  tmask(tp, tok, &v))
		return -1;
	s->ctl = xrealloc(s->ctl, (s->nctl + 1) * sizeof(*s->ctl));
	s->ctl[s->nctl++] = (struct ctl_ev){
		t, cpu, qos ? CTL_QOS : CTL_DISABLE, v
	};
	return 0;
}

static int parse_event(struct tparse *tp, const char *ttok)
{
	const char *kind;
	int cpu, k;
	s64 t, work;

	if (tnum(tp, ttok, "time", false, TRACE_MAX_T, &t) ||
	    parse_cpu(tp, strtok(NULL, " \t"), &cpu))
		return -1;
	kind = strtok(NULL, " \t");
	if (!kind)
		return terr(tp, "truncated line: kind missing", NULL);
	if (strcmp(kind, "timer") && strcmp(kind, "irq") &&
	    strcmp(kind, "qos") && strcmp(kind, "disable"))
		return terr(tp, "unknown kind (timer, irq, qos, disable):", kind);
	if ((u64)t < tp->last[cpu])
		return terr(tp, "time goes backwards on this cpu:", ttok);
	tp->last[cpu] = t;
	if (!strcmp(kind, "qos") || !strcmp(kind, "disable"))
		return parse_ctl(tp, t, cpu, kind, strtok(NULL, " \t"));
	if (tnum(tp, strtok(NULL, " \t"), "work", false, TRACE_MAX_WORK, &work))
		return -1;
	if (strtok(NULL, " \t"))
		return terr(tp, "extra field after the work", NULL);
	tp->end = max(tp->end, (u64)t + (u64)work);
	k = !strcmp(kind, "irq");
	return push_ev(tp, cpu, k, t, work);
}

static int parse_header(struct tparse *tp, const char *key)
{
	struct scenario *s = tp->s;
	const char *val = strtok(NULL, " \t");
	s64 v;

	if (!strcmp(key, "platform")) {
		if (!val)
			return terr(tp, "truncated line: platform name missing", NULL);
		snprintf(s->platform, sizeof(s->platform), "%s", val);
		return 0;
	}
	if (tnum(tp, val, key, false, ~0ULL, &v))
		return -1;
	if (!strcmp(key, "hz") && (v == 100 || v == 250 || v == 300 || v == 1000))
		s->hz = (int)v;
	else if (!strcmp(key, "cpus") && v >= 1 && v <= MAX_CPUS && !tp->cpus)
		tp->cpus = (int)v;
	else
		return terr(tp, "bad value:", val);
	return 0;
}

static int tline(struct tparse *tp, char *buf)
{
	char *tok = first_token(buf);

	if (!tok)
		return 0;
	if (!tp->magic) {
		const char *version = strtok(NULL, " \t");

		if (strcmp(tok, TRACE_MAGIC) || !version || strcmp(version, "1"))
			return terr(tp, "not a trace file: the first line must be '"
				    TRACE_MAGIC " 1'", NULL);
		tp->magic = true;
		return 0;
	}
	if (!strcmp(tok, "hz") || !strcmp(tok, "cpus") || !strcmp(tok, "platform"))
		return parse_header(tp, tok);
	return parse_event(tp, tok);
}

/* Insertion sort: stable, so equal times keep the file's order. */
static void sort_ctl(struct ctl_ev *v, int n)
{
	int i, j;

	for (i = 1; i < n; i++) {
		struct ctl_ev e = v[i];

		for (j = i; j > 0 && v[j - 1].t > e.t; j--)
			v[j] = v[j - 1];
		v[j] = e;
	}
}

static void trace_streams(struct tparse *tp)
{
	struct scenario *s = tp->s;
	int cpu, k;

	for (cpu = 0; cpu < s->ncpu; cpu++) {
		for (k = 0; k < 2; k++) {
			struct stream_tpl *t;

			if (!tp->n[cpu][k])
				continue;
			if (s->nstreams == MAX_STREAMS)
				die("too many streams");
			t = &s->streams[s->nstreams++];
			t->mode = SM_LIST;
			t->kind = k ? EV_IRQ : EV_TIMER;
			t->cpu = cpu;
			t->list = tp->ev[cpu][k];
			t->nlist = tp->n[cpu][k];
		}
	}
}

static int trace_finish(struct tparse *tp)
{
	struct scenario *s = tp->s;
	int cpu, top = 0;

	if (!tp->magic)
		return terr(tp, "empty file: no '" TRACE_MAGIC " 1' line", NULL);
	for (cpu = 0; cpu < MAX_CPUS; cpu++)
		if (tp->n[cpu][0] || tp->n[cpu][1])
			top = cpu + 1;
	if (!top)
		return terr(tp, "no timer or irq events", NULL);
	if (tp->cpus && top > tp->cpus)
		return terr(tp, "an event names a cpu beyond the 'cpus' line", NULL);
	s->ncpu = tp->cpus ? tp->cpus : top;
	s->duration = tp->end + TRACE_SLACK;
	sort_ctl(s->ctl, s->nctl);
	trace_streams(tp);
	return 0;
}

int trace_load(const char *path, struct scenario *s)
{
	struct tparse tp = { .path = path, .s = s };
	const char *base = strrchr(path, '/');
	char buf[512];
	FILE *f = fopen(path, "r");
	int cpu, k, rc = 0, err = 0;

	memset(s, 0, sizeof(*s));
	s->hz = 250;
	snprintf(s->family, sizeof(s->family), "TR");
	snprintf(s->name, sizeof(s->name), "%s", base ? base + 1 : path);
	snprintf(s->title, sizeof(s->title), "recorded timeline %s", s->name);
	if (!f) {
		fprintf(stderr, "idle-replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (!err && !rc) {
		rc = read_line(f, buf, sizeof(buf), path, ++tp.line);
		if (rc < 0)
			err = -1;
		else if (!rc)
			err = tline(&tp, buf);
	}
	fclose(f);
	if (!err)
		err = trace_finish(&tp);
	if (err) {
		for (cpu = 0; cpu < MAX_CPUS; cpu++)
			for (k = 0; k < 2; k++)
				free(tp.ev[cpu][k]);
		free(s->ctl);
		s->ctl = NULL;
		return -1;
	}
	scenario_finish(s);
	return 0;
}

/* Free what trace_load() allocated. */
void trace_free(struct scenario *s)
{
	int i;

	for (i = 0; i < s->nstreams; i++)
		if (s->streams[i].mode == SM_LIST)
			free((void *)s->streams[i].list);
	free(s->ctl);
	s->ctl = NULL;
	s->nstreams = 0;
}

/* --- the converter ------------------------------------------------------- */

enum cause { C_NONE, C_TICK, C_TIMER, C_IRQ };

/* Resolution of the tick's phase in the recording: 1/TICK_PHASES tick. */
#define TICK_PHASES	100

/*
 * Handlers that run inside the idle state (a halting state entered with
 * sti; hlt, a polling state) come before the idle exit.  A halting state
 * wakes once: everything inside it is that wakeup.  A polling state polls
 * on through interrupts that bring no work: there the wakeup is the last
 * burst of handlers (events less than BURST_NS apart), and only if the
 * exit follows it within POLL_EXIT_NS.  Both are generous because under
 * QEMU TCG a tick and its softirq take a hundred microseconds or more.
 */
#define BURST_NS	(200 * US)
#define POLL_EXIT_NS	(200 * US)

struct conv_cpu {
	bool idle, open, switched, poll;
	bool settled;		/* the cause came from inside the idle state */
	bool rcu, pend_rcu;	/* the tick ran RCU's softirq */
	int state;		/* the state entered, while idle */
	u64 entry;		/* idle entry */
	u64 exit, wake;		/* idle exit; the wakeup (burst or exit) */
	enum cause cause;
	enum cause pend;	/* the last burst inside the idle period */
	u64 pend_t, pend_last;
};

struct conv {
	const char *name;
	int line;
	unsigned int poll_mask;	/* states that poll */
	bool have_base, any_switch;
	u64 base;
	struct conv_cpu cpu[MAX_CPUS];
	struct { u64 t, gap; int cpu; bool switched, snap; enum cause c; } *out;
	unsigned long phase[TICK_PHASES];	/* tick times modulo the tick */
	size_t n, cap;
	u64 tick_ns;
	unsigned long ticks, poll_ends, stopped_ticks, busy_timers, rcu_ticks;
};

static void conv_push(struct conv *cv, int cpu, u64 t, u64 gap, bool switched,
		      enum cause cause)
{
	if (cv->n == cv->cap) {
		cv->cap = cv->cap ? 2 * cv->cap : 4096;
		cv->out = realloc(cv->out, cv->cap * sizeof(*cv->out));
		if (!cv->out)
			die("out of memory");
	}
	cv->out[cv->n].t = t;
	cv->out[cv->n].gap = gap;
	cv->out[cv->n].switched = switched;
	cv->out[cv->n].snap = false;
	cv->out[cv->n].cpu = cpu;
	cv->out[cv->n].c = cause;
	cv->n++;
}

/* "12345.678901:" -> ns; false if @tok is not a timestamp. */
static bool parse_stamp(const char *tok, u64 *ns)
{
	u64 sec = 0, frac = 0, scale = 1000000000ULL;
	const char *p = tok;

	if (*p < '0' || *p > '9')
		return false;
	for (; *p >= '0' && *p <= '9'; p++)
		sec = sec * 10 + (u64)(*p - '0');
	if (*p++ != '.')
		return false;
	for (; *p >= '0' && *p <= '9'; p++) {
		scale /= 10;
		frac += (u64)(*p - '0') * scale;
	}
	if (strcmp(p, ":"))
		return false;
	*ns = sec * SEC + frac;
	return true;
}

static const char *arg(const char *rest, const char *key)
{
	const char *p = rest;
	size_t n = strlen(key);

	while ((p = strstr(p, key))) {
		if ((p == rest || p[-1] == ' ' || p[-1] == '\t') && p[n] == '=')
			return p + n + 1;
		p += n;
	}
	return NULL;
}

static bool is_tick_fn(const char *fn)
{
	return fn && (!strncmp(fn, "tick_nohz_handler", 17) ||
		      !strncmp(fn, "tick_sched_timer", 16) ||
		      !strncmp(fn, "tick_nohz_highres_handler", 25) ||
		      !strncmp(fn, "tick_handle_periodic", 20));
}

static void conv_emit(struct conv *cv, int cpu, u64 t)
{
	struct conv_cpu *c = &cv->cpu[cpu];
	bool tick = false;

	c->open = false;
	/*
	 * The lab runs its own tick, so tick wakeups are left out: all but
	 * those after more than a tick period of idle.  The tick was stopped
	 * then, and its timer fired at the next event tick_nohz programmed
	 * for it (a timer-wheel expiry, also of a timer deleted since; RCU),
	 * with nothing of the kind for the lab to run: a timer arrival, which
	 * the kernel's sleep length saw coming.
	 */
	if (c->cause == C_TICK) {
		tick = true;
		if (c->rcu) {
			/*
			 * RCU needed the CPU: tick_nohz kept the tick and
			 * gave the next tick as the next event, so the
			 * governor saw it coming, which the lab (no RCU)
			 * does not know.  A timer arrival.
			 */
			cv->rcu_ticks++;
		} else if (c->wake - c->entry <= cv->tick_ns + cv->tick_ns / 8) {
			cv->ticks++;
			return;
		} else {
			cv->stopped_ticks++;
		}
		c->cause = C_TIMER;
	}
	/*
	 * Polling that ended with nothing to do and no handler: its time
	 * limit (the lab polls to the same limit), not an arrival.
	 */
	if (c->cause == C_NONE && c->poll && cv->any_switch && !c->switched) {
		cv->poll_ends++;
		return;
	}
	conv_push(cv, cpu, c->wake, t - c->exit, c->switched,
		  c->cause == C_TIMER ? C_TIMER : C_IRQ);
	cv->out[cv->n - 1].snap = tick;
}

static void conv_idle(struct conv *cv, int cpu, u64 t, const char *rest)
{
	struct conv_cpu *c = &cv->cpu[cpu];
	const char *st = arg(rest, "state");
	bool exit = st && (!strncmp(st, "4294967295", 10) || !strncmp(st, "-1", 2));

	if (!st)
		return;
	if (!exit) {
		if (c->open)
			conv_emit(cv, cpu, t);
		c->idle = true;
		c->entry = t;
		c->state = atoi(st);
		c->poll = c->state >= 0 && c->state < CPUIDLE_STATE_MAX &&
			  (cv->poll_mask >> c->state & 1);
		c->pend = C_NONE;
		c->pend_rcu = false;
		return;
	}
	if (!c->idle)
		return;
	c->idle = false;
	c->open = true;
	c->switched = false;
	c->exit = t;
	c->wake = t;
	c->cause = C_NONE;
	c->settled = false;
	c->rcu = false;
	if (c->pend != C_NONE && (!c->poll || t - c->pend_last <= POLL_EXIT_NS)) {
		c->cause = c->pend;
		c->wake = c->pend_t;
		c->settled = true;
		c->rcu = c->pend_rcu;
	}
}

static void conv_cause(struct conv *cv, int cpu, u64 t, enum cause cause)
{
	struct conv_cpu *c = &cv->cpu[cpu];

	if (c->idle) {
		if (c->pend == C_NONE ||
		    (c->poll && t - c->pend_last > BURST_NS)) {
			c->pend = cause;
			c->pend_t = t;
		} else if (c->pend == C_TICK && cause != C_TICK) {
			c->pend = cause;
		}
		c->pend_last = t;
		return;
	}
	/*
	 * After the exit, the first cause is the wakeup's when the handlers
	 * run only once the state is left (intel_idle's mwait).
	 */
	if (c->open && !c->settled &&
	    (c->cause == C_NONE || (c->cause == C_TICK && cause != C_TICK))) {
		c->cause = cause;
		c->settled = cause != C_TICK;
		return;
	}
	/*
	 * A timer that expires while the CPU is busy wakes nothing, but the
	 * kernel's sleep length saw it coming before: an arrival without
	 * work, so that the lab's sleep length sees it too.
	 */
	if (cause == C_TIMER && cv->have_base) {
		conv_push(cv, cpu, t, 0, false, C_TIMER);
		cv->busy_timers++;
	}
}

/*
 * The previous task's pid of a sched_switch: "prev_pid=N" (perf, trace-cmd
 * report -N), or trace-cmd's plugin format "COMM:N [PRIO] S ==> ...".
 */
static bool switch_prev_pid(const char *rest, long *pid)
{
	const char *p = arg(rest, "prev_pid"), *end;

	if (!p) {
		end = strstr(rest, " [");
		if (!end || !strstr(end, " ==> "))
			return false;
		for (p = end; p > rest && p[-1] != ':'; p--)
			;
		if (p == rest || p == end)
			return false;
	}
	if (*p < '0' || *p > '9')
		return false;
	*pid = strtol(p, NULL, 10);
	return true;
}

/* The idle task (pid 0) switching out means the wakeup brought work. */
static void conv_switch(struct conv *cv, int cpu, const char *rest)
{
	long pid;

	cv->any_switch = true;
	if (cv->cpu[cpu].open && switch_prev_pid(rest, &pid) && !pid)
		cv->cpu[cpu].switched = true;
}

/* RCU's softirq, run by a tick: RCU kept the tick for itself. */
static void conv_softirq(struct conv *cv, int cpu, const char *rest)
{
	struct conv_cpu *c = &cv->cpu[cpu];

	if (!strstr(rest, "action=RCU") && !strstr(rest, "vec=9 "))
		return;
	if (c->idle && c->pend == C_TICK)
		c->pend_rcu = true;
	else if (!c->idle && c->open && c->cause == C_TICK)
		c->rcu = true;
}

/* Device interrupts and IPIs: arm64's ipi_entry, x86's irq_vectors. */
static bool is_irq_event(const char *name)
{
	static const char *const names[] = {
		"irq_handler_entry", "ipi_entry", "reschedule_entry",
		"call_function_entry", "call_function_single_entry",
		"irq_work_entry", "x86_platform_ipi_entry",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

static void conv_event(struct conv *cv, int cpu, u64 t, const char *ev,
		       const char *rest)
{
	const char *colon = strrchr(ev, ':');
	char name[64];

	/* "power:cpu_idle:" (perf) or "cpu_idle:" (trace-cmd) */
	snprintf(name, sizeof(name), "%.*s", (int)(colon - ev), ev);
	colon = strchr(name, ':');
	if (colon)
		memmove(name, colon + 1, strlen(colon));
	if (!strcmp(name, "cpu_idle"))
		conv_idle(cv, cpu, t, rest);
	else if (is_irq_event(name))
		conv_cause(cv, cpu, t, C_IRQ);
	else if (!strcmp(name, "hrtimer_expire_entry") ||
		 !strcmp(name, "timer_expire_entry")) {
		bool tick = is_tick_fn(arg(rest, "function"));

		if (tick)
			cv->phase[(t % cv->tick_ns) * TICK_PHASES / cv->tick_ns]++;
		conv_cause(cv, cpu, t, tick ? C_TICK : C_TIMER);
	}
	else if (!strcmp(name, "sched_switch"))
		conv_switch(cv, cpu, rest);
	else if (!strcmp(name, "softirq_entry"))
		conv_softirq(cv, cpu, rest);
}

/* Find "[NNN]" (the CPU), the timestamp and the event name on a line. */
static bool conv_split(char *buf, int *cpu, u64 *t, char **ev, char **rest)
{
	char *tok, *save;
	bool have_cpu = false;

	for (tok = strtok_r(buf, " \t", &save); tok;
	     tok = strtok_r(NULL, " \t", &save)) {
		if (!have_cpu && tok[0] == '[' && tok[strlen(tok) - 1] == ']') {
			*cpu = atoi(tok + 1);
			have_cpu = true;
		} else if (have_cpu && parse_stamp(tok, t)) {
			*ev = strtok_r(NULL, " \t", &save);
			*rest = save ? save : "";
			return *ev && (*ev)[strlen(*ev) - 1] == ':';
		}
	}
	return false;
}

static int conv_line(struct conv *cv, char *buf)
{
	char *ev, *rest;
	int cpu = 0;
	u64 t = 0;

	buf[strcspn(buf, "\r\n")] = 0;
	if (!conv_split(buf, &cpu, &t, &ev, &rest))
		return 0;	/* headers, comments, other formats */
	if (cpu < 0 || cpu >= MAX_CPUS) {
		fprintf(stderr, "idle-replay: %s:%d: cpu %d out of range (0..%d)\n",
			cv->name, cv->line, cpu, MAX_CPUS - 1);
		return -1;
	}
	if (!cv->have_base) {
		cv->base = t;
		cv->have_base = true;
	}
	if (t < cv->base) {
		fprintf(stderr, "idle-replay: %s:%d: time before the first event\n",
			cv->name, cv->line);
		return -1;
	}
	conv_event(cv, cpu, t, ev, rest);
	return 0;
}

static int by_out_time(const void *a, const void *b)
{
	const u64 *x = a, *y = b;	/* t is the first member */

	return *x < *y ? -1 : *x > *y;
}

/*
 * The kernel's ticks fall on one grid on every CPU, the lab's on multiples
 * of the tick from 0: start the timeline on the recorded grid (the most
 * frequent phase of the tick's expiries, which come a little late), and
 * put the arrivals that were ticks onto it, so that the lab's tick and a
 * tick kept as an arrival are one wakeup, not two.
 */
static void conv_align(struct conv *cv)
{
	u64 tick = cv->tick_ns, phase, t0;
	size_t i;
	int b, best = 0;

	for (b = 1; b < TICK_PHASES; b++)
		if (cv->phase[b] > cv->phase[best])
			best = b;
	if (!cv->phase[best]) {
		t0 = cv->base;
	} else {
		phase = (u64)best * tick / TICK_PHASES;
		t0 = cv->base - (cv->base + tick - phase) % tick;
	}
	for (i = 0; i < cv->n; i++) {
		cv->out[i].t -= t0;
		if (cv->out[i].snap)
			cv->out[i].t -= cv->out[i].t % tick;
	}
}

static void conv_write(struct conv *cv, FILE *out, int hz)
{
	const char *base = strrchr(cv->name, '/');
	size_t i;
	int top = 0;

	conv_align(cv);
	qsort(cv->out, cv->n, sizeof(*cv->out), by_out_time);
	for (i = 0; i < cv->n; i++)
		top = max(top, cv->out[i].cpu + 1);

	fprintf(out, "%s 1\n# converted from %s\nhz %d\ncpus %d\n",
		TRACE_MAGIC, base ? base + 1 : cv->name, hz, top);
	for (i = 0; i < cv->n; i++) {
		bool work = !cv->any_switch || cv->out[i].switched;

		fprintf(out, "%llu %d %s %llu\n",
			(unsigned long long)cv->out[i].t, cv->out[i].cpu,
			cv->out[i].c == C_TIMER ? "timer" : "irq",
			(unsigned long long)(work ? cv->out[i].gap : 0));
	}
}

int trace_convert(FILE *in, const char *name, FILE *out, int hz,
		  unsigned int poll_mask)
{
	struct conv *cv = xcalloc(1, sizeof(*cv));
	char buf[4096];
	int err = 0;

	cv->name = name;
	cv->poll_mask = poll_mask;
	cv->tick_ns = SEC / (u64)hz;
	while (!err && fgets(buf, sizeof(buf), in)) {
		cv->line++;
		err = conv_line(cv, buf);
	}
	if (!err && !cv->n) {
		fprintf(stderr, "idle-replay: %s: no idle exits found (record power:cpu_idle)\n",
			name);
		err = -1;
	}
	if (!err) {
		conv_write(cv, out, hz);
		fprintf(stderr, "idle-replay: %s: %zu arrivals (%lu timers that expired while the CPU was busy, %lu ticks kept for RCU, %lu wakeups of a stopped tick), %lu tick wakeups and %lu ends of polling left out\n",
			name, cv->n, cv->busy_timers, cv->rcu_ticks, cv->stopped_ticks, cv->ticks, cv->poll_ends);
	}
	free(cv->out);
	free(cv);
	return err;
}
