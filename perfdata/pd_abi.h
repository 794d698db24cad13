/*
 * pd_abi.h - numeric constants of the perf.data format and of the perf
 * ring-buffer records, as the kernel UAPI and tools/perf define them.
 *
 * Defined here rather than taken from <linux/perf_event.h> so that the
 * format library reads files from newer kernels on build hosts with older
 * headers, and cross-builds do not depend on the build host's headers.
 * Every value is cited in ../shared/docs/perf-data-facts.md (sections 1-3).
 */
#ifndef PD_ABI_H
#define PD_ABI_H

#include <stdint.h>

#define PD_MAGIC2          0x32454c4946524550ULL   /* "PERFILE2" read as a little-endian u64 */
#define PD_MAGIC2_SWAPPED  0x50455246494c4532ULL   /* the same bytes read on the other byte order */
#define PD_MAGIC1          0x454c494646524550ULL   /* legacy "PERFFILE" (LE read) */
#define PD_FILE_HEADER_SIZE   104
#define PD_FILE_HEADER_SIZE_OLD 72                  /* no adds_features bitmap */
#define PD_PIPE_HEADER_SIZE   16

/* perf_event_attr sizes by ABI version */
#define PD_ATTR_SIZE_VER0 64
#define PD_ATTR_SIZE_VER8 136

/* Kernel record types (enum perf_event_type). */
enum pd_record_type {
	PD_RECORD_MMAP = 1,
	PD_RECORD_LOST = 2,
	PD_RECORD_COMM = 3,
	PD_RECORD_EXIT = 4,
	PD_RECORD_THROTTLE = 5,
	PD_RECORD_UNTHROTTLE = 6,
	PD_RECORD_FORK = 7,
	PD_RECORD_READ = 8,
	PD_RECORD_SAMPLE = 9,
	PD_RECORD_MMAP2 = 10,
	PD_RECORD_AUX = 11,
	PD_RECORD_ITRACE_START = 12,
	PD_RECORD_LOST_SAMPLES = 13,
	PD_RECORD_SWITCH = 14,
	PD_RECORD_SWITCH_CPU_WIDE = 15,
	PD_RECORD_NAMESPACES = 16,
	PD_RECORD_KSYMBOL = 17,
	PD_RECORD_BPF_EVENT = 18,
	PD_RECORD_CGROUP = 19,
	PD_RECORD_TEXT_POKE = 20,
	PD_RECORD_AUX_OUTPUT_HW_ID = 21,
	PD_RECORD_KERNEL_MAX,

	/* Records synthesized by user space (perf tools), type >= 64. */
	PD_RECORD_HEADER_ATTR = 64,
	PD_RECORD_HEADER_EVENT_TYPE = 65,
	PD_RECORD_HEADER_TRACING_DATA = 66,
	PD_RECORD_HEADER_BUILD_ID = 67,
	PD_RECORD_FINISHED_ROUND = 68,
	PD_RECORD_ID_INDEX = 69,
	PD_RECORD_AUXTRACE_INFO = 70,
	PD_RECORD_AUXTRACE = 71,
	PD_RECORD_AUXTRACE_ERROR = 72,
	PD_RECORD_THREAD_MAP = 73,
	PD_RECORD_CPU_MAP = 74,
	PD_RECORD_STAT_CONFIG = 75,
	PD_RECORD_STAT = 76,
	PD_RECORD_STAT_ROUND = 77,
	PD_RECORD_EVENT_UPDATE = 78,
	PD_RECORD_TIME_CONV = 79,
	PD_RECORD_HEADER_FEATURE = 80,
	PD_RECORD_COMPRESSED = 81,
	PD_RECORD_FINISHED_INIT = 82,
	PD_RECORD_COMPRESSED2 = 83,
	PD_RECORD_USER_MAX,
};
#define PD_RECORD_TYPE_MAX 128   /* size of per-type count arrays */

/*
 * simpleperf's own records (simpleperf record.h, user_record_type). Their
 * header is {u32 type, u16 size1, u16 size0}: a 32-bit size, size1 << 16 |
 * size0, where perf has misc and size. A record too large for one (over
 * 64 KiB) is cut into SPLIT records whose bodies joined are the whole
 * record, header included, ended by SPLIT_END.
 */
enum pd_sp_record_type {
	PD_SP_RECORD_START = 32768,
	PD_SP_RECORD_KERNEL_SYMBOL = 32769,   /* u32 size, kallsyms text padded to 8 */
	PD_SP_RECORD_DSO = 32770,             /* u64 type, id, min_vaddr, name padded to 8 */
	PD_SP_RECORD_SYMBOL = 32771,          /* u64 addr, len, dso_id, name padded to 8 */
	PD_SP_RECORD_SPLIT = 32772,
	PD_SP_RECORD_SPLIT_END = 32773,
	PD_SP_RECORD_EVENT_ID = 32774,        /* u64 count, {u64 attr_id, event_id}[count] */
	PD_SP_RECORD_CALLCHAIN = 32775,
	PD_SP_RECORD_UNWINDING_RESULT = 32776,
	PD_SP_RECORD_TRACING_DATA = 32777,    /* u32 size, tracing data padded to 64 */
	PD_SP_RECORD_DEBUG = 32778,
	PD_SP_RECORD_END,
};
#define PD_SP_RECORD_SLOTS 16     /* per-type count arrays of simpleperf's records: type - 32768 */

/* header.misc */
#define PD_MISC_CPUMODE_MASK     0x7
#define PD_MISC_CPUMODE_UNKNOWN  0
#define PD_MISC_KERNEL           1
#define PD_MISC_USER             2
#define PD_MISC_HYPERVISOR       3
#define PD_MISC_GUEST_KERNEL     4
#define PD_MISC_GUEST_USER       5
#define PD_MISC_MMAP_DATA        (1 << 13)
#define PD_MISC_COMM_EXEC        (1 << 13)
#define PD_MISC_SWITCH_OUT       (1 << 13)
#define PD_MISC_EXACT_IP         (1 << 14)
#define PD_MISC_SWITCH_OUT_PREEMPT (1 << 14)
#define PD_MISC_MMAP_BUILD_ID    (1 << 14)
#define PD_MISC_BUILD_ID_SIZE    (1 << 15)

/* attr.sample_type bits */
enum {
	PD_SAMPLE_IP = 1ULL << 0,
	PD_SAMPLE_TID = 1ULL << 1,
	PD_SAMPLE_TIME = 1ULL << 2,
	PD_SAMPLE_ADDR = 1ULL << 3,
	PD_SAMPLE_READ = 1ULL << 4,
	PD_SAMPLE_CALLCHAIN = 1ULL << 5,
	PD_SAMPLE_ID = 1ULL << 6,
	PD_SAMPLE_CPU = 1ULL << 7,
	PD_SAMPLE_PERIOD = 1ULL << 8,
	PD_SAMPLE_STREAM_ID = 1ULL << 9,
	PD_SAMPLE_RAW = 1ULL << 10,
	PD_SAMPLE_BRANCH_STACK = 1ULL << 11,
	PD_SAMPLE_REGS_USER = 1ULL << 12,
	PD_SAMPLE_STACK_USER = 1ULL << 13,
	PD_SAMPLE_WEIGHT = 1ULL << 14,
	PD_SAMPLE_DATA_SRC = 1ULL << 15,
	PD_SAMPLE_IDENTIFIER = 1ULL << 16,
	PD_SAMPLE_TRANSACTION = 1ULL << 17,
	PD_SAMPLE_REGS_INTR = 1ULL << 18,
	PD_SAMPLE_PHYS_ADDR = 1ULL << 19,
	PD_SAMPLE_AUX = 1ULL << 20,
	PD_SAMPLE_CGROUP = 1ULL << 21,
	PD_SAMPLE_DATA_PAGE_SIZE = 1ULL << 22,
	PD_SAMPLE_CODE_PAGE_SIZE = 1ULL << 23,
	PD_SAMPLE_WEIGHT_STRUCT = 1ULL << 24,
	PD_SAMPLE_MAX = 1ULL << 25,
};
#define PD_SAMPLE_ID_ALL_BITS (PD_SAMPLE_TID | PD_SAMPLE_TIME | PD_SAMPLE_ID | \
			       PD_SAMPLE_STREAM_ID | PD_SAMPLE_CPU | PD_SAMPLE_IDENTIFIER)

/* attr.read_format bits */
#define PD_FORMAT_TOTAL_TIME_ENABLED (1ULL << 0)
#define PD_FORMAT_TOTAL_TIME_RUNNING (1ULL << 1)
#define PD_FORMAT_ID                 (1ULL << 2)
#define PD_FORMAT_GROUP              (1ULL << 3)
#define PD_FORMAT_LOST               (1ULL << 4)

/* attr.branch_sample_type bits that change the sample layout */
#define PD_BRANCH_HW_INDEX       (1ULL << 17)
#define PD_BRANCH_COUNTERS       (1ULL << 19)

/*
 * Bits of the attr flag word at offset 40, numbered as the UAPI bitfield
 * declares them (disabled = 0). pd_attr_flag() maps them to the host's
 * bitfield allocation.
 */
enum pd_attr_flag_bit {
	PD_ATTR_DISABLED = 0, PD_ATTR_INHERIT = 1, PD_ATTR_PINNED = 2, PD_ATTR_EXCLUSIVE = 3,
	PD_ATTR_EXCLUDE_USER = 4, PD_ATTR_EXCLUDE_KERNEL = 5, PD_ATTR_EXCLUDE_HV = 6,
	PD_ATTR_EXCLUDE_IDLE = 7, PD_ATTR_MMAP = 8, PD_ATTR_COMM = 9, PD_ATTR_FREQ = 10,
	PD_ATTR_INHERIT_STAT = 11, PD_ATTR_ENABLE_ON_EXEC = 12, PD_ATTR_TASK = 13,
	PD_ATTR_WATERMARK = 14, PD_ATTR_PRECISE_IP0 = 15, PD_ATTR_PRECISE_IP1 = 16,
	PD_ATTR_MMAP_DATA = 17, PD_ATTR_SAMPLE_ID_ALL = 18, PD_ATTR_EXCLUDE_HOST = 19,
	PD_ATTR_EXCLUDE_GUEST = 20, PD_ATTR_EXCLUDE_CALLCHAIN_KERNEL = 21,
	PD_ATTR_EXCLUDE_CALLCHAIN_USER = 22, PD_ATTR_MMAP2 = 23, PD_ATTR_COMM_EXEC = 24,
	PD_ATTR_USE_CLOCKID = 25, PD_ATTR_CONTEXT_SWITCH = 26, PD_ATTR_WRITE_BACKWARD = 27,
	PD_ATTR_NAMESPACES = 28, PD_ATTR_KSYMBOL = 29, PD_ATTR_BPF_EVENT = 30,
	PD_ATTR_AUX_OUTPUT = 31, PD_ATTR_CGROUP = 32, PD_ATTR_TEXT_POKE = 33,
	PD_ATTR_BUILD_ID = 34, PD_ATTR_INHERIT_THREAD = 35, PD_ATTR_REMOVE_ON_EXEC = 36,
	PD_ATTR_SIGTRAP = 37,
};

/* attr.type */
enum {
	PD_TYPE_HARDWARE = 0, PD_TYPE_SOFTWARE = 1, PD_TYPE_TRACEPOINT = 2,
	PD_TYPE_HW_CACHE = 3, PD_TYPE_RAW = 4, PD_TYPE_BREAKPOINT = 5,
};

/* Feature section ids (adds_features bit numbers). */
enum pd_feature {
	PD_FEAT_RESERVED = 0,
	PD_FEAT_TRACING_DATA = 1,
	PD_FEAT_BUILD_ID = 2,
	PD_FEAT_HOSTNAME = 3,
	PD_FEAT_OSRELEASE = 4,
	PD_FEAT_VERSION = 5,
	PD_FEAT_ARCH = 6,
	PD_FEAT_NRCPUS = 7,
	PD_FEAT_CPUDESC = 8,
	PD_FEAT_CPUID = 9,
	PD_FEAT_TOTAL_MEM = 10,
	PD_FEAT_CMDLINE = 11,
	PD_FEAT_EVENT_DESC = 12,
	PD_FEAT_CPU_TOPOLOGY = 13,
	PD_FEAT_NUMA_TOPOLOGY = 14,
	PD_FEAT_BRANCH_STACK = 15,
	PD_FEAT_PMU_MAPPINGS = 16,
	PD_FEAT_GROUP_DESC = 17,
	PD_FEAT_AUXTRACE = 18,
	PD_FEAT_STAT = 19,
	PD_FEAT_CACHE = 20,
	PD_FEAT_SAMPLE_TIME = 21,
	PD_FEAT_MEM_TOPOLOGY = 22,
	PD_FEAT_CLOCKID = 23,
	PD_FEAT_DIR_FORMAT = 24,
	PD_FEAT_BPF_PROG_INFO = 25,
	PD_FEAT_BPF_BTF = 26,
	PD_FEAT_COMPRESSED = 27,
	PD_FEAT_CPU_PMU_CAPS = 28,
	PD_FEAT_CLOCK_DATA = 29,
	PD_FEAT_HYBRID_TOPOLOGY = 30,
	PD_FEAT_PMU_CAPS = 31,
	PD_FEAT_CPU_DOMAIN_INFO = 32,
	PD_FEAT_KNOWN_MAX,              /* first id this library does not know */
	/* simpleperf's (record_file_format.h); the library reads the first two */
	PD_FEAT_SP_FILE = 128,          /* per binary: path, type, min_vaddr, symbol table */
	PD_FEAT_SP_META_INFO = 129,     /* key\0value\0 pairs; event_type_info names the events */
	PD_FEAT_SP_DEBUG_UNWIND = 130,
	PD_FEAT_SP_DEBUG_UNWIND_FILE = 131,
	PD_FEAT_SP_FILE2 = 132,         /* protobuf FileFeature messages, each after its u32 size */
	PD_FEAT_SP_ETM_BRANCH_LIST = 133,
	PD_FEAT_SP_INIT_MAP = 134,
	PD_FEAT_SP_END,
	PD_FEAT_BITS = 256,
};
/* perf 6.1 writes HEADER_LAST_FEATURE = 32 as the pipe-mode terminator; newer perf more. */
#define PD_FEAT_PIPE_LAST_61 32

/* enum auxtrace_type */
enum pd_auxtrace_type {
	PD_AUXTRACE_UNKNOWN = 0, PD_AUXTRACE_INTEL_PT = 1, PD_AUXTRACE_INTEL_BTS = 2,
	PD_AUXTRACE_CS_ETM = 3, PD_AUXTRACE_ARM_SPE = 4, PD_AUXTRACE_S390_CPUMSF = 5,
	PD_AUXTRACE_HISI_PTT = 6,
};

/* PERF_RECORD_AUX flags */
#define PD_AUX_FLAG_TRUNCATED  0x01
#define PD_AUX_FLAG_OVERWRITE  0x02
#define PD_AUX_FLAG_PARTIAL    0x04
#define PD_AUX_FLAG_COLLISION  0x08
#define PD_AUX_FLAG_PMU_FORMAT_TYPE_MASK 0xff00

#define PD_AUXTRACE_RECORD_SIZE 48
#define PD_AUXTRACE_ERROR_MSG_MAX 64

/* Sizes of the fixed parts of user records */
#define PD_TIME_CONV_SIZE_OLD 32
#define PD_TIME_CONV_SIZE     56

#endif /* PD_ABI_H */
