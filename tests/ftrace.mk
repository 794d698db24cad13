# The ftrace ring: the page parser on hand-built pages (unit), rbrecord
# --ftrace against the kernel with trace-cmd as the oracle, and trace.dat
# files written by trace-cmd itself. The shell tests skip with the reason
# where tracefs, root or trace-cmd is missing.
FTRACE_TESTS = tests/ftrace.test tests/ftrace_tracecmd.test
EXTRA_DIST += $(FTRACE_TESTS) tests/ftrace_norm.py
if BUILD_DECODER
TESTS += $(FTRACE_TESTS) tests/unit/test_ftpage
check_PROGRAMS += tests/unit/test_ftpage
endif
tests_unit_test_ftpage_SOURCES = tests/unit/test_ftpage.c tests/unit/tap.h
tests_unit_test_ftpage_CPPFLAGS = $(AM_CPPFLAGS)
tests_unit_test_ftpage_LDADD = $(DECODER_LIBS)
