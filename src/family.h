/*
 * family.h - the builders behind the registry rows of families.c.
 *
 * Each has the signature of struct pw_family's build: it returns PW_OK
 * and a schedule the caller owns, or PW_ERR_NOT_APPLICABLE with the
 * reason in the error.
 */
#ifndef PW_FAMILY_H
#define PW_FAMILY_H

#include "pipewright.h"

/* family_classic.c */
int	pw_family_gpipe(const struct pw_problem *, struct pw_schedule **,
	    struct pw_error *);
int	pw_family_1f1b(const struct pw_problem *, struct pw_schedule **,
	    struct pw_error *);
int	pw_family_1f1b_interleaved(const struct pw_problem *,
	    struct pw_schedule **, struct pw_error *);
int	pw_family_zb_h1(const struct pw_problem *, struct pw_schedule **,
	    struct pw_error *);
int	pw_family_zb_h2(const struct pw_problem *, struct pw_schedule **,
	    struct pw_error *);

/* family_offload.c */
int	pw_family_gis(const struct pw_problem *, struct pw_schedule **,
	    struct pw_error *);
int	pw_family_gis_h(const struct pw_problem *, struct pw_schedule **,
	    struct pw_error *);
int	pw_family_po(const struct pw_problem *, struct pw_schedule **,
	    struct pw_error *);
int	pw_family_po_h(const struct pw_problem *, struct pw_schedule **,
	    struct pw_error *);
int	pw_family_po_f(const struct pw_problem *, struct pw_schedule **,
	    struct pw_error *);
int	pw_family_po_sel(const struct pw_problem *, struct pw_schedule **,
	    struct pw_error *);
int	pw_family_po_auto(const struct pw_problem *, struct pw_schedule **,
	    struct pw_error *);
/* PipeOffload's group interleaving with group size G, 1 <= G <= devices
 * (GIS is G = devices, GIS-H G = ceil(devices/2), the PO layout G = 1);
 * the schedule is named "gis-gG". */
int	pw_family_group_interleaved(const struct pw_problem *, int g,
	    struct pw_schedule **, struct pw_error *);

/* family_zb.c: Zero Bubble's automatic schedule under each device's
 * limit, and with the limit capped at static + p (1p) or 2p (2p)
 * activations of each device's stage. */
int	pw_family_zb_auto(const struct pw_problem *, struct pw_schedule **,
	    struct pw_error *);
int	pw_family_zb_1p(const struct pw_problem *, struct pw_schedule **,
	    struct pw_error *);
int	pw_family_zb_2p(const struct pw_problem *, struct pw_schedule **,
	    struct pw_error *);
/* The op OP waits for in a schedule of F, B and W (no BW, no transfer),
 * as the dependency of pw_op_deps with its hop; false for the first
 * forward, which waits for nothing.  Zero Bubble's families and the V
 * grid ask it. */
bool	pw_zb_dep(const struct pw_problem *, struct pw_op, struct pw_pred *);

/* The V placement (family_zbv.c): device D's stage on LEG (0, the down
 * stroke, or 1), and PW_OK when P is in V placement, else PW_ERR_NOT_
 * APPLICABLE with the reason naming family NAME. */
int	pw_v_stage(const struct pw_problem *p, int d, int leg);
int	pw_v_applies(const char *name, const struct pw_problem *p,
	    struct pw_error *err);

/* family_zbv.c: ZB-V; family_vgrid.c: V-Half and V-Min. */
int	pw_family_zb_v(const struct pw_problem *, struct pw_schedule **,
	    struct pw_error *);
int	pw_family_v_half(const struct pw_problem *, struct pw_schedule **,
	    struct pw_error *);
int	pw_family_v_min(const struct pw_problem *, struct pw_schedule **,
	    struct pw_error *);

#endif /* PW_FAMILY_H */
