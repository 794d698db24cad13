/*
 * test_spsym.c - simpleperf's per-binary symbol tables (features FILE 128
 * and FILE2 132) read from bytes laid out here by hand, as simpleperf's
 * writer lays them out (record_file_writer.cpp; FILE2 as protobuf's wire
 * format encodes record_file.proto's FileFeature), given to a machine, and
 * sample ips resolved through it. Every expected name and offset is worked
 * out beside it from simpleperf's Dso::IpToVaddrInFile for the entry's type;
 * the expected object address is perf's map_ip (ip - start + pgoff) where
 * the table is in perf's file-offset space. Malformed entries stop the walk
 * with an error naming the feature and the entry's file offset.
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "perfdata/pd.h"
#include "decoder/session/machine.h"
#include "decoder/session/sym_simpleperf.h"
#include "tap.h"

struct buf {
	uint8_t b[4096];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	memcpy(b->b + b->n, p, n);
	b->n += n;
}
static void u32(struct buf *b, uint32_t v) { put(b, &v, 4); }
static void u64(struct buf *b, uint64_t v) { put(b, &v, 8); }
static void str(struct buf *b, const char *s) { put(b, s, strlen(s) + 1); }

/* ---------------------------------------------------------- FILE (128) */

struct sym { uint64_t vaddr; uint32_t len; const char *name; };

/* One FILE entry; @tail: the bytes after the symbols (dex offsets, file_offset_of_min_vaddr), @ntail of them */
static void v1_entry(struct buf *b, const char *path, uint32_t type, uint64_t min_vaddr, const struct sym *s,
		     uint32_t nsym, const struct buf *tail)
{
	struct buf e = { .n = 0 };
	str(&e, path);
	u32(&e, type);
	u64(&e, min_vaddr);
	u32(&e, nsym);
	for (uint32_t i = 0; i < nsym; i++) {
		u64(&e, s[i].vaddr);
		u32(&e, s[i].len);
		str(&e, s[i].name);
	}
	if (tail)
		put(&e, tail->b, tail->n);
	u32(b, (uint32_t)e.n);
	put(b, e.b, e.n);
}

/* --------------------------------------------------------- FILE2 (132) */

static void varint(struct buf *b, uint64_t v)
{
	do {
		uint8_t c = v & 0x7f;
		v >>= 7;
		if (v)
			c |= 0x80;
		put(b, &c, 1);
	} while (v);
}
static void pb_u(struct buf *b, unsigned field, uint64_t v)
{
	varint(b, (uint64_t)field << 3);
	varint(b, v);
}
static void pb_bytes(struct buf *b, unsigned field, const void *p, size_t n)
{
	varint(b, (uint64_t)field << 3 | 2);
	varint(b, n);
	put(b, p, n);
}

/* One FILE2 entry: u32 size, then FileFeature; @oneof (5, 6, 7 or 0) holds field 1 = @value */
static void v2_entry(struct buf *b, const char *path, uint32_t type, uint64_t min_vaddr, const struct sym *s,
		     uint32_t nsym, unsigned oneof, uint64_t value)
{
	struct buf m = { .n = 0 }, sub;
	pb_bytes(&m, 1, path, strlen(path));
	if (type)                       /* proto3 leaves out zeros: the kernel's type 0 is not written */
		pb_u(&m, 2, type);
	if (min_vaddr)
		pb_u(&m, 3, min_vaddr);
	for (uint32_t i = 0; i < nsym; i++) {
		sub.n = 0;
		pb_u(&sub, 1, s[i].vaddr);
		pb_u(&sub, 2, s[i].len);
		pb_bytes(&sub, 3, s[i].name, strlen(s[i].name));
		pb_bytes(&m, 4, sub.b, sub.n);
	}
	if (oneof) {
		sub.n = 0;
		if (value)
			pb_u(&sub, 1, value);
		pb_bytes(&m, oneof, sub.b, sub.n);
	}
	u32(b, (uint32_t)m.n);
	put(b, m.b, m.n);
}

/* ------------------------------------------------------------- checks */

/* @ip of pid 100 (user) or the kernel resolves to @name + @off, at object address @addr (unless ~0) */
static int at(struct rb_machine *m, int kernel, uint64_t ip, const char *name, uint64_t off, uint64_t addr)
{
	struct rb_addr_loc al;
	rb_machine_resolve(m, kernel ? NULL : rb_machine_thread(m, 100, 100, 0), kernel ? 1 : 2, ip, &al);
	if (!al.sym || strcmp(al.sym->name, name) || al.addr - al.sym->start != off || (addr != ~0ULL && al.addr != addr)) {
		diag("ip %#llx: got %s+%#llx at %#llx", (unsigned long long)ip, al.sym ? al.sym->name : "(none)",
		     al.sym ? (unsigned long long)(al.addr - al.sym->start) : 0ULL, (unsigned long long)al.addr);
		return 0;
	}
	return 1;
}

static struct rb_machine *machine(const char *kallsyms)
{
	struct rb_machine_opts o = { .buildid_dir = "/nonexistent", .kallsyms = kallsyms };
	struct rb_machine *m = rb_machine_new(&o);
	rb_machine_comm(m, 100, 100, "app", 1, 0);
	return m;
}

static const struct sym elf_syms[] = { { 0x6100, 0x40, "f1" }, { 0x7000, 0x20, "g" } };
static const struct sym t2_syms[] = { { 0x4004ed, 0x14, "func2" }, { 0x400501, 0x40, "main" } };
static const struct sym k_syms[] = { { 0xffffff8008080000ULL, 0x100, "kfunc" }, { 0xffffff8008080100ULL, 0x80, "kother" } };
static const struct sym mod_syms[] = { { 0x10, 0x20, "mod_fn" } };
static const struct sym dex_syms[] = { { 0x2c0, 0x30, "com.example.Foo.bar" } };

/* The maps every table below is checked through. */
static void maps(struct rb_machine *m)
{
	/* libx.so's two executable segments: file offsets 0x5000 and 0x6000 */
	rb_machine_mmap(m, 100, 100, 0, 0x7f0000000000ULL, 0x1000, 0x5000, "/system/lib/libx.so", NULL, 0, 5, 0);
	rb_machine_mmap(m, 100, 100, 0, 0x7f0000100000ULL, 0x1000, 0x6000, "/system/lib/libx.so", NULL, 0, 5, 0);
	rb_machine_mmap(m, 100, 100, 0, 0x400000, 0x1000, 0, "/data/t2", NULL, 0, 5, 0);
	rb_machine_mmap(m, 100, 100, 0, 0x70000000, 0x1000, 0, "/system/framework/x.jar", NULL, 0, 5, 0);
	rb_machine_mmap(m, -1, -1, 1, 0xffffff8008080000ULL, 0x1000000, 0xffffff8008080000ULL, "[kernel.kallsyms]_text",
			NULL, 0, 5, 0);
	rb_machine_mmap(m, -1, -1, 1, 0xffffff8000001000ULL, 0x2000, 0, "/vendor/lib/modules/mymod.ko", NULL, 0, 5, 0);
}

/*
 * Worked out from IpToVaddrInFile:
 *  libx.so, ELF with file_offset_of_min_vaddr 0x5000, min_vaddr 0x6000:
 *    vaddr = ip - start + pgoff - 0x5000 + 0x6000
 *    ip 0x7f0000000110 (pgoff 0x5000): vaddr 0x6110 = f1+0x10; perf's address 0x5110
 *    ip 0x7f0000100008 (pgoff 0x6000): vaddr 0x7008 = g+0x8;   perf's address 0x6008
 *  /data/t2, ELF without the offset (FILE before 2019), min_vaddr 0x400000:
 *    vaddr = ip - start + 0x400000: ip 0x4004ff is func2+0x12 (simpleperf's
 *    report_lib_test: func2 at 0x4004ed, size 0x14, for that sample)
 *  the kernel: vaddr = ip: 0xffffff8008080110 is kother+0x10
 *  mymod.ko ("[mymod]"), kernel module with memory_offset_of_min_vaddr 0x100, min_vaddr 0:
 *    vaddr = ip - start - 0x100: ip 0xffffff8000001118 is mod_fn+0x8
 *  x.jar, dex: vaddr = ip - start + pgoff: 0x700002c8 is com.example.Foo.bar+0x8
 */
static void check_tables(struct rb_machine *m, const char *what)
{
	ok(at(m, 0, 0x7f0000000110ULL, "f1", 0x10, 0x5110), "%s: ELF with file_offset_of_min_vaddr, first segment: f1+0x10 at file offset 0x5110", what);
	ok(at(m, 0, 0x7f0000100008ULL, "g", 0x8, 0x6008), "%s: ELF, a second executable segment (its own pgoff): g+0x8", what);
	ok(at(m, 0, 0x4004ff, "func2", 0x12, ~0ULL), "%s: /data/t2 (FILE: no offset, ip - start + min_vaddr; FILE2: offset 0): func2+0x12", what);
	ok(at(m, 1, 0xffffff8008080110ULL, "kother", 0x10, 0xffffff8008080110ULL), "%s: kernel: the ip itself, kother+0x10", what);
	ok(at(m, 1, 0xffffff8000001118ULL, "mod_fn", 0x8, ~0ULL), "%s: kernel module (a .ko path names [mymod]): memory offset applied, mod_fn+0x8", what);
	ok(at(m, 0, 0x700002c8, "com.example.Foo.bar", 0x8, 0x2c8), "%s: dex: ip - start + pgoff, com.example.Foo.bar+0x8", what);
}

struct seen { int n; uint64_t fo[8]; uint32_t dex[8], nsym[8]; };

static void note_file(void *ctx, const struct pd_sp_file *f)
{
	struct seen *s = ctx;
	if (s->n < 8) {
		s->fo[s->n] = f->offset_of_min_vaddr;
		s->dex[s->n] = f->nr_dex_offsets;
		s->nsym[s->n++] = f->nr_symbols;
	}
}

static void test_file_v1(void)
{
	struct buf b = { .n = 0 }, tail;
	tail.n = 0;
	u64(&tail, 0x5000);             /* file_offset_of_min_vaddr */
	v1_entry(&b, "/system/lib/libx.so", PD_SP_DSO_ELF, 0x6000, elf_syms, 2, &tail);
	v1_entry(&b, "/data/t2", PD_SP_DSO_ELF, 0x400000, t2_syms, 2, NULL);
	v1_entry(&b, "[kernel.kallsyms]", PD_SP_DSO_KERNEL, 0, k_syms, 2, NULL);
	tail.n = 0;
	u64(&tail, 0x100);              /* the module's memory_offset_of_min_vaddr */
	v1_entry(&b, "/vendor/lib/modules/mymod.ko", PD_SP_DSO_KERNEL_MODULE, 0, mod_syms, 1, &tail);
	tail.n = 0;
	u32(&tail, 1);                  /* one dex file, at offset 0x2c */
	u64(&tail, 0x2c);
	v1_entry(&b, "/system/framework/x.jar", PD_SP_DSO_DEX, 0, dex_syms, 1, &tail);

	struct pd_error err;
	struct rb_machine *m = machine(NULL);
	maps(m);
	ok(rb_sp_symbols_from(m, PD_FEAT_SP_FILE, b.b, b.n, 1000, &err) == 5 && !err.code, "FILE: five tables given");
	check_tables(m, "FILE");
	rb_machine_free(m);

	/* the walker's view: every field as written */
	struct seen seen = { 0 };
	ok(pd_sp_file_each(PD_FEAT_SP_FILE, b.b, b.n, 0, note_file, &seen, &err) == 5 && seen.fo[0] == 0x5000 &&
	   seen.fo[1] == PD_SP_NO_OFFSET && seen.fo[2] == PD_SP_NO_OFFSET && seen.fo[3] == 0x100 && seen.dex[4] == 1 &&
	   seen.nsym[0] == 2 && seen.nsym[3] == 1, "FILE: offsets of min_vaddr (absent for the old entry), dex offsets, symbol counts");

	/* damage: the third entry's last symbol loses its NUL (the entry shrinks by one byte: its size says so) */
	struct buf d = { .n = 0 };
	v1_entry(&d, "/system/lib/libx.so", PD_SP_DSO_ELF, 0x6000, elf_syms, 2, NULL);
	v1_entry(&d, "/data/t2", PD_SP_DSO_ELF, 0x400000, t2_syms, 2, NULL);
	size_t third = d.n;
	v1_entry(&d, "[kernel.kallsyms]", PD_SP_DSO_KERNEL, 0, k_syms, 2, NULL);
	uint32_t len;
	memcpy(&len, d.b + third, 4);
	len--;
	memcpy(d.b + third, &len, 4);
	d.n--;
	m = machine(NULL);
	maps(m);
	int n = rb_sp_symbols_from(m, PD_FEAT_SP_FILE, d.b, d.n, 4096, &err);
	char want[64];
	snprintf(want, sizeof(want), "entry at offset %zu", 4096 + third);
	ok(n == 2 && err.code == PD_ERR_FEATURE && err.offset == 4096 + third && strstr(err.msg, "file (128)") &&
	   strstr(err.msg, want), "FILE: a symbol without its NUL stops the walk at that entry, named with feature and offset (%s)", err.msg);
	ok(at(m, 0, 0x4004ff, "func2", 0x12, ~0ULL), "FILE: the tables before the damage are used");
	rb_machine_free(m);

	/* a type simpleperf does not know, and bytes left after the fields, are malformed too */
	d.n = 0;
	v1_entry(&d, "/x", 9, 0, NULL, 0, NULL);
	ok(pd_sp_file_each(PD_FEAT_SP_FILE, d.b, d.n, 0, NULL, NULL, &err) == 0 && strstr(err.msg, "unknown file type"),
	   "FILE: file type 9 is refused (%s)", err.msg);
	d.n = 0;
	tail.n = 0;
	u64(&tail, 0);
	u32(&tail, 7);
	v1_entry(&d, "/x", PD_SP_DSO_ELF, 0, NULL, 0, &tail);
	ok(pd_sp_file_each(PD_FEAT_SP_FILE, d.b, d.n, 0, NULL, NULL, &err) == 0 && strstr(err.msg, "left after"),
	   "FILE: bytes after file_offset_of_min_vaddr are refused (%s)", err.msg);
	d.n = 0;
	u32(&d, 100);
	ok(pd_sp_file_each(PD_FEAT_SP_FILE, d.b, d.n, 0, NULL, NULL, &err) == 0 && strstr(err.msg, "past the end"),
	   "FILE: an entry size past the end of the feature is refused (%s)", err.msg);
}

static void test_file_v2(void)
{
	struct buf b = { .n = 0 };
	v2_entry(&b, "/system/lib/libx.so", PD_SP_DSO_ELF, 0x6000, elf_syms, 2, 6, 0x5000);
	/* FILE2 always records the offset: t2's is 0 (a non-PIE executable's text at file offset 0 of min_vaddr) */
	v2_entry(&b, "/data/t2", PD_SP_DSO_ELF, 0x400000, t2_syms, 2, 6, 0);
	v2_entry(&b, "[kernel.kallsyms]", PD_SP_DSO_KERNEL, 0, k_syms, 2, 0, 0);
	v2_entry(&b, "/vendor/lib/modules/mymod.ko", PD_SP_DSO_KERNEL_MODULE, 0, mod_syms, 1, 7, 0x100);
	v2_entry(&b, "/system/framework/x.jar", PD_SP_DSO_DEX, 0, dex_syms, 1, 5, 0x2c);

	struct pd_error err;
	struct rb_machine *m = machine(NULL);
	maps(m);
	ok(rb_sp_symbols_from(m, PD_FEAT_SP_FILE2, b.b, b.n, 0, &err) == 5 && !err.code, "FILE2: five tables given");
	check_tables(m, "FILE2");
	rb_machine_free(m);

	/* an ELF entry without its elf_file message: simpleperf's reader refuses it */
	size_t second = b.n;
	v2_entry(&b, "/lib/bad.so", PD_SP_DSO_ELF, 0x1000, elf_syms, 1, 0, 0);
	int n = (int)pd_sp_file_each(PD_FEAT_SP_FILE2, b.b, b.n, 64, NULL, NULL, &err);
	ok(n == 5 && err.offset == 64 + second && strstr(err.msg, "file2 (132)") && strstr(err.msg, "elf_file"),
	   "FILE2: an ELF entry without elf_file stops the walk there (%s)", err.msg);

	/* a varint that never ends */
	struct buf d = { .n = 0 };
	uint8_t bad[] = { 0x0a, 0x02, 'a', 'b', 0x10, 0xff, 0xff };
	u32(&d, sizeof(bad));
	put(&d, bad, sizeof(bad));
	ok(pd_sp_file_each(PD_FEAT_SP_FILE2, d.b, d.n, 0, NULL, NULL, &err) == 0 && strstr(err.msg, "protobuf"),
	   "FILE2: a truncated varint is malformed (%s)", err.msg);

	/* fields protobuf does not know are skipped; packed and unpacked dex offsets both count */
	d.n = 0;
	struct buf msg = { .n = 0 }, sub = { .n = 0 };
	pb_bytes(&msg, 1, "/d.jar", 6);
	pb_u(&msg, 2, PD_SP_DSO_DEX);
	pb_u(&msg, 99, 12345);          /* unknown field */
	struct buf packed = { .n = 0 };
	varint(&packed, 0x10);
	varint(&packed, 0x20);
	pb_bytes(&sub, 1, packed.b, packed.n);
	pb_u(&sub, 1, 0x30);
	pb_bytes(&msg, 5, sub.b, sub.n);
	u32(&d, (uint32_t)msg.n);
	put(&d, msg.b, msg.n);
	struct seen seen = { 0 };
	ok(pd_sp_file_each(PD_FEAT_SP_FILE2, d.b, d.n, 0, note_file, &seen, &err) == 1 && !err.code && seen.dex[0] == 3,
	   "FILE2: an unknown field is skipped; packed and unpacked dex offsets count alike (3)");
}

/* A file the recording vouches for keeps priority: --kallsyms names the kernel's symbols. */
static void test_priority(void)
{
	char path[] = "/tmp/test_spsym_kallsymsXXXXXX";
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (f) {
		fprintf(f, "ffffff8008080000 T _text\nffffff8008080100 T from_kallsyms\nffffff8008090000 T later\n");
		fclose(f);
	}
	struct buf b = { .n = 0 };
	v1_entry(&b, "[kernel.kallsyms]", PD_SP_DSO_KERNEL, 0, k_syms, 2, NULL);
	v1_entry(&b, "/data/t2", PD_SP_DSO_ELF, 0x400000, t2_syms, 2, NULL);
	struct pd_error err;
	struct rb_machine *m = machine(path);
	maps(m);
	/* a build-id the recording gives for t2, with no file to match it: the recorded symbols */
	static const uint8_t id[20] = { 1, 2, 3 };
	rb_machine_set_build_id(m, "/data/t2", id, 20, 0);
	rb_sp_symbols_from(m, PD_FEAT_SP_FILE, b.b, b.n, 0, &err);
	ok(at(m, 1, 0xffffff8008080110ULL, "from_kallsyms", 0x10, ~0ULL), "--kallsyms given: its symbols, not the recorded ones");
	ok(at(m, 0, 0x4004ff, "func2", 0x12, ~0ULL), "a build-id without a file to match it: the recorded symbols");
	rb_machine_free(m);
	unlink(path);

	/* simpleperf's JIT symbol map "perf-PID.map" is the object of executable anonymous memory */
	b.n = 0;
	static const struct sym jit[] = { { 0x7c79304d9000ULL, 0x100, "generic_jit_symbol_one" } };
	v1_entry(&b, "perf-100.map", PD_SP_DSO_SYMBOL_MAP, 0, jit, 1, NULL);
	m = machine(NULL);
	rb_machine_mmap(m, 100, 100, 0, 0x7c79304d8000ULL, 0x4000, 0, "//anon", NULL, 0, 5, 0);
	rb_sp_symbols_from(m, PD_FEAT_SP_FILE, b.b, b.n, 0, &err);
	ok(at(m, 0, 0x7c79304d9075ULL, "generic_jit_symbol_one", 0x75, 0x7c79304d9075ULL),
	   "symbol map: the ip itself, in the anonymous executable memory perf names /tmp/perf-PID.map");
	rb_machine_free(m);

	/*
	 * No record maps the JIT code: as simpleperf, the process gets maps over
	 * its symbols' pages (0x1000-0x2000 for both symbols below, 0x5000-0x7000
	 * for the third), made when the process is.
	 */
	b.n = 0;
	static const struct sym jit2[] = { { 0x1010, 0x10, "j1" }, { 0x1800, 0x900, "j2" }, { 0x5ff0, 0x20, "j3" } };
	v1_entry(&b, "perf-100.map", PD_SP_DSO_SYMBOL_MAP, 0, jit2, 3, NULL);
	struct rb_machine_opts o = { .buildid_dir = "/nonexistent" };
	m = rb_machine_new(&o);
	rb_sp_symbols_from(m, PD_FEAT_SP_FILE, b.b, b.n, 0, &err);
	rb_machine_comm(m, 100, 100, "jit", 1, 0);
	struct rb_thread *t = rb_machine_thread(m, 100, 100, 0);
	const struct rb_map *m1 = rb_machine_find_map(m, t, 0x1f00), *m2 = rb_machine_find_map(m, t, 0x6fff);
	ok(at(m, 0, 0x2010, "j2", 0x810, 0x2010) && at(m, 0, 0x6000, "j3", 0x10, 0x6000) && m1 && m1->start == 0x1000 &&
	   m1->end == 0x3000 && m2 && m2->start == 0x5000 && m2->end == 0x7000 && !rb_machine_find_map(m, t, 0x3000),
	   "symbol map without a mapping: maps over its symbols' pages (0x1000-0x3000, 0x5000-0x7000), as simpleperf makes them");
	rb_machine_free(m);
}

int main(void)
{
	test_file_v1();
	test_file_v2();
	test_priority();
	return done_testing();
}
