/*
 * threads.c - perf record --threads[=SPEC]: the rings, grouped into workers
 * as SPEC says (one per CPU by default; per core, package or NUMA node as
 * sysfs gives the topology; or the user's CPU masks), each worker a thread
 * that polls its rings and drains each into its own file, OUTPUT/data.N for
 * the N-th ring (as perf: one file per ring, whichever thread reads it),
 * pinned to its CPUs (best effort). The records are
 * written as the kernel gave them: no FINISHED_ROUND (perf writes none in a
 * data.N; readers order the files' records by time). The recorder's tallies
 * (samples, lost, paths for build-ids) go through one callback under a lock.
 *
 * Workload: one worker per CPU (or group), each waking on its rings'
 * watermarks or every 100 ms to see whether the recording stopped, and
 * writing in blocks of up to 256 KiB per ring.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "threads.h"

#define WBUF (256u << 10)

struct rfile {                  /* data.N: the N-th ring's records */
	struct rthreads *t;
	int fd;
	char *path;
	uint8_t *buf;
	size_t len;
	uint64_t bytes;
	int err;                /* errno of a failed write (0: none) */
};

struct worker {
	struct rthreads *t;
	pthread_t th;
	int started;
	size_t *rings;          /* indexes into t->rings */
	size_t nr;
	int *cpus;              /* affinity */
	int nr_cpus;
};

struct rthreads {
	struct ring **rings;
	size_t nr_rings;
	struct rfile *f;        /* per ring */
	struct worker *w;
	size_t nr;
	rthreads_note_fn note;
	void *ctx;
	pthread_mutex_t lock;
	int stop;
};

static int wflush(struct rfile *w)
{
	const uint8_t *p = w->buf;
	size_t n = w->len;
	while (n && !w->err) {
		ssize_t r = write(w->fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			w->err = r < 0 ? errno : EIO;
		else
			p += r, n -= (size_t)r, w->bytes += (uint64_t)r;
	}
	w->len = 0;
	return w->err ? -1 : 0;
}

static int wrecord(void *ctx, struct ring *r, const struct perf_event_header *h)
{
	struct rfile *w = ctx;
	(void)r;
	if (w->len + h->size > WBUF && wflush(w) < 0)
		return -1;
	memcpy(w->buf + w->len, h, h->size);
	w->len += h->size;
	pthread_mutex_lock(&w->t->lock);
	w->t->note(w->t->ctx, h);
	pthread_mutex_unlock(&w->t->lock);
	return 0;
}

/* One pass over the worker's rings. 0 or -1 (w->err says why). */
static int wdrain(struct worker *w)
{
	for (size_t i = 0; i < w->nr; i++) {
		struct rfile *f = &w->t->f[w->rings[i]];
		if (f->err)
			return -1;
		if (ring__consume(w->t->rings[w->rings[i]], wrecord, f) < 0) {
			if (!f->err)
				f->err = EIO;
			return -1;
		}
		if (wflush(f) < 0)
			return -1;
	}
	return 0;
}

static void *wmain(void *arg)
{
	struct worker *w = arg;
	struct pollfd *pf = calloc(w->nr, sizeof(*pf));
	cpu_set_t set;

	CPU_ZERO(&set);
	for (int i = 0; i < w->nr_cpus; i++)
		if (w->cpus[i] >= 0 && w->cpus[i] < CPU_SETSIZE)
			CPU_SET(w->cpus[i], &set);
	if (w->nr_cpus)
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);   /* as perf; not fatal */
	while (!__atomic_load_n(&w->t->stop, __ATOMIC_ACQUIRE)) {
		if (pf) {
			for (size_t i = 0; i < w->nr; i++)
				pf[i] = (struct pollfd){ .fd = w->t->rings[w->rings[i]]->fd, .events = POLLIN };
			poll(pf, w->nr, 100);
		} else {
			usleep(100000);
		}
		if (wdrain(w) < 0)
			break;
	}
	free(pf);
	return NULL;
}

/* The key that groups CPU @cpu with others: its sysfs topology list, or its NUMA node. */
static char *group_key(const char *spec, int cpu)
{
	char path[256], buf[4096];
	if (!strcmp(spec, "numa")) {
		for (int node = 0; node < 4096; node++) {
			int *v, n;
			snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", node);
			if (read_text(path, buf, sizeof(buf)) < 0) {
				if (node > 0)
					break;
				continue;
			}
			if ((n = cpu_list_parse(buf, &v)) < 0)
				continue;
			int in = 0;
			for (int i = 0; i < n && !in; i++)
				in = v[i] == cpu;
			free(v);
			if (in) {
				snprintf(buf, sizeof(buf), "%d", node);
				return strdup(buf);
			}
		}
		return strdup("0");      /* no NUMA information: one node */
	}
	static const char *const core[] = { "core_cpus_list", "thread_siblings_list" };
	static const char *const pkg[] = { "package_cpus_list", "core_siblings_list" };
	const char *const *f = !strcmp(spec, "core") ? core : pkg;
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/%s", cpu, f[i]);
		if (read_text(path, buf, sizeof(buf)) == 0)
			return strdup(buf);
	}
	snprintf(buf, sizeof(buf), "cpu%d", cpu);   /* no topology: the CPU alone */
	return strdup(buf);
}

static int has(const int *v, int n, int x)
{
	for (int i = 0; i < n; i++)
		if (v[i] == x)
			return 1;
	return 0;
}

static struct worker *add_worker(struct rthreads *t)
{
	struct worker *v = realloc(t->w, (t->nr + 1) * sizeof(*v));
	if (!v)
		return NULL;
	t->w = v;
	memset(&v[t->nr], 0, sizeof(v[t->nr]));
	v[t->nr].t = t;
	return &v[t->nr++];
}

static int add_ring(struct worker *w, size_t ring, int cpu, int affinity)
{
	size_t *r = realloc(w->rings, (w->nr + 1) * sizeof(*r));
	if (!r)
		return -1;
	w->rings = r;
	w->rings[w->nr++] = ring;
	if (affinity && !has(w->cpus, w->nr_cpus, cpu)) {
		int *c = realloc(w->cpus, (size_t)(w->nr_cpus + 1) * sizeof(*c));
		if (!c)
			return -1;
		w->cpus = c;
		w->cpus[w->nr_cpus++] = cpu;
	}
	return 0;
}

/* perf's user masks: "CPUS[/AFFINITY]" separated by ':'. */
static int plan_user(struct rthreads *t, const char *spec, struct rec_err *e)
{
	char *s = strdup(spec), *save = NULL;
	int rc = 0;
	if (!s)
		return rec_fail(e, ENOMEM, "out of memory");
	int *owner = malloc((t->nr_rings ? t->nr_rings : 1) * sizeof(int));
	if (!owner) {
		free(s);
		return rec_fail(e, ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < t->nr_rings; i++)
		owner[i] = -1;
	for (char *m = strtok_r(s, ":", &save); m && !rc; m = strtok_r(NULL, ":", &save)) {
		char *slash = strchr(m, '/');
		int *maps = NULL, *aff = NULL, nm, na = 0;
		if (slash)
			*slash = 0;
		nm = cpu_list_parse(m, &maps);
		if (slash)
			na = cpu_list_parse(slash + 1, &aff);
		if (nm <= 0 || na < 0 || (slash && na == 0)) {
			rc = rec_fail(e, EINVAL, "--threads=%s: '%s%s%s' is not a CPU mask such as 0-3/0-3", spec, m,
				      slash ? "/" : "", slash ? slash + 1 : "");
		} else {
			struct worker *w = add_worker(t);
			if (!w)
				rc = rec_fail(e, ENOMEM, "out of memory");
			for (size_t i = 0; w && !rc && i < t->nr_rings; i++) {
				if (!has(maps, nm, t->rings[i]->cpu))
					continue;
				if (owner[i] >= 0) {
					rc = rec_fail(e, EINVAL, "--threads=%s: CPU %d is in two masks", spec,
						      t->rings[i]->cpu);
					break;
				}
				owner[i] = (int)(t->nr - 1);
				if (add_ring(w, i, t->rings[i]->cpu, !slash) < 0)
					rc = rec_fail(e, ENOMEM, "out of memory");
			}
			for (int i = 0; w && !rc && i < na; i++)
				if (!has(w->cpus, w->nr_cpus, aff[i])) {
					int *c = realloc(w->cpus, (size_t)(w->nr_cpus + 1) * sizeof(*c));
					if (!c) {
						rc = rec_fail(e, ENOMEM, "out of memory");
						break;
					}
					w->cpus = c;
					w->cpus[w->nr_cpus++] = aff[i];
				}
			if (w && !rc && !w->nr)
				rc = rec_fail(e, EINVAL, "--threads=%s: mask %s holds none of the recorded CPUs", spec, m);
		}
		free(maps);
		free(aff);
	}
	for (size_t i = 0; !rc && i < t->nr_rings; i++)
		if (owner[i] < 0)
			rc = rec_fail(e, EINVAL, "--threads=%s: recorded CPU %d is in no mask", spec, t->rings[i]->cpu);
	free(owner);
	free(s);
	return rc;
}

static int plan(struct rthreads *t, const char *spec, struct rec_err *e)
{
	if (!spec || !*spec || !strcmp(spec, "cpu")) {
		for (size_t i = 0; i < t->nr_rings; i++) {
			struct worker *w = add_worker(t);
			if (!w || add_ring(w, i, t->rings[i]->cpu, 1) < 0)
				return rec_fail(e, ENOMEM, "out of memory");
		}
		return 0;
	}
	if (strcmp(spec, "core") && strcmp(spec, "package") && strcmp(spec, "numa"))
		return plan_user(t, spec, e);
	char **keys = calloc(t->nr_rings ? t->nr_rings : 1, sizeof(*keys));   /* per worker */
	int rc = 0;
	if (!keys)
		return rec_fail(e, ENOMEM, "out of memory");
	for (size_t i = 0; i < t->nr_rings && !rc; i++) {
		char *k = group_key(spec, t->rings[i]->cpu);
		size_t g = 0;
		if (!k) {
			rc = rec_fail(e, ENOMEM, "out of memory");
			break;
		}
		while (g < t->nr && strcmp(keys[g], k))
			g++;
		if (g == t->nr) {
			if (!add_worker(t)) {
				free(k);
				rc = rec_fail(e, ENOMEM, "out of memory");
				break;
			}
			keys[g] = k;
		} else {
			free(k);
		}
		if (add_ring(&t->w[g], i, t->rings[i]->cpu, 1) < 0)
			rc = rec_fail(e, ENOMEM, "out of memory");
	}
	for (size_t g = 0; g < t->nr_rings; g++)
		free(keys[g]);
	free(keys);
	return rc;
}

int rthreads_open(struct rthreads **out, const char *spec, const char *dir, struct ring **rings, size_t n,
		  rthreads_note_fn note, void *ctx, struct rec_err *e)
{
	struct rthreads *t = calloc(1, sizeof(*t));

	*out = NULL;
	if (!t)
		return rec_fail(e, ENOMEM, "out of memory");
	t->rings = rings;
	t->nr_rings = n;
	t->note = note;
	t->ctx = ctx;
	pthread_mutex_init(&t->lock, NULL);
	for (size_t i = 0; i < n; i++)
		if (rings[i]->cpu < 0) {
			rthreads_free(t);
			return rec_fail(e, EINVAL, "--threads reads per-CPU rings: not with --per-thread");
		}
	if (!(t->f = calloc(n ? n : 1, sizeof(*t->f)))) {
		rthreads_free(t);
		return rec_fail(e, ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++)
		t->f[i].fd = -1;
	if (plan(t, spec, e) < 0) {
		rthreads_free(t);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		struct rfile *w = &t->f[i];
		size_t len = strlen(dir) + 32;
		w->t = t;
		if (!(w->path = malloc(len)) || !(w->buf = malloc(WBUF))) {
			rthreads_free(t);
			return rec_fail(e, ENOMEM, "out of memory");
		}
		snprintf(w->path, len, "%s/data.%zu", dir, i);
		if ((w->fd = open(w->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0) {
			rec_fail(e, errno, "%s: cannot create: %s", w->path, strerror(errno));
			rthreads_free(t);
			return -1;
		}
	}
	*out = t;
	return 0;
}

int rthreads_start(struct rthreads *t, struct rec_err *e)
{
	for (size_t i = 0; i < t->nr; i++) {
		int err = pthread_create(&t->w[i].th, NULL, wmain, &t->w[i]);
		if (err)
			return rec_fail(e, err, "--threads: cannot start reader thread %zu: %s", i, strerror(err));
		t->w[i].started = 1;
	}
	return 0;
}

int rthreads_error(struct rthreads *t, struct rec_err *e)
{
	for (size_t i = 0; i < t->nr_rings; i++) {
		int err = __atomic_load_n(&t->f[i].err, __ATOMIC_ACQUIRE);
		if (err)
			return rec_fail(e, err, "%s: write failed: %s", t->f[i].path, strerror(err));
	}
	return 0;
}

static void join_all(struct rthreads *t)
{
	__atomic_store_n(&t->stop, 1, __ATOMIC_RELEASE);
	for (size_t i = 0; i < t->nr; i++)
		if (t->w[i].started) {
			pthread_join(t->w[i].th, NULL);
			t->w[i].started = 0;
		}
}

int rthreads_stop(struct rthreads *t, struct rec_err *e)
{
	join_all(t);
	for (size_t i = 0; i < t->nr; i++)
		wdrain(&t->w[i]);
	for (size_t i = 0; i < t->nr_rings; i++) {
		struct rfile *f = &t->f[i];
		if (f->fd >= 0 && close(f->fd) < 0 && !f->err)
			f->err = errno;
		f->fd = -1;
	}
	return rthreads_error(t, e);
}

size_t rthreads_count(const struct rthreads *t) { return t->nr; }

uint64_t rthreads_bytes(const struct rthreads *t)
{
	uint64_t b = 0;
	for (size_t i = 0; t->f && i < t->nr_rings; i++)
		b += t->f[i].bytes;
	return b;
}

void rthreads_free(struct rthreads *t)
{
	if (!t)
		return;
	join_all(t);
	for (size_t i = 0; i < t->nr; i++) {
		free(t->w[i].rings);
		free(t->w[i].cpus);
	}
	for (size_t i = 0; t->f && i < t->nr_rings; i++) {
		if (t->f[i].fd >= 0)
			close(t->f[i].fd);
		free(t->f[i].path);
		free(t->f[i].buf);
	}
	free(t->f);
	free(t->w);
	pthread_mutex_destroy(&t->lock);
	free(t);
}
