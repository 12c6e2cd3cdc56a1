/*
 * msgs: a list of messages about a file, one line each, for loaders that
 * report every problem rather than stop at the first (config.h,
 * yamldoc.h, mixprec.h). A message reads "FILE:LINE:COL: CTX: PROBLEM"
 * (or "FILE: CTX: PROBLEM" without a position), control bytes as %HH.
 *
 * A struct config_msgs starts zeroed and owns its strings;
 * config_msgs_release() frees them. At most CONFIG_MAX_MSGS are kept,
 * the rest only counted. Adding fails (-1) only when out of memory.
 */
#ifndef ONNXQ_MSGS_H
#define ONNXQ_MSGS_H

#include <stddef.h>

/* Messages kept; further ones are counted in config_msgs.dropped. */
#define CONFIG_MAX_MSGS 1000

struct config_msgs {
	char **v;		/* malloc'd strings */
	size_t n, cap;
	size_t dropped;
};

/* Where a key or value was in the file; line 0 when not from a file. */
struct config_pos {
	int line, col;		/* 1-based */
};

void config_msgs_release(struct config_msgs *m);
/* Append s (malloc'd, taken; NULL means out of memory). -1: no memory. */
int config_msgs_add(struct config_msgs *m, char *s);
/*
 * Append "FILE:LINE:COL: CTX: MSG" ("FILE: ..." when pos.line is 0, no
 * "CTX: " when ctx is NULL or empty), control bytes as %HH.
 */
int config_msgs_addf(struct config_msgs *m, const char *file,
    struct config_pos pos, const char *ctx, const char *f, ...)
    __attribute__((format(printf, 5, 6)));
/*
 * Order m->v[from..] by line and column (stable; messages about file
 * without a position first), so they read top to bottom.
 */
void config_msgs_sort(struct config_msgs *m, size_t from, const char *file);
/* A malloc'd copy of s with control bytes as %HH; NULL: no memory. */
char *config_printable(const char *s);

#endif
