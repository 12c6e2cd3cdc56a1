/*
 * onnx-verify: run a model on the samples of data directories and compare
 * its outputs with the expected ones stored there, or run an fp32 model
 * and its quantized version side by side and measure what quantization
 * costs, per output and (--per-tensor) per quantized tensor. See
 * onnx-verify(1). Exit status follows cmp(1): 0 within the gates, 1
 * outside, 2 trouble.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dataset.h"
#include "interp.h"
#include "labels.h"
#include "model.h"
#include "outfile.h"
#include "prep.h"
#include "progress.h"
#include "qdqerr.h"
#include "runner.h"
#include "verdict.h"
#include "verifyreport.h"

#define PROG "onnx-verify"

enum { EXIT_SAME = 0, EXIT_DIFFERENT = 1, EXIT_TROUBLE = 2 };

struct opts {
	const char **dirs;
	int ndirs;
	double rtol, atol;
	int tol_given;		/* --rtol or --atol given */
	struct verdict_gate *gates;
	int ngates;
	double min_agreement;	/* NaN: not checked */
	const char *labels;	/* NULL: no labels */
	int format;		/* enum verifyreport_format */
	const char *plot;	/* SVG path, NULL: none */
	int per_tensor;
	int fused;		/* run the quantized model as ORT fuses it */
	int sort;		/* enum qdqerr_sort */
	const char *save_dir;	/* NULL: outputs not saved */
	int threads;
	int quiet;
	const char *model;
	const char *qmodel;	/* the two-model form; NULL for one model */
};

static const char usage_text[] =
    "usage: onnx-verify -d DIR [-d DIR ...] [--atol A] [--rtol R] "
    "[--min-snr [NAME=]DB]\n"
    "                   [--min-agreement PCT] [--labels FILE] "
    "[--per-tensor]\n"
    "                   [--sort own|snr|graph] [--format table|tsv|json] "
    "[--plot FILE.svg]\n"
    "                   [--save-outputs OUTDIR] [--threads N] [--fused] "
    "[--quiet]\n"
    "                   MODEL [QMODEL]\n";

/*
 * The progress bar, like stderr itself, is the process's: every message
 * erases it first (cli_before_message).
 */
static struct progress bar;

static void
clear_bar(void)
{
	progress_clear(&bar);
}

/* The problems behind the statuses, on stderr. */
static void
explain(const struct opts *o, const struct verifyreport *rp)
{
	for (int i = 0; i < rp->nout; i++) {
		const struct verdict_row *r = &rp->rows[i];

		if (!rp->two && r->tol.nbad && !r->tol.nmismatch)
			cli_warn("output %s: %lld of %lld elements outside "
			    "tolerance (rtol %g, atol %g)", r->name,
			    (long long)r->tol.nbad, (long long)r->tol.nelem,
			    o->rtol, o->atol);
		else if (strcmp(r->status, "low-snr") == 0)
			cli_warn("output %s: snr %.1f db is below %g db", r->name,
			    verdict_snr(r, rp->two), r->min_snr);
		else if (strcmp(r->status, "low-agreement") == 0)
			cli_warn("output %s: top-1 agreement %.2f%% is below "
			    "%g%%", r->name, compare_agreement(&r->cmp),
			    o->min_agreement);
		else if (rp->two && strcmp(r->status, "mismatch") == 0)
			cli_warn("output %s: shape or type differs between the "
			    "models in %lld samples", r->name,
			    (long long)r->cmp.nmismatch);
	}
}

/* The plot into o->plot, written whole or not at all. */
static int
write_plot(const struct opts *o, const struct qdqerr *pt, struct err *e)
{
	struct outfile *of = outfile_open(o->plot, e);

	if (!of)
		return -1;
	if (verifyreport_plot(outfile_fp(of), pt, e) < 0) {
		err_prefix(e, "%s", o->plot);
		outfile_abort(of);
		return -1;
	}
	return outfile_commit(of, e);
}

/*
 * Judge the outputs and print the report in the chosen format; 1 when
 * outside the gates, 0 within, 2 on trouble.
 */
static int
report(const struct opts *o, const struct dataset *ds,
    struct verdict_row *rows, int nout, const struct qdqerr *pt)
{
	struct verifyreport rp = { o->model, o->qmodel, ds, nout, rows,
	    o->qmodel != NULL, o->labels || !isnan(o->min_agreement), pt,
	    NULL };
	int worse = verdict_judge(rows, nout, rp.two, o->min_agreement);
	int any_top1 = 0, any_label = 0, *sorted = NULL, ret = EXIT_TROUBLE;
	int low;
	struct err e;

	progress_end(&bar);
	for (int i = 0; i < nout; i++) {
		any_top1 |= rows[i].cmp.rows > 0;
		any_label |= rows[i].cmp.labeled > 0;
	}
	if (!isnan(o->min_agreement) && !any_top1) {
		cli_warn("--min-agreement: no classifier-like output to check");
		return EXIT_TROUBLE;
	}
	if (o->labels && !any_label) {
		cli_warn("%s: no classifier-like output to check the labels "
		    "against", o->labels);
		return EXIT_TROUBLE;
	}
	if (pt) {
		const struct qdqmatch *m = &pt->match;

		sorted = calloc((size_t)m->npairs + 1, sizeof *sorted);
		if (!sorted || qdqerr_sort(pt, o->sort, sorted) < 0) {
			cli_warn("out of memory");
			goto out;
		}
		rp.sorted = sorted;
		if (m->nunmatched && !o->quiet)
			cli_warn("per-tensor: %d quantized tensors not matched "
			    "to the fp32 model (first: %s)", m->nunmatched,
			    m->unmatched[0]);
	}
	if (o->plot && write_plot(o, pt, &e) < 0) {
		cli_warn("%s", e.msg);
		goto out;
	}
	if (!o->quiet && verifyreport_write(stdout, &rp, o->format, worse,
	    &e) < 0) {
		cli_warn("%s", e.msg);
		goto out;
	}
	if (!o->quiet)
		explain(o, &rp);
	if (!o->quiet &&
	    (low = verdict_mixprec_row(rows, nout, rp.two)) >= 0)
		cli_warn("output %s: snr %.1f db: 8 bits lose this model's "
		    "signal; onnx-mixprec --target-snr 20 --allow-float puts "
		    "the regions that need it in 16 bits or float",
		    rows[low].name, verdict_snr(&rows[low], rp.two));
	ret = worse;
out:
	free(sorted);
	return ret;
}

/* Runs. */

/*
 * Two data directories holding samples of the same name would overwrite
 * each other's outputs.
 */
static int
check_unique_samples(const struct dataset *ds, struct err *e)
{
	int n = dataset_count(ds);
	char **seen = calloc((size_t)n + 1, sizeof *seen);

	if (!seen)
		return err_nomem(e);
	for (int i = 0; i < n; i++) {
		if (!(seen[i] = strdup(dataset_sample_base(ds, i)))) {
			err_nomem(e);
			n = i;
			goto fail;
		}
		for (int j = 0; j < i; j++)
			if (strcmp(seen[i], seen[j]) == 0) {
				err_set(e, "%s and %s: same sample name, "
				    "outputs would collide",
				    dataset_sample_name(ds, j),
				    dataset_sample_name(ds, i));
				n = i + 1;
				goto fail;
			}
	}
	for (int i = 0; i < n; i++)
		free(seen[i]);
	free(seen);
	return 0;
fail:
	for (int i = 0; i < n; i++)
		free(seen[i]);
	free(seen);
	return -1;
}

static void
warn_mismatch(const char *sample, const char *name, const struct tensor *x,
    const struct tensor *want)
{
	char a[128], b[128];

	if (x->dtype != want->dtype)
		cli_warn("%s: output %s: type %s where %s was expected", sample,
		    name, dtype_name(x->dtype), dtype_name(want->dtype));
	else
		cli_warn("%s: output %s: shape %s where %s was expected", sample,
		    name, shape_str(x->rank, x->dims, a, sizeof a),
		    shape_str(want->rank, want->dims, b, sizeof b));
}

/* One model against the expected outputs in the data directories. */
static int
run_single(const struct opts *o)
{
	struct runner r;
	struct dataset *ds = NULL;
	struct verdict_row *rows = NULL;
	struct tensor *in = NULL, *out = NULL, *exp = NULL;
	struct labels lb = { 0 };
	struct err e;
	int ret = EXIT_TROUBLE, ni, no, nexp, unexpected = 0;

	if ((o->fused ? runner_init_fused : runner_init)(&r, o->model,
	    o->threads, NULL, NULL, &e) < 0) {
		cli_warn("%s", e.msg);
		return EXIT_TROUBLE;
	}
	ni = r.spec.ninputs;
	no = r.spec.noutputs;
	if (!(ds = dataset_open(o->dirs, o->ndirs, &e)) ||
	    (o->save_dir && check_unique_samples(ds, &e) < 0) ||
	    (o->labels &&
	    labels_load(&lb, o->labels, dataset_count(ds), &e) < 0)) {
		cli_warn("%s", e.msg);
		goto out;
	}
	in = calloc((size_t)ni + 1, sizeof *in);
	out = calloc((size_t)no + 1, sizeof *out);
	exp = calloc((size_t)no + 1, sizeof *exp);
	rows = calloc((size_t)no + 1, sizeof *rows);
	if (!in || !out || !exp || !rows) {
		cli_warn("out of memory");
		goto out;
	}
	verdict_init(rows, no, r.out_names, o->rtol, o->atol);
	if (verdict_set_gates(rows, no, o->gates, o->ngates, &e) < 0) {
		cli_warn("--min-snr: %s", e.msg);
		goto out;
	}
	progress_init(&bar, stderr, progress_wanted(stderr, o->quiet), PROG,
	    "samples", dataset_count(ds));
	progress_update(&bar, 0);
	for (int s = 0; s < dataset_count(ds); s++) {
		const char *sname = dataset_sample_name(ds, s);

		if (dataset_load(ds, s, &r.spec, in, exp, &e) < 0) {
			cli_warn("%s", e.msg);
			goto out;
		}
		nexp = 0;
		for (int k = 0; k < no; k++)
			nexp += exp[k].data != NULL;
		/* none at all: saving the outputs makes them */
		for (int k = 0; k < no && (nexp > 0 || !o->save_dir); k++)
			if (!exp[k].data) {
				cli_warn("%s: no expected value for output %s",
				    sname, r.out_names[k]);
				goto out;
			}
		if (interp_run(r.ip, in, out, &e) < 0) {
			cli_warn("%s: %s", sname, e.msg);
			goto out;
		}
		unexpected += nexp == 0;
		for (int k = 0; k < no && nexp > 0; k++) {
			int64_t before = rows[k].tol.nmismatch;

			tensor_as_bfloat16(&exp[k], out[k].dtype);
			dataset_cmp_add(&rows[k].tol, &out[k], &exp[k]);
			compare_add(&rows[k].cmp, &out[k], &exp[k], s);
			if (labels_add_top1(&lb, s, rows[k].name, &rows[k].cmp,
			    &out[k], &exp[k], &e) < 0) {
				cli_warn("%s", e.msg);
				goto out;
			}
			if (rows[k].tol.nmismatch > before && !o->quiet)
				warn_mismatch(sname, r.out_names[k], &out[k],
				    &exp[k]);
		}
		if (o->save_dir && dataset_save(o->save_dir,
		    dataset_sample_base(ds, s), no, r.out_names, out, &e) < 0) {
			cli_warn("%s", e.msg);
			goto out;
		}
		tensor_release_n(in, (size_t)ni);
		tensor_release_n(out, (size_t)no);
		tensor_release_n(exp, (size_t)no);
		progress_update(&bar, s + 1);
	}
	if (unexpected < dataset_count(ds))
		ret = report(o, ds, rows, no, NULL);
	else
		ret = EXIT_SAME;
	progress_end(&bar);
	if (unexpected > 0 && !o->quiet)
		cli_warn("%d of %d samples without expected outputs: their "
		    "outputs saved in %s, not compared", unexpected,
		    dataset_count(ds), o->save_dir);
out:
	progress_end(&bar);
	tensor_release_n(in, (size_t)ni);
	tensor_release_n(out, (size_t)no);
	tensor_release_n(exp, (size_t)no);
	free(in);
	free(out);
	free(exp);
	free(rows);
	labels_free(&lb);
	dataset_free(ds);
	runner_free(&r);
	return ret;
}

/* MODEL and QMODEL side by side on the same samples. */
static int
run_pair(const struct opts *o)
{
	struct runner f = { 0 }, q = { 0 };
	struct qdqerr pt = { 0 }, *ptp = NULL;
	struct model *pm = NULL;
	struct dataset *ds = NULL;
	struct verdict_row *rows = NULL;
	struct tensor *in = NULL, *qin = NULL, *fout = NULL, *qout = NULL;
	struct labels lb = { 0 };
	struct err e;
	int *inpos = NULL, *outpos = NULL;
	int ret = EXIT_TROUBLE, ni = 0, no = 0, nqo = 0;

	if (runner_init(&f, o->model, o->threads, o->per_tensor ?
	    qdqerr_observe_fp32 : NULL, &pt, &e) < 0 ||
	    (o->fused ? runner_init_fused : runner_init)(&q, o->qmodel,
	    o->threads, o->per_tensor ? qdqerr_observe_q : NULL, &pt,
	    &e) < 0) {
		cli_warn("%s", e.msg);
		goto out;
	}
	ni = f.spec.ninputs;
	no = f.spec.noutputs;
	nqo = q.spec.noutputs;
	inpos = calloc((size_t)q.spec.ninputs + 1, sizeof *inpos);
	outpos = calloc((size_t)no + 1, sizeof *outpos);
	in = calloc((size_t)ni + 1, sizeof *in);
	qin = calloc((size_t)q.spec.ninputs + 1, sizeof *qin);
	fout = calloc((size_t)no + 1, sizeof *fout);
	qout = calloc((size_t)nqo + 1, sizeof *qout);
	rows = calloc((size_t)no + 1, sizeof *rows);
	if (!inpos || !outpos || !in || !qin || !fout || !qout || !rows) {
		cli_warn("out of memory");
		goto out;
	}
	/* QMODEL's inputs, in its order, are the fp32 model's by name. */
	if (q.spec.ninputs != ni) {
		cli_warn("%s: %d inputs where the fp32 model has %d", o->qmodel,
		    q.spec.ninputs, ni);
		goto out;
	}
	if (runner_match_names("input", o->qmodel, q.in_names, ni, f.in_names,
	    ni, inpos, &e) < 0 ||
	    runner_match_names("output", o->qmodel, f.out_names, no,
	    q.out_names, nqo, outpos, &e) < 0) {
		cli_warn("%s", e.msg);
		goto out;
	}
	verdict_init(rows, no, f.out_names, o->rtol, o->atol);
	if (!(ds = dataset_open(o->dirs, o->ndirs, &e)) ||
	    (o->labels &&
	    labels_load(&lb, o->labels, dataset_count(ds), &e) < 0)) {
		cli_warn("%s", e.msg);
		goto out;
	}
	if (verdict_set_gates(rows, no, o->gates, o->ngates, &e) < 0) {
		cli_warn("--min-snr: %s", e.msg);
		goto out;
	}
	if (o->per_tensor) {
		/* the fp32 model as onnx-qdq-insert saw it, for its
		 * weights */
		if (!(pm = prep_load(o->model, NULL, NULL, NULL, &e)) ||
		    qdqerr_init(&pt, f.m, pm, q.m, o->threads, &e) < 0) {
			cli_warn("per-tensor: %s", e.msg);
			goto out;
		}
		ptp = &pt;
	}
	progress_init(&bar, stderr, progress_wanted(stderr, o->quiet), PROG,
	    "samples", dataset_count(ds));
	progress_update(&bar, 0);
	for (int s = 0; s < dataset_count(ds); s++) {
		const char *sname = dataset_sample_name(ds, s);

		if (dataset_load(ds, s, &f.spec, in, NULL, &e) < 0) {
			cli_warn("%s", e.msg);
			goto out;
		}
		/* Shallow copies: released through in. */
		for (int j = 0; j < q.spec.ninputs; j++)
			qin[j] = in[inpos[j]];
		pt.sample = s;
		if (interp_run(f.ip, in, fout, &e) < 0) {
			cli_warn("%s: %s: %s", sname, o->model, e.msg);
			goto out;
		}
		if (interp_run(q.ip, qin, qout, &e) < 0) {
			cli_warn("%s: %s: %s", sname, o->qmodel, e.msg);
			goto out;
		}
		if (ptp)
			qdqerr_drop_held(ptp);
		for (int k = 0; k < no; k++) {
			const struct tensor *x = &qout[outpos[k]];

			compare_add(&rows[k].cmp, x, &fout[k], s);
			if (labels_add_top1(&lb, s, rows[k].name, &rows[k].cmp,
			    x, &fout[k], &e) < 0) {
				cli_warn("%s", e.msg);
				goto out;
			}
		}
		tensor_release_n(in, (size_t)ni);
		tensor_release_n(fout, (size_t)no);
		tensor_release_n(qout, (size_t)nqo);
		progress_update(&bar, s + 1);
	}
	ret = report(o, ds, rows, no, ptp);
out:
	progress_end(&bar);
	if (ptp)
		qdqerr_drop_held(ptp);
	tensor_release_n(in, (size_t)ni);
	tensor_release_n(fout, (size_t)no);
	tensor_release_n(qout, (size_t)nqo);
	free(in);
	free(qin);
	free(fout);
	free(qout);
	free(inpos);
	free(outpos);
	free(rows);
	labels_free(&lb);
	qdqerr_free(&pt);
	model_free(pm);
	dataset_free(ds);
	runner_free(&q);
	runner_free(&f);
	return ret;
}

static int
run(const struct opts *o)
{
	return o->qmodel ? run_pair(o) : run_single(o);
}

/* Options. */

/*
 * "DB" or "NAME=DB" (the last '=' splits, so names may hold '='; a number
 * holds none). 0, or the usage error's exit status.
 */
static int
parse_gate(char *arg, struct verdict_gate *g)
{
	char *eq = strrchr(arg, '=');

	g->name = NULL;
	if (eq && eq != arg) {
		*eq = '\0';
		g->name = arg;
		arg = eq + 1;
	}
	return cli_number("--min-snr", arg, -HUGE_VAL, HUGE_VAL, &g->db);
}

/* 0 to go on, or an exit status + 1 (so 1 means exit 0). */
static int
parse_args(int argc, char **argv, struct opts *o)
{
	enum { OPT_RTOL = 256, OPT_ATOL, OPT_MIN_SNR, OPT_SAVE, OPT_THREADS,
	    OPT_MIN_AGREE, OPT_LABELS, OPT_FORMAT, OPT_PLOT, OPT_PER_TENSOR,
	    OPT_SORT, OPT_FUSED };
	static const struct option longopts[] = {
		{ "data", required_argument, NULL, 'd' },
		{ "rtol", required_argument, NULL, OPT_RTOL },
		{ "atol", required_argument, NULL, OPT_ATOL },
		{ "min-snr", required_argument, NULL, OPT_MIN_SNR },
		{ "min-agreement", required_argument, NULL, OPT_MIN_AGREE },
		{ "labels", required_argument, NULL, OPT_LABELS },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "plot", required_argument, NULL, OPT_PLOT },
		{ "per-tensor", no_argument, NULL, OPT_PER_TENSOR },
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "save-outputs", required_argument, NULL, OPT_SAVE },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "fused", no_argument, NULL, OPT_FUSED },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	double v;
	long n;
	int c, r;

	o->rtol = 1e-3;
	o->atol = 1e-7;
	o->min_agreement = NAN;
	o->threads = 2;
	o->dirs = calloc((size_t)argc + 1, sizeof *o->dirs);
	o->gates = calloc((size_t)argc + 1, sizeof *o->gates);
	if (!o->dirs || !o->gates) {
		cli_warn("out of memory");
		return EXIT_TROUBLE + 1;
	}
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":d:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			o->dirs[o->ndirs++] = optarg;
			break;
		case OPT_RTOL:
		case OPT_ATOL:
			if ((r = cli_number(c == OPT_RTOL ? "--rtol" : "--atol",
			    optarg, 0, HUGE_VAL, &v)) != 0)
				return r + 1;
			*(c == OPT_RTOL ? &o->rtol : &o->atol) = v;
			o->tol_given = 1;
			break;
		case OPT_MIN_SNR:
			if ((r = parse_gate(optarg, &o->gates[o->ngates])) != 0)
				return r + 1;
			o->ngates++;
			break;
		case OPT_MIN_AGREE:
			if ((r = cli_number("--min-agreement", optarg, 0, 100,
			    &o->min_agreement)) != 0)
				return r + 1;
			break;
		case OPT_LABELS:
			o->labels = optarg;
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "table") == 0)
				o->format = VERIFYREPORT_TABLE;
			else if (strcmp(optarg, "tsv") == 0)
				o->format = VERIFYREPORT_TSV;
			else if (strcmp(optarg, "json") == 0)
				o->format = VERIFYREPORT_JSON;
			else {
				cli_warn("--format: table, tsv or json, not %s",
				    optarg);
				return EXIT_TROUBLE + 1;
			}
			break;
		case OPT_PLOT:
			o->plot = optarg;
			break;
		case OPT_PER_TENSOR:
			o->per_tensor = 1;
			break;
		case OPT_SORT:
			if (strcmp(optarg, "own") == 0)
				o->sort = QDQERR_SORT_OWN;
			else if (strcmp(optarg, "snr") == 0)
				o->sort = QDQERR_SORT_SNR;
			else if (strcmp(optarg, "graph") == 0)
				o->sort = QDQERR_SORT_GRAPH;
			else {
				cli_warn("--sort: own, snr or graph, not %s",
				    optarg);
				return EXIT_TROUBLE + 1;
			}
			break;
		case OPT_SAVE:
			o->save_dir = optarg;
			break;
		case OPT_THREADS:
			if ((r = cli_count("--threads", optarg, 1,
			    CLI_THREADS_MAX, &n)) != 0)
				return r + 1;
			o->threads = (int)n;
			break;
		case OPT_FUSED:
			o->fused = 1;
			break;
		case 'q':
			o->quiet = 1;
			break;
		default:
			return cli_default_option(c, argv, longopts) < 0 ?
			    EXIT_SUCCESS + 1 : EXIT_TROUBLE + 1;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1 || argc > 2 || o->ndirs == 0) {
		if (argc < 1)
			cli_warn("no model given");
		else if (argc > 2)
			cli_warn("too many arguments");
		else
			cli_warn("no data directory given (-d DIR)");
		cli_usage(stderr);
		return EXIT_TROUBLE + 1;
	}
	o->model = argv[0];
	o->qmodel = argc == 2 ? argv[1] : NULL;
	if (o->qmodel && (o->tol_given || o->save_dir)) {
		cli_warn("%s: only with one model", o->save_dir ?
		    "--save-outputs" : "--rtol and --atol");
		cli_usage(stderr);
		return EXIT_TROUBLE + 1;
	}
	if (!o->qmodel && (o->per_tensor || o->plot)) {
		cli_warn("%s: needs MODEL and QMODEL", o->plot ? "--plot" :
		    "--per-tensor");
		cli_usage(stderr);
		return EXIT_TROUBLE + 1;
	}
	if (o->plot)
		o->per_tensor = 1;
	return 0;
}

int
main(int argc, char **argv)
{
	struct opts o = { 0 };
	int r;

	interp_reexec_bounded_spin(argv);
	cli_init(PROG, usage_text);
	cli_before_message(clear_bar);
	if ((r = parse_args(argc, argv, &o)) != 0)
		r--;	/* help, version or a usage mistake */
	else {
		outfile_cleanup_on_signals();
		r = run(&o);
	}
	free(o.dirs);
	free(o.gates);
	return cli_close_stdout() < 0 ? EXIT_TROUBLE : r;
}
