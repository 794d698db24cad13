/*
 * tdat_write.h - trace-cmd's trace.dat file, version 6 (trace-cmd.dat.v6(5)),
 * the format trace-cmd report and KernelShark read: the tracing metadata
 * blob (tracing.h, version "6"), the CPU count, options, "flyrecord" and,
 * per CPU, an offset and size of its ring-buffer pages, page aligned.
 */
#ifndef REC_TDAT_WRITE_H
#define REC_TDAT_WRITE_H

#include <stdint.h>
#include "pd.h"
#include "util.h"

/* Option ids (trace-cmd.dat(5)). */
enum {
	TDAT_OPT_DONE = 0, TDAT_OPT_DATE = 1, TDAT_OPT_CPUSTAT = 2, TDAT_OPT_BUFFER = 3,
	TDAT_OPT_TRACECLOCK = 4, TDAT_OPT_UNAME = 5, TDAT_OPT_CPUCOUNT = 8, TDAT_OPT_VERSION = 9,
};

/* Append one option (u16 id, u32 size, data) to @b. */
void tracedat_option(struct pd_buf *b, uint16_t id, const void *data, uint32_t size);
/* An option holding a NUL-terminated string. */
void tracedat_option_str(struct pd_buf *b, uint16_t id, const char *s);

/*
 * Write @out (through OUT.tmp, renamed when complete): @meta (from
 * tracing_meta_build with version "6"), @nr_cpus, the @options (without the
 * closing DONE), then the pages of CPU i copied from @cpu_files[i] (NULL or
 * an empty file: no data). Each CPU's data starts page aligned. 0 or -1.
 */
int tracedat_write(const char *out, const struct pd_buf *meta, const struct pd_buf *options, uint32_t page_size,
		   int nr_cpus, const char *const *cpu_files, struct rec_err *e);

/* Write all @n bytes at @p to @fd, going on after short writes and EINTR: 0, or -1 with errno set (0: no progress). */
int tdat_write_all(int fd, const void *p, size_t n);

#endif
