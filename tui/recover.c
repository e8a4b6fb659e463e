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

static void
tui_recover_unlink(struct tui *d)
{
	if (unlink(d->recover_path) != 0 && errno != ENOENT)
		tui_message(d, true, "cannot remove the recovery file %s: %s",
		    d->recover_path, strerror(errno));
}

void
tui_recover_release(struct tui *d)
{
	if (d->recover_lock < 0)
		return;
	/* Removed while held: a designer that opened it meanwhile locks a
	 * file no longer there, sees so and takes the next one. */
	unlink(d->recover_lock_path);
	close(d->recover_lock);
	d->recover_lock = -1;
	free(d->recover_lock_path);
	d->recover_lock_path = NULL;
}

bool
tui_recover_claim(struct tui *d, const char *name)
{
	char *lock = pw_xasprintf("%s.lock", name);
	struct stat held, there;
	int fd, tries;

	if (d->recover_lock >= 0 && tui_same_file(lock, d->recover_lock_path)) {
		free(lock);
		return true;
	}
	for (tries = 0; tries < 3; tries++) {
		/* Where no lock can be made (a read-only directory, a file
		 * system without flock), the session writes as it did
		 * without one. */
		fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
		    0600);
		if (fd < 0)
			break;
		if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
			close(fd);
			if (errno != EWOULDBLOCK)
				break;
			free(lock);
			return false;
		}
		if (fstat(fd, &held) == 0 && stat(lock, &there) == 0 &&
		    held.st_dev == there.st_dev && held.st_ino == there.st_ino) {
			tui_recover_release(d);
			d->recover_lock = fd;
			d->recover_lock_path = lock;
			return true;
		}
		close(fd);
	}
	free(lock);
	return true;
}

void
tui_recover_write(struct tui *d)
{
	struct pw_error err;
	char *name;

	/* The file's name follows the schedule file "s" writes, else the
	 * designed file: "S" from a problem and "e" on the default problem
	 * give them names, and the old file goes once the new one is
	 * written (until then it is the only copy). */
	name = tui_recover_name(d, d->save_path != NULL ? d->save_path :
	    d->path);
	if (!tui_recover_claim(d, name)) {
		tui_message(d, true, "recovery file not written: another "
		    "designer is editing with %s (s saves)", name);
		free(name);
		return;
	}
	if (pw_schedule_write_with(name, pw_plan_problem(d->plan),
	    pw_plan_timed(d->plan), pw_plan_timing(d->plan), d->pins, d->npins,
	    NULL, &err) != PW_OK) {
		tui_message(d, true, "recovery file not written: %s", err.msg);
		free(name);
		return;
	}
	/* "./.x.pw-recover" and ".x.pw-recover" are one file, kept; the
	 * claim on the new one let go of the old one's lock. */
	if (d->recover_path != NULL && !tui_same_file(d->recover_path, name))
		tui_recover_unlink(d);
	free(d->recover_path);
	d->recover_path = name;
}

void
tui_recover_remove(struct tui *d)
{
	if (d->recover_path != NULL && tui_recover_claim(d, d->recover_path))
		tui_recover_unlink(d);
}

/* Moves the recovery file aside, not restored (WHY: the reason it could
 * not be, or NULL when the user declined it). */
static unsigned
tui_recover_aside(struct tui *d, const char *why)
{
	char *aside = NULL;
	int i, error = 0;

	if (d->recover_path == NULL)
		d->recover_path = tui_recover_name(d, d->path);
	/* This session's first change writes the recovery file's name: the
	 * old one goes to the first free NAME~, NAME~2, ... first.  A link
	 * never replaces a file (another designer may take a name at the
	 * same time), and the old name goes only once the link is made. */
	for (i = 1; i < 1000; i++) {
		free(aside);
		aside = i == 1 ? pw_xasprintf("%s~", d->recover_path) :
		    pw_xasprintf("%s~%d", d->recover_path, i);
		if (link(d->recover_path, aside) == 0) {
			if (unlink(d->recover_path) != 0)
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
		    "aside (%s): the next change replaces it%s%s",
		    d->recover_path, i == 1000 ? "too many kept already" :
		    strerror(error), why != NULL ? "; not restored: " : "",
		    why != NULL ? why : "");
	else
		tui_message(d, why != NULL, "recovery file kept as %s, not "
		    "restored%s%s", aside, why != NULL ? ": " : "",
		    why != NULL ? why : "");
	free(aside);
	return TUI_DRAW_MESSAGE;
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
