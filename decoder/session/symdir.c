/*
 * symdir.c - the index behind --symdir (symdir.h). One walk of each
 * folder reads the first bytes of every file: ELF files are kept with
 * their build-id, files that cannot be opened or whose ELF headers are
 * damaged are kept as unreadable (so that a lookup by name can say so
 * instead of "not found"); anything else is skipped. Two arrays of
 * pointers sorted by build-id and by name answer lookups; of several files
 * with one build-id the one with code (not a separate debug file) is
 * found, so that decoders can read it. Expects folders
 * of a few thousand files (a device's /system/lib, a build tree).
 */
#include "config.h"
#include "symdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "symtab.h"

#define WALK_DEPTH_MAX 64

struct entry {
	char *path;                  /* as found below the folder given */
	const char *name;            /* its last component, inside path */
	uint8_t id[20];              /* the build-id, as the file's note has it */
	int id_size;                 /* 0: none */
	int key_len;                 /* id_size without trailing zero bytes: what lookups compare */
	int unreadable;              /* could not be opened, or its ELF headers are damaged */
	int has_code;                /* not a debug-only file: a decoder can read code from it */
};

struct rb_symdir {
	struct entry *v;
	size_t n, cap;
	struct entry **by_id;        /* entries with a build-id, sorted by (key_len, id) */
	size_t n_id;
	struct entry **by_name;      /* every entry, sorted by name */
};

static int key_len(const uint8_t *id, size_t len)
{
	while (len && !id[len - 1])
		len--;
	return (int)len;
}

static int cmp_key(const uint8_t *a, int alen, const uint8_t *b, int blen)
{
	return alen != blen ? (alen < blen ? -1 : 1) : memcmp(a, b, (size_t)alen);
}

static int cmp_by_id(const void *x, const void *y)
{
	const struct entry *a = *(struct entry *const *)x, *b = *(struct entry *const *)y;
	return cmp_key(a->id, a->key_len, b->id, b->key_len);
}

/* The order of the build-id table: by id, and of the files with one id, those with code first. */
static int cmp_id_order(const void *x, const void *y)
{
	const struct entry *a = *(struct entry *const *)x, *b = *(struct entry *const *)y;
	int c = cmp_by_id(x, y);
	return c ? c : a->has_code != b->has_code ? b->has_code - a->has_code : strcmp(a->path, b->path);
}

static int cmp_by_name(const void *x, const void *y)
{
	const struct entry *a = *(struct entry *const *)x, *b = *(struct entry *const *)y;
	int c = strcmp(a->name, b->name);
	return c ? c : strcmp(a->path, b->path);     /* the same answer whatever the walk's order */
}

/* Keeps @path if it is an ELF file or a file that cannot be read. 0, or -ENOMEM. */
static int add_file(struct rb_symdir *ix, const char *path)
{
	unsigned char magic[4];
	struct entry e = { 0 };
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t got = read(fd, magic, sizeof(magic));
		close(fd);
		if (got != (ssize_t)sizeof(magic) || memcmp(magic, "\177ELF", 4))
			return 0;
		int n = rb_elf_build_id(path, e.id, sizeof(e.id));
		e.unreadable = n < 0;
		e.id_size = n > 0 ? n : 0;
		e.key_len = key_len(e.id, (size_t)e.id_size);
		e.has_code = !e.unreadable && rb_elf_has_code(path);
	} else {
		e.unreadable = 1;
	}
	if (ix->n == ix->cap) {
		size_t cap = ix->cap ? 2 * ix->cap : 64;
		struct entry *v = realloc(ix->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		ix->v = v;
		ix->cap = cap;
	}
	if (!(e.path = strdup(path)))
		return -ENOMEM;
	const char *slash = strrchr(e.path, '/');
	e.name = slash ? slash + 1 : e.path;
	ix->v[ix->n++] = e;
	return 0;
}

/* One folder, recursively. 0, -ENOMEM, or -errno of the folder given itself (@depth 0). */
static int walk(struct rb_symdir *ix, const char *dir, int depth)
{
	DIR *d = opendir(dir);
	if (!d)
		return depth ? 0 : -errno;     /* a folder below that cannot be read: its files are not found */
	int rc = 0;
	struct dirent *de;
	while (!rc && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char path[PATH_MAX];
		struct stat lst, st;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path) || lstat(path, &lst))
			continue;
		if (S_ISDIR(lst.st_mode)) {
			if (depth < WALK_DEPTH_MAX)
				rc = walk(ix, path, depth + 1);
		} else if (S_ISREG(lst.st_mode) || (S_ISLNK(lst.st_mode) && stat(path, &st) == 0 && S_ISREG(st.st_mode))) {
			rc = add_file(ix, path);
		}
	}
	closedir(d);
	return rc;
}

struct rb_symdir *rb_symdir_new(const char *const *dirs, size_t n, char *msg, size_t msglen)
{
	struct rb_symdir *ix = calloc(1, sizeof(*ix));
	if (!ix) {
		snprintf(msg, msglen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		int rc = walk(ix, dirs[i], 0);
		if (rc) {
			snprintf(msg, msglen, "--symdir %s: %s", dirs[i], strerror(-rc));
			rb_symdir_free(ix);
			errno = -rc;
			return NULL;
		}
	}
	ix->by_id = malloc((ix->n ? ix->n : 1) * sizeof(*ix->by_id));
	ix->by_name = malloc((ix->n ? ix->n : 1) * sizeof(*ix->by_name));
	if (!ix->by_id || !ix->by_name) {
		snprintf(msg, msglen, "out of memory");
		rb_symdir_free(ix);
		errno = ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < ix->n; i++) {
		ix->by_name[i] = &ix->v[i];
		if (ix->v[i].key_len)
			ix->by_id[ix->n_id++] = &ix->v[i];
	}
	qsort(ix->by_id, ix->n_id, sizeof(*ix->by_id), cmp_id_order);
	qsort(ix->by_name, ix->n, sizeof(*ix->by_name), cmp_by_name);
	return ix;
}

void rb_symdir_free(struct rb_symdir *ix)
{
	if (!ix)
		return;
	for (size_t i = 0; i < ix->n; i++)
		free(ix->v[i].path);
	free(ix->v);
	free(ix->by_id);
	free(ix->by_name);
	free(ix);
}

/* The first entry of @sorted (@n long) not before @key under @cmp. */
static size_t lower_bound(struct entry *const *sorted, size_t n, const struct entry *key,
			  int (*cmp)(const void *, const void *))
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cmp(&sorted[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void hit_of(const struct entry *e, enum rb_symdir_match how, struct rb_symdir_hit *hit)
{
	hit->how = how;
	hit->path = e->path;
	memcpy(hit->id, e->id, sizeof(hit->id));
	hit->id_size = e->id_size;
}

/* The name a recorded object has in a folder of files. */
static void file_name(const char *name, int kernel, char *buf, size_t n)
{
	size_t len = strlen(name);
	const char *slash = strrchr(name, '/');
	if (!strncmp(name, "[kernel.kallsyms]", 17) || (kernel && !slash && name[0] != '['))
		snprintf(buf, n, "vmlinux");
	else if (len > 2 && name[0] == '[' && name[len - 1] == ']')
		snprintf(buf, n, "%.*s.ko", (int)(len - 2), name + 1);
	else
		snprintf(buf, n, "%s", slash ? slash + 1 : name);
}

void rb_symdir_find(const struct rb_symdir *ix, const char *name, int kernel, const uint8_t *id, size_t idlen,
		    struct rb_symdir_hit *hit)
{
	memset(hit, 0, sizeof(*hit));
	if (!ix || !name)
		return;
	struct entry key = { 0 };
	if (idlen > sizeof(key.id))
		idlen = sizeof(key.id);
	if (id && idlen) {
		memcpy(key.id, id, idlen);
		key.key_len = key_len(key.id, idlen);
	}
	if (key.key_len) {
		size_t i = lower_bound(ix->by_id, ix->n_id, &key, cmp_by_id);
		if (i < ix->n_id && !cmp_by_id(&ix->by_id[i], &(const struct entry *){ &key })) {
			hit_of(ix->by_id[i], RB_SYMDIR_BUILD_ID, hit);
			return;
		}
	}
	char want[NAME_MAX + 8];
	file_name(name, kernel, want, sizeof(want));
	key.name = want;
	key.path = "";
	size_t i = lower_bound(ix->by_name, ix->n, &key, cmp_by_name);
	if (i >= ix->n || strcmp(ix->by_name[i]->name, want))
		return;
	/* several files of that name: a readable one is the better answer, the first in path order */
	size_t pick = i;
	for (size_t k = i; k < ix->n && !strcmp(ix->by_name[k]->name, want); k++)
		if (!ix->by_name[k]->unreadable) {
			pick = k;
			break;
		}
	const struct entry *e = ix->by_name[pick];
	hit_of(e, e->unreadable ? RB_SYMDIR_UNREADABLE : key.key_len ? RB_SYMDIR_MISMATCH : RB_SYMDIR_NAME, hit);
}

int rb_build_id_same(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	size_t n = alen < blen ? alen : blen;
	const uint8_t *rest = alen > blen ? a : b;

	if (memcmp(a, b, n) != 0)
		return 0;
	for (size_t i = n; i < (alen > blen ? alen : blen); i++)
		if (rest[i])
			return 0;
	return 1;
}
