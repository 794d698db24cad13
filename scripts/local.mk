dist_noinst_SCRIPTS += %D%/bench/read.sh
