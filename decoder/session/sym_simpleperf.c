/*
 * sym_simpleperf.c - simpleperf's per-binary symbol tables (FILE, FILE2)
 * turned into tables of this decoder's symbol address space.
 *
 * simpleperf stores each symbol at its ELF virtual address (vaddr_in_file)
 * and finds it from a sample ip with Dso::IpToVaddrInFile (dso.cpp), one
 * rule per DsoType, from the map's start and pgoff and the binary's
 * min_vaddr and offset of min_vaddr, which the feature records:
 *   ELF, offset known   ip - map_start + pgoff - file_offset_of_min_vaddr + min_vaddr
 *   ELF, offset unknown ip - map_start + min_vaddr   (FILE entries before 2019)
 *   kernel module       ip - map_start - memory_offset_of_min_vaddr + min_vaddr
 *   dex                 ip - map_start + pgoff
 *   kernel              ip   (without a vmlinux, simpleperf's case here)
 *   symbol map, unknown ip
 * Each rule is one of symtab.h's address spaces moved by a constant, so a
 * symbol goes in at vaddr less that constant (mod 2^64, as simpleperf's
 * unsigned arithmetic) and a lookup through rb_symtab_map_ip finds what
 * simpleperf's would. An ELF with its offset lands in perf's own space
 * (file offsets), where a found binary's symbols would be.
 */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "sym_simpleperf.h"

struct load {
	struct rb_machine *m;
	struct rb_symtab_list *l;
	uint64_t shift;                 /* subtracted from each vaddr */
	int nomem;
	int given;
};

static void add_symbol(void *ctx, const struct pd_sp_symbol *s)
{
	struct load *ld = ctx;
	if (ld->l && rb_symtab_list_add(ld->l, s->vaddr - ld->shift, s->len, s->name, s->name_len) < 0)
		ld->nomem = 1;
}

/* The address space and the constant of simpleperf's rule for @f (see the top of the file). */
static enum rb_symtab_space space_of(const struct pd_sp_file *f, uint64_t *shift)
{
	*shift = 0;
	switch (f->type) {
	case PD_SP_DSO_ELF:
		if (f->offset_of_min_vaddr == PD_SP_NO_OFFSET) {
			*shift = f->min_vaddr;
			return RB_SYMTAB_MAP_OFFSET;
		}
		*shift = f->min_vaddr - f->offset_of_min_vaddr;
		return RB_SYMTAB_FILE_OFFSET;
	case PD_SP_DSO_KERNEL_MODULE:
		*shift = f->min_vaddr - f->offset_of_min_vaddr;   /* no offset: UINT64_MAX, as simpleperf uses it */
		return RB_SYMTAB_MAP_OFFSET;
	case PD_SP_DSO_DEX:
		return RB_SYMTAB_FILE_OFFSET;
	default:
		return RB_SYMTAB_IP;
	}
}

static void add_file(void *ctx, const struct pd_sp_file *f)
{
	struct load *ld = ctx;
	struct rb_symtab *t;
	char name[4200];
	if (ld->nomem || !f->nr_symbols)
		return;
	enum rb_symtab_space space = space_of(f, &ld->shift);
	if (!(ld->l = rb_symtab_list_new())) {
		ld->nomem = 1;
		return;
	}
	pd_sp_file_symbols(f, add_symbol, ld);
	snprintf(name, sizeof(name), "simpleperf %s feature", f->proto ? "file2" : "file");
	if (ld->nomem) {
		rb_symtab_list_free(ld->l);
	} else if (rb_symtab_list_finish(ld->l, space, name, &t) < 0) {
		ld->nomem = 1;
	} else {
		const char *path = f->path;
		/* simpleperf's JIT symbol map "perf-PID.map" is the object perf names executable anonymous memory */
		if (f->type == PD_SP_DSO_SYMBOL_MAP && !strchr(path, '/') && !strncmp(path, "perf-", 5)) {
			snprintf(name, sizeof(name), "/tmp/%s", path);
			path = name;
		}
		int kernel = f->type == PD_SP_DSO_KERNEL || f->type == PD_SP_DSO_KERNEL_MODULE;
		if (rb_machine_set_recorded_symbols(ld->m, path, kernel, t) < 0)
			ld->nomem = 1;
		else
			ld->given++;
	}
	ld->l = NULL;
}

int rb_sp_symbols_from(struct rb_machine *m, unsigned feat, const uint8_t *data, size_t size, uint64_t base,
		       struct pd_error *err)
{
	struct load ld = { .m = m };
	pd_sp_file_each(feat, data, size, base, add_file, &ld, err);
	if (err && err->code == PD_ERR_NOMEM)
		ld.nomem = 1;
	return ld.nomem ? -ENOMEM : ld.given;
}

int rb_sp_symbols_load(struct rb_machine *m, const struct pd_reader *r, struct pd_error *err)
{
	const uint8_t *d;
	size_t size;
	uint64_t offset;
	pd_error_clear(err);
	/* FILE when both are there, as simpleperf reads them */
	if (pd_reader_feature(r, PD_FEAT_SP_FILE, &d, &size, &offset))
		return rb_sp_symbols_from(m, PD_FEAT_SP_FILE, d, size, offset, err);
	if (pd_reader_feature(r, PD_FEAT_SP_FILE2, &d, &size, &offset))
		return rb_sp_symbols_from(m, PD_FEAT_SP_FILE2, d, size, offset, err);
	return 0;
}
