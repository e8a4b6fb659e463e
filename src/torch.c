/*
 * torch.c - PyTorch's compute_only schedule CSV (torch.distributed.
 * pipelining), both ways: one row per rank, one action per cell ("2F0",
 * "1I3", "1W3", "0B5", empty for an idle step), and our extension's rows
 * of offload and reload tokens, one per channel after the ranks' rows
 * (docs/interop.md).
 */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "export.h"

/* Our kinds as PyTorch's computation types, and the two we add. */
static const char torch_letter[PW_NKINDS] = {
	[PW_F] = 'F', [PW_B] = 'I', [PW_W] = 'W', [PW_BW] = 'B',
	[PW_OFFLOAD] = 'O', [PW_RELOAD] = 'R',
};

/* PyTorch's other action types, which only a compute_comms CSV has. */
static const char *const torch_comms[] = {
	"SEND_F", "RECV_F", "SEND_B", "RECV_B", "UNSHARD", "RESHARD",
	"REDUCE_GRAD",
};

/* A token's longest text and its NUL: two ops of ten-digit numbers. */
#define TORCH_TOKEN	56

/* Writes OP as a token into BUF ("2F0"; a reload with its anchor,
 * "1R3@1I5", "+" after an anchor at the op's end) and returns BUF. */
static char *
torch_token(char buf[TORCH_TOKEN], const struct pw_schedule *s,
    struct pw_op op)
{
	struct pw_anchor a;
	int n;

	n = snprintf(buf, TORCH_TOKEN, "%d%c%d", op.stage,
	    torch_letter[op.kind], op.mb);
	if (op.kind == PW_RELOAD && pw_schedule_anchor(s, op.stage, op.mb, &a))
		snprintf(buf + n, TORCH_TOKEN - (size_t)n, "@%d%c%d%s",
		    a.op.stage, torch_letter[a.op.kind], a.op.mb,
		    a.at_end ? "+" : "");
	return buf;
}

/*
 * The step of every op (STEP, by pw_op_index; -1 for absent ops): one
 * more than the latest step of what it waits for, as if every op took one
 * step and handing a tensor on none.  That aligns the ranks' rows as
 * PyTorch's own schedules align them.  Without WITH_OFFLOAD the
 * transfers are left out and what waits for them does not wait.
 */
static int
torch_steps(const struct pw_problem *p, const struct pw_schedule *s,
    bool with_offload, long *step, struct pw_error *err)
{
	struct pw_pred preds[PW_MAX_PREDS];
	struct pw_where *where;
	int nres = s->ndevices + (with_offload ? s->nchannels : 0);
	int *pos, r, i, n, rc;
	const struct pw_seq *seq;
	bool progress, done;
	long at;
	size_t k;

	if ((rc = pw_where_build(p, s, &where, err)) != PW_OK)
		return rc;
	for (k = 0; k < where->universe; k++)
		step[k] = -1;
	pos = pw_xcalloc((size_t)nres, sizeof *pos);
	do {
		progress = false;
		done = true;
		for (r = 0; r < nres; r++) {
			seq = pw_schedule_order(s, r);
			for (; pos[r] < seq->len; pos[r]++) {
				n = pw_preds(p, s, where, seq->ops[pos[r]],
				    preds);
				at = 0;
				for (i = 0; i < n; i++) {
					if (!with_offload &&
					    pw_kind_is_transfer(preds[i].op.kind))
						continue;
					k = pw_op_index(p, preds[i].op);
					if (step[k] < 0)
						break;
					if (step[k] + 1 > at)
						at = step[k] + 1;
				}
				if (i < n)
					break;
				step[pw_op_index(p, seq->ops[pos[r]])] = at;
				progress = true;
			}
			if (pos[r] < seq->len)
				done = false;
		}
	} while (progress && !done);
	free(pos);
	pw_where_free(where);
	if (!done) {
		pw_error_set(err, "the orders deadlock: no step order exists"
		    " (pipewright eval names what waits)");
		return PW_ERR_DEADLOCK;
	}
	return PW_OK;
}

/* One row: SEQ's ops at their steps, empty cells between, none after the
 * last. */
static void
torch_row(FILE *fp, const struct pw_problem *p, const struct pw_schedule *s,
    const struct pw_seq *seq, const long *step)
{
	char token[TORCH_TOKEN];
	long col = 0, at;
	int i;

	for (i = 0; i < seq->len; i++) {
		at = step[pw_op_index(p, seq->ops[i])];
		assert(at >= col);
		if (i > 0)
			fputc(',', fp);
		for (; col < at; col++)
			fputc(',', fp);
		fputs(torch_token(token, s, seq->ops[i]), fp);
		col = at + 1;
	}
	fputc('\n', fp);
}

int
pw_torch_write(FILE *fp, const struct pw_problem *p,
    const struct pw_schedule *s, bool with_offload, struct pw_error *err)
{
	long *step;
	int r, rc;

	step = pw_xmalloc(pw_op_universe(p) * sizeof *step);
	if ((rc = torch_steps(p, s, with_offload, step, err)) == PW_OK) {
		for (r = 0; r < s->ndevices; r++)
			torch_row(fp, p, s, &s->device[r], step);
		for (r = 0; with_offload && r < s->nchannels; r++)
			torch_row(fp, p, s, &s->channel[r], step);
	}
	free(step);
	return rc;
}

size_t
pw_torch_dropped(const struct pw_schedule *s)
{
	size_t n = pw_schedule_nops(s);
	int d;

	for (d = 0; d < s->ndevices; d++)
		n -= (size_t)s->device[d].len;
	return n;
}

/* Orders alone: no times, no title. */
int
pw_export_torch(FILE *fp, const struct pw_problem *p,
    const struct pw_schedule *s, const struct pw_timing *t,
    const struct pw_metrics *m, const struct pw_export_options *options,
    struct pw_error *err)
{
	(void)t;
	(void)m;
	(void)options;
	return pw_torch_write(fp, p, s, false, err);
}

int
pw_export_torch_offload(FILE *fp, const struct pw_problem *p,
    const struct pw_schedule *s, const struct pw_timing *t,
    const struct pw_metrics *m, const struct pw_export_options *options,
    struct pw_error *err)
{
	(void)t;
	(void)m;
	(void)options;
	return pw_torch_write(fp, p, s, true, err);
}

/* ------------------------------------------------------------------ */
/* Reading                                                             */

/* What the reader has seen of each (stage, mb): a bit per kind, and
 * where its reload's cell is. */
struct torch_read {
	const struct pw_problem *p;
	const char *label;
	struct pw_schedule *s;
	unsigned char *seen;	/* [nstages * mb]: 1 << kind */
	long	(*reload_at)[2];	/* [nstages * mb]: line, column; NULL
					 * until the first anchor */
	int	row;		/* 0-based */
	long	line;
	long	col;
};

/* The longest action, and the most a cell may hold around one: the
 * blanks and quotes PyTorch's reader strips. */
#define TORCH_CELL	64
#define TORCH_CELL_READ	4096

/* Reads the digits at *S into *OUT (INT_MAX when larger, as Python's
 * int() reads any number of them; the range checks then refuse it),
 * their count into *LEN, moving *S past them; false when there are
 * none. */
static bool
torch_number(const char **s, int *out, int *len)
{
	const char *q = *s;
	long v = 0;

	for (; isdigit((unsigned char)*q); q++)
		v = v > INT_MAX / 10 ? INT_MAX : v * 10 + (*q - '0');
	if (q == *s)
		return false;
	*out = v > INT_MAX ? INT_MAX : (int)v;
	*len = (int)(q - *s);
	*s = q;
	return true;
}

/* Parses "2F0" at *S (moving past it) into OP: a kind our letters name,
 * in range for the problem.  False with ERR for anything else. */
static bool
torch_op(struct torch_read *r, const char *cell, const char **s,
    struct pw_op *op, struct pw_error *err)
{
	const struct pw_problem *p = r->p;
	const char *stage = *s, *mb;
	size_t i;
	int k, stage_len, mb_len;

	if (!torch_number(s, &op->stage, &stage_len))
		goto bad;
	for (i = 0; i < sizeof torch_comms / sizeof torch_comms[0]; i++) {
		if (strncmp(*s, torch_comms[i], strlen(torch_comms[i])) == 0) {
			pw_error_set(err, "%s:%ld:%ld: %s: %s is a communication"
			    " action; only PyTorch's compute_only CSV is read",
			    r->label, r->line, r->col, cell, torch_comms[i]);
			return false;
		}
	}
	for (k = 0; k < PW_NKINDS; k++) {
		if (**s == torch_letter[k])
			break;
	}
	if (k == PW_NKINDS)
		goto bad;
	op->kind = (enum pw_kind)k;
	(*s)++;
	mb = *s;
	if (!torch_number(s, &op->mb, &mb_len))
		goto bad;
	/* Said as written: a number past INT_MAX was read as INT_MAX. */
	if (op->stage >= p->nstages) {
		/* Most likely the CSV of a family that split the model
		 * again, read with the problem it was built from. */
		pw_error_set(err, "%s:%ld:%ld: %s: stage %.*s out of range (the"
		    " problem has %d stage%s%s)", r->label, r->line, r->col,
		    cell, stage_len, stage, p->nstages, p->nstages == 1 ? "" :
		    "s",
		    p->nstages == p->devices ? "; the CSV of a family that "
		    "splits the model again, zb-v or 1f1b-interleaved, is "
		    "read with that family's schedule file as its problem" :
		    "");
		return false;
	}
	if (op->mb >= p->microbatches) {
		pw_error_set(err, "%s:%ld:%ld: %s: microbatch %.*s out of "
		    "range (the problem has %d)", r->label, r->line, r->col,
		    cell, mb_len, mb, p->microbatches);
		return false;
	}
	return true;
bad:
	pw_error_set(err, "%s:%ld:%ld: bad action \"%s\" (want STAGE, one of"
	    " F I W B O R, MICROBATCH: \"2F0\")", r->label, r->line, r->col,
	    cell);
	return false;
}

/* OP's (stage, mb) as an index of R's arrays. */
static size_t
torch_at(const struct torch_read *r, struct pw_op op)
{
	return (size_t)op.stage * (size_t)r->p->microbatches + (size_t)op.mb;
}

/* The bit of OP's kind in its (stage, mb)'s seen byte. */
static unsigned char *
torch_seen(struct torch_read *r, struct pw_op op)
{
	return &r->seen[torch_at(r, op)];
}

/* PyTorch's order rules (_validate_schedule) for a compute op: F before
 * I or B, I before W, each once, never both B and I. */
static int
torch_order(struct torch_read *r, const char *cell, struct pw_op op,
    struct pw_error *err)
{
	unsigned char seen = *torch_seen(r, op);
	const char *why = NULL;

	if (seen & (1u << op.kind))
		why = "appears twice";
	else if ((op.kind == PW_B || op.kind == PW_BW) && !(seen & 1u << PW_F))
		why = "comes before its F (PyTorch runs F before I or B)";
	else if (op.kind == PW_W && !(seen & 1u << PW_B))
		why = "comes before its I (PyTorch runs I before W)";
	else if ((op.kind == PW_B && (seen & 1u << PW_BW)) ||
	    (op.kind == PW_BW && (seen & 1u << PW_B)))
		why = "has both a full backward (B) and an input backward (I)";
	if (why != NULL) {
		pw_error_set(err, "%s:%ld:%ld: %s %s", r->label, r->line,
		    r->col, cell, why);
		return PW_ERR_INPUT;
	}
	return PW_OK;
}

/* The placement's name for a message about a stage's rank. */
static const char *
torch_placement(const struct pw_problem *p)
{
	if (pw_problem_is_loop(p))
		return "loop";
	if (pw_problem_is_v(p))
		return "V";
	return "given";
}

/* One non-empty cell of row R->row: its op checked against the problem
 * and appended to the row's order. */
static int
torch_cell(struct torch_read *r, const char *cell, struct pw_error *err)
{
	const struct pw_problem *p = r->p;
	struct pw_anchor anchor = { { PW_NKINDS, 0, 0 }, false };
	bool has_anchor = false;
	const char *s = cell;
	struct pw_op op;
	int device, chan;

	if (!torch_op(r, cell, &s, &op, err))
		return PW_ERR_INPUT;
	if (op.kind == PW_RELOAD && *s == '@') {
		s++;
		if (!torch_op(r, cell, &s, &anchor.op, err))
			return PW_ERR_INPUT;
		anchor.at_end = *s == '+';
		s += anchor.at_end;
		has_anchor = true;
	}
	if (*s != '\0') {
		pw_error_set(err, "%s:%ld:%ld: bad action \"%s\" (junk after"
		    " the microbatch)", r->label, r->line, r->col, cell);
		return PW_ERR_INPUT;
	}
	device = p->stages[op.stage].device;
	if (!pw_kind_is_transfer(op.kind)) {
		if (r->row >= p->devices) {
			pw_error_set(err, "%s:%ld:%ld: %s in row %d, a channel's"
			    " row (the problem has %d ranks): only offload and"
			    " reload tokens go there", r->label, r->line, r->col,
			    cell, r->row, p->devices);
			return PW_ERR_INPUT;
		}
		if (device != r->row) {
			pw_error_set(err, "%s:%ld:%ld: %s on rank %d, but stage"
			    " %d is on rank %d (the problem's %s placement)",
			    r->label, r->line, r->col, cell, r->row, op.stage,
			    device, torch_placement(p));
			return PW_ERR_INPUT;
		}
		if (torch_order(r, cell, op, err) != PW_OK)
			return PW_ERR_INPUT;
		*torch_seen(r, op) |= (unsigned char)(1u << op.kind);
		pw_seq_push(&r->s->device[device], op);
		return PW_OK;
	}
	if (!p->link.present || !(p->stages[op.stage].offload > 0)) {
		pw_error_set(err, "%s:%ld:%ld: %s: %s", r->label, r->line,
		    r->col, cell, !p->link.present ? "the problem has no"
		    " offload link" : "the stage offloads nothing");
		return PW_ERR_INPUT;
	}
	chan = pw_problem_channel(p, device, op.kind);
	if (r->row != p->devices + chan) {
		pw_error_set(err, "%s:%ld:%ld: %s in row %d, but it belongs"
		    " in row %d (channel %d's, after the %d ranks' rows)",
		    r->label, r->line, r->col, cell, r->row,
		    p->devices + chan, chan, p->devices);
		return PW_ERR_INPUT;
	}
	if (*torch_seen(r, op) & (1u << op.kind)) {
		pw_error_set(err, "%s:%ld:%ld: %s appears twice", r->label,
		    r->line, r->col, cell);
		return PW_ERR_INPUT;
	}
	if (has_anchor && (pw_kind_is_transfer(anchor.op.kind) ||
	    p->stages[anchor.op.stage].device != device)) {
		pw_error_set(err, "%s:%ld:%ld: %s: an anchor must be a compute"
		    " op of rank %d", r->label, r->line, r->col, cell, device);
		return PW_ERR_INPUT;
	}
	*torch_seen(r, op) |= (unsigned char)(1u << op.kind);
	pw_seq_push(&r->s->channel[chan], op);
	if (has_anchor) {
		pw_schedule_set_anchor(r->s, op.stage, op.mb, anchor);
		/* Only a file with anchors pays for their places. */
		if (r->reload_at == NULL)
			r->reload_at = pw_xcalloc((size_t)p->nstages *
			    (size_t)p->microbatches, sizeof *r->reload_at);
		r->reload_at[torch_at(r, op)][0] = r->line;
		r->reload_at[torch_at(r, op)][1] = r->col;
	}
	return PW_OK;
}

/* An activation offloaded and never reloaded, or reloaded and never
 * offloaded, by the bits SEEN of OP's stage and microbatch: PW_OK, else
 * PW_ERR_INPUT with the token it lacks and the row that would hold it. */
static int
torch_pairs(struct torch_read *r, struct pw_op op, unsigned char seen,
    struct pw_error *err)
{
	const struct pw_problem *p = r->p;
	bool out = seen & 1u << PW_OFFLOAD, back = seen & 1u << PW_RELOAD;
	enum pw_kind lacks = out ? PW_RELOAD : PW_OFFLOAD;
	int chan;

	if (out == back)
		return PW_OK;
	chan = pw_problem_channel(p, p->stages[op.stage].device, lacks);
	pw_error_set(err, "%s: %d%c%d has no %d%c%d (each offload needs its "
	    "reload, and each reload its offload: channel %d's row, row %d)",
	    r->label, op.stage, out ? 'O' : 'R', op.mb, op.stage,
	    out ? 'R' : 'O', op.mb, chan, p->devices + chan);
	return PW_ERR_INPUT;
}

/* The anchor of OP's (stage, mb)'s reload, known only once every row is
 * read to name an op of the schedule: PW_OK, else PW_ERR_INPUT at the
 * reload's cell. */
static int
torch_anchor(struct torch_read *r, struct pw_op op, struct pw_error *err)
{
	char token[TORCH_TOKEN], named[TORCH_TOKEN];
	struct pw_anchor a;

	op.kind = PW_RELOAD;
	if (!pw_schedule_anchor(r->s, op.stage, op.mb, &a) ||
	    (*torch_seen(r, a.op) & 1u << a.op.kind))
		return PW_OK;
	pw_error_set(err, "%s:%ld:%ld: %s: its anchor %s is no op of the "
	    "schedule (an anchor must be one of its rank's ops)", r->label,
	    r->reload_at[torch_at(r, op)][0], r->reload_at[torch_at(r, op)][1],
	    torch_token(token, r->s, op), torch_token(named, r->s, a.op));
	return PW_ERR_INPUT;
}

/* PyTorch's count rules, after the last row: every stage has m forwards,
 * and each microbatch's backward is a B or an I with its W; and ours of
 * the channels' rows: each offload with its reload and its anchor an
 * op. */
static int
torch_counts(struct torch_read *r, const long *rowline, struct pw_error *err)
{
	const struct pw_problem *p = r->p;
	struct pw_op op;
	unsigned char seen;
	const char *what;
	int d;

	for (op.stage = 0; op.stage < p->nstages; op.stage++) {
		for (op.mb = 0; op.mb < p->microbatches; op.mb++) {
			seen = *torch_seen(r, op);
			if (torch_pairs(r, op, seen, err) != PW_OK ||
			    torch_anchor(r, op, err) != PW_OK)
				return PW_ERR_INPUT;
			if (!(seen & 1u << PW_F))
				what = "F";
			else if (seen & 1u << PW_BW)
				continue;
			else if (!(seen & 1u << PW_B))
				what = "B (or an I and a W)";
			else if (!(seen & 1u << PW_W))
				what = "W after its I";
			else
				continue;
			d = p->stages[op.stage].device;
			pw_error_set(err, "%s:%ld: rank %d's row lacks the %s of"
			    " stage %d, microbatch %d (each of the %d"
			    " microbatches needs F and a backward on every"
			    " stage)", r->label, rowline[d], d, what, op.stage,
			    op.mb, p->microbatches);
			return PW_ERR_INPUT;
		}
	}
	return PW_OK;
}

/* Ends the cell in BUF (LEN bytes) at R's position: blanks trimmed, as
 * PyTorch strips them; an empty cell is an idle step. */
static int
torch_end_cell(struct torch_read *r, char *buf, size_t len, long start,
    struct pw_error *err)
{
	size_t i = 0;

	while (len > 0 && isspace((unsigned char)buf[len - 1]))
		len--;
	buf[len] = '\0';
	/* A spreadsheet may quote every cell (RFC 4180), as csv.reader
	 * reads it: the quote first in the cell (after a blank it is a
	 * character), blanks inside it then stripped as _Action.from_str
	 * strips them. */
	if (buf[0] == '"' && len >= 2 && buf[len - 1] == '"') {
		buf[--len] = '\0';
		i++;
		while (len > i && isspace((unsigned char)buf[len - 1]))
			buf[--len] = '\0';
	}
	while (isspace((unsigned char)buf[i]))
		i++;
	if (buf[i] == '\0')
		return PW_OK;
	r->col = start + (long)i;
	if (len - i > TORCH_CELL) {
		pw_error_set(err, "%s:%ld:%ld: bad action (longer than any "
		    "action: %d characters at most)", r->label, r->line, r->col,
		    TORCH_CELL);
		return PW_ERR_INPUT;
	}
	return torch_cell(r, buf + i, err);
}

/* Whether the LEN bytes of BUF are blanks only. */
static bool
torch_blank(const char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len && isspace((unsigned char)buf[i]); i++)
		continue;
	return i == len;
}

int
pw_torch_read(FILE *fp, const char *label, const struct pw_problem *p,
    struct pw_schedule **out, struct pw_error *err)
{
	struct torch_read r = { p, label, NULL, NULL, NULL, 0, 1, 1 };
	int nrows = p->devices + (p->link.present ?
	    pw_problem_nchannels(p) : 0);
	long col = 1, start = 1, *rowline;
	char buf[TORCH_CELL_READ + 1];
	size_t len = 0;
	int c, rc = PW_OK;
	bool any = false, quoted = false, overlong = false;

	*out = NULL;
	r.s = pw_schedule_new(p);
	r.seen = pw_xcalloc((size_t)p->nstages * (size_t)p->microbatches, 1);
	rowline = pw_xcalloc((size_t)p->devices, sizeof *rowline);
	rowline[0] = 1;
	/* Said by name: the mark is invisible, and PyTorch's reader would
	 * take it into the first action too. */
	if ((c = getc(fp)) == 0xef) {
		pw_error_set(err, "%s:1:1: %s", label, getc(fp) == 0xbb &&
		    getc(fp) == 0xbf ? "a UTF-8 byte-order mark, which "
		    "PyTorch's _load_csv reads as part of the first action "
		    "(save the file without it)" : "bad action (a byte 0xEF)");
		rc = PW_ERR_INPUT;
	}
	for (; rc == PW_OK; c = getc(fp)) {
		if (c == '\r') {
			if ((c = getc(fp)) != '\n') {
				pw_error_set(err, "%s:%ld:%ld: a carriage return"
				    " not before a newline", label, r.line, col);
				rc = PW_ERR_INPUT;
				break;
			}
		}
		/* In quotes, as csv.reader reads them, a comma is the cell's
		 * and a doubled quote one quote character; a quote opens
		 * them only first in the cell. */
		if (quoted && (c == '\n' || (c == EOF && !ferror(fp)))) {
			pw_error_set(err, "%s:%ld:%ld: bad action (a quote that "
			    "nothing closes on its line)", label, r.line, start);
			rc = PW_ERR_INPUT;
			break;
		}
		if (c == '"' && (quoted || len == 0)) {
			if (quoted && (c = getc(fp)) != '"') {
				ungetc(c, fp);
				c = '"';
				quoted = false;
			} else if (!quoted)
				quoted = true;
			else
				col++;
		} else if (c == EOF || (!quoted && (c == ',' || c == '\n'))) {
			if (c == EOF && ferror(fp)) {
				pw_error_set(err, "%s: cannot read: %s", label,
				    strerror(errno));
				rc = PW_ERR_IO;
				break;
			}
			/* csv.reader gives no row after a final newline. */
			if (c == EOF && !any)
				break;
			if (r.row >= nrows) {
				pw_error_set(err, "%s:%ld: row %d%s, but the "
				    "problem has %d ranks%s (rows 0 to %d)",
				    label, r.line, r.row, c != ',' &&
				    start == 1 && !overlong &&
				    torch_blank(buf, len) ?
				    " (a blank line: PyTorch's csv.reader reads "
				    "it as an empty row)" : "", p->devices,
				    p->link.present ? " and their channels" : "",
				    nrows - 1);
				rc = PW_ERR_INPUT;
				break;
			}
			if (overlong) {
				pw_error_set(err, "%s:%ld:%ld: bad action "
				    "(longer than any action: %d characters at "
				    "most)", label, r.line, start, TORCH_CELL);
				rc = PW_ERR_INPUT;
				break;
			}
			buf[len] = '\0';
			if ((rc = torch_end_cell(&r, buf, len, start, err)) !=
			    PW_OK)
				break;
			len = 0;
			start = ++col;
			any = c == ',';
			if (c == ',')
				continue;
			r.row++;
			if (c == EOF)
				break;
			r.line++;
			start = col = 1;
			if (r.row < p->devices)
				rowline[r.row] = r.line;
			continue;
		}
		any = true;
		if (c == '\0') {
			pw_error_set(err, "%s:%ld:%ld: bad action (a NUL byte)",
			    label, r.line, start);
			rc = PW_ERR_INPUT;
			break;
		}
		/* Read on to the cell's end: an unclosed quote is said
		 * first. */
		if (len == TORCH_CELL_READ)
			overlong = true;
		else
			buf[len++] = (char)c;
		col++;
	}
	if (rc == PW_OK && r.row < p->devices) {
		pw_error_set(err, "%s: %d row%s, but the problem has %d ranks"
		    " (one row each)", label, r.row, r.row == 1 ? "" : "s",
		    p->devices);
		rc = PW_ERR_INPUT;
	}
	if (rc == PW_OK)
		rc = torch_counts(&r, rowline, err);
	free(rowline);
	free(r.reload_at);
	free(r.seen);
	if (rc != PW_OK) {
		pw_schedule_free(r.s);
		return rc;
	}
	*out = r.s;
	return PW_OK;
}

int
pw_torch_read_file(const char *path, const struct pw_problem *p,
    struct pw_schedule **out, struct pw_error *err)
{
	FILE *fp;
	int rc;

	*out = NULL;
	if ((fp = pw_infile_open(path)) == NULL) {
		pw_error_set(err, "%s: cannot open: %s", path,
		    strerror(errno));
		return PW_ERR_IO;
	}
	rc = pw_torch_read(fp, strcmp(path, "-") == 0 ? "<stdin>" : path, p,
	    out, err);
	fclose(fp);
	return rc;
}

bool
pw_torch_is_csv(const char *path)
{
	return pw_path_ends(path, ".csv");
}
