/* recording.c - see recording.h. */
#include "config.h"
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "store/rbtrace/recording.h"
#include "store/rbtrace/fingerprint.h"

/* decode_stats' value for @name as text (malloc'd), NULL if there is none. */
static char *stat_text(sqlite3 *db, const char *name)
{
	sqlite3_stmt *s;
	char *v = NULL;
	if (sqlite3_prepare_v2(db, "SELECT value FROM main.decode_stats WHERE name = ?", -1, &s, NULL) != SQLITE_OK)
		return NULL;
	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL)
		v = strdup((const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	return v;
}

static uint64_t stat_u64(sqlite3 *db, const char *name, uint64_t dflt)
{
	char *t = stat_text(db, name);
	uint64_t v = t ? strtoull(t, NULL, 10) : dflt;
	free(t);
	return v;
}

/* Keep @s (may be NULL) for as long as @r lives; returns it. */
static const char *keep(struct rb_recording *r, char *s)
{
	for (size_t i = 0; s && i < sizeof(r->strings) / sizeof(r->strings[0]); i++)
		if (!r->strings[i])
			return r->strings[i] = s;
	free(s);
	return NULL;
}

int rb_recording_open(sqlite3 *db, struct rb_recording *r, char **err)
{
	memset(r, 0, sizeof(*r));
	char *path = stat_text(db, "recording");
	if (!path) {
		*err = sqlite3_mprintf("rbtrace: the database does not name the recording it was made from "
				       "(decode_stats has no 'recording': not made by rbdecode export, or by an older one)");
		return SQLITE_ERROR;
	}
	keep(r, path);
	char hex[17], *want_hex = stat_text(db, "recording_hash");
	uint64_t size, want_size = stat_u64(db, "recording_size", UINT64_MAX);
	if (rb_fingerprint(path, hex, &size) < 0) {
		*err = sqlite3_mprintf("rbtrace: cannot read the recording %s the database was made from: %s", path,
				       strerror(errno));
		free(want_hex);
		return SQLITE_ERROR;
	}
	if ((want_size != UINT64_MAX && size != want_size) || (want_hex && strcmp(hex, want_hex))) {
		*err = sqlite3_mprintf("rbtrace: the recording %s changed since the database was made (%" PRIu64
				       " bytes, fingerprint %s; the database has %" PRIu64 " bytes, %s)", path, size, hex,
				       want_size, want_hex ? want_hex : "none");
		free(want_hex);
		return SQLITE_ERROR;
	}
	free(want_hex);
	if (stat_u64(db, "quick_pass", 0)) {
		*err = sqlite3_mprintf("rbtrace: the database was made by the quick pass (rbdecode --quick): it "
				       "holds no objects of the decoded code for the lazy tables to name; export the "
				       "window you want whole (rbdecode %s -o OUT.db --time START,END) and query that", path);
		return SQLITE_ERROR;
	}
	struct rb_session_opts *so = &r->so;
	so->path = path;
	so->machine.symfs = keep(r, stat_text(db, "symfs"));
	so->machine.vmlinux = keep(r, stat_text(db, "vmlinux"));
	so->machine.kcore = keep(r, stat_text(db, "kcore"));
	so->machine.kallsyms = keep(r, stat_text(db, "kallsyms"));
	/* the --symdir folders, one a line (note_paths in cli/cmd_export.c) */
	char *dirs = (char *)keep(r, stat_text(db, "symdir"));
	for (char *d = dirs, *nl; d && *d && so->machine.nr_symdirs < sizeof(r->symdirs) / sizeof(r->symdirs[0]);
	     d = nl ? nl + 1 : d + strlen(d)) {
		if ((nl = strchr(d, '\n')))
			*nl = 0;
		r->symdirs[so->machine.nr_symdirs++] = d;
	}
	so->machine.symdirs = r->symdirs;
	so->cpus = keep(r, stat_text(db, "export_cpus"));
	so->time_start = stat_u64(db, "export_time_start", 0);
	so->time_end = stat_u64(db, "export_time_end", 0);
	so->no_branches = !stat_u64(db, "itrace_branches", 1);
	so->insn_period = stat_u64(db, "itrace_insn_period", 0);
	so->ptwrites = (int)stat_u64(db, "itrace_ptwrites", 0);
	so->pwr_events = (int)stat_u64(db, "itrace_pwr_events", 0);
	so->perf_export = 1;
	so->jobs = rb_session_default_jobs();
	int ar = rb_archive_detect(path);
	if (ar < 0)
		return SQLITE_NOMEM;
	if (ar) {
		char msg[512];
		int urc = rb_archive_unpack(path, NULL, &r->un, msg, sizeof(msg));
		if (urc < 0) {
			*err = sqlite3_mprintf("rbtrace: %s", msg);
			return urc == -ENOMEM ? SQLITE_NOMEM : SQLITE_ERROR;
		}
		so->path = r->un.perf_data;
		so->machine.buildid_dir = r->un.buildid_dir;
	}
	return SQLITE_OK;
}

void rb_recording_close(struct rb_recording *r)
{
	rb_archive_cleanup(&r->un);
	for (size_t i = 0; i < sizeof(r->strings) / sizeof(r->strings[0]); i++)
		free(r->strings[i]);
	memset(r, 0, sizeof(*r));
}
