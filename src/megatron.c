/*
 * megatron.c - the Megatron-LM command-line flags that reproduce a
 * schedule, when Megatron has one like it: its non-interleaved 1F1B and
 * its interleaved 1F1B (virtual stages placed in a loop), with the layer
 * split as --decoder-first/last-pipeline-num-layers or a
 * --pipeline-model-parallel-layout string (docs/interop.md says which
 * Megatron-LM arguments this relies on).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipewright.h"

/* A growing line of flags. */
struct megatron_line {
	char	*s;
	size_t	len;
};

/* Appends PART (taken) to L after SEP when L is not empty. */
static void
megatron_add(struct megatron_line *l, const char *sep, char *part)
{
	size_t n = strlen(part), m = l->len > 0 ? strlen(sep) : 0;

	l->s = pw_xreallocarray(l->s, l->len + m + n + 1, 1);
	memcpy(l->s + l->len, sep, m);
	memcpy(l->s + l->len + m, part, n + 1);
	l->len += m + n;
	free(part);
}

/* Why SCHED's order is none of Megatron's, or NULL when it is one. */
static const char *
megatron_why_not(const struct pw_problem *p, const struct pw_schedule *sched)
{
	const struct pw_family *fam;
	int c;

	for (c = 0; c < sched->nchannels; c++)
		if (sched->channel[c].len > 0)
			return "the schedule offloads activations to host "
			    "memory and reloads them; Megatron-LM's pipeline "
			    "schedules have no such ops";
	if (sched->family == NULL)
		return "the schedule names no family (an order edited or read "
		    "as it is); Megatron-LM runs only its own schedules";
	if (strcmp(sched->family, "solve") == 0)
		return "an optimizer-made order; Megatron-LM runs only its own "
		    "schedules (1F1B, interleaved 1F1B)";
	if ((fam = pw_family_find(sched->family)) == NULL)
		return "the schedule's family is unknown here";
	if (fam->megatron != NULL)
		return fam->megatron;
	/* A file's family name over another split. */
	return fam->layout == PW_LAYOUT_SINGLE && p->nstages != p->devices ?
	    "a one-stage-per-device family's name on more stages than "
	    "devices" : NULL;
}

/* Why P's recomputation is none of Megatron's, or NULL when it is one
 * (none, or full: every layer's input kept, each layer run again). */
static const char *
megatron_why_not_recompute(const struct pw_problem *p)
{
	if (p->origin == NULL ||
	    p->origin->model.recompute != PW_RECOMPUTE_PIPEOFFLOAD)
		return NULL;
	return "the selective recomputation (PipeOffload's: LayerNorm, GeLU "
	    "and dropout run again) is none of Megatron-LM's recompute "
	    "modules, which recompute a whole attention core or MLP";
}

/* The layer split of P's origin as flags: none when even, the first and
 * last stage's counts when only they differ (one chunk per device:
 * Megatron shares a rank's count among its virtual stages), else the
 * layout string, stages in pipeline order as Megatron lists them (every
 * rank's virtual stage 0, then 1, ...): the loop placement's.  True when
 * it wrote the layout. */
static bool
megatron_split(struct megatron_line *l, const struct pw_problem *p)
{
	const struct pw_origin *o = p->origin;
	int s, n, last = p->nstages - 1, layers[2];
	bool even = true, middle = true;
	struct megatron_line layout = { NULL, 0 };

	megatron_add(l, " ", pw_xasprintf("--num-layers %d", o->model.layers));
	layers[0] = pw_split_layers(&o->split, o->model.layers, 0);
	layers[1] = pw_split_layers(&o->split, o->model.layers, last);
	for (s = 1; s < p->nstages; s++) {
		n = pw_split_layers(&o->split, o->model.layers, s);
		if (n != layers[0])
			even = false;
		if (s < last && n != pw_split_layers(&o->split,
		    o->model.layers, 1))
			middle = false;
	}
	if (even)
		return false;
	if (middle && p->nstages == p->devices) {
		n = last > 1 ? pw_split_layers(&o->split, o->model.layers, 1) :
		    -1;
		if (layers[0] != n)
			megatron_add(l, " ", pw_xasprintf(
			    "--decoder-first-pipeline-num-layers %d", layers[0]));
		if (last > 1 && layers[1] != n)
			megatron_add(l, " ", pw_xasprintf(
			    "--decoder-last-pipeline-num-layers %d", layers[1]));
		return false;
	}
	for (s = 0; s <= last; s++) {
		n = pw_split_layers(&o->split, o->model.layers, s);
		megatron_add(&layout, "|", n > 1 ? pw_xasprintf("%st*%d%s",
		    s == 0 ? "E" : "", n, s == last ? ",L" : "") :
		    pw_xasprintf("%st%s", s == 0 ? "E" : "", s == last ? ",L" :
		    ""));
	}
	megatron_add(l, " ", pw_xasprintf("--pipeline-model-parallel-layout "
	    "\"%s\"", layout.s));
	free(layout.s);
	return true;
}

int
pw_megatron_flags(const struct pw_problem *p, const struct pw_schedule *sched,
    char **flags, struct pw_error *err)
{
	struct megatron_line l = { NULL, 0 };
	const char *why;
	int chunks = p->nstages / p->devices;
	bool split, layout = false;

	*flags = NULL;
	if ((why = megatron_why_not(p, sched)) != NULL ||
	    (why = megatron_why_not_recompute(p)) != NULL) {
		pw_error_set(err, "%s", why);
		return PW_ERR_NOT_APPLICABLE;
	}
	split = p->origin != NULL && p->origin->split.devices *
	    p->origin->split.chunks == p->nstages;
	megatron_add(&l, " ", pw_xasprintf("--pipeline-model-parallel-size %d",
	    p->devices));
	if (split && p->origin->split.tp > 1)
		megatron_add(&l, " ", pw_xasprintf(
		    "--tensor-model-parallel-size %d", p->origin->split.tp));
	/* The cost model's ZeRO-1 shards the optimizer state (the fp32
	 * weights and Adam's moments) over the replicas: Megatron's
	 * distributed optimizer. */
	if (split && p->origin->split.dp > 1)
		megatron_add(&l, " ", pw_xstrdup("--use-distributed-optimizer"));
	if (split)
		layout = megatron_split(&l, p);
	/* A layout string gives the virtual stages by its count. */
	if (chunks > 1 && !layout)
		megatron_add(&l, " ", pw_xasprintf(
		    "--num-virtual-stages-per-pipeline-rank %d", chunks));
	if (p->origin != NULL &&
	    p->origin->model.recompute == PW_RECOMPUTE_FULL)
		megatron_add(&l, " ", pw_xstrdup("--recompute-granularity full "
		    "--recompute-method uniform --recompute-num-layers 1"));
	if (split)
		/* M b D overflows an int within the options' ranges. */
		megatron_add(&l, " ", pw_xasprintf("--micro-batch-size %d "
		    "--global-batch-size %lld", p->origin->model.micro_batch,
		    (long long)p->microbatches * p->origin->model.micro_batch *
		    (p->origin->split.dp > 1 ? p->origin->split.dp : 1)));
	*flags = l.s;
	return PW_OK;
}

char *
pw_megatron_line(const struct pw_problem *p, const struct pw_schedule *sched)
{
	struct pw_error err;
	char *flags, *line;

	if (pw_megatron_flags(p, sched, &flags, &err) == PW_OK)
		line = pw_xasprintf("megatron: %s", flags);
	else
		line = pw_xasprintf("megatron: Megatron has no equivalent: %s",
		    err.msg);
	free(flags);
	return line;
}

void
pw_megatron_print(FILE *fp, const struct pw_problem *p,
    const struct pw_schedule *sched)
{
	char *line = pw_megatron_line(p, sched);

	fprintf(fp, "%s\n", line);
	free(line);
}
