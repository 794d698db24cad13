# Binaries found in --symdir folders, perf's build-id cache and .build-id
# trees, and missing or wrong ones making every command exit 3 (see
# tests/symdir.test).
if BUILD_DECODER
TESTS += %D%/symdir.test
endif
EXTRA_DIST += %D%/symdir.test
