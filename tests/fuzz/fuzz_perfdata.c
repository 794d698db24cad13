/*
 * fuzz_perfdata.c - libFuzzer target for the perf.data format library
 * (perfdata/): the input is a perf.data file or pipe-mode stream. It is
 * opened from memory (a memfd: file mode, seekable) or, for a pipe-mode
 * stream of at most 1 MiB, through a real pipe (the streaming path), with
 * the smallest read buffer the reader allows, so that records straddle refills.
 * Then: every feature (parsed, checked, byte-swapped both ways), every
 * record (parsed; every length the parser returns is touched byte by byte
 * so that ASan sees a bad one; AUXTRACE payloads read), and for a record
 * that parsed, the byte-order swap to foreign and back must give the same
 * bytes (an oracle, not only a crash hunt).
 */
#include "config.h"
#include <fcntl.h>
#include "pd.h"
#include "fuzz.h"

static volatile uint64_t sink;

static void touch(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t s = 0;
	for (size_t i = 0; p && i < n; i++)
		s += b[i];
	sink += s;
}

static void touch_str(const char *s)
{
	if (s)
		touch(s, strlen(s) + 1);
}

static void warn_cb(void *ctx, const struct pd_error *w)
{
	(void)ctx;
	touch_str(w->msg);
}

static void kv_cb(void *ctx, const char *key, uint64_t value, const char *str)
{
	(void)ctx;
	touch_str(key);
	touch_str(str);
	sink += value;
}

static void cpu_cb(void *ctx, unsigned cpu)
{
	(void)ctx;
	sink += cpu;
}

static void build_id_cb(void *ctx, uint16_t misc, int32_t pid, const uint8_t *id, unsigned id_size,
			const char *name)
{
	(void)ctx;
	sink += misc + (uint64_t)pid;
	touch(id, id_size > 24 ? 24 : id_size);   /* the entry holds 24; a larger size is damage (pd.h) */
	touch_str(name);
}

/* simpleperf's symbol tables: every field and symbol of each entry the walker passes */
static void sp_symbol_cb(void *ctx, const struct pd_sp_symbol *s)
{
	(void)ctx;
	sink += s->vaddr + s->len;
	touch(s->name, s->name_len);
}

static void sp_file_cb(void *ctx, const struct pd_sp_file *f)
{
	(void)ctx;
	touch_str(f->path);
	sink += f->type + f->min_vaddr + f->offset_of_min_vaddr + f->nr_symbols + f->nr_dex_offsets;
	pd_sp_file_symbols(f, sp_symbol_cb, NULL);
}

static void touch_list(const struct pd_feature_string_list *l)
{
	for (uint32_t i = 0; i < l->nr; i++)
		touch_str(l->str[i]);
}

static void features(struct pd_reader *r)
{
	struct pd_features f;
	struct pd_error err;
	const struct pd_file_info *fi = pd_reader_info(r);
	if (pd_features_parse(r, &f, &err) == 0) {
		touch_str(f.hostname), touch_str(f.osrelease), touch_str(f.version), touch_str(f.arch);
		touch_str(f.cpudesc), touch_str(f.cpuid);
		touch_list(&f.cmdline), touch_list(&f.core_siblings), touch_list(&f.thread_siblings);
		touch_list(&f.cpu_pmu_caps), touch_list(&f.hybrid_topology);
		for (uint32_t i = 0; i < f.nr_pmu_mappings; i++)
			touch_str(f.pmu_names[i]), sink += f.pmu_types[i];
		touch(f.auxtrace_index, f.nr_auxtrace_index * 16);
		for (uint32_t i = 0; i < f.nr_numa_nodes; i++)
			touch_str(f.numa[i].cpus);
		for (uint32_t i = 0; i < f.nr_caches; i++)
			touch_str(f.caches[i].type), touch_str(f.caches[i].size), touch_str(f.caches[i].map);
		for (uint32_t i = 0; f.groups && i < f.nr_groups; i++)
			touch_str(f.groups[i].name);
		for (uint32_t i = 0; i < f.nr_pmu_caps; i++)
			touch_str(f.pmu_caps[i].pmu), touch_list(&f.pmu_caps[i].caps);
		touch_str(pd_features_pmu_name(&f, 8));
		pd_features_free(&f);
	}
	uint32_t nr_cpus = 0;
	const uint8_t *d;
	size_t n;
	uint64_t off;
	if (pd_reader_feature(r, PD_FEAT_NRCPUS, &d, &n, &off) == 1 && n >= 4)
		memcpy(&nr_cpus, d, 4);
	for (unsigned feat = 0; feat < PD_FEAT_BITS; feat++) {
		if (pd_reader_feature(r, feat, &d, &n, &off) != 1)
			continue;
		touch(d, n);
		if (feat == PD_FEAT_BUILD_ID)
			pd_build_id_each(d, n, build_id_cb, NULL);
		if (feat == PD_FEAT_SP_FILE || feat == PD_FEAT_SP_FILE2)
			pd_sp_file_each(feat, d, n, off, sp_file_cb, NULL, &err);
		if (pd_feature_check(feat, d, n, nr_cpus, &err) < 0 || n > (1u << 20))
			continue;
		/* native -> foreign -> native must be the identity on a payload that checks */
		uint8_t *copy = malloc(n ? n : 1);
		if (!copy)
			continue;
		memcpy(copy, d, n);
		if (pd_swap_feature(feat, copy, n, 0, nr_cpus, &err) == 0 &&
		    pd_swap_feature(feat, copy, n, 1, nr_cpus, &err) == 0 && memcmp(copy, d, n)) {
			fprintf(stderr, "feature %u (%s): swap to foreign and back changed the payload\n", feat,
				pd_feature_name(feat) ? pd_feature_name(feat) : "?");
			abort();
		}
		free(copy);
	}
	(void)fi;
}

static void sample(const struct pd_sample *s)
{
	touch(s->callchain, s->callchain_nr * 8);
	touch(s->raw, s->raw_size);
	touch(s->branches, s->branch_nr * 24);
	touch(s->branch_counters, s->branch_counters ? s->branch_nr * 8 : 0);
	touch(s->regs_user.regs, s->regs_user.nr * 8);
	touch(s->regs_intr.regs, s->regs_intr.nr * 8);
	touch(s->stack, s->stack_size);
	touch(s->aux, s->aux_size);
	for (uint64_t i = 0; s->read.values && i < s->read.nr; i++) {
		struct pd_read_value v;
		pd_read_value_at(&s->read, i, &v);
		sink += v.value + v.id + v.lost;
	}
}

static void event(const struct pd_reader *r, const struct pd_record *rec, const struct pd_event *ev)
{
	const struct pd_file_info *fi = pd_reader_info(r);
	switch (ev->type) {
	case PD_RECORD_SAMPLE: sample(&ev->u.sample); break;
	case PD_RECORD_MMAP: touch_str(ev->u.mmap.filename); break;
	case PD_RECORD_MMAP2:
		touch_str(ev->u.mmap2.filename);
		touch(ev->u.mmap2.build_id, ev->u.mmap2.build_id ? ev->u.mmap2.build_id_size : 0);
		break;
	case PD_RECORD_COMM: touch_str(ev->u.comm.comm); break;
	case PD_RECORD_READ:
		for (uint64_t i = 0; ev->u.read.values.values && i < ev->u.read.values.nr; i++) {
			struct pd_read_value v;
			pd_read_value_at(&ev->u.read.values, i, &v);
			sink += v.value;
		}
		break;
	case PD_RECORD_NAMESPACES: touch(ev->u.namespaces.link_info, ev->u.namespaces.nr * 16); break;
	case PD_RECORD_KSYMBOL: touch_str(ev->u.ksymbol.name); break;
	case PD_RECORD_CGROUP: touch_str(ev->u.cgroup.path); break;
	case PD_RECORD_TEXT_POKE:
		touch(ev->u.text_poke.bytes, (size_t)ev->u.text_poke.old_len + ev->u.text_poke.new_len);
		break;
	case PD_RECORD_HEADER_ATTR:
		touch(ev->u.header_attr.attr, ev->u.header_attr.attr_size);
		touch(ev->u.header_attr.ids, ev->u.header_attr.nr_ids * 8);
		break;
	case PD_RECORD_HEADER_EVENT_TYPE: touch_str(ev->u.event_type.name); break;
	case PD_RECORD_HEADER_BUILD_ID:
		touch(ev->u.build_id.build_id, ev->u.build_id.size);
		touch_str(ev->u.build_id.filename);
		break;
	case PD_RECORD_ID_INDEX:
		for (uint64_t i = 0; i < ev->u.id_index.nr; i++) {
			struct pd_id_index_entry e;
			pd_id_index_entry_at(ev, i, &e);
			sink += e.id + e.idx + e.cpu + e.tid;
		}
		break;
	case PD_RECORD_AUXTRACE_INFO:
		touch(ev->u.auxtrace_info.priv, ev->u.auxtrace_info.nr_priv * 8);
		touch_str(pd_auxtrace_info_describe(ev, fi->swapped, kv_cb, NULL));
		break;
	case PD_RECORD_AUXTRACE_ERROR: touch_str(ev->u.auxtrace_error.msg); break;
	case PD_RECORD_THREAD_MAP: touch(ev->u.thread_map.entries, ev->u.thread_map.nr * 24); break;
	case PD_RECORD_CPU_MAP: pd_cpu_map_each(ev, cpu_cb, NULL); break;
	case PD_RECORD_STAT_CONFIG: touch(ev->u.stat_config.pairs, ev->u.stat_config.nr * 16); break;
	case PD_RECORD_EVENT_UPDATE: touch(ev->u.event_update.data, ev->u.event_update.size); break;
	case PD_RECORD_HEADER_FEATURE: touch(ev->u.feature.data, ev->u.feature.size); break;
	case PD_RECORD_COMPRESSED: case PD_RECORD_COMPRESSED2:
		touch(ev->u.compressed.data, ev->u.compressed.size);
		break;
	}
	(void)rec;
}

/* A record that parsed: swapping it to the foreign order and back gives the same bytes. */
static void swap_roundtrip(const struct pd_reader *r, const struct pd_record *rec)
{
	if (rec->type == PD_RECORD_HEADER_FEATURE || rec->type == PD_RECORD_COMPRESSED ||
	    rec->type == PD_RECORD_COMPRESSED2)
		return;          /* payload conversion needs context the record does not carry */
	const struct pd_evsel *es = rec->evsel >= 0 ? pd_reader_evsel(r, (size_t)rec->evsel) : NULL;
	uint8_t *copy = malloc(rec->size);
	if (!copy)
		return;
	memcpy(copy, rec->data, rec->size);
	struct pd_error err;
	if (pd_swap_record(copy, rec->size, es, 0, &err) == 0 &&
	    pd_swap_record(copy, rec->size, es, 1, &err) == 0 && memcmp(copy, rec->data, rec->size)) {
		fprintf(stderr, "record %s at offset %llu: swap to foreign and back changed it\n",
			pd_record_name(rec->type) ? pd_record_name(rec->type) : "?",
			(unsigned long long)rec->offset);
		abort();
	}
	free(copy);
}

/* Feed a pipe-mode stream through a real pipe; returns the read end or -1. */
static int pipe_of(const uint8_t *data, size_t size)
{
	int p[2];
	if (size > (1u << 20) || pipe2(p, O_CLOEXEC) < 0)
		return -1;
	if (fcntl(p[1], F_SETPIPE_SZ, (int)(size < 4096 ? 4096 : size)) < (int)size) {
		close(p[0]), close(p[1]);
		return -1;
	}
	size_t done = 0;
	while (done < size) {
		ssize_t n = write(p[1], data + done, size - done);
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	close(p[1]);
	return p[0];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = -1;
	if (size >= 16) {
		uint64_t hs;
		memcpy(&hs, data + 8, 8);
		if (hs == 16 || hs == __builtin_bswap64(16))
			fd = pipe_of(data, size);
	}
	if (fd < 0)
		fd = fuzz_memfd(data, size);
	if (fd < 0)
		return 0;
	struct pd_reader_opts o;
	pd_reader_opts_init(&o);
	o.warn = warn_cb;
	o.buf_size = 1;      /* the reader's minimum (64 KiB): refilled often, and fast to allocate */
	struct pd_reader *r;
	struct pd_error err;
	if (pd_reader_open_fd(&r, fd, "fuzz.data", 1, &o, &err) < 0) {
		touch_str(err.msg);
		return 0;
	}
	for (size_t i = 0; i < pd_reader_nr_evsels(r); i++) {
		const struct pd_evsel *es = pd_reader_evsel(r, i);
		touch(es->ids, es->nr_ids * 8);
		touch_str(es->name);
		if (es->nr_ids)
			sink += (uint64_t)pd_reader_evsel_of_id(r, es->ids[0]);
	}
	features(r);
	struct pd_record rec;
	static uint8_t payload[4096];
	for (unsigned n = 0; n < 100000; n++) {
		int rc = pd_reader_next(r, &rec, &err);
		if (rc <= 0) {
			touch_str(err.msg);
			break;
		}
		touch(rec.data, rec.size);
		struct pd_event ev;
		if (pd_event_parse(r, &rec, &ev, &err) == 0) {
			event(r, &rec, &ev);
			swap_roundtrip(r, &rec);
		} else {
			touch_str(err.msg);
		}
		if (rec.payload_size && (n & 1))
			sink += (uint64_t)pd_reader_read_payload(r, payload, sizeof(payload), &err);
		sink += pd_reader_position(r);
	}
	features(r);     /* pipe mode: the features arrived as records */
	pd_reader_free(r);
	return 0;
}
