/*
 * wrap.c - stage 4: a perf.data around generated Intel PT packets, laid out
 * as `perf record -e intel_pt//u` writes one (per-CPU mmaps): an intel_pt
 * evsel and a dummy:u sideband evsel, both with sample_id_all; TIME_CONV,
 * AUXTRACE_INFO (priv[] as the facts file, section 4.1), then the sideband
 * and AUX records in time order, AUXTRACE records with the trace, and the
 * BUILD_ID, HOSTNAME, OSRELEASE, ARCH, NRCPUS, CPUDESC, CPUID and
 * PMU_MAPPINGS features. Everything is fixed: the same input gives the same
 * bytes.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "pd.h"
#include "ptgen.h"

#define PT_PMU_TYPE 8
#define PT_CONFIG_BASE 0x2001ull          /* pt (bit 0) + branch (bit 13) */
#define PT_TSC_BIT 0x400ull
#define PT_NORETCOMP_BIT 0x800ull
#define PT_MTC_BIT 0x200ull
#define PT_MTC_FREQ_BITS 0x3c000ull
#define PT_CYC_BIT 0x2ull
#define PT_PWR_EVT_BIT 0x10ull
#define PT_FUP_ON_PTW_BIT 0x20ull
#define PT_PTW_BIT 0x1000ull
#define PT_PSB_PERIOD_SHIFT 24
/* TSC at 2.4 GHz: perf ns = tsc * mult >> shift */
#define TIME_SHIFT 31
#define TIME_MULT 894784853ull
#define TIME_ZERO 0ull
#define PT_ID(cpu) (100u + (unsigned)(cpu))
#define SB_ID(cpu) (200u + (unsigned)(cpu))

struct wrap {
	struct pd_writer *pw;
	struct wrap_cfg cfg;
	struct pd_error err;
	int failed;
	uint64_t pt_config;
};

uint64_t wrap_perf_time(uint64_t tsc)
{
	uint64_t quot = tsc >> TIME_SHIFT, rem = tsc & ((1ull << TIME_SHIFT) - 1);
	return TIME_ZERO + quot * TIME_MULT + ((rem * TIME_MULT) >> TIME_SHIFT);
}

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
static void str8(struct rec *r, const char *s)
{
	size_t n = strlen(s) + 1, pad = (8 - n % 8) % 8;
	static const uint8_t zero[8];
	put(r, s, n);
	put(r, zero, pad);
}
static void trailer(struct rec *r, uint32_t pid, uint32_t tid, uint64_t tsc, int cpu, uint64_t id)
{
	u32(r, pid); u32(r, tid); u64(r, wrap_perf_time(tsc)); u32(r, (uint32_t)cpu); u32(r, 0); u64(r, id);
}

static void write_rec(struct wrap *w, struct rec *r, const void *payload, size_t plen)
{
	uint16_t n = (uint16_t)r->n;
	memcpy(r->b + 6, &n, 2);
	if (!w->failed && pd_writer_write(w->pw, r->b, -1, payload, plen, &w->err) < 0)
		w->failed = 1;
}

static void set_string(struct wrap *w, unsigned feat, const char *s)
{
	struct pd_buf b = { 0 };
	pd_buf_string(&b, s);
	if (!w->failed && pd_writer_set_feature(w->pw, feat, b.data, b.len, &w->err) < 0)
		w->failed = 1;
	pd_buf_free(&b);
}

static void set_features(struct wrap *w)
{
	struct pd_buf b = { 0 };
	int nimg = 0;
	while (w->cfg.img[nimg])
		nimg++;
	for (int i = 0; i < nimg + (w->cfg.kimg != NULL); i++) {
		int k = i == nimg;           /* the kernel comes last: misc KERNEL, pid -1 */
		const struct image *im = k ? w->cfg.kimg : w->cfg.img[i];
		const char *name = k ? "[kernel.kallsyms]" : w->cfg.img_name[i];
		size_t nlen = strlen(name) + 1, padded = (nlen + 63) / 64 * 64;
		uint8_t id[24] = { 0 };
		memcpy(id, im->build_id, im->build_id_size);
		id[20] = (uint8_t)im->build_id_size;
		pd_buf_u32(&b, 0);                                   /* type */
		uint16_t misc = (k ? 1 : 2) | (1u << 15), size = (uint16_t)(36 + padded);   /* KERNEL / USER | BUILD_ID_SIZE */
		pd_buf_bytes(&b, &misc, 2);
		pd_buf_bytes(&b, &size, 2);
		pd_buf_u32(&b, k ? (uint32_t)-1 : 4242);             /* pid */
		pd_buf_bytes(&b, id, 24);
		char *nb = calloc(1, padded);
		memcpy(nb, name, nlen);
		pd_buf_bytes(&b, nb, padded);
		free(nb);
	}
	if (!w->cfg.pipe && pd_writer_set_feature(w->pw, PD_FEAT_BUILD_ID, b.data, b.len, &w->err) < 0)
		w->failed = 1;   /* perf does not send build-ids through a pipe */
	pd_buf_free(&b);
	set_string(w, PD_FEAT_HOSTNAME, "ptgen");
	set_string(w, PD_FEAT_OSRELEASE, "6.1.0-ptgen");
	set_string(w, PD_FEAT_VERSION, "6.1.ptgen");
	set_string(w, PD_FEAT_ARCH, "x86_64");
	set_string(w, PD_FEAT_CPUDESC, "Synthetic Intel PT fixture (ptgen)");
	set_string(w, PD_FEAT_CPUID, w->cfg.pt->cpuid ? w->cfg.pt->cpuid : "GenuineIntel,6,140,1");
	memset(&b, 0, sizeof(b));
	pd_buf_u32(&b, (uint32_t)w->cfg.ncpus);
	pd_buf_u32(&b, (uint32_t)w->cfg.ncpus);
	if (!w->failed && pd_writer_set_feature(w->pw, PD_FEAT_NRCPUS, b.data, b.len, &w->err) < 0)
		w->failed = 1;
	pd_buf_free(&b);
	memset(&b, 0, sizeof(b));
	pd_buf_u32(&b, 2);
	pd_buf_u32(&b, 1);
	pd_buf_string(&b, "software");
	pd_buf_u32(&b, PT_PMU_TYPE);
	pd_buf_string(&b, "intel_pt");
	if (!w->failed && pd_writer_set_feature(w->pw, PD_FEAT_PMU_MAPPINGS, b.data, b.len, &w->err) < 0)
		w->failed = 1;
	pd_buf_free(&b);
}

static void write_time_conv(struct wrap *w)
{
	struct rec r;
	hdr(&r, PD_RECORD_TIME_CONV, 0);
	u64(&r, TIME_SHIFT); u64(&r, TIME_MULT); u64(&r, TIME_ZERO);
	u64(&r, 0); u64(&r, 0);            /* time_cycles, time_mask */
	uint8_t caps[8] = { 1, 0 };        /* cap_user_time_zero, cap_user_time_short */
	put(&r, caps, 8);
	write_rec(w, &r, NULL, 0);
}

static void write_auxtrace_info(struct wrap *w)
{
	const struct ptcfg *pt = w->cfg.pt;
	struct rec r;
	hdr(&r, PD_RECORD_AUXTRACE_INFO, 0);
	u32(&r, 1);                 /* PERF_AUXTRACE_INTEL_PT */
	u32(&r, 0);
	u64(&r, PT_PMU_TYPE);
	u64(&r, TIME_SHIFT); u64(&r, TIME_MULT); u64(&r, TIME_ZERO);
	u64(&r, 1);                 /* cap_user_time_zero */
	u64(&r, PT_TSC_BIT);
	u64(&r, PT_NORETCOMP_BIT);
	u64(&r, (uint64_t)w->cfg.have_sched_switch);
	u64(&r, (uint64_t)w->cfg.snapshot);
	u64(&r, w->cfg.per_thread ? 0 : 1);   /* per_cpu_mmaps */
	u64(&r, PT_MTC_BIT);
	u64(&r, PT_MTC_FREQ_BITS);
	u64(&r, pt->ctc_ratio);     /* tsc_ctc_ratio_n (CPUID.15H EBX) */
	u64(&r, 1);                 /* tsc_ctc_ratio_d (CPUID.15H EAX) */
	u64(&r, PT_CYC_BIT);
	u64(&r, pt->nom_ratio);     /* max_non_turbo_ratio */
	size_t flen = pt->filter ? strlen(pt->filter) : 0;
	u64(&r, flen);              /* filter string length; the string, NUL-terminated, padded to 8 */
	for (size_t i = 0; flen && i < (flen + 1 + 7) / 8; i++) {
		uint64_t v = 0;
		memcpy(&v, pt->filter + 8 * i, flen + 1 - 8 * i < 8 ? flen + 1 - 8 * i : 8);
		u64(&r, v);
	}
	write_rec(w, &r, NULL, 0);
}

int wrap_open(struct wrap **out, const char *path, const struct wrap_cfg *cfg)
{
	struct wrap *w = calloc(1, sizeof(*w));
	if (!w)
		return -1;
	w->cfg = *cfg;
	struct pd_writer_opts o;
	pd_writer_opts_init(&o);
	o.pipe_mode = cfg->pipe;
	if (pd_writer_open(&w->pw, path, &o, &w->err) < 0) {
		fprintf(stderr, "ptgen: %s\n", w->err.msg);
		free(w);
		return -1;
	}
	const struct ptcfg *pt = cfg->pt;
	w->pt_config = PT_CONFIG_BASE | PT_TSC_BIT | (3ull << PT_PSB_PERIOD_SHIFT);
	if (pt->mtc)
		w->pt_config |= PT_MTC_BIT | ((uint64_t)pt->mtc_period << 14);
	if (pt->cyc)
		w->pt_config |= PT_CYC_BIT;
	if (pt->noretcomp)
		w->pt_config |= PT_NORETCOMP_BIT;
	if (pt->pwr_evt)
		w->pt_config |= PT_PWR_EVT_BIT;
	if (pt->ptw)
		w->pt_config |= PT_PTW_BIT | (pt->fup_on_ptw ? PT_FUP_ON_PTW_BIT : 0);

	uint64_t ids[8];
	struct pd_event_attr a;
	memset(&a, 0, sizeof(a));
	a.type = PT_PMU_TYPE;
	a.size = 128;
	a.config = w->pt_config;
	a.sample_period = 1;
	a.sample_type = PD_SAMPLE_IP | PD_SAMPLE_TID | PD_SAMPLE_TIME | PD_SAMPLE_CPU | PD_SAMPLE_IDENTIFIER;
	/* kernel tracing (perf record -e intel_pt//): the kernel is not excluded */
	uint64_t exclude_kernel = pt->kernel ? 0 : pd_attr_flag_mask(PD_ATTR_EXCLUDE_KERNEL);
	a.flags = pd_attr_flag_mask(PD_ATTR_DISABLED) | pd_attr_flag_mask(PD_ATTR_INHERIT) |
		  exclude_kernel | pd_attr_flag_mask(PD_ATTR_EXCLUDE_HV) |
		  pd_attr_flag_mask(PD_ATTR_ENABLE_ON_EXEC) | pd_attr_flag_mask(PD_ATTR_SAMPLE_ID_ALL);
	for (int c = 0; c < cfg->ncpus; c++)
		ids[c] = PT_ID(c);
	if (pd_writer_add_evsel(w->pw, &a, ids, (size_t)cfg->ncpus, pt->kernel ? "intel_pt//" : "intel_pt//u",
				&w->err) < 0)
		w->failed = 1;
	a.type = PD_TYPE_SOFTWARE;
	a.config = 9;   /* PERF_COUNT_SW_DUMMY */
	a.flags = pd_attr_flag_mask(PD_ATTR_DISABLED) | pd_attr_flag_mask(PD_ATTR_INHERIT) |
		  exclude_kernel | pd_attr_flag_mask(PD_ATTR_EXCLUDE_HV) |
		  pd_attr_flag_mask(PD_ATTR_MMAP) | pd_attr_flag_mask(PD_ATTR_COMM) |
		  pd_attr_flag_mask(PD_ATTR_TASK) | pd_attr_flag_mask(PD_ATTR_MMAP2) |
		  pd_attr_flag_mask(PD_ATTR_COMM_EXEC) | pd_attr_flag_mask(PD_ATTR_CONTEXT_SWITCH) |
		  pd_attr_flag_mask(PD_ATTR_ENABLE_ON_EXEC) | pd_attr_flag_mask(PD_ATTR_SAMPLE_ID_ALL);
	for (int c = 0; c < cfg->ncpus; c++)
		ids[c] = SB_ID(c);
	if (!w->failed && pd_writer_add_evsel(w->pw, &a, ids, (size_t)cfg->ncpus, pt->kernel ? "dummy" : "dummy:u",
					      &w->err) < 0)
		w->failed = 1;
	set_features(w);
	write_time_conv(w);
	write_auxtrace_info(w);
	*out = w;
	return w->failed ? -1 : 0;
}

int wrap_close(struct wrap *w)
{
	int rc = w->failed ? -1 : 0;
	if (!w->failed && pd_writer_close(w->pw, &w->err) < 0)
		rc = -1;
	else if (w->failed)
		pd_writer_free(w->pw);
	if (rc)
		fprintf(stderr, "ptgen: writing perf.data: %s\n", w->err.msg);
	free(w);
	return rc;
}

void wrap_comm(struct wrap *w, int cpu, uint64_t tsc, uint32_t pid, uint32_t tid, const char *comm, int exec)
{
	struct rec r;
	hdr(&r, PD_RECORD_COMM, exec ? (uint16_t)(1u << 13) : 0);
	u32(&r, pid); u32(&r, tid);
	str8(&r, comm);
	trailer(&r, pid, tid, tsc, cpu, SB_ID(cpu));
	write_rec(w, &r, NULL, 0);
}

void wrap_mmap2(struct wrap *w, int cpu, uint64_t tsc, uint32_t pid, uint32_t tid, const struct image *im,
		const char *filename)
{
	struct rec r;
	uint64_t start = im->text_vaddr & ~0xfffull, off = im->text_offset & ~0xfffull;
	uint64_t len = ((im->text_vaddr + im->text_size + 0xfff) & ~0xfffull) - start;
	hdr(&r, PD_RECORD_MMAP2, 2 /* USER */);
	u32(&r, pid); u32(&r, tid);
	u64(&r, start); u64(&r, len); u64(&r, off);
	u32(&r, 8); u32(&r, 1);              /* maj, min */
	u64(&r, 4242000 + (uint64_t)im->text_size);   /* ino */
	u64(&r, 0);                          /* ino_generation */
	u32(&r, 5); u32(&r, 2);              /* PROT_READ|PROT_EXEC, MAP_PRIVATE */
	str8(&r, filename);
	trailer(&r, pid, tid, tsc, cpu, SB_ID(cpu));
	write_rec(w, &r, NULL, 0);
}

/*
 * Kernel maps as perf synthesizes them (MMAP, pid -1, misc KERNEL): the
 * text as "[kernel.kallsyms]_text" with pgoff = _text's address, a module
 * by its .ko path with pgoff 0.
 */
void wrap_kernel_mmap(struct wrap *w, uint64_t tsc, const struct image *kim, const char *filename)
{
	struct rec r;
	int text = !strcmp(filename, "[kernel.kallsyms]_text");
	uint64_t start = kim->text_vaddr, len = ((kim->text_vaddr + kim->text_size + 0xfff) & ~0xfffull) - start;
	hdr(&r, PD_RECORD_MMAP, 1 /* KERNEL */);
	u32(&r, (uint32_t)-1); u32(&r, 0);
	u64(&r, start); u64(&r, len); u64(&r, text ? start : 0);
	str8(&r, filename);
	trailer(&r, (uint32_t)-1, 0, tsc, 0, SB_ID(0));
	write_rec(w, &r, NULL, 0);
}

void wrap_fork(struct wrap *w, int cpu, uint64_t tsc, uint32_t pid, uint32_t tid, uint32_t ptid, int exit)
{
	struct rec r;
	/* a new thread's parent is its own process; a new process's (tid == pid) is ptid's */
	uint32_t ppid = tid == pid && ptid != pid ? ptid : pid;
	hdr(&r, exit ? PD_RECORD_EXIT : PD_RECORD_FORK, 0);
	u32(&r, pid); u32(&r, ppid); u32(&r, tid); u32(&r, ptid);
	u64(&r, wrap_perf_time(tsc));
	trailer(&r, pid, tid, tsc, cpu, SB_ID(cpu));
	write_rec(w, &r, NULL, 0);
}

void wrap_itrace_start(struct wrap *w, int cpu, uint64_t tsc, uint32_t pid, uint32_t tid)
{
	struct rec r;
	hdr(&r, PD_RECORD_ITRACE_START, 0);
	u32(&r, pid); u32(&r, tid);
	trailer(&r, pid, tid, tsc, cpu, PT_ID(cpu));
	write_rec(w, &r, NULL, 0);
}

void wrap_switch(struct wrap *w, int cpu, uint64_t tsc, uint32_t pid, uint32_t tid, int out)
{
	struct rec r;
	hdr(&r, PD_RECORD_SWITCH, out ? (uint16_t)(1u << 13) : 0);
	trailer(&r, pid, tid, tsc, cpu, SB_ID(cpu));
	write_rec(w, &r, NULL, 0);
}

void wrap_switch_cpu_wide(struct wrap *w, int cpu, uint64_t tsc, uint32_t pid, uint32_t tid, int out,
			  uint32_t np_pid, uint32_t np_tid)
{
	struct rec r;
	hdr(&r, PD_RECORD_SWITCH_CPU_WIDE, out ? (uint16_t)(1u << 13) : 0);
	u32(&r, np_pid); u32(&r, np_tid);
	trailer(&r, pid, tid, tsc, cpu, SB_ID(cpu));
	write_rec(w, &r, NULL, 0);
}

void wrap_aux(struct wrap *w, int cpu, uint64_t tsc, uint32_t pid, uint32_t tid, uint64_t aux_offset,
	      uint64_t aux_size, uint64_t flags)
{
	struct rec r;
	hdr(&r, PD_RECORD_AUX, 0);
	u64(&r, aux_offset); u64(&r, aux_size); u64(&r, flags);
	trailer(&r, pid, tid, tsc, cpu, PT_ID(cpu));
	write_rec(w, &r, NULL, 0);
}

void wrap_lost(struct wrap *w, int cpu, uint64_t tsc, uint32_t pid, uint32_t tid, uint64_t lost)
{
	struct rec r;
	hdr(&r, PD_RECORD_LOST, 0);
	u64(&r, SB_ID(cpu)); u64(&r, lost);
	trailer(&r, pid, tid, tsc, cpu, SB_ID(cpu));
	write_rec(w, &r, NULL, 0);
}

void wrap_auxtrace(struct wrap *w, int cpu, uint64_t tsc, uint32_t tid, uint64_t offset, const uint8_t *data,
		   uint64_t size)
{
	static const uint8_t zero[8];
	uint64_t pad = (8 - size % 8) % 8;
	struct rec r;
	hdr(&r, PD_RECORD_AUXTRACE, 0);
	u64(&r, size + pad); u64(&r, offset); u64(&r, tsc);
	/* idx = the mmap (queue); per-thread areas have no CPU */
	u32(&r, (uint32_t)cpu); u32(&r, tid); u32(&r, w->cfg.per_thread ? UINT32_MAX : (uint32_t)cpu); u32(&r, 0);
	write_rec(w, &r, data, size);
	if (!w->failed && pad && pd_writer_write_payload(w->pw, zero, pad, &w->err) < 0)
		w->failed = 1;
}

void wrap_round(struct wrap *w)
{
	struct rec r;
	hdr(&r, PD_RECORD_FINISHED_ROUND, 0);
	write_rec(w, &r, NULL, 0);
}
