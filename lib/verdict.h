/*
 * verdict: what onnx-verify concludes for each output of a model, from
 * the comparisons gathered over the samples and the gates it was given.
 *
 * A row's status, the first that holds:
 *
 *   mismatch       some sample's output differs in shape or type (from
 *                  the expected one, or between the two models);
 *   fail           one-model form: an element outside the tolerance
 *                  (dataset_cmp_ok);
 *   low-snr        the pooled SNR is below the row's --min-snr gate,
 *                  or -inf with or without a gate (non-finite values,
 *                  or noise on an all-zero reference: never "ok");
 *   low-agreement  the top-1 agreement is below min_agreement (a row
 *                  with no top-1 comparison is not judged by it);
 *   ok.
 *
 * Plain data; nothing to free.
 */
#ifndef ONNXQ_VERDICT_H
#define ONNXQ_VERDICT_H

#include "compare.h"
#include "dataset.h"
#include "err.h"

/* --min-snr DB (name NULL: every output) or NAME=DB. */
struct verdict_gate {
	const char *name;
	double db;
};

struct verdict_row {
	const char *name;	/* the output */
	struct compare cmp;	/* output (x) against reference */
	struct dataset_cmp tol;	/* the one-model form's tolerance check */
	double min_snr;		/* -INFINITY: no gate */
	const char *status;	/* set by verdict_judge */
};

/*
 * Name row i names[i] and start its comparisons (rtol, atol: the one-
 * model form's tolerance).
 */
void verdict_init(struct verdict_row *rows, int n, const char *const *names,
    double rtol, double atol);

/*
 * Give each row its SNR gate, later gates replacing earlier ones; a gate
 * naming no row is the error "no output NAME".
 */
int verdict_set_gates(struct verdict_row *rows, int n,
    const struct verdict_gate *g, int ng, struct err *e);

/* The SNR a row is judged by: of cmp (two models) or of tol (one). */
double verdict_snr(const struct verdict_row *r, int two);

/* Set every status; 1 when some row is not ok, else 0. */
int verdict_judge(struct verdict_row *rows, int n, int two,
    double min_agreement);

/*
 * Below this output SNR (dB) a quantized model has lost its signal, and
 * no range method or weight option brings it back: some region needs 16
 * bits or float. An audio front end (a power spectrum, then a log) gave
 * 3.5 dB at 8 bits with any tool and 20 dB after onnx-mixprec
 * --target-snr 20 --allow-float.
 */
#define VERDICT_MIXPREC_SNR 10.0

/*
 * Two-model form: the first row whose pooled SNR is finite and below
 * VERDICT_MIXPREC_SNR (the case for onnx-mixprec), or -1.
 */
int verdict_mixprec_row(const struct verdict_row *rows, int n, int two);

#endif
