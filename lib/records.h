/*
 * records: the typed records of the onnxq stream (man/man5/onnxq-stream.5)
 * other than stat and hist, which stats.h reads and writes: node, weight
 * and bias, qparam, convert, fold, dynamic. Each kind has a struct, a reader from
 * a struct stream_rec and a writer to a struct stream_writer, so that the
 * programs agree on what a record holds and how it is checked.
 *
 * Readers check one record at a time (keys, values, counts); what needs
 * other records (a second qparam of a tensor, a fold of an unknown node)
 * is the caller's. Errors are "FILE:LINE: key K: ..." (stream.h) or
 * "FILE:LINE: ...". A reader that fails leaves its struct released
 * (zeroed); a struct that was read owns its strings and arrays, and its
 * _release() frees them.
 *
 * Writers put the keys in the order of onnxq-stream(5), then the keys of
 * src (the record read, or NULL) that the reader does not know, as the
 * stream's rule for unknown keys asks. Write errors are the writer's
 * (stream_write_end() reports them).
 *
 * node_index gathers the node records of a stream: a node by name, the
 * node producing a tensor, how many nodes read it, the first node
 * reading it as a parameter (opinfo_is_data), with the checks of
 * onnxq-stream(5): unique names, topological order.
 */
#ifndef ONNXQ_RECORDS_H
#define ONNXQ_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "stream.h"
#include "tensor.h"

/* What a quantized tensor is to the model. */
enum role { ROLE_ACT, ROLE_WEIGHT, ROLE_BIAS };

/* "act", "weight", "bias". */
const char *role_name(enum role r);

/*
 * A tensor's quantization parameters: per tensor (axis -1, n 1) or per
 * channel along axis (n channels). rmin/rmax are the range the scales
 * came from (NULL: not recorded, as for fixed or bias parameters),
 * method how it was chosen ("minmax", "mse", ..., "fixed", "shared";
 * NULL: not recorded), from the tensor whose parameters a "shared" one
 * took. Strings and arrays are malloc'd and owned.
 */
struct qparam {
	int type;		/* DT_UINT8 ... DT_INT4; DT_INT32 for biases */
	int axis;		/* -1: per tensor */
	size_t n;
	float *scale;
	int32_t *zp;
	float *rmin, *rmax;
	char *method;
	char *from;
};

/* n zeroed entries (scale, zp, rmin, rmax), axis -1; -1 out of memory. */
int qparam_alloc(struct qparam *q, size_t n, struct err *e);
void qparam_release(struct qparam *q);
/* A deep copy of s into d (released first). */
int qparam_copy(struct qparam *d, const struct qparam *s, struct err *e);
/* Replace method (m may be NULL); -1 out of memory. */
int qparam_set_method(struct qparam *q, const char *m, struct err *e);
/* Drop the range (fixed and bias parameters record none). */
void qparam_drop_range(struct qparam *q);

/* node NAME op=TYPE [domain=D] in=A,B,... out=Y,Z,... */
struct node_rec {
	char *name;
	char *op;
	char *domain;		/* NULL: the default domain */
	char **in, **out;	/* one block each; absent inputs are "" */
	size_t nin, nout;
	long line;
};

extern const char *const node_rec_keys[];
int node_rec_read(struct node_rec *n, const struct stream_rec *rec,
    struct err *e);
void node_rec_put(const struct node_rec *n, struct stream_writer *w,
    const struct stream_rec *src);
void node_rec_release(struct node_rec *n);

/*
 * weight NAME node= op= dtype= shape= min= max= [axis= cmin= cmax=]
 * bias NAME node= op= input= weight= [beta=] dtype= shape= min= max= ...
 * One struct for both: a bias is a weight with its consumer's inputs.
 * The ranges are checked (min <= max, or min=inf max=-inf when empty).
 */
struct wb_rec {
	char *name;
	int is_bias;
	char *node, *op;
	char *input, *weight;	/* biases */
	double beta;		/* biases; 1 when absent */
	int dtype;		/* DT_UNDEFINED when absent */
	int rank;
	int64_t dims[TENSOR_MAX_RANK];
	float min, max;
	int axis;		/* -1: no channel ranges */
	float *cmin, *cmax;
	size_t nch;
	int empty;		/* a dimension is 0: nothing to quantize */
	long line;
};

extern const char *const wb_rec_keys[];
int wb_rec_read(struct wb_rec *w, const struct stream_rec *rec,
    struct err *e);
void wb_rec_put(const struct wb_rec *b, struct stream_writer *w,
    const struct stream_rec *src);
void wb_rec_release(struct wb_rec *w);

/*
 * qparam NAME role= type= [axis=] scale= zp= [method=] [from=]
 *        [rmin= rmax=] [adjusted=] [input= weight=]
 * Checked: the role, a quantized type (int32 for biases and only them),
 * as many zero points as scales, an axis for several, scales positive
 * and finite, zero points within the type, activations per tensor.
 */
struct qparam_rec {
	char *name;
	enum role role;
	struct qparam q;
	int64_t adjusted;	/* weights: scales raised for int32 biases */
	char *input, *weight;	/* biases: whose scales make theirs */
	long line;
};

extern const char *const qparam_rec_keys[];
int qparam_rec_read(struct qparam_rec *r, const struct stream_rec *rec,
    struct err *e);
void qparam_rec_put(const struct qparam_rec *r, struct stream_writer *w,
    const struct stream_rec *src);
void qparam_rec_release(struct qparam_rec *r);

/* convert NAME type= scale= zp= [method= from= rmin= rmax=] [recv=...] */
struct convert_rec {
	char *name;
	struct qparam q;	/* per tensor */
	char **recv;		/* one block; NULL: every reader */
	size_t nrecv;
	long line;
};

extern const char *const convert_rec_keys[];
int convert_rec_read(struct convert_rec *c, const struct stream_rec *rec,
    struct err *e);
void convert_rec_put(const struct convert_rec *c, struct stream_writer *w,
    const struct stream_rec *src);
void convert_rec_release(struct convert_rec *c);

/* fold NODE into=PRODUCER */
struct fold_rec {
	char *node;
	char *into;
	long line;
};

extern const char *const fold_rec_keys[];
int fold_rec_read(struct fold_rec *f, const struct stream_rec *rec,
    struct err *e);
void fold_rec_put(const struct fold_rec *f, struct stream_writer *w,
    const struct stream_rec *src);
void fold_rec_release(struct fold_rec *f);

/*
 * dynamic NODE weight=W: NODE is quantized dynamically (its activation
 * at run time, its constant weight W by W's qparam record).
 */
struct dynamic_rec {
	char *node;
	char *weight;
	long line;
};

extern const char *const dynamic_rec_keys[];
int dynamic_rec_read(struct dynamic_rec *d, const struct stream_rec *rec,
    struct err *e);
void dynamic_rec_put(const struct dynamic_rec *d, struct stream_writer *w,
    const struct stream_rec *src);
void dynamic_rec_release(struct dynamic_rec *d);

/*
 * blockq NAME node= type= block= method= symmetric=
 * Weight-only blockwise quantization of the constant NAME, input B of
 * MatMul node: type int4, uint4, int8 or uint8; blocks of `block` values
 * along K (a power of two, 16 to 256); method "rtn", "hqq" or "mse". The
 * per-block scales are computed where the weights are read
 * (onnx-qdq-insert), so the record stays one line per weight.
 */
enum blockq_method {
	BLOCKQ_RTN, BLOCKQ_HQQ, BLOCKQ_MSE, BLOCKQ_NMETHODS
};

struct blockq_rec {
	char *name;
	char *node;
	int type;
	int block;
	enum blockq_method method;
	int symmetric;
	long line;
};

extern const char *const blockq_rec_keys[];
/* "rtn", "hqq"; and back: 0 and *m, or -1. */
const char *blockq_method_name(enum blockq_method m);
int blockq_method_parse(const char *s, enum blockq_method *m);
int blockq_rec_read(struct blockq_rec *b, const struct stream_rec *rec,
    struct err *e);
void blockq_rec_put(const struct blockq_rec *b, struct stream_writer *w,
    const struct stream_rec *src);
void blockq_rec_release(struct blockq_rec *b);

/* The node records of a stream, in their order. */
struct node_index {
	struct node_rec *v;
	size_t n, cap;
	/* private */
	struct strmap *by_name_, *producer_, *readers_, *param_;
};

/* 0, or -1 when out of memory. */
int node_index_init(struct node_index *ix, struct err *e);
void node_index_release(struct node_index *ix);
/*
 * Read and add a node record. Refused: a name given before ("node N:
 * described twice"), an output another node produces or an earlier
 * node reads (records out of topological order, or a cycle).
 */
int node_index_add(struct node_index *ix, const struct stream_rec *rec,
    struct err *e);
/* The node's index, or -1. */
int node_index_find(const struct node_index *ix, const char *name);
/* The index of the node writing tensor, or -1. */
int node_index_producer(const struct node_index *ix, const char *tensor);
/* How many input slots of all nodes read tensor. */
int node_index_nreaders(const struct node_index *ix, const char *tensor);
/* The first node reading tensor as a parameter (not data), or -1. */
int node_index_param_reader(const struct node_index *ix,
    const char *tensor);
/* 1 when node i reads tensor, 0 not. */
int node_index_reads(const struct node_index *ix, int i,
    const char *tensor);

#endif
