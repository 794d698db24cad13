/*
 * pd_swap.c - byte order. A perf.data written on a big-endian POWER host is
 * read on x86 by converting each structure to native order in place, right
 * after it is read; the writer uses the same functions the other way round to
 * produce a foreign-order file. One walker per layout serves both directions:
 * a count that sizes what follows is read in native order, which is after
 * the swap when converting to native and before it when converting away.
 *
 * The walkers also bound every access by the structure's size: a record that
 * claims more fields than it has bytes is an error, never an overrun.
 */
#include "config.h"
#include <byteswap.h>
#include "pd_internal.h"

/* A swap cursor. Running past the end sets @bad and stops all conversion. */
struct sw {
	uint8_t *p, *end;
	int to_native;
	int bad;
	int check_only;   /* walk and bound-check a native structure, converting nothing */
};

static uint64_t s64(struct sw *c)
{
	if (c->bad || c->end - c->p < 8) {
		c->bad = 1;
		return 0;
	}
	uint64_t raw = ld64(c->p), v = bswap_64(raw);
	c->p += 8;
	if (c->check_only)
		return raw;
	st64(c->p - 8, v);
	return c->to_native ? v : raw;
}

static uint32_t s32(struct sw *c)
{
	if (c->bad || c->end - c->p < 4) {
		c->bad = 1;
		return 0;
	}
	uint32_t raw = ld32(c->p), v = bswap_32(raw);
	c->p += 4;
	if (c->check_only)
		return raw;
	st32(c->p - 4, v);
	return c->to_native ? v : raw;
}

static uint16_t s16(struct sw *c)
{
	if (c->bad || c->end - c->p < 2) {
		c->bad = 1;
		return 0;
	}
	uint16_t raw = ld16(c->p), v = bswap_16(raw);
	c->p += 2;
	if (c->check_only)
		return raw;
	st16(c->p - 2, v);
	return c->to_native ? v : raw;
}

static void sskip(struct sw *c, uint64_t n)
{
	if (c->bad || (uint64_t)(c->end - c->p) < n) {
		c->bad = 1;
		return;
	}
	c->p += n;
}

static void s64n(struct sw *c, uint64_t n)
{
	if (c->bad || (uint64_t)(c->end - c->p) / 8 < n) {
		c->bad = 1;
		return;
	}
	while (n--)
		s64(c);
}

/* Feature string: u32 length, then that many bytes. */
static void sstr(struct sw *c)
{
	uint32_t len = s32(c);
	sskip(c, len);
}

static void sstrlist(struct sw *c)
{
	uint32_t n = s32(c);
	while (n-- && !c->bad)
		sstr(c);
}

static uint8_t bitrev8(uint8_t b)
{
	b = (uint8_t)((b & 0xf0) >> 4 | (b & 0x0f) << 4);
	b = (uint8_t)((b & 0xcc) >> 2 | (b & 0x33) << 2);
	b = (uint8_t)((b & 0xaa) >> 1 | (b & 0x55) << 1);
	return b;
}

/*
 * The attr flag bitfield is allocated from the other end of each byte on the
 * other byte order; its bytes stay in place and their bits reverse.
 */
void pd_swap_attr(uint8_t *attr, size_t size, int to_native)
{
	static const struct { uint8_t off, width; } fields[] = {
		{0, 4}, {4, 4}, {8, 8}, {16, 8}, {24, 8}, {32, 8}, {40, 0},
		{48, 4}, {52, 4}, {56, 8}, {64, 8}, {72, 8}, {80, 8}, {88, 4},
		{92, 4}, {96, 8}, {104, 4}, {108, 2}, {110, 2}, {112, 4}, {116, 4},
		{120, 8}, {128, 8},
	};
	(void)to_native;   /* every field has a fixed width: the direction does not matter */
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		uint8_t *p = attr + fields[i].off;
		unsigned w = fields[i].width ? fields[i].width : 8;
		if (fields[i].off + w > size)
			break;
		switch (fields[i].width) {
		case 0:
			for (int b = 0; b < 8; b++)
				p[b] = bitrev8(p[b]);
			break;
		case 2: st16(p, bswap_16(ld16(p))); break;
		case 4: st32(p, bswap_32(ld32(p))); break;
		case 8: st64(p, bswap_64(ld64(p))); break;
		}
	}
}

/* sample_id trailer, in the order the kernel appends it. */
static void swap_trailer(struct sw *c, uint64_t st)
{
	if (st & PD_SAMPLE_TID) { s32(c); s32(c); }
	if (st & PD_SAMPLE_TIME) s64(c);
	if (st & PD_SAMPLE_ID) s64(c);
	if (st & PD_SAMPLE_STREAM_ID) s64(c);
	if (st & PD_SAMPLE_CPU) { s32(c); s32(c); }
	if (st & PD_SAMPLE_IDENTIFIER) s64(c);
}

static void swap_read(struct sw *c, uint64_t rf)
{
	unsigned per = 1 + !!(rf & PD_FORMAT_ID) + !!(rf & PD_FORMAT_LOST);
	if (rf & PD_FORMAT_GROUP) {
		uint64_t nr = s64(c);
		if (rf & PD_FORMAT_TOTAL_TIME_ENABLED) s64(c);
		if (rf & PD_FORMAT_TOTAL_TIME_RUNNING) s64(c);
		if (nr > UINT64_MAX / per) {
			c->bad = 1;
			return;
		}
		s64n(c, nr * per);
	} else {
		s64(c);
		if (rf & PD_FORMAT_TOTAL_TIME_ENABLED) s64(c);
		if (rf & PD_FORMAT_TOTAL_TIME_RUNNING) s64(c);
		if (rf & PD_FORMAT_ID) s64(c);
		if (rf & PD_FORMAT_LOST) s64(c);
	}
}

static void swap_regs(struct sw *c, uint64_t mask)
{
	uint64_t abi = s64(c);
	if (abi)
		s64n(c, (uint64_t)__builtin_popcountll(mask));
}

static void swap_sample(struct sw *c, const struct pd_event_attr *a)
{
	uint64_t st = a->sample_type;

	if (st & PD_SAMPLE_IDENTIFIER) s64(c);
	if (st & PD_SAMPLE_IP) s64(c);
	if (st & PD_SAMPLE_TID) { s32(c); s32(c); }
	if (st & PD_SAMPLE_TIME) s64(c);
	if (st & PD_SAMPLE_ADDR) s64(c);
	if (st & PD_SAMPLE_ID) s64(c);
	if (st & PD_SAMPLE_STREAM_ID) s64(c);
	if (st & PD_SAMPLE_CPU) { s32(c); s32(c); }
	if (st & PD_SAMPLE_PERIOD) s64(c);
	if (st & PD_SAMPLE_READ) swap_read(c, a->read_format);
	if (st & PD_SAMPLE_CALLCHAIN) s64n(c, s64(c));
	if (st & PD_SAMPLE_RAW) {
		/* u32 size then bytes in the producer's order, padded so that 4 + size is a multiple of 8 */
		uint32_t sz = s32(c);
		sskip(c, sz);
	}
	if (st & PD_SAMPLE_BRANCH_STACK) {
		uint64_t nr = s64(c);
		if (a->branch_sample_type & PD_BRANCH_HW_INDEX) s64(c);
		if (nr > UINT64_MAX / 3) c->bad = 1;
		else s64n(c, nr * 3);
		if (a->branch_sample_type & PD_BRANCH_COUNTERS) s64n(c, nr);
	}
	if (st & PD_SAMPLE_REGS_USER) swap_regs(c, a->sample_regs_user);
	if (st & PD_SAMPLE_STACK_USER) {
		uint64_t sz = s64(c);
		sskip(c, sz);
		if (sz) s64(c);
	}
	if (st & (PD_SAMPLE_WEIGHT | PD_SAMPLE_WEIGHT_STRUCT)) s64(c);
	if (st & PD_SAMPLE_DATA_SRC) s64(c);
	if (st & PD_SAMPLE_TRANSACTION) s64(c);
	if (st & PD_SAMPLE_REGS_INTR) swap_regs(c, a->sample_regs_intr);
	if (st & PD_SAMPLE_PHYS_ADDR) s64(c);
	if (st & PD_SAMPLE_CGROUP) s64(c);
	if (st & PD_SAMPLE_DATA_PAGE_SIZE) s64(c);
	if (st & PD_SAMPLE_CODE_PAGE_SIZE) s64(c);
	if (st & PD_SAMPLE_AUX) {
		uint64_t sz = s64(c);
		sskip(c, sz);
	}
}

static void swap_cpu_map_data(struct sw *c)
{
	uint16_t type = s16(c);
	switch (type) {
	case 0: {   /* CPUS: u16 nr, u16 cpu[nr] */
		uint16_t nr = s16(c);
		for (unsigned i = 0; i < nr && !c->bad; i++)
			s16(c);
		break;
	}
	case 1: {   /* MASK: u16 nr, u16 long_size, mask[] (u64 after 4 bytes of padding) */
		uint16_t nr = s16(c);
		uint16_t ls = s16(c);
		if (ls == 4) {
			for (unsigned i = 0; i < nr && !c->bad; i++)
				s32(c);
		} else if (ls == 8) {
			sskip(c, 4);
			s64n(c, nr);
		} else {
			c->bad = 1;
		}
		break;
	}
	case 2:     /* RANGE_CPUS: u8 any_cpu, u8 pad, u16 start, u16 end */
		sskip(c, 2);
		s16(c);
		s16(c);
		break;
	default:
		c->bad = 1;
	}
}

/* Body of a kernel record (between the header and the sample_id trailer). */
static void swap_kernel_body(struct sw *c, uint32_t type, uint16_t misc,
			     const struct pd_event_attr *a)
{
	switch (type) {
	case PD_RECORD_MMAP:
		s32(c); s32(c); s64(c); s64(c); s64(c);
		break;
	case PD_RECORD_LOST:
		s64(c); s64(c);
		break;
	case PD_RECORD_COMM:
	case PD_RECORD_ITRACE_START:
	case PD_RECORD_SWITCH_CPU_WIDE:
		s32(c); s32(c);
		break;
	case PD_RECORD_EXIT:
	case PD_RECORD_FORK:
		s32(c); s32(c); s32(c); s32(c); s64(c);
		break;
	case PD_RECORD_THROTTLE:
	case PD_RECORD_UNTHROTTLE:
	case PD_RECORD_AUX:
		s64(c); s64(c); s64(c);
		break;
	case PD_RECORD_READ:
		s32(c); s32(c);
		swap_read(c, a ? a->read_format : 0);
		break;
	case PD_RECORD_MMAP2:
		s32(c); s32(c); s64(c); s64(c); s64(c);
		if (misc & PD_MISC_MMAP_BUILD_ID) {
			sskip(c, 2); s16(c); sskip(c, 20);
		} else {
			s32(c); s32(c); s64(c); s64(c);
		}
		s32(c); s32(c);
		break;
	case PD_RECORD_LOST_SAMPLES:
	case PD_RECORD_AUX_OUTPUT_HW_ID:
		s64(c);
		break;
	case PD_RECORD_NAMESPACES: {
		s32(c); s32(c);
		uint64_t nr = s64(c);
		if (nr > UINT64_MAX / 2) c->bad = 1;
		else s64n(c, 2 * nr);
		break;
	}
	case PD_RECORD_KSYMBOL:
		s64(c); s32(c); s16(c); s16(c);
		break;
	case PD_RECORD_BPF_EVENT:
		s16(c); s16(c); s32(c);
		break;
	case PD_RECORD_CGROUP:
		s64(c);
		break;
	case PD_RECORD_TEXT_POKE:
		s64(c); s16(c); s16(c);
		break;
	default:   /* SWITCH and unknown kernel types: no body we know */
		break;
	}
}

static void swap_user_body(struct sw *c, uint32_t type)
{
	switch (type) {
	case PD_RECORD_HEADER_ATTR: {
		if (c->end - c->p < PD_ATTR_SIZE_VER0) { c->bad = 1; break; }
		uint32_t asz = ld32(c->p + 4);
		if (c->to_native) asz = bswap_32(asz);
		if (asz == 0) asz = PD_ATTR_SIZE_VER0;
		if (asz > (uint64_t)(c->end - c->p)) { c->bad = 1; break; }
		pd_swap_attr(c->p, asz, c->to_native);
		c->p += asz;
		s64n(c, (uint64_t)(c->end - c->p) / 8);
		break;
	}
	case PD_RECORD_HEADER_EVENT_TYPE:
		s64(c);
		break;
	case PD_RECORD_HEADER_TRACING_DATA:
		s32(c);
		break;
	case PD_RECORD_HEADER_BUILD_ID:
		s32(c);
		break;
	case PD_RECORD_ID_INDEX:
	case PD_RECORD_STAT_CONFIG:
		s64n(c, (uint64_t)(c->end - c->p) / 8);
		break;
	case PD_RECORD_AUXTRACE_INFO:
		s32(c); s32(c);
		s64n(c, (uint64_t)(c->end - c->p) / 8);
		break;
	case PD_RECORD_AUXTRACE:
		s64(c); s64(c); s64(c); s32(c); s32(c); s32(c); s32(c);
		break;
	case PD_RECORD_AUXTRACE_ERROR: {
		s32(c); s32(c); s32(c); s32(c); s32(c);
		uint32_t fmt = s32(c);
		s64(c);                         /* ip */
		if (fmt >= 1) s64(c);           /* time */
		if (fmt >= 2 && c->end - c->p >= 64 + 8) {
			c->p += 64;             /* msg */
			s32(c); s32(c);
		}
		c->p = c->end;
		break;
	}
	case PD_RECORD_THREAD_MAP: {
		uint64_t nr = s64(c);
		for (uint64_t i = 0; i < nr && !c->bad; i++) {
			s64(c);
			sskip(c, 16);
		}
		break;
	}
	case PD_RECORD_CPU_MAP:
		swap_cpu_map_data(c);
		break;
	case PD_RECORD_STAT:
		s64(c); s32(c); s32(c); s64(c); s64(c); s64(c);
		break;
	case PD_RECORD_STAT_ROUND:
		s64(c); s64(c);
		break;
	case PD_RECORD_EVENT_UPDATE: {
		uint64_t t = s64(c);
		s64(c);
		if (t == 1) s64(c);                  /* SCALE: double */
		else if (t == 3) swap_cpu_map_data(c);  /* CPUS */
		c->p = c->end;                       /* UNIT / NAME: strings */
		break;
	}
	case PD_RECORD_TIME_CONV:
		s64(c); s64(c); s64(c);
		if (c->end - c->p >= 16) { s64(c); s64(c); }
		break;
	case PD_RECORD_HEADER_FEATURE:
		/* only the id: the payload needs context (NRCPUS) that pd_swap_feature takes */
		s64(c);
		c->p = c->end;
		break;
	case PD_RECORD_COMPRESSED2:
		s64(c);
		break;
	default:   /* FINISHED_ROUND, FINISHED_INIT, COMPRESSED, unknown: no integers we know */
		break;
	}
}

int pd_swap_record(uint8_t *rec, size_t size, const struct pd_evsel *es,
		   int to_native, struct pd_error *err)
{
	if (size < 8)
		return pd_fail(err, PD_ERR_RECORD, PD_NO_OFFSET, -1,
			       "record of %zu bytes is shorter than its header", size);
	struct sw c = { .p = rec, .end = rec + size, .to_native = to_native };
	uint32_t type = s32(&c);
	uint16_t misc = s16(&c);
	s16(&c);
	const struct pd_event_attr *a = es ? &es->attr : NULL;

	if (type == PD_RECORD_SAMPLE) {
		if (!a)
			return pd_fail(err, PD_ERR_NOATTR, PD_NO_OFFSET, (int)type,
				       "sample matches no event: cannot convert its byte order");
		swap_sample(&c, a);
	} else if (type < 64) {
		int trailer = a && pd_attr_flag(a, PD_ATTR_SAMPLE_ID_ALL);
		size_t tsz = trailer ? es->trailer_size : 0;
		if (tsz > size - 8)
			return pd_fail(err, PD_ERR_RECORD, PD_NO_OFFSET, (int)type,
				       "%s record of %zu bytes cannot hold its %zu-byte sample_id trailer",
				       pd_record_name(type) ? pd_record_name(type) : "kernel", size, tsz);
		struct sw body = { .p = rec + 8, .end = rec + size - tsz, .to_native = to_native };
		swap_kernel_body(&body, type, misc, a);
		struct sw tr = { .p = rec + size - tsz, .end = rec + size, .to_native = to_native };
		if (trailer)
			swap_trailer(&tr, a->sample_type);
		c.bad = body.bad || tr.bad;
	} else {
		swap_user_body(&c, type);
	}
	if (c.bad)
		return pd_fail(err, PD_ERR_RECORD, PD_NO_OFFSET, (int)type,
			       "%s record of %zu bytes is shorter than its fields",
			       pd_record_name(type) ? pd_record_name(type) : "unknown", size);
	return 0;
}

int pd_peek_id(const uint8_t *rec, size_t size, int swapped, int id_pos, int is_pos,
	       uint64_t *id)
{
	uint32_t type = ld32(rec);
	if (swapped)
		type = bswap_32(type);
	uint64_t off;
	if (type == PD_RECORD_SAMPLE) {
		if (id_pos < 0)
			return 0;
		off = 8 + 8 * (uint64_t)id_pos;
	} else {
		if (is_pos < 0 || size < 8 + 8 * (uint64_t)is_pos)
			return 0;
		off = size - 8 * (uint64_t)is_pos;
	}
	if (off + 8 > size)
		return 0;
	uint64_t v = ld64(rec + off);
	*id = swapped ? bswap_64(v) : v;
	return 1;
}

/* -------------------------------------------------------------- features */

static void swap_build_ids(struct sw *c)
{
	while (!c->bad && c->p < c->end) {
		uint8_t *start = c->p;
		s32(c);                 /* type */
		s16(c);                 /* misc */
		uint16_t sz = s16(c);
		s32(c);                 /* pid */
		if (sz < 36 || (uint64_t)(c->end - start) < sz) {
			c->bad = 1;
			break;
		}
		c->p = start + sz;
	}
}

static void swap_event_desc(struct sw *c)
{
	uint32_t nr = s32(c);
	uint32_t asz = s32(c);
	for (uint32_t i = 0; i < nr && !c->bad; i++) {
		if (asz < PD_ATTR_SIZE_VER0 || (uint64_t)(c->end - c->p) < asz) {
			c->bad = 1;
			break;
		}
		if (!c->check_only)
			pd_swap_attr(c->p, asz, c->to_native);
		c->p += asz;
		uint32_t nr_ids = s32(c);
		sstr(c);
		s64n(c, nr_ids);
	}
}

static void swap_cpu_topology(struct sw *c, uint32_t nr_cpus)
{
	sstrlist(c);
	sstrlist(c);
	if (c->p == c->end)
		return;               /* old files: no core/socket ids */
	for (uint32_t i = 0; i < nr_cpus && !c->bad; i++) {
		s32(c);
		s32(c);
	}
	if (c->bad || c->p == c->end)
		return;
	sstrlist(c);              /* die siblings */
	for (uint32_t i = 0; i < nr_cpus && !c->bad; i++)
		s32(c);
}

static int walk_feature(unsigned feat, uint8_t *data, size_t size, int to_native, int check_only,
			uint32_t nr_cpus, struct pd_error *err)
{
	struct sw c = { data, data + size, to_native, 0, check_only };

	switch (feat) {
	case PD_FEAT_BUILD_ID:
		swap_build_ids(&c);
		break;
	case PD_FEAT_HOSTNAME: case PD_FEAT_OSRELEASE: case PD_FEAT_VERSION:
	case PD_FEAT_ARCH: case PD_FEAT_CPUDESC: case PD_FEAT_CPUID:
		sstr(&c);
		break;
	case PD_FEAT_NRCPUS:
		s32(&c); s32(&c);
		break;
	case PD_FEAT_TOTAL_MEM: case PD_FEAT_CLOCKID: case PD_FEAT_DIR_FORMAT:
		s64(&c);
		break;
	case PD_FEAT_CMDLINE:
		sstrlist(&c);
		break;
	case PD_FEAT_EVENT_DESC:
		swap_event_desc(&c);
		break;
	case PD_FEAT_CPU_TOPOLOGY:
		swap_cpu_topology(&c, nr_cpus);
		break;
	case PD_FEAT_NUMA_TOPOLOGY: {
		uint32_t nr = s32(&c);
		for (uint32_t i = 0; i < nr && !c.bad; i++) {
			s32(&c); s64(&c); s64(&c); sstr(&c);
		}
		break;
	}
	case PD_FEAT_PMU_MAPPINGS: {
		uint32_t nr = s32(&c);
		for (uint32_t i = 0; i < nr && !c.bad; i++) {
			s32(&c); sstr(&c);
		}
		break;
	}
	case PD_FEAT_GROUP_DESC: {
		uint32_t nr = s32(&c);
		for (uint32_t i = 0; i < nr && !c.bad; i++) {
			sstr(&c); s32(&c); s32(&c);
		}
		break;
	}
	case PD_FEAT_AUXTRACE: case PD_FEAT_SAMPLE_TIME: case PD_FEAT_MEM_TOPOLOGY:
		s64n(&c, size / 8);
		break;
	case PD_FEAT_CACHE: {
		s32(&c);
		uint32_t cnt = s32(&c);
		for (uint32_t i = 0; i < cnt && !c.bad; i++) {
			s32(&c); s32(&c); s32(&c); s32(&c);
			sstr(&c); sstr(&c); sstr(&c);
		}
		break;
	}
	case PD_FEAT_COMPRESSED:
		s32(&c); s32(&c); s32(&c); s32(&c); s32(&c);
		break;
	case PD_FEAT_CPU_PMU_CAPS: case PD_FEAT_HYBRID_TOPOLOGY: {
		uint32_t nr = s32(&c);
		for (uint32_t i = 0; i < nr && !c.bad; i++) {
			sstr(&c); sstr(&c);
		}
		break;
	}
	case PD_FEAT_CLOCK_DATA:
		s32(&c); s32(&c); s64(&c); s64(&c);
		break;
	case PD_FEAT_PMU_CAPS: {
		uint32_t nr = s32(&c);
		for (uint32_t i = 0; i < nr && !c.bad; i++) {
			uint32_t caps = s32(&c);
			for (uint32_t j = 0; j < caps && !c.bad; j++) {
				sstr(&c); sstr(&c);
			}
			sstr(&c);
		}
		break;
	}
	case PD_FEAT_CPU_DOMAIN_INFO: {
		uint32_t ver = s32(&c);
		s32(&c);
		while (!c.bad && c.p < c.end) {
			s32(&c);
			uint32_t nd = s32(&c);
			for (uint32_t j = 0; j < nd && !c.bad; j++) {
				s32(&c);
				if (ver >= 17) sstr(&c);
				sstr(&c); sstr(&c);
			}
		}
		break;
	}
	case PD_FEAT_BPF_PROG_INFO: case PD_FEAT_BPF_BTF:
		if (check_only)
			break;   /* kernel structures of their own; only perf's BPF code reads them */
		return pd_fail_feature(err, PD_ERR_UNSUPPORTED, PD_NO_OFFSET, feat,
				       "feature %s cannot be converted from the other byte order",
				       pd_feature_name(feat));
	default:   /* TRACING_DATA (self-describing), flags, unknown ids: nothing to convert */
		break;
	}
	if (c.bad)
		return pd_fail_feature(err, PD_ERR_FEATURE, PD_NO_OFFSET, feat,
				       "feature %s: %zu bytes are too few for its fields",
				       pd_feature_name(feat) ? pd_feature_name(feat) : "unknown", size);
	return 0;
}

int pd_swap_feature(unsigned feat, uint8_t *data, size_t size, int to_native,
		    uint32_t nr_cpus, struct pd_error *err)
{
	return walk_feature(feat, data, size, to_native, 0, nr_cpus, err);
}

int pd_feature_check(unsigned feat, const uint8_t *data, size_t size, uint32_t nr_cpus,
		     struct pd_error *err)
{
	return walk_feature(feat, (uint8_t *)data, size, 1, 1, nr_cpus, err);
}
