/*
 * auxdec.h - the narrow interface between the session (session.c) and one
 * AUX-area trace decoder (cs_etm.c; Intel PT joins the same way). The
 * session owns the recording, the ordered records and the machine; it hands
 * the decoder what it needs as it reads (the AUX records of each CPU, the
 * AUXTRACE chunks of each queue, AUX_OUTPUT_HW_ID and ITRACE_START records)
 * and, at the end, asks it to decode. The decoder reports what it finds
 * through the callbacks of struct rb_auxdec_env: branches and instruction
 * ranges on the perf clock, and every loss as a gap. It never prints.
 */
#ifndef RB_AUXDEC_H
#define RB_AUXDEC_H

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
	const char *name;             /* the synthesized event's name ("branches:u") */
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

/* What a decoder may use and call. Callbacks return 0 or a non-zero value that stops the session. */
struct rb_auxdec_env {
	struct pd_reader *r;
	struct rb_machine *m;
	const char *path;             /* the recording, to read AUX payloads by file offset */
	int pipe_mode;                /* payloads come with the chunk instead (bytes != NULL) */
	const char *symfs;            /* --symfs, or NULL */
	const char *buildid_dir;      /* build-id cache (an unpacked archive's folder), NULL: ~/.debug */
	int has_time_conv;            /* a TIME_CONV record was read */
	uint64_t time_shift, time_mult, time_zero, time_cycles, time_mask;
	int cap_user_time_short;
	void *sess;
	int (*branch)(void *sess, const struct rb_branch_ev *b);
	int (*range)(void *sess, const struct rb_range_ev *ev);    /* NULL: nobody wants ranges */
	int (*gap)(void *sess, const struct rb_gap_ev *g);
	void (*warn)(void *sess, const char *msg);
	void (*element)(void *sess, const char *line);             /* NULL: no element listing */
};

struct rb_auxdec;

struct rb_auxdec_ops {
	/* A PERF_RECORD_AUX, in time order: @time 0 if the record has none. */
	int (*aux)(struct rb_auxdec *d, int32_t cpu, int32_t tid, uint64_t time, uint64_t aux_offset,
		   uint64_t aux_size, uint64_t flags, uint64_t file_offset);
	int (*hw_id)(struct rb_auxdec *d, int32_t cpu, uint64_t hw_id);
	int (*itrace_start)(struct rb_auxdec *d, int32_t cpu, int32_t pid, int32_t tid, uint64_t time);
	/* A PERF_RECORD_AUXTRACE chunk; @bytes its payload in pipe mode, else NULL (read later by offset). */
	int (*chunk)(struct rb_auxdec *d, const struct rb_aux_ev *a, const uint8_t *bytes);
	/* The recording has been read: decode everything queued. */
	int (*finish)(struct rb_auxdec *d);
	void (*free)(struct rb_auxdec *d);
};

struct rb_auxdec {
	const struct rb_auxdec_ops *ops;
	const struct rb_auxdec_env *env;
};

/*
 * CoreSight (cs_etm): a decoder for the AUXTRACE_INFO record @info.
 * Returns 0 and *@out, or -1 with @msg saying why the record cannot be used
 * (malformed metadata, a header version this reader does not know), or
 * -ENOMEM.
 */
int rb_cs_etm_new(struct rb_auxdec **out, const struct rb_auxdec_env *env, const struct pd_event *info,
		  char *msg, size_t msglen);

#endif
