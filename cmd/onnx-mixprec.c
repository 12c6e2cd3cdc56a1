/*
 * onnx-mixprec: promote regions of a quantized model to another type
 * (16 bits, usually) by rewriting the qparam records of an onnxq stream
 * and adding convert records at the region edges (see onnx-mixprec(1),
 * lib/mixprec.h). The regions are the ones a YAML file names
 * (onnxq-regions(5)), or those a greedy search picks until the quantized
 * model reaches a target SNR or top-1 agreement on evaluation samples.
 *
 * This program reads and writes; lib/mixprec.h does the regions,
 * lib/mixsearch.h the search, lib/mixeval.h its model runs.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cli.h"
#include "infile.h"
#include "interp.h"
#include "mixeval.h"
#include "mixprec.h"
#include "mixsearch.h"
#include "outfile.h"
#include "progress.h"
#include "prep.h"
#include "qparams.h"
#include "sha256.h"
#include "stream.h"
#include "tensor.h"

#define PROG		"onnx-mixprec"

struct opts {
	const char	*model;		/* the fp32 model */
	const char	*regions;	/* -c: YAML file naming regions */
	const char	**dirs;		/* -d: evaluation data */
	int		 ndirs;
	const char	*out;		/* stream out, "-" stdout */
	/* the targets, budget, type, -q and -v, as the search takes them */
	struct mixsearch_opts search;
	long		 limit;		/* samples; 0: all */
	long		 threads;
	int		 at_logits;	/* --at-logits */
	int		 argc;
	char		**argv;
};

static const char usage_text[] =
    "usage: onnx-mixprec [-v] [-o FILE] -c REGIONS.yaml MODEL\n"
    "       onnx-mixprec [-qv] [-o FILE] [--target-snr DB] "
    "[--target-agreement PCT]\n"
    "                    [--budget PCT] [--allow-float] [--type TYPE] "
    "[--at-logits]\n"
    "                    [--limit N] [--threads N] -d EVAL_DIR "
    "[-d EVAL_DIR ...] MODEL\n"
    "       onnx-mixprec -h | -V\n";

/* Parse argv into o: 0 to go on, -1 when done (help), or exit status 2. */
static int
parse_args(struct opts *o, int argc, char **argv)
{
	enum { OPT_TARGET_SNR = 256, OPT_TARGET_AGREE, OPT_BUDGET,
	    OPT_ALLOW_FLOAT, OPT_TYPE, OPT_LIMIT, OPT_THREADS, OPT_AT_LOGITS };
	static const struct option longopts[] = {
		{ "target-snr",	required_argument, NULL, OPT_TARGET_SNR },
		{ "target-agreement", required_argument, NULL, OPT_TARGET_AGREE },
		{ "budget",	required_argument, NULL, OPT_BUDGET },
		{ "allow-float", no_argument,	NULL, OPT_ALLOW_FLOAT },
		{ "type",	required_argument, NULL, OPT_TYPE },
		{ "limit",	required_argument, NULL, OPT_LIMIT },
		{ "threads",	required_argument, NULL, OPT_THREADS },
		{ "at-logits",	no_argument,	NULL, OPT_AT_LOGITS },
		{ "output",	required_argument, NULL, 'o' },
		{ "quiet",	no_argument,	NULL, 'q' },
		{ "verbose",	no_argument,	NULL, 'v' },
		{ "help",	no_argument,	NULL, 'h' },
		{ "version",	no_argument,	NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct mixsearch_opts *so = &o->search;
	int c, by_target;

	memset(o, 0, sizeof *o);
	o->out = "-";
	mixsearch_opts_init(&o->search);
	o->argc = argc;
	o->argv = argv;
	if ((o->dirs = calloc((size_t)argc + 1, sizeof *o->dirs)) == NULL) {
		cli_warn("out of memory");
		return 1;
	}
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:d:hVo:qv", longopts, NULL)) !=
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
			so->quiet = 1;
			break;
		case 'v':
			so->verbose = 1;
			break;
		case OPT_TARGET_SNR:
			if (cli_number("--target-snr", optarg, -1000, 1000,
			    &so->target_snr))
				return 2;
			break;
		case OPT_TARGET_AGREE:
			if (cli_number("--target-agreement", optarg, 0, 100,
			    &so->target_agree))
				return 2;
			break;
		case OPT_BUDGET:
			if (cli_number("--budget", optarg, 0, 100,
			    &so->budget))
				return 2;
			break;
		case OPT_ALLOW_FLOAT:
			so->allow_float = 1;
			break;
		case OPT_AT_LOGITS:
			o->at_logits = 1;
			break;
		case OPT_TYPE:
			if (strcasecmp(optarg, "float") == 0)
				so->type = DT_FLOAT;
			else if ((so->type = qparams_type_parse(optarg)) ==
			    DT_UNDEFINED)
				return cli_usage_error("--type: unknown type '%s' "
				    "(uint8, int8, uint16, int16, uint4, int4, "
				    "float)",
				    optarg);
			break;
		case OPT_LIMIT:
			if (cli_count("--limit", optarg, 1, 1000000000,
			    &o->limit))
				return 2;
			break;
		case OPT_THREADS:
			if (cli_count("--threads", optarg, 1, CLI_THREADS_MAX,
			    &o->threads))
				return 2;
			break;
		default:
			return cli_default_option(c, argv, longopts);
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
	by_target = !isnan(so->target_snr) || !isnan(so->target_agree);
	if ((o->regions != NULL) == by_target)
		return cli_usage_error("give either -c or --target-snr / "
		    "--target-agreement");
	if (by_target && o->ndirs == 0)
		return cli_usage_error("--target-snr and --target-agreement need "
		    "-d EVAL_DIR");
	if (!by_target && (o->ndirs || !isnan(so->budget) ||
	    so->allow_float || so->type || o->limit || o->threads ||
	    o->at_logits))
		return cli_usage_error("-d, --budget, --allow-float, --type, "
		    "--at-logits, --limit and --threads go with --target-snr "
		    "or --target-agreement");
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
	if (o->search.verbose)
		print_summary(mp, o->regions);
	return write_out(o, mp, e);
}

/* By target: the search, with its notes and progress bar on stderr. */

struct searchui {
	struct progress bar;
	int active;
	int quiet;
};

static void
search_note(void *ctx, const char *msg)
{
	struct searchui *ui = ctx;

	if (ui->active)
		progress_clear(&ui->bar);
	fprintf(stderr, "%s: %s\n", PROG, msg);
}

static void
search_progress(void *ctx, int done, int total)
{
	struct searchui *ui = ctx;

	if (!ui->active) {
		progress_init(&ui->bar, stderr, progress_wanted(stderr,
		    ui->quiet), PROG, "candidates", total);
		ui->active = 1;
	}
	if (done < total) {
		progress_update(&ui->bar, done);
		return;
	}
	progress_end(&ui->bar);
	ui->active = 0;
}

/*
 * ONNXQ_MIXPREC_PROFILE: where the CPU time went, all of it from run()'s
 * start: the evaluator's parts (mixeval.h), then the rest of the search
 * (choosing parameters and candidates), reading, writing and freeing.
 */
struct profile {
	int on;
	double start, read, search, write, done;	/* CPU clock */
	struct mixeval_profile ev;
};

static void
put_profile(const struct profile *p)
{
	const struct mixeval_profile *v = &p->ev;

	fprintf(stderr, "%s: profile: fp32 runs %.2f s, model runs %.2f s, "
	    "model making %.2f s (CPU); %d evaluations (%d of the model "
	    "raised ahead, %ld of a skeleton), %ld samples, "
	    "%ld nodes run, %ld taken from the reference run; reading "
	    "%.2f s, choosing parameters %.2f s, writing %.2f s, freeing "
	    "%.2f s, in all %.2f s (CPU)\n", PROG, v->reference, v->run,
	    v->build, v->evaluations, v->raised, v->skeletons, v->samples,
	    v->nodes_run,
	    v->nodes_skipped, p->read - p->start, p->search - p->read -
	    v->reference - v->run - v->build, p->write - p->search,
	    p->done - p->write, p->done - p->start);
}

static int
by_target(const struct opts *o, struct mixprec *mp, void **mbuf,
    size_t mlen, struct model **prepared, const char *mdir,
    struct profile *prof, struct err *e)
{
	struct mixeval_opts eo = { .name = o->model, .model = *mbuf,
	    .len = mlen, .prepared = *prepared, .dir = mdir,
	    .dirs = o->dirs, .ndirs = o->ndirs,
	    .limit = (int)o->limit, .threads = (int)o->threads,
	    .whole_runs = getenv("ONNXQ_MIXPREC_WHOLE_RUNS") != NULL,
	    .check_models = getenv("ONNXQ_MIXPREC_CHECK_MODELS") != NULL,
	    .at_probes = o->at_logits };
	struct searchui ui = { .quiet = o->search.quiet };
	struct mixsearch_opts so;
	struct mixsearch_eval fn;
	struct mixsearch_result res;
	struct mixprec_summary sum;
	struct mixeval *ev;
	double t0 = now();
	int rc = -1;

	*prepared = NULL;	/* mixeval's now */
	if ((ev = mixeval_new(&eo, e)) == NULL)
		return -1;
	/* the evaluator has what it needs: fresh memory costs */
	free(*mbuf);
	*mbuf = NULL;
	if (!isnan(o->search.target_agree) && !mixeval_classifier(ev)) {
		err_set(e, "--target-agreement: no output of %s is "
		    "classifier-like (rank 2 or 3, last dimension 2 or more)",
		    o->model);
		goto out;
	}
	mixeval_bind(ev, &fn);
	so = o->search;
	so.note = search_note;
	so.progress = search_progress;
	so.ctx = &ui;
	if (mixsearch_run(mp, &so, &fn, &res, e) < 0)
		goto out;
	mixprec_summarize(mp, &sum);
	if (!o->search.quiet && !res.already) {
		fprintf(stderr, "%s: target reached: ", PROG);
		mixsearch_put_score(stderr, &res.base);
		fputs(" -> ", stderr);
		mixsearch_put_score(stderr, &res.score);
		fprintf(stderr, "; %d of %d tensors promoted, %d in float "
		    "(%.2f%% of the elements); %d runs, %.0f s\n",
		    sum.promoted, sum.tensors, sum.floated, sum.elems > 0 ?
		    100 * sum.elems_promoted / sum.elems : 0.0, res.runs,
		    now() - t0);
	}
	mixeval_profile(ev, &prof->ev);
	prof->search = mixeval_cpu_seconds();
	rc = write_out(o, mp, e);
	prof->write = mixeval_cpu_seconds();
out:
	mixeval_free(ev);
	return rc;
}

/*
 * The stream must be MODEL's: its nodes and weights, by name and shape.
 * The model prepared so, for the evaluator, or NULL with e.
 */
static struct model *
check_model(const struct mixprec *mp, const char *path, const void *buf,
    size_t len, const char *dir, struct err *e)
{
	struct model *m;

	if ((m = model_load_mem(buf, len, path, dir, e)) == NULL)
		return NULL;
	if (prep_model(m, NULL, e) < 0) {
		err_prefix(e, "%s", path);
		model_free(m);
		return NULL;
	}
	if (mixprec_check_model(mp, m, e) < 0) {
		model_free(m);
		return NULL;
	}
	return m;
}

static int
run(const struct opts *o)
{
	struct stream_reader *r = NULL;
	struct mixprec *mp = NULL;
	struct model *prepared = NULL;
	void *mbuf = NULL;
	size_t mlen = 0;
	char hex[65], *mdir = NULL;
	const char *sha = NULL;
	struct profile prof = { .on = getenv("ONNXQ_MIXPREC_PROFILE") != NULL,
	    .start = mixeval_cpu_seconds() };
	struct err e;
	int rc = 1;

	if (infile_read(o->model, INFILE_MODEL_MAX, &mbuf, &mlen, &e) < 0)
		goto fail;
	sha256_hex(mbuf, mlen, hex);
	/* MODEL is never "-" (parse_args) */
	if ((mdir = infile_dir(o->model)) == NULL) {
		err_nomem(&e);
		goto fail;
	}
	if ((r = stream_open("-", &e)) == NULL ||
	    (mp = mixprec_read(r, &e)) == NULL)
		goto fail;
	if ((sha = mixprec_model_sha256(mp)) != NULL && strcmp(sha, hex) != 0)
		cli_warn("warning: the stream was made from another model "
		    "(sha256 %.12s..., %s has %.12s...)", sha, o->model, hex);
	if ((prepared = check_model(mp, o->model, mbuf, mlen, mdir,
	    &e)) == NULL)
		goto fail;
	if (o->search.verbose)
		mixprec_set_note(mp, print_note, NULL);
	prof.read = mixeval_cpu_seconds();
	if (o->regions ? by_hand(o, mp, &e) < 0 :
	    by_target(o, mp, &mbuf, mlen, &prepared, mdir, &prof, &e) < 0)
		goto fail;
	rc = 0;
	goto done;
fail:
	prof.on = 0;
	cli_warn("%s", e.msg);
done:
	model_free(prepared);
	mixprec_free(mp);
	stream_reader_free(r);
	free(mbuf);
	free(mdir);
	prof.done = mixeval_cpu_seconds();
	if (prof.on && !o->regions)
		put_profile(&prof);
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
	/* a failure said so already, writing through outfile */
	if (status == 0 && cli_close_stdout() < 0)
		status = 1;
	return status;
}
