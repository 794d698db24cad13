/*
 * cmd_script.c - `rbdecode script FILE`: the samples, branches and switches
 * of a recording as text in perf script's layout, and `rbdecode gaps FILE`:
 * every loss the recording reports (kernel LOST / LOST_SAMPLES records, AUX
 * records flagged truncated, partial or collision, holes between AUX
 * chunks, AUXTRACE_ERROR records, the ftrace ring's), as text or --json.
 * Option parsing and wiring (command line stage): the session feeds the
 * text sink (store/text) or, for gaps --json, the JSON one (store/json).
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "decoder/session/session.h"
#include "decoder/ftrace/tracedat.h"
#include "store/text/text.h"
#include "store/json/json.h"

static int run_text(int argc, char **argv, int gaps_mode)
{
	static const struct option longopts[] = {
		{ "disasm", no_argument, NULL, 'd' }, { "json", no_argument, NULL, 'j' },
		{ "show-switch-events", no_argument, NULL, 'w' }, CLI_SELECT_OPTIONS,
		{ "fields", required_argument, NULL, 'F' }, { "ns", no_argument, NULL, 'N' },
		{ "hide-call-graph", no_argument, NULL, 'G' }, { "quick", no_argument, NULL, 'Q' },
		{ "itrace", required_argument, NULL, 'I' }, { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	struct rb_text_opts to = { .gaps = gaps_mode };
	int json = 0;
	struct rb_session_opts so;
	unsigned warnings = 0;
	const char *fields[16];
	size_t nr_fields = 0;
	int c;
	memset(&so, 0, sizeof(so));
	optind = 1;
	while ((c = getopt_long(argc, argv, gaps_mode ? "djC:h" : "djC:hF:G", longopts, NULL)) != -1) {
		if (gaps_mode && (c == 'F' || c == 'N' || c == 'G'))
			c = '?';
		switch (c) {
		case 'F':
			if (nr_fields == sizeof(fields) / sizeof(fields[0])) {
				cli_error("script: at most %zu -F options", nr_fields);
				return EXIT_USAGE;
			}
			fields[nr_fields++] = optarg;
			break;
		case 'Q':
			if (!gaps_mode)
				return cli_usage("script", '?');
			so.quick = 1;
			break;
		case 'N': to.ns = 1; break;
		case 'G': to.hide_callchain = 1; break;
		case 'd': to.disasm = 1; break;
		case 'j': json = 1; break;
		case 'w': to.switches = 1; break;
		case 't': case 'C': case 's': case 'Y': case 'k': case 'I': case 'V': case 'K': case 'J':
			if (cli_session_option(c, optarg, &so) < 0)
				return EXIT_USAGE;
			break;
		default:
			return cli_usage(gaps_mode ? "gaps" : "script", c);
		}
	}
	const char *path = cli_operand(argc, argv, gaps_mode ? "gaps" : "script");
	if (!path)
		return EXIT_USAGE;
	so.path = cli_perf_data_dir(path, &so);
	to.symfs = so.machine.symfs;
	so.warn = cli_warn_cb;
	so.warn_ctx = &warnings;
	struct rb_text *text = NULL;
	struct rb_json_gaps *gaps = NULL;
	if (gaps_mode && json) {
		if (!(gaps = rb_json_gaps_new())) {
			cli_error("out of memory");
			return EXIT_INTERNAL;
		}
	} else {
		text = rb_text_new(stdout, &to);
		if (!text) {
			cli_error("out of memory");
			return EXIT_INTERNAL;
		}
		if (!rb_text_disasm_ok(text))
			cli_error("capstone could not be initialised: no disassembly");
		for (size_t i = 0; i < nr_fields; i++)
			if (rb_text_fields(text, fields[i], stderr) < 0) {     /* perf's message, then the usage */
				rb_text_free(text);
				return cli_usage("script", '?');
			}
	}
	/*
	 * Millions of lines: big writes, and a pipe on standard output made big
	 * enough to take one (64 KiB by default: each 1 MiB write would wait for
	 * the reader 16 times).
	 * Not being allowed to grow it (pipe-max-size) changes nothing else.
	 */
	static char obuf[1 << 20];
	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
#ifdef F_SETPIPE_SZ
	(void)fcntl(STDOUT_FILENO, F_SETPIPE_SZ, (int)sizeof(obuf));
#endif
	struct rb_sink sink;
	struct rb_ftrace_sink fs;
	if (gaps) {
		rb_json_gaps_sink(gaps, &sink);
		rb_json_gaps_ftrace_sink(gaps, &fs);
	} else {
		rb_text_sink(text, &sink);
		rb_text_ftrace_sink(text, &fs);
		(void)rb_text_begin(text);      /* a failed write shows in rb_text_failed below */
	}
	struct rb_session_stats stats;
	struct pd_error err;
	int ftrace_only = gaps_mode && rb_tracedat_is(so.path);
	memset(&stats, 0, sizeof(stats));
	/* gaps: also the ftrace ring's, from FILE.trace.dat beside the recording (merged by the session) */
	char dat[4096], msg[512] = "";
	struct rb_tracedat_stats ts;
	memset(&ts, 0, sizeof(ts));
	snprintf(dat, sizeof(dat), "%s.trace.dat", so.path);
	if (gaps_mode && !ftrace_only && access(dat, R_OK) == 0) {
		so.ftrace = dat;
		so.ftrace_stats = &ts;
		so.ftrace_msg = msg;
		so.ftrace_msglen = sizeof(msg);
	}
	int rc = ftrace_only ? 0 : rb_session_run(&so, &sink, &stats, &err);
	int fpartial = ts.partial;
	if (fpartial)
		cli_error("%s", msg);
	if (ftrace_only) {         /* FILE itself is a trace.dat: read alone */
		int frc = rb_tracedat_run(so.path, &fs, &ts, msg, sizeof(msg));
		if (frc == -1 || ts.partial)
			cli_error("%s", msg);
		if (frc == -1) {
			rb_json_gaps_free(gaps);
			rb_text_free(text);
			return EXIT_BADINPUT;
		}
		fpartial = ts.partial;
		if (frc)
			rc = frc;
	}
	int refused = 0;
	const char *note = text ? rb_text_message(text, &refused) : NULL;
	if (rc == RB_TEXT_STOP_FIELDS || rc == RB_TEXT_STOP_NOMEM) {
		if (rc == RB_TEXT_STOP_FIELDS)
			fprintf(stderr, "%s\n", note ? note : "");     /* perf's own message, as perf prints it */
		else
			cli_error("out of memory");
		rb_text_free(text);
		return rc == RB_TEXT_STOP_FIELDS ? EXIT_USAGE : EXIT_INTERNAL;
	}
	if (note)
		cli_error("%s", note);
	int wfailed = text ? rb_text_failed(text) : ferror(stdout);
	if (rc && wfailed) {      /* the sink stopped the session: the output could not be written */
		cli_error("writing the output failed (standard output): %s",
			  strerror(text ? rb_text_write_errno(text) : EIO));
		rb_json_gaps_free(gaps);
		rb_text_free(text);
		return EXIT_INTERNAL;
	}
	if (rc < 0 && rc >= PD_ERR_NOATTR) {
		cli_error("%s", err.msg);
		rb_json_gaps_free(gaps);
		rb_text_free(text);
		return cli_status_of(rc);
	}
	if (gaps)
		(void)rb_json_gaps_write(gaps, stdout, so.path,   /* a failed write shows in ferror below */
					 rb_session_partial(&stats) || fpartial);
	else if (json)       /* script --json: nothing but a newline after the text, as before */
		fputc('\n', stdout);
	if (stats.stop.code)
		cli_error("%s", stats.stop.msg);
	errno = 0;
	int ffailed = text ? rb_text_finish(text) : fflush(stdout) || ferror(stdout);
	int werr = text ? rb_text_write_errno(text) : errno ? errno : EIO;
	rb_text_free(text);
	rb_json_gaps_free(gaps);
	if (rc || ffailed) {
		cli_error("writing the output failed (standard output): %s", strerror(werr));
		return EXIT_INTERNAL;
	}
	return rb_session_partial(&stats) || fpartial ? EXIT_PARTIAL : EXIT_OK;
}

int cmd_script(int argc, char **argv) { return run_text(argc, argv, 0); }
int cmd_gaps(int argc, char **argv) { return run_text(argc, argv, 1); }
