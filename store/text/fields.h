/*
 * fields.h - which fields `rbdecode script` prints for each event, by perf
 * script's rules (perf 6.1, builtin-script.c): a set of fields per output
 * type (hardware, software, tracepoint, hardware cache, raw, breakpoint,
 * synthesized, other), perf's defaults, its -F syntax ("f1,f2", "+f",
 * "-f", "TYPE:f1,f2", "flags"), and the check against the recording's
 * events that drops a default field the samples do not carry and refuses
 * one asked for. Part of store/text (no output of its own but messages).
 */
#ifndef RB_STORE_TEXT_FIELDS_H
#define RB_STORE_TEXT_FIELDS_H

#include <stdint.h>
#include <stdio.h>
#include "decoder/session/session.h"

/* perf's output types: PERF_TYPE_HARDWARE .. PERF_TYPE_BREAKPOINT, then synthesized and other events */
enum { RB_OT_HW, RB_OT_SW, RB_OT_TRACE, RB_OT_CACHE, RB_OT_RAW, RB_OT_BREAK, RB_OT_SYNTH, RB_OT_OTHER, RB_OT_MAX };

/* perf's output fields (enum perf_output_field: the same bits) */
enum {
	RB_F_COMM = 1 << 0, RB_F_TID = 1 << 1, RB_F_PID = 1 << 2, RB_F_TIME = 1 << 3, RB_F_CPU = 1 << 4,
	RB_F_EVNAME = 1 << 5, RB_F_TRACE = 1 << 6, RB_F_IP = 1 << 7, RB_F_SYM = 1 << 8, RB_F_DSO = 1 << 9,
	RB_F_ADDR = 1 << 10, RB_F_SYMOFFSET = 1 << 11, RB_F_SRCLINE = 1 << 12, RB_F_PERIOD = 1 << 13,
	RB_F_IREGS = 1 << 14, RB_F_BRSTACK = 1 << 15, RB_F_BRSTACKSYM = 1 << 16, RB_F_DATA_SRC = 1 << 17,
	RB_F_WEIGHT = 1 << 18, RB_F_BPF_OUTPUT = 1 << 19, RB_F_CALLINDENT = 1 << 20, RB_F_INSN = 1 << 21,
	RB_F_INSNLEN = 1 << 22, RB_F_BRSTACKINSN = 1 << 23, RB_F_BRSTACKOFF = 1 << 24, RB_F_SYNTH = 1 << 25,
	RB_F_PHYS_ADDR = 1 << 26, RB_F_UREGS = 1 << 27, RB_F_METRIC = 1 << 28, RB_F_MISC = 1 << 29,
	RB_F_SRCCODE = 1 << 30,
};
#define RB_F_IPC (1ULL << 31)
#define RB_F_TOD (1ULL << 32)
#define RB_F_DATA_PAGE_SIZE (1ULL << 33)
#define RB_F_CODE_PAGE_SIZE (1ULL << 34)
#define RB_F_INS_LAT (1ULL << 35)
#define RB_F_BRSTACKINSNLEN (1ULL << 36)
#define RB_F_MACHINE_PID (1ULL << 37)
#define RB_F_VCPU (1ULL << 38)

/* The fields this program prints; perf's others are refused when asked for. */
#define RB_F_PRINTABLE ((uint64_t)(RB_F_COMM | RB_F_TID | RB_F_PID | RB_F_TIME | RB_F_CPU | RB_F_EVNAME | \
			RB_F_IP | RB_F_SYM | RB_F_DSO | RB_F_ADDR | RB_F_SYMOFFSET | RB_F_PERIOD | RB_F_SYNTH))

struct rb_fields {
	struct {
		int user_set, wildcard_set;
		uint64_t fields, invalid, user_set_fields, user_unset_fields;
	} out[RB_OT_MAX];
	int print_flags;              /* the "flags" field (not per type in perf either) */
	uint64_t asked;               /* every field some -F named (not to remove it) */
	int no_callchain;             /* call chains hidden (-G): tracepoints then do not show where they were hit */
};

/* perf's defaults. */
void rb_fields_init(struct rb_fields *f);

/*
 * One -F argument, as perf script takes it (several may be given; each
 * applies to what the ones before left). Warnings ("'trace' not valid for
 * hardware events. Ignoring.") go to @err as perf writes them; on a bad
 * argument the message perf gives ("Invalid field requested.") is written
 * to @err and -1 returned.
 */
int rb_fields_parse(struct rb_fields *f, const char *arg, FILE *err);

/* The output type of an event (perf's output_type of its attr.type). */
int rb_fields_type(const struct rb_event_desc *d);

/*
 * The check perf script makes once the events are known, for the first
 * event of each output type (dummy events aside): default fields its
 * samples do not carry are dropped; a field asked for that they do not
 * carry, or an inconsistent selection, is refused with perf's message in
 * @msg (-1). A field this program cannot print is refused when -F named
 * it; one perf shows by default is left out, named in @msg with 1
 * returned. 0 when all is well.
 */
int rb_fields_check(struct rb_fields *f, const struct rb_evlist *el, char *msg, size_t n);

/* perf's text for a branch's flags (perf_sample__sprintf_flags), e.g. "jcc" padded, "tr strt call". */
void rb_fields_flags_name(uint32_t flags, char *buf, size_t n);

#endif
