# rbdecode: the offline decoder's command line.
if BUILD_DECODER
bin_PROGRAMS += rbdecode
rbdecode_SOURCES = %D%/cli.h %D%/rbdecode.c %D%/cmd_info.c
rbdecode_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
rbdecode_LDADD = $(PERFDATA_LIBS) $(JANSSON_LIBS)
endif
