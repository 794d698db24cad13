/*
 * record.h - one recording session: events opened in one of perf's modes,
 * rings mapped and drained into a perf.data writer, sideband synthesized.
 *
 * Usage:
 *   record__open(&s, &opts, evlist, &err)   open events, map rings (events stay disabled)
 *   record__start(s, argc, argv, &err)      write header, features, synthesized records
 *   record__enable(s)                       (modes without enable_on_exec)
 *   loop: record__poll(s, ms); record__drain(s, &err)   (or record__snapshot in --overwrite)
 *   record__finish(s, &err)                 last drain, features known only at the end, close
 *   record__free(s)
 */
#ifndef REC_RECORD_H
#define REC_RECORD_H

#include <stdint.h>
#include <sys/types.h>
#include "events.h"
#include "ring.h"
#include "util.h"

enum rec_mode {
	REC_MODE_DEFAULT,     /* online CPUs x the command's threads, inherit */
	REC_MODE_PER_THREAD,  /* cpu -1, one ring per thread */
	REC_MODE_CPUS,        /* -C list, pid -1 (or -C with -p / -t: those CPUs x threads) */
	REC_MODE_ALL,         /* -a: online CPUs, pid -1 */
};

/* Call chains per sample, as perf record's --call-graph records them. */
enum rec_callgraph {
	REC_CG_NONE,
	REC_CG_FP,                  /* the kernel walks frame pointers: PERF_SAMPLE_CALLCHAIN */
	REC_CG_DWARF,               /* user registers and stack for an offline unwinder, kernel chain */
	REC_CG_LBR,                 /* the CPU's LBR call stack (BRANCH_STACK), user code only */
};

struct rec_opts {
	enum rec_mode mode;
	const char *cpu_list;       /* -C */
	const int *tids;            /* threads to record (command, -p, -t); NULL with pid -1 */
	int nr_tids;
	int inherit;
	int enable_on_exec;         /* a forked command starts the events at exec */
	int system_wide_synth;      /* synthesize every process in /proc */
	uint64_t period;            /* -c (0: use freq) */
	uint64_t freq;              /* -F */
	size_t mmap_pages;          /* -m, data pages per ring (power of two) */
	int overwrite;              /* --overwrite: backward rings, snapshots */
	int clockid;                /* -k, -1 for perf's default clock */
	size_t aux_pages;           /* -m ,N: AUX area pages per ring (0: perf's default) */
	int snapshot;               /* -S: AUX areas read-only, read on SIGUSR2 / control command */
	size_t snapshot_size;       /* -S SIZE: most bytes per AUX snapshot (0: the whole area) */
	int snapshot_on_exit;       /* -Se: one more snapshot when the recording ends */
	const char *output;         /* -o ("-" = pipe mode on stdout) */
	enum rec_callgraph callgraph;  /* -g / --call-graph */
	uint32_t stack_dump;        /* --call-graph dwarf,SIZE: user stack bytes per sample (perf: 8192) */
	uint64_t branch_stack;      /* -b / -j: branch_sample_type of every sampling event (0: none) */
	const char *branch_opt;     /* how it was asked for ("-b", "-j any_call,u"), for messages */
	int switch_events;          /* --switch-events: context switch records on the tracking event */
	int sample_addr;            /* -d: sample addresses and data sources, data mmaps */
	int sample_weight;          /* -W: WEIGHT_STRUCT */
	uint64_t user_regs;         /* --user-regs: PERF_SAMPLE_REGS_USER mask (0: none) */
	uint64_t intr_regs;         /* -I: PERF_SAMPLE_REGS_INTR mask (0: none) */
	int delay_ms;               /* -D: enable the events this long after the start; -1 never (control) */
	int no_inherit;             /* --no-inherit */
	int cgroup_fd;              /* -G: the perf_event cgroup's directory, -1 if none */
	int namespaces;             /* --namespaces: NAMESPACES records */
	int all_cgroups;            /* --all-cgroups: cgroup ids in samples, CGROUP records */
	const char *cgroup_mnt;     /* the perf_event cgroup hierarchy's mount (-G, --all-cgroups) */
	int no_buildid;             /* -B: no BUILD_ID feature */
	int comp_level;             /* -z: zstd level of PERF_RECORD_COMPRESSED records (0: none) */
	size_t mmap_flush;          /* --mmap-flush: least bytes a ring holds before it is drained (0, 1: any) */
	int threads;                /* --threads: rings drained by several threads into OUTPUT/data.N */
	const char *threads_spec;   /* --threads=SPEC (NULL: one thread per CPU) */
	const char *dir;            /* the perf.data folder (--threads, --kcore) holding output */
};

struct record;

int record__open(struct record **out, const struct rec_opts *o, struct ev_list *evl, struct rec_err *e);
int record__start(struct record *s, int argc, char **argv, struct rec_err *e);
int record__enable(struct record *s, struct rec_err *e);
/* -D: only the tracking event (the sideband from the start; the others after the delay). */
int record__enable_tracking(struct record *s, struct rec_err *e);
/* Wait for a watermark wake-up (or @ms). >= 0, or -errno (EINTR on a signal). */
int record__poll(struct record *s, int ms);
/* 1 once every ring's event hung up (the threads followed with -p / -t / --per-thread exited). */
int record__targets_gone(const struct record *s);
/* Forward rings: drain all of them, then FINISHED_ROUND if anything was written. 0 or -1. */
int record__drain(struct record *s, struct rec_err *e);
/*
 * A snapshot at one moment: AUX areas (-S: stop the AUX event, read the
 * newest bytes, restart it) and backward rings (--overwrite: pause, read
 * back, resume). 0 or -1.
 */
int record__snapshot(struct record *s, struct rec_err *e);
/* Wait for a watermark wake-up or @extra_fd (>= 0) readable: *@extra_ready. As record__poll. */
int record__poll_extra(struct record *s, int ms, int extra_fd, int *extra_ready);
/* Stop (0) or restart (1) every event, as perf's control "disable" / "enable". */
int record__set_enabled(struct record *s, int on, struct rec_err *e);
/* Final drain (forward rings) or snapshot (overwrite), end features, close the file. 0 or -1. */
int record__finish(struct record *s, struct rec_err *e);
void record__free(struct record *s);
/*
 * --switch-output: finish the file in progress (a complete perf.data), rename
 * it @rotated, start a new one at the output path. Drain first. 0 or -1 (the
 * new file could not be started; record__finish still closes what there is).
 */
int record__rotate(struct record *s, const char *rotated, struct rec_err *e);
/* Data bytes written to the file in progress (--switch-output SIZE). */
uint64_t record__file_size(const struct record *s);

struct rec_stats {
	uint64_t samples;           /* SAMPLE records written */
	uint64_t lost;              /* samples lost per the kernel's LOST records */
	uint64_t lost_records;      /* LOST records */
	uint64_t lost_samples;      /* LOST_SAMPLES totals: every sample an event lost, read at the end */
	uint64_t records;           /* all records written (kernel and synthesized) */
	uint64_t bytes;             /* data bytes written */
	uint64_t comp_in, comp_out; /* -z: bytes compressed, COMPRESSED record bytes they became */
	size_t nr_threads;          /* --threads: reader threads (data.N files) */
	size_t nr_rings, nr_fds;
	int disk_full;              /* the recording stopped on ENOSPC */
	/* AUX areas */
	int aux;                    /* an AUX event is recorded */
	char aux_pmu[64];           /* its PMU */
	size_t aux_bytes_per_ring;
	uint64_t aux_bytes, aux_chunks;          /* AUXTRACE payload written, records */
	uint64_t aux_records, aux_truncated, aux_partial, aux_collision;   /* kernel PERF_RECORD_AUX */
	uint64_t itrace_start, aux_hw_id;
	uint64_t snapshots;                      /* snapshots taken (signal, control command, exit) */
	uint64_t snap_aux_bytes;                 /* AUX bytes they wrote */
	uint64_t snap_wrapped;                   /* AUX reads that found the buffer wrapped */
	uint64_t snap_overwritten;               /* bytes overwritten before a snapshot (monotonic-head PMUs) */
};
void record__stats(const struct record *s, struct rec_stats *st);
/* Ring @i's owner (for --show-rings and the tests). */
void record__ring_info(const struct record *s, size_t i, int *cpu, int *tid, int *fd, size_t *bytes);

#endif
