/*
 * unpack.h - recordings packed as archives: tar (plain, gzip, xz, zstd,
 * bzip2) or zip holding a perf.data and a perf-archive style build-id tree
 * (.build-id/xx/yyyy -> objects, [kernel.kallsyms]/<id>/kallsyms). The
 * archive is unpacked into a private temporary folder without trusting it:
 * absolute paths, "..", links that leave the folder, devices, absurd sizes
 * and decompression bombs are refused with an error naming the entry.
 * libarchive runs in a child process, so that its crashes on failed
 * allocations of its own are an error here (exit 4), not ours.
 */
#ifndef RB_UNPACK_H
#define RB_UNPACK_H

#include <stddef.h>
#include <stdint.h>

struct rb_archive_limits {
	uint64_t max_total;      /* bytes unpacked in all; default 64 GiB */
	uint64_t max_entry;      /* bytes of one entry; default 32 GiB */
	uint64_t max_entries;    /* default 1,000,000 */
	uint64_t max_ratio;      /* unpacked / packed bytes; default 1000 */
};

struct rb_unpacked {
	char *dir;               /* temporary folder (removed by rb_archive_cleanup) */
	char *perf_data;         /* the recording inside it */
	char *buildid_dir;       /* folder holding .build-id/ (== dir) */
};

/*
 * Nonzero: run libarchive in this process rather than in a forked child
 * (the fuzz targets, whose coverage and crashes must stay their own).
 */
extern int rb_archive_in_process;

/* 1 if @path looks like an archive libarchive can read (not a perf.data), else 0; -ENOMEM if memory ran out looking. */
int rb_archive_detect(const char *path);
/* Unpack @path. Returns 0, or -1 (-ENOMEM: out of memory) with @msg naming the archive and the entry at fault. */
int rb_archive_unpack(const char *path, const struct rb_archive_limits *lim, struct rb_unpacked *out,
		      char *msg, size_t msglen);
/* Remove the temporary folder and free. Accepts a zeroed struct. */
void rb_archive_cleanup(struct rb_unpacked *u);

#endif
