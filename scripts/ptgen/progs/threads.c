/*
 * threads - fixture program 2: two threads (the second made with a raw
 * clone) each run a loop with conditional branches, direct and indirect calls
 * and a sched_yield system call every few rounds; the main thread then waits
 * for the second one's exit through its CLONE_CHILD_CLEARTID futex word.
 */
#include "sys.h"

#define CLONE_FLAGS 0x250f00   /* VM FS FILES SIGHAND THREAD SYSVSEM CHILD_CLEARTID */

static unsigned char stack2[16384] __attribute__((aligned(16)));
static volatile int child_tid = 1;
static volatile unsigned results[2];

typedef unsigned (*step_fn)(unsigned);
__attribute__((noinline)) static unsigned st_a(unsigned x) { return x * 5 + 1; }
__attribute__((noinline)) static unsigned st_b(unsigned x) { return x ^ (x >> 3); }
static step_fn const steps[2] = { st_a, st_b };

__attribute__((noinline)) static unsigned inner(unsigned x, unsigned n)
{
	for (unsigned j = 0; j < n; j++)
		x = (x & 1) ? x + j : x ^ j;
	return x;
}

__attribute__((noinline)) static void worker(unsigned id)
{
	unsigned x = id * 77;
	for (unsigned i = 0; i < 60; i++) {
		x = steps[(x >> 2) & 1](x);
		x = inner(x, 3 + id);
		if (i % 20 == 19)
			sys0(SYS_sched_yield);
	}
	results[id - 1] = x;
}

void ptgen_thread2(void);
void __attribute__((used)) ptgen_thread2(void)
{
	worker(2);
}

long spawn(void (*fn)(void), void *stack_top, volatile int *ctid);
__asm__(".text\n.globl spawn\nspawn:\n"
	"\tmov %rdi, %r9\n"
	"\tmov %rdx, %r10\n"
	"\tmov $" "0x250f00" ", %edi\n"
	"\txor %edx, %edx\n"
	"\txor %r8d, %r8d\n"
	"\tmov $56, %eax\n"
	"\tsyscall\n"
	"\ttest %rax, %rax\n"
	"\tjnz 1f\n"
	"\txor %ebp, %ebp\n"
	"\tcall *%r9\n"
	"\tmov $60, %eax\n"
	"\txor %edi, %edi\n"
	"\tsyscall\n"
	"1:\tret\n");

void __attribute__((noreturn, used)) ptgen_main(void)
{
	spawn(ptgen_thread2, stack2 + sizeof(stack2), &child_tid);
	worker(1);
	while (child_tid)
		sys4(SYS_futex, (long)&child_tid, 0 /* FUTEX_WAIT */, child_tid, 0);
	sys_exit_group((int)((results[0] + results[1]) & 0));
}

__asm__(".text\n.globl _start\n_start:\n"
	"\txor %ebp, %ebp\n"
	"\tand $-16, %rsp\n"
	"\tcall ptgen_main\n"
	"\thlt\n");
