// SPDX-License-Identifier: GPL-2.0
/*
 * idle-replay: idle-state tables (platform files) and their energy model.
 *
 *   name rk3399
 *   title Arm RK3399
 *   # state NAME EXIT_LATENCY_US TARGET_RESIDENCY_US [poll] [off] [power=P]
 *   #       [power_usage=MW]
 *   state WFI 1 1
 *   state cpu-sleep 370 900
 */

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "replay.h"

struct parse {
	const char *path;
	int line;
	struct platform *p;
	int err;
	int lines[MAX_LISTED];	/* line of each state */
};

static int perr(struct parse *ps, const char *what)
{
	fprintf(stderr, "idle-replay: %s:%d: %s\n", ps->path, ps->line, what);
	ps->err = 1;
	return -1;
}

/* A whole number of microseconds, 0..UINT_MAX, in plain decimal. */
static int parse_us(struct parse *ps, const char *tok, const char *what,
		    s64 *ns)
{
	unsigned long long v;
	char msg[128];

	if (!tok) {
		snprintf(msg, sizeof(msg), "truncated line: %s missing", what);
		return perr(ps, msg);
	}
	if (tok[0] == '-') {
		snprintf(msg, sizeof(msg), "negative %s '%.40s'", what, tok);
		return perr(ps, msg);
	}
	if (parse_decimal(tok, UINT_MAX, &v)) {
		snprintf(msg, sizeof(msg),
			 "%s '%.40s' is not a decimal number of microseconds in 0..%u",
			 what, tok, UINT_MAX);
		return perr(ps, msg);
	}
	*ns = (s64)v * NSEC_PER_USEC;
	return 0;
}

/* power=P: a finite number in (0, 1], 1 being a busy CPU's power. */
static int parse_power(struct parse *ps, const char *val, double *out)
{
	char *end;
	double v = strtod(val, &end);

	if (*end || end == val || !isfinite(v) || !(v > 0) || v > 1)
		return perr(ps, "power= needs a number in (0, 1] (1 = a busy CPU's power)");
	*out = v;
	return 0;
}

/*
 * power_usage=MW: the kernel's struct cpuidle_state power_usage, in mW, as
 * a driver gives it (0..INT_MAX; the drivers' "unknown", UINT_MAX or -1,
 * is written as no attribute at all).
 */
static int parse_power_usage(struct parse *ps, const char *val, unsigned int *out)
{
	unsigned long long v;

	if (parse_decimal(val, INT_MAX, &v))
		return perr(ps, "power_usage= needs a whole number of mW in 0..2147483647 (the driver's power_usage; leave it out where the driver gives none)");
	*out = (unsigned int)v;
	return 0;
}

/* What parse_flags() found besides the state's own fields. */
struct state_attrs {
	double power;
	unsigned int mw;
	bool has_mw;
};

/* Attributes after the numbers; @st may be a scratch copy. */
static int parse_flags(struct parse *ps, int i, struct cpuidle_state *st,
		       struct state_attrs *a, char *tok)
{
	for (; tok; tok = strtok(NULL, " \t")) {
		if (!strcmp(tok, "poll")) {
			if (i)
				return perr(ps, "only state 0 may poll");
			st->flags |= CPUIDLE_FLAG_POLLING;
		} else if (!strcmp(tok, "off")) {
			st->flags |= CPUIDLE_FLAG_OFF;
		} else if (!strncmp(tok, "power=", 6)) {
			if (parse_power(ps, tok + 6, &a->power))
				return -1;
		} else if (!strncmp(tok, "power_usage=", 12)) {
			if (parse_power_usage(ps, tok + 12, &a->mw))
				return -1;
			a->has_mw = true;
		} else {
			return perr(ps, "unknown state attribute (poll, off, power=P, power_usage=MW)");
		}
	}
	if (a->has_mw && a->power)
		return perr(ps, "power= and power_usage= on one state (give one of them)");
	if (a->has_mw && st->flags & CPUIDLE_FLAG_POLLING)
		return perr(ps, "a polling state draws a busy CPU's power: no power_usage= on it");
	return 0;
}

/*
 * A state line.  Like the drivers, only the first CPUIDLE_STATE_MAX states
 * are registered; the others are checked and counted (listed).
 */
static int parse_state(struct parse *ps)
{
	struct platform *p = ps->p;
	struct cpuidle_driver *drv = &p->drv;
	int i = p->listed;
	struct cpuidle_state scratch = { 0 };
	struct state_attrs attrs = { 0 };
	bool kept = i < CPUIDLE_STATE_MAX;
	struct cpuidle_state *st = kept ? &drv->states[i] : &scratch;
	char *name = strtok(NULL, " \t");

	if (i == MAX_LISTED)
		return perr(ps, "more than 64 states");
	if (!name)
		return perr(ps, "truncated line: state name missing");
	/* Longer names are cut to CPUIDLE_NAME_LEN - 1, as drivers copy them. */
	if (parse_us(ps, strtok(NULL, " \t"), "exit latency", &st->exit_latency_ns) ||
	    parse_us(ps, strtok(NULL, " \t"), "target residency",
		     &st->target_residency_ns) ||
	    parse_flags(ps, i, st, &attrs, strtok(NULL, " \t")))
		return -1;
	ps->lines[i] = ps->line;
	p->listed++;
	if (!kept)
		return 0;
	p->power[i] = attrs.power;
	p->power_usage[i] = attrs.mw;
	if (attrs.has_mw)
		p->mw_mask |= 1U << i;
	snprintf(p->names[i], CPUIDLE_NAME_LEN, "%.*s", CPUIDLE_NAME_LEN - 1, name);
	snprintf(st->name, CPUIDLE_NAME_LEN, "%.*s", CPUIDLE_NAME_LEN - 1, name);
	st->exit_latency = st->exit_latency_ns / NSEC_PER_USEC;
	st->target_residency = st->target_residency_ns / NSEC_PER_USEC;
	if (st->flags & CPUIDLE_FLAG_OFF)
		p->off_mask |= 1U << i;
	if (i && st->target_residency_ns < drv->states[i - 1].target_residency_ns)
		p->unsorted = true;
	drv->state_count++;
	return 0;
}

static void copy_rest(char *dst, size_t n)
{
	char *rest = strtok(NULL, "");

	snprintf(dst, n, "%s", rest ? rest : "");
}

static int parse_line(struct parse *ps, char *buf)
{
	char *key = first_token(buf);

	if (!key)
		return 0;
	if (!strcmp(key, "state"))
		return parse_state(ps);
	if (!strcmp(key, "name")) {
		copy_rest(ps->p->name, sizeof(ps->p->name));
		if (!ps->p->name[0] || strpbrk(ps->p->name, " \t/"))
			return perr(ps, "name needs one word without '/'");
		return 0;
	}
	if (!strcmp(key, "title")) {
		copy_rest(ps->p->title, sizeof(ps->p->title));
		return 0;
	}
	return perr(ps, "unknown keyword (expected name, title or state)");
}

/*
 * Powers, busy CPU = 1.  A polling state draws a busy CPU's power; power=
 * sets a state's power.  Where the table's source gives power_usage (mW)
 * for two or more halting states, their ratios hold: the shallowest of them
 * keeps the power the rule below would give it, the others scale with their
 * mW.  Every other halting state draws 0.3 if it is the shallowest, else
 * half of the state above (the halving rule).
 */
static void set_powers(struct platform *p)
{
	int n = p->drv.state_count, anchor = -1, i;
	double prev = 0;

	for (i = 0; i < n; i++) {
		bool poll = p->drv.states[i].flags & CPUIDLE_FLAG_POLLING;

		if (p->power[i]) {
			p->power_from[i] = POWER_FROM_FILE;
		} else if (poll) {
			p->power[i] = 1.0;
			p->power_from[i] = POWER_FROM_POLL;
		} else if (anchor >= 0 && p->mw_mask >> i & 1) {
			p->power[i] = p->power_usage[anchor] ?
				      p->power[anchor] * p->power_usage[i] /
				      p->power_usage[anchor] : 0;
			p->power_from[i] = POWER_FROM_SOURCE;
		} else {
			p->power[i] = i && prev < 1.0 ? prev / 2 : 0.3;
			p->power_from[i] = POWER_FROM_HALVING;
		}
		if (anchor < 0 && p->mw_mask >> i & 1) {
			anchor = i;
			if (p->power_from[i] == POWER_FROM_HALVING)
				p->power_from[i] = POWER_FROM_SOURCE;
		}
		prev = p->power[i];
	}
}

/*
 * The energy of idle periods.  A period in state i whose wakeup comes D ns
 * after the entry costs E(i) + p(i) * D, then its exit latency x(i) at the
 * exit power P(i): a fixed part K(i) = E(i) + P(i) * x(i) plus p(i) * D.
 * The kernel defines the target residency as the time in the state,
 * entry included and exit not, from which on the state saves more than the
 * state above it: K(i) + p(i) * res(i) = K(i-1) + p(i-1) * res(i).  That
 * fixes K(i), state by state from K(0) = P(0) * x(0).
 *
 * K(i) is split as the physics allow.  A CPU waking up draws what the
 * shallowest halting state draws (P), so that waking early costs at least
 * what waking at once does; the rest of K(i) is the entry energy E(i).
 * Where that would need E(i) < 0 (an exit latency long for its residency:
 * the table says the state pays off sooner than an exit at P allows) the
 * exit draws less, K(i) / x(i), but never less than the state itself,
 * p(i).  Only below that is the table's residency not reachable: K(i) is
 * then p(i) * x(i), and the state breaks even later than the table says
 * (platform_break_even(), listed in the report's tables.tsv).
 */
static void set_costs(struct platform *p)
{
	const struct cpuidle_state *st = p->drv.states;
	double wake = 1.0, k = 0, t;
	int i;

	for (i = 0; i < p->drv.state_count; i++) {
		if (!(st[i].flags & CPUIDLE_FLAG_POLLING)) {
			wake = p->power[i];
			break;
		}
	}
	for (i = 0; i < p->drv.state_count; i++) {
		double x = (double)st[i].exit_latency_ns;

		t = i ? k + (p->power[i - 1] - p->power[i]) *
			    (double)st[i].target_residency_ns : wake * x;
		if (t >= wake * x) {
			p->exit_power[i] = wake;
			p->overhead[i] = t - wake * x;
		} else if (t >= p->power[i] * x) {
			p->exit_power[i] = t / x;
			p->overhead[i] = 0;
		} else {
			p->exit_power[i] = p->power[i];
			p->overhead[i] = 0;
		}
		k = p->overhead[i] + p->exit_power[i] * x;
	}
}

void platform_finish(struct platform *p)
{
	set_powers(p);
	set_costs(p);
	p->drv.name = p->name;
}

/* K(i) of set_costs(). */
static double fixed_cost(const struct platform *p, int i)
{
	return p->overhead[i] +
	       p->exit_power[i] * (double)p->drv.states[i].exit_latency_ns;
}

/*
 * The time in state @i (ns, from the entry to the wakeup) from which on the
 * model has it cheaper than state @i - 1: its target residency wherever
 * set_costs() could honour it; INFINITY if it never is.
 */
double platform_break_even(const struct platform *p, int i)
{
	double dp = p->power[i - 1] - p->power[i];
	double dk = fixed_cost(p, i) - fixed_cost(p, i - 1);

	if (dp <= 0)
		return dk < 0 ? 0 : INFINITY;
	return dk > 0 ? dk / dp : 0;
}

/*
 * Where the table's powers come from, for the report: "source" (every
 * halting state's from the source's power_usage), "partial" (some),
 * "file" (power= on some state, none from the source), "halving".
 */
const char *platform_power_kind(const struct platform *p)
{
	int i, halting = 0, source = 0, file = 0;

	for (i = 0; i < p->drv.state_count; i++) {
		if (p->power_from[i] == POWER_FROM_POLL)
			continue;
		halting++;
		source += p->power_from[i] == POWER_FROM_SOURCE;
		file += p->power_from[i] == POWER_FROM_FILE;
	}
	if (source)
		return source == halting ? "source" : "partial";
	return file ? "file" : "halving";
}

/* "WFI 0.3, C7 0.05, CC6 0": the powers taken from power_usage, for notes. */
void platform_power_note(const struct platform *p, char *buf, size_t n)
{
	size_t len = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < p->drv.state_count && len < n; i++) {
		if (p->power_from[i] != POWER_FROM_SOURCE)
			continue;
		len += snprintf(buf + len, n - len, "%s%s %g", len ? ", " : "",
				p->names[i], p->power[i]);
	}
}

static const char *power_from_word(char c)
{
	switch (c) {
	case POWER_FROM_POLL:
		return "polling";
	case POWER_FROM_FILE:
		return "file";
	case POWER_FROM_SOURCE:
		return "source";
	}
	return "halving";
}

/* Does the model's break-even of state @i differ from its residency? */
static bool break_even_differs(const struct platform *p, int i, double be)
{
	double res = (double)p->drv.states[i].target_residency_ns;

	return fabs(be - res) > 1e-6 * res + 1;	/* 1 ns and rounding */
}

/*
 * The energy model of every table, one line per state: where its power
 * comes from, the entry energy and exit power it gets, and its break-even
 * against the state above next to the table's target residency.
 */
void platforms_write_tsv(FILE *f, const struct platform *ps, int n)
{
	int k, i;

	fprintf(f, "table\tpowers\tstate\tname\texit_latency_us\ttarget_residency_us\tpower\tpower_from\tpower_usage_mw\tentry_energy\texit_power\tbreak_even_us\tbreak_even_vs_residency\n");
	for (k = 0; k < n; k++) {
		const struct platform *p = &ps[k];

		for (i = 0; i < p->drv.state_count; i++) {
			const struct cpuidle_state *st = &p->drv.states[i];
			double be = i ? platform_break_even(p, i) : 0;
			double res = (double)st->target_residency_ns;

			fprintf(f, "%s\t%s\t%d\t%s\t%lld\t%lld\t%.6g\t%s\t",
				p->name, platform_power_kind(p), i, p->names[i],
				(long long)st->exit_latency_ns / (long long)US,
				(long long)st->target_residency_ns / (long long)US,
				p->power[i], power_from_word(p->power_from[i]));
			if (p->mw_mask >> i & 1)
				fprintf(f, "%u", p->power_usage[i]);
			else
				fputc('-', f);
			/* entry energy in us at a busy CPU's power */
			fprintf(f, "\t%.6g\t%.6g\t", p->overhead[i] / US,
				p->exit_power[i]);
			if (!i)
				fprintf(f, "-\t-\n");
			else if (isinf(be))
				fprintf(f, "never\tnever\n");
			else if (!break_even_differs(p, i, be))
				fprintf(f, "%.6g\tsame\n", be / US);
			else
				fprintf(f, "%.6g\t%.6g\n", be / US, res > 0 ? be / res : INFINITY);
		}
	}
}

/* The source's power_usage: on two halting states at least, never rising. */
static int check_power_usage(struct parse *ps)
{
	struct platform *p = ps->p;
	int i, given = 0, last = -1;
	char msg[160];

	for (i = 0; i < p->drv.state_count; i++) {
		if (!(p->mw_mask >> i & 1))
			continue;
		given++;
		if (last >= 0 && p->power_usage[i] > p->power_usage[last]) {
			ps->line = ps->lines[i];
			snprintf(msg, sizeof(msg),
				 "power_usage %u mW of state %s is above the %u mW of %s (a deeper state must not draw more)",
				 p->power_usage[i], p->names[i], p->power_usage[last],
				 p->names[last]);
			return perr(ps, msg);
		}
		last = i;
	}
	if (given == 1) {
		ps->line = ps->lines[last];
		return perr(ps, "power_usage= on one state alone gives no ratio between states (give it for two or more, or none)");
	}
	return 0;
}

/* A deeper state drawing more than the one above makes no energy model. */
static int check_powers(struct parse *ps)
{
	struct platform *p = ps->p;
	char msg[160];
	int i;

	for (i = 1; i < p->drv.state_count; i++) {
		if (p->power[i] <= p->power[i - 1])
			continue;
		ps->line = ps->lines[i];
		snprintf(msg, sizeof(msg),
			 "power %g of state %s is above the %g of the state before it (a deeper state must not draw more)",
			 p->power[i], p->names[i], p->power[i - 1]);
		return perr(ps, msg);
	}
	return 0;
}

static void default_name(struct platform *p, const char *path)
{
	const char *base = strrchr(path, '/');
	size_t n;

	base = base ? base + 1 : path;
	n = strcspn(base, ".");
	snprintf(p->name, sizeof(p->name), "%.*s", (int)n, base);
}

int platform_load(const char *path, struct platform *p)
{
	struct parse ps = { .path = path, .p = p };
	char buf[512];
	FILE *f = fopen(path, "r");
	int rc = 0;

	memset(p, 0, sizeof(*p));
	if (!f) {
		fprintf(stderr, "idle-replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (!ps.err && !rc) {
		rc = read_line(f, buf, sizeof(buf), path, ++ps.line);
		if (!rc)
			parse_line(&ps, buf);
		else if (rc < 0)
			ps.err = 1;
	}
	fclose(f);
	if (!ps.err && !p->drv.state_count) {
		ps.line = 0;
		perr(&ps, "no states");
	}
	if (ps.err)
		return -1;
	if (!p->name[0])
		default_name(p, path);
	snprintf(p->origin, sizeof(p->origin), "%s", path);
	if (check_power_usage(&ps))
		return -1;
	platform_finish(p);
	return check_powers(&ps);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list_dir(const char *dir, char ***names)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		die("cannot open platform folder %s: %s", dir, strerror(errno));
	*names = NULL;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);

		if (len < 6 || strcmp(e->d_name + len - 5, ".plat"))
			continue;
		*names = realloc(*names, (n + 1) * sizeof(**names));
		if (!*names)
			die("out of memory");
		(*names)[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(*names, n, sizeof(**names), by_name);
	return n;
}

static bool same_table(const struct platform *a, const struct platform *b)
{
	int i;

	if (a->drv.state_count != b->drv.state_count || a->off_mask != b->off_mask)
		return false;
	for (i = 0; i < a->drv.state_count; i++) {
		const struct cpuidle_state *x = &a->drv.states[i], *y = &b->drv.states[i];

		if (x->exit_latency_ns != y->exit_latency_ns ||
		    x->target_residency_ns != y->target_residency_ns ||
		    x->flags != y->flags || a->power[i] != b->power[i])
			return false;
	}
	return true;
}

/*
 * Add @p to the corpus unless the same table is in it already (then note
 * the file on the first copy); a name taken by another table gets -2, -3...
 */
static void corpus_add(struct platform *ps, int *n, struct platform *p)
{
	const char *base = strrchr(p->origin, '/');
	char name[24];
	size_t len;
	unsigned int k = 2;
	int i;

	base = base ? base + 1 : p->origin;
	for (i = 0; i < *n; i++) {
		if (!same_table(&ps[i], p))
			continue;
		len = strlen(ps[i].dups);
		snprintf(ps[i].dups + len, sizeof(ps[i].dups) - len, "%s%s",
			 len ? " " : "", base);
		return;
	}
	snprintf(name, sizeof(name), "%.23s", p->name);
	while (platform_find(ps, *n, p->name) && k < 1000)
		snprintf(p->name, sizeof(p->name), "%.23s-%u", name, k++ % 1000);
	ps[(*n)++] = *p;
	ps[*n - 1].drv.name = ps[*n - 1].name;
}

/*
 * Every .plat file of the folders, in folder order and by file name within
 * a folder, with identical tables kept once.
 */
int platforms_load_dirs(const char *const *dirs, int ndirs,
			struct platform **out)
{
	struct platform *ps = NULL, p;
	char **names, path[1024];
	int d, i, k, n = 0, total = 0;

	for (d = 0; d < ndirs; d++) {
		k = list_dir(dirs[d], &names);
		ps = xrealloc(ps, (total + k) * sizeof(*ps));
		total += k;
		for (i = 0; i < k; i++) {
			snprintf(path, sizeof(path), "%s/%s", dirs[d], names[i]);
			if (platform_load(path, &p))
				die("%s: not a valid platform file (see above)", path);
			corpus_add(ps, &n, &p);
			free(names[i]);
		}
		free(names);
	}
	if (!n)
		die("no platform files (*.plat) in the platform folders");
	*out = ps;
	return n;
}

const struct platform *platform_find(const struct platform *ps, int n,
				     const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(ps[i].name, name))
			return &ps[i];
	return NULL;
}
