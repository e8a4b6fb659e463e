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

/* The most bytes a launch keeps of its ops' times (three doubles per op
 * and measured iteration, all kept for the measured run): 1 GiB, so that
 * PW_MAX_ITERATIONS of a large schedule is refused before it runs rather
 * than exhausting the host while it does. */
#define PW_RT_RECORD_BUDGET	1073741824.0

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
 * They wait until the events before it have ended; an allocation ends
 * once BYTES are taken, a free (and an allocation whose bytes did not
 * all move, so that nothing waits forever) at pw_rt_arena_settle, which
 * the engine calls once the op has recorded its end.
 * Settle returns PW_ERR_CANCELLED once stopped.  A thread with no event
 * pending takes and gives at once. */
void	pw_rt_arena_expect(struct pw_rt_arena *, long ticket, double bytes);
/* Waits until the calling thread's pending event has its turn: before
 * an op whose event is its start's (an allocation), so that the start
 * recorded is when it could allocate.  PW_ERR_CANCELLED once stopped. */
int	pw_rt_arena_ready(struct pw_rt_arena *, struct pw_error *);
int	pw_rt_arena_settle(struct pw_rt_arena *, struct pw_error *);
void	pw_rt_arena_restart(struct pw_rt_arena *);
/* Wakes every wait for a turn: a take then fails ("stopped"), a give
 * gives at once. */
void	pw_rt_arena_stop(struct pw_rt_arena *);

/* ------------------------------------------------------------------ */
/* Pool (pool.c): one block of memory allocated up front (a GPU's, or   */
/* pinned host memory), handed out in pieces; it never touches the     */
/* bytes.  Locked: a device's compute and copy workers share it.       */

struct pw_rt_pool;

/* Returns a pool the caller owns over [BASE, BASE + BYTES), handing out
 * pieces aligned to ALIGN (a power of two) bytes. */
struct pw_rt_pool *pw_rt_pool_new(void *base, size_t bytes, size_t align);
void	pw_rt_pool_free(struct pw_rt_pool *);
/* BYTES (0 counts as 1) from the pool, first fit from its low end: the
 * caller's until pw_rt_pool_give; NULL when no free extent holds them
 * (then *LARGEST, when not NULL, gets the largest free extent, for the
 * error message). */
void	*pw_rt_pool_take(struct pw_rt_pool *, size_t bytes, size_t *largest);
/* Gives back a piece pw_rt_pool_take returned (its size is remembered);
 * neighbouring free extents merge.  Giving back anything else is a bug
 * (assert); NULL is nothing. */
void	pw_rt_pool_give(struct pw_rt_pool *, void *);
/* Bytes handed out now and at most so far (aligned sizes: what the pool
 * really holds), and the pool's size (what it can hand out: from BASE
 * rounded up to ALIGN to its end rounded down). */
size_t	pw_rt_pool_used(const struct pw_rt_pool *);
size_t	pw_rt_pool_peak(const struct pw_rt_pool *);
size_t	pw_rt_pool_size(const struct pw_rt_pool *);

/* ------------------------------------------------------------------ */
/* Waiting: every wait of the runtime is a pw_sync_wait of at most      */
/* PW_RT_WAIT seconds at a time (on a condition from pw_sync_init), so  */
/* that a stop or a cancel is seen within that even when a broadcast is */
/* missed.  Times are pw_now's.                                         */
#define PW_RT_WAIT	0.1

/* ------------------------------------------------------------------ */
/* Backends: the primitives the workload computes with (fp32, row-major */
/* matrices).  Defined by the backend files.  One context per device,  */
/* used by its compute worker and its copy worker (so by two threads   */
/* at once: a backend keeps what they share safe).                     */

/* Where a copy's two buffers are: device memory (the arena's, and the
 * tensors the engine hands between devices) or host memory (host_alloc). */
enum pw_rt_copy {
	PW_RT_D2D,
	PW_RT_D2H,
	PW_RT_H2D
};

/* The queues a device's work goes on: its compute ops, its offloads,
 * its reloads (a GPU's three streams). */
enum pw_rt_lane {
	PW_RT_LANE_COMPUTE,
	PW_RT_LANE_D2H,
	PW_RT_LANE_H2D,
	PW_RT_NLANES
};

struct pw_rt_backend_ops {
	enum pw_rt_backend kind;
	/* Opens the backend for one device's workers; *CTX is theirs. */
	int	(*open)(int device, void **ctx, struct pw_error *);
	void	(*close)(void *ctx);
	/* The device memory the arena accounts (a GPU's pool); memory the
	 * host can reach too (the engine's hand-off buffers, which the local
	 * transport copies); pinned host memory (where offloaded tensors
	 * wait). */
	void	*(*device_alloc)(void *ctx, size_t bytes);
	void	(*device_release)(void *ctx, void *);
	void	*(*alloc)(void *ctx, size_t bytes);
	void	(*release)(void *ctx, void *);
	void	*(*host_alloc)(void *ctx, size_t bytes);
	void	(*host_release)(void *ctx, void *);
	/* A clock of the device's own, NULL where the host's times the ops
	 * (the CPU).  clock_start, before an iteration, takes the instant its
	 * ops are measured from; mark records the start (END false) or the
	 * end of the op in SLOT (its index in the run's timed ops) on LANE;
	 * after the iteration, op_time says when that was, in pw_now's
	 * seconds; wait makes LANE's later work wait for the end marked in
	 * SLOT (an offload for its forward, a backward for its reload).
	 * peak is the most device memory the run held (the pool's). */
	int	(*clock_start)(void *ctx, struct pw_error *);
	int	(*mark)(void *ctx, enum pw_rt_lane, size_t slot, bool end,
		    struct pw_error *);
	int	(*wait)(void *ctx, enum pw_rt_lane, size_t slot, struct pw_error *);
	int	(*op_time)(void *ctx, size_t slot, bool end, double *t,
		    struct pw_error *);
	double	(*peak)(void *ctx);
	/* The workload's primitives (docs/runtime.md, "The workload").
	 * Every size may be 0 (an empty tensor): then they do nothing, or
	 * what the formula gives for no terms.  They return PW_OK, or a
	 * failure of the backend in ERR. */
	/* C = alpha op(A) op(B) + beta C, op(A) M x K, op(B) K x N, C M x
	 * N, row-major with leading dimensions LDA, LDB, LDC; op
	 * transposes when TA (TB) is true. */
	int	(*gemm)(void *ctx, bool ta, bool tb, size_t m, size_t n,
		    size_t k, float alpha, const float *a, size_t lda,
		    const float *b, size_t ldb, float beta, float *c,
		    size_t ldc, struct pw_error *);
	/* A = gelu(H), the tanh approximation, over N floats. */
	int	(*gelu)(void *ctx, const float *h, float *a, size_t n,
		    struct pw_error *);
	/* H = DA * gelu'(H) over N floats: the gradient overwrites the
	 * input it is taken at. */
	int	(*gelu_grad)(void *ctx, float *h, const float *da, size_t n,
		    struct pw_error *);
	/* *LOSS = mean((Y - T)^2) over N floats (0 when N is 0), then Y =
	 * 2 (Y - T) / N: the loss's gradient replaces the output. */
	int	(*loss)(void *ctx, float *y, const float *t, size_t n,
		    double *loss, struct pw_error *);
	/* X[i] = SCALE (2 u_i - 1), u_i = (z_i >> 40) / 2^24 with z_i the
	 * i-th pw_splitmix64 number from STATE: uniform in [-SCALE, SCALE). */
	int	(*fill)(void *ctx, float *x, size_t n, uint64_t state,
		    float scale, struct pw_error *);
	/* Y += ALPHA X over N floats (the step), and X = 0. */
	int	(*axpy)(void *ctx, size_t n, float alpha, const float *x,
		    float *y, struct pw_error *);
	int	(*zero)(void *ctx, float *x, size_t n, struct pw_error *);
	/* N floats from SRC to DST, each in device memory or host memory
	 * as DIR says; returns when DST holds them. */
	int	(*copy)(void *ctx, float *dst, const float *src, size_t n,
		    enum pw_rt_copy dir, struct pw_error *);
};

extern const struct pw_rt_backend_ops pw_rt_cpu;
#ifdef HAVE_CUDA
/* What the CUDA backend's devices open with: DEVICES pipeline devices
 * spread over the first GPUS GPUs (0: every one), or one per MPI rank
 * (RANKS: the launcher's local rank picks the GPU); NOPS timed ops (the
 * slots of the events that time them); each device's predicted peak
 * (PEAK[devices]: what its pool must hold at least) and its pools of
 * device memory and of pinned host memory in bytes (POOL[devices],
 * HOST[devices]); NULL, or 0 for a device, for none: then its memory
 * comes from the CUDA allocator call by call. */
struct pw_rt_cuda_plan {
	int	devices;
	int	gpus;
	bool	ranks;
	size_t	nops;
	const double *peak;
	const double *pool;
	const double *host;
};
/* The CUDA backend (cuda.c, nccl.c and the kernels) is a module of its
 * own, pipewright-cuda.so, linked against cuBLAS, NCCL and the CUDA
 * runtime; the program loads it the first time something asks for a
 * GPU, so that every other command starts without loading those
 * libraries (0.39 s and 225 MB at each start, docs/runtime.md).  The module
 * calls back into the program for the core and the runtime's helpers
 * (the program exports its symbols), and hands over this one table,
 * named PW_RT_CUDA_MODULE_SYMBOL. */
struct pw_rt_net;
struct pw_rt_wire;
struct pw_rt_cuda_module {
	/* sizeof the table and PACKAGE_STRING of the build that made the
	 * module: the program loads only its own version's. */
	size_t	size;
	const char *version;
	const struct pw_rt_backend_ops *ops;
	/* The GPUs this process sees; 0 with why in WHY when none. */
	int	(*gpus)(char *why, size_t len);
	/* The GPU a device's context (open's) runs on; its UUID in BUF, in
	 * hex ("?" when CUDA cannot tell). */
	int	(*gpu)(const void *ctx);
	void	(*gpu_name)(const void *ctx, char *buf, size_t len);
	/* Sets the plan, before any device opens (the backend copies it). */
	void	(*plan)(const struct pw_rt_cuda_plan *);
	/* NCCL between the GPUs of this process's devices (BASE local: one
	 * communicator per device from ncclCommInitAll, each device on its
	 * own GPU) or one device per rank (BASE MPI: rank 0's unique id over
	 * BASE's broadcast, the GPU the backend chose).  GPU[devices] is
	 * each device's GPU (-1 for one not here). */
	int	(*wire_nccl)(struct pw_rt_net *base, int devices,
		    const int *gpu, struct pw_rt_wire **out, struct pw_error *);
	/* The matched wire on GPUs: each device's buffers on its GPU
	 * (GPU[devices]), tensors moved device to device by cudaMemcpy: how
	 * devices that share a GPU (an emulation) hand over. */
	int	(*wire_copies)(int devices, const int *gpu,
		    struct pw_rt_wire **out, struct pw_error *);
};
#define PW_RT_CUDA_MODULE_NAME	"pipewright-cuda.so"
#define PW_RT_CUDA_MODULE_SYMBOL "pw_rt_cuda_module"
/* The CUDA backend's table, loaded on the first call (cuda_load.c) from
 * $PIPEWRIGHT_CUDA_MODULE when set, else from the running program's own
 * folder (a build tree), else from the folder make install put it in;
 * NULL, with why in WHY, when it does not load.  The module stays loaded
 * until the process ends; safe from any thread. */
const struct pw_rt_cuda_module *pw_rt_cuda_load(char *why, size_t len);
#endif
/* The GPU (0..GPUS-1) pipeline device DEVICE of DEVICES runs on: its own
 * when there are enough, else devices in contiguous blocks, the first
 * DEVICES % GPUS GPUs holding one device more (an emulation: devices on
 * one GPU are separate streams).  -1 when an argument is out of range. */
int	pw_rt_gpu_of(int device, int devices, int gpus);
/* The bytes of host memory the CPU backend's devices may use now, all of
 * them together: /proc/meminfo's MemAvailable, else the physical memory
 * (sysconf), else INFINITY (nothing to tell). */
double	pw_rt_cpu_available(void);

/* ------------------------------------------------------------------ */
/* The workload's stages (workload.c)                                  */

/* One stage's weights, gradients and workspace on its device. */
struct pw_rt_stage;
/* What F of one microbatch keeps at one stage for its B and W. */
struct pw_rt_saved;

/* The tensors a seed stream is drawn for: KEYS (below) start with one. */
enum pw_rt_tensor {
	PW_RT_INPUT = 1,	/* keys: tensor, microbatch */
	PW_RT_TARGET,		/* keys: tensor, microbatch */
	PW_RT_W1,		/* keys: tensor, stage, layer */
	PW_RT_W2
};

/* The state a tensor's numbers are drawn from (backend fill): SEED with
 * each of KEYS[N] in turn xored in and mixed by pw_splitmix64, so that
 * streams of different keys share no prefix. */
uint64_t pw_rt_stream(uint64_t seed, const uint64_t *keys, size_t n);

/* Floats in the tensor one stage hands the next (tokens x hidden), the
 * same forwards and backwards. */
size_t	pw_rt_io_floats(const struct pw_workload *);

/* Opens stage S of WORK on BACKEND's CTX: weights from SEED, gradients
 * zero, its workspace; all from ARENA (the static bytes of
 * pw_workload_problem).  Returns PW_OK and a stage the caller owns, or
 * PW_ERR_CANCELLED once CANCEL (NULL: never) is set, read before each
 * matrix: a layer of a large workload takes seconds to fill. */
int	pw_rt_stage_open(const struct pw_workload *, int s,
	    const struct pw_rt_backend_ops *, void *ctx, struct pw_rt_arena *,
	    uint64_t seed, const atomic_int *cancel, struct pw_rt_stage **out,
	    struct pw_error *);
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
/* Gives back every byte SAVED holds and frees it: what W does at its
 * end, and what the engine does for the saved of a run stopped before
 * their W. */
void	pw_rt_saved_free(struct pw_rt_stage *, struct pw_rt_saved *);
/* OFFLOAD: the stage's offload bytes of SAVED to host memory, their
 * device copy freed at its end; RELOAD brings them back (taken at its
 * start).  Run on the device's copy worker. */
int	pw_rt_offload(struct pw_rt_stage *, struct pw_rt_saved *, struct pw_error *);
int	pw_rt_reload(struct pw_rt_stage *, struct pw_rt_saved *, struct pw_error *);
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
 * iteration's gradients, *LOSS its mean loss.  CANCEL (may be NULL) is
 * looked at before every microbatch: once non-zero, PW_ERR_CANCELLED
 * ("cancelled during the gradient check"). */
int	pw_rt_reference(const struct pw_workload *, int m, int iterations,
	    uint64_t seed, atomic_int *cancel, float **grads, double *loss,
	    struct pw_error *);

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
	 * pw_now's seconds (the measured op's arrive); NULL when the
	 * transport cannot tell: the engine then takes recv's return. */
	double	(*arrived)(struct pw_rt_net *);
	/* A collective: rank 0's *T0 (its pw_now) on every rank, in that
	 * rank's pw_now seconds, so that every rank measures from one
	 * instant (the ranks of a host share its clock; another host's
	 * offset is estimated when the net opens).  NULL for one process. */
	int	(*common)(struct pw_rt_net *, double *t0, struct pw_error *);
};

/* The tag of the tensor that op OP of (stage, mb) waits for: an F its
 * input, a B or BW its output's gradient.  A transfer's own tag is the
 * token that hands a shared channel to it (no floats): the transfer
 * before it in the channel's order, on another device, sends it.  Kind,
 * stage and microbatch in 4, 20 and 24 bits (stage < 2^20, mb < 2^24):
 * enough for every problem, since pw_problem_check_counts bounds both
 * stages and microbatches by PW_MAX_PAIRS (2^20) pairs. */
uint64_t pw_rt_tag(struct pw_op op);

int	pw_rt_net_local(int devices, struct pw_rt_net **out, struct pw_error *);
int	pw_rt_net_mpi(struct pw_rt_net **out, struct pw_error *);

/* ------------------------------------------------------------------ */
/* Wires: hand-offs between device memories (net_wire.c, nccl.c)        */

/* One half of a point-to-point transfer a device takes part in. */
struct pw_rt_xfer {
	int	peer;		/* the other pipeline device */
	bool	send;
	float	*buf;		/* the wire's own buffer (buf_alloc) */
	size_t	n;		/* floats */
};

/* A wire moves tensors between devices the way NCCL does: a send
 * completes only once its receiver has posted the matching receive, and
 * the transfers between two devices match in the order each side posts
 * them.  So the sequenced transport over it (pw_rt_net_wire) posts every
 * device's transfers in one global order that the schedule's timeline
 * gives, which no run can turn into a cycle of waits. */
struct pw_rt_wire {
	const char *name;	/* "nccl", "host": what its errors start with */
	void	*ctx;
	/* Posts XF[N] of DEVICE (this process's) as one group and waits until
	 * all have completed; PW_ERR_CANCELLED once aborted, PW_ERR_RUNTIME
	 * with ERR naming the device and the call when the wire fails. */
	int	(*exchange)(struct pw_rt_wire *, int device,
		    const struct pw_rt_xfer *xf, int n, struct pw_error *);
	/* Ends every exchange of this process now, and every later one at
	 * once (ncclCommAbort); safe from any thread, more than once. */
	void	(*abort)(struct pw_rt_wire *);
	/* Memory the wire can move, on DEVICE: NULL when refused. */
	float	*(*buf_alloc)(struct pw_rt_wire *, int device, size_t n);
	void	(*buf_release)(struct pw_rt_wire *, int device, float *);
	/* N floats between a wire buffer and the engine's hand-off buffers
	 * (the backend's memory) of DEVICE, either way. */
	int	(*copy)(struct pw_rt_wire *, int device, float *dst,
		    const float *src, size_t n, struct pw_error *);
	void	(*close)(struct pw_rt_wire *);
};

/* A cross-device hand-off of a run: the tensor device FROM's op hands
 * device TO's op (tag pw_rt_tag of the receiving op), and when, on the
 * simulated timeline, the one ends and the other starts. */
struct pw_rt_message {
	int	from, to;
	uint64_t tag;
	double	made;		/* the producing op's end */
	double	used;		/* the receiving op's start */
};

/* Which wire a launch's hand-offs go over (pw_rt_wire_pick). */
enum pw_rt_wire_kind {
	PW_RT_WIRE_NONE,	/* the base transport's own */
	PW_RT_WIRE_HOST,	/* the host wire (pw_rt_opts.host_wire) */
	PW_RT_WIRE_NCCL,	/* NCCL: every device on a GPU of its own */
	PW_RT_WIRE_COPIES	/* device copies: devices share a GPU */
};
/* The wire of a launch on BACKEND over TRANSPORT of DEVICES devices,
 * GPU[devices] each one's GPU (-1 for one not here, or not on a GPU;
 * under MPI a number that ranks on one GPU share): the host wire when
 * asked for; on CUDA with more than one device NCCL, unless two devices
 * share a GPU (NCCL refuses two ranks on one GPU): then device copies
 * between the streams of one process, or the MPI transport's own between
 * ranks; else none. */
enum pw_rt_wire_kind pw_rt_wire_pick(enum pw_rt_backend, enum pw_rt_transport,
	    bool host_wire, int devices, const int *gpu);
/* The most bytes of DEVICE's activations waiting in host memory at once
 * on a timeline (OPS[N]): each from its offload's start to its reload's
 * end (the reload frees the host copy as it ends; at one instant the
 * takes count before the gives).  What its pinned pool holds. */
double	pw_rt_host_peak(const struct pw_timed_op *ops, size_t n, int device);

/* The cross-device hand-offs of SCHED on P (indexed by WHERE, timed as
 * OPS[N], pw_timed_ops's) in the order every device posts them: by the
 * simulated end of the op that produces each, ties by that op's causal
 * depth (an op after all it waits for, whatever the times), then by the
 * devices and the tag (so that every rank sorts alike).  A device's compute
 * order never waits, in this order, for a message after one it produces
 * later, so devices that each post theirs in it cannot wait on each
 * other in a cycle (docs/runtime.md).  Returns an array the caller
 * frees, *COUNT its length. */
struct pw_rt_message *pw_rt_messages(const struct pw_problem *p,
	    const struct pw_schedule *sched, const struct pw_where *where,
	    const struct pw_timed_op *ops, size_t n, size_t *count);

/* The sequenced transport: hand-offs of FLOATS floats between devices
 * go over WIRE, each device's in the order of MSGS[NMSGS]
 * (pw_rt_messages) ROUNDS times (the run's iterations), by a thread per
 * device of this process that groups what it can post at once; a send
 * returns once its floats are copied to the wire's memory.  Everything
 * else (tokens without floats, broadcasts, gathers, barriers, the clock)
 * is BASE's.  Takes WIRE (closed also on failure) and, on success, BASE
 * (closed with the new net); copies MSGS.  *OUT the caller's (close). */
int	pw_rt_net_wire(struct pw_rt_net *base, struct pw_rt_wire *wire,
	    int devices, const struct pw_rt_message *msgs, size_t nmsgs,
	    size_t floats, int rounds, struct pw_rt_net **out,
	    struct pw_error *);
/* The memory a matched wire moves tensors in: its buffers, a copy
 * (between two of them, or one and a hand-off buffer, on DEVICE's side),
 * and what closes ARG (may be NULL). */
struct pw_rt_wire_memory {
	const char *name;	/* the wire's */
	float	*(*alloc)(void *arg, int device, size_t n);
	void	(*release)(void *arg, int device, float *);
	int	(*copy)(void *arg, int device, float *dst, const float *src,
		    size_t n, struct pw_error *);
	void	(*close)(void *arg);
	void	*arg;
};
/* A wire between the threads of one process with NCCL's matching (a
 * send completes once its receive is posted, pairs in posting order):
 * the receiver's buffer gets the sender's floats by MEM's copy.  Takes
 * MEM's ARG (closed with the wire).  *OUT the caller's. */
int	pw_rt_wire_matched(int devices, const struct pw_rt_wire_memory *mem,
	    struct pw_rt_wire **out, struct pw_error *);
/* The matched wire on the heap: how the suite runs the sequenced
 * transport without a GPU (pw_rt_opts.host_wire). */
int	pw_rt_wire_host(int devices, struct pw_rt_wire **out, struct pw_error *);

#endif /* PW_RT_INT_H */
