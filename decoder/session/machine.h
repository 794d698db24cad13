/*
 * machine.h - the sideband state of one recorded machine, rebuilt from the
 * records in time order: threads with their command-name history, each
 * process's memory maps, the kernel's maps, and the objects (DSOs) they map,
 * with symbols loaded on first use. It answers "which thread, which command,
 * which object and symbol" for an address at a point in time, with perf's
 * rules (see machine.c), so that what we export matches perf's database.
 */
#ifndef RB_MACHINE_H
#define RB_MACHINE_H

#include <stdint.h>
#include <stddef.h>
#include "symtab.h"
#include "symdir.h"

struct rb_comm {
	char *name;
	uint64_t start;          /* time it took effect (0: synthesized / unknown) */
	int exec;                /* set by exec (COMM with COMM_EXEC) */
	struct rb_comm *older;   /* the comm it replaced */
};

struct rb_inline_sym;

struct rb_dso {
	char *long_name;         /* path as recorded, or "[kernel.kallsyms]" */
	const char *short_name;  /* basename, points into long_name */
	uint8_t build_id[20];
	int build_id_size;       /* 0: unknown */
	int kernel;              /* [kernel.kallsyms] */
	int anon;                /* perf's memory without an object (//anon, [heap], [stack], /SYSV...; an
				    executable one named /tmp/perf-PID.map): its addresses are their own
				    offsets, and no file is looked for */
	int syms_tried;          /* symbol load attempted */
	struct rb_symtab *syms;  /* NULL if none could be loaded */
	struct rb_symtab *recorded; /* symbols the recording carries (simpleperf's), until load_symbols takes them */
	int syms_recorded;       /* syms are the recording's, no file had them */
	char *syms_path;         /* file the symbols came from */
	struct rb_sym **extra;   /* "unknown" symbols created at sample addresses (perf does the same) */
	size_t nr_extra, cap_extra;
	struct rb_sym **uhash;   /* the same, hashed by start address (power-of-two size) */
	size_t ucap;
	struct rb_inline_sym *inlines; /* functions inlined in its code, named from its debug info (rb_machine_inline_sym) */
	int image_tried;         /* runtime image looked for (rb_machine_dso_image) */
	char *image_path;        /* the file holding its code, NULL if none was found */
	int image_missing;       /* a decoder needed its code and no file had it (rb_machine_code_at) */
	int symdir_tried;        /* looked for in the --symdir folders (rb_machine_locate) */
	struct rb_symdir_hit symdir; /* what that found (its path is the index's) */
};

struct rb_map {
	uint64_t start, end, pgoff;
	struct rb_dso *dso;
};

struct rb_maps {                 /* sorted, non-overlapping */
	struct rb_map *v;
	size_t n, cap;
	int refs;
};

struct rb_thread {
	int32_t pid, tid;
	struct rb_comm *comm;    /* current (newest) comm; older ones chained */
	int comm_set;            /* a real COMM has been seen (not just inherited/default) */
	struct rb_maps *maps;    /* shared by the threads of a process */
	uint32_t generation;     /* bumped when the object is reused for a new thread of this tid: a consumer keying by object tells the two apart */
	int dead;
};

/* A resolved address. */
struct rb_addr_loc {
	struct rb_map *map;      /* NULL: no mapping covers it */
	struct rb_dso *dso;
	const struct rb_sym *sym;/* NULL when no symbol (a map but no symbol: see rb_machine_unknown_sym) */
	uint64_t addr;           /* address in the object's symbol space */
	int kernel;              /* resolved in the kernel's maps */
};

struct rb_machine;

/*
 * The comm an output shows for an event of thread @t: its own once a COMM
 * named it, else @shown (the event's comm, rb_machine_sample_comm) as perf
 * script and its scripts do.
 */
static inline const struct rb_comm *rb_thread_shown_comm(const struct rb_thread *t, const struct rb_comm *shown)
{
	if (t->comm && t->comm_set)
		return t->comm;
	return shown ? shown : t->comm;
}

struct rb_machine_opts {
	const char *symfs;       /* prefix for object paths, or NULL */
	const char *kallsyms;    /* kernel symbols file, or NULL for the build-id cache / running kernel */
	const char *buildid_dir; /* perf's build-id cache, default ~/.debug */
	const char *vmlinux;     /* the kernel's ELF image (--vmlinux), or NULL */
	const char *kcore;       /* a perf kcore_dir (kcore, kallsyms, modules) (--kcore), or NULL */
	int comm_exec;           /* some evsel has attr.comm_exec: samples show the exec comm */
	const char *const *symdirs; /* --symdir folders, searched by build-id and name (symdir.h) */
	size_t nr_symdirs;
	/* said once per object: a file refused (another build-id, unreadable); NULL: not said */
	void (*warn)(void *ctx, const char *msg);
	void *warn_ctx;
	int no_resolve_cache;    /* every resolve walks maps and symbols (tests compare it with the cache) */
};

struct rb_machine *rb_machine_new(const struct rb_machine_opts *o);
void rb_machine_free(struct rb_machine *m);

/*
 * Record a build-id for an object (from the BUILD_ID feature or its
 * records). @kernel_mode: the entry's cpumode is the kernel's; then
 * "[kernel.kallsyms]..." is the kernel and a module's path (.ko) the
 * "[name]" object its maps make.
 */
int rb_machine_set_build_id(struct rb_machine *m, const char *name, const uint8_t *id, int size, int kernel_mode);

/*
 * Symbols the recording carries for the object @name (simpleperf's file
 * feature), named and @kernel_mode as for rb_machine_set_build_id; the
 * machine takes @t (freed on failure too). They are the object's symbols
 * when no file is found for it that the recording vouches for: a file with
 * the recorded build-id (build-id cache, --symfs, the recorded path), a
 * --symdir match, --vmlinux, --kcore or --kallsyms for the kernel and its
 * modules; and when such a file has no symbols. 0 or -ENOMEM.
 */
int rb_machine_set_recorded_symbols(struct rb_machine *m, const char *name, int kernel_mode, struct rb_symtab *t);

struct rb_thread *rb_machine_thread(struct rb_machine *m, int32_t pid, int32_t tid, int create);
int rb_machine_comm(struct rb_machine *m, int32_t pid, int32_t tid, const char *comm, int exec, uint64_t time);
int rb_machine_fork(struct rb_machine *m, int32_t ppid, int32_t ptid, int32_t pid, int32_t tid, uint64_t time);
int rb_machine_exit(struct rb_machine *m, int32_t pid, int32_t tid);
/*
 * A mapping (MMAP, MMAP2) with its protection and flags (MMAP2's; an MMAP
 * is executable unless it maps data). As in perf, memory without an object
 * is its own (rb_dso.anon); executable, it is named /tmp/perf-PID.map.
 */
int rb_machine_mmap(struct rb_machine *m, int32_t pid, int32_t tid, int kernel, uint64_t start,
		    uint64_t len, uint64_t pgoff, const char *filename, const uint8_t *build_id, int build_id_size,
		    uint32_t prot, uint32_t flags);

/* The comm a sample of @t shows (perf: the main thread's exec comm when comm_exec, else current). */
struct rb_comm *rb_machine_sample_comm(struct rb_machine *m, struct rb_thread *t);
struct rb_thread *rb_machine_main_thread(struct rb_machine *m, struct rb_thread *t);

/*
 * Resolve @ip for @t with cpumode @cpumode (PD_MISC_*). Always fills @al.
 * A user address with no user mapping at or above kernel_start is looked
 * up in the kernel's maps, as perf resolves a sample's ip (thread__find_map_fb).
 */
void rb_machine_resolve(struct rb_machine *m, struct rb_thread *t, unsigned cpumode, uint64_t ip,
			struct rb_addr_loc *al);
/*
 * rb_machine_resolve without that fallback, as perf resolves a callchain's
 * entries (add_callchain_ip: thread__find_symbol): a kernel address in the
 * user part of a chain (a stale frame) has no map.
 */
void rb_machine_resolve_chain(struct rb_machine *m, struct rb_thread *t, unsigned cpumode, uint64_t ip,
			      struct rb_addr_loc *al);
/* rb_machine_resolve in the kernel's space at and above kernel_start, else in user space (trace addresses) */
void rb_machine_resolve_ip(struct rb_machine *m, struct rb_thread *t, uint64_t ip, struct rb_addr_loc *al);
/* The mapping covering @ip: @t's maps below kernel_start, else the kernel's; NULL if none. No symbols are loaded. */
const struct rb_map *rb_machine_find_map(struct rb_machine *m, struct rb_thread *t, uint64_t ip);
/* perf's fallback for an address in a mapping with no symbol: an "unknown" symbol at it, kept with the DSO. */
const struct rb_sym *rb_machine_unknown_sym(struct rb_machine *m, struct rb_dso *dso, uint64_t addr);
/*
 * perf's exporter (db_ids_from_al): the symbol of a resolved address, or,
 * when it has none, a lookup at @at and failing that a zero-size "unknown"
 * symbol inserted there (at the object address for a sample, at the raw ip
 * for a call-chain entry: perf's quirk). NULL only when @al has no map.
 * (The lookup itself, past a symbol @al has: rb_machine_export_sym_miss.)
 */
const struct rb_sym *rb_machine_export_sym_miss(struct rb_machine *m, const struct rb_addr_loc *al, uint64_t at);
static inline const struct rb_sym *rb_machine_export_sym(struct rb_machine *m, const struct rb_addr_loc *al,
							  uint64_t at)
{
	return !al->map ? NULL : al->sym ? al->sym : rb_machine_export_sym_miss(m, al, at);
}
/*
 * perf's symbol for a function inlined at an address of @base (its
 * new_inline_sym): @base itself when the debug info names it the same,
 * else one named @name with @base's start, end and binding, made once per
 * object and name. NULL when memory ran out.
 */
const struct rb_sym *rb_machine_inline_sym(struct rb_machine *m, struct rb_dso *d, const struct rb_sym *base,
					   const char *name);

/* The "unknown" symbol made at @addr of @d, or NULL. */
const struct rb_sym *rb_machine_find_unknown(const struct rb_dso *d, uint64_t addr);
/* Lowest kernel address (kernel_start), for telling kernel ips apart. */
uint64_t rb_machine_kernel_start(const struct rb_machine *m);
/* How many threads the machine has made: while it stays, a (pid, tid) names the same thread, main thread and comm. */
size_t rb_machine_threads_made(const struct rb_machine *m);

/*
 * The file holding @d's code as loaded (for trace decoders that must read
 * the instructions): the build-id cache, the --symfs folder or the recorded
 * path, with the build-id checked when it is known. NULL if none.
 */
const char *rb_machine_dso_image(struct rb_machine *m, struct rb_dso *d);

/*
 * The piece of a file holding the code at @ip in @t's address space, for
 * trace decoders: @size bytes at file offset @offset are loaded at @vaddr.
 * User objects: their image (rb_machine_dso_image) through the map (pgoff).
 * The kernel: the PT_LOAD segment covering @ip of the kcore copy (kernel
 * and modules) or of the vmlinux (kernel only), the vmlinux only if its
 * build-id is the recording's kernel's when both are known.
 */
struct rb_code_piece {
	const char *file;        /* owned by the machine */
	uint64_t offset, size, vaddr;
};
/*
 * Returns 0 and fills @out; -ENOENT when no map covers @ip; -ENODATA when
 * the object's code is in no file found. On failure *@why (when @why is not
 * NULL) is NULL, or a sentence owned by the machine saying what is missing
 * or wrong (no --vmlinux / --kcore, a build-id mismatch, a module without kcore).
 */
int rb_machine_code_at(struct rb_machine *m, struct rb_thread *t, uint64_t ip, struct rb_code_piece *out,
		       const char **why);
/*
 * The same for a reader that can do without (the unwinder): a missing file
 * does not mark the object as one whose code was needed (image_missing).
 */
int rb_machine_file_at(struct rb_machine *m, struct rb_thread *t, uint64_t ip, struct rb_code_piece *out);

/*
 * Why the --vmlinux / --kcore given could not be used (unreadable, not ELF,
 * a build-id mismatch), once kernel code was asked for; NULL if it was used,
 * was never needed, or none was given.
 */
const char *rb_machine_kernel_image_problem(const struct rb_machine *m);

/*
 * Where the file of @d is, as the decoders and symbols look for it: the
 * --symdir folders first (by build-id, or by name without one), then the
 * build-id cache, --symfs and the recorded path (user objects), --vmlinux
 * or --kcore (the kernel). Fills @where with the file (NULL: not found) and
 * returns how it matched: RB_SYMDIR_BUILD_ID (build-id checked),
 * RB_SYMDIR_NAME (no build-id to check), RB_SYMDIR_MISMATCH or
 * RB_SYMDIR_UNREADABLE (a file refused: @where names it, *@hit has its
 * id), RB_SYMDIR_NONE. The folders are indexed on the first call.
 */
enum rb_symdir_match rb_machine_locate(struct rb_machine *m, struct rb_dso *d, const char **where,
				       struct rb_symdir_hit *hit);

/*
 * 1 if a file lookup ran out of memory: an object then not found may be
 * there (the session fails with -ENOMEM rather than call it missing).
 */
int rb_machine_oom(const struct rb_machine *m);

/* Iterate: all DSOs (for reporting which had no symbols). */
size_t rb_machine_nr_dsos(const struct rb_machine *m);
struct rb_dso *rb_machine_dso(struct rb_machine *m, size_t i);

#endif
