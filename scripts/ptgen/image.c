/*
 * image.c - stage 2: what the traced program's code is. Reads the ELF's
 * executable PT_LOAD segment and its GNU build-id note, and classifies each
 * instruction with capstone into the kinds Intel PT distinguishes (ptgen.h
 * enum ikind). Decoded instructions are cached per address.
 */
#include "config.h"
#include <capstone/capstone.h>
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "ptgen.h"

#define NOT_DECODED 0xff

static int read_file(const char *path, uint8_t **data, size_t *size)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	size_t cap = 1 << 16, n = 0;
	uint8_t *p = malloc(cap);
	for (;;) {
		if (!p) {
			fclose(f);
			return -1;
		}
		size_t r = fread(p + n, 1, cap - n, f);
		n += r;
		if (n < cap)
			break;
		cap *= 2;
		p = realloc(p, cap);
	}
	fclose(f);
	*data = p;
	*size = n;
	return 0;
}

static void find_build_id(struct image *im, const uint8_t *note, size_t len)
{
	size_t off = 0;
	while (off + 12 <= len) {
		Elf64_Nhdr nh;
		memcpy(&nh, note + off, sizeof(nh));
		size_t name_off = off + 12, desc_off = name_off + ((nh.n_namesz + 3) & ~3u);
		size_t end = desc_off + ((nh.n_descsz + 3) & ~3u);
		if (end > len)
			return;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && !memcmp(note + name_off, "GNU", 4) &&
		    nh.n_descsz <= sizeof(im->build_id)) {
			memcpy(im->build_id, note + desc_off, nh.n_descsz);
			im->build_id_size = nh.n_descsz;
			return;
		}
		off = end;
	}
}

/* Executable PT_LOAD number @nth of @path (0: the first). */
static int image_open_seg(struct image *im, const char *path, unsigned nth, char *err, size_t errlen)
{
	memset(im, 0, sizeof(*im));
	snprintf(im->path, sizeof(im->path), "%s", path);
	if (read_file(path, &im->file, &im->file_size) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	Elf64_Ehdr eh;
	if (im->file_size < sizeof(eh) || (memcpy(&eh, im->file, sizeof(eh)), memcmp(eh.e_ident, ELFMAG, SELFMAG)) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64 ||
	    eh.e_phoff + (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr) > im->file_size) {
		snprintf(err, errlen, "%s: not an x86-64 ELF file", path);
		return -1;
	}
	im->entry = eh.e_entry;
	unsigned seen = 0;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, im->file + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_offset + ph.p_filesz > im->file_size)
			continue;
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) && seen++ == nth) {
			im->text_vaddr = ph.p_vaddr;
			im->text_size = ph.p_filesz;
			im->text_offset = ph.p_offset;
		} else if (ph.p_type == PT_NOTE) {
			find_build_id(im, im->file + ph.p_offset, ph.p_filesz);
		}
	}
	if (!im->text_size) {
		snprintf(err, errlen, "%s: no executable segment %u", path, nth);
		return -1;
	}
	im->cache = malloc(im->text_size * sizeof(*im->cache));
	if (!im->cache) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (uint64_t i = 0; i < im->text_size; i++)
		im->cache[i].kind = NOT_DECODED;
	csh h;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK) {
		snprintf(err, errlen, "capstone: cs_open failed");
		return -1;
	}
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	im->cs = malloc(sizeof(csh));
	memcpy(im->cs, &h, sizeof(h));
	return 0;
}

/* Each further executable segment (a module's, in the stand-in kernel) is an image chained by next. */
int image_open(struct image *im, const char *path, char *err, size_t errlen)
{
	if (image_open_seg(im, path, 0, err, errlen) < 0)
		return -1;
	struct image *last = im;
	for (unsigned k = 1;; k++) {
		struct image *n = calloc(1, sizeof(*n));
		char e2[512];
		if (!n || image_open_seg(n, path, k, e2, sizeof(e2)) < 0) {
			if (n)
				image_close(n);
			free(n);
			return 0;
		}
		last->next = n;
		last->owns_next = 1;
		last = n;
	}
}

static int classify(const cs_insn *ci, struct insn *out)
{
	const cs_x86 *x = &ci->detail->x86;
	int imm = x->op_count == 1 && x->operands[0].type == X86_OP_IMM;
	out->target = imm ? (uint64_t)x->operands[0].imm : 0;
	switch (ci->id) {
	case X86_INS_JMP:
		return imm ? IK_JMP : IK_JMP_IND;
	case X86_INS_CALL:
		return imm ? IK_CALL : IK_CALL_IND;
	case X86_INS_RET:
		return IK_RET;
	case X86_INS_SYSCALL:
		return IK_SYSCALL;
	case X86_INS_SYSRET:
		return IK_SYSRET;
	case X86_INS_LJMP: case X86_INS_LCALL: case X86_INS_RETF: case X86_INS_IRET:
	case X86_INS_IRETD: case X86_INS_IRETQ: case X86_INS_SYSENTER: case X86_INS_SYSEXIT:
	case X86_INS_INT: case X86_INS_INT3: case X86_INS_INTO:
		return -1;   /* far transfers the fixture programs do not use */
	}
	for (unsigned g = 0; g < ci->detail->groups_count; g++)
		if (ci->detail->groups[g] == X86_GRP_JUMP)
			return IK_JCC;   /* every other member of the jump group is conditional */
	return IK_OTHER;
}

/*
 * PTWRITE with a register operand, F3 [REX] 0F AE /4 (mod 3), which
 * capstone 4 does not decode: its length (0 if @p is not one) and operand
 * size (REX.W: 8 bytes).
 */
static unsigned ptwrite_len(const uint8_t *p, size_t n, uint8_t *bytes)
{
	size_t i = 1;
	if (n < 4 || p[0] != 0xf3)
		return 0;
	*bytes = 4;
	if (p[i] >= 0x40 && p[i] <= 0x4f)
		*bytes = p[i++] & 8 ? 8 : 4;
	if (i + 3 > n || p[i] != 0x0f || p[i + 1] != 0xae || ((p[i + 2] >> 3) & 7) != 4 || (p[i + 2] >> 6) != 3)
		return 0;
	return (unsigned)(i + 3);
}

int image_insn(struct image *im, uint64_t ip, struct insn *out)
{
	if (ip < im->text_vaddr || ip >= im->text_vaddr + im->text_size)
		return im->next ? image_insn(im->next, ip, out) : -1;
	struct insn *c = &im->cache[ip - im->text_vaddr];
	if (c->kind == NOT_DECODED) {
		csh h;
		memcpy(&h, im->cs, sizeof(h));
		const uint8_t *code = im->file + im->text_offset + (ip - im->text_vaddr);
		size_t avail = im->text_size - (ip - im->text_vaddr);
		unsigned plen = ptwrite_len(code, avail, &c->ptw_bytes);
		if (plen) {
			c->ip = ip;
			c->size = (uint8_t)plen;
			c->target = 0;
			c->kind = IK_PTWRITE;
			*out = *c;
			return 0;
		}
		cs_insn *ci;
		if (cs_disasm(h, code, avail < 16 ? avail : 16, ip, 1, &ci) != 1)
			return -1;
		int k = classify(ci, c);
		c->ip = ip;
		c->size = (uint8_t)ci->size;
		cs_free(ci, 1);
		if (k < 0)
			return -1;
		c->kind = (uint8_t)k;
	}
	*out = *c;
	return 0;
}

void image_relocate(struct image *im, uint64_t delta)
{
	im->text_vaddr += delta;
	im->entry += delta;
	for (uint64_t i = 0; i < im->text_size; i++)   /* decoded at the old addresses: targets moved */
		im->cache[i].kind = NOT_DECODED;
}

int image_runnable_copy(struct image *im, const char *out, char *err, size_t errlen)
{
	static const uint8_t nops[][7] = { { 0 }, { 0x90 }, { 0x66, 0x90 }, { 0x0f, 0x1f, 0x00 }, { 0x0f, 0x1f, 0x40, 0x00 },
					   { 0x0f, 0x1f, 0x44, 0x00, 0x00 }, { 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 } };
	uint8_t *copy = malloc(im->file_size);
	if (!copy) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	memcpy(copy, im->file, im->file_size);
	int n = 0;
	/* a linear sweep of the text: the fixture programs keep their data elsewhere */
	for (uint64_t ip = im->text_vaddr; ip < im->text_vaddr + im->text_size;) {
		struct insn in;
		if (image_insn(im, ip, &in) < 0) {
			ip++;
			continue;
		}
		if (in.kind == IK_PTWRITE && in.size < sizeof(nops) / sizeof(nops[0])) {
			memcpy(copy + im->text_offset + (ip - im->text_vaddr), nops[in.size], in.size);
			n++;
		}
		ip += in.size;
	}
	if (n) {
		FILE *f = fopen(out, "wb");
		int ok = f && fwrite(copy, 1, im->file_size, f) == im->file_size;
		if (f && fclose(f) != 0)
			ok = 0;
		if (!ok || chmod(out, 0700) < 0) {
			snprintf(err, errlen, "cannot write %s", out);
			free(copy);
			return -1;
		}
	}
	free(copy);
	return n;
}

void image_close(struct image *im)
{
	if (im->owns_next) {
		image_close(im->next);
		free(im->next);
	}
	if (im->cs) {
		csh h;
		memcpy(&h, im->cs, sizeof(h));
		cs_close(&h);
	}
	free(im->cs);
	free(im->cache);
	free(im->file);
	memset(im, 0, sizeof(*im));
}
