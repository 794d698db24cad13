/*
 * pt_internal.h - what the files of the Intel PT decoder share: the
 * decoder (struct rb_pt), its queues and lanes (struct ptq) with their
 * runs, events and hand-over points, TSC to perf time and back, and the
 * functions one file calls in another, by the file that has them. The
 * overview is at the top of intel_pt.c. Not for use outside this folder.
 */
#ifndef RB_PT_INTERNAL_H
#define RB_PT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <intel-pt.h>
#include "intel_pt.h"
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
	uint64_t buf_off, size, aux_offset, reference;
	uint64_t file_offset;            /* of its first byte in buf (after a snapshot's overlap is cut off) */
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
 * A point where one decoder can hand over to another (see "Segments" in pt_segment.c):
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

enum { ITEM_GAP = 100, ITEM_SEEK };   /* ITEM_SEEK: see adopt (pt_segment.c) */

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

struct pt_sync {                  /* an entry of the trace index: a PSB */
	uint64_t time, pos, file_offset, ip;
	uint32_t queue;
	int32_t cpu, tid;
};

struct ix_scan {                  /* a queue's part of the trace index (pt_index.c): its next PSB */
	struct pt_sync next;             /* that PSB's entry, if have */
	int have;
	size_t run, tl0;                 /* the run scanned; the queue's first timeline entry */
	uint64_t at, kept;               /* where the scan goes on in the run; its pages resident from kept */
};

struct psb_info {                 /* what a PSB+ says */
	uint64_t tsc;                    /* its TSC (0: none) */
	uint64_t fup;                    /* its FUP: where execution stood (0: none, tracing was off) */
	int complete;                    /* PSBEND came before the data ended */
};

#define AWAIT_MAX 8
#define PWRE_WAIT 16                 /* blocks to the MWAIT's FUP: a PWRE without MWAIT is not held longer */

struct ptq {                       /* in cache lines of its own: allocated by ptq_alloc only */
	_Alignas(64) uint32_t idx;
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
	void *dec;                       /* pt_block_decoder, or pt_insn_decoder when instructions are
					    sampled, or pt_query_decoder in the quick pass */
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
	 * insn_left as of the last packet. Not beside since_proven: prove()
	 * copies both, and as neighbours the compiler copies them as one
	 * 16-byte load of since and its neighbour, which waits for the 8-byte
	 * store of since just before it (a store-forwarding stall on every block).
	 */
	uint64_t insn_left_proven;
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
	int miss_nofile;                 /* the address is mapped, the object's file was not found */
	int err;                         /* decoding failed (no memory): the queue stops */
	/* decoded in the window being decoded: out[out_head, out_n) */
	struct item *out;
	size_t out_head, out_n, out_cap;
	/*
	 * decoded in windows that are done, not yet taken by the session: tk[tk_head, tk_n) (see rb_pt_run_until).
	 * In a cache line of its own: the session moves tk_head on every event it takes while the pool's
	 * thread moves out_n on every event it decodes, and sharing a line made both wait on every event.
	 */
	_Alignas(64) struct item *tk;
	size_t tk_head, tk_n, tk_cap;
	/* PTWRITE / power events waiting for the address of the next block (from 0 until it is known) */
	_Alignas(64) struct held await[AWAIT_MAX];
	uint8_t await_ip[AWAIT_MAX];     /* 1: from is known */
	int nawait;
	int pwre_blocks;                 /* blocks a PWRE has waited for an MWAIT (at most PWRE_WAIT) */
	unsigned cbr;                    /* the last core:bus ratio reported (0: none yet) */
	/* psb events: the next PSB not reported (position in buf), one waiting for its FUP's address */
	uint64_t psb_next, psb_pos;
	struct psb_info psb;
	int psb_wait;
	/* segments (see "Segments" in pt_segment.c) */
	uint64_t dec_base;               /* offset in the run of the decoder's first byte */
	uint64_t dec_skip;               /* in a resumed stretch: its made-up start (q_pos) */
	uint64_t clk_base;               /* offset in the run of the packet clock's first byte */
	/* decoding resumed after missing code (pt_resync.c): the stretch, and the run's decoder waiting */
	uint8_t *rs_buf;                 /* the stretch's bytes (NULL: not in one) */
	void *rs_main;
	uint64_t rs_main_base;
	uint64_t rs_end;                 /* run offset where the stretch ends: a PSB, or the run's end */
	uint64_t rs_floor;               /* resume only at packets from this run offset on */
	int rs_begin;                    /* the resume's trace begin, due once the thread there is known */
	uint64_t rs_begin_ip, rs_begin_time, rs_begin_tsc;
	uint32_t rs_begin_flags;
	uint64_t emit_off;               /* trace offset of the last branch emitted, and how many */
	unsigned emit_ord;               /*   were emitted at that offset before it */
	struct ptq *lanes;               /* a queue: lanes decoding later segments of its run, in order */
	struct ptq *next;                /* a lane: the one after it */
	struct ptq *target;              /* the lane whose start this decoder stops at (NULL: none) */
	const struct ptq *target_seen;   /* in phase two: target whose start offset is copied here, */
	uint64_t target_off;             /*   read without touching the lane, which another thread writes */
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
	/* a queue that starts at a seek point (env.seek): it decodes nothing itself, a lane from there takes over */
	const struct rb_seek_ev *seek_at;
	int seek_lane;                   /* that lane was made */
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

struct last_thread {              /* take()'s last event's thread (pt_events.c) */
	uint64_t pass;                   /* the take_until call it is good for (0: none) */
	size_t made;                     /* rb_machine_threads_made then */
	int32_t pid, tid;
	struct rb_thread *thread, *main_thread;
	struct rb_comm *comm;
};

struct rb_pt {
	struct rb_pt_env env;
	struct last_thread lt;
	uint64_t take_pass;              /* take_until calls so far: the sideband may have changed in between */
	uint64_t priv[P_MAX];
	size_t nr_priv;
	uint64_t config;                 /* the intel_pt evsel's attr.config */
	int have_config;
	int timeless;
	uint64_t insn_period;            /* instruction samples every N instructions (0: none) */
	int insn_dec;                    /* libipt's instruction decoder (samples, or erratum SKL014 with
					    address filters: see rb_pt_open), else its block decoder */
	int qry_dec;                     /* the quick pass: libipt's query decoder, no code read (before
					    insn_dec: see dec_next) */
	struct pd_event_attr attr;       /* the intel_pt evsel's (when have_config) */
	char mods[16];                   /* perf's name modifiers from the intel_pt event (":u", ":k", "") */
	int user_only;                   /* the trace excludes the kernel: a thread can change only while
					    tracing is off, so only enable / disable events wait for sideband */
	uint64_t time_shift, time_mult, time_zero;
	struct pt_cpu cpu;
	int have_cpu;
	struct ptq *q;
	size_t nr_q;
	/* item arrays of lanes that ended, for the next lanes: a lane's array grows to a segment's events */
#define SPARE_ITEMS 4
	struct item *spare[SPARE_ITEMS];
	size_t spare_cap[SPARE_ITEMS], nr_spare;
	struct aux_break *breaks;
	size_t nr_breaks;
	int spool;                       /* AUX data goes to spool files, not the heap */
	int spool_warn;                  /* holding it on the heap instead is worth a warning */
	uint8_t *bounce;                 /* a piece of payload on its way to a spool file */
	struct ix_scan *ix;              /* the trace index, handed over as it is found: per queue (NULL: none) */
	struct tl_ent *tl;               /* thread timelines, by CPU then time */
	size_t nr_tl, cap_tl;
	uint64_t *bounds;                /* times of records that change memory maps, sorted */
	size_t nr_bounds, cap_bounds;
	uint64_t *thread_forks;          /* times of a new thread of a known process (bounds only for per-thread queues) */
	size_t nr_thread_forks, cap_thread_forks;
	uint64_t seq;                    /* records seen by the gathering pass */
	/* windows: decoded up to win_end (perf time); the next one is about delta long */
	uint64_t win_end, delta;
	pthread_mutex_t mlock;           /* the session's machine, for decoding threads */
	struct pool pool;
	int failed;                      /* a sink returned non-zero, or decoding ran out of memory */
	uint64_t seg_size;               /* runs are split in segments of about this many bytes (0: not) */
	int seek_lanes_only;             /* of them, only those that start queues at seek points (add_lanes) */
	uint64_t win_events;             /* events a window should produce */
	uint64_t handoffs;               /* lanes taken over by their queues */
	int phase_seek;                  /* lanes are looking for their starts (and nothing else runs) */
	int overlap;                     /* the pool decodes a window while this thread takes the one before */
	/*
	 * A window the pool decodes while the session goes on between calls
	 * (rb_pt_run_until): it ends at bg_w, before any bound the session has
	 * not applied; while it runs, the session holds mlock outside
	 * rb_pt_run_until (held), so that the pool reads the machine between
	 * the session's changes to it.
	 */
	int bg, held, bg_jumped;
	uint64_t bg_w;
	uint64_t bg_windows;             /* windows decoded so */
	/*
	 * No window in the background: the recording has a map-changing record
	 * the session may apply while one decodes (out of time order, or
	 * untimed: the gathering pass found it at file offset bg_off_at).
	 */
	int bg_off;
	uint64_t bg_off_at;
	const char *bg_off_why;
	uint64_t cbr2khz;                /* kHz per unit of core:bus ratio (perf's: TSC Hz / max non-turbo / 1000) */
	unsigned max_nonturbo;
	struct rb_pt_filters filt;       /* address filters (perf record --filter), placed by the sideband */
};

/* ------------------------------------------------------------ time */

static inline uint64_t tsc_to_perf(const struct rb_pt *pt, uint64_t tsc)
{
	if (pt->timeless || !pt->time_mult)
		return 0;
	return pd_tsc_to_perf_time(tsc, pt->time_shift, pt->time_mult, pt->time_zero);
}

static inline uint64_t perf_to_tsc(const struct rb_pt *pt, uint64_t ns)
{
	if (ns == UINT64_MAX || pt->timeless || !pt->time_mult)
		return UINT64_MAX;
	uint64_t t = ns - pt->time_zero     /* modulo 2^64: time_zero may be "negative" */, quot = t / pt->time_mult, rem = t % pt->time_mult;
	return (quot << pt->time_shift) + ((rem << pt->time_shift) / pt->time_mult);
}

/* ------------------------------------------------------------ pt_gather.c */

int gather(struct rb_pt *pt, const char *path, struct pd_error *err);
int setup_timelines(struct rb_pt *pt);
int rb_pt_owns(const struct rb_pt *pt, const struct ptq *q, int32_t cpu, int32_t tid);

#define PSB_LEN 16

uint64_t next_psb(const uint8_t *p, uint64_t n, uint64_t from);
void scan_psb(const uint8_t *p, uint64_t n, uint64_t pos, struct psb_info *pi);
uint64_t ip_update(uint64_t last, const struct pt_packet_ip *ip);
uint64_t perf_pos_of(const struct ptq *q, uint64_t pos);

/* ------------------------------------------------------------ pt_index.c */

int pt_index_start(struct rb_pt *pt);
/* pt_segment.c */
int seek_start(struct rb_pt *pt, struct ptq *q, const struct rb_seek_ev *s);
uint64_t psb_tsc(const uint8_t *p, uint64_t n, uint64_t pos);

/* ------------------------------------------------------------ pt_image.c */

struct proc_image *proc_image(struct rb_pt *pt, struct ptq *q, int32_t pid);
int images_hold(const struct rb_pt *pt, int32_t pid, uint64_t lo, uint64_t hi);
void drop_images(struct rb_pt *pt, int32_t pid, uint64_t lo, uint64_t hi);
uint64_t direct_target(struct rb_pt *pt, struct ptq *q, uint64_t ip);
uint32_t block_branch(struct rb_pt *pt, struct ptq *q, const struct pt_block *b, unsigned *len, int *direct);

/* ------------------------------------------------------------ pt_events.c */

int reserve_items(struct item **v, size_t *cap, size_t need);
void free_gaps(struct item *v, size_t from, size_t to);
void drop_items(struct ptq *q, size_t from);
int emit_gap_ev(struct rb_pt *pt, struct ptq *q, const struct rb_gap_ev *g);
int emit_gap(struct rb_pt *pt, struct ptq *q, const char *reason, uint64_t t0, uint64_t t1,
	     uint64_t bytes, const char *detail);
int emit(struct rb_pt *pt, struct ptq *q, const struct held *h);
int emit_branch(struct rb_pt *pt, struct ptq *q, uint64_t from, uint64_t to, uint32_t flags, uint64_t time);
int deliver_held(struct rb_pt *pt, struct ptq *q);
void drop_unproven(struct ptq *q);
int take_until(struct rb_pt *pt, uint64_t key);
int move_out(struct ptq *q);
void move_back(struct ptq *q);
int front_room(struct ptq *q);
int move_out_front(struct ptq *q);

/* A packet proved the code decoded since the last one (inline: it is on the decoding's path; deliver_held lets the events out). */
static inline int prove(struct rb_pt *pt, struct ptq *q)
{
	q->n_insns += q->unproven;
	q->unproven = 0;
	q->proved = 1;
	q->since_proven = q->since;
	q->insn_left_proven = q->insn_left;
	return q->nheld || q->nheld_count[0] || q->nheld_count[1] ? deliver_held(pt, q) : 0;
}

/* ------------------------------------------------------------ pt_decode.c */

void dec_free(const struct rb_pt *pt, void *d);
void dec_set_image(const struct rb_pt *pt, void *d, struct pt_image *img);
void *dec_alloc(const struct rb_pt *pt, const struct pt_config *c);
int dec_sync_set(const struct rb_pt *pt, void *d, uint64_t off);
struct pt_query_decoder *qry_of(void *d);   /* the quick pass's decoder (pt->qry_dec) */
int dec_time_lost(const struct rb_pt *pt, void *d, uint64_t *tsc, uint32_t *lost_mtc, uint32_t *lost_cyc);
void run_config(const struct rb_pt *pt, const struct ptq *q, const struct run *run, uint64_t from,
		struct pt_config *c);
int start_clock(struct rb_pt *pt, struct ptq *q, const struct pt_config *c);
int rb_pt_step(struct rb_pt *pt, struct ptq *q, uint64_t window);

/* The decoder's offset in the bytes it reads (with @sync: that of its last sync point). */
static inline uint64_t dec_offset(const struct rb_pt *pt, void *d, int sync)
{
	uint64_t off = 0;
	if (pt->qry_dec)
		(sync ? pt_qry_get_sync_offset : pt_qry_get_offset)(qry_of(d), &off);
	else if (pt->insn_dec)
		(sync ? pt_insn_get_sync_offset : pt_insn_get_offset)(d, &off);
	else
		(sync ? pt_blk_get_sync_offset : pt_blk_get_offset)(d, &off);
	return off;
}

/* The run offset the decoder stands at (in a resumed stretch, its made-up start reads as the resume point). */
static inline uint64_t q_pos(const struct rb_pt *pt, const struct ptq *q)
{
	uint64_t off = dec_offset(pt, q->dec, 0);
	return q->dec_base + (off < q->dec_skip ? q->dec_skip : off);
}

/* ------------------------------------------------------------ pt_resync.c */

void rs_leave(const struct rb_pt *pt, struct ptq *q);
int rs_back(const struct rb_pt *pt, struct ptq *q);
int rs_resume(struct rb_pt *pt, struct ptq *q, uint64_t stop, uint64_t *ip, uint64_t *pos, uint32_t *flags);

/* ------------------------------------------------------------ pt_segment.c */

#define SEGMENT_BYTES (UINT64_C(64) << 10)   /* default segment size */

/*
 * @n zeroed queues (or lanes) in whole cache lines of their own: each is
 * written on every branch by the thread decoding it, and an object of the
 * session's sharing a line with one (the calls builder, say) costs both
 * threads a miss per write. NULL when memory ran out; free() frees them.
 */
struct ptq *ptq_alloc(size_t n);

void at_handoff(struct rb_pt *pt, struct ptq *q, uint64_t from, uint64_t to, uint32_t flags);
uint64_t next_bound(const struct rb_pt *pt, uint64_t t);
void free_decoding(const struct rb_pt *pt, struct ptq *q);
void free_lane(struct rb_pt *pt, struct ptq *l);
int start_pool(struct rb_pt *pt, int jobs);
int prepare_window(struct rb_pt *pt, uint64_t limit);
void launch_tasks(struct rb_pt *pt, uint64_t limit);
void join_tasks(struct rb_pt *pt);
void run_tasks(struct rb_pt *pt, uint64_t limit);
int finish_window(struct rb_pt *pt, uint64_t *made);

#endif
