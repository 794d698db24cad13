/*
 * cmd_elements.c - `rbdecode elements SNAPSHOT_DIR`: decode a CoreSight
 * trace snapshot (bare-metal and debug-probe captures in OpenCSD's snapshot
 * format) and print its packets and generic trace elements as the `Idx:`
 * lines of `trc_pkt_lister -decode`, so the two can be diffed.
 *
 * Options mirror trc_pkt_lister's: --src-addr-n (-src_addr_n),
 * --multi-session (-multi_session: every trace buffer in turn through the
 * decoders of the first),
 * --pkt-mon (-pkt_mon: packets with raw bytes, no decode), --packets (packets
 * without raw bytes: trc_pkt_lister without -decode), --dstream-format (-dstream_format),
 * --buffer NAME (-src_name). Exit status: 0 all decoded, 1 usage (or an
 * unknown --buffer), 2 the snapshot cannot be read (the message names the
 * file and ini line) or none of its buffer's sources can be decoded, 3
 * decoded in part (a warning on stderr says which source or memory dump was
 * skipped and why), 4 internal error.
 */
#include "config.h"
#include <getopt.h>
#include <stdio.h>
#include <sys/stat.h>
#include <string.h>
#include "cli.h"
#include "decoder/cs_etm/cs_decode.h"

struct elements_out {
	FILE *f;
	unsigned warnings;
};

static void print_line(void *ctx, const char *text)
{
	struct elements_out *o = ctx;
	fputs(text, o->f);
	fputc('\n', o->f);
}

static void print_warning(void *ctx, const char *text)
{
	struct elements_out *o = ctx;
	o->warnings++;
	fprintf(stderr, "%s: warning: %s\n", cli_prog, text);
}

static void print_error(const struct rb_cs_error *err)
{
	if (err->file[0] && err->line)
		cli_error("%s:%d: %s", err->file, err->line, err->msg);
	else if (err->file[0])
		cli_error("%s: %s", err->file, err->msg);
	else
		cli_error("%s", err->msg);
}

static int status_of(int rc)
{
	if (rc == RB_CS_PARTIAL)
		return EXIT_PARTIAL;
	if (rc == RB_CS_ERR_NOMEM)
		return EXIT_INTERNAL;
	if (rc == RB_CS_ERR_INVAL)
		return EXIT_USAGE;
	return rc ? EXIT_BADINPUT : EXIT_OK;
}

static void elements_usage(FILE *f)
{
	fprintf(f, "usage: %s elements [--pkt-mon | --packets] [--src-addr-n] [--dstream-format] "
		   "[--multi-session] [--buffer NAME] SNAPSHOT_DIR\n", cli_prog);
}

int cmd_elements(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "src-addr-n", no_argument, NULL, 'n' },
		{ "multi-session", no_argument, NULL, 'm' },
		{ "pkt-mon", no_argument, NULL, 'p' },
		{ "packets", no_argument, NULL, 'P' },
		{ "dstream-format", no_argument, NULL, 'd' },
		{ "buffer", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct rb_cs_decode_opts opts = { 0 };
	struct elements_out o = { stdout, 0 };
	struct rb_cs_snapshot *ss = NULL;
	struct rb_cs_error err;
	int c, rc;

	/* a perf.data rather than a snapshot folder: the elements of its AUX trace */
	struct stat sb;
	if (argc > 1 && stat(argv[argc - 1], &sb) == 0 && S_ISREG(sb.st_mode))
		return cmd_trace_elements(argc, argv);
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': opts.src_addr_n = 1; break;
		case 'm': opts.multi_session = 1; break;
		case 'p': opts.packets_only = 1; break;
		case 'P': opts.packets_only = 1, opts.no_raw = 1; break;
		case 'd': opts.dstream = 1; break;
		case 'b': opts.buffer = optarg; break;
		case 'h': elements_usage(stdout); return EXIT_OK;
		default: elements_usage(stderr); return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		elements_usage(stderr);
		return EXIT_USAGE;
	}
	rc = rb_cs_snapshot_read(argv[optind], &ss, &err);
	if (rc) {
		print_error(&err);
		return status_of(rc);
	}
	rc = rb_cs_decode_snapshot(ss, &opts, print_line, print_warning, &o, &err);
	if (rc < 0)
		print_error(&err);
	rb_cs_snapshot_free(ss);
	if (fflush(stdout) || ferror(stdout)) {
		cli_error("cannot write the output");
		return EXIT_INTERNAL;
	}
	return status_of(rc);
}
