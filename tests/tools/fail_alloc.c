/*
 * fail_alloc.c - an LD_PRELOAD allocator for the allocation-failure tests:
 * with RB_FAIL_ALLOC=N in the environment, the N-th call of malloc, calloc,
 * realloc or posix_memalign counted from main() fails (returns NULL /
 * ENOMEM); every other call goes to glibc. Calls made before main (the C++
 * runtime's own start-up, which aborts on failure) are not counted.
 * Without RB_FAIL_ALLOC it only forwards.
 * RB_FAIL_ALLOC_LOG=FILE appends the number of calls made at exit, so a
 * loop knows when N has passed the last allocation.
 * RB_FAIL_ALLOC_SITES=FILE (with no RB_FAIL_ALLOC) writes at exit, one per
 * line, each N whose call is the first from its site: the first frame of
 * the stack inside the program itself (not in a library) together with
 * the frame that called the allocator. A loop that fails each of those N
 * fails every allocation the program makes, directly or through SQLite,
 * libipt, ..., once per place, instead of every N of a long run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <dlfcn.h>
#include <stdint.h>
#include <signal.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static long fail_at = -1;       /* -1: not read yet; 0: never */
static long calls;
static int armed;               /* set when main() starts */

/* the call sites (RB_FAIL_ALLOC_SITES) */
#include <execinfo.h>
#include <link.h>
#define SITE_SLOTS (1u << 16)
#define MAX_FIRSTS 65536
static int sites_on;
static uint64_t site_seen[SITE_SLOTS];   /* hashes, 0 = empty */
static long firsts[MAX_FIRSTS];
static size_t nr_firsts;
static int site_lock;
static __thread int in_site;
static uintptr_t exe_lo, exe_hi, self_lo, self_hi;   /* the program's and this shim's address ranges */

static int find_ranges(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	int first = *(int *)arg;
	*(int *)arg = 0;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		if (a < lo)
			lo = a;
		if (a + ph->p_memsz > hi)
			hi = a + ph->p_memsz;
	}
	uintptr_t me = (uintptr_t)&find_ranges;
	if (first) {
		exe_lo = lo;
		exe_hi = hi;
	} else if (me >= lo && me < hi) {
		self_lo = lo;
		self_hi = hi;
	}
	return 0;
}

static void sites_setup(void)
{
	if (!getenv("RB_FAIL_ALLOC_SITES") || getenv("RB_FAIL_ALLOC"))
		return;
	int first = 1;
	dl_iterate_phdr(find_ranges, &first);
	void *prime[2];
	backtrace(prime, 2);            /* glibc loads its unwinder (and allocates) on the first call */
	sites_on = 1;
}
#define PRELOAD_AT_MAIN sites_setup

/* Note call @n's site; the allocation itself goes on as usual. */
static void note_site(long n)
{
	if (in_site)
		return;
	in_site = 1;
	void *f[48];
	int nf = backtrace(f, 48);
	uintptr_t caller = 0, ours = 0;
	for (int i = 0; i < nf; i++) {
		uintptr_t a = (uintptr_t)f[i];
		if (a >= self_lo && a < self_hi)
			continue;
		if (!caller)
			caller = a;
		if (a >= exe_lo && a < exe_hi) {
			ours = a;
			break;
		}
	}
	uint64_t h = ((uint64_t)caller * 0x9e3779b97f4a7c15ULL) ^ ((uint64_t)ours * 0xc2b2ae3d27d4eb4fULL);
	h |= 1;
	while (__atomic_exchange_n(&site_lock, 1, __ATOMIC_ACQUIRE))
		;
	size_t i = (size_t)(h >> 48) & (SITE_SLOTS - 1);
	while (site_seen[i] && site_seen[i] != h)
		i = (i + 1) & (SITE_SLOTS - 1);
	if (!site_seen[i]) {
		site_seen[i] = h;
		if (nr_firsts < MAX_FIRSTS)
			firsts[nr_firsts++] = n;
	}
	__atomic_store_n(&site_lock, 0, __ATOMIC_RELEASE);
	in_site = 0;
}

__attribute__((destructor)) static void write_sites(void)
{
	const char *path = getenv("RB_FAIL_ALLOC_SITES");
	if (!sites_on || !path)
		return;
	sites_on = 0;
	FILE *fp = fopen(path, "w");
	if (!fp)
		return;
	for (size_t i = 0; i < nr_firsts; i++)
		fprintf(fp, "%ld\n", firsts[i]);
	fclose(fp);
}

static int should_fail(void)
{
	if (fail_at < 0) {
		const char *s = getenv("RB_FAIL_ALLOC");
		fail_at = s ? atol(s) : 0;
	}
	if (!__atomic_load_n(&armed, __ATOMIC_RELAXED))
		return 0;
	long n = __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
	if (sites_on)
		note_site(n);
	if (fail_at > 0 && n == fail_at && getenv("RB_FAIL_ALLOC_TRAP"))
		raise(SIGTRAP);         /* RB_FAIL_ALLOC_TRAP=1: stop there under gdb to see who asked */
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
