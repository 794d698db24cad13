/*
 * pmuinfo.h - rbrecord --pmu-info: the CPU's architectural performance
 * monitoring (x86 CPUID leaf 0x0A) and the PMUs the kernel exposes in sysfs.
 */
#ifndef REC_PMUINFO_H
#define REC_PMUINFO_H

#include <stdio.h>

/* Print the report as text or JSON to @f. 0 or -1. */
int pmu_info_print(FILE *f, int json);

#endif
