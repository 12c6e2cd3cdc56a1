/*
 * mixsearch: the greedy search of onnx-mixprec --target-snr and
 * --target-agreement: which quantized activations to promote (16 bits,
 * or float) so that the quantized model reaches a target, at the least
 * cost in elements promoted. The models are run by the caller's
 * evaluator (struct mixsearch_eval; mixeval.h runs real ones), so the
 * search itself needs nothing but mixprec.
 *
 * Candidates are the quantized activations, grouped with those that
 * round alike (data movement sharing the grid, Relu/Clip, arithmetic
 * with a constant). The samples are ordered by how noisy the quantized
 * model is on them (the pooled SNR is theirs, mostly). Each candidate is
 * measured once, from the top: the noise at the "probes" (the outputs,
 * or the logits before a final Softmax, where noise adds up rather than
 * flipping classes) that leaving it alone in 8 bits adds to the model
 * with every other candidate promoted, on the MIXSEARCH_HEAD noisiest
 * samples; promoted alone in a chaotic 8-bit model, a tensor's effect is
 * mostly chance. Candidates that remove noise go in a chain by noise
 * removed per unit of cost (elements promoted, weighted by the extra
 * bits), taken greedily in batches, each run on all the samples and kept
 * when the output noise goes down; the batch that meets the target is
 * cut back by halving. When that does not reach the target, the
 * candidates are measured again alone in the quantized model, and the
 * search goes again.
 *
 * What it has to say (steps, candidates left out) goes to the note
 * callback, one line at a time without the newline; the caller prints.
 * Errors in struct err, "target not reached" among them.
 */
#ifndef ONNXQ_MIXSEARCH_H
#define ONNXQ_MIXSEARCH_H

#include <stdio.h>

#include "err.h"
#include "mixprec.h"

/*
 * The noisiest samples that measure candidates and screen steps: the
 * pooled SNR is mostly theirs.
 */
#define MIXSEARCH_HEAD	2

/* How good one quantized model is. */
struct mixsearch_score {
	double snr;		/* the worst output's pooled SNR, dB */
	double agree;		/* top-1 agreement over classifier outputs,
				   %; NaN when no output is a classifier */
	double noise;		/* sum over outputs of noise / signal */
	double pnoise;		/* the same over the probes; NaN when
				   the evaluator dropped some sample's
				   (see rank) */
	int samples;		/* samples run */
	double head;		/* the noise after the MIXSEARCH_HEAD
				   noisiest samples */
};

/* The evaluator: runs the model of mixprec's current result. */
struct mixsearch_eval {
	int nsamples;
	/*
	 * Run the first n samples (0: all; in ranked order), and compare
	 * with the fp32 model. On all the samples the run may stop as soon
	 * as the noise (which only grows, sample after sample) passes
	 * `stop`, or after MIXSEARCH_HEAD samples passes `head_stop`:
	 * sc->samples says how many ran, sc->noise is then a lower bound and
	 * the rest of sc is not set. sc->head is the noise after
	 * MIXSEARCH_HEAD samples. 0, or -1 with e.
	 */
	int (*run)(void *ctx, const struct mixprec *mp, int n, double stop,
	    double head_stop, struct mixsearch_score *sc, struct err *e);
	/*
	 * Order the samples by their noise in the last full run, most
	 * first. Once: after it, runs read the probes on the first
	 * MIXSEARCH_HEAD samples only (the evaluator may drop the others'
	 * fp32 probe values).
	 */
	void (*rank)(void *ctx);
	void *ctx;
	/*
	 * May be NULL. The next run is the reference that later runs on the
	 * same samples differ from by a few candidates: an evaluator may
	 * keep its activations and re-run only what each change reaches.
	 */
	void (*reference)(void *ctx);
	/* The outputs sc->noise sums over; 0: unknown (no early stop on a
	   target that cannot be met). */
	int noutputs;
	/*
	 * May be NULL (then run). As run(ctx, mp, n, INFINITY, INFINITY,
	 * sc, e), for a caller that reads only sc->pnoise: the rest of sc
	 * is not set, and what only the outputs past the probes need (a
	 * final Softmax, their comparison) need not run.
	 */
	int (*run_probes)(void *ctx, const struct mixprec *mp, int n,
	    struct mixsearch_score *sc, struct err *e);
};

struct mixsearch_opts {
	double target_snr;	/* dB; NAN: none */
	double target_agree;	/* %; NAN: none */
	double budget;		/* % of the elements; NAN: none */
	int allow_float;	/* float variants of the candidates too */
	int type;		/* promotion type; DT_UNDEFINED: 16 bits of
				   the activations' own signedness */
	int quiet;		/* no notes but the verbose ones */
	int verbose;		/* notes on every candidate */
	void (*note)(void *ctx, const char *msg);	/* NULL: none */
	/* Candidates measured: done from 0 to total (the end); NULL: none. */
	void (*progress)(void *ctx, int done, int total);
	void *ctx;
};

struct mixsearch_result {
	struct mixsearch_score base;	/* the quantized model as given */
	struct mixsearch_score score;	/* with the promotions */
	int already;			/* base met the target: nothing done */
	int runs;			/* evaluator runs */
};

void mixsearch_opts_init(struct mixsearch_opts *o);

/*
 * Search. 0 when the target is reached: mp holds the result (resolved,
 * for mixprec_write), res says how it went. -1 with e otherwise ("target
 * not reached", a failed run, out of memory).
 */
int mixsearch_run(struct mixprec *mp, const struct mixsearch_opts *o,
    const struct mixsearch_eval *ev, struct mixsearch_result *res,
    struct err *e);

/* "snr 34.20 dB, top-1 agreement 98.00%" (no agreement when NaN). */
void mixsearch_put_score(FILE *fp, const struct mixsearch_score *sc);

#endif
