/*
 * spool.h - scratch files for data too large to hold in memory or that
 * must be read twice: unlinked files in $TMPDIR (or /tmp), gone when
 * closed, whatever way the program ends. The Intel PT stage spools the AUX
 * data of large recordings; the session spools a recording read from
 * standard input, which is read twice (the AUX data is gathered first).
 */
#ifndef RB_SPOOL_H
#define RB_SPOOL_H

#include <stddef.h>
#include <stdint.h>

/* The folder scratch files go to: $TMPDIR, else /tmp. */
const char *rb_spool_dir(void);

/* A new unlinked read-write file there; -1 with errno set. */
int rb_spool_open(void);

/* Write all @len bytes at @off (EINTR retried). Returns 0, or the errno (ENOSPC when nothing more fits). */
int rb_spool_write(int fd, const void *buf, size_t len, uint64_t off);

#endif
