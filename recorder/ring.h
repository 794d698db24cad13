/*
 * ring.h - the perf regular ring buffer, consumer side.
 *
 * Usage:
 *   ring__new(&r, fd, cpu, tid, pages, overwrite, &err)   mmap the control page + 2^n data pages
 *   ring__consume(r, fn, ctx)        forward ring: every complete record, oldest first
 *   ring__snapshot(r, fn, ctx)       backward (overwrite) ring: pause, newest records back
 *                                    to the previous snapshot, resume
 *   ring__free(r)
 * ring__poll() waits on several rings at once (watermark wake-ups).
 * A ring is memory plus one operation on its event (pausing the output):
 * ring__new() maps the kernel's buffer and pauses with an ioctl;
 * ring__new_mem() takes memory laid out the same way and caller's ops (the
 * kernel model in tests/unit/test_auxmodel.c drives the same code).
 * @fn sees one record at a time, contiguous even when it wrapped at the end
 * of the ring; it may not keep the pointer.
 */
#ifndef REC_RING_H
#define REC_RING_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>
#include "util.h"

struct ring_ops {
	int (*pause)(void *ctx, int on);   /* stop / resume the output (PERF_EVENT_IOC_PAUSE_OUTPUT). 0 or -errno */
};

struct ring {
	int fd;                          /* the event fd whose buffer this is (others SET_OUTPUT to it) */
	int cpu;                         /* CPU the ring belongs to, -1 for a per-thread ring */
	int tid;                         /* thread of a per-thread ring, -1 for a per-CPU ring */
	int overwrite;                   /* backward ring, mapped read-only */
	void *base;                      /* control page followed by the data pages */
	size_t mmap_len;
	size_t data_size;                /* power of two */
	struct perf_event_mmap_page *pc;
	const uint8_t *data;
	uint64_t prev_head;              /* overwrite: head at the previous snapshot */
	int snapshots;                   /* overwrite: snapshots taken */
	uint8_t *bounce;                 /* a record that wrapped, reassembled (64 KiB: max record size) */
	uint64_t bytes;                  /* bytes consumed */
	uint64_t records;                /* records consumed */
	const struct ring_ops *ops;
	void *ops_ctx;
};

/* Called for each record; a negative return stops the pass and is returned. */
typedef int (*ring_record_fn)(void *ctx, struct ring *r, const struct perf_event_header *h);

int ring__new(struct ring **out, int fd, int cpu, int tid, size_t data_pages, int overwrite,
	      struct rec_err *e);
/*
 * A ring over memory the caller owns: @base is the control page followed by
 * @data_size bytes (a power of two) of data. Ops are needed for snapshots.
 */
int ring__new_mem(struct ring **out, void *base, size_t page, size_t data_size, int cpu, int tid,
		  int overwrite, const struct ring_ops *ops, void *ops_ctx, struct rec_err *e);
/* Forward ring: consume all complete records. Returns records consumed or @fn's negative value. */
long ring__consume(struct ring *r, ring_record_fn fn, void *ctx);
/* Backward ring: snapshot (pause, read back from data_head, resume). Records or < 0. */
long ring__snapshot(struct ring *r, ring_record_fn fn, void *ctx, struct rec_err *e);
/*
 * Wait up to @timeout_ms for any of @n rings to reach its watermark. Ready
 * count, 0, or -errno. @nr_hup: rings whose event has gone (its task exited).
 */
int ring__poll(struct ring **rings, size_t n, int timeout_ms, size_t *nr_hup);
/* The same, also waking when @extra_fd (>= 0) is readable: *@extra_ready then 1. */
int ring__poll_extra(struct ring **rings, size_t n, int timeout_ms, size_t *nr_hup, int extra_fd, int *extra_ready);
/* Accepts NULL and half-built rings. */
void ring__free(struct ring *r);

#endif
