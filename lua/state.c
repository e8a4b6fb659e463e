/*
 * state.c - the sandboxed interpreter: a capping allocator (which C
 * memory made for the script is charged to too), an instruction budget,
 * a wall-clock watchdog, the libraries scripts may use, text-only
 * loading, and running scripts under lua_pcall with a traceback.
 */
#include <sys/stat.h>

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lualib.h>

#include "pwlua_int.h"

/* The count hook runs every PWL_HOOK_EVERY VM instructions while the
 * interpreter holds at most PWL_HOOK_BYTES, and twice as often for each
 * doubling beyond: one instruction that runs a library function looping
 * in C without allocating (utf8.len, comparing two long strings) may
 * pass over every byte the script holds, so the bytes passed over
 * between two reads of the deadline stay about the same. */
#define PWL_HOOK_EVERY	1000
#define PWL_HOOK_BYTES	((size_t)1 << 20)

struct pwlua {
	lua_State *L;
	size_t	cap;		/* bytes the interpreter may hold */
	size_t	used;
	unsigned long budget;	/* instructions per run */
	unsigned long spent;
	struct pwl_meter meter;	/* pattern matching, charged to the budget */
	unsigned hook_every;	/* the count hook's period: pwl_hook_period */
	double	seconds;	/* wall-clock limit per run */
	double	deadline;	/* of this run, on pw_now's clock */
	/* Set by the watchdog at the deadline (and when closing), read by
	 * the hook, pwl_spend and pw.solve: the one thing both threads
	 * touch outside the lock. */
	atomic_int expired;
	pthread_mutex_t lock;	/* guards done, for the watchdog */
	pthread_cond_t wake;
	bool	done;		/* the run is over: the watchdog ends */
	char	**dirs;		/* realpaths, NULL-terminated */
	bool	writes;		/* else DIRS is "." and only for reading */
	/* Where the memory cap was last hit ("file:line:") and the stack
	 * then: a memory error reaches no message handler, so the allocator
	 * notes both (without allocating). */
	char	oom_where[256];
	char	oom_trace[2048];
	char	why[96];	/* what pwl_spent found spent */
	/* Where print and pw.show write: the configured stream, else
	 * stdout for a script run for its output, stderr for one read as a
	 * problem or a model, whose command's stdout is its own (JSON, CSV,
	 * a report). */
	FILE	*out;
	FILE	*output;	/* the configured one, or NULL */
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
	struct pw_model *model;	/* NULL, or the chunk's result as a model */
	char	*name;		/* the model's name, which the caller owns */
};

static struct pwlua *
pwl_lua(lua_State *L)
{
	return *(struct pwlua **)lua_getextraspace(L);
}

FILE *
pwl_out(lua_State *L)
{
	return pwl_lua(L)->out;
}

const char *const *
pwl_dirs(lua_State *L, bool write)
{
	struct pwlua *lua = pwl_lua(L);

	return write && !lua->writes ? NULL : (const char *const *)lua->dirs;
}

void
pwl_charge(lua_State *L, size_t *charged, size_t bytes, const char *what)
{
	struct pwlua *lua = pwl_lua(L);
	char more[32], cap[32], used[32];

	/* Lua's collector sees only Lua's own bytes: garbage objects may
	 * still hold C memory. */
	if (bytes > lua->cap - lua->used)
		lua_gc(L, LUA_GCCOLLECT);
	if (bytes > lua->cap - lua->used)
		pwl_fail(L, "%s: %s more exceeds the memory cap of %s (%s in "
		    "use)", what, pw_fmt_bytes(more, sizeof more, (double)bytes),
		    pw_fmt_bytes(cap, sizeof cap, (double)lua->cap),
		    pw_fmt_bytes(used, sizeof used, (double)lua->used));
	lua->used += bytes;
	*charged += bytes;
}

void
pwl_release(lua_State *L, size_t *charged)
{
	struct pwlua *lua = pwl_lua(L);

	assert(*charged <= lua->used);
	lua->used -= *charged;
	*charged = 0;
}

double
pwl_time_left(lua_State *L, const char *what)
{
	struct pwlua *lua = pwl_lua(L);
	double left = lua->deadline - pw_now();
	char limit[32];

	if (left <= 0 || atomic_load(&lua->expired))
		pwl_fail(L, "%s: the time limit of %s is spent", what,
		    pw_fmt_seconds(limit, sizeof limit, lua->seconds));
	return left;
}

atomic_int *
pwl_cancel(lua_State *L)
{
	return &pwl_lua(L)->expired;
}

bool
pwlua_is_script(const char *path)
{
	return pw_path_ends(path, ".lua");
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
 * why it calls realloc itself instead of pw_xreallocarray.  Past the
 * deadline it has the hook run at the next instruction: one instruction
 * may do work in proportion to the bytes it makes (s:upper(), s .. s),
 * and the flag alone is read only every hook_every of them.  It also
 * shortens that period as the bytes held grow (pwl_hook_period).
 * Setting a hook is what Lua allows even a signal handler, and this runs
 * on the script's own thread.
 */
static void	pwl_hook(lua_State *, lua_Debug *);

/* The count hook's period while the interpreter holds USED bytes
 * (PWL_HOOK_EVERY). */
static unsigned
pwl_hook_period(size_t used)
{
	unsigned every = PWL_HOOK_EVERY;
	size_t bytes;

	for (bytes = PWL_HOOK_BYTES; used > bytes && every > 1; bytes *= 2)
		every /= 2;
	return every;
}

/* Has the count hook run every EVERY instructions.  Setting it restarts
 * the count, so during a run the period only shortens (an allocation
 * that crosses a doubling and back each time could otherwise keep the
 * hook from ever running): at most ten times a run, and once it is 1
 * (the budget or the time spent: every instruction fails), never
 * again. */
static void
pwl_hook_every(struct pwlua *lua, unsigned every)
{
	lua->hook_every = every;
	lua_sethook(lua->L, pwl_hook, LUA_MASKCOUNT, (int)every);
}

static void *
pwl_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	struct pwlua *lua = ud;
	size_t old = ptr != NULL ? osize : 0;
	unsigned every;
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
	if (lua->L != NULL && atomic_load_explicit(&lua->expired,
	    memory_order_relaxed))
		pwl_hook_every(lua, 1);
	else if (lua->L != NULL && (every = pwl_hook_period(lua->used)) <
	    lua->hook_every)
		pwl_hook_every(lua, every);
	return p;
}

/* Whether the run has spent its budget or its time. */
static bool
pwl_over(struct pwlua *lua)
{
	return lua->spent >= lua->budget || atomic_load(&lua->expired);
}

/* Adds STEPS to what the run has spent, saturating (a budget may be
 * ULONG_MAX); NULL, or the message of what is spent, in LUA's buffer. */
static const char *
pwl_spent(struct pwlua *lua, unsigned long steps)
{
	char limit[32];

	lua->spent = steps > ULONG_MAX - lua->spent ? ULONG_MAX :
	    lua->spent + steps;
	if (!pwl_over(lua))
		return NULL;
	if (atomic_load(&lua->expired))
		snprintf(lua->why, sizeof lua->why, "time limit of %s "
		    "exceeded", pw_fmt_seconds(limit, sizeof limit,
		    lua->seconds));
	else
		snprintf(lua->why, sizeof lua->why, "instruction budget of "
		    "%lu exceeded", lua->budget);
	return lua->why;
}

/* Stops a script that has run its budget or its time out.  Every
 * instruction after that fails too, so a pcall in the script cannot
 * swallow the stop. */
static void
pwl_hook(lua_State *L, lua_Debug *ar)
{
	struct pwlua *lua = pwl_lua(L);
	const char *why;

	(void)ar;
	if ((why = pwl_spent(lua, lua->hook_every)) == NULL)
		return;
	pwl_hook_every(lua, 1);
	luaL_where(L, 0);
	lua_pushstring(L, why);
	lua_pushstring(L, atomic_load(&lua->expired) ? " (a runaway script?)" :
	    " (a runaway loop?)");
	lua_concat(L, 3);
	lua_error(L);
}

/* Charges STEPS to the run's instruction budget: NULL, or, when the
 * budget or the run's time is spent, what is spent, with every later
 * instruction then failing too. */
static const char *
pwl_spend(lua_State *L, unsigned long steps)
{
	struct pwlua *lua = pwl_lua(L);
	const char *why = pwl_spent(lua, steps);

	if (why != NULL)
		pwl_hook_every(lua, 1);
	return why;
}

void
pwl_work(lua_State *L, unsigned long steps, const char *what)
{
	const char *why = pwl_spend(L, steps);

	if (why != NULL)
		pwl_fail(L, "%s: %s", what, why);
}

/* The meter of pattern matching: the same budget and deadline. */
static const char *
pwl_meter_charge(struct pwl_meter *meter, lua_State *L, unsigned long steps)
{
	(void)meter;
	return pwl_spend(L, steps);
}

/*
 * The watchdog of one run: at the deadline it sets the expired flag, and
 * touches nothing of Lua's (no Lua call is safe from another thread).
 * The count hook reads the flag every hook_every instructions and
 * the work C does for the script reads it where it is charged
 * (pwl_spend: pattern matching, the CSV writer), so a run stops within
 * that many instructions or steps of its deadline; pw.solve reads it as
 * its cancel flag.  Other C work is linear in what the script built,
 * and so bounded by the budget and the memory cap.
 */
static void *
pwl_watchdog(void *arg)
{
	struct pwlua *lua = arg;
	double now;

	pthread_mutex_lock(&lua->lock);
	while (!lua->done && (now = pw_now()) < lua->deadline)
		pw_sync_wait(&lua->wake, &lua->lock, lua->deadline - now);
	if (!lua->done)
		atomic_store(&lua->expired, 1);
	pthread_mutex_unlock(&lua->lock);
	return NULL;
}

/* xpcall's message handler in front of the script's (upvalue 1), which
 * runs only while the run has budget and time left: Lua calls a message
 * handler before the error unwinds, and for an error of the count hook
 * (the run spent) with hooks off, where a loop in the script's handler
 * would never stop.  Spent, the error goes on as it is. */
static int
pwl_xpcall_handler(lua_State *L)
{
	if (pwl_over(pwl_lua(L)))
		return 1;
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_insert(L, 1);
	lua_call(L, lua_gettop(L) - 1, 1);
	return 1;
}

/* xpcall with the script's message handler behind pwl_xpcall_handler.
 * Upvalue 1 is the base library's xpcall (scripts have no coroutines, so
 * calling it from C takes no yield away). */
static int
pwl_xpcall(lua_State *L)
{
	luaL_checktype(L, 2, LUA_TFUNCTION);
	lua_pushvalue(L, 2);
	lua_pushcclosure(L, pwl_xpcall_handler, 1);
	lua_replace(L, 2);
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_insert(L, 1);
	lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
	return lua_gettop(L);
}

/* setmetatable, refusing a metatable with __gc: Lua marks an object for
 * finalization when its metatable has __gc at this call, and finalizers
 * run with hooks off, where no budget or deadline could stop them (even
 * at lua_close).  Upvalue 1 is the base library's setmetatable, which
 * has no upvalues of its own: it runs in this call's frame, so that its
 * errors name it as the script called it. */
static int
pwl_setmetatable(lua_State *L)
{
	if (lua_type(L, 2) == LUA_TTABLE) {
		lua_pushliteral(L, "__gc");
		if (lua_rawget(L, 2) != LUA_TNIL)
			return luaL_error(L, "setmetatable: a metatable with "
			    "__gc is refused (scripts have no finalizers)");
		lua_pop(L, 1);
	}
	return lua_tocfunction(L, lua_upvalueindex(1))(L);
}

/* The library functions that loop in C, where the count hook never
 * runs, over a count a script chooses.  table.move loops over its
 * arguments' range, which may hold nothing (table.move({}, 1, 2^40, 1,
 * {})): that count is charged to the instruction budget first, once the
 * arguments pass the function's own checks (so that a call it refuses
 * fails as it would, in words a pcall can catch).  The functions sized
 * by #t (insert, remove, concat, sort, unpack) read a __len the script
 * writes, twice for all a wrapper could know, so a table with one is
 * refused; without one, #t is a border of a table the memory cap
 * bounds, and their passes over it are charged too (a sort of 2^24
 * numbers takes seconds in one call, which the time limit's flag, read
 * between instructions, would wait for a thousand times over): concat
 * and unpack #t, sort #t log #t, insert and remove the elements they
 * shift (nothing to append or to drop the last).  string.rep of an
 * empty string with an empty separator loops n times making nothing:
 * it is "" at once. */
enum pwl_loop {
	PWL_LOOP_MOVE,
	PWL_LOOP_CONCAT,	/* a pass over a range of t */
	PWL_LOOP_UNPACK,
	PWL_LOOP_SORT,		/* #t log #t comparisons */
	PWL_LOOP_INSERT,	/* #t - pos + 1 moves, given a position */
	PWL_LOOP_REMOVE,
	PWL_LOOP_REP
};

static const struct {
	const char	*lib, *name;
	enum pwl_loop	 loop;
} pwl_loops[] = {
	{ LUA_TABLIBNAME, "move", PWL_LOOP_MOVE },
	{ LUA_TABLIBNAME, "insert", PWL_LOOP_INSERT },
	{ LUA_TABLIBNAME, "remove", PWL_LOOP_REMOVE },
	{ LUA_TABLIBNAME, "concat", PWL_LOOP_CONCAT },
	{ LUA_TABLIBNAME, "sort", PWL_LOOP_SORT },
	{ LUA_TABLIBNAME, "unpack", PWL_LOOP_UNPACK },
	{ LUA_STRLIBNAME, "rep", PWL_LOOP_REP },
};

/* Argument ARG as the integer luaL_checkinteger would make of it (a
 * float with an integral value or a numeric string counts), in *OUT. */
static bool
pwl_loop_int(lua_State *L, int arg, lua_Integer *out)
{
	int isnum;

	*out = lua_tointegerx(L, arg, &isnum);
	return isnum;
}

/* table.move's count, when its arguments pass its checks, else 0. */
static lua_Integer
pwl_loop_move(lua_State *L)
{
	lua_Integer f, e, t;

	if (lua_type(L, 1) != LUA_TTABLE || !pwl_loop_int(L, 2, &f) ||
	    !pwl_loop_int(L, 3, &e) || !pwl_loop_int(L, 4, &t) ||
	    !(lua_isnoneornil(L, 5) || lua_type(L, 5) == LUA_TTABLE) ||
	    e < f || !(f > 0 || e < LUA_MAXINTEGER + f) ||
	    t > LUA_MAXINTEGER - (e - f))
		return 0;
	return e - f + 1;
}

/* The count of the range from argument ARG (default 1) to ARG + 1
 * (default N), as concat and unpack read them; 0 for an empty one, and
 * 1 when an argument is no integer (the library refuses it). */
static lua_Unsigned
pwl_loop_range(lua_State *L, int arg, lua_Unsigned n)
{
	lua_Integer i = 1, j = (lua_Integer)n;
	lua_Unsigned d;

	if ((!lua_isnoneornil(L, arg) && !pwl_loop_int(L, arg, &i)) ||
	    (!lua_isnoneornil(L, arg + 1) && !pwl_loop_int(L, arg + 1, &j)))
		return 1;
	if (j < i)
		return 0;
	d = (lua_Unsigned)j - (lua_Unsigned)i;
	return d == ~(lua_Unsigned)0 ? d : d + 1;
}

/* The steps LOOP's call on the table at 1 (no __len, border N) takes
 * where the library goes through with it; 1 where it refuses at once
 * (as it would, in words a pcall catches):
 * - concat(t, sep, i, j): its range, but no more values than a table
 *   under the cap holds (past them it meets one that is no string);
 * - unpack(t, i, j): its range, which past Lua's stack it refuses;
 * - sort: N times the bits of N, what its comparisons take on the
 *   whole (it refuses N of INT_MAX or more);
 * - insert(t, pos, v), remove(t, pos): the elements from pos to the
 *   end, which it shifts one by one whatever they hold. */
static lua_Unsigned
pwl_loop_steps(lua_State *L, enum pwl_loop loop, lua_Unsigned n)
{
	lua_Unsigned steps, bits;
	lua_Integer pos;

	switch (loop) {
	case PWL_LOOP_CONCAT:
		steps = pwl_loop_range(L, 3, n);
		return steps < pwl_lua(L)->cap / 16 ? steps :
		    pwl_lua(L)->cap / 16;
	case PWL_LOOP_UNPACK:
		steps = pwl_loop_range(L, 2, n);
		return steps <= LUAI_MAXSTACK ? steps : 1;
	case PWL_LOOP_SORT:
		if (n >= INT_MAX)
			return 1;
		for (bits = 1, steps = n; steps >>= 1; bits++)
			continue;
		return n * bits;
	case PWL_LOOP_INSERT:
	case PWL_LOOP_REMOVE:
		if ((loop == PWL_LOOP_INSERT ? lua_gettop(L) == 3 :
		    !lua_isnoneornil(L, 2)) && pwl_loop_int(L, 2, &pos) &&
		    pos >= 1 && (lua_Unsigned)pos <= n)
			return n - (lua_Unsigned)pos + 1;
		return 1;
	default:
		return n;
	}
}

/* Upvalue 1 holds the library's C function, 2 is its row of pwl_loops.
 * The function runs in this call's own frame, so that its errors name
 * it as the script called it ("bad argument #1 to 'move'"). */
static int
pwl_loop_call(lua_State *L)
{
	const lua_CFunction *fn = lua_touserdata(L, lua_upvalueindex(1));
	size_t row = (size_t)lua_tointeger(L, lua_upvalueindex(2));
	const char *lib = pwl_loops[row].lib, *name = pwl_loops[row].name;
	const char *why;
	lua_Unsigned steps;
	lua_Integer n;

	switch (pwl_loops[row].loop) {
	case PWL_LOOP_MOVE:
		if ((n = pwl_loop_move(L)) > 0 &&
		    (why = pwl_spend(L, (unsigned long)n)) != NULL)
			pwl_fail(L, "%s.%s: %s", lib, name, why);
		break;
	case PWL_LOOP_CONCAT:
	case PWL_LOOP_UNPACK:
	case PWL_LOOP_SORT:
	case PWL_LOOP_INSERT:
	case PWL_LOOP_REMOVE:
		if (lua_type(L, 1) != LUA_TTABLE)
			break;
		if (luaL_getmetafield(L, 1, "__len") != LUA_TNIL)
			pwl_fail(L, "%s.%s: a table with a __len metamethod is "
			    "refused (its length would drive a loop no budget "
			    "sees)", lib, name);
		steps = pwl_loop_steps(L, pwl_loops[row].loop,
		    lua_rawlen(L, 1));
		if ((why = pwl_spend(L, steps < ULONG_MAX ?
		    (unsigned long)steps : ULONG_MAX)) != NULL)
			pwl_fail(L, "%s.%s: %s", lib, name, why);
		break;
	case PWL_LOOP_REP:
		if (lua_type(L, 1) == LUA_TSTRING && lua_rawlen(L, 1) == 0 &&
		    pwl_loop_int(L, 2, &n) && (lua_isnoneornil(L, 3) ||
		    (lua_type(L, 3) == LUA_TSTRING && lua_rawlen(L, 3) == 0))) {
			lua_pushliteral(L, "");
			return 1;
		}
		break;
	}
	return (*fn)(L);
}

static void
pwl_open_loops(lua_State *L)
{
	lua_CFunction *fn;
	const char *upvalue;
	size_t i;

	luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
	for (i = 0; i < sizeof pwl_loops / sizeof pwl_loops[0]; i++) {
		lua_getfield(L, -1, pwl_loops[i].lib);
		lua_getfield(L, -1, pwl_loops[i].name);
		/* The libraries' functions have no upvalues of their own:
		 * called in the wrapper's frame, they read none of its. */
		upvalue = lua_getupvalue(L, -1, 1);
		assert(lua_tocfunction(L, -1) != NULL && upvalue == NULL);
		(void)upvalue;
		fn = lua_newuserdatauv(L, sizeof *fn, 0);
		*fn = lua_tocfunction(L, -2);
		lua_remove(L, -2);
		lua_pushinteger(L, (lua_Integer)i);
		lua_pushcclosure(L, pwl_loop_call, 2);
		lua_setfield(L, -2, pwl_loops[i].name);
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
}

/* The first failure of this print's writes to OUT: WROTE is false for
 * a write that failed, *ERROR (0 until one did) gets its errno. */
static void
pwl_print_wrote(bool wrote, int *error)
{
	if (!wrote && *error == 0)
		*error = errno != 0 ? errno : EIO;
}

/* print, as the base library's words it (each value's tostring, tabs
 * between, a newline), onto the run's output.  Where that is the
 * script's output (stdout under pipewright script), a write that fails (a
 * full disk) stops the script with its cause, which the error flag left
 * for the program's end would not keep; a problem or model script's
 * prints are diagnostics on stderr, whose loss fails no command. */
static int
pwl_print(lua_State *L)
{
	FILE *out = pwl_out(L);
	int i, n = lua_gettop(L), error = 0;
	const char *s;
	size_t len;

	for (i = 1; i <= n; i++) {
		s = luaL_tolstring(L, i, &len);
		if (i > 1)
			pwl_print_wrote(fputc('\t', out) != EOF, &error);
		pwl_print_wrote(fwrite(s, 1, len, out) == len, &error);
		lua_pop(L, 1);
	}
	pwl_print_wrote(fputc('\n', out) != EOF, &error);
	pwl_print_wrote(fflush(out) == 0, &error);
	if (error != 0 && out != stderr)
		return pwl_fail(L, "print: cannot write the output: %s",
		    strerror(error));
	return 0;
}

/* Whether MSG starts with the "file:line:" position of a chunk running
 * on L's stack (where Lua and error() put one), not merely with text
 * like one ("at 10:00:00 the job failed"). */
static bool
pwl_has_where(lua_State *L, const char *msg)
{
	lua_Debug ar;
	const char *d;
	size_t n;
	int level;

	for (level = 1; lua_getstack(L, level, &ar); level++) {
		lua_getinfo(L, "S", &ar);
		n = strlen(ar.short_src);
		if (strncmp(msg, ar.short_src, n) != 0 || msg[n] != ':')
			continue;
		for (d = msg + n + 1; isdigit((unsigned char)*d); d++)
			continue;
		if (d > msg + n + 1 && *d == ':')
			return true;
	}
	return false;
}

/* The error at IDX as a C string on the stack: its NUL bytes written
 * \x00, as the printed message escapes every other control byte, so
 * that nothing after them is lost; a description where it is no string.
 * Lua owns it. */
static const char *
pwl_message(lua_State *L, int idx)
{
	const char *msg;
	luaL_Buffer b;
	size_t len, i;

	if ((msg = lua_tolstring(L, idx, &len)) == NULL)
		return lua_pushfstring(L, "(error object is a %s value)",
		    luaL_typename(L, idx));
	if (strlen(msg) == len)
		return msg;
	luaL_buffinit(L, &b);
	for (i = 0; i < len; i++)
		if (msg[i] == '\0')
			luaL_addstring(&b, "\\x00");
		else
			luaL_addchar(&b, msg[i]);
	luaL_pushresult(&b);
	return lua_tostring(L, -1);
}

/* The message handler: the error with the position of the innermost
 * script line when it has none (error("x", 0), an error object), and the
 * traceback. */
static int
pwl_msgh(lua_State *L)
{
	const char *msg = pwl_message(L, 1);
	lua_Debug ar;
	int level;

	for (level = 1; !pwl_has_where(L, msg) && lua_getstack(L, level,
	    &ar); level++) {
		lua_getinfo(L, "Sl", &ar);
		if (ar.currentline > 0)
			msg = lua_pushfstring(L, "%s:%d: %s", ar.short_src,
			    ar.currentline, msg);
	}
	luaL_traceback(L, L, msg, 1);
	return 1;
}

/* A script read from a stream (a file, or stdin): what lua_load reads
 * next. */
struct pwl_stream {
	FILE	*fp;
	const char *first;	/* "\n" for a skipped "#" line, then NULL */
	int	error;		/* errno of a failed read */
	bool	bytecode;	/* it starts as precompiled Lua does */
	char	buf[4096];
};

/* lua_Reader of a stream: the newline standing for a skipped first line,
 * then blocks of the stream. */
static const char *
pwl_read_stream(lua_State *L, void *data, size_t *len)
{
	struct pwl_stream *in = data;
	const char *first = in->first;

	(void)L;
	if (first != NULL) {
		in->first = NULL;
		*len = strlen(first);
		return first;
	}
	*len = fread(in->buf, 1, sizeof in->buf, in->fp);
	if (*len == 0 && ferror(in->fp))
		in->error = errno;
	return *len > 0 ? in->buf : NULL;
}

/* Loads the script IN as luaL_loadfilex loads a file: past a UTF-8
 * byte-order mark and a first line starting with '#' (kept as a newline,
 * so that lines count as in the file), text only, as chunk CHUNK.
 * Returns lua_load's status with its result pushed; or, with nothing
 * pushed, LUA_ERRSYNTAX for bytecode (IN's bytecode set) and LUA_ERRFILE
 * for a failed read (IN's error), for the caller to say once the stream
 * is closed. */
static int
pwl_load_stream(lua_State *L, struct pwl_stream *in, const char *chunk)
{
	int c, status;

	in->first = NULL;
	in->error = 0;
	in->bytecode = false;
	c = getc(in->fp);
	if (c == 0xef && getc(in->fp) == 0xbb && getc(in->fp) == 0xbf)
		c = getc(in->fp);
	if (c == '#') {
		while ((c = getc(in->fp)) != EOF && c != '\n')
			continue;
		in->first = "\n";
		c = getc(in->fp);
	}
	if (c == LUA_SIGNATURE[0]) {
		in->bytecode = true;
		return LUA_ERRSYNTAX;
	}
	if (c == EOF && ferror(in->fp)) {
		in->error = errno;
		return LUA_ERRFILE;
	}
	if (c != EOF)
		ungetc(c, in->fp);
	status = lua_load(L, pwl_read_stream, in, chunk, "t");
	if (status == LUA_OK && in->error != 0) {
		lua_pop(L, 1);
		return LUA_ERRFILE;
	}
	return status;
}

/* Replaces the message of a load that failed with STATUS, one Lua's
 * words give no place (the parser's bytes hit the cap; its nesting, or
 * pw.load's within pw.load, Lua's C stack; a count past one of Lua's
 * limits), by one naming the file NAME, on one line (the message
 * handler added a traceback).  Returns LUA_ERRSYNTAX. */
static int
pwl_load_error(lua_State *L, const char *name, int status)
{
	const char *msg = lua_tostring(L, -1);
	char cap[32];

	if (status == LUA_ERRMEM)
		lua_pushfstring(L, "%s: memory cap of %s exceeded", name,
		    pw_fmt_bytes(cap, sizeof cap, (double)pwl_lua(L)->cap));
	else if (status == LUA_ERRERR || msg == NULL || strstr(msg,
	    "C stack overflow") != NULL)
		lua_pushfstring(L, "%s: nested too deeply to load (Lua's C "
		    "stack holds about 190 levels of brackets, blocks and "
		    "operators, or of pw.load within pw.load)", name);
	else {
		lua_pushfstring(L, "%s: ", name);
		lua_pushlstring(L, msg, strcspn(msg, "\n"));
		lua_concat(L, 2);
	}
	lua_remove(L, -2);
	return LUA_ERRSYNTAX;
}

int
pwl_loadfile(lua_State *L, const char *path)
{
	bool piped = strcmp(path, "-") == 0;
	const char *name = piped ? "<stdin>" : path;
	struct pwl_stream *in;
	int status;

	/* Both before the file opens: either may raise a memory error,
	 * which would leave it open. */
	lua_pushfstring(L, piped ? "=%s" : "@%s", name);
	in = lua_newuserdatauv(L, sizeof *in, 0);
	/* A script piped in is named as every reader names it. */
	if ((in->fp = pw_infile_open(path)) == NULL) {
		status = errno;
		lua_pop(L, 2);
		lua_pushfstring(L, "%s: cannot open: %s", path,
		    strerror(status));
		return LUA_ERRFILE;
	}
	status = pwl_load_stream(L, in, lua_tostring(L, -2));
	fclose(in->fp);
	if (in->bytecode)
		lua_pushfstring(L, "%s: precompiled Lua (bytecode) is refused; "
		    "scripts are loaded as source text only", name);
	else if (status == LUA_ERRFILE)
		lua_pushfstring(L, "%s: cannot read: %s", name,
		    strerror(in->error));
	else if (status == LUA_ERRMEM || status == LUA_ERRRUN ||
	    status == LUA_ERRERR)
		status = pwl_load_error(L, name, status);
	/* The result over the chunk's name and the stream. */
	lua_replace(L, -3);
	lua_pop(L, 1);
	return status;
}

/* require: the libraries already open, and nothing from files. */
static int
pwl_require(lua_State *L)
{
	const char *name = pwl_whole_arg(L, 1, "require", "name");

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
	lua_getglobal(L, "setmetatable");
	lua_pushcclosure(L, pwl_setmetatable, 1);
	lua_setglobal(L, "setmetatable");
	lua_getglobal(L, "xpcall");
	lua_pushcclosure(L, pwl_xpcall, 1);
	lua_setglobal(L, "xpcall");
	lua_pushcfunction(L, pwl_print);
	lua_setglobal(L, "print");
	pwl_open_pattern(L, &pwl_lua(L)->meter);
	pwl_open_loops(L);
	/* The strings' metatable, whose __index is the string table. */
	lua_pushliteral(L, "");
	lua_getmetatable(L, -1);
	pwl_lock(L);
	lua_pop(L, 2);
	lua_pushcfunction(L, pwl_require);
	lua_setglobal(L, "require");
	luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
	lua_getfield(L, -1, "pipewright");
	lua_setglobal(L, "pw");
	return 0;
}

/* What the value at IDX is, as a script's result: pipewright's objects
 * by name (Lua calls them all userdata), else Lua's type. */
static const char *
pwl_returned(lua_State *L, int idx)
{
	if (pwl_problem_test(L, idx) != NULL)
		return "a problem";
	if (pwl_schedule_test(L, idx) != NULL)
		return "a schedule";
	return luaL_typename(L, idx);
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
	lua_call(L, run->argc, run->problem || run->model != NULL ? 1 : 0);
	if (run->model != NULL) {
		if (!lua_istable(L, -1)) {
			run->early = PW_ERR_INPUT;
			lua_pushfstring(L, "%s: a model script must end with "
			    "'return pw.model{...}' (it returned %s)", run->path,
			    pwl_returned(L, -1));
			return 1;
		}
		pwl_model_get(L, -1, run->path, run->model);
		run->name = run->model->name != NULL ?
		    pw_xstrdup(run->model->name) : NULL;
		run->model->name = run->name;
		return 1;
	}
	if (!run->problem)
		return 0;
	/* A schedule's problem is its user value 1, with the script's
	 * preferences. */
	if ((sb = pwl_schedule_test(L, -1)) != NULL)
		lua_getiuservalue(L, -1, 1);
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
	} else {
		run->early = PW_ERR_INPUT;
		lua_pushfstring(L, "%s: a problem script must end with "
		    "'return pw.problem{...}' (it returned %s)", run->path,
		    pwl_returned(L, -1));
	}
	return 1;
}

/* Sets ERR to MSG without the traceback's last line, the C function
 * that ran the script, and without its heading where that line was all
 * of it (an error raised from C before any script line ran). */
static void
pwl_error_set(struct pw_error *err, const char *msg)
{
	static const char runner[] = "\n\t[C]: in ?";
	static const char heading[] = "\nstack traceback:";
	size_t len = strlen(msg), n = sizeof runner - 1;

	if (len >= n && strncmp(msg + len - n, runner, n) == 0)
		len -= n;
	n = sizeof heading - 1;
	if (len >= n && strncmp(msg + len - n, heading, n) == 0)
		len -= n;
	pw_error_set(err, "%.*s", (int)len, msg);
}

/* Starts the watchdog of a run from now; false when it cannot start. */
static bool
pwl_watch(struct pwlua *lua, pthread_t *thread)
{
	lua->deadline = pw_now() + lua->seconds;
	atomic_store(&lua->expired, 0);
	lua->done = false;
	/* With the fatal signals blocked, so that the caller's handlers
	 * (removing temporary files) run on its own thread. */
	return pw_thread_start(thread, pwl_watchdog, lua) == 0;
}

/* Ends the watchdog of a run. */
static void
pwl_unwatch(struct pwlua *lua, pthread_t thread)
{
	pthread_mutex_lock(&lua->lock);
	lua->done = true;
	pthread_cond_signal(&lua->wake);
	pthread_mutex_unlock(&lua->lock);
	pthread_join(thread, NULL);
}

/* Runs RUN protected; the message of a failure goes to ERR. */
static int
pwl_call(struct pwlua *lua, struct pwl_run *run, struct pw_error *err)
{
	lua_State *L = lua->L;
	char oom[sizeof lua->oom_where + sizeof lua->oom_trace + 64];
	char cap[32];
	const char *msg;
	pthread_t watchdog;
	int status;

	lua->spent = 0;
	lua->out = lua->output != NULL ? lua->output : run->problem ||
	    run->model != NULL ? stderr : stdout;
	lua->oom_where[0] = '\0';
	lua->oom_trace[0] = '\0';
	pwl_hook_every(lua, pwl_hook_period(lua->used));
	if (!pwl_watch(lua, &watchdog)) {
		pw_error_set(err, "%s: cannot start the watchdog thread",
		    run->path);
		return PW_ERR_INTERNAL;
	}
	lua_settop(L, 0);
	lua_pushcfunction(L, pwl_msgh);
	lua_pushcfunction(L, pwl_run_body);
	lua_pushlightuserdata(L, run);
	status = lua_pcall(L, 1, 1, 1);
	pwl_unwatch(lua, watchdog);
	msg = lua_tostring(L, -1);
	if (status == LUA_ERRMEM) {
		/* No Lua call here: this is outside any pcall. */
		snprintf(oom, sizeof oom, "%s%s memory cap of %s exceeded\n%s",
		    lua->oom_where[0] != '\0' ? lua->oom_where : run->path,
		    lua->oom_where[0] != '\0' ? "" : ":",
		    pw_fmt_bytes(cap, sizeof cap, (double)lua->cap),
		    lua->oom_trace);
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
		free(run->name);
		run->name = NULL;
		pwlua_solve_prefs_free(run->prefs);
	}
	return run->early;
}

int
pwlua_run(struct pwlua *lua, const char *path, int argc, char *const *argv,
    struct pw_error *err)
{
	struct pwl_run run = { path, argc, argv, false, NULL, PW_OK, NULL,
	    NULL, NULL };

	return pwl_call(lua, &run, err);
}

int
pwlua_problem(struct pwlua *lua, const char *path, struct pw_problem **out,
    struct pwlua_solve_prefs *prefs, struct pw_error *err)
{
	struct pwl_run run = { path, 0, NULL, true, prefs, PW_OK, NULL, NULL,
	    NULL };
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

/* Resolves the directory DIR into *OUT (the caller frees it); DOING
 * words the message ("write", or "read" for the default "."). */
static int
pwl_dir(const char *dir, const char *doing, char **out,
    struct pw_error *err)
{
	char real[PATH_MAX];
	struct stat st;

	if (realpath(dir, real) == NULL || stat(real, &st) != 0) {
		pw_error_set(err, "%s: cannot %s below it: %s", dir, doing,
		    strerror(errno));
		return PW_ERR_IO;
	}
	if (!S_ISDIR(st.st_mode)) {
		pw_error_set(err, "%s: cannot %s below it: not a directory",
		    dir, doing);
		return PW_ERR_INPUT;
	}
	*out = pw_xstrdup(real);
	return PW_OK;
}

struct pwlua *
pwlua_new(const struct pwlua_config *config, struct pw_error *err)
{
	static const struct pwlua_config defaults = { 0, 0, NULL, 0, NULL };
	static const char *const here[] = { ".", NULL };
	const char *const *dirs;
	struct pwlua *lua;
	char cap[32];
	size_t i, n = 0;

	if (config == NULL)
		config = &defaults;
	/* A deadline must be a time_t the clock reaches. */
	if (!(config->seconds >= 0 && config->seconds <= PWLUA_SECONDS_MAX)) {
		pw_error_set(err, "the time limit of a script must be from 0 "
		    "(the default) to %g seconds (got %g)", PWLUA_SECONDS_MAX,
		    config->seconds);
		return NULL;
	}
	lua = pw_xcalloc(1, sizeof *lua);
	lua->cap = config->memory != 0 ? config->memory : PWLUA_MEMORY;
	lua->budget = config->instructions != 0 ? config->instructions :
	    PWLUA_INSTRUCTIONS;
	lua->seconds = config->seconds > 0 ? config->seconds : PWLUA_SECONDS;
	lua->meter.charge = pwl_meter_charge;
	lua->output = config->output;
	lua->out = lua->output != NULL ? lua->output : stdout;
	pw_sync_init(&lua->lock, &lua->wake);
	lua->writes = config->write_dirs != NULL;
	dirs = lua->writes ? config->write_dirs : here;
	while (dirs[n] != NULL)
		n++;
	lua->dirs = pw_xcalloc(n + 1, sizeof *lua->dirs);
	for (i = 0; i < n; i++)
		if (pwl_dir(dirs[i], lua->writes ? "write" : "read",
		    &lua->dirs[i], err) != PW_OK)
			goto fail;
	if ((lua->L = lua_newstate(pwl_alloc, lua)) == NULL)
		goto small;
	*(struct pwlua **)lua_getextraspace(lua->L) = lua;
	lua_pushcfunction(lua->L, pwl_setup);
	if (lua_pcall(lua->L, 0, 0, 0) != LUA_OK)
		goto small;
	return lua;
small:
	pw_error_set(err, "the Lua interpreter does not start within a memory "
	    "cap of %s", pw_fmt_bytes(cap, sizeof cap, (double)lua->cap));
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
	if (lua->L != NULL) {
		/* Nothing of a script runs while the interpreter closes. */
		atomic_store(&lua->expired, 1);
		pwl_hook_every(lua, 1);
		lua_close(lua->L);
	}
	for (dir = lua->dirs; *dir != NULL; dir++)
		free(*dir);
	free(lua->dirs);
	pthread_cond_destroy(&lua->wake);
	pthread_mutex_destroy(&lua->lock);
	free(lua);
}

int
pwlua_model_read(const char *path, struct pw_model *out, char **name,
    struct pw_error *err)
{
	struct pwl_run run = { path, 0, NULL, false, NULL, PW_OK, NULL, out,
	    NULL };
	struct pwlua *lua;
	int rc;

	memset(out, 0, sizeof *out);
	*name = NULL;
	if ((lua = pwlua_new(NULL, err)) == NULL)
		return PW_ERR_INTERNAL;
	rc = pwl_call(lua, &run, err);
	pwlua_free(lua);
	if (rc != PW_OK)
		memset(out, 0, sizeof *out);
	*name = run.name;
	return rc;
}

struct pw_problem *
pwlua_problem_read(const char *path, const struct pwlua_config *config,
    struct pwlua_solve_prefs *prefs, struct pw_error *err)
{
	struct pw_problem *p = NULL;
	struct pwlua *lua;

	if (prefs != NULL)
		memset(prefs, 0, sizeof *prefs);
	if ((lua = pwlua_new(config, err)) == NULL)
		return NULL;
	pwlua_problem(lua, path, &p, prefs, err);
	pwlua_free(lua);
	return p;
}
