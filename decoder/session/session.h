/*
 * session.h - the decoding session: reads a recording through the format
 * library, orders its records in time (ordered.h), keeps the machine's
 * sideband state (machine.h), and hands resolved events to a sink. The sink
 * (the SQLite store, a text printer) knows nothing of perf.data; the session
 * knows nothing of SQL.
 */
#ifndef RB_SESSION_H
#define RB_SESSION_H

#include "pd.h"
#include "machine.h"
#include "decoder/source.h"
#include "decoder/imc/imc_perf.h"

struct rb_cc_node {               /* one call-chain entry, root first */
	uint64_t ip;
	struct rb_addr_loc al;
	int inlined;                  /* al.sym is a function inlined at ip, from debug info (perf's "(inlined)") */
};

/* A recorded sample, with perf's defaults for what it does not carry. */
struct rb_sample_ev {
	struct rb_event_ref event;    /* which recorded event (source.h) */
	uint64_t ip;
	uint64_t time;                /* perf clock ns; 0 and has_time 0 when the sample has none */
	int has_time, has_cpu;
	uint32_t cpu;                 /* when has_cpu */
	uint64_t period;              /* the sample's, or the event's fixed sample_period */
	uint64_t weight, transaction;
	uint64_t data_src;            /* perf's PERF_MEM_* encoding; "not available" (0x5080021) when absent */
	uint64_t addr;                /* the sample's data address (PERF_SAMPLE_ADDR), 0 when absent; not resolved */
	const uint8_t *raw;           /* PERF_SAMPLE_RAW (a tracepoint's fields), the recording host's byte order */
	uint32_t raw_size;            /* 0: none */
	struct rb_thread *thread, *main_thread;
	struct rb_comm *comm;         /* the comm perf shows for it (see machine.h) */
	struct rb_addr_loc al;        /* the sample ip */
	size_t nr_nodes;              /* call chain, root first; 0 if none */
	const struct rb_cc_node *nodes;
};

struct rb_range_ev;              /* source.h: instructions executed in sequence */

/*
 * The recording's events as perf's event list holds them (struct
 * rb_event_desc, source.h: the recorded ones, whose index is a sample's
 * event.index, then what the trace sources synthesize), and what perf
 * script decides its fields by: whether the file has the AUXTRACE feature
 * (fields a sample lacks may then be asked for) and the STAT one.
 */
struct rb_tracepoints;            /* decoder/ftrace/tracedat.h */
struct rb_evlist {
	const struct rb_event_desc *ev;
	size_t n, nr_recorded;
	int auxtrace, stat;
	/* the recording's tracing data, to print tracepoints' fields (NULL: none); the session's */
	struct rb_tracepoints *tp;
};

struct rb_switch_ev {
	uint64_t time;
	int has_time;                 /* the record carries a time (sample_id_all) */
	int evsel;                    /* the event whose sample id it carries (its index), -1 if none */
	int32_t cpu;                  /* -1 if the record has no CPU */
	int out, preempt;
	struct rb_thread *a;          /* the thread the record belongs to (NULL if unknown) */
	struct rb_thread *b;          /* SWITCH_CPU_WIDE: the next / previous thread */
	int cpu_wide;                 /* 1: SWITCH_CPU_WIDE */
	int32_t pid, tid;             /* the record's own thread, -1 if it has none */
	int32_t np_pid, np_tid;       /* SWITCH_CPU_WIDE: next / previous pid and tid as recorded */
};

/*
 * A loss of data, of any kind: one model for every source (the gaps table).
 * Times are perf clock ns; a time of 0 means not known.
 */
struct rb_gap_ev {
	uint64_t time_start, time_end;
	int32_t cpu, pid, tid;        /* -1 when not known */
	const char *source;           /* "kernel", "aux", or the decoder's name */
	const char *reason;           /* "kernel lost records", "aux truncated", "aux hole", ... */
	uint64_t bytes_lost, records_lost;
	uint64_t file_offset;         /* the record that reported it */
	const char *detail;           /* free text, may be "" */
	int no_binary;                /* the bytes lost are code whose object's file was not found */
};

/* One chunk of AUX area data (a PERF_RECORD_AUXTRACE and its payload). */
struct rb_aux_ev {
	uint32_t queue;               /* mmap index: one queue per CPU, or per thread */
	int32_t cpu, tid;             /* -1 when not known */
	uint64_t aux_offset, size;    /* position in the queue's AUX space, bytes */
	uint64_t reference;
	uint64_t file_offset;         /* of the payload */
	uint32_t snapshot_nr;         /* order of this chunk in its queue, from 0 */
};

/*
 * An event decoded from hardware trace, the one kind every trace source's
 * branches reach the sink as (Intel PT, CoreSight): perf's synthesized
 * "branches" sample: from and to, resolved, perf's PERF_IP_FLAG_* bits
 * (RB_IP_FLAG_*, source.h), and the instructions executed since the
 * previous branch of its queue (0 when the trace does not count them). A trace
 * begin has from 0; a trace end, to 0 (unless the hardware said where
 * execution went). Or an instruction sample.
 */
enum { RB_EV_BRANCH, RB_EV_INSTRUCTION, RB_EV_PTWRITE, RB_EV_POWER };
/*
 * RB_EV_PTWRITE (perf's "ptwrite" event, --itrace=w): at from (the PTWRITE,
 * or where the decoder stood), payload[0] the value, payload[1] 1 if the
 * packet gave the IP (FUP: exact), payload[2] its size in bytes.
 * RB_EV_POWER (--itrace=p), by power (perf's event names):
 *   RB_PWR_CBR     the core:bus ratio changed: payload ratio, frequency (kHz), max non-turbo ratio
 *   RB_PWR_MWAIT   hints (EAX[7:0]), extensions (ECX[1:0])
 *   RB_PWR_PWRE    C-state entry: cstate, sub-cstate, hw (entry initiated by hardware)
 *   RB_PWR_EXSTOP  execution stopped: payload[0] 1 if from is exact (FUP)
 *   RB_PWR_PWRX    C-state exit: deepest cstate, last cstate, wake reason (1 interrupt,
 *                  4 monitored store, 8 hardware: perf's bits)
 *   RB_PWR_PSB     a PSB+ (Intel PT): payload[0] the PSB's offset in the AUX area; time its TSC,
 *                  from its FUP (0: tracing was off)
 * Events without an IP of their own carry the address where the decoder
 * stood (0 before tracing starts), as perf's samples do.
 */
enum { RB_PWR_CBR, RB_PWR_MWAIT, RB_PWR_PWRE, RB_PWR_EXSTOP, RB_PWR_PWRX, RB_PWR_PSB, RB_PWR_COUNT };
struct rb_trace_ev {
	int kind;                     /* RB_EV_BRANCH, or RB_EV_INSTRUCTION: an instruction sample at from
					 (perf's "instructions" event), insn_count the sampling period;
					 RB_EV_PTWRITE, RB_EV_POWER: see above */
	int power;                    /* RB_PWR_* when kind is RB_EV_POWER */
	uint64_t payload[3];          /* RB_EV_PTWRITE, RB_EV_POWER */
	uint64_t time;                /* perf clock ns (0: the trace has no timing) */
	int32_t cpu;                  /* -1 when not known */
	uint32_t queue;
	const char *source;           /* "intel_pt", "cs_etm" */
	const char *mods;             /* perf's modifier for the synthesized event's name (":u", ":k", ""),
					 after the trace event's: "branches:u", "instructions:u" */
	struct rb_thread *thread, *main_thread;
	struct rb_comm *comm;
	uint64_t from, to;
	struct rb_addr_loc from_al, to_al;
	uint32_t flags;               /* RB_BR_* */
	uint64_t insn_count, cyc_count;
	/*
	 * 1: a branch perf synthesizes as a sample of the trace's own kind
	 * (CoreSight): perf script prints it as a sample (period 1, time in
	 * microseconds, the event's name, its flags); 0: as Intel PT's itrace
	 * lines (nanoseconds, the instruction count)
	 */
	int sample_style;
};

/*
 * A place in a trace queue where decoding can start (Intel PT: a PSB), for
 * the trace index: its position in the queue's data (perf's PSB offset, the
 * AUXTRACE payloads one after the other), its file offset, its time, where
 * execution stood (0: unknown or tracing off) and the thread its CPU ran
 * then by the sideband (-1: unknown).
 */
struct rb_sync_ev {
	const char *source;           /* "intel_pt" */
	uint32_t queue;
	int32_t cpu, tid;
	uint64_t time;                /* perf clock ns; 0 if the trace has no timing */
	uint64_t aux_pos, file_offset, ip;
};

/*
 * A place where decoding a queue can start and then make exactly what
 * decoding the whole trace made from there on (Intel PT: a segment's
 * decoder that the queue took over, pt_segment.c), delivered in order with
 * the events: everything the queue makes after it follows it. Given back
 * through rb_session_opts.seek, the queue starts there: nothing before it
 * is decoded.
 */
struct rb_seek_ev {
	const char *source;           /* "intel_pt" */
	uint32_t queue;
	int32_t cpu;
	uint64_t time;                /* the perf time it was delivered at (its events are not earlier) */
	uint64_t tsc;                 /* the decoder's clock there */
	uint64_t pos;                 /* the PSB decoding starts from: position in the queue's data */
	uint64_t aux_pos;             /* the same as perf's PSB offset (trace_index.aux_pos) */
	uint64_t start_off, start_from, start_to;   /* the first event made: its trace offset and branch, */
	uint32_t start_ord, start_flags;             /* its rank at that offset and its flags */
};

/* A PERF_RECORD_AUX (data reached the AUX ring) or ITRACE_START (tracing began in a task), in time order. */
struct rb_aux_rec_ev {
	uint64_t time;
	int32_t cpu, pid, tid;        /* -1 when not known */
	int itrace_start;             /* 1: ITRACE_START (no offset, size or flags) */
	uint64_t aux_offset, aux_size, flags;
};

/*
 * The one interface every output implements (SQLite, text, JSON, folded
 * stacks...). The contract, for every callback:
 *  - any callback may be NULL: that kind of event is not wanted (the
 *    session and the trace sources then skip the work of making it where
 *    they can: no trace callback, no branch events built);
 *  - all are called from the thread that called rb_session_run, one at a
 *    time, never concurrently, even when decoding runs on -j threads;
 *  - events come in time order (perf's rounds: kernel records by time,
 *    trace events up to each record's time, a trace.dat merged by time);
 *    gaps and the trace index come where they are found, in that order;
 *  - an event and everything it points to (threads, comms, symbols,
 *    strings) is valid only during the call, except the session's objects
 *    (struct rb_thread, rb_comm, rb_dso, rb_sym), which live until end()
 *    returns: copy what is kept, or key it by those objects until then;
 *  - a callback returns 0 to go on, or any other value to stop: nothing
 *    more is delivered, end() is still called once, and rb_session_run
 *    returns that value (a caller that could mistake it for a negative pd
 *    status asks its sink, as cmd_export asks the store whether it failed);
 *  - --time and -C have been applied (see doc/architecture.md for which
 *    events they select); the sink filters nothing itself.
 * begin() comes first, with the machine whose objects events point to;
 * end() last, while those objects are alive, whatever happened before.
 */
struct rb_sink {
	void *ctx;
	int (*begin)(void *ctx, struct rb_machine *m);
	/*
	 * The event list (valid during the call), once, before the first
	 * sample, trace event or switch: when every event recorded so far and
	 * every one a source synthesizes is known (in pipe mode, the events
	 * announced before the first of them, as perf script sees them).
	 */
	int (*events)(void *ctx, const struct rb_evlist *el);
	int (*sample)(void *ctx, const struct rb_sample_ev *ev);
	int (*context_switch)(void *ctx, const struct rb_switch_ev *ev);
	int (*gap)(void *ctx, const struct rb_gap_ev *ev);
	int (*aux_buffer)(void *ctx, const struct rb_aux_ev *ev);
	int (*trace)(void *ctx, const struct rb_trace_ev *ev);  /* hardware trace: branches, instruction samples, ... */
	int (*aux_record)(void *ctx, const struct rb_aux_rec_ev *ev);
	int (*imc_record)(void *ctx, const struct rb_imc_rec_ev *ev);      /* IMC trace records (imc_perf.h) */
	int (*imc_counter)(void *ctx, const struct rb_imc_counter_ev *ev); /* IMC counter values */
	int (*range)(void *ctx, const struct rb_range_ev *ev);   /* decoded instruction ranges; NULL: not wanted */
	int (*ftrace_event)(void *ctx, const struct rb_ftrace_ev *ev);    /* a trace.dat's events (tracedat.h) */
	int (*sync_point)(void *ctx, const struct rb_sync_ev *ev);       /* the trace index; every one, in time order */
	int (*seek_point)(void *ctx, const struct rb_seek_ev *ev);       /* where decoding can start (rb_seek_ev) */
	int (*end)(void *ctx);
};

struct rb_session_opts {
	const char *path;
	struct rb_machine_opts machine;
	uint64_t time_start, time_end;   /* samples outside [start, end] are skipped; 0,0 = all */
	const char *cpus;                /* "0,2-3": only these CPUs' samples; NULL = all */
	int perf_export;                 /* name symbol-less addresses "unknown" in perf's exporter's order,
					    so that every address in a map has a symbol (see machine.h) */
	void (*progress)(void *ctx, uint64_t done, uint64_t total);
	void *progress_ctx;
	pd_warn_fn warn;
	void *warn_ctx;
	int no_aux_decode;               /* do not decode AUX trace (branches), only account for it */
	int no_branches;                 /* decode AUX trace but deliver no branch events (--itrace without b) */
	int no_symbols;                  /* trace events need no symbols: from_al and to_al carry only the
					    addresses (a sink that reads no object of a branch; Intel PT) */
	int quick;                       /* the quick pass: the trace's packets only (index, lost trace,
					    times), no code walked and no branches (Intel PT; --quick) */
	uint64_t insn_period;            /* instruction samples every N instructions (--itrace=iN); 0: none */
	int jobs;                        /* AUX trace decoding threads (-j N); the output does not depend on it */
	int ptwrites, pwr_events;        /* PTWRITE (--itrace=w) and power events (--itrace=p) */
	/* every generic trace element a trace decoder sees, as a trc_pkt_lister "Idx:" line; NULL: none */
	void (*aux_element)(void *ctx, const char *line);
	void *aux_element_ctx;
	/*
	 * A trace.dat (ftrace's rings) merged into the timeline: its events and
	 * gaps reach the sink in time order with the recording's, through the
	 * same --time / -C selection; NULL: none. Its reader's counts go to
	 * *ftrace_stats and its message (why it is partial) to ftrace_msg.
	 */
	const char *ftrace;
	struct rb_tracedat_stats *ftrace_stats;
	char *ftrace_msg;
	size_t ftrace_msglen;
	/* queues to start at these places (seek_point events of an earlier decode): none before is decoded */
	const struct rb_seek_ev *seek;
	size_t nr_seek;
};

struct rb_session_stats {
	uint64_t records, samples, samples_out_of_window, malformed, late;
	uint64_t switches, gaps, aux_buffers;
	uint64_t branches, instructions; /* decoded from AUX trace */
	uint64_t insn_samples;
	uint64_t unwound_samples;        /* --call-graph dwarf samples whose user frames were unwound */
	uint64_t unwind_stopped;         /* of those, stopped short of the outermost frame (a binary
					    without a file or without CFI, the stack copy's end) */
	int seek_failed;                 /* a seek point given did not lead where the earlier decode went: decode without */
	/*
	 * Trace whose code was in no file found: the AUX bytes read, those a
	 * decoder could not decode for want of an object's file ("no image"
	 * gaps, CoreSight fragments that reached such code), and the objects
	 * (binaries_missing names them, comma-separated, clipped). The run is
	 * partial when binaries_not_found is not 0 (rb_session_partial).
	 */
	uint64_t trace_bytes, trace_bytes_no_binary;
	uint64_t binaries_not_found;
	char binaries_missing[512];
	struct pd_error stop;            /* why reading stopped early; code 0 if it did not */
};

/*
 * The decoding threads an export and the rbtrace extension use unless told:
 * the online CPUs, at most 8 (the output is the same for every number).
 */
int rb_session_default_jobs(void);

/*
 * Run the whole recording through @sink. Returns 0; a negative pd status
 * (enum pd_status, err filled) if the input could not be opened or memory ran
 * out (PD_ERR_NOMEM, never -ENOMEM); or the first non-zero value a sink
 * callback returned. A damaged record stops reading but what was read
 * is delivered: stats->stop says where and why.
 */
int rb_session_run(const struct rb_session_opts *o, const struct rb_sink *sink,
		   struct rb_session_stats *stats, struct pd_error *err);

/*
 * The objects the recording at o->path names (its build-ids, its MMAP and
 * MMAP2 records; files only, not //anon or [heap]), each looked up as the
 * decoders look for it (rb_machine_locate, with o->machine's folders):
 * @fn gets them one by one. A refused file is also said through o->warn.
 * Returns 0, or a negative pd status with @err filled.
 */
struct rb_session_object {
	const struct rb_dso *dso;          /* name, recorded build-id */
	enum rb_symdir_match how;          /* RB_SYMDIR_NONE: not found */
	const char *where;                 /* the file found or refused, NULL if none */
	struct rb_symdir_hit hit;          /* a refused file's own build-id */
};
typedef void (*rb_session_object_fn)(void *ctx, const struct rb_session_object *ob);
int rb_session_objects(const struct rb_session_opts *o, rb_session_object_fn fn, void *ctx, struct pd_error *err);

/*
 * Whether a run read its input only in part: reading stopped early,
 * records were malformed, or trace went undecoded because a binary was not
 * found. Every command's exit status 3 and the database's "partial".
 */
static inline int rb_session_partial(const struct rb_session_stats *st)
{
	return st->stop.code != 0 || st->malformed != 0 || st->binaries_not_found != 0;
}

#endif
