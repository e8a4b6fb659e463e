/*
 * family_classic.c - the handcrafted schedules: GPipe, 1F1B, interleaved
 * 1F1B, ZB-H1 and ZB-H2, in the op orders of the authors' generators
 * (shared/reference/pipeoffload.md, "Op orders of the handcrafted
 * schedules").
 *
 * Every one of them gives each device the same three phases: a warm-up of
 * forwards; a steady phase that alternates one forward (while any remain)
 * with the next backward; a cool-down of what is left.  They differ only
 * in the warm-up length and in whether the backward is fused; so one
 * emitter builds them all and a family is a descriptor below.
 *
 * None of them offloads: the schedules hold compute orders only.
 */
#include <assert.h>

#include "family.h"

struct pw_classic {
	const char *name;
	/* Loop placement with v >= 2 chunks per device (Megatron's
	 * interleaving); otherwise one stage per device, stage s on s. */
	bool	interleaved;
	/* Backward split into B and W (Zero Bubble); otherwise fused BW. */
	bool	split;
	/* Forwards device D runs before its first backward. */
	int	(*warmup)(const struct pw_problem *, int d);
};

static int
pw_min(int a, int b)
{
	return a < b ? a : b;
}

static int
pw_warmup_gpipe(const struct pw_problem *p, int d)
{
	(void)d;
	return p->microbatches;
}

static int
pw_warmup_1f1b(const struct pw_problem *p, int d)
{
	return pw_warmup_forwards(p->devices, 1, p->microbatches, d);
}

/* The Zero Bubble warm-ups are 1F1B's times a factor (1, 2) and are not
 * cut short: a problem with too few microbatches for device 0's warm-up
 * is refused instead (pw_classic_build). */
static int
pw_warmup_zb_h1(const struct pw_problem *p, int d)
{
	return p->devices - d - 1;
}

static int
pw_warmup_zb_h2(const struct pw_problem *p, int d)
{
	return 2 * (p->devices - d - 1);
}

static int
pw_warmup_interleaved(const struct pw_problem *p, int d)
{
	return pw_warmup_forwards(p->devices, p->nstages / p->devices,
	    p->microbatches, d);
}

/* Megatron's interleaved warm-up; one chunk is plain 1F1B's. */
int
pw_warmup_forwards(int devices, int chunks, int microbatches, int d)
{
	if (chunks == 1)
		return pw_min(devices - d - 1, microbatches);
	return pw_min((devices - d - 1) * 2 + (chunks - 1) * devices,
	    microbatches * chunks);
}

static const struct pw_classic pw_gpipe = {
	"gpipe", false, false, pw_warmup_gpipe
};
static const struct pw_classic pw_1f1b = {
	"1f1b", false, false, pw_warmup_1f1b
};
static const struct pw_classic pw_1f1b_interleaved = {
	"1f1b-interleaved", true, false, pw_warmup_interleaved
};
static const struct pw_classic pw_zb_h1 = {
	"zb-h1", false, true, pw_warmup_zb_h1
};
static const struct pw_classic pw_zb_h2 = {
	"zb-h2", false, true, pw_warmup_zb_h2
};

/*
 * The K-th op of KIND on device D under Megatron's interleaving: forwards
 * go through the chunks in groups of p microbatches, backwards through
 * the chunks from last to first.  With one chunk per device this is just
 * microbatch K of stage D.
 */
static struct pw_op
pw_classic_op(const struct pw_problem *p, enum pw_kind kind, int d, int k)
{
	struct pw_op op;
	int n = p->devices, v = p->nstages / n, chunk;

	chunk = (k % (n * v)) / n;
	if (kind != PW_F)
		chunk = v - 1 - chunk;
	op.kind = kind;
	op.stage = chunk * n + d;
	op.mb = (k / (n * v)) * n + k % n;
	return op;
}

/*
 * Appends device D's order: WARMUP forwards; then for every backward i a
 * forward while any remain, backward i and, when split, a W once device
 * D has caught up with device 0's warm-up (after WDELAY backwards); then
 * the remaining W.
 */
static void
pw_classic_emit(struct pw_schedule *sched, const struct pw_problem *p,
    int d, bool split, int warmup, int wdelay)
{
	int count = p->microbatches * (p->nstages / p->devices);
	int nf, nw = 0, i;

	assert(warmup >= 0 && warmup <= count && wdelay >= 0);
	for (nf = 0; nf < warmup; nf++)
		pw_schedule_append(sched, p, pw_classic_op(p, PW_F, d, nf));
	for (i = 0; i < count; i++) {
		if (nf < count)
			pw_schedule_append(sched, p,
			    pw_classic_op(p, PW_F, d, nf++));
		pw_schedule_append(sched, p,
		    pw_classic_op(p, split ? PW_B : PW_BW, d, i));
		if (split && i >= wdelay)
			pw_schedule_append(sched, p,
			    pw_classic_op(p, PW_W, d, nw++));
	}
	while (split && nw < count)
		pw_schedule_append(sched, p, pw_classic_op(p, PW_W, d, nw++));
}

/* PW_OK when stage s is on device s for every s, else the reason. */
static int
pw_classic_one_per_device(const struct pw_classic *fam,
    const struct pw_problem *p, struct pw_error *err)
{
	int s;

	if (p->nstages != p->devices) {
		pw_error_set(err, "%s needs one stage per device in order "
		    "(stage s on device s); this problem has %d stages on %d "
		    "devices", fam->name, p->nstages, p->devices);
		return PW_ERR_NOT_APPLICABLE;
	}
	for (s = 0; s < p->nstages; s++)
		if (p->stages[s].device != s) {
			pw_error_set(err, "%s needs one stage per device in "
			    "order (stage s on device s); this problem has "
			    "stage %d on device %d", fam->name, s,
			    p->stages[s].device);
			return PW_ERR_NOT_APPLICABLE;
		}
	return PW_OK;
}

/* PW_OK for loop placement with v >= 2 chunks and m a multiple of p (the
 * forward groups of p microbatches must come out even), else the reason. */
static int
pw_classic_loop(const struct pw_classic *fam, const struct pw_problem *p,
    struct pw_error *err)
{
	if (!pw_problem_is_loop(p) || p->nstages < 2 * p->devices) {
		pw_error_set(err, "%s needs loop placement (stage s on device "
		    "s mod p) with at least 2 stages per device; this problem "
		    "has %d stages on %d devices%s", fam->name, p->nstages,
		    p->devices, pw_problem_is_loop(p) ? "" :
		    " not in loop placement");
		return PW_ERR_NOT_APPLICABLE;
	}
	if (p->microbatches % p->devices != 0) {
		pw_error_set(err, "%s needs the microbatches to be a multiple "
		    "of the devices; this problem has %d microbatches on %d "
		    "devices", fam->name, p->microbatches, p->devices);
		return PW_ERR_NOT_APPLICABLE;
	}
	return PW_OK;
}

/*
 * Builds FAM's schedule, or refuses.  Besides the placement, the one
 * condition is that device 0's warm-up exists.  With it the orders never
 * deadlock: with one stage per device, a device runs at least as many
 * forwards before its i-th backward as its successor does (warm-ups fall
 * with the device index), so backward i always finds its inputs; the
 * interleaved order is Megatron's (tests/test_families.c simulates all of
 * them over a grid of problems).
 */
static int
pw_classic_build(const struct pw_classic *fam, const struct pw_problem *p,
    struct pw_schedule **out, struct pw_error *err)
{
	struct pw_schedule *sched;
	int rc, d, first;

	*out = NULL;
	rc = fam->interleaved ? pw_classic_loop(fam, p, err) :
	    pw_classic_one_per_device(fam, p, err);
	if (rc != PW_OK)
		return rc;
	/* Only the uncut Zero Bubble warm-ups can exceed the microbatches,
	 * and those have one stage per device. */
	first = fam->warmup(p, 0);
	if (first > p->microbatches * (p->nstages / p->devices)) {
		pw_error_set(err, "%s needs at least %d microbatches (device 0 "
		    "runs %d forwards before its first backward); this problem "
		    "has %d", fam->name, first, first, p->microbatches);
		return PW_ERR_NOT_APPLICABLE;
	}
	sched = pw_schedule_new(p);
	sched->family = pw_xstrdup(fam->name);
	for (d = 0; d < p->devices; d++)
		pw_classic_emit(sched, p, d, fam->split, fam->warmup(p, d),
		    first - fam->warmup(p, d));
	*out = sched;
	return PW_OK;
}

int
pw_family_gpipe(const struct pw_problem *p, struct pw_schedule **out,
    struct pw_error *err)
{
	return pw_classic_build(&pw_gpipe, p, out, err);
}

int
pw_family_1f1b(const struct pw_problem *p, struct pw_schedule **out,
    struct pw_error *err)
{
	return pw_classic_build(&pw_1f1b, p, out, err);
}

int
pw_family_1f1b_interleaved(const struct pw_problem *p,
    struct pw_schedule **out, struct pw_error *err)
{
	return pw_classic_build(&pw_1f1b_interleaved, p, out, err);
}

int
pw_family_zb_h1(const struct pw_problem *p, struct pw_schedule **out,
    struct pw_error *err)
{
	return pw_classic_build(&pw_zb_h1, p, out, err);
}

int
pw_family_zb_h2(const struct pw_problem *p, struct pw_schedule **out,
    struct pw_error *err)
{
	return pw_classic_build(&pw_zb_h2, p, out, err);
}
