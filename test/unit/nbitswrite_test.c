/* nbitswrite_test: a MatMul weight rewritten into MatMulNBits. */
#include <math.h>
#include <string.h>

#include "attr.h"
#include "fixture.h"
#include "nbitswrite.h"

#define OPS "test/data/qdq/ops.onnx"

static const Onnx__NodeProto *
node_named(const struct model *m, const char *name)
{
	for (size_t i = 0; i < m->proto->graph->n_node; i++)
		if (strcmp(m->proto->graph->node[i]->name, name) == 0)
			return m->proto->graph->node[i];
	return NULL;
}

static int
read_init(const struct model *m, const char *name, struct tensor *t)
{
	struct err e;

	for (size_t i = 0; i < m->proto->graph->n_initializer; i++)
		if (strcmp(m->proto->graph->initializer[i]->name, name) == 0)
			return model_tensor_read(m,
			    m->proto->graph->initializer[i], t, &e);
	return -1;
}

static void
test_matmulnbits(void)
{
	struct model *m = fixture_model(OPS), *ref = fixture_model(OPS);
	struct blockq_rec b = { "Wm", "matmul1", DT_UINT4, 32, BLOCKQ_RTN, 0,
	    3 };
	struct nbitswrite_opts o = { 0, "s", NULL, NULL };
	struct nbitswrite_report r;
	struct tensor w = { 0 }, q = { 0 }, s = { 0 }, z = { 0 };
	const Onnx__NodeProto *n;
	struct err e = { "" };
	double worst = 0;

	REQUIRE(m && ref);
	REQUIRE(nbitswrite_apply(m, &b, 1, &o, &r, &e) == 0);
	CHECK_EQ_INT(r.weights, 1);
	REQUIRE((n = node_named(m, "matmul1")) != NULL);
	CHECK_EQ_STR(n->op_type, "MatMulNBits");
	CHECK_EQ_STR(n->domain, "com.microsoft");
	REQUIRE(n->n_input == 4);
	CHECK_EQ_INT((int)attr_int(n, "K", 0), 64);
	CHECK_EQ_INT((int)attr_int(n, "N", 0), 10);
	CHECK_EQ_INT((int)attr_int(n, "bits", 0), 4);
	CHECK_EQ_INT((int)attr_int(n, "block_size", 0), 32);
	REQUIRE(read_init(ref, "Wm", &w) == 0);
	REQUIRE(read_init(m, "Wm", &q) == 0 &&
	    read_init(m, n->input[2], &s) == 0 &&
	    read_init(m, n->input[3], &z) == 0);
	REQUIRE(q.dtype == DT_UINT8 && q.nelem == 10 * 2 * 16);
	REQUIRE(s.nelem == 20 && z.nelem == 10);
	/* Every weight within half a step of its dequantized code. */
	for (int nn = 0; nn < 10; nn++)
		for (int k = 0; k < 64; k++) {
			int blk = k / 32, i = k % 32;
			uint8_t byte = ((uint8_t *)q.data)[(nn * 2 + blk) * 16 +
			    i / 2];
			int code = i % 2 ? byte >> 4 : byte & 15;
			uint8_t zb = ((uint8_t *)z.data)[nn];
			int zp = blk ? zb >> 4 : zb & 15;
			float sc = ((float *)s.data)[nn * 2 + blk];
			double d = fabs(((float *)w.data)[k * 10 + nn] -
			    (code - zp) * sc) / sc;

			worst = d > worst ? d : worst;
		}
	CHECK(worst <= 0.5 + 1e-4);
	tensor_release_n((struct tensor[]){ w, q, s, z }, 4);
	model_free(m);
	model_free(ref);
}

static void
test_errors(void)
{
	struct model *m = fixture_model(OPS);
	struct blockq_rec b = { "Wm", "gemm1", DT_INT4, 32, BLOCKQ_HQQ, 0, 7 };
	struct nbitswrite_opts o = { 0, "s", NULL, NULL };
	struct err e = { "" };

	REQUIRE(m);
	CHECK(nbitswrite_apply(m, &b, 1, &o, NULL, &e) == -1);
	CHECK_EQ_STR(e.msg, "s:7: node gemm1 is not a MatMul reading Wm as B");
	b.node = "matmul1";
	o.qdq = 1;
	CHECK(nbitswrite_apply(m, &b, 1, &o, NULL, &e) == -1);
	CHECK(strncmp(e.msg, OPS ": blocked DequantizeLinear needs opset "
	    "21, the model has 13", 60) == 0);
	model_free(m);
}

UNIT_MAIN(test_matmulnbits, test_errors)
