/*
 * auxreplay - real Intel PT bytes through the kernel model (kmodel.h) and the
 * recorder's consumers (recorder/ring.c, recorder/auxring.c, the
 * AUXTRACE_INFO builder of recorder/auxinfo.c) into a perf.data, next to a
 * copy that holds the same bytes directly. Linux perf must decode both to
 * the same branches (tests/rec_aux.test).
 *
 *   auxreplay [--aux-size BYTES] [--tsc-ctc N/D] IN DIRECT REPLAY
 *   auxreplay --info IN      only AUXTRACE_INFO: the recorder's next to IN's
 *
 * IN is a recording with AUXTRACE records (pipe or file mode). DIRECT gets
 * every record as it is (file mode). REPLAY gets the same user records, but
 * every kernel record goes through a model ring of its queue (the CPU of its
 * sample id), and each PERF_RECORD_AUX has its trace bytes written into the
 * model's AUX area first, in pieces no larger than the area's free space, as
 * a driver would end its output at the watermark; after each record the
 * recorder's code drains the model exactly as rbrecord drains the kernel's
 * rings. The AUXTRACE_INFO of REPLAY is built by the recorder from the sysfs
 * tree in $RBRECORD_SYSFS_PMUS and the model's control page (time conversion
 * taken from IN's TIME_CONV); its words are printed next to IN's.
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pd.h"
#include "kmodel.h"
#include "ring.h"
#include "auxring.h"
#include "auxinfo.h"
#include "events.h"

#define MAX_QUEUES 64

struct queue {
	int used;
	uint32_t idx;
	int cpu, tid;
	uint64_t offset, reference;   /* of IN's AUXTRACE record */
	uint8_t *bytes;
	size_t size;
	struct kmodel m;
	struct ring *r;
	struct aux_ring a;
};

static struct queue q[MAX_QUEUES];
static struct pd_writer *wr;
static struct pd_error werr;
static int write_failed;
static uint64_t replay_chunks;

static uint64_t queue_reference(void *ctx)
{
	return ((struct queue *)ctx)->reference;   /* the model's clock: the original read time */
}

static const struct aux_ops replay_ops = { NULL, NULL, queue_reference };

static int put_record(void *ctx, struct ring *r, const struct perf_event_header *h)
{
	(void)ctx;
	(void)r;
	if (pd_writer_write(wr, h, -1, NULL, 0, &werr) < 0) {
		write_failed = 1;
		return -1;
	}
	return 0;
}

static int put_chunk(void *ctx, struct aux_ring *a, const struct aux_chunk *c)
{
	(void)ctx;
	(void)a;
	if (aux_chunk_write(wr, c, &werr) < 0) {
		write_failed = 1;
		return -1;
	}
	replay_chunks++;
	return 0;
}

static void drain(struct queue *x)
{
	ring__consume(x->r, put_record, NULL);
	aux__consume(&x->a, put_chunk, NULL);
}

static int copy_header(struct pd_reader *r, struct pd_writer *w, struct pd_error *err)
{
	for (size_t i = 0; i < pd_reader_nr_evsels(r); i++) {
		const struct pd_evsel *es = pd_reader_evsel(r, i);
		if (pd_writer_add_evsel(w, &es->attr, es->ids, es->nr_ids, es->name, err) < 0)
			return -1;
	}
	for (unsigned f = 1; f < PD_FEAT_KNOWN_MAX; f++) {
		const uint8_t *d;
		size_t n;
		if (f == PD_FEAT_AUXTRACE || f == PD_FEAT_EVENT_DESC || f == PD_FEAT_COMPRESSED)
			continue;
		if (pd_reader_feature(r, f, &d, &n, NULL) && pd_writer_set_feature(w, f, d, n, err) < 0)
			return -1;
	}
	return 0;
}

/* Pass 1: the AUXTRACE payloads per queue, the TIME_CONV and AUXTRACE_INFO records. */
static int collect(const char *in, uint64_t tc[3], uint8_t **info, size_t *info_len)
{
	struct pd_reader *r;
	struct pd_record rec;
	struct pd_error err;
	struct pd_event ev;
	int rc;

	if (pd_reader_open(&r, in, NULL, &err) < 0) {
		fprintf(stderr, "auxreplay: %s\n", err.msg);
		return -1;
	}
	while ((rc = pd_reader_next(r, &rec, &err)) == 1) {
		if (rec.type == PD_RECORD_TIME_CONV && pd_event_parse(r, &rec, &ev, &err) == 0) {
			tc[0] = ev.u.time_conv.time_shift;
			tc[1] = ev.u.time_conv.time_mult;
			tc[2] = ev.u.time_conv.time_zero;
		} else if (rec.type == PD_RECORD_AUXTRACE_INFO) {
			*info = malloc(rec.size);
			memcpy(*info, rec.data, rec.size);
			*info_len = rec.size;
		} else if (rec.type == PD_RECORD_AUXTRACE && pd_event_parse(r, &rec, &ev, &err) == 0) {
			uint32_t idx = ev.u.auxtrace.idx;
			if (idx >= MAX_QUEUES || q[idx].used) {
				fprintf(stderr, "auxreplay: queue %u: only one AUXTRACE per queue is replayed\n", idx);
				rc = -1;
				break;
			}
			struct queue *x = &q[idx];
			x->used = 1;
			x->idx = idx;
			x->cpu = (int)ev.u.auxtrace.cpu;
			x->tid = (int)ev.u.auxtrace.tid;
			x->offset = ev.u.auxtrace.offset;
			x->reference = ev.u.auxtrace.reference;
			x->size = (size_t)rec.payload_size;
			x->bytes = malloc(x->size ? x->size : 1);
			if (pd_reader_read_payload(r, x->bytes, x->size, &err) != (int64_t)x->size) {
				fprintf(stderr, "auxreplay: AUXTRACE payload of queue %u: %s\n", idx, err.msg);
				rc = -1;
				break;
			}
		}
	}
	if (rc < 0 && err.code)
		fprintf(stderr, "auxreplay: %s\n", err.msg);
	pd_reader_free(r);
	return rc < 0 ? -1 : 0;
}

static struct queue *queue_of_cpu(int cpu)
{
	struct queue *first = NULL;
	for (int i = 0; i < MAX_QUEUES; i++)
		if (q[i].used) {
			if (!first)
				first = &q[i];
			if (q[i].cpu == cpu)
				return &q[i];
		}
	return first;
}

/* One PERF_RECORD_AUX of IN: its bytes into the model's area, in pieces that fit, each drained. */
static int replay_aux(struct queue *x, const struct pd_record *rec, const struct pd_event *ev)
{
	uint64_t off = ev->u.aux.aux_offset, size = ev->u.aux.aux_size, flags = ev->u.aux.flags;

	if (off < x->offset || off + size > x->offset + x->size || off != x->m.aux_head) {
		fprintf(stderr, "auxreplay: AUX record at %#llx: [%#llx, +%#llx) is not the next part of queue %u's "
			"trace (model head %#llx)\n", (unsigned long long)rec->offset, (unsigned long long)off,
			(unsigned long long)size, x->idx, (unsigned long long)x->m.aux_head);
		return -1;
	}
	x->m.trailer_len = rec->size - 32u;   /* the record's own sample_id trailer */
	memcpy(x->m.trailer, rec->data + 32, x->m.trailer_len);
	do {
		uint64_t room = x->m.aux_size - (x->m.aux_head - x->m.pc->aux_tail);
		uint64_t n = size < room ? size : room;
		km_aux_write(&x->m, x->bytes + (x->m.aux_head - x->offset), (size_t)n, size == n ? flags : 0);
		drain(x);
		size -= n;
	} while (size && !write_failed);
	return write_failed ? -1 : 0;
}

/* CoreSight: header words, then each CPU block's magic, cpu and the parameters both have. */
static void show_cs_info(const uint8_t *in, size_t in_len, const struct pd_buf *ours)
{
	size_t ni = (in_len - 16) / 8, no = (ours->len - 16) / 8, same = 0, total = 0, blocks = 0;
	size_t i = 3, o = 3;
	uint64_t a, b;
	for (size_t k = 0; k < 3; k++) {
		memcpy(&a, in + 16 + 8 * k, 8);
		memcpy(&b, ours->data + 16 + 8 * k, 8);
		printf("cs_etm header[%zu] in=%#llx rbrecord=%#llx%s\n", k, (unsigned long long)a, (unsigned long long)b,
		       a != b ? " DIFFERENT" : "");
		same += a == b;
		total++;
	}
	while (i + 3 <= ni && o + 3 <= no) {
		uint64_t in_nr, our_nr;
		memcpy(&in_nr, in + 16 + 8 * (i + 2), 8);
		memcpy(&our_nr, ours->data + 16 + 8 * (o + 2), 8);
		for (size_t k = 0; k < 2 + (in_nr < our_nr ? in_nr : our_nr) + 1; k++) {
			if (k == 2)
				continue;   /* the parameter count: rbrecord may append newer ones */
			memcpy(&a, in + 16 + 8 * (i + k), 8);
			memcpy(&b, ours->data + 16 + 8 * (o + k), 8);
			if (a != b)
				printf("cs_etm block %zu word %zu in=%#llx rbrecord=%#llx DIFFERENT\n", blocks, k,
				       (unsigned long long)a, (unsigned long long)b);
			same += a == b;
			total++;
		}
		i += 3 + in_nr;
		o += 3 + our_nr;
		blocks++;
	}
	printf("auxtrace_info: cs_etm: %zu of %zu words equal over the header and %zu CPU blocks\n", same, total, blocks);
}

static void show_info(const uint8_t *perf, size_t perf_len, const struct pd_buf *ours)
{
	size_t np = perf_len > 16 ? (perf_len - 16) / 8 : 0, no = ours->len > 16 ? (ours->len - 16) / 8 : 0;
	size_t same = 0, cmp = np < no ? np : no;
	for (size_t i = 0; i < (np > no ? np : no); i++) {
		uint64_t a = 0, b = 0;
		if (i < np)
			memcpy(&a, perf + 16 + 8 * i, 8);
		if (i < no)
			memcpy(&b, ours->data + 16 + 8 * i, 8);
		printf("auxtrace_info priv[%zu] in=%#llx rbrecord=%#llx%s\n", i, (unsigned long long)a,
		       (unsigned long long)b, i < cmp && a != b ? " DIFFERENT" : "");
		same += i < cmp && a == b;
	}
	printf("auxtrace_info: %zu of %zu common words equal (in %zu words, rbrecord %zu)\n", same, cmp, np, no);
}

/* --info: the recorder's AUXTRACE_INFO for IN's CoreSight or Intel PT event, compared with IN's. */
static int info_only(const char *in)
{
	struct pd_reader *r;
	struct pd_record rec;
	struct pd_error err;
	struct rec_err re;
	int rc;

	if (pd_reader_open(&r, in, NULL, &err) < 0) {
		fprintf(stderr, "auxreplay: %s\n", err.msg);
		return 2;
	}
	while ((rc = pd_reader_next(r, &rec, &err)) == 1 && rec.type != PD_RECORD_AUXTRACE_INFO)
		;
	if (rc != 1) {
		fprintf(stderr, "auxreplay: %s has no AUXTRACE_INFO\n", in);
		return 2;
	}
	uint64_t w1;
	uint32_t type;
	memcpy(&type, rec.data + 8, 4);
	memcpy(&w1, rec.data + 16 + (type == PD_AUXTRACE_CS_ETM ? 8 : 0), 8);
	struct aux_pmu pmu;
	uint32_t pmu_type = type == PD_AUXTRACE_CS_ETM ? (uint32_t)(w1 >> 32) : (uint32_t)w1;
	if (!auxpmu__lookup(pmu_type, &pmu)) {
		fprintf(stderr, "auxreplay: no AUX PMU with type %u under %s\n", pmu_type, events__pmu_root());
		return 2;
	}
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	for (size_t k = 0; k < pd_reader_nr_evsels(r); k++)
		if (pd_reader_evsel(r, k)->attr.type == pmu_type)
			memcpy(&attr, &pd_reader_evsel(r, k)->attr, sizeof(attr));
	int cpus[256], n = 0;
	if (type == PD_AUXTRACE_CS_ETM) {   /* the CPUs of IN's blocks */
		size_t nw = (rec.size - 16u) / 8, i = 3;
		while (i + 3 <= nw && n < 256) {
			uint64_t cpu, nr;
			memcpy(&cpu, rec.data + 16 + 8 * (i + 1), 8);
			memcpy(&nr, rec.data + 16 + 8 * (i + 2), 8);
			cpus[n++] = (int)cpu;
			i += 3 + nr;
		}
	}
	struct pd_buf ours = { 0 };
	struct auxinfo_params ap = { .pmu = &pmu, .attr = &attr, .per_cpu_mmaps = 1, .cpus = cpus, .nr_cpus = n };
	if (auxinfo__build(&ours, &ap, &re) < 0) {
		fprintf(stderr, "auxreplay: %s\n", re.msg);
		return 2;
	}
	if (type == PD_AUXTRACE_CS_ETM)
		show_cs_info(rec.data, rec.size, &ours);
	else
		show_info(rec.data, rec.size, &ours);
	pd_buf_free(&ours);
	pd_reader_free(r);
	return 0;
}

int main(int argc, char **argv)
{
	size_t aux_size = 16384;

	if (argc == 3 && !strcmp(argv[1], "--info"))
		return info_only(argv[2]);
	uint32_t ctc_n = 0, ctc_d = 0;
	int i = 1;

	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (!strcmp(argv[i], "--aux-size"))
			aux_size = strtoul(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--tsc-ctc"))
			sscanf(argv[i + 1], "%u/%u", &ctc_n, &ctc_d);
		else
			break;
	}
	if (argc - i != 3 || !aux_size || (aux_size & (aux_size - 1))) {
		fprintf(stderr, "usage: auxreplay [--aux-size POWER_OF_2] [--tsc-ctc N/D] IN DIRECT REPLAY\n");
		return 1;
	}
	const char *in = argv[i], *direct = argv[i + 1], *replay = argv[i + 2];
	uint64_t tc[3] = { 0 };
	uint8_t *info = NULL;
	size_t info_len = 0;
	if (collect(in, tc, &info, &info_len) < 0)
		return 2;
	if (!info) {
		fprintf(stderr, "auxreplay: %s has no AUXTRACE_INFO\n", in);
		return 2;
	}

	/* the models: one mmap per queue, the control page carrying IN's time conversion */
	struct rec_err re;
	for (int k = 0; k < MAX_QUEUES; k++) {
		struct queue *x = &q[k];
		if (!x->used)
			continue;
		km_init(&x->m, 256 * 1024, aux_size, 0, 0, 0);
		x->m.pc->time_shift = (uint16_t)tc[0];
		x->m.pc->time_mult = (uint32_t)tc[1];
		x->m.pc->time_zero = tc[2];
		x->m.pc->cap_user_time_zero = 1;
		if (ring__new_mem(&x->r, x->m.mem, x->m.page, x->m.data_size, x->cpu, -1, 0, NULL, NULL, &re) < 0) {
			fprintf(stderr, "auxreplay: %s\n", re.msg);
			return 2;
		}
		struct aux_config cfg = { .pc = x->m.pc, .data = x->m.aux, .size = x->m.aux_size, .kind = AUX_INTEL_PT,
					  .idx = x->idx, .cpu = x->cpu, .tid = x->tid, .ops = &replay_ops, .ops_ctx = x };
		x->m.aux_head = x->m.pc->aux_head = x->m.pc->aux_tail = x->offset;   /* where IN's queue started */
		aux__init(&x->a, &cfg);
		x->a.prev = x->offset;
	}

	/* the recorder's AUXTRACE_INFO for the PMU of IN's priv[0] */
	struct aux_pmu pmu;
	uint64_t pmu_type;
	memcpy(&pmu_type, info + 16, 8);
	if (!auxpmu__lookup((uint32_t)pmu_type, &pmu)) {
		fprintf(stderr, "auxreplay: no AUX PMU with type %llu under %s\n", (unsigned long long)pmu_type,
			events__pmu_root());
		return 2;
	}

	struct pd_reader *r;
	struct pd_writer *wd;
	struct pd_writer_opts wo;
	struct pd_error err;
	struct pd_record rec;
	struct pd_event ev;
	struct pd_buf ours = { 0 };
	int rc, started = 0;
	static uint8_t chunk[1 << 16];

	pd_writer_opts_init(&wo);
	if (pd_reader_open(&r, in, NULL, &err) < 0 || pd_writer_open(&wd, direct, &wo, &err) < 0 ||
	    pd_writer_open(&wr, replay, &wo, &err) < 0) {
		fprintf(stderr, "auxreplay: %s\n", err.msg);
		return 2;
	}
	while ((rc = pd_reader_next(r, &rec, &err)) == 1) {
		if (rec.type == PD_RECORD_HEADER_ATTR || rec.type == PD_RECORD_HEADER_FEATURE)
			continue;
		if (!started) {
			if (copy_header(r, wd, &err) < 0 || copy_header(r, wr, &err) < 0) {
				rc = -1;
				break;
			}
			started = 1;
		}
		/* DIRECT: as it is */
		if ((rc = pd_writer_write(wd, rec.data, rec.evsel, NULL, 0, &err)) < 0)
			break;
		for (uint64_t left = rec.payload_size; left;) {
			int64_t n = pd_reader_read_payload(r, chunk, left < sizeof(chunk) ? left : sizeof(chunk), &err);
			if (n <= 0 || pd_writer_write_payload(wd, chunk, (size_t)n, &err) < 0) {
				rc = -1;
				goto out;
			}
			left -= (uint64_t)n;
		}
		/* REPLAY */
		if (rec.type == PD_RECORD_AUXTRACE)
			continue;   /* its bytes come out of the model */
		if (rec.type == PD_RECORD_AUXTRACE_INFO) {
			const struct queue *q0 = queue_of_cpu(-1);
			struct perf_event_attr pt_attr;
			memset(&pt_attr, 0, sizeof(pt_attr));
			for (size_t k = 0; k < pd_reader_nr_evsels(r); k++)
				if (pd_reader_evsel(r, k)->attr.type == pmu.type)
					memcpy(&pt_attr, &pd_reader_evsel(r, k)->attr, sizeof(pt_attr));
			struct auxinfo_params ap = { .pmu = &pmu, .attr = &pt_attr, .pc = q0->m.pc, .per_cpu_mmaps = 1,
						     .have_sched_switch = 3, .tsc_ctc_n = ctc_n, .tsc_ctc_d = ctc_d };
			if (auxinfo__build(&ours, &ap, &re) < 0) {
				fprintf(stderr, "auxreplay: %s\n", re.msg);
				rc = -1;
				break;
			}
			show_info(rec.data, rec.size, &ours);
			if ((rc = pd_writer_write(wr, ours.data, -1, NULL, 0, &err)) < 0)
				break;
			continue;
		}
		if (rec.type >= 64) {
			if ((rc = pd_writer_write(wr, rec.data, rec.evsel, NULL, 0, &err)) < 0)
				break;
			continue;
		}
		if (pd_event_parse(r, &rec, &ev, &err) < 0) {
			rc = -1;
			break;
		}
		struct queue *x = queue_of_cpu((ev.sid.present & PD_SAMPLE_CPU) ? (int)ev.sid.cpu : -1);
		if (rec.type == PD_RECORD_AUX) {
			if (replay_aux(queue_of_cpu((int)ev.sid.cpu), &rec, &ev) < 0) {
				rc = -1;
				break;
			}
			continue;
		}
		if (km_output(&x->m, rec.data) < 0) {
			fprintf(stderr, "auxreplay: model ring full\n");
			rc = -1;
			break;
		}
		drain(x);
		if (write_failed) {
			err = werr;
			rc = -1;
			break;
		}
	}
out:
	if (rc < 0) {
		fprintf(stderr, "auxreplay: %s\n", write_failed ? werr.msg : err.msg);
		return 2;
	}
	uint64_t bytes = 0, in_bytes = 0;
	for (int k = 0; k < MAX_QUEUES; k++)
		if (q[k].used) {
			bytes += q[k].a.bytes;
			in_bytes += q[k].size;
		}
	printf("replayed %llu AUX bytes of %llu in %llu AUXTRACE records through %zu-byte model areas\n",
	       (unsigned long long)bytes, (unsigned long long)in_bytes, (unsigned long long)replay_chunks, aux_size);
	if (pd_writer_close(wd, &err) < 0 || pd_writer_close(wr, &err) < 0) {
		fprintf(stderr, "auxreplay: %s\n", err.msg);
		return 2;
	}
	pd_reader_free(r);
	pd_buf_free(&ours);
	for (int k = 0; k < MAX_QUEUES; k++)
		if (q[k].used) {
			aux__fini(&q[k].a);
			ring__free(q[k].r);
			km_fini(&q[k].m);
			free(q[k].bytes);
		}
	free(info);
	return 0;
}
