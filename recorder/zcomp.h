/*
 * zcomp.h - rbrecord -z: the records drained from a ring, compressed with
 * zstd into PERF_RECORD_COMPRESSED records as perf record writes them.
 *
 * Usage:
 *   zcomp__new(&z, level, cap, &err)     one zstd stream for the whole recording
 *   zcomp__add(z, rec, emit, ctx, &err)  stage a record (compresses first when @cap is full)
 *   zcomp__flush(z, emit, ctx, &err)     after each ring: compress and flush what is staged
 *   zcomp__free(z)
 * Without libzstd (configure --without-zstd) zcomp__new fails with a message.
 */
#ifndef REC_ZCOMP_H
#define REC_ZCOMP_H

#include <stddef.h>
#include <stdint.h>
#include "util.h"

#define ZCOMP_LEVEL_MAX 22              /* perf record's comp_level_max */

struct zcomp;

/* Receives one COMPRESSED record (header.size bytes). 0 or -1 (the caller's error is kept). */
typedef int (*zcomp_emit_fn)(void *ctx, const void *rec);

/* 1 when this build can compress (libzstd). */
int zcomp__available(void);
/* @cap: bytes staged before a forced compression (a ring's data size). 0 or -1. */
int zcomp__new(struct zcomp **out, int level, size_t cap, struct rec_err *e);
int zcomp__add(struct zcomp *z, const void *rec, zcomp_emit_fn emit, void *ctx, struct rec_err *e);
int zcomp__flush(struct zcomp *z, zcomp_emit_fn emit, void *ctx, struct rec_err *e);
/* A new file (--switch-output): a new zstd frame, its reader starts afresh. Nothing may be staged. */
void zcomp__restart(struct zcomp *z);
/* Bytes given to the compressor, bytes of COMPRESSED records (headers included) written. */
void zcomp__totals(const struct zcomp *z, uint64_t *in, uint64_t *out);
void zcomp__free(struct zcomp *z);

#endif
