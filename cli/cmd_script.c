/*
 * cmd_script.c - `rbdecode script FILE`: the samples of a recording as text,
 * in perf script's default layout (comm pid/tid [cpu] time: period event:
 * ip symbol+offset (object), then the call chain one entry per line), with
 * `--disasm` adding the instruction at each sample ip (capstone, read from
 * the object file through its mapping). `rbdecode gaps FILE` lists every
 * loss the recording reports (kernel LOST / LOST_SAMPLES records, AUX
 * records flagged truncated, partial or collision, holes between AUX chunks,
 * AUXTRACE_ERROR records), as text or --json.
 */
#include "config.h"
#include <capstone/capstone.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "session.h"
#include "tracedat.h"

struct script {
	FILE *out;
	struct pd_reader *r;
	int disasm, json;
	const char *symfs;
	csh cs;
	int cs_ok;
	json_t *gaps;
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
static void print_insn(struct script *sc, const struct rb_addr_loc *al, uint64_t ip)
{
	if (!sc->cs_ok || !al->map || al->kernel || !al->dso)
		return;
	/* the runtime object (symbols may have come from a separate debug file, which has no code) */
	if (al->dso->long_name[0] != '/')
		return;
	char path[8192];
	snprintf(path, sizeof(path), "%s%s", sc->symfs ? sc->symfs : "", al->dso->long_name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
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

static int script_sample(void *ctx, const struct rb_sample_ev *ev)
{
	struct script *sc = ctx;
	const struct pd_sample *s = ev->s;
	FILE *o = sc->out;
	char tbuf[40] = "";
	if (s->type & PD_SAMPLE_TIME)
		snprintf(tbuf, sizeof(tbuf), " %" PRIu64 ".%06" PRIu64 ":", s->time / 1000000000, s->time % 1000000000 / 1000);
	fprintf(o, "%16s %6d/%-6d", ev->comm ? ev->comm->name : ev->thread->comm->name, ev->thread->pid, ev->thread->tid);
	if (s->type & PD_SAMPLE_CPU)
		fprintf(o, " [%03u]", s->cpu);
	uint64_t period = (s->type & PD_SAMPLE_PERIOD) ? s->period : ev->es->attr.sample_period;
	fprintf(o, "%s %10" PRIu64 " %s: ", tbuf, period, ev->es->name ? ev->es->name : "event");
	print_loc(o, s->ip, &ev->al);
	if (sc->disasm)
		print_insn(sc, &ev->al, s->ip);
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

static int gaps_gap(void *ctx, const struct rb_gap_ev *g)
{
	struct script *sc = ctx;
	if (sc->json) {
		json_t *o = json_pack("{s:I, s:I, s:i, s:i, s:i, s:s, s:s, s:I, s:I, s:I, s:s}",
				      "time_start", (json_int_t)g->time_start, "time_end", (json_int_t)g->time_end,
				      "cpu", g->cpu, "pid", g->pid, "tid", g->tid, "source", g->source,
				      "reason", g->reason, "bytes_lost", (json_int_t)g->bytes_lost,
				      "records_lost", (json_int_t)g->records_lost,
				      "file_offset", (json_int_t)g->file_offset, "detail", g->detail ? g->detail : "");
		return o ? json_array_append_new(sc->gaps, o) : -1;
	}
	fprintf(sc->out, "%16" PRIu64 " %4d %7d/%-7d %-20s %12" PRIu64 " %12" PRIu64 " %10" PRIu64 "  %s\n",
		g->time_start, g->cpu, g->pid, g->tid, g->reason, g->bytes_lost, g->records_lost,
		g->file_offset, g->detail ? g->detail : "");
	return 0;
}

static int run_text(int argc, char **argv, int gaps_mode)
{
	static const struct option longopts[] = {
		{ "disasm", no_argument, NULL, 'd' }, { "json", no_argument, NULL, 'j' },
		{ "time", required_argument, NULL, 't' }, { "cpu", required_argument, NULL, 'C' },
		{ "symfs", required_argument, NULL, 's' }, { "kallsyms", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	struct script sc = { .out = stdout };
	struct rb_session_opts so;
	unsigned warnings = 0;
	int c;
	memset(&so, 0, sizeof(so));
	optind = 1;
	while ((c = getopt_long(argc, argv, "djC:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': sc.disasm = 1; break;
		case 'j': sc.json = 1; break;
		case 't': case 'C': case 's': case 'k':
			if (cli_session_option(c, optarg, &so) < 0)
				return EXIT_USAGE;
			break;
		case 'h':
		default:
			fprintf(c == 'h' ? stdout : stderr, "usage: %s %s [--time S,E] [-C CPUS] [--symfs DIR] [--kallsyms F] %s FILE\n",
				cli_prog, gaps_mode ? "gaps" : "script", gaps_mode ? "[--json]" : "[--disasm]");
			return c == 'h' ? EXIT_OK : EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		cli_error("one input file expected");
		return EXIT_USAGE;
	}
	so.path = argv[optind];
	sc.symfs = so.machine.symfs;
	so.warn = cli_warn_cb;
	so.warn_ctx = &warnings;
	if (sc.disasm) {
		sc.cs_ok = cs_open(CS_ARCH_X86, CS_MODE_64, &sc.cs) == CS_ERR_OK;
		if (!sc.cs_ok)
			cli_error("capstone could not be initialised: no disassembly");
	}
	struct rb_sink sink = { .ctx = &sc };
	if (gaps_mode) {
		sink.gap = gaps_gap;
		if (sc.json)
			sc.gaps = json_array();
		else
			printf("%16s %4s %15s %-20s %12s %12s %10s  %s\n", "time", "cpu", "pid/tid", "reason",
			       "bytes_lost", "records_lost", "offset", "detail");
	} else {
		sink.sample = script_sample;
	}
	struct rb_session_stats stats;
	struct pd_error err;
	int ftrace_only = gaps_mode && rb_tracedat_is(so.path);
	memset(&stats, 0, sizeof(stats));
	int rc = ftrace_only ? 0 : rb_session_run(&so, &sink, &stats, &err);
	if (sc.cs_ok)
		cs_close(&sc.cs);
	/* gaps: also the ftrace ring's, from FILE.trace.dat beside the recording (or FILE itself) */
	char dat[4096], msg[512];
	snprintf(dat, sizeof(dat), ftrace_only ? "%s" : "%s.trace.dat", so.path);
	int fpartial = 0;
	if (gaps_mode && !rc && (ftrace_only || access(dat, R_OK) == 0)) {
		struct rb_ftrace_sink fs = { .ctx = &sc, .gap = gaps_gap };
		struct rb_tracedat_stats ts;
		int frc = rb_tracedat_run(dat, &fs, &ts, msg, sizeof(msg));
		if (frc == -1 || ts.partial)
			cli_error("%s", msg);
		if (frc == -1 && ftrace_only) {
			json_decref(sc.gaps);
			return EXIT_BADINPUT;
		}
		fpartial = frc == -1 || ts.partial;
		if (frc > 0 || frc < -1)
			rc = frc;
	}
	if (rc < 0 && rc >= PD_ERR_NOATTR) {
		cli_error("%s", err.msg);
		json_decref(sc.gaps);
		return cli_status_of(rc);
	}
	if (sc.json) {
		json_t *root = json_pack("{s:s, s:o, s:b}", "file", so.path, "gaps", sc.gaps,
					 "partial", stats.stop.code != 0 || stats.malformed != 0 || fpartial);
		json_dumpf(root, stdout, JSON_INDENT(2));
		fputc('\n', stdout);
		json_decref(root);
	}
	if (stats.stop.code)
		cli_error("%s", stats.stop.msg);
	if (rc || fflush(stdout)) {
		cli_error("writing the output failed");
		return EXIT_INTERNAL;
	}
	return stats.stop.code || stats.malformed || fpartial ? EXIT_PARTIAL : EXIT_OK;
}

int cmd_script(int argc, char **argv) { return run_text(argc, argv, 0); }
int cmd_gaps(int argc, char **argv) { return run_text(argc, argv, 1); }
