/*
 * prompt.c - the input line: a question, what the user types, and what
 * each kind of question does with the answer.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pwlua.h"
#include "tui_int.h"

unsigned
tui_prompt_open(struct tui *d, enum tui_prompt_kind kind,
    const char *question, const char *text)
{
	struct tui_prompt *pr = &d->prompt;

	if (d->mode != TUI_MODE_PROMPT)
		pr->back = d->mode;
	pr->kind = kind;
	pr->then_quit = false;
	pr->refused = false;
	snprintf(pr->question, sizeof pr->question, "%s", question);
	snprintf(pr->text, sizeof pr->text, "%s", text);
	pr->len = strlen(pr->text);
	d->mode = TUI_MODE_PROMPT;
	return TUI_DRAW_MESSAGE | TUI_DRAW_PANEL;
}

int
tui_prompt_type(struct tui *d, char *text, size_t *len, size_t cap, int key)
{
	if (key == KEY_BACKSPACE || key == 127 || key == '\b') {
		/* Back over a whole UTF-8 character. */
		while (*len > 0 && ((unsigned char)text[--*len] & 0xc0) == 0x80)
			;
		text[*len] = '\0';
		return 1;
	}
	if (key == TUI_KEY_CTRL('u')) {
		/* Ctrl-U, as in a shell: the whole line goes. */
		*len = 0;
		text[0] = '\0';
		return 1;
	}
	if (key < ' ' || key > 0xff || key == 127)
		return 0;
	if (*len + 1 >= cap) {
		tui_message(d, true, "the line holds %zu bytes: the key is not "
		    "taken (Ctrl-U clears it)", cap - 1);
		return -1;
	}
	text[(*len)++] = (char)key;
	text[*len] = '\0';
	return 1;
}

void
tui_prompt_close(struct tui *d)
{
	d->mode = d->prompt.back;
}

/* A device number: the op nearest in time to the selection there. */
static unsigned
tui_prompt_goto(struct tui *d, const char *text)
{
	const struct pw_problem *p = pw_plan_problem(d->plan);
	struct pw_op op;
	int dev;
	double t;

	/* "d5", as the lanes label it, or "5". */
	if (!pw_parse_int(text + (text[0] == 'd' || text[0] == 'D'), 0,
	    p->devices - 1, &dev)) {
		tui_message(d, true, "go to: \"%s\" is no device (0 to %d)",
		    text, p->devices - 1);
		return TUI_DRAW_MESSAGE;
	}
	t = d->has_sel ? pw_plan_timing(d->plan)->start[pw_op_index(p,
	    d->sel)] : d->view.t0;
	if (!tui_op_near(d, dev, t, &op)) {
		tui_message(d, true, "go to: device %d runs no op", dev);
		return TUI_DRAW_MESSAGE;
	}
	tui_select(d, op);
	tui_message(d, false, "device %d", dev);
	return TUI_DRAW_TIMELINE | TUI_DRAW_DETAILS | TUI_DRAW_MESSAGE;
}

static unsigned
tui_prompt_find(struct tui *d, const char *text)
{
	struct pw_op op, found;
	struct pw_error err;
	char name[48], bw[96];

	/* X is the timeline's glyph of a fused backward, BW (only before
	 * its parenthesis: else the error would quote what was not typed). */
	if ((text[0] == 'X' || text[0] == 'x') && text[1] == '(') {
		snprintf(bw, sizeof bw, "BW%s", text + 1);
		text = bw;
	}
	if (pw_op_parse(text, pw_plan_problem(d->plan), &op, &err) != PW_OK) {
		tui_message(d, true, "find: %s", err.msg);
		return TUI_DRAW_MESSAGE;
	}
	if (!tui_op_find(d, op, &found)) {
		tui_message(d, true, "find: the schedule has no %s",
		    pw_op_name(name, sizeof name, op));
		return TUI_DRAW_MESSAGE;
	}
	tui_select(d, found);
	tui_message(d, false, "%s", pw_op_name(name, sizeof name, found));
	return TUI_DRAW_TIMELINE | TUI_DRAW_DETAILS | TUI_DRAW_MESSAGE;
}

bool
tui_same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	char *wa, *wb;
	bool same;

	if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	wa = pw_path_written(a);
	wb = pw_path_written(b);
	same = wa != NULL && wb != NULL ? strcmp(wa, wb) == 0 :
	    strcmp(a, b) == 0;
	free(wa);
	free(wb);
	return same;
}

/* Whether PATH is the recovery file: this session's, or the one its
 * next change writes. */
static bool
tui_prompt_is_recovery(const struct tui *d, const char *path)
{
	char *next = tui_recover_name(d, d->save_path != NULL ?
	    d->save_path : d->path);
	bool is = tui_same_file(path, next) ||
	    (d->recover_path != NULL &&
	    tui_same_file(path, d->recover_path));

	free(next);
	return is;
}

/* Whether PATH is a file the designer reads or writes as a schedule: its
 * problem or schedule file, the script last opened in the editor, the
 * compare view's file, the file s saves to, the recovery file. */
static bool
tui_prompt_in_use(const struct tui *d, const char *path)
{
	const char *const used[] = { d->path, d->edit_path, d->compare.file,
	    d->save_path };
	size_t i;

	for (i = 0; i < sizeof used / sizeof used[0]; i++)
		if (used[i] != NULL && tui_same_file(path, used[i]))
			return true;
	return tui_prompt_is_recovery(d, path);
}

/* Why writing PATH needs the user's yes first, or NULL: it would replace
 * a file this action has not written (WRITTEN, the file it last wrote,
 * or NULL; SEEN, that file as it was then), or one another program
 * changed since.  lstat: a link is a file too; a directory, a FIFO or a
 * device is no file to replace (the write says why it is refused). */
static const char *
tui_prompt_replace_why(const char *path, const char *written,
    const struct tui_seen *seen)
{
	struct stat st;

	if (lstat(path, &st) != 0 || (stat(path, &st) == 0 &&
	    !S_ISREG(st.st_mode)))
		return NULL;
	if (written == NULL || !tui_same_file(path, written))
		return "exists";
	return tui_seen_changed(seen, written) ?
	    "changed on disk since it was read" : NULL;
}

/* Asks before ANSWER, the answer to prompt KIND naming PATH, replaces
 * that file, which WHY says ("exists"); y comes back to KIND's action
 * with REPLACE true. */
static unsigned
tui_prompt_replace_open(struct tui *d, enum tui_prompt_kind kind,
    const char *answer, const char *path, const char *why, bool then_quit)
{
	char question[sizeof d->prompt.question];
	char *shown = pw_escape(path);

	snprintf(question, sizeof question, "%.100s %s: replace it? (y / n)",
	    shown, why);
	free(shown);
	tui_prompt_open(d, TUI_PROMPT_REPLACE, question, "");
	d->prompt.replacing = kind;
	d->prompt.then_quit = then_quit;
	snprintf(d->prompt.answer, sizeof d->prompt.answer, "%s", answer);
	return TUI_DRAW_MESSAGE;
}

/* REPLACE: the user said yes to writing over an existing file. */
static unsigned
tui_prompt_save_as(struct tui *d, const char *text, bool then_quit,
    bool replace)
{
	struct pw_error err;
	const char *why;

	/* Schedule JSON would replace the problem the designer loaded. */
	if (pwlua_is_script(text)) {
		tui_message(d, true, "%s: a schedule is saved as JSON: name a "
		    ".json file", text);
		return TUI_DRAW_MESSAGE;
	}
	if (d->path != NULL && !d->path_is_schedule &&
	    tui_same_file(text, d->path)) {
		tui_message(d, true, "%s is the problem file: choose another "
		    "name", text);
		return TUI_DRAW_MESSAGE;
	}
	if (tui_prompt_is_recovery(d, text)) {
		tui_message(d, true, "%s is the recovery file, which the next "
		    "change replaces: choose another name", text);
		return TUI_DRAW_MESSAGE;
	}
	if (!replace && (why = tui_prompt_replace_why(text, d->save_path,
	    &d->save_seen)) != NULL)
		return tui_prompt_replace_open(d, TUI_PROMPT_SAVE_AS, text,
		    text, why, then_quit);
	if (tui_save(d, text, &err) != PW_OK) {
		tui_message(d, true, "%s", err.msg);
		return TUI_DRAW_MESSAGE;
	}
	tui_message(d, false, "saved %s", text);
	return TUI_DRAW_MESSAGE | TUI_DRAW_HEADER |
	    (then_quit ? TUI_DO_QUIT : 0);
}

unsigned
tui_prompt_save(struct tui *d)
{
	return tui_prompt_save_as(d, d->save_path, false, false);
}

/* The export registry's format names, "chrome, svg, ...", into BUF. */
static char *
tui_prompt_formats(char *buf, size_t len)
{
	size_t i, used = 0;

	buf[0] = '\0';
	for (i = 0; i < pw_nexport_formats && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
		    i > 0 ? ", " : "", pw_export_formats[i].name);
	return buf;
}

unsigned
tui_prompt_export_open(struct tui *d)
{
	char question[sizeof d->prompt.question], names[128];

	snprintf(question, sizeof question, "export to FORMAT FILE (%s): ",
	    tui_prompt_formats(names, sizeof names));
	return tui_prompt_open(d, TUI_PROMPT_EXPORT, question,
	    "svg schedule.svg");
}

/* TEXT is "FORMAT FILE"; REPLACE: the user said yes to writing over
 * an existing file. */
static unsigned
tui_prompt_export(struct tui *d, const char *text, bool replace)
{
	const struct pw_export_format *fmt;
	struct pw_outfile out;
	struct pw_error err;
	char name[64], names[128];
	size_t n = strcspn(text, " ");
	const char *path = text + n + strspn(text + n, " "), *refused, *why;
	size_t dropped;
	int rc;

	snprintf(name, sizeof name, "%.*s", (int)n, text);
	if ((fmt = pw_export_find(name)) == NULL) {
		tui_message(d, true, "export: unknown format '%s' (%s)", name,
		    tui_prompt_formats(names, sizeof names));
		return TUI_DRAW_MESSAGE;
	}
	if (*path == '\0') {
		tui_message(d, true, "export: %s to which file? (FORMAT, a "
		    "blank, FILE)", fmt->name);
		return TUI_DRAW_MESSAGE;
	}
	if (pw_plan_status(d->plan, NULL) != PW_OK) {
		tui_message(d, true, "export: not exported: the edited orders"
		    " do not time (undo the edit first)");
		return TUI_DRAW_MESSAGE;
	}
	/* The screen is the designer's, and the files it reads or saves
	 * to stay; a FIFO or a device would hold it. */
	if (pw_path_special(path)) {
		tui_message(d, true, "export: %s: %s", path, TUI_SPECIAL_WHY);
		return TUI_DRAW_MESSAGE;
	}
	refused = strcmp(path, "-") == 0 ? "the screen" :
	    tui_prompt_in_use(d, path) ? "a file the designer reads or "
	    "saves to" : pwlua_is_script(path) ? "a script's name" : NULL;
	if (refused != NULL) {
		tui_message(d, true, "export: %s is %s: choose another name",
		    path, refused);
		return TUI_DRAW_MESSAGE;
	}
	if (!replace && (why = tui_prompt_replace_why(path, d->export_path,
	    &d->export_seen)) != NULL)
		return tui_prompt_replace_open(d, TUI_PROMPT_EXPORT, text,
		    path, why, false);
	rc = pw_outfile_open(&out, path, &err);
	if (rc == PW_OK) {
		rc = fmt->write(out.fp, pw_plan_problem(d->plan),
		    pw_plan_timed(d->plan), pw_plan_timing(d->plan),
		    pw_plan_metrics(d->plan), NULL, &err);
		if (rc == PW_OK)
			rc = pw_outfile_commit(&out, &err);
		else
			pw_outfile_abort(&out);
	}
	if (rc != PW_OK) {
		tui_message(d, true, "export: %s", err.msg);
		return TUI_DRAW_MESSAGE;
	}
	free(d->export_path);
	d->export_path = pw_xstrdup(path);
	tui_seen_note(&d->export_seen, path);
	if (fmt->drops_transfers &&
	    (dropped = pw_torch_dropped(pw_plan_timed(d->plan))) > 0)
		tui_message(d, true, "exported %s (%s), which has no offload or "
		    "reload: %zu transfer%s left out (%s-offload keeps them)",
		    path, fmt->name, dropped, dropped == 1 ? "" : "s",
		    fmt->name);
	else
		tui_message(d, false, "exported %s (%s)", path, fmt->name);
	return TUI_DRAW_MESSAGE;
}

/* Writes the problem to the new file TEXT, which becomes its file, and
 * edits it. */
static unsigned
tui_prompt_new_file(struct tui *d, const char *text)
{
	const struct pw_problem *p = pw_plan_problem(d->plan);
	struct pw_error err;
	bool lua = pwlua_is_script(text);
	struct stat st;
	int rc;

	if (!lua && !pw_path_ends(text, ".json")) {
		tui_message(d, true, "%s: name a .lua or a .json file", text);
		return TUI_DRAW_MESSAGE;
	}
	/* lstat: a dangling link names a file too (writing would make it). */
	if (lstat(text, &st) == 0) {
		tui_message(d, true, "%s exists: choose another name", text);
		return TUI_DRAW_MESSAGE;
	}
	rc = lua ? pwlua_problem_write(text, p, &err) :
	    pw_problem_write(text, p, &err);
	if (rc != PW_OK) {
		tui_message(d, true, "%s", err.msg);
		return TUI_DRAW_MESSAGE;
	}
	free(d->path);
	d->path = pw_xstrdup(text);
	d->path_is_schedule = false;
	free(d->edit_path);
	d->edit_path = pw_xstrdup(text);
	free(d->edit_before);
	d->edit_before = NULL;
	tui_message(d, false, "wrote %s", text);
	return TUI_DO_EDITOR | TUI_DRAW_ALL;
}

static unsigned
tui_prompt_compare_file(struct tui *d, const char *text)
{
	free(d->compare.file);
	d->compare.file = pw_xstrdup(text);
	return tui_compare_set(d, d->compare.focus, TUI_CMP_FILE) |
	    TUI_DRAW_PANEL;
}

/* The quit prompt answers at the first key. */
static unsigned
tui_prompt_quit(struct tui *d, int key)
{
	const char *now;

	switch (key) {
	case 's':
		tui_solve_settle(d);
		if (d->save_path == NULL) {
			tui_prompt_open(d, TUI_PROMPT_SAVE_AS,
			    "save the schedule as: ", "schedule.json");
			d->prompt.then_quit = true;
			return TUI_DRAW_MESSAGE;
		}
		tui_prompt_close(d);
		return tui_prompt_save_as(d, d->save_path, true, false);
	case 'q':
		/* Asked before the optimizer ended: its result is a change
		 * now, which q would drop unasked (a q typed ahead of the
		 * question's new text included). */
		if ((now = tui_quit_question(d)) != NULL &&
		    now != d->prompt.asked) {
			/* The question holds the message line: the why goes
			 * in it. */
			tui_prompt_open(d, TUI_PROMPT_QUIT, "", "");
			snprintf(d->prompt.question, sizeof d->prompt.question,
			    "the optimizer ended: its result is not saved; %s",
			    now);
			d->prompt.asked = now;
			return TUI_DRAW_MESSAGE;
		}
		tui_prompt_close(d);
		return TUI_DO_QUIT;
	case TUI_KEY_ESC:
		tui_prompt_close(d);
		tui_message(d, false, "not quitting");
		return TUI_DRAW_MESSAGE;
	default:
		return 0;
	}
}

/* The restore prompt: y restores the recovery file, n sets it aside. */
static unsigned
tui_prompt_restore(struct tui *d, int key)
{
	if (key == 'y' || key == 'Y') {
		tui_prompt_close(d);
		return tui_recover_restore(d) | TUI_DRAW_MESSAGE;
	}
	if (key == 'n' || key == 'N' || key == TUI_KEY_ESC) {
		tui_prompt_close(d);
		return tui_recover_decline(d);
	}
	return 0;
}

/* The replace prompt: y writes what the earlier answer named, n keeps
 * the file. */
static unsigned
tui_prompt_replace(struct tui *d, int key)
{
	char answer[sizeof d->prompt.answer];
	bool then_quit = d->prompt.then_quit;

	snprintf(answer, sizeof answer, "%s", d->prompt.answer);
	if (key == 'y' || key == 'Y') {
		tui_prompt_close(d);
		return d->prompt.replacing == TUI_PROMPT_SAVE_AS ?
		    tui_prompt_save_as(d, answer, then_quit, true) :
		    tui_prompt_export(d, answer, true);
	}
	if (key == 'n' || key == 'N' || key == TUI_KEY_ESC) {
		tui_prompt_close(d);
		tui_message(d, false, "not written: the file is as it was");
		return TUI_DRAW_MESSAGE | TUI_DRAW_PANEL;
	}
	return 0;
}

/* Whether prompt KIND asks for a file name. */
static bool
tui_prompt_is_file(enum tui_prompt_kind kind)
{
	return kind == TUI_PROMPT_SAVE_AS || kind == TUI_PROMPT_EXPORT ||
	    kind == TUI_PROMPT_NEW_FILE || kind == TUI_PROMPT_COMPARE_FILE;
}

static unsigned
tui_prompt_submit(struct tui *d)
{
	char text[sizeof d->prompt.text];
	bool then_quit = d->prompt.then_quit;
	const char *s = text;
	char *shown;

	snprintf(text, sizeof text, "%s", d->prompt.text);
	tui_prompt_close(d);
	while (isspace((unsigned char)*s))
		s++;
	if (*s == '\0') {
		tui_message(d, false, "nothing entered");
		return TUI_DRAW_MESSAGE | TUI_DRAW_PANEL;
	}
	if (tui_prompt_is_file(d->prompt.kind) && strcmp(s, "-") == 0) {
		/* pw_outfile and the readers take "-" for stdout and stdin,
		 * which are the designer's screen and keyboard. */
		tui_message(d, true, "\"-\" is no file name here: the screen"
		    " is the designer's (name a file)");
		return TUI_DRAW_MESSAGE;
	}
	if (tui_prompt_is_file(d->prompt.kind) && pw_path_special(s)) {
		shown = pw_escape(s);
		tui_message(d, true, "%s: %s", shown, TUI_SPECIAL_WHY);
		free(shown);
		return TUI_DRAW_MESSAGE;
	}
	switch (d->prompt.kind) {
	case TUI_PROMPT_FIND:
		return tui_prompt_find(d, s);
	case TUI_PROMPT_GOTO:
		return tui_prompt_goto(d, s);
	case TUI_PROMPT_SAVE_AS:
		return tui_prompt_save_as(d, s, then_quit, false);
	case TUI_PROMPT_EXPORT:
		return tui_prompt_export(d, s, false);
	case TUI_PROMPT_NEW_FILE:
		return tui_prompt_new_file(d, s);
	case TUI_PROMPT_COMPARE_FILE:
		return tui_prompt_compare_file(d, s);
	case TUI_PROMPT_QUIT:
	case TUI_PROMPT_RESTORE:
	case TUI_PROMPT_REPLACE:
		break;
	}
	return 0;
}

unsigned
tui_prompt_key(struct tui *d, int key)
{
	struct tui_prompt *pr = &d->prompt;
	int typed;

	if (pr->kind == TUI_PROMPT_QUIT)
		return tui_prompt_quit(d, key);
	if (pr->kind == TUI_PROMPT_RESTORE)
		return tui_prompt_restore(d, key);
	if (pr->kind == TUI_PROMPT_REPLACE)
		return tui_prompt_replace(d, key);
	if (key == TUI_KEY_ESC) {
		tui_prompt_close(d);
		tui_message(d, false, "cancelled");
		return TUI_DRAW_MESSAGE | TUI_DRAW_PANEL;
	}
	if (key == '\n' || key == '\r' || key == KEY_ENTER)
		return tui_prompt_submit(d) | TUI_DRAW_MESSAGE;
	typed = tui_prompt_type(d, pr->text, &pr->len, sizeof pr->text, key);
	pr->refused = typed < 0;
	return typed != 0 ? TUI_DRAW_MESSAGE : 0;
}
