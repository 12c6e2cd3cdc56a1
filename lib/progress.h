/*
 * progress: a one-line progress bar for long runs over samples, redrawn
 * in place with a carriage return:
 *
 *	onnx-verify: [#######.............]  12/35 samples  3.4/s  eta 0:07
 *
 * Whether to show it is the caller's choice (progress_wanted() is the
 * usual one: the stream is a terminal and the user did not ask for
 * quiet); a disabled bar writes nothing, so callers need no ifs. The
 * line is redrawn at most a few times a second, and progress_clear()
 * erases it so that a message or the final report starts on a clean
 * line. Plain data: progress_init(), then progress_end() when done.
 */
#ifndef ONNXQ_PROGRESS_H
#define ONNXQ_PROGRESS_H

#include <stdint.h>
#include <stdio.h>

struct progress {
	FILE *fp;		/* NULL: disabled */
	const char *prog;	/* line prefix, e.g. the program name */
	const char *unit;	/* "samples" */
	int64_t total;		/* 0 or less: unknown (no bar, no eta) */
	int64_t done;
	double start, last;	/* monotonic seconds */
	int width;		/* of the line on screen, to erase it */
};

/* 1 when fp is a terminal (and TERM is not "dumb") and quiet is 0. */
int progress_wanted(FILE *fp, int quiet);
/* enabled 0 makes every call a no-op. prog and unit must outlive p. */
void progress_init(struct progress *p, FILE *fp, int enabled,
    const char *prog, const char *unit, int64_t total);
/* done units so far; redrawn when a little time has passed, or at the end. */
void progress_update(struct progress *p, int64_t done);
/* Erase the line (it comes back on the next update). */
void progress_clear(struct progress *p);
/* Erase the line for good. */
void progress_end(struct progress *p);

#endif
