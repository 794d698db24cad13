/*
 * pd.h - the perf.data format library: one reader and one writer for the
 * files Linux perf produces, shared by the recorder (rbrecord, which only
 * writes) and the decoder (rbdecode, which only reads).
 *
 * Stages, each in its own file:
 *   pd_error.c   error codes and the one place corruption is reported
 *   pd_swap.c    byte order: attrs, records and feature payloads of a file
 *                written on the other endianness, in either direction
 *   pd_evsel.c   the table of event selectors (attr + ids + name) and the
 *                mapping from a record's sample id to its selector
 *   pd_read.c    the streaming reader: file mode and pipe mode, header,
 *                attr section, feature table, records (decompressing
 *                PERF_RECORD_COMPRESSED on the fly), AUXTRACE payloads
 *   pd_parse.c   record bodies to structs: samples per sample_type,
 *                sample_id trailers, and every kernel and user record type
 *   pd_feature.c feature payloads to structs (what perf report --header-only
 *                shows)
 *   pd_write.c   the writer: file mode with feature sections and the
 *                AUXTRACE index, or pipe mode; either byte order
 *
 * Workload: files from kilobytes to tens of gigabytes, read once front to
 * back. Memory stays bounded: the reader holds one buffer of records plus the
 * feature sections and the attr table, never the data section.
 *
 * Conventions: functions return 0 (or a positive count) on success and a
 * negative enum pd_status on failure, filling the caller's struct pd_error
 * with a message that names the file offset and record type. The library
 * never prints and never exits. Warnings (the file is usable but something is
 * off) go to a callback the caller installs.
 */
#ifndef PD_H
#define PD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "pd_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- errors */

/*
 * The status of the library layers (perfdata/, decoder/, store/): 0 or one
 * of these. Their values overlap -errno (PD_ERR_NOATTR is -ENOMEM), so a
 * -errno must not cross a public function: it is turned into a pd status
 * where it arises (the session turns its decoders' -ENOMEM into
 * PD_ERR_NOMEM). The CLI maps statuses to exit codes in one place
 * (cli_status_of): NOMEM / NOSPC 4, INVAL 1, the rest (input) 2.
 */
enum pd_status {
	PD_OK = 0,
	PD_ERR_INVAL = -1,       /* bad argument from the caller */
	PD_ERR_NOMEM = -2,       /* allocation failed */
	PD_ERR_IO = -3,          /* read or write failed; message has strerror */
	PD_ERR_MAGIC = -4,       /* not a perf.data file */
	PD_ERR_HEADER = -5,      /* file header inconsistent */
	PD_ERR_ATTR = -6,        /* attr section or attr record malformed */
	PD_ERR_FEATURE = -7,     /* a feature section is malformed */
	PD_ERR_RECORD = -8,      /* a record is malformed */
	PD_ERR_TRUNCATED = -9,   /* the file ends inside a structure */
	PD_ERR_UNSUPPORTED = -10,/* valid but not handled (e.g. zstd missing) */
	PD_ERR_NOSPC = -11,      /* the disk is full (writer) */
	PD_ERR_NOATTR = -12,     /* a record cannot be attributed to an evsel */
};

#define PD_NO_OFFSET UINT64_MAX

struct pd_error {
	int code;              /* enum pd_status, 0 when no error */
	uint64_t offset;       /* file offset of the problem, PD_NO_OFFSET if none */
	int rec_type;          /* record type involved, -1 if none */
	int feature;           /* feature id involved, -1 if none */
	char msg[320];         /* complete sentence: what and where */
};

/* Text for a status code ("record malformed", ...). Never NULL. */
const char *pd_strerror(int code);

/* Clear @err (code 0, no offset). Accepts NULL. */
void pd_error_clear(struct pd_error *err);

/* Warning callback: the file is still usable. @w is valid during the call. */
typedef void (*pd_warn_fn)(void *ctx, const struct pd_error *w);

/* Names: "SAMPLE", "MMAP2", "FINISHED_ROUND" ... as perf prints them; NULL if unknown. */
const char *pd_record_name(uint32_t type);
/* Names: "hostname", "event_desc" ...; NULL if unknown. */
const char *pd_feature_name(unsigned feat);

/* ------------------------------------------------------------- event attr */

/*
 * struct perf_event_attr as of ABI VER8 (136 bytes), laid out exactly as the
 * UAPI struct so that it can be copied to and from the kernel's. The flag
 * word is the UAPI bitfield in the host's allocation: use pd_attr_flag().
 */
struct pd_event_attr {
	uint32_t type;
	uint32_t size;
	uint64_t config;
	uint64_t sample_period;     /* or sample_freq when the freq flag is set */
	uint64_t sample_type;
	uint64_t read_format;
	uint64_t flags;             /* bitfield word, see enum pd_attr_flag_bit */
	uint32_t wakeup_events;     /* or wakeup_watermark */
	uint32_t bp_type;
	uint64_t config1;           /* bp_addr, kprobe_func, uprobe_path */
	uint64_t config2;           /* bp_len, kprobe_addr, probe_offset */
	uint64_t branch_sample_type;
	uint64_t sample_regs_user;
	uint32_t sample_stack_user;
	int32_t clockid;
	uint64_t sample_regs_intr;
	uint32_t aux_watermark;
	uint16_t sample_max_stack;
	uint16_t reserved_2;
	uint32_t aux_sample_size;
	uint32_t aux_action;
	uint64_t sig_data;
	uint64_t config3;
};

/* Mask of UAPI flag bit @bit in the host's bitfield allocation. */
static inline uint64_t pd_attr_flag_mask(unsigned bit)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return 1ULL << (63 - bit);
#else
	return 1ULL << bit;
#endif
}
static inline int pd_attr_flag(const struct pd_event_attr *a, unsigned bit)
{
	return (a->flags & pd_attr_flag_mask(bit)) != 0;
}

/* One event selector: an attr, the sample ids the kernel gave its fds, a name. */
struct pd_evsel {
	struct pd_event_attr attr;   /* native byte order; fields past attr.size are 0 */
	uint64_t *ids;               /* nr_ids sample ids */
	size_t nr_ids;
	char *name;                  /* from EVENT_DESC / EVENT_UPDATE, or synthesized */
	int given_name;              /* 1: the recording's own name for it, as perf applies them; 0: made
					here (perf's defaults without modifiers, or an EVENT_DESC that came
					before the event's ATTR in pipe mode, which perf does not apply) */
	int id_pos;                  /* u64 index of the id in a SAMPLE body, -1 if none */
	int is_pos;                  /* u64 index of the id counted from a trailer's end (1 = last), -1 if none */
	size_t trailer_size;         /* bytes of sample_id trailer on non-sample records */
};

/*
 * perf's name for a hardware or software event (type, config) that no
 * feature names: "cycles", "cpu-clock", ...; NULL for other events. The
 * reader gives it to evsels without a name.
 */
const char *pd_evsel_default_name(uint32_t type, uint64_t config);
/*
 * perf's modifiers of an event's name (evsel__add_modifiers): ":u", ":k",
 * ":ppp", ":uH", ... or "" from the exclude bits and precise_ip of @a, as
 * perf adds them to the names it makes ("branches:u" for an intel_pt//u
 * trace). Returns snprintf's count.
 */
int pd_attr_modifiers(const struct pd_event_attr *a, char *buf, size_t n);
/*
 * The name perf gives @es (evsel__name): the recording's (given_name, or a
 * tracepoint's), else perf's own from the attr ("cycles:u", "raw 0x1c2",
 * "L1-dcache-load-misses", "mem:0x1000:rw", "unknown attr type: 8").
 * Returns snprintf's count.
 */
int pd_evsel_perf_name(const struct pd_evsel *es, char *buf, size_t n);

/* --------------------------------------------------------------- records */

/* A record as the reader yields it: native byte order, valid until the next call. */
struct pd_record {
	uint64_t offset;        /* file offset of the record header (of the enclosing COMPRESSED record if from one) */
	uint32_t type;
	uint16_t misc;
	uint32_t size;          /* header.size: the bytes at data (32 bits for simpleperf's records) */
	uint8_t *data;          /* the whole record, header included */
	int evsel;              /* index of the evsel it belongs to, -1 if none or unknown */
	int from_compressed;    /* 1 if it came out of a COMPRESSED record */
	uint64_t payload_size;  /* bytes that follow outside header.size (AUXTRACE, TRACING_DATA) */
	uint64_t payload_offset;/* file offset of those bytes */
};

struct pd_sample_id {
	uint64_t present;       /* PD_SAMPLE_* bits that were in the trailer */
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id;
	uint64_t stream_id;
	uint32_t cpu, res;
	uint64_t identifier;
};

struct pd_read_value { uint64_t value, id, lost; };
struct pd_read {
	uint64_t nr;                 /* values (1 unless group) */
	uint64_t time_enabled, time_running;
	const uint8_t *values;       /* nr entries of value_size bytes: use pd_read_value_at() */
	unsigned value_size;         /* 8, 16 or 24 */
	uint64_t read_format;
};
void pd_read_value_at(const struct pd_read *r, uint64_t i, struct pd_read_value *v);
/*
 * Samples that carry PERF_SAMPLE_READ, as perf delivers them (pd_deliver.c):
 * one per counter value read, of the event that owns the value's id, with
 * the counter's growth since its last value as period; none for an unknown
 * id or no growth. A tracker holds the last value of every counter: one per
 * pass over a recording, fed every such sample once, in order.
 * pd_read_deliveries returns how many (@out: valid until the next call;
 * perhaps 0), or -1 out of memory. A sample without PERF_SAMPLE_READ is
 * delivered as it is (0 here).
 */
struct pd_reader;
struct pd_read_delivery { int evsel; uint64_t id, period; };
struct pd_read_tracker;
struct pd_read_tracker *pd_read_tracker_new(void);
void pd_read_tracker_free(struct pd_read_tracker *t);
struct pd_sample;
int pd_read_deliveries(struct pd_read_tracker *t, const struct pd_reader *r, const struct pd_sample *s,
		       const struct pd_read_delivery **out);

struct pd_regs { uint64_t abi; uint64_t mask; uint64_t nr; const uint8_t *regs; };

struct pd_sample {
	uint64_t type;               /* sample_type of the evsel */
	uint64_t identifier, ip;
	uint32_t pid, tid;
	uint64_t time, addr, id, stream_id;
	uint32_t cpu, res;
	uint64_t period;
	struct pd_read read;
	uint64_t callchain_nr;
	const uint8_t *callchain;    /* callchain_nr u64 (unaligned-safe: use pd_u64_at) */
	uint32_t raw_size;
	const uint8_t *raw;          /* raw_size bytes, in the recording host's byte order */
	uint64_t branch_nr;
	uint64_t branch_hw_idx;      /* valid if branch_has_hw_idx */
	int branch_has_hw_idx;
	const uint8_t *branches;     /* branch_nr × {from, to, flags} u64 */
	const uint8_t *branch_counters; /* branch_nr u64 if BRANCH_COUNTERS */
	struct pd_regs regs_user, regs_intr;
	uint64_t stack_size, stack_dyn_size;
	const uint8_t *stack;
	uint64_t weight;
	uint64_t data_src, transaction, phys_addr, cgroup, data_page_size, code_page_size;
	uint64_t aux_size;
	const uint8_t *aux;
};

/* Native-order u64 at a possibly unaligned address. */
/*
 * A hardware time-stamp count to perf time (perf's tsc_to_perf_time, facts
 * file 4.2) with TIME_CONV's or AUXTRACE_INFO's shift, mult and zero. The
 * caller applies cap_user_time_short's wrap first; @shift must be < 64.
 */
static inline uint64_t pd_tsc_to_perf_time(uint64_t cyc, uint64_t shift, uint64_t mult, uint64_t zero)
{
	uint64_t quot = cyc >> shift, rem = cyc & (((uint64_t)1 << shift) - 1);
	return zero + quot * mult + ((rem * mult) >> shift);
}

static inline uint64_t pd_u64_at(const uint8_t *p, uint64_t i)
{
	uint64_t v;
	__builtin_memcpy(&v, p + 8 * i, 8);
	return v;
}

struct pd_id_index_entry { uint64_t id, idx, cpu, tid, machine_pid, vcpu; };

/* A parsed record: the body of every kernel and user record type. */
struct pd_event {
	uint32_t type;
	uint16_t misc;
	struct pd_sample_id sid;     /* trailer of non-sample kernel records (present = 0 if none) */
	union {
		struct pd_sample sample;
		struct { uint32_t pid, tid; uint64_t start, len, pgoff; const char *filename; } mmap;
		struct { uint32_t pid, tid; uint64_t start, len, pgoff;
			 uint32_t maj, min; uint64_t ino, ino_generation;
			 uint8_t build_id_size; const uint8_t *build_id;
			 uint32_t prot, flags; const char *filename; } mmap2;
		struct { uint64_t id, lost; } lost;
		struct { uint32_t pid, tid; const char *comm; } comm;
		struct { uint32_t pid, ppid, tid, ptid; uint64_t time; } fork;   /* FORK and EXIT */
		struct { uint64_t time, id, stream_id; } throttle;             /* THROTTLE, UNTHROTTLE */
		struct { uint32_t pid, tid; struct pd_read values; } read;
		struct { uint64_t aux_offset, aux_size, flags; } aux;
		struct { uint32_t pid, tid; } itrace_start;
		struct { uint64_t lost; } lost_samples;
		struct { uint32_t next_prev_pid, next_prev_tid; } context_switch; /* SWITCH_CPU_WIDE */
		struct { uint32_t pid, tid; uint64_t nr; const uint8_t *link_info; } namespaces;
		struct { uint64_t addr; uint32_t len; uint16_t ksym_type, flags; const char *name; } ksymbol;
		struct { uint16_t type, flags; uint32_t id; const uint8_t *tag; } bpf_event;
		struct { uint64_t id; const char *path; } cgroup;
		struct { uint64_t addr; uint16_t old_len, new_len; const uint8_t *bytes; } text_poke;
		struct { uint64_t hw_id; } aux_output_hw_id;

		struct { const uint8_t *attr; uint32_t attr_size; uint64_t nr_ids; const uint8_t *ids; } header_attr;
		struct { uint64_t event_id; char name[65]; } event_type;   /* name: NUL-terminated copy */
		struct { uint32_t size; } tracing_data;
		struct { int32_t pid; uint8_t size; const uint8_t *build_id; const char *filename; } build_id;
		struct { uint64_t nr; unsigned entry_size; const uint8_t *entries; } id_index;
		struct { uint32_t type; uint64_t nr_priv; const uint8_t *priv; } auxtrace_info;
		struct { uint64_t size, offset, reference; uint32_t idx, tid, cpu; } auxtrace;
		struct { uint32_t type, code, cpu, pid, tid, fmt; uint64_t ip, time;
			 char msg[PD_AUXTRACE_ERROR_MSG_MAX + 1];
			 int has_machine; uint32_t machine_pid, vcpu; } auxtrace_error;
		struct { uint64_t nr; const uint8_t *entries; } thread_map;    /* {u64 pid; char comm[16]} */
		struct { uint16_t type; uint16_t nr; uint16_t long_size; const uint8_t *data;
			 uint8_t any_cpu; uint16_t start_cpu, end_cpu; } cpu_map;
		struct { uint64_t nr; const uint8_t *pairs; } stat_config;
		struct { uint64_t id; uint32_t cpu, thread; uint64_t val, ena, run; } stat;
		struct { uint64_t type, time; } stat_round;
		struct { uint64_t type, id; const uint8_t *data; size_t size; } event_update;
		struct { uint64_t time_shift, time_mult, time_zero, time_cycles, time_mask;
			 uint8_t cap_user_time_zero, cap_user_time_short; int has_cycles; } time_conv;
		struct { uint64_t feat_id; const uint8_t *data; size_t size; } feature;
		struct { const uint8_t *data; size_t size; } compressed;
	} u;
};

void pd_id_index_entry_at(const struct pd_event *ev, uint64_t i, struct pd_id_index_entry *e);
/* CPU_MAP: calls @fn for every CPU in the map; returns the count. */
size_t pd_cpu_map_each(const struct pd_event *ev, void (*fn)(void *ctx, unsigned cpu), void *ctx);

/* ---------------------------------------------------------------- reader */

struct pd_reader;

struct pd_reader_opts {
	size_t size;            /* sizeof(struct pd_reader_opts), set by pd_reader_opts_init */
	pd_warn_fn warn;        /* may be NULL */
	void *warn_ctx;
	size_t buf_size;        /* read buffer; 0 = default (4 MiB) */
};
void pd_reader_opts_init(struct pd_reader_opts *o);

struct pd_file_info {
	int pipe_mode;          /* 1: pipe-mode stream (header 16 bytes) */
	int swapped;            /* 1: written on the other byte order */
	int legacy_magic;       /* 1: "PERFFILE" v1 magic */
	uint64_t header_size;
	uint64_t attr_size;     /* attr entry stride (file mode) */
	uint64_t attrs_offset, attrs_size;
	uint64_t data_offset, data_size;
	int data_size_unknown;  /* writer did not finish: data read to end of file */
	uint64_t features[4];   /* adds_features bitmap */
	uint64_t file_size;     /* 0 for pipes */
};

/*
 * Open @path ("-" for standard input). File mode needs a seekable file; pipe
 * mode reads any stream. Header, attrs and feature sections are read now;
 * records are read by pd_reader_next().
 * Returns 0, or PD_ERR_IO / MAGIC / HEADER / ATTR / TRUNCATED / NOMEM.
 */
int pd_reader_open(struct pd_reader **out, const char *path,
		   const struct pd_reader_opts *opts, struct pd_error *err);
/* Open @path but name it @name in every message (a spool file standing for "<stdin>"). */
int pd_reader_open_as(struct pd_reader **out, const char *path, const char *name,
		      const struct pd_reader_opts *opts, struct pd_error *err);
/* Same on an open descriptor; @own: close it in pd_reader_free. */
int pd_reader_open_fd(struct pd_reader **out, int fd, const char *name, int own,
		      const struct pd_reader_opts *opts, struct pd_error *err);
/* Accepts NULL and half-opened readers. */
void pd_reader_free(struct pd_reader *r);

const struct pd_file_info *pd_reader_info(const struct pd_reader *r);
const char *pd_reader_name(const struct pd_reader *r);
size_t pd_reader_nr_evsels(const struct pd_reader *r);
const struct pd_evsel *pd_reader_evsel(const struct pd_reader *r, size_t i);
/* Index of the evsel that owns sample id @id, or -1. */
int pd_reader_evsel_of_id(const struct pd_reader *r, uint64_t id);

/*
 * Feature payload in native byte order (already converted for swapped files),
 * with the file offset it came from. Returns 1 if present, 0 if not.
 * In pipe mode, features arrive as HEADER_FEATURE records: they are present
 * once pd_reader_next() has passed them.
 */
int pd_reader_feature(const struct pd_reader *r, unsigned feat,
		      const uint8_t **data, size_t *size, uint64_t *offset);

/*
 * Next record. Returns 1 and fills @rec, 0 at the end of the data, or a
 * negative status: the stream cannot continue (PD_ERR_RECORD for a header
 * whose size is impossible, PD_ERR_TRUNCATED when the file ends inside a
 * record, PD_ERR_IO). Records whose body is malformed are still yielded:
 * pd_event_parse() finds those, and the caller may go on.
 * Any AUXTRACE / TRACING_DATA payload not read with pd_reader_read_payload()
 * is skipped by the next call.
 */
int pd_reader_next(struct pd_reader *r, struct pd_record *rec, struct pd_error *err);

/* Read up to @len bytes of the current record's payload. Returns bytes read or < 0. */
int64_t pd_reader_read_payload(struct pd_reader *r, void *buf, size_t len, struct pd_error *err);

/* Bytes of the data section consumed so far (for progress). */
uint64_t pd_reader_position(const struct pd_reader *r);

/*
 * Parse @rec into @ev, checking every length against header.size.
 * Needs the reader for the record's evsel (samples, trailers).
 * Returns 0, PD_ERR_RECORD (malformed body) or PD_ERR_NOATTR (sample whose
 * id matches no evsel).
 */
int pd_event_parse(const struct pd_reader *r, const struct pd_record *rec,
		   struct pd_event *ev, struct pd_error *err);

/*
 * The time a kernel record carries (a sample's, or its sample_id trailer's),
 * as a reader orders records by it: 1 and *@t, or 0 when its evsel records
 * none (or the record is too short to hold it).
 */
int pd_record_time(const struct pd_reader *r, const struct pd_record *rec, uint64_t *t);

/* Lower level: sample body / trailer of a native record for a given evsel. */
int pd_sample_parse(const struct pd_evsel *es, const uint8_t *rec, size_t size,
		    struct pd_sample *s, struct pd_error *err);
int pd_sample_id_parse(const struct pd_evsel *es, const uint8_t *rec, size_t size,
		       struct pd_sample_id *sid, struct pd_error *err);

/* -------------------------------------------------------- byte order swap */

/*
 * Convert a record between the foreign byte order and native, in place.
 * @to_native: 1 when @rec was read from a foreign file, 0 when it is native
 * and about to be written foreign. @es: the record's evsel (needed for SAMPLE
 * bodies and sample_id trailers), NULL if it has none. Never reads past @size.
 * HEADER_FEATURE: only the feature id is converted; convert the payload with
 * pd_swap_feature(), which needs the NRCPUS value.
 * Returns 0 or PD_ERR_RECORD.
 */
int pd_swap_record(uint8_t *rec, size_t size, const struct pd_evsel *es,
		   int to_native, struct pd_error *err);
/* perf_event_attr of @size bytes (the flag bitfield is bit-reversed per byte). */
void pd_swap_attr(uint8_t *attr, size_t size, int to_native);
/* A feature payload. Returns 0 or PD_ERR_FEATURE. */
int pd_swap_feature(unsigned feat, uint8_t *data, size_t size, int to_native, uint32_t nr_cpus_avail,
		    struct pd_error *err);
/* Walk a native feature payload and check every length against @size. 0 or PD_ERR_FEATURE. */
int pd_feature_check(unsigned feat, const uint8_t *data, size_t size, uint32_t nr_cpus_avail,
		     struct pd_error *err);
/* Peek the sample id of a foreign-order record without converting it; 0 if none. */
int pd_peek_id(const uint8_t *rec, size_t size, int swapped, int id_pos, int is_pos,
	       uint64_t *id);

/* --------------------------------------------------------------- features */

struct pd_feature_string_list { uint32_t nr; const char **str; };

/*
 * The parsed features of a file, for display. Pointers refer to the reader's
 * feature buffers or to memory owned by the struct (pd_features_free).
 */
struct pd_features {
	const char *hostname, *osrelease, *version, *arch, *cpudesc, *cpuid;
	int has_nrcpus; uint32_t nr_cpus_avail, nr_cpus_online;
	int has_total_mem; uint64_t total_mem_kb;
	struct pd_feature_string_list cmdline;
	int has_sample_time; uint64_t first_sample_time, last_sample_time;
	int has_clockid; uint64_t clockid_res_ns;
	int has_clock_data; uint32_t clock_data_clockid; uint64_t clock_tod_ns, clock_clockid_ns;
	struct pd_feature_string_list core_siblings, thread_siblings;
	uint32_t nr_pmu_mappings; uint32_t *pmu_types; const char **pmu_names;
	uint32_t nr_groups;
	uint64_t nr_auxtrace_index; const uint8_t *auxtrace_index;  /* {u64 offset, u64 size} */
	uint32_t nr_build_ids;
	int has_compressed; uint32_t comp_ver, comp_type, comp_level, comp_ratio, comp_mmap_len;
	int has_dir_format; uint64_t dir_format_version;
	uint32_t nr_numa_nodes;
	struct pd_numa_node { uint32_t node; uint64_t mem_total_kb, mem_free_kb; const char *cpus; } *numa;
	uint32_t nr_caches;
	struct pd_cache_level { uint32_t level, line_size, sets, ways; const char *type, *size, *map; } *caches;
	struct pd_group_desc { const char *name; uint32_t leader_idx, nr_members; } *groups;
	struct pd_feature_string_list cpu_pmu_caps;    /* name, value, name, value ... */
	struct pd_feature_string_list hybrid_topology; /* pmu, cpus, pmu, cpus ... */
	uint32_t nr_pmu_caps;
	struct pd_pmu_caps { const char *pmu; struct pd_feature_string_list caps; } *pmu_caps;
	int has_mem_topology; uint64_t mem_block_size, mem_nr_nodes;
	uint32_t nr_bpf_prog_info, nr_bpf_btf;
	uint32_t nr_event_desc;
	uint64_t unknown[4];          /* feature bits this library does not know */
	uint64_t bad[4];              /* features present but malformed */
};
/*
 * Parse every known feature of @r into @f. A malformed feature is reported
 * through the warning callback and marked in f->bad; the rest still parse.
 * Returns 0 or PD_ERR_NOMEM.
 */
int pd_features_parse(const struct pd_reader *r, struct pd_features *f, struct pd_error *err);
void pd_features_free(struct pd_features *f);
/*
 * Walk the entries of a BUILD_ID feature payload (native order): @fn gets
 * each entry's header misc (cpumode, BUILD_ID_SIZE flag), pid, build-id
 * bytes and their count (the entry's size byte when misc says so, else 20;
 * may exceed 20 in a damaged file), and its file name. Stops at the first
 * malformed entry. Returns the number of entries passed to @fn.
 */
typedef void (*pd_build_id_fn)(void *ctx, uint16_t misc, int32_t pid, const uint8_t *id, unsigned id_size,
			       const char *name);
size_t pd_build_id_each(const uint8_t *data, size_t size, pd_build_id_fn fn, void *ctx);
/*
 * simpleperf's features (pd_simpleperf.c). pd_sp_meta_each passes each
 * META_INFO key and value to @fn and returns the number passed, stopping at
 * the first malformed one. pd_sp_event_name copies into @buf (@n bytes) the
 * name META_INFO's event_type_info gives the event (@type, @config): @buf,
 * or NULL when it names none.
 *
 * The symbol table simpleperf stores per binary, so that a recording can be
 * symbolized without the binaries, comes in feature FILE (128: packed
 * entries) or, from 2021 on, FILE2 (132: protobuf FileFeature messages);
 * simpleperf reads FILE when both are there. Its symbols are ELF virtual
 * addresses (vaddr_in_file); offset_of_min_vaddr says where min_vaddr is:
 * for an ELF file its file offset, for a kernel module its offset in the
 * module's memory (PD_SP_NO_OFFSET when the recording does not say, as
 * simpleperf's FILE entries before 2019 do not).
 */
enum pd_sp_dso_type {            /* simpleperf's DsoType, as its files store it */
	PD_SP_DSO_KERNEL, PD_SP_DSO_KERNEL_MODULE, PD_SP_DSO_ELF, PD_SP_DSO_DEX, PD_SP_DSO_SYMBOL_MAP,
	PD_SP_DSO_UNKNOWN,
};
#define PD_SP_NO_OFFSET UINT64_MAX
struct pd_sp_file {
	const char *path;              /* NUL-terminated; valid during the callback */
	uint32_t type;                 /* enum pd_sp_dso_type */
	uint64_t min_vaddr;
	uint64_t offset_of_min_vaddr;  /* see above */
	uint32_t nr_symbols;
	uint32_t nr_dex_offsets;       /* dex files: offsets of the dex files in it */
	uint64_t offset;               /* file offset of the entry (its size field) */
	const uint8_t *syms;           /* for pd_sp_file_symbols: the symbol table (FILE) or the message (FILE2) */
	size_t syms_size;
	int proto;                     /* 1: from FILE2 */
};
struct pd_sp_symbol {
	uint64_t vaddr;
	uint32_t len;                  /* 0: simpleperf did not know its size */
	const char *name;              /* not NUL-terminated in FILE2: use name_len */
	size_t name_len;
};
typedef void (*pd_sp_meta_fn)(void *ctx, const char *key, const char *value);
typedef void (*pd_sp_file_fn)(void *ctx, const struct pd_sp_file *f);
typedef void (*pd_sp_symbol_fn)(void *ctx, const struct pd_sp_symbol *s);
size_t pd_sp_meta_each(const uint8_t *data, size_t size, pd_sp_meta_fn fn, void *ctx);
/*
 * Walk the entries of a FILE (@feat PD_FEAT_SP_FILE) or FILE2
 * (PD_FEAT_SP_FILE2) payload found at file offset @base, checking each one
 * whole (every symbol, the fields after them) before passing it to @fn.
 * Returns the number passed; at the first malformed entry it stops and, if
 * @err is not NULL, fills it (PD_ERR_FEATURE, the entry's file offset, a
 * message naming the feature, the offset and what is wrong).
 */
size_t pd_sp_file_each(unsigned feat, const uint8_t *data, size_t size, uint64_t base, pd_sp_file_fn fn,
		       void *ctx, struct pd_error *err);
/* The same for the recording @r: FILE if present, else FILE2, as simpleperf chooses. */
size_t pd_sp_files(const struct pd_reader *r, pd_sp_file_fn fn, void *ctx, struct pd_error *err);
/* Pass each symbol of an entry pd_sp_file_each gave (valid during its callback) to @fn, in stored order. */
void pd_sp_file_symbols(const struct pd_sp_file *f, pd_sp_symbol_fn fn, void *ctx);
const char *pd_sp_file_type_name(uint32_t type);   /* simpleperf's DsoType: "kernel", "elf", ... */
const char *pd_sp_event_name(const uint8_t *meta, size_t size, uint32_t type, uint64_t config, char *buf,
			     size_t n);
/*
 * Tracing data (pd_tracing.c): the TRACING_DATA feature, perf's pipe-mode
 * record's payload or simpleperf's record. pd_tracing_each passes each
 * event format's ID, system and name to @fn and each malformed field to
 * @warn with its offset (@base: the offset of @data in the file) and a
 * message naming it; a damaged count or size ends the walk. Returns the
 * number of formats passed, or -1 when @data is not tracing data.
 */
typedef void (*pd_tracing_fn)(void *ctx, uint64_t id, const char *system, const char *name);
typedef void (*pd_tracing_warn_fn)(void *ctx, uint64_t offset, const char *msg);
long pd_tracing_each(const uint8_t *data, size_t size, uint64_t base, pd_tracing_fn fn, pd_tracing_warn_fn warn,
		     void *ctx);
/* Look up the PMU name for attr.type through PMU_MAPPINGS; NULL if unknown. */
const char *pd_features_pmu_name(const struct pd_features *f, uint32_t type);

/* --------------------------------------------------------- AUXTRACE_INFO */

/*
 * Name the private words of an AUXTRACE_INFO record (facts sections 4.1 and
 * 5.1): Intel PT's fields, CoreSight's header and per-CPU ETMv3 / ETMv4 / ETE
 * blocks, Intel BTS's; other PMUs' words as priv[i]. @fn gets a key such as
 * "tsc_bit" or "cpu2.trctraceidr", the value, and for strings (PT address
 * filter) the text. Returns the auxtrace type's name ("intel_pt", ...).
 * Malformed layouts are reported through @fn with key "error" and @str.
 */
typedef void (*pd_kv_fn)(void *ctx, const char *key, uint64_t value, const char *str);
const char *pd_auxtrace_info_describe(const struct pd_event *ev, int swapped_file,
				      pd_kv_fn fn, void *ctx);
const char *pd_auxtrace_type_name(uint32_t type);
/*
 * Intel PT's address filter string (priv[16] its length, the bytes from
 * priv[17], facts 4.1) into @out (cut to @outsz); *end the index of the
 * word after it. 1: a string, 0: none, -1: it runs past the @n words.
 */
int pd_pt_filter_string(const uint8_t *priv, uint64_t n, int swapped, char *out, size_t outsz, uint64_t *end);

/* ----------------------------------------------------------------- writer */

struct pd_writer;

struct pd_writer_opts {
	size_t size;            /* sizeof(struct pd_writer_opts), set by pd_writer_opts_init */
	int pipe_mode;          /* write a pipe-mode stream (no seeking needed) */
	int foreign;            /* write the other byte order (tests, cross-endian fixtures) */
};
void pd_writer_opts_init(struct pd_writer_opts *o);

/* Open @path for writing ("-" = stdout, which needs pipe_mode unless seekable). */
int pd_writer_open(struct pd_writer **out, const char *path,
		   const struct pd_writer_opts *opts, struct pd_error *err);
int pd_writer_open_fd(struct pd_writer **out, int fd, const char *name, int own,
		      const struct pd_writer_opts *opts, struct pd_error *err);

/*
 * Add an event selector (native attr, its sample ids, a name). All evsels
 * must be added before the first record. Returns its index or < 0.
 */
int pd_writer_add_evsel(struct pd_writer *w, const struct pd_event_attr *attr,
			const uint64_t *ids, size_t nr_ids, const char *name,
			struct pd_error *err);

/*
 * Set a feature payload (native byte order; converted when writing foreign).
 * Must come before the first record in pipe mode. EVENT_DESC is written from
 * the evsels when not set; AUXTRACE from the AUXTRACE records written.
 */
int pd_writer_set_feature(struct pd_writer *w, unsigned feat, const void *data,
			  size_t size, struct pd_error *err);

/*
 * Append a native record of header.size bytes, then @payload_len bytes of
 * payload (AUXTRACE data, TRACING_DATA), which the caller pads to 8.
 * @evsel: the record's evsel index for foreign conversion, or -1 to look it up
 * by sample id.
 */
int pd_writer_write(struct pd_writer *w, const void *rec, int evsel,
		    const void *payload, size_t payload_len, struct pd_error *err);
/* Append more payload bytes for the last record (AUXTRACE data in pieces). */
int pd_writer_write_payload(struct pd_writer *w, const void *data, size_t len,
			    struct pd_error *err);

/* Bytes of data written so far. */
uint64_t pd_writer_data_size(const struct pd_writer *w);
/*
 * Push buffered records to the file now (a recorder calls it after each pass
 * over its rings, so that a pipe reader sees them and a SIGKILL loses at most
 * one pass). Returns 0 or PD_ERR_IO / PD_ERR_NOSPC.
 */
int pd_writer_flush(struct pd_writer *w, struct pd_error *err);

/*
 * Finish: file mode writes the feature sections and the final header; pipe
 * mode flushes. Returns 0 or an error; the writer is freed either way.
 */
int pd_writer_close(struct pd_writer *w, struct pd_error *err);
/* Abandon without finishing (frees). */
void pd_writer_free(struct pd_writer *w);

/* Feature payload builder (native byte order). */
struct pd_buf { uint8_t *data; size_t len, cap; int oom; };
void pd_buf_u32(struct pd_buf *b, uint32_t v);
void pd_buf_u64(struct pd_buf *b, uint64_t v);
void pd_buf_bytes(struct pd_buf *b, const void *p, size_t n);
void pd_buf_string(struct pd_buf *b, const char *s);   /* u32 len, NUL-padded to 64 */
void pd_buf_free(struct pd_buf *b);

#ifdef __cplusplus
}
#endif
#endif /* PD_H */
