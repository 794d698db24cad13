/*
 * pt_filter.h - Intel PT address filters (perf record --filter) as the
 * decoder needs them: see pt_filter.c.
 */
#ifndef RB_PT_FILTER_H
#define RB_PT_FILTER_H

#include <stddef.h>
#include <stdint.h>

struct pt_conf_addr_filter;

#define RB_PT_MAX_FILTERS 4          /* IA32_RTIT_ADDR0..3 */

struct rb_pt_filter {
	int stop;                        /* a TraceStop range (else a filter range) */
	uint64_t addr, size;             /* as recorded: a kernel address, or an offset in file */
	char file[256];                  /* the object ("": kernel) */
	uint64_t a, b;                   /* the range placed in memory, both ends inclusive */
	int placed;
};

struct rb_pt_filters {
	struct rb_pt_filter f[RB_PT_MAX_FILTERS];
	int n;
};

/* Parse @s; 0, or -1 with @why (the entry and what is wrong with it). */
int rb_pt_filters_parse(struct rb_pt_filters *fs, const char *s, char *why, size_t whylen);
/* A mapping of @file (MMAP / MMAP2): the filters in that file not placed yet are placed by it. */
void rb_pt_filters_mmap(struct rb_pt_filters *fs, const char *file, uint64_t start, uint64_t len, uint64_t pgoff);
/* libipt's configuration of the placed filters; returns how many there are. */
int rb_pt_filters_config(const struct rb_pt_filters *fs, struct pt_conf_addr_filter *c);
/* One filter as text ("filter 0x10f0/0x7d@/bin/prog"). */
void rb_pt_filter_str(const struct rb_pt_filter *f, char *buf, size_t n);

#endif
