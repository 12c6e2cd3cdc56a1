/*
 * runner_test: lib/runner.c loads test/data/verify/clf.onnx with its
 * interpreter and the dataset spec, runs one sample of its data, and
 * matches name lists.
 */
#include "runner.h"
#include "unit.h"

#define DIR "test/data/verify/"

static void
test_runner(void)
{
	struct err e = { "" };
	const char *dirs[] = { DIR "data" };
	struct dataset *ds;
	struct tensor in[1] = { { 0 } }, out[2] = { { 0 } };
	struct runner r;
	int pos[1];

	REQUIRE(runner_init(&r, DIR "clf.onnx", 1, NULL, NULL, &e) == 0);
	CHECK_EQ_INT(r.spec.ninputs, 1);
	CHECK_EQ_INT(r.spec.noutputs, 2);
	CHECK_EQ_STR(r.spec.input_names[0], "x");
	CHECK_EQ_STR(r.spec.output_names[0], "logits");
	CHECK_EQ_INT(r.spec.input_dtypes[0], DT_FLOAT);
	REQUIRE((ds = dataset_open(dirs, 1, &e)) != NULL);
	REQUIRE(dataset_load(ds, 0, &r.spec, in, NULL, &e) == 0);
	CHECK_EQ_INT(interp_run(r.ip, in, out, &e), 0);
	CHECK(out[0].dtype == DT_FLOAT && out[0].nelem > 0);
	CHECK_EQ_INT(runner_match_names("output", "q.onnx",
	    (const char *const *)r.out_names, 1,
	    (const char *const *)r.out_names, 1, pos, &e), 0);
	CHECK_EQ_INT(pos[0], 0);
	CHECK_EQ_INT(runner_match_names("input", "q.onnx",
	    (const char *const *)r.out_names, 1,
	    (const char *const *)r.in_names, 1, pos, &e), -1);
	CHECK_EQ_STR(e.msg, "q.onnx: no input logits, as the fp32 model has");
	tensor_release(&in[0]);
	tensor_release(&out[0]);
	tensor_release(&out[1]);
	dataset_free(ds);
	runner_free(&r);
	CHECK(r.m == NULL && r.ip == NULL);
	CHECK_EQ_INT(runner_init(&r, DIR "nosuch.onnx", 1, NULL, NULL, &e),
	    -1);
	CHECK(strstr(e.msg, "nosuch.onnx") != NULL);
	runner_free(&r);
}

UNIT_MAIN(test_runner)
