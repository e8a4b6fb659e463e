/* test_util.c - allocation helpers, atomic output files, unit formatting. */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipewright.h"
#include "tap.h"
#include "testlib.h"

/* Counts the entries of DIR whose names start with PREFIX. */
static int
count_prefixed(const char *dir, const char *prefix)
{
	char *cmd = pw_xasprintf("ls -a '%s' | grep -c '^%s'", dir, prefix);
	FILE *p = popen(cmd, "r");
	int n = -1;

	if (p != NULL) {
		if (fscanf(p, "%d", &n) != 1)
			n = -1;
		pclose(p);
	}
	free(cmd);
	return n;
}

/* A FIFO must stay a FIFO: it is written in place, never renamed over. */
static void
test_fifo(const char *path)
{
	struct pw_outfile out;
	struct pw_error err;
	struct stat st;
	char buf[16] = "";
	int fd;

	if (!tap_ok(mkfifo(path, 0600) == 0, "make a FIFO"))
		return;
	/* Holding a read-write end open lets the writer open without blocking. */
	fd = open(path, O_RDWR | O_NONBLOCK);
	tap_int(pw_outfile_open(&out, path, &err), PW_OK, "open a FIFO");
	fputs("piped", out.fp);
	tap_int(pw_outfile_commit(&out, &err), PW_OK, "commit to a FIFO");
	tap_ok(stat(path, &st) == 0 && S_ISFIFO(st.st_mode), "the FIFO is still a FIFO");
	tap_ok(read(fd, buf, sizeof buf - 1) == 5 && strcmp(buf, "piped") == 0,
	    "the FIFO carried the output");
	close(fd);
}

static void
test_outfile(void)
{
	char dir[] = "/tmp/pw-test-util-XXXXXX";
	struct pw_outfile out;
	struct pw_error err;
	char *path, *text;

	if (!tap_ok(mkdtemp(dir) != NULL, "temporary directory"))
		return;
	path = pw_xasprintf("%s/out.txt", dir);

	tap_int(pw_outfile_open(&out, path, &err), PW_OK, "open");
	fputs("first\n", out.fp);
	tap_ok(access(path, F_OK) != 0, "nothing at the path before commit");
	tap_int(pw_outfile_commit(&out, &err), PW_OK, "commit");
	text = test_read_file(path);
	tap_str(text, "first\n", "committed content");
	free(text);
	{
		struct stat st;
		mode_t mask = umask(022);

		umask(mask);
		tap_ok(stat(path, &st) == 0 && (st.st_mode & 0777) == (0666 & ~mask),
		    "committed file has the usual mode, not mkstemp's 0600");
	}

	tap_int(pw_outfile_open(&out, path, &err), PW_OK, "reopen");
	fputs("second\n", out.fp);
	pw_outfile_abort(&out);
	text = test_read_file(path);
	tap_str(text, "first\n", "abort keeps the old file");
	free(text);
	tap_int(count_prefixed(dir, "out.txt.tmp"), 0, "abort leaves no temporary file");

	free(path);
	path = pw_xasprintf("%s/fifo", dir);
	test_fifo(path);
	unlink(path);
	free(path);
	path = pw_xasprintf("%s/missing/out.txt", dir);
	tap_int(pw_outfile_open(&out, path, &err), PW_ERR_IO, "missing directory fails");
	tap_ok(strstr(err.msg, "missing/out.txt: cannot write: ") != NULL,
	    "error names the path (%s)", err.msg);
	free(path);

	path = pw_xasprintf("%s/out.txt", dir);
	unlink(path);
	free(path);
	rmdir(dir);
}

static void
test_format(void)
{
	char buf[32];

	tap_str(pw_fmt_seconds(buf, sizeof buf, 0.0125), "12.5 ms", "milliseconds");
	tap_str(pw_fmt_seconds(buf, sizeof buf, 3), "3 s", "seconds");
	tap_str(pw_fmt_seconds(buf, sizeof buf, 18.522e-6), "18.52 us", "microseconds");
	tap_str(pw_fmt_seconds(buf, sizeof buf, 0), "0 s", "zero");
	tap_str(pw_fmt_bytes(buf, sizeof buf, 80.0 * 1073741824.0), "80 GiB", "GiB");
	tap_str(pw_fmt_bytes(buf, sizeof buf, 1536), "1.5 KiB", "KiB");
	tap_str(pw_fmt_bytes(buf, sizeof buf, 3), "3 B", "bytes");
	tap_str(pw_fmt_bytes(buf, sizeof buf, INFINITY), "inf", "unlimited");
}

static void
test_strings(void)
{
	char *s = pw_xasprintf("%s-%d", "stage", 7);
	struct pw_error err;

	tap_str(s, "stage-7", "asprintf");
	free(s);
	pw_error_set(&err, "a %d", 1);
	pw_error_append(&err, ", b %d", 2);
	tap_str(err.msg, "a 1, b 2", "error append");
}

/* splitmix64 from state 0: the reference implementation's first two
 * outputs (Vigna's splitmix64.c). */
static void
test_splitmix(void)
{
	uint64_t state = 0;

	tap_ok(pw_splitmix64(&state) == 0xe220a8397b1dcdafULL,
	    "splitmix64: the first number from 0");
	tap_ok(pw_splitmix64(&state) == 0x6e789e6aa1b965f4ULL,
	    "splitmix64: the second");
	tap_ok(state == 2 * 0x9e3779b97f4a7c15ULL, "splitmix64: the state "
	    "advances by the golden gamma");
}

int
main(void)
{
	test_outfile();
	test_format();
	test_strings();
	test_splitmix();
	return tap_done();
}
