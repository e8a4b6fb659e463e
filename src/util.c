/* util.c - errors, the allocation wrapper, atomic output files, units,
 * escapes for text output. */
#define _GNU_SOURCE	/* vasprintf, fopencookie, mkostemp */
#include <sys/stat.h>

#include <assert.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <wchar.h>
#include <wctype.h>

#include "pipewright.h"

void
pw_error_set(struct pw_error *err, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
}

void
pw_error_append(struct pw_error *err, const char *fmt, ...)
{
	va_list ap;
	size_t used;

	if (err == NULL)
		return;
	used = strnlen(err->msg, sizeof err->msg);
	if (used + 1 >= sizeof err->msg)
		return;
	va_start(ap, fmt);
	vsnprintf(err->msg + used, sizeof err->msg - used, fmt, ap);
	va_end(ap);
}

static void *
pw_check_alloc(void *ptr, size_t size)
{
	char buf[32];

	/* pw_fmt_bytes allocates nothing. */
	if (ptr == NULL && size != 0) {
		fprintf(stderr, "pipewright: out of memory allocating %s\n",
		    pw_fmt_bytes(buf, sizeof buf, (double)size));
		abort();
	}
	return ptr;
}

void *
pw_xmalloc(size_t size)
{
	return pw_check_alloc(malloc(size == 0 ? 1 : size), size);
}

/* Aborts when NMEMB elements of SIZE bytes overflow a size_t. */
static void
pw_check_count(size_t nmemb, size_t size)
{
	if (size != 0 && nmemb > SIZE_MAX / size) {
		fprintf(stderr, "pipewright: allocation of %zu x %zu bytes "
		    "overflows\n", nmemb, size);
		abort();
	}
}

void *
pw_xcalloc(size_t nmemb, size_t size)
{
	pw_check_count(nmemb, size);
	if (nmemb == 0 || size == 0)
		nmemb = size = 1;
	return pw_check_alloc(calloc(nmemb, size), nmemb * size);
}

void *
pw_xreallocarray(void *ptr, size_t nmemb, size_t size)
{
	pw_check_count(nmemb, size);
	if (nmemb == 0 || size == 0)
		nmemb = size = 1;
	return pw_check_alloc(realloc(ptr, nmemb * size), nmemb * size);
}

void *
pw_tryallocarray(size_t nmemb, size_t size)
{
	if (size != 0 && nmemb > SIZE_MAX / size)
		return NULL;
	if (nmemb == 0 || size == 0)
		nmemb = size = 1;
	return malloc(nmemb * size);
}

char *
pw_xstrdup(const char *s)
{
	size_t len;

	if (s == NULL)
		return NULL;
	len = strlen(s) + 1;
	return memcpy(pw_xmalloc(len), s, len);
}

char *
pw_xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int len;

	va_start(ap, fmt);
	len = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (len < 0) {
		fprintf(stderr, "pipewright: out of memory formatting \"%s\"\n",
		    fmt);
		abort();
	}
	return s;
}

/* The process's umask; reading it means setting it, so set it back. */
static mode_t
pw_umask(void)
{
	mode_t mask = umask(022);

	umask(mask);
	return mask;
}

/*
 * The temporary files of the outputs being written, for the handler of a
 * fatal signal to remove: it reads the slots and unlinks, both
 * async-signal-safe.  A slot is set only once its file exists under its
 * final name, and cleared before the name is freed.  The handler runs
 * only on a thread where the signals are not blocked: never one started
 * by pw_thread_start, and never the thread that changes a slot or frees
 * the name it held, which blocks them meanwhile (pw_outfile_block); so
 * a name it reads stays allocated until it returns.
 */
#define PW_OUTFILE_MAX	8
static _Atomic(char *) pw_outfile_tmps[PW_OUTFILE_MAX];
/* The thread that installed the handler.  A library's threads (OpenBLAS
 * starts its workers before main) block nothing, so a signal sent while
 * that thread blocks the signals to set a slot goes to one of them: the
 * handler hands it back to this thread, which takes it once the slot is
 * set.  Without that, a file created the moment before was left behind. */
static pthread_t pw_outfile_main;
static atomic_bool pw_outfile_has_main;

/* The signals that end a run and leave its outputs as they were. */
static const int pw_outfile_fatal_signals[] = { SIGHUP, SIGINT, SIGTERM };
#define PW_OUTFILE_NSIGNALS \
	(sizeof pw_outfile_fatal_signals / sizeof pw_outfile_fatal_signals[0])

void
pw_outfile_fatal(int sig)
{
	int saved = errno;
	char *tmp;
	size_t i;

	if (atomic_load(&pw_outfile_has_main) &&
	    !pthread_equal(pthread_self(), pw_outfile_main)) {
		pthread_kill(pw_outfile_main, sig);
		errno = saved;
		return;
	}
	for (i = 0; i < PW_OUTFILE_MAX; i++) {
		if ((tmp = atomic_load(&pw_outfile_tmps[i])) != NULL)
			unlink(tmp);
	}
	/* SIG is blocked in its handler: it ends the run on the return. */
	signal(sig, SIG_DFL);
	raise(sig);
	errno = saved;
}

void
pw_signal_catch(int sig, const struct sigaction *sa, struct sigaction *before)
{
	struct sigaction was;

	if (before == NULL)
		before = &was;
	/* Ignored on entry (nohup, a script's background job): kept. */
	if (sigaction(sig, NULL, before) == 0 && before->sa_handler != SIG_IGN)
		sigaction(sig, sa, NULL);
}

void
pw_outfile_signals(void)
{
	struct sigaction sa;
	size_t i;

	pw_outfile_main = pthread_self();
	atomic_store(&pw_outfile_has_main, true);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = pw_outfile_fatal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < PW_OUTFILE_NSIGNALS; i++)
		sigaddset(&sa.sa_mask, pw_outfile_fatal_signals[i]);
	for (i = 0; i < PW_OUTFILE_NSIGNALS; i++)
		pw_signal_catch(pw_outfile_fatal_signals[i], &sa, NULL);
}

/* Blocks the fatal signals in this thread, its mask before in *OLD for
 * pthread_sigmask(SIG_SETMASK) to restore. */
static void
pw_outfile_block(sigset_t *old)
{
	sigset_t set;
	size_t i;

	sigemptyset(&set);
	for (i = 0; i < PW_OUTFILE_NSIGNALS; i++)
		sigaddset(&set, pw_outfile_fatal_signals[i]);
	pthread_sigmask(SIG_BLOCK, &set, old);
}

int
pw_names_find(const char *const *names, const char *s)
{
	int i;

	for (i = 0; names[i] != NULL; i++)
		if (strcasecmp(names[i], s) == 0)
			return i;
	return -1;
}

int
pw_double_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double
pw_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void
pw_sync_init(pthread_mutex_t *lock, pthread_cond_t *cond)
{
	pthread_condattr_t ca;

	if (lock != NULL)
		pthread_mutex_init(lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(cond, &ca);
	pthread_condattr_destroy(&ca);
}

void
pw_sync_wait(pthread_cond_t *cond, pthread_mutex_t *lock, double seconds)
{
	struct timespec ts;
	double whole;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	seconds = modf(seconds, &whole);
	ts.tv_sec += (time_t)whole;
	ts.tv_nsec += (long)(seconds * 1e9);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(cond, lock, &ts);
}

int
pw_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg)
{
	sigset_t old;
	int rc;

	/* The new thread inherits the mask. */
	pw_outfile_block(&old);
	rc = pthread_create(thread, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

/* Sets (TMP) or clears (NULL) OUT's slot; false when all are taken. */
static bool
pw_outfile_register(struct pw_outfile *out, char *tmp)
{
	char *expected;
	size_t i;

	for (i = 0; i < PW_OUTFILE_MAX; i++) {
		expected = tmp != NULL ? NULL : out->tmp;
		if (atomic_compare_exchange_strong(&pw_outfile_tmps[i],
		    &expected, tmp))
			return true;
	}
	return false;
}

/* Clears OUT's slot and frees its temporary file's name, which the
 * handler may be reading until then. */
static void
pw_outfile_forget(struct pw_outfile *out)
{
	sigset_t old;

	pw_outfile_block(&old);
	pw_outfile_register(out, NULL);
	free(out->tmp);
	out->tmp = NULL;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* The stream's writes: the first error's errno is kept for the message,
 * where stdio would lose it among later calls. */
static ssize_t
pw_outfile_write(void *cookie, const char *buf, size_t len)
{
	struct pw_outfile *out = cookie;
	size_t done = 0;
	ssize_t n;

	while (out->error == 0 && done < len) {
		n = write(out->fd, buf + done, len - done);
		if (n > 0)
			done += (size_t)n;
		else if (n == 0)
			out->error = EIO;
		else if (errno != EINTR)
			out->error = errno;
	}
	return out->error == 0 ? (ssize_t)len : 0;
}

/* Ends OUT's write with its errno ERROR (0: none) in ERR; returns the
 * rc. */
static int
pw_outfile_failed(struct pw_outfile *out, const char *what, int error,
    struct pw_error *err)
{
	pw_error_set(err, "%s: %s%s%s", out->path != NULL ? out->path :
	    "stdout", what, error != 0 ? ": " : "", error != 0 ?
	    strerror(error) : "");
	pw_outfile_abort(out);
	return PW_ERR_IO;
}

/* PATH with every symbolic link of its last component followed, as the
 * file to write (a link that leads nowhere yet names the file to
 * create); the caller frees it.  NULL with errno set when a link cannot
 * be read or they loop. */
static char *
pw_outfile_resolve(const char *path, struct stat *st, bool *exists)
{
	char link[PATH_MAX], *target = pw_xstrdup(path), *next, *slash;
	ssize_t len;
	int hops;

	for (hops = 0; ; hops++) {
		if (lstat(target, st) != 0) {
			*exists = false;
			return target;
		}
		*exists = true;
		if (!S_ISLNK(st->st_mode))
			return target;
		if (hops == 40) {
			errno = ELOOP;
			break;
		}
		if ((len = readlink(target, link, sizeof link)) < 0)
			break;
		if ((size_t)len == sizeof link) {
			errno = ENAMETOOLONG;
			break;
		}
		link[len] = '\0';
		slash = strrchr(target, '/');
		if (link[0] == '/' || slash == NULL)
			next = pw_xstrdup(link);
		else
			next = pw_xasprintf("%.*s/%s", (int)(slash - target),
			    target, link);
		free(target);
		target = next;
	}
	free(target);
	return NULL;
}

/* The directory of PATH (".", "/" or its part before the last slash): a
 * string the caller frees. */
static char *
pw_path_dir(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash == NULL ? pw_xstrdup(".") : slash == path ?
	    pw_xstrdup("/") : pw_xasprintf("%.*s", (int)(slash - path), path);
}

char *
pw_path_written(const char *path)
{
	char *target, *dir, *real;
	struct stat st;
	bool exists;

	if ((target = pw_outfile_resolve(path, &st, &exists)) == NULL)
		return NULL;
	if ((real = realpath(target, NULL)) == NULL) {
		dir = pw_path_dir(target);
		real = realpath(dir, NULL);
		free(dir);
		if (real != NULL) {
			dir = real;
			real = pw_xasprintf("%s/%s", dir, strrchr(target, '/') !=
			    NULL ? strrchr(target, '/') + 1 : target);
			free(dir);
		} else
			real = pw_xstrdup(target);
	}
	free(target);
	return real;
}

/* The most of a name a temporary name keeps: NAME_MAX less the rest of
 * ".NAME.pw-tmp.PID.XXXXXX" with the longest PID. */
#define PW_OUTFILE_TMP_BASE	(NAME_MAX - 26)

/* BASE as a temporary name carries it (the caller frees it): whole when
 * it fits, else its start, '~' and a hash of the whole, so that the name
 * stays within NAME_MAX yet stands for this BASE alone. */
static char *
pw_outfile_tmp_base(const char *base)
{
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */
	const char *s;

	if (strlen(base) <= PW_OUTFILE_TMP_BASE)
		return pw_xstrdup(base);
	for (s = base; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return pw_xasprintf("%.*s~%016llx", PW_OUTFILE_TMP_BASE - 17, base,
	    (unsigned long long)h);
}

/* Whether NAME is a temporary file name of pw_outfile_open's beside a
 * file whose name a temporary name carries as BASE
 * (".BASE.pw-tmp.PID.XXXXXX"), and of which PID. */
static bool
pw_outfile_tmp_name(const char *name, const char *base, pid_t *pid)
{
	static const char suffix[] = ".pw-tmp.";
	size_t blen = strlen(base), i;
	long n = 0;

	if (name[0] != '.' || strncmp(name + 1, base, blen) != 0 ||
	    strncmp(name + 1 + blen, suffix, sizeof suffix - 1) != 0)
		return false;
	name += 1 + blen + sizeof suffix - 1;
	if (*name < '1' || *name > '9')
		return false;
	for (; *name >= '0' && *name <= '9'; name++) {
		if ((n = 10 * n + (*name - '0')) > INT_MAX)
			return false;
	}
	if (*name++ != '.')
		return false;
	for (i = 0; i < 6; i++) {
		if (!isalnum((unsigned char)name[i]))
			return false;
	}
	*pid = (pid_t)n;
	return name[6] == '\0';
}

/* Removes the temporary files of BASE in DIR that a killed run left: of
 * that exact name, regular files of this user, of a process that is
 * gone.  Nothing else is touched. */
static void
pw_outfile_sweep(const char *dir, const char *base)
{
	struct dirent *e;
	struct stat st;
	pid_t pid;
	DIR *d;

	if ((d = opendir(dir)) == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (!pw_outfile_tmp_name(e->d_name, base, &pid) ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) !=
		    0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid())
			continue;
		if (kill(pid, 0) != 0 && errno == ESRCH)
			unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
}

/* Gives the new file FD the mode of the file it replaces (ST; EXISTS
 * false: the usual mode), and its owner and group as far as this user
 * may: where the group cannot be kept, the group gets what others get. */
static int
pw_outfile_mode(int fd, const struct stat *st, bool exists)
{
	mode_t mode;

	if (!exists)
		return fchmod(fd, 0666 & ~pw_umask());
	mode = st->st_mode & 07777;
	if (fchown(fd, st->st_uid, st->st_gid) != 0) {
		/* Set-id bits only for the owner they were given by. */
		mode &= ~(mode_t)06000;
		if (fchown(fd, (uid_t)-1, st->st_gid) != 0)
			mode = (mode & ~(mode_t)070) | ((mode & 07) << 3);
	}
	return fchmod(fd, mode);
}

/* Opens FD as OUT's stream. */
static void
pw_outfile_stream(struct pw_outfile *out, int fd)
{
	static const cookie_io_functions_t io = { NULL, pw_outfile_write,
	    NULL, NULL };

	out->fd = fd;
	if ((out->fp = fopencookie(out, "w", io)) == NULL) {
		fprintf(stderr, "pipewright: out of memory opening a stream\n");
		abort();
	}
}

int
pw_outfile_open(struct pw_outfile *out, const char *path, struct pw_error *err)
{
	struct stat st;
	const char *base;
	char *dir, *tbase;
	bool exists;
	sigset_t old;
	long most;
	int fd, error;

	memset(out, 0, sizeof *out);
	out->fd = -1;
	if (strcmp(path, "-") == 0) {
		/* What stdout holds goes first. */
		fflush(stdout);
		out->is_stdout = true;
		pw_outfile_stream(out, STDOUT_FILENO);
		return PW_OK;
	}
	out->path = pw_xstrdup(path);
	/* A device or a pipe (/dev/null, a FIFO, /dev/stdout on a pipe) is
	 * written in place: renaming over it would replace it with a regular
	 * file.  Opened by the name given: /proc's links to a pipe
	 * (/dev/stdout, /dev/fd/N, a shell's >(cmd)) lead to no path. */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if ((fd = open(path, O_WRONLY | O_TRUNC | O_NOCTTY |
		    O_CLOEXEC)) == -1)
			return pw_outfile_failed(out, "cannot write", errno,
			    err);
		pw_outfile_stream(out, fd);
		return PW_OK;
	}
	if ((out->target = pw_outfile_resolve(path, &st, &exists)) == NULL)
		return pw_outfile_failed(out, "cannot follow the link", errno,
		    err);
	/* Renaming over a file needs only its directory's permission: a
	 * file its user may not write (0444) is refused as the shell's >
	 * refuses it, not replaced. */
	if (exists && faccessat(AT_FDCWD, out->target, W_OK, AT_EACCESS) != 0)
		return pw_outfile_failed(out, "cannot write", errno, err);
	dir = pw_path_dir(out->target);
	base = strrchr(out->target, '/');
	base = base == NULL ? out->target : base + 1;
	/* The temporary file's name is shortened to fit, so a name longer
	 * than the directory holds would fail only at the rename, after the
	 * work (a launch's whole run). */
	if (!exists && (most = pathconf(dir, _PC_NAME_MAX)) > 0 &&
	    strlen(base) > (size_t)most) {
		free(dir);
		return pw_outfile_failed(out, "cannot write", ENAMETOOLONG,
		    err);
	}
	tbase = pw_outfile_tmp_base(base);
	pw_outfile_sweep(dir, tbase);
	out->tmp = pw_xasprintf("%s/.%s.pw-tmp.%ld.XXXXXX", dir, tbase,
	    (long)getpid());
	free(tbase);
	/* Not interrupted between the file's creation and its slot. */
	pw_outfile_block(&old);
	if ((fd = mkostemp(out->tmp, O_CLOEXEC)) != -1 &&
	    !pw_outfile_register(out, out->tmp)) {
		unlink(out->tmp);
		close(fd);
		fd = -1;
		errno = EMFILE;
	}
	error = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (fd == -1) {
		free(out->tmp);
		out->tmp = NULL;
		pw_error_set(err, "%s: cannot create a temporary file in %s: %s",
		    path, dir, strerror(error));
		free(dir);
		pw_outfile_abort(out);
		return PW_ERR_IO;
	}
	free(dir);
	out->fd = fd;
	if (pw_outfile_mode(fd, &st, exists) != 0)
		return pw_outfile_failed(out, "cannot set the mode", errno,
		    err);
	pw_outfile_stream(out, fd);
	return PW_OK;
}

/* Closes OUT's file (never stdout); 0, or the errno of the failure. */
static int
pw_outfile_close(struct pw_outfile *out)
{
	int fd = out->fd;

	out->fd = -1;
	return out->is_stdout || close(fd) == 0 ? 0 : errno;
}

int
pw_outfile_commit(struct pw_outfile *out, struct pw_error *err)
{
	FILE *fp = out->fp;
	int error;

	out->fp = NULL;
	if (fclose(fp) != 0 || out->error != 0)
		return pw_outfile_failed(out, "write failed", out->error, err);
	if (out->tmp != NULL && fsync(out->fd) != 0)
		return pw_outfile_failed(out, "write failed", errno, err);
	if ((error = pw_outfile_close(out)) != 0)
		return pw_outfile_failed(out, "write failed", error, err);
	if (out->tmp != NULL) {
		if (rename(out->tmp, out->target) != 0)
			return pw_outfile_failed(out, "cannot replace", errno,
			    err);
		/* Renamed: there is no temporary file left to remove. */
		pw_outfile_forget(out);
	}
	pw_outfile_abort(out);
	return PW_OK;
}

void
pw_outfile_abort(struct pw_outfile *out)
{
	if (out->fp != NULL) {
		/* What is still buffered is dropped, not written: stdout
		 * and a device are written in place. */
		out->error = ECANCELED;
		fclose(out->fp);
	}
	if (out->fd != -1)
		pw_outfile_close(out);
	if (out->tmp != NULL) {
		unlink(out->tmp);
		pw_outfile_forget(out);
	}
	free(out->target);
	free(out->path);
	memset(out, 0, sizeof *out);
	out->fd = -1;
}

/* The C library's UTF-8 decoder whatever the process's locale; (locale_t)0
 * where the system has none. */
static locale_t
pw_utf8_locale(void)
{
	static locale_t utf8;

	if (utf8 == (locale_t)0)
		utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
	return utf8;
}

char *
pw_escape(const char *s)
{
	locale_t utf8 = pw_utf8_locale(), before = (locale_t)0;
	size_t len = strlen(s), i, k, n, used = 0;
	unsigned char c;
	char *e = pw_xmalloc(4 * len + 1);
	mbstate_t state;
	wchar_t wc;
	bool plain;

	if (utf8 != (locale_t)0)
		before = uselocale(utf8);
	for (i = 0; i < len; i += n) {
		c = (unsigned char)s[i];
		n = 1;
		if (c < 0x80)
			plain = c >= 0x20 && c != 0x7f;
		else if (utf8 == (locale_t)0)
			plain = false;
		else {
			memset(&state, 0, sizeof state);
			n = mbrtowc(&wc, s + i, len - i, &state);
			/* Not UTF-8: the byte alone is escaped. */
			if (n == (size_t)-1 || n == (size_t)-2 || n == 0)
				n = 1, plain = false;
			else
				plain = !iswcntrl((wint_t)wc);
		}
		for (k = 0; k < n; k++) {
			if (plain)
				e[used++] = s[i + k];
			else
				used += (size_t)sprintf(e + used, "\\x%02x",
				    (unsigned char)s[i + k]);
		}
	}
	e[used] = '\0';
	if (utf8 != (locale_t)0)
		uselocale(before);
	return e;
}

/* Picks the largest unit not above VALUE so numbers read like 12.5 ms. */
static char *
pw_fmt_scaled(char *buf, size_t len, double value, const double *scale,
    const char *const *unit, int nunits)
{
	int i;

	if (isinf(value)) {
		snprintf(buf, len, "%s", value > 0 ? "inf" : "-inf");
		return buf;
	}
	if (isnan(value)) {
		snprintf(buf, len, "n/a");
		return buf;
	}
	for (i = 0; i < nunits - 1; i++)
		if (fabs(value) >= scale[i])
			break;
	/* What reads a whole one of the unit above at four digits reads so
	 * (999.99996 ms is 1 s, 1024 - 1e-9 B is 1 KiB), and only that: 1023.5
	 * B is 1024 B, not 0.9995 KiB. */
	if (i > 0) {
		snprintf(buf, len, "%.4g", value / scale[i - 1]);
		if (fabs(strtod(buf, NULL)) >= 1)
			i--;
	}
	/* Past the largest unit's 9999, whole units to the last one (a step
	 * of 150003 s is not "1.5e+05 s"), up to where "%.0f" would print
	 * more digits than a double holds. */
	value /= scale[i];
	snprintf(buf, len, fabs(value) >= 9999.5 && fabs(value) < 1e15 ?
	    "%.0f %s" : "%.4g %s", value, unit[i]);
	return buf;
}

int
pw_exact_precision(double x)
{
	char buf[32];
	int prec;

	for (prec = 15; prec < 17; prec++) {
		snprintf(buf, sizeof buf, "%.*g", prec, x);
		if (strtod(buf, NULL) == x)
			break;
	}
	return prec;
}

void
pw_one_line(const char *in, char *out, size_t len)
{
	const char *s;
	size_t n = 0;
	bool colon;

	assert(len > 0);
	for (s = in; *s != '\0' && n + 2 < len; s++) {
		if (*s != '\n') {
			out[n++] = *s == '\t' ? ' ' : *s;
			continue;
		}
		colon = s > in && s[-1] == ':';
		while (s[1] == ' ' || s[1] == '\t' || s[1] == '\n')
			s++;
		if (s[1] != '\0' && colon)
			out[n++] = ' ';
		else if (s[1] != '\0') {
			out[n++] = ';';
			out[n++] = ' ';
		}
	}
	out[n] = '\0';
}

bool
pw_parse_int(const char *s, long min, long max, int *out)
{
	char *end;
	long n;

	assert(min >= INT_MIN && max <= INT_MAX);
	errno = 0;
	n = strtol(s, &end, 10);
	while (isspace((unsigned char)*end))
		end++;
	if (errno != 0 || end == s || *end != '\0' || n < min || n > max)
		return false;
	*out = (int)n;
	return true;
}

double
pw_parse_decimal(const char *s, char **end)
{
	/* strtod would also take a sign, "inf", "nan" and hexadecimal. */
	if ((!isdigit((unsigned char)s[0]) && s[0] != '.') ||
	    (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))) {
		*end = (char *)s;
		return 0;
	}
	return strtod(s, end);
}

bool
pw_parse_bytes(const char *s, double *out)
{
	static const struct { const char *name; double scale; } unit[] = {
		{ "", 1 }, { "b", 1 },
		{ "kb", 1e3 }, { "mb", 1e6 }, { "gb", 1e9 }, { "tb", 1e12 },
		{ "kib", 1024.0 }, { "mib", 1048576.0 },
		{ "gib", 1073741824.0 }, { "tib", 1099511627776.0 },
	};
	char *end;
	size_t i, n;
	double x;

	while (isspace((unsigned char)*s))
		s++;
	errno = 0;
	x = pw_parse_decimal(s, &end);
	if (errno != 0 || end == s)
		return false;
	while (isspace((unsigned char)*end))
		end++;
	n = strlen(end);
	while (n > 0 && isspace((unsigned char)end[n - 1]))
		n--;
	for (i = 0; i < sizeof unit / sizeof unit[0]; i++) {
		if (strlen(unit[i].name) != n ||
		    strncasecmp(end, unit[i].name, n) != 0)
			continue;
		x *= unit[i].scale;
		if (!isfinite(x))
			return false;
		*out = x;
		return true;
	}
	return false;
}

bool
pw_path_ends(const char *path, const char *suffix)
{
	size_t n = strlen(path), k = strlen(suffix);

	return n > k && strcasecmp(path + n - k, suffix) == 0;
}

const char *
pw_path_misread(const char *path, const char *own)
{
	static const char *const kinds[][2] = {
		{ ".lua", "a Lua script" }, { ".csv", "a PyTorch schedule CSV" },
		{ ".json", "a JSON file" },
	};
	size_t i;

	for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (pw_path_ends(path, kinds[i][0]))
			return strcmp(kinds[i][0], own) == 0 ? NULL :
			    kinds[i][1];
	return NULL;
}

uint64_t
pw_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

char *
pw_fmt_seconds(char *buf, size_t len, double seconds)
{
	static const double scale[] = { 1, 1e-3, 1e-6, 1e-9 };
	static const char *const unit[] = { "s", "ms", "us", "ns" };

	if (seconds == 0) {
		snprintf(buf, len, "0 s");
		return buf;
	}
	return pw_fmt_scaled(buf, len, seconds, scale, unit, 4);
}

char *
pw_fmt_bytes(char *buf, size_t len, double bytes)
{
	static const double scale[] = { 1099511627776.0, 1073741824.0,
	    1048576.0, 1024.0, 1 };
	static const char *const unit[] = { "TiB", "GiB", "MiB", "KiB", "B" };

	return pw_fmt_scaled(buf, len, bytes, scale, unit, 5);
}
