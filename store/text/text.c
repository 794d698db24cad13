/*
 * text.c - the text outputs, a sink beside SQLite (store stage): the samples,
 * branches and switches of a recording in perf script's default layout
 * (comm pid/tid [cpu] time: period event: ip symbol+offset (object), then
 * the call chain one entry per line), with --disasm adding the instruction
 * at each sample ip (capstone, read from the object file through its
 * mapping) and --show-switch-events the context switches in between, as
 * perf script prints them. Branches from hardware trace come as trace
 * events (script_branch) and are printed as perf prints each kind: Intel
 * PT's as itrace lines, with its PTWRITE and power events (--itrace=w, p);
 * CoreSight's as samples with perf's flags field before the ip and "=> addr
 * symbol (object)" after it, as perf script --itrace=b prints them. The gaps table
 * (rbdecode gaps) is the other text this sink writes: one line per loss.
 */
#include "config.h"
#include <capstone/capstone.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "store/text/text.h"

struct rb_text {
	FILE *out;
	int disasm, switches, gaps;
	const char *symfs;
	struct rb_machine *m;   /* the session's, for the objects' files (set at begin) */
	csh cs;
	int cs_ok;
};

static void print_loc(FILE *o, uint64_t ip, const struct rb_addr_loc *al)
{
	fprintf(o, "%16" PRIx64, ip);
	if (al->sym) {
		fprintf(o, " %s", al->sym->name);
		if (al->addr > al->sym->start)
			fprintf(o, "+0x%" PRIx64, al->addr - al->sym->start);
	} else {
		fprintf(o, " [unknown]");
	}
	fprintf(o, " (%s)", al->dso ? al->dso->long_name : "[unknown]");
}

/* The instruction at a user-space sample ip, read from the object file at map offset. */
static void print_insn(struct rb_text *sc, const struct rb_addr_loc *al, uint64_t ip)
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
		fprintf(sc->out, "\t%s %s", insn->mnemonic, insn->op_str);
		cs_free(insn, 1);
	}
}

/* perf script's name for a branch sample's flags (perf_sample__sprintf_flags). */
static void flags_name(uint32_t flags, char *buf, size_t n)
{
	static const struct { uint32_t f; const char *name; } names[] = {
		{ RB_IP_FLAG_BRANCH | RB_IP_FLAG_CALL, "call" }, { RB_IP_FLAG_BRANCH | RB_IP_FLAG_RETURN, "return" },
		{ RB_IP_FLAG_BRANCH | RB_IP_FLAG_CONDITIONAL, "jcc" }, { RB_IP_FLAG_BRANCH, "jmp" },
		{ RB_IP_FLAG_BRANCH | RB_IP_FLAG_CALL | RB_IP_FLAG_INTERRUPT, "int" },
		{ RB_IP_FLAG_BRANCH | RB_IP_FLAG_RETURN | RB_IP_FLAG_INTERRUPT, "iret" },
		{ RB_IP_FLAG_BRANCH | RB_IP_FLAG_CALL | RB_IP_FLAG_SYSCALLRET, "syscall" },
		{ RB_IP_FLAG_BRANCH | RB_IP_FLAG_RETURN | RB_IP_FLAG_SYSCALLRET, "sysret" },
		{ RB_IP_FLAG_BRANCH | RB_IP_FLAG_ASYNC, "async" },
		{ RB_IP_FLAG_BRANCH | RB_IP_FLAG_CALL | RB_IP_FLAG_ASYNC | RB_IP_FLAG_INTERRUPT, "hw int" },
		{ RB_IP_FLAG_BRANCH | RB_IP_FLAG_TX_ABORT | RB_IP_FLAG_INTERRUPT, "tx abrt" },
		{ RB_IP_FLAG_BRANCH | RB_IP_FLAG_TRACE_BEGIN, "tr strt" }, { RB_IP_FLAG_BRANCH | RB_IP_FLAG_TRACE_END, "tr end" },
	};
	buf[0] = 0;
	uint32_t f = flags & ~(uint32_t)RB_IP_FLAG_IN_TX;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (f == names[i].f) {
			snprintf(buf, n, "%s", names[i].name);
			break;
		}
	if (!buf[0]) {
		uint32_t rest = f & ~(uint32_t)(RB_IP_FLAG_TRACE_BEGIN | RB_IP_FLAG_TRACE_END);
		const char *name = "";
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (rest == names[i].f)
				name = names[i].name;
		snprintf(buf, n, "%s%s%s", f & RB_IP_FLAG_TRACE_BEGIN ? "tr strt " : "",
			 f & RB_IP_FLAG_TRACE_END ? "tr end  " : "", name);
	}
}

static void print_flags(FILE *o, uint32_t flags)
{
	char buf[64];
	flags_name(flags, buf, sizeof(buf));
	fprintf(o, "%-15s ", buf);
}

/*
 * The command perf script shows: the thread's own, as of now (a thread that
 * renamed itself shows its new name), where the database keeps the process's
 * exec comm (@fallback) as perf's exporter does.
 */
static const char *comm_of(const struct rb_thread *t, const struct rb_comm *fallback)
{
	return rb_thread_shown_comm(t, fallback)->name;
}

static int script_sample(void *ctx, const struct rb_sample_ev *ev)
{
	struct rb_text *sc = ctx;
	FILE *o = sc->out;
	char tbuf[40] = "";
	if (ev->has_time)
		snprintf(tbuf, sizeof(tbuf), " %" PRIu64 ".%06" PRIu64 ":", ev->time / 1000000000,
			 ev->time % 1000000000 / 1000);
	fprintf(o, "%16s %6d/%-6d", comm_of(ev->thread, ev->comm), ev->thread->pid, ev->thread->tid);
	if (ev->has_cpu)
		fprintf(o, " [%03u]", ev->cpu);
	fprintf(o, "%s %10" PRIu64 " %s: ", tbuf, ev->period, ev->event.name ? ev->event.name : "event");
	print_loc(o, ev->ip, &ev->al);
	if (sc->disasm)
		print_insn(sc, &ev->al, ev->ip);
	fputc('\n', o);
	for (size_t i = ev->nr_nodes; i-- > 0;) {   /* leaf first, as perf prints */
		fputc('\t', o);
		print_loc(o, ev->nodes[i].ip, &ev->nodes[i].al);
		fputc('\n', o);
	}
	if (ev->nr_nodes)
		fputc('\n', o);
	return ferror(o) ? -1 : 0;
}

/*
 * Branch lines are the bulk of a trace's text (millions): they are built
 * by hand in a buffer and written once, as printf costs most of the time.
 */
struct line { char *p; char b[4096]; };   /* l_str stops at 3500: a location fits after a flush at 1024 */

/*
 * The writers below keep the write position in a local: stores through a
 * char pointer may alias l->p itself, which would otherwise be written back
 * and read again for every character.
 */
static void l_str(struct line *l, const char *s, size_t max)
{
	char *p = l->p, *end = l->b + max;
	while (*s && p < end)
		*p++ = *s++;
	l->p = p;
}

static void l_pad(struct line *l, const char *s, int width, int left)
{
	size_t n = strlen(s);
	if (n > 300)
		n = 300;
	char *p = l->p;
	size_t fill = (int)n < width ? (size_t)width - n : 0;
	if (!left) {
		memset(p, ' ', fill);
		p += fill;
	}
	memcpy(p, s, n);
	p += n;
	if (left) {
		memset(p, ' ', fill);
		p += fill;
	}
	l->p = p;
}

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

static void l_int(struct line *l, int64_t v, int width, int left)
{
	char t[24];
	struct line tmp;
	tmp.p = tmp.b;
	if (v < 0) {
		*tmp.p++ = '-';
		v = -v;
	}
	l_uint(&tmp, (uint64_t)v, 10, 0, ' ');
	*tmp.p = 0;
	memcpy(t, tmp.b, (size_t)(tmp.p - tmp.b) + 1);
	l_pad(l, t, width, left);
}

/* " ip sym+0xoff (dso)", as print_loc */
static void l_loc(struct line *l, uint64_t ip, const struct rb_addr_loc *al)
{
	l_uint(l, ip, 16, 16, ' ');
	*l->p++ = ' ';
	if (al->sym) {
		l_str(l, al->sym->name, 3300);
		if (al->addr > al->sym->start) {
			l_str(l, "+0x", 4000);
			l_uint(l, al->addr - al->sym->start, 16, 0, ' ');
		}
	} else {
		l_str(l, "[unknown]", 4000);
	}
	l_str(l, " (", 4000);
	l_str(l, al->dso ? al->dso->long_name : "[unknown]", 3500);
	*l->p++ = ')';
}

/*
 * PTWRITE and power events: perf script's text for its synthesized events
 * (the event's fields padded to 34 columns, then the ip), after the same
 * thread, CPU and time columns as a branch.
 */
static const char *const power_names[RB_PWR_COUNT] = { "cbr", "mwait", "pwre", "exstop", "pwrx", "psb" };

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
			len = snprintf(buf, n, " psb offs: %#" PRIx64 " ", v[0]);
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

/*
 * A branch perf synthesizes as a sample of the trace's own kind (CoreSight):
 * printed as a sample, period 1, with its flags and, as perf script -F
 * ip,addr prints it, its target.
 */
static int script_sampled_branch(struct rb_text *sc, const struct rb_trace_ev *ev)
{
	FILE *o = sc->out;
	fprintf(o, "%16s %6d/%-6d [%03u]", comm_of(ev->thread, ev->comm), ev->thread->pid, ev->thread->tid,
		(uint32_t)ev->cpu);
	if (ev->time)
		fprintf(o, " %" PRIu64 ".%06" PRIu64 ":", ev->time / 1000000000, ev->time % 1000000000 / 1000);
	fprintf(o, " %10d branches%s: ", 1, ev->mods ? ev->mods : "");
	print_flags(o, ev->flags);
	print_loc(o, ev->from, &ev->from_al);
	fputs(" => ", o);
	print_loc(o, ev->to, &ev->to_al);
	if (sc->disasm)
		print_insn(sc, &ev->from_al, ev->from);
	fputc('\n', o);
	return ferror(o) ? -1 : 0;
}

static int script_branch(void *ctx, const struct rb_trace_ev *ev)
{
	struct rb_text *sc = ctx;
	struct line l;
	static char kinds[1024][24];        /* perf's name per flags value, made once */
	static uint8_t made[1024];
	uint32_t f = ev->flags & 1023;
	if (!made[f]) {
		flags_name(f, kinds[f], sizeof(kinds[f]));
		made[f] = 1;
	}
	const char *kind = kinds[f];
	int insn = ev->kind == RB_EV_INSTRUCTION;
	if (ev->sample_style)
		return script_sampled_branch(sc, ev);
	l.p = l.b;
	l_pad(&l, comm_of(ev->thread, ev->comm), 16, 0);
	*l.p++ = ' ';
	l_int(&l, ev->thread->pid, 6, 0);
	*l.p++ = '/';
	l_int(&l, ev->thread->tid, 6, 1);
	if (ev->cpu >= 0) {
		l_str(&l, " [", 1000);
		l_uint(&l, (uint64_t)ev->cpu, 10, 3, '0');
		*l.p++ = ']';
	}
	*l.p++ = ' ';
	l_uint(&l, ev->time / 1000000000, 10, 0, ' ');
	*l.p++ = '.';
	l_uint(&l, ev->time % 1000000000, 10, 9, '0');
	l_str(&l, ": ", 1000);
	if (ev->kind == RB_EV_PTWRITE || ev->kind == RB_EV_POWER) {
		char text[160];
		l_pad(&l, ev->kind == RB_EV_PTWRITE ? "ptwrite" : power_names[ev->power % RB_PWR_COUNT], 20, 0);
		l_str(&l, ": ", 1000);
		power_text(ev, text, sizeof(text));
		l_str(&l, text, 1000);
		*l.p++ = ' ';
		l_loc(&l, ev->from, &ev->from_al);
		*l.p++ = '\n';
		fwrite_unlocked(l.b, 1, (size_t)(l.p - l.b), sc->out);
		return ferror(sc->out) ? -1 : 0;
	}
	l_uint(&l, ev->insn_count, 10, 10, ' ');
	if (insn) {
		l_str(&l, " instructions: ", 1000);
		l_loc(&l, ev->from, &ev->from_al);
		*l.p++ = '\n';
		fwrite_unlocked(l.b, 1, (size_t)(l.p - l.b), sc->out);
		return ferror(sc->out) ? -1 : 0;
	}
	l_str(&l, " branches: ", 1000);
	l_pad(&l, kind, 14, 1);
	*l.p++ = ' ';
	if (l.p > l.b + 1024)
		fwrite(l.b, 1, (size_t)(l.p - l.b), sc->out), l.p = l.b;
	l_loc(&l, ev->from, &ev->from_al);
	l_str(&l, " => ", 1000);
	/* the second location may be long: keep room for it */
	if (l.p > l.b + 1024)
		fwrite(l.b, 1, (size_t)(l.p - l.b), sc->out), l.p = l.b;
	l_loc(&l, ev->to, &ev->to_al);
	if (sc->disasm && ev->from) {
		fwrite(l.b, 1, (size_t)(l.p - l.b), sc->out);
		l.p = l.b;
		print_insn(sc, &ev->from_al, ev->from);
	}
	*l.p++ = '\n';
	fwrite_unlocked(l.b, 1, (size_t)(l.p - l.b), sc->out);
	return ferror(sc->out) ? -1 : 0;
}

/* --show-switch-events: a switch as perf script prints it (perf_event__fprintf_switch). */
static int script_switch(void *ctx, const struct rb_switch_ev *sw)
{
	struct rb_text *sc = ctx;
	FILE *o = sc->out;
	char unknown[24];
	snprintf(unknown, sizeof(unknown), ":%d", sw->tid);    /* perf's name for a thread without COMM */
	fprintf(o, "%16s %6d/%-6d", sw->a && sw->a->comm ? sw->a->comm->name : unknown, sw->pid, sw->tid);
	if (sw->cpu >= 0)
		fprintf(o, " [%03d]", sw->cpu);
	fprintf(o, " %" PRIu64 ".%06" PRIu64 ": PERF_RECORD_SWITCH%s %s", sw->time / 1000000000,
		sw->time % 1000000000 / 1000, sw->cpu_wide ? "_CPU_WIDE" : "",
		!sw->out ? "IN         " : !sw->preempt ? "OUT        " : "OUT preempt");
	if (sw->cpu_wide)
		fprintf(o, "  %s pid/tid: %5d/%-5d", sw->out ? "next" : "prev", sw->np_pid, sw->np_tid);
	fputc('\n', o);
	return ferror(o) ? -1 : 0;
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
	if (t->disasm)
		t->cs_ok = cs_open(CS_ARCH_X86, CS_MODE_64, &t->cs) == CS_ERR_OK;
	return t;
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

void rb_text_sink(struct rb_text *t, struct rb_sink *sink)
{
	memset(sink, 0, sizeof(*sink));
	sink->ctx = t;
	if (t->gaps) {
		sink->gap = text_gap;
		return;
	}
	sink->begin = text_machine;
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

int rb_text_failed(const struct rb_text *t)
{
	return ferror(t->out) != 0;
}

int rb_text_finish(struct rb_text *t)
{
	return fflush(t->out) ? -1 : 0;
}

void rb_text_free(struct rb_text *t)
{
	if (!t)
		return;
	if (t->cs_ok)
		cs_close(&t->cs);
	free(t);
}
