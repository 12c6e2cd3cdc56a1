/*
 * qop_test: the QOperator writer (lib/qop.c, through qdq_apply with
 * QDQ_FORMAT_QOPERATOR) on test/data/qdq/conv.onnx, one Conv with a
 * per-channel weight and a bias: it becomes a QLinearConv reading the
 * quantized tensors; a bias scale that is not input x weight scale, and a
 * 16-bit activation, leave the group in QDQ form with a note.
 */
#include <stdio.h>
#include <string.h>

#include "fixture.h"
#include "qdqfixture.h"
#include "qop.h"
#include "unit.h"

#define CONV "test/data/qdq/conv.onnx"

/* qparam records for conv.onnx; bias_scale and the input's type vary. */
static void
stream_text(char *buf, size_t size, const char *in_type, double bias_scale)
{
	snprintf(buf, size, "#onnxq\t1.0\n"
	    "qparam\tinput_0\trole=act\ttype=%s\tscale=0.01\tzp=128\n"
	    "qparam\tweight\trole=weight\ttype=int8\taxis=0\t"
	    "scale=1e-9,2e-9\tzp=0,0\n"
	    "qparam\tbias\trole=bias\ttype=int32\taxis=0\t"
	    "scale=%.9g,%.9g\tzp=0,0\tinput=input_0\tweight=weight\n"
	    "qparam\toutput_0\trole=act\ttype=uint8\tscale=0.05\tzp=100\n"
	    "end\t4\n", in_type, bias_scale, bias_scale * 2);
}

struct notes {
	int n;
	char last[512];
};

static void
note(void *ctx, const char *msg)
{
	struct notes *ns = ctx;

	ns->n++;
	snprintf(ns->last, sizeof ns->last, "%s", msg);
}

/* Apply the stream to conv.onnx as --format qoperator; the model or NULL. */
static struct model *
apply(const char *text, struct qdq_report *rep, struct notes *ns)
{
	struct qdq_opts o = { 0 };

	o.format = QDQ_FORMAT_QOPERATOR;
	o.note = note;
	o.note_ctx = ns;
	return qdqfixture_apply(fixture_model(CONV), text, &o, rep);
}

static int
count_op(const struct model *m, const char *op)
{
	const Onnx__GraphProto *g = m->proto->graph;
	int n = 0;

	for (size_t i = 0; i < g->n_node; i++)
		n += strcmp(g->node[i]->op_type, op) == 0;
	return n;
}

static void
test_conv_becomes_qlinearconv(void)
{
	char text[1024];
	struct qdq_report rep;
	struct notes ns = { 0 };
	struct model *m;
	const Onnx__NodeProto *c = NULL;

	stream_text(text, sizeof text, "uint8", 1e-11);
	REQUIRE((m = apply(text, &rep, &ns)) != NULL);
	CHECK_EQ_INT(rep.qlinear, 1);
	CHECK_EQ_INT(rep.left_qdq, 0);
	CHECK_EQ_INT(ns.n, 0);
	CHECK_EQ_INT(count_op(m, "QLinearConv"), 1);
	CHECK_EQ_INT(count_op(m, "Conv"), 0);
	CHECK_EQ_INT(count_op(m, "QuantizeLinear"), 1);
	/* only the graph output's */
	CHECK_EQ_INT(count_op(m, "DequantizeLinear"), 1);
	for (size_t i = 0; i < m->proto->graph->n_node; i++)
		if (strcmp(m->proto->graph->node[i]->op_type,
		    "QLinearConv") == 0)
			c = m->proto->graph->node[i];
	REQUIRE(c != NULL);
	CHECK_EQ_INT((int)c->n_input, 9);
	CHECK_EQ_STR(c->input[3], "weight_quantized");
	CHECK_EQ_STR(c->input[8], "bias_quantized");
	model_free(m);
}

static void
test_bias_scale_mismatch_left_qdq(void)
{
	char text[1024];
	struct qdq_report rep;
	struct notes ns = { 0 };
	struct model *m;

	stream_text(text, sizeof text, "uint8", 3e-11);
	REQUIRE((m = apply(text, &rep, &ns)) != NULL);
	CHECK_EQ_INT(rep.qlinear, 0);
	CHECK_EQ_INT(rep.left_qdq, 1);
	CHECK(strstr(ns.last, "bias scale") != NULL);
	CHECK_EQ_INT(count_op(m, "Conv"), 1);
	CHECK_EQ_INT(count_op(m, "QLinearConv"), 0);
	model_free(m);
}

static void
test_16bit_left_qdq(void)
{
	char text[1024];
	struct qdq_report rep;
	struct notes ns = { 0 };
	struct model *m;

	stream_text(text, sizeof text, "uint16", 1e-11);
	REQUIRE((m = apply(text, &rep, &ns)) != NULL);
	CHECK_EQ_INT(rep.qlinear, 0);
	CHECK_EQ_INT(rep.left_qdq, 1);
	CHECK(strstr(ns.last, "8-bit types only") != NULL);
	CHECK_EQ_INT(count_op(m, "Conv"), 1);
	model_free(m);
}

UNIT_MAIN(test_conv_becomes_qlinearconv, test_bias_scale_mismatch_left_qdq,
    test_16bit_left_qdq)
