/*
 * dynwrite_test: the dynamic structure written into test/data/qdq/ops.onnx
 * (Conv, MatMul and Gemm with transB), through qdq_apply as
 * onnx-qdq-insert calls it: the ops written, the float weights gone, the
 * interpreter accepts the result; and the errors of a stream that does not
 * fit the model. Run from the top of the source tree.
 */
#include <stdio.h>
#include <string.h>

#include "fixture.h"
#include "interp.h"
#include "qdq.h"
#include "unit.h"

#define OPS "test/data/qdq/ops.onnx"

#define HEAD "#onnxq\t1.0\n"
#define QW(w) "qparam\t" w "\trole=weight\ttype=int8\tscale=0.01\tzp=0\n"

/* Apply stream text to OPS; 0 or -1 with e set. *mp the model. */
static int
apply(const char *text, struct model **mp, struct qdq_report *rep,
    struct err *e)
{
	FILE *fp = fmemopen((void *)text, strlen(text), "r");
	struct stream_reader *r = fp ? stream_reader_new(fp, "s", e) : NULL;
	struct qdq_plan *p = qdq_plan_new();
	int rc = -1;

	*mp = fixture_model(OPS);
	if (r && p && *mp && qdq_plan_read(p, r, e) == 0)
		rc = qdq_apply(*mp, p, NULL, rep, e);
	qdq_plan_free(p);
	stream_reader_free(r);
	return rc;
}

static int
count_ops(const struct model *m, const char *op)
{
	const Onnx__GraphProto *g = m->proto->graph;
	int n = 0;

	for (size_t i = 0; i < g->n_node; i++)
		n += strcmp(g->node[i]->op_type, op) == 0;
	return n;
}

static int
has_init(const struct model *m, const char *name)
{
	const Onnx__GraphProto *g = m->proto->graph;

	for (size_t i = 0; i < g->n_initializer; i++)
		if (strcmp(g->initializer[i]->name, name) == 0)
			return 1;
	return 0;
}

static void
test_structure(void)
{
	static const char text[] = HEAD QW("W1") QW("Wm") QW("Wg")
	    "dynamic\tconv1\tweight=W1\n"
	    "dynamic\tmatmul1\tweight=Wm\n"
	    "dynamic\tgemm1\tweight=Wg\n"
	    "end\t6\n";
	struct interp_opts io = { .threads = 1 };
	struct qdq_report rep;
	struct model *m = NULL;
	struct interp *ip;
	struct err e = { "" };

	CHECK_EQ_INT(apply(text, &m, &rep, &e), 0);
	CHECK_EQ_STR(e.msg, "");
	REQUIRE(m != NULL);
	CHECK_EQ_INT(rep.weights, 3);
	/* matmul1 and gemm1 read the same activation: one shared. */
	CHECK_EQ_INT(count_ops(m, "DynamicQuantizeLinear"), 2);
	CHECK_EQ_INT(count_ops(m, "ConvInteger"), 1);
	CHECK_EQ_INT(count_ops(m, "MatMulInteger"), 2);
	CHECK_EQ_INT(count_ops(m, "Cast"), 3);
	CHECK_EQ_INT(count_ops(m, "Conv") + count_ops(m, "MatMul") +
	    count_ops(m, "Gemm"), 0);
	CHECK(!has_init(m, "W1") && !has_init(m, "Wm") && !has_init(m, "Wg"));
	CHECK(has_init(m, "W1_quantized") && has_init(m, "Wg_quantized"));
	CHECK(!has_init(m, "B1") && has_init(m, "B1_reshaped"));
	CHECK(has_init(m, "Cg"));	/* beta 1: added as it is */
	ip = interp_new(m, &io, &e);
	CHECK(ip != NULL);
	if (!ip)
		fprintf(stderr, "%s\n", e.msg);
	interp_free(ip);
	model_free(m);
}

/* text applied to OPS fails with message want (after "s:"). */
static void
check_bad(const char *text, const char *want)
{
	struct qdq_report rep;
	struct model *m = NULL;
	struct err e = { "" };

	CHECK_EQ_INT(apply(text, &m, &rep, &e), -1);
	CHECK_EQ_STR(e.msg, want);
	model_free(m);
}

static void
test_errors(void)
{
	check_bad(HEAD QW("Wm") "dynamic\tnope\tweight=Wm\nend\t2\n",
	    "s:3: node nope: not in " OPS);
	check_bad(HEAD "dynamic\tmatmul1\tweight=Wm\nend\t1\n",
	    "s:2: node matmul1: no qparam record of role weight for Wm");
	check_bad(HEAD QW("Wg") "dynamic\tmatmul1\tweight=Wg\nend\t2\n",
	    "s:3: node matmul1: its weight is not Wg");
	check_bad(HEAD "qparam\tW1\trole=weight\ttype=int8\taxis=0\t"
	    "scale=1,1,1,1\tzp=0,1,0,0\ndynamic\tconv1\tweight=W1\nend\t2\n",
	    "s:3: node conv1: ConvInteger takes one weight zero point, "
	    "W1 has one per channel (use symmetric weights)");
	check_bad(HEAD "qparam\tWm\trole=weight\ttype=int16\tscale=1\tzp=0\n"
	    "dynamic\tmatmul1\tweight=Wm\nend\t2\n",
	    "s:3: node matmul1: weight Wm: type int16: dynamic quantization "
	    "takes int8 or uint8");
}

UNIT_MAIN(test_structure, test_errors)
