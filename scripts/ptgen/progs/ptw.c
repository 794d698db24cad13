/*
 * ptw - fixture program 3 (single thread): PTWRITE instructions (64- and
 * 32-bit operands) in a loop with conditional branches and calls, for the
 * PTWRITE events of a trace without FUP (config ptw, not fup_on_ptw). The
 * CPUs the flow is single-stepped on may lack PTWRITE (#UD): ptgen traces a
 * copy with each PTWRITE replaced by a NOP of the same length.
 */
#include "sys.h"

__attribute__((noinline)) static unsigned long mix(unsigned long x)
{
	__asm__ volatile("ptwrite %0" : : "r"(x));          /* 64-bit payload */
	return x * 2654435761u + 1;
}

__attribute__((noinline)) static unsigned step(unsigned i, unsigned acc)
{
	if (i & 1)
		__asm__ volatile("ptwrite %0" : : "r"(acc));    /* 32-bit payload */
	return acc ^ (i << 3);
}

void __attribute__((noreturn, used)) ptgen_main(void)
{
	unsigned long v = 7;
	unsigned acc = 1;
	for (unsigned i = 0; i < 12; i++) {
		if (i % 3 == 0)
			v = mix(v);
		acc = step(i, acc + (unsigned)v);
	}
	sys_exit_group((int)(acc & 0));
}

__asm__(".text\n.globl _start\n_start:\n"
	"\txor %ebp, %ebp\n"
	"\tand $-16, %rsp\n"
	"\tcall ptgen_main\n"
	"\thlt\n");
