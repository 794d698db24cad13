/*
 * pack.h - pack a recording with the objects it needs, for decoding on
 * another machine: perf.data plus a perf-archive style build-id tree
 * (.build-id/xx/yyyy -> ../../<path>/<id>, holding elf or kallsyms), found
 * through the build-ids the recording carries. rbdecode reads such archives.
 */
#ifndef RB_PACK_H
#define RB_PACK_H

#include "util.h"

struct archive_stats { unsigned objects, missing; };

/*
 * Write @out (tar, .tar.gz, .tar.xz, .tar.zst, .tar.bz2 or .zip, by its
 * name) from the recording @data. Objects whose file is gone or whose
 * build-id no longer matches are counted in st->missing, not packed.
 * Returns 0 or -1 with @e naming the file and what failed.
 */
int archive__write(const char *data, const char *out, struct archive_stats *st, struct rec_err *e);

#endif
