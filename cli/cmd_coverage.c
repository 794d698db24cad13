/*
 * cmd_coverage.c - `rbdecode coverage FILE [--time S,E] [--json]`: per CPU,
 * which fraction of a time window the AUX trace covers.
 *
 * The model, from what the session reports (session.h):
 * - Each PERF_RECORD_AUX of a CPU closes an interval that opened at the
 *   previous AUX record of that CPU (the first opens at the CPU's latest
 *   ITRACE_START, else it has no length). Its bytes are [aux_offset,
 *   +aux_size); in overwrite (snapshot) mode aux_offset is the head, and the
 *   bytes written are those since the previous head.
 * - The interval counts in proportion to how many of its bytes reached the
 *   file (AUXTRACE chunks of that CPU's queue): a hole or a snapshot
 *   overwrite lowers it. An interval whose AUX record is flagged PARTIAL or
 *   COLLISION counts as not covered (its loss has no size); TRUNCATED counts
 *   by its bytes.
 * - Any gap of that CPU with a duration (kernel LOST / LOST_SAMPLES, which
 *   run from the CPU's previous record) uncovers its time span.
 * Without --time the window is the span of the AUX and ITRACE_START records.
 * A recording without AUX data has no trace coverage: it says so.
 */
#include "config.h"
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "decoder/session/session.h"

struct span { uint64_t a, b; double frac; };          /* (a, b]: covered at density frac */
struct range { int32_t cpu; uint64_t a, b; };         /* bytes [a, b) or times (a, b] of one CPU */

struct vec { void *v; size_t n, cap, elem; };
static void *vec_add(struct vec *v)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? 2 * v->cap : 64;
		void *p = realloc(v->v, cap * v->elem);
		if (!p)
			return NULL;
		v->v = p;
		v->cap = cap;
	}
	return (char *)v->v + v->elem * v->n++;
}

struct cov {
	struct vec recs;      /* struct rb_aux_rec_ev, time order */
	struct vec chunks;    /* struct range: AUXTRACE bytes per CPU */
	struct vec gaps;      /* struct range: time spans of gaps with a duration */
	int oom;
};

static int on_aux_record(void *ctx, const struct rb_aux_rec_ev *ev)
{
	struct cov *c = ctx;
	struct rb_aux_rec_ev *e = vec_add(&c->recs);
	if (!e)
		return c->oom = -1;
	*e = *ev;
	return 0;
}

static int on_aux_buffer(void *ctx, const struct rb_aux_ev *ev)
{
	struct cov *c = ctx;
	if (ev->cpu < 0)
		return 0;     /* per-thread queues: not attributable to a CPU */
	struct range *r = vec_add(&c->chunks);
	if (!r)
		return c->oom = -1;
	*r = (struct range){ ev->cpu, ev->aux_offset, ev->aux_offset + ev->size };
	return 0;
}

static int on_gap(void *ctx, const struct rb_gap_ev *g)
{
	struct cov *c = ctx;
	if (g->cpu < 0 || g->time_end <= g->time_start)
		return 0;     /* no duration: its loss is counted in bytes, or has no place in time */
	struct range *r = vec_add(&c->gaps);
	if (!r)
		return c->oom = -1;
	*r = (struct range){ g->cpu, g->time_start, g->time_end };
	return 0;
}

/* Bytes of [a, b) present in @cpu's chunks (overlapping chunks counted once). */
static uint64_t present(const struct cov *c, int32_t cpu, uint64_t a, uint64_t b)
{
	const struct range *ch = c->chunks.v;
	uint64_t got = 0, at = a;          /* chunks are sorted by (cpu, start): sweep once */
	for (size_t i = 0; i < c->chunks.n && at < b; i++) {
		if (ch[i].cpu != cpu || ch[i].b <= at)
			continue;
		if (ch[i].a >= b)
			break;
		uint64_t s = ch[i].a > at ? ch[i].a : at, e = ch[i].b < b ? ch[i].b : b;
		got += e - s;
		at = e;
	}
	return got;
}

static int by_cpu_start(const void *x, const void *y)
{
	const struct range *a = x, *b = y;
	if (a->cpu != b->cpu)
		return a->cpu < b->cpu ? -1 : 1;
	return a->a < b->a ? -1 : a->a > b->a;
}

struct cpu_cov { int32_t cpu; double covered; uint64_t aux_bytes, bytes_in_file; size_t nr_aux; };

/* Covered ns of [s, e] on @cpu: the spans at their density, minus the gap spans. */
static double covered_ns(const struct cov *c, int32_t cpu, const struct span *sp, size_t n, uint64_t s, uint64_t e)
{
	double sum = 0;
	const struct range *g = c->gaps.v;
	for (size_t i = 0; i < n; i++) {
		uint64_t a = sp[i].a > s ? sp[i].a : s, b = sp[i].b < e ? sp[i].b : e;
		if (b <= a || sp[i].frac <= 0)
			continue;
		/* the part of (a, b] inside the union of this CPU's gap spans (sorted by start) */
		uint64_t lost = 0, at = a;
		for (size_t k = 0; k < c->gaps.n; k++) {
			if (g[k].cpu != cpu)
				continue;
			uint64_t gs = g[k].a > at ? g[k].a : at, ge = g[k].b < b ? g[k].b : b;
			if (ge > gs) {
				lost += ge - gs;
				at = ge;
			}
		}
		sum += (double)(b - a - lost) * sp[i].frac;
	}
	return sum;
}

/* The spans of one CPU from its AUX records, in time order. */
static size_t cpu_spans(const struct cov *c, int32_t cpu, struct span *out, struct cpu_cov *cc)
{
	const struct rb_aux_rec_ev *r = c->recs.v;
	uint64_t open = 0, head = 0;
	int have_head = 0;
	size_t n = 0;
	for (size_t i = 0; i < c->recs.n; i++) {
		if (r[i].cpu != cpu)
			continue;
		if (r[i].itrace_start) {
			if (!open)
				open = r[i].time;
			continue;
		}
		uint64_t a, b;
		if (r[i].flags & PD_AUX_FLAG_OVERWRITE) {
			b = r[i].aux_offset;
			a = have_head && head < b ? head : (b > r[i].aux_size ? b - r[i].aux_size : 0);
			head = b;
			have_head = 1;
		} else {
			a = r[i].aux_offset;
			b = a + r[i].aux_size;
		}
		uint64_t got = present(c, cpu, a, b);
		cc->nr_aux++;
		cc->aux_bytes += b - a;
		cc->bytes_in_file += got;
		double frac = b > a ? (double)got / (double)(b - a) : 0;
		if (r[i].flags & (PD_AUX_FLAG_PARTIAL | PD_AUX_FLAG_COLLISION))
			frac = 0;
		if (open && open < r[i].time)
			out[n++] = (struct span){ open, r[i].time, frac };
		open = r[i].time;
	}
	return n;
}

static int add_cpu(int32_t **v, size_t *n, int32_t cpu)
{
	for (size_t i = 0; i < *n; i++)
		if ((*v)[i] == cpu)
			return 0;
	int32_t *p = realloc(*v, (*n + 1) * sizeof(**v));
	if (!p)
		return -1;
	*v = p;
	(*v)[(*n)++] = cpu;
	return 0;
}

static int by_i32(const void *x, const void *y)
{
	int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
	return a < b ? -1 : a > b;
}

int cmd_coverage(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "time", required_argument, NULL, 't' }, { "json", no_argument, NULL, 'j' },
		CLI_OPT_SYMFS, CLI_OPT_SYMDIR,
		{ "vmlinux", required_argument, NULL, 'V' }, { "kcore", required_argument, NULL, 'K' },
		{ "quick", no_argument, NULL, 'Q' }, { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	struct rb_session_opts so;
	uint64_t ws = 0, we = 0;
	int json = 0, c;
	memset(&so, 0, sizeof(so));
	optind = 1;
	while ((c = getopt_long(argc, argv, "jh", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			if (cli_parse_time(optarg, &ws, &we) < 0) {
				cli_error("--time wants START,END in seconds, got '%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'j': json = 1; break;
		case 'Q': so.quick = 1; break;     /* the trace's losses from its packets alone */
		case 's': case 'Y': case 'V': case 'K':    /* the trace is decoded: its losses count */
			if (cli_session_option(c, optarg, &so) < 0)
				return EXIT_USAGE;
			break;
		default:
			return cli_usage("coverage", c);
		}
	}
	if (!(so.path = cli_operand(argc, argv, "coverage")))
		return EXIT_USAGE;
	unsigned warnings = 0;
	so.warn = cli_warn_cb;
	so.warn_ctx = &warnings;
	struct cov cv = { .recs = { .elem = sizeof(struct rb_aux_rec_ev) }, .chunks = { .elem = sizeof(struct range) },
			  .gaps = { .elem = sizeof(struct range) } };
	struct rb_sink sink = { .ctx = &cv, .aux_record = on_aux_record, .aux_buffer = on_aux_buffer, .gap = on_gap };
	struct rb_session_stats stats;
	struct pd_error err;
	int rc = rb_session_run(&so, &sink, &stats, &err);
	if (rc < 0 && rc >= PD_ERR_NOATTR) {
		cli_error("%s", err.msg);
		return cli_status_of(rc);
	}
	int status = EXIT_INTERNAL;
	int32_t *cpus = NULL;
	size_t nr_cpus = 0;
	struct span *sp = NULL;
	json_t *root = NULL, *arr = NULL;
	if (rc || cv.oom)
		goto out;
	if (cv.chunks.n > 1)
		qsort(cv.chunks.v, cv.chunks.n, sizeof(struct range), by_cpu_start);
	if (cv.gaps.n > 1)
		qsort(cv.gaps.v, cv.gaps.n, sizeof(struct range), by_cpu_start);
	const struct rb_aux_rec_ev *r = cv.recs.v;
	uint64_t lo = UINT64_MAX, hi = 0;
	size_t nr_aux = 0;
	for (size_t i = 0; i < cv.recs.n; i++) {
		nr_aux += !r[i].itrace_start;
		if (r[i].cpu >= 0 && add_cpu(&cpus, &nr_cpus, r[i].cpu) < 0)
			goto out;
		if (r[i].time < lo)
			lo = r[i].time;
		if (r[i].time > hi)
			hi = r[i].time;
	}
	if (!ws && !we) {
		ws = lo == UINT64_MAX ? 0 : lo;
		we = hi;
	} else if (!we) {
		we = hi > ws ? hi : ws;
	}
	int has_aux = nr_aux > 0 && cv.chunks.n > 0;
	if (json) {
		arr = json_array();
		root = json_pack("{s:s, s:b, s:I, s:I, s:o, s:b}", "file", so.path, "aux", has_aux,
				 "time_start", (json_int_t)ws, "time_end", (json_int_t)we, "cpus", arr,
				 "partial", stats.stop.code != 0 || stats.malformed != 0);
		if (!root)
			goto out;
	}
	if (!has_aux) {
		if (!json)
			printf("%s: no AUX trace (no AUX records with AUXTRACE data): trace coverage does not apply\n",
			       so.path);
	} else {
		if (nr_cpus > 1)
			qsort(cpus, nr_cpus, sizeof(*cpus), by_i32);
		if (!(sp = malloc(cv.recs.n * sizeof(*sp))))
			goto out;
		if (!json)
			printf("window %" PRIu64 ".%09" PRIu64 " - %" PRIu64 ".%09" PRIu64 " (%" PRIu64 " ns)\n%4s %9s %14s %12s %12s\n",
			       ws / 1000000000, ws % 1000000000, we / 1000000000, we % 1000000000, we - ws,
			       "cpu", "covered", "covered_ns", "aux_bytes", "in_file");
		for (size_t k = 0; k < nr_cpus; k++) {
			struct cpu_cov cc = { .cpu = cpus[k] };
			size_t n = cpu_spans(&cv, cpus[k], sp, &cc);
			cc.covered = covered_ns(&cv, cpus[k], sp, n, ws, we);
			double frac = we > ws ? cc.covered / (double)(we - ws) : 0;
			if (json) {
				if (json_array_append_new(arr, json_pack("{s:i, s:f, s:I, s:I, s:I, s:I}", "cpu", cc.cpu,
					"fraction", frac, "covered_ns", (json_int_t)(cc.covered + 0.5),
					"aux_records", (json_int_t)cc.nr_aux, "aux_bytes", (json_int_t)cc.aux_bytes,
					"bytes_in_file", (json_int_t)cc.bytes_in_file)) < 0)
					goto out;
			} else {
				printf("%4d %8.2f%% %14.0f %12" PRIu64 " %12" PRIu64 "\n", cc.cpu, 100 * frac, cc.covered,
				       cc.aux_bytes, cc.bytes_in_file);
			}
		}
	}
	if (json) {
		json_dumpf(root, stdout, JSON_INDENT(2));
		fputc('\n', stdout);
	}
	if (stats.stop.code)
		cli_error("%s", stats.stop.msg);
	status = fflush(stdout) ? EXIT_INTERNAL : rb_session_partial(&stats) ? EXIT_PARTIAL : EXIT_OK;
out:
	if (status == EXIT_INTERNAL)
		cli_error("coverage of %s failed (out of memory or output error)", so.path);
	json_decref(root);
	free(sp);
	free(cpus);
	free(cv.recs.v);
	free(cv.chunks.v);
	free(cv.gaps.v);
	return status;
}
