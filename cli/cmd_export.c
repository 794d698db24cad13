/*
 * cmd_export.c - `rbdecode FILE -o out.db` (also `rbdecode export ...`):
 * decode a recording into SQLite with perf's export-to-sqlite schema, or
 * (-o postgresql://..., --pg CONNINFO) into a PostgreSQL database with
 * perf's export-to-postgresql schema, keyed by recording. The
 * session reads and orders records and resolves symbols; the store writes
 * rows. A progress line goes to stderr when it is a terminal.
 *
 * SIGINT, SIGTERM or SIGHUP stop the export at the next event the session
 * delivers: the unfinished database and the unpacked archive are removed,
 * a message says so, and rbdecode then dies of that signal (as a shell
 * expects of an interrupted command). A second signal ends it at once.
 */
#include "config.h"
#include <errno.h>
#include <getopt.h>
#include <sys/stat.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "decoder/session/unpack.h"
#include "cli.h"
#include "decoder/session/session.h"
#include "store/sqlite/store.h"
#include "store/rbtrace/fingerprint.h"
#ifdef HAVE_LIBPQ
#include "store/postgresql/pg.h"
#endif
#include "decoder/ftrace/tracedat.h"

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
	case 'Y': {
		static const char *dirs[64];
		struct stat sb;
		if (stat(arg, &sb) || !S_ISDIR(sb.st_mode) || access(arg, R_OK | X_OK)) {
			cli_error("--symdir %s: not a folder that can be read", arg);
			return -1;
		}
		if (so->machine.nr_symdirs == sizeof(dirs) / sizeof(dirs[0])) {
			cli_error("--symdir: at most %zu folders", sizeof(dirs) / sizeof(dirs[0]));
			return -1;
		}
		if (so->machine.symdirs != dirs)      /* the first of this command line */
			so->machine.nr_symdirs = 0;
		dirs[so->machine.nr_symdirs++] = arg;
		so->machine.symdirs = dirs;
		return 0;
	}
	case 'k': so->machine.kallsyms = arg; return 0;
	case 'V': so->machine.vmlinux = arg; return 0;
	case 'K':
		so->machine.kcore = arg;
		if (!so->machine.kallsyms) {    /* perf's kcore_dir carries the kallsyms that goes with it */
			static char ks[4096];
			size_t n = strlen(arg);
			if (n + sizeof("/kallsyms") <= sizeof(ks)) {
				memcpy(ks, arg, n);
				memcpy(ks + n, "/kallsyms", sizeof("/kallsyms"));
				if (access(ks, R_OK) == 0)
					so->machine.kallsyms = ks;
			}
		}
		return 0;
	case 'J': {
		char *end;
		long n = strtol(arg, &end, 10);
		if (end == arg || *end || n < 1 || n > 256) {
			cli_error("--jobs wants a number of threads from 1 to 256, got '%s'", arg);
			return -1;
		}
		so->jobs = (int)n;
		return 0;
	}
	case 'I': {
		/* perf's --itrace letters we synthesize: b (branches), iN (an instruction sample every N
		   instructions; N defaults to 100000 as perf's), p (power events), w (PTWRITE), e (errors:
		   always reported as gaps) */
		so->no_branches = 1;
		so->insn_period = 0;
		so->pwr_events = so->ptwrites = 0;
		for (const char *p = arg; *p;) {
			char l = *p++;
			if (l == 'b') {
				so->no_branches = 0;
			} else if (l == 'p') {
				so->pwr_events = 1;
			} else if (l == 'w') {
				so->ptwrites = 1;
			} else if (l == 'e') {
				;
			} else if (l == 'i') {
				char *end;
				unsigned long long n = strtoull(p, &end, 10);
				so->insn_period = end == p ? 100000 : n;
				p = end;
				if (*p == 'i')
					p++;
				if (!so->insn_period) {
					cli_error("--itrace: an instruction period must be at least 1");
					return -1;
				}
			} else {
				cli_error("--itrace: '%c' is not supported (b, iN[i], p, w and e are)", l);
				return -1;
			}
		}
		return 0;
	}
	}
	return -1;
}

const char *cli_perf_data_dir(const char *path, struct rb_session_opts *so)
{
	static char data[4096], kcore[4096];
	struct stat st;
	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
		return path;
	if (strlen(path) + sizeof("/kcore_dir/kcore") > sizeof(data))
		return path;
	snprintf(data, sizeof(data), "%s/data", path);
	snprintf(kcore, sizeof(kcore), "%s/kcore_dir/kcore", path);
	if (!so->machine.kcore && !so->machine.vmlinux && access(kcore, R_OK) == 0) {
		kcore[strlen(kcore) - sizeof("/kcore") + 1] = 0;     /* PATH/kcore_dir */
		cli_session_option('K', kcore, so);
	}
	return access(data, R_OK) == 0 ? data : path;
}

static void export_usage(FILE *f)
{
	fprintf(f,
		"usage: %s [export] FILE -o OUT.db [options]\n"
		"  -o, --output FILE     database to write (built as FILE.tmp-PID, renamed when complete)\n"
		"  -f, --force           replace OUT.db if it exists (PostgreSQL: this recording's earlier load)\n"
		"      --pg CONNINFO     load into PostgreSQL instead (a libpq URI or key=value string; PG*\n"
		"                        variables apply); -o postgresql://... or postgres://... is the same\n"
		"      --time START,END  only samples (and ftrace events) in this window (seconds, as perf script --time)\n"
		"  -C, --cpu LIST        only samples and switches on these CPUs (0,2-3)\n"
		"      --symfs DIR       look for objects under DIR\n"
		"      --symdir DIR      look for objects in DIR and below, by build-id or name (repeatable)\n"
		"      --kallsyms FILE   kernel symbols (default: build-id cache, else the running kernel's)\n"
		"      --vmlinux FILE    the kernel's ELF image, to decode kernel trace (build-id checked)\n"
		"      --kcore DIR       a perf kcore_dir (kcore, kallsyms): kernel and modules' code\n"
		"      --itrace SPEC     rows from hardware trace: b a samples row per branch, iN an instruction\n"
		"                        sample every N instructions, p power events, w PTWRITE, e errors\n"
		"                        (always kept as gaps). Without --itrace: no row per branch; the\n"
		"                        call paths, call_path_stats, branch_edges, gaps and trace_index\n"
		"                        are written in every mode (the database grows with the program)\n"
		"      --calls           hardware trace: also a calls row per call (perf's export 'calls')\n"
		"      --calls-only      --calls without samples rows per branch, even with --itrace=b\n"
		"      --quick           the quick pass: the trace index, the gaps and the AUX buffers from\n"
		"                        the Intel PT packets alone, no code walked (no branches, call paths\n"
		"                        or calls): find the window first, then export it whole with --time\n"
		"                        (--itrace=b --calls: the rows perf's export-to-sqlite.py writes)\n"
		"  -j, --jobs N          decode AUX trace queues on N threads (same output for every N;\n"
		"                        default: the online CPUs, at most 8);\n"
		"                        into PostgreSQL, the growing tables over N connections (default 1)\n"
		"      --ftrace FILE     also load this trace.dat (default: FILE.trace.dat beside FILE if it exists);\n"
		"                        FILE itself may be a trace.dat (trace-cmd's format, versions 6 and 7)\n"
		"  -q, --quiet           no progress or summary\n", cli_prog);
}

static int export_run(struct rb_session_opts *so_in, struct rb_store_opts *sto_in, const char *ftrace, int quiet,
		      const char *pg);
static const char *conninfo_shown(const char *conninfo, char *buf, size_t len);

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
/*
 * The sink is the store's own, every callback included; those called once
 * per record or event first check whether a stop was asked for. The
 * wrappers reach the store's callbacks through one file-level pointer: one
 * export runs per process.
 */
static const struct rb_sink *stop_inner;
#define STOP_CHECK() do { if (stop_signal) return SINK_STOPPED; } while (0)
static int ss_sample(void *c, const struct rb_sample_ev *ev)
{
	STOP_CHECK();
	return stop_inner->sample(c, ev);
}
static int ss_trace(void *c, const struct rb_trace_ev *ev)
{
	STOP_CHECK();
	return stop_inner->trace(c, ev);
}
static int ss_switch(void *c, const struct rb_switch_ev *ev)
{
	STOP_CHECK();
	return stop_inner->context_switch(c, ev);
}
static int ss_gap(void *c, const struct rb_gap_ev *ev)
{
	STOP_CHECK();
	return stop_inner->gap(c, ev);
}
static int ss_end(void *c)
{
	STOP_CHECK();
	return stop_inner->end(c);
}

static struct rb_sink stop_sink(const struct rb_sink *in)
{
	struct rb_sink s = *in;
	stop_inner = in;
	if (in->sample)
		s.sample = ss_sample;
	if (in->trace)
		s.trace = ss_trace;
	if (in->context_switch)
		s.context_switch = ss_switch;
	if (in->gap)
		s.gap = ss_gap;
	if (in->end)
		s.end = ss_end;
	return s;
}

int cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' }, { "force", no_argument, NULL, 'f' },
		{ "time", required_argument, NULL, 't' }, { "cpu", required_argument, NULL, 'C' },
		CLI_OPT_SYMFS, CLI_OPT_SYMDIR, { "kallsyms", required_argument, NULL, 'k' },
		{ "vmlinux", required_argument, NULL, 'V' }, { "kcore", required_argument, NULL, 'K' },
		{ "itrace", required_argument, NULL, 'I' }, { "jobs", required_argument, NULL, 'J' },
		{ "quiet", no_argument, NULL, 'q' }, { "help", no_argument, NULL, 'h' },
		{ "ftrace", required_argument, NULL, 'F' }, { "calls-only", no_argument, NULL, 'L' },
		{ "calls", no_argument, NULL, 'A' }, { "pg", required_argument, NULL, 'P' },
		{ "quick", no_argument, NULL, 'Q' }, { NULL, 0, NULL, 0 },
	};
	const char *ftrace = NULL, *pg = NULL;
	struct rb_session_opts so;
	struct rb_store_opts sto;
	int quiet = 0, c, itrace = 0, calls_only = 0;
	memset(&so, 0, sizeof(so));
	memset(&sto, 0, sizeof(sto));
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:fC:j:qh", longopts, NULL)) != -1) {
		if (c == 'j')
			c = 'J';
		switch (c) {
		case 'o': sto.path = optarg; break;
		case 'f': sto.force = 1; break;
		case 't': case 'C': case 's': case 'Y': case 'k': case 'I': case 'V': case 'K': case 'J':
			if (cli_session_option(c, optarg, &so) < 0)
				return EXIT_USAGE;
			itrace |= c == 'I';
			break;
		case 'q': quiet = 1; break;
		case 'F': ftrace = optarg; break;
		case 'L': calls_only = sto.call_rows = 1; break;
		case 'A': sto.call_rows = 1; break;
		case 'P': pg = optarg; break;
		case 'Q': so.quick = 1; break;
		case 'h': export_usage(stdout); return EXIT_OK;
		default: export_usage(stderr); return EXIT_USAGE;
		}
	}
	if (!pg && sto.path && (!strncmp(sto.path, "postgresql://", 13) || !strncmp(sto.path, "postgres://", 11)))
		pg = sto.path;
	char shown[512];
	if (pg)   /* messages name the database, never its password */
		sto.path = conninfo_shown(pg, shown, sizeof(shown));
	if (optind != argc - 1 || !sto.path) {
		export_usage(stderr);
		return EXIT_USAGE;
	}
#ifndef HAVE_LIBPQ
	if (pg) {
		cli_error("this rbdecode was built without PostgreSQL (configure found no libpq: install Debian's libpq-dev)");
		return EXIT_USAGE;
	}
#endif
	/*
	 * Branches are decoded for the aggregates unless --itrace leaves b out
	 * (then, as perf's --itrace=iN, there are none, and no calls, unless
	 * --calls asks for them); a samples row each only with b.
	 */
	if (so.quick && ((itrace && (!so.no_branches || so.insn_period || so.ptwrites || so.pwr_events)) ||
			 sto.call_rows)) {
		cli_error("--quick reads the trace's packets only, without the code: it gives no branches, calls, "
			  "instruction samples, power or PTWRITE events (leave out --itrace and --calls)");
		return EXIT_USAGE;
	}
	sto.branch_rows = itrace && !so.no_branches && !calls_only;
	sto.quick = so.quick;
	if (sto.call_rows)
		so.no_branches = 0;
	so.path = cli_perf_data_dir(argv[optind], &so);
	so.perf_export = 1;
	sto.source = so.path;
	char msg[512];
	struct rb_unpacked un = { 0 };
	catch_stop_signals();     /* before unpacking: a signal during it stops the export at its first event */
	int ar = rb_archive_detect(so.path);
	if (ar < 0) {
		cli_error("%s: out of memory", so.path);
		return EXIT_INTERNAL;
	}
	if (ar) {
		int urc = rb_archive_unpack(so.path, NULL, &un, msg, sizeof(msg));
		if (urc < 0) {
			cli_error("%s", msg);
			return urc == -ENOMEM ? EXIT_INTERNAL : EXIT_BADINPUT;
		}
		so.path = un.perf_data;
		if (!so.machine.buildid_dir)
			so.machine.buildid_dir = un.buildid_dir;
	}
	/* a recording with --ftrace carries its trace.dat beside it (also inside an archive) */
	char beside[4096];
	snprintf(beside, sizeof(beside), "%s.trace.dat", so.path);
	if (!ftrace && access(beside, R_OK) == 0)
		ftrace = beside;
	int status = export_run(&so, &sto, ftrace, quiet, pg);
	rb_archive_cleanup(&un);
	if (stop_signal) {
		cli_error("stopped by %s: %s", stop_signal == SIGINT ? "SIGINT" : stop_signal == SIGTERM ? "SIGTERM" : "SIGHUP",
			  status == EXIT_OK || status == EXIT_PARTIAL ? "the database was already complete and is kept"
								       : "nothing was written");
		die_of_stop_signal();
	}
	return status;
}

/* --time applies to ftrace events as to samples (a trace.dat alone: no session to apply it). */
struct ftrace_window { const struct rb_ftrace_sink *to; uint64_t start, end; };

static int window_event(void *ctx, const struct rb_ftrace_ev *ev)
{
	struct ftrace_window *w = ctx;
	if ((w->start || w->end) && (ev->time < w->start || (w->end && ev->time > w->end)))
		return 0;
	return w->to->event(w->to->ctx, ev);
}

static int window_gap(void *ctx, const struct rb_gap_ev *g)
{
	struct ftrace_window *w = ctx;
	return w->to->gap(w->to->ctx, g);
}

/* What the trace.dat reader said, into decode_stats. 0, or 1 read in part. */
static int note_ftrace(struct rb_store *st, const char *path, const struct rb_tracedat_stats *ts, const char *msg,
		       int with_perf, int quiet)
{
	if (ts->partial)
		cli_error("%s (partial: see decode_stats)", msg);
	if (with_perf && !quiet && ts->clock[0] && strcmp(ts->clock, "perf"))
		cli_error("warning: %s was recorded with trace_clock %s, not perf: its times are not on the "
			  "perf samples' clock", path, ts->clock);
	rb_store_note(st, "ftrace_events", ts->events);
	rb_store_note(st, "ftrace_pages", ts->pages);
	rb_store_note(st, "ftrace_missed_pages", ts->missed_pages);
	rb_store_note(st, "ftrace_missed_events", ts->missed_events);
	rb_store_note(st, "ftrace_damaged_pages", ts->damaged_pages);
	rb_store_note(st, "ftrace_unknown_events", ts->unknown_events);
	rb_store_note(st, "partial", (uint64_t)ts->partial);
	return ts->partial ? 1 : 0;
}

/*
 * Where the recording and its binaries are, so that the database can reach
 * the trace again (the rbtrace extension does): the recording's absolute
 * path, size and fingerprint, the search path the decode used (only those
 * given: --symdir folders one a line) and the export's choices.
 */
static void note_paths(struct rb_store *st, const char *source, const struct rb_session_opts *so)
{
	char abs[PATH_MAX];
	struct stat sb;
	if (realpath(source, abs))
		rb_store_note_text(st, "recording", abs);
	char hex[17];
	uint64_t size;
	if (stat(source, &sb) == 0 && S_ISREG(sb.st_mode) && rb_fingerprint(source, hex, &size) == 0) {
		rb_store_note(st, "recording_size", size);
		rb_store_note_text(st, "recording_hash", hex);
	}
	const struct { const char *name, *path; } paths[] = {
		{ "symfs", so->machine.symfs }, { "vmlinux", so->machine.vmlinux }, { "kcore", so->machine.kcore },
		{ "kallsyms", so->machine.kallsyms },
	};
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if (paths[i].path)
			rb_store_note_text(st, paths[i].name, realpath(paths[i].path, abs) ? abs : paths[i].path);
	/* the --symdir folders, one a line (store/rbtrace/recording.c reads them back) */
	char dirs[8192];
	size_t len = 0;
	for (size_t i = 0; i < so->machine.nr_symdirs; i++) {
		const char *d = realpath(so->machine.symdirs[i], abs) ? abs : so->machine.symdirs[i];
		int n = snprintf(dirs + len, sizeof(dirs) - len, "%s%s", len ? "\n" : "", d);
		if (n < 0 || (size_t)n >= sizeof(dirs) - len)
			break;
		len += (size_t)n;
	}
	if (len)
		rb_store_note_text(st, "symdir", dirs);
	/* what was decoded, so that the trace can be decoded again the same way (row ids included) */
	rb_store_note(st, "itrace_branches", !so->no_branches && !so->quick);
	rb_store_note(st, "quick_pass", (uint64_t)so->quick);
	rb_store_note(st, "itrace_insn_period", so->insn_period);
	rb_store_note(st, "itrace_ptwrites", (uint64_t)so->ptwrites);
	rb_store_note(st, "itrace_pwr_events", (uint64_t)so->pwr_events);
	if (so->time_start || so->time_end) {
		rb_store_note(st, "export_time_start", so->time_start);
		rb_store_note(st, "export_time_end", so->time_end);
	}
	if (so->cpus)
		rb_store_note_text(st, "export_cpus", so->cpus);
}

/* A trace.dat given alone: loaded without a session. 0, 1 read in part, or an exit status. */
static int load_ftrace(struct rb_store *st, const char *path, const struct rb_session_opts *so, int quiet)
{
	struct rb_tracedat_stats ts;
	char msg[512];
	struct ftrace_window w = { rb_store_ftrace_sink(st), so->time_start, so->time_end };
	struct rb_ftrace_sink sink = { &w, window_event, window_gap };
	int rc = rb_tracedat_run(path, &sink, &ts, msg, sizeof(msg));
	if (rc == -1) {
		cli_error("%s", msg);
		return EXIT_BADINPUT;
	}
	if (rc) {
		cli_error("%s: writing its events failed", path);
		return EXIT_INTERNAL;
	}
	return note_ftrace(st, path, &ts, msg, 0, quiet);
}

/* @buf with bytes [from, to) replaced by "***" (what fits in @len). */
static void mask(char *buf, size_t len, size_t from, size_t to)
{
	char rest[512];
	snprintf(rest, sizeof(rest), "%s", buf + to);
	snprintf(buf + from, len - from, "***%s", rest);
}

/*
 * A PostgreSQL connection string as messages show it: a URI's password
 * (postgresql://user:PASSWORD@host) and a key=value string's password=
 * value replaced by "***". Returns @buf.
 */
static const char *conninfo_shown(const char *conninfo, char *buf, size_t len)
{
	snprintf(buf, len, "%s", conninfo);
	char *scheme = strstr(buf, "://");
	if (scheme) {
		char *user = scheme + 3, *end = user + strcspn(user, "/?");
		char *at = memchr(user, '@', (size_t)(end - user));
		char *colon = at ? memchr(user, ':', (size_t)(at - user)) : NULL;
		if (colon)
			mask(buf, len, (size_t)(colon + 1 - buf), (size_t)(at - buf));
		return buf;
	}
	for (char *p = strstr(buf, "password"); p; p = strstr(p + 1, "password")) {
		if (p != buf && p[-1] != ' ')
			continue;
		char *v = p + 8 + strspn(p + 8, " ");
		if (*v != '=')
			continue;
		v += 1 + strspn(v + 1, " ");
		char *e = v;
		if (*e == '\'') {
			for (e++; *e && *e != '\''; e++)
				if (*e == '\\' && e[1])
					e++;
			e += *e != 0;
		} else {
			e += strcspn(e, " ");
		}
		mask(buf, len, (size_t)(v - buf), (size_t)(e - buf));
		break;
	}
	return buf;
}

#ifdef HAVE_LIBPQ
/*
 * The PostgreSQL writer for @conninfo, with what the recordings table says
 * of the recording: its header's host, perf version and arch, its path,
 * fingerprint and time. 0, or an exit status after saying why.
 */
static int open_pg(struct rb_store_opts *sto, const char *conninfo, const struct rb_session_opts *so)
{
	struct rb_pg_recording rec = { 0 };
	char abs[PATH_MAX], hex[17];
	struct stat sb;
	rec.path = realpath(sto->source, abs) ? abs : sto->source;
	if (stat(sto->source, &sb) == 0 && S_ISREG(sb.st_mode)) {
		rec.recorded = (int64_t)sb.st_mtime;
		if (rb_fingerprint(sto->source, hex, &rec.size) == 0)
			rec.hash = hex;
	}
	struct pd_reader *r = NULL;
	struct pd_reader_opts ro;
	struct pd_features f;
	struct pd_error err;
	int have_f = 0;
	memset(&f, 0, sizeof(f));
	pd_reader_opts_init(&ro);
	if (strcmp(so->path, "-") && !rb_tracedat_is(so->path) && pd_reader_open(&r, so->path, &ro, &err) == 0 &&
	    pd_features_parse(r, &f, &err) == 0) {
		have_f = 1;
		rec.host = f.hostname;
		rec.perf_version = f.version;
		rec.arch = f.arch;
	}
	char msg[1024];
	/* connections: as many as -j N asks for; so->jobs 0 (not given, export_run sets the default after this) is one */
	int rc = rb_pg_open(&sto->writer, conninfo, &rec, sto->force, so->jobs, NULL, msg, sizeof(msg));
	if (have_f)
		pd_features_free(&f);
	pd_reader_free(r);
	if (rc) {
		cli_error("%s", msg);
		return EXIT_BADINPUT;
	}
	return 0;
}
#endif

static int export_run(struct rb_session_opts *so_in, struct rb_store_opts *sto_in, const char *ftrace, int quiet,
		      const char *pg)
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
#ifdef HAVE_LIBPQ
	int prc = pg ? open_pg(&sto, pg, &so) : 0;
	if (prc)
		return prc;
#else
	(void)pg;
#endif
	if (!so.jobs)            /* decoding threads unless -j said: the output is the same for every number */
		so.jobs = rb_session_default_jobs();
	if (!pg)
		cli_remove_stale(sto.path);
	int orc = rb_store_open(&st, &sto, msg, sizeof(msg));
	if (orc < 0) {
		cli_error("%s", msg);
		return orc == PD_ERR_NOMEM ? EXIT_INTERNAL : EXIT_BADINPUT;
	}
	struct rb_session_stats stats;
	struct pd_error err;
	int ftrace_only = rb_tracedat_is(so.path), fpartial = 0;
	uint64_t fevents = 0;
	memset(&stats, 0, sizeof(stats));
	/* a trace.dat with the recording is merged into its timeline by the session */
	struct rb_tracedat_stats fts;
	char fmsg[512] = "";
	memset(&fts, 0, sizeof(fts));
	if (!ftrace_only && ftrace) {
		so.ftrace = ftrace;
		so.ftrace_stats = &fts;
		so.ftrace_msg = fmsg;
		so.ftrace_msglen = sizeof(fmsg);
	}
	struct rb_sink sink = stop_sink(rb_store_sink(st));
	int rc = ftrace_only ? 0 : rb_session_run(&so, &sink, &stats, &err);
	if (prog.on)
		fputc('\n', stderr);
	if (!rc && ftrace_only) {
		fpartial = load_ftrace(st, so.path, &so, quiet);
		if (fpartial > 1) {
			rb_store_abort(st);
			return fpartial;
		}
	} else if (!rc && ftrace) {
		fpartial = note_ftrace(st, ftrace, &fts, fmsg, 1, quiet);
	}
	fevents = rb_store_rows(st, "ftrace_events");
	/* the store failing mid-load (disk full) stops the session with -1, which reads like a PD_ERR code */
	const char *store_why = rc && rc != SINK_STOPPED ? rb_store_error(st) : NULL;
	if (store_why) {
		cli_error("writing %s failed: %s", sto.path, store_why);
		rb_store_abort(st);
		return EXIT_INTERNAL;
	}
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
	note_paths(st, sto.source, &so);
	uint64_t samples = rb_store_rows(st, "samples"), switches = rb_store_rows(st, "context_switches");
	uint64_t syms = rb_store_rows(st, "symbols"), gaps = rb_store_rows(st, "gaps");
	if (rb_store_finish(st, &stats, msg, sizeof(msg)) < 0) {
		cli_error("%s", msg);
		return EXIT_INTERNAL;
	}
	if (stats.stop.code)
		cli_error("%s", stats.stop.msg);
	/* which rows hardware trace left (decode_stats has it too: branch_rows, call_rows) */
	char mode[160] = "";
	if (stats.branches)
		snprintf(mode, sizeof(mode), "; %" PRIu64 " trace branches: %s", stats.branches,
			 sto.branch_rows && sto.call_rows ? "a samples row each, calls rows"
			 : sto.branch_rows ? "a samples row each, aggregates (--calls: calls rows)"
			 : sto.call_rows ? "calls rows, aggregates (--itrace=b: a samples row each)"
					 : "aggregates only (--itrace=b: a samples row each; --calls: calls rows)");
	if (!quiet)
		fprintf(stderr, "%s: wrote %s: %" PRIu64 " samples, %" PRIu64 " symbols, %" PRIu64
			" context switches, %" PRIu64 " ftrace events, %" PRIu64 " gaps from %" PRIu64 " records%s%s\n",
			cli_prog, sto.path, samples, syms, switches, fevents, gaps, stats.records, mode,
			rb_session_partial(&stats) || fpartial ? " (partial: see decode_stats)" : "");
	return rb_session_partial(&stats) || fpartial ? EXIT_PARTIAL : EXIT_OK;
}
