/*
 * vexp: e^x over arrays, with exactly the values the C library's expf
 * gives on this machine, in vector code.
 *
 * Softmax sums exponentials that calibration statistics and golden
 * streams see bit for bit, so a faster exp must not change one bit.
 * glibc's expf (since 2.28) is a short computation in double: a table of
 * 2^(j/32) and a cubic polynomial, with fused multiply-adds in the
 * version it picks on CPUs with FMA and AVX2. vexp_row repeats that
 * computation for many values at once on such CPUs, and calls expf
 * itself elsewhere and for the arguments glibc treats apart (|x| >= 88,
 * infinities, NaN). test/unit/vexp_test.c compares it with expf over
 * millions of arguments.
 */
#ifndef ONNXQ_VEXP_H
#define ONNXQ_VEXP_H

#include <stdint.h>

/* y[k] = expf(x[k] - sub) for k < n, the difference taken in float. */
void vexp_row(float *y, const float *x, float sub, int64_t n);

#endif
