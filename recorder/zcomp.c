/*
 * zcomp.c - compression of the drained records (rbrecord -z). perf record
 * keeps one zstd stream open for the whole session, feeds it what it read
 * from a ring and flushes it, cutting the output into PERF_RECORD_COMPRESSED
 * records of at most 65527 data bytes (PERF_SAMPLE_MAX_SIZE less the header,
 * less one). The frame is never ended; a reader keeps one decompression
 * stream across the records, so a record may continue in the next one.
 * Here each ring's records are staged whole and flushed together, so the
 * records one COMPRESSED run holds decompress to complete records.
 *
 * Workload: every byte of every ring passes through here once; level 1 (the
 * default) compresses at several hundred MB/s. Never prints.
 */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#ifdef HAVE_ZSTD
#include <zstd.h>
#endif
#include "pd.h"
#include "zcomp.h"

#define REC_DATA_MAX (65536 - 8 - 1)    /* perf: PERF_SAMPLE_MAX_SIZE - sizeof(header) - 1 */

struct zcomp {
#ifdef HAVE_ZSTD
	ZSTD_CCtx *cctx;
#endif
	uint8_t *in;                 /* staged records */
	size_t len, cap;
	uint8_t *rec;                /* one COMPRESSED record being filled: header, data */
	uint64_t bytes_in, bytes_out;
};

#ifdef HAVE_ZSTD
int zcomp__available(void) { return 1; }

int zcomp__new(struct zcomp **out, int level, size_t cap, struct rec_err *e)
{
	struct zcomp *z = calloc(1, sizeof(*z));

	*out = NULL;
	if (cap < 65536)
		cap = 65536;   /* a record is at most 64 KiB */
	if (!z || !(z->in = malloc(cap)) || !(z->rec = malloc(8 + REC_DATA_MAX)) || !(z->cctx = ZSTD_createCCtx())) {
		zcomp__free(z);
		return rec_fail(e, ENOMEM, "out of memory for zstd compression");
	}
	size_t r = ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_compressionLevel, level);
	if (ZSTD_isError(r)) {
		zcomp__free(z);
		return rec_fail(e, EINVAL, "-z %d: zstd refuses the level: %s", level, ZSTD_getErrorName(r));
	}
	z->cap = cap;
	*out = z;
	return 0;
}

int zcomp__flush(struct zcomp *z, zcomp_emit_fn emit, void *ctx, struct rec_err *e)
{
	ZSTD_inBuffer in = { z->in, z->len, 0 };
	size_t left;

	if (!z->len)
		return 0;
	do {
		ZSTD_outBuffer o = { z->rec + 8, REC_DATA_MAX, 0 };
		left = ZSTD_compressStream2(z->cctx, &o, &in, ZSTD_e_flush);
		if (ZSTD_isError(left))
			return rec_fail(e, EIO, "zstd compression of %zu bytes failed: %s", z->len,
					ZSTD_getErrorName(left));
		if (!o.pos)
			continue;
		struct perf_event_header h = { PD_RECORD_COMPRESSED, 0, (uint16_t)(8 + o.pos) };
		memcpy(z->rec, &h, sizeof(h));
		if (emit(ctx, z->rec) < 0)
			return -1;
		z->bytes_out += h.size;
	} while (left || in.pos < in.size);
	z->bytes_in += z->len;
	z->len = 0;
	return 0;
}

void zcomp__restart(struct zcomp *z)
{
	ZSTD_CCtx_reset(z->cctx, ZSTD_reset_session_only);
}

void zcomp__free(struct zcomp *z)
{
	if (!z)
		return;
	ZSTD_freeCCtx(z->cctx);
	free(z->in);
	free(z->rec);
	free(z);
}
#else
int zcomp__available(void) { return 0; }

int zcomp__new(struct zcomp **out, int level, size_t cap, struct rec_err *e)
{
	*out = NULL;
	return rec_fail(e, ENOTSUP, "-z: this rbrecord was built without libzstd (configure --without-zstd, or "
			"Debian's libzstd-dev missing): compressed recording is not available");
}

int zcomp__flush(struct zcomp *z, zcomp_emit_fn emit, void *ctx, struct rec_err *e)
{
	return 0;
}

void zcomp__restart(struct zcomp *z)
{
}

void zcomp__free(struct zcomp *z)
{
	free(z);
}
#endif

int zcomp__add(struct zcomp *z, const void *rec, zcomp_emit_fn emit, void *ctx, struct rec_err *e)
{
	const struct perf_event_header *h = rec;

	if (z->len + h->size > z->cap && zcomp__flush(z, emit, ctx, e) < 0)
		return -1;
	memcpy(z->in + z->len, rec, h->size);
	z->len += h->size;
	return 0;
}

void zcomp__totals(const struct zcomp *z, uint64_t *in, uint64_t *out)
{
	*in = z ? z->bytes_in : 0;
	*out = z ? z->bytes_out : 0;
}
