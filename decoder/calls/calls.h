/*
 * calls.h - calls and returns from traced branches, and the call paths they
 * run in: the stage between the session's branch events and every output
 * that shows calls (the SQLite calls and call_paths tables, flame graphs,
 * timelines). Format-neutral: threads, comms and symbols are the caller's
 * keys (any non-zero number that names one object), call ids and call path
 * ids are made here, and what is made is handed to the caller's callbacks.
 *
 * The rules are perf's thread stack (util/thread-stack.c, which its
 * call-return processor uses for export-to-sqlite.py's "calls"), so that
 * exported-sql-viewer.py shows the same call trees on either database:
 *  - a thread's first branch puts the function it is in on the stack as a
 *    call never seen (RB_CALL_NO_CALL), and so does a return that matches
 *    nothing;
 *  - a call pushes its target's symbol under the caller's call path (a call
 *    to the next instruction, the position-independent "call; pop", is none);
 *  - a jump to the first instruction of another symbol (a tail call) is
 *    pushed too (RB_CALL_NON_CALL), and popped by the return that passes it;
 *  - a return pops the newest entry it returns to, and every entry above it
 *    as never returned (RB_CALL_NO_RETURN); a return into the kernel's
 *    caller from the kernel pops the kernel's entries;
 *  - trace end (not a system call's) pushes an entry without a symbol that
 *    the next trace begin pops;
 *  - an exec in the main thread, the first branch of a thread on a queue
 *    whose decoder restarted since the thread's previous branch
 *    (rb_calls_restart: data missing, lost sync), and the end
 *    (rb_calls_flush), pop everything (never returned, at the thread's last
 *    branch time); perf's decoder counts these restarts as trace numbers.
 * A call's return address: perf knows the call's length; branch events carry
 * none, so a return matches a call when it lands within the 15 bytes (the
 * longest x86 instruction) after it. perf's x86 retpoline detection is not
 * done. Branch, instruction and cycle counts are the differences of the
 * thread's running sums between push and pop.
 *
 * Call paths are perf's call_path__findnew: (parent, symbol, address), the
 * address kept only when there is no symbol; sampled call chains share them
 * (rb_calls_path), so that one numbering serves both.
 *
 * Not thread-safe: one builder per session, called from the sink's thread.
 * Every int function returns 0, -ENOMEM, or the first non-zero value a
 * callback returned (nothing more is emitted after that).
 */
#ifndef RB_CALLS_H
#define RB_CALLS_H

#include <stdint.h>

enum { RB_CALL_NO_CALL = 1, RB_CALL_NO_RETURN = 2, RB_CALL_NON_CALL = 4 };

/* One call, as perf's calls table has it. */
struct rb_call {
	uint64_t id;                  /* from 1, in the order calls were entered */
	uint64_t thread, comm;        /* the caller's keys */
	uint64_t path, parent_path;   /* call path ids */
	uint64_t parent_id;           /* the enclosing call's id, 0 at the bottom of the stack */
	uint64_t call_time, return_time;
	uint64_t duration;            /* return_time - call_time, 0 if the times go backwards */
	uint64_t call_ref, return_ref;   /* the refs of the branches that entered and left it */
	uint64_t branches, insns, cycles;
	/* what the calls it made took: their durations and branch counts summed (self = the rest) */
	uint64_t children_time, children_branches;
	int flags;                    /* RB_CALL_* */
};

struct rb_calls_out {
	void *ctx;
	/* A call path made: @id (from 1, the root (0, 0, 0) first), @parent, @sym, @ip (0 when @sym). */
	int (*path)(void *ctx, uint64_t id, uint64_t parent, uint64_t sym, uint64_t ip);
	/* A call that ended (returned, or closed as never returned). */
	int (*call)(void *ctx, const struct rb_call *c);
	/*
	 * Optional (NULL: not wanted): call @id entered at @time in @thread
	 * (@comm its comm then), in call path @path of symbol @sym (0: none).
	 * Calls are entered and ended (call) in the order a timeline shows
	 * them, each thread's properly nested: enter, the enters and ends of
	 * the calls it makes, its end.
	 */
	int (*enter)(void *ctx, uint64_t id, uint64_t thread, uint64_t comm, uint64_t path, uint64_t sym,
		     uint64_t time);
};

/* A taken branch, a trace begin (from 0) or a trace end (to 0), with its symbols resolved by the caller. */
struct rb_calls_branch {
	uint64_t thread, comm;        /* keys, non-zero */
	int main_thread;              /* the thread is its process's main thread */
	int32_t cpu, tid;             /* the trace queue: its CPU, or (cpu < 0) its thread */
	uint64_t time, from, to;
	uint32_t flags;               /* RB_IP_FLAG_* (decoder/source.h) */
	uint64_t insns, cycles;       /* since the previous branch of the queue */
	uint64_t from_sym, to_sym;    /* symbol keys, 0: none */
	uint64_t to_off;              /* @to's offset in its symbol */
	uint64_t ref;                 /* the caller's reference for it (a sample id), given back in rb_call */
};

struct rb_calls;

/* NULL when memory ran out. */
struct rb_calls *rb_calls_new(const struct rb_calls_out *out);
/* The root call path's id (made on first use); 0 after a failure. */
uint64_t rb_calls_root(struct rb_calls *c);
/* The id of call path (@parent, @sym, @ip), made on first use; 0 after a failure. */
uint64_t rb_calls_path(struct rb_calls *c, uint64_t parent, uint64_t sym, uint64_t ip);
/* The decoder of queue (@cpu, or @tid when @cpu < 0) restarted: calls open there end at its next branch. */
int rb_calls_restart(struct rb_calls *c, int32_t cpu, int32_t tid);
int rb_calls_branch(struct rb_calls *c, const struct rb_calls_branch *b);
/*
 * Thread @thread exited and was switched out of @cpu for the last time (not
 * preempted): it runs no more. The trace may still give it branches after
 * that record (a decoder follows the switch in the trace itself), so its
 * open calls end, as rb_calls_flush would end them, when a branch of another
 * thread comes on @cpu (or another thread ends there), and its stack's
 * memory goes: a program of many short-lived threads does not keep a stack
 * for every thread it ever ran. A branch of it after all starts afresh.
 */
int rb_calls_thread_gone(struct rb_calls *c, uint64_t thread, int32_t cpu);
/* Every call still open, in thread key order, as never returned; the stacks are emptied. */
int rb_calls_flush(struct rb_calls *c);
/* Whether a gap of @reason (rb_gap_ev) means the queue's decoder restarted (then: rb_calls_restart). */
int rb_calls_gap_restarts(const char *reason);
/* The first failure (-ENOMEM or a callback's value), 0 if none. */
int rb_calls_error(const struct rb_calls *c);
/* Accepts NULL. Emits nothing. */
void rb_calls_free(struct rb_calls *c);

#endif
