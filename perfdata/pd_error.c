/*
 * pd_error.c - status codes, their text, and pd_fail(): the single function
 * through which every error of the format library is reported.
 */
#include "config.h"
#include <stdio.h>
#include <string.h>
#include "pd_internal.h"

const char *pd_strerror(int code)
{
	switch (code) {
	case PD_OK: return "success";
	case PD_ERR_INVAL: return "invalid argument";
	case PD_ERR_NOMEM: return "out of memory";
	case PD_ERR_IO: return "I/O error";
	case PD_ERR_MAGIC: return "not a perf.data file";
	case PD_ERR_HEADER: return "bad file header";
	case PD_ERR_ATTR: return "bad event attribute";
	case PD_ERR_FEATURE: return "bad feature section";
	case PD_ERR_RECORD: return "malformed record";
	case PD_ERR_TRUNCATED: return "truncated file";
	case PD_ERR_UNSUPPORTED: return "unsupported";
	case PD_ERR_NOSPC: return "no space left on device";
	case PD_ERR_NOATTR: return "record matches no event";
	}
	return "unknown error";
}

void pd_error_clear(struct pd_error *err)
{
	if (!err)
		return;
	err->code = 0;
	err->offset = PD_NO_OFFSET;
	err->rec_type = -1;
	err->feature = -1;
	err->msg[0] = '\0';
}

static int vfail(struct pd_error *err, int code, uint64_t offset, int rec_type,
		 int feat, const char *fmt, va_list ap)
{
	if (!err)
		return code;
	err->code = code;
	err->offset = offset;
	err->rec_type = rec_type;
	err->feature = feat;
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	return code;
}

int pd_fail(struct pd_error *err, int code, uint64_t offset, int rec_type,
	    const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail(err, code, offset, rec_type, -1, fmt, ap);
	va_end(ap);
	return code;
}

int pd_fail_feature(struct pd_error *err, int code, uint64_t offset, unsigned feat,
		    const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail(err, code, offset, -1, (int)feat, fmt, ap);
	va_end(ap);
	return code;
}

void pd_error_locate(struct pd_error *err, const char *name, uint64_t offset)
{
	if (!err)
		return;
	char m[sizeof(err->msg) + 128];
	snprintf(m, sizeof(m), "%s: at offset %llu: %s", name, (unsigned long long)offset, err->msg);
	size_t n = strnlen(m, sizeof(err->msg) - 1);
	memcpy(err->msg, m, n);   /* cut to fit: the location comes first */
	err->msg[n] = '\0';
	err->offset = offset;
}

static const char *const record_names[PD_RECORD_USER_MAX] = {
	[PD_RECORD_MMAP] = "MMAP", [PD_RECORD_LOST] = "LOST", [PD_RECORD_COMM] = "COMM",
	[PD_RECORD_EXIT] = "EXIT", [PD_RECORD_THROTTLE] = "THROTTLE",
	[PD_RECORD_UNTHROTTLE] = "UNTHROTTLE", [PD_RECORD_FORK] = "FORK",
	[PD_RECORD_READ] = "READ", [PD_RECORD_SAMPLE] = "SAMPLE", [PD_RECORD_MMAP2] = "MMAP2",
	[PD_RECORD_AUX] = "AUX", [PD_RECORD_ITRACE_START] = "ITRACE_START",
	[PD_RECORD_LOST_SAMPLES] = "LOST_SAMPLES", [PD_RECORD_SWITCH] = "SWITCH",
	[PD_RECORD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE", [PD_RECORD_NAMESPACES] = "NAMESPACES",
	[PD_RECORD_KSYMBOL] = "KSYMBOL", [PD_RECORD_BPF_EVENT] = "BPF_EVENT",
	[PD_RECORD_CGROUP] = "CGROUP", [PD_RECORD_TEXT_POKE] = "TEXT_POKE",
	[PD_RECORD_AUX_OUTPUT_HW_ID] = "AUX_OUTPUT_HW_ID",
	[PD_RECORD_HEADER_ATTR] = "ATTR", [PD_RECORD_HEADER_EVENT_TYPE] = "EVENT_TYPE",
	[PD_RECORD_HEADER_TRACING_DATA] = "TRACING_DATA", [PD_RECORD_HEADER_BUILD_ID] = "BUILD_ID",
	[PD_RECORD_FINISHED_ROUND] = "FINISHED_ROUND", [PD_RECORD_ID_INDEX] = "ID_INDEX",
	[PD_RECORD_AUXTRACE_INFO] = "AUXTRACE_INFO", [PD_RECORD_AUXTRACE] = "AUXTRACE",
	[PD_RECORD_AUXTRACE_ERROR] = "AUXTRACE_ERROR", [PD_RECORD_THREAD_MAP] = "THREAD_MAP",
	[PD_RECORD_CPU_MAP] = "CPU_MAP", [PD_RECORD_STAT_CONFIG] = "STAT_CONFIG",
	[PD_RECORD_STAT] = "STAT", [PD_RECORD_STAT_ROUND] = "STAT_ROUND",
	[PD_RECORD_EVENT_UPDATE] = "EVENT_UPDATE", [PD_RECORD_TIME_CONV] = "TIME_CONV",
	[PD_RECORD_HEADER_FEATURE] = "FEATURE", [PD_RECORD_COMPRESSED] = "COMPRESSED",
	[PD_RECORD_FINISHED_INIT] = "FINISHED_INIT", [PD_RECORD_COMPRESSED2] = "COMPRESSED2",
};

/* simpleperf's records, named after its enum (SIMPLE_PERF_RECORD_x as SIMPLEPERF_x) */
static const char *const sp_record_names[PD_SP_RECORD_END - PD_SP_RECORD_START] = {
	[PD_SP_RECORD_KERNEL_SYMBOL - PD_SP_RECORD_START] = "SIMPLEPERF_KERNEL_SYMBOL",
	[PD_SP_RECORD_DSO - PD_SP_RECORD_START] = "SIMPLEPERF_DSO",
	[PD_SP_RECORD_SYMBOL - PD_SP_RECORD_START] = "SIMPLEPERF_SYMBOL",
	[PD_SP_RECORD_SPLIT - PD_SP_RECORD_START] = "SIMPLEPERF_SPLIT",
	[PD_SP_RECORD_SPLIT_END - PD_SP_RECORD_START] = "SIMPLEPERF_SPLIT_END",
	[PD_SP_RECORD_EVENT_ID - PD_SP_RECORD_START] = "SIMPLEPERF_EVENT_ID",
	[PD_SP_RECORD_CALLCHAIN - PD_SP_RECORD_START] = "SIMPLEPERF_CALLCHAIN",
	[PD_SP_RECORD_UNWINDING_RESULT - PD_SP_RECORD_START] = "SIMPLEPERF_UNWINDING_RESULT",
	[PD_SP_RECORD_TRACING_DATA - PD_SP_RECORD_START] = "SIMPLEPERF_TRACING_DATA",
	[PD_SP_RECORD_DEBUG - PD_SP_RECORD_START] = "SIMPLEPERF_DEBUG",
};

const char *pd_record_name(uint32_t type)
{
	if (type >= PD_SP_RECORD_START && type < PD_SP_RECORD_END)
		return sp_record_names[type - PD_SP_RECORD_START];
	return type < PD_RECORD_USER_MAX ? record_names[type] : NULL;
}

static const char *const feature_names[PD_FEAT_KNOWN_MAX] = {
	[PD_FEAT_RESERVED] = "reserved", [PD_FEAT_TRACING_DATA] = "trace_info",
	[PD_FEAT_BUILD_ID] = "build_id", [PD_FEAT_HOSTNAME] = "hostname",
	[PD_FEAT_OSRELEASE] = "osrelease", [PD_FEAT_VERSION] = "version",
	[PD_FEAT_ARCH] = "arch", [PD_FEAT_NRCPUS] = "nrcpus", [PD_FEAT_CPUDESC] = "cpudesc",
	[PD_FEAT_CPUID] = "cpuid", [PD_FEAT_TOTAL_MEM] = "total_mem",
	[PD_FEAT_CMDLINE] = "cmdline", [PD_FEAT_EVENT_DESC] = "event_desc",
	[PD_FEAT_CPU_TOPOLOGY] = "cpu_topology", [PD_FEAT_NUMA_TOPOLOGY] = "numa_topology",
	[PD_FEAT_BRANCH_STACK] = "branch_stack", [PD_FEAT_PMU_MAPPINGS] = "pmu_mappings",
	[PD_FEAT_GROUP_DESC] = "group_desc", [PD_FEAT_AUXTRACE] = "auxtrace",
	[PD_FEAT_STAT] = "stat", [PD_FEAT_CACHE] = "cache", [PD_FEAT_SAMPLE_TIME] = "sample_time",
	[PD_FEAT_MEM_TOPOLOGY] = "mem_topology", [PD_FEAT_CLOCKID] = "clockid",
	[PD_FEAT_DIR_FORMAT] = "dir_format", [PD_FEAT_BPF_PROG_INFO] = "bpf_prog_info",
	[PD_FEAT_BPF_BTF] = "bpf_btf", [PD_FEAT_COMPRESSED] = "compressed",
	[PD_FEAT_CPU_PMU_CAPS] = "cpu_pmu_caps", [PD_FEAT_CLOCK_DATA] = "clock_data",
	[PD_FEAT_HYBRID_TOPOLOGY] = "hybrid_topology", [PD_FEAT_PMU_CAPS] = "pmu_caps",
	[PD_FEAT_CPU_DOMAIN_INFO] = "cpu_domain_info",
};

/* simpleperf's features, by the names its GetFeatureName gives them */
static const char *const sp_feature_names[PD_FEAT_SP_END - PD_FEAT_SP_FILE] = {
	"file", "meta_info", "debug_unwind", "debug_unwind_file", "file2", "etm_branch_list", "init_map",
};

const char *pd_feature_name(unsigned feat)
{
	if (feat >= PD_FEAT_SP_FILE && feat < PD_FEAT_SP_END)
		return sp_feature_names[feat - PD_FEAT_SP_FILE];
	return feat < PD_FEAT_KNOWN_MAX ? feature_names[feat] : NULL;
}
