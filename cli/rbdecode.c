/*
 * rbdecode - offline decoder for perf.data recordings: the command-line entry
 * point. Each subcommand lives in its own cmd_*.c, cli_args.c finds it on
 * the command line; this file holds the diagnostics they share.
 */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

const char *cli_prog = "rbdecode";

void cli_error(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", cli_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/*
 * Outputs are written as OUT.tmp-PID and renamed into place when whole. A
 * run killed by SIGKILL cannot remove its own: the next run for the same
 * OUT removes each whose process is gone (kill(PID, 0) says ESRCH) and that
 * nobody holds a lock on (SQLite locks the database it writes: a run of
 * another machine on a shared folder keeps its file).
 */
void cli_remove_stale(const char *out)
{
	char *dir = strdup(out);
	if (!dir)
		return;
	char *slash = strrchr(dir, '/');
	const char *base = slash ? slash + 1 : out;
	if (slash)
		slash[slash == dir] = 0;
	DIR *d = opendir(slash ? dir : ".");
	size_t nb = strlen(base);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, base, nb) || strncmp(e->d_name + nb, ".tmp-", 5))
			continue;
		char *end;
		const char *num = e->d_name + nb + 5;
		long pid = strtol(num, &end, 10);
		if (*end || end == num || pid <= 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		char path[4096];
		snprintf(path, sizeof(path), "%s%s%s", slash ? dir : "", slash && slash != dir ? "/" : "", e->d_name);
		int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
		struct flock lk = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
		int held = fd < 0 || fcntl(fd, F_GETLK, &lk) < 0 || lk.l_type != F_UNLCK;
		if (fd >= 0)
			close(fd);
		if (!held && unlink(path) == 0)
			fprintf(stderr, "%s: removed %s, left by a run (pid %ld) that was killed\n", cli_prog, path, pid);
	}
	if (d)
		closedir(d);
	free(dir);
}

void cli_warn_cb(void *ctx, const struct pd_error *w)
{
	unsigned *count = ctx;
	if (count && ++*count > 20) {
		if (*count == 21)
			fprintf(stderr, "%s: warning: further warnings suppressed\n", cli_prog);
		return;
	}
	fprintf(stderr, "%s: warning: %s\n", cli_prog, w->msg);
}

int cli_status_of(int code)
{
	switch (code) {
	case PD_OK: return EXIT_OK;
	case PD_ERR_NOMEM: case PD_ERR_NOSPC: return EXIT_INTERNAL;
	case PD_ERR_INVAL: return EXIT_USAGE;
	default: return EXIT_BADINPUT;
	}
}

int main(int argc, char **argv)
{
	/* RLIMIT_FSIZE: a write past it fails with EFBIG and is reported, instead of killing us mid-write */
	signal(SIGXFSZ, SIG_IGN);
	return cli_dispatch(argc, argv);
}
