/*
 * mkimc - write recordings whose contents and losses are known, for the IMC,
 * loss-model and timeline tests (generated at test time: a few kilobytes,
 * both byte orders from one source, and this file is their specification).
 * Every record goes through the project's writer (perfdata/pd.h), so
 * --foreign gives the other byte order (big-endian here: a ppc64 host).
 *
 *   mkimc imc OUT [--foreign] [--dump DUMP]
 *       trace_imc samples as a POWER kernel writes them (facts section 7.2):
 *       batches that all carry their flush time, on CPUs 0 and 1, tasks 1000
 *       and 2000 switched in and out; one LOST record (5 lost, CPU 1) and one
 *       LOST_SAMPLES record (3 lost, CPU 0); a counting thread_imc event read
 *       (PERF_RECORD_READ) when task 1000 exits. --dump also writes a raw 32-entry
 *       trace-imc buffer that wrapped: 39 records written from timebase
 *       1000000 every 512 ticks, so the 7 oldest are overwritten.
 *   mkimc stat OUT [--foreign]
 *       perf stat record of two counting IMC events (core_imc, nest_mcs01)
 *       on CPUs 0 and 8, three 1-second intervals.
 *   mkimc losses OUT [--foreign]
 *       AUX data with every AUX loss: CPU 0 records flagged PARTIAL,
 *       COLLISION and TRUNCATED (2048 bytes), a 4096-byte hole and a 1024-byte
 *       overlap between its chunks; CPU 1 in snapshot mode with 8192 bytes
 *       overwritten between two snapshots; an AUXTRACE_ERROR (overflow) on
 *       CPU 2; LOST (5) on CPU 0 and LOST_SAMPLES (3) on CPU 2.
 *   mkimc mixed OUT [--foreign]
 *       samples on CPUs 0-3, AUX records, CPU-wide context switches,
 *       written per CPU in rounds (out of time order inside a round), with
 *       equal times on different CPUs; every sample ip unique. (No AUXTRACE
 *       chunks: without an AUXTRACE_INFO of a PMU it decodes, perf rejects them.)
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pd.h"

#define T0 100000000000ULL              /* 100 s */
#define MS 1000000ULL

static struct pd_writer *w;
static struct pd_error err;
static int failed;

struct rec { uint8_t b[512]; size_t n; };
static void put(struct rec *r, const void *p, size_t n) { memcpy(r->b + r->n, p, n); r->n += n; }
static void u64(struct rec *r, uint64_t v) { put(r, &v, 8); }
static void u32(struct rec *r, uint32_t v) { put(r, &v, 4); }
static void hdr(struct rec *r, uint32_t type, uint16_t misc)
{
	uint16_t z = 0;
	r->n = 0;
	u32(r, type);
	put(r, &misc, 2);
	put(r, &z, 2);
}
static void emit(struct rec *r, int evsel, const void *payload, size_t len)
{
	uint16_t n = (uint16_t)r->n;
	memcpy(r->b + 6, &n, 2);
	if (!failed && pd_writer_write(w, r->b, evsel, payload, len, &err) < 0)
		failed = 1;
}
/* sample_id trailer for sample_type TID|TIME|CPU|IDENTIFIER */
static void trailer(struct rec *r, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu, uint64_t id)
{
	u32(r, pid); u32(r, tid); u64(r, time); u32(r, cpu); u32(r, 0); u64(r, id);
}
static void round_end(void) { struct rec r; hdr(&r, PD_RECORD_FINISHED_ROUND, 0); emit(&r, -1, NULL, 0); }

#define ST_TRAILER (PD_SAMPLE_TID | PD_SAMPLE_TIME | PD_SAMPLE_CPU | PD_SAMPLE_IDENTIFIER)
#define ST_SAMPLE (PD_SAMPLE_IP | ST_TRAILER | PD_SAMPLE_PERIOD)

/* A sample: IDENTIFIER, IP, pid/tid, TIME, cpu/res, PERIOD. */
static void sample(int evsel, uint64_t id, uint16_t misc, uint64_t ip, uint32_t pid, uint32_t tid, uint64_t time,
		   uint32_t cpu, uint64_t period)
{
	struct rec r;
	hdr(&r, PD_RECORD_SAMPLE, misc);
	u64(&r, id); u64(&r, ip); u32(&r, pid); u32(&r, tid); u64(&r, time); u32(&r, cpu); u32(&r, 0); u64(&r, period);
	emit(&r, evsel, NULL, 0);
}
static void comm(int evsel, uint64_t id, uint32_t pid, const char *name, uint64_t time, uint32_t cpu)
{
	struct rec r;
	char c[16] = { 0 };
	hdr(&r, PD_RECORD_COMM, 0);
	u32(&r, pid); u32(&r, pid);
	snprintf(c, sizeof(c), "%s", name);
	put(&r, c, 16);
	trailer(&r, pid, pid, time, cpu, id);
	emit(&r, evsel, NULL, 0);
}
static void sw(int evsel, uint64_t id, int out, uint32_t pid, uint64_t time, uint32_t cpu)
{
	struct rec r;
	hdr(&r, PD_RECORD_SWITCH, out ? PD_MISC_SWITCH_OUT : 0);
	trailer(&r, pid, pid, time, cpu, id);
	emit(&r, evsel, NULL, 0);
}
static void sw_wide(int evsel, uint64_t id, int out, uint32_t pid, uint32_t other, uint64_t time, uint32_t cpu)
{
	struct rec r;
	hdr(&r, PD_RECORD_SWITCH_CPU_WIDE, out ? PD_MISC_SWITCH_OUT : 0);
	u32(&r, other); u32(&r, other);
	trailer(&r, pid, pid, time, cpu, id);
	emit(&r, evsel, NULL, 0);
}
static void lost(int evsel, uint64_t id, uint64_t n, uint64_t time, uint32_t cpu)
{
	struct rec r;
	hdr(&r, PD_RECORD_LOST, 0);
	u64(&r, id); u64(&r, n);
	trailer(&r, (uint32_t)-1, (uint32_t)-1, time, cpu, id);
	emit(&r, evsel, NULL, 0);
}
static void lost_samples(int evsel, uint64_t id, uint64_t n, uint64_t time, uint32_t cpu)
{
	struct rec r;
	hdr(&r, PD_RECORD_LOST_SAMPLES, 0);
	u64(&r, n);
	trailer(&r, (uint32_t)-1, (uint32_t)-1, time, cpu, id);
	emit(&r, evsel, NULL, 0);
}
static void aux(int evsel, uint64_t id, uint64_t off, uint64_t size, uint64_t flags, uint64_t time, uint32_t cpu)
{
	struct rec r;
	hdr(&r, PD_RECORD_AUX, 0);
	u64(&r, off); u64(&r, size); u64(&r, flags);
	trailer(&r, 100, 100, time, cpu, id);
	emit(&r, evsel, NULL, 0);
}
static void itrace_start(int evsel, uint64_t id, uint32_t pid, uint64_t time, uint32_t cpu)
{
	struct rec r;
	hdr(&r, PD_RECORD_ITRACE_START, 0);
	u32(&r, pid); u32(&r, pid);
	trailer(&r, pid, pid, time, cpu, id);
	emit(&r, evsel, NULL, 0);
}
static uint8_t chunk_bytes[8192];
static void chunk(uint32_t idx, uint32_t cpu, uint64_t off, uint64_t size)
{
	struct rec r;
	hdr(&r, PD_RECORD_AUXTRACE, 0);
	u64(&r, size); u64(&r, off); u64(&r, 0x5eed); u32(&r, idx); u32(&r, (uint32_t)-1); u32(&r, cpu); u32(&r, 0);
	emit(&r, -1, NULL, 0);
	for (uint64_t k = 0; !failed && k < size; k += sizeof(chunk_bytes))
		if (pd_writer_write_payload(w, chunk_bytes, size - k < sizeof(chunk_bytes) ? size - k : sizeof(chunk_bytes),
					    &err) < 0)
			failed = 1;
}

static void feature_string(unsigned feat, const char *s)
{
	struct pd_buf b = { 0 };
	pd_buf_string(&b, s);
	if (!failed && pd_writer_set_feature(w, feat, b.data, b.len, &err) < 0)
		failed = 1;
	pd_buf_free(&b);
}

/* PMU_MAPPINGS as a POWER host with IMC writes it. */
static void pmu_mappings(void)
{
	static const struct { uint32_t type; const char *name; } pmus[] = {
		{ 4, "cpu" }, { 1, "software" }, { 2, "tracepoint" }, { 5, "breakpoint" },
		{ 29, "trace_imc" }, { 30, "core_imc" }, { 31, "thread_imc" }, { 32, "nest_mcs01" },
	};
	struct pd_buf b = { 0 };
	pd_buf_u32(&b, sizeof(pmus) / sizeof(pmus[0]));
	for (size_t i = 0; i < sizeof(pmus) / sizeof(pmus[0]); i++) {
		pd_buf_u32(&b, pmus[i].type);
		pd_buf_string(&b, pmus[i].name);
	}
	if (!failed && pd_writer_set_feature(w, PD_FEAT_PMU_MAPPINGS, b.data, b.len, &err) < 0)
		failed = 1;
	pd_buf_free(&b);
}

static void common_features(int foreign, uint32_t nr_cpus)
{
	feature_string(PD_FEAT_HOSTNAME, "mkimc");
	feature_string(PD_FEAT_OSRELEASE, "6.1.0-mkimc");
	feature_string(PD_FEAT_VERSION, "6.1");
	feature_string(PD_FEAT_ARCH, foreign ? "ppc64" : "ppc64le");
	struct pd_buf b = { 0 };
	pd_buf_u32(&b, nr_cpus);
	pd_buf_u32(&b, nr_cpus);
	if (!failed && pd_writer_set_feature(w, PD_FEAT_NRCPUS, b.data, b.len, &err) < 0)
		failed = 1;
	pd_buf_free(&b);
	pmu_mappings();
}

static int add_evsel(uint32_t type, uint64_t config, uint64_t period, uint64_t sample_type, uint64_t flags,
		     const uint64_t *ids, size_t nr, const char *name)
{
	struct pd_event_attr a;
	memset(&a, 0, sizeof(a));
	a.type = type;
	a.size = PD_ATTR_SIZE_VER8;
	a.config = config;
	a.sample_period = period;
	a.sample_type = sample_type;
	a.flags = flags;
	int rc = failed ? -1 : pd_writer_add_evsel(w, &a, ids, nr, name, &err);
	if (rc < 0)
		failed = 1;
	return rc;
}

/* ------------------------------------------------------------------ imc */

static void put_be64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

/* 32 slots; record j (from 0) written at tb 1000000 + (j + 1) * 512 into slot j % 32. */
static int write_dump(const char *path)
{
	enum { SLOTS = 32, WRITTEN = 39 };
	uint8_t buf[SLOTS * 64];
	memset(buf, 0, sizeof(buf));
	for (uint64_t j = 0; j < WRITTEN; j++) {
		uint8_t *p = buf + (j % SLOTS) * 64;
		uint64_t tb = 1000000 + (j + 1) * 512;
		put_be64(p, tb);
		put_be64(p + 8, 0xc000000000020000ULL + j * 4);
		put_be64(p + 16, 2ULL << 62);                    /* MSR[HV]=1, PR=0: kernel */
		for (int c = 0; c < 4; c++)
			put_be64(p + 24 + 8 * c, j * 10 + (uint64_t)c);
		put_be64(p + 56, tb & 0x3ffffffffffULL);
	}
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, sizeof(buf), f) != sizeof(buf) || fclose(f)) {
		fprintf(stderr, "mkimc: cannot write %s\n", path);
		return -1;
	}
	return 0;
}

struct batch { uint32_t cpu, pid; uint64_t in, flush; int n; };

static void gen_imc(int foreign)
{
	const uint64_t ids[2] = { 100, 101 };
	uint64_t fl = pd_attr_flag_mask(PD_ATTR_SAMPLE_ID_ALL) | pd_attr_flag_mask(PD_ATTR_CONTEXT_SWITCH) |
		      pd_attr_flag_mask(PD_ATTR_COMM) | pd_attr_flag_mask(PD_ATTR_TASK);
	add_evsel(29, 0x2, 10000, ST_SAMPLE, fl, ids, 2, "trace_imc/trace_cycles/");
	/* a counting thread_imc event: its value comes as a READ record when task 1000 exits */
	const uint64_t tid_ids[1] = { 500 };
	struct pd_event_attr ta;
	memset(&ta, 0, sizeof(ta));
	ta.type = 31;
	ta.size = PD_ATTR_SIZE_VER8;
	ta.config = 0x10;
	ta.sample_type = ST_SAMPLE;
	ta.read_format = PD_FORMAT_TOTAL_TIME_ENABLED | PD_FORMAT_TOTAL_TIME_RUNNING | PD_FORMAT_ID;
	ta.flags = pd_attr_flag_mask(PD_ATTR_SAMPLE_ID_ALL) | pd_attr_flag_mask(PD_ATTR_INHERIT) |
		   pd_attr_flag_mask(PD_ATTR_INHERIT_STAT);
	if (!failed && pd_writer_add_evsel(w, &ta, tid_ids, 1, "thread_imc/CPM_CS_32MHZ_CYC/", &err) < 0)
		failed = 1;
	common_features(foreign, 2);
	comm(0, 100, 1000, "imcwork", T0 - MS, 0);
	comm(0, 100, 2000, "imcother", T0 - MS, 0);
	round_end();
	/* per CPU: switch-in at .in, the buffer dumped at sched-out (.flush) */
	static const struct batch b[] = {
		{ 0, 1000, T0, T0 + 1 * MS, 4 },            { 1, 2000, T0 + MS / 5, T0 + 2 * MS, 3 },
		{ 0, 2000, T0 + 3 * MS / 2, T0 + 3 * MS, 6 }, { 1, 1000, T0 + 14 * MS / 5, T0 + 4 * MS, 8 },
		{ 0, 1000, T0 + 4 * MS, T0 + 5 * MS, 5 },
	};
	uint64_t ip_k = 0xc000000000010000ULL, ip_u = 0x10000000ULL;
	for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++) {
		sw(0, ids[b[i].cpu], 0, b[i].pid, b[i].in, b[i].cpu);
		for (int k = 0; k < b[i].n; k++) {
			int kernel = (k + (int)i) % 3 == 0;
			sample(0, ids[b[i].cpu], kernel ? PD_MISC_KERNEL : PD_MISC_USER, kernel ? ip_k : ip_u,
			       b[i].pid, b[i].pid, b[i].flush, b[i].cpu, 10000);
			if (kernel)
				ip_k += 0x40;
			else
				ip_u += 0x24;
		}
		sw(0, ids[b[i].cpu], 1, b[i].pid, b[i].flush, b[i].cpu);
		if (i == 1)
			lost(0, 101, 5, T0 + 5 * MS / 2, 1);        /* CPU 1: after batch 1, before its next switch-in */
		if (i == 2)
			lost_samples(0, 100, 3, T0 + 7 * MS / 2, 0);
		if (i % 2)
			round_end();
	}
	struct rec r;
	hdr(&r, PD_RECORD_READ, 0);
	u32(&r, 1000); u32(&r, 1000);
	u64(&r, 4242424); u64(&r, 4 * MS); u64(&r, 3 * MS); u64(&r, 500);      /* value, enabled, running, id */
	trailer(&r, 1000, 1000, T0 + 6 * MS, 0, 500);
	emit(&r, 1, NULL, 0);
	round_end();
}

/* ----------------------------------------------------------------- stat */

static void gen_stat(int foreign)
{
	const uint64_t core_ids[2] = { 300, 301 }, nest_ids[2] = { 400, 401 };
	uint64_t fl = pd_attr_flag_mask(PD_ATTR_DISABLED);
	add_evsel(30, 0x200, 0, PD_SAMPLE_IDENTIFIER, fl, core_ids, 2, "core_imc/CPM_CCYC/");
	add_evsel(32, 0x118, 0, PD_SAMPLE_IDENTIFIER, fl, nest_ids, 2, "nest_mcs01/PM_MCS01_64B_RD_DISP_PORT01/");
	common_features(foreign, 16);
	struct rec r;
	/* system-wide: a thread map of one "any" thread, and the CPU map: 0 and 8 */
	hdr(&r, PD_RECORD_THREAD_MAP, 0);
	u64(&r, 1); u64(&r, (uint64_t)-1);
	char nocomm[16] = { 0 };
	put(&r, nocomm, 16);
	emit(&r, -1, NULL, 0);
	/* CPU map: 0 and 8 */
	hdr(&r, PD_RECORD_CPU_MAP, 0);
	uint16_t cm[4] = { 0, 2, 0, 8 };       /* type CPUS, nr 2, cpus */
	put(&r, cm, sizeof(cm));
	while (r.n % 8)
		r.b[r.n++] = 0;
	emit(&r, -1, NULL, 0);
	/* STAT_CONFIG: interval 1000 ms, scale on */
	hdr(&r, PD_RECORD_STAT_CONFIG, 0);
	u64(&r, 2); u64(&r, 1); u64(&r, 1000); u64(&r, 2); u64(&r, 1);   /* INTERVAL 1000 ms, SCALE 1 */
	emit(&r, -1, NULL, 0);
	const uint32_t cpus[2] = { 0, 8 };     /* perf 6.1 writes the CPU, not its map index */
	for (uint64_t k = 1; k <= 3; k++) {
		for (int cpu = 0; cpu < 2; cpu++) {
			hdr(&r, PD_RECORD_STAT, 0);
			u64(&r, core_ids[cpu]); u32(&r, cpus[cpu]); u32(&r, 0);
			u64(&r, 1000000 * k + 1000 * (uint64_t)cpu); u64(&r, k * 1000000000); u64(&r, k * 1000000000);
			emit(&r, -1, NULL, 0);
			hdr(&r, PD_RECORD_STAT, 0);
			u64(&r, nest_ids[cpu]); u32(&r, cpus[cpu]); u32(&r, 0);
			u64(&r, 5000 * k * k + 7 * (uint64_t)cpu); u64(&r, k * 1000000000); u64(&r, k * 1000000000 / 2);
			emit(&r, -1, NULL, 0);
		}
		hdr(&r, PD_RECORD_STAT_ROUND, 0);
		u64(&r, 0); u64(&r, k * 1000000000ULL);      /* INTERVAL round at k seconds */
		emit(&r, -1, NULL, 0);
	}
}

/* --------------------------------------------------------------- losses */

static void gen_losses(int foreign)
{
	const uint64_t ids[3] = { 7, 8, 9 };
	add_evsel(PD_TYPE_SOFTWARE, 9, 1, ST_TRAILER, pd_attr_flag_mask(PD_ATTR_SAMPLE_ID_ALL), ids, 3, "dummy:u");
	common_features(foreign, 3);
	itrace_start(0, 7, 100, T0, 0);
	itrace_start(0, 8, 100, T0, 1);
	/* CPU 0: 4096 at 1 ms, 4096 PARTIAL at 2 ms, 4096 COLLISION at 3 ms, 2048 TRUNCATED at 4 ms */
	aux(0, 7, 0, 4096, 0, T0 + 1 * MS, 0);
	aux(0, 7, 4096, 4096, PD_AUX_FLAG_PARTIAL, T0 + 2 * MS, 0);
	aux(0, 7, 8192, 4096, PD_AUX_FLAG_COLLISION, T0 + 3 * MS, 0);
	lost(0, 7, 5, T0 + 7 * MS / 2, 0);
	aux(0, 7, 12288, 2048, PD_AUX_FLAG_TRUNCATED, T0 + 4 * MS, 0);
	/* CPU 1, snapshot mode: heads 8192 and 24576 */
	aux(0, 8, 8192, 8192, PD_AUX_FLAG_OVERWRITE, T0 + 3 * MS / 2, 1);
	aux(0, 8, 24576, 8192, PD_AUX_FLAG_OVERWRITE, T0 + 7 * MS / 2, 1);
	lost_samples(0, 9, 3, T0 + 9 * MS / 2, 2);
	round_end();
	chunk(0, 0, 0, 4096);
	chunk(0, 0, 4096, 4096);
	chunk(0, 0, 12288, 2048);          /* [8192, 12288) never written: a 4096-byte hole */
	chunk(0, 0, 13312, 1024);          /* starts 1024 bytes before the previous one ended */
	chunk(1, 1, 0, 8192);
	chunk(1, 1, 16384, 8192);          /* [8192, 16384) overwritten before the second snapshot */
	struct rec r;
	hdr(&r, PD_RECORD_AUXTRACE_ERROR, 0);
	u32(&r, 1); u32(&r, 7); u32(&r, 2); u32(&r, 100); u32(&r, 100); u32(&r, 1);
	u64(&r, 0x401000); u64(&r, T0 + 5 * MS / 2);
	char msg[64] = "Overflow packet";
	put(&r, msg, 64);
	emit(&r, -1, NULL, 0);
	round_end();
}

/* ---------------------------------------------------------------- mixed */

static void gen_mixed(int foreign)
{
	const uint64_t sids[4] = { 10, 11, 12, 13 }, dids[4] = { 20, 21, 22, 23 };
	uint64_t fl = pd_attr_flag_mask(PD_ATTR_SAMPLE_ID_ALL);
	add_evsel(PD_TYPE_SOFTWARE, 0, 100000, ST_SAMPLE, fl, sids, 4, "cpu-clock");
	add_evsel(PD_TYPE_SOFTWARE, 9, 1, ST_TRAILER,
		  fl | pd_attr_flag_mask(PD_ATTR_CONTEXT_SWITCH) | pd_attr_flag_mask(PD_ATTR_COMM), dids, 4, "dummy:u");
	common_features(foreign, 4);
	for (uint32_t p = 0; p < 4; p++) {
		char name[16];
		snprintf(name, sizeof(name), "task%u", p);
		comm(1, dids[0], 500 + p, name, T0 - MS, 0);
	}
	round_end();
	uint64_t ip = 0x400000;
	/* 4 rounds; in each, CPU c's ring is read in turn (c = 3..0), its events in its own time order */
	for (uint64_t rnd = 0; rnd < 4; rnd++) {
		for (int c = 3; c >= 0; c--) {
			uint32_t cpu = (uint32_t)c, pid = 500 + (cpu + (uint32_t)rnd) % 4;
			uint64_t base = T0 + rnd * 10 * MS;
			sw_wide(1, dids[cpu], 0, pid, 0, base + cpu, cpu);
			for (uint64_t k = 0; k < 6; k++) {
				/* samples at base + 1 ms * k: the same time on every CPU (ties), plus one per CPU */
				uint64_t t = base + (k + 1) * MS + (k == 5 ? cpu * 1000 : 0);
				sample(0, sids[cpu], PD_MISC_USER, ip++, pid, pid, t, cpu, 100000);
				if (k == 2)
					aux(1, dids[cpu], rnd * 4096, 4096, 0, t, cpu);   /* same time as a sample */
			}
			sw_wide(1, dids[cpu], 1, pid, 0, base + 9 * MS, cpu);
		}
		round_end();
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 2 ? argv[1] : "", *out = argc > 2 ? argv[2] : NULL, *dump = NULL;
	int foreign = 0;
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--foreign"))
			foreign = 1;
		else if (!strcmp(argv[i], "--dump") && i + 1 < argc)
			dump = argv[++i];
		else
			out = NULL;
	}
	if (!out || (strcmp(mode, "imc") && strcmp(mode, "stat") && strcmp(mode, "losses") && strcmp(mode, "mixed"))) {
		fprintf(stderr, "usage: mkimc imc|stat|losses|mixed OUT [--foreign] [--dump DUMP]\n");
		return 1;
	}
	struct pd_writer_opts o;
	pd_writer_opts_init(&o);
	o.foreign = foreign;
	if (pd_writer_open(&w, out, &o, &err) < 0) {
		fprintf(stderr, "mkimc: %s\n", err.msg);
		return 1;
	}
	if (!strcmp(mode, "imc"))
		gen_imc(foreign);
	else if (!strcmp(mode, "stat"))
		gen_stat(foreign);
	else if (!strcmp(mode, "losses"))
		gen_losses(foreign);
	else
		gen_mixed(foreign);
	if (failed) {
		fprintf(stderr, "mkimc: %s\n", err.msg);
		pd_writer_free(w);
		return 1;
	}
	if (pd_writer_close(w, &err) < 0) {
		fprintf(stderr, "mkimc: %s\n", err.msg);
		return 1;
	}
	return dump && write_dump(dump) < 0 ? 1 : 0;
}
