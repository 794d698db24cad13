# rbrecord's tests: Linux perf (and rbdecode, when built) read what rbrecord
# writes, in every mode, against the running kernel. They need perf and
# perf_event_open, not the decoder, so they run with --disable-decoder too;
# each skips with the reason when the machine cannot record.
REC_TESTS = \
	tests/rec_modes.test \
	tests/rec_header.test \
	tests/rec_vs_perf.test \
	tests/rec_faults.test \
	tests/rec_overwrite.test \
	tests/rec_events.test \
	tests/rec_archive.test \
	tests/rec_callgraph.test \
	tests/rec_options.test \
	tests/rec_compress.test \
	tests/rec_switch_output.test \
	tests/rec_dirformat.test
TESTS += $(REC_TESTS)
EXTRA_DIST += $(REC_TESTS)

# The ring consumers against a model of the kernel (no perf_event_open: runs
# under qemu-user and with --disable-decoder), and the Intel PT replay through
# the model into perf.data (tests/rec_aux.test).
check_PROGRAMS += tests/unit/test_auxmodel tests/tools/auxreplay
TESTS += tests/unit/test_auxmodel tests/rec_aux.test
EXTRA_DIST += tests/rec_aux.test
tests_unit_test_auxmodel_SOURCES = tests/unit/test_auxmodel.c tests/unit/kmodel.h tests/unit/tap.h \
	recorder/ring.c recorder/auxring.c recorder/auxinfo.c recorder/events.c recorder/synth.c \
	recorder/util.c recorder/tracing.c
tests_unit_test_auxmodel_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/recorder
tests_unit_test_auxmodel_LDADD = $(PERFDATA_LIBS) -lpthread
tests_tools_auxreplay_SOURCES = tests/tools/auxreplay.c tests/unit/kmodel.h \
	recorder/ring.c recorder/auxring.c recorder/auxinfo.c recorder/events.c recorder/synth.c \
	recorder/util.c recorder/tracing.c
tests_tools_auxreplay_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/recorder -I$(top_srcdir)/tests/unit
tests_tools_auxreplay_LDADD = $(PERFDATA_LIBS)
