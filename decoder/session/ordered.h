/*
 * ordered.h - the time-ordering queue between the reader and the session.
 *
 * The kernel writes each CPU's ring in time order, but a perf.data file
 * interleaves the rings in chunks; PERF_RECORD_FINISHED_ROUND marks a point
 * after which no record older than the previous round's newest can come.
 * Records are queued with their time and released in time order, round by
 * round, exactly as perf's ordered_events does (flush up to the previous
 * round's maximum at each round, everything at the end). Equal times keep
 * file order. Memory holds one or two rounds of records.
 */
#ifndef RB_ORDERED_H
#define RB_ORDERED_H

#include <stddef.h>
#include <stdint.h>

struct rb_oq_item {
	uint64_t time;
	uint64_t seq;          /* arrival order, for stable ties */
	uint64_t file_offset;
	int evsel;
	uint32_t size;
	uint8_t *data;         /* record copy (native order), owned by the queue */
};

typedef int (*rb_oq_deliver_fn)(void *ctx, const struct rb_oq_item *it);

struct rb_oq {
	struct rb_oq_item *v;  /* pending items, unsorted */
	size_t n, cap;
	struct rb_oq_item *tmp;  /* the sort's merge buffer */
	size_t tmp_cap;
	uint64_t seq;
	uint64_t max_time;     /* newest time queued so far */
	uint64_t next_flush;   /* a round releases items with time <= this */
	uint64_t last_flushed; /* newest time released (for the "below last flush" count) */
	uint64_t late;         /* items older than something already released */
	size_t bytes, peak_bytes;
	/* released copies kept for reuse, by size class (64 << c bytes): a record
	   per sample is queued, and malloc / free per record showed in profiles */
	uint8_t **pool[11];
	size_t pool_n[11], pool_cap[11];
};

void rb_oq_init(struct rb_oq *q);
/* Queue a copy of @size bytes. Returns 0 or -ENOMEM. */
int rb_oq_push(struct rb_oq *q, uint64_t time, uint64_t file_offset, int evsel,
	       const void *data, uint32_t size);
/* FINISHED_ROUND: release items up to the previous round's maximum. Returns the first non-zero deliver result. */
int rb_oq_round(struct rb_oq *q, rb_oq_deliver_fn fn, void *ctx);
/* End of input: release everything. */
int rb_oq_flush_all(struct rb_oq *q, rb_oq_deliver_fn fn, void *ctx);
void rb_oq_free(struct rb_oq *q);

#endif
