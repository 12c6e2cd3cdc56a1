/*
 * op_attn_test: com.microsoft Attention and QAttention on cases whose
 * answer follows from the definition: one head with Q = K = V = x
 * against a softmax computed here; a padded key (raw mask) changes
 * nothing for the others, as if it were not there; a causal first token
 * sees only itself; two heads are two one-head attentions side by side;
 * QAttention equals Attention on its dequantized input and weight; bad
 * input.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "optest.h"
#include "unit.h"

enum { S = 3, E = 2 };

static void
mk(struct tensor *t, int dtype, int rank, const int64_t *dims)
{
	struct err e;

	memset(t, 0, sizeof *t);
	if (tensor_alloc(t, dtype, rank, dims, &e) == -1)
		abort();
}

static const float xs[S * E] = { 0.5f, -1, 1.5f, 0.25f, -0.75f, 2 };

/* x (1 x s x E), weights [I | I | I] (heads of one column each, or one
 * of two), bias 0; the Attention's output into y. */
static int
run_attn(struct tnode *t, int s, const struct tensor *mask, struct tensor *y,
    struct err *e)
{
	struct tensor x, w, b;
	const struct tensor *in[4] = { &x, &w, &b, mask };
	int rc;

	mk(&x, DT_FLOAT, 3, DIMS(1, s, E));
	mk(&w, DT_FLOAT, 2, DIMS(E, 3 * E));
	mk(&b, DT_FLOAT, 1, DIMS(3 * E));
	memcpy(x.data, xs, (size_t)(s * E) * sizeof *xs);
	for (int i = 0; i < E; i++)
		for (int k = 0; k < 3; k++)
			((float *)w.data)[i * 3 * E + k * E + i] = 1;
	rc = op_run_in("com.microsoft", t, 1, in, mask ? 4 : 3, y, 1, 1, e);
	tensor_release(&x), tensor_release(&w), tensor_release(&b);
	return rc;
}

/* Row i, column c of one-column heads' attention over the first s rows. */
static float
head_at(int s, int i, int c, float scale)
{
	float p[S], sum = 0, out = 0;

	for (int j = 0; j < s; j++)
		sum += p[j] = expf(scale * xs[i * E + c] * xs[j * E + c]);
	for (int j = 0; j < s; j++)
		out += p[j] / sum * xs[j * E + c];
	return out;
}

static void
test_heads_mask_causal(void)
{
	struct tensor y = { 0 }, y2 = { 0 }, m;
	struct tnode t;
	struct err e;
	float d = 0;

	/* Two heads of one column: each head is its column alone. */
	node_init(&t, "Attention");
	node_int(&t, "num_heads", 2);
	REQUIRE(run_attn(&t, S, NULL, &y, &e) == 0);
	for (int i = 0; i < S; i++)
		for (int c = 0; c < E; c++)
			d = fmaxf(d, fabsf(((float *)y.data)[i * E + c] -
			    head_at(S, i, c, 1)));
	CHECK_NEAR(d, 0, 1e-6);
	tensor_release(&y);
	/* The last key padded: rows 0 and 1 as over two tokens. */
	mk(&m, DT_INT32, 2, DIMS(1, S));
	((int32_t *)m.data)[0] = ((int32_t *)m.data)[1] = 1;
	REQUIRE(run_attn(&t, S, &m, &y, &e) == 0);
	REQUIRE(run_attn(&t, 2, NULL, &y2, &e) == 0);
	d = 0;
	for (int i = 0; i < 2 * E; i++)
		d = fmaxf(d, fabsf(((float *)y.data)[i] -
		    ((float *)y2.data)[i]));
	CHECK_NEAR(d, 0, 1e-6);
	tensor_release(&y), tensor_release(&y2), tensor_release(&m);
	/* Causal: the first token attends to itself alone. */
	node_int(&t, "unidirectional", 1);
	REQUIRE(run_attn(&t, S, NULL, &y, &e) == 0);
	CHECK_NEAR(((float *)y.data)[0], xs[0], 1e-6);
	CHECK_NEAR(((float *)y.data)[1], xs[1], 1e-6);
	tensor_release(&y);
	/* num_heads must divide the hidden size. */
	node_init(&t, "Attention");
	node_int(&t, "num_heads", 3);
	CHECK(run_attn(&t, S, NULL, &y, &e) == -1);
	CHECK_EQ_STR(e.msg, "num_heads 3 does not divide the hidden size 2");
}

/* QAttention on (q - zp) * scale equals Attention on those floats. */
static void
test_qattention(void)
{
	struct tensor xq, wq, b, xs_, ws, xz, wz, xf, wf;
	struct tensor y = { 0 }, yf = { 0 };
	const struct tensor *qin[8] = { &xq, &wq, &b, &xs_, &ws, NULL, &xz,
	    &wz }, *fin[3] = { &xf, &wf, &b };
	struct tnode t;
	struct err e;
	float d = 0;

	mk(&xq, DT_UINT8, 3, DIMS(1, S, E));
	mk(&wq, DT_INT8, 2, DIMS(E, 3 * E));
	mk(&b, DT_FLOAT, 1, DIMS(3 * E));
	mk(&xs_, DT_FLOAT, 0, NULL);
	mk(&ws, DT_FLOAT, 1, DIMS(3 * E));
	mk(&xz, DT_UINT8, 0, NULL);
	mk(&wz, DT_INT8, 0, NULL);
	mk(&xf, DT_FLOAT, 3, DIMS(1, S, E));
	mk(&wf, DT_FLOAT, 2, DIMS(E, 3 * E));
	*(float *)xs_.data = 0.03125f;
	*(uint8_t *)xz.data = 100;
	for (int i = 0; i < S * E; i++) {
		((uint8_t *)xq.data)[i] = (uint8_t)(optest_rand() % 256);
		((float *)xf.data)[i] = (((uint8_t *)xq.data)[i] - 100) *
		    0.03125f;
	}
	for (int i = 0; i < 3 * E; i++) {
		((float *)ws.data)[i] = 0.0078125f * (float)(i + 1);
		((float *)b.data)[i] = 0.25f * (float)i - 0.5f;
	}
	for (int i = 0; i < E * 3 * E; i++) {
		((int8_t *)wq.data)[i] = (int8_t)(optest_rand() % 255 - 127);
		((float *)wf.data)[i] = ((int8_t *)wq.data)[i] *
		    ((float *)ws.data)[i % (3 * E)];
	}
	node_init(&t, "QAttention");
	node_int(&t, "num_heads", 1);
	REQUIRE(op_run_in("com.microsoft", &t, 1, qin, 8, &y, 1, 1, &e) == 0);
	node_init(&t, "Attention");
	node_int(&t, "num_heads", 1);
	REQUIRE(op_run_in("com.microsoft", &t, 1, fin, 3, &yf, 1, 1, &e) == 0);
	for (int i = 0; i < S * E; i++)
		d = fmaxf(d, fabsf(((float *)y.data)[i] -
		    ((float *)yf.data)[i]));
	CHECK_NEAR(d, 0, 1e-5);
	tensor_release(&y);
	/* Without its scales. */
	node_init(&t, "QAttention");
	node_int(&t, "num_heads", 1);
	CHECK(op_run_in("com.microsoft", &t, 1, qin, 3, &y, 1, 1, &e) == -1);
	CHECK_EQ_STR(e.msg, "input_scale and weight_scale are required");
	tensor_release(&yf);
	tensor_release(&xq), tensor_release(&wq), tensor_release(&b);
	tensor_release(&xs_), tensor_release(&ws), tensor_release(&xz);
	tensor_release(&wz), tensor_release(&xf), tensor_release(&wf);
}

UNIT_MAIN(test_heads_mask_causal, test_qattention)
