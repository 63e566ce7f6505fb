// SPDX-License-Identifier: GPL-2.0
/* idle-replay: error handling, random numbers and distributions. */

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "replay.h"

void die(const char *fmt, ...)
{
	va_list ap;

	fputs("idle-replay: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		die("out of memory");
	return p;
}

void *xrealloc(void *p, size_t size)
{
	p = realloc(p, size ? size : 1);
	if (!p)
		die("out of memory");
	return p;
}

/* splitmix64: small, fast and good enough for workload generation. */
u64 rng_next(struct rng *r)
{
	u64 z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void rng_seed(struct rng *r, u64 seed, u64 salt)
{
	r->s = seed * 0x2545f4914f6cdd1dULL + salt;
	rng_next(r);
}

u64 rng_below(struct rng *r, u64 n)
{
	return n ? rng_next(r) % n : 0;
}

double rng_unit(struct rng *r)
{
	return (rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

static u64 uniform(struct rng *r, u64 lo, u64 hi)
{
	return hi > lo ? lo + rng_below(r, hi - lo + 1) : lo;
}

u64 rng_loguni(struct rng *r, u64 lo, u64 hi)
{
	double l = log((double)(lo ? lo : 1)), h = log((double)(hi ? hi : 1));

	return (u64)exp(l + (h - l) * rng_unit(r));
}

u64 dist_draw(const struct dist *d, struct rng *r)
{
	switch (d->kind) {
	case D_CONST:
		return d->a;
	case D_UNIFORM:
		return uniform(r, d->a, d->b);
	case D_EXP:
		return d->a + (u64)(-log(1.0 - rng_unit(r)) * (double)d->b);
	case D_LOGUNI:
		return rng_loguni(r, d->a, d->b);
	case D_BIMODAL:
		if (rng_below(r, 100) < d->pct)
			return uniform(r, d->a, d->b);
		return uniform(r, d->c, d->d);
	}
	return d->a;
}

/* Cut the line end off @buf; its first word, NULL for blank and # lines. */
char *first_token(char *buf)
{
	char *tok;

	buf[strcspn(buf, "\r\n")] = 0;
	tok = strtok(buf, " \t");
	return tok && tok[0] != '#' ? tok : NULL;
}

/*
 * Read one line of a text file into @buf (@n bytes).  0: a line, 1: end of
 * file, -1: an error already printed as "PATH:LINE: reason" (a line too
 * long, or binary data: a NUL byte or another control character).
 */
int read_line(FILE *f, char *buf, size_t n, const char *path, int line)
{
	static char *raw;
	static size_t cap;
	ssize_t len = getline(&raw, &cap, f);
	ssize_t i;

	if (len < 0) {
		free(raw);
		raw = NULL;
		cap = 0;
		return 1;
	}
	for (i = 0; i < len; i++) {
		unsigned char ch = raw[i];

		if (ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') {
			fprintf(stderr, "idle-replay: %s:%d: binary data (byte 0x%02x at column %zd), not a text file\n",
				path, line, ch, i + 1);
			return -1;
		}
	}
	if ((size_t)len >= n) {
		fprintf(stderr, "idle-replay: %s:%d: line too long (%zd characters, at most %zu)\n",
			path, line, len, n - 2);
		return -1;
	}
	memcpy(buf, raw, len + 1);
	return 0;
}

/*
 * Feed every line of the text file @path, read into @buf (@n bytes), to
 * @fn with its number, until the end, an error of read_line() or a
 * non-zero return of @fn.  0 when every line was taken, -1 otherwise
 * (the reason printed).
 */
int read_lines(const char *path, char *buf, size_t n,
	       int (*fn)(const char *path, int line, char *buf, void *ctx),
	       void *ctx)
{
	FILE *f = fopen(path, "r");
	int line = 0, rc = 0;

	if (!f) {
		fprintf(stderr, "idle-replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (!rc) {
		rc = read_line(f, buf, n, path, ++line);
		if (!rc)
			rc = fn(path, line, buf, ctx);
	}
	fclose(f);
	return rc < 0 ? -1 : 0;
}

/*
 * A plain decimal number in 0..@max: digits only, no sign, no leading zero
 * (so neither "010" nor "0x10" can be read as octal or hex).  0 or -1.
 */
int parse_decimal(const char *tok, unsigned long long max,
		  unsigned long long *v)
{
	unsigned long long x = 0;
	const char *p;

	if (!tok || !*tok || (tok[0] == '0' && tok[1]))
		return -1;
	for (p = tok; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		unsigned long long d = (unsigned long long)(*p - '0');

		if (x > max / 10 || d > max - x * 10)
			return -1;
		x = x * 10 + d;
	}
	*v = x;
	return 0;
}

/* The smallest and the largest of @n values (n > 0). */
double vmin(const double *v, int n)
{
	double m = v[0];
	int i;

	for (i = 1; i < n; i++)
		m = v[i] < m ? v[i] : m;
	return m;
}

double vmax(const double *v, int n)
{
	double m = v[0];
	int i;

	for (i = 1; i < n; i++)
		m = v[i] > m ? v[i] : m;
	return m;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of the finite values of @v; NAN if there is none. */
double vmedian(const double *v, int n)
{
	double *t = xcalloc(n, sizeof(*t)), m;
	int i, k = 0;

	for (i = 0; i < n; i++)
		if (isfinite(v[i]))
			t[k++] = v[i];
	qsort(t, k, sizeof(*t), by_value);
	m = !k ? NAN : k % 2 ? t[k / 2] : (t[k / 2 - 1] + t[k / 2]) / 2;
	free(t);
	return m;
}
