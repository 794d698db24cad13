/*
 * imc_perf.h - POWER IMC PMUs in a perf.data recording (the decoder stage
 * for IMC, as imc.h is for raw buffer dumps). An event selector is an IMC
 * one when PMU_MAPPINGS names its attr.type trace_imc, thread_imc, core_imc
 * or nest_* (facts section 7). Two kinds of output:
 *
 * - trace_imc samples become IMC records. The kernel emits the records of
 *   one hardware buffer as samples that all carry the time the buffer was
 *   emptied (facts 7.2), so the records of one batch (same CPU, same time)
 *   are spread over the time since that CPU's previous flush (or since the
 *   task was switched in, when the recording has switch events): record i
 *   of n gets prev + (flush - prev) * (i + 1) / n, one sampling period
 *   apart at a constant event rate; the first batch of a CPU, with no
 *   previous flush, keeps the flush time. Every such time is flagged
 *   estimated. Privilege is MSR[HV,PR] as the kernel's cpumode encodes it.
 * - counting IMC events (core, thread, nest units) become counter values over
 *   time: PERF_SAMPLE_READ values of samples, PERF_RECORD_READ records, and
 *   perf stat record's STAT records (dated by the STAT_ROUND that follows).
 *
 * Records of a batch are held until the batch is complete (the next sample
 * of that CPU with another time, or the end): memory is one batch per CPU.
 */
#ifndef RB_IMC_PERF_H
#define RB_IMC_PERF_H

#include <stdint.h>
#include "pd.h"
#include "decoder/source.h"

enum rb_imc_kind { RB_IMC_NONE = 0, RB_IMC_TRACE, RB_IMC_THREAD, RB_IMC_CORE, RB_IMC_NEST };

/* Kind of a PMU by its PMU_MAPPINGS name. */
enum rb_imc_kind rb_imc_pmu_kind(const char *pmu);

struct rb_imc_rec_ev {
	uint64_t time;                /* estimated record time (perf clock ns) */
	uint64_t flush_time;          /* the sample's own time: when the buffer was emptied */
	int estimated;                /* 1: time reconstructed (always, for perf.data samples) */
	int32_t cpu, pid, tid;        /* -1 when the sample does not carry them */
	uint64_t ip, period;
	int privilege;                /* MSR[HV]<<1 | MSR[PR]: 0 guest kernel, 1 guest user, 2 kernel, 3 user; -1 unknown */
	struct rb_event_ref event;    /* its event (source.h) */
	uint32_t batch_index, batch_size;   /* position in its batch */
};

struct rb_imc_counter_ev {
	uint64_t time;                /* perf clock ns; STAT: the STAT_ROUND time (ns since counting started) */
	int32_t cpu, tid;             /* -1 when not known */
	struct rb_event_ref event;    /* its event (source.h) */
	const char *pmu;              /* PMU name from PMU_MAPPINGS */
	const char *source;           /* "sample", "read" or "stat" */
	uint64_t value, enabled, running;
};

struct rb_imc_out {
	void *ctx;
	int (*record)(void *ctx, const struct rb_imc_rec_ev *ev);
	int (*counter)(void *ctx, const struct rb_imc_counter_ev *ev);
};

struct rb_imc_perf;

/* A new state for reader @r (its features may arrive later, in pipe mode). NULL on OOM. */
struct rb_imc_perf *rb_imc_perf_new(struct pd_reader *r, const struct rb_imc_out *out);
/* Emits what is still pending (the last batch of each CPU). Returns the first non-zero output result. */
int rb_imc_perf_finish(struct rb_imc_perf *p);
/* Accepts NULL. */
void rb_imc_perf_free(struct rb_imc_perf *p);
/* The IMC kind of evsel @idx (looked up once, through PMU_MAPPINGS). */
enum rb_imc_kind rb_imc_perf_kind(struct rb_imc_perf *p, int evsel);
/* The PMU name of evsel @idx, NULL if PMU_MAPPINGS does not name it. */
const char *rb_imc_perf_pmu(struct rb_imc_perf *p, int evsel);

/* A sample in time order (cpumode from @misc). Returns 0, -ENOMEM, or an output result. */
int rb_imc_perf_sample(struct rb_imc_perf *p, int evsel, const struct pd_sample *s, uint16_t misc);
/* A context switch on @cpu at @time: a switch-in bounds the next batch's window. */
void rb_imc_perf_switch(struct rb_imc_perf *p, int32_t cpu, uint64_t time, int in);
/* A kernel READ record or a user STAT / STAT_ROUND / CPU_MAP record. */
int rb_imc_perf_record(struct rb_imc_perf *p, const struct pd_event *ev, int evsel);

#endif
