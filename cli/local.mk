# rbdecode: the offline decoder's command line.
if BUILD_DECODER
bin_PROGRAMS += rbdecode
rbdecode_SOURCES = %D%/cli.h %D%/rbdecode.c %D%/cli_args.c %D%/cmd_info.c %D%/cmd_export.c %D%/cmd_script.c %D%/cmd_imc.c %D%/cmd_elements.c %D%/cmd_dump.c %D%/cmd_coverage.c %D%/cmd_trace.c %D%/cmd_folded.c %D%/cli_view.c %D%/cmd_speedscope.c %D%/cmd_perfetto.c %D%/cmd_report.c
rbdecode_CPPFLAGS = $(AM_CPPFLAGS)
rbdecode_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(CAPSTONE_CFLAGS) $(OPENCSD_CFLAGS)
rbdecode_LDADD = $(STORE_LIBS) $(DECODER_LIBS) $(PERFDATA_LIBS) $(SQLITE_LIBS) $(LIBARCHIVE_LIBS) $(CAPSTONE_LIBS) $(JANSSON_LIBS) $(OPENCSD_LIBS) $(TRACEEVENT_LIBS) $(ZSTD_LIBS) $(LIBPQ_LIBS)
endif
