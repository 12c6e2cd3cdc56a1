/* blockq_test: which weights onnx-qparams --weight-only quantizes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blockq.h"
#include "unit.h"

static const char stream[] =
    "#onnxq\t1.0\n"
    "node\tmm\top=MatMul\tin=x,W\tout=y\n"
    "node\tmm2\top=MatMul\tin=C,y\tout=z\n"
    "node\tmm3\top=MatMul\tin=z,V\tout=u\n"
    "node\tadd\top=Add\tin=u,V\tout=v\n"
    "weight\tW\tnode=mm\top=MatMul\tdtype=float\tshape=64x8\tmin=-1\tmax=1\n"
    "weight\tC\tnode=mm2\top=MatMul\tdtype=float\tshape=8x64\tmin=-1\tmax=1\n"
    "weight\tV\tnode=mm3\top=MatMul\tdtype=float\tshape=8x8\tmin=-1\tmax=1\n"
    "end\t7\n";

static void
test_filter(void)
{
	struct err e = { "" };
	struct settings s;
	struct blockq_opts o;
	struct stream_reader *r;
	struct stream_writer *w;
	char *buf = NULL;
	size_t len = 0;
	FILE *in = fmemopen((void *)stream, strlen(stream), "r");
	FILE *out = open_memstream(&buf, &len);
	char *argv[] = { "t" };

	REQUIRE(in && out);
	settings_default(&s);
	REQUIRE(blockq_opts_from_settings(&o, &s, &e) == 0);
	CHECK_EQ_INT(o.type, DT_INT4);
	CHECK_EQ_INT(o.block, 32);
	CHECK(o.method == BLOCKQ_MSE && !o.symmetric);
	o.prog = "t", o.version = "0", o.argc = 1, o.argv = argv;
	REQUIRE((r = stream_reader_new(in, "s", &e)) != NULL);
	REQUIRE((w = stream_writer_new(out, "o")) != NULL);
	/* W only: C is input A, V is read by another node too. */
	CHECK_EQ_INT((int)blockq_filter(r, w, &o, &e), 1);
	CHECK(stream_write_end(w, &e) == 0);
	stream_writer_free(w);
	stream_reader_free(r);
	fclose(in);
	fclose(out);
	CHECK(strstr(buf, "blockq\tW\tnode=mm\ttype=int4\tblock=32\t"
	    "method=mse\tsymmetric=0\n") != NULL);
	CHECK(strstr(buf, "blockq\tC") == NULL);
	CHECK(strstr(buf, "blockq\tV") == NULL);
	free(buf);
}

static void
test_settings(void)
{
	struct err e = { "" };
	struct settings s;
	struct blockq_opts o;

	settings_default(&s);
	settings_set_int(&s, CG_BLOCK_SIZE, 48);
	CHECK(blockq_opts_from_settings(&o, &s, &e) == -1);
	CHECK_EQ_STR(e.msg, "block size 48 is not a power of two from 16 "
	    "to 256");
	settings_default(&s);
	settings_set_int(&s, CG_W_SYMMETRIC, 1);
	settings_set_int(&s, CG_W_TYPE, DT_UINT8);
	CHECK(blockq_opts_from_settings(&o, &s, &e) == 0);
	CHECK(o.symmetric && o.method == BLOCKQ_MSE && o.type == DT_UINT8);
}

UNIT_MAIN(test_filter, test_settings)
