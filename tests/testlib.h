/*
 * testlib.h - what several test programs build and look at the same way:
 * uniform problems, the hand-timed schedules of the simulator's and the
 * metrics' tests, a family built and simulated, and the checker's verdict.
 * Failures print as failed test lines or come back as strings.
 */
#ifndef PW_TESTLIB_H
#define PW_TESTLIB_H

#include <stdbool.h>

#include "pipewright.h"

struct test_zb_case;

/* The op (KIND, STAGE, MB), for orders written by hand. */
struct pw_op	test_op(enum pw_kind kind, int stage, int mb);

/* A model and hardware whose costs are exact in binary: s = 8, b = 2,
 * h = 16, a = 2, V = 100 (so sbh = 256) on 2^20 * 0.5 = 2^19 FLOP/s. */
extern const struct pw_model test_tiny_model;
extern const struct pw_hardware test_toy_hw;

/* Returns the whole file NAME, a string the caller frees, or NULL when it
 * cannot be read. */
char	*test_read_file(const char *name);

/* Returns a problem the caller frees: P devices with V stages each in
 * PLACE (V placement needs v = 2), M microbatches, every stage *STAGE but
 * for its device, and STAGE's comm between devices.  Aborts when the
 * placement does not fit: the tests ask only for ones that do. */
struct pw_problem *test_problem_uniform(int p, int v, int m,
	    enum pw_placement place, const struct pw_stage *stage);
/* Returns a problem the caller frees: P devices, one stage each (stage d
 * on device d), M microbatches, f = b = w = 1, act 1, hold 0.5, comm
 * COMM, every limit LIMIT (INFINITY for none). */
struct pw_problem *test_problem_unit(int p, int m, double comm, double limit);
/* Returns a problem the caller frees, bench_solver's case (d): as
 * test_problem_unit with comm 0.02, but stage costs around 1 (+-20%), B
 * 0-30% above F, W half to all of F, drawn by splitmix64 from P and M
 * only, so that every limit of a scale sees the same stages. */
struct pw_problem *test_problem_uneven(int p, int m, double limit);
/* The stage of a Zero Bubble table's setting C when each device runs V
 * chunks: its times and memory split evenly between them. */
struct pw_stage	test_zb_stage(const struct test_zb_case *c, int v);

/* Returns a problem the caller frees, PipeOffload's setting: D devices
 * with V stages each (loop placement), M microbatches, unit times, act 1
 * and HOLD, every stage able to move its whole activation, with K > 0
 * pairs of devices sharing a half-duplex link on which a transfer takes
 * 3K/4 (K = 0: no link), every limit LIMIT. */
struct pw_problem *test_po_problem(int d, int v, int m, double k,
	    double hold, double limit);

/* Returns a problem the caller frees for the two-device schedule below:
 * stage d on device d, 2 microbatches, f = 1, b = 1.5, w = 0.5, comm 0.5,
 * no memory. */
struct pw_problem *test_two_device_problem(void);
/* Returns the schedule the caller frees that the tests time by hand on
 * test_two_device_problem(): device 0 runs F F BW BW, device 1 F BW F BW. */
struct pw_schedule *test_two_device_schedule(const struct pw_problem *);
/* Returns a schedule the caller frees for one stage on one device with 2
 * microbatches: F(0,0) F(0,1), then microbatch 1's B and W before
 * microbatch 0's, and (0,0)'s activation offloaded and reloaded, the
 * reload anchored at B(0,1)'s start when ANCHORED. */
struct pw_schedule *test_offload_schedule(const struct pw_problem *,
	    bool anchored);

/* Returns SEQ as "F(0,0) BW(0,0) ...", a string the caller frees. */
char	*test_order(const struct pw_seq *);
/* True when A and B have the same orders and anchors. */
bool	test_same_schedule(const struct pw_schedule *a,
	    const struct pw_schedule *b);

/* The start of OP in T, or of its fused or split form where T has not OP
 * itself, as a pin names it (B or W of a fused backward is its BW, BW of
 * a split one its B). */
double	test_pinned_start(const struct pw_problem *, const struct pw_timing *,
	    struct pw_op);

/* Test lines that the registry has NAME, with a one-line summary.
 * Returns its row (the registry's, not to be freed), or NULL. */
const struct pw_family *test_registered(const char *name);
/* FAMILY on PROB, with a test line that FAMILY is registered and one that
 * it builds and simulates (WHAT names the case).  Returns the schedule and
 * its timing in *TIMING, both the caller's to free; or NULL, *TIMING NULL,
 * after a failed line. */
struct pw_schedule *test_simulate(const char *family,
	    const struct pw_problem *prob, const char *what,
	    struct pw_timing **timing);
/* NULL when every device of SCHED runs NOPS compute ops and no channel
 * carries a transfer; else what is wrong, a string the caller frees. */
char	*test_compute_only(const struct pw_schedule *sched, int nops);
/* NULL when the independent checker finds nothing wrong with SCHED timed
 * as TIMING; else its count and first message, a string the caller
 * frees. */
char	*test_checker(const struct pw_problem *, const struct pw_schedule *,
	    const struct pw_timing *);
/* Test lines that SCHED simulates, passes the checker and keeps every
 * limit of PROB.  Returns its metrics, and its timing in *TIMING unless
 * TIMING is NULL, both the caller's; NULL where it does not simulate. */
struct pw_metrics *test_valid_schedule(const struct pw_problem *prob,
	    const struct pw_schedule *sched, struct pw_timing **timing,
	    const char *what);
/* Test lines that FAMILY refuses PROB as not applicable, with no schedule
 * and exactly the reason WANT. */
void	test_refusal(const char *family, const struct pw_problem *prob,
	    const char *want);

#endif
