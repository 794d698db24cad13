# The recorder: opens perf events, drains the rings, writes perf.data
# through the format library. It links no decoding library.
bin_PROGRAMS += rbrecord
rbrecord_SOURCES = \
	%D%/util.h %D%/util.c \
	%D%/events.h %D%/events.c \
	%D%/ring.h %D%/ring.c \
	%D%/auxring.h %D%/auxring.c %D%/auxinfo.h %D%/auxinfo.c \
	%D%/synth.h %D%/synth.c %D%/feature.c \
	%D%/tracing.h %D%/tracing.c \
	%D%/ftrace.h %D%/ftrace.c %D%/tdat_write.h %D%/tdat_write.c \
	%D%/record.h %D%/record.c %D%/zcomp.h %D%/zcomp.c \
	%D%/switchout.h %D%/switchout.c \
	%D%/pmuinfo.h %D%/pmuinfo.c \
	%D%/kcore.h %D%/kcore.c %D%/threads.h %D%/threads.c \
	%D%/rbrecord.c
rbrecord_LDADD = $(ELF_LIBS) $(PERFDATA_LIBS) -lpthread
# -z: zstd (PERFDATA_LIBS already links $(ZSTD_LIBS))
rbrecord_CFLAGS = $(AM_CFLAGS) $(ZSTD_CFLAGS)
# --enable-static-recorder: one file to copy to a target machine
rbrecord_LDFLAGS = $(AM_LDFLAGS) $(RB_STATIC_LDFLAGS)
if HAVE_LIBARCHIVE
rbrecord_SOURCES += %D%/pack.h %D%/pack.c
rbrecord_CFLAGS += $(REC_ARCHIVE_CFLAGS)
rbrecord_LDADD += $(REC_ARCHIVE_LIBS)
endif
