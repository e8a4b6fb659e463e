/*
 * compare.c - the compare view's state: two slots, each a schedule from
 * a source (the current schedule, a family, the optimizer's last result,
 * a schedule file) built as a plan of its own, so that the view never
 * changes the designer's plan.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pwlua.h"
#include "tui_int.h"

/* Frees slot SLOT's plan and reason. */
static void
tui_compare_empty(struct tui_compare *c, int slot)
{
	pw_plan_free(c->plan[slot]);
	c->plan[slot] = NULL;
	free(c->why[slot]);
	c->why[slot] = NULL;
}

void
tui_compare_clear(struct tui *d)
{
	tui_compare_empty(&d->compare, 0);
	tui_compare_empty(&d->compare, 1);
	free(d->compare.file);
	d->compare.file = NULL;
}

/* MSG without its leading "FILE: " (FILE may be NULL), which the
 * slot's title says already. */
static const char *
tui_compare_reason(const char *msg, const char *file)
{
	size_t n = file != NULL ? strlen(file) : 0;

	return n > 0 && strncmp(msg, file, n) == 0 &&
	    strncmp(msg + n, ": ", 2) == 0 ? msg + n + 2 : msg;
}

/* TEXT (taken) as one line, newlines joined as pw_one_line joins them;
 * returns a string the caller owns. */
static char *
tui_compare_one_line(char *text)
{
	size_t len = 2 * strlen(text) + 3;
	char *one = pw_xmalloc(len);

	pw_one_line(text, one, len);
	free(text);
	return one;
}

/* The message line while the view builds: the slots' sources, or the
 * keys that change them. */
static void
tui_compare_say(struct tui *d)
{
	char a[96], b[96];

	tui_message(d, false, "comparing %s with %s (Tab switches, Left and "
	    "Right change a slot's source, Esc closes)",
	    tui_compare_name(d, 0, a, sizeof a),
	    tui_compare_name(d, 1, b, sizeof b));
}

/* tui_family_best's progress as the view opens: which family is next
 * (a large problem takes seconds a family), and Esc stops it. */
static bool
tui_compare_building(void *arg, const struct pw_problem *p, size_t done)
{
	(void)p;
	return done == pw_nfamilies || tui_busy_stoppable(arg, "finding the "
	    "best family: %zu of %zu built, building %s (Esc stops) ...", done,
	    pw_nfamilies, pw_families[done].name);
}

unsigned
tui_compare_set(struct tui *d, int slot, int source)
{
	struct tui_compare *c = &d->compare;
	struct pw_error err;
	int rc = PW_OK;

	assert(slot == 0 || slot == 1);
	assert(source >= TUI_CMP_FILE && source < (int)pw_nfamilies);
	tui_compare_empty(c, slot);
	c->source[slot] = source;
	switch (source) {
	case TUI_CMP_CURRENT:
		/* A plan whose orders do not time keeps the last timed ones,
		 * which are not the current schedule. */
		if (pw_plan_status(d->plan, &err) != PW_OK) {
			c->why[slot] = pw_xasprintf("the edited orders do not "
			    "time (undo the edit first): %s", err.msg);
			break;
		}
		c->plan[slot] = pw_plan_copy(d->plan);
		break;
	case TUI_CMP_OPTIMIZER:
		if (d->solve.last == NULL) {
			c->why[slot] = pw_xstrdup("no optimizer result yet");
			break;
		}
		rc = pw_plan_new(pw_problem_copy(d->solve.last_problem),
		    pw_schedule_copy(d->solve.last), &c->plan[slot], &err);
		break;
	case TUI_CMP_FILE:
		if (c->file == NULL) {
			c->why[slot] = pw_xstrdup("no schedule file chosen");
			break;
		}
		/* A script would read as JSON and fail on its first line. */
		if (pwlua_is_script(c->file)) {
			c->why[slot] = pw_xstrdup("a Lua script is no schedule "
			    "file (pipewright schedule writes one)");
			break;
		}
		rc = pw_plan_read(c->file, &c->plan[slot], NULL, NULL, &err);
		break;
	default:
		/* As "f" builds it: a model split again keeps the limits. */
		tui_busy(d, "building family %s ...", pw_families[source].name);
		rc = tui_family_plan(pw_plan_problem(d->plan), source,
		    &c->plan[slot], NULL, &err);
		break;
	}
	if (rc != PW_OK)
		c->why[slot] = pw_xstrdup(tui_compare_reason(err.msg,
		    source == TUI_CMP_FILE ? c->file : NULL));
	/* A slot's title is one line (a deadlock's waits are several). */
	if (c->why[slot] != NULL)
		c->why[slot] = tui_compare_one_line(c->why[slot]);
	tui_compare_say(d);
	return TUI_DRAW_PANEL | TUI_DRAW_MESSAGE;
}

unsigned
tui_compare_open(struct tui *d)
{
	struct pw_error err;
	int best, rc = tui_family_best(pw_plan_problem(d->plan),
	    tui_compare_building, d, &best, &err);

	if (rc == PW_ERR_CANCELLED) {
		tui_message(d, false, "compare: stopped before it found the "
		    "best family (c opens it again)");
		return TUI_DRAW_MESSAGE;
	}
	tui_compare_empty(&d->compare, 0);
	tui_compare_empty(&d->compare, 1);
	tui_compare_set(d, 0, rc == PW_OK ? best : TUI_CMP_CURRENT);
	tui_compare_set(d, 1, TUI_CMP_CURRENT);
	d->compare.focus = 0;
	d->mode = TUI_MODE_COMPARE;
	return TUI_DRAW_ALL;
}

/* The sources in the order cycling visits them: the current schedule,
 * each family, the optimizer's result, the file (when one is set). */
static int
tui_compare_rank(int source)
{
	return source == TUI_CMP_CURRENT ? 0 : source >= 0 ? source + 1 :
	    source == TUI_CMP_OPTIMIZER ? (int)pw_nfamilies + 1 :
	    (int)pw_nfamilies + 2;
}

static int
tui_compare_unrank(int rank)
{
	return rank == 0 ? TUI_CMP_CURRENT : rank <= (int)pw_nfamilies ?
	    rank - 1 : rank == (int)pw_nfamilies + 1 ? TUI_CMP_OPTIMIZER :
	    TUI_CMP_FILE;
}

unsigned
tui_compare_cycle(struct tui *d, int step)
{
	int n = (int)pw_nfamilies + (d->compare.file != NULL ? 3 : 2);
	int slot = d->compare.focus, rank;

	rank = tui_compare_rank(d->compare.source[slot]) % n;
	rank = ((rank + step) % n + n) % n;
	return tui_compare_set(d, slot, tui_compare_unrank(rank));
}

const char *
tui_compare_name(const struct tui *d, int slot, char *buf, size_t len)
{
	int source = d->compare.source[slot];

	if (source == TUI_CMP_CURRENT)
		snprintf(buf, len, "current schedule");
	else if (source == TUI_CMP_OPTIMIZER)
		snprintf(buf, len, "optimizer result");
	else if (source == TUI_CMP_FILE)
		snprintf(buf, len, "file %s", d->compare.file != NULL ?
		    d->compare.file : "(none)");
	else
		snprintf(buf, len, "family %s", pw_families[source].name);
	return buf;
}
