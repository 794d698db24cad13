/*
 * pd_evsel.c - the table of event selectors of one file: each attr with the
 * sample ids the kernel assigned to its descriptors and a name, plus the
 * hash that maps a record's id to its selector. Attribution follows perf:
 * with one selector every record is its; with several, every selector must
 * put the id at the same place (PERF_SAMPLE_IDENTIFIER makes that so).
 */
#include "config.h"
#include <inttypes.h>
#include <stdio.h>
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

int pd_attr_modifiers(const struct pd_event_attr *a, char *buf, size_t n)
{
	char m[16];
	size_t r = 0;
	int guest_default = 0;
	int xk = pd_attr_flag(a, PD_ATTR_EXCLUDE_KERNEL), xu = pd_attr_flag(a, PD_ATTR_EXCLUDE_USER);
	int xh = pd_attr_flag(a, PD_ATTR_EXCLUDE_HV);
	unsigned precise = (unsigned)pd_attr_flag(a, PD_ATTR_PRECISE_IP0) | (unsigned)pd_attr_flag(a, PD_ATTR_PRECISE_IP1) << 1;
	if (xk || xu || xh) {
		if (!xk)
			m[r++] = 'k';
		if (!xu)
			m[r++] = 'u';
		if (!xh)
			m[r++] = 'h';
		guest_default = 1;
	}
	for (unsigned i = 0; i < precise; i++)
		m[r++] = 'p';
	if (precise)
		guest_default = 1;
	if (pd_attr_flag(a, PD_ATTR_EXCLUDE_HOST) || pd_attr_flag(a, PD_ATTR_EXCLUDE_GUEST) == guest_default) {
		if (!pd_attr_flag(a, PD_ATTR_EXCLUDE_HOST))
			m[r++] = 'H';
		if (!pd_attr_flag(a, PD_ATTR_EXCLUDE_GUEST))
			m[r++] = 'G';
	}
	m[r] = 0;
	return snprintf(buf, n, "%s%s", r ? ":" : "", m);
}

int pd_evsel_perf_name(const struct pd_evsel *es, char *buf, size_t n)
{
	static const char *const hw[] = { "cycles", "instructions", "cache-references", "cache-misses",
		"branches", "branch-misses", "bus-cycles", "stalled-cycles-frontend",
		"stalled-cycles-backend", "ref-cycles" };
	static const char *const sw[] = { "cpu-clock", "task-clock", "page-faults", "context-switches",
		"cpu-migrations", "minor-faults", "major-faults", "alignment-faults",
		"emulation-faults", "dummy" };
	static const char *const cache[] = { "L1-dcache", "L1-icache", "LLC", "dTLB", "iTLB", "branch", "node" };
	static const char *const op[][2] = { { "load", "loads" }, { "store", "stores" }, { "prefetch", "prefetches" } };
	static const char *const result[] = { "refs", "misses" };
	static const unsigned valid_ops[] = { 7, 5, 7, 7, 1, 1, 7 };   /* per cache: read, write, prefetch bits */
	const struct pd_event_attr *a = &es->attr;
	uint64_t c = a->config;
	int r;
	if (es->name && (es->given_name || (a->type == PD_TYPE_TRACEPOINT && es->name[0])))
		return snprintf(buf, n, "%s", es->name);
	switch (a->type) {
	case PD_TYPE_HARDWARE:
		r = snprintf(buf, n, "%s", c < sizeof(hw) / sizeof(hw[0]) ? hw[c] : "unknown-hardware");
		break;
	case PD_TYPE_SOFTWARE:
		r = snprintf(buf, n, "%s", c < sizeof(sw) / sizeof(sw[0]) ? sw[c] : "unknown-software");
		break;
	case PD_TYPE_RAW:
		r = snprintf(buf, n, "raw 0x%" PRIx64, c);
		break;
	case PD_TYPE_HW_CACHE: {
		unsigned t = c & 0xff, o = (c >> 8) & 0xff, res = (c >> 16) & 0xff;
		const char *err = t >= 7 ? "unknown-ext-hardware-cache-type" : o >= 3 ? "unknown-ext-hardware-cache-op"
				: res >= 2 ? "unknown-ext-hardware-cache-result"
				: !(valid_ops[t] & (1u << o)) ? "invalid-cache" : NULL;
		if (err)
			r = snprintf(buf, n, "%s", err);
		else if (res)
			r = snprintf(buf, n, "%s-%s-%s", cache[t], op[o][0], result[res]);
		else
			r = snprintf(buf, n, "%s-%s", cache[t], op[o][1]);
		break;
	}
	case PD_TYPE_TRACEPOINT:
		return snprintf(buf, n, "unknown tracepoint");
	case PD_TYPE_BREAKPOINT:
		r = snprintf(buf, n, "mem:0x%" PRIx64 ":%s%s%s", a->config1, (a->bp_type & 1) ? "r" : "",
			     (a->bp_type & 2) ? "w" : "", (a->bp_type & 4) ? "x" : "");
		break;
	default:
		return snprintf(buf, n, "unknown attr type: %u", a->type);
	}
	if (r < 0 || (size_t)r >= n)
		return r;
	return r + pd_attr_modifiers(a, buf + r, n - (size_t)r);
}

/*
 * Events the recording does not name get the name perf gives them
 * (pd_evsel_perf_name: "cycles:ppH", "cpu-clock:u", "raw 0x1c2"), so info,
 * export and script all say what perf report, export-to-sqlite.py and perf
 * script say. Tracepoints keep theirs (from the tracing data) or none.
 */
void pd_evlist_default_names(struct pd_evlist *l)
{
	for (size_t i = 0; i < l->n; i++) {
		struct pd_evsel *es = &l->v[i];
		char name[128];
		if (es->given_name || es->attr.type == PD_TYPE_TRACEPOINT)
			continue;
		pd_evsel_perf_name(es, name, sizeof(name));
		if (!es->name || strcmp(es->name, name))
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
