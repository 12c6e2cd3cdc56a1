/*
 * qdqmatch_test: lib/qdqmatch.c on test/data/verify's pair (clf.onnx and
 * its quantized clf-q.onnx): what each DequantizeLinear stands for, a
 * converted tensor followed back through DQ -> Q, a graph output that
 * keeps its name, a Relu-only source's clamp, weights against the
 * prepped model, and a pair run on its own weight.
 */
#include "prep.h"
#include "qdqmatch.h"
#include "unit.h"

#define DIR "test/data/verify/"

static const struct qdqmatch_pair *
pair(const struct qdqmatch *m, const char *dq)
{
	int i = qdqmatch_pair_of(m, dq);

	for (int k = 0; i < 0 && k < m->npairs; k++)
		if (strcmp(m->pairs[k].dq, dq) == 0)
			i = k;
	return i < 0 ? NULL : &m->pairs[i];
}

static void
test_clf(void)
{
	struct err e = { "" };
	struct model *fm = model_load(DIR "clf.onnx", &e);
	struct model *pm = model_load(DIR "clf.onnx", &e);
	struct model *qm = model_load(DIR "clf-q.onnx", &e);
	const struct qdqmatch_pair *p;
	struct tensor ref = { 0 }, w = { 0 }, qv = { 0 }, dq = { 0 };
	struct qdqmatch m;
	int k;

	REQUIRE(fm && pm && qm && prep_model(pm, NULL, &e) == 0);
	REQUIRE(qdqmatch_init(&m, fm, pm, qm, &e) == 0);
	CHECK_EQ_INT(m.npairs, 8);
	CHECK_EQ_INT(m.nunmatched, 0);
	CHECK((p = pair(&m, "h_convert_DequantizeLinear_Output")) != NULL);
	if (p) {
		CHECK_EQ_STR(p->name, "re lu/h%");
		CHECK_EQ_INT(p->role, QDQMATCH_ACT);
		CHECK_EQ_INT(p->qtype, DT_UINT16);
		CHECK(p->has_own);
		CHECK_EQ_STR(m.sources[p->src].name, "re lu/h%");
	}
	CHECK((p = pair(&m, "logits")) != NULL);
	if (p)
		CHECK_EQ_STR(p->name, "logits");
	CHECK((k = qdqmatch_source(&m, "a1")) >= 0);
	if (k >= 0) {
		CHECK(m.sources[k].clamp);
		CHECK_NEAR(m.sources[k].lo, 0, 0);
		CHECK(isinf(m.sources[k].hi));
	}
	CHECK((p = pair(&m, "b1_DequantizeLinear_Output")) != NULL);
	if (p) {
		CHECK_EQ_STR(p->name, "b1");
		CHECK_EQ_INT(p->role, QDQMATCH_BIAS);
		CHECK_EQ_STR(qdqmatch_role_name(p->role), "bias");
	}
	CHECK_EQ_INT(qdqmatch_pair_of(&m, "W1_DequantizeLinear_Output"), -1);
	CHECK((p = pair(&m, "W1_DequantizeLinear_Output")) != NULL);
	if (p) {
		CHECK_EQ_STR(p->name, "W1");
		CHECK_EQ_INT(p->role, QDQMATCH_WEIGHT);
		CHECK(p->qnode == NULL);
		REQUIRE(qdqmatch_weights(&m, p, &ref, &w, &e) == 0);
		CHECK_EQ_INT(w.dtype, DT_INT8);
		REQUIRE(qdqmatch_run(p, &w, 1, &qv, &dq, &e) == 0);
		CHECK_EQ_INT(qv.dtype, DT_INT8);
		CHECK(dq.dtype == DT_FLOAT && dq.nelem == ref.nelem);
		/* Dequantized within half a step of the weight, per channel. */
		for (int64_t i = 0; i < ref.nelem; i++)
			if (fabs(tensor_get(&dq, i) - tensor_get(&ref, i)) >
			    0.1 * fabs(tensor_get(&ref, i)) + 0.05) {
				CHECK(!"weight far from its dequantized value");
				break;
			}
	}
	CHECK_EQ_INT(qdqmatch_source(&m, "W1"), -1);
	tensor_release(&ref);
	tensor_release(&w);
	tensor_release(&qv);
	tensor_release(&dq);
	qdqmatch_free(&m);
	CHECK_EQ_INT(m.npairs, 0);
	model_free(fm);
	model_free(pm);
	model_free(qm);
}

static void
test_no_graph(void)
{
	struct err e = { "" };
	struct model *fm = model_load(DIR "clf.onnx", &e);
	struct model *qm = model_load(DIR "clf-q.onnx", &e);
	Onnx__GraphProto *g;
	struct qdqmatch m;

	REQUIRE(fm && qm);
	g = qm->proto->graph;
	qm->proto->graph = NULL;
	CHECK_EQ_INT(qdqmatch_init(&m, fm, fm, qm, &e), -1);
	CHECK_EQ_STR(e.msg, "model without a graph");
	qm->proto->graph = g;
	model_free(fm);
	model_free(qm);
}

UNIT_MAIN(test_clf, test_no_graph)
