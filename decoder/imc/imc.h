/*
 * imc.h - POWER9/10 trace-imc buffers: 64-byte big-endian records (tb1, ip,
 * val, cpmc1-4, tb2; perf-data-facts.md section 7.1) as the hardware writes
 * them into a per-CPU memory buffer that wraps silently. A raw dump of such
 * a buffer is decoded in time order: valid records (tb2 equals tb1's low 42
 * bits) are put back in the order they were written by finding where the
 * timebase goes back (the wrap point), and whatever cannot be trusted (bad
 * records, the overwritten tail) becomes a gap. Timebase ticks convert to
 * perf time with a frequency and an anchor pair.
 */
#ifndef RB_IMC_H
#define RB_IMC_H

#include <stddef.h>
#include <stdint.h>

#define RB_IMC_RECORD_SIZE 64
#define RB_IMC_TB_MASK 0x3ffffffffffULL     /* low 42 bits of tb1, as tb2 holds them */

struct rb_imc_record {
	uint64_t tb1, ip, val, cpmc[4], tb2;
	uint64_t offset;          /* in the buffer */
	uint64_t time;            /* perf time, 0 when no conversion was given */
	int privilege;            /* POWER10 MSR[HV,PR] from val bits 63:62; -1 on POWER9 (not recorded) */
};

struct rb_imc_gap {
	uint64_t offset, bytes;   /* region of the buffer */
	uint64_t records;
	const char *reason;       /* "invalid record", "imc wrap" or "partial record" */
	uint64_t time_before, time_after;   /* perf times around it, 0 if unknown */
};

struct rb_imc_opts {
	int power10;              /* read the privilege bits from val */
	uint64_t timebase_hz;     /* 0: no time conversion (POWER's timebase is nominally 512 MHz) */
	uint64_t anchor_tb, anchor_ns;   /* a timebase value and the perf time it corresponds to */
	uint64_t start_tb;        /* timebase when the hardware started writing at the buffer start
				     (LDBAR programmed); 0 if unknown. Sizes a wrap: the records
				     overwritten are those written between it and the oldest survivor */
};

struct rb_imc_sink {
	void *ctx;
	int (*record)(void *ctx, const struct rb_imc_record *r);
	int (*gap)(void *ctx, const struct rb_imc_gap *g);
};

/*
 * Decode @len bytes of buffer. A trailing part shorter than a record is a
 * gap. A wrapped buffer's loss (its oldest records, overwritten) is one
 * "imc wrap" gap reported before the oldest surviving record: from start_tb
 * to that record, sized (when start_tb is known) as the records the hardware
 * wrote in between at the buffer's median record spacing, the first one a
 * spacing after start_tb. Returns the first non-zero sink result, or 0.
 */
int rb_imc_decode(const uint8_t *buf, size_t len, const struct rb_imc_opts *o, const struct rb_imc_sink *s);
/* Timebase → perf time with @o's frequency and anchor; 0 if no frequency. */
uint64_t rb_imc_tb_to_ns(const struct rb_imc_opts *o, uint64_t tb);

#endif
