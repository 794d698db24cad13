/*
 * unwind.h - user call chains from a sample's registers and stack (perf
 * record --call-graph dwarf), unwound offline with elfutils' libdwfl and the
 * call frame information (.eh_frame, .debug_frame) of the binaries the
 * machine finds (--symdir, --symfs, the build-id cache, the recorded path).
 *
 * A part of the session stage: session.c asks for the user frames of each
 * sample that carries PERF_SAMPLE_REGS_USER and PERF_SAMPLE_STACK_USER and
 * puts them after the kernel's part of its call chain, as perf's
 * thread__resolve_callchain does. Without libdw (configure found none) there
 * is no unwinder and such samples keep the kernel's chain and their ip.
 */
#ifndef RB_UNWIND_H
#define RB_UNWIND_H

#include <stddef.h>
#include <stdint.h>
#include "perfdata/pd.h"

struct rb_machine;
struct rb_thread;
struct rb_unwind;

/*
 * An unwinder for recordings of @arch (the ARCH feature: x86_64, aarch64,
 * ppc64le, ppc64; NULL: the host's). NULL if none can be made: libdw is not
 * built in, the architecture is not one it knows, or memory ran out
 * (*@nomem set then).
 */
struct rb_unwind *rb_unwind_new(const char *arch, int *nomem);
void rb_unwind_free(struct rb_unwind *u);

/*
 * Up to @max user frames of sample @ps of thread @t, leaf first (the
 * registers' ip first): perf's addresses, a return address less one for
 * every frame but the first. Returns the count, 0 when nothing could be
 * unwound (no registers, an ABI or architecture not handled), or -ENOMEM.
 * The chain stops where the unwinder can go no further: a binary without a
 * file, no call frame information, or the stack copy ending; *@stop_why then
 * says why (static text), or is NULL when it reached the outermost frame.
 */
int rb_unwind_user(struct rb_unwind *u, struct rb_machine *m, struct rb_thread *t, const struct pd_sample *ps,
		   uint64_t *ips, size_t max, const char **stop_why);

/*
 * The functions inlined at @pc of a frame rb_unwind_user just returned, from
 * its binary's debug info (addr2line -i's answer, which perf's inline frames
 * come from): innermost first, the function they are inlined into last. Up
 * to @max names (owned by libdw, valid until the next rb_unwind_user), or 0
 * without debug info there.
 */
size_t rb_unwind_inlines(struct rb_unwind *u, uint64_t pc, const char **names, size_t max);

#endif
