/*
 * fail_io.c - an LD_PRELOAD shim for the I/O-error tests: with RB_FAIL_IO=N
 * in the environment, the N-th output call counted from main() fails, as a
 * full or failing disk makes it fail; every other call goes to glibc.
 *
 * Counted: write, pwrite, pwrite64, writev, pwritev, fsync, fdatasync,
 * ftruncate, fallocate, posix_fallocate on regular files (what a disk holds:
 * not pipes, terminals or devices, and so never the standard output the
 * program reports on), and rename, renameat.
 * These are what SQLite's VFS, the AUX spool and rbrecord's writer call
 * through the dynamic linker. stdio writes to FILE streams do not pass
 * here (glibc calls its internal write); /dev/full tests those.
 *
 *   RB_FAIL_IO=N          the N-th counted call fails (0 or unset: none)
 *   RB_FAIL_IO_ERRNO=EIO  the error (ENOSPC by default; EIO, EFBIG, EDQUOT)
 *   RB_FAIL_IO_SHORT=1    a write fails by being short: half its bytes (at
 *                         least one) are written and reported; the calls
 *                         after it go on normally, as after a real short write
 *   RB_FAIL_IO_STICKY=1   every counted call from the N-th on fails (a disk
 *                         that stays full)
 *   RB_FAIL_IO_LOG=FILE   appends the number of counted calls at exit, so a
 *                         loop knows when N has passed the last one
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static long fail_at = -1;       /* -1: not read yet; 0: never */
static int fail_errno = ENOSPC, fail_short, fail_sticky;
static long calls;
static int armed;               /* set when main() starts */

static void *next(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

static void read_env(void)
{
	const char *s = getenv("RB_FAIL_IO");
	fail_at = s ? atol(s) : 0;
	s = getenv("RB_FAIL_IO_ERRNO");
	if (s && !strcmp(s, "EIO"))
		fail_errno = EIO;
	else if (s && !strcmp(s, "EFBIG"))
		fail_errno = EFBIG;
	else if (s && !strcmp(s, "EDQUOT"))
		fail_errno = EDQUOT;
	fail_short = getenv("RB_FAIL_IO_SHORT") != NULL;
	fail_sticky = getenv("RB_FAIL_IO_STICKY") != NULL;
}

/* 1: this call fails (errno is set); 2: this write is cut short; 0: it goes through */
static int should_fail(int fd, int is_write)
{
	struct stat sb;
	if (fd >= 0 && (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)))
		return 0;
	if (fail_at < 0)
		read_env();
	if (!__atomic_load_n(&armed, __ATOMIC_RELAXED))
		return 0;
	long n = __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
	if (fail_at <= 0 || n < fail_at || (n > fail_at && !fail_sticky))
		return 0;
	if (fail_short && is_write && n == fail_at)
		return 2;
	errno = fail_errno;
	return 1;
}

static size_t half(size_t n)
{
	return n > 1 ? n / 2 : n;
}

ssize_t write(int fd, const void *p, size_t n)
{
	static ssize_t (*real)(int, const void *, size_t);
	if (!real)
		real = next("write");
	int f = should_fail(fd, 1);
	return f == 1 ? -1 : real(fd, p, f == 2 ? half(n) : n);
}

ssize_t pwrite(int fd, const void *p, size_t n, off_t off)
{
	static ssize_t (*real)(int, const void *, size_t, off_t);
	if (!real)
		real = next("pwrite");
	int f = should_fail(fd, 1);
	return f == 1 ? -1 : real(fd, p, f == 2 ? half(n) : n, off);
}

ssize_t pwrite64(int fd, const void *p, size_t n, off64_t off)
{
	static ssize_t (*real)(int, const void *, size_t, off64_t);
	if (!real)
		real = next("pwrite64");
	int f = should_fail(fd, 1);
	return f == 1 ? -1 : real(fd, p, f == 2 ? half(n) : n, off);
}

/* a short vector write: the first buffer only, cut in half */
ssize_t writev(int fd, const struct iovec *v, int cnt)
{
	static ssize_t (*real)(int, const struct iovec *, int);
	if (!real)
		real = next("writev");
	int f = should_fail(fd, 1);
	if (f == 1)
		return -1;
	if (f == 2 && cnt > 0) {
		struct iovec one = { v[0].iov_base, half(v[0].iov_len) };
		return real(fd, &one, 1);
	}
	return real(fd, v, cnt);
}

ssize_t pwritev(int fd, const struct iovec *v, int cnt, off_t off)
{
	static ssize_t (*real)(int, const struct iovec *, int, off_t);
	if (!real)
		real = next("pwritev");
	int f = should_fail(fd, 1);
	if (f == 1)
		return -1;
	if (f == 2 && cnt > 0) {
		struct iovec one = { v[0].iov_base, half(v[0].iov_len) };
		return real(fd, &one, 1, off);
	}
	return real(fd, v, cnt, off);
}

int fsync(int fd)
{
	static int (*real)(int);
	if (!real)
		real = next("fsync");
	return should_fail(fd, 0) ? -1 : real(fd);
}

int fdatasync(int fd)
{
	static int (*real)(int);
	if (!real)
		real = next("fdatasync");
	return should_fail(fd, 0) ? -1 : real(fd);
}

int ftruncate(int fd, off_t len)
{
	static int (*real)(int, off_t);
	if (!real)
		real = next("ftruncate");
	return should_fail(fd, 0) ? -1 : real(fd, len);
}

int ftruncate64(int fd, off64_t len)
{
	static int (*real)(int, off64_t);
	if (!real)
		real = next("ftruncate64");
	return should_fail(fd, 0) ? -1 : real(fd, len);
}

int fallocate(int fd, int mode, off_t off, off_t len)
{
	static int (*real)(int, int, off_t, off_t);
	if (!real)
		real = next("fallocate");
	return should_fail(fd, 0) ? -1 : real(fd, mode, off, len);
}

int posix_fallocate(int fd, off_t off, off_t len)
{
	static int (*real)(int, off_t, off_t);
	if (!real)
		real = next("posix_fallocate");
	if (should_fail(fd, 0))
		return errno;
	return real(fd, off, len);
}

int rename(const char *from, const char *to)
{
	static int (*real)(const char *, const char *);
	if (!real)
		real = next("rename");
	return should_fail(-1, 0) ? -1 : real(from, to);
}

int renameat(int d1, const char *from, int d2, const char *to)
{
	static int (*real)(int, const char *, int, const char *);
	if (!real)
		real = next("renameat");
	return should_fail(-1, 0) ? -1 : real(d1, from, d2, to);
}

#define PRELOAD_LOG_ENV "RB_FAIL_IO_LOG"
#include "preload_main.h"
