/* default.c - the built-in default problem: a GPT-3-like model on 8 GPUs. */
#include <assert.h>
#include <stdlib.h>

#include "pipewright.h"

/*
 * The cost model's GPT-3 6.7B preset with a longer sequence s = 4096 (GPT-3
 * used 2048), on 8 H100-SXM at 50% of their peak, 4 layers per stage (stage
 * s on device s), m = 32 microbatches, the H100's memory as the limit and
 * a PCIe link with two GPUs behind each switch: docs/cost-model.md.
 */
#define PW_DEF_NAME	"gpt3-6.7b-8xh100"
#define PW_DEF_SEQ	4096

/* Returns a problem the caller owns. */
struct pw_problem *
pw_problem_default(void)
{
	const struct pw_split split = {
		.devices = 8, .chunks = 1, .placement = PW_PLACE_LOOP,
		.microbatches = 32, .layers_per_stage = NULL,
		.memory_limit = 0, .offload = true,
	};
	struct pw_model model = *pw_model_find("gpt3-6.7b");
	struct pw_problem *p;
	struct pw_error err;
	int rc;

	model.seq = PW_DEF_SEQ;
	rc = pw_cost_problem(&model, pw_hardware_find("H100-SXM"), &split, &p,
	    &err);
	assert(rc == PW_OK);	/* fixed inputs, checked by test_cost */
	(void)rc;
	free(p->name);
	p->name = pw_xstrdup(PW_DEF_NAME);
	return p;
}
