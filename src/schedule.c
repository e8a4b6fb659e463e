/* schedule.c - a schedule: per-resource orders plus reload anchors. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "pipewright.h"

struct pw_schedule *
pw_schedule_new(const struct pw_problem *p)
{
	struct pw_schedule *sched;
	size_t i, n = (size_t)p->nstages * (size_t)p->microbatches;

	sched = pw_xcalloc(1, sizeof *sched);
	sched->ndevices = p->devices;
	sched->device = pw_xcalloc((size_t)p->devices, sizeof *sched->device);
	sched->nchannels = pw_problem_nchannels(p);
	sched->channel = pw_xcalloc((size_t)sched->nchannels,
	    sizeof *sched->channel);
	sched->nstages = p->nstages;
	sched->microbatches = p->microbatches;
	sched->anchor = pw_xmalloc(n * sizeof *sched->anchor);
	for (i = 0; i < n; i++)
		sched->anchor[i] = (struct pw_anchor){ { PW_NKINDS, 0, 0 },
		    false };
	return sched;
}

struct pw_schedule *
pw_schedule_copy(const struct pw_schedule *sched)
{
	struct pw_schedule *copy = pw_xcalloc(1, sizeof *copy);
	size_t n = (size_t)sched->nstages * (size_t)sched->microbatches;
	int r;

	/* Sequence by sequence, ops as they are: a start schedule is copied
	 * before the simulator has said whether its ops make sense. */
	copy->ndevices = sched->ndevices;
	copy->nchannels = sched->nchannels;
	copy->nstages = sched->nstages;
	copy->microbatches = sched->microbatches;
	copy->device = pw_xcalloc((size_t)sched->ndevices, sizeof *copy->device);
	copy->channel = pw_xcalloc((size_t)sched->nchannels,
	    sizeof *copy->channel);
	for (r = 0; r < sched->ndevices + sched->nchannels; r++) {
		const struct pw_seq *from = pw_schedule_order(sched, r);
		struct pw_seq *to = r < sched->ndevices ? &copy->device[r] :
		    &copy->channel[r - sched->ndevices];

		to->len = to->cap = from->len;
		to->ops = from->len == 0 ? NULL :
		    pw_xreallocarray(NULL, (size_t)from->len, sizeof *to->ops);
		if (from->len > 0)
			memcpy(to->ops, from->ops, (size_t)from->len *
			    sizeof *to->ops);
	}
	copy->anchor = pw_xreallocarray(NULL, n, sizeof *copy->anchor);
	memcpy(copy->anchor, sched->anchor, n * sizeof *copy->anchor);
	if (sched->family != NULL)
		copy->family = pw_xstrdup(sched->family);
	return copy;
}

void
pw_schedule_free(struct pw_schedule *sched)
{
	int i;

	if (sched == NULL)
		return;
	for (i = 0; i < sched->ndevices; i++)
		free(sched->device[i].ops);
	for (i = 0; i < sched->nchannels; i++)
		free(sched->channel[i].ops);
	free(sched->device);
	free(sched->channel);
	free(sched->anchor);
	free(sched->family);
	free(sched);
}

void
pw_seq_push(struct pw_seq *seq, struct pw_op op)
{
	if (seq->len == seq->cap) {
		seq->cap = seq->cap == 0 ? 16 : seq->cap * 2;
		seq->ops = pw_xreallocarray(seq->ops, (size_t)seq->cap,
		    sizeof *seq->ops);
	}
	seq->ops[seq->len++] = op;
}

int
pw_seq_find(const struct pw_seq *seq, struct pw_op op)
{
	int i;

	for (i = 0; i < seq->len; i++)
		if (pw_op_same(seq->ops[i], op))
			return i;
	return -1;
}

void
pw_schedule_append(struct pw_schedule *sched, const struct pw_problem *p,
    struct pw_op op)
{
	int device;

	assert(op.stage >= 0 && op.stage < p->nstages);
	device = p->stages[op.stage].device;
	if (pw_kind_is_transfer(op.kind))
		pw_seq_push(&sched->channel[pw_problem_channel(p, device,
		    op.kind)], op);
	else
		pw_seq_push(&sched->device[device], op);
}

void
pw_schedule_set_anchor(struct pw_schedule *sched, int stage, int mb,
    struct pw_anchor anchor)
{
	assert(stage >= 0 && stage < sched->nstages);
	assert(mb >= 0 && mb < sched->microbatches);
	sched->anchor[(size_t)stage * (size_t)sched->microbatches + (size_t)mb] =
	    anchor;
}

bool
pw_schedule_anchor(const struct pw_schedule *sched, int stage, int mb,
    struct pw_anchor *out)
{
	struct pw_anchor a;

	a = sched->anchor[(size_t)stage * (size_t)sched->microbatches +
	    (size_t)mb];
	if (a.op.kind == PW_NKINDS)
		return false;
	if (out != NULL)
		*out = a;
	return true;
}

const struct pw_seq *
pw_schedule_order(const struct pw_schedule *sched, int resource)
{
	assert(resource >= 0 &&
	    resource < sched->ndevices + sched->nchannels);
	return resource < sched->ndevices ? &sched->device[resource] :
	    &sched->channel[resource - sched->ndevices];
}

bool
pw_schedule_same_orders(const struct pw_schedule *a, const struct pw_schedule *b,
    int *resource, int *pos)
{
	const struct pw_seq *x, *y;
	int r, i, where = -1, at = 0;

	if (a->ndevices != b->ndevices || a->nchannels != b->nchannels)
		goto differ;
	for (r = 0; r < a->ndevices + a->nchannels; r++) {
		x = pw_schedule_order(a, r);
		y = pw_schedule_order(b, r);
		for (i = 0; i < x->len && i < y->len; i++)
			if (memcmp(&x->ops[i], &y->ops[i], sizeof x->ops[i]) != 0)
				break;
		if (i < x->len || i < y->len) {
			where = r;
			at = i;
			goto differ;
		}
	}
	return true;
differ:
	if (resource != NULL)
		*resource = where;
	if (pos != NULL)
		*pos = at;
	return false;
}

size_t
pw_schedule_nops(const struct pw_schedule *sched)
{
	size_t n = 0;
	int r;

	for (r = 0; r < sched->ndevices; r++)
		n += (size_t)sched->device[r].len;
	for (r = 0; r < sched->nchannels; r++)
		n += (size_t)sched->channel[r].len;
	return n;
}
