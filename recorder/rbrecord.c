/*
 * rbrecord.c - the command line: perf record's option names, the traced
 * command (forked stopped, exec'd once the events are ready), signals, exit
 * status and the messages. Everything that talks to the user is here.
 *
 * Workload: one recording per run; the main loop wakes on ring watermarks,
 * signals and the command's exit.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>
#include "record.h"
#ifdef HAVE_LIBARCHIVE
#include "pack.h"
#endif
#include "pmuinfo.h"
#include "ftrace.h"
#include "zcomp.h"
#include "switchout.h"
#include "kcore.h"

static volatile sig_atomic_t stop_requested, child_exited, snapshot_requested, switch_requested;
static int pending_snapshot_acks;   /* control 'snapshot' commands to acknowledge once taken */

static void on_stop(int sig) { stop_requested = sig; }
static void on_child(int sig) { child_exited = 1; }
static void on_usr2(int sig) { snapshot_requested = switch_requested = 1; }

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rbrecord [options] [-- command [args]]\n"
		"       rbrecord --pmu-info [--json]\n"
		"  -e, --event EV        event(s): cpu-clock, cycles, L1-dcache-load-misses, sched:sched_switch,\n"
		"                        r01c4, pmu/term=v,.../, {a,b}; modifiers :u :k :h :p (repeatable)\n"
		"  -o, --output FILE     output file (default perf.data; - for a pipe-mode stream on stdout)\n"
		"      --threads[=SPEC]  a perf.data folder: rings read by several threads into FILE/data.N; SPEC\n"
		"                        cpu (default), core, package, numa or masks CPUS[/AFFINITY]:...\n"
		"      --kcore           a perf.data folder: FILE/data and FILE/kcore_dir (kallsyms, modules and\n"
		"                        the kernel's and modules' code from /proc/kcore; root)\n"
		"  -a, --all-cpus        system-wide on every online CPU\n"
		"  -C, --cpu LIST        only these CPUs (system-wide on them, or with -p / -t those threads)\n"
		"  -p, --pid PID[,PID]   attach to processes (all their threads)\n"
		"  -t, --tid TID[,TID]   attach to threads\n"
		"      --per-thread      one ring per thread, events not bound to a CPU\n"
		"  -c, --count N         sample every N events\n"
		"  -g                    record call chains (--call-graph fp)\n"
		"      --call-graph MODE fp (frame pointers), dwarf[,SIZE] (user registers and SIZE bytes of user\n"
		"                        stack per sample, default 8192, unwound by rbdecode) or lbr (the CPU's\n"
		"                        LBR call stack, user code, Intel PMUs with LBR)\n"
		"  -b, --branch-any      sample taken branches (branch stack; a PMU with one: Intel LBR, Arm BRBE)\n"
		"  -j, --branch-filter F[,F]  branch stack of these kinds: any any_call any_ret ind_call ind_jmp call\n"
		"                        cond abort_tx in_tx no_tx save_type stack priv, levels u k hv\n"
		"      --switch-events   context switch records (SWITCH / SWITCH_CPU_WIDE)\n"
		"  -T, --timestamp       --sample-cpu   accepted: rbrecord always samples the time and the CPU\n"
		"  -d, --data            sample data addresses and sources (ADDR, DATA_SRC), data mmaps\n"
		"  -W, --weight          sample weights (WEIGHT_STRUCT)\n"
		"      --user-regs[=REGS]  -I, --intr-regs[=REGS]   sample user / interrupted registers (all, or\n"
		"                        REGS comma-separated; --user-regs=? or -I? lists them)\n"
		"  -D, --delay MSECS     start the sampling events MSECS after the command (-1: only on a control\n"
		"                        'enable'); the sideband is recorded from the start\n"
		"      --no-inherit      do not follow the threads and processes the command creates\n"
		"  -u, --uid USER        record the processes of USER (name or number)\n"
		"  -G, --cgroup NAME     with -a: only what runs in cgroup NAME (of the perf_event hierarchy)\n"
		"      --namespaces      NAMESPACES records\n"
		"      --all-cgroups     each sample's cgroup id, and CGROUP records naming them\n"
		"  -B, --no-buildid      no BUILD_ID feature; -N, --no-buildid-cache and --buildid-all: accepted\n"
		"                        (rbrecord keeps no cache and lists every object the recording maps)\n"
		"  -F, --freq HZ         sample at HZ per second (default 4000)\n"
		"  -m, --mmap-pages N[,M] data pages per ring, and AUX area pages (a power of two, or a size: 64K, 1M)\n"
		"      --overwrite       backward rings: keep the newest data, written on SIGUSR2 and at exit\n"
		"  -S, --snapshot[=[e]SIZE]  AUX snapshot mode: the AUX area runs free, read on SIGUSR2 or a\n"
		"                        'snapshot' control command; SIZE bytes at most (K, M); e: also at exit\n"
		"      --filter FILTER   for the preceding -e: an address filter of an AUX-area PMU\n"
		"                        ('filter 0x400000/0x1000@/bin/ls', start, stop, tracestop) or a tracepoint filter\n"
		"      --control fifo:CTL[,ACK] | fd:CTL[,ACK]\n"
		"                        commands 'snapshot', 'enable', 'disable', 'stop', 'ping'; 'ack' on ACK\n"
		"      --switch-output[=signal|SIZE|TIME]  finish OUTPUT as OUTPUT.<timestamp> and start a new one\n"
		"                        on SIGUSR2 (default), at SIZE bytes written (B, K, M, G) or every TIME (s, m, h, d)\n"
		"      --switch-max-files N  keep only the newest N of those files\n"
		"  -k, --clockid CLOCK   monotonic, monotonic_raw, realtime, boottime, tai, or a number\n"
		"  -z, --compression-level[=N]  zstd-compressed records (PERF_RECORD_COMPRESSED), level N 1..22\n"
		"                        (default 1; -z5 or --compression-level=5)\n"
		"      --mmap-flush N    drain a ring only once it holds N bytes (B, K, M, G; default 1, at most\n"
		"                        a quarter of the ring)\n"
		"  -q, --quiet           no summary\n"
		"  -v, --verbose         show the events' attrs and the rings\n"
		"      --dry-run         parse the events, show their attrs, record nothing\n"
		"      --pmu-info        describe the CPU's performance monitoring and the PMUs (--json)\n"
		"      --ftrace EVENTS   also record the ftrace ring (sys:event, sys:*, function, function_graph;\n"
		"                        comma-separated) system-wide into OUTPUT.trace.dat (trace-cmd's format)\n"
		"      --ftrace-buffer-size KB   its per-CPU buffer size (default: the kernel's)\n"
		"      --ftrace-filter FUNCS     --ftrace-notrace FUNCS   function tracer filters\n"
#ifdef HAVE_LIBARCHIVE
		"      --archive OUT     then pack the recording and the objects it needs (by build-id) into OUT\n"
		"                        (.tar, .tar.gz, .tar.xz, .tar.zst, .tar.bz2 or .zip); also:\n"
		"                        rbrecord archive PERF.DATA OUT\n"
#endif
		);
}

/* --call-graph MODE[,SIZE], as perf record spells it. 0 or -1. */
static int parse_callgraph(const char *arg, struct rec_opts *o)
{
	const char *comma = strchr(arg, ',');
	size_t n = comma ? (size_t)(comma - arg) : strlen(arg);
	if (n == 2 && !strncmp(arg, "fp", 2) && !comma) {
		o->callgraph = REC_CG_FP;
		return 0;
	}
	if (n == 3 && !strncmp(arg, "lbr", 3) && !comma) {
		o->callgraph = REC_CG_LBR;
		return 0;
	}
	if (n != 5 || strncmp(arg, "dwarf", 5))
		return -1;
	o->callgraph = REC_CG_DWARF;
	o->stack_dump = 8192;
	if (comma) {
		char *end;
		errno = 0;
		unsigned long long v = strtoull(comma + 1, &end, 0);
		/* perf: rounded up to 8 bytes, at most USHRT_MAX rounded down (the kernel's u16 dump size) */
		if (errno || end == comma + 1 || *end || !v || v > 65528)
			return -1;
		o->stack_dump = (uint32_t)((v + 7) & ~7ULL);
	}
	return 0;
}

/* -j: perf record's branch filter names (parse-branch-options.c) and their branch_sample_type bits. */
static const struct { const char *name; uint64_t bit; } branch_modes[] = {
	{ "u", PERF_SAMPLE_BRANCH_USER }, { "k", PERF_SAMPLE_BRANCH_KERNEL }, { "hv", PERF_SAMPLE_BRANCH_HV },
	{ "any", PERF_SAMPLE_BRANCH_ANY }, { "any_call", PERF_SAMPLE_BRANCH_ANY_CALL },
	{ "any_ret", PERF_SAMPLE_BRANCH_ANY_RETURN }, { "ind_call", PERF_SAMPLE_BRANCH_IND_CALL },
	{ "abort_tx", PERF_SAMPLE_BRANCH_ABORT_TX }, { "in_tx", PERF_SAMPLE_BRANCH_IN_TX },
	{ "no_tx", PERF_SAMPLE_BRANCH_NO_TX }, { "cond", PERF_SAMPLE_BRANCH_COND },
	{ "ind_jmp", PERF_SAMPLE_BRANCH_IND_JUMP }, { "call", PERF_SAMPLE_BRANCH_CALL },
	{ "save_type", PERF_SAMPLE_BRANCH_TYPE_SAVE }, { "stack", PERF_SAMPLE_BRANCH_CALL_STACK },
	{ "priv", PERF_SAMPLE_BRANCH_PRIV_SAVE },
};
#define BRANCH_PLM (PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_KERNEL | PERF_SAMPLE_BRANCH_HV)

/* -j FILTER[,FILTER]: the mask, or 0 with the unknown name in @bad. */
static uint64_t parse_branch_filter(const char *arg, char *bad, size_t badlen)
{
	char *copy = strdup(arg), *save = NULL;
	uint64_t mode = 0;

	bad[0] = 0;
	if (!copy)
		return 0;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		size_t k, n = sizeof(branch_modes) / sizeof(branch_modes[0]);
		for (k = 0; k < n && strcmp(t, branch_modes[k].name); k++)
			;
		if (k == n) {
			snprintf(bad, badlen, "%s", t);
			free(copy);
			return 0;
		}
		mode |= branch_modes[k].bit;
	}
	free(copy);
	if (!(mode & ~(uint64_t)BRANCH_PLM))   /* perf: no branch type (only u, k, hv, or nothing): any */
		mode = PERF_SAMPLE_BRANCH_ANY;
	return mode;
}

/* --user-regs / -I: perf's register names for this architecture (arch/.../util/perf_regs.c) and their bits. */
struct reg_name { const char *name; int bit; };
static const struct reg_name reg_names[] = {
#if defined(__x86_64__) || defined(__i386__)
	{ "AX", 0 }, { "BX", 1 }, { "CX", 2 }, { "DX", 3 }, { "SI", 4 }, { "DI", 5 }, { "BP", 6 }, { "SP", 7 },
	{ "IP", 8 }, { "FLAGS", 9 }, { "CS", 10 }, { "SS", 11 },
#if defined(__x86_64__)
	{ "R8", 16 }, { "R9", 17 }, { "R10", 18 }, { "R11", 19 }, { "R12", 20 }, { "R13", 21 }, { "R14", 22 }, { "R15", 23 },
#endif
#elif defined(__aarch64__)
	{ "x0", 0 }, { "x1", 1 }, { "x2", 2 }, { "x3", 3 }, { "x4", 4 }, { "x5", 5 }, { "x6", 6 }, { "x7", 7 },
	{ "x8", 8 }, { "x9", 9 }, { "x10", 10 }, { "x11", 11 }, { "x12", 12 }, { "x13", 13 }, { "x14", 14 },
	{ "x15", 15 }, { "x16", 16 }, { "x17", 17 }, { "x18", 18 }, { "x19", 19 }, { "x20", 20 }, { "x21", 21 },
	{ "x22", 22 }, { "x23", 23 }, { "x24", 24 }, { "x25", 25 }, { "x26", 26 }, { "x27", 27 }, { "x28", 28 },
	{ "x29", 29 }, { "lr", 30 }, { "sp", 31 }, { "pc", 32 },
#elif defined(__powerpc64__)
	{ "r0", 0 }, { "r1", 1 }, { "r2", 2 }, { "r3", 3 }, { "r4", 4 }, { "r5", 5 }, { "r6", 6 }, { "r7", 7 },
	{ "r8", 8 }, { "r9", 9 }, { "r10", 10 }, { "r11", 11 }, { "r12", 12 }, { "r13", 13 }, { "r14", 14 },
	{ "r15", 15 }, { "r16", 16 }, { "r17", 17 }, { "r18", 18 }, { "r19", 19 }, { "r20", 20 }, { "r21", 21 },
	{ "r22", 22 }, { "r23", 23 }, { "r24", 24 }, { "r25", 25 }, { "r26", 26 }, { "r27", 27 }, { "r28", 28 },
	{ "r29", 29 }, { "r30", 30 }, { "r31", 31 }, { "nip", 32 }, { "msr", 33 }, { "orig_r3", 34 },
	{ "ctr", 35 }, { "link", 36 }, { "xer", 37 }, { "ccr", 38 }, { "softe", 39 }, { "trap", 40 },
	{ "dar", 41 }, { "dsisr", 42 }, { "sier", 43 }, { "mmcra", 44 },
#endif
	{ NULL, 0 },
};

static void print_regs(FILE *f)
{
	fprintf(f, "available registers: ");
	for (const struct reg_name *r = reg_names; r->name; r++)
		fprintf(f, "%s ", r->name);
	fprintf(f, "\n");
}

/*
 * --user-regs[=REGS] / -I[REGS]: perf's mask of the named registers
 * (case-insensitive, comma-separated), every register without a list.
 * 0 with the unknown name in @bad; "?" lists the names and exits.
 */
static uint64_t parse_regs(const char *arg, char *bad, size_t badlen)
{
	uint64_t mask = 0;

	bad[0] = 0;
	if (!arg || !*arg) {
		for (const struct reg_name *r = reg_names; r->name; r++)
			mask |= UINT64_C(1) << r->bit;
		if (!mask)
			snprintf(bad, badlen, "(this architecture has no sampled registers)");
		return mask;
	}
	if (!strcmp(arg, "?")) {
		print_regs(stdout);
		exit(0);
	}
	char *copy = strdup(arg), *save = NULL;
	if (!copy)
		return 0;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		const struct reg_name *r;
		for (r = reg_names; r->name && strcasecmp(r->name, t); r++)
			;
		if (!r->name) {
			snprintf(bad, badlen, "%s", t);
			free(copy);
			return 0;
		}
		mask |= UINT64_C(1) << r->bit;
	}
	free(copy);
	return mask;
}

/* The perf_event cgroup hierarchy's mount, as perf finds it: a v1 hierarchy with perf_event, else cgroup2. */
static char *cgroup_mount(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096], *v2 = NULL, *v1 = NULL;

	if (!f)
		return NULL;
	while (!v1 && fgets(line, sizeof(line), f)) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS */
		char mnt[2048], *dash = strstr(line, " - ");
		char fstype[64], src[256], opts[1024] = "";
		if (!dash || sscanf(line, "%*s %*s %*s %*s %2047s", mnt) != 1 ||
		    sscanf(dash + 3, "%63s %255s %1023s", fstype, src, opts) < 2)
			continue;
		if (!strcmp(fstype, "cgroup2") && !v2)
			v2 = strdup(mnt);
		else if (!strcmp(fstype, "cgroup") && strstr(opts, "perf_event"))
			v1 = strdup(mnt);
	}
	fclose(f);
	if (v1) {
		free(v2);
		return v1;
	}
	return v2;
}

/*
 * -u NAME's uid from /etc/passwd (-1 if none). Read directly rather than with
 * getpwnam(), which a static rbrecord (--enable-static-recorder) cannot use.
 */
static long passwd_uid(const char *name)
{
	FILE *f = fopen("/etc/passwd", "re");
	char line[1024];
	size_t n = strlen(name);
	long uid = -1;

	if (!f)
		return -1;
	while (uid < 0 && fgets(line, sizeof(line), f))
		if (!strncmp(line, name, n) && line[n] == ':') {
			char *p = strchr(line + n + 1, ':');   /* past the password field */
			if (p)
				uid = strtol(p + 1, NULL, 10);
		}
	fclose(f);
	return uid;
}

/* Every process owned by @uid (perf's thread_map__new_by_uid: /proc/PID's owner). */
static int uid_pids(uid_t uid, int **out)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0, *v = NULL;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char path[300];
		struct stat st;
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s", de->d_name);
		if (stat(path, &st) < 0 || st.st_uid != uid || atoi(de->d_name) == getpid())
			continue;
		int *nv = realloc(v, (size_t)(n + 1) * sizeof(*v));
		if (!nv) {
			free(v);
			closedir(d);
			return -1;
		}
		v = nv;
		v[n++] = atoi(de->d_name);
	}
	closedir(d);
	*out = v;
	return n;
}

/* "1,2,3" into an int array; count or -1. */
static int parse_ids(const char *s, int **out)
{
	int n = 0, *v = NULL;
	char *copy = strdup(s), *save = NULL;

	if (!copy)
		return -1;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *end;
		long x = strtol(t, &end, 10);
		int *nv = realloc(v, (size_t)(n + 1) * sizeof(*v));
		if (*end || x <= 0 || !nv) {
			free(nv ? nv : v);
			free(copy);
			return -1;
		}
		v = nv;
		v[n++] = (int)x;
	}
	free(copy);
	*out = v;
	return n;
}

/* Append the threads of process @pid from /proc/pid/task. */
static int add_threads(int pid, int **v, int *n)
{
	char path[64];
	DIR *d;
	struct dirent *de;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		int *nv = realloc(*v, (size_t)(*n + 1) * sizeof(**v));
		if (!nv) {
			closedir(d);
			return -1;
		}
		*v = nv;
		(*v)[(*n)++] = atoi(de->d_name);
	}
	closedir(d);
	return 0;
}

/* "N", "64K", "4M" into bytes (@unit: what a bare number counts). 0 or -1. */
static int parse_size(const char *s, const char **rest, unsigned long long unit, unsigned long long *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (end == s)
		return -1;
	if (*end == 'K' || *end == 'k')
		v *= 1024, end++;
	else if (*end == 'M' || *end == 'm')
		v *= 1024 * 1024, end++;
	else if (*end == 'G' || *end == 'g')
		v *= 1024ULL * 1024 * 1024, end++;
	else
		v *= unit;
	*rest = end;
	*out = v;
	return 0;
}

/* -m DATA[,AUX]: page counts or sizes, each a power of two pages. */
static int parse_pages(const char *s, size_t *pages, size_t *aux_pages)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned long long v;
	const char *rest = s;

	if (*s != ',') {
		if (parse_size(s, &rest, page, &v) < 0)
			return -1;
		v /= page;
		if (!v || (v & (v - 1)))
			return -1;
		*pages = (size_t)v;
	}
	if (*rest == ',') {
		if (parse_size(rest + 1, &rest, page, &v) < 0)
			return -1;
		v /= page;
		if (!v || (v & (v - 1)))
			return -1;
		*aux_pages = (size_t)v;
	}
	return *rest ? -1 : 0;
}

/* -z[N], --compression-level[=N]: perf's levels, 1 (its default) to 22. */
static int parse_comp_level(const char *s, int *level)
{
	char *end;

	if (!s) {
		*level = 1;
		return 0;
	}
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > ZCOMP_LEVEL_MAX)
		return -1;
	*level = (int)v;
	return 0;
}

/* --mmap-flush=N[B|K|M|G]: bytes (perf's parse_tag_value tags); 0 is perf's default, 1. */
static int parse_mmap_flush(const char *s, size_t *out)
{
	unsigned long long v;
	const char *rest;

	if (parse_size(s, &rest, 1, &v) < 0)
		return -1;
	if (*rest == 'B' || *rest == 'b')
		rest++;
	if (*rest || v > SIZE_MAX / 2)
		return -1;
	*out = v ? (size_t)v : 1;
	return 0;
}

/* -S[e][SIZE] */
static int parse_snapshot(const char *s, struct rec_opts *o)
{
	unsigned long long v;
	const char *rest;

	o->snapshot = 1;
	if (!s)
		return 0;
	if (*s == 'e') {
		o->snapshot_on_exit = 1;
		s++;
	}
	if (!*s)
		return 0;
	if (parse_size(s, &rest, 1, &v) < 0 || *rest || !v)
		return -1;
	o->snapshot_size = (size_t)v;
	return 0;
}

/* --control fifo:CTL[,ACK] or fd:CTL[,ACK]: the command descriptor (and the ack one, or -1). */
static int open_control(const char *spec, int *ctl, int *ack, struct rec_err *e)
{
	char *copy = strdup(spec), *comma;
	int rc = 0;

	*ctl = *ack = -1;
	if (!copy)
		return rec_fail(e, ENOMEM, "out of memory");
	comma = strchr(copy, ',');
	if (comma)
		*comma++ = 0;
	if (!strncmp(copy, "fifo:", 5)) {
		/* read-write: the FIFO never reports end-of-file between two writers */
		*ctl = open(copy + 5, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		if (*ctl < 0)
			rc = rec_fail(e, errno, "--control: cannot open FIFO %s: %s", copy + 5, strerror(errno));
		else if (comma && (*ack = open(comma, O_RDWR | O_CLOEXEC)) < 0)
			rc = rec_fail(e, errno, "--control: cannot open ack FIFO %s: %s", comma, strerror(errno));
	} else if (!strncmp(copy, "fd:", 3)) {
		*ctl = atoi(copy + 3);
		*ack = comma ? atoi(comma) : -1;
		if (fcntl(*ctl, F_GETFD) < 0 || (*ack >= 0 && fcntl(*ack, F_GETFD) < 0))
			rc = rec_fail(e, EBADF, "--control %s: descriptor not open", spec);
		else
			fcntl(*ctl, F_SETFL, fcntl(*ctl, F_GETFL) | O_NONBLOCK);
	} else {
		rc = rec_fail(e, EINVAL, "--control %s: expected fifo:CTL[,ACK] or fd:CTL[,ACK]", spec);
	}
	free(copy);
	return rc;
}

static int parse_clockid(const char *s)
{
	static const struct { const char *name; int id; } clocks[] = {
		{ "monotonic", 1 }, { "monotonic_raw", 4 }, { "realtime", 0 }, { "boottime", 7 }, { "tai", 11 },
		{ "mono", 1 }, { "raw", 4 }, { "real", 0 }, { "boot", 7 },
		{ "CLOCK_MONOTONIC", 1 }, { "CLOCK_MONOTONIC_RAW", 4 }, { "CLOCK_REALTIME", 0 },
		{ "CLOCK_BOOTTIME", 7 }, { "CLOCK_TAI", 11 },
	};
	char *end;
	long v;

	for (size_t i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++)
		if (!strcmp(s, clocks[i].name))
			return clocks[i].id;
	v = strtol(s, &end, 10);
	return *end || end == s || v < 0 ? -1 : (int)v;
}

/* perf's default event: cycles, or cpu-clock where no hardware PMU can count them. */
static const char *default_event(void)
{
	struct perf_event_attr a = { .type = PERF_TYPE_HARDWARE, .size = sizeof(a),
				     .config = PERF_COUNT_HW_CPU_CYCLES, .disabled = 1,
				     .exclude_kernel = 1, .sample_freq = 4000, .freq = 1 };
	long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return "cpu-clock";
	close((int)fd);
	return "cycles";
}

struct child { pid_t pid; int go_fd, err_fd; };

/* Fork the command; it waits on a pipe and execs when told (after the events exist). */
static int fork_command(struct child *c, char **argv)
{
	int go[2], err[2];

	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0)
		return -1;
	c->pid = fork();
	if (c->pid < 0)
		return -1;
	if (c->pid == 0) {
		char b;
		close(go[1]);
		close(err[0]);
		signal(SIGCHLD, SIG_DFL);
		signal(SIGXFSZ, SIG_DFL);   /* ignored by rbrecord only (see install_signals) */
		if (read(go[0], &b, 1) != 1)
			_exit(127);   /* rbrecord gave up before starting us */
		execvp(argv[0], argv);
		int e = errno;
		if (write(err[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(err[1]);
	c->go_fd = go[1];
	c->err_fd = err[0];
	return 0;
}

/* Let the command exec. 0, or the errno of a failed exec. */
static int start_command(struct child *c)
{
	int e = 0;
	ssize_t n;

	if (write(c->go_fd, "g", 1) != 1)
		return errno;
	close(c->go_fd);
	c->go_fd = -1;
	do
		n = read(c->err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(c->err_fd);
	c->err_fd = -1;
	return n == (ssize_t)sizeof(e) ? e : 0;
}

/*
 * Commands on the control descriptor, one per line, as perf record's
 * --control: snapshot, enable, disable, stop, ping. Each is acknowledged
 * with "ack" on the ack descriptor once done.
 */
static int control_commands(struct record *s, int ctl, int ack, struct rec_err *e)
{
	static char line[256];
	static size_t len;
	ssize_t n;

	while ((n = read(ctl, line + len, sizeof(line) - 1 - len)) > 0) {
		len += (size_t)n;
		char *nl;
		while ((nl = memchr(line, '\n', len))) {
			*nl = 0;
			int rc = 0;
			if (!strcmp(line, "snapshot"))
				snapshot_requested = 1;
			else if (!strcmp(line, "stop"))
				stop_requested = SIGTERM;
			else if (!strcmp(line, "enable") || !strcmp(line, "disable"))
				rc = record__set_enabled(s, line[0] == 'e', e);
			else if (strcmp(line, "ping") && line[0])
				fprintf(stderr, "rbrecord: control: unknown command '%s' (snapshot, enable, disable, stop, ping)\n",
					line);
			if (rc < 0)
				return -1;
			if (ack >= 0 && line[0] && strcmp(line, "snapshot") && write(ack, "ack\n", 4) < 0)
				return rec_fail(e, errno, "--control: writing the ack: %s", strerror(errno));
			if (!strcmp(line, "snapshot"))
				pending_snapshot_acks++;
			size_t used = (size_t)(nl + 1 - line);
			memmove(line, nl + 1, len - used);
			len -= used;
		}
		if (len == sizeof(line) - 1)
			len = 0;   /* an overlong line: dropped */
	}
	return 0;
}

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;   /* no SA_RESTART: poll() returns EINTR */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = on_child;
	sa.sa_flags = SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, NULL);
	sa.sa_handler = on_usr2;
	sa.sa_flags = 0;
	sigaction(SIGUSR2, &sa, NULL);
	/* RLIMIT_FSIZE: a write past the limit fails with EFBIG, handled as a full disk, instead of
	   killing rbrecord with an unfinished file */
	signal(SIGXFSZ, SIG_IGN);
}

/* perf raises the descriptor limit to the hard limit: a recording needs events x CPUs x threads fds. */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static void show_events(const struct ev_list *evl)
{
	for (size_t i = 0; i < evl->n; i++) {
		const struct perf_event_attr *a = &evl->v[i].attr;
		fprintf(stderr, "rbrecord: event %zu %s: type %u config %#llx config1 %#llx config2 %#llx "
			"exclude_user %u exclude_kernel %u exclude_hv %u precise_ip %u group leader %d\n",
			i, evl->v[i].name, a->type, (unsigned long long)a->config, (unsigned long long)a->config1,
			(unsigned long long)a->config2, a->exclude_user, a->exclude_kernel, a->exclude_hv,
			a->precise_ip, evl->v[i].leader);
	}
}

static void show_rings(const struct record *s)
{
	struct rec_stats st;

	record__stats(s, &st);
	fprintf(stderr, "rbrecord: %zu fds, %zu rings\n", st.nr_fds, st.nr_rings);
	for (size_t i = 0; i < st.nr_rings; i++) {
		int cpu, tid, fd;
		size_t bytes;
		record__ring_info(s, i, &cpu, &tid, &fd, &bytes);
		if (st.aux)
			fprintf(stderr, "rbrecord: ring %zu: cpu %d tid %d fd %d data %zu bytes, AUX area %zu bytes (%s)\n",
				i, cpu, tid, fd, bytes, st.aux_bytes_per_ring, st.aux_pmu);
		else
			fprintf(stderr, "rbrecord: ring %zu: cpu %d tid %d fd %d data %zu bytes\n", i, cpu, tid, fd, bytes);
	}
}

struct cli {
	struct rec_opts o;
	const char *control;          /* --control spec */
	struct ev_list evl;
	int all_cpus, per_thread, quiet, verbose, pmu_info, json, dry_run;
	int *pids, nr_pids, *tids, nr_tids;
	const char *archive;          /* --archive OUT: pack the recording when it is done */
	int kcore;                    /* --kcore: -o names a perf.data folder with a kcore_dir */
	char *dir_data;               /* its data file */
	struct ftrace_opts ft;        /* --ftrace: the ftrace ring beside the perf rings */
	const char *uid;              /* -u: record this user's processes */
	uid_t uid_v;
	const char *cgroup;           /* -G NAME */
	char *cgroup_mnt;             /* the perf_event cgroup hierarchy (-G, --all-cgroups) */
	char branch_opt[160];         /* "-b" or "-j SPEC", for messages */
	struct switch_out so;         /* --switch-output, --switch-max-files */
};

/* Everything parse_args allocated. */
static void cli_free(struct cli *c)
{
	events__free(&c->evl);
	ftrace__opts_free(&c->ft);
	free((void *)c->ft.output);
	free(c->dir_data);
	free((void *)c->o.tids);
	free(c->pids);
	free(c->tids);
	free(c->cgroup_mnt);
	switch_out__free(&c->so);
	if (c->o.cgroup_fd >= 0)
		close(c->o.cgroup_fd);
}

static int parse_args(struct cli *c, int argc, char **argv, struct rec_err *e)
{
	enum { OPT_PER_THREAD = 256, OPT_OVERWRITE, OPT_PMU_INFO, OPT_JSON, OPT_DRY_RUN, OPT_ARCHIVE, OPT_FILTER,
	       OPT_CONTROL, OPT_CALL_GRAPH, OPT_FTRACE = 300, OPT_FTRACE_BUF, OPT_FTRACE_FILTER, OPT_FTRACE_NOTRACE,
	       OPT_SWITCH_EVENTS = 400, OPT_SAMPLE_CPU, OPT_USER_REGS, OPT_NO_INHERIT, OPT_NAMESPACES, OPT_ALL_CGROUPS,
	       OPT_BUILDID_ALL, OPT_SWITCH_OUTPUT = 500, OPT_SWITCH_MAX_FILES, OPT_MMAP_FLUSH = 600,
	       OPT_KCORE = 700, OPT_THREADS };
	static const struct option longopts[] = {
		{ "event", required_argument, NULL, 'e' }, { "output", required_argument, NULL, 'o' },
		{ "all-cpus", no_argument, NULL, 'a' }, { "cpu", required_argument, NULL, 'C' },
		{ "pid", required_argument, NULL, 'p' }, { "tid", required_argument, NULL, 't' },
		{ "per-thread", no_argument, NULL, OPT_PER_THREAD }, { "count", required_argument, NULL, 'c' },
		{ "freq", required_argument, NULL, 'F' }, { "mmap-pages", required_argument, NULL, 'm' },
		{ "overwrite", no_argument, NULL, OPT_OVERWRITE }, { "clockid", required_argument, NULL, 'k' },
		{ "quiet", no_argument, NULL, 'q' }, { "verbose", no_argument, NULL, 'v' },
		{ "pmu-info", no_argument, NULL, OPT_PMU_INFO }, { "json", no_argument, NULL, OPT_JSON },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN }, { "help", no_argument, NULL, 'h' },
		{ "snapshot", optional_argument, NULL, 'S' }, { "filter", required_argument, NULL, OPT_FILTER },
		{ "control", required_argument, NULL, OPT_CONTROL },
		{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
		{ "ftrace", required_argument, NULL, OPT_FTRACE },
		{ "ftrace-buffer-size", required_argument, NULL, OPT_FTRACE_BUF },
		{ "ftrace-filter", required_argument, NULL, OPT_FTRACE_FILTER },
		{ "ftrace-notrace", required_argument, NULL, OPT_FTRACE_NOTRACE },
		{ "branch-any", no_argument, NULL, 'b' }, { "branch-filter", required_argument, NULL, 'j' },
		{ "switch-events", no_argument, NULL, OPT_SWITCH_EVENTS }, { "timestamp", no_argument, NULL, 'T' },
		{ "sample-cpu", no_argument, NULL, OPT_SAMPLE_CPU }, { "data", no_argument, NULL, 'd' },
		{ "weight", no_argument, NULL, 'W' }, { "user-regs", optional_argument, NULL, OPT_USER_REGS },
		{ "intr-regs", optional_argument, NULL, 'I' }, { "delay", required_argument, NULL, 'D' },
		{ "no-inherit", no_argument, NULL, OPT_NO_INHERIT }, { "uid", required_argument, NULL, 'u' },
		{ "cgroup", required_argument, NULL, 'G' }, { "namespaces", no_argument, NULL, OPT_NAMESPACES },
		{ "all-cgroups", no_argument, NULL, OPT_ALL_CGROUPS },
		{ "no-buildid-cache", no_argument, NULL, 'N' }, { "no-buildid", no_argument, NULL, 'B' },
		{ "buildid-all", no_argument, NULL, OPT_BUILDID_ALL },
		{ "compression-level", optional_argument, NULL, 'z' },
		{ "mmap-flush", required_argument, NULL, OPT_MMAP_FLUSH },
		{ "switch-output", optional_argument, NULL, OPT_SWITCH_OUTPUT },
		{ "switch-max-files", required_argument, NULL, OPT_SWITCH_MAX_FILES },
		{ "kcore", no_argument, NULL, OPT_KCORE }, { "threads", optional_argument, NULL, OPT_THREADS },
#ifdef HAVE_LIBARCHIVE
		{ "archive", required_argument, NULL, OPT_ARCHIVE },
#endif
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	while ((ch = getopt_long(argc, argv, "+e:o:aC:p:t:c:F:m:k:qvhgS::bj:TdWI::D:u:G:NBz::", longopts, NULL)) != -1) {
		switch (ch) {
		case 'e':
			if (events__parse(&c->evl, optarg, e) < 0)
				return -1;
			break;
		case 'o': c->o.output = optarg; break;
		case OPT_ARCHIVE: c->archive = optarg; break;
		case OPT_KCORE: c->kcore = 1; break;
		case OPT_THREADS:
			c->o.threads = 1;
			c->o.threads_spec = optarg;
			break;
		case 'a': c->all_cpus = 1; break;
		case 'C': c->o.cpu_list = optarg; break;
		case 'p':
			free(c->pids);
			if ((c->nr_pids = parse_ids(optarg, &c->pids)) < 0)
				return rec_fail(e, EINVAL, "-p %s: expected process ids such as 1234,5678", optarg);
			break;
		case 't':
			free(c->tids);
			if ((c->nr_tids = parse_ids(optarg, &c->tids)) < 0)
				return rec_fail(e, EINVAL, "-t %s: expected thread ids such as 1234,5678", optarg);
			break;
		case OPT_PER_THREAD: c->per_thread = 1; break;
		case 'c':
			c->o.period = strtoull(optarg, NULL, 0);
			if (!c->o.period)
				return rec_fail(e, EINVAL, "-c %s: expected a positive count", optarg);
			break;
		case 'F':
			c->o.freq = strtoull(optarg, NULL, 0);
			if (!c->o.freq)
				return rec_fail(e, EINVAL, "-F %s: expected a positive frequency", optarg);
			break;
		case 'm':
			if (parse_pages(optarg, &c->o.mmap_pages, &c->o.aux_pages) < 0)
				return rec_fail(e, EINVAL, "-m %s: expected DATA[,AUX], each a power-of-two page count "
						"or size (64K, 4M)", optarg);
			break;
		case 'S':
			if (parse_snapshot(optarg, &c->o) < 0)
				return rec_fail(e, EINVAL, "-S%s: expected -S[e][SIZE] (SIZE in bytes, or with K / M)", optarg);
			break;
		case OPT_FILTER:
			if (!c->evl.n)
				return rec_fail(e, EINVAL, "--filter %s: it applies to the -e before it, and there is none", optarg);
			free(c->evl.v[c->evl.n - 1].filter);
			if (!(c->evl.v[c->evl.n - 1].filter = strdup(optarg)))
				return rec_fail(e, ENOMEM, "out of memory");
			break;
		case OPT_CONTROL: c->control = optarg; break;
		case 'g':       /* perf's default record mode: frame pointers */
			c->o.callgraph = REC_CG_FP;
			break;
		case OPT_CALL_GRAPH:
			if (parse_callgraph(optarg, &c->o) < 0)
				return rec_fail(e, EINVAL, "--call-graph %s: expected fp, dwarf[,SIZE] (SIZE a multiple "
						"of 8 up to 65528 bytes of user stack, default 8192) or lbr", optarg);
			break;
		case 'b':
			if (c->o.branch_stack && c->branch_opt[1] == 'j')
				return rec_fail(e, EINVAL, "-b / --branch-any and -j / --branch-filter exclude each other");
			c->o.branch_stack = PERF_SAMPLE_BRANCH_ANY;
			snprintf(c->branch_opt, sizeof(c->branch_opt), "-b");
			break;
		case 'j': {
			char bad[64];
			if (c->o.branch_stack && c->branch_opt[1] == 'b')
				return rec_fail(e, EINVAL, "-b / --branch-any and -j / --branch-filter exclude each other");
			if (!(c->o.branch_stack = parse_branch_filter(optarg, bad, sizeof(bad))))
				return rec_fail(e, EINVAL, "-j %s: unknown branch filter '%s' (u, k, hv, any, any_call, any_ret, "
						"ind_call, abort_tx, in_tx, no_tx, cond, ind_jmp, call, save_type, stack, "
						"priv; comma-separated)", optarg, bad);
			snprintf(c->branch_opt, sizeof(c->branch_opt), "-j %s", optarg);
			break;
		}
		case OPT_SWITCH_EVENTS: c->o.switch_events = 1; break;
		case 'T':               /* perf: sample times are on by default; rbrecord always samples them */
		case OPT_SAMPLE_CPU:    /* rbrecord always samples the CPU */
		case 'N':               /* rbrecord keeps no build-id cache (~/.debug): nothing to skip */
		case OPT_BUILDID_ALL:   /* rbrecord lists every object the recording maps (see doc/rbrecord.1) */
			break;
		case 'd': c->o.sample_addr = 1; break;
		case 'W': c->o.sample_weight = 1; break;
		case OPT_USER_REGS:
		case 'I': {
			char bad[64];
			uint64_t m = parse_regs(optarg, bad, sizeof(bad));
			if (!m) {
				fprintf(stderr, "rbrecord: %s%s%s: unknown register '%s'; ", ch == 'I' ? "-I" : "--user-regs",
					optarg && ch != 'I' ? "=" : "", optarg ? optarg : "", bad);
				print_regs(stderr);
				return rec_fail(e, EINVAL, "%s: unknown register '%s' (list them with %s)",
						ch == 'I' ? "-I" : "--user-regs", bad, ch == 'I' ? "-I?" : "--user-regs=?");
			}
			*(ch == 'I' ? &c->o.intr_regs : &c->o.user_regs) = m;
			break;
		}
		case 'D': {
			char *end;
			errno = 0;
			long v = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || v < -1 || v > INT32_MAX)
				return rec_fail(e, EINVAL, "-D %s: expected MSECS (the events start that long after the command) "
						"or -1 (they start only on a control 'enable'); time ranges are not supported",
						optarg);
			c->o.delay_ms = (int)v;
			break;
		}
		case OPT_NO_INHERIT: c->o.no_inherit = 1; break;
		case 'u': {
			char *end;
			long v = strtol(optarg, &end, 10);
			long pw = passwd_uid(optarg);
			if (pw >= 0)
				c->uid_v = (uid_t)pw;
			else if (end != optarg && !*end && v >= 0)
				c->uid_v = (uid_t)v;
			else
				return rec_fail(e, EINVAL, "-u %s: no such user", optarg);
			c->uid = optarg;
			break;
		}
		case 'G': c->cgroup = optarg; break;
		case OPT_NAMESPACES: c->o.namespaces = 1; break;
		case OPT_ALL_CGROUPS: c->o.all_cgroups = 1; break;
		case 'B': c->o.no_buildid = 1; break;
		case 'z':
			if (parse_comp_level(optarg, &c->o.comp_level) < 0)
				return rec_fail(e, EINVAL, "--compression-level=%s (-z%s): expected a zstd level from 1 to %d",
						optarg, optarg, ZCOMP_LEVEL_MAX);
			if (!zcomp__available())
				return rec_fail(e, ENOTSUP, "-z: this rbrecord was built without libzstd (Debian's "
						"libzstd-dev, or configure --without-zstd): it cannot compress");
			break;
		case OPT_MMAP_FLUSH:
			if (parse_mmap_flush(optarg, &c->o.mmap_flush) < 0)
				return rec_fail(e, EINVAL, "--mmap-flush=%s: expected a byte count (B, K, M or G after it: "
						"64K)", optarg);
			break;
		case OPT_OVERWRITE: c->o.overwrite = 1; break;
		case OPT_SWITCH_OUTPUT:
			if (switch_out__parse(&c->so, optarg) < 0)
				return rec_fail(e, EINVAL, "--switch-output=%s: expected signal, a size (a number with B, K, "
						"M or G) or a time (a number with s, m, h or d)", optarg);
			break;
		case OPT_SWITCH_MAX_FILES:
			if (switch_out__max_files(&c->so, optarg) < 0)
				return rec_fail(e, EINVAL, "--switch-max-files=%s: expected a number of files >= 0 "
						"(0: keep them all)", optarg);
			break;
		case 'k':
			if ((c->o.clockid = parse_clockid(optarg)) < 0)
				return rec_fail(e, EINVAL, "-k %s: unknown clock", optarg);
			break;
		case 'q': c->quiet = 1; break;
		case 'v': c->verbose = 1; break;
		case OPT_PMU_INFO: c->pmu_info = 1; break;
		case OPT_JSON: c->json = 1; break;
		case OPT_DRY_RUN: c->dry_run = 1; break;
		case OPT_FTRACE:
			if (ftrace__add_events(&c->ft, optarg, e) < 0)
				return -1;
			break;
		case OPT_FTRACE_BUF:
			if ((c->ft.buffer_kb = (unsigned)strtoul(optarg, NULL, 0)) == 0)
				return rec_fail(e, EINVAL, "--ftrace-buffer-size %s: expected kilobytes per CPU", optarg);
			break;
		case OPT_FTRACE_FILTER: c->ft.func_filter = optarg; break;
		case OPT_FTRACE_NOTRACE: c->ft.func_notrace = optarg; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(129);
		}
	}
	if (c->o.period && c->o.freq)
		return rec_fail(e, EINVAL, "-c and -F exclude each other");
	if (c->nr_pids && c->nr_tids)
		return rec_fail(e, EINVAL, "-p and -t exclude each other");
	if (c->all_cpus && (c->o.cpu_list || c->nr_pids || c->nr_tids || c->per_thread))
		return rec_fail(e, EINVAL, "-a records every CPU system-wide: it excludes -C, -p, -t and --per-thread");
	if (c->per_thread && c->o.cpu_list)
		return rec_fail(e, EINVAL, "--per-thread binds no CPU: it excludes -C");
	if (c->uid && (c->nr_pids || c->nr_tids || c->all_cpus))
		return rec_fail(e, EINVAL, "-u %s records the user's processes: it excludes -p, -t and -a", c->uid);
	if (c->uid) {
		int *v, n = uid_pids(c->uid_v, &v);
		if (n <= 0)
			return rec_fail(e, ESRCH, "-u %s: the user has no processes", c->uid);
		c->pids = v;
		c->nr_pids = n;
	}
	if (c->cgroup && !c->all_cpus)
		return rec_fail(e, EINVAL, "-G %s: cgroups are recorded system-wide only: add -a", c->cgroup);
	if (c->cgroup && strchr(c->cgroup, ','))
		return rec_fail(e, EINVAL, "-G %s: one cgroup for every event (a list per event is not supported)",
				c->cgroup);
	if ((c->cgroup || c->o.all_cgroups) && !(c->cgroup_mnt = cgroup_mount()))
		return rec_fail(e, ENOENT, "%s: no perf_event cgroup hierarchy is mounted (cgroup v2, or v1 with "
				"perf_event)", c->cgroup ? "-G" : "--all-cgroups");
	c->o.cgroup_mnt = c->cgroup_mnt;
	if (c->cgroup) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", c->cgroup_mnt, c->cgroup[0] == '/' ? c->cgroup + 1 : c->cgroup);
		if ((c->o.cgroup_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
			return rec_fail(e, errno, "-G %s: no access to cgroup %s: %s", c->cgroup, path, strerror(errno));
	}
	c->o.branch_opt = c->branch_opt;
	/* --mmap-flush: perf's limit, a quarter of a ring's mapping (with its control page) */
	size_t flush_max = (c->o.mmap_pages + 1) * (size_t)sysconf(_SC_PAGESIZE) / 4;
	if (c->o.mmap_flush > flush_max)
		c->o.mmap_flush = flush_max;
	if (c->so.enabled && !strcmp(c->o.output, "-"))
		return rec_fail(e, EINVAL, "--switch-output renames and starts files: it needs -o FILE, not - (pipe mode)");
	if (c->so.enabled && c->archive)
		return rec_fail(e, EINVAL, "--archive packs one OUTPUT: it excludes --switch-output (pack each "
				"OUTPUT.<timestamp> with rbrecord archive FILE OUT)");
	if (c->so.enabled)
		c->o.no_buildid = 1;   /* perf: --switch-output implies --no-buildid, switches stay cheap */
	if (c->ft.nr_events && !strcmp(c->o.output, "-"))
		return rec_fail(e, EINVAL, "--ftrace writes OUTPUT.trace.dat beside the perf.data: it needs -o FILE, not -");
	if (c->o.threads && !strcmp(c->o.output, "-"))   /* perf's words */
		return rec_fail(e, EINVAL, "--threads: parallel trace streaming is not available in pipe mode (-o -)");
	if (c->o.threads && c->archive)
		return rec_fail(e, EINVAL, "--archive packs one perf.data file: not with --threads (its data.N files)");
	if (c->o.threads && c->per_thread)
		return rec_fail(e, EINVAL, "--threads: the --per-thread option is mutually exclusive to parallel "
				"streaming mode");
	if (c->o.threads && c->o.comp_level)
		return rec_fail(e, EINVAL, "-z: not with --threads (the readers write their data.N files plain)");
	if ((c->o.threads || c->kcore) && c->so.enabled)
		return rec_fail(e, EINVAL, "--switch-output rotates a perf.data file: not with --threads or --kcore "
				"(a perf.data folder)");
	if (c->kcore && !strcmp(c->o.output, "-"))
		return rec_fail(e, EINVAL, "--kcore writes a perf.data folder (OUTPUT/data, OUTPUT/kcore_dir): it needs "
				"-o DIR, not -");
	return 0;
}

/* Mode and targets from the options, as perf record maps them. */
static int choose_mode(struct cli *c, int have_cmd, pid_t child, struct rec_err *e)
{
	int *v = NULL, n = 0;

	for (int i = 0; i < c->nr_pids; i++)
		if (add_threads(c->pids[i], &v, &n) < 0 && !c->uid) {   /* -u: one gone meanwhile is skipped */
			free(v);
			return rec_fail(e, ESRCH, "-p %d: no such process", c->pids[i]);
		}
	for (int i = 0; i < c->nr_tids; i++) {
		int *nv = realloc(v, (size_t)(n + 1) * sizeof(*v));
		if (!nv) {
			free(v);
			return rec_fail(e, ENOMEM, "out of memory");
		}
		v = nv;
		v[n++] = c->tids[i];
	}
	int attach = n > 0;
	if (!attach && have_cmd && !c->all_cpus && !c->o.cpu_list) {
		v = malloc(sizeof(*v));
		if (!v)
			return rec_fail(e, ENOMEM, "out of memory");
		v[n++] = child;
	}
	c->o.tids = v;
	c->o.nr_tids = n;
	if (c->per_thread) {
		if (!n)
			return rec_fail(e, EINVAL, "--per-thread needs a command, -p or -t");
		c->o.mode = REC_MODE_PER_THREAD;
		c->o.inherit = 0;
	} else if (c->o.cpu_list) {
		c->o.mode = REC_MODE_CPUS;
		c->o.inherit = !c->nr_tids;
	} else if (c->all_cpus || !n) {
		c->o.mode = REC_MODE_ALL;   /* perf: no command and no target means -a */
		c->o.inherit = 1;
	} else {
		c->o.mode = REC_MODE_DEFAULT;
		c->o.inherit = !c->nr_tids;   /* perf: -t implies --no-inherit */
	}
	if (c->o.no_inherit)
		c->o.inherit = 0;
	c->o.enable_on_exec = have_cmd && !attach && c->o.mode != REC_MODE_ALL &&
			      !(c->o.mode == REC_MODE_CPUS && !n);
	c->o.system_wide_synth = !n;
	return 0;
}

/*
 * --kcore, --threads: -o names a perf.data folder; with --kcore its
 * kcore_dir is copied before the events open (from /proc, or
 * $RBRECORD_KCORE_FROM holding kcore, kallsyms and modules). The recording
 * goes to OUTPUT/data (and OUTPUT/data.N with --threads).
 */
static int dir_output(struct cli *c, struct rec_err *e)
{
	const char *from = getenv("RBRECORD_KCORE_FROM");
	char kc[4096];
	size_t n = strlen(c->o.output) + sizeof("/kcore_dir");

	if (!from || !*from)
		from = "/proc";
	snprintf(kc, sizeof(kc), "%s/kcore", from);
	int fd = c->kcore ? open(kc, O_RDONLY | O_CLOEXEC) : -2;
	if (fd == -1)
		return rec_fail(e, errno, "--kcore: %s cannot be read: %s (it needs root and a kernel with "
				"CONFIG_PROC_KCORE)", kc, strerror(errno));
	if (fd >= 0)
		close(fd);
	if (!(c->dir_data = malloc(n)))
		return rec_fail(e, ENOMEM, "out of memory");
	if (perf_dir_prepare(c->o.output, e) < 0)
		return -1;
	snprintf(c->dir_data, n, "%s/kcore_dir", c->o.output);
	if (c->kcore && kcore_copy(from, c->dir_data, e) < 0)
		return -1;
	snprintf(c->dir_data, n, "%s/data", c->o.output);
	c->o.dir = c->o.output;
	c->o.output = c->dir_data;
	return 0;
}

/* The output could not be written (full disk, I/O error): sysexits' EX_IOERR. */
#define EXIT_WRITE_FAILED 74

static int exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

#ifdef HAVE_LIBARCHIVE
/* Pack @data and the objects it needs into @out; returns 0 or 1 after saying why. */
static int pack(const char *data, const char *out, int quiet)
{
	struct archive_stats st;
	struct rec_err e = { 0 };
	if (archive__write(data, out, &st, &e) < 0) {
		fprintf(stderr, "rbrecord: %s\n", e.msg);
		return 1;
	}
	if (!quiet)
		fprintf(stderr, "rbrecord: wrote %s: %s and %u objects by build-id (%u no longer on disk)\n",
			out, data, st.objects, st.missing);
	return 0;
}
#endif

/* A write the disk refused (full, failing, over quota or the file size limit): exit 74, not 1. */
static int disk_error(int err)
{
	return err == ENOSPC || err == EIO || err == EFBIG || err == EDQUOT;
}

int main(int argc, char **argv)
{
	struct cli c;
	struct rec_err e = { 0 };
	struct record *s = NULL;
	struct child child = { -1, -1, -1 };
	struct ftrace_rec *ft = NULL;
	int status = 0, have_status = 0, failed = 0, write_failed = 0;

#ifdef HAVE_LIBARCHIVE
	if (argc >= 2 && !strcmp(argv[1], "archive")) {   /* rbrecord archive PERF.DATA OUT */
		if (argc != 4) {
			fprintf(stderr, "usage: rbrecord archive PERF.DATA OUT.tar[.gz|.xz|.zst|.bz2]|OUT.zip\n");
			return 129;
		}
		return pack(argv[2], argv[3], 0);
	}
#endif
	memset(&c, 0, sizeof(c));
	c.o.cgroup_fd = -1;
	c.o.output = "perf.data";
	c.o.clockid = -1;
	c.o.mmap_pages = (512 * 1024) / (size_t)sysconf(_SC_PAGESIZE);
	if (parse_args(&c, argc, argv, &e) < 0) {
		fprintf(stderr, "rbrecord: %s\n", e.msg);
		cli_free(&c);
		return 129;
	}
	if (c.pmu_info)
		return pmu_info_print(stdout, c.json) < 0 ? 1 : 0;
	if (!c.evl.n && events__parse(&c.evl, default_event(), &e) < 0) {
		fprintf(stderr, "rbrecord: %s\n", e.msg);
		cli_free(&c);
		return 1;
	}
	if (c.verbose || c.dry_run)
		show_events(&c.evl);
	if (c.dry_run) {
		cli_free(&c);
		return 0;
	}
	if ((c.kcore || c.o.threads) && dir_output(&c, &e) < 0) {
		fprintf(stderr, "rbrecord: %s\n", e.msg);
		cli_free(&c);
		return 1;
	}
	char **cmd = optind < argc ? argv + optind : NULL;
	int ctl_fd = -1, ack_fd = -1;
	if (c.control && open_control(c.control, &ctl_fd, &ack_fd, &e) < 0) {
		fprintf(stderr, "rbrecord: %s\n", e.msg);
		return 129;
	}
	install_signals();
	raise_nofile();
	if (cmd && fork_command(&child, cmd) < 0) {
		fprintf(stderr, "rbrecord: cannot start %s: %s\n", cmd[0], strerror(errno));
		return 1;
	}
	if (c.ft.nr_events && !(c.ft.output = ftrace__output_name(c.o.output))) {
		fprintf(stderr, "rbrecord: out of memory\n");
		return 1;
	}
	int orc;
	for (int tries = 0;; tries++) {
		orc = choose_mode(&c, cmd != NULL, child.pid, &e) < 0 || record__open(&s, &c.o, &c.evl, &e) < 0 ? -1 : 0;
		if (orc == 0 || !c.uid || e.err != ESRCH || tries == 20)
			break;
		/* -u: a process exited between the listing and the open (perf skips it): list them again */
		free((void *)c.o.tids);
		c.o.tids = NULL;
		free(c.pids);
		c.pids = NULL;
		if ((c.nr_pids = uid_pids(c.uid_v, &c.pids)) <= 0)
			break;
	}
	if (orc < 0 ||
	    (c.ft.nr_events && ftrace__open(&ft, &c.ft, &e) < 0) ||
	    record__start(s, argc, argv, &e) < 0 || (ft && ftrace__start(ft, &e) < 0) ||
	    (!c.o.enable_on_exec && !c.o.delay_ms && record__enable(s, &e) < 0) ||
	    (!c.o.enable_on_exec && c.o.delay_ms && record__enable_tracking(s, &e) < 0)) {
		fprintf(stderr, "rbrecord: %s\n", e.msg);
		ftrace__free(ft);
		if (child.pid > 0) {
			close(child.go_fd);   /* the command exits without running */
			waitpid(child.pid, NULL, 0);
		}
		if (s) {
			record__finish(s, &e);
			record__free(s);
		}
		cli_free(&c);
		return 1;
	}
	if (c.verbose) {
		show_rings(s);
		/* perf record -vv's words: the flush threshold after its limit, the zstd level */
		fprintf(stderr, "rbrecord: mmap flush: %zu\n", c.o.mmap_flush ? c.o.mmap_flush : 1);
		fprintf(stderr, "rbrecord: comp level: %d\n", c.o.comp_level);
	}
	if (cmd) {
		int err = start_command(&child);
		if (err) {
			fprintf(stderr, "rbrecord: cannot run %s: %s\n", cmd[0], strerror(err));
			failed = 1;
		}
	}
	struct timespec enable_at;   /* -D MSECS: when the sampling events start */
	clock_gettime(CLOCK_MONOTONIC, &enable_at);
	enable_at.tv_sec += c.o.delay_ms / 1000;
	enable_at.tv_nsec += (long)(c.o.delay_ms % 1000) * 1000000;
	if (enable_at.tv_nsec >= 1000000000) {
		enable_at.tv_sec++;
		enable_at.tv_nsec -= 1000000000;
	}
	int delayed = c.o.delay_ms > 0;
	switch_out__start(&c.so);
	while (!stop_requested && !failed) {
		int wait_ms = 250;
		if (delayed) {
			struct timespec now;
			clock_gettime(CLOCK_MONOTONIC, &now);
			long long left = (enable_at.tv_sec - now.tv_sec) * 1000LL + (enable_at.tv_nsec - now.tv_nsec) / 1000000;
			if (left <= 0) {
				delayed = 0;
				if (record__enable(s, &e) < 0) {
					fprintf(stderr, "rbrecord: -D %d: %s\n", c.o.delay_ms, e.msg);
					failed = 1;
					break;
				}
			} else if (left < wait_ms) {
				wait_ms = (int)left;
			}
		}
		if (child.pid > 0 && child_exited) {
			pid_t r = waitpid(child.pid, &status, WNOHANG);
			if (r == child.pid) {
				have_status = 1;
				break;
			}
			child_exited = 0;
		}
		int ctl_ready = 0;
		int rc = record__poll_extra(s, switch_out__wait_ms(&c.so, delayed ? wait_ms : 250), ctl_fd, &ctl_ready);
		if (rc < 0 && rc != -EINTR) {
			fprintf(stderr, "rbrecord: poll failed: %s\n", strerror(-rc));
			failed = 1;
			break;
		}
		if (ctl_ready && control_commands(s, ctl_fd, ack_fd, &e) < 0) {
			fprintf(stderr, "rbrecord: %s\n", e.msg);
			failed = 1;
			break;
		}
		if (!cmd && record__targets_gone(s))
			stop_requested = SIGCHLD;   /* perf record -p ends when the process does */
		rc = record__drain(s, &e);   /* forward rings (with --overwrite: none, or the AUX events') */
		/*
		 * A request is read and cleared in one atomic exchange: a SIGUSR2
		 * between a read and a separate clear would be lost (the test of a
		 * flag and its clearing were two steps). Relaxed: the handler runs
		 * on this thread and writes nothing else, so only the exchange's
		 * indivisibility matters, not an order with other memory.
		 */
		if (rc == 0 && (c.o.overwrite || c.o.snapshot) && __atomic_exchange_n(&snapshot_requested, 0, __ATOMIC_RELAXED))
			rc = record__snapshot(s, &e);
		int usr2 = __atomic_exchange_n(&switch_requested, 0, __ATOMIC_RELAXED);
		if (rc == 0 && switch_out__due(&c.so, s, usr2))
			rc = switch_out__dump(&c.so, s, c.o.output, 0, c.quiet, &e);
		for (; pending_snapshot_acks > 0; pending_snapshot_acks--)
			if (ack_fd >= 0 && write(ack_fd, "ack\n", 4) < 0)
				break;
		if (rc < 0) {
			fprintf(stderr, "rbrecord: %s%s\n", e.msg,
				e.err == ENOSPC ? ": the output cannot grow (full disk, quota or file size limit); "
						  "recording stopped, finishing the file" : "");
			failed = 1;
			write_failed = disk_error(e.err);
		}
	}
	if (child.pid > 0 && !have_status) {
		/* perf: a command still running when the recording stops gets SIGTERM */
		if (waitpid(child.pid, &status, WNOHANG) == 0) {
			if (write_failed)
				fprintf(stderr, "rbrecord: stopping %s (SIGTERM): the recording cannot go on\n", cmd[0]);
			kill(child.pid, SIGTERM);
			waitpid(child.pid, &status, 0);
		}
		have_status = 1;
	}
	if (ft) {
		struct ftrace_stats fst;
		if (ftrace__stop(ft, &fst, &e) < 0) {
			fprintf(stderr, "rbrecord: %s\n", e.msg);
			/* one left by an earlier recording would be read as this one's */
			fprintf(stderr, "rbrecord: %s was not written%s: the ftrace events are lost (%s keeps the "
				"perf events)\n", c.ft.output, unlink(c.ft.output) == 0 ? " (an older one was removed)" : "",
				c.o.output);
			failed = 1;
			write_failed |= disk_error(e.err);
		} else if (!c.quiet) {
			fprintf(stderr, "rbrecord: wrote %s: %llu ftrace pages (%.3f MB), lost %llu events "
				"(overrun), %llu dropped\n", c.ft.output, (unsigned long long)fst.pages,
				(double)fst.bytes / 1e6, (unsigned long long)fst.overrun, (unsigned long long)fst.dropped);
		}
		ftrace__free(ft);
	}
	struct rec_stats st;
	int frc = record__finish(s, &e);
	record__stats(s, &st);
	if (frc < 0) {
		fprintf(stderr, "rbrecord: %s\n", e.msg);
		failed = 1;
		write_failed |= disk_error(e.err);
	}
	/* perf: the last file gets its timestamp name too */
	if (c.so.enabled && access(c.o.output, F_OK) == 0 && switch_out__dump(&c.so, s, c.o.output, 1, c.quiet, &e) < 0) {
		fprintf(stderr, "rbrecord: %s\n", e.msg);
		failed = 1;
		write_failed |= disk_error(e.err);
	}
	write_failed |= c.so.enabled && st.disk_full;
	if (!c.quiet) {
		fprintf(stderr, "rbrecord: captured %llu samples, lost %llu\n", (unsigned long long)st.samples,
			/* LOST records and the final per-event totals (LOST_SAMPLES) count the same samples */
			(unsigned long long)(st.lost_samples > st.lost ? st.lost_samples : st.lost));
		fprintf(stderr, "rbrecord: wrote %.3f MB to %s%s (%llu records, %llu LOST records)\n",
			(double)st.bytes / 1e6, strcmp(c.o.output, "-") ? c.o.output : "<stdout>",
			c.so.enabled ? ".<timestamp> files" : "",
			(unsigned long long)st.records, (unsigned long long)st.lost_records);
		if (st.aux)
			fprintf(stderr, "rbrecord: AUX (%s, %zu KiB per ring): %llu bytes in %llu AUXTRACE records; "
				"%llu AUX records (%llu truncated, %llu partial, %llu collision), %llu ITRACE_START, "
				"%llu AUX_OUTPUT_HW_ID\n", st.aux_pmu, st.aux_bytes_per_ring / 1024,
				(unsigned long long)st.aux_bytes, (unsigned long long)st.aux_chunks,
				(unsigned long long)st.aux_records, (unsigned long long)st.aux_truncated,
				(unsigned long long)st.aux_partial, (unsigned long long)st.aux_collision,
				(unsigned long long)st.itrace_start, (unsigned long long)st.aux_hw_id);
		if (c.o.comp_level)
			fprintf(stderr, "rbrecord: compressed %.3f MB of records into %.3f MB (zstd level %d, ratio %.3f)\n",
				(double)st.comp_in / 1e6, (double)st.comp_out / 1e6, c.o.comp_level,
				st.comp_out ? (double)st.comp_in / (double)st.comp_out : 0.0);
		if (c.o.snapshot || c.o.overwrite)
			fprintf(stderr, "rbrecord: %llu snapshots%s", (unsigned long long)st.snapshots,
				c.o.snapshot ? "" : "\n");
		if (c.o.snapshot)
			fprintf(stderr, ", %llu AUX bytes; %llu reads found the buffer wrapped, %llu bytes known overwritten "
				"before a snapshot\n", (unsigned long long)st.snap_aux_bytes,
				(unsigned long long)st.snap_wrapped, (unsigned long long)st.snap_overwritten);
	}
	if (st.disk_full && c.so.enabled)
		fprintf(stderr, "rbrecord: the output could not grow: the %s.<timestamp> files written are complete and "
			"readable, the last one up to where the disk was full\n", c.o.output);
	else if (st.disk_full)
		fprintf(stderr, "rbrecord: the output could not grow: %s keeps what was written before%s\n", c.o.output,
			frc < 0 ? " (finishing it failed too: read it best effort)" : " and is complete and readable");
	record__free(s);
#ifdef HAVE_LIBARCHIVE
	if (c.archive && !failed && strcmp(c.o.output, "-") && pack(c.o.output, c.archive, c.quiet))
		failed = 1;
#endif
	if (c.control && !strncmp(c.control, "fifo:", 5)) {
		close(ctl_fd);
		if (ack_fd >= 0)
			close(ack_fd);
	}
	cli_free(&c);
	/* the output could not be written: our own status, not the SIGTERM we sent the command */
	if (write_failed)
		return EXIT_WRITE_FAILED;
	if (have_status && cmd)
		return failed && exit_code(status) == 0 ? 1 : exit_code(status);
	return failed ? 1 : 0;
}
