// SPDX-License-Identifier: GPL-2.0
/* idle-replay: option parsing shared by the commands. */

#include <stdlib.h>

#include "replay.h"
#include "cli.h"

#ifndef REPLAY_DATA_DIR
#define REPLAY_DATA_DIR "platforms"
#endif

static bool allowed_opt(const char *allowed, const char *opt)
{
	size_t n = strlen(opt);
	const char *p = allowed;

	while ((p = strstr(p, opt))) {
		if ((p == allowed || p[-1] == ' ') && (!p[n] || p[n] == ' '))
			return true;
		p += n;
	}
	return false;
}

static u64 num_opt(const char *opt, const char *v)
{
	unsigned long long x;

	if (parse_decimal(v, ~0ULL, &x))
		die("--%s wants a decimal number, got '%s'", opt, v);
	return x;
}

static void add_gov(struct cli *c, const char *label)
{
	const struct gov_entry *g = gov_find(label);

	if (!g)
		die("unknown governor '%s' (see 'idle-replay list')", label);
	for (int i = 0; i < c->ngov; i++)
		if (c->gov[i] == g)
			die("--gov %s given twice", label);
	if (c->ngov == MAX_GOVS)
		die("too many --gov options");
	c->gov[c->ngov++] = g;
}

static const struct {
	const char *name;
	size_t off;
} text_opts[] = {
	{ "out", offsetof(struct cli, out) },
	{ "platform", offsetof(struct cli, platform) },
	{ "trace", offsetof(struct cli, trace) },
	{ "must-pass", offsetof(struct cli, must_pass) },
	{ "diff", offsetof(struct cli, diff) },
	{ "gates", offsetof(struct cli, gates) },
	{ "intended", offsetof(struct cli, intended) },
	{ "kunit", offsetof(struct cli, kunit) },
	{ "known-misses", offsetof(struct cli, known) },
	{ "draft-misses", offsetof(struct cli, draft) },
	{ "ours", offsetof(struct cli, ours) },
	{ "mutants", offsetof(struct cli, mutants) },
	{ "json", offsetof(struct cli, json) },
	{ "tsv", offsetof(struct cli, tsv) },
};

static void set_opt(struct cli *c, const char *opt, const char *v)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(text_opts); i++) {
		if (!strcmp(opt, text_opts[i].name)) {
			*(const char **)((char *)c + text_opts[i].off) = v;
			return;
		}
	}
	if (!strcmp(opt, "data")) {
		if (c->ndata == MAX_DATA_DIRS)
			die("more than %d --data folders", MAX_DATA_DIRS);
		c->data[c->ndata++] = v;
	} else if (!strcmp(opt, "scenario")) {
		if (c->nscenario == MAX_SCENARIO_OPTS)
			die("more than %d --scenario options", MAX_SCENARIO_OPTS);
		c->scenario[c->nscenario++] = v;
	} else if (!strcmp(opt, "decisions"))
		c->decisions = num_opt(opt, v);
	else if (!strcmp(opt, "seed"))
		c->seed = num_opt(opt, v);
	else if (!strcmp(opt, "jobs"))
		c->jobs = num_opt(opt, v);
	else if (!strcmp(opt, "rounds"))
		c->rounds = num_opt(opt, v);
	else if (!strcmp(opt, "hz"))
		c->hz = (int)num_opt(opt, v);
	else if (!strcmp(opt, "gov"))
		add_gov(c, v);
	else
		die("option --%s is not implemented", opt);
}

struct cli cli_parse(int argc, char **argv, const char *allowed)
{
	struct cli c = { .seed = 1, .jobs = 1 };
	int i;

	for (i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (strncmp(a, "--", 2)) {
			if (c.nargs == 16)
				die("too many arguments");
			c.args[c.nargs++] = argv[i];
			continue;
		}
		if (!allowed_opt(allowed, a + 2))
			die("option %s is not known here (allowed: %s)", a,
			    *allowed ? allowed : "none");
		if (!strcmp(a, "--targets")) {
			c.targets = true;
			continue;
		}
		if (!strcmp(a, "--per-state")) {
			c.per_state = true;
			continue;
		}
		if (!strcmp(a, "--events")) {
			c.events = true;
			continue;
		}
		if (i + 1 == argc)
			die("option %s needs a value", a);
		set_opt(&c, a + 2, argv[++i]);
	}
	/*
	 * By default every governor but the twin and the mutants, which only
	 * the trace gate and the intended-differences gate use.
	 */
	if (!c.ngov)
		for (i = 0; i < replay_ngovs; i++)
			if (replay_govs[i].role != ROLE_TWIN &&
			    replay_govs[i].role != ROLE_MUTANT)
				c.gov[c.ngov++] = &replay_govs[i];
	if (!c.ndata)
		c.data[c.ndata++] = REPLAY_DATA_DIR;
	if (!c.jobs || c.jobs > 64)
		die("--jobs wants 1..64");
	return c;
}

bool cli_listed(const char *list, const char *label)
{
	size_t n = strlen(label);
	const char *p = list;

	if (!list)
		return false;
	while ((p = strstr(p, label))) {
		if ((p == list || p[-1] == ',') && (!p[n] || p[n] == ','))
			return true;
		p += n;
	}
	return false;
}

/* All platforms of the data folders, or the one named/given by --platform. */
int cli_platforms(const struct cli *c, struct platform **out)
{
	struct platform *all;
	const struct platform *p;
	int n = platforms_load_dirs(c->data, c->ndata, &all);

	if (!c->platform) {
		*out = all;
		return n;
	}
	*out = xcalloc(1, sizeof(**out));
	p = platform_find(all, n, c->platform);
	if (p) {
		**out = *p;
		(*out)->drv.name = (*out)->name;
	} else if (strchr(c->platform, '/') || strstr(c->platform, ".plat")) {
		if (platform_load(c->platform, *out))
			die("--platform %s: not a valid platform file (see above)",
			    c->platform);
	} else {
		die("no platform '%s' (see 'idle-replay list'; a file needs a '/' or .plat)",
		    c->platform);
	}
	free(all);
	return 1;
}

static bool names_scenario(const char *name, const struct scenario *s)
{
	return !strcmp(name, s->name) || !strcmp(name, s->family);
}

/* Whether a --scenario names @s or its family (every one without). */
bool cli_scenario_wanted(const struct cli *c, const struct scenario *s)
{
	int i;

	for (i = 0; i < c->nscenario; i++)
		if (names_scenario(c->scenario[i], s))
			return true;
	return !c->nscenario;
}

/* Whether @name names one of the @n scenarios @sc or its family. */
static bool names_any(const char *name, const struct scenario *sc, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (names_scenario(name, &sc[i]))
			return true;
	return false;
}

/*
 * The scenarios the --scenario options select, the union of what each
 * names (all without one); one that names nothing is an error.
 */
int cli_scenarios(const struct cli *c, struct scenario **out)
{
	struct scenario *all, *sel;
	int n = scenarios_build(&all), i, k = 0;

	for (i = 0; i < c->nscenario; i++)
		if (!names_any(c->scenario[i], all, n))
			die("no scenario or family '%s' (see 'idle-replay list')",
			    c->scenario[i]);
	sel = xcalloc(n, sizeof(*sel));
	for (i = 0; i < n; i++) {
		if (cli_scenario_wanted(c, &all[i])) {
			sel[k++] = all[i];
			all[i].ctl = NULL;
		}
	}
	scenarios_free(all, n);
	*out = sel;
	return k;
}
