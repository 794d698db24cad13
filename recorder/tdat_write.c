/*
 * tdat_write.c - see tdat_write.h. Stage: the end of a recording with --ftrace;
 * the per-CPU page files the drain thread wrote are concatenated behind the
 * header (copy_file_range, so the pages need not pass through memory).
 * All numbers in the file are in this host's byte order, which the header
 * declares. Never prints.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tdat_write.h"

void tracedat_option(struct pd_buf *b, uint16_t id, const void *data, uint32_t size)
{
	pd_buf_bytes(b, &id, 2);
	pd_buf_u32(b, size);
	pd_buf_bytes(b, data, size);
}

void tracedat_option_str(struct pd_buf *b, uint16_t id, const char *s)
{
	tracedat_option(b, id, s, (uint32_t)strlen(s) + 1);
}

int tdat_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t k = write(fd, c, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		c += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Append @len bytes of @src to @dst at its current offset. */
static int copy_file(int dst, int src, uint64_t len)
{
	char buf[65536];
	while (len) {
		ssize_t k = copy_file_range(src, NULL, dst, NULL, len, 0);
		if (k < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
			k = read(src, buf, len < sizeof(buf) ? len : sizeof(buf));   /* plain copy */
			if (k > 0 && tdat_write_all(dst, buf, (size_t)k) < 0)
				return -1;
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		len -= (uint64_t)k;
	}
	return 0;
}

int tracedat_write(const char *out, const struct pd_buf *meta, const struct pd_buf *options, uint32_t page_size,
		   int nr_cpus, const char *const *cpu_files, struct rec_err *e)
{
	struct pd_buf h = { 0 };
	uint64_t *size = calloc((size_t)nr_cpus + 1, sizeof(*size));
	int *fds = malloc(((size_t)nr_cpus + 1) * sizeof(*fds));
	char tmp[4096];
	int fd = -1, rc = -1;

	snprintf(tmp, sizeof(tmp), "%s.tmp", out);
	if (!size || !fds) {
		rec_fail(e, ENOMEM, "out of memory");
		goto err_out;
	}
	for (int c = 0; c < nr_cpus; c++) {
		struct stat sb;
		fds[c] = cpu_files[c] ? open(cpu_files[c], O_RDONLY | O_CLOEXEC) : -1;
		if (cpu_files[c] && (fds[c] < 0 || fstat(fds[c], &sb) < 0)) {
			rec_fail(e, errno, "cannot read %s: %s", cpu_files[c], strerror(errno));
			for (int k = 0; k <= c; k++)
				if (fds[k] >= 0)
					close(fds[k]);
			goto err_out;
		}
		size[c] = fds[c] >= 0 ? (uint64_t)sb.st_size / page_size * page_size : 0;
	}
	pd_buf_bytes(&h, meta->data, meta->len);
	pd_buf_u32(&h, (uint32_t)nr_cpus);
	pd_buf_bytes(&h, "options  ", 10);
	pd_buf_bytes(&h, options->data, options->len);
	uint16_t done = TDAT_OPT_DONE;
	pd_buf_bytes(&h, &done, 2);
	pd_buf_bytes(&h, "flyrecord", 10);
	/* offsets: the data of CPU 0 starts at the first page boundary after this table */
	uint64_t off = h.len + 16 * (uint64_t)nr_cpus;
	off = (off + page_size - 1) / page_size * page_size;
	for (int c = 0; c < nr_cpus; c++) {
		pd_buf_u64(&h, size[c] ? off : 0);
		pd_buf_u64(&h, size[c]);
		off += size[c];
	}
	uint64_t pad = (page_size - h.len % page_size) % page_size;
	if (h.oom) {
		rec_fail(e, ENOMEM, "out of memory");
		goto close_out;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		rec_fail(e, errno, "cannot create %s: %s", tmp, strerror(errno));
		goto close_out;
	}
	static const char zeros[65536];
	if (tdat_write_all(fd, h.data, h.len) < 0 || tdat_write_all(fd, zeros, (size_t)pad) < 0) {
		rec_fail(e, errno, "%s: write failed: %s", tmp, strerror(errno));
		goto close_out;
	}
	for (int c = 0; c < nr_cpus; c++)
		if (size[c] && copy_file(fd, fds[c], size[c]) < 0) {
			rec_fail(e, errno ? errno : EIO, "%s: copying CPU %d's pages from %s failed: %s", tmp, c,
				 cpu_files[c], strerror(errno ? errno : EIO));
			goto close_out;
		}
	if (close(fd) < 0) {
		fd = -1;
		rec_fail(e, errno, "%s: %s", tmp, strerror(errno));
		goto close_out;
	}
	fd = -1;
	if (rename(tmp, out) < 0) {
		rec_fail(e, errno, "cannot rename %s to %s: %s", tmp, out, strerror(errno));
		goto close_out;
	}
	rc = 0;
close_out:
	for (int c = 0; c < nr_cpus; c++)
		if (fds[c] >= 0)
			close(fds[c]);
err_out:
	if (fd >= 0)
		close(fd);
	if (rc)
		unlink(tmp);
	pd_buf_free(&h);
	free(size);
	free(fds);
	return rc;
}
