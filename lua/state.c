/*
 * state.c - the sandboxed interpreter: a capping allocator, an instruction
 * budget, the libraries scripts may use, text-only loading, and running
 * scripts under lua_pcall with a traceback.
 */
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lualib.h>

#include "pwlua_int.h"

/* The count hook runs every this many VM instructions. */
#define PWL_HOOK_EVERY	1000

struct pwlua {
	lua_State *L;
	size_t	cap;		/* bytes the interpreter may hold */
	size_t	used;
	unsigned long budget;	/* instructions per run */
	unsigned long spent;
	char	**dirs;		/* realpaths, NULL-terminated; NULL: no writes */
	/* Where the memory cap was last hit ("file:line:") and the stack
	 * then: a memory error reaches no message handler, so the allocator
	 * notes both (without allocating). */
	char	oom_where[256];
	char	oom_trace[2048];
};

/* What one protected run does, and what it found. */
struct pwl_run {
	const char *path;
	int	argc;
	char *const *argv;
	bool	problem;	/* keep the chunk's result as a problem */
	struct pwlua_solve_prefs *prefs;	/* NULL, or filled with it */
	int	early;		/* PW_OK, or why the message on the stack has
				 * no traceback (a load error, a bad result) */
	struct pw_problem *out;
};

static struct pwlua *
pwl_lua(lua_State *L)
{
	return *(struct pwlua **)lua_getextraspace(L);
}

const char *const *
pwl_write_dirs(lua_State *L)
{
	return (const char *const *)pwl_lua(L)->dirs;
}

bool
pwlua_is_script(const char *path)
{
	size_t len = strlen(path);

	return len > 4 && strcmp(path + len - 4, ".lua") == 0;
}

/* Appends one traceback line for AR, as luaL_traceback words it. */
static void
pwl_trace_line(char *buf, size_t size, const lua_Debug *ar)
{
	size_t len = strlen(buf);

	if (len >= size - 1)
		return;
	buf += len;
	size -= len;
	if (ar->currentline > 0)
		len = (size_t)snprintf(buf, size, "\n\t%s:%d: in ", ar->short_src,
		    ar->currentline);
	else
		len = (size_t)snprintf(buf, size, "\n\t%s: in ", ar->short_src);
	if (len >= size)
		return;
	if (*ar->namewhat != '\0')
		snprintf(buf + len, size - len, "%s '%s'", ar->namewhat,
		    ar->name);
	else if (*ar->what == 'm')
		snprintf(buf + len, size - len, "main chunk");
	else if (*ar->what != 'C')
		snprintf(buf + len, size - len, "function <%s:%d>",
		    ar->short_src, ar->linedefined);
	else
		snprintf(buf + len, size - len, "?");
}

/* Notes where the running script is.  Called from the allocator: reading
 * the call stack allocates nothing. */
static void
pwl_note_oom(struct pwlua *lua)
{
	lua_State *L = lua->L;
	lua_Debug ar;
	int level;

	lua->oom_where[0] = '\0';
	snprintf(lua->oom_trace, sizeof lua->oom_trace, "stack traceback:");
	if (L == NULL)
		return;
	for (level = 0; lua_getstack(L, level, &ar); level++) {
		if (!lua_getinfo(L, "Sln", &ar))
			break;
		if (ar.currentline > 0 && lua->oom_where[0] == '\0')
			snprintf(lua->oom_where, sizeof lua->oom_where, "%s:%d:",
			    ar.short_src, ar.currentline);
		pwl_trace_line(lua->oom_trace, sizeof lua->oom_trace, &ar);
	}
}

/*
 * Lua's allocator, counting bytes against the cap.  It must return NULL
 * on failure (Lua then raises a memory error) rather than abort, which is
 * why it calls realloc itself instead of pw_xreallocarray.
 */
static void *
pwl_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	struct pwlua *lua = ud;
	size_t old = ptr != NULL ? osize : 0;
	void *p;

	if (nsize == 0) {
		free(ptr);
		lua->used -= old;
		return NULL;
	}
	if (nsize > old && nsize - old > lua->cap - lua->used) {
		pwl_note_oom(lua);
		return NULL;
	}
	if ((p = realloc(ptr, nsize)) == NULL)
		return NULL;
	lua->used = lua->used - old + nsize;
	return p;
}

/* Stops a script that has run its budget out.  Every instruction after
 * that fails too, so a pcall in the script cannot swallow the stop. */
static void
pwl_hook(lua_State *L, lua_Debug *ar)
{
	struct pwlua *lua = pwl_lua(L);

	(void)ar;
	lua->spent += PWL_HOOK_EVERY;
	if (lua->spent < lua->budget)
		return;
	lua_sethook(L, pwl_hook, LUA_MASKCOUNT, 1);
	luaL_where(L, 0);
	lua_pushfstring(L, "instruction budget of %I exceeded (a runaway "
	    "loop?)", (lua_Integer)lua->budget);
	lua_concat(L, 2);
	lua_error(L);
}

/* Whether MSG starts with a "file:line:" position. */
static bool
pwl_has_where(const char *msg)
{
	const char *s, *d;

	for (s = msg; *s != '\0' && *s != '\n'; s++) {
		if (*s != ':')
			continue;
		for (d = s + 1; isdigit((unsigned char)*d); d++)
			continue;
		if (d > s + 1 && *d == ':')
			return true;
	}
	return false;
}

/* The message handler: the error with the position of the innermost
 * script line when it has none (error("x", 0), an error object), and the
 * traceback. */
static int
pwl_msgh(lua_State *L)
{
	const char *msg = lua_tostring(L, 1);
	lua_Debug ar;
	int level;

	if (msg == NULL)
		msg = lua_pushfstring(L, "(error object is a %s value)",
		    luaL_typename(L, 1));
	for (level = 1; !pwl_has_where(msg) && lua_getstack(L, level, &ar);
	    level++) {
		lua_getinfo(L, "Sl", &ar);
		if (ar.currentline > 0)
			msg = lua_pushfstring(L, "%s:%d: %s", ar.short_src,
			    ar.currentline, msg);
	}
	luaL_traceback(L, L, msg, 1);
	return 1;
}

int
pwl_loadfile(lua_State *L, const char *path)
{
	FILE *fp;
	int c, error;

	/* Look where luaL_loadfilex does (past a first line starting with
	 * '#') so that bytecode is refused in words that say so. */
	if ((fp = fopen(path, "rb")) == NULL) {
		error = errno;
		lua_pushfstring(L, "%s: cannot open: %s", path, strerror(error));
		return LUA_ERRFILE;
	}
	if ((c = getc(fp)) == '#') {
		while ((c = getc(fp)) != EOF && c != '\n')
			continue;
		c = getc(fp);
	}
	fclose(fp);
	if (c == LUA_SIGNATURE[0]) {
		lua_pushfstring(L, "%s: precompiled Lua (bytecode) is refused; "
		    "scripts are loaded as source text only", path);
		return LUA_ERRSYNTAX;
	}
	return luaL_loadfilex(L, path, "t");
}

/* require: the libraries already open, and nothing from files. */
static int
pwl_require(lua_State *L)
{
	const char *name = luaL_checkstring(L, 1);

	luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
	if (lua_getfield(L, -1, name) == LUA_TNIL)
		return luaL_error(L, "module '%s' is not available to scripts "
		    "(only pipewright, string, table, math and utf8)", name);
	return 1;
}

/* Opens what scripts may use; run protected (it allocates). */
static int
pwl_setup(lua_State *L)
{
	static const luaL_Reg libs[] = {
		{ LUA_GNAME, luaopen_base },
		{ LUA_TABLIBNAME, luaopen_table },
		{ LUA_STRLIBNAME, luaopen_string },
		{ LUA_MATHLIBNAME, luaopen_math },
		{ LUA_UTF8LIBNAME, luaopen_utf8 },
		{ "pipewright", pwl_open },
		{ NULL, NULL }
	};
	/* They compile text or read files at run time. */
	static const char *const removed[] = { "load", "loadfile", "dofile",
	    NULL };
	const luaL_Reg *lib;
	const char *const *name;

	for (lib = libs; lib->func != NULL; lib++) {
		luaL_requiref(L, lib->name, lib->func, 1);
		lua_pop(L, 1);
	}
	for (name = removed; *name != NULL; name++) {
		lua_pushnil(L);
		lua_setglobal(L, *name);
	}
	lua_pushcfunction(L, pwl_require);
	lua_setglobal(L, "require");
	luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
	lua_getfield(L, -1, "pipewright");
	lua_setglobal(L, "pw");
	return 0;
}

/* The protected body of a run: load, set arg, call, take the result. */
static int
pwl_run_body(lua_State *L)
{
	struct pwl_run *run = lua_touserdata(L, 1);
	struct pwl_problem *pb;
	struct pwl_schedule *sb;
	int i, status;

	if ((status = pwl_loadfile(L, run->path)) != LUA_OK) {
		run->early = status == LUA_ERRFILE ? PW_ERR_IO : PW_ERR_INPUT;
		return 1;
	}
	lua_createtable(L, run->argc, 1);
	lua_pushstring(L, run->path);
	lua_rawseti(L, -2, 0);
	for (i = 0; i < run->argc; i++) {
		lua_pushstring(L, run->argv[i]);
		lua_rawseti(L, -2, i + 1);
	}
	lua_setglobal(L, "arg");
	for (i = 0; i < run->argc; i++)
		lua_pushstring(L, run->argv[i]);
	lua_call(L, run->argc, run->problem ? 1 : 0);
	if (!run->problem)
		return 0;
	if ((pb = pwl_problem_test(L, -1)) != NULL) {
		run->out = pw_problem_copy(pb->p);
		if (run->prefs != NULL) {
			*run->prefs = pb->prefs;
			run->prefs->pins = pw_xreallocarray(NULL,
			    pb->prefs.npins + 1, sizeof *pb->prefs.pins);
			if (pb->prefs.npins > 0)
				memcpy(run->prefs->pins, pb->prefs.pins,
				    pb->prefs.npins * sizeof *pb->prefs.pins);
		}
	} else if ((sb = pwl_schedule_test(L, -1)) != NULL)
		run->out = pw_problem_copy(sb->problem);
	else {
		run->early = PW_ERR_INPUT;
		lua_pushfstring(L, "%s: a problem script must end with "
		    "'return pw.problem{...}' (it returned %s)", run->path,
		    luaL_typename(L, -1));
	}
	return 1;
}

/* Sets ERR to MSG without the traceback's last line, the C function
 * that ran the script. */
static void
pwl_error_set(struct pw_error *err, const char *msg)
{
	static const char runner[] = "\n\t[C]: in ?";
	size_t len = strlen(msg), n = sizeof runner - 1;

	if (len >= n && strcmp(msg + len - n, runner) == 0)
		len -= n;
	pw_error_set(err, "%.*s", (int)len, msg);
}

/* Runs RUN protected; the message of a failure goes to ERR. */
static int
pwl_call(struct pwlua *lua, struct pwl_run *run, struct pw_error *err)
{
	lua_State *L = lua->L;
	char oom[sizeof lua->oom_where + sizeof lua->oom_trace + 64];
	const char *msg;
	int status;

	lua->spent = 0;
	lua->oom_where[0] = '\0';
	lua->oom_trace[0] = '\0';
	lua_sethook(L, pwl_hook, LUA_MASKCOUNT, PWL_HOOK_EVERY);
	lua_settop(L, 0);
	lua_pushcfunction(L, pwl_msgh);
	lua_pushcfunction(L, pwl_run_body);
	lua_pushlightuserdata(L, run);
	status = lua_pcall(L, 1, 1, 1);
	msg = lua_tostring(L, -1);
	if (status == LUA_ERRMEM) {
		/* No Lua call here: this is outside any pcall. */
		snprintf(oom, sizeof oom, "%s memory cap of %zu bytes "
		    "exceeded\n%s", lua->oom_where[0] != '\0' ?
		    lua->oom_where : run->path, lua->cap, lua->oom_trace);
		pwl_error_set(err, oom);
		run->early = PW_ERR_INPUT;
	} else if (status != LUA_OK) {
		pwl_error_set(err, msg != NULL ? msg : "error");
		run->early = PW_ERR_INPUT;
	} else if (run->early != PW_OK)
		pw_error_set(err, "%s", msg);
	lua_settop(L, 0);
	if (run->early != PW_OK) {
		pw_problem_free(run->out);
		run->out = NULL;
		pwlua_solve_prefs_free(run->prefs);
	}
	return run->early;
}

int
pwlua_run(struct pwlua *lua, const char *path, int argc, char *const *argv,
    struct pw_error *err)
{
	struct pwl_run run = { path, argc, argv, false, NULL, PW_OK, NULL };

	return pwl_call(lua, &run, err);
}

int
pwlua_problem(struct pwlua *lua, const char *path, struct pw_problem **out,
    struct pwlua_solve_prefs *prefs, struct pw_error *err)
{
	struct pwl_run run = { path, 0, NULL, true, prefs, PW_OK, NULL };
	int rc;

	if (prefs != NULL)
		memset(prefs, 0, sizeof *prefs);
	rc = pwl_call(lua, &run, err);
	*out = run.out;
	return rc;
}

void
pwlua_solve_prefs_free(struct pwlua_solve_prefs *prefs)
{
	if (prefs == NULL)
		return;
	free(prefs->pins);
	memset(prefs, 0, sizeof *prefs);
}

/* Resolves the write directory DIR into *OUT (the caller frees it). */
static int
pwl_write_dir(const char *dir, char **out, struct pw_error *err)
{
	char real[PATH_MAX];
	struct stat st;

	if (realpath(dir, real) == NULL || stat(real, &st) != 0) {
		pw_error_set(err, "%s: cannot write below it: %s", dir,
		    strerror(errno));
		return PW_ERR_IO;
	}
	if (!S_ISDIR(st.st_mode)) {
		pw_error_set(err, "%s: cannot write below it: not a directory",
		    dir);
		return PW_ERR_INPUT;
	}
	*out = pw_xstrdup(real);
	return PW_OK;
}

struct pwlua *
pwlua_new(const struct pwlua_config *config, struct pw_error *err)
{
	static const struct pwlua_config defaults = { 0, 0, NULL };
	struct pwlua *lua;
	size_t i, n = 0;

	if (config == NULL)
		config = &defaults;
	lua = pw_xcalloc(1, sizeof *lua);
	lua->cap = config->memory != 0 ? config->memory : PWLUA_MEMORY;
	lua->budget = config->instructions != 0 ? config->instructions :
	    PWLUA_INSTRUCTIONS;
	if (config->write_dirs != NULL) {
		while (config->write_dirs[n] != NULL)
			n++;
		lua->dirs = pw_xcalloc(n + 1, sizeof *lua->dirs);
		for (i = 0; i < n; i++)
			if (pwl_write_dir(config->write_dirs[i], &lua->dirs[i],
			    err) != PW_OK)
				goto fail;
	}
	if ((lua->L = lua_newstate(pwl_alloc, lua)) == NULL)
		goto small;
	*(struct pwlua **)lua_getextraspace(lua->L) = lua;
	lua_pushcfunction(lua->L, pwl_setup);
	if (lua_pcall(lua->L, 0, 0, 0) != LUA_OK)
		goto small;
	return lua;
small:
	pw_error_set(err, "the Lua interpreter does not start within a memory "
	    "cap of %zu bytes", lua->cap);
fail:
	pwlua_free(lua);
	return NULL;
}

void
pwlua_free(struct pwlua *lua)
{
	char **dir;

	if (lua == NULL)
		return;
	if (lua->L != NULL)
		lua_close(lua->L);
	if (lua->dirs != NULL) {
		for (dir = lua->dirs; *dir != NULL; dir++)
			free(*dir);
		free(lua->dirs);
	}
	free(lua);
}

struct pw_problem *
pwlua_problem_read(const char *path, struct pwlua_solve_prefs *prefs,
    struct pw_error *err)
{
	struct pw_problem *p = NULL;
	struct pwlua *lua;

	if (prefs != NULL)
		memset(prefs, 0, sizeof *prefs);
	if ((lua = pwlua_new(NULL, err)) == NULL)
		return NULL;
	pwlua_problem(lua, path, &p, prefs, err);
	pwlua_free(lua);
	return p;
}
