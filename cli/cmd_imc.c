/*
 * cmd_imc.c - `rbdecode imc DUMP`: a raw POWER trace-imc buffer (a memory
 * dump of one CPU's buffer) decoded in time order, as text or --json, with
 * every invalid or overwritten region reported as a gap.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "decoder/imc/imc.h"

struct imc_out { int json; int cpu; json_t *recs, *gaps; };

static int print_rec(void *ctx, const struct rb_imc_record *r)
{
	struct imc_out *o = ctx;
	if (o->json) {
		char ip[24];
		snprintf(ip, sizeof(ip), "%#" PRIx64, r->ip);   /* addresses as hex strings: beyond JSON's integers */
		return json_array_append_new(o->recs, json_pack("{s:I, s:s, s:i, s:I, s:[I,I,I,I], s:I}",
			"timebase", (json_int_t)r->tb1, "ip", ip, "privilege", r->privilege,
			"time", (json_int_t)r->time, "cpmc", (json_int_t)r->cpmc[0], (json_int_t)r->cpmc[1],
			(json_int_t)r->cpmc[2], (json_int_t)r->cpmc[3], "offset", (json_int_t)r->offset));
	}
	printf("%16" PRIu64 " %16" PRIu64 " %#18" PRIx64 " %2d %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 "\n",
	       r->tb1, r->time, r->ip, r->privilege, r->cpmc[0], r->cpmc[1], r->cpmc[2], r->cpmc[3]);
	return 0;
}

static int print_gap(void *ctx, const struct rb_imc_gap *g)
{
	struct imc_out *o = ctx;
	if (o->json)
		/* the buffer's own fields, then the loss model's (as rbdecode gaps --json) */
		return json_array_append_new(o->gaps, json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:s, s:i, s:I, s:I, s:I, s:I}",
			"reason", g->reason, "offset", (json_int_t)g->offset, "bytes", (json_int_t)g->bytes,
			"records", (json_int_t)g->records, "time_before", (json_int_t)g->time_before,
			"time_after", (json_int_t)g->time_after, "source", "imc", "cpu", o->cpu,
			"time_start", (json_int_t)g->time_before, "time_end", (json_int_t)g->time_after,
			"bytes_lost", (json_int_t)g->bytes, "records_lost", (json_int_t)g->records));
	printf("# gap: %s at offset %" PRIu64 " (%" PRIu64 " bytes, %" PRIu64 " records) between times %" PRIu64
	       " and %" PRIu64 "\n", g->reason, g->offset, g->bytes, g->records, g->time_before, g->time_after);
	return 0;
}

int cmd_imc(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "power10", no_argument, NULL, 'p' }, { "timebase-hz", required_argument, NULL, 'z' },
		{ "anchor", required_argument, NULL, 'a' }, { "json", no_argument, NULL, 'j' },
		{ "start-tb", required_argument, NULL, 's' }, { "cpu", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	struct rb_imc_opts o = { 0 };
	struct imc_out out = { .cpu = -1 };
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "jh", longopts, NULL)) != -1) {
		char *end;
		switch (c) {
		case 'p': o.power10 = 1; break;
		case 'z':
			o.timebase_hz = strtoull(optarg, &end, 0);
			if (*end || !o.timebase_hz) {
				cli_error("--timebase-hz wants a frequency in Hz, got '%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'a':
			if (sscanf(optarg, "%" SCNi64 ",%" SCNu64, &o.anchor_tb, &o.anchor_ns) != 2) {
				cli_error("--anchor wants TIMEBASE,PERF_NS, got '%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'j': out.json = 1; break;
		case 's':
			o.start_tb = strtoull(optarg, &end, 0);
			if (*end || !o.start_tb) {
				cli_error("--start-tb wants the timebase at which tracing started, got '%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'c':
			out.cpu = (int)strtol(optarg, &end, 10);
			if (*end || out.cpu < 0) {
				cli_error("--cpu wants the CPU the buffer belongs to, got '%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		default:
			return cli_usage("imc", c);
		}
	}
	const char *path = cli_operand(argc, argv, "imc");
	if (!path)
		return EXIT_USAGE;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		cli_error("%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return EXIT_BADINPUT;
	}
	size_t len = (size_t)st.st_size;
	void *map = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
	close(fd);
	if (len && map == MAP_FAILED) {
		cli_error("%s: cannot map: %s", path, strerror(errno));
		return EXIT_BADINPUT;
	}
	if (out.json) {
		out.recs = json_array();
		out.gaps = json_array();
		if (!out.recs || !out.gaps) {
			json_decref(out.recs);
			json_decref(out.gaps);
			if (len)
				munmap(map, len);
			cli_error("decoding %s: out of memory", path);
			return EXIT_INTERNAL;
		}
	} else {
		printf("%16s %16s %18s %2s %10s %10s %10s %10s\n", "timebase", "time", "ip", "pr", "cpmc1", "cpmc2",
		       "cpmc3", "cpmc4");
	}
	struct rb_imc_sink sink = { &out, print_rec, print_gap };
	int rc = rb_imc_decode(len ? map : (const uint8_t *)"", len, &o, &sink);
	if (len)
		munmap(map, len);
	int oom = 0;
	if (out.json) {
		/* in JSON every record and gap is an object: a sink that failed ran out of memory */
		oom = rc != 0;
		json_t *root = oom ? NULL : json_pack("{s:s, s:O, s:O}", "file", path, "records", out.recs, "gaps", out.gaps);
		json_decref(out.recs);
		json_decref(out.gaps);
		if (!root || json_dumpf(root, stdout, JSON_INDENT(2)) < 0)
			oom = 1;
		else
			fputc('\n', stdout);
		json_decref(root);
	}
	if (oom) {
		cli_error("decoding %s: out of memory (building its JSON)", path);
		return EXIT_INTERNAL;
	}
	if (rc || fflush(stdout) || ferror(stdout)) {
		cli_error("decoding %s failed%s", path, rc ? "" : ": writing the output failed (standard output)");
		return EXIT_INTERNAL;
	}
	return EXIT_OK;
}
