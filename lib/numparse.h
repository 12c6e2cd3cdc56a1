/*
 * numparse: the common decimal numbers of a stream, parsed without the C
 * library's general (and slow) path, to the same bits.
 *
 * numparse_float: text "[-]DIGITS[.DIGITS][(e|E)[+|-]DIGITS]" (or
 * ".DIGITS") with at most 19 significant digits whose value, m * 10^k,
 * has m < 2^53, |k| <= 22 and a float result in the normal range: *v set
 * to strtof()'s result and 1 returned. Anything else (other forms, more
 * digits, subnormal or huge values, the rare value whose double falls on
 * a float rounding midpoint) returns 0 and leaves *v alone: the caller
 * falls back to strtof(). Why it is exact: m and 10^k are exact doubles,
 * so one division or product rounds m * 10^k correctly to double; a
 * second rounding to float then agrees with rounding m * 10^k to float
 * directly unless the double is a float midpoint (rounding is monotone,
 * and the midpoints between floats are doubles), which is refused.
 *
 * numparse_uint: text of 1 to 19 decimal digits, nothing else: *v set
 * and 1 returned (as strtoull()); else 0, for the caller's general path.
 */
#ifndef ONNXQ_NUMPARSE_H
#define ONNXQ_NUMPARSE_H

#include <stdint.h>

int numparse_float(const char *s, float *v);
int numparse_uint(const char *s, uint64_t *v);

#endif
