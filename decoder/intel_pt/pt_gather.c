/*
 * pt_gather.c - the gathering pass, the first part of the Intel PT decoder
 * (intel_pt.c has the overview): rb_pt_open calls gather before anything is
 * decoded, and setup_timelines once the queues are set up.
 *
 * A pass over the recording collects AUXTRACE_INFO (type 1), TIME_CONV, the
 * CPUID feature and every AUXTRACE payload, appended to its queue's data: a
 * spool file mapped once gathered, whose pages decoding reads and gives
 * back window by window, so that memory does not grow with the trace (the
 * heap only where no spool file can be made; see spool_payload). Chunks
 * whose AUX offsets follow each other form one run; a run is decoded as
 * one stream, and a jump between runs is where the trace restarts.
 *
 * The same pass notes the sideband decoding depends on: each CPU's
 * thread timeline (ITRACE_START, SWITCH, SWITCH_CPU_WIDE) and the times
 * of records that change memory maps (MMAP, FORK, exec...). Decoding
 * (pt_decode.c) follows its CPU's timeline; windows (pt_segment.c) never
 * cross a map change. The PSB helpers the runs are built with (next_psb,
 * scan_psb, psb_tsc) serve decoding and segments too.
 */
#include "config.h"
#include <errno.h>
#include <stdarg.h>
#include <unistd.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "decoder/session/spool.h"
#include "pt_internal.h"

/* ------------------------------------------------------------ gathering */

static struct ptq *queue(struct rb_pt *pt, uint32_t idx)
{
	if (idx >= 65536)
		return NULL;
	if (idx >= pt->nr_q) {
		size_t n = (size_t)idx + 1;
		struct ptq *v = ptq_alloc(n);     /* adjacent queues are decoded by different threads */
		if (!v)
			return NULL;
		if (pt->nr_q)
			memcpy(v, pt->q, pt->nr_q * sizeof(*v));
		free(pt->q);
		for (size_t i = pt->nr_q; i < n; i++) {
			v[i].idx = (uint32_t)i;
			v[i].cpu = v[i].tid = -1;
			v[i].pid_now = v[i].tid_now = -1;
			v[i].spool_fd = -1;
		}
		pt->q = v;
		pt->nr_q = n;
	}
	return &pt->q[idx];
}

/*
 * The AUX data stays out of memory: each queue's bytes go to an unlinked
 * file in $TMPDIR (or /tmp), mapped for decoding once gathered; the pages
 * the gathering and the index touched are given back at once, and those
 * behind every decoder after each window (release_decoded in
 * pt_segment.c), so what stays resident is about a window's worth of
 * trace, whatever the trace's size. Where no spool file can be made the
 * data is held on the heap (with a warning for recordings of SPOOL_WARN
 * bytes and more, where that costs). RBDECODE_PT_SPOOL_MIN sets the
 * recording size from which the data is spooled (bytes; default 0: always;
 * the tests compare both ways, and setting it asks for the warning too).
 */
#define SPOOL_WARN (UINT64_C(64) << 20)
#define SPOOL_PIECE (1u << 20)

static int all_on_heap(const struct rb_pt *pt)
{
	for (size_t i = 0; i < pt->nr_q; i++)
		if (pt->q[i].spool_fd >= 0)
			return 0;
	return 1;
}

/* Returns the bytes spooled, 1 with pt->spool cleared when no spool file can be made, or < 0. */
static int64_t spool_payload(struct rb_pt *pt, struct ptq *q, struct pd_reader *r, uint64_t size,
			     struct pd_error *err)
{
	if (q->spool_fd < 0 && (q->spool_fd = rb_spool_open()) < 0 && !q->len && all_on_heap(pt)) {
		pt->spool = 0;       /* no spool at all: the heap it is, as for small recordings */
		return 1;
	}
	if (q->spool_fd < 0) {
		err->code = PD_ERR_IO;
		err->offset = PD_NO_OFFSET;
		err->rec_type = PD_RECORD_AUXTRACE;
		snprintf(err->msg, sizeof(err->msg), "cannot create a spool file for the AUX data of queue %u in %s: %s "
			 "(set TMPDIR to a folder with room)", q->idx, rb_spool_dir(), strerror(errno));
		return PD_ERR_IO;
	}
	uint64_t done = 0;
	while (done < size) {
		size_t n = size - done < SPOOL_PIECE ? (size_t)(size - done) : SPOOL_PIECE;
		int64_t got = pd_reader_read_payload(r, pt->bounce, n, err);
		if (got < 0)
			return got;
		if (got == 0)
			break;
		int e = rb_spool_write(q->spool_fd, pt->bounce, (size_t)got, q->len + done);
		if (e) {
			err->code = PD_ERR_NOSPC;   /* an output of ours that failed, not the input: exit 4 */
			err->offset = PD_NO_OFFSET;
			err->rec_type = PD_RECORD_AUXTRACE;
			snprintf(err->msg, sizeof(err->msg), "writing the AUX data spool of queue %u in %s: %s "
				 "(set TMPDIR to a folder with room)", q->idx, rb_spool_dir(), strerror(e));
			return err->code;
		}
		done += (uint64_t)got;
	}
	return (int64_t)done;
}

/* The gathered spool file, mapped (writable: the runs are compacted in place). */
static int spool_map(struct ptq *q, struct pd_error *err)
{
	if (q->spool_fd < 0)
		return 0;
	int rc = 0;
	if (q->len) {
		void *m = mmap(NULL, (size_t)q->len, PROT_READ | PROT_WRITE, MAP_SHARED, q->spool_fd, 0);
		if (m == MAP_FAILED) {
			err->code = PD_ERR_NOMEM;
			err->offset = PD_NO_OFFSET;
			err->rec_type = PD_RECORD_AUXTRACE;
			snprintf(err->msg, sizeof(err->msg), "mapping the AUX data spool of queue %u: %s", q->idx,
				 strerror(errno));
			rc = PD_ERR_NOMEM;
		} else {
			q->buf = m;
			q->map_len = q->len;
		}
	}
	close(q->spool_fd);
	q->spool_fd = -1;
	return rc;
}

static void warn(struct rb_pt *pt, int code, uint64_t offset, uint32_t rec_type, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void warn(struct rb_pt *pt, int code, uint64_t offset, uint32_t rec_type, const char *fmt, ...)
{
	if (!pt->env.warn)
		return;
	struct pd_error w = { .code = code, .offset = offset, .rec_type = rec_type };
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(w.msg, sizeof(w.msg), fmt, ap);
	va_end(ap);
	pt->env.warn(pt->env.warn_ctx, &w);
}

static int add_chunk(struct rb_pt *pt, struct pd_reader *r, const struct pd_event *ev, uint64_t file_offset,
		     struct pd_error *err)
{
	struct ptq *q = queue(pt, ev->u.auxtrace.idx);
	uint64_t size = ev->u.auxtrace.size;
	if (!q)
		return ev->u.auxtrace.idx >= 65536 ? 0 : PD_ERR_NOMEM;
	/*
	 * perf pads each AUXTRACE payload to 8 bytes, and the next chunk starts
	 * where the data (not the padding) ended: outside snapshot mode those
	 * zero bytes are dropped, or a packet split across the two chunks
	 * would read them as its own.
	 */
	const struct chunk *prev = q->nr_chunks ? &q->chunks[q->nr_chunks - 1] : NULL;
	if (prev && !pt->priv[P_SNAPSHOT_MODE] && ev->u.auxtrace.offset >= prev->aux_offset &&
	    ev->u.auxtrace.offset < prev->aux_offset + prev->size &&
	    prev->aux_offset + prev->size - ev->u.auxtrace.offset < 8) {
		uint64_t pad = prev->aux_offset + prev->size - ev->u.auxtrace.offset;
		q->chunks[q->nr_chunks - 1].size -= pad;
		q->len -= pad;
	}
	int64_t got = 0;
	if (pt->spool && (got = spool_payload(pt, q, r, size, err)) == 1 && !pt->spool && pt->spool_warn)
		warn(pt, PD_ERR_IO, file_offset, PD_RECORD_AUXTRACE, "no spool file can be made in %s (%s): the AUX "
		     "data is held in memory", rb_spool_dir(), strerror(errno));
	if (!pt->spool) {
		if (q->len + size > q->cap) {
			uint64_t cap = q->cap ? q->cap : 65536;
			while (cap < q->len + size)
				cap *= 2;
			uint8_t *b = realloc(q->buf, (size_t)cap);
			if (!b)
				return PD_ERR_NOMEM;
			q->buf = b;
			q->cap = cap;
		}
		got = pd_reader_read_payload(r, q->buf + q->len, (size_t)size, err);
	}
	if (got < 0)
		return (int)got;
	if (q->nr_chunks == q->cap_chunks) {
		size_t n = q->cap_chunks ? q->cap_chunks * 2 : 16;
		struct chunk *c = realloc(q->chunks, n * sizeof(*c));
		if (!c)
			return PD_ERR_NOMEM;
		q->chunks = c;
		q->cap_chunks = n;
	}
	q->chunks[q->nr_chunks++] = (struct chunk){ .buf_off = q->len, .size = (uint64_t)got,
						    .aux_offset = ev->u.auxtrace.offset, .rec_size = (uint64_t)got,
						    .reference = ev->u.auxtrace.reference, .file_offset = file_offset };
	q->cpu = (int32_t)ev->u.auxtrace.cpu;
	q->tid = (int32_t)ev->u.auxtrace.tid;
	q->len += (uint64_t)got;
	return 0;
}

static int add_break(struct rb_pt *pt, const struct pd_event *ev, uint64_t file_offset)
{
	if (!(ev->u.aux.flags & PD_AUX_FLAG_TRUNCATED))
		return 0;
	struct aux_break *v = realloc(pt->breaks, (pt->nr_breaks + 1) * sizeof(*v));
	if (!v)
		return PD_ERR_NOMEM;
	pt->breaks = v;
	v[pt->nr_breaks++] = (struct aux_break){
		.cpu = (ev->sid.present & PD_SAMPLE_CPU) ? (int32_t)ev->sid.cpu : -1,
		.tid = (ev->sid.present & PD_SAMPLE_TID) ? (int32_t)ev->sid.tid : -1,
		.end = ev->u.aux.aux_offset + ev->u.aux.aux_size, .file_offset = file_offset };
	return 0;
}

/* ------------------------------------------------------------ runs */

/* Whether a record of @cpu / @tid (-1: not known) concerns queue @q. */
int rb_pt_owns(const struct rb_pt *pt, const struct ptq *q, int32_t cpu, int32_t tid)
{
	if (pt->priv[P_PER_CPU_MMAPS] || q->tid < 0)
		return cpu >= 0 && cpu == q->cpu;
	return tid >= 0 && tid == q->tid;
}

static int is_psb(const uint8_t *p, uint64_t n)
{
	if (n < PSB_LEN)
		return 0;
	for (int i = 0; i < PSB_LEN; i += 2)
		if (p[i] != 0x02 || p[i + 1] != 0x82)
			return 0;
	return 1;
}

/*
 * Offset of the next PSB at or after @from, or @n. A packet before it may
 * end in the PSB's own bytes (02 82): in a longer run of them the PSB is
 * the last 16 bytes (what follows a PSB is never 02 82).
 */
uint64_t next_psb(const uint8_t *p, uint64_t n, uint64_t from)
{
	for (uint64_t i = from; i + PSB_LEN <= n; i++)
		if (p[i] == 0x02 && is_psb(p + i, n - i)) {
			while (i + PSB_LEN + 2 <= n && p[i + PSB_LEN] == 0x02 && p[i + PSB_LEN + 1] == 0x82)
				i += 2;
			return i;
		}
	return n;
}

/* An IP packet's address, given the last IP (0 after a PSB): the SDM's IP compression. */
uint64_t ip_update(uint64_t last, const struct pt_packet_ip *ip)
{
	switch (ip->ipc) {
	case pt_ipc_update_16:
		return (last & ~UINT64_C(0xffff)) | (ip->ip & 0xffff);
	case pt_ipc_update_32:
		return (last & ~UINT64_C(0xffffffff)) | (ip->ip & 0xffffffff);
	case pt_ipc_update_48:
		return (last & ~UINT64_C(0xffffffffffff)) | (ip->ip & UINT64_C(0xffffffffffff));
	case pt_ipc_sext_48:
		return (uint64_t)((int64_t)(ip->ip << 16) >> 16);
	case pt_ipc_full:
		return ip->ip;
	default:
		return last;
	}
}

/* The PSB+ at @pos of @p[0, n). */
void scan_psb(const uint8_t *p, uint64_t n, uint64_t pos, struct psb_info *pi)
{
	struct pt_config c;
	pt_config_init(&c);
	c.begin = (uint8_t *)p;
	c.end = (uint8_t *)p + n;
	memset(pi, 0, sizeof(*pi));
	struct pt_packet_decoder *d = pt_pkt_alloc_decoder(&c);
	if (!d)
		return;
	if (pt_pkt_sync_set(d, pos) >= 0) {
		struct pt_packet k;
		for (int i = 0; i < 64 && !pi->complete && pt_pkt_next(d, &k, sizeof(k)) >= 0; i++) {
			if (k.type == ppt_tsc)
				pi->tsc = k.payload.tsc.tsc;
			else if (k.type == ppt_fup)
				pi->fup = ip_update(0, &k.payload.ip);
			pi->complete = k.type == ppt_psbend;
		}
	}
	pt_pkt_free_decoder(d);
}

/* The TSC in the PSB+ at @pos (0 if it has none or ends before PSBEND). */
uint64_t psb_tsc(const uint8_t *p, uint64_t n, uint64_t pos)
{
	struct psb_info pi;
	scan_psb(p, n, pos, &pi);
	return pi.complete ? pi.tsc : 0;
}

/*
 * Snapshot overlap (perf's intel_pt_find_overlap, TSC method): the last
 * complete PSB+ of @a with a TSC is looked for among the PSBs of @b; where
 * the TSCs are equal and the bytes from there on agree, @b repeats the end
 * of @a and its new data starts after the repeat. Returns that offset in @b
 * (1 in *consecutive), or 0 with *consecutive 0 when @b shares nothing with
 * @a (a later TSC comes first): the data between them was lost.
 */
static uint64_t find_overlap(const uint8_t *a, uint64_t alen, const uint8_t *b, uint64_t blen, int *consecutive)
{
	*consecutive = 0;
	uint64_t pos_a = alen, tsc_a = 0;
	for (uint64_t i = next_psb(a, alen, 0); i < alen; i = next_psb(a, alen, i + 1)) {
		uint64_t t = psb_tsc(a, alen, i);
		if (t) {
			pos_a = i;
			tsc_a = t;
		}
	}
	if (!tsc_a)
		return 0;
	uint64_t rem = alen - pos_a;
	for (uint64_t j = next_psb(b, blen, 0); j < blen; j = next_psb(b, blen, j + 1)) {
		uint64_t t = psb_tsc(b, blen, j);
		if (!t)
			continue;
		if (t > tsc_a)
			return 0;
		if (t == tsc_a && blen - j >= rem) {
			/* a's tail may carry up to 7 bytes of perf's padding */
			uint64_t k = rem;
			while (k > 0 && rem - k < 8 && memcmp(a + pos_a, b + j, (size_t)k))
				k--;
			if (k && !memcmp(a + pos_a, b + j, (size_t)k)) {
				*consecutive = 1;
				return j + k;
			}
		}
	}
	return 0;
}

static int add_run(struct ptq *q, uint64_t buf_off, uint64_t size)
{
	struct run *v = realloc(q->runs, (q->nr_runs + 1) * sizeof(*v));
	if (!v)
		return PD_ERR_NOMEM;
	q->runs = v;
	q->runs[q->nr_runs++] = (struct run){ .buf_off = buf_off, .size = size };
	return 0;
}

/* A truncation of @q's data ending in (lo, hi]: its index + 1, or 0. */
static size_t break_between(const struct rb_pt *pt, const struct ptq *q, uint64_t lo, uint64_t hi, uint64_t *at)
{
	for (size_t i = 0; i < pt->nr_breaks; i++) {
		const struct aux_break *b = &pt->breaks[i];
		if (rb_pt_owns(pt, q, b->cpu, b->tid) && b->end > lo && b->end <= hi) {
			*at = b->end;
			return i + 1;
		}
	}
	return 0;
}

/*
 * Turn a queue's chunks into runs. Outside snapshot mode a chunk that starts
 * where the previous one ended continues its run, unless the kernel
 * reported the data truncated in between (AUX record flags). In snapshot
 * mode each snapshot is compared with the previous one: its repeat of the
 * previous one's end is cut off (the buffer is compacted so that the rest
 * follows on) or, with nothing in common, it starts a new run after lost
 * data.
 */
static int build_runs(struct rb_pt *pt, struct ptq *q)
{
	uint64_t w = 0;              /* compacted end of the data kept */
	uint64_t prev_end = 0;       /* AUX offset where the previous chunk's data ended */
	uint64_t prev_start = 0;     /* compacted offset of the previous chunk's data */
	uint64_t perf_pos = 0;
	for (size_t i = 0; i < q->nr_chunks; i++) {
		struct chunk *c = &q->chunks[i];
		uint64_t skip = 0, cut;
		int join = 0;
		size_t brk = 0;
		if (i && !pt->priv[P_SNAPSHOT_MODE]) {
			brk = break_between(pt, q, prev_end - 1, prev_end, &cut);
			join = c->aux_offset == prev_end && !brk;
		} else if (i) {
			int consecutive;
			skip = find_overlap(q->buf + prev_start, w - prev_start, q->buf + c->buf_off, c->size, &consecutive);
			join = consecutive;
		}
		if (skip > c->size)
			skip = c->size;
		if (w != c->buf_off + skip)
			memmove(q->buf + w, q->buf + c->buf_off + skip, (size_t)(c->size - skip));
		uint64_t start = w;
		if (join) {
			q->runs[q->nr_runs - 1].size += c->size - skip;
		} else {
			if (add_run(q, w, c->size - skip) < 0)
				return PD_ERR_NOMEM;
			struct run *r = &q->runs[q->nr_runs - 1];
			r->trimmed = skip;
			if (i && c->aux_offset > prev_end)
				r->lost_before = c->aux_offset - prev_end;
			r->after_break = brk != 0;
			r->break_offset = brk ? pt->breaks[brk - 1].file_offset : 0;
		}
		if (skip && join)
			q->runs[q->nr_runs - 1].trimmed += skip;
		/* a truncation inside this chunk ends the run there */
		size_t in = pt->priv[P_SNAPSHOT_MODE] ? 0 :
			    break_between(pt, q, c->aux_offset + skip, c->aux_offset + c->size - 1, &cut);
		if (in) {
			uint64_t at = start + (cut - c->aux_offset - skip);
			struct run *r = &q->runs[q->nr_runs - 1];
			uint64_t tail = r->buf_off + r->size - at;
			r->size -= tail;
			if (add_run(q, at, tail) < 0)
				return PD_ERR_NOMEM;
			q->runs[q->nr_runs - 1].after_break = 1;
			q->runs[q->nr_runs - 1].break_offset = pt->breaks[in - 1].file_offset;
		}
		c->buf_off = start;
		c->size -= skip;
		c->file_offset += skip;      /* of the bytes kept */
		c->perf_pos = perf_pos;
		perf_pos += c->rec_size - skip;
		prev_start = start;
		prev_end = c->aux_offset + skip + c->size;
		w += c->size;
	}
	q->len = w;
	return 0;
}

static void take_info(struct rb_pt *pt, const struct pd_event *ev, int swapped, uint64_t offset)
{
	size_t n = ev->u.auxtrace_info.nr_priv < P_MAX ? (size_t)ev->u.auxtrace_info.nr_priv : P_MAX;
	for (size_t i = 0; i < n; i++)
		pt->priv[i] = pd_u64_at(ev->u.auxtrace_info.priv, i);
	pt->nr_priv = n;
	char s[1024], why[512];
	uint64_t end;
	int rc = pd_pt_filter_string(ev->u.auxtrace_info.priv, ev->u.auxtrace_info.nr_priv, swapped, s, sizeof(s), &end);
	if (rc < 0)
		warn(pt, PD_ERR_RECORD, offset, PD_RECORD_AUXTRACE_INFO, "the address filter string runs past the "
		     "record: decoding without the filters");
	else if (rc > 0 && rb_pt_filters_parse(&pt->filt, s, why, sizeof(why)) < 0)
		warn(pt, PD_ERR_RECORD, offset, PD_RECORD_AUXTRACE_INFO, "address filter %s: decoding without the "
		     "filters", why);
}

/* Filters of objects that no mapping placed: the decoder cannot use them. */
static void check_filters(struct rb_pt *pt)
{
	for (int i = 0; i < pt->filt.n; i++) {
		if (pt->filt.f[i].placed)
			continue;
		char f[320];
		rb_pt_filter_str(&pt->filt.f[i], f, sizeof(f));
		warn(pt, PD_ERR_UNSUPPORTED, 0, PD_RECORD_AUXTRACE_INFO, "address filter '%s': the recording maps "
		     "no part of %s there, so the filter is not given to the decoder (where a direct jump or call "
		     "leaves it on a CPU with erratum SKL014, where tracing stopped is not known)", f, pt->filt.f[i].file);
	}
}

/* "GenuineIntel,6,85,4" */
static void take_cpuid(struct rb_pt *pt, struct pd_reader *r)
{
	const uint8_t *d;
	size_t size;
	if (!pd_reader_feature(r, PD_FEAT_CPUID, &d, &size, NULL) || size < 5)
		return;
	char s[128];
	size_t n = size - 4 < sizeof(s) - 1 ? size - 4 : sizeof(s) - 1;
	memcpy(s, d + 4, n);
	s[n] = 0;
	unsigned fam, model, step;
	if (strncmp(s, "GenuineIntel,", 13) || sscanf(s + 13, "%u,%u,%u", &fam, &model, &step) != 3)
		return;
	pt->cpu.vendor = pcv_intel;
	pt->cpu.family = (uint16_t)fam;
	pt->cpu.model = (uint8_t)model;
	pt->cpu.stepping = (uint8_t)step;
	pt->have_cpu = 1;
}

enum { SIDE_THREAD = 1, SIDE_BOUND };

/*
 * What a record means to decoding: a thread starting on a CPU (the
 * timeline), a change of memory maps (windows never cross one), or nothing.
 */
static int sideband_kind(const struct pd_record *rec)
{
	switch (rec->type) {
	case PD_RECORD_ITRACE_START:
	case PD_RECORD_SWITCH:
	case PD_RECORD_SWITCH_CPU_WIDE:
		return SIDE_THREAD;
	case PD_RECORD_COMM:
		return (rec->misc & PD_MISC_COMM_EXEC) ? SIDE_BOUND : 0;
	case PD_RECORD_MMAP: case PD_RECORD_MMAP2: case PD_RECORD_FORK: case PD_RECORD_EXIT:
	case 17 /* KSYMBOL */: case 18 /* BPF_EVENT */: case 20 /* TEXT_POKE */:
		return SIDE_BOUND;
	default:
		return 0;
	}
}

/* The thread a sideband record says its CPU runs from now on (as perf's intel_pt_context_switch). */
static int add_sideband(struct rb_pt *pt, int side, const struct pd_event *ev)
{
	if (!(ev->sid.present & PD_SAMPLE_TIME))
		return 0;         /* the session applies it when it comes: no place in time to give it */
	if (side == SIDE_BOUND) {
		/*
		 * A thread's exit changes no maps. A new thread of a known process
		 * (FORK with pid == ppid) shares its process's maps: it matters to
		 * decoding only where a queue is a thread's (set_thread asks the
		 * machine for its pid), so setup_timelines makes it a bound only
		 * then. A program of many short-lived threads would otherwise cut
		 * the windows at every thread, too small to share among threads.
		 */
		if (ev->type == PD_RECORD_EXIT)
			return 0;
		int thread = ev->type == PD_RECORD_FORK && ev->u.fork.pid == ev->u.fork.ppid;
		uint64_t **v = thread ? &pt->thread_forks : &pt->bounds;
		size_t *n = thread ? &pt->nr_thread_forks : &pt->nr_bounds, *cap = thread ? &pt->cap_thread_forks
										     : &pt->cap_bounds;
		if (*n == *cap) {
			size_t c = *cap ? 2 * *cap : 256;
			uint64_t *w = realloc(*v, c * sizeof(*w));
			if (!w)
				return PD_ERR_NOMEM;
			*v = w;
			*cap = c;
		}
		(*v)[(*n)++] = ev->sid.time;
		return 0;
	}
	if (!(ev->sid.present & PD_SAMPLE_CPU))
		return 0;
	struct tl_ent e = { .time = ev->sid.time, .seq = pt->seq++, .cpu = (int32_t)ev->sid.cpu };
	int tid_known = !!(ev->sid.present & PD_SAMPLE_TID);
	if (ev->type == PD_RECORD_ITRACE_START) {
		e.pid = (int32_t)ev->u.itrace_start.pid;
		e.tid = (int32_t)ev->u.itrace_start.tid;
	} else if (ev->type == PD_RECORD_SWITCH_CPU_WIDE && (ev->misc & PD_MISC_SWITCH_OUT)) {
		e.pid = (int32_t)ev->u.context_switch.next_prev_pid;
		e.tid = (int32_t)ev->u.context_switch.next_prev_tid;
	} else if (!(ev->misc & PD_MISC_SWITCH_OUT) && tid_known) {
		e.pid = (int32_t)ev->sid.pid;
		e.tid = (int32_t)ev->sid.tid;
	} else {
		return 0;
	}
	if (pt->nr_tl == pt->cap_tl) {
		size_t n = pt->cap_tl ? 2 * pt->cap_tl : 1024;
		struct tl_ent *v = realloc(pt->tl, n * sizeof(*v));
		if (!v)
			return PD_ERR_NOMEM;
		pt->tl = v;
		pt->cap_tl = n;
	}
	pt->tl[pt->nr_tl++] = e;
	return 0;
}

int gather(struct rb_pt *pt, const char *path, struct pd_error *err)
{
	struct pd_reader *r;
	int rc = pd_reader_open_as(&r, path, pt->env.name ? pt->env.name : path, NULL, err);
	if (rc < 0)
		return err->code = rc;
	const char *min = getenv("RBDECODE_PT_SPOOL_MIN");
	uint64_t spool_min = min && *min ? strtoull(min, NULL, 10) : 0;
	if (pd_reader_info(r)->file_size >= spool_min && (pt->bounce = malloc(SPOOL_PIECE)))
		pt->spool = 1;
	pt->spool_warn = (min && *min) || pd_reader_info(r)->file_size >= SPOOL_WARN;
	struct pd_record rec;
	int found = 0, more;
	uint64_t records = 0;
	/*
	 * The session's ordering queue (ordered.c), followed: a round lets out
	 * the records up to the time the round before had reached (flushed);
	 * one that comes later dated before it is applied out of order. Until
	 * a round has let a record out, nothing decodes (perf's synthesized
	 * maps come untimed there).
	 */
	uint64_t max_time = 0, min_time = UINT64_MAX, next_flush = 0, flushed = 0;
	int released = 0;
	while ((more = pd_reader_next(r, &rec, err)) == 1) {
		records++;
		int side = sideband_kind(&rec);
		if (rec.type == PD_RECORD_FINISHED_ROUND) {
			released |= min_time <= next_flush;
			if (next_flush > flushed)
				flushed = next_flush;
			next_flush = max_time;
			continue;
		}
		uint64_t t;
		int timed = rec.type < 64 && pd_record_time(r, &rec, &t);
		if (timed && t > max_time)
			max_time = t;
		if (timed && t < min_time)
			min_time = t;
		if (side == SIDE_BOUND && rec.type != PD_RECORD_EXIT && !pt->bg_off && released && (!timed || t < flushed)) {
			pt->bg_off = 1;             /* see launch_bg */
			pt->bg_off_at = rec.offset;
			pt->bg_off_why = timed ? "a map-changing record out of time order" : "a map-changing record without a time";
		}
		if (rec.type != PD_RECORD_AUXTRACE_INFO && rec.type != PD_RECORD_AUXTRACE &&
		    rec.type != PD_RECORD_TIME_CONV && rec.type != PD_RECORD_AUX && !side) {
			/* perf writes AUXTRACE_INFO among the first records: stop early without it */
			if (!found && records > 4096)
				break;
			continue;
		}
		struct pd_event ev;
		if (pd_event_parse(r, &rec, &ev, NULL) < 0)
			continue;
		if (side) {
			if (ev.type == PD_RECORD_MMAP2 && (ev.u.mmap2.prot & 4 /* PROT_EXEC */))
				rb_pt_filters_mmap(&pt->filt, ev.u.mmap2.filename, ev.u.mmap2.start, ev.u.mmap2.len,
						   ev.u.mmap2.pgoff);
			else if (ev.type == PD_RECORD_MMAP)
				rb_pt_filters_mmap(&pt->filt, ev.u.mmap.filename, ev.u.mmap.start, ev.u.mmap.len,
						   ev.u.mmap.pgoff);
			if ((rc = add_sideband(pt, side, &ev)) < 0)
				break;
			continue;
		}
		if (rec.type == PD_RECORD_AUXTRACE_INFO) {
			if (ev.u.auxtrace_info.type == PT_AUXTRACE_TYPE && !found) {
				take_info(pt, &ev, pd_reader_info(r)->swapped, rec.offset);
				found = 1;
			}
		} else if (rec.type == PD_RECORD_TIME_CONV) {
			/* used when AUXTRACE_INFO has no conversion of its own */
			if (!pt->time_mult) {
				pt->time_shift = ev.u.time_conv.time_shift;
				pt->time_mult = ev.u.time_conv.time_mult;
				pt->time_zero = ev.u.time_conv.time_zero;
			}
		} else if (rec.type == PD_RECORD_AUX) {
			if ((rc = add_break(pt, &ev, rec.offset)) < 0)
				break;
		} else if (found && (rc = add_chunk(pt, r, &ev, rec.payload_offset, err)) < 0) {
			/*
			 * A payload the file cuts short: the trace before it is still
			 * decoded (the session reports the damage and marks the run
			 * partial); only running out of memory stops everything.
			 */
			if (rc != PD_ERR_NOMEM && !(pt->spool && (rc == PD_ERR_NOSPC || rc == PD_ERR_IO))) {
				if (pt->env.warn)
					pt->env.warn(pt->env.warn_ctx, err);
				rc = 0;
			}
			break;
		}
	}
	if (found) {
		take_cpuid(pt, r);
		check_filters(pt);
		for (size_t i = 0; i < pd_reader_nr_evsels(r); i++) {
			const struct pd_evsel *es = pd_reader_evsel(r, i);
			if (es->attr.type == pt->priv[P_PMU_TYPE] && !pt->have_config) {
				pt->config = es->attr.config;
				pt->have_config = 1;
				pt->user_only = pd_attr_flag(&es->attr, PD_ATTR_EXCLUDE_KERNEL);
				pt->attr = es->attr;
				/* perf names what it synthesizes after the trace event's modifiers */
				pd_attr_modifiers(&es->attr, pt->mods, sizeof(pt->mods));
			}
			if (!(es->attr.sample_type & PD_SAMPLE_TIME))
				pt->timeless = 1;
		}
	}
	pd_reader_free(r);
	for (size_t i = 0; i < pt->nr_q; i++) {
		int mrc = spool_map(&pt->q[i], err);
		if (mrc < 0 && rc >= 0)
			rc = mrc;
	}
	if (rc < 0)
		return rc;
	for (size_t i = 0; found && i < pt->nr_q; i++) {
		struct ptq *q = &pt->q[i];
		if ((rc = build_runs(pt, q)) < 0)
			return rc;
		if (q->map_len)       /* gathering touched it all; decoding reads it back page by page */
			madvise(q->buf, (size_t)q->map_len, MADV_DONTNEED);
	}
	/* a damaged record ends the gathering; what came before is decoded */
	return found;
}

/* ------------------------------------------------------------ timelines */

static int tl_cmp(const void *a, const void *b)
{
	const struct tl_ent *x = a, *y = b;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The first timeline entry of a CPU numbered @cpu or more (the timeline is sorted by CPU first). */
static size_t tl_first(const struct rb_pt *pt, int64_t cpu)
{
	size_t lo = 0, hi = pt->nr_tl;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pt->tl[mid].cpu < cpu)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Each queue's part of the thread timeline (its CPU's), in the order the session applies sideband. */
int setup_timelines(struct rb_pt *pt)
{
	int per_thread = 0;         /* a queue whose thread set_thread asks the machine for */
	for (size_t i = 0; i < pt->nr_q; i++) {
		const struct ptq *q = &pt->q[i];
		per_thread |= q->tid >= 0 && !(q->cpu >= 0 && pt->priv[P_PER_CPU_MMAPS]);
	}
	if (per_thread && pt->nr_thread_forks) {
		uint64_t *v = realloc(pt->bounds, (pt->nr_bounds + pt->nr_thread_forks) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		memcpy(v + pt->nr_bounds, pt->thread_forks, pt->nr_thread_forks * sizeof(*v));
		pt->bounds = v;
		pt->nr_bounds += pt->nr_thread_forks;
		pt->cap_bounds = pt->nr_bounds;
	}
	qsort(pt->tl, pt->nr_tl, sizeof(*pt->tl), tl_cmp);
	qsort(pt->bounds, pt->nr_bounds, sizeof(*pt->bounds), u64_cmp);
	for (size_t i = 0; i < pt->nr_tl; i++)
		pt->tl[i].tsc = perf_to_tsc(pt, pt->tl[i].time);
	for (size_t i = 0; i < pt->nr_q; i++) {
		struct ptq *q = &pt->q[i];
		size_t lo = tl_first(pt, q->cpu), hi = tl_first(pt, (int64_t)q->cpu + 1);
		q->tl_pos = lo;
		q->tl_end = q->cpu >= 0 ? hi : lo;
		q->cpu_pid = q->cpu_tid = -1;
		/* without times the whole trace is decoded after all sideband: each CPU's last thread */
		if (pt->timeless && q->tl_end > q->tl_pos) {
			q->cpu_pid = pt->tl[q->tl_end - 1].pid;
			q->cpu_tid = pt->tl[q->tl_end - 1].tid;
			q->tl_pos = q->tl_end;
		}
	}
	return 0;
}
