/* rangesel: see rangesel.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rangesel.h"
#include "tensor.h"

static const char *const method_names[] = {
	[RANGESEL_MINMAX] = "minmax",
	[RANGESEL_ENTROPY] = "entropy",
	[RANGESEL_PERCENTILE] = "percentile",
	[RANGESEL_DISTRIBUTION] = "distribution",
	[RANGESEL_MSE] = "mse",
};

#define NMETHODS (int)(sizeof method_names / sizeof method_names[0])

const char *
rangesel_method_name(int method)
{
	if (method < 0 || method >= NMETHODS)
		return NULL;
	return method_names[method];
}

int
rangesel_method_parse(const char *s)
{
	for (int i = 0; i < NMETHODS; i++)
		if (strcmp(s, method_names[i]) == 0)
			return i;
	return -1;
}

void
rangesel_opts_init(struct rangesel_opts *o)
{
	memset(o, 0, sizeof *o);
	o->memo = NULL;
	o->method = RANGESEL_MINMAX;
	o->percentile = RANGESEL_PERCENTILE_DEFAULT;
	o->entropy_bins = RANGESEL_ENTROPY_BINS_DEFAULT;
	o->q.type = DT_UINT8;
}

/* Bins must be ascending and disjoint, as hist_bins() gives them. */
static int
check_bins(const struct rangesel_stats *st, struct err *e)
{
	if (st->bins == NULL || st->nbins == 0)
		return err_set(e, "no histogram");
	for (size_t i = 0; i < st->nbins; i++) {
		const struct hist_bin *b = &st->bins[i];

		if (!isfinite(b->lo) || !isfinite(b->hi) || b->lo > b->hi)
			return err_set(e, "histogram bin %zu [%g, %g) is malformed",
			    i, (double)b->lo, (double)b->hi);
		if (i > 0 && b->lo < st->bins[i - 1].hi)
			return err_set(e, "histogram bins %zu and %zu overlap or "
			    "are out of order", i - 1, i);
	}
	return 0;
}

static float
clampf(double v, double lo, double hi)
{
	if (v < lo)
		v = lo;
	if (v > hi)
		v = hi;
	return (float)v;
}

/* A magnitude interval [a, b] holding c values (a == b: all at a). */
struct mbin {
	double a, b, c;
};

static int
mbin_cmp(const void *x, const void *y)
{
	const struct mbin *p = x, *q = y;

	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	if (p->b != q->b)
		return p->b < q->b ? -1 : 1;
	return 0;
}

/* |x| bins, ascending, equal intervals merged; *n set. NULL on no memory. */
static struct mbin *
fold_bins(const struct rangesel_stats *st, size_t *n, struct err *e)
{
	struct mbin *m;
	size_t k = 0, j;

	if (st->nbins > SIZE_MAX / 2 / sizeof *m ||
	    (m = malloc(2 * st->nbins * sizeof *m)) == NULL) {
		err_nomem(e);
		return NULL;
	}
	for (size_t i = 0; i < st->nbins; i++) {
		double lo = st->bins[i].lo, hi = st->bins[i].hi;
		double c = (double)st->bins[i].count;

		if (c == 0)
			continue;
		if (hi <= 0) {
			m[k++] = (struct mbin){ -hi, -lo, c };
		} else if (lo >= 0) {
			m[k++] = (struct mbin){ lo, hi, c };
		} else {
			/* A bin across zero (not from hist.c): split it. */
			m[k++] = (struct mbin){ 0, -lo, c * -lo / (hi - lo) };
			m[k++] = (struct mbin){ 0, hi, c * hi / (hi - lo) };
		}
	}
	qsort(m, k, sizeof *m, mbin_cmp);
	j = 0;
	for (size_t i = 0; i < k; i++) {
		if (j > 0 && m[j - 1].a == m[i].a && m[j - 1].b == m[i].b)
			m[j - 1].c += m[i].c;
		else
			m[j++] = m[i];
	}
	*n = j;
	return m;
}

/* The value below which `target` of the values of m[0..n) lie. */
static double
quantile(const struct mbin *m, size_t n, double target)
{
	double cum = 0;

	for (size_t i = 0; i < n; i++) {
		if (m[i].c <= 0)
			continue;
		if (cum + m[i].c >= target) {
			double f = (target - cum) / m[i].c;

			if (f < 0)
				f = 0;
			if (f > 1)
				f = 1;
			return m[i].a + (m[i].b - m[i].a) * f;
		}
		cum += m[i].c;
	}
	return n ? m[n - 1].b : 0;
}

static int
sel_percentile(const struct rangesel_stats *st, const struct rangesel_opts *o,
    float *rmin, float *rmax, struct err *e)
{
	struct mbin *m;
	double total = 0, p = o->percentile, lo, hi;
	size_t n;

	if (!(p > 0 && p <= 100))
		return err_set(e, "percentile %g is not in (0, 100]", p);
	if (check_bins(st, e) < 0)
		return -1;
	if (!o->per_side) {
		if ((m = fold_bins(st, &n, e)) == NULL)
			return -1;
		for (size_t i = 0; i < n; i++)
			total += m[i].c;
		hi = quantile(m, n, total * p / 100.0);
		lo = -hi;
	} else {
		/* Signed bins are already ascending: use them directly. */
		if ((m = malloc(st->nbins * sizeof *m)) == NULL)
			return err_nomem(e);
		for (size_t i = 0; i < st->nbins; i++) {
			m[i] = (struct mbin){ st->bins[i].lo, st->bins[i].hi,
			    (double)st->bins[i].count };
			total += m[i].c;
		}
		n = st->nbins;
		lo = quantile(m, n, total * (100.0 - p) / 200.0);
		hi = quantile(m, n, total * (1.0 - (100.0 - p) / 200.0));
	}
	free(m);
	*rmin = clampf(lo, st->min, st->max);
	*rmax = clampf(hi, st->min, st->max);
	return 0;
}

/* Grid points on one side of zero the entropy method quantizes |x| to. */
static int64_t
entropy_levels(const struct rangesel_stats *st, const struct qparams_opts *q)
{
	int64_t qmin, qmax;

	if (qparams_qrange(q->type, q->reduce_range, q->symmetric, &qmin,
	    &qmax) < 0)
		return -1;
	if (!q->symmetric && (st->min >= 0 || st->max <= 0))
		return qmax - qmin + 1;
	return (qmax - qmin) / 2 + 1;
}

/* KL divergences closer than this are equal (their sums' rounding). */
#define KL_TIE 1e-12L

/* Prefix sums over the bins 0..k-1 of h, for kl_of. */
struct klpre {
	const double *h;
	const long double *sh, *shl;	/* sum of h, of h log h */
	const uint32_t *snz;		/* non-empty bins */
	const double *logz;		/* log k */
};

/* KL(P || Q) of candidate i (see kl_search) in *d; 0 when undefined. */
static int
kl_of(const struct klpre *pre, size_t nb, size_t levels, size_t i,
    long double *d)
{
	const long double *sh = pre->sh;
	long double total = sh[nb], out = total - sh[i], hl = pre->h[i - 1];
	long double plast = hl + out, a, b = 0, ml = 0;
	uint32_t zl = 0;

	if (total <= 0 || sh[i] <= 0)
		return 0;
	if (out > 0 && hl == 0) {
		*d = INFINITY;	/* P has mass where Q has none */
		return 1;
	}
	a = pre->shl[i - 1] + (plast > 0 ? plast * logl(plast) : 0);
	for (size_t l = 0; l < levels; l++) {
		/* the bins k with k * levels / i == l */
		size_t k0 = (l * i + levels - 1) / levels;
		size_t k1 = ((l + 1) * i + levels - 1) / levels;

		zl = pre->snz[k1] - pre->snz[k0];
		if (zl == 0)
			continue;
		ml = sh[k1] - sh[k0];
		if (ml > 0)
			b += ml * (log((double)ml) - pre->logz[zl]);
	}
	/* the last bin is in the last level, not empty when hl != 0 */
	if (out > 0)
		b += out * (log((double)ml) - pre->logz[zl]);
	*d = (a - b) / total + logl(sh[i] / total);
	return 1;
}

/*
 * The KL search proper: for each candidate i in [start, nb], P is the
 * first i bins of h with the rest (the outliers) added to the last, Q
 * their quantization to `levels` levels (bin k to level k * levels / i;
 * a level's mass spread evenly over its non-empty bins). *besti is the
 * last i of least KL(P || Q) (nb when none is defined).
 *
 * Written out, with S the total and H_i the first i bins' sum,
 *   KL = (sum_k p_k log p_k - sum_l m_l log(m_l / z_l)
 *        - outliers log q_last) / S + log(H_i / S)
 * where level l holds mass m_l in z_l non-empty bins: prefix sums of h,
 * of h log h and of the non-empty bins make a candidate cost O(levels),
 * not O(i). Sums are kept in long double, since a level's mass is a
 * difference of two of them.
 */
static int
kl_search(const double *h, size_t nb, size_t levels, size_t start,
    size_t *besti)
{
	struct klpre pre;
	long double *sh, *shl, *kl, best = INFINITY;
	double *logz;
	uint32_t *snz;
	size_t k;

	*besti = nb + 1;	/* none yet */
	sh = malloc((nb + 1) * sizeof *sh);
	shl = malloc((nb + 1) * sizeof *shl);
	snz = malloc((nb + 1) * sizeof *snz);
	logz = malloc((nb + 1) * sizeof *logz);
	kl = malloc((nb + 1) * sizeof *kl);
	if (!sh || !shl || !snz || !logz || !kl) {
		free(sh);
		free(shl);
		free(snz);
		free(logz);
		free(kl);
		return -1;
	}
	sh[0] = shl[0] = 0;
	snz[0] = 0;
	/* the search's hot loop takes a log per level: of m_l; z_l's here */
	for (k = 1; k <= nb; k++)
		logz[k] = log((double)k);
	for (k = 0; k < nb; k++) {
		sh[k + 1] = sh[k] + h[k];
		shl[k + 1] = shl[k] + (h[k] > 0 ? h[k] * logl(h[k]) : 0);
		snz[k + 1] = snz[k] + (h[k] != 0);
	}
	pre.sh = sh;
	pre.shl = shl;
	pre.snz = snz;
	pre.logz = logz;
	pre.h = h;
	if (start == 0)
		start = 1;
	/* candidates are independent: split them over the threads */
#pragma omp parallel for schedule(static)
	for (size_t c = start; c <= nb; c++)
		if (!kl_of(&pre, nb, levels, c, &kl[c]))
			kl[c] = NAN;
	for (k = start; k <= nb; k++)
		if (kl[k] < best)
			best = kl[k];	/* NaN (undefined) never is */
	/*
	 * The last minimum: ties go to the wider range. Sums that differ
	 * only in their rounding (a KL of 0 computes as +-1e-16) are ties.
	 */
	for (k = nb; k >= start && *besti == nb + 1; k--)
		if (kl[k] <= best + KL_TIE)
			*besti = k;
	if (*besti == nb + 1)
		*besti = nb;
	free(sh);
	free(shl);
	free(snz);
	free(logz);
	free(kl);
	return 0;
}

/*
 * The KL search over |x| of the bins of st, magnitudes up to amax > 0,
 * quantized to `levels` < nb levels: the threshold *t.
 */
static int
entropy_fold(const struct rangesel_stats *st, const struct rangesel_opts *o,
    int64_t levels, double amax, double *t, struct err *e)
{
	struct mbin *m = NULL;
	double *h = NULL;
	double width;
	size_t nb = (size_t)o->entropy_bins, n, besti, start, first;
	int rc = -1;

	if ((m = fold_bins(st, &n, e)) == NULL)
		return -1;
	h = calloc(nb, sizeof *h);
	if (!h) {
		err_nomem(e);
		goto out;
	}

	/* Spread each magnitude bin evenly over the linear bins it covers. */
	width = amax / (double)nb;
	for (size_t i = 0; i < n; i++) {
		double a = m[i].a, b = fmin(m[i].b, amax);
		size_t k0, k1;

		if (b <= a) {
			k0 = (size_t)fmin(a / width, (double)(nb - 1));
			h[k0] += m[i].c;
			continue;
		}
		k0 = (size_t)fmin(a / width, (double)(nb - 1));
		k1 = (size_t)fmin(b / width, (double)(nb - 1));
		for (size_t k = k0; k <= k1; k++) {
			double lo = fmax(a, (double)k * width);
			double hi = fmin(b, (double)(k + 1) * width);

			if (k == nb - 1)
				hi = b;
			if (hi > lo)
				h[k] += m[i].c * (hi - lo) / (b - a);
		}
	}
	/* The first occupied bin, before bin 0 is overwritten. */
	for (first = 0; first < nb && h[first] == 0; first++)
		continue;
	if (nb > 1)
		h[0] = h[1];

	/*
	 * TensorRT starts at 128 of 2048 bins, counted from zero since its
	 * data has mass there. Data away from zero (a LayerNorm's standard
	 * deviation in [0.4, 1.7]) must get as many occupied bins: with a
	 * few, P (outliers piled into the last) and Q normalise to the same
	 * spike, KL is 0, and T lands at the minimum, clipping everything.
	 */
	start = (size_t)levels > nb / 16 ? (size_t)levels : nb / 16;
	if (first < nb)
		start += first;
	if (start > nb)
		start = nb;
	if (kl_search(h, nb, (size_t)levels, start, &besti) < 0) {
		err_nomem(e);
		goto out;
	}
	*t = (double)besti * width;
	rc = 0;
out:
	free(m);
	free(h);
	return rc;
}

/* The threshold of one side of zero (sign > 0: x >= 0, else x <= 0). */
static int
entropy_side(const struct rangesel_stats *st, const struct rangesel_opts *o,
    int64_t levels, int sign, double *t, struct err *e)
{
	struct rangesel_stats side = *st;
	struct hist_bin *b;
	size_t k = 0;
	int rc;

	*t = sign > 0 ? st->max : -st->min;
	if (*t <= 0)
		return 0;
	if ((b = malloc((st->nbins ? st->nbins : 1) * sizeof *b)) == NULL)
		return err_nomem(e);
	for (size_t i = 0; i < st->nbins; i++)
		if (sign > 0 ? st->bins[i].hi > 0 || st->bins[i].lo == 0 :
		    st->bins[i].lo < 0 || st->bins[i].hi == 0)
			b[k++] = st->bins[i];
	side.bins = b;
	side.nbins = k;
	rc = entropy_fold(&side, o, levels, *t, t, e);
	free(b);
	return rc;
}

static int
sel_entropy(const struct rangesel_stats *st, const struct rangesel_opts *o,
    float *rmin, float *rmax, struct err *e)
{
	double amax, t, tneg;
	int64_t levels;
	size_t nb = (size_t)o->entropy_bins;

	if (o->entropy_bins <= 0 || o->entropy_bins > RANGESEL_ENTROPY_BINS_MAX)
		return err_set(e, "entropy bins %d not in 1..%d",
		    o->entropy_bins, RANGESEL_ENTROPY_BINS_MAX);
	if (check_bins(st, e) < 0)
		return -1;
	if ((levels = entropy_levels(st, &o->q)) < 0)
		return err_set(e, "cannot quantize to type %d", o->q.type);
	amax = fmax(fabs(st->min), fabs(st->max));
	if (amax == 0 || (size_t)levels >= nb) {
		/* Nothing to clip, or the grid is finer than the histogram. */
		*rmin = (float)st->min;
		*rmax = (float)st->max;
		return 0;
	}
	if (!o->q.symmetric && st->min < 0 && st->max > 0) {
		/*
		 * An asymmetric grid has a bound on each side: search each
		 * on its own values. Folded onto |x|, a spike on the short
		 * side (a hardswish's [-0.04, 0]) hides the long side's
		 * tail in its own bin, and T lands at the spike, clipping
		 * the tail that carries the signal (rec: 0% accuracy).
		 */
		int64_t qmin, qmax, ls;

		/* The longer side gets most of the grid: all of it, as an
		 * upper bound; the shorter the rest. */
		if (qparams_qrange(o->q.type, o->q.reduce_range, 0, &qmin,
		    &qmax) < 0)
			return err_set(e, "cannot quantize to type %d",
			    o->q.type);
		ls = qmax - qmin + 1;
		if ((size_t)ls >= nb)
			ls = levels;
		if (entropy_side(st, o, st->max >= -st->min ? ls : levels, 1,
		    &t, e) < 0 ||
		    entropy_side(st, o, st->max >= -st->min ? levels : ls, -1,
		    &tneg, e) < 0)
			return -1;
		*rmin = clampf(-tneg, st->min, st->max);
		*rmax = clampf(t, st->min, st->max);
		return 0;
	}
	if (entropy_fold(st, o, levels, amax, &t, e) < 0)
		return -1;
	*rmin = clampf(-t, st->min, st->max);
	*rmax = clampf(t, st->min, st->max);
	return 0;
}

static int
sel_distribution(const struct rangesel_stats *st,
    const struct rangesel_opts *o, float *rmin, float *rmax, struct err *e)
{
	int64_t qmin, qmax;
	double n, gstd, w;

	if (st->n == 0 || !isfinite(st->mean) || !isfinite(st->std) ||
	    st->std < 0)
		return err_set(e, "no mean and standard deviation");
	if (qparams_qrange(o->q.type, o->q.reduce_range, o->q.symmetric,
	    &qmin, &qmax) < 0)
		return err_set(e, "cannot quantize to type %d", o->q.type);
	n = (double)(qmax - qmin + 1);
	gstd = sqrt((n * n - 1) / 12.0);
	w = st->std / gstd * (double)(qmax - qmin);
	*rmin = clampf(st->mean - w / 2, st->min, st->max);
	*rmax = clampf(st->mean + w / 2, st->min, st->max);
	return 0;
}

/* Count, sum and sum of squares of the values below t (prefix tables). */
struct moments {
	long double n, s1, s2;
};

/*
 * The bins and their prefix moments. A search evaluates thousands of
 * nearby grids: where each of mse_of's four bounds fell last time (hint)
 * is where the next one's search starts.
 */
struct msetab {
	const struct hist_bin *bins;
	size_t nbins;
	struct moments *pre;	/* pre[k]: bins 0..k-1 */
	size_t hint[4];
	struct coarse *coarse;	/* the search's bounds, or NULL */
	double seed;		/* some grid's error, to skip by; or inf */
};

static int
msetab_init(struct msetab *t, const struct rangesel_stats *st, struct err *e)
{
	t->bins = st->bins;
	t->nbins = st->nbins;
	memset(t->hint, 0, sizeof t->hint);
	t->coarse = NULL;
	t->seed = INFINITY;
	if (st->nbins >= SIZE_MAX / sizeof *t->pre ||
	    (t->pre = malloc((st->nbins + 1) * sizeof *t->pre)) == NULL)
		return err_nomem(e);
	t->pre[0] = (struct moments){ 0, 0, 0 };
	for (size_t k = 0; k < st->nbins; k++) {
		long double lo = st->bins[k].lo, hi = st->bins[k].hi;
		long double c = (long double)st->bins[k].count;

		t->pre[k + 1].n = t->pre[k].n + c;
		t->pre[k + 1].s1 = t->pre[k].s1 + c * (lo + hi) / 2;
		t->pre[k + 1].s2 = t->pre[k].s2 +
		    c * (lo * lo + lo * hi + hi * hi) / 3;
	}
	return 0;
}

/*
 * The number of bins with lo < x (lo ascends, so they come first):
 * galloping from *hint, to bound it, then halving; *hint set to it.
 * The count is the same from any hint.
 */
static size_t
bins_below(const struct msetab *t, double x, size_t *hint)
{
	size_t h = *hint < t->nbins ? *hint : t->nbins, lo = 0, hi = t->nbins;
	size_t step;

	if (h < t->nbins && t->bins[h].lo < x) {
		lo = h + 1;
		for (step = 1; h + step < t->nbins; step *= 2) {
			if (!(t->bins[h + step].lo < x)) {
				hi = h + step;
				break;
			}
			lo = h + step + 1;
		}
	} else {
		hi = h;
		for (step = 1; step <= h; step *= 2) {
			if (t->bins[h - step].lo < x) {
				lo = h - step + 1;
				break;
			}
			hi = h - step;
		}
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->bins[mid].lo < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	*hint = lo;
	return lo;
}

static struct moments
below(const struct msetab *t, double x, size_t *hint)
{
	size_t lo = bins_below(t, x, hint);
	struct moments m;

	if (lo == 0)
		return t->pre[0];
	m = t->pre[lo - 1];
	{
		const struct hist_bin *b = &t->bins[lo - 1];
		long double c = (long double)b->count, blo = b->lo, bhi = b->hi;
		long double f, tt = x;

		if (bhi <= x)
			return t->pre[lo];
		f = (tt - blo) / (bhi - blo);
		m.n += c * f;
		m.s1 += c * f * (blo + tt) / 2;
		m.s2 += c * f * (blo * blo + blo * tt + tt * tt) / 3;
	}
	return m;
}

/* The grid qparams_compute() chooses for [a, b]: its bounds and step. */
struct grid {
	long double L, U, s;
};

static int
grid_of(const struct qparams_opts *q, float a, float b, struct grid *g,
    struct err *e)
{
	double dlo, dhi;
	float scale;
	int32_t zp;

	if (qparams_compute(q, a, b, &scale, &zp, e) < 0)
		return -1;
	qparams_represented(q, scale, zp, &dlo, &dhi);
	g->L = dlo;
	g->U = dhi;
	g->s = scale;
	return 0;
}

/* Expected squared error per value of grid g. */
static double
mse_of(struct msetab *t, const struct grid *g)
{
	struct moments lo, hi, clo, chi, all = t->pre[t->nbins];
	long double L = g->L, U = g->U, s = g->s, err, nin, n;

	lo = below(t, (double)L, &t->hint[0]);
	hi = below(t, (double)U, &t->hint[1]);
	/* Values at or above U (U itself clips to nothing: error 0). */
	n = all.n - hi.n;
	err = lo.n * L * L - 2 * L * lo.s1 + lo.s2;
	err += (all.s2 - hi.s2) - 2 * U * (all.s1 - hi.s1) + n * U * U;
	/* Values in the cell around zero round to zero: error x^2. */
	clo = below(t, (double)fmaxl(L, -s / 2), &t->hint[2]);
	chi = below(t, (double)fminl(U, s / 2), &t->hint[3]);
	if (chi.n < clo.n)
		chi = clo;
	err += chi.s2 - clo.s2;
	nin = (hi.n - lo.n) - (chi.n - clo.n);
	if (nin > 0)
		err += nin * s * s / 12;
	if (err < 0)
		err = 0;	/* rounding in the sums */
	return all.n > 0 ? (double)(err / all.n) : 0;
}

/*
 * A lower bound of mse_of() (mse_past), from the moments at COARSE + 1
 * points c[]
 * spread over the data's range: the error of the values clipped below
 * L is at least that below the last point at or below L (it shrinks as
 * L does), above U at least that above the first point at or above U;
 * the values inside between the points inside [L, U), less those of the
 * zero cell widened to the points around it, take at least s^2/12 each.
 * The search skips a grid whose bound is past the best error found plus
 * `slack`, far more than the sums' rounding (so it never skips a grid
 * mse_of() would rate below the best: the result is the same).
 */
#define COARSE 4096

struct coarse {
	double c[COARSE + 1];
	double x0, step, inv;
	long double n[COARSE + 1];	/* values below c[j] */
	long double elo[COARSE + 1];	/* error of those clipped at c[j] */
	long double ehi[COARSE + 1];	/* of those at or above c[j] */
	long double elo_min[COARSE + 1];	/* least of elo[j..COARSE] */
	long double ehi_min[COARSE + 1];	/* least of ehi[0..j] */
	long double total;
	double slack;
};

static void
coarse_init(struct coarse *k, struct msetab *t, double lo, double hi)
{
	struct moments all = t->pre[t->nbins], m;
	size_t hint = 0;

	k->x0 = lo;
	k->step = (hi - lo) / COARSE;
	k->inv = COARSE / (hi - lo);
	k->total = all.n;
	for (int j = 0; j <= COARSE; j++) {
		long double c;

		k->c[j] = j == COARSE ? hi : lo + k->step * j;
		c = k->c[j];
		m = below(t, k->c[j], &hint);
		k->n[j] = m.n;
		k->elo[j] = m.n * c * c - 2 * c * m.s1 + m.s2;
		k->ehi[j] = (all.s2 - m.s2) - 2 * c * (all.s1 - m.s1) +
		    (all.n - m.n) * c * c;
	}
	k->elo_min[COARSE] = k->elo[COARSE];
	for (int j = COARSE - 1; j >= 0; j--)
		k->elo_min[j] = k->elo[j] < k->elo_min[j + 1] ? k->elo[j] :
		    k->elo_min[j + 1];
	k->ehi_min[0] = k->ehi[0];
	for (int j = 1; j <= COARSE; j++)
		k->ehi_min[j] = k->ehi[j] < k->ehi_min[j - 1] ? k->ehi[j] :
		    k->ehi_min[j - 1];
	k->slack = 1e-12 * fmax(lo * lo, hi * hi);
}

/* The last point at or below x, -1 when none. */
static int
coarse_at(const struct coarse *k, double x)
{
	double f = (x - k->x0) * k->inv;	/* a guess, made good below */
	int j;

	if (!(x >= k->c[0]))
		return -1;
	j = f >= COARSE ? COARSE : (int)f;
	while (j < COARSE && k->c[j + 1] <= x)
		j++;
	while (j > 0 && k->c[j] > x)
		j--;
	return j;
}

/* The first point at or above x, COARSE + 1 when none. */
static int
coarse_from(const struct coarse *k, double x)
{
	int j = coarse_at(k, x);

	return j >= 0 && k->c[j] == x ? j : j + 1;
}

/* 1 when the bound for grid g is past `cut` (+ slack). */
static int
mse_past(const struct coarse *k, const struct grid *g, double cut)
{
	double L = (double)g->L, U = (double)g->U;
	long double s = g->s, zlo = -s / 2, zhi = s / 2;
	long double lim = ((long double)cut + k->slack) * k->total;
	long double err = 0, nin = 0, zero;
	int jl, ju, i1, i2, z1, z2;
	double zl, zh;

	if (k->total <= 0)
		return 0;
	/* the clipped values first: often enough alone */
	jl = coarse_at(k, L);
	ju = coarse_from(k, U);
	if (jl >= 0)
		err += k->elo[jl];
	if (ju <= COARSE)
		err += k->ehi[ju];
	if (err > lim)
		return 1;
	/* as mse_of()'s zero cell: fmaxl(L, -s/2), fminl(U, s/2) */
	zl = (double)(g->L > zlo ? g->L : zlo);
	zh = (double)(g->U < zhi ? g->U : zhi);
	i1 = jl >= 0 && k->c[jl] == L ? jl : jl + 1;
	i2 = ju <= COARSE && k->c[ju] == U ? ju : ju - 1;
	z1 = coarse_at(k, zl);
	z2 = coarse_from(k, zh);
	if (i1 < i2)
		nin = k->n[i2] - k->n[i1];
	zero = (z2 <= COARSE ? k->n[z2] : k->total) - (z1 >= 0 ? k->n[z1] : 0);
	if (zero > 0)
		nin -= zero;
	if (nin > 0)
		err += nin * s * s / 12;
	return err > lim;
}

/*
 * Where the grids of candidates [a, b], a in [a1, a2] <= 0 <= b in
 * [b1, b2], can lie: qparams_compute's asymmetric grid (no pow2, no
 * min_real_range) puts its ends within half a step of a and b: with
 * d = b - a and q = qmax - qmin, zp = round(qmin - a/s), so
 * |L - a| <= |a| 2^-24 + scale (1/2 + 2^-35), scale <= d/q (1 + 2^-22),
 * and U = L + scale q, |scale q - d| <= d 2^-22 (the roundings of
 * b - a in float, of s and a/s in double, of scale to float). *lmin
 * and *umax bound every such grid's L from below and U from above, with
 * room to spare (2^-18 d). 0 when that does not hold (other options,
 * or a step that may fall under FLT_MIN, where the grid is [qmin, qmax]).
 */
static int
box_ends(const struct qparams_opts *q, float a1, float a2, float b1,
    float b2, double *lmin, double *umax)
{
	int64_t qmin, qmax;
	double dmax = (double)b2 - (double)a1, step;

	if (q->symmetric || q->pow2 || q->min_real_range > 0 ||
	    !(a1 <= a2 && a2 <= 0 && 0 <= b1 && b1 <= b2) ||
	    !((double)b1 - (double)a2 >= 1e-30) || !isfinite(dmax) ||
	    qparams_qrange(q->type, q->reduce_range, 0, &qmin, &qmax) < 0 ||
	    qmax <= qmin)
		return 0;
	step = dmax / (double)(qmax - qmin) * (1 + 0x1p-20);
	*lmin = (double)a1 - (step / 2 + dmax * 0x1p-18);
	*umax = (double)b2 + (step / 2 + dmax * 0x1p-18);
	return 1;
}

/*
 * 1 when every grid of candidates [a, b], a in [a1, a2], b in [b1, b2]
 * (as box_ends), would be skipped by mse_past() at `cut` (or any lower
 * cut) in its first test, the clipped values': the computed bound here
 * is at most each grid's there (the least of elo and ehi over the
 * points its ends can fall on; sums rounded the same way), so skipping
 * them all changes nothing, not even which grids mse_of() rates.
 */
static int
box_past(const struct msetab *t, const struct qparams_opts *q, float a1,
    float a2, float b1, float b2, double cut)
{
	const struct coarse *k = t->coarse;
	long double lim, lo, hi;
	double lmin, umax;
	int jl, ju;

	if (k == NULL || !(cut < INFINITY) || k->total <= 0 ||
	    !box_ends(q, a1, a2, b1, b2, &lmin, &umax))
		return 0;
	lim = ((long double)cut + k->slack) * k->total;
	/* L >= lmin: each grid's jl >= coarse_at(lmin) (none is 0) */
	jl = coarse_at(k, lmin);
	lo = k->elo_min[jl < 0 ? 0 : jl];
	if (jl < 0 && lo > 0)
		lo = 0;
	/* U <= umax: each grid's ju <= coarse_from(umax) (past the end: 0) */
	ju = coarse_from(k, umax);
	hi = k->ehi_min[ju > COARSE ? COARSE : ju];
	if (ju > COARSE && hi > 0)
		hi = 0;
	return lo + hi > lim;
}

static int
mse_try(struct msetab *t, const struct qparams_opts *q, double a,
    double b, double *best, float *ba, float *bb, struct err *e)
{
	struct grid g;
	double m, cut;

	if (grid_of(q, (float)a, (float)b, &g, e) < 0)
		return -1;
	cut = *best < t->seed ? *best : t->seed;
	if (t->coarse && cut < INFINITY && mse_past(t->coarse, &g, cut))
		return 0;
	m = mse_of(t, &g);
	if (m < *best) {
		*best = m;
		*ba = (float)a;
		*bb = (float)b;
	}
	return 0;
}

/*
 * Lower t->seed to the error of grid [a, b], one the search will try:
 * the search then skips, from its start, the grids bounded past the
 * least of these (the first minimum it finds stays the same).
 */
static int
mse_seed(struct msetab *t, const struct qparams_opts *q, double a,
    double b, struct err *e)
{
	struct grid g;
	double m;

	if (grid_of(q, (float)a, (float)b, &g, e) < 0)
		return -1;
	if ((m = mse_of(t, &g)) < t->seed)
		t->seed = m;
	return 0;
}

/*
 * The tables of a histogram (its prefix moments and coarse bounds)
 * depend on the data, not on the grid: a memo keeps them for the next
 * selection on the same statistics (the caller's promise; the sizes and
 * the range are checked too).
 */
struct rangesel_memo {
	int valid;
	size_t nbins;
	double amin, amax;
	uint64_t n;
	struct moments *pre;
	struct coarse *coarse;	/* NULL when there was no memory */
};

struct rangesel_memo *
rangesel_memo_new(void)
{
	struct rangesel_memo *m = malloc(sizeof *m);

	if (m) {
		m->valid = 0;
		m->pre = NULL;
		m->coarse = NULL;
	}
	return m;
}

void
rangesel_memo_free(struct rangesel_memo *m)
{
	if (m == NULL)
		return;
	free(m->pre);
	free(m->coarse);
	free(m);
}

/* t's tables from m when they are st's: 1, else 0. */
static int
memo_take(const struct rangesel_memo *m, struct msetab *t,
    const struct rangesel_stats *st, double amin, double amax)
{
	if (m == NULL || !m->valid || m->nbins != st->nbins ||
	    m->n != st->n || m->amin != amin || m->amax != amax)
		return 0;
	t->bins = st->bins;
	t->nbins = st->nbins;
	memset(t->hint, 0, sizeof t->hint);
	t->seed = INFINITY;
	t->pre = m->pre;
	t->coarse = m->coarse;
	return 1;
}

/* Hand t's tables to m (which frees them), replacing what it had. */
static void
memo_keep(struct rangesel_memo *m, const struct msetab *t,
    const struct rangesel_stats *st, double amin, double amax)
{
	if (m == NULL)
		return;
	free(m->pre);
	free(m->coarse);
	m->valid = 1;
	m->nbins = st->nbins;
	m->n = st->n;
	m->amin = amin;
	m->amax = amax;
	m->pre = t->pre;
	m->coarse = t->coarse;
}

/* Seeds taken every SEED_STEP grids of the search's first pass. */
#define SEED_STEP 8

/* Grids the search tries to skip at once: SPAN of a row. */
#define SPAN 8

static int
span_end(int i, int n)
{
	return i + SPAN - 1 < n ? i + SPAN - 1 : n;
}

/* box_past() for candidates [a, b1 .. b2] at the search's cut. */
static int
span_past(const struct msetab *t, const struct qparams_opts *q, double a,
    double b1, double b2, double best)
{
	double cut = best < t->seed ? best : t->seed;

	return box_past(t, q, (float)a, (float)a, (float)b1, (float)b2, cut);
}

static int
sel_mse(const struct rangesel_stats *st, const struct rangesel_opts *o,
    float *rmin, float *rmax, struct err *e)
{
	struct msetab t;
	double amin = fmin(st->min, 0), amax = fmax(st->max, 0);
	double best = INFINITY;
	float ba = (float)st->min, bb = (float)st->max;
	int rc = -1;

	if (check_bins(st, e) < 0)
		return -1;
	if (amin == 0 && amax == 0) {
		*rmin = *rmax = 0;
		return 0;
	}
	if (memo_take(o->memo, &t, st, amin, amax)) {
		/* the tables of the tensor's last selection */
	} else {
		if (msetab_init(&t, st, e) < 0)
			return -1;
		/* Bounds to skip most grids by, when there is memory. */
		if ((t.coarse = malloc(sizeof *t.coarse)) != NULL)
			coarse_init(t.coarse, &t, amin, amax);
		memo_keep(o->memo, &t, st, amin, amax);
	}
	if (o->q.symmetric) {
		double A = fmax(-amin, amax), step;
		const int G = 512, R = 64;
		int k;

		for (k = SEED_STEP; t.coarse && k <= G; k += SEED_STEP)
			if (mse_seed(&t, &o->q, -A * k / G, A * k / G, e) < 0)
				goto out;
		for (k = 1; k <= G; k++)
			if (mse_try(&t, &o->q, -A * k / G, A * k / G, &best, &ba,
			    &bb, e) < 0)
				goto out;
		/* Refine between the neighbours of the best. */
		step = A / G;
		{
			double c = bb;

			for (k = -R; k <= R; k++) {
				double tt = c + step * k / R;

				if (tt <= 0 || tt > A)
					continue;
				if (mse_try(&t, &o->q, -tt, tt, &best, &ba,
				    &bb, e) < 0)
					goto out;
			}
		}
		*rmin = clampf(ba, st->min, st->max);
		*rmax = clampf(bb, st->min, st->max);
	} else {
		int G = (amin == 0 || amax == 0) ? 1024 : 128, R = 16;
		int ia, ib, na = amin < 0 ? G : 0, nbb = amax > 0 ? G : 0;
		double sa = -amin / G, sb = amax / G, ca, cb;

		for (ia = 0; t.coarse && ia <= na; ia += SEED_STEP)
			for (ib = 0; ib <= nbb; ib += SEED_STEP)
				if ((ia || ib) && mse_seed(&t, &o->q,
				    amin * ia / G, amax * ib / G, e) < 0)
					goto out;
		for (ia = 0; ia <= na; ia++)
			for (ib = 0; ib <= nbb; ib++) {
				if (ia == 0 && ib == 0)
					continue;
				if (ib % SPAN == 0 && span_past(&t, &o->q,
				    amin * ia / G, amax * ib / G,
				    amax * span_end(ib, nbb) / G, best)) {
					ib = span_end(ib, nbb);
					continue;
				}
				if (mse_try(&t, &o->q, amin * ia / G,
				    amax * ib / G, &best, &ba, &bb, e) < 0)
					goto out;
			}
		ca = ba;
		cb = bb;
		for (ia = amin < 0 ? -R : 0; ia <= (amin < 0 ? R : 0); ia++)
			for (ib = amax > 0 ? -R : 0; ib <= (amax > 0 ? R : 0);
			    ib++) {
				double a = ca + sa * ia / R, b = cb + sb * ib / R;

				if (a > 0 || a < amin || b < 0 || b > amax ||
				    (a == 0 && b == 0))
					continue;
				if (mse_try(&t, &o->q, a, b, &best, &ba, &bb,
				    e) < 0)
					goto out;
			}
		*rmin = clampf(ba, st->min, st->max);
		*rmax = clampf(bb, st->min, st->max);
	}
	rc = 0;
out:
	if (o->memo == NULL) {
		free(t.coarse);
		free(t.pre);
	}
	return rc;
}

int
rangesel_mse_error(const struct rangesel_stats *st,
    const struct rangesel_opts *o, float rmin, float rmax, double *mse,
    struct err *e)
{
	struct msetab t;
	struct grid g;

	if (check_bins(st, e) < 0)
		return -1;
	if (msetab_init(&t, st, e) < 0)
		return -1;
	if (grid_of(&o->q, rmin, rmax, &g, e) < 0) {
		free(t.pre);
		return -1;
	}
	*mse = mse_of(&t, &g);
	free(t.pre);
	return 0;
}

int
rangesel_select(const struct rangesel_stats *st, const struct rangesel_opts *o,
    float *rmin, float *rmax, struct err *e)
{
	int rc;

	if (!isfinite(st->min) || !isfinite(st->max) || st->min > st->max) {
		/* No finite values seen: nothing to choose from. */
		if (st->n == 0) {
			*rmin = *rmax = 0;
			return 0;
		}
		return err_set(e, "range [%g, %g] is not usable", st->min,
		    st->max);
	}
	switch (o->method) {
	case RANGESEL_MINMAX:
		if (o->moving_average) {
			if (!isfinite(st->mavg_min) || !isfinite(st->mavg_max))
				return err_set(e, "no per-batch minima and maxima");
			*rmin = (float)st->mavg_min;
			*rmax = (float)st->mavg_max;
		} else {
			*rmin = (float)st->min;
			*rmax = (float)st->max;
		}
		return 0;
	case RANGESEL_PERCENTILE:
		rc = sel_percentile(st, o, rmin, rmax, e);
		break;
	case RANGESEL_ENTROPY:
		rc = sel_entropy(st, o, rmin, rmax, e);
		break;
	case RANGESEL_DISTRIBUTION:
		rc = sel_distribution(st, o, rmin, rmax, e);
		break;
	case RANGESEL_MSE:
		rc = sel_mse(st, o, rmin, rmax, e);
		break;
	default:
		return err_set(e, "unknown range method %d", o->method);
	}
	if (rc < 0)
		return err_prefix(e, "%s", method_names[o->method]);
	return 0;
}
