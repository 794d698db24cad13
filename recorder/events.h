/*
 * events.h - turning -e strings into perf_event_attr: software, generic
 * hardware and hardware-cache names, Intel architectural event names,
 * tracepoints (subsys:name, id from tracefs), raw rNNNN, pmu/term=v,.../
 * resolved through sysfs format/ and events/ files, modifiers (:u :k :h :p),
 * and groups {a,b}:mod.
 */
#ifndef REC_EVENTS_H
#define REC_EVENTS_H

#include <linux/perf_event.h>
#include "util.h"

struct ev_spec {
	struct perf_event_attr attr;  /* type/config/exclude_* and precise_ip; the session adds the rest */
	char *name;                   /* as written on the command line (perf's evsel name) */
	int leader;                   /* index of the group leader; == own index for a leader or a lone event */
	int nr_members;               /* leaders: events in the group, self included; members: 0 */
	int is_tracepoint;            /* sample RAW, period 1 */
	int has_period;               /* a period= or freq= term was given */
	int mod_excl;                 /* :u / :k / :h was given (no EACCES fallback) */
	char *filter;                 /* --filter after this event: address filter or tracepoint filter */
};

struct ev_list {
	struct ev_spec *v;
	size_t n;
	int nr_groups;                /* groups of two or more events */
};

/* Parse one -e argument (comma-separated events and groups) and append. 0 or -1 with @e set. */
int events__parse(struct ev_list *l, const char *str, struct rec_err *e);
void events__free(struct ev_list *l);

/* Where PMUs are described: /sys/bus/event_source/devices, or $RBRECORD_SYSFS_PMUS (tests). */
const char *events__pmu_root(void);

/* Bits of a PMU format spec such as "config:0-7,21" scattered from @value into @attr. 0 or -1. */
int events__apply_format(struct perf_event_attr *attr, const char *format, uint64_t value);

/* Intel architectural events (CPUID.0AH:EBX bit order): name, event select, unit mask. */
struct arch_event { const char *name; uint8_t event, umask; };
extern const struct arch_event arch_events[];
extern const size_t nr_arch_events;

#endif
