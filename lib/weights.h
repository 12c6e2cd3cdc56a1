/*
 * weights: the model half of a stream: `node` records for the graph and
 * `weight` / `bias` records for its constant float tensors, with their
 * ranges, per channel where the consuming op has a channel axis
 * (opinfo.h). onnx-calib writes them from the prepared model (prep.h),
 * so onnx-qparams can decide without the model.
 *
 * Only the main graph's nodes and the constants they take as inputs are
 * described; constants that only subgraphs use are not quantized.
 */
#ifndef ONNXQ_WEIGHTS_H
#define ONNXQ_WEIGHTS_H

#include "err.h"
#include "graph.h"
#include "model.h"
#include "stream.h"

/*
 * The stream name of every node of g: its own name when set and not used
 * by an earlier node, else "NAME@INDEX" ("@INDEX" for an unnamed node),
 * with more '@' until unique. One malloc'd block (the pointer array and
 * the strings): free() it. NULL with a message when out of memory.
 */
char **weights_node_names(const Onnx__GraphProto *g, struct err *e);

/*
 * Write the node records (topological order), then one record for every
 * constant float tensor a node reads, in order of first use: a bias
 * record when it is read as the bias of Conv, ConvTranspose or Gemm
 * (for its first such use; Gemm's beta, when not 1, as key beta), else
 * a weight record for its first use in a weight input (opinfo.h), else
 * for its first use. gr indexes m's main graph.
 */
int weights_emit(const struct model *m, const struct graph *gr,
    struct stream_writer *w, struct err *e);

#endif
