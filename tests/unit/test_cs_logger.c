/*
 * test_cs_logger.c - regression test for a use-after-free that
 * fuzz_cs_snapshot found in the CoreSight decoder (decoder/cs_etm/cs_decode.c).
 * For ETE, OpenCSD 1.3.3 prints packets through its process-wide message
 * logger, whose string callback object lives in the decode tree's C API data;
 * destroying the tree freed that object while the logger kept calling it, so
 * the next message any later tree logged (a decode error) jumped through
 * freed memory. After an ETE decode, a message sent to the logger must reach
 * no callback. This test compiles cs_decode.c itself to see its internals.
 * Run it under valgrind to see the invalid read the old code made.
 */
#include "decoder/cs_etm/cs_decode.c"
#include <stdlib.h>
#include "tap.h"

static unsigned lines, stray;

static void count_line(void *ctx, const char *text)
{
	(void)ctx, (void)text;
	lines++;
}

static void count_stray(void *ctx, const char *text)
{
	(void)ctx, (void)text;
	stray++;
}

int main(void)
{
	const char *fx = getenv("RB_FIXTURES");
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/opencsd-snapshots/ete/event_test", fx ? fx : "../shared/fixtures");
	struct rb_cs_snapshot *ss = NULL;
	struct rb_cs_error err;
	if (rb_cs_snapshot_read(dir, &ss, &err) != 0) {
		printf("1..0 # SKIP no ETE snapshot fixture at %s\n", dir);
		return 0;
	}
	int rc = rb_cs_decode_snapshot(ss, NULL, count_line, NULL, NULL, &err);
	ok(rc >= 0 && lines > 0, "an ETE snapshot decodes through the library's packet printer (%u lines)", lines);
	rb_cs_snapshot_free(ss);

	/* the tree is gone: a message logged now must not reach its callback object */
	struct rb_cs_dec *fake = calloc(1, sizeof(*fake));
	if (!fake)
		return 1;
	fake->out = count_stray;
	logger_owner = fake;           /* where the stale callback would deliver an Idx line */
	ocsd_def_errlog_msgout("Idx:0; ID:10; a message logged after the tree was destroyed");
	ok(stray == 0, "a message logged after the decode reaches no freed callback (%u delivered)", stray);
	logger_owner = NULL;
	free(fake);

	/* and a second ETE decode still gets its packet lines */
	if (rb_cs_snapshot_read(dir, &ss, &err) == 0) {
		unsigned first = lines;
		lines = 0;
		rc = rb_cs_decode_snapshot(ss, NULL, count_line, NULL, NULL, &err);
		ok(rc >= 0 && lines == first, "a second ETE decode in the same process prints the same %u lines", lines);
		rb_cs_snapshot_free(ss);
	}
	return done_testing();
}
