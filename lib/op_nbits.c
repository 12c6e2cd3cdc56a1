/*
 * op_nbits: the weight-only blockwise operators of com.microsoft, as ONNX
 * Runtime computes them (docs/ContribOperators.md of onnxruntime):
 *
 *   MatMulNBits    Y = A * dequant(B)^T (+ bias). B is uint8 of shape
 *                  [N][k_blocks][blob_size], blob_size = block_size *
 *                  bits / 8: row n of the K x N weight, block by block,
 *                  the first value of a byte in its low bits. scales has
 *                  N * k_blocks values (row n, block b at n * k_blocks +
 *                  b). zero_points is either packed uint8 (each row
 *                  ceil(k_blocks * bits / 8) bytes, packed like B) or
 *                  floats of A's type, one per block; absent, it is
 *                  2^(bits-1). w = (q - zp) * scale. K need not be a
 *                  multiple of block_size: the last block's padding is
 *                  never read. bits 2, 4 and 8; g_idx is refused.
 *
 *   GatherBlockQuantized  Gather of a block-quantized constant (int4,
 *                  uint4, or uint8 one value a byte), dequantized.
 *
 * The weight is dequantized a panel of rows at a time, so the kernel
 * never holds more than NBITS_PANEL rows of K floats beside A and Y:
 * a 4-bit model runs in about its own size.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attr.h"
#include "gemm.h"
#include "ops.h"

#define NBITS_PANEL 256		/* weight rows dequantized at a time */

struct nbits_layout {
	int64_t K, N, block, kblocks, blob, zp_row;
	int bits;
};

/* The attributes and the shapes of B, scales and zero points. */
static int
nbits_layout(struct op_ctx *c, const struct tensor *b,
    const struct tensor *s, const struct tensor *zp, struct nbits_layout *l)
{
	l->K = attr_int(c->node, "K", -1);
	l->N = attr_int(c->node, "N", -1);
	l->block = attr_int(c->node, "block_size", -1);
	l->bits = (int)attr_int(c->node, "bits", 4);
	if (l->K <= 0 || l->N <= 0)
		return err_set(c->err, "attributes K and N must be positive");
	if (l->bits != 2 && l->bits != 4 && l->bits != 8)
		return err_set(c->err, "bits %d is not supported (2, 4, 8)",
		    l->bits);
	if (l->block < 16 || (l->block & (l->block - 1)) != 0)
		return err_set(c->err, "block_size %lld is not a power of two "
		    "of 16 or more", (long long)l->block);
	if (l->K > INT64_MAX / 8 || l->N > (INT64_MAX / 8) / l->K)
		return err_set(c->err, "K x N is too large");
	l->kblocks = (l->K + l->block - 1) / l->block;
	l->blob = l->block * l->bits / 8;
	l->zp_row = (l->kblocks * l->bits + 7) / 8;
	if (b->dtype != DT_UINT8)
		return err_set(c->err, "input 1: B must be uint8, not %s",
		    ops_type_name(b->dtype));
	if (b->nelem != l->N * l->kblocks * l->blob)
		return err_set(c->err, "input 1: B has %lld bytes, not "
		    "N x k_blocks x blob_size = %lld", (long long)b->nelem,
		    (long long)(l->N * l->kblocks * l->blob));
	if (s->dtype != DT_FLOAT)
		return err_set(c->err, "input 2: scales must be float, not %s",
		    ops_type_name(s->dtype));
	if (s->nelem != l->N * l->kblocks)
		return err_set(c->err, "input 2: %lld scales, not N x k_blocks"
		    " = %lld", (long long)s->nelem,
		    (long long)(l->N * l->kblocks));
	if (!zp)
		return 0;
	if (zp->dtype == DT_UINT8 && zp->nelem != l->N * l->zp_row)
		return err_set(c->err, "input 3: %lld packed zero point bytes,"
		    " not %lld", (long long)zp->nelem,
		    (long long)(l->N * l->zp_row));
	if (zp->dtype == DT_FLOAT && zp->nelem != l->N * l->kblocks)
		return err_set(c->err, "input 3: %lld zero points, not %lld",
		    (long long)zp->nelem, (long long)(l->N * l->kblocks));
	if (zp->dtype != DT_UINT8 && zp->dtype != DT_FLOAT)
		return err_set(c->err, "input 3: zero points must be uint8 or "
		    "float, not %s", ops_type_name(zp->dtype));
	return 0;
}

/* Value i of a row of values packed `bits` to a byte, low bits first. */
static inline unsigned
nbits_get(const uint8_t *row, int64_t i, int bits)
{
	int64_t bit = i * bits;

	return (row[bit >> 3] >> (bit & 7)) & ((1u << bits) - 1);
}

/* Rows [n0, n1) of the weight, dequantized, K floats each, into w. */
static void
nbits_dequant_rows(const struct nbits_layout *l, const uint8_t *b,
    const float *s, const struct tensor *zp, int64_t n0, int64_t n1,
    float *w)
{
	float dzp = (float)(1u << (l->bits - 1));

	for (int64_t n = n0; n < n1; n++) {
		float *wr = w + (n - n0) * l->K;

		for (int64_t kb = 0; kb < l->kblocks; kb++) {
			const uint8_t *blob = b + (n * l->kblocks + kb) *
			    l->blob;
			float sc = s[n * l->kblocks + kb], z = dzp;
			int64_t k0 = kb * l->block;
			int64_t k1 = k0 + l->block < l->K ? k0 + l->block :
			    l->K;

			if (zp && zp->dtype == DT_UINT8)
				z = (float)nbits_get((const uint8_t *)zp->data
				    + n * l->zp_row, kb, l->bits);
			else if (zp)
				z = ((const float *)zp->data)[n * l->kblocks +
				    kb];
			for (int64_t k = k0; k < k1; k++)
				wr[k] = ((float)nbits_get(blob, k - k0,
				    l->bits) - z) * sc;
		}
	}
}

static int
matmul_nbits_run(struct op_ctx *c)
{
	const struct tensor *a = ops_input(c, 0), *b = ops_input(c, 1);
	const struct tensor *s = ops_input(c, 2), *zp = ops_input(c, 3);
	const struct tensor *gidx = ops_input(c, 4), *bias = ops_input(c, 5);
	struct nbits_layout l = { 0 };
	int64_t dims[TENSOR_MAX_RANK], M, panel;
	float *w, *y;

	if (!a || !b || !s)
		return err_set(c->err, "inputs A, B and scales are required");
	if (gidx)
		return err_set(c->err, "input 4: g_idx is not supported");
	if (a->dtype != DT_FLOAT)
		return err_set(c->err, "input 0: element type %s is not "
		    "supported (float)", ops_type_name(a->dtype));
	if (nbits_layout(c, b, s, zp, &l) == -1)
		return -1;
	if (a->rank < 1 || a->dims[a->rank - 1] != l.K)
		return err_set(c->err, "input 0: last dimension must be K = "
		    "%lld", (long long)l.K);
	if (bias && (bias->dtype != DT_FLOAT || bias->nelem != l.N))
		return err_set(c->err, "input 5: bias must be %lld floats",
		    (long long)l.N);
	memcpy(dims, a->dims, sizeof(int64_t) * a->rank);
	dims[a->rank - 1] = l.N;
	if (tensor_alloc_uninit(&c->out[0], DT_FLOAT, a->rank, dims,
	    c->err) == -1)
		return -1;
	M = a->nelem / l.K;
	y = c->out[0].data;
	panel = l.N < NBITS_PANEL ? l.N : NBITS_PANEL;
	if (M == 0)
		return 0;
	if (!(w = malloc((size_t)(panel * l.K) * sizeof *w)))
		return err_nomem(c->err);
	for (int64_t n0 = 0; n0 < l.N; n0 += panel) {
		int64_t n1 = n0 + panel < l.N ? n0 + panel : l.N;

		nbits_dequant_rows(&l, b->data, s->data, zp, n0, n1, w);
		if (gemm_sgemm(0, 1, M, n1 - n0, l.K, 1.0f, a->data, l.K, w,
		    l.K, 0.0f, y + n0, l.N, c->threads, c->err) == -1) {
			free(w);
			return -1;
		}
	}
	free(w);
	if (bias)
		for (int64_t i = 0; i < M; i++)
			for (int64_t n = 0; n < l.N; n++)
				y[i * l.N + n] += ((const float *)bias->data)[n];
	return 0;
}

/*
 * GatherBlockQuantized: Gather of a constant quantized block-wise along
 * quantize_axis, dequantized: (q - zp) * scale, zp 0 for int4/uint4 and
 * 128 for uint8 when absent. uint8 data holds one value a byte (bits 8);
 * packed uint8 (bits 4) is refused.
 */
static int
gather_bq_run(struct op_ctx *c)
{
	const struct tensor *d = ops_input(c, 0), *ix = ops_input(c, 1);
	const struct tensor *s = ops_input(c, 2), *zp = ops_input(c, 3);
	int64_t dims[TENSOR_MAX_RANK], block, outer = 1, inner = 1, post = 1;
	int64_t nblk, *idx = NULL, nidx, o = 0;
	int ga, qa, rank;
	float *y;

	if (!d || !ix || !s)
		return err_set(c->err, "inputs data, indices and scales are "
		    "required");
	if (d->dtype != DT_INT4 && d->dtype != DT_UINT4 &&
	    d->dtype != DT_UINT8)
		return err_set(c->err, "input 0: data must be int4, uint4 or "
		    "uint8, not %s", ops_type_name(d->dtype));
	if (d->dtype == DT_UINT8 && attr_int(c->node, "bits", 4) != 8)
		return err_set(c->err, "packed 4-bit uint8 data is not "
		    "supported");
	if (s->dtype != DT_FLOAT)
		return err_set(c->err, "input 2: scales must be float");
	if (d->rank < 1 || (ga = ops_axis(attr_int(c->node, "gather_axis", 0),
	    d->rank, c->err)) < 0 || (qa = ops_axis(attr_int(c->node,
	    "quantize_axis", 1), d->rank, c->err)) < 0)
		return d->rank < 1 ? err_set(c->err, "data must have rank 1 "
		    "or more") : -1;
	block = attr_int(c->node, "block_size", 128);
	if (block < 16 || (block & (block - 1)))
		return err_set(c->err, "block_size %lld is not a power of two "
		    "of 16 or more", (long long)block);
	nblk = (d->dims[qa] + block - 1) / block;
	for (int i = 0; i < d->rank; i++)
		if (s->rank != d->rank || s->dims[i] != (i == qa ? nblk :
		    d->dims[i]) || (zp && (zp->dtype != d->dtype ||
		    !shape_equal(zp, s))))
			return err_set(c->err, "inputs 2 and 3: scales and zero "
			    "points must be shaped as data with %lld blocks "
			    "along axis %d", (long long)nblk, qa);
	if (ix->dtype != DT_INT64 && ix->dtype != DT_INT32)
		return err_set(c->err, "input 1: indices must be int32 or "
		    "int64");
	nidx = ix->nelem;
	if (!(idx = malloc((nidx ? (size_t)nidx : 1) * sizeof *idx)))
		return err_nomem(c->err);
	for (int64_t i = 0; i < nidx; i++)
		idx[i] = (int64_t)tensor_get(ix, i);
	rank = d->rank - 1 + ix->rank;
	if (rank > TENSOR_MAX_RANK) {
		free(idx);
		return err_set(c->err, "output rank is too large");
	}
	for (int i = 0; i < ga; i++)
		dims[o++] = d->dims[i], outer *= d->dims[i];
	for (int i = 0; i < ix->rank; i++)
		dims[o++] = ix->dims[i];
	for (int i = ga + 1; i < d->rank; i++)
		dims[o++] = d->dims[i], inner *= d->dims[i];
	for (int i = qa + 1; i < d->rank; i++)
		post *= d->dims[i];
	for (int64_t i = 0; i < nidx; i++) {
		if (idx[i] < -d->dims[ga] || idx[i] >= d->dims[ga]) {
			long long bad = (long long)idx[i];

			free(idx);
			return err_set(c->err, "index %lld is out of range",
			    bad);
		}
		if (idx[i] < 0)
			idx[i] += d->dims[ga];
	}
	if (tensor_alloc_uninit(&c->out[0], DT_FLOAT, rank, dims, c->err) < 0) {
		free(idx);
		return -1;
	}
	y = c->out[0].data;
	for (int64_t a = 0; a < outer; a++)
		for (int64_t i = 0; i < nidx; i++)
			for (int64_t j = 0; j < inner; j++) {
				int64_t f = (a * d->dims[ga] + idx[i]) * inner + j;
				int64_t cq = f / post % d->dims[qa];
				int64_t sf = (f / post / d->dims[qa] * nblk +
				    cq / block) * post + f % post;
				double z = zp ? tensor_get(zp, sf) :
				    d->dtype == DT_UINT8 ? 128 : 0;

				*y++ = (float)((tensor_get(d, f) - z) *
				    ((const float *)s->data)[sf]);
			}
	free(idx);
	return 0;
}

const struct op_def op_nbits_defs[] = {
	{ "com.microsoft", "MatMulNBits", matmul_nbits_run, NULL },
	{ "com.microsoft", "GatherBlockQuantized", gather_bq_run, NULL },
	{ NULL, NULL, NULL, NULL },
};
