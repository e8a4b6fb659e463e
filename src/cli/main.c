/*
 * main.c - the pipewright program: the command table, help and dispatch.
 * A command's row declares its options and arguments (cmd_parse.c reads
 * them); what it does lives in cmd_*.c; docs/cli.md documents them all.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipewright.h"
#include "cmd.h"
#include "runtime.h"

static int	main_help(const struct pw_cmd_args *);

static const struct pw_command main_commands[] = {
	{ "schedule", "[PROBLEM | MODEL OPTIONS] --family NAME [-o FILE]",
	  "build a family's schedule for a problem and time it",
	  "PROBLEM is a problem file or a schedule file (whose problem is\n"
	  "used), or the model options' problem (below); without either,\n"
	  "the built-in default problem.  The timed\n"
	  "schedule goes to FILE as JSON and its metrics to stdout, or to\n"
	  "stderr when the schedule goes to stdout.  A schedule over a\n"
	  "memory limit is still written (exit 0); its metrics say which\n"
	  "device is over and by how much.  Without -o on a terminal, the\n"
	  "metrics and a hint, not the JSON.  Then the Megatron-LM flags\n"
	  "that run the same schedule, or why Megatron has none\n"
	  "(docs/interop.md).\n"
	  "\n"
	  "  -f, --family NAME   the schedule family (below)\n"
	  "  -o, --output FILE   where to write (default \"-\": stdout)\n",
	  PW_CMD_LIST_FAMILIES | PW_CMD_LIST_MODEL, "fo" PW_CMD_MODEL_OPTIONS "X",
	  0, 1, pw_cmd_schedule },
	{ "problem", "[PROBLEM | MODEL OPTIONS] [-o FILE]",
	  "write a problem file (the built-in default one without PROBLEM)",
	  "Reads PROBLEM (a problem or a schedule file) and writes its\n"
	  "problem as a pipewright.problem.v1 file: a starting point to\n"
	  "edit, or the problem inside a schedule; or the model options'\n"
	  "problem (below), its model, hardware and split kept.  A FILE\n"
	  "ending in .lua gets a problem script instead (docs/lua.md).\n"
	  "\n"
	  "  -o, --output FILE   where to write (default \"-\": stdout)\n",
	  PW_CMD_LIST_MODEL, "o" PW_CMD_MODEL_OPTIONS "X", 0, 1,
	  pw_cmd_problem },
	{ "eval", "FILE [--json] [--critical] [--predicted] [--problem PROBLEM] "
	  "[--family NAME [MODEL OPTIONS]] | --against PREDICTED MEASURED "
	  "[--json]",
	  "the metrics of a schedule file, or its critical path",
	  "The orders of FILE are the schedule: its ops are simulated\n"
	  "again and the metrics come from the recomputed times (a line\n"
	  "on stderr says so when they differ from the stored ones).\n"
	  "Exit 0 even when the schedule breaks a memory limit; the\n"
	  "output says so.  The JSON object ends with every op, its\n"
	  "times and its slack (how much later it could start with the\n"
	  "makespan kept).  A measured file (launch -o) gives the metrics\n"
	  "of its measured timeline (the header says so) unless\n"
	  "--predicted.\n"
	  "\n"
	  "--against PREDICTED compares the measured run of MEASURED\n"
	  "with the schedule file PREDICTED simulated: the step time,\n"
	  "each device's busy time and peak, every op by the error of its\n"
	  "duration, and the mean absolute error.\n"
	  "\n"
	  "--critical prints the critical path instead: from the first\n"
	  "op to the one that ends last, each op with where it runs, its\n"
	  "start and end, and the constraint that binds its start (the\n"
	  "order of its device or channel, a dependency and its delay, a\n"
	  "reload's anchor); then the total: the durations and delays\n"
	  "that add up to the makespan.\n"
	  "\n"
	  "  -j, --json          print the metrics as one JSON object\n"
	  "  -c, --critical      print the critical path (with --json,\n"
	  "                      as JSON)\n"
	  "  -f, --family NAME   FILE is a problem (or the model options\n"
	  "                      stand for it): use that family's schedule\n"
	  "  --against PREDICTED the schedule FILE's measured run is of\n"
	  "  --predicted         a measured file's simulated times\n"
	  "  --problem PROBLEM   the costs of FILE when it is a PyTorch\n"
	  "                      schedule CSV (docs/interop.md)\n",
	  PW_CMD_LIST_FAMILIES | PW_CMD_LIST_MODEL, "jcfgiV" PW_CMD_MODEL_OPTIONS
	  "X", 1, 1, pw_cmd_eval },
	{ "check", "FILE [--problem PROBLEM]",
	  "verify a schedule file's stored times from first principles",
	  "Checks every op present once, durations, dependencies with\n"
	  "their communication, one op at a time per device and channel,\n"
	  "and memory within every limit, independently of the simulator.\n"
	  "A measured file (launch -o) checks its measured timeline:\n"
	  "durations as measured, across devices causality.\n"
	  "Prints \"FILE: valid (N ops)\" or every violation and their\n"
	  "count.  Exit 0 valid, 1 violations, 2 unreadable.  A PyTorch\n"
	  "schedule CSV checks its simulated times.\n"
	  "\n"
	  "  --problem PROBLEM   the costs of FILE when it is a PyTorch\n"
	  "                      schedule CSV (docs/interop.md)\n",
	  0, "V", 1, 1, pw_cmd_check },
	{ "compare", "[PROBLEM | MODEL OPTIONS] [--sort makespan|memory|bubble|"
	  "name] [--json | --csv]",
	  "every schedule family on a problem in one table",
	  "PROBLEM is a problem file or a schedule file (whose problem is\n"
	  "used); without it, the built-in default problem.  The first\n"
	  "line names the best schedule within every limit (or says none\n"
	  "keeps them).  One row per family: makespan, bubble rate, idle\n"
	  "share (all devices' idle / (devices x makespan)), total idle,\n"
	  "the largest peak, the device nearest to (or furthest over) its\n"
	  "limit, and whether the schedule fits or why not; then each\n"
	  "device's peak against its limit.  When the busiest device's\n"
	  "work (f + b + w) exceeds what a rebalance of the layers reaches\n"
	  "(the best split's bottleneck; given stages: the devices' mean) by\n"
	  "more than 10%, a warning names the command that rebalances the\n"
	  "split (plan); with --json or --csv it goes to stderr.\n"
	  "\n"
	  "  --sort KEY          makespan (default), memory (the largest\n"
	  "                      peak), bubble or name; families without a\n"
	  "                      schedule last\n"
	  "  -j, --json          the table as one JSON object\n"
	  "  --csv               the table as CSV (RFC 4180)\n",
	  PW_CMD_LIST_FAMILIES | PW_CMD_LIST_MODEL, "QjJ" PW_CMD_MODEL_OPTIONS "X",
	  0, 1, pw_cmd_compare },
	{ "show", "FILE [--width N] [--from T] [--to T] [--predicted] "
	  "[--problem PROBLEM] [--family NAME [MODEL OPTIONS]]",
	  "a text Gantt chart of a schedule",
	  "One row per device and per used channel, as wide as the\n"
	  "terminal when stdout is one, else $COLUMNS, else 100 columns.\n"
	  "A measured file (launch -o) draws its measured timeline, a\n"
	  "header line says so.\n"
	  "\n"
	  "  -w, --width N       columns to use (at least 40 are)\n"
	  "  -F, --from T        draw from T seconds after the start\n"
	  "  -t, --to T          draw up to T seconds after the start\n"
	  "  --predicted         a measured file's simulated timeline\n"
	  "  -f, --family NAME   FILE is a problem (or the model options\n"
	  "                      stand for it): use that family's schedule\n"
	  "  --problem PROBLEM   the costs of FILE when it is a PyTorch\n"
	  "                      schedule CSV (docs/interop.md)\n",
	  PW_CMD_LIST_FAMILIES | PW_CMD_LIST_MODEL, "wFtfiV" PW_CMD_MODEL_OPTIONS
	  "X", 1, 1, pw_cmd_show },
	{ "export", "FILE --to FORMAT [-o OUT] [--width PX] [--height PX] "
	  "[--predicted] [--problem PROBLEM] [--family NAME [MODEL OPTIONS]]",
	  "write a schedule as a trace or a picture",
	  "OUT is written atomically: on failure it is left as it was.\n"
	  "A measured file (launch -o) exports its measured timeline.\n"
	  "\n"
	  "  -t, --to FORMAT     the format (below)\n"
	  "  -o, --output OUT    where to write (default \"-\": stdout)\n"
	  "  -w, --width PX      svg, png: the picture's width (320 to\n"
	  "                      16384 pixels; default 1200)\n"
	  "  -G, --height PX     svg, png: its height (120 to 16384; default\n"
	  "                      as its rows need), the rows scaled to fit\n"
	  "  --predicted         a measured file's simulated timeline\n"
	  "  -f, --family NAME   FILE is a problem (or the model options\n"
	  "                      stand for it): use that family's schedule\n"
	  "  --problem PROBLEM   the costs of FILE when it is a PyTorch\n"
	  "                      schedule CSV (docs/interop.md)\n",
	  PW_CMD_LIST_FORMATS | PW_CMD_LIST_FAMILIES | PW_CMD_LIST_MODEL,
	  "towGfiV" PW_CMD_MODEL_OPTIONS "X", 1, 1, pw_cmd_export },
	{ "script", "[--write-dir DIR] FILE [ARGS...]",
	  "run a Lua script: a problem, a sweep, an experiment",
	  "Runs FILE, Lua 5.4 source, with the module pipewright as the\n"
	  "global pw and the global arg = { [0] = FILE, ARGS... }\n"
	  "(docs/lua.md).  Scripts write files only through pw.write_json\n"
	  "and pw.write_csv, only below the current directory or DIR, and\n"
	  "atomically.  An error names the file and line, with a\n"
	  "traceback; exit 2.  Every command that takes a problem file also\n"
	  "takes a problem script (NAME.lua returning pw.problem{...}).\n"
	  "\n"
	  "  -d, --write-dir DIR also let the script write below DIR\n",
	  0, "d", 1, PW_CMD_REST, pw_cmd_script },
	{ "solve", "PROBLEM|MODEL OPTIONS [--from FAMILY|FILE] [--time-limit S] "
	  "[--iteration-limit N] [--objective makespan|span] "
	  "[--offload auto|on|off] [--seed N] [-o FILE] [--write-lp FILE]",
	  "optimize a schedule under the memory limits (lp_solve MILP)",
	  "Starts from the best family schedule that keeps every limit (or\n"
	  "the one given), improves it with a memory-aware list scheduler\n"
	  "and mixed-integer programs (the whole model when it is small,\n"
	  "else windows of a large-neighbourhood search) and writes the\n"
	  "best schedule found to FILE, atomically (without -o on a\n"
	  "terminal, only the report and a hint).  Progress goes to\n"
	  "stderr, one line per phase and improvement; then the metrics,\n"
	  "the objective, its lower bound, the gap (objective - bound) /\n"
	  "objective, the strongest bounds of the problem for the makespan\n"
	  "and the span (each named), the start, the model's size and why\n"
	  "the search ended (docs/solver.md).  What it proves is for the\n"
	  "problem's stages: \"optimal\" is optimal for this split and\n"
	  "layout ('pipewright plan' searches the split).  The same\n"
	  "input, options and seed give the same schedule on every run\n"
	  "unless the time limit ends the search: --iteration-limit ends\n"
	  "it at the same point on every run.  Ctrl-C or SIGTERM stops\n"
	  "the search and writes the best schedule so far\n"
	  "(\"cancelled\"); a second one quits at once.\n"
	  "\n"
	  "  -F, --from FAMILY|FILE  start from a family or a schedule\n"
	  "                      file (or PyTorch schedule CSV) for\n"
	  "                      PROBLEM\n"
	  "  -l, --time-limit S  seconds to search (default 10)\n"
	  "  -I, --iteration-limit N\n"
	  "                      also stop after N lp_solve simplex\n"
	  "                      iterations in all (default: none)\n"
	  "  -O, --objective makespan|span\n"
	  "                      one iteration's makespan (default), or\n"
	  "                      the largest device span (Zero Bubble's)\n"
	  "  -x, --offload auto|on|off\n"
	  "                      offload where it helps (default); on:\n"
	  "                      also start from offloading families;\n"
	  "                      with --model, off also leaves out the\n"
	  "                      model's PCIe link\n"
	  "  -s, --seed N        the search's seed (default 1)\n"
	  "  -o, --output FILE   where to write (default \"-\": stdout)\n"
	  "  -W, --write-lp FILE the whole model in LP format (lp_solve)\n",
	  PW_CMD_LIST_FAMILIES | PW_CMD_LIST_MODEL, "FlIOxsWo"
	  PW_CMD_MODEL_OPTIONS, 1, 1, pw_cmd_solve },
	{ "plan", "[PROBLEM | MODEL OPTIONS] [--time-limit S] [--top N] "
	  "[--objective makespan|span] [-o FILE] [--json] "
	  "[--iteration-limit N] [--seed N] [--offload auto|on|off]",
	  "search the split, layout, recomputation, offload and schedule",
	  "For a model's problem (the built-in default problem, a Lua\n"
	  "problem of pw.model, a problem file that records its model, or\n"
	  "the model options below) searches the whole design: the layer\n"
	  "split (uneven, the embedding and the LM head where they fall),\n"
	  "stages per device, loop or V placement, recomputation, offload\n"
	  "and the schedule (every family that applies, then the optimizer\n"
	  "on the most promising candidates); docs/planner.md.  For a\n"
	  "problem with given stages the split is fixed (it says so): only\n"
	  "the schedule and offload are searched.  Progress goes to stderr\n"
	  "at least once a second (on a terminal, one line rewritten);\n"
	  "then a table of the best candidates: split, layout, schedule,\n"
	  "step time, bubble rate, idle share, peak against the limit, the\n"
	  "candidate's lower bound (named) and gap.  -o writes the best\n"
	  "schedule, its problem the chosen split, atomically (\"-\": to\n"
	  "stdout, the table then on stderr).  A run that ends by its\n"
	  "iteration limit or having searched everything gives the same\n"
	  "answer for the same input, options and seed on every run; one\n"
	  "the time limit ends may not.  Ctrl-C or SIGTERM stops the\n"
	  "search and keeps the best so far (\"cancelled\"); a second one\n"
	  "quits at once.\n"
	  "\n"
	  "  -l, --time-limit S  seconds to search (default 60)\n"
	  "  -n, --top N         candidates listed, 1 to 1000 (default 10)\n"
	  "  -O, --objective makespan|span\n"
	  "                      rank by the makespan (default) or the\n"
	  "                      largest device span\n"
	  "  -o, --output FILE   write the best schedule to FILE\n"
	  "  -j, --json          print the candidates as one JSON object\n"
	  "  -I, --iteration-limit N\n"
	  "                      lp_solve iterations and local-search moves\n"
	  "                      per optimizer run, and the split moves in\n"
	  "                      all (default: none)\n"
	  "  -s, --seed N        the search's seed (default 1)\n"
	  "  -x, --offload auto|on|off\n"
	  "                      designs with and without the model's PCIe\n"
	  "                      link (default), only with, only without\n",
	  PW_CMD_LIST_MODEL, "lnOojIsx" PW_CMD_MODEL_OPTIONS, 0, 1,
	  pw_cmd_plan },
	{ "design", "[PROBLEM|SCHEDULE | MODEL OPTIONS] [--ascii] [--mono] "
	  "[--keys]",
	  "the terminal designer: see a schedule, edit it, optimize it",
	  "Opens a full-screen timeline of a schedule (docs/designer.md):\n"
	  "each device's ops, transfers and memory over time, the selected\n"
	  "op's details and the critical path.  Edit the orders, pin pairs\n"
	  "of ops, change the constraints, run the optimizer in the\n"
	  "background, compare schedules, sweep the memory limit, save.\n"
	  "PROBLEM is a problem file or a Lua problem script (the best\n"
	  "family's schedule is shown); SCHEDULE a schedule file; or the\n"
	  "model options' problem (below); without any, the built-in\n"
	  "default problem.  '?' lists the keys.\n"
	  "Needs a terminal on stdin and stdout and TERM set (not dumb).\n"
	  "Unsaved changes are kept in a recovery file beside the file\n"
	  "(.NAME.pw-recover), which the next design of it offers to\n"
	  "restore.\n"
	  "\n"
	  "  -a, --ascii         ASCII glyphs only (default: when the\n"
	  "                      locale is not UTF-8)\n"
	  "  -m, --mono          no colours (default: when NO_COLOR is set,\n"
	  "                      TERM is vt100 or the terminal has none)\n"
	  "  -k, --keys          print the key table and exit\n",
	  PW_CMD_LIST_MODEL, "amk" PW_CMD_MODEL_OPTIONS "X", 0, 1,
	  pw_cmd_design },
	{ "launch", "FILE|PROBLEM | MODEL OPTIONS [--family NAME] "
	  "[--backend cpu|cuda] [--gpus N] [--transport local|mpi] "
	  "[--iterations K] "
	  "[--warmup N] [--workload hidden=H,ffn=F,tokens=T,layers=L] "
	  "[--seed N] [--memory-limit BYTES] [--no-check] [--dry-run] "
	  "[-o FILE] [--json]",
	  "run a schedule for real, measure it, compare with its prediction",
	  "FILE, a schedule file, runs as it is; a problem (a file, a Lua\n"
	  "problem script or the model options) runs its best family\n"
	  "within the limits, or --family's.  Each stage computes MLP\n"
	  "blocks of GEMMs (no attention; docs/runtime.md), shaped from\n"
	  "the problem's model and scaled down on the CPU, or as\n"
	  "--workload says; the schedule runs unchanged on the workload's\n"
	  "own problem, whose bytes are what the workload keeps.  Before\n"
	  "it starts, the schedule is checked: a broken dependency or pin,\n"
	  "or a predicted peak above --memory-limit, is refused (exit 2)\n"
	  "naming the violation or the device.  Progress goes to stderr,\n"
	  "one line per iteration; then the step time (the median of the\n"
	  "measured iterations), the loss, the gradients against the\n"
	  "sequential computation of the same model, and measured against\n"
	  "predicted: the step time, each device's busy time and peak, and\n"
	  "the 5 ops that differ most.  Ctrl-C or SIGTERM stops every\n"
	  "worker (exit 4); a second one quits at once.  A failure during\n"
	  "the run (a worker's error, a lost rank, gradients off by more\n"
	  "than the run's arithmetic allows: fp32 1e-5, bf16 1e-2) is one\n"
	  "line naming the device and the op,\n"
	  "exit 4.  Under 'mpirun -np P' with --transport mpi, one process\n"
	  "per device: rank 0 reads, reports and writes.\n"
	  "PIPEWRIGHT_FAIL_AT=DEVICE:OP (\"1:F(1,2)\") makes that device's\n"
	  "worker fail at that op, and PIPEWRIGHT_WIRE=host hands tensors\n"
	  "over a host wire in the order NCCL transfers get: testing aids.\n"
	  "\n"
	  "  -f, --family NAME   run that family's schedule of PROBLEM\n"
	  "  --backend cpu|cuda  where the ops run (default: cuda when built\n"
	  "                      and a GPU is visible, else cpu)\n"
	  "  --gpus N            cuda: the first N GPUs (default: every one\n"
	  "                      visible); fewer than the devices is an\n"
	  "                      emulation, devices sharing a GPU\n"
	  "  --transport local|mpi\n"
	  "                      threads of this process (default), or one\n"
	  "                      process per device under mpirun or srun\n"
	  "  --iterations K      measured iterations (default 5)\n"
	  "  --warmup N          iterations before them, not measured\n"
	  "                      (default 1)\n"
	  "  --workload SPEC     the shape: any of hidden=H, ffn=F,\n"
	  "                      tokens=T (per microbatch), layers=L (per\n"
	  "                      stage)\n"
	  "  -s, --seed N        weights, inputs and targets (default 1)\n"
	  "  --memory-limit BYTES\n"
	  "                      every device's limit (60GiB, 8e10, none)\n"
	  "  --no-check          skip the sequential computation\n"
	  "  --dry-run           print the workload's problem as JSON, run\n"
	  "                      nothing\n"
	  "  -o, --output FILE   write the measured schedule, atomically\n"
	  "                      (\"-\": stdout, the report then on stderr)\n"
	  "  -j, --json          print the report as one JSON object\n"
	  "  --problem PROBLEM   the costs of FILE when it is a PyTorch\n"
	  "                      schedule CSV (docs/interop.md)\n",
	  PW_CMD_LIST_FAMILIES | PW_CMD_LIST_MODEL | PW_CMD_OWN_LIMIT,
	  "fBUKZuAsYEojV" PW_CMD_MODEL_OPTIONS "X", 1, 1, pw_cmd_launch },
	{ "calibrate", "MEASURED... [-o FILE.lua|FILE.json]",
	  "fit a problem's costs to measured runs",
	  "Fits each stage's f, b and w (the means of its measured\n"
	  "durations over every iteration), its comm (the mean of an\n"
	  "arrival less the sender's end, over the shown iterations) and\n"
	  "the link's bandwidths and latency (least squares over the\n"
	  "transfers) to one or more measured files of one problem (the\n"
	  "first's is the base; the others must match it), and prints the\n"
	  "fit per stage, the link, the residual, and for each run the\n"
	  "calibrated prediction: its schedule simulated on the calibrated\n"
	  "problem against its measured step time, and the same before\n"
	  "calibration.\n"
	  "\n"
	  "  -o, --output FILE   the calibrated problem, atomically: a\n"
	  "                      problem file (.json) or a Lua problem\n"
	  "                      script (.lua) that returns it\n",
	  0, "o", 1, PW_CMD_MANY, pw_cmd_calibrate },
	{ "help", "[COMMAND]",
	  "the list of commands, or one command's help",
	  "'pipewright COMMAND --help' is 'pipewright help COMMAND'.\n",
	  0, NULL, 0, 1, main_help },
};

static const size_t main_ncommands = sizeof main_commands /
    sizeof main_commands[0];

/* The exit statuses (enum pw_exit), which help and the man page list. */
static const struct {
	int	status;
	const char *meaning;
} main_exits[] = {
	{ PW_EXIT_OK, "ok" },
	{ PW_EXIT_INVALID, "invalid schedule (check)" },
	{ PW_EXIT_INPUT, "bad input or usage" },
	{ PW_EXIT_INTERNAL, "internal error" },
	{ PW_EXIT_RUNTIME, "a launch that failed or was stopped" },
};

static const size_t main_nexits = sizeof main_exits / sizeof main_exits[0];

static const struct pw_command *
main_find(const char *name)
{
	size_t i;

	for (i = 0; i < main_ncommands; i++) {
		if (strcmp(main_commands[i].name, name) == 0)
			return &main_commands[i];
	}
	return NULL;
}

/* CMD's usage line, wrapped before 80 columns between its arguments
 * (never inside brackets), the lines after the first indented under
 * the first argument. */
static void
main_synopsis(FILE *fp, const struct pw_command *cmd)
{
	const char *s = cmd->synopsis, *word;
	int indent, col, depth, len;

	indent = col = fprintf(fp, "usage: pipewright %s", cmd->name);
	while (*s != '\0') {
		while (*s == ' ')
			s++;
		/* One argument: up to a blank outside brackets. */
		for (word = s, depth = 0; *s != '\0' && (*s != ' ' ||
		    depth > 0); s++)
			depth += (*s == '[') - (*s == ']');
		len = (int)(s - word);
		if (len == 0)
			break;
		if (col > indent && col + 1 + len >= 80)
			col = fprintf(fp, "\n%*s", indent, "") - 1;
		col += fprintf(fp, " %.*s", len, word);
	}
	fputc('\n', fp);
}

void
pw_command_usage(FILE *fp, const struct pw_command *cmd)
{
	main_synopsis(fp, cmd);
	fprintf(fp, "\n%s.\n\n%s", cmd->summary, cmd->help);
	/* Before the registries, which scripts read to the end. */
	if (cmd->lists & PW_CMD_LIST_MODEL)
		pw_cmd_model_help(fp, cmd);
	if (cmd->lists & PW_CMD_LIST_FAMILIES) {
		fprintf(fp, "\nfamilies:\n");
		pw_cmd_list(fp, PW_CMD_LIST_FAMILIES);
	}
	if (cmd->lists & PW_CMD_LIST_FORMATS) {
		fprintf(fp, "\nformats:\n");
		pw_cmd_list(fp, PW_CMD_LIST_FORMATS);
	}

}

static void
main_usage(FILE *fp)
{
	char item[128];
	size_t i;
	int col, len;

	fprintf(fp, "usage: pipewright [COMMAND [ARGS]]\n\n"
	    "Designs pipeline-parallel training schedules.  Without a\n"
	    "command it opens the terminal designer on the built-in default\n"
	    "problem when stdin and stdout are terminals, and otherwise\n"
	    "compares every schedule family on it.\n\ncommands:\n");
	for (i = 0; i < main_ncommands; i++) {
		fprintf(fp, "  %-10s %s\n", main_commands[i].name,
		    main_commands[i].summary);
	}
	fprintf(fp, "\n'pipewright help COMMAND' or 'pipewright COMMAND --help'"
	    " tells more.\n");
	col = fprintf(fp, "Exit status:");
	for (i = 0; i < main_nexits; i++) {
		len = snprintf(item, sizeof item, "%d %s%s", main_exits[i].status,
		    main_exits[i].meaning, i + 1 < main_nexits ? "," : ".");
		if (col + 1 + len >= 80)
			col = fprintf(fp, "\n") - 1;
		col += fprintf(fp, "%s%s", col > 0 ? " " : "", item);
	}
	fputc('\n', fp);
}

/* S as roff text: a backslash escaped, a line's leading '.' or '\''
 * (a request) made text. */
static void
main_roff(FILE *fp, const char *s)
{
	bool bol = true;

	for (; *s != '\0'; s++) {
		if (bol && (*s == '.' || *s == '\''))
			fputs("\\&", fp);
		if (*s == '\\')
			fputs("\\e", fp);
		else if (*s == '-')
			fputs("\\-", fp);
		else
			fputc(*s, fp);
		bol = *s == '\n';
	}
}

/* The man page, pipewright(1), from the command table and the registries
 * each command's help lists: what make writes as pipewright.1. */
static void
main_man(FILE *fp)
{
	char *text;
	size_t i, len;
	FILE *mem;

	fprintf(fp, ".TH PIPEWRIGHT 1 \"\" \"pipewright %s\" \"User Commands\"\n"
	    ".SH NAME\npipewright \\- design, simulate, optimize and run "
	    "pipeline\\-parallel training schedules\n.SH SYNOPSIS\n"
	    ".B pipewright\n.RI [ COMMAND \" \" [ ARGS ]]\n.br\n"
	    ".B pipewright \\-\\-version\n.SH DESCRIPTION\n", PACKAGE_VERSION);
	fprintf(fp, "Without a command it opens the terminal designer on the "
	    "built\\-in default problem when stdin and stdout are terminals, "
	    "and otherwise compares every schedule family on it.\n"
	    "Each command's section below is its \n.B \\-\\-help\n"
	    "text.\n.SH COMMANDS\n");
	for (i = 0; i < main_ncommands; i++) {
		if ((mem = open_memstream(&text, &len)) == NULL) {
			fprintf(stderr, "pipewright: out of memory\n");
			abort();
		}
		pw_command_usage(mem, &main_commands[i]);
		fclose(mem);
		fprintf(fp, ".SS %s\n.nf\n", main_commands[i].name);
		main_roff(fp, text);
		fprintf(fp, ".fi\n");
		free(text);
	}
	fprintf(fp, ".SH EXIT STATUS\n");
	for (i = 0; i < main_nexits; i++)
		fprintf(fp, ".TP\n.B %d\n%s\n", main_exits[i].status,
		    main_exits[i].meaning);
	fprintf(fp, ".SH SEE ALSO\nThe documentation in the source tree's "
	    "docs/: cli.md (every command), format.md (the files), "
	    "families.md, solver.md, planner.md, runtime.md, designer.md, "
	    "lua.md, interop.md.\n");
}

/* Its row has no options: a command's name is an argument even when it
 * starts with '-', and "help --help" is help's own. */
static int
main_help(const struct pw_cmd_args *a)
{
	const struct pw_command *cmd;

	if (a->pos[0] == NULL) {
		main_usage(stdout);
		return PW_EXIT_OK;
	}
	/* Not listed: what make runs to write pipewright.1. */
	if (strcmp(a->pos[0], "--man") == 0) {
		main_man(stdout);
		return PW_EXIT_OK;
	}
	if (strcmp(a->pos[0], "--help") == 0 || strcmp(a->pos[0], "-h") == 0) {
		pw_command_usage(stdout, a->cmd);
		return PW_EXIT_OK;
	}
	if ((cmd = main_find(a->pos[0])) == NULL) {
		pw_cmd_say("help: unknown command '%s' (try 'pipewright"
		    " help')", a->pos[0]);
		return PW_EXIT_INPUT;
	}
	pw_command_usage(stdout, cmd);
	return PW_EXIT_OK;
}

/* Runs CMD on ARGV (ARGV[0] is its name) as its row says. */
static int
main_run(const struct pw_command *cmd, int argc, char **argv)
{
	struct pw_cmd_args a;
	bool silent;
	int status;

	/* Under a launcher every rank parses the same command line and
	 * fails alike: a bad option is said once, by rank 0, whose status
	 * is the job's.  The others end with 0, since a launcher ends the
	 * job at the first rank that fails, which could stop rank 0 before
	 * it says why. */
	silent = cmd->run == pw_cmd_launch && pw_rt_launcher_rank() > 0;
	pw_cmd_silence(silent);
	status = pw_cmd_parse(cmd, argc, argv, &a);
	pw_cmd_silence(false);
	if (status != PW_CMD_GO)
		return silent ? PW_EXIT_OK : status;
	return cmd->run(&a);
}

/*
 * The main job, run when no command is given: the terminal designer on
 * the built-in default problem when this terminal can have it, else the
 * comparison report on it (pipes, files, TERM=dumb).  This is the one
 * place that decides it.
 */
static int
main_job(void)
{
	char *argv[] = { NULL, NULL };

	argv[0] = (char *)(pw_cmd_design_usable() ? "design" : "compare");
	return main_run(main_find(argv[0]), 1, argv);
}

static int
main_dispatch(int argc, char **argv)
{
	const struct pw_command *cmd;

	if (argc < 2)
		return main_job();
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
		return main_run(main_find("help"), argc - 1, argv + 1);
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		/* As every other command: no argument goes unread. */
		if (argc > 2) {
			pw_cmd_say("%s: unexpected argument '%s'", argv[1],
			    argv[2]);
			return PW_EXIT_INPUT;
		}
		printf("pipewright %s\n", PACKAGE_VERSION);
		return PW_EXIT_OK;
	}
	if (argv[1][0] == '-') {
		pw_cmd_say("unknown option '%s' (try 'pipewright help')",
		    argv[1]);
		return PW_EXIT_INPUT;
	}
	if ((cmd = main_find(argv[1])) == NULL) {
		pw_cmd_say("unknown command '%s' (try 'pipewright help')",
		    argv[1]);
		return PW_EXIT_INPUT;
	}
	return main_run(cmd, argc - 1, argv + 1);
}

int
main(int argc, char **argv)
{
	int status, error;

	pw_outfile_signals();
	status = main_dispatch(argc, argv);
	/* A report that could not be written is a failed command (one that
	 * failed already said why). */
	error = fflush(stdout) != 0 ? errno : 0;
	if ((error != 0 || ferror(stdout)) && status == PW_EXIT_OK) {
		pw_cmd_say_cause("cannot write to stdout", error);
		status = PW_EXIT_INPUT;
	}
	return status;
}
