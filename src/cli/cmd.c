/*
 * cmd.c - what every command shares: its one-line messages, the
 * registries it names, and the exit status of a failure.  main.c holds the
 * command table and dispatches to the handlers (cmd_*.c); every handler
 * returns an enum pw_exit and reports its own errors as one line on
 * stderr.
 */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipewright.h"
#include "cmd.h"

/* Says FMT's message on stderr as pw_cmd_fail and pw_cmd_note do. */
static void
cmd_say(const char *fmt, va_list ap)
{
	char buf[sizeof ((struct pw_error *)NULL)->msg + 1024];
	char one[2 * sizeof buf], *line;
	const char *s;
	size_t n = 0;
	bool colon;

	vsnprintf(buf, sizeof buf, fmt, ap);

	/* One line: "blocked:\n  a\n  b" reads "blocked: a; b". */
	for (s = buf; *s != '\0'; s++) {
		if (*s != '\n') {
			one[n++] = *s;
			continue;
		}
		colon = s > buf && s[-1] == ':';
		while (s[1] == ' ' || s[1] == '\t' || s[1] == '\n')
			s++;
		if (s[1] != '\0' && colon)
			one[n++] = ' ';
		else if (s[1] != '\0') {
			one[n++] = ';';
			one[n++] = ' ';
		}
	}
	one[n] = '\0';
	/* Messages quote file contents and paths: nothing in them may act
	 * on the terminal. */
	line = pw_escape(one);
	fprintf(stderr, "pipewright: %s\n", line);
	free(line);
}

void
pw_cmd_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cmd_say(fmt, ap);
	va_end(ap);
}

void
pw_cmd_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cmd_say(fmt, ap);
	va_end(ap);
}

/* The size of registry WHICH; fills the name and summary of its entry I
 * when I is below it. */
static size_t
cmd_registry(int which, size_t i, const char **name, const char **summary)
{
	if (which == PW_CMD_LIST_FAMILIES) {
		if (i < pw_nfamilies) {
			*name = pw_families[i].name;
			*summary = pw_families[i].summary;
		}
		return pw_nfamilies;
	}
	assert(which == PW_CMD_LIST_FORMATS);
	if (i < pw_nexport_formats) {
		*name = pw_export_formats[i].name;
		*summary = pw_export_formats[i].summary;
	}
	return pw_nexport_formats;
}

void
pw_cmd_list(FILE *fp, int which)
{
	const char *name, *summary;
	size_t i;
	int width = 0;

	for (i = 0; i < cmd_registry(which, i, &name, &summary); i++) {
		if ((int)strlen(name) > width)
			width = (int)strlen(name);
	}
	for (i = 0; i < cmd_registry(which, i, &name, &summary); i++)
		fprintf(fp, "  %-*s  %s\n", width, name, summary);
}

void
pw_cmd_unknown(int which, const char *what, const char *name)
{
	const char *entry, *summary;
	char *names, *longer;
	size_t i;

	names = pw_xstrdup("");
	for (i = 0; i < cmd_registry(which, i, &entry, &summary); i++) {
		longer = pw_xasprintf("%s%s%s", names, i > 0 ? ", " : "",
		    entry);
		free(names);
		names = longer;
	}
	pw_cmd_fail("unknown %s '%s' (one of: %s)", what, name, names);
	free(names);
}

/* A bug is 3, anything else the input's or the files' (2), as docs/cli.md
 * lists them. */
int
pw_cmd_status(int rc)
{
	assert(rc != PW_OK);
	return rc == PW_ERR_INTERNAL ? PW_EXIT_INTERNAL : PW_EXIT_INPUT;
}

const char *
pw_cmd_label(const char *path)
{
	if (path == NULL)
		return "the built-in default problem";
	return strcmp(path, "-") == 0 ? "<stdin>" : path;
}
