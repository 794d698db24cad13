/*
 * session.c - see session.h. One pass: kernel records that carry a time are
 * queued and released in time order at each FINISHED_ROUND (perf's
 * ordered_events); records without one, and user records, are handled as
 * they come. Each released record updates the machine (COMM, FORK, EXIT,
 * MMAP, MMAP2) or becomes an event for the sink (SAMPLE, SWITCH, LOST).
 * IMC PMUs' samples and counter values go through imc_perf.h; every loss
 * becomes one rb_gap_ev (the loss model: doc/schema.md).
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "spool.h"
#include "decoder/source.h"
#include "decoder/ftrace/tracedat.h"
#include "ordered.h"
#include "session.h"
#include "sym_simpleperf.h"
#include "unwind.h"

/* PERF_MEM_DATA_SRC_NONE: op, level, snoop, lock and TLB all "not available" */
#define PERF_MEM_DATA_SRC_NONE 0x5080021ULL

#define CONTEXT_MAX ((uint64_t)-4095)
#define CONTEXT_HV ((uint64_t)-32)
#define CONTEXT_KERNEL ((uint64_t)-128)
#define CONTEXT_USER ((uint64_t)-512)
#define CONTEXT_GUEST_KERNEL ((uint64_t)-2176)
#define CONTEXT_GUEST_USER ((uint64_t)-2560)

#define MAX_STACK 127    /* perf's PERF_MAX_STACK_DEPTH: entries kept, counted from the root */
#define INLINES_MAX 16   /* functions inlined at one unwound frame that are shown */

struct sess {
	const struct rb_session_opts *o;
	const struct rb_sink *sink;
	struct rb_session_stats *st;
	struct pd_reader *r;
	struct rb_machine *m;
	struct rb_oq q;
	uint8_t cpu_mask[512];        /* CPU filter bitmap (4096 CPUs), all set if none */
	struct rb_cc_node *nodes;
	size_t cap_nodes;
	uint64_t *chain;              /* a call chain with the unwound user frames after the kernel's */
	size_t cap_chain;
	struct rb_unwind *uw;         /* --call-graph dwarf: made at the first sample with a user stack */
	int uw_tried;
	char uw_why[160];             /* why the first unwinding that stopped short stopped */
	size_t uw_first, uw_n;        /* the unwound frames in s->chain, and the functions inlined at each */
	const char *inl_names[MAX_STACK][INLINES_MAX];
	uint8_t inl_n[MAX_STACK];
	struct pd_read_tracker *reads;  /* counters of PERF_SAMPLE_READ samples (made at the first) */
	struct auxq *auxq;            /* per AUX queue, by mmap index */
	size_t nr_auxq;
	uint64_t aux_time[4096];      /* newest AUX record time per CPU, in file order */
	uint8_t aux_overwrite[512];   /* CPUs whose AUX records say overwrite (snapshot) mode, in file order */
	uint64_t cpu_time[4096];      /* newest record time per CPU, in time order (start of a loss) */
	struct rb_source *src[8];     /* the trace sources open, by kind (sources.c); NULL: none of that kind */
	int want_chunks;              /* a source takes AUXTRACE chunks */
	struct rb_source_env env;     /* what they see */
	struct pd_error *err;         /* the caller's, for a failure that stops the session */
	struct rb_event_desc *synth;  /* the events the sources synthesize, in the order they declared them */
	size_t nr_synth;
	int events_sent;              /* the sink has had the event list */
	uint8_t *tracing_data;        /* a pipe-mode TRACING_DATA record's payload, for the sink's event list */
	size_t tracing_size;
	struct rb_tracepoints *tp;    /* read from it (or the feature) when the event list is sent */
};

/* A source declares an event it synthesizes: kept (name copied) for the event list. */
static int src_synth_event(void *ctx, const struct rb_event_desc *d)
{
	struct sess *s = ctx;
	struct rb_event_desc *v = realloc(s->synth, (s->nr_synth + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	s->synth = v;
	v[s->nr_synth] = *d;
	v[s->nr_synth].synth = 1;
	if (d->name && !(v[s->nr_synth].name = strdup(d->name)))
		return -ENOMEM;
	s->nr_synth++;
	return 0;
}

static void src_warn(void *ctx, const char *msg);

/* A pipe-mode TRACING_DATA record: its payload kept for the event list (the first only, as perf). */
static int keep_tracing_data(struct sess *s, const struct pd_record *rec)
{
	if (s->tracing_data || rec->payload_size > (64u << 20))
		return 0;
	if (!(s->tracing_data = malloc((size_t)rec->payload_size)))
		return -ENOMEM;
	struct pd_error err;
	int64_t n = pd_reader_read_payload(s->r, s->tracing_data, (size_t)rec->payload_size, &err);
	s->tracing_size = n > 0 ? (size_t)n : 0;
	return 0;
}

/*
 * The event list, to a sink that wants it, before the first event that
 * names one (samples, trace events, switches): the recorded events known
 * by then, then the synthesized ones.
 */
static int send_events(struct sess *s)
{
	if (s->events_sent || !s->sink->events)
		return 0;
	s->events_sent = 1;
	size_t nr = pd_reader_nr_evsels(s->r);
	struct rb_event_desc *v = calloc(nr + s->nr_synth + 1, sizeof(*v));
	char *names = malloc(nr * 128 + 1);
	if (!v || !names) {
		free(v);
		free(names);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nr; i++) {
		const struct pd_evsel *es = pd_reader_evsel(s->r, i);
		pd_evsel_perf_name(es, names + 128 * i, 128);     /* as perf script names it */
		v[i] = (struct rb_event_desc){ .name = names + 128 * i, .type = es->attr.type, .config = es->attr.config,
					       .sample_type = es->attr.sample_type,
					       .sample_period = pd_attr_flag(&es->attr, PD_ATTR_FREQ) ? 0
							       : es->attr.sample_period };
	}
	if (s->nr_synth)
		memcpy(v + nr, s->synth, s->nr_synth * sizeof(*v));
	const struct pd_file_info *fi = pd_reader_info(s->r);
	const uint8_t *td = s->tracing_data;
	size_t tdsize = s->tracing_size;
	int has_tp = 0;
	for (size_t i = 0; i < nr; i++)
		has_tp |= v[i].type == PD_TYPE_TRACEPOINT;
	if (has_tp && (td || pd_reader_feature(s->r, PD_FEAT_TRACING_DATA, &td, &tdsize, NULL))) {
		char msg[256];
		int trc = rb_tracepoints_open(&s->tp, td, tdsize, msg, sizeof(msg));
		if (trc == -ENOMEM) {
			free(v);
			free(names);
			return -ENOMEM;
		}
		if (trc)
			src_warn(s, msg);   /* tracepoints' fields are then left out */
	}
	struct rb_evlist el = { .ev = v, .n = nr + s->nr_synth, .nr_recorded = nr, .tp = s->tp,
				.auxtrace = !!(fi->features[PD_FEAT_AUXTRACE / 64] >> (PD_FEAT_AUXTRACE % 64) & 1),
				.stat = !!(fi->features[PD_FEAT_STAT / 64] >> (PD_FEAT_STAT % 64) & 1) };
	int rc = s->sink->events(s->sink->ctx, &el);
	free(v);
	free(names);
	return rc;
}

static int parse_cpus(struct sess *s, const char *list)
{
	memset(s->cpu_mask, list ? 0 : 0xff, sizeof(s->cpu_mask));
	while (list && *list) {
		char *end;
		long a = strtol(list, &end, 10), b = a;
		if (end == list || a < 0 || a >= 4096)
			return -EINVAL;
		if (*end == '-') {
			list = end + 1;
			b = strtol(list, &end, 10);
			if (end == list || b < a || b >= 4096)
				return -EINVAL;
		}
		for (long c = a; c <= b; c++)
			s->cpu_mask[c / 8] |= (uint8_t)(1u << (c % 8));
		list = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return -EINVAL;
	}
	return 0;
}

static int cpu_selected(const struct sess *s, uint32_t cpu, int has_cpu)
{
	if (!has_cpu || cpu >= 4096)
		return s->o->cpus == NULL;
	return s->cpu_mask[cpu / 8] >> (cpu % 8) & 1;
}

/* Whether @time is in --time's window (all times when none was given). */
static int in_window(const struct sess *s, uint64_t time)
{
	return !(s->o->time_start || s->o->time_end) ||
	       (time >= s->o->time_start && (!s->o->time_end || time <= s->o->time_end));
}


/*
 * Call chain, root first, walked as perf's thread__resolve_callchain does in
 * caller order: from the last entry (the root) towards the first, each
 * entry's cpumode set by the nearest context marker before it in the chain,
 * at most MAX_STACK entries; an unknown marker drops the chain (the lookups
 * made before it stand, as in perf). Lookups happen in that order because a
 * DSO's lookup cache makes the order part of the answer.
 */
static int resolve_callchain(struct sess *s, struct rb_thread *t, const uint8_t *chain, uint64_t n, size_t *nr,
			     int unwound)
{
	*nr = 0;
	uint64_t cap = n + (unwound ? (uint64_t)s->uw_n * INLINES_MAX : 0);
	if (cap > s->cap_nodes) {
		struct rb_cc_node *v = realloc(s->nodes, (size_t)cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->nodes = v;
		s->cap_nodes = (size_t)cap;
	}
	size_t k = 0;
	for (uint64_t j = n; j-- > 0 && k < MAX_STACK;) {
		uint64_t ip = pd_u64_at(chain, j);
		int frame = unwound && j >= s->uw_first;   /* an unwound frame, never a marker: perf's -1 is one */
		if (ip >= CONTEXT_MAX && !frame) {
			if (ip != CONTEXT_KERNEL && ip != CONTEXT_USER && ip != CONTEXT_HV &&
			    ip != CONTEXT_GUEST_KERNEL && ip != CONTEXT_GUEST_USER)
				return 0;       /* corrupt chain: perf discards it */
			continue;
		}
		unsigned cpumode = 2;   /* user, unless a marker before it says otherwise */
		for (uint64_t b = j; b-- > 0;) {
			uint64_t mk = pd_u64_at(chain, b);
			if (mk >= CONTEXT_MAX) {
				cpumode = mk == CONTEXT_KERNEL ? 1 : mk == CONTEXT_USER ? 2 : mk == CONTEXT_HV ? 3 :
					  mk == CONTEXT_GUEST_KERNEL ? 4 : mk == CONTEXT_GUEST_USER ? 5 : 2;
				break;
			}
		}
		s->nodes[k].ip = ip;
		s->nodes[k].inlined = 0;
		rb_machine_resolve_chain(s->m, t, cpumode, ip, &s->nodes[k].al);
		/*
		 * an unwound frame with functions inlined there: perf's entries
		 * for it instead (append_inlines), outermost first here (root first)
		 */
		size_t f = frame ? (size_t)(j - s->uw_first) : SIZE_MAX;
		if (f < s->uw_n && s->inl_n[f] && s->nodes[k].al.sym && s->nodes[k].al.map) {
			struct rb_cc_node base = s->nodes[k];
			for (size_t i = s->inl_n[f]; i-- > 0;) {
				const struct rb_sym *sym = rb_machine_inline_sym(s->m, base.al.dso, base.al.sym,
										 s->inl_names[f][i]);
				if (!sym)
					return -ENOMEM;
				s->nodes[k] = base;
				s->nodes[k].al.sym = sym;
				s->nodes[k].inlined = sym != base.al.sym;
				k++;
			}
			continue;
		}
		k++;
	}
	*nr = k;
	return 0;
}

/*
 * A sample with the user registers and stack (--call-graph dwarf): the
 * kernel's chain, then the user frames unwound from them (unwind.h), as perf
 * puts them together (callee order). Returns the chain's length in
 * s->chain (0: nothing to unwind, use the recorded chain), or -ENOMEM.
 */
static int64_t unwound_chain(struct sess *s, struct rb_thread *t, const struct pd_sample *ps)
{
	if (!(ps->type & PD_SAMPLE_REGS_USER) || !(ps->type & PD_SAMPLE_STACK_USER) || !ps->regs_user.nr)
		return 0;
	if (!s->uw_tried) {
		s->uw_tried = 1;
		struct pd_features f;
		struct pd_error e;
		pd_error_clear(&e);
		int have = pd_features_parse(s->r, &f, &e) == 0;
		int nomem;
		s->uw = rb_unwind_new(have ? f.arch : NULL, &nomem);
		if (have)
			pd_features_free(&f);
		if (nomem)
			return -ENOMEM;
	}
	if (!s->uw)
		return 0;
	size_t need = (size_t)ps->callchain_nr + 1 + MAX_STACK;
	if (need > s->cap_chain) {
		uint64_t *v = realloc(s->chain, need * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->chain = v;
		s->cap_chain = need;
	}
	size_t n = 0;
	for (uint64_t i = 0; i < ps->callchain_nr; i++) {
		uint64_t ip = pd_u64_at(ps->callchain, i);
		if (ip == CONTEXT_USER)
			break;          /* a user part the kernel walked: the unwinder's replaces it */
		s->chain[n++] = ip;
	}
	s->chain[n++] = CONTEXT_USER;
	const char *why;
	int u = rb_unwind_user(s->uw, s->m, t, ps, s->chain + n, MAX_STACK, &why);
	if (u < 0)
		return u;
	if (!u)
		return 0;
	s->uw_first = n;
	s->uw_n = (size_t)u;
	for (int f = 0; f < u; f++)
		s->inl_n[f] = (uint8_t)rb_unwind_inlines(s->uw, s->chain[n + (size_t)f], s->inl_names[f], INLINES_MAX);
	s->st->unwound_samples++;
	if (why && !s->st->unwind_stopped++)
		snprintf(s->uw_why, sizeof(s->uw_why), "%s", why);
	return (int64_t)n + u;
}

/* A sample: to the sink if it is in the --time / -C selection (*@selected says whether it was). */
static int on_sample(struct sess *s, const struct pd_record *rec, const struct pd_event *ev, int *selected)
{
	const struct pd_sample *ps = &ev->u.sample;
	s->st->samples++;
	*selected = 0;
	if (!in_window(s, ps->time)) {
		s->st->samples_out_of_window++;
		return 0;
	}
	if (!cpu_selected(s, ps->cpu, !!(ps->type & PD_SAMPLE_CPU)))
		return 0;
	*selected = 1;
	int32_t pid = (ps->type & PD_SAMPLE_TID) ? (int32_t)ps->pid : -1;
	int32_t tid = (ps->type & PD_SAMPLE_TID) ? (int32_t)ps->tid : -1;
	const struct pd_evsel *es = pd_reader_evsel(s->r, (size_t)rec->evsel);
	struct rb_sample_ev se = {
		.event = { rec->evsel, es->name, es->attr.type, es->attr.config },
		.ip = ps->ip, .time = ps->time, .has_time = !!(ps->type & PD_SAMPLE_TIME),
		.has_cpu = !!(ps->type & PD_SAMPLE_CPU), .cpu = ps->cpu,
		.period = (ps->type & PD_SAMPLE_PERIOD) ? ps->period : es->attr.sample_period,
		.weight = ps->weight, .transaction = ps->transaction,
		.data_src = (ps->type & PD_SAMPLE_DATA_SRC) ? ps->data_src : PERF_MEM_DATA_SRC_NONE,
		.addr = (ps->type & PD_SAMPLE_ADDR) ? ps->addr : 0,
		.raw = (ps->type & PD_SAMPLE_RAW) ? ps->raw : NULL, .raw_size = (ps->type & PD_SAMPLE_RAW) ? ps->raw_size : 0,
	};
	se.thread = rb_machine_thread(s->m, pid, tid, 1);
	if (!se.thread)
		return -ENOMEM;
	se.main_thread = rb_machine_main_thread(s->m, se.thread);
	se.comm = rb_machine_sample_comm(s->m, se.thread);
	rb_machine_resolve(s->m, se.thread, rec->misc & PD_MISC_CPUMODE_MASK, ps->ip, &se.al);
	/* perf's exporter names a symbol-less sample address before it walks the chain */
	if (s->o->perf_export)
		se.al.sym = rb_machine_export_sym(s->m, &se.al, se.al.addr);
	int64_t un = unwound_chain(s, se.thread, ps);
	if (un < 0)
		return (int)un;
	if (un || ps->callchain_nr) {
		int rc = un ? resolve_callchain(s, se.thread, (const uint8_t *)s->chain, (uint64_t)un, &se.nr_nodes, 1)
			    : resolve_callchain(s, se.thread, ps->callchain, ps->callchain_nr, &se.nr_nodes, 0);
		if (rc)
			return rc;
		se.nodes = s->nodes;
		/* then, root to leaf, the chain entries without a symbol, at their raw ip */
		for (size_t i = 0; s->o->perf_export && i < se.nr_nodes; i++)
			s->nodes[i].al.sym = rb_machine_export_sym(s->m, &s->nodes[i].al, s->nodes[i].ip);
	}
	if (!s->sink->sample)
		return 0;
	int rc = send_events(s);
	return rc ? rc : s->sink->sample(s->sink->ctx, &se);
}

static int on_switch(struct sess *s, const struct pd_record *rec, const struct pd_event *ev)
{
	struct rb_switch_ev sw = { .time = ev->sid.time, .cpu = -1, .pid = -1, .tid = -1, .evsel = rec->evsel,
				   .has_time = !!(ev->sid.present & PD_SAMPLE_TIME),
				   .cpu_wide = ev->type == PD_RECORD_SWITCH_CPU_WIDE,
				   .np_pid = (int32_t)ev->u.context_switch.next_prev_pid,
				   .np_tid = (int32_t)ev->u.context_switch.next_prev_tid };
	if (ev->sid.present & PD_SAMPLE_TID) {
		sw.pid = (int32_t)ev->sid.pid;
		sw.tid = (int32_t)ev->sid.tid;
	}
	if (ev->sid.present & PD_SAMPLE_CPU)
		sw.cpu = (int32_t)ev->sid.cpu;
	if (!cpu_selected(s, ev->sid.cpu, !!(ev->sid.present & PD_SAMPLE_CPU)))
		return 0;
	sw.out = !!(ev->misc & PD_MISC_SWITCH_OUT);
	sw.preempt = sw.out && (ev->misc & PD_MISC_SWITCH_OUT_PREEMPT);
	if (ev->sid.present & PD_SAMPLE_TID)
		sw.a = rb_machine_thread(s->m, (int32_t)ev->sid.pid, (int32_t)ev->sid.tid, 0);
	if (ev->type == PD_RECORD_SWITCH_CPU_WIDE)
		sw.b = rb_machine_thread(s->m, (int32_t)ev->u.context_switch.next_prev_pid,
					 (int32_t)ev->u.context_switch.next_prev_tid, 0);
	s->st->switches++;
	if (!s->sink->context_switch)
		return 0;
	int rc = send_events(s);
	return rc ? rc : s->sink->context_switch(s->sink->ctx, &sw);
}

static int emit_gap(struct sess *s, const struct rb_gap_ev *g)
{
	s->st->gaps++;
	if (g->no_binary)
		s->st->trace_bytes_no_binary += g->bytes_lost;
	return s->sink->gap ? s->sink->gap(s->sink->ctx, g) : 0;
}

static int on_loss(struct sess *s, const struct pd_record *rec, const struct pd_event *ev)
{
	struct rb_gap_ev g = { .time_start = ev->sid.time, .time_end = ev->sid.time, .cpu = -1, .pid = -1,
			       .tid = -1, .source = "kernel", .file_offset = rec->offset, .detail = "" };
	if (ev->sid.present & PD_SAMPLE_CPU)
		g.cpu = (int32_t)ev->sid.cpu;
	/* what was lost came after the previous record of that CPU's ring */
	if (ev->type != PD_RECORD_AUX && g.cpu >= 0 && g.cpu < 4096 && s->cpu_time[g.cpu] &&
	    s->cpu_time[g.cpu] < g.time_end)
		g.time_start = s->cpu_time[g.cpu];
	if (ev->type != PD_RECORD_AUX && g.cpu >= 0 && g.cpu < 4096 && g.time_end > s->cpu_time[g.cpu])
		s->cpu_time[g.cpu] = g.time_end;
	if (ev->sid.present & PD_SAMPLE_TID) {
		g.pid = (int32_t)ev->sid.pid;
		g.tid = (int32_t)ev->sid.tid;
	}
	if (ev->type == PD_RECORD_LOST) {
		g.reason = "kernel lost records";
		g.records_lost = ev->u.lost.lost;
	} else if (ev->type == PD_RECORD_LOST_SAMPLES) {
		g.reason = "kernel lost samples";
		g.records_lost = ev->u.lost_samples.lost;
	} else {
		uint64_t f = ev->u.aux.flags;
		if (!(f & (PD_AUX_FLAG_TRUNCATED | PD_AUX_FLAG_PARTIAL | PD_AUX_FLAG_COLLISION)))
			return 0;
		/* a decoder that owns the data reports the truncation itself, with when the trace resumed */
		for (size_t k = 0; (f & PD_AUX_FLAG_TRUNCATED) && k < rb_nr_source_kinds; k++)
			if (s->src[k] && s->src[k]->ops->owns_aux && s->src[k]->ops->owns_aux(s->src[k], g.cpu, g.tid))
				return 0;
		g.source = "aux";
		g.reason = (f & PD_AUX_FLAG_TRUNCATED) ? "aux truncated" :
			   (f & PD_AUX_FLAG_COLLISION) ? "aux collision" : "aux partial";
		g.bytes_lost = ev->u.aux.aux_size;
	}
	return emit_gap(s, &g);
}

/* ---- the trace sources (source.h): records in, events out ---- */

/* Whether an event the trace decoders synthesize falls in --time and -C, as samples must. */
static int trace_selected(const struct sess *s, uint64_t time, int32_t cpu)
{
	return in_window(s, time) && cpu_selected(s, (uint32_t)cpu, cpu >= 0);
}

/* Events a source resolved itself (Intel PT) reach the sink through here, for the same selection. */
static int src_trace(void *ctx, const struct rb_trace_ev *ev)
{
	struct sess *s = ctx;
	if (!trace_selected(s, ev->time, ev->cpu))
		return 0;
	int rc = send_events(s);
	return rc ? rc : s->sink->trace(s->sink->ctx, ev);
}

/* A branch in addresses (CoreSight): resolved here into the trace event every source's branches are. */
static int src_branch(void *ctx, const struct rb_branch_ev *b)
{
	struct sess *s = ctx;
	if (!trace_selected(s, b->time, b->cpu))
		return 0;
	if (b->evsel < 0 || !pd_reader_evsel(s->r, (size_t)b->evsel))
		return 0;
	struct rb_trace_ev te = { .kind = RB_EV_BRANCH, .time = b->time, .cpu = b->cpu, .source = "cs_etm",
				  .mods = b->mods, .from = b->ip, .to = b->addr, .flags = b->flags, .sample_style = 1 };
	te.thread = rb_machine_thread(s->m, b->pid, b->tid, 1);
	if (!te.thread)
		return -ENOMEM;
	te.main_thread = rb_machine_main_thread(s->m, te.thread);
	te.comm = rb_machine_sample_comm(s->m, te.thread);
	rb_machine_resolve_ip(s->m, te.thread, b->ip, &te.from_al);
	rb_machine_resolve_ip(s->m, te.thread, b->addr, &te.to_al);
	if (s->o->perf_export)
		te.from_al.sym = rb_machine_export_sym(s->m, &te.from_al, te.from_al.addr);
	s->st->branches++;
	if (!s->sink->trace)
		return 0;
	int rc = send_events(s);
	return rc ? rc : s->sink->trace(s->sink->ctx, &te);
}

static int src_range(void *ctx, const struct rb_range_ev *ev)
{
	struct sess *s = ctx;
	return s->sink->range ? s->sink->range(s->sink->ctx, ev) : 0;
}

static int src_gap(void *ctx, const struct rb_gap_ev *g) { return emit_gap(ctx, g); }

static void src_warn(void *ctx, const char *msg)
{
	struct sess *s = ctx;
	struct pd_error w;
	pd_error_clear(&w);
	snprintf(w.msg, sizeof(w.msg), "%s", msg);
	if (s->o->warn)
		s->o->warn(s->o->warn_ctx, &w);
}

static void src_element(void *ctx, const char *line)
{
	struct sess *s = ctx;
	s->o->aux_element(s->o->aux_element_ctx, line);
}

/* ftrace events, through the same selection as samples. */
static int src_ftrace_event(void *ctx, const struct rb_ftrace_ev *ev)
{
	struct sess *s = ctx;
	if (!trace_selected(s, ev->time, ev->cpu))
		return 0;
	return s->sink->ftrace_event(s->sink->ctx, ev);
}

/* The trace index: every entry, whatever --time and -C select (a window is reached through it). */
static int src_sync_point(void *ctx, const struct rb_sync_ev *ev)
{
	const struct rb_sink *k = ((struct sess *)ctx)->sink;
	return k->sync_point(k->ctx, ev);
}

/* Where decoding can start: every one, as the trace index. */
static int src_seek_point(void *ctx, const struct rb_seek_ev *ev)
{
	const struct rb_sink *k = ((struct sess *)ctx)->sink;
	return k->seek_point(k->ctx, ev);
}

static int src_imc_record(void *ctx, const struct rb_imc_rec_ev *ev)
{
	const struct rb_sink *k = ((struct sess *)ctx)->sink;
	return k->imc_record ? k->imc_record(k->ctx, ev) : 0;
}

static int src_imc_counter(void *ctx, const struct rb_imc_counter_ev *ev)
{
	const struct rb_sink *k = ((struct sess *)ctx)->sink;
	return k->imc_counter ? k->imc_counter(k->ctx, ev) : 0;
}

/* What every source sees: the recording, the machine, the options and the callbacks above. */
static void setup_env(struct sess *s, const char *name)
{
	const struct rb_session_opts *o = s->o;
	struct rb_source_env *v = &s->env;
	v->r = s->r;
	v->m = s->m;
	v->path = o->path;
	v->name = name;
	v->pipe_mode = pd_reader_info(s->r)->pipe_mode;
	v->symfs = o->machine.symfs;
	v->buildid_dir = o->machine.buildid_dir;
	v->no_aux_decode = o->no_aux_decode;
	v->no_branches = o->no_branches || o->quick;
	v->no_symbols = o->no_symbols;
	v->quick = o->quick;
	v->insn_period = o->insn_period;
	v->jobs = o->jobs;
	v->ptwrites = o->ptwrites;
	v->pwr_events = o->pwr_events;
	v->perf_export = o->perf_export;
	v->ftrace_path = o->ftrace;
	v->ftrace_stats = o->ftrace_stats;
	v->ftrace_msg = o->ftrace_msg;
	v->ftrace_msglen = o->ftrace_msglen;
	v->ftrace_event = s->sink->ftrace_event ? src_ftrace_event : NULL;
	v->sync_point = s->sink->sync_point ? src_sync_point : NULL;
	v->seek_point = s->sink->seek_point ? src_seek_point : NULL;
	v->seek = o->seek;
	v->nr_seek = o->nr_seek;
	v->st = s->st;
	v->sess = s;
	v->branch = src_branch;
	v->trace = s->sink->trace ? src_trace : NULL;
	v->range = src_range;
	v->gap = src_gap;
	v->imc_record = src_imc_record;
	v->imc_counter = src_imc_counter;
	v->warn = src_warn;
	v->pd_warn = o->warn;
	v->pd_warn_ctx = o->warn_ctx;
	v->element = o->aux_element ? src_element : NULL;
	v->synth_event = src_synth_event;
}

/*
 * Open the sources of kind @k (with @rec, @info the AUXTRACE_INFO record that
 * names it, or NULL at the start). A source that cannot use the recording
 * is a "decoder error" gap; other failures stop the session (s->err says why).
 */
static int open_source(struct sess *s, size_t k, const struct pd_record *rec, const struct pd_event *info)
{
	struct pd_error e;
	pd_error_clear(&e);
	int rc = rb_source_kinds[k].open(&s->src[k], &s->env, info, &e);
	if (rc == RB_SOURCE_UNUSABLE) {
		struct rb_gap_ev g = { .cpu = -1, .pid = -1, .tid = -1, .source = rb_source_kinds[k].name,
				       .reason = "decoder error", .file_offset = rec ? rec->offset : 0, .detail = e.msg };
		return emit_gap(s, &g);
	}
	if (rc == -ENOMEM || (rc == PD_ERR_NOMEM && !e.msg[0]))
		return -ENOMEM;         /* said as "out of memory" where the session returns */
	if (rc < 0 && s->err)
		*s->err = e;
	if (!rc && s->src[k] && s->src[k]->ops->chunk)
		s->want_chunks = 1;
	return rc;
}

/* AUXTRACE_INFO: the source of its kind, if one is registered and none is open yet. */
static int on_auxtrace_info(struct sess *s, const struct pd_record *rec)
{
	struct pd_event ev;
	if (pd_event_parse(s->r, rec, &ev, NULL) < 0)
		return 0;
	for (size_t k = 0; k < rb_nr_source_kinds; k++)
		if (rb_source_kinds[k].auxtrace_type == (int)ev.u.auxtrace_info.type && !s->src[k])
			return open_source(s, k, rec, &ev);
	return 0;
}

static void on_time_conv(struct sess *s, const struct pd_record *rec)
{
	struct pd_event ev;
	if (pd_event_parse(s->r, rec, &ev, NULL) < 0)
		return;
	s->env.has_time_conv = 1;
	s->env.time_shift = ev.u.time_conv.time_shift;
	s->env.time_mult = ev.u.time_conv.time_mult;
	s->env.time_zero = ev.u.time_conv.time_zero;
	s->env.time_cycles = ev.u.time_conv.has_cycles ? ev.u.time_conv.time_cycles : 0;
	s->env.time_mask = ev.u.time_conv.has_cycles ? ev.u.time_conv.time_mask : 0;
	s->env.cap_user_time_short = ev.u.time_conv.has_cycles && ev.u.time_conv.cap_user_time_short;
}

/* Every source that takes AUXTRACE chunks is given @a. */
static int give_chunk(struct sess *s, const struct rb_aux_ev *a, const uint8_t *bytes)
{
	for (size_t k = 0; k < rb_nr_source_kinds; k++)
		if (s->src[k] && s->src[k]->ops->chunk) {
			int rc = s->src[k]->ops->chunk(s->src[k], a, bytes);
			if (rc)
				return rc;
		}
	return 0;
}

/* An AUXTRACE chunk for the sources: in pipe mode its bytes now (they cannot be read again). */
static int aux_chunk(struct sess *s, const struct pd_record *rec, const struct rb_aux_ev *a)
{
	if (!s->env.pipe_mode)
		return give_chunk(s, a, NULL);
	uint8_t *buf = malloc(a->size ? a->size : 1);
	if (!buf)
		return -ENOMEM;
	struct pd_error err;
	int64_t n = pd_reader_read_payload(s->r, buf, a->size, &err);
	int rc = 0;
	if (n < 0 || (uint64_t)n != a->size) {
		struct rb_gap_ev g = { .cpu = a->cpu, .pid = -1, .tid = a->tid, .source = "aux",
				       .reason = "aux data missing", .bytes_lost = a->size, .file_offset = rec->offset,
				       .detail = "the AUXTRACE payload could not be read from the stream" };
		rc = emit_gap(s, &g);
	} else {
		rc = give_chunk(s, a, buf);
	}
	free(buf);
	return rc;
}

/* Per-queue continuity of the AUX chunks: a jump forward is data overwritten or lost. */
struct auxq { uint64_t start, next; uint32_t nr; int seen; };

static struct auxq *aux_queue(struct sess *s, uint32_t idx)
{
	if (idx >= s->nr_auxq) {
		size_t n = (size_t)idx + 16;
		struct auxq *v = realloc(s->auxq, n * sizeof(*v));
		if (!v)
			return NULL;
		memset(v + s->nr_auxq, 0, (n - s->nr_auxq) * sizeof(*v));
		s->auxq = v;
		s->nr_auxq = n;
	}
	return &s->auxq[idx];
}

/* Whether a source reports the holes and overlaps of AUX queue @idx itself. */
static int source_has_queue(const struct sess *s, uint32_t idx)
{
	for (size_t k = 0; k < rb_nr_source_kinds; k++)
		if (s->src[k] && s->src[k]->ops->has_queue && s->src[k]->ops->has_queue(s->src[k], idx))
			return 1;
	return 0;
}

static int on_auxtrace(struct sess *s, const struct pd_record *rec)
{
	struct pd_event ev;
	if (pd_event_parse(s->r, rec, &ev, NULL) < 0)
		return 0;
	struct auxq *q = ev.u.auxtrace.idx < 65536 ? aux_queue(s, ev.u.auxtrace.idx) : NULL;
	if (!q)
		return ev.u.auxtrace.idx < 65536 ? -ENOMEM : 0;
	struct rb_aux_ev a = { .queue = ev.u.auxtrace.idx, .cpu = (int32_t)ev.u.auxtrace.cpu,
			       .tid = (int32_t)ev.u.auxtrace.tid, .aux_offset = ev.u.auxtrace.offset,
			       .size = ev.u.auxtrace.size, .reference = ev.u.auxtrace.reference,
			       .file_offset = rec->payload_offset, .snapshot_nr = q->nr++ };
	int rc = 0;
	/*
	 * perf pads each payload to 8 bytes and starts the next chunk where the
	 * data ended, so a chunk may begin up to 7 bytes before the previous
	 * one's end: that is padding, not an overlap.
	 */
	if (q->seen && a.aux_offset < q->next && q->next - a.aux_offset < 8 && a.aux_offset >= q->start)
		q->next = a.aux_offset;
	/* a decoded queue's holes and overlaps are reported by its decoder, with their times */
	if (q->seen && a.aux_offset != q->next && !source_has_queue(s, a.queue)) {
		char detail[160];
		struct rb_gap_ev g = { .cpu = a.cpu, .pid = -1, .tid = a.tid, .source = "aux",
				       .file_offset = rec->offset, .detail = detail };
		/* no time of its own: the newest AUX record of that CPU read so far */
		g.time_start = g.time_end = a.cpu >= 0 && (size_t)a.cpu < 4096 ? s->aux_time[a.cpu] : 0;
		if (a.aux_offset > q->next) {
			/* in snapshot mode the ring overwrote what was not captured */
			g.reason = a.cpu >= 0 && a.cpu < 4096 && (s->aux_overwrite[a.cpu / 8] >> (a.cpu % 8) & 1) ?
				   "snapshot overwrite" : "aux hole";
			g.bytes_lost = a.aux_offset - q->next;
			snprintf(detail, sizeof(detail), "queue %u: chunk %u starts at %#" PRIx64 ", %" PRIu64
				 " bytes after the previous one ended", a.queue, a.snapshot_nr, a.aux_offset, g.bytes_lost);
		} else {
			g.reason = "aux overlap";
			snprintf(detail, sizeof(detail), "queue %u: chunk %u starts at %#" PRIx64 ", %" PRIu64
				 " bytes before the previous one ended (snapshot overlap, no data lost)",
				 a.queue, a.snapshot_nr, a.aux_offset, q->next - a.aux_offset);
		}
		rc = emit_gap(s, &g);
	}
	q->seen = 1;
	q->start = a.aux_offset;
	if (a.aux_offset + a.size > q->next || a.aux_offset > q->next)
		q->next = a.aux_offset + a.size;
	s->st->aux_buffers++;
	s->st->trace_bytes += a.size;
	if (!rc && s->sink->aux_buffer)
		rc = s->sink->aux_buffer(s->sink->ctx, &a);
	if (!rc && s->want_chunks)
		rc = aux_chunk(s, rec, &a);
	return rc;
}

static int on_auxtrace_error(struct sess *s, const struct pd_record *rec)
{
	struct pd_event ev;
	if (pd_event_parse(s->r, rec, &ev, NULL) < 0)
		return 0;
	struct rb_gap_ev g = { .time_start = ev.u.auxtrace_error.time, .time_end = ev.u.auxtrace_error.time,
			       .cpu = (int32_t)ev.u.auxtrace_error.cpu, .pid = (int32_t)ev.u.auxtrace_error.pid,
			       .tid = (int32_t)ev.u.auxtrace_error.tid, .source = "auxtrace_error",
			       .reason = ev.u.auxtrace_error.code == 7 ? "hardware overflow" :
					 ev.u.auxtrace_error.code == 8 ? "trace data lost" : "decoder error",
			       .file_offset = rec->offset, .detail = ev.u.auxtrace_error.msg };
	return emit_gap(s, &g);
}

static void note_cpu_time(struct sess *s, const struct pd_event *ev);

/*
 * What a record in time order tells beyond its usual handling: AUX /
 * ITRACE_START for the sink's coverage, and each CPU's newest time (losses
 * on that CPU start there; noted after the record's own loss is reported,
 * so a LOST record does not start at itself).
 */
static int track_record(struct sess *s, const struct pd_record *rec, const struct pd_event *ev)
{
	int rc = 0;
	if (rec->type != PD_RECORD_LOST && rec->type != PD_RECORD_LOST_SAMPLES)
		note_cpu_time(s, ev);       /* a loss notes its own end once reported (on_loss) */
	if ((rec->type == PD_RECORD_AUX || rec->type == PD_RECORD_ITRACE_START) && s->sink->aux_record &&
		 cpu_selected(s, ev->sid.cpu, !!(ev->sid.present & PD_SAMPLE_CPU))) {
		struct rb_aux_rec_ev a = { .time = ev->sid.time, .cpu = -1, .pid = -1, .tid = -1,
					   .itrace_start = rec->type == PD_RECORD_ITRACE_START };
		if (ev->sid.present & PD_SAMPLE_CPU)
			a.cpu = (int32_t)ev->sid.cpu;
		if (ev->sid.present & PD_SAMPLE_TID) {
			a.pid = (int32_t)ev->sid.pid;
			a.tid = (int32_t)ev->sid.tid;
		}
		if (!a.itrace_start) {
			a.aux_offset = ev->u.aux.aux_offset;
			a.aux_size = ev->u.aux.aux_size;
			a.flags = ev->u.aux.flags;
		}
		rc = s->sink->aux_record(s->sink->ctx, &a);
	}
	return rc;
}

/* One record, in time order. */
/* An MMAP or MMAP2 record (@type) into the machine's maps. */
static int apply_mmap(struct rb_machine *m, uint32_t type, const struct pd_event *ev, int kernel)
{
	if (type == PD_RECORD_MMAP)    /* executable unless it maps data, as perf takes it */
		return rb_machine_mmap(m, (int32_t)ev->u.mmap.pid, (int32_t)ev->u.mmap.tid,
				       kernel || (int32_t)ev->u.mmap.pid == -1, ev->u.mmap.start, ev->u.mmap.len,
				       ev->u.mmap.pgoff, ev->u.mmap.filename, NULL, 0,
				       (ev->misc & PD_MISC_MMAP_DATA) ? 0 : 4, 0);
	return rb_machine_mmap(m, (int32_t)ev->u.mmap2.pid, (int32_t)ev->u.mmap2.tid,
			       kernel || (int32_t)ev->u.mmap2.pid == -1, ev->u.mmap2.start, ev->u.mmap2.len,
			       ev->u.mmap2.pgoff, ev->u.mmap2.filename, ev->u.mmap2.build_id,
			       ev->u.mmap2.build_id ? ev->u.mmap2.build_id_size : 0, ev->u.mmap2.prot, ev->u.mmap2.flags);
}

/*
 * A sample that carries PERF_SAMPLE_READ is, as perf delivers it, a sample
 * per counter read (pd_read_deliveries): each of its counter's event, with
 * the counter's growth as period; the --add-counter events of simpleperf and
 * perf's {a,b}:S groups get their samples so.
 */
static int on_read_sample(struct sess *s, const struct pd_record *rec, const struct pd_event *ev, int *selected)
{
	const struct pd_read_delivery *d;
	if (!s->reads && !(s->reads = pd_read_tracker_new()))
		return -ENOMEM;
	int n = pd_read_deliveries(s->reads, s->r, &ev->u.sample, &d);
	if (n < 0)
		return -ENOMEM;
	*selected = 0;
	for (int k = 0; k < n; k++) {
		struct pd_record one = *rec;
		struct pd_event e = *ev;
		int sel = 0;
		one.evsel = d[k].evsel;
		e.u.sample.id = d[k].id;
		e.u.sample.period = d[k].period;
		e.u.sample.type |= PD_SAMPLE_PERIOD;
		int rc = on_sample(s, &one, &e, &sel);
		*selected |= sel;
		if (rc)
			return rc;
	}
	return 0;
}

static int process(struct sess *s, const struct pd_record *rec)
{
	struct pd_event ev;
	struct pd_error err;
	if (pd_event_parse(s->r, rec, &ev, &err) < 0) {
		s->st->malformed++;
		if (s->o->warn)
			s->o->warn(s->o->warn_ctx, &err);
		return 0;
	}
	int kernel = (rec->misc & PD_MISC_CPUMODE_MASK) == PD_MISC_KERNEL;
	int rc = track_record(s, rec, &ev);
	if (rc)
		return rc;
	int selected = 1;
	switch (rec->type) {
	case PD_RECORD_SAMPLE:
		rc = (ev.u.sample.type & PD_SAMPLE_READ) ? on_read_sample(s, rec, &ev, &selected) :
		     on_sample(s, rec, &ev, &selected);
		break;
	case PD_RECORD_COMM:
		rc = rb_machine_comm(s->m, (int32_t)ev.u.comm.pid, (int32_t)ev.u.comm.tid, ev.u.comm.comm,
				     !!(rec->misc & PD_MISC_COMM_EXEC), ev.sid.time);
		break;
	case PD_RECORD_FORK:
		/* perf dates the child's inherited comm with the record's sample time, not fork.time */
		rc = rb_machine_fork(s->m, (int32_t)ev.u.fork.ppid, (int32_t)ev.u.fork.ptid,
				     (int32_t)ev.u.fork.pid, (int32_t)ev.u.fork.tid,
				     (ev.sid.present & PD_SAMPLE_TIME) ? ev.sid.time : ev.u.fork.time);
		break;
	case PD_RECORD_EXIT:
		rc = rb_machine_exit(s->m, (int32_t)ev.u.fork.pid, (int32_t)ev.u.fork.tid);
		break;
	case PD_RECORD_MMAP:
	case PD_RECORD_MMAP2:
		rc = apply_mmap(s->m, rec->type, &ev, kernel);
		break;
	case PD_RECORD_SWITCH:
	case PD_RECORD_SWITCH_CPU_WIDE:
		rc = on_switch(s, rec, &ev);
		break;
	case PD_RECORD_LOST:
	case PD_RECORD_LOST_SAMPLES:
	case PD_RECORD_AUX:
		rc = on_loss(s, rec, &ev);
		break;
	}
	/* then the trace sources (their sideband; samples only in the selection) */
	for (size_t k = 0; !rc && selected && k < rb_nr_source_kinds; k++)
		if (s->src[k] && s->src[k]->ops->record)
			rc = s->src[k]->ops->record(s->src[k], rec, &ev);
	return rc;
}

/* The time of the record just handled on its CPU: where the next loss there starts. */
static void note_cpu_time(struct sess *s, const struct pd_event *ev)
{
	const struct pd_sample *ps = &ev->u.sample;
	if (ev->type == PD_RECORD_SAMPLE ? (ps->type & PD_SAMPLE_CPU) && (ps->type & PD_SAMPLE_TIME) && ps->cpu < 4096 :
	    (ev->sid.present & PD_SAMPLE_CPU) && (ev->sid.present & PD_SAMPLE_TIME) && ev->sid.cpu < 4096) {
		uint32_t cpu = ev->type == PD_RECORD_SAMPLE ? ps->cpu : ev->sid.cpu;
		uint64_t t = ev->type == PD_RECORD_SAMPLE ? ps->time : ev->sid.time;
		if (t > s->cpu_time[cpu])
			s->cpu_time[cpu] = t;
	}
}

static int deliver(void *ctx, const struct rb_oq_item *it)
{
	struct pd_record rec = { .offset = it->file_offset, .data = it->data, .size = (uint16_t)it->size,
				 .evsel = it->evsel };
	memcpy(&rec.type, it->data, 4);
	memcpy(&rec.misc, it->data + 4, 2);
	struct sess *s = ctx;
	/* the trace up to this record's time is decoded with the state before it */
	for (size_t k = 0; k < rb_nr_source_kinds; k++)
		if (s->src[k] && s->src[k]->ops->run_until) {
			int rc = s->src[k]->ops->run_until(s->src[k], it->time);
			if (rc)
				return rc;
		}
	return process(ctx, &rec);
}

static void set_build_id(void *ctx, uint16_t misc, int32_t pid, const uint8_t *id, unsigned size,
			 const char *name)
{
	struct sess *s = ctx;
	int kernel = (misc & PD_MISC_CPUMODE_MASK) == PD_MISC_KERNEL;
	(void)pid;
	rb_machine_set_build_id(s->m, name, id, size > 20 ? 20 : (int)size, kernel);
}

/*
 * What the features say of the objects: their build-ids, and the symbol
 * tables a simpleperf recording carries (used where no file has them). A
 * malformed table entry is said and counted; the tables before it are used.
 */
static int load_build_ids(struct sess *s)
{
	const uint8_t *d;
	size_t size;
	struct pd_error err;
	if (pd_reader_feature(s->r, PD_FEAT_BUILD_ID, &d, &size, NULL))
		pd_build_id_each(d, size, set_build_id, s);
	if (rb_sp_symbols_load(s->m, s->r, &err) < 0)
		return -ENOMEM;
	if (err.code) {
		if (s->st)
			s->st->malformed++;
		if (s->o->warn)
			s->o->warn(s->o->warn_ctx, &err);
	}
	return 0;
}

static void note_aux_time(struct sess *s, const struct pd_record *rec, uint64_t t)
{
	const struct pd_evsel *es = rec->evsel >= 0 ? pd_reader_evsel(s->r, (size_t)rec->evsel) : NULL;
	struct pd_sample_id sid;
	if (es && pd_sample_id_parse(es, rec->data, rec->size, &sid, NULL) == 0 &&
	    (sid.present & PD_SAMPLE_CPU) && sid.cpu < 4096) {
		s->aux_time[sid.cpu] = t;
		uint64_t flags;
		if (rec->size >= 32) {
			memcpy(&flags, rec->data + 24, 8);
			if (flags & PD_AUX_FLAG_OVERWRITE)
				s->aux_overwrite[sid.cpu / 8] |= (uint8_t)(1u << (sid.cpu % 8));
		}
	}
}

/* Pipe mode carries build-ids as records (perf writes them at the end). */
static void build_id_record(struct sess *s, const struct pd_record *rec)
{
	struct pd_event ev;
	if (pd_event_parse(s->r, rec, &ev, NULL) < 0)
		return;
	int kernel = (ev.misc & PD_MISC_CPUMODE_MASK) == PD_MISC_KERNEL;
	const char *name = ev.u.build_id.filename;
	rb_machine_set_build_id(s->m, name, ev.u.build_id.build_id, ev.u.build_id.size, kernel);
}

/* perf stat record's user records (counter values), in file order: for the sources. */
static int stat_record(struct sess *s, const struct pd_record *rec)
{
	struct pd_event ev;
	if (pd_event_parse(s->r, rec, &ev, NULL) < 0)
		return 0;
	for (size_t k = 0; k < rb_nr_source_kinds; k++)
		if (s->src[k] && s->src[k]->ops->record) {
			int rc = s->src[k]->ops->record(s->src[k], rec, &ev);
			if (rc)
				return rc;
		}
	return 0;
}

static int any_comm_exec(struct pd_reader *r)
{
	for (size_t i = 0; i < pd_reader_nr_evsels(r); i++)
		if (pd_attr_flag(&pd_reader_evsel(r, i)->attr, PD_ATTR_COMM_EXEC))
			return 1;
	return 0;
}

/*
 * A recording on standard input is read twice like any other (the Intel PT
 * stage gathers its AUX data first): it is copied to a spool file, and both
 * readers open that file by its /proc/self/fd name. Returns the spool's
 * descriptor, or a negative status with @err filled.
 */
static int spool_stdin(struct pd_error *err)
{
	static uint8_t buf[1 << 16];
	uint64_t size = 0;
	int fd = rb_spool_open();
	if (fd < 0) {
		pd_error_clear(err);
		err->code = PD_ERR_IO;
		snprintf(err->msg, sizeof(err->msg), "<stdin>: cannot make a spool file in %s to read it twice: %s "
			 "(set TMPDIR to a folder with room)", rb_spool_dir(), strerror(errno));
		return PD_ERR_IO;
	}
	for (;;) {
		ssize_t n = read(0, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			pd_error_clear(err);
			err->code = PD_ERR_IO;
			snprintf(err->msg, sizeof(err->msg), "<stdin>: read failed: %s", strerror(errno));
			close(fd);
			return PD_ERR_IO;
		}
		if (n == 0)
			return fd;
		int e = rb_spool_write(fd, buf, (size_t)n, size);
		if (e) {
			pd_error_clear(err);
			err->code = e == ENOSPC ? PD_ERR_NOSPC : PD_ERR_IO;
			snprintf(err->msg, sizeof(err->msg), "<stdin>: writing its spool file in %s: %s "
				 "(set TMPDIR to a folder with room)", rb_spool_dir(), strerror(e));
			close(fd);
			return err->code;
		}
		size += (uint64_t)n;
	}
}

static int session_run(const struct rb_session_opts *o, const struct rb_sink *sink,
		       struct rb_session_stats *stats, struct pd_error *err, int spool_fd);

/*
 * The session's own code and its decoders report a failed allocation as
 * -ENOMEM, which has the value of PD_ERR_NOATTR: here, where the session
 * hands its status to the caller, it becomes PD_ERR_NOMEM with a message.
 */
static int session_status(int rc, struct pd_error *err)
{
	if (rc != -ENOMEM)
		return rc;
	if (err) {
		pd_error_clear(err);
		err->code = PD_ERR_NOMEM;
		snprintf(err->msg, sizeof(err->msg), "out of memory while decoding");
	}
	return PD_ERR_NOMEM;
}

int rb_session_default_jobs(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	return cpus < 1 ? 1 : cpus > 8 ? 8 : (int)cpus;
}

int rb_session_run(const struct rb_session_opts *o, const struct rb_sink *sink,
		   struct rb_session_stats *stats, struct pd_error *err)
{
	if (strcmp(o->path, "-") || o->no_aux_decode)
		return session_status(session_run(o, sink, stats, err, -1), err);
	memset(stats, 0, sizeof(*stats));
	int fd = spool_stdin(err);
	if (fd < 0)
		return fd;
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	struct rb_session_opts o2 = *o;
	o2.path = path;
	int rc = session_run(&o2, sink, stats, err, fd);
	close(fd);
	return session_status(rc, err);
}

/*
 * The objects whose code a decoder needed and no file held: counted and
 * named in the stats, and said once, with the share of the trace they
 * left undecoded, so that no answer that misses code looks complete.
 */
static void note_missing_binaries(struct sess *s)
{
	struct rb_session_stats *st = s->st;
	size_t len = 0;
	for (size_t i = 0; i < rb_machine_nr_dsos(s->m); i++) {
		const struct rb_dso *d = rb_machine_dso(s->m, i);
		if (!d->image_missing)
			continue;
		st->binaries_not_found++;
		int n = snprintf(st->binaries_missing + len, sizeof(st->binaries_missing) - len, "%s%s",
				 len ? ", " : "", d->long_name);
		len = n < 0 ? len : len + (size_t)n < sizeof(st->binaries_missing) ? len + (size_t)n
			: sizeof(st->binaries_missing) - 1;
	}
	if (!st->binaries_not_found)
		return;
	if (st->trace_bytes_no_binary > st->trace_bytes)
		st->trace_bytes_no_binary = st->trace_bytes;
	char msg[sizeof(((struct pd_error *)0)->msg)];      /* the fraction first: the names may be clipped */
	if (st->trace_bytes)
		snprintf(msg, sizeof(msg), "%" PRIu64 " of %" PRIu64 " trace bytes (%.1f%%) not decoded: no file found for "
			 "%.200s (--symdir DIR gives folders of binaries)", st->trace_bytes_no_binary, st->trace_bytes,
			 100.0 * (double)st->trace_bytes_no_binary / (double)st->trace_bytes, st->binaries_missing);
	else            /* no trace: an unwinder needed the code (--call-graph dwarf) */
		snprintf(msg, sizeof(msg), "no file found for %.200s: call chains stop there (--symdir DIR gives folders "
			 "of binaries)", st->binaries_missing);
	src_warn(s, msg);
}

static int session_run(const struct rb_session_opts *o, const struct rb_sink *sink,
		       struct rb_session_stats *stats, struct pd_error *err, int spool_fd)
{
	struct sess s = { .o = o, .sink = sink, .st = stats, .err = err };
	struct pd_reader_opts ro;
	memset(stats, 0, sizeof(*stats));
	pd_error_clear(&stats->stop);
	if (parse_cpus(&s, o->cpus) < 0) {
		pd_error_clear(err);
		err->code = PD_ERR_INVAL;
		snprintf(err->msg, sizeof(err->msg), "bad CPU list '%s'", o->cpus);
		return PD_ERR_INVAL;
	}
	pd_reader_opts_init(&ro);
	ro.warn = o->warn;
	ro.warn_ctx = o->warn_ctx;
	/* opened afresh (its own file offset); a spooled stdin keeps the name <stdin> */
	int rc = pd_reader_open_as(&s.r, o->path, spool_fd >= 0 ? "<stdin>" : o->path, &ro, err);
	if (rc < 0)
		return rc;
	rb_oq_init(&s.q);
	struct rb_machine_opts mo = o->machine;
	mo.comm_exec = any_comm_exec(s.r);
	mo.warn = src_warn;
	mo.warn_ctx = &s;
	s.m = rb_machine_new(&mo);
	if (!s.m) {
		pd_reader_free(s.r);
		return -ENOMEM;
	}
	rc = load_build_ids(&s);
	if (!rc)
		rc = sink->begin ? sink->begin(sink->ctx, s.m) : 0;
	/* the sources opened from the recording itself; the others come with their AUXTRACE_INFO */
	setup_env(&s, spool_fd >= 0 ? "<stdin>" : NULL);
	for (size_t k = 0; !rc && k < rb_nr_source_kinds; k++)
		if (rb_source_kinds[k].auxtrace_type < 0)
			rc = open_source(&s, k, NULL, NULL);

	const struct pd_file_info *fi = pd_reader_info(s.r);
	uint64_t total = fi->pipe_mode ? 0 : fi->data_size;
	struct pd_record rec;
	int more = 0;
	while (!rc && (more = pd_reader_next(s.r, &rec, &stats->stop)) == 1) {
		stats->records++;
		if (o->progress && (stats->records & 0xffff) == 0)
			o->progress(o->progress_ctx, pd_reader_position(s.r), total);
		uint64_t t;
		if (rec.type == PD_RECORD_FINISHED_ROUND)
			rc = rb_oq_round(&s.q, deliver, &s);
		else if (rec.type == PD_RECORD_HEADER_BUILD_ID)
			build_id_record(&s, &rec);
		else if (rec.type == PD_RECORD_AUXTRACE)
			rc = on_auxtrace(&s, &rec);
		else if (rec.type == PD_RECORD_AUXTRACE_ERROR)
			rc = on_auxtrace_error(&s, &rec);
		else if (rec.type == PD_RECORD_STAT || rec.type == PD_RECORD_STAT_ROUND || rec.type == PD_RECORD_CPU_MAP)
			rc = stat_record(&s, &rec);
		else if (rec.type == PD_RECORD_AUXTRACE_INFO)
			rc = on_auxtrace_info(&s, &rec);
		else if (rec.type == PD_RECORD_TIME_CONV)
			on_time_conv(&s, &rec);
		else if (rec.type == PD_RECORD_HEADER_TRACING_DATA && rec.payload_size && sink->events)
			rc = keep_tracing_data(&s, &rec);
		else if (rec.type >= 64)
			;   /* user records: the reader applied what matters (attrs, features) */
		else if (pd_record_time(s.r, &rec, &t)) {
			if (rec.type == PD_RECORD_AUX)
				note_aux_time(&s, &rec, t);
			rc = rb_oq_push(&s.q, t, rec.offset, rec.evsel, rec.data, rec.size);
		}
		else
			rc = process(&s, &rec);
	}
	if (!rc && more < 0 && stats->stop.code == PD_ERR_NOMEM)
		rc = -ENOMEM;
	/*
	 * deliver what was read, even after a damaged record; not after a
	 * failure (memory, a sink's stop): the machine state may lack what the
	 * failed record would have added
	 */
	int frc = rc ? 0 : rb_oq_flush_all(&s.q, deliver, &s);
	if (!rc)
		rc = frc;
	/* what the sources still hold (the AUX trace, now that every record it depends on has been read) */
	for (size_t k = 0; k < rb_nr_source_kinds; k++) {
		if (!s.src[k])
			continue;
		if (!rc && s.src[k]->ops->finish)
			rc = s.src[k]->ops->finish(s.src[k]);
		s.src[k]->ops->free(s.src[k]);
	}
	if (more == 0)
		pd_error_clear(&stats->stop);
	const char *kwhy = rb_machine_kernel_image_problem(s.m);
	if (kwhy)               /* said once here; each gap it caused says it too */
		src_warn(&s, kwhy);
	if (!rc && rb_machine_oom(s.m))
		rc = -ENOMEM;           /* an object's file may be there: not said missing */
	if (!rc)
		note_missing_binaries(&s);
	if (!rc && stats->unwind_stopped) {
		char msg[sizeof(((struct pd_error *)0)->msg)];
		snprintf(msg, sizeof(msg), "%" PRIu64 " of %" PRIu64 " samples' user stacks (--call-graph dwarf) were "
			 "unwound only part of the way (the first: %s)", stats->unwind_stopped, stats->unwound_samples,
			 s.uw_why);
		src_warn(&s, msg);
	}
	stats->late = s.q.late;
	if (o->progress)
		o->progress(o->progress_ctx, pd_reader_position(s.r), total);
	int erc = sink->end ? sink->end(sink->ctx) : 0;
	if (!rc)
		rc = erc;
	rb_oq_free(&s.q);
	for (size_t i = 0; i < s.nr_synth; i++)
		free((char *)s.synth[i].name);
	free(s.synth);
	free(s.tracing_data);
	rb_tracepoints_free(s.tp);
	free(s.nodes);
	free(s.chain);
	rb_unwind_free(s.uw);
	free(s.auxq);
	pd_read_tracker_free(s.reads);
	rb_machine_free(s.m);
	pd_reader_free(s.r);
	return rc;
}

int rb_session_objects(const struct rb_session_opts *o, rb_session_object_fn fn, void *ctx, struct pd_error *err)
{
	struct rb_session_stats stats;
	struct sess s = { .o = o, .st = &stats, .err = err };
	struct pd_reader_opts ro;
	memset(&stats, 0, sizeof(stats));
	pd_reader_opts_init(&ro);
	ro.warn = o->warn;
	ro.warn_ctx = o->warn_ctx;
	int rc = pd_reader_open(&s.r, o->path, &ro, err);
	if (rc < 0)
		return rc;
	struct rb_machine_opts mo = o->machine;
	mo.warn = src_warn;
	mo.warn_ctx = &s;
	if (!(s.m = rb_machine_new(&mo))) {
		pd_reader_free(s.r);
		return session_status(-ENOMEM, err);
	}
	rc = load_build_ids(&s);
	struct pd_record rec;
	struct pd_event ev;
	while (!rc && pd_reader_next(s.r, &rec, &stats.stop) == 1) {
		if (rec.type == PD_RECORD_HEADER_BUILD_ID)
			build_id_record(&s, &rec);
		else if ((rec.type == PD_RECORD_MMAP || rec.type == PD_RECORD_MMAP2) &&
			 pd_event_parse(s.r, &rec, &ev, NULL) == 0)
			rc = apply_mmap(s.m, rec.type, &ev, (rec.misc & PD_MISC_CPUMODE_MASK) == PD_MISC_KERNEL);
	}
	for (size_t i = 0; !rc && i < rb_machine_nr_dsos(s.m); i++) {
		struct rb_dso *d = rb_machine_dso(s.m, i);
		size_t n = strlen(d->long_name);
		if (d->anon || (d->long_name[0] != '/' && !(d->long_name[0] == '[' && n > 2 && d->long_name[n - 1] == ']')))
			continue;       /* //anon, memfd: no file to look for */
		if (!strcmp(d->long_name, "[heap]") || !strcmp(d->long_name, "[stack]") ||
		    !strcmp(d->long_name, "[vsyscall]"))
			continue;
		struct rb_session_object ob = { .dso = d };
		ob.how = rb_machine_locate(s.m, d, &ob.where, &ob.hit);
		fn(ctx, &ob);
	}
	rb_machine_free(s.m);
	pd_reader_free(s.r);
	return rc ? session_status(-ENOMEM, err) : 0;
}
