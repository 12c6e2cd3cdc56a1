/*
 * mixprec: mixed-precision regions over an onnxq stream (onnxq-stream(5))
 * that already holds quantization parameters: which tensors change type,
 * and the convert records at every region edge.
 *
 * A region is a set of nodes quantized to one type (uint16, int16, any
 * type qparams.h knows, or float). As ONNX Runtime's
 * MixedPrecisionTensorQuantOverridesFixer does, every node of a region
 * reads all its quantized activation inputs and writes all its outputs in
 * the region's type; weights, biases and constants keep their own. Then,
 * for every quantized activation:
 *
 *   produced type  the region type of its producer, else its own (the
 *                  qparam record's); a graph input named by a region's
 *                  tensors takes the region's type;
 *   readers        each reading node wants its region's type, else the
 *                  type it read before (the qparam's, or an existing
 *                  convert's); readers that want the produced type read
 *                  it, the others get one convert record, so they must
 *                  all want the same type (else an error naming the
 *                  tensor, its readers and their types).
 *
 * A region given by tensors covers each tensor's producer and readers, as
 * ONNX Runtime's fixer seeds from an override. Nodes of a float region
 * compute in float: their outputs lose their qparam records (and a bias
 * whose activation is no longer quantized stays float, as in ONNX
 * Runtime); their inputs are read as the producers quantize them.
 *
 * Parameters of a tensor in a new type are recomputed from the stream,
 * with the tensor's method: the recorded range (minmax, percentile, and
 * the ranges Relu, Clip and Softmax imposed) is kept; entropy, mse and
 * distribution, whose range depends on the grid, are selected again from
 * the stat and hist records when selecting for the old type gives back
 * the recorded range; "shared" tensors (data movement) take their
 * source's parameters; fixed parameters give way to parameters over the
 * interval the fixed grid represented. Symmetry, reduced range and
 * power-of-two scales are the region's when it gives them, else those
 * that reproduce the tensor's recorded parameters. Biases whose
 * activation scale changed get new int32 scales, and their weight scales
 * are raised when the bias would clip (as onnx-qparams does).
 *
 * A fold record (Relu/Clip removed into its producer) whose two nodes end
 * up in different types is dropped, so the Relu/Clip stays and the edge
 * between them gets its convert.
 *
 * Modules: mixprec.c reads and links the stream and answers the queries
 * and requests, mixresolve.c resolves, mixwrite.c writes; regions.h
 * reads REGIONS.yaml files.
 *
 * Ownership: struct mixprec owns every record it read; the strings the
 * query functions return live as long as it. Messages are malloc'd
 * strings in struct config_msgs, released with config_msgs_release()
 * (config.h).
 */
#ifndef ONNXQ_MIXPREC_H
#define ONNXQ_MIXPREC_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "err.h"
#include "model.h"
#include "records.h"
#include "regions.h"
#include "stream.h"

/* The stream, read whole. */
struct mixprec;

typedef void (*mixprec_note_fn)(void *ctx, const char *msg);

/*
 * Read every header and record of r (to its end record). Fails on
 * malformed node, qparam, convert, fold, bias and stat records, on a
 * stream without node or qparam records, and on duplicates. hist
 * records, most of a stream's bytes, are left in r's file when it is a
 * regular one (stream_rec_dup_placed()): it must not change until mp is
 * freed (a change is an error where they are read again).
 */
struct mixprec *mixprec_read(struct stream_reader *r, struct err *e);
void mixprec_free(struct mixprec *mp);
/* The sha256= of the stream's #model header, or NULL. */
const char *mixprec_model_sha256(const struct mixprec *mp);
/*
 * The stream's node, weight and bias records against model m, prepared
 * (prep.h): another model's stream is refused, naming the first node or
 * tensor that differs (streamfit.h).
 */
int mixprec_check_model(const struct mixprec *mp, const struct model *m,
    struct err *e);
/* Notes (what was dropped or approximated, and why); fn may be NULL. */
void mixprec_set_note(struct mixprec *mp, mixprec_note_fn fn, void *ctx);

/* Nodes, in the stream's (topological) order. */
int mixprec_nnodes(const struct mixprec *mp);
const char *mixprec_node_op(const struct mixprec *mp, int node);
/* -1 when there is no such node. */
int mixprec_node_find(const struct mixprec *mp, const char *name);
/* The node a fold record pairs this one with (either way), or -1. */
int mixprec_node_fold_partner(const struct mixprec *mp, int node);
/*
 * The quantized activations a node reads or writes (indices for
 * mixprec_tensor_*); returns their number, *v points into mp.
 */
int mixprec_node_tensors(const struct mixprec *mp, int node, const int **v);

/* Its inputs, one tensor index per slot (-1 for an absent one). */
int mixprec_node_inputs(const struct mixprec *mp, int node, const int **v);

/* Tensors (every name a node record mentions, and every qparam subject). */
int mixprec_ntensors(const struct mixprec *mp);
const char *mixprec_tensor_name(const struct mixprec *mp, int t);
int mixprec_tensor_find(const struct mixprec *mp, const char *name);
/* 1 when the tensor is a quantized activation (a qparam role=act). */
int mixprec_tensor_quantized(const struct mixprec *mp, int t);
/* Its type in the stream as read (DT_UNDEFINED when not quantized). */
int mixprec_tensor_type(const struct mixprec *mp, int t);
/* The node writing it, -1 for a graph input (or an unknown tensor). */
int mixprec_tensor_producer(const struct mixprec *mp, int t);
/*
 * 1 for a constant: a weight or bias (qparam record), or a tensor no node
 * writes that has no statistics (an initializer).
 */
int mixprec_tensor_constant(const struct mixprec *mp, int t);
/* The tensor whose parameters it shares (method=shared from=), or -1. */
int mixprec_tensor_shared_from(const struct mixprec *mp, int t);
/* Elements per sample, from the stat record (0 when unknown). */
double mixprec_tensor_elems(const struct mixprec *mp, int t);

/*
 * Requests. mixprec_clear() forgets all of them (and the last result).
 * A request that conflicts with an earlier one (a node or tensor asked
 * to be two types) appends a message naming both and returns -1; `who`
 * names the request in messages ("regions.yaml:3:5: region 1").
 */
void mixprec_clear(struct mixprec *mp);
int mixprec_request_node(struct mixprec *mp, int node,
    const struct mixprec_type *t, const char *who, struct config_msgs *msgs);
/* A tensor: its producer and readers (and the tensor, if a graph input). */
int mixprec_request_tensor(struct mixprec *mp, int tensor,
    const struct mixprec_type *t, const char *who, struct config_msgs *msgs);

/*
 * The requests of a regions file: names resolved against the stream
 * (unknown nodes, tensors, weights named as tensors and op types no node
 * has are errors), every problem appended to msgs. Returns the number of
 * problems. Then mixprec_resolve() as usual; it checks, per region, that
 * the region changes something.
 */
size_t mixprec_request_regions(struct mixprec *mp,
    const struct mixprec_regions *rg, struct config_msgs *msgs);

/*
 * Propagate the requests: produced types, converts, recomputed
 * parameters, biases. Returns the number of problems appended to msgs
 * (0: a consistent result), or -1 with e on out of memory and on a
 * computation that fails (e.g. a range too wide for float32).
 */
long mixprec_resolve(struct mixprec *mp, struct config_msgs *msgs,
    struct err *e);

/* What the last successful mixprec_resolve() changed. */
struct mixprec_summary {
	int tensors;		/* quantized activations */
	int promoted;		/* of those, produced in another type, or
				   read through a convert to a wider type */
	int floated;		/* no longer quantized */
	int converts;		/* convert records written */
	int biases;		/* bias scales recomputed */
	int weights;		/* weight scales raised for a bias */
	double elems;		/* elements per sample of all of them */
	double elems_promoted;	/* of the promoted and floated ones */
	double cost;		/* extra bits over the original types, / 8 */
};

void mixprec_summarize(const struct mixprec *mp, struct mixprec_summary *s);
/*
 * The type a tensor is produced in after the last successful resolve (as
 * read before one; DT_FLOAT when left in float, DT_UNDEFINED when not
 * quantized).
 */
int mixprec_tensor_result_type(const struct mixprec *mp, int t);

struct mixprec_write_opts {
	int skip_hist;		/* leave out hist records (for in-memory use) */
	const char *prog;	/* a #prog line with these, when prog is set */
	const char *version;
	int argc;
	char *const *argv;
};

/*
 * Write the stream with the last result: every header and record as
 * read, qparam records of changed tensors rewritten in place (keys in
 * their order, unknown keys kept), convert records after the qparam of
 * their tensor, dropped folds left out. Errors are the writer's; the
 * caller ends the stream (stream_write_end).
 */
int mixprec_write(const struct mixprec *mp, struct stream_writer *w,
    const struct mixprec_write_opts *o, struct err *e);

/*
 * The same result as records, for a consumer that wants structs (the
 * evaluation's qdq plan, qdq.h), no text in between: the records written
 * anew go as structs, whose contents the callback takes (success or
 * not); the others as read (rec: fold, stat and any record kind) but
 * hist records (mixprec keeps them as lines only). Headers are not
 * given. A callback's -1 stops it.
 */
struct mixprec_sink {
	void *ctx;
	int (*qparam)(void *ctx, struct qparam_rec *r, struct err *e);
	int (*convert)(void *ctx, struct convert_rec *c, struct err *e);
	int (*rec)(void *ctx, const struct stream_rec *rec, struct err *e);
	/*
	 * How a weight's or bias's qparam record, given new scales, is read
	 * first (as qparam_rec_read(), into r, which the sink then takes);
	 * NULL: qparam_rec_read(). A caller emitting many results of one
	 * stream reads each record once.
	 */
	int (*read_qparam)(void *ctx, const struct stream_rec *rec,
	    struct qparam_rec *r, struct err *e);
	/*
	 * 1: rec() is not given the records every result gives as read
	 * (stat, weight, bias and node records): a sink that had them from
	 * an earlier emit.
	 */
	int fixed_once;
};

int mixprec_emit(const struct mixprec *mp, const struct mixprec_sink *s,
    struct err *e);

#endif
