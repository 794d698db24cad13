/*
 * fields.c - perf script's output fields (see fields.h): the defaults per
 * output type, -F as perf parses it, and the check against the events of
 * the recording, with perf's messages word for word (they are what a user
 * of perf searches for).
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "store/text/fields.h"

static const struct { const char *name; uint64_t field; } names[] = {
	{ "comm", RB_F_COMM }, { "tid", RB_F_TID }, { "pid", RB_F_PID }, { "time", RB_F_TIME },
	{ "cpu", RB_F_CPU }, { "event", RB_F_EVNAME }, { "trace", RB_F_TRACE }, { "ip", RB_F_IP },
	{ "sym", RB_F_SYM }, { "dso", RB_F_DSO }, { "addr", RB_F_ADDR }, { "symoff", RB_F_SYMOFFSET },
	{ "srcline", RB_F_SRCLINE }, { "period", RB_F_PERIOD }, { "iregs", RB_F_IREGS },
	{ "uregs", RB_F_UREGS }, { "brstack", RB_F_BRSTACK }, { "brstacksym", RB_F_BRSTACKSYM },
	{ "data_src", RB_F_DATA_SRC }, { "weight", RB_F_WEIGHT }, { "bpf-output", RB_F_BPF_OUTPUT },
	{ "callindent", RB_F_CALLINDENT }, { "insn", RB_F_INSN }, { "insnlen", RB_F_INSNLEN },
	{ "brstackinsn", RB_F_BRSTACKINSN }, { "brstackoff", RB_F_BRSTACKOFF }, { "synth", RB_F_SYNTH },
	{ "phys_addr", RB_F_PHYS_ADDR }, { "metric", RB_F_METRIC }, { "misc", RB_F_MISC },
	{ "srccode", RB_F_SRCCODE }, { "ipc", RB_F_IPC }, { "tod", RB_F_TOD },
	{ "data_page_size", RB_F_DATA_PAGE_SIZE }, { "code_page_size", RB_F_CODE_PAGE_SIZE },
	{ "ins_lat", RB_F_INS_LAT }, { "brstackinsnlen", RB_F_BRSTACKINSNLEN },
	{ "machine_pid", RB_F_MACHINE_PID }, { "vcpu", RB_F_VCPU },
};
#define NR_NAMES (sizeof(names) / sizeof(names[0]))

/* perf's name of a field ("" for none, or for a combination: perf's output_field2str) */
static const char *field_name(uint64_t field)
{
	for (size_t i = 0; i < NR_NAMES; i++)
		if (names[i].field == field)
			return names[i].name;
	return "";
}

/* perf's event_type(): the name of an output type in messages */
static const char *type_name(int ot)
{
	static const char *const n[] = { "hardware", "software", "tracepoint", "hardware-cache" };
	return ot >= 0 && ot < 4 ? n[ot] : "unknown";
}

void rb_fields_init(struct rb_fields *f)
{
	memset(f, 0, sizeof(*f));
	const uint64_t base = RB_F_COMM | RB_F_TID | RB_F_CPU | RB_F_TIME | RB_F_EVNAME;
	const uint64_t sample = base | RB_F_IP | RB_F_SYM | RB_F_SYMOFFSET | RB_F_DSO | RB_F_PERIOD;
	for (int t = 0; t < RB_OT_MAX; t++) {
		f->out[t].fields = sample;
		f->out[t].invalid = RB_F_TRACE | RB_F_BPF_OUTPUT;
	}
	f->out[RB_OT_SW].fields |= RB_F_BPF_OUTPUT;
	f->out[RB_OT_SW].invalid = RB_F_TRACE;
	f->out[RB_OT_TRACE].fields = base | RB_F_TRACE;
	f->out[RB_OT_TRACE].invalid = 0;
	f->out[RB_OT_RAW].fields |= RB_F_ADDR | RB_F_DATA_SRC | RB_F_WEIGHT | RB_F_PHYS_ADDR | RB_F_DATA_PAGE_SIZE |
				    RB_F_CODE_PAGE_SIZE | RB_F_INS_LAT;
	f->out[RB_OT_SYNTH].fields = (sample & ~(uint64_t)RB_F_PERIOD) | RB_F_SYNTH;
}

static int set_by_user(const struct rb_fields *f)
{
	for (int t = 0; t < RB_OT_MAX; t++)
		if (f->out[t].user_set)
			return 1;
	return 0;
}

int rb_fields_parse(struct rb_fields *f, const char *arg, FILE *err)
{
	static const char *const types[RB_OT_MAX] = { "hw", "sw", "trace", NULL, "raw", "break", "synth", NULL };
	char *str = strdup(arg), *save = NULL;
	if (!str) {
		fprintf(err, "out of memory\n");
		return -1;
	}
	int type = -1, rc = 0;
	enum { DEFAULT, SET, ADD, REMOVE } change = DEFAULT;
	char *tok = strchr(str, ':');
	if (tok) {
		*tok++ = 0;
		for (int t = 0; t < RB_OT_MAX && type < 0; t++)
			if (types[t] && !strcmp(str, types[t]))
				type = t;
		if (type < 0) {
			fprintf(err, "Invalid event type in field string.\n");
			rc = -1;
			goto out;
		}
		if (f->out[type].user_set)
			fprintf(err, "Overriding previous field request for %s events.\n", type_name(type));
		if (!strchr(tok, '+') && !strchr(tok, '-')) {      /* a list, not changes to the defaults */
			f->out[type].fields = 0;
			f->out[type].user_set = 1;
			f->out[type].wildcard_set = 0;
		}
	} else {
		tok = str;
		if (!*str) {
			fprintf(err, "Cannot set fields to 'none' for all event types.\n");
			rc = -1;
			goto out;
		}
		if (!strchr(str, '+') && !strchr(str, '-')) {
			if (set_by_user(f))
				fprintf(err, "Overriding previous field request for all events.\n");
			for (int t = 0; t < RB_OT_MAX; t++) {
				f->out[t].fields = 0;
				f->out[t].user_set = 1;
				f->out[t].wildcard_set = 1;
			}
		}
	}
	for (tok = strtok_r(tok, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (*tok == '+' || *tok == '-') {
			if (change == SET)
				goto badmix;
			change = *tok++ == '+' ? ADD : REMOVE;
		} else {
			if (change != SET && change != DEFAULT)
				goto badmix;
			change = SET;
		}
		size_t i = 0;
		while (i < NR_NAMES && strcmp(tok, names[i].name))
			i++;
		if (i == NR_NAMES && !strcmp(tok, "flags")) {
			f->print_flags = change != REMOVE;
			continue;
		}
		if (i == NR_NAMES) {
			fprintf(err, "Invalid field requested.\n");
			rc = -1;
			goto out;
		}
		uint64_t fl = names[i].field;
		if (change != REMOVE)
			f->asked |= fl;
		if (type == -1) {          /* every type for which it is valid */
			for (int t = 0; t < RB_OT_MAX; t++) {
				if (f->out[t].invalid & fl) {
					fprintf(err, "'%s' not valid for %s events. Ignoring.\n", names[i].name, type_name(t));
					continue;
				}
				if (change == REMOVE) {
					f->out[t].fields &= ~fl;
					f->out[t].user_set_fields &= ~fl;
					f->out[t].user_unset_fields |= fl;
				} else {
					f->out[t].fields |= fl;
					f->out[t].user_set_fields |= fl;
					f->out[t].user_unset_fields &= ~fl;
				}
				f->out[t].user_set = 1;
				f->out[t].wildcard_set = 1;
			}
		} else {
			if (f->out[type].invalid & fl) {
				fprintf(err, "'%s' not valid for %s events.\n", names[i].name, type_name(type));
				rc = -1;
				goto out;
			}
			if (change == REMOVE)
				f->out[type].fields &= ~fl;
			else
				f->out[type].fields |= fl;
			f->out[type].user_set = 1;
			f->out[type].wildcard_set = 1;
		}
	}
	goto out;
badmix:
	fprintf(err, "Cannot mix +-field with overridden fields\n");
	rc = -1;
out:
	free(str);
	return rc;
}

int rb_fields_type(const struct rb_event_desc *d)
{
	if (d->type == RB_TYPE_SYNTH)
		return RB_OT_SYNTH;
	return d->type < RB_TYPE_SYNTH ? (int)d->type : RB_OT_OTHER;
}

static int is_dummy(const struct rb_event_desc *d)
{
	return d->type == PD_TYPE_SOFTWARE && d->config == 9;
}

/*
 * perf's evsel__do_check_stype: a field whose sample bits @bits the event
 * lacks is dropped from the defaults, or refused when asked for (unless
 * @allow: a trace recording, whose synthesized samples may have it).
 */
static int check_stype(struct rb_fields *f, int ot, const struct rb_event_desc *d, uint64_t bits, const char *what,
		       uint64_t field, int allow, char *msg, size_t n)
{
	if (d->sample_type & bits)
		return 0;
	if (f->out[ot].user_set_fields & field) {
		if (allow)
			return 0;
		snprintf(msg, n, "Samples for '%s' event do not have %s attribute set. Cannot print '%s' field.",
			 d->name ? d->name : "", what, field_name(field));
		return -1;
	}
	f->out[ot].fields &= ~field;
	return 0;
}

/* perf's evsel__check_attr, for the first event @d of output type @ot */
static int check_attr(struct rb_fields *f, int ot, const struct rb_event_desc *d, const struct rb_evlist *el,
		      char *msg, size_t n)
{
	int allow = el->auxtrace;
	uint64_t st = d->sample_type, *fl = &f->out[ot].fields;
	if (el->stat)
		return 0;
	if (*fl & RB_F_TRACE) {
		int has = 0;
		for (size_t i = 0; i < el->n; i++)
			has |= el->ev[i].type == PD_TYPE_TRACEPOINT;
		if (!has) {
			snprintf(msg, n, "No trace sample to read. Did you call 'perf record -R'?");
			return -1;
		}
	}
	if (((*fl & RB_F_IP) && check_stype(f, ot, d, PD_SAMPLE_IP, "IP", RB_F_IP, 0, msg, n)) ||
	    ((*fl & RB_F_ADDR) && check_stype(f, ot, d, PD_SAMPLE_ADDR, "ADDR", RB_F_ADDR, allow, msg, n)) ||
	    ((*fl & RB_F_DATA_SRC) && check_stype(f, ot, d, PD_SAMPLE_DATA_SRC, "DATA_SRC", RB_F_DATA_SRC, allow, msg, n)) ||
	    ((*fl & RB_F_WEIGHT) && check_stype(f, ot, d, PD_SAMPLE_WEIGHT | PD_SAMPLE_WEIGHT_STRUCT, "WEIGHT",
						RB_F_WEIGHT, allow, msg, n)))
		return -1;
	if ((*fl & RB_F_SYM) && !(st & (PD_SAMPLE_IP | PD_SAMPLE_ADDR))) {
		snprintf(msg, n, "Display of symbols requested but neither sample IP nor sample address\n"
			 "available. Hence, no addresses to convert to symbols.");
		return -1;
	}
	if ((*fl & RB_F_SYMOFFSET) && !(*fl & RB_F_SYM)) {
		snprintf(msg, n, "Display of offsets requested but symbol is notselected.");
		return -1;
	}
	if ((*fl & RB_F_DSO) && !(st & (PD_SAMPLE_IP | PD_SAMPLE_ADDR))) {
		snprintf(msg, n, "Display of DSO requested but no address to convert.");
		return -1;
	}
	if ((*fl & (RB_F_SRCLINE | RB_F_SRCCODE)) && !(*fl & RB_F_IP)) {
		snprintf(msg, n, "Display of source line number requested but sample IP is not\n"
			 "selected. Hence, no address to lookup the source line number.");
		return -1;
	}
	if (((*fl & (RB_F_PID | RB_F_TID)) &&
	     check_stype(f, ot, d, PD_SAMPLE_TID, "TID", RB_F_TID | RB_F_PID, 0, msg, n)) ||
	    ((*fl & RB_F_TIME) && check_stype(f, ot, d, PD_SAMPLE_TIME, "TIME", RB_F_TIME, 0, msg, n)) ||
	    ((*fl & RB_F_CPU) && check_stype(f, ot, d, PD_SAMPLE_CPU, "CPU", RB_F_CPU, allow, msg, n)) ||
	    ((*fl & RB_F_IREGS) && check_stype(f, ot, d, PD_SAMPLE_REGS_INTR, "IREGS", RB_F_IREGS, allow, msg, n)) ||
	    ((*fl & RB_F_UREGS) && check_stype(f, ot, d, PD_SAMPLE_REGS_USER, "UREGS", RB_F_UREGS, 0, msg, n)) ||
	    ((*fl & RB_F_PHYS_ADDR) &&
	     check_stype(f, ot, d, PD_SAMPLE_PHYS_ADDR, "PHYS_ADDR", RB_F_PHYS_ADDR, allow, msg, n)) ||
	    ((*fl & RB_F_DATA_PAGE_SIZE) && check_stype(f, ot, d, PD_SAMPLE_DATA_PAGE_SIZE, "DATA_PAGE_SIZE",
							RB_F_DATA_PAGE_SIZE, 0, msg, n)) ||
	    ((*fl & RB_F_CODE_PAGE_SIZE) && check_stype(f, ot, d, PD_SAMPLE_CODE_PAGE_SIZE, "CODE_PAGE_SIZE",
							RB_F_CODE_PAGE_SIZE, 0, msg, n)) ||
	    ((*fl & RB_F_INS_LAT) &&
	     check_stype(f, ot, d, PD_SAMPLE_WEIGHT_STRUCT, "WEIGHT_STRUCT", RB_F_INS_LAT, 0, msg, n)))
		return -1;
	return 0;
}

int rb_fields_check(struct rb_fields *f, const struct rb_evlist *el, char *msg, size_t n)
{
	msg[0] = 0;
	int seen[RB_OT_MAX] = { 0 };
	for (int t = 0; t < RB_OT_MAX; t++) {
		const struct rb_event_desc *d = NULL;
		for (size_t i = 0; i < el->n && !d; i++)
			if (!is_dummy(&el->ev[i]) && rb_fields_type(&el->ev[i]) == t)
				d = &el->ev[i];
		if (!d && f->out[t].user_set && !f->out[t].wildcard_set && t != RB_OT_SYNTH) {
			snprintf(msg, n, "%s events do not exist. Remove corresponding -F option to proceed.",
				 type_name(t));
			return -1;
		}
		if (d && f->out[t].fields && check_attr(f, t, d, el, msg, n))
			return -1;
		seen[t] = d != NULL;
	}
	/* tracepoints show where they were hit when the recording has call chains */
	int chains = 0;
	for (size_t i = 0; !f->no_callchain && i < el->n; i++)
		chains |= !!(el->ev[i].sample_type & PD_SAMPLE_CALLCHAIN);
	for (size_t i = 0; chains && !f->out[RB_OT_TRACE].user_set && i < el->n; i++)
		if (el->ev[i].type == PD_TYPE_TRACEPOINT && (el->ev[i].sample_type & PD_SAMPLE_CALLCHAIN)) {
			f->out[RB_OT_TRACE].fields |= RB_F_IP | RB_F_SYM | RB_F_SYMOFFSET | RB_F_DSO;
			break;
		}
	/* what perf would print and this program cannot: refused when asked for, else left out and named */
	int dropped = 0;
	for (int t = 0; t < RB_OT_MAX; t++) {
		uint64_t extra = f->out[t].fields & ~(RB_F_PRINTABLE | RB_F_BPF_OUTPUT | (el->tp ? RB_F_TRACE : 0));
		if (!seen[t] || !extra)
			continue;
		uint64_t bit = extra & -extra;
		if (f->asked & extra) {
			snprintf(msg, n, "the '%s' field is not supported by rbdecode script",
				 field_name(f->asked & extra & -(f->asked & extra)));
			return -1;
		}
		if (!dropped)
			snprintf(msg, n, "%s events: the '%s' field perf script prints is left out (not supported)",
				 type_name(t), field_name(bit));
		dropped = 1;
		f->out[t].fields &= ~extra;
	}
	return dropped;
}

void rb_fields_flags_name(uint32_t flags, char *buf, size_t n)
{
	enum { BR = 1, CALL = 2, RET = 4, COND = 8, SYSRET = 16, ASYNC = 32, INTR = 64, TXA = 128,
	       TBEGIN = 256, TEND = 512, INTX = 1024, VMENTRY = 2048, VMEXIT = 4096, IDIS = 8192, ITOG = 16384 };
	static const struct { uint32_t f; const char *name; } kinds[] = {
		{ BR | CALL, "call" }, { BR | RET, "return" }, { BR | COND, "jcc" }, { BR, "jmp" },
		{ BR | CALL | INTR, "int" }, { BR | RET | INTR, "iret" }, { BR | CALL | SYSRET, "syscall" },
		{ BR | RET | SYSRET, "sysret" }, { BR | ASYNC, "async" }, { BR | CALL | ASYNC | INTR, "hw int" },
		{ BR | TXA, "tx abrt" }, { BR | TBEGIN, "tr strt" }, { BR | TEND, "tr end" },
		{ BR | CALL | VMENTRY, "vmentry" }, { BR | CALL | VMEXIT, "vmexit" },
	};
	const uint32_t xf = INTX | IDIS | ITOG;
	char xs[16] = "";
	if (flags & xf)
		snprintf(xs, sizeof(xs), "(%s%s%s)", flags & INTX ? "x" : "", flags & IDIS ? "D" : "",
			 flags & ITOG ? "t" : "");
	const char *prefix[] = { "", "tr strt ", "tr end  " };
	const uint32_t strip[] = { 0, TBEGIN, TEND };
	for (int p = 0; p < 3; p++) {
		if (p && !(flags & strip[p]))
			continue;
		for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
			if (kinds[i].f == (flags & ~(xf | strip[p]))) {
				if (p)
					snprintf(buf, n, "%s%-7s%6s", prefix[p], kinds[i].name, xs);
				else
					snprintf(buf, n, "%-15s%6s", kinds[i].name, xs);
				return;
			}
	}
	static const char chars[] = "bcrosyiABExghDt";
	size_t pos = 0;
	for (int i = 0; i < 32 && pos + 1 < n; i++, flags >>= 1)
		if (flags & 1)
			buf[pos++] = i < (int)sizeof(chars) - 1 ? chars[i] : '?';
	buf[pos] = 0;
}
