/*
 * pd_internal.h - helpers shared by the format library's files: unaligned
 * loads, byte swaps, and the error reporting every parser goes through.
 */
#ifndef PD_INTERNAL_H
#define PD_INTERNAL_H

#include <stdarg.h>
#include <string.h>
#include "pd.h"

static inline uint16_t ld16(const void *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline uint32_t ld32(const void *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t ld64(const void *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static inline void st16(void *p, uint16_t v) { memcpy(p, &v, 2); }
static inline void st32(void *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void st64(void *p, uint64_t v) { memcpy(p, &v, 8); }

/*
 * Report an error: fills @err (if not NULL) and returns @code. Every
 * corruption path in the library goes through here, so one breakpoint on
 * pd_fail catches them all.
 */
int pd_fail(struct pd_error *err, int code, uint64_t offset, int rec_type,
	    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Same, with the feature id set. */
int pd_fail_feature(struct pd_error *err, int code, uint64_t offset, unsigned feat,
		    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Put "<name>: at offset N: " before err->msg and set err->offset. Accepts NULL. */
void pd_error_locate(struct pd_error *err, const char *name, uint64_t offset);

/* Evsel helpers (pd_evsel.c) */
void pd_evsel_compute_layout(struct pd_evsel *es);
size_t pd_sample_id_size(uint64_t sample_type);

/* Strings of feature payloads: u32 len + bytes. Returns bytes consumed or 0 if malformed. */
size_t pd_feat_string(const uint8_t *p, size_t left, const char **s);

#endif

/*
 * The evsel table shared by reader and writer: attrs in native order, an
 * id → evsel hash, and the id positions that attribute a record to its evsel.
 */
struct pd_evlist {
	struct pd_evsel *v;         /* n evsels */
	size_t n, cap;
	uint64_t *keys;             /* open-addressing hash of sample ids; 0 slots are empty */
	int *vals;
	size_t map_cap, map_n;      /* map_cap is a power of two or 0 */
	int has_zero_id;            /* id 0 is stored out of band */
	int zero_id_evsel;
	int id_pos, is_pos;         /* common to all evsels, or -1 */
	int sample_id_all;          /* of the first evsel: trailers on non-sample records */
};

/* Add an evsel from a native attr of @attr_size bytes. Returns its index or < 0. */
int pd_evlist_add(struct pd_evlist *l, const uint8_t *attr, size_t attr_size,
		  const char *name, struct pd_error *err);
/* Add sample ids (native) to evsel @idx. */
int pd_evlist_add_ids(struct pd_evlist *l, int idx, const uint8_t *ids, size_t nr,
		      struct pd_error *err);
int pd_evlist_set_name(struct pd_evlist *l, int idx, const char *name);
/* Name the evsels nothing named (EVENT_DESC, EVENT_UPDATE, simpleperf's META_INFO) as perf does. */
void pd_evlist_default_names(struct pd_evlist *l);
int pd_evlist_find(const struct pd_evlist *l, uint64_t id);
/* Evsel of record @rec (foreign order if @swapped), or -1. */
int pd_evlist_of_record(const struct pd_evlist *l, const uint8_t *rec, size_t size, int swapped);
void pd_evlist_free(struct pd_evlist *l);
