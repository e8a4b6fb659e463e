/* families.c - the registry of schedule families. */
#include <assert.h>
#include <string.h>

#include "family.h"

/* Why Megatron-LM has none of these (its schedules are 1F1B and the
 * interleaved 1F1B, on a loop, with whole backwards). */
#define PW_MEGATRON_ZB	"Zero Bubble splits the backward into B and W; " \
	"Megatron-LM's schedules run each backward whole"
#define PW_MEGATRON_V	"the V placement (stages d and 2p-1-d on device d); " \
	"Megatron-LM places virtual stages in a loop"
#define PW_MEGATRON_PO	"PipeOffload's group-interleaved order; " \
	"Megatron-LM's interleaved 1F1B orders the microbatches otherwise"

const struct pw_family pw_families[] = {
	{ "gpipe", "GPipe: all forwards, then all fused backwards; "
	    "one stage per device",
	    PW_LAYOUT_SINGLE, pw_family_gpipe,
	    "GPipe runs every forward before any backward; "
	    "Megatron-LM's pipelined schedules are 1F1B" },
	{ "1f1b", "1F1B: warm-up forwards, then one forward per fused "
	    "backward; one stage per device",
	    PW_LAYOUT_SINGLE, pw_family_1f1b,
	    NULL },
	{ "1f1b-interleaved", "Megatron's interleaved 1F1B: v >= 2 chunks "
	    "per device on loop placement",
	    PW_LAYOUT_LOOP, pw_family_1f1b_interleaved,
	    NULL },
	{ "zb-h1", "Zero Bubble H1: backward split into B and W, 1F1B's "
	    "memory; one stage per device",
	    PW_LAYOUT_SINGLE, pw_family_zb_h1,
	    PW_MEGATRON_ZB },
	{ "zb-h2", "Zero Bubble H2: twice 1F1B's warm-up fills the bubble "
	    "with W; one stage per device",
	    PW_LAYOUT_SINGLE, pw_family_zb_h2,
	    PW_MEGATRON_ZB },
	{ "zb-auto", "Zero Bubble's automatic schedule: B/W split, searched "
	    "heuristic under each device's limit; one stage per device",
	    PW_LAYOUT_SINGLE, pw_family_zb_auto,
	    PW_MEGATRON_ZB },
	{ "zb-1p", "zb-auto with each limit capped at static + p activations "
	    "(the paper's ZB-1p)",
	    PW_LAYOUT_SINGLE, pw_family_zb_1p,
	    PW_MEGATRON_ZB },
	{ "zb-2p", "zb-auto with each limit capped at static + 2p activations "
	    "(the paper's ZB-2p)",
	    PW_LAYOUT_SINGLE, pw_family_zb_2p,
	    PW_MEGATRON_ZB },
	{ "zb-v", "Zero Bubble V: B/W split, 2 chunks per device in a V, "
	    "peak p stage-activations; V placement",
	    PW_LAYOUT_V, pw_family_zb_v,
	    PW_MEGATRON_V },
	{ "v-half", "Controllable Memory's V-Half: about half 1F1B's "
	    "activation memory; V placement",
	    PW_LAYOUT_V, pw_family_v_half,
	    PW_MEGATRON_V },
	{ "v-min", "Controllable Memory's V-Min: about a third of 1F1B's "
	    "activation memory; V placement",
	    PW_LAYOUT_V, pw_family_v_min,
	    PW_MEGATRON_V },
	{ "gis", "PipeOffload's group interleaving (GIS): B/W split, "
	    "groups of p microbatches, peak p*v; loop placement",
	    PW_LAYOUT_LOOP, pw_family_gis,
	    PW_MEGATRON_PO },
	{ "gis-h", "GIS with groups of ceil(p/2) microbatches: peak "
	    "ceil(p/2)(v-1) + p; loop placement",
	    PW_LAYOUT_LOOP, pw_family_gis_h,
	    PW_MEGATRON_PO },
	{ "po", "PipeOffload's PO layout: each microbatch's chunks spread "
	    "evenly, low chunks live longest; loop placement",
	    PW_LAYOUT_LOOP, pw_family_po,
	    PW_MEGATRON_PO },
	{ "po-h", "PO layout offloading the lower half of the chunks (the "
	    "paper's lazy rule); needs a link",
	    PW_LAYOUT_LOOP, pw_family_po_h,
	    PW_MEGATRON_PO },
	{ "po-f", "PO layout offloading every chunk (the paper's lazy rule); "
	    "needs a link",
	    PW_LAYOUT_LOOP, pw_family_po_f,
	    PW_MEGATRON_PO },
	{ "po-sel", "PO layout offloading what lowers each device's peak, "
	    "no bubble added; needs a link",
	    PW_LAYOUT_LOOP, pw_family_po_sel,
	    PW_MEGATRON_PO },
	{ "po-auto", "group interleaving with the largest group size that "
	    "fits the limits, offloading what it must; loop placement",
	    PW_LAYOUT_LOOP, pw_family_po_auto,
	    PW_MEGATRON_PO },
};

const size_t pw_nfamilies = sizeof pw_families / sizeof pw_families[0];

/* Returns a registry row (static, not to be freed), or NULL. */
const struct pw_family *
pw_family_find(const char *name)
{
	size_t i;

	for (i = 0; i < pw_nfamilies; i++)
		if (strcmp(pw_families[i].name, name) == 0)
			return &pw_families[i];
	return NULL;
}

/* Whether P's stages are laid out as LAYOUT says. */
static bool
pw_layout_fits(enum pw_layout layout, const struct pw_problem *p)
{
	switch (layout) {
	case PW_LAYOUT_SINGLE:
		return p->nstages == p->devices && pw_problem_is_loop(p);
	case PW_LAYOUT_LOOP:
		return p->nstages >= 2 * p->devices && pw_problem_is_loop(p);
	case PW_LAYOUT_V:
		return pw_problem_is_v(p);
	}
	assert(!"unknown layout");
	return false;
}

/* P's model split again as LAYOUT needs: a loop gets one chunk per layer
 * (Megatron's finest interleaving, the Zero Bubble paper's baseline). */
static int
pw_layout_resplit(enum pw_layout layout, const struct pw_problem *p,
    struct pw_problem **out, struct pw_error *err)
{
	int chunks;

	/* Without an origin there is nothing to split: say so. */
	if (p->origin == NULL)
		return pw_problem_resplit(p, PW_PLACE_LOOP, 1, out, err);
	switch (layout) {
	case PW_LAYOUT_SINGLE:
		return pw_problem_resplit(p, PW_PLACE_LOOP, 1, out, err);
	case PW_LAYOUT_LOOP:
		chunks = p->origin->model.layers / p->devices;
		return pw_problem_resplit(p, PW_PLACE_LOOP, chunks < 2 ? 2 :
		    chunks, out, err);
	case PW_LAYOUT_V:
		return pw_problem_resplit(p, PW_PLACE_V, 2, out, err);
	}
	assert(!"unknown layout");
	return PW_ERR_NOT_APPLICABLE;
}

int
pw_family_split_stages(const struct pw_family *fam, const struct pw_problem *p)
{
	struct pw_problem *q;
	struct pw_error why;
	int nstages;

	if (pw_layout_fits(fam->layout, p) ||
	    pw_layout_resplit(fam->layout, p, &q, &why) != PW_OK)
		return 0;
	nstages = q->nstages;
	pw_problem_free(q);
	return nstages;
}

int
pw_family_build(const struct pw_family *fam, const struct pw_problem *p,
    struct pw_problem **used, struct pw_schedule **out, struct pw_error *err)
{
	struct pw_problem *q = NULL;
	struct pw_error why;
	int rc;

	*used = NULL;
	*out = NULL;
	if (!pw_layout_fits(fam->layout, p) &&
	    pw_layout_resplit(fam->layout, p, &q, &why) != PW_OK) {
		/* The family's own words say what it needs. */
		rc = fam->build(p, out, err);
		if (rc == PW_OK) {
			*used = pw_problem_copy(p);
			return PW_OK;
		}
		pw_error_append(err, "; splitting again: %s", why.msg);
		return rc;
	}
	if (q == NULL)
		q = pw_problem_copy(p);
	if ((rc = fam->build(q, out, err)) != PW_OK) {
		pw_problem_free(q);
		return rc;
	}
	*used = q;
	return PW_OK;
}
