/*
 * rbdecode - offline decoder for perf.data recordings: the command-line entry
 * point. Each subcommand lives in its own cmd_*.c; this file dispatches and
 * holds the diagnostics they share.
 */
#include "config.h"
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

const char *cli_prog = "rbdecode";

void cli_error(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", cli_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cli_warn_cb(void *ctx, const struct pd_error *w)
{
	unsigned *count = ctx;
	if (count && ++*count > 20) {
		if (*count == 21)
			fprintf(stderr, "%s: warning: further warnings suppressed\n", cli_prog);
		return;
	}
	fprintf(stderr, "%s: warning: %s\n", cli_prog, w->msg);
}

int cli_status_of(int code)
{
	switch (code) {
	case PD_OK: return EXIT_OK;
	case PD_ERR_NOMEM: case PD_ERR_NOSPC: return EXIT_INTERNAL;
	case PD_ERR_INVAL: return EXIT_USAGE;
	default: return EXIT_BADINPUT;
	}
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s <command> [options] FILE\n"
		"commands:\n"
		"  info [--json] [--header-only | --stats] FILE\n"
		"        header summary (as perf report --header-only) and record counts\n"
		"        (as perf report --stats); FILE may be '-' for a pipe-mode stream\n"
		"  [export] FILE -o OUT.db [--force] [--time S,E] [-C CPUS] [--symfs DIR] [--kallsyms F]\n"
		"         [--vmlinux F | --kcore DIR] [--ftrace TRACE.DAT] [--itrace b|iN|p|w] [--calls]\n"
		"        decode into SQLite with perf's export-to-sqlite schema, plus gaps; FILE.trace.dat\n"
		"        beside FILE (rbrecord --ftrace), or FILE itself as a trace.dat, into ftrace_events;\n"
		"        hardware trace as call paths and branch counts, a row per branch with --itrace=b,\n"
		"        per call with --calls; -o postgresql://HOST/DB (or --pg CONNINFO): the same rows\n"
		"        into PostgreSQL (perf's export-to-postgresql schema), keyed by recording\n"
		"  script [--disasm] [--show-switch-events] [--itrace b|iN|p|w] [--time S,E] [-C CPUS] FILE\n"
		"        samples (and switches, trace branches) as text, in time order, as perf script\n"
		"  gaps [--json] FILE                                every reported loss\n"
		"  coverage [--time S,E] [--json] FILE               per CPU, the fraction of the window the\n"
		"        AUX trace covers (data present and not in a gap)\n"
		"  elements [--pkt-mon | --packets] [--src-addr-n] [--dstream-format] [--multi-session] SNAPSHOT_DIR\n"
		"        CoreSight trace snapshot packets and elements, as trc_pkt_lister -decode\n"
		"  dump --packets [--queue N] FILE\n"
		"        the Intel PT packets of every AUX chunk, as perf report -D shows them\n"
		"  elements [--symfs DIR] PERF.DATA                  the CoreSight elements of its AUX trace\n"
		"  autofdo [--symfs DIR] PERF.DATA                   instruction-range and branch counts\n"
		"        per object from its AUX trace, as simpleperf inject writes them\n"
		"  folded [-o OUT] [--time S,E] [-C CPUS] FILE       folded stacks for flame graphs: call\n"
		"        paths of hardware trace by self time (ns), or call chains by samples\n"
		"  speedscope -o OUT [--time S,E] [-C CPUS] FILE     a speedscope file: per thread the calls\n"
		"        of hardware trace in time (losses as frames), or the samples' call chains\n"
		"  perfetto -o OUT [--time S,E] [-C CPUS] FILE       Chrome Trace Event JSON for Perfetto: calls\n"
		"        per thread, what ran per CPU, losses, IMC counters, ftrace events\n"
		"  report -o OUT.html [--time S,E] [-C CPUS] FILE    one self-contained HTML page: summary,\n"
		"        per-CPU coverage with losses, flame graph, top functions, slowest calls\n"
		"  imc [--power10] [--timebase-hz HZ] [--anchor TB,NS] [--start-tb TB] [--cpu N] [--json] DUMP\n"
		"        a raw POWER trace-imc buffer in time order, with its gaps\n"
		"exit status: 0 ok, 1 usage, 2 unreadable input, 3 input read in part, 4 internal error\n",
		cli_prog);
}

int main(int argc, char **argv)
{
	/* RLIMIT_FSIZE: a write past it fails with EFBIG and is reported, instead of killing us mid-write */
	signal(SIGXFSZ, SIG_IGN);
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("%s %s\n", cli_prog, PACKAGE_VERSION);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "info"))
		return cmd_info(argc - 1, argv + 1);
	if (!strcmp(argv[1], "elements"))
		return cmd_elements(argc - 1, argv + 1);
	if (!strcmp(argv[1], "script"))
		return cmd_script(argc - 1, argv + 1);
	if (!strcmp(argv[1], "gaps"))
		return cmd_gaps(argc - 1, argv + 1);
	if (!strcmp(argv[1], "dump"))
		return cmd_dump(argc - 1, argv + 1);
	if (!strcmp(argv[1], "coverage"))
		return cmd_coverage(argc - 1, argv + 1);
	if (!strcmp(argv[1], "imc"))
		return cmd_imc(argc - 1, argv + 1);
	if (!strcmp(argv[1], "autofdo"))
		return cmd_autofdo(argc - 1, argv + 1);
	if (!strcmp(argv[1], "folded"))
		return cmd_folded(argc - 1, argv + 1);
	if (!strcmp(argv[1], "speedscope"))
		return cmd_speedscope(argc - 1, argv + 1);
	if (!strcmp(argv[1], "perfetto"))
		return cmd_perfetto(argc - 1, argv + 1);
	if (!strcmp(argv[1], "report"))
		return cmd_report(argc - 1, argv + 1);
	if (!strcmp(argv[1], "export"))
		return cmd_export(argc - 1, argv + 1);
	/* rbdecode FILE -o out.db; a missing FILE given so (a path, or -o after it) is export's to report */
	int has_o = 0;
	for (int i = 2; i < argc; i++)
		has_o |= !strcmp(argv[i], "-o") || !strncmp(argv[i], "--output", 8);
	if (!strcmp(argv[1], "-") ||
	    (argv[1][0] != '-' && (access(argv[1], F_OK) == 0 || strchr(argv[1], '/') || strchr(argv[1], '.') || has_o)))
		return cmd_export(argc, argv);
	cli_error("unknown command '%s'", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
