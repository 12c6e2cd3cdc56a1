/*
 * qdq: rewrite a prepared fp32 model (prep.h) into a QDQ model, applying
 * the decisions of an onnxq stream mechanically (the contract of
 * onnx-qparams and onnx-qdq-insert; man/man5/onnxq-stream.5):
 *
 *   qparam X role=act      X -> QuantizeLinear -> DequantizeLinear, the
 *                          pair shared by X's readers (or one pair per
 *                          reading node with dedicated_pairs). A graph
 *                          output keeps its name: it becomes the
 *                          DequantizeLinear's output and the producer's
 *                          output is renamed X_QuantizeLinear_Input.
 *   qparam W role=weight   the constant is stored quantized (W_quantized,
 *                          per axis when the record has an axis) and read
 *                          through a DequantizeLinear; with weights_float
 *                          it stays float behind QuantizeLinear ->
 *                          DequantizeLinear.
 *   qparam B role=bias     int32 B_quantized (round half to even of
 *                          B / scale, saturated) + DequantizeLinear.
 *   fold N into=P          the Relu/Clip N is removed; P writes N's output.
 *   dynamic N weight=W     N is quantized dynamically: dynwrite.h
 *                          writes it (--format auto; qdq refuses).
 *   convert X type=T2 ...  Q1 -> DQ1 -> Q2 -> DQ2 feeding exactly the
 *                          receiving nodes (all readers when recv is not
 *                          given), with the DQ1 clone when other readers
 *                          keep X's type: the five cases of ONNX Runtime's
 *                          quantizer (qdq_quantizer.py,
 *                          _add_qdq_ops_for_converted_activation).
 *
 * Opsets: QuantizeLinear/DequantizeLinear of the default domain need
 * opset 10 (8-bit, per tensor), 13 (per axis), 21 (16- and 4-bit types).
 * A model below what its parameters need is raised (opset.h) when every
 * node allows it, else the com.microsoft ops are used (any type, per axis,
 * at any opset; the com.microsoft import, version 1, is added), as the
 * domain option says. Tensors that are not float32, tensors read only by
 * subgraphs and overridable initializers are left alone, with a note.
 *
 * The library prints nothing: notes go to a callback. Errors name the
 * stream file and line of the record at fault ("FILE:LINE: tensor X is not
 * in MODEL") or the node ("node N: ...").
 */
#ifndef ONNXQ_QDQ_H
#define ONNXQ_QDQ_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "model.h"
#include "records.h"
#include "stream.h"

enum qdq_domain {
	QDQ_DOMAIN_AUTO,	/* the default domain, else com.microsoft */
	QDQ_DOMAIN_ONNX,	/* default domain or fail */
	QDQ_DOMAIN_MS,		/* com.microsoft always */
};

/* Parse "auto", "onnx", "com.microsoft": 0 and *d, or -1. */
int qdq_domain_parse(const char *s, enum qdq_domain *d);

/*
 * The form of the written model. AUTO is QDQ, except where a stream's
 * records call for operators of their own (dynamic or weight-only
 * quantization).
 */
enum qdq_format {
	QDQ_FORMAT_AUTO,
	QDQ_FORMAT_QDQ,		/* QuantizeLinear -> DequantizeLinear pairs */
	QDQ_FORMAT_QOPERATOR,	/* QLinearConv and friends (qop.h) */
};

/* Parse a --format value: 0 and *f, or -1. */
int qdq_format_parse(const char *s, enum qdq_format *f);
/* The name --format takes for f. */
const char *qdq_format_name(enum qdq_format f);

typedef void (*qdq_note_fn)(void *ctx, const char *msg);

struct qdq_wcache;

struct qdq_opts {
	int dedicated_pairs;	/* one Q/DQ pair per reading node */
	int weights_float;	/* weights stay float behind Q -> DQ */
	enum qdq_domain domain;
	enum qdq_format format;
	int fold_scales;	/* Div/Mul by a constant into scales (qdqscale.h) */
	int fold_biases;	/* Add of a constant into a Conv's bias (same) */
	int resize_expand;	/* nearest Resize as Expand (qdqresize.h) */
	qdq_note_fn note;	/* what was left alone, and why; may be NULL */
	void *note_ctx;
	struct qdq_wcache *wcache;	/* quantized weights kept across
					   applies (qdqwcache.h); NULL */
	/*
	 * The initializers the QDQ format removes (weights it quantized)
	 * go to removed(), which owns them, rather than being freed; NULL:
	 * freed. For a caller whose models share their data (mixeval.c).
	 */
	void (*removed)(void *ctx, Onnx__TensorProto *tp);
	void *removed_ctx;
	/*
	 * Non-NULL (with wcache): a weight found in wcache is not copied
	 * into the model: its initializer's raw_data is the cached bytes,
	 * lent (8-, 16- and 32-bit integers, on a little-endian host), and
	 * goes to lent(), whose caller empties raw_data before the model
	 * is freed, and does not apply with wcache in the meantime; -1
	 * when it cannot take it (out of memory).
	 */
	int (*lent)(void *ctx, Onnx__TensorProto *tp);
	void *lent_ctx;
};

struct qdq_report {
	int acts;		/* activations quantized */
	int weights;		/* weights quantized */
	int biases;		/* biases quantized to int32 */
	int converts;		/* convert records applied */
	int folds;		/* Relu/Clip nodes folded */
	int scale_folds;	/* Div/Mul folded into scales (fold_scales) */
	int bias_folds;		/* Add folded into biases (fold_biases) */
	int resize_rewrites;	/* Resize nodes rewritten (resize_expand) */
	int skipped;		/* records left unapplied (see the notes) */
	int quantize;		/* QuantizeLinear nodes added */
	int dequantize;		/* DequantizeLinear nodes added */
	int opset_from, opset_to;	/* default domain, before, after */
	int rewritten;		/* nodes rewritten to raise the opset */
	int ms_domain;		/* 1: the com.microsoft ops were used */
	/* QDQ_FORMAT_QOPERATOR (qop.h): */
	int qlinear;		/* operators written in their QLinear form */
	int moved;		/* data movement on quantized tensors */
	int left_qdq;		/* groups left in QDQ form (see the notes) */
	int qdq_removed;	/* Q/DQ nodes removed again */
};

/* The parsed records of a stream (opaque). */
struct qdq_plan;

struct qdq_plan *qdq_plan_new(void);
/*
 * An empty plan that goes by info's stat, weight and bias records (their
 * dtypes, ranks and shapes) rather than its own, which are then ignored;
 * info must outlive it. For a caller making many plans of one stream
 * (onnx-mixprec's evaluations): those records are read once.
 */
struct qdq_plan *qdq_plan_new_like(const struct qdq_plan *info);
void qdq_plan_free(struct qdq_plan *p);

/*
 * Read a whole stream: qparam, fold and convert records, the dtype and
 * shape of stat records (for notes and ranks) and of weight and bias
 * records (checked against the model: streamfit.h), and the #model
 * header.
 * Other records and headers are ignored. Fails on malformed records
 * ("FILE:LINE: ..."), duplicates and a truncated stream.
 */
int qdq_plan_read(struct qdq_plan *p, struct stream_reader *r, struct err *e);

/*
 * The same records, one at a time, for a plan built without a stream
 * (onnx-mixprec's evaluations): qdq_plan_read() reads each record and
 * adds it so. The plan takes the contents of r, c and f (left zeroed,
 * released on failure); a second qparam or convert record of a tensor
 * is refused ("FILE:LINE: a second qparam record for X").
 * qdq_plan_add_rec() reads a record as qdq_plan_read() does: qparam,
 * convert and fold records into their structs, a stat record's dtype
 * and shape (rank; the first one of a tensor counts), a weight or bias
 * record's dtype and shape (for the check); others ignored.
 */
int qdq_plan_add_qparam(struct qdq_plan *p, struct qparam_rec *r,
    struct err *e);
int qdq_plan_add_convert(struct qdq_plan *p, struct convert_rec *c,
    struct err *e);
int qdq_plan_add_fold(struct qdq_plan *p, struct fold_rec *f, struct err *e);
int qdq_plan_add_rec(struct qdq_plan *p, const struct stream_rec *rec,
    struct err *e);

/*
 * The dynamic records (dynwrite.h writes them), the qparam record of a
 * tensor (NULL if none), and the stream's name for messages.
 */
size_t qdq_plan_ndynamic(const struct qdq_plan *p);
const struct dynamic_rec *qdq_plan_dynamic(const struct qdq_plan *p,
    size_t i);
const struct qparam_rec *qdq_plan_qparam(const struct qdq_plan *p,
    const char *name);
const char *qdq_plan_file(const struct qdq_plan *p);

/* The sha256= of the stream's #model header, or NULL. */
const char *qdq_plan_model_sha256(const struct qdq_plan *p);
/* The number of qparam, fold, convert and dynamic records read. */
size_t qdq_plan_size(const struct qdq_plan *p);

/*
 * Rewrite m (already prepared with prep_model()) as the plan says. opts
 * and report may be NULL. A record whose dtype or shape is not the
 * model's tensor's is an error (streamfit.h). On failure m may be half rewritten: discard it.
 */
int qdq_apply(struct model *m, const struct qdq_plan *p,
    const struct qdq_opts *o, struct qdq_report *report, struct err *e);

/*
 * qdq_apply() in two steps, for a caller applying many plans of one
 * stream (one info, qdq_plan_new_like()) that mostly share their
 * constants' records (onnx-mixprec's evaluations). qdq_front_make()
 * rewrites m as qdq_apply() does up to the activations (the folds, the
 * opset or the domain, the weights and biases) and keeps in *f what the
 * rest needs: 0, or 1 (m untouched, *f NULL) for a plan that can have no
 * front (dynamic or blockq records), or -1 and e (m may be half
 * rewritten). qdq_front_apply() finishes the rewrite of m so rewritten,
 * or of a copy of it (packed and unpacked: the same nodes in the same
 * order), for the plan f was made for or another one that fits f: the
 * same fold records and the same records for the constants, in the same
 * order, with the same parameters (qdq_front_fits()), and activations
 * that need what f's needed of the opset. It makes the model qdq_apply()
 * makes of the model before, with the same report; 1 when p does not
 * fit (m untouched). The same opts for both; the notes of p's
 * activations come again.
 */
struct qdq_front;

int qdq_front_make(struct model *m, const struct qdq_plan *p,
    const struct qdq_opts *o, struct qdq_front **f, struct err *e);
int qdq_front_fits(const struct qdq_front *f, const struct qdq_plan *p);
int qdq_front_apply(struct model *m, const struct qdq_plan *p,
    const struct qdq_opts *o, const struct qdq_front *f,
    struct qdq_report *report, struct err *e);
void qdq_front_free(struct qdq_front *f);
/* What the front did: its part of the report (weights, biases, opsets). */
const struct qdq_report *qdq_front_report(const struct qdq_front *f);

/*
 * Raise m's opset ahead, once for many plans: when m, below opset 10,
 * can be raised to 10 (the opset ONNX Runtime's fusion needs) and the
 * opsets a record may need beyond (12, 13, 21) are in reach or out of it
 * alike before and after, raise m to 10 and return 1. qdq_apply() then
 * makes of m the model it makes of the model before for a plan that
 * takes the com.microsoft Q/DQ (needs an opset out of reach) or needs
 * 10; not for one that raises the opset further or quantizes nothing
 * (which leaves the opset as it was): qdq_report.opset_from and opset_to
 * differ, or acts, weights, biases and converts are 0 (onnx-mixprec's
 * evaluations, mixeval.c). 0: m cannot be raised so, and may be half
 * raised: discard it; -1 and e: out of memory. p gives the stat records
 * (the types a rewrite needs).
 */
int qdq_raise_ahead(struct model *m, const struct qdq_plan *p,
    struct err *e);
/*
 * The highest opset p's qparam and convert records ask of the default
 * domain's Q/DQ (10, 13, 21; 0: none): 21 (16- and 4-bit types) is beyond
 * the opset table (opset.h), so the plan takes the com.microsoft Q/DQ.
 */
int qdq_plan_max_opset(const struct qdq_plan *p);

#endif
