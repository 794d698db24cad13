# CoreSight AUX trace in perf.data (cs_etm) checked against simpleperf's
# counts, Linux perf's branches, trc_pkt_lister and the binary's disassembly
# (see tests/cs_etm.test).
if BUILD_DECODER
TESTS += %D%/cs_etm.test
endif
EXTRA_DIST += %D%/cs_etm.test
