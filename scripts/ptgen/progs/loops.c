/*
 * loops - fixture program 1 (single thread): counted loops with data-dependent
 * conditional branches, direct calls, indirect calls through a function table,
 * a switch compiled to a jump table, recursion 100 deep (deeper than the
 * 64-entry return-compression stack), and one system call (getpid).
 */
#include "sys.h"

typedef unsigned (*op_fn)(unsigned);

__attribute__((noinline)) static unsigned op_add(unsigned x) { return x + 7; }
__attribute__((noinline)) static unsigned op_xor(unsigned x) { return x ^ 0x5a; }
__attribute__((noinline)) static unsigned op_mul(unsigned x) { return x * 3; }
__attribute__((noinline)) static unsigned op_shr(unsigned x) { return (x >> 1) | 1; }

static op_fn const ops[4] = { op_add, op_xor, op_mul, op_shr };

__attribute__((noinline)) static unsigned pick(unsigned k, unsigned x)
{
	switch (k) {       /* dense cases: a jump table */
	case 0: return x + 1;
	case 1: return x * 5;
	case 2: return x - 9;
	case 3: return x << 2;
	case 4: return x ^ 0xff;
	case 5: return x | 0x100;
	case 6: return x & 0xfff;
	default: return x;
	}
}

__attribute__((noinline)) static unsigned deep(unsigned n)
{
	if (n == 0)
		return 1;
	unsigned r = deep(n - 1);
	__asm__ volatile("" : "+r"(r));   /* keep it a real (non-tail) recursion */
	return r * 3 + n;
}

__attribute__((noinline)) static unsigned work(unsigned rounds)
{
	unsigned acc = 1;
	for (unsigned i = 0; i < rounds; i++) {
		if (i % 3 == 0)
			acc = op_add(acc);
		else if (acc & 4)
			acc = ops[(i + acc) & 3](acc);
		acc = pick((acc + i) % 9, acc);
	}
	return acc;
}

void __attribute__((noreturn, used)) ptgen_main(void)
{
	unsigned v = work(200);
	v += deep(100);
	v += (unsigned)sys0(SYS_getpid) & 0;   /* a system call; its value is not used */
	v += work(40);
	sys_exit_group((int)(v & 0));
}

__asm__(".text\n.globl _start\n_start:\n"
	"\txor %ebp, %ebp\n"
	"\tand $-16, %rsp\n"
	"\tcall ptgen_main\n"
	"\thlt\n");
