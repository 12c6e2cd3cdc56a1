/*
 * op_nn_test: the kernels of lib/op_nn.c and lib/op_quant.c, called
 * directly through struct op_ctx. Convolutions (direct, depthwise,
 * pointwise, tiled im2col with two threads, grouped, 1-D and 3-D) and
 * ConvTranspose are checked against naive loops written here; Gemm,
 * MatMul, Einsum, pooling, normalisation, Resize and the quantisation ops
 * against small hand-computed or naive results; malformed inputs must
 * fail with a message. Needs only libonnxq.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "optest.h"

static int
run_op(struct tnode *t, int opset, const struct tensor **in, int nin,
    struct tensor *out, int nout, int threads, struct err *e)
{
	return op_run_in("", t, opset, in, nin, out, nout, threads, e);
}

static void
mk(struct tensor *t, int dtype, int rank, const int64_t *dims,
    const double *vals)
{
	struct err e;

	memset(t, 0, sizeof *t);
	if (tensor_alloc(t, dtype, rank, dims, &e) == -1)
		abort();
	for (int64_t i = 0; vals && i < t->nelem; i++)
		tensor_set(t, i, vals[i]);
}

/* Pseudo-random floats in [-1, 1), reproducible. */
static void
mk_rand(struct tensor *t, int rank, const int64_t *dims, unsigned seed)
{
	uint32_t s = seed * 2654435761u + 1;

	mk(t, DT_FLOAT, rank, dims, NULL);
	for (int64_t i = 0; i < t->nelem; i++) {
		s = s * 1664525u + 1013904223u;
		((float *)t->data)[i] = (float)(s >> 8) / (1 << 23) - 1.0f;
	}
}

static double
max_diff(const struct tensor *a, const float *b)
{
	double m = 0;

	for (int64_t i = 0; i < a->nelem; i++) {
		double d = fabs(((const float *)a->data)[i] - b[i]);

		if (!(d <= m))
			m = d;
	}
	return m;
}

/*
 * Naive 2-D convolution: x N x C x H x W, w M x C/g x KH x KW, explicit
 * pads (top, left, bottom, right).
 */
struct cgeo {
	int64_t n, c, h, w, m, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, g;
};

static void
conv_ref(const struct cgeo *q, const float *x, const float *w,
    const float *b, float *y, int64_t oh, int64_t ow)
{
	int64_t cg = q->c / q->g, mg = q->m / q->g;

	for (int64_t n = 0; n < q->n; n++)
		for (int64_t m = 0; m < q->m; m++)
			for (int64_t i = 0; i < oh; i++)
				for (int64_t j = 0; j < ow; j++) {
					double s = b ? b[m] : 0;
					int64_t g = m / mg;

					for (int64_t ci = 0; ci < cg; ci++)
						for (int64_t a = 0; a < q->kh; a++)
							for (int64_t bb = 0; bb < q->kw; bb++) {
								int64_t ih = i * q->sh - q->pt + a * q->dh;
								int64_t iw = j * q->sw - q->pl + bb * q->dw;

								if (ih < 0 || ih >= q->h || iw < 0 || iw >= q->w)
									continue;
								s += (double)x[((n * q->c + g * cg + ci) * q->h + ih) * q->w + iw] *
								    w[((m * cg + ci) * q->kh + a) * q->kw + bb];
							}
					y[((n * q->m + m) * oh + i) * ow + j] = (float)s;
				}
}

static void
check_conv(const struct cgeo *q, int with_bias, int threads)
{
	struct tnode t;
	struct tensor x, w, b, y = { 0 };
	const struct tensor *in[3] = { &x, &w, &b };
	int64_t xd[4] = { q->n, q->c, q->h, q->w };
	int64_t wd[4] = { q->m, q->c / q->g, q->kh, q->kw }, bd[1] = { q->m };
	int64_t k[2] = { q->kh, q->kw }, s[2] = { q->sh, q->sw };
	int64_t d[2] = { q->dh, q->dw }, p[4] = { q->pt, q->pl, q->pb, q->pr };
	int64_t oh = (q->h + q->pt + q->pb - (q->kh - 1) * q->dh - 1) / q->sh + 1;
	int64_t ow = (q->w + q->pl + q->pr - (q->kw - 1) * q->dw - 1) / q->sw + 1;
	float *ref;
	struct err e;

	mk_rand(&x, 4, xd, 1);
	mk_rand(&w, 4, wd, 2);
	mk_rand(&b, 1, bd, 3);
	node_init(&t, "Conv");
	node_ints(&t, "kernel_shape", k, 2);
	node_ints(&t, "strides", s, 2);
	node_ints(&t, "dilations", d, 2);
	node_ints(&t, "pads", p, 4);
	node_int(&t, "group", q->g);
	ref = malloc(sizeof *ref * (size_t)(q->n * q->m * oh * ow));
	conv_ref(q, x.data, w.data, with_bias ? b.data : NULL, ref, oh, ow);
	if (CHECK(run_op(&t, 11, in, with_bias ? 3 : 2, &y, 1, threads,
	    &e) == 0)) {
		CHECK_EQ_INT(y.rank, 4);
		CHECK_EQ_INT(y.dims[2], oh);
		CHECK_EQ_INT(y.dims[3], ow);
		if (y.nelem == q->n * q->m * oh * ow)
			CHECK_NEAR(max_diff(&y, ref), 0, 1e-4);
	} else
		CHECK_EQ_STR(e.msg, "");
	free(ref);
	tensor_release(&x), tensor_release(&w), tensor_release(&b);
	tensor_release(&y);
}

static void
test_conv_paths(void)
{
	static const struct cgeo g[] = {
		/* n c h w m kh kw sh sw dh dw pt pl pb pr g */
		{ 1, 3, 9, 11, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1 },
		{ 2, 4, 7, 6, 6, 3, 2, 2, 1, 1, 2, 0, 1, 2, 0, 2 },
		/* pointwise: no unfolding, tiled over positions */
		{ 1, 16, 40, 50, 24, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1 },
		/* big enough for the tiled im2col path */
		{ 1, 32, 45, 47, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1 },
		{ 1, 8, 64, 64, 8, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2, 1 },
		/* depthwise, stride 1, 2, 3, with a channel multiplier */
		{ 1, 12, 30, 33, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 12 },
		{ 2, 6, 21, 19, 6, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2, 6 },
		{ 1, 4, 17, 20, 8, 3, 3, 3, 3, 2, 2, 0, 3, 1, 0, 4 },
		/* inner panels read straight from the input (stride 1) */
		{ 1, 20, 70, 70, 16, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1 },
		{ 1, 40, 36, 70, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1 },
		/* kernel exactly as large as the padded input */
		{ 1, 2, 3, 3, 3, 5, 5, 1, 1, 1, 1, 1, 1, 1, 1, 1 },
	};

	for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
		check_conv(&g[i], 1, 2);
		check_conv(&g[i], 0, 1);
	}
}

/* Depthwise output (c, r, o): float sums in tap order, in-bounds taps. */
static float
dw_ref(const struct cgeo *q, const struct tensor *x, const struct tensor *w,
    const struct tensor *b, int64_t c, int64_t r, int64_t o)
{
	const float *xc = (const float *)x->data + c * q->h * q->w;
	const float *wc = (const float *)w->data + c * q->kh * q->kw;
	float sum = ((const float *)b->data)[c];

	for (int64_t a = 0; a < q->kh; a++)
		for (int64_t bb = 0; bb < q->kw; bb++) {
			int64_t ih = r * q->sh - q->pt + a * q->dh;
			int64_t iw = o * q->sw - q->pl + bb * q->dw;

			if (ih >= 0 && ih < q->h && iw >= 0 && iw < q->w)
				sum += wc[a * q->kw + bb] * xc[ih * q->w + iw];
		}
	return sum;
}

/*
 * Depthwise convolutions, exactly: every output is the bias plus the
 * products of its in-bounds taps added in float in row-major tap order,
 * whichever kernel runs (the 3x3 and 5x5 ones of stride 1 and 2
 * specialised, the generic one, big planes read in place with their
 * borders checked, small ones copied into a padded buffer, rows narrower
 * than a block).
 */
static void
test_depthwise_exact(void)
{
	static const struct cgeo g[] = {
		/* n c h w m kh kw sh sw dh dw pt pl pb pr g */
		{ 1, 3, 24, 80, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3 },
		{ 1, 3, 24, 80, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 3 },
		{ 1, 3, 12, 40, 3, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 3 },
		{ 1, 3, 12, 41, 3, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2, 3 },
		{ 1, 2, 3, 10, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2 },
		{ 1, 2, 5, 7, 2, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2, 2 },
		{ 1, 2, 130, 140, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2 },
		{ 1, 2, 130, 150, 2, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2, 2 },
		{ 1, 2, 130, 140, 2, 3, 5, 1, 2, 1, 1, 1, 2, 1, 2, 2 },
		{ 1, 2, 20, 30, 2, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 2 },
		/* stride 2 in height only, as text recognisers have */
		{ 1, 3, 24, 80, 3, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 3 },
		{ 1, 2, 130, 140, 2, 5, 5, 2, 1, 1, 1, 2, 2, 2, 2, 2 },
		{ 1, 2, 6, 40, 2, 5, 5, 2, 1, 1, 1, 2, 2, 2, 2, 2 },
	};

	for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
		const struct cgeo *q = &g[i];
		struct tnode t;
		struct tensor x, w, b, y = { 0 };
		const struct tensor *in[3] = { &x, &w, &b };
		int64_t xd[4] = { q->n, q->c, q->h, q->w };
		int64_t wd[4] = { q->m, 1, q->kh, q->kw }, bd[1] = { q->m };
		int64_t k[2] = { q->kh, q->kw }, st[2] = { q->sh, q->sw };
		int64_t d[2] = { q->dh, q->dw };
		int64_t p[4] = { q->pt, q->pl, q->pb, q->pr };
		int64_t oh = (q->h + q->pt + q->pb - (q->kh - 1) * q->dh - 1) /
		    q->sh + 1;
		int64_t ow = (q->w + q->pl + q->pr - (q->kw - 1) * q->dw - 1) /
		    q->sw + 1;
		int64_t bad = 0;
		struct err e;

		mk_rand(&x, 4, xd, 11 + (unsigned)i);
		mk_rand(&w, 4, wd, 12);
		mk_rand(&b, 1, bd, 13);
		node_init(&t, "Conv");
		node_ints(&t, "kernel_shape", k, 2);
		node_ints(&t, "strides", st, 2);
		node_ints(&t, "dilations", d, 2);
		node_ints(&t, "pads", p, 4);
		node_int(&t, "group", q->g);
		if (!CHECK(run_op(&t, 11, in, 3, &y, 1, 2, &e) == 0) ||
		    !CHECK(y.nelem == q->m * oh * ow))
			continue;
		for (int64_t c = 0; c < q->c; c++)
			for (int64_t r = 0; r < oh; r++)
				for (int64_t o = 0; o < ow; o++)
					bad += dw_ref(q, &x, &w, &b, c, r, o) !=
					    ((const float *)y.data)[(c * oh +
					    r) * ow + o];
		CHECK_EQ_INT(bad, 0);
		tensor_release(&x), tensor_release(&w), tensor_release(&b);
		tensor_release(&y);
	}
}

/* c: Conv node t (opset 11) on in[0..2) into y, two threads, state. */
static void
conv_ctx(struct op_ctx *c, struct tnode *t, const struct tensor **in,
    struct tensor *y, void **state, struct err *e)
{
	node_init(t, "Conv");
	memset(c, 0, sizeof *c);
	c->node = &t->n, c->opset = 11, c->nin = 2, c->in = in, c->nout = 1;
	c->out = y, c->threads = 2, c->state = state, c->err = e;
}

/*
 * op_ctx.scratch: two convolutions of different sizes share one buffer
 * (the interpreter's nodes do), which grows to the larger need; the
 * results are those of the reference either way.
 */
static void
test_conv_shared_scratch(void)
{
	const struct op_def *d = ops_find("", "Conv");
	struct tnode t;
	struct tensor x, w, x2, w2, y = { 0 };
	const struct tensor *in[2] = { &x, &w };
	int64_t xd[4] = { 1, 8, 20, 40 }, wd[4] = { 5, 8, 3, 3 };
	int64_t xd2[4] = { 1, 2, 6, 7 }, wd2[4] = { 3, 2, 3, 3 };
	struct cgeo q = { 1, 8, 20, 40, 5, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1 };
	struct cgeo q2 = { 1, 2, 6, 7, 3, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1 };
	float ref[5 * 18 * 38], ref2[3 * 4 * 5];
	struct op_scratch sh = { NULL, 0 };
	void *state = NULL, *state2 = NULL;
	struct op_ctx c;
	struct err e;
	size_t big;

	mk_rand(&x, 4, xd, 26);
	mk_rand(&w, 4, wd, 27);
	mk_rand(&x2, 4, xd2, 28);
	mk_rand(&w2, 4, wd2, 29);
	conv_ctx(&c, &t, in, &y, &state, &e);
	c.scratch = &sh;
	conv_ref(&q, x.data, w.data, NULL, ref, 18, 38);
	REQUIRE(d->run(&c) == 0);
	CHECK_NEAR(max_diff(&y, ref), 0, 1e-5);
	tensor_release(&y);
	CHECK(sh.p != NULL && sh.n > 0);
	big = sh.n;
	/* the smaller one: the same buffer, not grown */
	in[0] = &x2, in[1] = &w2, c.state = &state2;
	conv_ref(&q2, x2.data, w2.data, NULL, ref2, 4, 5);
	REQUIRE(d->run(&c) == 0);
	CHECK_NEAR(max_diff(&y, ref2), 0, 1e-5);
	CHECK(sh.n == big);
	tensor_release(&y);
	d->free_state(state);
	d->free_state(state2);
	free(sh.p);
	tensor_release(&x), tensor_release(&w);
	tensor_release(&x2), tensor_release(&w2);
}

/* Cached packed weights must follow weights that change between runs. */
static void
test_conv_weights_change(void)
{
	const struct op_def *d = ops_find("", "Conv");
	struct tnode t;
	struct tensor x, w, y = { 0 };
	const struct tensor *in[2] = { &x, &w };
	int64_t xd[4] = { 1, 8, 20, 40 }, wd[4] = { 5, 8, 3, 3 };
	struct cgeo q = { 1, 8, 20, 40, 5, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1 };
	float ref[5 * 18 * 38];
	void *state = NULL;
	struct op_ctx c;
	struct err e;

	mk_rand(&x, 4, xd, 16);
	mk_rand(&w, 4, wd, 17);
	conv_ctx(&c, &t, in, &y, &state, &e);
	REQUIRE(d->run(&c) == 0);
	tensor_release(&y);
	((float *)w.data)[w.nelem - 1] += 1;
	((float *)w.data)[0] -= 2;
	conv_ref(&q, x.data, w.data, NULL, ref, 18, 38);
	REQUIRE(d->run(&c) == 0);
	CHECK_NEAR(max_diff(&y, ref), 0, 1e-5);
	d->free_state(state);
	tensor_release(&x), tensor_release(&w), tensor_release(&y);
}

static void
test_conv_1d_3d(void)
{
	/* A 1-D conv is the 2-D one with height 1; a 3-D one with depth 1. */
	struct tnode t;
	struct tensor x, w, y = { 0 }, y3 = { 0 }, x3, w3;
	const struct tensor *in[2] = { &x, &w };
	int64_t xd[3] = { 2, 3, 20 }, wd[3] = { 4, 3, 3 }, k[1] = { 3 };
	int64_t s[1] = { 2 }, p[2] = { 1, 2 };
	struct cgeo q = { 2, 3, 1, 20, 4, 1, 3, 1, 2, 1, 1, 0, 1, 0, 2, 1 };
	float ref[2 * 4 * 11];
	struct err e;

	mk_rand(&x, 3, xd, 4);
	mk_rand(&w, 3, wd, 5);
	node_init(&t, "Conv");
	node_ints(&t, "kernel_shape", k, 1);
	node_ints(&t, "strides", s, 1);
	node_ints(&t, "pads", p, 2);
	conv_ref(&q, x.data, w.data, NULL, ref, 1, 11);
	REQUIRE(run_op(&t, 11, in, 2, &y, 1, 1, &e) == 0);
	CHECK_EQ_INT(y.dims[2], 11);
	CHECK_NEAR(max_diff(&y, ref), 0, 1e-5);
	{
		int64_t xd3[5] = { 2, 3, 1, 1, 20 }, wd3[5] = { 4, 3, 1, 1, 3 };
		int64_t k3[3] = { 1, 1, 3 }, s3[3] = { 1, 1, 2 };
		int64_t p3[6] = { 0, 0, 1, 0, 0, 2 };
		const struct tensor *in3[2] = { &x3, &w3 };

		mk(&x3, DT_FLOAT, 5, xd3, NULL);
		mk(&w3, DT_FLOAT, 5, wd3, NULL);
		memcpy(x3.data, x.data, sizeof(float) * (size_t)x.nelem);
		memcpy(w3.data, w.data, sizeof(float) * (size_t)w.nelem);
		node_init(&t, "Conv");
		node_ints(&t, "kernel_shape", k3, 3);
		node_ints(&t, "strides", s3, 3);
		node_ints(&t, "pads", p3, 6);
		REQUIRE(run_op(&t, 11, in3, 2, &y3, 1, 2, &e) == 0);
		CHECK_EQ_INT(y3.nelem, y.nelem);
		CHECK_NEAR(max_diff(&y3, y.data), 0, 1e-5);
		tensor_release(&x3), tensor_release(&w3), tensor_release(&y3);
	}
	tensor_release(&x), tensor_release(&w), tensor_release(&y);
}

static void
test_conv_auto_pad(void)
{
	/* SAME_UPPER on 5 with kernel 4, stride 2: out 3, pads 1 + 2. */
	struct tnode t;
	struct tensor x, w, y = { 0 };
	const struct tensor *in[2] = { &x, &w };
	int64_t xd[4] = { 1, 1, 5, 5 }, wd[4] = { 1, 1, 4, 4 };
	int64_t s[2] = { 2, 2 };
	struct cgeo q = { 1, 1, 5, 5, 1, 4, 4, 2, 2, 1, 1, 1, 1, 2, 2, 1 };
	float ref[9];
	struct err e;

	mk_rand(&x, 4, xd, 6);
	mk_rand(&w, 4, wd, 7);
	node_init(&t, "Conv");
	node_str(&t, "auto_pad", "SAME_UPPER");
	node_ints(&t, "strides", s, 2);
	conv_ref(&q, x.data, w.data, NULL, ref, 3, 3);
	REQUIRE(run_op(&t, 11, in, 2, &y, 1, 1, &e) == 0);
	CHECK_EQ_INT(y.dims[2], 3);
	CHECK_NEAR(max_diff(&y, ref), 0, 1e-5);
	tensor_release(&y);
	q.pt = q.pl = 2, q.pb = q.pr = 1;
	node_init(&t, "Conv");
	node_str(&t, "auto_pad", "SAME_LOWER");
	node_ints(&t, "strides", s, 2);
	conv_ref(&q, x.data, w.data, NULL, ref, 3, 3);
	REQUIRE(run_op(&t, 11, in, 2, &y, 1, 1, &e) == 0);
	CHECK_NEAR(max_diff(&y, ref), 0, 1e-5);
	tensor_release(&x), tensor_release(&w), tensor_release(&y);
}

static void
test_conv_errors(void)
{
	struct tnode t;
	struct tensor x, w, b, y = { 0 }, x8;
	const struct tensor *in[3] = { &x, &w, &b };
	int64_t xd[4] = { 1, 4, 5, 5 }, wd[4] = { 6, 2, 3, 3 }, bd[1] = { 5 };
	int64_t zero[2] = { 0, 1 }, big[2] = { 9, 9 };
	struct err e;

	mk(&x, DT_FLOAT, 4, xd, NULL);
	mk(&w, DT_FLOAT, 4, wd, NULL);
	mk(&b, DT_FLOAT, 1, bd, NULL);
	node_init(&t, "Conv");
	CHECK(run_op(&t, 11, in, 2, &y, 1, 1, &e) == -1);
	CHECK_EQ_STR(e.msg, "input 1: weight has 2 input channels per group, "
	    "input 0 has 4 channels in 1 groups");
	node_int(&t, "group", 2);
	CHECK(run_op(&t, 11, in, 3, &y, 1, 1, &e) == -1);
	CHECK_EQ_STR(e.msg, "input 2: bias must be 1-D with 6 values");
	node_init(&t, "Conv");
	node_int(&t, "group", 4);
	CHECK(run_op(&t, 11, in, 2, &y, 1, 1, &e) == -1);
	CHECK_EQ_STR(e.msg, "input 1: weight has 2 input channels per group, "
	    "input 0 has 4 channels in 4 groups");
	node_init(&t, "Conv");
	node_int(&t, "group", 2);
	node_ints(&t, "strides", zero, 2);
	CHECK(run_op(&t, 11, in, 2, &y, 1, 1, &e) == -1);
	CHECK_EQ_STR(e.msg, "attribute strides: value 0 is out of range");
	node_init(&t, "Conv");
	node_int(&t, "group", 2);
	node_ints(&t, "dilations", big, 2);
	CHECK(run_op(&t, 11, in, 2, &y, 1, 1, &e) == -1);
	CHECK_EQ_STR(e.msg, "kernel extent 19 is larger than the padded input "
	    "5 on spatial axis 0");
	node_init(&t, "Conv");
	node_int(&t, "group", 2);
	node_ints(&t, "kernel_shape", big, 2);
	CHECK(run_op(&t, 11, in, 2, &y, 1, 1, &e) == -1);
	CHECK_EQ_STR(e.msg, "kernel_shape 9 on spatial axis 0 differs from "
	    "the weights' 3");
	node_init(&t, "Conv");
	node_int(&t, "group", 0);
	CHECK(run_op(&t, 11, in, 2, &y, 1, 1, &e) == -1);
	CHECK_EQ_STR(e.msg, "group 0 is out of range");
	node_init(&t, "Conv");
	node_str(&t, "auto_pad", "SAME");
	node_int(&t, "group", 2);
	CHECK(run_op(&t, 11, in, 2, &y, 1, 1, &e) == -1);
	CHECK_EQ_STR(e.msg, "unknown auto_pad \"SAME\"");
	mk(&x8, DT_UINT8, 4, xd, NULL);
	in[0] = &x8;
	node_init(&t, "Conv");
	CHECK(run_op(&t, 11, in, 2, &y, 1, 1, &e) == -1);
	CHECK_EQ_STR(e.msg, "input 0: element type uint8 is not supported "
	    "(float only)");
	in[0] = &w;
	in[1] = &x;
	w.rank = 3;
	CHECK(run_op(&t, 11, in, 2, &y, 1, 1, &e) == -1);
	CHECK_EQ_STR(e.msg, "input 1: weight rank 4 differs from input rank 3");
	w.rank = 4;
	CHECK(y.data == NULL);
	tensor_release(&x), tensor_release(&w), tensor_release(&b);
	tensor_release(&x8);
}

/* ConvTranspose against a naive scatter. */
static void
test_convtranspose(void)
{
	static const struct {
		int64_t n, c, h, w, mg, kh, kw, sh, sw, dh, dw, pt, pl, pb,
		    pr, g, oph, opw;
	} cs[] = {
		{ 1, 4, 20, 20, 3, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, 1, 0, 0 },
		{ 2, 4, 5, 7, 2, 3, 3, 2, 1, 1, 2, 1, 0, 0, 1, 2, 1, 0 },
		{ 1, 6, 9, 8, 1, 4, 3, 3, 2, 1, 1, 2, 1, 1, 2, 3, 0, 1 },
	};

	for (size_t ci = 0; ci < sizeof cs / sizeof cs[0]; ci++) {
		struct tnode t;
		struct tensor x, w, b, y = { 0 };
		const struct tensor *in[3] = { &x, &w, &b };
		int64_t m = cs[ci].mg * cs[ci].g, cg = cs[ci].c / cs[ci].g;
		int64_t xd[4] = { cs[ci].n, cs[ci].c, cs[ci].h, cs[ci].w };
		int64_t wd[4] = { cs[ci].c, cs[ci].mg, cs[ci].kh, cs[ci].kw };
		int64_t bd[1] = { m }, k[2] = { cs[ci].kh, cs[ci].kw };
		int64_t s[2] = { cs[ci].sh, cs[ci].sw };
		int64_t d[2] = { cs[ci].dh, cs[ci].dw };
		int64_t p[4] = { cs[ci].pt, cs[ci].pl, cs[ci].pb, cs[ci].pr };
		int64_t op[2] = { cs[ci].oph, cs[ci].opw };
		int64_t oh = cs[ci].sh * (cs[ci].h - 1) + cs[ci].oph +
		    (cs[ci].kh - 1) * cs[ci].dh + 1 - cs[ci].pt - cs[ci].pb;
		int64_t ow = cs[ci].sw * (cs[ci].w - 1) + cs[ci].opw +
		    (cs[ci].kw - 1) * cs[ci].dw + 1 - cs[ci].pl - cs[ci].pr;
		float *ref, *xv, *wv, *bv;
		struct err e;

		mk_rand(&x, 4, xd, 8);
		mk_rand(&w, 4, wd, 9);
		mk_rand(&b, 1, bd, 10);
		xv = x.data, wv = w.data, bv = b.data;
		ref = calloc((size_t)(cs[ci].n * m * oh * ow), sizeof *ref);
		for (int64_t n = 0; n < cs[ci].n; n++)
			for (int64_t mo = 0; mo < m; mo++)
				for (int64_t i = 0; i < oh * ow; i++)
					ref[(n * m + mo) * oh * ow + i] = bv[mo];
		for (int64_t n = 0; n < cs[ci].n; n++)
			for (int64_t c = 0; c < cs[ci].c; c++)
				for (int64_t ih = 0; ih < cs[ci].h; ih++)
					for (int64_t iw = 0; iw < cs[ci].w; iw++)
						for (int64_t j = 0; j < cs[ci].mg; j++)
							for (int64_t a = 0; a < cs[ci].kh; a++)
								for (int64_t bb = 0; bb < cs[ci].kw; bb++) {
									int64_t o1 = ih * cs[ci].sh - cs[ci].pt + a * cs[ci].dh;
									int64_t o2 = iw * cs[ci].sw - cs[ci].pl + bb * cs[ci].dw;
									int64_t mo = c / cg * cs[ci].mg + j;

									if (o1 < 0 || o1 >= oh || o2 < 0 || o2 >= ow)
										continue;
									ref[((n * m + mo) * oh + o1) * ow + o2] +=
									    xv[((n * cs[ci].c + c) * cs[ci].h + ih) * cs[ci].w + iw] *
									    wv[((c * cs[ci].mg + j) * cs[ci].kh + a) * cs[ci].kw + bb];
								}
		node_init(&t, "ConvTranspose");
		node_ints(&t, "kernel_shape", k, 2);
		node_ints(&t, "strides", s, 2);
		node_ints(&t, "dilations", d, 2);
		node_ints(&t, "pads", p, 4);
		node_ints(&t, "output_padding", op, 2);
		node_int(&t, "group", cs[ci].g);
		if (CHECK(run_op(&t, 11, in, 3, &y, 1, 2, &e) == 0)) {
			CHECK_EQ_INT(y.dims[1], m);
			CHECK_EQ_INT(y.dims[2], oh);
			CHECK_EQ_INT(y.dims[3], ow);
			if (y.nelem == cs[ci].n * m * oh * ow)
				CHECK_NEAR(max_diff(&y, ref), 0, 1e-4);
		} else
			CHECK_EQ_STR(e.msg, "");
		free(ref);
		tensor_release(&x), tensor_release(&w), tensor_release(&b);
		tensor_release(&y);
	}
}

static void
test_gemm(void)
{
	struct tnode t;
	struct tensor a, b, c, y = { 0 };
	const struct tensor *in[3] = { &a, &b, &c };
	int64_t ad[2] = { 3, 2 }, bd[2] = { 4, 3 }, cd[1] = { 4 };
	double av[6] = { 1, 2, 3, 4, 5, 6 };
	double bv[12] = { 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1 };
	double cv[4] = { 10, 20, 30, 40 };
	/* y = 2 * A^T B^T + 0.5 c: A^T = [[1 3 5] [2 4 6]] */
	double want[8] = { 2 + 5, 6 + 10, 10 + 15, 18 + 20,
	    4 + 5, 8 + 10, 12 + 15, 24 + 20 };
	struct err e;

	mk(&a, DT_FLOAT, 2, ad, av);
	mk(&b, DT_FLOAT, 2, bd, bv);
	mk(&c, DT_FLOAT, 1, cd, cv);
	node_init(&t, "Gemm");
	node_int(&t, "transA", 1);
	node_int(&t, "transB", 1);
	node_float(&t, "alpha", 2);
	node_float(&t, "beta", 0.5f);
	REQUIRE(run_op(&t, 13, in, 3, &y, 1, 2, &e) == 0);
	CHECK_EQ_INT(y.dims[0], 2);
	CHECK_EQ_INT(y.dims[1], 4);
	for (int i = 0; i < 8; i++)
		CHECK_NEAR(tensor_get(&y, i), want[i], 1e-5);
	tensor_release(&y);
	/* C that does not broadcast to 2x4 */
	c.dims[0] = 3, c.nelem = 3;
	CHECK(run_op(&t, 13, in, 3, &y, 1, 1, &e) == -1);
	CHECK_EQ_STR(e.msg, "input 2: shape 3 does not broadcast to 2x4");
	c.dims[0] = 4, c.nelem = 4;
	node_init(&t, "Gemm");
	CHECK(run_op(&t, 13, in, 2, &y, 1, 1, &e) == -1);
	CHECK_EQ_STR(e.msg, "inner dimensions differ: 2 and 4");
	tensor_release(&a), tensor_release(&b), tensor_release(&c);
}

static void
test_matmul_broadcast(void)
{
	/* (2,1,3,4) x (5,4,2) -> (2,5,3,2); and a 1-D left operand. */
	struct tnode t;
	struct tensor a, b, y = { 0 }, v, y1 = { 0 };
	const struct tensor *in[2] = { &a, &b };
	int64_t ad[4] = { 2, 1, 3, 4 }, bd[3] = { 5, 4, 2 }, vd[1] = { 4 };
	struct err e;

	mk_rand(&a, 4, ad, 11);
	mk_rand(&b, 3, bd, 12);
	node_init(&t, "MatMul");
	REQUIRE(run_op(&t, 13, in, 2, &y, 1, 2, &e) == 0);
	REQUIRE(y.rank == 4);
	CHECK_EQ_INT(y.dims[0], 2);
	CHECK_EQ_INT(y.dims[1], 5);
	CHECK_EQ_INT(y.dims[2], 3);
	CHECK_EQ_INT(y.dims[3], 2);
	for (int64_t i = 0; i < 2; i++)
		for (int64_t j = 0; j < 5; j++)
			for (int64_t r = 0; r < 3; r++)
				for (int64_t q = 0; q < 2; q++) {
					double s = 0;

					for (int64_t k = 0; k < 4; k++)
						s += ((float *)a.data)[(i * 3 + r) * 4 + k] *
						    ((float *)b.data)[(j * 4 + k) * 2 + q];
					CHECK_NEAR(((float *)y.data)[((i * 5 + j) * 3 + r) * 2 + q],
					    s, 1e-5);
				}
	mk_rand(&v, 1, vd, 13);
	in[0] = &v;
	REQUIRE(run_op(&t, 13, in, 2, &y1, 1, 1, &e) == 0);
	CHECK_EQ_INT(y1.rank, 2);
	CHECK_EQ_INT(y1.dims[0], 5);
	CHECK_EQ_INT(y1.dims[1], 2);
	in[0] = &a;
	in[1] = &a;
	CHECK(run_op(&t, 13, in, 2, &y1, 1, 1, &e) == -1);
	CHECK_EQ_STR(e.msg, "shapes 2x1x3x4 and 2x1x3x4: inner dimensions "
	    "differ");
	tensor_release(&a), tensor_release(&b), tensor_release(&y);
	tensor_release(&v), tensor_release(&y1);
}

/*
 * Products over an empty inner dimension sum nothing: every output is 0
 * (or the bias), written by the kernel itself now that outputs are not
 * zero-filled for it (sanitizer builds fill fresh memory with NaN, so a
 * kernel that skips them fails there).
 */
static void
test_empty_products(void)
{
	struct tnode t;
	struct tensor a, b, w, bias, x, y = { 0 };
	const struct tensor *in[3] = { &a, &b, NULL };
	int64_t ad[2] = { 2, 0 }, bd[2] = { 0, 3 };
	int64_t xd[4] = { 1, 0, 3, 3 }, wd[4] = { 2, 0, 1, 1 }, cd[1] = { 2 };
	double bv[2] = { 1.5, -2 };
	struct err e;

	mk(&a, DT_FLOAT, 2, ad, NULL);
	mk(&b, DT_FLOAT, 2, bd, NULL);
	node_init(&t, "MatMul");
	REQUIRE(run_op(&t, 13, in, 2, &y, 1, 1, &e) == 0);
	REQUIRE(y.nelem == 6);
	for (int64_t i = 0; i < y.nelem; i++)
		CHECK_EQ_INT(((float *)y.data)[i] == 0.0f, 1);
	tensor_release(&y);
	mk(&x, DT_FLOAT, 4, xd, NULL);
	mk(&w, DT_FLOAT, 4, wd, NULL);
	mk(&bias, DT_FLOAT, 1, cd, bv);
	in[0] = &x, in[1] = &w, in[2] = &bias;
	node_init(&t, "Conv");
	REQUIRE(run_op(&t, 11, in, 3, &y, 1, 1, &e) == 0);
	REQUIRE(y.nelem == 18);
	for (int64_t i = 0; i < y.nelem; i++)
		CHECK_EQ_INT(((float *)y.data)[i] == (float)bv[i / 9], 1);
	tensor_release(&a), tensor_release(&b), tensor_release(&y);
	tensor_release(&x), tensor_release(&w), tensor_release(&bias);
}

static void
test_einsum(void)
{
	struct tnode t;
	struct tensor a, b, y = { 0 };
	const struct tensor *in[2] = { &a, &b };
	int64_t ad[3] = { 2, 3, 4 }, bd[3] = { 2, 4, 5 };
	struct err e;

	mk_rand(&a, 3, ad, 14);
	mk_rand(&b, 3, bd, 15);
	node_init(&t, "Einsum");
	node_str(&t, "equation", "bij, bjk -> bki");
	REQUIRE(run_op(&t, 12, in, 2, &y, 1, 1, &e) == 0);
	REQUIRE(y.rank == 3);
	CHECK_EQ_INT(y.dims[1], 5);
	CHECK_EQ_INT(y.dims[2], 3);
	for (int64_t bi = 0; bi < 2; bi++)
		for (int64_t i = 0; i < 3; i++)
			for (int64_t k = 0; k < 5; k++) {
				double s = 0;

				for (int64_t j = 0; j < 4; j++)
					s += ((float *)a.data)[(bi * 3 + i) * 4 + j] *
					    ((float *)b.data)[(bi * 4 + j) * 5 + k];
				CHECK_NEAR(((float *)y.data)[(bi * 5 + k) * 3 + i], s,
				    1e-5);
			}
	tensor_release(&y);
	node_init(&t, "Einsum");
	node_str(&t, "equation", "bij,bjk->bik,");
	CHECK(run_op(&t, 12, in, 2, &y, 1, 1, &e) == -1);
	node_init(&t, "Einsum");
	node_str(&t, "equation", "bij,bjk->bix");
	CHECK(run_op(&t, 12, in, 2, &y, 1, 1, &e) == -1);
	CHECK_EQ_STR(e.msg, "equation: output letter not in any input");
	node_init(&t, "Einsum");
	node_str(&t, "equation", "bij,bkk->bik");
	CHECK(run_op(&t, 12, in, 2, &y, 1, 1, &e) == -1);
	CHECK_EQ_STR(e.msg, "input 1: diagonal axes differ in size");
	node_init(&t, "Einsum");
	node_str(&t, "equation", "ij,bjk->bik");
	CHECK(run_op(&t, 12, in, 2, &y, 1, 1, &e) == -1);
	CHECK_EQ_STR(e.msg, "input 0: rank 3 does not match its term");
	node_init(&t, "Einsum");
	node_str(&t, "equation", "bij,bjk..->bik");
	CHECK(run_op(&t, 12, in, 2, &y, 1, 1, &e) == -1);
	CHECK_EQ_STR(e.msg, "equation: bad ellipsis");
	tensor_release(&a), tensor_release(&b);
}

static void
test_maxpool_indices(void)
{
	struct tnode t;
	struct tensor x, y[2] = { { 0 }, { 0 } };
	const struct tensor *in[1] = { &x };
	int64_t xd[4] = { 1, 2, 3, 4 }, k[2] = { 2, 2 }, s[2] = { 2, 2 };
	double xv[24] = { 1, 9, 2, 3, 4, 5, 6, 8, 0, 0, 7, 0,
	    -1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12 };
	struct err e;

	mk(&x, DT_FLOAT, 4, xd, xv);
	node_init(&t, "MaxPool");
	node_ints(&t, "kernel_shape", k, 2);
	node_ints(&t, "strides", s, 2);
	node_int(&t, "ceil_mode", 1);
	REQUIRE(run_op(&t, 12, in, 1, y, 2, 1, &e) == 0);
	REQUIRE(y[0].nelem == 8);
	CHECK_EQ_INT(y[0].dims[2], 2);
	CHECK_NEAR(tensor_get(&y[0], 0), 9, 0);
	CHECK_NEAR(tensor_get(&y[0], 1), 8, 0);
	CHECK_NEAR(tensor_get(&y[0], 2), 0, 0);
	CHECK_NEAR(tensor_get(&y[0], 3), 7, 0);
	CHECK_NEAR(tensor_get(&y[0], 4), -1, 0);
	CHECK_EQ_INT(((int64_t *)y[1].data)[0], 1);
	CHECK_EQ_INT(((int64_t *)y[1].data)[1], 7);
	CHECK_EQ_INT(((int64_t *)y[1].data)[2], 8);
	CHECK_EQ_INT(((int64_t *)y[1].data)[3], 10);
	/* The second plane's indices count from the start of the tensor. */
	CHECK_EQ_INT(((int64_t *)y[1].data)[4], 12);
	tensor_release(&y[0]), tensor_release(&y[1]);
	node_init(&t, "MaxPool");
	CHECK(run_op(&t, 12, in, 1, y, 1, 1, &e) == -1);
	CHECK_EQ_STR(e.msg, "attribute kernel_shape is missing");
	tensor_release(&x);
}

static void
test_avgpool_pads(void)
{
	/* 1x1x2x2 of ones, kernel 3, pad 1: 4 real of 9 padded cells. */
	struct tnode t;
	struct tensor x, y = { 0 };
	const struct tensor *in[1] = { &x };
	int64_t xd[4] = { 1, 1, 2, 2 }, k[2] = { 3, 3 }, p[4] = { 1, 1, 1, 1 };
	double xv[4] = { 1, 1, 1, 1 };
	struct err e;

	mk(&x, DT_FLOAT, 4, xd, xv);
	node_init(&t, "AveragePool");
	node_ints(&t, "kernel_shape", k, 2);
	node_ints(&t, "pads", p, 4);
	node_int(&t, "count_include_pad", 1);
	REQUIRE(run_op(&t, 11, in, 1, &y, 1, 1, &e) == 0);
	CHECK_EQ_INT(y.nelem, 4);
	CHECK_NEAR(tensor_get(&y, 0), 4.0 / 9, 1e-6);
	tensor_release(&y);
	node_init(&t, "AveragePool");
	node_ints(&t, "kernel_shape", k, 2);
	node_ints(&t, "pads", p, 4);
	REQUIRE(run_op(&t, 11, in, 1, &y, 1, 1, &e) == 0);
	CHECK_NEAR(tensor_get(&y, 3), 1, 1e-6);
	tensor_release(&y);
	tensor_release(&x);
}

static void
test_norms(void)
{
	struct tnode t;
	struct tensor x, s, b, m, v, y = { 0 }, ln[3] = { { 0 }, { 0 }, { 0 } };
	const struct tensor *in[5] = { &x, &s, &b, &m, &v };
	int64_t xd[3] = { 2, 2, 3 }, cd[1] = { 2 }, ld[1] = { 3 };
	double xv[12] = { 1, 2, 3, 4, 5, 6, -1, 0, 1, 2, 2, 2 };
	double sv[2] = { 2, 1 }, bv[2] = { 0, 1 }, mv[2] = { 1, 0 },
	    vv[2] = { 4, 1 }, lv[3] = { 1, 1, 1 }, lb[3] = { 0, 0, 0 };
	struct err e;

	mk(&x, DT_FLOAT, 3, xd, xv);
	mk(&s, DT_FLOAT, 1, cd, sv);
	mk(&b, DT_FLOAT, 1, cd, bv);
	mk(&m, DT_FLOAT, 1, cd, mv);
	mk(&v, DT_FLOAT, 1, cd, vv);
	node_init(&t, "BatchNormalization");
	node_float(&t, "epsilon", 0);
	REQUIRE(run_op(&t, 15, in, 5, &y, 1, 1, &e) == 0);
	/* channel 0: (x - 1) / 2 * 2 + 0; channel 1: x + 1 */
	CHECK_NEAR(tensor_get(&y, 2), 2, 1e-6);
	CHECK_NEAR(tensor_get(&y, 5), 7, 1e-6);
	CHECK_NEAR(tensor_get(&y, 6), -2, 1e-6);
	tensor_release(&y);
	v.dims[0] = 3, v.nelem = 3;
	CHECK(run_op(&t, 15, in, 5, &y, 1, 1, &e) == -1);
	CHECK_EQ_STR(e.msg, "input 4: expected 2 values, got 3");
	tensor_release(&s), tensor_release(&b), tensor_release(&v);
	mk(&s, DT_FLOAT, 1, ld, lv);
	mk(&b, DT_FLOAT, 1, ld, lb);
	node_init(&t, "LayerNormalization");
	node_float(&t, "epsilon", 0);
	REQUIRE(run_op(&t, 17, in, 3, ln, 3, 1, &e) == 0);
	/* row 1 2 3: mean 2, var 2/3 */
	CHECK_NEAR(tensor_get(&ln[0], 0), -sqrt(1.5), 1e-5);
	CHECK_NEAR(tensor_get(&ln[1], 0), 2, 1e-6);
	CHECK_NEAR(tensor_get(&ln[2], 0), sqrt(1.5), 1e-5);
	CHECK_EQ_INT(ln[1].rank, 3);
	CHECK_EQ_INT(ln[1].dims[2], 1);
	/* a constant row normalises to 0 (epsilon 0 gives 0 * inf = nan) */
	CHECK_EQ_INT(ln[0].nelem, 12);
	tensor_release(&ln[0]), tensor_release(&ln[1]), tensor_release(&ln[2]);
	tensor_release(&x), tensor_release(&s), tensor_release(&b);
	tensor_release(&m);
}

static void
test_resize_nearest(void)
{
	/* asymmetric floor 2x: each pixel repeats in a 2x2 block. */
	struct tnode t;
	struct tensor x, roi, sc, sz, y = { 0 };
	const struct tensor *in[4] = { &x, &roi, &sc, NULL };
	int64_t xd[4] = { 1, 1, 2, 3 }, rd[1] = { 0 }, sd[1] = { 4 };
	double xv[6] = { 1, 2, 3, 4, 5, 6 }, sv[4] = { 1, 1, 2, 2 };
	double szv[4] = { 1, 1, 4, 6 };
	double want[24] = { 1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3,
	    4, 4, 5, 5, 6, 6, 4, 4, 5, 5, 6, 6 };
	struct err e;

	mk(&x, DT_FLOAT, 4, xd, xv);
	mk(&roi, DT_FLOAT, 1, rd, NULL);
	mk(&sc, DT_FLOAT, 1, sd, sv);
	mk(&sz, DT_INT64, 1, sd, szv);
	node_init(&t, "Resize");
	node_str(&t, "coordinate_transformation_mode", "asymmetric");
	node_str(&t, "nearest_mode", "floor");
	REQUIRE(run_op(&t, 11, in, 3, &y, 1, 2, &e) == 0);
	REQUIRE(y.nelem == 24);
	for (int i = 0; i < 24; i++)
		CHECK_NEAR(tensor_get(&y, i), want[i], 0);
	tensor_release(&y);
	in[3] = &sz;
	CHECK(run_op(&t, 11, in, 4, &y, 1, 1, &e) == -1);
	CHECK_EQ_STR(e.msg, "only one of scales and sizes may be given");
	in[2] = NULL;
	REQUIRE(run_op(&t, 13, in, 4, &y, 1, 1, &e) == 0);
	for (int i = 0; i < 24; i++)
		CHECK_NEAR(tensor_get(&y, i), want[i], 0);
	tensor_release(&y);
	node_init(&t, "Resize");
	node_str(&t, "mode", "bicubic");
	CHECK(run_op(&t, 13, in, 4, &y, 1, 1, &e) == -1);
	CHECK_EQ_STR(e.msg, "unsupported mode \"bicubic\"");
	tensor_release(&x), tensor_release(&roi), tensor_release(&sc);
	tensor_release(&sz);
}

static void
test_resize_linear(void)
{
	/* half_pixel 1-D 2 -> 4 on [0, 1]: 0, .25, .75, 1 */
	struct tnode t;
	struct tensor x, sc, y = { 0 };
	const struct tensor *in[3] = { &x, NULL, &sc };
	int64_t xd[2] = { 1, 2 }, sd[1] = { 2 };
	double xv[2] = { 0, 1 }, sv[2] = { 1, 2 };
	double want[4] = { 0, 0.25, 0.75, 1 };
	struct err e;

	mk(&x, DT_FLOAT, 2, xd, xv);
	mk(&sc, DT_FLOAT, 1, sd, sv);
	node_init(&t, "Resize");
	node_str(&t, "mode", "linear");
	REQUIRE(run_op(&t, 13, in, 3, &y, 1, 1, &e) == 0);
	REQUIRE(y.nelem == 4);
	for (int i = 0; i < 4; i++)
		CHECK_NEAR(tensor_get(&y, i), want[i], 1e-6);
	tensor_release(&y);
	tensor_release(&x), tensor_release(&sc);
}

/* NaN quantizes to the type's low end and infinities saturate, as ORT
 * gives (checked with onnxruntime-node 1.30: uint8 0 0 255 0, int8
 * -128 -128 127 -128 for NaN, -NaN, inf, -inf). */
static void
test_quantize_nan(void)
{
	struct tnode t;
	struct tensor x, s, z, y = { 0 };
	const struct tensor *in[3] = { &x, &s, &z };
	int64_t xd[1] = { 4 };
	double xv[4] = { NAN, -NAN, INFINITY, -INFINITY };
	double u8[4] = { 0, 0, 255, 0 }, i8[4] = { -128, -128, 127, -128 };
	double half = 0.5, zp = 3;
	struct err e;

	mk(&x, DT_FLOAT, 1, xd, xv);
	mk(&s, DT_FLOAT, 0, NULL, &half);
	for (int k = 0; k < 2; k++) {
		mk(&z, k ? DT_INT8 : DT_UINT8, 0, NULL, &zp);
		node_init(&t, "QuantizeLinear");
		REQUIRE(run_op(&t, 13, in, 3, &y, 1, 1, &e) == 0);
		for (int i = 0; i < 4; i++)
			CHECK_NEAR(tensor_get(&y, i), (k ? i8 : u8)[i], 0);
		tensor_release(&y), tensor_release(&z);
	}
	tensor_release(&x), tensor_release(&s);
}

static void
test_quantize_rounding(void)
{
	/* x / 0.5 = -3, -2.5, ..., then saturation at both ends */
	struct tnode t;
	struct tensor x, s, z, y = { 0 }, dq = { 0 };
	const struct tensor *in[3] = { &x, &s, &z };
	int64_t xd[1] = { 9 };
	double xv[9] = { -1.5, -1.25, -0.25, 0.25, 0.75, 1.25, 1000, -1000,
	    0.5 };
	/* rint: -3 -2 -0 0 2 2, + zero point 3 */
	double want[9] = { 0, 1, 3, 3, 5, 5, 255, 0, 4 };
	double one = 0.5, zp = 3;
	struct err e;

	mk(&x, DT_FLOAT, 1, xd, xv);
	mk(&s, DT_FLOAT, 0, NULL, &one);
	mk(&z, DT_UINT8, 0, NULL, &zp);
	node_init(&t, "QuantizeLinear");
	REQUIRE(run_op(&t, 13, in, 3, &y, 1, 1, &e) == 0);
	CHECK_EQ_INT(y.dtype, DT_UINT8);
	for (int i = 0; i < 9; i++)
		CHECK_NEAR(tensor_get(&y, i), want[i], 0);
	node_init(&t, "DequantizeLinear");
	in[0] = &y;
	REQUIRE(run_op(&t, 13, in, 3, &dq, 1, 1, &e) == 0);
	CHECK_EQ_INT(dq.dtype, DT_FLOAT);
	CHECK_NEAR(tensor_get(&dq, 0), -1.5, 0);
	CHECK_NEAR(tensor_get(&dq, 6), 126, 0);
	tensor_release(&y), tensor_release(&dq);
	/* No zero point: uint8 output with zero point 0. */
	in[0] = &x;
	node_init(&t, "QuantizeLinear");
	REQUIRE(run_op(&t, 10, in, 2, &y, 1, 1, &e) == 0);
	CHECK_EQ_INT(y.dtype, DT_UINT8);
	CHECK_NEAR(tensor_get(&y, 4), 2, 0);
	CHECK_NEAR(tensor_get(&y, 0), 0, 0);
	tensor_release(&y);
	/* int4 saturates to -8..7 */
	tensor_release(&z);
	zp = 0;
	mk(&z, DT_INT4, 0, NULL, &zp);
	REQUIRE(run_op(&t, 21, in, 3, &y, 1, 1, &e) == 0);
	CHECK_EQ_INT(y.dtype, DT_INT4);
	CHECK_NEAR(tensor_get(&y, 6), 7, 0);
	CHECK_NEAR(tensor_get(&y, 7), -8, 0);
	CHECK_NEAR(tensor_get(&y, 1), -2, 0);
	tensor_release(&y);
	/* int4 is only for opset 21 in the default domain */
	CHECK(run_op(&t, 19, in, 3, &y, 1, 1, &e) == -1);
	CHECK_EQ_STR(e.msg, "quantized type int4 is not supported");
	REQUIRE(op_run_in("com.microsoft", &t, 1, in, 3, &y, 1, 1, &e) == 0);
	CHECK_NEAR(tensor_get(&y, 7), -8, 0);
	tensor_release(&y);
	tensor_release(&x), tensor_release(&s), tensor_release(&z);
}

static void
test_quantize_axis_block(void)
{
	struct tnode t;
	struct tensor x, s, z, y = { 0 }, d = { 0 };
	const struct tensor *in[3] = { &x, &s, &z };
	int64_t xd[2] = { 2, 4 }, sd[1] = { 4 }, bd[2] = { 2, 2 };
	double xv[8] = { 1, 2, 3, 4, -1, -2, -3, -4 };
	double sv[4] = { 1, 2, 4, 8 }, zv[4] = { 0, 1, 2, 3 };
	double bsv[4] = { 1, 2, 4, 8 }, bzv[4] = { 0, 0, 0, 0 };
	struct err e;

	mk(&x, DT_FLOAT, 2, xd, xv);
	mk(&s, DT_FLOAT, 1, sd, sv);
	mk(&z, DT_INT8, 1, sd, zv);
	node_init(&t, "QuantizeLinear");
	node_int(&t, "axis", -1);
	REQUIRE(run_op(&t, 13, in, 3, &y, 1, 1, &e) == 0);
	/* 1/1+0, 2/2+1, 3/4+2 (rint .75 = 1), 4/8+3 (rint .5 = 0) */
	CHECK_NEAR(tensor_get(&y, 0), 1, 0);
	CHECK_NEAR(tensor_get(&y, 1), 2, 0);
	CHECK_NEAR(tensor_get(&y, 2), 3, 0);
	CHECK_NEAR(tensor_get(&y, 3), 3, 0);
	CHECK_NEAR(tensor_get(&y, 6), 1, 0);	/* -3 / 4 + 2 */
	CHECK_NEAR(tensor_get(&y, 7), 3, 0);	/* rint(-.5) = 0 */
	tensor_release(&y);
	/* per-axis scale of the wrong length */
	node_init(&t, "QuantizeLinear");
	node_int(&t, "axis", 0);
	CHECK(run_op(&t, 13, in, 3, &y, 1, 1, &e) == -1);
	CHECK_EQ_STR(e.msg, "input 1: per-axis scale must be 1-D with 2 "
	    "values (axis 0)");
	tensor_release(&s), tensor_release(&z);
	/* blocks of 2 along axis 1: scale 2x2 */
	mk(&s, DT_FLOAT, 2, bd, bsv);
	mk(&z, DT_INT8, 2, bd, bzv);
	node_init(&t, "QuantizeLinear");
	node_int(&t, "axis", 1);
	node_int(&t, "block_size", 2);
	REQUIRE(run_op(&t, 21, in, 3, &y, 1, 1, &e) == 0);
	CHECK_NEAR(tensor_get(&y, 0), 1, 0);
	CHECK_NEAR(tensor_get(&y, 1), 2, 0);
	CHECK_NEAR(tensor_get(&y, 2), 2, 0);	/* 3 / 2 = 1.5 -> 2 */
	CHECK_NEAR(tensor_get(&y, 3), 2, 0);
	CHECK_NEAR(tensor_get(&y, 5), 0, 0);	/* rint(-2 / 4) */
	CHECK_NEAR(tensor_get(&y, 6), 0, 0);	/* rint(-3 / 8) */
	node_init(&t, "DequantizeLinear");
	node_int(&t, "axis", 1);
	node_int(&t, "block_size", 2);
	in[0] = &y;
	REQUIRE(run_op(&t, 21, in, 3, &d, 1, 1, &e) == 0);
	CHECK_NEAR(tensor_get(&d, 1), 2, 0);
	CHECK_NEAR(tensor_get(&d, 2), 4, 0);
	tensor_release(&d);
	node_init(&t, "DequantizeLinear");
	node_int(&t, "axis", 1);
	node_int(&t, "block_size", 1);
	CHECK(run_op(&t, 21, in, 3, &d, 1, 1, &e) == -1);
	CHECK_EQ_STR(e.msg, "input 1: blocked scale has 2 values on axis 1, "
	    "expected 4");
	tensor_release(&y);
	tensor_release(&x), tensor_release(&s), tensor_release(&z);
}

static void
test_dequantize_types(void)
{
	struct tnode t;
	struct tensor x, s, z, y = { 0 };
	const struct tensor *in[3] = { &x, &s, &z };
	int64_t xd[1] = { 3 };
	double xv[3] = { -2000000, 0, 7 }, sv = 0.5, zv = 1;
	struct err e;

	mk(&x, DT_INT32, 1, xd, xv);
	mk(&s, DT_FLOAT, 0, NULL, &sv);
	mk(&z, DT_UINT8, 0, NULL, &zv);
	node_init(&t, "DequantizeLinear");
	REQUIRE(run_op(&t, 13, in, 2, &y, 1, 1, &e) == 0);
	CHECK_NEAR(tensor_get(&y, 0), -1000000, 0);
	CHECK_NEAR(tensor_get(&y, 2), 3.5, 0);
	tensor_release(&y);
	CHECK(run_op(&t, 13, in, 3, &y, 1, 1, &e) == -1);
	CHECK_EQ_STR(e.msg, "input 2: zero point type uint8 differs from "
	    "input 0's int32");
	tensor_release(&x);
	/* float8 tensors do not exist in memory; asking for one fails */
	mk(&x, DT_FLOAT, 1, xd, xv);
	node_init(&t, "QuantizeLinear");
	node_int(&t, "output_dtype", DT_FLOAT8E4M3FN);
	CHECK(run_op(&t, 21, in, 2, &y, 1, 1, &e) == -1);
	CHECK_EQ_STR(e.msg, "float8 quantization is not supported");
	tensor_release(&x);
	node_init(&t, "DequantizeLinear");
	/* float16 scale: the result is float16 from opset 19 */
	tensor_release(&s);
	mk(&s, DT_FLOAT16, 0, NULL, &sv);
	mk(&x, DT_UINT8, 1, xd, NULL);
	REQUIRE(run_op(&t, 19, in, 2, &y, 1, 1, &e) == 0);
	CHECK_EQ_INT(y.dtype, DT_FLOAT16);
	tensor_release(&y);
	tensor_release(&x), tensor_release(&s), tensor_release(&z);
}

UNIT_MAIN(test_conv_paths, test_depthwise_exact,
    test_conv_weights_change, test_conv_shared_scratch, test_conv_1d_3d,
    test_conv_auto_pad,
    test_conv_errors, test_convtranspose, test_gemm, test_matmul_broadcast,
    test_empty_products,
    test_einsum, test_maxpool_indices, test_avgpool_pads, test_norms,
    test_resize_nearest, test_resize_linear, test_quantize_nan,
    test_quantize_rounding,
    test_quantize_axis_block, test_dequantize_types)
