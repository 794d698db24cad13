# Tests run through automake's TAP driver. Test data are found through
# environment variables (srcdir-independent), so make distcheck works.
LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/build-aux/tap-driver.sh
TESTS_ENVIRONMENT = \
	top_srcdir='$(abs_top_srcdir)'; export top_srcdir; \
	top_builddir='$(abs_top_builddir)'; export top_builddir; \
	RB_FIXTURES="$${RB_FIXTURES:-$(abs_top_srcdir)/../shared/fixtures}"; export RB_FIXTURES; \
	PATH='$(abs_top_builddir)':"$$PATH"; export PATH; \
	LSAN_OPTIONS="suppressions=$(abs_top_srcdir)/tests/lsan.supp:print_suppressions=0"; export LSAN_OPTIONS;

check_PROGRAMS += tests/unit/test_perfdata tests/tools/pdconvert tests/tools/mkaux
tests_unit_test_perfdata_SOURCES = tests/unit/test_perfdata.c tests/unit/tap.h tests/unit/recbuf.h
tests_unit_test_perfdata_LDADD = $(PERFDATA_LIBS)
tests_tools_pdconvert_SOURCES = tests/tools/pdconvert.c
tests_tools_pdconvert_LDADD = $(PERFDATA_LIBS)
tests_tools_mkaux_SOURCES = tests/tools/mkaux.c
tests_tools_mkaux_LDADD = $(PERFDATA_LIBS)

SHELL_TESTS = \
	tests/info_perf_record.test \
	tests/info_fixtures.test \
	tests/swap_roundtrip.test \
	tests/damaged_files.test \
	tests/alloc_fail_exit.test \
	tests/io_fail.test \
	tests/io_fail_outputs.test \
	tests/quick.test \
	tests/export_sqlite.test \
	tests/archive.test \
	tests/script_gaps.test \
	tests/script_comm.test \
	tests/script_perf.test \
	tests/pipe_tracepoints.test \
	tests/queries.test \
	tests/aux_gaps.test \
	tests/pt_real.test \
	tests/pt_resync.test \
	tests/unwind.test \
	tests/pt_decode.test \
	tests/pt_damaged.test \
	tests/aggregates.test \
	tests/trace_index.test \
	tests/folded.test \
	tests/rbtrace.test \
	tests/speedscope.test \
	tests/perfetto.test \
	tests/report.test \
	tests/zoo.test \
	tests/spsym.test \
	tests/corpus.test \
	tests/cli.test
TESTS += tests/unit/test_perfdata
if BUILD_DECODER
TESTS += $(SHELL_TESTS) tests/unit/test_machine tests/unit/test_spsym tests/unit/test_symtab tests/unit/test_symdir tests/unit/test_imc tests/unit/test_pt_filter \
	tests/unit/test_ptclock tests/unit/test_ordered tests/unit/test_session tests/unit/test_calls
check_PROGRAMS += tests/unit/test_machine tests/unit/test_spsym tests/unit/test_symtab tests/unit/test_symdir tests/unit/test_imc tests/unit/test_pt_filter \
	tests/unit/test_ptclock tests/unit/test_ordered tests/unit/test_session tests/unit/test_calls
endif
# rbtrace_sql: the rbtrace extension linked into a minimal shell (a sanitized build's module cannot be .load'ed)
if BUILD_DECODER
check_PROGRAMS += tests/tools/rbtrace_sql
endif
tests_tools_rbtrace_sql_SOURCES = tests/tools/rbtrace_sql.c $(RBTRACE_SOURCES)
tests_tools_rbtrace_sql_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
tests_tools_rbtrace_sql_LDADD = $(RBTRACE_LIBS) $(SQLITE_LIBS)
tests_unit_test_calls_SOURCES = tests/unit/test_calls.c tests/unit/tap.h
tests_unit_test_calls_CPPFLAGS = $(AM_CPPFLAGS)
tests_unit_test_calls_LDADD = $(DECODER_LIBS)
tests_unit_test_ordered_SOURCES = tests/unit/test_ordered.c tests/unit/tap.h
tests_unit_test_ordered_CPPFLAGS = $(AM_CPPFLAGS)
tests_unit_test_ordered_LDADD = $(DECODER_LIBS)
tests_unit_test_session_SOURCES = tests/unit/test_session.c tests/unit/tap.h tests/unit/recbuf.h
tests_unit_test_session_CPPFLAGS = $(AM_CPPFLAGS)
tests_unit_test_session_LDADD = $(DECODER_LIBS) $(PERFDATA_LIBS) $(LIBARCHIVE_LIBS) $(OPENCSD_LIBS) $(TRACEEVENT_LIBS) $(ZSTD_LIBS)
tests_unit_test_pt_filter_SOURCES = tests/unit/test_pt_filter.c tests/unit/tap.h
tests_unit_test_pt_filter_CPPFLAGS = $(AM_CPPFLAGS)
tests_unit_test_pt_filter_LDADD = $(DECODER_LIBS)
tests_unit_test_ptclock_SOURCES = tests/unit/test_ptclock.c tests/unit/tap.h
tests_unit_test_ptclock_CPPFLAGS = $(AM_CPPFLAGS)
tests_unit_test_ptclock_LDADD = $(DECODER_LIBS)
tests_unit_test_imc_SOURCES = tests/unit/test_imc.c tests/unit/tap.h
tests_unit_test_imc_CPPFLAGS = $(AM_CPPFLAGS)
tests_unit_test_imc_LDADD = $(DECODER_LIBS)
tests_unit_test_symtab_SOURCES = tests/unit/test_symtab.c tests/unit/tap.h
tests_unit_test_symtab_CPPFLAGS = $(AM_CPPFLAGS)
tests_unit_test_symtab_LDADD = $(DECODER_LIBS)
tests_unit_test_symdir_SOURCES = tests/unit/test_symdir.c tests/unit/tap.h
tests_unit_test_symdir_CPPFLAGS = $(AM_CPPFLAGS)
tests_unit_test_symdir_LDADD = $(DECODER_LIBS)
tests_unit_test_spsym_SOURCES = tests/unit/test_spsym.c tests/unit/tap.h
tests_unit_test_spsym_CPPFLAGS = $(AM_CPPFLAGS)
tests_unit_test_spsym_LDADD = $(DECODER_LIBS) $(PERFDATA_LIBS)
tests_unit_test_machine_SOURCES = tests/unit/test_machine.c tests/unit/tap.h
tests_unit_test_machine_CPPFLAGS = $(AM_CPPFLAGS)
tests_unit_test_machine_LDADD = $(DECODER_LIBS) $(PERFDATA_LIBS) $(LIBARCHIVE_LIBS)
# The allocator that fails the N-th allocation (LD_PRELOAD), for alloc_fail_exit.test.
# Built without the project's CFLAGS: a sanitizer's runtime must come first, so that test skips there.
# The same for the N-th write, fsync or rename (fail_io.so), for io_fail.test.
check_DATA = tests/tools/fail_alloc.so tests/tools/fail_io.so
tests/tools/fail_alloc.so: $(top_srcdir)/tests/tools/fail_alloc.c $(top_srcdir)/tests/tools/preload_main.h
	$(AM_V_CC)$(MKDIR_P) tests/tools && $(CC) -O2 -shared -fPIC -o $@ $(top_srcdir)/tests/tools/fail_alloc.c -ldl
tests/tools/fail_io.so: $(top_srcdir)/tests/tools/fail_io.c $(top_srcdir)/tests/tools/preload_main.h
	$(AM_V_CC)$(MKDIR_P) tests/tools && $(CC) -O2 -shared -fPIC -o $@ $(top_srcdir)/tests/tools/fail_io.c -ldl
CLEANFILES += tests/tools/fail_alloc.so tests/tools/fail_io.so
EXTRA_DIST += tests/tools/fail_alloc.c tests/tools/fail_io.c tests/tools/preload_main.h tests/alloc_fail_exit.test
EXTRA_DIST += tests/report_browser.mjs tests/perfetto_check.py tests/speedscope_check.py tests/speedscope_browser.mjs tests/npm/package.json
EXTRA_DIST += tests/lib.sh tests/strip_names.py tests/dbcompare.py tests/lsan.supp $(SHELL_TESTS)
TEST_EXTENSIONS = .test
TEST_LOG_DRIVER = $(LOG_DRIVER)
TEST_LOG_COMPILER = $(SHELL)
EXTRA_DIST += tests/corpus/MANIFEST.tsv
