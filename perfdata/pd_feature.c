/*
 * pd_feature.c - feature sections to structs, for display (rbdecode info,
 * what perf report --header-only shows) and for the stages that need host
 * facts (PMU names for attr types, the AUXTRACE index). Payloads are already
 * in native order (pd_read.c converted them). A malformed feature is noted
 * in f->bad and reported as a warning; the others still parse.
 */
#include "config.h"
#include <stdlib.h>
#include "pd_internal.h"

struct fcur {
	const uint8_t *p, *end;
	int bad;
};

static uint32_t f32(struct fcur *c)
{
	if (c->bad || c->end - c->p < 4) { c->bad = 1; return 0; }
	uint32_t v = ld32(c->p);
	c->p += 4;
	return v;
}

static uint64_t f64(struct fcur *c)
{
	if (c->bad || c->end - c->p < 8) { c->bad = 1; return 0; }
	uint64_t v = ld64(c->p);
	c->p += 8;
	return v;
}

static const char *fstr(struct fcur *c)
{
	const char *s = "";
	if (c->bad)
		return s;
	size_t n = pd_feat_string(c->p, (size_t)(c->end - c->p), &s);
	if (!n) { c->bad = 1; return ""; }
	c->p += n;
	return s;
}

static int fstrlist(struct fcur *c, struct pd_feature_string_list *l)
{
	uint32_t nr = f32(c);
	if (c->bad || nr > (size_t)(c->end - c->p) / 4) { c->bad = 1; return 0; }
	l->str = calloc(nr ? nr : 1, sizeof(*l->str));
	if (!l->str)
		return PD_ERR_NOMEM;
	for (uint32_t i = 0; i < nr && !c->bad; i++)
		l->str[i] = fstr(c);
	l->nr = c->bad ? 0 : nr;
	return 0;
}

/* u32 nr, then nr pairs of strings, flattened into one list */
static int fpairs(struct fcur *c, struct pd_feature_string_list *l)
{
	uint32_t nr = f32(c);
	if (c->bad || nr > (size_t)(c->end - c->p) / 8) { c->bad = 1; return 0; }
	l->str = calloc(2 * (size_t)nr + 1, sizeof(*l->str));
	if (!l->str)
		return PD_ERR_NOMEM;
	for (uint32_t i = 0; i < 2 * nr && !c->bad; i++)
		l->str[i] = fstr(c);
	l->nr = c->bad ? 0 : 2 * nr;
	return 0;
}

static void mark(uint64_t *set, unsigned feat) { set[feat / 64] |= 1ULL << (feat % 64); }

int pd_features_parse(const struct pd_reader *r, struct pd_features *f, struct pd_error *err)
{
	memset(f, 0, sizeof(*f));
	for (unsigned feat = 1; feat < PD_FEAT_BITS; feat++) {
		const uint8_t *d;
		size_t size;
		if (!pd_reader_feature(r, feat, &d, &size, NULL)) {
			if (feat >= PD_FEAT_KNOWN_MAX && (pd_reader_info(r)->features[feat / 64] >> (feat % 64) & 1))
				mark(f->unknown, feat);
			continue;
		}
		struct fcur c = { d, d + size, 0 };
		int rc = 0;
		if (pd_feature_check(feat, d, size, f->nr_cpus_avail, NULL) < 0)
			mark(f->bad, feat);
		switch (feat) {
		case PD_FEAT_HOSTNAME: f->hostname = fstr(&c); break;
		case PD_FEAT_OSRELEASE: f->osrelease = fstr(&c); break;
		case PD_FEAT_VERSION: f->version = fstr(&c); break;
		case PD_FEAT_ARCH: f->arch = fstr(&c); break;
		case PD_FEAT_CPUDESC: f->cpudesc = fstr(&c); break;
		case PD_FEAT_CPUID: f->cpuid = fstr(&c); break;
		case PD_FEAT_NRCPUS:
			f->nr_cpus_avail = f32(&c);
			f->nr_cpus_online = f32(&c);
			f->has_nrcpus = !c.bad;
			break;
		case PD_FEAT_TOTAL_MEM:
			f->total_mem_kb = f64(&c);
			f->has_total_mem = !c.bad;
			break;
		case PD_FEAT_CMDLINE: rc = fstrlist(&c, &f->cmdline); break;
		case PD_FEAT_EVENT_DESC: f->nr_event_desc = f32(&c); break;
		case PD_FEAT_CPU_TOPOLOGY:
			rc = fstrlist(&c, &f->core_siblings);
			if (!rc)
				rc = fstrlist(&c, &f->thread_siblings);
			break;
		case PD_FEAT_NUMA_TOPOLOGY: {
			uint32_t nr = f32(&c);
			if (c.bad || nr > size / 24) { c.bad = 1; break; }
			if (!(f->numa = calloc(nr + 1, sizeof(*f->numa)))) { rc = PD_ERR_NOMEM; break; }
			for (uint32_t i = 0; i < nr && !c.bad; i++) {
				f->numa[i].node = f32(&c);
				f->numa[i].mem_total_kb = f64(&c);
				f->numa[i].mem_free_kb = f64(&c);
				f->numa[i].cpus = fstr(&c);
			}
			f->nr_numa_nodes = c.bad ? 0 : nr;
			break;
		}
		case PD_FEAT_CACHE: {
			uint32_t ver = f32(&c), nr = f32(&c);
			if (c.bad || ver != 1 || nr > size / 28) { c.bad = 1; break; }
			if (!(f->caches = calloc(nr + 1, sizeof(*f->caches)))) { rc = PD_ERR_NOMEM; break; }
			for (uint32_t i = 0; i < nr && !c.bad; i++) {
				struct pd_cache_level *l = &f->caches[i];
				l->level = f32(&c);
				l->line_size = f32(&c);
				l->sets = f32(&c);
				l->ways = f32(&c);
				l->type = fstr(&c);
				l->size = fstr(&c);
				l->map = fstr(&c);
			}
			f->nr_caches = c.bad ? 0 : nr;
			break;
		}
		case PD_FEAT_CPU_PMU_CAPS: rc = fpairs(&c, &f->cpu_pmu_caps); break;
		case PD_FEAT_HYBRID_TOPOLOGY: rc = fpairs(&c, &f->hybrid_topology); break;
		case PD_FEAT_PMU_CAPS: {
			uint32_t nr = f32(&c);
			if (c.bad || nr > size / 8) { c.bad = 1; break; }
			if (!(f->pmu_caps = calloc(nr + 1, sizeof(*f->pmu_caps)))) { rc = PD_ERR_NOMEM; break; }
			uint32_t done = 0;
			for (; done < nr && !c.bad && !rc; done++) {
				rc = fpairs(&c, &f->pmu_caps[done].caps);
				f->pmu_caps[done].pmu = fstr(&c);
			}
			if (c.bad) {
				/* nr_pmu_caps becomes 0 and pd_features_free frees only entry 0's list:
				   free the lists read before the damage here (they leaked; fuzz_perfdata) */
				for (uint32_t i = 0; i < done; i++) {
					free(f->pmu_caps[i].caps.str);
					memset(&f->pmu_caps[i], 0, sizeof(f->pmu_caps[i]));
				}
			}
			f->nr_pmu_caps = c.bad ? 0 : nr;
			break;
		}
		case PD_FEAT_MEM_TOPOLOGY:
			f64(&c);
			f->mem_block_size = f64(&c);
			f->mem_nr_nodes = f64(&c);
			f->has_mem_topology = !c.bad;
			break;
		case PD_FEAT_BPF_PROG_INFO: f->nr_bpf_prog_info = f32(&c); break;
		case PD_FEAT_BPF_BTF: f->nr_bpf_btf = f32(&c); break;
		case PD_FEAT_PMU_MAPPINGS: {
			uint32_t nr = f32(&c);
			if (c.bad || nr > size / 8) { c.bad = 1; break; }
			f->pmu_types = calloc(nr ? nr : 1, sizeof(*f->pmu_types));
			f->pmu_names = calloc(nr ? nr : 1, sizeof(*f->pmu_names));
			if (!f->pmu_types || !f->pmu_names) { rc = PD_ERR_NOMEM; break; }
			for (uint32_t i = 0; i < nr && !c.bad; i++) {
				f->pmu_types[i] = f32(&c);
				f->pmu_names[i] = fstr(&c);
			}
			f->nr_pmu_mappings = c.bad ? 0 : nr;
			break;
		}
		case PD_FEAT_GROUP_DESC: {
			uint32_t nr = f32(&c);
			if (c.bad || nr > size / 12) { c.bad = 1; break; }
			if (!(f->groups = calloc(nr + 1, sizeof(*f->groups)))) { rc = PD_ERR_NOMEM; break; }
			for (uint32_t i = 0; i < nr && !c.bad; i++) {
				f->groups[i].name = fstr(&c);
				f->groups[i].leader_idx = f32(&c);
				f->groups[i].nr_members = f32(&c);
			}
			f->nr_groups = c.bad ? 0 : nr;
			break;
		}
		case PD_FEAT_AUXTRACE: {
			uint64_t nr = f64(&c);
			if (c.bad || nr > (size - 8) / 16) { c.bad = 1; break; }
			f->nr_auxtrace_index = nr;
			f->auxtrace_index = c.p;
			break;
		}
		case PD_FEAT_SAMPLE_TIME:
			f->first_sample_time = f64(&c);
			f->last_sample_time = f64(&c);
			f->has_sample_time = !c.bad;
			break;
		case PD_FEAT_CLOCKID:
			f->clockid_res_ns = f64(&c);
			f->has_clockid = !c.bad;
			break;
		case PD_FEAT_CLOCK_DATA: {
			uint32_t ver = f32(&c);
			f->clock_data_clockid = f32(&c);
			f->clock_tod_ns = f64(&c);
			f->clock_clockid_ns = f64(&c);
			f->has_clock_data = !c.bad && ver == 1;
			break;
		}
		case PD_FEAT_COMPRESSED:
			f->comp_ver = f32(&c);
			f->comp_type = f32(&c);
			f->comp_level = f32(&c);
			f->comp_ratio = f32(&c);
			f->comp_mmap_len = f32(&c);
			f->has_compressed = !c.bad;
			break;
		case PD_FEAT_DIR_FORMAT:
			f->dir_format_version = f64(&c);
			f->has_dir_format = !c.bad;
			break;
		case PD_FEAT_BUILD_ID:
			f->nr_build_ids = (uint32_t)pd_build_id_each(d, size, NULL, NULL);
			break;
		default:
			break;
		}
		if (rc < 0)
			return pd_fail(err, rc, PD_NO_OFFSET, -1, "out of memory parsing features");
		if (c.bad)
			mark(f->bad, feat);
	}
	return 0;
}

void pd_features_free(struct pd_features *f)
{
	if (!f)
		return;
	free(f->cmdline.str);
	free(f->core_siblings.str);
	free(f->thread_siblings.str);
	free(f->pmu_types);
	free(f->pmu_names);
	free(f->numa);
	free(f->caches);
	free(f->groups);
	free(f->cpu_pmu_caps.str);
	free(f->hybrid_topology.str);
	for (uint32_t i = 0; f->pmu_caps && i < f->nr_pmu_caps + 1; i++)
		free(f->pmu_caps[i].caps.str);
	free(f->pmu_caps);
	memset(f, 0, sizeof(*f));
}

size_t pd_build_id_each(const uint8_t *d, size_t size, pd_build_id_fn fn, void *ctx)
{
	size_t n = 0;
	for (size_t p = 0; p + 36 <= size;) {
		uint16_t misc = ld16(d + p + 4), sz = ld16(d + p + 6);
		if (sz < 36 || sz > size - p)
			break;
		const char *name = (const char *)d + p + 36;
		if (!memchr(name, 0, sz - 36u))
			break;
		if (fn)
			fn(ctx, misc, (int32_t)ld32(d + p + 8), d + p + 12,
			   (misc & PD_MISC_BUILD_ID_SIZE) ? d[p + 32] : 20, name);
		n++;
		p += sz;
	}
	return n;
}

const char *pd_features_pmu_name(const struct pd_features *f, uint32_t type)
{
	for (uint32_t i = 0; i < f->nr_pmu_mappings; i++)
		if (f->pmu_types[i] == type)
			return f->pmu_names[i];
	return NULL;
}
