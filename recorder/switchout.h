/*
 * switchout.h - perf record's --switch-output[=signal|SIZE|TIME] and
 * --switch-max-files=N: when to start a new output file, the timestamped
 * names of the finished ones, and which of them to keep.
 */
#ifndef REC_SWITCHOUT_H
#define REC_SWITCHOUT_H

#include <stdint.h>
#include <time.h>
#include "record.h"

struct switch_out {
	int enabled;
	int signal;                 /* SIGUSR2 switches */
	uint64_t size;              /* switch once the file in progress holds this many data bytes */
	unsigned secs;              /* switch every this many seconds */
	long max_files;             /* keep only the newest N finished files (0: all) */
	char **names;               /* [max_files]: the files kept, a ring */
	long cur;
	char last_ts[32];           /* the newest name's timestamp: never two files under one name */
	struct timespec next;       /* TIME: when the next switch is due */
	uint64_t samples_done;      /* samples in the files already finished */
};

/* --switch-output[=ARG] (NULL: signal). 0, or -1 for a bad ARG. */
int switch_out__parse(struct switch_out *so, const char *arg);
/* --switch-max-files=N. 0, or -1 unless N is a number >= 0. */
int switch_out__max_files(struct switch_out *so, const char *arg);
/* The recording starts (TIME: the first deadline). */
void switch_out__start(struct switch_out *so);
/* Milliseconds until a TIME switch is due (at most @ms). */
int switch_out__wait_ms(const struct switch_out *so, int ms);
/* Is a switch due: SIGUSR2 was received (@signalled, signal mode), SIZE passed, TIME reached. */
int switch_out__due(const struct switch_out *so, const struct record *s, int signalled);
/*
 * Finish the file in progress under OUTPUT.<timestamp> (perf's
 * YYYYMMDDhhmmss + hundredths, local time), delete the oldest beyond
 * --switch-max-files, say so on stderr unless @quiet. With @last the file
 * is already closed (record__finish) and only renamed; otherwise a new
 * file starts at OUTPUT. 0 or -1.
 */
int switch_out__dump(struct switch_out *so, struct record *s, const char *output, int last, int quiet,
		     struct rec_err *e);
void switch_out__free(struct switch_out *so);

#endif
