/*
 * pt_dump.c - Intel PT packets as text (rbdecode dump --packets,
 * rb_pt_dump_packets): every AUXTRACE payload of the recording, or of one
 * queue, decoded packet by packet with libipt's packet decoder and shown
 * as perf report -D shows it. It stands beside the decoder (intel_pt.c
 * has the overview) rather than in it: it reads the recording itself, in
 * file order, and needs no gathering, images or sideband.
 */
#include "config.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include "pt_internal.h"

/* ------------------------------------------------------------ packet dump */

/* perf's description of a packet (intel_pt_pkt_desc), from libipt's decode and the raw bytes. */
static void packet_desc(const struct pt_packet *p, const uint8_t *raw, char *buf, size_t n)
{
	const char *ipn = NULL;
	switch (p->type) {
	case ppt_psb: snprintf(buf, n, "PSB"); return;
	case ppt_psbend: snprintf(buf, n, "PSBEND"); return;
	case ppt_pad: snprintf(buf, n, "PAD"); return;
	case ppt_ovf: snprintf(buf, n, "OVF"); return;
	case ppt_stop: snprintf(buf, n, "TraceSTOP"); return;
	case ppt_fup: ipn = "FUP"; break;
	case ppt_tip: ipn = "TIP"; break;
	case ppt_tip_pge: ipn = "TIP.PGE"; break;
	case ppt_tip_pgd: ipn = "TIP.PGD"; break;
	case ppt_tnt_8:
	case ppt_tnt_64: {
		char bits[65];
		unsigned k = p->payload.tnt.bit_size > 64 ? 64 : p->payload.tnt.bit_size;
		for (unsigned i = 0; i < k; i++)
			bits[i] = (p->payload.tnt.payload >> (k - 1 - i)) & 1 ? 'T' : 'N';
		bits[k] = 0;
		snprintf(buf, n, "TNT %s (%u)", bits, k);
		return;
	}
	case ppt_mode:
		if (p->payload.mode.leaf == pt_mol_exec) {
			unsigned b = raw[1];
			snprintf(buf, n, "MODE.Exec IF:%u %d", (b >> 2) & 1, (b & 1) ? 64 : (b & 2) ? 32 : 16);
		} else {
			snprintf(buf, n, "MODE.TSX TXAbort:%u InTX:%u", p->payload.mode.bits.tsx.abrt,
				 p->payload.mode.bits.tsx.intx);
		}
		return;
	case ppt_pip:
		/* perf shows the payload without libipt's shift into CR3 position */
		snprintf(buf, n, "PIP 0x%" PRIx64 " (NR=%u)", p->payload.pip.cr3 >> 5, p->payload.pip.nr);
		return;
	case ppt_vmcs: snprintf(buf, n, "VMCS 0x%" PRIx64, p->payload.vmcs.base); return;
	case ppt_cbr: snprintf(buf, n, "CBR 0x%x", p->payload.cbr.ratio); return;
	case ppt_tsc: snprintf(buf, n, "TSC 0x%" PRIx64, p->payload.tsc.tsc); return;
	case ppt_tma: snprintf(buf, n, "TMA CTC 0x%x FC 0x%x", p->payload.tma.ctc, p->payload.tma.fc); return;
	case ppt_mtc: snprintf(buf, n, "MTC 0x%x", p->payload.mtc.ctc); return;
	case ppt_cyc: snprintf(buf, n, "CYC 0x%" PRIx64, p->payload.cyc.value); return;
	case ppt_mnt: snprintf(buf, n, "MNT 0x%" PRIx64, p->payload.mnt.payload); return;
	case ppt_exstop: snprintf(buf, n, "EXSTOP IP:%u", p->payload.exstop.ip); return;
	case ppt_mwait:
		snprintf(buf, n, "MWAIT 0x%" PRIx64 " Hints 0x%x Extensions 0x%x",
			 (uint64_t)p->payload.mwait.hints | (uint64_t)p->payload.mwait.ext << 32,
			 p->payload.mwait.hints, p->payload.mwait.ext);
		return;
	case ppt_pwre:
		snprintf(buf, n, "PWRE HW:%u CState:%u Sub-CState:%u", p->payload.pwre.hw, p->payload.pwre.state,
			 p->payload.pwre.sub_state);
		return;
	case ppt_pwrx:
		snprintf(buf, n, "PWRX Last CState:%u Deepest CState:%u", p->payload.pwrx.last, p->payload.pwrx.deepest);
		return;
	case ppt_ptw:
		snprintf(buf, n, "PTWRITE IP:%u 0x%" PRIx64, p->payload.ptw.ip, p->payload.ptw.payload);
		return;
	default:
		snprintf(buf, n, "packet type %d", (int)p->type);
		return;
	}
	if (p->payload.ip.ipc == pt_ipc_suppressed)
		snprintf(buf, n, "%s no ip", ipn);
	else
		snprintf(buf, n, "%s 0x%" PRIx64, ipn, p->payload.ip.ip);
}

static void dump_line(FILE *out, uint64_t off, const uint8_t *b, size_t len, const char *desc)
{
	fprintf(out, ".  %08" PRIx64 ":  ", off);
	for (size_t i = 0; i < 16; i++) {
		if (i < len)
			fprintf(out, "%02x ", b[i]);
		else
			fputs("   ", out);
	}
	fprintf(out, "%s\n", desc);
}

/* One AUXTRACE payload, from its first byte, as perf report -D shows it. */
static int dump_buffer(const uint8_t *buf, size_t len, FILE *out)
{
	struct pt_config c;
	pt_config_init(&c);
	c.begin = (uint8_t *)buf;
	c.end = (uint8_t *)buf + len;
	struct pt_packet_decoder *d = pt_pkt_alloc_decoder(&c);
	if (!d)
		return PD_ERR_NOMEM;
	fprintf(out, ". ... Intel Processor Trace data: size %zu bytes\n", len);
	uint64_t off = 0;
	while (off < len) {
		struct pt_packet p;
		int sz = pt_pkt_sync_set(d, off) < 0 ? -pte_eos : pt_pkt_next(d, &p, sizeof(p));
		if (sz <= 0) {
			dump_line(out, off, buf + off, 1, "Bad packet!");
			off++;
			continue;
		}
		/* perf counts zero bytes after a packet into it, up to 8 bytes in all */
		size_t k = (size_t)sz;
		while (k < 8 && off + k < len && buf[off + k] == 0)
			k++;
		char desc[128];
		packet_desc(&p, buf + off, desc, sizeof(desc));
		dump_line(out, off, buf + off, k, desc);
		off += k;
	}
	pt_pkt_free_decoder(d);
	return ferror(out) ? PD_ERR_IO : 0;
}

int rb_pt_dump_packets(const char *path, long queue, FILE *out, struct pd_error *err)
{
	struct pd_reader *r;
	int rc = pd_reader_open(&r, path, NULL, err);
	if (rc < 0)
		return rc;
	struct pd_record rec;
	int is_pt = 0, more, found = 0, dumped = 0;
	uint8_t *buf = NULL;
	while ((more = pd_reader_next(r, &rec, err)) == 1) {
		struct pd_event ev;
		if ((rec.type != PD_RECORD_AUXTRACE_INFO && rec.type != PD_RECORD_AUXTRACE) ||
		    pd_event_parse(r, &rec, &ev, NULL) < 0)
			continue;
		if (rec.type == PD_RECORD_AUXTRACE_INFO) {
			is_pt = ev.u.auxtrace_info.type == PT_AUXTRACE_TYPE;
			found |= is_pt;
			continue;
		}
		if (!is_pt || ev.u.auxtrace.size > ((uint64_t)1 << 32) || (queue >= 0 && ev.u.auxtrace.idx != (uint32_t)queue))
			continue;
		dumped = 1;
		uint8_t *b = realloc(buf, (size_t)ev.u.auxtrace.size + 1);
		if (!b) {
			rc = PD_ERR_NOMEM;
			break;
		}
		buf = b;
		int64_t got = pd_reader_read_payload(r, buf, (size_t)ev.u.auxtrace.size, err);
		if (got < 0) {
			rc = (int)got;
			break;
		}
		fprintf(out, "\n%#" PRIx64 " [%#" PRIx64 "]: PERF_RECORD_AUXTRACE size: %#" PRIx64 "  offset: %#" PRIx64
			"  ref: %#" PRIx64 "  idx: %u  tid: %d  cpu: %d\n", rec.offset, (uint64_t)rec.size,
			ev.u.auxtrace.size, ev.u.auxtrace.offset, ev.u.auxtrace.reference, ev.u.auxtrace.idx,
			(int)ev.u.auxtrace.tid, (int)ev.u.auxtrace.cpu);
		if ((rc = dump_buffer(buf, (size_t)got, out)) < 0)
			break;
	}
	free(buf);
	pd_reader_free(r);
	if (rc < 0)
		return rc;
	if (more < 0)
		return more;
	return !found ? 0 : dumped || queue < 0 ? 1 : 2;
}
