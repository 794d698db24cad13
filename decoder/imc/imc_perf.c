/*
 * imc_perf.c - see imc_perf.h. Evsels are classified once, by walking the
 * PMU_MAPPINGS payload (u32 nr; per PMU: u32 type, string name). Trace
 * samples wait in a per-CPU batch until a sample of that CPU with another
 * time shows the batch is complete; STAT records wait for their STAT_ROUND.
 */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "imc_perf.h"

struct pending { uint64_t ip, period; int32_t pid, tid; int privilege, evsel; };

struct cpu_batch {
	uint64_t time;                /* flush time of the pending batch */
	uint64_t prev_flush;          /* previous batch's flush time, 0 if none */
	uint64_t switch_in;           /* newest switch-in time, 0 if none */
	uint64_t start;               /* the pending batch's window start, fixed by its first record */
	struct pending *v;
	size_t n, cap;
};

struct stat_pending { uint64_t val, ena, run; uint32_t cpu, thread; int evsel; };

struct rb_imc_perf {
	struct pd_reader *r;
	struct rb_imc_out out;
	signed char *kind;            /* per evsel: -1 not looked up yet, else enum rb_imc_kind */
	const char **pmu;             /* per evsel, NULL if unnamed */
	size_t nr;
	struct cpu_batch *cpus;       /* by CPU number; index nr_cpus-1 holds samples without a CPU */
	size_t nr_cpus;
	struct stat_pending *stats;   /* STAT records waiting for their STAT_ROUND */
	size_t nr_stats, cap_stats;
	uint32_t *cpu_map;            /* CPU_MAP: map index -> CPU */
	size_t nr_cpu_map;
};

enum rb_imc_kind rb_imc_pmu_kind(const char *pmu)
{
	if (!pmu)
		return RB_IMC_NONE;
	if (!strcmp(pmu, "trace_imc"))
		return RB_IMC_TRACE;
	if (!strcmp(pmu, "thread_imc"))
		return RB_IMC_THREAD;
	if (!strcmp(pmu, "core_imc"))
		return RB_IMC_CORE;
	if (!strncmp(pmu, "nest_", 5))
		return RB_IMC_NEST;
	return RB_IMC_NONE;
}

struct rb_imc_perf *rb_imc_perf_new(struct pd_reader *r, const struct rb_imc_out *out)
{
	struct rb_imc_perf *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->r = r;
	p->out = *out;
	return p;
}

/* The name PMU_MAPPINGS gives attr type @type, pointing into the feature payload. */
static const char *pmu_name(struct pd_reader *r, uint32_t type)
{
	const uint8_t *d;
	size_t size;
	if (!pd_reader_feature(r, PD_FEAT_PMU_MAPPINGS, &d, &size, NULL) || size < 4)
		return NULL;
	uint32_t nr, t, len;
	memcpy(&nr, d, 4);
	size_t pos = 4;
	for (uint32_t i = 0; i < nr && pos + 8 <= size; i++) {
		memcpy(&t, d + pos, 4);
		memcpy(&len, d + pos + 4, 4);
		pos += 8;
		if (len == 0 || len > size - pos)
			return NULL;
		const char *name = (const char *)d + pos;
		if (t == type && memchr(name, 0, len))
			return name;
		pos += len;
	}
	return NULL;
}

static int classify(struct rb_imc_perf *p, int evsel)
{
	if (evsel < 0)
		return -1;
	if ((size_t)evsel >= p->nr) {
		size_t n = (size_t)evsel + 16;
		signed char *k = realloc(p->kind, n);
		if (!k)
			return -1;
		p->kind = k;
		const char **pm = realloc(p->pmu, n * sizeof(*pm));
		if (!pm)
			return -1;
		p->pmu = pm;
		memset(p->kind + p->nr, -1, n - p->nr);
		memset(p->pmu + p->nr, 0, (n - p->nr) * sizeof(*pm));
		p->nr = n;
	}
	if (p->kind[evsel] < 0 && (size_t)evsel < pd_reader_nr_evsels(p->r)) {
		p->pmu[evsel] = pmu_name(p->r, pd_reader_evsel(p->r, (size_t)evsel)->attr.type);
		p->kind[evsel] = (signed char)rb_imc_pmu_kind(p->pmu[evsel]);
	}
	return 0;
}

enum rb_imc_kind rb_imc_perf_kind(struct rb_imc_perf *p, int evsel)
{
	if (classify(p, evsel) < 0 || p->kind[evsel] < 0)
		return RB_IMC_NONE;
	return (enum rb_imc_kind)p->kind[evsel];
}

const char *rb_imc_perf_pmu(struct rb_imc_perf *p, int evsel)
{
	return rb_imc_perf_kind(p, evsel) == RB_IMC_NONE ? NULL : p->pmu[evsel];
}

static struct cpu_batch *batch_of(struct rb_imc_perf *p, int32_t cpu)
{
	size_t i = cpu >= 0 && cpu < 65536 ? (size_t)cpu + 1 : 0;   /* slot 0: no CPU */
	if (i >= p->nr_cpus) {
		size_t n = i + 16;
		struct cpu_batch *v = realloc(p->cpus, n * sizeof(*v));
		if (!v)
			return NULL;
		memset(v + p->nr_cpus, 0, (n - p->nr_cpus) * sizeof(*v));
		p->cpus = v;
		p->nr_cpus = n;
	}
	return &p->cpus[i];
}

/* Evsel @evsel as the outputs name it. */
static struct rb_event_ref event_ref(const struct rb_imc_perf *p, int evsel)
{
	const struct pd_evsel *es = evsel >= 0 ? pd_reader_evsel(p->r, (size_t)evsel) : NULL;
	struct rb_event_ref e = { .index = evsel };
	if (es) {
		e.name = es->name;
		e.type = es->attr.type;
		e.config = es->attr.config;
	}
	return e;
}

/* Emit the pending batch of @b (CPU @cpu) with estimated times. */
static int emit_batch(struct rb_imc_perf *p, struct cpu_batch *b, int32_t cpu)
{
	int rc = 0;
	uint64_t start = b->start;
	for (size_t i = 0; i < b->n && !rc; i++) {
		const struct pending *e = &b->v[i];
		struct rb_imc_rec_ev ev = { .flush_time = b->time, .estimated = 1, .cpu = cpu, .pid = e->pid,
					    .tid = e->tid, .ip = e->ip, .period = e->period,
					    .privilege = e->privilege, .event = event_ref(p, e->evsel),
					    .batch_index = (uint32_t)i, .batch_size = (uint32_t)b->n };
		if (start && start < b->time) {
			unsigned __int128 span = b->time - start;
			ev.time = start + (uint64_t)(span * (i + 1) / b->n);
		} else {
			ev.time = b->time;
		}
		rc = p->out.record ? p->out.record(p->out.ctx, &ev) : 0;
	}
	if (b->n)
		b->prev_flush = b->time;
	b->n = 0;
	return rc;
}

static int privilege_of(uint16_t misc)
{
	switch (misc & PD_MISC_CPUMODE_MASK) {
	case PD_MISC_GUEST_KERNEL: return 0;
	case PD_MISC_GUEST_USER: return 1;
	case PD_MISC_KERNEL: return 2;
	case PD_MISC_USER: return 3;
	}
	return -1;
}

static int emit_counter(struct rb_imc_perf *p, int evsel, uint64_t time, int32_t cpu, int32_t tid,
			const char *source, uint64_t value, uint64_t ena, uint64_t run)
{
	if (rb_imc_perf_kind(p, evsel) == RB_IMC_NONE || !p->out.counter)
		return 0;
	struct rb_imc_counter_ev c = { .time = time, .cpu = cpu, .tid = tid, .event = event_ref(p, evsel), .pmu = p->pmu[evsel],
				       .source = source, .value = value, .enabled = ena, .running = run };
	return p->out.counter(p->out.ctx, &c);
}

/* READ values (a sample's or a READ record's): one counter value per entry, group members by id. */
static int emit_read(struct rb_imc_perf *p, int evsel, const struct pd_read *rd, uint64_t time, int32_t cpu,
		     int32_t tid, const char *source)
{
	int rc = 0;
	for (uint64_t i = 0; i < rd->nr && !rc; i++) {
		struct pd_read_value v;
		pd_read_value_at(rd, i, &v);
		int es = evsel;
		if ((rd->read_format & PD_FORMAT_ID) && (es = pd_reader_evsel_of_id(p->r, v.id)) < 0)
			es = (rd->read_format & PD_FORMAT_GROUP) ? -1 : evsel;
		if (es >= 0)
			rc = emit_counter(p, es, time, cpu, tid, source, v.value, rd->time_enabled, rd->time_running);
	}
	return rc;
}

int rb_imc_perf_sample(struct rb_imc_perf *p, int evsel, const struct pd_sample *s, uint16_t misc)
{
	enum rb_imc_kind k = rb_imc_perf_kind(p, evsel);
	int32_t cpu = (s->type & PD_SAMPLE_CPU) ? (int32_t)s->cpu : -1;
	int32_t tid = (s->type & PD_SAMPLE_TID) ? (int32_t)s->tid : -1;
	if ((s->type & PD_SAMPLE_READ) && s->read.nr) {
		int rc = emit_read(p, evsel, &s->read, s->time, cpu, tid, "sample");
		if (rc)
			return rc;
	}
	if (k != RB_IMC_TRACE)
		return 0;
	struct cpu_batch *b = batch_of(p, cpu);
	if (!b)
		return -ENOMEM;
	if (b->n && b->time != s->time) {
		int rc = emit_batch(p, b, cpu);
		if (rc)
			return rc;
	}
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 256;
		struct pending *v = realloc(b->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		b->v = v;
		b->cap = cap;
	}
	const struct pd_evsel *es = pd_reader_evsel(p->r, (size_t)evsel);
	if (!b->n) {
		/* trace_imc runs only while its task is on the CPU: the window opens at the later of
		   the previous flush and the last switch-in */
		b->start = b->prev_flush;
		if (b->switch_in > b->start && b->switch_in <= s->time)
			b->start = b->switch_in;
	}
	b->time = s->time;
	b->v[b->n++] = (struct pending){ .ip = s->ip,
		.period = (s->type & PD_SAMPLE_PERIOD) ? s->period : es->attr.sample_period,
		.pid = (s->type & PD_SAMPLE_TID) ? (int32_t)s->pid : -1, .tid = tid,
		.privilege = privilege_of(misc), .evsel = evsel };
	return 0;
}

void rb_imc_perf_switch(struct rb_imc_perf *p, int32_t cpu, uint64_t time, int in)
{
	struct cpu_batch *b = in ? batch_of(p, cpu) : NULL;
	if (b && time > b->switch_in)
		b->switch_in = time;
}

static void add_cpu(void *ctx, unsigned cpu)
{
	struct rb_imc_perf *p = ctx;
	uint32_t *v = realloc(p->cpu_map, (p->nr_cpu_map + 1) * sizeof(*v));
	if (!v)
		return;
	p->cpu_map = v;
	p->cpu_map[p->nr_cpu_map++] = cpu;
}

/*
 * STAT's cpu: perf 6.1 writes the CPU itself; older perf wrote its index in
 * the CPU_MAP. A value the map holds is a CPU; else a value below the map's
 * size is an index.
 */
static int32_t stat_cpu(const struct rb_imc_perf *p, uint32_t v)
{
	if (v == UINT32_MAX)
		return -1;
	for (size_t i = 0; i < p->nr_cpu_map; i++)
		if (p->cpu_map[i] == v)
			return (int32_t)v;
	return v < p->nr_cpu_map ? (int32_t)p->cpu_map[v] : (int32_t)v;
}

int rb_imc_perf_record(struct rb_imc_perf *p, const struct pd_event *ev, int evsel)
{
	switch (ev->type) {
	case PD_RECORD_READ:
		return emit_read(p, evsel, &ev->u.read.values, ev->sid.time,
				 (ev->sid.present & PD_SAMPLE_CPU) ? (int32_t)ev->sid.cpu : -1,
				 (int32_t)ev->u.read.tid, "read");
	case PD_RECORD_CPU_MAP:
		p->nr_cpu_map = 0;
		pd_cpu_map_each(ev, add_cpu, p);
		return 0;
	case PD_RECORD_STAT: {
		int es = pd_reader_evsel_of_id(p->r, ev->u.stat.id);
		if (es < 0 || rb_imc_perf_kind(p, es) == RB_IMC_NONE)
			return 0;
		if (p->nr_stats == p->cap_stats) {
			size_t cap = p->cap_stats ? 2 * p->cap_stats : 64;
			struct stat_pending *v = realloc(p->stats, cap * sizeof(*v));
			if (!v)
				return -ENOMEM;
			p->stats = v;
			p->cap_stats = cap;
		}
		p->stats[p->nr_stats++] = (struct stat_pending){ ev->u.stat.val, ev->u.stat.ena, ev->u.stat.run,
								 ev->u.stat.cpu, ev->u.stat.thread, es };
		return 0;
	}
	case PD_RECORD_STAT_ROUND: {
		int rc = 0;
		for (size_t i = 0; i < p->nr_stats && !rc; i++) {
			const struct stat_pending *sp = &p->stats[i];
			int32_t cpu = stat_cpu(p, sp->cpu);
			rc = emit_counter(p, sp->evsel, ev->u.stat_round.time, cpu, -1, "stat", sp->val, sp->ena,
					  sp->run);
		}
		p->nr_stats = 0;
		return rc;
	}
	}
	return 0;
}

int rb_imc_perf_finish(struct rb_imc_perf *p)
{
	if (!p)
		return 0;
	int rc = 0;
	for (size_t i = 0; !rc && i < p->nr_cpus; i++)
		if (p->cpus[i].n) {
			rc = emit_batch(p, &p->cpus[i], i ? (int32_t)(i - 1) : -1);
			p->cpus[i].n = 0;
		}
	return rc;
}

void rb_imc_perf_free(struct rb_imc_perf *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nr_cpus; i++)
		free(p->cpus[i].v);
	free(p->cpus);
	free(p->kind);
	free(p->pmu);
	free(p->stats);
	free(p->cpu_map);
	free(p);
}
