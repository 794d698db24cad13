/*
 * cs_decode.c - OpenCSD decoding of a CoreSight snapshot's trace buffer (see
 * cs_decode.h). One decode tree per call: a frame deformatter (or a single
 * source for "source_data" buffers), one decoder per trace source built from
 * the registers in its device .ini, the core's memory dumps mapped read-only
 * as buffer memory accessors, and callbacks that turn packets and generic
 * elements into trc_pkt_lister's text.
 *
 * The choices that decide what comes out follow OpenCSD's own snapshot tool,
 * so that its output is an oracle for ours: sources are visited in name
 * order, a "source_data" buffer decodes only its first source, missing
 * optional ID registers take the same defaults, and trace is fed in the same
 * block sizes. Workload: buffers of up to a few megabytes, decoded once.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ocsd_guard.h"
#include "cs_decode.h"

#define MAX_SOURCES 128          /* CoreSight trace IDs are 7 bits */
#define FEED_BLOCK 1024          /* bytes handed to OpenCSD at a time, as trc_pkt_lister */
#define DSTREAM_DATA 504         /* trace bytes in a 512-byte DSTREAM block */
#define DSTREAM_FOOTER 8

struct rb_cs_dec;

/* What a packet callback needs to print its packets. */
struct source_ctx {
	struct rb_cs_dec *dec;
	ocsd_trace_protocol_t protocol;
	uint8_t csid;
	uint8_t label;           /* ID printed on packet lines: the trace ID, but 0 in a
				    single-source tree, where OpenCSD keys the one source as 0 */
};

struct mapping {
	void *addr;
	size_t len;
	const struct rb_cs_dump *dump;   /* the first dump mapped here */
};

struct rb_cs_dec {
	const struct rb_cs_snapshot *ss;
	struct rb_cs_decode_opts opts;
	dcd_tree_handle_t tree;          /* C_API_INVALID_TREE_HANDLE until created */
	rb_cs_text_fn out, warn;
	void *ctx;
	struct source_ctx src[MAX_SOURCES];
	size_t nr_src;
	struct mapping *maps;
	size_t nr_maps;
	int partial;                     /* a source was skipped or decoding stopped early */
	int single;                      /* the buffer holds one source's bytes, unframed */
	char line[16384];
};

static int fail(struct rb_cs_error *err, int code, const char *file, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(struct rb_cs_error *err, int code, const char *file, const char *fmt, ...)
{
	va_list ap;
	if (!err)
		return code;
	err->code = code;
	snprintf(err->file, sizeof(err->file), "%s", file ? file : "");
	err->line = 0;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

/* Something we cannot decode (a source, a memory dump): say why, carry on. */
static void skip_source(struct rb_cs_dec *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void skip_source(struct rb_cs_dec *d, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	d->partial = 1;
	if (!d->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	d->warn(d->ctx, msg);
}

/* ---- text callbacks ---- */

/* Packets with their raw bytes, as trc_pkt_lister's packet monitor prints them. */
static void on_packet(const void *p_context, const ocsd_datapath_op_t op, const ocsd_trc_index_t index_sop,
		      const void *p_packet_in, const uint32_t size, const uint8_t *p_data)
{
	const struct source_ctx *s = p_context;
	struct rb_cs_dec *d = s->dec;
	char pkt[8192];
	size_t n;

	if (op != OCSD_OP_DATA)
		return;
	if (ocsd_pkt_str(s->protocol, p_packet_in, pkt, sizeof(pkt)) != OCSD_OK)
		snprintf(pkt, sizeof(pkt), "(packet text unavailable)");
	n = (size_t)snprintf(d->line, sizeof(d->line), "Idx:%" PRIu64 "; ID:%x; [", (uint64_t)index_sop, s->label);
	for (uint32_t i = 0; i < size && n + 6 < sizeof(d->line); i++)
		n += (size_t)snprintf(d->line + n, sizeof(d->line) - n, "0x%02x ", p_data[i]);
	if (n < sizeof(d->line))
		snprintf(d->line + n, sizeof(d->line) - n, "];\t%s", pkt);
	d->out(d->ctx, d->line);
}

/* Packets without raw bytes, as trc_pkt_lister lists them when not decoding. */
static ocsd_datapath_resp_t on_packet_plain(const void *p_context, const ocsd_datapath_op_t op,
					    const ocsd_trc_index_t index_sop, const void *p_packet_in)
{
	const struct source_ctx *s = p_context;
	struct rb_cs_dec *d = s->dec;
	char pkt[8192];

	if (op != OCSD_OP_DATA)
		return OCSD_RESP_CONT;
	if (ocsd_pkt_str(s->protocol, p_packet_in, pkt, sizeof(pkt)) != OCSD_OK) {
		if (rb_ocsd_oom())
			return OCSD_RESP_FATAL_SYS_ERR;
		snprintf(pkt, sizeof(pkt), "(packet text unavailable)");
	}
	snprintf(d->line, sizeof(d->line), "Idx:%" PRIu64 "; ID:%x;\t%s", (uint64_t)index_sop, s->label, pkt);
	d->out(d->ctx, d->line);
	return OCSD_RESP_CONT;
}

static ocsd_datapath_resp_t on_element(const void *p_context, const ocsd_trc_index_t index_sop,
				       const uint8_t trc_chan_id, const ocsd_generic_trace_elem *elem)
{
	struct rb_cs_dec *d = (struct rb_cs_dec *)p_context;
	char text[8192];
	if (ocsd_gen_elem_str(elem, text, sizeof(text)) != OCSD_OK) {
		if (rb_ocsd_oom())
			return OCSD_RESP_FATAL_SYS_ERR;   /* out of memory: stop, run_buffer says so */
		snprintf(text, sizeof(text), "(element text unavailable)");
	}
	snprintf(d->line, sizeof(d->line), "Idx:%" PRIu64 "; ID:%x; %s", (uint64_t)index_sop, trc_chan_id, text);
	d->out(d->ctx, d->line);
	return OCSD_RESP_CONT;
}

/*
 * OpenCSD 1.3.3's C API has no packet callback for ETE (ocsd_dt_attach_packet_callback
 * answers OCSD_ERR_NO_PROTOCOL), so for ETE we let the library's own packet
 * printer write the same line into its message logger and take the line
 * from the logger's string callback. The logger is process-wide state.
 */
static struct rb_cs_dec *logger_owner;   /* the decode that receives logger lines */

static void on_logger_text(const void *p_context, const char *psz_msg_str, const int str_len)
{
	struct rb_cs_dec *d = logger_owner;
	int n = str_len;
	(void)p_context;
	/* Only packet lines are ours; decoder error chatter is not part of the listing. */
	if (!d || n < 4 || strncmp(psz_msg_str, "Idx:", 4))
		return;
	while (n > 0 && (psz_msg_str[n - 1] == '\n' || psz_msg_str[n - 1] == '\r'))
		n--;
	snprintf(d->line, sizeof(d->line), "%.*s", n, psz_msg_str);
	d->out(d->ctx, d->line);
}

static ocsd_err_t library_packet_printer(struct rb_cs_dec *d, uint8_t csid)
{
	static int logger_ready;
	ocsd_err_t e;
	if (!logger_ready) {
		if ((e = ocsd_def_errlog_init(OCSD_ERR_SEV_ERROR, 1)) != OCSD_OK ||
		    (e = ocsd_def_errlog_config_output(C_API_MSGLOGOUT_FLG_NONE, NULL)) != OCSD_OK)
			return e;
		logger_ready = 1;
	}
	if ((e = ocsd_def_errlog_set_strprint_cb(d->tree, NULL, on_logger_text)) != OCSD_OK)
		return e;
	logger_owner = d;
	return ocsd_dt_set_pkt_protocol_printer(d->tree, csid, !(d->opts.packets_only && d->opts.no_raw));
}

/* ---- core names ---- */

struct core_profile {
	const char *name;
	ocsd_arch_version_t arch;
	ocsd_core_profile_t profile;
};

/* The core names OpenCSD 1.3.3 knows, so that we accept what it accepts. */
static const struct core_profile core_profiles[] = {
	{ "Cortex-A77", ARCH_V8r3, profile_CortexA }, { "Cortex-A76", ARCH_V8r3, profile_CortexA },
	{ "Cortex-A75", ARCH_V8r3, profile_CortexA }, { "Cortex-A73", ARCH_V8, profile_CortexA },
	{ "Cortex-A72", ARCH_V8, profile_CortexA },   { "Cortex-A65", ARCH_V8r3, profile_CortexA },
	{ "Cortex-A57", ARCH_V8, profile_CortexA },   { "Cortex-A55", ARCH_V8r3, profile_CortexA },
	{ "Cortex-A53", ARCH_V8, profile_CortexA },   { "Cortex-A35", ARCH_V8, profile_CortexA },
	{ "Cortex-A32", ARCH_V8, profile_CortexA },   { "Cortex-A17", ARCH_V7, profile_CortexA },
	{ "Cortex-A15", ARCH_V7, profile_CortexA },   { "Cortex-A12", ARCH_V7, profile_CortexA },
	{ "Cortex-A9", ARCH_V7, profile_CortexA },    { "Cortex-A8", ARCH_V7, profile_CortexA },
	{ "Cortex-A7", ARCH_V7, profile_CortexA },    { "Cortex-A5", ARCH_V7, profile_CortexA },
	{ "Cortex-R52", ARCH_V8, profile_CortexR },   { "Cortex-R8", ARCH_V7, profile_CortexR },
	{ "Cortex-R7", ARCH_V7, profile_CortexR },    { "Cortex-R5", ARCH_V7, profile_CortexR },
	{ "Cortex-R4", ARCH_V7, profile_CortexR },    { "Cortex-M33", ARCH_V8, profile_CortexM },
	{ "Cortex-M23", ARCH_V8, profile_CortexM },   { "Cortex-M0", ARCH_V7, profile_CortexM },
	{ "Cortex-M0+", ARCH_V7, profile_CortexM },   { "Cortex-M3", ARCH_V7, profile_CortexM },
	{ "Cortex-M4", ARCH_V7, profile_CortexM },
};

static ocsd_core_profile_t profile_letter(char c)
{
	return c == 'A' ? profile_CortexA : c == 'R' ? profile_CortexR : c == 'M' ? profile_CortexM
								     : profile_Unknown;
}

/* "ARMv8.2-A", "ARMv7-M": architecture names stand in for core names. */
static int arch_pattern(const char *n, ocsd_arch_version_t *arch, ocsd_core_profile_t *prof)
{
	int major, minor = 0, p = 5;
	if (strncmp(n, "ARMv", 4) || n[4] < '0' || n[4] > '9')
		return -1;
	major = n[4] - '0';
	if (n[5] == '.') {
		minor = n[6] - '0';
		p = 7;
	}
	if (n[p] != '-' || major < 7)
		return -1;
	*arch = major == 7 ? ARCH_V7 : major > 8 ? ARCH_AA64
		: minor < 3 ? ARCH_V8 : minor == 3 ? ARCH_V8r3 : ARCH_AA64;
	*prof = profile_letter(n[p + 1]);
	return *prof == profile_Unknown ? -1 : 0;
}

static int core_profile(const char *name, ocsd_arch_version_t *arch, ocsd_core_profile_t *prof)
{
	for (size_t i = 0; i < sizeof(core_profiles) / sizeof(core_profiles[0]); i++)
		if (!strcmp(core_profiles[i].name, name)) {
			*arch = core_profiles[i].arch;
			*prof = core_profiles[i].profile;
			return 0;
		}
	if (!strncmp(name, "ARM-", 4) && (!strncmp(name + 4, "AA64", 4) || !strncmp(name + 4, "aa64", 4))) {
		*arch = ARCH_AA64;
		*prof = name[8] == '-' ? profile_letter(name[9]) : profile_CortexA;
		if (*prof == profile_Unknown)
			*prof = profile_CortexA;
		return 0;
	}
	return arch_pattern(name, arch, prof);
}

/* ---- registers ---- */

struct reg_want {
	const char *name;
	uint32_t *value;
	int required;
	uint32_t fallback;        /* used when an optional register is absent */
};

/* Fill each wanted register from @dev. 0, or -1 after reporting the first missing one. */
static int get_regs(struct rb_cs_dec *d, const struct rb_cs_device *dev, struct reg_want *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *v = rb_cs_device_reg(dev, w[i].name);
		if (v) {
			*w[i].value = (uint32_t)strtoul(v, NULL, 0);
		} else if (w[i].required) {
			skip_source(d, "%s: trace source %s lacks register %s; not decoded", dev->ini, dev->name,
				    w[i].name);
			return -1;
		} else {
			*w[i].value = w[i].fallback;
		}
	}
	return 0;
}

/* ---- decoders ---- */

static int create_flags(const struct rb_cs_dec *d)
{
	return d->opts.packets_only ? OCSD_CREATE_FLG_PACKET_PROC : OCSD_CREATE_FLG_FULL_DECODER;
}

static int add_decoder(struct rb_cs_dec *d, const struct rb_cs_device *dev, const char *name,
		       ocsd_trace_protocol_t protocol, int extra_flags, const void *cfg)
{
	unsigned char csid = 0;
	struct source_ctx *s;
	ocsd_err_t e;

	if (d->nr_src == MAX_SOURCES) {
		skip_source(d, "%s: too many trace sources; %s not decoded", dev->ini, dev->name);
		return -1;
	}
	e = ocsd_dt_create_decoder(d->tree, name, create_flags(d) | extra_flags, cfg, &csid);
	if (e != OCSD_OK) {
		skip_source(d, "%s: OpenCSD refused a %s decoder for %s (error %d)", dev->ini, name, dev->name,
			    (int)e);
		return -1;
	}
	s = &d->src[d->nr_src++];
	s->dec = d;
	s->protocol = protocol;
	s->csid = csid;
	s->label = d->single ? 0 : csid;
	if (d->opts.packets_only && d->opts.no_raw)
		e = ocsd_dt_attach_packet_callback(d->tree, csid, OCSD_C_API_CB_PKT_SINK, (void *)on_packet_plain, s);
	else
		e = ocsd_dt_attach_packet_callback(d->tree, csid, OCSD_C_API_CB_PKT_MON, (void *)on_packet, s);
	if (e == OCSD_ERR_NO_PROTOCOL)
		e = library_packet_printer(d, s->label);
	if (e != OCSD_OK) {
		skip_source(d, "%s: cannot attach a packet monitor to %s (error %d)", dev->ini, dev->name, (int)e);
		return -1;
	}
	return 0;
}

static int etmv4_decoder(struct rb_cs_dec *d, const struct rb_cs_device *dev, ocsd_arch_version_t arch,
			 ocsd_core_profile_t prof)
{
	ocsd_etmv4_cfg c;
	struct reg_want w[] = {
		{ "TRCCONFIGR", &c.reg_configr, 1, 0 },   { "TRCTRACEIDR", &c.reg_traceidr, 1, 0 },
		{ "TRCIDR0", &c.reg_idr0, 1, 0 },          { "TRCIDR1", &c.reg_idr1, 0, 0x4100F403 },
		{ "TRCIDR2", &c.reg_idr2, 1, 0 },          { "TRCIDR8", &c.reg_idr8, 0, 0 },
		{ "TRCIDR9", &c.reg_idr9, 0, 0 },          { "TRCIDR10", &c.reg_idr10, 0, 0 },
		{ "TRCIDR11", &c.reg_idr11, 0, 0 },        { "TRCIDR12", &c.reg_idr12, 0, 0 },
		{ "TRCIDR13", &c.reg_idr13, 0, 0 },
	};
	memset(&c, 0, sizeof(c));
	if (get_regs(d, dev, w, sizeof(w) / sizeof(w[0])))
		return -1;
	c.arch_ver = arch;
	c.core_prof = prof;
	return add_decoder(d, dev, OCSD_BUILTIN_DCD_ETMV4I, OCSD_PROTOCOL_ETMV4I,
			   d->opts.src_addr_n ? ETE_OPFLG_PKTDEC_SRCADDR_N_ATOMS : 0, &c);
}

static int ete_decoder(struct rb_cs_dec *d, const struct rb_cs_device *dev, ocsd_arch_version_t arch,
		       ocsd_core_profile_t prof)
{
	ocsd_ete_cfg c;
	struct reg_want w[] = {
		{ "TRCCONFIGR", &c.reg_configr, 1, 0 }, { "TRCTRACEIDR", &c.reg_traceidr, 1, 0 },
		{ "TRCIDR0", &c.reg_idr0, 1, 0 },        { "TRCIDR1", &c.reg_idr1, 0, 0x4100F403 },
		{ "TRCIDR2", &c.reg_idr2, 1, 0 },        { "TRCIDR8", &c.reg_idr8, 0, 0 },
		{ "TRCDEVARCH", &c.reg_devarch, 0, 0x47705A13 },
	};
	memset(&c, 0, sizeof(c));
	if (get_regs(d, dev, w, sizeof(w) / sizeof(w[0])))
		return -1;
	c.arch_ver = arch;
	c.core_prof = prof;
	return add_decoder(d, dev, OCSD_BUILTIN_DCD_ETE, OCSD_PROTOCOL_ETE,
			   d->opts.src_addr_n ? ETE_OPFLG_PKTDEC_SRCADDR_N_ATOMS : 0, &c);
}

/* ETMv3 and PTM share their configuration layout and register names. */
static int etmv3_ptm_decoder(struct rb_cs_dec *d, const struct rb_cs_device *dev, ocsd_arch_version_t arch,
			     ocsd_core_profile_t prof, int ptm)
{
	ocsd_etmv3_cfg c3;
	ocsd_ptm_cfg cp;
	uint32_t idr, ctrl, ccer, trcid;
	struct reg_want w[] = {
		{ "ETMIDR", &idr, 1, 0 }, { "ETMCR", &ctrl, 1, 0 },
		{ "ETMCCER", &ccer, 1, 0 }, { "ETMTRACEIDR", &trcid, 1, 0 },
	};
	if (get_regs(d, dev, w, sizeof(w) / sizeof(w[0])))
		return -1;
	if (ptm) {
		memset(&cp, 0, sizeof(cp));
		cp.reg_idr = idr, cp.reg_ctrl = ctrl, cp.reg_ccer = ccer, cp.reg_trc_id = trcid;
		cp.arch_ver = arch, cp.core_prof = prof;
		return add_decoder(d, dev, OCSD_BUILTIN_DCD_PTM, OCSD_PROTOCOL_PTM, 0, &cp);
	}
	memset(&c3, 0, sizeof(c3));
	c3.reg_idr = idr, c3.reg_ctrl = ctrl, c3.reg_ccer = ccer, c3.reg_trc_id = trcid;
	c3.arch_ver = arch, c3.core_prof = prof;
	return add_decoder(d, dev, OCSD_BUILTIN_DCD_ETMV3, OCSD_PROTOCOL_ETMV3, 0, &c3);
}

static int stm_decoder(struct rb_cs_dec *d, const struct rb_cs_device *dev)
{
	ocsd_stm_cfg c;
	struct reg_want w[] = { { "STMTCSR", &c.reg_tcsr, 1, 0 } };
	memset(&c, 0, sizeof(c));
	if (get_regs(d, dev, w, 1))
		return -1;
	return add_decoder(d, dev, OCSD_BUILTIN_DCD_STM, OCSD_PROTOCOL_STM, 0, &c);
}

/* Does device type @type (ETM4.2, PTM1.0, ETE...) name protocol @proto? */
static int type_is(const char *type, const char *proto)
{
	size_t n = strcspn(type, ".");
	return strlen(proto) == n && !strncmp(type, proto, n);
}

/* ---- memory dumps ---- */

static ocsd_mem_space_acc_t mem_space(const char *name)
{
	static const struct { const char *name; ocsd_mem_space_acc_t space; } map[] = {
		{ "EL1S", OCSD_MEM_SPACE_EL1S }, { "EL1N", OCSD_MEM_SPACE_EL1N }, { "EL2S", OCSD_MEM_SPACE_EL2S },
		{ "EL2", OCSD_MEM_SPACE_EL2 },   { "EL2N", OCSD_MEM_SPACE_EL2 },  { "EL3", OCSD_MEM_SPACE_EL3 },
		{ "S", OCSD_MEM_SPACE_S },       { "N", OCSD_MEM_SPACE_N },       { "ANY", OCSD_MEM_SPACE_ANY },
		{ "H", OCSD_MEM_SPACE_EL2 },     { "P", OCSD_MEM_SPACE_EL1N },    { "NP", OCSD_MEM_SPACE_EL1N },
		{ "SP", OCSD_MEM_SPACE_EL1S },
	};
	for (size_t i = 0; name && i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(map[i].name, name))
			return map[i].space;
	return OCSD_MEM_SPACE_ANY;
}

static int same_dump(const struct rb_cs_dump *a, const struct rb_cs_dump *b)
{
	return a->address == b->address && a->offset == b->offset && a->length == b->length &&
	       !strcmp(a->path, b->path) && !strcmp(a->space ? a->space : "", b->space ? b->space : "");
}

/* Map @dump's region of its file; the reader already checked the file is long enough. */
static int map_dump(struct rb_cs_dec *d, const struct rb_cs_dump *dump, struct rb_cs_error *err)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t start = dump->offset - dump->offset % (uint64_t)page;
	struct mapping *m = realloc(d->maps, (d->nr_maps + 1) * sizeof(*m));
	int fd;

	if (!m)
		return fail(err, RB_CS_ERR_NOMEM, dump->path, "out of memory");
	d->maps = m;
	m = &m[d->nr_maps];
	m->dump = dump;
	m->len = (size_t)(dump->length + (dump->offset - start));
	if ((fd = open(dump->path, O_RDONLY)) < 0)
		return fail(err, RB_CS_ERR_IO, dump->path, "cannot open memory dump: %s", strerror(errno));
	m->addr = mmap(NULL, m->len, PROT_READ, MAP_PRIVATE, fd, (off_t)start);
	close(fd);
	if (m->addr == MAP_FAILED)
		return fail(err, RB_CS_ERR_IO, dump->path, "cannot map memory dump: %s", strerror(errno));
	d->nr_maps++;
	return 0;
}

static int add_dump(struct rb_cs_dec *d, const struct rb_cs_device *core, const struct rb_cs_dump *dump,
		    struct rb_cs_error *err)
{
	const struct mapping *m;
	ocsd_err_t e;
	int rc;

	/* Cores of one cluster often list the same dump; OpenCSD wants each region once. */
	for (size_t i = 0; i < d->nr_maps; i++)
		if (same_dump(d->maps[i].dump, dump))
			return 0;
	if (dump->missing) {
		skip_source(d, "%s: memory dump %s does not exist; decoding without it", core->ini, dump->path);
		return 0;
	}
	if (dump->length == 0)
		return 0;
	if (dump->length > UINT32_MAX)
		return fail(err, RB_CS_ERR_IO, core->ini, "memory dump %s is larger than 4 GiB", dump->path);
	if ((rc = map_dump(d, dump, err)))
		return rc;
	m = &d->maps[d->nr_maps - 1];
	e = ocsd_dt_add_buffer_mem_acc(d->tree, dump->address, mem_space(dump->space),
				       (const uint8_t *)m->addr + (m->len - dump->length), (uint32_t)dump->length);
	if (e != OCSD_OK)   /* an overlapping region, say: decode on without it */
		skip_source(d, "%s: OpenCSD refused memory dump %s at 0x%" PRIx64 " (error %d); decoding without it",
			    core->ini, dump->path, dump->address, (int)e);
	return 0;
}

static uint32_t no_memory(const void *p_context, const ocsd_vaddr_t address, const ocsd_mem_space_acc_t space,
			  const uint32_t reqBytes, uint8_t *byteBuffer)
{
	(void)p_context, (void)address, (void)space, (void)reqBytes, (void)byteBuffer;
	return 0;
}

/*
 * The C API creates the tree's memory map with its first accessor, and a
 * decoder without one stops with a fatal error. A snapshot without memory
 * dumps still decodes in OpenCSD's tools (every address reads as not
 * accessible), so give the tree an empty map: add an accessor and take it out.
 */
static void ensure_memory_map(struct rb_cs_dec *d)
{
	if (d->nr_maps || d->opts.packets_only)
		return;
	if (ocsd_dt_add_callback_mem_acc(d->tree, 0, 0, OCSD_MEM_SPACE_ANY, no_memory, NULL) == OCSD_OK)
		ocsd_dt_remove_mem_acc(d->tree, 0, OCSD_MEM_SPACE_ANY);
}

/* ---- one trace source ---- */

/* A decoder for a trace source attached to a core (ETM, PTM, ETE), plus the core's memory. */
static int pe_source(struct rb_cs_dec *d, const struct rb_cs_device *src, const char *core_name,
		     struct rb_cs_error *err)
{
	const struct rb_cs_device *core = rb_cs_snapshot_device(d->ss, core_name);
	ocsd_arch_version_t arch;
	ocsd_core_profile_t prof;
	int rc;

	if (!core) {
		skip_source(d, "%s: core %s of trace source %s is not in the device list; not decoded", src->ini,
			    core_name, src->name);
		return 0;
	}
	if (core_profile(core->type, &arch, &prof)) {
		skip_source(d, "%s: unrecognised core type %s (OpenCSD %s cannot tell its architecture); %s not decoded",
			    core->ini, core->type, ocsd_get_version_str(), src->name);
		return 0;
	}
	if (type_is(src->type, "ETM4"))
		rc = etmv4_decoder(d, src, arch, prof);
	else if (type_is(src->type, "ETE"))
		rc = ete_decoder(d, src, arch, prof);
	else if (type_is(src->type, "ETM3"))
		rc = etmv3_ptm_decoder(d, src, arch, prof, 0);
	else if (type_is(src->type, "PTM1") || type_is(src->type, "PFT1"))
		rc = etmv3_ptm_decoder(d, src, arch, prof, 1);
	else {
		skip_source(d, "%s: trace source %s of type %s is not supported by OpenCSD %s; not decoded",
			    src->ini, src->name, src->type, ocsd_get_version_str());
		return 0;
	}
	for (size_t i = 0; !rc && !d->opts.packets_only && i < core->nr_dumps; i++)
		if ((rc = add_dump(d, core, &core->dumps[i], err)))
			return rc;
	return 0;
}

static int add_source(struct rb_cs_dec *d, const char *name, struct rb_cs_error *err)
{
	const struct rb_cs_device *src = rb_cs_snapshot_device(d->ss, name);
	const char *core = rb_cs_snapshot_core_of(d->ss, name);

	if (!src) {
		skip_source(d, "trace source %s named in [source_buffers] has no device file; not decoded", name);
		return 0;
	}
	if (core)
		return pe_source(d, src, core, err);
	if (type_is(src->type, "STM"))
		return stm_decoder(d, src), 0;
	if (type_is(src->type, "ETM4") || type_is(src->type, "ETE") || type_is(src->type, "ETM3") ||
	    type_is(src->type, "PTM1") || type_is(src->type, "PFT1"))
		skip_source(d, "%s: trace source %s has no core in [core_trace_sources]; not decoded", src->ini,
			    src->name);
	else
		skip_source(d, "%s: trace source %s of type %s is not supported by OpenCSD %s; not decoded",
			    src->ini, src->name, src->type, ocsd_get_version_str());
	return 0;
}

/* ---- the tree and the data ---- */

static const struct rb_cs_buffer *find_buffer(const struct rb_cs_snapshot *ss, const char *name)
{
	for (size_t i = 0; i < ss->nr_buffers; i++)
		if (!name || !strcmp(ss->buffers[i].name, name))
			return &ss->buffers[i];
	return NULL;
}

static int build_tree(struct rb_cs_dec *d, const struct rb_cs_buffer *buf, struct rb_cs_error *err)
{
	int single = d->single = !strcmp(buf->format, "source_data");
	uint32_t flags = !strcmp(buf->format, "dstream_coresight") ? OCSD_DFRMTR_HAS_FSYNCS : OCSD_DFRMTR_FRAME_MEM_ALIGN;
	const char **names = NULL;
	int n = rb_cs_snapshot_sources_of(d->ss, buf->name, &names), rc = 0;

	if (n < 0)
		return fail(err, n, NULL, "out of memory");
	if (n == 0) {
		free(names);
		return fail(err, RB_CS_ERR_FORMAT, NULL, "no trace source in [source_buffers] feeds buffer %s",
			    buf->name);
	}
	rb_ocsd_oom_clear();
	d->tree = ocsd_create_dcd_tree(single ? OCSD_TRC_SRC_SINGLE : OCSD_TRC_SRC_FRAME_FORMATTED, single ? 0 : flags);
	if (d->tree == C_API_INVALID_TREE_HANDLE) {
		free(names);
		return rb_ocsd_oom() ? fail(err, RB_CS_ERR_NOMEM, buf->path, "out of memory") :
		       fail(err, RB_CS_ERR_DECODE, buf->path, "OpenCSD cannot create a decode tree");
	}
	/* A single-source buffer carries one source's bytes: OpenCSD's tool decodes only the first. */
	for (int i = 0; !rc && i < (single ? 1 : n); i++)
		rc = add_source(d, names[i], err);
	free(names);
	if (!rc && d->nr_src == 0)
		rc = fail(err, RB_CS_ERR_DECODE, buf->path, "no trace source of buffer %s could be decoded", buf->name);
	if (!rc)
		ensure_memory_map(d);
	/* OpenCSD 1.3.3 never frees the 32-byte callback object this allocates (the
	 * tree's destroy skips it); LeakSanitizer reports it, and it is not ours to free. */
	if (!rc && !d->opts.packets_only &&
	    ocsd_dt_set_gen_elem_outfn(d->tree, on_element, d) != OCSD_OK)
		rc = fail(err, RB_CS_ERR_DECODE, buf->path, "OpenCSD refused the element callback");
	/* what OpenCSD refused for want of memory, an error or a source skipped with a warning */
	if (rc != RB_CS_ERR_NOMEM && rb_ocsd_oom())
		rc = fail(err, RB_CS_ERR_NOMEM, buf->path, "out of memory");
	return rc;
}

/* Push @len bytes at trace index *@index, flushing on WAIT. 0, or -1 on a fatal response. */
static int feed(struct rb_cs_dec *d, const uint8_t *data, uint32_t len, uint32_t *index)
{
	ocsd_datapath_resp_t resp = OCSD_RESP_CONT;
	uint32_t done = 0;
	while (done < len) {
		uint32_t used = 0;
		if (OCSD_DATA_RESP_IS_CONT(resp))
			resp = ocsd_dt_process_data(d->tree, OCSD_OP_DATA, *index, len - done, data + done, &used);
		else
			resp = ocsd_dt_process_data(d->tree, OCSD_OP_FLUSH, 0, 0, NULL, NULL);
		done += used;
		*index += used;
		if (OCSD_DATA_RESP_IS_FATAL(resp))
			return -1;
	}
	return 0;
}

static int run_buffer(struct rb_cs_dec *d, const struct rb_cs_buffer *buf, struct rb_cs_error *err)
{
	uint8_t block[FEED_BLOCK];
	size_t want = d->opts.dstream ? DSTREAM_DATA : FEED_BLOCK, got;
	uint32_t index = 0;
	FILE *f = fopen(buf->path, "rb");

	if (!f)
		return errno == ENOMEM ? fail(err, RB_CS_ERR_NOMEM, buf->path, "out of memory") :
		       fail(err, RB_CS_ERR_IO, buf->path, "cannot open trace buffer: %s", strerror(errno));
	rb_ocsd_oom_clear();
	while ((got = fread(block, 1, want, f)) > 0) {
		if (feed(d, block, (uint32_t)got, &index)) {
			fclose(f);
			if (rb_ocsd_oom())   /* OpenCSD ran out of memory: not the trace's fault */
				return fail(err, RB_CS_ERR_NOMEM, buf->path, "out of memory");
			if (rb_ocsd_crashed()) {   /* its tree is abandoned (ocsd_guard.cpp), never touched again */
				rb_ocsd_crashed_clear();
				d->tree = C_API_INVALID_TREE_HANDLE;
				skip_source(d, "%s: OpenCSD crashed (a bug of the library on this trace) at trace index %"
					    PRIu32 "; the rest of the buffer is not decoded", buf->path, index);
				return 0;
			}
			skip_source(d, "%s: decoding stopped on a fatal OpenCSD error at trace index %" PRIu32,
				    buf->path, index);
			return 0;
		}
		if (d->opts.dstream && fread(block, 1, DSTREAM_FOOTER, f) < DSTREAM_FOOTER)
			break;
	}
	if (ferror(f)) {
		fclose(f);
		return fail(err, RB_CS_ERR_IO, buf->path, "read error in trace buffer");
	}
	fclose(f);
	ocsd_dt_process_data(d->tree, OCSD_OP_EOT, 0, 0, NULL, NULL);
	if (rb_ocsd_oom())   /* a packet's text (on_packet cannot stop the decoder) */
		return fail(err, RB_CS_ERR_NOMEM, buf->path, "out of memory");
	return 0;
}

static void dec_cleanup(struct rb_cs_dec *d)
{
	if (logger_owner == d) {
		/*
		 * OpenCSD keeps the string callback object inside the tree's C API data,
		 * which ocsd_destroy_dcd_tree frees, while the process-wide logger keeps
		 * pointing at it: the next error any later tree logs would call freed
		 * memory (found by fuzz_cs_snapshot). Switch the logger's outputs off
		 * (this clears its string-callback flag too); the next ETE decode sets
		 * them again.
		 */
		ocsd_def_errlog_config_output(C_API_MSGLOGOUT_FLG_NONE, NULL);
		logger_owner = NULL;
	}
	if (d->tree != C_API_INVALID_TREE_HANDLE)
		ocsd_destroy_dcd_tree(d->tree);
	for (size_t i = 0; i < d->nr_maps; i++)
		munmap(d->maps[i].addr, d->maps[i].len);
	free(d->maps);
	free(d);
}

int rb_cs_decode_snapshot(const struct rb_cs_snapshot *ss, const struct rb_cs_decode_opts *opts,
			  rb_cs_text_fn out, rb_cs_text_fn warn, void *ctx, struct rb_cs_error *err)
{
	const struct rb_cs_buffer *buf;
	struct rb_cs_dec *d;
	int rc;

	if (err)
		memset(err, 0, sizeof(*err));
	if (!ss || !out)
		return fail(err, RB_CS_ERR_INVAL, NULL, "NULL argument");
	if (!(buf = find_buffer(ss, opts ? opts->buffer : NULL)))
		return fail(err, RB_CS_ERR_INVAL, NULL, "the snapshot has no trace buffer %s",
			    opts && opts->buffer ? opts->buffer : "");
	if (!(d = calloc(1, sizeof(*d))))
		return fail(err, RB_CS_ERR_NOMEM, NULL, "out of memory");
	d->ss = ss;
	d->tree = C_API_INVALID_TREE_HANDLE;
	d->out = out, d->warn = warn, d->ctx = ctx;
	if (opts)
		d->opts = *opts;
	rc = build_tree(d, buf, err);
	if (!rc)
		rc = run_buffer(d, buf, err);
	for (size_t i = 0; !rc && d->opts.multi_session && i < ss->nr_buffers; i++) {
		if (&ss->buffers[i] == buf)
			continue;
		/* Sessions are independent captures: the decoders start afresh. */
		ocsd_dt_process_data(d->tree, OCSD_OP_RESET, 0, 0, NULL, NULL);
		rc = run_buffer(d, &ss->buffers[i], err);
	}
	if (!rc && d->partial)
		rc = RB_CS_PARTIAL;
	dec_cleanup(d);
	return rc;
}

