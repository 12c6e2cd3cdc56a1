/*
 * streamfit_test: records checked against test/data/qdq/ops.onnx (x
 * 1x3x8x8 float input, W1 4x3x3x3 and K 1x4x1x1 float constants, c1
 * computed): agreeing records pass, a differing shape or type fails with
 * the record's FILE:LINE, the batch dimension of an input and tensors the
 * model lacks are not compared, the first record of a tensor counts.
 * The whole-stream check against test/data/mixprec/chain.onnx: a node
 * not in the model, another op, another input, a weight of another shape
 * or not in the model are each refused with one line naming the record,
 * the node or tensor and the model.
 */
#include <stdio.h>
#include <string.h>

#include "fixture.h"
#include "graph.h"
#include "prep.h"
#include "stream.h"
#include "streamfit.h"
#include "unit.h"

#define OPS "test/data/qdq/ops.onnx"

/* Check the records of text (without header and end) against OPS. */
static int
check(const char *records, struct err *e)
{
	char text[4096];
	struct model *m = fixture_model(OPS);
	struct graph *gr = NULL;
	struct streamfit *sf = streamfit_new();
	struct stream_reader *r = NULL;
	FILE *fp;
	int n = 0, item, rc = -1;

	for (const char *s = records; *s; s++)
		n += *s == '\n';
	snprintf(text, sizeof text, "#onnxq\t1.0\n%send\t%d\n", records, n);
	if (m == NULL || sf == NULL ||
	    (fp = fmemopen(text, strlen(text), "r")) == NULL) {
		err_set(e, "setup");
		goto out;
	}
	if ((r = stream_reader_new(fp, "s", e)) == NULL) {
		fclose(fp);
		goto out;
	}
	while ((item = stream_next(r, e)) == STREAM_RECORD)
		if (streamfit_add(sf, stream_record(r), e) != 0)
			goto done;
	if (item == 0 && (gr = graph_new(m->proto->graph, e)) != NULL)
		rc = streamfit_check(sf, gr, "ops.onnx", e);
done:
	stream_reader_free(r);
	fclose(fp);
out:
	graph_free(gr);
	streamfit_free(sf);
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

#define CHAIN "test/data/mixprec/chain.onnx"

static const char head[] =
    "#onnxq\t1.0\n"
    "node\tconv1\top=Conv\tin=x,W1,B1\tout=c1\n"
    "node\trelu1\top=Relu\tin=c1\tout=r1\n";

/* streamfit_check_all on head followed by tail; -2 when the stream does
 * not read. */
static int
check_all(const struct model *m, const char *tail, struct err *e)
{
	char text[1024];
	struct stream_rec *recs[8];
	struct stream_reader *r;
	size_t n = 0;
	FILE *fp;
	int rc;

	snprintf(text, sizeof text, "%s%send\t3\n", head, tail);
	if (!CHECK((fp = fmemopen(text, strlen(text), "r")) != NULL) ||
	    !CHECK((r = stream_reader_new(fp, "s", e)) != NULL))
		return -2;
	while (n < 8 && (rc = stream_next(r, e)) > 0 && rc != STREAM_EOF)
		if (rc == STREAM_RECORD && !CHECK((recs[n++] =
		    stream_rec_dup(stream_record(r), e)) != NULL))
			return -2;
	rc = streamfit_check_all(m, recs, n, e);
	while (n > 0)
		stream_rec_free(recs[--n]);
	stream_reader_free(r);
	return rc;
}

static void
test_whole_stream(void)
{
	struct model *m = fixture_model(CHAIN);
	struct err e;

	REQUIRE(m != NULL);
	REQUIRE(prep_model(m, NULL, &e) == 0);
	CHECK_EQ_INT(check_all(m, "weight\tW1\tnode=conv1\top=Conv\tdtype=float"
	    "\tshape=4x2x3x3\tmin=-1\tmax=1\n", &e), 0);
	CHECK_EQ_INT(check_all(m, "node\tOp1\top=Conv\tin=x\tout=y\n", &e), -1);
	CHECK_EQ_STR(e.msg, "s:4: node Op1: not in " CHAIN);
	CHECK_EQ_INT(check_all(m, "node\tconv2\top=ConvTranspose\t"
	    "in=r1,W2,B2\tout=c2\n", &e), -1);
	CHECK_EQ_STR(e.msg, "s:4: node conv2: op ConvTranspose in the "
	    "stream, Conv in " CHAIN);
	CHECK_EQ_INT(check_all(m, "node\tconv2\top=Conv\tin=r1,W2\tout=c2\n",
	    &e), -1);
	CHECK_EQ_STR(e.msg, "s:4: node conv2: input 2 is (none) in the "
	    "stream, B2 in " CHAIN);
	CHECK_EQ_INT(check_all(m, "weight\tW1\tnode=conv1\top=Conv\tdtype=float"
	    "\tshape=4x2x5x5\tmin=-1\tmax=1\n", &e), -1);
	CHECK_EQ_STR(e.msg, "s:4: weight W1: shape 4x2x5x5 in the stream, "
	    "4x2x3x3 in " CHAIN " (a stream made from another model?)");
	CHECK_EQ_INT(check_all(m, "weight\tc1\tnode=relu1\top=Relu\tdtype=float"
	    "\tshape=4\tmin=-1\tmax=1\n", &e), -1);
	CHECK_EQ_STR(e.msg, "s:4: weight c1: a constant in the stream, "
	    "computed in " CHAIN " (a stream made from another model?)");
	CHECK_EQ_INT(check_all(m, "weight\tW9\tnode=conv1\top=Conv\t"
	    "dtype=float\tshape=4\tmin=-1\tmax=1\n", &e), -1);
	CHECK_EQ_STR(e.msg, "s:4: weight W9: not in " CHAIN);
	model_free(m);
}

UNIT_MAIN(test_agreeing_records_pass, test_weight_shape,
    test_weight_type_and_kind, test_stat, test_unknown_and_first_record,
    test_whole_stream)
