/*
 * graph: an index over a GraphProto: who produces and who consumes every
 * value, which values are constant (initializers and Constant-node
 * outputs), graph inputs and outputs, declared value_info, and a
 * topological order of the nodes. Subgraphs of If/Loop/Scan are visible:
 * a name a subgraph uses from the outer scope counts as an input of the
 * node that owns the subgraph.
 *
 * The index points into the GraphProto, which it does not own. After
 * editing the proto (graph_add_node, ...), indices stay valid for the
 * editing helpers below; call graph_reindex() before relying on
 * producers/consumers/topological order again.
 */
#ifndef ONNXQ_GRAPH_H
#define ONNXQ_GRAPH_H

#include "err.h"
#include "onnx/onnx.pb-c.h"

enum value_kind {
	VALUE_INPUT,		/* graph input without initializer */
	VALUE_INITIALIZER,	/* initializer (also when listed as an input) */
	VALUE_CONSTANT,		/* output of a Constant node */
	VALUE_NODE,		/* output of any other node */
};

struct graph_value {
	const char *name;
	enum value_kind kind;
	int producer;		/* node index, -1 for inputs and initializers */
	int is_output;		/* listed in graph.output */
	int is_input;		/* listed in graph.input */
	int *consumers;		/* node indices, one entry per use (slot) */
	int nconsumers;
	const Onnx__TensorProto *init;		/* initializer or Constant value */
	const Onnx__ValueInfoProto *info;	/* input/output/value_info, or NULL */
};

struct graph;

/* Build the index; fails on duplicate producers and cycles, naming them. */
struct graph *graph_new(Onnx__GraphProto *g, struct err *e);
void graph_free(struct graph *gr);
int graph_reindex(struct graph *gr, struct err *e);

Onnx__GraphProto *graph_proto(const struct graph *gr);
int graph_nvalues(const struct graph *gr);
struct graph_value *graph_value_at(const struct graph *gr, int i);
/* NULL when no such value. */
struct graph_value *graph_value(const struct graph *gr, const char *name);
/*
 * The index's map of value names to their positions (graph_value_at),
 * valid until the next graph_reindex().
 */
struct strmap;
const struct strmap *graph_names(const struct graph *gr);
/*
 * The value of a constant: an initializer that is no graph input, or a
 * Constant node's output; NULL for anything else. An initializer also
 * listed as a graph input (as IR < 4 lists them all) only gives a default
 * the caller may override: rewrites must not read it as fixed.
 */
const Onnx__TensorProto *graph_constant(const struct graph *gr,
    const char *name);
struct model;
struct tensor;
/* The constant `name` (as above) of m read into t: 0, or -1 with e. */
int graph_constant_read(const struct graph *gr, const struct model *m,
    const char *name, struct tensor *t, struct err *e);
/* The one value of a constant with one element: 0 and *v, or -1. */
int graph_constant_scalar(const struct graph *gr, const struct model *m,
    const char *name, double *v);
/*
 * Whether n is op of the default domain, or, for QuantizeLinear and
 * DequantizeLinear, of com.microsoft (the same op there).
 */
int graph_is_op(const Onnx__NodeProto *n, const char *op);
/* Node indices in topological order (n = number of nodes). */
const int *graph_topo(const struct graph *gr);

/* A name not used by any value or node in the graph, based on base (malloc'd). */
char *graph_unique_name(struct graph *gr, const char *base);
/*
 * Append a node (op_type in domain, inputs and outputs by name) and return
 * it so the caller can add attributes; NULL on error. Names are copied.
 */
Onnx__NodeProto *graph_add_node(struct graph *gr, const char *op_type,
    const char *domain, const char *name, const char *const *inputs, int nin,
    const char *const *outputs, int nout, struct err *e);
/*
 * Add an initializer; takes ownership of tp (malloc'd, name set), also on
 * failure (then freed). Fails on a name already a value at the last index.
 */
int graph_add_initializer(struct graph *gr, Onnx__TensorProto *tp,
    struct err *e);
/*
 * Add an initializer holding t (copied) under a unique name based on
 * base + suffix; returns the name (malloc'd) or NULL.
 */
char *graph_add_tensor(struct graph *gr, const char *base,
    const char *suffix, const struct tensor *t, struct err *e);
/* Make input `slot` of node `node` read `name` instead. */
int graph_rewire_input(struct graph *gr, int node, int slot, const char *name,
    struct err *e);
/*
 * Remove the initializers named in `names` that no node reads and that
 * are no graph output, nor a graph input (a default stays). Their values
 * keep dangling init pointers: call graph_reindex() before reading them.
 */
void graph_drop_unread(struct graph *gr, const struct strmap *names);

#endif
