/*
 * op_shape: kernels that move, select and convert data without doing
 * arithmetic on it: shape queries, reshapes, transposes, slicing,
 * gathering, padding, constants and casts.
 *
 * Almost everything here moves whole elements, so the kernels work on
 * bytes through dtype_size() and serve every numeric type alike. Most
 * reorderings (Transpose, Slice, Expand, Tile, Pad, DepthToSpace,
 * SpaceToDepth) are expressed as a strided view of the input and copied
 * by one routine, copy_view(), which merges contiguous axes, copies rows
 * with memcpy and transposes in cache-sized tiles (OpenMP threads for
 * large copies).
 *
 * Every kernel checks ranks, counts and index ranges before touching
 * data; output sizes are limited by tensor_alloc(), so a hostile shape
 * fails instead of allocating.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attr.h"
#include "model.h"
#include "ops.h"
#include "par.h"
#include "tensor.h"

/* Tile views each axis as (repeat, dim), so a view may have twice the rank. */
#define VIEW_MAX (2 * TENSOR_MAX_RANK + 2)
/* Below this many bytes a copy is not worth waking threads for. */
#define PAR_MIN_BYTES ((int64_t)1 << 18)
/*
 * Transpose tiles: TILE_J strided source rows at a time, few enough to
 * stay within L1 associativity when the stride is a multiple of 4 KiB.
 */
#define TILE_I 128
#define TILE_J 8

/* ------------------------------------------------------------------ */
/* Shared helpers */

static int
need_inputs(struct op_ctx *c, int min)
{
	int i;

	if (c->nin < min)
		return err_set(c->err, "expects at least %d input%s, got %d",
		    min, min == 1 ? "" : "s", c->nin);
	for (i = 0; i < min; i++)
		if (c->in[i] == NULL)
			return err_set(c->err, "input %d is missing", i);
	if (c->nout < 1)
		return err_set(c->err, "has no output");
	return 0;
}

static int
elem_size(const struct tensor *t, size_t *esz, struct err *e)
{
	*esz = dtype_size(t->dtype);
	if (*esz == 0)
		return err_set(e, "element type %s is not supported",
		    ops_type_name(t->dtype));
	return 0;
}

/*
 * Strides and products of dims. An empty tensor may have other dims as
 * large as it likes, so these wrap (unsigned) instead of overflowing; the
 * kernels use them only when the tensor has elements, and then they are
 * bounded by its size.
 */
static void
contiguous_strides(int rank, const int64_t *dims, int64_t *st)
{
	uint64_t s = 1;
	int k;

	for (k = rank - 1; k >= 0; k--) {
		st[k] = (int64_t)s;
		s *= (uint64_t)dims[k];
	}
}

static int64_t
prod(const int64_t *dims, int from, int to)
{
	uint64_t p = 1;
	int k;

	for (k = from; k < to; k++)
		p *= (uint64_t)dims[k];
	return (int64_t)p;
}

static int64_t
prod_bytes(const int64_t *dims, int from, int to, size_t esz)
{
	return (int64_t)((uint64_t)prod(dims, from, to) * esz);
}

/* a * b for output dims, or -1 with a message when it overflows. */
static int
mul_dim(int64_t a, int64_t b, int64_t *out, struct err *e)
{
	if (a != 0 && b > INT64_MAX / a)
		return err_set(e, "output dimension overflows");
	*out = a * b;
	return 0;
}

/* memcpy that tolerates empty tensors whose data may be NULL. */
static void
copy_bytes(void *dst, const void *src, size_t n)
{
	if (n > 0)
		memcpy(dst, src, n);
}

/* Replicate one element of esz bytes over n slots by doubling copies. */
static void
fill_elems(char *dst, const void *val, int64_t n, size_t esz)
{
	size_t total, done, chunk;

	if (n <= 0)
		return;
	total = (size_t)n * esz;
	memcpy(dst, val, esz);
	done = esz;
	while (done < total) {
		chunk = done < total - done ? done : total - done;
		memcpy(dst + done, dst, chunk);
		done += chunk;
	}
}

static int
all_zero_bytes(const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i] != 0)
			return 0;
	return 1;
}

/* Index tensors: int32 or int64 only. */
static int
check_index_type(const struct tensor *t, const char *what, struct err *e)
{
	if (t->dtype != DT_INT32 && t->dtype != DT_INT64)
		return err_set(e, "%s must be int32 or int64, not %s", what,
		    ops_type_name(t->dtype));
	return 0;
}

static int64_t
index_at(const struct tensor *t, int64_t i)
{
	int32_t v32;
	int64_t v64;

	if (t->dtype == DT_INT32) {
		memcpy(&v32, (const char *)t->data + i * 4, 4);
		return v32;
	}
	memcpy(&v64, (const char *)t->data + i * 8, 8);
	return v64;
}

/*
 * Read every index of t, normalise negatives against size and check the
 * range; *out is malloc'd (NULL when t is empty).
 */
static int
read_indices(const struct tensor *t, int64_t size, const char *what,
    int64_t **out, struct err *e)
{
	int64_t i, v, *idx;

	*out = NULL;
	if (check_index_type(t, what, e) == -1)
		return -1;
	if (t->nelem == 0)
		return 0;
	if ((idx = malloc((size_t)t->nelem * sizeof(*idx))) == NULL)
		return err_nomem(e);
	for (i = 0; i < t->nelem; i++) {
		v = index_at(t, i);
		if (v < -size || v >= size) {
			free(idx);
			return err_set(e, "%s value %lld is out of range for "
			    "an axis of size %lld", what, (long long)v,
			    (long long)size);
		}
		idx[i] = v < 0 ? v + size : v;
	}
	*out = idx;
	return 0;
}

/* Integer list from an optional int32/int64 input; *n = -1 when absent. */
static int
read_opt_ints(struct op_ctx *c, int i, const char *what, int64_t **vals,
    int64_t *n)
{
	const struct tensor *t = ops_input(c, i);

	*vals = NULL;
	*n = -1;
	if (t == NULL)
		return 0;
	if (check_index_type(t, what, c->err) == -1)
		return -1;
	if (t->rank > 1)
		return err_set(c->err, "%s must be 1-D, not rank %d", what,
		    t->rank);
	if (ops_read_ints(t, vals, n, c->err) == -1)
		return err_prefix(c->err, "%s", what);
	return 0;
}

/* Output 0 as a copy of x's data with another shape of the same size. */
static int
copy_reshaped(struct op_ctx *c, const struct tensor *x, int rank,
    const int64_t *dims)
{
	struct tensor *y = &c->out[0];
	size_t esz;

	if (elem_size(x, &esz, c->err) == -1)
		return -1;
	if (tensor_alloc_uninit(y, x->dtype, rank, dims, c->err) == -1)
		return -1;
	if (y->nelem != x->nelem) {
		tensor_release(y);
		return err_set(c->err, "cannot reshape %lld elements into "
		    "%lld", (long long)x->nelem, (long long)y->nelem);
	}
	copy_bytes(y->data, x->data, (size_t)x->nelem * esz);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Strided copies */

/*
 * A view: dims, and for each axis the element stride in the source and
 * in the destination (either may be negative or zero in the source).
 */
struct view {
	int rank;
	int64_t dims[VIEW_MAX];
	int64_t src[VIEW_MAX];
	int64_t dst[VIEW_MAX];
};

static void
view_add(struct view *v, int64_t dim, int64_t src, int64_t dst)
{
	v->dims[v->rank] = dim;
	v->src[v->rank] = src;
	v->dst[v->rank] = dst;
	v->rank++;
}

/* One element of esz bytes, with fixed sizes the compiler can inline. */
#define COPY_LOOP(SZ)							\
	for (i = 0; i < n; i++)						\
		memcpy(d + i * ds * (SZ), s + i * ss * (SZ), (SZ))

static void
copy_elems(char *d, int64_t ds, const char *s, int64_t ss, int64_t n,
    size_t esz)
{
	int64_t i;

	switch (esz) {
	case 1:
		COPY_LOOP(1);
		break;
	case 2:
		COPY_LOOP(2);
		break;
	case 4:
		COPY_LOOP(4);
		break;
	case 8:
		COPY_LOOP(8);
		break;
	default:
		for (i = 0; i < n; i++)
			memcpy(d + i * ds * (int64_t)esz,
			    s + i * ss * (int64_t)esz, esz);
		break;
	}
}

/*
 * d[i * dp + j] = s[i + j * sl] for i < np, j < nl: a 2-D transpose in
 * tiles small enough that reads and writes both stay in cache.
 */
#define TILE_LOOP(SZ)							\
	for (i = i0; i < i1; i++)					\
		for (j = j0; j < j1; j++)				\
			memcpy(d + (i * dp + j) * (SZ),			\
			    s + (i + j * sl) * (SZ), (SZ))

static void
copy_tiled(char *d, int64_t dp, const char *s, int64_t sl, int64_t np,
    int64_t nl, size_t esz)
{
	int64_t i, j, i0, i1, j0, j1;

	for (i0 = 0; i0 < np; i0 = i1) {
		i1 = i0 + TILE_I < np ? i0 + TILE_I : np;
		for (j0 = 0; j0 < nl; j0 = j1) {
			j1 = j0 + TILE_J < nl ? j0 + TILE_J : nl;
			switch (esz) {
			case 1:
				TILE_LOOP(1);
				break;
			case 2:
				TILE_LOOP(2);
				break;
			case 4:
				TILE_LOOP(4);
				break;
			case 8:
				TILE_LOOP(8);
				break;
			default:
				for (i = i0; i < i1; i++)
					for (j = j0; j < j1; j++)
						memcpy(d + (i * dp + j) *
						    (int64_t)esz, s + (i + j *
						    sl) * (int64_t)esz, esz);
				break;
			}
		}
	}
}

enum inner_kind { INNER_ROWS, INNER_TILE, INNER_ELEMS };

struct copy_plan {
	struct view v;
	enum inner_kind kind;
	int tp;				/* INNER_TILE: axis paired with last */
	int nouter;
	int outer[VIEW_MAX];		/* axes the outer loop walks */
	int64_t count;			/* outer iterations */
	size_t esz;
};

static void
run_inner(const struct copy_plan *p, char *d, const char *s)
{
	const struct view *v = &p->v;
	int l = v->rank - 1;

	switch (p->kind) {
	case INNER_ROWS:
		memcpy(d, s, (size_t)v->dims[l] * p->esz);
		break;
	case INNER_TILE:
		copy_tiled(d, v->dst[p->tp], s, v->src[l], v->dims[p->tp],
		    v->dims[l], p->esz);
		break;
	case INNER_ELEMS:
		copy_elems(d, v->dst[l], s, v->src[l], v->dims[l], p->esz);
		break;
	}
}

/* Outer iterations lo..hi-1, with offsets kept incrementally. */
static void
copy_range(const struct copy_plan *p, char *dst, const char *src, int64_t lo,
    int64_t hi)
{
	const struct view *v = &p->v;
	int64_t idx[VIEW_MAX], so = 0, dof = 0, rest = lo, it;
	int k, a;

	for (k = p->nouter - 1; k >= 0; k--) {
		a = p->outer[k];
		idx[k] = rest % v->dims[a];
		rest /= v->dims[a];
		so += idx[k] * v->src[a];
		dof += idx[k] * v->dst[a];
	}
	for (it = lo; it < hi; it++) {
		run_inner(p, dst + dof * (int64_t)p->esz,
		    src + so * (int64_t)p->esz);
		for (k = p->nouter - 1; k >= 0; k--) {
			a = p->outer[k];
			so += v->src[a];
			dof += v->dst[a];
			if (++idx[k] < v->dims[a])
				break;
			so -= idx[k] * v->src[a];
			dof -= idx[k] * v->dst[a];
			idx[k] = 0;
		}
	}
}

struct copy_job {
	const struct copy_plan *p;
	char *dst;
	const char *src;
	int64_t nt;
};

static void copy_part(void *ctx, int64_t k, int w);

/*
 * Copy the view from src into dst (strides in elements, offsets already
 * applied to the pointers). Axes of size 1 are dropped and neighbours that
 * are contiguous in both source and destination merged, so that a
 * transpose of a large tensor ends as a batch of 2-D tile transposes or
 * of row copies.
 */
static void
copy_view(char *dst, const char *src, const struct view *in, size_t esz,
    int threads)
{
	struct copy_plan p;
	struct view *v = &p.v;
	int64_t total = 1;
	int k, l, nt;

	for (k = 0; k < in->rank; k++)
		if (in->dims[k] == 0)
			return;
	for (k = 0; k < in->rank; k++)
		total *= in->dims[k];
	v->rank = 0;
	for (k = 0; k < in->rank; k++) {
		if (in->dims[k] == 1)
			continue;
		if (v->rank > 0) {
			l = v->rank - 1;
			if (v->src[l] == in->src[k] * in->dims[k] &&
			    v->dst[l] == in->dst[k] * in->dims[k]) {
				v->dims[l] *= in->dims[k];
				v->src[l] = in->src[k];
				v->dst[l] = in->dst[k];
				continue;
			}
		}
		view_add(v, in->dims[k], in->src[k], in->dst[k]);
	}
	if (v->rank == 0) {
		memcpy(dst, src, esz);
		return;
	}
	p.esz = esz;
	l = v->rank - 1;
	p.tp = -1;
	if (v->src[l] == 1 && v->dst[l] == 1)
		p.kind = INNER_ROWS;
	else {
		p.kind = INNER_ELEMS;
		if (v->dst[l] == 1 && v->dims[l] >= 4)
			for (k = 0; k < l; k++)
				if (v->src[k] == 1 && v->dims[k] >= 4) {
					p.kind = INNER_TILE;
					p.tp = k;
				}
	}
	p.nouter = 0;
	p.count = 1;
	for (k = 0; k < l; k++) {
		if (k == p.tp)
			continue;
		p.outer[p.nouter++] = k;
		p.count *= v->dims[k];
	}
	nt = threads > 1 && total * (int64_t)esz >= PAR_MIN_BYTES ? threads : 1;
	if (nt > p.count)
		nt = (int)p.count;
	if (nt <= 1) {
		copy_range(&p, dst, src, 0, p.count);
		return;
	}
	{
		struct copy_job j = { &p, dst, src, nt };

		par_for(nt, nt, copy_part, &j);
	}
}

/* par_for chunk k of nt: its share of the outer iterations. */
static void
copy_part(void *ctx, int64_t k, int w)
{
	const struct copy_job *j = ctx;
	int64_t count = j->p->count;

	(void)w;
	copy_range(j->p, j->dst, j->src, count * k / j->nt,
	    count * (k + 1) / j->nt);
}

/* Output y (contiguous) from a view of x given its dims and source strides. */
static void
copy_to_output(struct tensor *y, const struct tensor *x, int64_t src_off,
    int rank, const int64_t *dims, const int64_t *sstride, size_t esz,
    int threads)
{
	struct view v;
	int64_t dst[VIEW_MAX];
	int k;

	contiguous_strides(rank, dims, dst);
	v.rank = 0;
	for (k = 0; k < rank; k++)
		view_add(&v, dims[k], sstride[k], dst[k]);
	copy_view(y->data, (const char *)x->data + src_off * (int64_t)esz, &v,
	    esz, threads);
}

/* ------------------------------------------------------------------ */
/* Shape, Size, Constant, ConstantOfShape, Range */

static int
run_shape(struct op_ctx *c)
{
	const struct tensor *x;
	int64_t start, end, n, r, k;
	int64_t *v;

	if (need_inputs(c, 1) == -1)
		return -1;
	x = c->in[0];
	r = x->rank;
	start = c->opset >= 15 ? attr_int(c->node, "start", 0) : 0;
	end = c->opset >= 15 ? attr_int(c->node, "end", r) : r;
	if (start < 0)
		start = start < -r ? 0 : start + r;
	if (end < 0)
		end = end < -r ? 0 : end + r;
	if (start > r)
		start = r;
	if (end > r)
		end = r;
	n = end > start ? end - start : 0;
	if (tensor_alloc(&c->out[0], DT_INT64, 1, &n, c->err) == -1)
		return -1;
	v = c->out[0].data;
	for (k = 0; k < n; k++)
		v[k] = x->dims[start + k];
	return 0;
}

static int
run_size(struct op_ctx *c)
{
	if (need_inputs(c, 1) == -1)
		return -1;
	if (tensor_alloc(&c->out[0], DT_INT64, 0, NULL, c->err) == -1)
		return -1;
	*(int64_t *)c->out[0].data = c->in[0]->nelem;
	return 0;
}

static int
run_constant(struct op_ctx *c)
{
	const Onnx__NodeProto *n = c->node;
	const Onnx__AttributeProto *a;
	struct tensor *y = &c->out[0];
	const char *set = NULL;
	const float *fv;
	const int64_t *iv;
	size_t i, cnt;
	int64_t dim;
	static const char *const names[] = { "value", "sparse_value",
	    "value_float", "value_floats", "value_int", "value_ints",
	    "value_string", "value_strings" };

	if (c->nout < 1)
		return err_set(c->err, "has no output");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (attr_find(n, names[i]) == NULL)
			continue;
		if (set != NULL)
			return err_set(c->err, "attributes %s and %s are both "
			    "set; exactly one value is allowed", set, names[i]);
		set = names[i];
	}
	if (set == NULL)
		return err_set(c->err, "no value attribute");
	if (strcmp(set, "value") == 0) {
		if ((a = attr_find(n, "value"))->t == NULL)
			return err_set(c->err, "attribute value holds no "
			    "tensor");
		return model_tensor_read(NULL, a->t, y, c->err) == -1 ?
		    err_prefix(c->err, "attribute value") : 0;
	}
	if (strcmp(set, "value_float") == 0) {
		if (tensor_alloc(y, DT_FLOAT, 0, NULL, c->err) == -1)
			return -1;
		*(float *)y->data = attr_float(n, "value_float", 0);
		return 0;
	}
	if (strcmp(set, "value_int") == 0) {
		if (tensor_alloc(y, DT_INT64, 0, NULL, c->err) == -1)
			return -1;
		*(int64_t *)y->data = attr_int(n, "value_int", 0);
		return 0;
	}
	if (strcmp(set, "value_floats") == 0) {
		fv = attr_floats(n, "value_floats", &cnt);
		dim = (int64_t)cnt;
		if (tensor_alloc(y, DT_FLOAT, 1, &dim, c->err) == -1)
			return -1;
		copy_bytes(y->data, fv, cnt * sizeof(float));
		return 0;
	}
	if (strcmp(set, "value_ints") == 0) {
		iv = attr_ints(n, "value_ints", &cnt);
		dim = (int64_t)cnt;
		if (tensor_alloc(y, DT_INT64, 1, &dim, c->err) == -1)
			return -1;
		copy_bytes(y->data, iv, cnt * sizeof(int64_t));
		return 0;
	}
	return err_set(c->err, "attribute %s is not supported (%s)", set,
	    strcmp(set, "sparse_value") == 0 ? "sparse tensors" :
	    "string tensors");
}

/* A shape given as a 1-D int64 input: non-negative, at most TENSOR_MAX_RANK. */
static int
read_shape_input(struct op_ctx *c, int i, int64_t *dims, int *rank)
{
	const struct tensor *t = c->in[i];
	int64_t *v, n, k;

	if (t->dtype != DT_INT64)
		return err_set(c->err, "shape must be int64, not %s",
		    ops_type_name(t->dtype));
	if (t->rank != 1)
		return err_set(c->err, "shape must be 1-D, not rank %d",
		    t->rank);
	if (t->nelem > TENSOR_MAX_RANK)
		return err_set(c->err, "shape has %lld dimensions, more than "
		    "%d", (long long)t->nelem, TENSOR_MAX_RANK);
	if (ops_read_ints(t, &v, &n, c->err) == -1)
		return -1;
	for (k = 0; k < n; k++) {
		if (v[k] < 0) {
			err_set(c->err, "shape dimension %lld is negative "
			    "(%lld)", (long long)k, (long long)v[k]);
			free(v);
			return -1;
		}
		dims[k] = v[k];
	}
	free(v);
	*rank = (int)n;
	return 0;
}

static int
run_constant_of_shape(struct op_ctx *c)
{
	const Onnx__TensorProto *tp;
	struct tensor val = { 0 };
	int64_t dims[TENSOR_MAX_RANK];
	int rank, rc = -1;
	size_t esz;

	if (need_inputs(c, 1) == -1)
		return -1;
	if (read_shape_input(c, 0, dims, &rank) == -1)
		return -1;
	if ((tp = attr_tensor(c->node, "value")) != NULL) {
		if (model_tensor_read(NULL, tp, &val, c->err) == -1)
			return err_prefix(c->err, "attribute value");
		if (val.nelem != 1) {
			err_set(c->err, "attribute value must hold one "
			    "element, not %lld", (long long)val.nelem);
			goto out;
		}
	} else if (tensor_alloc(&val, DT_FLOAT, 0, NULL, c->err) == -1)
		return -1;
	if (elem_size(&val, &esz, c->err) == -1)
		goto out;
	if (tensor_alloc(&c->out[0], val.dtype, rank, dims, c->err) == -1)
		goto out;
	if (!all_zero_bytes(val.data, esz))
		fill_elems(c->out[0].data, val.data, c->out[0].nelem, esz);
	rc = 0;
out:
	tensor_release(&val);
	return rc;
}

static int
scalar_int(const struct tensor *t, int64_t *v)
{
	switch (t->dtype) {
	case DT_INT16: {
		int16_t x;

		memcpy(&x, t->data, 2);
		*v = x;
		return 0;
	}
	case DT_INT32: {
		int32_t x;

		memcpy(&x, t->data, 4);
		*v = x;
		return 0;
	}
	case DT_INT64:
		memcpy(v, t->data, 8);
		return 0;
	}
	return -1;
}

static int
run_range(struct op_ctx *c)
{
	static const char *const what[] = { "start", "limit", "delta" };
	const struct tensor *t;
	int dtype, i;
	int64_t n, k;

	if (need_inputs(c, 3) == -1)
		return -1;
	dtype = c->in[0]->dtype;
	for (i = 0; i < 3; i++) {
		t = c->in[i];
		if (t->nelem != 1 || t->rank > 1)
			return err_set(c->err, "%s must be a scalar", what[i]);
		if (t->dtype != dtype)
			return err_set(c->err, "%s is %s but start is %s",
			    what[i], ops_type_name(t->dtype),
			    ops_type_name(dtype));
	}
	if (dtype == DT_FLOAT || dtype == DT_DOUBLE) {
		double s = tensor_get(c->in[0], 0), l = tensor_get(c->in[1], 0);
		double d = tensor_get(c->in[2], 0), cnt;

		if (!isfinite(s) || !isfinite(l) || !isfinite(d))
			return err_set(c->err, "start, limit and delta must "
			    "be finite");
		if (d == 0)
			return err_set(c->err, "delta is zero");
		cnt = ceil((l - s) / d);
		if (!(cnt > 0))
			cnt = 0;
		if (cnt > (double)TENSOR_MAX_BYTES)
			return err_set(c->err, "range of %.0f elements is too "
			    "large", cnt);
		n = (int64_t)cnt;
		if (tensor_alloc(&c->out[0], dtype, 1, &n, c->err) == -1)
			return -1;
		for (k = 0; k < n; k++)
			tensor_set(&c->out[0], k, s + (double)k * d);
		return 0;
	}
	if (dtype == DT_INT16 || dtype == DT_INT32 || dtype == DT_INT64) {
		int64_t s = 0, l = 0, d = 0;
		uint64_t diff, ud;

		scalar_int(c->in[0], &s);
		scalar_int(c->in[1], &l);
		scalar_int(c->in[2], &d);
		if (d == 0)
			return err_set(c->err, "delta is zero");
		/* Unsigned arithmetic: the spans of int64 overflow int64. */
		if (d > 0 && l > s) {
			diff = (uint64_t)l - (uint64_t)s;
			ud = (uint64_t)d;
		} else if (d < 0 && l < s) {
			diff = (uint64_t)s - (uint64_t)l;
			ud = (uint64_t)0 - (uint64_t)d;
		} else
			diff = 0, ud = 1;
		if (diff / ud + (diff % ud != 0) > (uint64_t)TENSOR_MAX_BYTES)
			return err_set(c->err, "range of %llu elements is too "
			    "large", (unsigned long long)(diff / ud));
		n = (int64_t)(diff / ud + (diff % ud != 0));
		if (tensor_alloc(&c->out[0], dtype, 1, &n, c->err) == -1)
			return -1;
		for (k = 0; k < n; k++) {
			int64_t v = (int64_t)((uint64_t)s + (uint64_t)k *
			    (uint64_t)d);

			if (dtype == DT_INT16)
				((int16_t *)c->out[0].data)[k] = (int16_t)v;
			else if (dtype == DT_INT32)
				((int32_t *)c->out[0].data)[k] = (int32_t)v;
			else
				((int64_t *)c->out[0].data)[k] = v;
		}
		return 0;
	}
	return err_set(c->err, "element type %s is not supported (float, "
	    "double, int16, int32, int64)", ops_type_name(dtype));
}

/* ------------------------------------------------------------------ */
/* Cast, CastLike */

static int
cast_to(struct op_ctx *c, const struct tensor *x, int64_t to)
{
	if (to == DT_FLOAT8E4M3FN || to == DT_FLOAT8E4M3FNUZ ||
	    to == DT_FLOAT8E5M2 || to == DT_FLOAT8E5M2FNUZ ||
	    x->dtype == DT_FLOAT8E4M3FN || x->dtype == DT_FLOAT8E4M3FNUZ ||
	    x->dtype == DT_FLOAT8E5M2 || x->dtype == DT_FLOAT8E5M2FNUZ)
		return err_set(c->err, "float8 types are not supported");
	if (to <= DT_UNDEFINED || to > INT_MAX || dtype_size((int)to) == 0)
		return err_set(c->err, "cannot cast to %s (type %lld)",
		    to > 0 && to <= INT_MAX ?
		    ops_type_name((int)to) : "unknown",
		    (long long)to);
	if (dtype_size(x->dtype) == 0)
		return err_set(c->err, "cannot cast from %s",
		    ops_type_name(x->dtype));
	if (x->dtype == to)
		return tensor_copy(&c->out[0], x, c->err);
	return tensor_cast(&c->out[0], x, (int)to, c->err);
}

static int
run_cast(struct op_ctx *c)
{
	if (need_inputs(c, 1) == -1)
		return -1;
	if (attr_find(c->node, "to") == NULL)
		return err_set(c->err, "missing attribute to");
	return cast_to(c, c->in[0], attr_int(c->node, "to", 0));
}

static int
run_cast_like(struct op_ctx *c)
{
	if (need_inputs(c, 2) == -1)
		return -1;
	return cast_to(c, c->in[0], c->in[1]->dtype);
}

/* ------------------------------------------------------------------ */
/* Reshape, Flatten, Squeeze, Unsqueeze */

static int
run_reshape(struct op_ctx *c)
{
	const struct tensor *x, *s;
	int64_t dims[TENSOR_MAX_RANK], *v, n, k, known = 1;
	int infer = -1, allowzero, has_zero = 0;

	if (need_inputs(c, 2) == -1)
		return -1;
	x = c->in[0];
	s = c->in[1];
	allowzero = c->opset >= 14 ? (int)attr_int(c->node, "allowzero", 0) : 0;
	if (s->dtype != DT_INT64)
		return err_set(c->err, "shape must be int64, not %s",
		    ops_type_name(s->dtype));
	if (s->rank != 1)
		return err_set(c->err, "shape must be 1-D, not rank %d",
		    s->rank);
	if (s->nelem > TENSOR_MAX_RANK)
		return err_set(c->err, "shape has %lld dimensions, more than "
		    "%d", (long long)s->nelem, TENSOR_MAX_RANK);
	if (ops_read_ints(s, &v, &n, c->err) == -1)
		return -1;
	for (k = 0; k < n; k++) {
		if (v[k] == -1) {
			if (infer >= 0) {
				free(v);
				return err_set(c->err, "shape has more than "
				    "one -1");
			}
			infer = (int)k;
			continue;
		}
		if (v[k] < -1) {
			err_set(c->err, "shape dimension %lld is %lld",
			    (long long)k, (long long)v[k]);
			free(v);
			return -1;
		}
		dims[k] = v[k];
		if (v[k] == 0) {
			has_zero = 1;
			if (!allowzero) {
				if (k >= x->rank) {
					free(v);
					return err_set(c->err, "shape "
					    "dimension %lld is 0 but the input "
					    "has rank %d", (long long)k,
					    x->rank);
				}
				dims[k] = x->dims[k];
			}
		}
		if (dims[k] != 0 && known > INT64_MAX / dims[k]) {
			free(v);
			return err_set(c->err, "shape is too large");
		}
		known *= dims[k];
	}
	free(v);
	if (infer >= 0) {
		if (allowzero && has_zero)
			return err_set(c->err, "shape has both 0 and -1 with "
			    "allowzero set");
		if (known == 0)
			return err_set(c->err, "cannot infer the -1 dimension "
			    "of a shape with a zero dimension");
		if (x->nelem % known != 0)
			goto mismatch;
		dims[infer] = x->nelem / known;
		known = x->nelem;
	}
	if (known != x->nelem)
		goto mismatch;
	return copy_reshaped(c, x, (int)n, dims);
mismatch:
	{
		char a[256], b[256];

		return err_set(c->err, "cannot reshape %s (%lld elements) "
		    "into %s", shape_str(x->rank, x->dims, a, sizeof(a)),
		    (long long)x->nelem, infer >= 0 ? "a shape with -1" :
		    shape_str((int)n, dims, b, sizeof(b)));
	}
}

static int
run_flatten(struct op_ctx *c)
{
	const struct tensor *x;
	int64_t axis, dims[2];
	int k;

	if (need_inputs(c, 1) == -1)
		return -1;
	x = c->in[0];
	axis = attr_int(c->node, "axis", 1);
	if (axis < -x->rank || axis > x->rank)
		return err_set(c->err, "axis %lld is out of range for rank %d",
		    (long long)axis, x->rank);
	if (axis < 0)
		axis += x->rank;
	dims[0] = 1;
	dims[1] = 1;
	for (k = 0; k < x->rank; k++)
		if (mul_dim(dims[k >= axis], x->dims[k], &dims[k >= axis],
		    c->err) == -1)
			return -1;
	return copy_reshaped(c, x, 2, dims);
}

/* Axes from the attribute (before opset `since`) or from input 1. */
static int
read_axes(struct op_ctx *c, int since, int64_t **axes, int64_t *n)
{
	const int64_t *a;
	size_t cnt;

	if (c->opset >= since)
		return read_opt_ints(c, 1, "axes", axes, n);
	*axes = NULL;
	*n = -1;
	if (attr_find(c->node, "axes") == NULL)
		return 0;
	a = attr_ints(c->node, "axes", &cnt);
	if ((*axes = malloc((cnt > 0 ? cnt : 1) * sizeof(**axes))) == NULL)
		return err_nomem(c->err);
	copy_bytes(*axes, a, cnt * sizeof(**axes));
	*n = (int64_t)cnt;
	return 0;
}

static int
run_squeeze(struct op_ctx *c)
{
	const struct tensor *x;
	int64_t *axes, n, k, dims[TENSOR_MAX_RANK];
	int mark[TENSOR_MAX_RANK] = { 0 }, a, r = 0;

	if (need_inputs(c, 1) == -1)
		return -1;
	x = c->in[0];
	if (read_axes(c, 13, &axes, &n) == -1)
		return -1;
	/* Absent or empty axes squeeze every axis of size 1, as ORT does. */
	if (n <= 0) {
		for (k = 0; k < x->rank; k++)
			mark[k] = x->dims[k] == 1;
	}
	for (k = 0; k < n; k++) {
		if ((a = ops_axis(axes[k], x->rank, c->err)) == -1) {
			free(axes);
			return err_prefix(c->err, "axes");
		}
		if (x->dims[a] != 1) {
			free(axes);
			return err_set(c->err, "cannot squeeze axis %d of "
			    "size %lld", a, (long long)x->dims[a]);
		}
		mark[a] = 1;
	}
	free(axes);
	for (k = 0; k < x->rank; k++)
		if (!mark[k])
			dims[r++] = x->dims[k];
	return copy_reshaped(c, x, r, dims);
}

static int
run_unsqueeze(struct op_ctx *c)
{
	const struct tensor *x;
	int64_t *axes, n, k, dims[TENSOR_MAX_RANK];
	int mark[TENSOR_MAX_RANK] = { 0 }, a, r, j = 0;

	if (need_inputs(c, c->opset >= 13 ? 2 : 1) == -1)
		return -1;
	x = c->in[0];
	if (read_axes(c, 13, &axes, &n) == -1)
		return -1;
	if (n < 0)
		return err_set(c->err, "missing axes");
	if (x->rank + n > TENSOR_MAX_RANK) {
		free(axes);
		return err_set(c->err, "output rank %lld is more than %d",
		    (long long)(x->rank + n), TENSOR_MAX_RANK);
	}
	r = x->rank + (int)n;
	for (k = 0; k < n; k++) {
		if ((a = ops_axis(axes[k], r, c->err)) == -1) {
			free(axes);
			return err_prefix(c->err, "axes");
		}
		if (mark[a]) {
			free(axes);
			return err_set(c->err, "axis %d is repeated", a);
		}
		mark[a] = 1;
	}
	free(axes);
	for (k = 0; k < r; k++)
		dims[k] = mark[k] ? 1 : x->dims[j++];
	return copy_reshaped(c, x, r, dims);
}

/* ------------------------------------------------------------------ */
/* Transpose, DepthToSpace, SpaceToDepth */

static int
run_transpose(struct op_ctx *c)
{
	const struct tensor *x;
	const int64_t *perm;
	int64_t p[TENSOR_MAX_RANK], st[TENSOR_MAX_RANK], src[TENSOR_MAX_RANK];
	int64_t dims[TENSOR_MAX_RANK];
	int seen[TENSOR_MAX_RANK] = { 0 }, k, r;
	size_t cnt, esz;

	if (need_inputs(c, 1) == -1)
		return -1;
	x = c->in[0];
	r = x->rank;
	if (elem_size(x, &esz, c->err) == -1)
		return -1;
	perm = attr_ints(c->node, "perm", &cnt);
	if (perm == NULL || attr_find(c->node, "perm") == NULL) {
		for (k = 0; k < r; k++)
			p[k] = r - 1 - k;
	} else {
		if (cnt != (size_t)r)
			return err_set(c->err, "perm has %zu entries for rank "
			    "%d", cnt, r);
		for (k = 0; k < r; k++) {
			if (perm[k] < 0 || perm[k] >= r || seen[perm[k]])
				return err_set(c->err, "perm is not a "
				    "permutation of 0..%d", r - 1);
			seen[perm[k]] = 1;
			p[k] = perm[k];
		}
	}
	contiguous_strides(r, x->dims, st);
	for (k = 0; k < r; k++) {
		dims[k] = x->dims[p[k]];
		src[k] = st[p[k]];
	}
	if (tensor_alloc_uninit(&c->out[0], x->dtype, r, dims, c->err) == -1)
		return -1;
	copy_to_output(&c->out[0], x, 0, r, dims, src, esz, c->threads);
	return 0;
}

/*
 * Both ops are a reshape to 6-D, a transpose and a reshape back; the
 * view reads the 6-D input directly in output order.
 */
static int
space_depth(struct op_ctx *c, int to_space)
{
	const struct tensor *x;
	int64_t b, n, ch, h, w, cb, odims[4], vd[6], in6[6], st6[6], src[6];
	char mbuf[8];
	const char *mode;
	const int *perm;
	static const int dcr[6] = { 0, 3, 4, 1, 5, 2 };
	static const int crd[6] = { 0, 1, 4, 2, 5, 3 };
	static const int s2d[6] = { 0, 3, 5, 1, 2, 4 };
	size_t esz;
	int k;

	if (need_inputs(c, 1) == -1)
		return -1;
	x = c->in[0];
	if (elem_size(x, &esz, c->err) == -1)
		return -1;
	if (x->rank != 4)
		return err_set(c->err, "input must be 4-D, not rank %d",
		    x->rank);
	if (attr_find(c->node, "blocksize") == NULL)
		return err_set(c->err, "missing attribute blocksize");
	b = attr_int(c->node, "blocksize", 0);
	n = x->dims[0];
	ch = x->dims[1];
	h = x->dims[2];
	w = x->dims[3];
	if (b < 1 || b > 65536)
		return err_set(c->err, "blocksize %lld is out of range",
		    (long long)b);
	if (to_space) {
		if (ch % (b * b) != 0)
			return err_set(c->err, "channels %lld are not a "
			    "multiple of blocksize^2 %lld", (long long)ch,
			    (long long)(b * b));
		cb = ch / (b * b);
		mode = attr_string(c->node, "mode", "DCR", mbuf, sizeof(mbuf));
		if (strcmp(mode, "DCR") == 0) {
			perm = dcr;
			in6[0] = n, in6[1] = b, in6[2] = b, in6[3] = cb;
		} else if (strcmp(mode, "CRD") == 0) {
			perm = crd;
			in6[0] = n, in6[1] = cb, in6[2] = b, in6[3] = b;
		} else
			return err_set(c->err, "mode %s is not DCR or CRD",
			    mode);
		in6[4] = h, in6[5] = w;
		odims[0] = n, odims[1] = cb;
		if (mul_dim(h, b, &odims[2], c->err) == -1 ||
		    mul_dim(w, b, &odims[3], c->err) == -1)
			return -1;
	} else {
		if (h % b != 0 || w % b != 0)
			return err_set(c->err, "height %lld and width %lld "
			    "are not multiples of blocksize %lld",
			    (long long)h, (long long)w, (long long)b);
		perm = s2d;
		in6[0] = n, in6[1] = ch, in6[2] = h / b, in6[3] = b;
		in6[4] = w / b, in6[5] = b;
		odims[0] = n, odims[2] = h / b, odims[3] = w / b;
		if (mul_dim(ch, b * b, &odims[1], c->err) == -1)
			return -1;
	}
	if (tensor_alloc(&c->out[0], x->dtype, 4, odims, c->err) == -1)
		return -1;
	contiguous_strides(6, in6, st6);
	for (k = 0; k < 6; k++) {
		vd[k] = in6[perm[k]];
		src[k] = st6[perm[k]];
	}
	copy_to_output(&c->out[0], x, 0, 6, vd, src, esz, c->threads);
	return 0;
}

OPS_KERNEL(run_depth_to_space, space_depth, 1)
OPS_KERNEL(run_space_to_depth, space_depth, 0)

/* ------------------------------------------------------------------ */
/* Concat, Split, Slice */

static int
run_concat(struct op_ctx *c)
{
	const struct tensor *x, *f;
	int64_t dims[TENSOR_MAX_RANK], outer, o, oblk, blk, off;
	char *y;
	size_t esz;
	int i, k, axis;

	if (need_inputs(c, 1) == -1)
		return -1;
	for (i = 1; i < c->nin; i++)
		if (c->in[i] == NULL)
			return err_set(c->err, "input %d is missing", i);
	f = c->in[0];
	if (elem_size(f, &esz, c->err) == -1)
		return -1;
	if (attr_find(c->node, "axis") == NULL)
		return err_set(c->err, "missing attribute axis");
	if ((axis = ops_axis(attr_int(c->node, "axis", 0), f->rank,
	    c->err)) == -1)
		return -1;
	memcpy(dims, f->dims, sizeof(dims));
	for (i = 1; i < c->nin; i++) {
		x = c->in[i];
		if (x->dtype != f->dtype)
			return err_set(c->err, "input %d is %s, input 0 is %s",
			    i, ops_type_name(x->dtype),
			    ops_type_name(f->dtype));
		if (x->rank != f->rank)
			return err_set(c->err, "input %d has rank %d, input 0 "
			    "has rank %d", i, x->rank, f->rank);
		for (k = 0; k < f->rank; k++)
			if (k != axis && x->dims[k] != f->dims[k]) {
				char a[256], b[256];

				return err_set(c->err, "input %d has shape %s, "
				    "input 0 has %s", i, shape_str(x->rank,
				    x->dims, a, sizeof(a)), shape_str(f->rank,
				    f->dims, b, sizeof(b)));
			}
		if (x->dims[axis] > INT64_MAX - dims[axis])
			return err_set(c->err, "output dimension overflows");
		dims[axis] += x->dims[axis];
	}
	if (tensor_alloc_uninit(&c->out[0], f->dtype, f->rank, dims, c->err)
	    == -1)
		return -1;
	if (c->out[0].nelem == 0)
		return 0;
	y = c->out[0].data;
	outer = prod(dims, 0, axis);
	oblk = prod_bytes(dims, axis, f->rank, esz);
	off = 0;
	for (i = 0; i < c->nin; i++) {
		x = c->in[i];
		blk = prod_bytes(x->dims, axis, x->rank, esz);
		if (blk > 0)
			for (o = 0; o < outer; o++)
				memcpy(y + o * oblk + off,
				    (const char *)x->data + o * blk,
				    (size_t)blk);
		off += blk;
	}
	return 0;
}

static int
run_split(struct op_ctx *c)
{
	const struct tensor *x;
	const int64_t *sa;
	int64_t *sizes = NULL, n = -1, k, sum = 0, outer, o, blk, iblk, off;
	int64_t dims[TENSOR_MAX_RANK], d, chunk, num;
	size_t cnt, esz;
	int axis, i, rc = -1;

	if (need_inputs(c, 1) == -1)
		return -1;
	x = c->in[0];
	if (elem_size(x, &esz, c->err) == -1)
		return -1;
	if ((axis = ops_axis(attr_int(c->node, "axis", 0), x->rank,
	    c->err)) == -1)
		return -1;
	d = x->dims[axis];
	if (c->opset >= 13) {
		if (read_opt_ints(c, 1, "split", &sizes, &n) == -1)
			return -1;
	} else if (attr_find(c->node, "split") != NULL) {
		sa = attr_ints(c->node, "split", &cnt);
		if ((sizes = malloc((cnt > 0 ? cnt : 1) * sizeof(*sizes))) ==
		    NULL)
			return err_nomem(c->err);
		copy_bytes(sizes, sa, cnt * sizeof(*sizes));
		n = (int64_t)cnt;
	}
	if (n >= 0) {
		if (n != c->nout) {
			err_set(c->err, "split has %lld entries for %d outputs",
			    (long long)n, c->nout);
			goto out;
		}
		for (k = 0; k < n; k++) {
			if (sizes[k] < 0) {
				err_set(c->err, "split entry %lld is negative",
				    (long long)k);
				goto out;
			}
			if (sizes[k] > d - sum) {
				err_set(c->err, "split sums to more than %lld, "
				    "the size of axis %d", (long long)d, axis);
				goto out;
			}
			sum += sizes[k];
		}
		if (sum != d) {
			err_set(c->err, "split sums to %lld, axis %d has size "
			    "%lld", (long long)sum, axis, (long long)d);
			goto out;
		}
	} else {
		free(sizes);
		if ((sizes = malloc((size_t)c->nout * sizeof(*sizes))) == NULL)
			return err_nomem(c->err);
		if (c->opset >= 18 &&
		    attr_find(c->node, "num_outputs") != NULL) {
			num = attr_int(c->node, "num_outputs", 0);
			if (num != c->nout) {
				err_set(c->err, "num_outputs is %lld but the "
				    "node has %d outputs", (long long)num,
				    c->nout);
				goto out;
			}
			/* Equal chunks, the last one smaller. */
			chunk = d / num + (d % num != 0);
			if (chunk * (num - 1) > d) {
				err_set(c->err, "axis %d of size %lld cannot "
				    "be split into %lld parts", axis,
				    (long long)d, (long long)num);
				goto out;
			}
			for (k = 0; k < num; k++)
				sizes[k] = k < num - 1 ? chunk :
				    d - chunk * (num - 1);
		} else {
			if (d % c->nout != 0) {
				err_set(c->err, "axis %d of size %lld does not "
				    "split evenly into %d outputs", axis,
				    (long long)d, c->nout);
				goto out;
			}
			for (k = 0; k < c->nout; k++)
				sizes[k] = d / c->nout;
		}
	}
	memcpy(dims, x->dims, sizeof(dims));
	outer = prod(x->dims, 0, axis);
	iblk = prod_bytes(x->dims, axis, x->rank, esz);
	off = 0;
	for (i = 0; i < c->nout; i++) {
		dims[axis] = sizes[i];
		if (tensor_alloc(&c->out[i], x->dtype, x->rank, dims,
		    c->err) == -1)
			goto out;
		blk = prod_bytes(dims, axis, x->rank, esz);
		if (blk > 0)
			for (o = 0; o < outer; o++)
				memcpy((char *)c->out[i].data + o * blk,
				    (const char *)x->data + o * iblk + off,
				    (size_t)blk);
		off += blk;
	}
	rc = 0;
out:
	free(sizes);
	return rc;
}

/*
 * Effective start and element count of one sliced axis, following the
 * spec's clamping: starts in [0, dim] forward and [0, dim-1] backward,
 * ends in [0, dim] forward and [-1, dim-1] backward.
 */
static void
slice_axis(int64_t dim, int64_t start, int64_t end, int64_t step,
    int64_t *first, int64_t *count)
{
	uint64_t diff, ustep;

	/* Clamp before adding dim so that INT64_MIN cannot overflow. */
	if (start < 0)
		start = start < -dim ? 0 : start + dim;
	if (end < 0)
		end = end < -dim - 1 ? -1 : end + dim;
	if (step > 0) {
		start = start > dim ? dim : start < 0 ? 0 : start;
		end = end > dim ? dim : end < 0 ? 0 : end;
		diff = end > start ? (uint64_t)(end - start) : 0;
		ustep = (uint64_t)step;
	} else {
		start = start > dim - 1 ? dim - 1 : start < 0 ? 0 : start;
		end = end > dim - 1 ? dim - 1 : end < -1 ? -1 : end;
		diff = start > end ? (uint64_t)(start - end) : 0;
		ustep = (uint64_t)0 - (uint64_t)step;
	}
	*first = start;
	*count = (int64_t)(diff / ustep + (diff % ustep != 0));
}

static int
run_slice(struct op_ctx *c)
{
	const struct tensor *x;
	int64_t *starts = NULL, *ends = NULL, *axes = NULL, *steps = NULL;
	int64_t ns, ne, na = -1, nst = -1, k, first, cnt, off = 0;
	int64_t st[TENSOR_MAX_RANK], dims[TENSOR_MAX_RANK];
	int64_t src[TENSOR_MAX_RANK], step;
	int seen[TENSOR_MAX_RANK] = { 0 }, a, rc = -1;
	const int64_t *v;
	size_t cnt_a, esz;

	if (need_inputs(c, c->opset >= 10 ? 3 : 1) == -1)
		return -1;
	x = c->in[0];
	if (elem_size(x, &esz, c->err) == -1)
		return -1;
	if (c->opset >= 10) {
		if (read_opt_ints(c, 1, "starts", &starts, &ns) == -1 ||
		    read_opt_ints(c, 2, "ends", &ends, &ne) == -1 ||
		    read_opt_ints(c, 3, "axes", &axes, &na) == -1 ||
		    read_opt_ints(c, 4, "steps", &steps, &nst) == -1)
			goto out;
	} else {
		const char *names[3] = { "starts", "ends", "axes" };
		int64_t **dst[3] = { &starts, &ends, &axes };
		int64_t *cnts[3] = { &ns, &ne, &na };
		int i;

		for (i = 0; i < 3; i++) {
			if (attr_find(c->node, names[i]) == NULL) {
				if (i < 2) {
					err_set(c->err, "missing attribute %s",
					    names[i]);
					goto out;
				}
				continue;
			}
			v = attr_ints(c->node, names[i], &cnt_a);
			if ((*dst[i] = malloc((cnt_a > 0 ? cnt_a : 1) *
			    sizeof(int64_t))) == NULL) {
				err_nomem(c->err);
				goto out;
			}
			copy_bytes(*dst[i], v, cnt_a * sizeof(int64_t));
			*cnts[i] = (int64_t)cnt_a;
		}
	}
	if (ns != ne) {
		err_set(c->err, "starts has %lld entries, ends %lld",
		    (long long)ns, (long long)ne);
		goto out;
	}
	if ((na >= 0 && na != ns) || (nst >= 0 && nst != ns)) {
		err_set(c->err, "axes and steps must have as many entries as "
		    "starts (%lld)", (long long)ns);
		goto out;
	}
	if (na < 0 && ns > x->rank) {
		err_set(c->err, "starts has %lld entries for rank %d",
		    (long long)ns, x->rank);
		goto out;
	}
	contiguous_strides(x->rank, x->dims, st);
	for (k = 0; k < x->rank; k++) {
		dims[k] = x->dims[k];
		src[k] = st[k];
	}
	for (k = 0; k < ns; k++) {
		if (na >= 0) {
			if ((a = ops_axis(axes[k], x->rank, c->err)) == -1) {
				err_prefix(c->err, "axes");
				goto out;
			}
		} else
			a = (int)k;
		if (seen[a]) {
			err_set(c->err, "axis %d is repeated", a);
			goto out;
		}
		seen[a] = 1;
		step = nst >= 0 ? steps[k] : 1;
		if (step == 0) {
			err_set(c->err, "step for axis %d is zero", a);
			goto out;
		}
		slice_axis(x->dims[a], starts[k], ends[k], step, &first, &cnt);
		dims[a] = cnt;
		src[a] = st[a] * step;
		off += first * st[a];
	}
	if (tensor_alloc_uninit(&c->out[0], x->dtype, x->rank, dims, c->err)
	    == -1)
		goto out;
	if (c->out[0].nelem > 0)
		copy_to_output(&c->out[0], x, off, x->rank, dims, src, esz,
		    c->threads);
	rc = 0;
out:
	free(starts);
	free(ends);
	free(axes);
	free(steps);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Gather, GatherElements, GatherND */

static int
run_gather(struct op_ctx *c)
{
	const struct tensor *x, *ind;
	int64_t dims[TENSOR_MAX_RANK], *idx, outer, n, blk, o, j, ni;
	char *y;
	size_t esz;
	int axis, r, k;

	if (need_inputs(c, 2) == -1)
		return -1;
	x = c->in[0];
	ind = c->in[1];
	if (elem_size(x, &esz, c->err) == -1)
		return -1;
	if ((axis = ops_axis(attr_int(c->node, "axis", 0), x->rank,
	    c->err)) == -1)
		return -1;
	r = x->rank - 1 + ind->rank;
	if (r > TENSOR_MAX_RANK)
		return err_set(c->err, "output rank %d is more than %d", r,
		    TENSOR_MAX_RANK);
	n = x->dims[axis];
	if (read_indices(ind, n, "indices", &idx, c->err) == -1)
		return -1;
	r = 0;
	for (k = 0; k < axis; k++)
		dims[r++] = x->dims[k];
	for (k = 0; k < ind->rank; k++)
		dims[r++] = ind->dims[k];
	for (k = axis + 1; k < x->rank; k++)
		dims[r++] = x->dims[k];
	if (tensor_alloc(&c->out[0], x->dtype, r, dims, c->err) == -1) {
		free(idx);
		return -1;
	}
	y = c->out[0].data;
	outer = prod(x->dims, 0, axis);
	blk = prod_bytes(x->dims, axis + 1, x->rank, esz);
	ni = ind->nelem;
	if (c->out[0].nelem > 0)
		for (o = 0; o < outer; o++)
			for (j = 0; j < ni; j++)
				memcpy(y + (o * ni + j) * blk,
				    (const char *)x->data + (o * n + idx[j]) *
				    blk, (size_t)blk);
	free(idx);
	return 0;
}

/*
 * Walk every position of `ind` (the shape of indices and updates), giving
 * the flat offset into data with the axis coordinate left out. Used by
 * GatherElements and ScatterElements.
 */
struct elem_walk {
	int rank, axis;
	int64_t dims[TENSOR_MAX_RANK];
	int64_t dstride[TENSOR_MAX_RANK];
	int64_t idx[TENSOR_MAX_RANK];
	int64_t off;
};

static int
elem_walk_init(struct elem_walk *w, const struct tensor *data,
    const struct tensor *ind, int axis, struct err *e)
{
	int k;

	if (ind->rank != data->rank)
		return err_set(e, "indices have rank %d, data rank %d",
		    ind->rank, data->rank);
	for (k = 0; k < data->rank; k++)
		if (k != axis && ind->dims[k] > data->dims[k]) {
			char a[256], b[256];

			return err_set(e, "indices shape %s exceeds data "
			    "shape %s", shape_str(ind->rank, ind->dims, a,
			    sizeof(a)), shape_str(data->rank, data->dims, b,
			    sizeof(b)));
		}
	w->rank = data->rank;
	w->axis = axis;
	memcpy(w->dims, ind->dims, sizeof(w->dims));
	contiguous_strides(data->rank, data->dims, w->dstride);
	memset(w->idx, 0, sizeof(w->idx));
	w->off = 0;
	return 0;
}

static void
elem_walk_next(struct elem_walk *w)
{
	int k;

	for (k = w->rank - 1; k >= 0; k--) {
		if (k != w->axis)
			w->off += w->dstride[k];
		if (++w->idx[k] < w->dims[k])
			return;
		if (k != w->axis)
			w->off -= w->idx[k] * w->dstride[k];
		w->idx[k] = 0;
	}
}

static int
run_gather_elements(struct op_ctx *c)
{
	const struct tensor *x, *ind;
	struct elem_walk w;
	int64_t *idx, i;
	char *y;
	size_t esz;
	int axis;

	if (need_inputs(c, 2) == -1)
		return -1;
	x = c->in[0];
	ind = c->in[1];
	if (elem_size(x, &esz, c->err) == -1)
		return -1;
	if ((axis = ops_axis(attr_int(c->node, "axis", 0), x->rank,
	    c->err)) == -1)
		return -1;
	if (elem_walk_init(&w, x, ind, axis, c->err) == -1)
		return -1;
	if (read_indices(ind, x->dims[axis], "indices", &idx, c->err) == -1)
		return -1;
	if (tensor_alloc(&c->out[0], x->dtype, ind->rank, ind->dims,
	    c->err) == -1) {
		free(idx);
		return -1;
	}
	y = c->out[0].data;
	for (i = 0; i < ind->nelem; i++) {
		memcpy(y + i * (int64_t)esz, (const char *)x->data +
		    (w.off + idx[i] * w.dstride[axis]) * (int64_t)esz, esz);
		elem_walk_next(&w);
	}
	free(idx);
	return 0;
}

/*
 * Checks shared by GatherND and ScatterND: indices hold tuples of m
 * coordinates into data (after b batch dimensions); each tuple becomes a
 * flat element offset into its batch's part of data.
 */
static int
nd_offsets(const struct tensor *x, const struct tensor *ind, int b,
    int64_t **offs, int64_t *ntuples, int64_t *m, struct err *e)
{
	int64_t st[TENSOR_MAX_RANK], nt, t, j, v, *o;
	int q = ind->rank;

	*offs = NULL;
	if (check_index_type(ind, "indices", e) == -1)
		return -1;
	if (x->rank < 1 || q < 1)
		return err_set(e, "data and indices must have rank >= 1");
	*m = ind->dims[q - 1];
	if (*m < 1 || *m > x->rank - b)
		return err_set(e, "last indices dimension %lld is out of range "
		    "1..%d", (long long)*m, x->rank - b);
	contiguous_strides(x->rank, x->dims, st);
	nt = *m > 0 ? ind->nelem / *m : 0;
	*ntuples = nt;
	if (nt == 0)
		return 0;
	if ((o = malloc((size_t)nt * sizeof(*o))) == NULL)
		return err_nomem(e);
	for (t = 0; t < nt; t++) {
		o[t] = 0;
		for (j = 0; j < *m; j++) {
			int64_t dim = x->dims[b + j];

			v = index_at(ind, t * *m + j);
			if (v < -dim || v >= dim) {
				free(o);
				return err_set(e, "index %lld is out of range "
				    "for axis %lld of size %lld", (long long)v,
				    (long long)(b + j), (long long)dim);
			}
			o[t] += (v < 0 ? v + dim : v) * st[b + j];
		}
	}
	*offs = o;
	return 0;
}

static int
run_gather_nd(struct op_ctx *c)
{
	const struct tensor *x, *ind;
	int64_t dims[TENSOR_MAX_RANK], *offs, nt, m, blk, nb, per, t, bsz;
	size_t esz;
	int b, k, r = 0, q;

	if (need_inputs(c, 2) == -1)
		return -1;
	x = c->in[0];
	ind = c->in[1];
	q = ind->rank;
	if (elem_size(x, &esz, c->err) == -1)
		return -1;
	b = c->opset >= 12 ? (int)attr_int(c->node, "batch_dims", 0) : 0;
	if (b < 0 || b >= x->rank || b >= q)
		return err_set(c->err, "batch_dims %d is out of range", b);
	for (k = 0; k < b; k++)
		if (x->dims[k] != ind->dims[k])
			return err_set(c->err, "batch dimension %d differs: "
			    "data %lld, indices %lld", k,
			    (long long)x->dims[k], (long long)ind->dims[k]);
	if (nd_offsets(x, ind, b, &offs, &nt, &m, c->err) == -1)
		return -1;
	for (k = 0; k < q - 1; k++)
		dims[r++] = ind->dims[k];
	for (k = b + (int)m; k < x->rank; k++) {
		if (r >= TENSOR_MAX_RANK) {
			free(offs);
			return err_set(c->err, "output rank is more than %d",
			    TENSOR_MAX_RANK);
		}
		dims[r++] = x->dims[k];
	}
	if (tensor_alloc(&c->out[0], x->dtype, r, dims, c->err) == -1) {
		free(offs);
		return -1;
	}
	blk = prod(x->dims, b + (int)m, x->rank);
	nb = prod(x->dims, 0, b);
	bsz = prod(x->dims, b, x->rank);
	per = nb > 0 ? nt / nb : 0;
	if (blk > 0)
		for (t = 0; t < nt; t++)
			memcpy((char *)c->out[0].data + t * blk * (int64_t)esz,
			    (const char *)x->data + ((per > 0 ? t / per : 0) *
			    bsz + offs[t]) * (int64_t)esz, (size_t)blk * esz);
	free(offs);
	return 0;
}

/* ------------------------------------------------------------------ */
/* ScatterElements, ScatterND */

enum reduction { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN };

static int
read_reduction(struct op_ctx *c, int *red)
{
	char b[16];
	const char *buf;

	buf = attr_string(c->node, "reduction", "none", b, sizeof(b));
	if (strcmp(buf, "none") == 0)
		*red = RED_NONE;
	else if (strcmp(buf, "add") == 0 && c->opset >= 16)
		*red = RED_ADD;
	else if (strcmp(buf, "mul") == 0 && c->opset >= 16)
		*red = RED_MUL;
	else if (strcmp(buf, "max") == 0 && c->opset >= 18)
		*red = RED_MAX;
	else if (strcmp(buf, "min") == 0 && c->opset >= 18)
		*red = RED_MIN;
	else
		return err_set(c->err, "reduction %s is not supported", buf);
	return 0;
}

#define RED_FLOAT(T)							\
	do {								\
		T a, b;							\
									\
		memcpy(&a, d, sizeof(a));				\
		memcpy(&b, s, sizeof(b));				\
		a = red == RED_ADD ? a + b : red == RED_MUL ? a * b :	\
		    red == RED_MAX ? (a > b ? a : b) : (a < b ? a : b);	\
		memcpy(d, &a, sizeof(a));				\
	} while (0)
/* Integers wrap like the hardware does, without signed overflow. */
#define RED_INT(T, U)							\
	do {								\
		T a, b;							\
									\
		memcpy(&a, d, sizeof(a));				\
		memcpy(&b, s, sizeof(b));				\
		a = red == RED_ADD ? (T)((U)a + (U)b) :			\
		    red == RED_MUL ? (T)((U)a * (U)b) :			\
		    red == RED_MAX ? (a > b ? a : b) : (a < b ? a : b);	\
		memcpy(d, &a, sizeof(a));				\
	} while (0)

static void
reduce_into(char *d, const char *s, int dtype, int red, size_t esz)
{
	uint16_t h;
	float a, b;

	switch (red == RED_NONE ? DT_UNDEFINED : dtype) {
	case DT_FLOAT:
		RED_FLOAT(float);
		break;
	case DT_DOUBLE:
		RED_FLOAT(double);
		break;
	case DT_INT8:
		RED_INT(int8_t, uint8_t);
		break;
	case DT_INT16:
		RED_INT(int16_t, uint16_t);
		break;
	case DT_INT32:
		RED_INT(int32_t, uint32_t);
		break;
	case DT_INT64:
		RED_INT(int64_t, uint64_t);
		break;
	case DT_UINT8:
		RED_INT(uint8_t, uint8_t);
		break;
	case DT_UINT16:
		RED_INT(uint16_t, uint16_t);
		break;
	case DT_UINT32:
		RED_INT(uint32_t, uint32_t);
		break;
	case DT_UINT64:
		RED_INT(uint64_t, uint64_t);
		break;
	case DT_BOOL:
		/* add and max are logical or, mul and min logical and. */
		*d = red == RED_ADD || red == RED_MAX ? (*d || *s) :
		    (*d && *s);
		break;
	case DT_FLOAT16:
	case DT_BFLOAT16:
		memcpy(&h, d, 2);
		a = dtype == DT_FLOAT16 ? f16_to_f32(h) : bf16_to_f32(h);
		memcpy(&h, s, 2);
		b = dtype == DT_FLOAT16 ? f16_to_f32(h) : bf16_to_f32(h);
		a = red == RED_ADD ? a + b : red == RED_MUL ? a * b :
		    red == RED_MAX ? (a > b ? a : b) : (a < b ? a : b);
		h = dtype == DT_FLOAT16 ? f32_to_f16(a) : f32_to_bf16(a);
		memcpy(d, &h, 2);
		break;
	default:
		memcpy(d, s, esz);
		break;
	}
}

static int
check_reducible(int dtype, int red, struct err *e)
{
	if (red == RED_NONE)
		return 0;
	switch (dtype) {
	case DT_FLOAT: case DT_DOUBLE: case DT_FLOAT16: case DT_BFLOAT16:
	case DT_INT8: case DT_INT16: case DT_INT32: case DT_INT64:
	case DT_UINT8: case DT_UINT16: case DT_UINT32: case DT_UINT64:
	case DT_BOOL:
		return 0;
	}
	return err_set(e, "reduction on %s is not supported",
	    ops_type_name(dtype));
}

static int
run_scatter_elements(struct op_ctx *c)
{
	const struct tensor *x, *ind, *upd;
	struct elem_walk w;
	int64_t *idx, i;
	char *y;
	size_t esz;
	int axis, red = RED_NONE;

	if (need_inputs(c, 3) == -1)
		return -1;
	x = c->in[0];
	ind = c->in[1];
	upd = c->in[2];
	if (elem_size(x, &esz, c->err) == -1)
		return -1;
	if (strcmp(c->node->op_type, "Scatter") != 0 &&
	    read_reduction(c, &red) == -1)
		return -1;
	if (check_reducible(x->dtype, red, c->err) == -1)
		return -1;
	if (upd->dtype != x->dtype)
		return err_set(c->err, "updates are %s, data %s",
		    ops_type_name(upd->dtype), ops_type_name(x->dtype));
	if (!shape_equal(ind, upd))
		return err_set(c->err, "indices and updates differ in shape");
	if ((axis = ops_axis(attr_int(c->node, "axis", 0), x->rank,
	    c->err)) == -1)
		return -1;
	if (elem_walk_init(&w, x, ind, axis, c->err) == -1)
		return -1;
	if (read_indices(ind, x->dims[axis], "indices", &idx, c->err) == -1)
		return -1;
	if (tensor_copy(&c->out[0], x, c->err) == -1) {
		free(idx);
		return -1;
	}
	y = c->out[0].data;
	for (i = 0; i < ind->nelem; i++) {
		reduce_into(y + (w.off + idx[i] * w.dstride[axis]) *
		    (int64_t)esz, (const char *)upd->data + i * (int64_t)esz,
		    x->dtype, red, esz);
		elem_walk_next(&w);
	}
	free(idx);
	return 0;
}

static int
run_scatter_nd(struct op_ctx *c)
{
	const struct tensor *x, *ind, *upd;
	int64_t *offs, nt, m, blk, t, j, dims[TENSOR_MAX_RANK];
	size_t esz;
	char *y;
	int red = RED_NONE, k, r = 0;

	if (need_inputs(c, 3) == -1)
		return -1;
	x = c->in[0];
	ind = c->in[1];
	upd = c->in[2];
	if (elem_size(x, &esz, c->err) == -1)
		return -1;
	if (read_reduction(c, &red) == -1 ||
	    check_reducible(x->dtype, red, c->err) == -1)
		return -1;
	if (upd->dtype != x->dtype)
		return err_set(c->err, "updates are %s, data %s",
		    ops_type_name(upd->dtype), ops_type_name(x->dtype));
	if (nd_offsets(x, ind, 0, &offs, &nt, &m, c->err) == -1)
		return -1;
	for (k = 0; k < ind->rank - 1; k++)
		dims[r++] = ind->dims[k];
	for (k = (int)m; k < x->rank && r < TENSOR_MAX_RANK; k++)
		dims[r++] = x->dims[k];
	if (ind->rank - 1 + x->rank - m != upd->rank || upd->rank != r ||
	    memcmp(dims, upd->dims, (size_t)r * sizeof(dims[0])) != 0) {
		free(offs);
		return err_set(c->err, "updates shape does not match indices "
		    "and data");
	}
	if (tensor_copy(&c->out[0], x, c->err) == -1) {
		free(offs);
		return -1;
	}
	y = c->out[0].data;
	blk = prod(x->dims, (int)m, x->rank);
	for (t = 0; t < nt; t++) {
		if (red == RED_NONE) {
			copy_bytes(y + offs[t] * (int64_t)esz,
			    (const char *)upd->data + t * blk * (int64_t)esz,
			    (size_t)blk * esz);
			continue;
		}
		for (j = 0; j < blk; j++)
			reduce_into(y + (offs[t] + j) * (int64_t)esz,
			    (const char *)upd->data + (t * blk + j) *
			    (int64_t)esz, x->dtype, red, esz);
	}
	free(offs);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Expand, Tile, Pad */

static int
run_expand(struct op_ctx *c)
{
	const struct tensor *x;
	int64_t shape[TENSOR_MAX_RANK], dims[TENSOR_MAX_RANK];
	int64_t st[TENSOR_MAX_RANK], src[TENSOR_MAX_RANK];
	int sr, r, k, kk;
	size_t esz;

	if (need_inputs(c, 2) == -1)
		return -1;
	x = c->in[0];
	if (elem_size(x, &esz, c->err) == -1)
		return -1;
	if (read_shape_input(c, 1, shape, &sr) == -1)
		return -1;
	if (ops_broadcast_shape(x->rank, x->dims, sr, shape, &r, dims,
	    c->err) == -1)
		return -1;
	if (tensor_alloc(&c->out[0], x->dtype, r, dims, c->err) == -1)
		return -1;
	contiguous_strides(x->rank, x->dims, st);
	for (k = 0; k < r; k++) {
		kk = k - (r - x->rank);
		src[k] = kk < 0 || x->dims[kk] == 1 ? 0 : st[kk];
	}
	copy_to_output(&c->out[0], x, 0, r, dims, src, esz, c->threads);
	return 0;
}

static int
run_tile(struct op_ctx *c)
{
	const struct tensor *x, *rt;
	int64_t *rep, n, k, dims[TENSOR_MAX_RANK], st[TENSOR_MAX_RANK];
	int64_t vd[VIEW_MAX], vs[VIEW_MAX];
	size_t esz;

	if (need_inputs(c, 2) == -1)
		return -1;
	x = c->in[0];
	rt = c->in[1];
	if (elem_size(x, &esz, c->err) == -1)
		return -1;
	if (rt->dtype != DT_INT64)
		return err_set(c->err, "repeats must be int64, not %s",
		    ops_type_name(rt->dtype));
	if (rt->rank != 1 || rt->nelem != x->rank)
		return err_set(c->err, "repeats must be 1-D with %d entries",
		    x->rank);
	if (ops_read_ints(rt, &rep, &n, c->err) == -1)
		return -1;
	for (k = 0; k < n; k++) {
		if (rep[k] < 0) {
			err_set(c->err, "repeats entry %lld is negative",
			    (long long)k);
			free(rep);
			return -1;
		}
		if (x->dims[k] > 0 && rep[k] > INT64_MAX / x->dims[k]) {
			free(rep);
			return err_set(c->err, "output is too large");
		}
		dims[k] = x->dims[k] * rep[k];
	}
	if (tensor_alloc(&c->out[0], x->dtype, x->rank, dims, c->err) == -1) {
		free(rep);
		return -1;
	}
	/* The output as (repeat, dim) pairs; the repeat axes read stride 0. */
	contiguous_strides(x->rank, x->dims, st);
	for (k = 0; k < n; k++) {
		vd[2 * k] = rep[k];
		vd[2 * k + 1] = x->dims[k];
		vs[2 * k] = 0;
		vs[2 * k + 1] = st[k];
	}
	free(rep);
	if (c->out[0].nelem > 0)
		copy_to_output(&c->out[0], x, 0, 2 * (int)n, vd, vs, esz,
		    c->threads);
	return 0;
}

/* Source index for output position o of a padded axis (non-constant modes). */
static int64_t
pad_source(int64_t o, int64_t before, int64_t dim, int mode)
{
	int64_t i = o - before, period;

	switch (mode) {
	case 1:		/* reflect */
		if (dim == 1)
			return 0;
		period = 2 * (dim - 1);
		i %= period;
		if (i < 0)
			i += period;
		return i >= dim ? period - i : i;
	case 2:		/* edge */
		return i < 0 ? 0 : i >= dim ? dim - 1 : i;
	default:	/* wrap */
		i %= dim;
		return i < 0 ? i + dim : i;
	}
}

static int
pad_modes(struct op_ctx *c, const struct tensor *x, const int64_t *pb,
    int mode, size_t esz)
{
	struct tensor *y = &c->out[0];
	int64_t *map[TENSOR_MAX_RANK] = { 0 }, st[TENSOR_MAX_RANK];
	int64_t idx[TENSOR_MAX_RANK] = { 0 }, rows, row, j, so, n;
	char *d;
	int k, r = x->rank, l = r - 1;

	if (r == 0) {
		memcpy(y->data, x->data, esz);
		return 0;
	}
	for (k = 0; k < r; k++) {
		if (x->dims[k] == 0) {
			err_set(c->err, "cannot pad an empty axis "
			    "except in constant mode");
			goto fail;
		}
		if ((map[k] = malloc((size_t)y->dims[k] * sizeof(int64_t))) ==
		    NULL) {
			err_nomem(c->err);
			goto fail;
		}
		for (j = 0; j < y->dims[k]; j++)
			map[k][j] = pad_source(j, pb[k], x->dims[k], mode);
	}
	contiguous_strides(r, x->dims, st);
	rows = y->nelem / y->dims[l];
	n = y->dims[l];
	d = y->data;
	for (row = 0; row < rows; row++) {
		so = 0;
		for (k = 0; k < l; k++)
			so += map[k][idx[k]] * st[k];
		for (j = 0; j < n; j++, d += esz)
			memcpy(d, (const char *)x->data + (so + map[l][j]) *
			    (int64_t)esz, esz);
		for (k = l - 1; k >= 0; k--) {
			if (++idx[k] < y->dims[k])
				break;
			idx[k] = 0;
		}
	}
	for (k = 0; k < r; k++)
		free(map[k]);
	return 0;
fail:
	for (k = 0; k < r; k++)
		free(map[k]);
	return -1;
}

/*
 * Output 0 as x padded by pb/pe per axis (negative values crop), in the
 * given mode (0 constant with the element bytes in value, 1 reflect,
 * 2 edge, 3 wrap).
 */
static int
pad_apply(struct op_ctx *c, const struct tensor *x, const int64_t *pb,
    const int64_t *pe, int mode, const void *value, size_t esz)
{
	int64_t dims[TENSOR_MAX_RANK], st[TENSOR_MAX_RANK];
	int64_t ost[TENSOR_MAX_RANK], soff = 0, doff = 0, s0, d0, n;
	struct view v;
	int k, r = x->rank;

	for (k = 0; k < r; k++) {
		/* Pads are bounded by the caller: only a huge dim overflows. */
		if (pb[k] > INT64_MAX - x->dims[k] ||
		    (pe[k] > 0 && x->dims[k] + pb[k] > INT64_MAX - pe[k]))
			return err_set(c->err, "output dimension overflows");
		dims[k] = x->dims[k] + pb[k] + pe[k];
		if (dims[k] < 0)
			return err_set(c->err, "pads shrink axis %d of size "
			    "%lld below zero", k, (long long)x->dims[k]);
	}
	if (tensor_alloc(&c->out[0], x->dtype, r, dims, c->err) == -1)
		return -1;
	if (c->out[0].nelem == 0)
		return 0;
	if (mode != 0) {
		if (pad_modes(c, x, pb, mode, esz) == -1) {
			tensor_release(&c->out[0]);
			return -1;
		}
		return 0;
	}
	if (!all_zero_bytes(value, esz))
		fill_elems(c->out[0].data, value, c->out[0].nelem, esz);
	/* Copy the part of x that survives (negative pads crop). */
	contiguous_strides(r, x->dims, st);
	contiguous_strides(r, dims, ost);
	v.rank = 0;
	for (k = 0; k < r; k++) {
		s0 = pb[k] < 0 ? -pb[k] : 0;
		d0 = pb[k] > 0 ? pb[k] : 0;
		n = x->dims[k] - s0 - (pe[k] < 0 ? -pe[k] : 0);
		if (n <= 0)
			return 0;
		soff += s0 * st[k];
		doff += d0 * ost[k];
		view_add(&v, n, st[k], ost[k]);
	}
	copy_view((char *)c->out[0].data + doff * (int64_t)esz,
	    (const char *)x->data + soff * (int64_t)esz, &v, esz, c->threads);
	return 0;
}

/* Axes from input i (int32/int64, no repeats), or all axes when absent. */
static int
read_axes_input(struct op_ctx *c, int i, int rank, int *ax, int64_t *na)
{
	int64_t *axes, k;
	int seen[TENSOR_MAX_RANK] = { 0 };

	if (read_opt_ints(c, i, "axes", &axes, na) == -1)
		return -1;
	if (*na < 0) {
		*na = rank;
		for (k = 0; k < rank; k++)
			ax[k] = (int)k;
		return 0;
	}
	if (*na > rank) {
		free(axes);
		return err_set(c->err, "axes has %lld entries for rank %d",
		    (long long)*na, rank);
	}
	for (k = 0; k < *na; k++) {
		if ((ax[k] = ops_axis(axes[k], rank, c->err)) == -1) {
			free(axes);
			return err_prefix(c->err, "axes");
		}
		if (seen[ax[k]]++) {
			free(axes);
			return err_set(c->err, "axis %d is repeated", ax[k]);
		}
	}
	free(axes);
	return 0;
}

static int
run_pad(struct op_ctx *c)
{
	const struct tensor *x, *cv;
	struct tensor tmp = { 0 };
	int64_t pb[TENSOR_MAX_RANK] = { 0 }, pe[TENSOR_MAX_RANK] = { 0 };
	int64_t *pads = NULL, np, na, k, b, e;
	int ax[TENSOR_MAX_RANK], r, mode, rc = -1;
	unsigned char value[16] = { 0 };
	const int64_t *pa;
	char mbuf[16];
	const char *ms;
	size_t esz, cnt;

	if (need_inputs(c, c->opset >= 11 ? 2 : 1) == -1)
		return -1;
	x = c->in[0];
	r = x->rank;
	if (elem_size(x, &esz, c->err) == -1)
		return -1;
	if (esz > sizeof(value))
		return err_set(c->err, "element type %s is not supported",
		    ops_type_name(x->dtype));
	ms = attr_string(c->node, "mode", "constant", mbuf, sizeof(mbuf));
	if (strcmp(ms, "constant") == 0)
		mode = 0;
	else if (strcmp(ms, "reflect") == 0)
		mode = 1;
	else if (strcmp(ms, "edge") == 0)
		mode = 2;
	else if (strcmp(ms, "wrap") == 0 && c->opset >= 19)
		mode = 3;
	else
		return err_set(c->err, "mode %s is not supported", ms);
	if (c->opset >= 18) {
		if (read_axes_input(c, 3, r, ax, &na) == -1)
			return -1;
	} else {
		na = r;
		for (k = 0; k < r; k++)
			ax[k] = (int)k;
	}
	if (c->opset >= 11) {
		if (read_opt_ints(c, 1, "pads", &pads, &np) == -1)
			return -1;
	} else {
		if (attr_find(c->node, "pads") == NULL)
			return err_set(c->err, "missing attribute pads");
		pa = attr_ints(c->node, "pads", &cnt);
		pads = malloc((cnt > 0 ? cnt : 1) * sizeof(*pads));
		if (pads == NULL)
			return err_nomem(c->err);
		copy_bytes(pads, pa, cnt * sizeof(*pads));
		np = (int64_t)cnt;
	}
	if (np != 2 * na) {
		err_set(c->err, "pads has %lld entries, expected %lld",
		    (long long)np, (long long)(2 * na));
		goto out;
	}
	for (k = 0; k < na; k++) {
		b = pads[k];
		e = pads[k + na];
		/* Bound the pads so that dim + b + e is easy to check. */
		if (b > (INT64_MAX >> 2) || b < -(INT64_MAX >> 2) ||
		    e > (INT64_MAX >> 2) || e < -(INT64_MAX >> 2)) {
			err_set(c->err, "pads for axis %d are too large",
			    ax[k]);
			goto out;
		}
		pb[ax[k]] = b;
		pe[ax[k]] = e;
	}
	/* The fill value, as the bytes of one element of x's type. */
	if (mode == 0) {
		cv = c->opset >= 11 ? ops_input(c, 2) : NULL;
		if (cv != NULL && cv->nelem > 0) {
			if (cv->dtype != x->dtype) {
				err_set(c->err, "constant_value is %s, data %s",
				    ops_type_name(cv->dtype),
				    ops_type_name(x->dtype));
				goto out;
			}
			memcpy(value, cv->data, esz);
		} else if (c->opset < 11) {
			if (tensor_alloc(&tmp, x->dtype, 0, NULL, c->err) == -1)
				goto out;
			tensor_set(&tmp, 0, attr_float(c->node, "value", 0));
			memcpy(value, tmp.data, esz);
			tensor_release(&tmp);
		}
	}
	rc = pad_apply(c, x, pb, pe, mode, value, esz);
out:
	free(pads);
	return rc;
}

/*
 * CenterCropPad: each listed axis cropped or zero-padded to the given
 * size around its centre (the extra element, if odd, at the end).
 */
static int
run_center_crop_pad(struct op_ctx *c)
{
	const struct tensor *x;
	const int64_t *aa;
	int64_t pb[TENSOR_MAX_RANK] = { 0 }, pe[TENSOR_MAX_RANK] = { 0 };
	int64_t *shape, n, k, d, diff, axes[TENSOR_MAX_RANK];
	int ax[TENSOR_MAX_RANK], seen[TENSOR_MAX_RANK] = { 0 }, r;
	unsigned char zero[16] = { 0 };
	size_t esz, cnt;

	if (need_inputs(c, 2) == -1)
		return -1;
	x = c->in[0];
	r = x->rank;
	if (elem_size(x, &esz, c->err) == -1)
		return -1;
	if (esz > sizeof(zero))
		return err_set(c->err, "element type %s is not supported",
		    ops_type_name(x->dtype));
	aa = attr_ints(c->node, "axes", &cnt);
	if (attr_find(c->node, "axes") == NULL) {
		cnt = (size_t)r;
		for (k = 0; k < r; k++)
			axes[k] = k;
		aa = axes;
	}
	if (cnt > (size_t)r)
		return err_set(c->err, "axes has %zu entries for rank %d", cnt,
		    r);
	for (k = 0; k < (int64_t)cnt; k++) {
		if ((ax[k] = ops_axis(aa[k], r, c->err)) == -1)
			return err_prefix(c->err, "axes");
		if (seen[ax[k]]++)
			return err_set(c->err, "axis %d is repeated", ax[k]);
	}
	if (read_opt_ints(c, 1, "shape", &shape, &n) == -1)
		return -1;
	if (n != (int64_t)cnt) {
		free(shape);
		return err_set(c->err, "shape has %lld entries for %zu axes",
		    (long long)n, cnt);
	}
	for (k = 0; k < n; k++) {
		d = x->dims[ax[k]];
		if (shape[k] < 0 || shape[k] > (INT64_MAX >> 2)) {
			err_set(c->err, "shape entry %lld is out of range",
			    (long long)shape[k]);
			free(shape);
			return -1;
		}
		diff = shape[k] - d;
		if (diff >= 0) {
			pb[ax[k]] = diff / 2;
			pe[ax[k]] = diff - diff / 2;
		} else {
			pb[ax[k]] = -(-diff / 2);
			pe[ax[k]] = -(-diff - -diff / 2);
		}
	}
	free(shape);
	return pad_apply(c, x, pb, pe, 0, zero, esz);
}

/* ------------------------------------------------------------------ */
/* NonZero, OneHot, Trilu, EyeLike */

static int
is_nonzero(const char *p, int dtype, size_t esz)
{
	uint16_t h;
	float f;
	double d;

	switch (dtype) {
	case DT_FLOAT:
		memcpy(&f, p, 4);
		return f != 0;
	case DT_DOUBLE:
		memcpy(&d, p, 8);
		return d != 0;
	case DT_FLOAT16:
	case DT_BFLOAT16:
		memcpy(&h, p, 2);
		return (h & 0x7fff) != 0;
	}
	return !all_zero_bytes(p, esz);
}

static int
run_nonzero(struct op_ctx *c)
{
	const struct tensor *x;
	int64_t nnz = 0, i, j, dims[2], idx[TENSOR_MAX_RANK] = { 0 }, *y;
	const char *p;
	size_t esz;
	int k;

	if (need_inputs(c, 1) == -1)
		return -1;
	x = c->in[0];
	if (elem_size(x, &esz, c->err) == -1)
		return -1;
	p = x->data;
	for (i = 0; i < x->nelem; i++)
		nnz += is_nonzero(p + i * (int64_t)esz, x->dtype, esz);
	/* A scalar counts as 1-D, as in numpy and ONNX Runtime. */
	dims[0] = x->rank > 0 ? x->rank : 1;
	dims[1] = nnz;
	if (tensor_alloc(&c->out[0], DT_INT64, 2, dims, c->err) == -1)
		return -1;
	if (x->rank == 0)
		return 0;	/* the index is 0, and the tensor zero-filled */
	y = c->out[0].data;
	for (i = 0, j = 0; i < x->nelem; i++) {
		if (is_nonzero(p + i * (int64_t)esz, x->dtype, esz)) {
			for (k = 0; k < x->rank; k++)
				y[k * nnz + j] = idx[k];
			j++;
		}
		for (k = x->rank - 1; k >= 0; k--) {
			if (++idx[k] < x->dims[k])
				break;
			idx[k] = 0;
		}
	}
	return 0;
}

static int
run_one_hot(struct op_ctx *c)
{
	const struct tensor *ind, *dep, *val;
	int64_t dims[TENSOR_MAX_RANK], depth, inner, i, v;
	double dd;
	char *y;
	size_t esz;
	int axis, r, k;

	if (need_inputs(c, 3) == -1)
		return -1;
	ind = c->in[0];
	dep = c->in[1];
	val = c->in[2];
	if (elem_size(val, &esz, c->err) == -1 ||
	    elem_size(ind, &esz, c->err) == -1 ||
	    elem_size(dep, &esz, c->err) == -1)
		return -1;
	esz = dtype_size(val->dtype);
	if (dep->nelem != 1)
		return err_set(c->err, "depth must hold one value");
	if (val->nelem != 2)
		return err_set(c->err, "values must hold two elements");
	dd = tensor_get(dep, 0);
	if (!(dd >= 1) || dd > (double)TENSOR_MAX_BYTES)
		return err_set(c->err, "depth %g is out of range", dd);
	depth = (int64_t)dd;
	r = ind->rank + 1;
	if (r > TENSOR_MAX_RANK)
		return err_set(c->err, "output rank %d is more than %d", r,
		    TENSOR_MAX_RANK);
	if ((axis = ops_axis(attr_int(c->node, "axis", -1), r, c->err)) == -1)
		return -1;
	for (k = 0; k < r; k++)
		dims[k] = k < axis ? ind->dims[k] : k == axis ? depth :
		    ind->dims[k - 1];
	if (tensor_alloc(&c->out[0], val->dtype, r, dims, c->err) == -1)
		return -1;
	y = c->out[0].data;
	fill_elems(y, val->data, c->out[0].nelem, esz);
	inner = prod(ind->dims, axis, ind->rank);
	for (i = 0; i < ind->nelem; i++) {
		double f = tensor_get(ind, i);

		if (!(f > -dd - 1 && f < dd))
			continue;
		v = (int64_t)f;
		if (v < 0)
			v += depth;
		if (v < 0 || v >= depth)
			continue;
		memcpy(y + ((i / inner * depth + v) * inner + i % inner) *
		    (int64_t)esz, (const char *)val->data + esz, esz);
	}
	return 0;
}

static int
run_trilu(struct op_ctx *c)
{
	const struct tensor *x, *kt;
	int64_t k = 0, rows, cols, mats, m, i, j, lo, hi;
	char *y;
	size_t esz;
	int upper;

	if (need_inputs(c, 1) == -1)
		return -1;
	x = c->in[0];
	if (elem_size(x, &esz, c->err) == -1)
		return -1;
	if (x->rank < 2)
		return err_set(c->err, "input must have rank >= 2, not %d",
		    x->rank);
	if ((kt = ops_input(c, 1)) != NULL) {
		if (kt->dtype != DT_INT64 || kt->nelem != 1)
			return err_set(c->err, "k must be an int64 scalar");
		memcpy(&k, kt->data, 8);
	}
	upper = attr_int(c->node, "upper", 1) != 0;
	if (tensor_copy(&c->out[0], x, c->err) == -1)
		return -1;
	rows = x->dims[x->rank - 2];
	cols = x->dims[x->rank - 1];
	if (c->out[0].nelem == 0)
		return 0;
	mats = x->nelem / (rows * cols);
	y = c->out[0].data;
	/* Clamp k so that i + k cannot overflow. */
	if (k > cols)
		k = cols + 1;
	if (k < -rows)
		k = -rows - 1;
	for (m = 0; m < mats; m++)
		for (i = 0; i < rows; i++) {
			char *row = y + (m * rows + i) * cols * (int64_t)esz;

			/* Keep j >= i + k (upper) or j <= i + k (lower). */
			if (upper) {
				lo = 0;
				hi = i + k < 0 ? 0 : i + k > cols ? cols :
				    i + k;
			} else {
				lo = i + k + 1 < 0 ? 0 : i + k + 1 > cols ?
				    cols : i + k + 1;
				hi = cols;
			}
			for (j = lo; j < hi; j++)
				memset(row + j * (int64_t)esz, 0, esz);
		}
	return 0;
}

static int
run_eye_like(struct op_ctx *c)
{
	const struct tensor *x;
	int64_t k, i, dt;
	int dtype;

	if (need_inputs(c, 1) == -1)
		return -1;
	x = c->in[0];
	if (x->rank != 2)
		return err_set(c->err, "input must be 2-D, not rank %d",
		    x->rank);
	dt = attr_int(c->node, "dtype", x->dtype);
	if (dt <= 0 || dt > INT_MAX || dtype_size((int)dt) == 0 ||
	    (dt >= DT_FLOAT8E4M3FN && dt <= DT_FLOAT8E5M2FNUZ))
		return err_set(c->err, "dtype %lld is not supported",
		    (long long)dt);
	dtype = (int)dt;
	k = attr_int(c->node, "k", 0);
	if (tensor_alloc(&c->out[0], dtype, 2, x->dims, c->err) == -1)
		return -1;
	if (k >= x->dims[1] || k <= -x->dims[0])
		return 0;
	for (i = k < 0 ? -k : 0; i < x->dims[0] && i + k < x->dims[1]; i++)
		tensor_set(&c->out[0], i * x->dims[1] + i + k, 1.0);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Compress, ReverseSequence, Unique */

static int
run_compress(struct op_ctx *c)
{
	const struct tensor *x, *cond;
	int64_t dims[TENSOR_MAX_RANK], n, len, k, j, outer, blk, cnt = 0;
	const unsigned char *m;
	char *y;
	size_t esz;
	int axis, r;

	if (need_inputs(c, 2) == -1)
		return -1;
	x = c->in[0];
	cond = c->in[1];
	if (elem_size(x, &esz, c->err) == -1)
		return -1;
	if (cond->dtype != DT_BOOL || cond->rank != 1)
		return err_set(c->err, "condition must be a 1-D bool tensor");
	if (attr_find(c->node, "axis") != NULL) {
		if ((axis = ops_axis(attr_int(c->node, "axis", 0), x->rank,
		    c->err)) == -1)
			return -1;
		n = x->dims[axis];
		outer = prod(x->dims, 0, axis);
		blk = prod_bytes(x->dims, axis + 1, x->rank, esz);
		r = x->rank;
		memcpy(dims, x->dims, sizeof(dims));
	} else {
		axis = 0;
		n = x->nelem;
		outer = 1;
		blk = (int64_t)esz;
		r = 1;
	}
	len = cond->nelem;
	if (len > n)
		return err_set(c->err, "condition has %lld entries for %lld "
		    "slices", (long long)len, (long long)n);
	m = cond->data;
	for (k = 0; k < len; k++)
		cnt += m[k] != 0;
	dims[axis] = cnt;
	if (tensor_alloc(&c->out[0], x->dtype, r, dims, c->err) == -1)
		return -1;
	y = c->out[0].data;
	if (blk > 0 && cnt > 0)
		for (j = 0; j < outer; j++)
			for (k = 0; k < len; k++)
				if (m[k]) {
					memcpy(y, (const char *)x->data +
					    (j * n + k) * blk, (size_t)blk);
					y += blk;
				}
	return 0;
}

static int
run_reverse_sequence(struct op_ctx *c)
{
	const struct tensor *x, *sl;
	int64_t ta, ba, nt, nb, inner, b, t, src, len;
	char *y;
	size_t esz;

	if (need_inputs(c, 2) == -1)
		return -1;
	x = c->in[0];
	sl = c->in[1];
	if (elem_size(x, &esz, c->err) == -1)
		return -1;
	if (x->rank < 2)
		return err_set(c->err, "input must have rank >= 2, not %d",
		    x->rank);
	ta = attr_int(c->node, "time_axis", 0);
	ba = attr_int(c->node, "batch_axis", 1);
	if (!((ta == 0 && ba == 1) || (ta == 1 && ba == 0)))
		return err_set(c->err, "time_axis %lld and batch_axis %lld "
		    "must be 0 and 1", (long long)ta, (long long)ba);
	nt = x->dims[ta];
	nb = x->dims[ba];
	if (check_index_type(sl, "sequence_lens", c->err) == -1)
		return -1;
	if (sl->rank != 1 || sl->nelem != nb)
		return err_set(c->err, "sequence_lens must be 1-D with %lld "
		    "entries", (long long)nb);
	for (b = 0; b < nb; b++)
		if ((len = index_at(sl, b)) < 0 || len > nt)
			return err_set(c->err, "sequence length %lld is out of "
			    "range 0..%lld", (long long)len, (long long)nt);
	if (tensor_alloc(&c->out[0], x->dtype, x->rank, x->dims, c->err) == -1)
		return -1;
	y = c->out[0].data;
	inner = prod_bytes(x->dims, 2, x->rank, esz);
	if (inner == 0)
		return 0;
	for (b = 0; b < nb; b++) {
		len = index_at(sl, b);
		for (t = 0; t < nt; t++) {
			src = t < len ? len - 1 - t : t;
			if (ta == 0)
				memcpy(y + (t * nb + b) * inner,
				    (const char *)x->data + (src * nb + b) *
				    inner, (size_t)inner);
			else
				memcpy(y + (b * nt + t) * inner,
				    (const char *)x->data + (b * nt + src) *
				    inner, (size_t)inner);
		}
	}
	return 0;
}

/* Order of two elements of one type; NaN sorts last and equals NaN. */
static int
cmp_elem(const char *a, const char *b, int dtype)
{
	union {
		int8_t i8; int16_t i16; int32_t i32; int64_t i64;
		uint8_t u8; uint16_t u16; uint32_t u32; uint64_t u64;
		float f; double d;
	} x, y;
	double fa, fb;

	switch (dtype) {
	case DT_INT8:
		memcpy(&x, a, 1), memcpy(&y, b, 1);
		return (x.i8 > y.i8) - (x.i8 < y.i8);
	case DT_INT16:
		memcpy(&x, a, 2), memcpy(&y, b, 2);
		return (x.i16 > y.i16) - (x.i16 < y.i16);
	case DT_INT32:
		memcpy(&x, a, 4), memcpy(&y, b, 4);
		return (x.i32 > y.i32) - (x.i32 < y.i32);
	case DT_INT64:
		memcpy(&x, a, 8), memcpy(&y, b, 8);
		return (x.i64 > y.i64) - (x.i64 < y.i64);
	case DT_UINT8:
	case DT_BOOL:
		memcpy(&x, a, 1), memcpy(&y, b, 1);
		return (x.u8 > y.u8) - (x.u8 < y.u8);
	case DT_UINT16:
		memcpy(&x, a, 2), memcpy(&y, b, 2);
		return (x.u16 > y.u16) - (x.u16 < y.u16);
	case DT_UINT32:
		memcpy(&x, a, 4), memcpy(&y, b, 4);
		return (x.u32 > y.u32) - (x.u32 < y.u32);
	case DT_UINT64:
		memcpy(&x, a, 8), memcpy(&y, b, 8);
		return (x.u64 > y.u64) - (x.u64 < y.u64);
	case DT_FLOAT:
		memcpy(&x, a, 4), memcpy(&y, b, 4);
		fa = x.f, fb = y.f;
		break;
	case DT_DOUBLE:
		memcpy(&x, a, 8), memcpy(&y, b, 8);
		fa = x.d, fb = y.d;
		break;
	case DT_FLOAT16:
		memcpy(&x, a, 2), memcpy(&y, b, 2);
		fa = f16_to_f32(x.u16), fb = f16_to_f32(y.u16);
		break;
	case DT_BFLOAT16:
		memcpy(&x, a, 2), memcpy(&y, b, 2);
		fa = bf16_to_f32(x.u16), fb = bf16_to_f32(y.u16);
		break;
	default:
		return 0;
	}
	if (isnan(fa) || isnan(fb))
		return isnan(fa) - isnan(fb);
	return (fa > fb) - (fa < fb);
}

/* Slices of x along an axis: slice k holds x[o, k, i] for every o, i. */
struct slices {
	const char *data;
	int dtype;
	int64_t outer, n, inner;
	size_t esz;
};

static int
cmp_slices(const struct slices *s, int64_t a, int64_t b)
{
	int64_t o, i, oa, ob;
	int r;

	for (o = 0; o < s->outer; o++) {
		oa = (o * s->n + a) * s->inner;
		ob = (o * s->n + b) * s->inner;
		for (i = 0; i < s->inner; i++)
			if ((r = cmp_elem(s->data + (oa + i) * (int64_t)s->esz,
			    s->data + (ob + i) * (int64_t)s->esz,
			    s->dtype)) != 0)
				return r;
	}
	return 0;
}

/*
 * Stable merge sort of v[0..n) with tmp as scratch. With s, by slice
 * contents; without, by key[v[i]].
 */
static void
merge_sort(int64_t *v, int64_t *tmp, int64_t n, const struct slices *s,
    const int64_t *key)
{
	int64_t w, lo, mid, hi, i, j, k;
	int64_t *src = v, *dst = tmp, *sw;

	for (w = 1; w < n; w *= 2) {
		for (lo = 0; lo < n; lo += 2 * w) {
			mid = lo + w < n ? lo + w : n;
			hi = lo + 2 * w < n ? lo + 2 * w : n;
			for (i = lo, j = mid, k = lo; k < hi; k++) {
				int take_right = i >= mid || (j < hi &&
				    (s != NULL ? cmp_slices(s, src[j],
				    src[i]) < 0 : key[src[j]] < key[src[i]]));

				dst[k] = take_right ? src[j++] : src[i++];
			}
		}
		sw = src, src = dst, dst = sw;
	}
	if (src != v)
		memcpy(v, src, (size_t)n * sizeof(*v));
}

static int
run_unique(struct op_ctx *c)
{
	const struct tensor *x;
	struct slices s;
	int64_t *order = NULL, *tmp = NULL, *group = NULL, *first = NULL;
	int64_t *count = NULL, *rank = NULL, dims[TENSOR_MAX_RANK];
	int64_t n, k, g = 0, ng, blk, o, one;
	int axis = -1, sorted, rc = -1;
	char *y;

	if (need_inputs(c, 1) == -1)
		return -1;
	x = c->in[0];
	if (elem_size(x, &s.esz, c->err) == -1)
		return -1;
	sorted = attr_int(c->node, "sorted", 1) != 0;
	s.data = x->data;
	s.dtype = x->dtype;
	if (attr_find(c->node, "axis") != NULL) {
		if ((axis = ops_axis(attr_int(c->node, "axis", 0), x->rank,
		    c->err)) == -1)
			return -1;
		s.outer = prod(x->dims, 0, axis);
		s.n = x->dims[axis];
		s.inner = prod(x->dims, axis + 1, x->rank);
	} else {
		s.outer = 1;
		s.n = x->nelem;
		s.inner = 1;
	}
	n = s.n;
	if (n > TENSOR_MAX_BYTES / (int64_t)sizeof(int64_t))
		return err_set(c->err, "%lld slices are too many",
		    (long long)n);
	one = n > 0 ? n : 1;
	order = malloc((size_t)one * sizeof(int64_t));
	tmp = malloc((size_t)one * sizeof(int64_t));
	group = malloc((size_t)one * sizeof(int64_t));
	first = malloc((size_t)one * sizeof(int64_t));
	count = malloc((size_t)one * sizeof(int64_t));
	rank = malloc((size_t)one * sizeof(int64_t));
	if (!order || !tmp || !group || !first || !count || !rank) {
		err_nomem(c->err);
		goto out;
	}
	for (k = 0; k < n; k++)
		order[k] = k;
	merge_sort(order, tmp, n, &s, NULL);
	/* Runs of equal slices; stability makes each run's first the lowest. */
	for (k = 0; k < n; k++) {
		if (k == 0 || cmp_slices(&s, order[k - 1], order[k]) != 0) {
			g = k == 0 ? 0 : g + 1;
			first[g] = order[k];
			count[g] = 0;
		}
		group[order[k]] = g;
		count[g]++;
	}
	ng = n > 0 ? g + 1 : 0;
	/* rank[g]: the group's position in the output. */
	for (g = 0; g < ng; g++)
		order[g] = g;
	if (!sorted)
		merge_sort(order, tmp, ng, NULL, first);
	for (g = 0; g < ng; g++)
		rank[order[g]] = g;
	if (axis >= 0) {
		memcpy(dims, x->dims, sizeof(dims));
		dims[axis] = ng;
		if (tensor_alloc(&c->out[0], x->dtype, x->rank, dims,
		    c->err) == -1)
			goto out;
	} else if (tensor_alloc(&c->out[0], x->dtype, 1, &ng, c->err) == -1)
		goto out;
	y = c->out[0].data;
	blk = s.inner * (int64_t)s.esz;
	if (blk > 0)
		for (o = 0; o < s.outer; o++)
			for (g = 0; g < ng; g++)
				memcpy(y + (o * ng + g) * blk, s.data +
				    (o * n + first[order[g]]) * blk,
				    (size_t)blk);
	if (c->nout > 1) {
		if (tensor_alloc(&c->out[1], DT_INT64, 1, &ng, c->err) == -1)
			goto out;
		for (g = 0; g < ng; g++)
			((int64_t *)c->out[1].data)[g] = first[order[g]];
	}
	if (c->nout > 2) {
		if (tensor_alloc(&c->out[2], DT_INT64, 1, &n, c->err) == -1)
			goto out;
		for (k = 0; k < n; k++)
			((int64_t *)c->out[2].data)[k] = rank[group[k]];
	}
	if (c->nout > 3) {
		if (tensor_alloc(&c->out[3], DT_INT64, 1, &ng, c->err) == -1)
			goto out;
		for (g = 0; g < ng; g++)
			((int64_t *)c->out[3].data)[g] = count[order[g]];
	}
	rc = 0;
out:
	if (rc == -1)
		for (k = 0; k < c->nout && k < 4; k++)
			tensor_release(&c->out[k]);
	free(order);
	free(tmp);
	free(group);
	free(first);
	free(count);
	free(rank);
	return rc;
}

const struct op_def op_shape_defs[] = {
	{ "", "Cast", run_cast, NULL },
	{ "", "CastLike", run_cast_like, NULL },
	{ "", "CenterCropPad", run_center_crop_pad, NULL },
	{ "", "Compress", run_compress, NULL },
	{ "", "Concat", run_concat, NULL },
	{ "", "Constant", run_constant, NULL },
	{ "", "ConstantOfShape", run_constant_of_shape, NULL },
	{ "", "DepthToSpace", run_depth_to_space, NULL },
	{ "", "Expand", run_expand, NULL },
	{ "", "EyeLike", run_eye_like, NULL },
	{ "", "Flatten", run_flatten, NULL },
	{ "", "Gather", run_gather, NULL },
	{ "", "GatherElements", run_gather_elements, NULL },
	{ "", "GatherND", run_gather_nd, NULL },
	{ "", "NonZero", run_nonzero, NULL },
	{ "", "OneHot", run_one_hot, NULL },
	{ "", "Pad", run_pad, NULL },
	{ "", "Range", run_range, NULL },
	{ "", "Reshape", run_reshape, NULL },
	{ "", "ReverseSequence", run_reverse_sequence, NULL },
	{ "", "Scatter", run_scatter_elements, NULL },
	{ "", "ScatterElements", run_scatter_elements, NULL },
	{ "", "ScatterND", run_scatter_nd, NULL },
	{ "", "Shape", run_shape, NULL },
	{ "", "Size", run_size, NULL },
	{ "", "Slice", run_slice, NULL },
	{ "", "SpaceToDepth", run_space_to_depth, NULL },
	{ "", "Split", run_split, NULL },
	{ "", "Squeeze", run_squeeze, NULL },
	{ "", "Tile", run_tile, NULL },
	{ "", "Transpose", run_transpose, NULL },
	{ "", "Trilu", run_trilu, NULL },
	{ "", "Unique", run_unique, NULL },
	{ "", "Unsqueeze", run_unsqueeze, NULL },
	{ NULL, NULL, NULL, NULL },
};
