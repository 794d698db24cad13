/*
 * events.c - the -e grammar, as perf record accepts it: a comma-separated
 * list of events and {groups}, each event one of
 *   a software / hardware / hardware-cache name   cpu-clock, cycles, L1-dcache-load-misses
 *   an Intel architectural event name (x86)       unhalted_core_cycles, llc_misses
 *   a tracepoint                                  sched:sched_switch (id read from tracefs)
 *   a raw event                                   r01c4
 *   a PMU with terms                              software/config=0/, cpu/event=0x3c,umask=0x1,inv/
 * followed by modifiers :u :k :h :p... (a group takes them after the brace).
 * PMU terms resolve through /sys/bus/event_source/devices/<pmu>/format/<term>
 * ("config:0-7,21": the value's bits are scattered, lowest first, into the
 * listed bit positions) and events/<alias> (a term list of its own).
 *
 * Workload: a handful of events parsed once at start-up. Library code:
 * errors come back as sentences naming the event, nothing is printed.
 */
#include "config.h"
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "events.h"

/*
 * Where PMUs are described. RBRECORD_SYSFS_PMUS replaces it so that the tests
 * can check term resolution against PMUs this machine lacks (the cpu PMU's
 * IA32_PERFEVTSELx formats, split bit ranges); --dry-run then shows the attr.
 */
const char *events__pmu_root(void)
{
	const char *d = getenv("RBRECORD_SYSFS_PMUS");
	return d && *d ? d : "/sys/bus/event_source/devices";
}

struct named { const char *name; uint32_t type; uint64_t config; };

static const struct named named_events[] = {
	{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "idle-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "idle-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS },
	{ "dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY },
	{ "bpf-output", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT },
	{ "cgroup-switches", PERF_TYPE_SOFTWARE, 11 /* PERF_COUNT_SW_CGROUP_SWITCHES, 5.13+ */ },
};

/* CPUID.0AH:EBX bit order (SDM vol. 3B, "Architectural performance monitoring"). */
const struct arch_event arch_events[] = {
	{ "unhalted_core_cycles", 0x3c, 0x00 },
	{ "instructions_retired", 0xc0, 0x00 },
	{ "unhalted_reference_cycles", 0x3c, 0x01 },
	{ "llc_references", 0x2e, 0x4f },
	{ "llc_misses", 0x2e, 0x41 },
	{ "branch_instructions_retired", 0xc4, 0x00 },
	{ "branch_misses_retired", 0xc5, 0x00 },
	{ "topdown_slots", 0xa4, 0x01 },
};
const size_t nr_arch_events = sizeof(arch_events) / sizeof(arch_events[0]);

/* perf's hw-cache names: <cache>-<op>-<result>, op and result optional in the usual forms. */
static const char *const cache_names[] = { "L1-dcache", "L1-icache", "LLC", "dTLB", "iTLB", "branch", "node" };
static const char *const cache_ops[][2] = { { "load", "loads" }, { "store", "stores" }, { "prefetch", "prefetches" } };

static int hw_cache_lookup(const char *name, uint64_t *config)
{
	for (unsigned c = 0; c < sizeof(cache_names) / sizeof(cache_names[0]); c++) {
		size_t cl = strlen(cache_names[c]);
		if (strncmp(name, cache_names[c], cl) || name[cl] != '-')
			continue;
		const char *rest = name + cl + 1;
		for (unsigned op = 0; op < 3; op++)
			for (unsigned form = 0; form < 2; form++) {
				size_t ol = strlen(cache_ops[op][form]);
				if (strncmp(rest, cache_ops[op][form], ol))
					continue;
				unsigned result;
				if (!rest[ol])
					result = PERF_COUNT_HW_CACHE_RESULT_ACCESS;
				else if (!strcmp(rest + ol, "-misses") || !strcmp(rest + ol, "-miss"))
					result = PERF_COUNT_HW_CACHE_RESULT_MISS;
				else
					continue;
				*config = c | (op << 8) | (result << 16);
				return 0;
			}
		if (!strcmp(rest, "misses")) {   /* "LLC-misses": loads that missed */
			*config = c | (PERF_COUNT_HW_CACHE_OP_READ << 8) | (PERF_COUNT_HW_CACHE_RESULT_MISS << 16);
			return 0;
		}
	}
	return -1;
}

/* Scatter @value into the bit positions of @format ("config1:0-7,21"). */
int events__apply_format(struct perf_event_attr *attr, const char *format, uint64_t value)
{
	__u64 *word;
	const char *p;

	if (!strncmp(format, "config3:", 8))
		return -1;   /* needs ABI VER8 on the writer side: not offered */
	if (!strncmp(format, "config2:", 8))
		word = &attr->config2, p = format + 8;
	else if (!strncmp(format, "config1:", 8))
		word = &attr->config1, p = format + 8;
	else if (!strncmp(format, "config:", 7))
		word = &attr->config, p = format + 7;
	else
		return -1;
	unsigned vbit = 0;
	while (*p) {
		char *end;
		unsigned long lo = strtoul(p, &end, 10), hi = lo;
		if (end == p || lo > 63)
			return -1;
		p = end;
		if (*p == '-') {
			hi = strtoul(p + 1, &end, 10);
			if (end == p + 1 || hi > 63 || hi < lo)
				return -1;
			p = end;
		}
		for (unsigned long b = lo; b <= hi; b++, vbit++) {
			uint64_t m = 1ULL << b;
			*word &= ~m;
			if (vbit < 64 && (value >> vbit) & 1)
				*word |= m;
		}
		if (*p == ',')
			p++;
		else if (*p && !isspace((unsigned char)*p))
			return -1;
		else
			break;
	}
	return 0;
}

/*
 * The IA32_PERFEVTSELx layout (SDM vol. 3B), used for the cpu PMU's terms
 * when its sysfs format directory lacks one (and on every x86 kernel it
 * names the same bits).
 */
static const char *perfevtsel_format(const char *term)
{
	static const struct { const char *term, *fmt; } t[] = {
		{ "event", "config:0-7" }, { "umask", "config:8-15" }, { "edge", "config:18" },
		{ "pc", "config:19" }, { "any", "config:21" }, { "inv", "config:23" },
		{ "cmask", "config:24-31" },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(term, t[i].term))
			return t[i].fmt;
	return NULL;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || end == s || *end ? -1 : 0;
}

static int apply_terms(struct ev_spec *ev, const char *pmu, const char *terms, int depth, struct rec_err *e);

/* One term of pmu/.../: generic (config=, period=, name=), format, or alias. */
static int apply_term(struct ev_spec *ev, const char *pmu, const char *term, int depth, struct rec_err *e)
{
	char key[128], path[512], fmt[256];
	const char *eq = strchr(term, '=');
	uint64_t v = 1;
	size_t kl = eq ? (size_t)(eq - term) : strlen(term);

	if (kl == 0 || kl >= sizeof(key))
		return rec_fail(e, EINVAL, "event %s: empty or overlong term '%s' for PMU %s", ev->name, term, pmu);
	memcpy(key, term, kl);
	key[kl] = 0;
	if (key[0] == '@' && !eq) {   /* CoreSight sink: cs_etm/@tmc_etr0/ sets sinkid from sinks/<name> */
		char id[64], sf[256];
		snprintf(path, sizeof(path), "%s/%s/sinks/%s", events__pmu_root(), pmu, key + 1);
		if (read_text(path, id, sizeof(id)) < 0 || parse_u64(id, &v) < 0)
			return rec_fail(e, ENOENT, "event %s: PMU %s has no sink %s (%s is missing or not a number)",
					ev->name, pmu, key + 1, path);
		snprintf(path, sizeof(path), "%s/%s/format/sinkid", events__pmu_root(), pmu);
		if (read_text(path, sf, sizeof(sf)) < 0 || events__apply_format(&ev->attr, sf, v) < 0)
			return rec_fail(e, EINVAL, "event %s: sink %s needs the sinkid term, and %s is missing or not "
					"understood", ev->name, key + 1, path);
		return 0;
	}
	if (eq && !strcmp(key, "name")) {
		free(ev->name);
		ev->name = strdup(eq + 1);
		return ev->name ? 0 : rec_fail(e, ENOMEM, "out of memory");
	}
	if (eq && parse_u64(eq + 1, &v) < 0)
		return rec_fail(e, EINVAL, "event %s: term %s: '%s' is not a number", ev->name, key, eq + 1);
	if (!strcmp(key, "config")) { ev->attr.config = v; return 0; }
	if (!strcmp(key, "config1")) { ev->attr.config1 = v; return 0; }
	if (!strcmp(key, "config2")) { ev->attr.config2 = v; return 0; }
	if (!strcmp(key, "period")) { ev->attr.sample_period = v; ev->attr.freq = 0; ev->has_period = 1; return 0; }
	if (!strcmp(key, "freq")) { ev->attr.sample_freq = v; ev->attr.freq = 1; ev->has_period = 1; return 0; }

	snprintf(path, sizeof(path), "%s/%s/format/%s", events__pmu_root(), pmu, key);
	if (read_text(path, fmt, sizeof(fmt)) == 0) {
		if (events__apply_format(&ev->attr, fmt, v) < 0)
			return rec_fail(e, EINVAL, "event %s: format of term %s ('%s' in %s) is not understood",
					ev->name, key, fmt, path);
		return 0;
	}
	if (!strcmp(pmu, "cpu") && perfevtsel_format(key)) {
		events__apply_format(&ev->attr, perfevtsel_format(key), v);
		return 0;
	}
	snprintf(path, sizeof(path), "%s/%s/events/%s", events__pmu_root(), pmu, key);
	char alias[1024];
	if (!eq && depth == 0 && read_text(path, alias, sizeof(alias)) == 0)
		return apply_terms(ev, pmu, alias, depth + 1, e);
	return rec_fail(e, EINVAL, "event %s: PMU %s has no term or event named '%s' (looked in %s/%s/format and events)",
			ev->name, pmu, key, events__pmu_root(), pmu);
}

static int apply_terms(struct ev_spec *ev, const char *pmu, const char *terms, int depth, struct rec_err *e)
{
	char *copy = strdup(terms), *save = NULL;
	int rc = 0;

	if (!copy)
		return rec_fail(e, ENOMEM, "out of memory");
	for (char *t = strtok_r(copy, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*t))
			t++;
		if (*t)
			rc = apply_term(ev, pmu, t, depth, e);
	}
	free(copy);
	return rc;
}

/* perf's intel_pt_pick_bit: the set bit nearest @target, the lower one on a tie. */
static int pick_bit(unsigned long bits, int target)
{
	int pick = -1;

	for (int pos = 0; bits; bits >>= 1, pos++) {
		if (!(bits & 1))
			continue;
		if (pos <= target || pick < 0)
			pick = pos;
		if (pos >= target)
			break;
	}
	return pick;
}

/* A PMU's sysfs file as a number (@base 10 or 16); @def when absent. */
static unsigned long pmu_file(const char *pmu, const char *file, int base, unsigned long def)
{
	char path[512], buf[64];

	snprintf(path, sizeof(path), "%s/%s/%s", events__pmu_root(), pmu, file);
	return read_text(path, buf, sizeof(buf)) < 0 ? def : strtoul(buf, NULL, base);
}

/*
 * perf's default terms for intel_pt, applied before the user's (which
 * override them): tsc, mtc with the period nearest 3 that caps/mtc_periods
 * offers, psb_period likewise, pt and branch where the format has them.
 */
static int intel_pt_defaults(struct ev_spec *ev, const char *pmu, struct rec_err *e)
{
	char buf[256], path[512], c[8];
	size_t pos = (size_t)snprintf(buf, sizeof(buf), "tsc");
	unsigned long mtc_periods = 0, psb_periods;

	if (pmu_file(pmu, "caps/mtc", 10, 1)) {
		mtc_periods = pmu_file(pmu, "caps/mtc_periods", 16, 0);
		if (mtc_periods)
			pos += (size_t)snprintf(buf + pos, sizeof(buf) - pos, ",mtc,mtc_period=%d", pick_bit(mtc_periods, 3));
	}
	if (pmu_file(pmu, "caps/psb_cyc", 10, 1) && mtc_periods &&
	    (psb_periods = pmu_file(pmu, "caps/psb_periods", 16, 0)))
		pos += (size_t)snprintf(buf + pos, sizeof(buf) - pos, ",psb_period=%d", pick_bit(psb_periods, 3));
	snprintf(path, sizeof(path), "%s/%s/format/pt", events__pmu_root(), pmu);
	if (read_text(path, c, sizeof(c)) == 0) {
		snprintf(path, sizeof(path), "%s/%s/format/branch", events__pmu_root(), pmu);
		if (read_text(path, c, sizeof(c)) == 0)
			snprintf(buf + pos, sizeof(buf) - pos, ",pt,branch");
	}
	return apply_terms(ev, pmu, buf, 1, e);
}

/* pmu/terms/ */
static int parse_pmu_event(struct ev_spec *ev, const char *s, size_t len, struct rec_err *e)
{
	char pmu[128], path[512], buf[64], terms[1024];
	const char *slash = memchr(s, '/', len);
	size_t pl = (size_t)(slash - s), tl = len - pl - 2;

	if (pl == 0 || pl >= sizeof(pmu) || len < pl + 2 || s[len - 1] != '/' || tl >= sizeof(terms))
		return rec_fail(e, EINVAL, "event %s: expected pmu/term=value,.../", ev->name);
	memcpy(pmu, s, pl);
	pmu[pl] = 0;
	memcpy(terms, slash + 1, tl);
	terms[tl] = 0;
	snprintf(path, sizeof(path), "%s/%s/type", events__pmu_root(), pmu);
	if (read_text(path, buf, sizeof(buf)) < 0)
		return rec_fail(e, ENOENT, "event %s: no PMU named %s (%s is missing)", ev->name, pmu, path);
	ev->attr.type = (uint32_t)strtoul(buf, NULL, 10);
	if (!strcmp(pmu, "intel_pt") && intel_pt_defaults(ev, pmu, e) < 0)
		return -1;
	return apply_terms(ev, pmu, terms, 0, e);
}

/* subsys:name -> tracepoint id from tracefs; 1 if it is one, 0 if not, -1 on error. */
static int parse_tracepoint(struct ev_spec *ev, const char *sys, const char *name, struct rec_err *e)
{
	const char *tfs = tracefs_dir();
	char path[512], buf[64];

	if (!tfs)
		return 0;
	snprintf(path, sizeof(path), "%s/events/%s/%s/id", tfs, sys, name);
	int rc = read_text(path, buf, sizeof(buf));
	if (rc == -ENOENT)
		return 0;
	if (rc < 0)
		return rec_fail(e, -rc, "tracepoint %s:%s: cannot read %s: %s", sys, name, path, strerror(-rc));
	ev->attr.type = PERF_TYPE_TRACEPOINT;
	ev->attr.config = strtoull(buf, NULL, 10);
	ev->is_tracepoint = 1;
	return 1;
}

static int is_modifier_string(const char *m)
{
	if (!*m)
		return 0;
	for (; *m; m++)
		if (!strchr("ukhpPGHS", *m))
			return 0;
	return 1;
}

/* Modifiers :u :k :h :p (perf: naming any of u/k/h excludes the others). */
static int apply_modifiers(struct ev_spec *ev, const char *m, struct rec_err *e)
{
	int u = 0, k = 0, h = 0, p = 0;

	for (; *m; m++) {
		switch (*m) {
		case 'u': u = 1; break;
		case 'k': k = 1; break;
		case 'h': h = 1; break;
		case 'p': p++; break;
		case 'P': p = 3; break;
		case 'G': ev->attr.exclude_host = 1; ev->attr.exclude_guest = 0; break;
		case 'H': ev->attr.exclude_guest = 1; break;
		case 'S': break;
		default:
			return rec_fail(e, EINVAL, "event %s: unknown modifier '%c'", ev->name, *m);
		}
	}
	if (p > 3)
		return rec_fail(e, EINVAL, "event %s: at most three p modifiers (precise_ip 0-3)", ev->name);
	if (u || k || h) {
		ev->attr.exclude_user = !u;
		ev->attr.exclude_kernel = !k;
		ev->attr.exclude_hv = !h;
		ev->mod_excl = 1;
	}
	if (p)
		ev->attr.precise_ip = (unsigned)p & 3;
	return 0;
}

static int lookup_name(struct ev_spec *ev, const char *name)
{
	uint64_t config;

	for (size_t i = 0; i < sizeof(named_events) / sizeof(named_events[0]); i++)
		if (!strcmp(name, named_events[i].name)) {
			ev->attr.type = named_events[i].type;
			ev->attr.config = named_events[i].config;
			return 1;
		}
	if (hw_cache_lookup(name, &config) == 0) {
		ev->attr.type = PERF_TYPE_HW_CACHE;
		ev->attr.config = config;
		return 1;
	}
#if defined(__x86_64__) || defined(__i386__)
	for (size_t i = 0; i < nr_arch_events; i++)
		if (!strcmp(name, arch_events[i].name)) {
			/* IA32_PERFEVTSELx: event select 0-7, unit mask 8-15; the kernel sets usr/os/int/en */
			ev->attr.type = PERF_TYPE_RAW;
			ev->attr.config = arch_events[i].event | (uint64_t)arch_events[i].umask << 8;
			return 1;
		}
#endif
	if (name[0] == 'r' && name[1] && strspn(name + 1, "0123456789abcdefABCDEF") == strlen(name + 1)) {
		ev->attr.type = PERF_TYPE_RAW;
		ev->attr.config = strtoull(name + 1, NULL, 16);
		return 1;
	}
	return 0;
}

/* One event (no braces, no top-level commas) of @len bytes at @s. */
static int parse_one(struct ev_spec *ev, const char *s, size_t len, struct rec_err *e)
{
	char *str = strndup(s, len);
	int rc = -1;

	if (!str)
		return rec_fail(e, ENOMEM, "out of memory");
	ev->name = strdup(str);
	if (!ev->name) {
		rec_fail(e, ENOMEM, "out of memory");
		goto err_out;
	}
	ev->attr.size = sizeof(ev->attr);
	ev->attr.exclude_guest = 1;   /* perf's default: the host only (its names carry no :HG then) */
	char *last_slash = strrchr(str, '/');
	if (last_slash) {   /* pmu/terms/[:mods] */
		char *mods = strchr(last_slash, ':');
		if (mods)
			*mods++ = 0;
		else if (last_slash[1] && last_slash != strchr(str, '/') && is_modifier_string(last_slash + 1))
			mods = last_slash + 1;   /* perf's pmu/terms/u form */
		if (mods == last_slash + 1) {
			mods = strdup(mods);
			last_slash[1] = 0;
			if (!mods) {
				rec_fail(e, ENOMEM, "out of memory");
				goto err_out;
			}
			if (parse_pmu_event(ev, str, strlen(str), e) == 0)
				rc = apply_modifiers(ev, mods, e);
			free(mods);
			goto err_out;
		}
		if (parse_pmu_event(ev, str, strlen(str), e) < 0)
			goto err_out;
		rc = mods ? apply_modifiers(ev, mods, e) : 0;
		goto err_out;   /* done either way */
	}
	char *c1 = strchr(str, ':');
	if (c1) {
		char *c2 = strchr(c1 + 1, ':');
		*c1 = 0;
		if (c2)
			*c2 = 0;
		int tp = parse_tracepoint(ev, str, c1 + 1, e);
		if (tp < 0)
			goto err_out;
		if (tp) {
			rc = c2 ? apply_modifiers(ev, c2 + 1, e) : 0;
			goto err_out;
		}
		if (c2 || !is_modifier_string(c1 + 1)) {
			rec_fail(e, ENOENT, "event %s: neither a tracepoint %s:%s in %s/events nor an event with "
				 "modifiers (u k h p P G H)", ev->name, str, c1 + 1,
				 tracefs_dir() ? tracefs_dir() : "tracefs (not mounted)");
			goto err_out;
		}
	}
	if (!lookup_name(ev, str)) {
		rec_fail(e, ENOENT, "event %s: unknown event name '%s'", ev->name, str);
		goto err_out;
	}
	rc = c1 ? apply_modifiers(ev, c1 + 1, e) : 0;
err_out:
	free(str);
	return rc;
}

static struct ev_spec *grow(struct ev_list *l, struct rec_err *e)
{
	struct ev_spec *v = realloc(l->v, (l->n + 1) * sizeof(*v));

	if (!v) {
		rec_fail(e, ENOMEM, "out of memory");
		return NULL;
	}
	l->v = v;
	memset(&v[l->n], 0, sizeof(v[0]));
	v[l->n].leader = (int)l->n;
	v[l->n].nr_members = 1;
	return &v[l->n++];
}

/* Length of the next top-level item: commas inside pmu/.../ and {...} do not split. */
static size_t item_len(const char *s)
{
	int depth = 0, in_slash = 0;
	size_t i;

	for (i = 0; s[i]; i++) {
		if (s[i] == '{')
			depth++;
		else if (s[i] == '}')
			depth--;
		else if (s[i] == '/')
			in_slash = !in_slash;
		else if (s[i] == ',' && !depth && !in_slash)
			break;
	}
	return i;
}

static int parse_group(struct ev_list *l, const char *s, size_t len, struct rec_err *e)
{
	const char *close = memchr(s, '}', len);

	if (!close)
		return rec_fail(e, EINVAL, "group %.*s: missing '}'", (int)len, s);
	size_t first = l->n;
	const char *p = s + 1, *end = close;
	char mods[32] = "";
	if (close + 1 < s + len) {
		size_t ml = (size_t)(s + len - close - 1);
		if (close[1] != ':' || ml - 1 >= sizeof(mods))
			return rec_fail(e, EINVAL, "group %.*s: expected :modifiers after '}'", (int)len, s);
		memcpy(mods, close + 2, ml - 1);
		mods[ml - 1] = 0;
	}
	while (p < end) {
		char buf[1024];
		size_t n = item_len(p);
		if (p + n > end)
			n = (size_t)(end - p);
		if (n == 0 || n >= sizeof(buf))
			return rec_fail(e, EINVAL, "group %.*s: empty or overlong member", (int)len, s);
		struct ev_spec *ev = grow(l, e);
		if (!ev || parse_one(ev, p, n, e) < 0 || (mods[0] && apply_modifiers(ev, mods, e) < 0))
			return -1;
		ev->leader = (int)first;
		ev->nr_members = 0;
		p += n;
		if (p < end && *p == ',')
			p++;
	}
	if (l->n == first)
		return rec_fail(e, EINVAL, "group %.*s is empty", (int)len, s);
	l->v[first].nr_members = (int)(l->n - first);
	if (l->n - first > 1)
		l->nr_groups++;
	return 0;
}

int events__parse(struct ev_list *l, const char *str, struct rec_err *e)
{
	const char *p = str;

	while (*p) {
		size_t n = item_len(p);
		if (n == 0)
			return rec_fail(e, EINVAL, "event list '%s': empty event", str);
		if (*p == '{') {
			if (parse_group(l, p, n, e) < 0)
				return -1;
		} else {
			struct ev_spec *ev = grow(l, e);
			if (!ev || parse_one(ev, p, n, e) < 0)
				return -1;
		}
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

void events__free(struct ev_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].filter);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}
