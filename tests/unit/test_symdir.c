/*
 * test_symdir.c - the --symdir index (decoder/session/symdir.c) on a
 * scratch folder made here: this test's own executable copied under other
 * names (an ELF file with a build-id), a module name, a cut ELF file and a
 * text file; lookups by build-id (padded with zeros too), by name, a wrong
 * build-id, an unreadable file, NULL arguments and a folder that is not
 * there; and build-id comparison on the real length.
 */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "decoder/session/symdir.h"
#include "decoder/session/symtab.h"
#include "tap.h"

static char dir[64];

/* Writes @n bytes of the file @from (all of it for @n 0) to dir/@name. 0, or -1. */
static int copy_to(const char *from, const char *name, size_t n)
{
	char to[256];
	snprintf(to, sizeof(to), "%s/%s", dir, name);
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	int rc = in && out ? 0 : -1;
	char buf[65536];
	size_t got, done = 0;
	while (!rc && (got = fread(buf, 1, sizeof(buf), in)) > 0 && (!n || done < n)) {
		size_t w = n && got > n - done ? n - done : got;
		rc = fwrite(buf, 1, w, out) == w ? 0 : -1;
		done += w;
	}
	if (in)
		fclose(in);
	if (out && fclose(out))
		rc = -1;
	return rc;
}

static void test_null_and_empty(void)
{
	struct rb_symdir_hit hit;
	char msg[256];
	struct rb_symdir *ix = rb_symdir_new(NULL, 0, msg, sizeof(msg));
	ok(ix != NULL, "no folders: an empty index");
	rb_symdir_find(ix, "/bin/x", 0, (const uint8_t *)"\1\2\3\4", 4, &hit);
	ok(hit.how == RB_SYMDIR_NONE && !hit.path, "empty index: nothing found");
	rb_symdir_find(NULL, "/bin/x", 0, NULL, 0, &hit);
	ok(hit.how == RB_SYMDIR_NONE, "NULL index: nothing found");
	rb_symdir_find(ix, NULL, 0, NULL, 0, &hit);
	ok(hit.how == RB_SYMDIR_NONE, "NULL name: nothing found");
	rb_symdir_free(ix);
	rb_symdir_free(NULL);
	const char *none[] = { "/nonexistent/symdir" };
	errno = 0;
	ix = rb_symdir_new(none, 1, msg, sizeof(msg));
	ok(!ix && errno == ENOENT && strstr(msg, "/nonexistent/symdir"), "a folder that is not there: NULL, ENOENT, named (%s)", msg);
}

static void test_build_id_same(void)
{
	const uint8_t a[20] = { 1, 2, 3, 4 }, b[4] = { 1, 2, 3, 4 }, c[4] = { 1, 2, 3, 5 };
	ok(rb_build_id_same(a, 20, b, 4) && rb_build_id_same(b, 4, a, 20), "an id padded with zeros is the same id");
	ok(!rb_build_id_same(a, 20, c, 4), "another id is not");
	const uint8_t d[20] = { 1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9 };
	ok(!rb_build_id_same(d, 20, b, 4), "a longer id that is not zero past the shorter one is not");
}

static void test_lookups(void)
{
	uint8_t id[20];
	int n = rb_elf_build_id("/proc/self/exe", id, sizeof(id));
	if (n <= 0) {
		diag("this executable has no build-id (linked without --build-id): lookups not tested");
		return;
	}
	char path[128];
	snprintf(path, sizeof(path), "%s/a", dir);
	int made = mkdir(path, 0755) == 0;
	snprintf(path, sizeof(path), "%s/a/b", dir);
	made = made && mkdir(path, 0755) == 0;
	snprintf(path, sizeof(path), "%s/notes.txt", dir);
	FILE *t = fopen(path, "w");
	made = made && t && fputs("not an ELF file\n", t) >= 0;
	if (t && fclose(t))
		made = 0;
	ok(made && copy_to("/proc/self/exe", "a/b/renamed", 0) == 0 && copy_to("/proc/self/exe", "mod.ko", 0) == 0 &&
	   copy_to("/proc/self/exe", "cut", 64) == 0, "scratch folder made");
	char msg[256];
	const char *dirs[] = { dir };
	struct rb_symdir *ix = rb_symdir_new(dirs, 1, msg, sizeof(msg));
	ok(ix != NULL, "folder indexed");
	struct rb_symdir_hit hit;
	rb_symdir_find(ix, "/recorded/elsewhere", 0, id, (size_t)n, &hit);
	ok(hit.how == RB_SYMDIR_BUILD_ID && hit.path && strstr(hit.path, dir), "found by build-id under another name (%s)",
	   hit.path ? hit.path : "none");
	uint8_t padded[20] = { 0 };
	int short_len = n > 8 ? 8 : n;
	memcpy(padded, id, (size_t)short_len);
	rb_symdir_find(ix, "/x", 0, padded, 20, &hit);
	ok(hit.how == RB_SYMDIR_NONE, "a prefix of the id padded with zeros is another id");
	rb_symdir_find(ix, "/data/renamed", 0, NULL, 0, &hit);
	ok(hit.how == RB_SYMDIR_NAME && hit.path && strstr(hit.path, "/a/b/renamed"), "no build-id: found by name");
	rb_symdir_find(ix, "[mod]", 0, NULL, 0, &hit);
	ok(hit.how == RB_SYMDIR_NAME && hit.path && strstr(hit.path, "/mod.ko"), "a module's map [mod]: mod.ko");
	uint8_t other[20];
	memcpy(other, id, sizeof(other));
	other[0] ^= 0xff;
	rb_symdir_find(ix, "/data/renamed", 0, other, (size_t)n, &hit);
	ok(hit.how == RB_SYMDIR_MISMATCH && hit.id_size == n && !memcmp(hit.id, id, (size_t)n),
	   "another build-id recorded: the file of that name is refused, its own id given");
	rb_symdir_find(ix, "/lib/cut", 0, other, (size_t)n, &hit);
	ok(hit.how == RB_SYMDIR_UNREADABLE, "a cut ELF file: unreadable");
	rb_symdir_find(ix, "/lib/notes.txt", 0, NULL, 0, &hit);
	ok(hit.how == RB_SYMDIR_NONE, "a file that is not ELF is not indexed");
	rb_symdir_find(ix, "[kernel.kallsyms]", 1, NULL, 0, &hit);
	ok(hit.how == RB_SYMDIR_NONE, "no vmlinux: the kernel is not found");
	rb_symdir_free(ix);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof(dir), "%s/test_symdir.XXXXXX", tmp && *tmp && strlen(tmp) < 40 ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		printf("1..0 # SKIP cannot make a scratch folder\n");
		return 0;
	}
	test_null_and_empty();
	test_build_id_same();
	test_lookups();
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		diag("could not remove %s", dir);
	return done_testing();
}
