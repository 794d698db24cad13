/*
 * kmodel.h - a model of the kernel side of one perf mmap, for driving the
 * recorder's real consumers (recorder/ring.c, recorder/auxring.c) without
 * trace hardware. Memory is laid out as the kernel maps it: the control page
 * (struct perf_event_mmap_page), 2^n data pages, then the AUX area at
 * pc->aux_offset (pc->aux_size bytes). The producer side follows the
 * kernel's order (kernel/events/ring_buffer.c):
 *   regular ring  perf_output_begin: read data_tail (acquire, the kernel's
 *                 smp_mb), drop and count the record if it does not fit, emit
 *                 a pending PERF_RECORD_LOST first; write; release-store
 *                 data_head (perf_output_put_handle: smp_wmb, WRITE_ONCE).
 *                 Backward rings write downwards, no tail.
 *   AUX area      the "hardware" writes bytes at the private aux head; full
 *                 mode stops at aux_tail (acquire) and flags TRUNCATED;
 *                 perf_aux_output_end then emits PERF_RECORD_AUX {offset,
 *                 size, flags} into the regular ring and only after it
 *                 publishes aux_head (release). Overwrite (snapshot) mode
 *                 overwrites freely and publishes aux_head only when the
 *                 event stops, as an offset inside the buffer for Intel PT /
 *                 BTS, monotonic otherwise, with an OVERWRITE AUX record.
 * One producer thread per model; the consumer is the code under test.
 */
#ifndef KMODEL_H
#define KMODEL_H

#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>

#define KM_AUX_TRUNCATED 0x01
#define KM_AUX_OVERWRITE 0x02
#define KM_AUX_PARTIAL   0x04
#define KM_AUX_COLLISION 0x08

struct kmodel {
	size_t page;
	uint8_t *mem;
	struct perf_event_mmap_page *pc;
	uint8_t *data, *aux;
	size_t data_size, aux_size;
	int backward;               /* write_backward regular ring */
	int aux_overwrite;          /* snapshot mode: read-only, free-running AUX area */
	int pt_head;                /* overwrite mode publishes aux_head inside the buffer (Intel PT, BTS) */
	uint8_t trailer[64];        /* sample_id trailer appended to LOST and AUX records */
	size_t trailer_len;
	uint64_t id;                /* sample id of the event (LOST records) */
	/* kernel-private */
	uint64_t head;              /* rb->head */
	uint64_t lost;              /* records dropped since the last LOST record */
	uint64_t aux_head;          /* rb->aux_head, monotonic */
	uint64_t aux_since_stop;    /* overwrite mode: bytes since the last stop */
	/* what happened, for the checks */
	uint64_t out_records, out_dropped, lost_records;
	uint64_t aux_written, aux_dropped, aux_truncations, aux_records, aux_rec_dropped;
	uint64_t aux_trunc_recorded;  /* TRUNCATED AUX records that made it into the ring */
	uint64_t aux_rec_dropped_bytes; /* aux_size of the AUX records that did not */
	uint64_t stop_head_mono;    /* monotonic aux head at the last stop */
	/* snapshot handshake with a consumer on another thread */
	int stop_req, stopped;
};

/* @data_bytes, @aux_bytes: powers of two (aux 0: no AUX area). 0 or -1. */
static inline int km_init(struct kmodel *m, size_t data_bytes, size_t aux_bytes, int backward,
			  int aux_overwrite, int pt_head)
{
	memset(m, 0, sizeof(*m));
	m->page = (size_t)sysconf(_SC_PAGESIZE);
	m->data_size = data_bytes;
	m->aux_size = aux_bytes;
	size_t len = m->page + m->data_size + m->aux_size;
	if (posix_memalign((void **)&m->mem, m->page, len))
		return -1;
	memset(m->mem, 0, len);   /* the kernel hands out zeroed pages */
	m->pc = (struct perf_event_mmap_page *)m->mem;
	m->data = m->mem + m->page;
	m->aux = m->data + m->data_size;
	m->pc->data_offset = m->page;
	m->pc->data_size = m->data_size;
	m->pc->aux_offset = m->page + m->data_size;
	m->pc->aux_size = m->aux_size;
	m->backward = backward;
	m->aux_overwrite = aux_overwrite;
	m->pt_head = pt_head;
	return 0;
}

static inline void km_fini(struct kmodel *m)
{
	free(m->mem);
	m->mem = NULL;
}

static inline void km_copy_in(uint8_t *ring, size_t size, uint64_t pos, const void *src, size_t n)
{
	size_t off = (size_t)(pos & (size - 1)), first = size - off < n ? size - off : n;
	memcpy(ring + off, src, first);
	memcpy(ring, (const uint8_t *)src + first, n - first);
}

/* perf_output_begin .. perf_output_end for one native record. 0, or -1 if dropped (counted). */
static inline int km_output(struct kmodel *m, const void *rec)
{
	struct perf_event_header h;
	uint8_t lostrec[24 + 64];
	size_t lsize = 0;

	memcpy(&h, rec, sizeof(h));
	if (m->lost && !m->backward) {
		struct perf_event_header lh = { PERF_RECORD_LOST, 0, (uint16_t)(24 + m->trailer_len) };
		memcpy(lostrec, &lh, 8);
		memcpy(lostrec + 8, &m->id, 8);
		memcpy(lostrec + 16, &m->lost, 8);
		memcpy(lostrec + 24, m->trailer, m->trailer_len);
		lsize = lh.size;
	}
	if (m->backward) {
		m->head -= h.size;
		km_copy_in(m->data, m->data_size, m->head, rec, h.size);
	} else {
		/* the kernel's smp_mb() before reading data_tail pairs with the reader's release */
		uint64_t tail = __atomic_load_n(&m->pc->data_tail, __ATOMIC_ACQUIRE);
		if (m->head - tail + lsize + h.size > m->data_size) {
			m->lost++;
			m->out_dropped++;
			return -1;
		}
		if (lsize) {
			km_copy_in(m->data, m->data_size, m->head, lostrec, lsize);
			m->head += lsize;
			m->lost = 0;
			m->lost_records++;
		}
		km_copy_in(m->data, m->data_size, m->head, rec, h.size);
		m->head += h.size;
	}
	m->out_records++;
	/* perf_output_put_handle: the record is written before the head that covers it */
	__atomic_store_n(&m->pc->data_head, m->head, __ATOMIC_RELEASE);
	return 0;
}

static inline void km_aux_record(struct kmodel *m, uint64_t offset, uint64_t size, uint64_t flags)
{
	uint8_t rec[32 + 64];
	struct perf_event_header h = { PERF_RECORD_AUX, 0, (uint16_t)(32 + m->trailer_len) };
	memcpy(rec, &h, 8);
	memcpy(rec + 8, &offset, 8);
	memcpy(rec + 16, &size, 8);
	memcpy(rec + 24, &flags, 8);
	memcpy(rec + 32, m->trailer, m->trailer_len);
	if (km_output(m, rec) == 0) {
		m->aux_records++;
		m->aux_trunc_recorded += !!(flags & KM_AUX_TRUNCATED);
	}
	else {
		m->aux_rec_dropped++;
		m->aux_rec_dropped_bytes += size;
	}
}

/*
 * The hardware writes @n bytes of @src; full mode then ends the output with
 * an AUX record (@flags, plus TRUNCATED if the area was full) and publishes
 * aux_head. Returns the bytes that went into the area.
 */
static inline size_t km_aux_write(struct kmodel *m, const uint8_t *src, size_t n, uint64_t flags)
{
	if (m->aux_overwrite) {
		for (size_t k = 0; k < n; k += m->aux_size) {   /* only the last aux_size bytes survive */
			size_t part = n - k < m->aux_size ? n - k : m->aux_size;
			km_copy_in(m->aux, m->aux_size, m->aux_head + k, src + k, part);
		}
		m->aux_head += n;
		m->aux_since_stop += n;
		m->aux_written += n;
		return n;
	}
	uint64_t tail = __atomic_load_n(&m->pc->aux_tail, __ATOMIC_ACQUIRE);
	size_t room = m->aux_size - (size_t)(m->aux_head - tail), w = n < room ? n : room;
	km_copy_in(m->aux, m->aux_size, m->aux_head, src, w);
	if (w < n) {
		flags |= KM_AUX_TRUNCATED;
		m->aux_truncations++;
		m->aux_dropped += n - w;
	}
	uint64_t offset = m->aux_head;
	m->aux_head += w;
	m->aux_written += w;
	if (w || flags)
		km_aux_record(m, offset, w, flags);
	/* perf_aux_output_end: the AUX record, then aux_head in the user page, after the data */
	__atomic_store_n(&m->pc->aux_head, m->aux_head, __ATOMIC_RELEASE);
	return w;
}

/* Overwrite mode: the driver stops (pmu->stop), publishing where it is. */
static inline void km_aux_stop(struct kmodel *m)
{
	uint64_t head = m->pt_head ? m->aux_head & (m->aux_size - 1) : m->aux_head;
	uint64_t size = m->pt_head ? m->aux_size : m->aux_since_stop;
	m->stop_head_mono = m->aux_head;
	km_aux_record(m, head, size, KM_AUX_OVERWRITE);
	m->aux_since_stop = 0;
	__atomic_store_n(&m->pc->aux_head, head, __ATOMIC_RELEASE);
}

/* Producer side of the handshake: call between writes; parks while the consumer snapshots. */
static inline void km_poll_stop(struct kmodel *m)
{
	if (!__atomic_load_n(&m->stop_req, __ATOMIC_ACQUIRE))
		return;
	km_aux_stop(m);
	__atomic_store_n(&m->stopped, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&m->stop_req, __ATOMIC_ACQUIRE))
		sched_yield();
	__atomic_store_n(&m->stopped, 0, __ATOMIC_RELEASE);
}

/* Consumer side: PERF_EVENT_IOC_DISABLE / ENABLE as seen by the caller (synchronous). */
static inline int km_threaded_disable(void *ctx)
{
	struct kmodel *m = ctx;
	__atomic_store_n(&m->stop_req, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&m->stopped, __ATOMIC_ACQUIRE))
		sched_yield();
	return 0;
}

static inline int km_threaded_enable(void *ctx)
{
	struct kmodel *m = ctx;
	__atomic_store_n(&m->stop_req, 0, __ATOMIC_RELEASE);
	while (__atomic_load_n(&m->stopped, __ATOMIC_ACQUIRE))
		sched_yield();
	return 0;
}

/* Single-threaded use: disable stops the "hardware" at once. */
static inline int km_sync_disable(void *ctx) { km_aux_stop(ctx); return 0; }
static inline int km_sync_enable(void *ctx) { (void)ctx; return 0; }

#endif
