/*
 * test_views.c - the text Gantt chart, the Chrome trace and the SVG of
 * hand-timed schedules, compared with hand-drawn expectations.
 */
#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "pipewright.h"
#include "tap.h"

/* A problem, a schedule, its timing and metrics, as the views get them. */
struct fixture {
	struct pw_problem *p;
	struct pw_schedule *s;
	struct pw_timing *t;
	struct pw_metrics *m;
};

struct timed {
	enum pw_kind kind;
	int	stage, mb;
	double	start, end;
};

/*
 * Appends OPS to the schedule in order and times them as given; the
 * metrics are computed from that timing.
 */
static void
fixture_time(struct fixture *f, const struct timed *ops, size_t n)
{
	size_t i, idx;

	f->s = pw_schedule_new(f->p);
	f->t = pw_xcalloc(1, sizeof *f->t);
	f->t->universe = pw_op_universe(f->p);
	f->t->start = pw_xmalloc(f->t->universe * sizeof *f->t->start);
	f->t->end = pw_xmalloc(f->t->universe * sizeof *f->t->end);
	for (i = 0; i < f->t->universe; i++)
		f->t->start[i] = f->t->end[i] = NAN;
	for (i = 0; i < n; i++) {
		struct pw_op op = { ops[i].kind, ops[i].stage, ops[i].mb };

		pw_schedule_append(f->s, f->p, op);
		idx = pw_op_index(f->p, op);
		f->t->start[idx] = ops[i].start;
		f->t->end[idx] = ops[i].end;
	}
	f->m = pw_metrics_compute(f->p, f->s, f->t);
}

static void
fixture_free(struct fixture *f)
{
	pw_metrics_free(f->m);
	pw_timing_free(f->t);
	pw_schedule_free(f->s);
	pw_problem_free(f->p);
}

/*
 * Two devices, two stages, two microbatches, unit times; stage 0 offloads
 * one of its two activation bytes over a 1 B/s link.  Device 0 runs F F B
 * W BW, device 1 F B F BW W; microbatch 1 of stage 0 is offloaded at 2
 * and reloaded at 4, anchored at W(0,0)'s start.  Limits 3.5 and 4 bytes:
 * device 0 peaks at 4 (two activations) and so breaks its limit.
 */
static const struct timed tiny_ops[] = {
	{ PW_F, 0, 0, 0, 1 }, { PW_F, 0, 1, 1, 2 }, { PW_B, 0, 0, 3, 4 },
	{ PW_W, 0, 0, 4, 5 }, { PW_BW, 0, 1, 6, 8 },
	{ PW_F, 1, 0, 1, 2 }, { PW_B, 1, 0, 2, 3 }, { PW_F, 1, 1, 3, 4 },
	{ PW_BW, 1, 1, 4, 6 }, { PW_W, 1, 0, 6, 7 },
	{ PW_OFFLOAD, 0, 1, 2, 3 }, { PW_RELOAD, 0, 1, 4, 5 },
};
#define TINY_NOPS	(sizeof tiny_ops / sizeof tiny_ops[0])

/* The tiny schedule with every time t at SCALE * t + SHIFT. */
static void
tiny_at(struct fixture *f, const char *name, double scale, double shift)
{
	struct pw_anchor anchor = { { PW_W, 0, 0 }, false };
	struct timed ops[TINY_NOPS];
	size_t i;
	int s;

	for (i = 0; i < TINY_NOPS; i++) {
		ops[i] = tiny_ops[i];
		ops[i].start = scale * ops[i].start + shift;
		ops[i].end = scale * ops[i].end + shift;
	}

	f->p = pw_problem_new(2, 2, 2);
	f->p->name = pw_xstrdup(name);
	for (s = 0; s < 2; s++)
		f->p->stages[s] = (struct pw_stage){ s, 1, 1, 1, 2, 1, 0, 0 };
	f->p->stages[0].offload = 1;
	f->p->memory[0].limit = 3.5;
	f->p->memory[1].limit = 4;
	pw_problem_set_link(f->p, 1, 1, 0, true);
	fixture_time(f, ops, TINY_NOPS);
	pw_schedule_set_anchor(f->s, 0, 1, anchor);
	f->s->family = pw_xstrdup("hand");
}

static void
tiny(struct fixture *f, const char *name)
{
	tiny_at(f, name, 1, 0);
}

/* Returns what WRITE printed, in a string the caller frees. */
static char *
capture_show(const struct fixture *f, int width)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	pw_show(fp, f->p, f->s, f->t, f->m, width);
	fclose(fp);
	return buf;
}

static char *
capture_export(const char *format, const struct fixture *f, int *rc)
{
	const struct pw_export_format *fmt = pw_export_find(format);
	struct pw_error err;
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	*rc = fmt->write(fp, f->p, f->s, f->t, f->m, NULL, &err);
	fclose(fp);
	return buf;
}

/* Returns a copy of the line of TEXT that starts with PREFIX (without its
 * newline), or NULL; the caller frees it. */
static char *
line_of(const char *text, const char *prefix)
{
	const char *at = text, *nl;

	while (at != NULL && *at != '\0') {
		nl = strchr(at, '\n');
		if (strncmp(at, prefix, strlen(prefix)) == 0) {
			size_t n = nl != NULL ? (size_t)(nl - at) : strlen(at);
			char *line = pw_xmalloc(n + 1);

			memcpy(line, at, n);
			line[n] = '\0';
			return line;
		}
		at = nl != NULL ? nl + 1 : NULL;
	}
	return NULL;
}

static int
count(const char *text, const char *needle)
{
	int n = 0;

	for (; (text = strstr(text, needle)) != NULL; text += strlen(needle))
		n++;
	return n;
}

static bool
no_control(const char *text)
{
	for (; *text != '\0'; text++)
		if ((unsigned char)*text == 0x7f ||
		    ((unsigned char)*text < 0x20 && *text != '\n'))
			return false;
	return true;
}

/* The hand timing is what the simulator gives, so the pictures below show
 * a real schedule. */
static void
test_tiny_is_simulated(void)
{
	struct fixture f;
	struct pw_timing *t;
	struct pw_error err;
	size_t i, idx, bad = 0;

	tiny(&f, "tiny");
	if (!tap_int(pw_simulate(f.p, f.s, &t, &err), PW_OK, "tiny simulates"))
		goto out;
	for (i = 0; i < TINY_NOPS; i++) {
		struct pw_op op = { tiny_ops[i].kind, tiny_ops[i].stage,
		    tiny_ops[i].mb };

		idx = pw_op_index(f.p, op);
		bad += t->start[idx] != tiny_ops[i].start ||
		    t->end[idx] != tiny_ops[i].end;
	}
	tap_int((long long)bad, 0, "hand times equal the simulator's");
	pw_timing_free(t);
	tap_near(f.m->bubble_rate, 0.25, 0, "bubble (8 - 6) / 8");
	tap_near(f.m->device[0].peak, 4, 0, "device 0 peak");
out:
	fixture_free(&f);
}

/* 48 chart columns for 8 seconds: 6 columns a second. */
static void
test_show_wide(void)
{
	static const char want[] =
	    "tiny (hand): 2 devices, 2 stages, 2 microbatches\n"
	    "makespan 8 s, bubble rate 25.00%, total idle 4 s\n"
	    "peak: dev 0 4 B (limit 3.5 B, OVER), dev 1 3 B (limit 4 B)\n"
	    "dev 0     |0FFFFF1fffff......0BBBBB0wwwww......1XXXXXXXXXXX|\n"
	    "dev 1     |......0FFFFF0bbbbb1FFFFF1xxxxxxxxxxx0WWWWW......|\n"
	    "link0.d2h |............1>>>>>..............................|\n"
	    "link0.h2d |........................1<<<<<..................|\n"
	    "           +-----------+-----------+-----------+-----------+\n"
	    "           0 s         2 s         4 s         6 s\n"
	    "legend: F forward, B input gradient, W weight gradient,\n"
	    "        X fused B+W, > offload, < reload, . idle,\n"
	    "        digits: microbatch,\n"
	    "        from op to op: F f B b W w X x > } < {\n";
	struct fixture f;
	char *got;

	tiny(&f, "tiny");
	got = capture_show(&f, 60);
	tap_str(got, want, "show at width 60");
	free(got);
	fixture_free(&f);

	tiny(&f, "t\xc3\xa9st\x1b[2J");
	got = capture_show(&f, 60);
	tap_ok(no_control(got), "show prints no control character whatever the name");
	tap_ok(strncmp(got, "t\xc3\xa9st\\x1b[2J (hand): ", 21) == 0,
	    "show escapes control characters in the name, keeps UTF-8");
	free(got);
	fixture_free(&f);
}

/* 28 columns for 8 seconds: 3.5 a second, so edges round half up. */
static void
test_show_narrow(void)
{
	static const char *const want[] = {
		"dev 0     |0FFF1ff....0BB0www...1XXXXXX|",
		"dev 1     |....0FF0bbb1FF1xxxxxx0WWW...|",
		"link0.d2h |.......1>>>.................|",
		"link0.h2d |..............1<<<..........|",
		"           +-----------------+----------",
		"           0 s               5 s",
	};
	static const char *const prefix[] = {
		"dev 0", "dev 1", "link0.d2h", "link0.h2d", "           +",
		"           0",
	};
	struct fixture f;
	char *got, *line;
	size_t i;

	tiny(&f, "tiny");
	got = capture_show(&f, 40);
	for (i = 0; i < sizeof want / sizeof want[0]; i++) {
		line = line_of(got, prefix[i]);
		tap_str(line, want[i], "narrow chart line %zu", i);
		free(line);
	}
	free(got);
	got = capture_show(&f, 10);
	line = line_of(got, "dev 0");
	tap_int(line != NULL ? (long long)strlen(line) : 0, 40,
	    "a width below 40 draws 40 columns");
	free(line);
	free(got);
	fixture_free(&f);
}

/*
 * One column per second.  B(0,0) covers no column's midpoint: it takes
 * the column around its midpoint from W(0,0), which keeps five; B(0,1)
 * takes an idle column; B(0,2) would erase W(0,1)'s only column, so it
 * stays hidden.
 */
static void
test_show_short_ops(void)
{
	static const struct timed ops[] = {
		{ PW_F, 0, 0, 0, 10 }, { PW_F, 0, 1, 10, 20 },
		{ PW_B, 0, 0, 20, 20.3 }, { PW_W, 0, 0, 20.3, 26 },
		{ PW_B, 0, 1, 27, 27.4 }, { PW_W, 0, 1, 27.6, 28.6 },
		{ PW_B, 0, 2, 28.6, 28.9 }, { PW_W, 0, 2, 28.9, 30 },
		{ PW_F, 0, 2, 30, 32 },
	};
	struct fixture f;
	char *got, *line;

	f.p = pw_problem_new(1, 1, 3);
	fixture_time(&f, ops, sizeof ops / sizeof ops[0]);
	got = capture_show(&f, 40);
	line = line_of(got, "dev 0");
	tap_str(line, "dev 0 |0FFFFFFFFF1fffffffffB0wwww.BwW2f|",
	    "short ops take a column only where no op loses its last");
	free(line);
	free(got);
	fixture_free(&f);
}

/* Three stages on one device: a line per chunk, so chunk 0 and chunk 2
 * never look alike; blank where the device runs another chunk's op. */
static void
test_show_chunks(void)
{
	static const struct timed ops[] = {
		{ PW_F, 0, 0, 0, 1 }, { PW_F, 1, 0, 1, 2 }, { PW_F, 2, 0, 2, 3 },
		{ PW_BW, 2, 0, 3, 5 }, { PW_BW, 1, 0, 5, 7 },
		{ PW_BW, 0, 0, 7, 9 },
	};
	static const char *const want[] = {
		"dev 0 c0 |0FF                    0xxxxx|",
		"dev 0 c1 |   0FF          0xxxxxx      |",
		"dev 0 c2 |      0FFF0xxxxx             |",
	};
	struct fixture f;
	char *got, *line, prefix[16];
	size_t i;

	f.p = pw_problem_new(1, 3, 1);
	fixture_time(&f, ops, sizeof ops / sizeof ops[0]);
	got = capture_show(&f, 40);
	for (i = 0; i < sizeof want / sizeof want[0]; i++) {
		snprintf(prefix, sizeof prefix, "dev 0 c%zu", i);
		line = line_of(got, prefix);
		tap_str(line, want[i], "chunk %zu has a line of its own", i);
		free(line);
	}
	tap_ok(strstr(got, "dev D cN: device D's ops of its chunk N") != NULL,
	    "the legend explains the chunk lines");
	tap_ok(strstr(got, "makespan 9 s") != NULL,
	    "the header names the makespan");
	free(got);
	fixture_free(&f);
}

/* 64 forwards of a second in 32 columns: every other op keeps a column,
 * and the glyphs alternate, so no two ops run together. */
static void
test_show_boundaries(void)
{
	struct timed ops[64];
	struct fixture f;
	char *got, *line;
	int i;

	for (i = 0; i < 64; i++)
		ops[i] = (struct timed){ PW_F, 0, i, i, i + 1 };
	f.p = pw_problem_new(1, 1, 64);
	fixture_time(&f, ops, 64);
	got = capture_show(&f, 40);
	line = line_of(got, "dev 0");
	tap_str(line, "dev 0 |FfFfFfFfFfFfFfFfFfFfFfFfFfFfFfFf|",
	    "same-kind ops one column wide alternate glyphs");
	free(line);
	free(got);
	fixture_free(&f);
}

/* Returns what pw_show_window printed (rc in *RC), a string the caller
 * frees. */
static char *
capture_window(const struct fixture *f, int width, double from, double to,
    int *rc, struct pw_error *err)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	*rc = pw_show_window(fp, f->p, f->s, f->t, f->m, width, from, to, err);
	fclose(fp);
	return buf;
}

/* The window 2 s to 6 s of the tiny schedule at 9 columns a second:
 * ops cut at its edges (BW(1,1) ends at 6), ticks at the round times
 * inside it, counted from the schedule's start. */
static void
test_show_window(void)
{
	static const char *const want[] = {
		"window: 2 s to 6 s",
		"dev 0     |.........0BBBBBBBB0wwwwwwww.........|",
		"dev 1     |0BBBBBBBB1ffffffff1XXXXXXXXXXXXXXXXX|",
		"link0.d2h |1>>>>>>>>...........................|",
		"link0.h2d |..................1<<<<<<<<.........|",
		"           +-----------------+-----------------+",
		"           2 s               4 s",
	};
	static const char *const prefix[] = {
		"window", "dev 0", "dev 1", "link0.d2h", "link0.h2d",
		"           +", "           2",
	};
	struct pw_error err;
	struct fixture f;
	char *got, *line;
	size_t i;
	int rc;

	tiny(&f, "tiny");
	got = capture_window(&f, 48, 2, 6, &rc, &err);
	tap_int(rc, PW_OK, "a window inside the schedule draws");
	for (i = 0; i < sizeof want / sizeof want[0]; i++) {
		line = line_of(got, prefix[i]);
		tap_str(line, want[i], "window line %zu", i);
		free(line);
	}
	free(got);
	got = capture_window(&f, 48, NAN, NAN, &rc, &err);
	tap_ok(rc == PW_OK && strstr(got, "window") == NULL,
	    "no window: the whole schedule, no window line");
	free(got);
	got = capture_window(&f, 48, 5, 5, &rc, &err);
	tap_int(rc, PW_ERR_INPUT, "from at to is refused");
	tap_str(err.msg, "the window's start 5 s is not before its end 5 s",
	    "one line says so");
	tap_str(got, "", "nothing drawn");
	free(got);
	got = capture_window(&f, 48, NAN, 9, &rc, &err);
	tap_int(rc, PW_ERR_INPUT, "a window past the end is refused");
	tap_str(err.msg, "the window 0 s to 9 s reaches outside the "
	    "schedule, 0 s to 8 s", "one line names both");
	free(got);
	got = capture_window(&f, 48, NAN, 8.0000001, &rc, &err);
	tap_str(err.msg, "the window 0 s to 8.0000001 s reaches outside the "
	    "schedule, 0 s to 8 s", "an end just past it in full, not 8 s "
	    "to 8 s");
	free(got);
	got = capture_window(&f, 48, -1, NAN, &rc, &err);
	tap_int(rc, PW_ERR_INPUT, "a window before the start is refused");
	tap_str(err.msg, "the window -1 s to 8 s reaches outside the "
	    "schedule, 0 s to 8 s", "its end, the schedule's, at four digits");
	free(got);
	fixture_free(&f);
}

/* Returns the first event with this name and phase (borrowed), or NULL. */
static json_t *
find_event(json_t *events, const char *name, const char *ph, int nth)
{
	size_t i;
	json_t *ev;

	json_array_foreach(events, i, ev) {
		if (strcmp(json_string_value(json_object_get(ev, "name")),
		    name) == 0 && strcmp(json_string_value(json_object_get(ev,
		    "ph")), ph) == 0 && nth-- == 0)
			return ev;
	}
	return NULL;
}

static int
count_phase(json_t *events, const char *ph, const char *name_prefix)
{
	size_t i;
	json_t *ev;
	int n = 0;

	json_array_foreach(events, i, ev) {
		n += strcmp(json_string_value(json_object_get(ev, "ph")), ph) ==
		    0 && strncmp(json_string_value(json_object_get(ev, "name")),
		    name_prefix, strlen(name_prefix)) == 0;
	}
	return n;
}

static double
num(json_t *obj, const char *key)
{
	return json_number_value(json_object_get(obj, key));
}

static void
test_chrome(void)
{
	struct fixture f;
	json_error_t jerr;
	json_t *root, *events, *ev, *args;
	char *text, *again;
	int rc;

	tiny(&f, "tiny");
	text = capture_export("chrome", &f, &rc);
	tap_int(rc, PW_OK, "chrome export succeeds");
	root = json_loads(text, 0, &jerr);
	if (!tap_ok(root != NULL, "the trace parses"))
		goto out;
	events = json_object_get(root, "traceEvents");
	tap_str(json_string_value(json_object_get(root, "displayTimeUnit")),
	    "ms", "display unit");
	tap_int(count_phase(events, "X", ""), 12, "one X event per op");
	tap_int(count_phase(events, "C", "mem dev 0"), 6,
	    "device 0 memory: one counter per curve point");
	tap_int(count_phase(events, "C", "mem dev 1"), 5, "device 1 memory");
	tap_int(count_phase(events, "C", "limit dev "), 4,
	    "each limit at the start and the end");
	tap_int(count_phase(events, "M", "thread_name"), 4,
	    "two devices and two channels name their tracks");

	ev = find_event(events, "BW s0.c0 mb1", "X", 0);
	if (tap_ok(ev != NULL, "BW(0,1) is there")) {
		tap_near(num(ev, "ts"), 6e6, 0, "BW(0,1) starts at 6 s in us");
		tap_near(num(ev, "dur"), 2e6, 0, "BW(0,1) lasts 2 s");
		tap_int(json_integer_value(json_object_get(ev, "tid")), 0,
		    "on device 0's track");
		args = json_object_get(ev, "args");
		tap_int(json_integer_value(json_object_get(args, "stage")), 0,
		    "args name the stage");
		tap_str(json_string_value(json_object_get(args, "kind")), "BW",
		    "args name the kind");
	}
	ev = find_event(events, "RELOAD s0.c0 mb1", "X", 0);
	if (tap_ok(ev != NULL, "the reload is there")) {
		tap_int(json_integer_value(json_object_get(ev, "tid")), 3,
		    "on link0.h2d's track (after the two devices)");
		tap_near(num(ev, "ts"), 4e6, 0, "reload starts at 4 s");
		tap_near(num(json_object_get(ev, "args"), "bytes"), 1, 0,
		    "reload moves 1 byte");
	}
	ev = find_event(events, "thread_name", "M", 3);
	tap_str(json_string_value(json_object_get(json_object_get(ev, "args"),
	    "name")), "link0.h2d", "channel track name");
	ev = find_event(events, "process_name", "M", 0);
	tap_str(json_string_value(json_object_get(json_object_get(ev, "args"),
	    "name")), "pipewright: tiny (hand)", "process name");
	ev = find_event(events, "mem dev 0", "C", 1);
	tap_near(num(ev, "ts"), 1e6, 0, "second memory point at 1 s");
	tap_near(num(json_object_get(ev, "args"), "GiB"), 4 / 1073741824.0, 1e-22,
	    "holding two activations, 4 B in GiB (15 digits)");
	ev = find_event(events, "limit dev 0", "C", 1);
	tap_near(num(ev, "ts"), 8e6, 0, "limit drawn to the end");
	tap_near(num(json_object_get(ev, "args"), "GiB"), 3.5 / 1073741824.0,
	    1e-22, "limit value in GiB (15 digits)");
	json_decref(root);

	again = capture_export("chrome", &f, &rc);
	tap_str(again, text, "the trace is deterministic");
	free(again);
out:
	free(text);
	fixture_free(&f);
}

/* JSON strings are UTF-8: a name that is not fails with a message. */
static void
test_chrome_bad_name(void)
{
	struct fixture f;
	char *text;
	int rc;

	tiny(&f, "bad \xff name");
	text = capture_export("chrome", &f, &rc);
	tap_int(rc, PW_ERR_INPUT, "a name that is not UTF-8 is refused");
	free(text);
	fixture_free(&f);
}

static void
test_svg(void)
{
	struct fixture f;
	char *text;
	size_t len;
	int rc;

	tiny(&f, "a<b & \"c\"");
	text = capture_export("svg", &f, &rc);
	tap_int(rc, PW_OK, "svg export succeeds");
	len = strlen(text);
	tap_ok(strncmp(text, "<svg ", 5) == 0, "starts with <svg");
	tap_ok(len > 7 && strcmp(text + len - 7, "</svg>\n") == 0,
	    "ends with </svg>");
	tap_int(count(text, "<rect class=\"op "), 12, "one rectangle per op");
	tap_int(count(text, "<rect class=\"op BW"), 2, "two fused backwards");
	tap_int(count(text, "<rect class=\"op OFFLOAD"), 1, "one offload");
	tap_int(count(text, "class=\"mb\""), 12,
	    "every op is wide enough for its microbatch number");
	tap_int(count(text, "<text"), count(text, "</text>"),
	    "text elements are closed");
	tap_ok(strstr(text, "a&lt;b &amp; &quot;c&quot; (hand)") != NULL,
	    "the title is escaped");
	tap_ok(strstr(text, "a<b") == NULL && strstr(text, "& \"") == NULL,
	    "no raw markup from the name");
	tap_int(count(text, "<clipPath"), 2, "both limits clip a red curve");
	tap_int(count(text, "class=\"limit\""), 2, "both limits dashed");
	tap_ok(strstr(text, "peak 4 B, limit 3.5 B (over)") != NULL,
	    "device 0's peak label says over");
	tap_int(count(text, "class=\"end bad\""), 1, "only device 0 is over");
	tap_int(count(text, "class=\"lim\">limit 3.5 B<"), 1,
	    "device 0's limit is labelled on its line");
	tap_int(count(text, "class=\"tick\""), 10,
	    "memory ticks: 0 to 4 B, five a plot");
	tap_int(count(text, "class=\"tick\">2 B<"), 2, "a tick at 2 B each");
	tap_ok(strstr(text, ">link0.d2h d0-&gt;host<") != NULL,
	    "the offload lane names its device");
	tap_int(count(text, "<rect class=\"busy\""), 0,
	    "every op wide enough to draw alone");

	/* At the least width the long labels shrink rather than overlap:
	 * the stats line and device 0's peak label, not the plot's name. */
	{
		const struct pw_export_options narrow = { PW_EXPORT_WIDTH_MIN,
		    0, NULL };
		char *buf = NULL;
		size_t n = 0;
		FILE *fp = open_memstream(&buf, &n);
		struct pw_error err;

		tap_int(pw_export_find("svg")->write(fp, f.p, f.s, f.t, f.m,
		    &narrow, &err), PW_OK, "a 320-pixel SVG");
		fclose(fp);
		tap_ok(strstr(text, "style=\"font-size") == NULL,
		    "at 1200 pixels no label shrinks");
		tap_ok(strstr(buf, "style=\"font-size:5.0px\">makespan 8 s")
		    != NULL, "at 320 the stats line shrinks, to the least "
		    "font for its 86 characters");
		tap_ok(strstr(buf, "class=\"end bad\" style=\"font-size:") !=
		    NULL && strstr(buf, "style=\"font-size:5.0px\">dev 0<") ==
		    NULL, "and so does the peak label, beside its plot's name");
		free(buf);
	}
	free(text);
	fixture_free(&f);

	/* Legal UTF-8 that XML 1.0 may not carry. */
	tiny(&f, "x\x01\xef\xbf\xbe\xef\xbf\xbf\xef\xbf\xbd\xc3\xa9");
	text = capture_export("svg", &f, &rc);
	tap_ok(rc == PW_OK && strstr(text, ">x???\xef\xbf\xbd\xc3\xa9 "
	    "(hand)<") != NULL, "a control character, U+FFFE and U+FFFF "
	    "become '?' in the SVG, U+FFFD and the rest stay");
	free(text);
	fixture_free(&f);
}

/* Nothing timed: every view still draws, with idle rows and no ops. */
static void
test_empty(void)
{
	struct fixture f;
	char *got, *line;
	int rc;

	f.p = pw_problem_new(2, 2, 1);
	fixture_time(&f, NULL, 0);
	got = capture_show(&f, 40);
	line = line_of(got, "dev 1");
	tap_str(line, "dev 1    |.............................|",
	    "an empty schedule shows idle rows");
	free(line);
	free(got);
	got = capture_export("svg", &f, &rc);
	tap_ok(rc == PW_OK && count(got, "<rect class=\"op ") == 0,
	    "an empty SVG has no op");
	free(got);
	got = capture_export("chrome", &f, &rc);
	tap_ok(rc == PW_OK && count(got, "\"ph\":\"X\"") == 0,
	    "an empty trace has no op");
	free(got);
	fixture_free(&f);
}

/* The chart rows of show at width 60: what must not move when every
 * time is scaled.  Returns a string the caller frees. */
static char *
show_rows(const struct fixture *f)
{
	static const char *const prefix[] = { "dev 0 ", "dev 1 ",
	    "link0.d2h ", "link0.h2d " };
	char *text = capture_show(f, 60), *rows = pw_xstrdup(""), *line, *next;
	size_t i;

	for (i = 0; i < sizeof prefix / sizeof prefix[0]; i++) {
		line = line_of(text, prefix[i]);
		next = pw_xasprintf("%s%s\n", rows, line != NULL ? line : "-");
		free(line);
		free(rows);
		rows = next;
	}
	free(text);
	return rows;
}

/* Ticks stay round where they can and are never more than asked for nor
 * a step of 0, at both ends of the doubles. */
static void
test_ticks(void)
{
	double step;

	tap_int(pw_view_ticks(8, 13, &step), 9, "8 s: 9 ticks");
	tap_near(step, 1, 0, "a second apart");
	tap_int(pw_view_ticks(8e307, 13, &step), 9, "8e307 s: 9 ticks");
	tap_near(step, 1e307, 1e-15, "1e307 s apart");
	tap_int(pw_view_ticks(4e-323, 13, &step), 2,
	    "8 denormals: no round step, so both ends");
	tap_ok(step == 4e-323, "a step of the whole span");
	tap_int(pw_view_ticks(DBL_MAX, 13, &step), 9,
	    "DBL_MAX: 9 ticks (2e307 apart)");
	tap_ok(isfinite(step) && step > 0, "a finite step");
	tap_int(pw_view_ticks(0, 13, &step), 1, "no span: one tick");
	tap_int(pw_view_ticks(INFINITY, 13, &step), 1, "no finite span: one");
	tap_near(pw_view_at(0, 5e-324, 5e-324), 1, 0,
	    "a denormal span maps its end to 1");
	tap_near(pw_view_at(-DBL_MAX, DBL_MAX, DBL_MAX), 1, 0,
	    "an overflowing difference clamps to 1");
	tap_near(pw_view_at(0, 0, 3), 0, 0, "no span maps to 0");
}

/* Every view draws any finite timing: times of a few denormals draw as
 * unit times do, times near DBL_MAX too, and a timing whose makespan
 * overflows draws without NaN (the trace, in microseconds, refuses). */
static void
test_extreme_times(void)
{
	static const struct {
		const char *what;
		double	scale, shift;
		int	grid;		/* SVG grid lines */
		int	chrome;		/* the trace's return code */
	} c[] = {
		{ "denormal times", 5e-324, 0, 2, PW_OK },
		{ "times near DBL_MAX", 2e307, 0, 9, PW_ERR_INPUT },
		{ "a makespan that overflows", 3e307, -1.5e308, 1,
		    PW_ERR_INPUT },
	};
	struct fixture f;
	char *want, *got;
	size_t i;
	int rc;

	tiny(&f, "tiny");
	want = show_rows(&f);
	fixture_free(&f);
	for (i = 0; i < sizeof c / sizeof c[0]; i++) {
		tiny_at(&f, "tiny", c[i].scale, c[i].shift);
		got = show_rows(&f);
		if (c[i].shift == 0)
			tap_str(got, want, "%s: show draws the unit chart",
			    c[i].what);
		free(got);
		got = capture_show(&f, 60);
		tap_ok(strstr(got, "nan") == NULL && strlen(got) < 1000,
		    "%s: show draws no NaN", c[i].what);
		free(got);
		got = capture_export("svg", &f, &rc);
		tap_ok(rc == PW_OK && strstr(got, "nan") == NULL &&
		    (c[i].shift != 0 || strstr(got, "inf") == NULL),
		    "%s: the SVG has no NaN%s", c[i].what, c[i].shift != 0 ?
		    "" : " or infinity");
		/* No finite span: every op is 0 pixels wide, no bar. */
		tap_int(count(got, "<rect class=\"op "), c[i].shift != 0 ?
		    0 : 12, "%s: every op drawn that has a width", c[i].what);
		tap_int(count(got, "class=\"grid\""), c[i].grid,
		    "%s: %d grid lines", c[i].what, c[i].grid);
		free(got);
		got = capture_export("chrome", &f, &rc);
		tap_int(rc, c[i].chrome, "%s: the trace", c[i].what);
		free(got);
		fixture_free(&f);
	}
	free(want);
}

/* A link lane names the devices its group holds, runs as ranges. */
static void
test_link_devices(void)
{
	struct pw_problem *p = pw_problem_new(5, 5, 1);
	char buf[32];

	pw_problem_set_link(p, 1, 1, 0, true);
	p->link.group[0] = p->link.group[1] = p->link.group[3] = 0;
	p->link.group[2] = p->link.group[4] = 1;
	p->link.ngroups = 2;
	tap_str(pw_view_link_devices(p, 0, buf, sizeof buf), "d0-1,d3->host",
	    "group 0's D2H: a range and a device");
	tap_str(pw_view_link_devices(p, 3, buf, sizeof buf), "host->d2,d4",
	    "group 1's H2D");
	p->link.duplex = false;
	tap_str(pw_view_link_devices(p, 1, buf, sizeof buf), "d2,d4<->host",
	    "half duplex: one channel a group, both ways");
	pw_problem_free(p);
}

static void
test_registry(void)
{
	tap_int((long long)pw_nexport_formats, 5, "five export formats");
	tap_ok(pw_export_find("chrome") == &pw_export_formats[0],
	    "chrome found");
	tap_ok(pw_export_find("svg") == &pw_export_formats[1], "svg found");
	tap_ok(pw_export_find("png") == &pw_export_formats[2], "png found");
	tap_ok(!pw_export_formats[0].sized && pw_export_formats[1].sized &&
	    pw_export_formats[2].sized && !pw_export_formats[3].sized &&
	    !pw_export_formats[4].sized, "only pictures take a size");
	tap_ok(pw_export_find("torch-csv") == &pw_export_formats[3] &&
	    pw_export_formats[3].drops_transfers, "torch-csv found, drops"
	    " transfers");
	tap_ok(pw_export_find("torch-csv-offload") == &pw_export_formats[4] &&
	    !pw_export_formats[4].drops_transfers, "torch-csv-offload found,"
	    " keeps them");
	tap_ok(pw_export_find("gif") == NULL, "unknown format");
}

int
main(void)
{
	test_tiny_is_simulated();
	test_show_wide();
	test_show_narrow();
	test_show_short_ops();
	test_show_chunks();
	test_show_boundaries();
	test_show_window();
	test_chrome();
	test_chrome_bad_name();
	test_svg();
	test_empty();
	test_ticks();
	test_extreme_times();
	test_link_devices();
	test_registry();
	return tap_done();
}
