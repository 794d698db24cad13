/*
 * recording.h - the rbtrace extension's way back from a database to the
 * recording it was made from: decode_stats names the file (absolute path,
 * size, fingerprint), the binaries' search path and the export's choices
 * (--itrace, --time, -C), and this turns them into the session options
 * that decode it again the same way. An archive is unpacked into a
 * temporary folder for as long as the database is open.
 */
#ifndef RB_RECORDING_H
#define RB_RECORDING_H

#include <sqlite3.h>
#include "decoder/session/session.h"
#include "decoder/session/unpack.h"

struct rb_recording {
	struct rb_session_opts so;
	char *strings[8];            /* what so points to */
	const char *symdirs[64];     /* the --symdir folders, in strings' "symdir" (one a line) */
	struct rb_unpacked un;
};

/* Read decode_stats of @db's main schema and check the recording. SQLITE_OK or an error with *@err set. */
int rb_recording_open(sqlite3 *db, struct rb_recording *r, char **err);
void rb_recording_close(struct rb_recording *r);

#endif
