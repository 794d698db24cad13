/*
 * fail_alloc.c - an LD_PRELOAD allocator for the allocation-failure tests:
 * with RB_FAIL_ALLOC=N in the environment, the N-th call of malloc, calloc,
 * realloc or posix_memalign counted from main() fails (returns NULL /
 * ENOMEM); every other call goes to glibc. Calls made before main (the C++
 * runtime's own start-up, which aborts on failure) are not counted.
 * Without RB_FAIL_ALLOC it only forwards.
 * RB_FAIL_ALLOC_LOG=FILE appends the number of calls made at exit, so a
 * loop knows when N has passed the last allocation.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <dlfcn.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static long fail_at = -1;       /* -1: not read yet; 0: never */
static long calls;
static int armed;               /* set when main() starts */

static int should_fail(void)
{
	if (fail_at < 0) {
		const char *s = getenv("RB_FAIL_ALLOC");
		fail_at = s ? atol(s) : 0;
	}
	if (!__atomic_load_n(&armed, __ATOMIC_RELAXED))
		return 0;
	long n = __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
	return fail_at > 0 && n == fail_at;
}

void *malloc(size_t n)
{
	if (should_fail()) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t m)
{
	if (should_fail()) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
	if (should_fail()) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_realloc(p, n);
}

int posix_memalign(void **p, size_t align, size_t n)
{
	if (should_fail())
		return ENOMEM;
	void *q = __libc_memalign(align, n);
	if (!q)
		return ENOMEM;
	*p = q;
	return 0;
}

#define PRELOAD_LOG_ENV "RB_FAIL_ALLOC_LOG"
#include "preload_main.h"
