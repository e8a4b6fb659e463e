/*
 * recover.c - the recovery file: while edits are unsaved, the state (the
 * problem, the timed orders and the pins, as a schedule file) is kept
 * beside the file it came from, as an editor keeps a swap file, written
 * atomically after each change (beside the schedule file once it has
 * one); the next designer of that file offers to restore it.
 *
 * A session holds a lock beside the file it writes (NAME.lock, flock on
 * an open descriptor, so a killed designer's lock goes with it): a second
 * designer of the same file finds it held, and neither offers the first
 * one's live changes as a crash's nor replaces or removes its file.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipewright.h"
#include "plan.h"
#include "tui_int.h"

#define TUI_RECOVER_SUFFIX	".pw-recover"
#define TUI_RECOVER_DEFAULT	".pipewright-default" TUI_RECOVER_SUFFIX

char *
tui_recover_name(const struct tui *d, const char *path)
{
	const char *base;
	char *name, *c;

	if (path == NULL && d != NULL && d->given != NULL &&
	    d->given->name != NULL) {
		/* The name is the model's and the hardware's: a file name
		 * once what a path cannot hold is made '_'. */
		name = pw_xasprintf(".pipewright-%.100s" TUI_RECOVER_SUFFIX,
		    d->given->name);
		for (c = name; *c != '\0'; c++)
			if (!isalnum((unsigned char)*c) && strchr("._-", *c) ==
			    NULL)
				*c = '_';
		return name;
	}
	if (path == NULL)
		return pw_xstrdup(TUI_RECOVER_DEFAULT);
	if ((base = strrchr(path, '/')) == NULL)
		return pw_xasprintf(".%s" TUI_RECOVER_SUFFIX, path);
	base++;
	return pw_xasprintf("%.*s.%s" TUI_RECOVER_SUFFIX, (int)(base - path),
	    path, base);
}

/* Lets go of lock L: removed while held, so that a designer that opened
 * it meanwhile locks a file no longer there, sees so and takes the next
 * one. */
static void
tui_recover_unlock(struct tui_lock *l)
{
	if (l->fd < 0)
		return;
	unlink(l->path);
	close(l->fd);
	l->fd = -1;
	free(l->path);
	l->path = NULL;
}

void
tui_recover_release(struct tui *d)
{
	tui_recover_unlock(&d->recover_lock);
}

/* How taking a lock went. */
enum tui_recover_take {
	TUI_RECOVER_TAKEN,	/* *OUT holds it */
	TUI_RECOVER_HELD,	/* another designer holds it */
	TUI_RECOVER_NONE,	/* none can be had there */
};

/* Takes the lock beside recovery file NAME into *OUT. */
static enum tui_recover_take
tui_recover_take(const char *name, struct tui_lock *out)
{
	char *lock = pw_xasprintf("%s.lock", name);
	struct stat held, there;
	int fd, tries, error;

	/* Three holders coming and going between an open and its lock is
	 * a designer still there. */
	for (tries = 0; tries < 3; tries++) {
		/* Read-only suffices for flock, so another user's designer
		 * in a shared directory locks it too. */
		fd = open(lock, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
		    0666);
		if (fd < 0)
			break;
		if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
			error = errno;
			close(fd);
			if (error != EWOULDBLOCK)
				break;
			free(lock);
			return TUI_RECOVER_HELD;
		}
		if (fstat(fd, &held) == 0 && stat(lock, &there) == 0 &&
		    held.st_dev == there.st_dev &&
		    held.st_ino == there.st_ino) {
			out->fd = fd;
			out->path = lock;
			return TUI_RECOVER_TAKEN;
		}
		close(fd);
	}
	free(lock);
	return tries == 3 ? TUI_RECOVER_HELD : TUI_RECOVER_NONE;
}

/* Whether D holds the lock beside recovery file NAME. */
static bool
tui_recover_holds(const struct tui *d, const char *name)
{
	char *lock = pw_xasprintf("%s.lock", name);
	bool holds = d->recover_lock.fd >= 0 &&
	    tui_same_file(lock, d->recover_lock.path);

	free(lock);
	return holds;
}

/* Whether D may write recovery file NAME: it holds the lock beside it
 * already, takes it now into *TAKEN, or none can be had there.  *TAKEN's
 * descriptor is -1 unless taken now. */
static bool
tui_recover_may_write(const struct tui *d, const char *name,
    struct tui_lock *taken)
{
	taken->fd = -1;
	taken->path = NULL;
	return tui_recover_holds(d, name) || tui_recover_take(name, taken) !=
	    TUI_RECOVER_HELD;
}

/* D keeps TAKEN, when one was taken, in place of the lock it held. */
static void
tui_recover_keep(struct tui *d, const struct tui_lock *taken)
{
	if (taken->fd < 0)
		return;
	tui_recover_release(d);
	d->recover_lock = *taken;
}

bool
tui_recover_claim(struct tui *d, const char *name)
{
	struct tui_lock taken;

	if (!tui_recover_may_write(d, name, &taken))
		return false;
	tui_recover_keep(d, &taken);
	return true;
}

/* Moves recovery file PATH aside, to the first free PATH~, PATH~2, ...,
 * saying so on the message line with WHY (NULL: the user declined it). */
static unsigned
tui_recover_move(struct tui *d, const char *path, const char *why)
{
	char *aside = NULL;
	int i, error = 0;

	/* A link never replaces a file (another designer may take a name
	 * at the same time), and the old name goes only once the link is
	 * made. */
	for (i = 1; i < 1000; i++) {
		free(aside);
		aside = i == 1 ? pw_xasprintf("%s~", path) :
		    pw_xasprintf("%s~%d", path, i);
		if (link(path, aside) == 0) {
			if (unlink(path) != 0)
				error = errno;
			break;
		}
		if (errno != EEXIST) {
			error = errno;
			break;
		}
	}
	if (i == 1000 || error != 0)
		tui_message(d, true, "the recovery file %s could not be moved "
		    "aside (%s): the next change replaces it%s%s", path,
		    i == 1000 ? "too many kept already" : strerror(error),
		    why != NULL ? "; not restored: " : "", why != NULL ? why :
		    "");
	else
		tui_message(d, why != NULL, "recovery file kept as %s, not "
		    "restored%s%s", aside, why != NULL ? ": " : "",
		    why != NULL ? why : "");
	free(aside);
	return TUI_DRAW_MESSAGE;
}

void
tui_recover_write(struct tui *d)
{
	struct tui_lock taken;
	struct pw_error err;
	struct stat st;
	char *name;
	bool mine;

	/* The file's name follows the schedule file "s" writes, else the
	 * designed file: "S" from a problem and "e" on the default problem
	 * give them names, and the old file goes once the new one is
	 * written (until then it is the only copy, and its lock is kept). */
	name = tui_recover_name(d, d->save_path != NULL ? d->save_path :
	    d->path);
	mine = d->recover_owned && d->recover_path != NULL &&
	    tui_same_file(d->recover_path, name);
	if (!tui_recover_may_write(d, name, &taken)) {
		tui_message(d, true, "recovery file not written: another "
		    "designer is editing with %s (s saves)", name);
		free(name);
		return;
	}
	/* Another session's, left when it ended while this one ran: kept,
	 * as a declined one is. */
	if (!mine && lstat(name, &st) == 0)
		tui_recover_move(d, name, "another session's, left when it "
		    "ended");
	if (pw_schedule_write_with(name, pw_plan_problem(d->plan),
	    pw_plan_timed(d->plan), pw_plan_timing(d->plan), d->pins, d->npins,
	    NULL, &err) != PW_OK) {
		tui_message(d, true, "recovery file not written: %s", err.msg);
		tui_recover_unlock(&taken);
		free(name);
		return;
	}
	/* "./.x.pw-recover" and ".x.pw-recover" are one file, kept. */
	if (!mine)
		tui_recover_remove(d);
	tui_recover_keep(d, &taken);
	free(d->recover_path);
	d->recover_path = name;
	d->recover_owned = true;
}

void
tui_recover_remove(struct tui *d)
{
	if (d->recover_path == NULL || !d->recover_owned)
		return;
	if (unlink(d->recover_path) != 0 && errno != ENOENT)
		tui_message(d, true, "cannot remove the recovery file %s: %s",
		    d->recover_path, strerror(errno));
	d->recover_owned = false;
}

/* Moves the recovery file aside, not restored (WHY: the reason it could
 * not be, or NULL when the user declined it); this session's first
 * change writes its name. */
static unsigned
tui_recover_aside(struct tui *d, const char *why)
{
	if (d->recover_path == NULL)
		d->recover_path = tui_recover_name(d, d->path);
	d->recover_owned = false;
	return tui_recover_move(d, d->recover_path, why);
}

unsigned
tui_recover_decline(struct tui *d)
{
	return tui_recover_aside(d, NULL);
}

unsigned
tui_recover_restore(struct tui *d)
{
	struct pw_problem *problem = NULL;
	struct pw_timed_op *ops = NULL;
	struct pw_pin *pins = NULL;
	struct pw_plan *plan = NULL;
	struct pw_error err;
	size_t nops = 0, npins = 0;
	char *source, *family = NULL;
	unsigned flags;
	int rc;

	if (d->recover_path == NULL)
		d->recover_path = tui_recover_name(d, d->path);
	if (pw_path_special(d->recover_path))
		return tui_recover_aside(d, "not a regular file (a FIFO or a "
		    "device)");
	rc = pw_file_read_pins(d->recover_path, &problem, &ops, &nops, &pins,
	    &npins, &family, &err);
	if (rc == PW_OK)
		rc = pw_plan_from_timed(problem, ops, nops, family,
		    d->recover_path, &plan, &err);
	free(ops);
	/* Kept aside: this session's first change writes its name. */
	if (rc != PW_OK) {
		free(pins);
		return tui_recover_aside(d, err.msg);
	}

	/* Its state is this session's now: a save or a quit after a change
	 * removes it. */
	d->recover_owned = true;
	source = pw_xasprintf("recovery file %s", d->recover_path);
	flags = tui_plan_set(d, plan, "restore", source, -1);
	free(source);
	free(d->pins);
	d->pins = pins;
	d->npins = npins;
	tui_message(d, false, "restored the unsaved changes of %s (u undoes)",
	    d->recover_path);
	return flags;
}
