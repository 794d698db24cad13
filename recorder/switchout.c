/*
 * switchout.c - --switch-output and --switch-max-files, as perf record 6.1
 * has them: a switch is asked for by SIGUSR2 ("signal", the default), by
 * the data written to the file in progress reaching SIZE (B, K, M, G), or by
 * a period of TIME (s, m, h, d); a plain number is a size in bytes. The
 * file in progress is always OUTPUT; a finished one is renamed
 * OUTPUT.YYYYMMDDhhmmssHH (hundredths of a second, local time, perf's
 * fetch_current_timestamp format), the last one too when the recording
 * ends. With --switch-max-files=N only the newest N finished files are kept.
 *
 * Workload: a switch every few seconds at most; each costs a header, the
 * features and the synthesized records again (record__rotate).
 */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include "switchout.h"

/* NUMBER[TAG] with perf's parse_tag_value tags (case matters: m is minutes, M mebibytes). */
static int tag_value(const char *arg, const char *tags, const uint64_t *mult, uint64_t *out)
{
	char *end;

	if (*arg < '0' || *arg > '9')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(arg, &end, 10);
	if (errno)
		return -1;
	if (*end) {
		const char *t = end[1] ? NULL : strchr(tags, *end);
		if (!t)
			return -1;
		if (v > UINT64_MAX / mult[t - tags])
			return -1;
		v *= mult[t - tags];
	}
	*out = v;
	return 0;
}

int switch_out__parse(struct switch_out *so, const char *arg)
{
	static const uint64_t size_mult[] = { 1, 1 << 10, 1 << 20, 1 << 30 };
	static const uint64_t time_mult[] = { 1, 60, 3600, 86400 };
	uint64_t v;

	so->enabled = 1;
	so->signal = 0;
	so->size = 0;
	so->secs = 0;
	if (!arg || !strcmp(arg, "signal")) {
		so->signal = 1;
		return 0;
	}
	if (tag_value(arg, "BKMG", size_mult, &v) == 0 && v) {
		so->size = v;
		return 0;
	}
	if (tag_value(arg, "smhd", time_mult, &v) == 0 && v && v <= 0x7fffffff) {
		so->secs = (unsigned)v;
		return 0;
	}
	return -1;
}

int switch_out__max_files(struct switch_out *so, const char *arg)
{
	char *end;

	errno = 0;
	long v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < 0 || v > 1000000)
		return -1;
	so->max_files = v;
	return 0;
}

void switch_out__start(struct switch_out *so)
{
	clock_gettime(CLOCK_MONOTONIC, &so->next);
	so->next.tv_sec += so->secs;
}

static long long ms_left(const struct switch_out *so)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (so->next.tv_sec - now.tv_sec) * 1000LL + (so->next.tv_nsec - now.tv_nsec) / 1000000;
}

int switch_out__wait_ms(const struct switch_out *so, int ms)
{
	if (!so->secs)
		return ms;
	long long left = ms_left(so);
	return left <= 0 ? 0 : left < ms ? (int)left : ms;
}

int switch_out__due(const struct switch_out *so, const struct record *s, int signalled)
{
	if (!so->enabled)
		return 0;
	if (so->signal)
		return signalled;
	if (so->size)
		return record__file_size(s) >= so->size;
	return ms_left(so) <= 0;
}

/* perf's timestamp; a later one than the previous name's, so that no file replaces another. */
static void timestamp(struct switch_out *so, char *buf, size_t len)
{
	for (;;) {
		struct timeval tv;
		struct tm tm;
		char dt[24];

		gettimeofday(&tv, NULL);
		localtime_r(&tv.tv_sec, &tm);
		strftime(dt, sizeof(dt), "%Y%m%d%H%M%S", &tm);
		snprintf(buf, len, "%s%02u", dt, (unsigned)tv.tv_usec / 10000);
		if (strcmp(buf, so->last_ts))
			break;
		usleep(10000 - (unsigned)tv.tv_usec % 10000);
	}
	snprintf(so->last_ts, sizeof(so->last_ts), "%s", buf);
}

/* --switch-max-files: @name joins the ring, the oldest one leaves it (and the disk). */
static void keep(struct switch_out *so, char *name)
{
	if (!so->max_files) {
		free(name);
		return;
	}
	if (!so->names && !(so->names = calloc((size_t)so->max_files, sizeof(*so->names)))) {
		free(name);
		return;
	}
	so->cur = (so->cur + 1) % so->max_files;
	if (so->names[so->cur]) {
		unlink(so->names[so->cur]);
		free(so->names[so->cur]);
	}
	so->names[so->cur] = name;
}

int switch_out__dump(struct switch_out *so, struct record *s, const char *output, int last, int quiet,
		     struct rec_err *e)
{
	char ts[32];
	struct rec_stats st;
	size_t len = strlen(output) + sizeof(ts) + 2;
	char *name = malloc(len);
	int rc = 0;

	if (!name)
		return rec_fail(e, ENOMEM, "out of memory");
	timestamp(so, ts, sizeof(ts));
	snprintf(name, len, "%s.%s", output, ts);
	if (last) {
		if (rename(output, name) < 0) {
			int err = errno;
			rc = rec_fail(e, err, "%s: cannot rename it %s: %s", output, name, strerror(err));
		}
	} else {
		rc = record__rotate(s, name, e);
	}
	record__stats(s, &st);
	/* a file that could not be renamed keeps the output's name; one renamed is on the disk */
	if (access(name, F_OK) == 0) {
		if (!quiet)
			fprintf(stderr, "rbrecord: dump %s: %llu samples\n", name,
				(unsigned long long)(st.samples - so->samples_done));
		keep(so, name);
	} else {
		free(name);
	}
	so->samples_done = st.samples;
	if (so->secs)
		switch_out__start(so);
	return rc;
}

void switch_out__free(struct switch_out *so)
{
	for (long i = 0; so->names && i < so->max_files; i++)
		free(so->names[i]);
	free(so->names);
	so->names = NULL;
}
