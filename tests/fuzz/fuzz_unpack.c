/*
 * fuzz_unpack.c - libFuzzer target for the archive reader (decoder/session/unpack.c):
 * the input is an archive (tar in any compression libarchive reads, or zip).
 * It is detected and unpacked under tight limits into a folder of the
 * scratch area (TMPDIR points there). Besides crashes it checks the reader's
 * promise: everything it leaves lies inside its temporary folder (no link
 * leads out, no device or fifo exists, the recording it names is a regular
 * file in the folder), and cleanup removes the folder.
 */
#include "config.h"
#include <limits.h>
#include "decoder/session/unpack.h"
#include "fuzz.h"

static char root_real[PATH_MAX];
static size_t root_len;

static void fail(const char *what, const char *path)
{
	fprintf(stderr, "unpack: %s: %s\n", what, path);
	abort();
}

static int inside(const char *path)
{
	char real[PATH_MAX];
	if (!realpath(path, real))
		return 1;           /* a dangling link leads nowhere: harmless */
	return !strncmp(real, root_real, root_len) && (real[root_len] == '/' || real[root_len] == 0);
}

static int check_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)ftw;
	if (flag == FTW_SL && !inside(path))
		fail("a symbolic link leads out of the folder", path);
	if (flag == FTW_F && !S_ISREG(sb->st_mode))
		fail("not a regular file, folder or link", path);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[512], tmp[512];
	rb_archive_in_process = 1;    /* libarchive's coverage and crashes are this target's */
	snprintf(path, sizeof(path), "%s/input", fuzz_scratch());
	snprintf(tmp, sizeof(tmp), "%s/tmp", fuzz_scratch());
	mkdir(tmp, 0700);
	setenv("TMPDIR", tmp, 1);
	if (fuzz_write_file(path, data, size) < 0)
		return 0;
	if (rb_archive_detect(path) <= 0) {
		unlink(path);
		return 0;
	}
	struct rb_archive_limits lim = { 8u << 20, 4u << 20, 256, 1000 };
	struct rb_unpacked u;
	char msg[512];
	if (rb_archive_unpack(path, &lim, &u, msg, sizeof(msg)) == 0) {
		if (!realpath(u.dir, root_real))
			fail("the folder it returned does not exist", u.dir);
		root_len = strlen(root_real);
		nftw(u.dir, check_entry, 16, FTW_PHYS);
		struct stat sb;
		if (lstat(u.perf_data, &sb) < 0 || !S_ISREG(sb.st_mode) || !inside(u.perf_data))
			fail("the recording it names is not a regular file inside the folder", u.perf_data);
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%s", u.dir);
		rb_archive_cleanup(&u);
		if (lstat(dir, &sb) == 0)
			fail("cleanup left the folder", dir);
	} else {
		msg[sizeof(msg) - 1] = 0;
		if (!msg[0])
			fail("refused without a message", path);
	}
	/* nothing may be left in TMPDIR after a refusal or a cleanup */
	fuzz_rmtree(tmp);
	unlink(path);
	return 0;
}
