/*
 * cs_etm.c - the CoreSight (cs_etm) decoder of perf.data AUX trace, behind
 * the source.h interface. Stage: while the session delivers records in time
 * order, each AUX queue (one per CPU, or per thread) is decoded with OpenCSD: a
 * decode tree with a frame deformatter for formatted trace, or a single raw
 * source for unformatted trace (TRBE / ETE, PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW),
 * with one ETMv3 / PTM / ETMv4 / ETE decoder per CPU configured from the
 * AUXTRACE_INFO metadata (header versions 0, 1 and 2; trace IDs from the
 * metadata or from AUX_OUTPUT_HW_ID records). Code is read from the ELF
 * images the machine's maps name (archive, --symfs, build-id cache, recorded
 * path), each mapped once.
 *
 * Data is decoded one PERF_RECORD_AUX fragment at a time with a decoder
 * reset in between, as perf does (facts 5.6), as soon as both the AUX record
 * (in time order: the machine's maps are then those of the moment the data
 * was written) and the AUXTRACE chunk holding its bytes have been read;
 * what is still waiting at the end is decoded then or reported missing. A
 * queue with AUXTRACE data but no AUX records is decoded whole at the end. Generic elements become perf's branch
 * samples (the rules of perf's cs-etm.c: a sample for each taken branch, a
 * "trace begin" sample after a discontinuity and a "trace end" one before
 * it) and instruction ranges. Losses become gaps: AUX records whose data is
 * not in the file, decoder errors (decoding resumes after a reset), loss of
 * sync, overflows, and code images that cannot be found.
 *
 * Times: ETM timestamps are put on the perf clock through TIME_CONV when
 * every CPU's timestamps come from the kernel's counter (TS_SOURCE 1);
 * otherwise, and before the first timestamp, an event takes the time of the
 * AUX record that delivered its fragment (the moment the data was handed
 * over, an upper bound). Workload: AUX areas of megabytes to gigabytes; the
 * bytes are read from the file one fragment at a time.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ocsd_guard.h"
#include "decoder/source.h"
#include "decoder/session/session.h"
#include "decoder/session/symtab.h"

#define MAGIC_ETMV3 0x3030303030303030ULL
#define MAGIC_ETMV4 0x4040404040404040ULL
#define MAGIC_ETE   0x5050505050505050ULL
#define HEADER_VERSION_MAX 2
#define TRACE_ID_UNUSED_FLAG (1ULL << 31)
#define TRACE_ID_MASK 0x7f
#define NR_TRACE_IDS 128
#define MAX_PARAMS 16
#define AUX_FORMAT_RAW 0x0100

/* Per-CPU metadata, in the version-1 layout (facts 5.2). */
struct cs_meta {
	uint64_t magic;
	int32_t cpu;
	uint32_t nr;                  /* parameters given */
	uint64_t p[MAX_PARAMS];       /* [0] CONFIGR/ETMCR, [1] TRACEIDR, [2] IDR0/ETMCCER, [3] IDR1/ETMIDR, ... */
	int trace_id;                 /* 0..0x6f, or -1: no decoder */
};

enum pkt_type { PKT_NONE, PKT_RANGE, PKT_DISC, PKT_EXC, PKT_EXC_RET };

/* perf's cs_etm_packet, the part branch samples need. */
struct pkt {
	enum pkt_type type;
	uint64_t start, end;          /* end exclusive */
	uint32_t last_size, insns;
	int taken;                    /* last instruction a taken branch */
	ocsd_instr_type itype;
	ocsd_instr_subtype isub;
	int cond;
	uint32_t flags;
	uint64_t time;
};

/* One trace ID's state inside a queue's tree. */
struct stream {
	const struct cs_meta *meta;
	int32_t pid, tid;
	struct pkt prev;
	int have_range;               /* @range waits for the trace's next step */
	struct rb_range_ev range;
	uint64_t ts;                  /* perf time of the newest timestamp, 0 before one */
};

struct chunk { uint64_t aux_offset, size, file_offset; uint8_t *bytes; };
struct frag { uint64_t aux_offset, size, flags, time, file_offset; int32_t tid; };
/* One CPU's AUX records in time order; those before @next are decoded. */
struct fraglist { struct frag *v; size_t n, cap, next; };

struct image {
	const struct rb_dso *dso;
	uint8_t *p;                   /* mapped file, NULL if not found */
	size_t len;
};

struct cs_etm;

struct queue {
	struct cs_etm *etm;
	uint32_t idx;
	int32_t cpu, tid;             /* from AUXTRACE records */
	struct chunk *chunks;
	size_t nr_chunks;
	dcd_tree_handle_t tree;       /* C_API_INVALID_TREE_HANDLE between fragments */
	int raw;                      /* tree is a single raw source */
	struct stream st[NR_TRACE_IDS];
	uint64_t frag_time, frag_base;/* AUX time and AUX offset of the fragment being decoded */
	uint64_t file_offset;         /* of the AUX record of that fragment, for gaps */
	const struct rb_map *last_map;/* memory access fast path */
	const struct image *last_img;
	int missed;                   /* the fragment being decoded reached code in no file found */
	int stop;                     /* a callback asked to stop the session */
};

struct cs_etm {
	struct rb_source base;
	const struct rb_source_env *env;
	int version, snapshot;
	uint32_t pmu_type;
	struct cs_meta *meta;
	size_t nr_meta;
	int virtual_ts;               /* every CPU's TS_SOURCE is 1 */
	int evsel;
	char mods[16];                /* the synthesized event's modifiers: "branches" + ":u", ":k" or "" */
	int32_t hw_id[4096];          /* trace ID per CPU from AUX_OUTPUT_HW_ID, -1 if none */
	int any_hw_id;
	struct { int32_t pid, tid; } itrace[4096];   /* ITRACE_START per CPU */
	struct queue **q;
	size_t nr_q;
	struct fraglist *frags;       /* per CPU (index cpu + 1; 0 for cpu -1) */
	size_t nr_frag_cpus;
	struct image *images;
	size_t nr_images;
	int fd;                       /* the recording, for payloads; -1 in pipe mode */
	char *missing_reported;       /* per image: gap already reported */
};

static struct cs_etm *etm_of(struct rb_source *d) { return (struct cs_etm *)d; }

/* ------------------------------------------------------------- metadata */

static int parse_meta(struct cs_etm *e, const uint8_t *priv, uint64_t nw, char *msg, size_t msglen)
{
	if (nw < 3) {
		snprintf(msg, msglen, "cs_etm AUXTRACE_INFO has %" PRIu64 " words, the header alone needs 3", nw);
		return -1;
	}
	uint64_t version = pd_u64_at(priv, 0);
	if (version > HEADER_VERSION_MAX) {
		snprintf(msg, msglen, "cs_etm AUXTRACE_INFO header version %" PRIu64 " is newer than this reader knows (%d)",
			 version, HEADER_VERSION_MAX);
		return -1;
	}
	e->version = (int)version;
	e->pmu_type = (uint32_t)(pd_u64_at(priv, 1) >> 32);
	uint32_t nr_cpus = (uint32_t)pd_u64_at(priv, 1);
	e->snapshot = pd_u64_at(priv, 2) != 0;
	if (nr_cpus > 4096) {
		snprintf(msg, msglen, "cs_etm AUXTRACE_INFO claims %u CPUs", nr_cpus);
		return -1;
	}
	e->meta = calloc(nr_cpus ? nr_cpus : 1, sizeof(*e->meta));
	if (!e->meta)
		return -ENOMEM;
	uint64_t i = 3;
	e->virtual_ts = nr_cpus > 0;
	for (uint32_t c = 0; c < nr_cpus; c++) {
		struct cs_meta *m = &e->meta[c];
		if (i + 2 > nw)
			goto short_rec;
		m->magic = pd_u64_at(priv, i);
		m->cpu = (int32_t)pd_u64_at(priv, i + 1);
		uint64_t nr, first;
		if (version == 0) {
			if (m->magic != MAGIC_ETMV3 && m->magic != MAGIC_ETMV4)
				goto bad_magic;
			nr = m->magic == MAGIC_ETMV3 ? 4 : 7;
			first = i + 2;
		} else {
			if (m->magic != MAGIC_ETMV3 && m->magic != MAGIC_ETMV4 && m->magic != MAGIC_ETE)
				goto bad_magic;
			if (i + 3 > nw)
				goto short_rec;
			nr = pd_u64_at(priv, i + 2);
			first = i + 3;
		}
		if (nr > nw || first + nr > nw)
			goto short_rec;
		m->nr = (uint32_t)(nr < MAX_PARAMS ? nr : MAX_PARAMS);
		for (uint32_t k = 0; k < m->nr; k++)
			m->p[k] = pd_u64_at(priv, first + k);
		i = first + nr;
		/* TS_SOURCE: after TRCAUTHSTATUS (ETMv4), after TRCDEVARCH (ETE) */
		unsigned ts_idx = m->magic == MAGIC_ETMV4 ? 7 : m->magic == MAGIC_ETE ? 8 : MAX_PARAMS;
		if (ts_idx >= m->nr || m->p[ts_idx] != 1)
			e->virtual_ts = 0;
		uint64_t id = m->nr > 1 ? m->p[1] : 0;
		m->trace_id = (int)(id & TRACE_ID_MASK);   /* apply_hw_ids() may replace it */
		e->nr_meta++;
	}
	if (i != nw) {
		snprintf(msg, msglen, "cs_etm AUXTRACE_INFO: the per-CPU blocks use %" PRIu64 " words, the record has %" PRIu64,
			 i, nw);
		return -1;
	}
	return 0;
short_rec:
	snprintf(msg, msglen, "cs_etm AUXTRACE_INFO: CPU block %zu runs past the record (%" PRIu64 " words)", e->nr_meta, nw);
	return -1;
bad_magic:
	snprintf(msg, msglen, "cs_etm AUXTRACE_INFO: CPU block %zu has unknown magic %#" PRIx64 " (header version %d)",
		 e->nr_meta, e->meta[e->nr_meta].magic, e->version);
	return -1;
}

/*
 * Header v2: the IDs the kernel announced in AUX_OUTPUT_HW_ID; a CPU whose
 * metadata ID is still flagged unused gets no decoder. Without any such
 * record the metadata's IDs are used, masked (facts 5.3).
 */
static void apply_hw_ids(struct cs_etm *e)
{
	if (!e->any_hw_id)
		return;
	for (size_t i = 0; i < e->nr_meta; i++) {
		struct cs_meta *m = &e->meta[i];
		if (m->cpu >= 0 && m->cpu < 4096 && e->hw_id[m->cpu] >= 0)
			m->trace_id = e->hw_id[m->cpu];
		else if (m->nr > 1 && (m->p[1] & TRACE_ID_UNUSED_FLAG))
			m->trace_id = -1;
	}
}

/* ----------------------------------------------------------------- time */

static uint64_t to_perf_time(const struct cs_etm *e, uint64_t cyc)
{
	const struct rb_source_env *v = e->env;
	if (!v->has_time_conv || v->time_shift >= 64)
		return cyc;
	if (v->cap_user_time_short)
		cyc = v->time_cycles + ((cyc - v->time_cycles) & v->time_mask);
	return pd_tsc_to_perf_time(cyc, v->time_shift, v->time_mult, v->time_zero);
}

static uint64_t event_time(const struct queue *q, const struct stream *s)
{
	return s->ts ? s->ts : q->frag_time;
}

/* ---------------------------------------------------------------- gaps */

static int gap(struct queue *q, const struct stream *s, const char *reason, uint64_t bytes, uint64_t file_offset,
	       const char *detail)
{
	const struct rb_source_env *v = q->etm->env;
	uint64_t t = s ? event_time(q, s) : q->frag_time;
	struct rb_gap_ev g = { .time_start = t, .time_end = t, .cpu = s && s->meta ? s->meta->cpu : q->cpu,
			       .pid = s ? s->pid : -1, .tid = s ? s->tid : q->tid, .source = "cs_etm",
			       .reason = reason, .bytes_lost = bytes, .file_offset = file_offset, .detail = detail };
	int rc = v->gap(v->sess, &g);
	if (rc)
		q->stop = rc;
	return rc;
}

/* ---------------------------------------------------------------- memory */

static const struct image *image_of(struct cs_etm *e, struct rb_dso *dso, struct queue *q,
				    const struct stream *s)
{
	for (size_t i = 0; i < e->nr_images; i++)
		if (e->images[i].dso == dso)
			return &e->images[i];
	struct image *v = realloc(e->images, (e->nr_images + 1) * sizeof(*v));
	if (!v)
		return NULL;
	e->images = v;
	struct image *img = &v[e->nr_images++];
	memset(img, 0, sizeof(*img));
	img->dso = dso;
	const char *path = rb_machine_dso_image(e->env->m, dso);
	int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	struct stat sb;
	if (fd >= 0 && fstat(fd, &sb) == 0 && sb.st_size > 0) {
		void *p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p != MAP_FAILED) {
			img->p = p;
			img->len = (size_t)sb.st_size;
		}
	}
	if (fd >= 0)
		close(fd);
	if (!img->p && !rb_machine_oom(e->env->m)) {
		char detail[4200];
		dso->image_missing = 1;
		snprintf(detail, sizeof(detail), "no image of %s (searched --symdir, the build-id cache, --symfs and the recorded path);"
			 " its code is not decoded", dso->long_name);
		gap(q, s, "aux image missing", 0, q->file_offset, detail);
	}
	return img;
}

static struct stream *stream_of(struct queue *q, uint8_t id)
{
	return q->raw ? &q->st[0] : &q->st[id & TRACE_ID_MASK];
}

static uint32_t read_code(const void *ctx, const ocsd_vaddr_t address, const ocsd_mem_space_acc_t space,
			  const uint8_t trc_id, const uint32_t req, uint8_t *buf)
{
	struct queue *q = (struct queue *)ctx;
	struct cs_etm *e = q->etm;
	const struct stream *s = stream_of(q, trc_id);
	(void)space;
	const struct rb_map *map = q->last_map;
	const struct image *img = q->last_img;
	if (!map || address < map->start || address >= map->end) {
		struct rb_thread *t = s->tid >= 0 ? rb_machine_thread(e->env->m, s->pid, s->tid, 0) : NULL;
		map = rb_machine_find_map(e->env->m, t, address);
		if (!map || !map->dso)
			return 0;
		img = image_of(e, map->dso, q, s);
		if (!img)
			return 0;
		q->last_map = map;
		q->last_img = img;
	}
	if (!img->p) {
		q->missed = 1;
		return 0;
	}
	uint64_t off = address - map->start + map->pgoff;
	if (off >= img->len)
		return 0;
	uint64_t n = req;
	if (n > img->len - off)
		n = img->len - off;
	if (n > map->end - address)
		n = map->end - address;
	memcpy(buf, img->p + off, (size_t)n);
	return (uint32_t)n;
}

/* --------------------------------------------------------- perf's samples */

static int emit_branch(struct queue *q, struct stream *s, const struct pkt *from, const struct pkt *to)
{
	const struct rb_source_env *v = q->etm->env;
	struct rb_branch_ev b = { .cpu = s->meta ? s->meta->cpu : q->cpu, .pid = s->pid, .tid = s->tid,
				  .time = event_time(q, s), .flags = from->flags, .evsel = q->etm->evsel,
				  .mods = q->etm->mods };
	b.ip = from->type == PKT_RANGE ? from->end - from->last_size : 0;
	b.addr = to && to->type == PKT_RANGE ? to->start : 0;
	int rc = v->branch(v->sess, &b);
	if (rc)
		q->stop = rc;
	return rc;
}

/* The previous range is complete once we know where the trace went next. */
static int flush_range(struct queue *q, struct stream *s, uint64_t next)
{
	const struct rb_source_env *v = q->etm->env;
	if (!s->have_range)
		return 0;
	s->have_range = 0;
	s->range.next = next;
	int rc = v->range ? v->range(v->sess, &s->range) : 0;
	if (rc)
		q->stop = rc;
	return rc;
}

/* perf's cs_etm__set_sample_flags for a range, and for the packet before it. */
static void range_flags(struct queue *q, struct stream *s, struct pkt *p)
{
	(void)q;
	p->flags = 0;
	if (p->itype == OCSD_INSTR_BR && p->isub == OCSD_S_INSTR_NONE)
		p->flags = RB_IP_FLAG_BRANCH | (p->cond ? RB_IP_FLAG_CONDITIONAL : 0);
	else if ((p->itype == OCSD_INSTR_BR || p->itype == OCSD_INSTR_BR_INDIRECT) && p->isub == OCSD_S_INSTR_BR_LINK)
		p->flags = RB_IP_FLAG_BRANCH | RB_IP_FLAG_CALL;
	else if (p->itype == OCSD_INSTR_BR_INDIRECT &&
		 (p->isub == OCSD_S_INSTR_V7_IMPLIED_RET || p->isub == OCSD_S_INSTR_NONE || p->isub == OCSD_S_INSTR_V8_RET))
		p->flags = RB_IP_FLAG_BRANCH | RB_IP_FLAG_RETURN;
	if (s->prev.type == PKT_DISC)
		s->prev.flags |= RB_IP_FLAG_BRANCH | RB_IP_FLAG_TRACE_BEGIN;
}

static int on_range(struct queue *q, struct stream *s, const ocsd_generic_trace_elem *el)
{
	struct pkt p = { .type = PKT_RANGE, .start = el->st_addr, .end = el->en_addr,
			 .last_size = el->last_instr_sz ? el->last_instr_sz : 4, .insns = el->num_instr_range,
			 .itype = el->last_i_type, .isub = el->last_i_subtype, .cond = el->last_instr_cond };
	p.taken = (p.itype == OCSD_INSTR_BR || p.itype == OCSD_INSTR_BR_INDIRECT) && el->last_instr_exec;
	range_flags(q, s, &p);
	if (flush_range(q, s, p.start))
		return -1;
	s->have_range = 1;
	s->range = (struct rb_range_ev){ .cpu = s->meta ? s->meta->cpu : q->cpu, .pid = s->pid, .tid = s->tid,
					 .time = event_time(q, s), .start = p.start, .end = p.end - p.last_size,
					 .insns = p.insns, .taken = p.taken,
					 .kind = p.itype == OCSD_INSTR_BR ? RB_RANGE_DIRECT_BRANCH :
						 p.itype == OCSD_INSTR_BR_INDIRECT ? RB_RANGE_INDIRECT_BRANCH : RB_RANGE_OTHER };
	/* a sample for the trace's start, and for each taken branch (perf's cs_etm__sample) */
	if (s->prev.type == PKT_DISC || (s->prev.type == PKT_RANGE && s->prev.taken))
		if (emit_branch(q, s, &s->prev, &p))
			return -1;
	s->prev = p;
	return 0;
}

/* A discontinuity: the last range ends the trace (perf's cs_etm__flush). */
static int on_discontinuity(struct queue *q, struct stream *s)
{
	if (flush_range(q, s, 0))
		return -1;
	if (s->prev.type == PKT_RANGE) {
		s->prev.flags |= RB_IP_FLAG_TRACE_END;
		if (emit_branch(q, s, &s->prev, NULL))
			return -1;
	}
	s->prev = (struct pkt){ .type = PKT_DISC };
	return 0;
}

/* ETMv4 / ETE exception numbers (perf's CS_ETMV4_EXC_*). */
static uint32_t exception_flags(const struct stream *s, uint32_t nr)
{
	if (s->meta && s->meta->magic != MAGIC_ETMV3) {
		if (nr == 2)
			return RB_IP_FLAG_BRANCH | RB_IP_FLAG_CALL | RB_IP_FLAG_SYSCALLRET;
		if (nr == 0 || nr == 1 || nr == 4 || nr == 14 || nr == 15)
			return RB_IP_FLAG_BRANCH | RB_IP_FLAG_CALL | RB_IP_FLAG_ASYNC | RB_IP_FLAG_INTERRUPT;
	}
	return RB_IP_FLAG_BRANCH | RB_IP_FLAG_CALL | RB_IP_FLAG_INTERRUPT;
}

static ocsd_datapath_resp_t on_element(const void *ctx, const ocsd_trc_index_t index, const uint8_t chan,
				       const ocsd_generic_trace_elem *el)
{
	struct queue *q = (struct queue *)ctx;
	struct cs_etm *e = q->etm;
	struct stream *s = stream_of(q, chan);
	const struct rb_source_env *v = e->env;
	char detail[256];

	if (q->stop)
		return OCSD_RESP_FATAL_SYS_ERR;
	if (v->element) {
		char text[1024], line[1200];
		if (ocsd_gen_elem_str(el, text, sizeof(text)) != OCSD_OK)
			snprintf(text, sizeof(text), "(element text unavailable)");
		snprintf(line, sizeof(line), "Idx:%" PRIu64 "; ID:%x; %s", q->frag_base + (uint64_t)index, chan, text);
		v->element(v->sess, line);
	}
	switch (el->elem_type) {
	case OCSD_GEN_TRC_ELEM_INSTR_RANGE:
		on_range(q, s, el);
		break;
	case OCSD_GEN_TRC_ELEM_NO_SYNC:
		if (el->unsync_eot_info == UNSYNC_OVERFLOW || el->unsync_eot_info == UNSYNC_BAD_PACKET ||
		    el->unsync_eot_info == UNSYNC_DISCARD) {
			snprintf(detail, sizeof(detail), "queue %u, trace ID %#x: decoder lost sync at AUX offset %#" PRIx64 " (%s)",
				 q->idx, chan, q->frag_base + (uint64_t)index,
				 el->unsync_eot_info == UNSYNC_OVERFLOW ? "overflow" :
				 el->unsync_eot_info == UNSYNC_BAD_PACKET ? "bad packet" : "discard");
			gap(q, s, el->unsync_eot_info == UNSYNC_OVERFLOW ? "hardware overflow" : "decoder lost sync", 0,
			    q->file_offset, detail);
		}
		on_discontinuity(q, s);
		break;
	case OCSD_GEN_TRC_ELEM_TRACE_ON:
		if (el->trace_on_reason == TRACE_ON_OVERFLOW) {
			snprintf(detail, sizeof(detail), "queue %u, trace ID %#x: trace restarted after an overflow at AUX offset %#" PRIx64,
				 q->idx, chan, q->frag_base + (uint64_t)index);
			gap(q, s, "hardware overflow", 0, q->file_offset, detail);
		}
		on_discontinuity(q, s);
		break;
	case OCSD_GEN_TRC_ELEM_EO_TRACE:
		on_discontinuity(q, s);
		break;
	case OCSD_GEN_TRC_ELEM_EXCEPTION:
		if (s->prev.type == PKT_RANGE) {
			s->prev.taken = 1;    /* perf: the range before an exception always ends in a sample */
			s->prev.flags = exception_flags(s, el->exception_number);
		}
		break;
	case OCSD_GEN_TRC_ELEM_EXCEPTION_RET:
		if (s->prev.type == PKT_RANGE) {
			s->prev.taken = 1;
			s->prev.flags = RB_IP_FLAG_BRANCH | RB_IP_FLAG_RETURN | RB_IP_FLAG_INTERRUPT;
		}
		break;
	case OCSD_GEN_TRC_ELEM_TIMESTAMP:
		if (el->timestamp)
			s->ts = e->virtual_ts ? to_perf_time(e, el->timestamp) : el->timestamp;
		break;
	case OCSD_GEN_TRC_ELEM_PE_CONTEXT:
		/* Linux puts the task's pid in CONTEXTIDR (the tid in a multi-threaded process) */
		if (el->context.ctxt_id_valid) {
			struct rb_thread *t = rb_machine_thread(v->m, -1, (int32_t)el->context.context_id, 0);
			s->tid = (int32_t)el->context.context_id;
			s->pid = t ? t->pid : -1;
			q->last_map = NULL;
		}
		break;
	default:
		break;
	}
	return q->stop ? OCSD_RESP_FATAL_SYS_ERR : OCSD_RESP_CONT;
}

/* ------------------------------------------------------------- the tree */

static void destroy_tree(struct queue *q)
{
	if (q->tree != C_API_INVALID_TREE_HANDLE)
		ocsd_destroy_dcd_tree(q->tree);
	q->tree = C_API_INVALID_TREE_HANDLE;
}

/* The registers ETMv4 and ETE configurations share (their structs differ in layout). */
#define SET_ETMV4_REGS(c, m) do { \
	(c).reg_configr = (uint32_t)(m)->p[0]; \
	(c).reg_traceidr = (uint32_t)((m)->trace_id & TRACE_ID_MASK); \
	(c).reg_idr0 = (uint32_t)(m)->p[2]; \
	(c).reg_idr1 = (uint32_t)(m)->p[3]; \
	(c).reg_idr2 = (uint32_t)(m)->p[4]; \
	(c).reg_idr8 = (uint32_t)(m)->p[5]; \
} while (0)

static ocsd_err_t add_decoder(struct queue *q, const struct cs_meta *m)
{
	unsigned char csid;
	if (m->magic == MAGIC_ETMV3) {
		/* all four registers (perf 6.x fills only ETMCR and the trace ID: facts 5.4) */
		uint32_t ctrl = (uint32_t)m->p[0], trcid = (uint32_t)(m->trace_id & TRACE_ID_MASK);
		uint32_t ccer = m->nr > 2 ? (uint32_t)m->p[2] : 0, idr = m->nr > 3 ? (uint32_t)m->p[3] : 0;
		if ((idr & 0x300) == 0x300) {
			ocsd_ptm_cfg c = { 0 };
			c.reg_ctrl = ctrl, c.reg_trc_id = trcid, c.reg_ccer = ccer, c.reg_idr = idr;
			c.arch_ver = ARCH_V7, c.core_prof = profile_CortexA;
			return ocsd_dt_create_decoder(q->tree, OCSD_BUILTIN_DCD_PTM, OCSD_CREATE_FLG_FULL_DECODER, &c, &csid);
		}
		ocsd_etmv3_cfg c = { 0 };
		c.reg_ctrl = ctrl, c.reg_trc_id = trcid, c.reg_ccer = ccer, c.reg_idr = idr;
		c.arch_ver = ARCH_V7, c.core_prof = profile_CortexA;
		return ocsd_dt_create_decoder(q->tree, OCSD_BUILTIN_DCD_ETMV3, OCSD_CREATE_FLG_FULL_DECODER, &c, &csid);
	}
	if (m->magic == MAGIC_ETE) {
		ocsd_ete_cfg c = { 0 };
		SET_ETMV4_REGS(c, m);
		c.reg_devarch = m->nr > 7 ? (uint32_t)m->p[7] : 0;
		c.arch_ver = ARCH_AA64;
		c.core_prof = profile_CortexA;
		return ocsd_dt_create_decoder(q->tree, OCSD_BUILTIN_DCD_ETE, OCSD_CREATE_FLG_FULL_DECODER, &c, &csid);
	}
	ocsd_etmv4_cfg c = { 0 };
	SET_ETMV4_REGS(c, m);
	c.arch_ver = ((c.reg_idr1 >> 4) & 0xf) >= 4 ? ARCH_AA64 : ARCH_V8;
	c.core_prof = profile_CortexA;
	return ocsd_dt_create_decoder(q->tree, OCSD_BUILTIN_DCD_ETMV4I, OCSD_CREATE_FLG_FULL_DECODER, &c, &csid);
}

static int min_params(const struct cs_meta *m)
{
	return m->magic == MAGIC_ETMV3 ? 2 : 6;
}

/* Formatted: every CPU's decoder in the tree (a sink may be shared); raw: the queue's CPU only. */
static int build_tree(struct queue *q, int raw)
{
	struct cs_etm *e = q->etm;
	char detail[256];
	apply_hw_ids(e);
	q->raw = raw;
	rb_ocsd_oom_clear();
	q->tree = ocsd_create_dcd_tree(raw ? OCSD_TRC_SRC_SINGLE : OCSD_TRC_SRC_FRAME_FORMATTED,
				       raw ? 0 : OCSD_DFRMTR_FRAME_MEM_ALIGN | OCSD_DFRMTR_RESET_ON_4X_FSYNC);
	if (q->tree == C_API_INVALID_TREE_HANDLE)
		return rb_ocsd_oom() ? -ENOMEM : -1;
	int made = 0;
	for (size_t i = 0; i < e->nr_meta; i++) {
		const struct cs_meta *m = &e->meta[i];
		if (raw && !(m->cpu == q->cpu || (q->cpu < 0 && !made)))
			continue;
		if (m->trace_id < 0 || m->trace_id == 0 || m->trace_id >= 0x70 || (int)m->nr < min_params(m))
			continue;
		ocsd_err_t err = add_decoder(q, m);
		if (err != OCSD_OK && rb_ocsd_oom()) {
			destroy_tree(q);
			return -ENOMEM;
		}
		if (err != OCSD_OK) {
			snprintf(detail, sizeof(detail), "queue %u: OpenCSD refused a decoder for CPU %d (error %d)",
				 q->idx, m->cpu, (int)err);
			e->env->warn(e->env->sess, detail);
			continue;
		}
		struct stream *s = raw ? &q->st[0] : &q->st[m->trace_id];
		s->meta = m;
		made++;
	}
	if (!made || ocsd_dt_set_gen_elem_outfn(q->tree, on_element, q) != OCSD_OK ||
	    ocsd_dt_add_callback_trcid_mem_acc(q->tree, 0, ~(ocsd_vaddr_t)0, OCSD_MEM_SPACE_ANY, read_code, q) != OCSD_OK) {
		destroy_tree(q);
		return rb_ocsd_oom() ? -ENOMEM : -1;
	}
	return 0;
}

/* Push @len bytes; a fatal decoder error is a gap, the decoder is reset and goes on. */
static int feed(struct queue *q, const uint8_t *data, uint32_t len)
{
	ocsd_datapath_resp_t resp = OCSD_RESP_CONT;
	uint32_t done = 0;
	char detail[256];
	rb_ocsd_oom_clear();
	while (done < len && !q->stop) {
		uint32_t used = 0;
		if (OCSD_DATA_RESP_IS_CONT(resp))
			resp = ocsd_dt_process_data(q->tree, OCSD_OP_DATA, done, len - done, data + done, &used);
		else
			resp = ocsd_dt_process_data(q->tree, OCSD_OP_FLUSH, 0, 0, NULL, NULL);
		done += used;
		if (rb_ocsd_crashed()) {
			/* OpenCSD faulted (ocsd_guard.cpp): its tree is abandoned, never touched again */
			rb_ocsd_crashed_clear();
			q->tree = C_API_INVALID_TREE_HANDLE;
			snprintf(detail, sizeof(detail), "queue %u: OpenCSD crashed (a bug of the library on this trace) "
				 "at AUX offset %#" PRIx64 "; the rest of the fragment is not decoded, the next starts "
				 "a new decoder", q->idx, q->frag_base + done);
			q->etm->env->warn(q->etm->env->sess, detail);
			gap(q, NULL, "decoder error", len - done, q->file_offset, detail);
			break;
		}
		if (OCSD_DATA_RESP_IS_FATAL(resp) && !q->stop && rb_ocsd_oom()) {
			q->stop = -ENOMEM;   /* out of memory inside OpenCSD: not the trace's fault */
			break;
		}
		if (OCSD_DATA_RESP_IS_FATAL(resp) && !q->stop) {
			snprintf(detail, sizeof(detail), "queue %u: OpenCSD stopped with a fatal error at AUX offset %#" PRIx64
				 "; decoder reset, decoding resumes", q->idx, q->frag_base + done);
			if (gap(q, NULL, "decoder error", 0, q->file_offset, detail))
				break;
			for (int i = 0; i < NR_TRACE_IDS; i++)
				on_discontinuity(q, &q->st[i]);
			ocsd_dt_process_data(q->tree, OCSD_OP_RESET, done, 0, NULL, NULL);
			if (!used)   /* skip what it could not take: the rest of a frame, or a byte */
				done += q->raw ? 1 : 16 - done % 16;
			resp = OCSD_RESP_CONT;
		}
	}
	return q->stop;
}

/* ---------------------------------------------------------------- queues */

static struct queue *queue_get(struct cs_etm *e, uint32_t idx)
{
	if (idx >= e->nr_q) {
		size_t n = (size_t)idx + 8;
		struct queue **v = realloc(e->q, n * sizeof(*v));
		if (!v)
			return NULL;
		memset(v + e->nr_q, 0, (n - e->nr_q) * sizeof(*v));
		e->q = v;
		e->nr_q = n;
	}
	if (!e->q[idx]) {
		struct queue *q = calloc(1, sizeof(*q));
		if (!q)
			return NULL;
		q->etm = e;
		q->idx = idx;
		q->cpu = q->tid = -1;
		q->tree = C_API_INVALID_TREE_HANDLE;
		e->q[idx] = q;
	}
	return e->q[idx];
}

static int advance(struct cs_etm *e, size_t k, int at_end);

static size_t frag_index(int32_t cpu)
{
	return cpu >= 0 && cpu < 4096 ? (size_t)cpu + 1 : 0;
}

static int cs_chunk(struct rb_source *d, const struct rb_aux_ev *a, const uint8_t *bytes)
{
	struct cs_etm *e = etm_of(d);
	struct queue *q = queue_get(e, a->queue);
	if (!q)
		return -ENOMEM;
	struct chunk *v = realloc(q->chunks, (q->nr_chunks + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	q->chunks = v;
	struct chunk *c = &v[q->nr_chunks];
	*c = (struct chunk){ .aux_offset = a->aux_offset, .size = a->size, .file_offset = a->file_offset };
	if (bytes) {
		if (!(c->bytes = malloc(a->size ? a->size : 1)))
			return -ENOMEM;
		memcpy(c->bytes, bytes, a->size);
	}
	q->nr_chunks++;
	q->cpu = a->cpu;
	q->tid = a->tid;
	return advance(e, frag_index(a->cpu), 0);
}

static int cs_aux(struct cs_etm *e, int32_t cpu, int32_t tid, uint64_t time, uint64_t aux_offset, uint64_t aux_size,
		  uint64_t flags, uint64_t file_offset)
{
	size_t k = frag_index(cpu);
	if (k >= e->nr_frag_cpus) {
		size_t n = k + 8;
		struct fraglist *v = realloc(e->frags, n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		memset(v + e->nr_frag_cpus, 0, (n - e->nr_frag_cpus) * sizeof(*v));
		e->frags = v;
		e->nr_frag_cpus = n;
	}
	struct fraglist *fl = &e->frags[k];
	if (fl->n == fl->cap) {
		size_t n = fl->cap ? 2 * fl->cap : 16;
		struct frag *v = realloc(fl->v, n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		fl->v = v;
		fl->cap = n;
	}
	/* snapshot / overwrite mode: aux_offset is the head, the end of the data; see snapshot_block() */
	fl->v[fl->n++] = (struct frag){ .aux_offset = aux_offset, .size = aux_size, .flags = flags,
				       .time = time, .file_offset = file_offset, .tid = tid };
	return advance(e, k, 0);
}

static int cs_hw_id(struct cs_etm *e, int32_t cpu, uint64_t hw_id)
{
	if (cpu < 0 || cpu >= 4096)
		return 0;
	int id = (int)(hw_id & 0xff);
	if (e->hw_id[cpu] >= 0 && e->hw_id[cpu] != id) {
		char msg[160];
		snprintf(msg, sizeof(msg), "cs_etm: CPU %d announced trace ID %#x after %#x; keeping the first", cpu, id,
			 e->hw_id[cpu]);
		e->env->warn(e->env->sess, msg);
		return 0;
	}
	e->hw_id[cpu] = id & TRACE_ID_MASK;
	e->any_hw_id = 1;
	return 0;
}

static int cs_itrace_start(struct cs_etm *e, int32_t cpu, int32_t pid, int32_t tid, uint64_t time)
{
	(void)time;
	if (cpu >= 0 && cpu < 4096) {
		e->itrace[cpu].pid = pid;
		e->itrace[cpu].tid = tid;
	}
	return 0;
}

/* The kernel records CoreSight needs, in time order: AUX, ITRACE_START, AUX_OUTPUT_HW_ID. */
static int cs_record(struct rb_source *d, const struct pd_record *rec, const struct pd_event *ev)
{
	struct cs_etm *e = etm_of(d);
	int32_t cpu = (ev->sid.present & PD_SAMPLE_CPU) ? (int32_t)ev->sid.cpu : -1;
	int32_t tid = (ev->sid.present & PD_SAMPLE_TID) ? (int32_t)ev->sid.tid : -1;
	uint64_t t = (ev->sid.present & PD_SAMPLE_TIME) ? ev->sid.time : 0;
	switch (ev->type) {
	case PD_RECORD_AUX:
		return cs_aux(e, cpu, tid, t, ev->u.aux.aux_offset, ev->u.aux.aux_size, ev->u.aux.flags, rec->offset);
	case PD_RECORD_ITRACE_START:
		return cs_itrace_start(e, cpu, (int32_t)ev->u.itrace_start.pid, (int32_t)ev->u.itrace_start.tid, t);
	case PD_RECORD_AUX_OUTPUT_HW_ID:
		return cs_hw_id(e, cpu, ev->u.aux_output_hw_id.hw_id);
	}
	return 0;
}

/* The chunk holding [off, off + size) of queue @q, or NULL. */
static const struct chunk *chunk_for(const struct queue *q, uint64_t off, uint64_t size)
{
	for (size_t i = 0; i < q->nr_chunks; i++) {
		const struct chunk *c = &q->chunks[i];
		if (off >= c->aux_offset && off + size <= c->aux_offset + c->size)
			return c;
	}
	return NULL;
}

static int read_bytes(struct cs_etm *e, const struct chunk *c, uint64_t off, uint64_t size, uint8_t **out)
{
	*out = NULL;
	if (c->bytes) {
		*out = c->bytes + (off - c->aux_offset);
		return 0;
	}
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf)
		return -ENOMEM;
	ssize_t n = pread(e->fd, buf, size, (off_t)(c->file_offset + (off - c->aux_offset)));
	if (n < 0 || (uint64_t)n != size) {
		free(buf);
		return -EIO;
	}
	*out = buf;
	return 0;
}

/* Reset the streams' per-fragment state: perf starts every fragment afresh. */
static void reset_streams(struct queue *q, int32_t cpu, int32_t tid)
{
	struct cs_etm *e = q->etm;
	for (int i = 0; i < NR_TRACE_IDS; i++) {
		struct stream *s = &q->st[i];
		s->prev = (struct pkt){ .type = PKT_NONE };
		s->have_range = 0;
		s->ts = 0;
		if (s->tid < 0 || s->tid == 0) {
			int32_t c = s->meta ? s->meta->cpu : cpu;
			if (c >= 0 && c < 4096 && e->itrace[c].tid > 0) {
				s->pid = e->itrace[c].pid;
				s->tid = e->itrace[c].tid;
			} else if (tid > 0) {
				s->pid = -1;
				s->tid = tid;
			}
		}
	}
	q->last_map = NULL;
}

/* Decode [off, off + size) of queue @q; the end of the block is not a discontinuity (perf's end_block). */
static int decode_block(struct queue *q, uint64_t off, uint64_t size, uint64_t flags, uint64_t time,
			uint64_t file_offset, int32_t tid)
{
	struct cs_etm *e = q->etm;
	char detail[256];
	int raw = (flags & PD_AUX_FLAG_PMU_FORMAT_TYPE_MASK) == AUX_FORMAT_RAW;
	const struct chunk *c = chunk_for(q, off, size);
	q->frag_time = time;
	q->frag_base = off;
	q->file_offset = file_offset;
	if (!c) {
		snprintf(detail, sizeof(detail), "queue %u: no AUXTRACE data in the file for AUX offset %#" PRIx64
			 ", %" PRIu64 " bytes", q->idx, off, size);
		return gap(q, NULL, "aux data missing", size, file_offset, detail);
	}
	if (q->tree != C_API_INVALID_TREE_HANDLE && q->raw != raw)
		destroy_tree(q);
	int built = q->tree == C_API_INVALID_TREE_HANDLE ? build_tree(q, raw) : 0;
	if (built == -ENOMEM)
		return built;
	if (built < 0) {
		snprintf(detail, sizeof(detail), "queue %u: no decoder could be built for CPU %d from the metadata", q->idx, q->cpu);
		return gap(q, NULL, "decoder error", size, file_offset, detail);
	}
	uint8_t *bytes;
	int rc = read_bytes(e, c, off, size, &bytes);
	if (rc == -ENOMEM)
		return rc;
	if (rc) {
		snprintf(detail, sizeof(detail), "queue %u: cannot read %" PRIu64 " bytes of AUX data at file offset %#" PRIx64,
			 q->idx, size, c->file_offset + (off - c->aux_offset));
		return gap(q, NULL, "aux data missing", size, file_offset, detail);
	}
	/* the trace index: each fragment is decoded from a reset decoder, so decoding can start here */
	if (e->env->sync_point) {
		struct rb_sync_ev sp = { .source = "cs_etm", .queue = q->idx, .cpu = q->cpu, .tid = tid, .time = time,
					 .aux_pos = off, .file_offset = c->file_offset + (off - c->aux_offset) };
		int src = e->env->sync_point(e->env->sess, &sp);
		if (src) {
			if (!c->bytes)
				free(bytes);
			return q->stop = src;
		}
	}
	ocsd_dt_process_data(q->tree, OCSD_OP_RESET, 0, 0, NULL, NULL);
	reset_streams(q, q->cpu, tid);
	for (uint64_t done = 0; done < size && !q->stop;) {
		uint32_t n = size - done > (1u << 30) ? 1u << 30 : (uint32_t)(size - done);
		feed(q, bytes + done, n);
		done += n;
	}
	/* ranges still waiting for their successor end here */
	for (int i = 0; i < NR_TRACE_IDS && !q->stop; i++)
		flush_range(q, &q->st[i], 0);
	if (q->missed)         /* what is known: this fragment was not decoded whole */
		e->env->st->trace_bytes_no_binary += size;
	q->missed = 0;
	if (!c->bytes)
		free(bytes);
	return q->stop;
}

/*
 * A snapshot-mode fragment (PERF_AUX_FLAG_OVERWRITE): @head ends the data,
 * and as perf does (facts 5.6) the size is clamped to the AUXTRACE chunk
 * that holds it, size = min(aux_size, chunk size), offset = head - size;
 * older perf wrote whole wrapped buffers this way. What the clamp cuts was
 * overwritten before the snapshot was taken: a gap.
 */
static int snapshot_block(struct queue *q, const struct frag *f)
{
	uint64_t head = f->aux_offset;
	for (size_t i = 0; i < q->nr_chunks; i++) {
		const struct chunk *c = &q->chunks[i];
		uint64_t sz = f->size < c->size ? f->size : c->size;
		uint64_t off = head >= sz ? head - sz : 0;
		if (off < c->aux_offset || off + sz > c->aux_offset + c->size)
			continue;
		if (sz < f->size) {
			char detail[256];
			q->frag_time = f->time;
			snprintf(detail, sizeof(detail), "queue %u: snapshot of %" PRIu64 " bytes ending at AUX offset %#" PRIx64
				 " holds only the newest %" PRIu64, q->idx, f->size, head, sz);
			if (gap(q, NULL, "aux overwritten", f->size - sz, f->file_offset, detail))
				return q->stop;
		}
		return decode_block(q, off, sz, f->flags, f->time, f->file_offset, f->tid);
	}
	return decode_block(q, head >= f->size ? head - f->size : 0, f->size, f->flags, f->time, f->file_offset, f->tid);
}

/* The queue holding @cpu's AUX data, or NULL before its first AUXTRACE chunk. */
static struct queue *queue_of_cpu(const struct cs_etm *e, int32_t cpu)
{
	for (size_t i = 0; i < e->nr_q; i++)
		if (e->q[i] && e->q[i]->nr_chunks && e->q[i]->cpu == cpu)
			return e->q[i];
	return NULL;
}

/* Is the data of fragment @f in the file already (some AUXTRACE chunk read so far holds it)? */
static int frag_ready(const struct queue *q, const struct frag *f)
{
	if (!(f->flags & PD_AUX_FLAG_OVERWRITE))
		return chunk_for(q, f->aux_offset, f->size) != NULL;
	for (size_t i = 0; i < q->nr_chunks; i++) {
		const struct chunk *c = &q->chunks[i];
		uint64_t sz = f->size < c->size ? f->size : c->size;
		uint64_t off = f->aux_offset >= sz ? f->aux_offset - sz : 0;
		if (off >= c->aux_offset && off + sz <= c->aux_offset + c->size)
			return 1;
	}
	return 0;
}

/*
 * Decode CPU slot @k's fragments, in order, as far as their data has been
 * read: a fragment is decoded when both its AUX record (in time order, so the
 * machine's maps are those of that time) and its bytes are in. At the end
 * (@at_end) the rest is decoded or reported missing.
 */
static int advance(struct cs_etm *e, size_t k, int at_end)
{
	if (k >= e->nr_frag_cpus)
		return 0;
	struct fraglist *fl = &e->frags[k];
	struct queue *q = queue_of_cpu(e, (int32_t)k - 1);
	if (!q)
		return 0;      /* no data for this CPU yet; at the end, report_orphans() */
	while (fl->next < fl->n) {
		const struct frag *f = &fl->v[fl->next];
		if (f->size && !at_end && !frag_ready(q, f))
			break;
		fl->next++;
		if (f->size == 0)
			continue;   /* a truncated record with nothing in it */
		int rc = (f->flags & PD_AUX_FLAG_OVERWRITE) ? snapshot_block(q, f) :
			 decode_block(q, f->aux_offset, f->size, f->flags, f->time, f->file_offset, f->tid);
		if (rc)
			return rc;
	}
	return 0;
}

/* AUX records of CPUs that have no queue at all: their data never reached the file. */
static int report_orphans(struct cs_etm *e)
{
	for (size_t k = 0; k < e->nr_frag_cpus; k++) {
		int32_t cpu = (int32_t)k - 1;
		struct fraglist *fl = &e->frags[k];
		for (; fl->next < fl->n; fl->next++) {
			const struct frag *f = &fl->v[fl->next];
			if (!f->size)
				continue;
			char detail[256];
			snprintf(detail, sizeof(detail), "CPU %d: AUX record for offset %#" PRIx64 ", %" PRIu64
				 " bytes, but the file holds no AUXTRACE data for this CPU", cpu, f->aux_offset, f->size);
			struct rb_gap_ev g = { .time_start = f->time, .time_end = f->time, .cpu = cpu, .pid = -1,
					       .tid = f->tid, .source = "cs_etm", .reason = "aux data missing",
					       .bytes_lost = f->size, .file_offset = f->file_offset, .detail = detail };
			int rc = e->env->gap(e->env->sess, &g);
			if (rc)
				return rc;
		}
	}
	return 0;
}

static int cs_finish(struct rb_source *d)
{
	struct cs_etm *e = etm_of(d);
	int rc = 0;
	for (size_t k = 0; !rc && k < e->nr_frag_cpus; k++)
		rc = advance(e, k, 1);
	/* a queue without any AUX record (its records lost, or a writer that makes none): each chunk whole */
	for (size_t i = 0; !rc && i < e->nr_q; i++) {
		struct queue *q = e->q[i];
		size_t k = q ? frag_index(q->cpu) : 0;
		if (!q || (k < e->nr_frag_cpus && e->frags[k].n))
			continue;
		for (size_t c = 0; !rc && c < q->nr_chunks; c++)
			rc = decode_block(q, q->chunks[c].aux_offset, q->chunks[c].size, 0, 0, q->chunks[c].file_offset, q->tid);
	}
	if (!rc)
		rc = report_orphans(e);
	return rc;
}

static void cs_free(struct rb_source *d)
{
	struct cs_etm *e = etm_of(d);
	if (!e)
		return;
	for (size_t i = 0; i < e->nr_q; i++) {
		struct queue *q = e->q[i];
		if (!q)
			continue;
		destroy_tree(q);
		for (size_t k = 0; k < q->nr_chunks; k++)
			free(q->chunks[k].bytes);
		free(q->chunks);
		free(q);
	}
	free(e->q);
	for (size_t k = 0; k < e->nr_frag_cpus; k++)
		free(e->frags[k].v);
	free(e->frags);
	for (size_t i = 0; i < e->nr_images; i++)
		if (e->images[i].p)
			munmap(e->images[i].p, e->images[i].len);
	free(e->images);
	free(e->meta);
	if (e->fd >= 0)
		close(e->fd);
	free(e);
}

static const struct rb_source_ops cs_ops = {
	.record = cs_record, .chunk = cs_chunk, .finish = cs_finish, .free = cs_free,
};

/*
 * perf names its synthesized branch event after the trace event's
 * modifiers ("branches:u"); it declares it as cs_etm__synth_events does
 * (timeless, its samples without time, when the trace was recorded
 * without timestamps: ETM_OPT_TS, bit 28 of the event's config).
 */
static int event_name(struct cs_etm *e)
{
	const struct pd_evsel *es = e->evsel >= 0 ? pd_reader_evsel(e->env->r, (size_t)e->evsel) : NULL;
	e->mods[0] = 0;
	if (!es)
		return 0;
	pd_attr_modifiers(&es->attr, e->mods, sizeof(e->mods));
	if (!e->env->synth_event)
		return 0;
	int timeless = !(es->attr.config & (1ull << 28));
	char name[32];
	snprintf(name, sizeof(name), "branches%s", e->mods);
	return e->env->synth_event(e->env->sess, &(struct rb_event_desc){ .name = name, .type = PD_TYPE_HARDWARE,
		.config = 4, .sample_type = rb_synth_sample_type(es->attr.sample_type, timeless) | PD_SAMPLE_ADDR,
		.sample_period = 1, .kind = RB_EV_BRANCH });
}

int rb_cs_etm_open(struct rb_source **out, const struct rb_source_env *env, const struct pd_event *info,
		   struct pd_error *err)
{
	char *msg = err->msg;
	size_t msglen = sizeof(err->msg);
	pd_error_clear(err);
	*out = NULL;
	struct cs_etm *e = calloc(1, sizeof(*e));
	if (!e)
		return PD_ERR_NOMEM;
	e->base.ops = &cs_ops;
	e->base.name = "cs_etm";
	e->env = env;
	e->fd = -1;
	for (int i = 0; i < 4096; i++) {
		e->hw_id[i] = -1;
		e->itrace[i].pid = e->itrace[i].tid = -1;
	}
	int rc = parse_meta(e, info->u.auxtrace_info.priv, info->u.auxtrace_info.nr_priv, msg, msglen);
	if (rc) {
		cs_free(&e->base);
		return rc == -ENOMEM ? PD_ERR_NOMEM : RB_SOURCE_UNUSABLE;
	}
	e->evsel = -1;
	for (size_t i = 0; i < pd_reader_nr_evsels(env->r); i++)
		if (pd_reader_evsel(env->r, i)->attr.type == e->pmu_type) {
			e->evsel = (int)i;
			break;
		}
	if (event_name(e) < 0) {
		cs_free(&e->base);
		return PD_ERR_NOMEM;
	}
	if (!env->pipe_mode && env->path) {
		e->fd = open(env->path, O_RDONLY | O_CLOEXEC);
		if (e->fd < 0) {
			snprintf(msg, msglen, "%s: cannot reopen for AUX data: %s", env->path, strerror(errno));
			cs_free(&e->base);
			return RB_SOURCE_UNUSABLE;
		}
	}
	*out = &e->base;
	return 0;
}
