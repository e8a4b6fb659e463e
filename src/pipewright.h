/*
 * pipewright.h - the core: problem and schedule model, simulator, metrics,
 * checker, schedule families, interchange formats and views.
 *
 * Data flows one way: a problem (read-only once loaded) and a schedule
 * (orders plus reload anchors) go into the simulator, which produces a
 * timing; metrics and every view are computed from the three.  Nothing here
 * knows of solver/, lua/, runtime/ or tui/.
 *
 * Conventions: functions that can fail return PW_OK (0) or a negative
 * enum pw_rc and fill a struct pw_error; "new"/"read" functions return
 * objects the caller owns and frees with the matching "free".
 */
#ifndef PIPEWRIGHT_H
#define PIPEWRIGHT_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ------------------------------------------------------------------ */
/* Return codes, exit codes, errors, allocation                        */

enum pw_rc {
	PW_OK = 0,
	PW_ERR_INPUT = -1,	/* malformed or inconsistent input */
	PW_ERR_IO = -2,		/* a file could not be read or written */
	PW_ERR_DEADLOCK = -3,	/* the orders can never complete */
	PW_ERR_NOT_APPLICABLE = -4, /* a family does not apply to a problem */
	PW_ERR_INTERNAL = -5,	/* a result failed its own checks: a bug */
	PW_ERR_CANCELLED = -6,	/* stopped by its caller (Ctrl-C, Esc) */
	PW_ERR_RUNTIME = -7,	/* a run failed: a worker's error, a lost rank */
};

/* Exit codes of the pipewright program (docs/cli.md). */
enum pw_exit {
	PW_EXIT_OK = 0,
	PW_EXIT_INVALID = 1,	/* check found violations; a schedule breaks a limit */
	PW_EXIT_INPUT = 2,	/* unreadable or malformed input, bad usage */
	PW_EXIT_INTERNAL = 3,	/* a bug: an invariant failed */
	PW_EXIT_RUNTIME = 4,	/* a launch failed or was stopped while running */
};

/* One error message; long enough for a deadlock report naming every
 * blocked device. */
struct pw_error {
	char msg[4096];
};

void	pw_error_set(struct pw_error *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* Appends to the message already set (a newline is the caller's choice). */
void	pw_error_append(struct pw_error *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

/* The one allocation wrapper: these never return NULL (they print and
 * abort when memory is exhausted). */
void	*pw_xmalloc(size_t);
void	*pw_xcalloc(size_t nmemb, size_t size);
void	*pw_xreallocarray(void *, size_t nmemb, size_t size);
/* NMEMB elements of SIZE bytes the caller frees, or NULL (an overflow,
 * or memory refused) for an owner that reports it as its own failure:
 * a device's arena, a host buffer the run may not get. */
void	*pw_tryallocarray(size_t nmemb, size_t size);
/* A copy of S the caller frees; NULL for NULL (an optional string). */
char	*pw_xstrdup(const char *);
/* Returns a formatted string the caller frees. */
char	*pw_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Atomic output: write to a temporary file beside PATH, rename on commit.
 * PATH "-" means stdout (commit just flushes); an existing PATH that is not
 * a regular file (/dev/null, a FIFO) is written in place.  A symbolic link
 * is written through: its target is replaced, keeping the link.  The new
 * file keeps the mode (and the owner, where this user may) of the file it
 * replaces.  Abort removes the temporary file, so no half-written output
 * is ever left behind (on stdout or in place, what is still buffered is
 * dropped); so does a fatal signal once pw_outfile_signals is
 * installed.  The temporary file is ".NAME.pw-tmp.PID.XXXXXX" beside the
 * target (a long NAME shortened, see docs/cli.md), and opening NAME removes those a killed run left.  Errors name
 * the cause of the first write that failed.  OUT must stay where it is
 * while open (its stream writes through it).
 */
struct pw_outfile {
	FILE	*fp;
	char	*path;		/* as given; NULL for stdout */
	char	*target;	/* the file written: PATH, its links followed */
	char	*tmp;		/* the temporary file, NULL when in place */
	int	fd;
	bool	is_stdout;	/* fd is stdout's, never closed here (a file
				 * may get fd 1 when stdout was closed) */
	int	error;		/* errno of the first failed write, else 0 */
};
int	pw_outfile_open(struct pw_outfile *, const char *path, struct pw_error *);
int	pw_outfile_commit(struct pw_outfile *, struct pw_error *);
void	pw_outfile_abort(struct pw_outfile *);
/* infile.c: whether PATH names something other than a regular file or a
 * directory: a FIFO, a pipe (/dev/fd/N), a device, a socket.  Such a
 * file cannot be read twice, and opening a FIFO waits for the program
 * at its other end. */
bool	pw_path_special(const char *path);
/* util.c: the file that writing PATH writes (pw_outfile's rule: the
 * links of its last part followed, one that leads nowhere yet naming the
 * file to create), absolute through its directory's real name, so that
 * two spellings of one place compare equal before the file is there: a
 * string the caller frees, or NULL with errno set when a link cannot be
 * read or they loop. */
char	*pw_path_written(const char *path);
/* infile.c: PATH ("-": stdin) opened for reading, as fopen; NULL with
 * errno set.  A name that is not a regular file (a pipe, a FIFO, a
 * device, stdin) reads whole every time it is opened, the second time
 * from a copy of what the first read: one command may read one input
 * twice.  The caller closes it with fclose. */
FILE	*pw_infile_open(const char *path);
/* Installs SA for SIG unless SIG is ignored (nohup, a script's
 * background job), which stays so; the disposition before goes to
 * *BEFORE unless NULL. */
void	pw_signal_catch(int sig, const struct sigaction *sa,
	    struct sigaction *before);
/* Installs pw_outfile_fatal for SIGHUP, SIGINT and SIGTERM (those ignored
 * on entry stay ignored): once at the start of a program. */
void	pw_outfile_signals(void);
/* Async-signal-safe: removes every open output's temporary file, then
 * ends the process by SIG with its default action; on a thread other
 * than the one that called pw_outfile_signals (a library's), sends SIG
 * to that one instead, which takes it once it may. */
void	pw_outfile_fatal(int sig);
/* pthread_create with the fatal signals blocked in the new thread, so
 * that pw_outfile_fatal runs on the main thread only (or hands the
 * signal to it), which blocks them while it changes what the handler
 * reads.  Every thread the program starts is started so. */
int	pw_thread_start(pthread_t *, void *(*fn)(void *), void *arg);
/* Seconds on CLOCK_MONOTONIC: the one clock of every deadline, poll and
 * measurement in the program. */
double	pw_now(void);
/* The index of S among NAMES (NULL-terminated) in any case (words a user
 * types: `--placement V`, as the model options take it); -1 when it is
 * none of them. */
int	pw_names_find(const char *const *names, const char *s);
/* qsort's order of doubles, least first. */
int	pw_double_cmp(const void *, const void *);
/* LOCK and COND initialised, COND timed on CLOCK_MONOTONIC, so that a
 * step of the wall clock neither stalls nor hurries a timed wait.  LOCK
 * may be NULL: a second condition on a lock set up before. */
void	pw_sync_init(pthread_mutex_t *lock, pthread_cond_t *cond);
/* Waits on COND (with LOCK held) until signalled or SECONDS have passed,
 * whichever is first; COND from pw_sync_init. */
void	pw_sync_wait(pthread_cond_t *cond, pthread_mutex_t *lock, double seconds);

/* S for a terminal or a text report: control characters (C0, DEL, C1, the
 * line and paragraph separators) and bytes that are not UTF-8 become
 * "\xHH", one per byte; the rest, valid UTF-8, is kept.  The caller
 * frees the result. */
char	*pw_escape(const char *s);

/* The fewest significant digits (15 to 17; "%.*g" drops the zeros a
 * shorter number would have) with which X reads back as exactly X, so
 * that files round-trip without printing 0.1 as 0.10000000000000001. */
int	pw_exact_precision(double x);

/* Reads S as a whole number in [MIN, MAX] (decimal, blanks around it
 * allowed) into *OUT; false, *OUT untouched, for anything else. */
bool	pw_parse_int(const char *s, long min, long max, int *out);
/* IN as one line into OUT (LEN bytes, cut there): "blocked:\n  a\n  b"
 * reads "blocked: a; b", and a tab inside a line (Lua's "...\t(skipping
 * 9 levels)") is a blank. */
void	pw_one_line(const char *in, char *out, size_t len);
/* strtod of the plain decimal number at S (digits, a point, an exponent),
 * *END after it; *END == S where S starts with none: no sign, "inf",
 * "nan" or hexadecimal, which strtod would take too.  ERANGE as strtod. */
double	pw_parse_decimal(const char *s, char **end);
/* Reads S as a size in bytes: a non-negative number with an optional
 * unit, B, KB/MB/GB/TB (powers of 1000) or KiB/MiB/GiB/TiB (powers of
 * 1024), in any case, a blank allowed before the unit ("60GiB",
 * "1.5 TB", "4e9").  False, *OUT untouched, for anything else. */
bool	pw_parse_bytes(const char *s, double *out);
/* Whether PATH ends in SUFFIX (".lua", ".json", ".csv") after at least
 * one other character, in any case: how every reader and writer tells a
 * file's kind by its name. */
bool	pw_path_ends(const char *path, const char *suffix);
/* What every reader takes a file named PATH for, by its name, where that
 * is not what its writer writes (OWN: ".json", ".csv"): "a Lua script",
 * "a PyTorch schedule CSV" or "a JSON file"; NULL where the name says
 * OWN or none of those.  A writer refuses such a name rather than leave
 * a file nothing reads. */
const char *pw_path_misread(const char *path, const char *own);

/* splitmix64: the next number of the sequence whose state is *STATE.
 * Deterministic on every platform, for seeded searches and generators. */
uint64_t pw_splitmix64(uint64_t *state);
/* The largest seed every front end takes (the command line's --seed,
 * Lua's seed = N): what a Lua integer holds. */
#define PW_SEED_MAX	INT64_MAX

/* Human-readable units: seconds ("1.23 ms") and bytes ("3.50 GiB").
 * They write into BUF (at least 32 bytes) and return it. */
char	*pw_fmt_seconds(char *buf, size_t len, double seconds);
char	*pw_fmt_bytes(char *buf, size_t len, double bytes);

/* ------------------------------------------------------------------ */
/* Problem                                                             */

struct pw_stage {
	int	device;		/* the device this stage runs on */
	double	f, b, w;	/* seconds for one microbatch; fused BW takes b + w */
	double	act;		/* bytes allocated when F starts */
	double	hold;		/* bytes held after B until W ends (<= act) */
	double	offload;	/* bytes that may move to host (<= act) */
	double	comm;		/* seconds to hand a tensor to the next stage when
				 * it is on another device (the problem's comm
				 * unless overridden per stage) */
};

struct pw_device_memory {
	double	static_bytes;	/* parameters, gradients, optimizer state */
	double	limit;		/* total bytes allowed; INFINITY for none */
};

/* The offload link.  Devices in one group share the group's channels:
 * full duplex gives each group a D2H and an H2D channel, half duplex one
 * shared channel.  A device named in no group has a group of its own. */
struct pw_link {
	bool	present;	/* false: no offload is possible */
	double	d2h, h2d;	/* bytes per second */
	double	latency;	/* seconds added to every transfer */
	bool	duplex;
	int	ngroups;
	int	*group;		/* [devices]: the group index of each device */
};

struct pw_origin;

struct pw_problem {
	char	*name;		/* optional, may be NULL */
	int	devices;
	int	microbatches;
	int	nstages;
	double	comm;		/* default seconds between stages on different devices */
	struct pw_stage *stages;	/* [nstages], pipeline order */
	struct pw_device_memory *memory; /* [devices] */
	struct pw_link link;
	/* The model, hardware and split the costs came from (see the cost
	 * model), so that a family needing another placement can split the
	 * same model again; NULL for problems whose stages were given. */
	struct pw_origin *origin;
};

/* Returns a problem the caller owns: stages and memory zeroed, every
 * stage on device 0, limits INFINITY, no link. */
struct pw_problem *pw_problem_new(int devices, int nstages, int microbatches);
void	pw_problem_free(struct pw_problem *);
/* Returns a deep copy the caller owns. */
struct pw_problem *pw_problem_copy(const struct pw_problem *);
/* Returns a deep copy the caller owns, its memory limits INFINITY. */
struct pw_problem *pw_problem_unlimited(const struct pw_problem *);

/* Placements: loop puts stage s on device s mod p (v = S/p chunks per
 * device); V needs S = 2p and puts stages d and 2p-1-d on device d. */
int	pw_problem_place_loop(struct pw_problem *, struct pw_error *);
int	pw_problem_place_v(struct pw_problem *, struct pw_error *);
/* Sets every stage's comm to the problem's comm. */
void	pw_problem_set_comm(struct pw_problem *, double comm);
/* One link group per device (or as given later by the caller). */
void	pw_problem_set_link(struct pw_problem *, double d2h, double h2d,
	    double latency, bool duplex);

/* The most (stage, microbatch) pairs a problem may have, checked before
 * anything is sized by them.  Each pair has PW_NKINDS ops, and every
 * command keeps a few hundred bytes per op (a schedule file's ops are
 * read one at a time, never as one JSON tree).  Measured at 2^20 pairs
 * (4 stages x 262,144 microbatches, zb-h1's 3,145,728 ops): schedule
 * 465 MB, check 510 MB, show 570 MB; a file stating every op of the
 * universe about doubles check's.  So this keeps the largest problem
 * near 1 GB for every command, and is far above any real pipeline (64
 * stages x 4096 microbatches is 2^18). */
#define PW_MAX_PAIRS	((size_t)1 << 20)

/* Checks the counts before anything is sized by them: each at least 1,
 * no more devices than stages (every device runs one), and at most
 * PW_MAX_PAIRS (stage, microbatch) pairs.  WHERE prefixes the message. */
int	pw_problem_check_counts(int devices, int nstages, int microbatches,
	    const char *where, struct pw_error *);
/* pw_problem_check_counts of a problem that is the member PARENT of
 * WHERE's object: the messages name "PARENT.FIELD" ("" as none). */
int	pw_problem_check_counts_in(int devices, int nstages, int microbatches,
	    const char *where, const char *parent, struct pw_error *);

/* Semantic validation; WHERE prefixes every message ("file.json").
 * Checks counts, non-negative finite values, hold/offload <= act, stage
 * devices in range, and that every limit covers static memory plus the
 * largest activation of any stage on that device. */
int	pw_problem_validate(const struct pw_problem *, const char *where,
	    struct pw_error *);
/* pw_problem_validate of the member PARENT of WHERE's object, as
 * pw_problem_check_counts_in names its fields. */
int	pw_problem_validate_in(const struct pw_problem *, const char *where,
	    const char *parent, struct pw_error *);

/* True when A and B have the same devices, stages, costs, memory and
 * link (names and origins aside). */
bool	pw_problem_same(const struct pw_problem *, const struct pw_problem *);

/* Derived facts. */
int	pw_problem_chunks(const struct pw_problem *, int device); /* stages on it */
bool	pw_problem_is_loop(const struct pw_problem *);	/* stage s on s mod p */
bool	pw_problem_is_v(const struct pw_problem *);
/* "8 devices, 16 stages, 32 microbatches" (each in the singular for one)
 * into BUF, which it returns. */
char	*pw_problem_counts(const struct pw_problem *, char *buf, size_t len);
/* Seconds from stage s to s+1 (0 when both are on one device). */
double	pw_problem_hop(const struct pw_problem *, int s);
/* What a rebalance of the layers could gain: the busiest device's
 * compute (f + b + w summed over its stages) over *REFERENCE, for a
 * problem with an origin the least bottleneck a split of its model
 * reaches on the same devices, chunks and placement
 * (pw_split_balance_fit), else the mean of the devices' compute (its
 * stages were given).  That device in *WORST_DEVICE; either may be
 * NULL.  1 when no device has work.  compare warns above 1.1 and names
 * the command that rebalances it. */
double	pw_problem_imbalance(const struct pw_problem *, int *worst_device,
	    double *reference);

/* ------------------------------------------------------------------ */
/* Operations                                                          */

enum pw_kind {
	PW_F,
	PW_B,
	PW_W,
	PW_BW,		/* fused backward: B then W in one op */
	PW_OFFLOAD,
	PW_RELOAD,
	PW_NKINDS
};

struct pw_op {
	enum pw_kind kind;
	int	stage;
	int	mb;
};

const char *pw_kind_name(enum pw_kind);		/* "F", ..., "RELOAD" */
int	pw_kind_parse(const char *, enum pw_kind *);	/* PW_OK or PW_ERR_INPUT */
bool	pw_kind_is_transfer(enum pw_kind);

/* Whether OP's kind, stage and microbatch lie in P's ranges: an op P
 * may have (not that a schedule holds it). */
bool	pw_op_in(const struct pw_problem *, struct pw_op);
/* Dense index of an op in [0, pw_op_universe(problem)). */
size_t	pw_op_universe(const struct pw_problem *);
size_t	pw_op_index(const struct pw_problem *, struct pw_op);
/* Whether A and B are one op: kind, stage and microbatch. */
bool	pw_op_same(struct pw_op a, struct pw_op b);
struct pw_op pw_op_from_index(const struct pw_problem *, size_t);
/* Seconds an op takes on this problem. */
double	pw_op_duration(const struct pw_problem *, struct pw_op);
/* "F(3,12)" style, written into BUF, returned. */
char	*pw_op_name(char *buf, size_t len, struct pw_op);
/* Reads an op name as pw_op_name writes it ("B(3,12)"; the kind in any
 * case, blanks allowed around the numbers), in range for P.  Returns
 * PW_OK, or PW_ERR_INPUT with ERR naming what is wrong with S. */
int	pw_op_parse(const char *s, const struct pw_problem *p, struct pw_op *out,
	    struct pw_error *);

/* A user's pin: BEFORE must start no later than AFTER starts, both
 * compute ops on the same device.  A pin names an op as the user sees
 * it: B or W of a fused backward means its BW, BW of a split one its B.
 * The optimizer keeps pins as constraints; schedule files carry them
 * (docs/format.md, "pins"). */
struct pw_pin {
	struct pw_op before;
	struct pw_op after;
};

/* The other op a pin's OP may mean: BW for B or W (a fused backward's),
 * B for BW (a split one's first op), OP itself for the rest. */
struct pw_op pw_pin_other(struct pw_op op);
/* Whether pins A and B say the same: each op of one is the other's, or
 * names it as B where the other says BW (one microbatch's backward,
 * split or fused). */
bool	pw_pin_same(const struct pw_pin *a, const struct pw_pin *b);
/* Whether the op of kind KA of stage SA precedes the one of kind KB of
 * stage SB in every schedule, within one microbatch, by the
 * dependencies alone: every F before every backward, F in stage order,
 * B in reverse stage order and each W after the B of its own stage and
 * of the stages after it; a BW is its B for what it precedes and for
 * what precedes it. */
bool	pw_kind_precedes(enum pw_kind ka, int sa, enum pw_kind kb, int sb);
/* PW_OK when PIN can hold on P: two compute ops of P, on one device, not
 * one op (B and BW of a microbatch are one: its backward's first op),
 * the later not one the earlier depends on (pw_kind_precedes); else
 * PW_ERR_INPUT with why in ERR ("F(0,1) is on device 0 and F(1,1)
 * on device 1: a pin joins two ops of one device"), which the caller
 * prefixes with where the pin came from. */
int	pw_pin_check(const struct pw_problem *, const struct pw_pin *,
	    struct pw_error *);

/* Channels of the offload link. */
int	pw_problem_nchannels(const struct pw_problem *);
/* The channel a transfer of KIND from DEVICE uses. */
int	pw_problem_channel(const struct pw_problem *, int device, enum pw_kind);
/* "link0", "link0.d2h", "link0.h2d" into BUF, returned. */
char	*pw_channel_name(const struct pw_problem *, int channel, char *buf, size_t len);
/* RESOURCE (pw_where's numbering) as "device 3" or its channel's name
 * into BUF, returned. */
char	*pw_resource_name(const struct pw_problem *, int resource, char *buf,
	    size_t len);

/* ------------------------------------------------------------------ */
/* Schedule: orders plus reload anchors                                */

/* A reload's anchor: a compute op of the same device at whose start, or
 * (AT_END) end, the reload may begin.  The end lets a reload wait for
 * the memory an op frees, where the next op is its own backward. */
struct pw_anchor {
	struct pw_op op;
	bool	at_end;
};

struct pw_seq {
	int	len;
	int	cap;
	struct pw_op *ops;
};

struct pw_schedule {
	char	*family;	/* who built it, may be NULL */
	int	ndevices;
	struct pw_seq *device;	/* [ndevices]: compute order of each device */
	int	nchannels;
	struct pw_seq *channel;	/* [nchannels]: transfer order of each channel */
	int	nstages;
	int	microbatches;
	/* [nstages * microbatches]: where the RELOAD of (stage, mb) may
	 * begin; op kind PW_NKINDS where it has no anchor (it may then start
	 * as soon as its offload and channel allow). */
	struct pw_anchor *anchor;
};

/* Returns an empty schedule the caller owns, shaped for PROBLEM. */
struct pw_schedule *pw_schedule_new(const struct pw_problem *);
void	pw_schedule_free(struct pw_schedule *);
/* Returns a copy of SCHED the caller owns: orders, anchors and family as
 * they are, whether or not they make sense for any problem. */
struct pw_schedule *pw_schedule_copy(const struct pw_schedule *);
void	pw_seq_push(struct pw_seq *, struct pw_op);
/* OP's place in SEQ; -1 when SEQ does not hold it. */
int	pw_seq_find(const struct pw_seq *, struct pw_op);
/* Appends a compute op to its stage's device, a transfer to its channel. */
void	pw_schedule_append(struct pw_schedule *, const struct pw_problem *, struct pw_op);
void	pw_schedule_set_anchor(struct pw_schedule *, int stage, int mb, struct pw_anchor anchor);
/* True when the anchor of (stage, mb) is set. */
bool	pw_schedule_anchor(const struct pw_schedule *, int stage, int mb, struct pw_anchor *out);
/* The ops SCHED holds, compute and transfers. */
size_t	pw_schedule_nops(const struct pw_schedule *);
/* The order of RESOURCE in SCHED: device RESOURCE's, or for RESOURCE at
 * or past SCHED's devices, channel RESOURCE - devices' (pw_where's
 * numbering; RESOURCE must be one of them). */
const struct pw_seq *pw_schedule_order(const struct pw_schedule *,
	    int resource);
/* Whether A and B hold the same ops in the same order on every device
 * and channel (their anchors aside).  Where they differ, *RESOURCE (a
 * device, or devices + a channel; -1 when their device or channel counts
 * differ) and *POS (the first position that differs, which may be past
 * the end of the shorter) say where first; either may be NULL. */
bool	pw_schedule_same_orders(const struct pw_schedule *a,
	    const struct pw_schedule *b, int *resource, int *pos);

/* ------------------------------------------------------------------ */
/* The model's rules: what each op waits for, what it does to memory   */
/* (docs/model.md).  The simulator, the metrics, the solver and the     */
/* families use these; the checker keeps its own copy on purpose, so   */
/* that a wrong rule here cannot hide from it.                          */

/* What makes an op wait. */
enum pw_pred_kind {
	PW_PRED_DEVICE,		/* the op before it in its device's order */
	PW_PRED_CHANNEL,	/* the transfer before it on its channel */
	PW_PRED_DEP,		/* a data dependency, with its communication */
	PW_PRED_ANCHOR,		/* a reload's anchor */
};

/* "start(op) >= end(pred.op) + delay", or start(pred.op) + delay when
 * FROM_START (a reload anchored at an op's start). */
struct pw_pred {
	struct pw_op op;
	enum pw_pred_kind kind;
	bool	from_start;
	double	delay;		/* seconds */
};

/* The most predecessors an op has (its order's previous op, and a
 * backward's next-stage B, BW and its reload), and the most candidates
 * pw_op_deps names. */
#define PW_MAX_PREDS	4
#define PW_MAX_DEPS	3

/* The ops OP may depend on, as PW_PRED_DEP and (with ANCHOR, a RELOAD's
 * anchor, else NULL) PW_PRED_ANCHOR rows in OUT; returns how many.  They
 * are candidates: a schedule waits for those it has (of a next stage's B
 * and BW, the one it uses; a reload only where the activation moves), so
 * a caller drops those absent from its schedule.  F(s) waits for F(s-1)
 * plus the hop; B or BW of the last stage for its F, of another stage
 * for the next stage's backward plus the hop, and for its reload; W for
 * its B; OFFLOAD for its F; RELOAD for its OFFLOAD and its anchor. */
int	pw_op_deps(const struct pw_problem *, struct pw_op op,
	    const struct pw_anchor *anchor, struct pw_pred out[PW_MAX_DEPS]);

/* Where each op of a schedule is.  Resource r is device r for r below
 * the problem's devices, else channel r - devices (the numbering every
 * per-resource question uses). */
#define PW_NOWHERE	INT32_MIN
struct pw_where {
	size_t	universe;
	int32_t	*resource;	/* [universe]: PW_NOWHERE for absent ops */
	int32_t	*position;	/* [universe]: index in its resource's order */
};

/* Indexes SCHED's ops, refusing an op out of range, on a resource it does
 * not belong to, moving nothing (a transfer of a stage with offload 0) or
 * appearing twice.  Returns PW_OK and an index the caller owns, or
 * PW_ERR_INPUT naming the op and the resource. */
int	pw_where_build(const struct pw_problem *, const struct pw_schedule *,
	    struct pw_where **out, struct pw_error *);
void	pw_where_free(struct pw_where *);
bool	pw_where_has(const struct pw_where *, const struct pw_problem *,
	    struct pw_op);

/* The predecessors of OP (present in W) in SCHED: the op before it in its
 * order, then the dependencies and anchor of pw_op_deps that W holds.
 * Returns how many were written to OUT. */
int	pw_preds(const struct pw_problem *, const struct pw_schedule *,
	    const struct pw_where *, struct pw_op op,
	    struct pw_pred out[PW_MAX_PREDS]);

/* The successors of OP in SCHED: the ops whose pw_preds name it (the op
 * after it in its order, the ops waiting for it, the reloads anchored at
 * it), each as a row whose OP is the successor and whose KIND, FROM_START
 * and DELAY are that successor's edge.  Writes at most MAX rows to OUT
 * and returns how many there are (more than MAX when they do not fit). */
int	pw_succs(const struct pw_problem *, const struct pw_schedule *,
	    const struct pw_where *, struct pw_op op, struct pw_pred *out,
	    int max);

/* What an op does to its device's memory: ALLOC bytes at its start, FREED
 * bytes at its end (docs/model.md, "Memory"). */
struct pw_mem_effect {
	double	alloc;
	double	freed;
};

struct pw_mem_effect pw_op_memory(const struct pw_problem *, struct pw_op);

/* ------------------------------------------------------------------ */
/* Simulator                                                           */

/* Start and end of every op, indexed by pw_op_index; NAN for absent ops.
 * BIND records, for every op, the predecessor whose constraint set its
 * start (the first of the latest, in pw_preds order): the critical path
 * is the chain of binding predecessors back from the last op. */
#define PW_NO_BIND	UINT32_MAX
struct pw_bind {
	uint32_t pred;		/* pw_op_index, PW_NO_BIND: nothing (start 0) */
	uint8_t	kind;		/* enum pw_pred_kind */
};

struct pw_timing {
	size_t	universe;
	double	*start;
	double	*end;
	struct pw_bind *bind;	/* [universe] */
};

/* Gives every op the earliest start its orders and dependencies allow.
 * Returns PW_OK and a timing the caller owns; PW_ERR_INPUT when the
 * schedule is malformed (an op missing, repeated or on the wrong resource);
 * PW_ERR_DEADLOCK naming the blocked ops and what each waits for. */
int	pw_simulate(const struct pw_problem *, const struct pw_schedule *,
	    struct pw_timing **out, struct pw_error *);
/* pw_simulate, bit for bit, re-timing only what may have moved: the ops
 * that start before AFTER in BEFORE keep its times.  BEFORE is the timing
 * of a schedule with SCHED's ops, anchors and channel orders whose
 * compute orders differ from SCHED's only among ops that start at or
 * after AFTER in BEFORE (what a reordering of those ops leaves: every
 * other op keeps its predecessors, which start no later than it). */
int	pw_simulate_after(const struct pw_problem *,
	    const struct pw_schedule *, const struct pw_timing *before,
	    double after, struct pw_timing **out, struct pw_error *);
void	pw_timing_free(struct pw_timing *);
bool	pw_timing_has(const struct pw_timing *, size_t index);

/* The position in resource R's order (pw_where's numbering) of the first
 * op that ends after T, by binary search (an order's ends never
 * decrease); the order's length when none does.  What a view asks to
 * draw only the ops in its window. */
int	pw_order_seek(const struct pw_problem *, const struct pw_schedule *,
	    const struct pw_timing *, int resource, double t);

/* An op a deadlocked schedule never starts and one predecessor it waits
 * for that never ends (ON.op; ON.kind says which edge). */
struct pw_wait {
	struct pw_op op;
	struct pw_pred on;
};

/* When SCHED deadlocks (pw_simulate's PW_ERR_DEADLOCK): for every
 * resource whose order stops, its first op that never starts, with what
 * it waits for, in resource order.  Returns how many, with the array in
 * *OUT (the caller frees it); 0 and NULL when SCHED times or is
 * malformed. */
size_t	pw_deadlock_waits(const struct pw_problem *, const struct pw_schedule *,
	    struct pw_wait **out);

/* ------------------------------------------------------------------ */
/* Metrics                                                             */

struct pw_mem_point {
	double	t;
	double	bytes;		/* level after every event at t (frees first) */
};

struct pw_device_metrics {
	double	first_start;	/* first compute start */
	double	last_end;	/* last compute end */
	double	span;		/* last_end - first_start */
	double	busy;		/* total compute time */
	double	idle;		/* makespan - busy, at least 0 (rounding) */
	double	peak;		/* bytes, static included */
	bool	within_limit;
	int	ncurve;
	struct pw_mem_point *curve;	/* starts at (start, static) */
};

struct pw_metrics {
	double	start;		/* first op start */
	double	makespan;	/* last op end - first op start */
	double	max_span;
	double	max_busy;
	double	bubble_rate;	/* (max_span - max_busy) / max_span, >= 0 */
	double	total_idle;	/* sum of device idle */
	bool	feasible;	/* every device within its limit */
	int	ndevices;
	struct pw_device_metrics *device;
};

/* Returns metrics the caller owns. */
struct pw_metrics *pw_metrics_compute(const struct pw_problem *,
	    const struct pw_schedule *, const struct pw_timing *);
void	pw_metrics_free(struct pw_metrics *);

/* ------------------------------------------------------------------ */
/* Timed ops: a schedule as a file states it, the checker's input      */

struct pw_timed_op {
	struct pw_op op;
	int	device;		/* as stated (compute: its device; transfer: the
				 * device whose activation moves) */
	double	start;
	double	end;
	double	bytes;		/* transfers only */
	bool	has_anchor;	/* RELOAD only: its anchor as stated */
	struct pw_anchor anchor;
};

/* Returns the timed ops of a simulated schedule (array the caller frees),
 * sorted by start time (ties by end, then device by device and channel
 * by channel, each in its order). */
struct pw_timed_op *pw_timed_ops(const struct pw_problem *,
	    const struct pw_schedule *, const struct pw_timing *, size_t *n);
/* Rebuilds a schedule from timed ops: each resource's order by start time
 * (ties by end, then in the list's order, but that an op a tied one of
 * its microbatch depends on goes first), anchors as stated.  Returns
 * PW_OK and a schedule the caller owns, or PW_ERR_INPUT. */
int	pw_schedule_from_timed(const struct pw_problem *, const struct pw_timed_op *,
	    size_t n, struct pw_schedule **out, struct pw_error *);

/* ------------------------------------------------------------------ */
/* Measured runs (docs/format.md, "measured"): what the runtime saw     */

/* The workload a run computes: per layer an MLP block (hidden -> ffn ->
 * hidden, GELU between, no attention) over TOKENS x HIDDEN activations
 * per microbatch, LAYERS[s] layers on stage s.  Data only: the runtime
 * (runtime/) computes it, the core carries it in a measured file. */
struct pw_workload {
	int	hidden;
	int	ffn;
	int	tokens;		/* per microbatch */
	int	nstages;
	int	*layers;	/* [nstages] */
	bool	scaled;		/* scaled down from the problem's model */
};

/* The most iterations a launch runs or a measured run states: each
 * keeps every op's times, so this bounds them (100,000 iterations of a
 * 1,000-op schedule keep 2.4 GB). */
#define PW_MAX_ITERATIONS	100000

/* The largest workload: each size and each stage's layers, so that
 * every product of them the runtime forms (tokens x hidden x ffn x
 * layers, in bytes) fits a 64-bit size.  A size may be 0: a run of zero
 * GEMMs measures the engine's overhead alone; a stage has a layer at
 * least, or it would compute nothing to hand on. */
#define PW_WORKLOAD_MAX_DIM	(1 << 20)
#define PW_WORKLOAD_MAX_LAYERS	4096

/* Checks W for NSTAGES stages: hidden, ffn and tokens each from 0 to
 * PW_WORKLOAD_MAX_DIM, one layers entry per stage, each from 1 to
 * PW_WORKLOAD_MAX_LAYERS.  PW_OK, or PW_ERR_INPUT with "WHERE.FIELD:
 * ..." (WHERE "x.json: measured.workload" names
 * "x.json: measured.workload.layers[2]"). */
int	pw_workload_validate(const struct pw_workload *w, int nstages,
	    const char *where, struct pw_error *);
/* Frees W's layers and zeroes it (W itself is the caller's). */
void	pw_workload_clear(struct pw_workload *);
/* Deep copy of SRC into DST (DST's old contents are not freed). */
void	pw_workload_copy(struct pw_workload *dst, const struct pw_workload *src);

/* One op as measured: its times in the shown iteration, seconds from
 * that iteration's start, and its duration in every measured iteration. */
struct pw_measured_op {
	struct pw_op op;
	int	device;
	double	start;
	double	end;
	/* When the tensor it waits for from another device arrived (an F
	 * after a device boundary, a B before one); NAN when none.  What
	 * calibration fits comm from: arrive less the sender's end. */
	double	arrive;
	double	*durations;	/* [iterations] */
};

/* The backends and transports a measured file may name (its format's
 * words, which the runtime writes): "cpu", "cuda"; "local", "mpi". */
#define PW_NMEASURED_BACKENDS	2
#define PW_NMEASURED_TRANSPORTS	2
extern const char *const pw_measured_backends[PW_NMEASURED_BACKENDS];
extern const char *const pw_measured_transports[PW_NMEASURED_TRANSPORTS];

struct pw_measured {
	char	*backend;	/* one of pw_measured_backends */
	char	*transport;	/* one of pw_measured_transports */
	char	*host;		/* the host; "a,b" for several */
	bool	emulated;	/* pipeline devices shared a GPU, or CPU cores */
	int	iterations;	/* measured, after the warm-up */
	int	warmup;
	int	shown;		/* the iteration OPS' times are from: the median
				 * step's, the lower middle one for an even count */
	double	*step;		/* [iterations] seconds, an iteration's start to its last op's end */
	double	*loss;		/* [iterations] mean loss over the microbatches */
	int	devices;
	double	*peak;		/* [devices] bytes, static included */
	size_t	nops;
	struct pw_measured_op *ops;	/* every op of the schedule, once */
	struct pw_workload workload;
};

/* Returns a measured run the caller owns, sized for DEVICES, NOPS ops
 * (each with ITERATIONS durations) and ITERATIONS steps, all zero, the
 * ops' arrive NAN, strings NULL; NULL when DEVICES or ITERATIONS is
 * negative, ITERATIONS is above PW_MAX_ITERATIONS or the durations
 * would not fit in memory's address space. */
struct pw_measured *pw_measured_new(int devices, size_t nops, int iterations);
void	pw_measured_free(struct pw_measured *);
struct pw_measured *pw_measured_copy(const struct pw_measured *);
/* The median of the measured steps (the mean of the middle two for an
 * even count, where SHOWN is the lower middle iteration). */
double	pw_measured_step(const struct pw_measured *);
/* Checks M against PROBLEM and SCHED: its devices, one entry per op of
 * the schedule, finite non-negative times with end >= start, iterations
 * and shown in range, its workload's shape.  SCHED may be NULL (what
 * calibration has): then each op must be an op of PROBLEM, once, on its
 * stage's device.  WHERE prefixes the message ("WHERE: measured.FIELD:
 * ..."). */
int	pw_measured_validate(const struct pw_problem *, const struct pw_schedule *,
	    const struct pw_measured *, const char *where, struct pw_error *);
/* AT (pw_op_universe(PROBLEM) entries, the caller's) gets, by op
 * index, each op's entry in M->ops, SIZE_MAX for an op M does not list.
 * M must pass pw_measured_validate against PROBLEM. */
void	pw_measured_index(const struct pw_problem *, const struct pw_measured *,
	    size_t *at);
/* The shown iteration as timed ops (sorted by start; the caller frees
 * them, *N of them), transfers' bytes and reloads' anchors from PROBLEM
 * and SCHED: what the checker, the views and the designer take.  NULL
 * (*N 0) when M does not pass pw_measured_validate against PROBLEM. */
struct pw_timed_op *pw_measured_timed(const struct pw_problem *,
	    const struct pw_schedule *, const struct pw_measured *, size_t *n);

/* The shown iteration as a timing (the caller frees it; no binds), for
 * pw_metrics_compute and every view that draws a timing: a measured run
 * shows like any schedule.  NULL with ERR when M does not match. */
struct pw_timing *pw_measured_timing(const struct pw_problem *,
	    const struct pw_measured *, struct pw_error *);

/* Measured against predicted (eval --against): per op, both durations
 * and starts; per device, busy and peak; both step times. */
struct pw_op_error {
	struct pw_op op;
	int	device;
	double	predicted_start, predicted;	/* duration */
	double	measured_start, measured;	/* the shown iteration's */
};

struct pw_measured_cmp {
	double	step_predicted;		/* the simulated makespan */
	double	step_measured;		/* pw_measured_step */
	int	devices;
	double	*busy_predicted, *busy_measured;	/* [devices] */
	double	*peak_predicted, *peak_measured;	/* [devices] */
	size_t	nops;
	struct pw_op_error *ops;	/* by |measured - predicted| duration, largest first */
	double	mean_abs_error;		/* mean over ops of |measured - predicted| / predicted
					 * (ops with a zero prediction aside) */
};

/* Compares M with the simulation of SCHED on PROBLEM (TIMING, METRICS).
 * Fills OUT (the caller frees it with pw_measured_cmp_free).  Returns
 * PW_OK, or PW_ERR_INPUT when M does not match the schedule. */
int	pw_measured_compare(const struct pw_problem *, const struct pw_schedule *,
	    const struct pw_timing *, const struct pw_metrics *,
	    const struct pw_measured *, struct pw_measured_cmp *out, struct pw_error *);
void	pw_measured_cmp_free(struct pw_measured_cmp *);

/* ------------------------------------------------------------------ */
/* Checker: verifies timed ops from first principles, sharing no code  */
/* with the simulator.                                                 */

/* What a violation is about. */
enum pw_violation_kind {
	PW_VIOL_SHAPE,		/* the ops as listed: out of range, repeated,
				 * on a wrong device or channel, missing */
	PW_VIOL_DURATION,	/* an op's end - start is not its duration */
	PW_VIOL_DEPENDENCY,	/* an op starts before what it waits for */
	PW_VIOL_ANCHOR,		/* a reload starts before its anchor allows,
				 * or its anchor is no listed compute op of
				 * its device; an anchor on another op */
	PW_VIOL_OVERLAP,	/* two ops share a device or a channel */
	PW_VIOL_MEMORY,		/* a device above its limit */
	PW_VIOL_PIN,		/* a pin's after starts before its before */
};

/* One violation as data, for a front end to point at; MSG is the line
 * built from it.  OP and OTHER are always ops of the problem (a listed
 * entry outside it has no op); RESOURCE is the shared device or channel
 * of an overlap, the device of a memory violation, or the device an op
 * is wrongly stated on. */
struct pw_violation {
	enum pw_violation_kind kind;
	bool	has_op;
	struct pw_op op;	/* the op at fault */
	bool	has_other;
	struct pw_op other;	/* the op it conflicts with or waits for */
	int	resource;	/* pw_where's numbering; -1 when none */
	double	at;		/* the instant, NAN when none */
	double	bytes;		/* memory violations: bytes above the
				 * limit, else NAN */
};

struct pw_violations {
	int	n;
	int	cap;
	char	**msg;			/* [n]: the lines */
	struct pw_violation *item;	/* [n]: the same as data */
};

/* Fills OUT with one line per violation (tolerances of 1e-9 of the durations
 * compared plus 1e-9 of the problem's scale, its busiest device's compute
 * time, never of the clock).  Returns the number of violations. */
int	pw_check(const struct pw_problem *, const struct pw_timed_op *, size_t n,
	    struct pw_violations *out);
/* pw_check for a measured timeline: durations as stated (a run's own),
 * and across devices only causality (an op starts no earlier than what
 * it waits for ends: the run's comm is its own too); all else as
 * pw_check. */
int	pw_check_measured(const struct pw_problem *, const struct pw_timed_op *,
	    size_t n, struct pw_violations *out);
/* pw_check (MEASURED: pw_check_measured) of a schedule file, and each of
 * its NPINS PINS holding: its before starts no later than its after. */
int	pw_check_file(const struct pw_problem *, const struct pw_timed_op *,
	    size_t n, bool measured, const struct pw_pin *pins, size_t npins,
	    struct pw_violations *out);
void	pw_violations_free(struct pw_violations *);

/* ------------------------------------------------------------------ */
/* Schedule families: one registry row each                            */

/* How a family needs the stages laid out on the devices. */
enum pw_layout {
	PW_LAYOUT_SINGLE,	/* one stage per device, stage s on device s */
	PW_LAYOUT_LOOP,		/* loop placement, at least 2 stages per device */
	PW_LAYOUT_V,		/* V placement, 2 stages per device */
};

struct pw_family {
	const char *name;	/* "1f1b", "zb-h1", ... */
	const char *summary;	/* one line for --help and compare */
	enum pw_layout layout;
	/* Builds the family's schedule for PROBLEM; PW_ERR_NOT_APPLICABLE
	 * with the reason when it does not apply. */
	int	(*build)(const struct pw_problem *, struct pw_schedule **out,
		    struct pw_error *);
	/* Why Megatron-LM has no such schedule (export --to megatron);
	 * NULL for one it runs. */
	const char *megatron;
};

extern const struct pw_family pw_families[];
extern const size_t pw_nfamilies;
const struct pw_family *pw_family_find(const char *name);
/* Builds FAM's schedule for PROBLEM.  When PROBLEM's stages are not laid
 * out as FAM needs and PROBLEM has an origin, its model is split again
 * (a loop of one chunk per layer on each device, or the V).  Returns PW_OK
 * with the problem the schedule is for in *USED (the caller owns it: a
 * copy of PROBLEM or its new split) and the schedule in *OUT (the caller
 * owns it); else the family's refusal, saying why no split fits. */
int	pw_family_build(const struct pw_family *, const struct pw_problem *,
	    struct pw_problem **used, struct pw_schedule **out, struct pw_error *);
/* The stages pw_family_build would split PROBLEM's model into for FAM,
 * or 0 where it builds on PROBLEM's own stages: what a caller that
 * keeps the stages, or bounds the chunks, knows before the build. */
int	pw_family_split_stages(const struct pw_family *,
	    const struct pw_problem *);
/* The forwards device D of DEVICES runs before its first backward under
 * 1F1B (CHUNKS 1) or Megatron's interleaved 1F1B (CHUNKS stages per
 * device, loop placement), with MICROBATCHES microbatches. */
int	pw_warmup_forwards(int devices, int chunks, int microbatches, int d);

/* ------------------------------------------------------------------ */
/* Offload planner: activations to host memory and back without moving */
/* any compute op                                                      */

enum pw_offload_select {
	/* PipeOffload's rule: in the order their forwards end, every
	 * activation the rule names except those whose F-to-B gap (less
	 * the margin) is at most three round trips (the authors' "lazy"
	 * rule). */
	PW_OFFSEL_LAZY,
	/* The rule, then peak shaving: on the device with the highest peak,
	 * moves an activation resident at the peak (longest gap first, any
	 * activation with offload bytes), until no device's peak can fall. */
	PW_OFFSEL_PEAK,
};

struct pw_offload_opts {
	enum pw_offload_select select;
	/* A reload ends at least margin times its backward's duration
	 * before the backward starts (the authors use 1). */
	double	margin;
	/* [nstages * microbatches], stage-major: the activations the rule
	 * considers; NULL for all of them. */
	const bool *rule;
};

/* Adds OFFLOAD and RELOAD ops and reload anchors to SCHED, which must
 * hold compute orders only: each moved activation leaves in the first
 * window its channel has free after its F, and comes back at the latest
 * instant that lets the reload end the margin before its backward: a
 * compute op's start (then its anchor) or the end of the transfer before
 * it on the channel (anchored to the last compute op started by then).
 * No compute op moves, so the makespan stays SCHED's own.  Returns PW_OK;
 * PW_ERR_INPUT (bad options, transfers already there, malformed orders)
 * or PW_ERR_DEADLOCK from simulating SCHED, which is then unchanged. */
int	pw_offload_plan(const struct pw_problem *, struct pw_schedule *,
	    const struct pw_offload_opts *, struct pw_error *);
/* The same for SCHED already simulated, as TIMING with metrics MET (of
 * SCHED as it is, compute orders only; both stay the caller's), which a
 * caller planning one layout many ways need not simulate again; the
 * planned schedule's metrics in *RESULT unless RESULT is NULL (the
 * caller frees them; NULL with an error).  Returns PW_OK, PW_ERR_INPUT
 * as pw_offload_plan, or PW_ERR_INTERNAL (a bug) when the planned
 * schedule does not simulate. */
int	pw_offload_plan_timed(const struct pw_problem *, struct pw_schedule *,
	    const struct pw_timing *, const struct pw_metrics *,
	    const struct pw_offload_opts *, struct pw_metrics **result,
	    struct pw_error *);

/* ------------------------------------------------------------------ */
/* Interchange (JSON, docs/format.md)                                  */

/* Reads a problem file, or the problem inside a schedule file.  Errors
 * name the file, the field and the value.  Returns a problem the caller
 * owns, or NULL. */
struct pw_problem *pw_problem_read(const char *path, struct pw_error *);
/* Reads a schedule file: its problem, its timed ops and the family that
 * built it (*FAMILY NULL when the file names none; FAMILY may be NULL
 * when not wanted); the caller owns all three. */
int	pw_schedule_read(const char *path, struct pw_problem **problem,
	    struct pw_timed_op **ops, size_t *nops, char **family,
	    struct pw_error *);
/* pw_schedule_read with the file's pins, as pw_file_read_pins reads them
 * (*PINS NULL when there are none), and no family. */
int	pw_schedule_read_pins(const char *path, struct pw_problem **problem,
	    struct pw_timed_op **ops, size_t *nops, struct pw_pin **pins,
	    size_t *npins, struct pw_error *);
/* Reads a problem file or a schedule file, whichever PATH holds, in one
 * pass: as pw_schedule_read, with *OPS NULL, *NOPS 0 and *FAMILY NULL
 * for a problem file. */
int	pw_file_read(const char *path, struct pw_problem **problem,
	    struct pw_timed_op **ops, size_t *nops, char **family,
	    struct pw_error *);
/* PW_OK where a JSON file named PATH would be read back as JSON, else
 * PW_ERR_INPUT with ERR set: every reader takes a name ending in .lua
 * for a Lua script and one ending in .csv for a PyTorch schedule CSV,
 * so the JSON writers below refuse those names rather than leave a file
 * nothing reads.  Commands ask it before their work, not after. */
int	pw_json_path_check(const char *path, struct pw_error *);
/* Writes atomically; PATH "-" is stdout. */
int	pw_problem_write(const char *path, const struct pw_problem *, struct pw_error *);
int	pw_schedule_write(const char *path, const struct pw_problem *,
	    const struct pw_schedule *, const struct pw_timing *, struct pw_error *);
/* The same with the user's pins (NPINS may be 0): the file's "pins", and
 * the schedule's measured run (M, NULL for none): its "measured". */
int	pw_schedule_write_with(const char *path, const struct pw_problem *,
	    const struct pw_schedule *, const struct pw_timing *,
	    const struct pw_pin *pins, size_t npins, const struct pw_measured *m,
	    struct pw_error *);
/* pw_file_read, also giving the file's pins (*PINS, the caller frees
 * it; NULL and 0 when it has none, and for a problem file) and its
 * family as pw_schedule_read does.  A pin must name two compute ops of
 * the problem on one device.  OPS and NOPS may be NULL: the ops are
 * then skipped (their syntax checked), as pw_problem_read does, for the
 * problem and pins alone. */
int	pw_file_read_pins(const char *path, struct pw_problem **problem,
	    struct pw_timed_op **ops, size_t *nops, struct pw_pin **pins,
	    size_t *npins, char **family, struct pw_error *);

/* The same onto FP, and read back from FP (LABEL names it in errors):
 * what a transport that carries a schedule as bytes (MPI's broadcast)
 * writes into open_memstream and reads from fmemopen.  The reader reads
 * a problem file or a schedule file, as pw_file_read; OPS (with NOPS) or
 * MEASURED may be NULL when not wanted, and *MEASURED is NULL when the
 * file has no run.  The run is validated against the file's problem and
 * schedule. */
int	pw_schedule_write_stream(FILE *fp, const struct pw_problem *,
	    const struct pw_schedule *, const struct pw_timing *,
	    const struct pw_measured *, struct pw_error *);
int	pw_file_read_stream(FILE *fp, const char *label, struct pw_problem **problem,
	    struct pw_timed_op **ops, size_t *nops, struct pw_measured **measured,
	    struct pw_error *);
/* The measured run of the schedule file PATH: PW_OK with *OUT the run
 * (the caller owns it), or NULL when the file has none (a problem file
 * has none); else the reader's error naming the file and the field. */
int	pw_measured_read(const char *path, struct pw_measured **out, struct pw_error *);
/* pw_file_read with the file's measured run (*MEASURED, NULL when it
 * has none, as a problem file has none), in one reading of the file. */
int	pw_schedule_read_run(const char *path, struct pw_problem **problem,
	    struct pw_timed_op **ops, size_t *nops, char **family,
	    struct pw_measured **measured, struct pw_error *);

/* The longest text (a name, a family) any file carries, in bytes: the
 * readers refuse a longer JSON string at once (yajl's time grows with
 * the square of a string's length), so the writers never write one. */
#define PW_TEXT_MAX	(1 << 20)

/* Whether S is text every format can carry: valid UTF-8 (JSON refuses
 * anything else) of at most PW_TEXT_MAX bytes. */
bool	pw_text_valid(const char *s);
/* PW_OK when S is NULL (absent) or valid text, else PW_ERR_INPUT with
 * "WHERE: FIELD: must be valid UTF-8 text" or "...: longer than 1 MiB". */
int	pw_text_check(const char *s, const char *where, const char *field,
	    struct pw_error *);

/* The built-in default problem, a GPT-3-like model on 8 devices: a
 * problem the caller owns. */
struct pw_problem *pw_problem_default(void);

/* ------------------------------------------------------------------ */
/* Cost model: a transformer on some hardware, split into stages       */
/* (docs/cost-model.md gives every formula and its units)              */

enum pw_recompute {
	PW_RECOMPUTE_NONE,
	PW_RECOMPUTE_PIPEOFFLOAD, /* LayerNorm, GeLU, dropout: about 20sbh a layer */
	PW_RECOMPUTE_FULL,	/* keep only each layer's input (2sbh), redo F in B */
};
/* R's name in the file format: "none", "pipeoffload", "full" (static). */
const char *pw_recompute_name(enum pw_recompute r);
/* R as tables and screens show it: the command line's word ("none",
 * "selective", "full"; beside an offload column, the files'
 * "pipeoffload" reads as offloading) (static). */
const char *pw_recompute_label(enum pw_recompute r);
/* Those names indexed by value, NULL after the last: the one table, for
 * a front end's list of choices. */
extern const char *const pw_recompute_names[];
/* Reads a recomputation's name: those pw_recompute_name and
 * pw_recompute_label give ("selective" for PW_RECOMPUTE_PIPEOFFLOAD), in
 * any case.  False, *OUT untouched, otherwise. */
bool	pw_recompute_parse(const char *s, enum pw_recompute *out);
/* The names it reads, for a message saying what a field must be. */
#define PW_RECOMPUTE_CHOICES \
	"\"none\", \"pipeoffload\" (or \"selective\"), \"full\""

/* The most layers a model may have (pw_model_check). */
#define PW_MODEL_MAX_LAYERS	100000

struct pw_model {
	const char *name;
	int	layers;		/* 1 to PW_MODEL_MAX_LAYERS */
	int	hidden;		/* h */
	int	heads;		/* a, query heads; divides h */
	int	kv_heads;	/* key/value heads (GQA), divides a; 0 = a */
	int	ffn;		/* MLP width; 0 = 4h */
	int	seq;		/* s */
	int	vocab;		/* V */
	int	micro_batch;	/* b */
	bool	flash_attention; /* no s x s attention scores are stored */
	enum pw_recompute recompute;
	bool	gated_mlp;	/* SwiGLU: three h x f matrices, not two */
	bool	tied_embeddings; /* the LM head reuses the embedding's weights */
};

struct pw_hardware {
	const char *name;
	double	peak_flops;	/* dense bf16 FLOP/s */
	double	efficiency;	/* achieved fraction of the peak, in (0, 1] */
	double	memory;		/* bytes */
	double	pcie_d2h, pcie_h2d; /* bytes/s, device to host and back */
	double	pcie_latency;	/* seconds */
	double	p2p_bandwidth;	/* bytes/s, one direction between two devices */
	double	p2p_latency;	/* seconds */
};

enum pw_placement {
	PW_PLACE_LOOP,		/* pw_problem_place_loop */
	PW_PLACE_V,		/* pw_problem_place_v: needs 2 chunks */
};
/* Their names by value ("loop", "v"), NULL after the last: the one table
 * that files, scripts, the command line and the designer read. */
extern const char *const pw_placement_names[];
#define PW_NPLACEMENTS	2
/* The device of stage S (of NSTAGES on DEVICES) under PLACEMENT: s mod
 * p for loop; for V, s below p and 2p-1-s above (V needs S = 2p). */
int	pw_placement_device(enum pw_placement, int devices, int nstages, int s);
/* The stage of device D's chunk K (0 first, in pipeline order) under
 * PLACEMENT: D + K p for loop; for V, D then 2p-1-D. */
int	pw_placement_stage(enum pw_placement, int devices, int nstages, int d,
	    int k);

struct pw_split {
	int	devices;
	int	chunks;		/* stages per device */
	enum pw_placement placement;
	int	microbatches;
	/* [devices * chunks] layers of each stage in pipeline order (each at
	 * least 1, summing to the model's layers); NULL splits evenly
	 * (pw_split_layers). */
	const int *layers_per_stage;
	double	memory_limit;	/* bytes per device; 0 = the hardware's memory;
				 * DBL_MAX = none (INFINITY in the problem:
				 * a split's numbers are finite) */
	bool	offload;	/* a duplex PCIe link, devices paired {0,1},{2,3},... */
	/* Held back from every device's limit for the allocator's
	 * fragmentation and workspaces: RESERVE_BYTES plus RESERVE_FRACTION
	 * (in [0, 1)) of the limit; both 0: none. */
	double	reserve_bytes;
	double	reserve_fraction;
	/* Tensor parallelism within a stage (each pipeline device is TP
	 * GPUs: compute and weights divided, an all-reduce per layer on the
	 * hardware's p2p link) and ZeRO-1 data parallelism (the optimizer
	 * state divided among DP replicas); 0 or 1: none. */
	int	tp;
	int	dp;
};

/* What a problem was built from; owns its strings and its list. */
struct pw_origin {
	struct pw_model model;
	struct pw_hardware hardware;
	struct pw_split split;
};

/* Returns a deep copy the caller owns (NULL for NULL). */
struct pw_origin *pw_origin_copy(const struct pw_origin *);
/* The layers of stage S of the split: its list's, or the even share
 * when it has none: the remainder on the middle stages, or under V, whose
 * middle stages share devices, by device (devices p-1 down to 0, one
 * each, then a second round), on a device's first chunk first. */
int	pw_split_layers(const struct pw_split *, int layers, int s);
/* Shares N layers (at least SPLIT's chunks) among device D's stages,
 * writing each stage's count to LAYERS[s] (pipeline order; the other
 * stages' untouched): evenly, the remainder to the stages holding
 * neither the embedding nor the LM head first, then to the embedding's,
 * the head's last, so that the end stages, which carry the most beside
 * their layers, are the lightest.  The one rule for a device's chunks,
 * shared by the partition search and pw_problem_resplit. */
void	pw_split_share(const struct pw_split *, int d, int n, int *layers);
void	pw_origin_free(struct pw_origin *);

/* Builds the problem of MODEL on HW split as SPLIT and validates it; the
 * problem's origin records the three.
 * Returns PW_OK and a problem the caller owns in *OUT, or PW_ERR_INPUT
 * with one line naming the model, hardware or split field at fault. */
int	pw_cost_problem(const struct pw_model *, const struct pw_hardware *,
	    const struct pw_split *, struct pw_problem **out, struct pw_error *);
/* The checks pw_cost_problem makes of its three inputs before building
 * anything: PW_OK, or PW_ERR_INPUT naming the field at fault. */
int	pw_cost_check(const struct pw_model *, const struct pw_hardware *,
	    const struct pw_split *, struct pw_error *);
/* Its checks of SPLIT's shape for MODEL (a placement it knows, V with 2
 * chunks, devices x chunks stages that MODEL's layers fill with at least
 * one each), for a front end that sizes work by the stage count before
 * the rest: PW_OK, or PW_ERR_INPUT saying which. */
int	pw_split_check_shape(const struct pw_model *, const struct pw_split *,
	    struct pw_error *);
/* Its checks of a model alone (counts, heads dividing hidden, kv_heads
 * dividing heads) and of hardware alone (rates, efficiency in (0, 1];
 * OFFLOAD: the PCIe link's rates too), for a front end that makes one
 * before any split: PW_OK, or PW_ERR_INPUT naming the field. */
int	pw_model_check(const struct pw_model *, struct pw_error *);
int	pw_hardware_check(const struct pw_hardware *, bool offload,
	    struct pw_error *);
/* What pw_cost_problem gives stage S of SPLIT when it holds LAYERS
 * layers (the embedding on stage 0, the LM head on the last): its costs
 * in *OUT (device, f, b, w, act, hold, offload, comm) and the static
 * bytes it adds to its device in *STATIC_BYTES.  The three inputs must
 * pass pw_cost_check; LAYERS may differ from the split's own count (a
 * split search asks what a stage would cost). */
void	pw_cost_stage(const struct pw_model *, const struct pw_hardware *,
	    const struct pw_split *, int s, int layers, struct pw_stage *out,
	    double *static_bytes);
/* The bytes of every device's limit that SPLIT holds back (its reserve)
 * for a limit of LIMIT bytes. */
double	pw_split_reserve(const struct pw_split *, double limit);
/* The bytes a device may use under SPLIT on HW: its limit (the split's,
 * else the hardware's memory) less the reserve; INFINITY when the split
 * has none (memory_limit DBL_MAX). */
double	pw_split_room(const struct pw_split *, const struct pw_hardware *);

/*
 * The partition search: the layers of each stage of SPLIT (its devices,
 * chunks, placement, microbatches, limit and the rest as given; its own
 * list ignored) that minimise the bottleneck, the largest per-microbatch
 * compute (f + b + w) of any device, with every device's static bytes
 * plus INFLIGHT[d] activations of its largest stage (NULL: what 1F1B
 * keeps, min(m, p - d) for one chunk, and the interleaved count for
 * more) within its limit less the reserve.  Exact for that model: a
 * dynamic program over layer boundaries (over the devices' layer counts,
 * each device's then shared among its chunks with the LM head's and the
 * embedding's chunks lightest, when there are several chunks).  Among
 * splits of the least bottleneck it takes the one with the least sum of
 * squared device loads.  Writes devices * chunks counts to LAYERS and
 * the bottleneck's seconds to *BOTTLENECK (may be NULL).  Returns PW_OK;
 * PW_ERR_NOT_APPLICABLE when no split fits (naming the device that
 * cannot hold even one layer's stage); PW_ERR_INPUT for bad inputs.
 */
int	pw_split_balance(const struct pw_model *, const struct pw_hardware *,
	    const struct pw_split *, const int *inflight, int *layers,
	    double *bottleneck, struct pw_error *);
/* pw_split_balance with what 1F1B keeps in flight, else (no split keeps
 * that much, where V and offloading schedules need not) with one
 * activation per device, what every schedule keeps; the second's
 * result and error when the first finds no split. */
int	pw_split_balance_fit(const struct pw_model *,
	    const struct pw_hardware *, const struct pw_split *, int *layers,
	    double *bottleneck, struct pw_error *);
/* The most layers SPLIT's devices hold within their limits less the
 * reserve with INFLIGHT[d] activations (NULL: what 1F1B keeps), each
 * with at least a layer per chunk: what pw_split_balance's refusal
 * names.  0 when a device cannot hold even that: *NEED (when not NULL)
 * is then the bytes the first such device needs for it, else 0.  -1
 * for bad inputs (what pw_split_balance refuses as PW_ERR_INPUT). */
long	pw_split_most_layers(const struct pw_model *,
	    const struct pw_hardware *, const struct pw_split *,
	    const int *inflight, double *need);

/* Splits PROBLEM's model again with PLACEMENT and CHUNKS stages per
 * device, keeping everything else (its name too): each device keeps the
 * layers the split gave it (shared among its chunks, the LM head's and the
 * embedding's lightest), so an uneven split stays as balanced, and the
 * new origin states its layers_per_stage explicitly.  Returns PW_OK
 * and a problem the caller owns; PW_ERR_NOT_APPLICABLE when the problem
 * has no origin or its layers do not split that way. */
int	pw_problem_resplit(const struct pw_problem *, enum pw_placement,
	    int chunks, struct pw_problem **out, struct pw_error *);

/* PipeOffload's Eq. 1: one layer's activation round trip over its F+B+W
 * compute, k = 10 / (3(6h + s)) * compute_rate / pcie_bandwidth
 * (FLOP/s and bytes/s).  Offloading everything is free when k <= 1. */
double	pw_offload_ratio(int hidden, int seq, double compute_rate,
	    double pcie_bandwidth);

/* Presets: one registry row each; find ignores case, NULL when unknown. */
extern const struct pw_hardware pw_hardware_presets[];
extern const size_t pw_nhardware_presets;
const struct pw_hardware *pw_hardware_find(const char *name);
extern const struct pw_model pw_model_presets[];
extern const size_t pw_nmodel_presets;
const struct pw_model *pw_model_find(const char *name);

/* ------------------------------------------------------------------ */
/* Views                                                               */

/* Text Gantt chart, one row per device and per used channel, WIDTH columns. */
void	pw_show(FILE *, const struct pw_problem *, const struct pw_schedule *,
	    const struct pw_timing *, const struct pw_metrics *, int width);
/* pw_show of the time window FROM to TO, seconds from the schedule's
 * start (NAN: its start, its end): PW_OK, or PW_ERR_INPUT, nothing
 * printed, when FROM is not before TO or either falls outside the
 * schedule. */
int	pw_show_window(FILE *, const struct pw_problem *,
	    const struct pw_schedule *, const struct pw_timing *,
	    const struct pw_metrics *, int width, double from, double to,
	    struct pw_error *);
/* Metrics as text. */
void	pw_metrics_print(FILE *, const struct pw_problem *, const struct pw_metrics *);
/* Prints ROOT (jansson's json_t, taken) indented on FP, with a newline:
 * PW_OK, or PW_ERR_IO when FP refuses it. */
struct json_t;
int	pw_json_print(FILE *, struct json_t *root);
/* The JSON object of the metrics, which the caller owns, for a front end
 * to add its own members to (pw_json_print prints it). */
struct json_t *pw_metrics_json(const struct pw_problem *, const struct pw_metrics *);
/* A table of NROWS rows of NCOLS cells (row-major, the first row the
 * header), each column as wide as its widest cell, two blanks apart, no
 * blank at the end of a line; the columns' widths go to WIDTHS ([NCOLS])
 * unless it is NULL. */
#define PW_TABLE_CELL	160
void	pw_table_print(FILE *, const char (*cell)[PW_TABLE_CELL], size_t nrows,
	    int ncols, int *widths);
/* compare's orders: its --sort keys, one name each in pw_compare_sorts. */
enum pw_compare_sort {
	PW_COMPARE_MAKESPAN,	/* fastest first */
	PW_COMPARE_MEMORY,	/* the smallest largest peak first */
	PW_COMPARE_BUBBLE,	/* the lowest bubble rate first */
	PW_COMPARE_NAME,	/* by family name */
	PW_COMPARE_NSORTS
};
extern const char *const pw_compare_sorts[PW_COMPARE_NSORTS];
/* compare's forms. */
enum pw_compare_form {
	PW_COMPARE_TEXT,	/* the best line, the table, notes, peaks */
	PW_COMPARE_JSON,	/* one object */
	PW_COMPARE_CSV		/* RFC 4180: a header, one record per family */
};
/* After compare's table: a warning when the busiest device's work
 * exceeds the best split's bottleneck (or, for given stages, the mean of
 * the devices') by more than 10% (pw_problem_imbalance), naming REPLAN,
 * the command that plans PROBLEM's model again ("pipewright plan FILE"),
 * or saying how to describe the model when the stages were given;
 * nothing otherwise. */
void	pw_compare_warn(FILE *, const struct pw_problem *, const char *replan);

/* How a format writes: a picture's size in pixels, each 0 for the
 * default (1200 wide, as high as its rows need; the writer refuses a
 * height too small for its rows), and what the timing is when it is not
 * the schedule's simulated one ("measured (cpu, 5 iterations, median
 * step)"), which the title and the trace's name then carry; NULL
 * otherwise. */
struct pw_export_options {
	int	width;
	int	height;
	const char *timeline;
};
#define PW_EXPORT_WIDTH_MIN	320
#define PW_EXPORT_WIDTH_MAX	16384
#define PW_EXPORT_HEIGHT_MIN	120
#define PW_EXPORT_HEIGHT_MAX	16384

/* Megatron-LM (megatron.c; docs/interop.md): the command-line flags that
 * make Megatron-LM run SCHED on PROBLEM (its pipeline size, virtual
 * stages, layer split, and with a model's problem its micro and global
 * batch), as one line in *FLAGS, which the caller frees; or
 * PW_ERR_NOT_APPLICABLE, *FLAGS NULL, with why Megatron has no
 * equivalent (offload, an optimizer-made order, a family it lacks). */
int	pw_megatron_flags(const struct pw_problem *, const struct pw_schedule *,
	    char **flags, struct pw_error *);
/* The line a report gives it: "megatron: FLAGS", or "megatron: Megatron
 * has no equivalent: REASON", without a newline; the caller frees it. */
char	*pw_megatron_line(const struct pw_problem *,
	    const struct pw_schedule *);
/* Prints pw_megatron_line and a newline. */
void	pw_megatron_print(FILE *, const struct pw_problem *,
	    const struct pw_schedule *);

/* PyTorch's compute_only schedule CSV (docs/interop.md): a row per
 * device (rank), a cell per step, "2F0" (F), "1I3" (B, PyTorch's input
 * backward), "1W3" (W), "0B5" (BW, its full backward), empty for an
 * idle step; a cell's step is one more than the latest of what it waits
 * for.  WITH_OFFLOAD adds a row per channel after the devices' of our
 * own tokens, "1O3" (OFFLOAD) and "1R3" (RELOAD, "1R3@1I5" anchored at
 * that op's start, "1R3@1I5+" at its end); without it the transfers are
 * left out.  PW_OK, or PW_ERR_DEADLOCK when the orders have no step
 * order, PW_ERR_INPUT when they are malformed. */
int	pw_torch_write(FILE *, const struct pw_problem *,
	    const struct pw_schedule *, bool with_offload, struct pw_error *);
/* The transfers a plain torch-csv leaves out of SCHED. */
size_t	pw_torch_dropped(const struct pw_schedule *);
/* Reads such a CSV (either form) from FP as a schedule for PROBLEM,
 * which supplies the costs, into *OUT (the caller owns it): each row's
 * ops in their cells' order, transfers by their channel's row.  Checks
 * what PyTorch's _validate_schedule checks (a row per rank, each stage's
 * ops on its device's row, every stage's m forwards, F before I or B, I
 * before W, as many I as W) and the problem's ranges.  Errors are one
 * line, "LABEL:LINE:COL: ...".  PW_OK, PW_ERR_INPUT, or PW_ERR_IO. */
int	pw_torch_read(FILE *, const char *label, const struct pw_problem *,
	    struct pw_schedule **out, struct pw_error *);
/* pw_torch_read of the file PATH ("-": stdin). */
int	pw_torch_read_file(const char *path, const struct pw_problem *,
	    struct pw_schedule **out, struct pw_error *);
/* Whether PATH names a CSV (ends in ".csv", any case). */
bool	pw_torch_is_csv(const char *path);

/* Export formats: one registry row each. */
struct pw_export_format {
	const char *name;	/* "chrome", "svg" */
	const char *summary;
	/* OPTIONS NULL for the defaults; a format that is not sized
	 * ignores the size, one that has no title the timeline. */
	int	(*write)(FILE *, const struct pw_problem *, const struct pw_schedule *,
		    const struct pw_timing *, const struct pw_metrics *,
		    const struct pw_export_options *, struct pw_error *);
	/* A picture: it takes a width and a height. */
	bool	sized;
	/* The format has no place for transfers: the caller warns when the
	 * schedule has some (pw_torch_dropped counts them). */
	bool	drops_transfers;
	/* Bytes no terminal shows (a PNG): the command line keeps them off
	 * one. */
	bool	binary;
};

extern const struct pw_export_format pw_export_formats[];
extern const size_t pw_nexport_formats;
const struct pw_export_format *pw_export_find(const char *name);

#endif /* PIPEWRIGHT_H */
