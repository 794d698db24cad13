/*
 * pt_source.c - Intel PT as a trace source (decoder/source.h). It is opened
 * at the start of the session: the decoder reads the recording a second
 * time to gather every queue's AUX data (intel_pt.h), so that it can decode
 * ahead of the session's records and hand over its events in time order.
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "decoder/source.h"
#include "intel_pt.h"

struct pt_source {
	struct rb_source base;
	const struct rb_source_env *env;
	struct rb_pt *pt;
};

static struct pt_source *pts(struct rb_source *src) { return (struct pt_source *)src; }

static int pt_record(struct rb_source *src, const struct pd_record *rec, const struct pd_event *ev)
{
	(void)rec;
	rb_pt_sideband(pts(src)->pt, ev);
	return 0;
}

/* The index entries up to @time, then the decoded events: both in time order. */
static int pt_run_until(struct rb_source *src, uint64_t time)
{
	const struct rb_source_env *env = pts(src)->env;
	int rc = env->sync_point ? rb_pt_index_until(pts(src)->pt, time, env->sync_point, env->sess) : 0;
	return rc ? rc : rb_pt_run_until(pts(src)->pt, time);
}

static int pt_finish(struct rb_source *src) { return pt_run_until(src, UINT64_MAX); }

static int pt_has_queue(const struct rb_source *src, uint32_t idx)
{
	return rb_pt_has_queue(((const struct pt_source *)src)->pt, idx);
}

static int pt_owns_aux(const struct rb_source *src, int32_t cpu, int32_t tid)
{
	return rb_pt_owns_aux(((const struct pt_source *)src)->pt, cpu, tid);
}

static void pt_free(struct rb_source *src)
{
	if (!src)
		return;
	rb_pt_free(pts(src)->pt);
	free(src);
}

static const struct rb_source_ops pt_ops = {
	.record = pt_record, .run_until = pt_run_until, .finish = pt_finish, .free = pt_free,
	.has_queue = pt_has_queue, .owns_aux = pt_owns_aux,
};

int rb_pt_source_open(struct rb_source **out, const struct rb_source_env *env, const struct pd_event *info,
		      struct pd_error *err)
{
	(void)info;
	*out = NULL;
	if (env->no_aux_decode)
		return 0;
	struct pt_source *p = calloc(1, sizeof(*p));
	if (!p)
		return PD_ERR_NOMEM;
	p->base.ops = &pt_ops;
	p->base.name = "intel_pt";
	p->env = env;
	struct rb_pt_env pe = { .m = env->m, .ctx = env->sess, .trace = env->trace, .gap = env->gap,
				.st = env->st, .perf_export = env->perf_export,
				.name = env->name, .insn_period = env->insn_period, .no_branches = env->no_branches,
				.no_symbols = env->no_symbols,
				.quick = env->quick,
				.jobs = env->jobs, .ptwrites = env->ptwrites, .pwr_events = env->pwr_events,
				.seek_point = env->seek_point, .seek = env->seek, .nr_seek = env->nr_seek,
				.no_index = !env->sync_point,
				.warn = env->pd_warn, .warn_ctx = env->pd_warn_ctx };
	pd_error_clear(err);
	int rc = rb_pt_open(&p->pt, env->path, &pe, err);
	if (rc > 0) {
		*out = &p->base;
		return env->synth_event ? rb_pt_synth_events(p->pt, env->synth_event, env->sess) : 0;
	}
	free(p);
	if (rc == 0)
		return 0;               /* no Intel PT trace */
	if (!err->code) {               /* failed before reading (its own allocation) */
		err->code = rc;
		snprintf(err->msg, sizeof(err->msg), "%s", pd_strerror(rc));
	}
	/*
	 * The file could not be read a second time (descriptors, memory) or its
	 * trace not held (spool disk full): going on would give a result without
	 * the trace that only a warning mentions, so the session stops.
	 */
	snprintf(err->msg + strlen(err->msg), sizeof(err->msg) - strlen(err->msg), " (Intel PT trace not decoded)");
	if (err->code >= 0)
		err->code = PD_ERR_IO;
	return err->code;
}
