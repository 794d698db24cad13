/*
 * machine.c - see machine.h. perf's rules reproduced here, because the
 * database must say what perf's would say:
 *  - a thread first seen gets the comm ":<tid>"; its first real COMM (or the
 *    parent's comm at FORK) overrides that one instead of adding another;
 *  - FORK of a new process copies the parent's maps, of a thread shares them;
 *  - a sample shows the exec comm of its process's main thread when an
 *    evsel has comm_exec, else the thread's current comm;
 *  - a user-mode address outside every user map is looked up in the kernel
 *    maps (vsyscall / vdso), and object addresses are ip - start + pgoff.
 * Symbols of an object are loaded on its first use: from perf's build-id
 * cache when its build-id is known, else from the recorded path (after
 * checking the build-id when there is one); the symbols the recording
 * itself carries (simpleperf's) when no file it vouches for has them.
 */
#include "config.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "machine.h"
#include "elf/elf_note.h"

#define PD_MISC_KERNEL 1
#define PD_MISC_USER 2

struct rb_machine {
	struct rb_machine_opts o;
	char buildid_dir[4096];
	struct rb_thread **threads;     /* open-addressing hash on tid */
	size_t thr_cap, thr_n;
	struct rb_dso **dsos;
	size_t nr_dsos, cap_dsos;
	struct rb_maps kmaps;           /* kernel and modules */
	struct rb_comm **comms;         /* every comm ever made, freed with the machine */
	size_t nr_comms, cap_comms;
	uint64_t kernel_start;
	int kimage_tried;               /* kernel image (--kcore / --vmlinux) looked at */
	char *kimage_path;              /* its file, NULL if unusable */
	int kimage_kcore;               /* it is kcore: modules are in it too */
	struct rb_elf_segment *kseg;    /* its PT_LOAD segments */
	size_t nr_kseg;
	char kimage_why[600];           /* why kernel code has no image, for the gap */
	char kref_name[64];             /* the kernel map's reference symbol ("_text" of "[kernel.kallsyms]_text") */
	uint64_t kref_addr;             /* where the recording's kernel had it (the map's pgoff) */
	uint64_t kreloc;                /* vmlinux addresses + kreloc = the recording's (KASLR) */
	int oom;                        /* a file lookup ran out of memory: "not found" would be a lie */
	int symdir_tried;               /* the --symdir folders indexed (or that failed, said once) */
	struct rb_symdir *symdir;       /* their index, NULL if none */
	uint64_t maps_gen;              /* moves with every change of any maps or of what a DSO's symbols come from */
	struct rcache *rcache;          /* resolve's last answers (resolve_in), allocated on first use */
};

/* ------------------------------------------------------------- dsos */

static struct rb_dso *dso_find(struct rb_machine *m, const char *name)
{
	for (size_t i = 0; i < m->nr_dsos; i++)
		if (!strcmp(m->dsos[i]->long_name, name))
			return m->dsos[i];
	return NULL;
}

static struct rb_dso *dso_findnew(struct rb_machine *m, const char *name, int kernel)
{
	struct rb_dso *d = dso_find(m, name);
	if (d)
		return d;
	if (m->nr_dsos == m->cap_dsos) {
		size_t cap = m->cap_dsos ? 2 * m->cap_dsos : 64;
		struct rb_dso **v = realloc(m->dsos, cap * sizeof(*v));
		if (!v)
			return NULL;
		m->dsos = v;
		m->cap_dsos = cap;
	}
	d = calloc(1, sizeof(*d));
	if (!d || !(d->long_name = strdup(name))) {
		free(d);
		return NULL;
	}
	const char *slash = strrchr(d->long_name, '/');
	d->short_name = slash ? slash + 1 : d->long_name;
	d->kernel = kernel;
	m->dsos[m->nr_dsos++] = d;
	return d;
}

static int is_kernel_module_name(const char *name);
static void module_map_name(const char *filename, char *name, size_t n);

/* The object a build-id or recorded symbols name: with @kernel_mode, the kernel or a module's "[name]" */
static struct rb_dso *dso_of_feature(struct rb_machine *m, const char *name, int kernel_mode)
{
	char mod[4096];
	int kernel = kernel_mode && !strncmp(name, "[kernel.kallsyms]", 17);
	if (kernel) {
		name = "[kernel.kallsyms]";
	} else if (kernel_mode && is_kernel_module_name(name)) {   /* the object its maps name */
		module_map_name(name, mod, sizeof(mod));
		name = mod;
	}
	return dso_findnew(m, name, kernel);
}

int rb_machine_set_build_id(struct rb_machine *m, const char *name, const uint8_t *id, int size, int kernel_mode)
{
	struct rb_dso *d = dso_of_feature(m, name, kernel_mode);
	if (!d)
		return -ENOMEM;
	m->maps_gen++;
	if (size > 20)
		size = 20;
	memcpy(d->build_id, id, (size_t)size);
	d->build_id_size = size;
	return 0;
}

int rb_machine_set_recorded_symbols(struct rb_machine *m, const char *name, int kernel_mode, struct rb_symtab *t)
{
	struct rb_dso *d = dso_of_feature(m, name, kernel_mode);
	if (!d) {
		rb_symtab_free(t);
		return -ENOMEM;
	}
	rb_symtab_free(d->recorded);
	d->recorded = t;
	m->maps_gen++;
	return 0;
}

static void hex(const uint8_t *id, int n, char *out)
{
	for (int i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * n] = 0;
}

/* Running kernel's build-id from /sys/kernel/notes (GNU note, type 3). */
static int running_kernel_build_id(uint8_t *id)
{
	uint8_t buf[4096];
	FILE *f = fopen("/sys/kernel/notes", "rb");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	return rb_elf_note_build_id(buf, n, RB_ELF_NATIVE_MSB, id, 20);
}

/* [name] of a kernel module map, or NULL. */
static int module_name(const struct rb_dso *d, char *buf, size_t n)
{
	size_t len = strlen(d->long_name);
	if (d->kernel || len < 3 || d->long_name[0] != '[' || d->long_name[len - 1] != ']' ||
	    !strcmp(d->long_name, "[vdso]") || !strcmp(d->long_name, "[vsyscall]"))
		return 0;
	snprintf(buf, n, "%.*s", (int)(len - 2), d->long_name + 1);
	return 1;
}

/* The kallsyms file for this recording: --kallsyms, perf's build-id cache, or the running kernel's. */
static const char *kallsyms_path(struct rb_machine *m, char *buf, size_t n)
{
	if (m->o.kallsyms)
		return m->o.kallsyms;
	struct rb_dso *k = dso_find(m, "[kernel.kallsyms]");
	if (k && k->build_id_size) {
		char bid[41];
		hex(k->build_id, k->build_id_size, bid);
		snprintf(buf, n, "%s/[kernel.kallsyms]/%s/kallsyms", m->buildid_dir, bid);
		if (access(buf, R_OK) == 0)
			return buf;
	}
	uint8_t run[20];
	int len = running_kernel_build_id(run);
	if (!k || !k->build_id_size || (len == k->build_id_size && !memcmp(run, k->build_id, (size_t)len)))
		return "/proc/kallsyms";
	return NULL;
}

static int kernel_image(struct rb_machine *m);

static void machine_warn(struct rb_machine *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void machine_warn(struct rb_machine *m, const char *fmt, ...)
{
	char msg[1200];
	va_list ap;
	if (!m->o.warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	m->o.warn(m->o.warn_ctx, msg);
}

/* What the --symdir folders hold for @d (the folders walked on the first call); a refusal said once. */
static const struct rb_symdir_hit *symdir_hit(struct rb_machine *m, struct rb_dso *d)
{
	if (!m->symdir_tried && m->o.nr_symdirs) {
		char msg[600];
		m->symdir_tried = 1;
		if (!(m->symdir = rb_symdir_new(m->o.symdirs, m->o.nr_symdirs, msg, sizeof(msg))) && errno == ENOMEM)
			m->oom = 1;
		else if (!m->symdir)
			machine_warn(m, "%s: binaries are not looked for there", msg);
	}
	if (d->symdir_tried)
		return &d->symdir;
	d->symdir_tried = 1;
	rb_symdir_find(m->symdir, d->long_name, d->kernel, d->build_id, (size_t)d->build_id_size, &d->symdir);
	char want[41], got[41];
	hex(d->build_id, d->build_id_size, want);
	hex(d->symdir.id, d->symdir.id_size, got);
	if (d->symdir.how == RB_SYMDIR_MISMATCH)
		machine_warn(m, "%s: build-id %s, not the %s recorded for %s: not used", d->symdir.path,
			     d->symdir.id_size ? got : "(none)", want, d->long_name);
	else if (d->symdir.how == RB_SYMDIR_UNREADABLE)
		machine_warn(m, "%s: cannot be read as an ELF file: not used for %s", d->symdir.path, d->long_name);
	return &d->symdir;
}

/* The --symdir file to use for @d, NULL if none matched. */
static const char *symdir_file(struct rb_machine *m, struct rb_dso *d)
{
	const struct rb_symdir_hit *h = symdir_hit(m, d);
	return h->how == RB_SYMDIR_BUILD_ID || h->how == RB_SYMDIR_NAME ? h->path : NULL;
}

/*
 * Whether a file the recording vouches for may hold @d's symbols, to be
 * tried before the recording's own (rb_machine_set_recorded_symbols): one
 * with the recorded build-id, one the user named (--symdir, --vmlinux,
 * --kcore, --kallsyms). Without a build-id, a file found by its recorded
 * path (or this machine's /proc/kallsyms) is more likely this machine's
 * than the recording's.
 */
static int vouched_file(struct rb_machine *m, struct rb_dso *d)
{
	char mod[256];
	if (d->kernel || module_name(d, mod, sizeof(mod))) {
		struct rb_dso *k = dso_find(m, "[kernel.kallsyms]");
		if (m->o.kallsyms || m->o.kcore || (d->kernel && m->o.vmlinux) || (k && k->build_id_size))
			return 1;
	} else if (d->build_id_size) {
		return 1;
	}
	return symdir_file(m, d) != NULL;
}

/* The recording's symbols become @d's (a file's, if any, are dropped). */
static void take_recorded(struct rb_dso *d)
{
	rb_symtab_free(d->syms);
	free(d->syms_path);
	d->syms_path = NULL;
	d->syms = d->recorded;
	d->recorded = NULL;
	d->syms_recorded = 1;
}

static void load_file_symbols(struct rb_machine *m, struct rb_dso *d, uint64_t map_start);

static void load_symbols(struct rb_machine *m, struct rb_dso *d, uint64_t map_start)
{
	d->syms_tried = 1;
	m->maps_gen++;
	if (d->recorded && !vouched_file(m, d)) {
		take_recorded(d);
		return;
	}
	load_file_symbols(m, d, map_start);
	if (d->recorded && !rb_symtab_count(d->syms))
		take_recorded(d);
}

static void load_file_symbols(struct rb_machine *m, struct rb_dso *d, uint64_t map_start)
{
	char msg[256], kpath[8192], mod[256];
	/* perf takes the kernel's symbols from --vmlinux when given (and the build-id agrees); a --symdir vmlinux too */
	if (d->kernel && (m->o.vmlinux || symdir_file(m, d)) && !m->o.kallsyms && !m->o.kcore && kernel_image(m)) {
		if (rb_symtab_load_vmlinux(&d->syms, m->kimage_path, m->kreloc, msg, sizeof(msg)) == 0)
			d->syms_path = strdup(m->kimage_path);
		else
			d->syms = NULL;
		return;
	}
	if (d->kernel || module_name(d, mod, sizeof(mod))) {
		const char *path = kallsyms_path(m, kpath, sizeof(kpath));
		int rc = !path ? -1 : d->kernel ? rb_symtab_load_kallsyms(&d->syms, path, msg, sizeof(msg)) :
			 rb_symtab_load_kallsyms_module(&d->syms, path, mod, map_start, msg, sizeof(msg));
		if (rc == 0)
			d->syms_path = strdup(path);
		else
			d->syms = NULL;
		return;
	}
	if (d->anon || (d->long_name[0] != '/' && strcmp(d->long_name, "[vdso]")))
		return;                 /* //anon, [heap], ... */
	struct rb_symtab_elf_opts eo = {
		.debug_path = symdir_file(m, d),
		.build_id = d->build_id_size ? d->build_id : NULL,
		.build_id_len = (size_t)d->build_id_size,
		.root = m->o.symfs,
		.buildid_dir = m->buildid_dir,
	};
	if (rb_symtab_load_elf_opts(&d->syms, d->long_name, &eo, msg, sizeof(msg)) < 0) {
		d->syms = NULL;
		return;
	}
	d->syms_path = rb_symtab_source(d->syms) ? strdup(rb_symtab_source(d->syms)) : NULL;
	/* like perf, an object whose build-id the recording did not carry (pipe mode) takes its file's */
	if (!d->build_id_size && d->long_name[0] == '/') {
		char path[8192];
		snprintf(path, sizeof(path), "%s%s", m->o.symfs ? m->o.symfs : "", d->long_name);
		int n = rb_elf_build_id(path, d->build_id, sizeof(d->build_id));
		d->build_id_size = n > 0 ? n : 0;
	}
}

const char *rb_machine_dso_image(struct rb_machine *m, struct rb_dso *d)
{
	if (d->image_tried)
		return d->image_path;
	d->image_tried = 1;
	if (d->kernel || d->anon || (d->long_name[0] != '/' && strcmp(d->long_name, "[vdso]")))
		return NULL;            /* the kernel needs kcore or vmlinux; //anon has no file */
	char path[8192];
	const char *found = symdir_file(m, d);
	int r = found ? 1 : rb_elf_find_image(d->long_name, m->o.symfs, m->buildid_dir,
					       d->build_id_size ? d->build_id : NULL, (size_t)d->build_id_size,
					       path, sizeof(path));
	if (r == 1 && !(d->image_path = strdup(found ? found : path)))
		r = -ENOMEM;
	if (r == -ENOMEM) {
		m->oom = 1;
		d->image_tried = 0;     /* not known to be missing */
	}
	return d->image_path;
}

static struct rb_map *maps_find(struct rb_maps *ms, uint64_t addr);

/* The kernel image given (--kcore before --vmlinux, as perf prefers kcore), read once. */
static int kernel_image(struct rb_machine *m)
{
	char path[4096], msg[320];
	if (m->kimage_tried)
		return m->kimage_path != NULL;
	m->kimage_tried = 1;
	struct rb_dso *k = dso_find(m, "[kernel.kallsyms]");
	if (m->o.kcore) {
		snprintf(path, sizeof(path), "%s/kcore", m->o.kcore);
		m->kimage_kcore = 1;
	} else if (m->o.vmlinux) {
		snprintf(path, sizeof(path), "%s", m->o.vmlinux);
	} else if (k && symdir_file(m, k)) {
		snprintf(path, sizeof(path), "%s", symdir_file(m, k));
	} else {
		snprintf(m->kimage_why, sizeof(m->kimage_why), "kernel code needs --vmlinux, --kcore or a vmlinux in --symdir");
		return 0;
	}
	int n = rb_elf_load_segments(path, &m->kseg, msg, sizeof(msg));
	if (n < 0) {
		snprintf(m->kimage_why, sizeof(m->kimage_why), "%s", msg);
		return 0;
	}
	m->nr_kseg = (size_t)n;
	uint8_t id[20];
	int len = m->kimage_kcore ? 0 : rb_elf_build_id(path, id, sizeof(id));
	if (len > 0 && k && k->build_id_size &&
	    (len != k->build_id_size || memcmp(id, k->build_id, (size_t)len))) {
		char want[41], got[41];
		hex(k->build_id, k->build_id_size, want);
		hex(id, len, got);
		snprintf(m->kimage_why, sizeof(m->kimage_why),
			 "vmlinux %.400s has build-id %s, the recording's kernel has %s: not used", path, got, want);
		return 0;
	}
	/* KASLR: perf's ref_reloc_sym, the symbol the kernel map names and where it was */
	uint64_t unrelocated;
	if (!m->kimage_kcore && m->kref_name[0] && rb_elf_symbol_value(path, m->kref_name, &unrelocated) == 1)
		m->kreloc = m->kref_addr - unrelocated;
	m->kimage_path = strdup(path);
	return m->kimage_path != NULL;
}

const char *rb_machine_kernel_image_problem(const struct rb_machine *m)
{
	return (m->o.vmlinux || m->o.kcore) && m->kimage_tried && !m->kimage_path ? m->kimage_why : NULL;
}

static int kernel_code_at(struct rb_machine *m, const struct rb_dso *d, uint64_t ip, struct rb_code_piece *out,
			  const char **why)
{
	char mod[256];
	if (!kernel_image(m)) {
		*why = m->kimage_why;
		return -ENODATA;
	}
	if (!d->kernel && !m->kimage_kcore) {
		snprintf(m->kimage_why, sizeof(m->kimage_why), "%s%s is not in the vmlinux (a kcore copy has modules)",
			 module_name(d, mod, sizeof(mod)) ? "module " : "", d->long_name);
		*why = m->kimage_why;
		return -ENODATA;
	}
	for (size_t i = 0; i < m->nr_kseg; i++) {
		const struct rb_elf_segment *g = &m->kseg[i];
		if (ip - m->kreloc >= g->vaddr && ip - m->kreloc - g->vaddr < g->size) {
			*out = (struct rb_code_piece){ m->kimage_path, g->offset, g->size, g->vaddr + m->kreloc };
			return 0;
		}
	}
	snprintf(m->kimage_why, sizeof(m->kimage_why), "no PT_LOAD segment of %s covers it", m->kimage_path);
	*why = m->kimage_why;
	return -ENODATA;
}

static int code_at(struct rb_machine *m, struct rb_thread *t, uint64_t ip, struct rb_code_piece *out,
		   const char **why, int note);

int rb_machine_code_at(struct rb_machine *m, struct rb_thread *t, uint64_t ip, struct rb_code_piece *out,
		       const char **why)
{
	return code_at(m, t, ip, out, why, 1);
}

int rb_machine_file_at(struct rb_machine *m, struct rb_thread *t, uint64_t ip, struct rb_code_piece *out)
{
	return code_at(m, t, ip, out, NULL, 0);
}

/* @note: a missing file marks its object (image_missing: the run is partial) */
static int code_at(struct rb_machine *m, struct rb_thread *t, uint64_t ip, struct rb_code_piece *out,
		   const char **why, int note)
{
	const char *dummy;
	if (!why)
		why = &dummy;
	*why = NULL;
	/* as rb_machine_find_map, without loading symbols: user maps below kernel_start, else the kernel's */
	struct rb_map *map = t && ip < rb_machine_kernel_start(m) ? maps_find(t->maps, ip) : NULL;
	int kernel = !map;
	if (!map && !(map = maps_find(&m->kmaps, ip)))
		return -ENOENT;
	if (kernel && strcmp(map->dso->long_name, "[vdso]") && strcmp(map->dso->long_name, "[vsyscall]")) {
		int rc = kernel_code_at(m, map->dso, ip, out, why);
		map->dso->image_missing |= note && rc == -ENODATA;
		return rc;
	}
	const char *file = rb_machine_dso_image(m, map->dso);
	if (!file && m->oom)
		return -ENOMEM;
	if (!file) {
		map->dso->image_missing |= note;
		return -ENODATA;
	}
	*out = (struct rb_code_piece){ file, map->pgoff, map->end - map->start, map->start };
	return 0;
}

static size_t uslot(struct rb_sym *const *h, size_t cap, uint64_t addr)
{
	size_t mask = cap - 1, i = (size_t)((addr * 0x9e3779b97f4a7c15ULL) >> 20) & mask;
	while (h[i] && h[i]->start != addr)
		i = (i + 1) & mask;
	return i;
}

const struct rb_sym *rb_machine_find_unknown(const struct rb_dso *d, uint64_t addr)
{
	return d->ucap ? d->uhash[uslot(d->uhash, d->ucap, addr)] : NULL;
}

/* Unknown symbols are looked up for every unresolved address: hashed, not scanned. */
static int uhash_add(struct rb_dso *d, struct rb_sym *s)
{
	if ((d->nr_extra + 1) * 2 > d->ucap) {
		size_t cap = d->ucap ? 2 * d->ucap : 64;
		struct rb_sym **h = calloc(cap, sizeof(*h));
		if (!h)
			return -ENOMEM;
		for (size_t i = 0; i < d->ucap; i++)
			if (d->uhash[i])
				h[uslot(h, cap, d->uhash[i]->start)] = d->uhash[i];
		free(d->uhash);
		d->uhash = h;
		d->ucap = cap;
	}
	d->uhash[uslot(d->uhash, d->ucap, s->start)] = s;
	return 0;
}

struct rb_inline_sym {
	struct rb_sym sym;
	struct rb_inline_sym *next;
};

const struct rb_sym *rb_machine_inline_sym(struct rb_machine *m, struct rb_dso *d, const struct rb_sym *base,
					   const char *name)
{
	(void)m;
	if (!strcmp(name, base->name))
		return base;
	for (struct rb_inline_sym *i = d->inlines; i; i = i->next)
		if (i->sym.start == base->start && i->sym.end == base->end && !strcmp(i->sym.name, name))
			return &i->sym;
	size_t n = strlen(name) + 1;
	struct rb_inline_sym *i = malloc(sizeof(*i) + n);
	if (!i)
		return NULL;
	char *copy = (char *)(i + 1);
	memcpy(copy, name, n);
	i->sym = (struct rb_sym){ base->start, base->end, base->binding, copy };
	i->next = d->inlines;
	d->inlines = i;
	return &i->sym;
}

const struct rb_sym *rb_machine_unknown_sym(struct rb_machine *m, struct rb_dso *d, uint64_t addr)
{
	(void)m;
	const struct rb_sym *found = rb_machine_find_unknown(d, addr);
	if (found)
		return found;
	if (d->nr_extra == d->cap_extra) {
		size_t cap = d->cap_extra ? 2 * d->cap_extra : 16;
		struct rb_sym **v = realloc(d->extra, cap * sizeof(*v));
		if (!v)
			return NULL;
		d->extra = v;
		d->cap_extra = cap;
	}
	struct rb_sym *s = calloc(1, sizeof(*s));   /* one allocation each: pointers stay valid */
	if (!s)
		return NULL;
	s->start = s->end = addr;
	s->name = "unknown";
	if (uhash_add(d, s) < 0) {
		free(s);
		return NULL;
	}
	d->extra[d->nr_extra++] = s;
	return s;
}

const struct rb_sym *rb_machine_export_sym_miss(struct rb_machine *m, const struct rb_addr_loc *al, uint64_t at)
{
	if (al->dso->syms) {
		size_t v = rb_symtab_version(al->dso->syms);
		const struct rb_sym *s = rb_symtab_export_lookup(al->dso->syms, at);
		if (rb_symtab_version(al->dso->syms) != v)
			m->maps_gen++;       /* a symbol added: resolve_in's answers may change */
		return s;
	}
	return rb_machine_unknown_sym(m, al->dso, at);
}

/* ------------------------------------------------------------- maps */

static struct rb_maps *maps_new(void)
{
	struct rb_maps *ms = calloc(1, sizeof(*ms));
	if (ms)
		ms->refs = 1;
	return ms;
}

static struct rb_maps *maps_get(struct rb_maps *ms)
{
	if (ms)
		ms->refs++;
	return ms;
}

static void maps_put(struct rb_machine *m, struct rb_maps *ms)
{
	if (ms && --ms->refs == 0) {
		m->maps_gen++;            /* a new one may take its address */
		free(ms->v);
		free(ms);
	}
}

static struct rb_maps *maps_clone(const struct rb_maps *src)
{
	struct rb_maps *ms = maps_new();
	if (!ms || !src || !src->n)
		return ms;
	ms->v = malloc(src->n * sizeof(*ms->v));
	if (!ms->v) {
		free(ms);
		return NULL;
	}
	memcpy(ms->v, src->v, src->n * sizeof(*ms->v));
	ms->n = ms->cap = src->n;
	return ms;
}

/* First map whose end is above @addr. */
static size_t maps_lower(const struct rb_maps *ms, uint64_t addr)
{
	size_t lo = 0, hi = ms->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (ms->v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct rb_map *maps_find(struct rb_maps *ms, uint64_t addr)
{
	if (!ms)
		return NULL;
	size_t i = maps_lower(ms, addr);
	return i < ms->n && ms->v[i].start <= addr ? &ms->v[i] : NULL;
}

/* Insert @nm, trimming or splitting what it overlaps (a new mmap replaces the old range). */
static int maps_insert(struct rb_machine *m, struct rb_maps *ms, struct rb_map nm)
{
	if (nm.end <= nm.start)
		return 0;
	m->maps_gen++;
	if (ms->n + 2 > ms->cap) {
		size_t cap = ms->cap ? 2 * ms->cap : 32;
		struct rb_map *v = realloc(ms->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		ms->v = v;
		ms->cap = cap;
	}
	size_t i = maps_lower(ms, nm.start);
	/* an old map that starts before and ends after the new one splits in two */
	if (i < ms->n && ms->v[i].start < nm.start && ms->v[i].end > nm.end) {
		struct rb_map right = ms->v[i];
		right.pgoff += nm.end - right.start;
		right.start = nm.end;
		ms->v[i].end = nm.start;
		memmove(&ms->v[i + 2], &ms->v[i + 1], (ms->n - i - 1) * sizeof(*ms->v));
		ms->v[i + 1] = right;
		ms->n++;
		i++;
	} else if (i < ms->n && ms->v[i].start < nm.start) {
		ms->v[i].end = nm.start;       /* trim the left neighbour */
		i++;
	}
	size_t j = i;
	while (j < ms->n && ms->v[j].end <= nm.end)
		j++;                           /* entirely covered: dropped */
	if (j < ms->n && ms->v[j].start < nm.end) {
		ms->v[j].pgoff += nm.end - ms->v[j].start;
		ms->v[j].start = nm.end;       /* trim the right neighbour */
	}
	memmove(&ms->v[i + 1], &ms->v[j], (ms->n - j) * sizeof(*ms->v));
	ms->n = ms->n - (j - i) + 1;
	ms->v[i] = nm;
	return 0;
}

/* ---------------------------------------------------------- threads */

static size_t thr_slot(const struct rb_machine *m, int32_t tid)
{
	size_t mask = m->thr_cap - 1, i = ((uint32_t)tid * 2654435761u) & mask;
	while (m->threads[i] && m->threads[i]->tid != tid)
		i = (i + 1) & mask;
	return i;
}

static int thr_grow(struct rb_machine *m)
{
	if (m->thr_cap && (m->thr_n + 1) * 2 <= m->thr_cap)
		return 0;
	size_t cap = m->thr_cap ? 2 * m->thr_cap : 256;
	struct rb_thread **old = m->threads;
	size_t ocap = m->thr_cap;
	m->threads = calloc(cap, sizeof(*m->threads));
	if (!m->threads) {
		m->threads = old;
		return -ENOMEM;
	}
	m->thr_cap = cap;
	for (size_t i = 0; i < ocap; i++)
		if (old[i])
			m->threads[thr_slot(m, old[i]->tid)] = old[i];
	free(old);
	return 0;
}

static struct rb_comm *comm_new(const char *name, uint64_t start, int exec, struct rb_comm *older)
{
	struct rb_comm *c = calloc(1, sizeof(*c));
	if (!c || !(c->name = strdup(name))) {
		free(c);
		return NULL;
	}
	c->start = start;
	c->exec = exec;
	c->older = older;
	return c;
}

/* Comms stay allocated until the machine is freed: samples and the store refer to them. */
static struct rb_comm *comm_keep(struct rb_machine *m, struct rb_comm *c)
{
	if (!c)
		return NULL;
	if (m->nr_comms == m->cap_comms) {
		size_t cap = m->cap_comms ? 2 * m->cap_comms : 256;
		struct rb_comm **v = realloc(m->comms, cap * sizeof(*v));
		if (!v) {
			free(c->name);
			free(c);
			return NULL;
		}
		m->comms = v;
		m->cap_comms = cap;
	}
	m->comms[m->nr_comms++] = c;
	return c;
}

/*
 * simpleperf's JIT symbol map of a process ("perf-PID.map" in its file
 * feature, here the object /tmp/perf-PID.map): as simpleperf does when it
 * makes the process (ThreadTree::AddThreadMapsForDsoSymbols), maps over the
 * pages its symbols cover, runs of touching pages joined, each its own
 * offset, so its samples land in it though no record mapped the code.
 */
static int symbol_map_maps(struct rb_machine *m, struct rb_thread *t)
{
	char name[40];
	snprintf(name, sizeof(name), "/tmp/perf-%d.map", (int)t->pid);
	struct rb_dso *d = dso_find(m, name);
	const struct rb_symtab *st = !d ? NULL : d->recorded ? d->recorded : d->syms_recorded ? d->syms : NULL;
	uint64_t start = 0, end = 0;
	for (size_t i = 0; st; i++) {
		const struct rb_sym *s = rb_symtab_at(st, i);
		uint64_t a = s ? s->start & ~(uint64_t)4095 : 0, e = s ? (s->end + 4095) & ~(uint64_t)4095 : 0;
		if (!s || end < a) {
			if (start < end && maps_insert(m, t->maps, (struct rb_map){ start, end, start, d }) < 0)
				return -ENOMEM;
			if (!s)
				break;
			start = a;
		}
		if (end < e)
			end = e;
	}
	return 0;
}

static struct rb_thread *thread_new(struct rb_machine *m, int32_t pid, int32_t tid)
{
	if (thr_grow(m) < 0)
		return NULL;
	struct rb_thread *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	char def[24];
	snprintf(def, sizeof(def), ":%d", tid);
	t->pid = pid;
	t->tid = tid;
	t->comm = comm_keep(m, comm_new(def, 0, 0, NULL));
	if (!t->comm) {
		free(t);
		return NULL;
	}
	/* threads of one process share the leader's maps */
	struct rb_thread *leader = NULL;
	if (pid != -1 && pid != tid) {
		size_t s = thr_slot(m, pid);
		leader = m->threads[s];
	}
	t->maps = leader ? maps_get(leader->maps) : maps_new();
	if (!t->maps) {
		free(t);
		return NULL;
	}
	m->threads[thr_slot(m, tid)] = t;
	m->thr_n++;
	if (pid == tid && pid > 0 && symbol_map_maps(m, t) < 0)
		return NULL;            /* the thread stays, its maps in part: the caller fails on out of memory */
	return t;
}

struct rb_thread *rb_machine_thread(struct rb_machine *m, int32_t pid, int32_t tid, int create)
{
	if (m->thr_cap) {
		struct rb_thread *t = m->threads[thr_slot(m, tid)];
		if (t) {
			if (t->pid == -1 && pid != -1)
				t->pid = pid;
			return t;
		}
	}
	return create ? thread_new(m, pid, tid) : NULL;
}

static int set_comm(struct rb_machine *m, struct rb_thread *t, const char *name, uint64_t time, int exec)
{
	if (!t->comm_set) {
		/* perf overrides the default ":tid" (or inherited) entry in place */
		char *n = strdup(name);
		if (!n)
			return -ENOMEM;
		free(t->comm->name);
		t->comm->name = n;
		t->comm->start = time;
		if (exec)
			t->comm->exec = 1;
	} else {
		struct rb_comm *c = comm_keep(m, comm_new(name, time, exec, t->comm));
		if (!c)
			return -ENOMEM;
		t->comm = c;
	}
	t->comm_set = 1;
	return 0;
}

int rb_machine_comm(struct rb_machine *m, int32_t pid, int32_t tid, const char *comm, int exec, uint64_t time)
{
	struct rb_thread *t = rb_machine_thread(m, pid, tid, 1);
	return t ? set_comm(m, t, comm, time, exec) : -ENOMEM;
}

int rb_machine_fork(struct rb_machine *m, int32_t ppid, int32_t ptid, int32_t pid, int32_t tid, uint64_t time)
{
	struct rb_thread *parent = rb_machine_thread(m, ppid, ptid, 1);
	if (!parent)
		return -ENOMEM;
	struct rb_thread *t = rb_machine_thread(m, pid, tid, 0);
	if (t && (t->pid != pid || t->comm_set)) {
		/* a stale thread with this tid (from synthesized state or tid reuse): start afresh */
		maps_put(m, t->maps);
		t->maps = NULL;
		t->pid = pid;
		t->comm_set = 0;
		t->comm = comm_keep(m, comm_new(":", 0, 0, NULL));
		t->generation++;
		t->dead = 0;
		if (!t->comm)
			return -ENOMEM;
	} else if (!t) {
		t = thread_new(m, pid, tid);
		if (!t)
			return -ENOMEM;
	}
	if (parent->comm_set && set_comm(m, t, parent->comm->name, time, 0) < 0)
		return -ENOMEM;
	maps_put(m, t->maps);
	if (pid == tid)
		t->maps = ppid == pid ? maps_get(parent->maps) : maps_clone(parent->maps);
	else {
		struct rb_thread *leader = rb_machine_thread(m, pid, pid, 1);
		t->maps = leader && leader != t ? maps_get(leader->maps) : maps_new();
	}
	return t->maps ? 0 : -ENOMEM;
}

int rb_machine_exit(struct rb_machine *m, int32_t pid, int32_t tid)
{
	struct rb_thread *t = rb_machine_thread(m, pid, tid, 0);
	if (t)
		t->dead = 1;
	return 0;
}

static int is_kernel_module_name(const char *name)
{
	size_t n = strlen(name);
	return n > 3 && (!strcmp(name + n - 3, ".ko") || strstr(name, ".ko."));
}

/* Modules show as "[name]" like perf, name without .ko. */
static void module_map_name(const char *filename, char *name, size_t n)
{
	const char *b = strrchr(filename, '/');
	b = b ? b + 1 : filename;
	snprintf(name, n, "[%.*s]", (int)strcspn(b, "."), b);
}

/* perf's is_anon_memory / is_no_dso_memory (and MAP_HUGETLB): memory that no object file backs */
static int is_anon(const char *name, uint32_t flags)
{
	return !strcmp(name, "//anon") || !strncmp(name, "/dev/zero", 9) || !strncmp(name, "/anon_hugepage", 14) ||
	       (flags & 0x40000) || !strncmp(name, "[stack", 6) || !strncmp(name, "/SYSV", 5) || !strcmp(name, "[heap]");
}

int rb_machine_mmap(struct rb_machine *m, int32_t pid, int32_t tid, int kernel, uint64_t start,
		    uint64_t len, uint64_t pgoff, const char *filename, const uint8_t *build_id, int build_id_size,
		    uint32_t prot, uint32_t flags)
{
	struct rb_map nm = { start, start + len < start ? UINT64_MAX : start + len, pgoff, NULL };
	if (kernel) {
		char name[4096];
		int is_kernel = !strncmp(filename, "[kernel.kallsyms]", 17);
		if (is_kernel && filename[17] && !m->kref_name[0]) {   /* "[kernel.kallsyms]_text": _text */
			snprintf(m->kref_name, sizeof(m->kref_name), "%s", filename + 17);
			m->kref_addr = pgoff;
		}
		if (is_kernel) {
			snprintf(name, sizeof(name), "[kernel.kallsyms]");
			if (!m->kernel_start || start < m->kernel_start)
				m->kernel_start = start;
		} else if (is_kernel_module_name(filename)) {
			module_map_name(filename, name, sizeof(name));
		} else {
			snprintf(name, sizeof(name), "%s", filename);
		}
		nm.dso = dso_findnew(m, name, is_kernel);
		if (!nm.dso)
			return -ENOMEM;
		if (is_kernel)
			nm.end = UINT64_MAX;   /* perf's kernel map runs to the top of the address space */
		return maps_insert(m, &m->kmaps, nm);
	}
	struct rb_thread *t = rb_machine_thread(m, pid, tid, 1);
	if (!t)
		return -ENOMEM;
	int anon = is_anon(filename, flags);
	char jit[32];
	if (anon && (prot & 4)) {      /* PROT_EXEC: perf looks for a JIT's symbol map under this name */
		snprintf(jit, sizeof(jit), "/tmp/perf-%d.map", pid);
		filename = jit;
	}
	nm.dso = dso_findnew(m, filename, 0);
	if (!nm.dso)
		return -ENOMEM;
	nm.dso->anon |= anon;
	if (build_id_size && !nm.dso->build_id_size) {
		memcpy(nm.dso->build_id, build_id, (size_t)(build_id_size > 20 ? 20 : build_id_size));
		nm.dso->build_id_size = build_id_size > 20 ? 20 : build_id_size;
	}
	return maps_insert(m, t->maps, nm);
}

struct rb_thread *rb_machine_main_thread(struct rb_machine *m, struct rb_thread *t)
{
	if (t->pid == t->tid)
		return t;
	if (t->pid == -1)
		return NULL;
	return rb_machine_thread(m, t->pid, t->pid, 0);
}

/* perf's thread__exec_comm: newest exec comm, else the newest (avoiding a parent's comm inherited at time 0). */
static struct rb_comm *exec_comm(struct rb_thread *t)
{
	struct rb_comm *last = NULL, *second_last = NULL;
	for (struct rb_comm *c = t->comm; c; c = c->older) {
		if (c->exec)
			return c;
		second_last = last;
		last = c;
	}
	if (second_last && last && !last->start && t->pid == t->tid)
		return second_last;
	return last;
}

struct rb_comm *rb_machine_sample_comm(struct rb_machine *m, struct rb_thread *t)
{
	struct rb_thread *main = rb_machine_main_thread(m, t);
	if (!main)
		return NULL;
	return m->o.comm_exec ? exec_comm(main) : main->comm;
}

/* ----------------------------------------------------------- resolve */

size_t rb_machine_threads_made(const struct rb_machine *m)
{
	return m->thr_n;
}

uint64_t rb_machine_kernel_start(const struct rb_machine *m)
{
	return m->kernel_start ? m->kernel_start : (1ULL << 63);
}

/*
 * The map this thread's last resolve found, by maps and index. Most
 * addresses are in the map the one before was in, and as maps do not
 * overlap, a map that holds @ip is maps_find's answer: the entry is checked
 * against the maps as they are now, so it is never stale. Per thread, not
 * in the maps: pool threads read those (image reads) while the session
 * resolves, and a store into their cache line per branch would cost them.
 */
static _Thread_local struct { const struct rb_maps *ms; size_t i; } hot_map;

/*
 * resolve_in's last answers, by maps and address: a branch's addresses
 * recur (loops, hot code), and an answer is the same while nothing changed
 * a maps (maps_gen: a maps' address may also be a new maps') or a DSO's
 * symbols (their source; an "unknown" symbol perf's export adds). Only
 * answers from a symbol table are kept, and only the table's own (not
 * perf's last-lookup cache's); a hit has the lookup's effect on that cache
 * (rb_symtab_lookup_known), so what perf's quirk makes of later lookups is
 * unchanged. The session's thread only, as the machine's other changes.
 */
#define RCACHE_SLOTS 2048
struct rcache {
	const struct rb_maps *ms;
	uint64_t ip, gen;
	struct rb_addr_loc al;
	struct rb_symtab_last *last;
};

static inline struct rcache *rcache_slot(struct rb_machine *m, const struct rb_maps *ms, uint64_t ip)
{
	uint64_t k = ip ^ (ip >> 13) ^ ((uintptr_t)ms >> 6);
	return &m->rcache[(k ^ (k >> 11)) & (RCACHE_SLOTS - 1)];
}

static void resolve_in(struct rb_machine *m, struct rb_maps *ms, uint64_t ip, struct rb_addr_loc *al)
{
	struct rb_map *map;
	size_t h = hot_map.i;
	if (ms && hot_map.ms == ms && h < ms->n && ms->v[h].start <= ip && ip < ms->v[h].end) {
		map = &ms->v[h];
	} else {
		if (!(map = maps_find(ms, ip)))
			return;
		hot_map.ms = ms;
		hot_map.i = (size_t)(map - ms->v);
	}
	al->map = map;
	al->dso = map->dso;
	if (!map->dso->syms_tried)
		load_symbols(m, map->dso, map->start);
	al->addr = map->dso->anon ? ip : map->dso->syms ? rb_symtab_map_ip(map->dso->syms, ip, map->start, map->pgoff) :
				    ip - map->start + map->pgoff;
	/* perf's thread__find_symbol: the DSO's cached lookup (its cache is part of what perf answers) */
	if (!map->dso->syms) {
		al->sym = rb_machine_find_unknown(map->dso, al->addr);
		return;
	}
	int fresh;
	al->sym = rb_symtab_lookup_fresh(map->dso->syms, al->addr, &fresh);
	if (fresh && !m->o.no_resolve_cache && (m->rcache || (m->rcache = calloc(RCACHE_SLOTS, sizeof(*m->rcache)))))
		*rcache_slot(m, ms, ip) = (struct rcache){ .ms = ms, .ip = ip, .gen = m->maps_gen, .al = *al,
							   .last = rb_symtab_last(map->dso->syms) };
}

/* @fallback: a user address no user mapping covers, at or above kernel_start, is looked up in the kernel's maps */
static __attribute__((noinline)) void resolve_slow(struct rb_machine *m, struct rb_thread *t, unsigned cpumode,
						   uint64_t ip, struct rb_addr_loc *al, int fallback)
{
	memset(al, 0, sizeof(*al));
	al->addr = ip;
	if (cpumode == PD_MISC_KERNEL) {
		al->kernel = 1;
		resolve_in(m, &m->kmaps, ip, al);
		return;
	}
	if (cpumode == PD_MISC_USER && t) {
		resolve_in(m, t->maps, ip, al);
		if (fallback && !al->map && ip >= rb_machine_kernel_start(m)) {
			al->kernel = 1;
			resolve_in(m, &m->kmaps, ip, al);
		}
	}
}

void rb_machine_resolve(struct rb_machine *m, struct rb_thread *t, unsigned cpumode, uint64_t ip,
			struct rb_addr_loc *al)
{
	const struct rb_maps *ms = cpumode == PD_MISC_KERNEL ? &m->kmaps : cpumode == PD_MISC_USER && t ? t->maps : NULL;
	if (ms && m->rcache) {
		const struct rcache *c = rcache_slot(m, ms, ip);
		if (c->ms == ms && c->ip == ip && c->gen == m->maps_gen) {
			*al = c->al;
			al->sym = rb_symtab_lookup_known(c->last, al->addr, al->sym);
			return;
		}
	}
	resolve_slow(m, t, cpumode, ip, al, 1);
}

void rb_machine_resolve_chain(struct rb_machine *m, struct rb_thread *t, unsigned cpumode, uint64_t ip,
			      struct rb_addr_loc *al)
{
	if (cpumode == PD_MISC_USER && t && ip >= rb_machine_kernel_start(m))
		resolve_slow(m, t, cpumode, ip, al, 0);      /* where the fallback would apply: uncached, it is rare */
	else
		rb_machine_resolve(m, t, cpumode, ip, al);
}

void rb_machine_resolve_ip(struct rb_machine *m, struct rb_thread *t, uint64_t ip, struct rb_addr_loc *al)
{
	rb_machine_resolve(m, t, ip >= rb_machine_kernel_start(m) ? PD_MISC_KERNEL : PD_MISC_USER, ip, al);
}

/* The mapping covering @ip, without symbol lookups: trace decoders read code through it. */
const struct rb_map *rb_machine_find_map(struct rb_machine *m, struct rb_thread *t, uint64_t ip)
{
	struct rb_map *map = t && ip < rb_machine_kernel_start(m) ? maps_find(t->maps, ip) : NULL;
	return map ? map : maps_find(&m->kmaps, ip);
}

/* ------------------------------------------------------------ life */

struct rb_machine *rb_machine_new(const struct rb_machine_opts *o)
{
	struct rb_machine *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	if (o)
		m->o = *o;
	if (m->o.buildid_dir)
		snprintf(m->buildid_dir, sizeof(m->buildid_dir), "%s", m->o.buildid_dir);
	else
		snprintf(m->buildid_dir, sizeof(m->buildid_dir), "%s/.debug",
			 getenv("HOME") ? getenv("HOME") : "/root");
	/* perf's idle thread */
	if (rb_machine_comm(m, 0, 0, "swapper", 0, 0) < 0) {
		rb_machine_free(m);
		return NULL;
	}
	return m;
}

void rb_machine_free(struct rb_machine *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->thr_cap; i++)
		if (m->threads[i]) {
			maps_put(m, m->threads[i]->maps);
			free(m->threads[i]);
		}
	free(m->threads);
	for (size_t i = 0; i < m->nr_dsos; i++) {
		struct rb_dso *d = m->dsos[i];
		rb_symtab_free(d->syms);
		rb_symtab_free(d->recorded);
		for (size_t k = 0; k < d->nr_extra; k++)
			free(d->extra[k]);
		free(d->extra);
		while (d->inlines) {
			struct rb_inline_sym *is = d->inlines;
			d->inlines = is->next;
			free(is);
		}
		free(d->uhash);
		free(d->syms_path);
		free(d->image_path);
		free(d->long_name);
		free(d);
	}
	free(m->dsos);
	free(m->kmaps.v);
	free(m->rcache);
	free(m->kseg);
	free(m->kimage_path);
	rb_symdir_free(m->symdir);
	for (size_t i = 0; i < m->nr_comms; i++) {
		free(m->comms[i]->name);
		free(m->comms[i]);
	}
	free(m->comms);
	free(m);
}

enum rb_symdir_match rb_machine_locate(struct rb_machine *m, struct rb_dso *d, const char **where,
				       struct rb_symdir_hit *hit)
{
	*hit = *symdir_hit(m, d);
	*where = hit->path;
	if (hit->how == RB_SYMDIR_BUILD_ID || hit->how == RB_SYMDIR_NAME)
		return hit->how;
	const char *file = NULL;
	if (d->kernel)
		file = kernel_image(m) ? m->kimage_path : NULL;
	else if (d->long_name[0] == '/' || !strcmp(d->long_name, "[vdso]"))
		file = rb_machine_dso_image(m, d);
	if (file) {
		*where = file;
		return d->build_id_size ? RB_SYMDIR_BUILD_ID : RB_SYMDIR_NAME;    /* both lookups check the id */
	}
	return hit->how;
}

int rb_machine_oom(const struct rb_machine *m) { return m->oom; }

size_t rb_machine_nr_dsos(const struct rb_machine *m) { return m->nr_dsos; }
struct rb_dso *rb_machine_dso(struct rb_machine *m, size_t i) { return i < m->nr_dsos ? m->dsos[i] : NULL; }
