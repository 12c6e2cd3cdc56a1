/*
 * mixsearch_test: the greedy search against a fake evaluator whose
 * output noise is the sum of a weight per named tensor still produced in
 * 8 bits, over a floor of 1e-6 (60 dB). Two streams of uint8 activations
 * (4 elements each):
 *
 *   chain  in -> A -> t1 -> B -> t2 -> C -> out: promoting a tensor
 *          promotes its producer's and readers' outputs too, so only
 *          the graph input gains when the rest is promoted;
 *   fan    four graph inputs a, b, c, d, each read by its own node
 *          writing oa, ob, oc, od: eight candidates, of which the four
 *          inputs gain, a most, d least.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mixprec.h"
#include "mixsearch.h"
#include "stream.h"
#include "tensor.h"
#include "unit.h"

#define STAT	"\tdtype=float\tshape=1x4\tn=4\tnan=0\tinf=0\tmin=0\tmax=2" \
		"\tbatches=1\tbmin=0\tbmax=2\tsum=4\tsumsq=6\n"
#define ACT	"\trole=act\ttype=uint8\tscale=0.007843138\tzp=0" \
		"\tmethod=minmax\trmin=0\trmax=2\n"
#define T(x)	"stat\t" x STAT "qparam\t" x ACT

static const char chain[] =
    "#onnxq\t1.0\n"
    "node\tA\top=Sigmoid\tin=in\tout=t1\n"
    "node\tB\top=Tanh\tin=t1\tout=t2\n"
    "node\tC\top=Sigmoid\tin=t2\tout=out\n"
    T("in") T("t1") T("t2") T("out")
    "end\t11\n";

static const char fan[] =
    "#onnxq\t1.0\n"
    "node\tA\top=Sigmoid\tin=a\tout=oa\n"
    "node\tB\top=Sigmoid\tin=b\tout=ob\n"
    "node\tC\top=Sigmoid\tin=c\tout=oc\n"
    "node\tD\top=Sigmoid\tin=d\tout=od\n"
    T("a") T("b") T("c") T("d") T("oa") T("ob") T("oc") T("od")
    "end\t20\n";

struct fake {
	const char *names[4];
	double w[4];		/* noise while 8 bits */
	int runs, ranks;
};

static struct fake fake;
static const struct fake chain_noise = {
	{ "in", "t1", "t2", "out" }, { 0.001, 0.01, 0.001, 0.0001 }, 0, 0
};
static const struct fake fan_noise = {
	{ "a", "b", "c", "d" }, { 0.01, 0.005, 0.002, 0.001 }, 0, 0
};

static int
fake_run(void *ctx, const struct mixprec *mp, int n, double stop,
    double head_stop, struct mixsearch_score *sc, struct err *e)
{
	struct fake *f = ctx;
	double noise = 1e-6;

	(void)e;
	f->runs++;
	for (int i = 0; i < 4; i++) {
		int t = mixprec_tensor_find(mp, f->names[i]);
		int ty = mixprec_tensor_result_type(mp, t);

		if (ty == DT_UINT8)
			noise += f->w[i];
	}
	memset(sc, 0, sizeof *sc);
	sc->samples = n > 0 ? n : 4;
	sc->noise = sc->pnoise = sc->head = noise;
	if (n == 0 && (noise > stop || noise > head_stop)) {
		sc->samples = MIXSEARCH_HEAD;
		return 0;
	}
	sc->snr = -10 * log10(noise);
	sc->agree = NAN;
	return 0;
}

static void
fake_rank(void *ctx)
{
	((struct fake *)ctx)->ranks++;
}

/* The notes, one line each. */
static char notes[16384];

static void
note(void *ctx, const char *msg)
{
	(void)ctx;
	if (strlen(notes) + strlen(msg) + 2 < sizeof notes) {
		strcat(notes, msg);
		strcat(notes, "\n");
	}
}

/* The stream text, with f's noise. */
static struct mixprec *
load(const char *text, const struct fake *f)
{
	struct stream_reader *r;
	struct mixprec *mp = NULL;
	struct err e;
	FILE *fp = fmemopen((void *)text, strlen(text), "r");

	fake = *f;
	if (fp == NULL)
		return NULL;
	if ((r = stream_reader_new(fp, "chain", &e)) != NULL) {
		mp = mixprec_read(r, &e);
		if (mp == NULL)
			fprintf(stderr, "# %s\n", e.msg);
		stream_reader_free(r);
	}
	fclose(fp);
	return mp;
}

static int
search(struct mixprec *mp, double snr, double budget,
    struct mixsearch_result *res, struct err *e)
{
	struct mixsearch_eval ev = { 4, fake_run, fake_rank, &fake };
	struct mixsearch_opts o;

	mixsearch_opts_init(&o);
	o.target_snr = snr;
	o.budget = budget;
	o.note = note;
	fake.runs = fake.ranks = 0;
	notes[0] = '\0';
	return mixsearch_run(mp, &o, &ev, res, e);
}

static int
result_type(const struct mixprec *mp, const char *name)
{
	return mixprec_tensor_result_type(mp, mixprec_tensor_find(mp, name));
}

static void
test_cascade(void)
{
	struct mixsearch_result res;
	struct mixprec *mp;
	struct err e;

	REQUIRE((mp = load(chain, &chain_noise)) != NULL);
	CHECK_EQ_INT(search(mp, 25, NAN, &res, &e), 0);
	CHECK_EQ_INT(res.already, 0);
	CHECK_NEAR(res.base.snr, -10 * log10(0.012101), 1e-9);
	CHECK_NEAR(res.score.snr, -10 * log10(0.001101), 1e-9);
	CHECK_EQ_INT(res.runs, fake.runs);
	CHECK_EQ_INT(fake.ranks, 1);
	/* Promoting in makes A uint16, so t1 too. */
	CHECK_EQ_INT(result_type(mp, "in"), DT_UINT16);
	CHECK_EQ_INT(result_type(mp, "t1"), DT_UINT16);
	CHECK_EQ_INT(result_type(mp, "t2"), DT_UINT8);
	CHECK_EQ_INT(result_type(mp, "out"), DT_UINT8);
	CHECK_EQ_STR(notes,
	    "4 samples, 4 candidates (uint16); as quantized: snr 19.17 dB\n"
	    "all candidates promoted, on the 2 noisiest samples: 60.00 dB at "
	    "the probes\n"
	    "1 of 4 candidates gain on their own; together they would remove "
	    "8% of the noise\n"
	    "step 1: promoted 1 (in): snr 29.58 dB; 2 tensors promoted, 0 in "
	    "float, 50.00% of the elements\n");
	mixprec_free(mp);
}

static void
test_trimmed(void)
{
	struct mixsearch_result res;
	struct mixprec *mp;
	struct err e;

	REQUIRE((mp = load(fan, &fan_noise)) != NULL);
	CHECK_EQ_INT(search(mp, 25, NAN, &res, &e), 0);
	/* All four meet it; of those, a and b are enough, a alone is not. */
	CHECK_EQ_INT(result_type(mp, "a"), DT_UINT16);
	CHECK_EQ_INT(result_type(mp, "b"), DT_UINT16);
	CHECK_EQ_INT(result_type(mp, "c"), DT_UINT8);
	CHECK_EQ_INT(result_type(mp, "d"), DT_UINT8);
	CHECK_NEAR(res.score.snr, -10 * log10(0.003001), 1e-9);
	CHECK(strstr(notes, "\n4 of 8 candidates gain on their own;") != NULL);
	CHECK(strstr(notes, "\nstep 1: promoted 4 (a, b, c, d): snr 60.00 dB; "
	    "8 tensors promoted, 0 in float, 100.00% of the elements\n"
	    "step 2: the first 2 of those: snr 25.23 dB; 4 tensors promoted, "
	    "0 in float, 50.00% of the elements\n"
	    "step 3: the first 1 of those: snr 20.97 dB; ") != NULL);
	mixprec_free(mp);
}

static void
test_met_already(void)
{
	struct mixsearch_result res;
	struct mixprec *mp;
	struct err e;

	REQUIRE((mp = load(fan, &fan_noise)) != NULL);
	CHECK_EQ_INT(search(mp, 10, NAN, &res, &e), 0);
	CHECK_EQ_INT(res.already, 1);
	CHECK_EQ_INT(res.runs, 1);
	CHECK(strstr(notes, "\nthe target is met already: nothing promoted\n")
	    != NULL);
	CHECK_EQ_INT(result_type(mp, "a"), DT_UINT8);
	mixprec_free(mp);
}

static void
test_not_reached(void)
{
	struct mixsearch_result res;
	struct mixprec *mp;
	struct err e;

	REQUIRE((mp = load(fan, &fan_noise)) != NULL);
	/* 60 dB at best: measured from the top, then alone, both short. */
	CHECK_EQ_INT(search(mp, 70, NAN, &res, &e), -1);
	CHECK_EQ_STR(e.msg, "target not reached");
	CHECK(strstr(notes, "\nmeasuring each candidate alone in the "
	    "quantized model instead\n") != NULL);
	CHECK(strstr(notes, "\ntarget not reached: at best, with 4 of 4 "
	    "candidates, snr 60.00 dB\n") != NULL);
	mixprec_free(mp);
}

static void
test_budget(void)
{
	struct mixsearch_result res;
	struct mixprec *mp;
	struct err e;

	REQUIRE((mp = load(fan, &fan_noise)) != NULL);
	/* Every candidate promotes an eighth of the elements or more. */
	CHECK_EQ_INT(search(mp, 25, 10, &res, &e), -1);
	CHECK_EQ_STR(e.msg, "target not reached within the budget: no "
	    "candidate improves the model");
	CHECK(strstr(notes, "0 of 8 candidates gain on their own") != NULL);
	mixprec_free(mp);
}

UNIT_MAIN(test_cascade, test_trimmed, test_met_already, test_not_reached,
    test_budget)
