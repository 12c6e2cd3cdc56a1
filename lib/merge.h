/*
 * merge: the exact merge of onnxq streams (onnx-calib --merge), so that
 * the streams of calibration shards, each over a part of the batches,
 * make the stream of the whole run, byte for byte.
 *
 * Every distinct header line and record of the inputs becomes one item:
 * - stat and hist records of one tensor accumulate exactly
 *   (tstats_merge(), hist counts added), so the order of the inputs and
 *   how the batches were split do not matter;
 * - node, weight, bias, qparam and convert records about one subject
 *   must be the same line in every input that has them;
 * - unknown record types are kept once per distinct line, and unknown
 *   keys of stat and hist records must have one value (they are written
 *   after the known keys, sorted by key);
 * - header lines are kept once each; #model lines with a sha256= must
 *   name one model.
 *
 * The output order does not depend on the order of the inputs: each
 * input says "a before b" for its consecutive items, and the items are
 * written in a topological order of those constraints, ties (and any
 * cycle) broken by the item's key. When all inputs list the same items
 * in the same order, that order is kept. Headers come first, in their
 * own order, then the records.
 *
 * What is refused, with the file and line of the offending record and
 * where its first copy was read: records that differ, a stream of
 * another model, statistics that cannot be merged (tstats_merge's
 * messages: other dtype, overflowing counts...), a hist record without a
 * stat record, and a merged histogram that does not count exactly its
 * tensor's finite values (tstats_check_hist()).
 *
 * Memory: everything is kept until stream_merge_free(); the statistics
 * take what stats.h says per tensor.
 */
#ifndef ONNXQ_MERGE_H
#define ONNXQ_MERGE_H

#include "err.h"
#include "stream.h"

struct stream_merge;

/* NULL when out of memory. */
struct stream_merge *stream_merge_new(void);
void stream_merge_free(struct stream_merge *mg);

/* Add every header line and record of r, reading it to its end. */
int stream_merge_add(struct stream_merge *mg, struct stream_reader *r,
    struct err *e);

/* The checks on the merged whole (hist records); before writing. */
int stream_merge_check(struct stream_merge *mg, struct err *e);

/*
 * Write the merged header lines, then (the caller may add its own
 * headers between) the merged records; annotate adds the derived keys of
 * tstats_put_stat() to the stat records. Errors are the writer's (see
 * stream_write_end()) but for out of memory.
 */
int stream_merge_write_headers(struct stream_merge *mg,
    struct stream_writer *w, struct err *e);
int stream_merge_write_records(struct stream_merge *mg,
    struct stream_writer *w, int annotate, struct err *e);

#endif
