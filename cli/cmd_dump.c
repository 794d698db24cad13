/*
 * cmd_dump.c - `rbdecode dump --packets [--queue N] FILE`: the Intel PT
 * packets of every AUXTRACE chunk of a recording (or of queue N's: the
 * AUXTRACE idx, one per CPU or per thread), each chunk from its first byte,
 * in the layout of perf report -D (offset, raw bytes, perf's packet
 * description), so that the two can be compared line for line.
 */
#include "config.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "decoder/intel_pt/intel_pt.h"

int cmd_dump(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "packets", no_argument, NULL, 'p' }, { "queue", required_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	int c, packets = 0;
	long queue = -1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "ph", longopts, NULL)) != -1) {
		if (c == 'p') {
			packets = 1;
			continue;
		}
		if (c == 'q') {
			char *end;
			queue = strtol(optarg, &end, 10);
			if (end == optarg || *end || queue < 0 || queue > 0xffffffffL) {
				cli_error("--queue: '%s' is not a queue number (an AUXTRACE idx)", optarg);
				return EXIT_USAGE;
			}
			continue;
		}
		return cli_usage("dump", c);
	}
	if (!packets)
		return cli_usage("dump", '?');
	if (!cli_operand(argc, argv, "dump"))
		return EXIT_USAGE;
	struct pd_error err;
	int rc = rb_pt_dump_packets(argv[optind], queue, stdout, &err);
	if (fflush(stdout)) {
		cli_error("writing the output failed");
		return EXIT_INTERNAL;
	}
	if (rc < 0) {
		cli_error("%s", err.msg);
		return rc == PD_ERR_NOMEM || rc == PD_ERR_IO ? cli_status_of(rc) : EXIT_PARTIAL;
	}
	if (rc == 0) {
		cli_error("%s: no Intel PT trace in this recording", argv[optind]);
		return EXIT_BADINPUT;
	}
	if (rc == 2) {
		cli_error("%s: no AUXTRACE data for queue %ld", argv[optind], queue);
		return EXIT_BADINPUT;
	}
	return EXIT_OK;
}
