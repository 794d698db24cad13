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
	const char *output;         /* -o ("-" = pipe mode on stdout) */
};

struct record;

int record__open(struct record **out, const struct rec_opts *o, struct ev_list *evl, struct rec_err *e);
int record__start(struct record *s, int argc, char **argv, struct rec_err *e);
int record__enable(struct record *s, struct rec_err *e);
/* Wait for a watermark wake-up (or @ms). >= 0, or -errno (EINTR on a signal). */
int record__poll(struct record *s, int ms);
/* 1 once every ring's event hung up (the threads followed with -p / -t / --per-thread exited). */
int record__targets_gone(const struct record *s);
/* Forward rings: drain all of them, then FINISHED_ROUND if anything was written. 0 or -1. */
int record__drain(struct record *s, struct rec_err *e);
/* --overwrite: snapshot every ring (pause, read back, resume). 0 or -1. */
int record__snapshot(struct record *s, struct rec_err *e);
/* Final drain (forward rings) or snapshot (overwrite), end features, close the file. 0 or -1. */
int record__finish(struct record *s, struct rec_err *e);
void record__free(struct record *s);

struct rec_stats {
	uint64_t samples;           /* SAMPLE records written */
	uint64_t lost;              /* samples lost per the kernel's LOST records */
	uint64_t lost_records;      /* LOST records */
	uint64_t lost_samples;      /* LOST_SAMPLES totals: every sample an event lost, read at the end */
	uint64_t records;           /* all records written (kernel and synthesized) */
	uint64_t bytes;             /* data bytes written */
	size_t nr_rings, nr_fds;
	int disk_full;              /* the recording stopped on ENOSPC */
};
void record__stats(const struct record *s, struct rec_stats *st);
/* Ring @i's owner (for --show-rings and the tests). */
void record__ring_info(const struct record *s, size_t i, int *cpu, int *tid, int *fd, size_t *bytes);

#endif
