/*
 * folded.h - folded stacks as a sink (store stage): the input of
 * FlameGraph's flamegraph.pl and of speedscope, one line per distinct
 * stack, `comm;outermost;...;leaf weight`, function names without offsets
 * ("[unknown]" where no symbol is known, ';' in a name written ':', spaces
 * in the comm '_'), lines sorted. Two sources of stacks:
 *  - recorded samples: the call chain (root first), weight the number of
 *    samples, as perf's stackcollapse.py prints it (a sample without a call
 *    chain is its comm alone, as there);
 *  - hardware trace: the calls decoder/calls builds from the branches, each
 *    call path weighed by its self time in nanoseconds (the time its calls
 *    took less that of the calls they made), so the widths are time; a
 *    trace without timing (every call of no duration) weighs self branches
 *    (the branches its calls executed less those of the calls they made).
 * A recording with trace gives the trace's stacks; one without, its samples'.
 * Symbol-less code is named as perf's exporter names it (the session's
 * perf_export), so the trace's calls are the database's calls table's.
 *
 * Use: rb_folded_new, rb_folded_sink, the session run, rb_folded_write,
 * rb_folded_free. All calls from one thread.
 */
#ifndef RB_STORE_FOLDED_H
#define RB_STORE_FOLDED_H

#include <stdio.h>
#include "decoder/session/session.h"

struct rb_folded;

/* NULL when out of memory. */
struct rb_folded *rb_folded_new(void);

/*
 * Fills @sink with this output's callbacks (ctx = @f). A callback returns
 * 1 when memory ran out (a positive stop code: a negative one would read
 * as the session's own pd status). The lines are made at the sink's end, while the
 * session's objects (names) are alive.
 */
void rb_folded_sink(struct rb_folded *f, struct rb_sink *sink);

/* Whether the stacks came from hardware trace (weights in ns) rather than samples. */
int rb_folded_from_trace(const struct rb_folded *f);
/* Whether trace stacks weigh nanoseconds (else branches: the trace has no timing). */
int rb_folded_weighs_time(const struct rb_folded *f);
/* How many lines there are. */
size_t rb_folded_lines(const struct rb_folded *f);

/* Writes the lines to @out. 0, or -1 if writing failed. */
int rb_folded_write(struct rb_folded *f, FILE *out);

/* NULL is allowed. */
void rb_folded_free(struct rb_folded *f);

#endif
