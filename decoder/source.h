/*
 * source.h - the one interface between the session (session.c) and a trace
 * source: a decoder of one kind of hardware trace (Intel PT, CoreSight,
 * POWER IMC). The session owns the recording, the records in time order and
 * the machine; it hands each source what it needs as it reads (every
 * record in time order, the AUXTRACE chunks of each queue) and, at the end,
 * asks it to finish. A source reports what it finds through the callbacks
 * of struct rb_source_env: branches and instruction ranges, trace events,
 * IMC records and counters, and every loss as a gap, on the perf clock. It
 * never prints and knows nothing of outputs.
 *
 * The kinds of source are listed in one table (sources.c); adding one (say
 * Arm SPE) is a folder with its decoder, a constructor of this shape, and
 * one line there.
 */
#ifndef RB_SOURCE_H
#define RB_SOURCE_H

#include "pd.h"
#include "decoder/session/machine.h"

struct rb_gap_ev;
struct rb_aux_ev;

/* perf's sample flags (PERF_IP_FLAG_*), the branch kinds perf's decoders report. */
enum {
	RB_IP_FLAG_BRANCH = 1 << 0, RB_IP_FLAG_CALL = 1 << 1, RB_IP_FLAG_RETURN = 1 << 2,
	RB_IP_FLAG_CONDITIONAL = 1 << 3, RB_IP_FLAG_SYSCALLRET = 1 << 4, RB_IP_FLAG_ASYNC = 1 << 5,
	RB_IP_FLAG_INTERRUPT = 1 << 6, RB_IP_FLAG_TX_ABORT = 1 << 7, RB_IP_FLAG_TRACE_BEGIN = 1 << 8,
	RB_IP_FLAG_TRACE_END = 1 << 9, RB_IP_FLAG_IN_TX = 1 << 10,
};

/* A taken branch, a trace start (ip 0) or a trace end (addr 0), as perf's branch samples show them. */
struct rb_branch_ev {
	int32_t cpu, pid, tid;        /* -1 when not known */
	uint64_t time;                /* perf clock ns; 0 if not known */
	uint64_t ip, addr;            /* from, to; 0 for "outside the trace" */
	uint32_t flags;               /* RB_IP_FLAG_* */
	int evsel;                    /* the AUX event the trace came from */
	const char *mods;             /* the synthesized event's modifiers (":u" for "branches:u", or "") */
};

/*
 * Instructions executed in sequence: start to end (the address of the last
 * instruction), and how the last one left the range. @next is where the
 * trace continued (the next range's start) or 0 if a discontinuity or the
 * end of the trace followed.
 */
enum rb_range_end { RB_RANGE_OTHER, RB_RANGE_DIRECT_BRANCH, RB_RANGE_INDIRECT_BRANCH };
struct rb_range_ev {
	int32_t cpu, pid, tid;
	uint64_t time;
	uint64_t start, end, next;
	uint32_t insns;               /* instructions in the range */
	int taken;                    /* the last instruction was a branch and it was taken */
	enum rb_range_end kind;
};

/* Which recorded event a sample or an IMC value belongs to, as outputs name it. */
struct rb_event_ref {
	int index;                    /* in the recording's event list (perf's evsel index) */
	const char *name;             /* NULL if the recording names none: then type and config */
	uint32_t type;
	uint64_t config;
};

/*
 * An event as perf's event list holds it, for outputs that lay out their
 * text per event as perf script does (store/text): every recorded event in
 * the recording's order, then those a trace source synthesizes, in the
 * order and with the attributes perf gives them ("branches:u", then
 * "instructions:u", "ptwrite", "cbr", ...: intel_pt_synth_events and
 * cs_etm__synth_events).
 */
#define RB_TYPE_SYNTH 6           /* perf's PERF_TYPE_SYNTH: ptwrite and power events */
struct rb_event_desc {
	const char *name;             /* perf's name for it (NULL: the recording names none) */
	uint32_t type;                /* PERF_TYPE_*, or RB_TYPE_SYNTH */
	uint64_t config;
	uint64_t sample_type;         /* PERF_SAMPLE_* its samples carry */
	uint64_t sample_period;       /* 0 when sampled by frequency */
	int synth;                    /* 0 recorded; 1 synthesized from hardware trace: then */
	int kind, power;              /* the trace events it stands for (RB_EV_*, RB_PWR_* of RB_EV_POWER) */
};

/*
 * perf's sample_type for what it synthesizes from a trace event whose own is
 * @trace: that event's PERF_SAMPLE_MASK bits, with IP, TID and PERIOD, and
 * TIME unless the decoding is timeless.
 */
static inline uint64_t rb_synth_sample_type(uint64_t trace, int timeless)
{
	uint64_t mask = PD_SAMPLE_IP | PD_SAMPLE_TID | PD_SAMPLE_TIME | PD_SAMPLE_ADDR | PD_SAMPLE_ID |
			PD_SAMPLE_STREAM_ID | PD_SAMPLE_CPU | PD_SAMPLE_PERIOD | PD_SAMPLE_IDENTIFIER;
	uint64_t st = (trace & mask) | PD_SAMPLE_IP | PD_SAMPLE_TID | PD_SAMPLE_PERIOD;
	return timeless ? st & ~(uint64_t)PD_SAMPLE_TIME : st | PD_SAMPLE_TIME;
}

struct rb_session_stats;
struct rb_trace_ev;
struct rb_ftrace_ev;
struct rb_sync_ev;
struct rb_seek_ev;
struct rb_tracedat_stats;
struct rb_imc_rec_ev;
struct rb_imc_counter_ev;

/*
 * What a source may use and call; one for the session, shared by its
 * sources, and valid until they are freed. Fields the session learns while
 * reading (the TIME_CONV values) are filled in place, so a source reads them
 * when it decodes. Every callback is called from the session's thread, in
 * the order the source found things, and returns 0 or a non-zero value that
 * stops the session (a source returns it unchanged).
 */
struct rb_source_env {
	struct pd_reader *r;
	struct rb_machine *m;
	const char *path;             /* the recording, to read AUX payloads by file offset */
	const char *name;             /* what to call it in messages (a spooled stdin: "<stdin>"); NULL: path */
	int pipe_mode;                /* payloads come with the chunk instead (bytes != NULL) */
	const char *symfs;            /* --symfs, or NULL */
	const char *buildid_dir;      /* build-id cache (an unpacked archive's folder), NULL: ~/.debug */
	/* what was asked for */
	int no_aux_decode;            /* account for AUX trace, do not decode it */
	int no_branches;              /* decode, but deliver no branch events (--itrace without b) */
	int no_symbols;               /* trace events' from_al and to_al: the addresses only */
	int quick;                    /* the quick pass (--quick): packets only, no code walked, no branches */
	uint64_t insn_period;         /* instruction samples every N instructions (--itrace=iN); 0: none */
	int jobs;                     /* decoding threads; the output does not depend on it */
	int ptwrites, pwr_events;     /* --itrace=w, --itrace=p */
	int perf_export;              /* name symbol-less addresses as perf's exporter does */
	/* a trace.dat to merge (ftrace's ring), NULL: none; its reader's counts and message go here */
	const char *ftrace_path;
	struct rb_tracedat_stats *ftrace_stats;
	char *ftrace_msg;
	size_t ftrace_msglen;
	/* the TIME_CONV record, once read */
	int has_time_conv;
	uint64_t time_shift, time_mult, time_zero, time_cycles, time_mask;
	int cap_user_time_short;
	/* Counts: a source adds its branches, instructions and samples; the session counts gaps. */
	struct rb_session_stats *st;
	void *sess;
	/* a branch in addresses and thread ids, for the session to resolve (CoreSight) */
	int (*branch)(void *sess, const struct rb_branch_ev *b);
	/* an event the source resolved itself (Intel PT); NULL: nobody takes them (count only) */
	int (*trace)(void *sess, const struct rb_trace_ev *ev);
	int (*range)(void *sess, const struct rb_range_ev *ev);    /* NULL: nobody wants ranges */
	int (*gap)(void *sess, const struct rb_gap_ev *g);          /* counted, then to the sink */
	int (*imc_record)(void *sess, const struct rb_imc_rec_ev *ev);
	int (*imc_counter)(void *sess, const struct rb_imc_counter_ev *ev);
	int (*ftrace_event)(void *sess, const struct rb_ftrace_ev *ev);   /* NULL: nobody takes them */
	int (*sync_point)(void *sess, const struct rb_sync_ev *ev);       /* the trace index; NULL: not wanted */
	int (*seek_point)(void *sess, const struct rb_seek_ev *ev);       /* NULL: not wanted */
	const struct rb_seek_ev *seek;  /* queues to start there (rb_session_opts.seek) */
	size_t nr_seek;
	void (*warn)(void *sess, const char *msg);
	pd_warn_fn pd_warn;           /* the session's warning callback, for pd errors with offsets */
	void *pd_warn_ctx;
	void (*element)(void *sess, const char *line);             /* NULL: no element listing */
	/* an event the source synthesizes, declared when it opens (struct rb_event_desc; copied) */
	int (*synth_event)(void *sess, const struct rb_event_desc *d);
};

struct rb_source;

/*
 * A source's operations. Any may be NULL (nothing to do); all are called
 * from the session's thread. The int ones return 0, -ENOMEM, or a stop code
 * from an env callback.
 */
struct rb_source_ops {
	/*
	 * A record @rec (parsed: @ev) after the session has applied it to the
	 * machine and the sink: every kernel record, in time order (records
	 * without a time as they come), samples only when they are in the
	 * --time / -C selection; and perf stat's STAT, STAT_ROUND and CPU_MAP
	 * records in file order.
	 */
	int (*record)(struct rb_source *src, const struct pd_record *rec, const struct pd_event *ev);
	/* A PERF_RECORD_AUXTRACE chunk; @bytes its payload in pipe mode, else NULL (read later by offset). */
	int (*chunk)(struct rb_source *src, const struct rb_aux_ev *a, const uint8_t *bytes);
	/* Deliver what is decoded up to perf time @time: called before each record of that time. */
	int (*run_until)(struct rb_source *src, uint64_t time);
	/* The recording has been read: decode and deliver everything left. Not called after a failure. */
	int (*finish)(struct rb_source *src);
	void (*free)(struct rb_source *src);
	/* Whether the source reports AUX queue @idx's holes and overlaps itself (with their times). */
	int (*has_queue)(const struct rb_source *src, uint32_t idx);
	/* Whether it reports the truncations in AUX records of @cpu / @tid itself. */
	int (*owns_aux)(const struct rb_source *src, int32_t cpu, int32_t tid);
};

struct rb_source {
	const struct rb_source_ops *ops;
	const char *name;             /* "intel_pt", "cs_etm", "imc" */
};

/*
 * A constructor. @info is the AUXTRACE_INFO record for kinds created from it
 * (struct rb_source_kind.auxtrace_type), NULL for those opened at the start
 * of the session. Returns:
 *   0 with *@out set, or NULL when the recording has nothing for this kind;
 *   RB_SOURCE_UNUSABLE with @err's message saying why the trace cannot be
 *     decoded (the session reports it as a "decoder error" gap and goes on);
 *   a negative pd status with @err filled (PD_ERR_NOMEM or -ENOMEM when
 *     memory ran out): the session stops.
 */
#define RB_SOURCE_UNUSABLE 1
typedef int (*rb_source_open_fn)(struct rb_source **out, const struct rb_source_env *env,
				 const struct pd_event *info, struct pd_error *err);

struct rb_source_kind {
	const char *name;
	int auxtrace_type;            /* PD_AUXTRACE_*: opened at that AUXTRACE_INFO; -1: at the start */
	rb_source_open_fn open;
};

/* Every kind of trace source, in the order the session opens, drives and finishes them (sources.c). */
extern const struct rb_source_kind rb_source_kinds[];
extern const size_t rb_nr_source_kinds;

/* The constructors (one per folder). */
int rb_pt_source_open(struct rb_source **out, const struct rb_source_env *env, const struct pd_event *info,
		      struct pd_error *err);
int rb_imc_source_open(struct rb_source **out, const struct rb_source_env *env, const struct pd_event *info,
		       struct pd_error *err);
int rb_cs_etm_open(struct rb_source **out, const struct rb_source_env *env, const struct pd_event *info,
		   struct pd_error *err);
int rb_ftrace_source_open(struct rb_source **out, const struct rb_source_env *env, const struct pd_event *info,
			  struct pd_error *err);

#endif
