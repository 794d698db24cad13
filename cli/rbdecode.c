/*
 * rbdecode - offline decoder for perf.data recordings: the command-line entry
 * point. Each subcommand lives in its own cmd_*.c, cli_args.c finds it on
 * the command line; this file holds the diagnostics they share.
 */
#include "config.h"
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
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
