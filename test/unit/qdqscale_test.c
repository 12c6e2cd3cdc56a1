/*
 * qdqscale_test: onnx-qdq-insert --fold-scales (lib/qdqscale.c, through
 * qdq_apply with fold_scales) on the generated scale.onnx: x / 6 * 0.5
 * folds in two passes into one DequantizeLinear of x's quantized tensor
 * with x's scale / 12; x / 4, a graph output, folds too (the output is
 * the DequantizeLinear's); a Mul by a negative constant stays. With
 * fold_biases, on bias.onnx: Conv * 0.5 + 0.25 folds into the Conv's
 * int32 bias and its QuantizeLinear; a Conv whose output has two readers
 * keeps its Add. Constants also listed as graph inputs (scale-inputs.onnx,
 * bias-inputs.onnx) are defaults a caller may override: not folded.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"
#include "qdqfixture.h"
#include "unit.h"

static const char stream_text[] = "#onnxq\t1.0\n"
    "qparam\tx\trole=act\ttype=uint8\tscale=0.06\tzp=128\n"
    "qparam\td\trole=act\ttype=uint8\tscale=0.011\tzp=127\n"
    "qparam\tk\trole=act\ttype=uint8\tscale=0.0051\tzp=126\n"
    "qparam\ty\trole=act\ttype=uint8\tscale=0.1\tzp=100\n"
    "qparam\tz\trole=act\ttype=uint8\tscale=0.02\tzp=128\n"
    "qparam\tn\trole=act\ttype=uint8\tscale=0.12\tzp=128\n"
    "qparam\tw\trole=act\ttype=uint8\tscale=0.1\tzp=128\n"
    "end\t7\n";

/* x's scale 0.02 times W's 0.01: the biases' */
static const char bias_text[] = "#onnxq\t1.0\n"
    "qparam\tx\trole=act\ttype=uint8\tscale=0.02\tzp=128\n"
    "qparam\tW\trole=weight\ttype=int8\tscale=0.01\tzp=0\n"
    "qparam\tB\trole=bias\ttype=int32\tscale=0.0002\tzp=0\n"
    "qparam\tB2\trole=bias\ttype=int32\tscale=0.0002\tzp=0\n"
    "qparam\tc\trole=act\ttype=uint8\tscale=0.05\tzp=100\n"
    "qparam\tm\trole=act\ttype=uint8\tscale=0.025\tzp=100\n"
    "qparam\ty\trole=act\ttype=uint8\tscale=0.03\tzp=90\n"
    "qparam\tc2\trole=act\ttype=uint8\tscale=0.05\tzp=100\n"
    "qparam\ty2\trole=act\ttype=uint8\tscale=0.05\tzp=98\n"
    "end\t9\n";

static struct model *
apply_to(const char *fixture, const char *text, int fold, int biases,
    struct qdq_report *rep)
{
	struct qdq_opts o = { 0 };

	o.fold_scales = fold;
	o.fold_biases = biases;
	return qdqfixture_apply(fixture_generated(fixture), text, &o, rep);
}

static struct model *
apply(int fold, struct qdq_report *rep)
{
	return apply_to("qdqscale/scale.onnx", stream_text, fold, 0, rep);
}

/*
 * The last node of type op (reading `in` first, when not NULL) and in *n
 * how many there are.
 */
static const Onnx__NodeProto *
find(const struct model *m, const char *op, const char *in, int *n)
{
	const Onnx__GraphProto *g = m->proto->graph;
	const Onnx__NodeProto *found = NULL;
	int k = 0;

	for (size_t i = 0; i < g->n_node; i++) {
		const Onnx__NodeProto *x = g->node[i];

		if (strcmp(x->op_type, op) != 0 || (in && (x->n_input < 1 ||
		    strcmp(x->input[0], in) != 0)))
			continue;
		found = x;
		k++;
	}
	if (n)
		*n = k;
	return found;
}

static int
count_op(const struct model *m, const char *op)
{
	int n;

	find(m, op, NULL, &n);
	return n;
}

/* Element at of the initializer `name`, or NAN. */
static double
init_at(const struct model *m, const char *name, int64_t at)
{
	const Onnx__GraphProto *g = m->proto->graph;
	struct tensor t = { 0 };
	struct err e;
	double v = NAN;

	for (size_t i = 0; i < g->n_initializer; i++)
		if (strcmp(g->initializer[i]->name, name) == 0 &&
		    model_tensor_read(m, g->initializer[i], &t, &e) == 0) {
			if (at < t.nelem)
				v = tensor_get(&t, at);
			tensor_release(&t);
		}
	return v;
}

/* The value of the one-element initializer `name`, or NAN. */
static double
init_value(const struct model *m, const char *name)
{
	return isnan(init_at(m, name, 1)) ? init_at(m, name, 0) : NAN;
}

static void
test_div_and_mul_fold(void)
{
	struct qdq_report rep;
	struct model *m;
	const Onnx__NodeProto *add, *dq;
	const Onnx__GraphProto *g;

	REQUIRE((m = apply(1, &rep)) != NULL);
	g = m->proto->graph;
	CHECK_EQ_INT(rep.scale_folds, 3);
	CHECK_EQ_INT(count_op(m, "Div"), 0);
	CHECK_EQ_INT(count_op(m, "Mul"), 1);	/* mulN: -2 */
	add = NULL;
	for (size_t i = 0; i < g->n_node; i++)
		if (strcmp(g->node[i]->name, "add") == 0)
			add = g->node[i];
	REQUIRE(add != NULL);
	dq = NULL;
	for (size_t i = 0; i < g->n_node; i++)
		if (strcmp(g->node[i]->op_type, "DequantizeLinear") == 0 &&
		    strcmp(g->node[i]->output[0], add->input[0]) == 0)
			dq = g->node[i];
	REQUIRE(dq != NULL && dq->n_input == 3);
	/* x's quantized tensor, x's zero point, 0.06 / 6 * 0.5 */
	CHECK(find(m, "QuantizeLinear", "x", NULL) != NULL);
	CHECK_EQ_STR(dq->input[0],
	    find(m, "QuantizeLinear", "x", NULL)->output[0]);
	CHECK(fabs(init_value(m, dq->input[1]) - 0.005) < 1e-9);
	CHECK_EQ_INT((int)init_value(m, dq->input[2]), 128);
	/* the constants only the folded nodes read are gone */
	CHECK(isnan(init_value(m, "six")));
	CHECK(isnan(init_value(m, "K")));
	CHECK(isnan(init_value(m, "four")));
	CHECK(!isnan(init_value(m, "N")));
	/* z still written, by x's DequantizeLinear with scale 0.06 / 4 */
	dq = NULL;
	for (size_t i = 0; i < g->n_node; i++)
		if (strcmp(g->node[i]->output[0], "z") == 0)
			dq = g->node[i];
	REQUIRE(dq != NULL);
	CHECK_EQ_STR(dq->op_type, "DequantizeLinear");
	CHECK(fabs(init_value(m, dq->input[1]) - 0.015) < 1e-9);
	model_free(m);
}

static void
test_off_by_default(void)
{
	struct qdq_report rep;
	struct model *m;

	REQUIRE((m = apply(0, &rep)) != NULL);
	CHECK_EQ_INT(rep.scale_folds, 0);
	CHECK_EQ_INT(count_op(m, "Div"), 2);
	CHECK_EQ_INT(count_op(m, "Mul"), 2);
	model_free(m);
}

/* The node writing `name`, or NULL. */
static const Onnx__NodeProto *
writer(const struct model *m, const char *name)
{
	const Onnx__GraphProto *g = m->proto->graph;

	for (size_t i = 0; i < g->n_node; i++)
		if (g->node[i]->n_output > 0 &&
		    strcmp(g->node[i]->output[0], name) == 0)
			return g->node[i];
	return NULL;
}

static void
test_bias_fold(void)
{
	struct qdq_report rep;
	struct model *m;
	const Onnx__NodeProto *conv, *bdq, *q, *dq;

	REQUIRE((m = apply_to("qdqscale/bias.onnx", bias_text, 1, 1, &rep)) !=
	    NULL);
	CHECK_EQ_INT(rep.scale_folds, 1);
	CHECK_EQ_INT(rep.bias_folds, 1);
	CHECK_EQ_INT(count_op(m, "Mul"), 0);
	CHECK_EQ_INT(count_op(m, "Add"), 1);	/* addA2: c2 read twice */
	REQUIRE((conv = writer(m, "c")) != NULL && conv->n_input == 3);
	REQUIRE((bdq = writer(m, conv->input[2])) != NULL);
	/*
	 * B / 0.0002 = 500, -1000, 1500, plus 0.25 / (0.5 * 0.0002): the
	 * Mul's 0.5 is in the scale of c's DequantizeLinear.
	 */
	CHECK_EQ_INT((int)init_at(m, bdq->input[0], 0), 3000);
	CHECK_EQ_INT((int)init_at(m, bdq->input[0], 1), 1500);
	CHECK_EQ_INT((int)init_at(m, bdq->input[0], 2), 4000);
	CHECK(isnan(init_value(m, "B_quantized")));	/* the old one gone */
	/* c quantized with y's scale / 0.5 and y's zero point; y its DQ */
	REQUIRE((q = find(m, "QuantizeLinear", "c", NULL)) != NULL);
	CHECK(fabs(init_value(m, q->input[1]) - 0.06) < 1e-7);
	CHECK_EQ_INT((int)init_value(m, q->input[2]), 90);
	REQUIRE((dq = writer(m, "y")) != NULL);
	CHECK_EQ_STR(dq->op_type, "DequantizeLinear");
	CHECK_EQ_STR(dq->input[0], q->output[0]);
	CHECK(fabs(init_value(m, dq->input[1]) - 0.03) < 1e-7);
	model_free(m);
	/* without --fold-scales the Mul stands between Conv and Add */
	REQUIRE((m = apply_to("qdqscale/bias.onnx", bias_text, 0, 1, &rep)) !=
	    NULL);
	CHECK_EQ_INT(rep.bias_folds, 0);
	CHECK_EQ_INT(count_op(m, "Add"), 2);
	model_free(m);
}

/* Whether `name` is an initializer and a graph input of m. */
static int
default_input(const struct model *m, const char *name)
{
	const Onnx__GraphProto *g = m->proto->graph;
	int k = 0;

	for (size_t i = 0; i < g->n_input; i++)
		k += strcmp(g->input[i]->name, name) == 0;
	return k == 1 && !isnan(init_value(m, name));
}

static void
test_overridable_left_alone(void)
{
	struct qdq_report rep;
	struct model *m;

	/* K and four are graph inputs too: only x / 6 folds */
	REQUIRE((m = apply_to("qdqscale/scale-inputs.onnx", stream_text, 1,
	    0, &rep)) != NULL);
	CHECK_EQ_INT(rep.scale_folds, 1);
	CHECK_EQ_INT(count_op(m, "Div"), 1);
	CHECK_EQ_INT(count_op(m, "Mul"), 2);
	CHECK(isnan(init_value(m, "six")));
	CHECK(default_input(m, "K"));
	CHECK(default_input(m, "four"));
	model_free(m);
	/* A is: the Mul folds, the Add stays */
	REQUIRE((m = apply_to("qdqscale/bias-inputs.onnx", bias_text, 1, 1,
	    &rep)) != NULL);
	CHECK_EQ_INT(rep.scale_folds, 1);
	CHECK_EQ_INT(rep.bias_folds, 0);
	CHECK_EQ_INT(count_op(m, "Add"), 2);
	CHECK(default_input(m, "A"));
	model_free(m);
}

UNIT_MAIN(test_div_and_mul_fold, test_off_by_default, test_bias_fold,
    test_overridable_left_alone)
