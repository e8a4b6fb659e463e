/*
 * test_torch.c - PyTorch's compute_only schedule CSV (src/torch.c): CSVs
 * written by hand in PyTorch's form (F, I, W and B actions, empty and
 * blank cells, CRLF, loop and V layouts) read and timed exactly; every
 * family exported and read back with the same orders (the offload form
 * with its transfers, the plain one without), each export held to
 * PyTorch's own _validate_schedule rules re-implemented here; and
 * malformed CSVs, each with its one-line error.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipewright.h"
#include "tap.h"
#include "testlib.h"

/* A unit problem: P devices, V stages each in PLACE, M microbatches,
 * f = b = w = 1, no comm. */
static struct pw_problem *
test_unit(int p, int v, int m, enum pw_placement place)
{
	struct pw_stage st = { .f = 1, .b = 1, .w = 1, .act = 1, .hold = 1 };

	return test_problem_uniform(p, v, m, place, &st);
}

/* Reads TEXT as a CSV for P; PW_OK with *OUT, else the code with ERR. */
static int
test_read_text(const char *text, const struct pw_problem *p,
    struct pw_schedule **out, struct pw_error *err)
{
	FILE *fp = fmemopen((void *)text, strlen(text), "r");
	int rc;

	rc = pw_torch_read(fp, "t.csv", p, out, err);
	fclose(fp);
	return rc;
}

/* Returns SCHED as pw_torch_write writes it, a string the caller frees. */
static char *
test_write(const struct pw_problem *p, const struct pw_schedule *s,
    bool with_offload)
{
	struct pw_error err;
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	if (pw_torch_write(fp, p, s, with_offload, &err) != PW_OK)
		tap_diag("write: %s", err.msg);
	fclose(fp);
	return buf;
}

/*
 * PyTorch's _validate_schedule, again, on the CSV text as PyTorch's
 * _load_csv would read it (csv.reader, _Action.from_str): a row per rank,
 * every stage on one rank (here: the problem's), F for each of the m
 * microbatches, I or B only after F, W only after I, as many I as W, and
 * B + (I + W) / 2 = m.  Returns NULL, or what breaks, a string the
 * caller frees.
 */
static char *
test_pytorch_rules(const char *text, const struct pw_problem *p)
{
	enum { F, I, W, B, N };
	size_t n = (size_t)p->nstages * (size_t)p->microbatches;
	unsigned char *seen = calloc(n, 1);
	int *rank = malloc((size_t)p->nstages * sizeof *rank);
	int counts[4], row = 0, s, mb, k, c;
	char *copy = pw_xstrdup(text), *line, *lp, *cell, *cp, *why = NULL;
	const char letters[] = "FIWB";

	for (s = 0; s < p->nstages; s++)
		rank[s] = -1;
	for (line = strtok_r(copy, "\n", &lp); line != NULL && why == NULL;
	    line = strtok_r(NULL, "\n", &lp), row++) {
		if (row >= p->devices)
			break;	/* our offload rows: PyTorch has none */
		for (cell = line; cell != NULL && why == NULL; cell = cp) {
			if ((cp = strchr(cell, ',')) != NULL)
				*cp++ = '\0';
			if (*cell == '\0')
				continue;
			if (sscanf(cell, "%d%c%d", &s, (char *)&c, &mb) != 3 ||
			    strchr(letters, (char)c) == NULL) {
				why = pw_xasprintf("bad action %s", cell);
				break;
			}
			k = (int)(strchr(letters, (char)c) - letters);
			if (rank[s] >= 0 && rank[s] != row)
				why = pw_xasprintf("stage %d on ranks %d and %d",
				    s, rank[s], row);
			rank[s] = row;
			if (p->stages[s].device != row)
				why = pw_xasprintf("stage %d on rank %d", s, row);
			if ((k == I || k == B) &&
			    !(seen[s * p->microbatches + mb] & 1 << F))
				why = pw_xasprintf("%s without F first", cell);
			if (k == W && !(seen[s * p->microbatches + mb] & 1 << I))
				why = pw_xasprintf("%s without I first", cell);
			seen[s * p->microbatches + mb] |= (unsigned char)(1 << k);
		}
	}
	if (why == NULL && row != p->devices)
		why = pw_xasprintf("%d rows for %d ranks", row, p->devices);
	for (s = 0; s < p->nstages && why == NULL; s++) {
		memset(counts, 0, sizeof counts);
		for (mb = 0; mb < p->microbatches; mb++)
			for (k = 0; k < N; k++)
				counts[k] += !!(seen[s * p->microbatches + mb] &
				    1 << k);
		if (counts[F] != p->microbatches)
			why = pw_xasprintf("stage %d: %d F", s, counts[F]);
		else if (counts[I] != counts[W])
			why = pw_xasprintf("stage %d: I=%d W=%d", s, counts[I],
			    counts[W]);
		else if (counts[B] + (counts[I] + counts[W]) / 2 !=
		    p->microbatches)
			why = pw_xasprintf("stage %d: backwards %d", s,
			    counts[B] + (counts[I] + counts[W]) / 2);
	}
	free(copy);
	free(seen);
	free(rank);
	return why;
}

/* Reads tests/data/torch/NAME for P and times it: a test line that it
 * reads and one that its makespan is WANT; ORDER0 is rank 0's order. */
static void
test_hand(const char *name, const struct pw_problem *p, double want,
    const char *order0)
{
	const char *dir = getenv("TESTDATA");
	struct pw_schedule *s;
	struct pw_timing *t;
	struct pw_metrics *m;
	struct pw_error err;
	char *path, *got;

	path = pw_xasprintf("%s/torch/%s", dir != NULL ? dir : "tests/data",
	    name);
	if (!tap_ok(pw_torch_read_file(path, p, &s, &err) == PW_OK,
	    "%s reads", name)) {
		tap_diag("%s", err.msg);
		free(path);
		return;
	}
	got = test_order(&s->device[0]);
	tap_str(got, order0, "%s: rank 0's order", name);
	free(got);
	if (tap_ok(pw_simulate(p, s, &t, &err) == PW_OK, "%s times", name)) {
		m = pw_metrics_compute(p, s, t);
		tap_near(m->makespan, want, 0, "%s: makespan %g", name, want);
		pw_metrics_free(m);
		pw_timing_free(t);
	} else
		tap_diag("%s", err.msg);
	pw_schedule_free(s);
	free(path);
}

static void
test_hand_written(void)
{
	struct pw_problem *p;

	/* 1F1B on two ranks, full backwards (B = b + w = 2): rank 1 runs
	 * 1F0 1B0 1F1 1B1 over [1, 7], rank 0's 0B0 [4, 6] and 0B1 [7, 9]. */
	p = test_unit(2, 1, 2, PW_PLACE_LOOP);
	test_hand("loop_1f1b.csv", p, 9, "F(0,0) F(0,1) BW(0,0) BW(0,1)");
	pw_problem_free(p);
	/* Interleaved, loop placement (stage s on rank s mod 2), I and W. */
	p = test_unit(2, 2, 2, PW_PLACE_LOOP);
	test_hand("loop_interleaved_iw.csv", p, 14,
	    "F(0,0) F(0,1) F(2,0) F(2,1) B(2,0) B(2,1) B(0,0) W(2,0) "
	    "B(0,1) W(2,1) W(0,0) W(0,1)");
	pw_problem_free(p);
	/* V placement (stages 0 and 3 on rank 0), CRLF, blanks around a
	 * cell, a trailing empty cell.  Rank 1's 2I1 waits for 3I1 [7, 8],
	 * then runs six ops back to back to 15; rank 0's 0I0 waits for 1I0
	 * [9, 10], and its last four ops end at 16. */
	p = test_unit(2, 2, 2, PW_PLACE_V);
	test_hand("v_zbv.csv", p, 16,
	    "F(0,0) F(0,1) F(3,0) B(3,0) F(3,1) B(3,1) B(0,0) W(3,0) "
	    "B(0,1) W(3,1) W(0,0) W(0,1)");
	pw_problem_free(p);
}

/* Test lines that the CSV TEXT (of FAMILY, in the FORM) reads back for
 * P as WANT. */
static void
test_read_back(const char *text, const struct pw_problem *p,
    const struct pw_schedule *want, const char *family, const char *form)
{
	struct pw_schedule *back;
	struct pw_error err;

	if (!tap_ok(test_read_text(text, p, &back, &err) == PW_OK,
	    "%s: the %s CSV reads back", family, form)) {
		tap_diag("%s", err.msg);
		return;
	}
	tap_ok(test_same_schedule(back, want), "%s: the %s CSV's orders and"
	    " anchors are the schedule's (%zu transfers)", family, form,
	    pw_torch_dropped(want));
	pw_schedule_free(back);
}

/* FAM's schedule on the first of PROBS it applies to, exported both ways
 * and read back. */
static void
test_round_trip(const struct pw_family *fam, struct pw_problem **probs,
    int nprobs)
{
	struct pw_schedule *s = NULL, *compute;
	struct pw_error err;
	char *plain, *full, *why;
	const struct pw_problem *p = NULL;
	int i;

	for (i = 0; i < nprobs && s == NULL; i++) {
		p = probs[i];
		if (fam->build(p, &s, &err) != PW_OK)
			s = NULL;
	}
	if (!tap_ok(s != NULL, "%s builds on a test problem", fam->name))
		return;
	plain = test_write(p, s, false);
	full = test_write(p, s, true);
	why = test_pytorch_rules(plain, p);
	tap_ok(why == NULL, "%s: the export keeps PyTorch's rules%s%s",
	    fam->name, why != NULL ? ": " : "", why != NULL ? why : "");
	free(why);
	/* What the plain form keeps: the compute orders alone. */
	compute = pw_schedule_copy(s);
	for (i = 0; i < compute->nchannels; i++)
		compute->channel[i].len = 0;
	for (i = 0; i < compute->nstages * compute->microbatches; i++)
		compute->anchor[i].op.kind = PW_NKINDS;
	test_read_back(plain, p, compute, fam->name, "plain");
	test_read_back(full, p, s, fam->name, "offload");
	free(plain);
	free(full);
	pw_schedule_free(compute);
	pw_schedule_free(s);
}

static void
test_families(void)
{
	struct pw_problem *probs[4];
	size_t i;

	probs[0] = test_unit(4, 1, 8, PW_PLACE_LOOP);
	probs[1] = test_unit(4, 2, 8, PW_PLACE_LOOP);
	probs[2] = test_unit(4, 2, 8, PW_PLACE_V);
	probs[3] = test_po_problem(4, 2, 8, 1, 0.5, INFINITY);
	for (i = 0; i < pw_nfamilies; i++)
		test_round_trip(&pw_families[i],
		    strncmp(pw_families[i].name, "po", 2) == 0 ? probs + 3 :
		    probs, strncmp(pw_families[i].name, "po", 2) == 0 ? 1 : 3);
	for (i = 0; i < 4; i++)
		pw_problem_free(probs[i]);
}

/* The exact text of a small export: 1F1B on 2 ranks, 2 microbatches. */
static void
test_exact_export(void)
{
	struct pw_problem *p = test_unit(2, 1, 2, PW_PLACE_LOOP);
	struct pw_schedule *s;
	struct pw_error err;
	char *text;

	if (!tap_ok(pw_family_find("zb-h1")->build(p, &s, &err) == PW_OK,
	    "zb-h1 builds on 2 ranks"))
		return;
	text = test_write(p, s, false);
	/* 0I0 waits for 1I0, at step 2: step 3. */
	tap_str(text, "0F0,0F1,,0I0,0W0,0I1,0W1\n"
	    ",1F0,1I0,1F1,1I1,1W0,1W1\n", "zb-h1's CSV, steps aligned");
	free(text);
	pw_schedule_free(s);
	pw_problem_free(p);
}

/* Each malformed CSV with its one-line error. */
static void
test_malformed(void)
{
	static const struct {
		const char *text;
		const char *want;
	} cases[] = {
		{ "0F0,0X1\n,1F0\n",
		  "t.csv:1:5: bad action \"0X1\" (want STAGE, one of F I W B O"
		  " R, MICROBATCH: \"2F0\")" },
		{ "0F0,0F1,0B0,0B1\n,9F0\n",
		  "t.csv:2:2: 9F0: stage 9 out of range (the problem has 2"
		  " stages; the CSV of a family that splits the model again,"
		  " zb-v or 1f1b-interleaved, is read with that family's"
		  " schedule file as its problem)" },
		{ "0F0,0F7\n",
		  "t.csv:1:5: 0F7: microbatch 7 out of range (the problem has"
		  " 2)" },
		/* Any number of digits, as Python's int() reads them. */
		{ "0F0,0F4294967296\n",
		  "t.csv:1:5: 0F4294967296: microbatch 4294967296 out of range"
		  " (the problem has 2)" },
		{ "000000000000F0,0F1\n",
		  "t.csv: 1 row, but the problem has 2 ranks (one row each)" },
		{ "0F0,1F0\n",
		  "t.csv:1:5: 1F0 on rank 0, but stage 1 is on rank 1 (the"
		  " problem's loop placement)" },
		{ "0F0,0B0,0B1\n1F0,1F1,1B0,1B1\n",
		  "t.csv:1:9: 0B1 comes before its F (PyTorch runs F before I"
		  " or B)" },
		{ "0F0,0F1,0W0\n",
		  "t.csv:1:9: 0W0 comes before its I (PyTorch runs I before W)" },
		{ "0F0,0F0\n",
		  "t.csv:1:5: 0F0 appears twice" },
		{ "0F0,0I0,0B0\n",
		  "t.csv:1:9: 0B0 has both a full backward (B) and an input"
		  " backward (I)" },
		{ "0F0,0B0,0F1,0B1\n1F0,1B0\n",
		  "t.csv:2: rank 1's row lacks the F of stage 1, microbatch 1"
		  " (each of the 2 microbatches needs F and a backward on every"
		  " stage)" },
		{ "0F0,0B0,0F1,0B1\n1F0,1I0,1F1,1B1\n",
		  "t.csv:2: rank 1's row lacks the W after its I of stage 1,"
		  " microbatch 0 (each of the 2 microbatches needs F and a"
		  " backward on every stage)" },
		{ "0F0,0B0,0F1,0B1\n",
		  "t.csv: 1 row, but the problem has 2 ranks (one row each)" },
		{ "0F0\n1F0\n\n",
		  "t.csv:3: row 2 (a blank line: PyTorch's csv.reader reads it"
		  " as an empty row), but the problem has 2 ranks (rows 0 to"
		  " 1)" },
		{ "\xef\xbb\xbf" "0F0\n1F0\n",
		  "t.csv:1:1: a UTF-8 byte-order mark, which PyTorch's "
		  "_load_csv reads as part of the first action (save the file "
		  "without it)" },
		{ "\"0F0\",\"0F1\",\"0X1\"\n",
		  "t.csv:1:14: bad action \"0X1\" (want STAGE, one of F I W B O"
		  " R, MICROBATCH: \"2F0\")" },
		/* A comma in quotes is the cell's, a doubled quote one
		 * quote, as csv.reader reads them. */
		{ "\"0F0,0F1\",0B0\n",
		  "t.csv:1:2: bad action \"0F0,0F1\" (junk after the "
		  "microbatch)" },
		{ "\"0F0\"\"\"\n",
		  "t.csv:1:2: bad action \"0F0\"\" (junk after the "
		  "microbatch)" },
		{ "\"0F0\n1F0\n",
		  "t.csv:1:1: bad action (a quote that nothing closes on its "
		  "line)" },
		{ "0F0,\"0F1",
		  "t.csv:1:5: bad action (a quote that nothing closes on its "
		  "line)" },
		{ "0F0, 0SEND_F0\n",
		  "t.csv:1:6: 0SEND_F0: SEND_F is a communication action; only"
		  " PyTorch's compute_only CSV is read" },
		{ "0F0,0O0\n",
		  "t.csv:1:5: 0O0: the problem has no offload link" },
		{ "0F0\r1F0\n",
		  "t.csv:1:4: a carriage return not before a newline" },
		{ "0F0,0F1x\n",
		  "t.csv:1:5: bad action \"0F1x\" (junk after the microbatch)" },
	};
	struct pw_problem *p = test_unit(2, 1, 2, PW_PLACE_LOOP);
	struct pw_schedule *s;
	struct pw_error err;
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		s = NULL;
		if (tap_int(test_read_text(cases[i].text, p, &s, &err),
		    PW_ERR_INPUT, "malformed %zu is refused", i))
			tap_str(err.msg, cases[i].want, "malformed %zu: its line",
			    i);
		tap_ok(s == NULL, "malformed %zu: no schedule", i);
		pw_schedule_free(s);
	}
	pw_problem_free(p);
}

/* Cells past the longest action: blanks around an action (up to a
 * cell's 4 KiB) are stripped as PyTorch strips them, a quote nothing
 * closes is said whatever follows it, and a cell longer than any action
 * is refused as one. */
static void
test_long_cells(void)
{
	struct pw_problem *p = test_unit(2, 1, 2, PW_PLACE_LOOP);
	struct pw_schedule *s = NULL, *want = NULL;
	struct pw_error err;
	char text[8192], pad[201];

	memset(pad, ' ', sizeof pad - 1);
	pad[sizeof pad - 1] = '\0';
	snprintf(text, sizeof text, "%s0F0%s,\"%s0F1%s\",0B0,0B1\n"
	    "1F0,1F1,1B0,1B1\n", pad, pad, pad, pad);
	if (tap_int(test_read_text(text, p, &s, &err), PW_OK, "long cells: "
	    "200 blanks around an action are stripped"))
		tap_ok(test_read_text("0F0,0F1,0B0,0B1\n1F0,1F1,1B0,1B1\n",
		    p, &want, &err) == PW_OK && test_same_schedule(s, want),
		    "long cells: the padded CSV is the plain one");
	else
		tap_diag("%s", err.msg);
	pw_schedule_free(s);
	pw_schedule_free(want);

	snprintf(text, sizeof text, "0F0,\"%0100d\n", 3);
	if (tap_int(test_read_text(text, p, &s, &err), PW_ERR_INPUT,
	    "long cells: an unclosed quote before 100 digits is refused"))
		tap_str(err.msg, "t.csv:1:5: bad action (a quote that nothing "
		    "closes on its line)", "long cells: the quote is named");
	snprintf(text, sizeof text, "0F0,0F%065d\n", 1);
	if (tap_int(test_read_text(text, p, &s, &err), PW_ERR_INPUT,
	    "long cells: a 67-byte action is refused"))
		tap_str(err.msg, "t.csv:1:5: bad action (longer than any "
		    "action: 64 characters at most)", "long cells: 67 bytes "
		    "are too long");
	memset(text, '7', 5000);
	strcpy(text + 5000, "\n");
	if (tap_int(test_read_text(text, p, &s, &err), PW_ERR_INPUT,
	    "long cells: a 5000-byte cell is refused"))
		tap_str(err.msg, "t.csv:1:1: bad action (longer than any "
		    "action: 64 characters at most)", "long cells: past a "
		    "cell's 4 KiB");
	tap_ok(s == NULL, "long cells: no schedule from a refused one");
	pw_problem_free(p);
}

/* The offload tokens by hand: a channel's row after the ranks', a reload
 * anchored at an op's end, and a transfer in a rank's row refused. */
static void
test_offload_tokens(void)
{
	struct pw_problem *p = test_po_problem(2, 1, 1, 1, 0.5, INFINITY);
	struct pw_schedule *s;
	struct pw_anchor a;
	struct pw_error err;
	char *text;
	int chan;

	chan = pw_problem_channel(p, 0, PW_OFFLOAD);
	tap_int(chan, 0, "stage 0 offloads on channel 0 (half duplex)");
	if (tap_ok(test_read_text("0F0,,,,0I0,0W0\n,1F0,1I0,1W0\n"
	    ",0O0,0R0@0F0+\n", p, &s, &err) == PW_OK, "offload tokens read")) {
		tap_int(s->channel[0].len, 2, "channel 0 has both transfers");
		tap_ok(pw_schedule_anchor(s, 0, 0, &a) && a.at_end &&
		    a.op.kind == PW_F && a.op.stage == 0,
		    "the reload's anchor is 0F0's end");
		text = test_write(p, s, true);
		tap_str(text, "0F0,,,0I0,0W0\n,1F0,1I0,1W0\n,0O0,0R0@0F0+\n",
		    "written back as read");
		free(text);
		pw_schedule_free(s);
	} else
		tap_diag("%s", err.msg);
	tap_int(test_read_text("0F0,0O0\n1F0\n", p, &s, &err), PW_ERR_INPUT,
	    "a transfer in a rank's row is refused");
	tap_str(err.msg, "t.csv:1:5: 0O0 in row 0, but it belongs in row 2"
	    " (channel 0's, after the 2 ranks' rows)", "its line");
	/* Known only after the last row: the anchor names no op. */
	tap_int(test_read_text("0F0,,,,0I0,0W0\n,1F0,1I0,1W0\n"
	    ",0O0,0R0@0B0\n", p, &s, &err), PW_ERR_INPUT,
	    "a reload anchored at an op the schedule lacks is refused");
	tap_str(err.msg, "t.csv:3:6: 0R0@0B0: its anchor 0B0 is no op of the "
	    "schedule (an anchor must be one of its rank's ops)",
	    "at the reload's cell");
	/* Rows counted from 0, as ranks and the line above count them. */
	tap_int(test_read_text("0F0\n1F0\n0O0\n1F1\n", p, &s, &err),
	    PW_ERR_INPUT, "a row past the channel's is refused");
	tap_str(err.msg, "t.csv:4: row 3, but the problem has 2 ranks and"
	    " their channels (rows 0 to 2)", "its line");
	pw_problem_free(p);
}

/* Random text over the CSV's alphabet: each read gives a schedule or a
 * one-line error, never a crash (the sanitizer builds run this too). */
static void
test_random(void)
{
	static const char alphabet[] = "0123456789FIWBOR@+,, \n\n\r\"x";
	struct pw_problem *p = test_po_problem(2, 2, 2, 1, 0.5, INFINITY);
	struct pw_schedule *s;
	struct pw_error err;
	uint64_t state = 18;
	char text[96];
	int i, k, bad = 0, read = 0, rc;

	for (i = 0; i < 5000; i++) {
		for (k = 0; k < (int)sizeof text - 1; k++)
			text[k] = alphabet[pw_splitmix64(&state) %
			    (sizeof alphabet - 1)];
		text[pw_splitmix64(&state) % (sizeof text)] = '\0';
		text[sizeof text - 1] = '\0';
		rc = test_read_text(text, p, &s, &err);
		if (rc == PW_OK)
			read++;
		else if (rc != PW_ERR_INPUT || strchr(err.msg, '\n') != NULL ||
		    strncmp(err.msg, "t.csv", 5) != 0)
			bad++;
		pw_schedule_free(s);
	}
	tap_int(bad, 0, "5000 random CSVs: each read or refused in one line"
	    " naming the file (%d read)", read);
	pw_problem_free(p);
}

int
main(void)
{
	test_hand_written();
	test_exact_export();
	test_families();
	test_malformed();
	test_long_cells();
	test_offload_tokens();
	test_random();
	return tap_done();
}
