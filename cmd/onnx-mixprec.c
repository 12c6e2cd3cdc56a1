/*
 * onnx-mixprec: promote regions of a quantized model to another type
 * (16 bits, usually) by rewriting the qparam records of an onnxq stream
 * and adding convert records at the region edges (see onnx-mixprec(1),
 * lib/mixprec.h). The regions are the ones a YAML file names
 * (onnxq-regions(5)), or those a greedy search picks until the quantized
 * model reaches a target SNR or top-1 agreement on evaluation samples.
 *
 * The search. Candidates are the quantized activations, grouped with
 * those that round alike (data movement sharing the grid, Relu/Clip,
 * arithmetic with a constant). The fp32 outputs are computed once and
 * kept, and the samples ordered by how noisy the quantized model is on
 * them (the pooled SNR is theirs, mostly). Each candidate is measured
 * once, from the top: the noise at the "probes" (the outputs, or the
 * logits before a final Softmax, where noise adds up rather than
 * flipping classes) that leaving it alone in 8 bits adds to the model
 * with every other candidate promoted, on the two noisiest samples;
 * promoted alone in a chaotic 8-bit model, a tensor's effect is mostly
 * chance (see measure()). Candidates that remove noise go in a chain by
 * noise removed per unit of cost (elements promoted, weighted by the
 * extra bits), taken greedily in batches, each run on all the samples
 * and kept when the output noise goes down; the batch that meets the
 * target is cut back by halving. When that does not reach the target,
 * the candidates are measured again alone in the quantized model, and
 * the search goes again.
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "compare.h"
#include "dataset.h"
#include "infile.h"
#include "interp.h"
#include "mixprec.h"
#include "model.h"
#include "outfile.h"
#include "prep.h"
#include "progress.h"
#include "qdq.h"
#include "qparams.h"
#include "sha256.h"
#include "stream.h"
#include "tensor.h"

#define PROG		"onnx-mixprec"
/*
 * The noisiest samples that measure candidates and screen steps: the
 * pooled SNR is mostly theirs.
 */
#define HEAD		2

struct opts {
	const char	*model;		/* the fp32 model */
	const char	*regions;	/* -c: YAML file naming regions */
	const char	**dirs;		/* -d: evaluation data */
	int		 ndirs;
	const char	*out;		/* stream out, "-" stdout */
	double		 target_snr;	/* dB; NAN unless given */
	double		 target_agree;	/* %; NAN unless given */
	double		 budget;	/* % of elements; NAN: none */
	int		 allow_float;
	int		 type;		/* promotion type; DT_UNDEFINED: auto */
	int		 limit;		/* samples; 0: all */
	int		 threads;
	int		 verbose;
	int		 quiet;
	int		 argc;
	char		**argv;
};

static const char usage_text[] =
    "usage: onnx-mixprec [-v] [-o FILE] -c REGIONS.yaml MODEL\n"
    "       onnx-mixprec [-qv] [-o FILE] [--target-snr DB] "
    "[--target-agreement PCT]\n"
    "                    [--budget PCT] [--allow-float] [--type TYPE] "
    "[--limit N]\n"
    "                    [--threads N] -d EVAL_DIR [-d EVAL_DIR ...] MODEL\n";



static int
parse_number(const char *opt, const char *s, double lo, double hi, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	if (end == s || *end != '\0' || errno != 0 || !isfinite(*v) ||
	    *v < lo || *v > hi)
		return cli_usage_error("%s: '%s' is not a number in [%g, %g]", opt,
		    s, lo, hi);
	return 0;
}

/* Parse argv into o: 0 to go on, -1 when done (help), or exit status 2. */
static int
parse_args(struct opts *o, int argc, char **argv)
{
	enum { OPT_TARGET_SNR = 256, OPT_TARGET_AGREE, OPT_BUDGET,
	    OPT_ALLOW_FLOAT, OPT_TYPE, OPT_LIMIT, OPT_THREADS, OPT_HELP,
	    OPT_VERSION };
	static const struct option longopts[] = {
		{ "target-snr",	required_argument, NULL, OPT_TARGET_SNR },
		{ "target-agreement", required_argument, NULL, OPT_TARGET_AGREE },
		{ "budget",	required_argument, NULL, OPT_BUDGET },
		{ "allow-float", no_argument,	NULL, OPT_ALLOW_FLOAT },
		{ "type",	required_argument, NULL, OPT_TYPE },
		{ "limit",	required_argument, NULL, OPT_LIMIT },
		{ "threads",	required_argument, NULL, OPT_THREADS },
		{ "output",	required_argument, NULL, 'o' },
		{ "quiet",	no_argument,	NULL, 'q' },
		{ "verbose",	no_argument,	NULL, 'v' },
		{ "help",	no_argument,	NULL, OPT_HELP },
		{ "version",	no_argument,	NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 }
	};
	double x;
	int c, by_target;

	memset(o, 0, sizeof *o);
	o->out = "-";
	o->target_snr = o->target_agree = o->budget = NAN;
	o->argc = argc;
	o->argv = argv;
	if ((o->dirs = calloc((size_t)argc + 1, sizeof *o->dirs)) == NULL) {
		cli_warn("out of memory");
		return 1;
	}
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:d:o:qv", longopts, NULL)) !=
	    -1) {
		switch (c) {
		case 'c':
			o->regions = optarg;
			break;
		case 'd':
			o->dirs[o->ndirs++] = optarg;
			break;
		case 'o':
			o->out = optarg;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'v':
			o->verbose = 1;
			break;
		case OPT_TARGET_SNR:
			if (parse_number("--target-snr", optarg, -1000, 1000,
			    &o->target_snr))
				return 2;
			break;
		case OPT_TARGET_AGREE:
			if (parse_number("--target-agreement", optarg, 0, 100,
			    &o->target_agree))
				return 2;
			break;
		case OPT_BUDGET:
			if (parse_number("--budget", optarg, 0, 100, &o->budget))
				return 2;
			break;
		case OPT_ALLOW_FLOAT:
			o->allow_float = 1;
			break;
		case OPT_TYPE:
			if ((o->type = qparams_type_parse(optarg)) ==
			    DT_UNDEFINED)
				return cli_usage_error("--type: unknown type '%s' "
				    "(uint8, int8, uint16, int16, uint4, int4)",
				    optarg);
			break;
		case OPT_LIMIT:
			if (parse_number("--limit", optarg, 1, 1e9, &x))
				return 2;
			o->limit = (int)x;
			break;
		case OPT_THREADS:
			if (parse_number("--threads", optarg, 1, 1024, &x))
				return 2;
			o->threads = (int)x;
			break;
		case OPT_HELP:
			cli_usage(stdout);
			return -1;
		case OPT_VERSION:
			printf("%s %s\n", PROG, ONNXQ_VERSION);
			return -1;
		default:
			return cli_bad_option(c, argv, longopts);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc != 1)
		return cli_usage_error(argc ? "one MODEL, please" : "no MODEL");
	o->model = argv[0];
	if (strcmp(o->model, "-") == 0)
		return cli_usage_error("MODEL cannot be -: the stream comes on "
		    "standard input");
	by_target = !isnan(o->target_snr) || !isnan(o->target_agree);
	if ((o->regions != NULL) == by_target)
		return cli_usage_error("give either -c or --target-snr / "
		    "--target-agreement");
	if (by_target && o->ndirs == 0)
		return cli_usage_error("--target-snr and --target-agreement need "
		    "-d EVAL_DIR");
	if (!by_target && (o->ndirs || !isnan(o->budget) || o->allow_float ||
	    o->type || o->limit || o->threads))
		return cli_usage_error("-d, --budget, --allow-float, --type, "
		    "--limit and --threads go with --target-snr or "
		    "--target-agreement");
	if (strcmp(o->model, "-") == 0)
		return cli_usage_error("MODEL cannot be the standard input (the "
		    "stream is)");
	return 0;
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
print_note(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "%s: note: %s\n", PROG, msg);
}

static void
print_msgs(const struct config_msgs *m)
{
	for (size_t i = 0; i < m->n; i++)
		fprintf(stderr, "%s: %s\n", PROG, m->v[i]);
	if (m->dropped)
		fprintf(stderr, "%s: ... and %zu more\n", PROG, m->dropped);
}

static void
print_summary(const struct mixprec *mp, const char *what)
{
	struct mixprec_summary s;

	mixprec_summarize(mp, &s);
	fprintf(stderr, "%s: %s: %d of %d tensors promoted, %d left in float "
	    "(%.2f%% of the elements); %d converts; %d bias scales "
	    "recomputed, %d weight scales raised\n", PROG, what, s.promoted,
	    s.tensors, s.floated, s.elems > 0 ? 100 * s.elems_promoted /
	    s.elems : 0.0, s.converts, s.biases, s.weights);
}

/* The stream as resolved, to a file. */
static int
write_out(const struct opts *o, const struct mixprec *mp, struct err *e)
{
	struct mixprec_write_opts wo = { 0 };
	struct stream_writer *w;
	struct outfile *of;

	if ((of = outfile_open(o->out, e)) == NULL)
		return -1;
	if ((w = stream_writer_new(outfile_fp(of),
	    strcmp(o->out, "-") == 0 ? "<stdout>" : o->out)) == NULL) {
		outfile_abort(of);
		return err_nomem(e);
	}
	wo.prog = PROG;
	wo.version = ONNXQ_VERSION;
	wo.argc = o->argc;
	wo.argv = o->argv;
	if (mixprec_write(mp, w, &wo, e) < 0 || stream_write_end(w, e) < 0) {
		stream_writer_free(w);
		outfile_abort(of);
		return -1;
	}
	stream_writer_free(w);
	return outfile_commit(of, e);
}

/* By hand: the regions of a YAML file. */
static int
by_hand(const struct opts *o, struct mixprec *mp, struct err *e)
{
	struct mixprec_regions *rg;
	struct config_msgs msgs = { 0 };
	long problems;

	if ((rg = mixprec_regions_load(o->regions, &msgs, e)) == NULL) {
		if (msgs.n > 1)
			print_msgs(&msgs);
		config_msgs_release(&msgs);
		return -1;
	}
	if (mixprec_request_regions(mp, rg, &msgs) > 0 ||
	    (problems = mixprec_resolve(mp, &msgs, e)) != 0) {
		if (msgs.n > 0) {
			print_msgs(&msgs);
			err_set(e, "%s: %zu problem%s", o->regions,
			    msgs.n + msgs.dropped, msgs.n + msgs.dropped == 1 ?
			    "" : "s");
		}
		config_msgs_release(&msgs);
		mixprec_regions_free(rg);
		return -1;
	}
	mixprec_regions_free(rg);
	if (o->verbose)
		print_summary(mp, o->regions);
	return write_out(o, mp, e);
}

/* By target. */

/*
 * The evaluation data and the fp32 outputs, computed once. Besides the
 * outputs, the noise is measured on "probes": each output, or the input
 * of the Softmax that writes it (whose logits add noise up, where the
 * probabilities saturate and flip).
 */
struct evaldata {
	const struct opts *o;
	const void *mbuf;	/* the fp32 model's bytes */
	size_t mlen;
	const char *mdir;
	int nsamples;
	int ninputs, noutputs;
	char **out_names;
	char **probe_names;	/* noutputs */
	char **probe_nodes;	/* the Softmax writing the output, or NULL */
	struct tensor *inputs;	/* nsamples * ninputs */
	struct tensor *ref;	/* nsamples * noutputs */
	struct tensor *probe_ref;	/* nsamples * noutputs */
	int classifier;		/* some output is classifier-like */
	int *order;		/* samples, the noisiest first (see rank_samples) */
	double *signal;		/* each output's sum of squares, all samples */
	double *sample_noise;	/* each sample's squared error, last run */
	int runs;		/* quantized models run so far */
	double run_time;
};

/* How good one quantized model is. */
struct score {
	double snr;		/* the worst output's pooled SNR, dB */
	double agree;		/* top-1 agreement over classifier outputs, %; NaN */
	double noise;		/* sum over outputs of noise / signal */
	double pnoise;		/* the same over the probes */
	int samples;		/* samples run */
	double head;		/* the noise after the HEAD noisiest samples */
};

/* What the observe callbacks need. */
struct watch {
	struct evaldata *ev;
	int sample;
	struct compare *cmp;	/* noutputs: compare with probe_ref; NULL: keep */
	const char **names;	/* the probes' names in the model run */
};

static void
evaldata_release(struct evaldata *ev)
{
	for (int i = 0; i < ev->nsamples * ev->ninputs; i++)
		tensor_release(&ev->inputs[i]);
	for (int i = 0; i < ev->nsamples * ev->noutputs; i++) {
		tensor_release(&ev->ref[i]);
		if (ev->probe_ref)
			tensor_release(&ev->probe_ref[i]);
	}
	for (int i = 0; i < ev->noutputs; i++) {
		if (ev->out_names)
			free(ev->out_names[i]);
		if (ev->probe_names)
			free(ev->probe_names[i]);
		if (ev->probe_nodes)
			free(ev->probe_nodes[i]);
	}
	free(ev->probe_nodes);
	free(ev->inputs);
	free(ev->ref);
	free(ev->probe_ref);
	free(ev->order);
	free(ev->signal);
	free(ev->sample_noise);
	free(ev->out_names);
	free(ev->probe_names);
}

/* Keep (fp32 run) or compare (quantized run) the probes. */
static int
watch_probe(void *ctx, const char *name, const struct tensor *t,
    struct err *e)
{
	struct watch *w = ctx;
	struct evaldata *ev = w->ev;

	for (int k = 0; k < ev->noutputs; k++) {
		struct tensor *ref = &ev->probe_ref[w->sample * ev->noutputs + k];

		if (strcmp(name, w->names[k]) != 0)
			continue;
		if (w->cmp)
			compare_add(&w->cmp[k], t, ref, w->sample);
		else if (ref->data == NULL && tensor_copy(ref, t, e) < 0)
			return -1;
	}
	return 0;
}

/*
 * The probe of each graph output of m: the output, or the input of the
 * named Softmax that writes it (found by its name in the quantized model,
 * where it reads a DequantizeLinear).
 */
static int
find_probes(struct evaldata *ev, const struct model *m, struct err *e)
{
	const Onnx__GraphProto *g = m->proto->graph;

	if ((ev->probe_names = calloc((size_t)ev->noutputs + 1,
	    sizeof *ev->probe_names)) == NULL ||
	    (ev->probe_nodes = calloc((size_t)ev->noutputs + 1,
	    sizeof *ev->probe_nodes)) == NULL)
		return err_nomem(e);
	for (int k = 0; k < ev->noutputs; k++) {
		const char *name = ev->out_names[k];

		for (size_t i = 0; i < g->n_node; i++) {
			const Onnx__NodeProto *n = g->node[i];

			if (n->n_output < 1 || strcmp(n->output[0], name) != 0 ||
			    strcmp(n->op_type, "Softmax") != 0 ||
			    (n->domain && n->domain[0] != '\0') ||
			    n->n_input < 1 || n->input[0][0] == '\0' ||
			    n->name == NULL || n->name[0] == '\0')
				continue;
			if ((ev->probe_nodes[k] = strdup(n->name)) == NULL)
				return err_nomem(e);
			name = n->input[0];
			break;
		}
		if ((ev->probe_names[k] = strdup(name)) == NULL)
			return err_nomem(e);
	}
	return 0;
}

/* The probes' names in model m (names[k] points into m or ev). */
static void
probes_in(const struct evaldata *ev, const struct model *m,
    const char **names)
{
	const Onnx__GraphProto *g = m->proto->graph;

	for (int k = 0; k < ev->noutputs; k++) {
		names[k] = ev->probe_names[k];
		if (ev->probe_nodes[k] == NULL)
			continue;
		for (size_t i = 0; i < g->n_node; i++)
			if (g->node[i]->name && strcmp(g->node[i]->name,
			    ev->probe_nodes[k]) == 0 && g->node[i]->n_input > 0)
				names[k] = g->node[i]->input[0];
	}
}

static int
evaldata_init(struct evaldata *ev, const struct opts *o, const void *mbuf,
    size_t mlen, const char *mdir, struct err *e)
{
	struct watch w = { ev, 0, NULL, NULL };
	struct interp_opts io = { .threads = o->threads,
	    .observe = watch_probe, .observe_ctx = &w };
	const char **in_names = NULL;
	int *in_dtypes = NULL;
	struct dataset_spec spec;
	struct dataset *ds = NULL;
	struct interp *ip = NULL;
	struct model *m = NULL;
	int64_t dims[TENSOR_MAX_RANK];
	int rank, rc = -1;
	size_t n;

	memset(ev, 0, sizeof *ev);
	ev->o = o;
	ev->mbuf = mbuf;
	ev->mlen = mlen;
	ev->mdir = mdir;
	if ((m = model_load_mem(mbuf, mlen, o->model, mdir, e)) == NULL ||
	    (ds = dataset_open(o->dirs, o->ndirs, e)) == NULL)
		goto out;
	ev->noutputs = (int)m->proto->graph->n_output;
	if ((ev->out_names = calloc((size_t)ev->noutputs + 1,
	    sizeof *ev->out_names)) == NULL) {
		err_nomem(e);
		goto out;
	}
	for (int k = 0; k < ev->noutputs; k++)
		if ((ev->out_names[k] = strdup(
		    m->proto->graph->output[k]->name)) == NULL) {
			err_nomem(e);
			goto out;
		}
	if (find_probes(ev, m, e) < 0)
		goto out;
	w.names = (const char **)ev->probe_names;
	if ((ip = interp_new(m, &io, e)) == NULL)
		goto out;
	if (interp_noutputs(ip) != ev->noutputs) {
		err_set(e, "%s: %d outputs, %d in the graph", o->model,
		    interp_noutputs(ip), ev->noutputs);
		goto out;
	}
	ev->ninputs = interp_ninputs(ip);
	ev->nsamples = dataset_count(ds);
	if (o->limit > 0 && ev->nsamples > o->limit)
		ev->nsamples = o->limit;
	n = (size_t)ev->nsamples * (size_t)ev->noutputs + 1;
	in_names = calloc((size_t)ev->ninputs + 1, sizeof *in_names);
	in_dtypes = calloc((size_t)ev->ninputs + 1, sizeof *in_dtypes);
	ev->inputs = calloc((size_t)(ev->nsamples * ev->ninputs) + 1,
	    sizeof *ev->inputs);
	ev->ref = calloc(n, sizeof *ev->ref);
	ev->probe_ref = calloc(n, sizeof *ev->probe_ref);
	ev->order = calloc((size_t)ev->nsamples + 1, sizeof *ev->order);
	ev->signal = calloc((size_t)ev->noutputs + 1, sizeof *ev->signal);
	ev->sample_noise = calloc((size_t)ev->nsamples + 1,
	    sizeof *ev->sample_noise);
	if (!in_names || !in_dtypes || !ev->inputs || !ev->ref ||
	    !ev->probe_ref || !ev->order || !ev->signal ||
	    !ev->sample_noise) {
		err_nomem(e);
		goto out;
	}
	for (int i = 0; i < ev->ninputs; i++) {
		in_names[i] = interp_input_name(ip, i);
		in_dtypes[i] = interp_input_type(ip, i, &rank, dims);
	}
	spec.ninputs = ev->ninputs;
	spec.input_names = in_names;
	spec.input_dtypes = in_dtypes;
	spec.noutputs = 0;
	spec.output_names = NULL;
	for (int s = 0; s < ev->nsamples; s++) {
		struct tensor *in = &ev->inputs[s * ev->ninputs];
		struct tensor *ref = &ev->ref[s * ev->noutputs];

		ev->order[s] = s;
		w.sample = s;
		if (dataset_load(ds, s, &spec, in, NULL, e) < 0)
			goto out;
		if (interp_run(ip, in, ref, e) < 0) {
			err_prefix(e, "%s: %s", dataset_sample_name(ds, s),
			    o->model);
			goto out;
		}
		for (int k = 0; k < ev->noutputs; k++) {
			struct compare c;

			compare_init(&c);
			compare_add(&c, &ref[k], &ref[k], s);
			ev->signal[k] += c.signal;
			if (compare_is_classifier(&ref[k]))
				ev->classifier = 1;
			if (ev->probe_ref[s * ev->noutputs + k].data == NULL &&
			    tensor_copy(&ev->probe_ref[s * ev->noutputs + k],
			    &ref[k], e) < 0)
				goto out;
		}
	}
	rc = 0;
out:
	free(in_names);
	free(in_dtypes);
	dataset_free(ds);
	interp_free(ip);
	model_free(m);
	return rc;
}

/* Noise over signal power; infinite when anything went wrong. */
static double
relative_noise(const struct compare *c)
{
	if (c->nonfinite > 0 || c->nmismatch > 0 || c->samples == 0)
		return INFINITY;
	if (c->signal > 0)
		return c->noise / c->signal;
	return c->noise > 0 ? INFINITY : 0;
}

/* The stream of mp's current result, as a qdq plan. */
static struct qdq_plan *
plan_of(const struct mixprec *mp, const struct mixprec_write_opts *wo,
    struct err *e)
{
	struct stream_writer *w = NULL;
	struct stream_reader *r = NULL;
	struct qdq_plan *p = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *fp;

	if ((fp = open_memstream(&buf, &len)) == NULL) {
		err_errno(e, "open_memstream");
		return NULL;
	}
	if ((w = stream_writer_new(fp, "<memory>")) == NULL) {
		err_nomem(e);
		fclose(fp);
		goto out;
	}
	if (mixprec_write(mp, w, wo, e) < 0 || stream_write_end(w, e) < 0) {
		fclose(fp);
		goto out;
	}
	if (fclose(fp) != 0) {
		err_errno(e, "<memory>");
		goto out;
	}
	if ((fp = fmemopen(buf, len, "r")) == NULL) {
		err_errno(e, "fmemopen");
		goto out;
	}
	if ((r = stream_reader_new(fp, "<memory>", e)) == NULL) {
		fclose(fp);
		goto out;
	}
	if ((p = qdq_plan_new()) == NULL)
		err_nomem(e);
	else if (qdq_plan_read(p, r, e) < 0) {
		qdq_plan_free(p);
		p = NULL;
	}
	stream_reader_free(r);
	fclose(fp);
out:
	stream_writer_free(w);
	free(buf);
	return p;
}

/*
 * Run the QDQ model of mp's current result on the first nsamples samples
 * (0: all; in the order of ev->order) and compare with the fp32 outputs.
 * On all the samples, the run stops as soon as the noise (which only
 * grows, sample after sample, the signal being the fp32 outputs') passes
 * `stop`, or after the HEAD noisiest samples passes `head_stop`:
 * sc->samples says how many were run, sc->noise is then a lower bound
 * and the rest of sc is not set. sc->head is the noise after HEAD
 * samples.
 */
static int
evaluate(struct evaldata *ev, const struct mixprec *mp, int nsamples,
    double stop, double head_stop, struct score *sc, struct err *e)
{
	struct mixprec_write_opts wo = { .skip_hist = 1 };
	struct qdq_opts qo = { .domain = QDQ_DOMAIN_AUTO };
	struct watch w = { ev, 0, NULL, NULL };
	struct interp_opts io = { .threads = ev->o->threads,
	    .observe = watch_probe, .observe_ctx = &w };
	struct compare *cmp = NULL, *pcmp = NULL, top1;
	const char **names = NULL;
	struct qdq_plan *plan = NULL;
	struct interp *ip = NULL;
	struct model *m = NULL;
	struct tensor *out = NULL;
	int *pos = NULL, nout = 0, rc = -1;
	double t0 = now();

	if (nsamples <= 0 || nsamples > ev->nsamples)
		nsamples = ev->nsamples;
	if ((plan = plan_of(mp, &wo, e)) == NULL)
		return -1;
	if ((names = calloc((size_t)ev->noutputs + 1, sizeof *names)) == NULL) {
		err_nomem(e);
		goto out;
	}
	if ((m = model_load_mem(ev->mbuf, ev->mlen, ev->o->model, ev->mdir,
	    e)) == NULL || prep_model(m, NULL, e) < 0 ||
	    qdq_apply(m, plan, &qo, NULL, e) < 0)
		goto out;
	probes_in(ev, m, names);
	w.names = names;
	if ((ip = interp_new(m, &io, e)) == NULL)
		goto out;
	nout = interp_noutputs(ip);
	cmp = calloc((size_t)ev->noutputs + 1, sizeof *cmp);
	pcmp = calloc((size_t)ev->noutputs + 1, sizeof *pcmp);
	pos = calloc((size_t)ev->noutputs + 1, sizeof *pos);
	out = calloc((size_t)nout + 1, sizeof *out);
	if (!cmp || !pcmp || !pos || !out) {
		err_nomem(e);
		goto out;
	}
	w.cmp = pcmp;
	for (int k = 0; k < ev->noutputs; k++) {
		compare_init(&cmp[k]);
		compare_init(&pcmp[k]);
		pos[k] = -1;
		for (int j = 0; j < nout; j++)
			if (strcmp(interp_output_name(ip, j),
			    ev->out_names[k]) == 0)
				pos[k] = j;
		if (pos[k] < 0) {
			err_set(e, "the quantized model has no output %s",
			    ev->out_names[k]);
			goto out;
		}
	}
	compare_init(&top1);
	sc->samples = 0;
	for (int i = 0; i < nsamples; i++) {
		int s = ev->order[i];
		double before = 0, partial = 0;

		w.sample = s;
		if (interp_run(ip, &ev->inputs[s * ev->ninputs], out, e) < 0)
			goto out;
		for (int k = 0; k < ev->noutputs; k++)
			before += cmp[k].noise;
		for (int k = 0; k < ev->noutputs; k++) {
			const struct tensor *ref = &ev->ref[s * ev->noutputs + k];

			compare_add(&cmp[k], &out[pos[k]], ref, s);
			if (compare_is_classifier(ref))
				compare_add_top1(&top1, &out[pos[k]], ref, NULL,
				    0);
		}
		ev->sample_noise[s] = -before;
		for (int k = 0; k < ev->noutputs; k++) {
			ev->sample_noise[s] += cmp[k].noise;
			partial += ev->signal[k] > 0 ? cmp[k].noise /
			    ev->signal[k] : cmp[k].noise > 0 ? INFINITY : 0;
			if (cmp[k].nonfinite > 0 || cmp[k].nmismatch > 0)
				partial = INFINITY;
		}
		for (int j = 0; j < nout; j++)
			tensor_release(&out[j]);
		sc->samples = i + 1;
		if (i + 1 == HEAD || i + 1 == nsamples)
			sc->head = partial;
		if (nsamples == ev->nsamples && (partial > stop ||
		    (i + 1 == HEAD && partial > head_stop))) {
			sc->noise = partial;
			rc = 0;
			goto out;
		}
	}
	sc->snr = INFINITY;
	sc->noise = sc->pnoise = 0;
	for (int k = 0; k < ev->noutputs; k++) {
		double snr = compare_snr(&cmp[k]);

		if (snr < sc->snr || isnan(snr))
			sc->snr = snr;
		sc->noise += relative_noise(&cmp[k]);
		sc->pnoise += relative_noise(&pcmp[k]);
	}
	sc->agree = compare_agreement(&top1);
	rc = 0;
out:
	ev->runs++;
	ev->run_time += now() - t0;
	if (out)
		for (int j = 0; j < nout; j++)
			tensor_release(&out[j]);
	free(out);
	free(cmp);
	free(pcmp);
	free(pos);
	interp_free(ip);
	free(names);
	model_free(m);
	qdq_plan_free(plan);
	return rc;
}

/* A candidate: tensors quantized together (sharing parameters). */
struct cand {
	int *t;			/* tensors */
	int nt;
	int to_float;		/* their producers left in float instead */
	int twin;		/* the other variant of the same tensors, -1 */
	char *label;		/* "conv5_out", "reshape_3 (+2)" */
	double gain;		/* output noise it removes, alone */
	double cost;		/* extra bits per sample / 8, alone */
	double score;
	int usable;
};

struct search {
	const struct opts *o;
	struct mixprec *mp;
	struct evaldata *ev;
	struct mixprec_type t16, tfloat;
	struct cand *c;
	int nc;
	int *chain;		/* usable candidates by score */
	int nchain;
	int alone;		/* measure candidates alone, not from the top */
};

static int
find_root(int *parent, int i)
{
	while (parent[i] != i) {
		parent[i] = parent[parent[i]];
		i = parent[i];
	}
	return i;
}

/*
 * A node whose one quantized input and one quantized output round alike:
 * Relu, Clip, and Add, Sub, Mul, Div with a constant.
 */
static int
passes_rounding(const struct mixprec *mp, int n, int *in, int *out)
{
	static const char *const unary[] = { "Relu", "Clip" };
	static const char *const arith[] = { "Add", "Sub", "Mul", "Div" };
	const char *op = mixprec_node_op(mp, n);
	const int *v;
	int k = mixprec_node_tensors(mp, n, &v), nin = 0, nout = 0, ok = 0;

	for (size_t i = 0; i < 2; i++)
		ok |= strcmp(op, unary[i]) == 0;
	for (size_t i = 0; i < 4; i++)
		ok |= strcmp(op, arith[i]) == 0;
	if (!ok)
		return 0;
	for (int i = 0; i < k; i++) {
		if (!mixprec_tensor_quantized(mp, v[i]))
			continue;
		if (mixprec_tensor_producer(mp, v[i]) == n) {
			*out = v[i];
			nout++;
		} else {
			*in = v[i];
			nin++;
		}
	}
	if (nin != 1 || nout != 1)
		return 0;
	/* The other inputs of arithmetic must be constants. */
	k = mixprec_node_inputs(mp, n, &v);
	for (int i = 0; i < k; i++)
		if (v[i] >= 0 && v[i] != *in && !mixprec_tensor_constant(mp, v[i]))
			return 0;
	return 1;
}

/* The quantized activation groups: a tensor and those sharing its grid. */
static int
make_candidates(struct search *S, struct err *e)
{
	struct mixprec *mp = S->mp;
	int nt = mixprec_ntensors(mp), *parent, *root_cand, rc = -1;

	parent = calloc((size_t)nt + 1, sizeof *parent);
	root_cand = calloc((size_t)nt + 1, sizeof *root_cand);
	S->c = calloc(2 * (size_t)nt + 1, sizeof *S->c);
	if (!parent || !root_cand || !S->c) {
		err_nomem(e);
		goto out;
	}
	for (int i = 0; i < nt; i++) {
		parent[i] = i;
		root_cand[i] = -1;
	}
	/*
	 * Tensors a data-movement node passes through keep their source's
	 * grid: promoting one without the other changes nothing.
	 */
	for (int i = 0; i < nt; i++) {
		int src = mixprec_tensor_shared_from(mp, i);

		if (src >= 0)
			parent[find_root(parent, i)] = find_root(parent, src);
	}
	/*
	 * Likewise across Relu and Clip (whose input takes the output's
	 * range) and across arithmetic with a constant (a scale, a shift):
	 * the second rounding repeats the first, so only both together
	 * gain anything.
	 */
	for (int n = 0; n < mixprec_nnodes(mp); n++) {
		int in = -1, out = -1;

		if (!passes_rounding(mp, n, &in, &out))
			continue;
		parent[find_root(parent, out)] = find_root(parent, in);
	}
	for (int i = 0; i < nt; i++) {
		struct cand *c;
		int r, *nv;

		if (!mixprec_tensor_quantized(mp, i))
			continue;
		r = find_root(parent, i);
		if (root_cand[r] < 0) {
			root_cand[r] = S->nc;
			S->c[S->nc].twin = -1;
			S->nc++;
		}
		c = &S->c[root_cand[r]];
		if ((nv = realloc(c->t, ((size_t)c->nt + 1) *
		    sizeof *c->t)) == NULL) {
			err_nomem(e);
			goto out;
		}
		c->t = nv;
		c->t[c->nt++] = i;
	}
	/* Float variants: the producers left in float. */
	if (S->o->allow_float) {
		int n = S->nc;

		for (int i = 0; i < n; i++) {
			struct cand *c = &S->c[S->nc];

			*c = S->c[i];
			if ((c->t = malloc((size_t)c->nt * sizeof *c->t)) ==
			    NULL) {
				err_nomem(e);
				goto out;
			}
			memcpy(c->t, S->c[i].t, (size_t)c->nt * sizeof *c->t);
			c->to_float = 1;
			c->twin = i;
			S->c[i].twin = S->nc;
			S->nc++;
		}
	}
	for (int i = 0; i < S->nc; i++) {
		struct cand *c = &S->c[i];
		const char *name = mixprec_tensor_name(mp, c->t[0]);
		size_t n = strlen(name) + 48;

		if ((c->label = malloc(n)) == NULL) {
			err_nomem(e);
			goto out;
		}
		if (c->nt > 1)
			snprintf(c->label, n, "%s (+%d%s)", name, c->nt - 1,
			    c->to_float ? ", float" : "");
		else
			snprintf(c->label, n, "%s%s", name, c->to_float ?
			    " (float)" : "");
	}
	rc = 0;
out:
	free(parent);
	free(root_cand);
	return rc;
}

/* Request one candidate; -1 when it conflicts with what is requested. */
static int
request_cand(struct search *S, const struct cand *c, struct config_msgs *m)
{
	struct mixprec *mp = S->mp;
	int rc = 0;

	for (int i = 0; i < c->nt; i++) {
		int t = c->t[i], p = mixprec_tensor_producer(mp, t), f;

		if (c->to_float) {
			if (p < 0)
				continue;	/* a graph input stays quantized */
			if (mixprec_request_node(mp, p, &S->tfloat, c->label,
			    m) < 0)
				rc = -1;
			if ((f = mixprec_node_fold_partner(mp, p)) >= 0 &&
			    mixprec_request_node(mp, f, &S->tfloat, c->label,
			    m) < 0)
				rc = -1;
			continue;
		}
		if (mixprec_request_tensor(mp, t, &S->t16, c->label, m) < 0)
			rc = -1;
		/* A Relu/Clip folded into its producer goes with it. */
		if (p >= 0 && (f = mixprec_node_fold_partner(mp, p)) >= 0 &&
		    mixprec_request_node(mp, f, &S->t16, c->label, m) < 0)
			rc = -1;
	}
	return rc;
}

/*
 * Resolve the candidates v[0..n) (and extra, unless -1). 0, or 1 when
 * they do not go together; -1 on error.
 */
static int
setup(struct search *S, const int *v, int n, int extra, struct err *e)
{
	struct config_msgs m = { 0 };
	long problems;
	int bad = 0;

	mixprec_clear(S->mp);
	for (int i = 0; i < n; i++)
		if (request_cand(S, &S->c[v[i]], &m) < 0)
			bad = 1;
	if (extra >= 0 && request_cand(S, &S->c[extra], &m) < 0)
		bad = 1;
	if (!bad) {
		if ((problems = mixprec_resolve(S->mp, &m, e)) < 0) {
			config_msgs_release(&m);
			return -1;
		}
		bad = problems > 0;
	}
	if (bad && S->o->verbose && extra >= 0)
		for (size_t i = 0; i < m.n; i++)
			fprintf(stderr, "%s: candidate %s left out: %s\n", PROG,
			    S->c[extra].label, m.v[i]);
	config_msgs_release(&m);
	return bad;
}

static double
share_of(const struct mixprec_summary *s)
{
	return s->elems > 0 ? 100 * s->elems_promoted / s->elems : 0;
}

static int
target_met(const struct opts *o, const struct score *sc)
{
	if (!isnan(o->target_snr) && !(sc->snr >= o->target_snr))
		return 0;
	if (!isnan(o->target_agree) && !(sc->agree >= o->target_agree))
		return 0;
	return 1;
}

static void
print_score(FILE *fp, const struct score *sc)
{
	fprintf(fp, "snr %.2f dB", sc->snr);
	if (!isnan(sc->agree))
		fprintf(fp, ", top-1 agreement %.2f%%", sc->agree);
}

static int
cmp_score(const void *a, const void *b)
{
	const struct cand *x = *(struct cand *const *)a;
	const struct cand *y = *(struct cand *const *)b;

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return x < y ? -1 : x > y;
}

/*
 * What each candidate buys, and what it costs in elements. The 8-bit
 * model can be chaotic (PaddleOCR's recognizer is: a rounding flip early
 * grows to most of the elements later, and runtimes that round ties
 * differently give different outputs), so what promoting one tensor
 * alone does there is mostly chance. So a candidate's gain is measured
 * from the other end, where rounding does not cascade: the noise at the
 * probes that leaving it alone in 8 bits adds to the model with every
 * other candidate promoted, on the first nprobe samples (the noisiest).
 * Its float variant removes the same noise, at its own cost. When all
 * candidates together do not go together, each is measured alone in the
 * quantized model instead (probe noise `base` there).
 */
static int
measure(struct search *S, int nprobe, double base, struct err *e)
{
	struct mixprec *mp = S->mp;
	struct mixprec_summary sum;
	struct progress bar;
	struct score sc, top;
	int *others, n16 = 0, bad, from_top;

	if ((others = calloc((size_t)S->nc + 1, sizeof *others)) == NULL)
		return err_nomem(e);
	for (int i = 0; i < S->nc; i++)
		if (!S->c[i].to_float)
			others[n16++] = i;
	bad = 1;
	if (!S->alone && ((bad = setup(S, others, n16, -1, e)) < 0 ||
	    (!bad && evaluate(S->ev, mp, nprobe, INFINITY, INFINITY, &top,
	    e) < 0))) {
		free(others);
		return -1;
	}
	from_top = !bad;
	if (!S->o->quiet && from_top) {
		fprintf(stderr, "%s: all candidates promoted, on the %d "
		    "noisiest samples: %.2f dB at the probes\n", PROG, nprobe,
		    -10 * log10(top.pnoise));
	}
	progress_init(&bar, stderr, progress_wanted(stderr, S->o->quiet),
	    PROG, "candidates", S->nc);
	for (int i = 0; i < S->nc; i++) {
		struct cand *c = &S->c[i];
		int k = 0;

		progress_update(&bar, i);
		c->usable = 0;
		if ((bad = setup(S, NULL, 0, i, e)) < 0)
			goto fail;
		mixprec_summarize(mp, &sum);
		c->cost = sum.cost;
		if (bad || !(c->cost > 0) || (!isnan(S->o->budget) &&
		    share_of(&sum) > S->o->budget))
			continue;
		if (from_top && c->to_float) {
			c->gain = S->c[c->twin].gain;
		} else if (from_top) {
			for (int j = 0; j < S->nc; j++)
				if (!S->c[j].to_float && j != i)
					others[k++] = j;
			if ((bad = setup(S, others, k, -1, e)) < 0)
				goto fail;
			if (bad || evaluate(S->ev, mp, nprobe, INFINITY,
			    INFINITY, &sc, e) < 0)
				goto fail;
			c->gain = sc.pnoise - top.pnoise;
		} else {
			if (evaluate(S->ev, mp, nprobe, INFINITY, INFINITY, &sc,
			    e) < 0)
				goto fail;
			c->gain = base - sc.pnoise;
		}
		c->usable = c->gain > 0 && isfinite(c->gain);
		c->score = c->usable ? c->gain / c->cost : 0;
		if (S->o->verbose) {
			progress_clear(&bar);
			fprintf(stderr, "%s: candidate %s: removes %.3g of the "
			    "probe noise, cost %.0f%s\n", PROG, c->label,
			    c->gain, c->cost, c->usable ? "" : " (no gain)");
		}
	}
	progress_end(&bar);
	free(others);
	return 0;
fail:
	if (bad > 0)
		err_set(e, "the candidates conflict");
	progress_end(&bar);
	free(others);
	return -1;
}

/*
 * The usable candidates by noise removed per unit of cost, each kept when
 * it goes with those before it (the float and 16-bit variants of a
 * tensor do not) and the budget allows.
 */
static int
make_chain(struct search *S, struct err *e)
{
	struct mixprec_summary sum;
	struct cand **order;
	int n = 0, bad;

	if ((order = calloc((size_t)S->nc + 1, sizeof *order)) == NULL ||
	    (S->chain = calloc((size_t)S->nc + 1, sizeof *S->chain)) == NULL) {
		free(order);
		return err_nomem(e);
	}
	for (int i = 0; i < S->nc; i++)
		if (S->c[i].usable)
			order[n++] = &S->c[i];
	qsort(order, (size_t)n, sizeof *order, cmp_score);
	for (int i = 0; i < n; i++) {
		int ci = (int)(order[i] - S->c);

		if ((bad = setup(S, S->chain, S->nchain, ci, e)) < 0) {
			free(order);
			return -1;
		}
		mixprec_summarize(S->mp, &sum);
		if (bad || (!isnan(S->o->budget) &&
		    share_of(&sum) > S->o->budget))
			continue;
		S->chain[S->nchain++] = ci;
	}
	free(order);
	return 0;
}

static void
print_share(const struct mixprec_summary *sum)
{
	fprintf(stderr, "; %d tensors promoted, %d in float, %.2f%% of the "
	    "elements\n", sum->promoted, sum->floated, share_of(sum));
}

/* Print an accepted step: the candidates chain[from..to). */
static void
print_step(const struct search *S, int step, int from, int to,
    const struct score *sc, const struct mixprec_summary *sum)
{
	int shown = 0, max = S->o->verbose ? to - from : 6;

	fprintf(stderr, "%s: step %d: %s %d (", PROG, step,
	    to - from == 1 && S->c[S->chain[from]].to_float ?
	    "left in float" : "promoted", to - from);
	for (int i = from; i < to && shown < max; i++, shown++)
		fprintf(stderr, "%s%s", shown ? ", " : "",
		    S->c[S->chain[i]].label);
	if (to - from > shown)
		fprintf(stderr, ", ...");
	fprintf(stderr, "): ");
	print_score(stderr, sc);
	print_share(sum);
}

/*
 * A batch of *b candidates (taken[n..n + *b)) reached the target: the
 * fewest of them, from the first, that do too (halving), with their
 * score in *sc. Each run is a step.
 */
static int
trim(struct search *S, struct evaldata *ev, const int *taken, int n,
    int *b, struct score *sc, int *step, struct err *e)
{
	struct mixprec_summary sum;
	struct score t;
	int lo = 0, hi = *b;

	while (hi - lo > 1) {
		int mid = lo + (hi - lo) / 2;

		if (setup(S, taken, n + mid, -1, e) != 0)
			return err_set(e, "the chosen candidates conflict");
		if (evaluate(ev, S->mp, 0, INFINITY, INFINITY, &t, e) < 0)
			return -1;
		mixprec_summarize(S->mp, &sum);
		if (!S->o->quiet) {
			fprintf(stderr, "%s: step %d: the first %d of those: ",
			    PROG, ++*step, mid);
			print_score(stderr, &t);
			print_share(&sum);
		}
		if (target_met(S->o, &t)) {
			hi = mid;
			*sc = t;
		} else
			lo = mid;
	}
	*b = hi;
	return 0;
}

/*
 * The noisiest samples first, after a run of all of them: the pooled SNR
 * is theirs, mostly, so a few of them stand for all. (Insertion sort,
 * stable: sample sets are small.)
 */
static void
rank_samples(struct evaldata *ev)
{
	for (int i = 1; i < ev->nsamples; i++) {
		int s = ev->order[i], j = i;

		while (j > 0 && ev->sample_noise[ev->order[j - 1]] <
		    ev->sample_noise[s]) {
			ev->order[j] = ev->order[j - 1];
			j--;
		}
		ev->order[j] = s;
	}
}

static int
by_target(const struct opts *o, struct mixprec *mp, const void *mbuf,
    size_t mlen, const char *mdir, struct err *e)
{
	struct search S;
	struct evaldata ev;
	struct score base, probe, cur, sc;
	struct mixprec_summary sum;
	double t0 = now(), total;
	int rc = -1, nu = 0, ns = 0, nprobe, step = 0, met = 0, ntaken = 0;
	int *taken = NULL;

	memset(&S, 0, sizeof S);
	S.o = o;
	S.mp = mp;
	S.ev = &ev;
	if (evaldata_init(&ev, o, mbuf, mlen, mdir, e) < 0)
		return -1;
	if (!isnan(o->target_agree) && !ev.classifier) {
		err_set(e, "--target-agreement: no output of %s is "
		    "classifier-like (rank 2 or 3, last dimension 2 or more)",
		    o->model);
		goto out;
	}
	/* The promotion type: 16 bits of the activations' own signedness. */
	for (int i = 0; i < mixprec_ntensors(mp); i++) {
		int ty = mixprec_tensor_type(mp, i);

		if (ty == DT_UINT8 || ty == DT_UINT4 || ty == DT_UINT16)
			nu++;
		else if (ty != DT_UNDEFINED)
			ns++;
	}
	S.t16.type = o->type ? o->type : nu >= ns ? DT_UINT16 : DT_INT16;
	S.t16.symmetric = S.t16.reduce_range = S.t16.pow2 = -1;
	S.tfloat.type = DT_FLOAT;
	S.tfloat.symmetric = S.tfloat.reduce_range = S.tfloat.pow2 = -1;
	if (make_candidates(&S, e) < 0)
		goto out;
	mixprec_clear(mp);
	if (evaluate(&ev, mp, 0, INFINITY, INFINITY, &base, e) < 0)
		goto out;
	rank_samples(&ev);
	if (!o->quiet) {
		fprintf(stderr, "%s: %d samples, %d candidates (%s%s); as "
		    "quantized: ", PROG, ev.nsamples, S.nc,
		    qparams_type_name(S.t16.type), o->allow_float ?
		    " or float" : "");
		print_score(stderr, &base);
		fputc('\n', stderr);
	}
	if (target_met(o, &base)) {
		if (!o->quiet)
			fprintf(stderr, "%s: the target is met already: "
			    "nothing promoted\n", PROG);
		mixprec_clear(mp);
		rc = write_out(o, mp, e);
		goto out;
	}
	/* What each candidate buys, on the noisiest samples. */
	nprobe = ev.nsamples < HEAD ? ev.nsamples : HEAD;
	if (evaluate(&ev, mp, nprobe, INFINITY, INFINITY, &probe, e) < 0)
		goto out;
again:
	free(S.chain);
	free(taken);
	S.chain = taken = NULL;
	S.nchain = ntaken = 0;
	if (measure(&S, nprobe, probe.pnoise, e) < 0 || make_chain(&S, e) < 0)
		goto out;
	total = 0;
	for (int i = 0; i < S.nchain; i++)
		total += S.c[S.chain[i]].gain;
	if (!o->quiet)
		fprintf(stderr, "%s: %d of %d candidates gain on their own; "
		    "together they would remove %.0f%% of the noise\n", PROG,
		    S.nchain, S.nc, probe.pnoise > 0 ? 100 * total /
		    probe.pnoise : 0.0);
	if (S.nchain == 0 && !S.alone)
		goto retry;
	if (S.nchain == 0) {
		err_set(e, "target not reached%s: no candidate improves the "
		    "model", isnan(o->budget) ? "" : " within the budget");
		goto out;
	}
	/*
	 * Greedy, in that order, each step run on all the samples and kept
	 * only when the output noise goes down: errors do not add up (they
	 * also cancel), so the runs decide. Steps take a batch of
	 * candidates, doubled while they pay, halved down to one when they
	 * do not; a single candidate that does not pay is left out.
	 */
	if ((taken = calloc((size_t)S.nchain + 1, sizeof *taken)) == NULL) {
		err_nomem(e);
		goto out;
	}
	cur = base;
	cur.head = probe.head;	/* base ran before the samples were ranked */
	for (int pos = 0, batch = 4; pos < S.nchain && !met; ) {
		int b = batch < S.nchain - pos ? batch : S.nchain - pos, bad;

		memcpy(taken + ntaken, S.chain + pos, (size_t)b * sizeof *taken);
		if ((bad = setup(&S, taken, ntaken + b, -1, e)) < 0)
			goto out;
		mixprec_summarize(mp, &sum);
		if (!bad && (isnan(o->budget) || share_of(&sum) <= o->budget)) {
			/* Worse on the noisiest samples: no use going on. */
			if (evaluate(&ev, mp, 0, cur.noise, cur.head, &sc,
			    e) < 0)
				goto out;
			if (sc.samples == ev.nsamples && sc.noise < cur.noise) {
				if (!o->quiet)
					print_step(&S, ++step, pos, pos + b, &sc,
					    &sum);
				met = target_met(o, &sc);
				if (met && b > 1 && trim(&S, &ev, taken, ntaken,
				    &b, &sc, &step, e) < 0)
					goto out;
				ntaken += b;
				pos += b;
				cur = sc;
				batch = 2 * b < 32 ? 2 * b : 32;
				continue;
			}
		}
		if (b > 1) {
			batch = b / 2;
			continue;
		}
		if (o->verbose) {
			fprintf(stderr, "%s: %s left out: ", PROG,
			    S.c[S.chain[pos]].label);
			if (bad)
				fprintf(stderr, "it conflicts\n");
			else if (!isnan(o->budget) && share_of(&sum) > o->budget)
				fprintf(stderr, "over the budget\n");
			else if (sc.samples < ev.nsamples)
				fprintf(stderr, "noisier on the %d noisiest "
				    "samples already\n", sc.samples);
			else {
				print_score(stderr, &sc);
				fprintf(stderr, " with it\n");
			}
		}
		pos++;
	}
	if (!met) {
		if (!o->quiet) {
			fprintf(stderr, "%s: target not reached: at best, with "
			    "%d of %d candidates, ", PROG, ntaken, S.nchain);
			print_score(stderr, &cur);
			fputc('\n', stderr);
		}
		if (!S.alone)
			goto retry;
		err_set(e, "target not reached%s", isnan(o->budget) ? "" :
		    " within the budget");
		goto out;
	}
	goto done;
retry:
	/*
	 * Measured from the top, the candidates did not do: measure each
	 * alone in the quantized model (a model that is not chaotic, where
	 * what one tensor buys alone is no accident), and go again.
	 */
	S.alone = 1;
	if (!o->quiet)
		fprintf(stderr, "%s: measuring each candidate alone in the "
		    "quantized model instead\n", PROG);
	goto again;
done:
	if (setup(&S, taken, ntaken, -1, e) != 0) {
		err_set(e, "the chosen candidates conflict");
		goto out;
	}
	sc = cur;
	mixprec_summarize(mp, &sum);
	if (!o->quiet) {
		fprintf(stderr, "%s: target reached: ", PROG);
		print_score(stderr, &base);
		fputs(" -> ", stderr);
		print_score(stderr, &sc);
		fprintf(stderr, "; %d of %d tensors promoted, %d in float "
		    "(%.2f%% of the elements); %d runs, %.0f s\n",
		    sum.promoted, sum.tensors, sum.floated, share_of(&sum),
		    ev.runs, now() - t0);
	}
	rc = write_out(o, mp, e);
out:
	for (int i = 0; i < S.nc; i++) {
		free(S.c[i].t);
		free(S.c[i].label);
	}
	free(S.c);
	free(S.chain);
	free(taken);
	evaldata_release(&ev);
	return rc;
}

static int
run(const struct opts *o)
{
	struct stream_reader *r = NULL;
	struct mixprec *mp = NULL;
	void *mbuf = NULL;
	size_t mlen = 0;
	char hex[65], *tmp = NULL, *mdir;
	const char *sha = NULL;
	struct err e;
	int rc = 1;

	if (infile_read(o->model, INFILE_MODEL_MAX, &mbuf, &mlen, &e) < 0)
		goto fail;
	sha256_hex(mbuf, mlen, hex);
	if ((tmp = strdup(o->model)) == NULL) {
		err_nomem(&e);
		goto fail;
	}
	mdir = dirname(tmp);
	if ((r = stream_open("-", &e)) == NULL ||
	    (mp = mixprec_read(r, &e)) == NULL)
		goto fail;
	if ((sha = mixprec_model_sha256(mp)) != NULL && strcmp(sha, hex) != 0)
		cli_warn("warning: the stream was made from another model "
		    "(sha256 %.12s..., %s has %.12s...)", sha, o->model, hex);
	if (o->verbose)
		mixprec_set_note(mp, print_note, NULL);
	if (o->regions ? by_hand(o, mp, &e) < 0 :
	    by_target(o, mp, mbuf, mlen, mdir, &e) < 0)
		goto fail;
	rc = 0;
	goto done;
fail:
	cli_warn("%s", e.msg);
done:
	mixprec_free(mp);
	stream_reader_free(r);
	free(mbuf);
	free(tmp);
	return rc;
}

int
main(int argc, char **argv)
{
	struct opts o;
	int status;

	interp_reexec_bounded_spin(argv);
	cli_init(PROG, usage_text);
	status = parse_args(&o, argc, argv);
	if (status == 0) {
		outfile_cleanup_on_signals();
		status = run(&o);
	} else if (status < 0)
		status = 0;
	free(o.dirs);
	if (fclose(stdout) == EOF) {
		fprintf(stderr, "%s: stdout: %s\n", PROG, strerror(errno));
		return 1;
	}
	return status;
}
