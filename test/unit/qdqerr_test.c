/*
 * qdqerr_test: lib/qdqerr.c on test/data/verify's pair over its six
 * samples, against the figures test/data/verify/reference.py computes
 * with numpy alone (verify2.bats checks the whole report against it):
 * weights compared once at init, activations carried and alone, clipping
 * and grid use, and the report orders.
 */
#include "dataset.h"
#include "interp.h"
#include "prep.h"
#include "qdqerr.h"
#include "unit.h"

#define DIR "test/data/verify/"

static int
find(const struct qdqerr *q, const char *dq)
{
	for (int i = 0; i < q->match.npairs; i++)
		if (strcmp(q->match.pairs[i].dq, dq) == 0)
			return i;
	return -1;
}

static void
release(struct tensor *in, struct tensor *fout, struct tensor *qout)
{
	tensor_release(in);
	for (int i = 0; i < 4; i++) {
		tensor_release(&fout[i]);
		tensor_release(&qout[i]);
	}
}

/* Run both models on every sample, as onnx-verify does. */
static int
run_all(struct qdqerr *q, const struct model *fm, const struct model *qm,
    struct err *e)
{
	struct interp_opts fo = { .threads = 1,
	    .observe = qdqerr_observe_fp32, .observe_ctx = q };
	struct interp_opts qo = { .threads = 1,
	    .observe = qdqerr_observe_q, .observe_ctx = q };
	struct interp *fi = interp_new(fm, &fo, e);
	struct interp *qi = interp_new(qm, &qo, e);
	const char *dirs[] = { DIR "data" }, *in_name, *out_name;
	int dt, rank, r = -1;
	int64_t dims[TENSOR_MAX_RANK];
	struct dataset *ds = dataset_open(dirs, 1, e);
	struct dataset_spec spec = { 1, &in_name, &dt, 1, &out_name };
	struct tensor in = { 0 }, fout[4] = { { 0 } }, qout[4] = { { 0 } };

	if (!fi || !qi || !ds || interp_noutputs(fi) > 4 ||
	    interp_noutputs(qi) > 4)
		goto out;
	in_name = interp_input_name(fi, 0);
	out_name = interp_output_name(fi, 0);
	dt = interp_input_type(fi, 0, &rank, dims);
	for (int s = 0; s < dataset_count(ds); s++) {
		q->sample = s;
		if (dataset_load(ds, s, &spec, &in, NULL, e) < 0 ||
		    interp_run(fi, &in, fout, e) < 0 ||
		    interp_run(qi, &in, qout, e) < 0)
			goto out;
		qdqerr_drop_held(q);
		release(&in, fout, qout);
	}
	r = 0;
out:
	release(&in, fout, qout);
	dataset_free(ds);
	interp_free(fi);
	interp_free(qi);
	return r;
}

static void
test_clf(void)
{
	struct err e = { "" };
	struct model *m[3] = { NULL, NULL, NULL }, *fm, *pm, *qm;
	const char *path[3] = { DIR "clf.onnx", DIR "clf.onnx",
	    DIR "clf-q.onnx" };
	struct qdqerr q;
	int w1, b1, x, a1, order[8];

	for (int i = 0; i < 3; i++)
		REQUIRE((m[i] = model_load(path[i], &e)) != NULL);
	fm = m[0], pm = m[1], qm = m[2];
	REQUIRE(prep_model(pm, NULL, &e) == 0);
	REQUIRE(qdqerr_init(&q, fm, pm, qm, 1, &e) == 0);
	REQUIRE(q.match.npairs == 8);
	w1 = find(&q, "W1_DequantizeLinear_Output");
	b1 = find(&q, "b1_DequantizeLinear_Output");
	x = find(&q, "x_DequantizeLinear_Output");
	a1 = find(&q, "a1_DequantizeLinear_Output");
	REQUIRE(w1 >= 0 && b1 >= 0 && x >= 0 && a1 >= 0);
	/* Weights: compared at init, carried the same as alone. */
	CHECK_NEAR(qdqerr_own_snr(&q, w1), 46.736484615984956, 1e-6);
	CHECK_NEAR(qdqerr_carried_snr(&q, w1), 46.736484615984956, 1e-6);
	CHECK_NEAR(qdqerr_grid_pct(&q, w1), 99.6078431372549, 1e-9);
	CHECK_NEAR(qdqerr_own_snr(&q, b1), 56.273296987660615, 1e-6);
	CHECK(isnan(qdqerr_grid_pct(&q, b1)));
	CHECK_EQ_INT(q.stats[b1].qtype, DT_INT32);
	/* Activations: nothing before a run. */
	CHECK(isnan(qdqerr_own_snr(&q, x)));
	CHECK(isnan(qdqerr_clip_pct(&q, x)));
	REQUIRE(run_all(&q, fm, qm, &e) == 0);
	CHECK_EQ_INT(q.stats[x].own.samples, 6);
	CHECK_NEAR(qdqerr_own_snr(&q, x), 31.521141681388368, 1e-6);
	CHECK_NEAR(qdqerr_carried_snr(&q, x), 31.521141681388368, 1e-6);
	CHECK_NEAR(qdqerr_grid_pct(&q, x), 24.313725490196077, 1e-9);
	CHECK_NEAR(qdqerr_clip_pct(&q, x), 0, 0);
	/* a1 feeds only a Relu: compared within [0, inf). */
	CHECK_NEAR(qdqerr_own_snr(&q, a1), 10.145828089208848, 1e-6);
	CHECK_NEAR(qdqerr_carried_snr(&q, a1), 10.124706663475802, 1e-6);
	CHECK_NEAR(qdqerr_clip_pct(&q, a1), 6.944444444444445, 1e-9);
	/* Lowest own SNR first; graph order by first reader. */
	REQUIRE(qdqerr_sort(&q, QDQERR_SORT_OWN, order) == 0);
	CHECK_EQ_INT(order[0], a1);
	CHECK_EQ_INT(order[7], b1);
	REQUIRE(qdqerr_sort(&q, QDQERR_SORT_GRAPH, order) == 0);
	for (int i = 1; i < 8; i++)
		CHECK(q.match.pairs[order[i - 1]].order <=
		    q.match.pairs[order[i]].order);
	qdqerr_free(&q);
	model_free(fm);
	model_free(pm);
	model_free(qm);
}

UNIT_MAIN(test_clf)
