/*
 * cmd_trace.c - what the AUX trace of a perf.data holds, below the level of
 * samples. `rbdecode autofdo FILE` counts the decoded instruction ranges and
 * taken branches per object, in the text AutoFDO takes (simpleperf inject's
 * output: ranges "start-end:count", an empty address section, branches
 * "from->to:count", then the object's build-id and path; addresses are
 * offsets in the object as perf's map_ip gives them). The branch rule is
 * simpleperf's: a taken direct branch goes to where the trace continued, a
 * taken indirect branch to 0. `rbdecode elements FILE` (a perf.data instead
 * of a snapshot folder) prints the OpenCSD generic elements of each AUX
 * fragment as trc_pkt_lister's `Idx:` lines, Idx counted in the queue's AUX
 * space, for comparison with trc_pkt_lister on the same bytes.
 */
#include "config.h"
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "decoder/source.h"
#include "cli.h"
#include "decoder/session/session.h"

struct count { const struct rb_dso *dso; uint64_t a, b, n; int branch; };

struct autofdo {
	struct rb_machine *m;
	struct count *v;                /* open addressing on (dso, a, b, branch) */
	size_t cap, n;
	int oom;
};

static size_t slot(const struct autofdo *f, const struct rb_dso *d, uint64_t a, uint64_t b, int br)
{
	size_t mask = f->cap - 1;
	size_t i = (size_t)(((uintptr_t)d * 0x9e3779b97f4a7c15ULL) ^ (a * 0xc2b2ae3d27d4eb4fULL) ^
			    (b * 0x165667b19e3779f9ULL) ^ (uint64_t)br) >> 7 & mask;
	while (f->v[i].dso && !(f->v[i].dso == d && f->v[i].a == a && f->v[i].b == b && f->v[i].branch == br))
		i = (i + 1) & mask;
	return i;
}

static void add(struct autofdo *f, const struct rb_dso *d, uint64_t a, uint64_t b, int br)
{
	if ((f->n + 1) * 2 > f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 1024;
		struct count *old = f->v, *nv = calloc(cap, sizeof(*nv));
		if (!nv) {
			f->oom = 1;
			return;
		}
		size_t ocap = f->cap;
		f->v = nv;
		f->cap = cap;
		for (size_t i = 0; i < ocap; i++)
			if (old[i].dso)
				f->v[slot(f, old[i].dso, old[i].a, old[i].b, old[i].branch)] = old[i];
		free(old);
	}
	struct count *c = &f->v[slot(f, d, a, b, br)];
	if (!c->dso) {
		*c = (struct count){ .dso = d, .a = a, .b = b, .branch = br };
		f->n++;
	}
	c->n++;
}

/* The object and offset of @ip in the thread's maps, or NULL. */
static const struct rb_dso *locate(struct autofdo *f, const struct rb_range_ev *ev, uint64_t ip, uint64_t *off)
{
	struct rb_thread *t = ev->tid >= 0 ? rb_machine_thread(f->m, ev->pid, ev->tid, 0) : NULL;
	const struct rb_map *map = rb_machine_find_map(f->m, t, ip);
	if (!map || !map->dso)
		return NULL;
	*off = ip - map->start + map->pgoff;
	return map->dso;
}

static int fdo_begin(void *ctx, struct rb_machine *m)
{
	((struct autofdo *)ctx)->m = m;
	return 0;
}

static int fdo_range(void *ctx, const struct rb_range_ev *ev)
{
	struct autofdo *f = ctx;
	uint64_t start, end, to = 0;
	const struct rb_dso *d = locate(f, ev, ev->start, &start);
	if (!d || locate(f, ev, ev->end, &end) != d)
		return 0;     /* simpleperf leaves out ranges outside a known object */
	add(f, d, start, end, 0);
	if (ev->taken) {
		if (ev->kind == RB_RANGE_DIRECT_BRANCH && ev->next && locate(f, ev, ev->next, &to) != d)
			to = 0;
		if (ev->kind != RB_RANGE_DIRECT_BRANCH)
			to = 0;
		add(f, d, end, to, 1);
	}
	return f->oom ? -1 : 0;
}

static int by_dso_kind_addr(const void *pa, const void *pb)
{
	const struct count *a = pa, *b = pb;
	int c = strcmp(a->dso->long_name, b->dso->long_name);
	if (c)
		return c;
	if (a->dso != b->dso)
		return a->dso < b->dso ? -1 : 1;
	if (a->branch != b->branch)
		return a->branch - b->branch;
	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	return a->b < b->b ? -1 : a->b > b->b;
}

static void print_autofdo(struct autofdo *f, FILE *o)
{
	size_t n = 0;
	for (size_t i = 0; i < f->cap; i++)
		if (f->v[i].dso)
			f->v[n++] = f->v[i];
	if (n)          /* no counts (no code found): no array, and qsort(NULL) stops UBSan */
		qsort(f->v, n, sizeof(*f->v), by_dso_kind_addr);
	for (size_t i = 0; i < n;) {
		const struct rb_dso *d = f->v[i].dso;
		size_t j = i, nr = 0, nb = 0;
		for (; j < n && f->v[j].dso == d; j++)
			f->v[j].branch ? nb++ : nr++;
		fprintf(o, "%zu\n", nr);
		for (size_t k = i; k < i + nr; k++)
			fprintf(o, "%" PRIx64 "-%" PRIx64 ":%" PRIu64 "\n", f->v[k].a, f->v[k].b, f->v[k].n);
		fprintf(o, "0\n%zu\n", nb);
		for (size_t k = i + nr; k < j; k++)
			fprintf(o, "%" PRIx64 "->%" PRIx64 ":%" PRIu64 "\n", f->v[k].a, f->v[k].b, f->v[k].n);
		fprintf(o, "// build_id: 0x");
		for (int k = 0; k < 20; k++)
			fprintf(o, "%02x", k < d->build_id_size ? d->build_id[k] : 0);
		fprintf(o, "\n// %s\n\n", d->long_name);
		i = j;
	}
}

/* While the session's objects are still alive (the counts point at them). */
static int fdo_end(void *ctx)
{
	struct autofdo *f = ctx;
	if (!f->oom)
		print_autofdo(f, stdout);
	return f->oom ? -1 : 0;
}

static void print_element(void *ctx, const char *line)
{
	FILE *o = ctx;
	fputs(line, o);
	fputc('\n', o);
}

static int run(int argc, char **argv, int elements)
{
	static const struct option longopts[] = {
		CLI_OPT_SYMFS, CLI_OPT_SYMDIR, { "cpu", required_argument, NULL, 'C' },
		{ "vmlinux", required_argument, NULL, 'V' }, { "kcore", required_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	struct rb_session_opts so;
	struct autofdo f = { 0 };
	unsigned warnings = 0;
	int c;
	memset(&so, 0, sizeof(so));
	optind = 1;
	while ((c = getopt_long(argc, argv, "C:h", longopts, NULL)) != -1) {
		switch (c) {
		case 's': case 'C': case 'V': case 'K': case 'Y':
			if (cli_session_option(c, optarg, &so) < 0)
				return EXIT_USAGE;
			break;
		default:
			return cli_usage(elements ? "elements" : "autofdo", c);
		}
	}
	const char *path = cli_operand(argc, argv, elements ? "elements" : "autofdo");
	if (!path)
		return EXIT_USAGE;
	so.path = cli_perf_data_dir(path, &so);
	so.warn = cli_warn_cb;
	so.warn_ctx = &warnings;
	struct rb_sink sink = { .ctx = &f, .begin = fdo_begin };
	if (elements) {
		so.aux_element = print_element;
		so.aux_element_ctx = stdout;
	} else {
		sink.range = fdo_range;
		sink.end = fdo_end;
	}
	struct rb_session_stats stats;
	struct pd_error err;
	int rc = rb_session_run(&so, &sink, &stats, &err);
	if (rc < 0 && rc >= PD_ERR_NOATTR) {
		cli_error("%s", err.msg);
		free(f.v);
		return cli_status_of(rc);
	}
	free(f.v);
	if (stats.stop.code)
		cli_error("%s", stats.stop.msg);
	if (rc || f.oom || fflush(stdout)) {
		cli_error("%s", f.oom ? "out of memory" : "writing the output failed");
		return EXIT_INTERNAL;
	}
	return rb_session_partial(&stats) ? EXIT_PARTIAL : EXIT_OK;
}

int cmd_autofdo(int argc, char **argv) { return run(argc, argv, 0); }
int cmd_trace_elements(int argc, char **argv) { return run(argc, argv, 1); }
