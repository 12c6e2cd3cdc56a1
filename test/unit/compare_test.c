/*
 * compare_test: the error metrics of lib/compare.c on hand-computed
 * cases (SNR pooled and worst sample, MSE, max abs, cosine and its edge
 * cases, non-finite pairs, mismatches, top-1 with numpy's argmax ties and
 * NaN, labels), and lib/svgplot.c's escaping and lib/progress.c's line
 * on a plain file. The vector code against the plain loops it replaced,
 * bit for bit, on random values with NaN, infinities and signed zeros.
 * Needs nothing but libonnxq.
 */
#include <math.h>
#include <stdint.h>

#include "compare.h"
#include "progress.h"
#include "svgplot.h"
#include "unit.h"

static void
mk(struct tensor *t, int rank, const int64_t *dims, const float *v)
{
	struct err e;

	memset(t, 0, sizeof *t);
	if (tensor_alloc(t, DT_FLOAT, rank, dims, &e) == 0)
		memcpy(t->data, v, (size_t)t->nelem * sizeof *v);
}

static void
test_snr_mse_cosine(void)
{
	int64_t d[] = { 4 };
	float r1[] = { 1, 2, 3, 4 }, x1[] = { 1, 2, 3, 5 };
	float r2[] = { 2, 0, 0, 0 }, x2[] = { 1, 0, 0, 0 };
	struct tensor a, b, c, f;
	struct compare cm;

	mk(&a, 1, d, x1);
	mk(&b, 1, d, r1);
	mk(&c, 1, d, x2);
	mk(&f, 1, d, r2);
	compare_init(&cm);
	CHECK_EQ_INT(compare_add(&cm, &a, &b, 0), 0);
	CHECK_EQ_INT(compare_add(&cm, &c, &f, 1), 0);
	/* signal 30 + 4, noise 1 + 1 */
	CHECK_NEAR(compare_snr(&cm), 10 * log10(34.0 / 2), 1e-12);
	CHECK_NEAR(compare_mse(&cm), 2.0 / 8, 1e-15);
	CHECK_NEAR(compare_max_abs(&cm), 1, 0);
	/* per sample: 10 log10(30) and 10 log10(4): the second is worse */
	CHECK_NEAR(cm.worst_snr, 10 * log10(4.0), 1e-12);
	CHECK_EQ_INT(cm.worst_sample, 1);
	/* x.r = 34 + 2, |x|^2 = 39 + 1, |r|^2 = 34 */
	CHECK_NEAR(compare_cosine(&cm), 36 / sqrt(40.0 * 34), 1e-12);
	CHECK_EQ_INT(cm.samples, 2);
	tensor_release(&a);
	tensor_release(&b);
	tensor_release(&c);
	tensor_release(&f);
}

static void
test_edges(void)
{
	int64_t d[] = { 2 }, d3[] = { 3 };
	float z[] = { 0, 0 }, one[] = { 1, 0 }, nan2[] = { NAN, 1 },
	    inf2[] = { INFINITY, 1 }, three[] = { 1, 2, 3 };
	struct tensor zt, ot, nt, it, t3;
	struct compare cm;

	mk(&zt, 1, d, z);
	mk(&ot, 1, d, one);
	mk(&nt, 1, d, nan2);
	mk(&it, 1, d, inf2);
	mk(&t3, 1, d3, three);
	/* Exact: inf dB, cosine 1 even for zeros. */
	compare_init(&cm);
	compare_add(&cm, &zt, &zt, 0);
	CHECK(compare_snr(&cm) == INFINITY);
	CHECK_NEAR(compare_cosine(&cm), 1, 0);
	/* A zero reference with an error: -inf dB, cosine 0. */
	compare_add(&cm, &ot, &zt, 1);
	CHECK(compare_snr(&cm) == -INFINITY);
	CHECK_NEAR(compare_cosine(&cm), 0, 0);
	CHECK_EQ_INT(cm.worst_sample, 1);
	/* NaN against NaN agrees; NaN against a number does not. */
	compare_init(&cm);
	compare_add(&cm, &nt, &nt, 0);
	CHECK(compare_snr(&cm) == INFINITY);
	CHECK_EQ_INT(cm.nelem, 1);
	compare_add(&cm, &nt, &it, 1);
	CHECK(compare_snr(&cm) == -INFINITY);
	CHECK(compare_max_abs(&cm) == INFINITY);
	CHECK(cm.worst_snr == -INFINITY);
	/* Shape and type differences are mismatches. */
	compare_init(&cm);
	CHECK_EQ_INT(compare_add(&cm, &t3, &ot, 0), 1);
	CHECK_EQ_INT(cm.nmismatch, 1);
	CHECK(isnan(compare_mse(&cm)));
	CHECK(isnan(compare_snr(&cm)));
	CHECK(isnan(compare_worst_snr(&cm)));
	CHECK(isnan(compare_cosine(&cm)));
	CHECK(isnan(compare_agreement(&cm)));
	tensor_release(&zt);
	tensor_release(&ot);
	tensor_release(&nt);
	tensor_release(&it);
	tensor_release(&t3);
}

static void
test_top1(void)
{
	int64_t d[] = { 1, 3, 4 }, d2[] = { 1, 1 };
	/* rows: tie (first wins), NaN (first NaN wins), plain */
	float x[] = { 2, 5, 5, 1, 0, NAN, 9, NAN, 1, 2, 3, 4 };
	float r[] = { 0, 5, 1, 1, 0, 1, 9, 0, 4, 3, 2, 1 };
	int64_t labels[] = { 1, 1, 3 }, bad[] = { 1, 1 };
	float s[] = { 1 };
	struct tensor xt, rt, st;
	struct compare cm;

	mk(&xt, 3, d, x);
	mk(&rt, 3, d, r);
	mk(&st, 2, d2, s);
	CHECK(compare_is_classifier(&xt));
	CHECK(!compare_is_classifier(&st));
	CHECK_EQ_INT(compare_rows(&xt), 3);
	CHECK_EQ_INT(compare_argmax(&xt, 0), 1);
	CHECK_EQ_INT(compare_argmax(&xt, 1), 1);
	CHECK_EQ_INT(compare_argmax(&xt, 2), 3);
	CHECK_EQ_INT(compare_argmax(&rt, 1), 2);
	compare_init(&cm);
	CHECK_EQ_INT(compare_add_top1(&cm, &xt, &rt, labels, 3), 0);
	/* rows agree: 1==1, 1!=2, 3!=0 */
	CHECK_EQ_INT(cm.rows, 3);
	CHECK_EQ_INT(cm.agree, 1);
	CHECK_NEAR(compare_agreement(&cm), 100.0 / 3, 1e-12);
	CHECK_EQ_INT(cm.correct_x, 3);
	CHECK_EQ_INT(cm.correct_ref, 1);
	CHECK_NEAR(compare_accuracy_x(&cm), 100, 0);
	/* Labels that do not fit the rows, or no classifier: nothing added. */
	CHECK_EQ_INT(compare_add_top1(&cm, &xt, &rt, bad, 2), 1);
	CHECK_EQ_INT(compare_add_top1(&cm, &st, &st, NULL, 0), 1);
	CHECK_EQ_INT(cm.rows, 3);
	tensor_release(&xt);
	tensor_release(&rt);
	tensor_release(&st);
}

static char *
slurp(FILE *fp)
{
	long n;
	char *s;

	fflush(fp);
	n = ftell(fp);
	rewind(fp);
	s = calloc((size_t)n + 1, 1);
	if (s && fread(s, 1, (size_t)n, fp) != (size_t)n)
		s[0] = '\0';
	return s;
}

static float
rnd_value(uint64_t *st, int special)
{
	uint64_t r = unit_rand64_r(st);

	switch (special ? r % 32 : 31) {
	case 0: return NAN;
	case 1: return INFINITY;
	case 2: return -INFINITY;
	case 3: return 0.0f;
	case 4: return -0.0f;
	case 5: return 7.5f;		/* ties for the largest */
	default:
		return ((float)(r >> 40) / (float)(1 << 24) - 0.5f) * 10;
	}
}

/* The sums as compare.c kept them before its vector code. */
static void
ref_sums(const float *a, const float *b, int64_t n, struct compare *c)
{
	double sig[4] = { 0 }, noise[4] = { 0 }, xx[4] = { 0 }, xr[4] = { 0 };
	double mx[4] = { 0 };

	for (int64_t i = 0; i < n; i++) {
		double xv = a[i], r = b[i], d = xv - r, ad = fabs(d);
		int j = (int)(i % 4);

		if (!isfinite(d)) {
			if (!((isnan(xv) && isnan(r)) || (!isnan(xv) &&
			    xv == r)))
				c->nonfinite++;
			continue;
		}
		c->nelem++;
		sig[j] += r * r;
		noise[j] += d * d;
		xx[j] += xv * xv;
		xr[j] += xv * r;
		mx[j] = ad > mx[j] ? ad : mx[j];
	}
	for (int j = 0; j < 4; j++) {
		c->signal += sig[j];
		c->noise += noise[j];
		c->xx += xx[j];
		c->xr += xr[j];
		c->max_abs = mx[j] > c->max_abs ? mx[j] : c->max_abs;
	}
}

static int64_t
ref_argmax(const float *v, int64_t n)
{
	int64_t best = 0;

	for (int64_t j = 0; j < n; j++) {
		if (isnan(v[j]))
			return j;
		if (j == 0 || v[j] > v[best])
			best = j;
	}
	return best;
}

static void
test_vector_code(void)
{
	static const int64_t lens[] = { 1, 3, 4, 7, 8, 9, 17, 64, 1001 };
	uint64_t st = 5;
	struct err e;

	for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++)
		for (int special = 0; special < 2; special++) {
			int64_t n = lens[k], d[2] = { 3, n };
			struct tensor x, r;
			struct compare got, want;

			REQUIRE(tensor_alloc(&x, DT_FLOAT, 2, d, &e) == 0);
			REQUIRE(tensor_alloc(&r, DT_FLOAT, 2, d, &e) == 0);
			for (int64_t i = 0; i < x.nelem; i++) {
				((float *)x.data)[i] = rnd_value(&st, special);
				((float *)r.data)[i] = i % 5 ? rnd_value(&st,
				    special) : ((float *)x.data)[i];
			}
			compare_init(&got);
			compare_init(&want);
			compare_add(&got, &x, &r, 0);
			ref_sums(x.data, r.data, x.nelem, &want);
			CHECK(got.nelem == want.nelem);
			CHECK(got.nonfinite == want.nonfinite);
			CHECK(memcmp(&got.signal, &want.signal, 8) == 0);
			CHECK(memcmp(&got.noise, &want.noise, 8) == 0);
			CHECK(memcmp(&got.xx, &want.xx, 8) == 0);
			CHECK(memcmp(&got.xr, &want.xr, 8) == 0);
			CHECK(memcmp(&got.max_abs, &want.max_abs, 8) == 0);
			for (int64_t row = 0; row < 3; row++)
				CHECK(compare_argmax(&x, row) == ref_argmax(
				    (const float *)x.data + row * n, n));
			tensor_release(&x);
			tensor_release(&r);
		}
}

static void
test_svgplot(void)
{
	double x[] = { 0, 1, 2 }, y[] = { 10, INFINITY, NAN };
	const char *tips[] = { "a<b>&\"c\"", "bad \xff byte", NULL };
	struct svgplot_series s = { "l&g", "#123456", SVGPLOT_LINE, 3, x, y,
	    tips };
	struct svgplot p = { "t<", "x", "y", 0, 0, &s, 1 };
	FILE *fp = tmpfile();
	struct err e;
	char *out;

	REQUIRE(fp != NULL);
	CHECK_EQ_INT(svgplot_write(fp, &p, &e), 0);
	out = slurp(fp);
	REQUIRE(out != NULL);
	CHECK(strstr(out, "<title>a&lt;b&gt;&amp;&quot;c&quot;</title>") !=
	    NULL);
	CHECK(strstr(out, "<title>bad ? byte</title>") != NULL);
	CHECK(strstr(out, ">t&lt;</text>") != NULL);
	CHECK(strstr(out, ">l&amp;g</text>") != NULL);
	/* NaN is left out: two markers with tips, the legend's has none. */
	CHECK(strstr(out, "</svg>\n") != NULL);
	free(out);
	fclose(fp);
}

static void
test_progress(void)
{
	struct progress p;
	FILE *fp = tmpfile();
	char *out;

	REQUIRE(fp != NULL);
	progress_init(&p, fp, 0, "prog", "samples", 10);
	progress_update(&p, 3);
	progress_end(&p);
	out = slurp(fp);
	CHECK_EQ_STR(out, "");
	free(out);
	rewind(fp);
	progress_init(&p, fp, 1, "prog", "samples", 4);
	progress_update(&p, 0);
	progress_update(&p, 4);
	progress_end(&p);
	out = slurp(fp);
	REQUIRE(out != NULL);
	CHECK(strncmp(out, "\rprog: [....................] 0/4 samples",
	    41) == 0);
	CHECK(strstr(out, "\rprog: [####################] 4/4 samples") !=
	    NULL);
	/* Erased at the end: spaces, then a carriage return. */
	CHECK(out[strlen(out) - 1] == '\r');
	free(out);
	fclose(fp);
}

UNIT_MAIN(test_snr_mse_cosine, test_edges, test_top1, test_vector_code,
    test_svgplot, test_progress)
