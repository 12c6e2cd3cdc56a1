/*
 * streamfit: a stream fits the model it was made from; a node not in
 * the model, another op, another input and a weight of another shape
 * are each refused with one line naming the record, the node or tensor
 * and the model. Model: test/data/mixprec/chain.onnx.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fixture.h"
#include "prep.h"
#include "streamfit.h"

#define CHAIN "test/data/mixprec/chain.onnx"

static const char head[] =
    "#onnxq\t1.0\n"
    "node\tconv1\top=Conv\tin=x,W1,B1\tout=c1\n"
    "node\trelu1\top=Relu\tin=c1\tout=r1\n";

/* streamfit_check on head followed by tail; -2 when the stream does
 * not read. */
static int
check(const struct model *m, const char *tail, struct err *e)
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
	rc = streamfit_check(m, recs, n, e);
	while (n > 0)
		stream_rec_free(recs[--n]);
	stream_reader_free(r);
	return rc;
}

static void
test_fit(void)
{
	struct model *m = fixture_model(CHAIN);
	struct err e;

	REQUIRE(m != NULL);
	REQUIRE(prep_model(m, NULL, &e) == 0);
	CHECK_EQ_INT(check(m, "weight\tW1\tnode=conv1\top=Conv\tdtype=float"
	    "\tshape=4x2x3x3\tmin=-1\tmax=1\n", &e), 0);
	CHECK_EQ_INT(check(m, "node\tOp1\top=Conv\tin=x\tout=y\n", &e), -1);
	CHECK_EQ_STR(e.msg, "s:4: node Op1: not in " CHAIN);
	CHECK_EQ_INT(check(m, "node\tconv2\top=ConvTranspose\t"
	    "in=r1,W2,B2\tout=c2\n", &e), -1);
	CHECK_EQ_STR(e.msg, "s:4: node conv2: op ConvTranspose in the "
	    "stream, Conv in " CHAIN);
	CHECK_EQ_INT(check(m, "node\tconv2\top=Conv\tin=r1,W2\tout=c2\n",
	    &e), -1);
	CHECK_EQ_STR(e.msg, "s:4: node conv2: input 2 is (none) in the "
	    "stream, B2 in " CHAIN);
	CHECK_EQ_INT(check(m, "weight\tW1\tnode=conv1\top=Conv\tdtype=float"
	    "\tshape=4x2x5x5\tmin=-1\tmax=1\n", &e), -1);
	CHECK_EQ_STR(e.msg, "s:4: tensor W1: shape 4x2x5x5 in the stream, "
	    "4x2x3x3 in " CHAIN);
	CHECK_EQ_INT(check(m, "weight\tc1\tnode=relu1\top=Relu\tdtype=float"
	    "\tshape=4\tmin=-1\tmax=1\n", &e), -1);
	CHECK_EQ_STR(e.msg, "s:4: tensor c1: not a constant in " CHAIN);
	model_free(m);
}

UNIT_MAIN(test_fit)
