/*
 * fuzz_interp: fuzz_model with the model run too (FUZZ_RUN): onnx-calib's
 * engine on small inputs of the declared types and shapes. See
 * fuzz_model.c.
 */
#define FUZZ_RUN 1
#include "fuzz_model.c"
