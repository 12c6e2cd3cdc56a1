/*
 * op_qlinear_test: the QOperator kernels (lib/op_qlinear.c) on cases
 * worked by hand: ORT's requantization (round half to even of acc *
 * scale_a * scale_b / scale_y, plus the zero point), QLinearAdd's
 * scale ratios, QLinearSoftmax's table, and the messages for inputs the
 * kernels refuse. test/qlinear-kernels.bats checks them against ORT.
 */
#include "optest.h"

/* A tensor of type dt and shape dims holding vals (a scalar: rank 0). */
static struct tensor
mk(int dt, int rank, const int64_t *dims, const double *vals)
{
	struct tensor t = { 0 };
	struct err e;

	if (tensor_alloc(&t, dt, rank, dims, &e) != 0)
		abort();
	for (int64_t i = 0; i < t.nelem; i++)
		tensor_set(&t, i, vals[i]);
	return t;
}

#define SCALAR(dt, v) mk(dt, 0, NULL, VALS(v))

static void
test_qlinearmatmul_rounds_half_to_even(void)
{
	struct tensor a = mk(DT_UINT8, 2, DIMS(1, 2), VALS(133, 128)),
	    as = SCALAR(DT_FLOAT, 0.5), az = SCALAR(DT_UINT8, 128),
	    b = mk(DT_INT8, 2, DIMS(2, 1), VALS(1, 1)),
	    bs = SCALAR(DT_FLOAT, 1), bz = SCALAR(DT_INT8, 0),
	    ys = SCALAR(DT_FLOAT, 1), yz = SCALAR(DT_UINT8, 10), y = { 0 };
	const struct tensor *in[] = { &a, &as, &az, &b, &bs, &bz, &ys, &yz };
	struct tnode t;
	struct err e;

	node_init(&t, "QLinearMatMul");
	/* acc 5 (5 + 0), times 0.5: 2.5, half to even 2, plus 10 */
	REQUIRE(op_run_in("", &t, 10, in, 8, &y, 1, 1, &e) == 0);
	CHECK_EQ_INT(y.dtype, DT_UINT8);
	CHECK_EQ_INT(y.rank, 2);
	CHECK_EQ_INT((int)tensor_get(&y, 0), 12);
	tensor_release_n((struct tensor []){ a, as, az, b, bs, bz, ys, yz, y },
	    9);
}

static void
test_qlinearadd_scale_ratios(void)
{
	struct tensor a = mk(DT_UINT8, 1, DIMS(2), VALS(10, 11)),
	    as = SCALAR(DT_FLOAT, 0.5), az = SCALAR(DT_UINT8, 0),
	    b = SCALAR(DT_UINT8, 4), bs = SCALAR(DT_FLOAT, 0.25),
	    bz = SCALAR(DT_UINT8, 0), cs = SCALAR(DT_FLOAT, 1),
	    cz = SCALAR(DT_UINT8, 3), y = { 0 };
	const struct tensor *in[] = { &a, &as, &az, &b, &bs, &bz, &cs, &cz };
	struct tnode t;
	struct err e;

	node_init(&t, "QLinearAdd");
	REQUIRE(op_run_in("com.microsoft", &t, 1, in, 8, &y, 1, 1, &e) == 0);
	/* 3 + 10 * 0.5 + 4 * 0.25 = 9; 3 + 5.5 + 1 = 9.5, to even 10 */
	CHECK_EQ_INT((int)tensor_get(&y, 0), 9);
	CHECK_EQ_INT((int)tensor_get(&y, 1), 10);
	tensor_release_n((struct tensor []){ a, as, az, b, bs, bz, cs, cz, y },
	    9);
}

static void
test_qlinearsoftmax_even_split(void)
{
	struct tensor x = mk(DT_UINT8, 2, DIMS(1, 4), VALS(7, 7, 7, 7)),
	    xs = SCALAR(DT_FLOAT, 0.1), xz = SCALAR(DT_UINT8, 0),
	    ys = SCALAR(DT_FLOAT, 1.0 / 256), yz = SCALAR(DT_UINT8, 0),
	    y = { 0 };
	const struct tensor *in[] = { &x, &xs, &xz, &ys, &yz };
	struct tnode t;
	struct err e;

	node_init(&t, "QLinearSoftmax");
	node_int(&t, "opset", 13);
	REQUIRE(op_run_in("com.microsoft", &t, 1, in, 5, &y, 1, 1, &e) == 0);
	for (int i = 0; i < 4; i++)
		CHECK_EQ_INT((int)tensor_get(&y, i), 64);
	tensor_release_n((struct tensor []){ x, xs, xz, ys, yz, y }, 6);
}

static void
test_refused_inputs(void)
{
	struct tensor x = mk(DT_INT16, 1, DIMS(2), VALS(1, 2)),
	    xs = SCALAR(DT_FLOAT, 0.1), xz = SCALAR(DT_INT16, 0),
	    x8 = mk(DT_UINT8, 1, DIMS(2), VALS(1, 2)),
	    zero = SCALAR(DT_FLOAT, 0), z8 = SCALAR(DT_UINT8, 0),
	    ys = SCALAR(DT_FLOAT, 0.1), y = { 0 };
	const struct tensor *in16[] = { &x, &xs, &xz, &ys, &z8 };
	const struct tensor *in0[] = { &x8, &zero, &z8, &ys, &z8 };
	struct tnode t;
	struct err e;

	node_init(&t, "QLinearSigmoid");
	CHECK(op_run_in("com.microsoft", &t, 1, in16, 5, &y, 1, 1, &e) != 0);
	CHECK(strstr(e.msg, "not uint8 or int8") != NULL);
	CHECK(op_run_in("com.microsoft", &t, 1, in0, 5, &y, 1, 1, &e) != 0);
	CHECK(strstr(e.msg, "is not positive") != NULL);
	tensor_release_n((struct tensor []){ x, xs, xz, x8, zero, z8, ys, y },
	    8);
}

UNIT_MAIN(test_qlinearmatmul_rounds_half_to_even,
    test_qlinearadd_scale_ratios, test_qlinearsoftmax_even_split,
    test_refused_inputs)
