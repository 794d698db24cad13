/*
 * ordered.c - see ordered.h. Pending items are kept unsorted and sorted at
 * each flush (rounds are short); released items' copies go back to a pool.
 * The sort is a merge sort of the items themselves: a round is a few runs
 * already in time order (each CPU's ring, and what the last round kept),
 * and a merge of two halves already in order is skipped, so it costs little
 * more than a pass; glibc's qsort, through its comparator, was most of the
 * queue's time.
 */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "ordered.h"

void rb_oq_init(struct rb_oq *q)
{
	memset(q, 0, sizeof(*q));
}

#define POOL_MAX 4096     /* copies kept per size class */

static unsigned size_class(uint32_t size)
{
	unsigned c = 0;
	while (c < 10 && (64u << c) < size)
		c++;
	return c;
}

static uint8_t *copy_alloc(struct rb_oq *q, uint32_t size)
{
	unsigned c = size_class(size);
	if ((64u << c) < size)           /* beyond the largest class: not pooled */
		return malloc(size);
	if (q->pool_n[c])
		return q->pool[c][--q->pool_n[c]];
	return malloc(64u << c);
}

static void copy_free(struct rb_oq *q, uint8_t *p, uint32_t size)
{
	unsigned c = size_class(size);
	if ((64u << c) < size || q->pool_n[c] >= POOL_MAX) {
		free(p);
		return;
	}
	if (q->pool_n[c] == q->pool_cap[c]) {
		size_t n = q->pool_cap[c] ? 2 * q->pool_cap[c] : 64;
		uint8_t **v = realloc(q->pool[c], n * sizeof(*v));
		if (!v) {
			free(p);
			return;
		}
		q->pool[c] = v;
		q->pool_cap[c] = n;
	}
	q->pool[c][q->pool_n[c]++] = p;
}

int rb_oq_push(struct rb_oq *q, uint64_t time, uint64_t file_offset, int evsel,
	       const void *data, uint32_t size)
{
	if (q->n == q->cap) {
		size_t cap = q->cap ? 2 * q->cap : 1024;
		struct rb_oq_item *v = realloc(q->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		q->v = v;
		q->cap = cap;
	}
	uint8_t *copy = copy_alloc(q, size);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, data, size);
	if (time < q->last_flushed)
		q->late++;
	q->v[q->n++] = (struct rb_oq_item){ time, q->seq++, file_offset, evsel, size, copy };
	if (time > q->max_time)
		q->max_time = time;
	q->bytes += size;
	if (q->bytes > q->peak_bytes)
		q->peak_bytes = q->bytes;
	return 0;
}

static int by_time(const void *a, const void *b)
{
	const struct rb_oq_item *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* (time, seq) order; seq is unique, so every correct sort gives the same order. */
static int before(const struct rb_oq_item *x, const struct rb_oq_item *y)
{
	return x->time < y->time || (x->time == y->time && x->seq < y->seq);
}

/* Sort v[0..n) using tmp (n / 2 items). */
static void sort_items(struct rb_oq_item *v, struct rb_oq_item *tmp, size_t n)
{
	if (n < 16) {
		for (size_t i = 1; i < n; i++) {
			struct rb_oq_item x = v[i];
			size_t j = i;
			for (; j > 0 && before(&x, &v[j - 1]); j--)
				v[j] = v[j - 1];
			v[j] = x;
		}
		return;
	}
	size_t h = n / 2, i = 0, j = h, k = 0;
	sort_items(v, tmp, h);
	sort_items(v + h, tmp, n - h);
	if (!before(&v[h], &v[h - 1]))
		return;              /* the halves are already in order */
	memcpy(tmp, v, h * sizeof(*v));
	while (i < h && j < n)
		v[k++] = before(&v[j], &tmp[i]) ? v[j++] : tmp[i++];
	while (i < h)
		v[k++] = tmp[i++];
}

static void sort_pending(struct rb_oq *q)
{
	size_t need = q->n / 2 + 1;
	if (need > q->tmp_cap) {
		struct rb_oq_item *t = realloc(q->tmp, need * sizeof(*t));
		if (!t) {
			qsort(q->v, q->n, sizeof(*q->v), by_time);   /* no memory for the merge: the same order */
			return;
		}
		q->tmp = t;
		q->tmp_cap = need;
	}
	sort_items(q->v, q->tmp, q->n);
}

/* Release items with time <= limit, in order; keep the rest. */
static int release(struct rb_oq *q, uint64_t limit, rb_oq_deliver_fn fn, void *ctx)
{
	if (!q->n)
		return 0;
	sort_pending(q);
	size_t i = 0;
	int rc = 0;
	for (; i < q->n && q->v[i].time <= limit; i++) {
		if (!rc)
			rc = fn(ctx, &q->v[i]);
		if (q->v[i].time > q->last_flushed)
			q->last_flushed = q->v[i].time;
		q->bytes -= q->v[i].size;
		copy_free(q, q->v[i].data, q->v[i].size);
	}
	memmove(q->v, q->v + i, (q->n - i) * sizeof(*q->v));
	q->n -= i;
	return rc;
}

int rb_oq_round(struct rb_oq *q, rb_oq_deliver_fn fn, void *ctx)
{
	int rc = release(q, q->next_flush, fn, ctx);
	q->next_flush = q->max_time;
	return rc;
}

int rb_oq_flush_all(struct rb_oq *q, rb_oq_deliver_fn fn, void *ctx)
{
	return release(q, UINT64_MAX, fn, ctx);
}

void rb_oq_free(struct rb_oq *q)
{
	for (size_t i = 0; i < q->n; i++)
		free(q->v[i].data);
	free(q->v);
	free(q->tmp);
	for (unsigned c = 0; c < 11; c++) {
		while (q->pool_n[c])
			free(q->pool[c][--q->pool_n[c]]);
		free(q->pool[c]);
	}
	memset(q, 0, sizeof(*q));
}
