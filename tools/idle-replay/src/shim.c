// SPDX-License-Identifier: GPL-2.0
/*
 * idle-replay: the governor registry.  Each governor source registers itself
 * from its initcall (a constructor, see kapi.h) under the label the build
 * gave it; govs_init() then checks the build's list (govlist.c), gives each
 * its role and puts them in report order.
 */

#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>

#include "replay.h"

#ifndef REPLAY_DATA_DIR
#define REPLAY_DATA_DIR "platforms"
#endif
/* Next to the built-in platform folder, like gates.conf. */
#define REPLAY_COSTS REPLAY_DATA_DIR "/../costs.conf"

long replay_tick_nsec = 4000000;

struct gov_entry replay_govs[MAX_GOVS];
int replay_ngovs;

int replay_register_governor(struct cpuidle_governor *gov, const char *label)
{
	int i;

	for (i = 0; i < replay_ngovs; i++)
		if (!strcmp(replay_govs[i].label, label))
			die("governor '%s' registered twice (a source may register one governor)",
			    label);
	if (replay_ngovs == MAX_GOVS)
		die("more than %d governors (at %s); raise MAX_GOVS in replay.h", MAX_GOVS, label);
	replay_govs[replay_ngovs].label = label;
	replay_govs[replay_ngovs].gov = gov;
	replay_ngovs++;
	return 0;
}

const struct gov_entry *gov_find(const char *label)
{
	int i;

	for (i = 0; i < replay_ngovs; i++)
		if (!strcmp(replay_govs[i].label, label))
			return &replay_govs[i];
	return NULL;
}

/* The label's kind: "teo" for teo-7.3, "menu" for menu-6.12. */
static bool kind_is(const char *label, const char *kind)
{
	size_t n = strlen(kind);

	return !strncmp(label, kind, n) && (!label[n] || label[n] == '-');
}

const struct gov_entry *gov_by_role(enum gov_role role, const char *kind)
{
	int i;

	for (i = 0; i < replay_ngovs; i++)
		if (replay_govs[i].role == role &&
		    (!kind || kind_is(replay_govs[i].label, kind)))
			return &replay_govs[i];
	return NULL;
}

bool gov_is_baseline(const struct gov_entry *g)
{
	return g->role == ROLE_BASE || g->role == ROLE_MAINLINE;
}

/* The governors whose best result is the yardstick of a closed loop. */
bool gov_in_reference(const struct gov_entry *g)
{
	return g->role == ROLE_OURS || gov_is_baseline(g);
}

/*
 * The gates' own tests judge a governor built wrong on purpose as if it
 * were ours; our teo is then an extra.
 */
void gov_judge_as_ours(const char *label)
{
	struct gov_entry *g = (struct gov_entry *)gov_find(label), *o;

	if (!g || g->role == ROLE_ORACLE)
		die("--ours %s: no such governor (see 'idle-replay list')", label);
	for (o = replay_govs; o < replay_govs + replay_ngovs; o++)
		if (o->role == ROLE_OURS)
			o->role = ROLE_EXTRA;
	g->role = ROLE_OURS;
}

static const char *const role_names[NR_ROLES] = {
	[ROLE_ORACLE] = "oracle", [ROLE_OURS] = "ours",
	[ROLE_BASE] = "base", [ROLE_MAINLINE] = "mainline",
	[ROLE_EXTRA] = "extra", [ROLE_TWIN] = "twin",
	[ROLE_MUTANT] = "mutant",
};

/* The role's word, as the build's list and `list` write it. */
const char *gov_role_name(enum gov_role role)
{
	return role_names[role];
}

static enum gov_role role_of(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(role_names); i++)
		if (role_names[i] && !strcmp(role_names[i], name))
			return (enum gov_role)i;
	die("govlist: unknown role '%s'", name);
}

/* Oracle, ours, base teo and menu, mainline teo and menu, extras by name. */
static int by_rank(const void *a, const void *b)
{
	const struct gov_entry *x = a, *y = b;

	if (x->role != y->role)
		return (int)x->role - (int)y->role;
	if (x->role != ROLE_EXTRA && kind_is(x->label, "teo") != kind_is(y->label, "teo"))
		return kind_is(x->label, "teo") ? -1 : 1;
	return strcmp(x->label, y->label);
}

/* --- the governors' own cost (costs.conf) ---------------------------------- */

#define MAX_COST_LINES	64
#define MAX_COST_NS	1000000000ULL	/* 1 s per call: no cost model */

u64 replay_sleep_length_ns;

struct cost_line {
	char pattern[64];
	u64 select_ns, reflect_ns;
};

struct costs {
	const char *path;
	int line;
	bool has_sleep;
	u64 sleep_ns;
	struct cost_line l[MAX_COST_LINES];
	int n;
};

static int cerr(const struct costs *c, const char *what)
{
	fprintf(stderr, "idle-replay: %s:%d: %s\n", c->path, c->line, what);
	return -1;
}

static int cost_ns(const struct costs *c, const char *tok, const char *what,
		   u64 *out)
{
	unsigned long long v;
	char msg[160];

	if (!tok) {
		snprintf(msg, sizeof(msg), "truncated line: %s missing", what);
		return cerr(c, msg);
	}
	if (parse_decimal(tok, MAX_COST_NS, &v)) {
		snprintf(msg, sizeof(msg),
			 "%s '%.40s' is not a whole number of ns in 0..%llu",
			 what, tok, MAX_COST_NS);
		return cerr(c, msg);
	}
	*out = v;
	return 0;
}

/* Nothing but a comment may follow the fields. */
static int cost_end(const struct costs *c)
{
	const char *tok = strtok(NULL, " \t");

	return tok && tok[0] != '#' ? cerr(c, "too many fields") : 0;
}

/* call tick_nohz_get_sleep_length NS */
static int cost_call(struct costs *c)
{
	const char *name = strtok(NULL, " \t");

	if (!name)
		return cerr(c, "truncated line: call name missing");
	if (strcmp(name, "tick_nohz_get_sleep_length"))
		return cerr(c, "unknown call (the lab charges tick_nohz_get_sleep_length)");
	if (c->has_sleep)
		return cerr(c, "tick_nohz_get_sleep_length given twice");
	c->has_sleep = true;
	if (cost_ns(c, strtok(NULL, " \t"), "ns per call", &c->sleep_ns))
		return -1;
	return cost_end(c);
}

/* gov PATTERN SELECT_NS REFLECT_NS */
static int cost_gov(struct costs *c)
{
	const char *pat = strtok(NULL, " \t");
	struct cost_line *l = &c->l[c->n];
	int i;

	if (!pat)
		return cerr(c, "truncated line: governor pattern missing");
	if (strlen(pat) >= sizeof(l->pattern))
		return cerr(c, "governor pattern longer than 63 characters");
	if (!strcmp(pat, "oracle"))
		return cerr(c, "the oracle is charged nothing: it has no line");
	for (i = 0; i < c->n; i++)
		if (!strcmp(c->l[i].pattern, pat))
			return cerr(c, "governor pattern given twice (the second line would never apply)");
	if (c->n == MAX_COST_LINES)
		return cerr(c, "more than 64 governor lines");
	snprintf(l->pattern, sizeof(l->pattern), "%s", pat);
	if (cost_ns(c, strtok(NULL, " \t"), "select ns", &l->select_ns) ||
	    cost_ns(c, strtok(NULL, " \t"), "reflect ns", &l->reflect_ns) ||
	    cost_end(c))
		return -1;
	c->n++;
	return 0;
}

/* Read a costs file into @c; -1 after a "PATH:LINE: reason" line. */
static int costs_read(const char *path, struct costs *c)
{
	char buf[512], *key;
	FILE *f = fopen(path, "r");
	int rc = 0;

	memset(c, 0, sizeof(*c));
	c->path = path;
	if (!f) {
		fprintf(stderr, "idle-replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (!rc) {
		rc = read_line(f, buf, sizeof(buf), path, ++c->line);
		if (rc)
			break;
		key = first_token(buf);
		if (!key)
			continue;
		if (!strcmp(key, "call"))
			rc = cost_call(c);
		else if (!strcmp(key, "gov"))
			rc = cost_gov(c);
		else
			rc = cerr(c, "unknown keyword (expected call or gov)");
	}
	fclose(f);
	if (rc < 0)
		return -1;
	if (!c->has_sleep) {
		c->line = 0;
		return cerr(c, "no 'call tick_nohz_get_sleep_length NS' line");
	}
	return 0;
}

int costs_validate(const char *path)
{
	struct costs *c = xcalloc(1, sizeof(*c));
	int rc = costs_read(path, c);

	free(c);
	return rc;
}

/* Give every governor but the oracle the first line that matches its label. */
static void costs_apply(void)
{
	const char *path = getenv("IDLE_REPLAY_COSTS");
	struct costs *c = xcalloc(1, sizeof(*c));
	struct gov_entry *g;
	int i;

	if (!path || !*path)
		path = REPLAY_COSTS;
	if (costs_read(path, c))
		die("%s: not a valid costs file (see above)", path);
	replay_sleep_length_ns = c->sleep_ns;
	for (g = replay_govs; g < replay_govs + replay_ngovs; g++) {
		if (g->role == ROLE_ORACLE)
			continue;
		for (i = 0; i < c->n && fnmatch(c->l[i].pattern, g->label, 0); i++)
			;
		if (i == c->n)
			die("%s: no line matches governor '%s' (add one, or a last 'gov *' line)",
			    path, g->label);
		g->select_ns = c->l[i].select_ns;
		g->reflect_ns = c->l[i].reflect_ns;
	}
	free(c);
}

/* Does @g cost anything on the timeline? */
bool gov_costs_anything(const struct gov_entry *g)
{
	return g->role != ROLE_ORACLE &&
	       (g->select_ns || g->reflect_ns || replay_sleep_length_ns);
}

void govs_init(void)
{
	const struct gov_expect *e;
	struct gov_entry *g;

	replay_register_governor(oracle_governor(), "oracle");
	replay_govs[replay_ngovs - 1].role = ROLE_ORACLE;
	replay_govs[replay_ngovs - 1].source = "the lab (src/oracle.c)";
	replay_govs[replay_ngovs - 1].builtin = true;
	for (e = replay_expected_govs; e->label; e++) {
		g = (struct gov_entry *)gov_find(e->label);
		if (!g)
			die("governor '%s' (%s) registered nothing: the source has no postcore_initcall() calling cpuidle_register_governor()",
			    e->label, e->source);
		g->role = role_of(e->role);
		g->source = e->source;
	}
	for (g = replay_govs; g < replay_govs + replay_ngovs; g++)
		if (!g->source)
			die("governor '%s' is not in the build's list", g->label);
	qsort(replay_govs, replay_ngovs, sizeof(*replay_govs), by_rank);
	costs_apply();
}
