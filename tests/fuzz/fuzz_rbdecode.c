/*
 * fuzz_rbdecode.c - libFuzzer target for the whole decoding pipeline behind
 * rbdecode: the input is a recording (perf.data, pipe-mode stream, or an
 * archive holding one) and it goes through the very code of the command
 * line (the cli/ sources, linked in with rbdecode's main renamed): `export` into a
 * SQLite database in the scratch area (session -> machine -> symbols ->
 * store, writer thread included), then `info --json`, `info --stats`,
 * `script` and `gaps --json`. Symbols are looked up only in an empty symfs,
 * an empty kallsyms and an empty build-id cache, so that nothing on this
 * machine's disk takes part. Output goes to /dev/null.
 *
 * Besides crashes it checks the store's promise: the database exists under
 * its final name only when export succeeded (exit 0, or 3 for a recording
 * read in part), and no temporary database is left beside it.
 */
#include "config.h"
#include <dirent.h>
#include <getopt.h>
#include "decoder/session/unpack.h"
#include "fuzz.h"

int rbdecode_main(int argc, char **argv);

static char input[512], db[512], symfs[512], kallsyms[512], home[512], tmp[512];

static void setup(void)
{
	const char *s = fuzz_scratch();
	snprintf(db, sizeof(db), "%s/out/fuzz.db", s);
	snprintf(symfs, sizeof(symfs), "%s/symfs", s);
	snprintf(kallsyms, sizeof(kallsyms), "%s/kallsyms", s);
	snprintf(home, sizeof(home), "%s/home", s);
	snprintf(tmp, sizeof(tmp), "%s/tmp", s);
	char out[512];
	snprintf(out, sizeof(out), "%s/out", s);
	mkdir(out, 0700), mkdir(symfs, 0700), mkdir(home, 0700), mkdir(tmp, 0700);
	fuzz_write_file(kallsyms, (const uint8_t *)"", 0);
	setenv("HOME", home, 1);
	setenv("TMPDIR", tmp, 1);
	fuzz_quiet_stdout();
}

static int run(char **argv)
{
	int argc = 0;
	while (argv[argc])
		argc++;
	optind = 1;
	opterr = 0;
	return rbdecode_main(argc, argv);
}

/* Nothing but fuzz.db (after a success) may be in the output folder. */
static void check_out(int status)
{
	char out[512];
	snprintf(out, sizeof(out), "%s/out", fuzz_scratch());
	DIR *d = opendir(out);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (strcmp(e->d_name, "fuzz.db") || (status != 0 && status != 3)) {
			fprintf(stderr, "rbdecode export exited %d and left %s/%s\n", status, out, e->d_name);
			abort();
		}
	}
	closedir(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!db[0])
		setup();
	rb_archive_in_process = 1;    /* libarchive's coverage and crashes are this target's */
	int fd = fuzz_memfd(data, size);
	if (fd < 0)
		return 0;
	snprintf(input, sizeof(input), "/proc/self/fd/%d", fd);
	char *exp[] = { "rbdecode", "export", "-q", "-f", "-o", db, "--symfs", symfs, "--kallsyms", kallsyms,
			input, NULL };
	int status = run(exp);
	check_out(status);
	unlink(db);
	char *info_json[] = { "rbdecode", "info", "--json", input, NULL };
	char *info_stats[] = { "rbdecode", "info", "--stats", input, NULL };
	char *script[] = { "rbdecode", "script", "--symfs", symfs, "--kallsyms", kallsyms, input, NULL };
	char *gaps[] = { "rbdecode", "gaps", "--json", "--symfs", symfs, "--kallsyms", kallsyms, input, NULL };
	run(info_json);
	run(info_stats);
	run(script);
	run(gaps);
	close(fd);
	fuzz_rmtree(tmp);
	mkdir(tmp, 0700);
	return 0;
}
