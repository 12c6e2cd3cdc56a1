/*
 * attr: typed access to a NodeProto's attributes, with defaults.
 * Returned pointers point into the node; nothing is allocated but by
 * attr_add_int and attr_add_ints, which append an attribute.
 */
#ifndef ONNXQ_ATTR_H
#define ONNXQ_ATTR_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "onnx/onnx.pb-c.h"

/* The attribute, or NULL when absent. */
const Onnx__AttributeProto *attr_find(const Onnx__NodeProto *n, const char *name);
int64_t attr_int(const Onnx__NodeProto *n, const char *name, int64_t def);
float attr_float(const Onnx__NodeProto *n, const char *name, float def);
/* The string (not NUL-terminated in the proto: copied into buf), or def. */
const char *attr_string(const Onnx__NodeProto *n, const char *name,
    const char *def, char *buf, size_t size);
/* Integer list; *count = 0 and NULL when absent. */
const int64_t *attr_ints(const Onnx__NodeProto *n, const char *name,
    size_t *count);
const float *attr_floats(const Onnx__NodeProto *n, const char *name,
    size_t *count);
const Onnx__TensorProto *attr_tensor(const Onnx__NodeProto *n, const char *name);
/* Append an int attribute (malloc'd into n); -1 when out of memory. */
int attr_add_int(Onnx__NodeProto *n, const char *name, int64_t v,
    struct err *e);
/* Append an integer list attribute (v copied); -1 when out of memory. */
int attr_add_ints(Onnx__NodeProto *n, const char *name, const int64_t *v,
    size_t count, struct err *e);

#endif
