/*
 * ocsd_guard.cpp - the wrappers ocsd_guard.h declares: each OpenCSD C API
 * call inside try / catch, so that no C++ exception crosses into the C
 * decoder. A failure returns what the call returns when it fails on its
 * own (an invalid tree handle, OCSD_ERR_MEM or OCSD_ERR_FAIL, a fatal
 * datapath response); an std::bad_alloc, or OCSD_ERR_MEM from the library
 * itself (returned, or logged as the reason of a fatal response), also sets
 * this thread's flag for rb_ocsd_oom(). The only C++ of the project.
 */
#define RB_OCSD_GUARD_IMPL
#include "config.h"
#include <new>
#include "ocsd_guard.h"

static thread_local int oom;

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

extern "C" {

int rb_ocsd_oom(void) { return oom; }
void rb_ocsd_oom_clear(void) { oom = 0; }

dcd_tree_handle_t rb_ocsd_create_dcd_tree(const ocsd_dcd_tree_src_t src_type, const uint32_t cfg_flags)
{
	GUARD(C_API_INVALID_TREE_HANDLE, ocsd_create_dcd_tree(src_type, cfg_flags))
}

ocsd_datapath_resp_t rb_ocsd_dt_process_data(const dcd_tree_handle_t h, const ocsd_datapath_op_t op,
					     const ocsd_trc_index_t index, const uint32_t size,
					     const uint8_t *data, uint32_t *used)
{
	GUARD(OCSD_RESP_FATAL_SYS_ERR, fatal_mem(ocsd_dt_process_data(h, op, index, size, data, used)))
}

ocsd_err_t rb_ocsd_dt_set_gen_elem_outfn(const dcd_tree_handle_t h, FnTraceElemIn fn, const void *ctx)
{
	GUARD(mem(OCSD_ERR_MEM), mem(ocsd_dt_set_gen_elem_outfn(h, fn, ctx)))
}

ocsd_err_t rb_ocsd_dt_create_decoder(const dcd_tree_handle_t h, const char *name, const int flags,
				     const void *cfg, unsigned char *csid)
{
	GUARD(mem(OCSD_ERR_MEM), mem(ocsd_dt_create_decoder(h, name, flags, cfg, csid)))
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
