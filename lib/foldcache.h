/*
 * foldcache: the values interp_opts.fold_constant_nodes (interp.h)
 * folded, kept across interpreters, so that a model rebuilt with a few
 * constants changed (onnx-mixprec's candidates: the same weights, other
 * activation parameters) does not fold the unchanged ones again (the
 * DequantizeLinear of every weight, per candidate, was a tenth of a
 * search's time).
 *
 * An entry is keyed by the node's first output name and holds the node
 * (its serialized NodeProto and opset) and its inputs (element type,
 * shape and bytes): a value is found again only for a node serialized
 * the same, at the same opset, whose inputs hold the same bytes. It is
 * then what the kernel made, bit for bit what it would make again (the
 * kernels are deterministic), lent rather than copied. One entry per
 * name: a new value replaces the old entry. What kernels derive from a
 * kept value (packed weights) is kept with its entry (foldcache_form()).
 *
 * Memory: the kept inputs are copies (tensor.h), counted against the
 * memory limit, and so are the values foldcache_put() keeps; a copy
 * that does not fit is not kept. foldcache_keep() takes the value
 * itself instead, so that its maker and the cache share one copy.
 */
#ifndef ONNXQ_FOLDCACHE_H
#define ONNXQ_FOLDCACHE_H

#include "err.h"
#include "onnx/onnx.pb-c.h"
#include "tensor.h"

struct foldcache;

struct foldcache *foldcache_new(void);
void foldcache_free(struct foldcache *c);
/*
 * The value node n (at opset) made from inputs in[0..nin) (NULL for an
 * absent one): 1 with *out the kept value, lent, 0 when none is kept.
 * A lent tensor's data is the cache's (out->counted is 0): valid until
 * the entry is replaced (a foldcache_put of that name) or the cache
 * freed; not to be written nor released (forget it with memset; the
 * interpreter marks it lent, as model.h's struct model_map does). So
 * an interpreter that takes values from a cache must be freed before
 * another one puts into it: one at a time.
 */
int foldcache_get(struct foldcache *c, const Onnx__NodeProto *n, int opset,
    const struct tensor *const *in, int nin, struct tensor *out);
/* Keep a copy of val, made so; -1 with e (nothing kept). */
int foldcache_put(struct foldcache *c, const Onnx__NodeProto *n, int opset,
    const struct tensor *const *in, int nin, const struct tensor *val,
    struct err *e);
/*
 * Keep val itself, made so: 1 with val's data moved to the cache and
 * *val its lent view (as foldcache_get() gives it: the one who made
 * the value reads the cache's, under the same rules); 0 when nothing
 * is kept (n has no output name), -1 with e; val is untouched then.
 */
int foldcache_keep(struct foldcache *c, const Onnx__NodeProto *n, int opset,
    const struct tensor *const *in, int nin, struct tensor *val,
    struct err *e);
/*
 * stable(ctx, data): 1 when the bytes at data stay there, the same, for
 * the cache's life (a model's weights, lent: onnx-mixprec's): an input
 * at the address such bytes were kept from is then the same unread (the
 * comparison of weights was a third of the lookups). NULL: every input's
 * bytes are compared.
 */
typedef int (*foldcache_stable_fn)(void *ctx, const void *data);
void foldcache_set_stable(struct foldcache *c, foldcache_stable_fn stable,
    void *ctx);
/* Values foldcache_get() found so far (for tests and profiles). */
long foldcache_hits(const struct foldcache *c);

/*
 * Forms derived from a kept value (a convolution's weights packed for
 * the GEMM), kept with its entry so that each interpreter lent the
 * value does not derive them again. The entry is named by its value's
 * bytes as lent: data, nbytes long; the form by key[0..nkey) (at most
 * FOLDCACHE_KEY_MAX: what it is and every parameter it was made with).
 * A form goes with its entry (replaced or freed), so an address reused
 * after that names another value, without the old forms. Forms are
 * plain malloc'd memory, not counted against the memory limit.
 */
#define FOLDCACHE_KEY_MAX 8
/* The form, lent under foldcache_get()'s rules, or NULL (none kept). */
const void *foldcache_form(struct foldcache *c, const void *data,
    size_t nbytes, const int64_t *key, int nkey);
/*
 * Keep form (malloc'd) with data's entry: 1, the form taken; 0 when
 * data is not a kept value's or a form is kept under key already (form
 * stays the caller's); -1 with e.
 */
int foldcache_form_keep(struct foldcache *c, const void *data,
    size_t nbytes, const int64_t *key, int nkey, void *form,
    struct err *e);
/* Forms foldcache_form() found so far (for tests and profiles). */
long foldcache_form_hits(const struct foldcache *c);

#endif
