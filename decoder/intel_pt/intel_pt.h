/*
 * intel_pt.h - the Intel PT stage of a decoding session. It is given the
 * recording's AUX trace (one queue per CPU, or per thread), decodes each
 * queue with libipt's block decoder against the memory images the
 * session's sideband describes, and hands the session branches (with
 * instruction counts) and losses on the perf clock. The session drives it
 * in time order: before each sideband record at time T it asks for
 * everything up to T, so that every branch is decoded with the maps that
 * were current when it ran (perf's intel_pt_process_queues); which thread
 * runs on a CPU it knows ahead, from the context switches it gathered.
 */
#ifndef RB_INTEL_PT_H
#define RB_INTEL_PT_H

#include "decoder/session/session.h"

struct rb_pt;

struct rb_pt_env {
	struct rb_machine *m;
	/* where events go, on the session's thread, in time order; 0 or a stop code */
	void *ctx;
	int (*trace)(void *ctx, const struct rb_trace_ev *ev);   /* NULL: nobody takes them (count only) */
	int (*gap)(void *ctx, const struct rb_gap_ev *g);         /* NULL: not wanted */
	struct rb_session_stats *st;
	int perf_export;             /* name symbol-less addresses as perf's exporter does */
	uint64_t insn_period;        /* instruction samples every N instructions; 0: none */
	int no_branches;             /* no branch events (still decoded and counted) */
	int no_symbols;              /* events' from_al and to_al: the addresses only, not resolved */
	int quick;                   /* the quick pass: packets only, no code walked (no branches, no
					images; the index, the gaps of lost trace and the times stand) */
	const char *name;            /* what to call the recording in messages (NULL: its path) */
	int jobs;                    /* decoding threads (queues, and segments of long runs, decoded in
					parallel); <= 1: this one only */
	int ptwrites, pwr_events;    /* PTWRITE and power events wanted */
	int no_index;                /* nobody takes the trace index (rb_pt_index_until): not built */
	/* where decoding can start (rb_seek_ev), on the session's thread in order; NULL: not wanted */
	int (*seek_point)(void *ctx, const struct rb_seek_ev *ev);
	const struct rb_seek_ev *seek;   /* queues to start at these places; nothing before is decoded */
	size_t nr_seek;
	pd_warn_fn warn;
	void *warn_ctx;
};

/*
 * Set up Intel PT decoding for the recording at @path (read a second time
 * to gather the AUX data of every queue, so that decoding never waits for
 * a later record). Returns 1 with *out set; 0 if the recording holds no
 * Intel PT trace; a negative status with @err filled.
 */
int rb_pt_open(struct rb_pt **out, const char *path, const struct rb_pt_env *env, struct pd_error *err);

/*
 * Hand env.trace and env.gap every event decoded up to perf time @time (UINT64_MAX: to
 * the end), decoding further first if needed (on env.jobs threads). Events
 * come in time order across queues; what comes out, and in which order,
 * does not depend on env.jobs. Returns a callback's non-zero status or 0.
 */
int rb_pt_run_until(struct rb_pt *pt, uint64_t time);

/*
 * Hand @cb the trace index entries (every PSB of every queue) up to perf
 * time @time, in time order (UINT64_MAX: the rest). Returns @cb's non-zero
 * value or 0.
 */
int rb_pt_index_until(struct rb_pt *pt, uint64_t time, int (*cb)(void *ctx, const struct rb_sync_ev *ev), void *ctx);

/*
 * The events perf synthesizes from this trace for what was asked for
 * (intel_pt_synth_events: branches, instructions, ptwrite, the power
 * events), to @fn one by one in perf's order. Returns @fn's non-zero value or 0.
 */
int rb_pt_synth_events(const struct rb_pt *pt, int (*fn)(void *ctx, const struct rb_event_desc *d), void *ctx);

/* A sideband record at its time (an exec drops the process's images; thread changes come from the timeline). */
void rb_pt_sideband(struct rb_pt *pt, const struct pd_event *ev);

/* Whether AUX queue @idx is decoded here (its holes and overlaps are then reported by the decoder). */
int rb_pt_has_queue(const struct rb_pt *pt, uint32_t idx);

/* Whether AUX records of @cpu / @tid concern a decoded queue (whose truncations the decoder reports). */
int rb_pt_owns_aux(const struct rb_pt *pt, int32_t cpu, int32_t tid);

void rb_pt_free(struct rb_pt *pt);

/*
 * Packets of every queue, or of queue @queue (>= 0: the AUXTRACE idx), as
 * text (rbdecode dump --packets). 1: done, 0: no Intel PT trace, 2: none of
 * that queue, or a pd error.
 */
int rb_pt_dump_packets(const char *path, long queue, FILE *out, struct pd_error *err);

#endif
