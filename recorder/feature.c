/*
 * feature.c - the header features of a recording, as perf record fills
 * them: host and kernel identity, CPU description and topology, memory,
 * the command line, PMU type numbers, groups, clock, sample time range,
 * and the build ids of the kernel and of the objects the recording mapped.
 *
 * Workload: once at start (static features) and once at the end (build
 * ids of the objects whose MMAP2 records the data holds, sample times).
 * Reads sysfs, procfs and ELF notes. Never prints.
 */
#include "config.h"
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <sys/auxv.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include "synth.h"
#include "elf/elf_note.h"

static int set_buf(struct pd_writer *w, unsigned feat, struct pd_buf *b, struct rec_err *e)
{
	struct pd_error pe;
	int rc;

	if (b->oom) {
		pd_buf_free(b);
		return rec_fail(e, ENOMEM, "out of memory building feature %s", pd_feature_name(feat));
	}
	rc = pd_writer_set_feature(w, feat, b->data, b->len, &pe);
	pd_buf_free(b);
	return rc < 0 ? rec_fail(e, EIO, "feature %s: %s", pd_feature_name(feat), pe.msg) : 0;
}

static int set_string(struct pd_writer *w, unsigned feat, const char *s, struct rec_err *e)
{
	struct pd_buf b = { 0 };
	pd_buf_string(&b, s);
	return set_buf(w, feat, &b, e);
}

/* Value of the first /proc/cpuinfo line whose key is exactly one of @keys, tried in order. */
static int cpuinfo_value(const char *const *keys, char *out, size_t len)
{
	char line[1024];

	for (const char *const *k = keys; *k; k++) {
		FILE *f = fopen("/proc/cpuinfo", "re");
		if (!f)
			return -1;
		while (fgets(line, sizeof(line), f)) {
			size_t kl = strlen(*k), sp = kl;
			if (strncmp(line, *k, kl))
				continue;
			while (line[sp] == ' ' || line[sp] == '\t')
				sp++;
			if (line[sp] != ':')
				continue;
			char *v = line + sp + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			v[strcspn(v, "\n")] = 0;
			snprintf(out, len, "%s", v);
			fclose(f);
			return 0;
		}
		fclose(f);
	}
	return -1;
}

/* perf's x86 get_cpuid(): "vendor,family,model,stepping". */
static int cpuid_string(char *out, size_t len)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;
	char vendor[13];

	if (!__get_cpuid(0, &a, &b, &c, &d))
		return -1;
	memcpy(vendor, &b, 4);
	memcpy(vendor + 4, &d, 4);
	memcpy(vendor + 8, &c, 4);
	vendor[12] = 0;
	if (!__get_cpuid(1, &a, &b, &c, &d))
		return -1;
	unsigned family = (a >> 8) & 0xf, model = (a >> 4) & 0xf, step = a & 0xf;
	if (family == 0xf)
		family += (a >> 20) & 0xff;
	if (family >= 0x6)
		model += ((a >> 16) & 0xf) << 4;
	snprintf(out, len, "%s,%u,%u,%u", vendor, family, model, step);
	return 0;
#else
	static const char *const keys[] = { "cpu", "CPU implementer", "processor", NULL };
	return cpuinfo_value(keys, out, len);
#endif
}

static uint64_t mem_total_kb(void)
{
	FILE *f = fopen("/proc/meminfo", "re");
	char line[256];
	unsigned long long kb = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static int set_cmdline(struct pd_writer *w, int argc, char **argv, struct rec_err *e)
{
	struct pd_buf b = { 0 };
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	exe[n > 0 ? n : 0] = 0;
	/* perf: the binary's path, then argv without argv[0] */
	pd_buf_u32(&b, (uint32_t)(argc > 0 ? argc : 1));
	pd_buf_string(&b, exe[0] ? exe : "rbrecord");
	for (int i = 1; i < argc; i++)
		pd_buf_string(&b, argv[i]);
	return set_buf(w, PD_FEAT_CMDLINE, &b, e);
}

/* Unique strings of a per-CPU sysfs topology file, in CPU order. */
static void topo_list(struct pd_buf *b, int nr, const char *file)
{
	char (*seen)[256] = calloc((size_t)nr + 1, 256);
	uint32_t n = 0;

	if (!seen) {
		b->oom = 1;
		return;
	}
	for (int cpu = 0; cpu < nr; cpu++) {
		char path[256], v[256];
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/%s", cpu, file);
		if (read_text(path, v, sizeof(v)) < 0)
			continue;
		uint32_t i;
		for (i = 0; i < n && strcmp(seen[i], v); i++)
			;
		if (i == n)
			snprintf(seen[n++], 256, "%s", v);
	}
	pd_buf_u32(b, n);
	for (uint32_t i = 0; i < n; i++)
		pd_buf_string(b, seen[i]);
	free(seen);
}

static uint32_t topo_id(int cpu, const char *file)
{
	char path[256], v[64];
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/%s", cpu, file);
	return read_text(path, v, sizeof(v)) < 0 ? (uint32_t)-1 : (uint32_t)atoi(v);
}

/* CPU_TOPOLOGY: package siblings, thread siblings, core/socket ids, then dies (perf 5.x+). */
static int set_topology(struct pd_writer *w, int nr, struct rec_err *e)
{
	struct pd_buf b = { 0 };

	topo_list(&b, nr, "core_siblings_list");
	topo_list(&b, nr, "thread_siblings_list");
	for (int cpu = 0; cpu < nr; cpu++) {
		pd_buf_u32(&b, topo_id(cpu, "core_id"));
		pd_buf_u32(&b, topo_id(cpu, "physical_package_id"));
	}
	topo_list(&b, nr, "die_cpus_list");
	for (int cpu = 0; cpu < nr; cpu++) {
		uint32_t die = topo_id(cpu, "die_id");
		pd_buf_u32(&b, die == (uint32_t)-1 ? 0 : die);
	}
	return set_buf(w, PD_FEAT_CPU_TOPOLOGY, &b, e);
}

static int set_pmu_mappings(struct pd_writer *w, struct rec_err *e)
{
	DIR *d = opendir("/sys/bus/event_source/devices");
	struct pd_buf b = { 0 }, list = { 0 };
	struct dirent *de;
	uint32_t n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char path[512], v[32];
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", de->d_name);
		if (read_text(path, v, sizeof(v)) < 0)
			continue;
		pd_buf_u32(&list, (uint32_t)atoi(v));
		pd_buf_string(&list, de->d_name);
		n++;
	}
	closedir(d);
	pd_buf_u32(&b, n);
	pd_buf_bytes(&b, list.data, list.len);
	b.oom |= list.oom;
	pd_buf_free(&list);
	return set_buf(w, PD_FEAT_PMU_MAPPINGS, &b, e);
}

static int set_groups(struct pd_writer *w, const struct feat_group *g, size_t n, struct rec_err *e)
{
	struct pd_buf b = { 0 };

	pd_buf_u32(&b, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		pd_buf_string(&b, g[i].name ? g[i].name : "{anon_group}");
		pd_buf_u32(&b, g[i].leader_idx);
		pd_buf_u32(&b, g[i].nr_members);
	}
	return set_buf(w, PD_FEAT_GROUP_DESC, &b, e);
}

static int set_clock(struct pd_writer *w, int clockid, struct rec_err *e)
{
	struct timespec res, tod, clk;
	struct pd_buf b = { 0 };

	if (clock_getres(clockid, &res) < 0)
		return rec_fail(e, errno, "clock %d: clock_getres failed: %s", clockid, strerror(errno));
	pd_buf_u64(&b, (uint64_t)res.tv_sec * 1000000000ull + (uint64_t)res.tv_nsec);
	if (set_buf(w, PD_FEAT_CLOCKID, &b, e) < 0)
		return -1;
	/* perf takes the pair back to back so a reader can map clock times to wall time */
	clock_gettime(CLOCK_REALTIME, &tod);
	clock_gettime(clockid, &clk);
	pd_buf_u32(&b, 1);
	pd_buf_u32(&b, (uint32_t)clockid);
	pd_buf_u64(&b, (uint64_t)tod.tv_sec * 1000000000ull + (uint64_t)tod.tv_nsec);
	pd_buf_u64(&b, (uint64_t)clk.tv_sec * 1000000000ull + (uint64_t)clk.tv_nsec);
	return set_buf(w, PD_FEAT_CLOCK_DATA, &b, e);
}

int features__static(struct pd_writer *w, int argc, char **argv, const struct feat_group *groups,
		     size_t nr_groups, int clockid, struct rec_err *e)
{
	struct utsname u;
	char buf[512];
	struct pd_buf b = { 0 };
	int avail = cpus_avail(), *online = NULL, nr_online = cpus_online(&online);

	free(online);
	if (uname(&u) < 0)
		return rec_fail(e, errno, "uname failed: %s", strerror(errno));
	if (set_string(w, PD_FEAT_HOSTNAME, u.nodename, e) < 0 ||
	    set_string(w, PD_FEAT_OSRELEASE, u.release, e) < 0 ||
	    set_string(w, PD_FEAT_VERSION, "rbrecord " PACKAGE_VERSION, e) < 0 ||
	    set_string(w, PD_FEAT_ARCH, u.machine, e) < 0)
		return -1;
	pd_buf_u32(&b, (uint32_t)avail);
	pd_buf_u32(&b, (uint32_t)(nr_online > 0 ? nr_online : avail));
	if (set_buf(w, PD_FEAT_NRCPUS, &b, e) < 0)
		return -1;
	static const char *const desc_keys[] = { "model name", "cpu model", "cpu", "Processor", NULL };
	if (cpuinfo_value(desc_keys, buf, sizeof(buf)) == 0 && set_string(w, PD_FEAT_CPUDESC, buf, e) < 0)
		return -1;
	if (cpuid_string(buf, sizeof(buf)) == 0 && set_string(w, PD_FEAT_CPUID, buf, e) < 0)
		return -1;
	pd_buf_u64(&b, mem_total_kb());
	if (set_buf(w, PD_FEAT_TOTAL_MEM, &b, e) < 0 || set_cmdline(w, argc, argv, e) < 0 ||
	    set_topology(w, avail, e) < 0 || set_pmu_mappings(w, e) < 0)
		return -1;
	if (nr_groups && set_groups(w, groups, nr_groups, e) < 0)
		return -1;
	if (clockid >= 0 && set_clock(w, clockid, e) < 0)
		return -1;
	return 0;
}

int features__sample_time(struct pd_writer *w, uint64_t first, uint64_t last, struct rec_err *e)
{
	struct pd_buf b = { 0 };
	pd_buf_u64(&b, first);
	pd_buf_u64(&b, last);
	return set_buf(w, PD_FEAT_SAMPLE_TIME, &b, e);
}

/* Build id from the PT_NOTE segments of a native-class ELF file. */
int elf_build_id(const char *path, uint8_t id[20])
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int rc = -1;
#if UINTPTR_MAX > 0xffffffffu
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
#else
	Elf32_Ehdr eh;
	Elf32_Phdr ph;
#endif

	if (fd < 0)
		return -1;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_phentsize != sizeof(ph) || eh.e_phnum > 256)
		goto err_out;
	for (unsigned i = 0; i < eh.e_phnum && rc <= 0; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) != (ssize_t)sizeof(ph))
			goto err_out;
		if (ph.p_type != PT_NOTE || ph.p_filesz > 65536)
			continue;
		uint8_t *buf = malloc(ph.p_filesz ? ph.p_filesz : 1);
		if (!buf)
			goto err_out;
		if (pread(fd, buf, ph.p_filesz, (off_t)ph.p_offset) == (ssize_t)ph.p_filesz)
			rc = rb_elf_note_build_id(buf, ph.p_filesz, RB_ELF_NATIVE_MSB, id, 20);
		free(buf);
	}
err_out:
	close(fd);
	return rc;
}

/* One BUILD_ID entry: header, pid, build id (24 bytes: 20 + size + pad), name padded to 64. */
static void build_id_entry(struct pd_buf *b, uint16_t cpumode, const uint8_t *id, int len, const char *name)
{
	size_t nl = strlen(name) + 1, padded = (nl + 63) & ~(size_t)63;
	struct perf_event_header h = { .type = PD_RECORD_HEADER_BUILD_ID,
				       .misc = (uint16_t)(cpumode | PD_MISC_BUILD_ID_SIZE),
				       .size = (uint16_t)(36 + padded) };
	uint8_t bid[24] = { 0 };
	static const uint8_t zero[64];

	memcpy(bid, id, (size_t)len);
	bid[20] = (uint8_t)len;
	pd_buf_bytes(b, &h, sizeof(h));
	pd_buf_u32(b, (uint32_t)-1);   /* perf's HOST_KERNEL_ID: the host machine */
	pd_buf_bytes(b, bid, sizeof(bid));
	pd_buf_bytes(b, name, nl);
	pd_buf_bytes(b, zero, padded - nl);
}

/* The running kernel's build id from /sys/kernel/notes. */
int kernel_build_id(uint8_t id[20])
{
	size_t n;
	char *notes = read_all("/sys/kernel/notes", &n);
	int rc = notes ? rb_elf_note_build_id((const uint8_t *)notes, n, RB_ELF_NATIVE_MSB, id, 20) : 0;
	free(notes);
	return rc;
}

int vdso_build_id(uint8_t id[20])
{
	const uint8_t *base = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
	if (!base)
		return 0;
#if UINTPTR_MAX > 0xffffffffu
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
	const Elf64_Phdr *ph;
#else
	const Elf32_Ehdr *eh = (const Elf32_Ehdr *)base;
	const Elf32_Phdr *ph;
#endif
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_phentsize != sizeof(*ph) || eh->e_phnum > 64)
		return 0;
	ph = (const void *)(base + eh->e_phoff);
	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_NOTE && ph[i].p_filesz < 65536) {
			int rc = rb_elf_note_build_id(base + ph[i].p_offset, ph[i].p_filesz, RB_ELF_NATIVE_MSB, id, 20);
			if (rc > 0)
				return rc;
		}
	return 0;
}

const void *vdso_image(size_t *len)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	unsigned long lo, hi;
	const void *at = NULL;
	while (f && !at && fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2 && hi > lo) {
			at = (const void *)lo;
			*len = hi - lo;
		}
	if (f)
		fclose(f);
	return at;
}

int features__build_ids(struct pd_writer *w, char *const *paths, size_t n, struct rec_err *e)
{
	struct pd_buf b = { 0 };
	uint8_t id[20];
	int len;

	if ((len = kernel_build_id(id)) > 0)
		build_id_entry(&b, PD_MISC_KERNEL, id, len, "[kernel.kallsyms]");
	for (size_t i = 0; i < n; i++)
		if (paths[i][0] == '/' && strlen(paths[i]) < 4000 && (len = elf_build_id(paths[i], id)) > 0)
			build_id_entry(&b, PD_MISC_USER, id, len, paths[i]);
		else if (!strcmp(paths[i], "[vdso]") && (len = vdso_build_id(id)) > 0)
			build_id_entry(&b, PD_MISC_USER, id, len, paths[i]);   /* perf lists it, hit or not */
	if (!b.len)
		return 0;
	return set_buf(w, PD_FEAT_BUILD_ID, &b, e);
}
