/*
 * json.c - see json.h. One jansson array of gap objects, in the order the
 * session and the trace.dat reader report them.
 */
#include "config.h"
#include <jansson.h>
#include <stdlib.h>
#include "json.h"

struct rb_json_gaps {
	json_t *gaps;
};

struct rb_json_gaps *rb_json_gaps_new(void)
{
	struct rb_json_gaps *j = calloc(1, sizeof(*j));
	if (j && !(j->gaps = json_array())) {
		free(j);
		return NULL;
	}
	return j;
}

static int json_gap(void *ctx, const struct rb_gap_ev *g)
{
	struct rb_json_gaps *j = ctx;
	json_t *o = json_pack("{s:I, s:I, s:i, s:i, s:i, s:s, s:s, s:I, s:I, s:I, s:s}",
			      "time_start", (json_int_t)g->time_start, "time_end", (json_int_t)g->time_end,
			      "cpu", g->cpu, "pid", g->pid, "tid", g->tid, "source", g->source,
			      "reason", g->reason, "bytes_lost", (json_int_t)g->bytes_lost,
			      "records_lost", (json_int_t)g->records_lost,
			      "file_offset", (json_int_t)g->file_offset, "detail", g->detail ? g->detail : "");
	return o ? json_array_append_new(j->gaps, o) : -1;
}

void rb_json_gaps_sink(struct rb_json_gaps *j, struct rb_sink *sink)
{
	*sink = (struct rb_sink){ .ctx = j, .gap = json_gap };
}

void rb_json_gaps_ftrace_sink(struct rb_json_gaps *j, struct rb_ftrace_sink *sink)
{
	*sink = (struct rb_ftrace_sink){ .ctx = j, .gap = json_gap };
}

int rb_json_gaps_write(struct rb_json_gaps *j, FILE *out, const char *file, int partial)
{
	json_t *root = json_pack("{s:s, s:O, s:b}", "file", file, "gaps", j->gaps, "partial", partial);
	if (!root)
		return -1;
	int rc = json_dumpf(root, out, JSON_INDENT(2));
	json_decref(root);
	return rc < 0 || fputc('\n', out) == EOF ? -1 : 0;
}

void rb_json_gaps_free(struct rb_json_gaps *j)
{
	if (!j)
		return;
	json_decref(j->gaps);
	free(j);
}
