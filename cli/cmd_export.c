/*
 * cmd_export.c - `rbdecode FILE -o out.db` (also `rbdecode export ...`):
 * decode a recording into SQLite with perf's export-to-sqlite schema. The
 * session reads and orders records and resolves symbols; the store writes
 * rows. A progress line goes to stderr when it is a terminal.
 *
 * SIGINT, SIGTERM or SIGHUP stop the export at the next event the session
 * delivers: the unfinished database and the unpacked archive are removed,
 * a message says so, and rbdecode then dies of that signal (as a shell
 * expects of an interrupted command). A second signal ends it at once.
 */
#include "config.h"
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "unpack.h"
#include "cli.h"
#include "session.h"
#include "store.h"

struct progress {
	int on;
	struct timespec start, last;
};

static double since(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static void progress_cb(void *ctx, uint64_t done, uint64_t total)
{
	struct progress *p = ctx;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (since(&p->last, &now) < 0.2 && done < total)
		return;
	p->last = now;
	double el = since(&p->start, &now), rate = el > 0 ? (double)done / el : 0;
	if (total) {
		double left = rate > 0 ? (double)(total - (done < total ? done : total)) / rate : 0;
		fprintf(stderr, "\r%5.1f%%  %8.1f MB  %7.1f MB/s  %4.0f s left ", 100.0 * (double)done / (double)total,
			(double)done / 1e6, rate / 1e6, left);
	} else {
		fprintf(stderr, "\r%8.1f MB  %7.1f MB/s ", (double)done / 1e6, rate / 1e6);
	}
}

/* "start,end" in seconds (perf's --time form, e.g. 1844.56,1845); either side may be empty. */
int cli_parse_time(const char *s, uint64_t *a, uint64_t *b)
{
	const char *comma = strchr(s, ',');
	if (!comma)
		return -1;
	char *end;
	*a = *b = 0;
	if (comma != s) {
		double v = strtod(s, &end);
		if (end != comma || v < 0)
			return -1;
		*a = (uint64_t)(v * 1e9 + 0.5);
	}
	if (comma[1]) {
		double v = strtod(comma + 1, &end);
		if (*end || v < 0)
			return -1;
		*b = (uint64_t)(v * 1e9 + 0.5);
	}
	return *b && *b < *a ? -1 : 0;
}

int cli_session_option(int c, const char *arg, struct rb_session_opts *so)
{
	switch (c) {
	case 't':
		if (cli_parse_time(arg, &so->time_start, &so->time_end) < 0) {
			cli_error("--time wants START,END in seconds, got '%s'", arg);
			return -1;
		}
		return 0;
	case 'C': so->cpus = arg; return 0;
	case 's': so->machine.symfs = arg; return 0;
	case 'k': so->machine.kallsyms = arg; return 0;
	}
	return -1;
}

static void export_usage(FILE *f)
{
	fprintf(f,
		"usage: %s [export] FILE -o OUT.db [options]\n"
		"  -o, --output FILE     database to write (built as FILE.tmp-PID, renamed when complete)\n"
		"  -f, --force           replace OUT.db if it exists\n"
		"      --time START,END  only samples in this window (seconds, as perf script --time)\n"
		"  -C, --cpu LIST        only samples and switches on these CPUs (0,2-3)\n"
		"      --symfs DIR       look for objects under DIR\n"
		"      --kallsyms FILE   kernel symbols (default: build-id cache, else the running kernel's)\n"
		"  -q, --quiet           no progress or summary\n", cli_prog);
}

static int export_run(struct rb_session_opts *so_in, struct rb_store_opts *sto_in, int quiet);

static volatile sig_atomic_t stop_signal;   /* the signal that asked to stop, 0 if none */

static void on_stop(int sig)
{
	if (stop_signal) {          /* asked twice: stop now, cleanup or not */
		signal(sig, SIG_DFL);
		raise(sig);
	}
	stop_signal = sig;
}

/* A signal ignored on entry stays ignored (nohup, background jobs of a non-interactive shell). */
static void catch_stop_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa, old;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
}

/* After the cleanup: end as the signal would have ended us. */
static void die_of_stop_signal(void)
{
	int sig = stop_signal;
	signal(sig, SIG_DFL);
	raise(sig);
}

/* The store's sink behind a check for a stop request (a signal cannot stop SQLite safely itself). */
#define SINK_STOPPED 0x5709
struct stop_sink {
	const struct rb_sink *in;
	struct rb_sink sink;
};
#define STOP_CHECK(ss) do { if (stop_signal) return SINK_STOPPED; } while (0)
static int ss_begin(void *c, struct pd_reader *r, struct rb_machine *m)
{
	struct stop_sink *ss = c;
	STOP_CHECK(ss);
	return ss->in->begin ? ss->in->begin(ss->in->ctx, r, m) : 0;
}
static int ss_sample(void *c, const struct rb_sample_ev *ev)
{
	struct stop_sink *ss = c;
	STOP_CHECK(ss);
	return ss->in->sample ? ss->in->sample(ss->in->ctx, ev) : 0;
}
static int ss_switch(void *c, const struct rb_switch_ev *ev)
{
	struct stop_sink *ss = c;
	STOP_CHECK(ss);
	return ss->in->context_switch ? ss->in->context_switch(ss->in->ctx, ev) : 0;
}
static int ss_gap(void *c, const struct rb_gap_ev *ev)
{
	struct stop_sink *ss = c;
	STOP_CHECK(ss);
	return ss->in->gap ? ss->in->gap(ss->in->ctx, ev) : 0;
}
static int ss_aux(void *c, const struct rb_aux_ev *ev)
{
	struct stop_sink *ss = c;
	STOP_CHECK(ss);
	return ss->in->aux_buffer ? ss->in->aux_buffer(ss->in->ctx, ev) : 0;
}
static int ss_end(void *c)
{
	struct stop_sink *ss = c;
	STOP_CHECK(ss);
	return ss->in->end ? ss->in->end(ss->in->ctx) : 0;
}

int cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' }, { "force", no_argument, NULL, 'f' },
		{ "time", required_argument, NULL, 't' }, { "cpu", required_argument, NULL, 'C' },
		{ "symfs", required_argument, NULL, 's' }, { "kallsyms", required_argument, NULL, 'k' },
		{ "quiet", no_argument, NULL, 'q' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct rb_session_opts so;
	struct rb_store_opts sto;
	int quiet = 0, c;
	memset(&so, 0, sizeof(so));
	memset(&sto, 0, sizeof(sto));
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:fC:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': sto.path = optarg; break;
		case 'f': sto.force = 1; break;
		case 't': case 'C': case 's': case 'k':
			if (cli_session_option(c, optarg, &so) < 0)
				return EXIT_USAGE;
			break;
		case 'q': quiet = 1; break;
		case 'h': export_usage(stdout); return EXIT_OK;
		default: export_usage(stderr); return EXIT_USAGE;
		}
	}
	if (optind != argc - 1 || !sto.path) {
		export_usage(stderr);
		return EXIT_USAGE;
	}
	so.path = argv[optind];
	so.perf_export = 1;
	sto.source = so.path;
	char msg[512];
	struct rb_unpacked un = { 0 };
	catch_stop_signals();     /* before unpacking: a signal during it stops the export at its first event */
	if (rb_archive_detect(so.path)) {
		if (rb_archive_unpack(so.path, NULL, &un, msg, sizeof(msg)) < 0) {
			cli_error("%s", msg);
			return EXIT_BADINPUT;
		}
		so.path = un.perf_data;
		if (!so.machine.buildid_dir)
			so.machine.buildid_dir = un.buildid_dir;
	}
	int status = export_run(&so, &sto, quiet);
	rb_archive_cleanup(&un);
	if (stop_signal) {
		cli_error("stopped by %s: %s", stop_signal == SIGINT ? "SIGINT" : stop_signal == SIGTERM ? "SIGTERM" : "SIGHUP",
			  status == EXIT_OK || status == EXIT_PARTIAL ? "the database was already complete and is kept"
								       : "nothing was written");
		die_of_stop_signal();
	}
	return status;
}

static int export_run(struct rb_session_opts *so_in, struct rb_store_opts *sto_in, int quiet)
{
	struct rb_session_opts so = *so_in;
	struct rb_store_opts sto = *sto_in;
	unsigned warnings = 0;
	so.warn = cli_warn_cb;
	so.warn_ctx = &warnings;
	struct progress prog = { .on = !quiet && isatty(2) };
	if (prog.on) {
		clock_gettime(CLOCK_MONOTONIC, &prog.start);
		prog.last = prog.start;
		so.progress = progress_cb;
		so.progress_ctx = &prog;
	}

	char msg[512];
	struct rb_store *st;
	if (rb_store_open(&st, &sto, msg, sizeof(msg)) < 0) {
		cli_error("%s", msg);
		return EXIT_BADINPUT;
	}
	struct rb_session_stats stats;
	struct pd_error err;
	struct stop_sink ss = { rb_store_sink(st), { 0 } };
	ss.sink = (struct rb_sink){ .ctx = &ss, .begin = ss_begin, .sample = ss_sample, .context_switch = ss_switch,
				    .gap = ss_gap, .aux_buffer = ss_aux, .end = ss_end };
	int rc = rb_session_run(&so, &ss.sink, &stats, &err);
	if (prog.on)
		fputc('\n', stderr);
	if (rc < 0 && rc >= PD_ERR_NOATTR) {
		cli_error("%s", err.msg);
		rb_store_abort(st);
		return cli_status_of(rc);
	}
	if (rc == SINK_STOPPED || (!rc && stop_signal)) {
		rb_store_abort(st);       /* the caller reports the signal */
		return EXIT_INTERNAL;
	}
	if (rc) {
		const char *why = rb_store_error(st);
		cli_error("writing %s failed: %s", sto.path, why ? why : "the store refused a row");
		rb_store_abort(st);
		return EXIT_INTERNAL;
	}
	uint64_t samples = rb_store_rows(st, "samples"), switches = rb_store_rows(st, "context_switches");
	uint64_t syms = rb_store_rows(st, "symbols"), gaps = rb_store_rows(st, "gaps");
	if (rb_store_finish(st, &stats, msg, sizeof(msg)) < 0) {
		cli_error("%s", msg);
		return EXIT_INTERNAL;
	}
	if (stats.stop.code)
		cli_error("%s", stats.stop.msg);
	if (!quiet)
		fprintf(stderr, "%s: wrote %s: %" PRIu64 " samples, %" PRIu64 " symbols, %" PRIu64
			" context switches, %" PRIu64 " gaps from %" PRIu64 " records%s\n",
			cli_prog, sto.path, samples, syms, switches, gaps, stats.records,
			stats.stop.code || stats.malformed ? " (partial: see decode_stats)" : "");
	return stats.stop.code || stats.malformed ? EXIT_PARTIAL : EXIT_OK;
}
