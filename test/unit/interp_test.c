/*
 * interp_test: lib/interp.c on the small models of test/data/interp/
 * (made by make-fixtures.py there; run from the top of the source tree):
 * inputs and outputs, graph inputs and initializers as outputs, the
 * observe callback, absent optional inputs, repeated runs, and the error
 * messages for missing kernels, opsets, input types and shapes and
 * kernel failures. Subgraphs run on control/loop.onnx (generated, a Loop
 * reading outer-scope values): only main-graph tensors are observed.
 * float16 runs on float16/conv16.onnx (generated): its Conv kernels are
 * float32 only, so those nodes run widened, their outputs float16.
 * Constant nodes, run once when planned, on constant.onnx and
 * badconst.onnx.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "interp.h"
#include "model.h"
#include "unit.h"

#define FIX "test/data/interp/"

struct seen {
	char names[32][32];
	int n;
	int fail_at;		/* return an error at this call, -1 never */
};

static int
observe(void *ctx, const char *name, const struct tensor *t, struct err *e)
{
	struct seen *s = ctx;

	if (!t->data)
		return err_set(e, "observed an empty tensor %s", name);
	if (s->n == s->fail_at)
		return err_set(e, "observer stops at %s", name);
	if (s->n < 32)
		snprintf(s->names[s->n++], sizeof s->names[0], "%s", name);
	return 0;
}

static void
test_io(void)
{
	struct seen s = { .fail_at = -1 };
	struct interp_opts o = { .threads = 1, .observe = observe,
	    .observe_ctx = &s };
	struct model *m = fixture_model(FIX "io.onnx");
	struct interp *ip;
	struct tensor in[2], out[5];
	struct err e;
	int64_t d[2] = { 2, 3 }, n = 2, dims[TENSOR_MAX_RANK];
	int rank;

	REQUIRE(m != NULL);
	ip = interp_new(m, &o, &e);
	REQUIRE(ip != NULL);
	CHECK_EQ_INT(interp_ninputs(ip), 2);
	CHECK_EQ_STR(interp_input_name(ip, 0), "x");
	CHECK_EQ_STR(interp_input_name(ip, 1), "k");
	CHECK_EQ_INT(interp_input_type(ip, 1, &rank, dims), DT_INT64);
	CHECK_EQ_INT(rank, 1);
	CHECK_EQ_INT(dims[0], -1);
	CHECK_EQ_INT(interp_noutputs(ip), 5);
	CHECK_EQ_STR(interp_output_name(ip, 3), "a");

	REQUIRE(tensor_alloc(&in[0], DT_FLOAT, 2, d, &e) == 0);
	REQUIRE(tensor_alloc(&in[1], DT_INT64, 1, &n, &e) == 0);
	for (int i = 0; i < 6; i++)
		((float *)in[0].data)[i] = (float)i - 4;
	((int64_t *)in[1].data)[1] = 42;
	for (int run = 0; run < 2; run++) {
		s.n = 0;
		if (!CHECK(interp_run(ip, in, out, &e) == 0)) {
			fprintf(stderr, "%s\n", e.msg);
			break;
		}
		/* b = relu(x + c), x and c copied, a moved out, k passed through. */
		for (int i = 0; i < 6; i++) {
			float a = (float)i - 4 + (float)(i % 3 + 1);
			CHECK_NEAR(((float *)out[0].data)[i], a > 0 ? a : 0, 0);
			CHECK_NEAR(((float *)out[1].data)[i], (float)i - 4, 0);
			CHECK_NEAR(((float *)out[3].data)[i], a, 0);
		}
		CHECK(out[1].data != in[0].data);
		CHECK_NEAR(((float *)out[2].data)[2], 3, 0);
		CHECK_EQ_INT(((int64_t *)out[4].data)[1], 42);
		/* Graph inputs first, then node outputs in topological order. */
		CHECK_EQ_INT(s.n, 6);
		CHECK_EQ_STR(s.names[0], "x");
		CHECK_EQ_STR(s.names[1], "k");
		CHECK_EQ_STR(s.names[2], "a");
		CHECK_EQ_STR(s.names[3], "b");
		CHECK_EQ_STR(s.names[4], "dead");
		CHECK_EQ_STR(s.names[5], "k2");
		for (int k = 0; k < 5; k++)
			tensor_release(&out[k]);
	}

	/* An observer error stops the run; nothing is left allocated. */
	s.n = 0;
	s.fail_at = 3;
	CHECK(interp_run(ip, in, out, &e) == -1);
	CHECK_EQ_STR(e.msg, "observer stops at b");
	for (int k = 0; k < 5; k++)
		CHECK(out[k].data == NULL);

	/* Types and static dims are checked, naming the input. */
	s.fail_at = -1;
	in[0].dtype = DT_INT32;
	CHECK(interp_run(ip, in, out, &e) == -1);
	CHECK_EQ_STR(e.msg, "input x: type int32 does not match the model's float");
	in[0].dtype = DT_FLOAT;
	in[0].dims[1] = 2;
	in[0].nelem = 4;
	CHECK(interp_run(ip, in, out, &e) == -1);
	CHECK_EQ_STR(e.msg, "input x: shape 2x2 does not match the model's 2x3");
	in[0].rank = 1;
	CHECK(interp_run(ip, in, out, &e) == -1);
	CHECK_EQ_STR(e.msg, "input x: shape 2 does not match the model's 2x3");
	tensor_release(&in[0]);
	tensor_release(&in[1]);
	interp_free(ip);
	model_free(m);
}

static void
test_missing(void)
{
	struct model *m = fixture_model(FIX "missing.onnx");
	struct err e;

	REQUIRE(m != NULL);
	CHECK(interp_new(m, NULL, &e) == NULL);
	CHECK_EQ_STR(e.msg, "unsupported operators: node n1 (NoSuchOp), "
	    "node #2 (Frob in com.example)");
	model_free(m);
	m = fixture_model(FIX "opset22.onnx");
	REQUIRE(m != NULL);
	CHECK(interp_new(m, NULL, &e) == NULL);
	CHECK_EQ_STR(e.msg, "opset 22 of the default domain is not supported "
	    "(1 to 21 are)");
	model_free(m);
}

static void
test_optional_and_errors(void)
{
	struct model *m = fixture_model(FIX "optional.onnx");
	struct interp *ip;
	struct tensor in[2], out[1];
	struct err e;
	int64_t four = 4, one = 1;

	REQUIRE(m != NULL);
	ip = interp_new(m, NULL, &e);
	REQUIRE(ip != NULL);
	REQUIRE(tensor_alloc(&in[0], DT_FLOAT, 1, &four, &e) == 0);
	REQUIRE(tensor_alloc(&in[1], DT_INT64, 1, &one, &e) == 0);
	for (int i = 0; i < 4; i++)
		((float *)in[0].data)[i] = (float)i * 0.25f - 0.25f;
	((int64_t *)in[1].data)[0] = 4;
	if (CHECK(interp_run(ip, in, out, &e) == 0)) {
		/* Clip with no min: only the max applies. */
		CHECK_NEAR(((float *)out[0].data)[0], -0.25, 0);
		CHECK_NEAR(((float *)out[0].data)[3], 0.5, 0);
		tensor_release(&out[0]);
	} else
		fprintf(stderr, "%s\n", e.msg);
	((int64_t *)in[1].data)[0] = 5;
	CHECK(interp_run(ip, in, out, &e) == -1);
	CHECK(strncmp(e.msg, "node r1 (Reshape): ", 19) == 0);
	CHECK(out[0].data == NULL);
	tensor_release(&in[0]);
	tensor_release(&in[1]);
	interp_free(ip);
	model_free(m);
}

static void
test_subgraphs(void)
{
	struct seen s = { .fail_at = -1 };
	struct interp_opts o = { .threads = 1, .observe = observe,
	    .observe_ctx = &s };
	struct model *m = fixture_generated("control/loop.onnx");
	static const char *const names[] = { "x0", "n", "limit", "x", "s",
	    "states", "gy", "gh", "sw" };
	struct interp *ip;
	struct tensor in[3] = { { 0 } }, out[4];
	struct err e;
	int64_t d[2] = { 1, 6 };
	Onnx__GraphProto *body;

	REQUIRE(m != NULL);
	ip = interp_new(m, &o, &e);
	REQUIRE(ip != NULL);
	REQUIRE(interp_ninputs(ip) == 3 && interp_noutputs(ip) == 4);
	REQUIRE(tensor_alloc(&in[0], DT_FLOAT, 2, d, &e) == 0);
	REQUIRE(tensor_alloc(&in[1], DT_INT64, 0, NULL, &e) == 0);
	REQUIRE(tensor_alloc(&in[2], DT_FLOAT, 0, NULL, &e) == 0);
	((float *)in[0].data)[0] = 1;
	*(int64_t *)in[1].data = 3;
	*(float *)in[2].data = 100;
	if (CHECK(interp_run(ip, in, out, &e) == 0)) {
		/* Three iterations, the first scan output scaled by 0. */
		CHECK_EQ_INT(out[1].rank, 3);
		CHECK_EQ_INT(out[1].dims[0], 3);
		CHECK_NEAR(((float *)out[1].data)[0], 0, 0);
		CHECK(((float *)out[1].data)[6] != 0);
		CHECK_EQ_INT(s.n, 9);
		for (int i = 0; i < 9 && i < s.n; i++)
			CHECK_EQ_STR(s.names[i], names[i]);
		for (int k = 0; k < 4; k++)
			tensor_release(&out[k]);
	} else
		fprintf(stderr, "%s\n", e.msg);
	interp_free(ip);

	/* A missing kernel inside the body names the path to it. */
	body = m->proto->graph->node[1]->attribute[0]->g;
	REQUIRE(body != NULL);
	free(body->node[0]->op_type);
	body->node[0]->op_type = strdup("NoSuchOp");
	CHECK(interp_new(m, &o, &e) == NULL);
	CHECK_EQ_STR(e.msg, "node loop (Loop): body: unsupported operators: "
	    "node mm (NoSuchOp)");
	for (int k = 0; k < 3; k++)
		tensor_release(&in[k]);
	model_free(m);
}

static void
test_float16(void)
{
	struct seen s = { .fail_at = -1 };
	struct interp_opts o = { .threads = 1, .observe = observe,
	    .observe_ctx = &s };
	struct model *m = fixture_generated("float16/conv16.onnx");
	struct interp *ip;
	struct tensor in = { 0 }, out[2];
	struct err e;
	int64_t d[4] = { 1, 3, 12, 12 };
	float first = 0;

	REQUIRE(m != NULL);
	ip = interp_new(m, &o, &e);
	REQUIRE(ip != NULL);
	REQUIRE(tensor_alloc(&in, DT_FLOAT16, 4, d, &e) == 0);
	for (int64_t i = 0; i < in.nelem; i++)
		tensor_set(&in, i, (double)(i % 7) / 7 - 0.4);
	/* Twice: the second run goes straight to the widened kernel. */
	for (int run = 0; run < 2; run++) {
		if (!CHECK(interp_run(ip, &in, out, &e) == 0)) {
			fprintf(stderr, "%s\n", e.msg);
			break;
		}
		CHECK_EQ_INT(out[0].dtype, DT_FLOAT16);
		CHECK_EQ_INT(out[0].nelem, 4);
		if (run == 0)
			first = (float)tensor_get(&out[0], 0);
		else
			CHECK_NEAR(tensor_get(&out[0], 0), first, 0);
		tensor_release(&out[0]);
	}
	CHECK(s.n >= 2);
	CHECK_EQ_STR(s.names[1], "c1");
	tensor_release(&in);
	interp_free(ip);
	model_free(m);
}

/*
 * A Constant is run once, when the graph is planned: every run still
 * observes it in its place and gets its value, which outputs copy.
 */
static void
test_constant(void)
{
	struct seen s = { .fail_at = -1 };
	struct interp_opts o = { .threads = 1, .observe = observe,
	    .observe_ctx = &s };
	struct model *m = fixture_model(FIX "constant.onnx");
	struct interp *ip;
	struct tensor in, out[2];
	struct err e;
	int64_t n = 3;

	REQUIRE(m != NULL);
	ip = interp_new(m, &o, &e);
	REQUIRE(ip != NULL);
	REQUIRE(tensor_alloc(&in, DT_FLOAT, 1, &n, &e) == 0);
	for (int i = 0; i < 3; i++)
		((float *)in.data)[i] = (float)(10 * i);
	for (int run = 0; run < 2; run++) {
		s.n = 0;
		if (!CHECK(interp_run(ip, &in, out, &e) == 0)) {
			fprintf(stderr, "%s\n", e.msg);
			break;
		}
		for (int i = 0; i < 3; i++) {
			CHECK_NEAR(((float *)out[0].data)[i], 11 * i + 1, 0);
			CHECK_NEAR(((float *)out[1].data)[i], i + 1, 0);
		}
		CHECK_EQ_INT(s.n, 3);
		CHECK_EQ_STR(s.names[0], "x");
		CHECK_EQ_STR(s.names[1], "w");
		CHECK_EQ_STR(s.names[2], "y");
		tensor_release(&out[0]);
		tensor_release(&out[1]);
	}
	tensor_release(&in);
	interp_free(ip);
	model_free(m);

	/* A Constant that cannot be made fails when the graph runs. */
	m = fixture_model(FIX "badconst.onnx");
	REQUIRE(m != NULL);
	ip = interp_new(m, NULL, &e);
	REQUIRE(ip != NULL);
	CHECK(interp_run(ip, NULL, out, &e) == -1);
	CHECK(strstr(e.msg, "node bad (Constant): attributes") == e.msg);
	interp_free(ip);
	model_free(m);
}

UNIT_MAIN(test_io, test_missing, test_optional_and_errors, test_subgraphs,
    test_float16, test_constant)
