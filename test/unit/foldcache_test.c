/*
 * foldcache_test: lib/foldcache.c: a value is found again only for the
 * same node (serialized), opset and input bytes; a new value replaces
 * the entry; foldcache_keep() takes the value itself and lends it back
 * (one copy, the cache's). With the interpreter (interp_opts.fold_cache) on
 * test/data/verify/clf-q.onnx: a second interpreter takes the folded
 * weights from the cache, one with a weight's scale changed folds that
 * weight again, and the outputs are bit for bit those without a cache.
 * Bytes said to stay (foldcache_set_stable()) are known by address.
 * Forms derived from a kept value (foldcache_form()) are found by the
 * value's bytes and key, and go with the entry; on a QDQ copy of
 * test/data/mixprec/chain.onnx (two Conv), the packed weights of one
 * interpreter serve the next, not once the weights are folded anew,
 * and the outputs stay bit for bit those without a cache.
 */
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "foldcache.h"
#include "interp.h"
#include "model.h"
#include "qdqfixture.h"
#include "unit.h"

#define CLF "test/data/verify/clf-q.onnx"
#define CHAIN "test/data/mixprec/chain.onnx"

/* n: op, inputs in[0..nin), output out (the names kept by pointer). */
static void
node_set(Onnx__NodeProto *n, char *op, char **in, size_t nin, char **out)
{
	n->op_type = op;
	n->n_input = nin;
	n->input = in;
	n->n_output = out ? 1 : 0;
	n->output = out;
}

static void
test_get_put(void)
{
	struct foldcache *c = foldcache_new();
	Onnx__NodeProto n = ONNX__NODE_PROTO__INIT;
	char *in_names[2] = { "w", "s" }, *out_names[1] = { "y" };
	struct tensor w, s, v, got;
	const struct tensor *in[3];
	int64_t d[1] = { 4 };
	struct err e;

	REQUIRE(c != NULL);
	node_set(&n, "DequantizeLinear", in_names, 2, out_names);
	REQUIRE(tensor_alloc(&w, DT_INT8, 1, d, &e) == 0);
	REQUIRE(tensor_alloc(&s, DT_FLOAT, 0, NULL, &e) == 0);
	REQUIRE(tensor_alloc(&v, DT_FLOAT, 1, d, &e) == 0);
	((int8_t *)w.data)[1] = 3;
	((float *)s.data)[0] = 0.5f;
	((float *)v.data)[1] = 1.5f;
	in[0] = &w;
	in[1] = &s;
	in[2] = NULL;

	CHECK(foldcache_get(c, &n, 21, in, 3, &got) == 0);
	REQUIRE(foldcache_put(c, &n, 21, in, 3, &v, &e) == 0);
	REQUIRE(foldcache_get(c, &n, 21, in, 3, &got) == 1);
	/* lent: the cache's copy, uncounted */
	CHECK(got.data != v.data && got.dtype == DT_FLOAT &&
	    got.counted == 0 && shape_equal(&got, &v) &&
	    memcmp(got.data, v.data, sizeof(float) * 4) == 0);
	CHECK_EQ_INT(foldcache_hits(c), 1);
	/* Another opset, input byte, absent input or node: no. */
	CHECK(foldcache_get(c, &n, 19, in, 3, &got) == 0);
	((int8_t *)w.data)[2] = 1;
	CHECK(foldcache_get(c, &n, 21, in, 3, &got) == 0);
	((int8_t *)w.data)[2] = 0;
	in[2] = &s;
	CHECK(foldcache_get(c, &n, 21, in, 3, &got) == 0);
	in[2] = NULL;
	CHECK(foldcache_get(c, &n, 21, in, 2, &got) == 0);
	n.op_type = "QuantizeLinear";
	CHECK(foldcache_get(c, &n, 21, in, 3, &got) == 0);
	n.op_type = "DequantizeLinear";
	/* A new value for y replaces the old one. */
	((float *)s.data)[0] = 0.25f;
	((float *)v.data)[1] = 0.75f;
	REQUIRE(foldcache_put(c, &n, 21, in, 3, &v, &e) == 0);
	REQUIRE(foldcache_get(c, &n, 21, in, 3, &got) == 1);
	CHECK(((float *)got.data)[1] == 0.75f);
	((float *)s.data)[0] = 0.5f;
	CHECK(foldcache_get(c, &n, 21, in, 3, &got) == 0);
	CHECK_EQ_INT(foldcache_hits(c), 2);
	tensor_release(&w);
	tensor_release(&s);
	tensor_release(&v);
	foldcache_free(c);
}

/* foldcache_keep(): the value moves to the cache; the maker reads it. */
static void
test_keep(void)
{
	struct foldcache *c = foldcache_new();
	Onnx__NodeProto n = ONNX__NODE_PROTO__INIT, anon = n;
	char *in_names[1] = { "w" }, *out_names[1] = { "y" };
	struct tensor w, v, got;
	const struct tensor *in[1] = { &w };
	int64_t d[1] = { 4 };
	void *data;
	struct err e;

	REQUIRE(c != NULL);
	node_set(&n, "Neg", in_names, 1, out_names);
	node_set(&anon, "Neg", in_names, 1, NULL);
	REQUIRE(tensor_alloc(&w, DT_FLOAT, 1, d, &e) == 0);
	REQUIRE(tensor_alloc(&v, DT_FLOAT, 1, d, &e) == 0);
	((float *)v.data)[2] = -2.5f;
	/* no output name: nothing kept, v as it was */
	data = v.data;
	CHECK(foldcache_keep(c, &anon, 21, in, 1, &v, &e) == 0);
	CHECK(v.data == data && v.counted > 0);
	REQUIRE(foldcache_keep(c, &n, 21, in, 1, &v, &e) == 1);
	/* the same bytes, now the cache's: lent, uncounted */
	CHECK(v.data == data && v.counted == 0 && v.dtype == DT_FLOAT &&
	    v.nelem == 4);
	REQUIRE(foldcache_get(c, &n, 21, in, 1, &got) == 1);
	CHECK(got.data == data && ((float *)got.data)[2] == -2.5f);
	/* replaced by a put: the kept value goes with the entry */
	((float *)w.data)[0] = 1;
	REQUIRE(foldcache_put(c, &n, 21, in, 1, &w, &e) == 0);
	CHECK(foldcache_get(c, &n, 21, in, 1, &got) == 1 &&
	    got.data != data && got.data != w.data);
	tensor_release(&w);
	foldcache_free(c);
}

/* Multiply the float initializer name by f. */
static void
scale_init(struct model *m, const char *name, float f)
{
	Onnx__GraphProto *g = m->proto->graph;

	for (size_t i = 0; i < g->n_initializer; i++) {
		Onnx__TensorProto *t = g->initializer[i];
		float v;

		if (strcmp(t->name, name) != 0)
			continue;
		for (size_t k = 0; k + sizeof v <= t->raw_data.len;
		    k += sizeof v) {
			memcpy(&v, t->raw_data.data + k, sizeof v);
			v *= f;
			memcpy(t->raw_data.data + k, &v, sizeof v);
		}
		for (size_t k = 0; k < t->n_float_data; k++)
			t->float_data[k] *= f;
	}
}

/* m's outputs for x, run with cache c (NULL: none), into out[2]. */
static int
run(const struct model *m, struct foldcache *c, const struct tensor *x,
    struct tensor *out)
{
	struct interp_opts o = { .threads = 1, .fold_constant_nodes = 1,
	    .fold_cache = c };
	struct interp *ip;
	struct err e;
	int rc;

	if ((ip = interp_new(m, &o, &e)) == NULL)
		return -1;
	rc = interp_run(ip, x, out, &e);
	interp_free(ip);
	return rc;
}

/* The outputs a and b (n each) the same, bit for bit; both released. */
static void
check_same(struct tensor *a, struct tensor *b, int n)
{
	int same = 1;

	for (int j = 0; j < n; j++)
		same = same && shape_equal(&a[j], &b[j]) &&
		    a[j].dtype == b[j].dtype && !memcmp(a[j].data, b[j].data,
		    (size_t)a[j].nelem * dtype_size(a[j].dtype));
	CHECK(same);
	tensor_release_n(a, n);
	tensor_release_n(b, n);
}

/* m run with cache c on x: its n outputs those of a run without. */
static void
check_cached_run(const struct model *m, struct foldcache *c,
    const struct tensor *x, int n)
{
	struct tensor a[2], b[2];

	REQUIRE(n <= 2);
	REQUIRE(run(m, c, x, b) == 0);
	REQUIRE(run(m, NULL, x, a) == 0);
	check_same(a, b, n);
}

/* x: a float input of shape d[0..rank), values (i % p) / q - 1; 0 if made. */
static int
ramp(struct tensor *x, int rank, const int64_t *d, int p, float q)
{
	struct err e;

	if (tensor_alloc(x, DT_FLOAT, rank, d, &e) != 0)
		return -1;
	for (int64_t i = 0; i < x->nelem; i++)
		((float *)x->data)[i] = (float)(i % p) / q - 1;
	return 0;
}

static void
test_interp(void)
{
	struct model *m = fixture_model(CLF);
	struct foldcache *c = foldcache_new();
	struct tensor x;
	int64_t d[2] = { 1, 16 };
	long hits;

	REQUIRE(m != NULL && c != NULL);
	REQUIRE(ramp(&x, 2, d, 5, 2) == 0);
	check_cached_run(m, c, &x, 2);
	CHECK_EQ_INT(foldcache_hits(c), 0);
	check_cached_run(m, c, &x, 2);
	/* W1, b1, W2: their DequantizeLinear nodes, at least. */
	hits = foldcache_hits(c);
	CHECK(hits >= 3);
	/* W1's scales changed: W1 folds again, the others do not. */
	scale_init(m, "W1_scale", 1.5f);
	check_cached_run(m, c, &x, 2);
	CHECK_EQ_INT(foldcache_hits(c), 2 * hits - 1);
	tensor_release(&x);
	foldcache_free(c);
	model_free(m);
}

/* foldcache_set_stable()'s: the bytes at *ctx stay. */
static int
stays(void *ctx, const void *data)
{
	return data == *(void **)ctx;
}

/*
 * Bytes the predicate says stay are known by address: changed behind the
 * cache's back (which the contract forbids) they still match, which shows
 * they were not read; bytes kept from an address that did not stay then
 * are compared, even when it stays now; other bytes at another address
 * are compared.
 */
static void
test_stable(void)
{
	struct foldcache *c = foldcache_new();
	Onnx__NodeProto n = ONNX__NODE_PROTO__INIT;
	char *in_names[1] = { "w" }, *out_names[1] = { "y" };
	struct tensor w, w2, v, got;
	const struct tensor *in[1] = { &w };
	int64_t d[1] = { 4 };
	void *staying = NULL;
	struct err e;

	REQUIRE(c != NULL);
	node_set(&n, "DequantizeLinear", in_names, 1, out_names);
	REQUIRE(tensor_alloc(&w, DT_INT8, 1, d, &e) == 0);
	REQUIRE(tensor_alloc(&w2, DT_INT8, 1, d, &e) == 0);
	REQUIRE(tensor_alloc(&v, DT_FLOAT, 1, d, &e) == 0);
	memset(w.data, 0, 4);
	memset(v.data, 0, 4 * sizeof(float));
	foldcache_set_stable(c, stays, &staying);
	/* kept while w did not stay: w changed is not the same */
	REQUIRE(foldcache_put(c, &n, 21, in, 1, &v, &e) == 0);
	staying = w.data;
	((int8_t *)w.data)[0] = 5;
	CHECK(foldcache_get(c, &n, 21, in, 1, &got) == 0);
	/* kept while w stays: known by address */
	REQUIRE(foldcache_put(c, &n, 21, in, 1, &v, &e) == 0);
	((int8_t *)w.data)[0] = 6;
	CHECK(foldcache_get(c, &n, 21, in, 1, &got) == 1);
	/* the same address not staying now: read, and not the same */
	staying = NULL;
	CHECK(foldcache_get(c, &n, 21, in, 1, &got) == 0);
	/* other bytes elsewhere: compared (w2 is all zeros but one 5) */
	staying = w.data;
	memset(w2.data, 0, 4);
	((int8_t *)w2.data)[0] = 5;
	in[0] = &w2;
	CHECK(foldcache_get(c, &n, 21, in, 1, &got) == 1);
	((int8_t *)w2.data)[1] = 1;
	CHECK(foldcache_get(c, &n, 21, in, 1, &got) == 0);
	tensor_release(&w);
	tensor_release(&w2);
	tensor_release(&v);
	foldcache_free(c);
}

/* A form of n bytes, each b, malloc'd. */
static void *
form_new(size_t n, int b)
{
	void *p = malloc(n);

	if (p)
		memset(p, b, n);
	return p;
}

/*
 * Forms: kept only with a value the cache holds, found by its bytes
 * (address and length) and the whole key, one per key; gone when the
 * entry is replaced, even for a new value at the same address.
 */
static void
test_forms(void)
{
	struct foldcache *c = foldcache_new();
	Onnx__NodeProto n = ONNX__NODE_PROTO__INIT;
	char *in_names[1] = { "w" }, *out_names[1] = { "y" };
	struct tensor w, v, got;
	const struct tensor *in[1] = { &w };
	int64_t d[1] = { 4 }, key[3] = { 'P', 2, 3 }, other[3] = { 'P', 2, 4 };
	const void *f;
	void *form = form_new(16, 7), *form2 = form_new(16, 9), *old;
	struct err e;

	REQUIRE(c != NULL && form != NULL && form2 != NULL);
	node_set(&n, "Neg", in_names, 1, out_names);
	REQUIRE(tensor_alloc(&w, DT_FLOAT, 1, d, &e) == 0);
	REQUIRE(tensor_alloc(&v, DT_FLOAT, 1, d, &e) == 0);
	memset(w.data, 0, 4 * sizeof(float));
	memset(v.data, 0, 4 * sizeof(float));
	/* not a kept value: nothing kept, the form still ours */
	CHECK(foldcache_form_keep(c, v.data, 16, key, 3, form, &e) == 0);
	CHECK(foldcache_form(c, v.data, 16, key, 3) == NULL);
	REQUIRE(foldcache_keep(c, &n, 21, in, 1, &v, &e) == 1);
	/* a kept value, the wrong length or a key too long: no */
	CHECK(foldcache_form_keep(c, v.data, 12, key, 3, form, &e) == 0);
	CHECK(foldcache_form_keep(c, v.data, 16, key,
	    FOLDCACHE_KEY_MAX + 1, form, &e) == -1);
	REQUIRE(foldcache_form_keep(c, v.data, 16, key, 3, form, &e) == 1);
	/* one form per key: a second is not taken */
	CHECK(foldcache_form_keep(c, v.data, 16, key, 3, form2, &e) == 0);
	CHECK_EQ_INT(foldcache_form_hits(c), 0);
	f = foldcache_form(c, v.data, 16, key, 3);
	CHECK(f == form && ((const unsigned char *)f)[15] == 7);
	CHECK_EQ_INT(foldcache_form_hits(c), 1);
	CHECK(foldcache_form(c, v.data, 16, other, 3) == NULL);
	CHECK(foldcache_form(c, v.data, 16, key, 2) == NULL);
	CHECK(foldcache_form(c, v.data, 8, key, 3) == NULL);
	/* another key of the same value: both kept */
	REQUIRE(foldcache_form_keep(c, v.data, 16, other, 3, form2,
	    &e) == 1);
	CHECK(foldcache_form(c, v.data, 16, other, 3) == form2 &&
	    foldcache_form(c, v.data, 16, key, 3) == form);
	/* the entry replaced: its forms go (ASan sees them freed) */
	old = v.data;
	((float *)w.data)[0] = 1;
	REQUIRE(foldcache_get(c, &n, 21, in, 1, &got) == 0);
	REQUIRE(tensor_alloc(&v, DT_FLOAT, 1, d, &e) == 0);
	memset(v.data, 0, 4 * sizeof(float));
	REQUIRE(foldcache_keep(c, &n, 21, in, 1, &v, &e) == 1);
	CHECK(foldcache_form(c, old, 16, key, 3) == NULL);
	CHECK(foldcache_form(c, v.data, 16, key, 3) == NULL);
	CHECK(foldcache_form(c, v.data, 16, other, 3) == NULL);
	CHECK_EQ_INT(foldcache_form_hits(c), 3);
	tensor_release(&w);
	foldcache_free(c);
}

/* Both weights of chain.onnx in int8, per tensor. */
static const char chain_text[] = "#onnxq\t1.0\n"
    "qparam\tW1\trole=weight\ttype=int8\tscale=0.01\tzp=0\n"
    "qparam\tW2\trole=weight\ttype=int8\tscale=0.02\tzp=0\n"
    "end\t2\n";

/* m's first int8 initializer's first byte plus 1 (W1's, quantized). */
static int
bump_int8(struct model *m)
{
	Onnx__GraphProto *g = m->proto->graph;

	for (size_t i = 0; i < g->n_initializer; i++) {
		Onnx__TensorProto *t = g->initializer[i];

		if (t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT8 &&
		    t->raw_data.len > 0) {
			t->raw_data.data[0]++;
			return 0;
		}
	}
	return -1;
}

/*
 * The interpreter's Conv weights, folded from DequantizeLinear: packed
 * by the first interpreter with the cache, taken by the next (after the
 * first is freed), packed again once the weights change.
 */
static void
test_interp_forms(void)
{
	struct qdq_opts o = { 0 };
	struct model *m = qdqfixture_apply(fixture_model(CHAIN), chain_text,
	    &o, NULL);
	struct foldcache *c = foldcache_new();
	struct tensor x;
	int64_t d[4] = { 1, 2, 6, 6 };

	REQUIRE(m != NULL && c != NULL);
	REQUIRE(ramp(&x, 4, d, 7, 3) == 0);
	check_cached_run(m, c, &x, 1);
	CHECK_EQ_INT(foldcache_form_hits(c), 0);
	/* the second interpreter takes both packings */
	check_cached_run(m, c, &x, 1);
	CHECK_EQ_INT(foldcache_form_hits(c), 2);
	/* W1 changed: folded anew, its old packing gone with its entry */
	REQUIRE(bump_int8(m) == 0);
	check_cached_run(m, c, &x, 1);
	CHECK_EQ_INT(foldcache_form_hits(c), 3);
	check_cached_run(m, c, &x, 1);
	CHECK_EQ_INT(foldcache_form_hits(c), 5);
	tensor_release(&x);
	foldcache_free(c);
	model_free(m);
}

UNIT_MAIN(test_get_put, test_keep, test_interp, test_stable, test_forms,
    test_interp_forms)
