/*
 * cmd_parse.c - a command line as its row in the command table says: the
 * options the row names (every command's are declared here once), then
 * its positional arguments.  Errors name the command and the argument.
 */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipewright.h"
#include "cmd.h"

/* Every option of every command; a command's row names those it takes. */
static const struct option cmd_parse_table[] = {
	{ "family", required_argument, NULL, 'f' },
	{ "output", required_argument, NULL, 'o' },
	{ "to", required_argument, NULL, 't' },
	{ "width", required_argument, NULL, 'w' },
	{ "height", required_argument, NULL, 'G' },
	{ "json", no_argument, NULL, 'j' },
	{ "critical", no_argument, NULL, 'c' },
	{ "write-dir", required_argument, NULL, 'd' },
	{ "from", required_argument, NULL, 'F' },
	{ "time-limit", required_argument, NULL, 'l' },
	{ "iteration-limit", required_argument, NULL, 'I' },
	{ "objective", required_argument, NULL, 'O' },
	{ "offload", required_argument, NULL, 'x' },
	{ "seed", required_argument, NULL, 's' },
	{ "write-lp", required_argument, NULL, 'W' },
	{ "ascii", no_argument, NULL, 'a' },
	{ "mono", no_argument, NULL, 'm' },
	{ "keys", no_argument, NULL, 'k' },
	{ "top", required_argument, NULL, 'n' },
	{ "backend", required_argument, NULL, 'B' },
	{ "transport", required_argument, NULL, 'U' },
	{ "iterations", required_argument, NULL, 'K' },
	{ "warmup", required_argument, NULL, 'Z' },
	{ "gpus", required_argument, NULL, 'u' },
	{ "workload", required_argument, NULL, 'A' },
	{ "no-check", no_argument, NULL, 'Y' },
	{ "dry-run", no_argument, NULL, 'E' },
	{ "against", required_argument, NULL, 'g' },
	{ "predicted", no_argument, NULL, 'i' },
	{ "sort", required_argument, NULL, 'Q' },
	{ "csv", no_argument, NULL, 'J' },
	{ "problem", required_argument, NULL, 'V' },
	/* The model options (long only).  The flag shares solve's name: a
	 * row takes one of the two (cmd.h). */
#define CMD_PARSE_MODEL_OPT(opt, letter, name, replan) \
	{ name, required_argument, NULL, #letter[0] },
#define CMD_PARSE_MODEL_FLAG(opt, letter, name, replan) \
	{ name, no_argument, NULL, #letter[0] },
	PW_CMD_MODEL_TABLE(CMD_PARSE_MODEL_OPT, CMD_PARSE_MODEL_FLAG)
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

/* The options whose value names a file or a directory (--from is
 * solve's family or file, but show's time). */
#define CMD_PARSE_FILES	"odWgV"

/* --top's most, as pw.plan's top (lua/plan.c). */
#define CMD_PARSE_TOP_MAX	1000
/* launch's --iterations and --warmup most. */
#define CMD_PARSE_ITERATIONS_MAX	100000
/* launch's --gpus most. */
#define CMD_PARSE_GPUS_MAX	1024

#define CMD_PARSE_NOPTIONS \
	(sizeof cmd_parse_table / sizeof cmd_parse_table[0])

/* The long name of the option of letter C, NULL when none has it. */
static const char *
cmd_parse_name(int c)
{
	size_t i;

	for (i = 0; cmd_parse_table[i].name != NULL; i++)
		if (cmd_parse_table[i].val == c)
			return cmd_parse_table[i].name;
	return NULL;
}

/* A size option's value: a whole number of at least 1, one beyond an
 * int kept as INT_MAX so that the command's range refuses it with its
 * own message.  False when S is no such number. */
static bool
cmd_parse_size(const char *s, int *out)
{
	char *end;
	long n;

	if (pw_parse_int(s, 1, INT_MAX, out))
		return true;
	n = strtol(s, &end, 10);	/* LONG_MAX beyond a long */
	while (isspace((unsigned char)*end))
		end++;
	if (end == s || *end != '\0' || n < 1)
		return false;
	*out = INT_MAX;
	return true;
}

const char *
pw_cmd_option_name(int c)
{
	const char *name = cmd_parse_name(c);

	assert(name != NULL);
	return name;
}

/* Whether ARG ("--js=x") gave a value to the flag of letter C, as getopt
 * reports it (optopt C); else ARG is some earlier argument and C a short
 * option inside a cluster. */
static bool
cmd_parse_flag_value(const char *arg, int c)
{
	const char *name = cmd_parse_name(c);
	size_t len = strcspn(arg, "=");

	return name != NULL && strncmp(arg, "--", 2) == 0 &&
	    arg[len] == '=' && len > 2 && strncmp(arg + 2, name, len - 2) == 0;
}

/* Reads an unsigned whole number from S within [MIN, MAX] into OUT (a
 * sign is refused: strtoull would wrap "-1"). */
static bool
cmd_parse_whole(const char *s, unsigned long long min, unsigned long long max,
    unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno == 0 && end != s && *end == '\0' && s[0] != '-' &&
	    *out >= min && *out <= max;
}

/* Parses the value of solve's, plan's and launch's option C into A; false after
 * reporting what is wrong. */
static bool
cmd_parse_solve(const struct pw_command *cmd, int c, const char *v,
    struct pw_cmd_args *a)
{
	unsigned long long n;
	char *end;
	int k;

	switch (c) {
	case 'l':
		errno = 0;
		a->time_limit = strtod(v, &end);
		if (errno == 0 && end != v && *end == '\0' &&
		    isfinite(a->time_limit) && a->time_limit > 0)
			return true;
		pw_cmd_say("%s: --time-limit '%s' is not a number of seconds "
		    "above 0", cmd->name, v);
		return false;
	case 'I':
		if (cmd_parse_whole(v, 1, LONG_MAX, &n)) {
			a->iteration_limit = (long)n;
			return true;
		}
		pw_cmd_say("%s: --iteration-limit '%s' is not a whole number "
		    "from 1 to %ld", cmd->name, v, LONG_MAX);
		return false;
	case 'O':
		if ((k = pw_names_find(pw_objective_names, v)) >= 0) {
			a->objective = (enum pw_objective)k;
			a->objective_given = true;
			return true;
		}
		pw_cmd_say("%s: --objective '%s' is not %s or %s", cmd->name, v,
		    pw_objective_names[PW_OBJ_MAKESPAN],
		    pw_objective_names[PW_OBJ_SPAN]);
		return false;
	case 'x':
		if ((k = pw_names_find(pw_offload_mode_names, v)) >= 0) {
			a->offload = (enum pw_offload_mode)k;
			return true;
		}
		pw_cmd_say("%s: --offload '%s' is not %s, %s or %s", cmd->name,
		    v, pw_offload_mode_names[PW_OFFMODE_AUTO],
		    pw_offload_mode_names[PW_OFFMODE_ON],
		    pw_offload_mode_names[PW_OFFMODE_OFF]);
		return false;
	case 'K':
	case 'Z':
		if (cmd_parse_whole(v, c == 'K', CMD_PARSE_ITERATIONS_MAX, &n)) {
			*(c == 'K' ? &a->iterations : &a->warmup) = (int)n;
			return true;
		}
		pw_cmd_say("%s: --%s '%s' is not a whole number from %d to %d",
		    cmd->name, c == 'K' ? "iterations" : "warmup", v, c == 'K',
		    CMD_PARSE_ITERATIONS_MAX);
		return false;
	case 'n':
		if (cmd_parse_whole(v, 1, CMD_PARSE_TOP_MAX, &n)) {
			a->top = (size_t)n;
			return true;
		}
		pw_cmd_say("%s: --top '%s' is not a whole number from 1 to "
		    "%d", cmd->name, v, CMD_PARSE_TOP_MAX);
		return false;
	default:
		assert(c == 's');
		if (cmd_parse_whole(v, 0, PW_SEED_MAX, &n)) {
			a->seed = (unsigned long)n;
			return true;
		}
		pw_cmd_say("%s: --seed '%s' is not a whole number from 0 to "
		    "%lld", cmd->name, v, (long long)PW_SEED_MAX);
		return false;
	}
}

/* Keeps the value of model option C (the flag's "") in A; false when C
 * is no model option. */
static bool
cmd_parse_model(int c, struct pw_cmd_args *a)
{
	const char *letter;

	if (c <= 0 || (letter = strchr(PW_CMD_MODEL_LETTERS, c)) == NULL)
		return false;
	a->model[letter - PW_CMD_MODEL_LETTERS] = optarg != NULL ? optarg : "";
	return true;
}

/* Whether CMD's row takes the option of table row I (every row takes
 * --help). */
static bool
cmd_parse_takes(const struct pw_command *cmd, size_t i)
{
	return cmd_parse_table[i].val == 'h' ||
	    strchr(cmd->options, cmd_parse_table[i].val) != NULL;
}

/* Reports BAD ("--t", "--t=1") as ambiguous when it abbreviates more
 * than one of CMD's long options, naming them; false otherwise (glibc's
 * getopt_long, told to stay quiet, calls both unknown). */
static bool
cmd_parse_ambiguous(const struct pw_command *cmd, const char *bad)
{
	char names[512] = "";
	size_t i, len, used = 0;
	int matches = 0;

	/* "--=x" abbreviates nothing, whatever getopt_long makes of it. */
	len = strncmp(bad, "--", 2) == 0 ? strcspn(bad + 2, "=") : 0;
	if (len == 0)
		return false;
	for (i = 0; cmd_parse_table[i].name != NULL; i++) {
		if (!cmd_parse_takes(cmd, i) ||
		    strncmp(cmd_parse_table[i].name, bad + 2, len) != 0)
			continue;
		used += (size_t)snprintf(names + used, sizeof names - used,
		    "%s--%s", matches > 0 ? ", " : "", cmd_parse_table[i].name);
		matches++;
		assert(used < sizeof names);
	}
	if (matches < 2)
		return false;
	pw_cmd_say("%s: option '%.*s' is ambiguous: %s (try 'pipewright %s "
	    "--help')", cmd->name, (int)len + 2, bad, names, cmd->name);
	return true;
}

/* Reports what getopt_long refused (C, ':' for a missing value) at the
 * argument BAD: a missing value, a value given to a flag, an ambiguous
 * or unknown option. */
static void
cmd_parse_bad(const struct pw_command *cmd, int c, const char *bad)
{
	if (c == ':' && strncmp(bad, "--", 2) == 0)
		pw_cmd_say("%s: option '%s' needs a value (try 'pipewright %s "
		    "--help')", cmd->name, bad, cmd->name);
	else if (c == ':')
		pw_cmd_say("%s: option '-%c' needs a value (try 'pipewright "
		    "%s --help')", cmd->name, optopt, cmd->name);
	/* Long options leave optopt 0 and have been passed, but for a
	 * value given to a flag (--json=x). */
	else if (optopt != 0 && cmd_parse_flag_value(bad, optopt))
		pw_cmd_say("%s: option '%.*s' takes no value (try 'pipewright "
		    "%s --help')", cmd->name, (int)strcspn(bad, "="), bad,
		    cmd->name);
	else if (optopt != 0)
		pw_cmd_say("%s: unknown option '-%c' (try 'pipewright %s "
		    "--help')", cmd->name, optopt, cmd->name);
	else if (!cmd_parse_ambiguous(cmd, bad))
		pw_cmd_say("%s: unknown option '%s' (try 'pipewright %s "
		    "--help')", cmd->name, bad, cmd->name);
}

/* Whether ARG is one of LONGOPTS ("--model", "--model=x", "--mod" as
 * getopt_long abbreviates), "--" (the end of the options) or one of
 * SHORTOPTS ("-f", "-f1f1b") as given on a command line. */
static bool
cmd_parse_is_option(const struct option *longopts, const char *shortopts,
    const char *arg)
{
	size_t n;

	if (arg[0] != '-' || arg[1] == '\0')
		return false;
	/* getopt's own marks lead SHORTOPTS: "+" (stop at the first
	 * argument), ":" (tell a missing value apart). */
	shortopts += strspn(shortopts, "+:");
	if (arg[1] != '-')
		return arg[1] != ':' && strchr(shortopts, arg[1]) != NULL;
	n = strcspn(arg + 2, "=");
	if (n == 0)
		return true;
	for (; longopts->name != NULL; longopts++)
		if (strlen(longopts->name) >= n &&
		    strncmp(longopts->name, arg + 2, n) == 0)
			return true;
	return false;
}

/* getopt_long's tables of the options CMD's row names (and --help):
 * LONGOPTS [CMD_PARSE_NOPTIONS], ended by a null row, and SHORTOPTS
 * [2 * CMD_PARSE_NOPTIONS + 3]: the letters of all but the model
 * options (long only). */
static void
cmd_parse_getopt(const struct pw_command *cmd, struct option *longopts,
    char *shortopts)
{
	size_t i, nlong = 0, nshort = 0;

	/* A leading ':' makes getopt tell a missing argument apart; '+'
	 * stops at the first positional argument. */
	if (cmd->maxpos == PW_CMD_REST)
		shortopts[nshort++] = '+';
	shortopts[nshort++] = ':';
	for (i = 0; cmd_parse_table[i].name != NULL; i++) {
		if (!cmd_parse_takes(cmd, i))
			continue;
		longopts[nlong++] = cmd_parse_table[i];
		if (strchr(PW_CMD_MODEL_LETTERS, cmd_parse_table[i].val) !=
		    NULL)
			continue;
		shortopts[nshort++] = (char)cmd_parse_table[i].val;
		if (cmd_parse_table[i].has_arg == required_argument)
			shortopts[nshort++] = ':';
	}
	longopts[nlong] = cmd_parse_table[CMD_PARSE_NOPTIONS - 1];
	shortopts[nshort] = '\0';
}

/* Reads the options of ARGV that CMD's row names into A; returns
 * PW_CMD_GO with optind at the first positional argument, or the exit
 * status when the command is done. */
static int
cmd_parse_options(const struct pw_command *cmd, int argc, char **argv,
    struct pw_cmd_args *a)
{
	struct option longopts[CMD_PARSE_NOPTIONS];
	char shortopts[2 * CMD_PARSE_NOPTIONS + 3];
	bool seen[UCHAR_MAX + 1] = { false };
	const char *name;
	int c;

	cmd_parse_getopt(cmd, longopts, shortopts);
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (c > 0 && c <= UCHAR_MAX && (name = cmd_parse_name(c)) !=
		    NULL) {
			/* The first value would be silently dropped. */
			if (seen[c]) {
				pw_cmd_say("%s: --%s is given twice",
				    cmd->name, name);
				return PW_EXIT_INPUT;
			}
			seen[c] = true;
			if (optarg != NULL && optarg[0] == '\0' &&
			    strchr(CMD_PARSE_FILES, c) != NULL) {
				pw_cmd_say("%s: --%s needs a %s name, not an "
				    "empty one", cmd->name, name, c == 'd' ?
				    "directory" : "file");
				return PW_EXIT_INPUT;
			}
		}
		/* "--problem --model x", "-o -f 1f1b": the value
		 * forgotten, the next option taken for it; any file's name
		 * that starts with '-' is taken for one ("-" alone is stdin
		 * or stdout; ./-f names such a file). */
		if (optarg != NULL && optarg == argv[optind - 1] &&
		    (name = cmd_parse_name(c)) != NULL &&
		    (strchr(CMD_PARSE_FILES, c) != NULL ? optarg[0] == '-' &&
		    optarg[1] != '\0' : cmd_parse_is_option(longopts, shortopts,
		    optarg))) {
			if (strchr(CMD_PARSE_FILES, c) != NULL)
				pw_cmd_say("%s: --%s needs a %s name before %s "
				    "(a file of that name: ./%s)", cmd->name,
				    name, c == 'd' ? "directory" : "file",
				    optarg, optarg);
			else
				pw_cmd_say("%s: --%s needs a value before %s",
				    cmd->name, name, optarg);
			return PW_EXIT_INPUT;
		}
		if (cmd_parse_model(c, a))
			continue;
		switch (c) {
		case 'h':
			pw_command_usage(stdout, cmd);
			return PW_EXIT_OK;
		case 'f':
			a->family = optarg;
			break;
		case 'o':
			a->output = optarg;
			a->output_given = true;
			break;
		case 't':
			a->format = optarg;
			break;
		case 'w':
		case 'G':
			/* The range is the command's (show's columns,
			 * export's pixels): it says it. */
			if (!cmd_parse_size(optarg, c == 'w' ? &a->width :
			    &a->height)) {
				pw_cmd_say("%s: --%s '%s' is not a whole"
				    " number of at least 1", cmd->name,
				    cmd_parse_name(c), optarg);
				return PW_EXIT_INPUT;
			}
			*(c == 'w' ? &a->width_text : &a->height_text) =
			    optarg;
			break;
		case 'j':
			a->json = true;
			break;
		case 'J':
			a->csv = true;
			break;
		case 'Q':
			for (a->sort = 0; a->sort < PW_COMPARE_NSORTS &&
			    strcmp(optarg, pw_compare_sorts[a->sort]) != 0;
			    a->sort++)
				;
			if (a->sort == PW_COMPARE_NSORTS) {
				pw_cmd_say("%s: --sort '%s' is not makespan, "
				    "memory, bubble or name", cmd->name,
				    optarg);
				return PW_EXIT_INPUT;
			}
			break;
		case 'c':
			a->critical = true;
			break;
		case 'd':
			a->write_dir = optarg;
			break;
		case 'F':
			a->from = optarg;
			break;
		case 'W':
			a->write_lp = optarg;
			break;
		case 'a':
			a->ascii = true;
			break;
		case 'm':
			a->mono = true;
			break;
		case 'k':
			a->keys = true;
			break;
		case 'B':
			a->backend = optarg;
			break;
		case 'u':
			if (!pw_parse_int(optarg, 1, CMD_PARSE_GPUS_MAX,
			    &a->gpus)) {
				pw_cmd_say("%s: --gpus '%s' is not a whole"
				    " number from 1 to %d", cmd->name, optarg,
				    CMD_PARSE_GPUS_MAX);
				return PW_EXIT_INPUT;
			}
			break;
		case 'U':
			a->transport = optarg;
			break;
		case 'A':
			a->workload = optarg;
			break;
		case 'Y':
			a->no_check = true;
			break;
		case 'E':
			a->dry_run = true;
			break;
		case 'g':
			a->against = optarg;
			break;
		case 'i':
			a->predicted = true;
			break;
		case 'V':
			a->problem = optarg;
			break;
		case 'K':
		case 'Z':
		case 'n':
		case 'l':
		case 'I':
		case 'O':
		case 'x':
		case 's':
			if (!cmd_parse_solve(cmd, c, optarg, a))
				return PW_EXIT_INPUT;
			break;
		default:
			cmd_parse_bad(cmd, c, argv[optind - 1]);
			return PW_EXIT_INPUT;
		}
	}

	return PW_CMD_GO;
}

int
pw_cmd_parse(const struct pw_command *cmd, int argc, char **argv,
    struct pw_cmd_args *a)
{
	int i, npos, first = 1, status;

	assert(cmd->maxpos <= (int)(sizeof a->pos / sizeof a->pos[0]));
	memset(a, 0, sizeof *a);
	a->cmd = cmd;
	a->output = "-";
	a->objective = PW_OBJ_MAKESPAN;
	a->offload = PW_OFFMODE_AUTO;
	a->seed = 1;
	a->warmup = -1;
	if (cmd->options != NULL) {
		if ((status = cmd_parse_options(cmd, argc, argv, a)) !=
		    PW_CMD_GO)
			return status;
		first = optind;
	}

	npos = argc - first;
	/* The model options stand for PROBLEM (or FILE, with --family). */
	if (npos < cmd->minpos && a->model[PW_CMD_M_MODEL] == NULL) {
		pw_cmd_say("%s: missing an argument (usage: pipewright %s %s)",
		    cmd->name, cmd->name, cmd->synopsis);
		return PW_EXIT_INPUT;
	}
	if (cmd->maxpos == PW_CMD_REST || cmd->maxpos == PW_CMD_MANY) {
		a->rest = argv + first;
		a->nrest = npos;
		return PW_CMD_GO;
	}
	if (npos > cmd->maxpos) {
		pw_cmd_say("%s: unexpected argument '%s' (usage: pipewright"
		    " %s %s)", cmd->name, argv[first + cmd->maxpos], cmd->name,
		    cmd->synopsis);
		return PW_EXIT_INPUT;
	}
	for (i = 0; i < npos; i++) {
		a->pos[i] = argv[first + i];
		/* A command with options takes files as its arguments (help,
		 * the one without, takes a command's name). */
		if (cmd->options != NULL && a->pos[i][0] == '\0') {
			pw_cmd_say("%s: an empty argument where a file name "
			    "belongs", cmd->name);
			return PW_EXIT_INPUT;
		}
	}
	/* Costs for a file that has its own would be silently unused. */
	if (a->problem != NULL && (a->pos[0] == NULL ||
	    !pw_torch_is_csv(a->pos[0]))) {
		pw_cmd_say("%s: --problem gives the costs of a PyTorch schedule"
		    " CSV (FILE.csv), and %s is none", cmd->name,
		    a->pos[0] == NULL ? "there" : pw_cmd_label(a->pos[0]));
		return PW_EXIT_INPUT;
	}
	return pw_cmd_model_usage(a) ? PW_CMD_GO : PW_EXIT_INPUT;
}
