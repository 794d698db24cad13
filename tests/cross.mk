# Target machines: rbrecord cross-built for aarch64, ppc64le and
# big-endian ppc64, its ring consumers checked for acquire/release code, its
# hermetic tests run under qemu-user, and a recording written by each target
# read back here. tests/cross.test does the cross builds in a scratch folder.
#
# CROSS_UNITS: hermetic unit tests (no perf_event_open, no decoder) that
# tests/cross.test builds for each target and runs under qemu-user. Add one
# line per test; it must be a check_PROGRAM built without the decoder.
CROSS_UNITS = \
	tests/unit/test_perfdata \
	tests/unit/test_ringmodel \
	tests/unit/test_auxmodel

# the regular-ring consumer against a model of the kernel's producer (hermetic)
check_PROGRAMS += tests/unit/test_ringmodel
TESTS += tests/unit/test_ringmodel
tests_unit_test_ringmodel_SOURCES = tests/unit/test_ringmodel.c tests/unit/tap.h tests/unit/recbuf.h tests/unit/kmodel.h \
	recorder/ring.h recorder/ring.c recorder/util.h recorder/util.c
tests_unit_test_ringmodel_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/recorder
tests_unit_test_ringmodel_LDADD = $(PERFDATA_LIBS) -lpthread

TESTS += tests/cross.test
EXTRA_DIST += tests/cross.test scripts/cross.sh

# tests/cross.test asks the cross build for the list (make -s cross-units)
cross-units:
	@echo $(CROSS_UNITS)
.PHONY: cross-units
