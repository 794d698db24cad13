# CoreSight snapshot decoding checked against OpenCSD's expected outputs and
# Debian's trc_pkt_lister (see tests/cs_snapshots.test).
if BUILD_DECODER
TESTS += %D%/cs_snapshots.test
endif
EXTRA_DIST += %D%/cs_snapshots.test
