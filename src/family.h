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

#endif /* PW_FAMILY_H */
