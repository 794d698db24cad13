/*
 * elf_note.c - finding the GNU build-id note in an ELF note area (a
 * PT_NOTE segment, a .note section or /sys/kernel/notes).  Part of the
 * ELF library shared by rbrecord and rbdecode; bounded by @n, so corrupt
 * notes end the search instead of reading past the area.
 */
#include "elf_note.h"

#include <elf.h>
#include <string.h>

#define NOTE_ALIGN(n) (((uint64_t)(n) + 3) & ~(uint64_t)3)

static uint32_t word(const uint8_t *q, int msb)
{
	return msb ? (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 | (uint32_t)q[2] << 8 | q[3]
		   : (uint32_t)q[3] << 24 | (uint32_t)q[2] << 16 | (uint32_t)q[1] << 8 | q[0];
}

int rb_elf_note_build_id(const uint8_t *p, size_t n, int msb, uint8_t *id, size_t max)
{
	size_t off = 0;

	while (n - off >= 12) {
		uint32_t namesz = word(p + off, msb), descsz = word(p + off + 4, msb), type = word(p + off + 8, msb);
		uint64_t name = off + 12, desc = name + NOTE_ALIGN(namesz);

		if (desc > n || NOTE_ALIGN(descsz) > n - desc)
			break;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && memcmp(p + name, "GNU", 4) == 0) {
			size_t len = NOTE_ALIGN(descsz) < max ? (size_t)NOTE_ALIGN(descsz) : max;

			memcpy(id, p + desc, len);
			return (int)len;
		}
		off = (size_t)(desc + NOTE_ALIGN(descsz));
	}
	return 0;
}
