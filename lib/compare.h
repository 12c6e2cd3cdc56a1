/*
 * compare: error metrics between a tensor and its reference (a quantized
 * model's output against the fp32 model's, or a model's output against
 * an expected one), accumulated sample by sample so nothing but a few
 * sums is kept between samples.
 *
 * Over the element pairs (x, ref) where both are finite:
 *
 *   SNR     10 log10(sum ref^2 / sum (x - ref)^2) in dB, pooled over all
 *           samples; also the lowest per-sample SNR (the worst sample).
 *           INFINITY when the error is zero, -INFINITY when the reference
 *           is zero and the error not.
 *   MSE     sum (x - ref)^2 / pairs
 *   max abs largest |x - ref|
 *   cosine  sum x*ref / sqrt(sum x^2 * sum ref^2), pooled (all samples
 *           taken as one vector); 1 when both are all zero, 0 when only
 *           one is.
 *
 * NaN against NaN and an infinity against the same infinity agree and
 * count nowhere; any other pair with a non-finite element makes SNR and
 * worst SNR -INFINITY, MSE and max abs INFINITY. Pairs whose shape or
 * element type differ are counted as mismatches and add nothing else.
 * Sums are kept in double, per sample first.
 *
 * Classifier-like tensors (see compare_is_classifier) are also compared
 * by their top-1 class: each row (the last axis) is reduced to the index
 * of its largest element as numpy.argmax does (the first maximum; the
 * first NaN if there is one), and rows agree when both indices are equal.
 * With labels, the share of rows whose class equals the label is counted
 * for both x and ref.
 *
 * struct compare is plain data: compare_init() it; nothing to free.
 */
#ifndef ONNXQ_COMPARE_H
#define ONNXQ_COMPARE_H

#include <stdint.h>

#include "tensor.h"

struct compare {
	int64_t samples;	/* pairs added, mismatches included */
	int64_t nmismatch;	/* pairs whose shape or type differ */
	int64_t nelem;		/* finite element pairs */
	int64_t nonfinite;	/* pairs disagreeing in a non-finite value */
	double signal;		/* sum ref^2 */
	double noise;		/* sum (x - ref)^2 */
	double xx, xr;		/* sum x^2, sum x*ref */
	double max_abs;
	double worst_snr;	/* INFINITY until a sample has an error */
	int64_t worst_sample;	/* the sample index given with it; -1 none */
	int64_t rows, agree;	/* top-1 rows compared, rows that agree */
	int64_t labeled;	/* rows with a label */
	int64_t correct_x, correct_ref;	/* of those, rows classed right */
};

void compare_init(struct compare *c);
/*
 * Add one sample's pair; sample is an index for compare.worst_sample.
 * Returns 0, or 1 when shape or type differ (counted as a mismatch).
 */
int compare_add(struct compare *c, const struct tensor *x,
    const struct tensor *ref, int64_t sample);

/*
 * A float tensor of rank 2 or 3 whose last dimension is at least 2: a
 * batch of class scores ([N, C]) or a sequence of them ([N, T, C]).
 */
int compare_is_classifier(const struct tensor *t);
/* Rows of a classifier-like tensor: nelem / last dimension. */
int64_t compare_rows(const struct tensor *t);
/* The top-1 class of row r. */
int64_t compare_argmax(const struct tensor *t, int64_t row);
/*
 * Add the top-1 comparison of one sample's pair (same shape, classifier-
 * like; otherwise nothing is added and 1 returned). labels, when not
 * NULL, holds one class per row (nlabels == compare_rows(x), else 1 is
 * returned and nothing added).
 */
int compare_add_top1(struct compare *c, const struct tensor *x,
    const struct tensor *ref, const int64_t *labels, int64_t nlabels);

/* NaN when nothing was compared (every pair a mismatch). */
double compare_snr(const struct compare *c);
double compare_worst_snr(const struct compare *c);
/* NaN when no finite pair was compared. */
double compare_mse(const struct compare *c);
double compare_max_abs(const struct compare *c);	/* NaN likewise */
double compare_cosine(const struct compare *c);	/* NaN likewise */
/* Percentages; NaN when nothing was counted. */
double compare_agreement(const struct compare *c);
double compare_accuracy_x(const struct compare *c);
double compare_accuracy_ref(const struct compare *c);
/* SNR of one sample's sums, as above. */
double compare_snr_of(double signal, double noise);

#endif
