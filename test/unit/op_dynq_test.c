/*
 * op_dynq_test: the dynamic quantization kernels on cases whose answer is
 * computed here: DynamicQuantizeLinear's scale, zero point and rounding
 * (half to even, the range widened to 0, all zeros); MatMulInteger and
 * ConvInteger against a direct integer sum, with K large enough that the
 * float products must be split into digits to stay exact; bad inputs.
 */
#include <stdlib.h>
#include <string.h>

#include "optest.h"
#include "unit.h"

static void
mk(struct tensor *t, int dtype, int rank, const int64_t *dims)
{
	struct err e;

	memset(t, 0, sizeof *t);
	if (tensor_alloc(t, dtype, rank, dims, &e) == -1)
		abort();
}

static void
test_dql(void)
{
	static const float xs[] = { -51, 0, 2.5f, 3.5f, 204 };
	struct tensor x, y[3];
	const struct tensor *in[1] = { &x };
	struct tnode t;
	struct err e;

	mk(&x, DT_FLOAT, 1, DIMS(5));
	memcpy(x.data, xs, sizeof xs);
	memset(y, 0, sizeof y);
	node_init(&t, "DynamicQuantizeLinear");
	REQUIRE(op_run_in("", &t, 11, in, 1, y, 3, 1, &e) == 0);
	/* scale 255 / 255 = 1, zp 51; 2.5 and 3.5 round half to even. */
	CHECK_NEAR(*(float *)y[1].data, 1, 0);
	CHECK_EQ_INT(*(uint8_t *)y[2].data, 51);
	CHECK_EQ_INT(((uint8_t *)y[0].data)[0], 0);
	CHECK_EQ_INT(((uint8_t *)y[0].data)[1], 51);
	CHECK_EQ_INT(((uint8_t *)y[0].data)[2], 53);
	CHECK_EQ_INT(((uint8_t *)y[0].data)[3], 55);
	CHECK_EQ_INT(((uint8_t *)y[0].data)[4], 255);
	tensor_release_n(y, 3);
	memset(x.data, 0, sizeof xs);
	REQUIRE(op_run_in("", &t, 11, in, 1, y, 3, 1, &e) == 0);
	CHECK_NEAR(*(float *)y[1].data, 1, 0);	/* ORT: 1 when max == min */
	CHECK_EQ_INT(*(uint8_t *)y[2].data, 0);
	tensor_release_n(y, 3);
	tensor_release(&x);
}

/* A (M x K uint8, zp za) times B (K x N int8, zp zb) at extremes. */
static void
test_matmul_exact(void)
{
	enum { M = 3, K = 700, N = 5 };
	struct tensor a, b, za, zb, y = { 0 };
	const struct tensor *in[4] = { &a, &b, &za, &zb };
	struct tnode t;
	struct err e;
	int bad = 0;

	mk(&a, DT_UINT8, 2, DIMS(M, K));
	mk(&b, DT_INT8, 2, DIMS(K, N));
	mk(&za, DT_UINT8, 0, NULL);
	mk(&zb, DT_INT8, 0, NULL);
	*(uint8_t *)za.data = 1;
	*(int8_t *)zb.data = 0;
	for (int i = 0; i < M * K; i++)
		((uint8_t *)a.data)[i] = i % 7 ? 255 : optest_rand() % 256;
	for (int i = 0; i < K * N; i++)
		((int8_t *)b.data)[i] = i % 5 ? -128 :
		    (int8_t)(optest_rand() % 256 - 128);
	node_init(&t, "MatMulInteger");
	REQUIRE(op_run_in("", &t, 10, in, 4, &y, 1, 1, &e) == 0);
	CHECK_EQ_INT(y.dtype, DT_INT32);
	for (int m = 0; m < M; m++)
		for (int n = 0; n < N; n++) {
			int64_t s = 0;

			for (int k = 0; k < K; k++)
				s += (((uint8_t *)a.data)[m * K + k] - 1) *
				    (int64_t)((int8_t *)b.data)[k * N + n];
			bad += ((int32_t *)y.data)[m * N + n] != s;
		}
	CHECK_EQ_INT(bad, 0);
	tensor_release(&y);
	/* A zero point of another type than its input. */
	in[3] = &za;
	CHECK(op_run_in("", &t, 10, in, 4, &y, 1, 1, &e) == -1);
	CHECK_EQ_STR(e.msg, "input 1: zero point type uint8 differs from the "
	    "input's int8");
	tensor_release(&a), tensor_release(&b);
	tensor_release(&za), tensor_release(&zb);
}

/* Output (m, i, j) of a 3x3 convolution, padded with zero point z. */
static int64_t
conv_at(const struct tensor *x, const struct tensor *w, int z, int m, int i,
    int j)
{
	int64_t C = x->dims[1], H = x->dims[2], W = x->dims[3], s = 0;
	const uint8_t *xd = x->data, *wd = w->data;

	for (int64_t c = 0; c < C; c++)
		for (int u = 0; u < 3; u++)
			for (int v = 0; v < 3; v++) {
				int64_t r = i + u - 1, q = j + v - 1;
				int out = r < 0 || q < 0 || r >= H || q >= W;
				int xv = out ? z : xd[(c * H + r) * W + q];

				s += (int64_t)(xv - z) *
				    wd[((m * C + c) * 3 + u) * 3 + v];
			}
	return s;
}

/* A 3x3 ConvInteger with padding (the zero point) against direct sums. */
static void
test_conv_exact(void)
{
	enum { C = 80, H = 4, W = 4, M = 2 };
	struct tensor x, w, zx, y = { 0 };
	const struct tensor *in[3] = { &x, &w, &zx };
	struct tnode t;
	struct err e;
	int bad = 0;

	mk(&x, DT_UINT8, 4, DIMS(1, C, H, W));
	mk(&w, DT_UINT8, 4, DIMS(M, C, 3, 3));
	mk(&zx, DT_UINT8, 0, NULL);
	*(uint8_t *)zx.data = 3;
	for (int i = 0; i < C * H * W; i++)
		((uint8_t *)x.data)[i] = i % 3 ? 255 : optest_rand() % 256;
	for (int i = 0; i < M * C * 9; i++)
		((uint8_t *)w.data)[i] = i % 4 ? 255 : optest_rand() % 256;
	node_init(&t, "ConvInteger");
	node_ints(&t, "pads", DIMS(1, 1, 1, 1), 4);
	REQUIRE(op_run_in("", &t, 10, in, 3, &y, 1, 1, &e) == 0);
	for (int m = 0; m < M; m++)
		for (int i = 0; i < H; i++)
			for (int j = 0; j < W; j++)
				bad += conv_at(&x, &w, 3, m, i, j) !=
				    ((int32_t *)y.data)[(m * H + i) * W + j];
	CHECK_EQ_INT(bad, 0);
	tensor_release(&y);
	tensor_release(&x), tensor_release(&w), tensor_release(&zx);
}

UNIT_MAIN(test_dql, test_matmul_exact, test_conv_exact)
