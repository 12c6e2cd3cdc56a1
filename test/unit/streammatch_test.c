/*
 * streammatch_test: records checked against test/data/qdq/ops.onnx (x
 * 1x3x8x8 float input, W1 4x3x3x3 and K 1x4x1x1 float constants, c1
 * computed): agreeing records pass, a differing shape or type fails with
 * the record's FILE:LINE, the batch dimension of an input and tensors the
 * model lacks are not compared, the first record of a tensor counts.
 */
#include <stdio.h>
#include <string.h>

#include "fixture.h"
#include "graph.h"
#include "stream.h"
#include "streammatch.h"
#include "unit.h"

#define OPS "test/data/qdq/ops.onnx"

/* Check the records of text (without header and end) against OPS. */
static int
check(const char *records, struct err *e)
{
	char text[4096];
	struct model *m = fixture_model(OPS);
	struct graph *gr = NULL;
	struct streammatch *sm = streammatch_new();
	struct stream_reader *r = NULL;
	FILE *fp;
	int n = 0, item, rc = -1;

	for (const char *s = records; *s; s++)
		n += *s == '\n';
	snprintf(text, sizeof text, "#onnxq\t1.0\n%send\t%d\n", records, n);
	if (m == NULL || sm == NULL ||
	    (fp = fmemopen(text, strlen(text), "r")) == NULL) {
		err_set(e, "setup");
		goto out;
	}
	if ((r = stream_reader_new(fp, "s", e)) == NULL) {
		fclose(fp);
		goto out;
	}
	while ((item = stream_next(r, e)) == STREAM_RECORD)
		if (streammatch_add(sm, stream_record(r), e) != 0)
			goto done;
	if (item == 0 && (gr = graph_new(m->proto->graph, e)) != NULL)
		rc = streammatch_check(sm, gr, "ops.onnx", e);
done:
	stream_reader_free(r);
	fclose(fp);
out:
	graph_free(gr);
	streammatch_free(sm);
	model_free(m);
	return rc;
}

static void
test_agreeing_records_pass(void)
{
	struct err e;

	CHECK_EQ_INT(check("weight\tW1\tdtype=float\tshape=4x3x3x3\n"
	    "weight\tK\tdtype=float\tshape=1x4x1x1\n"
	    "stat\tx\tdtype=float\tshape=1x3x8x8\n"
	    "stat\tc1\tdtype=float\tshape=1x4x8x8\n"
	    "qparam\tx\trole=act\n", &e), 0);
}

static void
test_weight_shape(void)
{
	struct err e;

	CHECK_EQ_INT(check("node\tn\n"
	    "weight\tW1\tdtype=float\tshape=8x3x3x3\n", &e), -1);
	CHECK_EQ_STR(e.msg, "s:3: weight W1: shape 8x3x3x3 in the stream, "
	    "4x3x3x3 in ops.onnx (a stream made from another model?)");
	CHECK_EQ_INT(check("bias\tK\tdtype=float\tshape=4\n", &e), -1);
	CHECK_EQ_STR(e.msg, "s:2: bias K: shape 4 in the stream, 1x4x1x1 in "
	    "ops.onnx (a stream made from another model?)");
}

static void
test_weight_type_and_kind(void)
{
	struct err e;

	CHECK_EQ_INT(check("weight\tW1\tdtype=float16\tshape=4x3x3x3\n",
	    &e), -1);
	CHECK_EQ_STR(e.msg, "s:2: weight W1: type float16 in the stream, "
	    "float in ops.onnx (a stream made from another model?)");
	CHECK_EQ_INT(check("weight\tc1\tdtype=float\tshape=1x4x8x8\n", &e),
	    -1);
	CHECK_EQ_STR(e.msg, "s:2: weight c1: a constant in the stream, "
	    "computed in ops.onnx (a stream made from another model?)");
}

static void
test_stat(void)
{
	struct err e;

	CHECK_EQ_INT(check("stat\tx\tdtype=double\tshape=1x3x8x8\n", &e), -1);
	CHECK_EQ_STR(e.msg, "s:2: stat x: type double in the stream, float "
	    "in ops.onnx (a stream made from another model?)");
	CHECK_EQ_INT(check("stat\tx\tdtype=float\tshape=1x3x8x9\n", &e), -1);
	CHECK_EQ_STR(e.msg, "s:2: stat x: shape 1x3x8x9 in the stream, "
	    "1x3x8x8 in ops.onnx (a stream made from another model?)");
	CHECK_EQ_INT(check("stat\tx\tdtype=float\tshape=3x8x8\n", &e), -1);
	/* the batch, a varied shape, an undeclared activation's shape */
	CHECK_EQ_INT(check("stat\tx\tdtype=float\tshape=6x3x8x8\n", &e), 0);
	CHECK_EQ_INT(check("stat\tx\tdtype=float\tshape=*\n", &e), 0);
	CHECK_EQ_INT(check("stat\tc1\tdtype=float\tshape=2x2\n", &e), 0);
}

static void
test_unknown_and_first_record(void)
{
	struct err e;

	CHECK_EQ_INT(check("weight\tnope\tdtype=float\tshape=1\n"
	    "stat\tnope2\tdtype=int8\tshape=1\n", &e), 0);
	CHECK_EQ_INT(check("weight\tW1\tdtype=float\tshape=4x3x3x3\n"
	    "weight\tW1\tdtype=float\tshape=1\n", &e), 0);
	/* keys that do not parse are their readers' business */
	CHECK_EQ_INT(check("weight\tW1\tdtype=float\tshape=a\n", &e), 0);
}

UNIT_MAIN(test_agreeing_records_pass, test_weight_shape,
    test_weight_type_and_kind, test_stat, test_unknown_and_first_record)
