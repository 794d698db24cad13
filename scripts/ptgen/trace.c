/*
 * trace.c - stage 1: the true instruction flow of a fixture program, from
 * ptrace single-stepping. Every user-space instruction address of every
 * thread is recorded in order.
 *
 * Threads: with PTRACE_O_TRACECLONE the new thread is traced from its first
 * instruction. To make the flow the same on every run, the new thread runs to
 * its exit while the creating thread waits in its clone event stop; then the
 * creator goes on. The programs are written so that this order is a valid
 * schedule (the creator's later wait finds the thread gone).
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ptgen.h"

void flow_push(struct thread_flow *t, uint64_t ip)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 4096;
		uint64_t *p = realloc(t->ip, cap * sizeof(*p));
		if (!p) {
			fprintf(stderr, "ptgen: out of memory\n");
			exit(4);
		}
		t->ip = p;
		t->cap = cap;
	}
	t->ip[t->n++] = ip;
}

void flow_free(struct flow *f)
{
	for (int i = 0; i < PTGEN_MAX_THREADS; i++)
		free(f->th[i].ip);
	memset(f, 0, sizeof(*f));
}

static int get_rip(pid_t tid, uint64_t *rip)
{
	errno = 0;
	long v = ptrace(PTRACE_PEEKUSER, tid, (void *)offsetof(struct user_regs_struct, rip), NULL);
	if (errno)
		return -1;
	*rip = (uint64_t)v;
	return 0;
}

/*
 * Step @tid until it exits or stops in a clone event (returns the new tid
 * then, 0 on exit). Records each address before executing it.
 */
static long step_until_event(pid_t tid, struct thread_flow *t, int *resume_pending, char *err, size_t errlen)
{
	for (;;) {
		uint64_t rip;
		if (!*resume_pending) {
			if (get_rip(tid, &rip) < 0) {
				snprintf(err, errlen, "PTRACE_PEEKUSER rip of %d: %s", tid, strerror(errno));
				return -1;
			}
			flow_push(t, rip);
		}
		*resume_pending = 0;
		if (ptrace(PTRACE_SINGLESTEP, tid, NULL, NULL) < 0) {
			snprintf(err, errlen, "PTRACE_SINGLESTEP %d: %s", tid, strerror(errno));
			return -1;
		}
		int st;
		if (waitpid(tid, &st, __WALL) < 0) {
			snprintf(err, errlen, "waitpid %d: %s", tid, strerror(errno));
			return -1;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st))
			return 0;
		if (!WIFSTOPPED(st)) {
			snprintf(err, errlen, "thread %d: unexpected wait status 0x%x", tid, st);
			return -1;
		}
		if (st >> 8 == (SIGTRAP | (PTRACE_EVENT_CLONE << 8))) {
			unsigned long nt;
			if (ptrace(PTRACE_GETEVENTMSG, tid, NULL, &nt) < 0) {
				snprintf(err, errlen, "PTRACE_GETEVENTMSG %d: %s", tid, strerror(errno));
				return -1;
			}
			*resume_pending = 1;   /* the clone instruction is recorded; it completes on the next step */
			return (long)nt;
		}
		if (WSTOPSIG(st) != SIGTRAP) {
			snprintf(err, errlen, "thread %d stopped by signal %d at instruction %zu", tid,
				 WSTOPSIG(st), t->n);
			return -1;
		}
	}
}

int trace_program(const char *path, struct flow *f, char *err, size_t errlen)
{
	memset(f, 0, sizeof(*f));
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR);
		if (fd >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
		}
		personality(ADDR_NO_RANDOMIZE);
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
			_exit(126);
		char *argv[] = { (char *)path, NULL };
		char *envp[] = { NULL };
		execve(path, argv, envp);
		_exit(127);
	}
	int st;
	if (waitpid(pid, &st, 0) < 0 || !WIFSTOPPED(st)) {
		snprintf(err, errlen, "%s: did not stop at exec under ptrace (status 0x%x)", path, st);
		return -1;
	}
	if (ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(long)(PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL)) < 0) {
		snprintf(err, errlen, "PTRACE_SETOPTIONS: %s", strerror(errno));
		kill(pid, SIGKILL);
		return -1;
	}
	f->nth = 1;
	int main_pending = 0;
	for (;;) {
		long nt = step_until_event(pid, &f->th[0], &main_pending, err, errlen);
		if (nt < 0)
			goto fail;
		if (nt == 0)
			break;
		if (f->nth >= PTGEN_MAX_THREADS) {
			snprintf(err, errlen, "%s: more than %d threads", path, PTGEN_MAX_THREADS);
			goto fail;
		}
		/* the new thread starts with a SIGSTOP; run it to its end */
		if (waitpid((pid_t)nt, &st, __WALL) < 0 || !WIFSTOPPED(st)) {
			snprintf(err, errlen, "new thread %ld did not stop", nt);
			goto fail;
		}
		int child_pending = 0;
		long r = step_until_event((pid_t)nt, &f->th[f->nth], &child_pending, err, errlen);
		if (r != 0) {
			if (r > 0)
				snprintf(err, errlen, "thread %ld created a thread", nt);
			goto fail;
		}
		f->nth++;
	}
	return 0;
fail:
	kill(pid, SIGKILL);
	waitpid(pid, &st, __WALL);
	return -1;
}

/*
 * The stand-in kernel's flow from its entry (@kim's ELF entry point) with
 * rax = @nr, to its sysretq or wrmsr (recorded, not executed: neither runs
 * in user mode). Its text is copied into a child at a user address with the
 * same page offset, and single-stepped there; the addresses are moved back
 * to the kernel's. The code must be position-independent and use only the
 * stack (progs/kmini.S). Further executable segments of the file (a
 * module's code, chained by image_open) are copied at the same distance.
 */
#define KCOPY_BASE 0x10000000ull

static int is_stop_insn(const uint8_t *p, size_t avail)
{
	return (avail >= 2 && p[0] == 0x0f && p[1] == 0x30) ||                  /* wrmsr */
	       (avail >= 3 && p[0] == 0x48 && p[1] == 0x0f && p[2] == 0x07);    /* sysretq */
}

/* The image of the chain from @im whose text holds @ip, or NULL. */
static const struct image *image_at(const struct image *im, uint64_t ip)
{
	for (; im; im = im->next)
		if (ip >= im->text_vaddr && ip < im->text_vaddr + im->text_size)
			return im;
	return NULL;
}

int trace_kernel(struct image *kim, uint64_t entry, uint64_t nr, struct thread_flow *out, char *err, size_t errlen)
{
	uint64_t page = kim->text_vaddr & ~0xfffull;
	memset(out, 0, sizeof(*out));
	if (!image_at(kim, entry)) {
		snprintf(err, errlen, "%s: entry point %#llx outside the text", kim->path, (unsigned long long)entry);
		return -1;
	}
	for (const struct image *s = kim; s; s = s->next)
		if (s->text_vaddr < page || s->text_vaddr - page > 0x40000000) {
			snprintf(err, errlen, "%s: segment at %#llx too far from the text for a user copy", kim->path,
				 (unsigned long long)s->text_vaddr);
			return -1;
		}
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		/* every executable segment (kernel text, modules) at the same distances as in the kernel */
		for (const struct image *s = kim; s; s = s->next) {
			uint64_t spage = s->text_vaddr & ~0xfffull, span = s->text_vaddr + s->text_size - spage;
			void *want = (void *)(uintptr_t)(KCOPY_BASE + (spage - page));
			void *p = mmap(want, (size_t)span, PROT_READ | PROT_WRITE | PROT_EXEC,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
			if (p != want)
				_exit(125);
			memcpy((uint8_t *)p + (s->text_vaddr - spage), s->file + s->text_offset, (size_t)s->text_size);
		}
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
			_exit(126);
		raise(SIGSTOP);
		_exit(127);
	}
	int st;
	struct user_regs_struct regs;
	if (waitpid(pid, &st, 0) < 0 || !WIFSTOPPED(st) || WSTOPSIG(st) != SIGSTOP) {
		snprintf(err, errlen, "%s: the child did not stop under ptrace (status 0x%x)", kim->path, st);
		goto fail;
	}
	if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) < 0) {
		snprintf(err, errlen, "PTRACE_GETREGS: %s", strerror(errno));
		goto fail;
	}
	regs.rip = KCOPY_BASE + (entry - page);
	regs.rax = nr;
	regs.rcx = 0x401000;     /* the user return address sysretq would take */
	regs.r11 = 0x246;
	regs.rsp &= ~0xfull;
	if (ptrace(PTRACE_SETREGS, pid, NULL, &regs) < 0) {
		snprintf(err, errlen, "PTRACE_SETREGS: %s", strerror(errno));
		goto fail;
	}
	for (;;) {
		uint64_t rip = 0;
		const struct image *s = NULL;
		if (get_rip(pid, &rip) < 0 || rip < KCOPY_BASE || !(s = image_at(kim, rip - KCOPY_BASE + page))) {
			snprintf(err, errlen, "%s: the copy left its text (rip %#llx) at step %zu", kim->path,
				 (unsigned long long)rip, out->n);
			goto fail;
		}
		uint64_t kip = rip - KCOPY_BASE + page;
		flow_push(out, kip);
		if (is_stop_insn(s->file + s->text_offset + (kip - s->text_vaddr), s->text_vaddr + s->text_size - kip))
			break;
		if (out->n > 100000) {
			snprintf(err, errlen, "%s: no sysretq or wrmsr within 100000 instructions", kim->path);
			goto fail;
		}
		if (ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL) < 0 || waitpid(pid, &st, 0) < 0 || !WIFSTOPPED(st) ||
		    WSTOPSIG(st) != SIGTRAP) {
			snprintf(err, errlen, "%s: single step %zu failed (status 0x%x)", kim->path, out->n, st);
			goto fail;
		}
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return 0;
fail:
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	free(out->ip);
	memset(out, 0, sizeof(*out));
	return -1;
}
