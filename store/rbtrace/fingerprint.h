/*
 * fingerprint.h - what tells a recording apart from another at the same
 * path: its size and a hash of its first bytes (the perf.data header, its
 * attributes and the start of its data). The export notes it in
 * decode_stats; the rbtrace extension checks it before it decodes the
 * recording again, so that a database never answers from a file that
 * moved or changed under it.
 */
#ifndef RB_FINGERPRINT_H
#define RB_FINGERPRINT_H

#include <stdint.h>

#define RB_FINGERPRINT_BYTES 65536

/* The hash (16 hex digits) and size of the file at @path: 0, or -1 with errno. */
int rb_fingerprint(const char *path, char hex[17], uint64_t *size);

#endif
