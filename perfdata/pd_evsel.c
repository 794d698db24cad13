/*
 * pd_evsel.c - the table of event selectors of one file: each attr with the
 * sample ids the kernel assigned to its descriptors and a name, plus the
 * hash that maps a record's id to its selector. Attribution follows perf:
 * with one selector every record is its; with several, every selector must
 * put the id at the same place (PERF_SAMPLE_IDENTIFIER makes that so).
 */
#include "config.h"
#include <stdlib.h>
#include "pd_internal.h"

size_t pd_sample_id_size(uint64_t st)
{
	size_t n = 0;
	if (st & PD_SAMPLE_TID) n += 8;
	if (st & PD_SAMPLE_TIME) n += 8;
	if (st & PD_SAMPLE_ID) n += 8;
	if (st & PD_SAMPLE_STREAM_ID) n += 8;
	if (st & PD_SAMPLE_CPU) n += 8;
	if (st & PD_SAMPLE_IDENTIFIER) n += 8;
	return n;
}

/* u64 index of the id in a SAMPLE body (perf: __evsel__calc_id_pos). */
static int calc_id_pos(uint64_t st)
{
	if (st & PD_SAMPLE_IDENTIFIER)
		return 0;
	if (!(st & PD_SAMPLE_ID))
		return -1;
	return !!(st & PD_SAMPLE_IP) + !!(st & PD_SAMPLE_TID) +
	       !!(st & PD_SAMPLE_TIME) + !!(st & PD_SAMPLE_ADDR);
}

/* u64 index of the id from a trailer's end, 1 = last (perf: __evsel__calc_is_pos). */
static int calc_is_pos(uint64_t st)
{
	if (st & PD_SAMPLE_IDENTIFIER)
		return 1;
	if (!(st & PD_SAMPLE_ID))
		return -1;
	return 1 + !!(st & PD_SAMPLE_CPU) + !!(st & PD_SAMPLE_STREAM_ID);
}

void pd_evsel_compute_layout(struct pd_evsel *es)
{
	es->id_pos = calc_id_pos(es->attr.sample_type);
	es->is_pos = calc_is_pos(es->attr.sample_type);
	es->trailer_size = pd_attr_flag(&es->attr, PD_ATTR_SAMPLE_ID_ALL) ?
			   pd_sample_id_size(es->attr.sample_type) : 0;
}

static void recompute_positions(struct pd_evlist *l)
{
	l->id_pos = l->n ? l->v[0].id_pos : -1;
	l->is_pos = l->n ? l->v[0].is_pos : -1;
	l->sample_id_all = l->n ? pd_attr_flag(&l->v[0].attr, PD_ATTR_SAMPLE_ID_ALL) : 0;
	for (size_t i = 1; i < l->n; i++) {
		if (l->v[i].id_pos != l->id_pos)
			l->id_pos = -1;
		if (l->v[i].is_pos != l->is_pos)
			l->is_pos = -1;
	}
}

int pd_evlist_add(struct pd_evlist *l, const uint8_t *attr, size_t attr_size,
		  const char *name, struct pd_error *err)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 8;
		struct pd_evsel *v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return pd_fail(err, PD_ERR_NOMEM, PD_NO_OFFSET, -1, "out of memory for %zu evsels", cap);
		l->v = v;
		l->cap = cap;
	}
	struct pd_evsel *es = &l->v[l->n];
	memset(es, 0, sizeof(*es));
	memcpy(&es->attr, attr, attr_size < sizeof(es->attr) ? attr_size : sizeof(es->attr));
	if (name && !(es->name = strdup(name)))
		return pd_fail(err, PD_ERR_NOMEM, PD_NO_OFFSET, -1, "out of memory");
	pd_evsel_compute_layout(es);
	l->n++;
	recompute_positions(l);
	return (int)(l->n - 1);
}

const char *pd_evsel_default_name(uint32_t type, uint64_t config)
{
	static const char *const hw[] = { "cycles", "instructions", "cache-references", "cache-misses",
		"branches", "branch-misses", "bus-cycles", "stalled-cycles-frontend",
		"stalled-cycles-backend", "ref-cycles" };
	static const char *const sw[] = { "cpu-clock", "task-clock", "page-faults", "context-switches",
		"cpu-migrations", "minor-faults", "major-faults", "alignment-faults",
		"emulation-faults", "dummy", "bpf-output", "cgroup-switches" };
	if (type == PD_TYPE_HARDWARE && config < sizeof(hw) / sizeof(hw[0]))
		return hw[config];
	if (type == PD_TYPE_SOFTWARE && config < sizeof(sw) / sizeof(sw[0]))
		return sw[config];
	return NULL;
}

void pd_evlist_default_names(struct pd_evlist *l)
{
	for (size_t i = 0; i < l->n; i++) {
		const char *name = pd_evsel_default_name(l->v[i].attr.type, l->v[i].attr.config);
		if ((!l->v[i].name || !l->v[i].name[0]) && name)
			pd_evlist_set_name(l, (int)i, name);
	}
}

int pd_evlist_set_name(struct pd_evlist *l, int idx, const char *name)
{
	char *s = strdup(name);
	if (!s)
		return PD_ERR_NOMEM;
	free(l->v[idx].name);
	l->v[idx].name = s;
	return 0;
}

static uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static void map_put(struct pd_evlist *l, uint64_t id, int idx)
{
	size_t mask = l->map_cap - 1, i = hash64(id) & mask;
	while (l->keys[i] && l->keys[i] != id)
		i = (i + 1) & mask;
	if (!l->keys[i])
		l->map_n++;
	l->keys[i] = id;
	l->vals[i] = idx;
}

static int map_grow(struct pd_evlist *l, size_t need)
{
	if (l->map_cap && (l->map_n + need) * 2 <= l->map_cap)
		return 0;
	size_t cap = l->map_cap ? l->map_cap : 64;
	while ((l->map_n + need) * 2 > cap)
		cap *= 2;
	uint64_t *keys = calloc(cap, sizeof(*keys));
	int *vals = calloc(cap, sizeof(*vals));
	if (!keys || !vals) {
		free(keys);
		free(vals);
		return PD_ERR_NOMEM;
	}
	uint64_t *ok = l->keys;
	int *ov = l->vals;
	size_t ocap = l->map_cap;
	l->keys = keys;
	l->vals = vals;
	l->map_cap = cap;
	l->map_n = 0;
	for (size_t i = 0; i < ocap; i++)
		if (ok[i])
			map_put(l, ok[i], ov[i]);
	free(ok);
	free(ov);
	return 0;
}

int pd_evlist_add_ids(struct pd_evlist *l, int idx, const uint8_t *ids, size_t nr,
		      struct pd_error *err)
{
	struct pd_evsel *es = &l->v[idx];
	if (nr == 0)
		return 0;
	if (nr > (SIZE_MAX / 8) - es->nr_ids)
		return pd_fail(err, PD_ERR_ATTR, PD_NO_OFFSET, -1, "absurd id count %zu", nr);
	uint64_t *v = realloc(es->ids, (es->nr_ids + nr) * sizeof(uint64_t));
	if (!v || map_grow(l, nr) < 0) {
		if (v)
			es->ids = v;
		return pd_fail(err, PD_ERR_NOMEM, PD_NO_OFFSET, -1, "out of memory for %zu sample ids", nr);
	}
	es->ids = v;
	for (size_t i = 0; i < nr; i++) {
		uint64_t id = ld64(ids + 8 * i);
		es->ids[es->nr_ids++] = id;
		if (id == 0) {
			l->has_zero_id = 1;
			l->zero_id_evsel = idx;
		} else {
			map_put(l, id, idx);
		}
	}
	return 0;
}

int pd_evlist_find(const struct pd_evlist *l, uint64_t id)
{
	if (id == 0)
		return l->has_zero_id ? l->zero_id_evsel : -1;
	if (!l->map_cap)
		return -1;
	size_t mask = l->map_cap - 1, i = hash64(id) & mask;
	while (l->keys[i]) {
		if (l->keys[i] == id)
			return l->vals[i];
		i = (i + 1) & mask;
	}
	return -1;
}

int pd_evlist_of_record(const struct pd_evlist *l, const uint8_t *rec, size_t size, int swapped)
{
	if (l->n == 0)
		return -1;
	if (l->n == 1)
		return 0;
	uint64_t id;
	uint32_t type = ld32(rec);
	if (swapped)
		type = __builtin_bswap32(type);
	if (type != PD_RECORD_SAMPLE && !l->sample_id_all)
		return 0;   /* no trailer: perf attributes these to the first evsel */
	if (!pd_peek_id(rec, size, swapped, l->id_pos, l->is_pos, &id))
		return -1;
	return pd_evlist_find(l, id);
}

void pd_evlist_free(struct pd_evlist *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].ids);
		free(l->v[i].name);
	}
	free(l->v);
	free(l->keys);
	free(l->vals);
	memset(l, 0, sizeof(*l));
}
