/*
 * qdqresize_test: onnx-qdq-insert --resize-expand (lib/qdqresize.c,
 * through qdq_apply with resize_expand) on the generated resize.onnx:
 * the nearest Resize by 2 and 3 between a DequantizeLinear and a
 * QuantizeLinear of the same parameters becomes Transpose, Unsqueeze,
 * Expand (1, 1, 2, 1, 3, 1), Reshape and Transpose, each step quantized
 * with those parameters; the half_pixel one stays; off, nothing changes.
 * In resize-inputs.onnx, a Resize whose scales are also a graph input (a
 * default a caller may override) stays; one whose roi is gets rewritten,
 * the roi kept as the input's default. In resize-modes.onnx, those of
 * other rules and roundings that read whole pixels are rewritten too.
 * (Their values: test/resize-expand.bats, against ONNX Runtime.)
 */
#include <stdio.h>
#include <string.h>

#include "fixture.h"
#include "qdqfixture.h"
#include "unit.h"

static const char stream_text[] = "#onnxq\t1.0\n"
    "qparam\tc\trole=act\ttype=uint8\tscale=0.02\tzp=160\n"
    "qparam\tu\trole=act\ttype=uint8\tscale=0.02\tzp=160\n"
    "qparam\tv\trole=act\ttype=uint8\tscale=0.02\tzp=160\n"
    "end\t3\n";

static struct model *
apply(int on, struct qdq_report *rep)
{
	struct qdq_opts o = { 0 };

	o.resize_expand = on;
	return qdqfixture_apply(fixture_generated("qdqscale/resize.onnx"),
	    stream_text, &o, rep);
}

/* The number of op nodes, the last in *last (may be NULL). */
static int
count_op(const struct model *m, const char *op,
    const Onnx__NodeProto **last)
{
	const Onnx__GraphProto *g = m->proto->graph;
	int k = 0;

	for (size_t i = 0; i < g->n_node; i++)
		if (strcmp(g->node[i]->op_type, op) == 0) {
			k++;
			if (last)
				*last = g->node[i];
		}
	return k;
}

static void
test_rewrite(void)
{
	static const int64_t grow[6] = { 1, 1, 2, 1, 3, 1 };
	const Onnx__GraphProto *g;
	const Onnx__NodeProto *x = NULL;
	struct qdq_report rep;
	struct tensor t = { 0 };
	struct model *m;
	struct err e;
	int found = 0;

	REQUIRE((m = apply(1, &rep)) != NULL);
	g = m->proto->graph;
	CHECK_EQ_INT(rep.resize_rewrites, 1);
	CHECK_EQ_INT(count_op(m, "Resize", NULL), 1);	/* half_pixel */
	CHECK_EQ_INT(count_op(m, "Transpose", NULL), 2);
	CHECK_EQ_INT(count_op(m, "Unsqueeze", NULL), 1);
	CHECK_EQ_INT(count_op(m, "Reshape", NULL), 1);
	CHECK_EQ_INT(count_op(m, "Shape", NULL), 1);
	REQUIRE(count_op(m, "Expand", &x) == 1 && x->n_input == 2);
	for (size_t i = 0; i < g->n_initializer; i++)
		if (strcmp(g->initializer[i]->name, x->input[1]) == 0 &&
		    model_tensor_read(m, g->initializer[i], &t, &e) == 0) {
			found = t.nelem == 6 && t.dtype == DT_INT64 &&
			    memcmp(t.data, grow, sizeof grow) == 0;
			tensor_release(&t);
		}
	CHECK(found);
	/* the Reshape's output declared of rank 4 */
	found = 0;
	for (size_t i = 0; i < g->n_value_info; i++) {
		const Onnx__ValueInfoProto *vi = g->value_info[i];

		found += strstr(vi->name, "_nhwc_out") && vi->type &&
		    vi->type->tensor_type && vi->type->tensor_type->shape &&
		    vi->type->tensor_type->shape->n_dim == 4;
	}
	CHECK_EQ_INT(found, 1);
	/* each step between a Q and a DQ: 1 + 4 pairs on c's way to u */
	CHECK_EQ_INT(count_op(m, "QuantizeLinear", NULL), 3 + 4);
	/* the rewritten Resize's scales are gone, the other's stay */
	found = 0;
	for (size_t i = 0; i < g->n_initializer; i++)
		found += strcmp(g->initializer[i]->name, "S23") == 0 ? 10 :
		    strcmp(g->initializer[i]->name, "S22") == 0;
	CHECK_EQ_INT(found, 1);
	model_free(m);
	/* off, both Resize nodes stay */
	REQUIRE((m = apply(0, &rep)) != NULL);
	CHECK_EQ_INT(rep.resize_rewrites, 0);
	CHECK_EQ_INT(count_op(m, "Resize", NULL), 2);
	CHECK_EQ_INT(count_op(m, "Expand", NULL), 0);
	model_free(m);
}

/* How many initializers and graph inputs of m are named `name`. */
static int
count_named(const struct model *m, const char *name)
{
	const Onnx__GraphProto *g = m->proto->graph;
	int k = 0;

	for (size_t i = 0; i < g->n_initializer; i++)
		k += strcmp(g->initializer[i]->name, name) == 0;
	for (size_t i = 0; i < g->n_input; i++)
		k += strcmp(g->input[i]->name, name) == 0;
	return k;
}

static void
test_overridable(void)
{
	static const char text[] = "#onnxq\t1.0\n"
	    "qparam\tc\trole=act\ttype=uint8\tscale=0.02\tzp=160\n"
	    "qparam\tu\trole=act\ttype=uint8\tscale=0.02\tzp=160\n"
	    "qparam\tu4\trole=act\ttype=uint8\tscale=0.02\tzp=160\n"
	    "qparam\tv\trole=act\ttype=uint8\tscale=0.02\tzp=160\n"
	    "end\t4\n";
	struct qdq_opts o = { 0 };
	struct qdq_report rep;
	struct model *m;

	o.resize_expand = 1;
	REQUIRE((m = qdqfixture_apply(fixture_generated(
	    "qdqscale/resize-inputs.onnx"), text, &o, &rep)) != NULL);
	CHECK_EQ_INT(rep.resize_rewrites, 1);	/* up4 */
	CHECK_EQ_INT(count_op(m, "Resize", NULL), 2);	/* up: S23 */
	CHECK_EQ_INT(count_op(m, "Expand", NULL), 1);
	CHECK_EQ_INT(count_named(m, "S23"), 2);
	CHECK_EQ_INT(count_named(m, "R4"), 2);	/* unread, a default */
	model_free(m);
}

/*
 * resize-modes.onnx: the Resize nodes whose output pixel i reads input
 * pixel i / f rounded down are rewritten, whatever their rule says.
 */
static void
test_modes(void)
{
	static const char *const names[] = { "hp_rpf", "hp_rpc", "pt_rpf",
	    "as_rpf2", "as_rpf3", "hp_floor", "hp_ceil", "as_ceil" };
	static const char *const left = " as_rpf3 hp_floor hp_ceil as_ceil ";
	char text[2048], key[32];
	const Onnx__GraphProto *g;
	struct qdq_opts o = { 0 };
	struct qdq_report rep;
	struct model *m;
	size_t len;

	len = (size_t)snprintf(text, sizeof text, "#onnxq\t1.0\n"
	    "qparam\tc\trole=act\ttype=uint8\tscale=0.02\tzp=160\n");
	for (int i = 0; i < 8; i++)
		len += (size_t)snprintf(text + len, sizeof text - len,
		    "qparam\tu_%s\trole=act\ttype=uint8\tscale=0.02\t"
		    "zp=160\n", names[i]);
	snprintf(text + len, sizeof text - len, "end\t9\n");
	o.resize_expand = 1;
	REQUIRE((m = qdqfixture_apply(fixture_generated(
	    "qdqscale/resize-modes.onnx"), text, &o, &rep)) != NULL);
	CHECK_EQ_INT(rep.resize_rewrites, 4);
	CHECK_EQ_INT(count_op(m, "Expand", NULL), 4);
	g = m->proto->graph;
	for (size_t i = 0; i < g->n_node; i++) {
		if (strcmp(g->node[i]->op_type, "Resize") != 0)
			continue;
		snprintf(key, sizeof key, " %s ", g->node[i]->name);
		if (!CHECK(strstr(left, key) != NULL))
			CHECK_EQ_STR(g->node[i]->name, "one of those left");
	}
	CHECK_EQ_INT(count_op(m, "Resize", NULL), 4);
	model_free(m);
}

UNIT_MAIN(test_rewrite, test_overridable, test_modes)
