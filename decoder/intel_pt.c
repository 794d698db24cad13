/*
 * intel_pt.c - see intel_pt.h. Three parts:
 *
 *  1. Gathering (rb_pt_open): a pass over the recording collects
 *     AUXTRACE_INFO (type 1), TIME_CONV, the CPUID feature and every
 *     AUXTRACE payload, appended to its queue's buffer. Chunks whose AUX
 *     offsets follow each other form one run; a run is decoded as one
 *     stream, and a jump between runs is where the trace restarts.
 *
 *  2. Decoding (rb_pt_run_until): per queue, a libipt block decoder over
 *     the current run, configured from AUXTRACE_INFO (mtc period, TSC/CTC
 *     ratio, nominal frequency) and the CPU's errata. Blocks end at every
 *     taken branch (end_on_call / end_on_jump), so a branch is the last
 *     instruction of a block and its target the first of the next one.
 *     Queues advance in time order: the one that is furthest behind goes
 *     next, up to the time the session asks for.
 *
 *  3. Memory: one libipt image per process. Sections are added on first
 *     miss: the image's read callback finds the mapping in the session's
 *     machine (maps as of now in the decode), locates the object's file
 *     (build-id cache, --symfs, recorded path) and adds it through libipt's
 *     section cache, so that later reads of that object never come back
 *     here. An exec drops the process's image.
 *
 * Losses are gaps in the session's model: a decode error ("no image for
 * 0x... in pid N", "decoder lost sync") from the last decoded time to the
 * next sync point with the bytes skipped, an overflow packet ("hardware
 * overflow"). Times: TSC to perf time with the AUXTRACE_INFO conversion.
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <intel-pt.h>
#include "intel_pt.h"

#define PT_AUXTRACE_TYPE 1
#define MAX_CPUS 4096

enum {   /* priv[] indexes (facts file 4.1) */
	P_PMU_TYPE, P_TIME_SHIFT, P_TIME_MULT, P_TIME_ZERO, P_CAP_USER_TIME_ZERO, P_TSC_BIT,
	P_NORETCOMP_BIT, P_HAVE_SCHED_SWITCH, P_SNAPSHOT_MODE, P_PER_CPU_MMAPS, P_MTC_BIT,
	P_MTC_FREQ_BITS, P_TSC_CTC_N, P_TSC_CTC_D, P_CYC_BIT, P_MAX_NONTURBO_RATIO, P_FILTER_STR_LEN,
	P_MAX
};

struct chunk {
	uint64_t buf_off, size, aux_offset, reference, file_offset;
};

struct run {                     /* chunks whose AUX offsets follow each other */
	uint64_t buf_off, size;
	size_t first_chunk, nr_chunks;
};

struct proc_image {
	int32_t pid;
	struct pt_image *img;
	struct rb_pt *pt;
	struct proc_image *next;
};

enum qstate { Q_NEXT_RUN, Q_SYNC, Q_DECODE, Q_DONE };

struct ptq {
	uint32_t idx;
	int32_t cpu, tid;                /* from the AUXTRACE records, -1 if none */
	uint8_t *buf;
	uint64_t len, cap;
	struct chunk *chunks;
	size_t nr_chunks, cap_chunks;
	struct run *runs;
	size_t nr_runs, cur_run;
	struct pt_block_decoder *dec;
	enum qstate state;
	int status;                      /* libipt status bits of the last call */
	uint64_t tsc;                    /* newest decoder time, TSC */
	uint64_t time;                   /* the same in perf time (0 until known) */
	struct proc_image *img;          /* image the decoder uses now */
	int32_t pid_now, tid_now;
	/* the branch at the end of the previous block, waiting for its target */
	int pending;
	uint64_t pend_from, pend_next;
	uint32_t pend_flags;
	uint64_t insns;                  /* instructions since the last branch event */
	int need_begin;                  /* (re)synchronized: the next IP starts a trace */
	uint64_t last_ok_offset;         /* trace offset of the last good decode, for gaps */
};

struct rb_pt {
	struct rb_pt_env env;
	uint64_t priv[P_MAX];
	size_t nr_priv;
	uint64_t config;                 /* the intel_pt evsel's attr.config */
	int have_config;
	int timeless;
	uint64_t time_shift, time_mult, time_zero;
	struct pt_cpu cpu;
	int have_cpu;
	struct ptq *q;
	size_t nr_q;
	int32_t cur_pid[MAX_CPUS], cur_tid[MAX_CPUS];
	struct pt_image_section_cache *iscache;
	struct proc_image *images;
	int32_t miss_pid;                /* the last read the callback could not serve */
	uint64_t miss_ip;
	int in_decode;                   /* an error inside libipt callbacks is reported once */
	int failed;                      /* a sink returned non-zero */
};

/* ------------------------------------------------------------ time */

static uint64_t tsc_to_perf(const struct rb_pt *pt, uint64_t tsc)
{
	if (pt->timeless || !pt->time_mult)
		return 0;
	uint64_t quot = tsc >> pt->time_shift, rem = tsc & (((uint64_t)1 << pt->time_shift) - 1);
	return pt->time_zero + quot * pt->time_mult + ((rem * pt->time_mult) >> pt->time_shift);
}

static uint64_t perf_to_tsc(const struct rb_pt *pt, uint64_t ns)
{
	if (ns == UINT64_MAX || pt->timeless || !pt->time_mult)
		return UINT64_MAX;
	uint64_t t = ns - pt->time_zero     /* modulo 2^64: time_zero may be "negative" */, quot = t / pt->time_mult, rem = t % pt->time_mult;
	return (quot << pt->time_shift) + ((rem << pt->time_shift) / pt->time_mult);
}

/* ------------------------------------------------------------ gathering */

static struct ptq *queue(struct rb_pt *pt, uint32_t idx)
{
	if (idx >= 65536)
		return NULL;
	if (idx >= pt->nr_q) {
		size_t n = (size_t)idx + 1;
		struct ptq *v = realloc(pt->q, n * sizeof(*v));
		if (!v)
			return NULL;
		for (size_t i = pt->nr_q; i < n; i++) {
			memset(&v[i], 0, sizeof(v[i]));
			v[i].idx = (uint32_t)i;
			v[i].cpu = v[i].tid = -1;
			v[i].pid_now = v[i].tid_now = -1;
		}
		pt->q = v;
		pt->nr_q = n;
	}
	return &pt->q[idx];
}

static int add_chunk(struct rb_pt *pt, struct pd_reader *r, const struct pd_event *ev, uint64_t file_offset,
		     struct pd_error *err)
{
	struct ptq *q = queue(pt, ev->u.auxtrace.idx);
	uint64_t size = ev->u.auxtrace.size;
	if (!q)
		return ev->u.auxtrace.idx >= 65536 ? 0 : PD_ERR_NOMEM;
	if (q->len + size > q->cap) {
		uint64_t cap = q->cap ? q->cap : 65536;
		while (cap < q->len + size)
			cap *= 2;
		uint8_t *b = realloc(q->buf, (size_t)cap);
		if (!b)
			return PD_ERR_NOMEM;
		q->buf = b;
		q->cap = cap;
	}
	int64_t got = pd_reader_read_payload(r, q->buf + q->len, (size_t)size, err);
	if (got < 0)
		return (int)got;
	if (q->nr_chunks == q->cap_chunks) {
		size_t n = q->cap_chunks ? q->cap_chunks * 2 : 16;
		struct chunk *c = realloc(q->chunks, n * sizeof(*c));
		if (!c)
			return PD_ERR_NOMEM;
		q->chunks = c;
		q->cap_chunks = n;
	}
	struct chunk *c = &q->chunks[q->nr_chunks];
	*c = (struct chunk){ .buf_off = q->len, .size = (uint64_t)got, .aux_offset = ev->u.auxtrace.offset,
			     .reference = ev->u.auxtrace.reference, .file_offset = file_offset };
	q->cpu = (int32_t)ev->u.auxtrace.cpu;
	q->tid = (int32_t)ev->u.auxtrace.tid;
	/* a chunk that starts where the previous one ended continues its run */
	struct run *last = q->nr_runs ? &q->runs[q->nr_runs - 1] : NULL;
	const struct chunk *prev = q->nr_chunks ? &q->chunks[q->nr_chunks - 1] : NULL;
	if (last && prev && prev->aux_offset + prev->size == c->aux_offset && !pt->priv[P_SNAPSHOT_MODE]) {
		last->size += c->size;
		last->nr_chunks++;
	} else {
		struct run *v = realloc(q->runs, (q->nr_runs + 1) * sizeof(*v));
		if (!v)
			return PD_ERR_NOMEM;
		q->runs = v;
		q->runs[q->nr_runs++] = (struct run){ .buf_off = c->buf_off, .size = c->size,
						      .first_chunk = q->nr_chunks, .nr_chunks = 1 };
	}
	q->nr_chunks++;
	q->len += (uint64_t)got;
	return 0;
}

static void take_info(struct rb_pt *pt, const struct pd_event *ev)
{
	size_t n = ev->u.auxtrace_info.nr_priv < P_MAX ? (size_t)ev->u.auxtrace_info.nr_priv : P_MAX;
	for (size_t i = 0; i < n; i++)
		pt->priv[i] = pd_u64_at(ev->u.auxtrace_info.priv, i);
	pt->nr_priv = n;
}

/* "GenuineIntel,6,85,4" */
static void take_cpuid(struct rb_pt *pt, struct pd_reader *r)
{
	const uint8_t *d;
	size_t size;
	if (!pd_reader_feature(r, PD_FEAT_CPUID, &d, &size, NULL) || size < 5)
		return;
	char s[128];
	size_t n = size - 4 < sizeof(s) - 1 ? size - 4 : sizeof(s) - 1;
	memcpy(s, d + 4, n);
	s[n] = 0;
	unsigned fam, model, step;
	if (strncmp(s, "GenuineIntel,", 13) || sscanf(s + 13, "%u,%u,%u", &fam, &model, &step) != 3)
		return;
	pt->cpu.vendor = pcv_intel;
	pt->cpu.family = (uint16_t)fam;
	pt->cpu.model = (uint8_t)model;
	pt->cpu.stepping = (uint8_t)step;
	pt->have_cpu = 1;
}

static int gather(struct rb_pt *pt, const char *path, struct pd_error *err)
{
	struct pd_reader *r;
	int rc = pd_reader_open(&r, path, NULL, err);
	if (rc < 0)
		return rc;
	struct pd_record rec;
	int found = 0, more;
	uint64_t records = 0;
	while ((more = pd_reader_next(r, &rec, err)) == 1) {
		records++;
		if (rec.type != PD_RECORD_AUXTRACE_INFO && rec.type != PD_RECORD_AUXTRACE &&
		    rec.type != PD_RECORD_TIME_CONV) {
			/* perf writes AUXTRACE_INFO among the first records: stop early without it */
			if (!found && records > 4096)
				break;
			continue;
		}
		struct pd_event ev;
		if (pd_event_parse(r, &rec, &ev, NULL) < 0)
			continue;
		if (rec.type == PD_RECORD_AUXTRACE_INFO) {
			if (ev.u.auxtrace_info.type == PT_AUXTRACE_TYPE && !found) {
				take_info(pt, &ev);
				found = 1;
			}
		} else if (rec.type == PD_RECORD_TIME_CONV) {
			/* used when AUXTRACE_INFO has no conversion of its own */
			if (!pt->time_mult) {
				pt->time_shift = ev.u.time_conv.time_shift;
				pt->time_mult = ev.u.time_conv.time_mult;
				pt->time_zero = ev.u.time_conv.time_zero;
			}
		} else if (found && (rc = add_chunk(pt, r, &ev, rec.payload_offset, err)) < 0) {
			break;
		}
	}
	if (found) {
		take_cpuid(pt, r);
		for (size_t i = 0; i < pd_reader_nr_evsels(r); i++) {
			const struct pd_evsel *es = pd_reader_evsel(r, i);
			if (es->attr.type == pt->priv[P_PMU_TYPE] && !pt->have_config) {
				pt->config = es->attr.config;
				pt->have_config = 1;
			}
			if (!(es->attr.sample_type & PD_SAMPLE_TIME))
				pt->timeless = 1;
		}
	}
	pd_reader_free(r);
	if (rc < 0)
		return rc;
	/* a damaged record ends the gathering; what came before is decoded */
	return found;
}

/* ------------------------------------------------------------ memory */

static int read_memory(uint8_t *buffer, size_t size, const struct pt_asid *asid, uint64_t ip, void *context);

static struct proc_image *proc_image(struct rb_pt *pt, int32_t pid)
{
	for (struct proc_image *p = pt->images; p; p = p->next)
		if (p->pid == pid)
			return p;
	struct proc_image *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	char name[32];
	snprintf(name, sizeof(name), "pid %d", (int)pid);
	p->img = pt_image_alloc(name);
	if (!p->img) {
		free(p);
		return NULL;
	}
	p->pid = pid;
	p->pt = pt;
	pt_image_set_callback(p->img, read_memory, p);
	p->next = pt->images;
	pt->images = p;
	return p;
}

static void drop_image(struct rb_pt *pt, int32_t pid)
{
	for (struct proc_image **pp = &pt->images; *pp; pp = &(*pp)->next) {
		struct proc_image *p = *pp;
		if (p->pid != pid)
			continue;
		for (size_t i = 0; i < pt->nr_q; i++)
			if (pt->q[i].img == p) {
				if (pt->q[i].dec)
					pt_blk_set_image(pt->q[i].dec, NULL);
				pt->q[i].img = NULL;
			}
		*pp = p->next;
		pt_image_free(p->img);
		free(p);
		return;
	}
}

/*
 * libipt asks for memory no section covers: find the mapping, add the
 * object's file as a cached section, and read from it.
 */
static int read_memory(uint8_t *buffer, size_t size, const struct pt_asid *asid, uint64_t ip, void *context)
{
	struct proc_image *p = context;
	struct rb_pt *pt = p->pt;
	(void)asid;
	struct rb_thread *t = rb_machine_thread(pt->env.m, p->pid, p->pid, 0);
	struct rb_addr_loc al;
	unsigned cpumode = ip >= rb_machine_kernel_start(pt->env.m) ? 1 : 2;
	pt->miss_pid = p->pid;
	pt->miss_ip = ip;
	if (!t)
		return -pte_nomap;
	rb_machine_resolve(pt->env.m, t, cpumode, ip, &al);
	if (!al.map || !al.dso)
		return -pte_nomap;
	const char *file = rb_machine_dso_image(pt->env.m, al.dso);
	if (!file)
		return -pte_nomap;
	int isid = pt_iscache_add_file(pt->iscache, file, al.map->pgoff, al.map->end - al.map->start, al.map->start);
	if (isid < 0)
		return -pte_nomap;
	if (pt_image_add_cached(p->img, pt->iscache, isid, NULL) < 0)
		return -pte_nomap;
	return pt_iscache_read(pt->iscache, buffer, size, isid, ip);
}

/* ------------------------------------------------------------ events out */

static int emit_gap(struct rb_pt *pt, struct ptq *q, const char *reason, uint64_t t0, uint64_t t1,
		    uint64_t bytes, const char *detail)
{
	struct rb_gap_ev g = { .time_start = t0, .time_end = t1, .cpu = q->cpu, .pid = q->pid_now,
			       .tid = q->tid_now, .source = "intel_pt", .reason = reason, .bytes_lost = bytes,
			       .file_offset = 0, .detail = detail };
	pt->env.st->gaps++;
	int rc = pt->env.sink->gap ? pt->env.sink->gap(pt->env.sink->ctx, &g) : 0;
	if (rc)
		pt->failed = rc;
	return rc;
}

static void resolve(struct rb_pt *pt, struct rb_thread *t, uint64_t ip, struct rb_addr_loc *al)
{
	if (!ip || !t) {
		memset(al, 0, sizeof(*al));
		al->addr = ip;
		return;
	}
	unsigned cpumode = ip >= rb_machine_kernel_start(pt->env.m) ? 1 : 2;
	rb_machine_resolve(pt->env.m, t, cpumode, ip, al);
	if (pt->env.perf_export)
		al->sym = rb_machine_export_sym(pt->env.m, al, al->addr);
}

static int emit_branch(struct rb_pt *pt, struct ptq *q, uint64_t from, uint64_t to, uint32_t flags)
{
	struct rb_branch_ev b = { .time = q->time, .cpu = q->cpu, .queue = q->idx, .source = "intel_pt",
				  .from = from, .to = to, .flags = flags, .insn_count = q->insns };
	q->insns = 0;
	pt->env.st->branches++;
	if (!pt->env.sink->branch)
		return 0;
	b.thread = rb_machine_thread(pt->env.m, q->pid_now, q->tid_now, 1);
	if (!b.thread)
		return pt->failed = -ENOMEM;
	b.main_thread = rb_machine_main_thread(pt->env.m, b.thread);
	b.comm = rb_machine_sample_comm(pt->env.m, b.thread);
	resolve(pt, b.thread, from, &b.from_al);
	resolve(pt, b.thread, to, &b.to_al);
	int rc = pt->env.sink->branch(pt->env.sink->ctx, &b);
	if (rc)
		pt->failed = rc;
	return rc;
}

/*
 * The kind of the branch instruction @raw (x86, any mode): perf's flags,
 * 0 when it is not a branch. Prefixes (operand and address size,
 * segment / branch hints, REX, BND) are skipped.
 */
static uint32_t branch_kind(const uint8_t *raw, unsigned size)
{
	unsigned i = 0;
	while (i < size && (raw[i] == 0x66 || raw[i] == 0x67 || raw[i] == 0xf2 || raw[i] == 0xf3 ||
			    raw[i] == 0x2e || raw[i] == 0x3e || raw[i] == 0x26 || raw[i] == 0x36 ||
			    raw[i] == 0x64 || raw[i] == 0x65 || (raw[i] >= 0x40 && raw[i] <= 0x4f)))
		i++;
	if (i >= size)
		return 0;
	uint8_t op = raw[i];
	uint8_t modrm_reg = i + 1 < size ? (raw[i + 1] >> 3) & 7 : 0;
	if ((op >= 0x70 && op <= 0x7f) || (op >= 0xe0 && op <= 0xe3))
		return RB_BR_BRANCH | RB_BR_CONDITIONAL;
	switch (op) {
	case 0xe8: case 0x9a:
		return RB_BR_BRANCH | RB_BR_CALL;
	case 0xe9: case 0xeb: case 0xea:
		return RB_BR_BRANCH;
	case 0xc2: case 0xc3: case 0xca: case 0xcb:
		return RB_BR_BRANCH | RB_BR_RETURN;
	case 0xcf:      /* iret */
		return RB_BR_BRANCH | RB_BR_RETURN | RB_BR_INTERRUPT;
	case 0xcc: case 0xcd: case 0xce: case 0xf1:
		return RB_BR_BRANCH | RB_BR_CALL | RB_BR_INTERRUPT;
	case 0xff:
		if (modrm_reg == 2 || modrm_reg == 3)
			return RB_BR_BRANCH | RB_BR_CALL;
		if (modrm_reg == 4 || modrm_reg == 5)
			return RB_BR_BRANCH;
		return 0;
	case 0x0f:
		if (i + 1 >= size)
			return 0;
		op = raw[i + 1];
		if (op >= 0x80 && op <= 0x8f)
			return RB_BR_BRANCH | RB_BR_CONDITIONAL;
		if (op == 0x05 || op == 0x34)    /* syscall, sysenter */
			return RB_BR_BRANCH | RB_BR_CALL | RB_BR_SYSCALLRET;
		if (op == 0x07 || op == 0x35)    /* sysret, sysexit */
			return RB_BR_BRANCH | RB_BR_RETURN | RB_BR_SYSCALLRET;
		return 0;
	}
	return 0;
}

/* ------------------------------------------------------------ decoding */

static int start_run(struct rb_pt *pt, struct ptq *q)
{
	if (q->dec) {
		pt_blk_free_decoder(q->dec);
		q->dec = NULL;
	}
	if (q->cur_run >= q->nr_runs) {
		q->state = Q_DONE;
		return 0;
	}
	const struct run *run = &q->runs[q->cur_run++];
	struct pt_config c;
	pt_config_init(&c);
	c.begin = q->buf + run->buf_off;
	c.end = c.begin + run->size;
	if (pt->have_cpu) {
		c.cpu = pt->cpu;
		pt_cpu_errata(&c.errata, &c.cpu);
	}
	if (pt->nr_priv > P_TSC_CTC_D) {
		c.cpuid_0x15_eax = (uint32_t)pt->priv[P_TSC_CTC_D];
		c.cpuid_0x15_ebx = (uint32_t)pt->priv[P_TSC_CTC_N];
		uint64_t bits = pt->priv[P_MTC_FREQ_BITS];
		if (bits)
			c.mtc_freq = (uint8_t)((pt->config & bits) >> __builtin_ctzll(bits));
	}
	if (pt->nr_priv > P_MAX_NONTURBO_RATIO)
		c.nom_freq = (uint8_t)pt->priv[P_MAX_NONTURBO_RATIO];
	c.flags.variant.block.end_on_call = 1;
	c.flags.variant.block.end_on_jump = 1;
	q->dec = pt_blk_alloc_decoder(&c);
	if (!q->dec)
		return pt->failed = -ENOMEM;
	if (q->img)
		pt_blk_set_image(q->dec, q->img->img);
	q->pending = 0;
	q->state = Q_SYNC;
	return 0;
}

static void update_time(struct rb_pt *pt, struct ptq *q)
{
	uint64_t tsc;
	uint32_t lost_mtc, lost_cyc;
	if (pt_blk_time(q->dec, &tsc, &lost_mtc, &lost_cyc) >= 0 && tsc > q->tsc) {
		q->tsc = tsc;
		q->time = tsc_to_perf(pt, tsc);
	}
}

/* The thread a queue's trace belongs to now, and its image. */
static int set_thread(struct rb_pt *pt, struct ptq *q)
{
	int32_t pid = -1, tid = -1;
	if (q->cpu >= 0 && q->cpu < MAX_CPUS && (pt->priv[P_PER_CPU_MMAPS] || q->tid < 0)) {
		pid = pt->cur_pid[q->cpu];
		tid = pt->cur_tid[q->cpu];
	}
	if (tid < 0 && q->tid >= 0) {
		struct rb_thread *t = rb_machine_thread(pt->env.m, -1, q->tid, 0);
		tid = q->tid;
		pid = t && t->pid >= 0 ? t->pid : q->tid;
	}
	q->pid_now = pid;
	q->tid_now = tid;
	struct proc_image *p = pid >= 0 ? proc_image(pt, pid) : NULL;
	if (pid >= 0 && !p)
		return pt->failed = -ENOMEM;
	if (p != q->img) {
		q->img = p;
		if (q->dec)
			pt_blk_set_image(q->dec, p ? p->img : NULL);
	}
	return 0;
}

static int on_error(struct rb_pt *pt, struct ptq *q, int err)
{
	char detail[200];
	uint64_t off = 0, t0 = q->time;
	pt_blk_get_offset(q->dec, &off);
	const char *reason = "decoder lost sync";
	if (err == -pte_nomap) {
		reason = "no image";
		snprintf(detail, sizeof(detail), "no image for %#" PRIx64 " in pid %d (queue %u, trace offset %#" PRIx64 ")",
			 pt->miss_ip, (int)pt->miss_pid, q->idx, off);
	} else {
		snprintf(detail, sizeof(detail), "%s at trace offset %#" PRIx64 " (queue %u)",
			 pt_errstr(pt_errcode(err)), off, q->idx);
	}
	/* the trace began where the image is missing (perf shows that start too) */
	if (q->need_begin && err == -pte_nomap) {
		q->need_begin = 0;
		if (emit_branch(pt, q, 0, pt->miss_ip, RB_BR_BRANCH | RB_BR_TRACE_BEGIN))
			return pt->failed;
	}
	if (q->pending) {   /* the branch's target is not known: it ends the trace */
		q->pending = 0;
		if (emit_branch(pt, q, q->pend_from, 0, q->pend_flags | RB_BR_TRACE_END))
			return pt->failed;
	}
	q->state = Q_SYNC;
	/* the gap ends where decoding resumes: the next sync point */
	int st = pt_blk_sync_forward(q->dec);
	uint64_t off2 = off;
	if (st >= 0) {
		pt_blk_get_sync_offset(q->dec, &off2);
		update_time(pt, q);
		q->status = st;
		q->state = Q_DECODE;
		q->need_begin = 1;
		if (set_thread(pt, q))
			return pt->failed;
	} else {
		pt_blk_get_offset(q->dec, &off2);
		off2 = q->runs[q->cur_run - 1].size;
		q->state = Q_NEXT_RUN;
	}
	return emit_gap(pt, q, reason, t0, q->time, off2 > off ? off2 - off : 0, detail);
}

static int on_event(struct rb_pt *pt, struct ptq *q, const struct pt_event *ev)
{
	if (ev->has_tsc && ev->tsc > q->tsc) {
		q->tsc = ev->tsc;
		q->time = tsc_to_perf(pt, ev->tsc);
	}
	switch (ev->type) {
	case ptev_enabled:
		q->need_begin = 0;
		if (q->pending) {
			q->pending = 0;
			if (emit_branch(pt, q, q->pend_from, 0, q->pend_flags | RB_BR_TRACE_END))
				return pt->failed;
		}
		return emit_branch(pt, q, 0, ev->variant.enabled.ip, RB_BR_BRANCH | RB_BR_TRACE_BEGIN);
	case ptev_disabled:
	case ptev_async_disabled: {
		uint64_t to = ev->ip_suppressed ? 0 : ev->type == ptev_disabled ? ev->variant.disabled.ip :
			      ev->variant.async_disabled.ip;
		if (q->pending) {
			q->pending = 0;
			return emit_branch(pt, q, q->pend_from, to, q->pend_flags | RB_BR_TRACE_END);
		}
		if (ev->type == ptev_async_disabled)
			return emit_branch(pt, q, ev->variant.async_disabled.at, to,
					   RB_BR_BRANCH | RB_BR_ASYNC | RB_BR_TRACE_END);
		return 0;
	}
	case ptev_async_branch:
		q->pending = 0;
		return emit_branch(pt, q, ev->variant.async_branch.from, ev->ip_suppressed ? 0 : ev->variant.async_branch.to,
				   RB_BR_BRANCH | RB_BR_CALL | RB_BR_ASYNC | RB_BR_INTERRUPT);
	case ptev_overflow: {
		char detail[120];
		uint64_t off = 0;
		pt_blk_get_offset(q->dec, &off);
		snprintf(detail, sizeof(detail), "overflow packet at trace offset %#" PRIx64 " (queue %u): trace lost",
			 off, q->idx);
		uint64_t t0 = q->time;
		q->pending = 0;
		if (emit_gap(pt, q, "hardware overflow", t0, q->time, 0, detail))
			return pt->failed;
		if (!ev->ip_suppressed) {
			q->need_begin = 0;
			return emit_branch(pt, q, 0, ev->variant.overflow.ip, RB_BR_BRANCH | RB_BR_TRACE_BEGIN);
		}
		q->need_begin = 1;
		return 0;
	}
	default:
		return 0;
	}
}

static int on_block(struct rb_pt *pt, struct ptq *q, const struct pt_block *b)
{
	if (q->pending) {
		q->pending = 0;
		/* a conditional branch that fell through is not a branch taken */
		if (!((q->pend_flags & RB_BR_CONDITIONAL) && b->ip == q->pend_next))
			if (emit_branch(pt, q, q->pend_from, b->ip, q->pend_flags))
				return pt->failed;
	}
	if (!b->ninsn)
		return 0;
	if (q->need_begin) {
		q->need_begin = 0;
		if (emit_branch(pt, q, 0, b->ip, RB_BR_BRANCH | RB_BR_TRACE_BEGIN))
			return pt->failed;
	}
	q->insns += b->ninsn;
	pt->env.st->instructions += b->ninsn;
	uint32_t k = branch_kind(b->raw, b->size);
	if (k) {
		q->pending = 1;
		q->pend_from = b->end_ip;
		q->pend_next = b->end_ip + b->size;
		q->pend_flags = k;
	}
	return 0;
}

/* Decode queue @q while its time is at most @limit (TSC). */
static int step(struct rb_pt *pt, struct ptq *q, uint64_t limit)
{
	while (!pt->failed) {
		switch (q->state) {
		case Q_DONE:
			return 0;
		case Q_NEXT_RUN:
			if (q->pending) {
				q->pending = 0;
				if (emit_branch(pt, q, q->pend_from, 0, q->pend_flags | RB_BR_TRACE_END))
					return pt->failed;
			}
			if (start_run(pt, q))
				return pt->failed;
			continue;
		case Q_SYNC: {
			if (set_thread(pt, q))
				return pt->failed;
			int st = pt_blk_sync_forward(q->dec);
			if (st < 0) {
				uint64_t off = 0;
				pt_blk_get_offset(q->dec, &off);
				if (st != -pte_eos) {
					char detail[160];
					snprintf(detail, sizeof(detail), "%s (queue %u, run %zu)", pt_errstr(pt_errcode(st)),
						 q->idx, q->cur_run - 1);
					if (emit_gap(pt, q, "decoder lost sync", q->time, q->time,
						     q->runs[q->cur_run - 1].size, detail))
						return pt->failed;
				}
				q->state = Q_NEXT_RUN;
				continue;
			}
			q->status = st;
			q->state = Q_DECODE;
			q->need_begin = 1;
			update_time(pt, q);
			continue;
		}
		case Q_DECODE:
			break;
		}
		if (q->tsc > limit)
			return 0;
		int st = q->status;
		while (st & pts_event_pending) {
			struct pt_event ev;
			st = pt_blk_event(q->dec, &ev, sizeof(ev));
			if (st < 0)
				break;
			if (on_event(pt, q, &ev))
				return pt->failed;
		}
		if (st >= 0) {
			struct pt_block b;
			memset(&b, 0, sizeof(b));
			st = pt_blk_next(q->dec, &b, sizeof(b));
			if (st >= 0 || b.ninsn) {
				update_time(pt, q);
				if (on_block(pt, q, &b))
					return pt->failed;
			}
		}
		if (st < 0) {
			if (st == -pte_eos)
				q->state = Q_NEXT_RUN;
			else if (on_error(pt, q, st))
				return pt->failed;
			continue;
		}
		q->status = st;
	}
	return pt->failed;
}

int rb_pt_run_until(struct rb_pt *pt, uint64_t time)
{
	uint64_t limit = perf_to_tsc(pt, time);
	if (pt->timeless && time != UINT64_MAX)
		return 0;        /* no times: the trace is decoded after the sideband */
	for (;;) {
		/*
		 * The queue furthest behind goes next, until it passes the next
		 * one's time (or the limit): step() returns only when its queue
		 * is done or its time is beyond what it was given, so each turn
		 * makes progress.
		 */
		struct ptq *a = NULL;
		uint64_t second = UINT64_MAX;
		for (size_t i = 0; i < pt->nr_q; i++) {
			struct ptq *q = &pt->q[i];
			if (q->state == Q_DONE || (q->state == Q_DECODE && q->tsc > limit))
				continue;
			if (!a || q->tsc < a->tsc) {
				if (a && a->tsc < second)
					second = a->tsc;
				a = q;
			} else if (q->tsc < second) {
				second = q->tsc;
			}
		}
		if (!a)
			return 0;
		int rc = step(pt, a, second < limit ? second : limit);
		if (rc)
			return rc;
	}
}

void rb_pt_sideband(struct rb_pt *pt, const struct pd_event *ev)
{
	uint32_t cpu = ev->sid.cpu;
	int has_cpu = !!(ev->sid.present & PD_SAMPLE_CPU) && cpu < MAX_CPUS;
	switch (ev->type) {
	case PD_RECORD_ITRACE_START:
		if (has_cpu) {
			pt->cur_pid[cpu] = (int32_t)ev->u.itrace_start.pid;
			pt->cur_tid[cpu] = (int32_t)ev->u.itrace_start.tid;
		}
		break;
	case PD_RECORD_SWITCH:
		if (has_cpu && !(ev->misc & PD_MISC_SWITCH_OUT) && (ev->sid.present & PD_SAMPLE_TID)) {
			pt->cur_pid[cpu] = (int32_t)ev->sid.pid;
			pt->cur_tid[cpu] = (int32_t)ev->sid.tid;
		}
		break;
	case PD_RECORD_SWITCH_CPU_WIDE:
		if (!has_cpu)
			break;
		if (ev->misc & PD_MISC_SWITCH_OUT) {
			pt->cur_pid[cpu] = (int32_t)ev->u.context_switch.next_prev_pid;
			pt->cur_tid[cpu] = (int32_t)ev->u.context_switch.next_prev_tid;
		} else if (ev->sid.present & PD_SAMPLE_TID) {
			pt->cur_pid[cpu] = (int32_t)ev->sid.pid;
			pt->cur_tid[cpu] = (int32_t)ev->sid.tid;
		}
		break;
	case PD_RECORD_COMM:
		if (ev->misc & PD_MISC_COMM_EXEC)   /* a new program: a new memory image */
			drop_image(pt, (int32_t)ev->u.comm.pid);
		return;
	default:
		return;
	}
	/* queues of that CPU take the new thread at their next block */
	for (size_t i = 0; i < pt->nr_q; i++)
		if (pt->q[i].cpu == (int32_t)cpu && pt->q[i].state == Q_DECODE)
			set_thread(pt, &pt->q[i]);
}

int rb_pt_open(struct rb_pt **out, const char *path, const struct rb_pt_env *env, struct pd_error *err)
{
	*out = NULL;
	struct rb_pt *pt = calloc(1, sizeof(*pt));
	if (!pt)
		return PD_ERR_NOMEM;
	pt->env = *env;
	for (size_t i = 0; i < MAX_CPUS; i++)
		pt->cur_pid[i] = pt->cur_tid[i] = -1;
	int rc = gather(pt, path, err);
	if (rc <= 0) {
		rb_pt_free(pt);
		return rc;
	}
	if (pt->nr_priv > P_TIME_ZERO && pt->priv[P_TIME_MULT] &&
	    (pt->nr_priv <= P_CAP_USER_TIME_ZERO || pt->priv[P_CAP_USER_TIME_ZERO])) {
		pt->time_shift = pt->priv[P_TIME_SHIFT];
		pt->time_mult = pt->priv[P_TIME_MULT];
		pt->time_zero = pt->priv[P_TIME_ZERO];
	}
	if (pt->time_shift > 63)
		pt->time_shift = 63;
	if (!pt->time_mult || (pt->have_config && pt->nr_priv > P_TSC_BIT && !(pt->config & pt->priv[P_TSC_BIT])))
		pt->timeless = 1;
	pt->iscache = pt_iscache_alloc("rbdecode");
	if (!pt->iscache) {
		rb_pt_free(pt);
		return PD_ERR_NOMEM;
	}
	for (size_t i = 0; i < pt->nr_q; i++)
		pt->q[i].state = pt->q[i].nr_runs ? Q_NEXT_RUN : Q_DONE;
	*out = pt;
	return 1;
}

void rb_pt_free(struct rb_pt *pt)
{
	if (!pt)
		return;
	for (size_t i = 0; i < pt->nr_q; i++) {
		struct ptq *q = &pt->q[i];
		if (q->dec)
			pt_blk_free_decoder(q->dec);
		free(q->buf);
		free(q->chunks);
		free(q->runs);
	}
	free(pt->q);
	while (pt->images) {
		struct proc_image *p = pt->images;
		pt->images = p->next;
		pt_image_free(p->img);
		free(p);
	}
	if (pt->iscache)
		pt_iscache_free(pt->iscache);
	free(pt);
}

/* ------------------------------------------------------------ packet dump */

/* perf's description of a packet (intel_pt_pkt_desc), from libipt's decode and the raw bytes. */
static void packet_desc(const struct pt_packet *p, const uint8_t *raw, char *buf, size_t n)
{
	const char *ipn = NULL;
	switch (p->type) {
	case ppt_psb: snprintf(buf, n, "PSB"); return;
	case ppt_psbend: snprintf(buf, n, "PSBEND"); return;
	case ppt_pad: snprintf(buf, n, "PAD"); return;
	case ppt_ovf: snprintf(buf, n, "OVF"); return;
	case ppt_stop: snprintf(buf, n, "TraceSTOP"); return;
	case ppt_fup: ipn = "FUP"; break;
	case ppt_tip: ipn = "TIP"; break;
	case ppt_tip_pge: ipn = "TIP.PGE"; break;
	case ppt_tip_pgd: ipn = "TIP.PGD"; break;
	case ppt_tnt_8:
	case ppt_tnt_64: {
		char bits[65];
		unsigned k = p->payload.tnt.bit_size > 64 ? 64 : p->payload.tnt.bit_size;
		for (unsigned i = 0; i < k; i++)
			bits[i] = (p->payload.tnt.payload >> (k - 1 - i)) & 1 ? 'T' : 'N';
		bits[k] = 0;
		snprintf(buf, n, "TNT %s (%u)", bits, k);
		return;
	}
	case ppt_mode:
		if (p->payload.mode.leaf == pt_mol_exec) {
			unsigned b = raw[1];
			snprintf(buf, n, "MODE.Exec IF:%u %d", (b >> 2) & 1, (b & 1) ? 64 : (b & 2) ? 32 : 16);
		} else {
			snprintf(buf, n, "MODE.TSX TXAbort:%u InTX:%u", p->payload.mode.bits.tsx.abrt,
				 p->payload.mode.bits.tsx.intx);
		}
		return;
	case ppt_pip:
		/* perf shows the payload without libipt's shift into CR3 position */
		snprintf(buf, n, "PIP 0x%" PRIx64 " (NR=%u)", p->payload.pip.cr3 >> 5, p->payload.pip.nr);
		return;
	case ppt_vmcs: snprintf(buf, n, "VMCS 0x%" PRIx64, p->payload.vmcs.base); return;
	case ppt_cbr: snprintf(buf, n, "CBR 0x%x", p->payload.cbr.ratio); return;
	case ppt_tsc: snprintf(buf, n, "TSC 0x%" PRIx64, p->payload.tsc.tsc); return;
	case ppt_tma: snprintf(buf, n, "TMA CTC 0x%x FC 0x%x", p->payload.tma.ctc, p->payload.tma.fc); return;
	case ppt_mtc: snprintf(buf, n, "MTC 0x%x", p->payload.mtc.ctc); return;
	case ppt_cyc: snprintf(buf, n, "CYC 0x%" PRIx64, p->payload.cyc.value); return;
	case ppt_mnt: snprintf(buf, n, "MNT 0x%" PRIx64, p->payload.mnt.payload); return;
	case ppt_exstop: snprintf(buf, n, "EXSTOP IP:%u", p->payload.exstop.ip); return;
	case ppt_mwait:
		snprintf(buf, n, "MWAIT 0x%" PRIx64 " Hints 0x%x Extensions 0x%x",
			 (uint64_t)p->payload.mwait.hints | (uint64_t)p->payload.mwait.ext << 32,
			 p->payload.mwait.hints, p->payload.mwait.ext);
		return;
	case ppt_pwre:
		snprintf(buf, n, "PWRE HW:%u CState:%u Sub-CState:%u", p->payload.pwre.hw, p->payload.pwre.state,
			 p->payload.pwre.sub_state);
		return;
	case ppt_pwrx:
		snprintf(buf, n, "PWRX Last CState:%u Deepest CState:%u", p->payload.pwrx.last, p->payload.pwrx.deepest);
		return;
	case ppt_ptw:
		snprintf(buf, n, "PTWRITE IP:%u 0x%" PRIx64, p->payload.ptw.ip, p->payload.ptw.payload);
		return;
	default:
		snprintf(buf, n, "packet type %d", (int)p->type);
		return;
	}
	if (p->payload.ip.ipc == pt_ipc_suppressed)
		snprintf(buf, n, "%s no ip", ipn);
	else
		snprintf(buf, n, "%s 0x%" PRIx64, ipn, p->payload.ip.ip);
}

static void dump_line(FILE *out, uint64_t off, const uint8_t *b, size_t len, const char *desc)
{
	fprintf(out, ".  %08" PRIx64 ":  ", off);
	for (size_t i = 0; i < 16; i++) {
		if (i < len)
			fprintf(out, "%02x ", b[i]);
		else
			fputs("   ", out);
	}
	fprintf(out, "%s\n", desc);
}

/* One AUXTRACE payload, from its first byte, as perf report -D shows it. */
static int dump_buffer(const uint8_t *buf, size_t len, FILE *out)
{
	struct pt_config c;
	pt_config_init(&c);
	c.begin = (uint8_t *)buf;
	c.end = (uint8_t *)buf + len;
	struct pt_packet_decoder *d = pt_pkt_alloc_decoder(&c);
	if (!d)
		return PD_ERR_NOMEM;
	fprintf(out, ". ... Intel Processor Trace data: size %zu bytes\n", len);
	uint64_t off = 0;
	while (off < len) {
		struct pt_packet p;
		int sz = pt_pkt_sync_set(d, off) < 0 ? -pte_eos : pt_pkt_next(d, &p, sizeof(p));
		if (sz <= 0) {
			dump_line(out, off, buf + off, 1, "Bad packet!");
			off++;
			continue;
		}
		/* perf counts zero bytes after a packet into it, up to 8 bytes in all */
		size_t k = (size_t)sz;
		while (k < 8 && off + k < len && buf[off + k] == 0)
			k++;
		char desc[128];
		packet_desc(&p, buf + off, desc, sizeof(desc));
		dump_line(out, off, buf + off, k, desc);
		off += k;
	}
	pt_pkt_free_decoder(d);
	return ferror(out) ? PD_ERR_IO : 0;
}

int rb_pt_dump_packets(const char *path, FILE *out, struct pd_error *err)
{
	struct pd_reader *r;
	int rc = pd_reader_open(&r, path, NULL, err);
	if (rc < 0)
		return rc;
	struct pd_record rec;
	int is_pt = 0, more, found = 0;
	uint8_t *buf = NULL;
	while ((more = pd_reader_next(r, &rec, err)) == 1) {
		struct pd_event ev;
		if ((rec.type != PD_RECORD_AUXTRACE_INFO && rec.type != PD_RECORD_AUXTRACE) ||
		    pd_event_parse(r, &rec, &ev, NULL) < 0)
			continue;
		if (rec.type == PD_RECORD_AUXTRACE_INFO) {
			is_pt = ev.u.auxtrace_info.type == PT_AUXTRACE_TYPE;
			found |= is_pt;
			continue;
		}
		if (!is_pt || ev.u.auxtrace.size > ((uint64_t)1 << 32))
			continue;
		uint8_t *b = realloc(buf, (size_t)ev.u.auxtrace.size + 1);
		if (!b) {
			rc = PD_ERR_NOMEM;
			break;
		}
		buf = b;
		int64_t got = pd_reader_read_payload(r, buf, (size_t)ev.u.auxtrace.size, err);
		if (got < 0) {
			rc = (int)got;
			break;
		}
		fprintf(out, "\n%#" PRIx64 " [%#" PRIx64 "]: PERF_RECORD_AUXTRACE size: %#" PRIx64 "  offset: %#" PRIx64
			"  ref: %#" PRIx64 "  idx: %u  tid: %d  cpu: %d\n", rec.offset, (uint64_t)rec.size,
			ev.u.auxtrace.size, ev.u.auxtrace.offset, ev.u.auxtrace.reference, ev.u.auxtrace.idx,
			(int)ev.u.auxtrace.tid, (int)ev.u.auxtrace.cpu);
		if ((rc = dump_buffer(buf, (size_t)got, out)) < 0)
			break;
	}
	free(buf);
	pd_reader_free(r);
	if (rc < 0)
		return rc;
	if (more < 0)
		return more;
	return found;
}
