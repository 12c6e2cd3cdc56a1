/*
 * onnx-verify: run a model on the samples of data directories and compare
 * its outputs with the expected ones stored there (see onnx-verify(1)).
 * Exit status follows cmp(1): 0 within tolerance, 1 outside, 2 trouble.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset.h"
#include "interp.h"
#include "model.h"
#include "outfile.h"
#include "tensor.h"

#define PROG "onnx-verify"

enum { EXIT_SAME = 0, EXIT_DIFFERENT = 1, EXIT_TROUBLE = 2 };

struct opts {
	const char **dirs;
	int ndirs;
	double rtol, atol;
	double min_snr;		/* -INFINITY: not checked */
	const char *save_dir;	/* NULL: outputs not saved */
	int threads;
	int quiet;
	const char *model;
	const char *qmodel;	/* the two-model form; NULL for one model */
};

/* A loaded model with its interpreter and the names datasets need. */
struct runner {
	struct model *m;
	struct interp *ip;
	struct dataset_spec spec;
	const char **in_names, **out_names;
	int *in_dtypes;
};

static const char usage_text[] =
    "usage: onnx-verify -d DIR [-d DIR ...] [--atol A] [--rtol R] "
    "[--min-snr DB]\n"
    "                   [--save-outputs OUTDIR] [--threads N] [--quiet] "
    "MODEL\n";

static void
usage(FILE *fp)
{
	fputs(usage_text, fp);
}

static void
warnx_(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void
runner_free(struct runner *r)
{
	interp_free(r->ip);
	model_free(r->m);
	free(r->in_names);
	free(r->out_names);
	free(r->in_dtypes);
	memset(r, 0, sizeof *r);
}

static int
runner_init(struct runner *r, const char *path, int threads, struct err *e)
{
	struct interp_opts io = { .threads = threads };
	int64_t dims[TENSOR_MAX_RANK];
	int rank, ni, no;

	memset(r, 0, sizeof *r);
	if (!(r->m = model_load(path, e)))
		return -1;
	if (!(r->ip = interp_new(r->m, &io, e))) {
		err_prefix(e, "%s", path);
		runner_free(r);
		return -1;
	}
	ni = interp_ninputs(r->ip);
	no = interp_noutputs(r->ip);
	r->in_names = calloc((size_t)ni + 1, sizeof *r->in_names);
	r->in_dtypes = calloc((size_t)ni + 1, sizeof *r->in_dtypes);
	r->out_names = calloc((size_t)no + 1, sizeof *r->out_names);
	if (!r->in_names || !r->in_dtypes || !r->out_names) {
		runner_free(r);
		return err_nomem(e);
	}
	for (int i = 0; i < ni; i++) {
		r->in_names[i] = interp_input_name(r->ip, i);
		r->in_dtypes[i] = interp_input_type(r->ip, i, &rank, dims);
	}
	for (int i = 0; i < no; i++)
		r->out_names[i] = interp_output_name(r->ip, i);
	r->spec.ninputs = ni;
	r->spec.input_names = r->in_names;
	r->spec.input_dtypes = r->in_dtypes;
	r->spec.noutputs = no;
	r->spec.output_names = r->out_names;
	return 0;
}

static void
release_all(struct tensor *t, int n)
{
	for (int i = 0; i < n; i++)
		tensor_release(&t[i]);
}

static const char *
fmt_snr(double snr, char *buf, size_t size)
{
	if (isinf(snr))
		snprintf(buf, size, "%s", snr > 0 ? "inf" : "-inf");
	else
		snprintf(buf, size, "%.1f", snr);
	return buf;
}

static const char *
fmt_err(const struct dataset_cmp *c, char *buf, size_t size)
{
	if (c->nelem == 0)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.3g", c->max_abs);
	return buf;
}

/*
 * The table, one row per output: name, samples, max_abs_err, snr_db,
 * status. Returns 1 when any output is outside tolerance or below the
 * minimum SNR.
 */
static int
report(const struct opts *o, int n, const char *const *names,
    const struct dataset_cmp *cmp)
{
	int w = (int)strlen("output"), worse = 0;
	char eb[32], sb[32];

	for (int i = 0; i < n; i++)
		if ((int)strlen(names[i]) > w)
			w = (int)strlen(names[i]);
	if (!o->quiet)
		printf("%-*s  %7s  %11s  %7s  %s\n", w, "output", "samples",
		    "max_abs_err", "snr_db", "status");
	for (int i = 0; i < n; i++) {
		const struct dataset_cmp *c = &cmp[i];
		double snr = dataset_cmp_snr(c);
		const char *status = "ok";

		if (c->nmismatch)
			status = "mismatch";
		else if (!dataset_cmp_ok(c))
			status = "fail";
		else if (snr < o->min_snr)
			status = "low-snr";
		if (strcmp(status, "ok") != 0)
			worse = 1;
		if (o->quiet)
			continue;
		printf("%-*s  %7lld  %11s  %7s  %s\n", w, names[i],
		    (long long)c->samples, fmt_err(c, eb, sizeof eb),
		    fmt_snr(snr, sb, sizeof sb), status);
		if (c->nbad && !c->nmismatch)
			warnx_("output %s: %lld of %lld elements outside tolerance "
			    "(rtol %g, atol %g)", names[i], (long long)c->nbad,
			    (long long)c->nelem, o->rtol, o->atol);
		else if (strcmp(status, "low-snr") == 0)
			warnx_("output %s: snr %.1f db is below %g db", names[i],
			    snr, o->min_snr);
	}
	return worse;
}

/* Two data directories holding samples of the same name would overwrite each other's outputs. */
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
				err_set(e, "%s and %s: same sample name, outputs would "
				    "collide", dataset_sample_name(ds, j),
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

/* One model against the expected outputs in the data directories. */
static int
run_single(const struct opts *o)
{
	struct runner r;
	struct dataset *ds = NULL;
	struct dataset_cmp *cmp = NULL;
	struct tensor *in = NULL, *out = NULL, *exp = NULL;
	struct err e;
	int ret = EXIT_TROUBLE, ni, no;

	if (runner_init(&r, o->model, o->threads, &e) < 0) {
		warnx_("%s", e.msg);
		return EXIT_TROUBLE;
	}
	ni = r.spec.ninputs;
	no = r.spec.noutputs;
	if (!(ds = dataset_open(o->dirs, o->ndirs, &e)) ||
	    (o->save_dir && check_unique_samples(ds, &e) < 0)) {
		warnx_("%s", e.msg);
		goto out;
	}
	in = calloc((size_t)ni + 1, sizeof *in);
	out = calloc((size_t)no + 1, sizeof *out);
	exp = calloc((size_t)no + 1, sizeof *exp);
	cmp = calloc((size_t)no + 1, sizeof *cmp);
	if (!in || !out || !exp || !cmp) {
		warnx_("out of memory");
		goto out;
	}
	for (int k = 0; k < no; k++)
		dataset_cmp_init(&cmp[k], o->rtol, o->atol);
	for (int s = 0; s < dataset_count(ds); s++) {
		const char *sname = dataset_sample_name(ds, s);

		if (dataset_load(ds, s, &r.spec, in, exp, &e) < 0) {
			warnx_("%s", e.msg);
			goto out;
		}
		for (int k = 0; k < no; k++)
			if (!exp[k].data) {
				warnx_("%s: no expected value for output %s", sname,
				    r.out_names[k]);
				goto out;
			}
		if (interp_run(r.ip, in, out, &e) < 0) {
			warnx_("%s: %s", sname, e.msg);
			goto out;
		}
		for (int k = 0; k < no; k++) {
			int64_t before = cmp[k].nmismatch;

			dataset_cmp_add(&cmp[k], &out[k], &exp[k]);
			if (cmp[k].nmismatch > before && !o->quiet) {
				char a[128], b[128];

				if (out[k].dtype != exp[k].dtype)
					warnx_("%s: output %s: type %s where %s was "
					    "expected", sname, r.out_names[k],
					    dtype_name(out[k].dtype), dtype_name(exp[k].dtype));
				else
					warnx_("%s: output %s: shape %s where %s was "
					    "expected", sname, r.out_names[k],
					    shape_str(out[k].rank, out[k].dims, a, sizeof a),
					    shape_str(exp[k].rank, exp[k].dims, b, sizeof b));
			}
		}
		if (o->save_dir && dataset_save(o->save_dir,
		    dataset_sample_base(ds, s), no, r.out_names, out, &e) < 0) {
			warnx_("%s", e.msg);
			goto out;
		}
		release_all(in, ni);
		release_all(out, no);
		release_all(exp, no);
	}
	ret = report(o, no, r.out_names, cmp) ? EXIT_DIFFERENT : EXIT_SAME;
out:
	if (in)
		release_all(in, ni);
	if (out)
		release_all(out, no);
	if (exp)
		release_all(exp, no);
	free(in);
	free(out);
	free(exp);
	free(cmp);
	dataset_free(ds);
	runner_free(&r);
	return ret;
}

static int
run(const struct opts *o)
{
	if (o->qmodel) {
		warnx_("comparing two models is not implemented yet");
		return EXIT_TROUBLE;
	}
	return run_single(o);
}

static int
parse_double(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return end != s && *end == '\0' && errno == 0 && !isnan(*v);
}

/* 0 to go on, or an exit status + 1 (so 1 means exit 0). */
static int
parse_args(int argc, char **argv, struct opts *o)
{
	enum { OPT_RTOL = 256, OPT_ATOL, OPT_MIN_SNR, OPT_SAVE, OPT_THREADS };
	static const struct option longopts[] = {
		{ "data", required_argument, NULL, 'd' },
		{ "rtol", required_argument, NULL, OPT_RTOL },
		{ "atol", required_argument, NULL, OPT_ATOL },
		{ "min-snr", required_argument, NULL, OPT_MIN_SNR },
		{ "save-outputs", required_argument, NULL, OPT_SAVE },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	double v;
	int c;

	o->rtol = 1e-3;
	o->atol = 1e-7;
	o->min_snr = -INFINITY;
	o->threads = 2;
	if (!(o->dirs = calloc((size_t)argc + 1, sizeof *o->dirs))) {
		warnx_("out of memory");
		return EXIT_TROUBLE + 1;
	}
	while ((c = getopt_long(argc, argv, "d:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			o->dirs[o->ndirs++] = optarg;
			break;
		case OPT_RTOL:
		case OPT_ATOL:
			if (!parse_double(optarg, &v) || v < 0 || isinf(v)) {
				warnx_("--%s: not a non-negative number: %s",
				    c == OPT_RTOL ? "rtol" : "atol", optarg);
				return EXIT_TROUBLE + 1;
			}
			*(c == OPT_RTOL ? &o->rtol : &o->atol) = v;
			break;
		case OPT_MIN_SNR:
			if (!parse_double(optarg, &v)) {
				warnx_("--min-snr: not a number: %s", optarg);
				return EXIT_TROUBLE + 1;
			}
			o->min_snr = v;
			break;
		case OPT_SAVE:
			o->save_dir = optarg;
			break;
		case OPT_THREADS:
			if (!parse_double(optarg, &v) || v < 1 || v > 256 ||
			    v != (int)v) {
				warnx_("--threads: not a count from 1 to 256: %s",
				    optarg);
				return EXIT_TROUBLE + 1;
			}
			o->threads = (int)v;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'h':
			usage(stdout);
			return EXIT_SUCCESS + 1;
		case 'V':
			printf(PROG " " ONNXQ_VERSION "\n");
			return EXIT_SUCCESS + 1;
		default:
			usage(stderr);
			return EXIT_TROUBLE + 1;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1 || argc > 2 || o->ndirs == 0) {
		if (argc < 1)
			warnx_("no model given");
		else if (argc > 2)
			warnx_("too many arguments");
		else
			warnx_("no data directory given (-d DIR)");
		usage(stderr);
		return EXIT_TROUBLE + 1;
	}
	o->model = argv[0];
	o->qmodel = argc == 2 ? argv[1] : NULL;
	return 0;
}

int
main(int argc, char **argv)
{
	struct opts o = { 0 };
	int r;

	interp_exec_passive(argv);
	if ((r = parse_args(argc, argv, &o)) != 0) {
		free(o.dirs);
		return r - 1;
	}
	outfile_cleanup_on_signals();
	r = run(&o);
	free(o.dirs);
	if (fflush(stdout) == EOF || ferror(stdout) || fclose(stdout) == EOF) {
		warnx_("stdout: write error");
		return EXIT_TROUBLE;
	}
	return r;
}
