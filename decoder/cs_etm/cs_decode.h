/*
 * cs_decode.h - decode one trace buffer of a CoreSight snapshot (read by
 * cs_snapshot.h) with OpenCSD and hand every packet and generic trace
 * element back as a line of text in the `Idx:N; ID:XX; ...` form that
 * OpenCSD's trc_pkt_lister prints, so the two can be compared line for line.
 *
 * The decoder never prints: text goes to the caller's callbacks. Workload:
 * trace buffers of kilobytes to a few megabytes and memory dumps mapped
 * read-only; one decode tree per call.
 */
#ifndef RB_CS_DECODE_H
#define RB_CS_DECODE_H

#include "cs_snapshot.h"

/* Returned by rb_cs_decode_snapshot when only part of the snapshot decoded. */
#define RB_CS_PARTIAL 1

struct rb_cs_decode_opts {
	const char *buffer;      /* trace buffer name to decode; NULL: the first trace.ini lists */
	int packets_only;        /* list packets, no instruction decode: with their raw bytes
				    (trc_pkt_lister -pkt_mon), or if @no_raw without them
				    (trc_pkt_lister without -decode) */
	int no_raw;              /* with @packets_only: omit the raw bytes */
	int src_addr_n;          /* ETE/ETMv4: split source address ranges on N atoms (-src_addr_n) */
	int multi_session;       /* after @buffer (or the first), feed every other buffer in trace.ini
				    order through the same decoders, each from index 0 after a
				    reset (trc_pkt_lister -multi_session) */
	int dstream;             /* buffer is in 512-byte DSTREAM blocks: 504 trace bytes, then an
				    8-byte footer that is skipped (-dstream_format) */
};

/* Receives one line of text, without a newline. */
typedef void (*rb_cs_text_fn)(void *ctx, const char *text);

/*
 * Decode one trace buffer of @ss. @out receives the `Idx:` lines in decode
 * order; @warn (may be NULL) receives a sentence for each trace source that
 * could not be decoded (unsupported protocol, unknown core, missing
 * register) and for each memory dump OpenCSD refused. @opts may be NULL.
 *
 * Returns 0 when every source of the buffer was decoded to the end,
 * RB_CS_PARTIAL when some sources were skipped or the decoder met a fatal
 * error part way (what it produced was delivered), or a negative rb_cs_err
 * with @err filled: RB_CS_ERR_INVAL (NULL @ss or @out, unknown buffer name),
 * RB_CS_ERR_FORMAT (no trace source feeds the buffer), RB_CS_ERR_IO (a trace
 * buffer or memory dump cannot be read), RB_CS_ERR_DECODE (OpenCSD could not
 * create the tree, or no source of the buffer could be decoded),
 * RB_CS_ERR_NOMEM.
 */
int rb_cs_decode_snapshot(const struct rb_cs_snapshot *ss, const struct rb_cs_decode_opts *opts,
			  rb_cs_text_fn out, rb_cs_text_fn warn, void *ctx, struct rb_cs_error *err);

#endif
