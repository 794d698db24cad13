/* fingerprint.c - see fingerprint.h: FNV-1a (64 bits) over the first RB_FINGERPRINT_BYTES. */
#include "config.h"
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <errno.h>
#include "store/rbtrace/fingerprint.h"

int rb_fingerprint(const char *path, char hex[17], uint64_t *size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat sb;
	uint8_t *buf = malloc(RB_FINGERPRINT_BYTES);
	if (!buf || fstat(fd, &sb) < 0) {
		int e = buf ? errno : ENOMEM;
		free(buf);
		close(fd);
		errno = e;
		return -1;
	}
	size_t n = 0;
	while (n < RB_FINGERPRINT_BYTES) {
		ssize_t r = read(fd, buf + n, RB_FINGERPRINT_BYTES - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ buf[i]) * 0x100000001b3ULL;
	free(buf);
	snprintf(hex, 17, "%016" PRIx64, h);
	*size = (uint64_t)sb.st_size;
	return 0;
}
