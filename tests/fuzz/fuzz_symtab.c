/*
 * fuzz_symtab.c - libFuzzer target for the symbol readers behind the
 * decoder (decoder/session/symtab.c): an object file (ELF: symbols, .plt, build-id
 * note) or, when the input does not start with the ELF magic, a kallsyms
 * file (kernel and module symbols). Archives carry such objects, so they are
 * untrusted input like the recording itself. Debug-file search is off and
 * HOME points into the scratch area, so only the input is read. Every
 * symbol found is looked up by its own address, which must find a symbol
 * that contains it, and its name touched to its end.
 */
#include "config.h"
#include "decoder/session/symtab.h"
#include "fuzz.h"

static volatile size_t sink;

static void walk(struct rb_symtab *t)
{
	size_t n = rb_symtab_count(t);
	for (size_t i = 0; i < n && i < 4096; i++) {
		const struct rb_sym *s = rb_symtab_at(t, i);
		if (!s)
			abort();        /* in range, so never NULL */
		sink += strlen(s->name);
		const struct rb_sym *f = rb_symtab_find(t, s->start);
		if (s->end > s->start && (!f || f->start > s->start || (f->end > f->start && f->end <= s->start))) {
			fprintf(stderr, "symtab: %s [%#llx, %#llx) is not found by its own start\n", s->name,
				(unsigned long long)s->start, (unsigned long long)s->end);
			abort();
		}
		const struct rb_sym *u = rb_symtab_export_lookup(t, s->start + 1);
		if (u)
			sink += strlen(u->name);
		sink += rb_symtab_map_ip(t, s->start, 0x400000, 0x1000);
	}
	(void)rb_symtab_lookup(t, 0x401000);
	(void)rb_symtab_add_unknown(t, 0xdead0000);
	(void)rb_symtab_lookup(t, 0xdead0000);
	const char *src = rb_symtab_source(t);
	if (src)
		sink += strlen(src);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[512];
	if (!path[0]) {
		char home[512];
		snprintf(path, sizeof(path), "%s/object", fuzz_scratch());
		snprintf(home, sizeof(home), "%s/home", fuzz_scratch());
		mkdir(home, 0700);
		setenv("HOME", home, 1);
	}
	if (fuzz_write_file(path, data, size) < 0)
		return 0;
	struct rb_symtab *t = NULL;
	char msg[512];
	if (size >= 4 && !memcmp(data, "\177ELF", 4)) {
		uint8_t id[20];
		sink += (size_t)rb_elf_build_id(path, id, sizeof(id));
		struct rb_symtab_elf_opts o = { .no_debug_search = 1 };
		if (rb_symtab_load_elf_opts(&t, path, &o, msg, sizeof(msg)) == 0)
			walk(t);
		rb_symtab_free(t);
	} else {
		if (rb_symtab_load_kallsyms(&t, path, msg, sizeof(msg)) == 0)
			walk(t);
		rb_symtab_free(t);
		t = NULL;
		if (rb_symtab_load_kallsyms_module(&t, path, "ext4", 0xffffffffc0000000ULL, msg, sizeof(msg)) == 0)
			walk(t);
		rb_symtab_free(t);
	}
	unlink(path);
	return 0;
}
