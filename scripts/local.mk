dist_noinst_SCRIPTS += %D%/bench/read.sh
dist_noinst_SCRIPTS += %D%/deps.sh %D%/setup.sh %D%/test.sh %D%/same_output.sh %D%/dist_complete.sh
# the public recordings tests/corpus.test reads (tests/corpus/MANIFEST.tsv)
dist_noinst_SCRIPTS += %D%/corpus/fetch.sh
EXTRA_DIST += %D%/corpus/README.md
dist_noinst_SCRIPTS += %D%/bench/sqlite.sh %D%/bench/record.sh %D%/bench/pt.sh %D%/bench/coresight.sh %D%/bench/ftrace.sh \
	%D%/bench/scale.sh %D%/bench/postgresql.sh %D%/bench/work.sh
EXTRA_DIST += %D%/bench/bare_insert.c %D%/bench/pt_bare.c %D%/bench/aux_bytes.py
# mkimc: recordings with known IMC records, losses and timelines, made at test time
check_PROGRAMS += %D%/mkimc
%C%_mkimc_SOURCES = %D%/mkimc.c
%C%_mkimc_LDADD = $(PERFDATA_LIBS)
