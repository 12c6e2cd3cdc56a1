/* protoeq: see protoeq.h. */
#include <stdlib.h>
#include <string.h>

#include "protoeq.h"

/* Bytes of a scalar of type t in a message (as protobuf-c lays it out). */
static size_t
scalar_size(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		return 8;
	case PROTOBUF_C_TYPE_BOOL:
		return sizeof(protobuf_c_boolean);
	case PROTOBUF_C_TYPE_STRING:
		return sizeof(char *);
	case PROTOBUF_C_TYPE_BYTES:
		return sizeof(ProtobufCBinaryData);
	case PROTOBUF_C_TYPE_MESSAGE:
		return sizeof(ProtobufCMessage *);
	default:		/* the 32-bit ones and enums */
		return 4;
	}
}

/* A string as packing reads it: NULL is "". */
static const char *
str_of(const void *member)
{
	const char *s = *(const char *const *)member;

	return s ? s : "";
}

/* One value of field f at a and b: 1 when they pack the same. */
static int
value_eq(const ProtobufCFieldDescriptor *f, const void *a, const void *b)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_BOOL:
		return !*(const protobuf_c_boolean *)a ==
		    !*(const protobuf_c_boolean *)b;
	case PROTOBUF_C_TYPE_STRING:
		return strcmp(str_of(a), str_of(b)) == 0;
	case PROTOBUF_C_TYPE_BYTES: {
		const ProtobufCBinaryData *x = a, *y = b;

		return x->len == y->len && (x->len == 0 ||
		    x->data == y->data ||
		    memcmp(x->data, y->data, x->len) == 0);
	}
	case PROTOBUF_C_TYPE_MESSAGE: {
		const ProtobufCMessage *x = *(ProtobufCMessage *const *)a;
		const ProtobufCMessage *y = *(ProtobufCMessage *const *)b;

		if (x == NULL || y == NULL)
			return x == y;
		return protoeq(x, y);
	}
	default:
		return memcmp(a, b, scalar_size(f->type)) == 0;
	}
}

/* Is the value at member zero (not packed when unlabeled)? */
static int
zeroish(const ProtobufCFieldDescriptor *f, const void *member)
{
	static const unsigned char zero[8];

	switch (f->type) {
	case PROTOBUF_C_TYPE_BOOL:
		return !*(const protobuf_c_boolean *)member;
	case PROTOBUF_C_TYPE_STRING: {
		const char *s = *(const char *const *)member;

		return s == NULL || s[0] == '\0';
	}
	case PROTOBUF_C_TYPE_BYTES:
		return ((const ProtobufCBinaryData *)member)->len == 0;
	case PROTOBUF_C_TYPE_MESSAGE:
		return *(const void *const *)member == NULL;
	default:
		return memcmp(member, zero, scalar_size(f->type)) == 0;
	}
}

/*
 * Does packing write field f of message m (member at member, its
 * quantifier, if any, at q)?
 */
static int
present(const ProtobufCFieldDescriptor *f, const void *member, const void *q)
{
	int ptr = f->type == PROTOBUF_C_TYPE_MESSAGE ||
	    f->type == PROTOBUF_C_TYPE_STRING;

	if (f->label == PROTOBUF_C_LABEL_REQUIRED)
		return 1;
	if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
		if (*(const uint32_t *)q != f->id)
			return 0;
	} else if (f->label == PROTOBUF_C_LABEL_NONE)
		return !zeroish(f, member);
	else if (!ptr)
		return *(const protobuf_c_boolean *)q != 0;
	if (ptr) {
		const void *p = *(const void *const *)member;

		return p != NULL && p != f->default_value;
	}
	return 1;
}

/* Pack both and compare the bytes (unknown fields). */
static int
packed_eq(const ProtobufCMessage *a, const ProtobufCMessage *b)
{
	size_t n = protobuf_c_message_get_packed_size(a);
	uint8_t *x, *y;
	int same = 0;

	if (protobuf_c_message_get_packed_size(b) != n)
		return 0;
	x = malloc(n ? n : 1);
	y = malloc(n ? n : 1);
	if (x && y) {
		protobuf_c_message_pack(a, x);
		protobuf_c_message_pack(b, y);
		same = memcmp(x, y, n) == 0;
	}
	free(x);
	free(y);
	return same;
}

int
protoeq(const ProtobufCMessage *a, const ProtobufCMessage *b)
{
	const ProtobufCMessageDescriptor *d = a->descriptor;
	const char *pa = (const char *)a, *pb = (const char *)b;

	if (b->descriptor != d)
		return 0;
	if (a->n_unknown_fields || b->n_unknown_fields)
		return packed_eq(a, b);
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		const void *ma = pa + f->offset, *mb = pb + f->offset;
		const void *qa = pa + f->quantifier_offset;
		const void *qb = pb + f->quantifier_offset;
		size_t n, sz;

		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			n = *(const size_t *)qa;
			if (n != *(const size_t *)qb)
				return 0;
			ma = *(const void *const *)ma;
			mb = *(const void *const *)mb;
			sz = scalar_size(f->type);
			for (size_t k = 0; k < n; k++)
				if (!value_eq(f, (const char *)ma + k * sz,
				    (const char *)mb + k * sz))
					return 0;
			continue;
		}
		n = (size_t)present(f, ma, qa);
		if (n != (size_t)present(f, mb, qb))
			return 0;
		if (n && !value_eq(f, ma, mb))
			return 0;
	}
	return 1;
}
