/*
 * test_symtab.c - TAP tests for decoder/session/symtab.c (with sym_elf.c, sym_find.c, sym_kallsyms.c), the perf-6.1-compatible
 * symbol resolver.
 *
 * Three kinds of input: small synthetic ELF files (64/32-bit, either byte
 * order) and a synthetic kallsyms listing written by this test, whose
 * expected tables follow from perf's rules by hand; the system's own
 * /usr/bin/dash, libc.so.6 and /proc/kallsyms, checked for properties that
 * hold on any machine; and corrupt or missing files, which must give
 * errors, never crashes (run it under ASan/UBSan).  Files go to a private
 * directory under $TMPDIR (default /tmp) that is removed at the end.
 */
#include "decoder/session/symtab.h"
#include "tap.h"

#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

static const char *tmp_path(const char *name)
{
	static char buf[4][512];
	static int k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
	return buf[k];
}

static int write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	int ok = f && fwrite(p, 1, n, f) == n;

	if (f)
		ok &= fclose(f) == 0;
	return ok ? 0 : -1;
}

static const struct rb_sym *by_name(const struct rb_symtab *t, const char *name)
{
	size_t i;

	for (i = 0; i < rb_symtab_count(t); i++)
		if (strcmp(rb_symtab_at(t, i)->name, name) == 0)
			return rb_symtab_at(t, i);
	return NULL;
}

static int sym_is(const struct rb_sym *s, const char *name, uint64_t start, uint64_t end, int bind)
{
	if (s && strcmp(s->name, name) == 0 && s->start == start && s->end == end && s->binding == bind)
		return 1;
	if (s)
		diag("got %s [%#llx, %#llx) bind %d", s->name, (unsigned long long)s->start,
		     (unsigned long long)s->end, s->binding);
	else
		diag("got no symbol");
	return 0;
}

static int sorted(const struct rb_symtab *t)
{
	size_t i;

	for (i = 1; i < rb_symtab_count(t); i++)
		if (rb_symtab_at(t, i - 1)->start > rb_symtab_at(t, i)->start)
			return 0;
	return 1;
}

/* ------------------------------------------------------------------ */
/* a tiny ELF writer                                                   */

struct eb {
	int is64, msb;
	uint8_t b[0x2000];
};

static void put(struct eb *e, size_t off, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		e->b[off + (size_t)(e->msb ? n - 1 - i : i)] = (uint8_t)(v >> (8 * i));
}

static void put_addr(struct eb *e, size_t off, uint64_t v)
{
	put(e, off, v, e->is64 ? 8 : 4);
}

enum { S_NOTE = 1, S_TEXT, S_PLT, S_DATA, S_BSS, S_NOALLOC, S_DYNSYM, S_DYNSTR, S_RELPLT, S_SYMTAB, S_STRTAB,
       S_SHSTR, S_COUNT };

struct sec {
	const char *name;
	uint32_t type;
	uint64_t flags, addr, off, size, entsize;
	uint32_t link;
};

/* File layout: PT_LOAD 1 maps offsets [0, 0x600) at +0x1000, PT_LOAD 2 maps [0x600, 0x640) at +0x2000 (memsz 0x80). */
static struct sec secs[S_COUNT] = {
	[S_NOTE] = { ".note.gnu.build-id", SHT_NOTE, SHF_ALLOC, 0x1300, 0x300, 36, 0, 0 },
	[S_TEXT] = { ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0x1400, 0x400, 0x100, 0, 0 },
	[S_PLT] = { ".plt", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0x1500, 0x500, 0x30, 16, 0 },
	[S_DATA] = { ".data", SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, 0x2600, 0x600, 0x40, 0, 0 },
	[S_BSS] = { ".bss", SHT_NOBITS, SHF_ALLOC | SHF_WRITE, 0x2640, 0x640, 0x40, 0, 0 },
	[S_NOALLOC] = { ".gnu.warning.x", SHT_PROGBITS, 0, 0, 0x640, 0x10, 0, 0 },
	[S_DYNSYM] = { ".dynsym", SHT_DYNSYM, SHF_ALLOC, 0x1700, 0x700, 0, 0, S_DYNSTR },
	[S_DYNSTR] = { ".dynstr", SHT_STRTAB, SHF_ALLOC, 0x1800, 0x800, 0, 0, 0 },
	[S_RELPLT] = { ".rela.plt", SHT_RELA, SHF_ALLOC, 0x1880, 0x880, 0, 0, S_DYNSYM },
	[S_SYMTAB] = { ".symtab", SHT_SYMTAB, 0, 0, 0x900, 0, 0, S_STRTAB },
	[S_STRTAB] = { ".strtab", SHT_STRTAB, 0, 0, 0xc00, 0, 0, 0 },
	[S_SHSTR] = { ".shstrtab", SHT_STRTAB, 0, 0, 0xd00, 0, 0, 0 },
};

#define SHOFF 0xe00

struct tsym {
	const char *name;
	int type, bind, vis, shndx;
	uint64_t value, size;
};

/* .symtab: what perf keeps, drops, merges and rebases. */
static const struct tsym symtab_syms[] = {
	{ "local_fn", STT_FUNC, STB_LOCAL, 0, S_TEXT, 0x1400, 0x20 },
	{ "zero_fn", STT_FUNC, STB_GLOBAL, 0, S_TEXT, 0x1420, 0 },
	{ "alias_weak", STT_FUNC, STB_WEAK, 0, S_TEXT, 0x1440, 0x10 },
	{ "alias_glob", STT_FUNC, STB_GLOBAL, 0, S_TEXT, 0x1440, 0x10 },
	{ "__under", STT_FUNC, STB_GLOBAL, 0, S_TEXT, 0x1450, 0x10 },
	{ "under", STT_FUNC, STB_GLOBAL, 0, S_TEXT, 0x1450, 0x10 },
	{ "short", STT_FUNC, STB_GLOBAL, 0, S_TEXT, 0x1460, 0x10 },
	{ "longer", STT_FUNC, STB_GLOBAL, 0, S_TEXT, 0x1460, 0x10 },
	{ "text_label", STT_NOTYPE, STB_GLOBAL, 0, S_TEXT, 0x1470, 0 },
	{ "hidden_label", STT_NOTYPE, STB_GLOBAL, STV_HIDDEN, S_TEXT, 0x1478, 0 },
	{ "data_obj", STT_OBJECT, STB_GLOBAL, 0, S_DATA, 0x2600, 8 },
	{ "bss_obj", STT_OBJECT, STB_LOCAL, 0, S_BSS, 0x2640, 0 },
	{ "file.c", STT_FILE, STB_LOCAL, 0, SHN_ABS, 0, 0 },
	{ "", STT_SECTION, STB_LOCAL, 0, S_TEXT, 0x1400, 0 },
	{ "abs_fn", STT_FUNC, STB_GLOBAL, 0, SHN_ABS, 0x1490, 4 },
	{ "undef_fn", STT_FUNC, STB_GLOBAL, 0, SHN_UNDEF, 0, 0 },
	{ "ifunc_fn", STT_GNU_IFUNC, STB_GLOBAL, 0, S_TEXT, 0x1480, 0x10 },
	{ "tls_var", STT_TLS, STB_GLOBAL, 0, S_DATA, 0x2608, 8 },
	{ "last_fn", STT_FUNC, STB_GLOBAL, 0, S_TEXT, 0x14f0, 0 },
	{ "camlFoo__bar$2e1", STT_FUNC, STB_GLOBAL, 0, S_TEXT, 0x14c0, 0x10 },
	{ "noalloc_fn", STT_FUNC, STB_GLOBAL, 0, S_NOALLOC, 0, 4 },
};

static const struct tsym dynsym_syms[] = {
	{ "ext_a", STT_FUNC, STB_GLOBAL, 0, SHN_UNDEF, 0, 0 },
	{ "ext_b", STT_FUNC, STB_GLOBAL, 0, SHN_UNDEF, 0, 0 },
	{ "data_obj", STT_OBJECT, STB_GLOBAL, 0, S_DATA, 0x2600, 8 },
};

static size_t add_str(struct eb *e, size_t base, size_t *len, const char *s)
{
	size_t at = *len;

	memcpy(e->b + base + at, s, strlen(s) + 1);
	*len += strlen(s) + 1;
	return at;
}

static void put_sym(struct eb *e, size_t off, uint32_t name, const struct tsym *s)
{
	uint8_t info = (uint8_t)((s->bind << 4) | s->type);

	put(e, off, name, 4);
	if (e->is64) {
		e->b[off + 4] = info;
		e->b[off + 5] = (uint8_t)s->vis;
		put(e, off + 6, (uint64_t)s->shndx, 2);
		put(e, off + 8, s->value, 8);
		put(e, off + 16, s->size, 8);
	} else {
		put(e, off + 4, s->value, 4);
		put(e, off + 8, s->size, 4);
		e->b[off + 12] = info;
		e->b[off + 13] = (uint8_t)s->vis;
		put(e, off + 14, (uint64_t)s->shndx, 2);
	}
}

static void write_syms(struct eb *e, int sec, int strsec, const struct tsym *v, size_t n)
{
	size_t esz = e->is64 ? 24 : 16, slen = 1, i;

	for (i = 0; i < n; i++)
		put_sym(e, secs[sec].off + (i + 1) * esz, (uint32_t)add_str(e, secs[strsec].off, &slen, v[i].name), &v[i]);
	secs[sec].size = (n + 1) * esz;
	secs[sec].entsize = esz;
	secs[strsec].size = slen;
}

/* Two PLT relocations against dynsym entries 1 and 2 (RELA on 64-bit, REL on 32-bit like i386). */
static void write_relplt(struct eb *e)
{
	size_t i, esz = e->is64 ? 24 : 8;

	secs[S_RELPLT].name = e->is64 ? ".rela.plt" : ".rel.plt";
	secs[S_RELPLT].type = e->is64 ? SHT_RELA : SHT_REL;
	for (i = 0; i < 2; i++) {
		size_t off = secs[S_RELPLT].off + i * esz;

		put_addr(e, off, 0x3000 + 8 * i);
		if (e->is64)
			put(e, off + 8, ((uint64_t)(i + 1) << 32) | R_X86_64_JUMP_SLOT, 8);
		else
			put(e, off + 4, ((uint64_t)(i + 1) << 8) | R_386_JMP_SLOT, 4);
	}
	secs[S_RELPLT].size = 2 * esz;
	secs[S_RELPLT].entsize = esz;
}

static void write_note(struct eb *e)
{
	size_t o = secs[S_NOTE].off, i;

	put(e, o, 4, 4);
	put(e, o + 4, 20, 4);
	put(e, o + 8, NT_GNU_BUILD_ID, 4);
	memcpy(e->b + o + 12, "GNU", 4);
	for (i = 0; i < 20; i++)
		e->b[o + 16 + i] = (uint8_t)(i + 1);
}

static void write_shdrs(struct eb *e, int with_symtab)
{
	size_t esz = e->is64 ? 64 : 40, slen = 1, i;
	int w = e->is64 ? 8 : 4;

	for (i = 1; i < S_COUNT; i++) {
		size_t o = SHOFF + i * esz;
		const struct sec *s = &secs[i];
		uint32_t name = (uint32_t)add_str(e, secs[S_SHSTR].off, &slen, s->name);

		if (!with_symtab && (i == S_SYMTAB || i == S_STRTAB))
			name = (uint32_t)add_str(e, secs[S_SHSTR].off, &slen, i == S_SYMTAB ? ".unused1" : ".unused2");
		put(e, o, name, 4);
		put(e, o + 4, with_symtab || (i != S_SYMTAB) ? s->type : SHT_PROGBITS, 4);
		put(e, o + 8, s->flags, w);
		put(e, o + 8 + w, s->addr, w);
		put(e, o + 8 + 2 * w, s->off, w);
		put(e, o + 8 + 3 * w, s->size, w);
		put(e, o + 8 + 4 * w, s->link, 4);
		put(e, o + 16 + 5 * w, s->entsize, w);
	}
	secs[S_SHSTR].size = slen;     /* written last, so its own header sees the final size */
	put(e, SHOFF + S_SHSTR * esz + 8 + 3 * w, slen, w);
}

static void write_phdr(struct eb *e, size_t i, uint64_t off, uint64_t vaddr, uint64_t filesz, uint64_t memsz)
{
	size_t o = (e->is64 ? 64 : 52) + i * (e->is64 ? 56 : 32);

	put(e, o, PT_LOAD, 4);
	if (e->is64) {
		put(e, o + 4, PF_R | PF_X, 4);
		put(e, o + 8, off, 8);
		put(e, o + 16, vaddr, 8);
		put(e, o + 32, filesz, 8);
		put(e, o + 40, memsz, 8);
	} else {
		put(e, o + 4, off, 4);
		put(e, o + 8, vaddr, 4);
		put(e, o + 16, filesz, 4);
		put(e, o + 20, memsz, 4);
		put(e, o + 24, PF_R | PF_X, 4);
	}
}

static void write_ehdr(struct eb *e, uint16_t machine)
{
	uint8_t *p = e->b;
	size_t h = e->is64 ? 64 : 52;

	memcpy(p, ELFMAG, SELFMAG);
	p[EI_CLASS] = e->is64 ? ELFCLASS64 : ELFCLASS32;
	p[EI_DATA] = e->msb ? ELFDATA2MSB : ELFDATA2LSB;
	p[EI_VERSION] = EV_CURRENT;
	put(e, 16, ET_DYN, 2);
	put(e, 18, machine, 2);
	put(e, 20, EV_CURRENT, 4);
	put_addr(e, e->is64 ? 32 : 28, h);                       /* e_phoff */
	put_addr(e, e->is64 ? 40 : 32, SHOFF);                   /* e_shoff */
	put(e, h - 12, h, 2);                                    /* e_ehsize */
	put(e, h - 10, e->is64 ? 56 : 32, 2);                    /* e_phentsize */
	put(e, h - 8, 2, 2);                                     /* e_phnum */
	put(e, h - 6, e->is64 ? 64 : 40, 2);                     /* e_shentsize */
	put(e, h - 4, S_COUNT, 2);                               /* e_shnum */
	put(e, h - 2, S_SHSTR, 2);                               /* e_shstrndx */
}

static size_t build_elf(struct eb *e, int is64, int msb, int with_symtab)
{
	memset(e, 0, sizeof(*e));
	e->is64 = is64;
	e->msb = msb;
	write_ehdr(e, is64 ? (msb ? EM_PPC64 : EM_X86_64) : EM_386);
	write_phdr(e, 0, 0, 0x1000, 0x600, 0x600);
	write_phdr(e, 1, 0x600, 0x2600, 0x40, 0x80);
	write_note(e);
	write_syms(e, S_SYMTAB, S_STRTAB, symtab_syms, sizeof(symtab_syms) / sizeof(symtab_syms[0]));
	write_syms(e, S_DYNSYM, S_DYNSTR, dynsym_syms, sizeof(dynsym_syms) / sizeof(dynsym_syms[0]));
	write_relplt(e);
	write_shdrs(e, with_symtab);
	return SHOFF + S_COUNT * (is64 ? 64 : 40);
}

/* ------------------------------------------------------------------ */
/* synthetic ELF: perf's rules                                         */

static struct rb_symtab *load_elf(const char *path, char *msg, size_t len, int *err)
{
	struct rb_symtab *t = NULL;
	struct rb_symtab_elf_opts o = { NULL, 1, NULL, 0, NULL, "" };

	*err = rb_symtab_load_elf_opts(&t, path, &o, msg, len);
	return t;
}

static void check_synthetic_table(const struct rb_symtab *t, const char *what)
{
	ok(sym_is(by_name(t, "local_fn"), "local_fn", 0x400, 0x420, 0), "%s: local function rebased by p_vaddr - p_offset", what);
	ok(sym_is(by_name(t, "zero_fn"), "zero_fn", 0x420, 0x440, 1), "%s: zero-size function ends at the next symbol", what);
	ok(sym_is(rb_symtab_find(t, 0x448), "alias_glob", 0x440, 0x450, 1) && !by_name(t, "alias_weak"),
	   "%s: of two aliases the global one stays, the weak one goes", what);
	ok(sym_is(rb_symtab_find(t, 0x450), "under", 0x450, 0x460, 1) && !by_name(t, "__under"),
	   "%s: alias with fewer leading underscores stays", what);
	ok(sym_is(rb_symtab_find(t, 0x46f), "longer", 0x460, 0x470, 1) && !by_name(t, "short"),
	   "%s: alias with the longer name stays", what);
	ok(sym_is(by_name(t, "text_label"), "text_label", 0x470, 0x480, 1) && !by_name(t, "hidden_label"),
	   "%s: default-visibility NOTYPE label in .text kept, hidden one dropped", what);
	ok(sym_is(by_name(t, "ifunc_fn"), "ifunc_fn", 0x480, 0x490, 1), "%s: STT_GNU_IFUNC kept", what);
	ok(sym_is(by_name(t, "Foo.bar.1"), "Foo.bar.1", 0x4c0, 0x4d0, 1), "%s: OCaml name demangled like perf", what);
	ok(sym_is(by_name(t, "last_fn"), "last_fn", 0x4f0, 0x600, 1), "%s: last function ends at the next (data) symbol", what);
	ok(sym_is(by_name(t, "data_obj"), "data_obj", 0x600, 0x608, 1), "%s: STT_OBJECT kept and rebased", what);
	ok(sym_is(by_name(t, "bss_obj"), "bss_obj", 0x640, 0x2000, 0),
	   "%s: .bss object rebased through the NOBITS segment tail; last symbol ends a page past its page", what);
	ok(!by_name(t, "file.c") && !by_name(t, "abs_fn") && !by_name(t, "undef_fn") && !by_name(t, "tls_var") &&
	   !by_name(t, "noalloc_fn"), "%s: FILE, SECTION, ABS, UNDEF, TLS and non-ALLOC symbols dropped", what);
	ok(sym_is(by_name(t, "ext_a@plt"), "ext_a@plt", 0x510, 0x520, 1) &&
	   sym_is(by_name(t, "ext_b@plt"), "ext_b@plt", 0x520, 0x530, 1),
	   "%s: PLT entries synthesized at .plt file offset + header, one entry size each", what);
	ok(rb_symtab_count(t) == 13 && sorted(t), "%s: 13 symbols, sorted by start (got %zu)", what, rb_symtab_count(t));
}

static void test_synthetic_elf(void)
{
	static const struct { int is64, msb; const char *what; } kinds[] = {
		{ 1, 0, "ELF64 LSB" }, { 0, 0, "ELF32 LSB" }, { 1, 1, "ELF64 MSB" }, { 0, 1, "ELF32 MSB" },
	};
	struct eb e;
	char msg[256];
	size_t i, n;
	int err;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		struct rb_symtab *t;
		uint8_t id[20];
		const char *p = tmp_path("synth.so");

		n = build_elf(&e, kinds[i].is64, kinds[i].msb, 1);
		write_file(p, e.b, n);
		t = load_elf(p, msg, sizeof(msg), &err);
		if (!ok(err == 0 && t, "%s: synthetic object loads (%s)", kinds[i].what, msg))
			continue;
		check_synthetic_table(t, kinds[i].what);
		ok(rb_elf_build_id(p, id, sizeof(id)) == 20 && id[0] == 1 && id[19] == 20, "%s: build-id read", kinds[i].what);
		rb_symtab_free(t);
	}
}

/* Without .symtab perf falls back to .dynsym: only its defined symbols, plus the PLT. */
static void test_dynsym_only(void)
{
	struct rb_symtab *t;
	struct eb e;
	char msg[256];
	int err;
	const char *p = tmp_path("dynonly.so");

	write_file(p, e.b, build_elf(&e, 1, 0, 0));
	t = load_elf(p, msg, sizeof(msg), &err);
	ok(err == 0 && rb_symtab_count(t) == 3 && by_name(t, "data_obj") && by_name(t, "ext_a@plt") &&
	   !by_name(t, "local_fn"), "stripped object: .dynsym symbols and PLT only (%zu symbols)", rb_symtab_count(t));
	rb_symtab_free(t);
}

/* perf's map__map_ip: file-offset space for ELF objects, identity for the kernel. */
static void test_map_ip(void)
{
	struct rb_symtab *t;
	struct eb e;
	char msg[256];
	int err;
	const char *p = tmp_path("mapip.so");

	write_file(p, e.b, build_elf(&e, 1, 0, 1));
	t = load_elf(p, msg, sizeof(msg), &err);
	ok(rb_symtab_map_ip(t, 0x7f0000001410, 0x7f0000001000, 0x1000) == 0x1410, "map_ip is ip - start + pgoff");
	ok(sym_is(rb_symtab_find(t, rb_symtab_map_ip(t, 0x7f0000000410, 0x7f0000000000, 0)), "local_fn", 0x400, 0x420, 0),
	   "sample ip resolves through its mapping");
	ok(rb_symtab_map_ip(NULL, 100, 40, 2) == 62, "map_ip with no table is the user-space formula");
	rb_symtab_free(t);
}

/* perf's export inserts "unknown" symbols and caches the last lookup; both change later answers. */
static void test_export_state(void)
{
	struct rb_symtab *t;
	const struct rb_sym *u, *s;
	struct eb e;
	char msg[256];
	int err;
	const char *p = tmp_path("state.so");

	write_file(p, e.b, build_elf(&e, 1, 0, 1));
	t = load_elf(p, msg, sizeof(msg), &err);
	ok(rb_symtab_lookup(t, 0x4a0) == NULL, "no symbol at a gap");
	u = rb_symtab_export_lookup(t, 0x4a0);
	ok(sym_is(u, "unknown", 0x4a0, 0x4a0, 0), "export lookup adds a zero-size local 'unknown' symbol");
	ok(rb_symtab_find(t, 0x4a0) == u && rb_symtab_lookup(t, 0x4a0) == u, "later lookups find it");
	ok(rb_symtab_count(t) == 13 && !by_name(t, "unknown"), "added symbols are not listed with the loaded ones");
	ok(rb_symtab_lookup(t, 0x4b0) == NULL, "a different gap still has none");
	s = rb_symtab_add_unknown(t, 0x4a8);
	ok(rb_symtab_lookup(t, 0x4b0) == s && rb_symtab_find(t, 0x4b0) == NULL,
	   "perf's cache quirk: an added zero-size symbol below the cached address answers the next lookup of it");
	ok(sym_is(rb_symtab_export_lookup(t, 0x410), "local_fn", 0x400, 0x420, 0), "export lookup of a known address");
	/* lookups remembered before "unknown" symbols are added still give the tree's answer after */
	int same = 1;
	for (uint64_t a = 0x300; a < 0x800; a += 3)
		(void)rb_symtab_lookup(t, a);
	for (uint64_t a = 0x301; a < 0x800; a += 7)
		if (!rb_symtab_find(t, a))
			(void)rb_symtab_export_lookup(t, a);
	for (uint64_t a = 0x300; a < 0x800; a += 3)
		same &= rb_symtab_lookup(t, a) == rb_symtab_find(t, a);
	ok(same, "lookups agree with the tree after unknown symbols were added");
	rb_symtab_free(t);
}

/* ------------------------------------------------------------------ */
/* corrupt input                                                       */

static int load_bytes(const void *p, size_t n, char *msg, size_t len)
{
	struct rb_symtab *t = NULL;
	const char *path = tmp_path("corrupt.so");
	int err;

	write_file(path, p, n);
	t = load_elf(path, msg, len, &err);
	rb_symtab_free(t);
	return err;
}

static void patch_shdr(struct eb *e, int sec, int field_off, uint64_t v, int n)
{
	put(e, SHOFF + (size_t)sec * 64 + (size_t)field_off, v, n);
}

static void test_corrupt_fields(void)
{
	static const struct { int sec, off, n; uint64_t v; const char *what; } cases[] = {
		{ S_SYMTAB, 24, 8, 0xfffffff0, "symbol table offset past end of file" },
		{ S_SYMTAB, 32, 8, 0x10000, "symbol table size past end of file" },
		{ S_SYMTAB, 56, 8, 7, "odd symbol entry size" },
		{ S_SYMTAB, 40, 4, 200, "bad string table link" },
		{ S_STRTAB, 32, 8, 3, "string table too short for the names" },
		{ S_SHSTR, 24, 8, 0x7fffffff, "section name table past end of file" },
	};
	struct eb e;
	char msg[256];
	size_t i, n;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		n = build_elf(&e, 1, 0, 1);
		patch_shdr(&e, cases[i].sec, cases[i].off, cases[i].v, cases[i].n);
		msg[0] = '\0';
		ok(load_bytes(e.b, n, msg, sizeof(msg)) < 0 && strstr(msg, "corrupt.so"), "%s: error (%s)", cases[i].what, msg);
	}
	n = build_elf(&e, 1, 0, 1);
	put(&e, 60, 0x7fff, 2);                            /* e_shnum of an ELF64 header */
	ok(load_bytes(e.b, n, msg, sizeof(msg)) < 0, "section header count past end of file: error (%s)", msg);
	n = build_elf(&e, 1, 0, 1);
	put_sym(&e, secs[S_SYMTAB].off + 24, 1, &(struct tsym){ "x", STT_FUNC, STB_GLOBAL, 0, 0xfff2, 0x1400, 4 });
	ok(load_bytes(e.b, n, msg, sizeof(msg)) < 0, "function in SHN_COMMON: error (%s)", msg);
}

/* Every truncation and every byte forced to 0xff: never a crash (ASan watches). */
static void test_mutations(void)
{
	struct eb e, m;
	char msg[256];
	size_t n = build_elf(&e, 1, 0, 1), i, errs = 0;

	for (i = 0; i < n; i += 7)
		errs += load_bytes(e.b, i, msg, sizeof(msg)) < 0;
	ok(errs == (n + 6) / 7, "all %zu truncations of a valid object are errors", (n + 6) / 7);
	for (i = 0; i < n; i++) {
		m = e;
		m.b[i] ^= 0xff;
		load_bytes(m.b, n, msg, sizeof(msg));
	}
	ok(1, "flipping each of %zu bytes in turn never crashes", n);
}

static void test_bad_files(void)
{
	static const char garbage[] = "this is not an ELF file, just some text\n";
	struct rb_symtab *t = (struct rb_symtab *)1;
	char msg[256];
	int err;

	write_file(tmp_path("empty"), "", 0);
	write_file(tmp_path("garbage"), garbage, sizeof(garbage));
	err = rb_symtab_load_elf(&t, tmp_path("empty"), msg, sizeof(msg));
	ok(err < 0 && t == NULL && strstr(msg, "empty"), "empty file: error, *out NULL (%s)", msg);
	err = rb_symtab_load_elf(&t, tmp_path("garbage"), msg, sizeof(msg));
	ok(err == -ENOEXEC && strstr(msg, "not an ELF"), "garbage: not an ELF file (%s)", msg);
	err = rb_symtab_load_elf(&t, tmp_path("does-not-exist"), msg, sizeof(msg));
	ok(err == -ENOENT && strstr(msg, "does-not-exist"), "missing file: -ENOENT (%s)", msg);
	err = rb_symtab_load_elf(&t, dir, msg, sizeof(msg));
	ok(err < 0, "directory: error (%s)", msg);
	ok(rb_elf_build_id(tmp_path("garbage"), (uint8_t[20]){ 0 }, 20) < 0, "build-id of garbage: error");
	err = rb_symtab_load_kallsyms(&t, tmp_path("garbage"), msg, sizeof(msg));
	ok(err < 0 && t == NULL, "kallsyms from a non-kallsyms file: error (%s)", msg);
	err = rb_symtab_load_kallsyms(&t, tmp_path("does-not-exist"), msg, sizeof(msg));
	ok(err == -ENOENT, "missing kallsyms: -ENOENT (%s)", msg);
}

static void test_truncated_system_elf(void)
{
	static const size_t cuts[] = { 1, 16, 63, 64, 1000, 4096, 20000 };
	FILE *f = fopen("/usr/bin/dash", "rb");
	static uint8_t buf[200000];
	char msg[256];
	size_t n, i, errs = 0;

	if (!f) {
		printf("ok %d - # SKIP no /usr/bin/dash\n", ++tap_n);
		return;
	}
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	for (i = 0; i < sizeof(cuts) / sizeof(cuts[0]) && cuts[i] < n; i++)
		errs += load_bytes(buf, cuts[i], msg, sizeof(msg)) < 0;
	ok(errs == i, "truncated copies of dash: %zu of %zu are errors (last: %s)", errs, i, msg);
}

/* ------------------------------------------------------------------ */
/* kallsyms                                                            */

static const char kallsyms_text[] =
	"ffffffff81000000 T _text\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff81000010 t local_text\n"
	"ffffffff81000020 W weak_sym\n"
	"ffffffff81000030 w lower_weak\n"
	"ffffffff81000040 R rodata_sym\n"
	"ffffffff81000050 D data_sym\n"
	"ffffffff81000060 b bss_sym\n"
	"ffffffff81000070 A abs_sym\n"
	"ffffffff81000080 T $x\n"
	"ffffffff81000090 T __entry_SYSCALL_64_trampoline\n"
	"ffffffff810000a0 T SyS_read\n"
	"ffffffff810000a0 T sys_read\n"
	"this line is garbage\n"
	"ffffffff810000b0\n"
	"ffffffff810000b8 T eaten_by_the_previous_line\n"
	"ffffffff810000c0 T last_kernel\n"
	"ffffffffc0000000 t mod_fn\t[mymod]\n"
	"ffffffffc0000010 T mod_fn2\t[mymod]\n";

static void test_kallsyms_rules(void)
{
	struct rb_symtab *t = NULL;
	char msg[256];
	const char *p = tmp_path("kallsyms");
	const uint64_t k = 0xffffffff81000000ull;

	write_file(p, kallsyms_text, sizeof(kallsyms_text) - 1);
	if (!ok(rb_symtab_load_kallsyms(&t, p, msg, sizeof(msg)) == 0, "synthetic kallsyms loads (%s)", msg))
		return;
	ok(rb_symtab_is_kernel(t) && rb_symtab_map_ip(t, k + 5, 1, 2) == k + 5, "kernel table: map_ip is the identity");
	ok(sym_is(rb_symtab_find(t, k), "_stext", k, k + 0x10, 1) && !by_name(t, "_text"),
	   "same address: the alias that kept a length after the end fix-up stays");
	ok(sym_is(by_name(t, "local_text"), "local_text", k + 0x10, k + 0x20, 0), "lower-case t is local");
	ok(sym_is(by_name(t, "weak_sym"), "weak_sym", k + 0x20, k + 0x30, 2), "W is weak");
	ok(sym_is(by_name(t, "lower_weak"), "lower_weak", k + 0x30, k + 0x50, 0), "lower-case w is local; R skipped");
	ok(sym_is(by_name(t, "data_sym"), "data_sym", k + 0x50, k + 0x60, 1), "D kept");
	ok(sym_is(by_name(t, "bss_sym"), "bss_sym", k + 0x60, k + 0x90, 0), "b kept; A and $-names skipped");
	ok(!by_name(t, "__entry_SYSCALL_64_trampoline") && rb_symtab_find(t, k + 0x95) == NULL,
	   "entry trampoline removed after the end fix-up, leaving a hole");
	ok(sym_is(by_name(t, "sys_read"), "sys_read", k + 0xa0, k + 0xc0, 1) && !by_name(t, "SyS_read"),
	   "SyS_ alias loses; garbage and hex-only lines skipped");
	ok(!by_name(t, "eaten_by_the_previous_line"), "a line with only an address swallows the next line, as in perf");
	ok(sym_is(by_name(t, "last_kernel"), "last_kernel", k + 0xc0, k + 0x2000, 1),
	   "symbol before the module range ends at the next page boundary after one page");
	ok(!by_name(t, "mod_fn") && !by_name(t, "mod_fn2") && rb_symtab_count(t) == 8,
	   "module symbols are not in the kernel table (%zu symbols)", rb_symtab_count(t));
	rb_symtab_free(t);
	if (!ok(rb_symtab_load_kallsyms_module(&t, p, "mymod", 0xffffffffc0000000ull, msg, sizeof(msg)) == 0,
		"module table loads (%s)", msg))
		return;
	ok(sym_is(rb_symtab_at(t, 0), "mod_fn", 0, 0x10, 0) && sym_is(rb_symtab_at(t, 1), "mod_fn2", 0x10, 0x2000, 1) &&
	   rb_symtab_count(t) == 2, "module symbols: tag stripped, relative to the module map");
	ok(!rb_symtab_is_kernel(t) && rb_symtab_map_ip(t, 0xffffffffc0000014ull, 0xffffffffc0000000ull, 0) == 0x14 &&
	   rb_symtab_find(t, 0x14) == rb_symtab_at(t, 1), "module ip maps as ip - map start");
	rb_symtab_free(t);
	ok(rb_symtab_load_kallsyms_module(&t, p, "othermod", 0, msg, sizeof(msg)) == -ENOENT && !t,
	   "unknown module: -ENOENT (%s)", msg);
	ok(rb_symtab_load_kallsyms_module(&t, p, NULL, 0, msg, sizeof(msg)) == -EINVAL, "module: NULL name");
}

static void test_proc_kallsyms(void)
{
	struct rb_symtab *t = NULL;
	const struct rb_sym *s;
	char msg[256];
	size_t i, bad = 0;

	if (rb_symtab_load_kallsyms(&t, "/proc/kallsyms", msg, sizeof(msg)) != 0) {
		printf("ok %d - # SKIP /proc/kallsyms: %s\n", ++tap_n, msg);
		return;
	}
	if (rb_symtab_count(t) < 2 || rb_symtab_at(t, 0)->start == 0) {
		printf("ok %d - # SKIP /proc/kallsyms addresses are hidden (kptr_restrict)\n", ++tap_n);
		rb_symtab_free(t);
		return;
	}
	ok(rb_symtab_count(t) > 1000 && sorted(t), "/proc/kallsyms: %zu symbols, sorted", rb_symtab_count(t));
	for (i = 0; i < rb_symtab_count(t); i++) {
		s = rb_symtab_at(t, i);
		bad += s->end <= s->start || strchr(s->name, '\t') || rb_symtab_find(t, s->start) != s;
	}
	ok(bad == 0, "/proc/kallsyms: every symbol has a length, no module tag, and is found at its start (%zu bad)", bad);
	s = by_name(t, "schedule");
	if (s)
		ok(rb_symtab_find(t, s->start + 1) == s, "schedule+1 resolves to schedule");
	else
		printf("ok %d - # SKIP no schedule symbol\n", ++tap_n);
	rb_symtab_free(t);
}

/* ------------------------------------------------------------------ */
/* system binaries                                                     */

static size_t count_suffix(const struct rb_symtab *t, const char *suffix)
{
	size_t i, n = 0, l = strlen(suffix);

	for (i = 0; i < rb_symtab_count(t); i++) {
		const char *nm = rb_symtab_at(t, i)->name;

		n += strlen(nm) >= l && strcmp(nm + strlen(nm) - l, suffix) == 0;
	}
	return n;
}

static size_t self_consistency(const struct rb_symtab *t)
{
	size_t i, bad = 0;

	for (i = 0; i < rb_symtab_count(t); i++) {
		const struct rb_sym *s = rb_symtab_at(t, i), *f = rb_symtab_find(t, s->start);

		bad += s->end < s->start || !f || f->start > s->start || (f->end <= s->start && f->end != f->start);
	}
	return bad;
}

static void test_dash(void)
{
	struct rb_symtab *t = NULL;
	const struct rb_sym *s;
	char msg[256];
	uint8_t id[20];

	if (rb_symtab_load_elf(&t, "/usr/bin/dash", msg, sizeof(msg)) != 0) {
		printf("ok %d - # SKIP /usr/bin/dash: %s\n", ++tap_n, msg);
		return;
	}
	ok(rb_symtab_count(t) > 10 && sorted(t), "dash: %zu symbols, sorted", rb_symtab_count(t));
	ok(count_suffix(t, "@plt") > 10, "dash: PLT symbols synthesized (%zu)", count_suffix(t, "@plt"));
	s = by_name(t, "strcmp@plt");
	ok(s && s->end - s->start == 16 && s->binding == 1 && rb_symtab_find(t, s->start + 15) == s,
	   "dash: strcmp@plt is a 16-byte global symbol found inside its range");
	ok(self_consistency(t) == 0, "dash: every symbol is found at its start");
	ok(rb_elf_build_id("/usr/bin/dash", id, sizeof(id)) == 20, "dash: 20-byte build-id");
	ok(rb_elf_build_id("/usr/bin/dash", id, 8) == 8, "build-id copy is bounded by max");
	rb_symtab_free(t);
}

static void test_libc(void)
{
	const char *path = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	struct rb_symtab *t = NULL;
	const struct rb_sym *m;
	char msg[256], dbg[512];
	int has_dbg = rb_elf_find_debuginfo(path, NULL, NULL, 0, dbg, sizeof(dbg)) == 1;

	if (rb_symtab_load_elf(&t, path, msg, sizeof(msg)) != 0) {
		printf("ok %d - # SKIP %s: %s\n", ++tap_n, path, msg);
		return;
	}
	m = by_name(t, "malloc");
	ok(m && m->end > m->start + 1 && rb_symtab_find(t, m->start + 1) == m, "libc: malloc found and resolves inside");
	ok(self_consistency(t) == 0 && sorted(t), "libc: %zu symbols, consistent", rb_symtab_count(t));
	if (has_dbg)
		ok(strcmp(rb_symtab_source(t), dbg) == 0 && by_name(t, "_int_free"),
		   "libc: symbols come from the debug file %s, with local symbols", dbg);
	else
		ok(strcmp(rb_symtab_source(t), path) == 0, "libc: no debug file, symbols from the object itself");
	rb_symtab_free(t);
}

/* ------------------------------------------------------------------ */
/* arguments                                                           */

static void test_null_arguments(void)
{
	struct rb_symtab *t;
	char msg[64];

	ok(rb_symtab_load_elf(NULL, "/usr/bin/dash", msg, sizeof(msg)) == -EINVAL, "load_elf: NULL out");
	ok(rb_symtab_load_elf(&t, NULL, msg, sizeof(msg)) == -EINVAL && t == NULL, "load_elf: NULL path");
	ok(rb_symtab_load_elf(&t, "", NULL, 0) == -EINVAL, "load_elf: empty path, no message buffer");
	ok(rb_symtab_load_kallsyms(NULL, "/proc/kallsyms", NULL, 0) == -EINVAL, "load_kallsyms: NULL out");
	ok(rb_symtab_load_kallsyms(&t, NULL, msg, 1) == -EINVAL && msg[0] == '\0', "load_kallsyms: NULL path, 1-byte msg");
	rb_symtab_free(NULL);
	ok(rb_symtab_count(NULL) == 0 && rb_symtab_at(NULL, 0) == NULL && rb_symtab_find(NULL, 1) == NULL &&
	   rb_symtab_lookup(NULL, 1) == NULL && rb_symtab_add_unknown(NULL, 1) == NULL &&
	   rb_symtab_export_lookup(NULL, 1) == NULL && rb_symtab_source(NULL) == NULL && !rb_symtab_is_kernel(NULL),
	   "accessors accept NULL");
	ok(rb_elf_build_id(NULL, NULL, 0) < 0 && rb_elf_build_id("/usr/bin/dash", NULL, 20) < 0, "build_id: bad arguments");
	ok(rb_elf_find_debuginfo(NULL, NULL, NULL, 0, msg, sizeof(msg)) < 0, "find_debuginfo: NULL path");
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/test_symtab.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		printf("not ok 1 - cannot create a temporary directory\n1..1\n");
		return 1;
	}
	test_synthetic_elf();
	test_dynsym_only();
	test_map_ip();
	test_export_state();
	test_corrupt_fields();
	test_mutations();
	test_bad_files();
	test_truncated_system_elf();
	test_kallsyms_rules();
	test_proc_kallsyms();
	test_dash();
	test_libc();
	test_null_arguments();
	{
		static const char *names[] = { "synth.so", "dynonly.so", "mapip.so", "state.so", "corrupt.so",
					       "empty", "garbage", "kallsyms" };
		size_t i;

		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			unlink(tmp_path(names[i]));
		rmdir(dir);
	}
	return done_testing();
}
