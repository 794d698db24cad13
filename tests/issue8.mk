# Issue 8: IMC in perf.data, the loss model, coverage and the timeline
# (recordings made at test time by scripts/mkimc).
ISSUE8_TESTS = tests/imc_perf.test tests/loss_model.test tests/coverage.test tests/timeline.test
if BUILD_DECODER
TESTS += $(ISSUE8_TESTS)
endif
EXTRA_DIST += $(ISSUE8_TESTS)
