/*
 * fail_io.c - an LD_PRELOAD shim for the I/O-error tests: with RB_FAIL_IO=N
 * in the environment, the N-th output call counted from main() fails, as a
 * full or failing disk makes it fail; every other call goes to glibc.
 *
 * Counted: write, pwrite, pwrite64, writev, pwritev, splice and
 * copy_file_range into a file, fsync, fdatasync, ftruncate, fallocate,
 * posix_fallocate on regular files (what a disk holds: not pipes, terminals
 * or devices, and so never the standard output the program reports on
 * unless it is redirected to a file), and rename, renameat.
 * These are what SQLite's VFS, the AUX spool and rbrecord's writers call
 * through the dynamic linker. glibc's stdio calls its internal write, so
 * the shim puts its own write under the streams that reach a file: a
 * stream fopen opens for writing, and stdout when it is a regular file,
 * become fopencookie streams whose writes are the counted write above (a
 * short one retried, as glibc's file streams retry).
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
#include <sys/vfs.h>
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
/* A regular file on a disk: not the kernel's files that look regular (tracefs, sysfs, procfs, debugfs). */
static int on_disk(int fd)
{
	struct stat sb;
	struct statfs fs;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || fstatfs(fd, &fs) < 0)
		return 0;
	return fs.f_type != 0x74726163 /* tracefs */ && fs.f_type != 0x62656572 /* sysfs */ &&
	       fs.f_type != 0x9fa0 /* proc */ && fs.f_type != 0x64626720 /* debugfs */;
}

static int should_fail(int fd, int is_write)
{
	if (fd >= 0 && !on_disk(fd))
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

ssize_t splice(int in, loff_t *in_off, int out, loff_t *out_off, size_t n, unsigned flags)
{
	static ssize_t (*real)(int, loff_t *, int, loff_t *, size_t, unsigned);
	if (!real)
		real = next("splice");
	int f = should_fail(out, 1);
	return f == 1 ? -1 : real(in, in_off, out, out_off, f == 2 ? half(n) : n, flags);
}

ssize_t copy_file_range(int in, loff_t *in_off, int out, loff_t *out_off, size_t n, unsigned flags)
{
	static ssize_t (*real)(int, loff_t *, int, loff_t *, size_t, unsigned);
	if (!real)
		real = next("copy_file_range");
	int f = should_fail(out, 1);
	return f == 1 ? -1 : real(in, in_off, out, out_off, f == 2 ? half(n) : n, flags);
}

/* stdio over the counted write: the cookie is the file descriptor's stream (NULL: stdout, fd 1) */
struct cookie {
	FILE *orig;
	int fd;
};

static ssize_t cookie_write(void *c, const char *p, size_t n)
{
	struct cookie *k = c;
	size_t done = 0;
	while (done < n) {
		ssize_t w = write(k->fd, p + done, n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return done ? (ssize_t)done : -1;
		done += (size_t)w;
	}
	return (ssize_t)done;
}

static ssize_t cookie_read(void *c, char *p, size_t n)
{
	return read(((struct cookie *)c)->fd, p, n);
}

static int cookie_seek(void *c, off64_t *off, int whence)
{
	off64_t r = lseek64(((struct cookie *)c)->fd, *off, whence);
	if (r < 0)
		return -1;
	*off = r;
	return 0;
}

static int cookie_close(void *c)
{
	struct cookie *k = c;
	static int (*real_fclose)(FILE *);
	if (!real_fclose)
		real_fclose = next("fclose");
	int rc = k->orig ? real_fclose(k->orig) : 0;
	free(k);
	return rc;
}

static const cookie_io_functions_t cookie_io = { cookie_read, cookie_write, cookie_seek, cookie_close };

static FILE *counted_stream(FILE *orig, int fd, const char *mode)
{
	if (!on_disk(fd))
		return orig;
	struct cookie *k = malloc(sizeof(*k));
	FILE *f = k ? fopencookie(k, mode, cookie_io) : NULL;
	if (!f) {
		free(k);
		return orig;
	}
	k->orig = orig;
	k->fd = fd;
	return f;
}

static FILE *open_counted(const char *name, const char *path, const char *mode)
{
	FILE *(*real)(const char *, const char *) = (FILE * (*)(const char *, const char *)) next(name);
	FILE *f = real(path, mode);
	if (!f || !strpbrk(mode, "wa+"))
		return f;
	return counted_stream(f, fileno(f), mode);
}

FILE *fopen(const char *path, const char *mode)
{
	return open_counted("fopen", path, mode);
}

FILE *fopen64(const char *path, const char *mode)
{
	return open_counted("fopen64", path, mode);
}

/* stdout, when it is a file, through the counted write from main() on */
static void count_stdout(void)
{
	FILE *f = counted_stream(NULL, STDOUT_FILENO, "w");
	if (f)
		stdout = f;
}
#define PRELOAD_AT_MAIN count_stdout

#define PRELOAD_LOG_ENV "RB_FAIL_IO_LOG"
#include "preload_main.h"
