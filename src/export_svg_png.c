/*
 * export_svg_png.c - the PNG: the SVG rasterised by rsvg-convert (Debian's
 * librsvg2-bin), which reads the SVG from a temporary file; what it
 * writes into a pipe is copied into the output's stream, so the PNG is
 * written as atomically as any export.
 */
#include <sys/wait.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export.h"

/* rsvg-convert's exit status when it could not be run: the shell's. */
#define PNG_NOT_RUN	127

/* Why rsvg-convert, ended with STATUS, failed, into ERR: its exit status
 * or its signal, and the first line of what it wrote on stderr (kept in
 * ERRS), so that the failure stays one line. */
static void
png_failed(int status, FILE *errs, struct pw_error *err)
{
	char said[256] = "", how[64];
	size_t len;

	if (fseek(errs, 0, SEEK_SET) == 0 &&
	    fgets(said, sizeof said, errs) != NULL) {
		len = strcspn(said, "\r\n");
		said[len] = '\0';
	}
	if (WIFSIGNALED(status))
		snprintf(how, sizeof how, "killed by signal %d, %s",
		    WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(how, sizeof how, "exit status %d",
		    WEXITSTATUS(status));
	pw_error_set(err, "png: rsvg-convert failed (%s)%s%s", how,
	    said[0] != '\0' ? ": " : "", said);
}

int
pw_export_png(FILE *fp, const struct pw_problem *p,
    const struct pw_schedule *s, const struct pw_timing *t,
    const struct pw_metrics *mt, const struct pw_export_options *options,
    struct pw_error *err)
{
	static const unsigned char signature[8] = { 0x89, 'P', 'N', 'G',
	    '\r', '\n', 0x1a, '\n' };
	unsigned char head[sizeof signature];
	size_t nhead = 0, i;
	FILE *svg, *errs = NULL;
	char buf[8192];
	ssize_t n;
	pid_t pid;
	int rc, status, fd[2];

	if ((svg = tmpfile()) == NULL) {
		pw_error_set(err, "png: a temporary file: %s", strerror(errno));
		return PW_ERR_IO;
	}
	if ((rc = pw_export_svg(svg, p, s, t, mt, options, err)) != PW_OK)
		goto out;
	if (fflush(svg) != 0 || fseek(svg, 0, SEEK_SET) != 0 ||
	    (errs = tmpfile()) == NULL || pipe(fd) != 0) {
		pw_error_set(err, "png: %s", strerror(errno));
		rc = PW_ERR_IO;
		goto out;
	}
	if ((pid = fork()) == -1) {
		pw_error_set(err, "png: fork: %s", strerror(errno));
		close(fd[0]);
		close(fd[1]);
		rc = PW_ERR_IO;
		goto out;
	}
	if (pid == 0) {
		close(fd[0]);
		if (dup2(fileno(svg), STDIN_FILENO) != -1 &&
		    dup2(fd[1], STDOUT_FILENO) != -1 &&
		    dup2(fileno(errs), STDERR_FILENO) != -1)
			execlp("rsvg-convert", "rsvg-convert", "--format", "png",
			    (char *)NULL);
		_exit(PNG_NOT_RUN);
	}
	close(fd[1]);
	while ((n = read(fd[0], buf, sizeof buf)) != 0) {
		if (n > 0) {
			for (i = 0; i < (size_t)n && nhead < sizeof head; i++)
				head[nhead++] = (unsigned char)buf[i];
			fwrite(buf, 1, (size_t)n, fp);
		} else if (errno != EINTR)
			break;
	}
	close(fd[0]);
	while (waitpid(pid, &status, 0) == -1) {
		if (errno != EINTR) {
			pw_error_set(err, "png: waiting for rsvg-convert: %s",
			    strerror(errno));
			rc = PW_ERR_IO;
			goto out;
		}
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == PNG_NOT_RUN) {
		pw_error_set(err, "png: rsvg-convert is missing: install the "
		    "Debian package librsvg2-bin");
		rc = PW_ERR_INPUT;
	} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		png_failed(status, errs, err);
		rc = PW_ERR_IO;
	} else if (nhead < sizeof signature ||
	    memcmp(head, signature, sizeof signature) != 0) {
		/* It said it succeeded; what it wrote says otherwise. */
		pw_error_set(err, "png: rsvg-convert wrote no PNG (%s)",
		    nhead == 0 ? "nothing" : "other data");
		rc = PW_ERR_IO;
	}
out:
	if (errs != NULL)
		fclose(errs);
	fclose(svg);
	return rc;
}
