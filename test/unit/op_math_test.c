/*
 * op_math_test: the elementwise and reduction kernels (op_math.c,
 * op_reduce.c) called directly through struct op_ctx: broadcasting
 * against a naive reference (including the threaded, chunked paths),
 * integer edge cases, opset-dependent attributes and inputs, and the
 * errors kernels return for malformed nodes. Needs nothing but the
 * library; the ONNX node tests cover the rest through the interpreter.
 */
#include <stdint.h>

#include "optest.h"
#include "vexp.h"

/* A tensor of type dt and shape dims, filled from vals (may be NULL). */
static struct tensor
mk(int dt, int rank, const int64_t *dims, const double *vals)
{
	struct tensor t = { 0 };
	struct err e;

	if (tensor_alloc(&t, dt, rank, dims, &e) < 0) {
		fprintf(stderr, "mk: %s\n", e.msg);
		abort();
	}
	for (int64_t i = 0; vals && i < t.nelem; i++)
		tensor_set(&t, i, vals[i]);
	return t;
}

/* Run the kernel for t's op; outputs arrive empty. */
static int
run(struct tnode *t, int opset, int nin, const struct tensor **in, int nout,
    struct tensor *out, int threads, struct err *e)
{
	memset(out, 0, (size_t)nout * sizeof *out);
	return op_run_in("", t, opset, in, nin, out, nout, threads, e);
}

static int
check_vals(const struct tensor *t, int n, const double *want, double tol)
{
	int ok = CHECK_EQ_INT(t->nelem, n);

	for (int64_t i = 0; ok && i < n; i++)
		ok = CHECK_NEAR(tensor_get(t, i), want[i], tol);
	return ok;
}

static double
rnd(void)
{
	return (double)(optest_rand() >> 11) / 9007199254740992.0;
}

/* Element of a broadcast input at output multi-index idx. */
static int64_t
bindex(const struct tensor *t, int rank, const int64_t *idx)
{
	int64_t off = 0;

	for (int i = 0; i < t->rank; i++) {
		int64_t d = t->dims[i], k = idx[rank - t->rank + i];
		off = off * d + (d == 1 ? 0 : k);
	}
	return off;
}

/* One Add/Sub/Mul of random operands of shapes a and b against indexing. */
static void
check_broadcast(const char *op, int dt, int ra, const int64_t *da, int rb,
    const int64_t *db, int threads)
{
	struct tnode t;
	struct tensor a = mk(dt, ra, da, NULL), b = mk(dt, rb, db, NULL);
	struct tensor out[1];
	const struct tensor *in[2] = { &a, &b };
	int64_t idx[TENSOR_MAX_RANK], i, r;
	double x, y, want;
	struct err e;
	int d;

	for (i = 0; i < a.nelem; i++)
		tensor_set(&a, i, (int)(rnd() * 200) - 100);
	for (i = 0; i < b.nelem; i++)
		tensor_set(&b, i, (int)(rnd() * 200) - 100);
	node_init(&t, op);
	if (!CHECK(run(&t, 14, 2, in, 1, out, threads, &e) == 0)) {
		fprintf(stderr, "%s\n", e.msg);
		goto done;
	}
	CHECK_EQ_INT(out[0].dtype, dt);
	for (i = 0; i < out[0].nelem; i++) {
		for (r = i, d = out[0].rank - 1; d >= 0; d--) {
			idx[d] = r % out[0].dims[d];
			r /= out[0].dims[d];
		}
		x = tensor_get(&a, bindex(&a, out[0].rank, idx));
		y = tensor_get(&b, bindex(&b, out[0].rank, idx));
		want = op[0] == 'A' ? x + y : op[0] == 'S' ? x - y : x * y;
		if (dt == DT_INT8)	/* wraps */
			want = (int8_t)(uint8_t)(int64_t)want;
		if (!CHECK_NEAR(tensor_get(&out[0], i), want, 0))
			break;
	}
	tensor_release(&out[0]);
done:
	tensor_release(&a);
	tensor_release(&b);
}

/* Many shape pairs, including the threaded, chunked and grouped paths. */
static void
test_broadcast_reference(void)
{
	static const struct {
		int ra, rb;
		int64_t a[4], b[4];
	} cases[] = {
		{ 4, 4, { 1, 3, 4, 5 }, { 1, 3, 1, 1 } },
		{ 4, 1, { 2, 3, 4, 5 }, { 5 } },
		{ 3, 2, { 2, 1, 4 }, { 3, 1 } },
		{ 0, 3, { 0 }, { 2, 3, 4 } },
		{ 2, 2, { 7, 1 }, { 1, 9 } },
		{ 4, 4, { 1, 64, 80, 80 }, { 1, 64, 1, 1 } },	/* threaded */
		{ 2, 2, { 3, 100000 }, { 3, 1 } },		/* long rows */
		{ 2, 2, { 100000, 3 }, { 1, 3 } },		/* short rows */
		{ 3, 3, { 2, 0, 3 }, { 2, 1, 3 } },		/* empty */
	};

	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
		for (int th = 1; th <= 2; th++) {
			int ra = cases[k].ra, rb = cases[k].rb;
			const int64_t *a = cases[k].a, *b = cases[k].b;

			check_broadcast("Add", DT_FLOAT, ra, a, rb, b, th);
			check_broadcast("Sub", DT_INT64, ra, a, rb, b, th);
			check_broadcast("Mul", DT_INT8, rb, b, ra, a, th);
		}
}

static void
test_broadcast_errors(void)
{
	struct tnode t;
	struct tensor a = mk(DT_FLOAT, 2, DIMS(2, 3), NULL);
	struct tensor b = mk(DT_FLOAT, 1, DIMS(2), NULL);
	struct tensor c = mk(DT_INT64, 2, DIMS(2, 3), NULL);
	struct tensor s = mk(DT_UINT8, 0, NULL, NULL);
	struct tensor out[2];
	const struct tensor *in[3] = { &a, &b, NULL };
	struct err e;

	node_init(&t, "Add");
	CHECK(run(&t, 14, 2, in, 1, out, 1, &e) < 0);
	CHECK_EQ_STR(e.msg, "shapes 2x3 and 2 do not broadcast");
	in[1] = &c;
	CHECK(run(&t, 14, 2, in, 1, out, 1, &e) < 0);
	CHECK_EQ_STR(e.msg, "input types float and int64 differ");
	in[1] = NULL;
	CHECK(run(&t, 14, 2, in, 1, out, 1, &e) < 0);
	CHECK_EQ_STR(e.msg, "input 1 is missing");
	CHECK(run(&t, 14, 1, in, 1, out, 1, &e) < 0);
	CHECK_EQ_STR(e.msg, "expected 2 inputs, got 1");
	/* PRelu's slope may not grow X */
	node_init(&t, "PRelu");
	in[0] = &b;
	in[1] = &a;
	CHECK(run(&t, 16, 2, in, 1, out, 1, &e) < 0);
	CHECK_EQ_STR(e.msg, "slope of shape 2x3 does not broadcast to input "
	    "shape 2");
	node_init(&t, "Where");
	in[0] = &a;
	in[1] = &a;
	in[2] = &a;
	CHECK(run(&t, 16, 3, in, 1, out, 1, &e) < 0);
	CHECK_EQ_STR(e.msg, "condition must be bool, not float");
	node_init(&t, "And");
	CHECK(run(&t, 7, 2, in, 1, out, 1, &e) < 0);
	CHECK_EQ_STR(e.msg, "element type float is not supported");
	node_init(&t, "Relu");
	in[0] = &s;
	CHECK(run(&t, 14, 1, in, 1, out, 1, &e) < 0);
	CHECK_EQ_STR(e.msg, "element type uint8 is not supported");
	tensor_release(&s);
	tensor_release(&a);
	tensor_release(&b);
	tensor_release(&c);
}

/* Opset < 7: broadcast=1 with axis lines B up with A at axis. */
static void
test_legacy_broadcast(void)
{
	struct tnode t;
	struct tensor a = mk(DT_FLOAT, 3, DIMS(2, 3, 2),
	    VALS(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
	struct tensor b = mk(DT_FLOAT, 1, DIMS(3), VALS(1, 2, 3));
	struct tensor out[1];
	const struct tensor *in[2] = { &a, &b };
	struct err e;

	node_init(&t, "Add");
	node_int(&t, "broadcast", 1);
	node_int(&t, "axis", 1);
	REQUIRE(run(&t, 6, 2, in, 1, out, 1, &e) == 0);
	check_vals(&out[0], 12, VALS(1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3), 0);
	tensor_release(&out[0]);
	tensor_release(&a);
	tensor_release(&b);
}

static void
test_integer_edges(void)
{
	struct tnode t;
	struct tensor a = mk(DT_INT32, 1, DIMS(6),
	    VALS(7, -7, 7, -7, -2147483648.0, 5));
	struct tensor b = mk(DT_INT32, 1, DIMS(6), VALS(2, 2, -2, -2, -1, 0));
	struct tensor out[1];
	const struct tensor *in[2] = { &a, &b };
	struct err e;

	node_init(&t, "Div");
	REQUIRE(run(&t, 14, 2, in, 1, out, 1, &e) == 0);
	check_vals(&out[0], 6, VALS(3, -3, -3, 3, -2147483648.0, 0), 0);
	tensor_release(&out[0]);
	node_init(&t, "Mod");
	REQUIRE(run(&t, 13, 2, in, 1, out, 1, &e) == 0);
	check_vals(&out[0], 6, VALS(1, 1, -1, -1, 0, 0), 0);
	tensor_release(&out[0]);
	node_int(&t, "fmod", 1);
	REQUIRE(run(&t, 13, 2, in, 1, out, 1, &e) == 0);
	check_vals(&out[0], 6, VALS(1, -1, 1, -1, 0, 0), 0);
	tensor_release(&out[0]);
	node_init(&t, "Abs");
	REQUIRE(run(&t, 13, 1, in, 1, out, 1, &e) == 0);
	check_vals(&out[0], 6, VALS(7, 7, 7, 7, -2147483648.0, 5), 0);
	tensor_release(&out[0]);
	tensor_release(&a);
	tensor_release(&b);
}

static void
test_float_mod_and_pow(void)
{
	struct tnode t;
	struct tensor a = mk(DT_FLOAT, 1, DIMS(4), VALS(5.5, -5.5, 5.5, -5.5));
	struct tensor b = mk(DT_FLOAT, 1, DIMS(4), VALS(2, 2, -2, -2));
	struct tensor ib = mk(DT_INT32, 1, DIMS(3), VALS(2, 3, 9));
	struct tensor fe = mk(DT_FLOAT, 0, NULL, VALS(0.5));
	struct tensor ie = mk(DT_INT64, 0, NULL, VALS(3));
	struct tensor out[1];
	const struct tensor *in[2] = { &a, &b };
	struct err e;

	node_init(&t, "Mod");
	REQUIRE(run(&t, 13, 2, in, 1, out, 1, &e) == 0);
	check_vals(&out[0], 4, VALS(1.5, 0.5, -0.5, -1.5), 1e-6);
	tensor_release(&out[0]);
	/* integer base, float exponent: computed in double, truncated */
	node_init(&t, "Pow");
	in[0] = &ib;
	in[1] = &fe;
	REQUIRE(run(&t, 15, 2, in, 1, out, 1, &e) == 0);
	CHECK_EQ_INT(out[0].dtype, DT_INT32);
	check_vals(&out[0], 3, VALS(1, 1, 3), 0);
	tensor_release(&out[0]);
	in[1] = &ie;
	REQUIRE(run(&t, 15, 2, in, 1, out, 1, &e) == 0);
	check_vals(&out[0], 3, VALS(8, 27, 729), 0);
	tensor_release(&out[0]);
	/* float base, scalar exponent 2 takes the fast path */
	tensor_set(&fe, 0, 2);
	in[0] = &a;
	in[1] = &fe;
	REQUIRE(run(&t, 15, 2, in, 1, out, 1, &e) == 0);
	check_vals(&out[0], 4, VALS(30.25, 30.25, 30.25, 30.25), 1e-5);
	tensor_release(&out[0]);
	tensor_release(&a);
	tensor_release(&b);
	tensor_release(&ib);
	tensor_release(&fe);
	tensor_release(&ie);
}

static void
test_clip(void)
{
	struct tnode t;
	struct tensor x = mk(DT_INT8, 1, DIMS(5), VALS(-128, -5, 0, 5, 127));
	struct tensor lo = mk(DT_INT8, 0, NULL, VALS(-3));
	struct tensor hi = mk(DT_INT8, 0, NULL, VALS(4));
	struct tensor f = mk(DT_FLOAT, 1, DIMS(4), VALS(-10, -0.5, 0.5, 10));
	struct tensor out[1];
	const struct tensor *in[3] = { &x, &lo, &hi };
	struct err e;

	node_init(&t, "Clip");
	REQUIRE(run(&t, 13, 3, in, 1, out, 1, &e) == 0);
	check_vals(&out[0], 5, VALS(-3, -3, 0, 4, 4), 0);
	tensor_release(&out[0]);
	in[1] = NULL;		/* min absent */
	REQUIRE(run(&t, 13, 3, in, 1, out, 1, &e) == 0);
	check_vals(&out[0], 5, VALS(-128, -5, 0, 4, 4), 0);
	tensor_release(&out[0]);
	in[1] = &f;
	CHECK(run(&t, 13, 3, in, 1, out, 1, &e) < 0);
	CHECK_EQ_STR(e.msg, "input 1: type float differs from the input's "
	    "int8");
	/* min > max: everything becomes max */
	in[1] = &hi;
	in[2] = &lo;
	REQUIRE(run(&t, 13, 3, in, 1, out, 1, &e) == 0);
	check_vals(&out[0], 5, VALS(-3, -3, -3, -3, -3), 0);
	tensor_release(&out[0]);
	/* opset 6: bounds are attributes */
	node_init(&t, "Clip");
	node_float(&t, "min", -1);
	node_float(&t, "max", 1);
	in[0] = &f;
	REQUIRE(run(&t, 6, 1, in, 1, out, 1, &e) == 0);
	check_vals(&out[0], 4, VALS(-1, -0.5, 0.5, 1), 0);
	tensor_release(&out[0]);
	tensor_release(&x);
	tensor_release(&lo);
	tensor_release(&hi);
	tensor_release(&f);
}

static void
test_activations(void)
{
	struct tnode t;
	struct tensor x = mk(DT_FLOAT, 1, DIMS(5), VALS(-3, -0.5, 0, 0.5, 3));
	struct tensor h = mk(DT_FLOAT16, 1, DIMS(5), VALS(-3, -0.5, 0, 0.5, 3));
	struct tensor out[1];
	const struct tensor *in[1] = { &x };
	struct err e;

	node_init(&t, "Gelu");
	REQUIRE(run(&t, 20, 1, in, 1, out, 1, &e) == 0);
	check_vals(&out[0], 5, VALS(-0.00404969, -0.15426877, 0, 0.34573123,
	    2.99595031), 1e-6);
	tensor_release(&out[0]);
	node_str(&t, "approximate", "tanh");
	REQUIRE(run(&t, 20, 1, in, 1, out, 1, &e) == 0);
	check_vals(&out[0], 5, VALS(-0.00363739, -0.15428599, 0, 0.34571401,
	    2.99636261), 1e-6);
	tensor_release(&out[0]);
	node_init(&t, "Mish");
	REQUIRE(run(&t, 18, 1, in, 1, out, 1, &e) == 0);
	check_vals(&out[0], 5, VALS(-0.14564746, -0.22074377, 0, 0.37524521,
	    2.98653500), 1e-6);
	tensor_release(&out[0]);
	node_init(&t, "HardSwish");
	REQUIRE(run(&t, 14, 1, in, 1, out, 1, &e) == 0);
	check_vals(&out[0], 5, VALS(0, -0.20833333, 0, 0.29166667, 3), 1e-6);
	tensor_release(&out[0]);
	node_init(&t, "Sigmoid");
	in[0] = &h;		/* float16 goes through float */
	REQUIRE(run(&t, 13, 1, in, 1, out, 1, &e) == 0);
	CHECK_EQ_INT(out[0].dtype, DT_FLOAT16);
	check_vals(&out[0], 5, VALS(0.04742587, 0.37754067, 0.5, 0.62245933,
	    0.95257413), 1e-3);
	tensor_release(&out[0]);
	/* LeakyRelu is written as max/min for vectorising: NaN must stay */
	node_init(&t, "LeakyRelu");
	node_float(&t, "alpha", 0.5f);
	in[0] = &x;
	tensor_set(&x, 2, NAN);
	REQUIRE(run(&t, 16, 1, in, 1, out, 1, &e) == 0);
	check_vals(&out[0], 5, VALS(-1.5, -0.25, NAN, 0.5, 3), 0);
	tensor_release(&out[0]);
	tensor_set(&x, 2, 0);
	node_init(&t, "Round");
	in[0] = &x;
	tensor_set(&x, 1, 2.5);
	tensor_set(&x, 3, -2.5);
	REQUIRE(run(&t, 11, 1, in, 1, out, 1, &e) == 0);
	check_vals(&out[0], 5, VALS(-3, 2, 0, -2, 3), 0);
	tensor_release(&out[0]);
	tensor_release(&x);
	tensor_release(&h);
}

static void
test_dropout(void)
{
	struct tnode t;
	struct tensor x = mk(DT_FLOAT, 1, DIMS(3), VALS(1, 2, 3));
	struct tensor r = mk(DT_FLOAT, 0, NULL, VALS(0.5));
	struct tensor on = mk(DT_BOOL, 0, NULL, VALS(1));
	struct tensor out[2];
	const struct tensor *in[3] = { &x, &r, NULL };
	struct err e;

	node_init(&t, "Dropout");
	REQUIRE(run(&t, 13, 3, in, 2, out, 1, &e) == 0);
	check_vals(&out[0], 3, VALS(1, 2, 3), 0);
	CHECK_EQ_INT(out[1].dtype, DT_BOOL);
	check_vals(&out[1], 3, VALS(1, 1, 1), 0);
	tensor_release(&out[0]);
	tensor_release(&out[1]);
	in[2] = &on;
	CHECK(run(&t, 13, 3, in, 2, out, 1, &e) < 0);
	CHECK_EQ_STR(e.msg, "dropout in training mode (ratio 0.5) is not "
	    "supported");
	tensor_release(&x);
	tensor_release(&r);
	tensor_release(&on);
}

static void
test_variadic(void)
{
	struct tnode t;
	struct tensor a = mk(DT_FLOAT, 2, DIMS(2, 1), VALS(1, 4));
	struct tensor b = mk(DT_FLOAT, 1, DIMS(3), VALS(3, 2, 5));
	struct tensor c = mk(DT_FLOAT, 0, NULL, VALS(0));
	struct tensor out[1];
	const struct tensor *in[3] = { &a, &b, &c };
	struct err e;

	node_init(&t, "Mean");
	REQUIRE(run(&t, 13, 3, in, 1, out, 1, &e) == 0);
	check_vals(&out[0], 6, VALS(4 / 3.0, 1, 2, 7 / 3.0, 2, 3), 1e-6);
	tensor_release(&out[0]);
	node_init(&t, "Max");
	REQUIRE(run(&t, 13, 3, in, 1, out, 1, &e) == 0);
	check_vals(&out[0], 6, VALS(3, 2, 5, 4, 4, 5), 0);
	tensor_release(&out[0]);
	tensor_release(&a);
	tensor_release(&b);
	tensor_release(&c);
}

/* Reductions: axes as attribute (< 18) and as input (>= 18). */
static void
test_reduce_axes(void)
{
	struct tnode t;
	struct tensor x = mk(DT_FLOAT, 3, DIMS(2, 2, 3),
	    VALS(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12));
	struct tensor axes = mk(DT_INT64, 1, DIMS(2), VALS(0, -1));
	struct tensor none = mk(DT_INT64, 1, DIMS(0), NULL);
	struct tensor out[1];
	const struct tensor *in[2] = { &x, &axes };
	struct err e;

	node_init(&t, "ReduceMean");
	node_int(&t, "keepdims", 0);
	REQUIRE(run(&t, 18, 2, in, 1, out, 1, &e) == 0);
	CHECK_EQ_INT(out[0].rank, 1);
	check_vals(&out[0], 2, VALS(5, 8), 1e-6);
	tensor_release(&out[0]);
	/* opset 13 takes the attribute and ignores a second input */
	node_init(&t, "ReduceMean");
	node_ints(&t, "axes", DIMS(1), 1);
	REQUIRE(run(&t, 13, 1, in, 1, out, 1, &e) == 0);
	CHECK_EQ_INT(out[0].rank, 3);
	CHECK_EQ_INT(out[0].dims[1], 1);
	check_vals(&out[0], 6, VALS(2.5, 3.5, 4.5, 8.5, 9.5, 10.5), 1e-6);
	tensor_release(&out[0]);
	/* empty axes: all, or nothing with noop_with_empty_axes */
	node_init(&t, "ReduceSum");
	in[1] = &none;
	REQUIRE(run(&t, 13, 2, in, 1, out, 1, &e) == 0);
	check_vals(&out[0], 1, VALS(78), 0);
	tensor_release(&out[0]);
	node_int(&t, "noop_with_empty_axes", 1);
	REQUIRE(run(&t, 13, 2, in, 1, out, 1, &e) == 0);
	check_vals(&out[0], 12, VALS(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12), 0);
	tensor_release(&out[0]);
	/* ... which still applies the elementwise part */
	node_init(&t, "ReduceSumSquare");
	node_int(&t, "noop_with_empty_axes", 1);
	REQUIRE(run(&t, 18, 2, in, 1, out, 1, &e) == 0);
	check_vals(&out[0], 12, VALS(1, 4, 9, 16, 25, 36, 49, 64, 81, 100, 121,
	    144), 0);
	tensor_release(&out[0]);
	node_init(&t, "ReduceLogSumExp");
	in[1] = &axes;
	REQUIRE(run(&t, 18, 2, in, 1, out, 1, &e) == 0);
	check_vals(&out[0], 2, VALS(9.41008165, 12.41008165), 1e-5);
	tensor_release(&out[0]);
	/* errors */
	tensor_set(&axes, 1, 3);
	CHECK(run(&t, 18, 2, in, 1, out, 1, &e) < 0);
	CHECK_EQ_STR(e.msg, "axis 3 is out of range for rank 3");
	tensor_set(&axes, 1, -3);
	CHECK(run(&t, 18, 2, in, 1, out, 1, &e) < 0);
	CHECK_EQ_STR(e.msg, "axis -3 appears twice");
	tensor_release(&x);
	tensor_release(&axes);
	tensor_release(&none);
}

/* A big reduction over the middle axis against a simple loop. */
static void
test_reduce_large(void)
{
	struct tnode t;
	struct tensor x = mk(DT_FLOAT, 3, DIMS(3, 5000, 7), NULL);
	struct tensor out[1];
	const struct tensor *in[1] = { &x };
	struct err e;
	double want[21] = { 0 };

	for (int64_t i = 0; i < x.nelem; i++) {
		int64_t o = (i / 35000) * 7 + i % 7;

		tensor_set(&x, i, rnd() - 0.5);
		want[o] = fmax(want[o], tensor_get(&x, i));
	}
	node_init(&t, "ReduceMax");
	node_ints(&t, "axes", DIMS(1), 1);
	REQUIRE(run(&t, 13, 1, in, 1, out, 2, &e) == 0);
	check_vals(&out[0], 21, want, 0);
	tensor_release(&out[0]);
	tensor_release(&x);
}

static void
test_softmax_axis_semantics(void)
{
	struct tnode t;
	struct tensor x = mk(DT_FLOAT, 2, DIMS(2, 2), VALS(0, 0, 0, 0));
	struct tensor out[1];
	const struct tensor *in[1] = { &x };
	struct err e;

	/* opset 11, axis 0: one softmax over all 4 elements */
	node_init(&t, "Softmax");
	node_int(&t, "axis", 0);
	REQUIRE(run(&t, 11, 1, in, 1, out, 1, &e) == 0);
	check_vals(&out[0], 4, VALS(0.25, 0.25, 0.25, 0.25), 1e-7);
	tensor_release(&out[0]);
	/* opset 13, axis 0: along the first axis only */
	REQUIRE(run(&t, 13, 1, in, 1, out, 1, &e) == 0);
	check_vals(&out[0], 4, VALS(0.5, 0.5, 0.5, 0.5), 1e-7);
	tensor_release(&out[0]);
	/* Hardmax: the first maximum wins */
	node_init(&t, "Hardmax");
	node_int(&t, "axis", 0);
	tensor_set(&x, 1, 3);
	tensor_set(&x, 3, 3);
	REQUIRE(run(&t, 11, 1, in, 1, out, 1, &e) == 0);
	check_vals(&out[0], 4, VALS(0, 1, 0, 0), 0);
	tensor_release(&out[0]);
	REQUIRE(run(&t, 13, 1, in, 1, out, 1, &e) == 0);
	check_vals(&out[0], 4, VALS(1, 1, 0, 0), 0);
	tensor_release(&out[0]);
	tensor_release(&x);
}

/* Softmax split across threads gives the single-thread result. */
static void
test_softmax_threads(void)
{
	struct tnode t;
	struct tensor x = mk(DT_FLOAT, 3, DIMS(7, 100, 300), NULL);
	struct tensor one[1], two[1];
	const struct tensor *in[1] = { &x };
	struct err e;
	int64_t i;

	for (i = 0; i < x.nelem; i++)
		tensor_set(&x, i, 20 * rnd() - 10);
	for (int axis = 1; axis <= 2; axis++) {
		node_init(&t, "Softmax");
		node_int(&t, "axis", axis);
		REQUIRE(run(&t, 13, 1, in, 1, one, 1, &e) == 0);
		REQUIRE(run(&t, 13, 1, in, 1, two, 2, &e) == 0);
		for (i = 0; i < x.nelem; i++)
			if (!CHECK_NEAR(tensor_get(&two[0], i),
			    tensor_get(&one[0], i), 0))
				break;
		tensor_release(&one[0]);
		tensor_release(&two[0]);
	}
	tensor_release(&x);
}

/*
 * Float Softmax and LogSoftmax rows bit for bit as the plain loops made
 * them (max from the first element, libm's exp, the sum in double), on
 * rows with NaN first or inside, infinities, zeros of both signs as the
 * largest value and long rows (a recognizer's 6625 classes).
 */
static void
test_softmax_rows(void)
{
	static const int64_t lens[] = { 1, 7, 16, 37, 6625 };
	struct tnode t;
	struct err e;

	for (size_t c = 0; c < 2 * sizeof lens / sizeof lens[0]; c++) {
		int64_t n = lens[c / 2], rows = 6;
		int kind = (int)(c % 2);
		struct tensor x = mk(DT_FLOAT, 2, DIMS(rows, n), NULL);
		struct tensor out[1];
		const struct tensor *in[1] = { &x };
		float *xv = x.data, *y = malloc((size_t)n * sizeof *y);

		REQUIRE(y != NULL);
		for (int64_t i = 0; i < x.nelem; i++)
			xv[i] = (float)(20 * rnd() - 10);
		xv[0] = NAN;			/* row 0: NaN first */
		xv[n + n / 2] = NAN;		/* row 1: NaN inside */
		xv[2 * n + n - 1] = INFINITY;	/* row 2 */
		for (int64_t i = 0; i < n; i++)	/* row 3: zeros on top */
			xv[3 * n + i] = i % 3 == 0 ? -0.0f : i % 3 == 1 ?
			    0.0f : -xv[3 * n + i] * xv[3 * n + i];
		xv[4 * n + n - 1] = -INFINITY;	/* row 4 */
		node_init(&t, kind ? "LogSoftmax" : "Softmax");
		REQUIRE(run(&t, 13, 1, in, 1, out, 1, &e) == 0);
		for (int64_t r = 0; r < rows; r++) {
			const float *xs = xv + r * n;
			float m = xs[0];
			double sum = 0;

			for (int64_t k = 1; k < n; k++)
				m = xs[k] > m ? xs[k] : m;
			vexp_row(y, xs, m, n);
			for (int64_t k = 0; k < n; k++)
				sum += y[k];
			if (kind) {
				float ls = (float)(m + log(sum));

				for (int64_t k = 0; k < n; k++)
					y[k] = xs[k] - ls;
			} else {
				float inv = 1 / (float)sum;

				for (int64_t k = 0; k < n; k++)
					y[k] *= inv;
			}
			CHECK(memcmp(y, (float *)out[0].data + r * n,
			    (size_t)n * sizeof *y) == 0);
		}
		tensor_release(&out[0]);
		tensor_release(&x);
		free(y);
	}
}

static void
test_topk_argmax(void)
{
	struct tnode t;
	struct tensor x = mk(DT_FLOAT, 2, DIMS(2, 4),
	    VALS(1, 3, 3, 2, 5, 5, 5, 0));
	struct tensor k = mk(DT_INT64, 1, DIMS(1), VALS(2));
	struct tensor out[2];
	const struct tensor *in[2] = { &x, &k };
	struct err e;

	node_init(&t, "TopK");
	REQUIRE(run(&t, 11, 2, in, 2, out, 1, &e) == 0);
	check_vals(&out[0], 4, VALS(3, 3, 5, 5), 0);
	check_vals(&out[1], 4, VALS(1, 2, 0, 1), 0);
	tensor_release(&out[0]);
	tensor_release(&out[1]);
	node_int(&t, "largest", 0);
	REQUIRE(run(&t, 11, 2, in, 2, out, 1, &e) == 0);
	check_vals(&out[0], 4, VALS(1, 2, 0, 5), 0);
	check_vals(&out[1], 4, VALS(0, 3, 3, 0), 0);
	tensor_release(&out[0]);
	tensor_release(&out[1]);
	tensor_set(&k, 0, 5);
	CHECK(run(&t, 11, 2, in, 2, out, 1, &e) < 0);
	CHECK_EQ_STR(e.msg, "k 5 is out of range for axis of length 4");
	node_init(&t, "ArgMax");
	node_int(&t, "axis", 1);
	node_int(&t, "keepdims", 0);
	REQUIRE(run(&t, 13, 1, in, 1, out, 1, &e) == 0);
	CHECK_EQ_INT(out[0].rank, 1);
	check_vals(&out[0], 2, VALS(1, 0), 0);
	tensor_release(&out[0]);
	node_int(&t, "select_last_index", 1);
	REQUIRE(run(&t, 13, 1, in, 1, out, 1, &e) == 0);
	check_vals(&out[0], 2, VALS(2, 2), 0);
	tensor_release(&out[0]);
	tensor_release(&x);
	tensor_release(&k);
}

static void
test_cumsum(void)
{
	struct tnode t;
	struct tensor x = mk(DT_INT64, 2, DIMS(2, 3), VALS(1, 2, 3, 4, 5, 6));
	struct tensor ax = mk(DT_INT32, 0, NULL, VALS(1));
	struct tensor out[1];
	const struct tensor *in[2] = { &x, &ax };
	struct err e;

	node_init(&t, "CumSum");
	node_int(&t, "exclusive", 1);
	node_int(&t, "reverse", 1);
	REQUIRE(run(&t, 14, 2, in, 1, out, 1, &e) == 0);
	check_vals(&out[0], 6, VALS(5, 3, 0, 11, 6, 0), 0);
	tensor_release(&out[0]);
	tensor_set(&ax, 0, 2);
	CHECK(run(&t, 14, 2, in, 1, out, 1, &e) < 0);
	CHECK_EQ_STR(e.msg, "axis 2 is out of range for rank 2");
	tensor_release(&x);
	tensor_release(&ax);
}

UNIT_MAIN(test_broadcast_reference, test_broadcast_errors,
    test_legacy_broadcast, test_integer_edges, test_float_mod_and_pow,
    test_clip, test_activations, test_dropout, test_variadic,
    test_reduce_axes, test_reduce_large, test_softmax_axis_semantics,
    test_softmax_threads, test_softmax_rows, test_topk_argmax, test_cumsum)
