// SPDX-License-Identifier: GPL-2.0
/*
 * idle-replay: machine-readable output.  What the lab computes goes out as
 * TSV or JSON written with plain fprintf, so that no other program has to
 * parse the display text.  A file is written aside and moved into place
 * when complete: a failure leaves no half-written file behind.  A number
 * the lab did not compute (not a finite value) is "-" in TSV and null in
 * JSON, never a made-up 0.
 */

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "replay.h"
#include "run.h"

struct output {
	FILE *f;
	char path[1024], tmp[1040];
};

/* Open @path for writing, aside; output_close() moves it into place. */
struct output *output_open(const char *path)
{
	struct output *o = xcalloc(1, sizeof(*o));

	if (snprintf(o->path, sizeof(o->path), "%s", path) >= (int)sizeof(o->path))
		die("%s: the path is too long", path);
	snprintf(o->tmp, sizeof(o->tmp), "%s.tmp", path);
	o->f = fopen(o->tmp, "w");
	if (!o->f)
		die("cannot write %s: %s", o->tmp, strerror(errno));
	return o;
}

FILE *output_file(struct output *o)
{
	return o->f;
}

void output_close(struct output *o)
{
	bool bad = ferror(o->f);

	bad |= fclose(o->f) != 0;
	if (bad) {
		remove(o->tmp);
		die("cannot write %s: %s", o->tmp, strerror(errno));
	}
	if (rename(o->tmp, o->path)) {
		remove(o->tmp);
		die("cannot write %s: %s", o->path, strerror(errno));
	}
	free(o);
}

/* A text field: tabs and line ends would split the row, so they become spaces. */
void tsv_text(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s, f);
}

/* A number with @decimals decimals, "-" when it was not computed. */
void tsv_num(FILE *f, double v, int decimals)
{
	if (isfinite(v))
		fprintf(f, "%.*f", decimals, v);
	else
		fputc('-', f);
}

void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

/* Enough digits to give back the double the lab computed. */
void json_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.17g", v);
	else
		fputs("null", f);
}

/* --- run --json ------------------------------------------------------------ */

static void json_states(FILE *f, const struct platform *p, const struct result *r)
{
	int i;

	fputs("[", f);
	for (i = 0; i < p->drv.state_count; i++) {
		fprintf(f, "%s\n\t\t\t{ \"index\": %d, \"name\": ", i ? "," : "", i);
		json_str(f, p->names[i]);
		fprintf(f, ", \"usage\": %llu, \"time_us\": %llu, \"above\": %llu, \"below\": %llu }",
			(unsigned long long)r->usage[i],
			(unsigned long long)(r->time_ns[i] / 1000),
			(unsigned long long)r->above_n[i],
			(unsigned long long)r->below_n[i]);
	}
	fputs("\n\t\t]", f);
}

static void json_field(FILE *f, const char *name, double v)
{
	fprintf(f, ",\n\t\t\"%s\": ", name);
	json_num(f, v);
}

/*
 * One run of the governors of @c on scenario 0 and platform 0 as one JSON
 * object, the oracle first: what `run` prints, with each state's counters
 * (what --per-state prints) summed over the CPUs.
 */
void run_json(FILE *f, const struct corpus *c, const struct result *rs)
{
	const struct scenario *s = &c->sc[0];
	const struct platform *p = &c->ps[0];
	double secs = (double)s->duration / SEC;
	int g;

	fputs("{\n\t\"scenario\": ", f);
	json_str(f, s->name);
	fputs(",\n\t\"platform\": ", f);
	json_str(f, p->name);
	fprintf(f, ",\n\t\"hz\": %d,\n\t\"cpus\": %d,\n\t\"duration_s\": ",
		s->hz, s->ncpu);
	json_num(f, secs);
	fprintf(f, ",\n\t\"closed\": %s,\n\t\"governors\": [",
		s->closed ? "true" : "false");
	for (g = 0; g < c->ng; g++) {
		const struct result *r = &rs[g];

		fprintf(f, "%s\n\t{\n\t\t\"label\": ", g ? "," : "");
		json_str(f, c->gov[g]->label);
		fputs(",\n\t\t\"role\": ", f);
		json_str(f, gov_role_name(c->gov[g]->role));
		fprintf(f, ",\n\t\t\"decisions\": %llu", (unsigned long long)r->decisions);
		json_field(f, "energy_pct", r->energy_rel);
		fprintf(f, ",\n\t\t\"work_items\": %llu", (unsigned long long)r->items);
		json_field(f, "work_per_s", (double)r->items / secs);
		json_field(f, "work_pct", r->work_rel);
		json_field(f, "work_pct_best_baseline", r->work_base);
		json_field(f, "work_pct_oracle", r->work_oracle);
		json_field(f, "miss_pct", r->miss);
		json_field(f, "above_pct", r->above);
		json_field(f, "below_pct", r->below);
		json_field(f, "lat_mean_us", r->wakeups ? r->lat_mean : NAN);
		json_field(f, "lat_p99_us", r->wakeups ? r->lat_p99 : NAN);
		fputs(",\n\t\t\"states\": ", f);
		json_states(f, p, r);
		fputs("\n\t}", f);
	}
	fputs("\n\t]\n}\n", f);
}
