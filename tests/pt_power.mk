# Intel PT PTWRITE and power events: the loops-power fixture against
# its ground truth, perf script and perf's export-to-sqlite.py.
if BUILD_DECODER
TESTS += tests/pt_power.test
endif
EXTRA_DIST += tests/pt_power.test
