/*
 * test_calls.c - decoder/calls, the calls builder every output shares:
 * call paths are interned (the address kept only without a symbol, the root
 * first); a call and its return make one call with the branch count between
 * them; a return that skips levels closes the inner calls as never returned;
 * a thread's first branch puts its function on the stack as a call never
 * seen; a call to the next instruction is no call; a jump to another
 * symbol's start is a tail call that the passing return closes; each call
 * carries its duration and what the calls it made took; a decoder
 * restart on the thread's queue and an exec in the main thread close every
 * open call at the thread's last branch time; a trace end pushes an entry
 * that the next trace begin pops; the flush closes what is open in thread
 * key order; a callback's stop code is returned and nothing is emitted after
 * it. Expected values follow perf's thread stack (util/thread-stack.c).
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "decoder/calls/calls.h"
#include "decoder/source.h"
#include "tap.h"

struct path { uint64_t id, parent, sym, ip; };

struct got {
	struct path paths[64];
	size_t np;
	struct rb_call calls[64];
	size_t nc;
	int stop_at;                  /* the call callback returns 9 on this call (1-based), 0: never */
};

static int on_path(void *ctx, uint64_t id, uint64_t parent, uint64_t sym, uint64_t ip)
{
	struct got *g = ctx;
	if (g->np < 64)
		g->paths[g->np++] = (struct path){ id, parent, sym, ip };
	return 0;
}

static int on_call(void *ctx, const struct rb_call *c)
{
	struct got *g = ctx;
	if (g->nc < 64)
		g->calls[g->nc++] = *c;
	return g->stop_at && (int)g->nc == g->stop_at ? 9 : 0;
}

/* symbols: main 10 at 0x1000, f 11 at 0x2000, g 12 at 0x3000 */
enum { MAIN = 10, F = 11, G = 12 };
#define CALL (RB_IP_FLAG_BRANCH | RB_IP_FLAG_CALL)
#define RET (RB_IP_FLAG_BRANCH | RB_IP_FLAG_RETURN)

static int br(struct rb_calls *c, uint64_t thread, int32_t cpu, uint64_t time, uint64_t from, uint64_t from_sym,
	      uint64_t to, uint64_t to_sym, uint64_t to_off, uint32_t flags, uint64_t ref)
{
	struct rb_calls_branch b = { .thread = thread, .comm = 1, .main_thread = 1, .cpu = cpu, .tid = -1,
				     .time = time, .from = from, .to = to, .flags = flags, .insns = 7, .cycles = 3,
				     .from_sym = from_sym, .to_sym = to_sym, .to_off = to_off, .ref = ref };
	return rb_calls_branch(c, &b);
}

static struct rb_calls *fresh(struct got *g)
{
	memset(g, 0, sizeof(*g));
	struct rb_calls_out o = { .ctx = g, .path = on_path, .call = on_call };
	return rb_calls_new(&o);
}

/* Thread 1 on CPU 0: main calls f (branch 1, time 100), f calls g (branch 2, time 110). */
static void main_f_g(struct rb_calls *c)
{
	br(c, 1, 0, 100, 0x1010, MAIN, 0x2000, F, 0, CALL, 1);
	br(c, 1, 0, 110, 0x2005, F, 0x3000, G, 0, CALL, 2);
}

static const struct rb_call *call_of(const struct got *g, uint64_t id)
{
	for (size_t i = 0; i < g->nc; i++)
		if (g->calls[i].id == id)
			return &g->calls[i];
	return NULL;
}

static void test_paths(void)
{
	struct got g;
	struct rb_calls *c = fresh(&g);
	uint64_t root = rb_calls_root(c);
	uint64_t a = rb_calls_path(c, root, F, 0x2004), b = rb_calls_path(c, root, F, 0x2008);
	uint64_t x = rb_calls_path(c, root, 0, 0x2004), y = rb_calls_path(c, root, 0, 0x2008);
	ok(root == 1 && g.np >= 1 && g.paths[0].id == 1 && !g.paths[0].parent && !g.paths[0].sym && !g.paths[0].ip,
	   "the root call path is made first, as id 1 (0, 0, 0)");
	ok(a == b && a == 2 && g.paths[1].ip == 0, "with a symbol the address is not part of the path (ids %llu %llu)",
	   (unsigned long long)a, (unsigned long long)b);
	ok(x != y && x == 3 && y == 4 && g.paths[2].ip == 0x2004, "without one each address is a path of its own");
	ok(rb_calls_root(c) == 1 && g.np == 4, "asked again, nothing new is made (%zu paths)", g.np);
	rb_calls_free(c);
}

static void test_call_return(void)
{
	struct got g;
	struct rb_calls *c = fresh(&g);
	main_f_g(c);
	br(c, 1, 0, 120, 0x3010, G, 0x2008, F, 8, RET, 3);            /* g returns into f */
	ok(g.nc == 1, "a return closes one call (%zu)", g.nc);
	const struct rb_call *cg = call_of(&g, 3);
	ok(cg && cg->flags == 0 && cg->call_time == 110 && cg->return_time == 120 && cg->call_ref == 2 &&
	   cg->return_ref == 3 && cg->branches == 1 && cg->insns == 7 && cg->cycles == 3 && cg->parent_id == 2,
	   "g: called at 110 by branch 2, returned at 120 by branch 3, 1 branch, parent f");
	br(c, 1, 0, 130, 0x2010, F, 0x1015, MAIN, 0x15, RET, 4);      /* f returns into main */
	const struct rb_call *cf = call_of(&g, 2);
	ok(cf && cf->flags == 0 && cf->branches == 3 && cf->parent_id == 1 && cf->call_ref == 1 && cf->return_ref == 4,
	   "f: returned by branch 4 after 3 branches, under main");
	ok(cf && cg && cg->duration == 10 && cg->children_time == 0 && cf->duration == 30 &&
	   cf->children_time == 10 && cf->children_branches == 1,
	   "a call's duration, and its children's time and branches (f: 30 ns, of which g's 10 ns and 1 branch)");
	ok(rb_calls_flush(c) == 0 && g.nc == 3, "the flush closes what is open");
	const struct rb_call *cm = call_of(&g, 1);
	ok(cm && cm->flags == (RB_CALL_NO_CALL | RB_CALL_NO_RETURN) && cm->return_time == 130 && cm->return_ref == 0 &&
	   cm->branches == 4 && cm->parent_id == 0,
	   "main, where the trace began: never seen called, never returned, closed at the last branch time");
	/* paths: root, main, main/f, main/f/g */
	ok(g.np == 4 && g.paths[1].parent == 1 && g.paths[1].sym == MAIN && g.paths[2].parent == 2 &&
	   g.paths[2].sym == F && g.paths[3].parent == 3 && g.paths[3].sym == G && cg && cg->path == 4 &&
	   cg->parent_path == 3, "call paths nest: root / main / f / g");
	rb_calls_free(c);
}

static void test_skipped_levels(void)
{
	struct got g;
	struct rb_calls *c = fresh(&g);
	main_f_g(c);
	br(c, 1, 0, 120, 0x3010, G, 0x1015, MAIN, 0x15, RET, 3);      /* g returns straight into main */
	const struct rb_call *cg = call_of(&g, 3), *cf = call_of(&g, 2);
	ok(g.nc == 2 && cg && cg->flags == RB_CALL_NO_RETURN && cf && cf->flags == 0 && cg->return_time == 120,
	   "a return past a level: the inner call never returned, the outer one did");
	/* a call to the next instruction (call; pop) is no call */
	br(c, 1, 0, 130, 0x1020, MAIN, 0x1025, MAIN, 0x25, CALL, 4);
	rb_calls_flush(c);
	ok(g.nc == 3, "a call to the next instruction pushes nothing (%zu calls)", g.nc);
	rb_calls_free(c);
}

static void test_tail_call(void)
{
	struct got g;
	struct rb_calls *c = fresh(&g);
	br(c, 1, 0, 100, 0x1010, MAIN, 0x2000, F, 0, CALL, 1);
	br(c, 1, 0, 110, 0x2020, F, 0x3000, G, 0, RB_IP_FLAG_BRANCH, 2);   /* jump to g's start */
	br(c, 1, 0, 115, 0x3004, G, 0x3008, G, 8, RB_IP_FLAG_BRANCH, 3);   /* a jump inside g: nothing */
	br(c, 1, 0, 120, 0x3010, G, 0x1015, MAIN, 0x15, RET, 4);
	const struct rb_call *cg = call_of(&g, 3), *cf = call_of(&g, 2);
	ok(cg && (cg->flags & RB_CALL_NON_CALL) && cf && cf->flags == 0 && cf->return_ref == 4 && cg->parent_id == 2,
	   "a jump to another symbol's start is a tail call under the caller, closed by the return past it");
	rb_calls_free(c);
}

static void test_restart_exec_trace_end(void)
{
	struct got g;
	struct rb_calls *c = fresh(&g);
	br(c, 1, 2, 200, 0x1010, MAIN, 0x2000, F, 0, CALL, 1);
	ok(rb_calls_restart(c, 2, -1) == 0, "a restart on CPU 2's queue");
	br(c, 1, 2, 300, 0x2030, F, 0x2040, F, 0x40, RB_IP_FLAG_BRANCH, 2);
	ok(g.nc == 2 && g.calls[0].flags == RB_CALL_NO_RETURN && g.calls[0].return_time == 200 &&
	   g.calls[1].flags == (RB_CALL_NO_CALL | RB_CALL_NO_RETURN) && g.calls[1].return_time == 200,
	   "after a restart the thread's next branch closes its calls at its last branch time");
	/* an exec: the main thread's comm changes */
	struct rb_calls_branch b = { .thread = 1, .comm = 2, .main_thread = 1, .cpu = 2, .tid = -1, .time = 400,
				     .from = 0x5000, .to = 0x5010, .flags = RB_IP_FLAG_BRANCH, .from_sym = 20,
				     .to_sym = 20, .to_off = 0x10, .ref = 3 };
	rb_calls_branch(c, &b);
	ok(g.nc == 3 && g.calls[2].comm == 1 && g.calls[2].return_time == 300,
	   "an exec closes every call of the old program (%zu calls)", g.nc);
	/* trace end then trace begin: the entry the end pushed (only with 2 or more) is popped by the begin */
	b = (struct rb_calls_branch){ .thread = 1, .comm = 2, .main_thread = 1, .cpu = 2, .tid = -1, .time = 410,
				      .from = 0x5010, .to = 0x6000, .flags = CALL, .from_sym = 20, .to_sym = 21,
				      .ref = 4 };
	rb_calls_branch(c, &b);
	b.time = 420, b.from = 0x6004, b.to = 0, b.flags = RB_IP_FLAG_BRANCH | RB_IP_FLAG_TRACE_END, b.ref = 5;
	rb_calls_branch(c, &b);
	size_t before = g.nc;
	b.time = 500, b.from = 0, b.to = 0x6008, b.flags = RB_IP_FLAG_BRANCH | RB_IP_FLAG_TRACE_BEGIN, b.ref = 6;
	rb_calls_branch(c, &b);
	ok(g.nc == before + 1 && g.calls[g.nc - 1].flags == 0 && g.calls[g.nc - 1].call_time == 420 &&
	   g.calls[g.nc - 1].return_time == 500 && g.calls[g.nc - 1].return_ref == 6,
	   "a trace end's entry is closed by the next trace begin");
	rb_calls_free(c);
}

static void test_flush_order_and_stop(void)
{
	struct got g;
	struct rb_calls *c = fresh(&g);
	br(c, 9, 0, 100, 0x1010, MAIN, 0x2000, F, 0, CALL, 1);
	br(c, 5, 1, 101, 0x1010, MAIN, 0x2000, F, 0, CALL, 2);
	rb_calls_flush(c);
	ok(g.nc == 4 && g.calls[0].thread == 5 && g.calls[1].thread == 5 && g.calls[2].thread == 9,
	   "the flush closes threads in key order, innermost first");
	rb_calls_free(c);

	c = fresh(&g);
	g.stop_at = 1;
	main_f_g(c);
	int rc = br(c, 1, 0, 120, 0x3010, G, 0x1015, MAIN, 0x15, RET, 3);   /* would close 2 calls */
	ok(rc == 9 && g.nc == 1, "a callback's stop code is returned and nothing follows it (rc %d, %zu calls)", rc, g.nc);
	ok(br(c, 1, 0, 130, 0x1020, MAIN, 0x2000, F, 0, CALL, 4) == 9 && rb_calls_flush(c) == 9 && g.nc == 1 &&
	   rb_calls_error(c) == 9, "and every later call says so");
	rb_calls_free(c);
	rb_calls_free(NULL);
}

/* A thread that ended on a CPU: its calls close when another thread branches there, as the flush closes them. */
static void test_thread_gone(void)
{
	struct got g;
	struct rb_calls *c = fresh(&g);
	main_f_g(c);                                                     /* thread 1 on CPU 0 */
	br(c, 2, 1, 112, 0x1010, MAIN, 0x2000, F, 0, CALL, 3);           /* thread 2 on CPU 1 */
	ok(rb_calls_thread_gone(c, 1, 0) == 0 && g.nc == 0, "a thread gone from CPU 0: nothing closes yet");
	br(c, 1, 0, 115, 0x3010, G, 0x3020, G, 0x20, RB_IP_FLAG_BRANCH, 4);  /* still its branches: the decoder lags */
	br(c, 2, 1, 116, 0x2005, F, 0x3000, G, 0, CALL, 5);              /* another thread, another CPU */
	ok(g.nc == 0, "its late branches, and other CPUs' branches, close nothing");
	br(c, 3, 0, 120, 0x1010, MAIN, 0x2000, F, 0, CALL, 6);           /* another thread on CPU 0 */
	const struct rb_call *cm = call_of(&g, 1), *cg = call_of(&g, 3);
	ok(g.nc == 3 && cm && cg && g.calls[0].id == 3 && cg->return_time == 115 && cg->flags == RB_CALL_NO_RETURN &&
	   cm->return_time == 115 && cm->flags == (RB_CALL_NO_CALL | RB_CALL_NO_RETURN) && cm->branches == 3,
	   "another thread's branch on CPU 0 closes its 3 calls, innermost first, as the flush does: at its last branch");
	br(c, 3, 0, 125, 0x2005, F, 0x3000, G, 0, CALL, 7);
	rb_calls_flush(c);
	size_t t1 = 0;
	for (size_t i = 0; i < g.nc; i++)
		t1 += g.calls[i].thread == 1;
	ok(t1 == 3 && g.nc == 3 + 3 + 3, "the flush closes the others, and nothing of it again (%zu calls)", g.nc);
	rb_calls_free(c);

	c = fresh(&g);
	br(c, 1, 0, 100, 0x1010, MAIN, 0x2000, F, 0, CALL, 1);
	rb_calls_thread_gone(c, 1, 0);
	rb_calls_thread_gone(c, 4, 0);                                   /* thread 4 ran there after it, and ended */
	ok(g.nc == 2 && g.calls[0].thread == 1, "another thread ending on that CPU closes it too");
	ok(rb_calls_thread_gone(c, 5, -1) == 0 && rb_calls_thread_gone(c, 5, 1 << 20) == 0,
	   "no CPU, or an absurd one: nothing to do");
	rb_calls_free(c);
}

int main(void)
{
	test_paths();
	test_call_return();
	test_skipped_levels();
	test_tail_call();
	test_restart_exec_trace_end();
	test_flush_order_and_stop();
	test_thread_gone();
	return done_testing();
}
