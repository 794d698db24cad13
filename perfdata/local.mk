# The perf.data format library, linked by both rbrecord and rbdecode.
noinst_LIBRARIES += %D%/libperfdata.a
%C%_libperfdata_a_SOURCES = \
	%D%/pd.h %D%/pd_abi.h %D%/pd_internal.h \
	%D%/pd_error.c %D%/pd_swap.c %D%/pd_evsel.c %D%/pd_read.c \
	%D%/pd_parse.c %D%/pd_feature.c %D%/pd_auxinfo.c %D%/pd_write.c \
	%D%/pd_simpleperf.c %D%/pd_deliver.c %D%/pd_tracing.c
%C%_libperfdata_a_CFLAGS = $(AM_CFLAGS) -fPIC $(ZSTD_CFLAGS)
PERFDATA_LIBS = %D%/libperfdata.a $(ZSTD_LIBS)
