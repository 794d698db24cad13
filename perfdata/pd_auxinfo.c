/*
 * pd_auxinfo.c - the PMU-private words of PERF_RECORD_AUXTRACE_INFO, named.
 * Layouts: ../shared/docs/perf-data-facts.md sections 4.1 (Intel PT) and
 * 5.1-5.2 (CoreSight). Decoders read the same words through their own
 * configuration code; this file only names them for people and JSON.
 */
#include "config.h"
#include <byteswap.h>
#include <stdio.h>
#include "pd_internal.h"

const char *pd_auxtrace_type_name(uint32_t type)
{
	switch (type) {
	case PD_AUXTRACE_INTEL_PT: return "intel_pt";
	case PD_AUXTRACE_INTEL_BTS: return "intel_bts";
	case PD_AUXTRACE_CS_ETM: return "cs_etm";
	case PD_AUXTRACE_ARM_SPE: return "arm_spe";
	case PD_AUXTRACE_S390_CPUMSF: return "s390_cpumsf";
	case PD_AUXTRACE_HISI_PTT: return "hisi_ptt";
	}
	return "unknown";
}

static const char *const pt_names[] = {
	"pmu_type", "time_shift", "time_mult", "time_zero", "cap_user_time_zero",
	"tsc_bit", "noretcomp_bit", "have_sched_switch", "snapshot_mode", "per_cpu_mmaps",
	"mtc_bit", "mtc_freq_bits", "tsc_ctc_ratio_n", "tsc_ctc_ratio_d", "cyc_bit",
	"max_nonturbo_ratio", "filter_str_len",
};

int pd_pt_filter_string(const uint8_t *priv, uint64_t n, int swapped, char *out, size_t outsz, uint64_t *end)
{
	if (outsz)
		out[0] = 0;
	*end = n < 17 ? n : 17;
	if (n < 17)
		return 0;
	uint64_t len = pd_u64_at(priv, 16);
	if (!len)
		return 0;
	uint64_t words = (len + 1 + 7) / 8;
	if (words > n - 17)
		return -1;
	size_t k = 0;
	for (uint64_t w = 0; w < words; w++) {
		uint64_t v = pd_u64_at(priv, 17 + w);
		if (swapped)   /* string bytes were swapped as u64 words with the rest */
			v = bswap_64(v);
		for (int b = 0; b < 8 && k + 1 < outsz; b++)
			out[k++] = (char)((const uint8_t *)&v)[b];
	}
	if (outsz)
		out[k < len ? k : len] = 0;
	*end = 17 + words;
	return 1;
}

static void describe_pt(const uint8_t *priv, uint64_t n, int swapped, pd_kv_fn fn, void *ctx)
{
	uint64_t i;
	for (i = 0; i < n && i < 17; i++)
		fn(ctx, pt_names[i], pd_u64_at(priv, i), NULL);
	if (n < 10)
		fn(ctx, "error", n, "intel_pt AUXTRACE_INFO has fewer than 10 words");
	if (n < 17)
		return;
	char s[1024];
	int rc = pd_pt_filter_string(priv, n, swapped, s, sizeof(s), &i);
	if (rc < 0) {
		fn(ctx, "error", pd_u64_at(priv, 16), "intel_pt filter string runs past the record");
		return;
	}
	if (rc > 0)
		fn(ctx, "filter", pd_u64_at(priv, 16), s);
	if (i < n)
		fn(ctx, "cap_event_trace", pd_u64_at(priv, i), NULL);
}

#define CS_ETMV3_MAGIC 0x3030303030303030ULL
#define CS_ETMV4_MAGIC 0x4040404040404040ULL
#define CS_ETE_MAGIC   0x5050505050505050ULL

static const char *const etmv3_params[] = { "etmcr", "etmtraceidr", "etmccer", "etmidr" };
static const char *const etmv4_params[] = { "trcconfigr", "trctraceidr", "trcidr0", "trcidr1",
					    "trcidr2", "trcidr8", "trcauthstatus", "ts_source" };
static const char *const ete_params[] = { "trcconfigr", "trctraceidr", "trcidr0", "trcidr1",
					  "trcidr2", "trcidr8", "trcauthstatus", "trcdevarch", "ts_source" };

static void describe_cs(const uint8_t *priv, uint64_t n, pd_kv_fn fn, void *ctx)
{
	if (n < 3) {
		fn(ctx, "error", n, "cs_etm AUXTRACE_INFO has fewer than 3 header words");
		return;
	}
	uint64_t ver = pd_u64_at(priv, 0), pc = pd_u64_at(priv, 1);
	fn(ctx, "version", ver, NULL);
	fn(ctx, "pmu_type", pc >> 32, NULL);
	fn(ctx, "nr_cpus", pc & 0xffffffff, NULL);
	fn(ctx, "snapshot", pd_u64_at(priv, 2), NULL);
	if (ver > 2) {
		fn(ctx, "error", ver, "cs_etm header version is newer than 2");
		return;
	}
	uint64_t i = 3;
	for (uint64_t cpu = 0; cpu < (pc & 0xffffffff); cpu++) {
		if (i + 2 > n) {
			fn(ctx, "error", cpu, "cs_etm per-CPU blocks run past the record");
			return;
		}
		uint64_t magic = pd_u64_at(priv, i);
		const char *const *names;
		uint64_t known, nr;
		const char *kind;
		if (magic == CS_ETMV3_MAGIC) { names = etmv3_params; known = 4; kind = "etmv3"; }
		else if (magic == CS_ETMV4_MAGIC) { names = etmv4_params; known = 8; kind = "etmv4"; }
		else if (magic == CS_ETE_MAGIC && ver >= 1) { names = ete_params; known = 9; kind = "ete"; }
		else {
			fn(ctx, "error", magic, "cs_etm per-CPU block with unknown magic");
			return;
		}
		char key[64];
		uint64_t cpu_id = pd_u64_at(priv, i + 1);
		snprintf(key, sizeof(key), "cpu%llu.%s", (unsigned long long)cpu_id, "kind");
		fn(ctx, key, magic, kind);
		if (ver == 0) {
			nr = magic == CS_ETMV3_MAGIC ? 4 : 7;
			i += 2;
		} else {
			nr = pd_u64_at(priv, i + 2);
			i += 3;
		}
		if (nr > n - i) {
			fn(ctx, "error", nr, "cs_etm per-CPU parameters run past the record");
			return;
		}
		for (uint64_t k = 0; k < nr; k++) {
			if (k < known)
				snprintf(key, sizeof(key), "cpu%llu.%s", (unsigned long long)cpu_id, names[k]);
			else
				snprintf(key, sizeof(key), "cpu%llu.param%llu", (unsigned long long)cpu_id,
					 (unsigned long long)k);
			fn(ctx, key, pd_u64_at(priv, i + k), NULL);
		}
		i += nr;
	}
	if (i != n)
		fn(ctx, "error", n - i, "cs_etm AUXTRACE_INFO has words after the last per-CPU block");
}

static const char *const bts_names[] = {
	"pmu_type", "time_shift", "time_mult", "time_zero", "cap_user_time_zero", "snapshot_mode",
};

const char *pd_auxtrace_info_describe(const struct pd_event *ev, int swapped_file,
				      pd_kv_fn fn, void *ctx)
{
	const uint8_t *priv = ev->u.auxtrace_info.priv;
	uint64_t n = ev->u.auxtrace_info.nr_priv;
	switch (ev->u.auxtrace_info.type) {
	case PD_AUXTRACE_INTEL_PT:
		describe_pt(priv, n, swapped_file, fn, ctx);
		break;
	case PD_AUXTRACE_CS_ETM:
		describe_cs(priv, n, fn, ctx);
		break;
	case PD_AUXTRACE_INTEL_BTS:
		for (uint64_t i = 0; i < n; i++)
			fn(ctx, i < 6 ? bts_names[i] : "priv", pd_u64_at(priv, i), NULL);
		break;
	default:
		for (uint64_t i = 0; i < n; i++) {
			char key[32];
			snprintf(key, sizeof(key), "priv[%llu]", (unsigned long long)i);
			fn(ctx, key, pd_u64_at(priv, i), NULL);
		}
	}
	return pd_auxtrace_type_name(ev->u.auxtrace_info.type);
}
