/*
 * tracing.h - the TRACING_DATA feature (tracepoint formats from tracefs).
 */
#ifndef REC_TRACING_H
#define REC_TRACING_H

#include <stddef.h>
#include <stdint.h>
#include "pd.h"
#include "util.h"

/* Append the blob for tracepoints @tps ("sys:name[:mods]") to @b. 0 or -1. */
int tracing_data_build(struct pd_buf *b, const char *const *tps, size_t n, struct rec_err *e);

/* What differs between perf's TRACING_DATA and the head of a trace.dat (version 6). */
struct tracing_meta {
	const char *version;            /* "0.6" (perf) or "6" (trace.dat) */
	uint32_t page_size;             /* the ring buffer's page (sub-buffer) size */
	const char *const *ftrace;      /* names under events/ftrace/ whose formats to include */
	size_t nr_ftrace;
	int kallsyms, printk, cmdlines; /* include /proc/kallsyms, printk_formats, saved_cmdlines */
};
/* The same blob with @m's choices. 0 or -1 with @e naming the file that could not be read. */
int tracing_meta_build(struct pd_buf *b, const char *const *tps, size_t n, const struct tracing_meta *m,
		       struct rec_err *e);

#endif
