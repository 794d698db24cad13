/*
 * json.h - the JSON outputs as a sink (store stage): the gaps table of a
 * recording (rbdecode gaps --json) as one document, {file, gaps: [...],
 * partial}, with the fields of the SQLite gaps table. Gathered in memory
 * (a recording's gaps are few) and written at the end, when whether the
 * reading was partial is known.
 *
 * Use: rb_json_gaps_new, rb_json_gaps_sink (and rb_json_gaps_ftrace_sink
 * for a trace.dat's gaps), the session run, rb_json_gaps_write,
 * rb_json_gaps_free. All calls from one thread.
 */
#ifndef RB_STORE_JSON_H
#define RB_STORE_JSON_H

#include <stdio.h>
#include "decoder/session/session.h"
#include "decoder/ftrace/tracedat.h"

struct rb_json_gaps;

/* NULL when out of memory. */
struct rb_json_gaps *rb_json_gaps_new(void);

/* Fills @sink with this output's callbacks (ctx = @j); a callback returns -1 when memory ran out. */
void rb_json_gaps_sink(struct rb_json_gaps *j, struct rb_sink *sink);
void rb_json_gaps_ftrace_sink(struct rb_json_gaps *j, struct rb_ftrace_sink *sink);

/* Writes the document for recording @file to @out, indented, with a newline. 0, or -1 if writing failed. */
int rb_json_gaps_write(struct rb_json_gaps *j, FILE *out, const char *file, int partial);

/* NULL is allowed. */
void rb_json_gaps_free(struct rb_json_gaps *j);

#endif
