/*
 * pack.c - see pack.h. The build-ids come from the recording's
 * BUILD_ID feature (read with the format library); each object is packed
 * only if the file at its recorded path still has that build-id, and the
 * kernel's symbols only if the running kernel is the recorded one. The
 * archive is written to OUT.tmp and renamed when complete. A trace.dat
 * recorded beside the perf.data (--ftrace) goes in as perf.data.trace.dat.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <archive.h>
#include <archive_entry.h>
#include "pack.h"
#include "pd.h"
#include "synth.h"

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && !strcmp(s + n - k, suffix);
}

static int set_format(struct archive *a, const char *out)
{
	if (ends_with(out, ".zip"))
		return archive_write_set_format_zip(a);
	int rc = archive_write_set_format_pax_restricted(a);
	if (rc == ARCHIVE_OK) {
		if (ends_with(out, ".gz") || ends_with(out, ".tgz"))
			rc = archive_write_add_filter_gzip(a);
		else if (ends_with(out, ".xz"))
			rc = archive_write_add_filter_xz(a);
		else if (ends_with(out, ".zst"))
			rc = archive_write_add_filter_zstd(a);
		else if (ends_with(out, ".bz2"))
			rc = archive_write_add_filter_bzip2(a);
	}
	return rc;
}

static int add_bytes(struct archive *a, const char *name, const void *data, size_t n, struct rec_err *e)
{
	struct archive_entry *en = archive_entry_new();
	archive_entry_set_pathname(en, name);
	archive_entry_set_filetype(en, AE_IFREG);
	archive_entry_set_perm(en, 0644);
	archive_entry_set_size(en, (la_int64_t)n);
	int rc = archive_write_header(a, en) != ARCHIVE_OK ||
		 (n && archive_write_data(a, data, n) != (la_ssize_t)n);
	archive_entry_free(en);
	return rc ? rec_fail(e, EIO, "archive entry %s: %s", name, archive_error_string(a)) : 0;
}

static int add_file(struct archive *a, const char *name, const char *path, struct rec_err *e)
{
	size_t n;
	char *data = read_all(path, &n);    /* also reads /proc files, whose size stat cannot tell */
	if (!data)
		return rec_fail(e, errno ? errno : EIO, "%s: %s", path, strerror(errno ? errno : EIO));
	int rc = add_bytes(a, name, data, n, e);
	free(data);
	return rc;
}

static int add_link(struct archive *a, const char *name, const char *target, struct rec_err *e)
{
	struct archive_entry *en = archive_entry_new();
	archive_entry_set_pathname(en, name);
	archive_entry_set_filetype(en, AE_IFLNK);
	archive_entry_set_perm(en, 0777);
	archive_entry_set_symlink(en, target);
	int rc = archive_write_header(a, en) != ARCHIVE_OK;
	archive_entry_free(en);
	return rc ? rec_fail(e, EIO, "archive link %s: %s", name, archive_error_string(a)) : 0;
}

/* One object: <dir>/<id>/<leaf> (the file @src, or @n bytes at @data) and .build-id/xx/yyyy -> ../../<dir>/<id>. */
static int add_object(struct archive *a, const char *dir, const char *hex, const char *leaf,
		      const char *src, const void *data, size_t n, struct rec_err *e)
{
	char name[8192], link[128], target[8192];
	snprintf(name, sizeof(name), "%s/%s/%s", dir, hex, leaf);
	snprintf(link, sizeof(link), ".build-id/%.2s/%s", hex, hex + 2);
	snprintf(target, sizeof(target), "../../%s/%s", dir, hex);
	int rc = src ? add_file(a, name, src, e) : add_bytes(a, name, data, n, e);
	return rc < 0 || add_link(a, link, target, e) < 0 ? -1 : 0;
}

struct pack_ctx { struct archive *a; struct archive_stats *st; struct rec_err *e; int failed; };

static void pack_object(void *ctx, uint16_t misc, int32_t pid, const uint8_t *id, unsigned len, const char *name)
{
	struct pack_ctx *c = ctx;
	(void)misc;
	(void)pid;
	if (c->failed || len == 0 || len > 20)
		return;
	char hex[41];
	for (unsigned i = 0; i < len; i++)
		sprintf(hex + 2 * i, "%02x", id[i]);
	uint8_t now[20];
	int rc;
	const void *image;
	size_t n;
	if (!strcmp(name, "[kernel.kallsyms]") && kernel_build_id(now) == (int)len && !memcmp(now, id, len))
		rc = add_object(c->a, "[kernel.kallsyms]", hex, "kallsyms", "/proc/kallsyms", NULL, 0, c->e);
	else if (name[0] == '/' && elf_build_id(name, now) == (int)len && !memcmp(now, id, len))
		rc = add_object(c->a, name + 1, hex, "elf", name, NULL, 0, c->e);
	else if (!strcmp(name, "[vdso]") && vdso_build_id(now) == (int)len && !memcmp(now, id, len) &&
		 (image = vdso_image(&n)))
		rc = add_object(c->a, "[vdso]", hex, "vdso", NULL, image, n, c->e);
	else {
		c->st->missing++;   /* gone, rebuilt, or not the running kernel */
		return;
	}
	if (rc < 0)
		c->failed = 1;
	else
		c->st->objects++;
}

static int add_objects(struct archive *a, struct pd_reader *r, struct archive_stats *st, struct rec_err *e)
{
	const uint8_t *d;
	size_t size;
	struct pack_ctx c = { a, st, e, 0 };
	if (pd_reader_feature(r, PD_FEAT_BUILD_ID, &d, &size, NULL))
		pd_build_id_each(d, size, pack_object, &c);
	return c.failed ? -1 : 0;
}

int archive__write(const char *data, const char *out, struct archive_stats *st, struct rec_err *e)
{
	struct pd_reader *r;
	struct pd_error pe;
	memset(st, 0, sizeof(*st));
	if (pd_reader_open(&r, data, NULL, &pe) < 0)
		return rec_fail(e, EINVAL, "%s", pe.msg);
	char tmp[8192];
	snprintf(tmp, sizeof(tmp), "%s.tmp", out);
	struct archive *a = archive_write_new();
	int rc = -1;
	if (!a || set_format(a, out) != ARCHIVE_OK || archive_write_open_filename(a, tmp) != ARCHIVE_OK) {
		rec_fail(e, EIO, "%s: %s", tmp, a ? archive_error_string(a) : "out of memory");
		goto out;
	}
	if (add_file(a, "perf.data", data, e) < 0 || add_objects(a, r, st, e) < 0)
		goto out;
	/* rbrecord --ftrace's ring, beside perf.data as rbdecode looks for it */
	char dat[8192];
	snprintf(dat, sizeof(dat), "%s.trace.dat", data);
	if (access(dat, R_OK) == 0 && add_file(a, "perf.data.trace.dat", dat, e) < 0)
		goto out;
	if (archive_write_close(a) != ARCHIVE_OK) {
		rec_fail(e, EIO, "%s: %s", tmp, archive_error_string(a));
		goto out;
	}
	if (rename(tmp, out) < 0) {
		rec_fail(e, errno, "cannot rename %s to %s: %s", tmp, out, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (a)
		archive_write_free(a);
	if (rc)
		unlink(tmp);
	pd_reader_free(r);
	return rc;
}
