# The Intel PT fixture generator: needs libipt and capstone, so it
# is built with the decoder. Its outputs are committed under
# tests/fixtures/intel-pt-gen; tests/ptgen.test checks them against perf.
if BUILD_DECODER
noinst_PROGRAMS += scripts/ptgen/ptgen
endif
scripts_ptgen_ptgen_SOURCES = scripts/ptgen/ptgen.c scripts/ptgen/ptgen.h scripts/ptgen/trace.c \
	scripts/ptgen/flow.c scripts/ptgen/image.c scripts/ptgen/ptenc.c scripts/ptgen/wrap.c \
	scripts/ptgen/iptcheck.c
scripts_ptgen_ptgen_CFLAGS = $(AM_CFLAGS) $(CAPSTONE_CFLAGS)
scripts_ptgen_ptgen_LDADD = $(PERFDATA_LIBS) $(IPT_LIBS) $(CAPSTONE_LIBS)
EXTRA_DIST += scripts/ptgen/progs/sys.h scripts/ptgen/progs/loops.c scripts/ptgen/progs/threads.c scripts/ptgen/progs/ptw.c \
	scripts/ptgen/progs/build.sh scripts/ptgen/progs/kmini.S scripts/ptgen/progs/kmini.ld
