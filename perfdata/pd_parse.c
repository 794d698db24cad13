/*
 * pd_parse.c - record bodies to structs. Input is a record in native byte
 * order (the reader converted it); every field is checked against
 * header.size, strings must end inside the record, and counts that would run
 * past the end are reported with the record type and the field. Pointers in
 * the output refer into the record and live as long as it does.
 */
#include "config.h"
#include "pd_internal.h"

struct cur {
	const uint8_t *p, *end;
	const char *bad;      /* first field that did not fit */
};

static uint64_t g64(struct cur *c, const char *what)
{
	if (c->bad || c->end - c->p < 8) {
		if (!c->bad) c->bad = what;
		return 0;
	}
	uint64_t v = ld64(c->p);
	c->p += 8;
	return v;
}

static uint32_t g32(struct cur *c, const char *what)
{
	if (c->bad || c->end - c->p < 4) {
		if (!c->bad) c->bad = what;
		return 0;
	}
	uint32_t v = ld32(c->p);
	c->p += 4;
	return v;
}

static uint16_t g16(struct cur *c, const char *what)
{
	if (c->bad || c->end - c->p < 2) {
		if (!c->bad) c->bad = what;
		return 0;
	}
	uint16_t v = ld16(c->p);
	c->p += 2;
	return v;
}

/* @n items of @sz bytes; returns their start or NULL. */
static const uint8_t *gbytes(struct cur *c, uint64_t n, uint64_t sz, const char *what)
{
	if (c->bad || (sz && n > UINT64_MAX / sz) || (uint64_t)(c->end - c->p) < n * sz) {
		if (!c->bad) c->bad = what;
		return NULL;
	}
	const uint8_t *p = c->p;
	c->p += n * sz;
	return p;
}

/* NUL-terminated string that must end before c->end; consumes the rest. */
static const char *gstr(struct cur *c, const char *what)
{
	if (c->bad)
		return "";
	size_t left = (size_t)(c->end - c->p);
	if (!memchr(c->p, 0, left)) {
		c->bad = what;
		return "";
	}
	const char *s = (const char *)c->p;
	c->p = c->end;
	return s;
}

size_t pd_feat_string(const uint8_t *p, size_t left, const char **s)
{
	if (left < 4)
		return 0;
	uint32_t len = ld32(p);
	if (len > left - 4 || (len && !memchr(p + 4, 0, len)))
		return 0;
	*s = len ? (const char *)p + 4 : "";
	return 4 + (size_t)len;
}

static void gread(struct cur *c, uint64_t rf, struct pd_read *r)
{
	memset(r, 0, sizeof(*r));
	r->read_format = rf;
	r->value_size = 8 * (1 + !!(rf & PD_FORMAT_ID) + !!(rf & PD_FORMAT_LOST));
	if (rf & PD_FORMAT_GROUP) {
		r->nr = g64(c, "read group count");
		if (rf & PD_FORMAT_TOTAL_TIME_ENABLED) r->time_enabled = g64(c, "time_enabled");
		if (rf & PD_FORMAT_TOTAL_TIME_RUNNING) r->time_running = g64(c, "time_running");
		r->values = gbytes(c, r->nr, r->value_size, "read group values");
	} else {
		r->nr = 1;
		const uint8_t *v = gbytes(c, 1, 8, "read value");
		if (rf & PD_FORMAT_TOTAL_TIME_ENABLED) r->time_enabled = g64(c, "time_enabled");
		if (rf & PD_FORMAT_TOTAL_TIME_RUNNING) r->time_running = g64(c, "time_running");
		/* non-group: value, [enabled], [running], [id], [lost]: keep value/id/lost apart */
		r->values = v;
		if (rf & PD_FORMAT_ID) gbytes(c, 1, 8, "read id");
		if (rf & PD_FORMAT_LOST) gbytes(c, 1, 8, "read lost");
	}
}

void pd_read_value_at(const struct pd_read *r, uint64_t i, struct pd_read_value *v)
{
	memset(v, 0, sizeof(*v));
	if (i >= r->nr || !r->values)
		return;
	if (r->read_format & PD_FORMAT_GROUP) {
		const uint8_t *p = r->values + (size_t)i * r->value_size;
		v->value = ld64(p);
		p += 8;
		if (r->read_format & PD_FORMAT_ID) { v->id = ld64(p); p += 8; }
		if (r->read_format & PD_FORMAT_LOST) v->lost = ld64(p);
	} else {
		const uint8_t *p = r->values;
		v->value = ld64(p);
		p += 8;
		if (r->read_format & PD_FORMAT_TOTAL_TIME_ENABLED) p += 8;
		if (r->read_format & PD_FORMAT_TOTAL_TIME_RUNNING) p += 8;
		if (r->read_format & PD_FORMAT_ID) { v->id = ld64(p); p += 8; }
		if (r->read_format & PD_FORMAT_LOST) v->lost = ld64(p);
	}
}

static void gregs(struct cur *c, uint64_t mask, struct pd_regs *r, const char *what)
{
	r->mask = mask;
	r->abi = g64(c, what);
	r->nr = r->abi ? (uint64_t)__builtin_popcountll(mask) : 0;
	r->regs = r->nr ? gbytes(c, r->nr, 8, what) : NULL;
}

static int bad_record(struct pd_error *err, uint32_t type, size_t size, const char *field)
{
	const char *n = pd_record_name(type);
	return pd_fail(err, PD_ERR_RECORD, PD_NO_OFFSET, (int)type,
		       "%s record of %zu bytes: field '%s' does not fit", n ? n : "unknown", size, field);
}

/*
 * Hot path: every field is assigned once, present or not (absent ones 0),
 * instead of clearing the whole struct first; the fields up to PERIOD have
 * fixed sizes and are bounds-checked by the cursor like the rest.
 */
int pd_sample_parse(const struct pd_evsel *es, const uint8_t *rec, size_t size,
		    struct pd_sample *s, struct pd_error *err)
{
	const struct pd_event_attr *a = &es->attr;
	uint64_t st = a->sample_type;
	struct cur c = { rec + 8, rec + size, NULL };

	s->type = st;
	if (st & ~(PD_SAMPLE_MAX - 1)) {
		memset(s, 0, sizeof(*s));
		return pd_fail(err, PD_ERR_RECORD, PD_NO_OFFSET, PD_RECORD_SAMPLE,
			       "sample_type %#llx has bits this reader does not know",
			       (unsigned long long)st);
	}
#define F64(bit, field, name) (s->field = (st & (bit)) ? g64(&c, name) : 0)
	F64(PD_SAMPLE_IDENTIFIER, identifier, "identifier");
	F64(PD_SAMPLE_IP, ip, "ip");
	if (st & PD_SAMPLE_TID) { s->pid = g32(&c, "pid"); s->tid = g32(&c, "tid"); }
	else s->pid = s->tid = 0;
	F64(PD_SAMPLE_TIME, time, "time");
	F64(PD_SAMPLE_ADDR, addr, "addr");
	F64(PD_SAMPLE_ID, id, "id");
	F64(PD_SAMPLE_STREAM_ID, stream_id, "stream_id");
	if (st & PD_SAMPLE_CPU) { s->cpu = g32(&c, "cpu"); s->res = g32(&c, "res"); }
	else s->cpu = s->res = 0;
	F64(PD_SAMPLE_PERIOD, period, "period");
	if (st & PD_SAMPLE_READ) gread(&c, a->read_format, &s->read);
	else memset(&s->read, 0, sizeof(s->read));
	if (st & PD_SAMPLE_CALLCHAIN) {
		s->callchain_nr = g64(&c, "callchain nr");
		s->callchain = gbytes(&c, s->callchain_nr, 8, "callchain");
	} else {
		s->callchain_nr = 0;
		s->callchain = NULL;
	}
	if (st & PD_SAMPLE_RAW) {
		s->raw_size = g32(&c, "raw size");
		s->raw = gbytes(&c, s->raw_size, 1, "raw data");
	} else {
		s->raw_size = 0;
		s->raw = NULL;
	}
	s->branch_nr = s->branch_hw_idx = 0;
	s->branch_has_hw_idx = 0;
	s->branches = s->branch_counters = NULL;
	if (st & PD_SAMPLE_BRANCH_STACK) {
		s->branch_nr = g64(&c, "branch nr");
		if (a->branch_sample_type & PD_BRANCH_HW_INDEX) {
			s->branch_has_hw_idx = 1;
			s->branch_hw_idx = g64(&c, "branch hw_idx");
		}
		s->branches = gbytes(&c, s->branch_nr, 24, "branch entries");
		if (a->branch_sample_type & PD_BRANCH_COUNTERS)
			s->branch_counters = gbytes(&c, s->branch_nr, 8, "branch counters");
	}
	if (st & PD_SAMPLE_REGS_USER) gregs(&c, a->sample_regs_user, &s->regs_user, "regs_user");
	else memset(&s->regs_user, 0, sizeof(s->regs_user));
	s->stack_size = s->stack_dyn_size = 0;
	s->stack = NULL;
	if (st & PD_SAMPLE_STACK_USER) {
		s->stack_size = g64(&c, "stack size");
		s->stack = gbytes(&c, s->stack_size, 1, "stack data");
		if (s->stack_size) s->stack_dyn_size = g64(&c, "stack dyn_size");
	}
	F64(PD_SAMPLE_WEIGHT | PD_SAMPLE_WEIGHT_STRUCT, weight, "weight");
	F64(PD_SAMPLE_DATA_SRC, data_src, "data_src");
	F64(PD_SAMPLE_TRANSACTION, transaction, "transaction");
	if (st & PD_SAMPLE_REGS_INTR) gregs(&c, a->sample_regs_intr, &s->regs_intr, "regs_intr");
	else memset(&s->regs_intr, 0, sizeof(s->regs_intr));
	F64(PD_SAMPLE_PHYS_ADDR, phys_addr, "phys_addr");
	F64(PD_SAMPLE_CGROUP, cgroup, "cgroup");
	F64(PD_SAMPLE_DATA_PAGE_SIZE, data_page_size, "data_page_size");
	F64(PD_SAMPLE_CODE_PAGE_SIZE, code_page_size, "code_page_size");
	F64(PD_SAMPLE_AUX, aux_size, "aux size");
	s->aux = s->aux_size ? gbytes(&c, s->aux_size, 1, "aux data") : NULL;
#undef F64
	if (c.bad)
		return bad_record(err, PD_RECORD_SAMPLE, size, c.bad);
	return 0;
}

int pd_sample_id_parse(const struct pd_evsel *es, const uint8_t *rec, size_t size,
		       struct pd_sample_id *sid, struct pd_error *err)
{
	memset(sid, 0, sizeof(*sid));
	if (!es || !es->trailer_size)
		return 0;
	uint64_t st = es->attr.sample_type;
	if (es->trailer_size > size - 8)
		return bad_record(err, ld32(rec), size, "sample_id trailer");
	struct cur c = { rec + size - es->trailer_size, rec + size, NULL };
	sid->present = st & PD_SAMPLE_ID_ALL_BITS;
	if (st & PD_SAMPLE_TID) { sid->pid = g32(&c, "pid"); sid->tid = g32(&c, "tid"); }
	if (st & PD_SAMPLE_TIME) sid->time = g64(&c, "time");
	if (st & PD_SAMPLE_ID) sid->id = g64(&c, "id");
	if (st & PD_SAMPLE_STREAM_ID) sid->stream_id = g64(&c, "stream_id");
	if (st & PD_SAMPLE_CPU) { sid->cpu = g32(&c, "cpu"); sid->res = g32(&c, "res"); }
	if (st & PD_SAMPLE_IDENTIFIER) sid->identifier = g64(&c, "identifier");
	return 0;
}

static void parse_cpu_map(struct cur *c, struct pd_event *ev)
{
	ev->u.cpu_map.type = g16(c, "cpu_map type");
	switch (ev->u.cpu_map.type) {
	case 0:
		ev->u.cpu_map.nr = g16(c, "cpu_map nr");
		ev->u.cpu_map.data = gbytes(c, ev->u.cpu_map.nr, 2, "cpu_map cpus");
		break;
	case 1:
		ev->u.cpu_map.nr = g16(c, "cpu_map nr");
		ev->u.cpu_map.long_size = g16(c, "cpu_map long_size");
		if (ev->u.cpu_map.long_size == 4) {
			ev->u.cpu_map.data = gbytes(c, ev->u.cpu_map.nr, 4, "cpu_map mask");
		} else if (ev->u.cpu_map.long_size == 8) {
			gbytes(c, 4, 1, "cpu_map padding");
			ev->u.cpu_map.data = gbytes(c, ev->u.cpu_map.nr, 8, "cpu_map mask");
		} else if (!c->bad) {
			c->bad = "cpu_map long_size (not 4 or 8)";
		}
		break;
	case 2:
		ev->u.cpu_map.any_cpu = (uint8_t)(g16(c, "cpu_map any_cpu") & 0xff);
		ev->u.cpu_map.start_cpu = g16(c, "cpu_map start");
		ev->u.cpu_map.end_cpu = g16(c, "cpu_map end");
		if (!c->bad && ev->u.cpu_map.end_cpu < ev->u.cpu_map.start_cpu)
			c->bad = "cpu_map range (end before start)";
		break;
	default:
		if (!c->bad)
			c->bad = "cpu_map type (not 0, 1 or 2)";
	}
}

size_t pd_cpu_map_each(const struct pd_event *ev, void (*fn)(void *ctx, unsigned cpu), void *ctx)
{
	size_t n = 0;
	const uint8_t *d = ev->u.cpu_map.data;
	switch (ev->u.cpu_map.type) {
	case 0:
		for (unsigned i = 0; i < ev->u.cpu_map.nr; i++, n++) {
			uint16_t cpu = ld16(d + 2 * i);
			if (fn) fn(ctx, cpu == 0xffff ? (unsigned)-1 : cpu);
		}
		break;
	case 1: {
		unsigned ls = ev->u.cpu_map.long_size;
		for (unsigned w = 0; w < ev->u.cpu_map.nr; w++) {
			uint64_t bits = ls == 4 ? ld32(d + 4 * w) : ld64(d + 8 * w);
			for (unsigned b = 0; b < 8 * ls; b++)
				if (bits >> b & 1) {
					n++;
					if (fn) fn(ctx, w * 8 * ls + b);
				}
		}
		break;
	}
	case 2:
		if (ev->u.cpu_map.any_cpu) {
			n++;
			if (fn) fn(ctx, (unsigned)-1);
		}
		for (unsigned cpu = ev->u.cpu_map.start_cpu; cpu <= ev->u.cpu_map.end_cpu; cpu++, n++)
			if (fn) fn(ctx, cpu);
		break;
	}
	return n;
}

void pd_id_index_entry_at(const struct pd_event *ev, uint64_t i, struct pd_id_index_entry *e)
{
	const uint8_t *p = ev->u.id_index.entries + 32 * i;
	e->id = ld64(p);
	e->idx = ld64(p + 8);
	e->cpu = ld64(p + 16);
	e->tid = ld64(p + 24);
	e->machine_pid = e->vcpu = 0;
	if (ev->u.id_index.entry_size == 48) {
		const uint8_t *q = ev->u.id_index.entries + 32 * ev->u.id_index.nr + 16 * i;
		e->machine_pid = ld64(q);
		e->vcpu = ld64(q + 8);
	}
}

static void parse_kernel(struct cur *c, struct pd_event *ev, const struct pd_evsel *es)
{
	switch (ev->type) {
	case PD_RECORD_MMAP:
		ev->u.mmap.pid = g32(c, "pid");
		ev->u.mmap.tid = g32(c, "tid");
		ev->u.mmap.start = g64(c, "start");
		ev->u.mmap.len = g64(c, "len");
		ev->u.mmap.pgoff = g64(c, "pgoff");
		ev->u.mmap.filename = gstr(c, "filename");
		break;
	case PD_RECORD_MMAP2:
		ev->u.mmap2.pid = g32(c, "pid");
		ev->u.mmap2.tid = g32(c, "tid");
		ev->u.mmap2.start = g64(c, "start");
		ev->u.mmap2.len = g64(c, "len");
		ev->u.mmap2.pgoff = g64(c, "pgoff");
		if (ev->misc & PD_MISC_MMAP_BUILD_ID) {
			const uint8_t *b = gbytes(c, 24, 1, "build_id");
			if (b) {
				ev->u.mmap2.build_id_size = b[0];
				ev->u.mmap2.build_id = b + 4;
				if (b[0] > 20 && !c->bad)
					c->bad = "build_id size (over 20)";
			}
		} else {
			ev->u.mmap2.maj = g32(c, "maj");
			ev->u.mmap2.min = g32(c, "min");
			ev->u.mmap2.ino = g64(c, "ino");
			ev->u.mmap2.ino_generation = g64(c, "ino_generation");
		}
		{
			/*
			 * Kernels before 3.16 (and RHEL 7's 3.10 backport) wrote MMAP2
			 * without prot and flags: the filename starts where prot
			 * would. The kernel's prot holds only PROT_READ, _WRITE and
			 * _EXEC (at most 7), while a name's first four bytes read as
			 * a number are far larger ("/usr", "[sta"): a larger prot
			 * whose bytes hold a NUL-terminated name is that name (prot
			 * and flags then 0: not recorded).
			 */
			const uint8_t *at = c->p;
			ev->u.mmap2.prot = g32(c, "prot");
			ev->u.mmap2.flags = g32(c, "flags");
			if (!c->bad && ev->u.mmap2.prot > 7 && !(ev->misc & PD_MISC_MMAP_BUILD_ID) &&
			    memchr(at, 0, (size_t)(c->end - at))) {
				c->p = at;
				ev->u.mmap2.prot = ev->u.mmap2.flags = 0;
			}
			ev->u.mmap2.filename = gstr(c, "filename");
		}
		break;
	case PD_RECORD_LOST:
		ev->u.lost.id = g64(c, "id");
		ev->u.lost.lost = g64(c, "lost");
		break;
	case PD_RECORD_COMM:
		ev->u.comm.pid = g32(c, "pid");
		ev->u.comm.tid = g32(c, "tid");
		ev->u.comm.comm = gstr(c, "comm");
		break;
	case PD_RECORD_EXIT:
	case PD_RECORD_FORK:
		ev->u.fork.pid = g32(c, "pid");
		ev->u.fork.ppid = g32(c, "ppid");
		ev->u.fork.tid = g32(c, "tid");
		ev->u.fork.ptid = g32(c, "ptid");
		ev->u.fork.time = g64(c, "time");
		break;
	case PD_RECORD_THROTTLE:
	case PD_RECORD_UNTHROTTLE:
		ev->u.throttle.time = g64(c, "time");
		ev->u.throttle.id = g64(c, "id");
		ev->u.throttle.stream_id = g64(c, "stream_id");
		break;
	case PD_RECORD_READ:
		ev->u.read.pid = g32(c, "pid");
		ev->u.read.tid = g32(c, "tid");
		gread(c, es ? es->attr.read_format : 0, &ev->u.read.values);
		break;
	case PD_RECORD_AUX:
		ev->u.aux.aux_offset = g64(c, "aux_offset");
		ev->u.aux.aux_size = g64(c, "aux_size");
		ev->u.aux.flags = g64(c, "flags");
		break;
	case PD_RECORD_ITRACE_START:
		ev->u.itrace_start.pid = g32(c, "pid");
		ev->u.itrace_start.tid = g32(c, "tid");
		break;
	case PD_RECORD_LOST_SAMPLES:
		ev->u.lost_samples.lost = g64(c, "lost");
		break;
	case PD_RECORD_SWITCH:
		break;
	case PD_RECORD_SWITCH_CPU_WIDE:
		ev->u.context_switch.next_prev_pid = g32(c, "next_prev_pid");
		ev->u.context_switch.next_prev_tid = g32(c, "next_prev_tid");
		break;
	case PD_RECORD_NAMESPACES:
		ev->u.namespaces.pid = g32(c, "pid");
		ev->u.namespaces.tid = g32(c, "tid");
		ev->u.namespaces.nr = g64(c, "nr_namespaces");
		ev->u.namespaces.link_info = gbytes(c, ev->u.namespaces.nr, 16, "link_info");
		break;
	case PD_RECORD_KSYMBOL:
		ev->u.ksymbol.addr = g64(c, "addr");
		ev->u.ksymbol.len = g32(c, "len");
		ev->u.ksymbol.ksym_type = g16(c, "ksym_type");
		ev->u.ksymbol.flags = g16(c, "flags");
		ev->u.ksymbol.name = gstr(c, "name");
		break;
	case PD_RECORD_BPF_EVENT:
		ev->u.bpf_event.type = g16(c, "type");
		ev->u.bpf_event.flags = g16(c, "flags");
		ev->u.bpf_event.id = g32(c, "id");
		ev->u.bpf_event.tag = gbytes(c, 8, 1, "tag");
		break;
	case PD_RECORD_CGROUP:
		ev->u.cgroup.id = g64(c, "id");
		ev->u.cgroup.path = gstr(c, "path");
		break;
	case PD_RECORD_TEXT_POKE:
		ev->u.text_poke.addr = g64(c, "addr");
		ev->u.text_poke.old_len = g16(c, "old_len");
		ev->u.text_poke.new_len = g16(c, "new_len");
		ev->u.text_poke.bytes = gbytes(c, (uint64_t)ev->u.text_poke.old_len + ev->u.text_poke.new_len,
					       1, "bytes");
		break;
	case PD_RECORD_AUX_OUTPUT_HW_ID:
		ev->u.aux_output_hw_id.hw_id = g64(c, "hw_id");
		break;
	}
}

static void parse_user(struct cur *c, struct pd_event *ev, size_t size)
{
	switch (ev->type) {
	case PD_RECORD_HEADER_ATTR: {
		const uint8_t *a = gbytes(c, PD_ATTR_SIZE_VER0, 1, "attr");
		if (!a)
			break;
		uint32_t asz = ld32(a + 4) ? ld32(a + 4) : PD_ATTR_SIZE_VER0;
		c->p = a;
		ev->u.header_attr.attr = gbytes(c, asz, 1, "attr");
		ev->u.header_attr.attr_size = asz;
		ev->u.header_attr.nr_ids = (uint64_t)(c->end - c->p) / 8;
		ev->u.header_attr.ids = gbytes(c, ev->u.header_attr.nr_ids, 8, "ids");
		break;
	}
	case PD_RECORD_HEADER_EVENT_TYPE: {
		/*
		 * perf cut the 64-byte name field to the name's length rounded up to 8
		 * (event__synthesize_event_type): a name of 8, 16, ... bytes fills its
		 * field with no NUL ("branches", "cache-references"). The name is the
		 * field up to its first NUL or its end.
		 */
		ev->u.event_type.event_id = g64(c, "event_id");
		size_t n = c->bad ? 0 : (size_t)(c->end - c->p) < 64 ? (size_t)(c->end - c->p) : 64;
		const char *name = n ? (const char *)gbytes(c, n, 1, "name") : NULL;
		if (!name && !c->bad)
			c->bad = "name";
		n = name ? strnlen(name, n) : 0;
		memcpy(ev->u.event_type.name, name ? name : "", n);
		ev->u.event_type.name[n] = 0;
		break;
	}
	case PD_RECORD_HEADER_TRACING_DATA:
		ev->u.tracing_data.size = g32(c, "size");
		break;
	case PD_RECORD_HEADER_BUILD_ID: {
		ev->u.build_id.pid = (int32_t)g32(c, "pid");
		const uint8_t *b = gbytes(c, 24, 1, "build_id");
		if (b) {
			ev->u.build_id.build_id = b;
			ev->u.build_id.size = (ev->misc & PD_MISC_BUILD_ID_SIZE) ? b[20] : 20;
			if (ev->u.build_id.size > 20 && !c->bad)
				c->bad = "build_id size (over 20)";
		}
		ev->u.build_id.filename = gstr(c, "filename");
		break;
	}
	case PD_RECORD_FINISHED_ROUND:
	case PD_RECORD_FINISHED_INIT:
		break;
	case PD_RECORD_ID_INDEX: {
		uint64_t nr = g64(c, "nr");
		uint64_t left = (uint64_t)(c->end - c->p);
		ev->u.id_index.nr = nr;
		ev->u.id_index.entry_size = (nr && left / nr >= 48) ? 48 : 32;
		ev->u.id_index.entries = gbytes(c, nr, ev->u.id_index.entry_size, "entries");
		break;
	}
	case PD_RECORD_AUXTRACE_INFO:
		ev->u.auxtrace_info.type = g32(c, "type");
		g32(c, "reserved");
		ev->u.auxtrace_info.nr_priv = (uint64_t)(c->end - c->p) / 8;
		ev->u.auxtrace_info.priv = gbytes(c, ev->u.auxtrace_info.nr_priv, 8, "priv");
		break;
	case PD_RECORD_AUXTRACE:
		ev->u.auxtrace.size = g64(c, "size");
		ev->u.auxtrace.offset = g64(c, "offset");
		ev->u.auxtrace.reference = g64(c, "reference");
		ev->u.auxtrace.idx = g32(c, "idx");
		ev->u.auxtrace.tid = g32(c, "tid");
		ev->u.auxtrace.cpu = g32(c, "cpu");
		g32(c, "reserved");
		break;
	case PD_RECORD_AUXTRACE_ERROR: {
		ev->u.auxtrace_error.type = g32(c, "type");
		ev->u.auxtrace_error.code = g32(c, "code");
		ev->u.auxtrace_error.cpu = g32(c, "cpu");
		ev->u.auxtrace_error.pid = g32(c, "pid");
		ev->u.auxtrace_error.tid = g32(c, "tid");
		ev->u.auxtrace_error.fmt = g32(c, "fmt");
		ev->u.auxtrace_error.ip = g64(c, "ip");
		if (ev->u.auxtrace_error.fmt >= 1)
			ev->u.auxtrace_error.time = g64(c, "time");
		size_t left = c->bad ? 0 : (size_t)(c->end - c->p);
		size_t n = left < PD_AUXTRACE_ERROR_MSG_MAX ? left : PD_AUXTRACE_ERROR_MSG_MAX;
		memcpy(ev->u.auxtrace_error.msg, c->p, n);
		ev->u.auxtrace_error.msg[n] = 0;
		if (ev->u.auxtrace_error.fmt >= 2 && left >= PD_AUXTRACE_ERROR_MSG_MAX + 8) {
			c->p += PD_AUXTRACE_ERROR_MSG_MAX;
			ev->u.auxtrace_error.has_machine = 1;
			ev->u.auxtrace_error.machine_pid = g32(c, "machine_pid");
			ev->u.auxtrace_error.vcpu = g32(c, "vcpu");
		}
		break;
	}
	case PD_RECORD_THREAD_MAP:
		ev->u.thread_map.nr = g64(c, "nr");
		ev->u.thread_map.entries = gbytes(c, ev->u.thread_map.nr, 24, "entries");
		break;
	case PD_RECORD_CPU_MAP:
		parse_cpu_map(c, ev);
		break;
	case PD_RECORD_STAT_CONFIG:
		ev->u.stat_config.nr = g64(c, "nr");
		ev->u.stat_config.pairs = gbytes(c, ev->u.stat_config.nr, 16, "config pairs");
		break;
	case PD_RECORD_STAT:
		ev->u.stat.id = g64(c, "id");
		ev->u.stat.cpu = g32(c, "cpu");
		ev->u.stat.thread = g32(c, "thread");
		ev->u.stat.val = g64(c, "val");
		ev->u.stat.ena = g64(c, "ena");
		ev->u.stat.run = g64(c, "run");
		break;
	case PD_RECORD_STAT_ROUND:
		ev->u.stat_round.type = g64(c, "type");
		ev->u.stat_round.time = g64(c, "time");
		break;
	case PD_RECORD_EVENT_UPDATE:
		ev->u.event_update.type = g64(c, "type");
		ev->u.event_update.id = g64(c, "id");
		ev->u.event_update.data = c->p;
		ev->u.event_update.size = c->bad ? 0 : (size_t)(c->end - c->p);
		switch (ev->u.event_update.type) {
		case 0: case 2: gstr(c, ev->u.event_update.type ? "name" : "unit"); break;
		case 1: g64(c, "scale"); break;
		case 3: { struct pd_event tmp; parse_cpu_map(c, &tmp); break; }
		default: break;    /* newer types: kept as bytes */
		}
		break;
	case PD_RECORD_TIME_CONV:
		ev->u.time_conv.time_shift = g64(c, "time_shift");
		ev->u.time_conv.time_mult = g64(c, "time_mult");
		ev->u.time_conv.time_zero = g64(c, "time_zero");
		if (size > PD_TIME_CONV_SIZE_OLD) {
			ev->u.time_conv.has_cycles = 1;
			ev->u.time_conv.time_cycles = g64(c, "time_cycles");
			ev->u.time_conv.time_mask = g64(c, "time_mask");
			const uint8_t *caps = gbytes(c, 2, 1, "capabilities");
			if (caps) {
				ev->u.time_conv.cap_user_time_zero = caps[0];
				ev->u.time_conv.cap_user_time_short = caps[1];
			}
		}
		break;
	case PD_RECORD_HEADER_FEATURE:
		ev->u.feature.feat_id = g64(c, "feat_id");
		ev->u.feature.data = c->p;
		ev->u.feature.size = c->bad ? 0 : (size_t)(c->end - c->p);
		break;
	case PD_RECORD_COMPRESSED:
		ev->u.compressed.data = c->p;
		ev->u.compressed.size = (size_t)(c->end - c->p);
		break;
	case PD_RECORD_COMPRESSED2: {
		uint64_t n = g64(c, "data_size");
		ev->u.compressed.data = gbytes(c, n, 1, "data");
		ev->u.compressed.size = (size_t)n;
		break;
	}
	}
}

int pd_event_parse(const struct pd_reader *r, const struct pd_record *rec,
		   struct pd_event *ev, struct pd_error *err)
{
	const struct pd_evsel *es = rec->evsel >= 0 ? pd_reader_evsel(r, (size_t)rec->evsel) : NULL;
	int rc = 0;

	/* the sample parser clears what it fills; other bodies are small */
	if (rec->type != PD_RECORD_SAMPLE)
		memset(ev, 0, sizeof(*ev));
	else
		memset(&ev->sid, 0, sizeof(ev->sid));
	ev->type = rec->type;
	ev->misc = rec->misc;
	if (rec->type == PD_RECORD_SAMPLE) {
		if (!es) {
			rc = pd_fail(err, PD_ERR_NOATTR, rec->offset, (int)rec->type,
				     "%s: sample at offset %llu matches no event (id unknown)",
				     pd_reader_name(r), (unsigned long long)rec->offset);
			return rc;
		}
		rc = pd_sample_parse(es, rec->data, rec->size, &ev->u.sample, err);
	} else if (rec->type < 64) {
		size_t tsz = es ? es->trailer_size : 0;
		if (tsz > (size_t)rec->size - 8)
			rc = bad_record(err, rec->type, rec->size, "sample_id trailer");
		else {
			struct cur c = { rec->data + 8, rec->data + rec->size - tsz, NULL };
			parse_kernel(&c, ev, es);
			if (c.bad)
				rc = bad_record(err, rec->type, rec->size, c.bad);
			else
				rc = pd_sample_id_parse(es, rec->data, rec->size, &ev->sid, err);
		}
	} else {
		struct cur c = { rec->data + 8, rec->data + rec->size, NULL };
		parse_user(&c, ev, rec->size);
		if (c.bad)
			rc = bad_record(err, rec->type, rec->size, c.bad);
	}
	if (rc < 0)
		pd_error_locate(err, pd_reader_name(r), rec->offset);
	return rc;
}

int pd_record_time(const struct pd_reader *r, const struct pd_record *rec, uint64_t *t)
{
	const struct pd_evsel *es = rec->evsel >= 0 ? pd_reader_evsel(r, (size_t)rec->evsel) : NULL;
	if (!es || !(es->attr.sample_type & PD_SAMPLE_TIME))
		return 0;
	if (rec->type == PD_RECORD_SAMPLE) {
		/* only fixed-size fields precede the time: read it where it is, nothing else parsed */
		uint64_t st = es->attr.sample_type;
		size_t off = 8 + 8 * (!!(st & PD_SAMPLE_IDENTIFIER) + !!(st & PD_SAMPLE_IP) + !!(st & PD_SAMPLE_TID));
		if ((size_t)rec->size < off + 8)
			return 0;
		memcpy(t, rec->data + off, 8);
		return 1;
	}
	struct pd_sample_id sid;
	if (!es->trailer_size || pd_sample_id_parse(es, rec->data, rec->size, &sid, NULL) < 0)
		return 0;
	*t = sid.time;
	return 1;
}
