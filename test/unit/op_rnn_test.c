/*
 * op_rnn_test: lib/op_rnn.c through struct op_ctx, on one-unit layers
 * whose outputs can be worked out by hand: RNN with an identity input
 * weight (Y = tanh(x)), GRU and LSTM with zero weights (every gate 0.5,
 * so the state halves), reverse direction with sequence_lens (zeros past
 * each entry's length, the final state taken at its first step), the
 * kernels of op_control.c outside the interpreter (no planned graph),
 * and the shape errors.
 */
#include <math.h>
#include <string.h>

#include "ops.h"
#include "unit.h"

struct layer {
	Onnx__NodeProto n;
	Onnx__AttributeProto a[2];
	Onnx__AttributeProto *ap[2];
	char *outs[3];
};

/* A node of op_type with hidden_size 1 and, if given, a direction. */
static void
layer_init(struct layer *l, const char *op, const char *dir)
{
	static char y[] = "y", h[] = "h", c[] = "c";

	memset(l, 0, sizeof *l);
	onnx__node_proto__init(&l->n);
	l->n.op_type = (char *)op;
	l->outs[0] = y, l->outs[1] = h, l->outs[2] = c;
	l->n.output = l->outs;
	l->n.attribute = l->ap;
	for (int i = 0; i < 2; i++)
		onnx__attribute_proto__init(&l->a[i]), l->ap[i] = &l->a[i];
	l->a[0].name = (char *)"hidden_size";
	l->a[0].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
	l->a[0].has_i = 1;
	l->a[0].i = 1;
	l->n.n_attribute = 1;
	if (dir) {
		l->a[1].name = (char *)"direction";
		l->a[1].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
		l->a[1].has_s = 1;
		l->a[1].s.data = (uint8_t *)dir;
		l->a[1].s.len = strlen(dir);
		l->n.n_attribute = 2;
	}
}

static int
run(struct layer *l, const struct tensor **in, int nin, struct tensor *out,
    int nout, struct err *e)
{
	const struct op_def *d = ops_find("", l->n.op_type);
	void *state = NULL;
	struct op_ctx c;

	if (!d)
		return err_set(e, "no kernel for %s", l->n.op_type);
	l->n.n_input = (size_t)nin;
	l->n.n_output = (size_t)nout;
	memset(&c, 0, sizeof c);
	memset(out, 0, (size_t)nout * sizeof *out);
	c.node = &l->n;
	c.opset = 17;
	c.nin = nin;
	c.in = in;
	c.nout = nout;
	c.out = out;
	c.threads = 1;
	c.state = &state;
	c.err = e;
	e->msg[0] = '\0';
	return d->run(&c);
}

/* A float tensor of the given shape, filled with v. */
static void
filled(struct tensor *t, float v, int rank, int64_t d0, int64_t d1,
    int64_t d2)
{
	int64_t dims[3] = { d0, d1, d2 };
	struct err e;

	tensor_alloc(t, DT_FLOAT, rank, dims, &e);
	for (int64_t i = 0; i < t->nelem; i++)
		((float *)t->data)[i] = v;
}

static float
at(const struct tensor *t, int64_t i)
{
	return ((const float *)t->data)[i];
}

static void
test_rnn(void)
{
	struct layer l;
	struct tensor x, w, r, out[2];
	const struct tensor *in[3] = { &x, &w, &r };
	struct err e;

	layer_init(&l, "RNN", NULL);
	filled(&x, 0, 3, 3, 1, 1);	/* seq 3, batch 1, input 1 */
	filled(&w, 1, 3, 1, 1, 1);
	filled(&r, 0, 3, 1, 1, 1);
	for (int t = 0; t < 3; t++)
		((float *)x.data)[t] = (float)t - 1;
	if (CHECK(run(&l, in, 3, out, 2, &e) == 0)) {
		CHECK_EQ_INT(out[0].rank, 4);
		CHECK_EQ_INT(out[0].dims[0], 3);
		for (int t = 0; t < 3; t++)
			CHECK_NEAR(at(&out[0], t), tanhf((float)t - 1), 1e-7);
		CHECK_NEAR(at(&out[1], 0), tanhf(1), 1e-7);
	} else
		fprintf(stderr, "%s\n", e.msg);
	tensor_release(&out[0]);
	tensor_release(&out[1]);
	/* W must fit the hidden size and input size. */
	w.dims[1] = 2;
	CHECK(run(&l, in, 3, out, 2, &e) == -1);
	CHECK(strstr(e.msg, "W or R does not fit") != NULL);
	tensor_release(&x);
	tensor_release(&w);
	tensor_release(&r);
}

/* Zero weights: every gate is sigmoid(0) = 0.5, candidates tanh(0) = 0. */
static void
test_gates(void)
{
	struct layer l;
	struct tensor x, w, r, h0, c0, out[3];
	const struct tensor *in[7] = { &x, &w, &r, NULL, NULL, &h0, &c0 };
	struct err e;

	filled(&x, 1, 3, 2, 1, 1);
	filled(&h0, 1, 3, 1, 1, 1);
	filled(&c0, 1, 3, 1, 1, 1);
	layer_init(&l, "GRU", NULL);
	filled(&w, 0, 3, 1, 3, 1);
	filled(&r, 0, 3, 1, 3, 1);
	/* H = (1 - z) * 0 + z * H: halves each step. */
	if (CHECK(run(&l, in, 6, out, 2, &e) == 0)) {
		CHECK_NEAR(at(&out[0], 0), 0.5, 1e-7);
		CHECK_NEAR(at(&out[0], 1), 0.25, 1e-7);
		CHECK_NEAR(at(&out[1], 0), 0.25, 1e-7);
	} else
		fprintf(stderr, "%s\n", e.msg);
	tensor_release(&out[0]);
	tensor_release(&out[1]);
	tensor_release(&w);
	tensor_release(&r);
	layer_init(&l, "LSTM", NULL);
	filled(&w, 0, 3, 1, 4, 1);
	filled(&r, 0, 3, 1, 4, 1);
	/* C = 0.5 * C, H = 0.5 * tanh(C). */
	if (CHECK(run(&l, in, 7, out, 3, &e) == 0)) {
		CHECK_NEAR(at(&out[0], 0), 0.5f * tanhf(0.5f), 1e-7);
		CHECK_NEAR(at(&out[0], 1), 0.5f * tanhf(0.25f), 1e-7);
		CHECK_NEAR(at(&out[2], 0), 0.25, 1e-7);
	} else
		fprintf(stderr, "%s\n", e.msg);
	for (int k = 0; k < 3; k++)
		tensor_release(&out[k]);
	tensor_release(&w);
	tensor_release(&r);
	tensor_release(&x);
	tensor_release(&h0);
	tensor_release(&c0);
}

/* Reverse with lengths 3 and 1 over a batch of 2: Y = tanh(x). */
static void
test_reverse_lens(void)
{
	struct layer l;
	struct tensor x, w, r, lens, out[2];
	const struct tensor *in[5] = { &x, &w, &r, NULL, &lens };
	int64_t two = 2;
	struct err e;

	layer_init(&l, "RNN", "reverse");
	filled(&x, 0, 3, 3, 2, 1);
	filled(&w, 1, 3, 1, 1, 1);
	filled(&r, 0, 3, 1, 1, 1);
	tensor_alloc(&lens, DT_INT32, 1, &two, &e);
	((int32_t *)lens.data)[0] = 3;
	((int32_t *)lens.data)[1] = 1;
	for (int i = 0; i < 6; i++)
		((float *)x.data)[i] = 0.1f * (float)(i + 1);
	if (CHECK(run(&l, in, 5, out, 2, &e) == 0)) {
		/* Y is seq x dir x batch x 1: entry 1 stops after step 0. */
		CHECK_NEAR(at(&out[0], 0), tanhf(0.1f), 1e-7);
		CHECK_NEAR(at(&out[0], 1), tanhf(0.2f), 1e-7);
		CHECK_NEAR(at(&out[0], 3), 0, 0);
		CHECK_NEAR(at(&out[0], 5), 0, 0);
		/* The final state of a reverse pass is its step 0. */
		CHECK_NEAR(at(&out[1], 0), tanhf(0.1f), 1e-7);
		CHECK_NEAR(at(&out[1], 1), tanhf(0.2f), 1e-7);
	} else
		fprintf(stderr, "%s\n", e.msg);
	tensor_release(&out[0]);
	tensor_release(&out[1]);
	((int32_t *)lens.data)[1] = 4;
	CHECK(run(&l, in, 5, out, 2, &e) == -1);
	CHECK_EQ_STR(e.msg, "sequence length 4 is outside 0..3");
	tensor_release(&x);
	tensor_release(&w);
	tensor_release(&r);
	tensor_release(&lens);
}

/* If outside the interpreter has no planned branch to run. */
static void
test_control_unplanned(void)
{
	struct layer l;
	struct tensor cond, out[1];
	const struct tensor *in[1] = { &cond };
	struct err e;

	layer_init(&l, "If", NULL);
	l.n.n_attribute = 0;
	tensor_alloc(&cond, DT_BOOL, 0, NULL, &e);
	CHECK(run(&l, in, 1, out, 1, &e) == -1);
	CHECK_EQ_STR(e.msg, "attribute else_branch: no graph");
	tensor_release(&cond);
}

UNIT_MAIN(test_rnn, test_gates, test_reverse_lens, test_control_unplanned)
