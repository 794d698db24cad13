/*
 * ftrace.c - see ftrace.h. Stage: beside the perf rings, for the whole
 * recording. The instance is configured while its tracing_on is 0 (a new
 * instance starts with tracing on), so nothing before ftrace__start lands in
 * its buffer. One thread moves full pages: for each CPU, splice from
 * trace_pipe_raw (non-blocking) into a pipe and from the pipe into the CPU's
 * file, then poll() the CPUs (woken when a CPU's buffer is 10% full, the
 * instance's buffer_percent, or after 100 ms: an early wake leaves room for
 * bursts; at ~1.5 M events/s with 1 MB per CPU it lost 0.5-0.7% of the events
 * against 0.6-3% at the kernel's default of 50). splice only hands over full pages; at the end the last,
 * partly filled page of each CPU is read() (the kernel copies it out with
 * its commit size), as trace-cmd does.
 *
 * Workload: tens of MB/s of pages at most; the thread is the only reader of
 * the per-CPU files while tracing is on. Never prints.
 */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <poll.h>
#include <signal.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "ftrace.h"
#include "tdat_write.h"
#include "tracing.h"

#define PAGES_PER_SPLICE 16

struct ftrace_cpu {
	int cpu;
	int in;                      /* per_cpu/cpuN/trace_pipe_raw, O_NONBLOCK */
	int pipe[2];
	int out;                     /* the CPU's page file (OUT.cpuN) */
	char *path;
	uint64_t pages;
};

struct ftrace_rec {
	struct ftrace_opts o;
	char dir[512];               /* the instance */
	int made_dir;
	uint32_t page_size;
	char **tps;                  /* enabled tracepoints, "sys:name" */
	size_t nr_tps;
	char **ftrace_fmts;          /* names under events/ftrace */
	size_t nr_ftrace_fmts;
	const char *tracer;          /* "function", "function_graph" or NULL */
	struct ftrace_cpu *cpus;
	int nr_cpus;                 /* highest present CPU + 1 */
	pthread_t thread;
	int running, stop;           /* stop: written by the caller, read by the thread (atomics) */
	int thread_err;              /* errno of the thread's failure, 0 if none */
	char thread_msg[256];
};

/* The recording whose instance to remove if the program exits without ftrace__stop / __free. */
static struct ftrace_rec *exit_rec;
static int exit_registered;
static void remove_instance(struct ftrace_rec *f);

static void remove_instance_at_exit(void)
{
	struct ftrace_rec *f = exit_rec;
	if (!f)
		return;
	if (f->running) {
		__atomic_store_n(&f->stop, 1, __ATOMIC_RELEASE);
		pthread_join(f->thread, NULL);
		f->running = 0;
	}
	remove_instance(f);
}

/* Instances left by an rbrecord that was killed (SIGKILL): their process is gone. */
static void remove_stale_instances(const char *tfs)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/instances", tfs);
	DIR *d = opendir(path);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		char *end;
		if (strncmp(de->d_name, "rbrecord-", 9))
			continue;
		long pid = strtol(de->d_name + 9, &end, 10);
		if (*end || pid <= 0 || pid == getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), "%s/instances/%s", tfs, de->d_name);
		rmdir(path);
	}
	if (d)
		closedir(d);
}

static int put(struct ftrace_rec *f, const char *file, const char *val, struct rec_err *e)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", f->dir, file);
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return rec_fail(e, errno, "cannot open %s: %s", path, strerror(errno));
	ssize_t n = write(fd, val, strlen(val));
	int err = errno;
	close(fd);
	if (n != (ssize_t)strlen(val))
		return rec_fail(e, n < 0 ? err : EIO, "cannot write '%s' to %s: %s", val, path,
				strerror(n < 0 ? err : EIO));
	return 0;
}

/* The instance has @file (older kernels lack some, e.g. buffer_percent before 5.1). */
static int access_ok(struct ftrace_rec *f, const char *file)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", f->dir, file);
	return access(path, W_OK) == 0;
}

static int push_str(char ***v, size_t *n, const char *s)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*v)[i], s))
			return 0;
	char **nv = realloc(*v, (*n + 1) * sizeof(**v));
	if (!nv)
		return -1;
	*v = nv;
	if (!(nv[*n] = strdup(s)))
		return -1;
	(*n)++;
	return 0;
}

static void free_strs(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int ftrace__add_events(struct ftrace_opts *o, const char *list, struct rec_err *e)
{
	char *copy = strdup(list), *save = NULL;
	if (!copy)
		return rec_fail(e, ENOMEM, "out of memory");
	int rc = 0;
	for (char *t = strtok_r(copy, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
		if (!*t || strchr(t, '/') || strspn(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
						   "0123456789_:*?[]-") != strlen(t))
			rc = rec_fail(e, EINVAL, "--ftrace %s: expected sys:event, sys:*, sys, function or "
				      "function_graph", t);
		else if (push_str(&o->events, &o->nr_events, t) < 0)
			rc = rec_fail(e, ENOMEM, "out of memory");
	}
	free(copy);
	return rc;
}

char *ftrace__output_name(const char *perf_output)
{
	size_t n = strlen(perf_output) + sizeof(".trace.dat");
	char *s = malloc(n);
	if (s)
		snprintf(s, n, "%s.trace.dat", perf_output);
	return s;
}

void ftrace__opts_free(struct ftrace_opts *o)
{
	free_strs(o->events, o->nr_events);
	o->events = NULL;
	o->nr_events = 0;
}

static int is_dir(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* Enable every tracepoint of systems matching @sys_pat whose name matches @ev_pat. Count or -1. */
static int enable_matching(struct ftrace_rec *f, const char *sys_pat, const char *ev_pat, struct rec_err *e)
{
	char path[2048];
	int count = 0;
	snprintf(path, sizeof(path), "%s/events", f->dir);
	DIR *ds = opendir(path);
	if (!ds)
		return rec_fail(e, errno, "cannot list %s: %s", path, strerror(errno));
	struct dirent *sd;
	while ((sd = readdir(ds)) && count >= 0) {
		if (sd->d_name[0] == '.' || !strcmp(sd->d_name, "ftrace") || fnmatch(sys_pat, sd->d_name, 0))
			continue;
		snprintf(path, sizeof(path), "%s/events/%s", f->dir, sd->d_name);
		DIR *de = is_dir(path) ? opendir(path) : NULL;
		struct dirent *ed;
		while (de && (ed = readdir(de))) {
			char ev[600], file[600];
			if (ed->d_name[0] == '.' || fnmatch(ev_pat, ed->d_name, 0))
				continue;
			snprintf(path, sizeof(path), "%s/events/%s/%s/format", f->dir, sd->d_name, ed->d_name);
			if (access(path, R_OK) < 0)
				continue;
			snprintf(file, sizeof(file), "events/%s/%s/enable", sd->d_name, ed->d_name);
			snprintf(ev, sizeof(ev), "%s:%s", sd->d_name, ed->d_name);
			if (put(f, file, "1", e) < 0) {
				count = -1;
				break;
			}
			if (push_str(&f->tps, &f->nr_tps, ev) < 0) {
				count = rec_fail(e, ENOMEM, "out of memory");
				break;
			}
			count++;
		}
		if (de)
			closedir(de);
	}
	closedir(ds);
	return count;
}

static int set_tracer(struct ftrace_rec *f, const char *tracer, struct rec_err *e)
{
	char path[1024], avail[4096];
	if (f->tracer && strcmp(f->tracer, tracer))
		return rec_fail(e, EINVAL, "--ftrace: one tracer at a time (%s and %s)", f->tracer, tracer);
	snprintf(path, sizeof(path), "%s/available_tracers", f->dir);
	if (read_text(path, avail, sizeof(avail)) < 0)
		return rec_fail(e, errno, "cannot read %s: %s", path, strerror(errno));
	int found = 0;
	char *save = NULL;
	for (char *t = strtok_r(avail, " \t", &save); t; t = strtok_r(NULL, " \t", &save))
		found |= !strcmp(t, tracer);
	if (!found)
		return rec_fail(e, ENOENT, "--ftrace %s: this kernel's tracer list (%s) does not have it", tracer, path);
	if (f->o.func_filter && put(f, "set_ftrace_filter", f->o.func_filter, e) < 0)
		return -1;
	if (f->o.func_notrace && put(f, "set_ftrace_notrace", f->o.func_notrace, e) < 0)
		return -1;
	if (put(f, "current_tracer", tracer, e) < 0)
		return -1;
	f->tracer = tracer;
	return 0;
}

static int setup_events(struct ftrace_rec *f, struct rec_err *e)
{
	for (size_t i = 0; i < f->o.nr_events; i++) {
		const char *spec = f->o.events[i];
		if (!strcmp(spec, "function") || !strcmp(spec, "function_graph")) {
			if (set_tracer(f, !strcmp(spec, "function") ? "function" : "function_graph", e) < 0)
				return -1;
			continue;
		}
		char sys[256], ev[256];
		const char *colon = strchr(spec, ':');
		snprintf(sys, sizeof(sys), "%.*s", colon ? (int)(colon - spec) : (int)strlen(spec), spec);
		snprintf(ev, sizeof(ev), "%s", colon && colon[1] ? colon + 1 : "*");
		int n = enable_matching(f, sys, ev, e);
		if (n < 0)
			return -1;
		if (n == 0)
			return rec_fail(e, ENOENT, "--ftrace %s: no such tracepoint under %s/events", spec, f->dir);
	}
	return 0;
}

/* The ftrace system's own formats (function, funcgraph_entry, print, ...): trace-cmd keeps them all. */
static int list_ftrace_formats(struct ftrace_rec *f, struct rec_err *e)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/events/ftrace", tracefs_dir());
	DIR *d = opendir(path);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		char fmt[1400];
		snprintf(fmt, sizeof(fmt), "%s/%s/format", path, de->d_name);
		if (de->d_name[0] != '.' && access(fmt, R_OK) == 0 &&
		    push_str(&f->ftrace_fmts, &f->nr_ftrace_fmts, de->d_name) < 0) {
			closedir(d);
			return rec_fail(e, ENOMEM, "out of memory");
		}
	}
	if (d)
		closedir(d);
	return 0;
}

static int open_cpus(struct ftrace_rec *f, struct rec_err *e)
{
	f->nr_cpus = cpus_avail();
	if (f->nr_cpus <= 0)
		return rec_fail(e, ENOENT, "cannot tell how many CPUs there are");
	f->cpus = calloc((size_t)f->nr_cpus, sizeof(*f->cpus));
	if (!f->cpus)
		return rec_fail(e, ENOMEM, "out of memory");
	for (int c = 0; c < f->nr_cpus; c++) {
		struct ftrace_cpu *fc = &f->cpus[c];
		char path[1024];
		fc->cpu = c;
		fc->in = fc->out = fc->pipe[0] = fc->pipe[1] = -1;
		snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/trace_pipe_raw", f->dir, c);
		fc->in = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fc->in < 0) {
			if (errno == ENOENT)
				continue;   /* not a possible CPU */
			return rec_fail(e, errno, "cannot open %s: %s", path, strerror(errno));
		}
		if (pipe2(fc->pipe, O_CLOEXEC) < 0)
			return rec_fail(e, errno, "CPU %d: pipe: %s", c, strerror(errno));
		fcntl(fc->pipe[1], F_SETPIPE_SZ, (int)(f->page_size * PAGES_PER_SPLICE));
		size_t n = strlen(f->o.output) + 32;
		if (!(fc->path = malloc(n)))
			return rec_fail(e, ENOMEM, "out of memory");
		snprintf(fc->path, n, "%s.cpu%d", f->o.output, c);
		fc->out = open(fc->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fc->out < 0)
			return rec_fail(e, errno, "cannot create %s: %s", fc->path, strerror(errno));
	}
	return 0;
}

int ftrace__open(struct ftrace_rec **out, const struct ftrace_opts *o, struct rec_err *e)
{
	const char *tfs = tracefs_dir();
	*out = NULL;
	if (!o->nr_events)
		return rec_fail(e, EINVAL, "--ftrace: no events");
	if (!tfs)
		return rec_fail(e, ENOENT, "--ftrace needs tracefs: mount it (mount -t tracefs nodev /sys/kernel/tracing)");
	struct ftrace_rec *f = calloc(1, sizeof(*f));
	if (!f)
		return rec_fail(e, ENOMEM, "out of memory");
	f->o = *o;
	remove_stale_instances(tfs);
	snprintf(f->dir, sizeof(f->dir), "%s/instances/rbrecord-%d", tfs, (int)getpid());
	if (mkdir(f->dir, 0750) < 0 && (errno != EEXIST || rmdir(f->dir) < 0 || mkdir(f->dir, 0750) < 0)) {
		rec_fail(e, errno, "cannot create the tracefs instance %s: %s", f->dir, strerror(errno));
		free(f);
		return -1;
	}
	f->made_dir = 1;
	if (!exit_registered)
		atexit(remove_instance_at_exit);
	exit_registered = 1;
	exit_rec = f;
	*out = f;

	char path[1024], val[64];
	f->page_size = (uint32_t)sysconf(_SC_PAGESIZE);
	snprintf(path, sizeof(path), "%s/buffer_subbuf_size_kb", f->dir);
	if (read_text(path, val, sizeof(val)) == 0 && atoi(val) > 0)
		f->page_size = (uint32_t)atoi(val) * 1024;   /* kernels with sub-buffer sizes (6.8+) */
	if (put(f, "tracing_on", "0", e) < 0 || put(f, "trace_clock", "perf", e) < 0 ||
	    (access_ok(f, "buffer_percent") && put(f, "buffer_percent", "10", e) < 0))
		return -1;
	if (o->buffer_kb) {
		snprintf(val, sizeof(val), "%u", o->buffer_kb);
		if (put(f, "buffer_size_kb", val, e) < 0)
			return -1;
	}
	if (setup_events(f, e) < 0 || list_ftrace_formats(f, e) < 0 || open_cpus(f, e) < 0)
		return -1;
	return 0;
}

/* Move every full page of @fc into its file. 0, or -1 with the thread's error set. */
static int drain_cpu(struct ftrace_rec *f, struct ftrace_cpu *fc)
{
	for (;;) {
		ssize_t n = splice(fc->in, NULL, fc->pipe[1], NULL, (size_t)f->page_size * PAGES_PER_SPLICE,
				   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;     /* no full page yet */
		if (n <= 0) {
			if (n < 0) {
				f->thread_err = errno;
				snprintf(f->thread_msg, sizeof(f->thread_msg), "CPU %d: splice from trace_pipe_raw: %s",
					 fc->cpu, strerror(errno));
				return -1;
			}
			return 0;
		}
		fc->pages += (uint64_t)n / f->page_size;
		while (n > 0) {
			ssize_t m = splice(fc->pipe[0], NULL, fc->out, NULL, (size_t)n, SPLICE_F_MOVE);
			if (m < 0 && errno == EINTR)
				continue;
			if (m <= 0) {
				f->thread_err = m < 0 ? errno : EIO;
				snprintf(f->thread_msg, sizeof(f->thread_msg), "CPU %d: writing %s: %s", fc->cpu,
					 fc->path, strerror(f->thread_err));
				return -1;
			}
			n -= m;
		}
	}
}

static void *drain_main(void *arg)
{
	struct ftrace_rec *f = arg;
	struct pollfd *pf = calloc((size_t)f->nr_cpus, sizeof(*pf));
	int np = 0;
	for (int c = 0; pf && c < f->nr_cpus; c++)
		if (f->cpus[c].in >= 0)
			pf[np++] = (struct pollfd){ .fd = f->cpus[c].in, .events = POLLIN };
	while (!__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE)) {
		for (int c = 0; c < f->nr_cpus; c++)
			if (f->cpus[c].in >= 0 && drain_cpu(f, &f->cpus[c]) < 0)
				goto out;
		if (pf)
			poll(pf, (nfds_t)np, 100);
		else
			usleep(100000);
	}
out:
	free(pf);
	return NULL;
}

int ftrace__start(struct ftrace_rec *f, struct rec_err *e)
{
	if (put(f, "tracing_on", "1", e) < 0)
		return -1;
	if (pthread_create(&f->thread, NULL, drain_main, f) != 0) {
		put(f, "tracing_on", "0", e);
		return rec_fail(e, EAGAIN, "cannot start the ftrace drain thread");
	}
	f->running = 1;
	return 0;
}

/* The last, partly filled page of a CPU: read() hands it out with its commit size. */
static int flush_cpu(struct ftrace_rec *f, struct ftrace_cpu *fc, struct rec_err *e)
{
	char *page = malloc(f->page_size);
	if (!page)
		return rec_fail(e, ENOMEM, "out of memory");
	int rc = 0;
	for (;;) {
		memset(page, 0, f->page_size);
		ssize_t n = read(fc->in, page, f->page_size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		errno = 0;
		if (tdat_write_all(fc->out, page, f->page_size) < 0) {    /* a short write goes on where it stopped */
			rc = rec_fail(e, errno ? errno : EIO, "CPU %d: writing %s: %s", fc->cpu, fc->path,
				      strerror(errno ? errno : EIO));
			break;
		}
		fc->pages++;
	}
	free(page);
	return rc;
}

static uint64_t stat_value(const char *stats, const char *key)
{
	const char *p = strstr(stats, key);
	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

static int build_options(struct ftrace_rec *f, struct pd_buf *ob, struct ftrace_stats *st, struct rec_err *e)
{
	char path[1024];
	for (int c = 0; c < f->nr_cpus; c++) {
		if (f->cpus[c].in < 0)
			continue;
		snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/stats", f->dir, c);
		char *s = read_all(path, NULL);
		if (!s)
			continue;
		char head[32];
		snprintf(head, sizeof(head), "CPU: %d\n", c);
		struct pd_buf one = { 0 };
		pd_buf_bytes(&one, head, strlen(head));
		pd_buf_bytes(&one, s, strlen(s) + 1);
		if (!one.oom)
			tracedat_option(ob, TDAT_OPT_CPUSTAT, one.data, (uint32_t)one.len);
		pd_buf_free(&one);
		st->overrun += stat_value(s, "overrun: ");
		st->dropped += stat_value(s, "dropped events: ");
		free(s);
	}
	char clock[512] = "";
	snprintf(path, sizeof(path), "%s/trace_clock", f->dir);
	if (read_text(path, clock, sizeof(clock)) == 0)
		tracedat_option_str(ob, TDAT_OPT_TRACECLOCK, clock);
	struct utsname u;
	if (uname(&u) == 0) {
		char s[4 * 65 + 4];
		snprintf(s, sizeof(s), "%s %s %s %s", u.sysname, u.release, u.version, u.machine);
		tracedat_option_str(ob, TDAT_OPT_UNAME, s);
	}
	tracedat_option_str(ob, TDAT_OPT_VERSION, "rbrecord " PACKAGE_VERSION);
	uint32_t n = (uint32_t)f->nr_cpus;
	tracedat_option(ob, TDAT_OPT_CPUCOUNT, &n, 4);
	return ob->oom ? rec_fail(e, ENOMEM, "out of memory") : 0;
}

static void close_cpus(struct ftrace_rec *f)
{
	for (int c = 0; f->cpus && c < f->nr_cpus; c++) {
		struct ftrace_cpu *fc = &f->cpus[c];
		int *fds[] = { &fc->in, &fc->out, &fc->pipe[0], &fc->pipe[1] };
		for (size_t i = 0; i < 4; i++)
			if (*fds[i] >= 0) {
				close(*fds[i]);
				*fds[i] = -1;
			}
	}
}

/* Tracer off, events off, files closed, instance removed (the kernel refuses while a file is open). */
static void remove_instance(struct ftrace_rec *f)
{
	if (!f->made_dir)
		return;
	struct rec_err ignore;
	put(f, "tracing_on", "0", &ignore);
	if (f->tracer)
		put(f, "current_tracer", "nop", &ignore);
	put(f, "events/enable", "0", &ignore);
	close_cpus(f);
	for (int i = 0; i < 50 && rmdir(f->dir) < 0 && errno == EBUSY; i++)
		usleep(20000);
	f->made_dir = 0;
}

int ftrace__stop(struct ftrace_rec *f, struct ftrace_stats *st, struct rec_err *e)
{
	memset(st, 0, sizeof(*st));
	struct rec_err ignore;
	put(f, "tracing_on", "0", &ignore);
	if (f->running) {
		__atomic_store_n(&f->stop, 1, __ATOMIC_RELEASE);
		pthread_join(f->thread, NULL);
		f->running = 0;
	}
	if (f->thread_err)
		return rec_fail(e, f->thread_err, "ftrace: %s", f->thread_msg);
	for (int c = 0; c < f->nr_cpus; c++)
		if (f->cpus[c].in >= 0 && (drain_cpu(f, &f->cpus[c]) < 0 || flush_cpu(f, &f->cpus[c], e) < 0))
			return f->thread_err ? rec_fail(e, f->thread_err, "ftrace: %s", f->thread_msg) : -1;
	struct pd_buf meta = { 0 }, opts = { 0 };
	struct tracing_meta m = { .version = "6", .page_size = f->page_size,
				  .ftrace = (const char *const *)f->ftrace_fmts, .nr_ftrace = f->nr_ftrace_fmts,
				  .kallsyms = 1, .printk = 1, .cmdlines = 1 };
	const char **files = calloc(f->nr_cpus > 0 ? (size_t)f->nr_cpus : 1, sizeof(*files));
	int rc = -1;
	if (!files) {
		rec_fail(e, ENOMEM, "out of memory");
		goto out;
	}
	for (int c = 0; c < f->nr_cpus; c++) {
		files[c] = f->cpus[c].path;
		st->pages += f->cpus[c].pages;
	}
	st->bytes = st->pages * f->page_size;
	st->nr_cpus = f->nr_cpus;
	if (build_options(f, &opts, st, e) < 0 ||
	    tracing_meta_build(&meta, (const char *const *)f->tps, f->nr_tps, &m, e) < 0)
		goto out;
	remove_instance(f);   /* before the copy: the kernel's buffers are freed sooner */
	rc = tracedat_write(f->o.output, &meta, &opts, f->page_size, f->nr_cpus, files, e);
out:
	free(files);
	pd_buf_free(&meta);
	pd_buf_free(&opts);
	return rc;
}

void ftrace__free(struct ftrace_rec *f)
{
	if (!f)
		return;
	if (f->running) {
		__atomic_store_n(&f->stop, 1, __ATOMIC_RELEASE);
		pthread_join(f->thread, NULL);
	}
	remove_instance(f);
	if (exit_rec == f)
		exit_rec = NULL;
	for (int c = 0; f->cpus && c < f->nr_cpus; c++) {
		if (f->cpus[c].path)
			unlink(f->cpus[c].path);
		free(f->cpus[c].path);
	}
	free(f->cpus);
	free_strs(f->tps, f->nr_tps);
	free_strs(f->ftrace_fmts, f->nr_ftrace_fmts);
	free(f);
}
