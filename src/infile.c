/*
 * infile.c - inputs a command may read more than once.  One file can be
 * read twice (a schedule file's plan, then its measured run; a problem
 * refused as a schedule, then read as a problem), which a pipe, a FIFO,
 * a device or stdin cannot give: a second open of a FIFO waits for a
 * writer that never comes, and a pipe is empty the second time.  So the
 * bytes of such a file, as its first reader reads them, are also kept in
 * an unnamed temporary file, and every reader of that file (by whatever
 * name: "-" and /dev/stdin are one) reads the copy first and then the
 * stream on from where the copy ends.  Nothing is read ahead of what a
 * reader asks for: an endless /dev/zero still fails at its first byte.
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

/* One file read so far: its stream and the copy of what came from it. */
struct infile_source {
	dev_t	dev;		/* the file, as fstat says: the key */
	ino_t	ino;
	pthread_mutex_t lock;	/* guards the rest */
	int	fd;		/* the stream; -1 once it has ended */
	int	copy;		/* the bytes read from it, unnamed */
	off_t	len;		/* how many */
	int	error;		/* errno of a failed read or copy, 0 */
	struct infile_source *next;
};

/* A reader's place in its source. */
struct infile_reader {
	struct infile_source *src;
	off_t	pos;
};

/* Every source of the process, for its life; the lock guards the list,
 * never a read or an open, which may wait. */
static struct infile_source *infile_sources;
static pthread_mutex_t infile_lock = PTHREAD_MUTEX_INITIALIZER;

/* Appends the N bytes of BUF to S's copy; false with S's error set when
 * they do not all go (a full disk, a file size limit). */
static bool
infile_keep(struct infile_source *s, const char *buf, size_t n)
{
	ssize_t w;
	size_t done = 0;

	while (done < n) {
		w = pwrite(s->copy, buf + done, n - done, s->len +
		    (off_t)done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			s->error = w < 0 ? errno : ENOSPC;
			return false;
		}
		done += (size_t)w;
	}
	s->len += (off_t)n;
	return true;
}

/* The cookie's read: the copy where it has the reader's bytes, else the
 * stream, whose bytes join the copy.  A failure, once, is every later
 * reader's past the copy too. */
static ssize_t
infile_read(void *cookie, char *buf, size_t size)
{
	struct infile_reader *r = cookie;
	struct infile_source *s = r->src;
	ssize_t n = 0;
	int error = 0;

	pthread_mutex_lock(&s->lock);
	if (r->pos < s->len) {
		if ((size_t)(s->len - r->pos) < size)
			size = (size_t)(s->len - r->pos);
		if ((n = pread(s->copy, buf, size, r->pos)) < 0)
			error = errno;
	} else if (s->error != 0) {
		n = -1;
		error = s->error;
	} else if (s->fd >= 0) {
		while ((n = read(s->fd, buf, size)) < 0 && errno == EINTR)
			continue;
		if (n < 0)
			error = s->error = errno;
		else if (n > 0 && !infile_keep(s, buf, (size_t)n)) {
			n = -1;
			error = s->error;
		} else if (n == 0) {
			if (s->fd != STDIN_FILENO)
				close(s->fd);
			s->fd = -1;
		}
	}
	if (n > 0)
		r->pos += n;
	pthread_mutex_unlock(&s->lock);
	if (n < 0)
		errno = error;
	return n;
}

/* The cookie's seek, within what the copy holds: a reader that notes
 * where it is (ftell) goes back there without a copy of its own. */
static int
infile_seek(void *cookie, off64_t *offset, int whence)
{
	struct infile_reader *r = cookie;
	off64_t to = whence == SEEK_SET ? *offset : whence == SEEK_CUR ?
	    r->pos + *offset : -1;
	off_t len;

	pthread_mutex_lock(&r->src->lock);
	len = r->src->len;
	pthread_mutex_unlock(&r->src->lock);
	if (to < 0 || to > len) {
		errno = whence == SEEK_END ? ESPIPE : EINVAL;
		return -1;
	}
	r->pos = (off_t)to;
	*offset = to;
	return 0;
}

static int
infile_close(void *cookie)
{
	free(cookie);
	return 0;
}

/* The source of the file ST describes, NULL when none is known yet.
 * Called under infile_lock. */
static struct infile_source *
infile_find(const struct stat *st)
{
	struct infile_source *s;

	for (s = infile_sources; s != NULL; s = s->next)
		if (s->dev == st->st_dev && s->ino == st->st_ino)
			break;
	return s;
}

/* The source of the file ST describes, NULL when none is known yet. */
static struct infile_source *
infile_known(const struct stat *st)
{
	struct infile_source *s;

	pthread_mutex_lock(&infile_lock);
	s = infile_find(st);
	pthread_mutex_unlock(&infile_lock);
	return s;
}

/* The source of the file FD is open on (FD is taken), the one already
 * known when another name led there; NULL with errno set when its copy
 * cannot be made. */
static struct infile_source *
infile_source(int fd)
{
	struct infile_source *s;
	struct stat st;
	FILE *copy;
	int error;

	if (fstat(fd, &st) != 0)
		goto fail;
	pthread_mutex_lock(&infile_lock);
	if ((s = infile_find(&st)) == NULL) {
		if ((copy = tmpfile()) == NULL) {
			error = errno;
			pthread_mutex_unlock(&infile_lock);
			errno = error;
			goto fail;
		}
		s = pw_xcalloc(1, sizeof *s);
		s->dev = st.st_dev;
		s->ino = st.st_ino;
		pthread_mutex_init(&s->lock, NULL);
		/* The FILE is kept open (unlinked, it goes at exit) for its
		 * descriptor; no program this one runs inherits it. */
		s->copy = fileno(copy);
		fcntl(s->copy, F_SETFD, FD_CLOEXEC);
		s->fd = fd;
		s->next = infile_sources;
		infile_sources = s;
		fd = -1;
	}
	pthread_mutex_unlock(&infile_lock);
	if (fd >= 0 && fd != STDIN_FILENO)
		close(fd);	/* the known source reads for it */
	return s;
fail:
	error = errno;
	if (fd != STDIN_FILENO)
		close(fd);
	errno = error;
	return NULL;
}

/* Whether ST is of something other than a regular file or a directory. */
static bool
infile_special(const struct stat *st)
{
	return !S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode);
}

bool
pw_path_special(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && infile_special(&st);
}

FILE *
pw_infile_open(const char *path)
{
	static const cookie_io_functions_t io = { infile_read, NULL,
	    infile_seek, infile_close };
	struct infile_reader *r;
	struct infile_source *s;
	struct stat st;
	FILE *fp;
	int fd;

	/* A regular file reads again by itself, and a directory or a
	 * missing file fails as fopen says.  A FIFO read before is found
	 * by its file without opening it again, which would wait for a
	 * writer. */
	if (strcmp(path, "-") == 0)
		fd = fcntl(STDIN_FILENO, F_GETFD) == -1 ? -1 : STDIN_FILENO;
	else if (stat(path, &st) != 0 || !infile_special(&st))
		return fopen(path, "r");
	else if ((s = infile_known(&st)) != NULL)
		goto reader;
	else
		fd = open(path, O_RDONLY | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || (s = infile_source(fd)) == NULL)
		return NULL;
reader:
	r = pw_xcalloc(1, sizeof *r);
	r->src = s;
	if ((fp = fopencookie(r, "r", io)) == NULL)
		free(r);
	return fp;
}
