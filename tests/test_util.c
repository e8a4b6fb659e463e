/* test_util.c - allocation helpers, atomic output files, escapes, unit
 * formatting, the blocked sorted sequence. */
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bseq.h"
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

/* Writes TEXT to PATH through pw_outfile; its rc. */
static int
write_through(const char *path, const char *text)
{
	struct pw_outfile out;
	struct pw_error err;
	int rc;

	if ((rc = pw_outfile_open(&out, path, &err)) != PW_OK)
		return rc;
	fputs(text, out.fp);
	return pw_outfile_commit(&out, &err);
}

/* The mode of PATH, -1 when it is not there. */
static int
mode_of(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 ? (int)(st.st_mode & 07777) : -1;
}

/* Replacing a file keeps its mode; a link is written through; the
 * temporary files of runs that are gone are removed, nothing else. */
static void
test_replace(const char *dir)
{
	char *file = pw_xasprintf("%s/private", dir);
	char *link = pw_xasprintf("%s/link", dir);
	char *sub = pw_xasprintf("%s/sub", dir);
	char *dangling = pw_xasprintf("%s/dangling", dir);
	char *made = pw_xasprintf("%s/sub/made", dir);
	char *names[5], *text;
	struct pw_outfile out;
	struct pw_error err;
	pid_t dead;
	size_t i;
	int fd;

	tap_int(write_through(file, "one\n"), PW_OK, "write a file");
	chmod(file, 0640);
	tap_int(write_through(file, "two\n"), PW_OK, "replace it");
	tap_int(mode_of(file), 0640, "the replaced file keeps mode 0640");
	chmod(file, 0600);
	tap_ok(symlink("private", link) == 0, "make a link");
	tap_int(write_through(link, "three\n"), PW_OK, "write through the link");
	tap_int(mode_of(link), 0777, "the link is still a link");
	text = test_read_file(file);
	tap_str(text, "three\n", "its target holds the output");
	free(text);
	tap_int(mode_of(file), 0600, "and kept its mode 0600");
	tap_int(count_prefixed(dir, ".private.pw-tmp"), 0, "no temporary file beside it");
	mkdir(sub, 0700);
	tap_ok(symlink("sub/made", dangling) == 0, "make a link to nothing yet");
	tap_int(write_through(dangling, "four\n"), PW_OK, "write through it");
	text = test_read_file(made);
	tap_str(text, "four\n", "the link's target is made");
	free(text);
	unlink(link);
	tap_ok(symlink("link", link) == 0, "a link to itself");
	tap_int(pw_outfile_open(&out, link, &err), PW_ERR_IO, "a loop fails");
	tap_ok(strstr(err.msg, "link: cannot follow the link: Too many levels") !=
	    NULL, "naming the loop (%s)", err.msg);
	unlink(link);

	/* A child that has exited and been waited for is gone. */
	if ((dead = fork()) == 0)
		_exit(0);
	waitpid(dead, NULL, 0);
	names[0] = pw_xasprintf("%s/.private.pw-tmp.%ld.Ab12cd", dir, (long)dead);
	names[1] = pw_xasprintf("%s/.private.pw-tmp.%ld.Ab12c", dir, (long)dead);
	names[2] = pw_xasprintf("%s/.private.pw-tmp.%ld.Ab12cd", dir, (long)getpid());
	names[3] = pw_xasprintf("%s/.private.pw-tmp.0%ld.Ab12cd", dir, (long)dead);
	names[4] = pw_xasprintf("%s/.privat.pw-tmp.%ld.Ab12cd", dir, (long)dead);
	for (i = 0; i < 5; i++) {
		if ((fd = open(names[i], O_WRONLY | O_CREAT, 0600)) != -1)
			close(fd);
	}
	tap_int(write_through(file, "five\n"), PW_OK, "write after a killed run");
	tap_ok(access(names[0], F_OK) != 0, "the dead run's temporary file is gone");
	for (i = 1; i < 5; i++) {
		tap_ok(access(names[i], F_OK) == 0, "%s is kept", strrchr(names[i], '/') + 1);
		unlink(names[i]);
		free(names[i]);
	}
	free(names[0]);
	unlink(made);
	rmdir(sub);
	unlink(dangling);
	unlink(file);
	free(made);
	free(dangling);
	free(sub);
	free(link);
	free(file);
}

/* The cause of a failed write is the errno of the write that failed. */
static void
test_full(void)
{
	struct pw_outfile out;
	struct pw_error err;
	char big[65536];

	if (access("/dev/full", W_OK) != 0) {
		tap_skip("no /dev/full", "a full disk");
		return;
	}
	memset(big, 'x', sizeof big);
	tap_int(pw_outfile_open(&out, "/dev/full", &err), PW_OK, "open /dev/full");
	fwrite(big, 1, sizeof big, out.fp);
	errno = EINVAL;		/* stale, as stdio would leave it */
	tap_int(pw_outfile_commit(&out, &err), PW_ERR_IO, "commit fails");
	tap_str(err.msg, "/dev/full: write failed: No space left on device",
	    "naming the cause");
}

static void
test_escape(void)
{
	static const struct {
		const char *in, *want, *what;
	} cases[] = {
		{ "plain name-1.json", "plain name-1.json", "printable ASCII" },
		{ "a\033]0;x\007b", "a\\x1b]0;x\\x07b", "ESC and BEL" },
		{ "\n\t\177", "\\x0a\\x09\\x7f", "newline, tab, DEL" },
		{ "caf\303\251 \342\202\254", "caf\303\251 \342\202\254",
		  "UTF-8 kept" },
		{ "\302\233[2J", "\\xc2\\x9b[2J", "a C1 control (CSI)" },
		{ "\342\200\250", "\\xe2\\x80\\xa8", "the line separator" },
		{ "\377a\303", "\\xffa\\xc3", "bytes that are not UTF-8" },
		{ "\300\257", "\\xc0\\xaf", "an overlong '/'" },
		{ "", "", "nothing" },
	};
	size_t i;
	char *e;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		e = pw_escape(cases[i].in);
		tap_str(e, cases[i].want, "escape: %s", cases[i].what);
		free(e);
	}
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
	tap_int(count_prefixed(dir, ".out.txt.pw-tmp"), 0, "abort leaves no temporary file");

	free(path);
	path = pw_xasprintf("%s/fifo", dir);
	test_fifo(path);
	unlink(path);
	free(path);
	path = pw_xasprintf("%s/missing/out.txt", dir);
	tap_int(pw_outfile_open(&out, path, &err), PW_ERR_IO, "missing directory fails");
	tap_ok(strstr(err.msg, "missing/out.txt: cannot create a temporary file in ") !=
	    NULL,
	    "error names the path (%s)", err.msg);
	free(path);

	test_replace(dir);
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
	pw_one_line("blocked:\n  a waits\n  b\twaits\n", buf, sizeof buf);
	tap_str(buf, "blocked: a waits; b waits", "one line: the list after "
	    "its colon, its items apart, a tab a blank");
	pw_one_line("a\nbcdefgh", buf, 6);
	tap_str(buf, "a; b", "one line: cut to its buffer");
	tap_str(pw_fmt_seconds(buf, sizeof buf, 0.99999999999), "1 s",
	    "what rounds to 1000 ms is 1 s");
	tap_str(pw_fmt_seconds(buf, sizeof buf, -0.0009999999), "-1 ms",
	    "and -1000 us is -1 ms");
	tap_str(pw_fmt_seconds(buf, sizeof buf, 0.9994), "999.4 ms",
	    "what stays below keeps its unit");
	tap_str(pw_fmt_bytes(buf, sizeof buf, 1024 - 1e-9), "1 KiB",
	    "what rounds to 1024 B is 1 KiB");
	tap_str(pw_fmt_bytes(buf, sizeof buf, 1000), "1000 B",
	    "1000 B stays bytes");
	tap_str(pw_fmt_bytes(buf, sizeof buf, 1023.5), "1024 B",
	    "1023.5 B is 1024 B, never below one of a unit (0.9995 KiB)");
	tap_str(pw_fmt_bytes(buf, sizeof buf, INFINITY), "inf", "unlimited");
	tap_str(pw_fmt_seconds(buf, sizeof buf, 150003), "150003 s",
	    "past 9999 s, whole seconds, not 1.5e+05 s");
	tap_str(pw_fmt_seconds(buf, sizeof buf, 9999.6), "10000 s",
	    "what rounds to 1e+04 s is 10000 s");
	tap_str(pw_fmt_seconds(buf, sizeof buf, 9999.4), "9999 s",
	    "9999.4 s keeps four digits");
	tap_str(pw_fmt_bytes(buf, sizeof buf, 2e16), "18190 TiB",
	    "and whole TiB past 9999 TiB");
	tap_str(pw_fmt_seconds(buf, sizeof buf, 2e15), "2e+15 s",
	    "beyond 1e15, the exponent");
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

/* Whether this thread blocks SIGHUP, SIGINT and SIGTERM, each. */
static int
blocked_fatal(void)
{
	sigset_t now;

	pthread_sigmask(SIG_BLOCK, NULL, &now);
	return sigismember(&now, SIGHUP) + sigismember(&now, SIGINT) +
	    sigismember(&now, SIGTERM);
}

static void *
thread_mask(void *arg)
{
	*(int *)arg = blocked_fatal();
	return NULL;
}

/* The fatal signals' handler must not run on another thread: one that
 * pw_thread_start starts blocks them, its starter's mask stays, and an
 * output's open and commit leave the mask as they found it (SIGINT
 * blocked before stays blocked). */
static void
test_signal_mask(void)
{
	char dir[] = "/tmp/pw-test-util-XXXXXX";
	sigset_t intr, old;
	pthread_t t;
	int in_thread = -1;
	char *path;

	tap_int(pw_thread_start(&t, thread_mask, &in_thread), 0,
	    "pw_thread_start starts a thread");
	pthread_join(t, NULL);
	tap_int(in_thread, 3, "the thread blocks all three fatal signals");
	tap_int(blocked_fatal(), 0, "the starter blocks none of them still");

	if (!tap_ok(mkdtemp(dir) != NULL, "temporary directory"))
		return;
	path = pw_xasprintf("%s/masked.txt", dir);
	sigemptyset(&intr);
	sigaddset(&intr, SIGINT);
	pthread_sigmask(SIG_BLOCK, &intr, &old);
	tap_int(write_through(path, "x\n"), PW_OK, "write with SIGINT blocked");
	tap_int(blocked_fatal(), 1, "SIGINT alone is blocked after it");
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	unlink(path);
	free(path);
	rmdir(dir);
}

/* A thread that the program did not start with pw_thread_start (a
 * library's) takes a fatal signal. */
static void *
thread_foreign(void *arg)
{
	sigset_t term;

	(void)arg;
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	pthread_sigmask(SIG_UNBLOCK, &term, NULL);
	kill(getpid(), SIGTERM);
	return NULL;
}

/* A fatal signal that a library's thread takes while the main thread
 * blocks the signals (as it does to set a slot) is the main thread's once
 * it unblocks them: the run goes on until then, and its output's
 * temporary file is removed.  Taken on the library's thread, the signal
 * ended the run before the slot was set, leaving the file. */
static void
test_signal_foreign(void)
{
	char dir[] = "/tmp/pw-test-util-XXXXXX", said[16] = "";
	struct pw_outfile out;
	struct pw_error err;
	sigset_t fatal;
	pthread_t t;
	pid_t pid;
	ssize_t n;
	char *path;
	int fds[2], status;

	if (!tap_ok(mkdtemp(dir) != NULL && pipe(fds) == 0,
	    "temporary directory and pipe"))
		return;
	path = pw_xasprintf("%s/out.txt", dir);
	if ((pid = fork()) == 0) {
		close(fds[0]);
		pw_outfile_signals();
		sigemptyset(&fatal);
		sigaddset(&fatal, SIGHUP);
		sigaddset(&fatal, SIGINT);
		sigaddset(&fatal, SIGTERM);
		pthread_sigmask(SIG_BLOCK, &fatal, NULL);
		if (pthread_create(&t, NULL, thread_foreign, NULL) != 0)
			_exit(3);
		pthread_join(t, NULL);
		if (pw_outfile_open(&out, path, &err) != PW_OK)
			_exit(4);
		if (write(fds[1], "opened", 6) != 6)
			_exit(5);
		pthread_sigmask(SIG_UNBLOCK, &fatal, NULL);
		_exit(6);
	}
	close(fds[1]);
	n = pid > 0 ? read(fds[0], said, sizeof said - 1) : -1;
	close(fds[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	tap_str(n > 0 ? said : "", "opened", "the run went on past the "
	    "signal its library thread took");
	tap_ok(pid > 0 && WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM,
	    "and ended by it once the main thread unblocked it");
	tap_ok(rmdir(dir) == 0, "leaving no temporary file (the directory "
	    "is empty)");
	free(path);
}

/* Abort drops what stdout's stream still buffers; and a file that gets
 * fd 1 (stdout closed at the start) is closed like any other.  The test
 * points wait until stdout, which they are written to, is back. */
static void
test_abort_stdout(void)
{
	char path[] = "/tmp/pw-test-util-XXXXXX";
	struct pw_outfile out;
	struct pw_error err;
	int fd, saved, open1, open2, fd1, kept, closed;
	char *text;

	if (!tap_ok((fd = mkstemp(path)) != -1, "temporary file"))
		return;
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	dup2(fd, STDOUT_FILENO);
	close(fd);
	open1 = pw_outfile_open(&out, "-", &err);
	fputs("half a schedule\n", out.fp);
	pw_outfile_abort(&out);
	kept = fcntl(STDOUT_FILENO, F_GETFD) != -1;

	close(STDOUT_FILENO);
	open2 = pw_outfile_open(&out, path, &err);
	fd1 = out.fd;
	pw_outfile_abort(&out);
	closed = fcntl(STDOUT_FILENO, F_GETFD) == -1 && errno == EBADF;
	dup2(saved, STDOUT_FILENO);
	close(saved);

	tap_int(open1, PW_OK, "open stdout");
	tap_ok(kept, "abort keeps stdout open");
	text = test_read_file(path);
	tap_str(text, "", "abort writes nothing of what was buffered");
	free(text);
	tap_int(open2, PW_OK, "open a file with stdout closed");
	tap_int(fd1, STDOUT_FILENO, "the temporary file is fd 1");
	tap_ok(closed, "abort closes it all the same");
	unlink(path);
}

/* An output name of 250 bytes, whose temporary name would be longer
 * than a name may be, is written all the same, leaving no temporary
 * file; so is one of 229, the most a temporary name keeps whole. */
static void
test_long_name(void)
{
	char dir[] = "/tmp/pw-test-util-XXXXXX", name[251];
	static const size_t lens[] = { 229, 250 };
	char *path, *text;
	size_t i;

	if (!tap_ok(mkdtemp(dir) != NULL, "temporary directory"))
		return;
	for (i = 0; i < 2; i++) {
		memset(name, 'n', lens[i]);
		name[lens[i]] = '\0';
		path = pw_xasprintf("%s/%s", dir, name);
		tap_int(write_through(path, "long\n"), PW_OK, "write a name "
		    "of %zu bytes", lens[i]);
		text = test_read_file(path);
		tap_str(text, "long\n", "its content");
		free(text);
		tap_int(count_prefixed(dir, "\\.n"), 0, "no temporary file "
		    "left");
		unlink(path);
		free(path);
	}
	rmdir(dir);
}

/* Numbers written with the fewest digits that read back exactly. */
static void
test_exact_precision(void)
{
	tap_int(pw_exact_precision(0.1), 15, "exact precision: 0.1 in 15");
	tap_int(pw_exact_precision(1.0 / 3), 16, "exact precision: 1/3 in 16");
	tap_int(pw_exact_precision(0.1 + 0.2), 17,
	    "exact precision: 0.1 + 0.2 needs 17");
	tap_int(pw_exact_precision(85520000000.0), 15,
	    "exact precision: a whole number in 15");
}

/* Whole numbers as the command line and the designer read them. */
static void
test_parse_int(void)
{
	int n = -7;

	tap_ok(pw_parse_int("12", 1, 100, &n) && n == 12, "parse_int: 12");
	tap_ok(pw_parse_int(" 3 ", 0, 5, &n) && n == 3,
	    "parse_int: blanks around it");
	tap_ok(pw_parse_int("-2", -5, 5, &n) && n == -2, "parse_int: negative");
	n = -7;
	tap_ok(!pw_parse_int("", 0, 5, &n) && n == -7, "parse_int: empty");
	tap_ok(!pw_parse_int("3x", 0, 5, &n) && n == -7, "parse_int: 3x");
	tap_ok(!pw_parse_int("6", 0, 5, &n) && n == -7, "parse_int: above");
	tap_ok(!pw_parse_int("99999999999999999999", 0, 5, &n) && n == -7,
	    "parse_int: overflow");
	tap_ok(!pw_parse_int("1.5", 0, 5, &n) && n == -7, "parse_int: 1.5");
}

static void
test_parse_bytes(void)
{
	static const struct { const char *text; double bytes; } good[] = {
		{ "60GiB", 60 * 1073741824.0 }, { "1.5 TB", 1.5e12 },
		{ "4e9", 4e9 }, { "0", 0 }, { " 12 b ", 12 }, { "2kib", 2048 },
		{ "3 MiB", 3145728 }, { "7KB", 7000 }, { "5 mb", 5e6 },
		{ "2GB", 2e9 }, { "1TiB", 1099511627776.0 }, { ".5 KiB", 512 },
	};
	static const char *const bad[] = { "", "GiB", "-1GiB", "+1", "inf",
	    "nan", "0x10", "60 GiBs", "60 Gi", "1e400", "1e300 TB", "4 4",
	    "1,5GB" };
	size_t i;
	double x;

	for (i = 0; i < sizeof good / sizeof good[0]; i++) {
		x = -1;
		tap_ok(pw_parse_bytes(good[i].text, &x) && x == good[i].bytes,
		    "parse_bytes: '%s' is %.17g (got %.17g)", good[i].text,
		    good[i].bytes, x);
	}
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		x = -7;
		tap_ok(!pw_parse_bytes(bad[i], &x) && x == -7,
		    "parse_bytes: '%s' refused, the output untouched", bad[i]);
	}
}

static void
test_path_ends(void)
{
	tap_ok(pw_path_ends("a.lua", ".lua"), "path_ends: a.lua is .lua");
	tap_ok(pw_path_ends("dir/A.CSV", ".csv"), "path_ends: in any case");
	tap_ok(!pw_path_ends(".json", ".json"),
	    "path_ends: the suffix alone names no file");
	tap_ok(!pw_path_ends("x.lua.json", ".lua"),
	    "path_ends: only the last suffix counts");
	tap_ok(!pw_path_ends("lua", ".lua"), "path_ends: shorter than it");
}

/* pw_bseq_gap's answer from the model: the first pair at or after I whose
 * value is LEN or more before the next key, or the last. */
static int
bseq_gap_model(const double *key, const double *val, int n, int i,
    double len)
{
	while (i + 1 < n && !(key[i + 1] >= val[i] + len))
		i++;
	return i;
}

/* pw_bseq_gap_before's answer from the model: the last pair at or before
 * I that is the first or whose previous pair's value is LEN or more
 * before its key. */
static int
bseq_gap_before_model(const double *key, const double *val, int i,
    double len)
{
	while (i > 0 && !(key[i] >= val[i - 1] + len))
		i--;
	return i;
}

/* The sequence's answers against plain sorted arrays (the model), one
 * random operation at a time: keys are whole numbers and additions too,
 * so every value is exact and must match to the bit.  Enough inserts to
 * split blocks many times over, enough removals to empty some. */
static bool
bseq_matches(struct pw_bseq *s, const double *key, const double *val,
    int n, int step)
{
	/* Gaps from narrow (the next pair mostly) to wider than any (the
	 * last pair, every block skipped). */
	static const double lens[] = { -500, 0, 40, 300, 2000, 9000, 1e6 };
	size_t l;
	struct pw_bpos pos = pw_bseq_lower(s, -INFINITY), back;
	double best = -INFINITY, at = NAN, got_at = NAN, probe;
	int i, first = -1;

	for (i = 0; i < n; i++, pos = pw_bseq_next(s, pos)) {
		if (!pw_bseq_valid(s, pos) || pw_bseq_key(s, pos) != key[i] ||
		    pw_bseq_value(s, pos) != val[i]) {
			tap_diag("step %d: pair %d differs", step, i);
			return false;
		}
		if (val[i] > best) {
			best = val[i];
			first = i;
		}
	}
	if (pw_bseq_valid(s, pos))
		return false;
	if (first >= 0)
		at = key[first];
	if (pw_bseq_max(s, &got_at) != best || (first >= 0 && got_at != at))
		return false;
	/* Walking back from the end meets the pairs in reverse. */
	back = pw_bseq_prev(s, pos);
	for (i = n - 1; i >= 0; i--, back = pw_bseq_prev(s, back))
		if (!pw_bseq_valid(s, back) || pw_bseq_key(s, back) != key[i])
			return false;
	if (pw_bseq_valid(s, back))
		return false;
	/* Lower bounds between and at keys. */
	for (i = 0; i < n; i += 1 + n / 16) {
		probe = key[i] - 0.5;
		pos = pw_bseq_lower(s, probe);
		if (!pw_bseq_valid(s, pos) || pw_bseq_key(s, pos) != key[i])
			return false;
		pos = pw_bseq_lower(s, key[i]);
		if (!pw_bseq_valid(s, pos) || pw_bseq_key(s, pos) != key[i])
			return false;
		for (l = 0; l < sizeof lens / sizeof lens[0]; l++) {
			if (pw_bseq_key(s, pw_bseq_gap(s, pos, lens[l])) !=
			    key[bseq_gap_model(key, val, n, i, lens[l])]) {
				tap_diag("step %d: the gap of %g after pair %d "
				    "differs", step, lens[l], i);
				return false;
			}
			if (pw_bseq_key(s, pw_bseq_gap_before(s, pos,
			    lens[l])) != key[bseq_gap_before_model(key, val, i,
			    lens[l])]) {
				tap_diag("step %d: the gap of %g before pair "
				    "%d differs", step, lens[l], i);
				return false;
			}
		}
	}
	return true;
}

static void
test_bseq(void)
{
	enum { MAX = 3000, STEPS = 6000 };
	static double key[MAX], val[MAX];
	struct pw_bseq s;
	uint64_t rng = 7;
	double k, from, to, delta, got_at = -1;
	int n = 0, step, i, j, op;
	bool ok = true;

	pw_bseq_init(&s);
	tap_ok(pw_bseq_max(&s, &got_at) == -INFINITY && got_at == -1,
	    "bseq: an empty sequence's maximum is -inf, no key");
	tap_ok(!pw_bseq_valid(&s, pw_bseq_lower(&s, 0)) &&
	    !pw_bseq_valid(&s, pw_bseq_prev(&s, pw_bseq_lower(&s, 0))),
	    "bseq: an empty sequence has no pair, before or after");
	for (step = 0; step < STEPS && ok; step++) {
		op = (int)(pw_splitmix64(&rng) % 10);
		if (op < 6 && n < MAX) {
			/* Mostly inserts early, so that blocks split. */
			do
				k = (double)(pw_splitmix64(&rng) % 100000);
			while (pw_first_at_least(key, n, k) < n &&
			    key[pw_first_at_least(key, n, k)] == k);
			i = pw_first_at_least(key, n, k);
			memmove(key + i + 1, key + i, (size_t)(n - i) *
			    sizeof *key);
			memmove(val + i + 1, val + i, (size_t)(n - i) *
			    sizeof *val);
			key[i] = k;
			val[i] = (double)(pw_splitmix64(&rng) % 1000);
			n++;
			pw_bseq_insert(&s, k, val[i]);
		} else if (op < 8 && n > 0) {
			i = (int)(pw_splitmix64(&rng) % (uint64_t)n);
			pw_bseq_remove(&s, pw_bseq_lower(&s, key[i]));
			memmove(key + i, key + i + 1, (size_t)(n - i - 1) *
			    sizeof *key);
			memmove(val + i, val + i + 1, (size_t)(n - i - 1) *
			    sizeof *val);
			n--;
		} else {
			from = (double)(pw_splitmix64(&rng) % 100000);
			to = from + (double)(pw_splitmix64(&rng) % 60000);
			delta = (double)(pw_splitmix64(&rng) % 200) - 100;
			pw_bseq_add(&s, from, to, delta);
			for (j = 0; j < n; j++)
				if (key[j] >= from && key[j] < to)
					val[j] += delta;
		}
		ok = bseq_matches(&s, key, val, n, step);
	}
	tap_ok(ok, "bseq: %d random inserts, removals and range additions "
	    "agree with sorted arrays (%d pairs at the end)", step, n);
	while (n > 0) {
		pw_bseq_remove(&s, pw_bseq_lower(&s, -INFINITY));
		memmove(key, key + 1, (size_t)(n - 1) * sizeof *key);
		memmove(val, val + 1, (size_t)(n - 1) * sizeof *val);
		n--;
	}
	tap_ok(bseq_matches(&s, key, val, 0, step) &&
	    pw_bseq_max(&s, &got_at) == -INFINITY,
	    "bseq: emptied pair by pair, no block is left");
	pw_bseq_insert(&s, 3, 5);
	pw_bseq_insert(&s, 1, 5);
	pw_bseq_insert(&s, 2, 9);
	pw_bseq_add(&s, 2, 3, -4);
	tap_ok(pw_bseq_max(&s, &got_at) == 5 && got_at == 1,
	    "bseq: the first key holding the maximum (1 of 1, 2, 3 at 5)");
	pw_bseq_clear(&s);
	tap_ok(!pw_bseq_valid(&s, pw_bseq_lower(&s, -INFINITY)),
	    "bseq: cleared, it is empty");
	pw_bseq_free(&s);
}

/*
 * pw_bseq_gap on what the offload planner keeps: a channel's intervals,
 * mostly back to back (a saturated channel) with a few gaps, against
 * the model after removals, re-insertions and additions (to whole blocks
 * and to parts of them), which change the gaps each block remembers.
 */
static void
test_bseq_gap(void)
{
	enum { N = 3000, STEPS = 400 };
	static const double lens[] = { 1, 5, 20, 45, 100, 140 };
	static double key[N], val[N];
	static int order[N];
	struct pw_bseq s;
	uint64_t rng = 11;
	double t = 0, from, delta, out_key = 0, out_val = 0;
	int n = 0, i, j, step, q, got, want, tmp;
	bool ok = true;

	for (i = 0; i < N; i++) {
		key[i] = t + (pw_splitmix64(&rng) % 10 < 8 ? 0 :
		    (double)(pw_splitmix64(&rng) % 50));
		val[i] = key[i] + 1 + (double)(pw_splitmix64(&rng) % 20);
		t = val[i];
		order[i] = i;
	}
	for (i = N - 1; i > 0; i--) {
		j = (int)(pw_splitmix64(&rng) % (uint64_t)(i + 1));
		tmp = order[i], order[i] = order[j], order[j] = tmp;
	}
	pw_bseq_init(&s);
	for (i = 0; i < N; i++)
		pw_bseq_insert(&s, key[order[i]], val[order[i]]);
	n = N;
	for (step = 0; step < STEPS && ok; step++) {
		switch (pw_splitmix64(&rng) % 3) {
		case 0:		/* one out, or back in ending earlier */
			if (n == N) {
				i = (int)(pw_splitmix64(&rng) % (uint64_t)n);
				pw_bseq_remove(&s, pw_bseq_lower(&s, key[i]));
				out_key = key[i], out_val = val[i];
				memmove(key + i, key + i + 1, (size_t)(n - i -
				    1) * sizeof *key);
				memmove(val + i, val + i + 1, (size_t)(n - i -
				    1) * sizeof *val);
				n--;
				break;
			}
			/* A value well below the one before makes the
			 * widest gap of its block, wider than the one it
			 * replaces. */
			out_val -= 150 + (double)(pw_splitmix64(&rng) % 100);
			i = pw_first_at_least(key, n, out_key);
			memmove(key + i + 1, key + i, (size_t)(n - i) *
			    sizeof *key);
			memmove(val + i + 1, val + i, (size_t)(n - i) *
			    sizeof *val);
			key[i] = out_key, val[i] = out_val;
			n++;
			pw_bseq_insert(&s, out_key, out_val);
			break;
		case 1:		/* a range, whole blocks and parts */
			from = key[pw_splitmix64(&rng) % (uint64_t)n];
			delta = (double)(pw_splitmix64(&rng) % 31) - 15;
			t = from + (double)(pw_splitmix64(&rng) % 20000);
			pw_bseq_add(&s, from, t, delta);
			for (j = 0; j < n; j++)
				if (key[j] >= from && key[j] < t)
					val[j] += delta;
			break;
		default:	/* everything */
			delta = (double)(pw_splitmix64(&rng) % 11) - 5;
			pw_bseq_add(&s, -INFINITY, INFINITY, delta);
			for (j = 0; j < n; j++)
				val[j] += delta;
		}
		for (q = 0; q < 20 && ok; q++) {
			i = (int)(pw_splitmix64(&rng) % (uint64_t)n);
			for (j = 0; j < (int)(sizeof lens / sizeof lens[0]);
			    j++) {
				want = bseq_gap_model(key, val, n, i, lens[j]);
				got = pw_first_at_least(key, n, pw_bseq_key(&s,
				    pw_bseq_gap(&s, pw_bseq_lower(&s, key[i]),
				    lens[j])));
				if (got != want) {
					tap_diag("step %d: from pair %d, a gap "
					    "of %g: pair %d, not %d", step, i,
					    lens[j], got, want);
					ok = false;
					break;
				}
			}
		}
	}
	tap_ok(ok, "bseq: the first gap of a length, on %d back-to-back "
	    "intervals, through %d removals, insertions and additions", N,
	    step);
	pw_bseq_free(&s);
}

/* The names tables and their lookup; qsort's order of doubles. */
static void
test_names_find(void)
{
	double v[] = { 3, -1, 2.5, 0 };

	tap_int(pw_names_find(pw_placement_names, "v"), PW_PLACE_V,
	    "names: v is PW_PLACE_V");
	tap_int(pw_names_find(pw_placement_names, "loop"), PW_PLACE_LOOP,
	    "names: loop is PW_PLACE_LOOP");
	tap_int(pw_names_find(pw_placement_names, "V"), PW_PLACE_V,
	    "names: in any case (V)");
	tap_int(pw_names_find(pw_placement_names, "LoOp"), PW_PLACE_LOOP,
	    "names: in any case (LoOp)");
	tap_int(pw_names_find(pw_placement_names, "vv"), -1,
	    "names: the whole word");
	tap_int(pw_names_find(pw_placement_names, ""), -1, "names: none");
	qsort(v, 4, sizeof *v, pw_double_cmp);
	tap_ok(v[0] == -1 && v[1] == 0 && v[2] == 2.5 && v[3] == 3,
	    "doubles, least first");
}

int
main(void)
{
	test_long_name();
	test_signal_mask();
	test_signal_foreign();
	test_abort_stdout();
	test_outfile();
	test_full();
	test_escape();
	test_format();
	test_strings();
	test_splitmix();
	test_parse_int();
	test_parse_bytes();
	test_path_ends();
	test_bseq();
	test_bseq_gap();
	test_exact_precision();
	test_names_find();
	return tap_done();
}
