/*
 * test_auxmodel - the recorder's ring consumers (recorder/ring.c,
 * recorder/auxring.c, the AUX record counters of recorder/auxinfo.c) driven
 * by a model of the kernel (kmodel.h) instead of perf_event_open: no trace
 * hardware, no syscalls, runs anywhere (qemu-user included).
 *
 *   1. full-trace AUX: AUXTRACE fields, a wrap in two pieces, padding
 *   2. PERF_RECORD_AUX flags TRUNCATED / PARTIAL / COLLISION counted
 *   3. stress: producer and consumer threads on different CPUs, >= 1 million
 *      records and AUX traffic; no torn or reordered record, every record
 *      either read or counted in a LOST record, every AUX byte read once at
 *      its offset, every byte the hardware could not write flagged TRUNCATED
 *   4. snapshots with the buffer wrapped at known points (Intel PT's head
 *      inside the buffer, CoreSight's monotonic head, SPE): bytes written
 *      equal what the model had in the ring, overwritten bytes reported
 *   5. snapshots while the producer runs on another CPU
 *   6. backward (--overwrite) regular ring snapshots: newest whole records
 *   7. AUXTRACE_INFO and address filters from a made-up sysfs tree (Intel PT
 *      filter string, CoreSight ETMv4 / ETE / ETMv3 blocks and TRCCONFIGR,
 *      SPE, BTS); the real-PMU comparisons are in tests/rec_aux.test
 *
 * AUXMODEL_RECORDS overrides the stress count (a short form under emulation).
 */
#define _GNU_SOURCE
#include "config.h"
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include "tap.h"
#include "kmodel.h"
#include "ring.h"
#include "auxring.h"
#include "auxinfo.h"

/* The AUX "trace": byte at monotonic position p, never a zero 8-byte word. */
static uint8_t pat(uint64_t p)
{
	uint64_t w = (p / 8) * 0x9e3779b97f4a7c15ULL + 0x0101010101010101ULL;
	return (uint8_t)(w >> (8 * (p % 8)));
}

static void fill(uint8_t *b, uint64_t from, size_t n)
{
	for (size_t i = 0; i < n; i++)
		b[i] = pat(from + i);
}

/* A SAMPLE-typed test record of @size bytes: its sequence number, then words derived from it. */
static void make_rec(uint8_t *rec, uint64_t seq, size_t size)
{
	struct perf_event_header h = { PERF_RECORD_SAMPLE, 0, (uint16_t)size };
	memcpy(rec, &h, 8);
	memcpy(rec + 8, &seq, 8);
	for (size_t i = 16; i < size; i += 8) {
		uint64_t w = seq ^ (i * 0x100000001b3ULL);
		memcpy(rec + i, &w, 8);
	}
}

static uint64_t ref_counter;
static uint64_t test_reference(void *ctx) { (void)ctx; return ++ref_counter; }

/* ------------------------------------------------------------ collectors */

struct got {
	uint8_t *bytes;          /* payload of every chunk, concatenated */
	size_t len, cap;
	uint64_t next_offset;    /* full mode: where the next chunk must start */
	int bad_offset, bad_bytes, bad_rec;
	uint64_t chunks;
	struct aux_chunk last;   /* copy of the last record fields */
	uint64_t last_ref;
	int check_pattern;       /* full mode: chunk bytes must be pat(offset + i) */
	int no_keep;             /* check only, do not keep the bytes (stress) */
};

static int take_chunk(void *ctx, struct aux_ring *a, const struct aux_chunk *c)
{
	struct got *g = ctx;
	struct perf_event_header h;
	(void)a;

	memcpy(&h, c->rec, 8);
	if (h.type != 71 || h.size != 48 || c->rec[1] != c->size + c->pad || (c->size + c->pad) % 8 ||
	    c->n1 + c->n2 != c->size || c->rec[2] != c->offset)
		g->bad_rec++;
	if (g->check_pattern && c->offset != g->next_offset)
		g->bad_offset++;
	if (g->check_pattern)
		for (size_t i = 0; i < c->size; i++)
			if ((i < c->n1 ? c->p1[i] : c->p2[i - c->n1]) != pat(c->offset + i)) {
				g->bad_bytes++;
				break;
			}
	if (!g->no_keep) {
		if (g->len + c->size > g->cap) {
			g->cap = (g->len + c->size) * 2;
			g->bytes = realloc(g->bytes, g->cap);
		}
		memcpy(g->bytes + g->len, c->p1, c->n1);
		if (c->n2)
			memcpy(g->bytes + g->len + c->n1, c->p2, c->n2);
	}
	g->len += c->size;
	g->next_offset = c->offset + c->size;
	g->chunks++;
	g->last = *c;
	g->last_ref = c->rec[3];
	return 0;
}

struct seen {
	struct aux_counts counts;
	uint64_t records, lost, lost_records;
	uint64_t next_seq;       /* stress: the sequence number expected next (lost ones skipped) */
	uint64_t aux_next;       /* AUX records' offsets must follow each other */
	int torn, reordered, bad_aux;
};

static int take_record(void *ctx, struct ring *r, const struct perf_event_header *h)
{
	struct seen *s = ctx;
	const uint8_t *p = (const uint8_t *)h;
	uint64_t v[3];
	(void)r;

	s->records++;
	aux_counts_note(&s->counts, h);
	switch (h->type) {
	case PERF_RECORD_LOST:
		memcpy(v, p + 8, 16);
		s->lost += v[1];
		s->lost_records++;
		break;
	case PERF_RECORD_AUX:
		memcpy(v, p + 8, 24);
		if (!(v[2] & KM_AUX_OVERWRITE)) {
			if (v[0] < s->aux_next)   /* a gap is an AUX record lost with the regular ring full */
				s->bad_aux++;
			s->aux_next = v[0] + v[1];
		}
		break;
	case PERF_RECORD_SAMPLE: {   /* stress record: seq, then words derived from it */
		uint64_t seq, w;
		memcpy(&seq, p + 8, 8);
		for (size_t i = 16; i + 8 <= h->size; i += 8) {
			memcpy(&w, p + i, 8);
			if (w != (seq ^ (i * 0x100000001b3ULL)))
				s->torn++;
		}
		if (seq < s->next_seq)
			s->reordered++;
		s->next_seq = seq + 1;
		break;
	}
	}
	return 0;
}

/* ------------------------------------------------------------- 1 and 2 */

static void full_mode_basics(void)
{
	struct kmodel m;
	struct aux_ring a;
	struct ring *r;
	struct rec_err e;
	static const struct aux_ops ops = { NULL, NULL, test_reference };
	struct got g = { .check_pattern = 1 };
	struct seen s = { 0 };
	uint8_t buf[64 * 1024];

	km_init(&m, 16384, 16384, 0, 0, 0);
	ring__new_mem(&r, m.mem, m.page, m.data_size, 2, -1, 0, NULL, NULL, &e);
	struct aux_config cfg = { .pc = m.pc, .data = m.aux, .size = m.aux_size, .kind = AUX_INTEL_PT,
				  .idx = 5, .cpu = 2, .tid = 1234, .ops = &ops };
	ok(aux__init(&a, &cfg) == 0, "full mode: AUX ring over the model's area");

	fill(buf, 0, 3001);
	km_aux_write(&m, buf, 3001, 0);
	ring__consume(r, take_record, &s);
	long n = aux__consume(&a, take_chunk, &g);
	uint32_t w[4];
	memcpy(w, &g.last.rec[4], 16);
	ok(n == 3001 && g.chunks == 1 && g.last.rec[1] == 3008 && g.last.pad == 7 && g.last.offset == 0 &&
	   w[0] == 5 && w[1] == 1234 && w[2] == 2 && g.last_ref == ref_counter && !g.bad_bytes && !g.bad_rec,
	   "3001 bytes: one AUXTRACE, size 3008 (7 bytes padding), offset 0, idx 5, tid 1234, cpu 2, reference from the PMU");
	ok(m.pc->aux_tail == 3001, "aux_tail released at the head read (%llu)", (unsigned long long)m.pc->aux_tail);
	ok(s.counts.aux_records == 1 && s.counts.aux_bytes == 3001, "the PERF_RECORD_AUX came through the regular ring");

	/* 15000 more: the area (16384) wraps at 16384 - 3001 */
	fill(buf, 3001, 15000);
	km_aux_write(&m, buf, 15000, 0);
	ring__consume(r, take_record, &s);
	n = aux__consume(&a, take_chunk, &g);
	ok(n == 15000 && g.last.n2 == 3001 + 15000 - 16384 && g.last.offset == 3001 && !g.bad_bytes && !g.bad_offset,
	   "a chunk across the end of the area comes in two pieces (%zu + %zu) with the right bytes", g.last.n1, g.last.n2);
	ok(aux__consume(&a, take_chunk, &g) == 0, "nothing new: no record");

	/* 2: the area is full: the hardware stops, TRUNCATED */
	fill(buf, 18001, 20000);
	size_t wrote = km_aux_write(&m, buf, 20000, KM_AUX_PARTIAL);
	ring__consume(r, take_record, &s);
	ok(wrote == 16384 && s.counts.truncated == 1 && s.counts.partial == 1,
	   "area full: %zu of 20000 bytes written, the AUX record says TRUNCATED and PARTIAL", wrote);
	n = aux__consume(&a, take_chunk, &g);
	ok(n == 16384 && !g.bad_bytes && !g.bad_offset, "then the whole area is read once (%ld bytes)", n);
	km_aux_write(&m, buf, 0, KM_AUX_COLLISION);
	ring__consume(r, take_record, &s);
	ok(s.counts.collision == 1 && s.counts.aux_records == 4, "an empty AUX record with COLLISION is still reported");
	ok(g.len == 3001 + 15000 + 16384 && m.aux_written == g.len, "bytes read %zu = bytes the model wrote", g.len);
	aux__fini(&a);
	ring__free(r);
	km_fini(&m);
	free(g.bytes);
}

/* -------------------------------------------------------------- 3 stress */

struct stress {
	struct kmodel m;
	uint64_t n;              /* records written (set by the producer when it stops) */
	uint64_t target;         /* stop once the consumer has read this many */
	uint64_t read;           /* samples the consumer has read so far (published after each pass) */
	int cpu;
	volatile int done;
};

static void pin(int cpu)
{
	cpu_set_t set;
	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *producer(void *arg)
{
	struct stress *st = arg;
	uint64_t rng = 88172645463325252ULL;
	uint8_t rec[520];
	static uint8_t aux[8192 + 8];

	pin(st->cpu);
	uint64_t seq;
	/* until the consumer has read the target, whatever the machine's load does to it; at most 40x */
	for (seq = 0; __atomic_load_n(&st->read, __ATOMIC_RELAXED) < st->target && seq < 40 * st->target; seq++) {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		if (rng % 64 == 0) {   /* the hardware writes a burst; the driver ends the output */
			size_t len = 1 + (size_t)(rng >> 20) % 2048;
			fill(aux, st->m.aux_head, len);
			uint64_t flags = (rng >> 40) % 97 == 0 ? KM_AUX_PARTIAL : (rng >> 40) % 89 == 0 ? KM_AUX_COLLISION : 0;
			km_aux_write(&st->m, aux, len, flags);
		}
		make_rec(rec, seq, 16 + 8 * (size_t)((rng >> 8) % 63));
		km_output(&st->m, rec);
		for (volatile int pace = 0; pace < 100; pace++)   /* an event rate, not a flood: most records are read */
			;
	}
	st->n = seq;
	/* the last record waits for room so that a pending LOST count is reported */
	make_rec(rec, st->n, 16);
	while (km_output(&st->m, rec) < 0) {   /* not a loss: the model retries (the kernel would drop it) */
		st->m.out_dropped--;
		st->m.lost--;
		sched_yield();
	}
	__atomic_store_n(&st->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void stress(void)
{
	struct stress st;
	struct ring *r;
	struct rec_err e;
	struct aux_ring a;
	static const struct aux_ops ops = { NULL, NULL, test_reference };
	struct got g = { .check_pattern = 1, .no_keep = 1 };
	struct seen s = { 0 };
	const char *env = getenv("AUXMODEL_RECORDS");
	cpu_set_t set;
	int cpus[2] = { -1, -1 }, k = 0;

	memset(&st, 0, sizeof(st));
	st.target = env ? strtoull(env, NULL, 0) : 1000000;
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (int c = 0; c < CPU_SETSIZE && k < 2; c++)
			if (CPU_ISSET(c, &set))
				cpus[k++] = c;
	if (k < 2)
		cpus[0] = cpus[1] = -1;
	diag("stress: until %llu records are read, producer on CPU %d, consumer on CPU %d", (unsigned long long)st.target,
	     cpus[0], cpus[1]);
	km_init(&st.m, 512 * 1024, 1024 * 1024, 0, 0, 0);   /* perf's default data ring, 1 MiB AUX */
	st.cpu = cpus[0];
	ring__new_mem(&r, st.m.mem, st.m.page, st.m.data_size, 0, -1, 0, NULL, NULL, &e);
	struct aux_config cfg = { .pc = st.m.pc, .data = st.m.aux, .size = st.m.aux_size, .kind = AUX_CS_ETM,
				  .cpu = 0, .tid = -1, .ops = &ops };
	aux__init(&a, &cfg);
	pin(cpus[1]);
	pthread_t t;
	pthread_create(&t, NULL, producer, &st);
	for (;;) {
		int done = __atomic_load_n(&st.done, __ATOMIC_ACQUIRE);
		ring__consume(r, take_record, &s);
		aux__consume(&a, take_chunk, &g);
		__atomic_store_n(&st.read, s.records - s.lost_records - s.counts.aux_records, __ATOMIC_RELAXED);
		if (done) {   /* one more pass after the producer's last release */
			ring__consume(r, take_record, &s);
			aux__consume(&a, take_chunk, &g);
			break;
		}
	}
	pthread_join(t, NULL);
	uint64_t samples = s.records - s.lost_records - s.counts.aux_records;
	diag("read %llu samples, %llu lost in %llu LOST records; %llu AUX records, %llu AUX bytes in %llu chunks",
	     (unsigned long long)samples, (unsigned long long)s.lost, (unsigned long long)s.lost_records,
	     (unsigned long long)s.counts.aux_records, (unsigned long long)g.len, (unsigned long long)g.chunks);
	ok(samples >= st.target, "%llu records written, %llu read (at least %llu)", (unsigned long long)st.n + 1,
	   (unsigned long long)samples, (unsigned long long)st.target);
	ok(!s.torn, "no torn record (%d)", s.torn);
	ok(!s.reordered, "no record out of order (%d)", s.reordered);
	ok(samples + s.lost - st.m.aux_rec_dropped == st.n + 1 && s.lost == st.m.out_dropped,
	   "every record read or counted lost: %llu read + %llu lost (%llu of them AUX records) = %llu written",
	   (unsigned long long)samples, (unsigned long long)s.lost, (unsigned long long)st.m.aux_rec_dropped,
	   (unsigned long long)(st.n + 1));
	ok(s.counts.aux_records == st.m.aux_records && !s.bad_aux &&
	   s.counts.aux_bytes + st.m.aux_rec_dropped_bytes == st.m.aux_written,
	   "every PERF_RECORD_AUX that fitted was read (%llu), in order; their sizes + those of the %llu lost = AUX bytes written",
	   (unsigned long long)st.m.aux_records, (unsigned long long)st.m.aux_rec_dropped);
	ok(g.len == st.m.aux_written && !g.bad_bytes && !g.bad_offset && !g.bad_rec,
	   "every AUX byte written was read once, at its offset, intact (%zu bytes)", g.len);
	ok(s.counts.truncated == st.m.aux_trunc_recorded && st.m.aux_truncations >= st.m.aux_trunc_recorded,
	   "every burst cut short is flagged TRUNCATED: %llu read of %llu (the rest in LOST counts); "
	   "%llu bytes the hardware could not write", (unsigned long long)s.counts.truncated,
	   (unsigned long long)st.m.aux_truncations, (unsigned long long)st.m.aux_dropped);
	aux__fini(&a);
	ring__free(r);
	km_fini(&st.m);
	free(g.bytes);
}

/* ---------------------------------------------------------- 4 snapshots */

/* One snapshot as the recorder takes it: stop, read, restart. */
static long snap(struct aux_ring *a, struct got *g)
{
	long n = -1;
	if (aux__snapshot_begin(a) == 0)
		n = aux__snapshot_read(a, take_chunk, g);
	aux__snapshot_end(a);
	return n;
}

/* Check the last snapshot against the model: @n bytes ending at monotonic position @end. */
static int snap_is(const struct got *g, size_t before, uint64_t end, size_t n)
{
	if (g->len - before != n)
		return 0;
	/* a whole-buffer snapshot taken before the buffer was ever full starts with never-written zeros */
	size_t unwritten = n > end ? (size_t)(n - end) : 0;
	for (size_t i = 0; i < n; i++)
		if (g->bytes[before + i] != (i < unwritten ? 0 : pat(end - n + i)))
			return 0;
	return 1;
}

static void snapshot_known_wraps(enum aux_kind kind, const char *name)
{
	struct kmodel m;
	struct aux_ring a;
	struct got g = { 0 };
	static uint8_t buf[200 * 1024];
	const size_t len = 64 * 1024;
	int pt = kind == AUX_INTEL_PT;
	struct aux_ops ops = { km_sync_disable, km_sync_enable, test_reference };

	km_init(&m, 4096, len, 0, 1, pt);
	struct aux_config cfg = { .pc = m.pc, .data = m.aux, .size = m.aux_size, .kind = kind, .snapshot = 1,
				  .cpu = 1, .tid = -1, .ops = &ops, .ops_ctx = &m };
	aux__init(&a, &cfg);

	/* 10 KiB: no wrap, exactly what was written */
	fill(buf, 0, 10240);
	km_aux_write(&m, buf, 10240, 0);
	size_t before = g.len;
	snap(&a, &g);
	ok(snap_is(&g, before, 10240, 10240) && g.last.offset == 0 && a.snap_wrapped == 0,
	   "%s: 10 KiB in a 64 KiB buffer: the 10 KiB, offset 0, not wrapped", name);

	/* 100 KiB more: the buffer wrapped; the whole buffer (the newest 64 KiB) */
	fill(buf, 10240, 102400);
	km_aux_write(&m, buf, 102400, 0);
	before = g.len;
	snap(&a, &g);
	ok(snap_is(&g, before, 112640, len) && a.snap_wrapped == 1,
	   "%s: after 100 KiB more the buffer wrapped: its 64 KiB, newest last", name);
	if (kind == AUX_CS_ETM)
		ok(a.overwritten == 102400 - len, "%s: overwritten bytes reported: %llu (= 100 KiB - 64 KiB)", name,
		   (unsigned long long)a.overwritten);
	else
		ok(g.last.offset == (pt ? 112640 % len : 112640 - len),
		   "%s: offset %llu as perf computes it", name, (unsigned long long)g.last.offset);

	/* 5 KiB more */
	fill(buf, 112640, 5120);
	km_aux_write(&m, buf, 5120, 0);
	before = g.len;
	snap(&a, &g);
	if (kind == AUX_CS_ETM)
		ok(snap_is(&g, before, 117760, 5120) && a.overwritten == 102400 - len,
		   "%s: 5 KiB more: the 5 KiB (head only grows: nothing overwritten)", name);
	else
		ok(snap_is(&g, before, 117760, len),
		   "%s: 5 KiB more: the whole buffer again (a wrap, once seen, is sticky as in perf)", name);

	/* a snapshot size of 16 KiB: the newest 16 KiB of 40 KiB */
	a.c.snapshot_size = 16384;
	fill(buf, 117760, 40960);
	km_aux_write(&m, buf, 40960, 0);
	before = g.len;
	snap(&a, &g);
	ok(snap_is(&g, before, 158720, 16384), "%s: -S16384: the newest 16 KiB", name);
	if (kind == AUX_CS_ETM)
		ok(a.overwritten == 102400 - len + 40960 - 16384, "%s: overwritten now %llu", name,
		   (unsigned long long)a.overwritten);
	ok(a.snapshots == 4 && m.aux_records == 4, "%s: 4 snapshots, 4 OVERWRITE AUX records", name);
	aux__fini(&a);
	km_fini(&m);
	free(g.bytes);
}

/* Intel PT's reference-buffer test (snapshot size > 64 KiB) on a 256 KiB buffer. */
static void snapshot_pt_reference(void)
{
	struct kmodel m;
	struct aux_ring a;
	struct got g = { 0 };
	static uint8_t buf[300 * 1024];
	const size_t len = 256 * 1024;
	struct aux_ops ops = { km_sync_disable, km_sync_enable, test_reference };

	km_init(&m, 4096, len, 0, 1, 1);
	size_t ref = aux__pt_ref_size(4096, len, len);
	struct aux_config cfg = { .pc = m.pc, .data = m.aux, .size = m.aux_size, .kind = AUX_INTEL_PT, .snapshot = 1,
				  .pt_ref_size = ref, .cpu = 0, .tid = -1, .ops = &ops, .ops_ctx = &m };
	aux__init(&a, &cfg);
	fill(buf, 0, 20000);
	km_aux_write(&m, buf, 20000, 0);
	snap(&a, &g);
	ok(ref == 8192 && snap_is(&g, 0, 20000, 20000), "Intel PT reference buffer (%zu bytes): first snapshot is the 20000 bytes", ref);
	fill(buf, 20000, 300000);
	km_aux_write(&m, buf, 300000, 0);
	size_t before = g.len;
	snap(&a, &g);
	ok(snap_is(&g, before, 320000, len) && a.snap_wrapped == 1, "after a wrap: the whole 256 KiB, newest last");
	aux__fini(&a);
	km_fini(&m);
	free(g.bytes);
}

/* ---------------------------------------------------- 5 threaded snapshots */

struct snapstress {
	struct kmodel m;
	int cpu;
	volatile int stop;
};

static void *snap_producer(void *arg)
{
	struct snapstress *st = arg;
	static uint8_t buf[4096];
	uint64_t rng = 2463534242ULL;

	pin(st->cpu);
	while (!__atomic_load_n(&st->stop, __ATOMIC_ACQUIRE)) {
		rng ^= rng << 13;
		rng ^= rng >> 17;
		rng ^= rng << 5;
		size_t n = 1 + (size_t)(rng % 4096);
		fill(buf, st->m.aux_head, n);
		km_aux_write(&st->m, buf, n, 0);
		km_poll_stop(&st->m);
	}
	return NULL;
}

static void snapshot_threaded(enum aux_kind kind, const char *name, int nsnap)
{
	struct snapstress st;
	struct aux_ring a;
	struct got g = { 0 };
	struct aux_ops ops = { km_threaded_disable, km_threaded_enable, test_reference };
	int bad = 0;
	uint64_t taken = 0;

	memset(&st, 0, sizeof(st));
	km_init(&st.m, 65536, 32768, 0, 1, kind == AUX_INTEL_PT);
	st.cpu = 0;
	struct aux_config cfg = { .pc = st.m.pc, .data = st.m.aux, .size = st.m.aux_size, .kind = kind, .snapshot = 1,
				  .cpu = 0, .tid = -1, .ops = &ops, .ops_ctx = &st.m };
	aux__init(&a, &cfg);
	pthread_t t;
	pthread_create(&t, NULL, snap_producer, &st);
	for (int i = 0; i < nsnap; i++) {
		for (volatile int spin = 0; spin < 20000; spin++)
			;
		size_t before = g.len;
		aux__snapshot_begin(&a);
		uint64_t end = st.m.stop_head_mono;   /* published by the model before disable returned */
		long n = aux__snapshot_read(&a, take_chunk, &g);
		aux__snapshot_end(&a);
		if (n < 0 || !snap_is(&g, before, end, (size_t)n))
			bad++;
		taken += n > 0 ? (uint64_t)n : 0;
	}
	__atomic_store_n(&st.stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	ok(!bad, "%s: %d snapshots taken while the producer runs: each one the newest bytes, contiguous, intact (%d bad)",
	   name, nsnap, bad);
	if (kind == AUX_CS_ETM)
		ok(taken + a.overwritten == st.m.stop_head_mono,
		   "%s: bytes taken %llu + overwritten %llu = bytes the hardware wrote until the last snapshot", name,
		   (unsigned long long)taken, (unsigned long long)a.overwritten);
	aux__fini(&a);
	km_fini(&st.m);
	free(g.bytes);
}

/* ------------------------------------------------ 6 backward regular ring */

static int model_pause(void *ctx, int on) { int *p = ctx; *p = on; return 0; }

static void backward_ring(void)
{
	struct kmodel m;
	struct ring *r;
	struct rec_err e;
	int paused = 0;
	static const struct ring_ops ops = { model_pause };
	struct seen s = { 0 };
	uint8_t rec[64];

	km_init(&m, 4096, 0, 1, 0, 0);   /* 4 KiB written downwards */
	ring__new_mem(&r, m.mem, m.page, m.data_size, 0, -1, 1, &ops, &paused, &e);
	for (uint64_t seq = 0; seq < 1000; seq++) {
		make_rec(rec, seq, 16 + 8 * (seq % 5));
		km_output(&m, rec);
	}
	/* newest first: sequence numbers go down, so count them backwards */
	s.next_seq = 0;
	long n = ring__snapshot(r, take_record, &s, &e);
	/* how many of the newest records fit in 4096 bytes */
	uint64_t fit = 0, used = 0;
	for (int64_t q = 999; q >= 0; q--) {
		size_t size = 16 + 8 * (size_t)(q % 5);
		if (used + size > m.data_size)
			break;
		used += size;
		fit++;
	}
	ok(n == (long)fit && !s.torn && !paused, "backward ring: the newest %llu whole records that fit (%ld read), output resumed",
	   (unsigned long long)fit, n);
	/* 10 more: the next snapshot sees only those */
	for (uint64_t seq = 1000; seq < 1010; seq++) {
		make_rec(rec, seq, 16);
		km_output(&m, rec);
	}
	struct seen s2 = { 0 };
	n = ring__snapshot(r, take_record, &s2, &e);
	ok(n == 10 && !s2.torn, "backward ring: the second snapshot holds the 10 records written since (%ld)", n);
	ring__free(r);
	km_fini(&m);
}

/* ----------------------------------------------- 7 AUXTRACE_INFO, filters */

static char sysroot[256];

static void put(const char *rel, const char *text)
{
	char path[512], *p;
	snprintf(path, sizeof(path), "%s/%s", sysroot, rel);
	for (p = path + strlen(sysroot) + 1; (p = strchr(p, '/')); p++) {
		*p = 0;
		mkdir(path, 0755);
		*p = '/';
	}
	FILE *f = fopen(path, "w");
	if (f) {
		fprintf(f, "%s\n", text);
		fclose(f);
	}
}

static uint64_t word(const struct pd_buf *b, size_t i)
{
	uint64_t v = 0;
	if (16 + 8 * (i + 1) <= b->len)
		memcpy(&v, b->data + 16 + 8 * i, 8);
	return v;
}

static void auxinfo_from_sysfs(void)
{
	struct aux_pmu p;
	struct pd_buf b = { 0 };
	struct rec_err e;
	struct perf_event_attr a;
	char tmpl[] = "/tmp/auxmodel-sysfs.XXXXXX";

	if (!mkdtemp(tmpl)) {
		ok(0, "temporary sysfs tree");
		return;
	}
	snprintf(sysroot, sizeof(sysroot), "%s", tmpl);
	setenv("RBRECORD_SYSFS_PMUS", sysroot, 1);
	put("intel_pt/type", "9");
	put("intel_pt/format/tsc", "config:10");
	put("intel_pt/format/mtc_period", "config:14-17");
	put("intel_pt/nr_addr_filters", "2");
	put("intel_pt/caps/event_trace", "1");
	put("cs_etm/type", "11");
	put("arm_spe_0/type", "12");
	put("intel_bts/type", "13");
	put("software/type", "1");
	for (int c = 0; c < 3; c++) {
		char f[64];
		static const char *const devarch[] = { "0x47724a13", "0x47725a13" };
		if (c < 2) {
			const char *const files[] = { "trcidr/trcidr0", "trcidr/trcidr1", "trcidr/trcidr2", "trcidr/trcidr8",
						      "mgmt/trcauthstatus" };
			for (int k = 0; k < 5; k++) {
				char v[16];
				snprintf(f, sizeof(f), "cs_etm/cpu%d/%s", c, files[k]);
				snprintf(v, sizeof(v), "0x%x", 0x100 * c + k + 1);
				put(f, v);
			}
			snprintf(f, sizeof(f), "cs_etm/cpu%d/mgmt/trcdevarch", c);
			put(f, devarch[c]);
		} else {
			put("cs_etm/cpu2/mgmt/etmccer", "0x1234");
			put("cs_etm/cpu2/mgmt/etmidr", "0x410cf250");
		}
	}
	put("cs_etm/cpu1/ts_source", "1");

	ok(auxpmu__lookup(9, &p) == 1 && p.kind == AUX_INTEL_PT && auxpmu__lookup(12, &p) == 1 &&
	   p.kind == AUX_ARM_SPE && !strcmp(p.name, "arm_spe_0") && auxpmu__lookup(1, &p) == 0 &&
	   !strcmp(p.name, "software"), "AUX PMUs found by their sysfs type; software has none");

	memset(&a, 0, sizeof(a));
	auxpmu__lookup(9, &p);
	struct auxinfo_params ip = { .pmu = &p, .attr = &a, .filter = "filter 0x1000/0x100", .per_cpu_mmaps = 1 };
	int rc = auxinfo__build(&b, &ip, &e);
	char fs[24] = { 0 };
	memcpy(fs, b.data + 16 + 17 * 8, 24 <= b.len - 16 - 17 * 8 ? 24 : 0);
	ok(rc == 0 && b.len == 16 + 8 * (17 + 3 + 1) && word(&b, 5) == 0x400 && word(&b, 11) == 0x3c000 &&
	   word(&b, 16) == 19 && !strcmp(fs, "filter 0x1000/0x100") && word(&b, 20) == 1,
	   "intel_pt: tsc and mtc_period masks, filter length 19 then the string NUL-padded to 24, then cap_event_trace");
	pd_buf_free(&b);

	/* CoreSight: cycacc (12), timestamp (28), contextid2 (15) */
	auxpmu__lookup(11, &p);
	a.config = 1ULL << 12 | 1ULL << 28 | 1ULL << 15;
	int cpus[] = { 0, 1, 2 };
	struct auxinfo_params cp = { .pmu = &p, .attr = &a, .cpus = cpus, .nr_cpus = 3, .snapshot = 1 };
	memset(&b, 0, sizeof(b));
	rc = auxinfo__build(&b, &cp, &e);
	uint64_t cfgr = 1 << 4 | 1 << 11 | 1 << 7 | 1 << 15;
	ok(rc == 0 && word(&b, 0) == 1 && word(&b, 1) == (11ULL << 32 | 3) && word(&b, 2) == 1,
	   "cs_etm header: version 1, pmu type 11 and 3 CPUs, snapshot");
	ok(word(&b, 3) == 0x4040404040404040ULL && word(&b, 4) == 0 && word(&b, 5) == 8 && word(&b, 6) == cfgr &&
	   word(&b, 7) == 0x10 && word(&b, 8) == 0x1 && word(&b, 12) == 0x5 && word(&b, 13) == (uint64_t)-1,
	   "cpu0 ETMv4: 8 parameters, TRCCONFIGR %#llx from the options, trace id 0x10, ID registers, ts_source -1 (absent)",
	   (unsigned long long)word(&b, 6));
	ok(word(&b, 14) == 0x5050505050505050ULL && word(&b, 15) == 1 && word(&b, 16) == 9 && word(&b, 18) == 0x12 &&
	   word(&b, 24) == 0x47725a13 && word(&b, 25) == 1,
	   "cpu1 ETE (TRCDEVARCH 0x47725a13): 9 parameters, trace id 0x12, TRCDEVARCH, ts_source 1");
	ok(word(&b, 26) == 0x3030303030303030ULL && word(&b, 27) == 2 && word(&b, 28) == 4 && word(&b, 29) == a.config &&
	   word(&b, 30) == 0x14 && word(&b, 31) == 0x1234 && word(&b, 32) == 0x410cf250 && b.len == 16 + 8 * 33,
	   "cpu2 ETMv3: ETMCR = config, trace id 0x14, ETMCCER, ETMIDR; nothing after");
	pd_buf_free(&b);
	int cpus4[] = { 4 };
	cp.cpus = cpus4;
	cp.nr_cpus = 1;
	memset(&b, 0, sizeof(b));
	ok(auxinfo__build(&b, &cp, &e) < 0 && strstr(e.msg, "CPU 4") && strstr(e.msg, "etmccer"),
	   "a CPU without metadata in sysfs: an error naming it and the file (%s)", e.msg);
	pd_buf_free(&b);

	auxpmu__lookup(12, &p);
	struct auxinfo_params sp = { .pmu = &p, .attr = &a, .per_cpu_mmaps = 1 };
	memset(&b, 0, sizeof(b));
	ok(auxinfo__build(&b, &sp, &e) == 0 && b.len == 32 && word(&b, 0) == 12 && word(&b, 1) == 1,
	   "arm_spe: pmu type and per-CPU mmaps");
	pd_buf_free(&b);
	auxpmu__lookup(13, &p);
	struct perf_event_mmap_page pc;
	memset(&pc, 0, sizeof(pc));
	pc.cap_user_time_zero = 1;
	pc.time_shift = 10;
	pc.time_mult = 123;
	pc.time_zero = 456;
	struct auxinfo_params bp = { .pmu = &p, .attr = &a, .pc = &pc, .snapshot = 1 };
	memset(&b, 0, sizeof(b));
	ok(auxinfo__build(&b, &bp, &e) == 0 && b.len == 16 + 48 && word(&b, 0) == 13 && word(&b, 1) == 10 &&
	   word(&b, 2) == 123 && word(&b, 3) == 456 && word(&b, 4) == 1 && word(&b, 5) == 1,
	   "intel_bts: pmu type, time conversion from the control page, snapshot");
	pd_buf_free(&b);

	auxpmu__lookup(9, &p);
	ok(auxinfo__check_filter(&p, "filter 0x1000/0x100,start 0x2000", &e) == 0, "filter: two ranges accepted");
	ok(auxinfo__check_filter(&p, "filter 0x1000", &e) < 0 && strstr(e.msg, "needs a size"), "filter without size: %s", e.msg);
	ok(auxinfo__check_filter(&p, "filter main/0x10", &e) < 0 && strstr(e.msg, "not an address"), "symbol: %s", e.msg);
	ok(auxinfo__check_filter(&p, "start 0x1 start 0x2 stop 0x3", &e) < 0 && strstr(e.msg, "2 address filters"),
	   "three ranges on a PMU with two filters: %s", e.msg);
	ok(auxinfo__check_filter(&p, "jump 0x1", &e) < 0 && strstr(e.msg, "not an action"), "unknown action: %s", e.msg);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", sysroot);
	if (system(cmd) != 0)
		diag("could not remove %s", sysroot);
}

int main(void)
{
	full_mode_basics();
	stress();
	snapshot_known_wraps(AUX_INTEL_PT, "Intel PT");
	snapshot_known_wraps(AUX_CS_ETM, "CoreSight");
	snapshot_known_wraps(AUX_ARM_SPE, "Arm SPE");
	snapshot_pt_reference();
	snapshot_threaded(AUX_CS_ETM, "CoreSight threaded", 300);
	snapshot_threaded(AUX_INTEL_PT, "Intel PT threaded", 300);
	backward_ring();
	auxinfo_from_sysfs();
	return done_testing();
}
