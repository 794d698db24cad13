/*
 * idmap.h - interning of (key1, key2, key3) -> id: the maps every output
 * keeps from the session's objects (threads, symbols, call paths) to its
 * own ids. Open addressing, filled to 3/4 before it doubles (the call
 * paths of a long trace are the largest table an export holds); before
 * it, for maps whose ids never change once given (rb_idmap_intern), a
 * small direct-mapped copy of recently found keys: the call paths of a
 * system-wide recording fill a table of megabytes, while the chains'
 * shared roots, looked up again and again, fit in it. Header-only: the lookups are on every event's path.
 */
#ifndef RB_IDMAP_H
#define RB_IDMAP_H

#include <stdint.h>
#include <stdlib.h>

struct rb_idkey { uint64_t a, b, c; uint64_t id; };
#define RB_IDMAP_FRONT_SLOTS 4096
struct rb_idmap { struct rb_idkey *v; size_t cap, n; struct rb_idkey *front; };

static inline uint64_t rb_idmap_hash(uint64_t a, uint64_t b, uint64_t c)
{
	return (a * 0x9e3779b97f4a7c15ULL) ^ (b * 0xc2b2ae3d27d4eb4fULL) ^ (c * 0x165667b19e3779f9ULL);
}

static inline struct rb_idkey *rb_idmap_slot(struct rb_idmap *m, uint64_t a, uint64_t b, uint64_t c)
{
	size_t mask = m->cap - 1;
	size_t i = (size_t)(rb_idmap_hash(a, b, c) >> 24) & mask;
	while (m->v[i].id && !(m->v[i].a == a && m->v[i].b == b && m->v[i].c == c))
		i = (i + 1) & mask;
	return &m->v[i];
}

/* Returns the slot for (a,b,c): id 0 means new (caller sets it). NULL on OOM. */
static inline struct rb_idkey *rb_idmap_get(struct rb_idmap *m, uint64_t a, uint64_t b, uint64_t c)
{
	if ((m->n + 1) * 4 > m->cap * 3) {       /* filled to 3/4: a table of call paths is the export's largest */
		size_t cap = m->cap ? 2 * m->cap : 1024;
		struct rb_idkey *old = m->v;
		size_t ocap = m->cap;
		m->v = calloc(cap, sizeof(*m->v));
		/*
		 * Each page written once now: lookups would otherwise map fresh pages
		 * to the shared zero page, and the first insert into each would cost
		 * a copy-on-write fault and a TLB flush on every core of the process.
		 */
		for (size_t i = 0; m->v && i < cap * sizeof(*m->v); i += 4096)
			((volatile char *)m->v)[i] = 0;
		if (!m->v) {
			m->v = old;
			return NULL;
		}
		m->cap = cap;
		for (size_t i = 0; i < ocap; i++)
			if (old[i].id)
				*rb_idmap_slot(m, old[i].a, old[i].b, old[i].c) = old[i];
		free(old);
	}
	struct rb_idkey *k = rb_idmap_slot(m, a, b, c);
	if (!k->id) {
		k->a = a;
		k->b = b;
		k->c = c;
		m->n++;
	}
	return k;
}

/* The id set for (a,b,c), 0 if none; never inserts. */
static inline uint64_t rb_idmap_find(const struct rb_idmap *m, uint64_t a, uint64_t b, uint64_t c)
{
	return m->cap ? rb_idmap_slot((struct rb_idmap *)m, a, b, c)->id : 0;
}

/* imap_get for a map whose ids, once set, never change: the front copy answers repeated keys. */
static inline struct rb_idkey *rb_idmap_intern(struct rb_idmap *m, uint64_t a, uint64_t b, uint64_t c)
{
	if (!m->front && !(m->front = calloc(RB_IDMAP_FRONT_SLOTS, sizeof(*m->front))))
		return rb_idmap_get(m, a, b, c);
	struct rb_idkey *f = &m->front[(rb_idmap_hash(a, b, c) >> 40) & (RB_IDMAP_FRONT_SLOTS - 1)];
	if (f->id && f->a == a && f->b == b && f->c == c)
		return f;
	struct rb_idkey *k = rb_idmap_get(m, a, b, c);
	if (k && k->id)
		*f = *k;
	return k;
}

/* Frees the map's memory (the map itself is the caller's). */
static inline void rb_idmap_free(struct rb_idmap *m)
{
	free(m->v);
	free(m->front);
	m->v = m->front = NULL;
	m->cap = m->n = 0;
}

#endif
