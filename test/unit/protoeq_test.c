/*
 * protoeq_test: lib/protoeq.c says "the same" exactly when packing gives
 * the same bytes: on nodes and tensors made equal and then changed one
 * field at a time (names, attributes, -0.0 against 0.0, an empty string
 * against none, an empty raw_data set against unset, dims), and on
 * random changes of many pairs.
 */
#include <stdlib.h>
#include <string.h>

#include "attr.h"
#include "protoeq.h"
#include "onnx/onnx.pb-c.h"
#include "unit.h"

/* m packed (malloc'd), its length in *n. */
static uint8_t *
packed(const ProtobufCMessage *m, size_t *n)
{
	uint8_t *p;

	*n = protobuf_c_message_get_packed_size(m);
	if ((p = malloc(*n + 1)) != NULL)
		protobuf_c_message_pack(m, p);
	return p;
}

/* What protoeq() must answer: pack both and compare. */
static int
packed_same(const ProtobufCMessage *a, const ProtobufCMessage *b)
{
	size_t na, nb;
	uint8_t *x = packed(a, &na), *y = packed(b, &nb);
	int same = x && y && na == nb && memcmp(x, y, na) == 0;

	free(x);
	free(y);
	return same;
}

static ProtobufCMessage *
dup_msg(const ProtobufCMessage *m)
{
	size_t n;
	uint8_t *p = packed(m, &n);
	ProtobufCMessage *c;

	c = p ? protobuf_c_message_unpack(m->descriptor, NULL, n, p) : NULL;
	free(p);
	return c;
}

/* A Conv node with an axis-like int, a float and two inputs. */
static Onnx__NodeProto *
make_node(void)
{
	Onnx__NodeProto *n = calloc(1, sizeof *n);
	struct err e;

	onnx__node_proto__init(n);
	n->op_type = strdup("Conv");
	n->name = strdup("c1");
	n->n_input = 2;
	n->input = calloc(2, sizeof *n->input);
	n->input[0] = strdup("x");
	n->input[1] = strdup("w");
	n->n_output = 1;
	n->output = calloc(1, sizeof *n->output);
	n->output[0] = strdup("y");
	attr_add_int(n, "group", 1, &e);
	attr_add_int(n, "axis", 0, &e);
	n->attribute[1]->has_f = 1;
	n->attribute[1]->f = 0.0f;
	return n;
}

#define AGREE(a, b) CHECK_EQ_INT(protoeq(&(a)->base, &(b)->base), \
	packed_same(&(a)->base, &(b)->base))

static void
test_node_changes(void)
{
	Onnx__NodeProto *a = make_node(), *b;

	b = (Onnx__NodeProto *)dup_msg(&a->base);
	REQUIRE(b != NULL);
	CHECK_EQ_INT(protoeq(&a->base, &b->base), 1);
	free(b->input[1]);
	b->input[1] = strdup("w2");
	CHECK_EQ_INT(protoeq(&a->base, &b->base), 0);
	AGREE(a, b);
	free(b->input[1]);
	b->input[1] = strdup("w");
	b->attribute[0]->i = 2;
	CHECK_EQ_INT(protoeq(&a->base, &b->base), 0);
	b->attribute[0]->i = 1;
	CHECK_EQ_INT(protoeq(&a->base, &b->base), 1);
	b->attribute[1]->f = -0.0f;	/* packs otherwise */
	CHECK_EQ_INT(protoeq(&a->base, &b->base), 0);
	AGREE(a, b);
	b->attribute[1]->f = 0.0f;
	b->doc_string = strdup("");	/* set, empty: packed */
	CHECK_EQ_INT(protoeq(&a->base, &b->base), 0);
	AGREE(a, b);
	free(b->doc_string);
	b->doc_string = NULL;
	b->attribute[1]->has_f = 0;
	CHECK_EQ_INT(protoeq(&a->base, &b->base), 0);
	AGREE(a, b);
	b->attribute[1]->has_f = 1;
	b->n_input = 1;			/* one element fewer */
	CHECK_EQ_INT(protoeq(&a->base, &b->base), 0);
	b->n_input = 2;
	CHECK_EQ_INT(protoeq(&a->base, &b->base), 1);
	/* another descriptor */
	CHECK_EQ_INT(protoeq(&a->base, &a->attribute[0]->base), 0);
	protobuf_c_message_free_unpacked(&a->base, NULL);
	protobuf_c_message_free_unpacked(&b->base, NULL);
}

static Onnx__TensorProto *
make_tensor(void)
{
	Onnx__TensorProto *t = calloc(1, sizeof *t);

	onnx__tensor_proto__init(t);
	t->name = strdup("w");
	t->has_data_type = 1;
	t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT8;
	t->n_dims = 2;
	t->dims = calloc(2, sizeof *t->dims);
	t->dims[0] = 2;
	t->dims[1] = 3;
	t->has_raw_data = 1;
	t->raw_data.len = 6;
	t->raw_data.data = malloc(6);
	memcpy(t->raw_data.data, "\1\2\3\4\5\6", 6);
	return t;
}

static void
test_tensor_changes(void)
{
	Onnx__TensorProto *a = make_tensor(), *b;

	b = (Onnx__TensorProto *)dup_msg(&a->base);
	REQUIRE(b != NULL);
	CHECK_EQ_INT(protoeq(&a->base, &b->base), 1);
	b->raw_data.data[5] = 7;
	CHECK_EQ_INT(protoeq(&a->base, &b->base), 0);
	b->raw_data.data[5] = 6;
	b->dims[1] = 4;
	CHECK_EQ_INT(protoeq(&a->base, &b->base), 0);
	b->dims[1] = 3;
	b->raw_data.len = 0;
	a->raw_data.len = 0;
	CHECK_EQ_INT(protoeq(&a->base, &b->base), 1);
	b->has_raw_data = 0;		/* unset: not packed */
	CHECK_EQ_INT(protoeq(&a->base, &b->base), 0);
	AGREE(a, b);
	a->raw_data.len = b->raw_data.len = 6;
	protobuf_c_message_free_unpacked(&a->base, NULL);
	protobuf_c_message_free_unpacked(&b->base, NULL);
}

/* Random changes: protoeq() agrees with packing on each. */
static void
test_random_agree(void)
{
	uint64_t st = 42;
	int same = 0, differ = 0;

	for (int r = 0; r < 400; r++) {
		Onnx__NodeProto *a = make_node(), *b;
		uint64_t x = unit_rand64_r(&st);

		b = (Onnx__NodeProto *)dup_msg(&a->base);
		switch (x % 6) {
		case 0:
			b->attribute[0]->i = (int64_t)(x >> 8) % 2;
			break;
		case 1:
			b->attribute[1]->f = (x >> 8) % 2 ? -0.0f : 0.0f;
			break;
		case 2:
			b->attribute[1]->has_f = (x >> 8) % 2;
			break;
		case 3:
			b->input[0][0] = (x >> 8) % 2 ? 'x' : 'z';
			break;
		case 4:
			b->n_output = (x >> 8) % 2;
			break;
		default:
			free(b->name);
			b->name = (x >> 8) % 2 ? strdup("c1") : NULL;
			break;
		}
		AGREE(a, b);
		if (protoeq(&a->base, &b->base))
			same++;
		else
			differ++;
		if (b->n_output == 0)
			b->n_output = 1;
		protobuf_c_message_free_unpacked(&a->base, NULL);
		protobuf_c_message_free_unpacked(&b->base, NULL);
	}
	CHECK(same > 50);
	CHECK(differ > 50);
}

UNIT_MAIN(test_node_changes, test_tensor_changes, test_random_agree)
