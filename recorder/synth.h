/*
 * synth.h - records perf synthesizes from /proc and from the session, and
 * the header features: what a reader needs to make sense of the samples
 * that the kernel's own records do not say.
 */
#ifndef REC_SYNTH_H
#define REC_SYNTH_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>
#include "pd.h"
#include "util.h"

/* Where synthesized records go: one native record (header.size bytes). 0 or < 0 to stop. */
typedef int (*synth_write_fn)(void *ctx, const void *rec);

struct synth {
	synth_write_fn write;
	void *ctx;
	size_t trailer;          /* bytes of (zeroed) sample_id trailer every record carries */
	int namespaces;          /* --namespaces: a NAMESPACES record per thread, after its FORK */
};

struct id_index_entry { uint64_t id, idx, cpu, tid; };

int synth__kernel_mmap(const struct synth *s);
int synth__modules(const struct synth *s);
/* FORK and COMM for every thread of process @pid, MMAP2 for its executable maps. */
int synth__process(const struct synth *s, int pid);
int synth__workload(const struct synth *s, int pid);
/* synth__process for every process in /proc. */
int synth__all_processes(const struct synth *s);
/* --all-cgroups: a CGROUP record (id, path) per cgroup under the perf_event hierarchy at @mnt. */
int synth__cgroups(const struct synth *s, const char *mnt);
int synth__thread_map(const struct synth *s, const int *tids, size_t n);
int synth__cpu_map(const struct synth *s, const int *cpus, size_t n);
int synth__id_index(const struct synth *s, const struct id_index_entry *v, size_t n);
/* The control page's time conversion, read under its seqcount. */
struct time_conv { uint64_t shift, mult, zero, cycles, mask; int cap_zero, cap_short; };
void synth__read_time(const struct perf_event_mmap_page *pc, struct time_conv *t);
/* TIME_CONV from a ring's control page; 0 without writing if the kernel offers no cap_user_time_zero. */
int synth__time_conv(const struct synth *s, const struct perf_event_mmap_page *pc);
int synth__finished(const struct synth *s, uint32_t type);   /* FINISHED_ROUND / FINISHED_INIT */

/* ---- features (feature.c) ---- */
struct feat_group { const char *name; uint32_t leader_idx, nr_members; };

/* HOSTNAME .. PMU_MAPPINGS, GROUP_DESC, CLOCKID / CLOCK_DATA (@clockid < 0: none). */
int features__static(struct pd_writer *w, int argc, char **argv, const struct feat_group *groups,
		     size_t nr_groups, int clockid, struct rec_err *e);
/* BUILD_ID of the kernel and of each file in @paths that has an ELF build-id note. */
int features__build_ids(struct pd_writer *w, char *const *paths, size_t n, struct rec_err *e);
int features__sample_time(struct pd_writer *w, uint64_t first, uint64_t last, struct rec_err *e);
/* Build id of the ELF file @path (up to 20 bytes). Length, or <= 0 if none. */
int elf_build_id(const char *path, uint8_t id[20]);
/* The running kernel's build-id (length, or <= 0). */
int kernel_build_id(uint8_t id[20]);
/*
 * The vDSO the kernel maps into every native process, as mapped into this
 * one (the same code): its build id (0 if none), and its bytes (NULL if not
 * found), which perf keeps as [vdso]/ID/vdso.
 */
int vdso_build_id(uint8_t id[20]);
const void *vdso_image(size_t *len);

#endif
