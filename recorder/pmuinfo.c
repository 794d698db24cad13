/*
 * pmuinfo.c - what this machine can count and trace, for rbrecord
 * --pmu-info: on x86, CPUID leaf 0x0A (Intel architectural performance
 * monitoring: version, general-purpose counters per logical processor and
 * their width, the architectural events the EBX bit vector marks available,
 * fixed counters); on every architecture, the PMUs in
 * /sys/bus/event_source/devices with their type numbers and whether they
 * offer an AUX area. JSON is written by hand (the recorder links no JSON
 * library). This is CLI code: it prints.
 *
 * Workload: run once, by a person deciding which events to ask for.
 */
#include "config.h"
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include "events.h"
#include "pmuinfo.h"
#include "util.h"

struct archpm {
	int present;                 /* leaf 0x0A exists and reports version >= 1 */
	char vendor[13];
	unsigned version, gp_counters, gp_width, ebx_len, ebx, fixed, fixed_width, fixed_mask;
};

static void read_archpm(struct archpm *p)
{
	memset(p, 0, sizeof(*p));
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d, max;

	if (!__get_cpuid(0, &max, &b, &c, &d))
		return;
	memcpy(p->vendor, &b, 4);
	memcpy(p->vendor + 4, &d, 4);
	memcpy(p->vendor + 8, &c, 4);
	if (max < 0x0a)
		return;
	__cpuid_count(0x0a, 0, a, b, c, d);
	p->version = a & 0xff;
	if (!p->version)
		return;
	p->present = 1;
	p->gp_counters = (a >> 8) & 0xff;
	p->gp_width = (a >> 16) & 0xff;
	p->ebx_len = (a >> 24) & 0xff;
	p->ebx = b;                  /* a set bit means the event is NOT available */
	if (p->version > 1) {
		p->fixed = d & 0x1f;
		p->fixed_width = (d >> 5) & 0xff;
	}
	p->fixed_mask = p->version >= 5 ? c : (p->fixed ? (1u << p->fixed) - 1 : 0);
#endif
}

static int event_available(const struct archpm *p, size_t i)
{
	return i < p->ebx_len && !((p->ebx >> i) & 1);
}

struct pmu { char name[256]; int type; int aux; };

/*
 * AUX support is not a sysfs attribute. PMUs that can filter trace by
 * address (nr_addr_filters) are the AUX ones in practice; the known trace
 * PMUs are named too.
 */
static int pmu_has_aux(const char *name)
{
	static const char *const known[] = { "intel_pt", "intel_bts", "cs_etm", "arm_spe", "hisi_ptt" };
	char path[512];

	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/nr_addr_filters", name);
	if (access(path, F_OK) == 0)
		return 1;
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strncmp(name, known[i], strlen(known[i])))
			return 1;
	return 0;
}

static int cmp_pmu(const void *a, const void *b)
{
	return ((const struct pmu *)a)->type - ((const struct pmu *)b)->type;
}

static int list_pmus(struct pmu **out)
{
	DIR *d = opendir("/sys/bus/event_source/devices");
	struct dirent *de;
	struct pmu *v = NULL;
	int n = 0;

	*out = NULL;
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char path[512], buf[32];
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", de->d_name);
		if (read_text(path, buf, sizeof(buf)) < 0)
			continue;
		struct pmu *nv = realloc(v, (size_t)(n + 1) * sizeof(*v));
		if (!nv)
			break;
		v = nv;
		snprintf(v[n].name, sizeof(v[n].name), "%s", de->d_name);
		v[n].type = atoi(buf);
		v[n].aux = pmu_has_aux(de->d_name);
		n++;
	}
	closedir(d);
	if (n)
		qsort(v, (size_t)n, sizeof(*v), cmp_pmu);
	*out = v;
	return n;
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void print_text(FILE *f, const struct archpm *p, const struct pmu *pmus, int n)
{
#if defined(__x86_64__) || defined(__i386__)
	if (!p->present) {
		fprintf(f, "architectural perfmon: not available (CPUID leaf 0x0A reports no Intel architectural "
			"performance monitoring on this %s CPU)\n", p->vendor[0] ? p->vendor : "x86");
	} else {
		fprintf(f, "architectural perfmon: version %u (%s)\n", p->version, p->vendor);
		fprintf(f, "general-purpose counters: %u per logical processor, %u bits wide\n",
			p->gp_counters, p->gp_width);
		fprintf(f, "fixed counters: %u, %u bits wide (mask %#x)\n", p->fixed, p->fixed_width, p->fixed_mask);
		fprintf(f, "architectural events (EBX vector of %u bits):\n", p->ebx_len);
		for (size_t i = 0; i < nr_arch_events; i++)
			fprintf(f, "  %-28s event %#04x umask %#04x  %s\n", arch_events[i].name, arch_events[i].event,
				arch_events[i].umask, event_available(p, i) ? "available" : "not available");
	}
#else
	fprintf(f, "architectural perfmon: not available (not an x86 CPU: no Intel architectural perfmon)\n");
#endif
	fprintf(f, "PMUs:\n");
	for (int i = 0; i < n; i++)
		fprintf(f, "  %-24s type %-4d aux %s\n", pmus[i].name, pmus[i].type, pmus[i].aux ? "yes" : "no");
}

static void print_json(FILE *f, const struct archpm *p, const struct pmu *pmus, int n)
{
	fprintf(f, "{\"arch_perfmon\":");
	if (!p->present) {
		fprintf(f, "null,\"vendor\":");
		json_str(f, p->vendor);
	} else {
		fprintf(f, "{\"version\":%u,\"gp_counters\":%u,\"gp_width\":%u,\"fixed_counters\":%u,"
			"\"fixed_width\":%u,\"fixed_mask\":%u,\"ebx_length\":%u,\"events\":[",
			p->version, p->gp_counters, p->gp_width, p->fixed, p->fixed_width, p->fixed_mask, p->ebx_len);
		for (size_t i = 0; i < nr_arch_events; i++) {
			fprintf(f, "%s{\"name\":", i ? "," : "");
			json_str(f, arch_events[i].name);
			fprintf(f, ",\"event\":%u,\"umask\":%u,\"available\":%s}", arch_events[i].event,
				arch_events[i].umask, event_available(p, i) ? "true" : "false");
		}
		fprintf(f, "]},\"vendor\":");
		json_str(f, p->vendor);
	}
	fprintf(f, ",\"pmus\":[");
	for (int i = 0; i < n; i++) {
		fprintf(f, "%s{\"name\":", i ? "," : "");
		json_str(f, pmus[i].name);
		fprintf(f, ",\"type\":%d,\"aux\":%s}", pmus[i].type, pmus[i].aux ? "true" : "false");
	}
	fprintf(f, "]}\n");
}

int pmu_info_print(FILE *f, int json)
{
	struct archpm p;
	struct pmu *pmus;
	int n = list_pmus(&pmus);

	read_archpm(&p);
	if (json)
		print_json(f, &p, pmus, n);
	else
		print_text(f, &p, pmus, n);
	free(pmus);
	return ferror(f) ? -1 : 0;
}
