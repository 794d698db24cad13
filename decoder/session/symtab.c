/*
 * symtab.c - address-to-symbol resolution that agrees with Linux perf 6.1.
 *
 * rbtrace's exports must carry the same symbol names, sym_start/sym_end and
 * sym_offset as perf's export-to-sqlite.py.  This file reproduces the
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
 */
#define _GNU_SOURCE
#include "symtab.h"
#include "elf/elf_note.h"

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef STT_GNU_IFUNC
#define STT_GNU_IFUNC 10
#endif
#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif

#define NONE ((size_t)-1)
#define PAGE 4096u
#define PLT_NAME_MAX 1024            /* perf formats "%s@plt" into 1024 bytes */
#define KSYM_NAME_MAX 513            /* perf's kallsyms name buffer, KSYM_NAME_LEN + 1 */
#define BUILD_ID_MAX 20
#define ENTRY_TRAMPOLINE "__entry_SYSCALL_64_trampoline"

/* ------------------------------------------------------------------ */
/* messages                                                            */

static int fail(char *msg, size_t msglen, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(char *msg, size_t msglen, int err, const char *fmt, ...)
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
 */

#define CHUNK_BITS 12
#define CHUNK ((size_t)1 << CHUNK_BITS)

struct node {
	struct rb_sym s;             /* s.name is set when loading finishes */
	size_t name;                 /* offset into the name arena while loading */
	size_t left, right, parent;
	uint8_t red;
	uint8_t dead;                /* erased: off the tree, skipped by walks */
};

struct tree {
	struct node **chunk;
	size_t nchunks, chunk_cap;
	size_t n, root, live;
	size_t last;                 /* the node last in order when last_ok (rotations keep it last) */
	int last_ok;                 /* 0: not known (empty tree, or last erased) */
	int unsorted;                /* 0: every node was linked as the last, so index order is tree order */
	char *str;                   /* name arena */
	size_t slen, scap;
};

static struct node *np(const struct tree *t, size_t i)
{
	return &t->chunk[i >> CHUNK_BITS][i & (CHUNK - 1)];
}

#define N(t, i) (*np(t, i))

static int is_red(const struct tree *t, size_t i)
{
	return i != NONE && N(t, i).red;
}

static const char *node_name(const struct tree *t, size_t i)
{
	return t->str + N(t, i).name;
}

static void tree_free(struct tree *t)
{
	size_t i;

	for (i = 0; i < t->nchunks; i++)
		free(t->chunk[i]);
	free(t->chunk);
	free(t->str);
	memset(t, 0, sizeof(*t));
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
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
	if (grow((void **)&t->str, &t->scap, t->slen + len + 1, 1))
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
		if (grow((void **)&t->chunk, &t->chunk_cap, t->nchunks + 1, sizeof(*t->chunk)) ||
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
static int tree_insert(struct tree *t, uint64_t start, uint64_t len, uint8_t binding,
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

static size_t tree_first(const struct tree *t)
{
	size_t i = t->n ? t->root : NONE;

	if (!t->unsorted)
		return live_from(t, 0);
	while (i != NONE && N(t, i).left != NONE)
		i = N(t, i).left;
	return i;
}

static size_t tree_next(const struct tree *t, size_t i)
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

static void tree_erase(struct tree *t, size_t z)
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
static void fixup_end(struct tree *t, int kallsyms)
{
	size_t prev = tree_first(t), cur;
	int prev_mod = -1, cur_mod;   /* the name has a "[module]" tag; -1: not looked at */

	if (prev == NONE)
		return;
	for (cur = tree_next(t, prev); cur != NONE; prev = cur, cur = tree_next(t, cur), prev_mod = cur_mod) {
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
static void fixup_duplicate(struct tree *t)
{
	size_t cur, nd = tree_first(t);

	while (nd != NONE) {
		cur = nd;
		for (;;) {
			nd = tree_next(t, cur);
			if (nd == NONE || N(t, cur).s.start != N(t, nd).s.start)
				break;
			if (prefer_a(t, cur, nd)) {
				tree_erase(t, nd);
				continue;
			}
			nd = tree_next(t, cur);
			tree_erase(t, cur);
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
	uint64_t last_addr;           /* perf's per-dso last-lookup cache */
	const struct rb_sym *last_sym;
	char *source;
	int kernel;
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
	tree_free(&t->t);
	free(t->sorted);
	free(t->memo);
	free(t->source);
	free(t);
}

/* Take over the loaded tree: give every symbol its name and list them in order. */
static int table_from_tree(struct tree *t, const char *source, int kernel, struct rb_symtab **out)
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
	for (i = tree_first(t); i != NONE; i = tree_next(t, i)) {
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
	if (t->last_addr != addr || !t->last_sym) {
		t->last_addr = addr;
		t->last_sym = memo_find(t, addr);
	}
	return t->last_sym;
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
	if (t->last_addr >= s->start && (t->last_addr < s->end || s->start == s->end))
		t->last_sym = s;
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
/* files                                                               */

struct mfile {
	const uint8_t *p;
	size_t size;
};

static void mfile_close(struct mfile *f)
{
	if (f->p && f->size)
		munmap((void *)f->p, f->size);
	f->p = NULL;
	f->size = 0;
}

static int mfile_open(struct mfile *f, const char *path, char *msg, size_t msglen)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;
	void *p;

	f->p = NULL;
	f->size = 0;
	if (fd < 0)
		return fail(msg, msglen, -errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0) {
		err = errno;
		close(fd);
		return fail(msg, msglen, -err, "%s: %s", path, strerror(err));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return fail(msg, msglen, -EINVAL, "%s: not a regular file", path);
	}
	if (st.st_size == 0 || (uint64_t)st.st_size > SIZE_MAX) {
		close(fd);
		return fail(msg, msglen, -ENOEXEC, "%s: %s", path,
			    st.st_size ? "file too large" : "empty file, not ELF");
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	err = errno;
	close(fd);
	if (p == MAP_FAILED)
		return fail(msg, msglen, -err, "%s: mmap: %s", path, strerror(err));
	f->p = p;
	f->size = (size_t)st.st_size;
	return 0;
}

static int is_regular_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* ------------------------------------------------------------------ */
/* ELF reading (32/64-bit, either byte order), bounded by the mapping  */

struct elf {
	const char *path;
	const uint8_t *p;
	size_t size;
	int is64, msb;
	uint16_t type, machine;
	uint64_t phoff, shoff;
	size_t phnum, shnum, shstrndx;
	const uint8_t *shstr;         /* section name table, or NULL */
	size_t shstr_size;
};

struct shdr {
	uint32_t name, type, link, info;
	uint64_t flags, addr, offset, size, entsize;
};

struct phdr {
	uint32_t type;
	uint64_t offset, vaddr, filesz, memsz;
};

struct esym {
	uint32_t name;
	uint8_t info, other;
	uint16_t shndx;
	uint64_t value, size;
};

static uint64_t get(const struct elf *e, const uint8_t *q, int n)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)q[e->msb ? n - 1 - i : i] << (8 * i);
	return v;
}

#define G16(e, q) ((uint16_t)get(e, q, 2))
#define G32(e, q) ((uint32_t)get(e, q, 4))
#define G64(e, q) get(e, q, 8)
#define GADDR(e, q) ((e)->is64 ? G64(e, q) : G32(e, q))

static int in_file(const struct elf *e, uint64_t off, uint64_t len)
{
	return off <= e->size && len <= e->size - off;
}

static size_t shdr_size(const struct elf *e)
{
	return e->is64 ? 64 : 40;
}

static void read_shdr(const struct elf *e, size_t i, struct shdr *s)
{
	const uint8_t *q = e->p + e->shoff + i * shdr_size(e);
	int w = e->is64 ? 8 : 4;

	s->name = G32(e, q);
	s->type = G32(e, q + 4);
	s->flags = get(e, q + 8, w);
	s->addr = get(e, q + 8 + w, w);
	s->offset = get(e, q + 8 + 2 * w, w);
	s->size = get(e, q + 8 + 3 * w, w);
	s->link = G32(e, q + 8 + 4 * w);
	s->info = G32(e, q + 12 + 4 * w);
	s->entsize = get(e, q + 16 + 5 * w, w);
}

static void read_phdr(const struct elf *e, size_t i, struct phdr *ph)
{
	const uint8_t *q = e->p + e->phoff + i * (e->is64 ? 56 : 32);

	ph->type = G32(e, q);
	if (e->is64) {
		ph->offset = G64(e, q + 8);
		ph->vaddr = G64(e, q + 16);
		ph->filesz = G64(e, q + 32);
		ph->memsz = G64(e, q + 40);
	} else {
		ph->offset = G32(e, q + 4);
		ph->vaddr = G32(e, q + 8);
		ph->filesz = G32(e, q + 16);
		ph->memsz = G32(e, q + 20);
	}
}

static void read_sym(const struct elf *e, const uint8_t *q, struct esym *s)
{
	s->name = G32(e, q);
	if (e->is64) {
		s->info = q[4];
		s->other = q[5];
		s->shndx = G16(e, q + 6);
		s->value = G64(e, q + 8);
		s->size = G64(e, q + 16);
	} else {
		s->value = G32(e, q + 4);
		s->size = G32(e, q + 8);
		s->info = q[12];
		s->other = q[13];
		s->shndx = G16(e, q + 14);
	}
}

/* Bytes of a section; SHT_NOBITS has none.  -1 if it lies outside the file. */
static int sec_data(const struct elf *e, const struct shdr *s, const uint8_t **p, size_t *n)
{
	*p = NULL;
	*n = 0;
	if (s->type == SHT_NOBITS)
		return 0;
	if (!in_file(e, s->offset, s->size))
		return -1;
	*p = e->p + s->offset;
	*n = (size_t)s->size;
	return 0;
}

/* A NUL-terminated string at off in a string table (clipped at its end), or NULL. */
static const char *str_at(const uint8_t *tab, size_t tabsz, uint64_t off, size_t *len)
{
	const uint8_t *z;

	if (!tab || off >= tabsz)
		return NULL;
	z = memchr(tab + off, '\0', tabsz - off);
	*len = z ? (size_t)(z - (tab + off)) : tabsz - off;
	return (const char *)tab + off;
}

static int sec_name_eq(const struct elf *e, const struct shdr *s, const char *name)
{
	size_t len;
	const char *n = str_at(e->shstr, e->shstr_size, s->name, &len);

	return n && len == strlen(name) && memcmp(n, name, len) == 0;
}

/* perf classifies label sections by a substring test on the section name. */
static int sec_name_has(const uint8_t *shstr, size_t shstr_size, const struct shdr *s, const char *needle)
{
	size_t len;
	const char *n = str_at(shstr, shstr_size, s->name, &len);

	return n && memmem(n, len, needle, strlen(needle)) != NULL;
}

/* First section with that name, scanning from index 1 as libelf does. */
static int find_section(const struct elf *e, const char *name, struct shdr *s, size_t *idx)
{
	size_t i;

	if (!e->shstr)
		return 0;
	for (i = 1; i < e->shnum; i++) {
		read_shdr(e, i, s);
		if (sec_name_eq(e, s, name)) {
			if (idx)
				*idx = i;
			return 1;
		}
	}
	return 0;
}

static int elf_ident(struct elf *e, char *msg, size_t msglen)
{
	const uint8_t *p = e->p;

	if (e->size < EI_NIDENT || memcmp(p, ELFMAG, SELFMAG) != 0)
		return fail(msg, msglen, -ENOEXEC, "%s: not an ELF file", e->path);
	if (p[EI_CLASS] != ELFCLASS32 && p[EI_CLASS] != ELFCLASS64)
		return fail(msg, msglen, -ENOEXEC, "%s: unknown ELF class %u", e->path, p[EI_CLASS]);
	if (p[EI_DATA] != ELFDATA2LSB && p[EI_DATA] != ELFDATA2MSB)
		return fail(msg, msglen, -ENOEXEC, "%s: unknown ELF data encoding %u", e->path, p[EI_DATA]);
	e->is64 = p[EI_CLASS] == ELFCLASS64;
	e->msb = p[EI_DATA] == ELFDATA2MSB;
	if (e->size < (e->is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr)))
		return fail(msg, msglen, -ENOEXEC, "%s: truncated ELF header", e->path);
	return 0;
}

/* Section headers: extended numbering lives in section 0 (e_shnum 0, e_shstrndx SHN_XINDEX). */
static int elf_sections(struct elf *e, uint16_t shentsize, uint16_t shnum, uint16_t shstrndx,
			char *msg, size_t msglen)
{
	struct shdr s0;

	e->shnum = shnum;
	e->shstrndx = shstrndx;
	if (e->shoff == 0) {
		e->shnum = 0;
		return 0;
	}
	if (shentsize != shdr_size(e) || !in_file(e, e->shoff, shdr_size(e)))
		return fail(msg, msglen, -ENOEXEC, "%s: bad or truncated section header table", e->path);
	read_shdr(e, 0, &s0);
	if (shnum == 0)
		e->shnum = s0.size > SIZE_MAX / 64 ? SIZE_MAX / 64 : (size_t)s0.size;
	if (shstrndx == SHN_XINDEX)
		e->shstrndx = s0.link;
	if (!in_file(e, e->shoff, (uint64_t)e->shnum * shdr_size(e)))
		return fail(msg, msglen, -ENOEXEC, "%s: section header table truncated (%zu headers at offset %#llx)",
			    e->path, e->shnum, (unsigned long long)e->shoff);
	return 0;
}

static int elf_names(struct elf *e, char *msg, size_t msglen)
{
	struct shdr s;
	const uint8_t *p;
	size_t n;

	e->shstr = NULL;
	e->shstr_size = 0;
	if (e->shnum == 0)
		return 0;
	if (e->shstrndx == SHN_UNDEF || e->shstrndx >= e->shnum)
		return fail(msg, msglen, -ENOEXEC, "%s: bad section name table index %zu", e->path, e->shstrndx);
	read_shdr(e, e->shstrndx, &s);
	if (sec_data(e, &s, &p, &n) || !p)
		return fail(msg, msglen, -ENOEXEC, "%s: section name table truncated or missing", e->path);
	e->shstr = p;
	e->shstr_size = n;
	return 0;
}

static int elf_segments(struct elf *e, uint16_t phentsize, uint16_t phnum, char *msg, size_t msglen)
{
	struct shdr s0;
	size_t esz = e->is64 ? 56 : 32;

	e->phnum = phnum;
	if (phnum == PN_XNUM && e->shnum > 0) {
		read_shdr(e, 0, &s0);
		e->phnum = s0.info;
	}
	if (e->phoff == 0 || e->phnum == 0) {
		e->phnum = 0;
		return 0;
	}
	if (phentsize != esz || !in_file(e, e->phoff, (uint64_t)e->phnum * esz))
		return fail(msg, msglen, -ENOEXEC, "%s: program header table bad or truncated", e->path);
	return 0;
}

static int elf_parse(struct elf *e, const char *path, const struct mfile *f, char *msg, size_t msglen)
{
	const uint8_t *p = f->p;
	int err;

	memset(e, 0, sizeof(*e));
	e->path = path;
	e->p = p;
	e->size = f->size;
	if ((err = elf_ident(e, msg, msglen)))
		return err;
	e->type = G16(e, p + 16);
	e->machine = G16(e, p + 18);
	e->phoff = GADDR(e, p + (e->is64 ? 32 : 28));
	e->shoff = GADDR(e, p + (e->is64 ? 40 : 32));
	p += e->is64 ? 54 : 42;                   /* e_phentsize, e_phnum, e_shentsize, e_shnum, e_shstrndx */
	if ((err = elf_sections(e, G16(e, p + 4), G16(e, p + 6), G16(e, p + 8), msg, msglen)) ||
	    (err = elf_names(e, msg, msglen)) ||
	    (err = elf_segments(e, G16(e, p), G16(e, p + 2), msg, msglen)))
		return err;
	return 0;
}

/* ------------------------------------------------------------------ */
/* build-id                                                            */

/*
 * perf reads the build-id from the first of the sections .note.gnu.build-id,
 * .notes, .note that exists.  Files without section headers fall back to
 * PT_NOTE segments (perf finds nothing there; we do, which only helps).
 */
static int elf_build_id(const struct elf *e, uint8_t *id, size_t max)
{
	static const char *const secs[] = { ".note.gnu.build-id", ".notes", ".note" };
	struct shdr s;
	struct phdr ph;
	const uint8_t *p;
	size_t n, i;
	int r;

	for (i = 0; i < sizeof(secs) / sizeof(secs[0]); i++)
		if (find_section(e, secs[i], &s, NULL))
			return sec_data(e, &s, &p, &n) ? 0 : rb_elf_note_build_id(p, n, e->msb, id, max);
	if (e->shnum)
		return 0;
	for (i = 0; i < e->phnum; i++) {
		read_phdr(e, i, &ph);
		if (ph.type == PT_NOTE && in_file(e, ph.offset, ph.filesz) &&
		    (r = rb_elf_note_build_id(e->p + ph.offset, (size_t)ph.filesz, e->msb, id, max)) > 0)
			return r;
	}
	return 0;
}

int rb_elf_build_id(const char *path, uint8_t *id, size_t max)
{
	struct mfile f;
	struct elf e;
	int r;

	if (!path || (!id && max))
		return -EINVAL;
	if ((r = mfile_open(&f, path, NULL, 0)))
		return r;
	r = elf_parse(&e, path, &f, NULL, 0);
	if (r == 0)
		r = elf_build_id(&e, id, max < BUILD_ID_MAX ? max : BUILD_ID_MAX);
	mfile_close(&f);
	return r;
}

/* ------------------------------------------------------------------ */
/* symbol sources: perf's "symsrc", one opened candidate file          */

struct symsrc {
	char path[PATH_MAX];
	struct mfile f;
	struct elf e;
	int has_symtab, has_dynsym, has_opd, opd_found;
	struct shdr symtab, dynsym, opd;
	size_t dynsym_idx, opd_idx;
};

static void symsrc_close(struct symsrc *ss)
{
	mfile_close(&ss->f);
}

/* Like perf, a table counts only if the named section has the right type. */
static void symsrc_classify(struct symsrc *ss)
{
	struct elf *e = &ss->e;

	ss->has_symtab = find_section(e, ".symtab", &ss->symtab, NULL) && ss->symtab.type == SHT_SYMTAB;
	ss->has_dynsym = find_section(e, ".dynsym", &ss->dynsym, &ss->dynsym_idx) &&
			 ss->dynsym.type == SHT_DYNSYM;
	ss->opd_found = find_section(e, ".opd", &ss->opd, &ss->opd_idx);
	ss->has_opd = ss->opd_found && ss->opd.type == SHT_PROGBITS;
}

static int symsrc_open(struct symsrc *ss, const char *path, char *msg, size_t msglen)
{
	int err;

	memset(ss, 0, sizeof(*ss));
	if (strlen(path) >= sizeof(ss->path))
		return fail(msg, msglen, -ENAMETOOLONG, "%s: path too long", path);
	strcpy(ss->path, path);
	if ((err = mfile_open(&ss->f, ss->path, msg, msglen)))
		return err;
	if ((err = elf_parse(&ss->e, ss->path, &ss->f, msg, msglen))) {
		symsrc_close(ss);
		return err;
	}
	symsrc_classify(ss);
	return 0;
}

/* ------------------------------------------------------------------ */
/* loading ELF symbols (perf's dso__load_sym)                          */

struct load_seg { uint64_t vaddr, offset, size; };

struct loadctx {
	struct tree *t;
	struct symsrc *syms, *run;     /* symbol file, runtime image (may be the same) */
	char *msg;
	size_t msglen;
	int kernel;                    /* a vmlinux: values stay addresses (the kernel map is the identity) */
	uint64_t reloc;                /* kernel: added to every value (KASLR) */
	/* read once for all the symbols (per symbol, reading them was most of an object's load) */
	struct shdr *sh_syms, *sh_run; /* every section header of each file, by index */
	struct load_seg *loads;        /* the runtime image's PT_LOAD segments of non-zero size, in order */
	size_t nr_loads;
};

static int is_function(const struct esym *s)
{
	int type = ELF64_ST_TYPE(s->info);

	return (type == STT_FUNC || type == STT_GNU_IFUNC) && s->name && s->shndx != SHN_UNDEF;
}

static int is_object(const struct esym *s)
{
	return ELF64_ST_TYPE(s->info) == STT_OBJECT && s->name && s->shndx != SHN_UNDEF;
}

/* NOTYPE symbols naming code or data, as perf accepts them (section checked later). */
static int is_label(const struct esym *s)
{
	int vis = ELF64_ST_VISIBILITY(s->other);

	return ELF64_ST_TYPE(s->info) == STT_NOTYPE && s->name && s->shndx != SHN_UNDEF &&
	       s->shndx != SHN_ABS && vis != STV_HIDDEN && vis != STV_INTERNAL;
}

/* ARM ELF mapping symbols ($a, $d, $t, $x, optionally ".suffix") identify no function. */
static int is_mapping_symbol(const struct elf *e, const char *name, size_t len)
{
	if (e->machine != EM_ARM && e->machine != EM_AARCH64)
		return 0;
	return len >= 2 && name[0] == '$' && strchr("adtx", name[1]) && name[1] &&
	       (len == 2 || name[2] == '.');
}

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
static int display_name(const char *name, size_t len, char **out, size_t *outlen)
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

static int insert_named(struct tree *t, uint64_t start, uint64_t len, uint8_t bind,
			const char *name, size_t namelen)
{
	char *dem;
	size_t dlen;
	int r;

	if (display_name(name, namelen, &dem, &dlen))
		return -ENOMEM;
	r = tree_insert(t, start, len, bind, dem ? dem : name, dlen);
	free(dem);
	return r;
}

/* perf resolves PPC64 ELFv1 function descriptors through the runtime image's .opd. */
static int opd_resolve(struct loadctx *c, struct esym *s)
{
	struct symsrc *run = c->run;
	const uint8_t *p;
	size_t n, i;
	uint32_t off = (uint32_t)(s->value - c->syms->opd.addr);
	struct shdr sh;

	if (sec_data(&run->e, &run->opd, &p, &n) || !p || n < 8 || off > n - 8)
		return fail(c->msg, c->msglen, -EINVAL, "%s: .opd entry out of range", run->path);
	s->value = G64(&run->e, p + off);
	for (i = 1; i < run->e.shnum; i++) {
		read_shdr(&run->e, i, &sh);
		if (s->value >= sh.addr && s->value < sh.addr + sh.size)
			break;
	}
	s->shndx = i < run->e.shnum ? (uint16_t)i : SHN_UNDEF;
	if (i >= run->e.shnum)
		return fail(c->msg, c->msglen, -EINVAL, "%s: .opd target %#llx in no section",
			    run->path, (unsigned long long)s->value);
	return 0;
}

/*
 * perf 6.1 rebases every user-space symbol to a file offset: by the PT_LOAD
 * of the runtime image containing it (p_vaddr - p_offset), or failing that
 * by its section (sh_addr - sh_offset).  This applies to ET_DYN as well as
 * ET_EXEC, so segments with p_vaddr != p_offset are handled here.
 */
static uint64_t rebase(const struct loadctx *c, uint64_t value, const struct shdr *sec)
{
	for (size_t i = 0; i < c->nr_loads; i++) {
		const struct load_seg *g = &c->loads[i];

		if (value >= g->vaddr && value < g->vaddr + g->size)
			return value - (g->vaddr - g->offset);
	}
	return value - (sec->addr - sec->offset);
}

/* The headers rebase and symbol_section use, read once. */
static int loadctx_headers(struct loadctx *c)
{
	const struct elf *se = &c->syms->e, *re = &c->run->e;
	struct phdr ph;

	c->sh_syms = calloc(se->shnum ? se->shnum : 1, sizeof(*c->sh_syms));
	c->sh_run = c->run == c->syms ? c->sh_syms : calloc(re->shnum ? re->shnum : 1, sizeof(*c->sh_run));
	c->loads = calloc(re->phnum ? re->phnum : 1, sizeof(*c->loads));
	if (!c->sh_syms || !c->sh_run || !c->loads)
		return fail(c->msg, c->msglen, -ENOMEM, "%s: out of memory", se->path);
	for (size_t i = 0; i < se->shnum; i++)
		read_shdr(se, i, &c->sh_syms[i]);
	for (size_t i = 0; c->sh_run != c->sh_syms && i < re->shnum; i++)
		read_shdr(re, i, &c->sh_run[i]);
	for (size_t i = 0; i < re->phnum; i++) {
		read_phdr(re, i, &ph);
		uint64_t sz = ph.memsz > ph.filesz ? ph.memsz : ph.filesz;
		if (ph.type == PT_LOAD && sz)
			c->loads[c->nr_loads++] = (struct load_seg){ ph.vaddr, ph.offset, sz };
	}
	return 0;
}

static void loadctx_free(struct loadctx *c)
{
	if (c->sh_run != c->sh_syms)
		free(c->sh_run);
	free(c->sh_syms);
	free(c->loads);
	c->sh_syms = c->sh_run = NULL;
	c->loads = NULL;
}

/*
 * The section a symbol lives in.  Debug files carry SHT_NOBITS copies of the
 * loaded sections, whose sh_offset is meaningless, so perf takes the
 * runtime image's header (and name table) for those.  Returns 1 to keep the
 * symbol, 0 to skip it, <0 on error.
 */
static int symbol_section(struct loadctx *c, const struct esym *s, int label, struct shdr *sec)
{
	const struct elf *se = &c->syms->e, *re = &c->run->e;
	const uint8_t *names = se->shstr;
	size_t names_size = se->shstr_size;

	if (s->shndx >= se->shnum)
		return fail(c->msg, c->msglen, -EINVAL, "%s: symbol in bad section %u", se->path, s->shndx);
	*sec = c->sh_syms[s->shndx];
	if (!(sec->flags & SHF_ALLOC))
		return 0;
	if (sec->type == SHT_NOBITS) {
		if (s->shndx >= re->shnum)
			return fail(c->msg, c->msglen, -EINVAL, "%s: no section %u in runtime image %s",
				    se->path, s->shndx, re->path);
		*sec = c->sh_run[s->shndx];
		names = re->shstr;
		names_size = re->shstr_size;
	}
	if (label && !sec_name_has(names, names_size, sec, "text") && !sec_name_has(names, names_size, sec, "data"))
		return 0;
	return 1;
}

/* Filter, place and insert one symbol table entry.  Returns 1 if inserted, 0 if skipped, <0 on error. */
static int load_one(struct loadctx *c, struct esym *s, const uint8_t *strs, size_t strsz)
{
	const struct elf *se = &c->syms->e;
	int label = is_label(s), r;
	const char *name;
	size_t len;
	struct shdr sec = { 0 };

	if (!label && !is_function(s) && !is_object(s))
		return 0;
	if (!(name = str_at(strs, strsz, s->name, &len)))
		return fail(c->msg, c->msglen, -EINVAL, "%s: symbol name offset %u out of range", se->path, s->name);
	if (is_mapping_symbol(se, name, len))
		return 0;
	if (c->run->has_opd && s->shndx == c->run->opd_idx && (r = opd_resolve(c, s)))
		return r;
	if (s->shndx == SHN_ABS)
		return 0;
	if ((r = symbol_section(c, s, label, &sec)) <= 0)
		return r;
	if (se->machine == EM_ARM && ELF64_ST_TYPE(s->info) == STT_FUNC && (s->value & 1))
		s->value--;                       /* Thumb functions have bit 0 set */
	s->value = c->kernel ? s->value + c->reloc : rebase(c, s->value, &sec);
	if (insert_named(c->t, s->value, s->size, ELF64_ST_BIND(s->info), name, len))
		return fail(c->msg, c->msglen, -ENOMEM, "%s: out of memory", se->path);
	return 1;
}

static int table_data(struct loadctx *c, const struct shdr *tab, const uint8_t **syms, size_t *nsyms,
		      const uint8_t **strs, size_t *strsz)
{
	const struct elf *e = &c->syms->e;
	size_t esz = e->is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym), n;
	struct shdr strtab;

	if (tab->entsize != esz)
		return fail(c->msg, c->msglen, -EINVAL, "%s: symbol table entry size %llu, expected %zu",
			    e->path, (unsigned long long)tab->entsize, esz);
	if (sec_data(e, tab, syms, &n))
		return fail(c->msg, c->msglen, -EINVAL, "%s: symbol table extends past end of file", e->path);
	*nsyms = n / esz;
	if (tab->link == 0 || tab->link >= e->shnum)
		return fail(c->msg, c->msglen, -EINVAL, "%s: symbol table has bad string table link %u",
			    e->path, tab->link);
	read_shdr(e, tab->link, &strtab);
	if (sec_data(e, &strtab, strs, strsz))
		return fail(c->msg, c->msglen, -EINVAL, "%s: symbol string table extends past end of file", e->path);
	if (!c->run->e.shstr)
		return fail(c->msg, c->msglen, -EINVAL, "%s: no section name table", c->run->path);
	return 0;
}

/* One pass over .symtab or .dynsym, then perf's end and alias fix-ups. */
static int load_table(struct loadctx *c, const struct shdr *tab)
{
	const uint8_t *syms = NULL, *strs = NULL;
	size_t nsyms = 0, strsz = 0, i, esz = c->syms->e.is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
	int r, nr = 0;

	if ((r = table_data(c, tab, &syms, &nsyms, &strs, &strsz)))
		return r;
	for (i = 0; i < nsyms; i++) {
		struct esym s;

		read_sym(&c->syms->e, syms + i * esz, &s);
		if ((r = load_one(c, &s, strs, strsz)) < 0)
			return r;
		nr += r;
	}
	if (nr > 0) {
		fixup_end(c->t, 0);
		fixup_duplicate(c->t);
	}
	return nr;
}

/* ------------------------------------------------------------------ */
/* PLT symbols (perf 6.1's dso__synthesize_plt_symbols)                */

struct plt {
	const uint8_t *rel, *dsyms, *dstr;
	size_t nrel, relsz, ndsyms, dstrsz;
	uint64_t offset, entry;
	int rela;
};

/* Entry sizes perf 6.1 assumes; elsewhere .plt's sh_entsize for header and entries. */
static void plt_geometry(const struct elf *e, const struct shdr *plt, uint64_t *header, uint64_t *entry)
{
	switch (e->machine) {
	case EM_ARM:     *header = 20;  *entry = 12; break;
	case EM_AARCH64: *header = 32;  *entry = 16; break;
	case EM_SPARC:   *header = 48;  *entry = 12; break;
	case EM_SPARCV9: *header = 128; *entry = 32; break;
	default:         *header = *entry = plt->entsize; break;
	}
}

/* Locate everything the PLT pass needs; 0 if the image has no usable PLT. */
static int plt_setup(const struct symsrc *run, struct plt *p)
{
	const struct elf *e = &run->e;
	struct shdr rel, plt, dstr;
	uint64_t header;
	size_t n;

	if (!run->has_dynsym)
		return 0;
	if (!find_section(e, ".rela.plt", &rel, NULL) && !find_section(e, ".rel.plt", &rel, NULL))
		return 0;
	if (rel.link != run->dynsym_idx || !find_section(e, ".plt", &plt, NULL))
		return 0;
	if ((rel.type != SHT_RELA && rel.type != SHT_REL) || rel.entsize == 0)
		return 0;
	if (sec_data(e, &rel, &p->rel, &n) || sec_data(e, &run->dynsym, &p->dsyms, &p->ndsyms) ||
	    run->dynsym.link >= e->shnum)
		return 0;
	read_shdr(e, run->dynsym.link, &dstr);
	if (sec_data(e, &dstr, &p->dstr, &p->dstrsz) || p->dstrsz == 0)
		return 0;
	p->rela = rel.type == SHT_RELA;
	p->relsz = e->is64 ? (p->rela ? 24 : 16) : (p->rela ? 12 : 8);
	p->nrel = (size_t)(rel.size / rel.entsize);
	if (p->nrel > n / p->relsz)
		p->nrel = n / p->relsz;              /* perf would read past the data */
	p->ndsyms /= e->is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
	plt_geometry(e, &plt, &header, &p->entry);
	p->offset = plt.offset + header;
	return 1;
}

static int plt_insert(struct tree *t, const struct elf *e, struct plt *p, size_t i, struct esym *s)
{
	const uint8_t *q = p->rel + i * p->relsz;
	uint64_t info = GADDR(e, q + (e->is64 ? 8 : 4));
	uint64_t idx = e->is64 ? info >> 32 : info >> 8;
	char buf[PLT_NAME_MAX], *dem;
	const char *name;
	size_t len;
	int r;

	if (idx < p->ndsyms)                 /* perf keeps the previous symbol when out of range */
		read_sym(e, p->dsyms + idx * (e->is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym)), s);
	if (!(name = str_at(p->dstr, p->dstrsz, s->name, &len)))
		name = "", len = 0;
	if (display_name(name, len, &dem, &len))
		return -ENOMEM;
	/* perf formats "%s@plt" into 1024 bytes, so an overlong name loses its suffix */
	snprintf(buf, sizeof(buf), "%.*s@plt", (int)(len < sizeof(buf) ? len : sizeof(buf)), dem ? dem : name);
	free(dem);
	r = tree_insert(t, p->offset, p->entry, STB_GLOBAL, buf, strlen(buf));
	if (r)
		return r;
	p->offset += p->entry;
	return 0;
}

/* perf adds the PLT entries after the fix-ups, so they are never trimmed or merged. */
static int synthesize_plt(struct loadctx *c)
{
	struct plt p;
	struct esym s;
	size_t i;

	memset(&p, 0, sizeof(p));
	memset(&s, 0, sizeof(s));
	if (!plt_setup(c->run, &p))
		return 0;
	for (i = 0; i < p.nrel; i++)
		if (plt_insert(c->t, &c->run->e, &p, i, &s))
			return fail(c->msg, c->msglen, -ENOMEM, "%s: out of memory", c->run->path);
	return 0;
}

/* ------------------------------------------------------------------ */
/* choosing the files (perf's dso__load search order)                  */

#define MAX_CANDS 10

struct cands {
	char path[MAX_CANDS][PATH_MAX];
	size_t n;
};

static void cand_add(struct cands *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void cand_add(struct cands *c, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (c->n >= MAX_CANDS)
		return;
	va_start(ap, fmt);
	r = vsnprintf(c->path[c->n], PATH_MAX, fmt, ap);
	va_end(ap);
	if (r > 0 && r < PATH_MAX)
		c->n++;
}

/* snprintf into a PATH_MAX buffer; a path that does not fit becomes "", so it names no file. */
static void path_fmt(char *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void path_fmt(char *buf, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vsnprintf(buf, PATH_MAX, fmt, ap);
	va_end(ap);
	if (r < 0 || r >= PATH_MAX)
		buf[0] = '\0';
}

/* perf's path__join: root, a slash if root is not empty, path. */
static void join(char *buf, const char *root, const char *path)
{
	path_fmt(buf, "%s%s%s", root, root[0] ? "/" : "", path);
}

/* The name in a file's .gnu_debuglink, if it has one. */
static int read_debuglink(const char *file, char *out, size_t outsz)
{
	struct symsrc *ss = malloc(sizeof(*ss));
	struct shdr s;
	const uint8_t *p;
	size_t n, len;
	int ok = 0;

	if (!ss)
		return 0;
	if (symsrc_open(ss, file, NULL, 0) == 0) {
		if (find_section(&ss->e, ".gnu_debuglink", &s, NULL) && !sec_data(&ss->e, &s, &p, &n) && p &&
		    str_at(p, n, 0, &len) && len > 0 && len < outsz) {
			memcpy(out, p, len);
			out[len] = '\0';
			ok = 1;
		}
		symsrc_close(ss);
	}
	free(ss);
	return ok;
}

/* perf looks for the debuglink target in cwd, beside the file, in .debug/, and under /usr/lib/debug. */
static void cand_debuglink(struct cands *c, const char *root, const char *path)
{
	char file[PATH_MAX], dir[PATH_MAX], link[PATH_MAX], try[4][PATH_MAX];
	char *slash;
	size_t i;

	join(file, root, path);
	path_fmt(dir, "%s", file);
	slash = strrchr(dir, '/');
	*(slash ? slash : dir) = '\0';
	if (!is_regular_file(file) || !read_debuglink(file, link, sizeof(link)))
		return;
	path_fmt(try[0], "%s", link);
	path_fmt(try[1], "%s/%s", dir, link);
	path_fmt(try[2], "%s/.debug/%s", dir, link);
	path_fmt(try[3], "/usr/lib/debug%s/%s", dir, link);
	for (i = 0; i < 4; i++)
		if (try[i][0] && is_regular_file(try[i])) {
			cand_add(c, "%s", try[i]);
			return;
		}
}

static void hex_id(const uint8_t *id, size_t len, char *out)
{
	size_t i;

	for (i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * len] = '\0';
}

/*
 * perf's build-id cache: <dir>/.build-id/xx/yyyy is either the file itself
 * (old layout) or a link to a directory holding "elf" (or "vdso") and
 * "debug".
 */
static void cand_cache(struct cands *c, const char *cache, const char *path, const char *hex, int debug)
{
	char link[PATH_MAX];
	const char *base = debug ? "debug" : strcmp(path, "[vdso]") == 0 ? "vdso" : "elf";

	if (!cache[0] || snprintf(link, sizeof(link), "%s/.build-id/%.2s/%s", cache, hex, hex + 2) >= PATH_MAX)
		return;
	if (is_regular_file(link))
		cand_add(c, "%s", link);
	else
		cand_add(c, "%s/%s", link, base);
}

/* Candidate files in perf's order (its binary_type_symtab table, user-space entries). */
static void gather(struct cands *c, const char *root, const char *cache, const char *path,
		   const uint8_t *id, size_t idlen)
{
	char dbg[PATH_MAX], hex[2 * BUILD_ID_MAX + 1];
	const char *slash = strrchr(path, '/');

	hex_id(id, idlen, hex);
	cand_debuglink(c, root, path);
	if (idlen) {
		cand_cache(c, cache, path, hex, 0);
		cand_cache(c, cache, path, hex, 1);
	}
	join(dbg, root, "/usr/lib/debug");
	cand_add(c, "%s%s.debug", dbg, path);
	cand_add(c, "%s%s", dbg, path);
	if (idlen) {
		join(dbg, root, "/usr/lib/debug/.build-id/");
		cand_add(c, "%s%.2s/%s.debug", dbg, hex, hex + 2);
	}
	join(dbg, root, path);
	cand_add(c, "%s", dbg);
	if (slash) {
		join(dbg, root, "");
		cand_add(c, "%s%.*s.debug%s", dbg, (int)(slash - path + 1), path, slash);
	}
	if (strncmp(path, "/usr/lib/", 9) == 0) {
		join(dbg, root, "/usr/lib/debug");
		cand_add(c, "%s%s", dbg, path + 4);
	}
}

/* perf's default cache directory is $HOME/.debug. */
static const char *cache_dir(const struct rb_symtab_elf_opts *o, char *buf, size_t len)
{
	const char *home = getenv("HOME");

	if (o && o->buildid_dir)
		return o->buildid_dir;
	if (!home || snprintf(buf, len, "%s/.debug", home) >= (int)len)
		return "";
	return buf;
}

struct pick {
	struct symsrc *syms, *run;
	struct symsrc ss[2];
	int path_err;                 /* why path itself was unusable, 0 if it was fine */
	char path_msg[512];
};

static int id_matches(const struct symsrc *ss, const uint8_t *id, size_t idlen)
{
	uint8_t got[BUILD_ID_MAX];

	if (!idlen)
		return 1;
	return elf_build_id(&ss->e, got, sizeof(got)) == (int)idlen && memcmp(got, id, idlen) == 0;
}

/* Open one candidate and keep it if it supplies the symbol table or the runtime image. */
static void try_candidate(struct pick *pk, const char *file, int is_path, const uint8_t *id, size_t idlen)
{
	struct symsrc *ss = &pk->ss[(pk->syms != NULL) + (pk->run != NULL && pk->run != pk->syms)];
	int err, used = 0;

	if (!is_path && !is_regular_file(file))
		return;
	err = symsrc_open(ss, file, is_path ? pk->path_msg : NULL, sizeof(pk->path_msg));
	if (err == 0 && !id_matches(ss, id, idlen)) {
		symsrc_close(ss);
		err = fail(is_path ? pk->path_msg : NULL, sizeof(pk->path_msg), -ESTALE,
			   "%s: build-id does not match the recording's", file);
	}
	if (is_path)
		pk->path_err = err;
	if (err)
		return;
	if (!pk->syms && ss->has_symtab)
		pk->syms = ss, used = 1;
	if (!pk->run && (ss->has_dynsym || ss->has_opd))
		pk->run = ss, used = 1;
	if (!used)
		symsrc_close(ss);
}

static int elf_expected_id(const char *root, const char *path, const struct rb_symtab_elf_opts *o,
			   uint8_t *id)
{
	char file[PATH_MAX];
	struct mfile f;
	struct elf e;
	int r = 0;

	if (o && o->build_id && o->build_id_len) {
		r = o->build_id_len > BUILD_ID_MAX ? BUILD_ID_MAX : (int)o->build_id_len;
		memcpy(id, o->build_id, (size_t)r);
		return r;
	}
	join(file, root, path);
	if (!is_regular_file(file) || mfile_open(&f, file, NULL, 0))
		return 0;
	if (elf_parse(&e, file, &f, NULL, 0) == 0)
		r = elf_build_id(&e, id, BUILD_ID_MAX);
	mfile_close(&f);
	return r;
}

static void pick_files(struct pick *pk, const char *path, const struct rb_symtab_elf_opts *o)
{
	const char *root = o && o->root ? o->root : "";
	uint8_t id[BUILD_ID_MAX];
	int idlen = elf_expected_id(root, path, o, id);
	struct cands *c = calloc(1, sizeof(*c));
	char file[PATH_MAX], cache[PATH_MAX];
	size_t i;

	memset(pk, 0, sizeof(*pk));
	join(file, root, path);
	if (!c) {
		pk->path_err = fail(pk->path_msg, sizeof(pk->path_msg), -ENOMEM, "%s: out of memory", path);
		return;
	}
	if (o && o->debug_path)
		cand_add(c, "%s", o->debug_path);
	if (o && (o->debug_path || o->no_debug_search))
		cand_add(c, "%s", file);
	else
		gather(c, root, cache_dir(o, cache, sizeof(cache)), path, id, idlen > 0 ? (size_t)idlen : 0);
	for (i = 0; i < c->n && !(pk->syms && pk->run); i++)
		try_candidate(pk, c->path[i], strcmp(c->path[i], file) == 0, id, idlen > 0 ? (size_t)idlen : 0);
	free(c);
}

static void pick_close(struct pick *pk)
{
	if (pk->syms)
		symsrc_close(pk->syms);
	if (pk->run && pk->run != pk->syms)
		symsrc_close(pk->run);
}

/* perf's dso__load_sym + PLT pass over the chosen files. */
static int load_tables(struct loadctx *c)
{
	int nr = 0, r;

	if (c->syms->has_symtab) {
		if ((r = load_table(c, &c->syms->symtab)) < 0)
			return r;
		nr = r;
	}
	if (c->syms->has_dynsym) {
		if ((r = load_table(c, &c->syms->dynsym)) < 0)
			return r;
		nr += r;
	}
	return nr > 0 ? synthesize_plt(c) : 0;
}

static int load_symbols(struct loadctx *c)
{
	int r = loadctx_headers(c);

	if (!r)
		r = load_tables(c);
	loadctx_free(c);
	return r;
}

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
		return fail(msg, msglen, -EINVAL, "rb_symtab_load_elf: %s", out ? "no path" : "no result pointer");
	if (strlen(path) + (opts && opts->root ? strlen(opts->root) + 1 : 0) >= PATH_MAX)
		return fail(msg, msglen, -ENAMETOOLONG, "%.64s...: path too long", path);
	if (!(pk = malloc(sizeof(*pk))))
		return fail(msg, msglen, -ENOMEM, "%s: out of memory", path);
	pick_files(pk, path, opts);
	memset(&t, 0, sizeof(t));
	if (!pk->syms && !pk->run) {
		err = pk->path_err;
		fail(msg, msglen, err, "%s", pk->path_msg);
		if (!err)
			err = table_from_tree(&t, path, kernel, out);   /* valid ELF, no symbols: empty table */
	} else {
		c = (struct loadctx){ .t = &t, .syms = pk->syms ? pk->syms : pk->run, .run = pk->run ? pk->run : pk->syms,
				      .msg = msg, .msglen = msglen, .kernel = kernel, .reloc = reloc };
		err = load_symbols(&c);
		if (!err && (err = table_from_tree(&t, c.syms->path, kernel, out)))
			fail(msg, msglen, err, "%s: out of memory", path);
	}
	pick_close(pk);
	free(pk);
	tree_free(&t);
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

int rb_elf_symbol_value(const char *path, const char *name, uint64_t *value)
{
	struct mfile f;
	struct elf e;
	struct shdr tab, strtab;
	const uint8_t *syms, *strs;
	size_t nsyms, strsz, len, esz;
	int found = 0;

	if (mfile_open(&f, path, NULL, 0))
		return -ENOENT;
	if (elf_parse(&e, path, &f, NULL, 0) == 0 && find_section(&e, ".symtab", &tab, NULL) &&
	    tab.type == SHT_SYMTAB && tab.link < e.shnum) {
		read_shdr(&e, tab.link, &strtab);
		esz = e.is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
		if (sec_data(&e, &tab, &syms, &nsyms) == 0 && sec_data(&e, &strtab, &strs, &strsz) == 0)
			for (size_t i = 0; i < nsyms / esz && !found; i++) {
				struct esym sy;
				const char *n;
				read_sym(&e, syms + i * esz, &sy);
				n = str_at(strs, strsz, sy.name, &len);
				if (n && len == strlen(name) && !memcmp(n, name, len) && sy.shndx != SHN_UNDEF) {
					*value = sy.value;
					found = 1;
				}
			}
	}
	mfile_close(&f);
	return found;
}

int rb_symtab_load_elf(struct rb_symtab **out, const char *path, char *msg, size_t msglen)
{
	return rb_symtab_load_elf_opts(out, path, NULL, msg, msglen);
}

int rb_elf_find_debuginfo(const char *path, const char *root, const uint8_t *build_id,
			  size_t build_id_len, char *buf, size_t buflen)
{
	struct rb_symtab_elf_opts o = { NULL, 0, build_id, build_id_len, root, NULL };
	char file[PATH_MAX];
	struct pick *pk;
	int found = 0;

	if (!path || !buf || !buflen)
		return -EINVAL;
	if (!(pk = malloc(sizeof(*pk))))
		return -ENOMEM;
	pick_files(pk, path, &o);
	join(file, root ? root : "", path);
	if (pk->syms && strcmp(pk->syms->path, file) != 0 && strlen(pk->syms->path) < buflen) {
		strcpy(buf, pk->syms->path);
		found = 1;
	}
	pick_close(pk);
	free(pk);
	return found;
}

/* An ELF file whose build-id is @id (when given) and that holds code bytes (not a debug-only file). */
static int is_code_image(const char *file, const uint8_t *id, size_t idlen)
{
	struct mfile f;
	struct elf e;
	struct shdr sh;
	uint8_t got[BUILD_ID_MAX];
	int ok = 0;

	if (!is_regular_file(file) || mfile_open(&f, file, NULL, 0))
		return 0;
	if (elf_parse(&e, file, &f, NULL, 0) == 0 &&
	    (!idlen || (elf_build_id(&e, got, sizeof(got)) == (int)idlen && !memcmp(got, id, idlen))))
		for (size_t i = 1; i < e.shnum && !ok; i++) {
			read_shdr(&e, i, &sh);
			ok = sh.type == SHT_PROGBITS && (sh.flags & SHF_EXECINSTR) && sh.size &&
			     in_file(&e, sh.offset, sh.size);
		}
	mfile_close(&f);
	return ok;
}

/*
 * The PT_LOAD segments of a kernel image (vmlinux, or a kcore copy, which is
 * ET_CORE): trace decoders map a kernel address to a file offset through the
 * segment covering it, since the kernel's map says nothing about the file.
 */
int rb_elf_load_segments(const char *path, struct rb_elf_segment **out, char *msg, size_t msglen)
{
	struct mfile f;
	struct elf e;
	struct phdr ph;
	struct rb_elf_segment *v = NULL;
	size_t n = 0;
	int err;

	*out = NULL;
	if ((err = mfile_open(&f, path, msg, msglen)))
		return err;
	if ((err = elf_parse(&e, path, &f, msg, msglen)))
		goto out;
	if (e.phnum && !(v = calloc(e.phnum, sizeof(*v)))) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < e.phnum; i++) {
		read_phdr(&e, i, &ph);
		if (ph.type != PT_LOAD || !ph.filesz)
			continue;
		if (!in_file(&e, ph.offset, ph.filesz)) {
			err = fail(msg, msglen, -EINVAL, "%s: PT_LOAD %zu (file offset %#llx, %#llx bytes) runs past the end of the file",
				   path, i, (unsigned long long)ph.offset, (unsigned long long)ph.filesz);
			goto out;
		}
		v[n++] = (struct rb_elf_segment){ ph.offset, ph.vaddr, ph.filesz };
	}
	if (!n)
		err = fail(msg, msglen, -ENOEXEC, "%s: no PT_LOAD segment with file contents", path);
out:
	mfile_close(&f);
	if (err < 0) {
		free(v);
		return err;
	}
	*out = v;
	return (int)n;
}

/* Build-ids equal on their common length, the longer one zero past it (simpleperf pads to 20 bytes). */
static int same_build_id(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	size_t n = alen < blen ? alen : blen;
	const uint8_t *rest = alen > blen ? a : b;

	if (memcmp(a, b, n) != 0)
		return 0;
	for (size_t i = n; i < (alen > blen ? alen : blen); i++)
		if (rest[i])
			return 0;
	return 1;
}

int rb_elf_find_image(const char *path, const char *root, const char *buildid_dir, const uint8_t *build_id,
		      size_t build_id_len, char *buf, size_t buflen)
{
	struct rb_symtab_elf_opts o = { NULL, 0, NULL, 0, root, buildid_dir };
	char hex[2 * BUILD_ID_MAX + 1], cache[PATH_MAX], file[PATH_MAX];
	struct cands *c;
	int found = 0;

	if (!path || !buf || !buflen)
		return -EINVAL;
	if (!(c = calloc(1, sizeof(*c))))
		return -ENOMEM;
	if (build_id_len > BUILD_ID_MAX)
		build_id_len = BUILD_ID_MAX;
	if (build_id_len) {
		hex_id(build_id, build_id_len, hex);
		cand_cache(c, cache_dir(&o, cache, sizeof(cache)), path, hex, 0);
	}
	if (root && root[0]) {
		join(file, root, path);
		cand_add(c, "%s", file);
	}
	if (path[0] == '/')
		cand_add(c, "%s", path);
	for (size_t i = 0; i < c->n && !found; i++) {
		uint8_t id[BUILD_ID_MAX];
		int n;
		if (!is_code_image(c->path[i], NULL, 0))   /* not a debug-only file */
			continue;
		n = build_id_len ? rb_elf_build_id(c->path[i], id, sizeof(id)) : 0;
		if (build_id_len && (n <= 0 || !same_build_id(id, (size_t)n, build_id, build_id_len)))
			continue;
		if (strlen(c->path[i]) < buflen) {
			strcpy(buf, c->path[i]);
			found = 1;
		}
	}
	free(c);
	return found;
}

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
	return tree_insert(t, addr, 0, bind, name, len);
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
	size_t i = tree_first(t), nx;

	for (; i != NONE; i = nx) {
		nx = tree_next(t, i);
		if (strchr(node_name(t, i), '\t') || strcmp(node_name(t, i), ENTRY_TRAMPOLINE) == 0)
			tree_erase(t, i);
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
		return fail(msg, msglen, -errno, "%s: %s", path, strerror(errno));
	for (;;) {
		if (grow((void **)&b, &cap, n + 65536, 1)) {
			close(fd);
			free(b);
			return fail(msg, msglen, -ENOMEM, "%s: out of memory", path);
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
		return fail(msg, msglen, (int)r, "%s: read: %s", path, strerror((int)-r));
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
	if (mfile_open(&f, path, NULL, 0) == 0) {
		in.p = (const char *)f.p;
		in.n = f.size;
	} else if ((err = slurp(path, &buf, &in.n, msg, msglen))) {
		return err;
	} else {
		in.p = buf;
	}
	err = kallsyms_parse(t, &in);
	mfile_close(&f);
	free(buf);
	if (err)
		return fail(msg, msglen, err, "%s: out of memory", path);
	if (t->live == 0)
		return fail(msg, msglen, -ENOEXEC, "%s: no kallsyms symbols (not a kallsyms file?)", path);
	fixup_end(t, 1);
	fixup_duplicate(t);
	return 0;
}

static int kallsyms_args(struct rb_symtab **out, const char *path, char *msg, size_t msglen)
{
	if (msg && msglen)
		msg[0] = '\0';
	if (out)
		*out = NULL;
	if (!out || !path || !*path)
		return fail(msg, msglen, -EINVAL, "rb_symtab_load_kallsyms: %s", out ? "no path" : "no result pointer");
	return 0;
}

int rb_symtab_load_kallsyms(struct rb_symtab **out, const char *path, char *msg, size_t msglen)
{
	struct tree t;
	int err;

	memset(&t, 0, sizeof(t));
	if ((err = kallsyms_args(out, path, msg, msglen)) || (err = kallsyms_tree(&t, path, msg, msglen))) {
		tree_free(&t);
		return err;
	}
	kallsyms_split(&t);
	if ((err = table_from_tree(&t, path, 1, out)))
		fail(msg, msglen, err, "%s: out of memory", path);
	tree_free(&t);
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
	for (i = tree_first(from); i != NONE; i = tree_next(from, i)) {
		const struct rb_sym *s = &N(from, i).s;

		if (!(len = module_prefix(node_name(from, i), module)))
			continue;
		if (tree_insert(to, s->start - map_start, 0, s->binding, node_name(from, i), len))
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
		return fail(msg, msglen, -EINVAL, "rb_symtab_load_kallsyms_module: no module name");
	if (!(err = kallsyms_tree(&all, path, msg, msglen)) &&
	    !(err = kallsyms_move_module(&all, &mod, module, map_start)) &&
	    mod.live == 0)
		err = fail(msg, msglen, -ENOENT, "%s: no symbols of module [%s]", path, module);
	if (!err && (err = table_from_tree(&mod, path, 0, out)))
		fail(msg, msglen, err, "%s: out of memory", path);
	tree_free(&all);
	tree_free(&mod);
	return err;
}
