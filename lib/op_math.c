/*
 * op_math: elementwise kernels: arithmetic with numpy broadcasting,
 * activations, comparisons, logic, Where, Clip, Identity, Dropout.
 *
 * Each op has a table of inner loops indexed by element type. float16
 * and bfloat16 inputs are converted to float, computed, and converted
 * back. Broadcasting collapses the shapes to as few dimensions as
 * possible so that the innermost loop runs over contiguous (or scalar)
 * operands, which covers same-shape, scalar and NCHW-channel cases with
 * loops the compiler vectorises. Big tensors are split across threads.
 */
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <tgmath.h>

#include "attr.h"
#include "ops.h"
#include "par.h"

#define NDT 23			/* enum dtype values 0..22 */
/*
 * Fewer elements than this run on one thread: waking a sleeping OpenMP
 * worker costs tens of microseconds, as much as a cheap (memory-bound)
 * op spends on 256K elements, or a transcendental one on 32K.
 */
#define PAR_CHEAP (1 << 18)
#define PAR_HEAVY (1 << 15)
#define CHUNK 16384		/* elements per work item */

static int
need_inputs(struct op_ctx *c, int lo, int hi)
{
	if (c->nin < lo || c->nin > hi) {
		if (lo == hi)
			return err_set(c->err, "expected %d inputs, got %d",
			    lo, c->nin);
		return err_set(c->err, "expected %d to %d inputs, got %d",
		    lo, hi, c->nin);
	}
	for (int i = 0; i < lo; i++)
		if (!c->in[i])
			return err_set(c->err, "input %d is missing", i);
	return 0;
}

/*
 * The type a kernel computes element type dt in (float for the 16-bit
 * floats), an index into its tables of loops; -1 if out of their range.
 */
static int
work_type(int dt)
{
	int w = ops_is_half(dt) ? DT_FLOAT : dt;

	return w > 0 && w < NDT ? w : -1;
}

static int
nthreads(const struct op_ctx *c, int64_t n, int64_t min)
{
	if (n < min || c->threads < 2)
		return 1;
	return c->threads;
}

/*
 * Broadcasting iteration. The output shape is walked as rows of the
 * innermost collapsed dimension; every input's stride along a row is 0
 * (broadcast) or 1 (contiguous).
 */
#define BC_MAXIN 3

struct bcast {
	int nin;
	int k;				/* collapsed rank, >= 1 */
	int64_t dims[TENSOR_MAX_RANK];
	int64_t str[BC_MAXIN][TENSOR_MAX_RANK];
	int64_t total;
};

typedef void (*row_fn)(void *arg, int64_t o, const int64_t *off,
    const int *step, int64_t n);

/* rank/odims must be the broadcast of the inputs' shapes. */
static void
bcast_init(struct bcast *bc, int nin, const struct tensor *const *in,
    int rank, const int64_t *odims)
{
	int64_t str[BC_MAXIN][TENSOR_MAX_RANK];
	int i, j, k = 0, merge;

	bc->nin = nin;
	bc->total = 1;
	for (i = 0; i < rank; i++)
		bc->total *= odims[i];
	for (j = 0; j < nin; j++) {
		const struct tensor *t = in[j];
		int64_t s = 1;

		for (i = rank - 1; i >= 0; i--) {
			int ti = i - (rank - t->rank);
			int64_t d = ti >= 0 ? t->dims[ti] : 1;

			str[j][i] = d == 1 ? 0 : s;
			s *= d;
		}
	}
	for (i = 0; i < rank; i++) {
		if (odims[i] == 1)
			continue;
		merge = k > 0;
		for (j = 0; j < nin && merge; j++)
			if (bc->str[j][k - 1] != str[j][i] * odims[i])
				merge = 0;
		if (merge) {
			bc->dims[k - 1] *= odims[i];
			for (j = 0; j < nin; j++)
				bc->str[j][k - 1] = str[j][i];
		} else {
			bc->dims[k] = odims[i];
			for (j = 0; j < nin; j++)
				bc->str[j][k] = str[j][i];
			k++;
		}
	}
	if (k == 0) {
		bc->dims[0] = 1;
		for (j = 0; j < nin; j++)
			bc->str[j][0] = 0;
		k = 1;
	}
	bc->k = k;
}

/* Offsets of row r (index over dims[0..k-2]) into each input. */
static void
bcast_row_start(const struct bcast *bc, int64_t r, int64_t *idx, int64_t *off)
{
	int i, j;

	for (j = 0; j < bc->nin; j++)
		off[j] = 0;
	for (i = bc->k - 2; i >= 0; i--) {
		idx[i] = r % bc->dims[i];
		r /= bc->dims[i];
		for (j = 0; j < bc->nin; j++)
			off[j] += idx[i] * bc->str[j][i];
	}
}

static void
bcast_row_next(const struct bcast *bc, int64_t *idx, int64_t *off)
{
	int i, j;

	for (i = bc->k - 2; i >= 0; i--) {
		idx[i]++;
		for (j = 0; j < bc->nin; j++)
			off[j] += bc->str[j][i];
		if (idx[i] < bc->dims[i])
			return;
		for (j = 0; j < bc->nin; j++)
			off[j] -= idx[i] * bc->str[j][i];
		idx[i] = 0;
	}
}

struct bcast_job {
	const struct bcast *bc;
	row_fn fn;
	void *arg;
	int64_t n, rows, pieces, group;
	int step[BC_MAXIN];
};

static void bcast_chunk(void *ctx, int64_t it, int w);

static void
bcast_run(const struct bcast *bc, int threads, row_fn fn, void *arg)
{
	int64_t n = bc->dims[bc->k - 1], rows, items, pieces, group;
	int step[BC_MAXIN], j;
	struct bcast_job job;

	if (bc->total == 0)
		return;
	rows = bc->total / n;
	for (j = 0; j < bc->nin; j++)
		step[j] = bc->str[j][bc->k - 1] != 0;
	if (n >= CHUNK) {
		pieces = (n + CHUNK - 1) / CHUNK;
		group = 1;
		items = rows * pieces;
	} else {
		pieces = 1;
		group = CHUNK / n;
		items = (rows + group - 1) / group;
	}
	if (items < 2)
		threads = 1;
	job.bc = bc, job.fn = fn, job.arg = arg, job.n = n, job.rows = rows;
	job.pieces = pieces, job.group = group;
	memcpy(job.step, step, sizeof step);
	par_for(items, threads, bcast_chunk, &job);
}

/* par_for chunk it of bcast_run. */
static void
bcast_chunk(void *ctx, int64_t it, int w)
{
	const struct bcast_job *j = ctx;
	const struct bcast *bc = j->bc;
	row_fn fn = j->fn;
	void *arg = j->arg;
	int64_t n = j->n, rows = j->rows, pieces = j->pieces;
	int64_t group = j->group;
	const int *step = j->step;

	(void)w;
	{
		int64_t idx[TENSOR_MAX_RANK], off[BC_MAXIN], r, r1, start, len;
		int jj;

		if (n >= CHUNK) {
			r = it / pieces;
			start = (it % pieces) * CHUNK;
			len = n - start < CHUNK ? n - start : CHUNK;
			bcast_row_start(bc, r, idx, off);
			for (jj = 0; jj < bc->nin; jj++)
				off[jj] += start * step[jj];
			fn(arg, r * n + start, off, step, len);
			return;
		}
		r = it * group;
		r1 = r + group < rows ? r + group : rows;
		bcast_row_start(bc, r, idx, off);
		for (; r < r1; r++) {
			fn(arg, r * n, off, step, n);
			bcast_row_next(bc, idx, off);
		}
	}
}

/*
 * Binary inner loops: n outputs from a and b, each advancing by sa/sb
 * (0 or 1) elements per output.
 */
/*
 * Elementwise loops have no dependencies between iterations; say so to
 * gcc, whose -O2 cost model would otherwise leave loops with selects
 * scalar. clang vectorises them unasked, and warns about every such
 * request it cannot meet (loops calling libm).
 */
#ifdef __clang__
#define SIMD
#else
#define SIMD _Pragma("omp simd")
#endif

typedef void (*bin_fn)(void *o, const void *a, int sa, const void *b, int sb,
    int64_t n);

#define BIN_FN(name, TI, TO, EXPR)					\
static void								\
name(void *o_, const void *a_, int sa, const void *b_, int sb, int64_t n)\
{									\
	typedef TI T;							\
	TO *restrict o = o_;						\
	const T *restrict a = a_;					\
	const T *restrict b = b_;					\
	int64_t i;							\
									\
	if (sa && sb) {							\
		SIMD						\
		for (i = 0; i < n; i++) {				\
			T x = a[i];					\
			T y = b[i];					\
			o[i] = (TO)(EXPR);				\
		}							\
	} else if (sa) {						\
		const T y = b[0];					\
		SIMD						\
		for (i = 0; i < n; i++) {				\
			T x = a[i];					\
			o[i] = (TO)(EXPR);				\
		}							\
	} else if (sb) {						\
		const T x = a[0];					\
		SIMD						\
		for (i = 0; i < n; i++) {				\
			T y = b[i];					\
			o[i] = (TO)(EXPR);				\
		}							\
	} else {							\
		const T x = a[0];					\
		const T y = b[0];					\
		const TO r = (TO)(EXPR);				\
		for (i = 0; i < n; i++)					\
			o[i] = r;					\
	}								\
}

/* Generators over groups of element types: same type in and out... */
#define BIN_FLT(op, EXPR)						\
	BIN_FN(op##_f32, float, float, EXPR)				\
	BIN_FN(op##_f64, double, double, EXPR)
#define BIN_SINT(op, EXPR)						\
	BIN_FN(op##_i8, int8_t, int8_t, EXPR)				\
	BIN_FN(op##_i16, int16_t, int16_t, EXPR)			\
	BIN_FN(op##_i32, int32_t, int32_t, EXPR)			\
	BIN_FN(op##_i64, int64_t, int64_t, EXPR)
#define BIN_UINT(op, EXPR)						\
	BIN_FN(op##_u8, uint8_t, uint8_t, EXPR)				\
	BIN_FN(op##_u16, uint16_t, uint16_t, EXPR)			\
	BIN_FN(op##_u32, uint32_t, uint32_t, EXPR)			\
	BIN_FN(op##_u64, uint64_t, uint64_t, EXPR)
/* ... and to bool. */
#define CMP_ALL(op, EXPR)						\
	BIN_FN(op##_f32, float, uint8_t, EXPR)				\
	BIN_FN(op##_f64, double, uint8_t, EXPR)				\
	BIN_FN(op##_i8, int8_t, uint8_t, EXPR)				\
	BIN_FN(op##_i16, int16_t, uint8_t, EXPR)			\
	BIN_FN(op##_i32, int32_t, uint8_t, EXPR)			\
	BIN_FN(op##_i64, int64_t, uint8_t, EXPR)			\
	BIN_FN(op##_u8, uint8_t, uint8_t, EXPR)				\
	BIN_FN(op##_u16, uint16_t, uint8_t, EXPR)			\
	BIN_FN(op##_u32, uint32_t, uint8_t, EXPR)			\
	BIN_FN(op##_u64, uint64_t, uint8_t, EXPR)

#define TAB_FLT(op) [DT_FLOAT] = op##_f32, [DT_DOUBLE] = op##_f64
#define TAB_SINT(op) [DT_INT8] = op##_i8, [DT_INT16] = op##_i16, \
	[DT_INT32] = op##_i32, [DT_INT64] = op##_i64
#define TAB_UINT(op) [DT_UINT8] = op##_u8, [DT_UINT16] = op##_u16, \
	[DT_UINT32] = op##_u32, [DT_UINT64] = op##_u64
#define TAB_NUM(op) TAB_FLT(op), TAB_SINT(op), TAB_UINT(op)

/* Integer arithmetic wraps (two's complement) instead of being undefined. */
#define WRAP(expr) ((T)(uint64_t)(expr))

static inline int64_t
sdiv(int64_t x, int64_t y)
{
	if (y == 0)
		return 0;
	if (y == -1)
		return (int64_t)(0 - (uint64_t)x);
	return x / y;
}

static inline uint64_t
udiv(uint64_t x, uint64_t y)
{
	return y ? x / y : 0;
}

/* Mod with the sign of the divisor (numpy/Python %), fmod=0. */
static inline int64_t
smod(int64_t x, int64_t y)
{
	int64_t r;

	if (y == 0 || y == -1)
		return 0;
	r = x % y;
	if (r != 0 && ((r < 0) != (y < 0)))
		r += y;
	return r;
}

/* C fmod semantics (sign of the dividend), fmod=1. */
static inline int64_t
sfmod(int64_t x, int64_t y)
{
	if (y == 0 || y == -1)
		return 0;
	return x % y;
}

static inline uint64_t
umod(uint64_t x, uint64_t y)
{
	return y ? x % y : 0;
}

static inline double
pymod(double x, double y)
{
	double r = fmod(x, y);

	if (r != 0 && ((r < 0) != (y < 0)))
		r += y;
	return r;
}

static inline float
pymodf(float x, float y)
{
	float r = fmod(x, y);

	if (r != 0 && ((r < 0) != (y < 0)))
		r += y;
	return r;
}

#define PYMOD(x, y) _Generic((x), float: pymodf, default: pymod)(x, y)

static inline uint64_t
ushift(uint64_t x, uint64_t y, int bits, int left)
{
	if (y >= (uint64_t)bits)
		return 0;
	return left ? x << y : x >> y;
}

/* Integer power by squaring, wrapping; negative exponents truncate. */
static inline int64_t
ipow(int64_t x, int64_t y)
{
	uint64_t r = 1, b = (uint64_t)x;

	if (y < 0)
		return x == 1 ? 1 : x == -1 ? ((y & 1) ? -1 : 1) : 0;
	while (y) {
		if (y & 1)
			r *= b;
		b *= b;
		y >>= 1;
	}
	return (int64_t)r;
}

BIN_FLT(add, x + y)
BIN_SINT(add, WRAP((uint64_t)x + (uint64_t)y))
BIN_UINT(add, WRAP((uint64_t)x + (uint64_t)y))
BIN_FLT(sub, x - y)
BIN_SINT(sub, WRAP((uint64_t)x - (uint64_t)y))
BIN_UINT(sub, WRAP((uint64_t)x - (uint64_t)y))
BIN_FLT(mul, x * y)
BIN_SINT(mul, WRAP((uint64_t)x * (uint64_t)y))
BIN_UINT(mul, WRAP((uint64_t)x * (uint64_t)y))
BIN_FLT(div, x / y)
BIN_SINT(div, sdiv(x, y))
BIN_UINT(div, udiv(x, y))
BIN_FLT(max, (x >= y || isnan(x)) ? x : y)
BIN_SINT(max, x >= y ? x : y)
BIN_UINT(max, x >= y ? x : y)
BIN_FLT(min, (x <= y || isnan(x)) ? x : y)
BIN_SINT(min, x <= y ? x : y)
BIN_UINT(min, x <= y ? x : y)
BIN_FLT(mod, PYMOD(x, y))
BIN_SINT(mod, smod(x, y))
BIN_UINT(mod, umod(x, y))
BIN_FLT(fmod, fmod(x, y))
BIN_SINT(fmod, sfmod(x, y))
BIN_UINT(fmod, umod(x, y))
BIN_FLT(pow, pow(x, y))
BIN_FN(pow_i32, int32_t, int32_t, ipow(x, y))
BIN_FN(pow_i64, int64_t, int64_t, ipow(x, y))
BIN_FLT(prelu, (x < 0 ? 0 : x) + y * (x > 0 ? 0 : x))	/* as LeakyRelu */
BIN_FN(prelu_i32, int32_t, int32_t, x < 0 ? WRAP((uint64_t)x * (uint64_t)y) : x)
BIN_FN(prelu_i64, int64_t, int64_t, x < 0 ? WRAP((uint64_t)x * (uint64_t)y) : x)
BIN_FN(prelu_u32, uint32_t, uint32_t, ((void)y, x))
BIN_FN(prelu_u64, uint64_t, uint64_t, ((void)y, x))
BIN_UINT(shl, ushift(x, y, (int)sizeof(T) * 8, 1))
BIN_UINT(shr, ushift(x, y, (int)sizeof(T) * 8, 0))
CMP_ALL(eq, x == y)
CMP_ALL(lt, x < y)
CMP_ALL(le, x <= y)
CMP_ALL(gt, x > y)
CMP_ALL(ge, x >= y)
BIN_FN(and_b, uint8_t, uint8_t, (x != 0) & (y != 0))
BIN_FN(or_b, uint8_t, uint8_t, (x != 0) | (y != 0))
BIN_FN(xor_b, uint8_t, uint8_t, (x != 0) ^ (y != 0))

static const bin_fn add_fns[NDT] = { TAB_NUM(add) };
static const bin_fn sub_fns[NDT] = { TAB_NUM(sub) };
static const bin_fn mul_fns[NDT] = { TAB_NUM(mul) };
static const bin_fn div_fns[NDT] = { TAB_NUM(div) };
static const bin_fn max_fns[NDT] = { TAB_NUM(max) };
static const bin_fn min_fns[NDT] = { TAB_NUM(min) };
static const bin_fn mod_fns[NDT] = { TAB_NUM(mod) };
static const bin_fn fmod_fns[NDT] = { TAB_NUM(fmod) };
static const bin_fn pow_fns[NDT] = { TAB_FLT(pow),
	[DT_INT32] = pow_i32, [DT_INT64] = pow_i64 };
static const bin_fn prelu_fns[NDT] = { TAB_FLT(prelu),
	[DT_INT32] = prelu_i32, [DT_INT64] = prelu_i64,
	[DT_UINT32] = prelu_u32, [DT_UINT64] = prelu_u64 };
static const bin_fn shl_fns[NDT] = { TAB_UINT(shl) };
static const bin_fn shr_fns[NDT] = { TAB_UINT(shr) };
static const bin_fn eq_fns[NDT] = { TAB_NUM(eq), [DT_BOOL] = eq_u8 };
static const bin_fn lt_fns[NDT] = { TAB_NUM(lt) };
static const bin_fn le_fns[NDT] = { TAB_NUM(le) };
static const bin_fn gt_fns[NDT] = { TAB_NUM(gt) };
static const bin_fn ge_fns[NDT] = { TAB_NUM(ge) };
static const bin_fn and_fns[NDT] = { [DT_BOOL] = and_b };
static const bin_fn or_fns[NDT] = { [DT_BOOL] = or_b };
static const bin_fn xor_fns[NDT] = { [DT_BOOL] = xor_b };

struct bin_job {
	bin_fn f;
	char *o;
	const char *a, *b;
	size_t eo, ea, eb;
};

static void
bin_row(void *arg, int64_t o, const int64_t *off, const int *step, int64_t n)
{
	const struct bin_job *j = arg;

	j->f(j->o + o * j->eo, j->a + off[0] * j->ea, step[0],
	    j->b + off[1] * j->eb, step[1], n);
}

/*
 * out = f(a, b) broadcast; a and b of one type, out of type odt; par_min:
 * PAR_CHEAP or PAR_HEAVY.
 */
static int
broadcast2(struct op_ctx *c, const struct tensor *a, const struct tensor *b,
    struct tensor *out, int odt, bin_fn f, int64_t par_min)
{
	const struct tensor *ins[2] = { a, b };
	int64_t dims[TENSOR_MAX_RANK];
	struct bcast bc;
	struct bin_job job;
	int rank;

	if (ops_broadcast_shape(a->rank, a->dims, b->rank, b->dims, &rank,
	    dims, c->err) < 0)
		return -1;
	if (tensor_alloc_uninit(out, odt, rank, dims, c->err) < 0)
		return -1;
	bcast_init(&bc, 2, ins, rank, dims);
	job.f = f;
	job.o = out->data;
	job.a = a->data;
	job.b = b->data;
	job.eo = dtype_size(odt);
	job.ea = job.eb = dtype_size(a->dtype);
	bcast_run(&bc, nthreads(c, bc.total, par_min), bin_row, &job);
	return 0;
}

/*
 * Opset < 7 broadcasting: with broadcast=1 and an axis, b's shape lines
 * up with a's starting at axis; make that a numpy shape by padding b with
 * trailing ones. The view shares b's data.
 */
static int
legacy_view(struct op_ctx *c, const struct tensor *a, const struct tensor *b,
    struct tensor *view)
{
	const Onnx__AttributeProto *ax;
	int axis, pad;

	*view = *b;
	if (c->opset >= 7 || !attr_int(c->node, "broadcast", 0) ||
	    !(ax = attr_find(c->node, "axis")))
		return 0;
	axis = ops_axis(attr_int(c->node, "axis", 0), a->rank, c->err);
	if (axis < 0)
		return -1;
	pad = a->rank - axis - b->rank;
	if (pad < 0)
		return err_set(c->err, "input 1 of rank %d does not fit at "
		    "axis %d of rank %d", b->rank, axis, a->rank);
	for (int i = 0; i < pad; i++)
		view->dims[view->rank++] = 1;
	return 0;
}

/* Convert a half-precision tensor to float in tmp; others pass through. */
static int
as_float(const struct tensor *t, struct tensor *tmp, const struct tensor **use,
    struct err *e)
{
	if (!ops_is_half(t->dtype)) {
		*use = t;
		return 0;
	}
	if (tensor_cast(tmp, t, DT_FLOAT, e) < 0)
		return -1;
	*use = tmp;
	return 0;
}

/* Store a float result in out as type dt (half) or move it. */
static int
store_as(struct tensor *out, struct tensor *res, int dt, struct err *e)
{
	if (res->dtype == dt || !ops_is_half(dt)) {
		tensor_move(out, res);
		return 0;
	}
	if (tensor_cast(out, res, dt, e) < 0) {
		tensor_release(res);
		return -1;
	}
	tensor_release(res);
	return 0;
}

/* A two-input op with one element type; cmp: the output is bool. */
static int
run_binary(struct op_ctx *c, const bin_fn *fns, int cmp, int64_t par_min)
{
	const struct tensor *a, *b, *ua, *ub;
	struct tensor ta = { 0 }, tb = { 0 }, res = { 0 }, bv;
	int dt, rc = -1;

	if (need_inputs(c, 2, 2) < 0)
		return -1;
	a = c->in[0];
	b = c->in[1];
	dt = a->dtype;
	if (b->dtype != dt)
		return err_set(c->err, "input types %s and %s differ",
		    ops_type_name(dt), ops_type_name(b->dtype));
	if (work_type(dt) < 0 || !fns[work_type(dt)])
		return err_set(c->err, "element type %s is not supported",
		    ops_type_name(dt));
	if (as_float(a, &ta, &ua, c->err) < 0 ||
	    as_float(b, &tb, &ub, c->err) < 0 ||
	    legacy_view(c, ua, ub, &bv) < 0)
		goto out;
	if (broadcast2(c, ua, &bv, &res, cmp ? DT_BOOL : ua->dtype,
	    fns[ua->dtype], par_min) < 0)
		goto out;
	rc = store_as(&c->out[0], &res, cmp ? DT_BOOL : dt, c->err);
out:
	tensor_release(&ta);
	tensor_release(&tb);
	tensor_release(&res);
	return rc;
}

#define BINARY_OP(name, fns, cmp)					\
	OPS_KERNEL(name, run_binary, fns, cmp, PAR_CHEAP)

BINARY_OP(run_add, add_fns, 0)
BINARY_OP(run_sub, sub_fns, 0)
BINARY_OP(run_mul, mul_fns, 0)
BINARY_OP(run_div, div_fns, 0)
BINARY_OP(run_equal, eq_fns, 1)
BINARY_OP(run_less, lt_fns, 1)
BINARY_OP(run_less_equal, le_fns, 1)
BINARY_OP(run_greater, gt_fns, 1)
BINARY_OP(run_greater_equal, ge_fns, 1)
BINARY_OP(run_and, and_fns, 1)
BINARY_OP(run_or, or_fns, 1)
BINARY_OP(run_xor, xor_fns, 1)

static int
run_mod(struct op_ctx *c)
{
	return run_binary(c, attr_int(c->node, "fmod", 0) ? fmod_fns : mod_fns,
	    0, PAR_HEAVY);
}

static int
run_bitshift(struct op_ctx *c)
{
	char buf[16];
	const char *dir;

	dir = attr_string(c->node, "direction", "", buf, sizeof buf);

	if (strcmp(dir, "LEFT") == 0)
		return run_binary(c, shl_fns, 0, PAR_CHEAP);
	if (strcmp(dir, "RIGHT") == 0)
		return run_binary(c, shr_fns, 0, PAR_CHEAP);
	return err_set(c->err, "direction must be LEFT or RIGHT, not '%s'",
	    dir);
}

/* PRelu: slope broadcasts to X (unidirectionally). */
static int
run_prelu(struct op_ctx *c)
{
	const struct tensor *x, *s;
	char sx[256], ss[256];
	int i, ok;

	if (need_inputs(c, 2, 2) < 0)
		return -1;
	x = c->in[0];
	s = c->in[1];
	if (c->opset < 7 && s->rank == 1 && x->rank >= 2 &&
	    s->dims[0] == x->dims[1] && s->dims[0] > 1) {
		/* Opset 6 and older: a 1-D slope runs along the channel axis. */
		struct tensor view = *s;
		const struct tensor *in[2] = { x, &view };
		const struct tensor *const *saved = c->in;
		view.rank = x->rank - 1;
		for (i = 0; i < view.rank; i++)
			view.dims[i] = i == 0 ? s->dims[0] : 1;
		c->in = in;
		ok = run_binary(c, prelu_fns, 0, PAR_CHEAP);
		c->in = saved;
		return ok;
	}
	ok = s->rank <= x->rank;
	for (i = 0; ok && i < s->rank; i++)
		ok = s->dims[i] == 1 ||
		    s->dims[i] == x->dims[x->rank - s->rank + i];
	if (!ok)
		return err_set(c->err, "slope of shape %s does not broadcast "
		    "to input shape %s",
		    shape_str(s->rank, s->dims, ss, sizeof ss),
		    shape_str(x->rank, x->dims, sx, sizeof sx));
	return run_binary(c, prelu_fns, 0, PAR_CHEAP);
}

/* int32/int64 dst from double src, truncated toward zero, saturated. */
static int
truncate_to(struct tensor *dst, const struct tensor *src, int dt,
    struct err *e)
{
	const double *v = src->data;
	int64_t i, lo, hi;
	double d;

	if (tensor_alloc_like_uninit(dst, dt, src, e) < 0 ||
	    dtype_int_range(dt, &lo, &hi) < 0)
		return -1;
	for (i = 0; i < src->nelem; i++) {
		d = isnan(v[i]) ? 0 : trunc(v[i]);
		/* (double)hi may round up to 2^63: compare with >= */
		d = d <= (double)lo ? (double)lo : d;
		if (dt == DT_INT32)
			((int32_t *)dst->data)[i] = d >= (double)hi ?
			    (int32_t)hi : (int32_t)d;
		else
			((int64_t *)dst->data)[i] = d >= (double)hi ?
			    hi : (int64_t)d;
	}
	return 0;
}

/*
 * Pow: the exponent may have another type than the base. A float base
 * computes in its own type; an integer base with an integer exponent
 * uses exact integer powers, with a float exponent computes in double
 * and truncates like a C cast.
 */
static int
run_pow(struct op_ctx *c)
{
	const struct tensor *x, *y, *ux, *uy;
	struct tensor tx = { 0 }, ty = { 0 }, res = { 0 }, yv;
	int dt, wdt, rc = -1;

	if (need_inputs(c, 2, 2) < 0)
		return -1;
	x = c->in[0];
	y = c->in[1];
	dt = x->dtype;
	if (dtype_size(y->dtype) == 0 || y->dtype == DT_BOOL ||
	    (!dtype_is_float(y->dtype) && dtype_int_range(y->dtype, NULL,
	    NULL) < 0))
		return err_set(c->err, "exponent type %s is not supported",
		    ops_type_name(y->dtype));
	if (dt == DT_FLOAT || dt == DT_DOUBLE || ops_is_half(dt))
		wdt = ops_is_half(dt) ? DT_FLOAT : dt;
	else if (dt == DT_INT32 || dt == DT_INT64)
		wdt = dtype_is_float(y->dtype) ? DT_DOUBLE : dt;
	else
		return err_set(c->err, "element type %s is not supported",
		    ops_type_name(dt));
	ux = x;
	uy = y;
	if (dt != wdt) {
		if (tensor_cast(&tx, x, wdt, c->err) < 0)
			goto out;
		ux = &tx;
	}
	if (y->dtype != wdt) {
		if (tensor_cast(&ty, y, wdt, c->err) < 0)
			goto out;
		uy = &ty;
	}
	if (legacy_view(c, ux, uy, &yv) < 0)
		goto out;
	/* Common scalar exponents skip pow(). */
	if (wdt == DT_FLOAT && yv.nelem == 1 &&
	    (((float *)yv.data)[0] == 2 || ((float *)yv.data)[0] == 1 ||
	    ((float *)yv.data)[0] == 0.5f) && yv.rank <= ux->rank) {
		float e = ((float *)yv.data)[0];
		const float *a = ux->data;
		float *o;
		int64_t n = ux->nelem, i;

		if (tensor_alloc_like_uninit(&res, DT_FLOAT, ux, c->err) < 0)
			goto out;
		o = res.data;
		if (e == 2)
			for (i = 0; i < n; i++)
				o[i] = a[i] * a[i];
		else if (e == 1)
			memcpy(o, a, (size_t)n * sizeof *o);
		else
			for (i = 0; i < n; i++)
				o[i] = sqrt(a[i]);
	} else if (broadcast2(c, ux, &yv, &res, wdt, pow_fns[wdt],
	    PAR_HEAVY) < 0)
		goto out;
	if (res.dtype == DT_DOUBLE && dt != DT_DOUBLE && !ops_is_half(dt)) {
		rc = truncate_to(&c->out[0], &res, dt, c->err);
		goto out;
	}
	rc = store_as(&c->out[0], &res, dt, c->err);
out:
	tensor_release(&tx);
	tensor_release(&ty);
	tensor_release(&res);
	return rc;
}

/* Sum, Mean, Max, Min: fold the inputs pairwise with broadcasting. */
static int
run_variadic(struct op_ctx *c, const bin_fn *fns, int mean)
{
	struct tensor acc = { 0 }, next = { 0 }, ta = { 0 }, tb = { 0 };
	const struct tensor *ua, *ub;
	int dt, i, rc = -1;

	if (c->nin < 1)
		return err_set(c->err, "expected at least one input");
	for (i = 0; i < c->nin; i++) {
		if (!c->in[i])
			return err_set(c->err, "input %d is missing", i);
		if (c->in[i]->dtype != c->in[0]->dtype)
			return err_set(c->err, "input %d: type %s differs from "
			    "input 0's %s", i, ops_type_name(c->in[i]->dtype),
			    ops_type_name(c->in[0]->dtype));
	}
	dt = c->in[0]->dtype;
	if (work_type(dt) < 0 || !fns[work_type(dt)])
		return err_set(c->err, "element type %s is not supported",
		    ops_type_name(dt));
	if (c->nin == 1)
		return tensor_copy(&c->out[0], c->in[0], c->err);
	if (as_float(c->in[0], &ta, &ua, c->err) < 0)
		goto out;
	for (i = 1; i < c->nin; i++) {
		if (as_float(c->in[i], &tb, &ub, c->err) < 0 ||
		    broadcast2(c, ua, ub, &next, ua->dtype, fns[ua->dtype],
		    PAR_CHEAP) < 0)
			goto out;
		tensor_release(&tb);
		tensor_move(&acc, &next);
		ua = &acc;
	}
	if (mean) {
		int64_t n = acc.nelem, j;

		if (acc.dtype == DT_FLOAT) {
			float *p = acc.data, s = 1.0f / (float)c->nin;
			for (j = 0; j < n; j++)
				p[j] *= s;
		} else {
			double *p = acc.data, s = 1.0 / c->nin;
			for (j = 0; j < n; j++)
				p[j] *= s;
		}
	}
	rc = store_as(&c->out[0], &acc, dt, c->err);
out:
	tensor_release(&acc);
	tensor_release(&next);
	tensor_release(&ta);
	tensor_release(&tb);
	return rc;
}

OPS_KERNEL(run_sum, run_variadic, add_fns, 0)

static int
run_mean(struct op_ctx *c)
{
	static const bin_fn fns[NDT] = { TAB_FLT(add) };

	return run_variadic(c, fns, 1);
}

OPS_KERNEL(run_max, run_variadic, max_fns, 0)
OPS_KERNEL(run_min, run_variadic, min_fns, 0)

/* Where(cond, X, Y): type-agnostic, by element size. */
struct where_job {
	char *o;
	const uint8_t *cond;
	const char *x, *y;
	size_t es;
};

#define WHERE_LOOP(T)							\
	do {								\
		T *restrict o = (T *)(j->o) + oo;			\
		const T *restrict x = (const T *)(j->x) + off[1];	\
		const T *restrict y = (const T *)(j->y) + off[2];	\
		for (i = 0; i < n; i++)					\
			o[i] = cd[i * sc] ? x[i * sx] : y[i * sy];	\
	} while (0)

static void
where_row(void *arg, int64_t oo, const int64_t *off, const int *step,
    int64_t n)
{
	const struct where_job *j = arg;
	const uint8_t *cd = j->cond + off[0];
	int64_t i, sc = step[0], sx = step[1], sy = step[2];

	switch (j->es) {
	case 1: WHERE_LOOP(uint8_t); break;
	case 2: WHERE_LOOP(uint16_t); break;
	case 4: WHERE_LOOP(uint32_t); break;
	case 8: WHERE_LOOP(uint64_t); break;
	default:
		for (i = 0; i < n; i++)
			memcpy(j->o + (oo + i) * j->es,
			    cd[i * sc] ? j->x + (off[1] + i * sx) * j->es :
			    j->y + (off[2] + i * sy) * j->es, j->es);
	}
}

static int
run_where(struct op_ctx *c)
{
	const struct tensor *cond, *x, *y;
	int64_t d1[TENSOR_MAX_RANK], dims[TENSOR_MAX_RANK];
	int r1, rank;
	struct bcast bc;
	struct where_job job;

	if (need_inputs(c, 3, 3) < 0)
		return -1;
	cond = c->in[0];
	x = c->in[1];
	y = c->in[2];
	if (cond->dtype != DT_BOOL)
		return err_set(c->err, "condition must be bool, not %s",
		    ops_type_name(cond->dtype));
	if (x->dtype != y->dtype)
		return err_set(c->err, "input types %s and %s differ",
		    ops_type_name(x->dtype), ops_type_name(y->dtype));
	if (ops_broadcast_shape(cond->rank, cond->dims, x->rank, x->dims, &r1,
	    d1, c->err) < 0 ||
	    ops_broadcast_shape(r1, d1, y->rank, y->dims, &rank, dims,
	    c->err) < 0 ||
	    tensor_alloc_uninit(&c->out[0], x->dtype, rank, dims, c->err) < 0)
		return -1;
	bcast_init(&bc, 3, c->in, rank, dims);
	job.o = c->out[0].data;
	job.cond = cond->data;
	job.x = x->data;
	job.y = y->data;
	job.es = dtype_size(x->dtype);
	bcast_run(&bc, nthreads(c, bc.total, PAR_CHEAP), where_row, &job);
	return 0;
}

/*
 * Unary ops. The loop body computes y from x; alpha, beta, gamma are
 * the op's float parameters, lo and hi Clip's bounds.
 */
struct uparam {
	double alpha, beta, gamma;
	int64_t ilo, ihi;	/* integer Clip bounds (uint64 as bits) */
	float elo, ehi;		/* vexpf's clamp, set by run_unary */
};

/*
 * exp for float in a form gcc vectorises under the default
 * -ftrapping-math: no float comparison other than min/max and
 * unordered, the clamp bounds passed in as run-time values (constant
 * bounds make gcc split the loop per clamped case), 2^k applied as two
 * factors so that overflow gives inf and underflow 0 or a subnormal.
 * Cephes' polynomial; relative error below 2e-7 for normal results.
 */
static inline float
vexpf(float x, float lo, float hi)
{
	union { uint32_t u; float f; } s1, s2;
	float xc, k, r, p;
	int32_t ki, k1;

	xc = x > lo ? x : lo;		/* lo = -104: exp is 0 below */
	xc = xc < hi ? xc : hi;		/* hi = 89: exp is inf above */
	k = xc * 1.44269504088896341f + 12582912.0f;
	k -= 12582912.0f;		/* round to nearest integer */
	r = xc - k * 0.693359375f;
	r = r + k * 2.12194440e-4f;
	p = 1.9875691500e-4f;
	p = p * r + 1.3981999507e-3f;
	p = p * r + 8.3334519073e-3f;
	p = p * r + 4.1665795894e-2f;
	p = p * r + 1.6666665459e-1f;
	p = p * r + 5.0000001201e-1f;
	p = p * r * r + r + 1.0f;
	ki = (int32_t)k;
	k1 = ki / 2;
	s1.u = (uint32_t)(k1 + 127) << 23;
	s2.u = (uint32_t)(ki - k1 + 127) << 23;
	p = p * s1.f * s2.f;
	return isunordered(x, x) ? x : p;
}

/* mask ? a : b by bits, which gcc vectorises where a ?: would branch. */
static inline float
fsel(uint32_t mask, float a, float b)
{
	union { float f; uint32_t u; } ua, ub, r;

	ua.f = a;
	ub.f = b;
	r.u = (ua.u & mask) | (ub.u & ~mask);
	return r.f;
}

/* tanh: (1 - e^-2|x|) / (1 + e^-2|x|), a series below |x| = 1/8. */
static inline float
vtanhf(float x, float lo, float hi)
{
	union { float f; uint32_t u; } ax;
	float t, r, x2, series;

	ax.f = fabs(x);
	t = vexpf(-2.0f * ax.f, lo, hi);
	r = copysign((1.0f - t) / (1.0f + t), x);
	x2 = x * x;
	series = x * (1.0f + x2 * (-1.0f / 3 + x2 * (2.0f / 15 +
	    x2 * (-17.0f / 315))));
	return fsel(-(uint32_t)(ax.u < 0x3e000000u), series, r);
}

typedef void (*un_fn)(void *o, const void *a, int64_t n,
    const struct uparam *p);

#define UN_FN(name, TI, TO, ...)					\
static void								\
name(void *o_, const void *a_, int64_t n, const struct uparam *p)	\
{									\
	typedef TI T;							\
	TO *restrict o = o_;						\
	const T *restrict a = a_;					\
	const T alpha = (T)p->alpha;					\
	const T beta = (T)p->beta;					\
	const T gamma = (T)p->gamma;					\
	const T lo = (T)p->ilo;						\
	const T hi = (T)p->ihi;						\
	const float elo = p->elo;					\
	const float ehi = p->ehi;					\
									\
	(void)alpha; (void)beta; (void)gamma; (void)lo; (void)hi;	\
	(void)elo; (void)ehi;						\
	SIMD							\
	for (int64_t i = 0; i < n; i++) {				\
		T x = a[i];						\
		TO y;							\
		__VA_ARGS__;						\
		o[i] = y;						\
	}								\
}

#define UN_FLT(op, ...)							\
	UN_FN(op##_f32, float, float, __VA_ARGS__)			\
	UN_FN(op##_f64, double, double, __VA_ARGS__)
#define UN_SINT(op, ...)						\
	UN_FN(op##_i8, int8_t, int8_t, __VA_ARGS__)			\
	UN_FN(op##_i16, int16_t, int16_t, __VA_ARGS__)			\
	UN_FN(op##_i32, int32_t, int32_t, __VA_ARGS__)			\
	UN_FN(op##_i64, int64_t, int64_t, __VA_ARGS__)
#define UN_UINT(op, ...)						\
	UN_FN(op##_u8, uint8_t, uint8_t, __VA_ARGS__)			\
	UN_FN(op##_u16, uint16_t, uint16_t, __VA_ARGS__)		\
	UN_FN(op##_u32, uint32_t, uint32_t, __VA_ARGS__)		\
	UN_FN(op##_u64, uint64_t, uint64_t, __VA_ARGS__)

#define UN_OP(op, cost, tab, setup)					\
static int								\
run_##op(struct op_ctx *c)						\
{									\
	static const un_fn fns[NDT] = { tab };				\
	struct uparam p = { 0 };					\
									\
	setup;								\
	return run_unary(c, fns, &p, 0, cost);				\
}

struct un_job {
	un_fn f;
	char *o;
	const char *a;
	size_t eo, ea;
	const struct uparam *p;
	int64_t n;			/* elements in all */
};

static int run_unary(struct op_ctx *, const un_fn *, const struct uparam *,
    int, int64_t);

#define NOSETUP (void)c
#define COMMA ,

UN_FLT(sqrt, y = sqrt(x))
UN_FLT(exp, y = exp(x))
UN_FLT(log, y = log(x))
UN_FLT(abs, y = fabs(x))
UN_SINT(abs, y = x < 0 ? WRAP(0 - (uint64_t)x) : x)
UN_UINT(abs, y = x)
UN_FLT(neg, y = -x)
UN_SINT(neg, y = WRAP(0 - (uint64_t)x))
UN_FLT(reciprocal, y = 1 / x)
UN_FLT(floor, y = floor(x))
UN_FLT(ceil, y = ceil(x))
UN_FLT(round, y = rint(x))
UN_FLT(sign, y = x > 0 ? 1 : x < 0 ? -1 : x)
UN_SINT(sign, y = x > 0 ? 1 : x < 0 ? -1 : 0)
UN_UINT(sign, y = x > 0)
UN_FLT(sin, y = sin(x))
UN_FLT(cos, y = cos(x))
UN_FLT(tan, y = tan(x))
UN_FLT(asin, y = asin(x))
UN_FLT(acos, y = acos(x))
UN_FLT(atan, y = atan(x))
UN_FLT(sinh, y = sinh(x))
UN_FLT(cosh, y = cosh(x))
UN_FLT(asinh, y = asinh(x))
UN_FLT(acosh, y = acosh(x))
UN_FLT(atanh, y = atanh(x))
UN_FLT(erf, y = erf(x))
UN_FLT(relu, y = x < 0 ? 0 : x)
UN_SINT(relu, y = x < 0 ? 0 : x)
/* max(x, 0) + alpha * min(x, 0): selects gcc vectorises, NaN kept */
UN_FLT(leaky_relu, y = (x < 0 ? 0 : x) + alpha * (x > 0 ? 0 : x))
UN_FLT(elu, y = x < 0 ? alpha * expm1(x) : x)
UN_FLT(selu, y = x <= 0 ? gamma * alpha * expm1(x) : gamma * x)
UN_FLT(celu, y = x > 0 ? x : alpha * expm1(x / alpha))
UN_FN(sigmoid_f32, float, float, y = 1.0f / (1.0f + vexpf(-x, elo, ehi)))
UN_FN(sigmoid_f64, double, double, y = 1 / (1 + exp(-x)))
UN_FLT(hard_sigmoid, T v = alpha * x + beta; y = v < 0 ? 0 : v > 1 ? 1 : v)
/* HardSwish's 0 and 1 come in lo and hi: constants make gcc split the loop */
UN_FLT(hard_swish, T v = alpha * x + beta; v = v < lo ? lo : v;
    v = v > hi ? hi : v; y = x * v)
UN_FN(tanh_f32, float, float, y = vtanhf(x, elo, ehi))
UN_FN(tanh_f64, double, double, y = tanh(x))
/* 1 + erf(z) = erfc(-z), 1 + tanh(u) = 2 / (1 + exp(-2u)): no cancellation */
UN_FLT(gelu, y = (T)0.5 * x * erfc(-x * (T)M_SQRT1_2))
UN_FN(gelu_tanh_f32, float, float,
    y = x / (1.0f + vexpf(-1.5957691216057308f * (x + 0.044715f * x * x * x),
    elo, ehi)))
UN_FN(gelu_tanh_f64, double, double, y = x / (1 + exp(-1.5957691216057308 *
    (x + 0.044715 * x * x * x))))
UN_FLT(softplus, y = x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)))
UN_FLT(softsign, y = x / (1 + fabs(x)))
UN_FLT(mish, T sp = x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
    y = x * tanh(sp))
UN_FLT(thresholded_relu, y = x > alpha ? x : 0)
UN_FLT(shrink, y = x < -gamma ? x + beta : x > gamma ? x - beta : 0)
/* min(max(x, lo), hi): all hi when lo > hi, as the spec says */
UN_FLT(clip, T v = x < alpha ? alpha : x; y = v > beta ? beta : v)
UN_SINT(clip, T v = x < lo ? lo : x; y = v > hi ? hi : v)
UN_UINT(clip, T v = x < lo ? lo : x; y = v > hi ? hi : v)
UN_FN(isnan_f32, float, uint8_t, y = isnan(x))
UN_FN(isnan_f64, double, uint8_t, y = isnan(x))
UN_FN(isinf_f32, float, uint8_t,
    y = isinf(x) && (x > 0 ? alpha != 0 : beta != 0))
UN_FN(isinf_f64, double, uint8_t,
    y = isinf(x) && (x > 0 ? alpha != 0 : beta != 0))
UN_FN(not_b, uint8_t, uint8_t, y = !x)

UN_OP(sqrt, PAR_CHEAP, TAB_FLT(sqrt), NOSETUP)
UN_OP(exp, PAR_HEAVY, TAB_FLT(exp), NOSETUP)
UN_OP(log, PAR_HEAVY, TAB_FLT(log), NOSETUP)
UN_OP(abs, PAR_CHEAP, TAB_FLT(abs) COMMA TAB_SINT(abs) COMMA TAB_UINT(abs),
    NOSETUP)
UN_OP(neg, PAR_CHEAP, TAB_FLT(neg) COMMA TAB_SINT(neg), NOSETUP)
UN_OP(reciprocal, PAR_CHEAP, TAB_FLT(reciprocal), NOSETUP)
UN_OP(floor, PAR_CHEAP, TAB_FLT(floor), NOSETUP)
UN_OP(ceil, PAR_CHEAP, TAB_FLT(ceil), NOSETUP)
UN_OP(round, PAR_CHEAP, TAB_FLT(round), NOSETUP)
UN_OP(sign, PAR_CHEAP, TAB_FLT(sign) COMMA TAB_SINT(sign) COMMA TAB_UINT(sign),
    NOSETUP)
UN_OP(sin, PAR_HEAVY, TAB_FLT(sin), NOSETUP)
UN_OP(cos, PAR_HEAVY, TAB_FLT(cos), NOSETUP)
UN_OP(tan, PAR_HEAVY, TAB_FLT(tan), NOSETUP)
UN_OP(asin, PAR_HEAVY, TAB_FLT(asin), NOSETUP)
UN_OP(acos, PAR_HEAVY, TAB_FLT(acos), NOSETUP)
UN_OP(atan, PAR_HEAVY, TAB_FLT(atan), NOSETUP)
UN_OP(sinh, PAR_HEAVY, TAB_FLT(sinh), NOSETUP)
UN_OP(cosh, PAR_HEAVY, TAB_FLT(cosh), NOSETUP)
UN_OP(asinh, PAR_HEAVY, TAB_FLT(asinh), NOSETUP)
UN_OP(acosh, PAR_HEAVY, TAB_FLT(acosh), NOSETUP)
UN_OP(atanh, PAR_HEAVY, TAB_FLT(atanh), NOSETUP)
UN_OP(erf, PAR_HEAVY, TAB_FLT(erf), NOSETUP)
UN_OP(relu, PAR_CHEAP, TAB_FLT(relu) COMMA TAB_SINT(relu), NOSETUP)
UN_OP(leaky_relu, PAR_CHEAP, TAB_FLT(leaky_relu),
    p.alpha = attr_float(c->node, "alpha", 0.01f))
UN_OP(elu, PAR_HEAVY, TAB_FLT(elu),
    p.alpha = attr_float(c->node, "alpha", 1.0f))
UN_OP(selu, PAR_HEAVY, TAB_FLT(selu),
    p.alpha = attr_float(c->node, "alpha", 1.67326319217681884765625f);
    p.gamma = attr_float(c->node, "gamma", 1.05070102214813232421875f))
UN_OP(celu, PAR_HEAVY, TAB_FLT(celu),
    p.alpha = attr_float(c->node, "alpha", 1.0f))
UN_OP(sigmoid, PAR_HEAVY, TAB_FLT(sigmoid), NOSETUP)
UN_OP(hard_sigmoid, PAR_CHEAP, TAB_FLT(hard_sigmoid),
    p.alpha = attr_float(c->node, "alpha", 0.2f);
    p.beta = attr_float(c->node, "beta", 0.5f))
UN_OP(hard_swish, PAR_CHEAP, TAB_FLT(hard_swish),
    p.alpha = 1.0 / 6; p.beta = 0.5; p.ilo = 0; p.ihi = 1)
UN_OP(tanh, PAR_HEAVY, TAB_FLT(tanh), NOSETUP)
UN_OP(softplus, PAR_HEAVY, TAB_FLT(softplus), NOSETUP)
UN_OP(softsign, PAR_CHEAP, TAB_FLT(softsign), NOSETUP)
UN_OP(mish, PAR_HEAVY, TAB_FLT(mish), NOSETUP)
UN_OP(thresholded_relu, PAR_CHEAP, TAB_FLT(thresholded_relu),
    p.alpha = attr_float(c->node, "alpha", 1.0f))
UN_OP(shrink, PAR_CHEAP, TAB_FLT(shrink),
    p.beta = attr_float(c->node, "bias", 0.0f);
    p.gamma = attr_float(c->node, "lambd", 0.5f))
UN_OP(not, PAR_CHEAP, [DT_BOOL] = not_b, NOSETUP)

/* par_for chunk it: elements [it * CHUNK, ...) of a unary op. */
static void
un_chunk(void *ctx, int64_t it, int w)
{
	const struct un_job *j = ctx;
	int64_t start = it * CHUNK;
	int64_t len = j->n - start < CHUNK ? j->n - start : CHUNK;

	(void)w;
	j->f(j->o + start * j->eo, j->a + start * j->ea, len, j->p);
}

/*
 * y = f(x) elementwise; odt: output type, 0 for the input's; par_min:
 * PAR_CHEAP or PAR_HEAVY.
 */
static int
run_unary(struct op_ctx *c, const un_fn *fns, const struct uparam *p, int odt,
    int64_t par_min)
{
	const struct tensor *x, *ux;
	struct tensor tx = { 0 }, res = { 0 };
	struct un_job job;
	struct uparam q;
	int threads;
	int64_t n, items;
	int dt, wdt, rc = -1;

	if (c->nin < 1 || !c->in[0])
		return err_set(c->err, "input 0 is missing");
	x = c->in[0];
	dt = x->dtype;
	if ((wdt = work_type(dt)) < 0 || !fns[wdt])
		return err_set(c->err, "element type %s is not supported",
		    ops_type_name(dt));
	if (as_float(x, &tx, &ux, c->err) < 0)
		return -1;
	if (tensor_alloc_like_uninit(&res, odt ? odt : wdt, ux, c->err) < 0)
		goto out;
	q = *p;
	q.elo = -104.0f;
	q.ehi = 89.0f;
	job.f = fns[wdt];
	job.o = res.data;
	job.a = ux->data;
	job.eo = dtype_size(res.dtype);
	job.ea = dtype_size(wdt);
	job.p = &q;
	n = ux->nelem;
	items = (n + CHUNK - 1) / CHUNK;
	threads = nthreads(c, n, par_min);
	job.n = n;
	par_for(items, threads, un_chunk, &job);
	rc = store_as(&c->out[0], &res, odt ? odt : dt, c->err);
out:
	tensor_release(&tx);
	tensor_release(&res);
	return rc;
}

static int
run_gelu(struct op_ctx *c)
{
	static const un_fn exact[NDT] = { TAB_FLT(gelu) };
	static const un_fn approx[NDT] = { TAB_FLT(gelu_tanh) };
	struct uparam p = { 0 };
	char buf[16];
	const char *a = attr_string(c->node, "approximate", "none", buf,
	    sizeof buf);

	if (strcmp(a, "none") == 0)
		return run_unary(c, exact, &p, 0, PAR_HEAVY);
	if (strcmp(a, "tanh") == 0)
		return run_unary(c, approx, &p, 0, PAR_HEAVY);
	return err_set(c->err, "approximate must be none or tanh, not '%s'", a);
}

static int
run_isnan(struct op_ctx *c)
{
	static const un_fn fns[NDT] = { TAB_FLT(isnan) };
	struct uparam p = { 0 };

	return run_unary(c, fns, &p, DT_BOOL, PAR_CHEAP);
}

static int
run_isinf(struct op_ctx *c)
{
	static const un_fn fns[NDT] = { TAB_FLT(isinf) };
	struct uparam p = { 0 };

	p.alpha = attr_int(c->node, "detect_positive", 1) != 0;
	p.beta = attr_int(c->node, "detect_negative", 1) != 0;
	return run_unary(c, fns, &p, DT_BOOL, PAR_CHEAP);
}

/* A Clip bound from an optional scalar input of the data's type. */
static int
clip_bound(struct op_ctx *c, int i, double *f, int64_t *bits)
{
	const struct tensor *t = ops_input(c, i);

	if (!t)
		return 0;
	if (t->dtype != c->in[0]->dtype)
		return err_set(c->err, "input %d: type %s differs from the "
		    "input's %s", i, ops_type_name(t->dtype),
		    ops_type_name(c->in[0]->dtype));
	if (t->nelem != 1)
		return err_set(c->err, "input %d: expected a scalar, got %lld "
		    "elements", i, (long long)t->nelem);
	if (dtype_is_float(t->dtype)) {
		*f = tensor_get(t, 0);
		return 0;
	}
	switch (t->dtype) {
	case DT_INT8: *bits = *(const int8_t *)t->data; break;
	case DT_INT16: *bits = *(const int16_t *)t->data; break;
	case DT_INT32: *bits = *(const int32_t *)t->data; break;
	case DT_INT64: *bits = *(const int64_t *)t->data; break;
	case DT_UINT8: *bits = *(const uint8_t *)t->data; break;
	case DT_UINT16: *bits = *(const uint16_t *)t->data; break;
	case DT_UINT32: *bits = *(const uint32_t *)t->data; break;
	case DT_UINT64: *bits = (int64_t)*(const uint64_t *)t->data; break;
	}
	return 0;
}

static int
run_clip(struct op_ctx *c)
{
	static const un_fn fns[NDT] = { TAB_FLT(clip), TAB_SINT(clip),
		TAB_UINT(clip) };
	struct uparam p = { 0 };
	int dt;

	if (c->nin < 1 || !c->in[0])
		return err_set(c->err, "input 0 is missing");
	dt = c->in[0]->dtype;
	if (dtype_is_float(dt)) {
		p.alpha = -INFINITY;
		p.beta = INFINITY;
	} else if (dtype_int_range(dt, &p.ilo, &p.ihi) == 0 &&
	    dt == DT_UINT64)
		p.ihi = -1;	/* UINT64_MAX as a bit pattern */
	if (c->opset < 11) {
		/* integer types came with opset 12 */
		if (!dtype_is_float(dt))
			return err_set(c->err, "element type %s is not "
			    "supported", ops_type_name(dt));
		p.alpha = attr_float(c->node, "min", -FLT_MAX);
		p.beta = attr_float(c->node, "max", FLT_MAX);
	} else if (clip_bound(c, 1, &p.alpha, &p.ilo) < 0 ||
	    clip_bound(c, 2, &p.beta, &p.ihi) < 0)
		return -1;
	return run_unary(c, fns, &p, 0, PAR_CHEAP);
}

static int
run_identity(struct op_ctx *c)
{
	if (need_inputs(c, 1, 1) < 0)
		return -1;
	return tensor_copy(&c->out[0], c->in[0], c->err);
}

/*
 * Dropout at inference is the identity; the optional mask is all true
 * (bool from opset 10, the data's type before). Training mode with a
 * non-zero ratio would need random numbers and is refused.
 */
static int
run_dropout(struct op_ctx *c)
{
	const struct tensor *x, *ratio, *train;
	double r = 0;
	int mdt;

	if (c->nin < 1 || !c->in[0])
		return err_set(c->err, "input 0 is missing");
	x = c->in[0];
	if ((ratio = ops_input(c, 1)) && ratio->nelem != 1)
		return err_set(c->err, "ratio must be a scalar");
	if ((train = ops_input(c, 2)) && (train->dtype != DT_BOOL ||
	    train->nelem != 1))
		return err_set(c->err, "training_mode must be a bool scalar");
	if (train && ((const uint8_t *)train->data)[0]) {
		r = ratio ? tensor_get(ratio, 0) : 0.5;
		if (r != 0)
			return err_set(c->err, "dropout in training mode "
			    "(ratio %g) is not supported", r);
	}
	if (tensor_copy(&c->out[0], x, c->err) < 0)
		return -1;
	if (ops_want_output(c, 1)) {
		mdt = c->opset >= 10 ? DT_BOOL : x->dtype;
		if (tensor_alloc_like(&c->out[1], mdt, x, c->err) < 0)
			return -1;
		for (int64_t i = 0; i < x->nelem; i++)
			tensor_set(&c->out[1], i, 1);
	}
	return 0;
}

const struct op_def op_math_defs[] = {
	{ "", "Abs", run_abs, NULL },
	{ "", "Acos", run_acos, NULL },
	{ "", "Acosh", run_acosh, NULL },
	{ "", "Add", run_add, NULL },
	{ "", "And", run_and, NULL },
	{ "", "Asin", run_asin, NULL },
	{ "", "Asinh", run_asinh, NULL },
	{ "", "Atan", run_atan, NULL },
	{ "", "Atanh", run_atanh, NULL },
	{ "", "BitShift", run_bitshift, NULL },
	{ "", "Ceil", run_ceil, NULL },
	{ "", "Celu", run_celu, NULL },
	{ "", "Clip", run_clip, NULL },
	{ "", "Cos", run_cos, NULL },
	{ "", "Cosh", run_cosh, NULL },
	{ "", "Div", run_div, NULL },
	{ "", "Dropout", run_dropout, NULL },
	{ "", "Elu", run_elu, NULL },
	{ "", "Equal", run_equal, NULL },
	{ "", "Erf", run_erf, NULL },
	{ "", "Exp", run_exp, NULL },
	{ "", "Floor", run_floor, NULL },
	{ "", "Gelu", run_gelu, NULL },
	{ "", "Greater", run_greater, NULL },
	{ "", "GreaterOrEqual", run_greater_equal, NULL },
	{ "", "HardSigmoid", run_hard_sigmoid, NULL },
	{ "", "HardSwish", run_hard_swish, NULL },
	{ "", "Identity", run_identity, NULL },
	{ "", "IsInf", run_isinf, NULL },
	{ "", "IsNaN", run_isnan, NULL },
	{ "", "LeakyRelu", run_leaky_relu, NULL },
	{ "", "Less", run_less, NULL },
	{ "", "LessOrEqual", run_less_equal, NULL },
	{ "", "Log", run_log, NULL },
	{ "", "Max", run_max, NULL },
	{ "", "Mean", run_mean, NULL },
	{ "", "Min", run_min, NULL },
	{ "", "Mish", run_mish, NULL },
	{ "", "Mod", run_mod, NULL },
	{ "", "Mul", run_mul, NULL },
	{ "", "Neg", run_neg, NULL },
	{ "", "Not", run_not, NULL },
	{ "", "Or", run_or, NULL },
	{ "", "Pow", run_pow, NULL },
	{ "", "PRelu", run_prelu, NULL },
	{ "", "Reciprocal", run_reciprocal, NULL },
	{ "", "Relu", run_relu, NULL },
	{ "", "Round", run_round, NULL },
	{ "", "Selu", run_selu, NULL },
	{ "", "Shrink", run_shrink, NULL },
	{ "", "Sigmoid", run_sigmoid, NULL },
	{ "", "Sign", run_sign, NULL },
	{ "", "Sin", run_sin, NULL },
	{ "", "Sinh", run_sinh, NULL },
	{ "", "Softplus", run_softplus, NULL },
	{ "", "Softsign", run_softsign, NULL },
	{ "", "Sqrt", run_sqrt, NULL },
	{ "", "Sub", run_sub, NULL },
	{ "", "Sum", run_sum, NULL },
	{ "", "Tan", run_tan, NULL },
	{ "", "Tanh", run_tanh, NULL },
	{ "", "ThresholdedRelu", run_thresholded_relu, NULL },
	{ "", "Where", run_where, NULL },
	{ "", "Xor", run_xor, NULL },
	{ NULL, NULL, NULL, NULL },
};
