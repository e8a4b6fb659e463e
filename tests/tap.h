/*
 * tap.h - Test Anything Protocol output for automake's TAP driver.
 *
 * cmocka 1.1.5 (Debian 12) reports skips as "not ok N # SKIP", which the
 * automake driver counts as failures, and prints one plan per group; these
 * few functions print plain TAP instead.
 */
#ifndef PW_TAP_H
#define PW_TAP_H

#include <stdbool.h>

/* Each returns COND's truth (so a test can stop on a failed precondition). */
bool	tap_ok(bool cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool	tap_int(long long got, long long want, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
/* |got - want| <= tol */
bool	tap_near(double got, double want, double tol, const char *fmt, ...)
	    __attribute__((format(printf, 4, 5)));
bool	tap_str(const char *got, const char *want, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
void	tap_skip(const char *reason, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
void	tap_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints the plan and returns the exit status (0 when all passed). */
int	tap_done(void);

#endif
