/*
 * sources.c - the registry of trace sources (source.h): one line per kind.
 * The session opens the kinds marked -1 at its start and the others at
 * their AUXTRACE_INFO record, and drives and finishes them in this order.
 */
#include "config.h"
#include "decoder/source.h"

const struct rb_source_kind rb_source_kinds[] = {
	{ "intel_pt", -1, rb_pt_source_open },     /* gathers its queues in a pass of its own */
	{ "imc", -1, rb_imc_source_open },         /* IMC PMUs, found by their evsels */
	{ "cs_etm", PD_AUXTRACE_CS_ETM, rb_cs_etm_open },
	{ "ftrace", -1, rb_ftrace_source_open },   /* a trace.dat given with the recording: ftrace's timeline */
};

const size_t rb_nr_source_kinds = sizeof(rb_source_kinds) / sizeof(rb_source_kinds[0]);
