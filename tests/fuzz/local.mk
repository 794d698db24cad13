# libFuzzer targets, one per input reader (configure --enable-fuzz, clang):
# `make fuzz` builds seed corpora from the fixtures (tests/fixtures and
# $RB_FIXTURES, at run time; nothing is copied into the tree) and runs each
# target for FUZZ_SECONDS (FUZZ_TARGETS picks some). Reproducers of what was
# found live in regress/ and run in the default suite (tests/fuzz_regress.test).
FUZZ_SECONDS = 60
FUZZ_PROGS = \
	%D%/fuzz_perfdata \
	%D%/fuzz_unpack \
	%D%/fuzz_cs_snapshot \
	%D%/fuzz_imc \
	%D%/fuzz_symtab \
	%D%/fuzz_rbdecode \
	%D%/fuzz_trace_pt \
	%D%/fuzz_trace_cs \
	%D%/fuzz_rbtrace
FUZZ_INCLUDES = $(AM_CPPFLAGS) -I$(top_srcdir)/%D%
FUZZ_LINK_FLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
if ENABLE_FUZZ
noinst_PROGRAMS += $(FUZZ_PROGS)
fuzz: $(FUZZ_PROGS) rbdecode$(EXEEXT) rbrecord$(EXEEXT) tests/tools/pdconvert$(EXEEXT) scripts/ptgen/ptgen$(EXEEXT)
	FUZZ_SECONDS='$(FUZZ_SECONDS)' top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
	RB_FIXTURES="$${RB_FIXTURES:-$(abs_top_srcdir)/../shared/fixtures}" \
	$(SHELL) $(top_srcdir)/%D%/run.sh
else
fuzz:
	@echo "make fuzz needs a build configured with --enable-fuzz (clang): CC=clang ../configure --enable-fuzz" >&2; exit 1
endif
.PHONY: fuzz
%C%_fuzz_perfdata_SOURCES = %D%/fuzz_perfdata.c %D%/fuzz.h
%C%_fuzz_perfdata_CPPFLAGS = $(FUZZ_INCLUDES)
%C%_fuzz_perfdata_LDFLAGS = $(FUZZ_LINK_FLAGS)
%C%_fuzz_perfdata_LDADD = $(PERFDATA_LIBS)
%C%_fuzz_unpack_SOURCES = %D%/fuzz_unpack.c %D%/fuzz.h
%C%_fuzz_unpack_CPPFLAGS = $(FUZZ_INCLUDES)
%C%_fuzz_unpack_LDFLAGS = $(FUZZ_LINK_FLAGS)
%C%_fuzz_unpack_LDADD = $(DECODER_LIBS) $(LIBARCHIVE_LIBS)
%C%_fuzz_cs_snapshot_SOURCES = %D%/fuzz_cs_snapshot.c %D%/fuzz.h
%C%_fuzz_cs_snapshot_CPPFLAGS = $(FUZZ_INCLUDES)
%C%_fuzz_cs_snapshot_LDFLAGS = $(FUZZ_LINK_FLAGS)
%C%_fuzz_cs_snapshot_LDADD = $(DECODER_LIBS) $(OPENCSD_LIBS)
%C%_fuzz_imc_SOURCES = %D%/fuzz_imc.c %D%/fuzz.h
%C%_fuzz_imc_CPPFLAGS = $(FUZZ_INCLUDES)
%C%_fuzz_imc_LDFLAGS = $(FUZZ_LINK_FLAGS)
%C%_fuzz_imc_LDADD = $(DECODER_LIBS)
%C%_fuzz_symtab_SOURCES = %D%/fuzz_symtab.c %D%/fuzz.h
%C%_fuzz_symtab_CPPFLAGS = $(FUZZ_INCLUDES)
%C%_fuzz_symtab_LDFLAGS = $(FUZZ_LINK_FLAGS)
%C%_fuzz_symtab_LDADD = $(DECODER_LIBS)
# the command line itself, its main renamed so the target can call it
%C%_fuzz_rbdecode_SOURCES = %D%/fuzz_rbdecode.c %D%/fuzz.h $(rbdecode_SOURCES)
%C%_fuzz_rbdecode_CPPFLAGS = $(FUZZ_INCLUDES) -Dmain=rbdecode_main
%C%_fuzz_rbdecode_CFLAGS = $(rbdecode_CFLAGS) -Wno-missing-prototypes
%C%_fuzz_rbdecode_LDFLAGS = $(FUZZ_LINK_FLAGS)
%C%_fuzz_rbdecode_LDADD = $(rbdecode_LDADD)
# the trace decoders inside a valid recording, in-process (one source, two targets)
%C%_fuzz_trace_pt_SOURCES = %D%/fuzz_trace.c %D%/fuzz.h
%C%_fuzz_trace_pt_CPPFLAGS = $(FUZZ_INCLUDES) -DFUZZ_TRACE_PT
%C%_fuzz_trace_pt_LDFLAGS = $(FUZZ_LINK_FLAGS)
%C%_fuzz_trace_pt_LDADD = $(RBTRACE_LIBS)
%C%_fuzz_trace_cs_SOURCES = %D%/fuzz_trace.c %D%/fuzz.h
%C%_fuzz_trace_cs_CPPFLAGS = $(FUZZ_INCLUDES) -DFUZZ_TRACE_CS
%C%_fuzz_trace_cs_LDFLAGS = $(FUZZ_LINK_FLAGS)
%C%_fuzz_trace_cs_LDADD = $(RBTRACE_LIBS)
# the rbtrace extension's entry points, linked in (databases and recordings made by run.sh)
%C%_fuzz_rbtrace_SOURCES = %D%/fuzz_rbtrace.c %D%/fuzz.h $(RBTRACE_SOURCES)
%C%_fuzz_rbtrace_CPPFLAGS = $(FUZZ_INCLUDES)
%C%_fuzz_rbtrace_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
%C%_fuzz_rbtrace_LDFLAGS = $(FUZZ_LINK_FLAGS)
%C%_fuzz_rbtrace_LDADD = $(RBTRACE_LIBS) $(SQLITE_LIBS)
EXTRA_DIST += %D%/run.sh %D%/seeds.sh %D%/mkimc.py %D%/unbundle.py %D%/splice_aux.py %D%/regress

# Tests of this area that run in the default suite: valgrind memcheck of
# end-to-end runs, rbdecode under faults, and the fuzz reproducers.
TESTS += tests/valgrind.test
if BUILD_DECODER
TESTS += tests/faults_decode.test tests/fuzz_regress.test tests/unit/test_cs_logger
check_PROGRAMS += tests/unit/test_cs_logger
endif
# compiles decoder/cs_etm/cs_decode.c itself (it includes the .c) to reach its internals
tests_unit_test_cs_logger_SOURCES = tests/unit/test_cs_logger.c tests/unit/tap.h
tests_unit_test_cs_logger_CPPFLAGS = $(AM_CPPFLAGS)
tests_unit_test_cs_logger_CFLAGS = $(AM_CFLAGS) $(OPENCSD_CFLAGS)
tests_unit_test_cs_logger_LDADD = $(DECODER_LIBS) $(OPENCSD_LIBS)
EXTRA_DIST += tests/valgrind.test tests/valgrind.supp tests/faults_decode.test tests/fuzz_regress.test
