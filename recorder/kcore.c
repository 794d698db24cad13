/*
 * kcore.c - the perf.data folder perf record --kcore writes: OUTPUT/data
 * and OUTPUT/kcore_dir/{kallsyms,modules,kcore}. kallsyms and modules are
 * copied whole; of kcore only the code a decoder needs: the executable
 * PT_LOAD segments cut to the kernel map (_stext.._etext, or the lowest to
 * the highest function symbol plus a page), the modules' map (the lowest
 * module address to the page after the highest module symbol) and the page
 * of each PTI entry trampoline. The copy is an ELF core with one PT_LOAD
 * per piece, the pieces packed one after the other from the first page
 * boundary after the program headers (a piece lying inside the kernel's
 * piece in the original, as the trampoline does, points into that copy
 * instead of being copied twice) - the layout of perf's kcore_copy, so
 * that perf and rbdecode read it as they read perf's.
 *
 * Workload: once per recording, before the events open; /proc files are
 * read with read(2), never mapped.
 */
#include "config.h"
#include <ctype.h>
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "kcore.h"

#define TRAMPOLINE "__entry_SYSCALL_64_trampoline"
#define MAX_PIECES 64

struct piece {
	uint64_t addr, len, off;     /* in the original kcore */
	uint64_t rel;                /* from the start of the copy's data */
	int inside;                  /* lies within pieces[kernel] in the original */
};

struct kinfo {
	uint64_t stext, etext, first_sym, last_sym;
	uint64_t first_mod, first_mod_sym, last_mod_sym;
	uint64_t tramp[8];
	int nr_tramp;
	struct piece p[MAX_PIECES];
	int n;
};

static uint64_t pg;

static uint64_t down(uint64_t a) { return a & ~(pg - 1); }
static uint64_t up(uint64_t a) { return (a + pg - 1) & ~(pg - 1); }

/* Copy @from to a new file @to (mode 0400), as read(2) gives it. */
static int copy_file(const char *from, const char *to, struct rec_err *e)
{
	char buf[65536];
	ssize_t n;
	int in = open(from, O_RDONLY | O_CLOEXEC), out;

	if (in < 0)
		return rec_fail(e, errno, "--kcore: cannot read %s: %s", from, strerror(errno));
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0400);
	if (out < 0) {
		rec_fail(e, errno, "--kcore: cannot create %s: %s", to, strerror(errno));
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			rec_fail(e, errno ? errno : EIO, "--kcore: writing %s: %s", to, strerror(errno ? errno : EIO));
			n = -2;
			break;
		}
	if (n == -1)
		rec_fail(e, errno, "--kcore: reading %s: %s", from, strerror(errno));
	close(in);
	if (close(out) < 0 && n == 0) {
		rec_fail(e, errno, "--kcore: writing %s: %s", to, strerror(errno));
		n = -1;
	}
	return n < 0 ? -1 : 0;
}

static int parse_kallsyms(const char *path, struct kinfo *k, struct rec_err *e)
{
	FILE *f = fopen(path, "re");
	char line[1024];

	if (!f)
		return rec_fail(e, errno, "--kcore: cannot read %s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *end, type, *name;
		uint64_t a = strtoull(line, &end, 16);
		if (end == line || *end != ' ')
			continue;
		type = (char)toupper((unsigned char)end[1]);
		name = end + 2;
		if ((type != 'T' && type != 'W') || *name != ' ')
			continue;
		name++;
		name[strcspn(name, "\n")] = 0;
		if (strchr(name, '[')) {     /* "sym\t[module]" */
			if (!k->first_mod_sym || a < k->first_mod_sym)
				k->first_mod_sym = a;
			if (a > k->last_mod_sym)
				k->last_mod_sym = a;
			continue;
		}
		if (!k->first_sym || a < k->first_sym)
			k->first_sym = a;
		if (a > k->last_sym)
			k->last_sym = a;
		if (!strcmp(name, "_stext"))
			k->stext = a;
		else if (!strcmp(name, "_etext"))
			k->etext = a;
		else if (!strcmp(name, TRAMPOLINE) && k->nr_tramp < 8)
			k->tramp[k->nr_tramp++] = a;
	}
	fclose(f);
	if (!k->first_sym && !k->stext)
		return rec_fail(e, EPERM, "--kcore: %s shows no kernel addresses (kernel.kptr_restrict, or not root)",
				path);
	return 0;
}

/* /proc/modules: "name size refs deps state 0xaddr [(taints)]" */
static int parse_modules(const char *path, struct kinfo *k, struct rec_err *e)
{
	FILE *f = fopen(path, "re");
	char line[4096];

	if (!f)
		return rec_fail(e, errno, "--kcore: cannot read %s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *x = strstr(line, " 0x");
		if (!x)
			continue;
		uint64_t a = strtoull(x + 3, NULL, 16);
		if (a && (!k->first_mod || a < k->first_mod))
			k->first_mod = a;
	}
	fclose(f);
	return 0;
}

static int add_piece(struct kinfo *k, uint64_t start, uint64_t end, uint64_t off, uint64_t s, uint64_t e_)
{
	if (s < start || s >= end)
		return 0;
	if (k->n == MAX_PIECES)
		return -1;
	k->p[k->n++] = (struct piece){ .addr = s, .len = (e_ < end ? e_ : end) - s, .off = off + (s - start) };
	return 0;
}

/* The executable PT_LOADs of @fd (a 64- or 32-bit ELF core), cut into pieces. */
static int read_maps(int fd, const char *path, struct kinfo *k, unsigned char *ident, Elf64_Ehdr *eh,
		     struct rec_err *e)
{
	unsigned char buf[sizeof(Elf64_Ehdr)];
	if (pread(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf) || memcmp(buf, ELFMAG, SELFMAG))
		return rec_fail(e, EINVAL, "--kcore: %s is not an ELF file", path);
	memcpy(ident, buf, EI_NIDENT);
	int is64 = buf[EI_CLASS] == ELFCLASS64;
	uint64_t phoff;
	unsigned phnum, phentsize;
	if (is64) {
		memcpy(eh, buf, sizeof(*eh));
		phoff = eh->e_phoff, phnum = eh->e_phnum, phentsize = eh->e_phentsize;
	} else {
		Elf32_Ehdr h;
		memcpy(&h, buf, sizeof(h));
		eh->e_type = h.e_type, eh->e_machine = h.e_machine, eh->e_version = h.e_version;
		eh->e_flags = h.e_flags;
		phoff = h.e_phoff, phnum = h.e_phnum, phentsize = h.e_phentsize;
	}
	for (unsigned i = 0; i < phnum; i++) {
		uint64_t vaddr, off, filesz, memsz;
		uint32_t type, flags;
		if (is64) {
			Elf64_Phdr ph;
			if (pread(fd, &ph, sizeof(ph), (off_t)(phoff + (uint64_t)i * phentsize)) != (ssize_t)sizeof(ph))
				return rec_fail(e, EINVAL, "--kcore: %s: program header %u cannot be read", path, i);
			type = ph.p_type, flags = ph.p_flags, vaddr = ph.p_vaddr, off = ph.p_offset;
			filesz = ph.p_filesz, memsz = ph.p_memsz;
		} else {
			Elf32_Phdr ph;
			if (pread(fd, &ph, sizeof(ph), (off_t)(phoff + (uint64_t)i * phentsize)) != (ssize_t)sizeof(ph))
				return rec_fail(e, EINVAL, "--kcore: %s: program header %u cannot be read", path, i);
			type = ph.p_type, flags = ph.p_flags, vaddr = ph.p_vaddr, off = ph.p_offset;
			filesz = ph.p_filesz, memsz = ph.p_memsz;
		}
		uint64_t len = filesz < memsz ? filesz : memsz;
		if (type != PT_LOAD || !(flags & PF_X) || !len)
			continue;
		uint64_t end = vaddr + len;
		int rc = add_piece(k, vaddr, end, off, k->stext, k->etext);
		if (!rc && k->first_mod)
			rc = add_piece(k, vaddr, end, off, k->first_mod, k->last_mod_sym);
		for (int t = 0; t < k->nr_tramp && !rc; t++)
			rc = add_piece(k, vaddr, end, off, down(k->tramp[t]), down(k->tramp[t]) + len);
		if (rc)
			return rec_fail(e, E2BIG, "--kcore: %s: more than %d code pieces", path, MAX_PIECES);
	}
	if (!k->n)
		return rec_fail(e, EINVAL, "--kcore: %s has no segment holding the kernel text (0x%llx)", path,
				(unsigned long long)k->stext);
	return is64 ? 64 : 32;
}

static int write_all(int fd, const void *b, size_t n, uint64_t off)
{
	const char *p = b;
	while (n) {
		ssize_t w = pwrite(fd, p, n, (off_t)off);
		if (w <= 0)
			return -1;
		p += w, n -= (size_t)w, off += (uint64_t)w;
	}
	return 0;
}

static int copy_range(int in, uint64_t from, int out, uint64_t to, uint64_t len)
{
	char *buf = malloc(pg);
	int rc = 0;
	if (!buf)
		return -1;
	while (len && !rc) {
		size_t n = len < pg ? (size_t)len : (size_t)pg;
		ssize_t r = pread(in, buf, n, (off_t)from);
		if (r < 0)
			rc = -1;
		else if (r == 0)
			break;
		else
			rc = write_all(out, buf, (size_t)r, to);
		from += (uint64_t)(r > 0 ? r : 0), to += (uint64_t)(r > 0 ? r : 0), len -= (uint64_t)(r > 0 ? r : 0);
	}
	free(buf);
	return rc;
}

/* 1 if files @a and @b have the same bytes (read(2) for /proc). */
static int same_file(const char *a, const char *b)
{
	size_t na, nb;
	char *x = read_all(a, &na), *y = read_all(b, &nb);
	int same = x && y && na == nb && !memcmp(x, y, na);
	free(x);
	free(y);
	return same;
}

static int write_kcore(const char *from, const char *to, struct kinfo *k, struct rec_err *e)
{
	unsigned char ident[EI_NIDENT] = { 0 };
	Elf64_Ehdr src = { 0 };
	int in = open(from, O_RDONLY | O_CLOEXEC), out = -1, cls, rc = -1;

	if (in < 0)
		return rec_fail(e, errno, "--kcore: cannot read %s: %s", from, strerror(errno));
	if ((cls = read_maps(in, from, k, ident, &src, e)) < 0)
		goto done;
	/* pieces inside the kernel's in the original point into its copy */
	int kern = -1;
	for (int i = 0; i < k->n && kern < 0; i++)
		if (k->p[i].addr <= k->stext && k->p[i].addr + k->p[i].len - 1 >= k->stext)
			kern = i;
	uint64_t rel = 0;
	for (int i = 0; i < k->n; i++) {
		struct piece *p = &k->p[i];
		p->inside = kern >= 0 && i != kern && p->off >= k->p[kern].off &&
			    p->off + p->len <= k->p[kern].off + k->p[kern].len;
		if (!p->inside) {
			p->rel = rel;
			rel += p->len;
		}
	}
	for (int i = 0; i < k->n; i++)
		if (k->p[i].inside)
			k->p[i].rel = k->p[i].off - k->p[kern].off + k->p[kern].rel;
	size_t ehsz = cls == 64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	size_t phsz = cls == 64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	uint64_t data = up(ehsz + phsz * (size_t)k->n);
	unsigned char *hdr = calloc(1, ehsz + phsz * (size_t)k->n);
	if (!hdr) {
		rec_fail(e, ENOMEM, "out of memory");
		goto done;
	}
	if (cls == 64) {
		Elf64_Ehdr h = { .e_type = src.e_type, .e_machine = src.e_machine, .e_version = src.e_version,
				 .e_phoff = ehsz, .e_flags = src.e_flags, .e_ehsize = (uint16_t)ehsz,
				 .e_phentsize = (uint16_t)phsz, .e_phnum = (uint16_t)k->n };
		memcpy(h.e_ident, ident, EI_NIDENT);
		memcpy(hdr, &h, sizeof(h));
		for (int i = 0; i < k->n; i++) {
			Elf64_Phdr ph = { .p_type = PT_LOAD, .p_flags = PF_R | PF_W | PF_X, .p_offset = data + k->p[i].rel,
					  .p_vaddr = k->p[i].addr, .p_filesz = k->p[i].len, .p_memsz = k->p[i].len,
					  .p_align = pg };
			memcpy(hdr + ehsz + phsz * (size_t)i, &ph, sizeof(ph));
		}
	} else {
		Elf32_Ehdr h = { .e_type = src.e_type, .e_machine = src.e_machine, .e_version = src.e_version,
				 .e_phoff = (uint32_t)ehsz, .e_flags = src.e_flags, .e_ehsize = (uint16_t)ehsz,
				 .e_phentsize = (uint16_t)phsz, .e_phnum = (uint16_t)k->n };
		memcpy(h.e_ident, ident, EI_NIDENT);
		memcpy(hdr, &h, sizeof(h));
		for (int i = 0; i < k->n; i++) {
			Elf32_Phdr ph = { .p_type = PT_LOAD, .p_flags = PF_R | PF_W | PF_X,
					  .p_offset = (uint32_t)(data + k->p[i].rel), .p_vaddr = (uint32_t)k->p[i].addr,
					  .p_filesz = (uint32_t)k->p[i].len, .p_memsz = (uint32_t)k->p[i].len,
					  .p_align = (uint32_t)pg };
			memcpy(hdr + ehsz + phsz * (size_t)i, &ph, sizeof(ph));
		}
	}
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0400);
	if (out < 0) {
		free(hdr);
		rec_fail(e, errno, "--kcore: cannot create %s: %s", to, strerror(errno));
		goto done;
	}
	int wr = write_all(out, hdr, ehsz + phsz * (size_t)k->n, 0);
	free(hdr);
	for (int i = 0; i < k->n && !wr; i++)
		if (!k->p[i].inside)
			wr = copy_range(in, k->p[i].off, out, data + k->p[i].rel, k->p[i].len);
	if (wr || close(out) < 0) {
		rec_fail(e, errno ? errno : EIO, "--kcore: copying %s to %s: %s", from, to, strerror(errno ? errno : EIO));
		out = -1;
		goto done;
	}
	out = -1;
	rc = 0;
done:
	if (out >= 0)
		close(out);
	close(in);
	return rc;
}

int kcore_copy(const char *from, const char *to, struct rec_err *e)
{
	char src[3][4096], dst[3][4096];
	static const char *const names[3] = { "kallsyms", "modules", "kcore" };
	struct kinfo *k = calloc(1, sizeof(*k));
	int done = 0, rc = -1;

	if (!k)
		return rec_fail(e, ENOMEM, "out of memory");
	pg = (uint64_t)sysconf(_SC_PAGESIZE);
	for (int i = 0; i < 3; i++) {
		snprintf(src[i], sizeof(src[i]), "%s/%s", from, names[i]);
		snprintf(dst[i], sizeof(dst[i]), "%s/%s", to, names[i]);
	}
	if (mkdir(to, 0700) < 0 && errno != EEXIST) {
		rec_fail(e, errno, "--kcore: cannot create %s: %s", to, strerror(errno));
		goto out;
	}
	for (; done < 2; done++)
		if (copy_file(src[done], dst[done], e) < 0)
			goto out;
	if (parse_kallsyms(src[0], k, e) < 0 || parse_modules(src[1], k, e) < 0)
		goto out;
	k->stext = down(k->stext ? k->stext : k->first_sym);
	if (k->etext)
		k->etext = up(k->etext);
	else
		k->etext = up(k->last_sym) + pg;
	if (k->first_mod_sym && (!k->first_mod || k->first_mod_sym < k->first_mod))
		k->first_mod = k->first_mod_sym;
	k->first_mod = down(k->first_mod);
	if (k->last_mod_sym)
		k->last_mod_sym = up(k->last_mod_sym) + pg;
	if (k->first_mod && !k->last_mod_sym) {
		rec_fail(e, EINVAL, "--kcore: %s lists modules but %s has no module symbol", src[1], src[0]);
		goto out;
	}
	if (write_kcore(src[2], dst[2], k, e) < 0)
		goto out;
	done = 3;
	if (!same_file(src[0], dst[0])) {
		rec_fail(e, EAGAIN, "--kcore: %s changed during the copy (a module was loaded or unloaded): try again",
			 src[0]);
		goto out;
	}
	rc = 0;
out:
	if (rc < 0)
		for (int i = 0; i < done; i++)
			unlink(dst[i]);
	free(k);
	return rc;
}

/* Remove @dir/@name: a file, or a folder of files (kcore_dir). */
static void remove_entry(const char *dir, const char *name)
{
	char p[4096];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	if (lstat(p, &st) < 0)
		return;
	if (!S_ISDIR(st.st_mode)) {
		unlink(p);
		return;
	}
	DIR *d = opendir(p);
	struct dirent *de;
	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			remove_entry(p, de->d_name);
	if (d)
		closedir(d);
	rmdir(p);
}

int perf_dir_prepare(const char *dir, struct rec_err *e)
{
	struct stat st;

	if (lstat(dir, &st) == 0 && !S_ISDIR(st.st_mode) && unlink(dir) < 0)
		return rec_fail(e, errno, "-o %s: cannot replace the file by a perf.data folder: %s", dir,
				strerror(errno));
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return rec_fail(e, errno, "-o %s: cannot create the perf.data folder: %s", dir, strerror(errno));
	DIR *d = opendir(dir);
	if (!d)
		return rec_fail(e, errno, "-o %s: cannot open the perf.data folder: %s", dir, strerror(errno));
	struct dirent *de;
	while ((de = readdir(d)))     /* an older recording's files, never anything else */
		if (!strcmp(de->d_name, "data") || !strncmp(de->d_name, "data.", 5) || !strcmp(de->d_name, "kcore_dir"))
			remove_entry(dir, de->d_name);
	closedir(d);
	return 0;
}
