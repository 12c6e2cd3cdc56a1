/*
 * qdqwcache: quantized weights and biases kept across qdq_apply() calls
 * on copies of one model (qdq_opts.wcache), so that a caller applying
 * many streams that differ in a few parameters (onnx-mixprec's search)
 * quantizes each weight once, not once per stream.
 *
 * An entry is keyed by the initializer's name, its dims and the whole
 * of its parameters (type, axis, scales, zero points, bias or not): a
 * tensor is found again only under exactly the parameters that made it.
 * The cache does not look at the float values: the caller promises that
 * every model applied with one cache holds the same initializers under
 * the same names (the same model, loaded and prepared alike). Every
 * parameter set a name was put under is kept, the newest found first
 * (the search comes back to earlier ones: a weight in 8 bits, then 16,
 * then 8 again). A tensor the cache gave stays where it is, unchanged,
 * for the cache's life: callers lend its bytes (qdq_opts.lent) and
 * compare them by address (mixcache.h, foldcache.h).
 */
#ifndef ONNXQ_QDQWCACHE_H
#define ONNXQ_QDQWCACHE_H

#include "err.h"
#include "records.h"
#include "tensor.h"

struct qdq_wcache;

struct qdq_wcache *qdq_wcache_new(void);
void qdq_wcache_free(struct qdq_wcache *wc);
/* The tensor kept for name (float dims of src) under q and bias, or NULL. */
const struct tensor *qdq_wcache_get(const struct qdq_wcache *wc,
    const char *name, const struct tensor *src, const struct qparam *q,
    int bias);
/* Keep a copy of qt, made from src under q and bias; -1 with e. */
int qdq_wcache_put(struct qdq_wcache *wc, const char *name,
    const struct tensor *src, const struct qparam *q, int bias,
    const struct tensor *qt, struct err *e);
/* Entries found by qdq_wcache_get() so far (for tests). */
long qdq_wcache_hits(const struct qdq_wcache *wc);

#endif
