/*
 * pd_deliver.c - how perf hands on a sample that carries PERF_SAMPLE_READ
 * (perf's evlist__deliver_sample, 6.1): not as one sample of the event that
 * recorded it, but as one sample per counter value read, each of the event
 * that counter belongs to (found by the value's id), its period the growth
 * of that counter since its previous value; a value whose id no event has,
 * or whose counter did not grow, is not a sample at all. A group leader
 * sampling with --add-counter / {a,b}:S thus gives a sample of every member.
 * perf report --stats counts per event, perf script prints and
 * export-to-sqlite.py stores these samples.
 */
#include "config.h"
#include <stdlib.h>
#include "pd_internal.h"

struct pd_read_tracker {
	uint64_t *ids, *last;       /* open addressing: id (0 = empty slot) -> the counter's last value */
	size_t cap, n;
	struct pd_read_delivery *out;
	size_t out_cap;
};

struct pd_read_tracker *pd_read_tracker_new(void)
{
	return calloc(1, sizeof(struct pd_read_tracker));
}

void pd_read_tracker_free(struct pd_read_tracker *t)
{
	if (!t)
		return;
	free(t->ids);
	free(t->last);
	free(t->out);
	free(t);
}

static size_t slot_of(const struct pd_read_tracker *t, uint64_t id)
{
	size_t i = (size_t)((id * 0x9e3779b97f4a7c15ULL) >> 20) & (t->cap - 1);
	while (t->ids[i] && t->ids[i] != id)
		i = (i + 1) & (t->cap - 1);
	return i;
}

/* The counter of @id: its slot, made if new; -1 out of memory. */
static long counter(struct pd_read_tracker *t, uint64_t id)
{
	if ((t->n + 1) * 2 > t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		uint64_t *ids = calloc(cap, sizeof(*ids)), *last = calloc(cap, sizeof(*last));
		if (!ids || !last) {
			free(ids);
			free(last);
			return -1;
		}
		struct pd_read_tracker old = *t;
		t->ids = ids;
		t->last = last;
		t->cap = cap;
		for (size_t i = 0; i < old.cap; i++)
			if (old.ids[i]) {
				size_t k = slot_of(t, old.ids[i]);
				t->ids[k] = old.ids[i];
				t->last[k] = old.last[i];
			}
		free(old.ids);
		free(old.last);
	}
	size_t k = slot_of(t, id);
	if (!t->ids[k]) {
		t->ids[k] = id;
		t->n++;
	}
	return (long)k;
}

int pd_read_deliveries(struct pd_read_tracker *t, const struct pd_reader *r, const struct pd_sample *s,
		       const struct pd_read_delivery **out)
{
	size_t n = 0;
	*out = NULL;
	if (!(s->type & PD_SAMPLE_READ))
		return 0;
	if (s->read.nr > t->out_cap) {
		struct pd_read_delivery *v = realloc(t->out, (size_t)s->read.nr * sizeof(*v));
		if (!v)
			return -1;
		t->out = v;
		t->out_cap = (size_t)s->read.nr;
	}
	for (uint64_t i = 0; i < s->read.nr; i++) {
		struct pd_read_value v;
		pd_read_value_at(&s->read, i, &v);
		int evsel = v.id ? pd_reader_evsel_of_id(r, v.id) : -1;
		if (evsel < 0)
			continue;             /* perf: an id no event has (or none recorded) is no sample */
		long k = counter(t, v.id);
		if (k < 0)
			return -1;
		uint64_t period = v.value - t->last[k];
		t->last[k] = v.value;
		if (!period)
			continue;             /* perf: "no reason to deliver sample for zero period" */
		t->out[n++] = (struct pd_read_delivery){ evsel, v.id, period };
	}
	*out = t->out;
	return (int)n;
}
