/*
 * cmd_model.c - the one-line model options: a model (a preset or a Lua
 * script), hardware, devices and microbatches, and what else the cost
 * model takes, instead of a problem file on every command that takes
 * one.  The values come from cmd_parse.c as given; each is read here, and
 * a bad one is named with the option in one line.
 */
#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pipewright.h"
#include "cmd.h"
#include "pwlua.h"

/* The most devices and microbatches the options take: pw_cost_problem
 * checks the pairs (PW_MAX_PAIRS) after. */
#define CMD_MODEL_MAX_DEVICES	65536
#define CMD_MODEL_MAX_COUNT	(1 << 20)

/* Whether plan takes option OPT again (cmd.h's table). */
#define CMD_MODEL_REPLAN(opt, letter, name, replan)	replan,
static const bool cmd_model_replan[PW_CMD_M_N] = {
	PW_CMD_MODEL_TABLE(CMD_MODEL_REPLAN, CMD_MODEL_REPLAN)
};

/* The options --model needs, with what each takes. */
static const struct {
	enum pw_cmd_model_opt opt;
	const char *arg;
} cmd_model_required[] = {
	{ PW_CMD_M_HARDWARE, "NAME" },
	{ PW_CMD_M_DEVICES, "P" },
	{ PW_CMD_M_MICROBATCHES, "M" },
};

/* "--NAME" of option OPT, into BUF. */
static const char *
cmd_model_flag(enum pw_cmd_model_opt opt, char *buf, size_t len)
{
	snprintf(buf, len, "--%s",
	    pw_cmd_option_name(PW_CMD_MODEL_LETTERS[opt]));
	return buf;
}

bool
pw_cmd_model_usage(const struct pw_cmd_args *a)
{
	char flag[32], *missing, *longer;
	size_t i;
	int opt;

	if (a->model[PW_CMD_M_MODEL] == NULL) {
		for (opt = 0; opt < PW_CMD_M_N; opt++)
			if (a->model[opt] != NULL && (opt !=
			    PW_CMD_M_MEMORY_LIMIT ||
			    !(a->cmd->lists & PW_CMD_OWN_LIMIT)))
				break;
		if (opt == PW_CMD_M_N)
			return true;
		pw_cmd_say("%s: %s needs --model NAME|FILE.lua (try "
		    "'pipewright %s --help')", a->cmd->name,
		    cmd_model_flag(opt, flag, sizeof flag), a->cmd->name);
		return false;
	}
	if (a->pos[0] != NULL) {
		pw_cmd_say("%s: --model %s and the file '%s' both give the "
		    "problem (use one)", a->cmd->name, a->model[PW_CMD_M_MODEL],
		    a->pos[0]);
		return false;
	}
	missing = NULL;
	for (i = 0; i < sizeof cmd_model_required /
	    sizeof cmd_model_required[0]; i++) {
		if (a->model[cmd_model_required[i].opt] != NULL)
			continue;
		longer = pw_xasprintf("%s%s%s %s", missing != NULL ? missing :
		    "", missing != NULL ? ", " : "",
		    cmd_model_flag(cmd_model_required[i].opt, flag,
		    sizeof flag), cmd_model_required[i].arg);
		free(missing);
		missing = longer;
	}
	if (missing == NULL)
		return true;
	pw_cmd_say("%s: --model %s also needs %s", a->cmd->name,
	    a->model[PW_CMD_M_MODEL], missing);
	free(missing);
	return false;
}

/* Reads option OPT of A, when given, as a whole number in [MIN, MAX]
 * into *OUT; false after reporting a bad value. */
static bool
cmd_model_int(const struct pw_cmd_args *a, enum pw_cmd_model_opt opt,
    int min, int max, int *out)
{
	char flag[32];

	if (a->model[opt] == NULL || pw_parse_int(a->model[opt], min, max, out))
		return true;
	pw_cmd_say("%s: %s '%s' is not a whole number from %d to %d",
	    a->cmd->name, cmd_model_flag(opt, flag, sizeof flag), a->model[opt],
	    min, max);
	return false;
}

/* Reads option OPT of A, when given, as one of NCHOICES words (CHOICES,
 * their values in VALUES; in any case, as the names of models, hardware
 * and recomputations) into *OUT; false after reporting a bad value
 * with the words it may be (WORDS). */
static bool
cmd_model_word(const struct pw_cmd_args *a, enum pw_cmd_model_opt opt,
    const char *const *choices, const int *values, size_t nchoices,
    const char *words, int *out)
{
	char flag[32];
	size_t i;

	if (a->model[opt] == NULL)
		return true;
	for (i = 0; i < nchoices; i++) {
		if (strcasecmp(a->model[opt], choices[i]) == 0) {
			*out = values[i];
			return true;
		}
	}
	pw_cmd_say("%s: %s '%s' is not %s", a->cmd->name,
	    cmd_model_flag(opt, flag, sizeof flag), a->model[opt], words);
	return false;
}

/* --memory-limit: a size of at least a byte, or none in any case
 * (DBL_MAX, the split's "no limit"). */
bool
pw_cmd_model_limit(const struct pw_cmd_args *a, double *limit)
{
	const char *v = a->model[PW_CMD_M_MEMORY_LIMIT];

	if (v == NULL)
		return true;
	if (strcasecmp(v, "none") == 0) {
		*limit = DBL_MAX;
		return true;
	}
	if (pw_parse_bytes(v, limit) && *limit >= 1 && *limit < DBL_MAX)
		return true;
	pw_cmd_say("%s: --memory-limit '%s' is not a size of at least a "
	    "byte (60GiB, 8e10) or none", a->cmd->name, v);
	return false;
}

/* --reserve: a size (4GiB) or a share of the limit below 100% (5%), its
 * number read by pw_parse_bytes' rules (no sign, no hexadecimal) and
 * with no unit of its own. */
static bool
cmd_model_reserve(const struct pw_cmd_args *a, struct pw_split *split)
{
	const char *v = a->model[PW_CMD_M_RESERVE];
	size_t len;
	char *number;
	double share;
	bool ok;

	if (v == NULL)
		return true;
	len = strlen(v);
	if (len > 1 && v[len - 1] == '%') {
		number = pw_xstrdup(v);
		number[len - 1] = '\0';
		/* Every unit ends in a letter ("b", "GiB"). */
		ok = !isalpha((unsigned char)v[len - 2]) &&
		    pw_parse_bytes(number, &share) && share < 100;
		free(number);
		if (ok) {
			split->reserve_fraction = share / 100;
			return true;
		}
	} else if (pw_parse_bytes(v, &split->reserve_bytes) &&
	    split->reserve_bytes < DBL_MAX)
		return true;
	pw_cmd_say("%s: --reserve '%s' is not a size (4GiB) or a share of "
	    "the limit from 0%% to below 100%% (5%%)", a->cmd->name, v);
	return false;
}

/* --layers-per-stage: NSTAGES whole numbers, each at least 1, adding up
 * to the model's LAYERS, into *OUT (the caller frees it); false after
 * reporting what is wrong. */
static bool
cmd_model_layers(const struct pw_cmd_args *a, int nstages, int layers,
    int **out)
{
	const char *v = a->model[PW_CMD_M_LAYERS], *s;
	long sum = 0, n;
	char *end;
	int count = 1;

	*out = NULL;
	if (v == NULL)
		return true;
	for (s = v; *s != '\0'; s++)
		count += *s == ',';
	*out = pw_xcalloc((size_t)count, sizeof **out);
	/* The list first: ",," is no list, whatever its length. */
	for (count = 0, s = v;; s = end + 1) {
		n = isdigit((unsigned char)s[0]) ? strtol(s, &end, 10) : 0;
		if (n < 1 || n > layers || (*end != ',' && *end != '\0')) {
			pw_cmd_say("%s: --layers-per-stage '%s' is not a list "
			    "of whole numbers from 1 to %d (4,4,5,3)",
			    a->cmd->name, v, layers);
			goto fail;
		}
		(*out)[count++] = (int)n;
		sum += n;
		if (*end == '\0')
			break;
	}
	if (count != nstages) {
		pw_cmd_say("%s: --layers-per-stage '%s' gives %d stage%s, the "
		    "split has %d (devices x chunks)", a->cmd->name, v, count,
		    count == 1 ? "" : "s", nstages);
		goto fail;
	}
	if (sum != layers) {
		pw_cmd_say("%s: --layers-per-stage '%s' adds up to %ld layers,"
		    " the model has %d", a->cmd->name, v, sum, layers);
		goto fail;
	}
	return true;
fail:
	free(*out);
	*out = NULL;
	return false;
}

/* The model of --model (a preset or a model script) into *MODEL, its
 * name's storage in *NAME (the caller frees it); false after reporting
 * why there is none. */
static bool
cmd_model_model(const struct pw_cmd_args *a, struct pw_model *model,
    char **name)
{
	const char *v = a->model[PW_CMD_M_MODEL];
	const struct pw_model *preset;
	struct pw_error err;

	*name = NULL;
	if (pwlua_is_script(v)) {
		if (pwlua_model_read(v, model, name, &err) == PW_OK)
			return true;
		pw_cmd_say("%s: --model: %s", a->cmd->name, err.msg);
		return false;
	}
	if ((preset = pw_model_find(v)) == NULL) {
		pw_cmd_unknown(PW_CMD_REG_MODELS, "model", v);
		return false;
	}
	*model = *preset;
	return true;
}

/* Fills SPLIT's options but the layer list from A; false after
 * reporting a bad value. */
static bool
cmd_model_split(const struct pw_cmd_args *a, struct pw_split *split)
{
	static const int placement_values[] = { PW_PLACE_LOOP, PW_PLACE_V };
	int placement = PW_PLACE_LOOP;

	memset(split, 0, sizeof *split);
	/* tp and dp stay 0, "not given" (1), unless they are: a file then
	 * writes them only when set, as a script's problem does. */
	split->chunks = 1;
	if (!cmd_model_int(a, PW_CMD_M_DEVICES, 1, CMD_MODEL_MAX_DEVICES,
	    &split->devices) ||
	    !cmd_model_int(a, PW_CMD_M_MICROBATCHES, 1, CMD_MODEL_MAX_COUNT,
	    &split->microbatches) ||
	    !cmd_model_word(a, PW_CMD_M_PLACEMENT, pw_placement_names,
	    placement_values, PW_NPLACEMENTS, "loop or v", &placement))
		return false;
	split->placement = (enum pw_placement)placement;
	if (split->placement == PW_PLACE_V)
		split->chunks = 2;
	if (!cmd_model_int(a, PW_CMD_M_CHUNKS, 1, 1024, &split->chunks) ||
	    !cmd_model_int(a, PW_CMD_M_TP, 1, CMD_MODEL_MAX_DEVICES,
	    &split->tp) ||
	    !cmd_model_int(a, PW_CMD_M_DP, 1, CMD_MODEL_MAX_COUNT,
	    &split->dp) ||
	    !pw_cmd_model_limit(a, &split->memory_limit) ||
	    !cmd_model_reserve(a, split))
		return false;
	/* Solve's and plan's --offload auto|on|off decides the link where
	 * the row has it; elsewhere the flag does. */
	if (strchr(a->cmd->options, 'x') != NULL)
		split->offload = a->offload != PW_OFFMODE_OFF;
	else
		split->offload = a->model[PW_CMD_M_OFFLOAD] != NULL;
	return true;
}

/* --recompute: a name pw_recompute_parse reads, into MODEL. */
static bool
cmd_model_recompute(const struct pw_cmd_args *a, struct pw_model *model)
{
	const char *v = a->model[PW_CMD_M_RECOMPUTE];

	if (v == NULL || pw_recompute_parse(v, &model->recompute))
		return true;
	pw_cmd_say("%s: --recompute '%s' is not none, selective, pipeoffload "
	    "or full", a->cmd->name, v);
	return false;
}

bool
pw_cmd_model_read(const struct pw_cmd_args *a, struct pw_cmd_model *m)
{
	int *layers = NULL;

	memset(m, 0, sizeof *m);
	if (!cmd_model_model(a, &m->model, &m->name))
		return false;
	if ((m->hw = pw_hardware_find(a->model[PW_CMD_M_HARDWARE])) == NULL) {
		pw_cmd_unknown(PW_CMD_REG_HARDWARE, "hardware",
		    a->model[PW_CMD_M_HARDWARE]);
		goto fail;
	}
	if (!cmd_model_int(a, PW_CMD_M_SEQ, 1, CMD_MODEL_MAX_COUNT,
	    &m->model.seq) ||
	    !cmd_model_int(a, PW_CMD_M_MICRO_BATCH, 1, CMD_MODEL_MAX_COUNT,
	    &m->model.micro_batch) ||
	    !cmd_model_recompute(a, &m->model) ||
	    !cmd_model_split(a, &m->split))
		goto fail;
	if (m->model.layers > 0 && !cmd_model_layers(a, m->split.devices *
	    m->split.chunks, m->model.layers, &layers))
		goto fail;
	m->split.layers_per_stage = layers;
	return true;
fail:
	pw_cmd_model_free(m);
	return false;
}

void
pw_cmd_model_free(struct pw_cmd_model *m)
{
	free((int *)m->split.layers_per_stage);
	free(m->name);
	memset(m, 0, sizeof *m);
}

/* Says in one line which device of M's split cannot hold one microbatch
 * and by how much, in readable sizes: the problem's own check names the
 * limit's bytes raw and not the command's input.  False, saying
 * nothing, when every device fits (M failed for another reason). */
static bool
cmd_model_misfit(const struct pw_cmd_args *a, const struct pw_cmd_model *m)
{
	struct pw_split open = m->split;
	struct pw_problem *p;
	struct pw_error err;
	char label[160], b1[32], b2[32], b3[32], b4[32];
	double room, act;
	int d, s, largest;
	bool said = false;

	room = pw_split_room(&m->split, m->hw);
	open.memory_limit = DBL_MAX;
	open.reserve_bytes = open.reserve_fraction = 0;
	/* No room at all is the split's own error (the reserve). */
	if (!isfinite(room) || !(room > 0) ||
	    pw_cost_problem(&m->model, m->hw, &open, &p, &err) != PW_OK)
		return false;
	for (d = 0; d < p->devices && !said; d++) {
		largest = -1;
		for (s = 0; s < p->nstages; s++)
			if (p->stages[s].device == d && (largest < 0 ||
			    p->stages[s].act > p->stages[largest].act))
				largest = s;
		act = largest < 0 ? 0 : p->stages[largest].act;
		if (p->memory[d].static_bytes + act <= room)
			continue;
		pw_cmd_say("%s: %s does not fit: device %d needs %s for one "
		    "microbatch (static %s + stage %d's activation %s), above "
		    "its %s%s (try 'pipewright plan', which also searches "
		    "other splits, recomputation and offload)", a->cmd->name,
		    pw_cmd_model_label(a, label, sizeof label), d,
		    pw_fmt_bytes(b1, sizeof b1, p->memory[d].static_bytes +
		    act), pw_fmt_bytes(b2, sizeof b2,
		    p->memory[d].static_bytes), largest, pw_fmt_bytes(b3,
		    sizeof b3, act), pw_fmt_bytes(b4, sizeof b4, room),
		    m->split.reserve_bytes > 0 || m->split.reserve_fraction > 0 ?
		    " (its limit less the reserve)" : "");
		said = true;
	}
	pw_problem_free(p);
	return said;
}

struct pw_problem *
pw_cmd_model_problem(const struct pw_cmd_args *a)
{
	struct pw_cmd_model m;
	struct pw_problem *p = NULL;
	struct pw_error err;
	const char *msg;
	char label[160];
	size_t n;

	if (!pw_cmd_model_read(a, &m))
		return NULL;
	if (pw_cost_problem(&m.model, m.hw, &m.split, &p, &err) != PW_OK) {
		p = NULL;
		if (!cmd_model_misfit(a, &m)) {
			/* The label names the model: its name once. */
			msg = err.msg;
			n = m.model.name != NULL ? strlen(m.model.name) : 0;
			if (n > 0 && strncmp(msg, m.model.name, n) == 0 &&
			    strncmp(msg + n, ": ", 2) == 0)
				msg += n + 2;
			pw_cmd_say("%s: %s: %s", a->cmd->name,
			    pw_cmd_model_label(a, label, sizeof label), msg);
		}
	}
	pw_cmd_model_free(&m);
	return p;
}

char *
pw_cmd_model_label(const struct pw_cmd_args *a, char *buf, size_t len)
{
	snprintf(buf, len, "%s on %s %s", a->model[PW_CMD_M_MODEL],
	    a->model[PW_CMD_M_DEVICES], a->model[PW_CMD_M_HARDWARE]);
	return buf;
}

/* S as one shell word: as it is when it needs no quoting, else in
 * single quotes.  The caller frees it. */
static char *
cmd_model_quote(const char *s)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._,/%+-:=@";
	char *q, *longer;

	if (s[0] != '\0' && s[strspn(s, plain)] == '\0')
		return pw_xstrdup(s);
	q = pw_xstrdup("'");
	for (; *s != '\0'; s++) {
		longer = *s == '\'' ? pw_xasprintf("%s'\\''", q) :
		    pw_xasprintf("%s%c", q, *s);
		free(q);
		q = longer;
	}
	longer = pw_xasprintf("%s'", q);
	free(q);
	return longer;
}

char *
pw_cmd_model_replan(const struct pw_cmd_args *a)
{
	char *line = pw_xstrdup("pipewright plan"), *longer, *word, flag[32];
	int opt;

	if (a->model[PW_CMD_M_MODEL] == NULL && a->pos[0] == NULL)
		return line;
	if (a->model[PW_CMD_M_MODEL] == NULL) {
		word = cmd_model_quote(a->pos[0]);
		longer = pw_xasprintf("%s %s", line, word);
		free(word);
		free(line);
		return longer;
	}
	for (opt = 0; opt < PW_CMD_M_N; opt++) {
		if (!cmd_model_replan[opt] || a->model[opt] == NULL)
			continue;
		word = cmd_model_quote(a->model[opt]);
		longer = pw_xasprintf("%s %s %s", line, cmd_model_flag(opt,
		    flag, sizeof flag), word);
		free(word);
		free(line);
		line = longer;
	}
	return line;
}

void
pw_cmd_model_help(FILE *fp, const struct pw_command *cmd)
{
	fprintf(fp, "\nmodel options (instead of %s: a model on some hardware,"
	    " costed by\nthe cost model, docs/cost-model.md):\n"
	    "  --model NAME|FILE.lua  a model preset (below), or a Lua script\n"
	    "                      returning a model (docs/lua.md)\n"
	    "  --hardware NAME     a hardware preset (below)\n"
	    "  --devices P         pipeline devices\n"
	    "  --microbatches M    microbatches per iteration\n"
	    "  --seq S             tokens per sequence (default: the model's)\n"
	    "  --micro-batch B     sequences per microbatch (default: the\n"
	    "                      model's)\n"
	    "  --memory-limit SIZE bytes per device (60GiB, 8e10; none: no\n"
	    "                      limit; default: the hardware's memory)\n"
	    "  --reserve SIZE|N%%   held back from every limit (4GiB, or 5%%\n"
	    "                      of it; default none)\n"
	    "  --tp T              tensor-parallel GPUs per pipeline device\n"
	    "  --dp D              ZeRO-1 data-parallel replicas\n"
	    "  --chunks C          stages per device (default 1, 2 for V)\n"
	    "  --placement loop|v  stage s on device s mod P (default), or V\n"
	    "  --recompute none|selective|pipeoffload|full\n"
	    "                      what the backward recomputes (selective\n"
	    "                      and pipeoffload are one; default: the\n"
	    "                      model's)\n"
	    "  --layers-per-stage N,N,...\n"
	    "                      each stage's layers (default: even, the\n"
	    "                      remainder on the middle stages)\n",
	    cmd->minpos > 0 && strchr(cmd->options, 'f') != NULL ?
	    "FILE, with --family" : "PROBLEM");
	if (strchr(cmd->options, 'x') != NULL)
		fprintf(fp, "  with --model, --offload auto and on give the "
		    "devices a PCIe link to\n  host memory (two per switch), "
		    "off none\n");
	else
		fprintf(fp, "  --offload           a PCIe link to host memory "
		    "(two devices per\n                      switch)\n");
	fprintf(fp, "\nmodels:\n");
	pw_cmd_list(fp, PW_CMD_REG_MODELS);
	fprintf(fp, "\nhardware:\n");
	pw_cmd_list(fp, PW_CMD_REG_HARDWARE);
}
