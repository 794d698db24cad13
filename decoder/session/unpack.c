/*
 * unpack.c - see unpack.h. Entries are written with openat() relative to
 * the temporary folder, one path component at a time with O_NOFOLLOW, so
 * that no link (in the archive or planted by an earlier entry) can redirect
 * a write outside it. Symbolic links are kept only when their target, taken
 * relative to the link's folder, stays inside the folder.
 *
 * libarchive runs in a forked child (run_child): libarchive 3.6 does not
 * survive every failed allocation of its own (it segfaults in
 * archive_read_next_header, exits the process with "No memory", or says
 * "decompression failed" without ENOMEM). The child probes or unpacks into
 * the temporary folder the parent made and sends its verdict (status,
 * message, the recording's path inside) back through a pipe; a child that
 * dies or exits without one is reported by the parent, which never runs
 * libarchive itself. An error libarchive reports is confirmed by reading
 * the archive a second time in the same child before the archive is called
 * damaged: an error that does not come back was not the archive's.
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
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>
#include "unpack.h"

#define GiB (1024ULL * 1024 * 1024)

/* What the child sends back: all of it, or the child did not finish. */
struct child_result {
	int rc;                  /* probe: 0 / 1; unpack: 0; or -1, -ENOMEM */
	char data_rel[4096];     /* unpack: the recording, relative to the folder */
	char msg[1024];
};

int rb_archive_in_process;

static void exit_at_once(int status, void *arg)
{
	(void)arg;
	_exit(status);
}

/*
 * Run @fn(@ctx, result) in a forked child and bring its result back.
 * Returns 0 with @r filled in, or -1 with @why saying how the child ended
 * without one (its signal, or its exit status and what it wrote on stderr),
 * or -errno when no child could be started. With rb_archive_in_process,
 * @fn runs here.
 */
static int run_child(void (*fn)(void *, struct child_result *), void *ctx, struct child_result *r,
		     char *why, size_t whylen)
{
	if (rb_archive_in_process) {
		memset(r, 0, sizeof(*r));
		r->rc = -1;
		fn(ctx, r);
		return 0;
	}
	int res[2], err[2];
	if (pipe2(res, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(err, O_CLOEXEC) < 0) {
		int e = errno;
		close(res[0]);
		close(res[1]);
		return -e;
	}
	fflush(NULL);                                /* nothing buffered is written twice */
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(res[0]); close(res[1]); close(err[0]); close(err[1]);
		return -e;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);   /* the parent gone, nobody wants the rest */
		on_exit(exit_at_once, NULL);         /* libarchive's exit(): not the parent's atexit work */
		close(res[0]);
		close(err[0]);
		dup2(err[1], 2);                     /* libarchive's own "No memory" line, for the parent to read */
		close(err[1]);
		static struct child_result cr;
		memset(&cr, 0, sizeof(cr));
		cr.rc = -1;
		fn(ctx, &cr);
		const char *p = (const char *)&cr;
		for (size_t w = 0; w < sizeof(cr);) {
			ssize_t k = write(res[1], p + w, sizeof(cr) - w);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				_exit(3);
			w += (size_t)k;
		}
		_exit(0);
	}
	close(res[1]);
	close(err[1]);
	/*
	 * Its stderr first (the result, smaller than a pipe's buffer, never
	 * blocks the child). The first 512 bytes are held back: libarchive's
	 * one fatal line goes into the message; anything else (a sanitizer's
	 * report) is passed on.
	 */
	static const char fatal[] = "Fatal Internal Error in libarchive: ";
	char text[512];
	size_t tl = 0;
	int passed = 0;
	for (;;) {
		char buf[4096];
		ssize_t k = read(err[0], buf, sizeof(buf));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		if (!passed && tl + (size_t)k < sizeof(text)) {
			memcpy(text + tl, buf, (size_t)k);
			tl += (size_t)k;
			continue;
		}
		if (!passed)
			fwrite(text, 1, tl, stderr);
		passed = 1;
		fwrite(buf, 1, (size_t)k, stderr);
	}
	text[passed ? 0 : tl] = 0;
	close(err[0]);
	char *nl = strchr(text, '\n');
	if (text[0] && (strncmp(text, fatal, sizeof(fatal) - 1) || (nl && nl[1]))) {
		fputs(text, stderr);
		text[0] = 0;
	}
	if (nl)
		*nl = 0;
	size_t got = 0;
	for (;;) {
		ssize_t k = read(res[0], (char *)r + got, sizeof(*r) - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	close(res[0]);
	int st = 0, w;
	while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
		;
	if (w < 0)                           /* reaped elsewhere (SIGCHLD ignored by a host program) */
		st = got == sizeof(*r) ? 0 : -1;
	if (got == sizeof(*r) && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		r->msg[sizeof(r->msg) - 1] = 0;
		r->data_rel[sizeof(r->data_rel) - 1] = 0;
		return 0;
	}
	if (st == -1)
		snprintf(why, whylen, "ended without a verdict");
	else if (WIFSIGNALED(st))
		snprintf(why, whylen, "died of signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
	else
		snprintf(why, whylen, "exited with status %d%s%s%s", WIFEXITED(st) ? WEXITSTATUS(st) : -1,
			 text[0] ? " saying \"" : "", text, text[0] ? "\"" : "");
	return -1;
}

/* Does libarchive read a first entry of @path? 1, 0, or -ENOMEM. */
static int probe_once(const char *path)
{
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

/* The child's side of rb_archive_detect: a "no" is asked twice, as unpack_entries confirms an error */
static void probe(void *ctx, struct child_result *r)
{
	r->rc = probe_once(ctx);
	if (r->rc == 0)
		r->rc = probe_once(ctx);
}

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
	static struct child_result r;
	char why[256];
	int rc = run_child(probe, (void *)path, &r, why, sizeof(why));
	if (rc == -1)
		return 1;    /* libarchive did not survive it: not a perf.data, and unpacking says why */
	if (rc < 0)
		return rc == -ENOMEM ? -ENOMEM : 1;
	return r.rc;
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

/* What the child unpacks, and where. */
struct unpack_ctx {
	const char *path, *dir;
	struct rb_archive_limits lim;
	off_t packed;            /* the archive's size, for the bomb ratio */
};

/* libarchive's error text, or a word that it gave none */
static const char *why_of(struct archive *a)
{
	const char *s = archive_error_string(a);
	return s ? s : "libarchive gave no reason";
}

/*
 * One pass of unpacking into the folder @root. Returns 1 when the failure
 * in @r is one libarchive reported (the archive's, or libarchive's own),
 * 0 otherwise (success, or an entry refused here).
 */
static int unpack_once(const struct unpack_ctx *c, int root, struct child_result *r)
{
	const char *path = c->path;
	int lib = 0;
	struct archive *a = archive_read_new();
	if (!a) {
		snprintf(r->msg, sizeof(r->msg), "out of memory unpacking %s", path);
		r->rc = -ENOMEM;
		return 0;
	}
	archive_read_support_filter_all(a);
	archive_read_support_format_tar(a);
	archive_read_support_format_zip(a);
	if (archive_read_open_filename(a, path, 65536) != ARCHIVE_OK) {
		/* libarchive's text alone ("Failed to open") does not say why */
		int e2 = archive_errno(a);
		snprintf(r->msg, sizeof(r->msg), "%s: %s%s%s", path, why_of(a), e2 > 0 ? ": " : "",
			 e2 > 0 ? strerror(e2) : "");
		lib = 1;
		goto err_out;
	}
	uint64_t total = 0, entries = 0;
	struct archive_entry *e;
	int rc;
	char rel[4096];
	static char block[1 << 16];
	while ((rc = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(e);
		if (++entries > c->lim.max_entries) {
			snprintf(r->msg, sizeof(r->msg), "%s: more than %llu entries; refused", path, (unsigned long long)c->lim.max_entries);
			goto err_out;
		}
		if (!name || clean_path(name, rel, sizeof(rel)) < 0) {
			if (name && (!strcmp(name, "./") || !strcmp(name, ".")))
				continue;
			snprintf(r->msg, sizeof(r->msg), "%s: entry '%s' has an absolute or '..' path; refused", path, name ? name : "?");
			goto err_out;
		}
		mode_t type = archive_entry_filetype(e);
		const char *leaf;
		int dfd = open_parent(root, rel, &leaf);
		if (dfd < 0) {
			int e2 = errno;   /* ELOOP / ENOTDIR: an earlier entry put a link or a file there */
			snprintf(r->msg, sizeof(r->msg), "%s: entry '%s': cannot create its folder%s: %s", path, rel,
				 e2 == ELOOP || e2 == ENOTDIR ? " (a link or a file in the way)" : "", strerror(e2));
			goto err_out;
		}
		if (type == AE_IFDIR) {
			if (mkdirat(dfd, leaf, 0700) < 0 && errno != EEXIST) {
				close(dfd);
				snprintf(r->msg, sizeof(r->msg), "%s: entry '%s': %s", path, rel, strerror(errno));
				goto err_out;
			}
			close(dfd);
			continue;
		}
		if (type == AE_IFLNK) {
			const char *target = archive_entry_symlink(e);
			if (!target || !link_inside(rel, target)) {
				close(dfd);
				snprintf(r->msg, sizeof(r->msg), "%s: entry '%s' links to '%s', outside the archive; refused",
					 path, rel, target ? target : "?");
				goto err_out;
			}
			int r2 = symlinkat(target, dfd, leaf);
			close(dfd);
			if (r2 < 0) {
				snprintf(r->msg, sizeof(r->msg), "%s: entry '%s': %s", path, rel, strerror(errno));
				goto err_out;
			}
			continue;
		}
		if (archive_entry_hardlink(e) || type != AE_IFREG) {
			close(dfd);
			snprintf(r->msg, sizeof(r->msg), "%s: entry '%s' is a %s; only files, folders and inside links are accepted",
				 path, rel, archive_entry_hardlink(e) ? "hard link" : "device or special file");
			goto err_out;
		}
		if (archive_entry_size_is_set(e) && (uint64_t)archive_entry_size(e) > c->lim.max_entry) {
			close(dfd);
			snprintf(r->msg, sizeof(r->msg), "%s: entry '%s' claims %lld bytes, over the %llu-byte limit; refused",
				 path, rel, (long long)archive_entry_size(e), (unsigned long long)c->lim.max_entry);
			goto err_out;
		}
		int fd = openat(dfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		close(dfd);
		if (fd < 0) {
			snprintf(r->msg, sizeof(r->msg), "%s: entry '%s': %s", path, rel, strerror(errno));
			goto err_out;
		}
		uint64_t n = 0;
		la_ssize_t got;
		while ((got = archive_read_data(a, block, sizeof(block))) > 0) {
			n += (uint64_t)got;
			total += (uint64_t)got;
			if (n > c->lim.max_entry || total > c->lim.max_total ||
			    (total > (64u << 20) && total / ((uint64_t)c->packed + 1) > c->lim.max_ratio)) {
				close(fd);
				snprintf(r->msg, sizeof(r->msg), "%s: entry '%s' unpacks past the limits (%llu bytes from a %lld-byte archive): a decompression bomb? refused",
					 path, rel, (unsigned long long)total, (long long)c->packed);
				goto err_out;
			}
			for (la_ssize_t w = 0; w < got;) {
				ssize_t k = write(fd, block + w, (size_t)(got - w));
				if (k < 0) {
					snprintf(r->msg, sizeof(r->msg), "%s: writing entry '%s' to %s: %s", path, rel, c->dir, strerror(errno));
					close(fd);
					goto err_out;
				}
				w += k;
			}
		}
		close(fd);
		if (got < 0) {
			snprintf(r->msg, sizeof(r->msg), "%s: entry '%s': %s", path, rel, why_of(a));
			lib = 1;
			goto err_out;
		}
		const char *base = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
		/* the recording: perf.data, else the first *.data at the shallowest level */
		if (!strcmp(base, "perf.data") && (!r->data_rel[0] || strcmp(strrchr(r->data_rel, '/') ? strrchr(r->data_rel, '/') + 1 : r->data_rel, "perf.data")))
			snprintf(r->data_rel, sizeof(r->data_rel), "%s", rel);
		else if (!r->data_rel[0] && strlen(base) > 5 && !strcmp(base + strlen(base) - 5, ".data"))
			snprintf(r->data_rel, sizeof(r->data_rel), "%s", rel);
	}
	if (rc != ARCHIVE_EOF) {
		snprintf(r->msg, sizeof(r->msg), "%s: %s", path, why_of(a));
		lib = 1;
		goto err_out;
	}
	archive_read_free(a);
	r->rc = 0;
	return 0;
err_out:
	r->rc = archive_errno(a) == ENOMEM ? -ENOMEM : -1;
	archive_read_free(a);
	return lib && r->rc == -1;
}

/* nftw callback: everything under the folder, not the folder itself */
static int rm_below_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb; (void)flag;
	return ftw->level ? remove(path) : 0;
}

/*
 * The child's side of rb_archive_unpack: the entries into @c->dir, the
 * verdict into @r. libarchive loses ENOMEM on some of its own allocation
 * failures ("gzip decompression failed", no message at all), so an error it
 * reports is the archive's only when a second pass, from an emptied
 * folder, ends on the same error; a second pass that gets through is the
 * result.
 */
static void unpack_entries(void *ctx, struct child_result *r)
{
	const struct unpack_ctx *c = ctx;
	int root = open(c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0) {
		int e2 = errno;
		snprintf(r->msg, sizeof(r->msg), "%s: cannot open the temporary folder %s: %s", c->path, c->dir, strerror(e2));
		r->rc = e2 == ENOMEM ? -ENOMEM : -1;
		return;
	}
	if (unpack_once(c, root, r)) {
		static struct child_result again;
		memset(&again, 0, sizeof(again));
		if (nftw(c->dir, rm_below_cb, 32, FTW_DEPTH | FTW_PHYS) != 0) {
			int e2 = errno;
			snprintf(again.msg, sizeof(again.msg), "%s: emptying %s to read it again: %s", c->path, c->dir, strerror(e2));
			again.rc = e2 == ENOMEM ? -ENOMEM : -1;
		} else if (!unpack_once(c, root, &again)) {
			;                           /* through, or a verdict of its own: that one stands */
		} else if (strcmp(again.msg, r->msg)) {
			/* the verdict first: the caller's buffer may cut the rest */
			char second[sizeof(again.msg)];
			memcpy(second, again.msg, sizeof(second));
			snprintf(again.msg, sizeof(again.msg),
				 "unpacking %s failed, out of memory or a libarchive failure: it said \"%.150s\", then \"%.150s\" reading it again",
				 c->path, r->msg, second);
			again.rc = -ENOMEM;
		} else {
			again = *r;                 /* the same error twice: the archive's */
		}
		*r = again;
	}
	close(root);
}

int rb_archive_unpack(const char *path, const struct rb_archive_limits *lim_in, struct rb_unpacked *out,
		      char *msg, size_t msglen)
{
	struct unpack_ctx c = { .path = path, .lim = { 64 * GiB, 32 * GiB, 1000000, 1000 } };
	if (lim_in)
		c.lim = *lim_in;
	memset(out, 0, sizeof(*out));
	struct stat sb;
	if (stat(path, &sb) < 0) {
		snprintf(msg, msglen, "%s: %s", path, strerror(errno));
		return -1;
	}
	c.packed = sb.st_size;
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char tmpl[4096];
	snprintf(tmpl, sizeof(tmpl), "%s/rbdecode-archive.XXXXXX", tmp);
	if (!mkdtemp(tmpl)) {
		snprintf(msg, msglen, "cannot create a temporary folder in %s: %s", tmp, strerror(errno));
		return -1;
	}
	out->dir = strdup(tmpl);
	if (!out->dir) {
		rmdir(tmpl);
		snprintf(msg, msglen, "out of memory unpacking %s", path);
		return -ENOMEM;
	}
	c.dir = out->dir;
	static struct child_result r;
	char why[768];
	int rc = run_child(unpack_entries, &c, &r, why, sizeof(why));
	if (rc == -1) {
		/* a child without a verdict: libarchive crashed or exited on a failed allocation of its own */
		/* libarchive's own fatal line ("No memory", "Out of memory") says which it was */
		int nomem = strstr(why, "in libarchive:") && strcasestr(why, "memory");
		snprintf(msg, msglen, "unpacking %s failed: libarchive %s: %s", path, why,
			 nomem ? "memory ran out" : "out of memory or a libarchive failure");
		rb_archive_cleanup(out);
		return -ENOMEM;
	}
	if (rc < 0) {
		snprintf(msg, msglen, "cannot start the unpacker for %s: %s", path, strerror(-rc));
		rb_archive_cleanup(out);
		return rc == -ENOMEM || rc == -EAGAIN ? -ENOMEM : -1;
	}
	if (r.rc < 0) {
		snprintf(msg, msglen, "%s", r.msg);
		rb_archive_cleanup(out);
		return r.rc == -ENOMEM ? -ENOMEM : -1;
	}
	if (!r.data_rel[0]) {
		snprintf(msg, msglen, "%s: no perf.data (or *.data) inside the archive", path);
		rb_archive_cleanup(out);
		return -1;
	}
	size_t len = strlen(out->dir) + strlen(r.data_rel) + 2;
	out->perf_data = malloc(len);
	if (!out->perf_data) {
		snprintf(msg, msglen, "out of memory");
		rb_archive_cleanup(out);
		return -ENOMEM;
	}
	snprintf(out->perf_data, len, "%s/%s", out->dir, r.data_rel);
	out->buildid_dir = out->dir;
	return 0;
}
