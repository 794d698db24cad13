# The PostgreSQL output against the SQLite export, in a server the test starts.
if BUILD_DECODER
TESTS += tests/postgresql.test
endif
EXTRA_DIST += tests/postgresql.test
