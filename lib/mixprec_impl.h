/*
 * mixprec_impl: the linked stream that mixprec.c reads, mixresolve.c
 * resolves and mixwrite.c writes; for those three files only (the API is
 * mixprec.h). Indices: nodes and tensors by position in mp->nodes and
 * mp->t, records by position in mp->recs, -1 for none. Strings point
 * into mp->recs unless a field says otherwise.
 */
#ifndef ONNXQ_MIXPREC_IMPL_H
#define ONNXQ_MIXPREC_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "hist.h"
#include "mixprec.h"
#include "records.h"
#include "stats.h"
#include "strmap.h"

/* Names of tensors listed in one message before "...". */
#define LIST_MAX 8

/* An activation's parameters (activations are quantized per tensor). */
struct aq {
	int type;
	float scale;
	int32_t zp;
	const char *method;	/* static or in a record; NULL: none */
	int from;		/* "shared": the source tensor, -1 none */
	int has_range;
	float rmin, rmax;
};

/* Parameters computed for a type, kept for the next resolve. */
struct cached {
	struct mixprec_type t;	/* flags resolved */
	struct aq q;
};

struct mnode {
	const char *name, *op;	/* in mp->ix.v[i] */
	char **in, **out;	/* mp->ix.v[i]'s */
	size_t nin, nout;
	int *tin, *tout;	/* tensor index per slot, -1 when absent */
	int *q;			/* distinct quantized tensors read or written */
	int nq;
	int fold_into;		/* fold record: this node is folded into */
	int folded_by;		/* the node folded into this one */
	int fold_rec;
	/* request */
	int req;		/* index into mp->reqs, -1 none */
	struct mixprec_type rt;
	/* result */
	int fold_dropped;
};

struct mtensor {
	char *name;
	int producer;		/* node, -1 none */
	int *cons;		/* distinct reading nodes */
	int ncons;
	size_t capcons;
	int qrec;		/* qparam role=act record, -1 */
	struct aq base;
	int flags_done, sym, rr, pow2;	/* flags that reproduce base */
	int conv_rec;		/* convert record in the stream, -1 */
	struct aq conv0;
	int conv0_all;		/* recv not given: every reader */
	int *recv0;
	int nrecv0;
	int c0flags_done, c0sym, c0rr, c0pow2;
	int stat_rec;
	int *hist_recs;
	int nhist;
	size_t caphist;
	int is_wb;		/* a weight or bias qparam subject */
	int stats_done, stats_ok, reselect;	/* range re-selection */
	struct tstats ts;
	struct cached *cache;
	size_t ncache, capcache;
	/* request (a graph input named by a region) */
	int req;
	struct mixprec_type rt;
	/* result */
	int floated;
	int prod_changed;
	struct aq prod;
	struct mixprec_type ptype;	/* flags resolved */
	int has_conv, conv_changed;
	struct aq conv;
	int *recv;
	int nrecv;
	size_t caprecv;
	int fold_mid;		/* 1 + a fold's output whose qparam this
				   takes when the fold is dropped; 0 none */
	int synth;		/* so it does now: written after synth_after's */
	int synth_after;
};

/* A weight or bias qparam record. */
struct mwb {
	int rec;
	const char *name;
	int is_bias;
	float *scale;		/* as read */
	size_t n;
	int64_t adjusted;
	/* biases */
	char *in_name, *w_name;	/* the record's input= and weight= */
	int input;		/* tensor */
	int weight;		/* index into mp->wbs, -1 */
	int node;		/* the consumer, from the bias record; -1 */
	double beta;
	float *babs;		/* |max| per bias channel, or over all */
	size_t nb;
	/* result */
	float *nscale;
	int changed, dropped, raised;
};

/* Request req asked for node (or, when node < 0, graph input tensor). */
struct reqpair {
	int req, node, tensor;
};

struct mixprec {
	char **headers;
	size_t nheaders, caphdr;
	struct stream_rec **recs;
	size_t nrecs, caprecs;
	unsigned char *kinds;	/* each record's enum mx_kind (mx_kinds) */
	struct mnode *nodes;
	size_t nnodes, capnodes;
	struct mtensor *t;
	size_t nt, capt;
	struct mwb *wbs;
	size_t nwbs, capwbs;
	struct node_index ix;	/* node records: nodes[i] is ix.v[i] */
	struct strmap *t_ix, *wb_ix, *bias_ix;
	int *bias_recs;		/* `bias` records, by mp->bias_ix */
	size_t nbias, capbias;
	char **reqs;		/* who asked, per request */
	size_t nreqs, capreqs;
	struct reqpair *pairs;	/* what each request asked for */
	size_t npairs, cappairs;
	int resolved;
	char model_sha[65];	/* of the #model header; "" none */
	mixprec_note_fn note;
	void *note_ctx;
};

/* mixprec.c: the stream, read and linked; requests; small helpers. */
void mx_note(struct mixprec *mp, const char *f, ...)
    __attribute__((format(printf, 2, 3)));
int mx_msgs_addf(struct config_msgs *m, const char *f, ...)
    __attribute__((format(printf, 2, 3)));
/* "uint16", ..., "float". */
const char *mx_type_name(int type);
int mx_type_eq(const struct mixprec_type *a, const struct mixprec_type *b);
/* "uint16", or "uint16 symmetric" and so on, for messages (malloc'd). */
char *mx_type_str(const struct mixprec_type *t);
/* "a, b, c, ...": tensor (tensors = 1) or node names, malloc'd. */
char *mx_names_str(const struct mixprec *mp, const int *v, int n,
    int tensors);
int mx_in_list(const int *v, int n, int x);
/* Add x to the set *v; -1 when out of memory. */
int mx_add_int(int **v, int *n, size_t *cap, int x);
int mx_method_is(const struct aq *q, const char *m);
/* The tensor named so, added when new; -1 with e when out of memory. */
int mx_tensor_at(struct mixprec *mp, const char *name, struct err *e);

/*
 * mixresolve.c: the records that carry parameters (qparam, convert, and
 * the bias records behind bias qparams), read through records.h at
 * rec = mp->recs[nrecs].
 */
/*
 * The kinds of records the writer tells apart, read once (the records
 * lie all over the heap: reading each one's type on every emit cost
 * more than the rest of the walk).
 */
enum mx_kind {
	MX_OTHER,
	MX_CONVERT,
	MX_FOLD,
	MX_HIST,
	MX_FIXED,	/* stat, weight, bias, node: emitted as read, always */
};
/* mp->kinds, of every record read; -1 with e. */
int mx_kinds(struct mixprec *mp, struct err *e);
int mx_read_qparam(struct mixprec *mp, const struct stream_rec *rec,
    struct err *e);
int mx_read_convert(struct mixprec *mp, const struct stream_rec *rec,
    struct err *e);
/* After reading: each bias qparam's activation, weight and bias record. */
int mx_link_biases(struct mixprec *mp, struct err *e);

#endif
