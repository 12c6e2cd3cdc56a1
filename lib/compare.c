/*
 * compare: see compare.h.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "compare.h"

/*
 * The float loops in vector code, compiled for AVX2 and AVX-512 too and
 * picked at load time; the lanes are the sums and maxima the scalar
 * code keeps, in the same order, so results do not change (no
 * contraction into fused multiply-adds: -std=c11).
 */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
    !defined(__SANITIZE_ADDRESS__)
#define CMP_SIMD __attribute__((target_clones("arch=x86-64-v4", \
    "arch=x86-64-v3", "default")))
#else
#define CMP_SIMD
#endif

typedef float v4f __attribute__((vector_size(16)));
typedef double v4d __attribute__((vector_size(32)));
typedef int64_t v4l __attribute__((vector_size(32)));
typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));

void
compare_init(struct compare *c)
{
	memset(c, 0, sizeof *c);
	c->worst_snr = INFINITY;
	c->worst_sample = -1;
}

double
compare_snr_of(double signal, double noise)
{
	if (isnan(noise) || isinf(noise))
		return -INFINITY;
	if (noise == 0)
		return INFINITY;
	if (signal == 0)
		return -INFINITY;
	return 10 * log10(signal / noise);
}

/* One sample's sums, added to c at the end so the worst sample is known. */
struct sums {
	int64_t nelem, nonfinite;
	double signal, noise, xx, xr, max_abs;
};

static void
add_pair(struct sums *s, double x, double r)
{
	double d;

	if (isfinite(x) && isfinite(r)) {
		d = x - r;
		s->nelem++;
		s->signal += r * r;
		s->noise += d * d;
		s->xx += x * x;
		s->xr += x * r;
		if (fabs(d) > s->max_abs)
			s->max_abs = fabs(d);
		return;
	}
	/* NaN matches NaN, an infinity the same infinity. */
	if ((isnan(x) && isnan(r)) || (!isnan(x) && x == r))
		return;
	s->nonfinite++;
}

/*
 * Lane j of the sums: the pair (xv, r). Lanes are set by index, not by
 * address (clang allows no pointer to a vector's element).
 */
static void
lane_add(struct sums *s, v4d *sig, v4d *noise, v4d *xx, v4d *xr,
    v4d *mx, int j, double xv, double r, int64_t *skipped)
{
	double d = xv - r, ad;

	if (!isfinite(d)) {
		add_pair(s, xv, r);
		(*skipped)++;
		return;
	}
	ad = fabs(d);
	(*sig)[j] += r * r;
	(*noise)[j] += d * d;
	(*xx)[j] += xv * xv;
	(*xr)[j] += xv * r;
	(*mx)[j] = ad > (*mx)[j] ? ad : (*mx)[j];
}

/*
 * The common case, fast: four interleaved partial sums (in a fixed
 * order, so results do not vary from run to run), element i in lane
 * i % 4, four at a time; the difference of two floats is finite in
 * double exactly when both are finite, and a group with another pair
 * goes lane by lane, that pair through add_pair.
 */
static CMP_SIMD void
add_floats(struct sums *s, const float *a, const float *b, int64_t n)
{
	v4d sig = { 0 }, noise = { 0 }, xx = { 0 }, xr = { 0 }, mx = { 0 };
	const v4d big = { DBL_MAX, DBL_MAX, DBL_MAX, DBL_MAX };
	const v4l mag = { INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX };
	int64_t skipped = 0, i;

	for (i = 0; i + 4 <= n; i += 4) {
		v4f fa, fb;
		v4d xv, r, d, ad;
		v4l fin, gt;

		memcpy(&fa, a + i, sizeof fa);
		memcpy(&fb, b + i, sizeof fb);
		xv = __builtin_convertvector(fa, v4d);
		r = __builtin_convertvector(fb, v4d);
		d = xv - r;
		ad = (v4d)((v4l)d & mag);
		fin = ad <= big;		/* false for NaN */
		if (!(fin[0] & fin[1] & fin[2] & fin[3])) {
			for (int j = 0; j < 4; j++)
				lane_add(s, &sig, &noise, &xx, &xr, &mx, j,
				    xv[j], r[j], &skipped);
			continue;
		}
		sig += r * r;
		noise += d * d;
		xx += xv * xv;
		xr += xv * r;
		gt = ad > mx;
		mx = (v4d)(((v4l)ad & gt) | ((v4l)mx & ~gt));
	}
	for (int j = 0; i + j < n; j++)
		lane_add(s, &sig, &noise, &xx, &xr, &mx, j, a[i + j],
		    b[i + j], &skipped);
	s->nelem += n - skipped;
	for (int j = 0; j < 4; j++) {
		s->signal += sig[j];
		s->noise += noise[j];
		s->xx += xx[j];
		s->xr += xr[j];
		if (mx[j] > s->max_abs)
			s->max_abs = mx[j];
	}
}

int
compare_add(struct compare *c, const struct tensor *x,
    const struct tensor *ref, int64_t sample)
{
	struct sums s = { 0 };
	double snr;

	c->samples++;
	if (x->dtype != ref->dtype || !shape_equal(x, ref)) {
		c->nmismatch++;
		return 1;
	}
	if (x->dtype == DT_FLOAT)
		add_floats(&s, x->data, ref->data, x->nelem);
	else {
		for (int64_t i = 0; i < x->nelem; i++)
			add_pair(&s, tensor_get(x, i), tensor_get(ref, i));
	}
	c->nelem += s.nelem;
	c->nonfinite += s.nonfinite;
	c->signal += s.signal;
	c->noise += s.noise;
	c->xx += s.xx;
	c->xr += s.xr;
	if (s.max_abs > c->max_abs)
		c->max_abs = s.max_abs;
	snr = s.nonfinite ? -INFINITY : compare_snr_of(s.signal, s.noise);
	if (snr < c->worst_snr || c->worst_sample < 0) {
		c->worst_snr = snr;
		c->worst_sample = sample;
	}
	return 0;
}

int
compare_is_classifier(const struct tensor *t)
{
	return dtype_is_float(t->dtype) && (t->rank == 2 || t->rank == 3) &&
	    t->dims[t->rank - 1] >= 2;
}

int64_t
compare_rows(const struct tensor *t)
{
	if (t->rank < 1 || t->dims[t->rank - 1] == 0)
		return 0;
	return t->nelem / t->dims[t->rank - 1];
}

/*
 * The largest of n floats when none is NaN (eight lanes of v > m ? v : m:
 * for numbers the order does not matter), 0; else 1, *max not set.
 */
static CMP_SIMD int
float_max(const float *v, int64_t n, float *max)
{
	v8f m, x;
	v8i nan = { 0 }, gt;
	int64_t j;
	float best;

	if (n < 8) {
		best = v[0];
		for (j = 0; j < n; j++) {
			if (isnan(v[j]))
				return 1;
			best = v[j] > best ? v[j] : best;
		}
		*max = best;
		return 0;
	}
	memcpy(&m, v, sizeof m);
	for (j = 0; j + 8 <= n; j += 8) {
		memcpy(&x, v + j, sizeof x);
		nan |= x != x;
		gt = x > m;
		m = (v8f)(((v8i)x & gt) | ((v8i)m & ~gt));
	}
	best = m[0];
	for (int k = 1; k < 8; k++)
		best = m[k] > best ? m[k] : best;
	for (; j < n; j++) {
		nan[0] |= v[j] != v[j];
		best = v[j] > best ? v[j] : best;
	}
	for (int k = 0; k < 8; k++)
		if (nan[k])
			return 1;
	*max = best;
	return 0;
}

int64_t
compare_argmax(const struct tensor *t, int64_t row)
{
	int64_t n = t->dims[t->rank - 1], best = 0;
	double bv = 0;
	float m;

	/* float32 without NaN: the first element equal to the largest */
	if (t->dtype == DT_FLOAT && n > 0 && float_max((const float *)t->data +
	    row * n, n, &m) == 0) {
		const float *v = (const float *)t->data + row * n;

		while (v[best] != m)
			best++;
		return best;
	}
	for (int64_t j = 0; j < n; j++) {
		double v = t->dtype == DT_FLOAT ?
		    ((const float *)t->data)[row * n + j] :
		    tensor_get(t, row * n + j);

		if (isnan(v))
			return j;
		if (j == 0 || v > bv) {
			bv = v;
			best = j;
		}
	}
	return best;
}

int
compare_add_top1(struct compare *c, const struct tensor *x,
    const struct tensor *ref, const int64_t *labels, int64_t nlabels)
{
	int64_t rows;

	if (!compare_is_classifier(x) || x->dtype != ref->dtype ||
	    !shape_equal(x, ref))
		return 1;
	rows = compare_rows(x);
	if (labels && nlabels != rows)
		return 1;
	for (int64_t r = 0; r < rows; r++) {
		int64_t a = compare_argmax(x, r), b = compare_argmax(ref, r);

		c->rows++;
		c->agree += a == b;
		if (labels) {
			c->labeled++;
			c->correct_x += a == labels[r];
			c->correct_ref += b == labels[r];
		}
	}
	return 0;
}

double
compare_snr(const struct compare *c)
{
	if (c->nonfinite)
		return -INFINITY;
	if (c->samples == c->nmismatch)
		return NAN;
	return compare_snr_of(c->signal, c->noise);
}

double
compare_worst_snr(const struct compare *c)
{
	return c->samples == c->nmismatch ? NAN : c->worst_snr;
}

double
compare_mse(const struct compare *c)
{
	if (c->nonfinite)
		return INFINITY;
	return c->nelem ? c->noise / (double)c->nelem : NAN;
}

double
compare_max_abs(const struct compare *c)
{
	if (c->nonfinite)
		return INFINITY;
	return c->nelem ? c->max_abs : NAN;
}

double
compare_cosine(const struct compare *c)
{
	if (c->nelem == 0)
		return NAN;
	if (c->xx == 0 && c->signal == 0)
		return 1;
	if (c->xx == 0 || c->signal == 0)
		return 0;
	return c->xr / (sqrt(c->xx) * sqrt(c->signal));
}

static double
pct(int64_t k, int64_t n)
{
	return n ? 100.0 * (double)k / (double)n : NAN;
}

double
compare_agreement(const struct compare *c)
{
	return pct(c->agree, c->rows);
}

double
compare_accuracy_x(const struct compare *c)
{
	return pct(c->correct_x, c->labeled);
}

double
compare_accuracy_ref(const struct compare *c)
{
	return pct(c->correct_ref, c->labeled);
}
