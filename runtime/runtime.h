/*
 * runtime.h - runs a schedule for real and learns from what it measured.
 *
 * pw_launch executes a schedule's orders with real tensors: one worker
 * per pipeline device (threads of one process, or one process per device
 * under MPI), each running its compute ops in the schedule's order, a copy
 * worker per device for OFFLOAD and RELOAD, hand-offs between devices as
 * soon as a tensor is ready.  It measures every op, each device's memory
 * (an arena that accounts the bytes docs/model.md counts, at the same
 * instants, so the measured peak is the simulator's), and returns a
 * measured run (struct pw_measured, the core's) that the views, eval and
 * calibration read.  The workload is MLP blocks of GEMMs (no attention),
 * shaped from the problem's model or given; pw_workload_problem is its
 * own problem, whose bytes are what the workload keeps.
 *
 * The runtime stands on the core only; the designer and the program use
 * it.  Backends (the CPU one here, CUDA in runtime/cuda*) plug into one
 * engine behind runtime/rt_int.h.
 */
#ifndef PW_RUNTIME_H
#define PW_RUNTIME_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "pipewright.h"

enum pw_rt_backend {
	PW_RT_CPU,
	PW_RT_CUDA,
	PW_RT_NBACKENDS
};

enum pw_rt_transport {
	PW_RT_LOCAL,		/* one process, a thread per device */
	PW_RT_MPI,		/* one process per device (mpirun, srun) */
	PW_RT_NTRANSPORTS
};

/* "cpu", "cuda"; "local", "mpi". */
const char *pw_rt_backend_name(enum pw_rt_backend);
int	pw_rt_backend_parse(const char *, enum pw_rt_backend *);
const char *pw_rt_transport_name(enum pw_rt_transport);
int	pw_rt_transport_parse(const char *, enum pw_rt_transport *);
/* Whether BACKEND can run here; when not, why in WHY ("this build has no
 * CUDA", the CUDA module did not load, "no GPU visible"). */
bool	pw_rt_backend_available(enum pw_rt_backend, char *why, size_t len);
/* The backend a launch uses when none is named: CUDA when built and a
 * GPU is visible, else the CPU. */
enum pw_rt_backend pw_rt_backend_default(void);
/* Whether the program was built with MPI. */
bool	pw_rt_mpi_built(void);

/* The arithmetic a launch computes in: fp32 throughout, or GEMMs on bf16
 * inputs with fp32 accumulation. */
enum pw_rt_math {
	PW_RT_FP32,
	PW_RT_BF16,
	PW_RT_NMATHS
};

/* The arithmetic of BACKEND when PW_CUDA_MATH is MODE (may be NULL): the
 * CPU's is fp32; the CUDA backend's bf16 unless MODE is "fp32". */
enum pw_rt_math pw_rt_math_of(enum pw_rt_backend, const char *mode);
/* "fp32", "bf16". */
const char *pw_rt_math_name(enum pw_rt_math);
/* The gradient check's bound on the relative errors of a run in MATH
 * (docs/runtime.md): 1e-5 for fp32 (the same terms in another order),
 * 1e-2 for bf16 (8 bits of mantissa); and that bound as the docs write
 * it ("1e-5"). */
double	pw_rt_math_tolerance(enum pw_rt_math);
const char *pw_rt_math_tolerance_text(enum pw_rt_math);

/* ------------------------------------------------------------------ */
/* The workload                                                        */

/* The default shape of a workload for a problem with given stages:
 * small enough that the suite runs every family in seconds. */
#define PW_WORKLOAD_HIDDEN	64
#define PW_WORKLOAD_FFN		256
#define PW_WORKLOAD_TOKENS	32
#define PW_WORKLOAD_LAYERS	1

/* Parses "hidden=H,ffn=F,tokens=T,layers=L" (any subset; the rest from
 * BASE, which may be NULL for the defaults above) into OUT for NSTAGES
 * stages, LAYERS on every stage.  Errors name the key or the value. */
int	pw_workload_parse(const char *spec, const struct pw_workload *base,
	    int nstages, struct pw_workload *out, struct pw_error *);
/* The workload PROBLEM runs on BACKEND: GIVEN when not NULL; else, for a
 * problem built from a model, its origin's shape (layers per stage,
 * hidden and ffn, sequence x micro-batch tokens), scaled down on the CPU
 * so that an op takes milliseconds (OUT->scaled says so); else the
 * defaults.  OUT is the caller's (pw_workload_clear). */
int	pw_workload_for(const struct pw_problem *, const struct pw_workload *given,
	    enum pw_rt_backend, struct pw_workload *out, struct pw_error *);
/* The workload's own problem: PROBLEM's devices, placement, microbatches,
 * times and link, with each stage's act, hold and offload and each
 * device's static bytes what W really keeps (fp32; docs/runtime.md), and
 * every limit LIMIT (INFINITY for none).  Returns a problem the caller
 * owns, or NULL with ERR. */
struct pw_problem *pw_workload_problem(const struct pw_problem *,
	    const struct pw_workload *, double limit, struct pw_error *);
/* One paragraph on FP: the shape, what it leaves out (attention), and
 * whether it was scaled down, from what: the model of FROM's origin (the
 * problem the workload was made for; NULL when not known). */
void	pw_workload_print(FILE *, const struct pw_workload *,
	    const struct pw_problem *from);

/* ------------------------------------------------------------------ */
/* Launching                                                           */

struct pw_rt_progress {
	int	iteration;	/* 1-based, the warm-up's included */
	int	total;		/* warm-up plus measured */
	bool	warmup;		/* this one is not measured */
	double	step;		/* its seconds */
	double	loss;		/* its mean loss */
	/* How the run is an emulation (pw_rt_emulation's line, or under
	 * MPI the ranks sharing a host's cores), NULL when it is none. */
	const char *emulation;
};

struct pw_rt_opts {
	enum pw_rt_backend backend;
	enum pw_rt_transport transport;
	int	iterations;	/* measured; default 5 */
	int	warmup;		/* not measured, before them; default 1 */
	uint64_t seed;		/* weights, inputs, targets; default 1 */
	/* The CUDA backend's GPUs: the first GPUS of those visible; 0 for
	 * every one. */
	int	gpus;
	/* Compute the same K iterations sequentially on one thread and
	 * compare the weight gradients and the loss (pw_rt_result). */
	bool	reference;
	/* PIPEWRIGHT_FAIL_AT's value ("2:B(0,3)"): the worker of that
	 * device fails when it reaches that op; NULL for none.  A testing
	 * aid (docs/runtime.md). */
	const char *fail_at;
	/* Hand tensors between devices through the sequenced transport on
	 * a wire in host memory with NCCL's matching (what a CUDA launch
	 * does over NCCL), not the local transport's mailboxes: the suite's
	 * way to run that path without a GPU (PIPEWRIGHT_WIRE=host; local
	 * transport only). */
	bool	host_wire;
	/* Another thread (or a signal handler) sets *cancel non-zero to stop
	 * every waiting worker within 100 ms, and one running an op when the
	 * op ends; may be NULL. */
	atomic_int *cancel;
	/* Called after every iteration, on the calling thread (rank 0). */
	void	(*progress)(const struct pw_rt_progress *, void *arg);
	void	*progress_arg;
};

void	pw_rt_opts_init(struct pw_rt_opts *);
/* Reads PIPEWRIGHT_WIRE's VALUE (NULL or empty: none) into
 * O->host_wire: "host" is the one wire to ask for; anything else is
 * PW_ERR_INPUT naming the value. */
int	pw_rt_wire_env(const char *value, struct pw_rt_opts *o,
	    struct pw_error *);
/* The processors this process may run on (its affinity: taskset, a
 * cpuset), at least 1. */
int	pw_rt_host_cores(void);
/* Whether a launch with OPTS of DEVICES pipeline devices is an emulation
 * (CUDA, local, fewer GPUs than devices: devices share GPUs as separate
 * streams; CPU, local, fewer cores than devices: the device threads share
 * them); then the line that says so in LINE. */
bool	pw_rt_emulation(const struct pw_rt_opts *, int devices, char *line,
	    size_t len);

struct pw_rt_result {
	struct pw_measured *measured;	/* owned by the result */
	/* Against the sequential computation (opts.reference), else NAN:
	 * the largest over stages of ||g - g_ref|| / ||g_ref|| of the
	 * accumulated weight gradients, and |loss - ref| / |ref| of the
	 * last iteration's loss. */
	double	grad_error;
	double	loss_error;
	/* The arithmetic the run computed in (what bounds those errors). */
	enum pw_rt_math math;
	/* Under MPI, when pw_launch fails: whether the error began on this
	 * rank (its caller says it, then ends every rank with
	 * pw_rt_mpi_abort) or a stop from another rank ended it (its caller
	 * says nothing: the other rank does). */
	bool	originated;
	/* When it fails cancelled: whether this rank's own cancel (OPTS'
	 * flag) stopped it first, not another rank's stop, however soon
	 * the flag was set after (mpirun signals every rank on an abort). */
	bool	own_cancel;
};

/* Runs SCHED on PROBLEM (the workload's own problem, pw_workload_problem)
 * computing WORK, as OPTS say.  Before it starts, the schedule is
 * simulated and checked (pw_check): a broken dependency, pin or limit is
 * refused naming the violation, and a predicted peak above a device's
 * limit names the device.  An error in any worker (out of memory in the
 * arena, a BLAS or transport error, an injected failure, a cancel) stops
 * every worker, and the call returns it in one line naming the device
 * and the op: PW_ERR_INPUT for a refused schedule, PW_ERR_CANCELLED when
 * cancelled, PW_ERR_RUNTIME for a failure during the run.
 *
 * Under MPI (opts.transport PW_RT_MPI, after pw_rt_mpi_start) every rank
 * calls this; rank 0 passes PROBLEM, SCHED and WORK and the others NULL
 * (rank 0 broadcasts them), and only rank 0's OUT gets the measured run
 * (the others' measured is NULL).  OUT is the caller's (pw_rt_result_free). */
int	pw_launch(const struct pw_problem *, const struct pw_schedule *,
	    const struct pw_workload *work, const struct pw_rt_opts *,
	    struct pw_rt_result *out, struct pw_error *);
void	pw_rt_result_free(struct pw_rt_result *);

/* MPI: initializes it (threads: MPI_THREAD_SERIALIZED or better: a
 * rank's workers and its launching thread take turns) and says
 * this process's rank and the world's size; pw_rt_mpi_stop finalizes.
 * PW_ERR_INPUT when not built with MPI or when not started by a
 * launcher. */
int	pw_rt_mpi_start(int *rank, int *size, struct pw_error *);
void	pw_rt_mpi_stop(void);
/* Ends every rank at once after an error on one (MPI_Abort), with CODE. */
void	pw_rt_mpi_abort(int code);
/* The rank a launcher (mpirun, srun, hydra) gave this process, from
 * its environment and before MPI starts; -1 when none did. */
int	pw_rt_launcher_rank(void);

/* ------------------------------------------------------------------ */
/* Calibration                                                         */

/* How the link's latency was fitted: apart from the bandwidths, or 0
 * with the bandwidths fitted through the origin, and why. */
enum pw_link_fit {
	PW_LINK_FIT_APART,
	PW_LINK_FIT_SAME_BYTES,	/* every transfer moved the same bytes,
				 * which cannot tell latency from bandwidth */
	PW_LINK_FIT_NOISE,	/* the fit apart was noise: a negative
				 * latency, or a time falling with the bytes */
};

/* The fit of a problem's costs to measured runs: each stage's f, b, w
 * and comm (the mean of its samples: least squares of a constant), and
 * the link's latency and bandwidths (least squares of latency + bytes /
 * bandwidth over the transfers, as LINK_FIT says). */
struct pw_calibration {
	int	nstages;
	double	*f, *b, *w, *comm;	/* [nstages] fitted seconds */
	int	*samples;		/* [nstages] op durations fitted */
	double	residual;	/* RMS of (measured - fitted) over every op duration, s */
	double	relative;	/* RMS of (measured - fitted) / fitted */
	bool	has_link;
	enum pw_link_fit link_fit;
	double	d2h, h2d, latency;
	double	link_residual;	/* RMS over the transfers, s */
	int	runs;
};

/* Fits BASE's costs to RUNS[NRUNS] (measured on BASE's stages; each
 * validated against it) and returns in *OUT the calibrated problem (the
 * caller owns it: BASE with the fitted costs) and in FIT the fit (the
 * caller's, pw_calibration_free).  PW_ERR_INPUT when a run does not
 * match BASE or a stage has no sample. */
int	pw_calibrate(const struct pw_problem *base, const struct pw_measured *const *runs,
	    size_t nruns, struct pw_problem **out, struct pw_calibration *fit,
	    struct pw_error *);
void	pw_calibration_free(struct pw_calibration *);
/* Whether workload A (run N's) differs from B (run 1's): then WHY (LEN
 * bytes; NULL and 0 when not wanted) says the first difference,
 * "workload tokens 16, run 1 tokens 32". */
bool	pw_workload_differs(const struct pw_workload *a,
	    const struct pw_workload *b, char *why, size_t len);

#endif /* PW_RUNTIME_H */
