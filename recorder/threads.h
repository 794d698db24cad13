/*
 * threads.h - perf record --threads: the rings are drained by several
 * threads, each into its own file OUTPUT/data.N of raw records (no header,
 * no FINISHED_ROUND: a reader orders them by time), while OUTPUT/data keeps
 * the header, the synthesized records and the features (DIR_FORMAT). As
 * perf, data.N holds the N-th ring, whichever thread reads it.
 *
 * Workload: one worker per CPU by default, each polling its rings and
 * writing what they hold in blocks of up to 256 KiB per ring.
 */
#ifndef REC_THREADS_H
#define REC_THREADS_H

#include <stddef.h>
#include <stdint.h>
#include "ring.h"
#include "util.h"

struct rthreads;

/* Called for every record a worker writes, one call at a time (a lock is held). */
typedef void (*rthreads_note_fn)(void *ctx, const void *rec);

/*
 * Group @n per-CPU rings into workers as perf's --threads=SPEC does: NULL or
 * "cpu" one per CPU, "core", "package" (sysfs topology), "numa" (nodes) or
 * user masks "CPUS[/AFFINITY][:CPUS[/AFFINITY]...]" (perf's syntax), and
 * create DIR/data.0 .. data.N-1 (one per ring). 0 or -1 with @e naming the spec or file.
 */
int rthreads_open(struct rthreads **out, const char *spec, const char *dir, struct ring **rings, size_t n,
		  rthreads_note_fn note, void *ctx, struct rec_err *e);
/* Start the workers. 0 or -1. */
int rthreads_start(struct rthreads *t, struct rec_err *e);
/* 0, or -1 with @e when a worker could not write its file (its errno: ENOSPC on a full disk). */
int rthreads_error(struct rthreads *t, struct rec_err *e);
/* Stop and join the workers, drain their rings a last time (the events are disabled), close the files. */
int rthreads_stop(struct rthreads *t, struct rec_err *e);
size_t rthreads_count(const struct rthreads *t);
uint64_t rthreads_bytes(const struct rthreads *t);
void rthreads_free(struct rthreads *t);

#endif
