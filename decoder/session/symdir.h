/*
 * symdir.h - folders of binaries as users keep them (simpleperf's
 * --symdir): every ELF file below each folder, found by the build-id in
 * its note, or by its file name where the recording has no build-id.
 * The folders are walked once, when the index is made; lookups are
 * binary searches in two sorted tables (by build-id, by name).
 */
#ifndef RB_SYMDIR_H
#define RB_SYMDIR_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

struct rb_symdir;

/*
 * Walks @dirs (@n of them; symbolic links to files are followed, to
 * folders not, so a .build-id tree's links are indexed and a loop is not
 * walked). Returns the index (empty for @n 0), or NULL with @msg filled
 * and errno set when a folder cannot be read or memory runs out (ENOMEM).
 */
struct rb_symdir *rb_symdir_new(const char *const *dirs, size_t n, char *msg, size_t msglen);
void rb_symdir_free(struct rb_symdir *ix);    /* NULL is fine */

/* How a lookup ended. */
enum rb_symdir_match {
	RB_SYMDIR_NONE = 0,      /* no file with that build-id or name */
	RB_SYMDIR_BUILD_ID,      /* a file with the build-id asked for */
	RB_SYMDIR_NAME,          /* a file of that name (no build-id asked for) */
	RB_SYMDIR_MISMATCH,      /* a file of that name with another build-id (or none): refused */
	RB_SYMDIR_UNREADABLE,    /* a file of that name whose ELF headers could not be read: refused */
};

struct rb_symdir_hit {
	enum rb_symdir_match how;
	const char *path;        /* owned by the index; NULL for RB_SYMDIR_NONE */
	uint8_t id[20];          /* the file's build-id (RB_SYMDIR_MISMATCH: the one it has) */
	int id_size;             /* 0: the file has none */
};

/*
 * The file for the object recorded as @name with build-id @id (@idlen 0:
 * not known). Build-ids compare on their real length: a shorter one padded
 * with zeros (simpleperf writes 20 bytes) is the same. The name looked for
 * is @name's last component; a kernel module's map "[mod]" looks for
 * "mod.ko", the kernel ("[kernel.kallsyms]", @kernel set) for "vmlinux".
 */
void rb_symdir_find(const struct rb_symdir *ix, const char *name, int kernel, const uint8_t *id, size_t idlen,
		    struct rb_symdir_hit *hit);

/* Build-ids equal on their common length, the longer one zero past it. */
int rb_build_id_same(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen);

#endif
