/*
 * op_attn: com.microsoft Attention (float) and QAttention (its input and
 * weight 8-bit), the fused self-attention of transformer models optimized
 * by ONNX Runtime's tools, as ORT's CPU kernels compute them.
 *
 * The input (B x S x In) times the weights (In x 3*Hid) plus the bias
 * gives Q, K and V side by side (QAttention: the integer product scaled
 * back by input_scale * weight_scale, per tensor or per column, then the
 * bias; the MatMulIntegerToFloat kernel of op_dynq, exact). For each
 * batch entry and each of num_heads heads of Hid / num_heads columns:
 * scores = scale * Q K^T (scale 1/sqrt(head size) unless given) plus the
 * mask, softmax over the keys, times V; the heads side by side make the
 * output (B x S x Hid). The mask, as ORT's PrepareMask: mask_index of
 * B lengths (keys at or past the length masked), 2*B (then also before
 * the start), B x T raw or B x S x T (0 masked), masked scores getting
 * mask_filter_value (-10000 by default); unidirectional masks the future
 * with the lowest float. Not supported (an error): past and present
 * states, attention_bias, qkv_hidden_sizes, rotary embeddings.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attr.h"
#include "gemm.h"
#include "ops.h"

struct attn {
	int64_t batch, seq, in, hid, heads, hs;
	float scale, filter;
	int causal;
	const struct tensor *mask;
};

static int
attn_setup(struct op_ctx *c, struct attn *a, const struct tensor *x,
    const struct tensor *w, const struct tensor *bias, int mask_slot,
    int past_slot)
{
	const struct tensor *m = ops_input(c, mask_slot);

	if (!x || !w || !bias)
		return err_set(c->err, "input, weights and bias are required");
	if (attr_find(c->node, "qkv_hidden_sizes") ||
	    attr_int(c->node, "do_rotary", 0))
		return err_set(c->err, "qkv_hidden_sizes and do_rotary are "
		    "not supported");
	if (ops_input(c, past_slot) || (mask_slot == 3 && (ops_input(c, 5) ||
	    ops_input(c, 6))) || ops_want_output(c, 1))
		return err_set(c->err, "past, present and attention_bias are "
		    "not supported");
	if (x->rank != 3 || w->rank != 2 || w->dims[0] != x->dims[2] ||
	    w->dims[1] % 3 != 0 || bias->nelem != w->dims[1] ||
	    bias->dtype != DT_FLOAT)
		return err_set(c->err, "input BxSxIn, weights Inx3H and bias "
		    "3H (float) do not fit");
	a->batch = x->dims[0];
	a->seq = x->dims[1];
	a->in = x->dims[2];
	a->hid = w->dims[1] / 3;
	a->heads = attr_int(c->node, "num_heads", 0);
	if (a->heads <= 0 || a->hid % a->heads != 0)
		return err_set(c->err, "num_heads %lld does not divide the "
		    "hidden size %lld", (long long)a->heads,
		    (long long)a->hid);
	a->hs = a->hid / a->heads;
	a->scale = attr_float(c->node, "scale", 0);
	if (a->scale == 0)
		a->scale = 1.0f / sqrtf((float)a->hs);
	a->filter = attr_float(c->node, "mask_filter_value", -10000.0f);
	a->causal = attr_int(c->node, "unidirectional", 0) != 0;
	a->mask = m;
	if (m && (m->dtype != DT_INT32 || !((m->rank == 1 && (m->nelem ==
	    a->batch || m->nelem == 2 * a->batch)) || (m->rank == 2 &&
	    m->nelem == a->batch * a->seq) || (m->rank == 3 &&
	    m->nelem == a->batch * a->seq * a->seq))))
		return err_set(c->err, "mask_index must be int32 of B, 2B, "
		    "BxS or BxSxS elements");
	return 0;
}

/* The additive mask of batch entry b: S x S into mk, as PrepareMask. */
static void
fill_mask(const struct attn *a, int64_t b, float *mk)
{
	const struct tensor *m = a->mask;
	const int32_t *v = m ? m->data : NULL;
	int64_t S = a->seq;

	for (int64_t i = 0; i < S * S; i++)
		mk[i] = 0;
	if (m && m->rank == 3) {
		for (int64_t i = 0; i < S * S; i++)
			mk[i] = v[b * S * S + i] > 0 ? 0 : a->filter;
	} else if (m && m->rank == 2) {
		for (int64_t i = 0; i < S * S; i++)
			mk[i] = v[b * S + i % S] > 0 ? 0 : a->filter;
	} else if (m) {
		int64_t end = v[b], start = m->nelem == 2 * a->batch ?
		    v[a->batch + b] : 0;

		for (int64_t i = 0; i < S * S; i++)
			if (i % S >= end || i % S < start)
				mk[i] = a->filter;
	}
	for (int64_t i = 0; a->causal && i < S; i++)
		for (int64_t j = i + 1; j < S; j++)
			mk[i * S + j] = -FLT_MAX;
}

/* out (B x S x Hid) from qkv (B*S x 3*Hid: Q, K, V side by side). */
static int
attn_apply(struct op_ctx *c, const struct attn *a, const float *qkv,
    float *out)
{
	int64_t S = a->seq, ld = 3 * a->hid;
	float *p = malloc((size_t)(2 * S * S + 1) * sizeof *p), *mk;
	int rc = 0;

	if (p == NULL)
		return err_nomem(c->err);
	mk = p + S * S;
	for (int64_t b = 0; b < a->batch && rc == 0; b++) {
		const float *base = qkv + b * S * ld;

		fill_mask(a, b, mk);
		for (int64_t h = 0; h < a->heads && rc == 0; h++) {
			const float *q = base + h * a->hs, *k = q + a->hid,
			    *v = k + a->hid;

			memcpy(p, mk, (size_t)(S * S) * sizeof *p);
			if ((rc = gemm_sgemm(0, 1, S, S, a->hs, a->scale, q,
			    ld, k, ld, 1, p, S, c->threads, c->err)) < 0)
				break;
			for (int64_t i = 0; i < S; i++) {
				float *r = p + i * S, mx = r[0], sum = 0;

				for (int64_t j = 1; j < S; j++)
					mx = r[j] > mx ? r[j] : mx;
				for (int64_t j = 0; j < S; j++)
					sum += (r[j] = expf(r[j] - mx));
				for (int64_t j = 0; j < S; j++)
					r[j] /= sum;
			}
			rc = gemm_sgemm(0, 0, S, a->hs, S, 1, p, S, v, ld, 0,
			    out + b * S * a->hid + h * a->hs, a->hid,
			    c->threads, c->err);
		}
	}
	free(p);
	return rc < 0 ? -1 : 0;
}

/* The output tensor, then attention on qkv. */
static int
attn_finish(struct op_ctx *c, const struct attn *a, const float *qkv)
{
	int64_t dims[3] = { a->batch, a->seq, a->hid };

	if (tensor_alloc_uninit(&c->out[0], DT_FLOAT, 3, dims, c->err) < 0)
		return -1;
	return attn_apply(c, a, qkv, c->out[0].data);
}

/* Attention: input, weights, bias, mask_index, past, attention_bias... */
static int
attention_run(struct op_ctx *c)
{
	const struct tensor *x = ops_input(c, 0), *w = ops_input(c, 1),
	    *bias = ops_input(c, 2);
	struct attn a;
	float *qkv;
	int64_t rows, n;
	int rc;

	if (attn_setup(c, &a, x, w, bias, 3, 4) < 0)
		return -1;
	if (x->dtype != DT_FLOAT || w->dtype != DT_FLOAT)
		return err_set(c->err, "input and weights must be float");
	rows = a.batch * a.seq;
	n = 3 * a.hid;
	if ((qkv = malloc((size_t)(rows * n + 1) * sizeof *qkv)) == NULL)
		return err_nomem(c->err);
	for (int64_t i = 0; i < rows * n; i++)
		qkv[i] = ((const float *)bias->data)[i % n];
	rc = gemm_sgemm(0, 0, rows, n, a.in, 1, x->data, a.in, w->data, n, 1,
	    qkv, n, c->threads, c->err);
	if (rc == 0)
		rc = attn_finish(c, &a, qkv);
	free(qkv);
	return rc;
}

/*
 * QAttention: input (uint8), weight (uint8 or int8), bias, input_scale,
 * weight_scale, mask_index, input_zero_point, weight_zero_point, past.
 */
static int
qattention_run(struct op_ctx *c)
{
	const struct op_def *mm = ops_find("com.microsoft",
	    "MatMulIntegerToFloat");
	const struct tensor *x = ops_input(c, 0), *w = ops_input(c, 1),
	    *bias = ops_input(c, 2), *in[7];
	struct attn a;
	struct tensor qkv;
	struct op_ctx s = *c;
	int rc;

	if (attn_setup(c, &a, x, w, bias, 5, 8) < 0)
		return -1;
	if (!ops_input(c, 3) || !ops_input(c, 4))
		return err_set(c->err, "input_scale and weight_scale are "
		    "required");
	if (!mm)
		return err_set(c->err, "no MatMulIntegerToFloat kernel");
	/* A, B, a_scale, b_scale, a_zero_point, b_zero_point, bias */
	in[0] = x, in[1] = w, in[2] = ops_input(c, 3), in[3] = ops_input(c, 4);
	in[4] = ops_input(c, 6), in[5] = ops_input(c, 7), in[6] = bias;
	memset(&qkv, 0, sizeof qkv);
	s.nin = 7, s.in = in, s.nout = 1, s.out = &qkv;
	s.state = NULL, s.graphs = NULL;
	rc = mm->run(&s);
	if (rc == 0)
		rc = attn_finish(c, &a, qkv.data);
	tensor_release(&qkv);
	return rc;
}

const struct op_def op_attn_defs[] = {
	{ "com.microsoft", "Attention", attention_run, NULL },
	{ "com.microsoft", "QAttention", qattention_run, NULL },
	{ NULL, NULL, NULL, NULL },
};
