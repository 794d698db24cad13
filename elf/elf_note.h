/*
 * elf_note.h - ELF note areas: the GNU build-id note, read the same way by
 * the recorder (when it writes HEADER_BUILD_ID) and the decoder (when it
 * matches the files of a recording).  Part of the ELF library shared by
 * rbrecord and rbdecode.
 */
#ifndef RB_ELF_NOTE_H
#define RB_ELF_NOTE_H

#include <stddef.h>
#include <stdint.h>

/* Notes the running machine wrote itself (its files, /sys/kernel/notes). */
#define RB_ELF_NATIVE_MSB (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)

/*
 * The first GNU build-id note in @n bytes of notes whose words are
 * big-endian if @msb; copies at most @max bytes of it to @id and returns
 * that length, 0 if there is none.  Like perf, the length is the
 * descriptor size rounded up to 4, so ids compare equal to the ones perf
 * record stored.
 */
int rb_elf_note_build_id(const uint8_t *p, size_t n, int msb, uint8_t *id, size_t max);

#endif
