/*
 * qdqmatch: which tensor of a quantized model stands for which tensor of
 * the fp32 model it was made from, and with which scale and zero point,
 * so the quantization of each can be measured (qdqerr.h).
 *
 * Every DequantizeLinear of QMODEL fed by a QuantizeLinear (an activation
 * quantized at run time) or by a constant (a stored weight or bias) is a
 * pair. It is matched to:
 *
 *   an activation  the fp32 value Q's input stands for, following DQ -> Q
 *                  chains (a tensor converted to a second type) back to a
 *                  name the fp32 model computes; else the DQ output's own
 *                  name (a graph output keeps its name); else the input
 *                  the fp32 twin of one of DQ's readers takes at the same
 *                  slot (twin: the fp32 node producing one of the reader's
 *                  outputs with the same op type, else the node of the
 *                  same name and op type);
 *   a constant     the fp32 constant the twin of one of DQ's readers takes
 *                  at the same slot, else the constant of DQ's or Q's
 *                  input name, looked up in PM, the fp32 model after
 *                  prep_model() (weights as onnx-qdq-insert saw them,
 *                  BatchNormalization folded). A constant whose scale or
 *                  zero point is not a constant stays unmatched.
 *
 * Pairs whose DQ output has no match are listed as unmatched; a second
 * activation pair with the same fp32 tensor and the same parameters (one
 * pair per reader) is dropped, as it would report the same numbers. The
 * fp32 activations the pairs stand for are the sources; a source that
 * only Relu, or Clip nodes of the same constant bounds, read (and that is
 * no graph output) carries those bounds, as the quantizer may rely on
 * them (ORT gives such a tensor the clamp's range).
 *
 * Pairs come in QMODEL's topological order; names point into the models,
 * which must outlive the match. qdqmatch_free() frees the rest.
 */
#ifndef ONNXQ_QDQMATCH_H
#define ONNXQ_QDQMATCH_H

#include <stdint.h>

#include "err.h"
#include "graph.h"
#include "model.h"
#include "ops.h"
#include "strmap.h"
#include "tensor.h"

enum qdqmatch_role { QDQMATCH_ACT, QDQMATCH_WEIGHT, QDQMATCH_BIAS };

/* "act", "weight", "bias". */
const char *qdqmatch_role_name(int role);

struct qdqmatch_pair {
	const char *name;	/* the fp32 tensor */
	const char *dq;		/* the DequantizeLinear output */
	const char *qin;	/* what the pair quantizes in QMODEL */
	int role;		/* enum qdqmatch_role */
	int qtype;		/* zero point's, else output_dtype, uint8 */
	int order;		/* its first reader's place in the order */
	int src;		/* index into sources (activations), else -1 */
	const Onnx__NodeProto *qnode;	/* NULL for a stored weight */
	const Onnx__NodeProto *dqnode;
	const struct op_def *qdef, *dqdef;
	int qopset, dqopset;
	struct tensor qp[2], dqp[2];	/* scale, zero point (or empty) */
	int has_own;		/* the parameters are constants */
};

struct qdqmatch_source {
	const char *name;	/* the fp32 activation */
	int clamp;		/* only Relu/Clip read it: compare clamped */
	double lo, hi;
	int *pairs;		/* indices into qdqmatch.pairs */
	int npairs;
};

struct qdqmatch {
	struct qdqmatch_pair *pairs;
	int npairs;
	struct qdqmatch_source *sources;
	int nsources;
	const char **unmatched;	/* DQ outputs not matched */
	int nunmatched;
	const struct model *fm, *pm, *qm;
	struct graph *fg, *pg, *qg;
	struct strmap *by_src;	/* fp32 name -> source */
	struct strmap *by_dq;	/* DQ output -> pair (activations) */
};

/*
 * Match QMODEL qm's pairs to fm (pm: fm after prep_model(), for weights).
 * On error the match is freed.
 */
int qdqmatch_init(struct qdqmatch *m, const struct model *fm,
    const struct model *pm, const struct model *qm, struct err *e);
void qdqmatch_free(struct qdqmatch *m);

/* The source of an fp32 name, or the pair of a DQ output; -1 if none. */
int qdqmatch_source(const struct qdqmatch *m, const char *name);
int qdqmatch_pair_of(const struct qdqmatch *m, const char *dq);

/*
 * Run pair p's QuantizeLinear on x into qv (a copy of x for a stored
 * weight, which has none) and its DequantizeLinear on that into dq. On
 * error neither is left allocated.
 */
int qdqmatch_run(const struct qdqmatch_pair *p, const struct tensor *x,
    int threads, struct tensor *qv, struct tensor *dq, struct err *e);

/*
 * A weight or bias pair's fp32 constant (from PM) into ref and the
 * constant QMODEL stores for it into stored. On error neither is left
 * allocated.
 */
int qdqmatch_weights(const struct qdqmatch *m, const struct qdqmatch_pair *p,
    struct tensor *ref, struct tensor *stored, struct err *e);

#endif
