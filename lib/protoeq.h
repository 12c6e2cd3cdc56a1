/*
 * protoeq: do two protobuf-c messages serialize to the same bytes? The
 * answer of packing both and comparing, without packing: a walk over
 * the fields that protobuf_c_message_pack() would write (required ones,
 * optional ones that are set and not their default, unlabeled ones that
 * are not zero, repeated ones with elements, the set member of a oneof),
 * comparing their presence and their values bit for bit (a bool by its
 * truth, a NULL string of a required or repeated field as ""). Messages
 * with unknown fields are packed and compared as bytes.
 *
 * For onnx-mixprec's evaluations, which compare every node of a model
 * with the reference's (mixcache.h): packing them was most of it.
 */
#ifndef ONNXQ_PROTOEQ_H
#define ONNXQ_PROTOEQ_H

#include <protobuf-c/protobuf-c.h>

/* 1 when a and b (same descriptor, else 0) pack the same, else 0. */
int protoeq(const ProtobufCMessage *a, const ProtobufCMessage *b);

#endif
