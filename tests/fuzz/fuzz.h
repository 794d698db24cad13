/*
 * fuzz.h - what the libFuzzer targets in tests/fuzz/ share: an input as an
 * anonymous in-memory file (memfd) that the readers open like any other, a
 * private scratch folder (in /dev/shm when there is one, so that fuzzing
 * does not wear a disk) removed at exit, and silencing of the programs'
 * normal output. Header-only: each target is one .c file plus this.
 *
 * The targets run under AddressSanitizer and UBSan (configure --enable-fuzz);
 * a crash, a leak or undefined behaviour in the code under test is a finding.
 */
#ifndef RB_FUZZ_H
#define RB_FUZZ_H

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An anonymous file holding @data, positioned at 0; -1 on failure. */
static inline int fuzz_memfd(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz-input", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t done = 0;
	while (done < size) {
		ssize_t n = write(fd, data + done, size - done);
		if (n <= 0) {
			close(fd);
			return -1;
		}
		done += (size_t)n;
	}
	lseek(fd, 0, SEEK_SET);
	return fd;
}

static inline int fuzz_rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb, (void)flag, (void)ftw;
	remove(path);
	return 0;
}

/* Remove @path and everything under it, never following links. */
static inline void fuzz_rmtree(const char *path)
{
	nftw(path, fuzz_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static char fuzz_scratch_path[256];

static inline void fuzz_scratch_cleanup(void)
{
	if (fuzz_scratch_path[0])
		fuzz_rmtree(fuzz_scratch_path);
}

/* A folder private to this process, created on first use and removed at exit. */
static inline const char *fuzz_scratch(void)
{
	if (fuzz_scratch_path[0])
		return fuzz_scratch_path;
	struct stat sb;
	const char *base = stat("/dev/shm", &sb) == 0 && S_ISDIR(sb.st_mode) && access("/dev/shm", W_OK) == 0 ?
			   "/dev/shm" : (getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	snprintf(fuzz_scratch_path, sizeof(fuzz_scratch_path), "%s/rbfuzz.XXXXXX", base);
	if (!mkdtemp(fuzz_scratch_path)) {
		perror("fuzz: mkdtemp");
		abort();
	}
	atexit(fuzz_scratch_cleanup);
	return fuzz_scratch_path;
}

/* Send the code under test's stdout to /dev/null (libFuzzer reports on stderr). */
static inline void fuzz_quiet_stdout(void)
{
	static int done;
	if (done)
		return;
	done = 1;
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		fflush(stdout);
		dup2(fd, 1);
		close(fd);
	}
}

/* Write @size bytes to @path (created or truncated). 0 or -1. */
static inline int fuzz_write_file(const char *path, const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	size_t done = 0;
	while (done < size) {
		ssize_t n = write(fd, data + done, size - done);
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	close(fd);
	return done == size ? 0 : -1;
}

#endif
