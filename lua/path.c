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
pwl_path_arg(lua_State *L, int arg, const char *what)
{
	size_t len;
	const char *path = luaL_checklstring(L, arg, &len);

	if (strlen(path) != len)
		pwl_fail(L, "%s: %s: the path has a NUL byte inside", what, path);
	return path;
}

/* Raises unless REAL (a realpath) lies below one of DIRS; PATH and
 * DOING ("read", "write") word the message. */
static void
pwl_path_below(lua_State *L, const char *what, const char *path,
    const char *real, const char *const *dirs, const char *doing)
{
	const char *const *dir;
	char list[1024] = "";
	size_t len;

	for (dir = dirs; *dir != NULL; dir++) {
		len = strlen(*dir);
		if (strncmp(real, *dir, len) == 0 && (real[len] == '\0' ||
		    real[len] == '/' || strcmp(*dir, "/") == 0))
			return;
		snprintf(list + strlen(list), sizeof list - strlen(list),
		    "%s%s", dir != dirs ? ", " : "", *dir);
	}
	pwl_fail(L, "%s: %s: scripts may %s only below %s", what, path, doing,
	    list);
}

void
pwl_path_read(lua_State *L, const char *what, const char *path)
{
	char real[PATH_MAX];

	if (realpath(path, real) == NULL)
		pwl_fail(L, "%s: %s: cannot open: %s", what, path,
		    strerror(errno));
	/* Opened by PATH afterwards: a script cannot make links, so what
	 * PATH resolves to does not change under it. */
	pwl_path_below(L, what, path, real, pwl_dirs(L, false), "read");
}

void
pwl_path_write(lua_State *L, const char *what, const char *path)
{
	const char *const *dirs = pwl_dirs(L, true);
	char parent[PATH_MAX], real[PATH_MAX];
	const char *slash, *base;
	struct stat st;
	size_t len;

	if (dirs == NULL)
		pwl_fail(L, "%s: %s: this script may not write files", what,
		    path);
	if (strcmp(path, "-") == 0)
		return;
	slash = strrchr(path, '/');
	base = slash != NULL ? slash + 1 : path;
	if (*base == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		pwl_fail(L, "%s: %s: not a file name", what, path);
	len = slash == NULL ? 0 : slash == path ? 1 : (size_t)(slash - path);
	if (len >= sizeof parent)
		pwl_fail(L, "%s: %s: the name is too long", what, path);
	memcpy(parent, slash == NULL ? "." : path, slash == NULL ? 1 : len);
	parent[slash == NULL ? 1 : len] = '\0';
	if (realpath(parent, real) == NULL)
		pwl_fail(L, "%s: %s: cannot write there: %s", what, path,
		    strerror(errno));
	pwl_path_below(L, what, path, real, dirs, "write");
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
		pwl_fail(L, "%s: %s: not a regular file (scripts replace only "
		    "regular files)", what, path);
}
