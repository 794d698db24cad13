/*
 * ring.c - consumer of the perf regular ring buffer (the kernel is the
 * producer), forward and backward (overwrite).
 *
 * Forward protocol (kernel/events/ring_buffer.c, include/uapi perf_event.h):
 * the kernel writes records, then publishes data_head with a release store
 * (perf_output_put_handle: smp_wmb() before the head update). We load
 * data_head with acquire, read records up to it, and release-store data_tail,
 * which tells the kernel the space is free (it reads data_tail before
 * writing: perf_output_begin's smp_mb() pairs with our release).
 *
 * Backward protocol: write_backward events write downwards from data_head;
 * reading forward from data_head gives newest records first. The ring is
 * mapped read-only (no data_tail: the kernel overwrites the oldest data).
 * The output is paused (PERF_EVENT_IOC_PAUSE_OUTPUT) while it is read.
 *
 * Workload: one consumer thread draining a few to a few hundred rings at a
 * time, MB/s of records. Nothing here is architecture-specific: the only
 * ordering used is the C11 acquire/release the kernel's smp_* pair with
 * on every architecture (x86, arm64, POWER).
 */
#include "config.h"
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include "ring.h"

#define BOUNCE_SIZE 65536   /* header.size is a u16 */

static int fd_pause(void *ctx, int on)
{
	struct ring *r = ctx;
	return ioctl(r->fd, PERF_EVENT_IOC_PAUSE_OUTPUT, on) < 0 ? -errno : 0;
}

static const struct ring_ops fd_ops = { fd_pause };

int ring__new_mem(struct ring **out, void *base, size_t page, size_t data_size, int cpu, int tid,
		  int overwrite, const struct ring_ops *ops, void *ops_ctx, struct rec_err *e)
{
	struct ring *r;

	*out = NULL;
	if (!data_size || (data_size & (data_size - 1)))
		return rec_fail(e, EINVAL, "ring of %zu bytes is not a power of two", data_size);
	r = calloc(1, sizeof(*r));
	if (!r || !(r->bounce = malloc(BOUNCE_SIZE))) {
		free(r);
		return rec_fail(e, ENOMEM, "out of memory");
	}
	r->fd = -1;
	r->cpu = cpu;
	r->tid = tid;
	r->overwrite = overwrite;
	r->base = base;
	r->mmap_len = 0;   /* not ours to unmap */
	r->data_size = data_size;
	r->pc = base;
	r->data = (const uint8_t *)base + page;
	r->ops = ops;
	r->ops_ctx = ops_ctx;
	*out = r;
	return 0;
}

int ring__new(struct ring **out, int fd, int cpu, int tid, size_t data_pages, int overwrite,
	      struct rec_err *e)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct ring *r;

	*out = NULL;
	if (!data_pages || (data_pages & (data_pages - 1)))
		return rec_fail(e, EINVAL, "ring size of %zu pages is not a power of two", data_pages);
	r = calloc(1, sizeof(*r));
	if (!r)
		return rec_fail(e, ENOMEM, "out of memory");
	r->fd = fd;
	r->cpu = cpu;
	r->tid = tid;
	r->overwrite = overwrite;
	r->data_size = data_pages * page;
	r->mmap_len = r->data_size + page;
	r->base = MAP_FAILED;
	r->bounce = malloc(BOUNCE_SIZE);
	if (!r->bounce) {
		rec_fail(e, ENOMEM, "out of memory");
		goto err_out;
	}
	/* read-write tells the kernel we will move data_tail; read-only makes it overwrite */
	r->base = mmap(NULL, r->mmap_len, overwrite ? PROT_READ : PROT_READ | PROT_WRITE,
		       MAP_SHARED, fd, 0);
	if (r->base == MAP_FAILED) {
		int err = errno;
		rec_fail(e, err, "mmap of %zu KiB ring for fd %d (cpu %d, tid %d) failed: %s%s", r->mmap_len / 1024,
			 fd, cpu, tid, strerror(err),
			 err == EPERM ? " (over perf_event_mlock_kb: use a smaller -m, or raise it)" : "");
		goto err_out;
	}
	r->pc = r->base;
	r->data = (const uint8_t *)r->base + page;
	r->ops = &fd_ops;
	r->ops_ctx = r;
	*out = r;
	return 0;
err_out:
	ring__free(r);
	return -1;
}

void ring__free(struct ring *r)
{
	if (!r)
		return;
	if (r->base != MAP_FAILED && r->base && r->mmap_len)
		munmap(r->base, r->mmap_len);
	free(r->bounce);
	free(r);
}

/* The record at ring position @pos, contiguous (copied to the bounce buffer if it wraps). */
static const struct perf_event_header *record_at(struct ring *r, uint64_t pos, uint16_t *size)
{
	uint64_t mask = r->data_size - 1;
	size_t off = (size_t)(pos & mask);
	struct perf_event_header h;

	/* the header itself may straddle the end (8 bytes, 8-aligned records: only if misaligned) */
	if (off + sizeof(h) <= r->data_size) {
		memcpy(&h, r->data + off, sizeof(h));
	} else {
		size_t first = r->data_size - off;
		memcpy(&h, r->data + off, first);
		memcpy((uint8_t *)&h + first, r->data, sizeof(h) - first);
	}
	*size = h.size;
	if (off + h.size <= r->data_size)
		return (const struct perf_event_header *)(r->data + off);
	size_t first = r->data_size - off;
	memcpy(r->bounce, r->data + off, first);
	memcpy(r->bounce + first, r->data, h.size - first);
	return (const struct perf_event_header *)r->bounce;
}

long ring__consume(struct ring *r, ring_record_fn fn, void *ctx)
{
	/* pairs with the kernel's release of data_head in perf_output_put_handle() (smp_wmb + WRITE_ONCE) */
	uint64_t head = __atomic_load_n(&r->pc->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->pc->data_tail;   /* only we write it */
	long n = 0;
	int rc = 0;

	while (tail < head) {
		uint16_t size;
		const struct perf_event_header *h = record_at(r, tail, &size);
		if (size < sizeof(*h) || size > head - tail)
			break;   /* cannot happen with a sane kernel; stop rather than loop */
		rc = fn(ctx, r, h);
		if (rc < 0)
			break;
		tail += size;
		r->bytes += size;
		r->records++;
		n++;
	}
	/* pairs with the kernel's smp_mb() before it reads data_tail in perf_output_begin(): our reads of
	 * the records above happen before it may overwrite them */
	__atomic_store_n(&r->pc->data_tail, tail, __ATOMIC_RELEASE);
	return rc < 0 ? rc : n;
}

static int pause_output(struct ring *r, int on, struct rec_err *e)
{
	int rc = r->ops && r->ops->pause ? r->ops->pause(r->ops_ctx, on) : -ENOTSUP;
	if (rc < 0)
		return rec_fail(e, -rc, "PERF_EVENT_IOC_PAUSE_OUTPUT(%d) on fd %d (cpu %d) failed: %s",
				on, r->fd, r->cpu, strerror(-rc));
	return 0;
}

long ring__snapshot(struct ring *r, ring_record_fn fn, void *ctx, struct rec_err *e)
{
	long n = 0;
	int rc = 0;

	if (pause_output(r, 1, e) < 0)
		return -1;
	/* pairs with the kernel's release of data_head in perf_output_put_handle(); output is paused,
	 * so the head no longer moves while we read */
	uint64_t head = __atomic_load_n(&r->pc->data_head, __ATOMIC_ACQUIRE);
	/* new data lies in [head, prev_head): head moves down (it is a negative offset) */
	uint64_t limit = r->prev_head - head;
	if (r->snapshots == 0 || limit > r->data_size)
		limit = r->data_size;
	for (uint64_t o = 0; o + sizeof(struct perf_event_header) <= limit;) {
		uint16_t size;
		const struct perf_event_header *h = record_at(r, head + o, &size);
		/* a zero header is ring never written; a record past the limit was partly overwritten */
		if (size < sizeof(*h) || o + size > limit)
			break;
		rc = fn(ctx, r, h);
		if (rc < 0)
			break;
		o += size;
		r->bytes += size;
		r->records++;
		n++;
	}
	r->prev_head = head;
	r->snapshots++;
	if (pause_output(r, 0, e) < 0 && rc >= 0)
		return -1;
	return rc < 0 ? rc : n;
}

int ring__poll_extra(struct ring **rings, size_t n, int timeout_ms, size_t *nr_hup, int extra_fd, int *extra_ready)
{
	struct pollfd stackfds[65], *fds = n < 65 ? stackfds : calloc(n + 1, sizeof(*fds));
	size_t nfds = n;
	int rc;

	if (!fds)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		fds[i].fd = rings[i]->fd;
		fds[i].events = POLLIN;
		fds[i].revents = 0;
	}
	if (extra_fd >= 0) {
		fds[n].fd = extra_fd;
		fds[n].events = POLLIN;
		fds[n].revents = 0;
		nfds++;
	}
	rc = poll(fds, nfds, timeout_ms);
	if (rc < 0)
		rc = -errno;
	*nr_hup = 0;
	for (size_t i = 0; rc > 0 && i < n; i++)
		if (fds[i].revents & (POLLHUP | POLLERR))
			(*nr_hup)++;
	if (extra_ready)
		*extra_ready = rc > 0 && extra_fd >= 0 && (fds[n].revents & POLLIN);
	if (fds != stackfds)
		free(fds);
	return rc;
}

int ring__poll(struct ring **rings, size_t n, int timeout_ms, size_t *nr_hup)
{
	return ring__poll_extra(rings, n, timeout_ms, nr_hup, -1, NULL);
}
