/*
 * iptcheck.c - a second independent decoder for the fixtures: libipt's
 * instruction decoder (Intel's reference library, which the project's
 * decoder also builds on) over one AUX queue of a generated perf.data.
 * The queue's AUXTRACE payloads are placed at their offsets (full-trace
 * fixtures only: snapshots need overlap trimming, which is the decoder's
 * job), the program's text segment is the image, and every decoded
 * instruction address is printed. An AUX record flagged TRUNCATED ends a
 * segment: the data after it is decoded by a fresh decoder (the trace was
 * cut there). Decode errors resynchronise at the next PSB and are counted on
 * stderr, as a decoder reports a gap. A recording with an address filter
 * (the generator's own form, "filter 0xOFF/0xSIZE@FILE") gets it placed in
 * the text segment and the CPU's errata (SKL014 binds TIP.PGD without IP
 * through the filter).
 */
#include "config.h"
#include <intel-pt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "pd.h"
#include "ptgen.h"

struct check_cfg {
	struct pt_cpu cpu;
	int have_cpu;
	uint64_t filt_off, filt_size;    /* the filter range as a file offset (size 0: none) */
};

static int load_queue(const char *path, int queue, uint8_t **data, size_t *len, size_t *cuts, int *ncuts,
		      struct check_cfg *cc)
{
	struct pd_reader *r;
	struct pd_error err;
	if (pd_reader_open(&r, path, NULL, &err) < 0) {
		fprintf(stderr, "ptgen: %s\n", err.msg);
		return -1;
	}
	uint8_t *buf = NULL;
	size_t cap = 0, n = 0;
	struct pd_record rec;
	int rc;
	const uint8_t *feat;
	size_t fsize;
	unsigned fam, model, step;
	if (pd_reader_feature(r, PD_FEAT_CPUID, &feat, &fsize, NULL) && fsize > 4 &&
	    sscanf((const char *)feat + 4, "GenuineIntel,%u,%u,%u", &fam, &model, &step) == 3) {
		cc->cpu.vendor = pcv_intel;
		cc->cpu.family = (uint16_t)fam;
		cc->cpu.model = (uint8_t)model;
		cc->cpu.stepping = (uint8_t)step;
		cc->have_cpu = 1;
	}
	while ((rc = pd_reader_next(r, &rec, &err)) > 0) {
		struct pd_event ev;
		char fs[512];
		uint64_t fend;
		if (rec.type == PD_RECORD_AUXTRACE_INFO && pd_event_parse(r, &rec, &ev, &err) == 0 &&
		    pd_pt_filter_string(ev.u.auxtrace_info.priv, ev.u.auxtrace_info.nr_priv, 0, fs, sizeof(fs), &fend) > 0 &&
		    sscanf(fs, "filter %" SCNx64 "/%" SCNx64, &cc->filt_off, &cc->filt_size) != 2)
			fprintf(stderr, "ptgen: %s: a filter string ptgen does not write: %s\n", path, fs);
		if (rec.type == PD_RECORD_AUX && pd_event_parse(r, &rec, &ev, &err) == 0 &&
		    (int)ev.sid.cpu == queue && (ev.u.aux.flags & 1) && *ncuts < 8)
			cuts[(*ncuts)++] = ev.u.aux.aux_offset + ev.u.aux.aux_size;
		if (rec.type != PD_RECORD_AUXTRACE || pd_event_parse(r, &rec, &ev, &err) < 0 ||
		    (int)ev.u.auxtrace.idx != queue)
			continue;
		uint64_t end = ev.u.auxtrace.offset + ev.u.auxtrace.size;
		if (end > (1u << 30)) {
			fprintf(stderr, "ptgen: %s: AUXTRACE offset too large\n", path);
			rc = -1;
			break;
		}
		if (end > cap) {
			cap = end * 2;
			buf = realloc(buf, cap);
			if (!buf)
				exit(4);
		}
		if (pd_reader_read_payload(r, buf + ev.u.auxtrace.offset, ev.u.auxtrace.size, &err) !=
		    (int64_t)ev.u.auxtrace.size) {
			rc = -1;
			break;
		}
		if (end > n)
			n = end;
	}
	pd_reader_free(r);
	if (rc < 0) {
		free(buf);
		return -1;
	}
	*data = buf;
	*len = n;
	return 0;
}

/* Decode [begin, end) with a fresh decoder; returns instructions, counts errors. */
static unsigned long decode_segment(uint8_t *begin, uint8_t *end, struct image *im, const struct check_cfg *cc,
				    FILE *out, unsigned long *errors)
{
	struct pt_config c;
	pt_config_init(&c);
	c.begin = begin;
	c.end = end;
	c.cpuid_0x15_eax = 1;      /* as the fixtures' AUXTRACE_INFO */
	c.cpuid_0x15_ebx = 100;
	c.mtc_freq = 3;
	c.nom_freq = 24;
	if (cc->have_cpu) {
		c.cpu = cc->cpu;
		pt_cpu_errata(&c.errata, &c.cpu);
	}
	if (cc->filt_size) {
		c.addr_filter.config.ctl.addr0_cfg = 1;        /* FilterEn */
		c.addr_filter.addr0_a = cc->filt_off - im->text_offset + im->text_vaddr;
		c.addr_filter.addr0_b = c.addr_filter.addr0_a + cc->filt_size - 1;
	}
	struct pt_insn_decoder *d = pt_insn_alloc_decoder(&c);
	if (!d) {
		(*errors)++;
		return 0;
	}
	unsigned long insns = 0;
	int status = pt_image_add_file(pt_insn_get_image(d), im->path, im->text_offset, im->text_size, NULL,
				       im->text_vaddr);
	if (status >= 0)
		status = pt_insn_sync_forward(d);
	while (status != -pte_eos) {
		if (status < 0) {
			uint64_t off = 0;
			pt_insn_get_offset(d, &off);
			fprintf(stderr, "ptgen: libipt: %s at segment offset 0x%" PRIx64 "\n",
				pt_errstr(pt_errcode(status)), off);
			(*errors)++;
			status = pt_insn_sync_forward(d);
			continue;
		}
		while (status & pts_event_pending) {
			struct pt_event ev;
			status = pt_insn_event(d, &ev, sizeof(ev));
			if (status < 0)
				break;
		}
		if (status < 0)
			continue;
		if (status & pts_eos)
			break;
		struct pt_insn insn;
		status = pt_insn_next(d, &insn, sizeof(insn));
		if (status >= 0) {
			fprintf(out, "%" PRIx64 "\n", insn.ip);
			insns++;
		}
	}
	pt_insn_free_decoder(d);
	return insns;
}

int ipt_decode(const char *perfdata, struct image *im, int queue, FILE *out)
{
	uint8_t *data;
	size_t len, cuts[8];
	int ncuts = 0;
	struct check_cfg cc;
	memset(&cc, 0, sizeof(cc));
	if (load_queue(perfdata, queue, &data, &len, cuts, &ncuts, &cc) < 0)
		return -1;
	if (!len) {
		fprintf(stderr, "ptgen: %s: no trace in queue %d\n", perfdata, queue);
		free(data);
		return -1;
	}
	unsigned long errors = 0, insns = 0;
	size_t from = 0;
	for (int k = 0; k <= ncuts; k++) {
		size_t to = k < ncuts && cuts[k] < len ? cuts[k] : len;
		if (to > from)
			insns += decode_segment(data + from, data + to, im, &cc, out, &errors);
		from = to;
	}
	fprintf(stderr, "ptgen: libipt: queue %d: %lu instructions, %d segments, %lu decode errors\n", queue, insns,
		ncuts + 1, errors);
	free(data);
	return errors ? 1 : 0;
}
