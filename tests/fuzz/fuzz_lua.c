/*
 * fuzz_lua.c - libFuzzer target: the bytes as a Lua problem script, run
 * as `pipewright schedule x.lua` runs one, in the real sandbox with a
 * small budget, in a fresh interpreter each time.  Whatever the script
 * does, the run must come back with a problem or an error.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "pwlua.h"
#include "fuzz.h"

static const struct pwlua_config fuzz_lua_config = {
	.instructions = 200000,
	.memory = (size_t)32 << 20,
	.write_dirs = NULL,
	.seconds = 2,
};

static int fuzz_devnull = -1;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pwlua_solve_prefs prefs;
	struct pw_problem *p = NULL;
	struct pw_error err;
	struct pwlua *lua;

	int saved;

	/* What scripts print would fill the fuzzer's log (or a replay's TAP
	 * stream): their stdout is /dev/null while they run. */
	if (fuzz_devnull == -1 && (fuzz_devnull = open("/dev/null",
	    O_WRONLY)) == -1)
		abort();
	fflush(stdout);
	if ((saved = dup(STDOUT_FILENO)) == -1 ||
	    dup2(fuzz_devnull, STDOUT_FILENO) == -1)
		abort();
	if ((lua = pwlua_new(&fuzz_lua_config, &err)) == NULL)
		abort();
	if (pwlua_problem(lua, fuzz_input_file(data, size, ".lua"), &p,
	    &prefs, &err) == PW_OK) {
		if (pw_problem_validate(p, "fuzz", &err) != PW_OK)
			abort();
		pwlua_solve_prefs_free(&prefs);
	}
	pw_problem_free(p);
	pwlua_free(lua);
	fflush(stdout);
	if (dup2(saved, STDOUT_FILENO) == -1)
		abort();
	close(saved);
	return 0;
}
