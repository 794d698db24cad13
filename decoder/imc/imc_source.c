/*
 * imc_source.c - POWER IMC as a trace source (decoder/source.h). Opened at
 * the start of every session: its evsels say, through PMU_MAPPINGS, which
 * events are IMC ones (imc_perf.h), and those may only appear later (pipe
 * mode). Trace-IMC samples become IMC records, counting IMC events counter
 * values; context switches bound the time a batch of records is spread over.
 */
#include "config.h"
#include <stdlib.h>
#include "decoder/source.h"
#include "imc_perf.h"

struct imc_source {
	struct rb_source base;
	struct rb_imc_perf *p;
};

static struct rb_imc_perf *perf_of(struct rb_source *src) { return ((struct imc_source *)src)->p; }

static int imc_record(struct rb_source *src, const struct pd_record *rec, const struct pd_event *ev)
{
	switch (ev->type) {
	case PD_RECORD_SAMPLE:
		return rb_imc_perf_sample(perf_of(src), rec->evsel, &ev->u.sample, rec->misc);
	case PD_RECORD_SWITCH:
	case PD_RECORD_SWITCH_CPU_WIDE:
		rb_imc_perf_switch(perf_of(src), (ev->sid.present & PD_SAMPLE_CPU) ? (int32_t)ev->sid.cpu : -1,
				   ev->sid.time, !(ev->misc & PD_MISC_SWITCH_OUT));
		return 0;
	case PD_RECORD_READ:
	case PD_RECORD_STAT:
	case PD_RECORD_STAT_ROUND:
	case PD_RECORD_CPU_MAP:
		return rb_imc_perf_record(perf_of(src), ev, rec->evsel);
	}
	return 0;
}

static int imc_finish(struct rb_source *src) { return rb_imc_perf_finish(perf_of(src)); }

static void imc_free(struct rb_source *src)
{
	if (!src)
		return;
	struct imc_source *is = (struct imc_source *)src;
	rb_imc_perf_free(is->p);
	free(is);
}

static const struct rb_source_ops imc_ops = { .record = imc_record, .finish = imc_finish, .free = imc_free };

int rb_imc_source_open(struct rb_source **out, const struct rb_source_env *env, const struct pd_event *info,
		       struct pd_error *err)
{
	(void)info;
	(void)err;
	*out = NULL;
	struct imc_source *is = calloc(1, sizeof(*is));
	if (!is)
		return PD_ERR_NOMEM;
	struct rb_imc_out o = { env->sess, env->imc_record, env->imc_counter };
	if (!(is->p = rb_imc_perf_new(env->r, &o))) {
		free(is);
		return PD_ERR_NOMEM;
	}
	is->base.ops = &imc_ops;
	is->base.name = "imc";
	*out = &is->base;
	return 0;
}
