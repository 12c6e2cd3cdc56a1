/*
 * mixeval: the evaluator of onnx-mixprec's search (mixsearch.h). It runs
 * the fp32 model once on the evaluation samples and keeps its outputs,
 * then, per evaluation, quantizes the model as mixprec's current result
 * says (qdq.h), runs it and compares: the worst output's SNR, top-1
 * agreement on classifier-like outputs, and the noise at the "probes":
 * each output, or the input of the Softmax that writes it (whose logits
 * add noise up, where the probabilities saturate and flip).
 *
 * After the samples are ranked, the fp32 probe values past the
 * MIXSEARCH_HEAD noisiest are dropped, unless the search goes by the
 * probes (at_probes): runs over those samples have no pnoise (NaN).
 *
 * Runs that follow the search's reference run (mixsearch_eval.reference)
 * re-run only the nodes the change reaches (mixcache.h): the results are
 * bit for bit those of whole runs. The reference activations take at
 * most a quarter of the memory limit (tensor.h, ONNXQ_MEM_LIMIT); past
 * that, runs are whole.
 *
 * Ownership: struct mixeval keeps the strings of its options by pointer
 * (they must outlive it), and owns the rest; the model bytes are read by
 * mixeval_new() only (the caller may free them then).
 */
#ifndef ONNXQ_MIXEVAL_H
#define ONNXQ_MIXEVAL_H

#include <stddef.h>

#include "err.h"
#include "mixprec.h"
#include "mixsearch.h"

struct mixeval_opts {
	const char *name;		/* the model, for messages */
	const void *model;		/* the fp32 model's bytes */
	size_t len;
	struct model *prepared;		/* it after prep_model(), which
					   mixeval_new() takes (freed also
					   on failure); NULL: prepared here */
	const char *dir;		/* for its external data */
	const char *const *dirs;	/* evaluation data (dataset.h) */
	int ndirs;
	int limit;			/* samples; 0: all */
	int threads;			/* 0: the interpreter's default */
	int whole_runs;			/* 1: every node of every run (the
					   activation cache off: tests) */
	int check_models;		/* 1: each model (made of the model
					   raised ahead, of a skeleton) is
					   checked against the one made as
					   onnx-qdq-insert does (tests) */
	int at_probes;			/* 1: the SNR and noise the search
					   goes by are the probes' (the
					   logits), not the outputs' */
};

struct mixeval;

/* Load the samples and run the fp32 model on them. */
struct mixeval *mixeval_new(const struct mixeval_opts *o, struct err *e);
void mixeval_free(struct mixeval *ev);
/* 1 when some output is classifier-like (compare.h). */
int mixeval_classifier(const struct mixeval *ev);
/* The evaluator for mixsearch_run(), running on ev. */
void mixeval_bind(struct mixeval *ev, struct mixsearch_eval *fn);

/*
 * Where the evaluator's time went, in CPU seconds of the process: the
 * model runs (run) are what the search cannot do without; the rest is
 * making each evaluation's model.
 */
struct mixeval_profile {
	double reference;	/* the fp32 runs, loading samples and model */
	double build;		/* each evaluation's model and interpreter,
				   made and freed */
	double run;		/* running them and comparing the outputs */
	int evaluations;
	int raised;		/* of those, models made of the model
				   raised ahead (qdq_raise_ahead()) */
	long skeletons;		/* of those, models made of a skeleton
				   (mixskel.h) */
	long samples;		/* samples run, over all evaluations */
	long nodes_run;		/* over all samples run */
	long nodes_skipped;	/* taken from the reference run instead */
};
void mixeval_profile(const struct mixeval *ev, struct mixeval_profile *p);
/* CPU seconds of the process so far: the profile's clock. */
double mixeval_cpu_seconds(void);

#endif
