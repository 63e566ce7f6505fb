// SPDX-License-Identifier: GPL-2.0
/*
 * idle-replay: idle-state tables (platform files) and their energy model.
 *
 *   name rk3399
 *   title Arm RK3399
 *   # state NAME EXIT_LATENCY_US TARGET_RESIDENCY_US [poll] [off] [power=P]
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

/* Attributes after the numbers; @st and @power may be scratch copies. */
static int parse_flags(struct parse *ps, int i, struct cpuidle_state *st,
		       double *power, char *tok)
{
	for (; tok; tok = strtok(NULL, " \t")) {
		if (!strcmp(tok, "poll")) {
			if (i)
				return perr(ps, "only state 0 may poll");
			st->flags |= CPUIDLE_FLAG_POLLING;
		} else if (!strcmp(tok, "off")) {
			st->flags |= CPUIDLE_FLAG_OFF;
		} else if (!strncmp(tok, "power=", 6)) {
			if (parse_power(ps, tok + 6, power))
				return -1;
		} else {
			return perr(ps, "unknown state attribute (poll, off, power=P)");
		}
	}
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
	double scratch_power = 0;
	bool kept = i < CPUIDLE_STATE_MAX;
	struct cpuidle_state *st = kept ? &drv->states[i] : &scratch;
	double *power = kept ? &p->power[i] : &scratch_power;
	char *name = strtok(NULL, " \t");

	if (i == MAX_LISTED)
		return perr(ps, "more than 64 states");
	if (!name)
		return perr(ps, "truncated line: state name missing");
	/* Longer names are cut to CPUIDLE_NAME_LEN - 1, as drivers copy them. */
	if (parse_us(ps, strtok(NULL, " \t"), "exit latency", &st->exit_latency_ns) ||
	    parse_us(ps, strtok(NULL, " \t"), "target residency",
		     &st->target_residency_ns) ||
	    parse_flags(ps, i, st, power, strtok(NULL, " \t")))
		return -1;
	ps->lines[i] = ps->line;
	p->listed++;
	if (!kept)
		return 0;
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
 * Default powers: a polling state burns as much as a busy CPU (1.0), the
 * first halting state 0.3, every deeper state half of the one above.
 *
 * An idle period in state i costs an entry overhead E(i), then p(i) per ns
 * until the wakeup, then the exit latency at the exit power P: a CPU waking
 * up draws at least what the shallowest halting state draws (so that sleeping
 * through arrivals during a long exit saves nothing against waking for
 * them).  Over the span S from the entry to the resume, which the core
 * measures as last_residency_ns and the governors compare with the target
 * residency, that is A(i) + p(i) * S with A(i) = E(i) + (P - p(i)) * x(i).
 * A(i) = A(i-1) + (p(i-1) - p(i)) * res(i) makes each state's target
 * residency its break-even time against the state above, as the kernel
 * defines it; where that would need a negative entry overhead (an exit
 * latency long for its residency) E(i) is 0 and the break-even comes later.
 */
void platform_finish(struct platform *p)
{
	struct cpuidle_driver *drv = &p->drv;
	double prev = 0, a = 0;
	int i;

	p->exit_power = 1.0;
	for (i = 0; i < drv->state_count; i++) {
		if (!p->power[i])
			p->power[i] = drv->states[i].flags & CPUIDLE_FLAG_POLLING ?
				      1.0 : i && prev < 1.0 ? prev / 2 : 0.3;
		prev = p->power[i];
		if (!(drv->states[i].flags & CPUIDLE_FLAG_POLLING) && p->exit_power == 1.0)
			p->exit_power = p->power[i];
	}
	for (i = 0; i < drv->state_count; i++) {
		double x = (double)drv->states[i].exit_latency_ns;
		double extra = (p->exit_power - p->power[i]) * x;

		if (i)
			a += (p->power[i - 1] - p->power[i]) *
			     (double)drv->states[i].target_residency_ns;
		p->overhead[i] = i && a > extra ? a - extra : 0;
		a = p->overhead[i] + extra;
	}
	drv->name = p->name;
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
