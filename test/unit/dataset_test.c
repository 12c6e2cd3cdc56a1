/*
 * dataset_test: lib/dataset.c's checks of a sample against the model
 * before its data is read (dataset_expect_shapes), and the names an
 * input's file may have (percent-encoded, literal, the lone .npy of a
 * one-input model). Needs a writable $TMPDIR or /tmp.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dataset.h"
#include "npy.h"
#include "tensor.h"
#include "unit.h"

static char root[256];

/* A fresh data directory DIR with sample s0 holding FILE (shape 1 x n). */
static const char *
sample(const char *dir, const char *file, int64_t n)
{
	static char buf[1024];
	char path[1100];
	struct tensor t;
	struct err e;
	int64_t dims[2] = { 1, n };

	if (!root[0]) {
		const char *tmp = getenv("TMPDIR");

		snprintf(root, sizeof root, "%s/dataset_test.XXXXXX",
		    tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(root))
			abort();
	}
	snprintf(buf, sizeof buf, "%s/%s", root, dir);
	snprintf(path, sizeof path, "%s/s0", buf);
	if ((mkdir(buf, 0777) < 0 && access(buf, F_OK) < 0) ||
	    (mkdir(path, 0777) < 0 && access(path, F_OK) < 0))
		abort();
	snprintf(path, sizeof path, "%s/s0/%s", buf, file);
	if (tensor_alloc(&t, DT_FLOAT, 2, dims, &e) < 0 ||
	    npy_write(path, &t, &e) < 0)
		abort();
	tensor_release(&t);
	return buf;
}

/* Load sample 0 of dir for inputs names (float); 0, or -1 with e. */
static int
load(const char *dir, int n, const char *const *names, const int *ranks,
    const int64_t *dims, struct tensor *in, struct err *e)
{
	int dtypes[4] = { DT_FLOAT, DT_FLOAT, DT_FLOAT, DT_FLOAT };
	struct dataset_spec spec = { n, names, dtypes, 0, NULL };
	struct dataset *ds;
	int r;

	if (!(ds = dataset_open(&dir, 1, e)))
		return -1;
	if (ranks && dataset_expect_shapes(ds, n, ranks, dims, e) < 0) {
		dataset_free(ds);
		return -1;
	}
	r = dataset_load(ds, 0, &spec, in, NULL, e);
	dataset_free(ds);
	return r;
}

static void
test_shape_checked_first(void)
{
	const char *dir = sample("shape", "x.npy", 8);
	const char *names[] = { "x" };
	int ranks[] = { 2 };
	int64_t dims[TENSOR_MAX_RANK] = { 1, 4 };
	struct tensor in[1];
	struct err e;
	char want[1200];

	CHECK_EQ_INT(load(dir, 1, names, ranks, dims, in, &e), -1);
	snprintf(want, sizeof want, "%s/s0/x.npy: input x: shape 1x8, the "
	    "model wants 1x4", dir);
	CHECK_EQ_STR(e.msg, want);
	/* a dynamic dimension takes any size; the first is not compared */
	dims[0] = 3;
	dims[1] = -1;
	REQUIRE(load(dir, 1, names, ranks, dims, in, &e) == 0);
	CHECK_EQ_INT(in[0].nelem, 8);
	tensor_release(&in[0]);
}

static void
test_literal_name(void)
{
	const char *dir = sample("literal", "onnx::Flatten_0.npy", 4);
	const char *names[] = { "onnx::Flatten_0" };
	struct tensor in[1];
	struct err e;

	REQUIRE(load(dir, 1, names, NULL, NULL, in, &e) == 0);
	CHECK_EQ_INT(in[0].nelem, 4);
	tensor_release(&in[0]);
}

static void
test_lone_file(void)
{
	const char *dir = sample("lone", "whatever.npy", 4);
	const char *one[] = { "x" }, *two[] = { "x", "y" };
	struct tensor in[2];
	struct err e;
	char want[1200];

	REQUIRE(load(dir, 1, one, NULL, NULL, in, &e) == 0);
	CHECK_EQ_INT(in[0].nelem, 4);
	tensor_release(&in[0]);
	/* with two inputs the file is nobody's: say what is there */
	CHECK_EQ_INT(load(dir, 2, two, NULL, NULL, in, &e), -1);
	snprintf(want, sizeof want, "%s/s0/x.npy: missing (model input x); "
	    "found whatever.npy", dir);
	CHECK_EQ_STR(e.msg, want);
	sample("lone", "other.npy", 4);
	CHECK_EQ_INT(load(dir, 1, one, NULL, NULL, in, &e), -1);
	snprintf(want, sizeof want, "%s/s0/x.npy: missing (model input x); "
	    "found other.npy, whatever.npy", dir);
	CHECK_EQ_STR(e.msg, want);
}

static void
test_cleanup(void)
{
	char cmd[600];

	if (root[0]) {
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
		CHECK(system(cmd) == 0);
	}
}

UNIT_MAIN(test_shape_checked_first, test_literal_name, test_lone_file,
    test_cleanup)
