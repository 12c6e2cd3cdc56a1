/*
 * op_rnn: the recurrent layers RNN, GRU and LSTM (float), in every
 * direction, with sequence_lens, initial states, LSTM peepholes and
 * input_forget, GRU linear_before_reset, clip, layout 0 and 1, and the
 * activation functions the spec lists (alpha and beta are taken in list
 * order by the activations that have them, as ONNX Runtime does).
 *
 * The input projection of the whole sequence is one matrix product per
 * direction (gemm.h), with both biases folded in; each step then does
 * one product with the recurrence weights over the batch. Outputs past a
 * batch entry's sequence length are zero; its final state is the one at
 * its last step.
 *
 * com.microsoft DynamicQuantizeLSTM is the same LSTM with its two
 * products quantized as ONNX Runtime computes them (ops_dynq_gemm): W and
 * R are uint8 or int8, laid out [directions, input, 4*hidden] (the
 * transpose of LSTM's), with scales and zero points per direction or per
 * direction and gate row; the input sequence of a direction is quantized
 * as one tensor, the hidden state once per step over the batch. ORT
 * reads one zero point per direction (the first of its row when per
 * row), and refuses per-row zero points that are not all 0 (int8) or
 * all equal (uint8); so do we. No layout attribute: time-major only.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "attr.h"
#include "gemm.h"
#include "ops.h"

enum rnn_kind { K_RNN, K_GRU, K_LSTM };

enum act {
	A_SIGMOID, A_TANH, A_RELU, A_AFFINE, A_LEAKYRELU, A_THRESHRELU,
	A_SCALEDTANH, A_HARDSIGMOID, A_ELU, A_SOFTSIGN, A_SOFTPLUS,
};

static const struct {
	const char *name;
	enum act act;
	int nalpha, nbeta;		/* 1 when it takes alpha / beta */
	float alpha, beta;		/* defaults */
} acts[] = {
	{ "Sigmoid", A_SIGMOID, 0, 0, 0, 0 },
	{ "Tanh", A_TANH, 0, 0, 0, 0 },
	{ "Relu", A_RELU, 0, 0, 0, 0 },
	{ "Affine", A_AFFINE, 1, 1, 1, 0 },
	{ "LeakyRelu", A_LEAKYRELU, 1, 0, 0.01f, 0 },
	{ "ThresholdedRelu", A_THRESHRELU, 1, 0, 1, 0 },
	{ "ScaledTanh", A_SCALEDTANH, 1, 1, 1, 1 },
	{ "HardSigmoid", A_HARDSIGMOID, 1, 1, 0.2f, 0.5f },
	{ "Elu", A_ELU, 1, 0, 1, 0 },
	{ "Softsign", A_SOFTSIGN, 0, 0, 0, 0 },
	{ "Softplus", A_SOFTPLUS, 0, 0, 0, 0 },
};

struct fn {
	enum act act;
	float alpha, beta;
};

static float
apply(const struct fn *f, float x)
{
	switch (f->act) {
	case A_SIGMOID:
		return 1 / (1 + expf(-x));
	case A_TANH:
		return tanhf(x);
	case A_RELU:
		return x > 0 ? x : 0;
	case A_AFFINE:
		return f->alpha * x + f->beta;
	case A_LEAKYRELU:
		return x >= 0 ? x : f->alpha * x;
	case A_THRESHRELU:
		return x > f->alpha ? x : 0;
	case A_SCALEDTANH:
		return f->alpha * tanhf(f->beta * x);
	case A_HARDSIGMOID:
		x = f->alpha * x + f->beta;
		return x < 0 ? 0 : x > 1 ? 1 : x;
	case A_ELU:
		return x >= 0 ? x : f->alpha * (expf(x) - 1);
	case A_SOFTSIGN:
		return x / (1 + fabsf(x));
	case A_SOFTPLUS:
		return log1pf(expf(x));
	}
	return x;
}

struct rnn {
	enum rnn_kind kind;
	int gates;			/* 1, 3 or 4 blocks of hidden rows */
	int nfn;			/* activations per direction */
	int ndir, reverse, layout, lbr, input_forget;
	int64_t seq, batch, in, hid;
	float clip;			/* 0: none */
	struct fn fn[2][3];
	const float *x, *w, *r, *b, *p, *h0, *c0;
	int64_t *lens;
	/* DynamicQuantizeLSTM: W, R, then their scales and zero points */
	const struct tensor *qw[2], *qs[2], *qz[2];
};

static int
parse_acts(struct op_ctx *c, struct rnn *rn)
{
	static const enum act defaults[3][3] = {
		{ A_TANH }, { A_SIGMOID, A_TANH }, { A_SIGMOID, A_TANH, A_TANH },
	};
	const Onnx__AttributeProto *a = attr_find(c->node, "activations");
	size_t nal = 0, nbe = 0, ia = 0, ib = 0, n = a ? a->n_strings : 0;
	const float *al = attr_floats(c->node, "activation_alpha", &nal);
	const float *be = attr_floats(c->node, "activation_beta", &nbe);

	if (n && n != (size_t)(rn->nfn * rn->ndir))
		return err_set(c->err, "%zu activations, %d expected", n,
		    rn->nfn * rn->ndir);
	for (int d = 0; d < rn->ndir; d++)
		for (int k = 0; k < rn->nfn; k++) {
			struct fn *f = &rn->fn[d][k];
			size_t i = 0, at = (size_t)(d * rn->nfn + k);

			if (!n) {
				f->act = defaults[rn->kind][k];
				continue;
			}
			for (; i < sizeof acts / sizeof acts[0]; i++)
				if (strlen(acts[i].name) == a->strings[at].len &&
				    strncasecmp(acts[i].name,
				    (const char *)a->strings[at].data,
				    a->strings[at].len) == 0)
					break;
			if (i == sizeof acts / sizeof acts[0])
				return err_set(c->err, "activation %.*s is not "
				    "supported", (int)(a->strings[at].len > 64 ? 64 :
				    a->strings[at].len), a->strings[at].data);
			f->act = acts[i].act;
			f->alpha = acts[i].alpha;
			f->beta = acts[i].beta;
			if (acts[i].nalpha && ia < nal)
				f->alpha = al[ia++];
			if (acts[i].nbeta && ib < nbe)
				f->beta = be[ib++];
		}
	return 0;
}

static const float *
opt_float(struct op_ctx *c, int i)
{
	return i < c->nin && c->in[i] ? c->in[i]->data : NULL;
}

/* Check shapes and read attributes; inputs as ONNX lists them. */
/*
 * DynamicQuantizeLSTM's W (i 0) or R (i 1) with its scale (input 8 + 2i)
 * and zero point (9 + 2i), as ORT checks them.
 */
static int
quant_setup(struct op_ctx *c, struct rnn *rn, int i)
{
	const struct tensor *q = c->in[1 + i], *s = ops_input(c, 8 + 2 * i),
	    *z = ops_input(c, 9 + 2 * i);
	const char *what = i ? "R" : "W";
	int64_t g = 4 * rn->hid, k = i ? rn->hid : rn->in;

	if (q->dtype != DT_UINT8 && q->dtype != DT_INT8)
		return err_set(c->err, "%s must be uint8 or int8", what);
	if (q->dims[0] != rn->ndir || q->dims[1] != k || q->dims[2] != g)
		return err_set(c->err, "%s must be %dx%lldx%lld", what,
		    rn->ndir, (long long)k, (long long)g);
	if (!s || !z || s->dtype != DT_FLOAT || z->dtype != q->dtype ||
	    s->nelem != z->nelem || (s->nelem != rn->ndir &&
	    s->nelem != rn->ndir * g))
		return err_set(c->err, "%s_scale and %s_zero_point must have "
		    "%d or %lld elements, float and %s's type", what, what,
		    rn->ndir, (long long)(rn->ndir * g), what);
	for (int64_t j = 1; s->nelem > rn->ndir && j < z->nelem; j++)
		if (q->dtype == DT_INT8 ? ((const int8_t *)z->data)[j] != 0 ||
		    ((const int8_t *)z->data)[0] != 0 :
		    ((const uint8_t *)z->data)[j] !=
		    ((const uint8_t *)z->data)[0])
			return err_set(c->err, "%s_zero_point: per-row zero "
			    "points must be %s", what, q->dtype == DT_INT8 ?
			    "0" : "equal");
	rn->qw[i] = q;
	rn->qs[i] = s;
	rn->qz[i] = z;
	return 0;
}

static int
rnn_setup(struct op_ctx *c, struct rnn *rn, enum rnn_kind kind, int quant)
{
	static const int gates[] = { 1, 3, 4 }, nfn[] = { 1, 2, 3 };
	const struct tensor *x = c->in[0], *w = c->nin > 1 ? c->in[1] : NULL,
	    *r = c->nin > 2 ? c->in[2] : NULL;
	char buf[32];
	const char *dir;
	int64_t g;

	memset(rn, 0, sizeof *rn);
	rn->kind = kind;
	rn->gates = gates[kind];
	rn->nfn = nfn[kind];
	if (!x || !w || !r)
		return err_set(c->err, "X, W and R are required");
	for (int i = 0; i < c->nin && i < 8; i++)
		if (c->in[i] && i != 4 && !(quant && (i == 1 || i == 2)) &&
		    c->in[i]->dtype != DT_FLOAT)
			return err_set(c->err, "input %d: only float is "
			    "supported", i);
	dir = attr_string(c->node, "direction", "forward", buf, sizeof buf);
	rn->reverse = strcmp(dir, "reverse") == 0;
	if (strcmp(dir, "forward") == 0 || rn->reverse)
		rn->ndir = 1;
	else if (strcmp(dir, "bidirectional") == 0)
		rn->ndir = 2;
	else
		return err_set(c->err, "direction %s is not known", dir);
	rn->layout = quant ? 0 : (int)attr_int(c->node, "layout", 0);
	rn->lbr = (int)attr_int(c->node, "linear_before_reset", 0);
	rn->input_forget = (int)attr_int(c->node, "input_forget", 0);
	rn->clip = attr_float(c->node, "clip", 0);
	if (x->rank != 3 || w->rank != 3 || r->rank != 3)
		return err_set(c->err, "X, W and R must have rank 3");
	rn->seq = x->dims[rn->layout ? 1 : 0];
	rn->batch = x->dims[rn->layout ? 0 : 1];
	rn->in = x->dims[2];
	rn->hid = attr_int(c->node, "hidden_size", r->dims[quant ? 1 : 2]);
	g = rn->gates * rn->hid;
	if (quant) {
		if (quant_setup(c, rn, 0) < 0 || quant_setup(c, rn, 1) < 0)
			return -1;
	} else if (w->dims[0] != rn->ndir || w->dims[1] != g ||
	    w->dims[2] != rn->in || r->dims[0] != rn->ndir ||
	    r->dims[1] != g || r->dims[2] != rn->hid)
		return err_set(c->err, "W or R does not fit %d direction(s), "
		    "hidden size %lld and input size %lld", rn->ndir,
		    (long long)rn->hid, (long long)rn->in);
	rn->x = x->data;
	rn->w = quant ? NULL : w->data;
	rn->r = quant ? NULL : r->data;
	rn->b = opt_float(c, 3);
	rn->h0 = opt_float(c, 5);
	rn->c0 = kind == K_LSTM ? opt_float(c, 6) : NULL;
	rn->p = kind == K_LSTM ? opt_float(c, 7) : NULL;
	if (rn->b && c->in[3]->nelem != rn->ndir * 2 * g)
		return err_set(c->err, "B must have %lld elements",
		    (long long)(rn->ndir * 2 * g));
	for (int i = 5; i <= 6; i++)
		if (i < c->nin && c->in[i] && (kind == K_LSTM || i == 5) &&
		    c->in[i]->nelem != rn->ndir * rn->batch * rn->hid)
			return err_set(c->err, "initial state %d must have %lld "
			    "elements", i, (long long)(rn->ndir * rn->batch *
			    rn->hid));
	if (rn->p && c->in[7]->nelem != rn->ndir * 3 * rn->hid)
		return err_set(c->err, "P must have %lld elements",
		    (long long)(rn->ndir * 3 * rn->hid));
	if (c->nin > 4 && c->in[4]) {
		int64_t n;

		if (ops_read_ints(c->in[4], &rn->lens, &n, c->err) < 0)
			return -1;
		if (n != rn->batch)
			return err_set(c->err, "sequence_lens has %lld entries "
			    "for a batch of %lld", (long long)n,
			    (long long)rn->batch);
		for (int64_t b = 0; b < n; b++)
			if (rn->lens[b] < 0 || rn->lens[b] > rn->seq)
				return err_set(c->err, "sequence length %lld is "
				    "outside 0..%lld", (long long)rn->lens[b],
				    (long long)rn->seq);
	}
	return parse_acts(c, rn);
}

static float
clipped(const struct rnn *rn, float v)
{
	if (rn->clip > 0)
		v = v < -rn->clip ? -rn->clip : v > rn->clip ? rn->clip : v;
	return v;
}

/* Index of (t, b) rows of X and of a state (dir d) in each layout. */
static int64_t
x_row(const struct rnn *rn, int64_t t, int64_t b)
{
	return rn->layout ? b * rn->seq + t : t * rn->batch + b;
}

static int64_t
state_at(const struct rnn *rn, int d, int64_t b)
{
	return (rn->layout ? b * rn->ndir + d : d * rn->batch + b) * rn->hid;
}

static int64_t
y_at(const struct rnn *rn, int64_t t, int d, int64_t b)
{
	return (rn->layout ? (b * rn->seq + t) * rn->ndir + d :
	    (t * rn->ndir + d) * rn->batch + b) * rn->hid;
}

/* Scratch for one direction. */
struct work {
	float *xw;			/* seq*batch x G*H: X W^T + biases */
	float *hr;			/* batch x G*H: H R^T */
	float *h, *cell;		/* batch x H states */
	float *rh;			/* GRU: r (.) H */
};

/* One step of one direction for batch entry b at time t. */
static void
cell_step(const struct rnn *rn, int d, const struct work *wk, int64_t t,
    int64_t b, const float *rb)
{
	int64_t hid = rn->hid, g = rn->gates * hid;
	const float *x = wk->xw + x_row(rn, t, b) * g, *hr = wk->hr + b * g;
	const struct fn *fn = rn->fn[d];
	float *h = wk->h + b * hid;

	if (rn->kind == K_RNN) {
		for (int64_t j = 0; j < hid; j++)
			h[j] = apply(&fn[0], clipped(rn, x[j] + hr[j]));
	} else if (rn->kind == K_GRU) {
		/* gru_gates() made z and r, and the h block of hr. */
		const float *z = hr;

		for (int64_t j = 0; j < hid; j++) {
			float hh;

			if (rn->lbr)
				hh = apply(&fn[1], clipped(rn, x[2 * hid + j] +
				    hr[hid + j] * (hr[2 * hid + j] +
				    (rb ? rb[2 * hid + j] : 0))));
			else
				hh = apply(&fn[1], clipped(rn, x[2 * hid + j] +
				    hr[2 * hid + j]));
			h[j] = (1 - z[j]) * hh + z[j] * h[j];
		}
	} else {
		const float *p = rn->p ? rn->p + d * 3 * hid : NULL;
		float *cl = wk->cell + b * hid;

		for (int64_t j = 0; j < hid; j++) {
			float i, f, cc, o, cn;

			i = apply(&fn[0], clipped(rn, x[j] + hr[j] +
			    (p ? p[j] * cl[j] : 0)));
			f = rn->input_forget ? 1 - i : apply(&fn[0], clipped(rn,
			    x[2 * hid + j] + hr[2 * hid + j] +
			    (p ? p[2 * hid + j] * cl[j] : 0)));
			cc = apply(&fn[1], clipped(rn, x[3 * hid + j] +
			    hr[3 * hid + j]));
			cn = f * cl[j] + i * cc;
			o = apply(&fn[0], clipped(rn, x[hid + j] + hr[hid + j] +
			    (p ? p[hid + j] * cn : 0)));
			cl[j] = cn;
			h[j] = o * apply(&fn[2], cn);
		}
	}
}

static int64_t
seq_len(const struct rnn *rn, int64_t b)
{
	return rn->lens ? rn->lens[b] : rn->seq;
}

/* The time step s of a direction reaches for batch entry b; -1 if none. */
static int64_t
time_at(const struct rnn *rn, int reverse, int64_t s, int64_t b)
{
	int64_t len = seq_len(rn, b);

	return s >= len ? -1 : reverse ? len - 1 - s : s;
}

/*
 * GRU before the candidate: z and r (activated, in place in hr) for
 * every live entry; then, unless linear_before_reset, the h block of hr
 * becomes (r (.) H) Rh^T.
 */
static int
gru_gates(struct op_ctx *c, const struct rnn *rn, int d, struct work *wk,
    int reverse, int64_t s, const float *rmat)
{
	int64_t hid = rn->hid, g = 3 * hid;

	for (int64_t b = 0; b < rn->batch; b++) {
		int64_t t = time_at(rn, reverse, s, b);
		const float *x;
		float *hr = wk->hr + b * g;

		if (t < 0)
			continue;
		x = wk->xw + x_row(rn, t, b) * g;
		for (int64_t j = 0; j < 2 * hid; j++)
			hr[j] = apply(&rn->fn[d][0], clipped(rn, x[j] + hr[j]));
		for (int64_t j = 0; !rn->lbr && j < hid; j++)
			wk->rh[b * hid + j] = hr[hid + j] * wk->h[b * hid + j];
	}
	if (rn->lbr)
		return 0;
	return gemm_sgemm(0, 1, rn->batch, hid, hid, 1, wk->rh, hid,
	    rmat + 2 * hid * hid, hid, 0, wk->hr + 2 * hid, g, c->threads,
	    c->err);
}

/*
 * out (m x G*H) = a (m x k) times direction d's W^T (i 0) or R^T (i 1):
 * in float, or quantized for DynamicQuantizeLSTM.
 */
static int
project(struct op_ctx *c, const struct rnn *rn, int i, int d,
    const float *a, int64_t m, int64_t k, float *out)
{
	int64_t g = rn->gates * rn->hid, ns;
	const struct tensor *q = rn->qw[i], *z = rn->qz[i];
	struct tensor b, bz;

	if (!q)
		return gemm_sgemm(0, 1, m, g, k, 1, a, k, (i ? rn->r : rn->w) +
		    d * g * k, k, 0, out, g, c->threads, c->err);
	/* Views of direction d's weight and its zero point, not owned. */
	ns = rn->qs[i]->nelem / rn->ndir;
	memset(&b, 0, sizeof b);
	b.dtype = bz.dtype = q->dtype;
	b.rank = 2;
	b.dims[0] = k;
	b.dims[1] = g;
	b.nelem = k * g;
	b.data = (char *)q->data + d * k * g * (int64_t)dtype_size(q->dtype);
	memset(&bz, 0, sizeof bz);
	bz.dtype = z->dtype;
	bz.nelem = 1;
	bz.data = (char *)z->data + d * ns * (int64_t)dtype_size(z->dtype);
	return ops_dynq_gemm(c, a, m, k, &b, &bz, (const float *)
	    rn->qs[i]->data + d * ns, ns, out, 0);
}

static int
run_direction(struct op_ctx *c, const struct rnn *rn, int d, int reverse,
    struct work *wk, float *y, float *yh, float *yc)
{
	int64_t hid = rn->hid, g = rn->gates * hid, rows = rn->seq * rn->batch;
	const float *rmat = rn->r ? rn->r + d * g * hid : NULL;
	const float *wb = rn->b ? rn->b + d * 2 * g : NULL;
	const float *rb = wb ? wb + g : NULL;
	/* GRU with linear_before_reset multiplies Rbh by r: not folded. */
	int64_t fold = rn->kind == K_GRU && rn->lbr ? 2 * hid : g;

	if (project(c, rn, 0, d, rn->x, rows, rn->in, wk->xw) < 0)
		return -1;
	for (int64_t i = 0; wb && i < rows; i++)
		for (int64_t j = 0; j < g; j++)
			wk->xw[i * g + j] += wb[j] + (j < fold ? rb[j] : 0);
	for (int64_t b = 0; b < rn->batch; b++) {
		if (rn->h0)
			memcpy(wk->h + b * hid, rn->h0 + state_at(rn, d, b),
			    (size_t)hid * sizeof *wk->h);
		else
			memset(wk->h + b * hid, 0, (size_t)hid * sizeof *wk->h);
		if (rn->kind != K_LSTM)
			continue;
		if (rn->c0)
			memcpy(wk->cell + b * hid, rn->c0 + state_at(rn, d, b),
			    (size_t)hid * sizeof *wk->cell);
		else
			memset(wk->cell + b * hid, 0, (size_t)hid *
			    sizeof *wk->cell);
	}
	for (int64_t s = 0; s < rn->seq; s++) {
		if (project(c, rn, 1, d, wk->h, rn->batch, hid, wk->hr) < 0)
			return -1;
		if (rn->kind == K_GRU && gru_gates(c, rn, d, wk, reverse, s,
		    rmat) < 0)
			return -1;
		for (int64_t b = 0; b < rn->batch; b++) {
			int64_t t = time_at(rn, reverse, s, b);

			if (t < 0)
				continue;
			cell_step(rn, d, wk, t, b, rb);
			if (y)
				memcpy(y + y_at(rn, t, d, b), wk->h + b * hid,
				    (size_t)hid * sizeof *y);
		}
	}
	for (int64_t b = 0; b < rn->batch; b++) {
		if (yh)
			memcpy(yh + state_at(rn, d, b), wk->h + b * hid,
			    (size_t)hid * sizeof *yh);
		if (yc)
			memcpy(yc + state_at(rn, d, b), wk->cell + b * hid,
			    (size_t)hid * sizeof *yc);
	}
	return 0;
}

static int
rnn_common(struct op_ctx *c, enum rnn_kind kind, int quant)
{
	struct rnn rn;
	struct work wk = { 0 };
	float *outs[3] = { NULL, NULL, NULL };
	int r = -1;

	if (rnn_setup(c, &rn, kind, quant) < 0)
		goto done;
	for (int k = 0; k < c->nout && k < (kind == K_LSTM ? 3 : 2); k++) {
		int64_t dims[4];
		int rank = k == 0 ? 4 : 3;

		if (k == 0 && rn.layout)
			dims[0] = rn.batch, dims[1] = rn.seq, dims[2] = rn.ndir;
		else if (k == 0)
			dims[0] = rn.seq, dims[1] = rn.ndir, dims[2] = rn.batch;
		else if (rn.layout)
			dims[0] = rn.batch, dims[1] = rn.ndir;
		else
			dims[0] = rn.ndir, dims[1] = rn.batch;
		dims[rank - 1] = rn.hid;
		/* Zeros past each entry's sequence length. */
		if (tensor_alloc(&c->out[k], DT_FLOAT, rank, dims, c->err) < 0)
			goto done;
		outs[k] = c->out[k].data;
	}
	{
		int64_t g = rn.gates * rn.hid, bh = rn.batch * rn.hid;

		wk.xw = malloc((size_t)(rn.seq * rn.batch * g + 1) * sizeof *wk.xw);
		wk.hr = malloc((size_t)(rn.batch * g + 1) * sizeof *wk.hr);
		wk.h = malloc((size_t)(bh + 1) * sizeof *wk.h);
		wk.cell = malloc((size_t)(bh + 1) * sizeof *wk.cell);
		wk.rh = malloc((size_t)(bh + 1) * sizeof *wk.rh);
		if (!wk.xw || !wk.hr || !wk.h || !wk.cell || !wk.rh) {
			err_nomem(c->err);
			goto done;
		}
	}
	for (int d = 0; d < rn.ndir; d++)
		if (run_direction(c, &rn, d, d == 1 || rn.reverse,
		    &wk, outs[0], outs[1], outs[2]) < 0)
			goto done;
	r = 0;
done:
	free(rn.lens);
	free(wk.xw);
	free(wk.hr);
	free(wk.h);
	free(wk.cell);
	free(wk.rh);
	return r;
}

static int
rnn_run(struct op_ctx *c)
{
	return rnn_common(c, K_RNN, 0);
}

static int
gru_run(struct op_ctx *c)
{
	return rnn_common(c, K_GRU, 0);
}

static int
lstm_run(struct op_ctx *c)
{
	return rnn_common(c, K_LSTM, 0);
}

static int
dqlstm_run(struct op_ctx *c)
{
	return rnn_common(c, K_LSTM, 1);
}

const struct op_def op_rnn_defs[] = {
	{ "", "RNN", rnn_run, NULL },
	{ "", "GRU", gru_run, NULL },
	{ "", "LSTM", lstm_run, NULL },
	{ "com.microsoft", "DynamicQuantizeLSTM", dqlstm_run, NULL },
	{ NULL, NULL, NULL, NULL },
};
