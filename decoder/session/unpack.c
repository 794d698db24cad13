/*
 * unpack.c - see unpack.h. Entries are written with openat() relative to
 * the temporary folder, one path component at a time with O_NOFOLLOW, so
 * that no link (in the archive or planted by an earlier entry) can redirect
 * a write outside it. Symbolic links are kept only when their target, taken
 * relative to the link's folder, stays inside the folder.
 */
#include "config.h"
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "unpack.h"

#define GiB (1024ULL * 1024 * 1024)

int rb_archive_detect(const char *path)
{
	unsigned char m[8];
	FILE *f = fopen(path, "rb");
	if (!f)
		return errno == ENOMEM ? -ENOMEM : 0;
	size_t n = fread(m, 1, sizeof(m), f);
	fclose(f);
	if (n >= 8 && (!memcmp(m, "PERFILE2", 8) || !memcmp(m, "2ELIFREP", 8) || !memcmp(m, "PERFFILE", 8)))
		return 0;
	/*
	 * The compressions and zip by their magic: such a file is an archive
	 * whatever libarchive then says of it (a damaged one, or libarchive out
	 * of memory, is unpack's error, not "not a perf.data").
	 */
	static const struct { const char *m; size_t n; } magic[] = {
		{ "\x1f\x8b", 2 }, { "BZh", 3 }, { "\xfd" "7zXZ\0", 6 }, { "\x28\xb5\x2f\xfd", 4 },
		{ "PK\x03\x04", 4 }, { "\x5d\0\0", 3 },
	};
	for (size_t i = 0; i < sizeof(magic) / sizeof(magic[0]); i++)
		if (n >= magic[i].n && !memcmp(m, magic[i].m, magic[i].n))
			return 1;
	struct archive *a = archive_read_new();
	if (!a)
		return -ENOMEM;
	archive_read_support_filter_all(a);
	archive_read_support_format_tar(a);
	archive_read_support_format_zip(a);
	struct archive_entry *e;
	int ok = archive_read_open_filename(a, path, 65536) == ARCHIVE_OK &&
		 archive_read_next_header(a, &e) == ARCHIVE_OK;
	if (!ok && archive_errno(a) == ENOMEM)   /* not an answer: memory ran out while looking */
		ok = -ENOMEM;
	archive_read_free(a);
	return ok;
}

/* Normalise an entry path: relative, no "." or ".." components, no empty ones. */
static int clean_path(const char *in, char *out, size_t n)
{
	size_t k = 0;
	const char *p = in;
	while (*p == '/' && p[1] == '\0')
		return -1;
	if (*p == '/')
		return -1;                       /* absolute */
	while (*p) {
		const char *end = strchr(p, '/');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == 2 && !strncmp(p, "..", 2))
			return -1;
		if (len && !(len == 1 && *p == '.')) {
			if (k + len + 2 > n)
				return -1;
			if (k)
				out[k++] = '/';
			memcpy(out + k, p, len);
			k += len;
		}
		p += len + (end ? 1 : 0);
	}
	out[k] = 0;
	return k ? 0 : -1;
}

/* Open (creating folders) the parent folder of @rel under @root, never following links. */
static int open_parent(int root, const char *rel, const char **leaf)
{
	char buf[4096];
	snprintf(buf, sizeof(buf), "%s", rel);
	int dfd = dup(root);
	char *p = buf, *slash;
	while (dfd >= 0 && (slash = strchr(p, '/'))) {
		*slash = 0;
		if (mkdirat(dfd, p, 0700) < 0 && errno != EEXIST) {
			close(dfd);
			return -1;
		}
		int next = openat(dfd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(dfd);
		dfd = next;
		p = slash + 1;
	}
	*leaf = rel + (p - buf);
	return dfd;
}

/* A link target stays inside when, resolved lexically from the link's folder, it never climbs above the root. */
static int link_inside(const char *linkpath, const char *target)
{
	if (target[0] == '/')
		return 0;
	int depth = 0;
	for (const char *p = linkpath; *p; p++)
		if (*p == '/')
			depth++;
	const char *p = target;
	while (*p) {
		const char *end = strchr(p, '/');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == 2 && !strncmp(p, "..", 2)) {
			if (--depth < 0)
				return 0;
		} else if (len && !(len == 1 && *p == '.')) {
			depth++;
		}
		p += len + (end ? 1 : 0);
	}
	return 1;
}

static int rm_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb; (void)flag; (void)ftw;
	return remove(path);
}

void rb_archive_cleanup(struct rb_unpacked *u)
{
	if (u->dir)
		nftw(u->dir, rm_cb, 32, FTW_DEPTH | FTW_PHYS);
	free(u->dir);
	free(u->perf_data);
	memset(u, 0, sizeof(*u));
}

int rb_archive_unpack(const char *path, const struct rb_archive_limits *lim_in, struct rb_unpacked *out,
		      char *msg, size_t msglen)
{
	struct rb_archive_limits lim = { 64 * GiB, 32 * GiB, 1000000, 1000 };
	if (lim_in)
		lim = *lim_in;
	memset(out, 0, sizeof(*out));
	struct stat sb;
	if (stat(path, &sb) < 0) {
		snprintf(msg, msglen, "%s: %s", path, strerror(errno));
		return -1;
	}
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char tmpl[4096];
	snprintf(tmpl, sizeof(tmpl), "%s/rbdecode-archive.XXXXXX", tmp);
	if (!mkdtemp(tmpl)) {
		snprintf(msg, msglen, "cannot create a temporary folder in %s: %s", tmp, strerror(errno));
		return -1;
	}
	out->dir = strdup(tmpl);
	int root = open(tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct archive *a = archive_read_new();
	int nomem = !out->dir || !a;
	if (nomem || root < 0) {
		snprintf(msg, msglen, "out of memory or descriptors unpacking %s", path);
		goto err_out;
	}
	archive_read_support_filter_all(a);
	archive_read_support_format_tar(a);
	archive_read_support_format_zip(a);
	if (archive_read_open_filename(a, path, 65536) != ARCHIVE_OK) {
		/* libarchive's text alone ("Failed to open") does not say why */
		int e2 = archive_errno(a);
		snprintf(msg, msglen, "%s: %s%s%s", path, archive_error_string(a), e2 > 0 ? ": " : "",
			 e2 > 0 ? strerror(e2) : "");
		goto err_out;
	}
	uint64_t total = 0, entries = 0;
	struct archive_entry *e;
	int rc;
	char rel[4096], data_rel[4096] = "";
	static char block[1 << 16];
	while ((rc = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(e);
		if (++entries > lim.max_entries) {
			snprintf(msg, msglen, "%s: more than %llu entries; refused", path, (unsigned long long)lim.max_entries);
			goto err_out;
		}
		if (!name || clean_path(name, rel, sizeof(rel)) < 0) {
			if (name && (!strcmp(name, "./") || !strcmp(name, ".")))
				continue;
			snprintf(msg, msglen, "%s: entry '%s' has an absolute or '..' path; refused", path, name ? name : "?");
			goto err_out;
		}
		mode_t type = archive_entry_filetype(e);
		const char *leaf;
		int dfd = open_parent(root, rel, &leaf);
		if (dfd < 0) {
			int e2 = errno;   /* ELOOP / ENOTDIR: an earlier entry put a link or a file there */
			snprintf(msg, msglen, "%s: entry '%s': cannot create its folder%s: %s", path, rel,
				 e2 == ELOOP || e2 == ENOTDIR ? " (a link or a file in the way)" : "", strerror(e2));
			goto err_out;
		}
		if (type == AE_IFDIR) {
			if (mkdirat(dfd, leaf, 0700) < 0 && errno != EEXIST) {
				close(dfd);
				snprintf(msg, msglen, "%s: entry '%s': %s", path, rel, strerror(errno));
				goto err_out;
			}
			close(dfd);
			continue;
		}
		if (type == AE_IFLNK) {
			const char *target = archive_entry_symlink(e);
			if (!target || !link_inside(rel, target)) {
				close(dfd);
				snprintf(msg, msglen, "%s: entry '%s' links to '%s', outside the archive; refused",
					 path, rel, target ? target : "?");
				goto err_out;
			}
			int r2 = symlinkat(target, dfd, leaf);
			close(dfd);
			if (r2 < 0) {
				snprintf(msg, msglen, "%s: entry '%s': %s", path, rel, strerror(errno));
				goto err_out;
			}
			continue;
		}
		if (archive_entry_hardlink(e) || type != AE_IFREG) {
			close(dfd);
			snprintf(msg, msglen, "%s: entry '%s' is a %s; only files, folders and inside links are accepted",
				 path, rel, archive_entry_hardlink(e) ? "hard link" : "device or special file");
			goto err_out;
		}
		if (archive_entry_size_is_set(e) && (uint64_t)archive_entry_size(e) > lim.max_entry) {
			close(dfd);
			snprintf(msg, msglen, "%s: entry '%s' claims %lld bytes, over the %llu-byte limit; refused",
				 path, rel, (long long)archive_entry_size(e), (unsigned long long)lim.max_entry);
			goto err_out;
		}
		int fd = openat(dfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		close(dfd);
		if (fd < 0) {
			snprintf(msg, msglen, "%s: entry '%s': %s", path, rel, strerror(errno));
			goto err_out;
		}
		uint64_t n = 0;
		la_ssize_t got;
		while ((got = archive_read_data(a, block, sizeof(block))) > 0) {
			n += (uint64_t)got;
			total += (uint64_t)got;
			if (n > lim.max_entry || total > lim.max_total ||
			    (total > (64u << 20) && total / ((uint64_t)sb.st_size + 1) > lim.max_ratio)) {
				close(fd);
				snprintf(msg, msglen, "%s: entry '%s' unpacks past the limits (%llu bytes from a %lld-byte archive): a decompression bomb? refused",
					 path, rel, (unsigned long long)total, (long long)sb.st_size);
				goto err_out;
			}
			for (la_ssize_t w = 0; w < got;) {
				ssize_t k = write(fd, block + w, (size_t)(got - w));
				if (k < 0) {
					snprintf(msg, msglen, "%s: writing entry '%s' to %s: %s", path, rel, out->dir, strerror(errno));
					close(fd);
					goto err_out;
				}
				w += k;
			}
		}
		close(fd);
		if (got < 0) {
			snprintf(msg, msglen, "%s: entry '%s': %s", path, rel, archive_error_string(a));
			goto err_out;
		}
		const char *base = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
		/* the recording: perf.data, else the first *.data at the shallowest level */
		if (!strcmp(base, "perf.data") && (!data_rel[0] || strcmp(strrchr(data_rel, '/') ? strrchr(data_rel, '/') + 1 : data_rel, "perf.data")))
			snprintf(data_rel, sizeof(data_rel), "%s", rel);
		else if (!data_rel[0] && strlen(base) > 5 && !strcmp(base + strlen(base) - 5, ".data"))
			snprintf(data_rel, sizeof(data_rel), "%s", rel);
	}
	if (rc != ARCHIVE_EOF) {
		snprintf(msg, msglen, "%s: %s", path, archive_error_string(a));
		goto err_out;
	}
	archive_read_free(a);
	close(root);
	if (!data_rel[0]) {
		snprintf(msg, msglen, "%s: no perf.data (or *.data) inside the archive", path);
		rb_archive_cleanup(out);
		return -1;
	}
	size_t len = strlen(out->dir) + strlen(data_rel) + 2;
	out->perf_data = malloc(len);
	if (!out->perf_data) {
		snprintf(msg, msglen, "out of memory");
		rb_archive_cleanup(out);
		return -1;
	}
	snprintf(out->perf_data, len, "%s/%s", out->dir, data_rel);
	out->buildid_dir = out->dir;
	return 0;
err_out:
	nomem = nomem || (a && archive_errno(a) == ENOMEM);
	if (a)
		archive_read_free(a);
	if (root >= 0)
		close(root);
	rb_archive_cleanup(out);
	return nomem ? -ENOMEM : -1;
}
