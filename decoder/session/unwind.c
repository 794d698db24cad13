/*
 * unwind.c - see unwind.h. elfutils' libdwfl does the unwinding, as perf's
 * util/unwind-libdw.c uses it: one Dwfl per process (its maps), the
 * binaries reported as libdwfl asks for addresses in them (the file the
 * machine resolves for each map, loaded at its start less its offset), and
 * a thread whose initial registers are the sample's user registers and
 * whose memory is the sample's copy of the user stack, or else the mapped
 * file. Each frame's address is perf's: the first is the registers' ip, the
 * others return addresses less one, so that they name the call.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "unwind.h"
#include "machine.h"

#ifdef HAVE_LIBDW
#include <dwarf.h>
#include <elfutils/libdwfl.h>

enum { ARCH_X86_64, ARCH_AARCH64, ARCH_PPC64 };

#define PROCS_MAX 64             /* processes with a Dwfl kept at once */

struct proc_dwfl {
	const void *key;         /* the process's maps (machine.h: shared by its threads) */
	int32_t pid;
	Dwfl *dwfl;
	int attached;
	int stale;               /* its modules no longer match the maps: made anew before the next use */
	uint64_t used;
};

struct rb_unwind {
	int arch;
	struct proc_dwfl procs[PROCS_MAX];
	uint64_t clock;
	/* the sample being unwound, for the callbacks */
	struct rb_machine *m;
	struct rb_thread *t;
	const struct pd_sample *ps;
	struct proc_dwfl *p;
	uint64_t sp;
	uint64_t *ips;
	size_t n, max;
	const char *why;
	char why_buf[128];
	int nomem;
	/* the file of the last memory read outside the stack */
	int fd;
	char *fd_path;
};

static char *debuginfo_path;
static const Dwfl_Callbacks offline_callbacks = {
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
	.section_address = dwfl_offline_section_address,
};

/* The sample's user register of perf's number @bit (its PERF_REG_*), 0 if not recorded. */
static uint64_t reg(const struct pd_sample *ps, unsigned bit)
{
	uint64_t mask = ps->regs_user.mask;
	if (bit >= 64 || !(mask & (UINT64_C(1) << bit)))
		return 0;
	uint64_t k = (uint64_t)__builtin_popcountll(mask & ((UINT64_C(1) << bit) - 1));
	return k < ps->regs_user.nr ? pd_u64_at(ps->regs_user.regs, k) : 0;
}

/* perf's register numbers (arch/<arch>/include/uapi/asm/perf_regs.h) */
enum { X86_AX, X86_BX, X86_CX, X86_DX, X86_SI, X86_DI, X86_BP, X86_SP, X86_IP, X86_R8 = 16 };
enum { ARM64_SP = 31, ARM64_PC = 32 };
enum { PPC_R1 = 1, PPC_NIP = 32, PPC_LINK = 36 };

static uint64_t stack_pointer(const struct rb_unwind *u, const struct pd_sample *ps)
{
	return u->arch == ARCH_X86_64 ? reg(ps, X86_SP) : u->arch == ARCH_AARCH64 ? reg(ps, ARM64_SP) : reg(ps, PPC_R1);
}

static uint64_t pc_of(const struct rb_unwind *u, const struct pd_sample *ps)
{
	return u->arch == ARCH_X86_64 ? reg(ps, X86_IP) : u->arch == ARCH_AARCH64 ? reg(ps, ARM64_PC) : reg(ps, PPC_NIP);
}

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	(void)dwfl;
	struct rb_unwind *u = arg;
	if (*thread_argp)
		return 0;
	*thread_argp = u;
	return u->t->tid;
}

static int read_file(struct rb_unwind *u, const char *path, uint64_t off, Dwarf_Word *result)
{
	if (!u->fd_path || strcmp(u->fd_path, path)) {
		if (u->fd >= 0)
			close(u->fd);
		free(u->fd_path);
		u->fd_path = strdup(path);
		u->fd = u->fd_path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
		if (!u->fd_path)
			u->nomem = 1;
	}
	uint64_t v;
	if (u->fd < 0 || pread(u->fd, &v, sizeof(v), (off_t)off) != (ssize_t)sizeof(v))
		return 0;
	*result = v;
	return 1;
}

/*
 * Memory, as perf's unwinder (util/unwind-libunwind-local.c, access_mem)
 * sees it: the sample's copy of the user stack from its stack pointer, a
 * word ending before the copy's end; any other address in a mapping is
 * read from the mapped file, and reads as 0 where that fails (a word past
 * the copy in [stack], a missing file: perf's read "succeeds" with 0, so a
 * return address there is 0 and the chain ends on perf's frame -1); an
 * address in no mapping cannot be read.
 */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	(void)dwfl;
	struct rb_unwind *u = arg;
	const struct pd_sample *ps = u->ps;
	uint64_t valid = ps->stack_dyn_size < ps->stack_size ? ps->stack_dyn_size : ps->stack_size;
	if (addr >= u->sp && addr - u->sp < valid && valid - (addr - u->sp) > 8) {
		uint64_t v;
		memcpy(&v, ps->stack + (addr - u->sp), sizeof(v));
		*result = v;
		return true;
	}
	if (addr >= rb_machine_kernel_start(u->m) || !rb_machine_find_map(u->m, u->t, addr))
		return false;
	struct rb_code_piece piece;
	if (rb_machine_file_at(u->m, u->t, addr, &piece) < 0 || addr - piece.vaddr + 8 > piece.size ||
	    !read_file(u, piece.file, piece.offset + (addr - piece.vaddr), result))
		*result = 0;
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct rb_unwind *u = thread_arg;
	const struct pd_sample *ps = u->ps;
	Dwarf_Word r[32];
	switch (u->arch) {
	case ARCH_X86_64: {
		/* DWARF: rax rdx rcx rbx rsi rdi rbp rsp r8..r15, then the return address column (rip) */
		static const unsigned order[8] = { X86_AX, X86_DX, X86_CX, X86_BX, X86_SI, X86_DI, X86_BP, X86_SP };
		Dwarf_Word x[17];
		for (int i = 0; i < 8; i++)
			x[i] = reg(ps, order[i]);
		for (int i = 0; i < 8; i++)
			x[8 + i] = reg(ps, X86_R8 + (unsigned)i);
		x[16] = reg(ps, X86_IP);
		return dwfl_thread_state_registers(thread, 0, 17, x);
	}
	case ARCH_AARCH64:
		for (unsigned i = 0; i < 32; i++)      /* x0..x30, sp */
			r[i] = reg(ps, i);
		if (!dwfl_thread_state_registers(thread, 0, 32, r))
			return false;
		dwfl_thread_state_register_pc(thread, reg(ps, ARM64_PC));
		return true;
	default:
		for (unsigned i = 0; i < 32; i++)      /* r0..r31 */
			r[i] = reg(ps, i);
		if (!dwfl_thread_state_registers(thread, 0, 32, r))
			return false;
		r[0] = reg(ps, PPC_LINK);              /* DWARF 65: lr */
		if (!dwfl_thread_state_registers(thread, 65, 1, r))
			return false;
		dwfl_thread_state_register_pc(thread, reg(ps, PPC_NIP));
		return true;
	}
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

/*
 * The binary holding @pc reported to the process's Dwfl: 1, or 0 when no
 * file has it (the walk stops there), the maps changed (the Dwfl is made
 * anew for the next sample) or libdwfl refused it.
 */
static int report_module(struct rb_unwind *u, Dwarf_Addr pc)
{
	struct rb_code_piece piece;
	if (rb_machine_file_at(u->m, u->t, pc, &piece) < 0) {
		struct rb_addr_loc al;
		rb_machine_resolve(u->m, u->t, 2, pc, &al);
		snprintf(u->why_buf, sizeof(u->why_buf), "no file for %s", al.dso ? al.dso->long_name : "[unknown]");
		u->why = u->why_buf;
		return 0;
	}
	Dwfl_Module *mod = dwfl_addrmodule(u->p->dwfl, pc);
	if (mod) {
		const char *mainfile = NULL;
		dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &mainfile, NULL);
		if (mainfile && !strcmp(mainfile, piece.file))
			return 1;
		u->p->stale = 1;
		u->why = "the process's maps changed";
		return 0;
	}
	dwfl_report_begin_add(u->p->dwfl);
	mod = dwfl_report_elf(u->p->dwfl, piece.file, piece.file, -1, piece.vaddr - piece.offset, false);
	dwfl_report_end(u->p->dwfl, NULL, NULL);
	if (!mod) {
		u->p->stale = 1;        /* it overlaps one reported before: the maps changed */
		u->why = dwfl_errmsg(-1);
		return 0;
	}
	return 1;
}

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct rb_unwind *u = arg;
	Dwarf_Addr pc;
	bool activation;
	if (!dwfl_frame_pc(state, &pc, NULL)) {
		u->why = dwfl_errmsg(-1);
		return DWARF_CB_ABORT;
	}
	/*
	 * its binary first, for the next step's CFI; without it the frame is
	 * still one (perf shows it) and the walk ends there
	 */
	int have = report_module(u, pc);
	if (!dwfl_frame_pc(state, &pc, &activation)) {
		if (!u->why)
			u->why = dwfl_errmsg(-1);
		return DWARF_CB_ABORT;
	}
	if (!activation)
		pc--;
	u->ips[u->n++] = pc;
	return !have || u->n == u->max ? DWARF_CB_ABORT : DWARF_CB_OK;
}

/* Whether the CFI at @pc (a frame's lookup address) gives its caller a return address: not DW_CFA_undefined. */
static bool return_address_defined(Dwfl *dwfl, Dwarf_Addr pc)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc);
	if (!mod)
		return false;
	Dwarf_Addr bias;
	Dwarf_CFI *cfis[2] = { dwfl_module_dwarf_cfi(mod, &bias), NULL };
	Dwarf_Addr biases[2] = { bias, 0 };
	cfis[1] = dwfl_module_eh_cfi(mod, &biases[1]);
	for (int i = 0; i < 2; i++) {
		Dwarf_Frame *frame;
		if (!cfis[i] || dwarf_cfi_addrframe(cfis[i], pc - biases[i], &frame))
			continue;
		int ra = dwarf_frame_info(frame, NULL, NULL, NULL);
		Dwarf_Op ops_mem[3], *ops;
		size_t nops;
		/* no operations in ops_mem: DW_CFA_undefined, the outermost frame (NULL: same value) */
		int rc = ra >= 0 ? dwarf_frame_register(frame, ra, ops_mem, &ops, &nops) : -1;
		bool defined = rc >= 0 && (nops || !ops);
		free(frame);
		return defined;
	}
	return false;
}

static struct proc_dwfl *proc_of(struct rb_unwind *u, struct rb_thread *t)
{
	struct proc_dwfl *oldest = &u->procs[0];
	for (size_t i = 0; i < PROCS_MAX; i++) {
		struct proc_dwfl *p = &u->procs[i];
		if (p->dwfl && p->key == t->maps && p->pid == t->pid && !p->stale) {
			p->used = ++u->clock;
			return p;
		}
		if (!p->dwfl || p->used < oldest->used)
			oldest = p;
	}
	if (oldest->dwfl)
		dwfl_end(oldest->dwfl);
	memset(oldest, 0, sizeof(*oldest));
	oldest->dwfl = dwfl_begin(&offline_callbacks);
	if (!oldest->dwfl) {
		u->nomem = 1;
		return NULL;
	}
	oldest->key = t->maps;
	oldest->pid = t->pid;
	oldest->used = ++u->clock;
	return oldest;
}

struct rb_unwind *rb_unwind_new(const char *arch, int *nomem)
{
	*nomem = 0;
	int a;
	if (!arch) {
#if defined(__aarch64__)
		arch = "aarch64";
#elif defined(__powerpc64__)
		arch = "ppc64";
#else
		arch = "x86_64";
#endif
	}
	if (!strcmp(arch, "x86_64"))
		a = ARCH_X86_64;
	else if (!strcmp(arch, "aarch64") || !strcmp(arch, "arm64"))
		a = ARCH_AARCH64;
	else if (!strncmp(arch, "ppc64", 5) || !strcmp(arch, "powerpc"))
		a = ARCH_PPC64;
	else
		return NULL;
	struct rb_unwind *u = calloc(1, sizeof(*u));
	if (!u) {
		*nomem = 1;
		return NULL;
	}
	u->arch = a;
	u->fd = -1;
	return u;
}

void rb_unwind_free(struct rb_unwind *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < PROCS_MAX; i++)
		if (u->procs[i].dwfl)
			dwfl_end(u->procs[i].dwfl);
	if (u->fd >= 0)
		close(u->fd);
	free(u->fd_path);
	free(u);
}

int rb_unwind_user(struct rb_unwind *u, struct rb_machine *m, struct rb_thread *t, const struct pd_sample *ps,
		   uint64_t *ips, size_t max, const char **stop_why)
{
	*stop_why = NULL;
	if (!u || !t || !max || ps->regs_user.abi != 2 /* PERF_SAMPLE_REGS_ABI_64 */ || !ps->regs_user.nr)
		return 0;
	/* no stack copied (a sample in an exec, the old stack gone): perf does not unwind it */
	if (!ps->stack_size || !ps->stack_dyn_size)
		return 0;
	u->m = m;
	u->t = t;
	u->ps = ps;
	u->ips = ips;
	u->max = max;
	u->n = 0;
	u->why = NULL;
	u->nomem = 0;
	u->sp = stack_pointer(u, ps);
	u->p = proc_of(u, t);
	if (!u->p)
		return u->nomem ? -ENOMEM : 0;
	if (!report_module(u, pc_of(u, ps))) {
		ips[u->n++] = pc_of(u, ps);      /* the ip alone: the chain stops at its binary */
		*stop_why = u->why;
		return (int)u->n;
	}
	if (!u->p->attached) {
		if (!dwfl_attach_state(u->p->dwfl, NULL, t->pid, &thread_callbacks, u)) {
			*stop_why = dwfl_errmsg(-1);
			u->p->stale = 1;
			return 0;
		}
		u->p->attached = 1;
	}
	int rc = dwfl_getthread_frames(u->p->dwfl, t->tid, frame_cb, u);
	/*
	 * libdwfl ends quietly on a return address of 0 as on an undefined
	 * one; perf's libunwind steps to the 0 and shows it as frame -1 (its
	 * ip less one) before it stops: a read past the stack copy, mostly
	 */
	if (!rc && u->n && u->n < u->max && return_address_defined(u->p->dwfl, u->ips[u->n - 1]))
		u->ips[u->n++] = UINT64_MAX;
	if (rc && !u->why && u->n < u->max)
		u->why = dwfl_errmsg(-1);
	if (u->nomem)
		return -ENOMEM;
	*stop_why = u->n < u->max ? u->why : NULL;
	return (int)u->n;
}

/* A DIE's name, its abstract origin's for an inlined instance. */
static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
	return n ? n : "??";
}

size_t rb_unwind_inlines(struct rb_unwind *u, uint64_t pc, const char **names, size_t max)
{
	if (!u || !u->p || !u->p->dwfl || !max)
		return 0;
	Dwfl_Module *mod = dwfl_addrmodule(u->p->dwfl, pc);
	Dwarf_Addr bias;
	Dwarf_Die *cu = mod ? dwfl_module_addrdie(mod, pc, &bias) : NULL;
	if (!cu)
		return 0;
	Dwarf_Die *scopes = NULL;
	int n = dwarf_getscopes(cu, pc - bias, &scopes);
	Dwarf_Die die;
	int found = 0;
	for (int i = 0; i < n && !found; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram) {
			die = scopes[i];
			found = 1;
		}
	}
	free(scopes);
	/*
	 * out from the innermost: each inlined instance, then the concrete
	 * scope holding it (dwarf_getscopes lists an instance's abstract scopes
	 * after it, so its parents are looked up in the tree), to the function
	 */
	size_t k = 0;
	while (found && k < max) {
		names[k++] = die_name(&die);
		if (dwarf_tag(&die) != DW_TAG_inlined_subroutine)
			break;
		Dwarf_Die *up = NULL;
		int m = dwarf_getscopes_die(&die, &up);
		found = 0;
		for (int i = 1; i < m && !found; i++) {
			int tag = dwarf_tag(&up[i]);
			if (tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram) {
				die = up[i];
				found = 1;
			}
		}
		free(up);
	}
	return k;
}

#else  /* no libdw: no unwinder */

size_t rb_unwind_inlines(struct rb_unwind *u, uint64_t pc, const char **names, size_t max)
{
	(void)u, (void)pc, (void)names, (void)max;
	return 0;
}


struct rb_unwind *rb_unwind_new(const char *arch, int *nomem)
{
	(void)arch;
	*nomem = 0;
	return NULL;
}

void rb_unwind_free(struct rb_unwind *u)
{
	(void)u;
}

int rb_unwind_user(struct rb_unwind *u, struct rb_machine *m, struct rb_thread *t, const struct pd_sample *ps,
		   uint64_t *ips, size_t max, const char **stop_why)
{
	(void)u, (void)m, (void)t, (void)ps, (void)ips, (void)max;
	*stop_why = "rbdecode was built without libdw";
	return 0;
}
#endif
