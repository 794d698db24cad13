/*
 * test_machine.c - the decoder's sideband model and time ordering on
 * hand-made inputs whose answers are known: maps that overlap and split,
 * fork cloning or sharing maps, perf's comm override and exec-comm rules,
 * resolve's cache of answers (the same answers as without it, perf's
 * last-lookup quirk included, through maps changing and symbols added),
 * and the ordered queue releasing rounds as perf's ordered_events does.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "decoder/session/machine.h"
#include "decoder/session/ordered.h"
#include "decoder/session/symtab.h"
#include "tap.h"

static const char *dso_at(struct rb_machine *m, struct rb_thread *t, uint64_t ip, uint64_t *addr)
{
	struct rb_addr_loc al;
	rb_machine_resolve(m, t, 2, ip, &al);
	if (addr)
		*addr = al.addr;
	return al.dso ? al.dso->long_name : NULL;
}

static void test_maps(void)
{
	struct rb_machine_opts o = { .buildid_dir = "/nonexistent" };
	struct rb_machine *m = rb_machine_new(&o);
	ok(m != NULL, "machine created");
	rb_machine_comm(m, 100, 100, "app", 1, 10);
	rb_machine_mmap(m, 100, 100, 0, 0x1000, 0x4000, 0x0, "/a", NULL, 0, 5, 0);
	rb_machine_mmap(m, 100, 100, 0, 0x2000, 0x1000, 0x7000, "/b", NULL, 0, 5, 0);
	struct rb_thread *t = rb_machine_thread(m, 100, 100, 0);
	uint64_t addr;
	const char *d1 = dso_at(m, t, 0x1500, &addr);
	ok(d1 && !strcmp(d1, "/a") && addr == 0x500, "left part of a split map keeps its object and offset");
	const char *d2 = dso_at(m, t, 0x2500, &addr);
	ok(d2 && !strcmp(d2, "/b") && addr == 0x7500, "the new map replaces the middle (addr = ip - start + pgoff)");
	const char *d3 = dso_at(m, t, 0x3500, &addr);
	ok(d3 && !strcmp(d3, "/a") && addr == 0x2500, "right part of a split map has its pgoff moved on");
	ok(dso_at(m, t, 0x5000, NULL) == NULL, "end of a map is exclusive");
	rb_machine_mmap(m, 100, 100, 0, 0x0, 0x10000, 0x0, "/c", NULL, 0, 5, 0);
	const char *d4 = dso_at(m, t, 0x2500, NULL);
	ok(d4 && !strcmp(d4, "/c"), "a map covering everything replaces all it covers");

	/* a thread of the process shares its maps; a forked process gets a copy */
	rb_machine_fork(m, 100, 100, 100, 101, 20);
	rb_machine_fork(m, 100, 100, 200, 200, 30);
	rb_machine_mmap(m, 100, 101, 0, 0x20000, 0x1000, 0, "/late", NULL, 0, 5, 0);
	struct rb_thread *thr = rb_machine_thread(m, 100, 101, 0), *child = rb_machine_thread(m, 200, 200, 0);
	ok(dso_at(m, t, 0x20000, NULL) && dso_at(m, thr, 0x2500, NULL), "threads of a process share maps");
	ok(dso_at(m, child, 0x2500, NULL) && !dso_at(m, child, 0x20000, NULL), "a forked process copies the maps at fork time");

	/* comms: the child inherits the parent's at the fork time; exec adds a new one */
	ok(child->comm && !strcmp(child->comm->name, "app") && child->comm->start == 30 && !child->comm->exec,
	   "a forked child takes the parent's comm, dated at the fork");
	rb_machine_comm(m, 200, 200, "tool", 1, 40);
	ok(!strcmp(child->comm->name, "tool") && child->comm->older && !strcmp(child->comm->older->name, "app"),
	   "a later COMM adds to the history instead of overriding");
	struct rb_thread *fresh = rb_machine_thread(m, 300, 300, 1);
	ok(fresh && !strcmp(fresh->comm->name, ":300") && !fresh->comm_set, "an unseen thread shows ':tid'");
	rb_machine_comm(m, 300, 300, "late", 0, 50);
	ok(!strcmp(fresh->comm->name, "late") && !fresh->comm->older, "the first COMM overrides the default");
	rb_machine_free(m);

	o.comm_exec = 1;
	m = rb_machine_new(&o);
	rb_machine_comm(m, 400, 400, "sh", 1, 10);
	rb_machine_comm(m, 400, 400, "renamed", 0, 20);
	struct rb_thread *p = rb_machine_thread(m, 400, 400, 0);
	struct rb_thread *w = rb_machine_thread(m, 400, 401, 1);
	struct rb_comm *c = rb_machine_sample_comm(m, w);
	ok(c && !strcmp(c->name, "sh"), "with comm_exec, samples show the main thread's exec comm");
	ok(rb_machine_main_thread(m, w) == p, "main thread of a thread is its process leader");
	rb_machine_free(m);
}

/*
 * A kernel address in user context: a sample's ip falls back to the
 * kernel's maps (perf's thread__find_map_fb), a callchain entry does not
 * (add_callchain_ip: a stale user frame that happens to hold a kernel
 * address is [unknown] in perf script, seen on a -a -g recording).
 */
static void test_chain_fallback(void)
{
	struct rb_machine_opts o = { .buildid_dir = "/nonexistent" };
	struct rb_machine *m = rb_machine_new(&o);
	ok(m != NULL, "machine created");
	if (!m)
		return;
	rb_machine_mmap(m, -1, 0, 1, 0xffffffff81000000ULL, 0x1000000, 0xffffffff81000000ULL, "[kernel.kallsyms]_text",
			NULL, 0, 5, 0);
	rb_machine_mmap(m, 100, 100, 0, 0x400000, 0x1000, 0, "/a", NULL, 0, 5, 0);
	struct rb_thread *t = rb_machine_thread(m, 100, 100, 0);
	struct rb_addr_loc al, ch, user, kern;
	rb_machine_resolve(m, t, 2, 0xffffffff81000000ULL, &al);
	rb_machine_resolve_chain(m, t, 2, 0xffffffff81000000ULL, &ch);
	rb_machine_resolve_chain(m, t, 2, 0x400010, &user);
	rb_machine_resolve_chain(m, t, 1, 0xffffffff81000010ULL, &kern);
	ok(al.map && al.kernel && !ch.map && !ch.dso && ch.addr == 0xffffffff81000000ULL,
	   "a kernel address in user context: the sample's ip falls back to the kernel, a chain entry has no map");
	ok(user.map && user.dso && !strcmp(user.dso->long_name, "/a") && kern.map && kern.kernel,
	   "chain entries in their own space resolve as before");
	rb_machine_resolve(m, t, 2, 0xffffffff81000000ULL, &al);
	ok(al.map && al.kernel, "and the chain's answer does not stay for the next sample (resolve's cache)");
	rb_machine_free(m);
}

/*
 * Resolve's cache against the walk it saves: two machines with the same
 * object, its symbols (a function, a zero-size one, gaps between), one
 * caching and one not, take the same random run of resolves, exports (at
 * the object address, as for a branch, and at the raw ip, as for a
 * call-chain entry: perf's quirk inserts "unknown" symbols there), new maps
 * over the object and forks; every answer must be the same.
 */
static struct rb_machine *resolve_machine(int no_cache)
{
	struct rb_machine_opts o = { .buildid_dir = "/nonexistent", .no_resolve_cache = no_cache };
	struct rb_machine *m = rb_machine_new(&o);
	struct rb_symtab_list *l = rb_symtab_list_new();
	struct rb_symtab *t = NULL;
	if (!m || !l)
		return m;
	rb_symtab_list_add(l, 0x1000, 0x100, "f", 1);
	rb_symtab_list_add(l, 0x2000, 0x200, "g", 1);
	rb_symtab_list_add(l, 0x3000, 0, "h", 1);
	if (rb_symtab_list_finish(l, RB_SYMTAB_FILE_OFFSET, "test", &t) == 0)
		rb_machine_set_recorded_symbols(m, "/nonexistent/r", 0, t);
	rb_machine_comm(m, 100, 100, "app", 1, 10);
	rb_machine_mmap(m, 100, 100, 0, 0x10000, 0x10000, 0, "/nonexistent/r", NULL, 0, 5, 0);
	return m;
}

static int same_sym(const struct rb_sym *a, const struct rb_sym *b)
{
	return (!a && !b) || (a && b && a->start == b->start && a->end == b->end && !strcmp(a->name, b->name));
}

static int same_al(const struct rb_addr_loc *a, const struct rb_addr_loc *b)
{
	return !a->map == !b->map && (!a->map || (a->map->start == b->map->start && a->map->end == b->map->end)) &&
	       !a->dso == !b->dso && (!a->dso || !strcmp(a->dso->long_name, b->dso->long_name)) &&
	       a->addr == b->addr && a->kernel == b->kernel && same_sym(a->sym, b->sym);
}

static void test_resolve_cache(void)
{
	struct rb_machine *m[2] = { resolve_machine(0), resolve_machine(1) };
	static const uint64_t off[] = { 0x1000, 0x1080, 0x10ff, 0x1100, 0x2000, 0x21ff, 0x2200, 0x3000, 0x3001,
					0x500, 0x4000, 0xfff0 };
	uint64_t seed = 12345;
	int bad = -1, ops = 0, pid = 100;
	for (int i = 0; i < 20000 && bad < 0 && m[0] && m[1]; i++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		uint64_t r = seed >> 33;
		uint64_t ip = 0x10000 + off[r % (sizeof(off) / sizeof(off[0]))];
		unsigned op = (unsigned)(r >> 8) % 100;
		if (op == 0) {          /* a new map over part of the object, then the object again */
			for (int k = 0; k < 2; k++) {
				rb_machine_mmap(m[k], 100, 100, 0, 0x12000, 0x1000, 0x2000, "/nonexistent/r", NULL, 0, 5, 0);
				if (r & 0x10000)
					rb_machine_mmap(m[k], 100, 100, 0, 0x10000, 0x10000, 0, "/nonexistent/r", NULL, 0, 5, 0);
			}
			continue;
		}
		if (op == 1 && pid < 120) {      /* a forked process: maps copied, the parent's freed later or not */
			pid++;
			for (int k = 0; k < 2; k++)
				rb_machine_fork(m[k], 100, 100, pid, pid, (uint64_t)i);
			continue;
		}
		int32_t tid = op < 10 ? 100 + (int32_t)(r % (uint64_t)(pid - 99)) : 100;
		struct rb_addr_loc al[2];
		const struct rb_sym *ex[2] = { NULL, NULL };
		for (int k = 0; k < 2; k++) {
			struct rb_thread *t = rb_machine_thread(m[k], tid, tid, 1);
			rb_machine_resolve_ip(m[k], t, ip, &al[k]);
			if (op < 60)
				ex[k] = al[k].sym = rb_machine_export_sym(m[k], &al[k], al[k].addr);
			else if (op < 75)
				ex[k] = rb_machine_export_sym(m[k], &al[k], ip);
		}
		ops++;
		if (!same_al(&al[0], &al[1]) || !same_sym(ex[0], ex[1]))
			bad = i;
	}
	ok(bad < 0 && ops > 15000, "resolve with its cache answers as without it, %d resolves (first difference: %d)",
	   ops, bad);
	rb_machine_free(m[0]);
	rb_machine_free(m[1]);
}

struct got { uint64_t t[16]; int n; };

static int collect(void *ctx, const struct rb_oq_item *it)
{
	struct got *g = ctx;
	if (g->n < 16)
		g->t[g->n++] = it->time;
	return 0;
}

static void test_ordered(void)
{
	struct rb_oq q;
	struct got g = { { 0 }, 0 };
	uint8_t rec[8] = { 0 };
	rb_oq_init(&q);
	rb_oq_push(&q, 30, 0, 0, rec, 8);
	rb_oq_push(&q, 10, 0, 0, rec, 8);
	rb_oq_round(&q, collect, &g);
	ok(g.n == 0, "first round releases nothing (perf flushes up to the previous round's max)");
	rb_oq_push(&q, 20, 0, 0, rec, 8);
	rb_oq_push(&q, 40, 0, 0, rec, 8);
	rb_oq_round(&q, collect, &g);
	ok(g.n == 3 && g.t[0] == 10 && g.t[1] == 20 && g.t[2] == 30, "second round releases up to 30, in time order");
	rb_oq_push(&q, 25, 0, 0, rec, 8);
	ok(q.late == 1, "an item older than what was released is counted");
	rb_oq_flush_all(&q, collect, &g);
	ok(g.n == 5 && g.t[3] == 25 && g.t[4] == 40, "the end releases the rest");
	rb_oq_free(&q);
}

int main(void)
{
	test_maps();
	test_chain_fallback();
	test_resolve_cache();
	test_ordered();
	return done_testing();
}
