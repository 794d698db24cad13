# The synthesized Intel PT fixtures checked against Linux perf and
# against their own generator.
if BUILD_DECODER
TESTS += tests/ptgen.test
endif
EXTRA_DIST += tests/ptgen.test tests/fixtures/intel-pt-gen scripts/ptgen/regen.sh
if BUILD_DECODER
TESTS += tests/pt_parallel.test
endif
EXTRA_DIST += tests/pt_parallel.test
# branch times against the fixtures' ground truth and perf's
if BUILD_DECODER
TESTS += tests/pt_time.test
endif
EXTRA_DIST += tests/pt_time.test
# what an export holds as the trace grows 4x
if BUILD_DECODER
TESTS += tests/pt_memory.test
endif
EXTRA_DIST += tests/pt_memory.test
