/*
 * symtab.h - symbols of one object (ELF file or kallsyms), as perf resolves
 * them.
 *
 * The decoder loads one table per object named by the recording's
 * PERF_RECORD_MMAP2 events (a handful of ELF files, plus the kernel), then
 * resolves every sample ip against it.  Tables reproduce what Linux perf 6.1
 * stores in the symbols table of export-to-sqlite.py: same names, same
 * [sym_start, sym_end) in the object's symbol address space, same binding,
 * and lookups answer exactly as perf's symbol search does, so that
 * sym_offset = rb_symtab_map_ip(...) - sym->start agrees with perf.
 *
 * For ELF objects the symbol address space is the file offset space: perf
 * 6.1 rebases every user-space symbol by its PT_LOAD segment (value -=
 * p_vaddr - p_offset), so a sample ip maps to it with the plain
 * ip - map_start + map_pgoff.  For kallsyms it is the kernel virtual address.
 *
 * perf's export does not treat a table as read-only: on a miss it inserts
 * a zero-size "unknown" symbol at the address into the dso's red-black
 * tree, and every lookup goes through a one-entry cache.  Both change what
 * later lookups return when symbols overlap, so the table keeps perf's
 * exact tree and cache; rb_symtab_lookup / rb_symtab_add_unknown /
 * rb_symtab_export_lookup reproduce them.  Matching perf's export then
 * needs the same sequence of calls, per dso, as perf makes (see
 * rb_symtab_export_lookup).  rb_symtab_find only reads; a table is not
 * safe for concurrent use while any of the mutating calls run.
 */
#ifndef RB_SYMTAB_H
#define RB_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

struct rb_sym {
	uint64_t start, end;   /* [start, end) in the object's symbol address space, as perf's symbols table stores them */
	uint8_t binding;       /* 0 local, 1 global, 2 weak: the raw ELF STB_* value, as perf exports it (10 for STB_GNU_UNIQUE) */
	const char *name;
};

struct rb_symtab;      /* opaque: sorted symbols, owns names; one per dso, shared by every process mapping it */

/*
 * Load an ELF file's symbols.  Like perf, separate debug information is
 * searched for first (.gnu_debuglink targets, perf's build-id cache
 * $HOME/.debug, /usr/lib/debug/<path>.debug, /usr/lib/debug/<path>,
 * /usr/lib/debug/.build-id/xx/yyyy.debug, then path itself, ...) and only
 * files whose build-id matches the object's are used; .symtab comes from
 * the first such file that has one, .dynsym/.plt from the first that is a
 * runtime image.  path may also be "[vdso]" when opts give its build-id.
 * Returns 0, or a negative errno-style code with a message in msg (msglen
 * bytes) naming the file and what is wrong (not ELF, truncated section,
 * ...).  A valid ELF without any symbols gives 0 and an empty table.
 * Never crashes on a corrupt file.
 */
int rb_symtab_load_elf(struct rb_symtab **out, const char *path, char *msg, size_t msglen);

/* Finer control over rb_symtab_load_elf; a NULL opts or zeroed fields mean the defaults above. */
struct rb_symtab_elf_opts {
	const char *debug_path;    /* use this debug file instead of searching (it still has to match the build-id) */
	int no_debug_search;       /* nonzero: use only path (and debug_path if given) */
	const uint8_t *build_id;   /* expected build-id (e.g. from the recording's HEADER_BUILD_ID); NULL: read it from path */
	size_t build_id_len;
	const char *root;          /* prefix for every searched path, like perf --symfs; NULL or "": none */
	const char *buildid_dir;   /* perf's build-id cache; NULL: $HOME/.debug as perf defaults, "": not used */
};
int rb_symtab_load_elf_opts(struct rb_symtab **out, const char *path,
			    const struct rb_symtab_elf_opts *opts, char *msg, size_t msglen);

/*
 * Kernel symbols from a vmlinux's symbol table (--vmlinux): as
 * rb_symtab_load_elf of @path alone, but values stay virtual addresses,
 * moved by @reloc (the KASLR offset: where the recording's kernel put _text
 * less the vmlinux's _text), and the table is a kernel one
 * (rb_symtab_map_ip is the identity), as perf's dso__load_vmlinux does.
 */
int rb_symtab_load_vmlinux(struct rb_symtab **out, const char *path, uint64_t reloc, char *msg, size_t msglen);

/* The value of the defined symbol @name in @path's .symtab: 1 and *@value, 0 if none, <0 if unreadable. */
int rb_elf_symbol_value(const char *path, const char *name, uint64_t *value);

/*
 * Load kernel symbols from a kallsyms-format file (e.g. /proc/kallsyms) as
 * perf's [kernel.kallsyms] dso holds them: types T/W/D/B (either case),
 * absolute addresses, ends fixed up to the next symbol, aliases reduced to
 * one, module symbols ("name\t[mod]") and the x86-64 entry trampoline left
 * out.
 */
int rb_symtab_load_kallsyms(struct rb_symtab **out, const char *path, char *msg, size_t msglen);

/*
 * A kernel module's symbols from kallsyms ("name\t[module]" lines), as
 * perf holds them for a module whose .ko it cannot read: relative to the
 * module's map start (from the recording's kernel mmap event), so the
 * module's table uses map_ip = ip - map_start (pgoff 0).  perf prefers the
 * module's .ko ELF when it finds one; that path is not reproduced.
 */
int rb_symtab_load_kallsyms_module(struct rb_symtab **out, const char *path, const char *module,
				   uint64_t map_start, char *msg, size_t msglen);

/*
 * A table of symbols a recording carries instead of a file (simpleperf's
 * file feature), made from a list: rb_symtab_list_add each symbol
 * ([start, start + len) in the table's address space; len 0: the address
 * alone, as perf's zero-size symbols), then rb_symtab_list_finish, which
 * frees the list whatever it returns. Names are shown as perf shows an ELF
 * symbol's (demangled the same way), bound global. @space says how
 * rb_symtab_map_ip turns a sample ip into that address space:
 */
enum rb_symtab_space {
	RB_SYMTAB_FILE_OFFSET,   /* ip - map_start + map_pgoff, perf's map_ip for user objects (ELF tables) */
	RB_SYMTAB_IP,            /* ip itself, as for the kernel (kallsyms, vmlinux tables) */
	RB_SYMTAB_MAP_OFFSET,    /* ip - map_start: where the map starts, whatever its pgoff */
};
struct rb_symtab_list;
/* NULL when out of memory. */
struct rb_symtab_list *rb_symtab_list_new(void);
/* 0, or -ENOMEM (the list stays usable, the symbol is not in it). */
int rb_symtab_list_add(struct rb_symtab_list *l, uint64_t start, uint64_t len, const char *name, size_t namelen);
/* 0 and the table in *@out (@source names where it came from), or -ENOMEM / -EINVAL (a NULL list). */
int rb_symtab_list_finish(struct rb_symtab_list *l, enum rb_symtab_space space, const char *source,
			  struct rb_symtab **out);
void rb_symtab_list_free(struct rb_symtab_list *l);   /* accepts NULL */

void rb_symtab_free(struct rb_symtab *t);   /* accepts NULL */
size_t rb_symtab_count(const struct rb_symtab *t);   /* 0 for NULL */
/* The loaded symbols sorted by start (not those added by rb_symtab_add_unknown); NULL if out of range. */
const struct rb_sym *rb_symtab_at(const struct rb_symtab *t, size_t i);

/* Symbol containing addr (an address in the symbol address space), or NULL. O(log n). */
const struct rb_sym *rb_symtab_find(const struct rb_symtab *t, uint64_t addr);

/* rb_symtab_find through perf's per-dso cache (dso__find_symbol): a lookup of the address looked up last returns the symbol found then. */
const struct rb_sym *rb_symtab_lookup(struct rb_symtab *t, uint64_t addr);
/*
 * For a cache of lookups in front of the table: rb_symtab_lookup, saying
 * whether the answer is the table's (*fresh) and not perf's last-lookup
 * cache's (which may hold an "unknown" symbol added since: perf's quirk);
 * that last-lookup cache itself, so that a cached answer @s for @addr (a
 * fresh one, from when rb_symtab_version was what it is now) has the
 * lookup's effect (rb_symtab_lookup_known); and the version, which moves
 * whenever an answer may change (a symbol added).
 */
struct rb_symtab_last { uint64_t addr; const struct rb_sym *sym; };
const struct rb_sym *rb_symtab_lookup_fresh(struct rb_symtab *t, uint64_t addr, int *fresh);
struct rb_symtab_last *rb_symtab_last(struct rb_symtab *t);
size_t rb_symtab_version(const struct rb_symtab *t);

static inline const struct rb_sym *rb_symtab_lookup_known(struct rb_symtab_last *l, uint64_t addr,
							   const struct rb_sym *s)
{
	if (l->addr != addr || !l->sym) {
		l->addr = addr;
		l->sym = s;
	}
	return l->sym;
}

/*
 * What perf's exporter does when an address has no symbol: insert a
 * zero-size, local symbol named "unknown" at addr into the tree (and the
 * cache, by perf's rule).  The returned pointer stays valid until
 * rb_symtab_free.  NULL only for a NULL table or out of memory.
 */
const struct rb_sym *rb_symtab_add_unknown(struct rb_symtab *t, uint64_t addr);

/*
 * Lookup, and rb_symtab_add_unknown on a miss: perf's db_ids_from_al.
 * perf 6.1 export-to-sqlite makes these calls per sample, samples in
 * timestamp order (T(x): table of the dso x's map belongs to; a(x) =
 * rb_symtab_map_ip(T(x), x, map start, map pgoff)):
 *   1. s = rb_symtab_export_lookup(T(ip), a(ip));  sym_offset = a(ip) - s->start
 *   2. with a callchain, walk it as perf's thread__resolve_callchain does in
 *      caller order: from the last entry (the root) towards the first, each
 *      PERF_CONTEXT_* marker setting the cpumode for the entries before it,
 *      at most 127 non-marker entries; for each entry in a map:
 *        c[e] = rb_symtab_lookup(T(e), a(e))
 *      an unknown marker value makes perf drop the whole chain (the lookups
 *      already made stand; step 3 is skipped).
 *   3. then, root to leaf again, for each kept entry with !c[e]:
 *        rb_symtab_export_lookup(T(e), e)   -- the raw ip, not a(e): perf's quirk
 */
const struct rb_sym *rb_symtab_export_lookup(struct rb_symtab *t, uint64_t addr);

/*
 * Convert a sample ip inside a mapping to the object's symbol address space,
 * exactly as perf 6.1 does: map__map_ip, ip - map_start + map_pgoff, for
 * ELF objects and kernel modules; the identity for the kernel (and a
 * recorded table's own rule, enum rb_symtab_space).  perf 6.1
 * adds no per-object term (such as p_vaddr - p_offset of an ET_DYN text
 * segment): the loader already moved the symbols into file-offset space.
 */
uint64_t rb_symtab_map_ip(const struct rb_symtab *t, uint64_t ip, uint64_t map_start, uint64_t map_pgoff);

/* 1 if t's map_ip is the identity (kallsyms, vmlinux, RB_SYMTAB_IP), 0 otherwise. */
int rb_symtab_is_kernel(const struct rb_symtab *t);

/* File the symbols were read from (the debug file when one was used); NULL for NULL. */
const char *rb_symtab_source(const struct rb_symtab *t);

/*
 * Names of C++ (and Rust) symbols: Debian's perf 6.1 shows libiberty's
 * cplus_demangle(name, 0) (no parameters, no return type).  By default the
 * loaders use the cplus_demangle exported by binutils' shared libbfd (or
 * by the library named in $RBTRACE_DEMANGLE_LIB), found once by dlopen;
 * with none, names stay mangled.  An application linking libiberty itself
 * can pass cplus_demangle here; NULL turns demangling off.  The function
 * must return a malloc'ed string or NULL.  Call before loading any table.
 */
typedef char *(*rb_symtab_demangler)(const char *mangled, int options);
void rb_symtab_set_demangler(rb_symtab_demangler fn);

/* Build-id of an ELF file (NT_GNU_BUILD_ID note), up to 20 bytes. Returns its length, 0 if none, <0 on error. */
int rb_elf_build_id(const char *path, uint8_t *id, size_t max);

/*
 * Find the separate debug file perf 6.1 would use for the object at path
 * (root and build_id as in struct rb_symtab_elf_opts; build_id NULL: read
 * from the file).  Returns 1 and the file name in buf, 0 if there is none,
 * <0 on bad arguments.
 */
int rb_elf_find_debuginfo(const char *path, const char *root, const uint8_t *build_id,
			  size_t build_id_len, char *buf, size_t buflen);

/*
 * Find the runtime image (the file with the code) of the object recorded as
 * @path: perf's build-id cache under @buildid_dir (NULL: $HOME/.debug; an
 * unpacked archive's folder), then @root@path (--symfs), then @path itself.
 * A file is taken only if its build-id matches @build_id (when given; a
 * shorter id padded with zeros matches). Returns 1 and the file name in @buf,
 * 0 if none, <0 on bad arguments or no memory.
 */
int rb_elf_find_image(const char *path, const char *root, const char *buildid_dir, const uint8_t *build_id,
		      size_t build_id_len, char *buf, size_t buflen);

/* 1 if @path is an ELF file with code bytes (an executable section in the file), not a debug-only file. */
int rb_elf_has_code(const char *path);

/* A PT_LOAD segment with file contents: @vaddr .. @vaddr + @size is at file offset @offset. */
struct rb_elf_segment {
	uint64_t offset, vaddr, size;
};
/*
 * The PT_LOAD segments with file contents of the ELF file @path (vmlinux,
 * kcore), in header order, in a malloc'ed array. Returns their number (> 0),
 * or <0 with @msg filled (unreadable, not ELF, a segment past the end of the
 * file, none with contents).
 */
int rb_elf_load_segments(const char *path, struct rb_elf_segment **out, char *msg, size_t msglen);

#endif
