/*
 * opset: raise the default-domain opset of a model when every node keeps
 * its meaning between the two versions, rewriting the nodes whose
 * attributes became inputs (Clip, Slice, Squeeze, Unsqueeze, Split,
 * ReduceSum, Pad, TopK, Dropout) or whose axis semantics changed
 * (Softmax, LogSoftmax, Hardmax at 13) into the new form.
 *
 * Which operator versions keep the meaning of the previous one is a table
 * generated from ONNX's schema history (scripts/gen-opset-table.py, kept
 * in lib/opset.c); it ends at OPSET_TABLE_MAX (the opsets the installed
 * onnx package knew), and raising beyond that is refused.
 *
 * Only the main graph is rewritten: a subgraph node that would need a
 * rewrite makes raising fail. Nodes of other domains are left alone.
 * Nothing here prints; opset_raise() edits m->proto in place (new nodes
 * and initializers are malloc'd into it, as model.h says).
 */
#ifndef ONNXQ_OPSET_H
#define ONNXQ_OPSET_H

#include "err.h"
#include "model.h"

/*
 * What is known of a tensor of the main graph: element type (enum dtype,
 * DT_UNDEFINED when unknown) and rank (-1 when unknown). Used for the
 * constants a rewrite adds (Clip min/max take the input's type) and to
 * keep a Softmax whose axis is the last one as it is.
 */
typedef void (*opset_info_fn)(void *ctx, const char *tensor, int *dtype,
    int *rank);

struct opset_opts {
	opset_info_fn info;	/* may be NULL: value_info only */
	void *info_ctx;
};

/* The highest opset the table knows. */
int opset_table_max(void);

/*
 * The version of op_type (default domain) in force at `opset`: the
 * largest since-version <= opset; 0 when the table does not know the
 * operator at that opset.
 */
int opset_since(const char *op_type, int opset);

/*
 * 0 when m's default-domain opset can be raised to `to` (every node keeps
 * its meaning, or has a rewrite), else -1 and e names the first node that
 * does not: "node NAME (Op): Op-9 and Op-13 differ: ...". A model already
 * at `to` or above passes. opts may be NULL.
 */
int opset_check(const struct model *m, int to, const struct opset_opts *o,
    struct err *e);

/*
 * Check, then raise: rewrite the nodes that need it, set the default
 * domain's import to `to` and the IR version to at least the one that
 * opset needs. Returns the number of nodes rewritten, or -1 (m may then
 * be partly rewritten: discard it).
 */
int opset_raise(struct model *m, int to, const struct opset_opts *o,
    struct err *e);

/* The smallest IR version that allows `opset` of the default domain. */
int opset_ir_version(int opset);

/*
 * Import `domain` at `version` unless m already imports it (whatever
 * version); -1 when out of memory.
 */
int opset_import_add(Onnx__ModelProto *mp, const char *domain, int version,
    struct err *e);

#endif
