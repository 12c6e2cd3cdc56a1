/*
 * nameuses: a snapshot of where each name is read in a GraphProto: the
 * (node, input slot) pairs, in node order then slot order, as a scan of
 * g->node would meet them. For callers that ask "who reads X" for many
 * names while the graph stays as it was (qdq.c's classification and
 * weights), at one map lookup each instead of a scan of every node.
 * The snapshot does not follow later changes to the graph.
 */
#ifndef ONNXQ_NAMEUSES_H
#define ONNXQ_NAMEUSES_H

#include <stddef.h>

#include "err.h"
#include "onnx/onnx.pb-c.h"

struct name_use {
	int node;		/* index in g->node */
	int slot;		/* input index */
};

struct nameuses;

/* The uses of every non-empty input name of g's nodes; NULL with e. */
struct nameuses *nameuses_new(const Onnx__GraphProto *g, struct err *e);
void nameuses_free(struct nameuses *u);
/* The uses of name (*n of them, 0 when none). */
const struct name_use *nameuses_of(const struct nameuses *u,
    const char *name, size_t *n);

#endif
