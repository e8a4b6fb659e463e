/*
 * rt_int.h - the runtime's inside: how the engine (engine.c), the
 * workload's math (workload.c), the backends (cpu.c; CUDA later), the
 * arena (arena.c) and the transports (net_local.c, mpi.c) meet.  Nothing
 * outside runtime/ includes it.
 *
 * Who calls whom: the engine runs the schedule; for each compute op it
 * calls the workload's stage functions, which compute through a backend's
 * primitives and take their tensors' memory from the device's arena; the
 * engine hands the tensors between devices through a transport.
 */
#ifndef PW_RT_INT_H
#define PW_RT_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime.h"

/* The SGD step every iteration ends with: w -= PW_RT_LR * g / m. */
#define PW_RT_LR	0.01f

/* ------------------------------------------------------------------ */
/* Arena (arena.c): one per device, shared by its compute and copy      */
/* workers (it locks).                                                 */

struct pw_rt_backend_ops;
struct pw_rt_arena;

/* Returns an arena the caller owns for DEVICE, whose memory comes from
 * BACKEND's context CTX, counting from 0 against LIMIT bytes (INFINITY
 * for none). */
struct pw_rt_arena *pw_rt_arena_new(int device, double limit,
	    const struct pw_rt_backend_ops *backend, void *ctx);
void	pw_rt_arena_free(struct pw_rt_arena *);
/* BYTES of the device's memory, accounted; NULL with ERR naming the
 * device, WHAT (the op, "weights") and the bytes when the limit or the
 * backend refuses. */
void	*pw_rt_arena_take(struct pw_rt_arena *, size_t bytes, const char *what,
	    struct pw_error *);
/* Gives back what pw_rt_arena_take returned (BYTES as taken). */
void	pw_rt_arena_give(struct pw_rt_arena *, void *, size_t bytes);
double	pw_rt_arena_level(const struct pw_rt_arena *);
double	pw_rt_arena_peak(const struct pw_rt_arena *);
/* The memory order: the engine numbers each device's memory events (an
 * op's allocation at its start or its free at its end, docs/model.md) in
 * the simulated timeline's order, from 0 each iteration
 * (pw_rt_arena_restart), and before an op tells the arena, from the
 * op's worker, that its takes or gives are event TICKET moving BYTES.
 * They wait until the events before it have ended; the event ends once
 * BYTES have moved, or at pw_rt_arena_settle (after the op: an event
 * whose bytes did not all move still ends, so nothing waits forever).
 * Settle returns PW_ERR_CANCELLED once stopped.  A thread with no event
 * pending takes and gives at once. */
void	pw_rt_arena_expect(struct pw_rt_arena *, long ticket, double bytes);
int	pw_rt_arena_settle(struct pw_rt_arena *, struct pw_error *);
void	pw_rt_arena_restart(struct pw_rt_arena *);
/* Wakes every wait for a turn: a take then fails ("stopped"), a give
 * gives at once. */
void	pw_rt_arena_stop(struct pw_rt_arena *);

/* ------------------------------------------------------------------ */
/* Waiting (engine.c): every wait of the runtime is a condition wait of */
/* at most 100 ms at a time, so that a stop or a cancel is seen within  */
/* that even when a broadcast is missed.                               */

/* One wait on COND (MUTEX locked), at most 100 ms. */
void	pw_rt_wait(pthread_cond_t *, pthread_mutex_t *);
/* Seconds of the monotonic clock (CLOCK_MONOTONIC). */
double	pw_rt_now(void);

/* ------------------------------------------------------------------ */
/* Backends: the primitives the workload computes with (fp32, row-major */
/* matrices).  Defined by the backend files.  One context per device,  */
/* used by its compute worker and its copy worker (so by two threads   */
/* at once: a backend keeps what they share safe).                     */

struct pw_rt_backend_ops {
	enum pw_rt_backend kind;
	/* Opens the backend for one device's workers; *CTX is theirs. */
	int	(*open)(int device, void **ctx, struct pw_error *);
	void	(*close)(void *ctx);
	/* Device memory (what the arena hands out) and pinned host memory
	 * (where offloaded tensors wait). */
	void	*(*alloc)(void *ctx, size_t bytes);
	void	(*release)(void *ctx, void *);
	void	*(*host_alloc)(void *ctx, size_t bytes);
	void	(*host_release)(void *ctx, void *);
	/* The workload's primitives: workload.c declares what it needs
	 * below this line and the backends give it (GEMM, GELU and its
	 * gradient, the loss, the seeded fill, copies). */
};

extern const struct pw_rt_backend_ops pw_rt_cpu;

/* ------------------------------------------------------------------ */
/* The workload's stages (workload.c)                                  */

/* One stage's weights, gradients and workspace on its device. */
struct pw_rt_stage;
/* What F of one microbatch keeps at one stage for its B and W. */
struct pw_rt_saved;

/* Floats in the tensor one stage hands the next (tokens x hidden), the
 * same forwards and backwards. */
size_t	pw_rt_io_floats(const struct pw_workload *);

/* Opens stage S of WORK on BACKEND's CTX: weights from SEED, gradients
 * zero, its workspace; all from ARENA (the static bytes of
 * pw_workload_problem).  Returns PW_OK and a stage the caller owns. */
int	pw_rt_stage_open(const struct pw_workload *, int s,
	    const struct pw_rt_backend_ops *, void *ctx, struct pw_rt_arena *,
	    uint64_t seed, struct pw_rt_stage **out, struct pw_error *);
void	pw_rt_stage_close(struct pw_rt_stage *);

/* F of microbatch MB: IN is the previous stage's output (NULL on stage 0,
 * which makes its input from the seed), OUT gets this stage's (NULL on
 * the last, which computes the loss against the seeded target into
 * *LOSS).  Takes the stage's act bytes from the arena at its start into
 * *SAVED. */
int	pw_rt_forward(struct pw_rt_stage *, int mb, const float *in, float *out,
	    struct pw_rt_saved **saved, double *loss, struct pw_error *);
/* B: DOUT is the next stage's input gradient (NULL on the last stage),
 * DIN gets this stage's (NULL on stage 0).  Frees act - hold at its end. */
int	pw_rt_backward_input(struct pw_rt_stage *, struct pw_rt_saved *,
	    const float *dout, float *din, struct pw_error *);
/* W: accumulates the weight gradients; frees the rest of SAVED. */
int	pw_rt_backward_weight(struct pw_rt_stage *, struct pw_rt_saved *,
	    struct pw_error *);
/* OFFLOAD: the stage's offload bytes of SAVED to host memory, their
 * device copy freed at its end; RELOAD brings them back (taken at its
 * start).  Run on the device's copy worker. */
int	pw_rt_offload(struct pw_rt_stage *, struct pw_rt_saved *, struct pw_error *);
int	pw_rt_reload(struct pw_rt_stage *, struct pw_rt_saved *, struct pw_error *);
/* Gives back what SAVED still holds, device and host memory (what a
 * stopped run left between F and W). */
void	pw_rt_saved_free(struct pw_rt_stage *, struct pw_rt_saved *);
/* Zeroes the gradients (an iteration's start); the SGD step over M
 * microbatches (its end). */
int	pw_rt_stage_zero(struct pw_rt_stage *, struct pw_error *);
int	pw_rt_stage_step(struct pw_rt_stage *, int m, struct pw_error *);
/* The accumulated weight gradients copied into HOST (N floats: what
 * pw_rt_grad_floats says). */
size_t	pw_rt_grad_floats(const struct pw_workload *, int s);
int	pw_rt_stage_grads(struct pw_rt_stage *, float *host, struct pw_error *);

/* The plain sequential computation: K iterations over M microbatches of
 * every stage in turn on one thread, with the same seed, steps and loss.
 * GRADS[s] (pw_rt_grad_floats each, the caller's) get the last
 * iteration's gradients, *LOSS its mean loss. */
int	pw_rt_reference(const struct pw_workload *, int m, int iterations,
	    uint64_t seed, float **grads, double *loss, struct pw_error *);

/* ------------------------------------------------------------------ */
/* Transports: hand-offs between devices' workers                      */

struct pw_rt_net {
	enum pw_rt_transport kind;
	int	rank;		/* this process: 0 of 1 for local */
	int	size;
	void	*ctx;
	/* N floats of BUF from device FROM's worker to TO's under TAG
	 * (pw_rt_tag); returns when BUF may be reused. */
	int	(*send)(struct pw_rt_net *, int from, int to, uint64_t tag,
		    const float *buf, size_t n, struct pw_error *);
	/* Waits for TAG from FROM into BUF; PW_ERR_CANCELLED once stop was
	 * called anywhere. */
	int	(*recv)(struct pw_rt_net *, int from, int to, uint64_t tag,
		    float *buf, size_t n, struct pw_error *);
	/* Wakes every waiting recv of this process (a fault, a cancel). */
	void	(*stop)(struct pw_rt_net *);
	/* Rank 0's bytes to every rank (others' *BUF is theirs to free). */
	int	(*bcast)(struct pw_rt_net *, char **buf, size_t *len, struct pw_error *);
	/* Every rank's bytes to rank 0: *ALL[size] and *LENS there (the
	 * caller frees them), nothing elsewhere. */
	int	(*gather)(struct pw_rt_net *, const char *buf, size_t len,
		    char ***all, size_t **lens, struct pw_error *);
	int	(*barrier)(struct pw_rt_net *, struct pw_error *);
	void	(*close)(struct pw_rt_net *);
	/* When the calling thread's last recv had its data here, in
	 * pw_rt_now's seconds (the measured op's arrive); NULL when the
	 * transport cannot tell: the engine then takes recv's return. */
	double	(*arrived)(struct pw_rt_net *);
};

/* The tag of the tensor that op OP of (stage, mb) waits for: an F its
 * input, a B or BW its output's gradient.  A transfer's own tag is the
 * token that hands a shared channel to it (no floats): the transfer
 * before it in the channel's order, on another device, sends it.  Kind,
 * stage and microbatch in 4, 20 and 24 bits (stage < 2^20, mb < 2^24). */
uint64_t pw_rt_tag(struct pw_op op);

int	pw_rt_net_local(int devices, struct pw_rt_net **out, struct pw_error *);
int	pw_rt_net_mpi(struct pw_rt_net **out, struct pw_error *);

#endif /* PW_RT_INT_H */
