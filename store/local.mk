# The SQLite store: perf's export-to-sqlite schema plus our tables.
if BUILD_DECODER
noinst_LIBRARIES += %D%/libstore.a
%C%_libstore_a_SOURCES = %D%/store.h %D%/store.c %D%/schema.sql.h
%C%_libstore_a_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/decoder
%C%_libstore_a_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
STORE_LIBS = %D%/libstore.a
endif
