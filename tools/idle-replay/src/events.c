// SPDX-License-Identifier: GPL-2.0
/*
 * idle-replay: the trace gate's look at a traced governor's events.
 *
 * The engine keeps with every decision what the governor's trace events
 * said during that select() call (struct event_note).  The events must tell
 * the truth about the decision: one teo_select event naming the state and
 * tick decision returned and the sleep length the governor got (or none);
 * a candidate exactly when the sleep length was queried, enabled and no
 * shallower than the state, and without one a reason that ends a selection
 * early; "intercepts" only with a state shallower than the candidate, and
 * "short-idle" never with a tick this selection stopped; and one
 * teo_update event for the state entered before, if there was one.
 */

#include "replay.h"

static const char *word(u8 i)
{
	return i < MAX_EVENT_WORDS && replay_event_words[i] ?
	       replay_event_words[i] : "?";
}

/* Whether @reason is one of the rules that end a selection early. */
static bool early_reason(const char *reason)
{
	return !strcmp(reason, "no-choice") || !strcmp(reason, "none-enabled") ||
	       !strcmp(reason, "one-enabled") || !strcmp(reason, "latency-limit");
}

/* Why the selection event of decision @d does not tell its truth, or NULL. */
static const char *select_problem(const struct decision *d)
{
	const struct event_note *e = &d->ev;
	const char *reason = word(e->reason);
	bool queried = e->sleep_length != -1;

	if (e->selects != 1)
		return e->selects ? "more than one teo_select event" :
				    "no teo_select event";
	if (e->state != d->idx || e->stop_tick != d->stop_tick)
		return "teo_select names another state or tick decision than the one returned";
	if (e->sleep_length != d->sleep_length)
		return "teo_select gives another sleep length than the governor got";
	if ((e->candidate >= 0) != queried)
		return "teo_select has a candidate without the sleep length, or the sleep length without a candidate";
	if (e->candidate < 0)
		return early_reason(reason) ? NULL :
		       "teo_select without a candidate gives a reason that needs one";
	if (e->state > e->candidate || (d->disabled >> e->candidate) & 1)
		return "teo_select has a state deeper than the candidate, or a disabled candidate";
	if (!strcmp(reason, "intercepts") && e->state >= e->candidate)
		return "intercepts without a state shallower than the candidate";
	if (!strcmp(reason, "short-idle") && e->stop_tick &&
	    !d->tick_stopped)
		return "short-idle with the tick stopped by this selection";
	return NULL;
}

/* Why the events of decision @d do not tell its truth, or NULL. */
static const char *event_problem(const struct decision *d)
{
	const struct event_note *e = &d->ev;
	const char *problem = select_problem(d);

	if (problem)
		return problem;
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
