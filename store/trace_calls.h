/*
 * trace_calls.h - a hardware-trace branch event as the calls builder's input
 * (decoder/calls), keyed by the session's objects: the thread, the comm perf
 * shows for it and the symbols as the database's calls have them (perf's
 * exporter names symbol-less code). For the outputs that build calls from
 * the trace without the SQLite store's ids (folded stacks, speedscope,
 * Perfetto).
 */
#ifndef RB_STORE_TRACE_CALLS_H
#define RB_STORE_TRACE_CALLS_H

#include <string.h>
#include "decoder/calls/calls.h"
#include "decoder/session/session.h"

/* Fills @b from @ev; 0 when @ev is no branch the calls are built from (an instruction sample, no flags). */
static inline int rb_trace_calls_branch(struct rb_machine *m, const struct rb_trace_ev *ev, struct rb_calls_branch *b)
{
	if (ev->kind != RB_EV_BRANCH || !ev->flags)
		return 0;
	const struct rb_sym *from = rb_machine_export_sym(m, &ev->from_al, ev->from_al.addr);
	const struct rb_sym *to = rb_machine_export_sym(m, &ev->to_al, ev->to_al.addr);
	*b = (struct rb_calls_branch){
		.thread = (uintptr_t)ev->thread, .comm = (uintptr_t)rb_thread_shown_comm(ev->thread, ev->comm),
		.main_thread = ev->thread == ev->main_thread, .cpu = ev->cpu, .tid = ev->thread->tid,
		.time = ev->time, .from = ev->from, .to = ev->to, .flags = ev->flags, .insns = ev->insn_count,
		.cycles = ev->cyc_count, .from_sym = (uintptr_t)from, .to_sym = (uintptr_t)to,
		.to_off = to && ev->to_al.addr >= to->start ? ev->to_al.addr - to->start : 0,
	};
	return 1;
}

/* A symbol key's frame name, as rbdecode folded writes it: "[unknown]" for none or perf's exporter's zero-size "unknown". */
static inline const char *rb_trace_calls_name(const struct rb_sym *s)
{
	return s && !(s->end == s->start && !strcmp(s->name, "unknown")) ? s->name : "[unknown]";
}

/*
 * Whether a trace is timed: a sink for a pass of its own over the file
 * (cheap: it stops at the second distinct time). Its trace callback sets
 * *@timed to 1 and stops the run (returns 1) at the first branch whose
 * time differs from the first one's; *@timed stays 0 if none does (no
 * trace, or every branch at one time: CoreSight without timestamps has its
 * AUX record's). One probe at a time.
 */
struct rb_trace_timed_probe { int *timed; int seen; uint64_t first; };

static inline int rb_trace_timed_probe_ev(void *ctx, const struct rb_trace_ev *ev)
{
	struct rb_trace_timed_probe *p = ctx;
	if (ev->kind != RB_EV_BRANCH || !ev->flags)
		return 0;
	if (!p->seen) {
		p->seen = 1;
		p->first = ev->time;
		return 0;
	}
	return ev->time != p->first ? (*p->timed = 1) : 0;
}

static inline void rb_trace_timed_probe(struct rb_sink *sink, int *timed)
{
	static struct rb_trace_timed_probe p;
	p = (struct rb_trace_timed_probe){ .timed = timed };
	*timed = 0;
	*sink = (struct rb_sink){ .ctx = &p, .trace = rb_trace_timed_probe_ev };
}

#endif
