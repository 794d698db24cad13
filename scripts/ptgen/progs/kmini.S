/*
 * kmini.S - a tiny stand-in for a kernel, linked at the x86-64 kernel text
 * address, for the kernel-tracing Intel PT fixture (ptgen variant "kernel").
 * A system call enters at entry_SYSCALL_64 and leaves by sysretq; the exit
 * path ends at the wrmsr that clears IA32_RTIT_CTL.TraceEn (what perf does
 * when the task is scheduled out for good). The code is position-independent
 * and touches only the stack, so ptgen can single-step a copy of it in user
 * space (ptgen ktrace) to learn its true flow, stopping at sysretq / wrmsr.
 * Branches: a direct call, a counted loop (conditional branches), an
 * indirect call (TIP), returns (compressed), and the far transfers.
 * Built with -DKMOD (rbfix/kmini-mod), sys_handler lives in a module: the
 * section .modtext, which kmini.ld places at the first module address.
 */
	.text
	.globl	_text, _stext, entry_SYSCALL_64, do_syscall_64, sys_handler, do_exit, _etext
	.type	entry_SYSCALL_64, @function
_text:
_stext:
entry_SYSCALL_64:
	pushq	%rcx			/* user return address */
	pushq	%r11			/* user flags */
	movq	%rax, %rdi		/* the system call number */
	call	do_syscall_64
	popq	%r11
	popq	%rcx
	cmpq	$231, %rdi		/* exit_group does not return */
	je	1f
	sysretq
1:	call	do_exit
	.size	entry_SYSCALL_64, . - entry_SYSCALL_64

	.type	do_syscall_64, @function
do_syscall_64:
	movl	$3, %ecx
2:	addq	%rcx, %rax
	decl	%ecx
	jnz	2b
	leaq	sys_handler(%rip), %rax
	call	*%rax
	ret
	.size	do_syscall_64, . - do_syscall_64

#ifdef KMOD
	.section .modtext, "ax", @progbits
#endif
	.type	sys_handler, @function
sys_handler:
	xorl	%eax, %eax
	testq	%rdi, %rdi
	js	3f
	incl	%eax
3:	ret
	.size	sys_handler, . - sys_handler
	.text

	.type	do_exit, @function
do_exit:
	movl	$0x570, %ecx		/* IA32_RTIT_CTL */
	xorl	%eax, %eax
	xorl	%edx, %edx
	wrmsr
	.size	do_exit, . - do_exit
_etext:
	.section .note.GNU-stack, "", @progbits
