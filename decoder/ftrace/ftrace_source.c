/*
 * ftrace_source.c - a trace.dat beside the recording as a trace source
 * (decoder/source.h): the second timeline, ftrace's per-CPU page rings,
 * merged into the session's by time. Before each record of time T the
 * session asks for everything up to T (run_until), so ftrace events and the
 * ftrace ring's losses reach the sink in time order with the perf records
 * (when the trace.dat was recorded with trace_clock perf, as rbrecord
 * --ftrace does; on another clock the order means nothing and the caller
 * warns). Opened at the start when the session is given a trace.dat.
 */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "decoder/source.h"
#include "tracedat.h"

struct ftrace_source {
	struct rb_source base;
	const struct rb_source_env *env;
	struct rb_ftrace_sink sink;   /* the reader's output: the env's callbacks */
	struct rb_tracedat *td;
};

static int to_event(void *ctx, const struct rb_ftrace_ev *ev)
{
	const struct rb_source_env *env = ctx;
	return env->ftrace_event(env->sess, ev);
}

static int to_gap(void *ctx, const struct rb_gap_ev *g)
{
	const struct rb_source_env *env = ctx;
	return env->gap(env->sess, g);
}

static struct rb_tracedat *td_of(struct rb_source *src) { return ((struct ftrace_source *)src)->td; }

static int ft_run_until(struct rb_source *src, uint64_t time) { return rb_tracedat_run_until(td_of(src), time); }

static int ft_finish(struct rb_source *src) { return ft_run_until(src, UINT64_MAX); }

static void ft_free(struct rb_source *src)
{
	if (!src)
		return;
	rb_tracedat_close(td_of(src));
	free(src);
}

static const struct rb_source_ops ft_ops = { .run_until = ft_run_until, .finish = ft_finish, .free = ft_free };

int rb_ftrace_source_open(struct rb_source **out, const struct rb_source_env *env, const struct pd_event *info,
			  struct pd_error *err)
{
	(void)info;
	*out = NULL;
	if (!env->ftrace_path)
		return 0;
	struct ftrace_source *f = calloc(1, sizeof(*f));
	if (!f)
		return PD_ERR_NOMEM;
	f->base.ops = &ft_ops;
	f->base.name = "ftrace";
	f->env = env;
	f->sink = (struct rb_ftrace_sink){ (void *)env, env->ftrace_event ? to_event : NULL, to_gap };
	int rc = rb_tracedat_open(&f->td, env->ftrace_path, &f->sink, env->ftrace_stats, env->ftrace_msg,
				  env->ftrace_msglen);
	if (rc) {
		free(f);
		if (rc == -ENOMEM)
			return PD_ERR_NOMEM;
		pd_error_clear(err);
		err->code = PD_ERR_IO;
		snprintf(err->msg, sizeof(err->msg), "%s", env->ftrace_msg);
		return PD_ERR_IO;
	}
	*out = &f->base;
	return 0;
}
