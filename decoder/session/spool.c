/*
 * spool.c - see spool.h. O_TMPFILE where the file system has it, else a
 * mkstemp name unlinked at once.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "spool.h"

const char *rb_spool_dir(void)
{
	const char *d = getenv("TMPDIR");
	return d && *d ? d : "/tmp";
}

int rb_spool_open(void)
{
	const char *dir = rb_spool_dir();
#ifdef O_TMPFILE
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
#endif
	char path[4096];
	if (snprintf(path, sizeof(path), "%s/rbdecode-spool.XXXXXX", dir) >= (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	int fd2 = mkstemp(path);
	if (fd2 >= 0) {
		unlink(path);
		fcntl(fd2, F_SETFD, FD_CLOEXEC);
	}
	return fd2;
}

int rb_spool_write(int fd, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *p = buf;
	for (size_t w = 0; w < len;) {
		ssize_t k = pwrite(fd, p + w, len - w, (off_t)(off + w));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? errno : ENOSPC;
		w += (size_t)k;
	}
	return 0;
}
