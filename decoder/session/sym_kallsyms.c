/*
 * sym_kallsyms.c - the kernel's symbols from a kallsyms listing
 * (/proc/kallsyms, or a copy saved in perf's build-id cache), beside
 * sym_find.c and sym_elf.c, which load ELF objects: the session
 * (machine.c) loads [kernel.kallsyms] from it unless --vmlinux gives the
 * kernel's image, and a kernel module's symbols. Lines are parsed as perf's kallsyms__parse
 * reads them and kept by type in the symbol tree (symtab.c), their ends
 * and aliases fixed up with the kernel/module rule; then, as perf's
 * dso__load_kallsyms splits them, the kernel's table drops the module
 * symbols and the entry trampoline, and a module's table takes only its
 * own symbols, relative to its map start.
 */
#define _GNU_SOURCE
#include "sym_internal.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KSYM_NAME_MAX 513            /* perf's kallsyms name buffer, KSYM_NAME_LEN + 1 */
#define ENTRY_TRAMPOLINE "__entry_SYSCALL_64_trampoline"

/* ------------------------------------------------------------------ */
/* kallsyms (perf's kallsyms__parse + dso__load_kallsyms)              */

struct kin {
	const char *p;
	size_t n, pos;
};

static int kgetc(struct kin *in)
{
	return in->pos < in->n ? (unsigned char)in->p[in->pos++] : -1;
}

static void kskip_line(struct kin *in)
{
	int ch;

	while ((ch = kgetc(in)) >= 0 && ch != '\n')
		;
}

/* The value of a hex digit (either case), -1 for any other character. */
static int hex_digit(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	ch |= 0x20;
	return ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

/* Hex digits; returns the character that ended them, -2 if there were none, -1 at end of input. */
static int kget_hex(struct kin *in, uint64_t *v)
{
	int ch, d, first = 1;

	*v = 0;
	for (;;) {
		ch = kgetc(in);
		if (ch < 0)
			return ch;
		if ((d = hex_digit(ch)) < 0)
			return first ? -2 : ch;
		*v = (*v << 4) | (uint64_t)d;
		first = 0;
	}
}

/*
 * perf keeps text, weak, data and bss symbols (either case); 'W' alone is
 * weak, upper case global. @name has @len bytes, not terminated.
 */
static int kallsyms_add(struct tree *t, uint64_t addr, int type, const char *name, size_t len)
{
	int up = type >= 'a' && type <= 'z' ? type - 'a' + 'A' : type;
	uint8_t bind = type == 'W' ? STB_WEAK : type >= 'A' && type <= 'Z' ? STB_GLOBAL : STB_LOCAL;

	if ((up != 'T' && up != 'W' && up != 'D' && up != 'B') || (len && name[0] == '$'))
		return 0;
	return symtab_tree_insert(t, addr, 0, bind, name, len);
}

/*
 * Line by line as perf reads it: "addr type name[\t[module]]", the name
 * running to the end of the line but at most 513 bytes (the rest of a
 * longer line is then read as the next record).
 */
static int kallsyms_parse(struct tree *t, struct kin *in)
{
	while (in->pos < in->n) {
		uint64_t addr;
		int type;
		size_t room, len;
		const char *name, *nl;

		if (kget_hex(in, &addr) != ' ') {
			kskip_line(in);
			continue;
		}
		type = kgetc(in);
		if (kgetc(in) != ' ') {
			kskip_line(in);
			continue;
		}
		/* the name: up to the newline (consumed) or KSYM_NAME_MAX bytes, and a NUL ends it early */
		name = in->p + in->pos;
		room = in->n - in->pos < KSYM_NAME_MAX ? in->n - in->pos : KSYM_NAME_MAX;
		nl = memchr(name, '\n', room);
		len = nl ? (size_t)(nl - name) : room;
		in->pos += len + (nl != NULL);
		if (kallsyms_add(t, addr, type, name, strnlen(name, len)))
			return -ENOMEM;
	}
	return 0;
}

/* Module symbols go to module maps and the entry trampoline is dropped (x86-64) in perf's split. */
static void kallsyms_split(struct tree *t)
{
	size_t i = symtab_tree_first(t), nx;

	for (; i != NONE; i = nx) {
		nx = symtab_tree_next(t, i);
		if (strchr(node_name(t, i), '\t') || strcmp(node_name(t, i), ENTRY_TRAMPOLINE) == 0)
			symtab_tree_erase(t, i);
	}
}

/* /proc files report size 0, so read to the end instead of mapping. */
static int slurp(const char *path, char **buf, size_t *len, char *msg, size_t msglen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 0, n = 0;
	char *b = NULL;
	ssize_t r;

	if (fd < 0)
		return symtab_fail(msg, msglen, -errno, "%s: %s", path, strerror(errno));
	for (;;) {
		if (symtab_grow((void **)&b, &cap, n + 65536, 1)) {
			close(fd);
			free(b);
			return symtab_fail(msg, msglen, -ENOMEM, "%s: out of memory", path);
		}
		r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	if (r < 0) {
		r = -errno;
		close(fd);
		free(b);
		return symtab_fail(msg, msglen, (int)r, "%s: read: %s", path, strerror((int)-r));
	}
	close(fd);
	*buf = b;
	*len = n;
	return 0;
}

/* Everything up to perf's split: parse, end fix-up with the module rule, alias merge. */
static int kallsyms_tree(struct tree *t, const char *path, char *msg, size_t msglen)
{
	struct kin in = { NULL, 0, 0 };
	struct mfile f = { NULL, 0 };
	char *buf = NULL;
	int err;

	memset(t, 0, sizeof(*t));
	/* a saved copy (perf's build-id cache) is mapped; /proc/kallsyms says size 0 and is read */
	if (sym_elf_mfile_open(&f, path, NULL, 0) == 0) {
		in.p = (const char *)f.p;
		in.n = f.size;
	} else if ((err = slurp(path, &buf, &in.n, msg, msglen))) {
		return err;
	} else {
		in.p = buf;
	}
	err = kallsyms_parse(t, &in);
	sym_elf_mfile_close(&f);
	free(buf);
	if (err)
		return symtab_fail(msg, msglen, err, "%s: out of memory", path);
	if (t->live == 0)
		return symtab_fail(msg, msglen, -ENOEXEC, "%s: no kallsyms symbols (not a kallsyms file?)", path);
	symtab_fixup_end(t, 1);
	symtab_fixup_duplicate(t);
	return 0;
}

static int kallsyms_args(struct rb_symtab **out, const char *path, char *msg, size_t msglen)
{
	if (msg && msglen)
		msg[0] = '\0';
	if (out)
		*out = NULL;
	if (!out || !path || !*path)
		return symtab_fail(msg, msglen, -EINVAL, "rb_symtab_load_kallsyms: %s", out ? "no path" : "no result pointer");
	return 0;
}

int rb_symtab_load_kallsyms(struct rb_symtab **out, const char *path, char *msg, size_t msglen)
{
	struct tree t;
	int err;

	memset(&t, 0, sizeof(t));
	if ((err = kallsyms_args(out, path, msg, msglen)) || (err = kallsyms_tree(&t, path, msg, msglen))) {
		symtab_tree_free(&t);
		return err;
	}
	kallsyms_split(&t);
	if ((err = symtab_from_tree(&t, path, 1, out)))
		symtab_fail(msg, msglen, err, "%s: out of memory", path);
	symtab_tree_free(&t);
	return err;
}

/* "name\t[module]": the length of name if the tag is exactly "[module]", else 0. */
static size_t module_prefix(const char *name, const char *module)
{
	const char *tab = strchr(name, '\t');
	size_t ml = strlen(module);

	if (!tab || tab[1] != '[' || strncmp(tab + 2, module, ml) != 0 || strcmp(tab + 2 + ml, "]") != 0)
		return 0;
	return (size_t)(tab - name);
}

/*
 * perf moves a module's symbols, in address order, into a fresh tree of
 * the module's dso, relative to the module map's start (map_ip with pgoff
 * 0) and without the "\t[module]" tag.
 */
static int kallsyms_move_module(struct tree *from, struct tree *to, const char *module, uint64_t map_start)
{
	size_t i, len;

	memset(to, 0, sizeof(*to));
	for (i = symtab_tree_first(from); i != NONE; i = symtab_tree_next(from, i)) {
		const struct rb_sym *s = &N(from, i).s;

		if (!(len = module_prefix(node_name(from, i), module)))
			continue;
		if (symtab_tree_insert(to, s->start - map_start, 0, s->binding, node_name(from, i), len))
			return -ENOMEM;
		N(to, to->n - 1).s.end = s->end - map_start;
	}
	return 0;
}

int rb_symtab_load_kallsyms_module(struct rb_symtab **out, const char *path, const char *module,
				   uint64_t map_start, char *msg, size_t msglen)
{
	struct tree all, mod;
	int err;

	memset(&mod, 0, sizeof(mod));
	if ((err = kallsyms_args(out, path, msg, msglen)))
		return err;
	if (!module || !*module)
		return symtab_fail(msg, msglen, -EINVAL, "rb_symtab_load_kallsyms_module: no module name");
	if (!(err = kallsyms_tree(&all, path, msg, msglen)) &&
	    !(err = kallsyms_move_module(&all, &mod, module, map_start)) &&
	    mod.live == 0)
		err = symtab_fail(msg, msglen, -ENOENT, "%s: no symbols of module [%s]", path, module);
	if (!err && (err = symtab_from_tree(&mod, path, 0, out)))
		symtab_fail(msg, msglen, err, "%s: out of memory", path);
	symtab_tree_free(&all);
	symtab_tree_free(&mod);
	return err;
}
