/*
 * infile.c - inputs a command may read more than once.  One file can be
 * read twice (a schedule file's plan, then its measured run; a problem
 * refused as a schedule, then read as a problem), which a pipe, a FIFO,
 * a device or stdin cannot give: a second open of a FIFO waits for a
 * writer that never comes, and a pipe is empty the second time.  So the
 * bytes of such a name, as its first reader reads them, are also kept in
 * an unnamed temporary file, and every reader of that name reads the copy
 * first and then the stream on from where the copy ends.  Nothing is read
 * ahead of what a reader asks for: an endless /dev/zero still fails at
 * its first byte.
 */
#define _GNU_SOURCE	/* fopencookie */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipewright.h"

/* One name read so far: its stream and the copy of what came from it. */
struct infile_source {
	char	*path;
	int	fd;		/* the stream; -1 once it has ended */
	FILE	*copy;		/* the bytes read from it, unnamed */
	off_t	len;		/* how many */
	struct infile_source *next;
};

/* A reader's place in its source. */
struct infile_reader {
	struct infile_source *src;
	off_t	pos;
};

/* Every source of the process, for its life: readers on any thread. */
static struct infile_source *infile_sources;
static pthread_mutex_t infile_lock = PTHREAD_MUTEX_INITIALIZER;

/* The cookie's read: the copy where it has the reader's bytes, else the
 * stream, whose bytes join the copy. */
static ssize_t
infile_read(void *cookie, char *buf, size_t size)
{
	struct infile_reader *r = cookie;
	struct infile_source *s = r->src;
	ssize_t n = 0;
	int error = 0;

	pthread_mutex_lock(&infile_lock);
	if (r->pos < s->len) {
		if ((size_t)(s->len - r->pos) < size)
			size = (size_t)(s->len - r->pos);
		n = pread(fileno(s->copy), buf, size, r->pos);
	} else if (s->fd >= 0) {
		while ((n = read(s->fd, buf, size)) < 0 && errno == EINTR)
			continue;
		if (n > 0 && pwrite(fileno(s->copy), buf, (size_t)n,
		    s->len) != n)
			n = -1;		/* the copy is short of space */
		else if (n > 0)
			s->len += n;
		else if (n == 0 && s->fd != STDIN_FILENO) {
			close(s->fd);
			s->fd = -1;
		} else if (n == 0)
			s->fd = -1;
	}
	if (n < 0)
		error = errno;
	else
		r->pos += n;
	pthread_mutex_unlock(&infile_lock);
	errno = error;
	return n;
}

static int
infile_close(void *cookie)
{
	free(cookie);
	return 0;
}

/* The source of PATH ("-": stdin), opened on first use; NULL with errno
 * set when it cannot be.  Called under infile_lock. */
static struct infile_source *
infile_source(const char *path)
{
	struct infile_source *s;
	FILE *copy;
	int fd;

	for (s = infile_sources; s != NULL; s = s->next)
		if (strcmp(s->path, path) == 0)
			return s;
	fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open(path, O_RDONLY |
	    O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if ((copy = tmpfile()) == NULL) {
		if (fd != STDIN_FILENO)
			close(fd);
		return NULL;
	}
	s = pw_xcalloc(1, sizeof *s);
	s->path = pw_xstrdup(path);
	s->fd = fd;
	s->copy = copy;
	s->next = infile_sources;
	infile_sources = s;
	return s;
}

FILE *
pw_infile_open(const char *path)
{
	static const cookie_io_functions_t io = { infile_read, NULL, NULL,
	    infile_close };
	struct infile_reader *r;
	struct infile_source *s;
	struct stat st;
	FILE *fp;
	int error;

	/* A regular file reads again by itself, and a directory or a
	 * missing file fails as fopen says. */
	if (strcmp(path, "-") != 0 && (stat(path, &st) != 0 ||
	    S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
		return fopen(path, "r");
	pthread_mutex_lock(&infile_lock);
	s = infile_source(path);
	error = errno;
	pthread_mutex_unlock(&infile_lock);
	if (s == NULL) {
		errno = error;
		return NULL;
	}
	r = pw_xcalloc(1, sizeof *r);
	r->src = s;
	if ((fp = fopencookie(r, "r", io)) == NULL)
		free(r);
	return fp;
}
