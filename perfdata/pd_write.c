/*
 * pd_write.c - the perf.data writer, for rbrecord and for tools that derive
 * files (byte-order conversion, fixtures).
 *
 * File mode layout, as perf record writes it:
 *   [header 104][ids of each evsel][attr entries][data ...][feature table][feature payloads]
 * The header is written last (pwrite at offset 0), so a file whose writer
 * died keeps data size 0, which readers take as "read to the end, best
 * effort". Pipe mode writes a 16-byte header, then one HEADER_ATTR record per
 * evsel and one HEADER_FEATURE record per feature before the first record,
 * and needs no seeking.
 *
 * Records arrive in native order. With opts.foreign the writer converts each
 * one (and every attr and feature payload) to the other byte order on the
 * way out; payload bytes (trace data) are written untouched.
 */
#include "config.h"
#include <byteswap.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pd_internal.h"

#define OUT_BUF (1u << 20)
#define ATTR_SIZE_VER7 128

struct pd_writer {
	char *name;
	int fd, own_fd;
	struct pd_writer_opts opts;
	struct pd_evlist evl;
	struct { uint8_t *data; size_t size; int present; } feat[PD_FEAT_KNOWN_MAX];
	uint8_t *buf;             /* pending output */
	size_t len;
	uint64_t off;             /* file offset of buf[0] */
	uint64_t data_offset;
	uint64_t attrs_offset;
	uint32_t attr_size;       /* attr.size written for every evsel */
	int started;
	int in_record;            /* payload may follow the last record */
	uint8_t scratch[65536];   /* a record converted to the foreign order */
	struct pd_buf auxidx;     /* {u64 offset, u64 size} per AUXTRACE record */
	uint64_t nr_auxidx;
};

void pd_writer_opts_init(struct pd_writer_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->size = sizeof(*o);
}

/* ------------------------------------------------------------ pd_buf */

static void buf_need(struct pd_buf *b, size_t n)
{
	if (b->oom || b->len + n <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + n)
		cap *= 2;
	uint8_t *d = realloc(b->data, cap);
	if (!d) {
		b->oom = 1;
		return;
	}
	b->data = d;
	b->cap = cap;
}

void pd_buf_bytes(struct pd_buf *b, const void *p, size_t n)
{
	buf_need(b, n);
	if (b->oom)
		return;
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void pd_buf_u32(struct pd_buf *b, uint32_t v) { pd_buf_bytes(b, &v, 4); }
void pd_buf_u64(struct pd_buf *b, uint64_t v) { pd_buf_bytes(b, &v, 8); }

void pd_buf_string(struct pd_buf *b, const char *s)
{
	size_t n = strlen(s) + 1;
	uint32_t len = (uint32_t)((n + 63) & ~(size_t)63);   /* perf's NAME_ALIGN */
	static const uint8_t zero[64];
	pd_buf_u32(b, len);
	pd_buf_bytes(b, s, n);
	pd_buf_bytes(b, zero, len - n);
}

void pd_buf_free(struct pd_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

/* ------------------------------------------------------------- output */

static int write_fail(struct pd_writer *w, struct pd_error *err, int e)
{
	return pd_fail(err, e == ENOSPC || e == EDQUOT || e == EFBIG ? PD_ERR_NOSPC : PD_ERR_IO,
		       w->off, -1, "%s: write failed at offset %llu: %s", w->name,
		       (unsigned long long)w->off, strerror(e));
}

static int write_all(struct pd_writer *w, const void *p, size_t n, struct pd_error *err)
{
	const uint8_t *s = p;
	while (n) {
		ssize_t k = write(w->fd, s, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return write_fail(w, err, errno);
		}
		if (k == 0)
			return write_fail(w, err, ENOSPC);
		s += k;
		n -= (size_t)k;
		w->off += (uint64_t)k;
	}
	return 0;
}

/* The header, at offset 0 (over the provisional one): 0, or -1 with errno set. A short write goes on. */
static int write_header(struct pd_writer *w, const uint64_t h[13])
{
	const uint8_t *p = (const uint8_t *)h;
	size_t n = 13 * sizeof(*h), done = 0;
	while (done < n) {
		ssize_t k = pwrite(w->fd, p + done, n - done, (off_t)done);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			if (k == 0)
				errno = ENOSPC;
			return -1;
		}
		done += (size_t)k;
	}
	return 0;
}

static int flush(struct pd_writer *w, struct pd_error *err)
{
	if (!w->len)
		return 0;
	uint64_t start = w->off;
	int rc = write_all(w, w->buf, w->len, err);
	if (rc == 0) {
		w->len = 0;
	} else {
		/* keep what did not reach the file out of the count: offsets stay true */
		size_t done = (size_t)(w->off - start);
		memmove(w->buf, w->buf + done, w->len - done);
		w->len -= done;
	}
	return rc;
}

/* Queue @n bytes; large ones go straight out. */
static int out(struct pd_writer *w, const void *p, size_t n, struct pd_error *err)
{
	if (w->len + n > OUT_BUF) {
		int rc = flush(w, err);
		if (rc)
			return rc;
		if (n >= OUT_BUF)
			return write_all(w, p, n, err);
	}
	memcpy(w->buf + w->len, p, n);
	w->len += n;
	return 0;
}

static uint64_t pos(const struct pd_writer *w) { return w->off + w->len; }

static uint64_t x64(const struct pd_writer *w, uint64_t v) { return w->opts.foreign ? bswap_64(v) : v; }
static uint32_t x32(const struct pd_writer *w, uint32_t v) { return w->opts.foreign ? bswap_32(v) : v; }

/* ------------------------------------------------------------ open */

int pd_writer_open_fd(struct pd_writer **outp, int fd, const char *name, int own,
		      const struct pd_writer_opts *opts, struct pd_error *err)
{
	pd_error_clear(err);
	*outp = NULL;
	struct pd_writer *w = calloc(1, sizeof(*w));
	if (!w) {
		if (own)
			close(fd);
		return pd_fail(err, PD_ERR_NOMEM, PD_NO_OFFSET, -1, "out of memory");
	}
	w->fd = fd;
	w->own_fd = own;
	pd_writer_opts_init(&w->opts);
	if (opts)
		memcpy(&w->opts, opts, opts->size < sizeof(w->opts) ? opts->size : sizeof(w->opts));
	w->name = strdup(name ? name : "<output>");
	w->buf = malloc(OUT_BUF);
	if (!w->name || !w->buf) {
		pd_writer_free(w);
		return pd_fail(err, PD_ERR_NOMEM, PD_NO_OFFSET, -1, "out of memory");
	}
	if (!w->opts.pipe_mode) {
		struct stat st;
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			pd_writer_free(w);
			return pd_fail(err, PD_ERR_INVAL, PD_NO_OFFSET, -1,
				       "%s: file mode needs a regular file (the header is written last); use pipe mode", name);
		}
		/* room for the header; rewritten at close */
		uint8_t zero[PD_FILE_HEADER_SIZE] = { 0 };
		int rc = out(w, zero, sizeof(zero), err);
		if (rc) {
			pd_writer_free(w);
			return rc;
		}
	}
	*outp = w;
	return 0;
}

int pd_writer_open(struct pd_writer **outp, const char *path,
		   const struct pd_writer_opts *opts, struct pd_error *err)
{
	*outp = NULL;
	if (!path)
		return pd_fail(err, PD_ERR_INVAL, PD_NO_OFFSET, -1, "no output path");
	if (!strcmp(path, "-"))
		return pd_writer_open_fd(outp, 1, "<stdout>", 0, opts, err);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return pd_fail(err, PD_ERR_IO, PD_NO_OFFSET, -1, "%s: cannot create: %s", path, strerror(errno));
	return pd_writer_open_fd(outp, fd, path, 1, opts, err);
}

void pd_writer_free(struct pd_writer *w)
{
	if (!w)
		return;
	if (w->own_fd && w->fd >= 0)
		close(w->fd);
	pd_evlist_free(&w->evl);
	for (unsigned i = 0; i < PD_FEAT_KNOWN_MAX; i++)
		free(w->feat[i].data);
	pd_buf_free(&w->auxidx);
	free(w->buf);
	free(w->name);
	free(w);
}

int pd_writer_add_evsel(struct pd_writer *w, const struct pd_event_attr *attr,
			const uint64_t *ids, size_t nr_ids, const char *name,
			struct pd_error *err)
{
	if (w->started)
		return pd_fail(err, PD_ERR_INVAL, PD_NO_OFFSET, -1, "%s: evsels must be added before the first record", w->name);
	int idx = pd_evlist_add(&w->evl, (const uint8_t *)attr, sizeof(*attr), name, err);
	if (idx < 0)
		return idx;
	int rc = pd_evlist_add_ids(&w->evl, idx, (const uint8_t *)ids, nr_ids, err);
	return rc < 0 ? rc : idx;
}

static int feat_store(struct pd_writer *w, unsigned feat, const void *data, size_t size,
		      struct pd_error *err);

int pd_writer_set_feature(struct pd_writer *w, unsigned feat, const void *data,
			  size_t size, struct pd_error *err)
{
	if (feat == 0 || feat >= PD_FEAT_KNOWN_MAX)
		return pd_fail(err, PD_ERR_INVAL, PD_NO_OFFSET, -1, "feature %u cannot be written", feat);
	if (w->started && w->opts.pipe_mode)
		return pd_fail(err, PD_ERR_INVAL, PD_NO_OFFSET, -1, "%s: pipe mode: features must be set before the first record", w->name);
	return feat_store(w, feat, data, size, err);
}

static int feat_store(struct pd_writer *w, unsigned feat, const void *data, size_t size,
		      struct pd_error *err)
{
	uint8_t *d = malloc(size ? size : 1);
	if (!d)
		return pd_fail(err, PD_ERR_NOMEM, PD_NO_OFFSET, -1, "out of memory");
	memcpy(d, data, size);
	free(w->feat[feat].data);
	w->feat[feat].data = d;
	w->feat[feat].size = size;
	w->feat[feat].present = 1;
	return 0;
}

/* The attr as written: common size, converted if foreign. */
static void attr_image(const struct pd_writer *w, const struct pd_evsel *es, uint8_t *dst)
{
	memcpy(dst, &es->attr, w->attr_size);
	st32(dst + 4, w->attr_size);
	if (w->opts.foreign)
		pd_swap_attr(dst, w->attr_size, 0);
}

static uint32_t nr_cpus_of(const struct pd_writer *w)
{
	return w->feat[PD_FEAT_NRCPUS].present && w->feat[PD_FEAT_NRCPUS].size >= 4 ?
	       ld32(w->feat[PD_FEAT_NRCPUS].data) : 0;
}

/* Feature payload as written (converted copy in @b). */
static int feature_image(struct pd_writer *w, unsigned feat, struct pd_buf *b, struct pd_error *err)
{
	b->len = 0;
	pd_buf_bytes(b, w->feat[feat].data, w->feat[feat].size);
	if (b->oom)
		return pd_fail(err, PD_ERR_NOMEM, PD_NO_OFFSET, -1, "out of memory");
	if (w->opts.foreign && b->len)
		return pd_swap_feature(feat, b->data, b->len, 0, nr_cpus_of(w), err);
	return 0;
}

static int build_event_desc(struct pd_writer *w, struct pd_error *err)
{
	if (w->feat[PD_FEAT_EVENT_DESC].present || !w->evl.n)
		return 0;
	struct pd_buf b = { 0 };
	pd_buf_u32(&b, (uint32_t)w->evl.n);
	pd_buf_u32(&b, w->attr_size);
	for (size_t i = 0; i < w->evl.n; i++) {
		const struct pd_evsel *es = &w->evl.v[i];
		struct pd_event_attr a = es->attr;
		a.size = w->attr_size;
		pd_buf_bytes(&b, &a, w->attr_size);
		pd_buf_u32(&b, (uint32_t)es->nr_ids);
		pd_buf_string(&b, es->name ? es->name : "");
		pd_buf_bytes(&b, es->ids, 8 * es->nr_ids);
	}
	int rc = b.oom ? pd_fail(err, PD_ERR_NOMEM, PD_NO_OFFSET, -1, "out of memory") :
		 feat_store(w, PD_FEAT_EVENT_DESC, b.data, b.len, err);
	pd_buf_free(&b);
	return rc;
}

static int is_pipe_feature(unsigned feat)
{
	switch (feat) {   /* perf synthesizes all but these in pipe mode */
	case PD_FEAT_TRACING_DATA: case PD_FEAT_BUILD_ID: case PD_FEAT_BRANCH_STACK:
	case PD_FEAT_AUXTRACE: case PD_FEAT_STAT: case PD_FEAT_CACHE:
	case PD_FEAT_DIR_FORMAT: case PD_FEAT_HYBRID_TOPOLOGY:
		return 0;
	}
	return 1;
}

static int start_pipe(struct pd_writer *w, struct pd_error *err)
{
	uint64_t hdr[2] = { x64(w, PD_MAGIC2), x64(w, PD_PIPE_HEADER_SIZE) };
	int rc = out(w, hdr, sizeof(hdr), err);
	for (size_t i = 0; i < w->evl.n && !rc; i++) {
		const struct pd_evsel *es = &w->evl.v[i];
		size_t size = 8 + w->attr_size + 8 * es->nr_ids;
		if (size > UINT16_MAX)
			return pd_fail(err, PD_ERR_INVAL, PD_NO_OFFSET, PD_RECORD_HEADER_ATTR,
				       "%s: evsel %zu has too many ids (%zu) for an ATTR record", w->name, i, es->nr_ids);
		uint8_t rec[8 + sizeof(struct pd_event_attr)];
		st32(rec, x32(w, PD_RECORD_HEADER_ATTR));
		st16(rec + 4, 0);
		st16(rec + 6, w->opts.foreign ? bswap_16((uint16_t)size) : (uint16_t)size);
		attr_image(w, es, rec + 8);
		rc = out(w, rec, 8 + w->attr_size, err);
		for (size_t k = 0; k < es->nr_ids && !rc; k++) {
			uint64_t id = x64(w, es->ids[k]);
			rc = out(w, &id, 8, err);
		}
	}
	struct pd_buf b = { 0 };
	for (unsigned feat = 1; feat < PD_FEAT_KNOWN_MAX && !rc; feat++) {
		if (!w->feat[feat].present || !is_pipe_feature(feat))
			continue;
		rc = feature_image(w, feat, &b, err);
		if (rc)
			break;
		size_t size = 16 + b.len;
		if (size > UINT16_MAX) {
			rc = pd_fail(err, PD_ERR_INVAL, PD_NO_OFFSET, PD_RECORD_HEADER_FEATURE,
				     "%s: feature %s (%zu bytes) is too large for a pipe-mode record",
				     w->name, pd_feature_name(feat), b.len);
			break;
		}
		uint8_t h[16];
		st32(h, x32(w, PD_RECORD_HEADER_FEATURE));
		st16(h + 4, 0);
		st16(h + 6, w->opts.foreign ? bswap_16((uint16_t)size) : (uint16_t)size);
		st64(h + 8, x64(w, feat));
		rc = out(w, h, 16, err);
		if (!rc)
			rc = out(w, b.data, b.len, err);
	}
	pd_buf_free(&b);
	if (!rc) {   /* terminator: perf 6.1's HEADER_LAST_FEATURE, no payload */
		uint8_t h[16];
		st32(h, x32(w, PD_RECORD_HEADER_FEATURE));
		st16(h + 4, 0);
		st16(h + 6, w->opts.foreign ? bswap_16(16) : 16);
		st64(h + 8, x64(w, PD_FEAT_PIPE_LAST_61));
		rc = out(w, h, 16, err);
	}
	if (!rc && w->feat[PD_FEAT_TRACING_DATA].present) {
		/* tracepoint formats travel as a record whose payload follows it, padded to 8 */
		size_t len = w->feat[PD_FEAT_TRACING_DATA].size, padded = (len + 7) & ~(size_t)7;
		static const uint8_t zero[8];
		uint8_t h[12];
		st32(h, x32(w, PD_RECORD_HEADER_TRACING_DATA));
		st16(h + 4, 0);
		st16(h + 6, w->opts.foreign ? bswap_16(12) : 12);
		st32(h + 8, x32(w, (uint32_t)padded));
		rc = out(w, h, 12, err);
		if (!rc)
			rc = out(w, w->feat[PD_FEAT_TRACING_DATA].data, len, err);
		if (!rc)
			rc = out(w, zero, padded - len, err);
	}
	return rc;
}

/* The file header, as written: data size 0 marks a file whose writer has not finished. */
static void header_image(const struct pd_writer *w, uint64_t data_size, const uint64_t bits[4], uint64_t h[13])
{
	const uint64_t v[13] = {
		PD_MAGIC2, PD_FILE_HEADER_SIZE, w->attr_size + 16u, w->attrs_offset,
		(w->attr_size + 16ull) * w->evl.n, w->data_offset, data_size, 0, 0,
		bits[0], bits[1], bits[2], bits[3],
	};
	for (int i = 0; i < 13; i++)
		h[i] = x64(w, v[i]);
}

static int start_file(struct pd_writer *w, struct pd_error *err)
{
	int rc = 0;
	uint64_t ids_off[w->evl.n ? w->evl.n : 1];
	for (size_t i = 0; i < w->evl.n && !rc; i++) {
		const struct pd_evsel *es = &w->evl.v[i];
		ids_off[i] = pos(w);
		for (size_t k = 0; k < es->nr_ids && !rc; k++) {
			uint64_t id = x64(w, es->ids[k]);
			rc = out(w, &id, 8, err);
		}
	}
	uint64_t attrs_off = pos(w);
	for (size_t i = 0; i < w->evl.n && !rc; i++) {
		const struct pd_evsel *es = &w->evl.v[i];
		uint8_t ent[sizeof(struct pd_event_attr) + 16];
		attr_image(w, es, ent);
		st64(ent + w->attr_size, x64(w, ids_off[i]));
		st64(ent + w->attr_size + 8, x64(w, 8 * es->nr_ids));
		rc = out(w, ent, w->attr_size + 16, err);
	}
	w->attrs_offset = attrs_off;
	w->data_offset = pos(w);
	if (rc)
		return rc;
	/*
	 * A provisional header now, as perf does: a recording killed before
	 * close still has its magic, attrs and data offset, and data size 0
	 * tells readers to read to the last whole record.
	 */
	uint64_t h[13];
	static const uint64_t none[4];
	header_image(w, 0, none, h);
	if (w->off == 0 && w->len >= sizeof(h)) {
		memcpy(w->buf, h, sizeof(h));
		return 0;
	}
	if (write_header(w, h) < 0)
		return write_fail(w, err, errno);
	return 0;
}

static int start(struct pd_writer *w, struct pd_error *err)
{
	if (w->started)
		return 0;
	w->started = 1;
	w->attr_size = ATTR_SIZE_VER7;
	for (size_t i = 0; i < w->evl.n; i++)
		if (w->evl.v[i].attr.config3)
			w->attr_size = PD_ATTR_SIZE_VER8;
	int rc = build_event_desc(w, err);
	if (rc)
		return rc;
	return w->opts.pipe_mode ? start_pipe(w, err) : start_file(w, err);
}

int pd_writer_write(struct pd_writer *w, const void *rec, int evsel,
		    const void *payload, size_t payload_len, struct pd_error *err)
{
	int rc = start(w, err);
	if (rc)
		return rc;
	const uint8_t *r = rec;
	uint32_t type = ld32(r);
	uint16_t size = ld16(r + 6);
	if (size < 8)
		return pd_fail(err, PD_ERR_INVAL, pos(w), (int)type, "%s: record of size %u", w->name, size);
	if (type == PD_RECORD_AUXTRACE && !w->opts.pipe_mode) {
		pd_buf_u64(&w->auxidx, pos(w));
		pd_buf_u64(&w->auxidx, size);
		w->nr_auxidx++;
		if (w->auxidx.oom)
			return pd_fail(err, PD_ERR_NOMEM, pos(w), (int)type, "out of memory for the AUXTRACE index");
	}
	if (w->opts.foreign) {
		memcpy(w->scratch, r, size);
		if (evsel < 0 && type < 64)
			evsel = pd_evlist_of_record(&w->evl, r, size, 0);
		const struct pd_evsel *es = evsel >= 0 && (size_t)evsel < w->evl.n ? &w->evl.v[evsel] : NULL;
		if (type == PD_RECORD_HEADER_FEATURE && size >= 16 && ld64(r + 8) < PD_FEAT_BITS) {
			rc = pd_swap_feature((unsigned)ld64(r + 8), w->scratch + 16, size - 16u, 0,
					     nr_cpus_of(w), err);
			if (rc)
				return rc;
		}
		rc = pd_swap_record(w->scratch, size, es, 0, err);
		if (rc)
			return rc;
		r = w->scratch;
	}
	rc = out(w, r, size, err);
	if (!rc && payload_len)
		rc = out(w, payload, payload_len, err);
	return rc;
}

int pd_writer_write_payload(struct pd_writer *w, const void *data, size_t len, struct pd_error *err)
{
	return out(w, data, len, err);
}

int pd_writer_flush(struct pd_writer *w, struct pd_error *err)
{
	int rc = start(w, err);
	return rc ? rc : flush(w, err);
}

uint64_t pd_writer_data_size(const struct pd_writer *w)
{
	return w->started && !w->opts.pipe_mode ? pos(w) - w->data_offset : pos(w);
}

static int finish_file(struct pd_writer *w, struct pd_error *err)
{
	uint64_t data_size = pos(w) - w->data_offset;
	/* the data first, on its own: if only the features fail, the file can still be whole without them */
	int rc = flush(w, err);
	if (rc)
		return rc;
	if (w->nr_auxidx) {
		struct pd_buf b = { 0 };
		pd_buf_u64(&b, w->nr_auxidx);
		pd_buf_bytes(&b, w->auxidx.data, w->auxidx.len);
		rc = b.oom ? pd_fail(err, PD_ERR_NOMEM, PD_NO_OFFSET, -1, "out of memory") :
		     feat_store(w, PD_FEAT_AUXTRACE, b.data, b.len, err);
		pd_buf_free(&b);
		if (rc)
			return rc;
	}
	uint64_t bits[4] = { 0 };
	unsigned nr = 0;
	for (unsigned f = 1; f < PD_FEAT_KNOWN_MAX; f++)
		if (w->feat[f].present) {
			bits[f / 64] |= 1ULL << (f % 64);
			nr++;
		}
	/* table, then payloads */
	uint64_t table = pos(w), at = table + 16ull * nr;
	struct pd_buf tab = { 0 }, img = { 0 };
	for (unsigned f = 1; f < PD_FEAT_KNOWN_MAX && !rc; f++) {
		if (!w->feat[f].present)
			continue;
		pd_buf_u64(&tab, x64(w, at));
		pd_buf_u64(&tab, x64(w, w->feat[f].size));
		at += w->feat[f].size;
	}
	if (tab.oom)
		rc = pd_fail(err, PD_ERR_NOMEM, PD_NO_OFFSET, -1, "out of memory");
	if (!rc)
		rc = out(w, tab.data, tab.len, err);
	for (unsigned f = 1; f < PD_FEAT_KNOWN_MAX && !rc; f++) {
		if (!w->feat[f].present)
			continue;
		rc = feature_image(w, f, &img, err);
		if (!rc)
			rc = out(w, img.data, img.len, err);
	}
	pd_buf_free(&tab);
	pd_buf_free(&img);
	if (!rc)
		rc = flush(w, err);
	if (rc && err->code != PD_ERR_NOMEM) {
		/*
		 * The data is on disk but its features are not (a disk that filled
		 * up at the end): cut what part of them was written and say there
		 * are none, so that the file is still a whole perf.data.
		 */
		uint64_t feat_bytes = at - table;
		memset(bits, 0, sizeof(bits));
		w->len = 0;
		if (ftruncate(w->fd, (off_t)table) == 0)
			w->off = table;
		uint64_t h[13];
		header_image(w, data_size, bits, h);
		int whole = write_header(w, h) == 0;
		size_t n = strlen(err->msg);
		snprintf(err->msg + n, sizeof(err->msg) - n,
			 whole ? "; the %llu bytes of feature sections (build-ids, times) were left out: the header and the %llu bytes of data are whole"
			       : "; the %llu bytes of feature sections (build-ids, times) and the header could not be written: the %llu bytes of data are, readers that take a data size of 0 read them",
			 (unsigned long long)feat_bytes, (unsigned long long)data_size);
		return rc;
	}
	if (rc)
		return rc;
	uint64_t h[13];
	header_image(w, data_size, bits, h);
	if (write_header(w, h) < 0)
		return write_fail(w, err, errno);
	return 0;
}

int pd_writer_close(struct pd_writer *w, struct pd_error *err)
{
	int rc = start(w, err);
	if (!rc)
		rc = w->opts.pipe_mode ? flush(w, err) : finish_file(w, err);
	if (!rc && w->own_fd) {
		if (fsync(w->fd) < 0 && errno != EINVAL && errno != EROFS)
			rc = write_fail(w, err, errno);
		if (close(w->fd) < 0 && !rc)
			rc = write_fail(w, err, errno);
		w->fd = -1;
	}
	pd_writer_free(w);
	return rc;
}
