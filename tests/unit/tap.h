/*
 * tap.h - the smallest TAP producer: ok(), skip(), diag(), done_testing().
 * Tests print "ok N - name" / "not ok N - name"; automake's tap-driver.sh
 * reads them.
 */
#ifndef TAP_H
#define TAP_H
#include <stdarg.h>
#include <stdio.h>

static int tap_n, tap_failed;

static inline int ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline int ok(int cond, const char *fmt, ...)
{
	va_list ap;
	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (!cond)
		tap_failed++;
	return cond;
}

static inline int diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int diag(const char *fmt, ...)
{
	va_list ap;
	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	return 0;
}

static inline int done_testing(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
#endif
