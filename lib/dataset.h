/*
 * dataset: the data directories onnx-calib and onnx-verify read samples
 * from, and the comparison of outputs against expected ones.
 *
 * A data directory holds samples in one of three layouts, which may be
 * mixed:
 *
 *   DIR/test_data_set_N/input_K.pb, output_K.pb
 *	The ONNX backend-test layout: serialized TensorProto files, the K-th
 *	input file for the K-th model input (graph inputs that are not
 *	initializers), the K-th output file for the K-th graph output.
 *   DIR/SAMPLE/NAME.npy
 *	One sub-directory per sample, one .npy file per tensor, named after
 *	the model input or output it holds.
 *   DIR/SAMPLE.npz
 *	One numpy archive per sample, one member NAME.npy per tensor.
 *
 * A directory that itself holds input_K.pb or .npy files is one sample.
 * Samples are taken in the natural order of their names (digit runs
 * compare as numbers: s2 before s10), directory after directory in the
 * order given, so every run sees the same sequence.
 *
 * File names: a tensor name maps to a file name by percent-encoding every
 * byte outside [A-Za-z0-9._-] as %HH with upper-case hex digits, so
 * "conv/out:0" is stored as "conv%2Fout%3A0.npy". A file (or .npz
 * member, as numpy.savez(**{name: array}) writes it) may also carry the
 * unencoded name where the file system allows it ("onnx::Flatten_0.npy";
 * the encoded name is looked for first). For a model of one input, the
 * one .npy file of a sample directory (files of expected outputs apart)
 * is its input whatever its name, as ONNX Runtime's tools take it. A
 * missing input names the file looked for and the .npy files there:
 * "DIR/s0/y.npy: missing (model input y); found x.npy".
 *
 * A data file that is not a regular file (a FIFO, a device) is an error,
 * "PATH: not a regular file", found without blocking on it. An .npy
 * file or .npz member is read header first: its element type (and shape,
 * see dataset_expect_shapes) is checked before the data is read or
 * inflated, and the data is inflated straight into the tensor.
 *
 * Messages name the file: "DIR/s3/x.npy: dtype <f8 where the model wants
 * float".
 */
#ifndef ONNXQ_DATASET_H
#define ONNXQ_DATASET_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "tensor.h"

struct dataset;

/*
 * What a sample is read for: tensor names in model order, and for
 * inputs the element type the model wants (DT_UNDEFINED: any).
 */
struct dataset_spec {
	int ninputs;
	const char *const *input_names;
	const int *input_dtypes;
	int noutputs;
	const char *const *output_names;
};

/* Scan ndirs directories for samples; fails when one holds none. */
struct dataset *dataset_open(const char *const *dirs, int ndirs,
    struct err *e);
/*
 * The same, and a directory that holds no samples of the layouts above
 * but .png, .jpg or .jpeg files (image_name_ok()) is an image directory:
 * each image is one sample, in the same natural order. dataset_load()
 * does not read images: the caller preprocesses them (image.h).
 */
struct dataset *dataset_open_images(const char *const *dirs, int ndirs,
    struct err *e);
/*
 * The shapes the model wants for its inputs, in dataset_spec order:
 * ranks[k] (-1: any) and dims[k * TENSOR_MAX_RANK + j] (< 0: any). An
 * .npy file or .npz member is checked against them, and against the
 * element type, from its header, before its data is read or inflated:
 * "DIR/s0.npz: input x: shape 1x1073741824, the model wants 1x4". The
 * first dimension is not compared (samples may be batched along it; the
 * caller checks it on the tensor). Without this call only the element
 * type is checked that early. n may be smaller than the number of inputs.
 */
int dataset_expect_shapes(struct dataset *ds, int n, const int *ranks,
    const int64_t *dims, struct err *e);
int dataset_sample_is_image(const struct dataset *ds, int i);
int dataset_has_images(const struct dataset *ds);
void dataset_free(struct dataset *ds);
int dataset_count(const struct dataset *ds);
/* "DIR/test_data_set_0", "DIR/s1.npz": for messages and reports. */
const char *dataset_sample_name(const struct dataset *ds, int i);

/*
 * Read sample i: every input into inputs[spec->ninputs] (empty tensors;
 * a missing input is an error), and when expected is not NULL the
 * expected outputs into expected[spec->noutputs], leaving a tensor empty
 * (data NULL) when the sample has no file for that output. The caller
 * releases what was read; on error nothing is left allocated.
 */
int dataset_load(struct dataset *ds, int i, const struct dataset_spec *spec,
    struct tensor *inputs, struct tensor *expected, struct err *e);

/* The order samples are taken in: digit runs by value, ties bytewise. */
int dataset_name_cmp(const char *a, const char *b);
/* "DIR/NAME" (trailing slashes of dir dropped); malloc'd, NULL if out of memory. */
char *dataset_path_join(const char *dir, const char *name);

/* The file name (without extension) for a tensor name; malloc'd, NULL if out of memory. */
char *dataset_file_name(const char *tensor_name);

/*
 * Write tensors into DIR/SAMPLE/NAME.npy (the npy layout), creating the
 * directories; each file is written atomically.
 */
int dataset_save(const char *dir, const char *sample, int n,
    const char *const *names, const struct tensor *t, struct err *e);
/* The last path component of sample i without .npz ("test_data_set_0"). */
const char *dataset_sample_base(const struct dataset *ds, int i);

/*
 * Comparison of outputs with references, accumulated over samples.
 * Elements agree when |out - ref| <= atol + rtol * |ref| (numpy's
 * allclose, as ONNX's backend tests use), NaN agreeing with NaN and an
 * infinity with the same infinity. SNR is 10 log10(sum ref^2 / sum
 * (out - ref)^2) over the finite pairs, pooled over all samples.
 */
struct dataset_cmp {
	double rtol, atol;
	int64_t samples;	/* tensors compared */
	int64_t nelem;		/* elements compared */
	int64_t nbad;		/* elements outside tolerance */
	int64_t nmismatch;	/* tensors whose shape or type differs */
	double max_abs;		/* largest |out - ref|; INFINITY with NaN/inf mismatches */
	double signal, noise;	/* sums of squares for the SNR */
	char first_problem[256];	/* first shape/type problem, "" if none */
};

void dataset_cmp_init(struct dataset_cmp *c, double rtol, double atol);
/* Compare one pair; shape and dtype differences count as a mismatch, not an error. */
void dataset_cmp_add(struct dataset_cmp *c, const struct tensor *out,
    const struct tensor *ref);
/* SNR in dB: INFINITY when exact, -INFINITY when the reference is all zero and the output not. */
double dataset_cmp_snr(const struct dataset_cmp *c);
/* 1 when every compared tensor matched in shape and type and every element agreed. */
int dataset_cmp_ok(const struct dataset_cmp *c);

#endif
