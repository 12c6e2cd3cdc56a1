/*
 * stream_test: the onnxq text stream reader and writer (lib/stream.c).
 * Checks that every float32 and double printed reads back bit-identical
 * (random bit patterns, subnormals, +-0, inf, nan), escaping of every
 * byte, a write/read round trip with typed getters, pass-through of
 * unknown records and keys, and that each kind of damaged input (empty,
 * not a stream, unknown major version, truncated, wrong end count, data
 * after the end, bad escapes, bad numbers, duplicate keys, over-long
 * lines, NUL bytes, CRLF, stray spaces, ...) gives one error line naming
 * the file and line; placed copies (stream_rec_dup_placed()) give back
 * the lines read, byte for byte, and fail once the file changed. Needs
 * nothing but libonnxq.
 */
#include <float.h>
#include <stdint.h>
#include <unistd.h>

#include "stats.h"
#include "stream.h"
#define UNIT_SEED 0x6a09e667f3bcc908ULL
#include "unit.h"

/* Read a whole stream held in memory; 0 at a good end, -1 with e set. */
static int
read_mem(const char *s, size_t n, size_t maxline, struct err *e)
{
	FILE *fp = fmemopen((void *)s, n, "r");
	struct stream_reader *r;
	int got;

	if (!fp)
		return err_set(e, "fmemopen failed");
	if (!(r = stream_reader_new(fp, "t", e))) {
		fclose(fp);
		return -1;
	}
	if (maxline)
		stream_reader_set_max_line(r, maxline);
	while ((got = stream_next(r, e)) > 0)
		;
	stream_reader_free(r);
	fclose(fp);
	return got;
}

static int
read_str(const char *s, struct err *e)
{
	return read_mem(s, strlen(s), 0, e);
}

static void
test_float_round_trip(void)
{
	static const float special[] = { 0.0f, -0.0f, INFINITY, -INFINITY,
	    FLT_MIN, -FLT_MIN, FLT_MAX, -FLT_MAX, FLT_TRUE_MIN, 1.0f, 0.1f,
	    1.0f / 3, 16777216.0f, 16777217.0f };
	char buf[STREAM_NUM_MAX];
	float back;
	int bad = 0;

	for (size_t i = 0; i < sizeof special / sizeof special[0]; i++) {
		stream_fmt_float(special[i], buf);
		CHECK_EQ_INT(stream_parse_float(buf, &back), 0);
		CHECK(memcmp(&back, &special[i], sizeof back) == 0);
	}
	for (int i = 0; i < 200000; i++) {
		uint32_t u = (uint32_t)unit_rand64(), ub;
		float f;

		if (i % 4 == 0)
			u &= 0x807fffff;	/* subnormals */
		memcpy(&f, &u, sizeof f);
		stream_fmt_float(f, buf);
		if (stream_parse_float(buf, &back) < 0) {
			bad++;
			continue;
		}
		memcpy(&ub, &back, sizeof ub);
		if (isnan(f) ? !isnan(back) : ub != u)
			bad++;
	}
	CHECK_EQ_INT(bad, 0);
	/* NaN is written "nan" and reads back as the quiet NaN */
	CHECK_EQ_STR(stream_fmt_float(NAN, buf), "nan");
	CHECK_EQ_INT(stream_parse_float("nan", &back), 0);
	CHECK(isnan(back));
	/* shortest forms */
	CHECK_EQ_STR(stream_fmt_float(0.1f, buf), "0.1");
	CHECK_EQ_STR(stream_fmt_float(1.0f, buf), "1");
	CHECK_EQ_STR(stream_fmt_float(-0.0f, buf), "-0");
	CHECK_EQ_STR(stream_fmt_float(-INFINITY, buf), "-inf");
	CHECK_EQ_STR(stream_fmt_float(16777217.0f, buf), "16777216");
	CHECK_EQ_STR(stream_fmt_float(FLT_TRUE_MIN, buf), "1.4013e-45");
}

static void
test_double_round_trip(void)
{
	static const double special[] = { 0.0, -0.0, INFINITY, -INFINITY,
	    DBL_MIN, DBL_MAX, -DBL_TRUE_MIN, 0.1, 1.0 / 3 };
	char buf[STREAM_NUM_MAX];
	double back;
	int bad = 0;

	for (size_t i = 0; i < sizeof special / sizeof special[0]; i++) {
		stream_fmt_double(special[i], buf);
		CHECK_EQ_INT(stream_parse_double(buf, &back), 0);
		CHECK(memcmp(&back, &special[i], sizeof back) == 0);
	}
	for (int i = 0; i < 100000; i++) {
		uint64_t u = unit_rand64(), ub;
		double d;

		if (i % 4 == 0)
			u &= 0x800fffffffffffffULL;
		memcpy(&d, &u, sizeof d);
		stream_fmt_double(d, buf);
		if (stream_parse_double(buf, &back) < 0) {
			bad++;
			continue;
		}
		memcpy(&ub, &back, sizeof ub);
		if (isnan(d) ? !isnan(back) : ub != u)
			bad++;
	}
	CHECK_EQ_INT(bad, 0);
	CHECK_EQ_STR(stream_fmt_double(0.1, buf), "0.1");
	CHECK_EQ_STR(stream_fmt_double(0.1 + 0.2, buf), "0.30000000000000004");
}

static void
test_parse_numbers(void)
{
	static const char *badf[] = { "", " 1", "1 ", "1.5x", "x", "1e99",
	    "-1e39", "1,2", "--1" };
	static const char *badi[] = { "", "+1", " 1", "1.0", "9223372036854775808",
	    "0x10", "1e3" };
	static const char *badu[] = { "", "-1", "+1", " 1",
	    "18446744073709551616", "1.5" };
	float f;
	double d;
	int64_t i;
	uint64_t u;

	for (size_t k = 0; k < sizeof badf / sizeof badf[0]; k++) {
		CHECK_EQ_INT(stream_parse_float(badf[k], &f), -1);
		CHECK_EQ_INT(stream_parse_double(badf[k], &d),
		    strcmp(badf[k], "1e99") == 0 || strcmp(badf[k], "-1e39") == 0
		    ? 0 : -1);
	}
	for (size_t k = 0; k < sizeof badi / sizeof badi[0]; k++)
		CHECK_EQ_INT(stream_parse_int(badi[k], &i), -1);
	for (size_t k = 0; k < sizeof badu / sizeof badu[0]; k++)
		CHECK_EQ_INT(stream_parse_uint(badu[k], &u), -1);
	CHECK(stream_parse_int("-9223372036854775808", &i) == 0 &&
	    i == INT64_MIN);
	CHECK(stream_parse_uint("18446744073709551615", &u) == 0 &&
	    u == UINT64_MAX);
	CHECK(stream_parse_float("1e-45", &f) == 0 && f == FLT_TRUE_MIN);
	CHECK(stream_parse_float("-inf", &f) == 0 && f == -INFINITY);
}

static void
test_escape(void)
{
	char all[256], *esc, *back;
	struct err e;

	for (int c = 1; c < 256; c++)
		all[c - 1] = (char)c;
	all[255] = '\0';
	REQUIRE((esc = stream_escape(all)) != NULL);
	for (const unsigned char *p = (unsigned char *)esc; *p; p++)
		CHECK(*p > 0x20 && *p != 0x7f && *p != ',' && *p != '=');
	REQUIRE((back = stream_unescape(esc, &e)) != NULL);
	CHECK_EQ_STR(back, all);
	free(esc);
	free(back);
	esc = stream_escape("a b,c=d%e\tf/g:h.\xc3\xa9");
	CHECK_EQ_STR(esc, "a%20b%2Cc%3Dd%25e%09f/g:h.\xc3\xa9");
	free(esc);
	back = stream_unescape("x%2cy%3d", &e);
	CHECK_EQ_STR(back, "x,y=");
	free(back);
	CHECK(stream_unescape("a%G1", &e) == NULL);
	CHECK_EQ_STR(e.msg, "bad escape '%G1'");
	CHECK(stream_unescape("a%", &e) == NULL);
	CHECK_EQ_STR(e.msg, "bad escape '%' (% needs two hex digits)");
	CHECK(stream_unescape("a%4", &e) == NULL);
	CHECK(stream_unescape("%00", &e) == NULL);
	CHECK(strstr(e.msg, "NUL") != NULL);
}

/* Write a stream with every kind of value, read it back with the getters. */
static void
test_write_read(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	struct stream_writer *w;
	struct stream_reader *r;
	const struct stream_rec *rec;
	struct stream_rec *dup, *lean, *again;
	char *argv[] = { "prog", "-o", "a file", NULL };
	const char *names[] = { "x y", NULL, "", "b,c" };
	float fl[] = { 1.5f, -0.0f, FLT_TRUE_MIN };
	int64_t il[] = { -3, 0, INT64_MAX };
	int64_t dims[] = { 1, -1, 224 };
	struct xsum xs, xb;
	struct err e;
	float f, *fv;
	double d;
	int64_t i, *iv, sd[TENSOR_MAX_RANK];
	uint64_t u;
	char *s, **nv;
	size_t n;
	int rank;

	REQUIRE(fp != NULL);
	REQUIRE((w = stream_writer_new(fp, "mem")) != NULL);
	stream_put_prog(w, "prog", "1.0", 3, argv);
	stream_put_model(w, "dir/m.onnx", "abc", 13);
	stream_put_header(w, "# a comment");
	xsum_init(&xs);
	xsum_add(&xs, 1);
	xsum_add(&xs, 1e-30);
	stream_rec_start(w, "stat", "conv 1/out=x");
	stream_put_float(w, "f", 0.1f);
	stream_put_double(w, "d", 0.1);
	stream_put_int(w, "i", -42);
	stream_put_uint(w, "u", UINT64_MAX);
	stream_put_name(w, "name", "a,b");
	stream_put_names(w, "names", names, 4);
	stream_put_floats(w, "fl", fl, 3);
	stream_put_ints(w, "il", il, 3);
	stream_put_shape(w, "shape", 3, dims);
	stream_put_shape(w, "scalar", 0, NULL);
	stream_put_xsum(w, "xs", &xs);
	stream_put_names(w, "none", NULL, 0);
	stream_rec_done(w);
	CHECK_EQ_INT(stream_nrecords(w), 1);
	stream_rec_start(w, "other", "y");
	stream_rec_done(w);
	CHECK_EQ_INT(stream_write_end(w, &e), 0);
	stream_writer_free(w);
	fclose(fp);
	CHECK_EQ_STR(buf, "#onnxq\t1.0\n#prog\tprog\t1.0\tprog%20-o%20a%20file\n"
	    "#model\tdir/m.onnx\tsha256=abc\topset=13\n# a comment\n"
	    "stat\tconv%201/out%3Dx\tf=0.1\td=0.1\ti=-42\t"
	    "u=18446744073709551615\tname=a%2Cb\tnames=x%20y,,,b%2Cc\t"
	    "fl=1.5,-0,1.4013e-45\til=-3,0,9223372036854775807\t"
	    "shape=1x?x224\tscalar=scalar\txs=1:1e-30\t"
	    "none=\nother\ty\nend\t2\n");

	fp = fmemopen(buf, len, "r");
	REQUIRE(fp != NULL);
	r = stream_reader_new(fp, "mem", &e);
	REQUIRE(r != NULL);
	CHECK_EQ_INT(stream_minor(r), 0);
	CHECK_EQ_INT(stream_next(r, &e), STREAM_HEADER);
	CHECK_EQ_STR(stream_header_field(r, 0), "#prog");
	CHECK_EQ_STR(stream_header_field(r, 3), "prog%20-o%20a%20file");
	CHECK(stream_header_field(r, 4) == NULL);
	CHECK_EQ_INT(stream_next(r, &e), STREAM_HEADER);
	CHECK_EQ_STR(stream_header(r), "#model\tdir/m.onnx\tsha256=abc\topset=13");
	CHECK_EQ_INT(stream_next(r, &e), STREAM_HEADER);
	CHECK_EQ_STR(stream_header_field(r, 0), "# a comment");
	REQUIRE(stream_next(r, &e) == STREAM_RECORD);
	rec = stream_record(r);
	CHECK_EQ_INT(stream_lineno(r), 5);
	CHECK_EQ_STR(rec->type, "stat");
	CHECK_EQ_STR(rec->subject, "conv 1/out=x");
	CHECK_EQ_INT(rec->nkv, 12);
	CHECK(stream_rec_float(rec, "f", &f, &e) == 0 && f == 0.1f);
	CHECK(stream_rec_double(rec, "d", &d, &e) == 0 && d == 0.1);
	CHECK(stream_rec_int(rec, "i", &i, &e) == 0 && i == -42);
	CHECK(stream_rec_uint(rec, "u", &u, &e) == 0 && u == UINT64_MAX);
	CHECK_EQ_INT(stream_rec_uint(rec, "i", &u, &e), -1);
	CHECK_EQ_STR(e.msg, "mem:5: key i: bad count '-42'");
	REQUIRE(stream_rec_name(rec, "name", &s, &e) == 0);
	CHECK_EQ_STR(s, "a,b");
	free(s);
	REQUIRE(stream_rec_names(rec, "names", &nv, &n, &e) == 0);
	REQUIRE(n == 4);
	CHECK_EQ_STR(nv[0], "x y");
	CHECK_EQ_STR(nv[1], "");
	CHECK_EQ_STR(nv[2], "");
	CHECK_EQ_STR(nv[3], "b,c");
	free(nv);
	REQUIRE(stream_rec_names(rec, "none", &nv, &n, &e) == 0);
	CHECK_EQ_INT(n, 0);
	free(nv);
	REQUIRE(stream_rec_floats(rec, "fl", &fv, &n, &e) == 0);
	CHECK(n == 3 && memcmp(fv, fl, sizeof fl) == 0);
	free(fv);
	REQUIRE(stream_rec_ints(rec, "il", &iv, &n, &e) == 0);
	CHECK(n == 3 && memcmp(iv, il, sizeof il) == 0);
	free(iv);
	REQUIRE(stream_rec_shape(rec, "shape", &rank, sd, &e) == 0);
	CHECK(rank == 3 && sd[0] == 1 && sd[1] == -1 && sd[2] == 224);
	REQUIRE(stream_rec_shape(rec, "scalar", &rank, sd, &e) == 0);
	CHECK_EQ_INT(rank, 0);
	REQUIRE(stream_rec_xsum(rec, "xs", &xb, &e) == 0);
	CHECK_EQ_INT(xsum_cmp(&xs, &xb), 0);
	CHECK_EQ_INT(stream_rec_float(rec, "nokey", &f, &e), -1);
	CHECK_EQ_STR(e.msg, "mem:5: key nokey: missing in stat record");
	CHECK(!stream_rec_has(rec, "nokey") && stream_rec_has(rec, "none"));
	/* a copy outlives the reader's next line */
	REQUIRE((dup = stream_rec_dup(rec, &e)) != NULL);
	REQUIRE((lean = stream_rec_dup_lean(rec, &e)) != NULL);
	CHECK_EQ_INT(stream_next(r, &e), STREAM_RECORD);
	CHECK_EQ_STR(stream_record(r)->type, "other");
	CHECK_EQ_STR(dup->subject, "conv 1/out=x");
	CHECK_EQ_STR(dup->file, "mem");
	CHECK_EQ_INT(dup->line, 5);
	CHECK(stream_rec_float(dup, "f", &f, &e) == 0 && f == 0.1f);
	CHECK_EQ_STR(stream_rec_get(dup, "none"), "");
	CHECK(strncmp(dup->raw, "stat\tconv%201/out%3Dx\tf=0.1\t", 28) == 0);
	/* a lean copy: the line, type and subject; split again, the same */
	CHECK_EQ_STR(lean->type, "stat");
	CHECK_EQ_STR(lean->subject, "conv 1/out=x");
	CHECK(lean->nkv == 0 && stream_rec_get(lean, "f") == NULL);
	CHECK(lean->rawlen == dup->rawlen &&
	    strcmp(lean->raw, dup->raw) == 0);
	REQUIRE((again = stream_rec_reparse(lean, &e)) != NULL);
	CHECK_EQ_STR(again->subject, dup->subject);
	CHECK_EQ_STR(again->file, "mem");
	CHECK_EQ_INT(again->line, 5);
	REQUIRE(again->nkv == dup->nkv);
	for (size_t i = 0; i < dup->nkv; i++) {
		CHECK_EQ_STR(again->kv[i].key, dup->kv[i].key);
		CHECK_EQ_STR(again->kv[i].val, dup->kv[i].val);
	}
	CHECK(stream_rec_float(again, "f", &f, &e) == 0 && f == 0.1f);
	stream_rec_free(again);
	stream_rec_free(lean);
	stream_rec_free(dup);
	CHECK_EQ_INT(stream_next(r, &e), STREAM_EOF);
	CHECK_EQ_INT(stream_next(r, &e), STREAM_EOF);
	stream_reader_free(r);
	fclose(fp);
	free(buf);
}

/*
 * stream_rec_dup_placed(): from a regular file, a copy that holds no
 * line; split again and written, the records are the lines read, byte
 * for byte, after the reader is gone; a file changed since is an error.
 * From other input (fmemopen: no descriptor), a lean copy.
 */
static void
test_placed(void)
{
	static const char in[] = "#onnxq\t1.0\n#model\tm.onnx\n"
	    "hist\ta%20b\tmbits=7\tbins=-1:58,0.5:86\n"
	    "stat\tc\tf=0.25\n"
	    "hist\tc\tmbits=3\tzero=2\tbins=1:1\nend\t3\n";
	char path[] = "/tmp/stream_test.XXXXXX", *out = NULL;
	struct stream_rec *pl[2], *again, *lean;
	struct stream_reader *r;
	struct stream_writer *w;
	size_t len = 0;
	FILE *fp, *of;
	struct err e;
	int fd, n = 0, got;

	REQUIRE((fd = mkstemp(path)) >= 0);
	REQUIRE(write(fd, in, sizeof in - 1) == (ssize_t)(sizeof in - 1));
	REQUIRE((fp = fdopen(fd, "r")) != NULL);
	rewind(fp);
	REQUIRE((r = stream_reader_new(fp, path, &e)) != NULL);
	while ((got = stream_next(r, &e)) > 0)
		if (got == STREAM_RECORD && strcmp(stream_record(r)->type,
		    "hist") == 0 && n < 2)
			REQUIRE((pl[n++] = stream_rec_dup_placed(r, &e)) !=
			    NULL);
	REQUIRE(got == 0 && n == 2);
	stream_reader_free(r);
	fclose(fp);
	/* no line held: raw is empty */
	CHECK(pl[0]->raw[0] == '\0' && pl[0]->rawlen == 36);
	CHECK_EQ_STR(pl[0]->subject, "a b");
	CHECK_EQ_INT(pl[1]->line, 5);
	REQUIRE((again = stream_rec_reparse(pl[0], &e)) != NULL);
	CHECK_EQ_STR(again->raw, "hist\ta%20b\tmbits=7\tbins=-1:58,0.5:86");
	CHECK_EQ_STR(stream_rec_get(again, "bins"), "-1:58,0.5:86");
	stream_rec_free(again);
	REQUIRE((again = stream_rec_dup(pl[1], &e)) != NULL);
	CHECK_EQ_STR(stream_rec_get(again, "zero"), "2");
	stream_rec_free(again);
	/* a lean copy of a placed record holds its line, read back */
	REQUIRE((again = stream_rec_dup_lean(pl[1], &e)) != NULL);
	CHECK_EQ_STR(again->raw, "hist\tc\tmbits=3\tzero=2\tbins=1:1");
	stream_rec_free(again);
	REQUIRE((of = open_memstream(&out, &len)) != NULL);
	REQUIRE((w = stream_writer_new(of, "out")) != NULL);
	stream_put_rec(w, pl[1]);
	stream_put_rec(w, pl[0]);
	CHECK_EQ_INT(stream_write_end(w, &e), 0);
	stream_writer_free(w);
	fclose(of);
	CHECK_EQ_STR(out, "#onnxq\t1.0\nhist\tc\tmbits=3\tzero=2\t"
	    "bins=1:1\nhist\ta%20b\tmbits=7\tbins=-1:58,0.5:86\nend\t2\n");
	free(out);
	/* one byte changed (or the file cut short): not read as it was */
	REQUIRE((fp = fopen(path, "r+")) != NULL);
	REQUIRE(fseek(fp, 40, SEEK_SET) == 0 && fputc('9', fp) != EOF);
	fclose(fp);
	CHECK(stream_rec_reparse(pl[0], &e) == NULL);
	CHECK(strstr(e.msg, "changed since it was read") != NULL);
	out = NULL;
	REQUIRE((of = open_memstream(&out, &len)) != NULL);
	REQUIRE((w = stream_writer_new(of, "out")) != NULL);
	stream_put_rec(w, pl[0]);
	CHECK_EQ_INT(stream_write_end(w, &e), -1);
	stream_writer_free(w);
	fclose(of);
	free(out);
	REQUIRE(truncate(path, 60) == 0);
	CHECK(stream_rec_reparse(pl[1], &e) == NULL);
	stream_rec_free(pl[0]);
	stream_rec_free(pl[1]);
	unlink(path);
	/* no file to read again: the line is kept */
	REQUIRE((fp = fmemopen((void *)in, sizeof in - 1, "r")) != NULL);
	REQUIRE((r = stream_reader_new(fp, "mem", &e)) != NULL);
	REQUIRE(stream_next(r, &e) == STREAM_HEADER);
	REQUIRE(stream_next(r, &e) == STREAM_RECORD);
	REQUIRE((lean = stream_rec_dup_placed(r, &e)) != NULL);
	stream_reader_free(r);
	fclose(fp);
	CHECK_EQ_STR(lean->raw, "hist\ta%20b\tmbits=7\tbins=-1:58,0.5:86");
	stream_rec_free(lean);
}

static void
test_getter_errors(void)
{
	static const char in[] = "#onnxq\t1.0\n"
	    "stat\tx\tf=1.5x\tl=1,,2\tn=%41\tsh=1x0x\tbig=2x2x2x2x2x2x2x2x2x2x2x2x2"
	    "\tq=?x?\tx=1:\tu=-1\tnm=a%zz,b\n"
	    "end\t1\n";
	FILE *fp = fmemopen((void *)in, sizeof in - 1, "r");
	struct stream_reader *r;
	const struct stream_rec *rec;
	struct err e;
	float f, *fv;
	int64_t iv[TENSOR_MAX_RANK];
	uint64_t u;
	struct xsum x;
	char **nv;
	size_t n;
	int rank;

	REQUIRE(fp != NULL);
	REQUIRE((r = stream_reader_new(fp, "g", &e)) != NULL);
	REQUIRE(stream_next(r, &e) == STREAM_RECORD);
	rec = stream_record(r);
	CHECK_EQ_INT(stream_rec_float(rec, "f", &f, &e), -1);
	CHECK_EQ_STR(e.msg, "g:2: key f: bad float '1.5x'");
	CHECK_EQ_INT(stream_rec_floats(rec, "l", &fv, &n, &e), -1);
	CHECK_EQ_STR(e.msg, "g:2: key l: element 2: bad float ''");
	CHECK(fv == NULL && n == 0);
	CHECK_EQ_INT(stream_rec_shape(rec, "sh", &rank, iv, &e), -1);
	CHECK_EQ_STR(e.msg, "g:2: key sh: bad shape '1x0x'");
	CHECK_EQ_INT(stream_rec_shape(rec, "big", &rank, iv, &e), -1);
	CHECK(strstr(e.msg, "rank above 12") != NULL);
	CHECK(stream_rec_shape(rec, "q", &rank, iv, &e) == 0 && rank == 2 &&
	    iv[0] == -1);
	CHECK_EQ_INT(stream_rec_xsum(rec, "x", &x, &e), -1);
	CHECK_EQ_STR(e.msg, "g:2: key x: bad exact sum '1:'");
	CHECK_EQ_INT(stream_rec_uint(rec, "u", &u, &e), -1);
	CHECK_EQ_INT(stream_rec_names(rec, "nm", &nv, &n, &e), -1);
	CHECK_EQ_STR(e.msg, "g:2: key nm: element 1: bad escape '%zz'");
	CHECK_EQ_INT(stream_rec_err(rec, &e, "stat %s: odd", rec->subject), -1);
	CHECK_EQ_STR(e.msg, "g:2: stat x: odd");
	CHECK_EQ_INT(stream_next(r, &e), STREAM_EOF);
	stream_reader_free(r);
	fclose(fp);
}

/* Unknown record types and keys survive a read/write pass byte for byte. */
static void
test_pass_through(void)
{
	static const char in[] = "#onnxq\t1.3\n#prog\ta\t1\ta\n#future\tx=1\n"
	    "stat\tt\tmin=1\tzzz=%20q\tmax=2\tyyy=\n"
	    "newtype\tweird%2Cname\tk=1,2,3\n"
	    "end\t2\n";
	static const char want[] = "#onnxq\t1.0\n#prog\ta\t1\ta\n#future\tx=1\n"
	    "#prog\tb\t2\tb\n"
	    "stat\tt\tmin=1\tmax=2\tzzz=%20q\tyyy=\n"
	    "newtype\tweird%2Cname\tk=1,2,3\n"
	    "end\t2\n";
	static const char *const known[] = { "min", "max", NULL };
	FILE *in_fp = fmemopen((void *)in, sizeof in - 1, "r"), *out;
	char *buf = NULL, *argv[] = { "b" };
	size_t len = 0;
	struct stream_reader *r;
	struct stream_writer *w;
	struct err e;
	int got, headers_done = 0;

	REQUIRE(in_fp != NULL);
	REQUIRE((out = open_memstream(&buf, &len)) != NULL);
	REQUIRE((r = stream_reader_new(in_fp, "p", &e)) != NULL);
	CHECK_EQ_INT(stream_minor(r), 3);
	w = stream_writer_new(out, "out");
	while ((got = stream_next(r, &e)) > 0) {
		const struct stream_rec *rec = stream_record(r);

		if (got == STREAM_HEADER) {
			stream_put_header(w, stream_header(r));
			continue;
		}
		if (!headers_done++)
			stream_put_prog(w, "b", "2", 1, argv);
		if (strcmp(rec->type, "stat") == 0) {
			stream_rec_start(w, rec->type, rec->subject);
			stream_put_raw(w, "min", stream_rec_get(rec, "min"));
			stream_put_raw(w, "max", stream_rec_get(rec, "max"));
			stream_put_unknown(w, rec, known);
			stream_rec_done(w);
		} else
			stream_put_rec(w, rec);
	}
	CHECK_EQ_INT(got, 0);
	CHECK_EQ_INT(stream_write_end(w, &e), 0);
	stream_writer_free(w);
	stream_reader_free(r);
	fclose(in_fp);
	fclose(out);
	CHECK_EQ_STR(buf, want);
	free(buf);
}

struct bad_case {
	const char *in;
	size_t len;		/* 0: strlen */
	const char *msg;
};

#define S "#onnxq\t1.0\n"

static void
test_damaged_input(void)
{
	static const struct bad_case cases[] = {
		{ "", 0, "t:1: empty input (not an onnxq stream)" },
		{ "hello\n", 0, "t:1: not an onnxq stream (no #onnxq line)" },
		{ "#onnxq\n", 0, "t:1: not an onnxq stream (no #onnxq line)" },
		{ "#onnxq\t2.0\nend\t0\n", 0,
		    "t:1: unsupported stream version 2.0 (this reads 1.x)" },
		{ "#onnxq\t0.9\n", 0,
		    "t:1: unsupported stream version 0.9 (this reads 1.x)" },
		{ "#onnxq\tx\n", 0, "t:1: bad stream version 'x'" },
		{ "#onnxq\t1\n", 0, "t:1: bad stream version '1'" },
		{ "#onnxq\t1.0\r\nend\t0\r\n", 0, "t:1: carriage return in "
		    "line (CRLF line ends are not allowed)" },
		{ S, 0, "t:2: end of input before the end record (truncated "
		    "stream?)" },
		{ S "a\tx\tk=1\n", 0, "t:3: end of input before the end record "
		    "(truncated stream?)" },
		{ S "a\tx\tk=1\nend\t2\n", 0, "t:3: end record says 2 records, "
		    "stream has 1 (truncated or edited)" },
		{ S "a\tx\tk=1\nend\t1", 0,
		    "t:3: no newline at end of input (truncated stream?)" },
		{ S "a\tx\tk=1\nen", 0,
		    "t:3: no newline at end of input (truncated stream?)" },
		{ S "end\t0\nend\t0\n", 0, "t:3: data after the end record" },
		{ S "end\t0\n\n", 0, "t:3: data after the end record" },
		{ S "end\tx\n", 0, "t:2: end record: bad count 'x'" },
		{ S "end\t-1\n", 0, "t:2: end record: bad count '-1'" },
		{ S "end\t0\tz=1\n", 0, "t:2: end record has extra fields" },
		{ S "a\tx%G1\nend\t1\n", 0,
		    "t:2: a record: subject: bad escape '%G1'" },
		{ S "a\tx%\nend\t1\n", 0, "t:2: a record: subject: bad escape "
		    "'%' (% needs two hex digits)" },
		{ S "a\t%00\nend\t1\n", 0, "t:2: a record: subject: escaped "
		    "NUL byte '%00' not allowed" },
		{ S "a\tx\tk=1\tk=2\nend\t1\n", 0,
		    "t:2: a x: duplicate key 'k'" },
		{ S "a\tx\tk0=0\tk1=1\tk2=2\tk3=3\tk4=4\tk5=5\tk6=6\tk7=7\tk8=8"
		    "\tk9=9\tk10=0\tk11=1\tk12=2\tk13=3\tk14=4\tk15=5\tk16=6"
		    "\tk7=7\nend\t1\n", 0, "t:2: a x: duplicate key 'k7'" },
		{ S "a\tx\tk=1\0\nend\t1\n", sizeof(S "a\tx\tk=1\0\nend\t1\n") - 1,
		    "t:2: NUL byte in line" },
		{ S "# comment \0\nend\t0\n",
		    sizeof(S "# comment \0\nend\t0\n") - 1,
		    "t:2: NUL byte in line" },
		{ S "a\tx\tk=1\r\nend\t1\n", 0, "t:2: carriage return in line "
		    "(CRLF line ends are not allowed)" },
		{ S "a\tx\tk=1\nend\t1\r\n", 0, "t:3: carriage return in line "
		    "(CRLF line ends are not allowed)" },
		{ S "a\tx y\nend\t1\n", 0, "t:2: space in record (fields are "
		    "separated by one TAB; names escape spaces as %20)" },
		{ S "a\tx\tk=\x01\nend\t1\n", 0,
		    "t:2: control character 0x01 in line" },
		{ S "a\tx\tk=\x7f\nend\t1\n", 0,
		    "t:2: control character 0x7F in line" },
		{ S "\nend\t0\n", 0, "t:2: empty line" },
		{ S "a\tx\n#late\nend\t1\n", 0,
		    "t:3: header line after the first record" },
		{ S "#onnxq\t1.0\nend\t0\n", 0,
		    "t:2: second #onnxq line (concatenated streams?)" },
		{ S "a\nend\t1\n", 0, "t:2: record 'a' has no subject" },
		{ S "a\t\nend\t1\n", 0, "t:2: a record: empty subject" },
		{ S "a-b\tx\nend\t1\n", 0, "t:2: bad record type 'a-b'" },
		{ S "\tx\nend\t1\n", 0, "t:2: bad record type ''" },
		{ S "a\tx\tk=1\t\nend\t1\n", 0,
		    "t:2: a x: empty field (two TABs in a row?)" },
		{ S "a\tx\t\tk=1\nend\t1\n", 0,
		    "t:2: a x: empty field (two TABs in a row?)" },
		{ S "a\tx\tk\nend\t1\n", 0,
		    "t:2: a x: field 'k' is not key=value" },
		{ S "a\tx\t=1\nend\t1\n", 0, "t:2: a x: bad key ''" },
		{ S "a\tx\tk.y=1\nend\t1\n", 0, "t:2: a x: bad key 'k.y'" },
	};
	struct err e;

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct bad_case *c = &cases[i];

		e.msg[0] = '\0';
		CHECK_EQ_INT(read_mem(c->in, c->len ? c->len : strlen(c->in), 0,
		    &e), -1);
		CHECK_EQ_STR(e.msg, c->msg);
	}
	/* the good ones next to them */
	CHECK_EQ_INT(read_str(S "end\t0\n", &e), 0);
	CHECK_EQ_INT(read_str("#onnxq\t1.7\textra\n# c\n#x\ty\na\tx\tk=\nend\t1\n",
	    &e), 0);
}

/*
 * Each byte a record may not hold, at every place of a long line (the
 * reader checks eight bytes at a time where it can); UTF-8 and TABs
 * everywhere pass.
 */
static void
test_bad_byte_anywhere(void)
{
	static const unsigned char bad[] = { 0x00, 0x01, 0x0d, 0x1f, 0x20,
	    0x7f };
	static const char head[] = "#onnxq\t1.0\n", tail[] = "\nend\t1\n";
	char line[64], buf[128];
	struct err e;

	for (size_t k = 0; k < sizeof bad; k++)
		for (size_t at = 5; at < 40; at++) {
			size_t n;

			memcpy(line, "a\tx\tk=", 6);
			for (size_t j = 6; j < 40; j++)
				line[j] = j % 7 == 0 ? '\xc3' : j % 7 == 1 ?
				    '\xa9' : (char)('0' + j % 10);
			line[at] = (char)bad[k];
			/* by length: the bad byte may be a NUL */
			n = strlen(head);
			memcpy(buf, head, n);
			memcpy(buf + n, line, 40);
			memcpy(buf + n + 40, tail, strlen(tail));
			n += 40 + strlen(tail);
			CHECK_EQ_INT(read_mem(buf, n, 0, &e), -1);
		}
	memcpy(line, "a\tx\tk=", 6);
	for (size_t j = 6; j < 40; j++)
		line[j] = j % 9 == 0 ? '\t' : j % 9 == 1 ? 'k' : j % 9 == 2 ?
		    (char)('a' + j % 26) : j % 9 == 3 ? '=' : j % 5 ? '\xe2' :
		    '7';
	snprintf(buf, sizeof buf, "%s%.40s%s", head, line, tail);
	CHECK_EQ_INT(read_mem(buf, strlen(buf), 0, &e), 0);
}

static void
test_long_lines(void)
{
	char *s;
	size_t n = 1000;
	struct err e;
	FILE *fp;
	struct stream_reader *r;

	/* a lowered bound */
	REQUIRE((s = malloc(n + 64)) != NULL);
	strcpy(s, S "a\tx\tk=");
	memset(s + strlen(s), '7', 200);
	strcpy(s + strlen(S "a\tx\tk=") + 200, "\nend\t1\n");
	CHECK_EQ_INT(read_mem(s, strlen(s), 100, &e), -1);
	CHECK_EQ_STR(e.msg, "t:2: line longer than 100 bytes");
	CHECK_EQ_INT(read_mem(s, strlen(s), 300, &e), 0);
	free(s);

	/* the real 64 MiB bound, through a file */
	REQUIRE((fp = tmpfile()) != NULL);
	fputs(S "a\tx\tk=", fp);
	{
		static char chunk[1 << 16];

		memset(chunk, '1', sizeof chunk);
		for (size_t k = 0; k <= STREAM_LINE_MAX / sizeof chunk; k++)
			fwrite(chunk, 1, sizeof chunk, fp);
	}
	fputs("\nend\t1\n", fp);
	rewind(fp);
	REQUIRE((r = stream_reader_new(fp, "big", &e)) != NULL);
	CHECK_EQ_INT(stream_next(r, &e), -1);
	CHECK_EQ_STR(e.msg, "big:2: line longer than 67108864 bytes");
	/* and the error sticks */
	e.msg[0] = '\0';
	CHECK_EQ_INT(stream_next(r, &e), -1);
	CHECK_EQ_STR(e.msg, "big:2: line longer than 67108864 bytes");
	stream_reader_free(r);
	fclose(fp);
}

static void
test_writer_errors(void)
{
	static const struct {
		int kind;
		const char *msg;
	} cases[] = {
		{ 0, "w: bad key 'a b'" },
		{ 1, "w: r record with an empty subject" },
		{ 2, "w: header line after records" },
		{ 3, "w: bad record type 'end'" },
		{ 4, "w: bad header line 'no hash'" },
		{ 5, "w: unfinished record at the end" },
	};
	struct err e;

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *fp = open_memstream(&buf, &len);
		struct stream_writer *w = stream_writer_new(fp, "w");

		switch (cases[i].kind) {
		case 0:
			stream_rec_start(w, "r", "x");
			stream_put_int(w, "a b", 1);
			stream_rec_done(w);
			break;
		case 1:
			stream_rec_start(w, "r", "");
			stream_rec_done(w);
			break;
		case 2:
			stream_rec_start(w, "r", "x");
			stream_rec_done(w);
			stream_put_header(w, "# late");
			break;
		case 3:
			stream_rec_start(w, "end", "x");
			break;
		case 4:
			stream_put_header(w, "no hash");
			break;
		case 5:
			stream_rec_start(w, "r", "x");
			break;
		}
		CHECK_EQ_INT(stream_write_end(w, &e), -1);
		CHECK_EQ_STR(e.msg, cases[i].msg);
		stream_writer_free(w);
		fclose(fp);
		free(buf);
	}
	/* a write error (a full device) is reported at the end */
	{
		FILE *fp = fopen("/dev/full", "w");
		struct stream_writer *w;

		if (fp) {
			w = stream_writer_new(fp, "/dev/full");
			stream_rec_start(w, "r", "x");
			stream_rec_done(w);
			CHECK_EQ_INT(stream_write_end(w, &e), -1);
			CHECK(strstr(e.msg, "/dev/full: write error") != NULL);
			stream_writer_free(w);
			fclose(fp);
		}
	}
}

/* A stream with a record of every kind the library reads. */
static char *
sample_stream(size_t *len)
{
	static float x[300];
	char *buf = NULL;
	FILE *fp = open_memstream(&buf, len);
	struct stream_writer *w = stream_writer_new(fp, "mem");
	const char *names[] = { "a b", "", "c" };
	struct tstats ts;
	struct err e;

	for (int i = 0; i < 300; i++)
		x[i] = i % 17 == 0 ? NAN : (float)((i % 31) - 12) / 7;
	stream_put_prog(w, "p", "1", 0, NULL);
	stream_rec_start(w, "node", "n 0");
	stream_put_raw(w, "op", "Conv");
	stream_put_names(w, "in", names, 3);
	stream_rec_done(w);
	tstats_init(&ts, 3, &e);
	tstats_add_batch(&ts, x, 300, &e);
	tstats_add_batch(&ts, x + 7, 100, &e);
	tstats_write(&ts, "t,1", w, 1, &e);
	tstats_release(&ts);
	stream_write_end(w, &e);
	stream_writer_free(w);
	fclose(fp);
	return buf;
}

/*
 * Read a stream the way the programs do, records through the typed
 * getters; 0 at a good end, -1 with e set.
 */
static int
read_deep(const char *s, size_t n, struct err *e)
{
	FILE *fp = fmemopen((void *)s, n, "r");
	struct stream_reader *r;
	int got, rc = 0;

	if (!(r = stream_reader_new(fp, "t", e))) {
		fclose(fp);
		return -1;
	}
	while (rc == 0 && (got = stream_next(r, e)) > 0) {
		const struct stream_rec *rec = stream_record(r);
		struct tstats ts;
		char **nv;
		size_t nn;

		if (got != STREAM_RECORD)
			continue;
		tstats_init(&ts, -1, e);
		if (strcmp(rec->type, "stat") == 0)
			rc = tstats_read_stat(&ts, rec, e);
		else if (strcmp(rec->type, "hist") == 0)
			rc = tstats_read_hist(&ts, rec, e);
		else if (strcmp(rec->type, "node") == 0 &&
		    (rc = stream_rec_names(rec, "in", &nv, &nn, e)) == 0)
			free(nv);
		tstats_release(&ts);
	}
	if (rc == 0 && got < 0)
		rc = -1;
	stream_reader_free(r);
	fclose(fp);
	return rc;
}

static void
test_every_truncation(void)
{
	size_t len;
	char *s = sample_stream(&len);
	struct err e;
	int bad = 0;

	REQUIRE(s != NULL);
	CHECK_EQ_INT(read_deep(s, len, &e), 0);
	for (size_t n = 0; n < len; n++) {
		e.msg[0] = '\0';
		if (read_deep(s, n, &e) != -1 || strncmp(e.msg, "t:", 2) != 0) {
			if (bad++ < 3)
				CHECK_EQ_STR(e.msg, "t:...");
		}
	}
	CHECK_EQ_INT(bad, 0);
	free(s);
}

/* Damaged bytes: read or rejected with "t:LINE: ...", never a crash. */
static void
test_random_damage(void)
{
	static const char pick[] = "\t\n\r %,=:x0123456789.-e?";
	size_t len;
	char *s = sample_stream(&len), *d;
	struct err e;
	int rejected = 0, bad = 0;

	REQUIRE(s != NULL);
	REQUIRE((d = malloc(len)) != NULL);
	for (int i = 0; i < 20000; i++) {
		int nd = 1 + (int)(unit_rand64() % 4);

		memcpy(d, s, len);
		for (int k = 0; k < nd; k++) {
			size_t p = unit_rand64() % len;
			uint64_t r = unit_rand64();

			d[p] = r % 3 ? pick[r % (sizeof pick - 1)] :
			    (r % 5 == 0 ? '\0' : (char)(r >> 8));
		}
		e.msg[0] = '\0';
		if (read_deep(d, len, &e) < 0) {
			rejected++;
			if (strncmp(e.msg, "t:", 2) != 0 && bad++ < 3)
				CHECK_EQ_STR(e.msg, "t:...");
		}
	}
	CHECK_EQ_INT(bad, 0);
	/* most damage is caught */
	CHECK(rejected > 15000);
	free(d);
	free(s);
}

UNIT_MAIN(test_every_truncation, test_random_damage, test_float_round_trip, test_double_round_trip, test_parse_numbers,
    test_escape, test_write_read, test_getter_errors, test_pass_through,
    test_damaged_input, test_long_lines, test_writer_errors,
    test_bad_byte_anywhere, test_placed)
