/*
 * qdqerr: per quantized tensor, the error carried and the error of its
 * Q/DQ pair alone. See qdqerr.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "qdqerr.h"
#include "util.h"

static int64_t
int_at(const struct tensor *t, int64_t i)
{
	switch (t->dtype) {
	case DT_UINT8:
	case DT_UINT4:
		return ((const uint8_t *)t->data)[i];
	case DT_INT8:
	case DT_INT4:
		return ((const int8_t *)t->data)[i];
	default:
		return (int64_t)tensor_get(t, i);
	}
}

static double
float_at(const struct tensor *t, int64_t i)
{
	return t->dtype == DT_FLOAT ? ((const float *)t->data)[i] :
	    tensor_get(t, i);
}

/*
 * Elements of x the pair clips: quantized to an end of the type's range
 * and beyond the end of the grid by more than half a step, so that the
 * error exceeds what rounding alone makes. Scales per tensor or per axis;
 * blocked scales are not counted.
 */
static void
count_clipped(struct qdqerr_stat *q, const struct qdqmatch_pair *p,
    const struct tensor *x, const struct tensor *qv, const struct tensor *dq)
{
	const struct tensor *s = &p->dqp[0];
	int64_t inner = 1, A = 1;

	if (q->thi <= q->tlo || !s->data || x->nelem != qv->nelem ||
	    x->nelem != dq->nelem)
		return;
	if (s->nelem != 1) {
		int64_t axis = 1;

		for (size_t i = 0; i < p->dqnode->n_attribute; i++)
			if (strcmp(str_or_empty(p->dqnode->attribute[i]->name),
			    "axis") == 0)
				axis = p->dqnode->attribute[i]->i;
		if (axis < 0)
			axis += x->rank;
		if (s->rank != 1 || axis < 0 || axis >= x->rank ||
		    s->nelem != x->dims[axis])
			return;
		A = s->nelem;
		for (int d = (int)axis + 1; d < x->rank; d++)
			inner *= x->dims[d];
	}
	/* Locals, so the loop keeps them in registers. */
	int64_t counted = 0, clipped = 0, lo = q->qlo, hi = q->qhi;
	int64_t tlo = q->tlo, thi = q->thi;
	const float *xf = x->dtype == DT_FLOAT ? x->data : NULL;
	const uint8_t *u8 = qv->dtype == DT_UINT8 ? qv->data : NULL;

	for (int64_t i = 0; i < x->nelem; i++) {
		double xv = xf ? xf[i] : tensor_get(x, i), dv, half;
		int64_t k = u8 ? u8[i] : int_at(qv, i);

		if (isnan(xv))
			continue;
		counted++;
		lo = k < lo ? k : lo;
		hi = k > hi ? k : hi;
		if (k > tlo && k < thi)
			continue;
		dv = float_at(dq, i);
		half = fabs(tensor_get(s, A == 1 ? 0 : i / inner % A)) / 2;
		if ((k <= tlo && xv < dv - half) || (k >= thi && xv > dv + half))
			clipped++;
	}
	q->counted += counted;
	q->clipped += clipped;
	q->qlo = lo;
	q->qhi = hi;
}

/* Clamp a float tensor in place to [lo, hi]. */
static void
clamp_tensor(struct tensor *t, double lo, double hi)
{
	for (int64_t i = 0; i < t->nelem; i++) {
		double v = float_at(t, i);

		if (v < lo)
			tensor_set(t, i, lo);
		else if (v > hi)
			tensor_set(t, i, hi);
	}
}

/* t clamped when the source says so: *use is t, or c, a clamped copy. */
static int
clamped(const struct qdqmatch_source *s, const struct tensor *t,
    struct tensor *c,
    const struct tensor **use, struct err *e)
{
	*use = t;
	if (!s->clamp || !dtype_is_float(t->dtype))
		return 0;
	if (tensor_copy(c, t, e) < 0)
		return -1;
	clamp_tensor(c, s->lo, s->hi);
	*use = c;
	return 0;
}

/* Dequantize a weight or bias once and compare it with the fp32 constant. */
static int
weight_error(struct qdqerr *q, int i, struct err *e)
{
	const struct qdqmatch_pair *p = &q->match.pairs[i];
	struct qdqerr_stat *st = &q->stats[i];
	struct tensor ref = { 0 }, in = { 0 }, qv = { 0 }, dq = { 0 };

	if (qdqmatch_weights(&q->match, p, &ref, &in, e) < 0)
		return -1;
	if (qdqmatch_run(p, &in, q->threads, &qv, &dq, e) < 0) {
		tensor_release(&ref);
		tensor_release(&in);
		return -1;
	}
	st->qtype = qv.dtype;
	dtype_int_range(qv.dtype, &st->tlo, &st->thi);
	compare_add(&st->own, &dq, &ref, -1);	/* no sample: compared once */
	st->carried = st->own;
	count_clipped(st, p, &ref, &qv, &dq);
	tensor_release(&ref);
	tensor_release(&in);
	tensor_release(&qv);
	tensor_release(&dq);
	return 0;
}

int
qdqerr_init(struct qdqerr *q, const struct model *fm, const struct model *pm,
    const struct model *qm, int threads, struct err *e)
{
	int n;

	memset(q, 0, sizeof *q);
	q->threads = threads;
	if (qdqmatch_init(&q->match, fm, pm, qm, e) < 0)
		return -1;
	n = q->match.npairs;
	q->stats = calloc((size_t)n + 1, sizeof *q->stats);
	q->held = calloc((size_t)q->match.nsources + 1, sizeof *q->held);
	q->pending = calloc((size_t)q->match.nsources + 1,
	    sizeof *q->pending);
	if (!q->stats || !q->held || !q->pending) {
		qdqerr_free(q);
		return err_nomem(e);
	}
	for (int i = 0; i < n; i++) {
		struct qdqerr_stat *st = &q->stats[i];

		st->qtype = q->match.pairs[i].qtype;
		dtype_int_range(st->qtype, &st->tlo, &st->thi);
		compare_init(&st->carried);
		compare_init(&st->own);
		st->qlo = INT64_MAX;
		st->qhi = INT64_MIN;
	}
	for (int i = 0; i < n; i++)
		if (q->match.pairs[i].role != QDQMATCH_ACT &&
		    weight_error(q, i, e) < 0) {
			err_prefix(e, "tensor %s", q->match.pairs[i].name);
			qdqerr_free(q);
			return -1;
		}
	return 0;
}

void
qdqerr_drop_held(struct qdqerr *q)
{
	for (int i = 0; q->held && i < q->match.nsources; i++)
		tensor_release(&q->held[i]);
}

void
qdqerr_free(struct qdqerr *q)
{
	qdqerr_drop_held(q);
	free(q->held);
	free(q->pending);
	free(q->stats);
	qdqmatch_free(&q->match);
	memset(q, 0, sizeof *q);
}

int
qdqerr_observe_fp32(void *ctx, const char *name, const struct tensor *t,
    struct err *e)
{
	struct qdqerr *q = ctx;
	const struct qdqmatch_source *s;
	struct tensor *held;
	int k;

	if ((k = qdqmatch_source(&q->match, name)) < 0)
		return 0;
	s = &q->match.sources[k];
	held = &q->held[k];
	tensor_release(held);
	if (tensor_copy(held, t, e) < 0)
		return -1;
	if (s->clamp && dtype_is_float(t->dtype))
		clamp_tensor(held, s->lo, s->hi);
	q->pending[k] = s->npairs;
	for (int i = 0; i < s->npairs; i++) {
		const struct qdqmatch_pair *p = &q->match.pairs[s->pairs[i]];
		struct qdqerr_stat *st = &q->stats[s->pairs[i]];
		struct tensor qv = { 0 }, dq = { 0 };

		if (!p->has_own)
			continue;
		if (qdqmatch_run(p, t, q->threads, &qv, &dq, e) < 0)
			return err_prefix(e, "tensor %s quantized alone", name);
		if (s->clamp && dtype_is_float(dq.dtype))
			clamp_tensor(&dq, s->lo, s->hi);
		compare_add(&st->own, &dq, held, q->sample);
		count_clipped(st, p, held, &qv, &dq);
		st->qtype = qv.dtype;
		tensor_release(&qv);
		tensor_release(&dq);
	}
	return 0;
}

int
qdqerr_observe_q(void *ctx, const char *name, const struct tensor *t,
    struct err *e)
{
	struct qdqerr *q = ctx;
	struct tensor c = { 0 };
	const struct tensor *use;
	int i, k;

	if ((i = qdqmatch_pair_of(&q->match, name)) < 0)
		return 0;
	k = q->match.pairs[i].src;
	if (!q->held[k].data)
		return 0;
	if (clamped(&q->match.sources[k], t, &c, &use, e) < 0)
		return -1;
	compare_add(&q->stats[i].carried, use, &q->held[k], q->sample);
	tensor_release(&c);
	if (--q->pending[k] <= 0)
		tensor_release(&q->held[k]);
	return 0;
}

static int
has_own(const struct qdqerr *q, int i)
{
	return q->match.pairs[i].has_own;
}

double
qdqerr_carried_snr(const struct qdqerr *q, int i)
{
	const struct compare *c = &q->stats[i].carried;

	return c->samples ? compare_snr(c) : NAN;
}

double
qdqerr_own_snr(const struct qdqerr *q, int i)
{
	const struct compare *c = &q->stats[i].own;

	return has_own(q, i) && c->samples ? compare_snr(c) : NAN;
}

double
qdqerr_own_worst_snr(const struct qdqerr *q, int i)
{
	return has_own(q, i) ? compare_worst_snr(&q->stats[i].own) : NAN;
}

double
qdqerr_own_mse(const struct qdqerr *q, int i)
{
	return has_own(q, i) ? compare_mse(&q->stats[i].own) : NAN;
}

double
qdqerr_own_max_abs(const struct qdqerr *q, int i)
{
	return has_own(q, i) ? compare_max_abs(&q->stats[i].own) : NAN;
}

double
qdqerr_clip_pct(const struct qdqerr *q, int i)
{
	const struct qdqerr_stat *st = &q->stats[i];

	if (!st->counted)
		return NAN;
	return 100.0 * (double)st->clipped / (double)st->counted;
}

double
qdqerr_grid_pct(const struct qdqerr *q, int i)
{
	const struct qdqerr_stat *st = &q->stats[i];

	if (!st->counted || st->thi <= st->tlo ||
	    q->match.pairs[i].role == QDQMATCH_BIAS)
		return NAN;
	return 100.0 * (double)(st->qhi - st->qlo) /
	    (double)(st->thi - st->tlo);
}

struct sortent {
	double key;
	int order, idx;
};

/* By key, NaN last; ties in graph order. */
static int
cmp_sortent(const void *x, const void *y)
{
	const struct sortent *a = x, *b = y;

	if (isnan(a->key) != isnan(b->key))
		return isnan(a->key) - isnan(b->key);
	if (!isnan(a->key) && a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->order != b->order)
		return a->order < b->order ? -1 : 1;
	return a->idx - b->idx;
}

int
qdqerr_sort(const struct qdqerr *q, int key, int *out)
{
	int n = q->match.npairs;
	struct sortent *v = calloc((size_t)n + 1, sizeof *v);

	if (!v)
		return -1;
	for (int i = 0; i < n; i++) {
		v[i].key = key == QDQERR_SORT_OWN ? qdqerr_own_snr(q, i) :
		    key == QDQERR_SORT_SNR ? qdqerr_carried_snr(q, i) : 0;
		v[i].order = q->match.pairs[i].order;
		v[i].idx = i;
	}
	qsort(v, (size_t)n, sizeof *v, cmp_sortent);
	for (int i = 0; i < n; i++)
		out[i] = v[i].idx;
	free(v);
	return 0;
}
