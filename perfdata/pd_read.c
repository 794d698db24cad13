/*
 * pd_read.c - the streaming perf.data reader.
 *
 * Open: detect file or pipe mode and byte order from the magic; in file mode
 * read the header, the attr section with each attr's ids, and every feature
 * section (converted to native order). Then records are read front to back
 * through one buffer: each record is made contiguous in the buffer, converted
 * to native order if the file is foreign, attributed to its evsel, and handed
 * out. Pipe-mode attrs and features arrive as records and are applied as they
 * pass. PERF_RECORD_COMPRESSED payloads are decompressed into a second buffer
 * whose records are handed out next. Payloads outside header.size (AUXTRACE
 * trace data, TRACING_DATA) are read on request or skipped (lseek when the
 * input is seekable), so memory does not depend on the file's size.
 *
 * A perf.data folder (perf record --kcore, --threads) is read through its
 * data file; with the DIR_FORMAT feature (version 1) the records of its
 * data.N files (raw records, no header) follow those of data, file after
 * file in the order readdir lists them, as perf reads them (records of the
 * same time then come in perf's order). They are not merged here: perf writes no FINISHED_ROUND
 * in them, so a reader that orders by time (the session's queue, as perf's
 * ordered_events) sorts them all at the end. A data.N missing between two
 * present, or one cut inside a record, is an error naming the file once
 * the others have been read.
 */
#include "config.h"
#include <byteswap.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef HAVE_ZSTD
#include <zstd.h>
#endif
#include "pd_internal.h"

#define DEFAULT_BUF (4u << 20)
#define MAP_WINDOW (32u << 20)    /* bytes of a regular file mapped at once */
#define MAX_DECOMP (256u << 20)   /* refuse a compressed record that expands past this */
#define MAX_TRACING (256u << 20)  /* tracing data read for its event names up to this size */

struct feat_slot {
	uint8_t *data;
	size_t size;
	uint64_t offset;
	int present;
};

struct tp_name {
	uint64_t id;           /* the format's ID: a tracepoint evsel's attr.config */
	char *name;            /* "system:name" */
};

struct pd_reader {
	char *name;
	int fd, own_fd, seekable;
	struct pd_reader_opts opts;
	struct pd_file_info info;
	struct pd_evlist evl;
	struct feat_slot feat[PD_FEAT_BITS];
	uint32_t nr_cpus_avail;

	uint8_t *buf;          /* input window: buf[pos, end) not yet consumed */
	size_t cap, pos, end;
	uint8_t *rbuf;         /* the read() buffer (cap bytes); buf == rbuf unless mapped */
	int mapped;            /* regular file: the window is an mmap of the file */
	uint8_t *map;          /* current mapping (map_len bytes) or NULL */
	size_t map_len;
	uint64_t buf_off;      /* file offset of buf[0] */
	uint64_t data_end;     /* file offset where records stop (UINT64_MAX: end of stream) */
	int eof;
	uint64_t payload_left; /* unread payload bytes of the current record */
	uint64_t payload_off;

	uint8_t *dbuf;         /* decompressed records: dbuf[dpos, dend) */
	size_t dcap, dpos, dend;
	uint64_t dsrc_off;     /* offset of the COMPRESSED record they came from */
	uint8_t *jbuf;         /* simpleperf's SPLIT records joined: jbuf[0, jlen) */
	size_t jcap, jlen;
#ifdef HAVE_ZSTD
	ZSTD_DCtx *zctx;
#endif
	char **dfiles;         /* perf.data folder (DIR_FORMAT): its data.N files, N = 0.. (NULL: missing) */
	size_t nr_dfiles, next_dfile;
	int missing_said;      /* the first missing data.N was reported (once) */
	size_t *dorder;        /* the N of each, in the folder's listing order (perf reads them so) */
	size_t nr_dorder;
	struct pd_error derr;  /* a cut data.N: said once the other files are read */
	int derr_rc;
	int in_dfile;          /* reading a data.N (raw records, no data section) */
	struct tp_name *tpn;   /* the event formats of the tracing data: tracepoints' names */
	size_t nr_tpn, cap_tpn;
	int tracing_read;      /* the (first) tracing data was read for them, as perf reads it */
};

void pd_reader_opts_init(struct pd_reader_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->size = sizeof(*o);
}

static void warn(struct pd_reader *r, int code, uint64_t off, int type, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void warn(struct pd_reader *r, int code, uint64_t off, int type, const char *fmt, ...)
{
	if (!r->opts.warn)
		return;
	struct pd_error w;
	va_list ap;
	pd_error_clear(&w);
	w.code = code;
	w.offset = off;
	w.rec_type = type;
	va_start(ap, fmt);
	vsnprintf(w.msg, sizeof(w.msg), fmt, ap);
	va_end(ap);
	r->opts.warn(r->opts.warn_ctx, &w);
}

static int io_fail(struct pd_reader *r, struct pd_error *err, uint64_t off, const char *what)
{
	return pd_fail(err, PD_ERR_IO, off, -1, "%s: %s at offset %llu: %s", r->name, what,
		       (unsigned long long)off, strerror(errno));
}

/* Read exactly @len bytes at @off (seekable input only). 1 = short (EOF). */
static int pread_full(struct pd_reader *r, void *dst, size_t len, uint64_t off, struct pd_error *err)
{
	uint8_t *p = dst;
	while (len) {
		ssize_t n = pread(r->fd, p, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return io_fail(r, err, off, "read failed");
		}
		if (n == 0)
			return 1;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static void unmap(struct pd_reader *r)
{
	if (r->map)
		munmap(r->map, r->map_len);
	r->map = NULL;
	r->map_len = 0;
}

/*
 * Mapped input: move the window so that it starts at the page holding the
 * current position and holds @need bytes. Foreign files are mapped private
 * and writable, for the in-place byte swap. 1 = the file ends first.
 */
static int remap(struct pd_reader *r, size_t need, struct pd_error *err)
{
	uint64_t at = r->buf_off + r->pos;
	uint64_t limit = r->data_end < r->info.file_size ? r->data_end : r->info.file_size;
	if (at > limit || limit - at < need) {
		/* expose what is left, so the caller can say how much */
		if (at < limit && r->end - r->pos < limit - at)
			need = (size_t)(limit - at);
		else
			return 1;
	}
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t start = at & ~(page - 1);
	uint64_t len = limit - start < MAP_WINDOW ? limit - start : MAP_WINDOW;
	if (len < at - start + need)
		len = at - start + need;
	unmap(r);
	void *p = mmap(NULL, (size_t)len, PROT_READ | (r->info.swapped ? PROT_WRITE : 0), MAP_PRIVATE,
		       r->fd, (off_t)start);
	if (p == MAP_FAILED)
		return io_fail(r, err, start, "mmap failed");
	madvise(p, (size_t)len, MADV_SEQUENTIAL);
	r->map = p;
	r->map_len = (size_t)len;
	r->buf = p;
	r->buf_off = start;
	r->pos = (size_t)(at - start);
	r->end = (size_t)len;
	return r->end - r->pos >= need && need ? 0 : 1;
}

/* Sequential read into the window until @need bytes are available. 1 = EOF first. */
static int fill(struct pd_reader *r, size_t need, struct pd_error *err)
{
	if (r->end - r->pos >= need)
		return 0;
	if (r->mapped) {
		int rc = remap(r, need, err);
		return rc ? rc : (r->end - r->pos >= need ? 0 : 1);
	}
	if (r->pos) {
		memmove(r->buf, r->buf + r->pos, r->end - r->pos);
		r->buf_off += r->pos;
		r->end -= r->pos;
		r->pos = 0;
	}
	if (need > r->cap) {
		size_t cap = r->cap;
		while (cap < need)
			cap *= 2;
		uint8_t *b = realloc(r->rbuf, cap);
		if (!b)
			return pd_fail(err, PD_ERR_NOMEM, r->buf_off, -1, "out of memory for a %zu-byte record", need);
		r->buf = r->rbuf = b;
		r->cap = cap;
	}
	while (r->end < need) {
		if (r->eof)
			return 1;
		size_t want = r->cap - r->end;
		uint64_t at = r->buf_off + r->end;
		if (r->data_end != UINT64_MAX) {
			if (at >= r->data_end) {
				r->eof = 1;
				return 1;
			}
			if (want > r->data_end - at)
				want = (size_t)(r->data_end - at);
		}
		ssize_t n = read(r->fd, r->buf + r->end, want);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return io_fail(r, err, at, "read failed");
		}
		if (n == 0) {
			r->eof = 1;
			return 1;
		}
		r->end += (size_t)n;
	}
	return 0;
}

/* Consume @n bytes of payload (not buffered). 1 = the input ended first. */
static int skip_bytes(struct pd_reader *r, uint64_t n, struct pd_error *err)
{
	size_t inbuf = r->end - r->pos;
	if (n <= inbuf) {
		r->pos += (size_t)n;
		return 0;
	}
	n -= inbuf;
	r->buf_off += r->end;
	r->pos = r->end = 0;
	if (r->mapped) {
		unmap(r);
		uint64_t to = r->buf_off + n;
		if (to > r->info.file_size)
			return 1;
		r->buf_off = to;
		return 0;
	}
	if (r->seekable) {
		uint64_t to = r->buf_off + n;
		if (r->info.file_size && to > r->info.file_size)
			return 1;
		if (lseek(r->fd, (off_t)to, SEEK_SET) < 0)
			return io_fail(r, err, to, "seek failed");
		r->buf_off = to;
		return 0;
	}
	while (n) {
		int rc = fill(r, n < r->cap ? (size_t)n : r->cap, err);
		if (rc < 0)
			return rc;
		size_t got = r->end - r->pos;
		size_t take = got < n ? got : (size_t)n;
		r->pos += take;
		n -= take;
		if (rc > 0 && n)
			return 1;
	}
	return 0;
}

/* ------------------------------------------------------------ features */

static int store_feature(struct pd_reader *r, unsigned feat, const uint8_t *data, size_t size,
			 uint64_t off)
{
	struct feat_slot *f = &r->feat[feat];
	uint8_t *copy = malloc(size ? size : 1);
	if (!copy)
		return PD_ERR_NOMEM;
	memcpy(copy, data, size);
	if (r->info.swapped) {
		struct pd_error ferr;
		if (pd_swap_feature(feat, copy, size, 1, r->nr_cpus_avail, &ferr) < 0) {
			warn(r, ferr.code, off, -1, "%s: %s (at offset %llu); it is ignored", r->name,
			     ferr.msg, (unsigned long long)off);
			free(copy);
			return 0;   /* not stored */
		}
	}
	free(f->data);
	f->data = copy;
	f->size = size;
	f->offset = off;
	f->present = 1;
	if (feat == PD_FEAT_NRCPUS && size >= 8)
		r->nr_cpus_avail = ld32(copy);
	return 1;
}

/*
 * Names from EVENT_DESC: u32 nr, u32 attr_size, {attr, u32 nr_ids, string
 * name, u64 ids[]}. An entry names the evsel that has its first id (in pipe
 * mode the feature may come before or after the ATTR records), or, when it
 * lists no ids, the evsel at its index. @given: perf applies it too (not
 * to an event announced after the feature in pipe mode: pd_evsel.given_name).
 */
static void apply_event_desc(struct pd_reader *r, int given)
{
	struct feat_slot *f = &r->feat[PD_FEAT_EVENT_DESC];
	if (!f->present || f->size < 8)
		return;
	const uint8_t *p = f->data, *end = f->data + f->size;
	uint32_t nr = ld32(p), asz = ld32(p + 4);
	p += 8;
	for (uint32_t i = 0; i < nr; i++) {
		if ((size_t)(end - p) < (uint64_t)asz + 4)
			goto bad;
		p += asz;
		uint32_t nr_ids = ld32(p);
		p += 4;
		const char *name;
		size_t n = pd_feat_string(p, (size_t)(end - p), &name);
		if (!n)
			goto bad;
		p += n;
		if ((uint64_t)(end - p) / 8 < nr_ids)
			goto bad;
		int idx = nr_ids ? pd_evlist_find(&r->evl, ld64(p)) : (i < r->evl.n ? (int)i : -1);
		if (idx >= 0 && name[0]) {
			pd_evlist_set_name(&r->evl, idx, name);
			r->evl.v[idx].given_name |= given;
		}
		p += 8 * (size_t)nr_ids;
	}
	return;
bad:
	warn(r, PD_ERR_FEATURE, f->offset, -1, "%s: event_desc feature at offset %llu is malformed; event names may be missing",
	     r->name, (unsigned long long)f->offset);
}

/*
 * perf names a tracepoint nothing else named "system:name" from the event
 * formats of the tracing data (evsel__prepare_tracepoint_event): in pipe
 * mode without EVENT_DESC (perf before 4.x, probe.data.stream) and in a
 * file whose EVENT_DESC is missing or names nothing.
 */
static void apply_tracing_names(struct pd_reader *r)
{
	for (size_t i = 0; i < r->evl.n && r->nr_tpn; i++) {
		const struct pd_evsel *es = &r->evl.v[i];
		if (es->attr.type != PD_TYPE_TRACEPOINT || (es->name && es->name[0]))
			continue;
		for (size_t k = 0; k < r->nr_tpn; k++)
			if (r->tpn[k].id == es->attr.config) {
				pd_evlist_set_name(&r->evl, (int)i, r->tpn[k].name);
				break;
			}
	}
}

static void tp_name_add(void *ctx, uint64_t id, const char *sys, const char *name)
{
	struct pd_reader *r = ctx;
	if (r->nr_tpn == r->cap_tpn) {
		size_t cap = r->cap_tpn ? 2 * r->cap_tpn : 64;
		struct tp_name *v = realloc(r->tpn, cap * sizeof(*v));
		if (!v)
			return;    /* that event stays unnamed, as one the formats leave out */
		r->tpn = v;
		r->cap_tpn = cap;
	}
	size_t n = strlen(sys) + strlen(name) + 2;
	char *s = malloc(n);
	if (!s)
		return;
	snprintf(s, n, "%s:%s", sys, name);
	r->tpn[r->nr_tpn++] = (struct tp_name){ id, s };
}

static void tp_warn(void *ctx, uint64_t off, const char *msg)
{
	struct pd_reader *r = ctx;
	warn(r, PD_ERR_FEATURE, off, PD_RECORD_HEADER_TRACING_DATA, "%s: %s; tracepoints it does not name stay unnamed",
	     r->name, msg);
}

/* The first tracing data of the recording (@size bytes at file offset @off): its event names. */
static void read_tracing_names(struct pd_reader *r, const uint8_t *d, size_t size, uint64_t off)
{
	if (r->tracing_read)
		return;
	r->tracing_read = 1;
	pd_tracing_each(d, size, off, tp_name_add, tp_warn, r);
	apply_tracing_names(r);
}

/* simpleperf's META_INFO names the events perf would name from EVENT_DESC or its tracing data */
static void apply_sp_meta_info(struct pd_reader *r)
{
	struct feat_slot *f = &r->feat[PD_FEAT_SP_META_INFO];
	char name[256];
	for (size_t i = 0; f->present && i < r->evl.n; i++) {
		const struct pd_evsel *es = &r->evl.v[i];
		if ((!es->name || !es->name[0]) &&
		    pd_sp_event_name(f->data, f->size, es->attr.type, es->attr.config, name, sizeof(name))) {
			pd_evlist_set_name(&r->evl, (int)i, name);
			r->evl.v[i].given_name = 1;
		}
	}
}

/*
 * simpleperf adds to the name event_type_info gives an event ":u" when only
 * the kernel is excluded and ":k" when only user space is (event_attr.cpp,
 * GetEventNameByAttr): its own tests expect "cpu-clock:u".
 */
static void sp_name_modifiers(struct pd_reader *r)
{
	if (!r->feat[PD_FEAT_SP_META_INFO].present)
		return;
	for (size_t i = 0; i < r->evl.n; i++) {
		const struct pd_evsel *es = &r->evl.v[i];
		int xk = pd_attr_flag(&es->attr, PD_ATTR_EXCLUDE_KERNEL), xu = pd_attr_flag(&es->attr, PD_ATTR_EXCLUDE_USER);
		char name[300];
		if (!es->given_name || !es->name || xk == xu)
			continue;
		snprintf(name, sizeof(name), "%s:%c", es->name, xk ? 'u' : 'k');
		pd_evlist_set_name(&r->evl, (int)i, name);
	}
}

static int read_feature_table(struct pd_reader *r, struct pd_error *err)
{
	unsigned nr = 0;
	for (int i = 0; i < 4; i++)
		nr += (unsigned)__builtin_popcountll(r->info.features[i]);
	if (!nr)
		return 0;
	uint64_t table = r->info.data_offset + r->info.data_size;
	if (r->info.data_size_unknown) {
		warn(r, PD_ERR_HEADER, PD_NO_OFFSET, -1,
		     "%s: the writer did not finish (data size 0): feature sections are not read", r->name);
		return 0;
	}
	if (table + 16ull * nr > r->info.file_size) {
		warn(r, PD_ERR_TRUNCATED, table, -1,
		     "%s: feature table at offset %llu (%u entries) lies past the end of the file (%llu bytes); features are ignored",
		     r->name, (unsigned long long)table, nr, (unsigned long long)r->info.file_size);
		return 0;
	}
	uint8_t *tab = malloc(16ull * nr);
	if (!tab)
		return pd_fail(err, PD_ERR_NOMEM, table, -1, "out of memory");
	int rc = pread_full(r, tab, 16ull * nr, table, err);
	if (rc) {
		free(tab);
		return rc < 0 ? rc : pd_fail(err, PD_ERR_TRUNCATED, table, -1, "%s: feature table truncated", r->name);
	}
	unsigned k = 0;
	for (unsigned feat = 0; feat < PD_FEAT_BITS; feat++) {
		if (!(r->info.features[feat / 64] >> (feat % 64) & 1))
			continue;
		uint64_t off = ld64(tab + 16 * k), size = ld64(tab + 16 * k + 8);
		k++;
		if (r->info.swapped) {
			off = bswap_64(off);
			size = bswap_64(size);
		}
		if (!pd_feature_name(feat))
			warn(r, 0, table + 16 * (k - 1), -1, "%s: feature %u is unknown to this reader; skipped", r->name, feat);
		if (off > r->info.file_size || size > r->info.file_size - off) {
			warn(r, PD_ERR_FEATURE, table + 16 * (k - 1), -1,
			     "%s: feature %s: section [%llu, +%llu) lies outside the file; ignored", r->name,
			     pd_feature_name(feat) ? pd_feature_name(feat) : "?", (unsigned long long)off,
			     (unsigned long long)size);
			continue;
		}
		uint8_t *data = malloc(size ? size : 1);
		if (!data) {
			free(tab);
			return pd_fail(err, PD_ERR_NOMEM, off, -1, "out of memory for feature %u (%llu bytes)",
				       feat, (unsigned long long)size);
		}
		rc = pread_full(r, data, size, off, err);
		if (rc == 0 && store_feature(r, feat, data, size, off) < 0)
			rc = PD_ERR_NOMEM;
		free(data);
		if (rc < 0) {
			free(tab);
			return rc == PD_ERR_NOMEM ? pd_fail(err, rc, off, -1, "out of memory") : rc;
		}
	}
	free(tab);
	return 0;
}

/* --------------------------------------------------------------- header */

static int read_attrs(struct pd_reader *r, struct pd_error *err)
{
	struct pd_file_info *in = &r->info;
	if (in->attr_size > 65536 || in->attr_size > in->file_size)
		return pd_fail(err, PD_ERR_HEADER, 16, -1, "%s: attr entry size %llu (header field at offset 16) is absurd",
			       r->name, (unsigned long long)in->attr_size);
	if (in->attr_size < PD_ATTR_SIZE_VER0 + 16)
		return pd_fail(err, PD_ERR_HEADER, 16, -1, "%s: attr entry size %llu (header field at offset 16) is smaller than the minimum %d",
			       r->name, (unsigned long long)in->attr_size, PD_ATTR_SIZE_VER0 + 16);
	if (in->attrs_size % in->attr_size)
		warn(r, PD_ERR_HEADER, 24, -1, "%s: attr section size %llu is not a multiple of the entry size %llu",
		     r->name, (unsigned long long)in->attrs_size, (unsigned long long)in->attr_size);
	uint64_t nr = in->attrs_size / in->attr_size;
	uint8_t *ent = malloc(in->attr_size);
	if (!ent)
		return pd_fail(err, PD_ERR_NOMEM, in->attrs_offset, -1, "out of memory");
	int rc = 0;
	for (uint64_t i = 0; i < nr && rc == 0; i++) {
		uint64_t off = in->attrs_offset + i * in->attr_size;
		rc = pread_full(r, ent, in->attr_size, off, err);
		if (rc) {
			if (rc > 0)
				rc = pd_fail(err, PD_ERR_TRUNCATED, off, -1, "%s: attr %llu at offset %llu is cut off by the end of the file",
					     r->name, (unsigned long long)i, (unsigned long long)off);
			break;
		}
		uint32_t asz = ld32(ent + 4);
		if (in->swapped)
			asz = bswap_32(asz);
		if (asz == 0)
			asz = PD_ATTR_SIZE_VER0;
		if (asz < PD_ATTR_SIZE_VER0 || asz > in->attr_size - 16) {
			rc = pd_fail(err, PD_ERR_ATTR, off + 4, -1,
				     "%s: attr %llu at offset %llu claims %u bytes, but entries are %llu bytes with 16 for ids",
				     r->name, (unsigned long long)i, (unsigned long long)off, asz,
				     (unsigned long long)in->attr_size);
			break;
		}
		if (in->swapped)
			pd_swap_attr(ent, asz, 1);
		uint64_t ids_off = ld64(ent + asz), ids_size = ld64(ent + asz + 8);
		if (in->swapped) {
			ids_off = bswap_64(ids_off);
			ids_size = bswap_64(ids_size);
		}
		int idx = pd_evlist_add(&r->evl, ent, asz, NULL, err);
		if (idx < 0) {
			rc = idx;
			break;
		}
		if (!ids_size)
			continue;
		if (ids_off > in->file_size || ids_size > in->file_size - ids_off || ids_size % 8) {
			rc = pd_fail(err, PD_ERR_ATTR, off + asz, -1,
				     "%s: attr %llu: id array [%llu, +%llu) lies outside the file or is not whole u64s",
				     r->name, (unsigned long long)i, (unsigned long long)ids_off, (unsigned long long)ids_size);
			break;
		}
		uint8_t *ids = malloc(ids_size);
		if (!ids) {
			rc = pd_fail(err, PD_ERR_NOMEM, ids_off, -1, "out of memory");
			break;
		}
		rc = pread_full(r, ids, ids_size, ids_off, err);
		if (rc == 0) {
			if (in->swapped)
				for (uint64_t k = 0; k < ids_size / 8; k++)
					st64(ids + 8 * k, bswap_64(ld64(ids + 8 * k)));
			rc = pd_evlist_add_ids(&r->evl, idx, ids, ids_size / 8, err);
		} else if (rc > 0) {
			rc = pd_fail(err, PD_ERR_TRUNCATED, ids_off, -1, "%s: id array truncated", r->name);
		}
		free(ids);
	}
	free(ent);
	return rc;
}

static int read_file_header(struct pd_reader *r, const uint8_t *h, struct pd_error *err)
{
	struct pd_file_info *in = &r->info;
	uint64_t v[9];
	for (int i = 0; i < 9; i++) {
		v[i] = ld64(h + 8 * i);
		if (in->swapped)
			v[i] = bswap_64(v[i]);
	}
	in->header_size = v[1];
	in->attr_size = v[2];
	in->attrs_offset = v[3];
	in->attrs_size = v[4];
	in->data_offset = v[5];
	in->data_size = v[6];
	if (in->header_size != PD_FILE_HEADER_SIZE && in->header_size != PD_FILE_HEADER_SIZE_OLD)
		return pd_fail(err, PD_ERR_HEADER, 8, -1, "%s: header size %llu (header field at offset 8) is neither %d nor %d",
			       r->name, (unsigned long long)in->header_size, PD_FILE_HEADER_SIZE, PD_FILE_HEADER_SIZE_OLD);
	if (in->legacy_magic) {
		/* v1: byte order from attr_size (perf try_all_file_abis) */
		static const uint64_t abis[] = { 64, 72, 80, 96, 104 };
		int found = 0;
		for (int sw = 0; sw < 2 && !found; sw++)
			for (unsigned i = 0; i < 5; i++) {
				uint64_t a = sw ? bswap_64(ld64(h + 16)) : ld64(h + 16);
				if (a == abis[i] + 16) {
					if (sw != in->swapped)
						return pd_fail(err, PD_ERR_HEADER, 16, -1, "%s: legacy header byte order unclear (attr size at offset 16)", r->name);
					found = 1;
					break;
				}
			}
		if (!found)
			return pd_fail(err, PD_ERR_HEADER, 16, -1, "%s: legacy PERFFILE header with unknown attr size %llu at offset 16",
				       r->name, (unsigned long long)in->attr_size);
	}
	if (in->attr_size == 0)
		return pd_fail(err, PD_ERR_HEADER, 16, -1, "%s: attr size (header field at offset 16) is 0: the file was not finalised", r->name);
	if (in->header_size == PD_FILE_HEADER_SIZE) {
		for (int i = 0; i < 4; i++)
			in->features[i] = ld64(h + 72 + 8 * i);
		if (in->swapped) {
			/* perf's heuristic: a u64 swap must leave HOSTNAME set, else try u32 words */
			uint64_t f[4];
			for (int i = 0; i < 4; i++)
				f[i] = bswap_64(in->features[i]);
			if (!(f[0] & (1ULL << PD_FEAT_HOSTNAME))) {
				for (int i = 0; i < 4; i++) {
					uint64_t x = f[i];
					f[i] = x >> 32 | x << 32;
				}
				if (!(f[0] & (1ULL << PD_FEAT_HOSTNAME))) {
					memset(f, 0, sizeof(f));
					f[0] = 1ULL << PD_FEAT_BUILD_ID;
				}
			}
			memcpy(in->features, f, sizeof(f));
		}
	}
	if ((in->attrs_size && in->header_size > in->attrs_offset) || in->header_size > in->data_offset)
		return pd_fail(err, PD_ERR_HEADER, 24, -1,
			       "%s: attr section (offset %llu, header field at offset 24) or data section (offset %llu, header field at offset 40) overlaps the %llu-byte header",
			       r->name, (unsigned long long)in->attrs_offset, (unsigned long long)in->data_offset,
			       (unsigned long long)in->header_size);
	if (in->attrs_offset > in->file_size || in->attrs_size > in->file_size - in->attrs_offset)
		return pd_fail(err, PD_ERR_TRUNCATED, 24, -1,
			       "%s: attr section [%llu, +%llu) (header fields at offsets 24 and 32) lies past the end of the file (%llu bytes)", r->name,
			       (unsigned long long)in->attrs_offset, (unsigned long long)in->attrs_size,
			       (unsigned long long)in->file_size);
	if (in->attrs_size && in->data_size &&
	    in->attrs_offset < in->data_offset + in->data_size && in->data_offset < in->attrs_offset + in->attrs_size)
		return pd_fail(err, PD_ERR_HEADER, 24, -1, "%s: attr and data sections (header fields at offsets 24 and 40) overlap", r->name);
	if (in->data_offset > in->file_size)
		return pd_fail(err, PD_ERR_TRUNCATED, 40, -1, "%s: data section starts at %llu (header field at offset 40), past the end of the file (%llu bytes)",
			       r->name, (unsigned long long)in->data_offset, (unsigned long long)in->file_size);
	if (in->data_size == 0) {
		in->data_size_unknown = 1;
		r->data_end = UINT64_MAX;
		warn(r, PD_ERR_HEADER, 48, -1, "%s: data size is 0 (the writer did not finish); reading records to the end of the file",
		     r->name);
	} else {
		r->data_end = in->data_offset + in->data_size;
		if (in->data_size > in->file_size - in->data_offset)
			warn(r, PD_ERR_TRUNCATED, 48, -1,
			     "%s: data section [%llu, +%llu) runs past the end of the file (%llu bytes): the file is truncated",
			     r->name, (unsigned long long)in->data_offset, (unsigned long long)in->data_size,
			     (unsigned long long)in->file_size);
	}
	int rc = read_attrs(r, err);
	if (rc)
		return rc;
	rc = read_feature_table(r, err);
	if (rc)
		return rc;
	apply_event_desc(r, 1);
	apply_sp_meta_info(r);
	sp_name_modifiers(r);
	if (r->feat[PD_FEAT_TRACING_DATA].present)
		read_tracing_names(r, r->feat[PD_FEAT_TRACING_DATA].data, r->feat[PD_FEAT_TRACING_DATA].size,
				   r->feat[PD_FEAT_TRACING_DATA].offset);
	pd_evlist_default_names(&r->evl);
	if (lseek(r->fd, (off_t)in->data_offset, SEEK_SET) < 0)
		return io_fail(r, err, in->data_offset, "seek to data failed");
	r->buf_off = in->data_offset;
	r->pos = r->end = 0;
	r->mapped = 1;     /* records are read from a sliding mmap window from here on */
	return 0;
}

int pd_reader_open_fd(struct pd_reader **out, int fd, const char *name, int own,
		      const struct pd_reader_opts *opts, struct pd_error *err)
{
	pd_error_clear(err);
	*out = NULL;
	struct pd_reader *r = calloc(1, sizeof(*r));
	if (!r) {
		if (own)
			close(fd);
		return pd_fail(err, PD_ERR_NOMEM, PD_NO_OFFSET, -1, "out of memory");
	}
	r->fd = fd;
	r->own_fd = own;
	pd_reader_opts_init(&r->opts);
	if (opts)
		memcpy(&r->opts, opts, opts->size < sizeof(r->opts) ? opts->size : sizeof(r->opts));
	r->name = strdup(name ? name : "<input>");
	r->cap = r->opts.buf_size ? r->opts.buf_size : DEFAULT_BUF;
	if (r->cap < 65536 + 16)
		r->cap = 65536 + 16;
	r->buf = r->rbuf = malloc(r->cap);
	r->data_end = UINT64_MAX;
	int rc;
	if (!r->name || !r->buf) {
		rc = pd_fail(err, PD_ERR_NOMEM, PD_NO_OFFSET, -1, "out of memory");
		goto err_out;
	}
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		r->seekable = 1;
		r->info.file_size = (uint64_t)st.st_size;
		posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	}
	if (r->seekable) {
		/* records of a regular file are read through mmap: only the magic and header size are read here */
		size_t have = r->info.file_size < 16 ? (size_t)r->info.file_size : 16;
		rc = pread_full(r, r->buf, have, 0, err);
		if (!rc) {
			r->end = have;
			rc = have < 16;
		}
	} else {
		rc = fill(r, 16, err);
	}
	if (rc) {
		if (rc > 0)
			rc = pd_fail(err, r->end ? PD_ERR_TRUNCATED : PD_ERR_MAGIC, 0, -1,
				     "%s: %zu bytes are too few for a perf.data header", r->name, r->end);
		goto err_out;
	}
	uint64_t magic = ld64(r->buf);
	if (magic == PD_MAGIC2) {
		r->info.swapped = 0;
	} else if (magic == PD_MAGIC2_SWAPPED) {
		r->info.swapped = 1;
	} else if (magic == PD_MAGIC1 || magic == bswap_64(PD_MAGIC1)) {
		r->info.legacy_magic = 1;
		r->info.swapped = magic != PD_MAGIC1;
	} else {
		rc = pd_fail(err, PD_ERR_MAGIC, 0, -1, "%s: not a perf.data file (magic %016llx is neither PERFILE2 nor PERFFILE)",
			     r->name, (unsigned long long)magic);
		goto err_out;
	}
	uint64_t hsize = ld64(r->buf + 8);
	if (r->info.swapped)
		hsize = bswap_64(hsize);
	if (hsize == PD_PIPE_HEADER_SIZE) {
		r->info.pipe_mode = 1;
		r->info.header_size = hsize;
		r->pos = 16;
		if (r->seekable) {
			r->buf_off = 16;
			r->pos = r->end = 0;
			r->mapped = 1;
		}
		return *out = r, 0;
	}
	if (!r->seekable) {
		rc = pd_fail(err, PD_ERR_UNSUPPORTED, 8, -1,
			     "%s: a file-mode perf.data must be a regular file (it is read out of order); use pipe mode for streams",
			     r->name);
		goto err_out;
	}
	uint8_t h[PD_FILE_HEADER_SIZE] = { 0 };
	rc = pread_full(r, h, hsize == PD_FILE_HEADER_SIZE ? PD_FILE_HEADER_SIZE : PD_FILE_HEADER_SIZE_OLD, 0, err);
	if (rc) {
		if (rc > 0)
			rc = pd_fail(err, PD_ERR_TRUNCATED, 0, -1, "%s: file ends inside the %llu-byte header", r->name,
				     (unsigned long long)hsize);
		goto err_out;
	}
	rc = read_file_header(r, h, err);
	if (rc)
		goto err_out;
	*out = r;
	return 0;
err_out:
	pd_reader_free(r);
	return rc;
}

int pd_reader_open(struct pd_reader **out, const char *path,
		   const struct pd_reader_opts *opts, struct pd_error *err)
{
	pd_error_clear(err);
	*out = NULL;
	if (!path)
		return pd_fail(err, PD_ERR_INVAL, PD_NO_OFFSET, -1, "no input path");
	if (!strcmp(path, "-"))
		return pd_reader_open_fd(out, 0, "<stdin>", 0, opts, err);
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {     /* a perf.data folder (--kcore, --threads) */
		size_t n = strlen(path) + sizeof("/data");
		char *data = malloc(n);
		if (!data)
			return pd_fail(err, PD_ERR_NOMEM, PD_NO_OFFSET, -1, "out of memory");
		snprintf(data, n, "%s/data", path);
		int rc = access(data, F_OK) == 0 ? pd_reader_open_as(out, data, data, opts, err) : 1;
		free(data);
		if (rc <= 0)
			return rc;
	}
	return pd_reader_open_as(out, path, path, opts, err);
}

/* DIR_FORMAT: list the data.N files beside @path (the folder's data file). */
static int list_dir_files(struct pd_reader *r, const char *path, struct pd_error *err)
{
	const struct feat_slot *f = &r->feat[PD_FEAT_DIR_FORMAT];
	if (!f->present || r->info.pipe_mode)
		return 0;
	uint64_t version = f->size >= 8 ? ld64(f->data) : 0;
	if (version != 1)
		return pd_fail(err, PD_ERR_UNSUPPORTED, f->offset, -1,
			       "%s: perf.data folder of format version %llu (only 1 is known)", r->name,
			       (unsigned long long)version);
	const char *slash = strrchr(path, '/');
	size_t dlen = slash ? (size_t)(slash - path) : 1;
	char *dir = slash ? strndup(path, dlen ? dlen : 1) : strdup(".");
	DIR *d = dir ? opendir(dir) : NULL;
	if (!d) {
		int e = errno;
		free(dir);
		return dir ? pd_fail(err, PD_ERR_IO, PD_NO_OFFSET, -1, "%s: cannot list the perf.data folder: %s",
				     r->name, strerror(e))
			   : pd_fail(err, PD_ERR_NOMEM, PD_NO_OFFSET, -1, "out of memory");
	}
	struct dirent *de;
	int rc = 0;
	while (!rc && (de = readdir(d))) {
		char *end;
		if (strncmp(de->d_name, "data.", 5) || !de->d_name[5] || de->d_name[5] == '-')
			continue;
		unsigned long n = strtoul(de->d_name + 5, &end, 10);
		if (*end || n > 65535)
			continue;
		size_t *o = realloc(r->dorder, (r->nr_dorder + 1) * sizeof(*o));
		if (!o) {
			rc = pd_fail(err, PD_ERR_NOMEM, PD_NO_OFFSET, -1, "out of memory");
			break;
		}
		r->dorder = o;
		if (n < r->nr_dfiles && r->dfiles[n])
			continue;
		r->dorder[r->nr_dorder++] = n;
		if (n >= r->nr_dfiles) {
			char **v = realloc(r->dfiles, (n + 1) * sizeof(*v));
			if (!v) {
				rc = pd_fail(err, PD_ERR_NOMEM, PD_NO_OFFSET, -1, "out of memory");
				break;
			}
			memset(v + r->nr_dfiles, 0, (n + 1 - r->nr_dfiles) * sizeof(*v));
			r->dfiles = v;
			r->nr_dfiles = n + 1;
		}
		size_t len = strlen(dir) + strlen(de->d_name) + 2;
		if (!(r->dfiles[n] = malloc(len)))
			rc = pd_fail(err, PD_ERR_NOMEM, PD_NO_OFFSET, -1, "out of memory");
		else
			snprintf(r->dfiles[n], len, "%s/%s", dir, de->d_name);
	}
	closedir(d);
	free(dir);
	return rc;
}

int pd_reader_open_as(struct pd_reader **out, const char *path, const char *name,
		      const struct pd_reader_opts *opts, struct pd_error *err)
{
	pd_error_clear(err);
	*out = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return pd_fail(err, PD_ERR_IO, PD_NO_OFFSET, -1, "%s: cannot open: %s", name, strerror(errno));
	int rc = pd_reader_open_fd(out, fd, name, 1, opts, err);
	if (rc == 0 && (rc = list_dir_files(*out, path, err)) < 0) {
		pd_reader_free(*out);
		*out = NULL;
	}
	return rc;
}

void pd_reader_free(struct pd_reader *r)
{
	if (!r)
		return;
	if (r->own_fd && r->fd >= 0)
		close(r->fd);
	for (unsigned i = 0; i < PD_FEAT_BITS; i++)
		free(r->feat[i].data);
	pd_evlist_free(&r->evl);
	for (size_t i = 0; i < r->nr_tpn; i++)
		free(r->tpn[i].name);
	free(r->tpn);
#ifdef HAVE_ZSTD
	ZSTD_freeDCtx(r->zctx);
#endif
	free(r->dbuf);
	free(r->jbuf);
	for (size_t i = 0; i < r->nr_dfiles; i++)
		free(r->dfiles[i]);
	free(r->dfiles);
	free(r->dorder);
	unmap(r);
	free(r->rbuf);
	free(r->name);
	free(r);
}

/* -------------------------------------------------------------- records */

/* Decompress a COMPRESSED(2) payload, appending records to dbuf. */
static int decompress(struct pd_reader *r, const uint8_t *src, size_t len, uint64_t off,
		      struct pd_error *err)
{
#ifdef HAVE_ZSTD
	if (!r->zctx && !(r->zctx = ZSTD_createDCtx()))
		return pd_fail(err, PD_ERR_NOMEM, off, PD_RECORD_COMPRESSED, "out of memory for zstd");
	if (r->dpos) {
		memmove(r->dbuf, r->dbuf + r->dpos, r->dend - r->dpos);
		r->dend -= r->dpos;
		r->dpos = 0;
	}
	ZSTD_inBuffer in = { src, len, 0 };
	while (in.pos < in.size) {
		if (r->dcap - r->dend < 65536) {
			size_t cap = r->dcap ? 2 * r->dcap : (1u << 20);
			if (cap > MAX_DECOMP)
				return pd_fail(err, PD_ERR_RECORD, off, PD_RECORD_COMPRESSED,
					       "%s: compressed record at offset %llu expands past %u MiB of pending records",
					       r->name, (unsigned long long)off, MAX_DECOMP >> 20);
			uint8_t *b = realloc(r->dbuf, cap);
			if (!b)
				return pd_fail(err, PD_ERR_NOMEM, off, PD_RECORD_COMPRESSED, "out of memory");
			r->dbuf = b;
			r->dcap = cap;
		}
		ZSTD_outBuffer out = { r->dbuf, r->dcap, r->dend };
		size_t ret = ZSTD_decompressStream(r->zctx, &out, &in);
		if (ZSTD_isError(ret))
			return pd_fail(err, PD_ERR_RECORD, off, PD_RECORD_COMPRESSED,
				       "%s: compressed record at offset %llu: zstd: %s", r->name,
				       (unsigned long long)off, ZSTD_getErrorName(ret));
		r->dend = out.pos;
		if (ret != 0 && in.pos == in.size && out.pos < out.size)
			break;   /* frame continues in the next record */
	}
	r->dsrc_off = off;
	return 0;
#else
	(void)src; (void)len;
	return pd_fail(err, PD_ERR_UNSUPPORTED, off, PD_RECORD_COMPRESSED,
		       "%s: compressed records at offset %llu need zstd support, which this build lacks",
		       r->name, (unsigned long long)off);
#endif
}

/* Pipe-mode and stream-wide bookkeeping for user records. Returns 0 or < 0. */
static int apply_user_record(struct pd_reader *r, struct pd_record *rec, struct pd_error *err)
{
	uint8_t *d = rec->data;
	switch (rec->type) {
	case PD_RECORD_HEADER_ATTR: {
		if (rec->size < 8 + PD_ATTR_SIZE_VER0)
			return pd_fail(err, PD_ERR_ATTR, rec->offset, (int)rec->type,
				       "%s: ATTR record at offset %llu has %u bytes, fewer than an attr",
				       r->name, (unsigned long long)rec->offset, rec->size);
		uint32_t asz = ld32(d + 12);
		if (asz == 0)
			asz = PD_ATTR_SIZE_VER0;
		if (asz < PD_ATTR_SIZE_VER0 || asz > (uint32_t)rec->size - 8)
			return pd_fail(err, PD_ERR_ATTR, rec->offset, (int)rec->type,
				       "%s: ATTR record at offset %llu: attr size %u does not fit its %u bytes",
				       r->name, (unsigned long long)rec->offset, asz, rec->size);
		int idx = pd_evlist_add(&r->evl, d + 8, asz, NULL, err);
		if (idx < 0)
			return idx;
		int rc = pd_evlist_add_ids(&r->evl, idx, d + 8 + asz, (rec->size - 8 - asz) / 8, err);
		apply_event_desc(r, 0); /* an EVENT_DESC seen earlier may name it (perf's does not) */
		apply_tracing_names(r);
		pd_evlist_default_names(&r->evl);
		return rc;
	}
	case PD_RECORD_HEADER_FEATURE: {
		if (rec->size < 16)
			return pd_fail(err, PD_ERR_RECORD, rec->offset, (int)rec->type,
				       "%s: FEATURE record at offset %llu is too short", r->name,
				       (unsigned long long)rec->offset);
		uint64_t feat = ld64(d + 8);
		if (feat >= PD_FEAT_BITS) {
			warn(r, PD_ERR_FEATURE, rec->offset, (int)rec->type, "%s: FEATURE record at offset %llu has id %llu; ignored",
			     r->name, (unsigned long long)rec->offset, (unsigned long long)feat);
			return 0;
		}
		/* perf's HEADER_LAST_FEATURE terminator: an empty record with the first id past its list */
		if (feat >= PD_FEAT_KNOWN_MAX || (feat >= PD_FEAT_PIPE_LAST_61 && rec->size == 16))
			return 0;
		int stored = store_feature(r, (unsigned)feat, d + 16, rec->size - 16u, rec->offset + 16);
		if (stored < 0)
			return pd_fail(err, PD_ERR_NOMEM, rec->offset, (int)rec->type, "out of memory");
		/* the stored copy was converted to native order; the record shows the same bytes */
		if (stored && r->info.swapped)
			memcpy(d + 16, r->feat[feat].data, r->feat[feat].size);
		if (feat == PD_FEAT_EVENT_DESC)
			apply_event_desc(r, 1);
		return 0;
	}
	case PD_RECORD_EVENT_UPDATE: {
		if (rec->size >= 24 && ld64(d + 8) == 2) {    /* NAME */
			int idx = pd_evlist_find(&r->evl, ld64(d + 16));
			size_t n = strnlen((const char *)d + 24, rec->size - 24u);
			if (idx >= 0 && n < rec->size - 24u) {
				pd_evlist_set_name(&r->evl, idx, (const char *)d + 24);
				r->evl.v[idx].given_name = 1;
			}
		}
		return 0;
	}
	case PD_RECORD_COMPRESSED:
		return decompress(r, d + 8, rec->size - 8u, rec->offset, err);
	case PD_RECORD_COMPRESSED2: {
		uint64_t dsz = rec->size >= 16 ? ld64(d + 8) : UINT64_MAX;
		if (dsz > rec->size - 16u)
			return pd_fail(err, PD_ERR_RECORD, rec->offset, (int)rec->type,
				       "%s: COMPRESSED2 record at offset %llu claims %llu bytes of data in %u",
				       r->name, (unsigned long long)rec->offset, (unsigned long long)dsz, rec->size);
		return decompress(r, d + 16, (size_t)dsz, rec->offset, err);
	}
	}
	return 0;
}

/*
 * simpleperf writes TRACING_DATA (66) with the data inside the record:
 * u32 size, then the data padded to 64 (record.cpp TracingDataRecord);
 * perf's record is 16 bytes and the data follows it.
 */
static int sp_tracing_data(const struct pd_record *rec)
{
	uint64_t n = ld32(rec->data + 8);
	return rec->size == 12 + ((n + 63) & ~63ull);
}

/* Convert to native, attribute to an evsel, note the payload. */
static int finish_record(struct pd_reader *r, struct pd_record *rec, struct pd_error *err)
{
	if (r->info.swapped) {
		int es = pd_evlist_of_record(&r->evl, rec->data, rec->size, 1);
		if (pd_swap_record(rec->data, rec->size, es >= 0 ? &r->evl.v[es] : NULL, 1, err) < 0) {
			pd_error_locate(err, r->name, rec->offset);
			return err ? err->code : PD_ERR_RECORD;
		}
	}
	rec->evsel = rec->type < 64 ? pd_evlist_of_record(&r->evl, rec->data, rec->size, 0) : -1;
	rec->payload_size = 0;
	if (rec->type == PD_RECORD_AUXTRACE && rec->size >= PD_AUXTRACE_RECORD_SIZE)
		rec->payload_size = ld64(rec->data + 8);
	else if (rec->type == PD_RECORD_HEADER_TRACING_DATA && rec->size >= 12 && !sp_tracing_data(rec))
		rec->payload_size = ld32(rec->data + 8);
	else if (rec->size >= 12 && (rec->type == PD_RECORD_HEADER_TRACING_DATA || rec->type == PD_SP_RECORD_TRACING_DATA))
		read_tracing_names(r, rec->data + 12, ld32(rec->data + 8) < rec->size - 12u ? ld32(rec->data + 8) : rec->size - 12u,
				   rec->offset + 12);   /* simpleperf's, inside the record (joined: the first SPLIT's offset) */
	return rec->type >= 64 ? apply_user_record(r, rec, err) : 0;
}

static int next_decompressed(struct pd_reader *r, struct pd_record *rec, struct pd_error *err)
{
	size_t left = r->dend - r->dpos;
	if (left < 8)
		return 0;
	uint8_t *p = r->dbuf + r->dpos;
	uint16_t size = ld16(p + 6);
	uint32_t type = ld32(p);
	if (r->info.swapped) {
		size = bswap_16(size);
		type = bswap_32(type);
	}
	if (size < 8)
		return pd_fail(err, PD_ERR_RECORD, r->dsrc_off, (int)type,
			       "%s: record of size %u inside the compressed record at offset %llu",
			       r->name, size, (unsigned long long)r->dsrc_off);
	if (left < size)
		return 0;    /* the rest comes with the next compressed record */
	r->dpos += size;
	memset(rec, 0, sizeof(*rec));
	rec->offset = r->dsrc_off;
	rec->type = type;
	rec->size = size;
	rec->data = p;
	rec->from_compressed = 1;
	int rc = finish_record(r, rec, err);
	rec->misc = ld16(p + 4);
	if (rc == 0 && rec->payload_size)
		return pd_fail(err, PD_ERR_RECORD, r->dsrc_off, (int)type,
			       "%s: a %s record with payload inside the compressed record at offset %llu",
			       r->name, pd_record_name(type), (unsigned long long)r->dsrc_off);
	return rc < 0 ? rc : 1;
}

/* A record's type and size from its header: simpleperf's own types keep a 32-bit size where perf has misc. */
static uint32_t header_type_size(const struct pd_reader *r, const uint8_t *p, uint32_t *size)
{
	uint32_t type = ld32(p);
	uint16_t hi = ld16(p + 4), lo = ld16(p + 6);
	if (r->info.swapped) {
		type = bswap_32(type);
		hi = bswap_16(hi);
		lo = bswap_16(lo);
	}
	*size = type >= PD_SP_RECORD_START ? (uint32_t)hi << 16 | lo : lo;
	return type;
}

/*
 * simpleperf's SPLIT records from @first on: their bodies joined, up to the
 * SPLIT_END, are one record, handed out whole (its offset the first SPLIT's).
 */
static int next_joined(struct pd_reader *r, struct pd_record *rec, uint64_t first, struct pd_error *err)
{
	uint32_t type, size;
	r->jlen = 0;
	for (;;) {
		uint64_t off = r->buf_off + r->pos;
		int rc = off >= r->data_end ? 1 : fill(r, 8, err);
		if (rc < 0)
			return rc;
		if (rc > 0)
			return pd_fail(err, PD_ERR_TRUNCATED, first, PD_SP_RECORD_SPLIT,
				       "%s: the SPLIT records from offset %llu end at offset %llu without a SPLIT_END",
				       r->name, (unsigned long long)first, (unsigned long long)off);
		type = header_type_size(r, r->buf + r->pos, &size);
		if ((type != PD_SP_RECORD_SPLIT && type != PD_SP_RECORD_SPLIT_END) || size < 8 || size > MAX_DECOMP)
			return pd_fail(err, PD_ERR_RECORD, off, (int)type,
				       "%s: the SPLIT records from offset %llu are followed at offset %llu by a record of type %u and size %u, not SPLIT or SPLIT_END",
				       r->name, (unsigned long long)first, (unsigned long long)off, type, size);
		rc = fill(r, size, err);
		if (rc)
			return rc < 0 ? rc : pd_fail(err, PD_ERR_TRUNCATED, off, (int)type,
						     "%s: the file ends inside the SPLIT record at offset %llu",
						     r->name, (unsigned long long)off);
		const uint8_t *body = r->buf + r->pos + 8;
		r->pos += size;
		if (type == PD_SP_RECORD_SPLIT_END)
			break;
		if (r->jlen + size - 8 > MAX_DECOMP)
			return pd_fail(err, PD_ERR_RECORD, first, PD_SP_RECORD_SPLIT,
				       "%s: the SPLIT records from offset %llu join into more than %u bytes",
				       r->name, (unsigned long long)first, MAX_DECOMP);
		if (r->jlen + size - 8 > r->jcap) {
			size_t cap = r->jcap ? r->jcap : 65536;
			while (cap < r->jlen + size - 8)
				cap *= 2;
			uint8_t *b = realloc(r->jbuf, cap);
			if (!b)
				return pd_fail(err, PD_ERR_NOMEM, first, PD_SP_RECORD_SPLIT, "out of memory joining SPLIT records");
			r->jbuf = b;
			r->jcap = cap;
		}
		memcpy(r->jbuf + r->jlen, body, size - 8u);
		r->jlen += size - 8u;
	}
	type = r->jlen >= 8 ? header_type_size(r, r->jbuf, &size) : 0;
	if (r->jlen < 8 || size != r->jlen)
		return pd_fail(err, PD_ERR_RECORD, first, PD_SP_RECORD_SPLIT,
			       "%s: the SPLIT records from offset %llu join into %zu bytes, not one whole record",
			       r->name, (unsigned long long)first, r->jlen);
	memset(rec, 0, sizeof(*rec));
	rec->offset = first;
	rec->type = type;
	rec->size = size;
	rec->data = r->jbuf;
	int rc = finish_record(r, rec, err);
	rec->misc = type >= PD_SP_RECORD_START ? 0 : ld16(r->jbuf + 4);
	if (rc == 0 && rec->payload_size)
		return pd_fail(err, PD_ERR_RECORD, first, (int)type,
			       "%s: a %s record with payload joined from the SPLIT records at offset %llu",
			       r->name, pd_record_name(type) ? pd_record_name(type) : "?", (unsigned long long)first);
	return rc < 0 ? rc : 1;
}

/*
 * perf's TRACING_DATA record (pipe mode): the payload that follows it is
 * brought into the window behind the record, read for its event names, and
 * left there for the caller to read or skip. The record is put back as it
 * was handed out (a new mapping of a foreign file shows it unswapped).
 * 1, or < 0 on an I/O error.
 */
static int peek_tracing_data(struct pd_reader *r, struct pd_record *rec, struct pd_error *err)
{
	uint8_t save[64];
	if (rec->payload_size > MAX_TRACING || rec->size > sizeof(save)) {
		warn(r, PD_ERR_RECORD, rec->offset, (int)rec->type,
		     "%s: TRACING_DATA record at offset %llu (%u bytes, %llu of tracing data): not read for event names",
		     r->name, (unsigned long long)rec->offset, rec->size, (unsigned long long)rec->payload_size);
		r->tracing_read = 1;
		return 1;
	}
	memcpy(save, rec->data, rec->size);
	r->pos -= rec->size;
	int rc = fill(r, rec->size + (size_t)rec->payload_size, err);
	if (rc < 0)
		return rc;
	rec->data = r->buf + r->pos;
	if (r->info.swapped)
		memcpy(rec->data, save, rec->size);
	r->pos += rec->size;
	if (rc == 0)
		read_tracing_names(r, rec->data + rec->size, (size_t)rec->payload_size, rec->payload_offset);
	/* else the input ends inside the payload: skipping it says so */
	return 1;
}

static int next_in_file(struct pd_reader *r, struct pd_record *rec, struct pd_error *err)
{
	int rc;
	if (r->payload_left) {
		rc = skip_bytes(r, r->payload_left, err);
		uint64_t at = r->payload_off;
		r->payload_left = 0;
		if (rc < 0)
			return rc;
		if (rc > 0)
			return pd_fail(err, PD_ERR_TRUNCATED, at, PD_RECORD_AUXTRACE,
				       "%s: the file ends inside the payload that starts at offset %llu",
				       r->name, (unsigned long long)at);
	}
	rc = next_decompressed(r, rec, err);
	if (rc)
		return rc;

	uint64_t off = r->buf_off + r->pos;
	if (off >= r->data_end)
		return 0;
	rc = fill(r, 8, err);
	if (rc < 0)
		return rc;
	size_t avail = r->end - r->pos;
	if (rc > 0) {
		if (avail == 0 && (r->data_end == UINT64_MAX || r->info.pipe_mode))
			return 0;
		goto truncated;
	}
	uint8_t *p = r->buf + r->pos;
	uint32_t size, type = header_type_size(r, p, &size);
	if (type == PD_SP_RECORD_SPLIT)
		return next_joined(r, rec, off, err);
	if (size > MAX_DECOMP)    /* only simpleperf's 32-bit sizes get here: no buffer that large */
		return pd_fail(err, PD_ERR_RECORD, off, (int)type,
			       "%s: record at offset %llu (type %u) claims %u bytes: cannot continue",
			       r->name, (unsigned long long)off, type, size);
	if (size < 8)
		return pd_fail(err, PD_ERR_RECORD, off, (int)type,
			       "%s: record at offset %llu (type %u) has size %u, less than its 8-byte header: cannot continue",
			       r->name, (unsigned long long)off, type, size);
	rc = fill(r, size, err);
	if (rc < 0)
		return rc;
	if (rc > 0)
		goto truncated;
	p = r->buf + r->pos;
	r->pos += size;
	memset(rec, 0, sizeof(*rec));
	rec->offset = off;
	rec->type = type;
	rec->size = size;
	rec->data = p;
	rc = finish_record(r, rec, err);
	rec->misc = type >= PD_SP_RECORD_START ? 0 : ld16(p + 4);
	if (rc < 0)
		return rc;
	if (rec->payload_size) {
		uint64_t at = off + size;
		rec->payload_offset = at;
		if (r->data_end != UINT64_MAX && rec->payload_size > r->data_end - at)
			return pd_fail(err, PD_ERR_RECORD, off, (int)type,
				       "%s: %s record at offset %llu announces %llu bytes of payload, past the end of the data section",
				       r->name, pd_record_name(type), (unsigned long long)off,
				       (unsigned long long)rec->payload_size);
		if (r->info.file_size && r->seekable && !r->info.pipe_mode &&
		    rec->payload_size > r->info.file_size - (at < r->info.file_size ? at : r->info.file_size))
			return pd_fail(err, PD_ERR_TRUNCATED, off, (int)type,
				       "%s: %s record at offset %llu announces %llu bytes of payload, past the end of the file",
				       r->name, pd_record_name(type), (unsigned long long)off,
				       (unsigned long long)rec->payload_size);
		r->payload_left = rec->payload_size;
		r->payload_off = at;
		if (type == PD_RECORD_HEADER_TRACING_DATA && !r->tracing_read)
			return peek_tracing_data(r, rec, err);
	}
	return 1;

truncated:
	if (r->info.data_size_unknown) {
		warn(r, PD_ERR_TRUNCATED, off, -1,
		     "%s: %zu bytes at offset %llu are an incomplete record (the writer stopped mid-record); ignored",
		     r->name, r->end - r->pos, (unsigned long long)off);
		r->pos = r->end;
		return 0;
	}
	return pd_fail(err, PD_ERR_TRUNCATED, off, -1,
		       "%s: the file ends inside the record at offset %llu (%zu bytes left%s)", r->name,
		       (unsigned long long)off, avail,
		       r->data_end != UINT64_MAX && !r->in_dfile ? ", data section promised more" : "");
}

/* Go on with the folder's next data.N file. 0, 1 when none is left, or an error. */
static int next_dir_file(struct pd_reader *r, struct pd_error *err)
{
	if (r->next_dfile == r->nr_dorder) {
		for (size_t i = 0; i < r->nr_dfiles && !r->missing_said; i++)
			if (!r->dfiles[i]) {
				const char *last = r->dfiles[r->nr_dfiles - 1], *slash = strrchr(last, '/');
				r->missing_said = 1;
				return pd_fail(err, PD_ERR_TRUNCATED, PD_NO_OFFSET, -1,
					       "%.*s/data.%zu: missing from the perf.data folder (%s is there): its "
					       "records are lost", (int)(slash - last), last, i, slash + 1);
			}
		return 1;
	}
	const char *path = r->dfiles[r->dorder[r->next_dfile++]];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		if (fd >= 0)
			close(fd);
		return pd_fail(err, PD_ERR_IO, PD_NO_OFFSET, -1, "%s: cannot open: %s", path, strerror(errno));
	}
	char *name = strdup(path);
	if (!name) {
		close(fd);
		return pd_fail(err, PD_ERR_NOMEM, PD_NO_OFFSET, -1, "out of memory");
	}
	if (r->own_fd)
		close(r->fd);
	unmap(r);
	free(r->name);
	r->name = name;
	r->fd = fd;
	r->own_fd = 1;
	r->info.file_size = (uint64_t)st.st_size;
	r->info.data_size_unknown = 0;
	r->data_end = (uint64_t)st.st_size;
	r->buf = r->rbuf;
	r->buf_off = 0;
	r->pos = r->end = 0;
	r->eof = 0;
	r->mapped = 1;
	r->in_dfile = 1;
	return 0;
}

int pd_reader_next(struct pd_reader *r, struct pd_record *rec, struct pd_error *err)
{
	for (;;) {
		int rc = next_in_file(r, rec, err);
		if (rc > 0 || !r->nr_dorder)
			return rc;
		if (rc < 0) {
			if (!r->in_dfile || rc != PD_ERR_TRUNCATED)
				return rc;
			if (!r->derr_rc) {     /* a cut data.N: the others are read first */
				r->derr = *err;
				r->derr_rc = rc;
			}
			r->payload_left = 0;
			pd_error_clear(err);
		}
		if ((rc = next_dir_file(r, err)) != 0) {
			if (rc > 0 && r->derr_rc) {
				*err = r->derr;
				rc = r->derr_rc;
				r->derr_rc = 0;
			}
			return rc < 0 ? rc : 0;
		}
	}
}

int64_t pd_reader_read_payload(struct pd_reader *r, void *buf, size_t len, struct pd_error *err)
{
	if (len > r->payload_left)
		len = (size_t)r->payload_left;
	uint8_t *dst = buf;
	size_t done = 0;
	if (r->mapped) {
		uint64_t at = r->buf_off + r->pos;
		int rc = pread_full(r, dst, len, at, err);
		if (rc == 0)
			rc = skip_bytes(r, len, err);
		if (rc) {
			r->payload_left = 0;
			return rc < 0 ? rc : pd_fail(err, PD_ERR_TRUNCATED, at, PD_RECORD_AUXTRACE,
						     "%s: the file ends inside the payload that starts at offset %llu",
						     r->name, (unsigned long long)r->payload_off);
		}
		r->payload_left -= len;
		r->payload_off += len;
		return (int64_t)len;
	}
	size_t inbuf = r->end - r->pos;
	if (inbuf) {
		size_t n = inbuf < len ? inbuf : len;
		memcpy(dst, r->buf + r->pos, n);
		r->pos += n;
		done = n;
	}
	while (done < len) {
		/* the window is empty: read large payloads straight into the caller's buffer */
		r->buf_off += r->end;
		r->pos = r->end = 0;
		ssize_t n = read(r->fd, dst + done, len - done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return io_fail(r, err, r->buf_off, "read failed");
		}
		if (n == 0) {
			r->eof = 1;
			uint64_t at = r->payload_off;
			r->payload_left = 0;
			return pd_fail(err, PD_ERR_TRUNCATED, at, PD_RECORD_AUXTRACE,
				       "%s: the file ends inside the payload that starts at offset %llu",
				       r->name, (unsigned long long)at);
		}
		r->buf_off += (uint64_t)n;
		done += (size_t)n;
	}
	r->payload_left -= done;
	r->payload_off += done;
	return (int64_t)done;
}

const struct pd_file_info *pd_reader_info(const struct pd_reader *r) { return &r->info; }
const char *pd_reader_name(const struct pd_reader *r) { return r->name; }
size_t pd_reader_nr_evsels(const struct pd_reader *r) { return r->evl.n; }

const struct pd_evsel *pd_reader_evsel(const struct pd_reader *r, size_t i)
{
	return i < r->evl.n ? &r->evl.v[i] : NULL;
}

int pd_reader_evsel_of_id(const struct pd_reader *r, uint64_t id)
{
	return pd_evlist_find(&r->evl, id);
}

int pd_reader_feature(const struct pd_reader *r, unsigned feat,
		      const uint8_t **data, size_t *size, uint64_t *offset)
{
	if (feat >= PD_FEAT_BITS || !r->feat[feat].present)
		return 0;
	if (data) *data = r->feat[feat].data;
	if (size) *size = r->feat[feat].size;
	if (offset) *offset = r->feat[feat].offset;
	return 1;
}

uint64_t pd_reader_position(const struct pd_reader *r)
{
	uint64_t at = r->buf_off + r->pos;
	return at > r->info.data_offset ? at - r->info.data_offset : 0;
}
