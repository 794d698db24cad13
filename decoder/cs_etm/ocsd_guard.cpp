/*
 * ocsd_guard.cpp - the wrappers ocsd_guard.h declares: each OpenCSD C API
 * call inside try / catch, so that no C++ exception crosses into the C
 * decoder. A failure returns what the call returns when it fails on its
 * own (an invalid tree handle, OCSD_ERR_MEM or OCSD_ERR_FAIL, a fatal
 * datapath response); an std::bad_alloc, or OCSD_ERR_MEM from the library
 * itself (returned, or logged as the reason of a fatal response), also sets
 * this thread's flag for rb_ocsd_oom(). The only C++ of the project.
 *
 * Decoding itself (ocsd_dt_process_data) also runs under a fault guard:
 * OpenCSD 1.3.3 dereferences freed memory on some damaged ETMv4 trace
 * (TrcPktDecodeEtmV4I::mispredictAtom iterates its P0 stack after erasing
 * from it; fuzz_trace_cs found it). A SIGSEGV, SIGBUS or SIGFPE raised
 * inside that call returns to the wrapper (siglongjmp) as a fatal response
 * and sets rb_ocsd_crashed(): the caller abandons the tree (its memory is
 * in an unknown state, so it is neither used nor freed again) and says
 * what was not decoded. The same signals anywhere else go to the handler
 * that was there before (the default, or a sanitizer's).
 *
 * OpenCSD makes its registry of decoder types on first use with a
 * new (std::nothrow) that it does not check: when that allocation fails,
 * ocsd_dt_create_decoder calls through a null pointer (alloc_fail_exit.test
 * found it). The registry's getter, exported by libopencsd and retrying the
 * allocation while it is null, is asked first: null is OCSD_ERR_MEM.
 * OpenCSD also catches every exception inside its packet processors and
 * logs it as OCSD_ERR_FAIL, a bad_alloc included; a new-handler (operator
 * new calls it when the allocation fails, before throwing) sets the flag
 * first, so that memory running out is never read as a damaged trace.
 */
#define RB_OCSD_GUARD_IMPL
#include "config.h"
#include <new>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include "ocsd_guard.h"

static thread_local int oom, crashed;
static thread_local sigjmp_buf *volatile guard_jb;
static const int guard_sigs[] = { SIGSEGV, SIGBUS, SIGFPE };
static struct sigaction prev_act[3];

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	sigjmp_buf *jb = guard_jb;
	if (jb) {
		guard_jb = nullptr;
		siglongjmp(*jb, sig);
	}
	for (int i = 0; i < 3; i++) {   /* not OpenCSD's: whoever handled it before */
		if (guard_sigs[i] != sig)
			continue;
		const struct sigaction *p = &prev_act[i];
		if (p->sa_flags & SA_SIGINFO) {
			if (p->sa_sigaction) {
				p->sa_sigaction(sig, si, uc);
				return;
			}
		} else if (p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN) {
			p->sa_handler(sig);
			return;
		}
		sigaction(sig, p, nullptr);   /* the default: return and fault again, now fatal */
		return;
	}
}

static void install_guard(void)
{
	static int done;
	if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
		return;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < 3; i++)
		sigaction(guard_sigs[i], &sa, &prev_act[i]);
}

/* @call's value, or @fail after an exception (bad_alloc: memory, also flagged) */
#define GUARD(fail, call)                              \
	try {                                          \
		return call;                           \
	} catch (const std::bad_alloc &) {             \
		oom = 1;                               \
		return fail;                           \
	} catch (...) {                                \
		return fail;                           \
	}

/* an ocsd_err_t call: OpenCSD's own OCSD_ERR_MEM (a failed new (std::nothrow)) is memory too */
static ocsd_err_t mem(ocsd_err_t e)
{
	if (e == OCSD_ERR_MEM)
		oom = 1;
	return e;
}

/* a fatal datapath response: memory when the error OpenCSD logged for it is OCSD_ERR_MEM */
static ocsd_datapath_resp_t fatal_mem(ocsd_datapath_resp_t r)
{
	if (OCSD_DATA_RESP_IS_FATAL(r)) {
		ocsd_trc_index_t index;
		uint8_t chan;
		char msg[8];
		if (ocsd_get_last_err(&index, &chan, msg, sizeof(msg)) == OCSD_ERR_MEM)
			oom = 1;
	}
	return r;
}

/* libopencsd's registry of decoder types (ocsd_lib_dcd_register.h, not installed by Debian's package) */
class OcsdLibDcdRegister {
public:
	static OcsdLibDcdRegister *getDecoderRegister();
};

/*
 * operator new found no memory: say so, then do what would have been done
 * (the handler that was there, or bad_alloc; NULL for a nothrow new).
 * Installed with the first decode tree, so that a program loading the
 * rbtrace extension keeps its own handler, called from ours.
 */
static std::new_handler prev_new_handler;
static void on_no_memory()
{
	oom = 1;
	if (prev_new_handler) {
		prev_new_handler();
		return;
	}
	throw std::bad_alloc();
}
static void install_new_handler(void)
{
	static int done;
	if (!__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
		prev_new_handler = std::set_new_handler(on_no_memory);
}

static dcd_tree_handle_t no_tree_is_mem(dcd_tree_handle_t h)
{
	if (h == C_API_INVALID_TREE_HANDLE)
		oom = 1;
	return h;
}

extern "C" {

int rb_ocsd_oom(void) { return oom; }
void rb_ocsd_oom_clear(void) { oom = 0; }

dcd_tree_handle_t rb_ocsd_create_dcd_tree(const ocsd_dcd_tree_src_t src_type, const uint32_t cfg_flags)
{
	install_new_handler();
	/* with a valid source type and flags, OpenCSD returns no tree only when its new (std::nothrow) failed */
	GUARD(C_API_INVALID_TREE_HANDLE, no_tree_is_mem(ocsd_create_dcd_tree(src_type, cfg_flags)))
}

static ocsd_datapath_resp_t process(const dcd_tree_handle_t h, const ocsd_datapath_op_t op,
				    const ocsd_trc_index_t index, const uint32_t size, const uint8_t *data,
				    uint32_t *used)
{
	GUARD(OCSD_RESP_FATAL_SYS_ERR, fatal_mem(ocsd_dt_process_data(h, op, index, size, data, used)))
}

ocsd_datapath_resp_t rb_ocsd_dt_process_data(const dcd_tree_handle_t h, const ocsd_datapath_op_t op,
					     const ocsd_trc_index_t index, const uint32_t size,
					     const uint8_t *data, uint32_t *used)
{
	install_guard();
	sigjmp_buf jb;
	if (sigsetjmp(jb, 1)) {   /* OpenCSD faulted: this tree is lost */
		crashed = 1;
		if (used)
			*used = 0;
		return OCSD_RESP_FATAL_SYS_ERR;
	}
	guard_jb = &jb;
	ocsd_datapath_resp_t r = process(h, op, index, size, data, used);
	guard_jb = nullptr;
	return r;
}

int rb_ocsd_crashed(void) { return crashed; }
void rb_ocsd_crashed_clear(void) { crashed = 0; }

ocsd_err_t rb_ocsd_dt_set_gen_elem_outfn(const dcd_tree_handle_t h, FnTraceElemIn fn, const void *ctx)
{
	GUARD(mem(OCSD_ERR_MEM), mem(ocsd_dt_set_gen_elem_outfn(h, fn, ctx)))
}

ocsd_err_t rb_ocsd_dt_create_decoder(const dcd_tree_handle_t h, const char *name, const int flags,
				     const void *cfg, unsigned char *csid)
{
	GUARD(mem(OCSD_ERR_MEM), mem(!OcsdLibDcdRegister::getDecoderRegister() ? OCSD_ERR_MEM :
				     ocsd_dt_create_decoder(h, name, flags, cfg, csid)))
}

ocsd_err_t rb_ocsd_dt_attach_packet_callback(const dcd_tree_handle_t h, const unsigned char csid,
					     const ocsd_c_api_cb_types type, void *fn, const void *ctx)
{
	GUARD(mem(OCSD_ERR_MEM), mem(ocsd_dt_attach_packet_callback(h, csid, type, fn, ctx)))
}

ocsd_err_t rb_ocsd_dt_add_buffer_mem_acc(const dcd_tree_handle_t h, const ocsd_vaddr_t addr,
					 const ocsd_mem_space_acc_t space, const uint8_t *buf, const uint32_t len)
{
	GUARD(mem(OCSD_ERR_MEM), mem(ocsd_dt_add_buffer_mem_acc(h, addr, space, buf, len)))
}

ocsd_err_t rb_ocsd_dt_add_callback_mem_acc(const dcd_tree_handle_t h, const ocsd_vaddr_t st, const ocsd_vaddr_t en,
					   const ocsd_mem_space_acc_t space, Fn_MemAcc_CB fn, const void *ctx)
{
	GUARD(mem(OCSD_ERR_MEM), mem(ocsd_dt_add_callback_mem_acc(h, st, en, space, fn, ctx)))
}

ocsd_err_t rb_ocsd_dt_add_callback_trcid_mem_acc(const dcd_tree_handle_t h, const ocsd_vaddr_t st,
						 const ocsd_vaddr_t en, const ocsd_mem_space_acc_t space,
						 Fn_MemAccID_CB fn, const void *ctx)
{
	GUARD(mem(OCSD_ERR_MEM), mem(ocsd_dt_add_callback_trcid_mem_acc(h, st, en, space, fn, ctx)))
}

ocsd_err_t rb_ocsd_def_errlog_init(const ocsd_err_severity_t verbosity, const int create_output_logger)
{
	GUARD(mem(OCSD_ERR_MEM), mem(ocsd_def_errlog_init(verbosity, create_output_logger)))
}

ocsd_err_t rb_ocsd_def_errlog_config_output(const int flags, const char *file)
{
	GUARD(mem(OCSD_ERR_MEM), mem(ocsd_def_errlog_config_output(flags, file)))
}

ocsd_err_t rb_ocsd_def_errlog_set_strprint_cb(const dcd_tree_handle_t h, void *ctx, FnDefLoggerPrintStrCB fn)
{
	GUARD(mem(OCSD_ERR_MEM), mem(ocsd_def_errlog_set_strprint_cb(h, ctx, fn)))
}

ocsd_err_t rb_ocsd_dt_set_pkt_protocol_printer(const dcd_tree_handle_t h, uint8_t csid, int monitor)
{
	GUARD(mem(OCSD_ERR_MEM), mem(ocsd_dt_set_pkt_protocol_printer(h, csid, monitor)))
}

ocsd_err_t rb_ocsd_pkt_str(const ocsd_trace_protocol_t protocol, const void *pkt, char *buf, const int size)
{
	GUARD(mem(OCSD_ERR_MEM), mem(ocsd_pkt_str(protocol, pkt, buf, size)))
}

ocsd_err_t rb_ocsd_gen_elem_str(const ocsd_generic_trace_elem *elem, char *buf, const int size)
{
	GUARD(mem(OCSD_ERR_MEM), mem(ocsd_gen_elem_str(elem, buf, size)))
}

}
