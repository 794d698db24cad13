# The outputs, one folder each:
#   sqlite/    perf's export-to-sqlite schema plus our tables
#   text/      perf script's text and the gaps table
#   json/      the gaps table as JSON (gaps --json)
#   folded/    folded stacks for flame graphs (rbdecode folded)
#   speedscope/ speedscope's file format (rbdecode speedscope)
#   perfetto/  Chrome's Trace Event Format JSON for Perfetto (rbdecode perfetto)
#   report/    one self-contained HTML page (rbdecode report); its page is report_page.html,
#              built into report_page.h (a C string) in the build tree
#   postgresql/ the same rows into a PostgreSQL server (libpq), many recordings per database
#   table_writer.h where sqlite/store.c's rows go: its SQLite statements or postgresql/
#   trace_calls.h  trace branches as the calls builder's input (folded, speedscope, perfetto, report)
#   rbtrace/   the rbtrace SQLite extension: lazy tables decoded on demand
#              from the recording a database names (rbtrace.so)
if BUILD_DECODER
noinst_LIBRARIES += %D%/libstore.a
%C%_libstore_a_SOURCES = %D%/sqlite/store.h %D%/sqlite/store.c %D%/sqlite/schema.sql.h %D%/table_writer.h \
	%D%/text/text.h %D%/text/text.c %D%/text/fields.h %D%/text/fields.c %D%/json/json.h %D%/json/json.c \
	%D%/folded/folded.h %D%/folded/folded.c %D%/trace_calls.h \
	%D%/speedscope/speedscope.h %D%/speedscope/speedscope.c \
	%D%/perfetto/perfetto.h %D%/perfetto/perfetto.c \
	%D%/report/report.h %D%/report/report.c \
	%D%/rbtrace/fingerprint.h %D%/rbtrace/fingerprint.c
if HAVE_LIBPQ
%C%_libstore_a_SOURCES += %D%/postgresql/pg.h %D%/postgresql/pg.c
endif
nodist_%C%_libstore_a_SOURCES = %D%/report/report_page.h
%C%_libstore_a_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_builddir)/%D%/report
%C%_libstore_a_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) $(CAPSTONE_CFLAGS) $(JANSSON_CFLAGS) $(LIBPQ_CFLAGS)
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

# The extension: a loadable module (sqlite3's .load, Python's load_extension),
# installed beside the programs' data as $(pkglibdir)/rbtrace.so. It links
# the decoder (built position-independent for it) but not the store.
if BUILD_DECODER
rbtraceextdir = $(pkglibdir)
rbtraceext_PROGRAMS = rbtrace.so
RBTRACE_SOURCES = %D%/rbtrace/rbtrace.c %D%/rbtrace/feed.h %D%/rbtrace/feed.c \
	%D%/rbtrace/recording.h %D%/rbtrace/recording.c %D%/rbtrace/fingerprint.h %D%/rbtrace/fingerprint.c
RBTRACE_LIBS = $(DECODER_LIBS) $(PERFDATA_LIBS) $(LIBARCHIVE_LIBS) $(OPENCSD_LIBS) $(TRACEEVENT_LIBS) \
	$(ZSTD_LIBS) -lpthread
rbtrace_so_SOURCES = $(RBTRACE_SOURCES)
rbtrace_so_CFLAGS = $(AM_CFLAGS) -fPIC $(SQLITE_CFLAGS)
# every symbol resolved at link time (-z defs), except in the fuzz build: clang links no sanitizer
# runtime into a shared object, so its instrumentation's symbols come from the program that loads it
if ENABLE_FUZZ
RBTRACE_ZDEFS =
else
RBTRACE_ZDEFS = -Wl,-z,defs
endif
rbtrace_so_LDFLAGS = $(AM_LDFLAGS) -shared $(RBTRACE_ZDEFS) -Wl,--version-script=$(srcdir)/%D%/rbtrace/rbtrace.map
rbtrace_so_LDADD = $(RBTRACE_LIBS)
EXTRA_rbtrace_so_DEPENDENCIES = $(srcdir)/%D%/rbtrace/rbtrace.map
EXTRA_DIST += %D%/rbtrace/rbtrace.map
endif
