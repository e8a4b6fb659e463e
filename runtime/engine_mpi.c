/*
 * engine_mpi.c - what the ranks share: rank 0's problem, schedule and
 * workload to every rank before a run, every rank's measurements and
 * host to rank 0 after it (engine.h).  One process's run passes
 * through it unchanged.
 */
#define _GNU_SOURCE	/* open_memstream, fmemopen, sched_getaffinity */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"

/* ------------------------------------------------------------------ */
/* MPI: rank 0's problem, schedule and workload to every rank          */

/* The workload as one line: hidden ffn tokens scaled nstages layers...
 * Returns a string the caller frees (*LEN its length, no NUL counted),
 * NULL when no stream can be opened. */
static char *
pw_engine_workload_line(const struct pw_workload *w, size_t *len)
{
	char *buf = NULL;
	FILE *fp = open_memstream(&buf, len);
	int s;

	if (fp == NULL)
		return NULL;
	fprintf(fp, "%d %d %d %d %d", w->hidden, w->ffn, w->tokens,
	    w->scaled ? 1 : 0, w->nstages);
	for (s = 0; s < w->nstages; s++)
		fprintf(fp, " %d", w->layers[s]);
	fclose(fp);
	return buf;
}

/* The next number of *AT, from LO to HI, into *OUT; *AT past it.  False
 * for no number or one out of range. */
static bool
pw_engine_field(char **at, long lo, long hi, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(*at, &end, 10);
	if (end == *at || errno != 0 || v < lo || v > hi)
		return false;
	*at = end;
	*out = (int)v;
	return true;
}

/* Reads pw_engine_workload_line's line into W (the caller's: cleared on
 * success, untouched else), every field range-checked, then the
 * workload as pw_workload_validate holds it. */
static int
pw_engine_workload_read(const char *buf, size_t len, struct pw_workload *w,
    struct pw_error *err)
{
	char *line = pw_xmalloc(len + 1), *at;
	struct pw_workload r = { 0 };
	int s, scaled, rc = PW_ERR_INPUT;
	bool parsed = false;

	memcpy(line, buf, len);
	line[len] = '\0';
	at = line;
	if (!pw_engine_field(&at, 0, INT_MAX, &r.hidden) ||
	    !pw_engine_field(&at, 0, INT_MAX, &r.ffn) ||
	    !pw_engine_field(&at, 0, INT_MAX, &r.tokens) ||
	    !pw_engine_field(&at, 0, 1, &scaled) ||
	    !pw_engine_field(&at, 1, (long)PW_MAX_PAIRS, &r.nstages))
		goto out;
	r.scaled = scaled != 0;
	r.layers = pw_xcalloc((size_t)r.nstages, sizeof *r.layers);
	for (s = 0; s < r.nstages; s++)
		if (!pw_engine_field(&at, 0, INT_MAX, &r.layers[s]))
			goto out;
	if (*at != '\0')
		goto out;
	parsed = true;
	rc = pw_workload_validate(&r, r.nstages, "rank 0's workload", err);
	if (rc == PW_OK)
		*w = r;
out:
	if (!parsed)
		pw_error_set(err, "rank 0's workload is malformed");
	if (rc != PW_OK)
		pw_workload_clear(&r);
	free(line);
	return rc;
}

/* Rank 0 sends what it checked (or an empty message when it refused, so
 * that the others end too); the other ranks read it into *PROBLEM,
 * *SCHED and *WORK, theirs to free. */
int
pw_engine_share(struct pw_rt_net *net, bool refused, const struct pw_problem *p,
    const struct pw_schedule *sched, const struct pw_timing *timing,
    const struct pw_workload *work, struct pw_problem **op,
    struct pw_schedule **osched, struct pw_workload *owork,
    struct pw_error *err)
{
	char *buf = NULL, *wbuf = NULL;
	size_t len = 0, wlen = 0, nops = 0;
	struct pw_timed_op *ops = NULL;
	struct pw_measured *m = NULL;
	FILE *fp;
	struct pw_error spare, *net_err;
	int rc, sent = PW_OK;

	/* Rank 0 takes part in both broadcasts whatever befalls it here,
	 * sending nothing when it cannot send the schedule: the others
	 * wait in them. */
	if (net->rank == 0 && !refused) {
		if ((fp = open_memstream(&buf, &len)) == NULL) {
			pw_error_set(err, "cannot buffer the schedule");
			sent = PW_ERR_RUNTIME;
		} else {
			sent = pw_schedule_write_stream(fp, p, sched, timing,
			    NULL, err);
			fclose(fp);
		}
		if (sent == PW_OK && (wbuf = pw_engine_workload_line(work,
		    &wlen)) == NULL) {
			pw_error_set(err, "cannot buffer the workload");
			sent = PW_ERR_RUNTIME;
		}
		if (sent != PW_OK) {
			free(buf);
			buf = NULL;
			len = 0;
			wlen = 0;
		}
	}
	/* What rank 0 says of a refusal or a failure here is not
	 * overwritten by what the broadcast says after it. */
	net_err = refused || sent != PW_OK ? &spare : err;
	rc = net->bcast(net, &buf, &len, net_err);
	if (rc == PW_OK)
		rc = net->bcast(net, &wbuf, &wlen, net_err);
	if (sent != PW_OK)
		rc = sent;
	if (rc != PW_OK || net->rank == 0)
		goto out;
	if (len == 0) {
		pw_error_set(err, "rank 0 refused the schedule");
		rc = PW_ERR_INPUT;
		goto out;
	}
	if ((fp = fmemopen(buf, len, "r")) == NULL) {
		pw_error_set(err, "cannot read rank 0's schedule");
		rc = PW_ERR_RUNTIME;
		goto out;
	}
	rc = pw_file_read_stream(fp, "rank 0's schedule", op, &ops, &nops, &m, err);
	fclose(fp);
	pw_measured_free(m);
	if (rc == PW_OK)
		rc = pw_schedule_from_timed(*op, ops, nops, osched, err);
	if (rc == PW_OK)
		rc = pw_engine_workload_read(wbuf, wlen, owork, err);
out:
	free(ops);
	free(buf);
	free(wbuf);
	return rc;
}

/* ------------------------------------------------------------------ */
/* MPI: every rank's measurements to rank 0                           */

/* The measured ops this process ran, as doubles: per op its slot, then
 * start, end and arrive of every measured iteration; first the peak of
 * its device(s) and its gradient error.  Returns an array the caller
 * frees, *LEN its bytes. */
double *
pw_engine_pack(const struct pw_engine *e, double grad_error, size_t *len)
{
	int K = e->opts->iterations, k, d;
	size_t i, n = 0, per = 1 + PW_ENGINE_REC * (size_t)K;
	double *buf = pw_xcalloc(2 + (size_t)e->p->devices + e->nops * per,
	    sizeof *buf);

	buf[n++] = grad_error;
	for (d = 0; d < e->p->devices; d++)
		buf[n++] = e->dev[d].here ? pw_rt_arena_peak(e->dev[d].arena) : -1;
	for (i = 0; i < e->nops; i++) {
		if (!e->dev[e->timed[i].device].here)
			continue;
		buf[n++] = (double)i;
		for (k = 0; k < K; k++)
			memcpy(&buf[n + PW_ENGINE_REC * (size_t)k],
			    pw_engine_rec(e, k, i), PW_ENGINE_REC_BYTES);
		n += PW_ENGINE_REC * (size_t)K;
	}
	*len = n * sizeof *buf;
	return buf;
}

/* Reads what pw_engine_pack wrote (of another rank) into E's records,
 * PEAK and *GRAD_ERROR (the largest). */
int
pw_engine_unpack(struct pw_engine *e, const char *bytes, size_t len,
    double *peak, double *grad_error, struct pw_error *err)
{
	int K = e->opts->iterations, d, k;
	size_t n = len / sizeof(double), at = 0, i;
	size_t per = 1 + PW_ENGINE_REC * (size_t)K;
	double *buf = pw_xmalloc(len + 1);

	memcpy(buf, bytes, len);
	if (n < 1 + (size_t)e->p->devices ||
	    (n - 1 - (size_t)e->p->devices) % per != 0) {
		free(buf);
		pw_error_set(err, "a rank sent malformed measurements");
		return PW_ERR_RUNTIME;
	}
	if (buf[at] > *grad_error || isnan(buf[at]))
		*grad_error = buf[at];
	at++;
	for (d = 0; d < e->p->devices; d++, at++)
		if (buf[at] >= 0)
			peak[d] = buf[at];
	while (at < n) {
		i = (size_t)buf[at++];
		for (k = 0; i < e->nops && k < K; k++)
			memcpy(pw_engine_rec(e, k, i),
			    &buf[at + PW_ENGINE_REC * (size_t)k],
			    PW_ENGINE_REC_BYTES);
		at += PW_ENGINE_REC * (size_t)K;
	}
	free(buf);
	return PW_OK;
}

/* The cores this process may run on, as a set (pw_rt_host_cores's). */
static void
pw_engine_cores(cpu_set_t *set)
{
	int n, c;

	if (sched_getaffinity(0, sizeof *set, set) == 0 && CPU_COUNT(set) > 0)
		return;
	CPU_ZERO(set);
	for (n = pw_rt_host_cores(), c = 0; c < n && c < CPU_SETSIZE; c++)
		CPU_SET(c, set);
}

/* On rank 0, E->emulation when the ranks on host ALL[FIRST] (of SIZE,
 * each a name then its cores as a cpu_set_t) outnumber the cores they
 * may run on together: their device threads share them. */
static void
pw_engine_host_shared(struct pw_engine *e, char *const *all,
    const size_t *names, int size, int first)
{
	cpu_set_t together, theirs;
	int r, ranks = 0, cores;

	CPU_ZERO(&together);
	for (r = first; r < size; r++)
		if (strcmp(all[r], all[first]) == 0) {
			memcpy(&theirs, all[r] + names[r], sizeof theirs);
			CPU_OR(&together, &together, &theirs);
			ranks++;
		}
	if (ranks <= (cores = CPU_COUNT(&together)) || e->emulation[0] != '\0')
		return;
	snprintf(e->emulation, sizeof e->emulation, "an emulation: %d devices "
	    "on %d core%s of %s, the ranks sharing them: the measured times "
	    "include that sharing, which the prediction (a processor for each "
	    "device) leaves out", ranks, cores, cores == 1 ? "" : "s",
	    all[first]);
}

/* Which hosts the ranks run on, for the measured run: E->host on rank 0,
 * each name once, in rank order; and whether devices share a host's
 * cores (E->emulation, pw_rt_emulation's test where one process runs
 * them all). */
int
pw_engine_hosts(struct pw_engine *e, struct pw_error *err)
{
	/* HOST_NAME_MAX is 64 on Linux; POSIX allows 255 and a
	 * truncated name is still terminated below. */
	char name[256], **all = NULL, *me;
	size_t *lens = NULL, len, *names;
	cpu_set_t mine;
	int r, q, rc;

	if (gethostname(name, sizeof name) != 0)
		snprintf(name, sizeof name, "localhost");
	name[sizeof name - 1] = '\0';
	if (e->net->size == 1) {
		e->host = pw_xstrdup(name);
		pw_rt_emulation(e->opts, e->p->devices, e->emulation,
		    sizeof e->emulation);
		return PW_OK;
	}
	len = strlen(name) + 1;
	pw_engine_cores(&mine);
	me = pw_xmalloc(len + sizeof mine);
	memcpy(me, name, len);
	memcpy(me + len, &mine, sizeof mine);
	rc = e->net->gather(e->net, me, len + sizeof mine, &all, &lens, err);
	free(me);
	if (rc != PW_OK || e->net->rank != 0)
		goto out;
	names = pw_xcalloc((size_t)e->net->size, sizeof *names);
	for (r = 0; r < e->net->size && rc == PW_OK; r++) {
		/* A name, its NUL, its cores, unless another build sent it. */
		if (lens[r] <= sizeof mine) {
			pw_error_set(err, "rank %d sent %zu bytes for its "
			    "host and cores, not a name and a CPU set of %zu "
			    "(another build of pipewright?)", r, lens[r],
			    sizeof mine);
			rc = PW_ERR_RUNTIME;
			break;
		}
		names[r] = lens[r] - sizeof mine;
		all[r][names[r] - 1] = '\0';
	}
	for (r = 0; r < e->net->size && rc == PW_OK; r++) {
		for (q = 0; q < r && strcmp(all[q], all[r]) != 0; q++)
			continue;
		if (q < r)
			continue;
		if (r == 0)
			e->host = pw_xstrdup(all[r]);
		else {
			char *joined = pw_xasprintf("%s,%s", e->host, all[r]);

			free(e->host);
			e->host = joined;
		}
		/* The CPU backend's devices compute on the cores; the CUDA
		 * backend's on GPUs (pw_engine_rank_gpus says when those
		 * are shared). */
		if (e->opts->backend == PW_RT_CPU)
			pw_engine_host_shared(e, all, names, e->net->size, r);
	}
	free(names);
out:
	pw_engine_free_gathered(e, all, lens);
	return rc;
}
