# rbdecode's SQLite database of Intel PT traces against perf's
# export-to-sqlite.py and exported-sql-viewer.py.
if BUILD_DECODER
TESTS += tests/export_pt.test
endif
EXTRA_DIST += tests/export_pt.test tests/viewer_queries.py
