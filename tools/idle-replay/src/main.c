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
#include "run.h"

static const char usage[] =
"usage: idle-replay COMMAND [options]\n"
"\n"
"  list [--tsv]                  governors, platforms, scenarios (--tsv: one\n"
"                                tab-separated row per item, for programs)\n"
"  run (--scenario NAME | --trace FILE) [--platform NAME|FILE] [--gov L]...\n"
"      [--per-state] [--json FILE]\n"
"                                metrics of one timeline, oracle first; with\n"
"                                --per-state also each state's usage, time,\n"
"                                above and below, summed over the CPUs;\n"
"                                --json: all of it as one JSON object\n"
"  report --out DIR [--gov L]... [--scenario NAME|FAMILY]... [--jobs N]\n"
"         [--gates FILE] [--intended FILE --kunit FILE]\n"
"                                the Markdown report, results.tsv, plot data\n"
"  check [--gov L]... [--jobs N] [--gates FILE] [--intended FILE --kunit FILE]\n"
"        [--known-misses FILE] [--targets]\n"
"                                oracle gate, regression gate, intended\n"
"                                differences; --targets: the targets too, each\n"
"                                missed one listed in the known-misses FILE\n"
"  targets [--jobs N] [--tsv FILE]\n"
"                                the targets table; exit 1 if one is missed\n"
"  diff --diff A,B [--scenario S]... [--platform P] [--events]\n"
"                                strict decision identity of two governors;\n"
"                                --events: B is a traced build (teo-traced)\n"
"                                and its trace events must match its decisions\n"
"  fuzz [--decisions N] [--seed S] [--gov L]... [--must-pass L,...]\n"
"                                randomized contract check\n"
"  validate FILE...              parse platform (.plat), costs (.costs,\n"
"                                costs.conf) or trace files\n"
"  convert [--hz N] [--platform NAME|FILE] INPUT OUTPUT\n"
"                                perf script / trace-cmd report -> trace\n"
"                                (the table tells which states poll)\n"
"\n"
"  overhead [--gov L]... [--rounds N] [--tsv FILE]\n"
"                                ns per select+reflect of each governor\n"
"\n"
"common option: --data DIR, repeatable (platform folders; default: the\n"
"built-in folder); --platform NAME|FILE runs one table; --scenario\n"
"NAME|FAMILY runs those scenarios, repeatable (the union; run takes one)\n";

/*
 * list --tsv: one row per item, tab-separated, no header:
 *   governor LABEL ROLE SOURCE ("-" for the lab's own)
 *   platform NAME TITLE
 *   scenario NAME FAMILY open|closed
 */
static void list_tsv(const struct scenario *sc, int ns,
		     const struct platform *ps, int np)
{
	int i;

	for (i = 0; i < replay_ngovs; i++) {
		const struct gov_entry *g = &replay_govs[i];

		printf("governor\t%s\t%s\t", g->label, gov_role_name(g->role));
		tsv_text(stdout, g->builtin ? "-" : g->source);
		putchar('\n');
	}
	for (i = 0; i < np; i++) {
		printf("platform\t%s\t", ps[i].name);
		tsv_text(stdout, ps[i].title);
		putchar('\n');
	}
	for (i = 0; i < ns; i++)
		printf("scenario\t%s\t%s\t%s\n", sc[i].name, sc[i].family,
		       sc[i].closed ? "closed" : "open");
}

static void list_text(const struct scenario *sc, int ns,
		      const struct platform *ps, int np)
{
	int i, j;

	printf("governors:\n");
	for (i = 0; i < replay_ngovs; i++)
		printf("  %-14s %-9s %s\n", replay_govs[i].label,
		       gov_role_name(replay_govs[i].role), replay_govs[i].source);
	printf("platforms:\n");
	for (i = 0; i < np; i++) {
		printf("  %-16s %-32s", ps[i].name, ps[i].title);
		for (j = 0; j < ps[i].drv.state_count; j++)
			printf(" %s %lld/%lld%s", ps[i].names[j],
			       (long long)ps[i].drv.states[j].exit_latency_ns / 1000,
			       (long long)ps[i].drv.states[j].target_residency_ns / 1000,
			       ps[i].off_mask >> j & 1 ? "(off)" : "");
		printf("\n");
	}
	printf("scenarios:\n");
	for (i = 0; i < ns; i++)
		printf("  %-3s %-24s %-10s HZ=%-4d %2d CPU %-6s %s\n", sc[i].family,
		       sc[i].name, sc[i].platform, sc[i].hz, sc[i].ncpu,
		       sc[i].closed ? "closed" : "open", sc[i].title);
}

static int cmd_list(int argc, char **argv)
{
	char *rest[64];
	bool tsv = false;
	struct cli c;
	struct scenario *sc;
	struct platform *ps;
	int ns, np, i, n = 0;

	/* --tsv is a switch here, a file elsewhere: taken before the parser. */
	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--tsv"))
			tsv = true;
		else if (n < (int)ARRAY_SIZE(rest))
			rest[n++] = argv[i];
		else
			die("too many arguments");
	}
	c = cli_parse(n, rest, "data");
	ns = scenarios_build(&sc);
	np = cli_platforms(&c, &ps);
	if (tsv)
		list_tsv(sc, ns, ps, np);
	else
		list_text(sc, ns, ps, np);
	free(ps);
	scenarios_free(sc, ns);
	return 0;
}

/*
 * Each state's counters per governor, as the cpuidle core keeps them and
 * sysfs shows them (time in us), summed over the CPUs: to be set beside a
 * live kernel's.
 */
static void per_state_table(const struct corpus *c, const struct result *rs)
{
	const struct platform *p = &c->ps[0];
	int g, i;

	printf("\nper state, summed over the CPUs (time in us):\n");
	printf("  %-14s %5s %-16s %12s %14s %10s %10s\n", "governor", "state",
	       "name", "usage", "time", "above", "below");
	for (g = 0; g < c->ng; g++)
		for (i = 0; i < p->drv.state_count; i++)
			printf("  %-14s %5d %-16s %12llu %14llu %10llu %10llu\n",
			       c->gov[g]->label, i, p->names[i],
			       (unsigned long long)rs[g].usage[i],
			       (unsigned long long)(rs[g].time_ns[i] / 1000),
			       (unsigned long long)rs[g].above_n[i],
			       (unsigned long long)rs[g].below_n[i]);
}

static int cmd_run(int argc, char **argv)
{
	struct cli cl = cli_parse(argc, argv, "data scenario trace platform gov per-state json");
	struct corpus c = { 0 };
	struct result *rs;
	int g;

	c.ng = govs_always(c.gov);
	for (g = 0; g < cl.ngov; g++)
		if (!gov_always(cl.gov[g]))
			c.gov[c.ng++] = cl.gov[g];
	if (cl.trace) {
		if (cl.nscenario)
			die("run takes --scenario or --trace, not both");
		c.sc = xcalloc(1, sizeof(*c.sc));
		if (trace_load(cl.trace, c.sc))
			die("%s: not a valid trace file (see above)", cl.trace);
		c.ns = 1;
	} else if (!cl.nscenario) {
		die("run needs --scenario NAME or --trace FILE");
	} else if (cl.nscenario > 1) {
		die("run takes one --scenario (one timeline), not %d", cl.nscenario);
	} else {
		c.ns = cli_scenarios(&cl, &c.sc);
		if (c.ns != 1 || strcmp(c.sc[0].name, cl.scenario[0]))
			die("run needs one scenario, not the family '%s'", cl.scenario[0]);
	}
	if (!cl.platform)
		cl.platform = c.sc[0].platform;
	if (!cl.platform[0])
		die("the trace names no platform: give --platform");
	c.np = cli_platforms(&cl, &c.ps);
	rs = xcalloc(c.ng, sizeof(*rs));
	run_cell(&c, 0, 0, rs);
	printf("%s on %s (HZ=%d, %d CPU, %.3f s, %s loop: energy in %% of %s)\n\n",
	       c.sc[0].name, c.ps[0].name, c.sc[0].hz, c.sc[0].ncpu,
	       c.sc[0].duration / 1e9, c.sc[0].closed ? "closed" : "open",
	       c.sc[0].closed ? "the best governor" : "the oracle");
	table_head(stdout);
	for (g = 0; g < c.ng; g++)
		table_row(stdout, &c, &rs[g]);
	for (g = 0; g < c.ng; g++)
		printf("%s%s: %llu decisions, %.2e decisions/s", g ? "; " : "\n",
		       c.gov[g]->label, (unsigned long long)rs[g].decisions,
		       rs[g].cpu_seconds > 0 ? rs[g].decisions / rs[g].cpu_seconds : 0);
	printf("\n");
	if (cl.per_state)
		per_state_table(&c, rs);
	if (cl.json) {
		struct output *o = output_open(cl.json);

		run_json(output_file(o), &c, rs);
		output_close(o);
	}
	free(rs);
	free(c.ps);
	if (cl.trace) {
		trace_free(c.sc);
		free(c.sc);
	} else {
		scenarios_free(c.sc, c.ns);
	}
	return 0;
}

static bool is_platform_file(const char *path)
{
	size_t n = strlen(path);

	return n > 5 && !strcmp(path + n - 5, ".plat");
}

/* costs.conf, or FILE.costs */
static bool is_costs_file(const char *path)
{
	size_t n = strlen(path);

	return (n > 6 && !strcmp(path + n - 6, ".costs")) ||
	       (n >= 10 && !strcmp(path + n - 10, "costs.conf"));
}

static void platform_notes(const struct platform *p)
{
	if (p->listed > p->drv.state_count)
		printf("  note: %d states listed, the first %d registered (CPUIDLE_STATE_MAX, as the drivers do)\n",
		       p->listed, p->drv.state_count);
	if (p->unsorted)
		printf("  note: target residencies out of order (run as the kernel would)\n");
	if (p->off_mask)
		printf("  note: disabled by default (off): mask 0x%x\n", p->off_mask);
	if (p->mw_mask) {
		char buf[256];

		platform_power_note(p, buf, sizeof(buf));
		printf("  note: powers from power_usage (mW): %s\n", buf);
	}
}

static int cmd_validate(int argc, char **argv)
{
	struct cli c = cli_parse(argc, argv, "");
	struct platform p;
	struct scenario *s = xcalloc(1, sizeof(*s));
	int i, bad = 0, err;

	if (!c.nargs)
		die("validate needs files");
	for (i = 0; i < c.nargs; i++) {
		if (is_costs_file(c.args[i])) {
			err = costs_validate(c.args[i]);
			if (!err)
				printf("%s: ok\n", c.args[i]);
		} else if (is_platform_file(c.args[i])) {
			err = platform_load(c.args[i], &p);
			if (!err) {
				printf("%s: ok\n", c.args[i]);
				platform_notes(&p);
			}
		} else {
			err = trace_load(c.args[i], s);
			if (!err) {
				printf("%s: ok\n", c.args[i]);
				trace_free(s);
			}
		}
		bad |= err;
	}
	free(s);
	return bad ? 1 : 0;
}

static int cmd_convert(int argc, char **argv)
{
	struct cli c = cli_parse(argc, argv, "hz data platform");
	unsigned int poll_mask = 0;
	struct platform *ps;
	char tmp[1024];
	FILE *in, *out;
	int err, i;

	if (c.nargs != 2)
		die("convert needs INPUT and OUTPUT ('-' for standard input)");
	if (c.hz && c.hz != 100 && c.hz != 250 && c.hz != 300 && c.hz != 1000)
		die("--hz wants 100, 250, 300 or 1000");
	if (c.platform) {
		cli_platforms(&c, &ps);
		for (i = 0; i < ps->drv.state_count; i++)
			if (ps->drv.states[i].flags & CPUIDLE_FLAG_POLLING)
				poll_mask |= 1U << i;
		free(ps);
	}
	in = strcmp(c.args[0], "-") ? fopen(c.args[0], "r") : stdin;
	if (!in)
		die("%s: %s", c.args[0], strerror(errno));
	snprintf(tmp, sizeof(tmp), "%s.tmp", c.args[1]);
	out = fopen(tmp, "w");
	if (!out)
		die("cannot write %s: %s", tmp, strerror(errno));
	err = trace_convert(in, c.args[0], out, c.hz ? c.hz : 250, poll_mask);
	if (in != stdin)
		fclose(in);
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
	{ "check", cmd_check }, { "targets", cmd_targets },
	{ "diff", cmd_diff }, { "fuzz", cmd_fuzz },
	{ "overhead", cmd_overhead },
	{ "validate", cmd_validate }, { "convert", cmd_convert },
};

int main(int argc, char **argv)
{
	size_t i;

	govs_init();
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
