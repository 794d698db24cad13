/*
 * text.c - the text outputs, a sink beside SQLite (store stage): the
 * samples, trace events and switches of a recording as Linux perf 6.1's
 * `perf script` prints them, byte for byte (builtin-script.c): per event,
 * the fields perf shows for its type (fields.c: perf's defaults, -F, and
 * what the recording's samples carry) in perf's columns - comm (%16s, or
 * bare before a call chain), tid, [cpu], time in microseconds (--ns:
 * nanoseconds), period, the event name padded to the longest name of the
 * event list, then the ip with symbol+offset and object, or the call chain
 * one entry per line (user-space entries as offsets in their object, as
 * perf shows them). Branches from hardware trace (perf's "branches" events
 * synthesized from Intel PT or CoreSight) show " => " and their target;
 * PTWRITE and power events their payload. --disasm adds the instruction at
 * each sample ip (capstone, read from the object file through its mapping)
 * and --show-switch-events the context switches in between, as perf script
 * prints them. The gaps table (rbdecode gaps) is the other text this sink
 * writes: one line per loss.
 */
#include "config.h"
#include <errno.h>
#include <capstone/capstone.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "store/text/text.h"
#include "store/text/fields.h"

struct evfmt {                  /* one event of perf's event list, as printed */
	char *name;
	int ot;                     /* perf's output type (fields.h) */
	uint64_t config;            /* a tracepoint's id */
	uint64_t sample_type;
	int bts;                    /* perf's is_bts_event: a branch, printed with " => " and its target */
	int addr_sym;               /* sample_addr_correlates_sym: the addr field is resolved to a symbol */
};

struct rb_text {
	FILE *out;
	int werr;                   /* the errno of the first failed write (0: none) */
	int disasm, switches, gaps, ns, hide_chain;
	const char *symfs;
	struct rb_machine *m;       /* the session's, for the objects' files (set at begin) */
	csh cs;
	int cs_ok;
	struct rb_fields f;
	struct evfmt *ev;           /* the event list (recorded, then synthesized) */
	size_t nr_ev, nr_recorded;
	int name_width;             /* perf's: the longest event name */
	int synth[4][RB_PWR_COUNT]; /* trace events' entries by kind (and power event), -1 if none */
	char msg[512];              /* why the event list was refused, or what is left out */
	int refused;
	struct rb_tracepoints *tp;  /* the session's: tracepoints' fields (NULL: none) */
};

/*
 * A line is built by hand in a buffer and written once (branch lines are
 * millions, and printf would cost most of the time); it is written out
 * early when full. The writers keep the position in a local: stores through
 * a char pointer may alias l->p itself.
 */
struct line {
	FILE *o;
	int *werr;               /* the errno of the first write that failed, kept for the message */
	char *p;
	char b[8192];
};

/* (not an initializer: that would clear the buffer, a cost on every line) */
static void line_init(struct line *l, FILE *o, int *werr)
{
	l->o = o;
	l->werr = werr;
	l->p = l->b;
}

static void l_flush(struct line *l)
{
	size_t n = (size_t)(l->p - l->b);
	if (fwrite_unlocked(l->b, 1, n, l->o) < n && !*l->werr)
		*l->werr = errno ? errno : EIO;
	l->p = l->b;
}

/* room for @n more bytes (n < sizeof(b)) */
static void l_room(struct line *l, size_t n)
{
	if ((size_t)(l->b + sizeof(l->b) - l->p) < n)
		l_flush(l);
}

static void l_mem(struct line *l, const char *s, size_t n)
{
	if (n > sizeof(l->b) / 2) {
		l_flush(l);
		fwrite_unlocked(s, 1, n, l->o);
		return;
	}
	l_room(l, n);
	memcpy(l->p, s, n);
	l->p += n;
}

static void l_str(struct line *l, const char *s) { l_mem(l, s, strlen(s)); }

static void l_chr(struct line *l, char c)
{
	l_room(l, 1);
	*l->p++ = c;
}

/* @s padded with spaces to @width, on the left (right-aligned) or, @left, on the right */
static void l_pad(struct line *l, const char *s, int width, int left)
{
	size_t n = strlen(s), fill = (size_t)width > n ? (size_t)width - n : 0;
	l_room(l, fill);
	if (!left) {
		memset(l->p, ' ', fill);
		l->p += fill;
	}
	l_mem(l, s, n);
	l_room(l, fill);
	if (left) {
		memset(l->p, ' ', fill);
		l->p += fill;
	}
}

/* @v in @base (10 or 16), at least @width digits wide, filled with @fill on the left */
static void l_uint(struct line *l, uint64_t v, int base, int width, char fill)
{
	static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
				    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
				    "8081828384858687888990919293949596979899";
	int n = 1;                          /* digits, written in place from the last */
	if (base == 16) {
		n = v ? (67 - __builtin_clzll(v)) / 4 : 1;
	} else {
		for (uint64_t x = v; x >= 10 && n < 20; x /= 10)
			n++;
	}
	l_room(l, (size_t)(width > n ? width : n));
	char *p = l->p;
	for (; width > n; width--)
		*p++ = fill;
	char *e = p + n, *d = e;
	if (base == 16) {
		do {
			*--d = "0123456789abcdef"[v & 15];
			v >>= 4;
		} while (d > p);
	} else {
		while (v >= 100) {              /* two digits at a time */
			unsigned r = (unsigned)(v % 100);
			v /= 100;
			*--d = pairs[2 * r + 1];
			*--d = pairs[2 * r];
		}
		if (v >= 10) {
			*--d = pairs[2 * v + 1];
			*--d = pairs[2 * v];
		} else {
			*--d = (char)('0' + v);
		}
	}
	l->p = e;
}

/* printf's "%*d" (@left: "%-*d") */
static void l_int(struct line *l, int64_t v, int width, int left)
{
	char t[24];
	int n = 0;
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
	char d[24];
	int k = 0;
	do {
		d[k++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		t[n++] = '-';
	while (k)
		t[n++] = d[--k];
	t[n] = 0;
	l_pad(l, t, width, left);
}

/* The instruction at a user-space sample ip, read from the object file at map offset, as "\tmnemonic operands". */
static void print_insn(struct rb_text *sc, struct line *l, const struct rb_addr_loc *al, uint64_t ip)
{
	if (!sc->cs_ok || !al->map || al->kernel || !al->dso)
		return;
	/*
	 * the runtime object (symbols may have come from a separate debug file, which has no
	 * code): the file the decoders read (--symdir, the build-id cache, --symfs, the
	 * recorded path), else the recorded path under --symfs as it is
	 */
	const char *file = sc->m ? rb_machine_dso_image(sc->m, al->dso) : NULL;
	char path[8192];
	if (!file && al->dso->long_name[0] != '/')
		return;
	if (!file)
		snprintf(path, sizeof(path), "%s%s", sc->symfs ? sc->symfs : "", al->dso->long_name);
	int fd = open(file ? file : path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	uint8_t code[16];
	ssize_t n = pread(fd, code, sizeof(code), (off_t)(ip - al->map->start + al->map->pgoff));
	close(fd);
	cs_insn *insn;
	if (n > 0 && cs_disasm(sc->cs, code, (size_t)n, ip, 1, &insn) == 1) {
		char buf[256];
		snprintf(buf, sizeof(buf), "\t%s %s", insn->mnemonic, insn->op_str);
		l_str(l, buf);
		cs_free(insn, 1);
	}
}

/*
 * A symbol as perf prints it (__symbol__fprintf_symname_offs): its name
 * and, with @offs, "+0x" and the offset of @addr in it (perf's: from the
 * map's start past the symbol's end), or "[unknown]".
 */
static void l_sym(struct line *l, const struct rb_sym *sym, const struct rb_map *map, uint64_t addr, int offs)
{
	if (!sym) {
		l_str(l, "[unknown]");
		return;
	}
	l_str(l, sym->name);
	if (offs) {
		l_mem(l, "+0x", 3);
		l_uint(l, addr < sym->end || !map ? addr - sym->start : addr - map->start - sym->start, 16, 0, ' ');
	}
}

/* " (object)" as perf's map__fprintf_dsoname */
static void l_dso(struct line *l, const struct rb_addr_loc *al)
{
	l_mem(l, " (", 2);
	l_str(l, al->map && al->dso ? al->dso->long_name : "[unknown]");
	l_chr(l, ')');
}

/* perf's sample__fprintf_sym without a call chain: "ip sym+off (dso)", as far as @fl asks */
static void l_ip(struct line *l, uint64_t fl, uint64_t ip, const struct rb_addr_loc *al)
{
	if (fl & RB_F_IP)
		l_uint(l, ip, 16, 16, ' ');
	if (fl & RB_F_SYM) {
		l_chr(l, ' ');
		l_sym(l, al->sym, al->map, al->addr, !!(fl & RB_F_SYMOFFSET));
	}
	if (fl & RB_F_DSO)
		l_dso(l, al);
}

/* perf's sample__fprintf_callchain: leaf first, a line each; user-space entries at their object offset */
static void l_chain(struct line *l, uint64_t fl, const struct rb_cc_node *nodes, size_t nr)
{
	for (size_t i = nr; i-- > 0;) {
		const struct rb_addr_loc *al = &nodes[i].al;
		uint64_t addr = al->map ? al->addr : 0;
		if (fl & RB_F_IP) {
			l_chr(l, '\t');
			l_uint(l, al->map && !al->kernel ? addr : nodes[i].ip, 16, 16, ' ');
		}
		if (fl & RB_F_SYM) {
			l_chr(l, ' ');
			l_sym(l, al->sym, al->map, addr, !!(fl & RB_F_SYMOFFSET));
		}
		if ((fl & RB_F_DSO) && nodes[i].inlined)
			l_str(l, " (inlined)");
		else if (fl & RB_F_DSO)
			l_dso(l, al);
		l_chr(l, '\n');
	}
}

/* perf's perf_sample__fprintf_addr: the address, and where it falls when it names code */
static void l_addr(struct line *l, uint64_t fl, const struct evfmt *e, uint64_t addr, const struct rb_addr_loc *al)
{
	l_uint(l, addr, 16, 16, ' ');
	if (!e->addr_sym)
		return;
	if (fl & RB_F_SYM) {
		l_chr(l, ' ');
		l_sym(l, al->sym, al->map, al->addr, !!(fl & RB_F_SYMOFFSET));
	}
	if (fl & RB_F_DSO)
		l_dso(l, al);
}

/*
 * perf's perf_sample__fprintf_start and what follows it up to the event
 * name: comm, pid/tid, [cpu], time, period, name, flags. @chain: the event
 * has call chains and they are shown (the comm then goes unpadded).
 */
static void l_start(struct rb_text *sc, struct line *l, uint64_t fl, const char *comm, int32_t pid, int32_t tid,
		    int32_t cpu, uint64_t time, int chain)
{
	if (fl & RB_F_COMM) {
		if (chain)
			l_str(l, comm);
		else
			l_pad(l, comm, 16, 0);
		l_chr(l, ' ');
	}
	if ((fl & RB_F_PID) && (fl & RB_F_TID)) {
		l_int(l, pid, 5, 0);
		l_chr(l, '/');
		l_int(l, tid, 5, 1);
		l_chr(l, ' ');
	} else if (fl & (RB_F_PID | RB_F_TID)) {
		l_int(l, (fl & RB_F_PID) ? pid : tid, 5, 0);
		l_chr(l, ' ');
	}
	if (fl & RB_F_CPU) {
		l_chr(l, '[');
		if (cpu < 0) {
			l_chr(l, '-');
			l_uint(l, (uint64_t)-(int64_t)cpu, 10, 2, '0');
		} else {
			l_uint(l, (uint64_t)cpu, 10, 3, '0');
		}
		l_mem(l, "] ", 2);
	}
	if (fl & RB_F_TIME) {
		if (sc->ns) {
			l_int(l, (int64_t)(time / 1000000000), 5, 0);
			l_chr(l, '.');
			l_uint(l, time % 1000000000, 10, 9, '0');
		} else {            /* "%12s" of seconds.microseconds */
			uint64_t sec = time / 1000000000;
			int digits = 1;
			for (uint64_t x = sec; x >= 10; x /= 10)
				digits++;
			l_room(l, 12);
			for (int pad = 12 - (digits + 7); pad > 0; pad--)
				*l->p++ = ' ';
			l_uint(l, sec, 10, 0, ' ');
			l_chr(l, '.');
			l_uint(l, time % 1000000000 / 1000, 10, 6, '0');
		}
		l_mem(l, ": ", 2);
	}
}

/* period, event name (padded to the longest of the list) and, with -F +flags, the branch's kind */
static void l_event(struct rb_text *sc, struct line *l, uint64_t fl, const struct evfmt *e, uint64_t period,
		    uint32_t flags)
{
	if (fl & RB_F_PERIOD) {
		l_uint(l, period, 10, 10, ' ');
		l_chr(l, ' ');
	}
	if (fl & RB_F_EVNAME) {
		l_pad(l, e->name ? e->name : "[unknown]", sc->name_width, 0);
		l_mem(l, ": ", 2);
	}
	if (sc->f.print_flags) {
		char buf[64];
		rb_fields_flags_name(flags, buf, sizeof(buf));
		l_mem(l, "  ", 2);
		l_pad(l, buf, 21, 1);
		l_chr(l, ' ');
	}
}

static int done(struct line *l)
{
	l_flush(l);
	return ferror(l->o) ? -1 : 0;
}

/* the event list's entry for a sample of recorded event @idx; NULL for one announced later (pipe mode) */
static const struct evfmt *recorded(const struct rb_text *sc, int idx)
{
	return idx >= 0 && (size_t)idx < sc->nr_recorded ? &sc->ev[idx] : NULL;
}

/* An event announced after the list was made: shown with its type's fields, as a sample. */
static void late_event(struct evfmt *e, const struct rb_event_ref *r)
{
	memset(e, 0, sizeof(*e));
	e->name = (char *)(r->name ? r->name : "");
	e->ot = rb_fields_type(&(struct rb_event_desc){ .type = r->type });
	e->sample_type = PD_SAMPLE_IP | PD_SAMPLE_TID;
}

static int script_sample(void *ctx, const struct rb_sample_ev *ev)
{
	struct rb_text *sc = ctx;
	struct evfmt late;
	const struct evfmt *e = recorded(sc, ev->event.index);
	if (!e) {
		late_event(&late, &ev->event);
		e = &late;
	}
	uint64_t fl = sc->f.out[e->ot].fields;
	if (!fl)
		return 0;
	struct line l;
	line_init(&l, sc->out, &sc->werr);
	int has_chain = !sc->hide_chain && (e->sample_type & PD_SAMPLE_CALLCHAIN);
	l_start(sc, &l, fl, ev->thread->comm->name, ev->thread->pid, ev->thread->tid,
		(int32_t)ev->cpu, ev->time, has_chain && (fl & RB_F_IP));
	l_event(sc, &l, fl, e, ev->period, 0);
	if ((fl & RB_F_TRACE) && ev->raw && sc->tp) {    /* a tracepoint's fields, by its print fmt */
		const char *text = rb_tracepoints_text(sc->tp, e->config, (int)ev->cpu, ev->raw, ev->raw_size);
		if (text)
			l_str(&l, text);
	}
	struct rb_addr_loc aal;
	int need_addr = (fl & RB_F_ADDR) || (e->bts && (e->sample_type & PD_SAMPLE_ADDR) && !sc->f.out[e->ot].user_set);
	if (need_addr && e->addr_sym && sc->m)
		rb_machine_resolve(sc->m, ev->thread, ev->addr >= rb_machine_kernel_start(sc->m) ? PD_MISC_KERNEL
				   : PD_MISC_USER, ev->addr, &aal);
	else
		memset(&aal, 0, sizeof(aal));
	/* a recorded branch event (intel_bts, branches -c 1) has perf's bts layout: its target after the ip */
	if (!e->bts && (fl & RB_F_ADDR))
		l_addr(&l, fl, e, ev->addr, &aal);
	if (fl & RB_F_IP) {
		l_chr(&l, has_chain ? '\n' : ' ');
		if (has_chain)
			l_chain(&l, fl, ev->nodes, ev->nr_nodes);
		else
			l_ip(&l, fl, ev->ip, &ev->al);
	}
	if (e->bts && need_addr) {
		l_mem(&l, " => ", 4);
		l_addr(&l, fl, e, ev->addr, &aal);
	}
	if (sc->disasm && !has_chain)
		print_insn(sc, &l, &ev->al, ev->ip);
	l_chr(&l, '\n');
	return done(&l);
}

/*
 * PTWRITE and power events: perf script's text for its synthesized events
 * (perf_sample__fprintf_synth_*: the event's fields, padded to 34 columns).
 */
static void power_text(const struct rb_trace_ev *ev, char *buf, size_t n)
{
	const uint64_t *v = ev->payload;
	int len = 0;
	if (ev->kind == RB_EV_PTWRITE) {
		char str[9] = "";
		int printable = 1, i = 0;
		for (; i < 8 && ((v[0] >> (8 * i)) & 0xff); i++) {
			int c = (int)((v[0] >> (8 * i)) & 0xff);
			if (c < 0x20 || c > 0x7e)
				printable = 0;
		}
		for (; i < 8; i++)
			if ((v[0] >> (8 * i)) & 0xff)
				printable = 0;
		for (i = 0; printable && i < 8; i++)
			str[i] = (char)((v[0] >> (8 * i)) & 0xff);
		len = snprintf(buf, n, " IP: %u payload: %#" PRIx64 " %s ", (unsigned)v[1], v[0], str);
	} else {
		switch (ev->power) {
		case RB_PWR_CBR:
			len = snprintf(buf, n, " cbr: %2u freq: %4u MHz ", (unsigned)v[0], (unsigned)((v[1] + 500) / 1000));
			if (v[2])
				len += snprintf(buf + len, n - (size_t)len, "(%3u%%) ",
						(unsigned)((5 + 1000 * v[0] / v[2]) / 10));
			break;
		case RB_PWR_MWAIT:
			len = snprintf(buf, n, " hints: %#x extensions: %#x ", (unsigned)v[0], (unsigned)v[1]);
			break;
		case RB_PWR_PWRE:
			len = snprintf(buf, n, " hw: %u cstate: %u sub-cstate: %u ", (unsigned)v[2], (unsigned)v[0],
				       (unsigned)v[1]);
			break;
		case RB_PWR_EXSTOP:
			len = snprintf(buf, n, " IP: %u ", (unsigned)v[0]);
			break;
		case RB_PWR_PSB:
			len = snprintf(buf, n, " psb offs: %#" PRIx64, v[0]);
			break;
		default:
			len = snprintf(buf, n, " deepest cstate: %u last cstate: %u wake reason: %#x ", (unsigned)v[0],
				       (unsigned)v[1], (unsigned)v[2]);
			break;
		}
	}
	while (len > 0 && len < 34 && (size_t)len + 1 < n)
		buf[len++] = ' ';
	buf[len < 0 ? 0 : (size_t)len < n ? len : (int)n - 1] = 0;
}

/* The entry of the event list a trace event is a sample of (what a trace source declared). */
static const struct evfmt *synth_of(const struct rb_text *sc, const struct rb_trace_ev *ev)
{
	int k = ev->kind >= 0 && ev->kind < 4 ? ev->kind : 0;
	int i = sc->synth[k][k == RB_EV_POWER && ev->power >= 0 && ev->power < RB_PWR_COUNT ? ev->power : 0];
	return i >= 0 ? &sc->ev[i] : NULL;
}

static int script_branch(void *ctx, const struct rb_trace_ev *ev)
{
	struct rb_text *sc = ctx;
	const struct evfmt *e = synth_of(sc, ev);
	if (!e)
		return 0;       /* nothing perf would have made an event for */
	uint64_t fl = sc->f.out[e->ot].fields;
	if (!fl)
		return 0;
	struct line l;
	line_init(&l, sc->out, &sc->werr);
	l_start(sc, &l, fl, ev->thread->comm->name, ev->thread->pid, ev->thread->tid,
		ev->cpu, ev->time, 0);
	l_event(sc, &l, fl, e, ev->kind == RB_EV_INSTRUCTION ? ev->insn_count : 1, ev->flags);
	if (e->bts) {
		if (fl & RB_F_IP) {
			l_chr(&l, ' ');
			l_ip(&l, fl, ev->from, &ev->from_al);
		}
		if ((fl & RB_F_ADDR) || ((e->sample_type & PD_SAMPLE_ADDR) && !sc->f.out[e->ot].user_set)) {
			l_mem(&l, " => ", 4);
			l_addr(&l, fl, e, ev->to, &ev->to_al);
		}
	} else {
		if (e->ot == RB_OT_SYNTH && (fl & RB_F_SYNTH)) {
			char text[160];
			power_text(ev, text, sizeof(text));
			l_str(&l, text);
		}
		if (fl & RB_F_ADDR)
			l_addr(&l, fl, e, 0, &ev->to_al);
		if (fl & RB_F_IP) {
			l_chr(&l, ' ');
			l_ip(&l, fl, ev->from, &ev->from_al);
		}
	}
	if (sc->disasm && ev->from)
		print_insn(sc, &l, &ev->from_al, ev->from);
	l_chr(&l, '\n');
	return done(&l);
}

/* --show-switch-events: a switch as perf script prints it (print_event_with_time, perf_event__fprintf_switch). */
static int script_switch(void *ctx, const struct rb_switch_ev *sw)
{
	struct rb_text *sc = ctx;
	struct line l;
	line_init(&l, sc->out, &sc->werr);
	const struct evfmt *e = recorded(sc, sw->evsel >= 0 ? sw->evsel : 0);
	if (e) {
		char unknown[24];
		snprintf(unknown, sizeof(unknown), ":%d", sw->tid);    /* perf's name for a thread without COMM */
		uint64_t fl = sc->f.out[e->ot].fields;
		int chain = !sc->hide_chain && (e->sample_type & PD_SAMPLE_CALLCHAIN) && (fl & RB_F_IP);
		l_start(sc, &l, fl, sw->a && sw->a->comm ? sw->a->comm->name : unknown, sw->pid, sw->tid, sw->cpu,
			sw->time, chain);
	}
	l_str(&l, sw->cpu_wide ? "PERF_RECORD_SWITCH_CPU_WIDE " : "PERF_RECORD_SWITCH ");
	l_str(&l, !sw->out ? "IN         " : !sw->preempt ? "OUT        " : "OUT preempt");
	if (sw->cpu_wide) {
		l_str(&l, sw->out ? "  next pid/tid: " : "  prev pid/tid: ");
		l_int(&l, sw->np_pid, 5, 0);
		l_chr(&l, '/');
		l_int(&l, sw->np_tid, 5, 1);
	}
	l_chr(&l, '\n');
	return done(&l);
}

static int text_gap(void *ctx, const struct rb_gap_ev *g)
{
	struct rb_text *sc = ctx;
	fprintf(sc->out, "%16" PRIu64 " %4d %7d/%-7d %-20s %12" PRIu64 " %12" PRIu64 " %10" PRIu64 "  %s\n",
		g->time_start, g->cpu, g->pid, g->tid, g->reason, g->bytes_lost, g->records_lost,
		g->file_offset, g->detail ? g->detail : "");
	return 0;
}

struct rb_text *rb_text_new(FILE *out, const struct rb_text_opts *opts)
{
	struct rb_text *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->out = out;
	t->gaps = opts->gaps;
	t->disasm = opts->disasm;
	t->switches = opts->switches;
	t->symfs = opts->symfs;
	t->ns = opts->ns;
	t->hide_chain = opts->hide_callchain;
	rb_fields_init(&t->f);
	t->f.no_callchain = t->hide_chain;
	memset(t->synth, -1, sizeof(t->synth));
	if (t->disasm)
		t->cs_ok = cs_open(CS_ARCH_X86, CS_MODE_64, &t->cs) == CS_ERR_OK;
	return t;
}

int rb_text_fields(struct rb_text *t, const char *arg, FILE *err)
{
	return rb_fields_parse(&t->f, arg, err);
}

int rb_text_disasm_ok(const struct rb_text *t)
{
	return !t->disasm || t->cs_ok;
}

int rb_text_begin(struct rb_text *t)
{
	if (t->gaps)
		fprintf(t->out, "%16s %4s %15s %-20s %12s %12s %10s  %s\n", "time", "cpu", "pid/tid", "reason",
			"bytes_lost", "records_lost", "offset", "detail");
	return ferror(t->out) ? -1 : 0;
}

static int text_machine(void *ctx, struct rb_machine *m)
{
	struct rb_text *t = ctx;
	t->m = m;
	return 0;
}

/* A kernel address in a tracepoint's fields (%pS): its symbol, as perf's machine names it. */
static char *kernel_name(void *priv, unsigned long long *addr, char **mod)
{
	struct rb_text *t = priv;
	struct rb_addr_loc al;
	if (!t->m)
		return NULL;
	rb_machine_resolve(t->m, NULL, PD_MISC_KERNEL, *addr, &al);
	if (!al.sym)
		return NULL;
	*addr -= al.addr - al.sym->start;
	*mod = al.dso && !al.dso->kernel ? (char *)al.dso->short_name : NULL;
	return (char *)al.sym->name;
}

/* perf's is_bts_event: a hardware branch-instructions event sampled at every branch */
static int is_bts(const struct rb_event_desc *d)
{
	return d->type == PD_TYPE_HARDWARE && (d->config & 4) && d->sample_period == 1;
}

/* The event list: each entry's fields, the name width, the trace events' entries; then perf's checks. */
static int text_events(void *ctx, const struct rb_evlist *el)
{
	struct rb_text *t = ctx;
	if (!(t->ev = calloc(el->n + 1, sizeof(*t->ev))))
		return RB_TEXT_STOP_NOMEM;
	t->nr_ev = el->n;
	t->nr_recorded = el->nr_recorded;
	for (size_t i = 0; i < el->n; i++) {
		const struct rb_event_desc *d = &el->ev[i];
		struct evfmt *e = &t->ev[i];
		if (!(e->name = strdup(d->name ? d->name : "")))
			return RB_TEXT_STOP_NOMEM;
		e->ot = rb_fields_type(d);
		e->config = d->config;
		e->sample_type = d->sample_type;
		e->bts = is_bts(d);
		e->addr_sym = e->bts || (d->type == PD_TYPE_SOFTWARE && (d->config == 2 || d->config == 5 || d->config == 6));
		int len = (int)strlen(e->name);
		if (len > t->name_width)
			t->name_width = len;
		int p = d->kind == RB_EV_POWER && d->power >= 0 && d->power < RB_PWR_COUNT ? d->power : 0;
		if (d->synth && d->kind >= 0 && d->kind < 4 && t->synth[d->kind][p] < 0)
			t->synth[d->kind][p] = (int)i;
	}
	if ((t->tp = el->tp))
		rb_tracepoints_resolver(t->tp, kernel_name, t);
	int rc = rb_fields_check(&t->f, el, t->msg, sizeof(t->msg));
	if (rc < 0) {
		t->refused = 1;
		return RB_TEXT_STOP_FIELDS;
	}
	return 0;
}

void rb_text_sink(struct rb_text *t, struct rb_sink *sink)
{
	memset(sink, 0, sizeof(*sink));
	sink->ctx = t;
	if (t->gaps) {
		sink->gap = text_gap;
		return;
	}
	sink->begin = text_machine;
	sink->events = text_events;
	sink->sample = script_sample;
	sink->trace = script_branch;
	if (t->switches)
		sink->context_switch = script_switch;
}

void rb_text_ftrace_sink(struct rb_text *t, struct rb_ftrace_sink *sink)
{
	memset(sink, 0, sizeof(*sink));
	sink->ctx = t;
	if (t->gaps)
		sink->gap = text_gap;
}

const char *rb_text_message(const struct rb_text *t, int *refused)
{
	*refused = t->refused;
	return t->msg[0] ? t->msg : NULL;
}

int rb_text_failed(const struct rb_text *t)
{
	return ferror(t->out) != 0;
}

int rb_text_finish(struct rb_text *t)
{
	if (!fflush(t->out))
		return 0;
	if (!t->werr)
		t->werr = errno ? errno : EIO;
	return -1;
}

int rb_text_write_errno(const struct rb_text *t)
{
	return t->werr ? t->werr : EIO;
}

void rb_text_free(struct rb_text *t)
{
	if (!t)
		return;
	if (t->cs_ok)
		cs_close(&t->cs);
	for (size_t i = 0; i < t->nr_ev; i++)
		free(t->ev[i].name);
	free(t->ev);
	free(t);
}
