/*
 * loop.c - the designer's terminal and event loop: sets the screen up
 * (locale, ASCII and monochrome modes, keys, mouse), reads keys and mouse
 * events into actions, polls the optimizer and the memory sweep at least
 * five times a second, redraws what the actions ask for, runs $EDITOR and
 * suspends on their behalf, keeps the recovery file, and restores the
 * terminal on every way out: a quit, SIGINT, SIGTERM or SIGHUP (the loop
 * ends, then the process ends by that signal) and a crash or SIGQUIT (the
 * reset sequence is written from the handler, then the signal goes on).
 */
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <curses.h>

#include "pipewright.h"
#include "plan.h"
#include "tui.h"
#include "tui_int.h"
/* After tui_int.h: its capability macros would rename that header's
 * fields. */
#include <term.h>

/* How long a key is waited for: the optimizer's and the sweep's polls
 * run at least this often (20 times a second). */
#define TUI_LOOP_TICK_MS	50
/* Esc alone, not the start of a key's sequence, after this long. */
#define TUI_LOOP_ESCDELAY_MS	25
/* The keys typed during a slow step that it keeps for the loop at most
 * (ncurses' own pushback holds more). */
#define TUI_LOOP_BUSY_KEYS	64
/* The mouse events one KEY_MOUSE hands over at most (ncurses keeps 8). */
#define TUI_LOOP_MOUSE_EVENTS	16

/* The signal that ended the loop (SIGINT, SIGTERM, SIGHUP), 0 while it
 * runs. */
static volatile sig_atomic_t tui_loop_stop;

/* What a crash handler writes to put the terminal back: the terminal's
 * own strings, gathered once the screen is up (no curses call is safe in
 * a handler), and the modes from before the screen. */
static char tui_loop_reset[512];
static size_t tui_loop_nreset;
static struct termios tui_loop_modes;
static bool tui_loop_have_modes;

/* A lost terminal (SIGHUP) stops the loop too, keeping the recovery
 * file; SIGQUIT (Ctrl-\) dumps core, as a crash does. */
static const int tui_loop_stops[] = { SIGINT, SIGTERM, SIGHUP };
static const int tui_loop_crashes[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE,
    SIGQUIT };
#define TUI_LOOP_NSTOPS	(sizeof tui_loop_stops / sizeof tui_loop_stops[0])
#define TUI_LOOP_NCRASHES \
	(sizeof tui_loop_crashes / sizeof tui_loop_crashes[0])

/* The dispositions before the designer's, put back on the way out. */
struct tui_loop_signals {
	struct sigaction stops[TUI_LOOP_NSTOPS];
	struct sigaction crashes[TUI_LOOP_NCRASHES];
};

static void
tui_loop_on_stop(int sig)
{
	tui_loop_stop = sig;
}

static void
tui_loop_on_crash(int sig)
{
	ssize_t n;

	if (tui_loop_nreset > 0)
		n = write(STDOUT_FILENO, tui_loop_reset, tui_loop_nreset);
	(void)n;
	if (tui_loop_have_modes)
		tcsetattr(STDIN_FILENO, TCSANOW, &tui_loop_modes);
	pw_outfile_fatal(sig);
}

/* Installs the stopping and the crash handlers, the dispositions before
 * in BEFORE. */
static void
tui_loop_catch(struct tui_loop_signals *before)
{
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof sa);
	/* Neither handler runs inside the other. */
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < TUI_LOOP_NSTOPS; i++)
		sigaddset(&sa.sa_mask, tui_loop_stops[i]);
	for (i = 0; i < TUI_LOOP_NCRASHES; i++)
		sigaddset(&sa.sa_mask, tui_loop_crashes[i]);
	sa.sa_handler = tui_loop_on_stop;
	for (i = 0; i < TUI_LOOP_NSTOPS; i++)
		pw_signal_catch(tui_loop_stops[i], &sa, &before->stops[i]);
	sa.sa_handler = tui_loop_on_crash;
	for (i = 0; i < TUI_LOOP_NCRASHES; i++)
		pw_signal_catch(tui_loop_crashes[i], &sa, &before->crashes[i]);
}

static void
tui_loop_uncatch(const struct tui_loop_signals *before)
{
	size_t i;

	for (i = 0; i < TUI_LOOP_NCRASHES; i++)
		sigaction(tui_loop_crashes[i], &before->crashes[i], NULL);
	for (i = 0; i < TUI_LOOP_NSTOPS; i++)
		sigaction(tui_loop_stops[i], &before->stops[i], NULL);
}

/* Appends S (a terminal's string; NULL or absent: nothing) to the crash
 * handler's reset sequence. */
static void
tui_loop_reset_add(const char *s)
{
	size_t len;

	if (s == NULL || s == (char *)-1)
		return;
	len = strlen(s);
	if (len > sizeof tui_loop_reset - tui_loop_nreset)
		return;
	memcpy(tui_loop_reset + tui_loop_nreset, s, len);
	tui_loop_nreset += len;
}

/* What endwin would undo, as the terminal spells it: attributes, the
 * cursor, the keypad, the mouse, the alternate screen. */
static void
tui_loop_reset_gather(bool mouse)
{
	char *xm;

	tui_loop_nreset = 0;
	tui_loop_reset_add(tigetstr("sgr0"));
	tui_loop_reset_add(tigetstr("cnorm"));
	tui_loop_reset_add(tigetstr("rmkx"));
	if (mouse) {
		/* ncurses' own capability for xterm's mouse modes, else
		 * xterm's plain one. */
		xm = tigetstr("XM");
		if (xm != NULL && xm != (char *)-1)
			tui_loop_reset_add(tiparm(xm, 0));
		else
			tui_loop_reset_add("\033[?1000l");
	}
	tui_loop_reset_add(tigetstr("rmcup"));
}

/* A key, or ERR after a tick with nothing typed.  While a search runs,
 * the wait is the optimizer's (a new incumbent ends it early). */
static int
tui_loop_getch(struct tui *d)
{
	int ch;

	if (!tui_solve_running(d)) {
		timeout(TUI_LOOP_TICK_MS);
		return getch();
	}
	timeout(0);
	if ((ch = getch()) != ERR)
		return ch;
	tui_solve_wait(d, TUI_LOOP_TICK_MS / 1000.0);
	return ERR;
}

/* Runs EDITOR (split into words as the shell splits it, so that
 * "code --wait" works) on PATH, passed as one argument, and waits.
 * Returns its exit status, or -1 when it could not be run or was killed.
 * Ctrl-C in the editor is the editor's: the designer ignores SIGINT and
 * SIGQUIT meanwhile, as system() does. */
static int
tui_loop_spawn(const char *editor, const char *path)
{
	struct sigaction ign, oldint, oldquit;
	pid_t pid;
	int wstatus;

	memset(&ign, 0, sizeof ign);
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGINT, &ign, &oldint);
	sigaction(SIGQUIT, &ign, &oldquit);
	pid = fork();
	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		execl("/bin/sh", "sh", "-c", "set -f; exec $1 \"$2\"", "sh",
		    editor, path, (char *)NULL);
		_exit(127);
	}
	wstatus = -1;
	if (pid > 0) {
		while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
			continue;
	}
	sigaction(SIGINT, &oldint, NULL);
	sigaction(SIGQUIT, &oldquit, NULL);
	if (pid < 0 || !WIFEXITED(wstatus))
		return -1;
	return WEXITSTATUS(wstatus);
}

/* Whether the editor left tui.edit_path holding what e found there (a
 * write of the same bytes, as vi's :wq, leaves it so). */
static bool
tui_loop_untouched(const struct tui *d)
{
	size_t n;
	char *now;
	bool same;

	if (d->edit_before == NULL ||
	    (now = tui_file_bytes(d->edit_path, &n)) == NULL)
		return false;
	same = n == d->edit_nbefore && memcmp(now, d->edit_before, n) == 0;
	free(now);
	return same;
}

/* TUI_DO_EDITOR: the screen suspended, $EDITOR (vi when unset) on
 * tui.edit_path, the screen back, then the file reloaded. */
static unsigned
tui_loop_editor(struct tui *d)
{
	const char *editor = getenv("EDITOR");
	unsigned flags = TUI_DRAW_ALL;
	char *shown;
	int status;

	if (editor == NULL || editor[0] == '\0')
		editor = "vi";
	def_prog_mode();
	endwin();
	status = tui_loop_spawn(editor, d->edit_path);
	reset_prog_mode();
	clearok(curscr, TRUE);
	if (status == 0 && tui_loop_untouched(d)) {
		/* Nothing to read again: a script would run again as one
		 * more change, and a schedule file's reload would drop the
		 * edits not saved to it. */
		tui_message(d, false, "reload %s: unchanged (the editor left "
		    "it as it was)", d->edit_path);
		/* As the state took it: a write of the same bytes moves its
		 * change time, which the next e would take for another
		 * program's. */
		tui_seen_note(&d->path_seen, d->edit_path);
		return flags;
	}
	if (status == 0) {
		/* The screen back before the reload, whose "reloading FILE
		 * ..." line (and a script's time) would be all it shows. */
		tui_draw(stdscr, d, TUI_DRAW_ALL);
		wnoutrefresh(stdscr);
		doupdate();
		return flags | tui_edit_done(d);
	}
	shown = pw_escape(editor);
	if (status < 0)
		tui_message(d, true, "the editor '%s' did not finish; %s is"
		    " not reloaded", shown, d->edit_path);
	else
		tui_message(d, true, "the editor '%s' failed (exit status %d);"
		    " %s is not reloaded", shown, status, d->edit_path);
	free(shown);
	return flags;
}

/* Ctrl-Z reaches the key table as a key instead of stopping the process
 * from the terminal driver, so that its row (and the help that lists it)
 * is what suspends, through tui_loop_suspend; the shell's modes, saved
 * before, keep the suspend character. */
static void
tui_loop_suspend_key(void)
{
	struct termios t;

	if (tcgetattr(STDIN_FILENO, &t) != 0)
		return;
	t.c_cc[VSUSP] = _POSIX_VDISABLE;
	if (tcsetattr(STDIN_FILENO, TCSANOW, &t) == 0)
		def_prog_mode();
}

/* TUI_DO_SUSPEND: the terminal as it was, the process stopped; on fg,
 * the screen again. */
static unsigned
tui_loop_suspend(void)
{
	def_prog_mode();
	endwin();
	raise(SIGTSTP);
	reset_prog_mode();
	clearok(curscr, TRUE);
	return TUI_DRAW_ALL;
}

/* The mouse events behind one KEY_MOUSE, in the order they happened.
 * ncurses reads every report already waiting into one KEY_MOUSE (a press
 * and its release, when the designer was busy as they came) and getmouse
 * hands them back newest first: taking only the first would keep the
 * release and lose the press, so the click would select nothing. */
static unsigned
tui_loop_mouse(struct tui *d)
{
	MEVENT ev[TUI_LOOP_MOUSE_EVENTS], older;
	struct tui_layout lay;
	unsigned flags = 0;
	int n = 0;

	while (n < TUI_LOOP_MOUSE_EVENTS && getmouse(&ev[n]) == OK)
		n++;
	/* Older than those that fit: dropped, as ncurses' own queue drops
	 * them, and not left to come back behind the next KEY_MOUSE. */
	while (getmouse(&older) == OK)
		;
	while (n-- > 0) {
		tui_layout(d, d->rows, d->cols, &lay);
		flags |= tui_mouse(d, &lay, ev[n].y, ev[n].x, ev[n].bstate);
		tui_layout_free(&lay);
	}
	return flags;
}

/* One key or mouse event into the state; returns what to redraw and do. */
static unsigned
tui_loop_input(struct tui *d, int ch)
{
	switch (ch) {
	case KEY_RESIZE:
		getmaxyx(stdscr, d->rows, d->cols);
		werase(stdscr);
		return TUI_DRAW_ALL;
	case KEY_MOUSE:
		return tui_loop_mouse(d);
	default:
		return tui_key(d, ch);
	}
}

/* Offers the recovery file of the designed file when a killed designer
 * left one; where another designer of the file is running, says so. */
static void
tui_loop_offer(struct tui *d)
{
	char question[sizeof d->prompt.question], when[32];
	struct stat st;
	struct tm tm;
	char *shown;

	if (d->recover_path == NULL)
		d->recover_path = tui_recover_name(d, d->path);
	if (!tui_recover_claim(d, d->recover_path)) {
		tui_message(d, true, "another designer is editing with %s: its "
		    "changes are its own, and this session writes no recovery "
		    "file while it runs (s saves)", d->recover_path);
		return;
	}
	/* A directory or a FIFO of that name is no file this designer
	 * wrote (opening a FIFO would wait for a writer). */
	if (stat(d->recover_path, &st) != 0 || !S_ISREG(st.st_mode))
		return;
	if (localtime_r(&st.st_mtime, &tm) == NULL ||
	    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm) == 0)
		strcpy(when, "at an unknown time");
	shown = pw_escape(d->recover_path);
	snprintf(question, sizeof question, "restore unsaved changes from %s"
	    " (saved %s)? y/n", shown, when);
	free(shown);
	tui_prompt_open(d, TUI_PROMPT_RESTORE, question, "");
}

/* tui.busy_draw: the message line now, before a slow step (the whole
 * screen where the terminal was resized meanwhile: a series of steps,
 * such as the families built for the compare view, may take a minute);
 * for one that can STOP, true when Esc has been typed since the last key
 * read (or a stopping signal came).  The other keys typed meanwhile, and
 * Esc where the step cannot stop, are kept for the loop in their order. */
static bool
tui_loop_busy(struct tui *d, bool stop)
{
	int kept[TUI_LOOP_BUSY_KEYS], ch;
	unsigned draw = TUI_DRAW_MESSAGE;
	size_t n = 0;
	bool esc = false;

	timeout(0);
	while (n < TUI_LOOP_BUSY_KEYS && (ch = getch()) != ERR) {
		if (ch == KEY_RESIZE)
			draw = tui_loop_input(d, ch);
		else if (stop && ch == TUI_KEY_ESC)
			esc = true;
		else
			kept[n++] = ch;
	}
	while (n > 0)
		ungetch(kept[--n]);
	tui_draw(stdscr, d, draw);
	wnoutrefresh(stdscr);
	doupdate();
	return stop && (esc || tui_loop_stop != 0);
}

/* Runs the loop until a quit (true) or a stopping signal (false);
 * *WROTE tells whether it wrote the recovery file. */
static bool
tui_loop_run(struct tui *d, bool *wrote)
{
	unsigned long seen = d->changes;
	unsigned flags = TUI_DRAW_ALL;
	int ch;

	for (;;) {
		if ((flags & TUI_DRAW_ALL) != 0) {
			tui_draw(stdscr, d, flags & TUI_DRAW_ALL);
			wnoutrefresh(stdscr);
			doupdate();
		}
		if (tui_loop_stop)
			return false;
		flags = 0;
		if ((ch = tui_loop_getch(d)) != ERR)
			flags = tui_loop_input(d, ch);
		flags |= tui_solve_tick(d);
		flags |= tui_sweep_tick(d);
		flags |= tui_planner_tick(d);
		flags |= tui_launch_tick(d);
		if ((flags & TUI_DO_QUIT) != 0)
			return true;
		if ((flags & TUI_DO_EDITOR) != 0)
			flags |= tui_loop_editor(d);
		if ((flags & TUI_DO_SUSPEND) != 0)
			flags |= tui_loop_suspend();
		if ((flags & TUI_DO_REPAINT) != 0)
			clearok(curscr, TRUE);
		if (d->changes != seen) {
			seen = d->changes;
			if (tui_unsaved(d)) {
				tui_recover_write(d);
				*wrote = true;
			} else
				/* Undone back to the file: nothing to
				 * recover. */
				tui_recover_remove(d);
			flags |= TUI_DRAW_MESSAGE;
		}
	}
}

/* Whether terminfo knows TERM: asked of setupterm, since a newterm that
 * fails keeps what it allocated. */
static bool
tui_loop_known(void)
{
	int error;

	if (setupterm(NULL, STDOUT_FILENO, &error) != OK)
		return false;
	del_curterm(cur_term);
	return true;
}

/* The screen on stdin and stdout, set up for the designer; NULL with
 * ERR set when the terminal cannot be used. */
static SCREEN *
tui_loop_screen(struct tui *d, const struct tui_options *opts,
    struct pw_error *err)
{
	const char *term = getenv("TERM"), *nocolor = getenv("NO_COLOR");
	mmask_t mask;
	SCREEN *scr;

	tui_loop_have_modes = tcgetattr(STDIN_FILENO, &tui_loop_modes) == 0;
	if (!tui_loop_known() ||
	    (scr = newterm(NULL, stdout, stdin)) == NULL) {
		pw_error_set(err, "cannot use the terminal: TERM '%s' is not"
		    " in the terminfo database", term);
		return NULL;
	}
	cbreak();
	noecho();
	nonl();
	tui_loop_suspend_key();
	keypad(stdscr, TRUE);
	curs_set(0);
	/* The user's ESCDELAY (ncurses' own variable) wins: over a slow
	 * link a key's sequence may arrive in pieces, each read as Esc. */
	if (getenv("ESCDELAY") == NULL)
		set_escdelay(TUI_LOOP_ESCDELAY_MS);
	/* Presses and releases apart (a drag is one of each), no clicks. */
	mouseinterval(0);
	mask = mousemask(BUTTON1_PRESSED | BUTTON1_RELEASED |
	    BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
	tui_loop_reset_gather(mask != 0);

	d->glyphs.ascii = opts->ascii ||
	    strcmp(nl_langinfo(CODESET), "UTF-8") != 0;
	d->glyphs.mono = opts->mono || (nocolor != NULL && nocolor[0] != '\0')
	    || strcmp(term, "vt100") == 0 || !has_colors();
	tui_colors_init(&d->glyphs);
	getmaxyx(stdscr, d->rows, d->cols);
	tui_view_fit(d);
	return scr;
}

int
tui_design(const struct tui_options *opts, struct pw_error *err)
{
	struct tui_loop_signals before;
	const char *term;
	struct tui *d;
	SCREEN *scr;
	bool quit, wrote = false;

	setlocale(LC_ALL, "");
	/* Loaded before the screen: an error is one line on a plain
	 * terminal, and a bad file is named wherever it is opened. */
	if ((d = tui_new_given(opts, TUI_MIN_ROWS, TUI_MIN_COLS, err)) == NULL)
		return PW_EXIT_INPUT;
	term = getenv("TERM");
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		pw_error_set(err, "needs a terminal on stdin and stdout (for"
		    " a report, try 'pipewright compare')");
		tui_free(d);
		return PW_EXIT_INPUT;
	}
	if (term == NULL || term[0] == '\0' || strcmp(term, "dumb") == 0) {
		pw_error_set(err, "needs a terminal that can address the"
		    " screen (TERM is %s)", term == NULL || term[0] == '\0' ?
		    "not set" : "dumb");
		tui_free(d);
		return PW_EXIT_INPUT;
	}
	if ((scr = tui_loop_screen(d, opts, err)) == NULL) {
		tui_free(d);
		return PW_EXIT_INPUT;
	}
	d->busy_draw = tui_loop_busy;
	tui_loop_stop = 0;
	tui_loop_catch(&before);

	tui_loop_offer(d);
	quit = tui_loop_run(d, &wrote);

	endwin();
	delscreen(scr);
	tui_loop_uncatch(&before);
	/* A quit is the user's choice (saved, or unsaved changes dropped
	 * when asked); a signal keeps the recovery file, and so does a quit
	 * that never wrote it (a restore declined, nothing changed since). */
	if (quit && wrote)
		tui_recover_remove(d);
	tui_free(d);
	if (!quit)
		pw_outfile_fatal(tui_loop_stop);
	return PW_EXIT_OK;
}
