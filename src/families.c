/* families.c - the registry of schedule families. */
#include <string.h>

#include "family.h"

const struct pw_family pw_families[] = {
	{ "gpipe", "GPipe: all forwards, then all fused backwards; "
	    "one stage per device", pw_family_gpipe },
	{ "1f1b", "1F1B: warm-up forwards, then one forward per fused "
	    "backward; one stage per device", pw_family_1f1b },
	{ "1f1b-interleaved", "Megatron's interleaved 1F1B: v >= 2 chunks "
	    "per device on loop placement", pw_family_1f1b_interleaved },
	{ "zb-h1", "Zero Bubble H1: backward split into B and W, 1F1B's "
	    "memory; one stage per device", pw_family_zb_h1 },
	{ "zb-h2", "Zero Bubble H2: twice 1F1B's warm-up fills the bubble "
	    "with W; one stage per device", pw_family_zb_h2 },
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
