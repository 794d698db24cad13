# The outputs, one folder each:
#   sqlite/    perf's export-to-sqlite schema plus our tables
#   text/      perf script's text and the gaps table
#   json/      the gaps table as JSON (gaps --json)
#   folded/    folded stacks for flame graphs (rbdecode folded)
#   speedscope/ speedscope's file format (rbdecode speedscope)
#   perfetto/  Chrome's Trace Event Format JSON for Perfetto (rbdecode perfetto)
#   trace_calls.h  trace branches as the calls builder's input (folded, speedscope, perfetto)
if BUILD_DECODER
noinst_LIBRARIES += %D%/libstore.a
%C%_libstore_a_SOURCES = %D%/sqlite/store.h %D%/sqlite/store.c %D%/sqlite/schema.sql.h \
	%D%/text/text.h %D%/text/text.c %D%/json/json.h %D%/json/json.c \
	%D%/folded/folded.h %D%/folded/folded.c %D%/trace_calls.h \
	%D%/speedscope/speedscope.h %D%/speedscope/speedscope.c \
	%D%/perfetto/perfetto.h %D%/perfetto/perfetto.c
%C%_libstore_a_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) $(CAPSTONE_CFLAGS) $(JANSSON_CFLAGS)
STORE_LIBS = %D%/libstore.a
endif
