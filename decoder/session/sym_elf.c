/*
 * sym_elf.c - reading ELF files, the second stage of loading an object's
 * symbols: sym_find.c has picked the files, this file reads their symbols
 * into the tree (symtab.c), and symtab.c's rb_symtab_load_elf_opts runs
 * both. Every file is mapped read-only and every read is bounded by the
 * mapping: headers and sections of 32- and 64-bit files in either byte
 * order, with an error message naming the file for anything corrupt. From
 * .symtab and .dynsym it keeps the symbols perf 6.1's dso__load_sym keeps
 * (functions, objects, labels in text or data sections; no ARM mapping
 * symbols), resolves PPC64 .opd descriptors, rebases values to file
 * offsets by their PT_LOAD (a vmlinux's stay addresses, moved by the KASLR
 * offset), fixes up ends and aliases, then synthesizes the @plt symbols.
 * For the rest of the decoder it reads build-ids (rb_elf_build_id), one
 * symbol's value (rb_elf_symbol_value) and a kernel image's PT_LOAD
 * segments (rb_elf_load_segments); its mapped files serve sym_find.c and
 * sym_kallsyms.c too.
 */
#define _GNU_SOURCE
#include "sym_internal.h"
#include "elf/elf_note.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef STT_GNU_IFUNC
#define STT_GNU_IFUNC 10
#endif
#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif

#define PLT_NAME_MAX 1024            /* perf formats "%s@plt" into 1024 bytes */

/* ------------------------------------------------------------------ */
/* files                                                               */

void sym_elf_mfile_close(struct mfile *f)
{
	if (f->p && f->size)
		munmap((void *)f->p, f->size);
	f->p = NULL;
	f->size = 0;
}

int sym_elf_mfile_open(struct mfile *f, const char *path, char *msg, size_t msglen)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;
	void *p;

	f->p = NULL;
	f->size = 0;
	if (fd < 0)
		return symtab_fail(msg, msglen, -errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0) {
		err = errno;
		close(fd);
		return symtab_fail(msg, msglen, -err, "%s: %s", path, strerror(err));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return symtab_fail(msg, msglen, -EINVAL, "%s: not a regular file", path);
	}
	if (st.st_size == 0 || (uint64_t)st.st_size > SIZE_MAX) {
		close(fd);
		return symtab_fail(msg, msglen, -ENOEXEC, "%s: %s", path,
				   st.st_size ? "file too large" : "empty file, not ELF");
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	err = errno;
	close(fd);
	if (p == MAP_FAILED)
		return symtab_fail(msg, msglen, -err, "%s: mmap: %s", path, strerror(err));
	f->p = p;
	f->size = (size_t)st.st_size;
	return 0;
}

/* ------------------------------------------------------------------ */
/* ELF reading (32/64-bit, either byte order), bounded by the mapping  */

struct phdr {
	uint32_t type;
	uint64_t offset, vaddr, filesz, memsz;
};

struct esym {
	uint32_t name;
	uint8_t info, other;
	uint16_t shndx;
	uint64_t value, size;
};

static uint64_t get(const struct elf *e, const uint8_t *q, int n)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)q[e->msb ? n - 1 - i : i] << (8 * i);
	return v;
}

#define G16(e, q) ((uint16_t)get(e, q, 2))
#define G32(e, q) ((uint32_t)get(e, q, 4))
#define G64(e, q) get(e, q, 8)
#define GADDR(e, q) ((e)->is64 ? G64(e, q) : G32(e, q))

static size_t shdr_size(const struct elf *e)
{
	return e->is64 ? 64 : 40;
}

void sym_elf_read_shdr(const struct elf *e, size_t i, struct shdr *s)
{
	const uint8_t *q = e->p + e->shoff + i * shdr_size(e);
	int w = e->is64 ? 8 : 4;

	s->name = G32(e, q);
	s->type = G32(e, q + 4);
	s->flags = get(e, q + 8, w);
	s->addr = get(e, q + 8 + w, w);
	s->offset = get(e, q + 8 + 2 * w, w);
	s->size = get(e, q + 8 + 3 * w, w);
	s->link = G32(e, q + 8 + 4 * w);
	s->info = G32(e, q + 12 + 4 * w);
	s->entsize = get(e, q + 16 + 5 * w, w);
}

static void read_phdr(const struct elf *e, size_t i, struct phdr *ph)
{
	const uint8_t *q = e->p + e->phoff + i * (e->is64 ? 56 : 32);

	ph->type = G32(e, q);
	if (e->is64) {
		ph->offset = G64(e, q + 8);
		ph->vaddr = G64(e, q + 16);
		ph->filesz = G64(e, q + 32);
		ph->memsz = G64(e, q + 40);
	} else {
		ph->offset = G32(e, q + 4);
		ph->vaddr = G32(e, q + 8);
		ph->filesz = G32(e, q + 16);
		ph->memsz = G32(e, q + 20);
	}
}

static void read_sym(const struct elf *e, const uint8_t *q, struct esym *s)
{
	s->name = G32(e, q);
	if (e->is64) {
		s->info = q[4];
		s->other = q[5];
		s->shndx = G16(e, q + 6);
		s->value = G64(e, q + 8);
		s->size = G64(e, q + 16);
	} else {
		s->value = G32(e, q + 4);
		s->size = G32(e, q + 8);
		s->info = q[12];
		s->other = q[13];
		s->shndx = G16(e, q + 14);
	}
}

/* Bytes of a section; SHT_NOBITS has none.  -1 if it lies outside the file. */
int sym_elf_sec_data(const struct elf *e, const struct shdr *s, const uint8_t **p, size_t *n)
{
	*p = NULL;
	*n = 0;
	if (s->type == SHT_NOBITS)
		return 0;
	if (!in_file(e, s->offset, s->size))
		return -1;
	*p = e->p + s->offset;
	*n = (size_t)s->size;
	return 0;
}

static int sec_name_eq(const struct elf *e, const struct shdr *s, const char *name)
{
	size_t len;
	const char *n = str_at(e->shstr, e->shstr_size, s->name, &len);

	return n && len == strlen(name) && memcmp(n, name, len) == 0;
}

/* perf classifies label sections by a substring test on the section name. */
static int sec_name_has(const uint8_t *shstr, size_t shstr_size, const struct shdr *s, const char *needle)
{
	size_t len;
	const char *n = str_at(shstr, shstr_size, s->name, &len);

	return n && memmem(n, len, needle, strlen(needle)) != NULL;
}

/* First section with that name, scanning from index 1 as libelf does. */
int sym_elf_find_section(const struct elf *e, const char *name, struct shdr *s, size_t *idx)
{
	size_t i;

	if (!e->shstr)
		return 0;
	for (i = 1; i < e->shnum; i++) {
		sym_elf_read_shdr(e, i, s);
		if (sec_name_eq(e, s, name)) {
			if (idx)
				*idx = i;
			return 1;
		}
	}
	return 0;
}

static int elf_ident(struct elf *e, char *msg, size_t msglen)
{
	const uint8_t *p = e->p;

	if (e->size < EI_NIDENT || memcmp(p, ELFMAG, SELFMAG) != 0)
		return symtab_fail(msg, msglen, -ENOEXEC, "%s: not an ELF file", e->path);
	if (p[EI_CLASS] != ELFCLASS32 && p[EI_CLASS] != ELFCLASS64)
		return symtab_fail(msg, msglen, -ENOEXEC, "%s: unknown ELF class %u", e->path, p[EI_CLASS]);
	if (p[EI_DATA] != ELFDATA2LSB && p[EI_DATA] != ELFDATA2MSB)
		return symtab_fail(msg, msglen, -ENOEXEC, "%s: unknown ELF data encoding %u", e->path, p[EI_DATA]);
	e->is64 = p[EI_CLASS] == ELFCLASS64;
	e->msb = p[EI_DATA] == ELFDATA2MSB;
	if (e->size < (e->is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr)))
		return symtab_fail(msg, msglen, -ENOEXEC, "%s: truncated ELF header", e->path);
	return 0;
}

/* Section headers: extended numbering lives in section 0 (e_shnum 0, e_shstrndx SHN_XINDEX). */
static int elf_sections(struct elf *e, uint16_t shentsize, uint16_t shnum, uint16_t shstrndx,
			char *msg, size_t msglen)
{
	struct shdr s0;

	e->shnum = shnum;
	e->shstrndx = shstrndx;
	if (e->shoff == 0) {
		e->shnum = 0;
		return 0;
	}
	if (shentsize != shdr_size(e) || !in_file(e, e->shoff, shdr_size(e)))
		return symtab_fail(msg, msglen, -ENOEXEC, "%s: bad or truncated section header table", e->path);
	sym_elf_read_shdr(e, 0, &s0);
	if (shnum == 0)
		e->shnum = s0.size > SIZE_MAX / 64 ? SIZE_MAX / 64 : (size_t)s0.size;
	if (shstrndx == SHN_XINDEX)
		e->shstrndx = s0.link;
	if (!in_file(e, e->shoff, (uint64_t)e->shnum * shdr_size(e)))
		return symtab_fail(msg, msglen, -ENOEXEC, "%s: section header table truncated (%zu headers at offset %#llx)",
				   e->path, e->shnum, (unsigned long long)e->shoff);
	return 0;
}

static int elf_names(struct elf *e, char *msg, size_t msglen)
{
	struct shdr s;
	const uint8_t *p;
	size_t n;

	e->shstr = NULL;
	e->shstr_size = 0;
	if (e->shnum == 0)
		return 0;
	if (e->shstrndx == SHN_UNDEF || e->shstrndx >= e->shnum)
		return symtab_fail(msg, msglen, -ENOEXEC, "%s: bad section name table index %zu", e->path, e->shstrndx);
	sym_elf_read_shdr(e, e->shstrndx, &s);
	if (sym_elf_sec_data(e, &s, &p, &n) || !p)
		return symtab_fail(msg, msglen, -ENOEXEC, "%s: section name table truncated or missing", e->path);
	e->shstr = p;
	e->shstr_size = n;
	return 0;
}

static int elf_segments(struct elf *e, uint16_t phentsize, uint16_t phnum, char *msg, size_t msglen)
{
	struct shdr s0;
	size_t esz = e->is64 ? 56 : 32;

	e->phnum = phnum;
	if (phnum == PN_XNUM && e->shnum > 0) {
		sym_elf_read_shdr(e, 0, &s0);
		e->phnum = s0.info;
	}
	if (e->phoff == 0 || e->phnum == 0) {
		e->phnum = 0;
		return 0;
	}
	if (phentsize != esz || !in_file(e, e->phoff, (uint64_t)e->phnum * esz))
		return symtab_fail(msg, msglen, -ENOEXEC, "%s: program header table bad or truncated", e->path);
	return 0;
}

int sym_elf_parse(struct elf *e, const char *path, const struct mfile *f, char *msg, size_t msglen)
{
	const uint8_t *p = f->p;
	int err;

	memset(e, 0, sizeof(*e));
	e->path = path;
	e->p = p;
	e->size = f->size;
	if ((err = elf_ident(e, msg, msglen)))
		return err;
	e->type = G16(e, p + 16);
	e->machine = G16(e, p + 18);
	e->phoff = GADDR(e, p + (e->is64 ? 32 : 28));
	e->shoff = GADDR(e, p + (e->is64 ? 40 : 32));
	p += e->is64 ? 54 : 42;                   /* e_phentsize, e_phnum, e_shentsize, e_shnum, e_shstrndx */
	if ((err = elf_sections(e, G16(e, p + 4), G16(e, p + 6), G16(e, p + 8), msg, msglen)) ||
	    (err = elf_names(e, msg, msglen)) ||
	    (err = elf_segments(e, G16(e, p), G16(e, p + 2), msg, msglen)))
		return err;
	return 0;
}

/* ------------------------------------------------------------------ */
/* build-id                                                            */

/*
 * perf reads the build-id from the first of the sections .note.gnu.build-id,
 * .notes, .note that exists.  Files without section headers fall back to
 * PT_NOTE segments (perf finds nothing there; we do, which only helps).
 */
int sym_elf_build_id(const struct elf *e, uint8_t *id, size_t max)
{
	static const char *const secs[] = { ".note.gnu.build-id", ".notes", ".note" };
	struct shdr s;
	struct phdr ph;
	const uint8_t *p;
	size_t n, i;
	int r;

	for (i = 0; i < sizeof(secs) / sizeof(secs[0]); i++)
		if (sym_elf_find_section(e, secs[i], &s, NULL))
			return sym_elf_sec_data(e, &s, &p, &n) ? 0 : rb_elf_note_build_id(p, n, e->msb, id, max);
	if (e->shnum)
		return 0;
	for (i = 0; i < e->phnum; i++) {
		read_phdr(e, i, &ph);
		if (ph.type == PT_NOTE && in_file(e, ph.offset, ph.filesz) &&
		    (r = rb_elf_note_build_id(e->p + ph.offset, (size_t)ph.filesz, e->msb, id, max)) > 0)
			return r;
	}
	return 0;
}

int rb_elf_build_id(const char *path, uint8_t *id, size_t max)
{
	struct mfile f;
	struct elf e;
	int r;

	if (!path || (!id && max))
		return -EINVAL;
	if ((r = sym_elf_mfile_open(&f, path, NULL, 0)))
		return r;
	r = sym_elf_parse(&e, path, &f, NULL, 0);
	if (r == 0)
		r = sym_elf_build_id(&e, id, max < BUILD_ID_MAX ? max : BUILD_ID_MAX);
	sym_elf_mfile_close(&f);
	return r;
}

/* ------------------------------------------------------------------ */
/* symbol sources: perf's "symsrc", one opened candidate file          */

void sym_elf_symsrc_close(struct symsrc *ss)
{
	sym_elf_mfile_close(&ss->f);
}

/* Like perf, a table counts only if the named section has the right type. */
static void symsrc_classify(struct symsrc *ss)
{
	struct elf *e = &ss->e;

	ss->has_symtab = sym_elf_find_section(e, ".symtab", &ss->symtab, NULL) && ss->symtab.type == SHT_SYMTAB;
	ss->has_dynsym = sym_elf_find_section(e, ".dynsym", &ss->dynsym, &ss->dynsym_idx) &&
			 ss->dynsym.type == SHT_DYNSYM;
	ss->opd_found = sym_elf_find_section(e, ".opd", &ss->opd, &ss->opd_idx);
	ss->has_opd = ss->opd_found && ss->opd.type == SHT_PROGBITS;
}

int sym_elf_symsrc_open(struct symsrc *ss, const char *path, char *msg, size_t msglen)
{
	int err;

	memset(ss, 0, sizeof(*ss));
	if (strlen(path) >= sizeof(ss->path))
		return symtab_fail(msg, msglen, -ENAMETOOLONG, "%s: path too long", path);
	strcpy(ss->path, path);
	if ((err = sym_elf_mfile_open(&ss->f, ss->path, msg, msglen)))
		return err;
	if ((err = sym_elf_parse(&ss->e, ss->path, &ss->f, msg, msglen))) {
		sym_elf_symsrc_close(ss);
		return err;
	}
	symsrc_classify(ss);
	return 0;
}

/* ------------------------------------------------------------------ */
/* loading ELF symbols (perf's dso__load_sym)                          */

static int is_function(const struct esym *s)
{
	int type = ELF64_ST_TYPE(s->info);

	return (type == STT_FUNC || type == STT_GNU_IFUNC) && s->name && s->shndx != SHN_UNDEF;
}

static int is_object(const struct esym *s)
{
	return ELF64_ST_TYPE(s->info) == STT_OBJECT && s->name && s->shndx != SHN_UNDEF;
}

/* NOTYPE symbols naming code or data, as perf accepts them (section checked later). */
static int is_label(const struct esym *s)
{
	int vis = ELF64_ST_VISIBILITY(s->other);

	return ELF64_ST_TYPE(s->info) == STT_NOTYPE && s->name && s->shndx != SHN_UNDEF &&
	       s->shndx != SHN_ABS && vis != STV_HIDDEN && vis != STV_INTERNAL;
}

/* ARM ELF mapping symbols ($a, $d, $t, $x, optionally ".suffix") identify no function. */
static int is_mapping_symbol(const struct elf *e, const char *name, size_t len)
{
	if (e->machine != EM_ARM && e->machine != EM_AARCH64)
		return 0;
	return len >= 2 && name[0] == '$' && strchr("adtx", name[1]) && name[1] &&
	       (len == 2 || name[2] == '.');
}

/* perf resolves PPC64 ELFv1 function descriptors through the runtime image's .opd. */
static int opd_resolve(struct loadctx *c, struct esym *s)
{
	struct symsrc *run = c->run;
	const uint8_t *p;
	size_t n, i;
	uint32_t off = (uint32_t)(s->value - c->syms->opd.addr);
	struct shdr sh;

	if (sym_elf_sec_data(&run->e, &run->opd, &p, &n) || !p || n < 8 || off > n - 8)
		return symtab_fail(c->msg, c->msglen, -EINVAL, "%s: .opd entry out of range", run->path);
	s->value = G64(&run->e, p + off);
	for (i = 1; i < run->e.shnum; i++) {
		sym_elf_read_shdr(&run->e, i, &sh);
		if (s->value >= sh.addr && s->value < sh.addr + sh.size)
			break;
	}
	s->shndx = i < run->e.shnum ? (uint16_t)i : SHN_UNDEF;
	if (i >= run->e.shnum)
		return symtab_fail(c->msg, c->msglen, -EINVAL, "%s: .opd target %#llx in no section",
				   run->path, (unsigned long long)s->value);
	return 0;
}

/*
 * perf 6.1 rebases every user-space symbol to a file offset: by the PT_LOAD
 * of the runtime image containing it (p_vaddr - p_offset), or failing that
 * by its section (sh_addr - sh_offset).  This applies to ET_DYN as well as
 * ET_EXEC, so segments with p_vaddr != p_offset are handled here.
 */
static uint64_t rebase(const struct loadctx *c, uint64_t value, const struct shdr *sec)
{
	for (size_t i = 0; i < c->nr_loads; i++) {
		const struct load_seg *g = &c->loads[i];

		if (value >= g->vaddr && value < g->vaddr + g->size)
			return value - (g->vaddr - g->offset);
	}
	return value - (sec->addr - sec->offset);
}

/* The headers rebase and symbol_section use, read once. */
static int loadctx_headers(struct loadctx *c)
{
	const struct elf *se = &c->syms->e, *re = &c->run->e;
	struct phdr ph;

	c->sh_syms = calloc(se->shnum ? se->shnum : 1, sizeof(*c->sh_syms));
	c->sh_run = c->run == c->syms ? c->sh_syms : calloc(re->shnum ? re->shnum : 1, sizeof(*c->sh_run));
	c->loads = calloc(re->phnum ? re->phnum : 1, sizeof(*c->loads));
	if (!c->sh_syms || !c->sh_run || !c->loads)
		return symtab_fail(c->msg, c->msglen, -ENOMEM, "%s: out of memory", se->path);
	for (size_t i = 0; i < se->shnum; i++)
		sym_elf_read_shdr(se, i, &c->sh_syms[i]);
	for (size_t i = 0; c->sh_run != c->sh_syms && i < re->shnum; i++)
		sym_elf_read_shdr(re, i, &c->sh_run[i]);
	for (size_t i = 0; i < re->phnum; i++) {
		read_phdr(re, i, &ph);
		uint64_t sz = ph.memsz > ph.filesz ? ph.memsz : ph.filesz;
		if (ph.type == PT_LOAD && sz)
			c->loads[c->nr_loads++] = (struct load_seg){ ph.vaddr, ph.offset, sz };
	}
	return 0;
}

static void loadctx_free(struct loadctx *c)
{
	if (c->sh_run != c->sh_syms)
		free(c->sh_run);
	free(c->sh_syms);
	free(c->loads);
	c->sh_syms = c->sh_run = NULL;
	c->loads = NULL;
}

/*
 * The section a symbol lives in.  Debug files carry SHT_NOBITS copies of the
 * loaded sections, whose sh_offset is meaningless, so perf takes the
 * runtime image's header (and name table) for those.  Returns 1 to keep the
 * symbol, 0 to skip it, <0 on error.
 */
static int symbol_section(struct loadctx *c, const struct esym *s, int label, struct shdr *sec)
{
	const struct elf *se = &c->syms->e, *re = &c->run->e;
	const uint8_t *names = se->shstr;
	size_t names_size = se->shstr_size;

	if (s->shndx >= se->shnum)
		return symtab_fail(c->msg, c->msglen, -EINVAL, "%s: symbol in bad section %u", se->path, s->shndx);
	*sec = c->sh_syms[s->shndx];
	if (!(sec->flags & SHF_ALLOC))
		return 0;
	if (sec->type == SHT_NOBITS) {
		if (s->shndx >= re->shnum)
			return symtab_fail(c->msg, c->msglen, -EINVAL, "%s: no section %u in runtime image %s",
					   se->path, s->shndx, re->path);
		*sec = c->sh_run[s->shndx];
		names = re->shstr;
		names_size = re->shstr_size;
	}
	if (label && !sec_name_has(names, names_size, sec, "text") && !sec_name_has(names, names_size, sec, "data"))
		return 0;
	return 1;
}

/* Filter, place and insert one symbol table entry.  Returns 1 if inserted, 0 if skipped, <0 on error. */
static int load_one(struct loadctx *c, struct esym *s, const uint8_t *strs, size_t strsz)
{
	const struct elf *se = &c->syms->e;
	int label = is_label(s), r;
	const char *name;
	size_t len;
	struct shdr sec = { 0 };

	if (!label && !is_function(s) && !is_object(s))
		return 0;
	if (!(name = str_at(strs, strsz, s->name, &len)))
		return symtab_fail(c->msg, c->msglen, -EINVAL, "%s: symbol name offset %u out of range", se->path, s->name);
	if (is_mapping_symbol(se, name, len))
		return 0;
	if (c->run->has_opd && s->shndx == c->run->opd_idx && (r = opd_resolve(c, s)))
		return r;
	if (s->shndx == SHN_ABS)
		return 0;
	if ((r = symbol_section(c, s, label, &sec)) <= 0)
		return r;
	if (se->machine == EM_ARM && ELF64_ST_TYPE(s->info) == STT_FUNC && (s->value & 1))
		s->value--;                       /* Thumb functions have bit 0 set */
	s->value = c->kernel ? s->value + c->reloc : rebase(c, s->value, &sec);
	if (symtab_insert_named(c->t, s->value, s->size, ELF64_ST_BIND(s->info), name, len))
		return symtab_fail(c->msg, c->msglen, -ENOMEM, "%s: out of memory", se->path);
	return 1;
}

static int table_data(struct loadctx *c, const struct shdr *tab, const uint8_t **syms, size_t *nsyms,
		      const uint8_t **strs, size_t *strsz)
{
	const struct elf *e = &c->syms->e;
	size_t esz = e->is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym), n;
	struct shdr strtab;

	if (tab->entsize != esz)
		return symtab_fail(c->msg, c->msglen, -EINVAL, "%s: symbol table entry size %llu, expected %zu",
				   e->path, (unsigned long long)tab->entsize, esz);
	if (sym_elf_sec_data(e, tab, syms, &n))
		return symtab_fail(c->msg, c->msglen, -EINVAL, "%s: symbol table extends past end of file", e->path);
	*nsyms = n / esz;
	if (tab->link == 0 || tab->link >= e->shnum)
		return symtab_fail(c->msg, c->msglen, -EINVAL, "%s: symbol table has bad string table link %u",
				   e->path, tab->link);
	sym_elf_read_shdr(e, tab->link, &strtab);
	if (sym_elf_sec_data(e, &strtab, strs, strsz))
		return symtab_fail(c->msg, c->msglen, -EINVAL, "%s: symbol string table extends past end of file", e->path);
	if (!c->run->e.shstr)
		return symtab_fail(c->msg, c->msglen, -EINVAL, "%s: no section name table", c->run->path);
	return 0;
}

/* One pass over .symtab or .dynsym, then perf's end and alias fix-ups. */
static int load_table(struct loadctx *c, const struct shdr *tab)
{
	const uint8_t *syms = NULL, *strs = NULL;
	size_t nsyms = 0, strsz = 0, i, esz = c->syms->e.is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
	int r, nr = 0;

	if ((r = table_data(c, tab, &syms, &nsyms, &strs, &strsz)))
		return r;
	for (i = 0; i < nsyms; i++) {
		struct esym s;

		read_sym(&c->syms->e, syms + i * esz, &s);
		if ((r = load_one(c, &s, strs, strsz)) < 0)
			return r;
		nr += r;
	}
	if (nr > 0) {
		symtab_fixup_end(c->t, 0);
		symtab_fixup_duplicate(c->t);
	}
	return nr;
}

/* ------------------------------------------------------------------ */
/* PLT symbols (perf 6.1's dso__synthesize_plt_symbols)                */

struct plt {
	const uint8_t *rel, *dsyms, *dstr;
	size_t nrel, relsz, ndsyms, dstrsz;
	uint64_t offset, entry;
	int rela;
};

/* Entry sizes perf 6.1 assumes; elsewhere .plt's sh_entsize for header and entries. */
static void plt_geometry(const struct elf *e, const struct shdr *plt, uint64_t *header, uint64_t *entry)
{
	switch (e->machine) {
	case EM_ARM:     *header = 20;  *entry = 12; break;
	case EM_AARCH64: *header = 32;  *entry = 16; break;
	case EM_SPARC:   *header = 48;  *entry = 12; break;
	case EM_SPARCV9: *header = 128; *entry = 32; break;
	default:         *header = *entry = plt->entsize; break;
	}
}

/* Locate everything the PLT pass needs; 0 if the image has no usable PLT. */
static int plt_setup(const struct symsrc *run, struct plt *p)
{
	const struct elf *e = &run->e;
	struct shdr rel, plt, dstr;
	uint64_t header;
	size_t n;

	if (!run->has_dynsym)
		return 0;
	if (!sym_elf_find_section(e, ".rela.plt", &rel, NULL) && !sym_elf_find_section(e, ".rel.plt", &rel, NULL))
		return 0;
	if (rel.link != run->dynsym_idx || !sym_elf_find_section(e, ".plt", &plt, NULL))
		return 0;
	if ((rel.type != SHT_RELA && rel.type != SHT_REL) || rel.entsize == 0)
		return 0;
	if (sym_elf_sec_data(e, &rel, &p->rel, &n) || sym_elf_sec_data(e, &run->dynsym, &p->dsyms, &p->ndsyms) ||
	    run->dynsym.link >= e->shnum)
		return 0;
	sym_elf_read_shdr(e, run->dynsym.link, &dstr);
	if (sym_elf_sec_data(e, &dstr, &p->dstr, &p->dstrsz) || p->dstrsz == 0)
		return 0;
	p->rela = rel.type == SHT_RELA;
	p->relsz = e->is64 ? (p->rela ? 24 : 16) : (p->rela ? 12 : 8);
	p->nrel = (size_t)(rel.size / rel.entsize);
	if (p->nrel > n / p->relsz)
		p->nrel = n / p->relsz;              /* perf would read past the data */
	p->ndsyms /= e->is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
	plt_geometry(e, &plt, &header, &p->entry);
	p->offset = plt.offset + header;
	return 1;
}

static int plt_insert(struct tree *t, const struct elf *e, struct plt *p, size_t i, struct esym *s)
{
	const uint8_t *q = p->rel + i * p->relsz;
	uint64_t info = GADDR(e, q + (e->is64 ? 8 : 4));
	uint64_t idx = e->is64 ? info >> 32 : info >> 8;
	char buf[PLT_NAME_MAX], *dem;
	const char *name;
	size_t len;
	int r;

	if (idx < p->ndsyms)                 /* perf keeps the previous symbol when out of range */
		read_sym(e, p->dsyms + idx * (e->is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym)), s);
	if (!(name = str_at(p->dstr, p->dstrsz, s->name, &len)))
		name = "", len = 0;
	if (symtab_display_name(name, len, &dem, &len))
		return -ENOMEM;
	/* perf formats "%s@plt" into 1024 bytes, so an overlong name loses its suffix */
	snprintf(buf, sizeof(buf), "%.*s@plt", (int)(len < sizeof(buf) ? len : sizeof(buf)), dem ? dem : name);
	free(dem);
	r = symtab_tree_insert(t, p->offset, p->entry, STB_GLOBAL, buf, strlen(buf));
	if (r)
		return r;
	p->offset += p->entry;
	return 0;
}

/* perf adds the PLT entries after the fix-ups, so they are never trimmed or merged. */
static int synthesize_plt(struct loadctx *c)
{
	struct plt p;
	struct esym s;
	size_t i;

	memset(&p, 0, sizeof(p));
	memset(&s, 0, sizeof(s));
	if (!plt_setup(c->run, &p))
		return 0;
	for (i = 0; i < p.nrel; i++)
		if (plt_insert(c->t, &c->run->e, &p, i, &s))
			return symtab_fail(c->msg, c->msglen, -ENOMEM, "%s: out of memory", c->run->path);
	return 0;
}

/* ------------------------------------------------------------------ */
/* the symbols of the files sym_find.c chose                           */

/* perf's dso__load_sym + PLT pass over the chosen files. */
static int load_tables(struct loadctx *c)
{
	int nr = 0, r;

	if (c->syms->has_symtab) {
		if ((r = load_table(c, &c->syms->symtab)) < 0)
			return r;
		nr = r;
	}
	if (c->syms->has_dynsym) {
		if ((r = load_table(c, &c->syms->dynsym)) < 0)
			return r;
		nr += r;
	}
	return nr > 0 ? synthesize_plt(c) : 0;
}

int sym_elf_load_symbols(struct loadctx *c)
{
	int r = loadctx_headers(c);

	if (!r)
		r = load_tables(c);
	loadctx_free(c);
	return r;
}

/* ------------------------------------------------------------------ */
/* single reads: a symbol's value, a kernel image's segments           */

int rb_elf_symbol_value(const char *path, const char *name, uint64_t *value)
{
	struct mfile f;
	struct elf e;
	struct shdr tab, strtab;
	const uint8_t *syms, *strs;
	size_t nsyms, strsz, len, esz;
	int found = 0;

	if (sym_elf_mfile_open(&f, path, NULL, 0))
		return -ENOENT;
	if (sym_elf_parse(&e, path, &f, NULL, 0) == 0 && sym_elf_find_section(&e, ".symtab", &tab, NULL) &&
	    tab.type == SHT_SYMTAB && tab.link < e.shnum) {
		sym_elf_read_shdr(&e, tab.link, &strtab);
		esz = e.is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
		if (sym_elf_sec_data(&e, &tab, &syms, &nsyms) == 0 && sym_elf_sec_data(&e, &strtab, &strs, &strsz) == 0)
			for (size_t i = 0; i < nsyms / esz && !found; i++) {
				struct esym sy;
				const char *n;
				read_sym(&e, syms + i * esz, &sy);
				n = str_at(strs, strsz, sy.name, &len);
				if (n && len == strlen(name) && !memcmp(n, name, len) && sy.shndx != SHN_UNDEF) {
					*value = sy.value;
					found = 1;
				}
			}
	}
	sym_elf_mfile_close(&f);
	return found;
}

/*
 * The PT_LOAD segments of a kernel image (vmlinux, or a kcore copy, which is
 * ET_CORE): trace decoders map a kernel address to a file offset through the
 * segment covering it, since the kernel's map says nothing about the file.
 */
int rb_elf_load_segments(const char *path, struct rb_elf_segment **out, char *msg, size_t msglen)
{
	struct mfile f;
	struct elf e;
	struct phdr ph;
	struct rb_elf_segment *v = NULL;
	size_t n = 0;
	int err;

	*out = NULL;
	if ((err = sym_elf_mfile_open(&f, path, msg, msglen)))
		return err;
	if ((err = sym_elf_parse(&e, path, &f, msg, msglen)))
		goto out;
	if (e.phnum && !(v = calloc(e.phnum, sizeof(*v)))) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < e.phnum; i++) {
		read_phdr(&e, i, &ph);
		if (ph.type != PT_LOAD || !ph.filesz)
			continue;
		if (!in_file(&e, ph.offset, ph.filesz)) {
			err = symtab_fail(msg, msglen, -EINVAL, "%s: PT_LOAD %zu (file offset %#llx, %#llx bytes) runs past the end of the file",
					  path, i, (unsigned long long)ph.offset, (unsigned long long)ph.filesz);
			goto out;
		}
		v[n++] = (struct rb_elf_segment){ ph.offset, ph.vaddr, ph.filesz };
	}
	if (!n)
		err = symtab_fail(msg, msglen, -ENOEXEC, "%s: no PT_LOAD segment with file contents", path);
out:
	sym_elf_mfile_close(&f);
	if (err < 0) {
		free(v);
		return err;
	}
	*out = v;
	return (int)n;
}
