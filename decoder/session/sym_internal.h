/*
 * sym_internal.h - what the files behind symtab.h share: the symbol tree
 * and what symtab.c lends the loaders (messages, tree insert / walk /
 * erase, perf's fix-ups, the finished table, the names perf shows); a
 * mapped file, an ELF file's headers and a symbol source from sym_elf.c;
 * the files sym_find.c picked. Functions are named by the file that has
 * them (symtab_, sym_elf_, sym_find_); small hot helpers are static inline
 * here. The overview is at the top of symtab.c. Not for use outside this
 * folder.
 */
#ifndef RB_SYM_INTERNAL_H
#define RB_SYM_INTERNAL_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "symtab.h"

#define NONE ((size_t)-1)
#define BUILD_ID_MAX 20

/* ------------------------------------------------------------ symtab.c */

int symtab_fail(char *msg, size_t msglen, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The symbol tree (symtab.c says why it is perf's red-black tree). */
#define CHUNK_BITS 12
#define CHUNK ((size_t)1 << CHUNK_BITS)

struct node {
	struct rb_sym s;             /* s.name is set when loading finishes */
	size_t name;                 /* offset into the name arena while loading */
	size_t left, right, parent;
	uint8_t red;
	uint8_t dead;                /* erased: off the tree, skipped by walks */
};

struct tree {
	struct node **chunk;
	size_t nchunks, chunk_cap;
	size_t n, root, live;
	size_t last;                 /* the node last in order when last_ok (rotations keep it last) */
	int last_ok;                 /* 0: not known (empty tree, or last erased) */
	int unsorted;                /* 0: every node was linked as the last, so index order is tree order */
	char *str;                   /* name arena */
	size_t slen, scap;
};

static inline struct node *np(const struct tree *t, size_t i)
{
	return &t->chunk[i >> CHUNK_BITS][i & (CHUNK - 1)];
}

#define N(t, i) (*np(t, i))

static inline const char *node_name(const struct tree *t, size_t i)
{
	return t->str + N(t, i).name;
}

int symtab_grow(void **p, size_t *cap, size_t need, size_t elem);
void symtab_tree_free(struct tree *t);
int symtab_tree_insert(struct tree *t, uint64_t start, uint64_t len, uint8_t binding,
		       const char *name, size_t namelen);
size_t symtab_tree_first(const struct tree *t);
size_t symtab_tree_next(const struct tree *t, size_t i);
void symtab_tree_erase(struct tree *t, size_t z);
void symtab_fixup_end(struct tree *t, int kallsyms);
void symtab_fixup_duplicate(struct tree *t);
int symtab_from_tree(struct tree *t, const char *source, int kernel, struct rb_symtab **out);
void symtab_set_map_offset(struct rb_symtab *t);   /* map_ip becomes ip - map_start (RB_SYMTAB_MAP_OFFSET) */
int symtab_display_name(const char *name, size_t len, char **out, size_t *outlen);
int symtab_insert_named(struct tree *t, uint64_t start, uint64_t len, uint8_t bind,
			const char *name, size_t namelen);

/* ------------------------------------------------------------ sym_elf.c */

struct mfile {
	const uint8_t *p;
	size_t size;
};

struct elf {
	const char *path;
	const uint8_t *p;
	size_t size;
	int is64, msb;
	uint16_t type, machine;
	uint64_t phoff, shoff;
	size_t phnum, shnum, shstrndx;
	const uint8_t *shstr;         /* section name table, or NULL */
	size_t shstr_size;
};

struct shdr {
	uint32_t name, type, link, info;
	uint64_t flags, addr, offset, size, entsize;
};

static inline int in_file(const struct elf *e, uint64_t off, uint64_t len)
{
	return off <= e->size && len <= e->size - off;
}

/* A NUL-terminated string at off in a string table (clipped at its end), or NULL. */
static inline const char *str_at(const uint8_t *tab, size_t tabsz, uint64_t off, size_t *len)
{
	const uint8_t *z;

	if (!tab || off >= tabsz)
		return NULL;
	z = memchr(tab + off, '\0', tabsz - off);
	*len = z ? (size_t)(z - (tab + off)) : tabsz - off;
	return (const char *)tab + off;
}

struct symsrc {
	char path[PATH_MAX];
	struct mfile f;
	struct elf e;
	int has_symtab, has_dynsym, has_opd, opd_found;
	struct shdr symtab, dynsym, opd;
	size_t dynsym_idx, opd_idx;
};

struct load_seg { uint64_t vaddr, offset, size; };

struct loadctx {
	struct tree *t;
	struct symsrc *syms, *run;     /* symbol file, runtime image (may be the same) */
	char *msg;
	size_t msglen;
	int kernel;                    /* a vmlinux: values stay addresses (the kernel map is the identity) */
	uint64_t reloc;                /* kernel: added to every value (KASLR) */
	/* read once for all the symbols (per symbol, reading them was most of an object's load) */
	struct shdr *sh_syms, *sh_run; /* every section header of each file, by index */
	struct load_seg *loads;        /* the runtime image's PT_LOAD segments of non-zero size, in order */
	size_t nr_loads;
};

void sym_elf_mfile_close(struct mfile *f);
int sym_elf_mfile_open(struct mfile *f, const char *path, char *msg, size_t msglen);
void sym_elf_read_shdr(const struct elf *e, size_t i, struct shdr *s);
int sym_elf_sec_data(const struct elf *e, const struct shdr *s, const uint8_t **p, size_t *n);
int sym_elf_find_section(const struct elf *e, const char *name, struct shdr *s, size_t *idx);
int sym_elf_parse(struct elf *e, const char *path, const struct mfile *f, char *msg, size_t msglen);
int sym_elf_build_id(const struct elf *e, uint8_t *id, size_t max);
void sym_elf_symsrc_close(struct symsrc *ss);
int sym_elf_symsrc_open(struct symsrc *ss, const char *path, char *msg, size_t msglen);
int sym_elf_load_symbols(struct loadctx *c);

/* ------------------------------------------------------------ sym_find.c */

struct pick {
	struct symsrc *syms, *run;
	struct symsrc ss[2];
	int path_err;                 /* why path itself was unusable, 0 if it was fine */
	char path_msg[512];
};

void sym_find_pick_files(struct pick *pk, const char *path, const struct rb_symtab_elf_opts *o);
void sym_find_pick_close(struct pick *pk);

#endif
