/*
 * auxinfo.c - AUX-area PMUs as perf record describes them: the
 * PERF_RECORD_AUXTRACE_INFO words (perf-data-facts.md sections 4.1 and
 * 5.1-5.2; Intel BTS: pmu type, time conversion, snapshot; Arm SPE: pmu
 * type, per-CPU mmaps), the AUXTRACE reference, address filters, and the
 * counters over PERF_RECORD_AUX flags.
 *
 * Everything comes from sysfs under events__pmu_root() (the tests point it
 * at a made-up tree) and from the first ring's control page. Workload: once
 * at start-up, except aux_counts_note and aux_chunk_write, which run per
 * record. Library code: never prints.
 */
#include "config.h"
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dirent.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#endif
#include "auxinfo.h"
#include "events.h"
#include "synth.h"

#define CS_ETMV3_MAGIC 0x3030303030303030ULL
#define CS_ETMV4_MAGIC 0x4040404040404040ULL
#define CS_ETE_MAGIC   0x5050505050505050ULL
#define CS_HEADER_VERSION 1          /* what perf 6.1 reads (version 2 needs AUX_OUTPUT_HW_ID-aware perf) */
#define CS_TRACE_ID_SEED 0x10        /* legacy trace id: 0x10 + 2 x cpu */

static const struct { const char *prefix; enum aux_kind kind; int exact; } aux_pmus[] = {
	{ "intel_pt", AUX_INTEL_PT, 1 }, { "intel_bts", AUX_INTEL_BTS, 1 },
	{ "cs_etm", AUX_CS_ETM, 1 }, { "arm_spe", AUX_ARM_SPE, 0 },
};

/* Name of the sysfs PMU whose type is @type, into @name; 0 or -1. */
static int pmu_name_of(uint32_t type, char *name, size_t n)
{
	const char *root = events__pmu_root();
	DIR *d = opendir(root);
	struct dirent *de;
	int rc = -1;

	if (!d)
		return -1;
	while (rc < 0 && (de = readdir(d))) {
		char path[512], buf[32];
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/type", root, de->d_name);
		if (read_text(path, buf, sizeof(buf)) == 0 && (uint32_t)strtoul(buf, NULL, 10) == type) {
			snprintf(name, n, "%.63s", de->d_name);
			rc = 0;
		}
	}
	closedir(d);
	return rc;
}

int auxpmu__lookup(uint32_t type, struct aux_pmu *p)
{
	static const char *const fixed[] = { "hardware", "software", "tracepoint", "hw-cache" };

	memset(p, 0, sizeof(*p));
	p->kind = AUX_OTHER;
	p->type = type;
	if (type < sizeof(fixed) / sizeof(fixed[0])) {   /* the kernel's fixed types have no AUX area */
		snprintf(p->name, sizeof(p->name), "%s", fixed[type]);
		return 0;
	}
	if (pmu_name_of(type, p->name, sizeof(p->name)) < 0) {
		snprintf(p->name, sizeof(p->name), "type %u", type);
		return 0;
	}
	for (size_t i = 0; i < sizeof(aux_pmus) / sizeof(aux_pmus[0]); i++) {
		size_t l = strlen(aux_pmus[i].prefix);
		if (aux_pmus[i].exact ? !strcmp(p->name, aux_pmus[i].prefix) :
		    !strncmp(p->name, aux_pmus[i].prefix, l) && (p->name[l] == 0 || p->name[l] == '_')) {
			p->kind = aux_pmus[i].kind;
			return 1;
		}
	}
	return 0;
}

/* Mask of the bits format term @term occupies in config (perf's perf_pmu__format_bits). */
static uint64_t term_mask(const char *pmu, const char *term)
{
	char path[512], fmt[256];
	struct perf_event_attr a;

	snprintf(path, sizeof(path), "%s/%s/format/%s", events__pmu_root(), pmu, term);
	if (read_text(path, fmt, sizeof(fmt)) < 0 || strncmp(fmt, "config:", 7))
		return 0;
	memset(&a, 0, sizeof(a));
	if (events__apply_format(&a, fmt, ~0ULL) < 0)
		return 0;
	return a.config;
}

int auxinfo__term(const char *pmu, const struct perf_event_attr *attr, const char *term, uint64_t *v)
{
	uint64_t m = term_mask(pmu, term), out = 0;
	unsigned k = 0;

	*v = 0;
	if (!m)
		return -1;
	for (unsigned b = 0; b < 64; b++)
		if (m >> b & 1) {
			out |= (attr->config >> b & 1) << k;
			k++;
		}
	*v = out;
	return 0;
}

/* A sysfs number of @pmu (decimal or 0x hex); @def if the file is absent. -1 if malformed. */
static int sysfs_u64(const char *pmu, const char *file, uint64_t def, uint64_t *v, struct rec_err *e)
{
	char path[512], buf[64], *end;

	snprintf(path, sizeof(path), "%s/%s/%s", events__pmu_root(), pmu, file);
	if (read_text(path, buf, sizeof(buf)) < 0) {
		*v = def;
		return 0;
	}
	errno = 0;
	*v = strtoull(buf, &end, 0);
	if (errno || end == buf || *end)
		return rec_fail(e, EINVAL, "%s holds '%s', not a number", path, buf);
	return 0;
}

static int sysfs_exists(const char *pmu, const char *file)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s/%s", events__pmu_root(), pmu, file);
	return access(path, F_OK) == 0;
}

void auxinfo__tsc_ctc(uint32_t *n, uint32_t *d)
{
	*n = *d = 0;
#if defined(__x86_64__) || defined(__i386__)
	unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
	if (__get_cpuid_max(0, NULL) >= 0x15) {
		__cpuid(0x15, eax, ebx, ecx, edx);
		*n = ebx;
		*d = eax;
	}
#endif
}

uint64_t auxinfo__reference(enum aux_kind kind)
{
	struct timespec ts;
	static uint64_t x;

	switch (kind) {
	case AUX_INTEL_PT:
	case AUX_INTEL_BTS:
#if defined(__x86_64__) || defined(__i386__)
		return __rdtsc();   /* the decoder takes a TSC packet's missing top byte from it */
#else
		return 0;
#endif
	case AUX_ARM_SPE:
		clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
		return (uint64_t)ts.tv_sec ^ (uint64_t)ts.tv_nsec;
	default:
		/* CoreSight: any 64-bit value that tells buffers apart (perf: rand()) */
		if (!x) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			x = ((uint64_t)ts.tv_nsec << 32) ^ (uint64_t)ts.tv_sec ^ (uint64_t)getpid() ^ 0x9e3779b97f4a7c15ULL;
		}
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		return x;
	}
}

size_t auxinfo__pt_psb_period(const struct aux_pmu *pmu, const struct perf_event_attr *attr)
{
	uint64_t topa_multi = 0, v;
	struct rec_err ignore;

	if (sysfs_u64(pmu->name, "caps/topa_multiple_entries", 0, &topa_multi, &ignore) < 0 || !topa_multi)
		return 256;   /* single-entry ToPA: a PSB at least every 256 bytes (perf) */
	if (auxinfo__term(pmu->name, attr, "psb_period", &v) < 0)
		return 0;
	return (size_t)1 << (v + 11);
}

/* ---------------------------------------------------------- AUXTRACE_INFO */

static void info_start(struct pd_buf *b, uint32_t type)
{
	struct perf_event_header h = { PD_RECORD_AUXTRACE_INFO, 0, 0 };
	pd_buf_bytes(b, &h, sizeof(h));
	pd_buf_u32(b, type);
	pd_buf_u32(b, 0);
}

static void time_words(struct pd_buf *b, const struct perf_event_mmap_page *pc)
{
	struct time_conv t = { 0 };

	if (pc)
		synth__read_time(pc, &t);
	if (!t.cap_zero)   /* perf_read_tsc_conversion fails: zeros, and no conversion */
		t.shift = t.mult = t.zero = 0;
	pd_buf_u64(b, t.shift);
	pd_buf_u64(b, t.mult);
	pd_buf_u64(b, t.zero);
	pd_buf_u64(b, t.mult != 0);
}

static int build_pt(struct pd_buf *b, const struct auxinfo_params *p, struct rec_err *e)
{
	const char *pmu = p->pmu->name;
	uint64_t max_nonturbo, event_trace;

	if (sysfs_u64(pmu, "max_nonturbo_ratio", 0, &max_nonturbo, e) < 0 ||
	    sysfs_u64(pmu, "caps/event_trace", 0, &event_trace, e) < 0)
		return -1;
	info_start(b, PD_AUXTRACE_INTEL_PT);
	pd_buf_u64(b, p->pmu->type);
	time_words(b, p->pc);
	pd_buf_u64(b, term_mask(pmu, "tsc"));
	pd_buf_u64(b, term_mask(pmu, "noretcomp"));
	pd_buf_u64(b, (uint64_t)p->have_sched_switch);
	pd_buf_u64(b, (uint64_t)!!p->snapshot);
	pd_buf_u64(b, (uint64_t)!!p->per_cpu_mmaps);
	pd_buf_u64(b, term_mask(pmu, "mtc"));
	pd_buf_u64(b, term_mask(pmu, "mtc_period"));
	pd_buf_u64(b, p->tsc_ctc_n);
	pd_buf_u64(b, p->tsc_ctc_d);
	pd_buf_u64(b, term_mask(pmu, "cyc"));
	pd_buf_u64(b, max_nonturbo);
	size_t len = p->filter ? strlen(p->filter) : 0;
	pd_buf_u64(b, len);
	if (len) {   /* NUL-terminated, zero-padded to a multiple of 8 */
		size_t padded = (len + 1 + 7) & ~(size_t)7;
		pd_buf_bytes(b, p->filter, len);
		for (size_t i = len; i < padded; i++)
			pd_buf_bytes(b, "", 1);
	}
	pd_buf_u64(b, event_trace);
	return 0;
}

static int build_bts(struct pd_buf *b, const struct auxinfo_params *p)
{
	info_start(b, PD_AUXTRACE_INTEL_BTS);
	pd_buf_u64(b, p->pmu->type);
	time_words(b, p->pc);
	pd_buf_u64(b, (uint64_t)!!p->snapshot);
	return 0;
}

static int build_spe(struct pd_buf *b, const struct auxinfo_params *p)
{
	info_start(b, PD_AUXTRACE_ARM_SPE);
	pd_buf_u64(b, p->pmu->type);
	pd_buf_u64(b, (uint64_t)!!p->per_cpu_mmaps);
	return 0;
}

/* ETMv4 / ETE TRCCONFIGR from the perf options in attr.config (facts 5.2). */
static uint64_t cs_trcconfigr(uint64_t config)
{
	static const struct { unsigned opt, cfg; } map[] = {
		{ 8, 3 },     /* branch broadcast -> BB */
		{ 12, 4 },    /* cycacc -> CYCACC */
		{ 14, 6 },    /* contextid -> CTXTID */
		{ 15, 7 },    /* contextid2 -> VMID (and VMID_OPT below) */
		{ 28, 11 },   /* timestamp -> TS */
		{ 29, 12 },   /* retstack -> RETSTK */
	};
	uint64_t r = 0;

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (config >> map[i].opt & 1)
			r |= 1ULL << map[i].cfg;
	if (config >> 15 & 1)
		r |= 1ULL << 15;
	return r;
}

static int cs_cpu_block(struct pd_buf *b, const struct auxinfo_params *p, int cpu, struct rec_err *e)
{
	const char *pmu = p->pmu->name;
	char f[128];
	uint64_t v[8];
	uint64_t traceid = CS_TRACE_ID_SEED + 2 * (uint64_t)cpu;

	snprintf(f, sizeof(f), "cpu%d/trcidr/trcidr0", cpu);
	if (sysfs_exists(pmu, f)) {   /* ETMv4 or ETE */
		static const char *const files[] = { "trcidr/trcidr0", "trcidr/trcidr1", "trcidr/trcidr2",
						     "trcidr/trcidr8", "mgmt/trcauthstatus", "mgmt/trcdevarch" };
		for (int i = 0; i < 6; i++) {
			snprintf(f, sizeof(f), "cpu%d/%s", cpu, files[i]);
			if (i < 5 && !sysfs_exists(pmu, f))
				return rec_fail(e, ENOENT, "CoreSight metadata for CPU %d: %s/%s/%s is missing",
						cpu, events__pmu_root(), pmu, f);
			if (sysfs_u64(pmu, f, 0, &v[i], e) < 0)
				return -1;
		}
		uint64_t ts_source;
		snprintf(f, sizeof(f), "cpu%d/ts_source", cpu);
		if (sysfs_u64(pmu, f, (uint64_t)-1, &ts_source, e) < 0)
			return -1;
		int ete = (v[5] >> 12 & 0xf) == 5 && (v[5] & 0xfff) == 0xa13;
		pd_buf_u64(b, ete ? CS_ETE_MAGIC : CS_ETMV4_MAGIC);
		pd_buf_u64(b, (uint64_t)cpu);
		pd_buf_u64(b, ete ? 9 : 8);
		pd_buf_u64(b, cs_trcconfigr(p->attr->config));
		pd_buf_u64(b, traceid);
		for (int i = 0; i < 5; i++)
			pd_buf_u64(b, v[i]);
		if (ete)
			pd_buf_u64(b, v[5]);
		pd_buf_u64(b, ts_source);
		return 0;
	}
	/* ETMv3 / PTM: ETMCR is the perf config itself (its bits match ETMv3.5 ETMCR) */
	static const char *const files3[] = { "mgmt/etmccer", "mgmt/etmidr" };
	for (int i = 0; i < 2; i++) {
		snprintf(f, sizeof(f), "cpu%d/%s", cpu, files3[i]);
		if (!sysfs_exists(pmu, f))
			return rec_fail(e, ENOENT, "CoreSight metadata for CPU %d: neither cpu%d/trcidr/trcidr0 "
					"(ETMv4) nor %s/%s/%s (ETMv3) exists", cpu, cpu, events__pmu_root(), pmu, f);
		if (sysfs_u64(pmu, f, 0, &v[i], e) < 0)
			return -1;
	}
	pd_buf_u64(b, CS_ETMV3_MAGIC);
	pd_buf_u64(b, (uint64_t)cpu);
	pd_buf_u64(b, 4);
	pd_buf_u64(b, p->attr->config);
	pd_buf_u64(b, traceid);
	pd_buf_u64(b, v[0]);
	pd_buf_u64(b, v[1]);
	return 0;
}

static int build_cs(struct pd_buf *b, const struct auxinfo_params *p, struct rec_err *e)
{
	int *online = NULL, n;
	const int *cpus = p->cpus;

	if (!cpus || (p->nr_cpus == 1 && cpus[0] == -1)) {   /* per-thread: every online CPU may run it */
		n = cpus_online(&online);
		if (n < 0)
			return rec_fail(e, errno, "cannot read /sys/devices/system/cpu/online");
		cpus = online;
	} else {
		n = p->nr_cpus;
	}
	info_start(b, PD_AUXTRACE_CS_ETM);
	pd_buf_u64(b, CS_HEADER_VERSION);
	pd_buf_u64(b, (uint64_t)p->pmu->type << 32 | (uint32_t)n);
	pd_buf_u64(b, (uint64_t)!!p->snapshot);
	int rc = 0;
	for (int i = 0; i < n && !rc; i++)
		rc = cs_cpu_block(b, p, cpus[i], e);
	free(online);
	return rc;
}

int auxinfo__build(struct pd_buf *out, const struct auxinfo_params *p, struct rec_err *e)
{
	int rc;

	switch (p->pmu->kind) {
	case AUX_INTEL_PT: rc = build_pt(out, p, e); break;
	case AUX_INTEL_BTS: rc = build_bts(out, p); break;
	case AUX_CS_ETM: rc = build_cs(out, p, e); break;
	case AUX_ARM_SPE: rc = build_spe(out, p); break;
	default:
		return rec_fail(e, EINVAL, "PMU %s: perf defines no AUXTRACE_INFO for it", p->pmu->name);
	}
	if (rc < 0)
		return -1;
	if (out->oom)
		return rec_fail(e, ENOMEM, "out of memory");
	if (out->len > 65528)
		return rec_fail(e, E2BIG, "AUXTRACE_INFO of %zu bytes does not fit a record", out->len);
	uint16_t size = (uint16_t)out->len;
	memcpy(out->data + 6, &size, 2);
	return 0;
}

/* ---------------------------------------------------------------- filters */

int auxinfo__check_filter(const struct aux_pmu *pmu, const char *filter, struct rec_err *e)
{
	static const char *const actions[] = { "filter", "start", "stop", "tracefilter", "tracestart", "tracestop" };
	uint64_t max = 0;
	char *copy = strdup(filter), *save = NULL;
	int n = 0, rc = 0;

	if (!copy)
		return rec_fail(e, ENOMEM, "out of memory");
	if (sysfs_u64(pmu->name, "nr_addr_filters", 0, &max, e) < 0) {
		free(copy);
		return -1;
	}
	for (char *t = strtok_r(copy, ", \t\n", &save); t && !rc; t = strtok_r(NULL, ", \t\n", &save)) {
		size_t k;
		for (k = 0; k < sizeof(actions) / sizeof(actions[0]); k++)
			if (!strcmp(t, actions[k]))
				break;
		if (k == sizeof(actions) / sizeof(actions[0])) {
			rc = rec_fail(e, EINVAL, "--filter '%s': '%s' is not an action (filter, start, stop, "
				      "tracefilter, tracestart, tracestop)", filter, t);
			break;
		}
		char *range = strtok_r(NULL, ", \t\n", &save), *end;
		if (!range) {
			rc = rec_fail(e, EINVAL, "--filter '%s': %s needs ADDR[/SIZE][@FILE]", filter, t);
			break;
		}
		char *at = strchr(range, '@');
		if (at)
			*at = 0;
		errno = 0;
		strtoull(range, &end, 0);
		if (errno || end == range || (*end && *end != '/')) {
			rc = rec_fail(e, EINVAL, "--filter '%s': '%s' is not an address (symbol names need "
				      "perf's resolver; give the address as a number)", filter, range);
			break;
		}
		uint64_t size = 0;
		if (*end == '/') {
			char *s = end + 1;
			size = strtoull(s, &end, 0);
			if (end == s || *end) {
				rc = rec_fail(e, EINVAL, "--filter '%s': bad size in '%s'", filter, range);
				break;
			}
		}
		if ((k == 0 || k == 3) && !size) {
			rc = rec_fail(e, EINVAL, "--filter '%s': a %s range needs a size (ADDR/SIZE)", filter, t);
			break;
		}
		if (at && at[1] && access(at + 1, R_OK) < 0) {
			rc = rec_fail(e, errno, "--filter '%s': object %s: %s", filter, at + 1, strerror(errno));
			break;
		}
		n++;
	}
	free(copy);
	if (!rc && !n)
		rc = rec_fail(e, EINVAL, "--filter '%s': no address range", filter);
	if (!rc && (uint64_t)n > max)
		rc = rec_fail(e, EINVAL, "--filter '%s': %d ranges, but PMU %s has %llu address filters%s", filter,
			      n, pmu->name, (unsigned long long)max, max ? "" : " (nr_addr_filters is 0 or missing)");
	return rc;
}

/* ----------------------------------------------------------------- output */

int aux_chunk_write(struct pd_writer *w, const struct aux_chunk *c, struct pd_error *pe)
{
	static const uint8_t zeros[8];
	int rc = pd_writer_write(w, c->rec, -1, c->p1, c->n1, pe);

	if (!rc && c->n2)
		rc = pd_writer_write_payload(w, c->p2, c->n2, pe);
	if (!rc && c->pad)
		rc = pd_writer_write_payload(w, zeros, c->pad, pe);
	return rc;
}

void aux_counts_note(struct aux_counts *c, const struct perf_event_header *h)
{
	uint64_t v[3];

	switch (h->type) {
	case PERF_RECORD_AUX:   /* aux_offset, aux_size, flags */
		c->aux_records++;
		if (h->size < 32)
			return;
		memcpy(v, (const uint8_t *)h + 8, sizeof(v));
		if (!(v[2] & PD_AUX_FLAG_OVERWRITE))
			c->aux_bytes += v[1];
		c->truncated += !!(v[2] & PD_AUX_FLAG_TRUNCATED);
		c->partial += !!(v[2] & PD_AUX_FLAG_PARTIAL);
		c->collision += !!(v[2] & PD_AUX_FLAG_COLLISION);
		c->overwrite += !!(v[2] & PD_AUX_FLAG_OVERWRITE);
		break;
	case PERF_RECORD_ITRACE_START:
		c->itrace_start++;
		break;
	case 21:   /* PERF_RECORD_AUX_OUTPUT_HW_ID (5.16+ headers) */
		c->hw_id++;
		break;
	}
}
