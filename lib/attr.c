/* attr: see attr.h. */
#include <stdlib.h>
#include <string.h>

#include "attr.h"

const Onnx__AttributeProto *
attr_find(const Onnx__NodeProto *n, const char *name)
{
	for (size_t i = 0; i < n->n_attribute; i++)
		if (n->attribute[i]->name && strcmp(n->attribute[i]->name, name) == 0)
			return n->attribute[i];
	return NULL;
}

int64_t
attr_int(const Onnx__NodeProto *n, const char *name, int64_t def)
{
	const Onnx__AttributeProto *a = attr_find(n, name);

	return a && a->has_i ? a->i : def;
}

float
attr_float(const Onnx__NodeProto *n, const char *name, float def)
{
	const Onnx__AttributeProto *a = attr_find(n, name);

	return a && a->has_f ? a->f : def;
}

const char *
attr_string(const Onnx__NodeProto *n, const char *name, const char *def,
    char *buf, size_t size)
{
	const Onnx__AttributeProto *a = attr_find(n, name);
	size_t len;

	if (!a || !a->has_s || size == 0)
		return def;
	len = a->s.len < size - 1 ? a->s.len : size - 1;
	memcpy(buf, a->s.data, len);
	buf[len] = '\0';
	return buf;
}

const int64_t *
attr_ints(const Onnx__NodeProto *n, const char *name, size_t *count)
{
	const Onnx__AttributeProto *a = attr_find(n, name);

	*count = a ? a->n_ints : 0;
	return a && a->n_ints ? a->ints : NULL;
}

const float *
attr_floats(const Onnx__NodeProto *n, const char *name, size_t *count)
{
	const Onnx__AttributeProto *a = attr_find(n, name);

	*count = a ? a->n_floats : 0;
	return a && a->n_floats ? a->floats : NULL;
}

const Onnx__TensorProto *
attr_tensor(const Onnx__NodeProto *n, const char *name)
{
	const Onnx__AttributeProto *a = attr_find(n, name);

	return a ? a->t : NULL;
}

int
attr_add_int(Onnx__NodeProto *n, const char *name, int64_t v, struct err *e)
{
	Onnx__AttributeProto *a, **as;

	if ((a = malloc(sizeof *a)) == NULL)
		return err_nomem(e);
	onnx__attribute_proto__init(a);
	if ((a->name = strdup(name)) == NULL) {
		free(a);
		return err_nomem(e);
	}
	a->has_type = 1;
	a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
	a->has_i = 1;
	a->i = v;
	if ((as = realloc(n->attribute, (n->n_attribute + 1) *
	    sizeof *as)) == NULL) {
		protobuf_c_message_free_unpacked(&a->base, NULL);
		return err_nomem(e);
	}
	n->attribute = as;
	n->attribute[n->n_attribute++] = a;
	return 0;
}

int
attr_add_ints(Onnx__NodeProto *n, const char *name, const int64_t *v,
    size_t count, struct err *e)
{
	Onnx__AttributeProto *a;
	int64_t *ints = malloc((count ? count : 1) * sizeof *v);

	/* the values first: a failure leaves no half-made attribute */
	if (ints == NULL)
		return err_nomem(e);
	if (attr_add_int(n, name, 0, e) != 0) {
		free(ints);
		return -1;
	}
	a = n->attribute[n->n_attribute - 1];
	a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
	a->has_i = 0;
	memcpy(ints, v, count * sizeof *v);
	a->ints = ints;
	a->n_ints = count;
	return 0;
}
