/*
 * auxinfo.h - what the recorder knows about AUX-area PMUs: which sysfs PMU
 * an event belongs to (intel_pt, intel_bts, cs_etm, arm_spe), the
 * PERF_RECORD_AUXTRACE_INFO perf writes for each, the AUXTRACE reference,
 * address filters, and the counters kept over the kernel's AUX records.
 */
#ifndef REC_AUXINFO_H
#define REC_AUXINFO_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>
#include "auxring.h"
#include "pd.h"
#include "util.h"

struct aux_pmu {
	enum aux_kind kind;
	char name[64];          /* sysfs name: intel_pt, intel_bts, cs_etm, arm_spe_0 */
	uint32_t type;          /* attr.type */
};

/* 1 and @p filled if PMU type @type has an AUX area; 0 if not (@p->name still names it, or "type N"). */
int auxpmu__lookup(uint32_t type, struct aux_pmu *p);

/* Inputs of AUXTRACE_INFO beyond sysfs. */
struct auxinfo_params {
	const struct aux_pmu *pmu;
	const struct perf_event_attr *attr;      /* the AUX event (config bits) */
	const struct perf_event_mmap_page *pc;   /* first ring's control page: time conversion */
	int snapshot;                            /* -S */
	int per_cpu_mmaps;                       /* rings per CPU (not --per-thread) */
	int have_sched_switch;                   /* Intel PT: 0, 2 (per task) or 3 (CPU-wide) */
	const char *filter;                      /* --filter of the AUX event, NULL if none */
	uint32_t tsc_ctc_n, tsc_ctc_d;           /* Intel PT: CPUID.15H EBX, EAX (auxinfo__tsc_ctc) */
	const int *cpus;                         /* CoreSight: the CPUs traced (-1 alone: all online) */
	int nr_cpus;
};

/*
 * The whole PERF_RECORD_AUXTRACE_INFO record, native order, into @out
 * (perf-data-facts.md 4.1, 5.1, 5.2; Intel BTS and Arm SPE as perf 6.x).
 * 0, or -1 with @e naming the sysfs file that is missing or malformed.
 */
int auxinfo__build(struct pd_buf *out, const struct auxinfo_params *p, struct rec_err *e);

/* CPUID leaf 0x15 (TSC / core crystal clock ratio) on x86; zeros elsewhere. */
void auxinfo__tsc_ctc(uint32_t *n, uint32_t *d);
/* AUXTRACE.reference as perf takes it for @kind: TSC (Intel), random (CoreSight), clock (SPE). */
uint64_t auxinfo__reference(enum aux_kind kind);
/* Intel PT's psb period in bytes for @attr (sysfs caps and the psb_period term), 0 if unknown. */
size_t auxinfo__pt_psb_period(const struct aux_pmu *pmu, const struct perf_event_attr *attr);
/* The value of format term @term of @pmu in @attr; 0 and -1 if the PMU has no such term. */
int auxinfo__term(const char *pmu, const struct perf_event_attr *attr, const char *term, uint64_t *v);

/*
 * Check an address filter against the kernel's syntax (one or more of
 * "filter|start|stop|tracestop ADDR[/SIZE][@FILE]" separated by ',' or ' ')
 * and the PMU's nr_addr_filters. 0 or -1 with @e saying what is wrong.
 */
int auxinfo__check_filter(const struct aux_pmu *pmu, const char *filter, struct rec_err *e);

/* Write one AUXTRACE record and its payload (pieces and padding) through @w. */
int aux_chunk_write(struct pd_writer *w, const struct aux_chunk *c, struct pd_error *pe);

/* What the kernel said about its AUX output, from the records passed through. */
struct aux_counts {
	uint64_t aux_records;     /* PERF_RECORD_AUX */
	uint64_t aux_bytes;       /* their aux_size total (full-trace mode) */
	uint64_t truncated;       /* records flagged TRUNCATED: the area was full, trace was lost */
	uint64_t partial;         /* PARTIAL: the data has gaps */
	uint64_t collision;       /* COLLISION: an AUX sample collided */
	uint64_t overwrite;       /* OVERWRITE: snapshot-mode records */
	uint64_t itrace_start;    /* PERF_RECORD_ITRACE_START */
	uint64_t hw_id;           /* PERF_RECORD_AUX_OUTPUT_HW_ID */
};
void aux_counts_note(struct aux_counts *c, const struct perf_event_header *h);

#endif
