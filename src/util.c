/* util.c - errors, the allocation wrapper, atomic output files, units. */
#define _GNU_SOURCE	/* vasprintf */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
	if (ptr == NULL && size != 0) {
		fprintf(stderr, "pipewright: out of memory allocating %zu bytes\n",
		    size);
		abort();
	}
	return ptr;
}

void *
pw_xmalloc(size_t size)
{
	return pw_check_alloc(malloc(size == 0 ? 1 : size), size);
}

void *
pw_xcalloc(size_t nmemb, size_t size)
{
	if (nmemb == 0 || size == 0)
		nmemb = size = 1;
	return pw_check_alloc(calloc(nmemb, size), nmemb * size);
}

void *
pw_xreallocarray(void *ptr, size_t nmemb, size_t size)
{
	if (size != 0 && nmemb > SIZE_MAX / size) {
		fprintf(stderr, "pipewright: allocation of %zu x %zu bytes "
		    "overflows\n", nmemb, size);
		abort();
	}
	if (nmemb == 0 || size == 0)
		nmemb = size = 1;
	return pw_check_alloc(realloc(ptr, nmemb * size), nmemb * size);
}

char *
pw_xstrdup(const char *s)
{
	size_t len = strlen(s) + 1;

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

int
pw_outfile_open(struct pw_outfile *out, const char *path, struct pw_error *err)
{
	struct stat st;
	int fd;

	memset(out, 0, sizeof *out);
	if (strcmp(path, "-") == 0) {
		out->fp = stdout;
		return PW_OK;
	}
	out->path = pw_xstrdup(path);
	/* A device or a pipe (/dev/null, a FIFO) is written in place: renaming
	 * over it would replace it with a regular file. */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if ((out->fp = fopen(path, "w")) == NULL) {
			pw_error_set(err, "%s: cannot write: %s", path,
			    strerror(errno));
			free(out->path);
			memset(out, 0, sizeof *out);
			return PW_ERR_IO;
		}
		return PW_OK;
	}
	out->tmp = pw_xasprintf("%s.tmp.XXXXXX", path);
	fd = mkstemp(out->tmp);
	/* mkstemp makes the file private; outputs get the usual mode. */
	if (fd == -1 || fchmod(fd, 0666 & ~pw_umask()) != 0 ||
	    (out->fp = fdopen(fd, "w")) == NULL) {
		pw_error_set(err, "%s: cannot write: %s", path, strerror(errno));
		if (fd != -1) {
			close(fd);
			unlink(out->tmp);
		}
		free(out->tmp);
		free(out->path);
		memset(out, 0, sizeof *out);
		return PW_ERR_IO;
	}
	return PW_OK;
}

int
pw_outfile_commit(struct pw_outfile *out, struct pw_error *err)
{
	int rc = PW_OK;

	if (out->tmp == NULL) {
		if (fflush(out->fp) != 0 || ferror(out->fp))
			rc = PW_ERR_IO;
		if (out->fp != stdout && fclose(out->fp) != 0)
			rc = PW_ERR_IO;
		if (rc != PW_OK)
			pw_error_set(err, "%s: write failed: %s",
			    out->path != NULL ? out->path : "stdout",
			    strerror(errno));
		free(out->path);
		memset(out, 0, sizeof *out);
		return rc;
	}
	if (ferror(out->fp) || fflush(out->fp) != 0 ||
	    fsync(fileno(out->fp)) != 0) {
		pw_error_set(err, "%s: write failed: %s", out->path,
		    strerror(errno));
		pw_outfile_abort(out);
		return PW_ERR_IO;
	}
	if (fclose(out->fp) != 0) {
		pw_error_set(err, "%s: write failed: %s", out->path,
		    strerror(errno));
		out->fp = NULL;
		pw_outfile_abort(out);
		return PW_ERR_IO;
	}
	out->fp = NULL;
	if (rename(out->tmp, out->path) != 0) {
		pw_error_set(err, "%s: cannot replace: %s", out->path,
		    strerror(errno));
		pw_outfile_abort(out);
		return PW_ERR_IO;
	}
	free(out->tmp);
	free(out->path);
	memset(out, 0, sizeof *out);
	return PW_OK;
}

void
pw_outfile_abort(struct pw_outfile *out)
{
	if (out->fp != NULL && out->fp != stdout)
		fclose(out->fp);
	if (out->tmp != NULL)
		unlink(out->tmp);
	free(out->tmp);
	free(out->path);
	memset(out, 0, sizeof *out);
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
	snprintf(buf, len, "%.4g %s", value / scale[i], unit[i]);
	return buf;
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
