/*
 * statderive_test: the statistics the calibration derives from other
 * tensors' (lib/statderive.c, lib/calib.c) are those it would compute.
 * Checks the plan of each node of the fixtures, then runs calib on them
 * batch by batch (random values with NaN, -0, subnormals, infinities and
 * the Clip bounds and their neighbours; a batch of two samples; a batch
 * of NaN only) for several histogram widths (statkern's and tstats'
 * paths, none) and thread counts, and compares every tensor's stat and
 * hist records with those of statistics computed from the values; and
 * that the derivations did happen (calib_tensor_derived), and not where
 * an infinity would be clipped. Needs the fixtures make check generates.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "calib.h"
#include "fixture.h"
#include "prep.h"
#include "statderive.h"
#include "statkern.h"
#include "stream.h"
#include "unit.h"

/* Tensors with statistics: x and the nodes' outputs. */
static int
not_constant(void *ctx, const char *name)
{
	const Onnx__GraphProto *g = ((const struct model *)ctx)->proto->graph;

	if (strcmp(name, "x") == 0)
		return 1;
	for (size_t k = 0; k < g->n_node; k++)
		for (size_t j = 0; j < g->node[k]->n_output; j++)
			if (strcmp(g->node[k]->output[j], name) == 0)
				return 1;
	return 0;
}

/* The plan of the node making name. */
static void
plan_of(const struct model *m, const char *name, struct statderive *d)
{
	const Onnx__GraphProto *g = m->proto->graph;

	memset(d, 0, sizeof *d);
	d->kind = -1;
	for (size_t k = 0; k < g->n_node; k++)
		for (size_t j = 0; j < g->node[k]->n_output; j++)
			if (strcmp(g->node[k]->output[j], name) == 0)
				statderive_plan(m, g->node[k], j, not_constant,
				    (void *)m, d);
}

static void
check_plan(const struct model *m, const char *name, int kind, float lo,
    float hi, int nsrc)
{
	struct statderive d;

	plan_of(m, name, &d);
	if (!unit_check_((int)d.kind == kind, __FILE__, __LINE__,
	    "%s: kind %d, want %d", name, (int)d.kind, kind) ||
	    kind != STATDERIVE_HIST)
		return;
	CHECK(d.lo == lo && d.hi == hi);
	CHECK_EQ_INT(d.nsrc, nsrc);
}

/* name is a copy of src. */
static void
check_copy(const struct model *m, const char *name, const char *src)
{
	struct statderive d;

	plan_of(m, name, &d);
	unit_check_(d.kind == STATDERIVE_COPY && d.nsrc == 1 &&
	    strcmp(d.src[0], src) == 0, __FILE__, __LINE__,
	    "%s: kind %d, want a copy of %s", name, (int)d.kind, src);
}

static void
test_plan(void)
{
	struct model *m = fixture_generated("statderive/derive.onnx");
	struct model *m10 = fixture_generated("statderive/clip10.onnx");

	REQUIRE(m && m10);
	check_plan(m, "r", STATDERIVE_HIST, 0, INFINITY, 1);
	check_plan(m, "c", STATDERIVE_HIST, 0, 6, 1);
	check_plan(m, "c2", STATDERIVE_HIST, -1.5f, 2.75f, 1);
	check_plan(m, "c3", STATDERIVE_HIST, 0.5f, INFINITY, 1);
	check_plan(m, "cd", STATDERIVE_NONE, 0, 0, 0);
	check_plan(m, "mn", STATDERIVE_NONE, 0, 0, 0);
	check_plan(m, "s", STATDERIVE_COPY, 0, 0, 0);
	check_plan(m, "u", STATDERIVE_COPY, 0, 0, 0);
	check_plan(m, "q", STATDERIVE_COPY, 0, 0, 0);
	check_plan(m, "i", STATDERIVE_COPY, 0, 0, 0);
	check_plan(m, "d", STATDERIVE_COPY, 0, 0, 0);
	check_plan(m, "t", STATDERIVE_HIST, -INFINITY, INFINITY, 1);
	check_plan(m, "f", STATDERIVE_COPY, 0, 0, 0);
	check_plan(m, "k", STATDERIVE_HIST, -INFINITY, INFINITY, 2);
	check_plan(m, "kw", STATDERIVE_NONE, 0, 0, 0);
	check_plan(m, "sw", STATDERIVE_NONE, 0, 0, 0);
	check_copy(m, "a0", "x");
	check_copy(m, "an", "x");
	check_copy(m, "s0", "x");
	check_copy(m, "m1", "x");
	check_copy(m, "d1", "x");
	check_copy(m, "s", "r");
	check_plan(m, "sx", STATDERIVE_NONE, 0, 0, 0);
	check_plan(m, "dx", STATDERIVE_NONE, 0, 0, 0);
	check_plan(m, "a6", STATDERIVE_NONE, 0, 0, 0);
	check_plan(m, "mw", STATDERIVE_NONE, 0, 0, 0);
	check_plan(m10, "c", STATDERIVE_HIST, -2, 3, 1);
	check_plan(m10, "r", STATDERIVE_HIST, 0, INFINITY, 1);
	model_free(m);
	model_free(m10);
}

/* Statistics computed from the values, as the interpreter makes them. */
#define MAXT 48
struct ref {
	int mbits;
	struct statkern *k;
	int n;
	char *name[MAXT];
	struct tstats ts[MAXT];
};

static int
ref_observe(void *ctx, const char *name, const struct tensor *t,
    struct err *e)
{
	struct ref *r = ctx;
	int i = 0;

	if (t->dtype != DT_FLOAT)
		return 0;
	while (i < r->n && strcmp(r->name[i], name) != 0)
		i++;
	if (i == r->n) {
		if (r->n == MAXT)
			return err_set(e, "too many tensors");
		r->name[r->n] = strdup(name);
		if (tstats_init(&r->ts[r->n++], r->mbits, e) < 0)
			return -1;
	}
	tstats_add_shape(&r->ts[i], t->rank, t->dims);
	return r->k ? statkern_add_batch(r->k, &r->ts[i], t->data,
	    (size_t)t->nelem, e) : tstats_add_batch(&r->ts[i], t->data,
	    (size_t)t->nelem, e);
}

/* The stat and hist records of ts, malloc'd. */
static char *
text_of(const struct tstats *ts, const char *name)
{
	char *text = NULL;
	size_t len;
	FILE *fp = open_memstream(&text, &len);
	struct stream_writer *w = stream_writer_new(fp, "mem");
	struct err e;

	tstats_write(ts, name, w, 1, &e);
	stream_write_end(w, &e);
	stream_writer_free(w);
	fclose(fp);
	return text;
}

/*
 * Batch b of n samples: random values with the bounds and their
 * neighbours; kind 1 adds NaN and infinities, kind 2 is NaN only.
 */
static void
fill(struct tensor *x, int n, int kind)
{
	static const float special[] = { 0, -0.0f, 6, -1.5f, 2.75f, 0.5f,
		-2, 3, 1e-40f, -1e-40f, 1e30f, -1e30f };
	int64_t dims[4] = { n, 4, 64, 128 };
	struct err e;
	float *v;

	REQUIRE(tensor_alloc(x, DT_FLOAT, 4, dims, &e) == 0);
	v = x->data;
	for (int64_t i = 0; i < x->nelem; i++) {
		uint64_t u = unit_rand64();
		float s = special[u % (sizeof special / sizeof *special)];

		switch (u >> 60) {
		case 0:
		case 1:
			v[i] = s;
			break;
		case 2:
			v[i] = nextafterf(s, (u >> 8) & 1 ? INFINITY :
			    -INFINITY);
			break;
		case 3:
			v[i] = kind ? NAN : s;
			break;
		case 4:
			v[i] = kind == 1 ? ((u >> 8) & 1 ? INFINITY :
			    -INFINITY) : s;
			break;
		default:
			v[i] = (float)((double)(u >> 11) / 9007199254740992.0 *
			    16 - 8);
		}
		if (kind == 2)
			v[i] = NAN;
	}
}

/* Did the last run derive name's histogram? Names not in the model
 * (prep_model may drop Identity and Dropout) count as expected. */
static void
check_derived(const struct calib *c, const char *name, int want)
{
	int found = 0;

	for (int i = 0; i < calib_ntensors(c); i++)
		found |= strcmp(calib_tensor_name(c, i), name) == 0;
	if (found)
		unit_check_(calib_tensor_derived(c, name) == want, __FILE__,
		    __LINE__, "%s: derived %d, want %d", name,
		    calib_tensor_derived(c, name), want);
}

static void
run_model(const char *rel, int mbits, int threads)
{
	struct model *m = fixture_generated(rel);
	struct interp_opts io = { 0 };
	struct calib_opts co;
	struct calib *c;
	struct interp *ip;
	struct ref r = { 0 };
	struct tensor out[48];
	struct err e;
	int is10 = strstr(rel, "clip10") != NULL;

	REQUIRE(m && prep_model(m, NULL, &e) == 0);
	calib_opts_init(&co);
	co.mbits = mbits;
	co.threads = threads;
	REQUIRE((c = calib_new(m, &co, &e)) != NULL);
	r.mbits = mbits;
	if (mbits >= 0 && mbits <= STATKERN_MBITS_MAX)
		REQUIRE((r.k = statkern_new(threads, mbits, &e)) != NULL);
	io.threads = threads;
	io.observe = ref_observe;
	io.observe_ctx = &r;
	REQUIRE((ip = interp_new(m, &io, &e)) != NULL);
	REQUIRE(interp_noutputs(ip) <= 48);
	for (int b = 0; b < 4; b++) {
		struct tensor x;

		fill(&x, b == 2 ? 2 : 1, b == 3 ? 2 : b == 1);
		if (calib_run(c, &x, &e) < 0 || interp_run(ip, &x, out,
		    &e) < 0) {
			unit_check_(0, __FILE__, __LINE__, "%s", e.msg);
			return;
		}
		for (int k = 0; k < interp_noutputs(ip); k++)
			tensor_release(&out[k]);
		tensor_release(&x);
		if (b >= 2 || mbits < 0)
			continue;
		/* an infinity clipped: counted; a copy or the same values:
		 * derived still */
		check_derived(c, "c", b == 0);
		/* clip10's Relu reads the Clip, which holds no infinity */
		check_derived(c, "r", b == 0 || is10);
		if (is10)
			continue;
		check_derived(c, "c2", b == 0);
		check_derived(c, "c3", b == 0);
		check_derived(c, "t", 1);
		check_derived(c, "k", 1);
		check_derived(c, "s", 1);
		check_derived(c, "q", 1);
		check_derived(c, "f", 1);
		check_derived(c, "cd", 0);
		check_derived(c, "kw", 0);
		check_derived(c, "a0", 1);
		check_derived(c, "m1", 1);
		check_derived(c, "dx", 0);
	}
	CHECK_EQ_INT(calib_ntensors(c), r.n);
	for (int i = 0; i < calib_ntensors(c) && i < r.n; i++) {
		const char *name = calib_tensor_name(c, i);
		int j = 0;
		char *got, *want;

		while (j < r.n && strcmp(r.name[j], name) != 0)
			j++;
		REQUIRE(j < r.n);
		got = text_of(calib_tensor_stats(c, i), name);
		want = text_of(&r.ts[j], name);
		if (!unit_check_(strcmp(got, want) == 0, __FILE__, __LINE__,
		    "%s mbits %d threads %d: %s differs", rel, mbits, threads,
		    name))
			fprintf(stderr, "got:\n%.600s\nwant:\n%.600s\n", got,
			    want);
		free(got);
		free(want);
	}
	for (int i = 0; i < r.n; i++) {
		free(r.name[i]);
		tstats_release(&r.ts[i]);
	}
	statkern_free(r.k);
	interp_free(ip);
	calib_free(c);
	model_free(m);
}

static void
test_same_as_computed(void)
{
	static const int mbits[] = { 7, 3, 10, -1 };

	for (size_t i = 0; i < sizeof mbits / sizeof *mbits; i++)
		for (int t = 1; t <= 2; t++) {
			run_model("statderive/derive.onnx", mbits[i], t);
			run_model("statderive/clip10.onnx", mbits[i], t);
		}
}

UNIT_MAIN(test_plan, test_same_as_computed)
