/* tap.c - Test Anything Protocol output (see tap.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"

static int tap_count;
static int tap_failed;

static bool
tap_report(bool cond, const char *fmt, va_list ap)
{
	tap_count++;
	printf("%sok %d - ", cond ? "" : "not ", tap_count);
	vprintf(fmt, ap);
	printf("\n");
	if (!cond)
		tap_failed++;
	fflush(stdout);
	return cond;
}

bool
tap_ok(bool cond, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_report(cond, fmt, ap);
	va_end(ap);
	return cond;
}

bool
tap_int(long long got, long long want, const char *fmt, ...)
{
	va_list ap;
	bool cond = got == want;

	va_start(ap, fmt);
	tap_report(cond, fmt, ap);
	va_end(ap);
	if (!cond)
		printf("#   got %lld, want %lld\n", got, want);
	return cond;
}

bool
tap_near(double got, double want, double tol, const char *fmt, ...)
{
	va_list ap;
	bool cond = fabs(got - want) <= tol || (isinf(got) && got == want);

	va_start(ap, fmt);
	tap_report(cond, fmt, ap);
	va_end(ap);
	if (!cond)
		printf("#   got %.10g, want %.10g (tolerance %g)\n", got, want, tol);
	return cond;
}

bool
tap_str(const char *got, const char *want, const char *fmt, ...)
{
	va_list ap;
	bool cond = got != NULL && want != NULL && strcmp(got, want) == 0;

	va_start(ap, fmt);
	tap_report(cond, fmt, ap);
	va_end(ap);
	if (!cond)
		printf("#   got \"%s\"\n#  want \"%s\"\n", got ? got : "(null)",
		    want ? want : "(null)");
	return cond;
}

void
tap_skip(const char *reason, const char *fmt, ...)
{
	va_list ap;

	tap_count++;
	printf("ok %d - ", tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" # SKIP %s\n", reason);
	fflush(stdout);
}

void
tap_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

int
tap_done(void)
{
	printf("1..%d\n", tap_count);
	return tap_failed == 0 ? 0 : 1;
}
