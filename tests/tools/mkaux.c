/*
 * mkaux - write a perf.data whose AUX losses are known: queue 0 gets chunks
 * [0,4096) [4096,8192) [12288,16384) (a 4096-byte hole) and [14336,18432)
 * (2048 bytes of overlap), queue 1 one chunk; one AUX record flagged
 * TRUNCATED (1024 bytes), one AUXTRACE_ERROR (code 7, overflow). The trace
 * bytes are zeros: this exercises the loss model, not a decoder.
 *
 *   mkaux OUT [--foreign]
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pd.h"

static uint8_t zeros[4096];

struct rec { uint8_t b[256]; size_t n; };
static void put(struct rec *r, const void *p, size_t n) { memcpy(r->b + r->n, p, n); r->n += n; }
static void u64(struct rec *r, uint64_t v) { put(r, &v, 8); }
static void u32(struct rec *r, uint32_t v) { put(r, &v, 4); }
static void hdr(struct rec *r, uint32_t type)
{
	uint16_t z = 0;
	r->n = 0;
	u32(r, type);
	put(r, &z, 2);
	put(r, &z, 2);
}
static void done(struct rec *r) { uint16_t n = (uint16_t)r->n; memcpy(r->b + 6, &n, 2); }

static int chunk(struct pd_writer *w, uint32_t idx, uint32_t cpu, uint64_t off, uint64_t size, struct pd_error *err)
{
	struct rec r;
	hdr(&r, PD_RECORD_AUXTRACE);
	u64(&r, size); u64(&r, off); u64(&r, 0x1234); u32(&r, idx); u32(&r, 100); u32(&r, cpu); u32(&r, 0);
	done(&r);
	int rc = pd_writer_write(w, r.b, -1, NULL, 0, err);
	for (uint64_t k = 0; !rc && k < size; k += sizeof(zeros))
		rc = pd_writer_write_payload(w, zeros, size - k < sizeof(zeros) ? size - k : sizeof(zeros), err);
	return rc;
}

int main(int argc, char **argv)
{
	struct pd_writer_opts o;
	struct pd_writer *w;
	struct pd_error err;
	pd_writer_opts_init(&o);
	o.foreign = argc > 2 && !strcmp(argv[2], "--foreign");
	if (argc < 2 || pd_writer_open(&w, argv[1], &o, &err) < 0) {
		fprintf(stderr, "usage: mkaux OUT [--foreign]\n");
		return 1;
	}
	struct pd_event_attr a;
	memset(&a, 0, sizeof(a));
	a.type = PD_TYPE_SOFTWARE;
	a.config = 9;   /* dummy */
	a.size = 128;
	a.sample_type = PD_SAMPLE_TID | PD_SAMPLE_TIME | PD_SAMPLE_CPU | PD_SAMPLE_IDENTIFIER;
	a.flags = pd_attr_flag_mask(PD_ATTR_SAMPLE_ID_ALL);
	uint64_t id = 7;
	pd_writer_add_evsel(w, &a, &id, 1, "dummy:u", &err);
	struct pd_buf b = { 0 };
	pd_buf_string(&b, "mkaux");
	pd_writer_set_feature(w, PD_FEAT_HOSTNAME, b.data, b.len, &err);
	pd_buf_free(&b);

	struct rec r;
	int rc = 0;
	/* AUX records (kernel): times 1000, 2000, 3000 on CPU 0; the third TRUNCATED */
	for (int i = 0; i < 3 && !rc; i++) {
		hdr(&r, PD_RECORD_AUX);
		u64(&r, 4096u * (unsigned)i); u64(&r, i == 2 ? 1024 : 4096); u64(&r, i == 2 ? PD_AUX_FLAG_TRUNCATED : 0);
		u32(&r, 100); u32(&r, 100); u64(&r, 1000u * (unsigned)(i + 1)); u32(&r, 0); u32(&r, 0); u64(&r, id);
		done(&r);
		rc = pd_writer_write(w, r.b, 0, NULL, 0, &err);
	}
	if (!rc) rc = chunk(w, 0, 0, 0, 4096, &err);
	if (!rc) rc = chunk(w, 0, 0, 4096, 4096, &err);
	if (!rc) rc = chunk(w, 0, 0, 12288, 4096, &err);
	if (!rc) rc = chunk(w, 0, 0, 14336, 4096, &err);
	if (!rc) rc = chunk(w, 1, 1, 0, 4096, &err);
	if (!rc) {
		hdr(&r, PD_RECORD_AUXTRACE_ERROR);
		u32(&r, 1); u32(&r, 7); u32(&r, 0); u32(&r, 100); u32(&r, 100); u32(&r, 1);
		u64(&r, 0x401000); u64(&r, 2500);
		char msg[64] = "Overflow packet";
		put(&r, msg, 64);
		done(&r);
		rc = pd_writer_write(w, r.b, -1, NULL, 0, &err);
	}
	hdr(&r, PD_RECORD_FINISHED_ROUND);
	done(&r);
	if (!rc)
		rc = pd_writer_write(w, r.b, -1, NULL, 0, &err);
	if (!rc)
		rc = pd_writer_close(w, &err);
	if (rc) {
		fprintf(stderr, "mkaux: %s\n", err.msg);
		return 1;
	}
	return 0;
}
