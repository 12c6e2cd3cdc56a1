/* mixsearch: see mixsearch.h and onnx-mixprec(1). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mixsearch.h"
#include "qparams.h"
#include "tensor.h"
#include "util.h"

/* A candidate: tensors quantized together (sharing parameters). */
struct cand {
	int *t;			/* tensors */
	int nt;
	int to_float;		/* their producers left in float instead */
	int twin;		/* the other variant of the same tensors, -1 */
	char *label;		/* "conv5_out", "reshape_3 (+2)" */
	double gain;		/* output noise it removes, alone */
	double cost;		/* extra bits per sample / 8, alone */
	double score;
	int usable;
};

struct search {
	const struct mixsearch_opts *o;
	struct mixprec *mp;
	const struct mixsearch_eval *ev;
	int runs;
	FILE *fp;		/* the note being written */
	char *buf;
	size_t len;
	struct mixprec_type t16, tfloat;
	struct cand *c;
	int nc;
	int *chain;		/* usable candidates by score */
	int nchain;
	int alone;		/* measure candidates alone, not from the top */
};

/*
 * Start a note: write it to the FILE returned, then note_end() sends it.
 * NULL when no note is wanted (or no memory for it).
 */
static FILE *
note_start(struct search *S)
{
	if (S->o->note == NULL)
		return NULL;
	S->buf = NULL;
	S->len = 0;
	return S->fp = open_memstream(&S->buf, &S->len);
}

static void
note_end(struct search *S)
{
	if (fclose(S->fp) == 0 && S->buf)
		S->o->note(S->o->ctx, S->buf);
	free(S->buf);
	S->fp = NULL;
	S->buf = NULL;
}

static void
progress(struct search *S, int done)
{
	if (S->o->progress)
		S->o->progress(S->o->ctx, done, S->nc);
}

static int
evaluate(struct search *S, int n, double stop, double head_stop,
    struct mixsearch_score *sc, struct err *e)
{
	S->runs++;
	return S->ev->run(S->ev->ctx, S->mp, n, stop, head_stop, sc, e);
}

/* The noise at the probes of the first n samples: sc->pnoise only. */
static int
evaluate_probes(struct search *S, int n, struct mixsearch_score *sc,
    struct err *e)
{
	if (S->ev->run_probes == NULL)
		return evaluate(S, n, INFINITY, INFINITY, sc, e);
	S->runs++;
	return S->ev->run_probes(S->ev->ctx, S->mp, n, sc, e);
}

/* The next evaluation is the one those after it differ from. */
static void
reference(struct search *S)
{
	if (S->ev->reference)
		S->ev->reference(S->ev->ctx);
}

static int
find_root(int *parent, int i)
{
	while (parent[i] != i) {
		parent[i] = parent[parent[i]];
		i = parent[i];
	}
	return i;
}

/*
 * A node whose one quantized input and one quantized output round alike:
 * Relu, Clip, and Add, Sub, Mul, Div with a constant.
 */
static int
passes_rounding(const struct mixprec *mp, int n, int *in, int *out)
{
	static const char *const unary[] = { "Relu", "Clip" };
	static const char *const arith[] = { "Add", "Sub", "Mul", "Div" };
	const char *op = mixprec_node_op(mp, n);
	const int *v;
	int k = mixprec_node_tensors(mp, n, &v), nin = 0, nout = 0, ok = 0;

	for (size_t i = 0; i < 2; i++)
		ok |= strcmp(op, unary[i]) == 0;
	for (size_t i = 0; i < 4; i++)
		ok |= strcmp(op, arith[i]) == 0;
	if (!ok)
		return 0;
	for (int i = 0; i < k; i++) {
		if (!mixprec_tensor_quantized(mp, v[i]))
			continue;
		if (mixprec_tensor_producer(mp, v[i]) == n) {
			*out = v[i];
			nout++;
		} else {
			*in = v[i];
			nin++;
		}
	}
	if (nin != 1 || nout != 1)
		return 0;
	/* The other inputs of arithmetic must be constants. */
	k = mixprec_node_inputs(mp, n, &v);
	for (int i = 0; i < k; i++)
		if (v[i] >= 0 && v[i] != *in && !mixprec_tensor_constant(mp, v[i]))
			return 0;
	return 1;
}

/* The quantized activation groups: a tensor and those sharing its grid. */
static int
make_candidates(struct search *S, struct err *e)
{
	struct mixprec *mp = S->mp;
	int nt = mixprec_ntensors(mp), *parent, *root_cand, rc = -1;

	parent = calloc((size_t)nt + 1, sizeof *parent);
	root_cand = calloc((size_t)nt + 1, sizeof *root_cand);
	S->c = calloc(2 * (size_t)nt + 1, sizeof *S->c);
	if (!parent || !root_cand || !S->c) {
		err_nomem(e);
		goto out;
	}
	for (int i = 0; i < nt; i++) {
		parent[i] = i;
		root_cand[i] = -1;
	}
	/*
	 * Tensors a data-movement node passes through keep their source's
	 * grid: promoting one without the other changes nothing.
	 */
	for (int i = 0; i < nt; i++) {
		int src = mixprec_tensor_shared_from(mp, i);

		if (src >= 0)
			parent[find_root(parent, i)] = find_root(parent, src);
	}
	/*
	 * Likewise across Relu and Clip (whose input takes the output's
	 * range) and across arithmetic with a constant (a scale, a shift):
	 * the second rounding repeats the first, so only both together
	 * gain anything.
	 */
	for (int n = 0; n < mixprec_nnodes(mp); n++) {
		int in = -1, out = -1;

		if (!passes_rounding(mp, n, &in, &out))
			continue;
		parent[find_root(parent, out)] = find_root(parent, in);
	}
	for (int i = 0; i < nt; i++) {
		struct cand *c;
		int r, *nv;

		if (!mixprec_tensor_quantized(mp, i))
			continue;
		r = find_root(parent, i);
		if (root_cand[r] < 0) {
			root_cand[r] = S->nc;
			S->c[S->nc].twin = -1;
			S->nc++;
		}
		c = &S->c[root_cand[r]];
		if ((nv = realloc(c->t, ((size_t)c->nt + 1) *
		    sizeof *c->t)) == NULL) {
			err_nomem(e);
			goto out;
		}
		c->t = nv;
		c->t[c->nt++] = i;
	}
	/*
	 * Float variants: the producers left in float (with --type float
	 * every candidate is one already).
	 */
	if (S->o->allow_float && S->t16.type != DT_FLOAT) {
		int n = S->nc;

		for (int i = 0; i < n; i++) {
			struct cand *c = &S->c[S->nc];

			*c = S->c[i];
			if ((c->t = malloc((size_t)c->nt * sizeof *c->t)) ==
			    NULL) {
				err_nomem(e);
				goto out;
			}
			memcpy(c->t, S->c[i].t, (size_t)c->nt * sizeof *c->t);
			c->to_float = 1;
			c->twin = i;
			S->c[i].twin = S->nc;
			S->nc++;
		}
	}
	for (int i = 0; i < S->nc; i++) {
		struct cand *c = &S->c[i];
		const char *name = mixprec_tensor_name(mp, c->t[0]);

		if (c->nt > 1)
			c->label = str_fmt("%s (+%d%s)", name, c->nt - 1,
			    c->to_float ? ", float" : "");
		else
			c->label = str_fmt("%s%s", name, c->to_float ?
			    " (float)" : "");
		if (c->label == NULL) {
			err_nomem(e);
			goto out;
		}
	}
	rc = 0;
out:
	free(parent);
	free(root_cand);
	return rc;
}

/* Request one candidate; -1 when it conflicts with what is requested. */
static int
request_cand(struct search *S, const struct cand *c, struct config_msgs *m)
{
	struct mixprec *mp = S->mp;
	int rc = 0;

	for (int i = 0; i < c->nt; i++) {
		int t = c->t[i], p = mixprec_tensor_producer(mp, t), f;

		if (c->to_float || S->t16.type == DT_FLOAT) {
			if (p < 0)
				continue;	/* a graph input stays quantized */
			if (mixprec_request_node(mp, p, &S->tfloat, c->label,
			    m) < 0)
				rc = -1;
			if ((f = mixprec_node_fold_partner(mp, p)) >= 0 &&
			    mixprec_request_node(mp, f, &S->tfloat, c->label,
			    m) < 0)
				rc = -1;
			continue;
		}
		if (mixprec_request_tensor(mp, t, &S->t16, c->label, m) < 0)
			rc = -1;
		/* A Relu/Clip folded into its producer goes with it. */
		if (p >= 0 && (f = mixprec_node_fold_partner(mp, p)) >= 0 &&
		    mixprec_request_node(mp, f, &S->t16, c->label, m) < 0)
			rc = -1;
	}
	return rc;
}

/*
 * Resolve the candidates v[0..n) (and extra, unless -1). 0, or 1 when
 * they do not go together; -1 on error.
 */
static int
setup(struct search *S, const int *v, int n, int extra, struct err *e)
{
	struct config_msgs m = { 0 };
	long problems;
	int bad = 0;

	mixprec_clear(S->mp);
	for (int i = 0; i < n; i++)
		if (request_cand(S, &S->c[v[i]], &m) < 0)
			bad = 1;
	if (extra >= 0 && request_cand(S, &S->c[extra], &m) < 0)
		bad = 1;
	if (!bad) {
		if ((problems = mixprec_resolve(S->mp, &m, e)) < 0) {
			config_msgs_release(&m);
			return -1;
		}
		bad = problems > 0;
	}
	if (bad && S->o->verbose && extra >= 0)
		for (size_t i = 0; i < m.n; i++) {
			FILE *fp = note_start(S);

			if (fp == NULL)
				break;
			fprintf(fp, "candidate %s left out: %s",
			    S->c[extra].label, m.v[i]);
			note_end(S);
		}
	config_msgs_release(&m);
	return bad;
}

static double
share_of(const struct mixprec_summary *s)
{
	return s->elems > 0 ? 100 * s->elems_promoted / s->elems : 0;
}

static int
target_met(const struct mixsearch_opts *o,
    const struct mixsearch_score *sc)
{
	if (!isnan(o->target_snr) && !(sc->snr >= o->target_snr))
		return 0;
	if (!isnan(o->target_agree) && !(sc->agree >= o->target_agree))
		return 0;
	return 1;
}

void
mixsearch_put_score(FILE *fp, const struct mixsearch_score *sc)
{
	fprintf(fp, "snr %.2f dB", sc->snr);
	if (!isnan(sc->agree))
		fprintf(fp, ", top-1 agreement %.2f%%", sc->agree);
}

static int
cmp_score(const void *a, const void *b)
{
	const struct cand *x = *(struct cand *const *)a;
	const struct cand *y = *(struct cand *const *)b;

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return x < y ? -1 : x > y;
}

/*
 * What each candidate buys, and what it costs in elements. The 8-bit
 * model can be chaotic (PaddleOCR's recognizer is: a rounding flip early
 * grows to most of the elements later, and runtimes that round ties
 * differently give different outputs), so what promoting one tensor
 * alone does there is mostly chance. So a candidate's gain is measured
 * from the other end, where rounding does not cascade: the noise at the
 * probes that leaving it alone in 8 bits adds to the model with every
 * other candidate promoted, on the first nprobe samples (the noisiest).
 * Its float variant removes the same noise, at its own cost. When all
 * candidates together do not go together, each is measured alone in the
 * quantized model instead (probe noise `base` there).
 */
static int
measure(struct search *S, int nprobe, double base, struct err *e)
{
	struct mixprec *mp = S->mp;
	struct mixprec_summary sum;
	struct mixsearch_score sc, top;
	FILE *fp;
	int *others, n16 = 0, bad, from_top;

	if ((others = calloc((size_t)S->nc + 1, sizeof *others)) == NULL)
		return err_nomem(e);
	for (int i = 0; i < S->nc; i++)
		if (!S->c[i].to_float)
			others[n16++] = i;
	bad = 1;
	if (!S->alone)
		reference(S);
	if (!S->alone && ((bad = setup(S, others, n16, -1, e)) < 0 ||
	    (!bad && evaluate(S, nprobe, INFINITY, INFINITY, &top,
	    e) < 0))) {
		free(others);
		return -1;
	}
	from_top = !bad;
	/*
	 * Measured alone, the candidates differ from the quantized model:
	 * its probe run again (the same bits) is their reference.
	 */
	if (!from_top) {
		mixprec_clear(S->mp);
		reference(S);
		if (evaluate(S, nprobe, INFINITY, INFINITY, &sc, e) < 0) {
			free(others);
			return -1;
		}
	}
	if (!S->o->quiet && from_top && (fp = note_start(S)) != NULL) {
		fprintf(fp, "all candidates promoted, on the %d noisiest "
		    "samples: %.2f dB at the probes", nprobe,
		    -10 * log10(top.pnoise));
		note_end(S);
	}
	for (int i = 0; i < S->nc; i++) {
		struct cand *c = &S->c[i];
		int k = 0;

		progress(S, i);
		c->usable = 0;
		if ((bad = setup(S, NULL, 0, i, e)) < 0)
			goto fail;
		mixprec_summarize(mp, &sum);
		c->cost = sum.cost;
		if (bad || !(c->cost > 0) || (!isnan(S->o->budget) &&
		    share_of(&sum) > S->o->budget))
			continue;
		if (from_top && c->to_float) {
			c->gain = S->c[c->twin].gain;
		} else if (from_top) {
			for (int j = 0; j < S->nc; j++)
				if (!S->c[j].to_float && j != i)
					others[k++] = j;
			if ((bad = setup(S, others, k, -1, e)) < 0)
				goto fail;
			if (bad || evaluate_probes(S, nprobe, &sc, e) < 0)
				goto fail;
			c->gain = sc.pnoise - top.pnoise;
		} else {
			if (evaluate_probes(S, nprobe, &sc, e) < 0)
				goto fail;
			c->gain = base - sc.pnoise;
		}
		c->usable = c->gain > 0 && isfinite(c->gain);
		c->score = c->usable ? c->gain / c->cost : 0;
		if (S->o->verbose && (fp = note_start(S)) != NULL) {
			fprintf(fp, "candidate %s: removes %.3g of the probe "
			    "noise, cost %.0f%s", c->label, c->gain, c->cost,
			    c->usable ? "" : " (no gain)");
			note_end(S);
		}
	}
	progress(S, S->nc);
	free(others);
	return 0;
fail:
	if (bad > 0)
		err_set(e, "the candidates conflict");
	progress(S, S->nc);
	free(others);
	return -1;
}

/*
 * The usable candidates by noise removed per unit of cost, each kept when
 * it goes with those before it (the float and 16-bit variants of a
 * tensor do not) and the budget allows.
 */
static int
make_chain(struct search *S, struct err *e)
{
	struct mixprec_summary sum;
	struct cand **order;
	int n = 0, bad;

	if ((order = calloc((size_t)S->nc + 1, sizeof *order)) == NULL ||
	    (S->chain = calloc((size_t)S->nc + 1, sizeof *S->chain)) == NULL) {
		free(order);
		return err_nomem(e);
	}
	for (int i = 0; i < S->nc; i++)
		if (S->c[i].usable)
			order[n++] = &S->c[i];
	qsort(order, (size_t)n, sizeof *order, cmp_score);
	for (int i = 0; i < n; i++) {
		int ci = (int)(order[i] - S->c);

		if ((bad = setup(S, S->chain, S->nchain, ci, e)) < 0) {
			free(order);
			return -1;
		}
		mixprec_summarize(S->mp, &sum);
		if (bad || (!isnan(S->o->budget) &&
		    share_of(&sum) > S->o->budget))
			continue;
		S->chain[S->nchain++] = ci;
	}
	free(order);
	return 0;
}

static void
put_share(FILE *fp, const struct mixprec_summary *sum)
{
	fprintf(fp, "; %d tensors promoted, %d in float, %.2f%% of the "
	    "elements", sum->promoted, sum->floated, share_of(sum));
}

/* Note an accepted step: the candidates chain[from..to). */
static void
note_step(struct search *S, int step, int from, int to,
    const struct mixsearch_score *sc, const struct mixprec_summary *sum)
{
	int shown = 0, max = S->o->verbose ? to - from : 6;
	FILE *fp;

	if ((fp = note_start(S)) == NULL)
		return;
	fprintf(fp, "step %d: %s %d (", step,
	    to - from == 1 && S->c[S->chain[from]].to_float ?
	    "left in float" : "promoted", to - from);
	for (int i = from; i < to && shown < max; i++, shown++)
		fprintf(fp, "%s%s", shown ? ", " : "",
		    S->c[S->chain[i]].label);
	if (to - from > shown)
		fprintf(fp, ", ...");
	fprintf(fp, "): ");
	mixsearch_put_score(fp, sc);
	put_share(fp, sum);
	note_end(S);
}

/*
 * The noise (struct mixsearch_score) past which the SNR target cannot be
 * met: some output's noise over signal then passes 10^(-target/10), and
 * noise only grows with the samples. A hair over it, so that rounding
 * cannot make a run stop that would have met the target. INFINITY when
 * there is no SNR target.
 */
static double
snr_stop(const struct search *S)
{
	if (isnan(S->o->target_snr) || S->ev->noutputs <= 0)
		return INFINITY;
	return S->ev->noutputs * pow(10, -S->o->target_snr / 10) *
	    (1 + 1e-9);
}

/*
 * A batch of *b candidates (taken[n..n + *b)) reached the target: the
 * fewest of them, from the first, that do too (halving), with their
 * score in *sc. Each run is a step.
 */
static int
trim(struct search *S, const int *taken, int n,
    int *b, struct mixsearch_score *sc, int *step, struct err *e)
{
	struct mixprec_summary sum;
	struct mixsearch_score t;
	int lo = 0, hi = *b;
	FILE *fp;

	while (hi - lo > 1) {
		int mid = lo + (hi - lo) / 2;

		if (setup(S, taken, n + mid, -1, e) != 0)
			return err_set(e, "the chosen candidates conflict");
		/* Stopped as soon as the target is out of reach. */
		if (evaluate(S, 0, snr_stop(S), INFINITY, &t, e) < 0)
			return -1;
		mixprec_summarize(S->mp, &sum);
		if (!S->o->quiet && (fp = note_start(S)) != NULL) {
			fprintf(fp, "step %d: the first %d of those: ", ++*step,
			    mid);
			if (t.samples < S->ev->nsamples)
				fprintf(fp, "snr under %.2f dB after %d of "
				    "%d samples", S->o->target_snr, t.samples,
				    S->ev->nsamples);
			else
				mixsearch_put_score(fp, &t);
			put_share(fp, &sum);
			note_end(S);
		}
		if (t.samples == S->ev->nsamples && target_met(S->o, &t)) {
			hi = mid;
			*sc = t;
		} else
			lo = mid;
	}
	*b = hi;
	return 0;
}
void
mixsearch_opts_init(struct mixsearch_opts *o)
{
	memset(o, 0, sizeof *o);
	o->target_snr = o->target_agree = o->budget = NAN;
}

/* The promotion type: 16 bits of the activations' own signedness. */
static int
promotion_type(const struct mixprec *mp)
{
	int nu = 0, ns = 0;

	for (int i = 0; i < mixprec_ntensors(mp); i++) {
		int ty = mixprec_tensor_type(mp, i);

		if (ty == DT_UINT8 || ty == DT_UINT4 || ty == DT_UINT16)
			nu++;
		else if (ty != DT_UNDEFINED)
			ns++;
	}
	return nu >= ns ? DT_UINT16 : DT_INT16;
}

static void
note_text(struct search *S, const char *text)
{
	if (S->o->note)
		S->o->note(S->o->ctx, text);
}

/*
 * The greedy steps over the chain, from cur: taken[0..*ntaken) are the
 * candidates kept, cur their score. 1 when the target is met, 0 when
 * not, -1 with e.
 */
static int
steps(struct search *S, int *taken, int *ntaken,
    struct mixsearch_score *cur, struct err *e)
{
	const struct mixsearch_opts *o = S->o;
	struct mixprec_summary sum;
	struct mixsearch_score sc;
	int met = 0, step = 0;
	FILE *fp;

	/*
	 * Greedy, in that order, each step run on all the samples and kept
	 * only when the output noise goes down: errors do not add up (they
	 * also cancel), so the runs decide. Steps take a batch of
	 * candidates, doubled while they pay, halved down to one when they
	 * do not; a single candidate that does not pay is left out.
	 */
	for (int pos = 0, batch = 4; pos < S->nchain && !met; ) {
		int b = batch < S->nchain - pos ? batch : S->nchain - pos, bad;

		memcpy(taken + *ntaken, S->chain + pos,
		    (size_t)b * sizeof *taken);
		if ((bad = setup(S, taken, *ntaken + b, -1, e)) < 0)
			return -1;
		mixprec_summarize(S->mp, &sum);
		if (!bad && (isnan(o->budget) || share_of(&sum) <= o->budget)) {
			/* Worse on the noisiest samples: no use going on. */
			if (evaluate(S, 0, cur->noise, cur->head, &sc, e) < 0)
				return -1;
			if (sc.samples == S->ev->nsamples &&
			    sc.noise < cur->noise) {
				if (!o->quiet)
					note_step(S, ++step, pos, pos + b, &sc,
					    &sum);
				met = target_met(o, &sc);
				if (met && b > 1 && trim(S, taken, *ntaken,
				    &b, &sc, &step, e) < 0)
					return -1;
				*ntaken += b;
				pos += b;
				*cur = sc;
				batch = 2 * b < 32 ? 2 * b : 32;
				continue;
			}
		}
		if (b > 1) {
			batch = b / 2;
			continue;
		}
		if (o->verbose && (fp = note_start(S)) != NULL) {
			fprintf(fp, "%s left out: ", S->c[S->chain[pos]].label);
			if (bad)
				fprintf(fp, "it conflicts");
			else if (!isnan(o->budget) && share_of(&sum) > o->budget)
				fprintf(fp, "over the budget");
			else if (sc.samples < S->ev->nsamples)
				fprintf(fp, "noisier on the %d noisiest "
				    "samples already", sc.samples);
			else {
				mixsearch_put_score(fp, &sc);
				fprintf(fp, " with it");
			}
			note_end(S);
		}
		pos++;
	}
	return met;
}

static void
search_release(struct search *S)
{
	for (int i = 0; i < S->nc; i++) {
		free(S->c[i].t);
		free(S->c[i].label);
	}
	free(S->c);
	free(S->chain);
}

int
mixsearch_run(struct mixprec *mp, const struct mixsearch_opts *o,
    const struct mixsearch_eval *ev, struct mixsearch_result *res,
    struct err *e)
{
	struct search S;
	struct mixsearch_score probe, cur;
	double total;
	int rc = -1, nprobe, met, ntaken = 0;
	int *taken = NULL;
	FILE *fp;

	memset(&S, 0, sizeof S);
	memset(res, 0, sizeof *res);
	S.o = o;
	S.mp = mp;
	S.ev = ev;
	S.t16.type = o->type ? o->type : promotion_type(mp);
	S.t16.symmetric = S.t16.reduce_range = S.t16.pow2 = -1;
	S.tfloat.type = DT_FLOAT;
	S.tfloat.symmetric = S.tfloat.reduce_range = S.tfloat.pow2 = -1;
	if (make_candidates(&S, e) < 0)
		goto out;
	mixprec_clear(mp);
	if (evaluate(&S, 0, INFINITY, INFINITY, &res->base, e) < 0)
		goto out;
	ev->rank(ev->ctx);
	if (!o->quiet && (fp = note_start(&S)) != NULL) {
		fprintf(fp, "%d samples, %d candidates (%s%s); as quantized: ",
		    ev->nsamples, S.nc, S.t16.type == DT_FLOAT ? "float" :
		    qparams_type_name(S.t16.type),
		    o->allow_float ? " or float" : "");
		mixsearch_put_score(fp, &res->base);
		note_end(&S);
	}
	if (target_met(o, &res->base)) {
		if (!o->quiet)
			note_text(&S, "the target is met already: nothing "
			    "promoted");
		mixprec_clear(mp);
		res->already = 1;
		res->score = res->base;
		rc = 0;
		goto out;
	}
	/* What each candidate buys, on the noisiest samples. */
	nprobe = ev->nsamples < MIXSEARCH_HEAD ? ev->nsamples : MIXSEARCH_HEAD;
	if (evaluate(&S, nprobe, INFINITY, INFINITY, &probe, e) < 0)
		goto out;
	for (;;) {
		free(S.chain);
		free(taken);
		S.chain = taken = NULL;
		S.nchain = ntaken = 0;
		if (measure(&S, nprobe, probe.pnoise, e) < 0 ||
		    make_chain(&S, e) < 0)
			goto out;
		total = 0;
		for (int i = 0; i < S.nchain; i++)
			total += S.c[S.chain[i]].gain;
		if (!o->quiet && (fp = note_start(&S)) != NULL) {
			fprintf(fp, "%d of %d candidates gain on their own; "
			    "together they would remove %.0f%% of the noise",
			    S.nchain, S.nc, probe.pnoise > 0 ? 100 * total /
			    probe.pnoise : 0.0);
			note_end(&S);
		}
		if (S.nchain == 0 && S.alone) {
			err_set(e, "target not reached%s: no candidate "
			    "improves the model", isnan(o->budget) ? "" :
			    " within the budget");
			goto out;
		}
		if (S.nchain > 0) {
			if ((taken = calloc((size_t)S.nchain + 1,
			    sizeof *taken)) == NULL) {
				err_nomem(e);
				goto out;
			}
			cur = res->base;
			/* base ran before the samples were ranked */
			cur.head = probe.head;
			if ((met = steps(&S, taken, &ntaken, &cur, e)) < 0)
				goto out;
			if (met)
				break;
			if (!o->quiet && (fp = note_start(&S)) != NULL) {
				fprintf(fp, "target not reached: at best, with "
				    "%d of %d candidates, ", ntaken, S.nchain);
				mixsearch_put_score(fp, &cur);
				note_end(&S);
			}
			if (S.alone) {
				err_set(e, "target not reached%s",
				    isnan(o->budget) ? "" :
				    " within the budget");
				goto out;
			}
		}
		/*
		 * Measured from the top, the candidates did not do: measure
		 * each alone in the quantized model (a model that is not
		 * chaotic, where what one tensor buys alone is no accident),
		 * and go again.
		 */
		S.alone = 1;
		if (!o->quiet)
			note_text(&S, "measuring each candidate alone in the "
			    "quantized model instead");
	}
	if (setup(&S, taken, ntaken, -1, e) != 0) {
		err_set(e, "the chosen candidates conflict");
		goto out;
	}
	res->score = cur;
	rc = 0;
out:
	res->runs = S.runs;
	search_release(&S);
	free(taken);
	return rc;
}
