/*
 * test_hostile.c - the bad-input battery, as TAP.
 *
 * Hostile variants of four files (a problem with given stages, the
 * default problem with its origin and link, and a schedule of each, one
 * with offload ops), through every command that reads a file, each run
 * under a time limit and a memory limit.  Every run must exit 0, 1 or 2,
 * print at most one line on stderr (besides solve's progress lines) and
 * no sanitizer report, put no raw terminal control character (ESC, BEL)
 * in what it prints or writes, and leave no temporary file behind.
 *
 * The variants: for every leaf, one per hostile value: numbers at 0,
 * negative, 1e308, the smallest denormal, INT_MAX and a string; strings
 * with control characters and with invalid UTF-8 (six forms in turn);
 * for every list, one with its last element dropped, one with its first
 * repeated and one empty; for every object, one per member removed.
 * Long lists are mutated only at their first, middle and last element,
 * which keeps the battery to a few thousand runs.
 *
 * make check sets PIPEWRIGHT; the files are made with it.
 */
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "tap.h"

/* A run's limits: seconds, and bytes of address space (where the build
 * has no sanitizer, which reserves terabytes of it; under ASan the same
 * figure caps its RSS and every allocation). */
#define HOSTILE_SECONDS	60
#define HOSTILE_MB	4096

/* Where invalid UTF-8 goes: jansson writes only valid text, so the
 * variant holds this marker and one of these forms replaces it in the
 * file, in turn: bytes no UTF-8 has, an overlong NUL, an encoded
 * surrogate, a lead byte past U+10FFFF, and escapes of a lone low
 * surrogate and of a high one not followed by a low one. */
#define HOSTILE_MARK	"@@hostile-bytes@@"
static const char *const hostile_bytes[] = {
	"\xff\xfe\xc3(",
	"\xc0\x80",
	"\xed\xa0\x80",
	"\xf5\x80\x80\x80",
	"\\udc00",
	"\\ud800\\u0041",
};
#define HOSTILE_NBYTES	(sizeof hostile_bytes / sizeof hostile_bytes[0])

/* The battery's state: where it writes, what it runs, how far it is. */
struct hostile {
	const char *pw;		/* the program */
	char	dir[64];	/* the temporary folder */
	char	out[128];	/* dir/out: the folder outputs go to */
	char	**families;	/* the registry, from schedule --help */
	int	nfamilies;
	const char *base;	/* the file being varied ("sched-unit") */
	json_t	*root;		/* its DOM, varied in place */
	int	n;		/* variants run */
	char	failures[8192];	/* what the variant's runs did wrong */
};

/* A value put in place of a leaf, and its label. */
struct hostile_value {
	const char *label;
	json_t	*(*make)(void);
};

static json_t *hv_zero(void) { return json_integer(0); }
static json_t *hv_negative(void) { return json_real(-1.5); }
static json_t *hv_huge(void) { return json_real(1e308); }
static json_t *hv_denormal(void) { return json_real(5e-324); }
static json_t *hv_int_max(void) { return json_integer(2147483647); }
static json_t *hv_string(void) { return json_string("12"); }
static json_t *hv_control(void) { return json_string("a\033[2J\033]0;x\007\nb\r"); }
static json_t *hv_invalid(void) { return json_string(HOSTILE_MARK); }

static const struct hostile_value hostile_numbers[] = {
	{ "0", hv_zero },
	{ "-1.5", hv_negative },
	{ "1e308", hv_huge },
	{ "5e-324", hv_denormal },
	{ "2147483647", hv_int_max },
	{ "\"12\"", hv_string },
};

static const struct hostile_value hostile_strings[] = {
	{ "control characters", hv_control },
	{ "invalid UTF-8", hv_invalid },
};

static void
hostile_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("Bail out! ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	exit(99);
}

/* The whole file PATH, NUL-terminated, in a buffer the caller frees;
 * *LEN its length.  NULL when it cannot be read. */
static char *
hostile_slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, got;

	*len = 0;
	if (fp == NULL)
		return NULL;
	do {
		if ((buf = realloc(buf, cap += 65536)) == NULL)
			hostile_fail("out of memory");
		*len += got = fread(buf + *len, 1, cap - *len - 1, fp);
	} while (got > 0);
	fclose(fp);
	buf[*len] = '\0';
	return buf;
}

/* Whether the LEN bytes at S hold a raw ESC or BEL. */
static bool
hostile_has_control(const char *s, size_t len)
{
	return memchr(s, '\033', len) != NULL || memchr(s, '\007', len) != NULL;
}

/* Notes what a run did wrong, with the command (its paths made short). */
static void
hostile_note(struct hostile *h, char *const argv[], const char *why,
    const char *err)
{
	size_t used = strlen(h->failures);
	int i;

	for (i = 1; argv[i] != NULL && used < sizeof h->failures; i++) {
		const char *arg = strncmp(argv[i], h->dir, strlen(h->dir)) == 0 ?
		    argv[i] + strlen(h->dir) + 1 : argv[i];

		used += (size_t)snprintf(h->failures + used,
		    sizeof h->failures - used, "%s%s", i > 1 ? " " : "", arg);
	}
	if (used < sizeof h->failures)
		snprintf(h->failures + used, sizeof h->failures - used,
		    ": %s\n%.600s", why, err);
}

/* Runs ARGV (the program first) under the limits, stdout to dir/run.out
 * and stderr to dir/run.err; its wait status. */
static int
hostile_exec(struct hostile *h, char *const argv[])
{
	char outp[128], errp[128];
	int status;
	pid_t pid;

	snprintf(outp, sizeof outp, "%s/run.out", h->dir);
	snprintf(errp, sizeof errp, "%s/run.err", h->dir);
	fflush(stdout);
	if ((pid = fork()) == -1)
		hostile_fail("fork: %s", strerror(errno));
	if (pid == 0) {
#ifndef __SANITIZE_ADDRESS__
		struct rlimit as = { (rlim_t)HOSTILE_MB << 20,
		    (rlim_t)HOSTILE_MB << 20 };

		setrlimit(RLIMIT_AS, &as);
#endif
		if (freopen(outp, "w", stdout) == NULL ||
		    freopen(errp, "w", stderr) == NULL)
			_exit(98);
		alarm(HOSTILE_SECONDS);
		execv(argv[0], argv);
		_exit(97);
	}
	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR)
			hostile_fail("waitpid: %s", strerror(errno));
	return status;
}

/* Whether NAME is an output a command was told to write. */
static bool
hostile_expected(const char *name)
{
	return strcmp(name, "out.json") == 0 || strcmp(name, "out.svg") == 0;
}

/* Scans dir/out after a run: raw control characters in the outputs, and
 * anything else left there (a temporary file), which it removes. */
static void
hostile_scan_outputs(struct hostile *h, char *why, size_t len)
{
	char path[512], *text;
	struct dirent *de;
	size_t n;
	DIR *d;

	if ((d = opendir(h->out)) == NULL)
		hostile_fail("%s: %s", h->out, strerror(errno));
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", h->out, de->d_name);
		if (!hostile_expected(de->d_name))
			snprintf(why + strlen(why), len - strlen(why),
			    "; left behind: %s", de->d_name);
		else if ((text = hostile_slurp(path, &n)) != NULL) {
			if (hostile_has_control(text, n))
				snprintf(why + strlen(why), len - strlen(why),
				    "; a raw control character in %s",
				    de->d_name);
			free(text);
		}
		unlink(path);
	}
	closedir(d);
}

/* One run of ARGV; what it did wrong goes to H->failures.  SOLVE: its
 * progress lines ("solve: ...") are not counted. */
static void
hostile_attempt(struct hostile *h, char *const argv[], bool solve)
{
	char path[128], why[1024] = "", *err, *out, *line, *next;
	int status = hostile_exec(h, argv), lines = 0;
	size_t nerr, nout;

	if (WIFSIGNALED(status))
		snprintf(why, sizeof why, "killed by signal %d%s",
		    WTERMSIG(status), WTERMSIG(status) == SIGALRM ?
		    " (the time limit)" : "");
	else if (WEXITSTATUS(status) > 2)
		snprintf(why, sizeof why, "exit %d", WEXITSTATUS(status));
	snprintf(path, sizeof path, "%s/run.err", h->dir);
	if ((err = hostile_slurp(path, &nerr)) == NULL)
		hostile_fail("%s: cannot read", path);
	for (line = err; *line != '\0'; line = next) {
		next = strchr(line, '\n');
		next = next != NULL ? next + 1 : line + strlen(line);
		lines += !(solve && strncmp(line, "solve: ", 7) == 0);
	}
	if (lines > 1)
		snprintf(why + strlen(why), sizeof why - strlen(why),
		    "; %d lines on stderr", lines);
	if (strstr(err, "Sanitizer") != NULL ||
	    strstr(err, "runtime error:") != NULL)
		snprintf(why + strlen(why), sizeof why - strlen(why),
		    "; a sanitizer report");
	snprintf(path, sizeof path, "%s/run.out", h->dir);
	if ((out = hostile_slurp(path, &nout)) != NULL &&
	    hostile_has_control(out, nout))
		snprintf(why + strlen(why), sizeof why - strlen(why),
		    "; a raw control character on stdout");
	hostile_scan_outputs(h, why, sizeof why);
	if (why[0] != '\0')
		hostile_note(h, argv, why[0] == ';' ? why + 2 : why, err);
	free(out);
	free(err);
}

/* Every command that reads FILE: the family and the export format turn
 * with the variant's number. */
static void
hostile_battery(struct hostile *h, const char *file)
{
	char out_json[160], out_svg[160];
	const char *family = h->families[h->n % h->nfamilies];
	bool schedule = strncmp(h->base, "sched-", 6) == 0;

	snprintf(out_json, sizeof out_json, "%s/out.json", h->out);
	snprintf(out_svg, sizeof out_svg, "%s/out.svg", h->out);
	h->failures[0] = '\0';
	hostile_attempt(h, (char *[]){ (char *)h->pw, "problem",
	    (char *)file, NULL }, false);
	if (schedule) {
		hostile_attempt(h, (char *[]){ (char *)h->pw, "check",
		    (char *)file, NULL }, false);
		hostile_attempt(h, (char *[]){ (char *)h->pw, "eval",
		    (char *)file, h->n % 2 ? "--json" : NULL, NULL }, false);
		hostile_attempt(h, (char *[]){ (char *)h->pw, "show",
		    (char *)file, "--width", "90", NULL }, false);
		hostile_attempt(h, (char *[]){ (char *)h->pw, "export",
		    (char *)file, "--to", h->n % 2 ? "svg" : "chrome", "-o",
		    h->n % 2 ? out_svg : out_json, NULL }, false);
	} else {
		hostile_attempt(h, (char *[]){ (char *)h->pw, "compare",
		    (char *)file, NULL }, false);
		hostile_attempt(h, (char *[]){ (char *)h->pw, "schedule",
		    (char *)file, "--family", (char *)family, "-o", out_json,
		    NULL }, false);
		hostile_attempt(h, (char *[]){ (char *)h->pw, "solve",
		    (char *)file, "--iteration-limit", "300", "--time-limit",
		    "5", "-o", out_json, NULL }, true);
	}
}

/* Writes the current DOM as a variant, described by WHAT, and runs the
 * battery on it: one test point. */
static void
hostile_emit(struct hostile *h, const char *what)
{
	char path[160], *text, *mark;
	FILE *fp;

	if ((text = json_dumps(h->root, JSON_INDENT(1))) == NULL)
		hostile_fail("cannot serialize a variant of %s", h->base);
	snprintf(path, sizeof path, "%s/%s-%d.json", h->dir, h->base, h->n);
	if ((fp = fopen(path, "wb")) == NULL)
		hostile_fail("%s: cannot write", path);
	if ((mark = strstr(text, HOSTILE_MARK)) != NULL) {
		fwrite(text, 1, (size_t)(mark - text), fp);
		fputs(hostile_bytes[h->n % HOSTILE_NBYTES], fp);
		fputs(mark + strlen(HOSTILE_MARK), fp);
	} else
		fputs(text, fp);
	if (fclose(fp) != 0)
		hostile_fail("%s: cannot write", path);
	free(text);
	hostile_battery(h, path);
	if (!tap_ok(h->failures[0] == '\0', "%s-%d: %s", h->base, h->n, what))
		tap_diag("%s", h->failures);
	unlink(path);
	h->n++;
}

/* Whether the I-th of N elements of a list is mutated. */
static int
hostile_sampled(size_t i, size_t n)
{
	return n <= 3 || i == 0 || i == n / 2 || i == n - 1;
}

/* Each value of VALUES (N of them) in place of *SLOT, then the original
 * back; SLOT is set through SET. */
static void
hostile_leaf(struct hostile *h, const char *path, json_t *parent,
    const char *key, size_t index, const struct hostile_value *values,
    size_t n)
{
	json_t *was = json_incref(key != NULL ? json_object_get(parent, key) :
	    json_array_get(parent, index));
	char what[4096];
	size_t i;

	for (i = 0; i < n; i++) {
		json_t *v = values[i].make();

		if (key != NULL)
			json_object_set_new(parent, key, v);
		else
			json_array_set_new(parent, index, v);
		snprintf(what, sizeof what, "%s = %s", path, values[i].label);
		hostile_emit(h, what);
	}
	if (key != NULL)
		json_object_set_new(parent, key, was);
	else
		json_array_set_new(parent, index, was);
}

static void hostile_walk(struct hostile *, const char *path, json_t *v,
	    json_t *parent, const char *key, size_t index);

/* A list: its sampled elements, then dropped, repeated, emptied. */
static void
hostile_array(struct hostile *h, const char *path, json_t *v)
{
	size_t i, n = json_array_size(v);
	char sub[4096];
	json_t *copy;

	for (i = 0; i < n; i++) {
		if (!hostile_sampled(i, n))
			continue;
		snprintf(sub, sizeof sub, "%s[%zu]", path, i);
		hostile_walk(h, sub, json_array_get(v, i), v, NULL, i);
	}
	if (n == 0)
		return;
	copy = json_deep_copy(v);
	json_array_remove(v, n - 1);
	snprintf(sub, sizeof sub, "%s: last element dropped", path);
	hostile_emit(h, sub);
	json_array_clear(v);
	json_array_extend(v, copy);
	json_array_append_new(v, json_deep_copy(json_array_get(v, 0)));
	snprintf(sub, sizeof sub, "%s: first element repeated", path);
	hostile_emit(h, sub);
	json_array_clear(v);
	snprintf(sub, sizeof sub, "%s: empty", path);
	hostile_emit(h, sub);
	json_array_extend(v, copy);
	json_decref(copy);
}

/* An object: every member, then each member removed in turn. */
static void
hostile_object(struct hostile *h, const char *path, json_t *v)
{
	const char **keys;
	size_t i, n = json_object_size(v);
	const char *key;
	char sub[4096];
	json_t *member;

	keys = calloc(n + 1, sizeof *keys);
	i = 0;
	json_object_foreach(v, key, member)
		keys[i++] = strdup(key);
	for (i = 0; i < n; i++) {
		snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "",
		    keys[i]);
		hostile_walk(h, sub, json_object_get(v, keys[i]), v, keys[i], 0);
		member = json_incref(json_object_get(v, keys[i]));
		json_object_del(v, keys[i]);
		snprintf(sub, sizeof sub, "%s%s%s: removed", path,
		    *path ? "." : "", keys[i]);
		hostile_emit(h, sub);
		json_object_set_new(v, keys[i], member);
		free((char *)keys[i]);
	}
	free(keys);
}

static void
hostile_walk(struct hostile *h, const char *path, json_t *v, json_t *parent,
    const char *key, size_t index)
{
	if (json_is_object(v))
		hostile_object(h, path, v);
	else if (json_is_array(v))
		hostile_array(h, path, v);
	else if (json_is_string(v))
		hostile_leaf(h, path, parent, key, index, hostile_strings,
		    sizeof hostile_strings / sizeof hostile_strings[0]);
	else if (parent != NULL)
		hostile_leaf(h, path, parent, key, index, hostile_numbers,
		    sizeof hostile_numbers / sizeof hostile_numbers[0]);
}

/* The program's families, as schedule --help lists them. */
static void
hostile_families(struct hostile *h)
{
	char path[128], *text, *line, *next;
	bool on = false;
	size_t len;

	hostile_exec(h, (char *[]){ (char *)h->pw, "schedule", "--help", NULL });
	snprintf(path, sizeof path, "%s/run.out", h->dir);
	if ((text = hostile_slurp(path, &len)) == NULL)
		hostile_fail("%s: cannot read", path);
	for (line = text; *line != '\0'; line = next) {
		next = strchr(line, '\n');
		*next++ = '\0';
		if (strcmp(line, "families:") == 0)
			on = true;
		else if (on && line[0] == ' ' && line[2] != ' ') {
			h->families = realloc(h->families,
			    (size_t)(h->nfamilies + 1) * sizeof *h->families);
			h->families[h->nfamilies++] = strndup(line + 2,
			    strcspn(line + 2, " "));
		}
	}
	free(text);
	if (h->nfamilies == 0)
		hostile_fail("schedule --help lists no family");
}

int
main(void)
{
	static const char *const bases[][6] = {
		{ "prob-unit", "problem", "@EXAMPLES@/unit4x8.json", NULL },
		{ "prob-default", "problem", NULL },
		{ "sched-unit", "schedule", "@EXAMPLES@/unit4x8.json",
		    "--family", "zb-h1", NULL },
		{ "sched-offload", "schedule", "--family", "po-auto", NULL },
	};
	const char *examples = getenv("EXAMPLES");
	struct hostile h;
	json_error_t jerr;
	char path[160], unit[4096], *argv[8];
	size_t b, i;
	int k;

	memset(&h, 0, sizeof h);
	if ((h.pw = getenv("PIPEWRIGHT")) == NULL)
		h.pw = "./pipewright";
	snprintf(unit, sizeof unit, "%s/unit4x8.json",
	    examples != NULL ? examples : "examples");
	snprintf(h.dir, sizeof h.dir, "/tmp/pw-hostile.XXXXXX");
	if (mkdtemp(h.dir) == NULL)
		hostile_fail("mkdtemp: %s", strerror(errno));
	snprintf(h.out, sizeof h.out, "%s/out", h.dir);
	if (mkdir(h.out, 0700) != 0)
		hostile_fail("%s: %s", h.out, strerror(errno));
#ifdef __SANITIZE_ADDRESS__
	setenv("ASAN_OPTIONS", "hard_rss_limit_mb=4096:"
	    "max_allocation_size_mb=4096:allocator_may_return_null=1", 0);
#endif
	setenv("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1", 0);
	hostile_families(&h);
	for (b = 0; b < sizeof bases / sizeof bases[0]; b++) {
		snprintf(path, sizeof path, "%s/%s.json", h.dir, bases[b][0]);
		argv[0] = (char *)h.pw;
		for (k = 1; bases[b][k] != NULL; k++)
			argv[k] = strcmp(bases[b][k], "@EXAMPLES@/unit4x8.json")
			    == 0 ? unit : (char *)bases[b][k];
		argv[k++] = "-o";
		argv[k++] = path;
		argv[k] = NULL;
		if (hostile_exec(&h, argv) != 0)
			hostile_fail("%s %s: cannot write the base file", h.pw,
			    bases[b][1]);
		h.base = bases[b][0];
		if ((h.root = json_load_file(path, 0, &jerr)) == NULL)
			hostile_fail("%s: %s", path, jerr.text);
		hostile_walk(&h, "", h.root, NULL, NULL, 0);
		json_decref(h.root);
		unlink(path);
	}
	snprintf(path, sizeof path, "%s/run.out", h.dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/run.err", h.dir);
	unlink(path);
	rmdir(h.out);
	rmdir(h.dir);
	for (i = 0; i < (size_t)h.nfamilies; i++)
		free(h.families[i]);
	free(h.families);
	return tap_done();
}
