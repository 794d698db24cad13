/*
 * test_ringmodel.c - the recorder's regular-ring consumer (recorder/ring.c)
 * against a model of the kernel's producer, and the perf.data writer behind
 * it. Hermetic (no perf_event_open), so tests/cross.test runs it under
 * qemu-user for aarch64, ppc64le and big-endian ppc64.
 *
 * The model: one memfd laid out like a perf mmap (control page, then 2^n data
 * pages), mapped by ring__new() exactly as the recorder maps an event fd, and
 * mapped again by a producer thread that plays the kernel: it waits until
 * data_tail leaves room (perf_output_begin), copies each record at
 * head & mask, split at the end of the ring, and publishes data_head with a
 * release store after a batch of records (perf_output_put_handle). The
 * records are a fixed, deterministic sequence written in the host's byte
 * order, as the kernel writes them: COMM, FORK, MMAP2, SAMPLE with callchains
 * of 0-31 entries (so records straddle the end of the ring), LOST, EXIT.
 *
 *   test_ringmodel [OUT.data]
 *
 * Checks: every record reaches the consumer in order and byte-identical, the
 * ones that straddled the end reassembled; perf.data written from them reads
 * back identical and parses; an empty ring and a callback that refuses a
 * record leave data_tail where the protocol says. With OUT.data the recording
 * is kept: written on each target, it must read the same on x86 (perf script,
 * rbdecode) whatever the byte order of the machine that wrote it.
 */
#include "config.h"
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "pd.h"
#include "kmodel.h"
#include "recbuf.h"
#include "ring.h"
#include "tap.h"

#define NR_RECORDS 20000
#define MODEL_PID 100
#define NR_THREADS 4                 /* tids 100..103 */
#define CODE_START 0x400000ULL
#define CODE_LEN 0x100000ULL
#define CONTEXT_USER ((uint64_t)-512) /* PERF_CONTEXT_USER */
#define ID_CPU0 11
#define ID_CPU1 12
#define SAMPLE_TYPE (PD_SAMPLE_IDENTIFIER | PD_SAMPLE_IP | PD_SAMPLE_TID | PD_SAMPLE_TIME | PD_SAMPLE_CPU | \
		     PD_SAMPLE_PERIOD | PD_SAMPLE_CALLCHAIN)

/* ------------------------------------------------------ the record sequence */

/* sample_id_all trailer for SAMPLE_TYPE: TID, TIME, CPU, IDENTIFIER */
static void trailer(struct recbuf *r, uint32_t tid, uint64_t time)
{
	p32(r, MODEL_PID); p32(r, tid); p64(r, time); p32(r, 0); p32(r, 0); p64(r, ID_CPU0);
}

static uint64_t mix(uint64_t x)   /* splitmix64: the sequence depends on the index only */
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* What a sample carries, for checking the parsed record. */
struct sample_want { int is_sample; uint32_t tid, cpu; uint64_t ip, time, nr; };

/* Record @i of the sequence into @r (native byte order). */
static void gen(unsigned i, struct recbuf *r, struct sample_want *sw)
{
	uint64_t t = 1000000000ULL + 1000ULL * i;
	uint64_t x = mix(i);
	char name[16];

	memset(sw, 0, sizeof(*sw));
	if (i == 0) {
		begin(r, PD_RECORD_COMM, PD_MISC_COMM_EXEC);
		p32(r, MODEL_PID); p32(r, MODEL_PID); pstr(r, "ringmodel"); trailer(r, MODEL_PID, t);
	} else if (i == 1) {
		begin(r, PD_RECORD_MMAP2, PD_MISC_USER);
		p32(r, MODEL_PID); p32(r, MODEL_PID); p64(r, CODE_START); p64(r, CODE_LEN); p64(r, 0);
		p32(r, 8); p32(r, 1); p64(r, 4242); p64(r, 0); p32(r, 5); p32(r, 2);   /* maj min ino gen prot flags */
		pstr(r, "/opt/ringmodel/bin/ringmodel"); trailer(r, MODEL_PID, t);
	} else if (i < 2 + 2 * (NR_THREADS - 1)) {        /* FORK + COMM for each worker */
		uint32_t tid = MODEL_PID + 1 + (i - 2) / 2;
		if ((i - 2) % 2 == 0) {
			begin(r, PD_RECORD_FORK, 0);
			p32(r, MODEL_PID); p32(r, MODEL_PID); p32(r, tid); p32(r, MODEL_PID); p64(r, t);
		} else {
			begin(r, PD_RECORD_COMM, 0);
			snprintf(name, sizeof(name), "worker-%u", tid - MODEL_PID);
			p32(r, MODEL_PID); p32(r, tid); pstr(r, name);
		}
		trailer(r, tid, t);
	} else if (i >= NR_RECORDS - NR_THREADS) {        /* EXIT, workers first */
		uint32_t tid = MODEL_PID + (NR_RECORDS - 1 - i);
		begin(r, PD_RECORD_EXIT, 0);
		p32(r, MODEL_PID); p32(r, MODEL_PID); p32(r, tid); p32(r, MODEL_PID); p64(r, t);
		trailer(r, tid, t);
	} else if (x % 509 == 0) {
		begin(r, PD_RECORD_LOST, 0);
		p64(r, ID_CPU0); p64(r, 1 + (x >> 20) % 100);
		trailer(r, MODEL_PID, t);
	} else {
		sw->is_sample = 1;
		sw->tid = MODEL_PID + (uint32_t)((x >> 8) % NR_THREADS);
		sw->cpu = (uint32_t)((x >> 12) & 1);
		sw->ip = (CODE_START + (x >> 16) % CODE_LEN) & ~3ULL;
		sw->time = t;
		sw->nr = (x >> 40) % 32;
		begin(r, PD_RECORD_SAMPLE, PD_MISC_USER);
		p64(r, sw->cpu ? ID_CPU1 : ID_CPU0); p64(r, sw->ip); p32(r, MODEL_PID); p32(r, sw->tid); p64(r, t);
		p32(r, sw->cpu); p32(r, 0); p64(r, 10000);
		p64(r, sw->nr);
		for (uint64_t k = 0; k < sw->nr; k++)
			p64(r, k == 0 ? CONTEXT_USER : (CODE_START + mix(x + k) % CODE_LEN) & ~3ULL);
	}
	end(r);
}

/* --------------------------------------------------- the kernel-side model */

struct model {
	int fd;
	size_t page, data_size, len;
	uint8_t *map;                        /* the producer's own mapping of the memfd */
	struct perf_event_mmap_page *pc;
	uint8_t *data;
	uint64_t head;                       /* producer-private write position */
	unsigned nr;                         /* records to produce */
	int done;                            /* set (release) after the last data_head store */
	int stop;                            /* the consumer gave up: stop waiting for space */
	unsigned straddled;                  /* records split at the end of the ring */
	unsigned long waits;                 /* times the producer found the ring full */
};

static int model_open(struct model *m, size_t pages)
{
	memset(m, 0, sizeof(*m));
	m->page = (size_t)sysconf(_SC_PAGESIZE);
	m->data_size = pages * m->page;
	m->len = m->page + m->data_size;
	m->fd = memfd_create("ringmodel", MFD_CLOEXEC);
	if (m->fd < 0) {   /* no memfd (old qemu-user): an unlinked temporary file does the same */
		FILE *f = tmpfile();
		m->fd = f ? dup(fileno(f)) : -1;
		if (f)
			fclose(f);
	}
	if (m->fd < 0 || ftruncate(m->fd, (off_t)m->len) < 0)
		return -1;
	m->map = mmap(NULL, m->len, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, 0);
	if (m->map == MAP_FAILED)
		return -1;
	m->pc = (struct perf_event_mmap_page *)m->map;
	m->data = m->map + m->page;
	return 0;
}

static void model_close(struct model *m)
{
	if (m->map && m->map != MAP_FAILED)
		munmap(m->map, m->len);
	if (m->fd >= 0)
		close(m->fd);
}

/*
 * Copy one record at the head, split at the end of the ring (kmodel.h's copy). Unlike kmodel.h's
 * km_output(), which drops a record that does not fit as the kernel does, this waits for room:
 * the file written must not depend on thread timing, so that every target writes the same one.
 */
static void model_publish(struct model *m);

static int model_put(struct model *m, const struct recbuf *r)
{
	uint64_t mask = m->data_size - 1;
	for (;;) {
		/* pairs with the consumer's release store of data_tail in ring__consume(): its reads of the
		 * space are done before we see the new tail (the kernel's smp_mb() in perf_output_begin) */
		uint64_t tail = __atomic_load_n(&m->pc->data_tail, __ATOMIC_ACQUIRE);
		if (m->head + r->n - tail <= m->data_size)
			break;
		if (__atomic_load_n(&m->stop, __ATOMIC_ACQUIRE))
			return -1;
		/* the kernel never waits (it drops the record and counts it LOST); the model waits
		 * instead, so the sequence stays whole, having published what it wrote */
		model_publish(m);
		m->waits++;
		sched_yield();
	}
	if ((m->head & mask) + r->n > m->data_size)
		m->straddled++;
	km_copy_in(m->data, m->data_size, m->head, r->b, r->n);
	m->head += r->n;
	return 0;
}

static void model_publish(struct model *m)
{
	/* perf_output_put_handle(): the record bytes before the head (smp_wmb + WRITE_ONCE); pairs with
	 * the consumer's acquire load of data_head in ring__consume() */
	__atomic_store_n(&m->pc->data_head, m->head, __ATOMIC_RELEASE);
}

static void *producer(void *arg)
{
	struct model *m = arg;
	struct recbuf r;
	struct sample_want sw;

	for (unsigned i = 0; i < m->nr; i++) {
		gen(i, &r, &sw);
		if (model_put(m, &r) < 0)
			break;
		/* the kernel publishes once per output handle; several records may share one wake-up */
		if (mix(i ^ 0x5a5a) % 4 == 0 || i + 1 == m->nr)
			model_publish(m);
	}
	model_publish(m);
	__atomic_store_n(&m->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* ------------------------------------------------------------ the consumer */

struct consumer {
	struct model *m;
	struct ring *ring;
	struct pd_writer *w;        /* NULL: do not write */
	unsigned next;              /* index of the record expected next */
	unsigned bounced;           /* records handed over from the bounce buffer (wrapped) */
	int bad;                    /* first mismatch seen: stop */
	struct pd_error err;
	char why[sizeof(((struct pd_error *)0)->msg) + 64];
};

static int on_record(void *ctx, struct ring *r, const struct perf_event_header *h)
{
	struct consumer *c = ctx;
	struct recbuf want;
	struct sample_want sw;
	const uint8_t *p = (const uint8_t *)h;

	if (c->next >= c->m->nr) {
		snprintf(c->why, sizeof(c->why), "record %u beyond the %u produced", c->next, c->m->nr);
		c->bad = 1;
		return -1;
	}
	gen(c->next, &want, &sw);
	if (h->size != want.n || memcmp(p, want.b, want.n)) {
		snprintf(c->why, sizeof(c->why), "record %u (type %u, %u bytes) differs from the %zu bytes produced",
			 c->next, h->type, h->size, want.n);
		c->bad = 1;
		return -1;
	}
	if (p < r->data || p >= r->data + r->data_size)
		c->bounced++;
	if (c->w && pd_writer_write(c->w, h, 0, NULL, 0, &c->err) < 0) {
		snprintf(c->why, sizeof(c->why), "writer: %s", c->err.msg);
		c->bad = 1;
		return -1;
	}
	c->next++;
	return 0;
}

static int open_writer(struct pd_writer **w, const char *path, struct pd_error *err)
{
	struct pd_writer_opts o;
	struct pd_event_attr a;
	uint64_t ids[2] = { ID_CPU0, ID_CPU1 };
	uint32_t nrcpus[2] = { 2, 2 };
	struct pd_buf b = { 0 };

	pd_writer_opts_init(&o);
	if (pd_writer_open(w, path, &o, err) < 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.type = PD_TYPE_SOFTWARE;
	a.config = 0;   /* cpu-clock */
	a.size = PD_ATTR_SIZE_VER8;
	a.sample_period = 10000;
	a.sample_type = SAMPLE_TYPE;
	a.flags = pd_attr_flag_mask(PD_ATTR_SAMPLE_ID_ALL) | pd_attr_flag_mask(PD_ATTR_COMM) |
		  pd_attr_flag_mask(PD_ATTR_TASK) | pd_attr_flag_mask(PD_ATTR_MMAP) |
		  pd_attr_flag_mask(PD_ATTR_EXCLUDE_KERNEL);
	if (pd_writer_add_evsel(*w, &a, ids, 2, "cpu-clock:u", err) < 0)
		return -1;
	/* fixed features: the file must not depend on the machine that ran the model */
	pd_buf_string(&b, "ringmodel");
	int rc = pd_writer_set_feature(*w, PD_FEAT_HOSTNAME, b.data, b.len, err);
	pd_buf_free(&b);
	memset(&b, 0, sizeof(b));
	pd_buf_string(&b, "model");
	if (!rc)
		rc = pd_writer_set_feature(*w, PD_FEAT_OSRELEASE, b.data, b.len, err);
	pd_buf_free(&b);
	if (!rc)
		rc = pd_writer_set_feature(*w, PD_FEAT_NRCPUS, nrcpus, sizeof(nrcpus), err);
	return rc < 0 ? -1 : 0;
}

/* One run: @nr records through a ring of @pages pages; written to @path when not NULL. */
static void run(size_t pages, unsigned nr, const char *path)
{
	struct model m;
	struct consumer c;
	struct rec_err e = { 0 };
	pthread_t th;

	memset(&c, 0, sizeof(c));
	if (model_open(&m, pages) < 0) {
		ok(0, "%zu-page model ring: memfd / mmap failed: %s", pages, strerror(errno));
		return;
	}
	m.nr = nr;
	c.m = &m;
	if (ring__new(&c.ring, m.fd, 0, -1, pages, 0, &e) < 0) {
		ok(0, "%zu-page model ring: ring__new: %s", pages, e.msg);
		model_close(&m);
		return;
	}
	if (path && open_writer(&c.w, path, &c.err) < 0) {
		ok(0, "writer for %s: %s", path, c.err.msg);
		pd_writer_free(c.w);
		c.w = NULL;
	}
	if (pthread_create(&th, NULL, producer, &m)) {
		ok(0, "%zu-page model ring: cannot start the producer thread", pages);
		ring__free(c.ring);
		model_close(&m);
		return;
	}
	for (;;) {
		/* pairs with the producer's release of done after its last data_head store: the
		 * pass that follows sees every record */
		int fin = __atomic_load_n(&m.done, __ATOMIC_ACQUIRE);
		long n = ring__consume(c.ring, on_record, &c);
		if (n < 0 || fin)
			break;
		if (n == 0)
			sched_yield();
	}
	__atomic_store_n(&m.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	ok(!c.bad && c.next == nr && c.ring->records == nr,
	   "%zu-page ring (%zu bytes): %u records in order and byte-identical, %u split at the end of the ring "
	   "and reassembled, producer waited %lu times%s%s",
	   pages, m.data_size, c.next, c.bounced, m.waits, c.bad ? ": " : "", c.why);
	ok(m.straddled > 0 && c.bounced == m.straddled,
	   "%zu-page ring: the consumer reassembled exactly the %u records the producer split", pages, m.straddled);
	ok(c.ring->pc->data_tail == m.head, "%zu-page ring: data_tail (%llu) ends at the producer's head (%llu)",
	   pages, (unsigned long long)c.ring->pc->data_tail, (unsigned long long)m.head);
	if (c.w) {
		int rc = pd_writer_close(c.w, &c.err);
		ok(rc == 0, "perf.data written: %s%s", path, rc ? c.err.msg : "");
	}
	ring__free(c.ring);
	model_close(&m);
}

/* The file written by run(): the same records, in order, and each parses to what was produced. */
static void read_back(const char *path, unsigned nr)
{
	struct pd_reader *rd;
	struct pd_record rec;
	struct pd_event ev;
	struct pd_error err;
	struct recbuf want;
	struct sample_want sw;
	unsigned i = 0, same = 0, parsed = 0, samples = 0;
	int rc;

	if (pd_reader_open(&rd, path, NULL, &err) < 0) {
		ok(0, "read back %s: %s", path, err.msg);
		return;
	}
	while ((rc = pd_reader_next(rd, &rec, &err)) > 0) {
		if (i < nr) {
			gen(i, &want, &sw);
			if (rec.size == want.n && !memcmp(rec.data, want.b, want.n))
				same++;
			if (pd_event_parse(rd, &rec, &ev, &err) == 0) {
				if (!sw.is_sample)
					parsed++;
				else if (ev.type == PD_RECORD_SAMPLE && ev.u.sample.ip == sw.ip &&
					 ev.u.sample.tid == sw.tid && ev.u.sample.time == sw.time &&
					 ev.u.sample.cpu == sw.cpu && ev.u.sample.callchain_nr == sw.nr &&
					 (sw.nr == 0 || pd_u64_at(ev.u.sample.callchain, 0) == CONTEXT_USER))
					parsed++, samples++;
			}
		}
		i++;
	}
	ok(rc == 0 && i == nr && same == nr, "read back: %u of %u records identical to those produced%s%s", same, i,
	   rc < 0 ? ": " : "", rc < 0 ? err.msg : "");
	ok(parsed == nr && samples > nr / 2, "read back: every record parses, %u samples with the ip, tid, time, cpu "
	   "and callchain produced", samples);
	pd_reader_free(rd);
}

/* Protocol corner cases on a ring filled by the test itself (no thread). */
static int refuse_second(void *ctx, struct ring *r, const struct perf_event_header *h)
{
	int *seen = ctx;
	return ++*seen == 2 ? -7 : 0;
}
static int count(void *ctx, struct ring *r, const struct perf_event_header *h)
{
	(*(int *)ctx)++;
	return 0;
}

static void corner_cases(void)
{
	struct model m;
	struct ring *ring;
	struct rec_err e = { 0 };
	struct recbuf r;
	struct sample_want sw;
	uint64_t after_first;
	int seen = 0;

	if (model_open(&m, 1) < 0 || ring__new(&ring, m.fd, 0, -1, 1, 0, &e) < 0) {
		ok(0, "corner cases: model ring: %s", e.msg[0] ? e.msg : strerror(errno));
		model_close(&m);
		return;
	}
	long n = ring__consume(ring, count, &seen);
	ok(n == 0 && seen == 0 && m.pc->data_tail == 0, "empty ring: nothing consumed, data_tail stays 0");
	gen(0, &r, &sw);
	model_put(&m, &r);
	after_first = m.head;
	gen(1, &r, &sw);
	model_put(&m, &r);
	/* written but not published: the consumer must not see it */
	n = ring__consume(ring, count, &seen);
	ok(n == 0 && seen == 0 && m.pc->data_tail == 0, "records written before data_head moved are not read");
	gen(2, &r, &sw);
	model_put(&m, &r);
	model_publish(&m);
	seen = 0;
	n = ring__consume(ring, refuse_second, &seen);
	ok(n == -7 && m.pc->data_tail == after_first,
	   "a callback's error stops the pass and is returned; data_tail frees only the record before it");
	seen = 0;
	n = ring__consume(ring, count, &seen);
	ok(n == 2 && seen == 2 && m.pc->data_tail == m.head, "the refused record comes again on the next pass");
	ring__free(ring);
	model_close(&m);
}

int main(int argc, char **argv)
{
	static char path[4096];
	const char *dir = getenv("TMPDIR");
	int fd = -1;

	if (argc > 1) {
		snprintf(path, sizeof(path), "%s", argv[1]);
	} else {
		snprintf(path, sizeof(path), "%s/ringmodel.XXXXXX", dir && *dir ? dir : "/tmp");
		fd = mkstemp(path);
		if (fd < 0) {
			ok(0, "temporary file %s: %s", path, strerror(errno));
			return done_testing();
		}
	}
	corner_cases();
	run(1, NR_RECORDS, path);   /* the smallest ring wraps hundreds of times: written to perf.data */
	read_back(path, NR_RECORDS);
	run(8, NR_RECORDS, NULL);
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	return done_testing();
}
