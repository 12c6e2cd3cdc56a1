/*
 * rangesel: choose the real range [rmin, rmax] an activation is quantized
 * over, from its statistics (the stream's stat record) and its histogram
 * (struct hist_bin arrays as hist_bins() returns them: ascending, disjoint,
 * [lo, hi) each, the zero bin lo == hi == 0). Values are assumed uniform
 * within a bin. The result always lies within [min, max] of the data
 * (zero is added later, by qparams_compute).
 *
 * minmax        exact min and max; with moving_average the mean of the
 *               per-batch minima and maxima (ORT's CalibMovingAverage).
 * percentile    ORT's HistogramCalibrater: by default over |x|, the value
 *               below which `percentile` % of |x| lie gives [-T, T];
 *               per_side cuts (100 - p)/2 % from each tail instead (ORT's
 *               CalibTensorRangeSymmetric=False). Interpolated within the
 *               bin (ORT takes the bin's left edge of its linear bins).
 * entropy       TensorRT's KL-divergence search (as in NVIDIA's
 *               pytorch-quantization): |x| re-binned into entropy_bins
 *               (2048) linear bins over [0, max|x|], bin 0 set to bin 1's
 *               count so a spike of zeros does not dominate; for every
 *               i from max(L, entropy_bins/16) (128 for 2048 bins, as
 *               TensorRT) to entropy_bins the first i bins
 *               (outliers added to the last) are compared with their
 *               quantization to L levels; the last i of least divergence
 *               gives T = i * width. L is the number of grid points on
 *               one side of zero: (qmax - qmin)/2 + 1, or the whole grid
 *               for one-signed data and an asymmetric type. When L is not
 *               below entropy_bins (16-bit types) the full range is kept.
 *               Candidates start that many bins past the first occupied
 *               one (data away from zero). With an asymmetric type and
 *               data on both sides, each side is searched on its own
 *               values, the longer side with the whole grid's levels:
 *               [-T1, T2].
 * distribution  ORT's "distribution" (scenario "same") carried over to
 *               integer grids: the data and the grid are taken to share
 *               one distribution, so scale = std / std(grid), std(grid) =
 *               sqrt((n^2 - 1) / 12) for n grid points: [mean - w/2,
 *               mean + w/2] with w = scale * (qmax - qmin).
 * mse           the range whose grid (computed by qparams_compute with
 *               the given options, so pow2 and zero-point rounding count)
 *               minimises the expected squared error: (x - bound)^2 for
 *               clipped values, x^2 for values that round to zero, and
 *               step^2/12 for the other values inside. Searched on a grid
 *               of candidate bounds, then refined around the best.
 */
#ifndef ONNXQ_RANGESEL_H
#define ONNXQ_RANGESEL_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "hist.h"
#include "qparams.h"

enum rangesel_method {
	RANGESEL_MINMAX,
	RANGESEL_ENTROPY,
	RANGESEL_PERCENTILE,
	RANGESEL_DISTRIBUTION,
	RANGESEL_MSE,
};

#define RANGESEL_PERCENTILE_DEFAULT 99.999
#define RANGESEL_ENTROPY_BINS_DEFAULT 2048
#define RANGESEL_ENTROPY_BINS_MAX 65536

/* What is known of one tensor's values (all finite values). */
struct rangesel_stats {
	double min, max;
	double mavg_min, mavg_max;	/* mean of per-batch minima/maxima */
	double mean, std;
	uint64_t n;
	const struct hist_bin *bins;	/* NULL when there is no histogram */
	size_t nbins;
};

struct rangesel_memo;

struct rangesel_opts {
	int method;			/* enum rangesel_method */
	int moving_average;		/* minmax */
	int per_side;			/* percentile */
	double percentile;		/* in (0, 100] */
	int entropy_bins;		/* > 0 */
	struct qparams_opts q;		/* the target grid */
	struct rangesel_memo *memo;	/* NULL, or see rangesel_memo_new */
};

/* "minmax", "entropy", ...; NULL if out of range. */
const char *rangesel_method_name(int method);
/* The method, or -1 if s names none. */
int rangesel_method_parse(const char *s);
/* Defaults: minmax, percentile 99.999, 2048 entropy bins, uint8. */
void rangesel_opts_init(struct rangesel_opts *o);

/*
 * A memo keeps what a selection computed from the data alone (the mse
 * method's tables), for the next selection on the same statistics in
 * another type: set o->memo to it for each selection on one tensor,
 * never for another's. The results are the same with or without it.
 * rangesel_memo_new: NULL when out of memory (select without one).
 */
struct rangesel_memo *rangesel_memo_new(void);
void rangesel_memo_free(struct rangesel_memo *m);

/*
 * Choose [*rmin, *rmax]. Fails when the method needs a histogram or
 * statistics the input lacks, or the histogram is malformed.
 */
int rangesel_select(const struct rangesel_stats *st,
    const struct rangesel_opts *o, float *rmin, float *rmax, struct err *e);

/*
 * The expected squared quantization error per value (the mse method's
 * objective) when quantizing over [rmin, rmax] with o->q; for tests.
 */
int rangesel_mse_error(const struct rangesel_stats *st,
    const struct rangesel_opts *o, float rmin, float rmax, double *mse,
    struct err *e);

#endif
