/*
 * engine: the decisions of the quantization-parameter stage
 * (onnx-qparams(1)). From the records onnx-calib wrote (node, weight,
 * bias, stat, hist: onnxq-stream(5)), the settings in effect (settings.h)
 * and a recipe's selections and per-tensor overrides (config.h), it
 * decides
 *
 *   - selection: which nodes, hence which tensors, are quantized (the
 *     node and op-type include/exclude lists; by default the operators
 *     that carry a constant weight, ENGINE_DEFAULT_OPS);
 *   - activations: a range per tensor (rangesel.h), ORT's adjustments
 *     for Relu, Clip and Softmax, scales and zero points (qparams.h),
 *     data movement sharing its input's parameters, a recipe's converts;
 *   - weights: per channel along the stream's axis, or per tensor;
 *   - biases: int32 scales that never clip, raising weight scales as ORT
 *     does;
 *   - folds: the Relu and Clip nodes whose clamp the quantization of
 *     their output makes redundant;
 *   - dynamic quantization (the dynamic setting): instead of all the
 *     above, the nodes of ENGINE_DYNAMIC_OPS (ENGINE_DYNAMIC_ALL_OPS
 *     with all_ops) that have a constant weight get a dynamic record and
 *     their weight a qparam record (an LSTM: W named in the record, R
 *     decided too; both must be constant; Attention: com.microsoft's,
 *     never the default domain's); activation statistics are
 *     ignored and biases stay float;
 *
 * and writes the stream back with the qparam, convert, fold and dynamic
 * records (records.h); qparam, fold and dynamic records of an earlier
 * run are replaced,
 * every other record is passed through unchanged.
 *
 * The engine owns what it reads; engine_free() releases it. Errors go
 * to struct err; notes (under verbose) to the caller's note function,
 * warnings to its warn function.
 */
#ifndef ONNXQ_ENGINE_H
#define ONNXQ_ENGINE_H

#include <stdarg.h>

#include "config.h"
#include "err.h"
#include "qparams.h"
#include "rangesel.h"
#include "records.h"
#include "settings.h"
#include "stats.h"
#include "stream.h"

/* The op types quantized when no op-type or node list is given. */
#define ENGINE_DEFAULT_OPS "Conv", "ConvTranspose", "Gemm", "MatMul"

/*
 * Under the dynamic setting: the op types quantized by default, and
 * every op type that has a dynamic form (--all-ops).
 */
#define ENGINE_DYNAMIC_OPS "MatMul", "Gemm", "LSTM", "Attention"
#define ENGINE_DYNAMIC_ALL_OPS ENGINE_DYNAMIC_OPS, "Conv"

/* The selection lists, in the order of engine_opts.lists. */
enum engine_list {
	ENGINE_NODES_INCLUDE, ENGINE_NODES_EXCLUDE,
	ENGINE_OPS_INCLUDE, ENGINE_OPS_EXCLUDE, ENGINE_NLISTS
};

struct engine_opts {
	struct settings s;		/* in effect: defaults, recipe, CLI */
	const struct config *cfg;	/* the recipe, or NULL (borrowed) */
	/* Comma lists that replace the recipe's, NULL when not given. */
	const char *lists[ENGINE_NLISTS];
	int keep_acts;			/* no fold records */
	int all_ops;			/* no default op-type list */
	/* Notes (what was left out and why); NULL: none. */
	void (*note)(const char *fmt, va_list ap);
	/* Warnings, always worth a word (a tensor with no finite
	 * calibration value); NULL: none. */
	void (*warn)(const char *fmt, va_list ap);
};

struct engine;

/* NULL when out of memory. opts (and its recipe) must outlive it. */
struct engine *engine_new(const struct engine_opts *opts, struct err *e);
void engine_free(struct engine *g);

/*
 * Read a whole stream: its header lines and records are kept to be
 * written back (but for qparam and fold records, which are replaced),
 * those in a temporary file (tmpfile(3)); node, weight, bias, stat and
 * hist records are checked and taken in, stat and hist records reduced
 * to what the decisions need.
 */
int engine_read(struct engine *g, struct stream_reader *rd, struct err *e);
/* Check the recipe against the stream (config_validate); problems. */
size_t engine_check_recipe(struct engine *g, struct config_msgs *msgs);
/* Every decision, in order: selection, activations, weights, folds. */
int engine_decide(struct engine *g, struct err *e);
/* The header lines read (the caller adds its #prog line after them). */
void engine_put_headers(const struct engine *g, struct stream_writer *w);
/*
 * The records read and the decisions (write errors are the writer's).
 * The records kept wait in a temporary file, not in memory: -1 when it
 * cannot be read back.
 */
int engine_put_records(const struct engine *g, struct stream_writer *w,
    struct err *e);

/*
 * One tensor, outside a stream (onnx-mixprec re-deciding a tensor for
 * another type uses these, so both stages decide alike):
 *
 * engine_act_opts, engine_weight_opts: the settings' qparams options for
 * activations and weights.
 *
 * engine_select_range: an activation's range from its statistics (ts,
 * with its histogram if any) under settings s and the recipe's spec for
 * it (NULL: none); method_default says no method was asked for, so a
 * tensor without histogram falls back to minmax. *method is the one used.
 *
 * engine_decide_range: the parameters of one tensor for range
 * [lo, hi] under the recipe's spec (NULL: none) over the options o:
 * the spec's type, flags, rmin/rmax, or its fixed scale and zero point
 * (*fixed set). method is what the record will say ("mse", "minmax"...).
 * To decide for another type, set o.type (a spec's quant_type wins).
 */
struct qparams_opts engine_act_opts(const struct settings *s);
struct qparams_opts engine_weight_opts(const struct settings *s);
int engine_select_range(const struct settings *s,
    const struct config_spec *sp, const struct tstats *ts,
    int method_default, float *lo, float *hi, int *method, struct err *e);
/* The same, with a memo (rangesel.h) kept across one tensor's
 * selections in several types. */
int engine_select_range_memo(const struct settings *s,
    const struct config_spec *sp, const struct tstats *ts,
    int method_default, struct rangesel_memo *memo, float *lo, float *hi,
    int *method, struct err *e);
/* The range selection's view of ts, as engine_select_range gives it to
 * rangesel_select: st->bins malloc'd (free it), NULL without a histogram. */
int engine_range_stats(const struct tstats *ts, struct rangesel_stats *st,
    struct err *e);
int engine_decide_range(struct qparam *q, int *fixed,
    const struct config_spec *sp, struct qparams_opts o, float lo, float hi,
    const char *method, struct err *e);

/*
 * Biases (int32, scales that never clip): engine_bias_absmax gives a
 * bias record's |max| per channel, or over all of it (*nb of them;
 * malloc'd, NULL when out of memory). Weight scales are raised first
 * (qparams_bias_adjust over every bias), then engine_bias_scales decides
 * bias q from its activation's scale and its weight's parameters w:
 * per channel along axis when both are, else per tensor.
 */
float *engine_bias_absmax(const struct wb_rec *b, size_t *nb);
int engine_bias_scales(struct qparam *q, float act_scale,
    const struct qparam *w, size_t nb, double beta, int axis,
    struct err *e);

#endif
