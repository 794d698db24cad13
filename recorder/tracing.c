/*
 * tracing.c - the TRACING_DATA feature: the tracefs format descriptions a
 * reader needs to decode the raw data of tracepoint samples, in the layout
 * perf's trace-event-info.c writes (version "0.6"):
 *   "\027\010\104tracing" "0.6\0" endian(u8) sizeof(long)(u8) page_size(u32)
 *   "header_page\0" u64 size, bytes;  "header_event\0" u64 size, bytes
 *   ftrace formats: u32 count (0: none recorded)
 *   event systems: u32 count; per system: name\0, u32 count, per event u64 size + format
 *   kallsyms: u32 size (0), printk formats: u32 size (0), saved cmdlines: u64 size (0)
 * Only the recorded tracepoints' formats are included, as perf does.
 *
 * trace-cmd's trace.dat (version 6) opens with the same blob, version "6",
 * and fills the parts perf leaves empty (ftrace formats, kallsyms, printk
 * formats, saved cmdlines): tracing_meta_build serves both (tracedat.c).
 *
 * Workload: once per recording that has tracepoints. Never prints.
 */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tracing.h"

static int add_file(struct pd_buf *b, const char *path, struct rec_err *e)
{
	size_t n;
	char *data = read_all(path, &n);

	if (!data)
		return rec_fail(e, errno ? errno : EIO, "cannot read %s: %s", path, strerror(errno ? errno : EIO));
	pd_buf_u64(b, n);
	pd_buf_bytes(b, data, n);
	free(data);
	return 0;
}

/* Split "sys:name[:mods]" into @sys and @name. */
static int split_tp(const char *tp, char *sys, size_t sl, char *name, size_t nl)
{
	const char *c = strchr(tp, ':');
	if (!c || (size_t)(c - tp) >= sl)
		return -1;
	memcpy(sys, tp, (size_t)(c - tp));
	sys[c - tp] = 0;
	size_t k = strcspn(c + 1, ":");
	if (k >= nl)
		return -1;
	memcpy(name, c + 1, k);
	name[k] = 0;
	return 0;
}

/* A file's size (u32 or u64 as @wide says) and bytes; an absent file counts as empty. */
static int add_sized(struct pd_buf *b, const char *path, int wide, struct rec_err *e)
{
	size_t n = 0;
	char *data = read_all(path, &n);

	if (!data && errno != ENOENT)
		return rec_fail(e, errno ? errno : EIO, "cannot read %s: %s", path, strerror(errno ? errno : EIO));
	if (n > UINT32_MAX && !wide)
		n = 0;   /* cannot be described in 32 bits: left out */
	if (wide)
		pd_buf_u64(b, n);
	else
		pd_buf_u32(b, (uint32_t)n);
	pd_buf_bytes(b, data, n);
	free(data);
	return 0;
}

int tracing_data_build(struct pd_buf *b, const char *const *tps, size_t n, struct rec_err *e)
{
	struct tracing_meta m = { .version = "0.6", .page_size = (uint32_t)sysconf(_SC_PAGESIZE) };
	return tracing_meta_build(b, tps, n, &m, e);
}

int tracing_meta_build(struct pd_buf *b, const char *const *tps, size_t n, const struct tracing_meta *tm,
		       struct rec_err *e)
{
	static const char magic[] = { 23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	const char *tfs = tracefs_dir();
	char path[512], sys[256], name[256];
	uint8_t u8;

	if (!tfs)
		return rec_fail(e, ENOENT, "tracepoints recorded but no tracefs is mounted (/sys/kernel/tracing)");
	pd_buf_bytes(b, magic, sizeof(magic));
	pd_buf_bytes(b, tm->version, strlen(tm->version) + 1);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	u8 = 1;
#else
	u8 = 0;
#endif
	pd_buf_bytes(b, &u8, 1);
	u8 = (uint8_t)sizeof(long);
	pd_buf_bytes(b, &u8, 1);
	pd_buf_u32(b, tm->page_size);
	pd_buf_bytes(b, "header_page", 12);
	snprintf(path, sizeof(path), "%s/events/header_page", tfs);
	if (add_file(b, path, e) < 0)
		return -1;
	pd_buf_bytes(b, "header_event", 13);
	snprintf(path, sizeof(path), "%s/events/header_event", tfs);
	if (add_file(b, path, e) < 0)
		return -1;
	pd_buf_u32(b, (uint32_t)tm->nr_ftrace);   /* formats of the ftrace tracers' own events */
	for (size_t i = 0; i < tm->nr_ftrace; i++) {
		snprintf(path, sizeof(path), "%s/events/ftrace/%s/format", tfs, tm->ftrace[i]);
		if (add_file(b, path, e) < 0)
			return -1;
	}

	/* systems in first-seen order, each with its events */
	char (*systems)[256] = calloc(n ? n : 1, 256);
	uint32_t nsys = 0;
	if (!systems)
		return rec_fail(e, ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		if (split_tp(tps[i], sys, sizeof(sys), name, sizeof(name)) < 0)
			continue;
		uint32_t k;
		for (k = 0; k < nsys && strcmp(systems[k], sys); k++)
			;
		if (k == nsys)
			snprintf(systems[nsys++], 256, "%s", sys);
	}
	pd_buf_u32(b, nsys);
	int rc = 0;
	for (uint32_t k = 0; k < nsys && !rc; k++) {
		pd_buf_bytes(b, systems[k], strlen(systems[k]) + 1);
		/* unique events of this system */
		char (*seen)[256] = calloc(n, 256);
		uint32_t ne = 0;
		if (!seen) {
			rc = rec_fail(e, ENOMEM, "out of memory");
			break;
		}
		for (size_t i = 0; i < n; i++) {
			if (split_tp(tps[i], sys, sizeof(sys), name, sizeof(name)) < 0 || strcmp(sys, systems[k]))
				continue;
			uint32_t m;
			for (m = 0; m < ne && strcmp(seen[m], name); m++)
				;
			if (m == ne)
				snprintf(seen[ne++], 256, "%s", name);
		}
		pd_buf_u32(b, ne);
		for (uint32_t m = 0; m < ne && !rc; m++) {
			snprintf(path, sizeof(path), "%s/events/%s/%s/format", tfs, systems[k], seen[m]);
			rc = add_file(b, path, e);
		}
		free(seen);
	}
	free(systems);
	if (rc)
		return -1;
	/* perf leaves these empty: it resolves kernel symbols from MMAP records, comms from COMM records */
	if (tm->kallsyms ? add_sized(b, "/proc/kallsyms", 0, e) < 0 : (pd_buf_u32(b, 0), 0))
		return -1;
	snprintf(path, sizeof(path), "%s/printk_formats", tfs);
	if (tm->printk ? add_sized(b, path, 0, e) < 0 : (pd_buf_u32(b, 0), 0))
		return -1;
	snprintf(path, sizeof(path), "%s/saved_cmdlines", tfs);
	if (tm->cmdlines ? add_sized(b, path, 1, e) < 0 : (pd_buf_u64(b, 0), 0))
		return -1;
	return b->oom ? rec_fail(e, ENOMEM, "out of memory") : 0;
}
