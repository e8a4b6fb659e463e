/*
 * query.c - questions about a timed schedule: which op runs where at an
 * instant, a device's memory at an instant, every op's slack and the
 * critical path.
 */
#include <assert.h>

#include "plan.h"

static const char *const pw_query_pred_names[] = {
	"device", "channel", "dependency", "anchor"
};

const char *
pw_pred_kind_name(enum pw_pred_kind kind)
{
	assert(kind >= PW_PRED_DEVICE && kind <= PW_PRED_ANCHOR);
	return pw_query_pred_names[kind];
}
