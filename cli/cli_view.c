/*
 * cli_view.c - what the commands that turn a recording into one file to
 * look at share (folded, speedscope, perfetto): their options, the
 * session run with its error mapping, and the output written whole or not
 * at all (a temporary file beside it, renamed into place once complete).
 */
#include "config.h"
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "cli.h"
#include "decoder/session/session.h"
#include "decoder/ftrace/tracedat.h"
#include "store/trace_calls.h"

int cli_view_args(int argc, char **argv, const char *name, struct rb_session_opts *so, const char **out,
		  unsigned *warnings)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' }, CLI_SELECT_OPTIONS,
		{ "ftrace", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	static char beside[4096], fmsg[512];
	static struct rb_tracedat_stats fts;
	const char *ftrace = NULL;
	int c;
	memset(so, 0, sizeof(*so));
	*out = NULL;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:C:j:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': *out = optarg; break;
		case 'F': ftrace = optarg; break;
		case 'j': c = 'J'; /* fall through */
		case 't': case 'C': case 's': case 'Y': case 'k': case 'V': case 'K': case 'J':
			if (cli_session_option(c, optarg, so) < 0)
				return EXIT_USAGE;
			break;
		default:
			return cli_usage(name, c);
		}
	}
	const char *path = cli_operand(argc, argv, name);
	if (!path)
		return EXIT_USAGE;
	so->path = cli_perf_data_dir(path, so);
	/* a recording made with --ftrace carries its trace.dat beside it: merged into the timeline */
	snprintf(beside, sizeof(beside), "%s.trace.dat", so->path);
	if (!ftrace && access(beside, R_OK) == 0)
		ftrace = beside;
	if (ftrace) {
		so->ftrace = ftrace;
		so->ftrace_stats = &fts;
		so->ftrace_msg = fmsg;
		so->ftrace_msglen = sizeof(fmsg);
	}
	so->perf_export = 1;         /* symbol-less code named as in the database, so its calls agree */
	so->warn = cli_warn_cb;
	so->warn_ctx = warnings;
	return -1;
}

int cli_view_run(const struct rb_session_opts *so, const struct rb_sink *sink, struct rb_session_stats *stats,
		 const char *what)
{
	struct pd_error err;
	int rc = rb_session_run(so, sink, stats, &err);
	if (rc < 0 && rc >= PD_ERR_NOATTR) {
		cli_error("%s", err.msg);
		return cli_status_of(rc);
	}
	if (rc) {
		cli_error("stopped while %s: out of memory, or a write failed", what);
		return EXIT_INTERNAL;
	}
	if (stats->stop.code)
		cli_error("%s", stats->stop.msg);
	return -1;
}

int cli_view_timed(struct rb_session_opts *so, int *timed)
{
	if (!strcmp(so->path, "-"))      /* a pipe cannot be read twice */
		return 0;
	struct rb_sink sink;
	struct rb_session_stats stats;
	rb_trace_timed_probe(&sink, timed);
	pd_warn_fn warn = so->warn;
	so->warn = NULL;                  /* said in the run that counts */
	int rc = rb_session_run(so, &sink, &stats, &(struct pd_error){ 0 });
	so->warn = warn;
	return rc == 0 || rc == 1;
}

/*
 * Writes through @write to @o and closes it: 0; the errno of what failed
 * (EIO if none is known) as a negative number; or @write's positive exit
 * status (said already).
 */
static int write_close(FILE *o, int (*write)(void *ctx, FILE *f), void *ctx)
{
	errno = 0;
	int rc = write(ctx, o);
	int e = rc > 0 ? 0 : ferror(o) ? (errno ? errno : EIO) : 0;
	if (fclose(o) && !e && rc <= 0)
		e = errno ? errno : EIO;
	return rc > 0 ? rc : e ? -e : rc ? -(errno ? errno : EIO) : 0;
}

int cli_write_output(const char *out, int (*write)(void *ctx, FILE *f), void *ctx)
{
	if (!out) {
		errno = 0;
		int rc = write(ctx, stdout);
		if (rc > 0)
			return rc;
		if (rc && errno == ENOMEM) {   /* the writer's own allocation */
			cli_error("out of memory writing the output");
			return EXIT_INTERNAL;
		}
		if (rc || fflush(stdout) || ferror(stdout)) {
			cli_error("writing the output failed (standard output): %s", strerror(errno ? errno : EIO));
			return EXIT_INTERNAL;
		}
		return 0;
	}
	/*
	 * Not a regular file (/dev/stdout, a fifo, a device): written as it is;
	 * renaming a file over it would replace the device node itself.
	 */
	struct stat sb;
	int direct = stat(out, &sb) == 0 && !S_ISREG(sb.st_mode);
	char tmp[4096];
	if (!direct)
		cli_remove_stale(out);
	snprintf(tmp, sizeof(tmp), direct ? "%s" : "%s.tmp-%ld", out, (long)getpid());
	FILE *o = fopen(tmp, "w");
	if (!o) {
		cli_error("%s: cannot create: %s", tmp, strerror(errno));
		return EXIT_INTERNAL;
	}
	int e = write_close(o, write, ctx);
	if (!e && !direct && rename(tmp, out))
		e = -errno;
	if (e && !direct)
		unlink(tmp);
	if (e < 0)
		cli_error("%s: writing failed: %s", out, strerror(-e));
	return e < 0 ? EXIT_INTERNAL : e;
}

int cli_nothing_to_show(const struct rb_session_stats *stats)
{
	return stats->binaries_not_found ? EXIT_PARTIAL : EXIT_BADINPUT;
}
