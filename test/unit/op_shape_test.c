/*
 * op_shape_test: the data-movement kernels of lib/op_shape.c, called
 * directly through struct op_ctx. Reorderings (Transpose, Slice, Pad,
 * Tile, Expand, DepthToSpace) are checked against naive element-by-element
 * references over many shapes and element types; error cases check that
 * hostile shapes and indices fail with a message instead of allocating or
 * reading out of bounds. Needs only libonnxq.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "optest.h"

static int
run_op(struct tnode *t, int opset, const struct tensor **in, int nin,
    struct tensor *out, int nout, struct err *e)
{
	return op_run_in("", t, opset, in, nin, out, nout, 2, e);
}

static int64_t
rand_range(int64_t lo, int64_t hi)
{
	return lo + (int64_t)(optest_rand() % (uint64_t)(hi - lo + 1));
}

/* A tensor with random bytes (any element type works for data movement). */
static void
make_random(struct tensor *t, int dtype, int rank, const int64_t *dims)
{
	struct err e;
	size_t i, n;

	if (tensor_alloc(t, dtype, rank, dims, &e) == -1)
		abort();
	n = (size_t)t->nelem * dtype_size(dtype);
	for (i = 0; i < n; i++)
		((unsigned char *)t->data)[i] = (unsigned char)optest_rand();
	if (dtype == DT_BOOL)
		for (i = 0; i < n; i++)
			((unsigned char *)t->data)[i] &= 1;
}

static void
make_ints(struct tensor *t, int dtype, const int64_t *v, int64_t n)
{
	struct err e;
	int64_t i;

	if (tensor_alloc(t, dtype, 1, &n, &e) == -1)
		abort();
	for (i = 0; i < n; i++)
		if (dtype == DT_INT64)
			((int64_t *)t->data)[i] = v[i];
		else
			((int32_t *)t->data)[i] = (int32_t)v[i];
}

static void
make_floats(struct tensor *t, int rank, const int64_t *dims, const float *v)
{
	struct err e;

	if (tensor_alloc(t, DT_FLOAT, rank, dims, &e) == -1)
		abort();
	memcpy(t->data, v, (size_t)t->nelem * sizeof(float));
}

static void
unravel(int64_t flat, int rank, const int64_t *dims, int64_t *idx)
{
	int k;

	for (k = rank - 1; k >= 0; k--) {
		idx[k] = flat % dims[k];
		flat /= dims[k];
	}
}

static int64_t
ravel(int rank, const int64_t *dims, const int64_t *idx)
{
	int64_t f = 0;
	int k;

	for (k = 0; k < rank; k++)
		f = f * dims[k] + idx[k];
	return f;
}

static int
same_elem(const struct tensor *a, int64_t i, const struct tensor *b, int64_t j)
{
	size_t esz = dtype_size(a->dtype);

	return memcmp((const char *)a->data + i * esz,
	    (const char *)b->data + j * esz, esz) == 0;
}

static int
floats_are(const struct tensor *t, const float *want, int64_t n)
{
	int64_t i;

	if (t->dtype != DT_FLOAT || t->nelem != n)
		return 0;
	for (i = 0; i < n; i++)
		if (((const float *)t->data)[i] != want[i])
			return 0;
	return 1;
}

/* ------------------------------------------------------------------ */

static void
check_transpose(int dtype, int rank, const int64_t *dims, const int64_t *perm)
{
	struct tnode nd;
	struct tensor x, y = { 0 };
	const struct tensor *in[1] = { &x };
	int64_t i, oi[TENSOR_MAX_RANK], ii[TENSOR_MAX_RANK], bad = 0;
	struct err e;
	int k;

	make_random(&x, dtype, rank, dims);
	node_init(&nd, "Transpose");
	node_ints(&nd, "perm", perm, (size_t)rank);
	if (run_op(&nd, 13, in, 1, &y, 1, &e) != 0) {
		CHECK_EQ_STR(e.msg, "");
		tensor_release(&x);
		return;
	}
	for (k = 0; k < rank; k++)
		CHECK_EQ_INT(y.dims[k], dims[perm[k]]);
	for (i = 0; i < y.nelem && bad == 0; i++) {
		unravel(i, rank, y.dims, oi);
		for (k = 0; k < rank; k++)
			ii[perm[k]] = oi[k];
		bad += !same_elem(&y, i, &x, ravel(rank, dims, ii));
	}
	CHECK_EQ_INT(bad, 0);
	tensor_release(&x);
	tensor_release(&y);
}

static void
test_transpose_perms(void)
{
	static const int types[] = { DT_FLOAT, DT_INT8, DT_INT64, DT_FLOAT16,
	    DT_BOOL, DT_DOUBLE };
	static const int64_t small[] = { 3, 5, 7, 11 };
	static const int64_t ones[] = { 1, 6, 1, 9 };
	static const int64_t big[] = { 2, 48, 64, 40 };
	int64_t perm[4];
	int a, b, cc, t;

	for (a = 0; a < 4; a++)
		for (b = 0; b < 4; b++)
			for (cc = 0; cc < 4; cc++) {
				if (a == b || a == cc || b == cc)
					continue;
				perm[0] = a;
				perm[1] = b;
				perm[2] = cc;
				perm[3] = 6 - a - b - cc;
				for (t = 0; t < 6; t++)
					check_transpose(types[t], 4, small,
					    perm);
				check_transpose(DT_FLOAT, 4, ones, perm);
				check_transpose(DT_FLOAT, 4, big, perm);
			}
}

static void
test_transpose_ranks(void)
{
	static const int64_t d5[] = { 2, 3, 1, 4, 5 }, p5[] = { 4, 0, 3, 2, 1 };
	static const int64_t d2[] = { 67, 129 }, p2[] = { 1, 0 };
	static const int64_t d1[] = { 5 }, p1[] = { 0 };
	static const int64_t d0[] = { 7, 0, 3 }, p0[] = { 2, 0, 1 };
	struct tnode nd;
	struct tensor x, y = { 0 };
	const struct tensor *in[1] = { &x };
	int64_t dims[3] = { 2, 3, 4 }, i, oi[3], ii[3], bad = 0;
	struct err e;

	check_transpose(DT_FLOAT, 5, d5, p5);
	check_transpose(DT_UINT16, 2, d2, p2);
	check_transpose(DT_INT32, 1, d1, p1);
	check_transpose(DT_FLOAT, 3, d0, p0);
	/* No perm: reverse the axes. */
	make_random(&x, DT_INT32, 3, dims);
	node_init(&nd, "Transpose");
	REQUIRE(run_op(&nd, 13, in, 1, &y, 1, &e) == 0);
	CHECK(y.dims[0] == 4 && y.dims[1] == 3 && y.dims[2] == 2);
	for (i = 0; i < y.nelem; i++) {
		unravel(i, 3, y.dims, oi);
		ii[0] = oi[2], ii[1] = oi[1], ii[2] = oi[0];
		bad += !same_elem(&y, i, &x, ravel(3, dims, ii));
	}
	CHECK_EQ_INT(bad, 0);
	tensor_release(&y);
	/* Not a permutation. */
	node_ints(&nd, "perm", (const int64_t[]){ 0, 0, 1 }, 3);
	CHECK(run_op(&nd, 13, in, 1, &y, 1, &e) == -1);
	CHECK(strstr(e.msg, "permutation") != NULL);
	tensor_release(&x);
}

/* Slice reference: walk each axis index by index, as numpy does. */
static void
test_slice_random(void)
{
	struct tnode nd;
	struct tensor x, y, ts, te, ta, tst;
	const struct tensor *in[5] = { &x, &ts, &te, &ta, &tst };
	int64_t dims[4], starts[4], ends[4], axes[4], steps[4];
	int64_t lists[4][64], counts[4], i, idx[4], src[4], bad;
	static const int64_t special[] = { INT64_MIN, INT64_MAX, -1000, 1000 };
	int iter, r, n, k, j, a, used[4], ok;
	struct err e;

	for (iter = 0; iter < 3000; iter++) {
		r = (int)rand_range(1, 4);
		for (k = 0; k < r; k++)
			dims[k] = rand_range(0, 6);
		make_random(&x, iter % 2 ? DT_FLOAT : DT_INT16, r, dims);
		n = (int)rand_range(1, r);
		memset(used, 0, sizeof(used));
		for (k = 0; k < r; k++) {
			lists[k][0] = 0;
			counts[k] = dims[k];
			for (j = 0; j < dims[k]; j++)
				lists[k][j] = j;
		}
		for (j = 0; j < n; j++) {
			do
				a = (int)rand_range(0, r - 1);
			while (used[a]);
			used[a] = 1;
			axes[j] = rand_range(0, 1) ? a : a - r;
			starts[j] = rand_range(0, 5) == 0 ?
			    special[rand_range(0, 3)] : rand_range(-9, 9);
			ends[j] = rand_range(0, 5) == 0 ?
			    special[rand_range(0, 3)] : rand_range(-9, 9);
			do
				steps[j] = rand_range(-3, 3);
			while (steps[j] == 0);
			{
				int64_t d = dims[a], s = starts[j];
				int64_t en = ends[j], st = steps[j], v;

				/* The spec, literally: add dim, then clamp. */
				if (s < 0)
					s += d;
				if (en < 0)
					en += d;
				if (st > 0) {
					s = s > d ? d : s < 0 ? 0 : s;
					en = en > d ? d : en < 0 ? 0 : en;
				} else {
					s = s > d - 1 ? d - 1 : s < 0 ? 0 : s;
					en = en > d - 1 ? d - 1 : en < -1 ? -1 :
					    en;
				}
				counts[a] = 0;
				for (v = s; st > 0 ? v < en : v > en; v += st)
					if (v >= 0 && v < d)
						lists[a][counts[a]++] = v;
			}
		}
		make_ints(&ts, DT_INT64, starts, n);
		make_ints(&te, DT_INT32, ends, n);
		/* int32 ends: keep the specials representable. */
		for (j = 0; j < n; j++)
			if (ends[j] > INT32_MAX || ends[j] < INT32_MIN)
				((int32_t *)te.data)[j] = ends[j] > 0 ?
				    INT32_MAX : INT32_MIN;
		make_ints(&ta, DT_INT64, axes, n);
		make_ints(&tst, DT_INT64, steps, n);
		node_init(&nd, "Slice");
		memset(&y, 0, sizeof(y));
		ok = run_op(&nd, 13, in, 5, &y, 1, &e) == 0;
		CHECK_EQ_STR(e.msg, "");
		bad = 0;
		if (ok) {
			for (k = 0; k < r; k++)
				bad += y.dims[k] != counts[k];
			for (i = 0; i < y.nelem && bad == 0; i++) {
				unravel(i, r, y.dims, idx);
				for (k = 0; k < r; k++)
					src[k] = lists[k][idx[k]];
				bad += !same_elem(&y, i, &x, ravel(r, dims,
				    src));
			}
		}
		CHECK_EQ_INT(bad, 0);
		tensor_release(&x);
		tensor_release(&y);
		tensor_release(&ts);
		tensor_release(&te);
		tensor_release(&ta);
		tensor_release(&tst);
		if (!ok || bad)
			break;
	}
}

static void
test_slice_attrs(void)
{
	/* Opset 1..9: starts/ends/axes are attributes; numpy x[1:-1, ::]. */
	static const float v[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
	static const float want[] = { 5, 6, 7, 8 };
	static const float want2[] = { 12, 10 };
	struct tnode nd;
	struct tensor x, y = { 0 }, ts, te, tst;
	const struct tensor *in[5] = { &x, &ts, &te, NULL, &tst };
	int64_t dims[2] = { 3, 4 };
	struct err e;

	make_floats(&x, 2, dims, v);
	node_init(&nd, "Slice");
	node_ints(&nd, "starts", (const int64_t[]){ 1 }, 1);
	node_ints(&nd, "ends", (const int64_t[]){ -1 }, 1);
	REQUIRE(run_op(&nd, 9, in, 1, &y, 1, &e) == 0);
	CHECK(y.dims[0] == 1 && y.dims[1] == 4);
	CHECK(floats_are(&y, want, 4));
	tensor_release(&y);
	/* Absent axes (NULL input) but steps given: x[2:0:-1, 3:0:-2]. */
	make_ints(&ts, DT_INT64, (const int64_t[]){ 2, 3 }, 2);
	make_ints(&te, DT_INT64, (const int64_t[]){ 1, 0 }, 2);
	make_ints(&tst, DT_INT64, (const int64_t[]){ -1, -2 }, 2);
	node_init(&nd, "Slice");
	REQUIRE(run_op(&nd, 13, in, 5, &y, 1, &e) == 0);
	CHECK(y.rank == 2 && y.dims[0] == 1 && y.dims[1] == 2);
	CHECK(floats_are(&y, want2, 2));
	tensor_release(&y);
	/* A zero step is an error. */
	((int64_t *)tst.data)[1] = 0;
	CHECK(run_op(&nd, 13, in, 5, &y, 1, &e) == -1);
	CHECK(strstr(e.msg, "zero") != NULL);
	tensor_release(&x);
	tensor_release(&ts);
	tensor_release(&te);
	tensor_release(&tst);
}

static void
test_gather(void)
{
	static const float v[] = { 1, 2, 3, 4, 5, 6 };
	static const float want0[] = { 5, 6, 1, 2, 5, 6 };
	static const float want1[] = { 2, 1, 5, 4 };
	struct tnode nd;
	struct tensor x, idx, y = { 0 };
	const struct tensor *in[2] = { &x, &idx };
	int64_t dims[2] = { 3, 2 };
	struct err e;

	make_floats(&x, 2, dims, v);
	make_ints(&idx, DT_INT64, (const int64_t[]){ -1, 0, 2 }, 3);
	node_init(&nd, "Gather");
	REQUIRE(run_op(&nd, 13, in, 2, &y, 1, &e) == 0);
	CHECK(y.rank == 2 && y.dims[0] == 3 && y.dims[1] == 2);
	CHECK(floats_are(&y, want0, 6));
	tensor_release(&y);
	tensor_release(&idx);
	/* axis -1 with int32 indices. */
	dims[0] = 2;
	dims[1] = 3;
	tensor_release(&x);
	make_floats(&x, 2, dims, v);
	make_ints(&idx, DT_INT32, (const int64_t[]){ 1, 0 }, 2);
	node_init(&nd, "Gather");
	node_int(&nd, "axis", -1);
	REQUIRE(run_op(&nd, 13, in, 2, &y, 1, &e) == 0);
	CHECK(y.rank == 2 && y.dims[0] == 2 && y.dims[1] == 2);
	CHECK(floats_are(&y, want1, 4));
	tensor_release(&y);
	/* Out of range either way: an error, never a read. */
	((int32_t *)idx.data)[1] = 3;
	CHECK(run_op(&nd, 13, in, 2, &y, 1, &e) == -1);
	CHECK(strstr(e.msg, "out of range") != NULL);
	CHECK(y.data == NULL);
	((int32_t *)idx.data)[1] = -4;
	CHECK(run_op(&nd, 13, in, 2, &y, 1, &e) == -1);
	tensor_release(&idx);
	/* Float indices are refused. */
	make_floats(&idx, 1, (const int64_t[]){ 1 }, v);
	CHECK(run_op(&nd, 13, in, 2, &y, 1, &e) == -1);
	CHECK(strstr(e.msg, "int32 or int64") != NULL);
	tensor_release(&idx);
	tensor_release(&x);
}

static void
test_gather_elements_scatter(void)
{
	static const float v[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	static const float want[] = { 4, 8, 3, 7, 2, 3 };
	static const float upd[] = { 10, 20, 30, 40, 50, 60 };
	static const float want_sc[] = { 1, 50, 60, 10, 5, 6, 40, 20, 30 };
	struct tnode nd;
	struct tensor x, idx, u, y = { 0 };
	const struct tensor *in[3] = { &x, &idx, &u };
	int64_t dims[2] = { 3, 3 }, idims[2] = { 2, 3 };
	struct err e;

	make_floats(&x, 2, dims, v);
	tensor_alloc(&idx, DT_INT64, 2, idims, &e);
	memcpy(idx.data, (const int64_t[]){ 1, 2, 0, 2, 0, -3 }, 48);
	node_init(&nd, "GatherElements");
	REQUIRE(run_op(&nd, 13, in, 2, &y, 1, &e) == 0);
	CHECK(floats_are(&y, want, 6));
	tensor_release(&y);
	make_floats(&u, 2, idims, upd);
	/* Scatter back: rows 1, 2, 0 / 2, 0, 0 of each column. */
	node_init(&nd, "ScatterElements");
	memcpy(idx.data, (const int64_t[]){ 1, 2, 2, 2, 0, 0 }, 48);
	REQUIRE(run_op(&nd, 13, in, 3, &y, 1, &e) == 0);
	CHECK(floats_are(&y, want_sc, 9));
	tensor_release(&y);
	((int64_t *)idx.data)[4] = 3;
	CHECK(run_op(&nd, 13, in, 3, &y, 1, &e) == -1);
	CHECK(strstr(e.msg, "out of range") != NULL);
	tensor_release(&u);
	tensor_release(&idx);
	tensor_release(&x);
}

static void
test_reshape(void)
{
	struct tnode nd;
	struct tensor x, s, y = { 0 };
	const struct tensor *in[2] = { &x, &s };
	int64_t dims[3] = { 2, 3, 4 }, zdims[2] = { 0, 4 };
	struct err e;

	make_random(&x, DT_UINT8, 3, dims);
	node_init(&nd, "Reshape");
	make_ints(&s, DT_INT64, (const int64_t[]){ 0, -1 }, 2);
	REQUIRE(run_op(&nd, 13, in, 2, &y, 1, &e) == 0);
	CHECK(y.rank == 2 && y.dims[0] == 2 && y.dims[1] == 12);
	CHECK(memcmp(y.data, x.data, 24) == 0);
	tensor_release(&y);
	tensor_release(&s);
	make_ints(&s, DT_INT64, (const int64_t[]){ 5, -1 }, 2);
	CHECK(run_op(&nd, 13, in, 2, &y, 1, &e) == -1);
	CHECK(strstr(e.msg, "cannot reshape") != NULL);
	tensor_release(&s);
	make_ints(&s, DT_INT64, (const int64_t[]){ -1, -1 }, 2);
	CHECK(run_op(&nd, 13, in, 2, &y, 1, &e) == -1);
	tensor_release(&s);
	make_ints(&s, DT_INT64, (const int64_t[]){ 4, 7 }, 2);
	CHECK(run_op(&nd, 13, in, 2, &y, 1, &e) == -1);
	CHECK(strstr(e.msg, "into 4x7") != NULL);
	tensor_release(&s);
	make_ints(&s, DT_INT64, (const int64_t[]){ 6, -5 }, 2);
	CHECK(run_op(&nd, 13, in, 2, &y, 1, &e) == -1);
	tensor_release(&s);
	tensor_release(&x);
	/* allowzero: 0 is a real zero. */
	tensor_alloc(&x, DT_FLOAT, 2, zdims, &e);
	make_ints(&s, DT_INT64, (const int64_t[]){ 4, 0 }, 2);
	node_int(&nd, "allowzero", 1);
	REQUIRE(run_op(&nd, 14, in, 2, &y, 1, &e) == 0);
	CHECK(y.rank == 2 && y.dims[0] == 4 && y.dims[1] == 0);
	tensor_release(&y);
	/* Without it, 0 copies the input's dim: 4x4 != 0 elements. */
	node_init(&nd, "Reshape");
	CHECK(run_op(&nd, 14, in, 2, &y, 1, &e) == -1);
	tensor_release(&s);
	tensor_release(&x);
}

/* Shapes that would need terabytes fail in tensor_alloc, allocating nothing. */
static void
test_huge_outputs(void)
{
	struct tnode nd;
	struct tensor s, x, y = { 0 }, a, b, d;
	const struct tensor *in[3] = { &s, NULL, NULL };
	int64_t one = 1;
	struct err e;

	make_ints(&s, DT_INT64, (const int64_t[]){ 1 << 20, 1 << 20, 1 << 10 },
	    3);
	node_init(&nd, "ConstantOfShape");
	CHECK(run_op(&nd, 9, in, 1, &y, 1, &e) == -1);
	CHECK(strstr(e.msg, "larger than") != NULL);
	CHECK(y.data == NULL);
	tensor_release(&s);
	make_ints(&s, DT_INT64, (const int64_t[]){ INT64_MAX, INT64_MAX }, 2);
	CHECK(run_op(&nd, 9, in, 1, &y, 1, &e) == -1);
	CHECK(y.data == NULL);
	tensor_release(&s);
	make_ints(&s, DT_INT64, (const int64_t[]){ 3, -2 }, 2);
	CHECK(run_op(&nd, 9, in, 1, &y, 1, &e) == -1);
	CHECK(strstr(e.msg, "negative") != NULL);
	tensor_release(&s);

	tensor_alloc(&x, DT_FLOAT, 1, &one, &e);
	in[0] = &x;
	in[1] = &s;
	make_ints(&s, DT_INT64, (const int64_t[]){ (int64_t)1 << 40 }, 1);
	node_init(&nd, "Expand");
	CHECK(run_op(&nd, 13, in, 2, &y, 1, &e) == -1);
	CHECK(y.data == NULL);
	node_init(&nd, "Tile");
	CHECK(run_op(&nd, 13, in, 2, &y, 1, &e) == -1);
	CHECK(y.data == NULL);
	tensor_release(&s);
	make_ints(&s, DT_INT64, (const int64_t[]){ INT64_MAX }, 1);
	CHECK(run_op(&nd, 13, in, 2, &y, 1, &e) == -1);
	tensor_release(&s);
	tensor_release(&x);

	tensor_alloc(&a, DT_INT64, 0, NULL, &e);
	tensor_alloc(&b, DT_INT64, 0, NULL, &e);
	tensor_alloc(&d, DT_INT64, 0, NULL, &e);
	*(int64_t *)a.data = INT64_MIN;
	*(int64_t *)b.data = INT64_MAX;
	*(int64_t *)d.data = 1;
	in[0] = &a;
	in[1] = &b;
	in[2] = &d;
	node_init(&nd, "Range");
	CHECK(run_op(&nd, 11, in, 3, &y, 1, &e) == -1);
	CHECK(y.data == NULL);
	*(int64_t *)d.data = 0;
	CHECK(run_op(&nd, 11, in, 3, &y, 1, &e) == -1);
	CHECK(strstr(e.msg, "zero") != NULL);
	/* Exact count at the extremes: ceil((2^64 - 1) / (2^62 - 1)) = 5. */
	*(int64_t *)a.data = INT64_MAX;
	*(int64_t *)b.data = INT64_MIN;
	*(int64_t *)d.data = -(INT64_MAX / 2);
	REQUIRE(run_op(&nd, 11, in, 3, &y, 1, &e) == 0);
	REQUIRE(y.nelem == 5);
	CHECK_EQ_INT(((int64_t *)y.data)[2], INT64_MAX - 2 * (INT64_MAX / 2));
	CHECK_EQ_INT(((int64_t *)y.data)[4], INT64_MIN + 3);
	tensor_release(&y);
	tensor_release(&a);
	tensor_release(&b);
	tensor_release(&d);
}

static void
test_range_float(void)
{
	static const float want[] = { 10, 7.5, 5, 2.5 };
	struct tnode nd;
	struct tensor a, b, d, y = { 0 };
	const struct tensor *in[3] = { &a, &b, &d };
	struct err e;

	tensor_alloc(&a, DT_FLOAT, 0, NULL, &e);
	tensor_alloc(&b, DT_FLOAT, 0, NULL, &e);
	tensor_alloc(&d, DT_FLOAT, 0, NULL, &e);
	*(float *)a.data = 10;
	*(float *)b.data = 0;
	*(float *)d.data = -2.5;
	node_init(&nd, "Range");
	REQUIRE(run_op(&nd, 11, in, 3, &y, 1, &e) == 0);
	CHECK(floats_are(&y, want, 4));
	tensor_release(&y);
	*(float *)d.data = 1;
	REQUIRE(run_op(&nd, 11, in, 3, &y, 1, &e) == 0);
	CHECK_EQ_INT(y.nelem, 0);
	tensor_release(&y);
	tensor_release(&a);
	tensor_release(&b);
	tensor_release(&d);
}

static void
pad_1d(const char *mode, int opset, const int64_t *pads, int np,
    const float *want, int64_t nwant)
{
	static const float v[] = { 1, 2, 3, 4 };
	struct tnode nd;
	struct tensor x, p, cv, y = { 0 };
	const struct tensor *in[3] = { &x, &p, &cv };
	int64_t four = 4;
	struct err e;

	make_floats(&x, 1, &four, v);
	make_ints(&p, DT_INT64, pads, np);
	tensor_alloc(&cv, DT_FLOAT, 0, NULL, &e);
	*(float *)cv.data = 9;
	node_init(&nd, "Pad");
	node_str(&nd, "mode", mode);
	if (run_op(&nd, opset, in, 3, &y, 1, &e) != 0)
		CHECK_EQ_STR(e.msg, "");
	else if (!floats_are(&y, want, nwant))
		CHECK_EQ_STR(mode, "pad result");
	tensor_release(&x);
	tensor_release(&p);
	tensor_release(&cv);
	tensor_release(&y);
}

static void
test_pad(void)
{
	/* Expected values from numpy.pad. */
	static const float refl[] = { 3, 2, 1, 2, 3, 4, 3, 2, 1 };
	static const float edge[] = { 1, 1, 1, 2, 3, 4, 4, 4, 4 };
	static const float wrap[] = { 3, 4, 1, 2, 3, 4, 1, 2, 3 };
	static const float cons[] = { 9, 9, 1, 2, 3, 4, 9, 9, 9 };
	static const float crop[] = { 2, 3, 4, 9 };
	static const float crop2[] = { 3 };
	static const float refl_far[] = { 2, 3, 4, 3, 2, 1, 2, 3, 4, 3, 2 };
	static const int64_t p23[] = { 2, 3 }, pcrop[] = { -1, 1 };
	static const int64_t pcrop2[] = { -2, -1 }, pfar[] = { 5, 2 };

	pad_1d("reflect", 13, p23, 2, refl, 9);
	pad_1d("edge", 13, p23, 2, edge, 9);
	pad_1d("wrap", 19, p23, 2, wrap, 9);
	pad_1d("constant", 13, p23, 2, cons, 9);
	pad_1d("constant", 13, pcrop, 2, crop, 4);
	pad_1d("edge", 13, pcrop2, 2, crop2, 1);
	pad_1d("reflect", 13, pfar, 2, refl_far, 11);
}

static void
test_pad_2d(void)
{
	struct tnode nd;
	struct tensor x, p, ax, y = { 0 };
	const struct tensor *in[4] = { &x, &p, NULL, &ax };
	int64_t dims[3] = { 2, 3, 5 }, i, idx[3], s[3], bad = 0;
	struct err e;

	/* Edge padding of axes 1 and -1 only (opset 18 axes input). */
	make_random(&x, DT_INT16, 3, dims);
	make_ints(&p, DT_INT64, (const int64_t[]){ 2, -1, 1, 3 }, 4);
	make_ints(&ax, DT_INT32, (const int64_t[]){ 1, -1 }, 2);
	node_init(&nd, "Pad");
	node_str(&nd, "mode", "edge");
	REQUIRE(run_op(&nd, 18, in, 4, &y, 1, &e) == 0);
	CHECK(y.dims[0] == 2 && y.dims[1] == 6 && y.dims[2] == 7);
	for (i = 0; i < y.nelem; i++) {
		unravel(i, 3, y.dims, idx);
		s[0] = idx[0];
		s[1] = idx[1] - 2 < 0 ? 0 : idx[1] - 2 > 2 ? 2 : idx[1] - 2;
		s[2] = idx[2] + 1 > 4 ? 4 : idx[2] + 1;
		bad += !same_elem(&y, i, &x, ravel(3, dims, s));
	}
	CHECK_EQ_INT(bad, 0);
	tensor_release(&y);
	/* Opset 2 attributes, constant value as an attribute. */
	node_init(&nd, "Pad");
	node_ints(&nd, "pads", (const int64_t[]){ 0, 0, 1, 0, 0, 2 }, 6);
	{
		Onnx__AttributeProto *a = &nd.a[nd.n.n_attribute];

		onnx__attribute_proto__init(a);
		a->name = (char *)"value";
		a->has_f = 1;
		a->f = -7;
		nd.ap[nd.n.n_attribute++] = a;
	}
	REQUIRE(run_op(&nd, 7, in, 1, &y, 1, &e) == 0);
	CHECK(y.dims[0] == 2 && y.dims[1] == 3 && y.dims[2] == 8);
	for (i = 0; i < y.nelem; i++) {
		unravel(i, 3, y.dims, idx);
		if (idx[2] == 0 || idx[2] >= 6) {
			bad += ((int16_t *)y.data)[i] != -7;
			continue;
		}
		s[0] = idx[0];
		s[1] = idx[1];
		s[2] = idx[2] - 1;
		bad += !same_elem(&y, i, &x, ravel(3, dims, s));
	}
	CHECK_EQ_INT(bad, 0);
	tensor_release(&y);
	/* Cropping past zero is an error. */
	node_init(&nd, "Pad");
	((int64_t *)p.data)[3] = -5;
	CHECK(run_op(&nd, 18, in, 4, &y, 1, &e) == -1);
	CHECK(strstr(e.msg, "below zero") != NULL);
	/* Unknown mode. */
	node_str(&nd, "mode", "wrap");
	CHECK(run_op(&nd, 18, in, 4, &y, 1, &e) == -1);
	CHECK(strstr(e.msg, "wrap") != NULL);
	tensor_release(&x);
	tensor_release(&p);
	tensor_release(&ax);
}

static void
test_tile_expand(void)
{
	struct tnode nd;
	struct tensor x, r, y = { 0 };
	const struct tensor *in[2] = { &x, &r };
	int64_t dims[3] = { 2, 1, 3 }, i, idx[3], s[3], bad = 0;
	struct err e;

	make_random(&x, DT_FLOAT16, 3, dims);
	make_ints(&r, DT_INT64, (const int64_t[]){ 3, 4, 2 }, 3);
	node_init(&nd, "Tile");
	REQUIRE(run_op(&nd, 13, in, 2, &y, 1, &e) == 0);
	CHECK(y.dims[0] == 6 && y.dims[1] == 4 && y.dims[2] == 6);
	for (i = 0; i < y.nelem; i++) {
		unravel(i, 3, y.dims, idx);
		s[0] = idx[0] % 2, s[1] = 0, s[2] = idx[2] % 3;
		bad += !same_elem(&y, i, &x, ravel(3, dims, s));
	}
	CHECK_EQ_INT(bad, 0);
	tensor_release(&y);
	tensor_release(&r);
	/* Expand 2x1x3 to 4x2x5x3: new leading axis, 1 -> 5. */
	make_ints(&r, DT_INT64, (const int64_t[]){ 4, 1, 5, 1 }, 4);
	node_init(&nd, "Expand");
	REQUIRE(run_op(&nd, 13, in, 2, &y, 1, &e) == 0);
	REQUIRE(y.rank == 4);
	CHECK(y.dims[0] == 4 && y.dims[1] == 2 && y.dims[2] == 5 &&
	    y.dims[3] == 3);
	for (i = 0; i < y.nelem; i++) {
		int64_t o[4];

		unravel(i, 4, y.dims, o);
		s[0] = o[1], s[1] = 0, s[2] = o[3];
		bad += !same_elem(&y, i, &x, ravel(3, dims, s));
	}
	CHECK_EQ_INT(bad, 0);
	tensor_release(&y);
	tensor_release(&r);
	make_ints(&r, DT_INT64, (const int64_t[]){ 3, 1, 1 }, 3);
	CHECK(run_op(&nd, 13, in, 2, &y, 1, &e) == -1);
	CHECK(strstr(e.msg, "broadcast") != NULL);
	tensor_release(&r);
	tensor_release(&x);
}

static void
test_split(void)
{
	struct tnode nd;
	struct tensor x, s, y[3] = { { 0 } };
	const struct tensor *in[2] = { &x, &s };
	int64_t dims[2] = { 2, 7 };
	struct err e;
	int i;

	make_random(&x, DT_INT32, 2, dims);
	node_init(&nd, "Split");
	node_int(&nd, "axis", 1);
	node_int(&nd, "num_outputs", 3);
	REQUIRE(run_op(&nd, 18, in, 1, y, 3, &e) == 0);
	CHECK(y[0].dims[1] == 3 && y[1].dims[1] == 3 && y[2].dims[1] == 1);
	CHECK(memcmp(y[1].data, (int32_t *)x.data + 3, 12) == 0);
	CHECK(memcmp((int32_t *)y[1].data + 3, (int32_t *)x.data + 10,
	    12) == 0);
	CHECK(((int32_t *)y[2].data)[1] == ((int32_t *)x.data)[13]);
	for (i = 0; i < 3; i++)
		tensor_release(&y[i]);
	/* Without sizes, 7 does not split evenly into 3. */
	node_init(&nd, "Split");
	node_int(&nd, "axis", -1);
	CHECK(run_op(&nd, 13, in, 1, y, 3, &e) == -1);
	CHECK(strstr(e.msg, "evenly") != NULL);
	make_ints(&s, DT_INT64, (const int64_t[]){ 2, 0, 5 }, 3);
	REQUIRE(run_op(&nd, 13, in, 2, y, 3, &e) == 0);
	CHECK(y[0].dims[1] == 2 && y[1].dims[1] == 0 && y[2].dims[1] == 5);
	CHECK(memcmp(y[2].data, (int32_t *)x.data + 2, 20) == 0);
	for (i = 0; i < 3; i++)
		tensor_release(&y[i]);
	((int64_t *)s.data)[1] = 1;
	CHECK(run_op(&nd, 13, in, 2, y, 3, &e) == -1);
	CHECK(strstr(e.msg, "sums to more than 7") != NULL);
	((int64_t *)s.data)[1] = -1;
	CHECK(run_op(&nd, 13, in, 2, y, 3, &e) == -1);
	CHECK(strstr(e.msg, "negative") != NULL);
	((int64_t *)s.data)[0] = 1;
	((int64_t *)s.data)[1] = 0;
	CHECK(run_op(&nd, 13, in, 2, y, 3, &e) == -1);
	CHECK(strstr(e.msg, "sums to 6") != NULL);
	tensor_release(&s);
	/* Opset 11: split as an attribute. */
	node_ints(&nd, "split", (const int64_t[]){ 1, 6 }, 2);
	REQUIRE(run_op(&nd, 11, in, 1, y, 2, &e) == 0);
	CHECK(y[0].dims[1] == 1 && y[1].dims[1] == 6);
	for (i = 0; i < 2; i++)
		tensor_release(&y[i]);
	tensor_release(&x);
}

static void
test_squeeze_unsqueeze(void)
{
	struct tnode nd;
	struct tensor x, a, y = { 0 };
	const struct tensor *in[2] = { &x, &a };
	int64_t dims[4] = { 1, 3, 1, 2 };
	struct err e;

	make_random(&x, DT_BOOL, 4, dims);
	node_init(&nd, "Squeeze");
	REQUIRE(run_op(&nd, 13, in, 1, &y, 1, &e) == 0);
	CHECK(y.rank == 2 && y.dims[0] == 3 && y.dims[1] == 2);
	tensor_release(&y);
	make_ints(&a, DT_INT64, (const int64_t[]){ -2 }, 1);
	REQUIRE(run_op(&nd, 13, in, 2, &y, 1, &e) == 0);
	CHECK(y.rank == 3 && y.dims[0] == 1 && y.dims[2] == 2);
	tensor_release(&y);
	((int64_t *)a.data)[0] = 1;
	CHECK(run_op(&nd, 13, in, 2, &y, 1, &e) == -1);
	CHECK(strstr(e.msg, "cannot squeeze axis 1") != NULL);
	tensor_release(&a);
	/* Opset 11 attribute form. */
	node_ints(&nd, "axes", (const int64_t[]){ 0, 2 }, 2);
	REQUIRE(run_op(&nd, 11, in, 1, &y, 1, &e) == 0);
	CHECK(y.rank == 2);
	tensor_release(&y);

	node_init(&nd, "Unsqueeze");
	make_ints(&a, DT_INT64, (const int64_t[]){ -1, 0 }, 2);
	REQUIRE(run_op(&nd, 13, in, 2, &y, 1, &e) == 0);
	CHECK(y.rank == 6 && y.dims[0] == 1 && y.dims[1] == 1 &&
	    y.dims[4] == 2 && y.dims[5] == 1);
	CHECK(memcmp(y.data, x.data, 6) == 0);
	tensor_release(&y);
	((int64_t *)a.data)[1] = 5;
	CHECK(run_op(&nd, 13, in, 2, &y, 1, &e) == -1);
	CHECK(strstr(e.msg, "repeated") != NULL);
	((int64_t *)a.data)[1] = 6;
	CHECK(run_op(&nd, 13, in, 2, &y, 1, &e) == -1);
	tensor_release(&a);
	tensor_release(&x);
}

static void
test_depth_space_roundtrip(void)
{
	struct tnode nd;
	struct tensor x, y = { 0 }, z = { 0 };
	const struct tensor *in[1] = { &x };
	int64_t dims[4] = { 2, 12, 3, 5 };
	struct err e;

	make_random(&x, DT_FLOAT, 4, dims);
	node_init(&nd, "DepthToSpace");
	node_int(&nd, "blocksize", 2);
	REQUIRE(run_op(&nd, 13, in, 1, &y, 1, &e) == 0);
	CHECK(y.dims[1] == 3 && y.dims[2] == 6 && y.dims[3] == 10);
	in[0] = &y;
	node_init(&nd, "SpaceToDepth");
	node_int(&nd, "blocksize", 2);
	REQUIRE(run_op(&nd, 13, in, 1, &z, 1, &e) == 0);
	CHECK(shape_equal(&z, &x));
	CHECK(memcmp(z.data, x.data, (size_t)x.nelem * 4) == 0);
	tensor_release(&z);
	node_init(&nd, "SpaceToDepth");
	node_int(&nd, "blocksize", 4);
	CHECK(run_op(&nd, 13, in, 1, &z, 1, &e) == -1);
	tensor_release(&y);
	in[0] = &x;
	node_init(&nd, "DepthToSpace");
	node_int(&nd, "blocksize", 5);
	CHECK(run_op(&nd, 13, in, 1, &y, 1, &e) == -1);
	CHECK(strstr(e.msg, "multiple") != NULL);
	tensor_release(&x);
}

static void
test_concat(void)
{
	struct tnode nd;
	struct tensor a, b, c, y = { 0 };
	const struct tensor *in[3] = { &a, &b, &c };
	int64_t da[3] = { 2, 1, 3 }, db[3] = { 2, 0, 3 }, dc[3] = { 2, 2, 3 };
	struct err e;

	make_random(&a, DT_INT64, 3, da);
	make_random(&b, DT_INT64, 3, db);
	make_random(&c, DT_INT64, 3, dc);
	node_init(&nd, "Concat");
	node_int(&nd, "axis", -2);
	REQUIRE(run_op(&nd, 13, in, 3, &y, 1, &e) == 0);
	CHECK(y.dims[0] == 2 && y.dims[1] == 3 && y.dims[2] == 3);
	CHECK(memcmp(y.data, a.data, 24) == 0);
	CHECK(memcmp((int64_t *)y.data + 3, c.data, 48) == 0);
	CHECK(memcmp((int64_t *)y.data + 9, (int64_t *)a.data + 3, 24) == 0);
	tensor_release(&y);
	node_init(&nd, "Concat");
	node_int(&nd, "axis", 0);
	CHECK(run_op(&nd, 13, in, 3, &y, 1, &e) == -1);
	CHECK(strstr(e.msg, "input 1 has shape 2x0x3") != NULL);
	tensor_release(&a);
	tensor_release(&b);
	tensor_release(&c);
}

static void
test_shape_size_misc(void)
{
	struct tnode nd;
	struct tensor x, y = { 0 };
	const struct tensor *in[1] = { &x };
	int64_t dims[3] = { 2, 3, 4 };
	struct err e;

	tensor_alloc(&x, DT_FLOAT, 3, dims, &e);
	node_init(&nd, "Shape");
	node_int(&nd, "start", -2);
	node_int(&nd, "end", 100);
	REQUIRE(run_op(&nd, 15, in, 1, &y, 1, &e) == 0);
	CHECK(y.nelem == 2 && ((int64_t *)y.data)[0] == 3);
	tensor_release(&y);
	REQUIRE(run_op(&nd, 13, in, 1, &y, 1, &e) == 0);
	CHECK_EQ_INT(y.nelem, 3);
	tensor_release(&y);
	node_init(&nd, "Size");
	REQUIRE(run_op(&nd, 13, in, 1, &y, 1, &e) == 0);
	CHECK(y.rank == 0 && *(int64_t *)y.data == 24);
	tensor_release(&y);
	node_init(&nd, "Flatten");
	node_int(&nd, "axis", -1);
	REQUIRE(run_op(&nd, 13, in, 1, &y, 1, &e) == 0);
	CHECK(y.dims[0] == 6 && y.dims[1] == 4);
	tensor_release(&y);
	node_init(&nd, "Cast");
	node_int(&nd, "to", DT_FLOAT8E4M3FN);
	CHECK(run_op(&nd, 19, in, 1, &y, 1, &e) == -1);
	CHECK(strstr(e.msg, "float8") != NULL);
	node_init(&nd, "Cast");
	node_int(&nd, "to", DT_STRING);
	CHECK(run_op(&nd, 13, in, 1, &y, 1, &e) == -1);
	node_init(&nd, "Constant");
	node_ints(&nd, "value_ints", (const int64_t[]){ 4, 5 }, 2);
	REQUIRE(run_op(&nd, 13, in, 0, &y, 1, &e) == 0);
	CHECK(y.dtype == DT_INT64 && y.nelem == 2 &&
	    ((int64_t *)y.data)[1] == 5);
	tensor_release(&y);
	node_int(&nd, "value_int", 3);
	CHECK(run_op(&nd, 13, in, 0, &y, 1, &e) == -1);
	tensor_release(&x);
}

/*
 * An empty tensor may carry huge dims; every kernel must either succeed
 * with an empty result or fail cleanly, never overflow (run under UBSan).
 */
static void
test_empty_huge_dims(void)
{
	static const char *const ops[] = { "Transpose", "Flatten", "Squeeze",
	    "Shape", "Size", "NonZero", "Unique", "Identity" };
	struct tnode nd;
	struct tensor x, y[4], t2, t3;
	const struct tensor *in[4] = { &x, &x, NULL, NULL };
	int64_t dims[3] = { (int64_t)1 << 62, 0, (int64_t)1 << 62 };
	int64_t one = 1;
	struct err e;
	size_t i;
	int rc, k;

	REQUIRE(tensor_alloc(&x, DT_FLOAT, 3, dims, &e) == 0);
	memset(y, 0, sizeof(y));
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		node_init(&nd, ops[i]);
		if (i == 6)
			node_int(&nd, "axis", 2);
		rc = run_op(&nd, 13, in, 1, y, 4, &e);
		CHECK(rc == 0 || rc == -2 || (rc == -1 && e.msg[0] != '\0'));
		for (k = 0; k < 4; k++)
			tensor_release(&y[k]);
	}
	/* 2^62 x 2^62 x 0 flattened at axis 2: 2^124 rows. */
	x.dims[1] = dims[0];
	x.dims[2] = 0;
	node_init(&nd, "Flatten");
	node_int(&nd, "axis", 2);
	CHECK(run_op(&nd, 13, in, 1, y, 1, &e) == -1);
	CHECK(strstr(e.msg, "overflow") != NULL);
	x.dims[1] = 0;
	x.dims[2] = dims[2];
	node_init(&nd, "Concat");
	node_int(&nd, "axis", 0);
	CHECK(run_op(&nd, 13, in, 2, y, 1, &e) == -1);
	node_init(&nd, "Concat");
	node_int(&nd, "axis", 1);
	REQUIRE(run_op(&nd, 13, in, 2, y, 1, &e) == 0);
	CHECK(y[0].nelem == 0 && y[0].dims[0] == dims[0]);
	tensor_release(&y[0]);
	make_ints(&t2, DT_INT64, (const int64_t[]){ 1, 5, 2 }, 3);
	in[1] = &t2;
	node_init(&nd, "Tile");
	CHECK(run_op(&nd, 13, in, 2, y, 1, &e) == -1);
	node_init(&nd, "Split");
	node_int(&nd, "axis", 0);
	CHECK(run_op(&nd, 13, in, 1, y, 3, &e) == -1);
	for (k = 0; k < 3; k++)
		tensor_release(&y[k]);
	tensor_release(&t2);
	/* Pad the huge axis: overflow; crop it: fine. */
	make_ints(&t2, DT_INT64, (const int64_t[]){ 0, 0, 4, 0, 0, 2 }, 6);
	x.dims[2] = INT64_MAX - 5;
	node_init(&nd, "Pad");
	CHECK(run_op(&nd, 13, in, 2, y, 1, &e) == -1);
	CHECK(strstr(e.msg, "overflow") != NULL);
	x.dims[2] = dims[2];
	((int64_t *)t2.data)[2] = 1;
	((int64_t *)t2.data)[5] = -7;
	REQUIRE(run_op(&nd, 13, in, 2, y, 1, &e) == 0);
	CHECK(y[0].dims[2] == dims[2] - 6);
	tensor_release(&y[0]);
	tensor_release(&t2);
	/* Slice, Gather, Expand, DepthToSpace on it. */
	make_ints(&t2, DT_INT64, (const int64_t[]){ 5 }, 1);
	make_ints(&t3, DT_INT64, (const int64_t[]){ INT64_MAX }, 1);
	in[1] = &t2;
	in[2] = &t3;
	node_init(&nd, "Slice");
	REQUIRE(run_op(&nd, 13, in, 3, y, 1, &e) == 0);
	CHECK(y[0].dims[0] == dims[0] - 5);
	tensor_release(&y[0]);
	node_init(&nd, "Gather");
	node_int(&nd, "axis", 2);
	REQUIRE(run_op(&nd, 13, in, 2, y, 1, &e) == 0);
	CHECK(y[0].rank == 3 && y[0].nelem == 0);
	tensor_release(&y[0]);
	tensor_release(&t2);
	tensor_release(&t3);
	make_ints(&t2, DT_INT64, (const int64_t[]){ 1, 1 }, 2);
	node_init(&nd, "Expand");
	REQUIRE(run_op(&nd, 13, in, 2, y, 1, &e) == 0);
	tensor_release(&y[0]);
	tensor_release(&t2);
	tensor_release(&x);
	dims[0] = 0;
	dims[1] = (int64_t)1 << 62;
	REQUIRE(tensor_alloc(&x, DT_FLOAT, 3, dims, &e) == 0);
	x.rank = 4;
	x.dims[3] = (int64_t)1 << 62;
	node_init(&nd, "SpaceToDepth");
	node_int(&nd, "blocksize", 4);
	CHECK(run_op(&nd, 13, in, 1, y, 1, &e) == -1);
	node_init(&nd, "DepthToSpace");
	node_int(&nd, "blocksize", 4);
	CHECK(run_op(&nd, 13, in, 1, y, 1, &e) == -1);
	(void)one;
	tensor_release(&x);
}

static void
test_unique_compress(void)
{
	static const float v[] = { 2, 1, 1, 3, 4, 3 };
	static const float wy[] = { 2, 1, 3, 4 }, wc[] = { 1, 1 };
	static const int64_t wi[] = { 0, 1, 3, 4 }, winv[] = { 0, 1, 1, 2, 3,
	    2 }, wcnt[] = { 1, 2, 2, 1 };
	struct tnode nd;
	struct tensor x, m, y[4];
	const struct tensor *in[2] = { &x, &m };
	int64_t six = 6, three = 3;
	struct err e;
	int k;

	make_floats(&x, 1, &six, v);
	memset(y, 0, sizeof(y));
	node_init(&nd, "Unique");
	node_int(&nd, "sorted", 0);
	REQUIRE(run_op(&nd, 11, in, 1, y, 4, &e) == 0);
	CHECK(floats_are(&y[0], wy, 4));
	CHECK(y[1].nelem == 4 && memcmp(y[1].data, wi, sizeof(wi)) == 0);
	CHECK(y[2].nelem == 6 && memcmp(y[2].data, winv, sizeof(winv)) == 0);
	CHECK(y[3].nelem == 4 && memcmp(y[3].data, wcnt, sizeof(wcnt)) == 0);
	for (k = 0; k < 4; k++)
		tensor_release(&y[k]);
	REQUIRE(tensor_alloc(&m, DT_BOOL, 1, &three, &e) == 0);
	((unsigned char *)m.data)[1] = 1;
	((unsigned char *)m.data)[2] = 1;
	node_init(&nd, "Compress");
	REQUIRE(run_op(&nd, 11, in, 2, y, 1, &e) == 0);
	CHECK(floats_are(&y[0], wc, 2));
	tensor_release(&y[0]);
	node_int(&nd, "axis", 0);
	x.rank = 2;
	x.dims[0] = 2;
	x.dims[1] = 3;
	CHECK(run_op(&nd, 11, in, 2, y, 1, &e) == -1);
	CHECK(strstr(e.msg, "condition has 3 entries") != NULL);
	tensor_release(&m);
	tensor_release(&x);
}

static void
test_center_crop_pad(void)
{
	/* As ONNX's reference: pad 2 -> 3 at the end, crop 5 -> 2 from 1. */
	static const float v[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	static const float want[] = { 1, 2, 6, 7, 0, 0 };
	struct tnode nd;
	struct tensor x, sh, y = { 0 };
	const struct tensor *in[2] = { &x, &sh };
	int64_t dims[2] = { 2, 5 };
	struct err e;

	make_floats(&x, 2, dims, v);
	make_ints(&sh, DT_INT64, (const int64_t[]){ 3, 2 }, 2);
	node_init(&nd, "CenterCropPad");
	REQUIRE(run_op(&nd, 18, in, 2, &y, 1, &e) == 0);
	CHECK(y.dims[0] == 3 && y.dims[1] == 2);
	CHECK(floats_are(&y, want, 6));
	tensor_release(&y);
	node_ints(&nd, "axes", (const int64_t[]){ -1 }, 1);
	CHECK(run_op(&nd, 18, in, 2, &y, 1, &e) == -1);
	CHECK(strstr(e.msg, "2 entries for 1 axes") != NULL);
	tensor_release(&sh);
	tensor_release(&x);
}

/* Corner cases whose expected values came from ONNX Runtime 1.30. */
static void
test_ort_corners(void)
{
	static const float a5[] = { 0, 1, 2, 3, 4 };
	static const float w_far[] = { 0 }, w_big[] = { 4, 2, 0 };
	static const float w_min[] = { 4, 3, 2, 1, 0 };
	static const struct {
		int64_t start, end, step;
		const float *want;
		int64_t n;
	} sl[] = {
		{ -100, -100, -1, w_far, 1 },
		{ 10, -10, -2, w_big, 3 },
		{ -1, INT64_MIN, -1, w_min, 5 },
	};
	struct tnode nd;
	struct tensor x, ts, te, ta, tst, y = { 0 };
	const struct tensor *in[5] = { &x, &ts, &te, &ta, &tst };
	int64_t five = 5;
	struct err e;
	size_t i;

	make_floats(&x, 1, &five, a5);
	for (i = 0; i < sizeof(sl) / sizeof(sl[0]); i++) {
		make_ints(&ts, DT_INT64, &sl[i].start, 1);
		make_ints(&te, DT_INT64, &sl[i].end, 1);
		make_ints(&ta, DT_INT64, (const int64_t[]){ 0 }, 1);
		make_ints(&tst, DT_INT64, &sl[i].step, 1);
		node_init(&nd, "Slice");
		REQUIRE(run_op(&nd, 13, in, 5, &y, 1, &e) == 0);
		CHECK(floats_are(&y, sl[i].want, sl[i].n));
		tensor_release(&y);
		tensor_release(&ts);
		tensor_release(&te);
		tensor_release(&ta);
		tensor_release(&tst);
	}
	tensor_release(&x);
	/* NonZero of a scalar: shape 1 x nnz. */
	tensor_alloc(&x, DT_FLOAT, 0, NULL, &e);
	*(float *)x.data = 3;
	node_init(&nd, "NonZero");
	REQUIRE(run_op(&nd, 13, in, 1, &y, 1, &e) == 0);
	CHECK(y.rank == 2 && y.dims[0] == 1 && y.dims[1] == 1 &&
	    ((int64_t *)y.data)[0] == 0);
	tensor_release(&y);
	tensor_release(&x);
	/* NonZero: -0.0 is zero, NaN is not. */
	{
		static const float v[] = { 0, -0.0f, 1, NAN, 0, 2 };
		static const int64_t want[] = { 0, 1, 1, 2, 0, 2 };
		int64_t d[2] = { 2, 3 };

		make_floats(&x, 2, d, v);
		REQUIRE(run_op(&nd, 13, in, 1, &y, 1, &e) == 0);
		CHECK(y.dims[0] == 2 && y.dims[1] == 3 &&
		    memcmp(y.data, want, sizeof(want)) == 0);
		tensor_release(&y);
		tensor_release(&x);
	}
	/* Squeeze with an empty axes input squeezes every 1. */
	{
		int64_t d[3] = { 1, 3, 1 }, zero = 0;

		tensor_alloc(&x, DT_FLOAT, 3, d, &e);
		tensor_alloc(&ta, DT_INT64, 1, &zero, &e);
		in[1] = &ta;
		node_init(&nd, "Squeeze");
		REQUIRE(run_op(&nd, 13, in, 2, &y, 1, &e) == 0);
		CHECK(y.rank == 1 && y.dims[0] == 3);
		tensor_release(&y);
		tensor_release(&ta);
		tensor_release(&x);
	}
	/* Unique of rows, first-occurrence order. */
	{
		static const int64_t v[] = { 3, 1, 1, 2, 3, 1, 0, 5 };
		static const int64_t wy[] = { 3, 1, 1, 2, 0, 5 };
		static const int64_t wi[] = { 0, 1, 3 }, winv[] = { 0, 1, 0,
		    2 }, wc[] = { 2, 1, 1 };
		int64_t d[2] = { 4, 2 };
		struct tensor o[4];
		int k;

		tensor_alloc(&x, DT_INT64, 2, d, &e);
		memcpy(x.data, v, sizeof(v));
		memset(o, 0, sizeof(o));
		node_init(&nd, "Unique");
		node_int(&nd, "axis", 0);
		node_int(&nd, "sorted", 0);
		REQUIRE(run_op(&nd, 11, in, 1, o, 4, &e) == 0);
		CHECK(o[0].dims[0] == 3 && o[0].dims[1] == 2 &&
		    memcmp(o[0].data, wy, sizeof(wy)) == 0);
		CHECK(memcmp(o[1].data, wi, sizeof(wi)) == 0);
		CHECK(memcmp(o[2].data, winv, sizeof(winv)) == 0);
		CHECK(memcmp(o[3].data, wc, sizeof(wc)) == 0);
		for (k = 0; k < 4; k++)
			tensor_release(&o[k]);
		tensor_release(&x);
	}
}

UNIT_MAIN(test_transpose_perms, test_transpose_ranks, test_slice_random,
    test_slice_attrs, test_gather, test_gather_elements_scatter,
    test_reshape, test_huge_outputs, test_range_float, test_pad, test_pad_2d,
    test_tile_expand, test_split, test_squeeze_unsqueeze,
    test_depth_space_roundtrip, test_concat, test_shape_size_misc,
    test_empty_huge_dims, test_unique_compress, test_center_crop_pad,
    test_ort_corners)
