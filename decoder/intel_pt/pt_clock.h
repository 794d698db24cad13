/*
 * pt_clock.h - the time of a place in an Intel PT packet stream, kept
 * beside libipt's decoders. libipt's own time runs ahead of the
 * blocks it returns (its query decoder reads past the timing packets that
 * belong to the next branch) and drops CYC until it has calibrated; this
 * clock reads the packets itself and answers "when was the packet that the
 * decoder consumed last", CYC-accurate where the trace says so.
 *
 * Usage: ptclock_init over the same bytes the decoder reads, starting at a
 * PSB (no earlier state is needed or used: a clock started at any PSB gives
 * the same times from there on as one that ran through the whole stream);
 * ptclock_at(decoder offset) as the decoder goes (offsets never go back);
 * ptclock_fini.
 */
#ifndef RB_PT_CLOCK_H
#define RB_PT_CLOCK_H

#include <stdint.h>

struct pt_packet_decoder;

struct ptclock_config {
	uint32_t tsc_ctc_n, tsc_ctc_d;   /* CPUID.15H: TSC ticks per CTC (crystal) tick, n / d (0: no MTC timing) */
	unsigned mtc_shift;              /* the mtc_period config field: an MTC every 2^shift CTC ticks */
	unsigned max_nonturbo;           /* max non-turbo ratio: CYC cycles * this / CBR = TSC ticks (0: no CYC timing) */
};

struct ptclock {
	struct ptclock_config cfg;
	const uint8_t *begin, *end;      /* the bytes (the common packets are read here directly) */
	struct pt_packet_decoder *pkt;   /* reads the others, and after a damaged packet */
	struct pt_packet_decoder *ahead; /* reads beyond it, to date a reference CYC */
	uint64_t next_off;               /* offset of the next packet to read */
	int pkt_behind;                  /* pkt is not at next_off (packets were read from the bytes) */
	int slow;                        /* read every packet through libipt (tests compare the two ways) */
	int dead;                        /* no more packets can be read */
	/* the clock, TSC ticks: now never decreases */
	int have_time;
	uint64_t now;
	uint64_t tsc_pkt;                /* the last TSC packet's time (TMA refers to it) */
	int have_tma;                    /* the MTC base is known */
	uint64_t ctc_base;               /* TSC time of CTC value 0 of the current MTC count */
	uint64_t ctc_delta;              /* CTC ticks since ctc_base */
	uint32_t last_mtc;               /* payload of the last MTC (or TMA's CTC bits) */
	int mtc_fixup;                   /* mtc_shift > 8: the next MTC completes last_mtc */
	double cyc_ratio;                /* TSC ticks per cycle, from CBR (0: not known yet) */
	int have_cyc_ref;                /* counting cycles (a CYC was dated since the last PSB / OVF) */
	uint64_t cyc_base;               /* TSC time counting starts from */
	double cyc_ticks;                /* ticks counted by CYC since cyc_base (time of the last CYC) */
	int in_psb;                      /* between PSB and PSBEND */
	/* the answer for offsets after the last non-timing packet read */
	int have_point;
	uint64_t point_time;
	uint64_t floor;                  /* no packet after the last PSB is dated before this */
};

/* Returns 0, or -1 when out of memory (@begin..@end: the bytes; @start: a PSB's offset in them). */
int ptclock_init(struct ptclock *c, const struct ptclock_config *cfg, const uint8_t *begin, const uint8_t *end,
		 uint64_t start);
void ptclock_fini(struct ptclock *c);

/*
 * The TSC time of the last packet before @offset that a decoder consumes
 * (TNT, TIP, FUP...; not timing packets, PAD, PSB+ or status packets): the
 * one a decoder standing at @offset consumed last, dated by the timing
 * packets before it.
 * Returns 0 and sets *@tsc, or -1 if no time is known yet.
 */
int ptclock_at(struct ptclock *c, uint64_t offset, uint64_t *tsc);

/*
 * Whether clocks @a and @b (over bytes that start @abase and @bbase into
 * the same stream) stand at the same place in the same state: from there
 * they date every packet alike.
 */
int ptclock_agree(const struct ptclock *a, uint64_t abase, const struct ptclock *b, uint64_t bbase);

#endif
