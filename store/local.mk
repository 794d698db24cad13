# The outputs, one folder each:
#   sqlite/    perf's export-to-sqlite schema plus our tables
#   text/      perf script's text and the gaps table
#   json/      the gaps table as JSON (gaps --json)
#   folded/    folded stacks for flame graphs (rbdecode folded)
#   speedscope/ speedscope's file format (rbdecode speedscope)
#   perfetto/  Chrome's Trace Event Format JSON for Perfetto (rbdecode perfetto)
#   report/    one self-contained HTML page (rbdecode report); its page is report_page.html,
#              built into report_page.h (a C string) in the build tree
#   trace_calls.h  trace branches as the calls builder's input (folded, speedscope, perfetto, report)
if BUILD_DECODER
noinst_LIBRARIES += %D%/libstore.a
%C%_libstore_a_SOURCES = %D%/sqlite/store.h %D%/sqlite/store.c %D%/sqlite/schema.sql.h \
	%D%/text/text.h %D%/text/text.c %D%/json/json.h %D%/json/json.c \
	%D%/folded/folded.h %D%/folded/folded.c %D%/trace_calls.h \
	%D%/speedscope/speedscope.h %D%/speedscope/speedscope.c \
	%D%/perfetto/perfetto.h %D%/perfetto/perfetto.c \
	%D%/report/report.h %D%/report/report.c
nodist_%C%_libstore_a_SOURCES = %D%/report/report_page.h
%C%_libstore_a_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_builddir)/%D%/report
%C%_libstore_a_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) $(CAPSTONE_CFLAGS) $(JANSSON_CFLAGS)
STORE_LIBS = %D%/libstore.a
BUILT_SOURCES += %D%/report/report_page.h
CLEANFILES += %D%/report/report_page.h
endif
EXTRA_DIST += %D%/report/report_page.html
# the page as one C string literal: backslashes and quotes escaped, each line ending in \n
%D%/report/report_page.h: $(srcdir)/%D%/report/report_page.html
	$(AM_V_GEN)$(MKDIR_P) $(@D) && \
	sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $(srcdir)/%D%/report/report_page.html >$@-t && \
	mv $@-t $@
