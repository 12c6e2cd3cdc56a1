/*
 * calib: the calibration engine of onnx-calib. Runs a prepared fp32 model
 * (prep.h) with the interpreter on batches of samples and keeps, for
 * every floating-point tensor the quantizer may need (the graph inputs and
 * every tensor a node produces, so also the graph outputs; not the
 * constants), the exactly mergeable statistics of stats.h: counts, exact
 * range, per-batch ranges for the moving average, exact sums, NaN/Inf
 * counts and a histogram with data-independent bins.
 *
 * Memory does not grow with the number of batches: a tensor's statistics
 * are fixed-size apart from its histogram, whose storage follows the
 * range of values seen (at most 512 blocks of 2^mbits counts). The
 * statistics are gathered by the threaded vector code of statkern.h when
 * mbits is 0 to STATKERN_MBITS_MAX, else by tstats_add_batch().
 *
 * Statistics that follow exactly from other tensors' are derived from
 * theirs, batch by batch, rather than computed from the values
 * (statderive.h): all of them for a copy (Reshape, ...), the histogram
 * for Relu, Clip, Transpose and Concat (their sums are computed). The
 * stream is the same either way: ONNXQ_NO_DERIVE set in the environment
 * when the engine is made turns this off (for comparisons).
 *
 * The tensors are kept, and written, in the model's order: the graph
 * inputs in order, then the outputs of each node in the interpreter's
 * topological order (graph_topo()), each node's outputs in order. So the
 * output depends on the model and the data only, and streams of shards
 * list their records in one order.
 *
 * The second half feeds the engine: struct calib_data lists the samples
 * of data directories (the layouts of dataset.h, or directories of PNG
 * and JPEG images preprocessed as image.h says) and assembles batches,
 * checking each tensor against the model's declared input and naming the
 * file when it does not fit.
 */
#ifndef ONNXQ_CALIB_H
#define ONNXQ_CALIB_H

#include <stdint.h>

#include "err.h"
#include "image.h"
#include "interp.h"
#include "model.h"
#include "stats.h"
#include "stream.h"
#include "tensor.h"

struct calib_opts {
	int threads;		/* interpreter threads; 0 means 2 */
	int mbits;		/* histogram mantissa bits; -1: no histograms */
};

/* threads 0, mbits HIST_MBITS_DEFAULT. */
void calib_opts_init(struct calib_opts *o);

struct calib;

/* m (already prepared) must outlive the engine. */
struct calib *calib_new(const struct model *m, const struct calib_opts *o,
    struct err *e);
void calib_free(struct calib *c);

/* The interpreter, for its inputs' names, types and shapes. */
const struct interp *calib_interp(const struct calib *c);

/*
 * Run one batch (inputs[i] for the i-th model input, as interp_run takes
 * them) and add every float tensor it produces to the statistics, as one
 * batch: the per-batch minimum and maximum are those of the whole tensor.
 */
int calib_run(struct calib *c, const struct tensor *inputs, struct err *e);

/*
 * Add the statistics of src to dst's: two engines of one model (the same
 * m and mbits) that ran different batches, as the workers of calibpool.h
 * do. Exact (stats.h): dst then holds what one engine that ran all of
 * their batches would, in any order. src is left as it was.
 */
int calib_merge(struct calib *dst, const struct calib *src, struct err *e);

/* Batches run so far. */
uint64_t calib_batches(const struct calib *c);

/*
 * The tensors with statistics, in the order above. A tensor appears once
 * a run produced it as a floating-point tensor; its statistics belong to
 * the engine.
 */
int calib_ntensors(const struct calib *c);
const char *calib_tensor_name(const struct calib *c, int i);
const struct tstats *calib_tensor_stats(const struct calib *c, int i);

/*
 * 1 when the last run derived tensor name's histogram from other
 * tensors' rather than counting its values (see above).
 */
int calib_tensor_derived(const struct calib *c, const char *name);

/* The stat and hist records of every tensor; errors are the writer's. */
int calib_write(const struct calib *c, struct stream_writer *w,
    int annotate, struct err *e);

/*
 * The copy of the model of onnx-calib --annotate-model carries the
 * stream (text, len bytes) in its metadata_props under CALIB_META_KEY:
 * set it in m, replacing an earlier value.
 */
#define CALIB_META_KEY "onnxq.stats"
int calib_annotate_model(struct model *m, const char *text, size_t len,
    struct err *e);

/* Samples. */

struct calib_data;

/*
 * Open the data directories in order. A directory holding .png, .jpg or
 * .jpeg files (and no samples of dataset.h's layouts) is an image
 * directory: each image is one sample, in natural order of the names,
 * preprocessed as calib_data_set_prep() says (image_prep_init()'s
 * defaults until then; calib_image_prep() fills in what the model
 * decides).
 */
struct calib_data *calib_data_open(const char *const *dirs, int ndirs,
    struct err *e);
void calib_data_set_prep(struct calib_data *d, const struct image_prep *p);
void calib_data_free(struct calib_data *d);
int calib_data_count(const struct calib_data *d);
/* The sample's path: "DIR/s3", "DIR/s3.npz", "DIR/cat.png". */
const char *calib_data_name(const struct calib_data *d, int i);
/* 1 when some directory holds images. */
int calib_data_has_images(const struct calib_data *d);

/*
 * Load samples first .. first+n-1 for ip's inputs into inputs[]
 * (interp_ninputs(ip) empty tensors the caller releases). With n > 1
 * the samples are concatenated along the first axis, which the model
 * must leave dynamic. A tensor whose type or shape does not fit the
 * model's input is an error naming the file, the input and the shape
 * the model expects: "data/s3/x.npy: input x: shape 1x3x32x32, the model
 * wants 1x3x64x64".
 */
int calib_data_load(struct calib_data *d, const struct interp *ip,
    int first, int n, struct tensor *inputs, struct err *e);

/*
 * Complete an image preprocessing for ip's only input: the layout and
 * channels from its declared shape (NCHW when dimension 1 is 1 or 3,
 * NHWC when the last is), the size from its static height and width
 * unless the caller set width and height, and the element type. set
 * says which fields the user gave: CALIB_PREP_SIZE, CALIB_PREP_LAYOUT.
 */
#define CALIB_PREP_SIZE 1
#define CALIB_PREP_LAYOUT 2
int calib_image_prep(const struct interp *ip, struct image_prep *p, int set,
    struct err *e);

#endif
