# The outputs, one folder each:
#   sqlite/    perf's export-to-sqlite schema plus our tables
if BUILD_DECODER
noinst_LIBRARIES += %D%/libstore.a
%C%_libstore_a_SOURCES = %D%/sqlite/store.h %D%/sqlite/store.c %D%/sqlite/schema.sql.h
%C%_libstore_a_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
STORE_LIBS = %D%/libstore.a
endif
