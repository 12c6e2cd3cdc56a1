/*
 * stats: per-tensor activation statistics, accumulated batch by batch and
 * merged exactly, so that statistics of shards (split on batch
 * boundaries) merge, in any order, into exactly the whole run's.
 *
 * Each batch is reduced in one pass over memory: its count, NaN and Inf
 * counts, min and max (of the finite values), and sum and sum of squares
 * computed in double; then the batch sums (and the batch min and max) are
 * added exactly across batches with xsum. Only these exact quantities are
 * stored; mean, std and the moving averages are derived from them.
 *
 * The stream form is a `stat` record plus one or more `hist` records
 * (onnxq-stream(5)).
 *
 * A struct tstats owns its histogram and its exact sums (small while
 * their values are): tstats_init / tstats_release.
 */
#ifndef ONNXQ_STATS_H
#define ONNXQ_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "hist.h"
#include "stream.h"
#include "tensor.h"
#include "cxsum.h"
#include "xsum.h"

#define TSTATS_RANK_NONE (-2)	/* no shape seen yet */
#define TSTATS_RANK_MIXED (-1)	/* batches differed in rank ("*") */
/* hist records are split to stay below this many bytes. */
#define TSTATS_HIST_LINE 60000

struct tstats {
	int dtype;		/* DT_FLOAT unless the caller says otherwise */
	int rank;		/* or TSTATS_RANK_NONE / TSTATS_RANK_MIXED */
	int64_t dims[TENSOR_MAX_RANK];	/* -1 where batches differed */
	uint64_t n;		/* finite values */
	uint64_t nan, inf;	/* NaN and +-Inf values, in no sum or range */
	float min, max;		/* of the finite values; inf/-inf when n == 0 */
	uint64_t batches;	/* batches with at least one finite value */
	struct cxsum bmin, bmax;	/* sums of those batches' min and max */
	struct cxsum sum, sumsq;	/* of the finite values, per batch in double */
	struct hist *hist;	/* owned; NULL when not kept */
};

/* mbits < 0: no histogram. */
int tstats_init(struct tstats *ts, int mbits, struct err *e);
void tstats_release(struct tstats *ts);

/* Note one batch's shape (merged: differing dims become "?"). */
void tstats_add_shape(struct tstats *ts, int rank, const int64_t *dims);
/* Add one batch of n values. -1 only when out of memory. */
int tstats_add_batch(struct tstats *ts, const float *x, size_t n,
    struct err *e);
/*
 * The exact part of one batch another reducer (statkern) computed: its
 * min and max and its sums are added to the exact sums. The caller has
 * counted the batch. -1 only when out of memory.
 */
int tstats_add_sums(struct tstats *ts, float bmin, float bmax,
    const struct xsum *sum, const struct xsum *sumsq, struct err *e);
/* dst += src, exactly; the histogram coarsens to the smaller mbits. */
int tstats_merge(struct tstats *dst, const struct tstats *src,
    struct err *e);

/* Derived values; NaN when there is nothing to average. */
double tstats_mean(const struct tstats *ts);
double tstats_std(const struct tstats *ts);
float tstats_mavg_min(const struct tstats *ts);
float tstats_mavg_max(const struct tstats *ts);

/*
 * Write the keys of a stat record after the caller's
 * stream_rec_start(w, "stat", name); the caller may add keys and calls
 * stream_rec_done(). annotate adds the derived keys.
 */
void tstats_put_stat(const struct tstats *ts, struct stream_writer *w,
    int annotate);
/*
 * Write the hist records of name (none when ts->hist is NULL), split to
 * stay below TSTATS_HIST_LINE bytes; extra keys (e.g. unknown ones being
 * passed through) go on the first record. -1 only when out of memory
 * (write errors are the writer's).
 */
int tstats_put_hist(const struct tstats *ts, const char *name,
    struct stream_writer *w, const struct stream_kv *extra, size_t nextra,
    struct err *e);
/* The stat record and the hist records. Errors are the writer's. */
int tstats_write(const struct tstats *ts, const char *name,
    struct stream_writer *w, int annotate, struct err *e);

/*
 * Texts of histogram bin edges, kept across records: the same bins recur
 * in every tensor, so a writer of many records formats each edge once.
 * The _ed forms of the writers take one (NULL: none); the text written
 * is the same either way. tstats_edges_new: NULL when out of memory.
 */
struct tstats_edges;
struct tstats_edges *tstats_edges_new(void);
void tstats_edges_free(struct tstats_edges *ed);
int tstats_put_hist_ed(const struct tstats *ts, const char *name,
    struct stream_writer *w, const struct stream_kv *extra, size_t nextra,
    struct tstats_edges *ed, struct err *e);
int tstats_write_ed(const struct tstats *ts, const char *name,
    struct stream_writer *w, int annotate, struct tstats_edges *ed,
    struct err *e);

/* Keys of the stat and hist records this module knows (NULL-terminated). */
extern const char *const tstats_stat_keys[];
extern const char *const tstats_hist_keys[];
/*
 * Set an initialised, empty ts (no histogram) from a stat record;
 * derived keys are ignored (recomputed), unknown keys left to the caller.
 */
int tstats_read_stat(struct tstats *ts, const struct stream_rec *rec,
    struct err *e);
/* Add a hist record's counts to ts->hist (created at the record's mbits). */
int tstats_read_hist(struct tstats *ts, const struct stream_rec *rec,
    struct err *e);
/*
 * Once a tensor's stat and hist records are all read: its histogram must
 * count exactly its n finite values (hist records without a stat record
 * are the caller's to refuse). The message names neither file nor tensor.
 */
int tstats_check_hist(const struct tstats *ts, struct err *e);

#endif
