// SPDX-License-Identifier: GPL-2.0
/*
 * idle-replay: run cpuidle governors on simulated idle timelines.
 *
 * The governors are compiled from their kernel sources against the shim
 * (see ../shim) and register themselves before main() runs.
 */

#include <errno.h>
#include <stdlib.h>

#include "replay.h"
#include "cli.h"
#include "report.h"

static const char usage[] =
"usage: idle-replay COMMAND [options]\n"
"\n"
"  list                          governors, platforms, scenarios\n"
"  run (--scenario NAME | --trace FILE) [--platform NAME|FILE] [--gov L]...\n"
"                                metrics of one timeline, oracle first\n"
"  report --out DIR [--gov L]... [--scenario NAME|FAMILY]\n"
"                                the Markdown report, results.tsv, plot data\n"
"  check [--diff A,B] [--scenario S] [--platform P]\n"
"                                differential check and regression gate\n"
"  fuzz [--decisions N] [--seed S] [--gov L]... [--must-pass L,...]\n"
"                                randomized contract check\n"
"  validate FILE...              parse platform (.plat) or trace files\n"
"  convert [--hz N] INPUT OUTPUT perf script / trace-cmd report -> trace\n"
"\n"
"common option: --data DIR (platform files; default: the built-in folder)\n";

static int rank(const char *label)
{
	static const char *const order[] = { "oracle", "teo", "teo-6.12", "menu-6.12" };
	int i;

	for (i = 0; i < 4; i++)
		if (!strcmp(label, order[i]))
			return i;
	return 4;
}

static int by_rank(const void *a, const void *b)
{
	const struct gov_entry *x = a, *y = b;
	int d = rank(x->label) - rank(y->label);

	return d ? d : strcmp(x->label, y->label);
}

static int cmd_list(int argc, char **argv)
{
	struct cli c = cli_parse(argc, argv, "data");
	struct scenario *sc;
	struct platform *ps;
	int ns = scenarios_build(&sc), np = cli_platforms(&c, &ps), i, j;

	printf("governors:");
	for (i = 0; i < replay_ngovs; i++)
		printf(" %s", replay_govs[i].label);
	printf("\nplatforms:\n");
	for (i = 0; i < np; i++) {
		printf("  %-10s %-32s", ps[i].name, ps[i].title);
		for (j = 0; j < ps[i].drv.state_count; j++)
			printf(" %s %lld/%lld", ps[i].names[j],
			       (long long)ps[i].drv.states[j].exit_latency_ns / 1000,
			       (long long)ps[i].drv.states[j].target_residency_ns / 1000);
		printf("\n");
	}
	printf("scenarios:\n");
	for (i = 0; i < ns; i++)
		printf("  %-3s %-24s %-10s HZ=%-4d %2d CPU  %s\n", sc[i].family,
		       sc[i].name, sc[i].platform, sc[i].hz, sc[i].ncpu, sc[i].title);
	return 0;
}

static const struct scenario *run_scenario(const struct cli *c)
{
	struct scenario *sc, *t;
	int ns, i;

	if (c->trace) {
		t = xcalloc(1, sizeof(*t));
		if (trace_load(c->trace, t))
			exit(1);
		return t;
	}
	if (!c->scenario)
		die("run needs --scenario NAME or --trace FILE");
	ns = scenarios_build(&sc);
	for (i = 0; i < ns; i++)
		if (!strcmp(sc[i].name, c->scenario))
			return &sc[i];
	die("no scenario '%s' (see 'idle-replay list')", c->scenario);
}

static int cmd_run(int argc, char **argv)
{
	struct cli c = cli_parse(argc, argv, "data scenario trace platform gov");
	const struct scenario *s = run_scenario(&c);
	struct report rp = { 0 };
	struct result *rs;
	struct platform *ps;
	int g;

	if (!c.platform)
		c.platform = s->platform;
	if (!c.platform[0])
		die("the trace names no platform: give --platform");
	cli_platforms(&c, &ps);
	rp.gov[rp.ng++] = gov_find("oracle");
	for (g = 0; g < c.ngov; g++)
		if (strcmp(c.gov[g]->label, "oracle"))
			rp.gov[rp.ng++] = c.gov[g];
	rs = xcalloc(rp.ng, sizeof(*rs));
	run_set(s, ps, rp.gov, rp.ng, rs);
	printf("%s on %s (HZ=%d, %d CPU, %.3f s)\n\n", s->name, ps->name, s->hz,
	       s->ncpu, s->duration / 1e9);
	table_head(stdout);
	for (g = 0; g < rp.ng; g++)
		table_row(stdout, &rs[g]);
	for (g = 0; g < rp.ng; g++)
		printf("%s%s: %llu decisions, %.2e decisions/s", g ? "; " : "\n",
		       rs[g].gov, (unsigned long long)rs[g].m.decisions,
		       rs[g].m.cpu_seconds > 0 ? rs[g].m.decisions / rs[g].m.cpu_seconds : 0);
	printf("\n");
	return 0;
}

static bool is_platform_file(const char *path)
{
	size_t n = strlen(path);

	return n > 5 && !strcmp(path + n - 5, ".plat");
}

static int cmd_validate(int argc, char **argv)
{
	struct cli c = cli_parse(argc, argv, "");
	struct platform p;
	struct scenario *s = xcalloc(1, sizeof(*s));
	int i, bad = 0;

	if (!c.nargs)
		die("validate needs files");
	for (i = 0; i < c.nargs; i++) {
		int err = is_platform_file(c.args[i]) ? platform_load(c.args[i], &p) :
			  trace_load(c.args[i], s);

		if (!err)
			printf("%s: ok\n", c.args[i]);
		bad |= err;
	}
	return bad ? 1 : 0;
}

static int cmd_convert(int argc, char **argv)
{
	struct cli c = cli_parse(argc, argv, "hz");
	char tmp[1024];
	FILE *in, *out;
	int err;

	if (c.nargs != 2)
		die("convert needs INPUT and OUTPUT ('-' for standard input)");
	in = strcmp(c.args[0], "-") ? fopen(c.args[0], "r") : stdin;
	if (!in)
		die("%s: %s", c.args[0], strerror(errno));
	snprintf(tmp, sizeof(tmp), "%s.tmp", c.args[1]);
	out = fopen(tmp, "w");
	if (!out)
		die("cannot write %s: %s", tmp, strerror(errno));
	err = trace_convert(in, c.args[0], out, c.hz ? c.hz : 250);
	if (fclose(out) || err) {
		remove(tmp);
		return 1;
	}
	if (rename(tmp, c.args[1]))
		die("cannot write %s: %s", c.args[1], strerror(errno));
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{ "list", cmd_list }, { "run", cmd_run }, { "report", cmd_report },
	{ "check", cmd_check }, { "fuzz", cmd_fuzz },
	{ "validate", cmd_validate }, { "convert", cmd_convert },
};

int main(int argc, char **argv)
{
	size_t i;

	replay_register_governor(oracle_governor(), "oracle");
	qsort(replay_govs, replay_ngovs, sizeof(*replay_govs), by_rank);
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	for (i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 2, argv + 2);
	fprintf(stderr, "idle-replay: unknown command '%s'\n%s", argv[1], usage);
	return 2;
}
