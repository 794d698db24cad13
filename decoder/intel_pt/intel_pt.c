/*
 * intel_pt.c - see intel_pt.h. Three parts:
 *
 *  1. Gathering (rb_pt_open): a pass over the recording collects
 *     AUXTRACE_INFO (type 1), TIME_CONV, the CPUID feature and every
 *     AUXTRACE payload, appended to its queue's buffer. Chunks whose AUX
 *     offsets follow each other form one run; a run is decoded as one
 *     stream, and a jump between runs is where the trace restarts.
 *
 *     The same pass notes the sideband decoding depends on: each CPU's
 *     thread timeline (ITRACE_START, SWITCH, SWITCH_CPU_WIDE) and the times
 *     of records that change memory maps (MMAP, FORK, exec...).
 *
 *  2. Decoding (rb_pt_run_until): per queue, a libipt block decoder over
 *     the current run, configured from AUXTRACE_INFO (mtc period, TSC/CTC
 *     ratio, nominal frequency, address filters placed by pt_filter.c) and
 *     the CPU's errata (a filtered trace of a CPU with erratum SKL014 takes
 *     the instruction decoder: see rb_pt_open). Blocks end at every taken
 *     branch (end_on_call / end_on_jump), so a branch is the last
 *     instruction of a block and its target the first of the next one.
 *     Decoding goes in time windows that never cross a map-changing record:
 *     within a window the queues are independent (each follows its CPU's
 *     thread timeline itself), so -j N decodes them on N threads. Each
 *     queue's events go to its own list; the session takes them merged in
 *     time order (queue index breaks ties). Nothing depends on which thread
 *     decoded what or when, so the output is the same for every N.
 *
 *     Segments: a long run of one queue is split too. Boundaries are the
 *     first PSB after every RBDECODE_PT_SEGMENT bytes (64 KiB) of the run,
 *     chosen from the data alone, and the segments are decoded the same way
 *     whatever N is. A lane (a ptq of its own: decoder, images, section
 *     cache, thread, events) decodes from its PSB. A decoder started at a
 *     PSB does not know what the one before it held there (unproven code,
 *     held events, a pending branch, the last CBR, the PTWRITE / power
 *     events waiting for an address, libipt's time calibration, the time
 *     it had reached), so a lane first seeks its start: the first branch
 *     it emits with nothing unproven, held, pending or waiting, after
 *     PWRE_WAIT blocks and a packet that proved code, past two PSBs and
 *     two MTCs that ended cycles (warm_end), before the next map change
 *     and within a segment's bytes. From there on the queue's decoder,
 *     which came from further back, is in the same state, and the lane's
 *     events are the ones it would make. Everything the lane made before
 *     is dropped. The decoder before it stops at that branch (the same
 *     trace offset, branch, and count of branches at that offset) if its
 *     state there is the lane's (need_begin, awaited events, CBR, status,
 *     thread and timeline place, libipt's time and lost MTC / CYC counts,
 *     and a newest time not earlier than the lane's); what it makes after
 *     is dropped, and the queue takes the lane over (adopt): its events,
 *     dated no earlier than the queue's time, its decoder and state. A
 *     lane that finds no start, or a decoder that passes a lane's start
 *     or stands there in another state, just goes on: the lane is
 *     dropped and the output is still the unsegmented one. A window first
 *     adds lanes for the boundaries whose PSB's TSC is within it and that
 *     the queue has not reached, lets them seek (phase one, nothing else
 *     runs), then decodes queues and lanes to its end (phase two); with N
 *     threads windows hold about a segment's worth of events per thread.
 *     Gaps are a decoder's like any event: one in a lane's seek is its
 *     predecessor's, so none is lost or doubled. Instruction samples
 *     (--itrace=i) count instructions from the start of the trace, which a
 *     lane cannot know: with them, and without timestamps, runs are decoded
 *     whole.
 *
 *  3. Memory: one libipt image per process and queue. Sections are added on first
 *     miss: the image's read callback finds the mapping in the session's
 *     machine (maps as of now in the decode), locates the object's file
 *     (build-id cache, --symfs, recorded path) and adds it through libipt's
 *     section cache, so that later reads of that object never come back
 *     here. An exec drops the process's image.
 *
 * Losses are gaps in the session's model: a decode error ("no image for
 * 0x... in pid N", "decoder lost sync") from the last decoded time to the
 * next sync point with the bytes skipped, an overflow packet ("hardware
 * overflow"). Times: TSC to perf time with the AUXTRACE_INFO conversion.
 * Branches, instruction samples and the events that start or stop tracing
 * take the time of the packet that proves them from a packet clock beside
 * libipt (pt_clock.h: TSC, MTC, CYC as perf reads them); libipt's own time,
 * a little ahead, says when sideband is due and where losses start.
 *
 * PTWRITE and power events (perf's --itrace=w and p) go out the same way as
 * branches, held while unproven. An event without an IP of its own takes
 * the address where the decoder stands, the start of the next block, as
 * perf's do; a PWRE that an MWAIT follows (within PWRE_WAIT blocks) is
 * reported with it, at the MWAIT's FUP (perf binds them so). A CBR is
 * reported when the ratio changes (libipt repeats it at every PSB).
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <intel-pt.h>
#include "intel_pt.h"
#include "decoder/session/spool.h"
#include "pt_filter.h"
#include "pt_clock.h"

#define PT_AUXTRACE_TYPE 1

enum {   /* priv[] indexes (facts file 4.1) */
	P_PMU_TYPE, P_TIME_SHIFT, P_TIME_MULT, P_TIME_ZERO, P_CAP_USER_TIME_ZERO, P_TSC_BIT,
	P_NORETCOMP_BIT, P_HAVE_SCHED_SWITCH, P_SNAPSHOT_MODE, P_PER_CPU_MMAPS, P_MTC_BIT,
	P_MTC_FREQ_BITS, P_TSC_CTC_N, P_TSC_CTC_D, P_CYC_BIT, P_MAX_NONTURBO_RATIO, P_FILTER_STR_LEN,
	P_MAX
};

struct chunk {
	uint64_t buf_off, size, aux_offset, reference, file_offset;
	uint64_t rec_size;               /* the AUXTRACE record's size (padding included) */
	uint64_t perf_pos;               /* where its data is in perf's decoder's stream (PSB offsets are
					    given so): the sizes of the chunks before it, padding included,
					    a snapshot's repeat of the previous one's end not */
};

struct run {                     /* trace decoded as one stream */
	uint64_t buf_off, size;
	uint64_t lost_before;            /* AUX bytes lost between the previous run and this one */
	uint64_t trimmed;                /* bytes dropped at its start: a snapshot's overlap with the previous */
	int after_break;                 /* the previous run ended at a loss the kernel reported (AUX flags) */
	uint64_t break_offset;           /* file offset of that AUX record */
};

struct aux_break {                /* a PERF_RECORD_AUX flagged truncated: the data stops at @end */
	int32_t cpu, tid;
	uint64_t end;
	uint64_t file_offset;            /* of the AUX record */
};

struct held {                     /* an event not yet proven by a packet */
	int kind;                        /* RB_EV_* */
	uint64_t from, to, time, insns;
	uint32_t flags;
	int power;                       /* RB_PWR_* */
	uint64_t payload[3];             /* RB_EV_PTWRITE, RB_EV_POWER (session.h) */
};

struct ptq;

/*
 * A point where one decoder can hand over to another (see "Segments"):
 * a branch emitted at a trace offset, and the state around it that the
 * next decoder could not know from its own start.
 */
struct handoff {
	uint64_t off, from, to;
	unsigned ord;
	uint32_t flags;
	int need_begin, nawait, pwre_blocks, status, psb_wait;
	uint64_t psb_next;
	uint64_t qtsc;                   /* the decoder's time (the newest it saw: not compared, see at_handoff) */
	uint64_t tsc;                    /* libipt's time there, and what it lost (its calibration) */
	uint32_t lost_mtc, lost_cyc;
	unsigned cbr;
	int32_t pid_now, tid_now, cpu_pid, cpu_tid;
	size_t tl_pos;
	int have_clk;                    /* the packet clock there (pt_clock.h), and what it dated last */
	struct ptclock clk;
	uint64_t clk_base, clk_time;
};

struct proc_image {               /* a process's memory as one queue's decoder sees it */
	int32_t pid;
	struct pt_image *img;
	struct rb_pt *pt;
	struct ptq *q;
	struct proc_image *next;
	struct { uint64_t vaddr, size; int isid; } *secs;   /* the sections read_memory added to it */
	size_t nr_secs;
};

struct tl_ent {                   /* a CPU starts running a thread (sideband record) */
	uint64_t time, tsc, seq;
	int32_t cpu, pid, tid;
};

#define KIND_SLOTS 4096

struct kind_slot {               /* the branch that ends a block, by its address in a section */
	uint64_t ip;
	int isid;
	uint32_t kind;
	uint8_t len, direct;
};

enum { ITEM_GAP = 100 };

struct gap_item {
	struct rb_gap_ev g;
	char detail[800];
};

struct item {                     /* a decoded event, waiting for the session to take it */
	uint64_t key;                    /* the queue's time when it was let out: never decreases */
	int32_t pid, tid;
	struct held h;
	struct gap_item *gap;            /* kind ITEM_GAP */
};

enum qstate { Q_NEXT_RUN, Q_SYNC, Q_DECODE, Q_DONE };

struct psb_info {                 /* what a PSB+ says */
	uint64_t tsc;                    /* its TSC (0: none) */
	uint64_t fup;                    /* its FUP: where execution stood (0: none, tracing was off) */
	int complete;                    /* PSBEND came before the data ended */
};

#define AWAIT_MAX 8
#define PWRE_WAIT 16                 /* blocks to the MWAIT's FUP: a PWRE without MWAIT is not held longer */

struct ptq {
	uint32_t idx;
	int32_t cpu, tid;                /* from the AUXTRACE records, -1 if none */
	uint8_t *buf;                    /* the queue's AUX data: malloc'd, or a mapping of its spool file */
	uint64_t len, cap;
	int spool_fd;                    /* the spool file while gathering, -1 if none */
	uint64_t map_len;                /* size of the mapping (0: buf is malloc'd) */
	uint64_t released;               /* bytes at the start of the mapping given back to the kernel */
	struct chunk *chunks;
	size_t nr_chunks, cap_chunks;
	struct run *runs;
	size_t nr_runs, cur_run;
	void *dec;                       /* pt_block_decoder, or pt_insn_decoder when instructions are sampled */
	enum qstate state;
	int status;                      /* libipt status bits of the last call */
	uint64_t tsc;                    /* newest decoder time, TSC */
	uint64_t time;                   /* the same in perf time (0 until known) */
	struct ptclock clk;              /* the time of each packet, beside libipt's (pt_clock.h) */
	int have_clk;
	uint64_t clk_time;               /* perf time of the packet the decoder consumed last (events get it) */
	uint64_t clk_tsc, clk_off;       /* its TSC, and the decoder offset it is for */
	int clk_known;                   /* clk_time is the clock's (else libipt's time stands in) */
	uint64_t time_off;               /* the decoder offset tsc / time were read at */
	int time_known;
	struct proc_image *img;          /* image the decoder uses now */
	int32_t pid_now, tid_now;
	/* the branch at the end of the previous block, waiting for its target */
	int pending;
	uint64_t pend_from, pend_next;
	uint32_t pend_flags;
	uint64_t pend_time;              /* its time: of the packet that ended that block */
	uint64_t insn_left;              /* instructions to the next instruction sample */
	/*
	 * What was decoded since the last instruction that consumed a packet (a
	 * TNT bit, a TIP, TIP.PGD...) is straight-line code the trace does not
	 * prove yet: its instruction count, and the events in it (direct calls
	 * and jumps, instruction samples), held. The next packet proves them;
	 * a loss before it drops them into the gap (as perf does).
	 */
	uint64_t unproven;
	/* counts not yet added to the session's statistics */
	uint64_t n_insns, n_branches, n_insn_samples, n_gaps;
	struct held *held;
	size_t nheld, cap_held;
	uint64_t nheld_count[2];         /* held but not kept (no sink wants them): instruction samples, branches */
	uint64_t since;                  /* instructions since the last branch event, emitted or held */
	uint64_t since_proven;           /* the part of it that is proven */
	uint64_t insn_left_proven;       /* insn_left as of the last packet */
	uint64_t done_time;              /* perf time of the last block decoded whole (libipt's time runs
					    ahead of the blocks: a loss starts here) */
	int need_begin;                  /* resynchronized after an error: the next IP starts a trace */
	struct pt_event stash;           /* an event fetched but not yet handled (its time is ahead) */
	int have_stash;
	uint64_t last_ok_offset;         /* trace offset of the last good decode, for gaps */
	/* the thread its CPU runs, from the timeline: entries [tl_pos, tl_end) of rb_pt.tl are ahead */
	int32_t cpu_pid, cpu_tid;
	size_t tl_pos, tl_end;
	struct proc_image *images;       /* this queue's process images */
	struct kind_slot *kinds;         /* branch kinds by address (allocated on first use) */
	struct pt_image_section_cache *iscache;   /* the queue's own: nothing of libipt's is shared */
	int32_t miss_pid;                /* the last read the image callback could not serve */
	uint64_t miss_ip;
	const char *miss_why;            /* what the machine said was missing, or NULL */
	int err;                         /* decoding failed (no memory): the queue stops */
	/* decoded in the window being decoded: out[out_head, out_n) */
	struct item *out;
	size_t out_head, out_n, out_cap;
	/* decoded in windows that are done, not yet taken by the session: tk[tk_head, tk_n) (see rb_pt_run_until) */
	struct item *tk;
	size_t tk_head, tk_n, tk_cap;
	/* PTWRITE / power events waiting for the address of the next block (from 0 until it is known) */
	struct held await[AWAIT_MAX];
	uint8_t await_ip[AWAIT_MAX];     /* 1: from is known */
	int nawait;
	int pwre_blocks;                 /* blocks a PWRE has waited for an MWAIT (at most PWRE_WAIT) */
	unsigned cbr;                    /* the last core:bus ratio reported (0: none yet) */
	/* psb events: the next PSB not reported (position in buf), one waiting for its FUP's address */
	uint64_t psb_next, psb_pos;
	struct psb_info psb;
	int psb_wait;
	/* segments (see "Segments" above) */
	uint64_t dec_base;               /* offset in the run of the decoder's first byte */
	uint64_t emit_off;               /* trace offset of the last branch emitted, and how many */
	unsigned emit_ord;               /*   were emitted at that offset before it */
	struct ptq *lanes;               /* a queue: lanes decoding later segments of its run, in order */
	struct ptq *next;                /* a lane: the one after it */
	struct ptq *target;              /* the lane whose start this decoder stops at (NULL: none) */
	uint64_t seg_last;               /* a queue: the last segment boundary looked at in its run */
	uint64_t seg_next, seg_next_tsc; /* the next one (0: not found yet, UINT64_MAX: none) and its TSC */
	int is_lane, seek, no_start;     /* a lane; looking for its start; gave up looking */
	uint64_t seek_limit, seek_end;   /* a seeking lane gives up at this TSC (a map change) or offset */
	uint64_t seek_from;              /* and starts only past this offset (the PSB after its first) */
	unsigned blocks;                 /* blocks since the lane synchronized (counted to PWRE_WAIT + 1) */
	int proved;                      /* a packet proved code since the lane synchronized */
	struct handoff start;            /* a lane: where its output starts */
	int stopped;                     /* reached its target's start: what came after is the target's */
	size_t stop_keep;                /* items (from out_head) and counts at that point */
	uint64_t stop_n[4], stop_time, stop_tsc;
};

struct pool {                     /* -j N: N - 1 threads besides the session's */
	pthread_t *th;
	int n;
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	uint64_t gen;                    /* a new window to decode */
	size_t next;                     /* next task to take */
	int busy;                        /* threads still decoding this window */
	uint64_t limit;                  /* the window's end, TSC */
	struct ptq **tasks;              /* queues and lanes to decode in this phase */
	size_t nr_tasks, cap_tasks;
	int quit;
};

struct rb_pt {
	struct rb_pt_env env;
	uint64_t priv[P_MAX];
	size_t nr_priv;
	uint64_t config;                 /* the intel_pt evsel's attr.config */
	int have_config;
	int timeless;
	uint64_t insn_period;            /* instruction samples every N instructions (0: none) */
	int insn_dec;                    /* libipt's instruction decoder (samples, or erratum SKL014 with
					    address filters: see rb_pt_open), else its block decoder */
	char mods[4];                    /* perf's name modifier from the intel_pt event (":u", ":k", "") */
	int user_only;                   /* the trace excludes the kernel: a thread can change only while
					    tracing is off, so only enable / disable events wait for sideband */
	uint64_t time_shift, time_mult, time_zero;
	struct pt_cpu cpu;
	int have_cpu;
	struct ptq *q;
	size_t nr_q;
	struct aux_break *breaks;
	size_t nr_breaks;
	int spool;                       /* AUX data goes to spool files (large recordings), not the heap */
	uint8_t *bounce;                 /* a piece of payload on its way to a spool file */
	struct tl_ent *tl;               /* thread timelines, by CPU then time */
	size_t nr_tl, cap_tl;
	uint64_t *bounds;                /* times of records that change memory maps, sorted */
	size_t nr_bounds, cap_bounds;
	uint64_t seq;                    /* records seen by the gathering pass */
	/* windows: decoded up to win_end (perf time); the next one is about delta long */
	uint64_t win_end, delta;
	pthread_mutex_t mlock;           /* the session's machine, for decoding threads */
	struct pool pool;
	int failed;                      /* a sink returned non-zero, or decoding ran out of memory */
	uint64_t seg_size;               /* runs are split in segments of about this many bytes (0: not) */
	uint64_t win_events;             /* events a window should produce */
	uint64_t handoffs;               /* lanes taken over by their queues */
	int phase_seek;                  /* lanes are looking for their starts (and nothing else runs) */
	int overlap;                     /* the pool decodes a window while this thread takes the one before */
	uint64_t cbr2khz;                /* kHz per unit of core:bus ratio (perf's: TSC Hz / max non-turbo / 1000) */
	unsigned max_nonturbo;
	struct rb_pt_filters filt;       /* address filters (perf record --filter), placed by the sideband */
};

/* ------------------------------------------------------------ time */

static uint64_t tsc_to_perf(const struct rb_pt *pt, uint64_t tsc)
{
	if (pt->timeless || !pt->time_mult)
		return 0;
	return pd_tsc_to_perf_time(tsc, pt->time_shift, pt->time_mult, pt->time_zero);
}

static uint64_t perf_to_tsc(const struct rb_pt *pt, uint64_t ns)
{
	if (ns == UINT64_MAX || pt->timeless || !pt->time_mult)
		return UINT64_MAX;
	uint64_t t = ns - pt->time_zero     /* modulo 2^64: time_zero may be "negative" */, quot = t / pt->time_mult, rem = t % pt->time_mult;
	return (quot << pt->time_shift) + ((rem << pt->time_shift) / pt->time_mult);
}

/* ------------------------------------------------------------ gathering */

static struct ptq *queue(struct rb_pt *pt, uint32_t idx)
{
	if (idx >= 65536)
		return NULL;
	if (idx >= pt->nr_q) {
		size_t n = (size_t)idx + 1;
		struct ptq *v = realloc(pt->q, n * sizeof(*v));
		if (!v)
			return NULL;
		for (size_t i = pt->nr_q; i < n; i++) {
			memset(&v[i], 0, sizeof(v[i]));
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
 * Large recordings keep their AUX data out of memory: each queue's bytes
 * go to an unlinked file in $TMPDIR (or /tmp), mapped for decoding once
 * gathered; the pages behind every decoder are given back to the kernel
 * after each window (release_decoded), so what stays resident does not
 * grow with the trace. RBDECODE_PT_SPOOL_MIN sets the recording size from
 * which this is done (bytes; default 64 MiB).
 */
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
			err->code = e == ENOSPC ? PD_ERR_NOSPC : PD_ERR_IO;
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
	if (pt->spool && (got = spool_payload(pt, q, r, size, err)) == 1 && !pt->spool)
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
static int rb_pt_owns(const struct rb_pt *pt, const struct ptq *q, int32_t cpu, int32_t tid)
{
	if (pt->priv[P_PER_CPU_MMAPS] || q->tid < 0)
		return cpu >= 0 && cpu == q->cpu;
	return tid >= 0 && tid == q->tid;
}

#define PSB_LEN 16

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
static uint64_t next_psb(const uint8_t *p, uint64_t n, uint64_t from)
{
	for (uint64_t i = from; i + PSB_LEN <= n; i++)
		if (p[i] == 0x02 && is_psb(p + i, n - i)) {
			while (i + PSB_LEN + 2 <= n && p[i + PSB_LEN] == 0x02 && p[i + PSB_LEN + 1] == 0x82)
				i += 2;
			return i;
		}
	return n;
}

/* An IP packet's address in a PSB+ (the last IP is 0 after a PSB). */
static uint64_t psb_ip(const struct pt_packet_ip *ip)
{
	switch (ip->ipc) {
	case pt_ipc_update_16:
		return ip->ip & 0xffff;
	case pt_ipc_update_32:
		return ip->ip & 0xffffffff;
	case pt_ipc_update_48:
		return ip->ip & 0xffffffffffffull;
	case pt_ipc_sext_48:
		return (uint64_t)((int64_t)(ip->ip << 16) >> 16);
	case pt_ipc_full:
		return ip->ip;
	default:
		return 0;
	}
}

/* The PSB+ at @pos of @p[0, n). */
static void scan_psb(const uint8_t *p, uint64_t n, uint64_t pos, struct psb_info *pi)
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
				pi->fup = psb_ip(&k.payload.ip);
			pi->complete = k.type == ppt_psbend;
		}
	}
	pt_pkt_free_decoder(d);
}

/* The TSC in the PSB+ at @pos (0 if it has none or ends before PSBEND). */
static uint64_t psb_tsc(const uint8_t *p, uint64_t n, uint64_t pos)
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
		if (pt->nr_bounds == pt->cap_bounds) {
			size_t n = pt->cap_bounds ? 2 * pt->cap_bounds : 256;
			uint64_t *v = realloc(pt->bounds, n * sizeof(*v));
			if (!v)
				return PD_ERR_NOMEM;
			pt->bounds = v;
			pt->cap_bounds = n;
		}
		pt->bounds[pt->nr_bounds++] = ev->sid.time;
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

static int gather(struct rb_pt *pt, const char *path, struct pd_error *err)
{
	struct pd_reader *r;
	int rc = pd_reader_open_as(&r, path, pt->env.name ? pt->env.name : path, NULL, err);
	if (rc < 0)
		return err->code = rc;
	const char *min = getenv("RBDECODE_PT_SPOOL_MIN");
	uint64_t spool_min = min && *min ? strtoull(min, NULL, 10) : UINT64_C(64) << 20;
	if (pd_reader_info(r)->file_size >= spool_min && (pt->bounce = malloc(SPOOL_PIECE)))
		pt->spool = 1;
	struct pd_record rec;
	int found = 0, more;
	uint64_t records = 0;
	while ((more = pd_reader_next(r, &rec, err)) == 1) {
		records++;
		int side = sideband_kind(&rec);
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
				/* perf names what it synthesizes after the trace event's modifiers */
				int u = !pd_attr_flag(&es->attr, PD_ATTR_EXCLUDE_USER), k = !pt->user_only;
				snprintf(pt->mods, sizeof(pt->mods), "%s", u && k ? "" : u ? ":u" : k ? ":k" : "");
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

/* ------------------------------------------------------------ memory */

static int read_memory(uint8_t *buffer, size_t size, const struct pt_asid *asid, uint64_t ip, void *context);
static void dec_set_image(const struct rb_pt *pt, void *d, struct pt_image *img);

/* Queue @q's image of process @pid (each queue has its own: decoding threads never share one). */
static struct proc_image *proc_image(struct rb_pt *pt, struct ptq *q, int32_t pid)
{
	for (struct proc_image *p = q->images; p; p = p->next)
		if (p->pid == pid)
			return p;
	struct proc_image *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	char name[48];
	snprintf(name, sizeof(name), "pid %d queue %u", (int)pid, q->idx);
	p->img = pt_image_alloc(name);
	if (!p->img) {
		free(p);
		return NULL;
	}
	p->pid = pid;
	p->pt = pt;
	p->q = q;
	pt_image_set_callback(p->img, read_memory, p);
	p->next = q->images;
	q->images = p;
	return p;
}

/* An exec: the process's images are gone (no queue is decoding: the session calls between windows). */
static void drop_image(struct rb_pt *pt, int32_t pid)
{
	for (size_t i = 0; i < pt->nr_q; i++)
		for (struct ptq *q = &pt->q[i]; q; q = q == &pt->q[i] ? pt->q[i].lanes : q->next)
			for (struct proc_image **pp = &q->images; *pp; pp = &(*pp)->next) {
				struct proc_image *p = *pp;
				if (p->pid != pid)
					continue;
				if (q->img == p) {
					if (q->dec)
						dec_set_image(pt, q->dec, NULL);
					q->img = NULL;
				}
				*pp = p->next;
				pt_image_free(p->img);
				free(p->secs);
				free(p);
				break;
			}
}

/*
 * libipt asks for memory no section covers: find the mapping, add the
 * object's file as a cached section, and read from it. The session's
 * machine is shared by the decoding threads (it does not change during a
 * window, but its lookups fill caches), so this holds its lock; libipt's
 * section cache has its own.
 */
static int read_memory(uint8_t *buffer, size_t size, const struct pt_asid *asid, uint64_t ip, void *context)
{
	struct proc_image *p = context;
	struct rb_pt *pt = p->pt;
	(void)asid;
	p->q->miss_pid = p->pid;
	p->q->miss_ip = ip;
	pthread_mutex_lock(&pt->mlock);
	struct rb_thread *t = rb_machine_thread(pt->env.m, p->pid, p->pid, 0);
	struct rb_code_piece piece;
	p->q->miss_why = NULL;
	int ok = rb_machine_code_at(pt->env.m, t, ip, &piece, &p->q->miss_why) >= 0;   /* kernel code needs no thread */
	int isid = ok ? pt_iscache_add_file(p->q->iscache, piece.file, piece.offset, piece.size, piece.vaddr) : -1;
	pthread_mutex_unlock(&pt->mlock);
	if (isid < 0)
		return -pte_nomap;
	if (pt_image_add_cached(p->img, p->q->iscache, isid, NULL) < 0)
		return -pte_nomap;
	for (size_t i = 0; i < p->nr_secs; i++)
		if (p->secs[i].isid == isid && p->secs[i].vaddr == piece.vaddr)
			return pt_iscache_read(p->q->iscache, buffer, size, isid, ip);   /* noted already */
	void *v = realloc(p->secs, (p->nr_secs + 1) * sizeof(*p->secs));
	if (v) {
		p->secs = v;
		p->secs[p->nr_secs].vaddr = piece.vaddr;
		p->secs[p->nr_secs].size = piece.size;
		p->secs[p->nr_secs++].isid = isid;
	}
	return pt_iscache_read(p->q->iscache, buffer, size, isid, ip);
}

/* ------------------------------------------------------------ events out */

/* Room in item array *@v (of *@cap) for @need items, by doubling. */
static int reserve_items(struct item **v, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 256;
	while (n < need)
		n *= 2;
	struct item *w = realloc(*v, n * sizeof(*w));
	if (!w)
		return -ENOMEM;
	*v = w;
	*cap = n;
	return 0;
}

/*
 * A decoding thread's events go to its queue's list (the session takes
 * them in time order, rb_pt_run_until); its counts to the queue's.
 */
static struct item *push(struct ptq *q)
{
	if (q->out_n == q->out_cap) {
		if (q->out_head && q->out_head * 2 >= q->out_n) {   /* reuse what was taken */
			memmove(q->out, q->out + q->out_head, (q->out_n - q->out_head) * sizeof(*q->out));
			q->out_n -= q->out_head;
			q->out_head = 0;
		} else if (reserve_items(&q->out, &q->out_cap, q->out_n + 1)) {
			q->err = -ENOMEM;
			return NULL;
		}
	}
	struct item *it = &q->out[q->out_n++];
	it->key = q->time;
	it->pid = q->pid_now;
	it->tid = q->tid_now;
	it->gap = NULL;
	return it;
}

static int emit_gap_ev(struct rb_pt *pt, struct ptq *q, const struct rb_gap_ev *g)
{
	q->n_gaps++;
	if (!pt->env.gap)
		return 0;
	struct gap_item *gi = malloc(sizeof(*gi));
	struct item *it = gi ? push(q) : NULL;
	if (!it) {
		free(gi);
		return q->err = -ENOMEM;
	}
	gi->g = *g;
	snprintf(gi->detail, sizeof(gi->detail), "%s", g->detail ? g->detail : "");
	gi->g.detail = gi->detail;
	it->h.kind = ITEM_GAP;
	it->gap = gi;
	return 0;
}

static int emit_gap(struct rb_pt *pt, struct ptq *q, const char *reason, uint64_t t0, uint64_t t1,
		    uint64_t bytes, const char *detail)
{
	struct rb_gap_ev g = { .time_start = t0, .time_end = t1, .cpu = q->cpu, .pid = q->pid_now,
			       .tid = q->tid_now, .source = "intel_pt", .reason = reason, .bytes_lost = bytes,
			       .file_offset = 0, .detail = detail };
	return emit_gap_ev(pt, q, &g);
}

static int deliver(struct rb_pt *pt, struct ptq *q, const struct held *h)
{
	if (h->kind == RB_EV_BRANCH)
		q->n_branches++;
	else if (h->kind == RB_EV_INSTRUCTION)
		q->n_insn_samples++;
	if (!pt->env.trace || (h->kind == RB_EV_BRANCH && pt->env.no_branches))
		return 0;
	struct item *it = push(q);
	if (!it)
		return q->err;
	it->h = *h;
	return 0;
}

/* An event: delivered now, or held while the code it follows is not proven. */
static int emit(struct rb_pt *pt, struct ptq *q, const struct held *h)
{
	if (!q->unproven && !q->nheld && !q->nheld_count[0] && !q->nheld_count[1])
		return deliver(pt, q, h);
	if (!pt->env.trace) {     /* nobody wants them: only their number */
		if (h->kind == RB_EV_BRANCH || h->kind == RB_EV_INSTRUCTION)
			q->nheld_count[h->kind == RB_EV_BRANCH]++;
		return 0;
	}
	if (q->nheld == q->cap_held) {
		size_t n = q->cap_held ? 2 * q->cap_held : 64;
		struct held *v = realloc(q->held, n * sizeof(*v));
		if (!v)
			return q->err = -ENOMEM;
		q->held = v;
		q->cap_held = n;
	}
	q->held[q->nheld++] = *h;
	return 0;
}

static void at_handoff(struct rb_pt *pt, struct ptq *q, uint64_t from, uint64_t to, uint32_t flags);

static int emit_branch(struct rb_pt *pt, struct ptq *q, uint64_t from, uint64_t to, uint32_t flags, uint64_t time)
{
	if (!pt->env.trace) {      /* nobody takes events (gaps, info): only their number, as emit counts */
		q->since = 0;
		if (!q->unproven)
			q->since_proven = 0;
		if (!q->unproven && !q->nheld && !q->nheld_count[0] && !q->nheld_count[1])
			q->n_branches++;
		else
			q->nheld_count[1]++;
	} else {
		struct held h = { .kind = RB_EV_BRANCH, .from = from, .to = to, .time = time, .insns = q->since,
				  .flags = flags };
		q->since = 0;
		if (!q->unproven)
			q->since_proven = 0;
		if (emit(pt, q, &h))
			return q->err;
	}
	if (pt->seg_size)
		at_handoff(pt, q, from, to, flags);
	return 0;
}

/* A packet proved what was decoded since the last one: count it, and let its events out. */
static __attribute__((noinline)) int deliver_held(struct rb_pt *pt, struct ptq *q)
{
	for (size_t i = 0; i < q->nheld; i++)
		if (deliver(pt, q, &q->held[i]))
			return q->err;
	q->nheld = 0;
	q->n_branches += q->nheld_count[1];
	q->n_insn_samples += q->nheld_count[0];
	q->nheld_count[0] = q->nheld_count[1] = 0;
	return 0;
}

static inline int prove(struct rb_pt *pt, struct ptq *q)
{
	q->n_insns += q->unproven;
	q->unproven = 0;
	q->proved = 1;
	q->since_proven = q->since;
	q->insn_left_proven = q->insn_left;
	return q->nheld || q->nheld_count[0] || q->nheld_count[1] ? deliver_held(pt, q) : 0;
}

/* A loss: what no packet proved goes into the gap. */
static void drop_unproven(struct ptq *q)
{
	q->unproven = 0;
	q->nheld = 0;
	q->nheld_count[0] = q->nheld_count[1] = 0;
	q->since = q->since_proven;
	q->insn_left = q->insn_left_proven;
}

/*
 * The kind of the branch instruction @raw (x86, any mode): perf's flags,
 * 0 when it is not a branch. Prefixes (operand and address size,
 * segment / branch hints, REX, BND) are skipped.
 */
static uint32_t branch_kind(const uint8_t *raw, unsigned size, unsigned *len, int *direct)
{
	unsigned i = 0;
	*len = 0;
	*direct = 0;
	while (i < size && (raw[i] == 0x66 || raw[i] == 0x67 || raw[i] == 0xf2 || raw[i] == 0xf3 ||
			    raw[i] == 0x2e || raw[i] == 0x3e || raw[i] == 0x26 || raw[i] == 0x36 ||
			    raw[i] == 0x64 || raw[i] == 0x65 || (raw[i] >= 0x40 && raw[i] <= 0x4f)))
		i++;
	if (i >= size)
		return 0;
	uint8_t op = raw[i];
	uint8_t modrm_reg = i + 1 < size ? (raw[i + 1] >> 3) & 7 : 0;
	if ((op >= 0x70 && op <= 0x7f) || (op >= 0xe0 && op <= 0xe3)) {
		*len = i + 2;           /* rel8 */
		return RB_IP_FLAG_BRANCH | RB_IP_FLAG_CONDITIONAL;
	}
	switch (op) {
	case 0xe8:
		*direct = 1;            /* a direct call or jump needs no trace */
		return RB_IP_FLAG_BRANCH | RB_IP_FLAG_CALL;
	case 0xe9: case 0xeb:
		*direct = 1;
		return RB_IP_FLAG_BRANCH;
	case 0x9a:
		return RB_IP_FLAG_BRANCH | RB_IP_FLAG_CALL;
	case 0xea:
		return RB_IP_FLAG_BRANCH;
	case 0xc2: case 0xc3: case 0xca: case 0xcb:
		return RB_IP_FLAG_BRANCH | RB_IP_FLAG_RETURN;
	case 0xcf:      /* iret */
		return RB_IP_FLAG_BRANCH | RB_IP_FLAG_RETURN | RB_IP_FLAG_INTERRUPT;
	case 0xcc: case 0xcd: case 0xce: case 0xf1:
		return RB_IP_FLAG_BRANCH | RB_IP_FLAG_CALL | RB_IP_FLAG_INTERRUPT;
	case 0xff:
		if (modrm_reg == 2 || modrm_reg == 3)
			return RB_IP_FLAG_BRANCH | RB_IP_FLAG_CALL;
		if (modrm_reg == 4 || modrm_reg == 5)
			return RB_IP_FLAG_BRANCH;
		return 0;
	case 0x0f:
		if (i + 1 >= size)
			return 0;
		op = raw[i + 1];
		if (op >= 0x80 && op <= 0x8f) {
			*len = i + 6;   /* rel32 (rel16 needs a 16-bit mode, not decoded here) */
			return RB_IP_FLAG_BRANCH | RB_IP_FLAG_CONDITIONAL;
		}
		if (op == 0x05 || op == 0x34)    /* syscall, sysenter */
			return RB_IP_FLAG_BRANCH | RB_IP_FLAG_CALL | RB_IP_FLAG_SYSCALLRET;
		if (op == 0x07 || op == 0x35)    /* sysret, sysexit */
			return RB_IP_FLAG_BRANCH | RB_IP_FLAG_RETURN | RB_IP_FLAG_SYSCALLRET;
		return 0;
	}
	return 0;
}

/* The section read_memory added to @q's image for @ip (the newest: libipt lets it override), or 0. */
static int added_section(const struct ptq *q, uint64_t ip)
{
	if (q->img)
		for (size_t i = q->img->nr_secs; i-- > 0;)
			if (ip - q->img->secs[i].vaddr < q->img->secs[i].size)
				return q->img->secs[i].isid;
	return 0;
}

/*
 * Code bytes at @ip in @q's image, for a block or event libipt names no
 * section for: from the section read_memory added for it if there is one,
 * rather than read_memory again (the machine's lock, a search, and the
 * section added to the image once more, each time).
 */
static int read_code(struct ptq *q, uint64_t ip, uint8_t *raw, size_t size)
{
	int isid = added_section(q, ip);
	if (isid > 0)
		return pt_iscache_read(q->iscache, raw, size, isid, ip);
	return q->img ? read_memory(raw, size, NULL, ip, q->img) : -1;
}

/*
 * The target of the direct jump or call at @ip (0: not one, or its bytes
 * cannot be read): where tracing stopped when a filter region is left by it
 * and the TIP.PGD has no IP (erratum SKL014). perf shows that target too.
 */
static uint64_t direct_target(struct rb_pt *pt, struct ptq *q, uint64_t ip)
{
	uint8_t raw[pt_max_insn_size];
	int n = read_code(q, ip, raw, sizeof(raw));
	unsigned len;
	int direct;
	if (n <= 0 || !branch_kind(raw, (unsigned)n, &len, &direct) || !direct)
		return 0;
	unsigned i = 0;
	while (i < (unsigned)n && raw[i] != 0xe8 && raw[i] != 0xe9 && raw[i] != 0xeb)
		i++;           /* the prefixes branch_kind skipped */
	if (raw[i] == 0xeb && i + 2 <= (unsigned)n)
		return ip + i + 2 + (uint64_t)(int64_t)(int8_t)raw[i + 1];
	if (i + 5 > (unsigned)n)
		return 0;
	int32_t d;
	memcpy(&d, raw + i + 1, 4);
	return ip + i + 5 + (uint64_t)(int64_t)d;
}

/*
 * The branch that ends block @b, if any: libipt gives the last
 * instruction's bytes only when it straddles sections, so they are read
 * from the image (the section cache, or the process image's callback).
 */
static uint32_t block_branch(struct rb_pt *pt, struct ptq *q, const struct pt_block *b, unsigned *len, int *direct)
{
	uint8_t raw[pt_max_insn_size];
	int n;
	*len = 0;
	*direct = 0;
	if (b->iclass == ptic_other || b->iclass == ptic_ptwrite)
		return 0;
	struct kind_slot *k = NULL;
	int isid = b->isid > 0 || b->truncated ? b->isid : added_section(q, b->end_ip);   /* see read_code */
	if (b->truncated) {
		memcpy(raw, b->raw, b->size);
		n = b->size;
	} else if (isid > 0) {
		/* a section's bytes do not change: its branches are classified once */
		if (!q->kinds && !(q->kinds = calloc(KIND_SLOTS, sizeof(*q->kinds)))) {
			q->err = -ENOMEM;
			return 0;
		}
		k = &q->kinds[(b->end_ip ^ ((uint64_t)isid << 20)) & (KIND_SLOTS - 1)];
		if (k->ip == b->end_ip && k->isid == isid) {
			*len = k->len;
			*direct = k->direct;
			return k->kind;
		}
		n = pt_iscache_read(q->iscache, raw, sizeof(raw), isid, b->end_ip);
	} else {
		n = q->img ? read_memory(raw, sizeof(raw), NULL, b->end_ip, q->img) : -1;
	}
	uint32_t kind = n > 0 ? branch_kind(raw, (unsigned)n, len, direct) : 0;
	if (k && n > 0)
		*k = (struct kind_slot){ .ip = b->end_ip, .isid = isid, .kind = kind, .len = (uint8_t)*len,
					 .direct = (uint8_t)*direct };
	return kind;
}

/* ------------------------------------------------------------ decoding */

/*
 * The decoder of a queue: libipt's block decoder, or its instruction
 * decoder when instruction samples are asked for (their addresses need
 * every instruction). An instruction is returned as a block of one, with
 * its bytes, so that what follows does not care which decoder ran.
 */
static void dec_free(const struct rb_pt *pt, void *d)
{
	if (pt->insn_dec)
		pt_insn_free_decoder(d);
	else
		pt_blk_free_decoder(d);
}

static void dec_set_image(const struct rb_pt *pt, void *d, struct pt_image *img)
{
	if (pt->insn_dec)
		pt_insn_set_image(d, img);
	else
		pt_blk_set_image(d, img);
}

static int dec_time(const struct rb_pt *pt, void *d, uint64_t *tsc)
{
	uint32_t lost_mtc, lost_cyc;
	return pt->insn_dec ? pt_insn_time(d, tsc, &lost_mtc, &lost_cyc) : pt_blk_time(d, tsc, &lost_mtc, &lost_cyc);
}

static inline uint64_t dec_offset(const struct rb_pt *pt, void *d, int sync)
{
	uint64_t off = 0;
	if (pt->insn_dec)
		(sync ? pt_insn_get_sync_offset : pt_insn_get_offset)(d, &off);
	else
		(sync ? pt_blk_get_sync_offset : pt_blk_get_offset)(d, &off);
	return off;
}

static int dec_sync_forward(const struct rb_pt *pt, void *d)
{
	return pt->insn_dec ? pt_insn_sync_forward(d) : pt_blk_sync_forward(d);
}

static int dec_event(const struct rb_pt *pt, void *d, struct pt_event *ev)
{
	return pt->insn_dec ? pt_insn_event(d, ev, sizeof(*ev)) : pt_blk_event(d, ev, sizeof(*ev));
}

static int dec_next(const struct rb_pt *pt, void *d, struct pt_block *b)
{
	if (!pt->insn_dec)
		return pt_blk_next(d, b, sizeof(*b));      /* libipt zeroes the block first, errors included */
	memset(b, 0, sizeof(*b));
	struct pt_insn in;
	memset(&in, 0, sizeof(in));
	int st = pt_insn_next(d, &in, sizeof(in));
	if (st < 0 && !in.size)
		return st;
	b->ip = b->end_ip = in.ip;
	b->isid = in.isid;
	b->mode = in.mode;
	b->iclass = in.iclass;
	b->ninsn = st < 0 ? 0 : 1;
	memcpy(b->raw, in.raw, sizeof(b->raw) < sizeof(in.raw) ? sizeof(b->raw) : sizeof(in.raw));
	b->size = in.size;
	b->truncated = 1;          /* the bytes are in raw */
	return st;
}

/* ------------------------------------------------------------ hand-over points */

static void handoff_of(const struct rb_pt *pt, struct ptq *q, uint64_t from, uint64_t to, uint32_t flags,
		       struct handoff *h)
{
	memset(h, 0, sizeof(*h));
	h->off = q->emit_off;
	h->ord = q->emit_ord;
	h->from = from;
	h->to = to;
	h->flags = flags;
	h->need_begin = q->need_begin;
	h->nawait = q->nawait;
	h->pwre_blocks = q->pwre_blocks;
	h->status = q->status;
	h->cbr = q->cbr;
	h->pid_now = q->pid_now;
	h->tid_now = q->tid_now;
	h->cpu_pid = q->cpu_pid;
	h->cpu_tid = q->cpu_tid;
	h->tl_pos = q->tl_pos;
	h->qtsc = q->tsc;
	h->psb_wait = q->psb_wait;
	h->psb_next = pt->env.pwr_events ? q->psb_next : 0;   /* followed only for psb events */
	h->have_clk = q->have_clk;
	if (q->have_clk) {
		h->clk = q->clk;
		h->clk_base = q->dec_base;
		h->clk_time = q->clk_time;
	}
	if (pt->insn_dec)
		pt_insn_time(q->dec, &h->tsc, &h->lost_mtc, &h->lost_cyc);
	else
		pt_blk_time(q->dec, &h->tsc, &h->lost_mtc, &h->lost_cyc);
}

static int handoff_same_place(const struct handoff *a, const struct handoff *b)
{
	return a->off == b->off && a->ord == b->ord && a->from == b->from && a->to == b->to && a->flags == b->flags;
}

static int handoff_same_state(const struct handoff *a, const struct handoff *b)
{
	return a->need_begin == b->need_begin && a->nawait == b->nawait && a->pwre_blocks == b->pwre_blocks &&
	       a->status == b->status && a->cbr == b->cbr && a->pid_now == b->pid_now && a->tid_now == b->tid_now &&
	       a->cpu_pid == b->cpu_pid && a->cpu_tid == b->cpu_tid && a->tl_pos == b->tl_pos && a->tsc == b->tsc &&
	       a->lost_mtc == b->lost_mtc && a->lost_cyc == b->lost_cyc && a->psb_wait == b->psb_wait &&
	       a->psb_next == b->psb_next && a->have_clk == b->have_clk &&
	       (!a->have_clk || (a->clk_time == b->clk_time && ptclock_agree(&a->clk, a->clk_base, &b->clk, b->clk_base)));
}

/* The gaps items @v[from, to) own, freed. */
static void free_gaps(struct item *v, size_t from, size_t to)
{
	for (size_t j = from; j < to; j++) {
		free(v[j].gap);
		v[j].gap = NULL;
	}
}

/* Items from @from on are dropped. */
static void drop_items(struct ptq *q, size_t from)
{
	free_gaps(q->out, from, q->out_n);
	if (from < q->out_n)
		q->out_n = from;
	if (q->out_head > q->out_n)
		q->out_head = q->out_n;
}

/*
 * A branch was emitted with nothing unproven or pending behind it: a lane
 * looking for its start takes the first such point after it has seen
 * PWRE_WAIT blocks and a packet proving code (everything before is its
 * predecessor's); a decoder with a target stops where that lane started,
 * if it stands there in the same state (what follows is the lane's).
 */
static void at_handoff(struct rb_pt *pt, struct ptq *q, uint64_t from, uint64_t to, uint32_t flags)
{
	/* branches are counted per trace offset from when a lane start is looked for, or at */
	if (!q->dec || q->stopped || (!q->seek && !q->target))
		return;
	uint64_t off = q->dec_base + dec_offset(pt, q->dec, 0);
	if (off != q->emit_off) {
		q->emit_off = off;
		q->emit_ord = 0;
	} else {
		q->emit_ord++;
	}
	if (q->unproven || q->nheld || q->nheld_count[0] || q->nheld_count[1] || q->pending)
		return;
	struct handoff h;
	if (q->seek) {
		if (q->blocks <= PWRE_WAIT || !q->proved || q->nawait || q->psb_wait || q->need_begin ||
		    off <= q->seek_from)
			return;
		handoff_of(pt, q, from, to, flags, &h);
		q->start = h;
		q->seek = 0;
		drop_items(q, q->out_head);
		q->out_head = q->out_n = 0;
		q->n_insns = q->n_branches = q->n_insn_samples = q->n_gaps = 0;
		return;
	}
	if (pt->phase_seek)
		return;      /* lanes that found their starts wait for the others' */
	struct ptq *t = q->target;
	while (t && (t->no_start || off > t->start.off))
		t = t->next;
	q->target = t;
	if (!t || off != t->start.off)
		return;
	handoff_of(pt, q, from, to, flags, &h);
	if (!handoff_same_place(&h, &t->start))
		return;
	/*
	 * The lane's time is the newest it saw, this decoder's the newest
	 * of a longer past: the lane's events are dated no earlier than this
	 * decoder's time (adopt), which is right if the lane's is not later.
	 */
	if (!handoff_same_state(&h, &t->start) || t->start.qtsc > h.qtsc) {
		q->target = t->next;
		return;
	}
	q->stopped = 1;
	q->stop_keep = q->out_n - q->out_head;
	q->stop_n[0] = q->n_insns;
	q->stop_n[1] = q->n_branches;
	q->stop_n[2] = q->n_insn_samples;
	q->stop_n[3] = q->n_gaps;
	q->stop_time = q->time;
	q->stop_tsc = q->tsc;
}

/*
 * The time a run's decoding first needs memory: the newest TSC before its
 * first packet that carries an IP or branch outside PSB+ (TIP.PGE, TIP,
 * FUP, TNT). libipt reads memory as it synchronizes, so a queue does not
 * synchronize before the sideband up to that time (its maps) has been
 * applied.
 */
static uint64_t first_tsc(const struct pt_config *c)
{
	struct pt_packet_decoder *d = pt_pkt_alloc_decoder(c);
	uint64_t tsc = 0;
	int in_psb = 0;
	if (!d)
		return 0;
	if (pt_pkt_sync_forward(d) >= 0) {
		struct pt_packet p;
		for (int i = 0; i < 4096 && pt_pkt_next(d, &p, sizeof(p)) >= 0; i++) {
			if (p.type == ppt_tsc)
				tsc = p.payload.tsc.tsc;
			else if (p.type == ppt_psb)
				in_psb = 1;
			else if (p.type == ppt_psbend)
				in_psb = 0;
			else if (!in_psb && (p.type == ppt_tip_pge || p.type == ppt_tip || p.type == ppt_fup ||
					     p.type == ppt_tnt_8 || p.type == ppt_tnt_64))
				break;
		}
	}
	pt_pkt_free_decoder(d);
	return tsc;
}

/* A decoder's configuration for @run from its offset @from to its end. */
static void run_config(const struct rb_pt *pt, const struct ptq *q, const struct run *run, uint64_t from,
		       struct pt_config *c)
{
	pt_config_init(c);
	c->begin = q->buf + run->buf_off + from;
	c->end = q->buf + run->buf_off + run->size;
	if (pt->have_cpu) {
		c->cpu = pt->cpu;
		pt_cpu_errata(&c->errata, &c->cpu);
	}
	if (pt->nr_priv > P_TSC_CTC_D) {
		c->cpuid_0x15_eax = (uint32_t)pt->priv[P_TSC_CTC_D];
		c->cpuid_0x15_ebx = (uint32_t)pt->priv[P_TSC_CTC_N];
		uint64_t bits = pt->priv[P_MTC_FREQ_BITS];
		if (bits)
			c->mtc_freq = (uint8_t)((pt->config & bits) >> __builtin_ctzll(bits));
	}
	if (pt->nr_priv > P_MAX_NONTURBO_RATIO)
		c->nom_freq = (uint8_t)pt->priv[P_MAX_NONTURBO_RATIO];
	rb_pt_filters_config(&pt->filt, &c->addr_filter);
	if (!pt->insn_dec) {            /* the same bits mean other things to the instruction decoder */
		c->flags.variant.block.end_on_call = 1;
		c->flags.variant.block.end_on_jump = 1;
	}
}

/*
 * The packet clock over the bytes decoder config @c reads (from its first
 * PSB). It dates events only: when nobody takes them (gaps, info: branches
 * are counted, not built) it is not run, and clk_time follows libipt's time.
 */
static int start_clock(struct rb_pt *pt, struct ptq *q, const struct pt_config *c)
{
	q->clk_known = 0;
	q->time_known = 0;
	if (!pt->env.trace)
		return 0;
	struct ptclock_config cc = { .mtc_shift = c->mtc_freq, .tsc_ctc_n = c->cpuid_0x15_ebx,
				     .tsc_ctc_d = c->cpuid_0x15_eax, .max_nonturbo = c->nom_freq };
	if (ptclock_init(&q->clk, &cc, c->begin, c->end, 0))
		return -1;
	q->have_clk = 1;
	return 0;
}

static int start_run(struct rb_pt *pt, struct ptq *q)
{
	if (q->dec) {
		dec_free(pt, q->dec);
		q->dec = NULL;
	}
	if (q->have_clk) {
		ptclock_fini(&q->clk);
		q->have_clk = 0;
	}
	q->target = NULL;               /* lanes of the run before are no one's */
	if (q->cur_run >= q->nr_runs) {
		q->state = Q_DONE;
		return 0;
	}
	const struct run *run = &q->runs[q->cur_run++];
	int first = q->cur_run == 1;
	uint64_t t_end = q->done_time;   /* last decoded time of the previous run */
	struct pt_config c;
	run_config(pt, q, run, 0, &c);
	q->dec_base = 0;
	q->seg_last = q->seg_next = 0;
	uint64_t t = first_tsc(&c);
	if (t > q->tsc) {
		q->tsc = t;
		q->time = tsc_to_perf(pt, t);
	}
	char detail[200];
	if (!first && run->lost_before) {
		snprintf(detail, sizeof(detail), "queue %u: %" PRIu64 " bytes of trace between run %zu and run %zu were "
			 "overwritten or not recorded", q->idx, run->lost_before, q->cur_run - 2, q->cur_run - 1);
		if (emit_gap(pt, q, pt->priv[P_SNAPSHOT_MODE] ? "snapshot overwrite" : "aux hole", t_end, q->time,
			     run->lost_before, detail))
			return q->err;
	}
	if (!first && run->after_break) {
		snprintf(detail, sizeof(detail), "queue %u: the kernel truncated the AUX data (AUX record at file "
			 "offset %#" PRIx64 "); trace resumes at run %zu", q->idx, run->break_offset, q->cur_run - 1);
		struct rb_gap_ev g = { .time_start = t_end, .time_end = q->time, .cpu = q->cpu, .pid = q->pid_now,
				       .tid = q->tid_now, .source = "aux", .reason = "aux truncated",
				       .file_offset = run->break_offset, .detail = detail };
		if (emit_gap_ev(pt, q, &g))
			return q->err;
	}
	if (!first && run->trimmed) {
		snprintf(detail, sizeof(detail), "queue %u: run %zu repeated the last %" PRIu64 " bytes of the one "
			 "before (snapshot overlap), dropped; nothing lost", q->idx, q->cur_run - 1, run->trimmed);
		if (emit_gap(pt, q, "overlap trimmed", q->time, q->time, 0, detail))
			return q->err;
	}
	q->dec = pt->insn_dec ? (void *)pt_insn_alloc_decoder(&c) : (void *)pt_blk_alloc_decoder(&c);
	if (!q->dec)
		return q->err = -ENOMEM;
	if (start_clock(pt, q, &c))
		return q->err = -ENOMEM;
	if (q->img)
		dec_set_image(pt, q->dec, q->img->img);
	q->pending = 0;
	q->have_stash = 0;
	q->state = Q_SYNC;
	q->psb_wait = 0;
	q->psb_next = run->buf_off + next_psb(c.begin, run->size, 0);
	return 0;
}

/*
 * Two clocks: libipt's (q->tsc, q->time), which runs ahead of the blocks
 * and says when sideband must be applied and where losses start; and the
 * packet clock (q->clk_time), the time of the packet the decoder consumed
 * last, which dates branches, instruction samples and the events that end
 * or start tracing.
 */
static inline void update_clock_at(struct rb_pt *pt, struct ptq *q, uint64_t off)
{
	uint64_t tsc;
	if (q->clk_known && off == q->clk_off)
		return;                 /* no packet read since (blocks of one TNT packet): the same time */
	if (q->have_clk && ptclock_at(&q->clk, off, &tsc) >= 0) {
		if (!q->clk_known || tsc != q->clk_tsc)
			q->clk_time = tsc_to_perf(pt, tsc);
		q->clk_tsc = tsc;
		q->clk_off = off;
		q->clk_known = 1;
	} else {
		q->clk_time = q->time;
		q->clk_known = 0;
	}
}

static void update_clock(struct rb_pt *pt, struct ptq *q)
{
	update_clock_at(pt, q, dec_offset(pt, q->dec, 0));
}

static __attribute__((noinline)) void read_time(struct rb_pt *pt, struct ptq *q, uint64_t off)
{
	uint64_t tsc;
	q->time_off = off;
	q->time_known = 1;
	if (dec_time(pt, q->dec, &tsc) >= 0 && tsc > q->tsc) {
		q->tsc = tsc;
		q->time = tsc_to_perf(pt, tsc);
	}
	update_clock_at(pt, q, off);
}

/* Both clocks move only as libipt reads packets: most blocks (the bits of one TNT) leave them as they are. */
static inline void update_time(struct rb_pt *pt, struct ptq *q)
{
	uint64_t off = dec_offset(pt, q->dec, 0);
	if (!q->time_known || off != q->time_off)
		read_time(pt, q, off);
}

/* The thread a queue's trace belongs to now, and its image. */
static int set_thread(struct rb_pt *pt, struct ptq *q)
{
	int32_t pid = -1, tid = -1;
	if (q->cpu >= 0 && (pt->priv[P_PER_CPU_MMAPS] || q->tid < 0)) {
		pid = q->cpu_pid;
		tid = q->cpu_tid;
	}
	if (tid < 0 && q->tid >= 0) {
		pthread_mutex_lock(&pt->mlock);
		struct rb_thread *t = rb_machine_thread(pt->env.m, -1, q->tid, 0);
		pid = t && t->pid >= 0 ? t->pid : q->tid;
		pthread_mutex_unlock(&pt->mlock);
		tid = q->tid;
	}
	q->pid_now = pid;
	q->tid_now = tid;
	/* no known process (idle, or before the first switch record): an image that has the kernel only */
	struct proc_image *p = proc_image(pt, q, pid >= 0 ? pid : -1);
	if (!p)
		return q->err = -ENOMEM;
	if (p != q->img) {
		q->img = p;
		if (q->dec)
			dec_set_image(pt, q->dec, p ? p->img : NULL);
	}
	return 0;
}

static int emit_psb(struct rb_pt *pt, struct ptq *q);

static int on_error(struct rb_pt *pt, struct ptq *q, int err)
{
	char detail[800];
	uint64_t off = 0, t0 = q->time;
	off = q->dec_base + dec_offset(pt, q->dec, 0);
	const char *reason = "decoder lost sync";
	if (err == -pte_nomap) {
		reason = "no image";
		snprintf(detail, sizeof(detail), "no image for %#" PRIx64 " in pid %d (queue %u, trace offset %#" PRIx64 ")%s%s",
			 q->miss_ip, (int)q->miss_pid, q->idx, off, q->miss_why ? ": " : "",
			 q->miss_why ? q->miss_why : "");
	} else {
		snprintf(detail, sizeof(detail), "%s at trace offset %#" PRIx64 " (queue %u)",
			 pt_errstr(pt_errcode(err)), off, q->idx);
	}
	/* the trace began where the image is missing (perf shows that start too) */
	if (q->need_begin && err == -pte_nomap) {
		q->need_begin = 0;
		if (emit_branch(pt, q, 0, q->miss_ip, RB_IP_FLAG_BRANCH | RB_IP_FLAG_TRACE_BEGIN, q->clk_time))
			return q->err;
	}
	drop_unproven(q);       /* the loss starts after the last packet */
	if (q->psb_wait && emit_psb(pt, q))
		return q->err;
	if (q->pending) {   /* the branch's target is not known: it ends the trace */
		q->pending = 0;
		if (emit_branch(pt, q, q->pend_from, 0, q->pend_flags | RB_IP_FLAG_TRACE_END, q->pend_time))
			return q->err;
	}
	q->state = Q_SYNC;
	/* the gap ends where decoding resumes: the next sync point */
	int st = dec_sync_forward(pt, q->dec);
	uint64_t off2 = off;
	if (st >= 0) {
		off2 = q->dec_base + dec_offset(pt, q->dec, 1);
		q->psb_next = q->runs[q->cur_run - 1].buf_off + off2;   /* the PSBs skipped were not decoded */
		update_time(pt, q);
		q->status = st;
		q->state = Q_DECODE;
		q->need_begin = 1;
		if (set_thread(pt, q))
			return q->err;
	} else {
		off2 = q->runs[q->cur_run - 1].size;
		q->state = Q_NEXT_RUN;
	}
	return emit_gap(pt, q, reason, t0, q->time, off2 > off ? off2 - off : 0, detail);
}

static int resolve_pending(struct rb_pt *pt, struct ptq *q, uint64_t ip);
static inline int prove(struct rb_pt *pt, struct ptq *q);

/*
 * Events waiting for an address go out, in order: with @ip where it is not
 * known yet (@ip 0: tracing is not at an instruction). With @keep_pwre,
 * from a PWRE on they stay (an MWAIT may still claim it).
 */
static int flush_await(struct rb_pt *pt, struct ptq *q, uint64_t ip, int keep_pwre)
{
	int k = 0;
	for (int i = 0; i < q->nawait; i++)
		if (!q->await_ip[i]) {
			q->await[i].from = ip;
			q->await_ip[i] = 1;
		}
	while (k < q->nawait && !(keep_pwre && q->await[k].kind == RB_EV_POWER && q->await[k].power == RB_PWR_PWRE))
		if (emit(pt, q, &q->await[k++]))
			return q->err;
	memmove(q->await, q->await + k, (size_t)(q->nawait - k) * sizeof(q->await[0]));
	memmove(q->await_ip, q->await_ip + k, (size_t)(q->nawait - k));
	q->nawait -= k;
	if (!q->nawait)
		q->pwre_blocks = 0;
	return 0;
}

static int await_event(struct rb_pt *pt, struct ptq *q, const struct held *h)
{
	if (q->nawait == AWAIT_MAX && flush_await(pt, q, 0, 0))
		return q->err;
	q->await_ip[q->nawait] = 0;
	q->await[q->nawait++] = *h;
	return 0;
}

/* A PTWRITE or power event from libipt (perf's --itrace=w / p samples). */
static int power_event(struct rb_pt *pt, struct ptq *q, const struct pt_event *ev)
{
	struct held h = { .kind = RB_EV_POWER };
	uint64_t ip = 0;
	int has_ip = !ev->ip_suppressed;
	switch (ev->type) {
	case ptev_ptwrite:
		h.kind = RB_EV_PTWRITE;
		h.payload[0] = ev->variant.ptwrite.payload;
		/* libipt fills in the IP of a PTWRITE it bound without FUP: the config says whether FUPs come */
		h.payload[1] = pt->have_config ? !!(pt->config & 0x20) : has_ip;   /* fup_on_ptw */
		h.payload[2] = ev->variant.ptwrite.size;
		ip = ev->variant.ptwrite.ip;
		break;
	case ptev_cbr:
		if (ev->variant.cbr.ratio == q->cbr)
			return 0;
		q->cbr = ev->variant.cbr.ratio;
		h.power = RB_PWR_CBR;
		h.payload[0] = q->cbr;
		h.payload[1] = q->cbr * pt->cbr2khz;
		h.payload[2] = pt->max_nonturbo;
		has_ip = 0;
		break;
	case ptev_mwait:
		h.power = RB_PWR_MWAIT;
		h.payload[0] = ev->variant.mwait.hints & 0xff;   /* the fields perf keeps */
		h.payload[1] = ev->variant.mwait.ext & 3;
		ip = ev->variant.mwait.ip;
		break;
	case ptev_pwre:
		h.power = RB_PWR_PWRE;
		h.payload[0] = ev->variant.pwre.state;
		h.payload[1] = ev->variant.pwre.sub_state;
		h.payload[2] = ev->variant.pwre.hw;
		has_ip = 0;
		break;
	case ptev_exstop:
		h.power = RB_PWR_EXSTOP;
		h.payload[0] = has_ip;
		ip = ev->variant.exstop.ip;
		break;
	case ptev_pwrx:
		h.power = RB_PWR_PWRX;
		h.payload[0] = ev->variant.pwrx.deepest;
		h.payload[1] = ev->variant.pwrx.last;
		h.payload[2] = (ev->variant.pwrx.interrupt ? 1u : 0) | (ev->variant.pwrx.store ? 4u : 0) |
			       (ev->variant.pwrx.autonomous ? 8u : 0);
		has_ip = 0;
		break;
	default:
		return 0;
	}
	if (h.kind == RB_EV_PTWRITE ? !pt->env.ptwrites : !pt->env.pwr_events)
		return 0;
	/*
	 * The time of its packet: libipt dates some events itself; one without
	 * an IP it reports as it reads its packet (its time is the decoder's
	 * now); one bound to a FUP, once the blocks reached that IP (libipt has
	 * read past the FUP by then: the time of those blocks)
	 */
	uint64_t tsc = q->tsc;
	if (ev->has_tsc)
		tsc = ev->tsc;
	else if (!has_ip && dec_time(pt, q->dec, &tsc) < 0)
		tsc = q->tsc;
	h.time = tsc_to_perf(pt, tsc);
	/* a PWRE waiting just before this MWAIT belongs to its FUP, after it (perf's order) */
	struct held pwre;
	int with_pwre = h.power == RB_PWR_MWAIT && h.kind == RB_EV_POWER && has_ip && q->nawait &&
			q->await[q->nawait - 1].kind == RB_EV_POWER && q->await[q->nawait - 1].power == RB_PWR_PWRE;
	if (with_pwre)
		pwre = q->await[--q->nawait];
	if (h.power != RB_PWR_PWRE || h.kind != RB_EV_POWER)
		if (flush_await(pt, q, 0, 0))
			return q->err;
	if (!has_ip)
		return await_event(pt, q, &h);
	h.from = ip;
	if (emit(pt, q, &h))
		return q->err;
	if (with_pwre) {
		pwre.from = ip;
		pwre.time = h.time;
		return emit(pt, q, &pwre);
	}
	return 0;
}

/*
 * perf's "psb" events (--itrace=p): one per PSB+ decoded, dated by its TSC,
 * at its FUP's address (0 when tracing was off), with the PSB's offset in the
 * queue's data. libipt has no PSB event; the status updates it reports from a
 * PSB+ (CBR, and MODE.Exec once the blocks reached the FUP's address) show
 * that the decoder passed one, which is then found in the buffer
 * (q->psb_next). Its offset is perf's: the position in the queue's data,
 * its AUXTRACE payloads one after the other. As perf does, the event comes
 * when decoding has reached the FUP's address: after the branches before it.
 */
static uint64_t perf_pos_of(const struct ptq *q, uint64_t pos)
{
	for (size_t i = q->nr_chunks; i-- > 0;)
		if (q->chunks[i].buf_off <= pos)
			return q->chunks[i].perf_pos + (pos - q->chunks[i].buf_off);
	return pos;
}

static int emit_psb(struct rb_pt *pt, struct ptq *q)
{
	struct held h = { .kind = RB_EV_POWER, .power = RB_PWR_PSB, .from = q->psb.fup,
			  .time = q->psb.tsc ? tsc_to_perf(pt, q->psb.tsc) : q->time };
	h.payload[0] = perf_pos_of(q, q->psb_pos);
	q->psb_wait = 0;
	if (q->psb.fup && resolve_pending(pt, q, q->psb.fup))
		return q->err;
	return emit(pt, q, &h);
}

/* Before libipt's event @ev, or the block at @ip (@ev NULL): the PSBs passed. */
static int psb_passed(struct rb_pt *pt, struct ptq *q, const struct pt_event *ev, uint64_t ip)
{
	if (!pt->env.pwr_events)
		return 0;
	int at_fup = ev ? !ev->status_update || ev->type == ptev_exec_mode : ip == q->psb.fup;
	if (q->psb_wait && at_fup && emit_psb(pt, q))
		return q->err;
	if (!ev || q->psb_wait)
		return 0;
	const struct run *run = &q->runs[q->cur_run - 1];
	uint64_t end = run->buf_off + q->dec_base + dec_offset(pt, q->dec, 0);
	while (q->psb_next < end) {
		q->psb_pos = q->psb_next;
		q->psb_next = run->buf_off + next_psb(q->buf + run->buf_off, run->size, q->psb_pos - run->buf_off + PSB_LEN);
		scan_psb(q->buf + run->buf_off, run->size, q->psb_pos - run->buf_off, &q->psb);
		q->psb_wait = 1;
		/* the last one passed, with a FUP, is reported when the blocks reach its address */
		if (q->psb_next < end || !q->psb.fup || !ev->status_update || ev->type == ptev_exec_mode)
			if (emit_psb(pt, q))
				return q->err;
	}
	return 0;
}

static int on_event(struct rb_pt *pt, struct ptq *q, const struct pt_event *ev)
{
	if (psb_passed(pt, q, ev, 0))
		return q->err;
	uint64_t t_before = q->done_time > q->time ? q->time : q->done_time;
	if (ev->has_tsc && ev->tsc > q->tsc) {
		q->tsc = ev->tsc;
		q->time = tsc_to_perf(pt, ev->tsc);
	}
	update_clock(pt, q);       /* the decoder has read the event's packets */
	switch (ev->type) {
	case ptev_ptwrite: case ptev_cbr: case ptev_mwait: case ptev_pwre: case ptev_exstop: case ptev_pwrx:
		return power_event(pt, q, ev);
	case ptev_enabled: case ptev_disabled: case ptev_async_disabled: case ptev_async_branch: case ptev_overflow:
		/* what waits for an address gets the one tracing stands at (none where it starts) */
		if (q->nawait && flush_await(pt, q, ev->type == ptev_enabled || ev->type == ptev_overflow ? 0
						     : ev->type == ptev_async_branch ? ev->variant.async_branch.from
						     : ev->type == ptev_async_disabled ? ev->variant.async_disabled.at : 0, 0))
			return q->err;
		break;
	default:
		break;
	}
	switch (ev->type) {
	case ptev_enabled:
		q->need_begin = 0;
		if (q->pending) {
			q->pending = 0;
			if (emit_branch(pt, q, q->pend_from, 0, q->pend_flags | RB_IP_FLAG_TRACE_END, q->pend_time))
				return q->err;
		}
		return emit_branch(pt, q, 0, ev->variant.enabled.ip, RB_IP_FLAG_BRANCH | RB_IP_FLAG_TRACE_BEGIN,
				   q->clk_time);
	case ptev_disabled: {
		/* the branch that left the traced region: its target is in the packet, if not suppressed */
		uint64_t to = ev->ip_suppressed ? (q->pending ? direct_target(pt, q, q->pend_from) : 0)
						: ev->variant.disabled.ip;
		if (prove(pt, q))
			return q->err;
		if (!q->pending)
			return 0;
		q->pending = 0;
		return emit_branch(pt, q, q->pend_from, to, q->pend_flags | RB_IP_FLAG_TRACE_END, q->clk_time);
	}
	case ptev_async_disabled:
		/* the last branch went on to @at, where tracing stopped (the FUP proves the way there) */
		if (prove(pt, q))
			return q->err;
		if (resolve_pending(pt, q, ev->variant.async_disabled.at))
			return q->err;
		return emit_branch(pt, q, ev->variant.async_disabled.at, ev->ip_suppressed ? 0 : ev->variant.async_disabled.ip,
				   RB_IP_FLAG_BRANCH | RB_IP_FLAG_ASYNC | RB_IP_FLAG_TRACE_END, q->clk_time);
	case ptev_async_branch:
		if (prove(pt, q))
			return q->err;
		if (resolve_pending(pt, q, ev->variant.async_branch.from))
			return q->err;
		return emit_branch(pt, q, ev->variant.async_branch.from, ev->ip_suppressed ? 0 : ev->variant.async_branch.to,
				   RB_IP_FLAG_BRANCH | RB_IP_FLAG_CALL | RB_IP_FLAG_ASYNC | RB_IP_FLAG_INTERRUPT, q->clk_time);
	case ptev_overflow: {
		char detail[120];
		uint64_t off = q->dec_base + dec_offset(pt, q->dec, 0);
		snprintf(detail, sizeof(detail), "overflow packet at trace offset %#" PRIx64 " (queue %u): trace lost",
			 off, q->idx);
		q->pending = 0;
		drop_unproven(q);       /* the loss starts after the last packet */
		if (emit_gap(pt, q, "hardware overflow", t_before, q->time, 0, detail))
			return q->err;
		if (!ev->ip_suppressed) {
			q->need_begin = 0;
			return emit_branch(pt, q, 0, ev->variant.overflow.ip, RB_IP_FLAG_BRANCH | RB_IP_FLAG_TRACE_BEGIN,
					   q->clk_time);
		}
		q->need_begin = 1;
		return 0;
	}
	default:
		return 0;
	}
}

/* The branch that ended the previous block went to @ip. */
static int resolve_pending(struct rb_pt *pt, struct ptq *q, uint64_t ip)
{
	if (!q->pending)
		return 0;
	q->pending = 0;
	/* a conditional branch that fell through is not a branch taken */
	if ((q->pend_flags & RB_IP_FLAG_CONDITIONAL) && ip == q->pend_next)
		return 0;
	return emit_branch(pt, q, q->pend_from, ip, q->pend_flags, q->pend_time);
}

static int on_block(struct rb_pt *pt, struct ptq *q, const struct pt_block *b)
{
	if (q->blocks <= PWRE_WAIT)
		q->blocks++;
	if (q->psb_wait && psb_passed(pt, q, NULL, b->ip))
		return q->err;
	if (resolve_pending(pt, q, b->ip))
		return q->err;
	if (q->nawait && flush_await(pt, q, b->ip, ++q->pwre_blocks <= PWRE_WAIT))
		return q->err;
	if (!b->ninsn)
		return 0;
	if (q->need_begin) {
		q->need_begin = 0;
		if (emit_branch(pt, q, 0, b->ip, RB_IP_FLAG_BRANCH | RB_IP_FLAG_TRACE_BEGIN, q->clk_time))
			return q->err;
	}
	q->unproven += b->ninsn;
	q->since += b->ninsn;
	if (pt->insn_period) {          /* the instruction decoder: one instruction per block */
		if (!q->insn_left)
			q->insn_left = pt->insn_period;
		if (--q->insn_left == 0) {
			update_time(pt, q);
			struct held h = { .kind = RB_EV_INSTRUCTION, .from = b->ip, .time = q->clk_time,
					  .insns = pt->insn_period };
			if (emit(pt, q, &h))
				return q->err;
		}
	}
	unsigned len;
	int direct;
	uint32_t k = block_branch(pt, q, b, &len, &direct);
	if (k && !direct && prove(pt, q))
		return q->err;
	if (k) {
		q->pending = 1;
		q->pend_from = b->end_ip;
		q->pend_next = len ? b->end_ip + len : 0;
		q->pend_flags = k;
		q->pend_time = q->clk_time;
	}
	return 0;
}

/*
 * The time (TSC) the sideband must have reached before @q may go on: the
 * start of its run before it synchronizes; an event it holds; otherwise,
 * with kernel trace, libipt's time (which runs a little ahead of the blocks
 * it returns, having read their packets). User-only trace waits at events
 * only: its thread can change only while tracing is off.
 */
static uint64_t wait_tsc(const struct rb_pt *pt, const struct ptq *q)
{
	if (q->state == Q_SYNC)
		return q->tsc;
	if (q->state != Q_DECODE)
		return 0;
	if (q->have_stash)
		return q->stash.type == ptev_enabled && q->stash.has_tsc ? q->stash.tsc : 0;
	return pt->user_only ? 0 : q->tsc;
}

/*
 * Before @q goes on past a point whose time is @x (TSC): the thread changes
 * of its CPU dated before @x (and within the window, up to @limit), applied
 * as the session applied sideband to a queue it had run up to each record's
 * time. Returns 1 if @x is beyond the window (the queue stops there), -1 on
 * failure, else 0.
 */
static int catch_up_tl(struct rb_pt *pt, struct ptq *q, uint64_t x, uint64_t limit)
{
	while (q->tl_pos < q->tl_end) {
		const struct tl_ent *e = &pt->tl[q->tl_pos];
		if (x <= e->tsc || e->tsc > limit)
			break;
		q->tl_pos++;
		q->cpu_pid = e->pid;
		q->cpu_tid = e->tid;
		/* a decoding queue takes the thread at its next block; one that syncs, when it does */
		if (q->state == Q_DECODE && set_thread(pt, q))
			return -1;
	}
	return x > limit;
}

static inline int catch_up(struct rb_pt *pt, struct ptq *q, uint64_t x, uint64_t limit)
{
	if (q->tl_pos == q->tl_end || x <= pt->tl[q->tl_pos].tsc)     /* the common case: nothing due */
		return x > limit;
	return catch_up_tl(pt, q, x, limit);
}

/* Decode queue or lane @q up to the end of the window, @window (TSC). */
static int step(struct rb_pt *pt, struct ptq *q, uint64_t window)
{
	while (!q->err) {
		/* a lane looking for its start goes on to the next map change, then gives up */
		uint64_t limit = q->seek ? q->seek_limit : window;
		if (q->stopped)
			return 0;
		if (q->seek && q->dec && q->dec_base + dec_offset(pt, q->dec, 0) > q->seek_end)
			return 0;
		switch (q->state) {
		case Q_DONE:
			return 0;
		case Q_NEXT_RUN:
			if (q->is_lane)         /* the end of the run: the queue goes on when it has taken the lane */
				return 0;
			/* the data ended before the last branch's target: it is not known, so not reported */
			if (q->nawait && flush_await(pt, q, 0, 0))
				return q->err;
			if (q->psb_wait && emit_psb(pt, q))
				return q->err;
			q->pending = 0;
			drop_unproven(q);
			if (start_run(pt, q))
				return q->err;
			continue;
		case Q_SYNC: {
			int w = catch_up(pt, q, wait_tsc(pt, q), limit);
			if (w)
				return w < 0 ? q->err : 0;
			if (set_thread(pt, q))
				return q->err;
			int st = dec_sync_forward(pt, q->dec);
			if (st < 0) {
				if (st != -pte_eos) {
					char detail[160];
					snprintf(detail, sizeof(detail), "%s (queue %u, run %zu)", pt_errstr(pt_errcode(st)),
						 q->idx, q->cur_run - 1);
					if (emit_gap(pt, q, "decoder lost sync", q->time, q->time,
						     q->runs[q->cur_run - 1].size, detail))
						return q->err;
				}
				q->state = Q_NEXT_RUN;
				continue;
			}
			/* as perf: a run's first sync is not a trace begin (TIP.PGE is), a resync after an error is */
			q->status = st;
			q->state = Q_DECODE;
			update_time(pt, q);
			continue;
		}
		case Q_DECODE:
			break;
		}
		/*
		 * libipt's time runs a little ahead of the blocks it returns (it
		 * has read their packets): with kernel trace it is what says when
		 * to let sideband catch up; user-only trace waits at events only.
		 */
		int w = catch_up(pt, q, wait_tsc(pt, q), limit);
		if (w)
			return w < 0 ? q->err : 0;
		if (q->tsc > limit)          /* the end of the window (user-only trace does not wait above) */
			return 0;
		int st = q->status;
		while (q->have_stash || (st & pts_event_pending)) {
			if (!q->have_stash) {
				st = dec_event(pt, q->dec, &q->stash);
				if (st < 0)
					break;
				q->have_stash = 1;
				q->status = st;
			}
			/*
			 * Tracing that resumes (TIP.PGE) later than the sideband applied
			 * so far waits for it: after a context switch it must resume in
			 * the thread the switch record names.
			 */
			/* a disable or anything else belongs to the thread that ran until now */
			if (q->stash.type == ptev_enabled && q->stash.has_tsc && catch_up(pt, q, q->stash.tsc, limit)) {
				if (q->err)
					return q->err;
				if (q->stash.tsc > q->tsc) {
					q->tsc = q->stash.tsc;
					q->time = tsc_to_perf(pt, q->tsc);
				}
				return 0;
			}
			q->have_stash = 0;
			if (on_event(pt, q, &q->stash))
				return q->err;
			st = q->status;
		}
		if (st >= 0) {
			struct pt_block b;
			q->done_time = q->time;
			st = dec_next(pt, q->dec, &b);
			if (st >= 0) {
				update_time(pt, q);
				if (on_block(pt, q, &b))
					return q->err;
			} else if (b.ninsn) {
				/*
				 * The decoder stopped inside the block: its last instruction
				 * needed trace that is not there. None of its instructions
				 * is proven (see ptq.unproven).
				 */
				if (resolve_pending(pt, q, b.ip))
					return q->err;
			}
		}
		if (st < 0) {
			if (st == -pte_eos)
				q->state = Q_NEXT_RUN;
			else if (on_error(pt, q, st))
				return q->err;
			continue;
		}
		q->status = st;
	}
	return q->err;
}

/* ------------------------------------------------------------ windows */

/* The first map-changing record at or after @t (UINT64_MAX: none). */
static uint64_t next_bound(const struct rb_pt *pt, uint64_t t)
{
	size_t lo = 0, hi = pt->nr_bounds;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pt->bounds[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < pt->nr_bounds ? pt->bounds[lo] : UINT64_MAX;
}

/* Tasks (queues, lanes) taken one at a time, by whichever thread asks first, until none is left. */
static void decode_some(struct rb_pt *pt)
{
	struct pool *pl = &pt->pool;
	for (;;) {
		pthread_mutex_lock(&pl->mu);
		size_t i = pl->next++;
		uint64_t limit = pl->limit;
		pthread_mutex_unlock(&pl->mu);
		if (i >= pl->nr_tasks)
			return;
		step(pt, pl->tasks[i], limit);
	}
}

/* ------------------------------------------------------------ segments */

#define SEGMENT_BYTES (UINT64_C(64) << 10)   /* default segment size */

/* What a queue or lane decodes with (not its data, runs or events). */
static void free_decoding(const struct rb_pt *pt, struct ptq *q)
{
	if (q->dec)
		dec_free(pt, q->dec);
	q->dec = NULL;
	if (q->have_clk)
		ptclock_fini(&q->clk);
	q->have_clk = 0;
	while (q->images) {
		struct proc_image *p = q->images;
		q->images = p->next;
		pt_image_free(p->img);
		free(p->secs);
		free(p);
	}
	q->img = NULL;
	if (q->iscache)
		pt_iscache_free(q->iscache);
	q->iscache = NULL;
	free(q->held);
	q->held = NULL;
	free(q->kinds);
	q->kinds = NULL;
}

static void free_lane(const struct rb_pt *pt, struct ptq *l)
{
	free_decoding(pt, l);
	drop_items(l, l->out_head);
	free(l->out);
	free(l);
}

/*
 * Where a decoder started at the PSB at run offset @base (config @c) keeps
 * time as one that came from further back does: libipt's time calibration
 * takes the cycles between two MTCs (and TSCs in PSB+), so past two PSBs,
 * and two MTCs that followed CYCs when the trace has CYCs (UINT64_MAX if
 * not before @end). Whether times then agree is checked again at the
 * hand-over.
 */
static uint64_t warm_end(const struct pt_config *c, uint64_t base, uint64_t end)
{
	struct pt_packet_decoder *d = pt_pkt_alloc_decoder(c);
	uint64_t at = UINT64_MAX;
	int psbs = 0, mtcs = 0, good_mtcs = 0, cyc = 0, any_cyc = 0;
	if (!d)
		return end;
	if (pt_pkt_sync_set(d, 0) >= 0) {
		struct pt_packet k;
		uint64_t off = 0;
		while (base + off < end && pt_pkt_next(d, &k, sizeof(k)) >= 0) {
			if (k.type == ppt_psb) {
				psbs++;
			} else if (k.type == ppt_cyc) {
				cyc = any_cyc = 1;
			} else if (k.type == ppt_mtc) {
				good_mtcs += mtcs && cyc;
				mtcs++;
				cyc = 0;
			}
			if (pt_pkt_get_offset(d, &off) < 0)
				break;
			if (psbs >= 2 && (any_cyc ? good_mtcs >= 2 : mtcs >= 1)) {
				at = base + off;
				break;
			}
		}
	}
	pt_pkt_free_decoder(d);
	return at;
}

/* A lane for the segment of @q's run from the PSB at offset @base, whose TSC is @tsc. */
static struct ptq *new_lane(struct rb_pt *pt, const struct ptq *q, uint64_t base, uint64_t tsc)
{
	struct ptq *l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->idx = q->idx;
	l->cpu = q->cpu;
	l->tid = q->tid;
	l->buf = q->buf;
	l->len = q->len;
	l->chunks = q->chunks;           /* the queue's, as the data and runs: a lane frees none of them */
	l->nr_chunks = q->nr_chunks;
	l->runs = q->runs;
	l->nr_runs = q->nr_runs;
	l->cur_run = q->cur_run;
	l->spool_fd = -1;
	l->pid_now = l->tid_now = -1;
	/* the queue's place in the timeline is behind the lane's start: the lane catches up from there */
	l->cpu_pid = q->cpu_pid;
	l->cpu_tid = q->cpu_tid;
	l->tl_pos = q->tl_pos;
	l->tl_end = q->tl_end;
	l->is_lane = l->seek = 1;
	l->dec_base = base;
	const struct run *run = &q->runs[q->cur_run - 1];
	l->seek_end = base + pt->seg_size;
	struct pt_config c;
	run_config(pt, q, run, base, &c);
	l->seek_from = warm_end(&c, base, l->seek_end);
	l->tsc = tsc;
	l->time = tsc_to_perf(pt, tsc);
	uint64_t b = next_bound(pt, l->time);
	l->seek_limit = b == UINT64_MAX ? UINT64_MAX : perf_to_tsc(pt, b);
	l->iscache = pt_iscache_alloc("rbdecode");
	l->dec = l->iscache ? (pt->insn_dec ? (void *)pt_insn_alloc_decoder(&c) : (void *)pt_blk_alloc_decoder(&c))
			    : NULL;
	if (!l->dec || start_clock(pt, l, &c)) {
		free_lane(pt, l);
		return NULL;
	}
	l->state = Q_SYNC;
	l->psb_next = run->buf_off + base;
	return l;
}

/*
 * Lanes for the segments of @q's run that start within the window (their
 * first TSC up to @window) and ahead of the queue's decoder.
 */
static int add_lanes(struct rb_pt *pt, struct ptq *q, uint64_t window)
{
	if (!q->dec || !q->cur_run || (q->state != Q_SYNC && q->state != Q_DECODE))
		return 0;
	const struct run *run = &q->runs[q->cur_run - 1];
	struct ptq **tail = &q->lanes;
	while (*tail)
		tail = &(*tail)->next;
	for (;;) {
		if (!q->seg_next) {
			uint64_t from = q->seg_last + pt->seg_size;
			uint64_t b = from < run->size ? next_psb(q->buf + run->buf_off, run->size, from) : run->size;
			if (b >= run->size) {
				q->seg_next = UINT64_MAX;
				return 0;
			}
			q->seg_next = b;
			q->seg_next_tsc = psb_tsc(q->buf + run->buf_off, run->size, b);
		}
		if (q->seg_next == UINT64_MAX || q->seg_next_tsc > window)
			return 0;
		uint64_t at = q->seg_next;
		q->seg_last = at;
		q->seg_next = 0;
		if (q->dec_base + dec_offset(pt, q->dec, 0) >= at)
			continue;          /* the queue is there already */
		struct ptq *l = new_lane(pt, q, at, q->seg_next_tsc);
		if (!l)
			return q->err = -ENOMEM;
		/* the queue and lanes that have nothing to stop at stop at this one's start */
		for (struct ptq *o = q; o; o = o == q ? q->lanes : o->next)
			if (!o->target)
				o->target = l;
		*tail = l;
		tail = &l->next;
	}
}

/*
 * Queue @q takes over the lane whose start it stopped at: its events up to
 * there, the lane's after, the lane's decoder and state. The lane's times
 * are never earlier than the queue's (the decoder's time only grows).
 */
static int adopt(struct rb_pt *pt, struct ptq *q)
{
	struct ptq *l = q->lanes;
	drop_items(q, q->out_head + q->stop_keep);
	size_t n = l->stopped ? l->stop_keep : l->out_n - l->out_head;
	if (reserve_items(&q->out, &q->out_cap, q->out_n + n))
		return q->err = -ENOMEM;
	uint64_t t = q->stop_time;
	for (size_t j = 0; j < n; j++) {
		struct item *it = &q->out[q->out_n++];
		*it = l->out[l->out_head + j];
		l->out[l->out_head + j].gap = NULL;
		if (it->key < t)
			it->key = t;
		/* branches and instruction samples have the packet clock's times, which agreed at the hand-over */
		if (it->gap) {
			if (it->gap->g.time_start < t)
				it->gap->g.time_start = t;
			if (it->gap->g.time_end < t)
				it->gap->g.time_end = t;
		}
	}
	uint64_t cnt[4] = { q->stop_n[0] + (l->stopped ? l->stop_n[0] : l->n_insns),
			    q->stop_n[1] + (l->stopped ? l->stop_n[1] : l->n_branches),
			    q->stop_n[2] + (l->stopped ? l->stop_n[2] : l->n_insn_samples),
			    q->stop_n[3] + (l->stopped ? l->stop_n[3] : l->n_gaps) };
	uint64_t tsc = q->stop_tsc;
	struct ptq keep = *q;
	free_decoding(pt, q);
	drop_items(l, l->out_head);
	free(l->out);
	*q = *l;
	free(l);
	q->idx = keep.idx;
	q->cpu = keep.cpu;
	q->tid = keep.tid;
	q->buf = keep.buf;
	q->len = keep.len;
	q->cap = keep.cap;
	q->spool_fd = keep.spool_fd;
	q->map_len = keep.map_len;
	q->released = keep.released;
	q->chunks = keep.chunks;
	q->nr_chunks = keep.nr_chunks;
	q->cap_chunks = keep.cap_chunks;
	q->runs = keep.runs;
	q->nr_runs = keep.nr_runs;
	q->cur_run = keep.cur_run;
	q->out = keep.out;
	q->out_head = keep.out_head;
	q->out_n = keep.out_n;
	q->out_cap = keep.out_cap;
	q->tk = keep.tk;
	q->tk_head = keep.tk_head;
	q->tk_n = keep.tk_n;
	q->tk_cap = keep.tk_cap;
	q->seg_last = keep.seg_last;
	q->seg_next = keep.seg_next;
	q->seg_next_tsc = keep.seg_next_tsc;
	q->lanes = q->next;
	q->next = NULL;
	q->is_lane = 0;
	q->n_insns = cnt[0];
	q->n_branches = cnt[1];
	q->n_insn_samples = cnt[2];
	q->n_gaps = cnt[3];
	if (q->stopped) {
		q->stop_keep = q->out_n - q->out_head;
		memcpy(q->stop_n, cnt, sizeof(cnt));
		if (q->stop_tsc < tsc) {
			q->stop_tsc = tsc;
			q->stop_time = t;
		}
	}
	if (q->tsc < tsc) {
		q->tsc = tsc;
		q->time = t;
	}
	if (q->done_time < t)
		q->done_time = t;
	for (struct proc_image *p = q->images; p; p = p->next)
		p->q = q;
	pt->handoffs++;
	return 0;
}

/* After a window: lanes no decoder stops at any more go; a queue that stopped takes its lane over. */
static int settle(struct rb_pt *pt, struct ptq *q)
{
	for (;;) {
		while (q->lanes && q->lanes != q->target) {
			struct ptq *l = q->lanes;
			q->lanes = l->next;
			free_lane(pt, l);
		}
		if (!q->stopped || !q->lanes)
			return 0;
		if (adopt(pt, q))
			return q->err;
	}
}

/* The tasks of a phase: lanes looking for their start, or every queue and lane that decodes. */
static int make_tasks(struct rb_pt *pt, int seek)
{
	struct pool *pl = &pt->pool;
	pl->nr_tasks = 0;
	for (size_t i = 0; i < pt->nr_q; i++)
		for (struct ptq *q = &pt->q[i]; q; q = q == &pt->q[i] ? pt->q[i].lanes : q->next) {
			if (seek ? !q->seek : q->seek || q->no_start)
				continue;
			if (pl->nr_tasks == pl->cap_tasks) {
				size_t n = pl->cap_tasks ? 2 * pl->cap_tasks : 64;
				struct ptq **v = realloc(pl->tasks, n * sizeof(*v));
				if (!v)
					return -ENOMEM;
				pl->tasks = v;
				pl->cap_tasks = n;
			}
			pl->tasks[pl->nr_tasks++] = q;
		}
	return 0;
}

static void *pool_thread(void *arg)
{
	struct rb_pt *pt = arg;
	struct pool *pl = &pt->pool;
	uint64_t seen = 0;
	pthread_mutex_lock(&pl->mu);
	for (;;) {
		while (pl->gen == seen && !pl->quit)
			pthread_cond_wait(&pl->go, &pl->mu);
		if (pl->quit)
			break;
		seen = pl->gen;
		pthread_mutex_unlock(&pl->mu);
		decode_some(pt);
		pthread_mutex_lock(&pl->mu);
		if (--pl->busy == 0)
			pthread_cond_signal(&pl->done);
	}
	pthread_mutex_unlock(&pl->mu);
	return NULL;
}

/* A spooled queue's pages the decoder is done with go back to the kernel (see spool_payload). */
static void release_decoded(struct rb_pt *pt, struct ptq *q)
{
	if (!q->map_len)
		return;
	uint64_t pos = q->len;
	if (q->state != Q_DONE) {   /* the decoder's position, else the start of the run it takes next */
		if (q->dec && q->cur_run)
			pos = q->runs[q->cur_run - 1].buf_off + q->dec_base + dec_offset(pt, q->dec, 0);
		else if (q->cur_run < q->nr_runs)
			pos = q->runs[q->cur_run].buf_off;
		else if (q->cur_run)
			pos = q->runs[q->cur_run - 1].buf_off;
		pos = pos > (UINT64_C(1) << 16) ? pos - (UINT64_C(1) << 16) : 0;
	}
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t upto = pos / page * page;
	if (upto > q->released) {
		madvise(q->buf + q->released, (size_t)(upto - q->released), MADV_DONTNEED);
		q->released = upto;
	}
}

/* The pool's threads start on the tasks, decoding up to TSC @limit (join_tasks waits for them). */
static void launch_tasks(struct rb_pt *pt, uint64_t limit)
{
	struct pool *pl = &pt->pool;
	pthread_mutex_lock(&pl->mu);
	pl->limit = limit;
	pl->next = 0;
	pl->busy = pl->n;
	pl->gen++;
	pthread_cond_broadcast(&pl->go);
	pthread_mutex_unlock(&pl->mu);
}

/* This thread decodes the tasks the pool has not taken, then waits until all are done. */
static void join_tasks(struct rb_pt *pt)
{
	struct pool *pl = &pt->pool;
	decode_some(pt);
	pthread_mutex_lock(&pl->mu);
	while (pl->busy)
		pthread_cond_wait(&pl->done, &pl->mu);
	pthread_mutex_unlock(&pl->mu);
}

/* The tasks decoded up to TSC @limit: by this thread alone, or with the pool's. */
static void run_tasks(struct rb_pt *pt, uint64_t limit)
{
	struct pool *pl = &pt->pool;
	if (!pl->n) {
		for (size_t i = 0; i < pl->nr_tasks; i++)
			step(pt, pl->tasks[i], limit);
	} else {
		launch_tasks(pt, limit);
		join_tasks(pt);
	}
}

/*
 * Every queue decoded up to TSC @limit: prepare_window, run_tasks (or
 * launch_tasks ... join_tasks), finish_window. With segments, in two phases:
 * the window's new lanes find their starts (everything before a lane's start
 * is its predecessor's: prepare_window), then queues and lanes decode, each
 * stopping at the start of the lane after it, and queues take over the lanes
 * they reached (finish_window).
 */
static int prepare_window(struct rb_pt *pt, uint64_t limit)
{
	struct pool *pl = &pt->pool;
	if (pt->seg_size) {
		for (size_t i = 0; i < pt->nr_q; i++)
			if (add_lanes(pt, &pt->q[i], limit) && !pt->failed)
				pt->failed = pt->q[i].err;
		if (pt->failed)
			return pt->failed;
		if (make_tasks(pt, 1))
			return pt->failed = -ENOMEM;
		pt->phase_seek = 1;
		run_tasks(pt, 0);
		pt->phase_seek = 0;
		for (size_t i = 0; i < pl->nr_tasks; i++)
			if (pl->tasks[i]->seek) {
				pl->tasks[i]->seek = 0;
				pl->tasks[i]->no_start = 1;
			}
	}
	if (make_tasks(pt, 0))
		return pt->failed = -ENOMEM;
	return 0;
}

static int finish_window(struct rb_pt *pt, uint64_t *made)
{
	for (size_t i = 0; i < pt->nr_q; i++) {
		struct ptq *q = &pt->q[i];
		for (struct ptq *l = q->lanes; l; l = l->next)
			if (l->err && !pt->failed)
				pt->failed = l->err;
		if (settle(pt, q) && !pt->failed)
			pt->failed = q->err;
		struct rb_session_stats *st = pt->env.st;
		st->instructions += q->n_insns;
		st->branches += q->n_branches;
		st->insn_samples += q->n_insn_samples;
		*made += q->n_branches + q->n_insn_samples + q->n_gaps;
		q->n_insns = q->n_branches = q->n_insn_samples = q->n_gaps = 0;
		if (q->err && !pt->failed)
			pt->failed = q->err;
		release_decoded(pt, q);
	}
	return pt->failed;
}

static void resolve(struct rb_pt *pt, struct rb_thread *t, uint64_t ip, struct rb_addr_loc *al)
{
	if (!ip || !t) {
		memset(al, 0, sizeof(*al));
		al->addr = ip;
		return;
	}
	unsigned cpumode = ip >= rb_machine_kernel_start(pt->env.m) ? 1 : 2;
	rb_machine_resolve(pt->env.m, t, cpumode, ip, al);
	if (pt->env.perf_export)
		al->sym = rb_machine_export_sym(pt->env.m, al, al->addr);
}

/* A decoded event to the session's sink (this thread only: the machine is the session's). */
static int take(struct rb_pt *pt, const struct ptq *q, struct item *it)
{
	if (it->h.kind == ITEM_GAP) {
		int rc = pt->env.gap(pt->env.ctx, &it->gap->g);
		free(it->gap);
		it->gap = NULL;
		return rc;
	}
	const struct held *h = &it->h;
	struct rb_trace_ev b = { .kind = h->kind, .time = h->time, .cpu = q->cpu, .queue = q->idx,
				 .source = "intel_pt", .mods = pt->mods, .from = h->from, .to = h->to, .flags = h->flags,
				 .insn_count = h->insns, .power = h->power,
				 .payload = { h->payload[0], h->payload[1], h->payload[2] } };
	b.thread = rb_machine_thread(pt->env.m, it->pid, it->tid, 1);
	if (!b.thread)
		return -ENOMEM;
	b.main_thread = rb_machine_main_thread(pt->env.m, b.thread);
	b.comm = rb_machine_sample_comm(pt->env.m, b.thread);
	resolve(pt, b.thread, h->from, &b.from_al);
	if (h->kind == RB_EV_BRANCH)
		resolve(pt, b.thread, h->to, &b.to_al);
	return pt->env.trace(pt->env.ctx, &b);
}

/*
 * The events of finished windows (tk) with keys up to @key, merged across
 * queues in (key, queue index) order. While the pool decodes the next window
 * (pt->overlap), the machine is shared with its threads: taken under
 * pt->mlock, let go every TAKE_LOCKED events for their image reads.
 */
#define TAKE_LOCKED 64
static int take_until(struct rb_pt *pt, uint64_t key)
{
	unsigned locked = 0;
	int rc = 0;
	while (!rc) {
		struct ptq *best = NULL, *next = NULL;    /* the two first queues in that order */
		for (size_t i = 0; i < pt->nr_q; i++) {
			struct ptq *q = &pt->q[i];
			if (q->tk_head == q->tk_n || q->tk[q->tk_head].key > key)
				continue;
			uint64_t k = q->tk[q->tk_head].key;
			if (!best || k < best->tk[best->tk_head].key) {
				next = best;
				best = q;
			} else if (!next || k < next->tk[next->tk_head].key) {
				next = q;
			}
		}
		if (!best)
			break;
		/* this queue's events go first up to the next queue's (on a tie, the lower index first) */
		uint64_t until = next ? next->tk[next->tk_head].key : key;
		int tie_ok = !next || best->idx < next->idx;
		while (best->tk_head < best->tk_n) {
			struct item *it = &best->tk[best->tk_head];
			if (it->key > key || it->key > until || (it->key == until && next && !tie_ok))
				break;
			best->tk_head++;
			if (pt->overlap && !locked++)
				pthread_mutex_lock(&pt->mlock);
			rc = take(pt, best, it);
			if (locked && (locked == TAKE_LOCKED || rc)) {
				pthread_mutex_unlock(&pt->mlock);
				locked = 0;
			}
			if (rc)
				break;
		}
		if (best->tk_head == best->tk_n)
			best->tk_head = best->tk_n = 0;
	}
	if (locked)
		pthread_mutex_unlock(&pt->mlock);
	return rc ? (pt->failed = rc) : 0;
}

/* A finished window's events join those the session has still to take (tk); out is empty again. */
static int move_out(struct ptq *q)
{
	size_t n = q->out_n - q->out_head;
	if (q->tk_head == q->tk_n) {            /* all taken: the arrays change places */
		struct item *v = q->tk;
		size_t cap = q->tk_cap;
		q->tk = q->out;
		q->tk_head = q->out_head;
		q->tk_n = q->out_n;
		q->tk_cap = q->out_cap;
		q->out = v;
		q->out_cap = cap;
	} else if (n) {
		if (reserve_items(&q->tk, &q->tk_cap, q->tk_n + n))
			return -ENOMEM;
		memcpy(q->tk + q->tk_n, q->out + q->out_head, n * sizeof(*q->out));
		q->tk_n += n;
	}
	q->out_head = q->out_n = 0;
	return 0;
}

static int all_done(const struct rb_pt *pt)
{
	for (size_t i = 0; i < pt->nr_q; i++)
		if (pt->q[i].state != Q_DONE && !pt->q[i].err)
			return 0;
	return 1;
}

/*
 * Where the next window ends: about @delta after the last one (or where the
 * queues are, when all are further on), never beyond the next record that
 * changes memory maps, since the images are read from the session's machine
 * as it is now. Everything it depends on follows from the recording, so the
 * windows are the same however many threads decode.
 */
static uint64_t next_window_end(const struct rb_pt *pt, uint64_t time, int *jumped)
{
	uint64_t w = pt->win_end > UINT64_MAX - pt->delta ? UINT64_MAX : pt->win_end + pt->delta;
	uint64_t lo = UINT64_MAX;
	for (size_t i = 0; i < pt->nr_q; i++)
		if (pt->q[i].state != Q_DONE && pt->q[i].time < lo)
			lo = pt->q[i].time;
	*jumped = lo != UINT64_MAX && lo > w;
	if (*jumped)
		w = lo;
	uint64_t b = next_bound(pt, time);
	return w < b ? w : b;
}

#define WINDOW_EVENTS 65536     /* events a window should produce: what is held in memory */

int rb_pt_run_until(struct rb_pt *pt, uint64_t time)
{
	if (pt->failed)
		return pt->failed;
	if (pt->timeless && time != UINT64_MAX)
		return 0;        /* no times: the trace is decoded after the sideband */
	/*
	 * With a pool, the session takes a window's events (symbols, sink) while
	 * the pool decodes the next one: windows never cross a map change and the
	 * sideband is applied between calls, so both see the same machine (under
	 * pt->mlock). The windows, and what is taken up to which key, are the same
	 * as one window after the other, and so is the output. One thing take()
	 * does to the machine comes later than before: rb_machine_thread(create)
	 * for an event's thread now follows the next window's decoding. Decoding
	 * reads threads only to choose a process image (set_thread, read_memory),
	 * and a thread take() would create or give a pid is one whose queue
	 * already decodes as that pid (per CPU: the timeline's pid; per thread:
	 * the queue's tid as its pid until the machine knows better), so the
	 * images chosen are the same.
	 */
	int have = 0;            /* a finished window's events wait in tk, to be taken up to @key */
	uint64_t key = 0;
	while (pt->win_end < time && !all_done(pt)) {
		int jumped;
		uint64_t w = next_window_end(pt, time, &jumped);
		uint64_t made = 0;      /* events decoded (delivered or not): the window's work */
		uint64_t limit = perf_to_tsc(pt, w);
		if (prepare_window(pt, limit))
			return pt->failed;
		int rc = 0;
		if (have && pt->pool.n) {
			launch_tasks(pt, limit);
			pt->overlap = 1;
			rc = take_until(pt, key);
			pt->overlap = 0;
			join_tasks(pt);
		} else {
			run_tasks(pt, limit);
		}
		if (rc || finish_window(pt, &made))
			return pt->failed;
		for (size_t i = 0; i < pt->nr_q; i++)
			if (move_out(&pt->q[i]))
				return pt->failed = -ENOMEM;
		pt->win_end = w;
		key = w < time ? w : time;
		have = 1;
		if (!pt->pool.n && take_until(pt, key))
			return pt->failed;
		/* the next window as long as makes about WINDOW_EVENTS events at this one's rate */
		uint64_t d = pt->delta;
		if (made)
			d = (uint64_t)((double)d * (double)pt->win_events / (double)made);
		else if (!jumped)
			d *= 2;
		if (d < pt->delta / 8)
			d = pt->delta / 8;
		if (d > pt->delta * 2)
			d = pt->delta * 2;
		pt->delta = d < 1000 ? 1000 : d > (UINT64_C(1) << 50) ? UINT64_C(1) << 50 : d;
	}
	return take_until(pt, time);
}

int rb_pt_has_queue(const struct rb_pt *pt, uint32_t idx)
{
	return idx < pt->nr_q && pt->q[idx].nr_chunks > 0;
}

int rb_pt_owns_aux(const struct rb_pt *pt, int32_t cpu, int32_t tid)
{
	for (size_t i = 0; i < pt->nr_q; i++)
		if (pt->q[i].nr_chunks && rb_pt_owns(pt, &pt->q[i], cpu, tid))
			return 1;
	return 0;
}

/* Thread changes come from the timeline the gathering pass built; an exec drops images. */
void rb_pt_sideband(struct rb_pt *pt, const struct pd_event *ev)
{
	if (ev->type == PD_RECORD_COMM && (ev->misc & PD_MISC_COMM_EXEC))   /* a new program: a new memory image */
		drop_image(pt, (int32_t)ev->u.comm.pid);
}

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
static void setup_timelines(struct rb_pt *pt)
{
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
}

static int start_pool(struct rb_pt *pt, int jobs)
{
	struct pool *pl = &pt->pool;
	if (jobs <= 1)
		return 0;
	if (jobs > 256)
		jobs = 256;
	pl->th = calloc((size_t)jobs - 1, sizeof(*pl->th));
	if (!pl->th)
		return PD_ERR_NOMEM;
	pthread_mutex_init(&pl->mu, NULL);
	pthread_cond_init(&pl->go, NULL);
	pthread_cond_init(&pl->done, NULL);
	for (int i = 0; i < jobs - 1; i++) {
		if (pthread_create(&pl->th[i], NULL, pool_thread, pt))
			break;       /* fewer threads: the same output, later */
		pl->n++;
	}
	return 0;
}

int rb_pt_open(struct rb_pt **out, const char *path, const struct rb_pt_env *env, struct pd_error *err)
{
	*out = NULL;
	struct rb_pt *pt = calloc(1, sizeof(*pt));
	if (!pt)
		return PD_ERR_NOMEM;
	pt->env = *env;
	pt->insn_period = env->insn_period;
	pt->insn_dec = env->insn_period != 0;
	/* 100 us to begin with; RBDECODE_PT_WINDOW (ns) lets tests show that windows do not change the output */
	const char *w = getenv("RBDECODE_PT_WINDOW");
	pt->delta = w && strtoull(w, NULL, 10) >= 1000 ? strtoull(w, NULL, 10) : 100000;
	pthread_mutex_init(&pt->mlock, NULL);
	int rc = gather(pt, path, err);
	if (rc <= 0) {
		rb_pt_free(pt);
		return rc;
	}
	/*
	 * Erratum SKL014 (a direct jump or call out of a filter region gives
	 * TIP.PGD without IP): libipt 2.0's block decoder, ending blocks at
	 * jumps as ours do, binds such a TIP.PGD to the first direct jump inside
	 * the region on the way; its instruction decoder finds the jump or call
	 * that leaves. Filtered traces of those CPUs take the instruction decoder.
	 */
	struct pt_errata er;
	struct pt_conf_addr_filter af;
	memset(&af, 0, sizeof(af));
	if (pt->have_cpu && pt_cpu_errata(&er, &pt->cpu) >= 0 && er.skl014 && rb_pt_filters_config(&pt->filt, &af))
		pt->insn_dec = 1;
	if (pt->nr_priv > P_TIME_ZERO && pt->priv[P_TIME_MULT] &&
	    (pt->nr_priv <= P_CAP_USER_TIME_ZERO || pt->priv[P_CAP_USER_TIME_ZERO])) {
		pt->time_shift = pt->priv[P_TIME_SHIFT];
		pt->time_mult = pt->priv[P_TIME_MULT];
		pt->time_zero = pt->priv[P_TIME_ZERO];
	}
	if (pt->time_shift > 63)
		pt->time_shift = 63;
	if (pt->time_mult) {
		/* the TSC frequency; the max non-turbo ratio is TSC / 100 MHz when not recorded (as perf) */
		uint64_t ns = 1000000000, quot = ns / pt->time_mult, rem = ns % pt->time_mult;
		uint64_t tsc_hz = (quot << pt->time_shift) + ((rem << pt->time_shift) / pt->time_mult);
		pt->max_nonturbo = pt->nr_priv > P_MAX_NONTURBO_RATIO ? (unsigned)pt->priv[P_MAX_NONTURBO_RATIO] : 0;
		if (!pt->max_nonturbo)
			pt->max_nonturbo = (unsigned)((tsc_hz + 50000000) / 100000000);
		pt->cbr2khz = pt->max_nonturbo ? tsc_hz / pt->max_nonturbo / 1000 : 0;
	}
	if (!pt->time_mult || (pt->have_config && pt->nr_priv > P_TSC_BIT && !(pt->config & pt->priv[P_TSC_BIT])))
		pt->timeless = 1;
	/*
	 * A section cache per queue: libipt shares a cached section's block
	 * cache among the decoders that use it, and with several threads that
	 * made corrupt traces decode differently from run to run.
	 */
	int nomem = 0;
	for (size_t i = 0; i < pt->nr_q; i++)
		if (pt->q[i].nr_runs && !(pt->q[i].iscache = pt_iscache_alloc("rbdecode")))
			nomem = 1;
	if (nomem || start_pool(pt, env->jobs) < 0) {
		rb_pt_free(pt);
		return PD_ERR_NOMEM;
	}
	setup_timelines(pt);
	/*
	 * Segments: RBDECODE_PT_SEGMENT bytes (0: none), by default only with
	 * threads to decode them on: a lane's warm-up is work done twice, and
	 * one thread gives the same output without (what a queue takes over is
	 * what it would have decoded). With threads, windows are made to hold
	 * about a segment's worth of events per thread (a segment makes fewer
	 * events than it has bytes), so that there is work for each.
	 */
	const char *seg = getenv("RBDECODE_PT_SEGMENT");
	pt->seg_size = seg && *seg ? strtoull(seg, NULL, 10) : env->jobs > 1 ? SEGMENT_BYTES : 0;
	if (pt->insn_period || pt->timeless)
		pt->seg_size = 0;
	if (pt->seg_size && pt->seg_size < 256)
		pt->seg_size = 256;
	pt->win_events = WINDOW_EVENTS;
	if (pt->seg_size && env->jobs > 1 && pt->win_events < (uint64_t)env->jobs * pt->seg_size)
		pt->win_events = (uint64_t)env->jobs * pt->seg_size;
	for (size_t i = 0; i < pt->nr_q; i++)
		pt->q[i].state = pt->q[i].nr_runs ? Q_NEXT_RUN : Q_DONE;
	*out = pt;
	return 1;
}

void rb_pt_free(struct rb_pt *pt)
{
	if (!pt)
		return;
	struct pool *pl = &pt->pool;
	if (pl->n) {
		pthread_mutex_lock(&pl->mu);
		pl->quit = 1;
		pthread_cond_broadcast(&pl->go);
		pthread_mutex_unlock(&pl->mu);
		for (int i = 0; i < pl->n; i++)
			pthread_join(pl->th[i], NULL);
	}
	if (pl->th) {
		pthread_mutex_destroy(&pl->mu);
		pthread_cond_destroy(&pl->go);
		pthread_cond_destroy(&pl->done);
	}
	if (getenv("RBDECODE_PT_DEBUG"))
		fprintf(stderr, "rbdecode: intel_pt: %" PRIu64 " lanes taken over\n", pt->handoffs);
	free(pl->th);
	free(pl->tasks);
	for (size_t i = 0; i < pt->nr_q; i++) {
		struct ptq *q = &pt->q[i];
		while (q->lanes) {
			struct ptq *l = q->lanes;
			q->lanes = l->next;
			free_lane(pt, l);
		}
		free_decoding(pt, q);
		if (q->map_len)
			munmap(q->buf, (size_t)q->map_len);
		else
			free(q->buf);
		if (q->spool_fd >= 0)
			close(q->spool_fd);
		free(q->chunks);
		free(q->runs);
		drop_items(q, q->out_head);
		free(q->out);
		free_gaps(q->tk, q->tk_head, q->tk_n);
		free(q->tk);
	}
	free(pt->q);
	free(pt->breaks);
	free(pt->tl);
	free(pt->bounds);
	free(pt->bounce);

	pthread_mutex_destroy(&pt->mlock);
	free(pt);
}

/* ------------------------------------------------------------ packet dump */

/* perf's description of a packet (intel_pt_pkt_desc), from libipt's decode and the raw bytes. */
static void packet_desc(const struct pt_packet *p, const uint8_t *raw, char *buf, size_t n)
{
	const char *ipn = NULL;
	switch (p->type) {
	case ppt_psb: snprintf(buf, n, "PSB"); return;
	case ppt_psbend: snprintf(buf, n, "PSBEND"); return;
	case ppt_pad: snprintf(buf, n, "PAD"); return;
	case ppt_ovf: snprintf(buf, n, "OVF"); return;
	case ppt_stop: snprintf(buf, n, "TraceSTOP"); return;
	case ppt_fup: ipn = "FUP"; break;
	case ppt_tip: ipn = "TIP"; break;
	case ppt_tip_pge: ipn = "TIP.PGE"; break;
	case ppt_tip_pgd: ipn = "TIP.PGD"; break;
	case ppt_tnt_8:
	case ppt_tnt_64: {
		char bits[65];
		unsigned k = p->payload.tnt.bit_size > 64 ? 64 : p->payload.tnt.bit_size;
		for (unsigned i = 0; i < k; i++)
			bits[i] = (p->payload.tnt.payload >> (k - 1 - i)) & 1 ? 'T' : 'N';
		bits[k] = 0;
		snprintf(buf, n, "TNT %s (%u)", bits, k);
		return;
	}
	case ppt_mode:
		if (p->payload.mode.leaf == pt_mol_exec) {
			unsigned b = raw[1];
			snprintf(buf, n, "MODE.Exec IF:%u %d", (b >> 2) & 1, (b & 1) ? 64 : (b & 2) ? 32 : 16);
		} else {
			snprintf(buf, n, "MODE.TSX TXAbort:%u InTX:%u", p->payload.mode.bits.tsx.abrt,
				 p->payload.mode.bits.tsx.intx);
		}
		return;
	case ppt_pip:
		/* perf shows the payload without libipt's shift into CR3 position */
		snprintf(buf, n, "PIP 0x%" PRIx64 " (NR=%u)", p->payload.pip.cr3 >> 5, p->payload.pip.nr);
		return;
	case ppt_vmcs: snprintf(buf, n, "VMCS 0x%" PRIx64, p->payload.vmcs.base); return;
	case ppt_cbr: snprintf(buf, n, "CBR 0x%x", p->payload.cbr.ratio); return;
	case ppt_tsc: snprintf(buf, n, "TSC 0x%" PRIx64, p->payload.tsc.tsc); return;
	case ppt_tma: snprintf(buf, n, "TMA CTC 0x%x FC 0x%x", p->payload.tma.ctc, p->payload.tma.fc); return;
	case ppt_mtc: snprintf(buf, n, "MTC 0x%x", p->payload.mtc.ctc); return;
	case ppt_cyc: snprintf(buf, n, "CYC 0x%" PRIx64, p->payload.cyc.value); return;
	case ppt_mnt: snprintf(buf, n, "MNT 0x%" PRIx64, p->payload.mnt.payload); return;
	case ppt_exstop: snprintf(buf, n, "EXSTOP IP:%u", p->payload.exstop.ip); return;
	case ppt_mwait:
		snprintf(buf, n, "MWAIT 0x%" PRIx64 " Hints 0x%x Extensions 0x%x",
			 (uint64_t)p->payload.mwait.hints | (uint64_t)p->payload.mwait.ext << 32,
			 p->payload.mwait.hints, p->payload.mwait.ext);
		return;
	case ppt_pwre:
		snprintf(buf, n, "PWRE HW:%u CState:%u Sub-CState:%u", p->payload.pwre.hw, p->payload.pwre.state,
			 p->payload.pwre.sub_state);
		return;
	case ppt_pwrx:
		snprintf(buf, n, "PWRX Last CState:%u Deepest CState:%u", p->payload.pwrx.last, p->payload.pwrx.deepest);
		return;
	case ppt_ptw:
		snprintf(buf, n, "PTWRITE IP:%u 0x%" PRIx64, p->payload.ptw.ip, p->payload.ptw.payload);
		return;
	default:
		snprintf(buf, n, "packet type %d", (int)p->type);
		return;
	}
	if (p->payload.ip.ipc == pt_ipc_suppressed)
		snprintf(buf, n, "%s no ip", ipn);
	else
		snprintf(buf, n, "%s 0x%" PRIx64, ipn, p->payload.ip.ip);
}

static void dump_line(FILE *out, uint64_t off, const uint8_t *b, size_t len, const char *desc)
{
	fprintf(out, ".  %08" PRIx64 ":  ", off);
	for (size_t i = 0; i < 16; i++) {
		if (i < len)
			fprintf(out, "%02x ", b[i]);
		else
			fputs("   ", out);
	}
	fprintf(out, "%s\n", desc);
}

/* One AUXTRACE payload, from its first byte, as perf report -D shows it. */
static int dump_buffer(const uint8_t *buf, size_t len, FILE *out)
{
	struct pt_config c;
	pt_config_init(&c);
	c.begin = (uint8_t *)buf;
	c.end = (uint8_t *)buf + len;
	struct pt_packet_decoder *d = pt_pkt_alloc_decoder(&c);
	if (!d)
		return PD_ERR_NOMEM;
	fprintf(out, ". ... Intel Processor Trace data: size %zu bytes\n", len);
	uint64_t off = 0;
	while (off < len) {
		struct pt_packet p;
		int sz = pt_pkt_sync_set(d, off) < 0 ? -pte_eos : pt_pkt_next(d, &p, sizeof(p));
		if (sz <= 0) {
			dump_line(out, off, buf + off, 1, "Bad packet!");
			off++;
			continue;
		}
		/* perf counts zero bytes after a packet into it, up to 8 bytes in all */
		size_t k = (size_t)sz;
		while (k < 8 && off + k < len && buf[off + k] == 0)
			k++;
		char desc[128];
		packet_desc(&p, buf + off, desc, sizeof(desc));
		dump_line(out, off, buf + off, k, desc);
		off += k;
	}
	pt_pkt_free_decoder(d);
	return ferror(out) ? PD_ERR_IO : 0;
}

int rb_pt_dump_packets(const char *path, long queue, FILE *out, struct pd_error *err)
{
	struct pd_reader *r;
	int rc = pd_reader_open(&r, path, NULL, err);
	if (rc < 0)
		return rc;
	struct pd_record rec;
	int is_pt = 0, more, found = 0, dumped = 0;
	uint8_t *buf = NULL;
	while ((more = pd_reader_next(r, &rec, err)) == 1) {
		struct pd_event ev;
		if ((rec.type != PD_RECORD_AUXTRACE_INFO && rec.type != PD_RECORD_AUXTRACE) ||
		    pd_event_parse(r, &rec, &ev, NULL) < 0)
			continue;
		if (rec.type == PD_RECORD_AUXTRACE_INFO) {
			is_pt = ev.u.auxtrace_info.type == PT_AUXTRACE_TYPE;
			found |= is_pt;
			continue;
		}
		if (!is_pt || ev.u.auxtrace.size > ((uint64_t)1 << 32) || (queue >= 0 && ev.u.auxtrace.idx != (uint32_t)queue))
			continue;
		dumped = 1;
		uint8_t *b = realloc(buf, (size_t)ev.u.auxtrace.size + 1);
		if (!b) {
			rc = PD_ERR_NOMEM;
			break;
		}
		buf = b;
		int64_t got = pd_reader_read_payload(r, buf, (size_t)ev.u.auxtrace.size, err);
		if (got < 0) {
			rc = (int)got;
			break;
		}
		fprintf(out, "\n%#" PRIx64 " [%#" PRIx64 "]: PERF_RECORD_AUXTRACE size: %#" PRIx64 "  offset: %#" PRIx64
			"  ref: %#" PRIx64 "  idx: %u  tid: %d  cpu: %d\n", rec.offset, (uint64_t)rec.size,
			ev.u.auxtrace.size, ev.u.auxtrace.offset, ev.u.auxtrace.reference, ev.u.auxtrace.idx,
			(int)ev.u.auxtrace.tid, (int)ev.u.auxtrace.cpu);
		if ((rc = dump_buffer(buf, (size_t)got, out)) < 0)
			break;
	}
	free(buf);
	pd_reader_free(r);
	if (rc < 0)
		return rc;
	if (more < 0)
		return more;
	return !found ? 0 : dumped || queue < 0 ? 1 : 2;
}
