/*
 * auxring.h - the perf AUX area, consumer side: where trace hardware
 * (Intel PT, Intel BTS, CoreSight ETM, Arm SPE) writes, next to a regular
 * ring whose control page carries aux_head / aux_tail.
 *
 * An AUX ring is memory plus a few operations on its event (struct aux_ops):
 * the recorder gives it the kernel's mapping and ioctls, the tests a model of
 * the kernel (tests/unit/test_auxmodel.c). Nothing here calls the kernel.
 *
 * Usage, full-trace mode (mapped read-write, the kernel stops at aux_tail):
 *   aux__init(&a, &cfg)                  memory, size, PMU kind, ops
 *   aux__consume(&a, fn, ctx)            every byte since the last call, as one
 *                                        AUXTRACE record (two pieces if it wraps);
 *                                        then aux_tail is released
 * Snapshot mode (mapped read-only, the kernel overwrites the oldest bytes):
 *   aux__snapshot_begin(&a)              stop the event (the kernel publishes aux_head)
 *   aux__snapshot_read(&a, fn, ctx)      the newest bytes, up to the snapshot size
 *   aux__snapshot_end(&a)                restart the event
 * Several rings are stopped together (begin on all, read all, end all) so
 * their snapshots cover the same moment.
 * @fn gets the record and the payload pieces; it may not keep the pointers.
 */
#ifndef REC_AUXRING_H
#define REC_AUXRING_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

/* Which PMU writes the area: decides how a snapshot finds out that the buffer wrapped. */
enum aux_kind {
	AUX_INTEL_PT,    /* head is an offset inside the buffer; reference buffer or first-wrap test */
	AUX_INTEL_BTS,   /* as Intel PT's first-wrap test */
	AUX_CS_ETM,      /* head only grows: wrapped when it moved by more than the buffer */
	AUX_ARM_SPE,     /* sticky: head >= size, or data in the last 512 bytes */
	AUX_OTHER,       /* treated as CoreSight: monotonic head */
};

struct aux_ops {
	int (*disable)(void *ctx);          /* stop tracing: the driver publishes aux_head. 0 or -1 */
	int (*enable)(void *ctx);           /* restart it. 0 or -1 */
	uint64_t (*reference)(void *ctx);   /* AUXTRACE.reference for bytes read now (TSC, random, clock) */
};

struct aux_config {
	struct perf_event_mmap_page *pc;    /* control page of the regular ring the area belongs to */
	const uint8_t *data;                /* the AUX area */
	size_t size;                        /* bytes, a power of two */
	enum aux_kind kind;
	int snapshot;                       /* read-only, free-running area */
	size_t snapshot_size;               /* most bytes per snapshot (0: the whole area) */
	size_t pt_ref_size;                 /* Intel PT reference-buffer bytes (0: first-wrap test) */
	unsigned alignment;                 /* only whole units of this many bytes (BTS: 24), 0 none */
	uint32_t idx;                       /* queue number (AUXTRACE.idx) */
	int cpu, tid;                       /* AUXTRACE.cpu / tid (-1 when none) */
	const struct aux_ops *ops;
	void *ops_ctx;
};

struct aux_ring {
	struct aux_config c;
	uint64_t prev;          /* head at the previous read (perf's mm->prev); full mode: == our aux_tail */
	int wrapped;            /* snapshot: the first wrap has been seen (sticky tests) */
	uint8_t *ref;           /* Intel PT reference copy, pt_ref_size bytes */
	size_t ref_offset;      /* fixed window: size - pt_ref_size */
	int stopped;            /* between snapshot begin and end */
	/* what was read */
	uint64_t bytes;         /* payload bytes in AUXTRACE records (padding excluded) */
	uint64_t chunks;        /* AUXTRACE records */
	uint64_t snapshots;     /* snapshots that found data */
	uint64_t snap_wrapped;  /* of which the buffer had wrapped since the previous one */
	uint64_t overwritten;   /* bytes the hardware wrote that no snapshot could keep (known only
				   where head grows monotonically: CoreSight, SPE) */
};

/* One PERF_RECORD_AUXTRACE and its payload: p1 then p2 (the wrap), then pad zero bytes. */
struct aux_chunk {
	uint64_t rec[6];        /* native record: header, size, offset, reference, idx/tid, cpu/reserved */
	const uint8_t *p1, *p2;
	size_t n1, n2, pad;
	uint64_t offset;        /* AUXTRACE.offset */
	size_t size;            /* payload bytes without the padding */
};

typedef int (*aux_chunk_fn)(void *ctx, struct aux_ring *a, const struct aux_chunk *c);

/* 0, or -1 if @cfg is unusable (size not a power of two, snapshot without ops, no memory). */
int aux__init(struct aux_ring *a, const struct aux_config *cfg);
void aux__fini(struct aux_ring *a);

/* Full-trace mode. Returns bytes read (0: nothing new) or @fn's negative value. */
long aux__consume(struct aux_ring *a, aux_chunk_fn fn, void *ctx);

/* Snapshot mode. begin/end: 0 or -1 (the ops failed). read: bytes written, or < 0. */
int aux__snapshot_begin(struct aux_ring *a);
long aux__snapshot_read(struct aux_ring *a, aux_chunk_fn fn, void *ctx);
int aux__snapshot_end(struct aux_ring *a);

/* Intel PT reference-buffer size for a psb period, area size and snapshot size (perf's rule). */
size_t aux__pt_ref_size(size_t psb_period, size_t area, size_t snapshot_size);

#endif
