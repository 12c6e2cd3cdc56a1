/*
 * records: every record kind read and written back gives the same bytes
 * (unknown keys after the known ones); malformed records give messages
 * that name the file, the line and the key; the node index's checks.
 */
#include <stdio.h>

#include "records.h"
#include "unit.h"

static const char good[] =
    "#onnxq\t1.0\n"
    "node\tconv\top=Conv\tin=x,W,B\tout=c\n"
    "node\tmy%2Cnode\top=Relu\tdomain=com.x\tin=c,\tout=r\tzz=1\n"
    "weight\tW\tnode=conv\top=Conv\tdtype=float\tshape=2x1x1x1\t"
    "min=-0.5\tmax=2\taxis=0\tcmin=-0.5,-1\tcmax=0.25,2\n"
    "bias\tB\tnode=conv\top=Gemm\tinput=x\tweight=W\tbeta=0.5\t"
    "dtype=float\tshape=2\tmin=-1\tmax=3\n"
    "weight\tE\tnode=conv\top=Conv\tdtype=float16\tshape=0x3\t"
    "min=inf\tmax=-inf\n"
    "qparam\tx\trole=act\ttype=uint8\tscale=0.015686275\tzp=64\t"
    "method=mse\trmin=-1\trmax=3\n"
    "qparam\tq\trole=act\ttype=int8\tscale=0.5\tzp=0\tmethod=shared\t"
    "from=x\n"
    "qparam\tW\trole=weight\ttype=int8\taxis=0\tscale=0.25,0.5\t"
    "zp=0,0\tmethod=minmax\trmin=-0.5,-1\trmax=0.25,2\tadjusted=1\t"
    "new=7\n"
    "qparam\tB\trole=bias\ttype=int32\taxis=0\tscale=0.1,0.2\tzp=0,0\t"
    "input=x\tweight=W\n"
    "convert\tx\ttype=uint16\tscale=6.103609e-05\tzp=16384\t"
    "method=mse\trmin=-1\trmax=3\trecv=sm,my%2Cnode\n"
    "convert\tr\ttype=int8\tscale=1\tzp=0\n"
    "fold\trelu\tinto=conv\tz=%25\n"
    "dynamic\tmm\tweight=W\tz=1\n"
    "blockq\tW\tnode=mm\ttype=int4\tblock=32\tmethod=hqq\t"
    "symmetric=0\tq=1\n"
    "end\t14\n";

static struct stream_reader *
reader(const char *text, struct err *e)
{
	FILE *fp = fmemopen((void *)text, strlen(text), "r");

	return fp ? stream_reader_new(fp, "s", e) : NULL;
}

/* Read rec with its typed reader and write it back to w. */
static int
round_trip(const struct stream_rec *rec, struct stream_writer *w,
    struct err *e)
{
	const char *t = rec->type;
	int rc = -1;

	if (strcmp(t, "node") == 0) {
		struct node_rec n;

		if ((rc = node_rec_read(&n, rec, e)) == 0)
			node_rec_put(&n, w, rec);
		node_rec_release(&n);
	} else if (strcmp(t, "weight") == 0 || strcmp(t, "bias") == 0) {
		struct wb_rec b;

		if ((rc = wb_rec_read(&b, rec, e)) == 0)
			wb_rec_put(&b, w, rec);
		wb_rec_release(&b);
	} else if (strcmp(t, "qparam") == 0) {
		struct qparam_rec q;

		if ((rc = qparam_rec_read(&q, rec, e)) == 0)
			qparam_rec_put(&q, w, rec);
		qparam_rec_release(&q);
	} else if (strcmp(t, "convert") == 0) {
		struct convert_rec c;

		if ((rc = convert_rec_read(&c, rec, e)) == 0)
			convert_rec_put(&c, w, rec);
		convert_rec_release(&c);
	} else if (strcmp(t, "fold") == 0) {
		struct fold_rec f;

		if ((rc = fold_rec_read(&f, rec, e)) == 0)
			fold_rec_put(&f, w, rec);
		fold_rec_release(&f);
	} else if (strcmp(t, "dynamic") == 0) {
		struct dynamic_rec d;

		if ((rc = dynamic_rec_read(&d, rec, e)) == 0)
			dynamic_rec_put(&d, w, rec);
		dynamic_rec_release(&d);
	} else if (strcmp(t, "blockq") == 0) {
		struct blockq_rec b;

		if ((rc = blockq_rec_read(&b, rec, e)) == 0)
			blockq_rec_put(&b, w, rec);
		blockq_rec_release(&b);
	}
	return rc;
}

static void
test_round_trip(void)
{
	struct err e = { "" };
	struct stream_reader *r;
	struct stream_writer *w;
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	int k, ok = 1;

	REQUIRE(fp != NULL);
	REQUIRE((r = reader(good, &e)) != NULL);
	REQUIRE((w = stream_writer_new(fp, "out")) != NULL);
	while ((k = stream_next(r, &e)) == STREAM_RECORD)
		if (round_trip(stream_record(r), w, &e) < 0) {
			ok = 0;
			break;
		}
	CHECK_EQ_STR(e.msg, "");
	CHECK(ok && k == STREAM_EOF);
	CHECK(stream_write_end(w, &e) == 0);
	stream_writer_free(w);
	stream_reader_free(r);
	fclose(fp);
	CHECK_EQ_STR(buf, good);
	free(buf);
}

/* The message the first record of body gives. */
static void
check_bad(const char *body, const char *want)
{
	char text[1024];
	struct err e = { "" };
	struct stream_reader *r;

	snprintf(text, sizeof text, "#onnxq\t1.0\n%s\nend\t1\n", body);
	r = reader(text, &e);
	if (!CHECK(r != NULL && stream_next(r, &e) == STREAM_RECORD)) {
		stream_reader_free(r);
		return;
	}
	CHECK(round_trip(stream_record(r), NULL, &e) < 0);
	CHECK_EQ_STR(e.msg, want);
	stream_reader_free(r);
}

static void
test_malformed(void)
{
	check_bad("node\tn\tin=x\tout=y",
	    "s:2: key op: missing in node record");
	check_bad("node\tn\top=Relu\tout=y",
	    "s:2: key in: missing in node record");
	check_bad("qparam\tx\ttype=uint8\tscale=1\tzp=0",
	    "s:2: key role is missing");
	check_bad("qparam\tx\trole=foo\ttype=uint8\tscale=1\tzp=0",
	    "s:2: key role: unknown role 'foo'");
	check_bad("qparam\tx\trole=act\ttype=int32\tscale=1\tzp=0",
	    "s:2: key type: unsupported type 'int32'");
	check_bad("qparam\tx\trole=bias\ttype=int8\tscale=1\tzp=0",
	    "s:2: role bias with type int8");
	check_bad("qparam\tx\trole=act\ttype=uint8\tscale=1,2\tzp=0,0",
	    "s:2: 2 scales but no axis");
	check_bad("qparam\tx\trole=act\ttype=uint8\taxis=0\tscale=1,2\t"
	    "zp=0,0", "s:2: an activation quantized per axis");
	check_bad("qparam\tx\trole=weight\ttype=int8\tscale=0\tzp=0",
	    "s:2: key scale: 0 is not a positive finite scale");
	check_bad("qparam\tx\trole=weight\ttype=int8\tscale=1\tzp=200",
	    "s:2: key zp: 200 is out of the range of int8");
	check_bad("qparam\tx\trole=act\ttype=uint8\tscale=1\tzp=0\trmin=0",
	    "s:2: key rmax: missing in qparam record");
	check_bad("convert\tx\ttype=uint8\taxis=0\tscale=1,1\tzp=0,0",
	    "s:2: a conversion per axis");
	check_bad("fold\tr\tinfo=x", "s:2: key into: missing in fold record");
	check_bad("dynamic\tmm", "s:2: key weight: missing in dynamic record");
	check_bad("blockq\tW\tnode=m\ttype=int4\tblock=24\tmethod=rtn\t"
	    "symmetric=0", "s:2: key block: 24 is not a power of two from 16 "
	    "to 256");
	check_bad("blockq\tW\tnode=m\ttype=int16\tblock=32\tmethod=rtn\t"
	    "symmetric=0", "s:2: key type: 'int16' is not int4, uint4, int8 "
	    "or uint8");
	check_bad("blockq\tW\tnode=m\ttype=int4\tblock=32\tmethod=gptq\t"
	    "symmetric=1", "s:2: key method: unknown method 'gptq'");
	check_bad("weight\tW\tnode=n\top=Conv\tdtype=float\tshape=2\t"
	    "min=1\tmax=0", "s:2: weight W: bad range min=1 max=0");
	check_bad("weight\tW\tnode=n\top=Conv\tdtype=float\tshape=2\t"
	    "min=0\tmax=1\taxis=1\tcmin=0\tcmax=1",
	    "s:2: key axis: 1 out of range for rank 1");
	check_bad("bias\tB\tnode=n\top=Conv\tdtype=float\tshape=2\t"
	    "min=0\tmax=1", "s:2: key input: missing in bias record");
}

/* The index of the node records of text; the message of the first error. */
static int
index_text(struct node_index *ix, const char *text, struct err *e)
{
	struct stream_reader *r = reader(text, e);
	int k;

	if (r == NULL || node_index_init(ix, e) < 0) {
		stream_reader_free(r);
		return -1;
	}
	while ((k = stream_next(r, e)) == STREAM_RECORD)
		if (node_index_add(ix, stream_record(r), e) < 0) {
			k = -1;
			break;
		}
	stream_reader_free(r);
	return k;
}

static void
test_node_index(void)
{
	struct node_index ix;
	struct err e = { "" };

	REQUIRE(index_text(&ix, "#onnxq\t1.0\n"
	    "node\ta\top=Conv\tin=x,W\tout=c\n"
	    "node\tb\top=Clip\tin=c,lo,\tout=d\n"
	    "node\tc\top=Add\tin=c,d\tout=y\n"
	    "end\t3\n", &e) == 0);
	CHECK_EQ_INT(ix.n, 3);
	CHECK_EQ_INT(node_index_find(&ix, "b"), 1);
	CHECK_EQ_INT(node_index_find(&ix, "x"), -1);
	CHECK_EQ_INT(node_index_producer(&ix, "d"), 1);
	CHECK_EQ_INT(node_index_producer(&ix, "x"), -1);
	CHECK_EQ_INT(node_index_nreaders(&ix, "c"), 2);
	CHECK_EQ_INT(node_index_nreaders(&ix, "y"), 0);
	CHECK_EQ_INT(node_index_param_reader(&ix, "lo"), 1);
	CHECK_EQ_INT(node_index_param_reader(&ix, "c"), -1);
	CHECK(node_index_reads(&ix, 2, "d"));
	CHECK(!node_index_reads(&ix, 0, "d"));
	node_index_release(&ix);

	CHECK(index_text(&ix, "#onnxq\t1.0\n"
	    "node\ta\top=Relu\tin=x\tout=y\n"
	    "node\ta\top=Relu\tin=y\tout=z\n"
	    "end\t2\n", &e) < 0);
	CHECK_EQ_STR(e.msg, "s:3: node a: described twice");
	node_index_release(&ix);
	CHECK(index_text(&ix, "#onnxq\t1.0\n"
	    "node\ta\top=Relu\tin=x\tout=y\n"
	    "node\tb\top=Relu\tin=x\tout=y\n"
	    "end\t2\n", &e) < 0);
	CHECK_EQ_STR(e.msg, "s:3: node b: output y is also produced by "
	    "node a");
	node_index_release(&ix);
	CHECK(index_text(&ix, "#onnxq\t1.0\n"
	    "node\ta\top=Relu\tin=y\tout=z\n"
	    "node\tb\top=Relu\tin=x\tout=y\n"
	    "end\t2\n", &e) < 0);
	CHECK_EQ_STR(e.msg, "s:3: node b: output y is read before it is "
	    "produced (node records out of topological order, or a cycle)");
	node_index_release(&ix);
}

static void
test_qparam_copy(void)
{
	struct qparam a, b;
	struct err e = { "" };

	memset(&b, 0, sizeof b);
	REQUIRE(qparam_alloc(&a, 2, &e) == 0);
	a.type = DT_INT8;
	a.axis = 1;
	a.scale[1] = 0.5f;
	a.zp[1] = -3;
	a.rmax[0] = 2;
	CHECK(qparam_set_method(&a, "minmax", &e) == 0);
	CHECK(qparam_copy(&b, &a, &e) == 0);
	CHECK(b.n == 2 && b.axis == 1 && b.type == DT_INT8);
	CHECK(b.scale[1] == 0.5f && b.zp[1] == -3 && b.rmax[0] == 2);
	CHECK_EQ_STR(b.method, "minmax");
	CHECK(b.from == NULL);
	qparam_drop_range(&a);
	CHECK(qparam_copy(&b, &a, &e) == 0);
	CHECK(b.rmin == NULL && b.rmax == NULL);
	qparam_release(&a);
	qparam_release(&b);
	CHECK(b.axis == -1 && b.scale == NULL);
}

UNIT_MAIN(test_round_trip, test_malformed, test_node_index, test_qparam_copy)
