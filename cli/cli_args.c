/*
 * cli_args.c - the command line every rbdecode command shares, as GNU
 * tools take theirs: the command word may come after options (`rbdecode
 * -o out.db export FILE`) or not at all (`rbdecode -o out.db FILE`,
 * `rbdecode FILE --output=out.db`: export), options and operands come in
 * any order (each command parses with getopt_long, which permutes), -oFILE,
 * -o FILE, --output=FILE and --output FILE alike; `--version` anywhere;
 * `--help` / `-h` after any command prints that command's usage on stdout.
 * The commands and their one-line usage are listed once, here.
 */
#include "config.h"
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

struct cli_command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *synopsis;   /* operands and options, after "NAME " */
	const char *what;       /* what it does, indented lines */
};

#define SELECT "[--time S,E] [-C CPUS] [--symfs DIR] [--symdir DIR] [--kallsyms F] [--vmlinux F | --kcore DIR] [--jobs N]"
static const struct cli_command commands[] = {
	{ "info", cmd_info, "[--json] [--header-only | --stats] [--symfs DIR] [--symdir DIR] [--vmlinux F | --kcore DIR] FILE",
	  "header summary (as perf report --header-only) and record counts\n"
	  "(as perf report --stats); FILE may be '-' for a pipe-mode stream" },
	{ "export", cmd_export, "FILE -o OUT.db [--force] " SELECT "\n"
	  "         [--ftrace TRACE.DAT] [--itrace b|iN|p|w] [--calls] [--quick]",
	  "decode into SQLite with perf's export-to-sqlite schema, plus gaps (the command word\n"
	  "may be left out: rbdecode -o OUT.db FILE); FILE.trace.dat beside FILE (rbrecord --ftrace),\n"
	  "or FILE itself as a trace.dat, into ftrace_events; hardware trace as call paths and branch\n"
	  "counts, a row per branch with --itrace=b, per call with --calls; -o postgresql://HOST/DB\n"
	  "(or --pg CONNINFO): the same rows into PostgreSQL (perf's export-to-postgresql schema),\n"
	  "keyed by recording" },
	{ "script", cmd_script, "[-F FIELDS] [--ns] [-G] [--disasm] [--show-switch-events] [--itrace b|iN|p|w]\n"
	  "         " SELECT " FILE",
	  "samples (and switches, trace branches) as text, in time order, byte for byte as perf\n"
	  "script (6.1) prints them; -F/--fields as perf's (comm,tid,pid,time,cpu,event,ip,sym,\n"
	  "symoff,dso,addr,period,flags,synth; TYPE:LIST, +FIELD, -FIELD), --ns nanosecond times,\n"
	  "-G/--hide-call-graph" },
	{ "gaps", cmd_gaps, "[--json] [--quick] [--itrace b|iN|p|w] " SELECT " FILE", "every reported loss" },
	{ "coverage", cmd_coverage, "[--time S,E] [--json] [--quick] [--symfs DIR] [--symdir DIR] [--vmlinux F | --kcore DIR] FILE",
	  "per CPU, the fraction of the window the AUX trace covers (data present and not in a gap)" },
	{ "elements", cmd_elements, "[--pkt-mon | --packets] [--src-addr-n] [--dstream-format] [--multi-session]\n"
	  "         [--buffer NAME] SNAPSHOT_DIR | [--symfs DIR] [--symdir DIR] [--vmlinux F | --kcore DIR] [-C CPUS] PERF.DATA",
	  "CoreSight trace snapshot packets and elements, as trc_pkt_lister -decode; for a\n"
	  "perf.data, the CoreSight elements of its AUX trace" },
	{ "dump", cmd_dump, "--packets [--queue N] FILE",
	  "the Intel PT packets of every AUX chunk, as perf report -D shows them" },
	{ "autofdo", cmd_autofdo, "[--symfs DIR] [--symdir DIR] [--vmlinux F | --kcore DIR] [-C CPUS] PERF.DATA",
	  "instruction-range and branch counts per object from its AUX trace, as simpleperf\n"
	  "inject writes them" },
	{ "folded", cmd_folded, "[-o OUT] " SELECT " [--ftrace TRACE.DAT] FILE",
	  "one line per stack, 'comm;outermost;...;leaf weight', as flamegraph.pl reads them:\n"
	  "from hardware trace, each call path's self time in ns; else samples per call chain" },
	{ "speedscope", cmd_speedscope, "-o OUT " SELECT " [--ftrace TRACE.DAT] FILE",
	  "a speedscope file (https://www.speedscope.app): per thread, the calls of hardware\n"
	  "trace as open/close frame events in perf-clock ns, losses as '[trace lost: REASON]'\n"
	  "frames; else per thread and event the samples' call chains weighed by period" },
	{ "perfetto", cmd_perfetto, "-o OUT " SELECT " [--ftrace TRACE.DAT] FILE",
	  "Chrome's Trace Event Format JSON (ui.perfetto.dev, chrome://tracing): per thread the\n"
	  "calls of hardware trace as slices, per CPU what ran (context switches) and ftrace\n"
	  "events, losses as '[trace lost: REASON]' slices, IMC counters, samples' call chains" },
	{ "report", cmd_report, "-o OUT.html " SELECT " [--ftrace TRACE.DAT] FILE",
	  "one self-contained HTML page: the recording's summary, per-CPU coverage with every\n"
	  "loss marked, a flame graph (click to zoom, search), top functions, slowest calls" },
	{ "imc", cmd_imc, "[--power10] [--timebase-hz HZ] [--anchor TB,NS] [--start-tb TB] [--cpu N] [--json] DUMP",
	  "a raw POWER trace-imc buffer in time order, with its gaps" },
};
#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

/*
 * The options of any command that take a value as the next argument, so
 * that a value before the command word ("-o info") is not taken for one.
 * Keep in step with the commands' getopt tables.
 */
static const char value_short[] = "oCjF";
static const char *const value_long[] = {
	"output", "time", "cpu", "symfs", "symdir", "kallsyms", "vmlinux", "kcore", "jobs", "itrace", "ftrace",
	"queue", "buffer", "anchor", "start-tb", "timebase-hz", "pg", "fields", NULL,
};

static void usage(FILE *f)
{
	fprintf(f, "usage: %s [options] <command> [options] FILE   (options and FILE in any order)\n"
		   "       %s -o OUT.db [options] FILE              (export)\n"
		   "       %s --version | --help | <command> --help\n"
		   "commands:\n", cli_prog, cli_prog, cli_prog);
	for (size_t i = 0; i < NR_COMMANDS; i++) {
		fprintf(f, "  %s %s\n        ", commands[i].name, commands[i].synopsis);
		for (const char *p = commands[i].what; *p; p++) {
			fputc(*p, f);
			if (*p == '\n')
				fputs("        ", f);
		}
		fputc('\n', f);
	}
	fprintf(f, "--symdir DIR (repeatable): folders of binaries searched below, matched by build-id (by name\n"
		   "        without one), before --symfs and ~/.debug\n"
		   "exit status: 0 ok, 1 usage, 2 unreadable input, 3 input read in part (also: trace not decoded\n"
		   "        for want of a binary), 4 internal error\n");
}

/* Whether option @a takes the next argument as its value ("-o", "-fo", "--output"; not "-oX", "--output=X"). */
static int takes_value(const char *a)
{
	if (a[1] != '-') {
		for (const char *p = a + 1; *p; p++)
			if (strchr(value_short, *p))
				return p[1] == '\0';
		return 0;
	}
	for (size_t i = 0; value_long[i]; i++)
		if (!strcmp(a + 2, value_long[i]))
			return 1;
	return 0;
}

static const struct cli_command *find(const char *name)
{
	for (size_t i = 0; i < NR_COMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/* "usage: rbdecode NAME SYNOPSIS" and what it does */
static void command_usage(FILE *f, const struct cli_command *cmd)
{
	fprintf(f, "usage: %s %s %s\n  ", cli_prog, cmd->name, cmd->synopsis);
	for (const char *p = cmd->what; *p; p++) {
		fputc(*p, f);
		if (*p == '\n')
			fputs("  ", f);
	}
	fputc('\n', f);
}

int cli_usage(const char *name, int c)
{
	const struct cli_command *cmd = find(name);
	if (cmd)
		command_usage(c == 'h' ? stdout : stderr, cmd);
	return c == 'h' ? EXIT_OK : EXIT_USAGE;
}

const char *cli_operand(int argc, char **argv, const char *name)
{
	if (optind == argc - 1)
		return argv[optind];
	cli_error("%s: %s", name, optind < argc ? "one input file expected, not more" : "an input file expected");
	cli_usage(name, '?');
	return NULL;
}

int cli_dispatch(int argc, char **argv)
{
	int first = 0, version = 0, help = 0, has_o = 0;   /* first: index of the first operand */
	for (int i = 1; i < argc && !first; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--")) {
			first = i + 1 < argc ? i + 1 : 0;
			break;
		}
		if (a[0] != '-' || !a[1]) {
			first = i;
			break;
		}
		help |= !strcmp(a, "--help") || !strcmp(a, "-h");
		has_o |= !strncmp(a, "-o", 2) || !strncmp(a, "--output", 8);
		if (takes_value(a))
			i++;
	}
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		version |= !strcmp(argv[i], "--version");
	if (version) {
		printf("%s %s\n", cli_prog, PACKAGE_VERSION);
		return EXIT_OK;
	}
	const struct cli_command *cmd = first ? find(argv[first]) : NULL;
	if (!cmd && help) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!cmd && first && strcmp(argv[first], "-") && !has_o && access(argv[first], F_OK) != 0 &&
	    !strchr(argv[first], '/') && !strchr(argv[first], '.')) {
		/* a word that is neither a command nor a recording, and no -o to make it an export */
		for (int i = first + 1; i < argc && !has_o; i++)
			has_o = !strncmp(argv[i], "-o", 2) || !strncmp(argv[i], "--output", 8);
		if (!has_o) {
			cli_error("unknown command '%s'", argv[first]);
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (!cmd && argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!cmd)
		cmd = find("export");
	/* the command's own parser gets "rbdecode NAME" (for getopt's messages), then every other argument */
	static char self[64];
	snprintf(self, sizeof(self), "%s %s", cli_prog, cmd->name);
	argv[0] = self;
	if (first && !strcmp(argv[first], cmd->name)) {
		memmove(argv + first, argv + first + 1, (size_t)(argc - first) * sizeof(*argv));   /* argv[argc] too */
		argc--;
	}
	return cmd->run(argc, argv);
}
