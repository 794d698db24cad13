/*
 * cli.h - what the rbdecode subcommands share: exit statuses, diagnostics on
 * stderr, and the reader options every command opens its input with.
 */
#ifndef CLI_H
#define CLI_H

#include <stdio.h>
#include "pd.h"

/* Exit statuses of rbdecode (documented in rbdecode(1) and README). */
enum {
	EXIT_OK = 0,          /* everything read */
	EXIT_USAGE = 1,       /* bad command line */
	EXIT_BADINPUT = 2,    /* input could not be opened or is not perf.data */
	EXIT_PARTIAL = 3,     /* input read in part: a damaged record or a truncated file stopped it,
				 or some records were malformed; what was read is reported */
	EXIT_INTERNAL = 4,    /* out of memory or a failure of this program */
};

extern const char *cli_prog;
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_warn_cb(void *ctx, const struct pd_error *w);
/* Remove OUT.tmp-PID files that killed runs left beside @out (what it removed is said on stderr). */
void cli_remove_stale(const char *out);
/* Exit status for a library error code. */
int cli_status_of(int code);

/* Find the command on the command line (cli_args.c) and run it: the exit status. */
int cli_dispatch(int argc, char **argv);
/*
 * Command @name's usage, from the one table of commands (cli_args.c): for
 * getopt's @c 'h' on stdout, returning EXIT_OK; for anything else on
 * stderr, returning EXIT_USAGE.
 */
int cli_usage(const char *name, int c);
/* After getopt: the one operand left, or NULL after saying why, with the usage, on stderr. */
const char *cli_operand(int argc, char **argv, const char *name);
/* getopt_long entries of the selection options cli_session_option takes */
#define CLI_SELECT_OPTIONS \
	{ "time", required_argument, NULL, 't' }, { "cpu", required_argument, NULL, 'C' }, \
	{ "symfs", required_argument, NULL, 's' }, { "kallsyms", required_argument, NULL, 'k' }, \
	{ "vmlinux", required_argument, NULL, 'V' }, { "kcore", required_argument, NULL, 'K' }, \
	{ "jobs", required_argument, NULL, 'J' }, CLI_OPT_SYMDIR
int cmd_info(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_script(int argc, char **argv);
int cmd_gaps(int argc, char **argv);
int cmd_elements(int argc, char **argv);
int cmd_imc(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_coverage(int argc, char **argv);
int cmd_autofdo(int argc, char **argv);
int cmd_folded(int argc, char **argv);
int cmd_speedscope(int argc, char **argv);
int cmd_perfetto(int argc, char **argv);
int cmd_report(int argc, char **argv);
/* `rbdecode info FILE`'s text (header and record counts) to @o: an exit status, after saying why. */
int cli_info_text(const char *path, FILE *o);
int cmd_trace_elements(int argc, char **argv);   /* `elements` on a perf.data */
struct rb_session_opts;
/* The selection options every decoding command shares: 't' --time, 'C' --cpu, 's' --symfs,
 * 'k' --kallsyms, 'V' --vmlinux, 'K' --kcore, 'Y' --symdir (repeatable; CLI_OPT_SYMDIR is its
 * getopt_long entry). Returns 0, or -1 after printing why @arg is wrong. */
#define CLI_OPT_SYMDIR { "symdir", required_argument, NULL, 'Y' }
#define CLI_OPT_SYMFS { "symfs", required_argument, NULL, 's' }
int cli_session_option(int c, const char *arg, struct rb_session_opts *so);
/*
 * perf record --kcore writes a folder: PATH/data (the perf.data) and
 * PATH/kcore_dir (kcore, kallsyms, modules). For such a folder, returns its
 * data file and takes its kcore_dir as --kcore unless --kcore or --vmlinux
 * was given; any other @path is returned as it is.
 */
const char *cli_perf_data_dir(const char *path, struct rb_session_opts *so);
/*
 * The commands that make one file to look at (cli_view.c). cli_view_args
 * parses -o OUT, the selection options, --ftrace TRACE.DAT (default:
 * FILE.trace.dat beside FILE when there is one) and FILE into @so (perf_export set,
 * warnings counted in *@warnings), printing command @name's usage for
 * --help or a bad option; -1 to go on, else the exit status. cli_view_run
 * runs the session: -1 to go on (a stop inside the file is said), else the
 * exit status after saying why (@what: "folding the stacks", ...).
 * cli_write_output calls @write with stdout (@out NULL) or a temporary file
 * beside @out renamed to it once complete, so that a failure leaves nothing
 * under that name (an @out that is not a regular file is written as it is):
 * 0, or EXIT_INTERNAL after saying why. @write returns 0, -1 when writing
 * failed, or an exit status it has said why of (nothing is kept then).
 */
struct rb_sink;
struct rb_session_stats;
int cli_view_args(int argc, char **argv, const char *name, struct rb_session_opts *so, const char **out,
		  unsigned *warnings);
int cli_view_run(const struct rb_session_opts *so, const struct rb_sink *sink, struct rb_session_stats *stats,
		 const char *what);
int cli_write_output(const char *out, int (*write)(void *ctx, FILE *f), void *ctx);
/*
 * The exit status of a view that has nothing to show: 3 (read in part) when
 * trace went undecoded for want of binaries (the session said which), else
 * 2: the recording holds nothing such a view draws.
 */
int cli_nothing_to_show(const struct rb_session_stats *stats);
/*
 * Whether the trace of so->path is timed (its branches' times differ), by
 * a pass of its own that stops at the second time: 1 with *@timed set, 0
 * when it cannot tell (a pipe, which cannot be read twice; a failure, that
 * the run that counts will say).
 */
int cli_view_timed(struct rb_session_opts *so, int *timed);
/* "start,end" in seconds (perf's --time form); sets nanoseconds, 0 for an open side. -1 if malformed. */
int cli_parse_time(const char *s, uint64_t *start, uint64_t *end);

#endif
