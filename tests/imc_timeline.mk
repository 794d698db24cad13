# IMC in perf.data, the loss model, coverage and the timeline, on
# recordings scripts/mkimc makes at test time.
IMC_TIMELINE_TESTS = tests/imc_perf.test tests/loss_model.test tests/coverage.test tests/timeline.test
if BUILD_DECODER
TESTS += $(IMC_TIMELINE_TESTS)
endif
EXTRA_DIST += $(IMC_TIMELINE_TESTS)
