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
	tests/rec_archive.test
TESTS += $(REC_TESTS)
EXTRA_DIST += $(REC_TESTS)
