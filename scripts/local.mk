dist_noinst_SCRIPTS += %D%/bench/read.sh
dist_noinst_SCRIPTS += %D%/deps.sh %D%/setup.sh %D%/test.sh
