/*
 * mixskel: skeletons of onnx-mixprec's evaluation models. A skeleton is
 * the front of one evaluation's model (qdq_front_make(): the weights and
 * biases quantized, their initializers and DequantizeLinear nodes made),
 * packed without the bytes its initializers borrow (the prepared model's,
 * and the quantized weights' of qdqwcache.h, which stay for the search's
 * life). The model of a later plan that fits it (qdq_front_fits(): the
 * same constants' records; most evaluations differ in activations only)
 * is the skeleton unpacked, lent those bytes again, with its activations
 * applied (qdq_front_apply()): the model qdq_apply() makes of the model
 * before, byte for byte, without making the weights' part again.
 *
 * Skeletons are told apart by their source (the caller's number for the
 * model the front was made of); at most MIXSKEL_MAX are kept, the least
 * recently used replaced.
 */
#ifndef ONNXQ_MIXSKEL_H
#define ONNXQ_MIXSKEL_H

#include <stddef.h>

#include "err.h"
#include "model.h"
#include "qdq.h"

#define MIXSKEL_MAX 8

/* How the caller's models borrow bytes (mixeval.c). */
struct mixskel_lender {
	/* does initializer t hold borrowed bytes? */
	int (*is_lent)(void *ctx, const Onnx__TensorProto *t);
	/* t holds borrowed bytes now; -1 when out of memory */
	int (*lend)(void *ctx, Onnx__TensorProto *t);
	/* give back the borrowed bytes of m and free it */
	void (*free_model)(void *ctx, struct model *m);
	void *ctx;
};

struct mixskels;

struct mixskels *mixskels_new(const struct mixskel_lender *l);
void mixskels_free(struct mixskels *s);

/*
 * The model of plan (qdq_front_apply() with o; its report in *rep) from
 * a skeleton of source src that fits it: 1 and *m, 0 when none does, -1
 * with e. name and dir as model_load_mem() takes them.
 */
int mixskels_make(struct mixskels *s, int src, const struct qdq_plan *plan,
    const struct qdq_opts *o, const char *name, const char *dir,
    struct model **m, struct qdq_report *rep, struct err *e);

/*
 * Keep m, just made of source src by qdq_front_make() (f, which the
 * skeleton then owns), as a skeleton: its initializers that hold
 * borrowed bytes packed empty, the others with theirs. 0, or -1 with e
 * (f freed).
 */
int mixskels_keep(struct mixskels *s, int src, struct qdq_front *f,
    const struct model *m, struct err *e);

/* Models made from skeletons so far (for tests and the profile). */
long mixskels_hits(const struct mixskels *s);

#endif
