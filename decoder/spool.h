/*
 * spool.h - scratch files for data too large to hold in memory or that
 * must be read twice: unlinked files in $TMPDIR (or /tmp), gone when
 * closed, whatever way the program ends. The Intel PT stage spools the AUX
 * data of large recordings; the session spools a recording read from
 * standard input, which is read twice (the AUX data is gathered first).
 */
#ifndef RB_SPOOL_H
#define RB_SPOOL_H

/* The folder scratch files go to: $TMPDIR, else /tmp. */
const char *rb_spool_dir(void);

/* A new unlinked read-write file there; -1 with errno set. */
int rb_spool_open(void);

#endif
