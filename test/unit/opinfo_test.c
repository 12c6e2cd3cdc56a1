/*
 * opinfo_test: the operator knowledge shared by calib, qparams and
 * qdq-insert (lib/opinfo.c): input roles, per-channel axes (Gemm's transB
 * read from the node), bias pairing, other domains. Needs nothing but
 * libonnxq.
 */
#include "opinfo.h"
#include "unit.h"

/* A node of op_type with an optional int attribute. */
static void
node_init(Onnx__NodeProto *n, Onnx__AttributeProto *a,
    Onnx__AttributeProto **ap, const char *op, const char *attr, int64_t v)
{
	onnx__node_proto__init(n);
	n->op_type = (char *)op;
	n->domain = (char *)"";
	if (attr) {
		onnx__attribute_proto__init(a);
		a->name = (char *)attr;
		a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
		a->has_i = 1;
		a->i = v;
		ap[0] = a;
		n->attribute = ap;
		n->n_attribute = 1;
	}
}

static void
test_roles(void)
{
	CHECK_EQ_INT(opinfo_role("", "Conv", 0), OPINFO_OTHER);
	CHECK_EQ_INT(opinfo_role("", "Conv", 1), OPINFO_WEIGHT);
	CHECK_EQ_INT(opinfo_role("", "Conv", 2), OPINFO_BIAS);
	CHECK_EQ_INT(opinfo_role("ai.onnx", "ConvTranspose", 2), OPINFO_BIAS);
	CHECK_EQ_INT(opinfo_role("", "Gemm", 1), OPINFO_WEIGHT);
	CHECK_EQ_INT(opinfo_role("", "Gemm", 2), OPINFO_BIAS);
	CHECK_EQ_INT(opinfo_role("", "MatMul", 1), OPINFO_WEIGHT);
	CHECK_EQ_INT(opinfo_role("", "MatMul", 2), OPINFO_OTHER);
	CHECK_EQ_INT(opinfo_role("", "LayerNormalization", 2), OPINFO_WEIGHT);
	CHECK_EQ_INT(opinfo_role("", "BatchNormalization", 4), OPINFO_WEIGHT);
	CHECK_EQ_INT(opinfo_role("", "Add", 1), OPINFO_OTHER);
	CHECK_EQ_INT(opinfo_role("com.microsoft", "Conv", 1), OPINFO_OTHER);
	CHECK_EQ_INT(opinfo_role("", "Conv", -1), OPINFO_OTHER);
	CHECK_EQ_INT(opinfo_role("", "Conv", 99), OPINFO_OTHER);
	CHECK(opinfo_find("", "Relu") == NULL);
	CHECK(opinfo_find("", "Gemm") != NULL);
}

static void
test_axes(void)
{
	Onnx__NodeProto n;
	Onnx__AttributeProto a, *ap[1];

	node_init(&n, &a, ap, "Conv", NULL, 0);
	CHECK_EQ_INT(opinfo_axis(&n, 1, 4), 0);
	CHECK_EQ_INT(opinfo_axis(&n, 2, 1), 0);		/* B */
	CHECK_EQ_INT(opinfo_axis(&n, 0, 4), -1);
	node_init(&n, &a, ap, "ConvTranspose", NULL, 0);
	CHECK_EQ_INT(opinfo_axis(&n, 1, 4), 1);
	CHECK_EQ_INT(opinfo_axis(&n, 1, 1), -1);
	node_init(&n, &a, ap, "Gemm", NULL, 0);
	CHECK_EQ_INT(opinfo_axis(&n, 1, 2), 1);
	CHECK_EQ_INT(opinfo_axis(&n, 1, 3), -1);
	CHECK_EQ_INT(opinfo_axis(&n, 2, 2), 1);		/* C of shape MxN */
	CHECK_EQ_INT(opinfo_axis(&n, 2, 0), -1);	/* scalar C */
	node_init(&n, &a, ap, "Gemm", "transB", 1);
	CHECK_EQ_INT(opinfo_axis(&n, 1, 2), 0);
	node_init(&n, &a, ap, "Gemm", "transB", 0);
	CHECK_EQ_INT(opinfo_axis(&n, 1, 2), 1);
	node_init(&n, &a, ap, "MatMul", NULL, 0);
	CHECK_EQ_INT(opinfo_axis(&n, 1, 2), 1);
	CHECK_EQ_INT(opinfo_axis(&n, 1, 3), 2);
	CHECK_EQ_INT(opinfo_axis(&n, 1, 1), -1);
	CHECK_EQ_INT(opinfo_axis(&n, 0, 2), -1);
	node_init(&n, &a, ap, "LayerNormalization", NULL, 0);
	CHECK_EQ_INT(opinfo_axis(&n, 1, 1), 0);
	CHECK_EQ_INT(opinfo_axis(&n, 2, 1), 0);
	CHECK_EQ_INT(opinfo_axis(&n, 1, 2), -1);
	node_init(&n, &a, ap, "InstanceNormalization", NULL, 0);
	CHECK_EQ_INT(opinfo_axis(&n, 1, 1), 0);
	node_init(&n, &a, ap, "BatchNormalization", NULL, 0);
	CHECK_EQ_INT(opinfo_axis(&n, 3, 1), 0);
	node_init(&n, &a, ap, "Add", NULL, 0);
	CHECK_EQ_INT(opinfo_axis(&n, 1, 1), -1);
}

static void
test_bias_pairs(void)
{
	Onnx__NodeProto n;
	Onnx__AttributeProto a, *ap[1];
	int as = -9, ws = -9;

	node_init(&n, &a, ap, "Conv", NULL, 0);
	CHECK_EQ_INT(opinfo_bias_pair(&n, 2, &as, &ws), 0);
	CHECK(as == 0 && ws == 1);
	CHECK_EQ_INT(opinfo_bias_pair(&n, 1, &as, &ws), -1);
	node_init(&n, &a, ap, "Gemm", "transB", 1);
	as = ws = -9;
	CHECK_EQ_INT(opinfo_bias_pair(&n, 2, &as, &ws), 0);
	CHECK(as == 0 && ws == 1);
	node_init(&n, &a, ap, "MatMul", NULL, 0);
	CHECK_EQ_INT(opinfo_bias_pair(&n, 2, &as, &ws), -1);
	node_init(&n, &a, ap, "Relu", NULL, 0);
	CHECK_EQ_INT(opinfo_bias_pair(&n, 2, &as, &ws), -1);
}

UNIT_MAIN(test_roles, test_axes, test_bias_pairs)
