/*
 * labels: the classes a classifier's samples should get, one line per
 * sample in the order samples are taken: class indices (non-negative
 * integers) separated by blanks or commas, one per row of a classifier-
 * like output (compare.h). Empty lines and lines starting with '#' are
 * skipped. Messages name the file and line: "FILE:3: not a class index:
 * cat".
 *
 * labels_load() fills a struct labels (zeroed on failure); labels_free()
 * frees it and may be called on a zeroed one.
 */
#ifndef ONNXQ_LABELS_H
#define ONNXQ_LABELS_H

#include <stdint.h>

#include "compare.h"
#include "err.h"

struct labels {
	const char *path;	/* NULL: no labels */
	int n;
	int64_t **v;		/* sample i's classes */
	int64_t *count;
	long *line;		/* where sample i's labels are, for messages */
};

/* Exactly nsamples lines of labels, else an error. */
int labels_load(struct labels *l, const char *path, int nsamples,
    struct err *e);
void labels_free(struct labels *l);

/*
 * Add the top-1 comparison of output NAME of sample s to c when ref is
 * classifier-like (else nothing), with sample s's labels when l holds
 * labels (l may be NULL) and as many as ref has rows (else they are
 * another output's). A class beyond ref's is an error.
 */
int labels_add_top1(const struct labels *l, int s, const char *name,
    struct compare *c, const struct tensor *x, const struct tensor *ref,
    struct err *e);

#endif
