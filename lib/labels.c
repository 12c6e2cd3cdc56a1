/* labels: a classifier's expected classes. See labels.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labels.h"
#include "util.h"

void
labels_free(struct labels *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	free(l->count);
	free(l->line);
	memset(l, 0, sizeof *l);
}

/* Parse one line of class indices into a malloc'd array. */
static int
labels_line(const char *path, long lineno, char *s, int64_t **v,
    int64_t *n, struct err *e)
{
	size_t cap = 0;
	char *tok, *save, *end;

	*v = NULL;
	*n = 0;
	for (tok = strtok_r(s, " \t\r\n,", &save); tok;
	    tok = strtok_r(NULL, " \t\r\n,", &save)) {
		long long x;

		errno = 0;
		x = strtoll(tok, &end, 10);
		if (end == tok || *end || errno || x < 0) {
			free(*v);
			return err_set(e, "%s:%ld: not a class index: %.40s",
			    path, lineno, tok);
		}
		if (array_grow(v, &cap, (size_t)*n, sizeof **v) < 0) {
			free(*v);
			*v = NULL;
			return err_nomem(e);
		}
		(*v)[(*n)++] = x;
	}
	return 0;
}

/*
 * One line per sample, in the order samples are taken: class indices
 * separated by blanks or commas. Empty lines and lines starting with '#'
 * are skipped.
 */
int
labels_load(struct labels *l, const char *path, int nsamples, struct err *e)
{
	FILE *fp;
	char *line = NULL;
	size_t cap = 0;
	long lineno = 0;
	int ret = -1;

	memset(l, 0, sizeof *l);
	l->path = path;
	if (!(fp = fopen(path, "r")))
		return err_errno(e, "%s", path);
	l->v = calloc((size_t)nsamples + 1, sizeof *l->v);
	l->count = calloc((size_t)nsamples + 1, sizeof *l->count);
	l->line = calloc((size_t)nsamples + 1, sizeof *l->line);
	if (!l->v || !l->count || !l->line) {
		err_nomem(e);
		goto out;
	}
	while (getline(&line, &cap, fp) != -1) {
		char *p = line;

		lineno++;
		p += strspn(p, " \t\r\n");
		if (*p == '\0' || *p == '#')
			continue;
		if (l->n == nsamples) {
			err_set(e, "%s:%ld: more lines than the %d samples",
			    path, lineno, nsamples);
			goto out;
		}
		if (labels_line(path, lineno, p, &l->v[l->n], &l->count[l->n],
		    e) < 0)
			goto out;
		l->line[l->n++] = lineno;
	}
	if (ferror(fp)) {
		err_errno(e, "%s", path);
		goto out;
	}
	if (l->n != nsamples) {
		err_set(e, "%s: %d lines of labels for %d samples", path, l->n,
		    nsamples);
		goto out;
	}
	ret = 0;
out:
	free(line);
	fclose(fp);
	if (ret < 0)
		labels_free(l);
	return ret;
}

int
labels_add_top1(const struct labels *lb, int s, const char *name,
    struct compare *c, const struct tensor *x, const struct tensor *ref,
    struct err *e)
{
	const int64_t *l = NULL;
	int64_t nl = 0, rows;

	if (!compare_is_classifier(ref))
		return 0;
	rows = compare_rows(ref);
	if (lb && lb->path) {
		l = lb->v[s];
		nl = lb->count[s];
		/* Labels of another count are another output's. */
		if (nl != rows)
			l = NULL;
		for (int64_t i = 0; l && i < nl; i++)
			if (l[i] >= ref->dims[ref->rank - 1])
				return err_set(e, "%s:%ld: class %lld out of "
				    "range for output %s (%lld classes)",
				    lb->path, lb->line[s], (long long)l[i],
				    name,
				    (long long)ref->dims[ref->rank - 1]);
	}
	compare_add_top1(c, x, ref, l, l ? nl : 0);
	return 0;
}
