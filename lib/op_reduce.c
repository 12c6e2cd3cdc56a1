/*
 * op_reduce: reductions (Reduce*), ArgMax/ArgMin, Softmax, LogSoftmax,
 * Hardmax, TopK, CumSum, LpNormalization.
 *
 * Reductions accumulate in double whatever the element type, so int64
 * results are exact only below 2^53. Outputs of integer type truncate
 * toward zero (a mean of ints is an integer division) and saturate.
 */
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <tgmath.h>

#include "attr.h"
#include "ops.h"
#include "par.h"
#include "vexp.h"

#define PAR_MIN (1 << 16)	/* fewer elements than this: one thread */
#define ROWBUF 4096		/* doubles converted at a time */

/* Numeric element types (bool counts as 0/1). */
static int
is_numeric(int dt)
{
	return dtype_is_float(dt) || dtype_int_range(dt, NULL, NULL) == 0;
}

static int
first_input(struct op_ctx *c, const struct tensor **x)
{
	if (c->nin < 1 || !c->in[0])
		return err_set(c->err, "input 0 is missing");
	*x = c->in[0];
	if (!is_numeric((*x)->dtype))
		return err_set(c->err, "element type %s is not supported",
		    ops_type_name((*x)->dtype));
	return 0;
}

/*
 * x in the type wdt a kernel computes it in: x itself, or its copy in
 * *tmp (to release); NULL with c->err set.
 */
static const struct tensor *
in_work_type(struct op_ctx *c, const struct tensor *x, int wdt,
    struct tensor *tmp)
{
	if (x->dtype == wdt)
		return x;
	return tensor_cast(tmp, x, wdt, c->err) < 0 ? NULL : tmp;
}

/* res, computed in a work type, as output 0 of type dt (res is taken). */
static int
store_result(struct op_ctx *c, struct tensor *res, int dt)
{
	if (res->dtype == dt) {
		tensor_move(&c->out[0], res);
		return 0;
	}
	return tensor_cast(&c->out[0], res, dt, c->err) < 0 ? -1 : 0;
}

/* n elements of t from element off, as doubles. */
static void
get_doubles(const struct tensor *t, int64_t off, int64_t n, double *dst)
{
	int64_t i;

#define CONV(T) do {							\
		const T *p = (const T *)t->data + off;			\
		for (i = 0; i < n; i++)					\
			dst[i] = (double)p[i];				\
	} while (0)
	switch (t->dtype) {
	case DT_FLOAT: CONV(float); break;
	case DT_DOUBLE: CONV(double); break;
	case DT_INT32: CONV(int32_t); break;
	case DT_INT64: CONV(int64_t); break;
	case DT_UINT8: CONV(uint8_t); break;
	case DT_INT8: CONV(int8_t); break;
	default:
		for (i = 0; i < n; i++)
			dst[i] = tensor_get(t, off + i);
	}
#undef CONV
}

/* Store v into element i, truncating toward zero for integer types. */
static void
put_double(struct tensor *t, int64_t i, double v)
{
	if (!dtype_is_float(t->dtype) && t->dtype != DT_BOOL && !isnan(v))
		v = trunc(v);
	tensor_set(t, i, v);
}

/* outer x len x inner view of t around axis. */
static void
split_at(const struct tensor *t, int axis, int64_t *outer, int64_t *len,
    int64_t *inner)
{
	int i;

	*outer = *inner = 1;
	for (i = 0; i < axis; i++)
		*outer *= t->dims[i];
	*len = t->dims[axis];
	for (i = axis + 1; i < t->rank; i++)
		*inner *= t->dims[i];
}

/*
 * Reduce*.
 */
enum rmode {
	R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_LOGSUM,
	R_LOGSUMEXP, R_SUMSQ,
};

/* acc[i * so] op= x[i] for n elements; m: per-output max for LogSumExp. */
static void
accumulate(enum rmode mode, double *acc, int so, const double *x, int64_t n,
    const double *m)
{
	int64_t i;

	if (!so) {
		double a = acc[0];

		switch (mode) {
		case R_MAX:
			for (i = 0; i < n; i++)
				a = (x[i] > a || isnan(x[i])) ? x[i] : a;
			break;
		case R_MIN:
			for (i = 0; i < n; i++)
				a = (x[i] < a || isnan(x[i])) ? x[i] : a;
			break;
		case R_PROD:
			for (i = 0; i < n; i++)
				a *= x[i];
			break;
		case R_L1:
			for (i = 0; i < n; i++)
				a += fabs(x[i]);
			break;
		case R_L2:
		case R_SUMSQ:
			for (i = 0; i < n; i++)
				a += x[i] * x[i];
			break;
		case R_LOGSUMEXP:
			for (i = 0; i < n; i++)
				a += exp(x[i] - m[0]);
			break;
		default:
			for (i = 0; i < n; i++)
				a += x[i];
		}
		acc[0] = a;
		return;
	}
	switch (mode) {
	case R_MAX:
		for (i = 0; i < n; i++)
			acc[i] = (x[i] > acc[i] || isnan(x[i])) ? x[i] : acc[i];
		break;
	case R_MIN:
		for (i = 0; i < n; i++)
			acc[i] = (x[i] < acc[i] || isnan(x[i])) ? x[i] : acc[i];
		break;
	case R_PROD:
		for (i = 0; i < n; i++)
			acc[i] *= x[i];
		break;
	case R_L1:
		for (i = 0; i < n; i++)
			acc[i] += fabs(x[i]);
		break;
	case R_L2:
	case R_SUMSQ:
		for (i = 0; i < n; i++)
			acc[i] += x[i] * x[i];
		break;
	case R_LOGSUMEXP:
		for (i = 0; i < n; i++)
			acc[i] += exp(x[i] - m[i]);
		break;
	default:
		for (i = 0; i < n; i++)
			acc[i] += x[i];
	}
}

static double
reduce_init(enum rmode mode)
{
	switch (mode) {
	case R_MAX:
		return -INFINITY;
	case R_MIN:
		return INFINITY;
	case R_PROD:
		return 1;
	default:
		return 0;
	}
}

/*
 * The input walked as rows of its innermost collapsed dimension; each
 * row accumulates into the output at ostr-weighted offsets (0 along
 * reduced dimensions).
 */
struct rwalk {
	int k;
	int64_t dims[TENSOR_MAX_RANK];
	int64_t ostr[TENSOR_MAX_RANK];
};

static void
rwalk_init(struct rwalk *w, const struct tensor *x, const int *reduced)
{
	int64_t s = 1;
	int i, k = 0, red[TENSOR_MAX_RANK];

	for (i = 0; i < x->rank; i++) {
		if (x->dims[i] == 1)
			continue;
		if (k > 0 && red[k - 1] == reduced[i]) {
			w->dims[k - 1] *= x->dims[i];
			continue;
		}
		w->dims[k] = x->dims[i];
		red[k++] = reduced[i];
	}
	if (k == 0) {
		w->dims[0] = 1;
		red[0] = 1;
		k = 1;
	}
	for (i = k - 1; i >= 0; i--) {
		w->ostr[i] = red[i] ? 0 : s;
		if (!red[i])
			s *= w->dims[i];
	}
	w->k = k;
}

/* One pass over x; m is the LogSumExp max (or NULL). */
static int
reduce_pass(const struct tensor *x, const struct rwalk *w, enum rmode mode,
    double *acc, const double *m, struct err *e)
{
	int64_t n = w->dims[w->k - 1], rows, r, idx[TENSOR_MAX_RANK] = { 0 };
	int64_t o = 0, done, len, at;
	int so = w->ostr[w->k - 1] != 0, i;
	double *buf;

	if (x->nelem == 0)
		return 0;
	if (!(buf = malloc((n < ROWBUF ? n : ROWBUF) * sizeof *buf)))
		return err_nomem(e);
	rows = x->nelem / n;
	for (r = 0; r < rows; r++) {
		for (done = 0; done < n; done += len) {
			len = n - done < ROWBUF ? n - done : ROWBUF;
			get_doubles(x, r * n + done, len, buf);
			at = o + (so ? done : 0);
			accumulate(mode, acc + at, so, buf, len,
			    m ? m + at : NULL);
		}
		for (i = w->k - 2; i >= 0; i--) {
			o += w->ostr[i];
			if (++idx[i] < w->dims[i])
				break;
			o -= idx[i] * w->ostr[i];
			idx[i] = 0;
		}
	}
	free(buf);
	return 0;
}

/* Read the axes: an attribute, or input 1 (absent or empty: none). */
static int
reduce_axes(struct op_ctx *c, int from_input, int64_t **axes, int64_t *n)
{
	const struct tensor *t;
	const int64_t *a;
	size_t na;

	*axes = NULL;
	*n = 0;
	if (from_input) {
		if (!(t = ops_input(c, 1)))
			return 0;
		if (ops_read_ints(t, axes, n, c->err) < 0)
			return err_prefix(c->err, "axes");
		return 0;
	}
	if (!(a = attr_ints(c->node, "axes", &na)) || na == 0)
		return 0;
	if (na > TENSOR_MAX_RANK)
		return err_set(c->err, "too many axes (%zu)", na);
	if (!(*axes = malloc(na * sizeof **axes)))
		return err_nomem(c->err);
	memcpy(*axes, a, na * sizeof **axes);
	*n = (int64_t)na;
	return 0;
}

static int
reduce(struct op_ctx *c, enum rmode mode)
{
	const struct tensor *x;
	struct tensor *y = &c->out[0];
	int64_t *axes = NULL, naxes, odims[TENSOR_MAX_RANK], count = 1, i;
	int reduced[TENSOR_MAX_RANK] = { 0 }, orank = 0, a, rc = -1;
	int keepdims, from_input, noop;
	int sum = strcmp(c->node->op_type, "ReduceSum") == 0;
	double *acc = NULL, *m = NULL;
	struct rwalk w;

	if (first_input(c, &x) < 0)
		return -1;
	keepdims = attr_int(c->node, "keepdims", 1) != 0;
	from_input = c->opset >= 18 || (sum && c->opset >= 13);
	if (reduce_axes(c, from_input, &axes, &naxes) < 0)
		return -1;
	/*
	 * noop_with_empty_axes reduces over no axis at all: each output is
	 * its single input element, transformed (ReduceSumSquare squares).
	 */
	noop = naxes == 0 && from_input &&
	    attr_int(c->node, "noop_with_empty_axes", 0);
	for (i = 0; i < naxes; i++) {
		if ((a = ops_axis(axes[i], x->rank, c->err)) < 0)
			goto out;
		if (reduced[a]) {
			err_set(c->err, "axis %lld appears twice",
			    (long long)axes[i]);
			goto out;
		}
		reduced[a] = 1;
	}
	for (a = 0; a < x->rank; a++) {
		if (naxes == 0 && !noop)
			reduced[a] = 1;
		if (reduced[a])
			count *= x->dims[a];
		if (!reduced[a] || keepdims)
			odims[orank++] = reduced[a] ? 1 : x->dims[a];
	}
	if (tensor_alloc(y, x->dtype, orank, odims, c->err) < 0)
		goto out;
	if (!(acc = malloc((y->nelem ? y->nelem : 1) * sizeof *acc)) ||
	    (mode == R_LOGSUMEXP &&
	    !(m = malloc((y->nelem ? y->nelem : 1) * sizeof *m)))) {
		err_nomem(c->err);
		goto out;
	}
	rwalk_init(&w, x, reduced);
	if (mode == R_LOGSUMEXP) {
		for (i = 0; i < y->nelem; i++)
			m[i] = -INFINITY;
		if (reduce_pass(x, &w, R_MAX, m, NULL, c->err) < 0)
			goto out;
		for (i = 0; i < y->nelem; i++)
			if (isinf(m[i]))
				m[i] = 0;
	}
	for (i = 0; i < y->nelem; i++)
		acc[i] = reduce_init(mode);
	if (reduce_pass(x, &w, mode, acc, m, c->err) < 0)
		goto out;
	for (i = 0; i < y->nelem; i++) {
		double v = acc[i];

		switch (mode) {
		case R_MEAN:
			v /= (double)count;
			break;
		case R_L2:
			v = sqrt(v);
			break;
		case R_LOGSUM:
			v = log(v);
			break;
		case R_LOGSUMEXP:
			v = log(v) + m[i];
			break;
		default:
			break;
		}
		put_double(y, i, v);
	}
	rc = 0;
out:
	if (rc < 0)
		tensor_release(y);
	free(axes);
	free(acc);
	free(m);
	return rc;
}

#define REDUCE_OP(name, mode) OPS_KERNEL(name, reduce, mode)

REDUCE_OP(run_reduce_sum, R_SUM)
REDUCE_OP(run_reduce_mean, R_MEAN)
REDUCE_OP(run_reduce_max, R_MAX)
REDUCE_OP(run_reduce_min, R_MIN)
REDUCE_OP(run_reduce_prod, R_PROD)
REDUCE_OP(run_reduce_l1, R_L1)
REDUCE_OP(run_reduce_l2, R_L2)
REDUCE_OP(run_reduce_log_sum, R_LOGSUM)
REDUCE_OP(run_reduce_log_sum_exp, R_LOGSUMEXP)
REDUCE_OP(run_reduce_sum_square, R_SUMSQ)

/*
 * ArgMax, ArgMin: int64 indices along one axis; ties go to the first
 * index unless select_last_index.
 */
static int
arg_extreme(struct op_ctx *c, int want_max)
{
	const struct tensor *x;
	struct tensor *y = &c->out[0];
	int64_t outer, len, inner, odims[TENSOR_MAX_RANK], o, k, i, *idx;
	double *best = NULL, *row = NULL;
	int axis, keepdims, last, orank = 0, a;

	if (first_input(c, &x) < 0)
		return -1;
	if ((axis = ops_axis(attr_int(c->node, "axis", 0), x->rank,
	    c->err)) < 0)
		return -1;
	keepdims = attr_int(c->node, "keepdims", 1) != 0;
	last = attr_int(c->node, "select_last_index", 0) != 0;
	split_at(x, axis, &outer, &len, &inner);
	if (len == 0)
		return err_set(c->err, "axis %d has no elements", axis);
	for (a = 0; a < x->rank; a++)
		if (a != axis || keepdims)
			odims[orank++] = a == axis ? 1 : x->dims[a];
	if (tensor_alloc(y, DT_INT64, orank, odims, c->err) < 0)
		return -1;
	if (y->nelem == 0)
		return 0;
	if (!(best = malloc(inner * sizeof *best)) ||
	    !(row = malloc(inner * sizeof *row))) {
		free(best);
		tensor_release(y);
		return err_nomem(c->err);
	}
	idx = y->data;
	for (o = 0; o < outer; o++) {
		int64_t *oi = idx + o * inner;

		get_doubles(x, o * len * inner, inner, best);
		for (k = 1; k < len; k++) {
			get_doubles(x, (o * len + k) * inner, inner, row);
			for (i = 0; i < inner; i++) {
				double v = row[i], b = best[i];
				int take = want_max ?
				    (v > b || (last && v == b)) :
				    (v < b || (last && v == b));

				if (take) {
					best[i] = v;
					oi[i] = k;
				}
			}
		}
	}
	free(best);
	free(row);
	return 0;
}

OPS_KERNEL(run_argmax, arg_extreme, 1)
OPS_KERNEL(run_argmin, arg_extreme, 0)

/*
 * Softmax, LogSoftmax, Hardmax over outer x len x inner. Before opset 13
 * the input is coerced to 2-D at axis (len is everything from axis on).
 */
enum smkind { SM_SOFT, SM_LOG, SM_HARD };

/* y[k] = exp(x[k] - m): floats in vector code, libm's values (vexp.h). */
static void
exp_row_f64(double *y, const double *x, double m, int64_t n)
{
	for (int64_t k = 0; k < n; k++)
		y[k] = exp(x[k] - m);
}

#define EXP_ROW(y, x, m, n)						\
	_Generic((y), float *: vexp_row, double *: exp_row_f64)(y, x, m, n)

/*
 * The m of m = x[k] > m ? x[k] : m from m = x[0] on: x[0] when it is
 * NaN, else the largest number (a NaN is never taken). Floats in eight
 * lanes, so that it is not one long chain of dependent compares; order
 * matters only to the sign of a zero maximum, which exp(x - m) and
 * m + log(s) do not see.
 */
static float
row_max_f32(const float *x, int64_t n)
{
	typedef float v8f __attribute__((vector_size(32)));
	typedef int32_t v8i __attribute__((vector_size(32)));
	float m = x[0];
	int64_t k = 0;

	if (n >= 16) {
		v8f vm = { m, m, m, m, m, m, m, m }, v;
		v8i gt;

		for (; k + 8 <= n; k += 8) {
			memcpy(&v, x + k, sizeof v);
			gt = v > vm;
			vm = (v8f)(((v8i)v & gt) | ((v8i)vm & ~gt));
		}
		for (int j = 0; j < 8; j++)
			m = vm[j] > m ? vm[j] : m;
	}
	for (; k < n; k++)
		m = x[k] > m ? x[k] : m;
	return m;
}

static double
row_max_f64(const double *x, int64_t n)
{
	double m = x[0];

	for (int64_t k = 1; k < n; k++)
		m = x[k] > m ? x[k] : m;
	return m;
}

#define ROW_MAX(x, n)							\
	_Generic((x), const float *: row_max_f32,			\
	    const double *: row_max_f64)(x, n)

#define SOFTMAX_FN(name, T)						\
static void								\
name(T *y, const T *x, int64_t o0, int64_t o1, int64_t len,		\
    int64_t inner, enum smkind kind, T *mx, T *sm)			\
{									\
	int64_t o, k, i;						\
									\
	for (o = o0; o < o1; o++) {					\
		const T *xs = x + o * len * inner;			\
		T *ys = y + o * len * inner;				\
									\
		if (kind == SM_HARD) {					\
			for (i = 0; i < inner; i++) {			\
				T b = xs[i];				\
				int64_t bk = 0;				\
				for (k = 1; k < len; k++)		\
					if (xs[k * inner + i] > b) {	\
						b = xs[k * inner + i];	\
						bk = k;			\
					}				\
				ys[bk * inner + i] = 1;			\
			}						\
			continue;					\
		}							\
		if (inner == 1) {					\
			/* Sum in double: a float sum of thousands of	\
			   terms drifts by 1e-4 (ORT stays near 1e-6). */ \
			T m = ROW_MAX(xs, len);				\
			double s = 0;					\
			EXP_ROW(ys, xs, m, len);			\
			for (k = 0; k < len; k++)			\
				s += ys[k];				\
			if (kind == SM_SOFT) {				\
				T inv = (T)1 / (T)s;			\
				for (k = 0; k < len; k++)		\
					ys[k] *= inv;			\
			} else {					\
				T ls = m + log(s);			\
				for (k = 0; k < len; k++)		\
					ys[k] = xs[k] - ls;		\
			}						\
			continue;					\
		}							\
		for (i = 0; i < inner; i++) {				\
			mx[i] = xs[i];					\
			sm[i] = 0;					\
		}							\
		for (k = 1; k < len; k++)				\
			for (i = 0; i < inner; i++)			\
				mx[i] = xs[k * inner + i] > mx[i] ?	\
				    xs[k * inner + i] : mx[i];		\
		for (k = 0; k < len; k++)				\
			for (i = 0; i < inner; i++) {			\
				T e = exp(xs[k * inner + i] - mx[i]);	\
				ys[k * inner + i] = e;			\
				sm[i] += e;				\
			}						\
		if (kind == SM_SOFT) {					\
			for (i = 0; i < inner; i++)			\
				sm[i] = 1 / sm[i];			\
			for (k = 0; k < len; k++)			\
				for (i = 0; i < inner; i++)		\
					ys[k * inner + i] *= sm[i];	\
		} else {						\
			for (i = 0; i < inner; i++)			\
				sm[i] = mx[i] + log(sm[i]);		\
			for (k = 0; k < len; k++)			\
				for (i = 0; i < inner; i++)		\
					ys[k * inner + i] =		\
					    xs[k * inner + i] - sm[i];	\
		}							\
	}								\
}

SOFTMAX_FN(softmax_f32, float)
SOFTMAX_FN(softmax_f64, double)

struct sm_job {
	void *y;
	const void *x;
	char *scratch;			/* 2 * inner values per part */
	int64_t outer, len, inner, parts, es;
	int wdt;
	enum smkind kind;
};

/* par_for chunk p: part p of the outer iterations. */
static void
softmax_part(void *ctx, int64_t p, int w)
{
	const struct sm_job *j = ctx;
	int64_t o0 = j->outer * p / j->parts;
	int64_t o1 = j->outer * (p + 1) / j->parts;
	char *mx = j->scratch + p * 2 * j->inner * j->es;
	char *sm = mx + j->inner * j->es;

	(void)w;
	if (j->wdt == DT_FLOAT)
		softmax_f32(j->y, j->x, o0, o1, j->len, j->inner, j->kind,
		    (float *)mx, (float *)sm);
	else
		softmax_f64(j->y, j->x, o0, o1, j->len, j->inner, j->kind,
		    (double *)mx, (double *)sm);
}

static int
softmax(struct op_ctx *c, enum smkind kind)
{
	const struct tensor *x, *ux;
	struct tensor tx = { 0 }, res = { 0 };
	int64_t outer, len, inner, parts, es;
	int axis, dt, wdt, rc = -1, a;
	char *scratch = NULL;

	if (first_input(c, &x) < 0)
		return -1;
	dt = x->dtype;
	wdt = ops_is_half(dt) ? DT_FLOAT : dt;
	if (wdt != DT_FLOAT && wdt != DT_DOUBLE)
		return err_set(c->err, "element type %s is not supported",
		    ops_type_name(dt));
	if ((axis = ops_axis(attr_int(c->node, "axis", c->opset < 13 ? 1 : -1),
	    x->rank, c->err)) < 0)
		return -1;
	split_at(x, axis, &outer, &len, &inner);
	if (c->opset < 13) {
		for (a = axis + 1; a < x->rank; a++)
			len *= x->dims[a];
		inner = 1;
	}
	if (!(ux = in_work_type(c, x, wdt, &tx)))
		return -1;
	/* Hardmax writes only the ones. */
	if ((kind == SM_HARD ? tensor_alloc_like :
	    tensor_alloc_like_uninit)(&res, wdt, ux, c->err) < 0)
		goto out;
	parts = c->threads > 1 && x->nelem >= PAR_MIN && outer > 1 ?
	    (outer < c->threads ? outer : c->threads) : 1;
	es = (int64_t)dtype_size(wdt);
	if (res.nelem > 0 &&
	    !(scratch = malloc((size_t)(parts * 2 * inner * es)))) {
		err_nomem(c->err);
		goto out;
	}
	if (res.nelem > 0) {
		struct sm_job j = { res.data, ux->data, scratch, outer, len,
		    inner, parts, es, wdt, kind };

		par_for(parts, (int)parts, softmax_part, &j);
	}
	if (store_result(c, &res, dt) < 0)
		goto out;
	rc = 0;
out:
	free(scratch);
	tensor_release(&tx);
	tensor_release(&res);
	return rc;
}

OPS_KERNEL(run_softmax, softmax, SM_SOFT)
OPS_KERNEL(run_log_softmax, softmax, SM_LOG)
OPS_KERNEL(run_hardmax, softmax, SM_HARD)

/*
 * TopK: the k largest (or smallest) along axis, values and int64
 * indices; equal values keep the lower index first. NaN counts as
 * larger than any number.
 */
struct kv {
	double v;
	int64_t i;
};

static int
cmp_desc(const void *pa, const void *pb)
{
	const struct kv *a = pa, *b = pb;
	int na = isnan(a->v), nb = isnan(b->v);

	if (na != nb)
		return na ? -1 : 1;
	if (!na && a->v != b->v)
		return a->v > b->v ? -1 : 1;
	return (a->i > b->i) - (a->i < b->i);
}

static int
cmp_asc(const void *pa, const void *pb)
{
	const struct kv *a = pa, *b = pb;
	int na = isnan(a->v), nb = isnan(b->v);

	if (na != nb)
		return na ? 1 : -1;
	if (!na && a->v != b->v)
		return a->v < b->v ? -1 : 1;
	return (a->i > b->i) - (a->i < b->i);
}

static int
run_topk(struct op_ctx *c)
{
	const struct tensor *x, *kt;
	struct tensor *vals = &c->out[0], *idx;
	int64_t k, outer, len, inner, dims[TENSOR_MAX_RANK], o, i, j, *kv_, nk;
	int axis, largest;
	size_t es;
	struct kv *buf;

	if (first_input(c, &x) < 0)
		return -1;
	if (c->nout < 2)
		return err_set(c->err, "expected 2 outputs, got %d", c->nout);
	idx = &c->out[1];
	if (c->opset < 10) {
		if (!attr_find(c->node, "k"))
			return err_set(c->err, "attribute k is missing");
		k = attr_int(c->node, "k", 0);
	} else {
		if (!(kt = ops_input(c, 1)))
			return err_set(c->err, "input 1 (k) is missing");
		if (ops_read_ints(kt, &kv_, &nk, c->err) < 0)
			return err_prefix(c->err, "k");
		k = nk == 1 ? kv_[0] : -1;
		free(kv_);
		if (nk != 1)
			return err_set(c->err, "k must have one element, "
			    "not %lld", (long long)nk);
	}
	if ((axis = ops_axis(attr_int(c->node, "axis", -1), x->rank,
	    c->err)) < 0)
		return -1;
	largest = attr_int(c->node, "largest", 1) != 0;
	split_at(x, axis, &outer, &len, &inner);
	if (k < 0 || k > len)
		return err_set(c->err, "k %lld is out of range for axis of "
		    "length %lld", (long long)k, (long long)len);
	memcpy(dims, x->dims, sizeof dims);
	dims[axis] = k;
	if (tensor_alloc(vals, x->dtype, x->rank, dims, c->err) < 0)
		return -1;
	if (tensor_alloc(idx, DT_INT64, x->rank, dims, c->err) < 0) {
		tensor_release(vals);
		return -1;
	}
	if (vals->nelem == 0)
		return 0;
	if (!(buf = malloc(len * sizeof *buf))) {
		tensor_release(vals);
		tensor_release(idx);
		return err_nomem(c->err);
	}
	es = dtype_size(x->dtype);
	for (o = 0; o < outer; o++)
		for (i = 0; i < inner; i++) {
			for (j = 0; j < len; j++) {
				buf[j].v = tensor_get(x,
				    (o * len + j) * inner + i);
				buf[j].i = j;
			}
			qsort(buf, len, sizeof *buf,
			    largest ? cmp_desc : cmp_asc);
			for (j = 0; j < k; j++) {
				int64_t d = (o * k + j) * inner + i;
				int64_t s = (o * len + buf[j].i) * inner + i;

				memcpy((char *)vals->data + d * es,
				    (const char *)x->data + s * es, es);
				((int64_t *)idx->data)[d] = buf[j].i;
			}
		}
	free(buf);
	return 0;
}

/*
 * CumSum along an axis given as a scalar tensor; exclusive starts from
 * 0, reverse sums from the end. Integers wrap.
 */
#define CUMSUM_FN(name, T, A)						\
static void								\
name(void *y_, const void *x_, int64_t outer, int64_t len,		\
    int64_t inner, int excl, int rev)					\
{									\
	T *y = y_;							\
	const T *x = x_;						\
	int64_t o, i, kk;						\
									\
	for (o = 0; o < outer; o++)					\
		for (i = 0; i < inner; i++) {				\
			A s = 0;					\
			for (kk = 0; kk < len; kk++) {			\
				int64_t k = rev ? len - 1 - kk : kk;	\
				int64_t p = (o * len + k) * inner + i;	\
				if (excl) {				\
					y[p] = (T)s;			\
					s += (A)x[p];			\
				} else {				\
					s += (A)x[p];			\
					y[p] = (T)s;			\
				}					\
			}						\
		}							\
}

CUMSUM_FN(cumsum_f32, float, float)
CUMSUM_FN(cumsum_f64, double, double)
CUMSUM_FN(cumsum_i32, int32_t, uint32_t)
CUMSUM_FN(cumsum_i64, int64_t, uint64_t)
CUMSUM_FN(cumsum_u32, uint32_t, uint32_t)
CUMSUM_FN(cumsum_u64, uint64_t, uint64_t)

static int
run_cumsum(struct op_ctx *c)
{
	const struct tensor *x, *ux;
	struct tensor tx = { 0 }, res = { 0 };
	int64_t *av, na, outer, len, inner;
	int axis, dt, wdt, excl, rev, rc = -1;
	void (*fn)(void *, const void *, int64_t, int64_t, int64_t, int, int);

	if (c->nin != 2 || !c->in[0] || !c->in[1])
		return err_set(c->err, "expected 2 inputs");
	x = c->in[0];
	dt = x->dtype;
	wdt = ops_is_half(dt) ? DT_FLOAT : dt;
	switch (wdt) {
	case DT_FLOAT: fn = cumsum_f32; break;
	case DT_DOUBLE: fn = cumsum_f64; break;
	case DT_INT32: fn = cumsum_i32; break;
	case DT_INT64: fn = cumsum_i64; break;
	case DT_UINT32: fn = cumsum_u32; break;
	case DT_UINT64: fn = cumsum_u64; break;
	default:
		return err_set(c->err, "element type %s is not supported",
		    ops_type_name(dt));
	}
	if (ops_read_ints(c->in[1], &av, &na, c->err) < 0)
		return err_prefix(c->err, "axis");
	if (na != 1) {
		free(av);
		return err_set(c->err, "axis must have one element, not %lld",
		    (long long)na);
	}
	axis = ops_axis(av[0], x->rank, c->err);
	free(av);
	if (axis < 0)
		return -1;
	excl = attr_int(c->node, "exclusive", 0) != 0;
	rev = attr_int(c->node, "reverse", 0) != 0;
	split_at(x, axis, &outer, &len, &inner);
	if (!(ux = in_work_type(c, x, wdt, &tx)))
		return -1;
	if (tensor_alloc_like(&res, wdt, ux, c->err) < 0)
		goto out;
	fn(res.data, ux->data, outer, len, inner, excl, rev);
	if (store_result(c, &res, dt) < 0)
		goto out;
	rc = 0;
out:
	tensor_release(&tx);
	tensor_release(&res);
	return rc;
}

/* LpNormalization: x / ||x||_p along axis, p 1 or 2; zero norms give 0. */
static int
run_lp_normalization(struct op_ctx *c)
{
	const struct tensor *x;
	struct tensor *y = &c->out[0];
	int64_t p, outer, len, inner, o, i, k;
	int axis;

	if (first_input(c, &x) < 0)
		return -1;
	if (!dtype_is_float(x->dtype))
		return err_set(c->err, "element type %s is not supported",
		    ops_type_name(x->dtype));
	p = attr_int(c->node, "p", 2);
	if (p != 1 && p != 2)
		return err_set(c->err, "p must be 1 or 2, not %lld",
		    (long long)p);
	if ((axis = ops_axis(attr_int(c->node, "axis", -1), x->rank,
	    c->err)) < 0)
		return -1;
	if (tensor_alloc_like(y, x->dtype, x, c->err) < 0)
		return -1;
	split_at(x, axis, &outer, &len, &inner);
	for (o = 0; o < outer; o++)
		for (i = 0; i < inner; i++) {
			double n = 0;

			for (k = 0; k < len; k++) {
				double v = tensor_get(x,
				    (o * len + k) * inner + i);
				n += p == 1 ? fabs(v) : v * v;
			}
			if (p == 2)
				n = sqrt(n);
			for (k = 0; k < len; k++) {
				int64_t at = (o * len + k) * inner + i;
				tensor_set(y, at,
				    n == 0 ? 0 : tensor_get(x, at) / n);
			}
		}
	return 0;
}

const struct op_def op_reduce_defs[] = {
	{ "", "ArgMax", run_argmax, NULL },
	{ "", "ArgMin", run_argmin, NULL },
	{ "", "CumSum", run_cumsum, NULL },
	{ "", "Hardmax", run_hardmax, NULL },
	{ "", "LogSoftmax", run_log_softmax, NULL },
	{ "", "LpNormalization", run_lp_normalization, NULL },
	{ "", "ReduceL1", run_reduce_l1, NULL },
	{ "", "ReduceL2", run_reduce_l2, NULL },
	{ "", "ReduceLogSum", run_reduce_log_sum, NULL },
	{ "", "ReduceLogSumExp", run_reduce_log_sum_exp, NULL },
	{ "", "ReduceMax", run_reduce_max, NULL },
	{ "", "ReduceMean", run_reduce_mean, NULL },
	{ "", "ReduceMin", run_reduce_min, NULL },
	{ "", "ReduceProd", run_reduce_prod, NULL },
	{ "", "ReduceSum", run_reduce_sum, NULL },
	{ "", "ReduceSumSquare", run_reduce_sum_square, NULL },
	{ "", "Softmax", run_softmax, NULL },
	{ "", "TopK", run_topk, NULL },
	{ NULL, NULL, NULL, NULL },
};
