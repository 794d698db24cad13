# The decoder, one folder per stage:
#   session/   reading a recording (archives unpacked, stdin spooled), time
#              order, machine state (threads, comms, maps) and symbols
#   source.h   the interface every trace source implements, sources.c their registry
#   intel_pt/  cs_etm/  imc/   the trace sources
#   ftrace/    trace.dat files: the ftrace page ring, a second timeline
#   calls/     calls, returns and call paths from branches, for every output
if BUILD_DECODER
noinst_LIBRARIES += %D%/libdecoder.a
%C%_libdecoder_a_SOURCES = \
	%D%/session/session.h %D%/session/session.c \
	%D%/session/ordered.h %D%/session/ordered.c \
	%D%/session/machine.h %D%/session/machine.c \
	%D%/session/symtab.h %D%/session/symtab.c %D%/session/sym_internal.h \
	%D%/session/sym_find.c %D%/session/sym_elf.c %D%/session/sym_kallsyms.c %D%/session/sym_recorded.c \
	%D%/session/sym_simpleperf.h %D%/session/sym_simpleperf.c \
	%D%/session/symdir.h %D%/session/symdir.c \
	%D%/session/unpack.h %D%/session/unpack.c \
	%D%/session/spool.h %D%/session/spool.c \
	%D%/session/unwind.h %D%/session/unwind.c \
	%D%/source.h %D%/sources.c \
	%D%/calls/calls.h %D%/calls/calls.c %D%/calls/idmap.h \
	%D%/intel_pt/intel_pt.h %D%/intel_pt/intel_pt.c %D%/intel_pt/pt_source.c %D%/intel_pt/pt_index.c \
	%D%/intel_pt/pt_internal.h %D%/intel_pt/pt_gather.c %D%/intel_pt/pt_image.c \
	%D%/intel_pt/pt_events.c %D%/intel_pt/pt_decode.c %D%/intel_pt/pt_segment.c \
	%D%/intel_pt/pt_dump.c %D%/intel_pt/pt_resync.c \
	%D%/intel_pt/pt_clock.h %D%/intel_pt/pt_clock.c \
	%D%/intel_pt/pt_filter.h %D%/intel_pt/pt_filter.c \
	%D%/cs_etm/cs_etm.c \
	%D%/cs_etm/cs_snapshot.h %D%/cs_etm/cs_snapshot.c \
	%D%/cs_etm/cs_decode.h %D%/cs_etm/cs_decode.c \
	%D%/cs_etm/ocsd_guard.h %D%/cs_etm/ocsd_guard.cpp \
	%D%/imc/imc.h %D%/imc/imc.c %D%/imc/imc_perf.h %D%/imc/imc_perf.c %D%/imc/imc_source.c \
	%D%/ftrace/ftpage.h %D%/ftrace/ftpage.c %D%/ftrace/tracedat.h %D%/ftrace/tracedat.c %D%/ftrace/ftrace_source.c
%C%_libdecoder_a_CFLAGS = $(AM_CFLAGS) -fPIC $(LIBARCHIVE_CFLAGS) $(OPENCSD_CFLAGS) $(TRACEEVENT_CFLAGS) $(ZSTD_CFLAGS) $(LIBDW_CFLAGS)
%C%_libdecoder_a_CXXFLAGS = $(AM_CXXFLAGS) -fPIC $(OPENCSD_CFLAGS)
DECODER_LIBS = %D%/libdecoder.a $(LIBDW_LIBS) $(ELF_LIBS) $(IPT_LIBS)
endif
