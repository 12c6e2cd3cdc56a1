/*
 * opset_test: the generated opset table (lookups, the versions of the
 * operators PaddleOCR uses), and raising test/data/qdq/opset9.onnx to 13:
 * the rewritten model computes what the original computed, in our
 * interpreter, bit for bit, and so does rewrite9.onnx (the other
 * rewrites); a deprecated operator stops raising.
 * Run from the top of the source tree.
 */
#include "fixture.h"
#include "interp.h"
#include "opset.h"
#include "unit.h"

#define FIX "test/data/qdq/"

static void
test_since(void)
{
	CHECK_EQ_INT(opset_table_max(), 17);
	CHECK_EQ_INT(opset_since("Clip", 9), 6);
	CHECK_EQ_INT(opset_since("Clip", 11), 11);
	CHECK_EQ_INT(opset_since("Clip", 17), 13);
	CHECK_EQ_INT(opset_since("Softmax", 12), 11);
	CHECK_EQ_INT(opset_since("Squeeze", 13), 13);
	CHECK_EQ_INT(opset_since("Abs", 1), 1);
	CHECK_EQ_INT(opset_since("Resize", 9), 0);
	CHECK_EQ_INT(opset_since("NoSuchOp", 13), 0);
	CHECK_EQ_INT(opset_since("", 13), 0);
	CHECK_EQ_INT(opset_ir_version(9), 4);
	CHECK_EQ_INT(opset_ir_version(13), 7);
	CHECK_EQ_INT(opset_ir_version(17), 8);
	CHECK_EQ_INT(opset_ir_version(21), 10);
}

/* Run m on x (1x4x6x8, a fixed ramp); outputs into out. */
static int
run(struct model *m, struct tensor *out)
{
	struct interp_opts o = { .threads = 1 };
	struct interp *ip;
	struct tensor x = { 0 };
	int64_t d[4] = { 1, 4, 6, 8 };
	struct err e;
	int rc;

	if ((ip = interp_new(m, &o, &e)) == NULL) {
		fprintf(stderr, "%s\n", e.msg);
		return -1;
	}
	if (tensor_alloc(&x, DT_FLOAT, 4, d, &e) != 0) {
		interp_free(ip);
		return -1;
	}
	for (int64_t i = 0; i < x.nelem; i++)
		((float *)x.data)[i] = (float)((i * 37) % 101) / 10 - 3;
	rc = interp_run(ip, &x, out, &e);
	if (rc != 0)
		fprintf(stderr, "%s\n", e.msg);
	tensor_release(&x);
	interp_free(ip);
	return rc;
}

static void
test_raise(void)
{
	struct model *a = fixture_model(FIX "opset9.onnx");
	struct model *b = fixture_model(FIX "opset9.onnx");
	struct tensor oa[3] = { 0 }, ob[3] = { 0 };
	struct err e;

	REQUIRE(a != NULL && b != NULL);
	CHECK_EQ_INT(opset_check(b, 13, NULL, &e), 0);
	/* Clip, Slice, Squeeze, Unsqueeze, Pad, two Softmax (ranks unknown). */
	CHECK_EQ_INT(opset_raise(b, 13, NULL, &e), 7);
	CHECK_EQ_INT(model_opset(b, ""), 13);
	CHECK_EQ_INT(b->proto->ir_version, 7);
	/* Raising to what the model has is nothing. */
	CHECK_EQ_INT(opset_raise(b, 13, NULL, &e), 0);
	REQUIRE(run(a, oa) == 0 && run(b, ob) == 0);
	for (int k = 0; k < 3; k++) {
		CHECK(shape_equal(&oa[k], &ob[k]));
		CHECK(memcmp(oa[k].data, ob[k].data,
		    (size_t)oa[k].nelem * sizeof(float)) == 0);
		tensor_release(&oa[k]);
		tensor_release(&ob[k]);
	}
	/* Beyond the table. */
	CHECK_EQ_INT(opset_check(a, 18, NULL, &e), -1);
	CHECK_EQ_STR(e.msg, "opset 18 is beyond the opset table (17)");
	model_free(a);
	model_free(b);
}

/* Split, ReduceSum, TopK, Dropout, LogSoftmax and Hardmax rewritten. */
static void
test_rewrites(void)
{
	struct model *a = fixture_model(FIX "rewrite9.onnx");
	struct model *b = fixture_model(FIX "rewrite9.onnx");
	struct tensor oa[2] = { 0 }, ob[2] = { 0 };
	struct err e;

	REQUIRE(a != NULL && b != NULL);
	CHECK_EQ_INT(opset_raise(b, 13, NULL, &e), 6);
	REQUIRE(run(a, oa) == 0 && run(b, ob) == 0);
	for (int k = 0; k < 2; k++) {
		CHECK(shape_equal(&oa[k], &ob[k]));
		CHECK(memcmp(oa[k].data, ob[k].data,
		    (size_t)oa[k].nelem * sizeof(float)) == 0);
		tensor_release(&oa[k]);
		tensor_release(&ob[k]);
	}
	model_free(a);
	model_free(b);
}

static void
test_deprecated(void)
{
	struct model *m = fixture_model(FIX "upsample9.onnx");
	struct err e;

	REQUIRE(m != NULL);
	CHECK_EQ_INT(opset_check(m, 10, NULL, &e), -1);
	CHECK_EQ_STR(e.msg, "node up (Upsample): Upsample is deprecated at "
	    "opset 10");
	CHECK_EQ_INT(opset_raise(m, 13, NULL, &e), -1);
	CHECK_EQ_INT(model_opset(m, ""), 9);
	model_free(m);
}

UNIT_MAIN(test_since, test_raise, test_rewrites, test_deprecated)
