/*
 * qparams: scales and zero points for linear quantization, computed as
 * ONNX Runtime's quantizer computes them (quant_utils.compute_scale_zp,
 * get_qmin_qmax_for_qType, quantize_nparray, and the QDQ quantizer's bias
 * handling), so that results agree with it bit for bit:
 *
 *   rmin = min(rmin, 0), rmax = max(rmax, 0)        (float32)
 *   rmax = max(rmax, rmin + min_real_range)          (float32, if set)
 *   symmetric: rmin = -absmax, rmax = +absmax
 *   scale = (double)(rmax - rmin) / (qmax - qmin)    (the difference in float32)
 *   scale < FLT_MIN: scale = 1, zero point 0
 *   zero point = round_half_even(qmin - rmin / scale) in double,
 *                or round_half_even((qmin + qmax) / 2) when symmetric
 *   scale rounded to float32 last.
 *
 * The integer grid [qmin, qmax] depends on the type and the flags:
 * reduce_range wins over symmetric (int8 -64..64, uint8 0..127, int16
 * -16384..16384, uint16 0..32767, int4 -4..3, uint4 0..7); symmetric
 * narrows only the signed 8- and 16-bit types (int8 -127..127, int16
 * -32767..32767) and leaves the others whole, which gives uint8 zero point
 * 128, uint16 32768, int4 0, uint4 8.
 *
 * Beyond ORT: power-of-two scales (the AsymmetricWithPower2Scale and
 * SymmetricWithPower2Scale schemes): the scale is rounded up to the next
 * power of two and the zero point computed for it by the same formula
 * (the midpoint when symmetric), so every value of [rmin, rmax] still lies
 * within half a step of the grid [scale*(qmin-zp), scale*(qmax-zp)]: no
 * value clips by more than rounding would move it anyway.
 *
 * Types are ONNX TensorProto.DataType numbers (enum dtype in tensor.h):
 * DT_UINT8, DT_INT8, DT_UINT16, DT_INT16, DT_UINT4, DT_INT4 as targets,
 * DT_INT32 for biases. Nothing here allocates; no function keeps a pointer.
 */
#ifndef ONNXQ_QPARAMS_H
#define ONNXQ_QPARAMS_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* ORT's margin when raising a weight scale for an int32 bias. */
#define QPARAMS_BIAS_MARGIN 1.0001

struct qparams_opts {
	int type;		/* DT_UINT8 ... DT_INT4 */
	int symmetric;
	int reduce_range;
	int pow2;		/* scale rounded up to a power of two */
	float min_real_range;	/* 0 (or less): none */
};

/* "uint8", ...; NULL for other types. */
const char *qparams_type_name(int type);
/*
 * "uint8", "int8", "uint16", "int16", "uint4", "int4" (any case), or ORT's
 * QuantType names "QUInt8", "QInt8", ... : the type, DT_UNDEFINED if none.
 */
int qparams_type_parse(const char *s);
/* The type's whole range (what values saturate to); -1 for other types. */
int qparams_type_limits(int type, int64_t *lo, int64_t *hi);
/* The grid compute_scale_zp uses for these flags; -1 for other types. */
int qparams_qrange(int type, int reduce_range, int symmetric, int64_t *qmin,
    int64_t *qmax);

/*
 * Scale and zero point for the real range [rmin, rmax]. Fails only for an
 * unsupported type, a non-finite bound, or a range whose width overflows
 * float32.
 */
int qparams_compute(const struct qparams_opts *o, float rmin, float rmax,
    float *scale, int32_t *zp, struct err *e);
/* The same for n channels; the message names the channel. */
int qparams_compute_n(const struct qparams_opts *o, size_t n,
    const float *rmin, const float *rmax, float *scale, int32_t *zp,
    struct err *e);
/*
 * [rmin, rmax] widened to hold 0, as qparams_compute() does first (zero
 * must be exact on the grid): the range the parameters are computed over,
 * which the qparam records give.
 */
void qparams_range_with_zero(float *rmin, float *rmax);
/* The real interval [lo, hi] the grid of (scale, zp) represents. */
void qparams_represented(const struct qparams_opts *o, float scale,
    int32_t zp, double *lo, double *hi);

/*
 * Quantize as QuantizeLinear does: round_half_even(x / scale) (division in
 * float32) + zp, saturated to the type's whole range; NaN gives zp.
 */
int32_t qparams_quantize(float x, float scale, int32_t zp, int type);
void qparams_quantize_n(const float *x, size_t n, float scale, int32_t zp,
    int type, int32_t *q);
/*
 * Per-axis: x has the given shape (row-major), channel c along `axis`
 * uses scale[c], zp[c] (dims[axis] of each).
 */
int qparams_quantize_axis(const float *x, int rank, const int64_t *dims,
    int axis, const float *scale, const int32_t *zp, int type, int32_t *q,
    struct err *e);
/* (q - zp) * scale in float32, as DequantizeLinear. */
float qparams_dequantize(int32_t q, float scale, int32_t zp);

/*
 * Biases are int32 with zero point 0 and scale input_scale * weight_scale
 * (times Gemm's beta, as ORT), computed in float32 like ORT. nw is the
 * number of weight scales (1 per-tensor), nb the number of bias channels
 * (1 when the bias is quantized per-tensor). Either nw == 1 (one bias
 * scale), or nb == 1 < nw (a bias broadcast over the channels: one scale,
 * from the largest weight scale), or nb a multiple of nw: bias channel j
 * pairs with weight scale j mod nw (nb == nw, or a grouped ConvTranspose
 * whose weight has out/group channels along axis 1). bscale gets nb
 * entries when nw > 1 and nb > 1, else 1.
 */
int qparams_bias_scale(float input_scale, const float *wscale, size_t nw,
    size_t nb, double beta, float *bscale, struct err *e);
/*
 * ORT's _adjust_weight_scale_for_int32_bias, generalised: raise weight
 * scales so the bias never clips. babsmax holds max|bias| per bias
 * channel (nb entries) or over the whole bias (nb == 1); weight scale i
 * answers for the bias channels j == i mod nw. For each weight
 * scale w[i] with candidate bias scale c = input_scale * w[i] * |beta|
 * (in double) below the smallest valid one,
 *     s = 1.0001 * 2 * absmax / (2^31 - 1 - (-2^31 + 1)),
 * w[i] becomes float(w[i] * s / c). Returns how many scales were raised,
 * or -1 when nw and nb do not fit together (see qparams_bias_scale).
 */
int qparams_bias_adjust(float input_scale, float *wscale, size_t nw,
    const float *babsmax, size_t nb, double beta, struct err *e);
/* round_half_even((double)x / scale) saturated to int32 (ORT's bias quantization). */
int32_t qparams_quantize_bias(float x, float scale);

#endif
