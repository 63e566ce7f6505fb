// SPDX-License-Identifier: GPL-2.0
/* idle-replay: error handling, random numbers and distributions. */

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>

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
