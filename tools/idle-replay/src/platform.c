// SPDX-License-Identifier: GPL-2.0
/*
 * idle-replay: idle-state tables (platform files) and their energy model.
 *
 *   name rk3399
 *   title Arm RK3399
 *   # state NAME EXIT_LATENCY_US TARGET_RESIDENCY_US [poll] [power=P]
 *   state WFI 1 1
 *   state cpu-sleep 370 900
 */

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>

#include "replay.h"

struct parse {
	const char *path;
	int line;
	struct platform *p;
	int err;
};

static int perr(struct parse *ps, const char *what)
{
	fprintf(stderr, "idle-replay: %s:%d: %s\n", ps->path, ps->line, what);
	ps->err = 1;
	return -1;
}

/* A whole number of microseconds, 0..UINT_MAX. */
static int parse_us(struct parse *ps, const char *tok, const char *what,
		    s64 *ns)
{
	char *end, msg[96];
	unsigned long long v;

	if (!tok) {
		snprintf(msg, sizeof(msg), "truncated line: %s missing", what);
		return perr(ps, msg);
	}
	if (tok[0] == '-') {
		snprintf(msg, sizeof(msg), "negative %s '%s'", what, tok);
		return perr(ps, msg);
	}
	errno = 0;
	v = strtoull(tok, &end, 10);
	if (*end || end == tok || errno || v > UINT_MAX) {
		snprintf(msg, sizeof(msg),
			 "%s '%s' is not a number of microseconds in 0..%u",
			 what, tok, UINT_MAX);
		return perr(ps, msg);
	}
	*ns = (s64)v * NSEC_PER_USEC;
	return 0;
}

static int parse_flags(struct parse *ps, int i, char *tok)
{
	struct cpuidle_state *st = &ps->p->drv.states[i];
	char *end;

	for (; tok; tok = strtok(NULL, " \t")) {
		if (!strcmp(tok, "poll")) {
			if (i)
				return perr(ps, "only state 0 may poll");
			st->flags |= CPUIDLE_FLAG_POLLING;
		} else if (!strncmp(tok, "power=", 6)) {
			ps->p->power[i] = strtod(tok + 6, &end);
			if (*end || end == tok + 6 || !(ps->p->power[i] > 0))
				return perr(ps, "power= needs a positive number");
		} else {
			return perr(ps, "unknown state attribute (poll, power=P)");
		}
	}
	return 0;
}

static int parse_state(struct parse *ps)
{
	struct cpuidle_driver *drv = &ps->p->drv;
	int i = drv->state_count;
	struct cpuidle_state *st = &drv->states[i];
	char *name = strtok(NULL, " \t");

	if (i == CPUIDLE_STATE_MAX)
		return perr(ps, "more than CPUIDLE_STATE_MAX (10) states");
	if (!name)
		return perr(ps, "truncated line: state name missing");
	if (parse_us(ps, strtok(NULL, " \t"), "exit latency", &st->exit_latency_ns) ||
	    parse_us(ps, strtok(NULL, " \t"), "target residency",
		     &st->target_residency_ns))
		return -1;
	if (i && st->target_residency_ns < drv->states[i - 1].target_residency_ns)
		return perr(ps, "target residencies are not sorted (smaller than the previous state's)");
	snprintf(ps->p->names[i], CPUIDLE_NAME_LEN, "%s", name);
	snprintf(st->name, CPUIDLE_NAME_LEN, "%s", name);
	st->exit_latency = st->exit_latency_ns / NSEC_PER_USEC;
	st->target_residency = st->target_residency_ns / NSEC_PER_USEC;
	if (parse_flags(ps, i, strtok(NULL, " \t")))
		return -1;
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
 * first halting state 0.3, every deeper state half of the one above.  The
 * entry cost makes each state's target residency its break-even time
 * against the state just above it: e(i) = e(i-1) + (p(i-1) - p(i)) * res(i).
 */
void platform_finish(struct platform *p)
{
	struct cpuidle_driver *drv = &p->drv;
	double prev = 0;
	int i;

	for (i = 0; i < drv->state_count; i++) {
		if (!p->power[i])
			p->power[i] = drv->states[i].flags & CPUIDLE_FLAG_POLLING ?
				      1.0 : i && prev < 1.0 ? prev / 2 : 0.3;
		prev = p->power[i];
		p->entry_cost[i] = i ? p->entry_cost[i - 1] +
			(p->power[i - 1] - p->power[i]) *
			(double)drv->states[i].target_residency_ns : 0;
	}
	drv->name = p->name;
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

	memset(p, 0, sizeof(*p));
	if (!f) {
		fprintf(stderr, "idle-replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (!ps.err && fgets(buf, sizeof(buf), f)) {
		ps.line++;
		if (!strchr(buf, '\n') && !feof(f))
			perr(&ps, "line too long");
		else
			parse_line(&ps, buf);
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
	platform_finish(p);
	return 0;
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

int platforms_load_dir(const char *dir, struct platform **out)
{
	char **names, path[1024];
	int i, n = list_dir(dir, &names);
	struct platform *ps = xcalloc(n, sizeof(*ps));

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (platform_load(path, &ps[i]))
			die("bad platform file");
		free(names[i]);
	}
	free(names);
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
