/*
 * sys.h - the few raw system calls the freestanding fixture programs make.
 * No libc: the single-stepped flow is only the program's own code, the same
 * on every run (static, non-PIE, no ASLR-dependent addresses in user code).
 */
#ifndef PTGEN_SYS_H
#define PTGEN_SYS_H

#define SYS_sched_yield 24
#define SYS_getpid 39
#define SYS_exit 60
#define SYS_exit_group 231
#define SYS_futex 202

static inline long sys1(long nr, long a)
{
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a) : "rcx", "r11", "memory");
	return r;
}

static inline long sys0(long nr)
{
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "a"(nr) : "rcx", "r11", "memory");
	return r;
}

static inline long sys4(long nr, long a, long b, long c, long d)
{
	long r;
	register long r10 __asm__("r10") = d;
	__asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10)
			 : "rcx", "r11", "memory");
	return r;
}

static __attribute__((noreturn)) inline void sys_exit_group(int code)
{
	sys1(SYS_exit_group, code);
	__builtin_unreachable();
}
#endif
