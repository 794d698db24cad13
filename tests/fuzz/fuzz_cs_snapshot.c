/*
 * fuzz_cs_snapshot.c - libFuzzer target for the CoreSight snapshot reader
 * (decoder/cs_etm/cs_snapshot.c) and the OpenCSD decode behind it
 * (decoder/cs_etm/cs_decode.c). A snapshot is a folder, so an input is a bundle of
 * files in text form:
 *
 *   byte 0         decode options: bit 0 packets only, 1 no raw bytes,
 *                  2 src_addr_n, 3 multi-session, 4 DSTREAM framing
 *   "@@ NAME\n"    starts a file; its bytes run to the "\n" before the next
 *                  "@@ " line (or to the end of the input)
 *
 * NAME is a relative path without ".." (others are dropped). seeds.sh turns
 * real snapshot folders into such bundles. The bundle is written to a fresh
 * folder of the scratch area, read, decoded, and removed.
 */
#include "config.h"
#include "decoder/cs_etm/cs_decode.h"
#include "fuzz.h"

static volatile size_t sink;

static void on_text(void *ctx, const char *text)
{
	(void)ctx;
	sink += strlen(text);
}

static int name_ok(const char *name, size_t len)
{
	if (!len || len > 200 || name[0] == '/')
		return 0;
	for (size_t i = 0; i < len; i++) {
		char c = name[i];
		if (!(c == '/' || c == '.' || c == '_' || c == '-' || (c >= '0' && c <= '9') ||
		      (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
			return 0;
		if (c == '.' && i + 1 < len && name[i + 1] == '.')
			return 0;
	}
	return 1;
}

/* Write @name (creating its folders) under @dir. */
static void put_file(const char *dir, const char *name, size_t len, const uint8_t *data, size_t size)
{
	char path[512];
	int n = snprintf(path, sizeof(path), "%s/%.*s", dir, (int)len, name);
	if (n < 0 || (size_t)n >= sizeof(path))
		return;
	for (char *p = path + strlen(dir) + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(path, 0700);
			*p = '/';
		}
	fuzz_write_file(path, data, size);
}

/* The next "\n@@ " at or after @p, or @end. */
static const uint8_t *find_marker(const uint8_t *p, const uint8_t *end)
{
	for (; p + 4 <= end; p++)
		if (p[0] == '\n' && !memcmp(p + 1, "@@ ", 3))
			return p;
	return end;
}

static void unbundle(const char *dir, const uint8_t *start, size_t size)
{
	const uint8_t *end = start + size;
	if (size < 3 || memcmp(start, "@@ ", 3))
		return;
	const uint8_t *p = start - 1;        /* as if a "\n" came before the first marker */
	while (p < end) {
		const uint8_t *name = p + 4, *nl = memchr(name, '\n', (size_t)(end - name));
		if (!nl)
			return;
		const uint8_t *next = find_marker(nl, end);   /* == nl: an empty file, the next follows */
		const uint8_t *body = next == nl ? nl : nl + 1;
		if (name_ok((const char *)name, (size_t)(nl - name)))
			put_file(dir, (const char *)name, (size_t)(nl - name), body, (size_t)(next - body));
		p = next;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	char dir[512];
	snprintf(dir, sizeof(dir), "%s/snapshot", fuzz_scratch());
	fuzz_rmtree(dir);
	if (mkdir(dir, 0700) < 0)
		return 0;
	unbundle(dir, data + 1, size - 1);
	struct rb_cs_snapshot *ss = NULL;
	struct rb_cs_error err;
	if (rb_cs_snapshot_read(dir, &ss, &err) == 0) {
		struct rb_cs_decode_opts o = {
			.packets_only = data[0] & 1, .no_raw = !!(data[0] & 2), .src_addr_n = !!(data[0] & 4),
			.multi_session = !!(data[0] & 8), .dstream = !!(data[0] & 16),
		};
		for (size_t i = 0; i < ss->nr_devices; i++) {
			(void)rb_cs_snapshot_core_of(ss, ss->devices[i].name);
			(void)rb_cs_device_reg(&ss->devices[i], "TRCCONFIGR");
		}
		for (size_t i = 0; i < ss->nr_buffers; i++) {
			const char **names;
			int n = rb_cs_snapshot_sources_of(ss, ss->buffers[i].name, &names);
			if (n >= 0)
				free(names);
		}
		rb_cs_decode_snapshot(ss, &o, on_text, on_text, NULL, &err);
		rb_cs_snapshot_free(ss);
	}
	fuzz_rmtree(dir);
	return 0;
}
