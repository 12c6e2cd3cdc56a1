/*
 * onnx-calib: the statistics stage (see onnx-calib(1)). Runs the prepared
 * fp32 model on calibration data and writes the onnxq stream
 * (onnxq-stream(5)): the model's graph and weights, then the activation
 * statistics of every float tensor (lib/calib.h). Also describes a model
 * without data, and merges streams of calibration shards exactly.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib.h"
#include "calibpool.h"
#include "cli.h"
#include "graph.h"
#include "image.h"
#include "interp.h"
#include "merge.h"
#include "model.h"
#include "outfile.h"
#include "prep.h"
#include "progress.h"
#include "stats.h"
#include "stream.h"
#include "weights.h"

#define PROG "onnx-calib"

struct opts {
	const char **dirs;	/* -d, in order */
	int ndirs;
	long limit;		/* samples; 0 = all */
	long batch;		/* samples per run; 0 = one at a time */
	long shard_k, shard_n;	/* --shard K/N; 0/0 = all */
	int threads;		/* 0 = the interpreter's default */
	int mbits;		/* histogram resolution */
	int quiet;
	int annotate;		/* derived keys in stat records */
	const char *annotate_model;	/* copy of the model with the stream */
	struct image_prep prep;	/* for image directories */
	int prep_set;		/* CALIB_PREP_SIZE, CALIB_PREP_LAYOUT */
	int image_opts;		/* some image option was given */
	int weights_only;
	int merge;
	const char *out;
	char **args;		/* MODEL, or the STATS of --merge */
	int nargs;
	int argc;		/* the whole command line, for #prog */
	char **argv;
};

static const char usage_text[] =
    "usage: onnx-calib -d DIR [-d DIR ...] [--limit N] [--batch N] "
    "[--shard K/N]\n"
    "                  [--threads N] [--hist-bits M] [--quiet] [--annotate]\n"
    "                  [--annotate-model FILE] [--size WxH] "
    "[--resize MODE]\n"
    "                  [--short N] [--pad V] [--scale F] [--mean M] "
    "[--std S] [--bgr]\n"
    "                  [--layout nchw|nhwc] [-o FILE] MODEL\n"
    "       onnx-calib --weights-only [-o FILE] MODEL\n"
    "       onnx-calib --merge [--annotate] [-o FILE] STATS ...\n";

/* Open the output and a stream writer with our provenance on it. */
static struct stream_writer *
open_output(const struct opts *o, struct outfile **of, struct err *e)
{
	struct stream_writer *w;

	if (!(*of = outfile_open(o->out, e)))
		return NULL;
	if (!(w = stream_writer_new(outfile_fp(*of),
	    strcmp(o->out, "-") == 0 ? "<stdout>" : o->out))) {
		outfile_abort(*of);
		err_nomem(e);
		return NULL;
	}
	return w;
}

/* Finish the stream and put the file in place; frees w and of. */
static int
close_output(struct stream_writer *w, struct outfile *of, int ok,
    struct err *e)
{
	if (ok && stream_write_end(w, e) < 0)
		ok = 0;
	stream_writer_free(w);
	if (!ok) {
		outfile_abort(of);
		return -1;
	}
	return outfile_commit(of, e);
}

/*
 * Load the model at path ("-": stdin) and prepare it. Sets sha (the
 * SHA-256 of its bytes), *opset, and the graph index of the prepared
 * graph. With keep, the file's bytes are kept there (for a copy of the
 * model).
 */
static struct model *
load_prepared(const char *path, char sha[65], int *opset, struct graph **gr,
    void **keep, size_t *keeplen, struct err *e)
{
	struct model *m;

	*gr = NULL;
	if (!(m = prep_load(path, sha, keep, keeplen, e)))
		return NULL;
	*opset = model_opset(m, "");
	if (!(*gr = graph_new(m->proto->graph, e))) {
		err_prefix(e, "%s", path);
		model_free(m);
		if (keep) {
			free(*keep);
			*keep = NULL;
		}
		return NULL;
	}
	return m;
}

/* --weights-only: the model's node, weight and bias records. */
static int
run_weights(const struct opts *o, struct err *e)
{
	const char *path = o->nargs ? o->args[0] : "-";
	char sha[65];
	struct model *m;
	struct graph *gr;
	struct outfile *of;
	struct stream_writer *w;
	int opset, rc = -1;

	if (!(m = load_prepared(path, sha, &opset, &gr, NULL, NULL, e)))
		return -1;
	if (!(w = open_output(o, &of, e)))
		goto out;
	stream_put_prog(w, PROG, ONNXQ_VERSION, o->argc, o->argv);
	stream_put_model(w, path, sha, opset);
	if (weights_emit(m, gr, w, e) < 0) {
		err_prefix(e, "%s", path);
		close_output(w, of, 0, NULL);
		goto out;
	}
	rc = close_output(w, of, 1, e);
out:
	graph_free(gr);
	model_free(m);
	return rc;
}

/*
 * A copy of the model (its original bytes, buf; external data from pm's
 * directory, inlined in the copy) with the stream in its metadata.
 */
static int
save_annotated(const char *out, const void *buf, size_t len,
    const struct model *pm, const char *text, size_t textlen,
    struct err *e)
{
	struct model *m;
	int rc = -1;

	if (!(m = model_load_mem(buf, len, pm->path, pm->dir, e)))
		return -1;
	if (calib_annotate_model(m, text, textlen, e) == 0)
		rc = model_save(m, out, NULL, e);
	model_free(m);
	return rc;
}

/* The batches of this run: shard K/N takes batches K-1, K-1+N, ... */
static int
in_shard(const struct opts *o, long batch)
{
	return o->shard_n == 0 || batch % o->shard_n == o->shard_k - 1;
}

/* Say which tensors had NaN or infinite values (never in their ranges). */
static void
warn_nonfinite(const struct calib *c)
{
	for (int i = 0; i < calib_ntensors(c); i++) {
		const struct tstats *ts = calib_tensor_stats(c, i);

		if (ts->nan || ts->inf)
			cli_warn("warning: tensor %s: %llu NaN and %llu "
			    "infinite values, left out of its statistics",
			    calib_tensor_name(c, i),
			    (unsigned long long)ts->nan,
			    (unsigned long long)ts->inf);
	}
}

/*
 * The batches of this run (and shard): *b malloc'd, *nb of them, *samples
 * in them; *all is the number of batches of the whole run.
 */
static int
list_batches(const struct opts *o, const struct calib_data *d,
    struct calibpool_batch **b, int *nb, long *samples, long *all,
    struct err *e)
{
	long total = calib_data_count(d), per = o->batch ? o->batch : 1;

	if (o->limit && o->limit < total)
		total = o->limit;
	*all = (total + per - 1) / per;
	*nb = 0;
	*samples = 0;
	if (!(*b = calloc((size_t)*all + 1, sizeof **b)))
		return err_nomem(e);
	for (long i = 0; i < *all; i++) {
		int n = (int)(i == *all - 1 ? total - i * per : per);

		if (!in_shard(o, i))
			continue;
		(*b)[*nb].first = (int)(i * per);
		(*b)[(*nb)++].n = n;
		*samples += n;
	}
	return 0;
}

static void
show_progress(void *ctx, long done)
{
	progress_update(ctx, done);
}

/*
 * Run the model on the samples of this run (and shard), on workers over
 * the batches (calibpool.h) that show their progress on bar; pl's engine
 * then holds the statistics.
 */
static int
calibrate(const struct opts *o, struct calibpool *pl, struct calib_data *d,
    struct progress *bar, struct err *e)
{
	struct calibpool_batch *b;
	long samples, all;
	int nb, rc;

	if (list_batches(o, d, &b, &nb, &samples, &all, e) < 0)
		return -1;
	progress_init(bar, stderr, progress_wanted(stderr, o->quiet), PROG,
	    "samples", samples);
	progress_update(bar, 0);
	rc = calibpool_run(pl, d, b, nb, e);
	progress_end(bar);
	free(b);
	if (rc == 0 && nb == 0)
		cli_warn("warning: shard %ld/%ld has none of the %ld batches",
		    o->shard_k, o->shard_n, all);
	return rc;
}

/* -d: calibration on data. */
static int
run_calib(const struct opts *o, struct err *e)
{
	const char *path = o->nargs ? o->args[0] : "-";
	char sha[65], *text = NULL;
	void *keep = NULL;
	size_t keeplen = 0, textlen = 0;
	struct model *m;
	struct graph *gr;
	struct calib *c;
	struct calibpool *pl = NULL;
	struct calib_data *d = NULL;
	struct calibpool_opts po;
	struct progress bar;
	struct outfile *of;
	struct stream_writer *w;
	FILE *mem = NULL;
	int opset, rc = -1;

	if (!(m = load_prepared(path, sha, &opset, &gr,
	    o->annotate_model ? &keep : NULL, &keeplen, e)))
		return -1;
	calibpool_opts_init(&po);
	po.threads = o->threads;
	po.mbits = o->mbits;
	po.progress = show_progress;
	po.progress_ctx = &bar;
	if (!(pl = calibpool_new(m, &po, e))) {
		err_prefix(e, "%s", path);
		goto out;
	}
	if (!(d = calib_data_open((const char *const *)o->dirs, o->ndirs, e)))
		goto out;
	if (calib_data_has_images(d)) {
		struct image_prep p = o->prep;

		if (calib_image_prep(calib_interp(calibpool_engine(pl)), &p,
		    o->prep_set, e) < 0) {
			err_prefix(e, "%s", path);
			goto out;
		}
		calib_data_set_prep(d, &p);
	} else if (o->image_opts) {
		err_set(e, "image options given, but no -d directory holds "
		    "images");
		goto out;
	}
	if (calibrate(o, pl, d, &bar, e) < 0)
		goto out;
	c = calibpool_engine(pl);
	warn_nonfinite(c);
	/* the stream goes to memory first when the model copy gets it too */
	if (o->annotate_model) {
		if (!(mem = open_memstream(&text, &textlen))) {
			err_nomem(e);
			goto out;
		}
		if (!(w = stream_writer_new(mem, "<memory>"))) {
			err_nomem(e);
			goto out;
		}
		of = NULL;
	} else if (!(w = open_output(o, &of, e)))
		goto out;
	stream_put_prog(w, PROG, ONNXQ_VERSION, o->argc, o->argv);
	stream_put_model(w, path, sha, opset);
	if (weights_emit(m, gr, w, e) < 0) {
		err_prefix(e, "%s", path);
		goto fail_w;
	}
	if (calib_write(c, w, o->annotate, e) < 0)
		goto fail_w;
	if (!o->annotate_model) {
		rc = close_output(w, of, 1, e);
		goto out;
	}
	if (stream_write_end(w, e) < 0) {
		stream_writer_free(w);
		goto out;
	}
	stream_writer_free(w);
	if (fclose(mem) != 0) {
		mem = NULL;
		err_nomem(e);
		goto out;
	}
	mem = NULL;
	if (save_annotated(o->annotate_model, keep, keeplen, m, text, textlen,
	    e) < 0)
		goto out;
	if (!(of = outfile_open(o->out, e)))
		goto out;
	if (fwrite(text, 1, textlen, outfile_fp(of)) != textlen) {
		err_errno(e, "%s", strcmp(o->out, "-") == 0 ? "<stdout>" :
		    o->out);
		outfile_abort(of);
		goto out;
	}
	rc = outfile_commit(of, e);
	goto out;
fail_w:
	if (of)
		close_output(w, of, 0, NULL);
	else
		stream_writer_free(w);
out:
	if (mem)
		fclose(mem);
	free(text);
	free(keep);
	calib_data_free(d);
	calibpool_free(pl);
	graph_free(gr);
	model_free(m);
	return rc;
}

/* --merge: the inputs' streams merged exactly (merge.h). */
static int
run_merge(const struct opts *o, struct err *e)
{
	struct stream_merge *mg;
	struct stream_reader *r;
	struct outfile *of;
	struct stream_writer *w;
	char *stdin_arg[] = { "-" };
	char **inputs = o->nargs ? o->args : stdin_arg;
	int ninputs = o->nargs ? o->nargs : 1, rc = -1;

	if (!(mg = stream_merge_new()))
		return err_nomem(e);
	for (int i = 0; i < ninputs; i++) {
		int added;

		if (!(r = stream_open(inputs[i], e)))
			goto out;
		added = stream_merge_add(mg, r, e);
		stream_reader_free(r);
		if (added < 0)
			goto out;
	}
	if (stream_merge_check(mg, e) < 0)
		goto out;
	if (!(w = open_output(o, &of, e)))
		goto out;
	if (stream_merge_write_headers(mg, w, e) < 0) {
		close_output(w, of, 0, NULL);
		goto out;
	}
	stream_put_prog(w, PROG, ONNXQ_VERSION, o->argc, o->argv);
	if (stream_merge_write_records(mg, w, o->annotate, e) < 0) {
		close_output(w, of, 0, NULL);
		goto out;
	}
	rc = close_output(w, of, 1, e);
out:
	stream_merge_free(mg);
	return rc;
}

static int
run(const struct opts *o, struct err *e)
{
	if (o->merge)
		return run_merge(o, e);
	if (o->weights_only)
		return run_weights(o, e);
	return run_calib(o, e);
}

/* "K/N" with 1 <= K <= N. */
static int
shard_arg(const char *s, long *k, long *n)
{
	char *end;

	errno = 0;
	*k = strtol(s, &end, 10);
	if (errno || end == s || *end != '/')
		return -1;
	s = end + 1;
	*n = strtol(s, &end, 10);
	if (errno || end == s || *end || *n < 1 || *k < 1 || *k > *n)
		return -1;
	return 0;
}

enum {
	OPT_LIMIT = 256, OPT_BATCH, OPT_ANNOTATE, OPT_WEIGHTS_ONLY, OPT_MERGE,
	OPT_SHARD, OPT_THREADS, OPT_HIST_BITS, OPT_ANNOTATE_MODEL, OPT_SIZE,
	OPT_RESIZE, OPT_SHORT, OPT_PAD, OPT_SCALE, OPT_MEAN, OPT_STD, OPT_BGR,
	OPT_LAYOUT,
};

/* The image options, into o->prep: -1 to go on, else the exit status. */
static int
image_opt(struct opts *o, int c, const char *arg)
{
	struct err e;
	long v;
	int f;

	o->image_opts = 1;
	switch (c) {
	case OPT_SIZE:
		if (image_parse_size(arg, &o->prep.width, &o->prep.height,
		    &e) < 0)
			return cli_usage_error("--size: %s", e.msg);
		o->prep_set |= CALIB_PREP_SIZE;
		break;
	case OPT_RESIZE:
		if ((f = image_fit_from_name(arg)) < 0)
			return cli_usage_error("--resize: '%s' is not "
			    "stretch, fit, fit-topleft or crop", arg);
		o->prep.fit = f;
		break;
	case OPT_SHORT:
		if (cli_count("--short", arg, 1, 65536, &v))
			return 2;
		o->prep.short_side = (int)v;
		break;
	case OPT_PAD:
		if (image_parse_scale(arg, &o->prep.pad, &e) < 0)
			return cli_usage_error("--pad: %s", e.msg);
		break;
	case OPT_SCALE:
		if (image_parse_scale(arg, &o->prep.scale, &e) < 0)
			return cli_usage_error("--scale: %s", e.msg);
		break;
	case OPT_MEAN:
		if (image_parse_triple(arg, o->prep.mean, &e) < 0)
			return cli_usage_error("--mean: %s", e.msg);
		break;
	case OPT_STD:
		if (image_parse_triple(arg, o->prep.std, &e) < 0)
			return cli_usage_error("--std: %s", e.msg);
		for (int k = 0; k < 3; k++)
			if (o->prep.std[k] == 0)
				return cli_usage_error("--std: '%s' has a "
				    "zero", arg);
		break;
	case OPT_BGR:
		o->prep.bgr = 1;
		break;
	case OPT_LAYOUT:
		if (strcmp(arg, "nchw") == 0 || strcmp(arg, "NCHW") == 0)
			o->prep.layout = IMAGE_NCHW;
		else if (strcmp(arg, "nhwc") == 0 || strcmp(arg, "NHWC") == 0)
			o->prep.layout = IMAGE_NHWC;
		else
			return cli_usage_error("--layout: '%s' is not nchw "
			    "or nhwc", arg);
		o->prep_set |= CALIB_PREP_LAYOUT;
		break;
	}
	return -1;
}

/*
 * Fill o from the command line: -1 to go on, else the exit status (help,
 * version, usage mistakes, out of memory). o->dirs is the caller's to
 * free.
 */
static int
parse_args(struct opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "data", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "limit", required_argument, NULL, OPT_LIMIT },
		{ "batch", required_argument, NULL, OPT_BATCH },
		{ "shard", required_argument, NULL, OPT_SHARD },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "hist-bits", required_argument, NULL, OPT_HIST_BITS },
		{ "quiet", no_argument, NULL, 'q' },
		{ "annotate", no_argument, NULL, OPT_ANNOTATE },
		{ "annotate-model", required_argument, NULL,
		    OPT_ANNOTATE_MODEL },
		{ "size", required_argument, NULL, OPT_SIZE },
		{ "resize", required_argument, NULL, OPT_RESIZE },
		{ "short", required_argument, NULL, OPT_SHORT },
		{ "pad", required_argument, NULL, OPT_PAD },
		{ "scale", required_argument, NULL, OPT_SCALE },
		{ "mean", required_argument, NULL, OPT_MEAN },
		{ "std", required_argument, NULL, OPT_STD },
		{ "bgr", no_argument, NULL, OPT_BGR },
		{ "layout", required_argument, NULL, OPT_LAYOUT },
		{ "weights-only", no_argument, NULL, OPT_WEIGHTS_ONLY },
		{ "merge", no_argument, NULL, OPT_MERGE },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c, calib_opt = 0, r;
	long v;

	memset(o, 0, sizeof *o);
	o->out = "-";
	o->argc = argc;
	o->argv = argv;
	o->mbits = HIST_MBITS_DEFAULT;
	image_prep_init(&o->prep);
	if (!(o->dirs = calloc((size_t)argc + 1, sizeof *o->dirs))) {
		cli_warn("out of memory");
		return 1;
	}
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":d:o:qhV", longopts,
	    NULL)) != -1) {
		switch (c) {
		case 'd':
			o->dirs[o->ndirs++] = optarg;
			break;
		case 'o':
			o->out = optarg;
			break;
		case OPT_LIMIT:
			if (cli_count("--limit", optarg, 1, INT_MAX,
			    &o->limit))
				return 2;
			break;
		case OPT_BATCH:
			if (cli_count("--batch", optarg, 1, INT_MAX,
			    &o->batch))
				return 2;
			break;
		case OPT_SHARD:
			if (shard_arg(optarg, &o->shard_k, &o->shard_n) < 0)
				return cli_usage_error("--shard: '%s' is not "
				    "K/N with 1 <= K <= N", optarg);
			calib_opt = 1;
			break;
		case OPT_THREADS:
			if (cli_count("--threads", optarg, 1, CLI_THREADS_MAX,
			    &v))
				return 2;
			o->threads = (int)v;
			calib_opt = 1;
			break;
		case OPT_HIST_BITS:
			if (cli_count("--hist-bits", optarg, 0, HIST_MBITS_MAX,
			    &v))
				return 2;
			o->mbits = (int)v;
			calib_opt = 1;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case OPT_ANNOTATE:
			o->annotate = 1;
			break;
		case OPT_ANNOTATE_MODEL:
			o->annotate_model = optarg;
			calib_opt = 1;
			break;
		case OPT_SIZE: case OPT_RESIZE: case OPT_SHORT: case OPT_PAD:
		case OPT_SCALE: case OPT_MEAN: case OPT_STD: case OPT_BGR:
		case OPT_LAYOUT:
			if ((r = image_opt(o, c, optarg)) >= 0)
				return r;
			calib_opt = 1;
			break;
		case OPT_WEIGHTS_ONLY:
			o->weights_only = 1;
			break;
		case OPT_MERGE:
			o->merge = 1;
			break;
		default:
			if ((r = cli_default_option(c, argv, longopts)) < 0)
				return cli_close_stdout() < 0 ? 1 : 0;
			return r;
		}
	}
	o->args = argv + optind;
	o->nargs = argc - optind;
	if (o->weights_only && o->merge)
		return cli_usage_error("--weights-only and --merge exclude "
		    "each other");
	if ((o->weights_only || o->merge) && o->ndirs)
		return cli_usage_error("-d is not used with %s",
		    o->merge ? "--merge" : "--weights-only");
	if ((o->weights_only || o->merge) && (o->limit || o->batch))
		return cli_usage_error("--limit and --batch need -d");
	if ((o->weights_only || o->merge) && calib_opt)
		return cli_usage_error("the calibration options need -d");
	if (!o->weights_only && !o->merge && !o->ndirs)
		return cli_usage_error("no calibration data: give -d DIR (or "
		    "--weights-only, or --merge)");
	if (!o->merge && o->nargs > 1)
		return cli_usage_error("one model expected, got %d arguments",
		    o->nargs);
	if (o->annotate_model && strcmp(o->annotate_model, "-") == 0 &&
	    strcmp(o->out, "-") == 0)
		return cli_usage_error("--annotate-model -: the stream goes "
		    "to stdout already");
	return -1;
}

int
main(int argc, char **argv)
{
	struct opts o;
	struct err e;
	int rc;

	interp_reexec_bounded_spin(argv);
	cli_init(PROG, usage_text);
	if ((rc = parse_args(&o, argc, argv)) < 0) {
		outfile_cleanup_on_signals();
		rc = 0;
		if (run(&o, &e) < 0) {
			cli_warn("%s", e.msg);
			rc = 1;
		}
	}
	free(o.dirs);
	return rc;
}
