/*
 * symtab.c - address-to-symbol resolution that agrees with Linux perf 6.1.
 *
 * rbtrace's exports must carry the same symbol names, sym_start/sym_end and
 * sym_offset as perf's export-to-sqlite.py.  These files reproduce the
 * behaviour of perf 6.1 (tools/perf/util/symbol.c, symbol-elf.c, dso.c,
 * map.c, as shipped in Debian's linux-perf 6.1.x): which files it reads,
 * which symbols it keeps, how it rebases them, how it fixes up their ends
 * and drops aliases, the @plt symbols it synthesizes, and - because
 * symbols can overlap - even the shape of the red-black tree it searches,
 * since that decides which of two overlapping symbols a lookup returns.
 * It was written from a description of that behaviour; no perf code is
 * copied.
 *
 * Workload: a few ELF files per recording (up to ~10^5 symbols each) and
 * one kallsyms listing (~1.5*10^5 lines) are loaded once; then millions of
 * sample ips are looked up, O(log n) each.  Input files may come from other
 * machines (32-bit, big-endian) and may be corrupt, so every read is bounded
 * by the read-only mapping of the file and inconsistencies become error
 * messages, never crashes.  Library code prints nothing.
 *
 * A table is made in stages, one file each (sym_internal.h has what they
 * share):
 *   sym_find.c      which files to read for an ELF object: .gnu_debuglink,
 *                   perf's build-id cache, /usr/lib/debug by path and its
 *                   .build-id tree, the file itself, all under --symfs
 *   sym_elf.c       reading them: ELF headers and sections, build-ids, the
 *                   symbols perf keeps from .symtab / .dynsym, and the @plt
 *                   ones
 *   sym_kallsyms.c  the kernel's and its modules' symbols from kallsyms
 *   sym_recorded.c  symbols a recording carries (simpleperf's), from a list
 *   symtab.c        (this file) the tree they go into, perf's fix-ups of
 *                   ends and aliases, the names perf shows (demangling), the
 *                   finished table and its lookups, and
 *                   rb_symtab_load_elf_opts, which runs sym_find.c and
 *                   sym_elf.c
 */
#define _GNU_SOURCE
#include "sym_internal.h"

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE 4096u

/* ------------------------------------------------------------------ */
/* messages                                                            */

int symtab_fail(char *msg, size_t msglen, int err, const char *fmt, ...)
{
	va_list ap;

	if (msg && msglen) {
		va_start(ap, fmt);
		vsnprintf(msg, msglen, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* ------------------------------------------------------------------ */
/* the symbol tree: a red-black tree keyed by start, like perf's        */
/*
 * perf keeps a dso's symbols in an rbtree (equal starts go right) and
 * searches it top-down, returning the first node on the path that
 * contains the address.  When symbols overlap, the answer depends on the
 * tree's shape, so we build the same tree: the textbook insert and erase
 * (successor replacement, the four standard fix-up cases) give exactly
 * the shapes of the kernel's lib/rbtree.c.  The tree stays live after
 * loading because perf's exporter keeps inserting "unknown" symbols into
 * it, which reshapes it.  Nodes sit in fixed-size chunks so that pointers
 * handed out stay valid while the tree grows.  Symbol tables mostly come
 * sorted (kallsyms always): a node starting at or past the last one is
 * linked under it without a descent, and while every node came that way
 * index order is tree order, so walks need no tree steps.
 * struct node, struct tree, np / N and node_name are in sym_internal.h.
 */

static int is_red(const struct tree *t, size_t i)
{
	return i != NONE && N(t, i).red;
}

void symtab_tree_free(struct tree *t)
{
	size_t i;

	for (i = 0; i < t->nchunks; i++)
		free(t->chunk[i]);
	free(t->chunk);
	free(t->str);
	memset(t, 0, sizeof(*t));
}

int symtab_grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 64;
	void *np;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2 / elem)
			return -ENOMEM;
		ncap *= 2;
	}
	np = realloc(*p, ncap * elem);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = ncap;
	return 0;
}

static int arena_add(struct tree *t, const char *s, size_t len, size_t *off)
{
	if (len >= SIZE_MAX - t->slen - 1)
		return -ENOMEM;
	if (symtab_grow((void **)&t->str, &t->scap, t->slen + len + 1, 1))
		return -ENOMEM;
	memcpy(t->str + t->slen, s, len);
	t->str[t->slen + len] = '\0';
	*off = t->slen;
	t->slen += len + 1;
	return 0;
}

/* A fresh node at index t->n (the caller links it). */
static struct node *node_alloc(struct tree *t)
{
	struct node *c;

	if (t->n == t->nchunks * CHUNK) {
		if (symtab_grow((void **)&t->chunk, &t->chunk_cap, t->nchunks + 1, sizeof(*t->chunk)) ||
		    !(c = malloc(CHUNK * sizeof(*c))))
			return NULL;
		t->chunk[t->nchunks++] = c;
	}
	if (t->n == 0)
		t->root = NONE;
	return np(t, t->n);
}

static void set_child(struct tree *t, size_t parent, size_t old, size_t new)
{
	if (parent == NONE)
		t->root = new;
	else if (N(t, parent).left == old)
		N(t, parent).left = new;
	else
		N(t, parent).right = new;
	if (new != NONE)
		N(t, new).parent = parent;
}

static void rotate_left(struct tree *t, size_t x)
{
	size_t y = N(t, x).right;

	N(t, x).right = N(t, y).left;
	if (N(t, y).left != NONE)
		N(t, N(t, y).left).parent = x;
	set_child(t, N(t, x).parent, x, y);
	N(t, y).left = x;
	N(t, x).parent = y;
}

static void rotate_right(struct tree *t, size_t x)
{
	size_t y = N(t, x).left;

	N(t, x).left = N(t, y).right;
	if (N(t, y).right != NONE)
		N(t, N(t, y).right).parent = x;
	set_child(t, N(t, x).parent, x, y);
	N(t, y).right = x;
	N(t, x).parent = y;
}

/* One step of insert rebalancing; returns the node to continue from, or NONE. */
static size_t insert_step(struct tree *t, size_t z)
{
	size_t p = N(t, z).parent, g = N(t, p).parent;
	int left = (p == N(t, g).left);
	size_t u = left ? N(t, g).right : N(t, g).left;

	if (is_red(t, u)) {
		N(t, p).red = 0;
		N(t, u).red = 0;
		N(t, g).red = 1;
		return g;
	}
	if (z == (left ? N(t, p).right : N(t, p).left)) {
		z = p;
		if (left)
			rotate_left(t, z);
		else
			rotate_right(t, z);
		p = N(t, z).parent;
	}
	N(t, p).red = 0;
	N(t, g).red = 1;
	if (left)
		rotate_right(t, g);
	else
		rotate_left(t, g);
	return NONE;
}

/*
 * Link node z (already filled in) below its place by start; equal starts go
 * right. A start at or past the last node's descends right all the way to
 * that node, so sorted input (kallsyms, most symbol tables) links there
 * without the descent: the same place, the same tree.
 */
static void tree_link(struct tree *t, size_t z)
{
	size_t *link = &t->root, parent = NONE;

	if (t->root != NONE && !t->last_ok) {
		for (t->last = t->root; N(t, t->last).right != NONE;)
			t->last = N(t, t->last).right;
		t->last_ok = 1;
	}
	if (t->root != NONE && N(t, z).s.start >= N(t, t->last).s.start) {
		parent = t->last;
		link = &N(t, parent).right;
	}
	while (*link != NONE) {
		parent = *link;
		link = N(t, z).s.start < N(t, parent).s.start ? &N(t, parent).left : &N(t, parent).right;
	}
	if (t->root == NONE || N(t, z).s.start >= N(t, t->last).s.start) {
		t->last = z;
		t->last_ok = 1;
	} else {
		t->unsorted = 1;
	}
	*link = z;
	N(t, z).parent = parent;
	N(t, z).left = N(t, z).right = NONE;
	N(t, z).red = 1;
	while (z != NONE && is_red(t, N(t, z).parent))
		z = insert_step(t, z);
	N(t, t->root).red = 0;
	t->live++;
}

/* perf's symbol__new: a zero length means end == start. */
int symtab_tree_insert(struct tree *t, uint64_t start, uint64_t len, uint8_t binding,
		       const char *name, size_t namelen)
{
	struct node *nd;
	size_t off;

	if (arena_add(t, name, namelen, &off) || !(nd = node_alloc(t)))
		return -ENOMEM;
	memset(nd, 0, sizeof(*nd));
	nd->s.start = start;
	nd->s.end = len ? start + len : start;
	nd->s.binding = binding;
	nd->name = off;
	tree_link(t, t->n++);
	return 0;
}

/* The first live node from index i on (index order is tree order while !t->unsorted). */
static size_t live_from(const struct tree *t, size_t i)
{
	while (i < t->n && N(t, i).dead)
		i++;
	return i < t->n ? i : NONE;
}

size_t symtab_tree_first(const struct tree *t)
{
	size_t i = t->n ? t->root : NONE;

	if (!t->unsorted)
		return live_from(t, 0);
	while (i != NONE && N(t, i).left != NONE)
		i = N(t, i).left;
	return i;
}

size_t symtab_tree_next(const struct tree *t, size_t i)
{
	size_t p;

	if (!t->unsorted)
		return live_from(t, i + 1);
	if (N(t, i).right != NONE) {
		i = N(t, i).right;
		while (N(t, i).left != NONE)
			i = N(t, i).left;
		return i;
	}
	for (p = N(t, i).parent; p != NONE && i == N(t, p).right; p = N(t, p).parent)
		i = p;
	return p;
}

/* One step of erase rebalancing at x (possibly NONE) under parent xp; returns 1 when done. */
static int erase_step(struct tree *t, size_t *x, size_t *xp)
{
	int left = (*x == N(t, *xp).left);
	size_t w = left ? N(t, *xp).right : N(t, *xp).left;

	if (is_red(t, w)) {
		N(t, w).red = 0;
		N(t, *xp).red = 1;
		left ? rotate_left(t, *xp) : rotate_right(t, *xp);
		w = left ? N(t, *xp).right : N(t, *xp).left;
	}
	if (!is_red(t, N(t, w).left) && !is_red(t, N(t, w).right)) {
		N(t, w).red = 1;
		*x = *xp;
		*xp = N(t, *x).parent;
		return 0;
	}
	if (!is_red(t, left ? N(t, w).right : N(t, w).left)) {
		N(t, left ? N(t, w).left : N(t, w).right).red = 0;
		N(t, w).red = 1;
		left ? rotate_right(t, w) : rotate_left(t, w);
		w = left ? N(t, *xp).right : N(t, *xp).left;
	}
	N(t, w).red = N(t, *xp).red;
	N(t, *xp).red = 0;
	N(t, left ? N(t, w).right : N(t, w).left).red = 0;
	left ? rotate_left(t, *xp) : rotate_right(t, *xp);
	*x = t->root;
	return 1;
}

void symtab_tree_erase(struct tree *t, size_t z)
{
	size_t y = z, x, xp;
	int y_red = N(t, z).red;

	if (t->last_ok && t->last == z)
		t->last_ok = 0;
	N(t, z).dead = 1;

	if (N(t, z).left == NONE || N(t, z).right == NONE) {
		x = N(t, z).left == NONE ? N(t, z).right : N(t, z).left;
		xp = N(t, z).parent;
		set_child(t, xp, z, x);
	} else {
		for (y = N(t, z).right; N(t, y).left != NONE; y = N(t, y).left)
			;
		y_red = N(t, y).red;
		x = N(t, y).right;
		xp = y;
		if (N(t, y).parent != z) {
			xp = N(t, y).parent;
			set_child(t, xp, y, x);
			N(t, y).right = N(t, z).right;
			N(t, N(t, y).right).parent = y;
		}
		set_child(t, N(t, z).parent, z, y);
		N(t, y).left = N(t, z).left;
		N(t, N(t, y).left).parent = y;
		N(t, y).red = N(t, z).red;
	}
	if (!y_red)
		while (x != t->root && !is_red(t, x) && !erase_step(t, &x, &xp))
			;
	if (x != NONE)
		N(t, x).red = 0;
	N(t, z).left = N(t, z).right = N(t, z).parent = NONE;
	t->live--;
}

/* perf's symbols__find: [start, end), or exactly start for a zero-size symbol. */
static const struct rb_sym *tree_find(const struct tree *t, uint64_t addr)
{
	size_t i = t->n ? t->root : NONE;

	while (i != NONE) {
		const struct rb_sym *s = &N(t, i).s;

		if (addr < s->start)
			i = N(t, i).left;
		else if (addr > s->end || (addr == s->end && addr != s->start))
			i = N(t, i).right;
		else
			return s;
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* perf's fix-ups                                                      */

static uint64_t roundup_page(uint64_t x)
{
	return (x + (PAGE - 1)) / PAGE * PAGE;   /* wraps like perf's u64 roundup() */
}

/*
 * Zero-size symbols (kallsyms has only those, ELF asm functions often are)
 * end where the next one starts; in kallsyms a symbol followed by the
 * kernel/module boundary gets one page instead, and the last symbol ends a
 * page after its own page.
 */
void symtab_fixup_end(struct tree *t, int kallsyms)
{
	size_t prev = symtab_tree_first(t), cur;
	int prev_mod = -1, cur_mod;   /* the name has a "[module]" tag; -1: not looked at */

	if (prev == NONE)
		return;
	for (cur = symtab_tree_next(t, prev); cur != NONE; prev = cur, cur = symtab_tree_next(t, cur), prev_mod = cur_mod) {
		struct rb_sym *p = &N(t, prev).s;

		cur_mod = -1;
		if (p->end != p->start)
			continue;
		if (kallsyms) {
			if (prev_mod < 0)
				prev_mod = strchr(node_name(t, prev), '[') != NULL;
			cur_mod = strchr(node_name(t, cur), '[') != NULL;
		}
		if (kallsyms && prev_mod != cur_mod)
			p->end = roundup_page(p->end + PAGE);
		else
			p->end = N(t, cur).s.start;
	}
	if (N(t, prev).s.end == N(t, prev).s.start)
		N(t, prev).s.end = roundup_page(N(t, prev).s.start) + PAGE;
}

static size_t underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* perf's preference among symbols at one address; 1 keeps a, 0 keeps b. */
static int prefer_a(const struct tree *t, size_t ia, size_t ib)
{
	const struct rb_sym *a = &N(t, ia).s, *b = &N(t, ib).s;
	int64_t la = (int64_t)(a->end - a->start), lb = (int64_t)(b->end - b->start);
	const char *na = node_name(t, ia), *nb = node_name(t, ib);
	size_t ua, ub;

	if (lb == 0 && la > 0)
		return 1;
	if (la == 0 && lb > 0)
		return 0;
	if ((a->binding == STB_WEAK) != (b->binding == STB_WEAK))
		return b->binding == STB_WEAK;
	if ((a->binding == STB_GLOBAL) != (b->binding == STB_GLOBAL))
		return a->binding == STB_GLOBAL;
	ua = underscores(na);
	ub = underscores(nb);
	if (ua != ub)
		return ua < ub;
	if (strlen(na) != strlen(nb))
		return strlen(na) > strlen(nb);
	/* generic arch tie-break: avoid the kernel's "SyS" syscall aliases */
	return strncmp(na, "SyS", 3) != 0 && strncmp(na, "compat_SyS", 10) != 0;
}

/* Keep one symbol per start address, walking pairs in tree order as perf does. */
void symtab_fixup_duplicate(struct tree *t)
{
	size_t cur, nd = symtab_tree_first(t);

	while (nd != NONE) {
		cur = nd;
		for (;;) {
			nd = symtab_tree_next(t, cur);
			if (nd == NONE || N(t, cur).s.start != N(t, nd).s.start)
				break;
			if (prefer_a(t, cur, nd)) {
				symtab_tree_erase(t, nd);
				continue;
			}
			nd = symtab_tree_next(t, cur);
			symtab_tree_erase(t, cur);
			break;
		}
	}
}

/* ------------------------------------------------------------------ */
/* the finished table                                                  */

struct rb_symtab {
	struct tree t;                /* live: perf's export adds "unknown" symbols */
	const struct rb_sym **sorted; /* the loaded symbols by start */
	size_t n;
	struct rb_symtab_last last;   /* perf's per-dso last-lookup cache */
	char *source;
	int kernel;                   /* map_ip is the identity */
	int map_offset;               /* map_ip is ip - map_start (RB_SYMTAB_MAP_OFFSET) */
	/*
	 * Memo of tree lookups (not perf's cache: it only saves the tree walk,
	 * the answer is the tree's). Any insertion empties it. Hot addresses
	 * (the same kernel and library code sampled again and again) are then
	 * one probe instead of ~18 dependent loads in a 200k-symbol tree.
	 */
	struct memo { uint64_t addr; const struct rb_sym *sym; } *memo;
	size_t memo_n;                /* tree size when the memo was last valid */
	/*
	 * No address is in two symbols: then every lookup has one answer
	 * whatever the tree's shape, and an "unknown" symbol added at a missed
	 * address changes no other answer, so the memo outlives insertions
	 * (a stripped binary gets thousands of them: one emptying each was
	 * most of the lookup time).
	 */
	int disjoint;
};

#define MEMO_SLOTS 16384

static struct memo *memo_slot(struct rb_symtab *t, uint64_t addr)
{
	return &t->memo[(addr * 0x9e3779b97f4a7c15ULL) >> 50];
}

static const struct rb_sym *memo_find(struct rb_symtab *t, uint64_t addr)
{
	if (!t->memo) {
		if (!(t->memo = calloc(MEMO_SLOTS, sizeof(*t->memo))))
			return tree_find(&t->t, addr);
		t->memo_n = t->t.n;
	} else if (t->memo_n != t->t.n) {
		if (!t->disjoint)
			memset(t->memo, 0, MEMO_SLOTS * sizeof(*t->memo));
		t->memo_n = t->t.n;
	}
	struct memo *m = memo_slot(t, addr);
	if (m->sym && m->addr == addr)
		return m->sym;
	const struct rb_sym *s = tree_find(&t->t, addr);
	m->addr = addr;
	m->sym = s;
	return s;
}

void rb_symtab_free(struct rb_symtab *t)
{
	if (!t)
		return;
	symtab_tree_free(&t->t);
	free(t->sorted);
	free(t->memo);
	free(t->source);
	free(t);
}

void symtab_set_map_offset(struct rb_symtab *t)
{
	t->map_offset = 1;
}

/* Take over the loaded tree: give every symbol its name and list them in order. */
int symtab_from_tree(struct tree *t, const char *source, int kernel, struct rb_symtab **out)
{
	struct rb_symtab *s = calloc(1, sizeof(*s));
	size_t i, k = 0;

	if (!s || !(s->sorted = calloc(t->live ? t->live : 1, sizeof(*s->sorted))) ||
	    !(s->source = strdup(source))) {
		rb_symtab_free(s);
		return -ENOMEM;
	}
	uint64_t reach = 0;           /* end of the symbols so far, a zero-size one reaching its start + 1 */
	s->disjoint = 1;
	for (i = symtab_tree_first(t); i != NONE; i = symtab_tree_next(t, i)) {
		const struct rb_sym *y = &N(t, i).s;
		N(t, i).s.name = node_name(t, i);
		s->sorted[k++] = y;
		if (y->end < y->start)
			continue;         /* holds no address */
		uint64_t hi = y->end > y->start ? y->end : y->start + 1;
		if (k > 1 && y->start < reach)
			s->disjoint = 0;
		if (hi > reach)
			reach = hi;
	}
	s->n = k;
	s->kernel = kernel;
	s->t = *t;
	memset(t, 0, sizeof(*t));
	*out = s;
	return 0;
}

size_t rb_symtab_count(const struct rb_symtab *t)
{
	return t ? t->n : 0;
}

const struct rb_sym *rb_symtab_at(const struct rb_symtab *t, size_t i)
{
	return t && i < t->n ? t->sorted[i] : NULL;
}

const struct rb_sym *rb_symtab_find(const struct rb_symtab *t, uint64_t addr)
{
	return t ? tree_find(&t->t, addr) : NULL;
}

/* perf's dso__find_symbol: a repeated address is answered from the cache. */
const struct rb_sym *rb_symtab_lookup(struct rb_symtab *t, uint64_t addr)
{
	if (!t)
		return NULL;
	if (t->last.addr != addr || !t->last.sym) {
		t->last.addr = addr;
		t->last.sym = memo_find(t, addr);
	}
	return t->last.sym;
}

const struct rb_sym *rb_symtab_lookup_fresh(struct rb_symtab *t, uint64_t addr, int *fresh)
{
	*fresh = t && (t->last.addr != addr || !t->last.sym);
	return rb_symtab_lookup(t, addr);
}

struct rb_symtab_last *rb_symtab_last(struct rb_symtab *t)
{
	return &t->last;
}

size_t rb_symtab_version(const struct rb_symtab *t)
{
	return t ? t->t.n : 0;
}

/*
 * perf's exporter on a miss: symbol__new(addr, 0, local, "unknown") and
 * dso__insert_symbol, whose cache update takes any zero-size symbol at or
 * below the cached address (a perf quirk kept on purpose).
 */
static const struct rb_sym *add_unknown(struct rb_symtab *t, uint64_t addr)
{
	struct node *nd;
	const struct rb_sym *s;

	if (!(nd = node_alloc(&t->t)))
		return NULL;
	memset(nd, 0, sizeof(*nd));
	nd->s.start = nd->s.end = addr;
	nd->s.name = "unknown";
	tree_link(&t->t, t->t.n++);
	s = &nd->s;
	if (t->last.addr >= s->start && (t->last.addr < s->end || s->start == s->end))
		t->last.sym = s;
	if (t->disjoint && t->memo) {
		struct memo *m = memo_slot(t, addr);
		m->addr = addr;
		m->sym = s;
	}
	return s;
}

const struct rb_sym *rb_symtab_add_unknown(struct rb_symtab *t, uint64_t addr)
{
	if (!t)
		return NULL;
	if (t->disjoint && tree_find(&t->t, addr))
		t->disjoint = 0;          /* not a miss: addr is in two symbols now */
	return add_unknown(t, addr);
}

const struct rb_sym *rb_symtab_export_lookup(struct rb_symtab *t, uint64_t addr)
{
	const struct rb_sym *s = rb_symtab_lookup(t, addr);

	return s || !t ? s : add_unknown(t, addr);   /* a miss: the tree has nothing at addr */
}

/*
 * perf 6.1 needs no per-object term here: map__map_ip is ip - start + pgoff
 * for user maps and the identity for the kernel map, and the ELF loader has
 * already moved every symbol into file-offset space (value - p_vaddr +
 * p_offset of its PT_LOAD), which covers ET_DYN objects whose segments have
 * p_vaddr != p_offset.
 */
uint64_t rb_symtab_map_ip(const struct rb_symtab *t, uint64_t ip, uint64_t map_start, uint64_t map_pgoff)
{
	if (t && t->kernel)
		return ip;
	if (t && t->map_offset)
		return ip - map_start;
	return ip - map_start + map_pgoff;
}

int rb_symtab_is_kernel(const struct rb_symtab *t)
{
	return t ? t->kernel : 0;
}

const char *rb_symtab_source(const struct rb_symtab *t)
{
	return t ? t->source : NULL;
}

/* ------------------------------------------------------------------ */
/* the names perf shows: demangling                                    */

static int is_ocaml(const char *s, size_t len)
{
	return len >= 5 && memcmp(s, "caml", 4) == 0 && isupper((unsigned char)s[4]);
}

/* OCaml names are "caml" + upper-case letter; perf turns "__" into "." and "$xx" into a byte. */
static size_t demangle_ocaml(const char *s, size_t len, char *out)
{
	size_t i = 4, j = 0;

	while (i < len) {
		if (s[i] == '_' && i + 1 < len && s[i + 1] == '_') {
			out[j++] = '.';
			i += 2;
		} else if (s[i] == '$' && i + 2 < len && isxdigit((unsigned char)s[i + 1]) &&
			   isxdigit((unsigned char)s[i + 2])) {
			char hex[3] = { s[i + 1], s[i + 2], 0 };

			out[j++] = (char)strtol(hex, NULL, 16);
			i += 3;
		} else {
			out[j++] = s[i++];
		}
	}
	out[j] = '\0';
	return j;
}

/*
 * C++ and Rust names.  Debian's perf 6.1 links libiberty and shows
 * cplus_demangle(name, 0): no parameter lists, no return types.  We call
 * the same function: one the application installs, or else the copy that
 * binutils' shared libbfd exports, found once by dlopen.  Without either,
 * names stay mangled.
 */
static rb_symtab_demangler demangler;
static pthread_once_t demangler_once = PTHREAD_ONCE_INIT;
static int demangler_chosen;

void rb_symtab_set_demangler(rb_symtab_demangler fn)
{
	demangler = fn;
	demangler_chosen = 1;
}

static rb_symtab_demangler demangler_from(const char *lib)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	void *fn = h ? dlsym(h, "cplus_demangle") : NULL;

	if (h && !fn)
		dlclose(h);
	return (rb_symtab_demangler)(uintptr_t)fn;
}

/* libbfd's file name carries its version ("libbfd-2.40-system.so"), so look in the usual library directories. */
static rb_symtab_demangler demangler_scan(const char *dir)
{
	char path[PATH_MAX];
	rb_symtab_demangler fn = NULL;
	struct dirent *d;
	DIR *dp = opendir(dir);

	while (dp && !fn && (d = readdir(dp))) {
		size_t l = strlen(d->d_name);

		if (strncmp(d->d_name, "libbfd", 6) == 0 && l > 3 && strcmp(d->d_name + l - 3, ".so") == 0 &&
		    snprintf(path, sizeof(path), "%s/%s", dir, d->d_name) < (int)sizeof(path))
			fn = demangler_from(path);
	}
	if (dp)
		closedir(dp);
	return fn;
}

static void demangler_load(void)
{
	static const char *const dirs[] = {
		"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
		"/lib/x86_64-linux-gnu", "/lib64", "/lib",
	};
	const char *env = getenv("RBTRACE_DEMANGLE_LIB");
	rb_symtab_demangler fn = NULL;
	size_t i;

	if (demangler_chosen)
		return;
	if (env && *env)
		fn = demangler_from(env);
	if (!fn)
		fn = demangler_from("libbfd.so");
	for (i = 0; !fn && i < sizeof(dirs) / sizeof(dirs[0]); i++)
		fn = demangler_scan(dirs[i]);
	if (!demangler_chosen)
		demangler = fn;
}

/* cplus_demangle through the hook; the name is copied because string tables need not end it. */
static char *demangle_cxx(const char *name, size_t len)
{
	char *copy, *d;

	pthread_once(&demangler_once, demangler_load);
	if (!demangler || !(copy = malloc(len + 1)))
		return NULL;
	memcpy(copy, name, len);
	copy[len] = '\0';
	d = demangler(copy, 0);
	free(copy);
	return d;
}

/* The name perf shows: its demangler's output, else OCaml's rule, else the name as is. */
int symtab_display_name(const char *name, size_t len, char **out, size_t *outlen)
{
	*outlen = len;
	if ((*out = demangle_cxx(name, len))) {
		*outlen = strlen(*out);
		return 0;
	}
	if (!is_ocaml(name, len))
		return 0;
	if (!(*out = malloc(len + 1)))
		return -ENOMEM;
	*outlen = demangle_ocaml(name, len, *out);
	return 0;
}

int symtab_insert_named(struct tree *t, uint64_t start, uint64_t len, uint8_t bind,
			const char *name, size_t namelen)
{
	char *dem;
	size_t dlen;
	int r;

	if (symtab_display_name(name, namelen, &dem, &dlen))
		return -ENOMEM;
	r = symtab_tree_insert(t, start, len, bind, dem ? dem : name, dlen);
	free(dem);
	return r;
}

/* ------------------------------------------------------------------ */
/* loading an ELF object: sym_find.c picks, sym_elf.c reads            */

static int load_elf(struct rb_symtab **out, const char *path, const struct rb_symtab_elf_opts *opts, int kernel,
		    uint64_t reloc, char *msg, size_t msglen)
{
	struct pick *pk;
	struct tree t;
	struct loadctx c;
	int err;

	if (msg && msglen)
		msg[0] = '\0';
	if (out)
		*out = NULL;
	if (!out || !path || !*path)
		return symtab_fail(msg, msglen, -EINVAL, "rb_symtab_load_elf: %s", out ? "no path" : "no result pointer");
	if (strlen(path) + (opts && opts->root ? strlen(opts->root) + 1 : 0) >= PATH_MAX)
		return symtab_fail(msg, msglen, -ENAMETOOLONG, "%.64s...: path too long", path);
	if (!(pk = malloc(sizeof(*pk))))
		return symtab_fail(msg, msglen, -ENOMEM, "%s: out of memory", path);
	sym_find_pick_files(pk, path, opts);
	memset(&t, 0, sizeof(t));
	if (!pk->syms && !pk->run) {
		err = pk->path_err;
		symtab_fail(msg, msglen, err, "%s", pk->path_msg);
		if (!err)
			err = symtab_from_tree(&t, path, kernel, out);   /* valid ELF, no symbols: empty table */
	} else {
		c = (struct loadctx){ .t = &t, .syms = pk->syms ? pk->syms : pk->run, .run = pk->run ? pk->run : pk->syms,
				      .msg = msg, .msglen = msglen, .kernel = kernel, .reloc = reloc };
		err = sym_elf_load_symbols(&c);
		if (!err && (err = symtab_from_tree(&t, c.syms->path, kernel, out)))
			symtab_fail(msg, msglen, err, "%s: out of memory", path);
	}
	sym_find_pick_close(pk);
	free(pk);
	symtab_tree_free(&t);
	return err;
}

int rb_symtab_load_elf_opts(struct rb_symtab **out, const char *path,
			    const struct rb_symtab_elf_opts *opts, char *msg, size_t msglen)
{
	return load_elf(out, path, opts, 0, 0, msg, msglen);
}

int rb_symtab_load_vmlinux(struct rb_symtab **out, const char *path, uint64_t reloc, char *msg, size_t msglen)
{
	static const struct rb_symtab_elf_opts only_path = { .no_debug_search = 1, .buildid_dir = "" };

	return load_elf(out, path, &only_path, 1, reloc, msg, msglen);
}

int rb_symtab_load_elf(struct rb_symtab **out, const char *path, char *msg, size_t msglen)
{
	return rb_symtab_load_elf_opts(out, path, NULL, msg, msglen);
}
