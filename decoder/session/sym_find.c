/*
 * sym_find.c - which files hold an ELF object's symbols, the first stage
 * of loading its table (symtab.c's rb_symtab_load_elf_opts runs it, then
 * sym_elf.c reads what it picked). From the object's recorded path and
 * build-id it lists the candidates in perf 6.1's dso__load order (the
 * .gnu_debuglink target, perf's build-id cache, /usr/lib/debug by path and
 * by its .build-id tree, the file itself, all under --symfs), opens each,
 * keeps only those whose build-id matches, and takes .symtab from the
 * first that has one and .dynsym / .opd from the first runtime image. The
 * same search answers rb_elf_find_debuginfo; rb_elf_find_image finds the
 * file with an object's code for the trace decoders.
 */
#define _GNU_SOURCE
#include "sym_internal.h"
#include "symdir.h"

#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ------------------------------------------------------------------ */
/* choosing the files (perf's dso__load search order)                  */

static int is_regular_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

#define MAX_CANDS 10

struct cands {
	char path[MAX_CANDS][PATH_MAX];
	size_t n;
};

static void cand_add(struct cands *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void cand_add(struct cands *c, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (c->n >= MAX_CANDS)
		return;
	va_start(ap, fmt);
	r = vsnprintf(c->path[c->n], PATH_MAX, fmt, ap);
	va_end(ap);
	if (r > 0 && r < PATH_MAX)
		c->n++;
}

/* snprintf into a PATH_MAX buffer; a path that does not fit becomes "", so it names no file. */
static void path_fmt(char *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void path_fmt(char *buf, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vsnprintf(buf, PATH_MAX, fmt, ap);
	va_end(ap);
	if (r < 0 || r >= PATH_MAX)
		buf[0] = '\0';
}

/* perf's path__join: root, a slash if root is not empty, path. */
static void join(char *buf, const char *root, const char *path)
{
	path_fmt(buf, "%s%s%s", root, root[0] ? "/" : "", path);
}

/* The name in a file's .gnu_debuglink, if it has one. */
static int read_debuglink(const char *file, char *out, size_t outsz)
{
	struct symsrc *ss = malloc(sizeof(*ss));
	struct shdr s;
	const uint8_t *p;
	size_t n, len;
	int ok = 0;

	if (!ss)
		return 0;
	if (sym_elf_symsrc_open(ss, file, NULL, 0) == 0) {
		if (sym_elf_find_section(&ss->e, ".gnu_debuglink", &s, NULL) && !sym_elf_sec_data(&ss->e, &s, &p, &n) && p &&
		    str_at(p, n, 0, &len) && len > 0 && len < outsz) {
				memcpy(out, p, len);
			out[len] = '\0';
			ok = 1;
		}
		sym_elf_symsrc_close(ss);
	}
	free(ss);
	return ok;
}

/* perf looks for the debuglink target in cwd, beside the file, in .debug/, and under /usr/lib/debug. */
static void cand_debuglink(struct cands *c, const char *root, const char *path)
{
	char file[PATH_MAX], dir[PATH_MAX], link[PATH_MAX], try[4][PATH_MAX];
	char *slash;
	size_t i;

	join(file, root, path);
	path_fmt(dir, "%s", file);
	slash = strrchr(dir, '/');
	*(slash ? slash : dir) = '\0';
	if (!is_regular_file(file) || !read_debuglink(file, link, sizeof(link)))
		return;
	path_fmt(try[0], "%s", link);
	path_fmt(try[1], "%s/%s", dir, link);
	path_fmt(try[2], "%s/.debug/%s", dir, link);
	path_fmt(try[3], "/usr/lib/debug%s/%s", dir, link);
	for (i = 0; i < 4; i++)
		if (try[i][0] && is_regular_file(try[i])) {
			cand_add(c, "%s", try[i]);
			return;
		}
}

static void hex_id(const uint8_t *id, size_t len, char *out)
{
	size_t i;

	for (i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * len] = '\0';
}

/*
 * perf's build-id cache: <dir>/.build-id/xx/yyyy is either the file itself
 * (old layout) or a link to a directory holding "elf" (or "vdso") and
 * "debug".
 */
static void cand_cache(struct cands *c, const char *cache, const char *path, const char *hex, int debug)
{
	char link[PATH_MAX];
	const char *base = debug ? "debug" : strcmp(path, "[vdso]") == 0 ? "vdso" : "elf";

	if (!cache[0] || snprintf(link, sizeof(link), "%s/.build-id/%.2s/%s", cache, hex, hex + 2) >= PATH_MAX)
		return;
	if (is_regular_file(link))
		cand_add(c, "%s", link);
	else
		cand_add(c, "%s/%s", link, base);
}

/*
 * The build-id cache entries of an object: under its id as recorded and,
 * when the recording padded it with zeros (simpleperf writes 20 bytes), as
 * perf names it, on its real length.
 */
static void cand_cache_ids(struct cands *c, const char *cache, const char *path, const uint8_t *id, size_t idlen,
			   int debug)
{
	char hex[2 * BUILD_ID_MAX + 1];
	size_t real = idlen;

	while (real && !id[real - 1])
		real--;
	hex_id(id, idlen, hex);
	cand_cache(c, cache, path, hex, debug);
	if (real && real < idlen) {
		hex_id(id, real, hex);
		cand_cache(c, cache, path, hex, debug);
	}
}

/* Candidate files in perf's order (its binary_type_symtab table, user-space entries). */
static void gather(struct cands *c, const char *root, const char *cache, const char *path,
		   const uint8_t *id, size_t idlen)
{
	char dbg[PATH_MAX], hex[2 * BUILD_ID_MAX + 1];
	const char *slash = strrchr(path, '/');

	hex_id(id, idlen, hex);
	cand_debuglink(c, root, path);
	if (idlen) {
		cand_cache_ids(c, cache, path, id, idlen, 0);
		cand_cache_ids(c, cache, path, id, idlen, 1);
	}
	join(dbg, root, "/usr/lib/debug");
	cand_add(c, "%s%s.debug", dbg, path);
	cand_add(c, "%s%s", dbg, path);
	if (idlen) {
		join(dbg, root, "/usr/lib/debug/.build-id/");
		cand_add(c, "%s%.2s/%s.debug", dbg, hex, hex + 2);
	}
	join(dbg, root, path);
	cand_add(c, "%s", dbg);
	if (slash) {
		join(dbg, root, "");
		cand_add(c, "%s%.*s.debug%s", dbg, (int)(slash - path + 1), path, slash);
	}
	if (strncmp(path, "/usr/lib/", 9) == 0) {
		join(dbg, root, "/usr/lib/debug");
		cand_add(c, "%s%s", dbg, path + 4);
	}
}

/* perf's default cache directory is $HOME/.debug. */
static const char *cache_dir(const struct rb_symtab_elf_opts *o, char *buf, size_t len)
{
	const char *home = getenv("HOME");

	if (o && o->buildid_dir)
		return o->buildid_dir;
	if (!home || snprintf(buf, len, "%s/.debug", home) >= (int)len)
		return "";
	return buf;
}

static int id_matches(const struct symsrc *ss, const uint8_t *id, size_t idlen)
{
	uint8_t got[BUILD_ID_MAX];

	if (!idlen)
		return 1;
	int n = sym_elf_build_id(&ss->e, got, sizeof(got));
	return n > 0 && rb_build_id_same(got, (size_t)n, id, idlen);
}

/* Open one candidate and keep it if it supplies the symbol table or the runtime image. */
static void try_candidate(struct pick *pk, const char *file, int is_path, const uint8_t *id, size_t idlen)
{
	struct symsrc *ss = &pk->ss[(pk->syms != NULL) + (pk->run != NULL && pk->run != pk->syms)];
	int err, used = 0;

	if (!is_path && !is_regular_file(file))
		return;
	err = sym_elf_symsrc_open(ss, file, is_path ? pk->path_msg : NULL, sizeof(pk->path_msg));
	if (err == 0 && !id_matches(ss, id, idlen)) {
		sym_elf_symsrc_close(ss);
		err = symtab_fail(is_path ? pk->path_msg : NULL, sizeof(pk->path_msg), -ESTALE,
				  "%s: build-id does not match the recording's", file);
	}
	if (is_path)
		pk->path_err = err;
	if (err)
		return;
	if (!pk->syms && ss->has_symtab)
		pk->syms = ss, used = 1;
	if (!pk->run && (ss->has_dynsym || ss->has_opd))
		pk->run = ss, used = 1;
	if (!used)
		sym_elf_symsrc_close(ss);
}

static int elf_expected_id(const char *root, const char *path, const struct rb_symtab_elf_opts *o,
			   uint8_t *id)
{
	char file[PATH_MAX];
	struct mfile f;
	struct elf e;
	int r = 0;

	if (o && o->build_id && o->build_id_len) {
		r = o->build_id_len > BUILD_ID_MAX ? BUILD_ID_MAX : (int)o->build_id_len;
		memcpy(id, o->build_id, (size_t)r);
		return r;
	}
	join(file, root, path);
	if (!is_regular_file(file) || sym_elf_mfile_open(&f, file, NULL, 0))
		return 0;
	if (sym_elf_parse(&e, file, &f, NULL, 0) == 0)
		r = sym_elf_build_id(&e, id, BUILD_ID_MAX);
	sym_elf_mfile_close(&f);
	return r;
}

void sym_find_pick_files(struct pick *pk, const char *path, const struct rb_symtab_elf_opts *o)
{
	const char *root = o && o->root ? o->root : "";
	uint8_t id[BUILD_ID_MAX];
	int idlen = elf_expected_id(root, path, o, id);
	struct cands *c = calloc(1, sizeof(*c));
	char file[PATH_MAX], cache[PATH_MAX];
	size_t i;

	memset(pk, 0, sizeof(*pk));
	join(file, root, path);
	if (!c) {
		pk->path_err = symtab_fail(pk->path_msg, sizeof(pk->path_msg), -ENOMEM, "%s: out of memory", path);
		return;
	}
	if (o && o->debug_path)
		cand_add(c, "%s", o->debug_path);
	if (o && (o->debug_path || o->no_debug_search))
		cand_add(c, "%s", file);
	else
		gather(c, root, cache_dir(o, cache, sizeof(cache)), path, id, idlen > 0 ? (size_t)idlen : 0);
	for (i = 0; i < c->n && !(pk->syms && pk->run); i++)
		try_candidate(pk, c->path[i], strcmp(c->path[i], file) == 0, id, idlen > 0 ? (size_t)idlen : 0);
	free(c);
}

void sym_find_pick_close(struct pick *pk)
{
	if (pk->syms)
		sym_elf_symsrc_close(pk->syms);
	if (pk->run && pk->run != pk->syms)
		sym_elf_symsrc_close(pk->run);
}

/* ------------------------------------------------------------------ */
/* for the trace decoders: a debug file, a runtime image               */

int rb_elf_find_debuginfo(const char *path, const char *root, const uint8_t *build_id,
			  size_t build_id_len, char *buf, size_t buflen)
{
	struct rb_symtab_elf_opts o = { NULL, 0, build_id, build_id_len, root, NULL };
	char file[PATH_MAX];
	struct pick *pk;
	int found = 0;

	if (!path || !buf || !buflen)
		return -EINVAL;
	if (!(pk = malloc(sizeof(*pk))))
		return -ENOMEM;
	sym_find_pick_files(pk, path, &o);
	join(file, root ? root : "", path);
	if (pk->syms && strcmp(pk->syms->path, file) != 0 && strlen(pk->syms->path) < buflen) {
		strcpy(buf, pk->syms->path);
		found = 1;
	}
	sym_find_pick_close(pk);
	free(pk);
	return found;
}

/* An ELF file whose build-id is @id (when given) and that holds code bytes (not a debug-only file). */
static int is_code_image(const char *file, const uint8_t *id, size_t idlen)
{
	struct mfile f;
	struct elf e;
	struct shdr sh;
	uint8_t got[BUILD_ID_MAX];
	int ok = 0;

	if (!is_regular_file(file) || sym_elf_mfile_open(&f, file, NULL, 0))
		return 0;
	if (sym_elf_parse(&e, file, &f, NULL, 0) == 0 &&
	    (!idlen || (sym_elf_build_id(&e, got, sizeof(got)) == (int)idlen && !memcmp(got, id, idlen))))
		for (size_t i = 1; i < e.shnum && !ok; i++) {
			sym_elf_read_shdr(&e, i, &sh);
			ok = sh.type == SHT_PROGBITS && (sh.flags & SHF_EXECINSTR) && sh.size &&
			     in_file(&e, sh.offset, sh.size);
		}
	sym_elf_mfile_close(&f);
	return ok;
}

int rb_elf_has_code(const char *path)
{
	return path ? is_code_image(path, NULL, 0) : 0;
}

int rb_elf_find_image(const char *path, const char *root, const char *buildid_dir, const uint8_t *build_id,
		      size_t build_id_len, char *buf, size_t buflen)
{
	struct rb_symtab_elf_opts o = { NULL, 0, NULL, 0, root, buildid_dir };
	char cache[PATH_MAX], file[PATH_MAX];
	struct cands *c;
	int found = 0;

	if (!path || !buf || !buflen)
		return -EINVAL;
	if (!(c = calloc(1, sizeof(*c))))
		return -ENOMEM;
	if (build_id_len > BUILD_ID_MAX)
		build_id_len = BUILD_ID_MAX;
	if (build_id_len)
		cand_cache_ids(c, cache_dir(&o, cache, sizeof(cache)), path, build_id, build_id_len, 0);
	if (root && root[0]) {
		join(file, root, path);
		cand_add(c, "%s", file);
	}
	if (path[0] == '/')
		cand_add(c, "%s", path);
	for (size_t i = 0; i < c->n && !found; i++) {
		uint8_t id[BUILD_ID_MAX];
		int n;
		if (!is_code_image(c->path[i], NULL, 0))   /* not a debug-only file */
			continue;
		n = build_id_len ? rb_elf_build_id(c->path[i], id, sizeof(id)) : 0;
		if (build_id_len && (n <= 0 || !rb_build_id_same(id, (size_t)n, build_id, build_id_len)))
			continue;
		if (strlen(c->path[i]) < buflen) {
			strcpy(buf, c->path[i]);
			found = 1;
		}
	}
	free(c);
	return found;
}
