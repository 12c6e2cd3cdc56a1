/*
 * nbitsq: one block of weights to b-bit codes, a scale and a zero point,
 * the arithmetic of weight-only quantization (blockq.h decides where it
 * applies, nbitswrite.h writes the result). Codes are unsigned, 0 to
 * 2^b - 1, and the weight they stand for is (code - zero) * scale, as in
 * com.microsoft MatMulNBits; a signed type's codes are these minus
 * 2^(b-1).
 *
 *   rtn        asymmetric: the block's range widened to hold 0, split in
 *              2^b - 1 steps, zero = round(-min / scale); symmetric
 *              (zero 2^(b-1)): scale = m / -2^(b-1) for m the value of
 *              largest magnitude, so that m is exactly a code, as ONNX
 *              Runtime's quantizer does. Round half to even.
 *   hqq        half-quadratic quantization (Badri and Shaji 2023, as
 *              ONNX Runtime's HQQWeightOnlyQuantizer): from the block's
 *              min and max, up to 20 proximal steps on the zero point
 *              that minimise the l_0.7 norm of the weight error (a
 *              shrinkage of the error, then the zero that fits the
 *              shrunk error), stopping when a step brings no better.
 *              Started from the block's range and from 4 narrowed by 5%
 *              steps (to 80%): on the decoder fixture that gains 0.3 dB
 *              and a point of top-1 over the full range alone. Of the
 *              steps and the rtn solution, the one of least squared
 *              weight error is kept, so hqq is never worse than rtn on a
 *              block. Asymmetric only.
 *
 * With int_zero the zero point is a whole number within the codes (a
 * DequantizeLinear needs one); without, hqq's zero may be fractional
 * (MatMulNBits takes float zero points). Values must be finite
 * (nbitsq_first_nonfinite). Nothing allocates.
 */
#ifndef ONNXQ_NBITSQ_H
#define ONNXQ_NBITSQ_H

#include <stdint.h>

#include "records.h"

struct nbitsq_opts {
	int bits;			/* 2 to 8 */
	int symmetric;
	enum blockq_method method;
	int int_zero;
};

/* Codes q[0..n) of x[0..n), n >= 1, with their scale and zero. */
void nbitsq_block(const struct nbitsq_opts *o, const float *x, int n,
    uint8_t *q, float *scale, float *zero);

/* The index of the first NaN or infinity in x[0..n), or -1. */
int64_t nbitsq_first_nonfinite(const float *x, int64_t n);

#endif
