/*
 * mpi.c - the runtime under MPI: one process per pipeline device (rank d
 * runs device d), started by mpirun or srun.
 *
 * Every call that waits is a nonblocking MPI call polled with MPI_Test
 * and a short sleep, so that no rank is ever left inside a blocking MPI
 * call: a stop (this rank's fault or cancel, or the stop notice another
 * rank's stop sends to every rank) ends a receive within a millisecond.
 * A send copies the tensor and returns at once, as the local transport
 * does.  The collectives still complete after a stop, so the ranks can
 * gather what each saw.  Several threads of a rank use the net (the
 * device's compute and copy workers, the launching thread), so every MPI
 * call here is made under one lock: MPI_THREAD_SERIALIZED is all the
 * runtime asks of the library.
 *
 * A hand-off is one message of an 8-byte header (the full 64-bit tag)
 * followed by the floats, described by a struct datatype (the receiver
 * takes them straight into its buffer).  Its MPI tag is the runtime's
 * tag when that is at most MPI_TAG_UB, else the tag mixed and folded
 * below MPI_TAG_UB; the receiver checks the header, so two tags that fold
 * alike in flight between the same two ranks are an error naming both,
 * never a wrong tensor.
 *
 * Without HAVE_MPI (configure found no Open MPI) the same functions say
 * so in one line.
 */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rt_int.h"

int
pw_rt_launcher_rank(void)
{
	static const char *const vars[] = {
		"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"
	};
	const char *s;
	char *end;
	long r;
	size_t i;

	for (i = 0; i < sizeof vars / sizeof vars[0]; i++) {
		if ((s = getenv(vars[i])) == NULL)
			continue;
		r = strtol(s, &end, 10);
		if (end != s && *end == '\0' && r >= 0 && r < INT_MAX)
			return (int)r;
	}
	return -1;
}

#ifdef HAVE_MPI

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include <mpi.h>

/*
 * Nanoseconds between two polls of a pending request.  A message that has
 * arrived, and a stop notice, wait up to one nap before the rank sees
 * them, so the nap is what a hand-off adds to an op of milliseconds and
 * what the millisecond a stop is promised above must cover.  Linux lets
 * a normal thread's nanosleep end up to 50 us late (its default timer
 * slack), so a shorter nap would hardly be sooner, only wake the rank
 * more often; 50 us, at most 100 with the slack, leaves the promise ten
 * naps for the lock and the scheduler of a loaded machine.
 */
#define PW_MPI_POLL_NS	50000L

struct pw_mpi {
	pthread_mutex_t lock;	/* every MPI call of the net */
	MPI_Comm data;		/* hand-offs and collectives */
	MPI_Comm ctrl;		/* stop notices */
	int	rank, size;
	int	tag_ub;
	atomic_int stopped;	/* stop called here, or a notice came */
	atomic_int notified;	/* this rank told the others */
	int	notice;		/* what ctrl_req receives into */
	MPI_Request ctrl_req;
	bool	ctrl_done;
	MPI_Request *notes;	/* [size] this rank's stop notices */
	struct pw_mpi_out *outs; /* sends MPI has not finished */
	/* Rank 0's clock less this rank's (pw_now), seconds: 0 on rank
	 * 0's host, whose CLOCK_MONOTONIC every process there shares;
	 * estimated from round trips to rank 0 elsewhere. */
	double	offset;
};

/* Round trips to rank 0 that estimate a remote rank's clock offset: the
 * shortest one's midpoint is taken. */
#define PW_MPI_CLOCK_ROUNDS	16

/* A send in flight: its own copy of the header and the floats, kept
 * until MPI is done with it, so that a send never waits for its
 * receiver (the local transport's semantics, which schedules rely on:
 * two devices may hand each other a tensor at once). */
struct pw_mpi_out {
	struct pw_mpi_out *next;
	MPI_Request req;
	uint64_t *mem;		/* the header, then the floats */
};

/* Whether pw_rt_mpi_start initialized MPI (and pw_rt_mpi_stop has not
 * finalized it yet). */
static bool pw_mpi_started;

bool
pw_rt_mpi_built(void)
{
	return true;
}

/* Sets ERR to one line naming CALL, RANK and MPI's words for CODE;
 * returns PW_ERR_RUNTIME. */
static int
pw_mpi_fail(struct pw_error *err, const char *call, int rank, int code)
{
	char	words[MPI_MAX_ERROR_STRING + 1];
	int	len = 0;

	if (MPI_Error_string(code, words, &len) != MPI_SUCCESS)
		snprintf(words, sizeof words, "MPI error %d", code);
	else
		words[len] = '\0';
	pw_error_set(err, "%s on rank %d: %s", call, rank, words);
	return PW_ERR_RUNTIME;
}

static const char *
pw_mpi_level_name(int level)
{
	switch (level) {
	case MPI_THREAD_SINGLE:		return "MPI_THREAD_SINGLE";
	case MPI_THREAD_FUNNELED:	return "MPI_THREAD_FUNNELED";
	case MPI_THREAD_SERIALIZED:	return "MPI_THREAD_SERIALIZED";
	case MPI_THREAD_MULTIPLE:	return "MPI_THREAD_MULTIPLE";
	}
	return "an unknown thread level";
}

/* Whether a launcher started this process: mpirun (Open MPI), a PMI or
 * PMIx launcher (srun, hydra). */
static bool
pw_mpi_launched(void)
{
	static const char *const vars[] = {
		"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "SLURM_NTASKS"
	};
	size_t	i;

	for (i = 0; i < sizeof vars / sizeof vars[0]; i++)
		if (getenv(vars[i]) != NULL)
			return true;
	return false;
}

int
pw_rt_mpi_start(int *rank, int *size, struct pw_error *err)
{
	int	provided, rc;

	if (pw_mpi_started) {
		pw_error_set(err, "MPI is already started in this process");
		return PW_ERR_INTERNAL;
	}
	if (!pw_mpi_launched()) {
		pw_error_set(err, "transport mpi needs a launcher: run it under "
		    "mpirun -np P or srun -n P (docs/runtime.md, \"MPI\")");
		return PW_ERR_INPUT;
	}
	rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided);
	if (rc != MPI_SUCCESS)
		return pw_mpi_fail(err, "MPI_Init_thread", -1, rc);
	pw_mpi_started = true;
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	if ((rc = MPI_Comm_rank(MPI_COMM_WORLD, rank)) != MPI_SUCCESS ||
	    (rc = MPI_Comm_size(MPI_COMM_WORLD, size)) != MPI_SUCCESS) {
		pw_rt_mpi_stop();
		return pw_mpi_fail(err, "MPI_Comm_rank/size", -1, rc);
	}
	if (provided < MPI_THREAD_SERIALIZED) {
		pw_error_set(err, "MPI provides %s on rank %d; the runtime "
		    "needs MPI_THREAD_SERIALIZED", pw_mpi_level_name(provided),
		    *rank);
		pw_rt_mpi_stop();
		return PW_ERR_RUNTIME;
	}
	return PW_OK;
}

void
pw_rt_mpi_stop(void)
{
	if (!pw_mpi_started)
		return;
	MPI_Finalize();
	pw_mpi_started = false;
}

void
pw_rt_mpi_abort(int code)
{
	if (pw_mpi_started)
		MPI_Abort(MPI_COMM_WORLD, code);
	exit(code);
}

/* The MPI tag for TAG: itself when MPI can carry it, else its bits mixed
 * (splitmix64's finalizer) and folded below the bound. */
static int
pw_mpi_tag(const struct pw_mpi *m, uint64_t tag)
{
	if (tag <= (uint64_t)m->tag_ub)
		return (int)tag;
	tag ^= tag >> 30;
	tag *= 0xbf58476d1ce4e5b9ULL;
	tag ^= tag >> 27;
	tag *= 0x94d049bb133111ebULL;
	tag ^= tag >> 31;
	return (int)(tag % ((uint64_t)m->tag_ub + 1));
}

/* Sets m->stopped when another rank's stop notice has come (M locked). */
static void
pw_mpi_notice_poll(struct pw_mpi *m)
{
	int	done = 0;

	if (m->ctrl_done)
		return;
	if (MPI_Test(&m->ctrl_req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
	    done) {
		m->ctrl_done = true;
		atomic_store(&m->stopped, 1);
	}
}

/*
 * Polls REQ (started by CALL) until it completes, into *ST when not NULL.
 * A receive (CANCELLABLE) is cancelled once the net is stopped, and
 * PW_ERR_CANCELLED returned.  A collective completes once every rank is
 * in it, stopped or not, so that the ranks can still gather what each
 * one saw after a stop; a rank that died never joins, but then the
 * launcher ends the job.
 */
static int
pw_mpi_wait(struct pw_mpi *m, MPI_Request *req, bool cancellable,
    const char *call, MPI_Status *st, struct pw_error *err)
{
	struct timespec nap = { 0, PW_MPI_POLL_NS };
	MPI_Status ignored;
	int	done = 0, rc;
	bool	cancel;

	if (st == NULL)
		st = &ignored;
	for (;;) {
		cancel = false;
		pthread_mutex_lock(&m->lock);
		rc = MPI_Test(req, &done, st);
		if (rc == MPI_SUCCESS && !done) {
			pw_mpi_notice_poll(m);
			cancel = cancellable && atomic_load(&m->stopped);
		}
		if (cancel) {
			MPI_Cancel(req);
			MPI_Wait(req, MPI_STATUS_IGNORE);
		}
		pthread_mutex_unlock(&m->lock);
		if (rc != MPI_SUCCESS)
			return pw_mpi_fail(err, call, m->rank, rc);
		if (done)
			return PW_OK;
		if (cancel) {
			pw_error_set(err, "%s on rank %d: stopped", call, m->rank);
			return PW_ERR_CANCELLED;
		}
		nanosleep(&nap, NULL);
	}
}

/* After the call that started REQ returned RC (on M's lock): its error,
 * or the wait for REQ. */
static int
pw_mpi_started_wait(struct pw_mpi *m, int rc, MPI_Request *req,
    bool cancellable, const char *call, MPI_Status *st, struct pw_error *err)
{
	if (rc != MPI_SUCCESS)
		return pw_mpi_fail(err, call, m->rank, rc);
	return pw_mpi_wait(m, req, cancellable, call, st, err);
}

/*
 * The datatype of one hand-off in place: *HDR then N floats at BUF,
 * absolute addresses (used from MPI_BOTTOM).  Returns PW_OK with *TYPE
 * committed (the caller frees it).
 */
static int
pw_mpi_handoff_type(struct pw_mpi *m, const uint64_t *hdr, const float *buf,
    size_t n, MPI_Datatype *type, struct pw_error *err)
{
	int	lens[2] = { 1, (int)n };
	MPI_Aint at[2];
	MPI_Datatype types[2] = { MPI_UINT64_T, MPI_FLOAT };
	int	rc;

	if (n > INT_MAX) {
		pw_error_set(err, "a hand-off of %zu floats on rank %d is more "
		    "than one MPI message carries", n, m->rank);
		return PW_ERR_RUNTIME;
	}
	pthread_mutex_lock(&m->lock);
	if ((rc = MPI_Get_address(hdr, &at[0])) == MPI_SUCCESS &&
	    (rc = MPI_Get_address(n > 0 ? buf : (const float *)hdr, &at[1])) ==
	    MPI_SUCCESS &&
	    (rc = MPI_Type_create_struct(n > 0 ? 2 : 1, lens, at, types, type)) ==
	    MPI_SUCCESS &&
	    (rc = MPI_Type_commit(type)) != MPI_SUCCESS)
		MPI_Type_free(type);
	pthread_mutex_unlock(&m->lock);
	return rc == MPI_SUCCESS ? PW_OK :
	    pw_mpi_fail(err, "MPI_Type_create_struct", m->rank, rc);
}

/*
 * Errors unless this rank may make CALL for a hand-off from device FROM
 * to TO, SELF being this rank's end (rank d runs device d) and the net
 * not stopped.
 */
static int
pw_mpi_ends(const struct pw_mpi *m, const char *call, int from, int to,
    int self, struct pw_error *err)
{
	int	peer = self == from ? to : from;

	if (atomic_load(&m->stopped)) {
		pw_error_set(err, "%s on rank %d: stopped", call, m->rank);
		return PW_ERR_CANCELLED;
	}
	if (self == m->rank && peer >= 0 && peer < m->size && peer != self)
		return PW_OK;
	pw_error_set(err, "%s of a hand-off from device %d to device %d on rank "
	    "%d of %d: under MPI rank d runs device d", call, from, to, m->rank,
	    m->size);
	return PW_ERR_INTERNAL;
}

/* Frees the sends MPI has finished (M locked). */
static void
pw_mpi_outs_reap(struct pw_mpi *m)
{
	struct pw_mpi_out **pp = &m->outs, *o;
	int	done;

	while ((o = *pp) != NULL) {
		done = 0;
		if (MPI_Test(&o->req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS ||
		    !done) {
			pp = &o->next;
			continue;
		}
		*pp = o->next;
		free(o->mem);
		free(o);
	}
}

static int
pw_mpi_send(struct pw_rt_net *net, int from, int to, uint64_t tag,
    const float *buf, size_t n, struct pw_error *err)
{
	struct pw_mpi *m = net->ctx;
	struct pw_mpi_out *o;
	MPI_Datatype type;
	int	rc;

	if ((rc = pw_mpi_ends(m, "MPI_Isend", from, to, from, err)) != PW_OK)
		return rc;
	o = pw_xcalloc(1, sizeof *o);
	o->mem = pw_xmalloc(sizeof *o->mem + n * sizeof *buf);
	o->mem[0] = tag;
	if (n > 0)
		memcpy(o->mem + 1, buf, n * sizeof *buf);
	if ((rc = pw_mpi_handoff_type(m, o->mem, (const float *)(o->mem + 1), n,
	    &type, err)) != PW_OK) {
		free(o->mem);
		free(o);
		return rc;
	}
	pthread_mutex_lock(&m->lock);
	pw_mpi_outs_reap(m);
	pw_mpi_notice_poll(m);
	rc = MPI_Isend(MPI_BOTTOM, 1, type, to, pw_mpi_tag(m, tag), m->data,
	    &o->req);
	MPI_Type_free(&type);
	if (rc == MPI_SUCCESS) {
		o->next = m->outs;
		m->outs = o;
	}
	pthread_mutex_unlock(&m->lock);
	if (rc == MPI_SUCCESS)
		return PW_OK;
	free(o->mem);
	free(o);
	return pw_mpi_fail(err, "MPI_Isend", m->rank, rc);
}

/* Waits for the hand-off into BUF itself: no copy on this side. */
static int
pw_mpi_recv(struct pw_rt_net *net, int from, int to, uint64_t tag,
    float *buf, size_t n, struct pw_error *err)
{
	struct pw_mpi *m = net->ctx;
	MPI_Datatype type;
	MPI_Request req;
	MPI_Status st;
	uint64_t hdr = 0;
	int	rc, count = 0;

	if ((rc = pw_mpi_ends(m, "MPI_Irecv", from, to, to, err)) != PW_OK ||
	    (rc = pw_mpi_handoff_type(m, &hdr, buf, n, &type, err)) != PW_OK)
		return rc;
	pthread_mutex_lock(&m->lock);
	rc = MPI_Irecv(MPI_BOTTOM, 1, type, from, pw_mpi_tag(m, tag), m->data,
	    &req);
	pthread_mutex_unlock(&m->lock);
	rc = pw_mpi_started_wait(m, rc, &req, true, "MPI_Irecv", &st, err);
	pthread_mutex_lock(&m->lock);
	if (rc == PW_OK)
		MPI_Get_count(&st, type, &count);
	MPI_Type_free(&type);
	pthread_mutex_unlock(&m->lock);
	if (rc != PW_OK)
		return rc;
	if (count != 1 || hdr != tag) {
		pw_error_set(err, "rank %d waited for tag %#llx (%zu floats) from "
		    "rank %d and got tag %#llx%s: two tags fold to MPI tag %d",
		    m->rank, (unsigned long long)tag, n, from,
		    (unsigned long long)hdr, count != 1 ? " of another size" : "",
		    pw_mpi_tag(m, tag));
		return PW_ERR_RUNTIME;
	}
	return PW_OK;
}

/* One double to (SEND) or from PEER on the control communicator's clock
 * tag (M unlocked). */
static int
pw_mpi_clock_msg(struct pw_mpi *m, double *x, int peer, bool send,
    struct pw_error *err)
{
	MPI_Request req;
	int	rc;

	pthread_mutex_lock(&m->lock);
	rc = send ? MPI_Isend(x, 1, MPI_DOUBLE, peer, 1, m->ctrl, &req) :
	    MPI_Irecv(x, 1, MPI_DOUBLE, peer, 1, m->ctrl, &req);
	pthread_mutex_unlock(&m->lock);
	return pw_mpi_started_wait(m, rc, &req, false, send ? "MPI_Isend" :
	    "MPI_Irecv", NULL, err);
}

/*
 * Sets m->offset: every rank's round trips to rank 0, one rank at a time
 * (the estimate of rank 0's clock at the midpoint of the shortest), used
 * only by a rank on another host than rank 0's.
 */
static int
pw_mpi_clock(struct pw_mpi *m, struct pw_error *err)
{
	char	mine[MPI_MAX_PROCESSOR_NAME] = "", zero[MPI_MAX_PROCESSOR_NAME];
	double	a, b, c, best = INFINITY, offset = 0;
	MPI_Request req;
	int	len, r, k, rc;

	if ((rc = MPI_Get_processor_name(mine, &len)) != MPI_SUCCESS)
		return pw_mpi_fail(err, "MPI_Get_processor_name", m->rank, rc);
	memcpy(zero, mine, sizeof zero);
	pthread_mutex_lock(&m->lock);
	rc = MPI_Ibcast(zero, sizeof zero, MPI_CHAR, 0, m->ctrl, &req);
	pthread_mutex_unlock(&m->lock);
	if ((rc = pw_mpi_started_wait(m, rc, &req, false, "MPI_Ibcast", NULL,
	    err)) != PW_OK)
		return rc;
	for (r = 1; r < m->size; r++)
		for (k = 0; k < PW_MPI_CLOCK_ROUNDS; k++) {
			if (m->rank == 0) {
				if ((rc = pw_mpi_clock_msg(m, &a, r, false, err)) !=
				    PW_OK)
					return rc;
				b = pw_now();
				if ((rc = pw_mpi_clock_msg(m, &b, r, true, err)) !=
				    PW_OK)
					return rc;
			} else if (m->rank == r) {
				a = pw_now();
				if ((rc = pw_mpi_clock_msg(m, &a, 0, true, err)) !=
				    PW_OK ||
				    (rc = pw_mpi_clock_msg(m, &b, 0, false, err)) !=
				    PW_OK)
					return rc;
				c = pw_now();
				if (c - a < best) {
					best = c - a;
					offset = b - (a + c) / 2;
				}
			}
		}
	m->offset = strcmp(mine, zero) == 0 ? 0 : offset;
	return PW_OK;
}

/* Rank 0's *T0 in this rank's clock, on every rank. */
static int
pw_mpi_common(struct pw_rt_net *net, double *t0, struct pw_error *err)
{
	struct pw_mpi *m = net->ctx;
	MPI_Request req;
	int	rc;

	pthread_mutex_lock(&m->lock);
	rc = MPI_Ibcast(t0, 1, MPI_DOUBLE, 0, m->data, &req);
	pthread_mutex_unlock(&m->lock);
	if ((rc = pw_mpi_started_wait(m, rc, &req, false, "MPI_Ibcast", NULL,
	    err)) == PW_OK)
		*t0 -= m->offset;
	return rc;
}

/* Tells every other rank to stop, once; their waits then return
 * PW_ERR_CANCELLED. */
static void
pw_mpi_stop(struct pw_rt_net *net)
{
	struct pw_mpi *m = net->ctx;
	int	r;

	atomic_store(&m->stopped, 1);
	if (atomic_exchange(&m->notified, 1))
		return;
	pthread_mutex_lock(&m->lock);
	for (r = 0; r < m->size; r++)
		if (r != m->rank)
			MPI_Isend(&m->rank, 1, MPI_INT, r, 0, m->ctrl, &m->notes[r]);
	pthread_mutex_unlock(&m->lock);
}

static int
pw_mpi_bcast(struct pw_rt_net *net, char **buf, size_t *len,
    struct pw_error *err)
{
	struct pw_mpi *m = net->ctx;
	MPI_Request req;
	uint64_t n = m->rank == 0 ? *len : 0;
	char	size[32];
	int	rc;

	pthread_mutex_lock(&m->lock);
	rc = MPI_Ibcast(&n, 1, MPI_UINT64_T, 0, m->data, &req);
	pthread_mutex_unlock(&m->lock);
	if ((rc = pw_mpi_started_wait(m, rc, &req, false, "MPI_Ibcast", NULL,
	    err)) != PW_OK)
		return rc;
	if (n > INT_MAX) {
		pw_error_set(err, "a broadcast of %s on rank %d is more than "
		    "one MPI message carries", pw_fmt_bytes(size, sizeof size,
		    (double)n), m->rank);
		return PW_ERR_RUNTIME;
	}
	if (m->rank != 0) {
		*buf = pw_xmalloc(n + 1);
		(*buf)[n] = '\0';
		*len = n;
	}
	pthread_mutex_lock(&m->lock);
	rc = MPI_Ibcast(*buf, (int)n, MPI_BYTE, 0, m->data, &req);
	pthread_mutex_unlock(&m->lock);
	rc = pw_mpi_started_wait(m, rc, &req, false, "MPI_Ibcast", NULL, err);
	if (rc != PW_OK && m->rank != 0) {
		free(*buf);
		*buf = NULL;
	}
	return rc;
}

static int
pw_mpi_gather(struct pw_rt_net *net, const char *buf, size_t len,
    char ***all, size_t **lens, struct pw_error *err)
{
	struct pw_mpi *m = net->ctx;
	MPI_Request req;
	uint64_t n = len, *ns = NULL;
	int	*counts = NULL, *displs = NULL, r, rc;
	char	*flat = NULL, size[32];
	size_t	total = 0;

	if (m->rank == 0)
		ns = pw_xcalloc(m->size, sizeof *ns);
	if (len > INT_MAX) {
		pw_error_set(err, "a gather of %s from rank %d is more than "
		    "one MPI message carries", pw_fmt_bytes(size, sizeof size,
		    (double)len), m->rank);
		rc = PW_ERR_RUNTIME;
		goto out;
	}
	pthread_mutex_lock(&m->lock);
	rc = MPI_Igather(&n, 1, MPI_UINT64_T, ns, 1, MPI_UINT64_T, 0, m->data,
	    &req);
	pthread_mutex_unlock(&m->lock);
	if ((rc = pw_mpi_started_wait(m, rc, &req, false, "MPI_Igather", NULL,
	    err)) != PW_OK)
		goto out;
	if (m->rank == 0) {
		counts = pw_xcalloc(m->size, sizeof *counts);
		displs = pw_xcalloc(m->size, sizeof *displs);
		for (r = 0; r < m->size; r++) {
			if (ns[r] > (uint64_t)INT_MAX - total) {
				pw_error_set(err, "a gather of more than %d bytes "
				    "on rank 0 is more than MPI carries", INT_MAX);
				rc = PW_ERR_RUNTIME;
				goto out;
			}
			counts[r] = (int)ns[r];
			displs[r] = (int)total;
			total += ns[r];
		}
		flat = pw_xmalloc(total + 1);
	}
	pthread_mutex_lock(&m->lock);
	rc = MPI_Igatherv(buf, (int)len, MPI_BYTE, flat, counts, displs, MPI_BYTE,
	    0, m->data, &req);
	pthread_mutex_unlock(&m->lock);
	rc = pw_mpi_started_wait(m, rc, &req, false, "MPI_Igatherv", NULL, err);
	if (rc != PW_OK || m->rank != 0)
		goto out;
	*all = pw_xcalloc(m->size, sizeof **all);
	*lens = pw_xcalloc(m->size, sizeof **lens);
	for (r = 0; r < m->size; r++) {
		(*all)[r] = pw_xmalloc(ns[r] + 1);
		memcpy((*all)[r], flat + displs[r], ns[r]);
		(*all)[r][ns[r]] = '\0';
		(*lens)[r] = ns[r];
	}
out:
	free(flat);
	free(displs);
	free(counts);
	free(ns);
	return rc;
}

static int
pw_mpi_barrier(struct pw_rt_net *net, struct pw_error *err)
{
	struct pw_mpi *m = net->ctx;
	MPI_Request req;
	int	rc;

	pthread_mutex_lock(&m->lock);
	rc = MPI_Ibarrier(m->data, &req);
	pthread_mutex_unlock(&m->lock);
	return pw_mpi_started_wait(m, rc, &req, false, "MPI_Ibarrier", NULL, err);
}

/* Waits until MPI is done with every send, or the net is stopped. */
static void
pw_mpi_outs_drain(struct pw_mpi *m)
{
	struct timespec nap = { 0, PW_MPI_POLL_NS };
	bool	more;

	for (;;) {
		pthread_mutex_lock(&m->lock);
		pw_mpi_outs_reap(m);
		pw_mpi_notice_poll(m);
		more = m->outs != NULL && !atomic_load(&m->stopped);
		pthread_mutex_unlock(&m->lock);
		if (!more)
			return;
		nanosleep(&nap, NULL);
	}
}

/*
 * Frees the net once its sends are done.  After a stop, a send that its
 * peer never took keeps its copy to the process's end (MPI may still
 * read it), and a pending collective is left to MPI_Finalize.
 */
static void
pw_mpi_close(struct pw_rt_net *net)
{
	struct pw_mpi *m;
	struct pw_mpi_out *o;
	int	r;

	if (net == NULL)
		return;
	m = net->ctx;
	pw_mpi_outs_drain(m);
	pthread_mutex_lock(&m->lock);
	while ((o = m->outs) != NULL) {
		m->outs = o->next;
		MPI_Request_free(&o->req);
		free(o);
	}
	if (!m->ctrl_done) {
		MPI_Cancel(&m->ctrl_req);
		MPI_Wait(&m->ctrl_req, MPI_STATUS_IGNORE);
	}
	for (r = 0; r < m->size; r++)
		if (m->notes[r] != MPI_REQUEST_NULL)
			MPI_Request_free(&m->notes[r]);
	MPI_Comm_free(&m->ctrl);
	MPI_Comm_free(&m->data);
	pthread_mutex_unlock(&m->lock);
	pthread_mutex_destroy(&m->lock);
	free(m->notes);
	free(m);
	free(net);
}

int
pw_rt_net_mpi(struct pw_rt_net **out, struct pw_error *err)
{
	struct pw_rt_net *net;
	struct pw_mpi *m;
	const char *call = "MPI_Comm_get_attr";
	int	*ub = NULL, flag = 0, rc, r;

	*out = NULL;
	if (!pw_mpi_started) {
		pw_error_set(err, "the MPI transport needs pw_rt_mpi_start first");
		return PW_ERR_INTERNAL;
	}
	m = pw_xcalloc(1, sizeof *m);
	pthread_mutex_init(&m->lock, NULL);
	m->data = m->ctrl = MPI_COMM_NULL;
	m->ctrl_req = MPI_REQUEST_NULL;
	MPI_Comm_rank(MPI_COMM_WORLD, &m->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &m->size);
	if ((rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag)) !=
	    MPI_SUCCESS)
		goto fail_mpi;
	/* The standard guarantees 32767. */
	m->tag_ub = flag && ub != NULL ? *ub : 32767;
	call = "MPI_Comm_dup";
	if ((rc = MPI_Comm_dup(MPI_COMM_WORLD, &m->data)) != MPI_SUCCESS ||
	    (rc = MPI_Comm_dup(MPI_COMM_WORLD, &m->ctrl)) != MPI_SUCCESS)
		goto fail_mpi;
	call = "MPI_Irecv";
	if ((rc = MPI_Irecv(&m->notice, 1, MPI_INT, MPI_ANY_SOURCE, 0, m->ctrl,
	    &m->ctrl_req)) != MPI_SUCCESS)
		goto fail_mpi;
	if ((rc = pw_mpi_clock(m, err)) != PW_OK)
		goto fail;
	m->notes = pw_xcalloc(m->size, sizeof *m->notes);
	for (r = 0; r < m->size; r++)
		m->notes[r] = MPI_REQUEST_NULL;
	net = pw_xcalloc(1, sizeof *net);
	net->kind = PW_RT_MPI;
	net->rank = m->rank;
	net->size = m->size;
	net->ctx = m;
	net->send = pw_mpi_send;
	net->recv = pw_mpi_recv;
	net->stop = pw_mpi_stop;
	net->bcast = pw_mpi_bcast;
	net->gather = pw_mpi_gather;
	net->barrier = pw_mpi_barrier;
	net->close = pw_mpi_close;
	net->common = pw_mpi_common;
	*out = net;
	return PW_OK;

fail_mpi:
	rc = pw_mpi_fail(err, call, m->rank, rc);
fail:
	if (m->ctrl_req != MPI_REQUEST_NULL) {
		MPI_Cancel(&m->ctrl_req);
		MPI_Wait(&m->ctrl_req, MPI_STATUS_IGNORE);
	}
	if (m->ctrl != MPI_COMM_NULL)
		MPI_Comm_free(&m->ctrl);
	if (m->data != MPI_COMM_NULL)
		MPI_Comm_free(&m->data);
	pthread_mutex_destroy(&m->lock);
	free(m);
	return rc;
}

#else /* !HAVE_MPI */

#define PW_MPI_NOT_BUILT "not built with MPI (configure found no Open MPI)"

bool
pw_rt_mpi_built(void)
{
	return false;
}

int
pw_rt_mpi_start(int *rank, int *size, struct pw_error *err)
{
	*rank = 0;
	*size = 1;
	pw_error_set(err, "transport mpi: " PW_MPI_NOT_BUILT);
	return PW_ERR_INPUT;
}

void
pw_rt_mpi_stop(void)
{
}

/* One process is every rank there is. */
void
pw_rt_mpi_abort(int code)
{
	exit(code);
}

int
pw_rt_net_mpi(struct pw_rt_net **out, struct pw_error *err)
{
	*out = NULL;
	pw_error_set(err, "transport mpi: " PW_MPI_NOT_BUILT);
	return PW_ERR_INPUT;
}

#endif /* HAVE_MPI */
