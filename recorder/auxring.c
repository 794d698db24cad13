/*
 * auxring.c - consumer of the perf AUX area (the trace hardware and its
 * driver are the producer), full-trace and snapshot mode.
 *
 * Full-trace protocol (kernel/events/ring_buffer.c, perf_aux_output_begin /
 * _end): the hardware writes trace bytes, the driver ends the output and the
 * kernel publishes aux_head in the control page after them. We load aux_head
 * with acquire, copy [aux_tail, aux_head) out (in two pieces when it wraps at
 * the end of the area), and release-store aux_tail: the kernel reads aux_tail
 * when it starts the next output, and must not see the space as free before
 * our copy is done. The kernel never writes past aux_tail here: when the area
 * is full it stops and flags its PERF_RECORD_AUX TRUNCATED.
 *
 * Snapshot protocol: the area is mapped read-only, the hardware overwrites
 * the oldest bytes, and aux_tail means nothing. The event is stopped first
 * (the driver publishes aux_head when it stops), then the newest bytes up to
 * the snapshot size are copied, then it runs again. Whether the buffer
 * wrapped since the previous snapshot depends on the PMU (perf-data-facts.md
 * sections 5.6 and 6): Intel PT and BTS report head as an offset inside the
 * buffer, so a wrap is inferred from the buffer's content; CoreSight's head
 * only grows; SPE's may do either.
 *
 * The AUXTRACE record fields are perf's (__auxtrace_mmap__read): size padded
 * to 8 with zero bytes, offset = position of the first byte in head space,
 * reference from the PMU (TSC for Intel, random for CoreSight), idx the
 * queue, cpu / tid of the ring.
 *
 * Workload: one call per ring per pass of the main loop; copies go straight
 * from the mapping to the writer. Nothing here is architecture-specific.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "auxring.h"

#define SPE_WRAP_WINDOW 512        /* bytes at the end of the area looked at for a first wrap */
#define PT_FIRST_WRAP_WORDS 512    /* u64 words at the end of the area (Intel PT, BTS) */
#define RECORD_AUXTRACE 71         /* perf's user record type (tools/lib/perf event.h) */

int aux__init(struct aux_ring *a, const struct aux_config *cfg)
{
	memset(a, 0, sizeof(*a));
	if (!cfg->size || (cfg->size & (cfg->size - 1)) || !cfg->pc || !cfg->data)
		return -1;
	if (cfg->snapshot && (!cfg->ops || !cfg->ops->disable || !cfg->ops->enable))
		return -1;
	a->c = *cfg;
	if (!a->c.snapshot_size || a->c.snapshot_size > a->c.size)
		a->c.snapshot_size = a->c.size;
	if (a->c.pt_ref_size) {
		if (a->c.pt_ref_size >= a->c.size || a->c.kind != AUX_INTEL_PT) {
			a->c.pt_ref_size = 0;
		} else {
			a->ref = calloc(1, a->c.pt_ref_size);   /* zeros: what the fresh mapping holds */
			if (!a->ref)
				return -1;
			a->ref_offset = a->c.size - a->c.pt_ref_size;
		}
	}
	return 0;
}

void aux__fini(struct aux_ring *a)
{
	if (!a)
		return;
	free(a->ref);
	a->ref = NULL;
}

size_t aux__pt_ref_size(size_t psb_period, size_t area, size_t snapshot_size)
{
	size_t ref = 2 * psb_period;

	if (snapshot_size <= 64 * 1024)
		return 0;
	if (ref > 256 * 1024)
		ref = 256 * 1024;
	if (ref >= area || ref >= snapshot_size / 2)
		return 0;
	return ref;
}

/* Bytes [head - size, head) of head space as one AUXTRACE record. */
static int emit(struct aux_ring *a, aux_chunk_fn fn, void *ctx, uint64_t head, size_t size)
{
	size_t len = a->c.size, head_off = (size_t)(head & (len - 1));
	struct aux_chunk c;
	struct perf_event_header h = { RECORD_AUXTRACE, 0, (uint16_t)sizeof(c.rec) };
	uint32_t w[2];

	if (size > head_off) {
		c.n1 = size - head_off;
		c.p1 = a->c.data + len - c.n1;
		c.n2 = head_off;
		c.p2 = a->c.data;
	} else {
		c.n1 = size;
		c.p1 = a->c.data + head_off - size;
		c.n2 = 0;
		c.p2 = NULL;
	}
	c.pad = (8 - (size & 7)) & 7;
	c.size = size;
	c.offset = head - size;
	memcpy(&c.rec[0], &h, sizeof(h));
	c.rec[1] = size + c.pad;
	c.rec[2] = c.offset;
	c.rec[3] = a->c.ops && a->c.ops->reference ? a->c.ops->reference(a->c.ops_ctx) : 0;
	w[0] = a->c.idx;
	w[1] = (uint32_t)a->c.tid;
	memcpy(&c.rec[4], w, 8);
	w[0] = (uint32_t)a->c.cpu;
	w[1] = 0;
	memcpy(&c.rec[5], w, 8);
	int rc = fn(ctx, a, &c);
	if (rc < 0)
		return rc;
	a->bytes += size;
	a->chunks++;
	return 0;
}

long aux__consume(struct aux_ring *a, aux_chunk_fn fn, void *ctx)
{
	/* pairs with the kernel's store of aux_head in perf_aux_output_end(), which follows the
	 * driver's barrier after the hardware's writes */
	uint64_t head = __atomic_load_n(&a->c.pc->aux_head, __ATOMIC_ACQUIRE);
	uint64_t old = a->prev, size = head - old;

	if (head == old)
		return 0;
	if (size > a->c.size) {
		/* the kernel never writes past aux_tail in this mode; if it did, only the last
		 * a->c.size bytes are still there */
		a->overwritten += size - a->c.size;
		old = head - a->c.size;
		size = a->c.size;
	}
	if (a->c.alignment) {
		size -= size % a->c.alignment;   /* the remainder waits for the next call */
		if (!size)
			return 0;
	}
	int rc = emit(a, fn, ctx, old + size, (size_t)size);
	if (rc < 0)
		return rc;
	a->prev = old + size;
	/* pairs with the kernel's read of aux_tail in perf_aux_output_begin(): our copy above is
	 * complete before it may reuse the space */
	__atomic_store_n(&a->c.pc->aux_tail, a->prev, __ATOMIC_RELEASE);
	return (long)size;
}

int aux__snapshot_begin(struct aux_ring *a)
{
	if (a->stopped)
		return 0;
	if (a->c.ops->disable(a->c.ops_ctx) < 0)
		return -1;
	a->stopped = 1;
	return 0;
}

int aux__snapshot_end(struct aux_ring *a)
{
	if (!a->stopped)
		return 0;
	a->stopped = 0;
	return a->c.ops->enable(a->c.ops_ctx);
}

/* Intel PT / BTS first wrap: any non-zero word in the last 4 KiB (the mapping starts zeroed). */
static int first_wrap_tail_words(const uint8_t *data, size_t len)
{
	size_t words = len / 8, from = words > PT_FIRST_WRAP_WORDS ? words - PT_FIRST_WRAP_WORDS : 0;

	for (size_t i = from; i < words; i++) {
		uint64_t v;
		memcpy(&v, data + 8 * i, 8);
		if (v)
			return 1;
	}
	return 0;
}

/*
 * Intel PT reference buffer (perf's intel_pt_wrapped, reproduced literally):
 * wrapped if head lies strictly inside the fixed window at the end of the
 * area, or the window's bytes differ from the copy kept at the previous
 * snapshot; then the copy is refreshed with the bytes just before head (in
 * perf's order: the piece from the area's start first).
 */
static int pt_ref_wrapped(struct aux_ring *a, size_t head)
{
	size_t len = a->c.size, rs = a->c.pt_ref_size, ro = a->ref_offset, end = ro + rs;
	int wrapped = 0;

	if (end > len)
		wrapped = head > ro || head < end - len;
	else
		wrapped = head > ro && head < end;
	if (!wrapped) {
		if (end <= len) {
			wrapped = memcmp(a->ref, a->c.data + ro, rs) != 0;
		} else {
			size_t part = end - len;
			wrapped = memcmp(a->ref, a->c.data + ro, part) || memcmp(a->ref + part, a->c.data, rs - part);
		}
	}
	if (head >= rs) {
		memcpy(a->ref, a->c.data + head - rs, rs);
	} else {
		memcpy(a->ref, a->c.data, head);
		memcpy(a->ref + head, a->c.data + len - (rs - head), rs - head);
	}
	return wrapped;
}

/* SPE first wrap: head past the area, or data in its last 512 bytes (from head if later). */
static int spe_has_wrapped(const uint8_t *data, size_t len, uint64_t head)
{
	if (head >= len)
		return 1;
	size_t from = len > SPE_WRAP_WINDOW ? len - SPE_WRAP_WINDOW : 0;
	if (head > from)
		from = (size_t)head;
	for (size_t i = from & ~(size_t)7; i + 8 <= len; i += 8) {
		uint64_t v;
		memcpy(&v, data + i, 8);
		if (v)
			return 1;
	}
	return 0;
}

long aux__snapshot_read(struct aux_ring *a, aux_chunk_fn fn, void *ctx)
{
	/* pairs with the kernel's store of aux_head when the driver stopped (perf_aux_output_end) */
	uint64_t head = __atomic_load_n(&a->c.pc->aux_head, __ATOMIC_ACQUIRE);
	uint64_t old = a->prev, len = a->c.size, mask = len - 1, size;
	int wrapped = 0;

	switch (a->c.kind) {
	case AUX_INTEL_PT:
	case AUX_INTEL_BTS:
		/* head is the write offset inside the buffer */
		if (a->c.pt_ref_size) {
			wrapped = pt_ref_wrapped(a, (size_t)(head & mask));
		} else {
			if (!a->wrapped && first_wrap_tail_words(a->c.data, (size_t)len))
				a->wrapped = 1;
			wrapped = a->wrapped;
		}
		if (wrapped) {
			old = head;
			head += len;   /* the whole buffer, ending at head */
		} else {
			old &= mask;
			if (old > head)
				head += len;
		}
		break;
	case AUX_ARM_SPE:
		if (!a->wrapped && spe_has_wrapped(a->c.data, (size_t)len, head))
			a->wrapped = 1;
		wrapped = a->wrapped;
		if (wrapped) {
			if (head < len)
				head += len;
			old = head - len;
		}
		break;
	default:
		/* monotonic head: it moved by head - old; more than the area means the oldest were lost */
		if (head - old > len) {
			a->overwritten += head - old - len;
			old = head - len;
		}
		wrapped = head - old == len;
		break;
	}
	if (head == old)
		return 0;
	uint64_t head_off = head & mask, old_off = old & mask;
	size = head_off > old_off ? head_off - old_off : len - (old_off - head_off);
	if (size > a->c.snapshot_size) {
		if (a->c.kind == AUX_CS_ETM || a->c.kind == AUX_OTHER)
			a->overwritten += size - a->c.snapshot_size;
		size = a->c.snapshot_size;
	}
	int rc = emit(a, fn, ctx, head, (size_t)size);
	if (rc < 0)
		return rc;
	a->prev = head;
	a->snapshots++;
	a->snap_wrapped += wrapped != 0;
	return (long)size;
}
