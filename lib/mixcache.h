/*
 * mixcache: the activations of one reference run of a model, per sample,
 * and which nodes of another model (a variant of it: other Q/DQ
 * parameters for a few tensors) compute exactly what they did there, so
 * that onnx-mixprec's evaluator re-runs only the nodes a candidate's
 * change reaches (interp_run_skip()).
 *
 * A node of the variant matches when the reference has a node with the
 * same first output whose serialized NodeProto is byte for byte the same
 * (op, attributes, input and output names), none of its attributes is a
 * graph, and each input is a graph input, an initializer serialized the
 * same in both models, or the output of a matching node. Its outputs are
 * then the reference run's, bit for bit (the kernels are deterministic).
 *
 * Only the values a variant's nodes may read from a matching node are
 * kept: what a QuantizeLinear reads (its parameters are what variants
 * change; when a few nodes make it from DequantizeLinear values, their
 * integer inputs instead) and what a node reads along with another
 * value that is not constant. A matching node whose value a node that
 * runs needs, but is not kept, runs too (and so on, back to kept
 * values): it makes the same value again. So do the nodes that make
 * the graph outputs, which are not kept either (a variant's change
 * reaches them; interp_run_skip() leaves an output empty when its node
 * is marked skipped after mixcache_match(), as a caller that does not
 * read it may do).
 *
 * Memory: the recorded tensors take at most `budget` bytes; a reference
 * that would pass it is dropped (the caller then runs whole models).
 */
#ifndef ONNXQ_MIXCACHE_H
#define ONNXQ_MIXCACHE_H

#include <stdint.h>

#include "err.h"
#include "model.h"
#include "tensor.h"

struct mixcache;

struct mixcache *mixcache_new(uint64_t budget);
void mixcache_free(struct mixcache *c);
/* Make m (not kept) the reference, with no samples yet; -1 with e. */
int mixcache_begin(struct mixcache *c, const struct model *m, struct err *e);
/*
 * The same, where stable(ctx, t) is 1 for each initializer t of m whose
 * bytes stay where they are, unchanged, while m is the reference (the
 * caller lends them from stores that outlive it): those are read where
 * they are, not copied, and a variant's initializer whose bytes lie at
 * the same address has the same bytes, unread.
 */
int mixcache_begin_lent(struct mixcache *c, const struct model *m,
    int (*stable)(void *ctx, const Onnx__TensorProto *t), void *ctx,
    struct err *e);
/*
 * Keep a copy of sample s's tensor; 0 (past the budget: dropped). Only
 * the values a variant may read are kept (see mixcache_match()), and
 * those named by mixcache_want().
 */
int mixcache_record(struct mixcache *c, int s, const char *name,
    const struct tensor *t);
/* The same, taking t itself (tensor_move) rather than a copy. */
int mixcache_keep(struct mixcache *c, int s, const char *name,
    struct tensor *t);
/* Keep name too (a value the caller reads from the cache); -1 with e. */
int mixcache_want(struct mixcache *c, const char *name, struct err *e);
/* 1 when the reference holds sample s whole. */
int mixcache_has(const struct mixcache *c, int s);
/* Sample s's tensor name in the reference run, or NULL. */
const struct tensor *mixcache_get(const struct mixcache *c, int s,
    const char *name);
/*
 * skip[i] (m's g->n_node of them) = 1 for each node of m that matches
 * the reference and whose values the nodes that run can take from it
 * (kept, or made again), 0 otherwise; the count of those, or -1 with e.
 * No reference: none match.
 */
int mixcache_match(const struct mixcache *c, const struct model *m,
    unsigned char *skip, struct err *e);
/* Bytes recorded now. */
uint64_t mixcache_bytes(const struct mixcache *c);

#endif
