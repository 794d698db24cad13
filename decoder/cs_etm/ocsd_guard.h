/*
 * ocsd_guard.h - OpenCSD's C API without its C++ exceptions. The library is
 * C++ and its C API lets exceptions through (an std::bad_alloc from a
 * std::string in a decoder's constructor when memory runs out), which a C
 * caller cannot catch: the process would end in std::terminate. Each call
 * the decoder makes goes through a wrapper (ocsd_guard.cpp) that catches
 * them and returns the call's own failure value; rb_ocsd_oom() then says
 * whether the failure was memory. Include this instead of
 * <opencsd/c_api/opencsd_c_api.h>: the ocsd_ names below become the
 * wrappers' names.
 */
#ifndef RB_OCSD_GUARD_H
#define RB_OCSD_GUARD_H
#include <opencsd/c_api/opencsd_c_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when an OpenCSD call of this thread ran out of memory since the last rb_ocsd_oom_clear() */
int rb_ocsd_oom(void);
void rb_ocsd_oom_clear(void);
/*
 * 1 when OpenCSD faulted (SIGSEGV, SIGBUS, SIGFPE) inside a decoding call of
 * this thread since the last rb_ocsd_crashed_clear(): that call returned a
 * fatal response, and its tree must be abandoned, neither used nor destroyed.
 */
int rb_ocsd_crashed(void);
void rb_ocsd_crashed_clear(void);

dcd_tree_handle_t rb_ocsd_create_dcd_tree(const ocsd_dcd_tree_src_t src_type, const uint32_t cfg_flags);
ocsd_datapath_resp_t rb_ocsd_dt_process_data(const dcd_tree_handle_t h, const ocsd_datapath_op_t op,
					     const ocsd_trc_index_t index, const uint32_t size,
					     const uint8_t *data, uint32_t *used);
ocsd_err_t rb_ocsd_dt_set_gen_elem_outfn(const dcd_tree_handle_t h, FnTraceElemIn fn, const void *ctx);
ocsd_err_t rb_ocsd_dt_create_decoder(const dcd_tree_handle_t h, const char *name, const int flags,
				     const void *cfg, unsigned char *csid);
ocsd_err_t rb_ocsd_dt_attach_packet_callback(const dcd_tree_handle_t h, const unsigned char csid,
					     const ocsd_c_api_cb_types type, void *fn, const void *ctx);
ocsd_err_t rb_ocsd_dt_add_buffer_mem_acc(const dcd_tree_handle_t h, const ocsd_vaddr_t addr,
					 const ocsd_mem_space_acc_t space, const uint8_t *buf, const uint32_t len);
ocsd_err_t rb_ocsd_dt_add_callback_mem_acc(const dcd_tree_handle_t h, const ocsd_vaddr_t st, const ocsd_vaddr_t en,
					   const ocsd_mem_space_acc_t space, Fn_MemAcc_CB fn, const void *ctx);
ocsd_err_t rb_ocsd_dt_add_callback_trcid_mem_acc(const dcd_tree_handle_t h, const ocsd_vaddr_t st,
						 const ocsd_vaddr_t en, const ocsd_mem_space_acc_t space,
						 Fn_MemAccID_CB fn, const void *ctx);
ocsd_err_t rb_ocsd_def_errlog_init(const ocsd_err_severity_t verbosity, const int create_output_logger);
ocsd_err_t rb_ocsd_def_errlog_config_output(const int flags, const char *file);
ocsd_err_t rb_ocsd_def_errlog_set_strprint_cb(const dcd_tree_handle_t h, void *ctx, FnDefLoggerPrintStrCB fn);
ocsd_err_t rb_ocsd_dt_set_pkt_protocol_printer(const dcd_tree_handle_t h, uint8_t csid, int monitor);
ocsd_err_t rb_ocsd_pkt_str(const ocsd_trace_protocol_t protocol, const void *pkt, char *buf, const int size);
ocsd_err_t rb_ocsd_gen_elem_str(const ocsd_generic_trace_elem *elem, char *buf, const int size);

#ifdef __cplusplus
}
#endif

#ifndef RB_OCSD_GUARD_IMPL
#define ocsd_create_dcd_tree rb_ocsd_create_dcd_tree
#define ocsd_dt_process_data rb_ocsd_dt_process_data
#define ocsd_dt_set_gen_elem_outfn rb_ocsd_dt_set_gen_elem_outfn
#define ocsd_dt_create_decoder rb_ocsd_dt_create_decoder
#define ocsd_dt_attach_packet_callback rb_ocsd_dt_attach_packet_callback
#define ocsd_dt_add_buffer_mem_acc rb_ocsd_dt_add_buffer_mem_acc
#define ocsd_dt_add_callback_mem_acc rb_ocsd_dt_add_callback_mem_acc
#define ocsd_dt_add_callback_trcid_mem_acc rb_ocsd_dt_add_callback_trcid_mem_acc
#define ocsd_def_errlog_init rb_ocsd_def_errlog_init
#define ocsd_def_errlog_config_output rb_ocsd_def_errlog_config_output
#define ocsd_def_errlog_set_strprint_cb rb_ocsd_def_errlog_set_strprint_cb
#define ocsd_dt_set_pkt_protocol_printer rb_ocsd_dt_set_pkt_protocol_printer
#define ocsd_pkt_str rb_ocsd_pkt_str
#define ocsd_gen_elem_str rb_ocsd_gen_elem_str
#endif
#endif
