/*
 * model_test: lib/model.c: tensors of every type in and out of
 * TensorProtos, malformed tensors and models, packing (and unpacking
 * our own bytes), opsets.
 * Needs test/data/models/dtypes.onnx and small.onnx (run from the top of
 * the source tree, as make check does).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "sha256.h"
#include "unit.h"

#define DTYPES "test/data/models/dtypes.onnx"
#define SMALL "test/data/models/small.onnx"

static const Onnx__TensorProto *
find_init(const struct model *m, const char *name)
{
	size_t i;

	for (i = 0; i < m->proto->graph->n_initializer; i++)
		if (strcmp(m->proto->graph->initializer[i]->name, name) == 0)
			return m->proto->graph->initializer[i];
	return NULL;
}

/* Read initializer NAME_typed and NAME_raw and check both hold want. */
static void
check_pair(const struct model *m, const char *name, int dtype,
    const void *want, int64_t n)
{
	static const char *const enc[] = { "typed", "raw" };
	struct tensor t = { 0 };
	struct err e;
	char full[64];
	int i;

	for (i = 0; i < 2; i++) {
		snprintf(full, sizeof full, "%s_%s", name, enc[i]);
		const Onnx__TensorProto *tp = find_init(m, full);

		if (!CHECK(tp != NULL))
			continue;
		if (!CHECK(model_tensor_read(m, tp, &t, &e) == 0)) {
			CHECK_EQ_STR(e.msg, "");
			continue;
		}
		CHECK_EQ_INT(t.dtype, dtype);
		CHECK_EQ_INT(t.rank, 1);
		CHECK_EQ_INT(t.nelem, n);
		if (!CHECK(memcmp(t.data, want, (size_t)n * dtype_size(dtype)) == 0))
			CHECK_EQ_STR(full, "values differ");
		tensor_release(&t);
	}
}

static void
test_dtypes_fixture(void)
{
	struct model *m;
	struct err e;
	struct tensor t = { 0 };
	const float f32[] = { 1.5f, -2.0f, 3.25f };
	const double f64[] = { 1.5, -2.0, 1e300 };
	const int8_t i8[] = { -128, 0, 127 };
	const uint8_t u8[] = { 0, 200, 255 };
	const int16_t i16[] = { -32768, 1, 32767 };
	const uint16_t u16[] = { 0, 40000, 65535 };
	const int32_t i32[] = { INT32_MIN, 5, INT32_MAX };
	const int64_t i64[] = { -((int64_t)1 << 62), 6, (int64_t)1 << 62 };
	const uint32_t u32[] = { 0, 7, UINT32_MAX };
	const uint64_t u64[] = { 0, 8, UINT64_MAX };
	const uint8_t b[] = { 1, 0, 1 };
	const uint16_t f16[] = { 0x3c00, 0xc100, 0x7bff };
	const uint16_t bf16[] = { 0x3f80, 0xc020, 0x4049 };
	const int8_t i4[] = { -8, -1, 0, 7, 3 };
	const uint8_t u4[] = { 15, 0, 1, 8, 9 };

	m = model_load(DTYPES, &e);
	if (!CHECK(m != NULL)) {
		CHECK_EQ_STR(e.msg, "");
		return;
	}
	check_pair(m, "float", DT_FLOAT, f32, 3);
	check_pair(m, "double", DT_DOUBLE, f64, 3);
	check_pair(m, "int8", DT_INT8, i8, 3);
	check_pair(m, "uint8", DT_UINT8, u8, 3);
	check_pair(m, "int16", DT_INT16, i16, 3);
	check_pair(m, "uint16", DT_UINT16, u16, 3);
	check_pair(m, "int32", DT_INT32, i32, 3);
	check_pair(m, "int64", DT_INT64, i64, 3);
	check_pair(m, "uint32", DT_UINT32, u32, 3);
	check_pair(m, "uint64", DT_UINT64, u64, 3);
	check_pair(m, "bool", DT_BOOL, b, 3);
	check_pair(m, "float16", DT_FLOAT16, f16, 3);
	check_pair(m, "bfloat16", DT_BFLOAT16, bf16, 3);
	check_pair(m, "int4", DT_INT4, i4, 5);
	check_pair(m, "uint4", DT_UINT4, u4, 5);

	REQUIRE(model_tensor_read(m, find_init(m, "scalar"), &t, &e) == 0);
	CHECK_EQ_INT(t.rank, 0);
	CHECK_EQ_INT(t.nelem, 1);
	CHECK_NEAR(((float *)t.data)[0], 42.0, 0);
	tensor_release(&t);
	REQUIRE(model_tensor_read(m, find_init(m, "empty"), &t, &e) == 0);
	CHECK_EQ_INT(t.rank, 2);
	CHECK_EQ_INT(t.nelem, 0);
	tensor_release(&t);
	CHECK(model_tensor_read(m, find_init(m, "string"), &t, &e) == -1);
	CHECK_EQ_STR(e.msg, DTYPES ": initializer string: string tensors are "
	    "not supported");
	CHECK(t.data == NULL);
	model_free(m);
}

/* Write t into a fresh TensorProto, pack and unpack it, read it back. */
static void
check_write_read(const struct tensor *t)
{
	Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT, *back;
	struct tensor r = { 0 };
	struct err e;
	uint8_t *buf;
	size_t len;

	tp.name = "t";
	REQUIRE(model_tensor_write(&tp, t, &e) == 0);
	CHECK_EQ_STR(tp.name, "t");
	len = onnx__tensor_proto__get_packed_size(&tp);
	REQUIRE((buf = malloc(len + 1)) != NULL);
	onnx__tensor_proto__pack(&tp, buf);
	free(tp.dims);
	free(tp.raw_data.data);
	back = onnx__tensor_proto__unpack(NULL, len, buf);
	free(buf);
	REQUIRE(back != NULL);
	if (CHECK(model_tensor_read(NULL, back, &r, &e) == 0)) {
		CHECK_EQ_INT(r.dtype, t->dtype);
		CHECK_EQ_INT(r.rank, t->rank);
		CHECK_EQ_INT(r.nelem, t->nelem);
		CHECK(memcmp(r.data, t->data,
		    (size_t)t->nelem * dtype_size(t->dtype)) == 0);
	} else
		CHECK_EQ_STR(e.msg, "");
	tensor_release(&r);
	onnx__tensor_proto__free_unpacked(back, NULL);
}

static void
test_write_read_all_types(void)
{
	static const int types[] = { DT_FLOAT, DT_UINT8, DT_INT8, DT_UINT16,
	    DT_INT16, DT_INT32, DT_INT64, DT_BOOL, DT_FLOAT16, DT_DOUBLE,
	    DT_UINT32, DT_UINT64, DT_BFLOAT16, DT_UINT4, DT_INT4 };
	const int64_t dims[] = { 3, 5 };	/* odd count: a lone nibble */
	struct tensor t = { 0 };
	struct err e;
	size_t i, k, es;
	uint8_t *p;

	for (i = 0; i < sizeof types / sizeof types[0]; i++) {
		REQUIRE(tensor_alloc(&t, types[i], 2, dims, &e) == 0);
		es = dtype_size(types[i]);
		p = t.data;
		for (k = 0; k < (size_t)t.nelem * es; k++)
			p[k] = (uint8_t)(k * 37 + 11);
		if (types[i] == DT_BOOL)
			for (k = 0; k < (size_t)t.nelem; k++)
				p[k] &= 1;
		if (types[i] == DT_UINT4)
			for (k = 0; k < (size_t)t.nelem; k++)
				p[k] &= 0xf;
		if (types[i] == DT_INT4)	/* sign-extended nibbles */
			for (k = 0; k < (size_t)t.nelem; k++)
				p[k] = (uint8_t)((int8_t)(p[k] << 4) >> 4);
		check_write_read(&t);
		tensor_release(&t);
	}
}

static void
test_int4_packing(void)
{
	Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
	const int64_t dim = 3;
	struct tensor t = { 0 };
	struct err e;

	REQUIRE(tensor_alloc(&t, DT_INT4, 1, &dim, &e) == 0);
	((int8_t *)t.data)[0] = -8;
	((int8_t *)t.data)[1] = 7;
	((int8_t *)t.data)[2] = -1;
	REQUIRE(model_tensor_write(&tp, &t, &e) == 0);
	CHECK_EQ_INT(tp.raw_data.len, 2);
	CHECK_EQ_INT(tp.raw_data.data[0], 0x78);	/* low nibble first */
	CHECK_EQ_INT(tp.raw_data.data[1], 0x0f);
	free(tp.dims);
	free(tp.raw_data.data);
	tensor_release(&t);
}

/* model_tensor_write replaces typed fields and external data. */
static void
test_write_replaces(void)
{
	Onnx__TensorProto *tp;
	Onnx__StringStringEntryProto **ext;
	struct tensor t = { 0 }, r = { 0 };
	struct err e;
	const int64_t dim = 2;

	REQUIRE((tp = malloc(sizeof *tp)) != NULL);
	onnx__tensor_proto__init(tp);
	tp->name = strdup("w");
	tp->n_float_data = 3;
	tp->float_data = calloc(3, sizeof(float));
	ext = calloc(1, sizeof *ext);
	ext[0] = malloc(sizeof **ext);
	onnx__string_string_entry_proto__init(ext[0]);
	ext[0]->key = strdup("location");
	ext[0]->value = strdup("x.bin");
	tp->external_data = ext;
	tp->n_external_data = 1;
	tp->has_data_location = 1;
	tp->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
	REQUIRE(tensor_alloc(&t, DT_INT64, 1, &dim, &e) == 0);
	((int64_t *)t.data)[1] = -5;
	REQUIRE(model_tensor_write(tp, &t, &e) == 0);
	CHECK_EQ_INT(tp->n_float_data, 0);
	CHECK_EQ_INT(tp->n_external_data, 0);
	CHECK(!tp->has_data_location ||
	    tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__DEFAULT);
	CHECK_EQ_INT(tp->data_type, DT_INT64);
	REQUIRE(model_tensor_read(NULL, tp, &r, &e) == 0);
	CHECK_EQ_INT(((int64_t *)r.data)[1], -5);
	tensor_release(&r);
	tensor_release(&t);
	onnx__tensor_proto__free_unpacked(tp, NULL);
}

/* A TensorProto whose read must fail with msg (NULL: any message). */
static void
check_bad(Onnx__TensorProto *tp, const char *msg)
{
	struct tensor t = { 0 };
	struct err e;

	if (CHECK(model_tensor_read(NULL, tp, &t, &e) == -1) && msg != NULL)
		CHECK_EQ_STR(e.msg, msg);
	CHECK(t.data == NULL);
	tensor_release(&t);
}

static void
test_bad_tensors(void)
{
	Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
	Onnx__TensorProto__Segment seg = ONNX__TENSOR_PROTO__SEGMENT__INIT;
	Onnx__StringStringEntryProto loc = ONNX__STRING_STRING_ENTRY_PROTO__INIT;
	Onnx__StringStringEntryProto *locp = &loc;
	int64_t dims[13] = { 2, 3 };
	float vals[6] = { 0 };
	uint8_t raw[8] = { 0 };
	size_t i;

	tp.name = "w";
	tp.has_data_type = 1;
	tp.data_type = DT_FLOAT;
	tp.dims = dims;
	tp.n_dims = 2;
	tp.float_data = vals;
	tp.n_float_data = 5;
	check_bad(&tp, "tensor w: float_data has 5 values, shape needs 6");
	tp.n_float_data = 0;
	tp.has_raw_data = 1;
	tp.raw_data.data = raw;
	tp.raw_data.len = 8;
	check_bad(&tp, "tensor w: raw data has 8 bytes, 6 elements of float "
	    "need 24");
	dims[0] = -2;
	check_bad(&tp, NULL);	/* tensor.c words these */
	dims[0] = (int64_t)1 << 40;
	dims[1] = (int64_t)1 << 40;
	check_bad(&tp, NULL);
	dims[0] = 2;
	dims[1] = 3;
	for (i = 0; i < 13; i++)
		dims[i] = 1;
	tp.n_dims = 13;
	check_bad(&tp, "tensor w: rank 13 is more than 12");
	tp.n_dims = 1;
	tp.data_type = DT_STRING;
	check_bad(&tp, "tensor w: string tensors are not supported");
	tp.data_type = DT_COMPLEX64;
	check_bad(&tp, NULL);
	tp.has_data_type = 0;
	check_bad(&tp, "tensor w: no data type");
	tp.has_data_type = 1;
	tp.data_type = DT_FLOAT;
	tp.segment = &seg;
	check_bad(&tp, "tensor w: segmented tensors are not supported");
	tp.segment = NULL;
	/* external data with no model: no directory to read it from */
	loc.key = "location";
	loc.value = "w.bin";
	tp.external_data = &locp;
	tp.n_external_data = 1;
	tp.has_data_location = 1;
	tp.data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
	check_bad(&tp, "tensor w: external data w.bin: not allowed for a "
	    "model read from memory");
}

static void
test_model_errors(void)
{
	struct model *m;
	struct err e;
	const uint8_t garbage[] = { 0x3a, 0xff, 0xff, 0xff, 0xff, 0x0f };

	CHECK(model_load_mem("", 0, "empty", NULL, &e) == NULL);
	CHECK_EQ_STR(e.msg, "empty: not a valid ONNX model (no graph)");
	CHECK(model_load_mem(garbage, sizeof garbage, "g", NULL, &e) == NULL);
	CHECK_EQ_STR(e.msg, "g: not a valid ONNX model (protobuf parse "
	    "failed)");
	CHECK(model_load("test/data", &e) == NULL);
	CHECK_EQ_STR(e.msg, "test/data: is a directory");
	CHECK(model_load("test/data/no-such.onnx", &e) == NULL);
	CHECK_EQ_STR(e.msg, "test/data/no-such.onnx: No such file or directory");
	m = model_load(SMALL, &e);
	REQUIRE(m != NULL);
	CHECK_EQ_STR(m->path, SMALL);
	CHECK_EQ_STR(m->dir, "test/data/models");
	model_free(m);
}

/* model_load_hashed: the model, the hash of its bytes, and the bytes. */
static void
test_load_hashed(void)
{
	struct model *m;
	struct err e;
	char sha[65], want[65];
	void *bytes = NULL;
	size_t len = 0;

	CHECK(model_load_hashed("test/data/no-such.onnx", sha, &bytes, &len,
	    &e) == NULL);
	CHECK(bytes == NULL);
	m = model_load_hashed(SMALL, sha, &bytes, &len, &e);
	REQUIRE(m != NULL);
	REQUIRE(bytes != NULL);
	CHECK_EQ_STR(m->dir, "test/data/models");
	sha256_hex(bytes, len, want);
	CHECK_EQ_STR(sha, want);
	CHECK_EQ_INT(strlen(sha), 64);
	model_free(m);
	free(bytes);
	m = model_load_hashed(SMALL, NULL, NULL, NULL, &e);
	REQUIRE(m != NULL);
	model_free(m);
}

/* Small on disk, huge once unpacked: refused before protobuf-c runs. */
static void
test_unpack_budget(void)
{
	const size_t nodes = (size_t)8 << 20;	/* empty NodeProtos, 2 bytes each */
	size_t len = 2 * nodes + 6, i;
	uint8_t *buf;
	struct err e;

	REQUIRE((buf = malloc(len)) != NULL);
	buf[0] = 0x3a;		/* field 7 (graph), length-delimited */
	buf[1] = (uint8_t)(0x80 | ((2 * nodes) & 0x7f));
	buf[2] = (uint8_t)(0x80 | (((2 * nodes) >> 7) & 0x7f));
	buf[3] = (uint8_t)(0x80 | (((2 * nodes) >> 14) & 0x7f));
	buf[4] = (uint8_t)(((2 * nodes) >> 21) & 0x7f);
	for (i = 0; i < nodes; i++) {
		buf[5 + 2 * i] = 0x0a;	/* field 1 (node) */
		buf[6 + 2 * i] = 0x00;
	}
	len = 5 + 2 * nodes;
	CHECK(model_load_mem(buf, len, "bomb", NULL, &e) == NULL);
	CHECK(strncmp(e.msg, "bomb: not a valid ONNX model (unpacking would "
	    "take ", 49) == 0);
	/* a tenth of it is fine */
	buf[1] = (uint8_t)(0x80 | ((2 * (nodes / 10)) & 0x7f));
	buf[2] = (uint8_t)(0x80 | (((2 * (nodes / 10)) >> 7) & 0x7f));
	buf[3] = (uint8_t)(0x80 | (((2 * (nodes / 10)) >> 14) & 0x7f));
	buf[4] = (uint8_t)(((2 * (nodes / 10)) >> 21) & 0x7f);
	len = 5 + 2 * (nodes / 10);
	{
		struct model *m = model_load_mem(buf, len, "ok", NULL, &e);

		if (CHECK(m != NULL))
			CHECK_EQ_INT(m->proto->graph->n_node, nodes / 10);
		model_free(m);
	}
	free(buf);
}

static void
test_pack_and_opset(void)
{
	struct model *m, *m2;
	struct err e;
	void *buf;
	size_t len;
	FILE *fp;
	char *file;
	long flen;

	REQUIRE((m = model_load(SMALL, &e)) != NULL);
	CHECK_EQ_INT(model_opset(m, ""), 13);
	CHECK_EQ_INT(model_opset(m, "ai.onnx"), 13);
	CHECK_EQ_INT(model_opset(m, NULL), 13);
	CHECK_EQ_INT(model_opset(m, "com.microsoft"), 0);
	REQUIRE(model_pack(m, &buf, &len, &e) == 0);
	REQUIRE((fp = fopen(SMALL, "rb")) != NULL);
	fseek(fp, 0, SEEK_END);
	flen = ftell(fp);
	rewind(fp);
	file = malloc((size_t)flen);
	CHECK_EQ_INT(fread(file, 1, (size_t)flen, fp), flen);
	fclose(fp);
	CHECK_EQ_INT(len, flen);
	CHECK(memcmp(buf, file, len) == 0);
	m2 = model_load_mem(buf, len, "mem", NULL, &e);
	CHECK(m2 != NULL);
	CHECK(m2 != NULL && m2->dir == NULL);
	model_free(m2);
	/* bytes packed here unpack to the model as they do unchecked */
	m2 = model_unpack_own(buf, len, "own", "d", &e);
	REQUIRE(m2 != NULL);
	CHECK(m2->dir != NULL && strcmp(m2->dir, "d") == 0);
	free(file);
	REQUIRE(model_pack(m2, (void **)&file, &len, &e) == 0);
	CHECK_EQ_INT(len, flen);
	CHECK(memcmp(buf, file, len) == 0);
	model_free(m2);
	free(file);
	free(buf);
	model_free(m);
}

/* Saving with external data leaves the model in memory as it was. */
static void
test_save_keeps_model(void)
{
	struct model_save_opts opts = { 1, 16 };
	struct model *m, *back;
	struct err e;
	void *a, *b, *c;
	size_t alen, blen, clen;
	char dir[] = "/tmp/model_test.XXXXXX", path[64], cmd[96];

	REQUIRE(mkdtemp(dir) != NULL);
	snprintf(path, sizeof path, "%s/out.onnx", dir);
	REQUIRE((m = model_load(SMALL, &e)) != NULL);
	REQUIRE(model_pack(m, &a, &alen, &e) == 0);
	if (!CHECK(model_save(m, path, &opts, &e) == 0))
		CHECK_EQ_STR(e.msg, "");
	REQUIRE(model_pack(m, &b, &blen, &e) == 0);
	CHECK_EQ_INT(blen, alen);
	CHECK(memcmp(a, b, alen) == 0);
	/* the saved model's w (64 bytes) went out, and reads back */
	back = model_load(path, &e);
	if (CHECK(back != NULL)) {
		const Onnx__TensorProto *w = find_init(back, "w");
		struct tensor t = { 0 };

		CHECK(w != NULL && w->data_location ==
		    ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL);
		CHECK(model_tensor_read(back, w, &t, &e) == 0);
		CHECK(t.data != NULL && ((float *)t.data)[15] == 15.0f / 16);
		tensor_release(&t);
		/* and inlined again on a plain save */
		CHECK(model_save(back, path, NULL, &e) == 0);
		model_free(back);
		REQUIRE((back = model_load(path, &e)) != NULL);
		REQUIRE(model_pack(back, &c, &clen, &e) == 0);
		CHECK_EQ_INT(find_init(back, "w")->n_external_data, 0);
		free(c);
		model_free(back);
	}
	CHECK(model_save(m, "-", &opts, &e) == -1);
	CHECK_EQ_STR(e.msg, "stdout: cannot write external data when writing "
	    "to standard output");
	free(a);
	free(b);
	model_free(m);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
}

/*
 * A model past the inline limit (protobuf's 2 GiB, here made small) goes
 * to external data on its own; to stdout it is refused, saying why and
 * the way out.
 */
static void
test_save_too_big(void)
{
	struct model_save_opts opts = { 0 };
	struct model *m, *back;
	struct err e;
	char dir[] = "/tmp/model_test.XXXXXX", path[64], cmd[96];

	opts.external_min_bytes = 16;
	opts.inline_max_bytes = 100;
	REQUIRE(mkdtemp(dir) != NULL);
	snprintf(path, sizeof path, "%s/out.onnx", dir);
	REQUIRE((m = model_load(SMALL, &e)) != NULL);
	CHECK(model_save(m, "-", &opts, &e) == -1);
	CHECK_EQ_STR(e.msg, "stdout: the model passes protobuf's 2 GiB "
	    "limit, so its tensors go to an external data file, which "
	    "standard output cannot carry: write the model to a file "
	    "instead (-o FILE)");
	if (!CHECK(model_save(m, path, &opts, &e) == 0))
		CHECK_EQ_STR(e.msg, "");
	back = model_load(path, &e);
	if (CHECK(back != NULL))
		CHECK(find_init(back, "w")->data_location ==
		    ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL);
	model_free(back);
	/* under the limit: inline, as before */
	opts.inline_max_bytes = 0;
	CHECK(model_save(m, path, &opts, &e) == 0);
	model_free(m);
	REQUIRE((back = model_load(path, &e)) != NULL);
	CHECK_EQ_INT(find_init(back, "w")->n_external_data, 0);
	model_free(back);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
}

UNIT_MAIN(test_dtypes_fixture, test_write_read_all_types, test_int4_packing,
    test_write_replaces, test_bad_tensors, test_model_errors,
    test_unpack_budget, test_pack_and_opset, test_save_keeps_model,
    test_load_hashed, test_save_too_big)
