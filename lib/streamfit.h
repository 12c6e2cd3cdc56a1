/*
 * streamfit: does a stream describe this model? A stream made from
 * another model (a retrained variant, a different input size) can name
 * the same tensors with other shapes; its scales would then be applied
 * to tensors they were not computed for, and the result would look
 * fine. The records that carry a tensor's type and shape say so:
 *
 *   weight W / bias B   dtype= and shape= must be the model's
 *                       initializer's; a record naming a tensor that the
 *                       model computes (not a constant) disagrees too.
 *   stat X              dtype= must be the type the model declares for X
 *                       (graph inputs, outputs, value_info), and for a
 *                       graph input the shape its static dimensions
 *                       declare (the first, the batch, is not compared:
 *                       onnx-calib --batch stacks samples along it).
 *
 * Two checks, for two readers:
 *
 *   streamfit_add + streamfit_check (onnx-qdq-insert, as it reads the
 *   stream): the records above. Tensors the model does not have are not
 *   checked here (the records that would be applied to them are refused
 *   by their reader). The first record of each tensor counts.
 *
 *   streamfit_check_all (onnx-mixprec, which decides from the whole
 *   stream): the same in stream order, and also node records, which must
 *   name the prepared model's main-graph nodes as onnx-calib names them
 *   (weights_node_names) with the same op, inputs and outputs; and every
 *   weight or bias record must name a tensor of the model. A model may
 *   have nodes the stream does not name.
 *
 * Neither compares the stream's #model hash: a model saved again or with
 * other metadata keeps its tensors, and the programs only warn about it.
 * Errors name the record ("FILE:LINE: weight W1: shape 8x3x3x3 in the
 * stream, 4x3x3x3 in MODEL (a stream made from another model?)").
 */
#ifndef ONNXQ_STREAMFIT_H
#define ONNXQ_STREAMFIT_H

#include <stddef.h>

#include "err.h"
#include "graph.h"
#include "model.h"
#include "stream.h"

struct streamfit;

struct streamfit *streamfit_new(void);
void streamfit_free(struct streamfit *sf);

/*
 * Keep the dtype and shape of a weight, bias or stat record (others are
 * ignored, as are keys that do not parse: their readers judge them).
 * -1 only when out of memory.
 */
int streamfit_add(struct streamfit *sf, const struct stream_rec *rec,
    struct err *e);

/* Check every kept record against gr (indexing the model at path). */
int streamfit_check(const struct streamfit *sf, const struct graph *gr,
    const char *path, struct err *e);

/* 0 when every record fits m (prepared, prep.h); -1 with e naming
 * the first record that does not, the node or tensor and the model. */
int streamfit_check_all(const struct model *m,
    struct stream_rec *const *recs, size_t nrecs, struct err *e);

#endif
