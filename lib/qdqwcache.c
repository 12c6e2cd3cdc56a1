/* qdqwcache: see qdqwcache.h. */
#include <stdlib.h>
#include <string.h>

#include "qdqwcache.h"
#include "strmap.h"
#include "util.h"

struct entry {
	int rank;
	int64_t dims[TENSOR_MAX_RANK];
	struct qparam q;	/* type, axis, n, scale, zp */
	int bias;
	struct tensor qt;
	int prev;		/* the name's entry before, or -1 */
};

struct qdq_wcache {
	struct strmap *ix;	/* name -> its newest entry */
	struct entry *v;
	size_t n, cap;
	long hits;
};

struct qdq_wcache *
qdq_wcache_new(void)
{
	struct qdq_wcache *wc = calloc(1, sizeof *wc);

	if (wc && (wc->ix = strmap_new()) == NULL) {
		free(wc);
		return NULL;
	}
	return wc;
}

void
qdq_wcache_free(struct qdq_wcache *wc)
{
	if (wc == NULL)
		return;
	for (size_t i = 0; i < wc->n; i++) {
		qparam_release(&wc->v[i].q);
		tensor_release(&wc->v[i].qt);
	}
	free(wc->v);
	strmap_free(wc->ix);
	free(wc);
}

/* Do entry x and (src, q, bias) match? */
static int
same(const struct entry *x, const struct tensor *src, const struct qparam *q,
    int bias)
{
	if (x->rank != src->rank || memcmp(x->dims, src->dims,
	    (size_t)src->rank * sizeof *src->dims) != 0 ||
	    x->bias != bias || x->q.type != q->type || x->q.axis != q->axis ||
	    x->q.n != q->n)
		return 0;
	return memcmp(x->q.scale, q->scale, q->n * sizeof *q->scale) == 0 &&
	    memcmp(x->q.zp, q->zp, q->n * sizeof *q->zp) == 0;
}

const struct tensor *
qdq_wcache_get(const struct qdq_wcache *wc, const char *name,
    const struct tensor *src, const struct qparam *q, int bias)
{
	int i;

	if (!strmap_get(wc->ix, name, &i))
		return NULL;
	for (; i >= 0; i = wc->v[i].prev)
		if (same(&wc->v[i], src, q, bias)) {
			((struct qdq_wcache *)wc)->hits++;
			return &wc->v[i].qt;
		}
	return NULL;
}

int
qdq_wcache_put(struct qdq_wcache *wc, const char *name,
    const struct tensor *src, const struct qparam *q, int bias,
    const struct tensor *qt, struct err *e)
{
	struct entry *x;
	int prev;

	if (!strmap_get(wc->ix, name, &prev))
		prev = -1;
	/* a new entry: what qdq_wcache_get() gave stays for the cache's
	   life, and the search comes back to earlier parameters */
	if (array_grow(&wc->v, &wc->cap, wc->n, sizeof *wc->v) < 0)
		return err_nomem(e);
	x = &wc->v[wc->n];
	memset(x, 0, sizeof *x);
	x->prev = prev;
	x->rank = src->rank;
	memcpy(x->dims, src->dims, (size_t)src->rank * sizeof *src->dims);
	x->bias = bias;
	if (qparam_alloc(&x->q, q->n, e) < 0 ||
	    tensor_copy(&x->qt, qt, e) < 0) {
		qparam_release(&x->q);
		tensor_release(&x->qt);
		return -1;
	}
	if (strmap_put(wc->ix, name, (int)wc->n) < 0) {
		qparam_release(&x->q);
		tensor_release(&x->qt);
		return err_nomem(e);
	}
	wc->n++;
	x->q.type = q->type;
	x->q.axis = q->axis;
	memcpy(x->q.scale, q->scale, q->n * sizeof *q->scale);
	memcpy(x->q.zp, q->zp, q->n * sizeof *q->zp);
	return 0;
}

long
qdq_wcache_hits(const struct qdq_wcache *wc)
{
	return wc->hits;
}
