/*
 * sym_recorded.c - a symbol table from a list the recording itself carries
 * (simpleperf's file feature stores one per binary, so that a recording can
 * be symbolized where the binaries are not), for a dso whose file cannot be
 * found. The symbols go into the same tree as an ELF file's, named as perf
 * names an ELF symbol (symtab_insert_named: demangled the same way), so an
 * object shows the same names whether its file was found or not. Nothing is
 * fixed up: simpleperf wrote each symbol with its size, and where two start
 * together the tree answers as it does for any other table. Workload: a few
 * to a few thousand symbols per binary (simpleperf keeps only those its
 * samples hit), loaded once per recording.
 */
#include "sym_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct rb_symtab_list {
	struct tree t;
};

struct rb_symtab_list *rb_symtab_list_new(void)
{
	return calloc(1, sizeof(struct rb_symtab_list));
}

int rb_symtab_list_add(struct rb_symtab_list *l, uint64_t start, uint64_t len, const char *name, size_t namelen)
{
	if (!l || !name)
		return -EINVAL;
	return symtab_insert_named(&l->t, start, len, 1 /* STB_GLOBAL */, name, namelen);
}

int rb_symtab_list_finish(struct rb_symtab_list *l, enum rb_symtab_space space, const char *source,
			  struct rb_symtab **out)
{
	int err;
	*out = NULL;
	if (!l)
		return -EINVAL;
	err = symtab_from_tree(&l->t, source ? source : "", space == RB_SYMTAB_IP, out);
	if (!err && space == RB_SYMTAB_MAP_OFFSET)
		symtab_set_map_offset(*out);
	rb_symtab_list_free(l);
	return err;
}

void rb_symtab_list_free(struct rb_symtab_list *l)
{
	if (!l)
		return;
	symtab_tree_free(&l->t);
	free(l);
}
