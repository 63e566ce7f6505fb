// SPDX-License-Identifier: GPL-2.0
/*
 * idle-replay: the trace gate's look at a traced governor's events.
 *
 * The engine keeps with every decision what the governor's trace events
 * said during that select() call (struct event_note).  The events must tell
 * the truth about the decision: one teo_select event naming the state and
 * tick decision returned and the sleep length the governor got (or none),
 * with the state no deeper than the candidate and the candidate no deeper
 * than the deepest enabled state; an intercept walk that picked a state
 * shallower than the candidate with the sleep length known; and one
 * teo_update event for the state entered before, if there was one.
 */

#include "replay.h"

static const char *word(u8 i)
{
	return i < MAX_EVENT_WORDS && replay_event_words[i] ?
	       replay_event_words[i] : "?";
}

/* Why the events of decision @d do not tell its truth, or NULL. */
static const char *event_problem(const struct decision *d)
{
	const struct event_note *e = &d->ev;

	if (e->selects != 1)
		return e->selects ? "more than one teo_select event" :
				    "no teo_select event";
	if (e->state != d->idx || e->stop_tick != d->stop_tick)
		return "teo_select names another state or tick decision than the one returned";
	if (e->sleep_length != d->sleep_length)
		return "teo_select gives another sleep length than the governor got";
	if (e->deepest >= 0 &&
	    (e->state > e->candidate || e->candidate > e->deepest))
		return "teo_select has state > candidate or candidate > deepest";
	if (!strcmp(word(e->reason), "intercepts-walk") &&
	    (e->state >= e->candidate || e->sleep_length == -1))
		return "intercepts-walk without a state shallower than the candidate, or without the sleep length";
	if (e->updates != (d->last_state >= 0))
		return e->updates > 1 ? "more than one teo_update event" :
		       e->updates ? "a teo_update event with no state entered before" :
				    "no teo_update event for the state entered before";
	if (e->updates && e->update_state != d->last_state)
		return "teo_update names another state than the one entered";
	return NULL;
}

void events_check(struct event_stats *st, const char *what,
		  const struct decision_log *l)
{
	const char *problem;
	size_t i;

	for (i = 0; i < l->n; i++) {
		const struct decision *d = &l->d[i];

		st->decisions++;
		if (d->ev.selects)
			st->reasons[d->ev.reason]++;
		if (d->ev.updates)
			st->kinds[d->ev.kind]++;
		problem = event_problem(d);
		if (!problem)
			continue;
		if (!st->inconsistent++)
			snprintf(st->first, sizeof(st->first),
				 "%s, decision %zu (cpu %d, state %d, stop_tick %d): %s",
				 what, i, d->cpu, d->idx, d->stop_tick, problem);
	}
}

/* "word count (share)" for every word counted in @counts. */
static void print_shares(FILE *f, const char *title, const u64 *counts)
{
	u64 total = 0;
	int i;

	for (i = 0; i < MAX_EVENT_WORDS; i++)
		total += counts[i];
	fprintf(f, "  %s:", title);
	for (i = 0; i < MAX_EVENT_WORDS; i++)
		if (counts[i])
			fprintf(f, " %s %llu (%.1f %%)", word((u8)i),
				(unsigned long long)counts[i],
				100.0 * counts[i] / (total ? total : 1));
	fprintf(f, "%s\n", total ? "" : " none");
}

void events_print(FILE *f, const char *label, const struct event_stats *st)
{
	fprintf(f, "events of %s: %llu decisions, %llu inconsistent with their events\n",
		label, (unsigned long long)st->decisions,
		(unsigned long long)st->inconsistent);
	print_shares(f, "teo_select reasons", st->reasons);
	print_shares(f, "teo_update kinds", st->kinds);
	if (st->inconsistent)
		fprintf(f, "  first: %s\n", st->first);
}
