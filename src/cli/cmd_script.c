/*
 * cmd_script.c - the script command: a Lua script run with the module
 * pipewright (docs/lua.md), writing only below the directories it is
 * given.
 */
#include "pipewright.h"
#include "cmd.h"
#include "pwlua.h"

int
pw_cmd_script(const struct pw_cmd_args *a)
{
	const char *dirs[] = { ".", NULL, NULL };
	const struct pwlua_config config = { 0, 0, dirs, 0, NULL };
	struct pwlua *lua;
	struct pw_error err;
	int status, rc;

	dirs[1] = a->write_dir;
	if ((lua = pwlua_new(&config, &err)) == NULL) {
		pw_cmd_say("script: %s", err.msg);
		return PW_EXIT_INPUT;
	}
	status = PW_EXIT_OK;
	if ((rc = pwlua_run(lua, a->rest[0], a->nrest - 1, a->rest + 1,
	    &err)) != PW_OK) {
		pw_cmd_say("%s", err.msg);
		status = pw_cmd_status(rc);
	}
	pwlua_free(lua);
	return status;
}
