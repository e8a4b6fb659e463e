/*
 * bench.h - what the benchmarks share: the median of repeated runs.
 * They time with pw_now, the program's one monotonic clock.
 */
#ifndef PW_BENCH_H
#define PW_BENCH_H

#include <stdlib.h>

#include "pipewright.h"

static inline int
bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of the N values of V, which it sorts. */
static inline double
bench_median(double *v, size_t n)
{
	qsort(v, n, sizeof *v, bench_cmp_double);
	return v[n / 2];
}

#endif /* PW_BENCH_H */
