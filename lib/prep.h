/*
 * prep: put a model into the form the quantizer works on. onnx-calib and
 * onnx-qdq-insert both call prep_model() on the fp32 model, so the tensor
 * names in the stream and in the rewritten model always agree.
 *
 * - Constant nodes holding a tensor (value attribute, or value_float(s) /
 *   value_int(s)) become initializers of the same name.
 * - BatchNormalization whose input X is produced by Conv, ConvTranspose or
 *   Gemm with constant weights (and bias, if any), and which is that
 *   output's only consumer, is folded into the producer: new weight and
 *   bias initializers, the producer takes the BN's output name, the BN node
 *   is removed. Per-channel weights are then quantized after the fold.
 * - Initializers no longer used are removed.
 * The original fp32 model (as run by onnx-verify) computes the same outputs
 * up to float rounding.
 */
#ifndef ONNXQ_PREP_H
#define ONNXQ_PREP_H

#include "err.h"
#include "model.h"

struct prep_report {
	int constants;		/* Constant nodes turned into initializers */
	int folded_bn;		/* BatchNormalization nodes folded */
};

/* Edits m->proto in place. report may be NULL. */
int prep_model(struct model *m, struct prep_report *report, struct err *e);
/*
 * model_load_hashed() (sha256, bytes and len as there) and prep_model():
 * the fp32 model as the quantizer sees it, for the programs that load
 * one. A failure to prepare is prefixed with path; nothing is kept.
 */
struct model *prep_load(const char *path, char sha256[65], void **bytes,
    size_t *len, struct err *e);

#endif
