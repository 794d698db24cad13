/*
 * synth.c - records that describe the world as it was when the recording
 * started, as perf record synthesizes them: COMM / FORK / MMAP2 for the
 * processes in scope (from /proc), the kernel and module maps, the thread
 * and CPU maps, the sample id index and the time conversion.
 *
 * Workload: once at start-up; system-wide recordings walk every process in
 * /proc (hundreds to tens of thousands). A process that exits while it is
 * read is skipped, as perf does. Never prints.
 */
#include "config.h"
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "synth.h"

#define REC_MAX 65528   /* header.size is a u16; keep 8-aligned */

struct recbuf { uint8_t b[REC_MAX]; size_t len; };

static void rb_start(struct recbuf *r, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { .type = type, .misc = misc, .size = 0 };
	memcpy(r->b, &h, sizeof(h));
	r->len = sizeof(h);
}

static void rb_u32(struct recbuf *r, uint32_t v) { memcpy(r->b + r->len, &v, 4); r->len += 4; }
static void rb_u64(struct recbuf *r, uint64_t v) { memcpy(r->b + r->len, &v, 8); r->len += 8; }

/* NUL-terminated string padded to 8 (perf's PERF_ALIGN(len + 1, sizeof(u64))). */
static void rb_str(struct recbuf *r, const char *s, size_t max)
{
	size_t n = strnlen(s, max);
	size_t padded = (n + 1 + 7) & ~(size_t)7;
	memset(r->b + r->len, 0, padded);
	memcpy(r->b + r->len, s, n);
	r->len += padded;
}

static int rb_emit(const struct synth *s, struct recbuf *r)
{
	memset(r->b + r->len, 0, s->trailer);
	r->len += s->trailer;
	uint16_t size = (uint16_t)r->len;
	memcpy(r->b + 6, &size, 2);
	return s->write(s->ctx, r->b);
}

/* MMAP misc KERNEL, pid -1 (perf's HOST_KERNEL_ID). */
static int kernel_map(const struct synth *s, const char *name, uint64_t start, uint64_t len, uint64_t pgoff)
{
	struct recbuf r;

	rb_start(&r, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL);
	rb_u32(&r, (uint32_t)-1);
	rb_u32(&r, 0);
	rb_u64(&r, start);
	rb_u64(&r, len);
	rb_u64(&r, pgoff);
	rb_str(&r, name, 4096);
	return rb_emit(s, &r);
}

int synth__kernel_mmap(const struct synth *s)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[512];
	uint64_t text = 0;

	if (f) {
		while (fgets(line, sizeof(line), f)) {
			char type, name[256];
			unsigned long long a;
			if (sscanf(line, "%llx %c %255s", &a, &type, name) == 3 && !strcmp(name, "_text")) {
				text = a;
				break;
			}
		}
		fclose(f);
	}
	/* perf: start = _text, len = to the end of the address space, pgoff = _text (ref_reloc_sym) */
	return kernel_map(s, "[kernel.kallsyms]_text", text, ~0ULL - text, text);
}

int synth__modules(const struct synth *s)
{
	FILE *f = fopen("/proc/modules", "re");
	char line[1024];
	int rc = 0;

	if (!f)
		return 0;   /* no modules (or none loadable): nothing to describe */
	while (!rc && fgets(line, sizeof(line), f)) {
		char name[256], bracketed[260];
		unsigned long long size, addr;
		/* name size refcnt deps state addr */
		if (sscanf(line, "%255s %llu %*s %*s %*s %llx", name, &size, &addr) != 3 || !addr)
			continue;
		snprintf(bracketed, sizeof(bracketed), "[%s]", name);
		rc = kernel_map(s, bracketed, addr, size, 0);
	}
	fclose(f);
	return rc;
}

struct proc_status { char name[256]; int tgid, ppid; };

static int read_status(int pid, int tid, struct proc_status *st)
{
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	memset(st, 0, sizeof(*st));
	st->tgid = pid;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Name:", 5)) {
			char *p = line + 5;
			while (*p == ' ' || *p == '\t')
				p++;
			p[strcspn(p, "\n")] = 0;
			snprintf(st->name, sizeof(st->name), "%s", p);
		} else if (!strncmp(line, "Tgid:", 5)) {
			st->tgid = atoi(line + 5);
		} else if (!strncmp(line, "PPid:", 5)) {
			st->ppid = atoi(line + 5);
		}
	}
	fclose(f);
	return 0;
}

/*
 * NAMESPACES, as perf_event__synthesize_namespaces: the device and inode of
 * each /proc/PID/task/TID/ns link in the kernel's order (net, uts, ipc, pid,
 * user, mnt, cgroup); a namespace the kernel lacks stays zero.
 */
static int synth_namespaces(const struct synth *s, int pid, int tid)
{
	static const char *const ns[] = { "net", "uts", "ipc", "pid", "user", "mnt", "cgroup" };
	struct recbuf r;

	rb_start(&r, PERF_RECORD_NAMESPACES, 0);
	rb_u32(&r, (uint32_t)pid);
	rb_u32(&r, (uint32_t)tid);
	rb_u64(&r, sizeof(ns) / sizeof(ns[0]));
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		char path[96];
		struct stat st;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/ns/%s", pid, tid, ns[i]);
		if (stat(path, &st) < 0)
			memset(&st, 0, sizeof(st));
		rb_u64(&r, (uint64_t)st.st_dev);
		rb_u64(&r, (uint64_t)st.st_ino);
	}
	return rb_emit(s, &r);
}

static int synth_comm_fork(const struct synth *s, int pid, int tid)
{
	struct proc_status st;
	struct recbuf r;
	int rc;

	if (read_status(pid, tid, &st) < 0)
		return 0;   /* exited meanwhile */
	/* perf_event__synthesize_fork: the main thread forks from its parent, others from the main thread */
	rb_start(&r, PERF_RECORD_FORK, 0);
	rb_u32(&r, (uint32_t)st.tgid);
	rb_u32(&r, (uint32_t)(tid == st.tgid ? st.ppid : st.tgid));
	rb_u32(&r, (uint32_t)tid);
	rb_u32(&r, (uint32_t)(tid == st.tgid ? st.ppid : st.tgid));
	rb_u64(&r, 0);
	rc = rb_emit(s, &r);
	if (!rc && s->namespaces)   /* perf: FORK, NAMESPACES, COMM */
		rc = synth_namespaces(s, st.tgid, tid);
	if (rc)
		return rc;
	rb_start(&r, PERF_RECORD_COMM, 0);
	rb_u32(&r, (uint32_t)st.tgid);
	rb_u32(&r, (uint32_t)tid);
	rb_str(&r, st.name, 16);
	return rb_emit(s, &r);
}

/* MMAP2 for every executable mapping in /proc/pid/maps. */
static int synth_maps(const struct synth *s, int pid)
{
	char path[64], line[4200];
	FILE *f;
	int rc = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (!rc && fgets(line, sizeof(line), f)) {
		unsigned long long start, end, pgoff, ino;
		unsigned maj, min;
		char perms[8];
		int name_at = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &pgoff, &maj, &min,
			   &ino, &name_at) < 7 || perms[2] != 'x')
			continue;
		char *name = line + name_at;
		name[strcspn(name, "\n")] = 0;
		if (!*name)
			name = "//anon";   /* perf's name for anonymous executable memory */
		uint32_t prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) | PROT_EXEC;
		uint32_t flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
		struct recbuf r;
		rb_start(&r, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
		rb_u32(&r, (uint32_t)pid);
		rb_u32(&r, (uint32_t)pid);
		rb_u64(&r, start);
		rb_u64(&r, end - start);
		rb_u64(&r, pgoff);
		rb_u32(&r, maj);
		rb_u32(&r, min);
		rb_u64(&r, ino);
		rb_u64(&r, 0);          /* ino_generation */
		rb_u32(&r, prot);
		rb_u32(&r, flags);
		rb_str(&r, name, 4096);
		rc = rb_emit(s, &r);
	}
	fclose(f);
	return rc;
}

static int is_number(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

int synth__process(const struct synth *s, int pid)
{
	char path[64];
	DIR *d;
	struct dirent *de;
	int rc = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return 0;   /* gone */
	while (!rc && (de = readdir(d)))
		if (is_number(de->d_name))
			rc = synth_comm_fork(s, pid, atoi(de->d_name));
	closedir(d);
	return rc ? rc : synth_maps(s, pid);
}

/*
 * The command rbrecord forked, waiting to exec: a COMM alone, as perf record
 * synthesizes its workload (perf-exec). Its maps are rbrecord's until the
 * exec replaces them, and the kernel's records (enable_on_exec) start there:
 * recorded, they would only add objects that never ran (their build-ids
 * included) and stale maps that perf's unwinder reads for the new image.
 */
int synth__workload(const struct synth *s, int pid)
{
	struct proc_status st;
	struct recbuf r;
	if (read_status(pid, pid, &st) < 0)
		return 0;
	rb_start(&r, PERF_RECORD_COMM, 0);
	rb_u32(&r, (uint32_t)st.tgid);
	rb_u32(&r, (uint32_t)pid);
	rb_str(&r, st.name, 16);
	int rc = rb_emit(s, &r);
	/* perf's workload: COMM, then NAMESPACES */
	return !rc && s->namespaces ? synth_namespaces(s, st.tgid, pid) : rc;
}

/* A cgroup's id: the 64-bit handle of its directory (perf's get_cgroup_id). 0 if none. */
static uint64_t cgroup_id(const char *path)
{
	union { struct file_handle fh; uint64_t align[4]; } h;
	uint64_t id;
	int mount_id;

	h.fh.handle_bytes = sizeof(id);
	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0) < 0 || h.fh.handle_bytes != sizeof(id))
		return 0;
	memcpy(&id, h.fh.f_handle, sizeof(id));
	return id;
}

/* One CGROUP record for @dir (its path under the mount @rel) and each directory below it. */
static int cgroup_walk(const struct synth *s, char *dir, size_t mnt_len, int depth)
{
	struct recbuf r;
	DIR *d;
	struct dirent *de;
	int rc;
	uint64_t id = cgroup_id(dir);

	if (id) {
		rb_start(&r, PERF_RECORD_CGROUP, 0);
		rb_u64(&r, id);
		rb_str(&r, dir[mnt_len] ? dir + mnt_len : "/", 4096);
		if ((rc = rb_emit(s, &r)))
			return rc;
	}
	if (depth > 64 || !(d = opendir(dir)))
		return 0;
	size_t len = strlen(dir);
	rc = 0;
	while (!rc && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.' || len + 1 + strlen(de->d_name) >= 4096)
			continue;
		snprintf(dir + len, 4096 - len, "/%s", de->d_name);
		rc = cgroup_walk(s, dir, mnt_len, depth + 1);
		dir[len] = 0;
	}
	closedir(d);
	return rc;
}

int synth__cgroups(const struct synth *s, const char *mnt)
{
	char dir[4096];

	snprintf(dir, sizeof(dir), "%s", mnt);
	return cgroup_walk(s, dir, strlen(dir), 0);
}

int synth__all_processes(const struct synth *s)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int rc = 0;

	if (!d)
		return 0;
	while (!rc && (de = readdir(d)))
		if (is_number(de->d_name))
			rc = synth__process(s, atoi(de->d_name));
	closedir(d);
	return rc;
}

/* Records below are user records: no sample_id trailer. */
static int emit_plain(const struct synth *s, struct recbuf *r)
{
	uint16_t size = (uint16_t)r->len;
	memcpy(r->b + 6, &size, 2);
	return s->write(s->ctx, r->b);
}

int synth__thread_map(const struct synth *s, const int *tids, size_t n)
{
	struct recbuf r;
	size_t max = (REC_MAX - 16) / 24;

	if (n > max)
		n = max;   /* perf's record has the same u16 bound */
	rb_start(&r, PD_RECORD_THREAD_MAP, 0);
	rb_u64(&r, n);
	for (size_t i = 0; i < n; i++) {
		char comm[16] = "", path[64];
		rb_u64(&r, (uint64_t)(int64_t)tids[i]);
		if (tids[i] >= 0) {
			snprintf(path, sizeof(path), "/proc/%d/comm", tids[i]);
			read_text(path, comm, sizeof(comm));
		}
		memcpy(r.b + r.len, comm, 16);
		r.len += 16;
	}
	return emit_plain(s, &r);
}

int synth__cpu_map(const struct synth *s, const int *cpus, size_t n)
{
	struct recbuf r;

	if (n > 30000)
		n = 30000;
	rb_start(&r, PD_RECORD_CPU_MAP, 0);
	uint16_t v[2] = { 0 /* PERF_CPU_MAP__CPUS */, (uint16_t)n };
	memcpy(r.b + r.len, v, 4);
	r.len += 4;
	for (size_t i = 0; i < n; i++) {
		uint16_t c = (uint16_t)cpus[i];   /* -1 (any CPU) becomes 0xffff, as perf writes it */
		memcpy(r.b + r.len, &c, 2);
		r.len += 2;
	}
	while (r.len % 8)
		r.b[r.len++] = 0;
	return emit_plain(s, &r);
}

int synth__id_index(const struct synth *s, const struct id_index_entry *v, size_t n)
{
	size_t per = (REC_MAX - 16) / sizeof(*v);
	int rc = 0;

	/* split like perf when the index does not fit one record */
	for (size_t at = 0; at < n && !rc; at += per) {
		size_t k = n - at < per ? n - at : per;
		struct recbuf r;
		rb_start(&r, PD_RECORD_ID_INDEX, 0);
		rb_u64(&r, k);
		memcpy(r.b + r.len, v + at, k * sizeof(*v));
		r.len += k * sizeof(*v);
		rc = emit_plain(s, &r);
	}
	return rc;
}

void synth__read_time(const struct perf_event_mmap_page *pc, struct time_conv *t)
{
	uint32_t seq;

	memset(t, 0, sizeof(*t));
	/* the control page is updated under pc->lock (a seqcount): retry until stable */
	do {
		seq = __atomic_load_n(&pc->lock, __ATOMIC_ACQUIRE);
		t->cap_zero = pc->cap_user_time_zero;
		t->cap_short = pc->cap_user_time_short;
		t->shift = pc->time_shift;
		t->mult = pc->time_mult;
		t->zero = pc->time_zero;
		if (t->cap_short) {
			t->cycles = pc->time_cycles;
			t->mask = pc->time_mask;
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (__atomic_load_n(&pc->lock, __ATOMIC_RELAXED) != seq || (seq & 1));
}

int synth__time_conv(const struct synth *s, const struct perf_event_mmap_page *pc)
{
	struct recbuf r;
	struct time_conv t;

	synth__read_time(pc, &t);
	if (!t.cap_zero)
		return 0;
	rb_start(&r, PD_RECORD_TIME_CONV, 0);
	rb_u64(&r, t.shift);
	rb_u64(&r, t.mult);
	rb_u64(&r, t.zero);
	rb_u64(&r, t.cycles);
	rb_u64(&r, t.mask);
	uint8_t caps[8] = { (uint8_t)t.cap_zero, (uint8_t)t.cap_short };
	memcpy(r.b + r.len, caps, 8);
	r.len += 8;
	return emit_plain(s, &r);
}

int synth__finished(const struct synth *s, uint32_t type)
{
	struct perf_event_header h = { .type = type, .misc = 0, .size = sizeof(h) };
	return s->write(s->ctx, &h);
}
