# The decoder stages: time ordering, machine state and symbols, the session
# that drives them. Trace decoders (Intel PT, CoreSight, IMC) join here.
if BUILD_DECODER
noinst_LIBRARIES += %D%/libdecoder.a
%C%_libdecoder_a_SOURCES = \
	%D%/ordered.h %D%/ordered.c \
	%D%/symtab.h %D%/symtab.c \
	%D%/machine.h %D%/machine.c \
	%D%/session.h %D%/session.c \
	%D%/unpack.h %D%/unpack.c \
	%D%/intel_pt.h %D%/intel_pt.c \
	%D%/spool.h %D%/spool.c %D%/pt_filter.h %D%/pt_filter.c \
	%D%/imc.h %D%/imc.c %D%/imc_perf.h %D%/imc_perf.c \
	%D%/ftrace.h %D%/ftrace.c %D%/tracedat.h %D%/tracedat.c \
	%D%/cs_snapshot.h %D%/cs_snapshot.c %D%/cs_decode.h %D%/cs_decode.c \
	%D%/auxdec.h %D%/cs_etm.c
%C%_libdecoder_a_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/decoder
%C%_libdecoder_a_CFLAGS = $(AM_CFLAGS) $(LIBARCHIVE_CFLAGS) $(OPENCSD_CFLAGS) $(TRACEEVENT_CFLAGS) $(ZSTD_CFLAGS)
DECODER_LIBS = %D%/libdecoder.a $(IPT_LIBS)
endif
