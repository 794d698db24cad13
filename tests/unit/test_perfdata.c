/*
 * test_perfdata.c - the format library on files it writes itself, with
 * every record type: written in file and pipe mode, in native and foreign
 * byte order, read back identical; then the same files cut at every byte and
 * with bytes flipped, read without a crash and with an error that names an
 * offset; tracing data walked for its event names, whole, cut and flipped,
 * and naming tracepoints in file and pipe mode. (Files made by Linux perf
 * are the shell tests' business.)
 */
#include "config.h"
#include <byteswap.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "pd.h"
#include "recbuf.h"
#include "tap.h"

#define ST (PD_SAMPLE_IDENTIFIER | PD_SAMPLE_IP | PD_SAMPLE_TID | PD_SAMPLE_TIME | PD_SAMPLE_ID | \
	    PD_SAMPLE_CPU | PD_SAMPLE_PERIOD | PD_SAMPLE_CALLCHAIN | PD_SAMPLE_RAW | PD_SAMPLE_READ | \
	    PD_SAMPLE_BRANCH_STACK | PD_SAMPLE_REGS_USER | PD_SAMPLE_STACK_USER | PD_SAMPLE_WEIGHT | \
	    PD_SAMPLE_DATA_SRC | PD_SAMPLE_PHYS_ADDR | PD_SAMPLE_AUX)

static void trailer(struct recbuf *r, uint64_t id)
{
	/* sample_id_all with ST: TID, TIME, ID, CPU, IDENTIFIER */
	p32(r, 100); p32(r, 101); p64(r, 5000); p64(r, id); p32(r, 1); p32(r, 0); p64(r, id);
}

/* The records of the synthetic file, each in native order. */
#define NREC 48
static struct recbuf recs[NREC];
static uint8_t aux_payload[24];
static int nrec;

static void build_records(void)
{
	struct recbuf *r;
	nrec = 0;
	r = &recs[nrec++]; begin(r, PD_RECORD_COMM, PD_MISC_COMM_EXEC); p32(r, 100); p32(r, 101); pstr(r, "worker"); trailer(r, 11); end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_MMAP2, PD_MISC_USER); p32(r, 100); p32(r, 101); p64(r, 0x400000); p64(r, 0x1000); p64(r, 0);
		p32(r, 8); p32(r, 1); p64(r, 1234); p64(r, 7); p32(r, 5); p32(r, 2); pstr(r, "/usr/bin/worker"); trailer(r, 12); end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_MMAP2, PD_MISC_USER | PD_MISC_MMAP_BUILD_ID); p32(r, 100); p32(r, 101); p64(r, 0x7f0000); p64(r, 0x2000); p64(r, 0x1000);
		{ uint8_t b[24] = { 20, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 }; put(r, b, 24); }
		p32(r, 5); p32(r, 2); pstr(r, "/lib/libc.so.6"); trailer(r, 11); end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_MMAP, PD_MISC_KERNEL); p32(r, (uint32_t)-1); p32(r, 0); p64(r, 0xffffffff81000000ULL); p64(r, 0x1000000); p64(r, 0); pstr(r, "[kernel.kallsyms]_text"); trailer(r, 11); end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_FORK, 0); p32(r, 102); p32(r, 100); p32(r, 102); p32(r, 101); p64(r, 4000); trailer(r, 11); end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_EXIT, 0); p32(r, 102); p32(r, 100); p32(r, 102); p32(r, 101); p64(r, 4500); trailer(r, 12); end(r);
	/* a sample with every variable-length part */
	r = &recs[nrec++]; begin(r, PD_RECORD_SAMPLE, PD_MISC_USER);
		p64(r, 11); p64(r, 0x401000); p32(r, 100); p32(r, 101); p64(r, 5001); p64(r, 11); p32(r, 1); p32(r, 0); p64(r, 4000);
		p64(r, 2); p64(r, 11); p64(r, 77); p64(r, 12); p64(r, 78);                 /* READ group: nr, {value, id} x2 */
		p64(r, 3); p64(r, (uint64_t)-512); p64(r, 0x401000); p64(r, 0x402000);  /* callchain */
		p32(r, 12); put(r, "rawrawrawraw", 12);                                     /* raw: 4 + 12 = 16 */
		p64(r, 1); p64(r, 0x401000); p64(r, 0x401100); p64(r, 0x3);               /* branch stack */
		p64(r, 2); p64(r, 0xaaaa); p64(r, 0xbbbb);                                 /* regs_user abi + 2 regs (mask 0x5) */
		p64(r, 16); put(r, "stackstackstack!", 16); p64(r, 16);                    /* stack_user */
		p64(r, 99); p64(r, 0x1234); p64(r, 0xdead000);                             /* weight, data_src, phys */
		p64(r, 8); put(r, "auxauxau", 8);                                          /* aux sample */
		end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_LOST, 0); p64(r, 12); p64(r, 33); trailer(r, 12); end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_LOST_SAMPLES, 0); p64(r, 7); trailer(r, 12); end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_SWITCH_CPU_WIDE, PD_MISC_SWITCH_OUT); p32(r, 200); p32(r, 201); trailer(r, 11); end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_SWITCH, 0); trailer(r, 11); end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_AUX, 0); p64(r, 4096); p64(r, 24); p64(r, PD_AUX_FLAG_TRUNCATED); trailer(r, 11); end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_ITRACE_START, 0); p32(r, 100); p32(r, 101); trailer(r, 11); end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_KSYMBOL, 0); p64(r, 0xffffffffa0000000ULL); p32(r, 64); p16(r, 1); p16(r, 0); pstr(r, "bpf_prog_x"); trailer(r, 11); end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_AUX_OUTPUT_HW_ID, 0); p64(r, 0x10); trailer(r, 11); end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_FINISHED_ROUND, 0); end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_TIME_CONV, 0); p64(r, 10); p64(r, 555); p64(r, 1000); p64(r, 2000); p64(r, ~0ULL); put(r, "\1\1\0\0\0\0\0\0", 8); end(r);   /* u8 caps[2], pad */
	r = &recs[nrec++]; begin(r, PD_RECORD_ID_INDEX, 0); p64(r, 2); p64(r, 11); p64(r, 0); p64(r, 0); p64(r, (uint64_t)-1); p64(r, 12); p64(r, 1); p64(r, 1); p64(r, (uint64_t)-1); end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_THREAD_MAP, 0); p64(r, 1); p64(r, 100); put(r, "worker\0\0\0\0\0\0\0\0\0\0", 16); end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_CPU_MAP, 0); p16(r, 0); p16(r, 2); p16(r, 0); p16(r, 1); end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_AUXTRACE_INFO, 0); p32(r, PD_AUXTRACE_INTEL_PT); p32(r, 0);
		for (int i = 0; i < 17; i++)
			p64(r, (uint64_t)i * 3);
		p64(r, 0); end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_AUXTRACE_ERROR, 0); p32(r, 1); p32(r, 7); p32(r, 1); p32(r, 100); p32(r, 101); p32(r, 1);
		p64(r, 0x401000); p64(r, 6000); { char m[64] = "Overflow packet"; put(r, m, 64); } end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_AUXTRACE, 0); p64(r, sizeof(aux_payload)); p64(r, 4096); p64(r, 0x1122334455667788ULL);
		p32(r, 0); p32(r, 101); p32(r, 1); p32(r, 0); end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_FINISHED_INIT, 0); end(r);
	/* the rest of the kernel types */
	r = &recs[nrec++]; begin(r, PD_RECORD_THROTTLE, 0); p64(r, 7000); p64(r, 11); p64(r, 11); trailer(r, 11); end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_UNTHROTTLE, 0); p64(r, 7100); p64(r, 11); p64(r, 11); trailer(r, 11); end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_READ, 0); p32(r, 100); p32(r, 101); p64(r, 1); p64(r, 500); p64(r, 11); trailer(r, 11); end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_NAMESPACES, 0); p32(r, 100); p32(r, 101); p64(r, 2); p64(r, 3); p64(r, 4026531836ULL); p64(r, 3); p64(r, 4026531837ULL); trailer(r, 11); end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_BPF_EVENT, 0); p16(r, 1); p16(r, 0); p32(r, 42); put(r, "tagtag!!", 8); trailer(r, 11); end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_CGROUP, 0); p64(r, 99); pstr(r, "/user.slice"); trailer(r, 11); end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_TEXT_POKE, 0); p64(r, 0xffffffff81001000ULL); p16(r, 2); p16(r, 2); put(r, "\x90\x90\xcc\xcc", 4); put(r, "\0\0\0\0", 4); trailer(r, 11); end(r);
	/* the rest of the user types */
	r = &recs[nrec++]; begin(r, PD_RECORD_HEADER_EVENT_TYPE, 0); p64(r, 5); { char n[64] = "cycles"; put(r, n, 64); } end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_HEADER_BUILD_ID, PD_MISC_USER | PD_MISC_BUILD_ID_SIZE); p32(r, 100);
		{ uint8_t b[24] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 20, 0, 0, 0 }; put(r, b, 24); }
		pstr(r, "/usr/bin/worker"); end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_STAT_CONFIG, 0); p64(r, 2); p64(r, 0); p64(r, 1); p64(r, 1); p64(r, 0); end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_STAT, 0); p64(r, 11); p32(r, 0); p32(r, 0); p64(r, 1234); p64(r, 100); p64(r, 90); end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_STAT_ROUND, 0); p64(r, 1); p64(r, 8000); end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_EVENT_UPDATE, 0); p64(r, 2); p64(r, 12); pstr(r, "task-clock"); end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_EVENT_UPDATE, 0); p64(r, 1); p64(r, 12); { double d = 1e-6; put(r, &d, 8); } end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_EVENT_UPDATE, 0); p64(r, 3); p64(r, 12); p16(r, 1); p16(r, 1); p16(r, 8); p32(r, 0); p64(r, 3); p16(r, 0); p32(r, 0); end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_CPU_MAP, 0); p16(r, 2); p16(r, 0); p16(r, 0); p16(r, 3); end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_TIME_CONV, 0); p64(r, 10); p64(r, 556); p64(r, 1000); end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_AUXTRACE_ERROR, 0); p32(r, 1); p32(r, 8); p32(r, 0); p32(r, 100); p32(r, 101); p32(r, 0);
		p64(r, 0x401000); { char m[64] = "Lost trace data (old layout)"; put(r, m, 64); } end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_AUXTRACE_ERROR, 0); p32(r, 1); p32(r, 7); p32(r, 1); p32(r, 100); p32(r, 101); p32(r, 2);
		p64(r, 0x401000); p64(r, 6100); { char m[64] = "guest overflow"; put(r, m, 64); } p32(r, 3); p32(r, 1); end(r);
	r = &recs[nrec++]; begin(r, PD_RECORD_AUXTRACE_INFO, 0); p32(r, PD_AUXTRACE_CS_ETM); p32(r, 0);
		p64(r, 1); p64(r, (8ULL << 32) | 1); p64(r, 0);
		p64(r, 0x4040404040404040ULL); p64(r, 0); p64(r, 8); p64(r, 0x40); p64(r, 0x10); p64(r, 0x28000ea1); p64(r, 0x4100f422);
		p64(r, 0x20000888); p64(r, 0); p64(r, 0x8c); p64(r, 1); end(r);
	for (size_t i = 0; i < sizeof(aux_payload); i++)
		aux_payload[i] = (uint8_t)(0x80 + i);
}

static struct pd_event_attr make_attr(uint32_t type, uint64_t config)
{
	struct pd_event_attr a;
	memset(&a, 0, sizeof(a));
	a.type = type;
	a.size = 128;
	a.config = config;
	a.sample_period = 4000;
	a.sample_type = ST;
	a.read_format = PD_FORMAT_GROUP | PD_FORMAT_ID;
	a.flags = pd_attr_flag_mask(PD_ATTR_SAMPLE_ID_ALL) | pd_attr_flag_mask(PD_ATTR_DISABLED) |
		  pd_attr_flag_mask(PD_ATTR_MMAP2);
	a.branch_sample_type = 0;
	a.sample_regs_user = 0x5;
	a.sample_stack_user = 16;
	a.aux_sample_size = 8;
	return a;
}

static uint32_t ld_type(const uint8_t *p) { uint32_t t; memcpy(&t, p, 4); return t; }

static int write_file(const char *path, int pipe_mode, int foreign)
{
	struct pd_writer_opts o;
	struct pd_writer *w;
	struct pd_error err;
	pd_writer_opts_init(&o);
	o.pipe_mode = pipe_mode;
	o.foreign = foreign;
	if (pd_writer_open(&w, path, &o, &err) < 0) {
		diag("open: %s", err.msg);
		return -1;
	}
	struct pd_event_attr a1 = make_attr(PD_TYPE_SOFTWARE, 0), a2 = make_attr(PD_TYPE_SOFTWARE, 1);
	uint64_t ids1[] = { 11 }, ids2[] = { 12 };
	pd_writer_add_evsel(w, &a1, ids1, 1, "cpu-clock", &err);
	pd_writer_add_evsel(w, &a2, ids2, 1, "task-clock", &err);
	struct pd_buf b = { 0 };
	pd_buf_string(&b, "testhost");
	pd_writer_set_feature(w, PD_FEAT_HOSTNAME, b.data, b.len, &err);
	b.len = 0;
	pd_buf_u32(&b, 2);
	pd_buf_u32(&b, 2);
	pd_writer_set_feature(w, PD_FEAT_NRCPUS, b.data, b.len, &err);
	b.len = 0;
	pd_buf_u32(&b, 2); pd_buf_string(&b, "0-1"); pd_buf_string(&b, "0-1");
	pd_buf_u32(&b, 1); pd_buf_string(&b, "0-1");
	pd_buf_u32(&b, 0); pd_buf_u32(&b, 0); pd_buf_u32(&b, 1); pd_buf_u32(&b, 0);
	pd_writer_set_feature(w, PD_FEAT_CPU_TOPOLOGY, b.data, b.len, &err);
	b.len = 0;
	pd_buf_u32(&b, 2); pd_buf_string(&b, "/usr/bin/perf"); pd_buf_string(&b, "record");
	pd_writer_set_feature(w, PD_FEAT_CMDLINE, b.data, b.len, &err);
	pd_buf_free(&b);
	for (int i = 0; i < nrec; i++) {
		int aux = ld_type(recs[i].b) == PD_RECORD_AUXTRACE;
		if (pd_writer_write(w, recs[i].b, -1, aux ? aux_payload : NULL, aux ? sizeof(aux_payload) : 0, &err) < 0) {
			diag("write record %d: %s", i, err.msg);
			pd_writer_free(w);
			return -1;
		}
	}
	if (pd_writer_close(w, &err) < 0) {
		diag("close: %s", err.msg);
		return -1;
	}
	return 0;
}

static void kv_count(void *ctx, const char *key, uint64_t v, const char *str)
{
	struct kv { int n, err; uint64_t traceid; } *kv = ctx;
	kv->n++;
	if (!strcmp(key, "error"))
		kv->err++;
	if (!strcmp(key, "cpu0.trctraceidr"))
		kv->traceid = v;
	(void)str;
}

/* Read @path back: every record equal to the source, features and evsels intact. */
static void check_file(const char *path, const char *what, int pipe_mode, int foreign)
{
	struct pd_reader *r;
	struct pd_error err;
	if (!ok(pd_reader_open(&r, path, NULL, &err) == 0, "%s: opens", what)) {
		diag("%s", err.msg);
		return;
	}
	const struct pd_file_info *fi = pd_reader_info(r);
	ok(fi->pipe_mode == pipe_mode && fi->swapped == foreign, "%s: mode %d and byte order %d detected",
	   what, fi->pipe_mode, fi->swapped);
	struct pd_record rec;
	int i = 0, rc, same = 1, parsed = 1, aux_ok = 0, user_hdr = 0;
	while ((rc = pd_reader_next(r, &rec, &err)) == 1) {
		if (rec.type == PD_RECORD_HEADER_ATTR || rec.type == PD_RECORD_HEADER_FEATURE) {
			user_hdr++;
			continue;
		}
		if (i >= nrec || rec.size != recs[i].n || memcmp(rec.data, recs[i].b, rec.size)) {
			diag("%s: record %d (type %u) differs", what, i, rec.type);
			same = 0;
		}
		struct pd_event ev;
		if (pd_event_parse(r, &rec, &ev, &err) < 0) {
			diag("%s: parse record %d: %s", what, i, err.msg);
			parsed = 0;
		}
		if (rec.type == PD_RECORD_SAMPLE) {
			struct pd_sample *s = &ev.u.sample;
			struct pd_read_value v;
			pd_read_value_at(&s->read, 1, &v);
			if (!ok(s->ip == 0x401000 && s->pid == 100 && s->tid == 101 && s->cpu == 1 &&
			   s->callchain_nr == 3 && pd_u64_at(s->callchain, 2) == 0x402000 &&
			   s->raw_size == 12 && !memcmp(s->raw, "rawrawrawraw", 12) &&
			   s->branch_nr == 1 && pd_u64_at(s->branches, 1) == 0x401100 &&
			   s->regs_user.nr == 2 && s->stack_size == 16 && s->stack_dyn_size == 16 &&
			   s->weight == 99 && s->phys_addr == 0xdead000 && s->aux_size == 8 &&
			   s->read.nr == 2 && v.value == 12 && v.id == 78 && rec.evsel == 0,
			   "%s: sample fields", what))
				diag("ip %llx pid %u tid %u cpu %u cc %llu raw %u br %llu regs %llu stack %llu/%llu w %llu phys %llx aux %llu read %llu v %llu/%llu evsel %d",
			     (unsigned long long)s->ip, s->pid, s->tid, s->cpu, (unsigned long long)s->callchain_nr, s->raw_size,
			     (unsigned long long)s->branch_nr, (unsigned long long)s->regs_user.nr, (unsigned long long)s->stack_size,
			     (unsigned long long)s->stack_dyn_size, (unsigned long long)s->weight, (unsigned long long)s->phys_addr,
			     (unsigned long long)s->aux_size, (unsigned long long)s->read.nr, (unsigned long long)v.value,
			     (unsigned long long)v.id, rec.evsel);
		}
		if (rec.type == PD_RECORD_MMAP2 && !(rec.misc & PD_MISC_MMAP_BUILD_ID))
			ok(ev.sid.pid == 100 && ev.sid.time == 5000 && ev.sid.id == 12 && rec.evsel == 1 &&
			   !strcmp(ev.u.mmap2.filename, "/usr/bin/worker") && ev.u.mmap2.ino == 1234,
			   "%s: mmap2 body and trailer, attributed to evsel 1", what);
		if (rec.type == PD_RECORD_AUXTRACE) {
			uint8_t buf[64];
			int64_t n = pd_reader_read_payload(r, buf, sizeof(buf), &err);
			aux_ok = n == (int64_t)sizeof(aux_payload) && !memcmp(buf, aux_payload, sizeof(aux_payload)) &&
				 ev.u.auxtrace.reference == 0x1122334455667788ULL;
		}
		if (rec.type == PD_RECORD_CPU_MAP && ev.u.cpu_map.type == 0)
			ok(pd_cpu_map_each(&ev, NULL, NULL) == 2, "%s: cpu map has 2 cpus", what);
		if (rec.type == PD_RECORD_AUXTRACE_ERROR && ev.u.auxtrace_error.fmt == 1)
			ok(ev.u.auxtrace_error.code == 7 && ev.u.auxtrace_error.time == 6000 &&
			   !strcmp(ev.u.auxtrace_error.msg, "Overflow packet"), "%s: auxtrace error", what);
		if (rec.type == PD_RECORD_TIME_CONV && ev.u.time_conv.time_mult == 555)
			ok(ev.u.time_conv.has_cycles && ev.u.time_conv.time_cycles == 2000 &&
			   ev.u.time_conv.cap_user_time_zero == 1, "%s: time_conv (56 bytes)", what);
		if (rec.type == PD_RECORD_TIME_CONV && ev.u.time_conv.time_mult == 556)
			ok(!ev.u.time_conv.has_cycles && ev.u.time_conv.time_zero == 1000, "%s: time_conv (32 bytes)", what);
		if (rec.type == PD_RECORD_AUXTRACE_ERROR && ev.u.auxtrace_error.fmt == 0)
			ok(ev.u.auxtrace_error.code == 8 && !strcmp(ev.u.auxtrace_error.msg, "Lost trace data (old layout)"),
			   "%s: auxtrace error, old layout (no time)", what);
		if (rec.type == PD_RECORD_AUXTRACE_ERROR && ev.u.auxtrace_error.fmt == 2)
			ok(ev.u.auxtrace_error.has_machine && ev.u.auxtrace_error.machine_pid == 3 &&
			   ev.u.auxtrace_error.vcpu == 1 && ev.u.auxtrace_error.time == 6100, "%s: auxtrace error, guest layout", what);
		if (rec.type == PD_RECORD_READ)
			ok(ev.u.read.values.nr == 1 && pd_u64_at(ev.u.read.values.values, 0) == 500 && rec.evsel == 0, "%s: READ record with group values", what);
		if (rec.type == PD_RECORD_NAMESPACES)
			ok(ev.u.namespaces.nr == 2 && pd_u64_at(ev.u.namespaces.link_info, 3) == 4026531837ULL,
			   "%s: namespaces", what);
		if (rec.type == PD_RECORD_TEXT_POKE)
			ok(ev.u.text_poke.old_len == 2 && ev.u.text_poke.bytes[2] == 0xcc, "%s: text_poke", what);
		if (rec.type == PD_RECORD_HEADER_BUILD_ID)
			ok(ev.u.build_id.size == 20 && ev.u.build_id.build_id[19] == 20 &&
			   !strcmp(ev.u.build_id.filename, "/usr/bin/worker"), "%s: build id record", what);
		if (rec.type == PD_RECORD_STAT)
			ok(ev.u.stat.val == 1234 && ev.u.stat.run == 90, "%s: stat", what);
		if (rec.type == PD_RECORD_EVENT_UPDATE && ev.u.event_update.type == 3) {
			uint16_t h[3];   /* u16 type (mask), nr, long_size: read as u16s, so both byte orders pass */
			memcpy(h, ev.u.event_update.data, sizeof(h));
			ok(h[0] == 1 && h[1] == 1 && h[2] == 8 &&
			   pd_u64_at(ev.u.event_update.data + 10, 0) == 3, "%s: event_update cpus", what);
		}
		if (rec.type == PD_RECORD_CPU_MAP && ev.u.cpu_map.type == 2)
			ok(pd_cpu_map_each(&ev, NULL, NULL) == 4, "%s: cpu map range 0-3", what);
		if (rec.type == PD_RECORD_AUXTRACE_INFO && ev.u.auxtrace_info.type == PD_AUXTRACE_CS_ETM) {
			struct kv { int n, err; uint64_t traceid; } kv = { 0, 0, 0 };
			pd_auxtrace_info_describe(&ev, pd_reader_info(r)->swapped, kv_count, &kv);
			ok(kv.err == 0 && kv.traceid == 0x10 && kv.n == 4 + 1 + 8, "%s: cs_etm AUXTRACE_INFO named (%d keys)", what, kv.n);
		}
		i++;
	}
	ok(rc == 0, "%s: reads to the end (%s)", what, rc ? err.msg : "clean");
	ok(same && i == nrec, "%s: %d records identical to the source", what, i);
	ok(parsed, "%s: every record parses", what);
	ok(aux_ok, "%s: AUXTRACE payload intact", what);
	ok(!pipe_mode || user_hdr >= 3, "%s: pipe mode carries ATTR and FEATURE records", what);
	ok(pd_reader_nr_evsels(r) == 2 && pd_reader_evsel(r, 1)->name &&
	   !strcmp(pd_reader_evsel(r, 1)->name, "task-clock") && pd_reader_evsel(r, 1)->ids[0] == 12 &&
	   pd_reader_evsel(r, 0)->attr.sample_regs_user == 0x5 &&
	   pd_attr_flag(&pd_reader_evsel(r, 0)->attr, PD_ATTR_SAMPLE_ID_ALL) &&
	   !pd_attr_flag(&pd_reader_evsel(r, 0)->attr, PD_ATTR_INHERIT),
	   "%s: evsels with names, ids and flags", what);
	struct pd_features f;
	ok(pd_features_parse(r, &f, &err) == 0 && f.hostname && !strcmp(f.hostname, "testhost") &&
	   f.nr_cpus_online == 2 && f.cmdline.nr == 2 && !strcmp(f.cmdline.str[1], "record") &&
	   f.thread_siblings.nr == 1 && (pipe_mode || f.nr_auxtrace_index == 1),
	   "%s: features read back", what);
	pd_features_free(&f);
	pd_reader_free(r);
}

/* Every prefix of the file, and single-byte corruptions: no crash, errors name an offset. */
static void check_damage(const char *path, const char *what)
{
	int fd = open(path, O_RDONLY);
	off_t size = lseek(fd, 0, SEEK_END);
	uint8_t *orig = malloc((size_t)size);
	if (pread(fd, orig, (size_t)size, 0) != size) {
		ok(0, "%s: read original", what);
		return;
	}
	close(fd);
	char tmp[] = "/tmp/pdtestXXXXXX";
	int t = mkstemp(tmp);
	int crashes_avoided = 1, errors_named = 1, tried = 0;
	for (off_t cut = 0; cut < size; cut += 1 + (cut > 200) * 3) {
		if (ftruncate(t, 0) || pwrite(t, orig, (size_t)cut, 0) != cut)
			break;
		struct pd_reader *r;
		struct pd_error err;
		struct pd_record rec;
		tried++;
		if (pd_reader_open(&r, tmp, NULL, &err) < 0) {
			if (!err.msg[0])
				errors_named = 0;
			continue;
		}
		int rc;
		while ((rc = pd_reader_next(r, &rec, &err)) == 1) {
			struct pd_event ev;
			pd_event_parse(r, &rec, &ev, &err);
			uint8_t buf[64];
			if (rec.payload_size)
				pd_reader_read_payload(r, buf, sizeof(buf), &err);
		}
		if (rc < 0 && (err.offset == PD_NO_OFFSET || !err.msg[0]))
			errors_named = 0, diag("cut %lld: %s", (long long)cut, err.msg);
		pd_reader_free(r);
	}
	ok(crashes_avoided && tried > 0, "%s: %d truncations read without a crash", what, tried);
	ok(errors_named, "%s: every truncation error names an offset", what);
	srand(7);
	int flips = 0;
	for (int k = 0; k < 400; k++) {
		uint8_t *copy = malloc((size_t)size);
		memcpy(copy, orig, (size_t)size);
		for (int j = 0; j < 3; j++)
			copy[rand() % size] ^= (uint8_t)(1u << (rand() % 8));
		if (ftruncate(t, 0) || pwrite(t, copy, (size_t)size, 0) != size)
			break;
		free(copy);
		struct pd_reader *r;
		struct pd_error err;
		struct pd_record rec;
		flips++;
		if (pd_reader_open(&r, tmp, NULL, &err) < 0)
			continue;
		while (pd_reader_next(r, &rec, &err) == 1) {
			struct pd_event ev;
			pd_event_parse(r, &rec, &ev, &err);
		}
		struct pd_features f;
		pd_features_parse(r, &f, &err);
		pd_features_free(&f);
		pd_reader_free(r);
	}
	ok(flips == 400, "%s: %d files with flipped bits read without a crash", what, flips);
	close(t);
	unlink(tmp);
	free(orig);
}

static void check_api_edges(void)
{
	struct pd_reader *r = (void *)1;
	struct pd_error err;
	for (int c = 0; c >= PD_ERR_NOATTR; c--)
		if (!pd_strerror(c) || !pd_strerror(c)[0]) {
			ok(0, "pd_strerror(%d) has text", c);
			return;
		}
	ok(1, "pd_strerror has text for every code");
	pd_error_clear(NULL);
	pd_reader_free(NULL);
	pd_writer_free(NULL);
	pd_features_free(NULL);
	ok(1, "free functions accept NULL");
	ok(pd_reader_open(&r, NULL, NULL, &err) == PD_ERR_INVAL && r == NULL, "NULL path is PD_ERR_INVAL");
	ok(pd_reader_open(&r, "/nonexistent/perf.data", NULL, &err) == PD_ERR_IO && strstr(err.msg, "/nonexistent"),
	   "missing file is PD_ERR_IO naming the path");
	ok(pd_reader_open(&r, "/dev/null", NULL, &err) == PD_ERR_MAGIC, "empty input is not perf.data");
	ok(pd_record_name(PD_RECORD_SAMPLE) && !strcmp(pd_record_name(PD_RECORD_SAMPLE), "SAMPLE") &&
	   pd_record_name(200) == NULL, "record names");
	/* swap is an involution for every record of the synthetic file */
	struct pd_evsel es;
	memset(&es, 0, sizeof(es));
	es.attr = make_attr(1, 0);
	es.trailer_size = 40;
	int inv = 1;
	for (int i = 0; i < nrec; i++) {
		uint8_t b[4096];
		memcpy(b, recs[i].b, recs[i].n);
		if (pd_swap_record(b, recs[i].n, &es, 0, &err) < 0 || pd_swap_record(b, recs[i].n, &es, 1, &err) < 0 ||
		    memcmp(b, recs[i].b, recs[i].n)) {
			diag("record %d: %s", i, err.msg);
			inv = 0;
		}
	}
	ok(inv, "swapping out and back restores every record type");
	uint8_t shortrec[16] = { 0 };
	struct { uint32_t type; uint16_t misc, size; } shorthdr = { PD_RECORD_SAMPLE, 0, 16 };   /* native order */
	memcpy(shortrec, &shorthdr, sizeof(shorthdr));
	ok(pd_swap_record(shortrec, 16, &es, 0, &err) == PD_ERR_RECORD, "a sample shorter than its fields is refused by swap");
	struct pd_sample s;
	ok(pd_sample_parse(&es, recs[6].b, 24, &s, &err) == PD_ERR_RECORD && strstr(err.msg, "does not fit"),
	   "a cut sample is refused by the parser with the field named");
}


/* ------------------------------------------- small streams from records */

/* A pipe-mode stream of @n records (recbufs), written to a file a reader opens; NULL on failure. */
static struct pd_reader *open_pipe_stream(const struct recbuf *v, int n, char *path)
{
	static uint8_t b[65536];
	size_t len = 0;
	uint64_t magic = 0x32454c4946524550ULL, hsize = 16;   /* "PERFILE2" as this host stores it: native */
	memcpy(b, &magic, 8);
	memcpy(b + 8, &hsize, 8);
	len = 16;
	for (int i = 0; i < n; i++) {
		memcpy(b + len, v[i].b, v[i].n);
		len += v[i].n;
	}
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, b, len) != (ssize_t)len) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	close(fd);
	struct pd_reader *r;
	struct pd_error err;
	return pd_reader_open(&r, path, NULL, &err) == 0 ? r : NULL;
}

/*
 * perf 3.x's pipe-mode EVENT_TYPE records: perf cut the 64-byte name field to
 * the name rounded up to 8, so "branches" and "cache-references" fill theirs
 * with no NUL (quipper's perf.data.piped.target-3.8).
 */
static void check_event_type_names(void)
{
	static const char *const names[] = { "cycles", "branches", "cache-references", "stalled-cycles-frontend" };
	struct recbuf v[4];
	for (int i = 0; i < 4; i++) {
		size_t len = strlen(names[i]), field = (len + 7) & ~(size_t)7;
		char f[64] = { 0 };
		memcpy(f, names[i], len);
		begin(&v[i], PD_RECORD_HEADER_EVENT_TYPE, 0);
		p64(&v[i], (uint64_t)i);
		put(&v[i], f, field);
		end(&v[i]);
	}
	char path[] = "/tmp/pdetXXXXXX";
	struct pd_reader *r = open_pipe_stream(v, 4, path);
	if (!ok(r != NULL, "EVENT_TYPE stream opens")) {
		unlink(path);
		return;
	}
	struct pd_record rec;
	struct pd_event ev;
	struct pd_error err;
	int i = 0, good = 1;
	while (pd_reader_next(r, &rec, &err) == 1) {
		int rc = pd_event_parse(r, &rec, &ev, &err);
		if (rc < 0 || i >= 4 || ev.u.event_type.event_id != (uint64_t)i || strcmp(ev.u.event_type.name, names[i])) {
			diag("record %d: %s", i, rc < 0 ? err.msg : ev.u.event_type.name);
			good = 0;
		}
		i++;
	}
	ok(good && i == 4, "EVENT_TYPE names that fill their field without a NUL are read whole (branches, cache-references)");
	pd_reader_free(r);
	unlink(path);
}

/* A writer on a new temporary file (@path: a mkstemp template, filled in); NULL on failure. */
static struct pd_writer *tmp_writer(char *path)
{
	struct pd_writer *w;
	struct pd_error err;
	int fd = mkstemp(path);
	return fd >= 0 && pd_writer_open_fd(&w, fd, path, 1, NULL, &err) == 0 ? w : NULL;
}

/*
 * Events the recording does not name are named as perf names them (with its
 * modifiers: perf report --stats, perf script and export-to-sqlite.py say
 * "cycles:ppH"); simpleperf's META_INFO names get simpleperf's ":u" / ":k".
 */
static void check_event_names(void)
{
	static const struct { uint32_t type; uint64_t config; int xu, xk, xh, xg, precise; const char *given, *want; } ev[] = {
		{ PD_TYPE_HARDWARE, 0, 0, 0, 0, 1, 2, NULL, "cycles:ppH" },
		{ PD_TYPE_SOFTWARE, 0, 0, 1, 1, 0, 0, NULL, "cpu-clock:u" },
		{ PD_TYPE_HW_CACHE, 0x10000, 0, 0, 0, 0, 0, NULL, "L1-dcache-load-misses:HG" },
		{ PD_TYPE_RAW, 0x1c2, 1, 0, 1, 0, 0, NULL, "raw 0x1c2:k" },
		{ PD_TYPE_HARDWARE, 1, 0, 1, 1, 1, 0, "instructions:u", "instructions:u" },
	};
	char path[] = "/tmp/pdnameXXXXXX";
	struct pd_writer *w = tmp_writer(path);
	struct pd_error err;
	if (!w) {
		ok(0, "names file written");
		return;
	}
	for (int i = 0; i < 5; i++) {
		struct pd_event_attr a = make_attr(ev[i].type, ev[i].config);
		a.read_format = 0;
		a.flags |= (ev[i].xu ? pd_attr_flag_mask(PD_ATTR_EXCLUDE_USER) : 0) |
			   (ev[i].xk ? pd_attr_flag_mask(PD_ATTR_EXCLUDE_KERNEL) : 0) |
			   (ev[i].xh ? pd_attr_flag_mask(PD_ATTR_EXCLUDE_HV) : 0) |
			   (ev[i].xg ? pd_attr_flag_mask(PD_ATTR_EXCLUDE_GUEST) : 0) |
			   (ev[i].precise & 1 ? pd_attr_flag_mask(PD_ATTR_PRECISE_IP0) : 0) |
			   (ev[i].precise & 2 ? pd_attr_flag_mask(PD_ATTR_PRECISE_IP1) : 0);
		uint64_t id = 100 + (uint64_t)i;
		pd_writer_add_evsel(w, &a, &id, 1, ev[i].given, &err);
	}
	struct recbuf comm;   /* a record, so that the data size is not 0 and the features are read */
	begin(&comm, PD_RECORD_COMM, 0); p32(&comm, 7); p32(&comm, 7); pstr(&comm, "app"); end(&comm);
	struct pd_reader *r;
	if (pd_writer_write(w, comm.b, -1, NULL, 0, &err) < 0 || pd_writer_close(w, &err) < 0 ||
	    !ok(pd_reader_open(&r, path, NULL, &err) == 0, "names file opens")) {
		unlink(path);
		return;
	}
	int good = pd_reader_nr_evsels(r) == 5;
	for (int i = 0; good && i < 5; i++) {
		const struct pd_evsel *es = pd_reader_evsel(r, (size_t)i);
		char b[128];
		pd_evsel_perf_name(es, b, sizeof(b));
		if (!es->name || strcmp(es->name, ev[i].want) || strcmp(b, ev[i].want)) {
			diag("event %d: %s / %s, want %s", i, es->name ? es->name : "(none)", b, ev[i].want);
			good = 0;
		}
	}
	ok(good, "unnamed events get perf's names and modifiers (cycles:ppH, cpu-clock:u, L1-dcache-load-misses:HG, raw 0x1c2:k); a recorded name stays");
	pd_reader_free(r);
	unlink(path);
}

/*
 * Samples with PERF_SAMPLE_READ of a group, as perf delivers them: one per
 * counter that grew, of the counter's event, its growth as period; a
 * counter that did not grow and an id no event has give none.
 */
static void check_read_deliveries(void)
{
	char path[] = "/tmp/pdreadXXXXXX";
	struct pd_writer *w = tmp_writer(path);
	struct pd_error err;
	if (!w) {
		ok(0, "read-group file written");
		return;
	}
	for (int i = 0; i < 2; i++) {
		struct pd_event_attr a = make_attr(PD_TYPE_HARDWARE, (uint64_t)i);
		a.sample_type = PD_SAMPLE_IP | PD_SAMPLE_ID | PD_SAMPLE_READ;
		a.read_format = PD_FORMAT_GROUP | PD_FORMAT_ID;
		a.flags = 0;
		uint64_t id = 11 + (uint64_t)i;
		pd_writer_add_evsel(w, &a, &id, 1, i ? "instructions" : "cycles", &err);
	}
	/* {leader's value, member's value} per sample; id 99 belongs to no event */
	static const uint64_t vals[][3] = { { 100, 50, 0 }, { 100, 80, 0 }, { 160, 80, 7 } };
	for (int k = 0; k < 3; k++) {
		struct recbuf r;
		begin(&r, PD_RECORD_SAMPLE, PD_MISC_USER);
		p64(&r, 0x400000 + (uint64_t)k); p64(&r, 11);
		p64(&r, vals[k][2] ? 3 : 2);
		p64(&r, vals[k][0]); p64(&r, 11);
		p64(&r, vals[k][1]); p64(&r, 12);
		if (vals[k][2]) { p64(&r, vals[k][2]); p64(&r, 99); }
		end(&r);
		pd_writer_write(w, r.b, 0, NULL, 0, &err);
	}
	struct pd_reader *rd;
	struct pd_read_tracker *t = pd_read_tracker_new();
	if (pd_writer_close(w, &err) < 0 || !t || !ok(pd_reader_open(&rd, path, NULL, &err) == 0, "read-group file opens")) {
		pd_read_tracker_free(t);
		unlink(path);
		return;
	}
	/* want: sample 0 -> cycles 100, instructions 50; 1 -> instructions 30; 2 -> cycles 60 */
	static const struct { int evsel; uint64_t period; } want[] = { { 0, 100 }, { 1, 50 }, { 1, 30 }, { 0, 60 } };
	static const int want_n[] = { 2, 1, 1 };
	struct pd_record rec;
	struct pd_event ev;
	int k = 0, at = 0, good = 1;
	while (pd_reader_next(rd, &rec, &err) == 1) {
		const struct pd_read_delivery *d;
		int n = pd_event_parse(rd, &rec, &ev, &err) == 0 ? pd_read_deliveries(t, rd, &ev.u.sample, &d) : -1;
		if (k >= 3 || n != want_n[k]) {
			diag("sample %d: %d deliveries", k, n);
			good = 0;
			break;
		}
		for (int i = 0; i < n; i++, at++)
			if (d[i].evsel != want[at].evsel || d[i].period != want[at].period) {
				diag("sample %d delivery %d: event %d period %llu", k, i, d[i].evsel, (unsigned long long)d[i].period);
				good = 0;
			}
		k++;
	}
	ok(good && k == 3, "PERF_SAMPLE_READ groups: a sample per counter that grew, its growth the period; none for an unknown id");
	pd_read_tracker_free(t);
	pd_reader_free(rd);
	unlink(path);
}

/* ---------------------------------------------------- simpleperf's records */

static size_t sp_put(uint8_t *b, size_t at, const void *p, size_t n) { memcpy(b + at, p, n); return at + n; }
static void st16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }

/* simpleperf's header: u32 type, u16 size >> 16, u16 size & 0xffff */
static size_t sp_header(uint8_t *b, size_t at, uint32_t type, uint32_t size)
{
	uint16_t hi = (uint16_t)(size >> 16), lo = (uint16_t)size;
	at = sp_put(b, at, &type, 4);
	at = sp_put(b, at, &hi, 2);
	return sp_put(b, at, &lo, 2);
}

static size_t sp_comm(uint8_t *b, size_t at)
{
	struct recbuf r;
	begin(&r, PD_RECORD_COMM, 0); p32(&r, 7); p32(&r, 7); pstr(&r, "app"); end(&r);
	return sp_put(b, at, r.b, r.n);
}

/*
 * A file-mode perf.data as simpleperf writes it: one attr, then a COMM, a
 * TRACING_DATA (32777) of 100 bytes cut into two SPLIT records (@split_end:
 * closed by SPLIT_END), perf's TRACING_DATA type 66 with its data inside,
 * a KERNEL_SYMBOL over 64 KiB, a COMM. Returns the file's size.
 */
static size_t sp_file(uint8_t *b, int split_end, size_t *off)
{
	size_t at = 104, attrs = at, asz = 112;
	memset(b, 0, 200000);
	uint8_t attr[112] = { 0 };
	uint32_t one = 1, attr_size = 112;
	memcpy(attr, &one, 4);                       /* PERF_TYPE_SOFTWARE */
	memcpy(attr + 4, &attr_size, 4);
	attr[24] = 1;                                /* sample_type IP */
	at = sp_put(b, at, attr, asz);
	uint64_t ids[2] = { 0, 0 };
	at = sp_put(b, at, ids, 16);
	size_t data = at;
	off[0] = at;
	at = sp_comm(b, at);
	/* the record to split: TRACING_DATA, u32 100, 100 bytes padded to 128 */
	uint8_t whole[140] = { 0 };
	sp_header(whole, 0, PD_SP_RECORD_TRACING_DATA, 140);
	uint32_t n = 100;
	memcpy(whole + 8, &n, 4);
	memset(whole + 12, 'T', 100);
	off[1] = at;
	at = sp_header(b, at, PD_SP_RECORD_SPLIT, 8 + 60);
	at = sp_put(b, at, whole, 60);
	at = sp_header(b, at, PD_SP_RECORD_SPLIT, 8 + 80);
	at = sp_put(b, at, whole + 60, 80);
	if (split_end)
		at = sp_header(b, at, PD_SP_RECORD_SPLIT_END, 8);
	off[2] = at;
	uint32_t ten = 10;
	at = sp_header(b, at, PD_RECORD_HEADER_TRACING_DATA, 0);
	st16(b + off[2] + 4, 0);
	st16(b + off[2] + 6, 12 + 64);
	at = sp_put(b, at, &ten, 4);
	at += 64;
	off[3] = at;
	uint32_t ks = 70000 - 12;
	at = sp_header(b, at, PD_SP_RECORD_KERNEL_SYMBOL, 70000);
	at = sp_put(b, at, &ks, 4);
	memset(b + at, 'k', ks);
	at += ks;
	off[4] = at;
	at = sp_comm(b, at);
	uint64_t hdr[] = { 104, asz + 16, attrs, asz + 16, data, at - data, 0, 0 };
	uint64_t magic = 0x32454c4946524550ULL;     /* "PERFILE2" as this host stores it: a native file */
	memcpy(b, &magic, 8);
	memcpy(b + 8, hdr, sizeof(hdr));
	return at;
}


static void check_simpleperf(void)
{
	static uint8_t b[200000];
	size_t off[5];
	for (int split_end = 1; split_end >= 0; split_end--) {
		size_t len = sp_file(b, split_end, off);
		char path[] = "/tmp/pdspXXXXXX";
		int fd = mkstemp(path);
		if (fd < 0 || write(fd, b, len) != (ssize_t)len) {
			ok(0, "simpleperf file written");
			return;
		}
		close(fd);
		struct pd_reader *r;
		struct pd_error err;
		struct pd_record rec;
		struct pd_reader_opts o;
		pd_reader_opts_init(&o);
		if (!ok(pd_reader_open(&r, path, &o, &err) == 0, "simpleperf file opens")) {
			unlink(path);
			return;
		}
		static const uint32_t want_type[] = { PD_RECORD_COMM, PD_SP_RECORD_TRACING_DATA, PD_RECORD_HEADER_TRACING_DATA,
						      PD_SP_RECORD_KERNEL_SYMBOL, PD_RECORD_COMM };
		static const uint32_t want_size[] = { 0, 140, 76, 70000, 0 };
		int i = 0, rc;
		while ((rc = pd_reader_next(r, &rec, &err)) == 1 && i < 5) {
			int good = rec.type == want_type[i] && rec.offset == off[i] && (!want_size[i] || rec.size == want_size[i]) &&
				   rec.payload_size == 0;
			if (i == 1) {
				uint32_t len100;
				memcpy(&len100, rec.data + 8, 4);   /* the file is native (sp_file) */
				good &= len100 == 100 && rec.data[12] == 'T' && rec.data[111] == 'T';
			}
			if (!split_end && i == 1)
				break;
			ok(good, "simpleperf record %d: type %u, size %u at offset %llu, nothing outside it", i, rec.type,
			   rec.size, (unsigned long long)rec.offset);
			i++;
		}
		if (split_end)
			ok(rc == 0 && i == 5, "simpleperf file read whole: SPLIT records joined, tracing data inside its record, a 70000-byte record");
		else
			ok(rc == PD_ERR_RECORD && err.offset == off[2] && strstr(err.msg, "SPLIT_END"),
			   "SPLIT records without SPLIT_END: an error at the record that follows them (%s)", err.msg);
		pd_reader_free(r);
		unlink(path);
	}
}

/*
 * simpleperf's file with META_INFO (feature 129) and no EVENT_DESC: its
 * event_type_info names the events, and simpleperf adds ":u" to the name of
 * an event that excludes only the kernel (its tests expect "cpu-clock:u").
 */
static void check_sp_event_names(void)
{
	static uint8_t b[4096];
	static const char meta[] = "simpleperf_version\0" "1.build.test\0" "event_type_info\0" "cpu-clock,1,0\ncpu-cycles,0,0\n";
	size_t at = 104, attrs = at;
	uint64_t xk = pd_attr_flag_mask(PD_ATTR_EXCLUDE_KERNEL) | pd_attr_flag_mask(PD_ATTR_EXCLUDE_HV);
	memset(b, 0, sizeof(b));
	for (uint32_t i = 0; i < 2; i++) {        /* cpu-clock excluding the kernel, then cycles */
		uint8_t attr[112] = { 0 };
		uint32_t type = i ? PD_TYPE_HARDWARE : PD_TYPE_SOFTWARE, size = 112;
		uint64_t flags = i ? 0 : xk, ids[2] = { 0, 0 };
		memcpy(attr, &type, 4);
		memcpy(attr + 4, &size, 4);
		attr[24] = 1;                         /* sample_type IP */
		memcpy(attr + 40, &flags, 8);
		at = sp_put(b, at, attr, 112);
		at = sp_put(b, at, ids, 16);
	}
	size_t data = at;
	at = sp_comm(b, at);
	uint64_t sec[2] = { at + 16, sizeof(meta) };
	size_t feat_table = at;
	at = sp_put(b, at, sec, 16);
	at = sp_put(b, at, meta, sizeof(meta));
	uint64_t hdr[] = { 104, 128, attrs, 256, data, feat_table - data, 0, 0, 0, 0, 1ull << (PD_FEAT_SP_META_INFO - 128) };
	uint64_t magic = 0x32454c4946524550ULL;     /* "PERFILE2" as this host stores it */
	memcpy(b, &magic, 8);
	memcpy(b + 8, hdr, sizeof(hdr));
	char path[] = "/tmp/pdspnameXXXXXX";
	int fd = mkstemp(path);
	struct pd_reader *r;
	struct pd_error err;
	if (fd < 0 || write(fd, b, at) != (ssize_t)at || close(fd) < 0 ||
	    !ok(pd_reader_open(&r, path, NULL, &err) == 0, "simpleperf names file opens")) {
		unlink(path);
		return;
	}
	const struct pd_evsel *e0 = pd_reader_evsel(r, 0), *e1 = pd_reader_evsel(r, 1);
	ok(e0 && e1 && e0->name && e1->name && !strcmp(e0->name, "cpu-clock:u") && !strcmp(e1->name, "cpu-cycles"),
	   "simpleperf's META_INFO names with simpleperf's modifier: cpu-clock:u (kernel excluded), cpu-cycles (%s, %s)",
	   e0 && e0->name ? e0->name : "-", e1 && e1->name ? e1->name : "-");
	pd_reader_free(r);
	unlink(path);
}

/* ------------------------------------------------------------ tracing data */

struct tblob { uint8_t *b; size_t at; int be; };

static void tb_num(struct tblob *t, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		t->b[t->at + i] = (uint8_t)(v >> 8 * (t->be ? n - 1 - i : i));
	t->at += n;
}

static void tb_put(struct tblob *t, const void *p, size_t n)
{
	memcpy(t->b + t->at, p, n);
	t->at += n;
}

/* A tracing-data blob as perf's trace-event-info.c writes it: @be orders its counts, @v06 adds saved cmdlines. */
static size_t tracing_blob(uint8_t *b, int be, int v06)
{
	static const struct { const char *sys, *name; unsigned id; } ev[] = {
		{ "sched", "sched_switch", 316 }, { "sched", "sched_wakeup", 317 }, { "probe_x", "main", 1800 },
	};
	static const char hp[] = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n";
	static const char ft[] = "name: function\nID: 1\nformat:\n";
	struct tblob t = { b, 0, be };
	tb_put(&t, "\027\010\104tracing", 10);
	tb_put(&t, v06 ? "0.6" : "0.5", 4);
	tb_num(&t, (uint64_t)be, 1);
	tb_num(&t, 8, 1);
	tb_num(&t, 4096, 4);
	tb_put(&t, "header_page", 12);
	tb_num(&t, sizeof(hp) - 1, 8);
	tb_put(&t, hp, sizeof(hp) - 1);
	tb_put(&t, "header_event", 13);
	tb_num(&t, 5, 8);
	tb_put(&t, "type\n", 5);
	tb_num(&t, 1, 4);    /* ftrace formats */
	tb_num(&t, sizeof(ft) - 1, 8);
	tb_put(&t, ft, sizeof(ft) - 1);
	tb_num(&t, 2, 4);    /* systems: sched (two formats), probe_x (one) */
	for (int s = 0; s < 2; s++) {
		int first = s ? 2 : 0, last = s ? 3 : 2;
		tb_put(&t, ev[first].sys, strlen(ev[first].sys) + 1);
		tb_num(&t, (uint64_t)(last - first), 4);
		for (int i = first; i < last; i++) {
			char f[256];
			int n = snprintf(f, sizeof(f), "name: %s\nID: %u\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\nprint fmt: \"x\"\n",
					 ev[i].name, ev[i].id);
			tb_num(&t, (uint64_t)n, 8);
			tb_put(&t, f, (size_t)n);
		}
	}
	tb_num(&t, 0, 4);    /* kallsyms */
	tb_num(&t, 7, 4);    /* printk formats */
	tb_put(&t, "0 x y\n", 7);
	if (v06) {
		tb_num(&t, 9, 8);
		tb_put(&t, "1 init\n\n", 9);
	}
	return t.at;
}

struct tp_seen { char names[8][64]; uint64_t ids[8]; int n, warnings, bad_offset; uint64_t lo, hi; };

static void tp_seen_event(void *ctx, uint64_t id, const char *sys, const char *name)
{
	struct tp_seen *t = ctx;
	if (t->n < 8) {
		snprintf(t->names[t->n], sizeof(t->names[0]), "%s:%s", sys, name);
		t->ids[t->n++] = id;
	}
}

static void tp_seen_warn(void *ctx, uint64_t off, const char *msg)
{
	struct tp_seen *t = ctx;
	char want[40];
	snprintf(want, sizeof(want), "offset %llu", (unsigned long long)off);
	t->warnings++;
	if (off < t->lo || off > t->hi || !strstr(msg, want)) {
		if (!t->bad_offset)
			diag("warning at %llu outside [%llu, %llu] or not naming it: %s", (unsigned long long)off,
			     (unsigned long long)t->lo, (unsigned long long)t->hi, msg);
		t->bad_offset = 1;
	}
}

static int tp_walk(const uint8_t *b, size_t n, uint64_t base, struct tp_seen *t)
{
	memset(t, 0, sizeof(*t));
	t->lo = base;
	t->hi = base + n;
	return (int)pd_tracing_each(b, n, base, tp_seen_event, tp_seen_warn, t);
}

/*
 * The tracing data's event formats name the tracepoints (pd_tracing.c):
 * both byte orders, versions 0.5 and 0.6; cut at every byte and with every
 * byte flipped, the walk warns naming an offset inside the data and never
 * reads past it (the sanitizer build checks the latter).
 */
static void check_tracing_walk(void)
{
	static uint8_t b[4096], c[4096];
	for (int be = 0; be < 2; be++)
		for (int v06 = 0; v06 < 2; v06++) {
			size_t n = tracing_blob(b, be, v06);
			struct tp_seen t;
			int got = tp_walk(b, n, 1000, &t);
			ok(got == 3 && t.n == 3 && !t.warnings && !strcmp(t.names[0], "sched:sched_switch") && t.ids[0] == 316 &&
			   !strcmp(t.names[1], "sched:sched_wakeup") && t.ids[1] == 317 &&
			   !strcmp(t.names[2], "probe_x:main") && t.ids[2] == 1800,
			   "tracing data (%s, %s): three formats, names and IDs (%d, %d warnings)", be ? "big-endian" : "little-endian",
			   v06 ? "0.6" : "0.5", got, t.warnings);
			int cuts_warn = 1, flips_ok = 1;
			for (size_t k = 0; k < n; k++) {
				memcpy(c, b, k);
				tp_walk(c, k, 1000, &t);
				if (!t.warnings || t.bad_offset || t.n > 3)
					cuts_warn = 0;
			}
			ok(cuts_warn, "tracing data (%s, %s) cut at each of its %zu bytes: a warning naming an offset inside it",
			   be ? "big-endian" : "little-endian", v06 ? "0.6" : "0.5", n);
			for (size_t k = 0; k < n; k++) {
				memcpy(c, b, n);
				c[k] ^= 0xff;
				tp_walk(c, n, 1000, &t);
				if (t.bad_offset || t.n > 3)
					flips_ok = 0;
			}
			ok(flips_ok, "tracing data (%s, %s) with each byte flipped: read without a crash, warnings name offsets inside it",
			   be ? "big-endian" : "little-endian", v06 ? "0.6" : "0.5");
		}
	struct tp_seen t;
	ok(tp_walk((const uint8_t *)"\027\010\104tracinG0.6", 14, 0, &t) == -1 && t.warnings == 1,
	   "data without the tracing magic is refused with one warning");
}

/*
 * A tracepoint that nothing else names takes "system:name" from the tracing
 * data as perf names it: in a file (the TRACING_DATA feature) and in a pipe
 * (the TRACING_DATA record's payload, which the reader peeks at and still
 * hands out whole), native and foreign, from a seekable file and from a
 * pipe. A format the data lacks leaves its event "unknown tracepoint".
 */
static void check_tracing_names(void)
{
	static uint8_t blob[4096];
	size_t n = tracing_blob(blob, 0, 1);
	for (int m = 0; m < 5; m++) {
		int pipe_mode = m >= 2, foreign = m == 1 || m == 3, via_pipe = m == 4;
		const char *what = (const char *[]){ "file/native", "file/foreign", "pipe/native", "pipe/foreign",
						     "pipe/native through a pipe" }[m];
		char path[] = "/tmp/pdtpXXXXXX";
		int fd = mkstemp(path);
		struct pd_writer_opts o;
		struct pd_writer *w;
		struct pd_error err;
		close(fd);
		pd_writer_opts_init(&o);
		o.pipe_mode = pipe_mode;
		o.foreign = foreign;
		if (!ok(pd_writer_open(&w, path, &o, &err) == 0, "%s: tracepoint file opens for writing", what))
			continue;
		static const uint64_t config[3] = { 1800, 317, 999 };
		for (int i = 0; i < 3; i++) {
			struct pd_event_attr a = make_attr(PD_TYPE_TRACEPOINT, config[i]);
			a.read_format = 0;
			uint64_t id = 50 + (uint64_t)i;
			pd_writer_add_evsel(w, &a, &id, 1, NULL, &err);
		}
		struct pd_buf hb = { 0 };   /* a foreign file's feature bits are told apart by HOSTNAME (perf's rule) */
		pd_buf_string(&hb, "testhost");
		pd_writer_set_feature(w, PD_FEAT_HOSTNAME, hb.data, hb.len, &err);
		pd_buf_free(&hb);
		pd_writer_set_feature(w, PD_FEAT_TRACING_DATA, blob, n, &err);
		struct recbuf comm;
		begin(&comm, PD_RECORD_COMM, 0); p32(&comm, 7); p32(&comm, 7); pstr(&comm, "app"); end(&comm);
		if (pd_writer_write(w, comm.b, -1, NULL, 0, &err) < 0 || pd_writer_close(w, &err) < 0) {
			ok(0, "%s: tracepoint file written: %s", what, err.msg);
			unlink(path);
			continue;
		}
		struct pd_reader *r = NULL;
		int rc;
		if (via_pipe) {
			int p[2];
			static uint8_t fb[16384];
			int in = open(path, O_RDONLY);
			ssize_t len = in >= 0 ? read(in, fb, sizeof(fb)) : -1;
			if (in >= 0)
				close(in);
			if (len <= 0 || pipe(p) < 0 || write(p[1], fb, (size_t)len) != len) {
				ok(0, "%s: the stream goes into a pipe", what);
				unlink(path);
				continue;
			}
			close(p[1]);
			rc = pd_reader_open_fd(&r, p[0], "pipe", 1, NULL, &err);
		} else {
			rc = pd_reader_open(&r, path, NULL, &err);
		}
		if (!ok(rc == 0, "%s: tracepoint file opens", what)) {
			unlink(path);
			continue;
		}
		struct pd_record rec;
		uint8_t payload[4096];
		int64_t got = -1;
		while (pd_reader_next(r, &rec, &err) > 0)
			if (rec.type == PD_RECORD_HEADER_TRACING_DATA && rec.payload_size)
				got = pd_reader_read_payload(r, payload, sizeof(payload), &err);
		static const char *const want[3] = { "probe_x:main", "sched:sched_wakeup", "unknown tracepoint" };
		int good = pd_reader_nr_evsels(r) == 3;
		for (int i = 0; good && i < 3; i++) {
			char b[128];
			pd_evsel_perf_name(pd_reader_evsel(r, (size_t)i), b, sizeof(b));
			if (strcmp(b, want[i])) {
				diag("%s: event %d is '%s', want '%s'", what, i, b, want[i]);
				good = 0;
			}
		}
		ok(good, "%s: tracepoints named from the tracing data (probe_x:main, sched:sched_wakeup; one it lacks: unknown tracepoint)",
		   what);
		if (pipe_mode)
			ok(got == (int64_t)((n + 7) & ~(size_t)7) && !memcmp(payload, blob, n),
			   "%s: the TRACING_DATA payload is still handed out whole (%lld bytes)", what, (long long)got);
		pd_reader_free(r);
		unlink(path);
	}
}

int main(void)
{
	static const struct { int pipe, foreign; const char *name; } modes[] = {
		{ 0, 0, "file/native" }, { 0, 1, "file/foreign" }, { 1, 0, "pipe/native" }, { 1, 1, "pipe/foreign" },
	};
	build_records();
	check_api_edges();
	check_event_type_names();
	check_event_names();
	check_read_deliveries();
	check_simpleperf();
	check_sp_event_names();
	check_tracing_walk();
	check_tracing_names();
	for (unsigned m = 0; m < 4; m++) {
		char path[] = "/tmp/pdroundXXXXXX";
		int fd = mkstemp(path);
		close(fd);
		if (!ok(write_file(path, modes[m].pipe, modes[m].foreign) == 0, "%s: written", modes[m].name))
			continue;
		check_file(path, modes[m].name, modes[m].pipe, modes[m].foreign);
		if (m == 0 || m == 3)
			check_damage(path, modes[m].name);
		unlink(path);
	}
	return done_testing();
}
