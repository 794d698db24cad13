/*
 * cmd_info.c - `rbdecode info FILE`: the header of a recording (what perf
 * report --header-only shows) and a count of its records by type and of
 * samples by event (what perf report --stats shows), as text or --json.
 *
 * Every record is parsed in full (pd_event_parse), so a malformed record is
 * found and counted here even though only counts are printed. With the
 * header, the objects the recording names: each one's build-id and the
 * file the decoders would read (--symdir, --symfs, the build-id cache, the
 * recorded path, --vmlinux / --kcore), or "not found", and whether the
 * build-id matched.
 */
#include "config.h"
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "cli.h"
#include "decoder/session/unpack.h"
#include "decoder/session/session.h"

#define MAX_REPORTED_ERRORS 10

struct auxinfo_copy { uint8_t *data; size_t size; };

/* Counted record types: perf's (0-127), then simpleperf's (32768 on) */
#define NR_TYPE_SLOTS (PD_RECORD_TYPE_MAX + PD_SP_RECORD_SLOTS)
static int slot_of_type(uint32_t t)
{
	if (t < PD_RECORD_TYPE_MAX)
		return (int)t;
	if (t >= PD_SP_RECORD_START && t - PD_SP_RECORD_START < PD_SP_RECORD_SLOTS)
		return PD_RECORD_TYPE_MAX + (int)(t - PD_SP_RECORD_START);
	return -1;
}

static uint32_t type_of_slot(unsigned slot)
{
	return slot < PD_RECORD_TYPE_MAX ? slot : PD_SP_RECORD_START + (slot - PD_RECORD_TYPE_MAX);
}

struct info {
	const char *path;
	struct pd_reader *r;
	uint64_t total;
	uint64_t by_type[NR_TYPE_SLOTS];    /* per record type: slot_of_type() */
	uint64_t other_types;               /* types without a slot */
	uint64_t *samples;                  /* per evsel */
	uint64_t *lost_per_evsel;           /* LOST_SAMPLES.lost per evsel, as perf --stats shows */
	struct pd_read_tracker *reads;      /* counters of PERF_SAMPLE_READ samples (made at the first) */
	size_t nr_samples_slots;
	uint64_t unattributed_samples;
	uint64_t malformed;
	uint64_t lost_events, lost_samples;
	uint64_t payload_bytes;
	struct auxinfo_copy *auxinfo;
	size_t nr_auxinfo;
	struct pd_error stop;               /* why reading stopped early (code 0 if it did not) */
	unsigned warnings;
};

/* Make room for per-evsel counters up to @evsel. */
static int evsel_slots(struct info *in, int evsel)
{
	if ((size_t)evsel < in->nr_samples_slots)
		return 0;
	size_t n = (size_t)evsel + 8;
	uint64_t *s = realloc(in->samples, n * sizeof(*s));
	if (s)
		in->samples = s;
	uint64_t *l = realloc(in->lost_per_evsel, n * sizeof(*l));
	if (l)
		in->lost_per_evsel = l;
	if (!s || !l)
		return PD_ERR_NOMEM;
	memset(s + in->nr_samples_slots, 0, (n - in->nr_samples_slots) * sizeof(*s));
	memset(l + in->nr_samples_slots, 0, (n - in->nr_samples_slots) * sizeof(*l));
	in->nr_samples_slots = n;
	return 0;
}

static int count_sample(struct info *in, int evsel)
{
	if (evsel < 0) {
		in->unattributed_samples++;
		return 0;
	}
	if (evsel_slots(in, evsel) < 0)
		return PD_ERR_NOMEM;
	in->samples[evsel]++;
	return 0;
}

static int keep_auxinfo(struct info *in, const struct pd_record *rec)
{
	struct auxinfo_copy *v = realloc(in->auxinfo, (in->nr_auxinfo + 1) * sizeof(*v));
	if (!v)
		return PD_ERR_NOMEM;
	in->auxinfo = v;
	v[in->nr_auxinfo].data = malloc(rec->size);
	if (!v[in->nr_auxinfo].data)
		return PD_ERR_NOMEM;
	memcpy(v[in->nr_auxinfo].data, rec->data, rec->size);
	v[in->nr_auxinfo].size = rec->size;
	in->nr_auxinfo++;
	return 0;
}

/* Read every record. Returns 0, or an exit status for a fatal condition. */
static int scan(struct info *in)
{
	struct pd_record rec;
	struct pd_event ev;
	struct pd_error err;
	int rc;

	while ((rc = pd_reader_next(in->r, &rec, &in->stop)) == 1) {
		in->total++;
		if (slot_of_type(rec.type) >= 0)
			in->by_type[slot_of_type(rec.type)]++;
		else
			in->other_types++;
		in->payload_bytes += rec.payload_size;
		if (pd_event_parse(in->r, &rec, &ev, &err) < 0) {
			if (rec.type == PD_RECORD_SAMPLE && err.code == PD_ERR_NOATTR)
				in->unattributed_samples++;
			if (++in->malformed <= MAX_REPORTED_ERRORS)
				cli_error("%s", err.msg);
			continue;
		}
		switch (rec.type) {
		case PD_RECORD_SAMPLE:
			if (ev.u.sample.type & PD_SAMPLE_READ) {   /* a sample per counter read, as perf counts them */
				const struct pd_read_delivery *d;
				int n = (in->reads || (in->reads = pd_read_tracker_new())) ?
					pd_read_deliveries(in->reads, in->r, &ev.u.sample, &d) : -1;
				if (n < 0)
					return EXIT_INTERNAL;
				for (int k = 0; k < n; k++)
					if (count_sample(in, d[k].evsel) < 0)
						return EXIT_INTERNAL;
			} else if (count_sample(in, rec.evsel) < 0) {
				return EXIT_INTERNAL;
			}
			break;
		case PD_RECORD_LOST:
			in->lost_events += ev.u.lost.lost;
			break;
		case PD_RECORD_LOST_SAMPLES:
			in->lost_samples += ev.u.lost_samples.lost;
			if (rec.evsel >= 0) {
				if (evsel_slots(in, rec.evsel) < 0)
					return EXIT_INTERNAL;
				in->lost_per_evsel[rec.evsel] += ev.u.lost_samples.lost;
			}
			break;
		case PD_RECORD_AUXTRACE_INFO:
			if (keep_auxinfo(in, &rec) < 0)
				return EXIT_INTERNAL;
			break;
		}
	}
	if (rc < 0) {
		if (in->stop.code == PD_ERR_NOMEM)
			return EXIT_INTERNAL;
		cli_error("%s", in->stop.msg);
	} else {
		pd_error_clear(&in->stop);
	}
	return 0;
}

/* ------------------------------------------------------------- output */

/*
 * simpleperf's features: META_INFO's keys (event_type_info named the events
 * already) and FILE's (or FILE2's) symbol table per binary.
 */
static void meta_text(void *ctx, const char *key, const char *value)
{
	if (strcmp(key, "event_type_info"))
		fprintf(ctx, "# simpleperf %s : %s\n", key, value);
}

static void file_text(void *ctx, const struct pd_sp_file *f)
{
	fprintf(ctx, "# simpleperf file : %s (%s), %u symbols\n", f->path, pd_sp_file_type_name(f->type),
		f->nr_symbols);
}

static void print_simpleperf(struct pd_reader *r, FILE *o)
{
	const uint8_t *d;
	size_t size;
	if (pd_reader_feature(r, PD_FEAT_SP_META_INFO, &d, &size, NULL))
		pd_sp_meta_each(d, size, meta_text, o);
	/* a malformed entry is said by the objects' listing, which reads the tables */
	if (pd_reader_feature(r, PD_FEAT_SP_FILE, &d, &size, NULL) || pd_reader_feature(r, PD_FEAT_SP_FILE2, &d, &size, NULL))
		fprintf(o, "# simpleperf files : %zu\n", pd_sp_files(r, file_text, o, NULL));
}


/* perf's name for the event (a tracepoint the recording does not name is "unknown tracepoint", as in perf) */
static const char *evsel_name(const struct pd_evsel *es, char *buf, size_t n)
{
	pd_evsel_perf_name(es, buf, n);
	return buf;
}

/*
 * The sample_type bits in the order perf report --header-only prints them
 * (IDENTIFIER and REGS_INTR before DATA_SRC and WEIGHT), then the ones it
 * does not name (TRANSACTION, unknown bits).
 */
static void sample_type_str(uint64_t st, char *buf, size_t n)
{
	static const char *const names[] = { "IP", "TID", "TIME", "ADDR", "READ", "CALLCHAIN", "ID",
		"CPU", "PERIOD", "STREAM_ID", "RAW", "BRANCH_STACK", "REGS_USER", "STACK_USER",
		"WEIGHT", "DATA_SRC", "IDENTIFIER", "TRANSACTION", "REGS_INTR", "PHYS_ADDR", "AUX",
		"CGROUP", "DATA_PAGE_SIZE", "CODE_PAGE_SIZE", "WEIGHT_STRUCT" };
	static const unsigned char perf_order[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 18, 15, 14,
		19, 20, 21, 22, 23, 24, 17 };
	size_t k = 0;
	buf[0] = 0;
	for (unsigned i = 0; i < 64; i++) {
		unsigned b = i < sizeof(perf_order) ? perf_order[i] : i;
		if (!(st >> b & 1))
			continue;
		char tmp[16];
		const char *s = b < sizeof(names) / sizeof(names[0]) ? names[b] : (snprintf(tmp, sizeof(tmp), "bit%u", b), tmp);
		k += (size_t)snprintf(buf + k, k < n ? n - k : 0, "%s%s", k ? "|" : "", s);
	}
}

struct kv_print { FILE *f; json_t *obj; };

static void kv_text(void *ctx, const char *key, uint64_t v, const char *str)
{
	struct kv_print *p = ctx;
	if (str)
		fprintf(p->f, "#   %-24s: %s\n", key, str);
	else
		fprintf(p->f, "#   %-24s: %" PRIu64 " (%#" PRIx64 ")\n", key, v, v);
}

/* JSON numbers are signed 64-bit in jansson: larger u64 values become decimal strings. */
static json_t *json_u64(uint64_t v)
{
	if (v <= INT64_MAX)
		return json_integer((json_int_t)v);
	char b[24];
	snprintf(b, sizeof(b), "%" PRIu64, v);
	return json_string(b);
}

static void kv_json(void *ctx, const char *key, uint64_t v, const char *str)
{
	struct kv_print *p = ctx;
	if (!strcmp(key, "error")) {
		json_t *e = json_object_get(p->obj, "errors");
		if (!e)
			json_object_set_new(p->obj, "errors", e = json_array());
		json_array_append_new(e, json_string(str));
		return;
	}
	json_object_set_new(p->obj, key, str ? json_string(str) : json_u64(v));
}

static void meta_json(void *ctx, const char *key, const char *value)
{
	json_object_set_new(ctx, key, json_string(value));
}

static void file_json(void *ctx, const struct pd_sp_file *f)
{
	json_array_append_new(ctx, json_pack("{s:s, s:s, s:I, s:i}", "path", f->path, "type",
					     pd_sp_file_type_name(f->type), "min_vaddr", (json_int_t)f->min_vaddr,
					     "symbols", (int)f->nr_symbols));
}

/* "simpleperf": {"meta_info": {key: value}, "files": [{path, type, min_vaddr, symbols}]} */
static void json_simpleperf(struct pd_reader *r, json_t *h)
{
	const uint8_t *d;
	size_t size;
	json_t *sp = json_object();
	if (pd_reader_feature(r, PD_FEAT_SP_META_INFO, &d, &size, NULL)) {
		json_t *m = json_object();
		pd_sp_meta_each(d, size, meta_json, m);
		json_object_set_new(sp, "meta_info", m);
	}
	if (pd_reader_feature(r, PD_FEAT_SP_FILE, &d, &size, NULL) || pd_reader_feature(r, PD_FEAT_SP_FILE2, &d, &size, NULL)) {
		json_t *a = json_array();
		pd_sp_files(r, file_json, a, NULL);
		json_object_set_new(sp, "files", a);
	}
	if (json_object_size(sp))
		json_object_set_new(h, "simpleperf", sp);
	else
		json_decref(sp);
}

static int parse_auxinfo(struct info *in, const struct auxinfo_copy *a, struct pd_event *ev)
{
	struct pd_record rec = { .type = PD_RECORD_AUXTRACE_INFO, .size = (uint32_t)a->size,
				 .data = a->data, .evsel = -1 };
	return pd_event_parse(in->r, &rec, ev, NULL);
}

static void print_header(struct info *in, const struct pd_features *f, FILE *o)
{
	const struct pd_file_info *fi = pd_reader_info(in->r);
	struct stat st;
	char tbuf[64] = "";
	if (strcmp(in->path, "-") && stat(in->path, &st) == 0) {
		struct tm tm;
		strftime(tbuf, sizeof(tbuf), "%a %b %e %H:%M:%S %Y", localtime_r(&st.st_mtime, &tm));
	}
	fprintf(o, "# ========\n");
	if (tbuf[0])
		fprintf(o, "# captured on    : %s\n", tbuf);
	fprintf(o, "# mode           : %s\n", fi->pipe_mode ? "pipe" : "file");
	fprintf(o, "# byte order     : %s\n", fi->swapped ? "foreign (converted)" : "native");
	if (!fi->pipe_mode) {
		fprintf(o, "# header version : 1\n");
		fprintf(o, "# data offset    : %" PRIu64 "\n", fi->data_offset);
		fprintf(o, "# data size      : %" PRIu64 "%s\n", fi->data_size,
			fi->data_size_unknown ? " (unfinished: read to end of file)" : "");
		fprintf(o, "# feat offset    : %" PRIu64 "\n", fi->data_offset + fi->data_size);
	}
	if (f->hostname) fprintf(o, "# hostname : %s\n", f->hostname);
	if (f->osrelease) fprintf(o, "# os release : %s\n", f->osrelease);
	if (f->version) fprintf(o, "# perf version : %s\n", f->version);
	if (f->arch) fprintf(o, "# arch : %s\n", f->arch);
	if (f->has_nrcpus) {
		fprintf(o, "# nrcpus online : %u\n", f->nr_cpus_online);
		fprintf(o, "# nrcpus avail : %u\n", f->nr_cpus_avail);
	}
	if (f->cpudesc) fprintf(o, "# cpudesc : %s\n", f->cpudesc);
	if (f->cpuid) fprintf(o, "# cpuid : %s\n", f->cpuid);
	if (f->has_total_mem) fprintf(o, "# total memory : %" PRIu64 " kB\n", f->total_mem_kb);
	if (f->cmdline.nr) {
		fprintf(o, "# cmdline : ");
		for (uint32_t i = 0; i < f->cmdline.nr; i++)
			fprintf(o, "%s ", f->cmdline.str[i]);   /* perf's spacing, trailing blank included */
		fputc('\n', o);
	}
	for (size_t i = 0; i < pd_reader_nr_evsels(in->r); i++) {
		const struct pd_evsel *es = pd_reader_evsel(in->r, i);
		char nb[128], stb[256];
		sample_type_str(es->attr.sample_type, stb, sizeof(stb));
		fprintf(o, "# event : name = %s", evsel_name(es, nb, sizeof(nb)));
		if (es->nr_ids) {   /* as perf: no id list for an event without ids */
			fprintf(o, ", id = {");
			for (size_t k = 0; k < es->nr_ids; k++)
				fprintf(o, "%s %" PRIu64, k ? "," : "", es->ids[k]);
			fprintf(o, " }");
		}
		fprintf(o, ", type = %u, size = %u, config = %#" PRIx64 ", { sample_period, sample_freq } = %" PRIu64
			", sample_type = %s, read_format = %#" PRIx64 ", flags = %#" PRIx64 "\n",
			es->attr.type, es->attr.size, es->attr.config, es->attr.sample_period, stb,
			es->attr.read_format, es->attr.flags);
	}
	if (f->core_siblings.nr) {
		for (uint32_t i = 0; i < f->core_siblings.nr; i++)
			fprintf(o, "# sibling sockets : %s\n", f->core_siblings.str[i]);
		for (uint32_t i = 0; i < f->thread_siblings.nr; i++)
			fprintf(o, "# sibling threads : %s\n", f->thread_siblings.str[i]);
	}
	if (f->nr_pmu_mappings) {
		fprintf(o, "# pmu mappings:");
		for (uint32_t i = 0; i < f->nr_pmu_mappings; i++)
			fprintf(o, "%s %s = %u", i ? "," : "", f->pmu_names[i], f->pmu_types[i]);
		fputc('\n', o);
	}
	for (uint32_t i = 0; i < f->nr_numa_nodes; i++)
		fprintf(o, "# node%u meminfo  : total = %" PRIu64 " kB, free = %" PRIu64 " kB\n# node%u cpu list : %s\n",
			f->numa[i].node, f->numa[i].mem_total_kb, f->numa[i].mem_free_kb, f->numa[i].node, f->numa[i].cpus);
	if (f->nr_caches) {
		fprintf(o, "# CPU cache info:\n");
		for (uint32_t i = 0; i < f->nr_caches; i++)
			fprintf(o, "#  L%u %-15s %8s [%s]\n", f->caches[i].level, f->caches[i].type,
				f->caches[i].size, f->caches[i].map);
	}
	for (uint32_t i = 0; i < f->nr_groups; i++)
		fprintf(o, "# group: %s{leader %u, %u members}\n", f->groups[i].name, f->groups[i].leader_idx,
			f->groups[i].nr_members);
	for (uint32_t i = 0; i + 1 < f->cpu_pmu_caps.nr; i += 2)
		fprintf(o, "# cpu pmu capabilities: %s=%s\n", f->cpu_pmu_caps.str[i], f->cpu_pmu_caps.str[i + 1]);
	for (uint32_t i = 0; i + 1 < f->hybrid_topology.nr; i += 2)
		fprintf(o, "# hybrid cpu system: %s cpu list : %s\n", f->hybrid_topology.str[i], f->hybrid_topology.str[i + 1]);
	for (uint32_t i = 0; i < f->nr_pmu_caps; i++)
		for (uint32_t k = 0; k + 1 < f->pmu_caps[i].caps.nr; k += 2)
			fprintf(o, "# %s pmu capabilities: %s=%s\n", f->pmu_caps[i].pmu, f->pmu_caps[i].caps.str[k],
				f->pmu_caps[i].caps.str[k + 1]);
	if (f->has_mem_topology)
		fprintf(o, "# memory: block size %#" PRIx64 ", %" PRIu64 " nodes\n", f->mem_block_size, f->mem_nr_nodes);
	if (f->nr_bpf_prog_info || f->nr_bpf_btf)
		fprintf(o, "# bpf: %u programs, %u BTF objects\n", f->nr_bpf_prog_info, f->nr_bpf_btf);
	if (f->nr_build_ids) fprintf(o, "# build ids : %u\n", f->nr_build_ids);
	print_simpleperf(in->r, o);
	if (f->nr_auxtrace_index) fprintf(o, "# auxtrace index : %" PRIu64 " entries\n", f->nr_auxtrace_index);
	if (f->has_sample_time) {
		fprintf(o, "# time of first sample : %" PRIu64 "\n", f->first_sample_time);
		fprintf(o, "# time of last sample : %" PRIu64 "\n", f->last_sample_time);
	}
	if (f->has_clockid) fprintf(o, "# clockid frequency : %" PRIu64 " MHz\n", f->clockid_res_ns ? 1000 / f->clockid_res_ns : 0);
	if (f->has_clock_data) fprintf(o, "# clock data : clockid %u, tod %" PRIu64 " ns, clockid %" PRIu64 " ns\n",
				       f->clock_data_clockid, f->clock_tod_ns, f->clock_clockid_ns);
	if (f->has_compressed) fprintf(o, "# compressed : %s, level = %u, ratio = %u\n",
				       f->comp_type == 1 ? "Zstd" : "none", f->comp_level, f->comp_ratio);
	for (size_t i = 0; i < in->nr_auxinfo; i++) {
		struct pd_event ev;
		if (parse_auxinfo(in, &in->auxinfo[i], &ev) < 0)
			continue;
		fprintf(o, "# auxtrace info : %s (%" PRIu64 " private words)\n",
			pd_auxtrace_type_name(ev.u.auxtrace_info.type), ev.u.auxtrace_info.nr_priv);
		struct kv_print p = { o, NULL };
		pd_auxtrace_info_describe(&ev, fi->swapped, kv_text, &p);
	}
	fprintf(o, "# missing features:");
	for (unsigned feat = 1; feat < PD_FEAT_KNOWN_MAX; feat++)
		if (!pd_reader_feature(in->r, feat, NULL, NULL, NULL))
			fprintf(o, " %s", pd_feature_name(feat));
	fputc('\n', o);
	for (unsigned feat = 0; feat < PD_FEAT_BITS; feat++) {
		if (f->unknown[feat / 64] >> (feat % 64) & 1)
			fprintf(o, "# unknown feature : %u (skipped)\n", feat);
		if (f->bad[feat / 64] >> (feat % 64) & 1)
			fprintf(o, "# malformed feature : %s (ignored)\n", pd_feature_name(feat));
	}
	fprintf(o, "# ========\n");
}

/* perf's name for a record type, or TYPE_<n>. */
static const char *type_name(unsigned t, char *buf, size_t n)
{
	const char *name = pd_record_name(t);
	if (name)
		return name;
	snprintf(buf, n, "TYPE_%u", t);
	return buf;
}

static void print_stats(struct info *in, FILE *o)
{
	fprintf(o, "\nAggregated stats:\n");
	fprintf(o, "%16s events: %10" PRIu64 "\n", "TOTAL", in->total);
	for (unsigned t = 0; t < NR_TYPE_SLOTS; t++) {
		if (!in->by_type[t])
			continue;
		char nb[16];
		const char *n = type_name(type_of_slot(t), nb, sizeof(nb));
		fprintf(o, "%16s events: %10" PRIu64 "  (%4.1f%%)\n", n, in->by_type[t],
			100.0 * (double)in->by_type[t] / (double)in->total);
	}
	if (in->other_types)
		fprintf(o, "%16s events: %10" PRIu64 "\n", "UNKNOWN_TYPE", in->other_types);
	for (size_t i = 0; i < pd_reader_nr_evsels(in->r); i++) {
		const struct pd_evsel *es = pd_reader_evsel(in->r, i);
		char nb[128];
		uint64_t n = i < in->nr_samples_slots ? in->samples[i] : 0;
		fprintf(o, "%s stats:\n", evsel_name(es, nb, sizeof(nb)));
		if (n)
			fprintf(o, "%16s events: %10" PRIu64 "\n", "SAMPLE", n);
		if (i < in->nr_samples_slots && in->lost_per_evsel[i])
			fprintf(o, "%16s events: %10" PRIu64 "\n", "LOST_SAMPLES", in->lost_per_evsel[i]);
	}
	if (in->lost_events || in->lost_samples)
		fprintf(o, "lost: %" PRIu64 " events (LOST), %" PRIu64 " samples (LOST_SAMPLES)\n",
			in->lost_events, in->lost_samples);
	if (in->unattributed_samples)
		fprintf(o, "samples matching no event: %" PRIu64 "\n", in->unattributed_samples);
	if (in->malformed)
		fprintf(o, "malformed records: %" PRIu64 "\n", in->malformed);
	if (in->stop.code)
		fprintf(o, "partial: reading stopped at offset %" PRIu64 ": %s\n",
			in->stop.offset, pd_strerror(in->stop.code));
}

static json_t *json_strlist(const struct pd_feature_string_list *l)
{
	json_t *a = json_array();
	for (uint32_t i = 0; i < l->nr; i++)
		json_array_append_new(a, json_string(l->str[i]));
	return a;
}

static void json_set_str(json_t *o, const char *k, const char *v)
{
	if (v)
		json_object_set_new(o, k, json_string(v));
}

static json_t *json_report(struct info *in, const struct pd_features *f, int header, int stats)
{
	const struct pd_file_info *fi = pd_reader_info(in->r);
	json_t *root = json_object();
	json_object_set_new(root, "file", json_string(in->path));
	json_object_set_new(root, "mode", json_string(fi->pipe_mode ? "pipe" : "file"));
	json_object_set_new(root, "swapped", json_boolean(fi->swapped));
	if (header) {
		json_t *h = json_object();
		if (!fi->pipe_mode) {
			json_object_set_new(h, "data_offset", json_u64(fi->data_offset));
			json_object_set_new(h, "data_size", json_u64(fi->data_size));
			json_object_set_new(h, "data_size_unknown", json_boolean(fi->data_size_unknown));
		}
		json_set_str(h, "hostname", f->hostname);
		json_set_str(h, "osrelease", f->osrelease);
		json_set_str(h, "version", f->version);
		json_set_str(h, "arch", f->arch);
		json_set_str(h, "cpudesc", f->cpudesc);
		json_set_str(h, "cpuid", f->cpuid);
		if (f->has_nrcpus) {
			json_object_set_new(h, "nr_cpus_online", json_integer(f->nr_cpus_online));
			json_object_set_new(h, "nr_cpus_avail", json_integer(f->nr_cpus_avail));
		}
		if (f->has_total_mem)
			json_object_set_new(h, "total_mem_kb", json_u64(f->total_mem_kb));
		if (f->cmdline.nr)
			json_object_set_new(h, "cmdline", json_strlist(&f->cmdline));
		if (f->nr_pmu_mappings) {
			json_t *m = json_object();
			for (uint32_t i = 0; i < f->nr_pmu_mappings; i++)
				json_object_set_new(m, f->pmu_names[i], json_integer(f->pmu_types[i]));
			json_object_set_new(h, "pmu_mappings", m);
		}
		if (f->has_sample_time) {
			json_object_set_new(h, "first_sample_time", json_u64(f->first_sample_time));
			json_object_set_new(h, "last_sample_time", json_u64(f->last_sample_time));
		}
		json_t *feats = json_array();
		for (unsigned feat = 1; feat < PD_FEAT_BITS; feat++)    /* perf's and simpleperf's */
			if (pd_feature_name(feat) && pd_reader_feature(in->r, feat, NULL, NULL, NULL))
				json_array_append_new(feats, json_string(pd_feature_name(feat)));
		json_object_set_new(h, "features", feats);
		json_simpleperf(in->r, h);
		json_object_set_new(root, "header", h);

		json_t *evs = json_array();
		for (size_t i = 0; i < pd_reader_nr_evsels(in->r); i++) {
			const struct pd_evsel *es = pd_reader_evsel(in->r, i);
			char nb[128], stb[256];
			json_t *e = json_object();
			sample_type_str(es->attr.sample_type, stb, sizeof(stb));
			json_object_set_new(e, "name", json_string(evsel_name(es, nb, sizeof(nb))));
			json_object_set_new(e, "type", json_integer(es->attr.type));
			json_object_set_new(e, "config", json_u64(es->attr.config));
			json_object_set_new(e, "sample_period", json_u64(es->attr.sample_period));
			json_object_set_new(e, "sample_type", json_string(stb));
			json_t *ids = json_array();
			for (size_t k = 0; k < es->nr_ids; k++)
				json_array_append_new(ids, json_u64(es->ids[k]));
			json_object_set_new(e, "ids", ids);
			json_array_append_new(evs, e);
		}
		json_object_set_new(root, "events", evs);

		json_t *aux = json_array();
		for (size_t i = 0; i < in->nr_auxinfo; i++) {
			struct pd_event ev;
			if (parse_auxinfo(in, &in->auxinfo[i], &ev) < 0)
				continue;
			json_t *a = json_object();
			struct kv_print p = { NULL, a };
			json_object_set_new(a, "type", json_string(pd_auxtrace_type_name(ev.u.auxtrace_info.type)));
			pd_auxtrace_info_describe(&ev, fi->swapped, kv_json, &p);
			json_array_append_new(aux, a);
		}
		json_object_set_new(root, "auxtrace_info", aux);
	}
	if (stats) {
		json_t *s = json_object(), *bt = json_object(), *be = json_object();
		json_object_set_new(s, "total", json_u64(in->total));
		for (unsigned t = 0; t < NR_TYPE_SLOTS; t++) {
			if (!in->by_type[t])
				continue;
			char nb[16];
			const char *n = type_name(type_of_slot(t), nb, sizeof(nb));
			json_object_set_new(bt, n, json_u64(in->by_type[t]));
		}
		json_object_set_new(s, "by_type", bt);
		for (size_t i = 0; i < pd_reader_nr_evsels(in->r); i++) {
			char nb[128];
			uint64_t n = i < in->nr_samples_slots ? in->samples[i] : 0;
			json_object_set_new(be, evsel_name(pd_reader_evsel(in->r, i), nb, sizeof(nb)),
					    json_u64(n));
		}
		json_object_set_new(s, "samples_by_event", be);
		json_object_set_new(s, "lost_events", json_u64(in->lost_events));
		json_object_set_new(s, "lost_samples", json_u64(in->lost_samples));
		json_object_set_new(s, "unattributed_samples", json_u64(in->unattributed_samples));
		json_object_set_new(s, "malformed_records", json_u64(in->malformed));
		json_object_set_new(s, "aux_payload_bytes", json_u64(in->payload_bytes));
		json_object_set_new(root, "stats", s);
	}
	json_object_set_new(root, "partial", json_boolean(in->stop.code != 0 || in->malformed));
	if (in->stop.code) {
		json_t *e = json_object();
		json_object_set_new(e, "offset", json_u64(in->stop.offset));
		json_object_set_new(e, "message", json_string(in->stop.msg));
		json_object_set_new(root, "stopped", e);
	}
	return root;
}

/* ------------------------------------------------------------- objects */

static const char *match_text(enum rb_symdir_match how)
{
	switch (how) {
	case RB_SYMDIR_BUILD_ID: return "build-id matches";
	case RB_SYMDIR_NAME: return "no build-id recorded: matched by name";
	case RB_SYMDIR_MISMATCH: return "build-id differs: not used";
	case RB_SYMDIR_UNREADABLE: return "unreadable: not used";
	default: return "not found";
	}
}

static void hex_id(const uint8_t *id, int n, char *out)
{
	for (int i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * (n > 0 ? n : 0)] = 0;
}

struct objects_out { FILE *o; json_t *arr; };

static void object_out(void *ctx, const struct rb_session_object *ob)
{
	struct objects_out *out = ctx;
	char want[41], got[41];
	hex_id(ob->dso->build_id, ob->dso->build_id_size, want);
	hex_id(ob->hit.id, ob->hit.id_size, got);
	int refused = ob->how == RB_SYMDIR_MISMATCH || ob->how == RB_SYMDIR_UNREADABLE;
	/* symbols the recording carries for it (simpleperf's), which name it where no file does */
	size_t recorded = rb_symtab_count(ob->dso->recorded ? ob->dso->recorded : ob->dso->syms_recorded ? ob->dso->syms : NULL);
	if (out->arr) {
		json_t *e = json_object();
		json_object_set_new(e, "name", json_string(ob->dso->long_name));
		json_object_set_new(e, "build_id", ob->dso->build_id_size ? json_string(want) : json_null());
		json_object_set_new(e, "found", ob->where && !refused ? json_string(ob->where) : json_null());
		if (refused)
			json_object_set_new(e, "refused", json_string(ob->where));
		if (ob->how == RB_SYMDIR_MISMATCH)
			json_object_set_new(e, "file_build_id", ob->hit.id_size ? json_string(got) : json_null());
		json_object_set_new(e, "build_id_match", ob->how == RB_SYMDIR_BUILD_ID ? json_true()
				    : ob->how == RB_SYMDIR_MISMATCH ? json_false() : json_null());
		json_object_set_new(e, "status", json_string(match_text(ob->how)));
		if (recorded)
			json_object_set_new(e, "recorded_symbols", json_u64(recorded));
		json_array_append_new(out->arr, e);
		return;
	}
	fprintf(out->o, "# object %s : build-id %s : ", ob->dso->long_name, ob->dso->build_id_size ? want : "(none)");
	if (!ob->where && recorded)
		fprintf(out->o, "not found : %zu symbols recorded\n", recorded);
	else if (!ob->where)
		fprintf(out->o, "not found\n");
	else if (ob->how == RB_SYMDIR_MISMATCH)
		fprintf(out->o, "%s has build-id %s: build-id differs, not used\n", ob->where, ob->hit.id_size ? got : "(none)");
	else
		fprintf(out->o, "%s : %s\n", ob->where, match_text(ob->how));
}

/* The objects of the recording at @path and where their files are (rb_session_objects), to @out. */
static int list_objects(const char *path, const struct rb_session_opts *sel, struct objects_out *out,
			unsigned *warnings)
{
	struct rb_session_opts so = *sel;
	struct pd_error err;
	so.path = path;
	so.warn = cli_warn_cb;
	so.warn_ctx = warnings;
	int rc = rb_session_objects(&so, object_out, out, &err);
	if (rc < 0)
		cli_error("%s", err.msg);
	return rc < 0 ? cli_status_of(rc) : 0;
}

/* The header and record counts of @path (as `info`, text or @json) to @o: an exit status. */
static int info_run(const char *path, int json, int header, int stats, const struct rb_session_opts *sel, FILE *o)
{
	struct rb_session_opts nosel = { 0 };
	struct info in = { .path = path };
	struct pd_reader_opts ro;
	struct pd_error err;
	struct rb_unpacked un = { 0 };
	char msg[512];
	int ar = rb_archive_detect(in.path);
	if (ar < 0) {
		cli_error("%s: out of memory", in.path);
		return EXIT_INTERNAL;
	}
	if (ar) {
		int urc = rb_archive_unpack(in.path, NULL, &un, msg, sizeof(msg));
		if (urc < 0) {
			cli_error("%s", msg);
			return urc == -ENOMEM ? EXIT_INTERNAL : EXIT_BADINPUT;
		}
		in.path = un.perf_data;
	}
	if (!sel)
		sel = &nosel;
	struct rb_session_opts osel = *sel;
	if (un.buildid_dir && !osel.machine.buildid_dir)   /* the archive's .build-id tree, as export reads it */
		osel.machine.buildid_dir = un.buildid_dir;
	/* pipe mode cannot be read twice: its objects are not listed */
	int objects = header && strcmp(in.path, "-") != 0;
	pd_reader_opts_init(&ro);
	ro.warn = cli_warn_cb;
	ro.warn_ctx = &in.warnings;
	int rc = pd_reader_open(&in.r, in.path, &ro, &err);
	if (rc < 0) {
		cli_error("%s", err.msg);
		rb_archive_cleanup(&un);
		return cli_status_of(rc);
	}
	int status = EXIT_OK;
	/* pipe mode: the header lives in the stream, so read it all first either way */
	if (stats || pd_reader_info(in.r)->pipe_mode)
		status = scan(&in);
	if (status == EXIT_INTERNAL)    /* scan's only unsaid failure: a count it could not keep */
		cli_error("%s: out of memory", in.path);
	struct pd_features f;
	if (status == EXIT_OK && pd_features_parse(in.r, &f, &err) < 0) {
		cli_error("%s", err.msg);
		status = EXIT_INTERNAL;
	}
	if (status == EXIT_OK) {
		if (json) {
			json_t *root = json_report(&in, &f, header, stats);
			struct objects_out out = { o, json_array() };
			if (objects) {
				int ost = list_objects(in.path, &osel, &out, &in.warnings);
				status = ost ? ost : status;
				json_object_set_new(root, "objects", out.arr);
			} else {
				json_decref(out.arr);
			}
			if (!root || json_dumpf(root, o, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0) {
				/* jansson says -1 for a failed write and a failed allocation alike */
				cli_error("%s", root && ferror(o) ? "writing the JSON report failed"
								  : "out of memory writing the JSON report");
				status = EXIT_INTERNAL;
			}
			fputc('\n', o);
			json_decref(root);
		} else {
			if (header)
				print_header(&in, &f, o);
			struct objects_out out = { o, NULL };
			if (objects) {
				int ost = list_objects(in.path, &osel, &out, &in.warnings);
				status = ost ? ost : status;
			}
			if (stats)
				print_stats(&in, o);
		}
		pd_features_free(&f);
		if (in.stop.code || in.malformed)
			status = EXIT_PARTIAL;
	}
	for (size_t i = 0; i < in.nr_auxinfo; i++)
		free(in.auxinfo[i].data);
	free(in.auxinfo);
	free(in.samples);
	free(in.lost_per_evsel);
	pd_read_tracker_free(in.reads);
	pd_reader_free(in.r);
	rb_archive_cleanup(&un);
	return status;
}

int cli_info_text(const char *path, FILE *o)
{
	return info_run(path, 0, 1, 1, NULL, o);
}

int cmd_info(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "header-only", no_argument, NULL, 'H' },
		{ "stats", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ "symfs", required_argument, NULL, 'S' },    /* 's' is --stats here */
		CLI_OPT_SYMDIR,
		{ "vmlinux", required_argument, NULL, 'V' }, { "kcore", required_argument, NULL, 'K' },
		{ NULL, 0, NULL, 0 },
	};
	int json = 0, header = 1, stats = 1, c;
	struct rb_session_opts sel;
	memset(&sel, 0, sizeof(sel));
	optind = 1;
	while ((c = getopt_long(argc, argv, "jHsh", longopts, NULL)) != -1) {
		switch (c) {
		case 'S': case 'Y': case 'V': case 'K':
			if (cli_session_option(c == 'S' ? 's' : c, optarg, &sel) < 0)
				return EXIT_USAGE;
			break;
		case 'j': json = 1; break;
		case 'H': stats = 0; header = 1; break;
		case 's': header = 0; stats = 1; break;
		default: return cli_usage("info", c);
		}
	}
	const char *path = cli_operand(argc, argv, "info");
	if (!path)
		return EXIT_USAGE;
	int status = info_run(path, json, header, stats, &sel, stdout);
	if (fflush(stdout) != 0) {
		cli_error("writing the report failed");
		status = EXIT_INTERNAL;
	}
	return status;
}
