/*
 * util.h - small helpers shared by the recorder's stages: an error carrier
 * (errno plus a sentence naming the fd, CPU or event involved), reading
 * short sysfs / procfs files, and CPU lists ("0-3,6").
 *
 * Workload: a few hundred small file reads at start-up and at the end of a
 * recording; nothing here runs while the rings are being drained.
 */
#ifndef REC_UTIL_H
#define REC_UTIL_H

#include <stddef.h>
#include <stdint.h>

struct rec_err {
	int err;             /* errno of the failure, 0 when none */
	char msg[512];       /* complete sentence for the CLI to print */
};

/* Fill @e (errno @err, printf-style message); returns -1 so callers can `return rec_fail(...)`. */
int rec_fail(struct rec_err *e, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Read up to @len-1 bytes of @path into @buf, NUL-terminated, trailing newline removed. 0 or -errno. */
int read_text(const char *path, char *buf, size_t len);
/* Read a whole (small) file into a malloc'ed, NUL-terminated buffer; NULL on failure. */
char *read_all(const char *path, size_t *len);

/* Parse "0-3,6" into a malloc'ed sorted array of CPU numbers. Count, or -1 if malformed. */
int cpu_list_parse(const char *s, int **out);
/* The online CPUs (/sys/devices/system/cpu/online). Count, or -1. */
int cpus_online(int **out);
/* Highest present CPU + 1 (perf's "nrcpus avail"). */
int cpus_avail(void);

/* The tracefs mount (/sys/kernel/tracing or the debugfs one); NULL if none. */
const char *tracefs_dir(void);

#endif
