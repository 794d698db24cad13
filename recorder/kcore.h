/*
 * kcore.h - perf record --kcore's output: a perf.data folder (OUTPUT/data)
 * with OUTPUT/kcore_dir holding kallsyms, modules and the code segments of
 * /proc/kcore, laid out as perf's kcore_copy writes them, so that a decoder
 * finds the kernel and module code that ran during the recording.
 *
 * Workload: once per recording, before the events are opened (the kernel
 * text and the modules' code: a few MB to a few tens of MB copied).
 */
#ifndef REC_KCORE_H
#define REC_KCORE_H

#include <stddef.h>
#include "util.h"

/*
 * Make @dir the perf.data folder of a recording: created (0700, as perf
 * does), or an older one emptied of data, data.N and kcore_dir; a file of
 * that name is replaced. 0 or -1 with @e naming the path.
 */
int perf_dir_prepare(const char *dir, struct rec_err *e);

/*
 * Copy kallsyms, modules and the executable parts of kcore from @from
 * (/proc, or $RBRECORD_KCORE_FROM) into @to (created): the kernel map
 * (_stext to _etext, pages rounded), the modules' map (lowest module to the
 * page after the highest module symbol) and the PTI entry trampoline's
 * page, one PT_LOAD each, data packed after the headers. Fails if kallsyms
 * changed during the copy (a module came or went). 0 or -1 with @e.
 */
int kcore_copy(const char *from, const char *to, struct rec_err *e);

#endif
