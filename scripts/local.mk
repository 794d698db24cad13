dist_noinst_SCRIPTS += %D%/bench/read.sh
dist_noinst_SCRIPTS += %D%/deps.sh %D%/setup.sh %D%/test.sh
dist_noinst_SCRIPTS += %D%/bench/sqlite.sh %D%/bench/record.sh %D%/bench/ftrace.sh
EXTRA_DIST += %D%/bench/bare_insert.c
