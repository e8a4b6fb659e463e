/*
 * cmd.h - the private interface between main.c (the command table, help)
 * and cmd.c (what each subcommand does).
 */
#ifndef PW_CMD_H
#define PW_CMD_H

#include <stdio.h>

/* Registries a command's help lists after its text. */
#define PW_CMD_LIST_FAMILIES	0x1
#define PW_CMD_LIST_FORMATS	0x2

/* One row of the command table in main.c. */
struct pw_command {
	const char *name;
	const char *synopsis;	/* the arguments after the name */
	const char *summary;	/* one line */
	const char *help;	/* the paragraphs of --help after the summary */
	int	lists;		/* PW_CMD_LIST_* */
	/* ARGV[0] is the command's name; returns an enum pw_exit. */
	int	(*run)(const struct pw_command *, int argc, char **argv);
};

/* main.c: the full help of CMD. */
void	pw_command_usage(FILE *, const struct pw_command *);

/* cmd.c: the handlers. */
int	pw_cmd_schedule(const struct pw_command *, int, char **);
int	pw_cmd_problem(const struct pw_command *, int, char **);
int	pw_cmd_eval(const struct pw_command *, int, char **);
int	pw_cmd_check(const struct pw_command *, int, char **);
int	pw_cmd_compare(const struct pw_command *, int, char **);
int	pw_cmd_show(const struct pw_command *, int, char **);
int	pw_cmd_export(const struct pw_command *, int, char **);
int	pw_cmd_script(const struct pw_command *, int, char **);
int	pw_cmd_solve(const struct pw_command *, int, char **);

/* cmd.c: prints "pipewright: MESSAGE" as one line on stderr (newlines in
 * the message become "; "). */
void	pw_cmd_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* cmd.c: the same for a note, which does not end the command. */
void	pw_cmd_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* cmd.c: a registry (PW_CMD_LIST_FAMILIES or _FORMATS), one line per
 * entry with its summary. */
void	pw_cmd_list(FILE *, int which);

#endif /* PW_CMD_H */
