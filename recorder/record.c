/*
 * record.c - a recording session in one of perf record's modes:
 *   default      every online CPU x the command's pid, inherit, one ring per CPU
 *   per-thread   cpu -1 x each thread, one ring per thread (the kernel refuses
 *                mmap of inherited per-task events, so no inherit)
 *   -C list      those CPUs, pid -1 (or x the -p / -t threads)
 *   -a           every online CPU, pid -1
 * Events are opened CPU by CPU, thread by thread, leader before members;
 * the first fd on a CPU (per-thread: on a thread) owns the ring and every
 * other fd there is redirected into it with PERF_EVENT_IOC_SET_OUTPUT.
 *
 * Records go to the perf.data writer as they are drained, with a
 * FINISHED_ROUND after each pass over all rings (perf's ordering promise:
 * nothing after a round is older than what came before the previous one).
 *
 * An event of a PMU with an AUX area (intel_pt, intel_bts, cs_etm, arm_spe)
 * owns the ring of its CPU (thread) and maps the AUX area after it; the
 * AUX area is drained after the ring on each pass (AUXTRACE records), or,
 * with -S, read only on a snapshot (recorder/auxring.c). AUXTRACE_INFO
 * follows ID_INDEX as perf writes it; the sideband (mmap, comm, task,
 * context switches) then goes on a separate tracking event (dummy:u).
 *
 * A full disk stops the recording: a reserve of space, taken at open as an
 * unnamed file in the output's directory, is released so that the writer
 * can still write the feature sections and the header.
 *
 * With -z the records drained from each ring are compressed together into
 * PERF_RECORD_COMPRESSED records (recorder/zcomp.c); what rbrecord
 * synthesizes, FINISHED_ROUND and AUX data stay plain, as in perf's files.
 * --mmap-flush leaves a ring that holds fewer bytes for a later pass (not
 * at the end).
 * With --threads (a perf.data folder) the forward rings are drained by
 * reader threads into OUTPUT/data.N (recorder/threads.c) and OUTPUT/data
 * keeps the header, the synthesized records and the features, DIR_FORMAT
 * among them; the main thread only watches for hang-ups and the control fd.
 *
 * Workload: 1 to a few hundred rings, up to tens of MB/s. Never prints.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "pd.h"
#include "auxinfo.h"
#include "auxring.h"
#include "record.h"
#include "synth.h"
#include "threads.h"
#include "tracing.h"
#include "zcomp.h"

/*
 * PERIOD only with a frequency: with a fixed period the kernel samples every
 * single software event that asks for PERIOD (perf_swevent_event), as perf knows.
 */
#define SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
		     PERF_SAMPLE_CPU)
#define SAMPLE_TIME_OFFSET 32   /* header, identifier, ip, pid/tid: then time */
#define TRAILER_SIZE 32         /* sample_id_all: tid, time, cpu, identifier */
#define RESERVE_BYTES (8 << 20)    /* writer buffer (1 MiB) + feature sections, with room to spare */
#define RESERVE_MIN (3 << 19)      /* 1.5 MiB: the writer buffer and the features */

struct pathset {                 /* open addressing; cap a power of two */
	char **v;
	size_t n, cap;
};

struct record {
	struct rec_opts o;
	struct ev_list *evl;
	int *cpus;                   /* -1 alone for per-thread */
	int nr_cpus;
	int *tids;                   /* -1 alone for system-wide */
	int nr_tids;
	int *fds;                    /* [cpu][thread][event] */
	uint64_t *ids;               /* same index as fds */
	size_t nr_fds;
	struct ring **rings;         /* one per CPU (per thread in per-thread mode), in that order */
	size_t nr_rings;             /* rings mapped so far */
	size_t rings_cap;            /* slots in rings[] */
	struct pd_writer *w;
	int pipe;
	int reserve_fd;              /* space released on ENOSPC, -1 if none */
	struct rthreads *thr;        /* --threads: the reader threads, NULL otherwise */
	struct rec_stats st;
	uint64_t first_time, last_time;
	int have_time;
	struct pathset paths;        /* files named by MMAP2 records: BUILD_ID candidates */
	struct rec_err werr;         /* first write error */
	int targets_gone;            /* thread-bound events all hung up: nothing more will come */
	int fmt_lost;                /* the kernel reports each event's lost samples (PERF_FORMAT_LOST, 6.0+) */
	int tracking;                /* event carrying the sideband: mmap, comm, task (, switches) */
	int aux_ev;                  /* the AUX-area event, -1 if none */
	struct aux_pmu auxpmu;       /* its PMU */
	size_t aux_size;             /* AUX area bytes per ring */
	struct aux_ring *aux;        /* [rings_cap]: the AUX area after each ring, valid where aux_map is */
	void **aux_map;              /* [rings_cap] mapping, NULL if none */
	struct aux_ctx { struct record *s; size_t key; } *aux_ctx;   /* ops context per ring */
	struct aux_counts counts;    /* over the kernel's AUX, ITRACE_START, AUX_OUTPUT_HW_ID records */
	uint64_t snapshots;
	struct zcomp *z;             /* -z: the session's zstd stream, NULL without -z */
	int final;                   /* the last drain: --mmap-flush no longer holds anything back */
	uint64_t z_in0, z_out0;      /* -z: compressor totals when the current file began (--switch-output) */
	int argc;                    /* the command line, for the CMDLINE feature of each new file */
	char **argv;
	int rotated;                 /* --switch-output started a new file: the workload runs already */
	uint64_t bytes_done;         /* data bytes of the files --switch-output finished */
};

/* ------------------------------------------------------------ paths */

static uint64_t fnv(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	return h;
}

static int pathset_add(struct pathset *p, const char *s)
{
	if ((p->n + 1) * 2 > p->cap) {
		size_t ncap = p->cap ? 2 * p->cap : 256;
		char **nv = calloc(ncap, sizeof(*nv));
		if (!nv)
			return -1;
		for (size_t i = 0; i < p->cap; i++)
			if (p->v[i]) {
				size_t k = fnv(p->v[i]) & (ncap - 1);
				while (nv[k])
					k = (k + 1) & (ncap - 1);
				nv[k] = p->v[i];
			}
		free(p->v);
		p->v = nv;
		p->cap = ncap;
	}
	size_t k = fnv(s) & (p->cap - 1);
	while (p->v[k]) {
		if (!strcmp(p->v[k], s))
			return 0;
		k = (k + 1) & (p->cap - 1);
	}
	if (!(p->v[k] = strdup(s)))
		return -1;
	p->n++;
	return 0;
}

static void pathset_free(struct pathset *p)
{
	for (size_t i = 0; i < p->cap; i++)
		free(p->v[i]);
	free(p->v);
	memset(p, 0, sizeof(*p));
}

/* ----------------------------------------------------------- writing */

static void note_record(struct record *s, const uint8_t *rec)
{
	const struct perf_event_header *h = (const void *)rec;
	uint64_t v;

	s->st.records++;
	aux_counts_note(&s->counts, h);
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		s->st.samples++;
		if (h->size >= SAMPLE_TIME_OFFSET + 8) {
			memcpy(&v, rec + SAMPLE_TIME_OFFSET, 8);
			if (!s->have_time || v < s->first_time)
				s->first_time = v;
			if (!s->have_time || v > s->last_time)
				s->last_time = v;
			s->have_time = 1;
		}
		break;
	case PERF_RECORD_LOST:   /* id, lost */
		s->st.lost_records++;
		if (h->size >= 24) {
			memcpy(&v, rec + 16, 8);
			s->st.lost += v;
		}
		break;
	case PERF_RECORD_LOST_SAMPLES:
		if (h->size >= 16) {
			memcpy(&v, rec + 8, 8);
			s->st.lost_samples += v;
		}
		break;
	case PERF_RECORD_MMAP2:   /* filename at 72, NUL-terminated within the record */
		if (h->size > 72 && memchr(rec + 72, 0, h->size - 72u))
			pathset_add(&s->paths, (const char *)rec + 72);
		break;
	}
}

/* A record as it is, not counted (-z: a COMPRESSED record, whose records were noted when staged). */
static int write_as_is(void *ctx, const void *rec)
{
	struct record *s = ctx;
	struct pd_error pe;

	if (pd_writer_write(s->w, rec, -1, NULL, 0, &pe) < 0) {
		if (pe.code == PD_ERR_NOSPC)
			s->st.disk_full = 1;
		if (!s->werr.err)
			rec_fail(&s->werr, pe.code == PD_ERR_NOSPC ? ENOSPC : EIO, "%s", pe.msg);
		return -1;
	}
	return 0;
}

static int write_rec(void *ctx, const void *rec)
{
	if (write_as_is(ctx, rec) < 0)
		return -1;
	note_record(ctx, rec);
	return 0;
}

static void thread_note(void *ctx, const void *rec)
{
	note_record(ctx, rec);
}

static int ring_record(void *ctx, struct ring *r, const struct perf_event_header *h)
{
	struct record *s = ctx;

	if (!s->z)
		return write_rec(ctx, h);
	if (zcomp__add(s->z, h, write_as_is, s, &s->werr) < 0)
		return -1;
	note_record(s, (const uint8_t *)h);
	return 0;
}

/* -z: after a ring's pass, its staged records into COMPRESSED records. */
static int ring_done(struct record *s)
{
	return s->z ? zcomp__flush(s->z, write_as_is, s, &s->werr) : 0;
}

/* --mmap-flush: fewer bytes than that in a forward ring wait for a later pass. */
static int ring_below_flush(const struct record *s, const struct ring *r)
{
	if (s->final || s->o.mmap_flush <= 1)
		return 0;
	uint64_t head = __atomic_load_n(&r->pc->data_head, __ATOMIC_ACQUIRE);
	return head - r->pc->data_tail < s->o.mmap_flush;
}

/* One AUXTRACE record and its payload, straight from the AUX area to the writer. */
static int aux_chunk(void *ctx, struct aux_ring *a, const struct aux_chunk *c)
{
	struct record *s = ctx;
	struct pd_error pe;

	if (aux_chunk_write(s->w, c, &pe) < 0) {
		if (pe.code == PD_ERR_NOSPC)
			s->st.disk_full = 1;
		if (!s->werr.err)
			rec_fail(&s->werr, pe.code == PD_ERR_NOSPC ? ENOSPC : EIO, "%s", pe.msg);
		return -1;
	}
	s->st.records++;
	return 0;
}

/* ------------------------------------------------------------- open */

static long perf_event_open_flags(struct perf_event_attr *a, int pid, int cpu, int group_fd, unsigned long flags)
{
	return syscall(SYS_perf_event_open, a, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC | flags);
}

static long perf_event_open(struct perf_event_attr *a, int pid, int cpu, int group_fd)
{
	return perf_event_open_flags(a, pid, cpu, group_fd, 0);
}

/*
 * The user registers perf record asks for with --call-graph dwarf
 * (arch__user_reg_mask, PERF_REGS_MASK of the target's perf_regs.h).
 */
#if defined(__x86_64__)
#define USER_REGS_MASK UINT64_C(0xff0fff)             /* ax..r15 without the segment registers ds, es, fs, gs */
#elif defined(__aarch64__)
#define USER_REGS_MASK ((UINT64_C(1) << 33) - 1)      /* x0..x30, sp, pc */
#elif defined(__powerpc64__)
#define USER_REGS_MASK ((UINT64_C(1) << 45) - 1)      /* r0..r31, nip .. mmcra */
#elif defined(__i386__)
#define USER_REGS_MASK UINT64_C(0x1ff)                /* ax..ip */
#else
#define USER_REGS_MASK UINT64_C(0)
#endif

/*
 * -g / --call-graph as perf record configures each sampling event
 * (evsel__config_callchain): the kernel's call chain; for dwarf also the
 * user registers and SIZE bytes of user stack, the user part of the chain
 * left to the unwinder, and sample addresses (perf records them for dwarf,
 * with data mmaps on the tracking event); for lbr the CPU's call stack.
 */
static void config_callgraph(const struct record *s, struct perf_event_attr *a, int tracking)
{
	a->sample_type |= PERF_SAMPLE_CALLCHAIN;
	switch (s->o.callgraph) {
	case REC_CG_DWARF:
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER | PERF_SAMPLE_ADDR |
				  PERF_SAMPLE_DATA_SRC;
		a->sample_regs_user = USER_REGS_MASK;
		a->sample_stack_user = s->o.stack_dump;
		a->exclude_callchain_user = 1;
		if (tracking)
			a->mmap_data = 1;
		break;
	case REC_CG_LBR:
		a->sample_type |= PERF_SAMPLE_BRANCH_STACK;
		a->branch_sample_type = PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_CALL_STACK |
					PERF_SAMPLE_BRANCH_NO_CYCLES | PERF_SAMPLE_BRANCH_NO_FLAGS |
					PERF_SAMPLE_BRANCH_HW_INDEX;
		break;
	default:
		break;
	}
}

static int is_dummy(const struct ev_spec *ev)
{
	return ev->attr.type == PERF_TYPE_SOFTWARE && ev->attr.config == PERF_COUNT_SW_DUMMY;
}

/*
 * The sample fields and sideband perf record's options add (evsel__config):
 * on each sampling event -b / -j (BRANCH_STACK), -d (ADDR, DATA_SRC), -W
 * (WEIGHT_STRUCT), --user-regs, -I; --all-cgroups on every event; and on the
 * tracking event the records: --switch-events, --namespaces, --all-cgroups,
 * -d's data mmaps.
 */
static void config_samples(const struct record *s, struct perf_event_attr *a, int sampling, int tracking)
{
	if (sampling) {
		if (s->o.branch_stack) {
			a->sample_type |= PERF_SAMPLE_BRANCH_STACK;
			a->branch_sample_type = s->o.branch_stack;
		}
		if (s->o.sample_addr)
			a->sample_type |= PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC;
		if (s->o.sample_weight)
			a->sample_type |= PERF_SAMPLE_WEIGHT_STRUCT;
		if (s->o.user_regs) {
			a->sample_type |= PERF_SAMPLE_REGS_USER;
			a->sample_regs_user |= s->o.user_regs;
		}
		if (s->o.intr_regs) {
			a->sample_type |= PERF_SAMPLE_REGS_INTR;
			a->sample_regs_intr = s->o.intr_regs;
		}
	}
	if (s->o.all_cgroups)
		a->sample_type |= PERF_SAMPLE_CGROUP;
	if (tracking) {
		a->context_switch |= s->o.switch_events;
		a->namespaces = s->o.namespaces;
		a->cgroup = s->o.all_cgroups;
		if (s->o.sample_addr)
			a->mmap_data = 1;
	}
}

static void config_attr(const struct record *s, size_t i, struct perf_event_attr *a)
{
	const struct ev_spec *ev = &s->evl->v[i];
	int leader = ev->leader == (int)i;

	*a = ev->attr;
	a->size = sizeof(*a);
	a->sample_type = SAMPLE_TYPE | (ev->is_tracepoint ? PERF_SAMPLE_RAW : 0);
	a->read_format = PERF_FORMAT_ID | (s->fmt_lost ? PERF_FORMAT_LOST : 0);
	a->sample_id_all = 1;
	if (!ev->has_period) {
		if (ev->is_tracepoint) {
			a->sample_period = 1;   /* perf: every tracepoint hit */
			a->freq = 0;
		} else if (s->o.period) {
			a->sample_period = s->o.period;
			a->freq = 0;
		} else {
			a->sample_freq = s->o.freq ? s->o.freq : 4000;
			a->freq = 1;
		}
	}
	if ((int)i == s->aux_ev) {   /* perf: every trace-enable transition, no frequency */
		a->sample_period = 1;
		a->freq = 0;
	}
	a->disabled = leader;
	a->enable_on_exec = leader && s->o.enable_on_exec;
	a->inherit = s->o.inherit;
	if ((int)i == s->tracking) {   /* the tracking event: perf puts the sideband on one event */
		a->mmap = 1;
		a->mmap2 = 1;
		a->comm = 1;
		a->comm_exec = 1;
		a->task = 1;
		/* trace decoders follow the scheduler through switch records (Intel PT's have_sched_switch) */
		a->context_switch = s->aux_ev >= 0;
	}
	if (a->freq)
		a->sample_type |= PERF_SAMPLE_PERIOD;
	int sampling = (int)i != s->aux_ev && !is_dummy(ev);
	if (s->o.callgraph && sampling)
		config_callgraph(s, a, (int)i == s->tracking);
	config_samples(s, a, sampling, (int)i == s->tracking);
	if (s->o.delay_ms)   /* perf -D: only the tracking event starts at exec, the others after the delay */
		a->enable_on_exec = (int)i == s->tracking && s->o.enable_on_exec;
	if (s->o.overwrite && (int)i != s->aux_ev) {   /* an AUX event's ring stays forward (split rings) */
		a->write_backward = 1;
	} else {
		a->watermark = 1;   /* wake the poller when half the ring is full */
		size_t ring = s->o.mmap_pages * (size_t)sysconf(_SC_PAGESIZE);
		a->wakeup_watermark = (uint32_t)(ring / 2);
	}
	if (s->o.clockid >= 0) {
		a->use_clockid = 1;
		a->clockid = s->o.clockid;
	}
}

/* branch_sample_type as perf evlist -v names its bits: USER|ANY_CALL */
static void branch_names(uint64_t v, char *out, size_t len)
{
	static const char *const names[] = { "USER", "KERNEL", "HV", "ANY", "ANY_CALL", "ANY_RETURN", "IND_CALL",
		"ABORT_TX", "IN_TX", "NO_TX", "COND", "CALL_STACK", "IND_JUMP", "CALL", "NO_FLAGS", "NO_CYCLES",
		"TYPE_SAVE", "HW_INDEX", "PRIV_SAVE" };
	size_t n = 0;

	out[0] = 0;
	for (size_t b = 0; b < 64; b++) {
		if (!(v & (UINT64_C(1) << b)))
			continue;
		char num[24];
		const char *name = b < sizeof(names) / sizeof(names[0]) ? names[b] : num;
		if (name == num)
			snprintf(num, sizeof(num), "%#llx", 1ULL << b);
		n += (size_t)snprintf(out + n, n < len ? len - n : 0, "%s%s", n ? "|" : "", name);
		if (n >= len)
			return;
	}
}

static int open_error(struct record *s, size_t ev, int cpu, int tid, int err, struct rec_err *e)
{
	const char *name = s->evl->v[ev].name;
	char paranoid[16] = "?";
	struct rlimit rl;

	read_text("/proc/sys/kernel/perf_event_paranoid", paranoid, sizeof(paranoid));
	switch (err) {
	case EACCES:
	case EPERM:
		return rec_fail(e, err,
			"cannot open event %s on cpu %d, pid %d: %s. kernel.perf_event_paranoid is %s: "
			"-1 allows everything; 0 denies raw tracepoint data to unprivileged users; "
			"1 also denies CPU-wide events (-a, -C); 2 also denies kernel profiling "
			"(use :u events); 3+ (Debian) denies perf_event_open to unprivileged users. "
			"CAP_PERFMON (or CAP_SYS_ADMIN before Linux 5.8) bypasses these checks; "
			"tracepoints may also need read access to tracefs. Lower it with "
			"'sysctl kernel.perf_event_paranoid=1' or run with CAP_PERFMON.",
			name, cpu, tid, strerror(err), paranoid);
	case EMFILE:
	case ENFILE:
		getrlimit(RLIMIT_NOFILE, &rl);
		return rec_fail(e, err,
			"cannot open event %s on cpu %d, pid %d: %s. This recording needs %zu descriptors "
			"(%zu events x %d CPUs x %d threads) plus a few for files; the limit is %llu (hard %llu). "
			"Raise it with 'ulimit -n %zu', or record fewer CPUs, threads or events.",
			name, cpu, tid, strerror(err), s->evl->n * (size_t)s->nr_cpus * (size_t)s->nr_tids,
			s->evl->n, s->nr_cpus, s->nr_tids, (unsigned long long)rl.rlim_cur,
			(unsigned long long)rl.rlim_max, s->evl->n * (size_t)s->nr_cpus * (size_t)s->nr_tids + 64);
	case ENOENT:
	case ENODEV:
	case EOPNOTSUPP:
		if (s->o.branch_stack && err == EOPNOTSUPP) {
			char names[256];
			branch_names(s->o.branch_stack, names, sizeof(names));
			return rec_fail(e, err,
				"%s: event %s on cpu %d cannot sample branch stacks (branch_sample_type %s): %s "
				"(its PMU has no branch stack sampling, such as Intel LBR or Arm BRBE; software and "
				"virtual PMUs have none)", s->o.branch_opt, name, cpu, names, strerror(err));
		}
		if (s->o.callgraph == REC_CG_LBR && err == EOPNOTSUPP)
			return rec_fail(e, err,
				"--call-graph lbr: event %s on cpu %d cannot sample the LBR call stack: %s (its PMU has "
				"no branch stack sampling; LBR needs an Intel PMU with LBR, not a software or "
				"virtual one): use --call-graph fp or dwarf", name, cpu, strerror(err));
		return rec_fail(e, err,
			"event %s is not supported on cpu %d: %s (type %u config %#llx: this machine has no "
			"such PMU or it cannot sample; hardware events need a hardware PMU)",
			name, cpu, strerror(err), s->evl->v[ev].attr.type,
			(unsigned long long)s->evl->v[ev].attr.config);
	case ESRCH:
		return rec_fail(e, err, "cannot open event %s for pid %d: no such thread", name, tid);
	default:
		return rec_fail(e, err, "cannot open event %s on cpu %d, pid %d: %s (type %u config %#llx)",
				name, cpu, tid, strerror(err), s->evl->v[ev].attr.type,
				(unsigned long long)s->evl->v[ev].attr.config);
	}
}

static size_t fd_index(const struct record *s, int c, int t, size_t ev)
{
	return ((size_t)c * (size_t)s->nr_tids + (size_t)t) * s->evl->n + ev;
}

#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST (1U << 4)
#endif

/* Does this kernel report lost samples per event? (perf probes the same way) */
static int probe_format_lost(void)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.read_format = PERF_FORMAT_ID | PERF_FORMAT_LOST;
	a.exclude_kernel = 1;
	long fd = perf_event_open(&a, 0, -1, -1);
	if (fd < 0)
		return 0;
	close((int)fd);
	return 1;
}

/*
 * perf's answer to a thread of -p / -u that exits between the listing and
 * the open (ESRCH): the thread leaves the list, the events opened so far are
 * closed, and the opening starts again over the threads left.
 */
static void drop_thread(struct record *s, int t)
{
	for (size_t k = 0; k < s->nr_fds; k++)
		if (s->fds[k] >= 0) {
			close(s->fds[k]);
			s->fds[k] = -1;
		}
	memmove(&s->tids[t], &s->tids[t + 1], (size_t)(s->nr_tids - t - 1) * sizeof(*s->tids));
	s->nr_tids--;
	s->nr_fds = (size_t)s->nr_cpus * (size_t)s->nr_tids * s->evl->n;
}

static int open_events(struct record *s, struct rec_err *e)
{
	s->fmt_lost = probe_format_lost();
again:
	for (int c = 0; c < s->nr_cpus; c++)
		for (int t = 0; t < s->nr_tids; t++)
			for (size_t i = 0; i < s->evl->n; i++) {
				struct ev_spec *ev = &s->evl->v[i];
				struct perf_event_attr a;
				int group_fd = ev->leader == (int)i ? -1 :
					       s->fds[fd_index(s, c, t, (size_t)ev->leader)];
				/* -G: every event but the tracking one counts in the cgroup only */
				int in_cgroup = s->o.cgroup_fd >= 0 && (int)i != s->tracking;
				int pid = in_cgroup ? s->o.cgroup_fd : s->tids[t];
				unsigned long flags = in_cgroup ? PERF_FLAG_PID_CGROUP : 0;
				config_attr(s, i, &a);
				long fd = perf_event_open_flags(&a, pid, s->cpus[c], group_fd, flags);
				if (fd < 0 && (errno == EACCES || errno == EPERM) && !ev->mod_excl &&
				    !a.exclude_kernel) {
					/* perf's fallback under perf_event_paranoid 2: user space only */
					ev->attr.exclude_kernel = ev->attr.exclude_hv = 1;
					config_attr(s, i, &a);
					fd = perf_event_open_flags(&a, pid, s->cpus[c], group_fd, flags);
				}
				if (fd < 0 && errno == ESRCH && s->nr_tids > 1 && !in_cgroup) {
					drop_thread(s, t);
					goto again;
				}
				if (fd < 0)
					return open_error(s, i, s->cpus[c], s->tids[t], errno, e);
				size_t k = fd_index(s, c, t, i);
				s->fds[k] = (int)fd;
				if (ioctl((int)fd, PERF_EVENT_IOC_ID, &s->ids[k]) < 0)
					return rec_fail(e, errno, "PERF_EVENT_IOC_ID on fd %ld (event %s, cpu %d) failed: %s",
							fd, ev->name, s->cpus[c], strerror(errno));
			}
	return 0;
}

/* ------------------------------------------------------------- AUX */

static int aux_ioctl_ring(struct aux_ctx *x, unsigned long req)
{
	struct record *s = x->s;
	int per_thread = s->cpus[0] == -1;

	for (int c = 0; c < s->nr_cpus; c++)
		for (int t = 0; t < s->nr_tids; t++)
			if ((size_t)(per_thread ? t : c) == x->key &&
			    ioctl(s->fds[fd_index(s, c, t, (size_t)s->aux_ev)], req, 0) < 0)
				return -1;
	return 0;
}

/* The AUX event of a ring stops (the driver publishes aux_head) and starts again. */
static int aux_disable(void *ctx) { return aux_ioctl_ring(ctx, PERF_EVENT_IOC_DISABLE); }
static int aux_enable(void *ctx) { return aux_ioctl_ring(ctx, PERF_EVENT_IOC_ENABLE); }
static uint64_t aux_reference(void *ctx) { return auxinfo__reference(((struct aux_ctx *)ctx)->s->auxpmu.kind); }
static const struct aux_ops kernel_aux_ops = { aux_disable, aux_enable, aux_reference };

/*
 * Which event is the AUX one, which carries the sideband; the errors a user
 * can make with AUX options. perf adds a dummy:u tracking event when every
 * event is an AUX one; so do we.
 */
static int prepare_aux(struct record *s, struct rec_err *e)
{
	struct aux_pmu p;

	s->aux_ev = -1;
	s->tracking = 0;
	for (size_t i = 0; i < s->evl->n; i++) {
		if (!auxpmu__lookup(s->evl->v[i].attr.type, &p))
			continue;
		if (s->aux_ev >= 0)
			return rec_fail(e, EINVAL, "events %s and %s both write an AUX area: a ring has one, record "
					"one AUX event at a time", s->evl->v[s->aux_ev].name, s->evl->v[i].name);
		if (s->evl->v[i].nr_members > 1 || s->evl->v[i].leader != (int)i)
			return rec_fail(e, EINVAL, "event %s writes an AUX area: it cannot be in a group", s->evl->v[i].name);
		s->aux_ev = (int)i;
		s->auxpmu = p;
	}
	if (s->aux_ev < 0 && (s->o.delay_ms || s->o.cgroup_fd >= 0) &&
	    strcmp(s->evl->v[s->evl->n - 1].name, "dummy:HG")) {   /* not yet added (a retried open) */
		/*
		 * perf -D and -G: the sideband on a dummy:HG event of its own, which
		 * starts at once (-D) or follows every process (-G), while the
		 * sampling events wait for the delay or count in the cgroup only.
		 */
		if (events__parse(s->evl, "dummy", e) < 0)
			return -1;
		struct ev_spec *d = &s->evl->v[s->evl->n - 1];
		char *name = strdup("dummy:HG");
		if (!name)
			return rec_fail(e, ENOMEM, "out of memory");
		free(d->name);
		d->name = name;
		d->attr.exclude_guest = 0;
		d->attr.sample_period = 1;
		d->has_period = 1;
	}
	if (s->aux_ev < 0 && (s->o.delay_ms || s->o.cgroup_fd >= 0))
		s->tracking = (int)s->evl->n - 1;
	if (s->aux_ev < 0) {
		if (s->o.snapshot) {
			auxpmu__lookup(s->evl->v[0].attr.type, &p);
			return rec_fail(e, EINVAL, "-S / --snapshot reads AUX areas, but event %s belongs to PMU %s, "
					"which has no AUX area (AUX-area PMUs: intel_pt, intel_bts, cs_etm, arm_spe; "
					"--overwrite snapshots the regular ring)", s->evl->v[0].name, p.name);
		}
		return 0;
	}
	if (s->o.overwrite && !s->o.snapshot)
		return rec_fail(e, EINVAL, "--overwrite with AUX event %s needs -S: the other events' backward rings "
				"are then snapshotted with the AUX areas", s->evl->v[s->aux_ev].name);
	s->tracking = -1;
	for (size_t i = 0; i < s->evl->n && s->tracking < 0; i++)
		if ((int)i != s->aux_ev)
			s->tracking = (int)i;
	if (s->tracking < 0) {
		if (events__parse(s->evl, "dummy:u", e) < 0)
			return -1;
		s->tracking = (int)s->evl->n - 1;
	}
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t pages = s->o.aux_pages;
	if (!pages)   /* perf's defaults: 4 MiB privileged, 128 KiB otherwise */
		pages = (geteuid() == 0 ? (4u << 20) : (128u << 10)) / page;
	if (!pages || (pages & (pages - 1)))
		return rec_fail(e, EINVAL, "-m ,%zu: the AUX area must be a power-of-two number of pages", pages);
	s->aux_size = pages * page;
	if (s->o.snapshot_size > s->aux_size)
		return rec_fail(e, EINVAL, "-S%zu: the snapshot size exceeds the AUX area (%zu bytes; raise it with -m ,PAGES)",
				s->o.snapshot_size, s->aux_size);
	return 0;
}

/* --filter: address filters on AUX events, filter expressions on tracepoints. */
static int apply_filters(struct record *s, struct rec_err *e)
{
	for (size_t i = 0; i < s->evl->n; i++) {
		const struct ev_spec *ev = &s->evl->v[i];
		struct aux_pmu p;
		if (!ev->filter)
			continue;
		if (auxpmu__lookup(ev->attr.type, &p)) {
			if (auxinfo__check_filter(&p, ev->filter, e) < 0)
				return -1;
		} else if (!ev->is_tracepoint) {
			return rec_fail(e, EINVAL, "--filter '%s': event %s (PMU %s) takes no filter: address filters need "
					"an AUX-area PMU, expressions a tracepoint", ev->filter, ev->name, p.name);
		}
		for (int c = 0; c < s->nr_cpus; c++)
			for (int t = 0; t < s->nr_tids; t++) {
				int fd = s->fds[fd_index(s, c, t, i)];
				if (ioctl(fd, PERF_EVENT_IOC_SET_FILTER, ev->filter) < 0)
					return rec_fail(e, errno, "--filter '%s' on event %s (cpu %d): the kernel refused it: %s",
							ev->filter, ev->name, s->cpus[c], strerror(errno));
			}
	}
	return 0;
}

/* The AUX area after ring @key (queue @queue: the CPU or thread index), mapped on its owner's fd. */
static int map_aux(struct record *s, size_t key, size_t queue, struct rec_err *e)
{
	struct ring *r = s->rings[key];
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int per_thread = s->cpus[0] == -1;

	r->pc->aux_offset = r->mmap_len;   /* right after the data pages */
	r->pc->aux_size = s->aux_size;
	void *m = mmap(NULL, s->aux_size, s->o.snapshot ? PROT_READ : PROT_READ | PROT_WRITE, MAP_SHARED, r->fd,
		       (off_t)r->pc->aux_offset);
	if (m == MAP_FAILED) {
		int err = errno;
		return rec_fail(e, err, "mmap of the %zu KiB AUX area of event %s (PMU %s) on fd %d (cpu %d) failed: %s%s",
				s->aux_size / 1024, s->evl->v[s->aux_ev].name, s->auxpmu.name, r->fd, r->cpu, strerror(err),
				err == EPERM || err == ENOMEM ? " (over perf_event_mlock_kb: use a smaller -m ,PAGES, or raise it)" : "");
	}
	s->aux_map[key] = m;
	s->aux_ctx[key] = (struct aux_ctx){ s, queue };
	struct aux_config cfg = {
		.pc = r->pc, .data = m, .size = s->aux_size, .kind = s->auxpmu.kind,
		.snapshot = s->o.snapshot, .snapshot_size = s->o.snapshot_size,
		.alignment = s->auxpmu.kind == AUX_INTEL_BTS ? 24 : 0,   /* whole BTS branch records */
		.idx = (uint32_t)queue, .cpu = r->cpu,
		.tid = per_thread ? r->tid : s->tids[0],
		.ops = &kernel_aux_ops, .ops_ctx = &s->aux_ctx[key],
	};
	if (s->o.snapshot && s->auxpmu.kind == AUX_INTEL_PT)
		cfg.pt_ref_size = aux__pt_ref_size(auxinfo__pt_psb_period(&s->auxpmu, &s->evl->v[s->aux_ev].attr),
						   s->aux_size, s->o.snapshot_size ? s->o.snapshot_size : s->aux_size);
	if (aux__init(&s->aux[key], &cfg) < 0)
		return rec_fail(e, ENOMEM, "AUX area of ring %zu: out of memory", key);
	(void)page;
	return 0;
}

/*
 * One ring per CPU (per thread in per-thread mode); every other fd there
 * writes into it. The AUX event's fd owns the ring: its AUX area is mapped
 * on that fd. With --overwrite and an AUX event the rings are split, as
 * perf splits them: the AUX event keeps a forward ring (the kernel's AUX
 * records, and the control page we write aux_offset into), the other
 * events write backwards into a second ring (the kernel refuses to mix
 * directions in one ring).
 */
static int map_rings(struct record *s, struct rec_err *e)
{
	int per_thread = s->cpus[0] == -1;
	int split = s->aux_ev >= 0 && s->o.overwrite;
	size_t nr = (per_thread ? (size_t)s->nr_tids : (size_t)s->nr_cpus) * (split ? 2 : 1);

	s->rings = calloc(nr, sizeof(*s->rings));
	s->aux = calloc(nr, sizeof(*s->aux));
	s->aux_map = calloc(nr, sizeof(*s->aux_map));
	s->aux_ctx = calloc(nr, sizeof(*s->aux_ctx));
	if (!s->rings || !s->aux || !s->aux_map || !s->aux_ctx)
		return rec_fail(e, ENOMEM, "out of memory");
	s->rings_cap = nr;
	for (int c = 0; c < s->nr_cpus; c++)
		for (int t = 0; t < s->nr_tids; t++)
			for (size_t j = 0; j < s->evl->n; j++) {
				/* the AUX event first, then the others in order */
				size_t i = s->aux_ev < 0 ? j : j == 0 ? (size_t)s->aux_ev : j <= (size_t)s->aux_ev ? j - 1 : j;
				size_t queue = per_thread ? (size_t)t : (size_t)c;
				int backward = split ? (int)i != s->aux_ev : s->o.overwrite;
				size_t key = split ? 2 * queue + (size_t)backward : queue;
				int fd = s->fds[fd_index(s, c, t, i)];
				if (!s->rings[key]) {
					if (ring__new(&s->rings[key], fd, s->cpus[c], per_thread ? s->tids[t] : -1,
						      s->o.mmap_pages, backward, e) < 0)
						return -1;
					s->nr_rings++;
					if ((int)i == s->aux_ev && map_aux(s, key, queue, e) < 0)
						return -1;
					continue;
				}
				if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, s->rings[key]->fd) < 0)
					return rec_fail(e, errno,
							"PERF_EVENT_IOC_SET_OUTPUT of fd %d (event %s, cpu %d, tid %d) into "
							"the ring of fd %d failed: %s", fd, s->evl->v[i].name, s->cpus[c],
							s->tids[t], s->rings[key]->fd, strerror(errno));
			}
	return 0;
}

/* An unnamed file holding RESERVE_BYTES in the output's filesystem, freed on ENOSPC. */
static int take_reserve(const char *path)
{
	char *copy = strdup(path), *dir;
	int fd = -1;

	if (!copy)
		return -1;
	dir = dirname(copy);
#ifdef O_TMPFILE
	fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
#endif
	free(copy);
	/* as much as the filesystem allows, down to what the writer needs at worst */
	for (off_t size = RESERVE_BYTES; fd >= 0; size /= 2) {
		if (size < RESERVE_MIN) {
			close(fd);
			return -1;
		}
		if (posix_fallocate(fd, 0, size) == 0)
			break;
	}
	return fd;
}

static int setup_targets(struct record *s, struct rec_err *e)
{
	int *v;

	switch (s->o.mode) {
	case REC_MODE_PER_THREAD:
		s->cpus = malloc(sizeof(int));
		if (!s->cpus)
			return rec_fail(e, ENOMEM, "out of memory");
		s->cpus[0] = -1;
		s->nr_cpus = 1;
		break;
	case REC_MODE_CPUS: {
		int n = cpu_list_parse(s->o.cpu_list, &v);
		if (n < 0)
			return rec_fail(e, EINVAL, "-C %s: not a CPU list (expected e.g. 0-3,6)", s->o.cpu_list);
		int *online, nol = cpus_online(&online);
		for (int i = 0; i < n; i++) {
			int found = 0;
			for (int k = 0; k < nol; k++)
				found |= online[k] == v[i];
			if (!found) {
				free(online);
				free(v);
				return rec_fail(e, EINVAL, "-C %s: CPU %d is not online", s->o.cpu_list, v[i]);
			}
		}
		free(online);
		s->cpus = v;
		s->nr_cpus = n;
		break;
	}
	default:
		s->nr_cpus = cpus_online(&s->cpus);
		if (s->nr_cpus < 0)
			return rec_fail(e, errno, "cannot read /sys/devices/system/cpu/online");
		break;
	}
	if (s->o.nr_tids > 0) {
		s->tids = malloc((size_t)s->o.nr_tids * sizeof(int));
		if (!s->tids)
			return rec_fail(e, ENOMEM, "out of memory");
		memcpy(s->tids, s->o.tids, (size_t)s->o.nr_tids * sizeof(int));
		s->nr_tids = s->o.nr_tids;
	} else {
		s->tids = malloc(sizeof(int));
		if (!s->tids)
			return rec_fail(e, ENOMEM, "out of memory");
		s->tids[0] = -1;
		s->nr_tids = 1;
	}
	return 0;
}

int record__open(struct record **out, const struct rec_opts *o, struct ev_list *evl, struct rec_err *e)
{
	struct record *s = calloc(1, sizeof(*s));
	struct pd_writer_opts wo;
	struct pd_error pe;

	*out = NULL;
	if (!s)
		return rec_fail(e, ENOMEM, "out of memory");
	s->o = *o;
	s->evl = evl;
	s->reserve_fd = -1;
	if (setup_targets(s, e) < 0 || prepare_aux(s, e) < 0)
		goto err_out;
	s->nr_fds = (size_t)s->nr_cpus * (size_t)s->nr_tids * evl->n;
	s->fds = malloc(s->nr_fds * sizeof(*s->fds));
	s->ids = calloc(s->nr_fds, sizeof(*s->ids));
	if (!s->fds || !s->ids) {
		rec_fail(e, ENOMEM, "out of memory");
		goto err_out;
	}
	for (size_t i = 0; i < s->nr_fds; i++)
		s->fds[i] = -1;
	if (open_events(s, e) < 0 || apply_filters(s, e) < 0 || map_rings(s, e) < 0)
		goto err_out;
	if (o->comp_level && zcomp__new(&s->z, o->comp_level, o->mmap_pages * (size_t)sysconf(_SC_PAGESIZE), e) < 0)
		goto err_out;
	s->pipe = !strcmp(o->output, "-");
	pd_writer_opts_init(&wo);
	wo.pipe_mode = s->pipe;
	if (pd_writer_open(&s->w, o->output, &wo, &pe) < 0) {
		rec_fail(e, EIO, "%s", pe.msg);
		goto err_out;
	}
	if (!s->pipe)
		s->reserve_fd = take_reserve(o->output);
	if (o->threads) {
		if (s->aux_ev >= 0 || o->overwrite || o->snapshot) {
			rec_fail(e, EINVAL, "--threads: not with %s yet", o->overwrite ? "--overwrite" :
				 o->snapshot ? "-S" : "an AUX area event (intel_pt, cs_etm...)");
			goto err_out;
		}
		if (rthreads_open(&s->thr, o->threads_spec, o->dir, s->rings, s->nr_rings, thread_note, s, e) < 0)
			goto err_out;
	}
	*out = s;
	return 0;
err_out:
	record__free(s);
	return -1;
}

/* ------------------------------------------------------------ start */

static int add_evsels(struct record *s, struct rec_err *e)
{
	size_t per = (size_t)s->nr_cpus * (size_t)s->nr_tids;
	uint64_t *ids = malloc((per ? per : 1) * sizeof(*ids));
	struct pd_error pe;
	int rc = 0;

	if (!ids)
		return rec_fail(e, ENOMEM, "out of memory");
	for (size_t i = 0; i < s->evl->n && !rc; i++) {
		struct perf_event_attr a;
		struct pd_event_attr pa;
		size_t k = 0;
		config_attr(s, i, &a);
		memset(&pa, 0, sizeof(pa));
		memcpy(&pa, &a, sizeof(a) < sizeof(pa) ? sizeof(a) : sizeof(pa));
		pa.size = sizeof(pa);
		for (int c = 0; c < s->nr_cpus; c++)
			for (int t = 0; t < s->nr_tids; t++)
				ids[k++] = s->ids[fd_index(s, c, t, i)];
		if (pd_writer_add_evsel(s->w, &pa, ids, k, s->evl->v[i].name, &pe) < 0)
			rc = rec_fail(e, EIO, "event %s: %s", s->evl->v[i].name, pe.msg);
	}
	free(ids);
	return rc;
}

/* perf cannot read tracepoint samples without their formats: TRACING_DATA. */
static int set_tracing_data(struct record *s, struct rec_err *e)
{
	const char **tps = malloc((s->evl->n ? s->evl->n : 1) * sizeof(*tps));
	struct pd_buf b = { 0 };
	struct pd_error pe;
	size_t n = 0;
	int rc = 0;

	if (!tps)
		return rec_fail(e, ENOMEM, "out of memory");
	for (size_t i = 0; i < s->evl->n; i++)
		if (s->evl->v[i].is_tracepoint)
			tps[n++] = s->evl->v[i].name;
	if (n && (rc = tracing_data_build(&b, tps, n, e)) == 0 &&
	    pd_writer_set_feature(s->w, PD_FEAT_TRACING_DATA, b.data, b.len, &pe) < 0)
		rc = rec_fail(e, EIO, "feature tracing_data: %s", pe.msg);
	pd_buf_free(&b);
	free(tps);
	return rc;
}

/*
 * -z: HEADER_COMPRESSED as perf record fills it: version (perf leaves it 0),
 * type 1 (zstd), level, ratio (bytes compressed over COMPRESSED bytes, rounded),
 * and the size of a ring's mapping (control page and data), which tells a
 * reader how much one ring's records decompress to at most.
 */
static int compressed_feature(struct record *s, struct rec_err *e)
{
	uint64_t in, out;
	uint32_t v[5] = { 0, 1, (uint32_t)s->o.comp_level, 0, 0 };
	struct pd_error pe;

	zcomp__totals(s->z, &in, &out);
	in -= s->z_in0;   /* this file's share */
	out -= s->z_out0;
	if (in && out)
		v[3] = (uint32_t)((double)in / (double)out + 0.5);
	v[4] = (uint32_t)((s->o.mmap_pages + 1) * (size_t)sysconf(_SC_PAGESIZE));
	if (pd_writer_set_feature(s->w, PD_FEAT_COMPRESSED, v, sizeof(v), &pe) < 0)
		return rec_fail(e, EIO, "feature %s: %s", pd_feature_name(PD_FEAT_COMPRESSED), pe.msg);
	return 0;
}

static int set_static_features(struct record *s, int argc, char **argv, struct rec_err *e)
{
	struct feat_group g[64];
	size_t ng = 0;

	for (size_t i = 0; i < s->evl->n && ng < 64; i++) {
		const struct ev_spec *ev = &s->evl->v[i];
		if (ev->leader != (int)i || ev->nr_members < 2)
			continue;
		g[ng].name = NULL;   /* {a,b} has no name: written as perf's "{anon_group}" */
		g[ng].leader_idx = (uint32_t)i;
		g[ng].nr_members = (uint32_t)ev->nr_members;
		ng++;
	}
	if (features__static(s->w, argc, argv, g, ng, s->o.clockid, e) < 0)
		return -1;
	if (s->z && s->pipe && compressed_feature(s, e) < 0)   /* pipe mode: before any record, no ratio yet */
		return -1;
	return set_tracing_data(s, e);
}

/* PERF_RECORD_AUXTRACE_INFO for the AUX event's PMU, as perf writes it. */
static int auxtrace_info(struct record *s, struct rec_err *e)
{
	const struct ev_spec *ev = &s->evl->v[s->aux_ev];
	struct perf_event_attr a;
	struct pd_buf b = { 0 };
	int cpu_wide = s->tids[0] == -1;

	config_attr(s, (size_t)s->aux_ev, &a);
	struct auxinfo_params p = {
		.pmu = &s->auxpmu, .attr = &a, .pc = s->rings[0]->pc, .snapshot = s->o.snapshot,
		.per_cpu_mmaps = s->cpus[0] != -1,
		/* the tracking event records switches: CPU-wide ones when it is not bound to a task */
		.have_sched_switch = cpu_wide ? 3 : 2,
		.filter = ev->filter, .cpus = s->cpus, .nr_cpus = s->nr_cpus,
	};
	auxinfo__tsc_ctc(&p.tsc_ctc_n, &p.tsc_ctc_d);
	if (auxinfo__build(&b, &p, e) < 0) {
		pd_buf_free(&b);
		return -1;
	}
	int rc = write_rec(s, b.data);
	pd_buf_free(&b);
	if (rc < 0)
		return rec_fail(e, s->werr.err, "writing AUXTRACE_INFO: %s", s->werr.msg);
	return 0;
}

static int synthesize(struct record *s, struct rec_err *e)
{
	struct synth sy = { write_rec, s, TRAILER_SIZE, s->o.namespaces };
	struct id_index_entry *idx = malloc((s->nr_fds ? s->nr_fds : 1) * sizeof(*idx));
	int rc;

	if (!idx)
		return rec_fail(e, ENOMEM, "out of memory");
	for (int c = 0; c < s->nr_cpus; c++)
		for (int t = 0; t < s->nr_tids; t++)
			for (size_t i = 0; i < s->evl->n; i++) {
				size_t k = fd_index(s, c, t, i);
				idx[k] = (struct id_index_entry){ s->ids[k], i, (uint64_t)(int64_t)s->cpus[c],
								  (uint64_t)(int64_t)s->tids[t] };
			}
	/* perf record__synthesize()'s order */
	rc = synth__time_conv(&sy, s->rings[0]->pc);
	if (!rc)
		rc = synth__id_index(&sy, idx, s->nr_fds);
	free(idx);
	if (!rc && s->aux_ev >= 0 && auxtrace_info(s, e) < 0)
		return -1;
	if (!rc)
		rc = synth__kernel_mmap(&sy);
	if (!rc)
		rc = synth__modules(&sy);
	if (!rc)
		rc = synth__thread_map(&sy, s->tids, (size_t)s->nr_tids);
	if (!rc)
		rc = synth__cpu_map(&sy, s->cpus, (size_t)s->nr_cpus);
	if (!rc && s->o.all_cgroups && s->o.cgroup_mnt)   /* perf: the cgroups before the threads */
		rc = synth__cgroups(&sy, s->o.cgroup_mnt);
	if (!rc && s->o.system_wide_synth)
		rc = synth__all_processes(&sy);
	for (int t = 0; !rc && !s->o.system_wide_synth && t < s->nr_tids; t++) {
		char path[64];
		int tgid = s->tids[t];
		/* a thread of a process already synthesized is covered by it */
		snprintf(path, sizeof(path), "/proc/%d/status", tgid);
		char *st = read_all(path, NULL), *p = st ? strstr(st, "Tgid:") : NULL;
		if (p)
			tgid = atoi(p + 5);
		free(st);
		int dup = 0;
		for (int u = 0; u < t; u++)
			dup |= s->tids[u] == tgid;
		if (!dup)
			/* a new file of --switch-output: the command has exec'd, read it from /proc as perf does */
			rc = s->o.enable_on_exec && !s->rotated ? synth__workload(&sy, tgid) : synth__process(&sy, tgid);
	}
	if (!rc)
		rc = synth__finished(&sy, PD_RECORD_FINISHED_INIT);
	if (rc)
		return rec_fail(e, s->werr.err, "writing the initial records: %s", s->werr.msg);
	return 0;
}

int record__start(struct record *s, int argc, char **argv, struct rec_err *e)
{
	s->argc = argc;
	s->argv = argv;
	if (add_evsels(s, e) < 0 || set_static_features(s, argc, argv, e) < 0)
		return -1;
	if (s->thr) {   /* perf's HEADER_DIR_FORMAT: version 1, data.N files of raw records */
		uint64_t version = 1;
		struct pd_error pe;
		if (pd_writer_set_feature(s->w, PD_FEAT_DIR_FORMAT, &version, sizeof(version), &pe) < 0)
			return rec_fail(e, EIO, "%s", pe.msg);
	}
	if (synthesize(s, e) < 0)
		return -1;
	if (s->thr) {
		struct pd_error pe;
		if (pd_writer_flush(s->w, &pe) < 0)
			return rec_fail(e, pe.code == PD_ERR_NOSPC ? ENOSPC : EIO, "%s", pe.msg);
		return rthreads_start(s->thr, e);
	}
	return 0;
}

static int ioctl_leaders(struct record *s, unsigned long req, struct rec_err *e)
{
	for (int c = 0; c < s->nr_cpus; c++)
		for (int t = 0; t < s->nr_tids; t++)
			for (size_t i = 0; i < s->evl->n; i++) {
				if (s->evl->v[i].leader != (int)i)
					continue;
				int fd = s->fds[fd_index(s, c, t, i)];
				if (ioctl(fd, req, 0) < 0)
					return rec_fail(e, errno, "%s of fd %d (event %s, cpu %d) failed: %s",
							req == PERF_EVENT_IOC_ENABLE ? "PERF_EVENT_IOC_ENABLE" :
							"PERF_EVENT_IOC_DISABLE", fd, s->evl->v[i].name,
							s->cpus[c], strerror(errno));
			}
	return 0;
}

int record__enable(struct record *s, struct rec_err *e)
{
	return ioctl_leaders(s, PERF_EVENT_IOC_ENABLE, e);
}

int record__enable_tracking(struct record *s, struct rec_err *e)
{
	for (int c = 0; c < s->nr_cpus; c++)
		for (int t = 0; t < s->nr_tids; t++) {
			int fd = s->fds[fd_index(s, c, t, (size_t)s->tracking)];
			if (s->evl->v[s->tracking].leader == s->tracking && ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
				return rec_fail(e, errno, "PERF_EVENT_IOC_ENABLE of fd %d (event %s, cpu %d) failed: %s",
						fd, s->evl->v[s->tracking].name, s->cpus[c], strerror(errno));
		}
	return 0;
}

int record__set_enabled(struct record *s, int on, struct rec_err *e)
{
	return ioctl_leaders(s, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, e);
}

/* ------------------------------------------------------------- loop */

int record__poll(struct record *s, int ms)
{
	return record__poll_extra(s, ms, -1, NULL);
}

/* --threads: the readers drain the rings; the main thread waits for hang-ups and @extra_fd only. */
static int poll_hup(struct record *s, int ms, int extra_fd, int *extra_ready, size_t *hup)
{
	struct pollfd *pf = calloc(s->nr_rings + 1, sizeof(*pf));
	size_t n = 0;
	int rc;
	if (!pf)
		return -ENOMEM;
	for (size_t i = 0; i < s->nr_rings; i++)
		pf[n++] = (struct pollfd){ .fd = s->rings[i]->fd, .events = 0 };
	if (extra_fd >= 0)
		pf[n++] = (struct pollfd){ .fd = extra_fd, .events = POLLIN };
	rc = poll(pf, n, ms);
	if (rc < 0)
		rc = -errno;
	*hup = 0;
	for (size_t i = 0; rc > 0 && i < s->nr_rings; i++)
		*hup += (pf[i].revents & (POLLHUP | POLLERR)) != 0;
	if (extra_ready)
		*extra_ready = rc > 0 && extra_fd >= 0 && (pf[s->nr_rings].revents & POLLIN);
	free(pf);
	return rc;
}

int record__poll_extra(struct record *s, int ms, int extra_fd, int *extra_ready)
{
	size_t hup;
	int rc = s->thr ? poll_hup(s, ms, extra_fd, extra_ready, &hup)
			: ring__poll_extra(s->rings, s->nr_rings, ms, &hup, extra_fd, extra_ready);

	if (rc >= 0 && hup == s->nr_rings && s->tids[0] != -1)
		s->targets_gone = 1;   /* every thread we follow has exited */
	return rc;
}

int record__targets_gone(const struct record *s)
{
	return s->targets_gone;
}

static int write_error(struct record *s, struct rec_err *e)
{
	return rec_fail(e, s->werr.err ? s->werr.err : EIO, "%s", s->werr.msg[0] ? s->werr.msg : "write failed");
}

/*
 * After each pass over the rings: FINISHED_ROUND (perf's ordering promise),
 * then push the records to the file, so that a pipe reader sees them and a
 * SIGKILL loses at most this pass.
 */
static int end_pass(struct record *s, struct rec_err *e)
{
	struct synth sy = { write_rec, s, 0, 0 };
	struct pd_error pe;
	if (synth__finished(&sy, PD_RECORD_FINISHED_ROUND) < 0)
		return write_error(s, e);
	if (pd_writer_flush(s->w, &pe) < 0) {
		if (pe.code == PD_ERR_NOSPC)
			s->st.disk_full = 1;
		if (!s->werr.err)
			rec_fail(&s->werr, pe.code == PD_ERR_NOSPC ? ENOSPC : EIO, "%s", pe.msg);
		return write_error(s, e);
	}
	return 0;
}

int record__drain(struct record *s, struct rec_err *e)
{
	long total = 0;

	if (s->st.disk_full)
		return write_error(s, e);
	if (s->thr) {   /* the reader threads drain the rings: report how they fare */
		if (rthreads_error(s->thr, e) < 0) {
			s->st.disk_full = e->err == ENOSPC || e->err == EDQUOT || e->err == EFBIG;
			return -1;
		}
		return 0;
	}
	for (size_t i = 0; i < s->nr_rings; i++) {
		if (s->rings[i]->overwrite)
			continue;   /* backward rings are read on snapshots */
		long n = 0;
		if (!ring_below_flush(s, s->rings[i]))   /* the AUX area is read either way, as perf does */
			n = ring__consume(s->rings[i], ring_record, s);
		if (n < 0 || ring_done(s) < 0)
			return write_error(s, e);
		total += n;
		/* then the trace its AUX records announced (full-trace mode) */
		if (s->aux_map && s->aux_map[i] && !s->o.snapshot) {
			n = aux__consume(&s->aux[i], aux_chunk, s);
			if (n < 0)
				return write_error(s, e);
			total += n > 0;
		}
	}
	return total ? end_pass(s, e) : 0;
}

/* AUX areas of every ring: stop all AUX events first, so that the snapshots cover one moment. */
static int aux_snapshot_begin(struct record *s, struct rec_err *e)
{
	for (size_t i = 0; i < s->nr_rings; i++)
		if (s->aux_map[i] && aux__snapshot_begin(&s->aux[i]) < 0)
			return rec_fail(e, errno, "PERF_EVENT_IOC_DISABLE of AUX event %s on cpu %d failed: %s",
					s->evl->v[s->aux_ev].name, s->rings[i]->cpu, strerror(errno));
	return 0;
}

static int aux_snapshot_end(struct record *s, struct rec_err *e)
{
	int rc = 0;
	for (size_t i = 0; i < s->nr_rings; i++)
		if (s->aux_map[i] && aux__snapshot_end(&s->aux[i]) < 0 && rc == 0)
			rc = rec_fail(e, errno, "PERF_EVENT_IOC_ENABLE of AUX event %s on cpu %d failed: %s",
				      s->evl->v[s->aux_ev].name, s->rings[i]->cpu, strerror(errno));
	return rc;
}

static long aux_snapshot_read(struct record *s)
{
	long total = 0;
	for (size_t i = 0; i < s->nr_rings; i++) {
		if (!s->aux_map[i])
			continue;
		long n = aux__snapshot_read(&s->aux[i], aux_chunk, s);
		if (n < 0)
			return -1;
		total += n;
	}
	return total;
}

/* @stopped: the events are already disabled (end of recording): read without restarting. */
static int snapshot(struct record *s, int stopped, struct rec_err *e)
{
	long total = 0;
	int aux = s->aux_ev >= 0 && s->o.snapshot;

	if (s->st.disk_full)
		return write_error(s, e);
	if (aux && !stopped && aux_snapshot_begin(s, e) < 0) {
		aux_snapshot_end(s, e);
		return -1;
	}
	if (aux) {
		long n = aux_snapshot_read(s);
		if (n < 0) {
			if (!stopped)
				aux_snapshot_end(s, e);
			return write_error(s, e);
		}
		total += n > 0;
	}
	for (size_t i = 0; i < s->nr_rings; i++) {   /* the backward rings at the same moment */
		if (!s->rings[i]->overwrite)
			continue;
		long n = ring__snapshot(s->rings[i], ring_record, s, e);
		if (n >= 0 && ring_done(s) < 0)
			n = -1;
		if (n < 0) {
			if (aux && !stopped)
				aux_snapshot_end(s, e);
			return s->werr.err ? write_error(s, e) : -1;
		}
		total += n;
	}
	if (aux && !stopped && aux_snapshot_end(s, e) < 0)
		return -1;
	s->snapshots++;
	return total ? end_pass(s, e) : 0;
}

int record__snapshot(struct record *s, struct rec_err *e)
{
	return snapshot(s, 0, e);
}

/* ----------------------------------------------------------- finish */

static int end_features(struct record *s, struct rec_err *e)
{
	char **list;
	size_t k = 0;
	int rc;

	if (s->have_time && features__sample_time(s->w, s->first_time, s->last_time, e) < 0)
		return -1;
	if (s->z && compressed_feature(s, e) < 0)
		return -1;
	/*
	 * -B: no BUILD_ID feature. perf record also leaves it out with -z, for it
	 * finds the objects by reading its data back; rbrecord noted them as they
	 * went by, so a compressed recording keeps its build ids (--archive and
	 * rbdecode --symdir need them).
	 */
	if (s->o.no_buildid)
		return 0;
	list = malloc((s->paths.n ? s->paths.n : 1) * sizeof(*list));
	if (!list)
		return rec_fail(e, ENOMEM, "out of memory");
	for (size_t i = 0; i < s->paths.cap; i++)
		if (s->paths.v[i])
			list[k++] = s->paths.v[i];
	rc = features__build_ids(s->w, list, k, e);
	free(list);
	return rc;
}

/*
 * perf's end of recording: the kernel counts every sample it could not put
 * in a ring, but reports the last of them only with the next record that
 * fits, which never comes once the events are disabled. Read each event's
 * count (PERF_FORMAT_LOST) and write it as PERF_RECORD_LOST_SAMPLES with the
 * event's sample id, as perf record does; the totals become the "lost" count.
 */
static int lost_samples(struct record *s, struct rec_err *e)
{
	/* note_record() adds each count to st.lost_samples as it is written */
	for (int c = 0; c < s->nr_cpus; c++)
		for (int t = 0; t < s->nr_tids; t++)
			for (size_t i = 0; i < s->evl->n; i++) {
				size_t k = fd_index(s, c, t, i);
				uint64_t v[3];   /* value, id, lost */
				if (read(s->fds[k], v, sizeof(v)) != (ssize_t)sizeof(v) || !v[2])
					continue;

				/* header, lost, then the sample_id trailer of SAMPLE_TYPE: pid/tid, time, cpu/res, identifier */
				uint64_t rec[2 + TRAILER_SIZE / 8];
				struct perf_event_header h = { PERF_RECORD_LOST_SAMPLES, 0, (uint16_t)sizeof(rec) };
				memcpy(rec, &h, sizeof(h));
				rec[1] = v[2];
				uint32_t pt[2] = { (uint32_t)s->tids[t], (uint32_t)s->tids[t] };
				memcpy(&rec[2], pt, 8);
				rec[3] = s->last_time;
				uint32_t cr[2] = { (uint32_t)s->cpus[c], 0 };
				memcpy(&rec[4], cr, 8);
				rec[5] = s->ids[k];
				if (write_rec(s, rec) < 0)
					return write_error(s, e);
			}
	return 0;
}

int record__finish(struct record *s, struct rec_err *e)
{
	struct pd_error pe;
	struct rec_err ignore;
	int rc = 0;

	/* stop the events first so the last drain sees everything they will ever write */
	ioctl_leaders(s, PERF_EVENT_IOC_DISABLE, &ignore);
	if (!s->w)
		return 0;
	if (!s->st.disk_full && (s->o.overwrite || (s->o.snapshot && s->o.snapshot_on_exit)))
		rc = snapshot(s, 1, e);
	s->final = 1;
	if (s->thr) {   /* the readers' last pass, then their files are closed */
		if (rthreads_stop(s->thr, e) < 0 && rc == 0) {
			s->st.disk_full = e->err == ENOSPC || e->err == EDQUOT || e->err == EFBIG;
			rc = -1;
		}
	} else if (!rc && !s->st.disk_full) {
		rc = record__drain(s, e);   /* the rest of the forward rings (-S: their AUX records) */
	}
	if (rc == 0 && !s->st.disk_full && s->fmt_lost)
		rc = lost_samples(s, e);
	if (s->st.disk_full && s->reserve_fd >= 0) {
		close(s->reserve_fd);   /* give the space back: the writer still has to finish the file */
		s->reserve_fd = -1;
	}
	if (!s->w)   /* --switch-output could not start a new file: nothing in progress */
		return rc;
	if (!s->pipe && end_features(s, rc < 0 ? &ignore : e) < 0 && rc == 0)
		rc = -1;
	s->st.bytes = s->bytes_done + pd_writer_data_size(s->w) + (s->thr ? rthreads_bytes(s->thr) : 0);
	int crc = pd_writer_close(s->w, &pe);
	s->w = NULL;
	if (crc < 0 && rc == 0)
		rc = rec_fail(e, pe.code == PD_ERR_NOSPC ? ENOSPC : EIO, "%s", pe.msg);
	return rc;
}

/* ----------------------------------------------------- switch output */

uint64_t record__file_size(const struct record *s)
{
	return s->w ? pd_writer_data_size(s->w) : 0;
}

/*
 * perf's record__switch_output: the file in progress gets its end features
 * and header (a complete perf.data) and the name @rotated; a new file at the
 * output path starts with the same attrs and features and the synthesized
 * state again (time conversion, id index, kernel and module maps, thread and
 * CPU maps, the processes), so that each file reads on its own. The caller
 * drained the rings just before: every record is in exactly one file.
 */
int record__rotate(struct record *s, const char *rotated, struct rec_err *e)
{
	struct pd_writer_opts wo;
	struct pd_error pe;
	int rc = 0;

	if (!s->w || s->pipe)
		return rec_fail(e, EINVAL, "no file to switch");
	if (s->st.disk_full)
		return write_error(s, e);
	if (end_features(s, e) < 0)
		rc = -1;
	if (s->st.disk_full && s->reserve_fd >= 0) {
		close(s->reserve_fd);   /* the header still has to be written */
		s->reserve_fd = -1;
	}
	s->bytes_done += pd_writer_data_size(s->w);
	int crc = pd_writer_close(s->w, &pe);
	s->w = NULL;
	if (crc < 0) {
		if (pe.code == PD_ERR_NOSPC)
			s->st.disk_full = 1;
		if (rc == 0)
			rc = rec_fail(e, pe.code == PD_ERR_NOSPC ? ENOSPC : EIO, "%s", pe.msg);
	}
	/* even unfinished, the file keeps its own name: the next one would overwrite it */
	if (rename(s->o.output, rotated) < 0) {
		int err = errno;
		if (rc == 0)
			rc = rec_fail(e, err, "%s: cannot rename it %s: %s", s->o.output, rotated, strerror(err));
		return rc;
	}
	if (rc < 0)
		return rc;
	s->have_time = 0;
	pathset_free(&s->paths);
	if (s->z) {   /* -z: the new file's reader starts a new zstd stream */
		zcomp__restart(s->z);
		zcomp__totals(s->z, &s->z_in0, &s->z_out0);
	}
	pd_writer_opts_init(&wo);
	if (pd_writer_open(&s->w, s->o.output, &wo, &pe) < 0) {
		s->w = NULL;
		return rec_fail(e, pe.code == PD_ERR_NOSPC ? ENOSPC : EIO, "%s", pe.msg);
	}
	s->rotated = 1;
	if (add_evsels(s, e) < 0 || set_static_features(s, s->argc, s->argv, e) < 0 || synthesize(s, e) < 0)
		return -1;
	return 0;
}

void record__stats(const struct record *s, struct rec_stats *st)
{
	*st = s->st;
	st->nr_threads = s->thr ? rthreads_count(s->thr) : 0;
	st->nr_rings = s->nr_rings;
	st->nr_fds = s->nr_fds;
	st->aux = s->aux_ev >= 0;
	if (st->aux)
		snprintf(st->aux_pmu, sizeof(st->aux_pmu), "%s", s->auxpmu.name);
	st->aux_bytes_per_ring = s->aux_size;
	for (size_t i = 0; s->aux_map && i < s->nr_rings; i++) {
		if (!s->aux_map[i])
			continue;
		st->aux_bytes += s->aux[i].bytes;
		st->aux_chunks += s->aux[i].chunks;
		st->snap_wrapped += s->aux[i].snap_wrapped;
		st->snap_overwritten += s->aux[i].overwritten;
		if (s->o.snapshot)
			st->snap_aux_bytes += s->aux[i].bytes;
	}
	st->aux_records = s->counts.aux_records;
	st->aux_truncated = s->counts.truncated;
	st->aux_partial = s->counts.partial;
	st->aux_collision = s->counts.collision;
	st->itrace_start = s->counts.itrace_start;
	st->aux_hw_id = s->counts.hw_id;
	st->snapshots = s->snapshots;
	if (s->w)   /* after record__finish: st.bytes as it set it */
		st->bytes = s->bytes_done + pd_writer_data_size(s->w) + (s->thr ? rthreads_bytes(s->thr) : 0);
	zcomp__totals(s->z, &st->comp_in, &st->comp_out);
}

void record__ring_info(const struct record *s, size_t i, int *cpu, int *tid, int *fd, size_t *bytes)
{
	*cpu = s->rings[i]->cpu;
	*tid = s->rings[i]->tid;
	*fd = s->rings[i]->fd;
	*bytes = s->rings[i]->data_size;
}

void record__free(struct record *s)
{
	if (!s)
		return;
	rthreads_free(s->thr);     /* before the rings it reads */
	for (size_t i = 0; s->aux_map && i < s->rings_cap; i++)
		if (s->aux_map[i]) {
			aux__fini(&s->aux[i]);
			munmap(s->aux_map[i], s->aux_size);
		}
	free(s->aux);
	free(s->aux_map);
	free(s->aux_ctx);
	for (size_t i = 0; s->rings && i < s->rings_cap; i++)
		ring__free(s->rings[i]);
	free(s->rings);
	for (size_t i = 0; s->fds && i < s->nr_fds; i++)
		if (s->fds[i] >= 0)
			close(s->fds[i]);
	free(s->fds);
	free(s->ids);
	free(s->cpus);
	free(s->tids);
	if (s->w)
		pd_writer_free(s->w);
	if (s->reserve_fd >= 0)
		close(s->reserve_fd);
	pathset_free(&s->paths);
	zcomp__free(s->z);
	free(s);
}
