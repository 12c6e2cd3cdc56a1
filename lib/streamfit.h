/*
 * streamfit: does a stream describe this model? Its node records must
 * name the prepared model's main-graph nodes as onnx-calib names them
 * (weights_node_names), with the same op and the same inputs and
 * outputs; its weight and bias records must name initializers of the
 * same shape. A stream made from another model is refused with one line
 * naming the first node or tensor that differs (in stream order), before
 * anything is decided from it. Records of other types are not looked at;
 * a model may have nodes the stream does not name.
 */
#ifndef ONNXQ_STREAMFIT_H
#define ONNXQ_STREAMFIT_H

#include <stddef.h>

#include "err.h"
#include "model.h"
#include "stream.h"

/* 0 when every record fits m (prepared, prep.h); -1 with e naming
 * the record's place, the node or tensor and the model. */
int streamfit_check(const struct model *m,
    struct stream_rec *const *recs, size_t nrecs, struct err *e);

#endif
