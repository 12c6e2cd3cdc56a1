/*
 * streammatch: does a stream describe this model? A stream made from
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
 * Tensors the model does not have are not checked here (the records that
 * would be applied to them are refused by their reader), nor the stream's
 * #model hash: a model saved again or with other metadata keeps its
 * tensors, and its programs only warn about the hash.
 *
 * The first record of each tensor counts. Errors name the record
 * ("FILE:LINE: weight W1: shape 8x3x3x3 in the stream, 4x3x3x3 in
 * MODEL (a stream made from another model?)").
 */
#ifndef ONNXQ_STREAMMATCH_H
#define ONNXQ_STREAMMATCH_H

#include "err.h"
#include "graph.h"
#include "stream.h"

struct streammatch;

struct streammatch *streammatch_new(void);
void streammatch_free(struct streammatch *sm);

/*
 * Keep the dtype and shape of a weight, bias or stat record (others are
 * ignored, as are keys that do not parse: their readers judge them).
 * -1 only when out of memory.
 */
int streammatch_add(struct streammatch *sm, const struct stream_rec *rec,
    struct err *e);

/* Check every kept record against gr (indexing the model at path). */
int streammatch_check(const struct streammatch *sm, const struct graph *gr,
    const char *path, struct err *e);

#endif
