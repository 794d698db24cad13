/*
 * pt_filter.c - Intel PT address filters for the decoder.
 *
 * A recording made with perf record --filter keeps the filter string in
 * AUXTRACE_INFO as perf record gave it to the kernel (facts 4.1): entries
 * "filter|stop|tracestop ADDR[/SIZE][@FILE]" separated by commas, symbols
 * already resolved, an object's ADDR an offset in its file (the kernel
 * places such a range through each mapping of the file: start + offset -
 * pgoff), a kernel ADDR an address. Intel PT has no "start" filters.
 *
 * The decoder needs the ranges as addresses (libipt's pt_conf_addr_filter:
 * the IA32_RTIT_ADDRn MSRs) for one case: on CPUs with erratum SKL014, a
 * direct jump or call out of a filter region gives TIP.PGD without its IP,
 * and only the filter says where tracing stopped. An object's range is
 * placed by its first executable mapping in the recording; one range per
 * filter is all libipt can hold, so a file mapped at different addresses in
 * several processes is placed where it was first mapped.
 */
#include "config.h"
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <intel-pt.h>
#include "pt_filter.h"

static const char *skip_space(const char *p)
{
	while (isspace((unsigned char)*p))
		p++;
	return p;
}

/* One entry [p, e): 0, or -1 with @why. */
static int parse_one(struct rb_pt_filter *f, const char *p, const char *e, char *why, size_t whylen)
{
	char text[400];
	snprintf(text, sizeof(text), "%.*s", (int)(e - p), p);
	memset(f, 0, sizeof(*f));
	size_t w = strcspn(p, " \t");
	if (w == 6 && !strncmp(p, "filter", 6)) {
		f->stop = 0;
	} else if ((w == 4 && !strncmp(p, "stop", 4)) || (w == 9 && !strncmp(p, "tracestop", 9))) {
		f->stop = 1;
	} else {
		snprintf(why, whylen, "'%s': Intel PT has only filter and stop ranges", text);
		return -1;
	}
	p = skip_space(p + w);
	char *end;
	f->addr = strtoull(p, &end, 0);
	if (end == p || (*end && !isspace((unsigned char)*end) && *end != '/' && *end != '@' && end != e)) {
		snprintf(why, whylen, "'%s': not an address (perf record resolves symbols before it records "
			 "the string)", text);
		return -1;
	}
	p = skip_space(end);
	if (p < e && *p == '/') {
		p = skip_space(p + 1);
		f->size = strtoull(p, &end, 0);
		if (end == p) {
			snprintf(why, whylen, "'%s': not a size after '/'", text);
			return -1;
		}
		p = skip_space(end);
	}
	if (p < e && *p == '@') {
		p = skip_space(p + 1);
		const char *fe = e;
		while (fe > p && isspace((unsigned char)fe[-1]))
			fe--;
		if (fe == p || (size_t)(fe - p) >= sizeof(f->file)) {
			snprintf(why, whylen, "'%s': no file name after '@', or one too long", text);
			return -1;
		}
		memcpy(f->file, p, (size_t)(fe - p));
		f->file[fe - p] = 0;
		p = e;
	}
	if (skip_space(p) < e) {
		snprintf(why, whylen, "'%s': unexpected text after the address", text);
		return -1;
	}
	if (!f->file[0]) {              /* a kernel range is where it says */
		f->a = f->addr;
		f->b = f->addr + (f->size ? f->size - 1 : 0);
		f->placed = 1;
	}
	return 0;
}

int rb_pt_filters_parse(struct rb_pt_filters *fs, const char *s, char *why, size_t whylen)
{
	memset(fs, 0, sizeof(*fs));
	for (const char *p = skip_space(s); *p; p = skip_space(p)) {
		const char *e = p + strcspn(p, ",");
		if (e > p) {
			if (fs->n == RB_PT_MAX_FILTERS) {
				snprintf(why, whylen, "more than %d address filters in '%s'", RB_PT_MAX_FILTERS, s);
				return -1;
			}
			if (parse_one(&fs->f[fs->n], p, e, why, whylen) < 0)
				return -1;
			fs->n++;
		}
		p = *e ? e + 1 : e;
	}
	return 0;
}

void rb_pt_filters_mmap(struct rb_pt_filters *fs, const char *file, uint64_t start, uint64_t len, uint64_t pgoff)
{
	for (int i = 0; i < fs->n; i++) {
		struct rb_pt_filter *f = &fs->f[i];
		if (f->placed || !f->file[0] || strcmp(f->file, file) || f->addr < pgoff || f->addr - pgoff >= len)
			continue;
		f->a = start + (f->addr - pgoff);
		f->b = f->a + (f->size ? f->size - 1 : 0);
		f->placed = 1;
	}
}

int rb_pt_filters_config(const struct rb_pt_filters *fs, struct pt_conf_addr_filter *c)
{
	int k = 0;
	for (int i = 0; i < fs->n; i++) {
		const struct rb_pt_filter *f = &fs->f[i];
		if (!f->placed)
			continue;
		uint32_t cfg = f->stop ? 2 : 1;   /* IA32_RTIT_CTL ADDRn_CFG: 1 FilterEn, 2 TraceStop */
		switch (k) {
		case 0: c->config.ctl.addr0_cfg = cfg; c->addr0_a = f->a; c->addr0_b = f->b; break;
		case 1: c->config.ctl.addr1_cfg = cfg; c->addr1_a = f->a; c->addr1_b = f->b; break;
		case 2: c->config.ctl.addr2_cfg = cfg; c->addr2_a = f->a; c->addr2_b = f->b; break;
		default: c->config.ctl.addr3_cfg = cfg; c->addr3_a = f->a; c->addr3_b = f->b; break;
		}
		k++;
	}
	return k;
}

void rb_pt_filter_str(const struct rb_pt_filter *f, char *buf, size_t n)
{
	int len = snprintf(buf, n, "%s %#" PRIx64, f->stop ? "stop" : "filter", f->addr);
	if (len >= 0 && (size_t)len < n && f->size)
		len += snprintf(buf + len, n - (size_t)len, "/%#" PRIx64, f->size);
	if (len >= 0 && (size_t)len < n && f->file[0])
		snprintf(buf + len, n - (size_t)len, "@%s", f->file);
}
