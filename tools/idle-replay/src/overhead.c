// SPDX-License-Identifier: GPL-2.0
/*
 * idle-replay: governor overhead, ns per select() + reflect(), measured
 * side by side in one run.  Each governor first runs a few scenarios in the
 * engine, which records every call with the answers the kernel calls gave;
 * the recording is then played back to the governor alone in a tight loop
 * (the kernel calls answer from the record), rounds of all governors taking
 * turns; the fastest round counts, as interference only slows a round down.  A governor that does nothing calls the same playback: its time is
 * the loop's own cost and is subtracted.  Informational only: wall-clock
 * numbers vary with the machine and its load, and never gate anything.
 */

#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "replay.h"
#include "cli.h"

/* A mix of busy, idle, IO and server timelines, on their own platforms. */
static const char *const bench_scenarios[] = {
	"s2-desktop-idle", "s3-pingpong-2cpu-w100", "s4-fio-nvme",
	"s6-pipe-130us", "s6-timer-300us", "s8-server-mix", "x-qos-disable",
};

struct bench {
	const struct gov_entry *g;
	struct call_rec rec[ARRAY_SIZE(bench_scenarios)];
	const struct platform *plat[ARRAY_SIZE(bench_scenarios)];
	int hz[ARRAY_SIZE(bench_scenarios)];
	double *ns, *null_ns;	/* per round: the governor, the null one */
	u64 calls;
	u64 sleep_calls;	/* tick_nohz_get_sleep_length() while recording */
	u64 mismatches;		/* playback decided otherwise than recorded */
};

static int null_select(struct cpuidle_driver *drv, struct cpuidle_device *dev,
		       bool *stop_tick)
{
	return (int)(local_clock() & 0) + (tick_nohz_tick_stopped() ? 0 : 0);
}

static void null_reflect(struct cpuidle_device *dev, int index)
{
	(void)tick_nohz_idle_got_tick();
}

static struct cpuidle_governor null_gov = {
	.name = "null", .select = null_select, .reflect = null_reflect,
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/*
 * Play the record @r back to @gov on fresh devices; the elapsed ns.  With
 * @mismatch, count the selections that differ from the record.
 */
static double play(struct cpuidle_governor *gov, const struct call_rec *r,
		   const struct platform *p, int hz, u64 *mismatch)
{
	static struct cpuidle_device dev[MAX_CPUS];
	struct cpuidle_driver drv = p->drv;
	double t0;
	size_t i;
	int cpu, k;
	bool stop;

	replay_tick_nsec = (NSEC_PER_SEC + hz / 2) / hz;
	for (cpu = 0; cpu < MAX_CPUS; cpu++) {
		memset(&dev[cpu], 0, sizeof(dev[cpu]));
		dev[cpu].cpu = cpu;
		dev[cpu].enabled = dev[cpu].registered = 1;
		dev[cpu].last_state_idx = -1;
		replay_playback = &(struct call){ .cpu = (s8)cpu };
		if (gov->enable)
			gov->enable(&drv, &dev[cpu]);
	}
	t0 = now_ns();
	for (i = 0; i < r->n; i++) {
		const struct call *c = &r->c[i];
		struct cpuidle_device *d = &dev[(int)c->cpu];

		d->last_residency_ns = c->last_residency;
		d->poll_time_limit = c->poll_limit_hit;
		for (k = 0; k < drv.state_count; k++)
			d->states_usage[k].disable = c->disabled >> k & 1;
		replay_playback = c;
		replay_playback_reflect = false;
		stop = true;
		k = gov->select(&drv, d, &stop);
		if (mismatch && k != c->idx)
			(*mismatch)++;
		if (!c->reflected)
			continue;
		replay_playback_reflect = true;
		d->poll_time_limit = c->poll_at_reflect;
		if (gov->reflect)
			gov->reflect(d, c->idx);
		d->last_state_idx = c->idx;
	}
	t0 = now_ns() - t0;
	replay_playback = NULL;
	return t0;
}

static void record(struct bench *b, struct scenario *sc, int ns,
		   const struct platform *ps, int np)
{
	size_t i;
	int s;

	for (i = 0; i < ARRAY_SIZE(bench_scenarios); i++) {
		struct run_opts o = { .rec = &b->rec[i] };
		struct metrics *m = xcalloc(1, sizeof(*m));

		for (s = 0; s < ns && strcmp(sc[s].name, bench_scenarios[i]); s++)
			;
		if (s == ns)
			die("overhead: no scenario %s", bench_scenarios[i]);
		b->plat[i] = platform_find(ps, np, sc[s].platform);
		if (!b->plat[i])
			die("overhead: no platform %s", sc[s].platform);
		b->hz[i] = sc[s].hz;
		run_one(&sc[s], b->plat[i], b->g, &o, m);
		b->calls += b->rec[i].n;
		b->sleep_calls += m->sleep_calls;
		free(m);
	}
}

static double round_of(struct bench *b, struct cpuidle_governor *gov, u64 *mis)
{
	double t = 0;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bench_scenarios); i++)
		t += play(gov, &b->rec[i], b->plat[i], b->hz[i], mis);
	return t;
}

/*
 * The governor's measured ns per call plus its sleep-length calls at the
 * price costs.conf charges for each: what one selection costs the idle
 * path, the query included.
 */
static double with_sleep_length(const struct bench *b)
{
	if (!b->calls)
		return NAN;
	return b->ns[0] + (double)b->sleep_calls * replay_sleep_length_ns / b->calls;
}

/* The numbers of the table above, one row per governor, for programs. */
static void overhead_tsv(const char *path, const struct bench *b, int n,
			 double ref_ns)
{
	struct output *o = output_open(path);
	FILE *f = output_file(o);
	int g;

	fprintf(f, "governor\tcalls\tns_per_call\tvs_mainline_teo\tplayback_faithful\tsleep_length_calls_per_select\tns_with_sleep_length\tloop_ns_per_call\n");
	for (g = 0; g < n; g++) {
		fprintf(f, "%s\t%llu\t", b[g].g->label, (unsigned long long)b[g].calls);
		tsv_num(f, b[g].ns[0], 3);
		fputc('\t', f);
		tsv_num(f, ref_ns > 0 ? b[g].ns[0] / ref_ns : NAN, 4);
		fprintf(f, "\t%s\t", b[g].mismatches ? "no" : "yes");
		tsv_num(f, b[g].calls ? (double)b[g].sleep_calls / b[g].calls : NAN, 4);
		fputc('\t', f);
		tsv_num(f, with_sleep_length(&b[g]), 3);
		fputc('\t', f);
		tsv_num(f, b[0].null_ns[0], 3);
		fputc('\n', f);
	}
	output_close(o);
}

int cmd_overhead(int argc, char **argv)
{
	struct cli c = cli_parse(argc, argv, "data gov rounds tsv");
	int rounds = c.rounds ? (int)c.rounds : 40, ns, np, g, k, n = 0;
	const struct gov_entry *ref = gov_by_role(ROLE_MAINLINE, "teo");
	struct bench *b = xcalloc(MAX_GOVS + 1, sizeof(*b));
	struct scenario *sc;
	struct platform *ps;
	double ref_ns = 0;
	size_t i;

	ns = scenarios_build(&sc);
	np = cli_platforms(&c, &ps);
	for (g = 0; g < c.ngov; g++)
		if (c.gov[g]->role != ROLE_ORACLE)
			b[n++].g = c.gov[g];
	if (!n)
		die("overhead: no governor to measure");
	for (g = 0; g < n; g++) {
		record(&b[g], sc, ns, ps, np);
		round_of(&b[g], b[g].g->gov, &b[g].mismatches);
		b[g].ns = xcalloc(2 * rounds, sizeof(double));
		b[g].null_ns = b[g].ns + rounds;
	}
	for (k = 0; k < rounds; k++) {
		for (g = 0; g < n; g++) {
			b[g].ns[k] = round_of(&b[g], b[g].g->gov, NULL);
			b[g].null_ns[k] = round_of(&b[g], &null_gov, NULL);
		}
	}
	for (g = 0; g < n; g++) {
		/* The fastest round: interference only slows a round down. */
		b[g].ns[0] = (vmin(b[g].ns, rounds) -
			      vmin(b[g].null_ns, rounds)) / b[g].calls;
		b[g].null_ns[0] = vmin(b[g].null_ns, rounds) / b[g].calls;
		if (b[g].g == ref)
			ref_ns = b[g].ns[0];
	}
	printf("governor overhead: ns per select() + reflect(), -O2, fastest of %d rounds, each governor's own recorded calls on %zu scenarios; informational, never a gate\n\n",
	       rounds, ARRAY_SIZE(bench_scenarios));
	printf("| governor | calls | ns per call | vs %s | playback faithful | sleep-length calls per select | ns with the sleep length |\n|---|---:|---:|---:|---|---:|---:|\n",
	       ref ? ref->label : "(no mainline teo)");
	for (g = 0; g < n; g++) {
		double net = b[g].ns[0];

		printf("| %s | %llu | %.1f | ", b[g].g->label,
		       (unsigned long long)b[g].calls, net);
		if (ref_ns > 0)
			printf("x%.2f", net / ref_ns);
		else
			printf("-");
		printf(" | %s | %.3f | %.1f |\n", b[g].mismatches ? "NO" : "yes",
		       b[g].calls ? (double)b[g].sleep_calls / b[g].calls : 0,
		       with_sleep_length(&b[g]));
	}
	printf("\nloop and playback cost alone (subtracted): %.1f ns per call\n",
	       b[0].null_ns[0]);
	printf("the sleep length is answered from the record: \"ns per call\" leaves out tick_nohz_get_sleep_length() itself; \"ns with the sleep length\" adds its calls at the %llu ns each that costs.conf charges\n",
	       (unsigned long long)replay_sleep_length_ns);
	if (c.tsv)
		overhead_tsv(c.tsv, b, n, ref_ns);
	for (g = 0; g < n; g++) {
		for (i = 0; i < ARRAY_SIZE(bench_scenarios); i++)
			free(b[g].rec[i].c);
		free(b[g].ns);
	}
	free(b);
	free(ps);
	scenarios_free(sc, ns);
	return 0;
}
