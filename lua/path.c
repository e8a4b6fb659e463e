/*
 * path.c - which files scripts may touch: pw.load reads and pw.write_*
 * write only below the interpreter's directories (the same list), with
 * every link resolved first, so that a script can neither read a file
 * outside them (nor have one quoted back in an error) nor write there.
 */
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "pwlua_int.h"

const char *
pwl_whole_arg(lua_State *L, int arg, const char *what, const char *noun)
{
	size_t len;
	const char *s = luaL_checklstring(L, arg, &len);

	if (strlen(s) != len)
		pwl_fail(L, "%s: %s: the %s has a NUL byte inside", what, s,
		    noun);
	return s;
}

/* Raises "WHAT: PATH: scripts may DOING only below" the DIRS. */
static void
pwl_path_refuse(lua_State *L, const char *what, const char *path,
    const char *const *dirs, const char *doing)
{
	const char *const *dir;
	char list[1024] = "";

	for (dir = dirs; *dir != NULL; dir++)
		snprintf(list + strlen(list), sizeof list - strlen(list),
		    "%s%s", dir != dirs ? ", " : "", *dir);
	pwl_fail(L, "%s: %s: scripts may %s only below %s", what, path, doing,
	    list);
}

/* Raises unless REAL (a realpath) lies below one of DIRS; PATH and
 * DOING ("read", "write") word the message. */
static void
pwl_path_below(lua_State *L, const char *what, const char *path,
    const char *real, const char *const *dirs, const char *doing)
{
	const char *const *dir;
	size_t len;

	for (dir = dirs; *dir != NULL; dir++) {
		len = strlen(*dir);
		if (strncmp(real, *dir, len) == 0 && (real[len] == '\0' ||
		    real[len] == '/' || strcmp(*dir, "/") == 0))
			return;
	}
	pwl_path_refuse(L, what, path, dirs, doing);
}

/* The directory of PATH ("." for a bare name) in OUT (PATH_MAX bytes);
 * NULL when PATH names no file in it or is too long. */
static const char *
pwl_path_parent(const char *path, char *out)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash != NULL ? slash + 1 : path;
	size_t len;

	if (*base == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		return NULL;
	len = slash == NULL ? 1 : slash == path ? 1 : (size_t)(slash - path);
	if (len >= PATH_MAX)
		return NULL;
	memcpy(out, slash == NULL ? "." : path, len);
	out[len] = '\0';
	return out;
}

void
pwl_path_read(lua_State *L, const char *what, const char *path)
{
	const char *const *dirs = pwl_dirs(L, false);
	char real[PATH_MAX], parent[PATH_MAX];
	struct stat st;
	int error;

	if (strcmp(path, "-") == 0)
		pwl_fail(L, "%s: -: scripts read files, not the standard input",
		    what);
	if (realpath(path, real) == NULL) {
		/* Say why only of a name whose directory lies below: of one
		 * outside, even whether it exists stays unsaid. */
		error = errno;
		if (pwl_path_parent(path, parent) == NULL ||
		    realpath(parent, real) == NULL || lstat(path, &st) == 0)
			pwl_path_refuse(L, what, path, dirs, "read");
		pwl_path_below(L, what, path, real, dirs, "read");
		pwl_fail(L, "%s: %s: cannot open: %s", what, path,
		    strerror(error));
	}
	pwl_path_below(L, what, path, real, dirs, "read");
	/* A FIFO or a device could block the open past the deadline. */
	if (stat(real, &st) != 0 || !S_ISREG(st.st_mode))
		pwl_fail(L, "%s: %s: not a regular file (scripts read only "
		    "regular files)", what, path);
	/* Opened by PATH afterwards: a script cannot make links, so what
	 * PATH resolves to does not change under it. */
}

void
pwl_path_write(lua_State *L, const char *what, const char *path)
{
	const char *const *dirs = pwl_dirs(L, true);
	char parent[PATH_MAX], real[PATH_MAX];
	struct stat st;

	if (dirs == NULL)
		pwl_fail(L, "%s: %s: this script may not write files", what,
		    path);
	if (strcmp(path, "-") == 0)
		return;
	if (pwl_path_parent(path, parent) == NULL)
		pwl_fail(L, "%s: %s: not a file name (or too long)", what, path);
	if (realpath(parent, real) == NULL)
		pwl_fail(L, "%s: %s: cannot write there: %s", what, path,
		    strerror(errno));
	pwl_path_below(L, what, path, real, dirs, "write");
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
		pwl_fail(L, "%s: %s: not a regular file (scripts replace only "
		    "regular files)", what, path);
}
