/*
 * engine.h - the engine's inside, shared by its files: engine.c (names,
 * options, setting up, the iterations, the measured run, pw_launch),
 * engine_ops.c (stops, marks, hand-offs, the ops, the workers),
 * engine_prep.c (the checks before a run, the memory order) and
 * engine_mpi.c (what the ranks share and send rank 0).  Nothing outside
 * them includes it.
 */
#ifndef PW_ENGINE_H
#define PW_ENGINE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "rt_int.h"

/* ------------------------------------------------------------------ */
/* The run's state                                                     */

/* What one measured op of one iteration keeps: start, end, arrive (in
 * that order, at pw_engine_rec). */
enum { PW_ENGINE_START, PW_ENGINE_END, PW_ENGINE_ARRIVE, PW_ENGINE_REC };
#define PW_ENGINE_REC_BYTES	(PW_ENGINE_REC * sizeof(double))

struct pw_engine;

struct pw_engine_worker {
	struct pw_engine *e;
	int	device;
	int	channel;	/* -1: the device's compute worker */
	int	nops;
	struct pw_op *ops;
	pthread_t thread;
	bool	running;
};

struct pw_engine_dev {
	bool	here;		/* run by this process */
	void	*ctx;		/* the backend's, when opened */
	struct pw_rt_arena *arena;
	/* Hand-off buffers not in use (the compute worker's alone). */
	int	npool, cappool;
	float	**pool;
};

struct pw_engine {
	const struct pw_problem *p;
	const struct pw_schedule *sched;
	const struct pw_workload *work;
	const struct pw_rt_opts *opts;
	const struct pw_rt_backend_ops *backend;
	/* The CUDA backend's module when it runs (rt_int.h); a field in
	 * every build, as engine.h's users do not all see config.h. */
	const struct pw_rt_cuda_module *cuda;
	struct pw_rt_net *net;
	struct pw_where *where;
	struct pw_timing *timing;
	size_t	io;			/* floats per hand-off */
	int	m;
	struct pw_engine_dev *dev;	/* [devices] */
	struct pw_rt_stage **stage;	/* [nstages]: NULL for those elsewhere */
	struct pw_rt_saved **saved;	/* [nstages * m] */
	float	**fwd, **bwd;		/* [nstages * m]: same-device hand-offs */
	long	*ticket;		/* [universe]: memory event, -1 none */
	double	*tbytes;		/* [universe]: its bytes */
	int	*started, *ended;	/* [universe]: iteration + 1 */
	size_t	nops;
	struct pw_timed_op *timed;	/* the simulated ops, by start */
	double	*predicted;		/* [devices]: each one's simulated peak */
	size_t	*slot;			/* [universe]: index in timed */
	double	*rec;			/* [iterations][nops][3]: start, end, arrive */
	int	total;			/* warm-up plus measured */
	bool	has_fail;
	int	fail_device;
	struct pw_op fail_op;
	int	nworkers;
	struct pw_engine_worker *workers;

	pthread_mutex_t lock;
	pthread_cond_t changed;		/* go, done, quit, stop */
	/* An op started or ended: told only to the workers waiting for one
	 * (pw_engine_await), so that the many marks of a run wake nobody
	 * else, on a machine with fewer cores than workers. */
	pthread_cond_t marked;
	int	awaiting;
	int	go;			/* iterations started */
	int	iter;			/* the one running */
	int	done;			/* workers through it */
	bool	quit;
	double	t0;			/* its start, pw_now */
	double	span;			/* its latest op end, from t0 */
	double	loss;			/* its summed loss */
	char	*host;		/* the hosts: "a,b" for several */
	/* Rank 0's line saying how the run is an emulation (devices
	 * sharing GPUs or cores, pw_engine_hosts); empty when it is none. */
	char	emulation[512];
	atomic_bool stop;
	int	rc;			/* the first error */
	struct pw_error err;
	bool	originated;		/* it began here (pw_rt_result) */
	bool	own_cancel;		/* it was this rank's cancel */
};

/* ------------------------------------------------------------------ */
/* engine_ops.c                                                       */

/* The device OP runs on; whether the schedule has OP. */
int	pw_engine_device(const struct pw_engine *e, struct pw_op op);
bool	pw_engine_has(const struct pw_engine *e, struct pw_op op);

/* The record of the op in SLOT in measured iteration K: PW_ENGINE_REC
 * doubles, E's. */
double	*pw_engine_rec(const struct pw_engine *e, int k, size_t slot);

/* Records the first error and stops every wait.  Later errors (mostly
 * "stopped" from the waits the first one ended) are dropped.  Whether
 * the first began here (ORIGINAL: not a wait that a stop ended; a
 * cancel aside, which every rank sees) goes to pw_rt_result.originated,
 * and whether it was this rank's own cancel to pw_rt_result.own_cancel,
 * so that under MPI the program has the rank where an error starts say
 * it and end the job, and the others end without a word: the job's one
 * line.  E's net is open (a run is under way). */
void	pw_engine_stop(struct pw_engine *e, int rc, const struct pw_error *err,
	    bool original);

/* Gives hand-off buffer B (NULL for none) back to device D's pool. */
void	pw_engine_unbuf(struct pw_engine *e, int d, float *b);

/* A worker's thread (ARG its struct pw_engine_worker): each iteration
 * the calling thread starts, until told to quit. */
void	*pw_engine_worker_main(void *arg);

/* ------------------------------------------------------------------ */
/* engine_prep.c                                                      */

/* Refuses options out of range: a backend or transport unknown or not
 * built, iterations or warm-up beyond PW_MAX_ITERATIONS. */
int	pw_engine_check_opts(const struct pw_rt_opts *o, struct pw_error *err);

/* Simulates and checks the schedule: a malformed or deadlocking one, a
 * broken rule or a predicted peak above a limit is refused. */
int	pw_engine_check_schedule(struct pw_engine *e, struct pw_error *err);

/* Numbers every device's memory events (e->ticket, e->tbytes). */
void	pw_engine_number_events(struct pw_engine *e);

/* Reads opts.fail_at ("DEVICE:OP") into E, refusing a value that names
 * no op of that device's schedule. */
int	pw_engine_parse_fail(struct pw_engine *e, struct pw_error *err);

/* ------------------------------------------------------------------ */
/* engine_mpi.c                                                       */

/* Which hosts the ranks run on, for the measured run: E->host on rank 0,
 * each name once, in rank order. */
int	pw_engine_hosts(struct pw_engine *e, struct pw_error *err);

/* The measured ops this process ran, as doubles: per op its slot, then
 * start, end and arrive of every measured iteration; first the peak of
 * its device(s) and its gradient error.  Returns an array the caller
 * frees, *LEN its bytes. */
double	*pw_engine_pack(const struct pw_engine *e, double grad_error,
	    size_t *len);

/* Rank 0 sends what it checked (or an empty message when it refused, so
 * that the others end too); the other ranks read it into *PROBLEM,
 * *SCHED and *WORK, theirs to free. */
int	pw_engine_share(struct pw_rt_net *net, bool refused,
	    const struct pw_problem *p, const struct pw_schedule *sched, const struct pw_timing *timing,
	    const struct pw_workload *work, struct pw_problem **op,
	    struct pw_schedule **osched, struct pw_workload *owork,
	    struct pw_error *err);

/* Reads what pw_engine_pack wrote (of another rank) into E's records,
 * PEAK and *GRAD_ERROR (the largest). */
int	pw_engine_unpack(struct pw_engine *e, const char *bytes, size_t len,
	    double *peak, double *grad_error, struct pw_error *err);

/* ------------------------------------------------------------------ */
/* engine.c                                                           */

/* Frees what a gather returned on rank 0 (ALL[size], LENS). */
void	pw_engine_free_gathered(const struct pw_engine *e, char **all,
	    size_t *lens);

#endif /* PW_ENGINE_H */
