/*
 * tracing.h - the TRACING_DATA feature (tracepoint formats from tracefs).
 */
#ifndef REC_TRACING_H
#define REC_TRACING_H

#include <stddef.h>
#include "pd.h"
#include "util.h"

/* Append the blob for tracepoints @tps ("sys:name[:mods]") to @b. 0 or -1. */
int tracing_data_build(struct pd_buf *b, const char *const *tps, size_t n, struct rec_err *e);

#endif
