/*
 * onnx-verify: run a model on the samples of data directories and compare
 * its outputs with the expected ones stored there, or run an fp32 model
 * and its quantized version side by side and measure what quantization
 * costs, per output and (--per-tensor) per quantized tensor. See
 * onnx-verify(1). Exit status follows cmp(1): 0 within the gates, 1
 * outside, 2 trouble.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attr.h"
#include "cli.h"
#include "compare.h"
#include "dataset.h"
#include "graph.h"
#include "interp.h"
#include "model.h"
#include "ops.h"
#include "outfile.h"
#include "prep.h"
#include "qdqerr.h"
#include "progress.h"
#include "stream.h"
#include "strmap.h"
#include "svgplot.h"
#include "tensor.h"

#define PROG "onnx-verify"

enum { EXIT_SAME = 0, EXIT_DIFFERENT = 1, EXIT_TROUBLE = 2 };
enum format { FMT_TABLE, FMT_TSV, FMT_JSON };

/* --min-snr DB (name NULL: every output) or NAME=DB. */
struct snr_gate {
	const char *name;
	double db;
};

struct opts {
	const char **dirs;
	int ndirs;
	double rtol, atol;
	int tol_given;		/* --rtol or --atol given */
	struct snr_gate *gates;
	int ngates;
	double min_agreement;	/* NaN: not checked */
	const char *labels;	/* NULL: no labels */
	int format;		/* enum format */
	const char *plot;	/* SVG path, NULL: none */
	int per_tensor;
	int sort;		/* enum sortkey */
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

/* One class index per row, for each sample. */
struct labels {
	const char *path;
	int n;
	int64_t **v;
	int64_t *count;
	long *line;		/* where sample i's labels are, for messages */
};

/* What is known of one output at the end. */
struct outrow {
	const char *name;
	struct compare cmp;	/* output (x) against reference */
	struct dataset_cmp tol;	/* the one-model form's tolerance check */
	double min_snr;		/* -INFINITY: no gate */
	const char *status;
};

static const char usage_text[] =
    "usage: onnx-verify -d DIR [-d DIR ...] [--atol A] [--rtol R] "
    "[--min-snr [NAME=]DB]\n"
    "                   [--min-agreement PCT] [--labels FILE] "
    "[--per-tensor]\n"
    "                   [--sort own|snr|graph] [--format table|tsv|json] "
    "[--plot FILE.svg]\n"
    "                   [--save-outputs OUTDIR] [--threads N] [--quiet] "
    "MODEL [QMODEL]\n";

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

static void
release_all(struct tensor *t, int n)
{
	for (int i = 0; i < n; i++)
		tensor_release(&t[i]);
}

/* Models. */

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
runner_init(struct runner *r, const char *path, int threads,
    interp_observe_fn observe, void *ctx, struct err *e)
{
	struct interp_opts io = { .threads = threads, .observe = observe,
	    .observe_ctx = ctx };
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

/* Labels. */

static void
labels_free(struct labels *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	free(l->count);
	free(l->line);
	memset(l, 0, sizeof *l);
}

/* Parse one line of class indices into a malloc'd array. */
static int
labels_line(const char *path, long lineno, char *s, int64_t **v,
    int64_t *n, struct err *e)
{
	size_t cap = 0;
	char *tok, *save, *end;

	*v = NULL;
	*n = 0;
	for (tok = strtok_r(s, " \t\r\n,", &save); tok;
	    tok = strtok_r(NULL, " \t\r\n,", &save)) {
		long long x;

		errno = 0;
		x = strtoll(tok, &end, 10);
		if (end == tok || *end || errno || x < 0) {
			free(*v);
			return err_set(e, "%s:%ld: not a class index: %.40s",
			    path, lineno, tok);
		}
		if ((size_t)*n == cap) {
			int64_t *nv = realloc(*v, (cap = cap ? 2 * cap : 4) *
			    sizeof *nv);

			if (!nv) {
				free(*v);
				return err_nomem(e);
			}
			*v = nv;
		}
		(*v)[(*n)++] = x;
	}
	return 0;
}

/*
 * One line per sample, in the order samples are taken: class indices
 * separated by blanks or commas. Empty lines and lines starting with '#'
 * are skipped.
 */
static int
labels_load(struct labels *l, const char *path, int nsamples, struct err *e)
{
	FILE *fp;
	char *line = NULL;
	size_t cap = 0;
	long lineno = 0;
	int ret = -1;

	memset(l, 0, sizeof *l);
	l->path = path;
	if (!(fp = fopen(path, "r")))
		return err_errno(e, "%s", path);
	l->v = calloc((size_t)nsamples + 1, sizeof *l->v);
	l->count = calloc((size_t)nsamples + 1, sizeof *l->count);
	l->line = calloc((size_t)nsamples + 1, sizeof *l->line);
	if (!l->v || !l->count || !l->line) {
		err_nomem(e);
		goto out;
	}
	while (getline(&line, &cap, fp) != -1) {
		char *p = line;

		lineno++;
		p += strspn(p, " \t\r\n");
		if (*p == '\0' || *p == '#')
			continue;
		if (l->n == nsamples) {
			err_set(e, "%s:%ld: more lines than the %d samples",
			    path, lineno, nsamples);
			goto out;
		}
		if (labels_line(path, lineno, p, &l->v[l->n], &l->count[l->n],
		    e) < 0)
			goto out;
		l->line[l->n++] = lineno;
	}
	if (ferror(fp)) {
		err_errno(e, "%s", path);
		goto out;
	}
	if (l->n != nsamples) {
		err_set(e, "%s: %d lines of labels for %d samples", path, l->n,
		    nsamples);
		goto out;
	}
	ret = 0;
out:
	free(line);
	fclose(fp);
	if (ret < 0)
		labels_free(l);
	return ret;
}

/* Formatting. */

static char *
xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p) {
		fputs(PROG ": out of memory\n", stderr);
		exit(EXIT_TROUBLE);
	}
	return p;
}

static char *
fmt(const char *f, ...)
{
	char buf[64];
	va_list ap;

	va_start(ap, f);
	vsnprintf(buf, sizeof buf, f, ap);
	va_end(ap);
	return xstrdup(buf);
}

/* A value for the table and TSV: "-" when undefined, "inf" as such. */
static char *
fmt_num(double v, const char *f)
{
	if (isnan(v))
		return xstrdup("-");
	if (isinf(v))
		return xstrdup(v > 0 ? "inf" : "-inf");
	return fmt(f, v);
}

static char *
fmt_name(const char *name)
{
	char *s = stream_escape(name);

	if (!s) {
		fputs(PROG ": out of memory\n", stderr);
		exit(EXIT_TROUBLE);
	}
	return s;
}

/* An aligned table: columns separated by two spaces, the last not padded. */
struct table {
	int ncols;
	const char *const *head;
	const int *minw;	/* per column, may be NULL */
	const char *left;	/* 'l' for left-aligned columns */
	char **cells;		/* nrows x ncols, malloc'd strings */
	int nrows, cap;
};

static void
table_add(struct table *t, char **row)
{
	if (t->nrows == t->cap) {
		size_t cap = t->cap ? 2 * (size_t)t->cap : 16;
		char **nc = realloc(t->cells,
		    cap * (size_t)t->ncols * sizeof *nc);

		if (!nc) {
			fputs(PROG ": out of memory\n", stderr);
			exit(EXIT_TROUBLE);
		}
		t->cells = nc;
		t->cap = (int)cap;
	}
	memcpy(t->cells + (size_t)t->nrows++ * (size_t)t->ncols, row,
	    (size_t)t->ncols * sizeof *row);
}

static void
table_print(struct table *t, FILE *fp, int tsv)
{
	int w[64];

	for (int c = 0; c < t->ncols; c++) {
		w[c] = (int)strlen(t->head[c]);
		if (t->minw && t->minw[c] > w[c])
			w[c] = t->minw[c];
		for (int r = 0; r < t->nrows; r++) {
			int l = (int)strlen(t->cells[r * t->ncols + c]);

			if (l > w[c])
				w[c] = l;
		}
	}
	for (int r = -1; r < t->nrows; r++)
		for (int c = 0; c < t->ncols; c++) {
			const char *s = r < 0 ? t->head[c] :
			    t->cells[r * t->ncols + c];
			int last = c == t->ncols - 1;

			if (tsv)
				fprintf(fp, "%s%c", s, last ? '\n' : '\t');
			else if (t->left[c] == 'l')
				fprintf(fp, "%-*s%s", last ? 0 : w[c], s,
				    last ? "\n" : "  ");
			else
				fprintf(fp, "%*s%s", w[c], s,
				    last ? "\n" : "  ");
		}
	for (int i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	t->cells = NULL;
	t->nrows = t->cap = 0;
}

/* JSON. */

static void
json_str(FILE *fp, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	fputc('"', fp);
	for (; *p; p++) {
		int n = 0;

		if (*p == '"' || *p == '\\')
			fprintf(fp, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(fp, "\\u%04x", *p);
		else if (*p < 0x80)
			fputc(*p, fp);
		else {
			/* Valid UTF-8 passes; any other byte becomes U+FFFD. */
			unsigned cp = 0;

			if (*p >= 0xc2 && *p <= 0xdf)
				n = 2, cp = *p & 0x1f;
			else if (*p >= 0xe0 && *p <= 0xef)
				n = 3, cp = *p & 0x0f;
			else if (*p >= 0xf0 && *p <= 0xf4)
				n = 4, cp = *p & 0x07;
			for (int i = 1; i < n; i++) {
				if ((p[i] & 0xc0) != 0x80) {
					n = 0;
					break;
				}
				cp = cp << 6 | (p[i] & 0x3f);
			}
			if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 &&
			    cp <= 0xdfff))) || (n == 4 && (cp < 0x10000 ||
			    cp > 0x10ffff)))
				n = 0;
			if (n == 0)
				fputs("\\ufffd", fp);
			else {
				fwrite(p, 1, (size_t)n, fp);
				p += n - 1;
			}
		}
	}
	fputc('"', fp);
}

/* null when undefined; infinities as 1e999, which parsers read as infinity. */
static void
json_num(FILE *fp, double v)
{
	if (isnan(v))
		fputs("null", fp);
	else if (isinf(v))
		fputs(v > 0 ? "1e999" : "-1e999", fp);
	else
		fprintf(fp, "%.17g", v);
}

static void
json_key(FILE *fp, const char *k, double v, int *first)
{
	fprintf(fp, "%s\"%s\": ", *first ? "" : ", ", k);
	json_num(fp, v);
	*first = 0;
}

static void
json_skey(FILE *fp, const char *k, const char *v, int *first)
{
	fprintf(fp, "%s\"%s\": ", *first ? "" : ", ", k);
	if (v)
		json_str(fp, v);
	else
		fputs("null", fp);
	*first = 0;
}

/* Reports. */

struct report {
	const struct opts *o;
	const struct dataset *ds;
	int nout;
	struct outrow *rows;
	int two;		/* the two-model form */
	int show_top1;		/* top-1 columns in the table */
	struct qdqerr *pt;	/* NULL without --per-tensor */
	int *sorted;		/* pair indices in report order */
};


static const char *
sample_name(const struct report *rp, int64_t i)
{
	return i >= 0 && i < dataset_count(rp->ds) ?
	    dataset_sample_name(rp->ds, (int)i) : NULL;
}

static void
outputs_table(const struct report *rp)
{
	static const char *const head1[] = { "output", "samples", "max_abs_err",
	    "snr_db", "top1_%", "acc_%", "ref_acc_%", "status" };
	static const int minw1[] = { 0, 7, 11, 7, 0, 0, 0, 0 };
	static const char *const head2[] = { "output", "samples", "snr_db",
	    "worst_db", "mse", "max_abs", "cosine", "top1_%", "acc_fp32_%",
	    "acc_q_%", "status" };
	const char *h1[8];
	int m1[8];
	struct table t = { 0 };
	int n1 = 0;

	if (rp->two) {
		t.ncols = 11;
		t.head = head2;
		t.left = "lrrrrrrrrrl";
	} else {
		/* The one-model table; top-1 columns only when asked for. */
		for (int c = 0; c < 8; c++) {
			if (c >= 4 && c <= 6 && !rp->show_top1)
				continue;
			h1[n1] = head1[c];
			m1[n1++] = minw1[c];
		}
		t.ncols = n1;
		t.head = h1;
		t.minw = m1;
		t.left = rp->show_top1 ? "lrrrrrrl" : "lrrrl";
	}
	for (int i = 0; i < rp->nout; i++) {
		const struct outrow *r = &rp->rows[i];
		const struct compare *c = &r->cmp;
		char *row[11];
		int k = 0;

		row[k++] = fmt_name(r->name);
		if (rp->two) {
			row[k++] = fmt("%lld", (long long)c->samples);
			row[k++] = fmt_num(compare_snr(c), "%.1f");
			row[k++] = fmt_num(compare_worst_snr(c), "%.1f");
			row[k++] = fmt_num(compare_mse(c), "%.3g");
			row[k++] = fmt_num(compare_max_abs(c), "%.3g");
			row[k++] = fmt_num(compare_cosine(c), "%.6f");
			row[k++] = fmt_num(compare_agreement(c), "%.2f");
			row[k++] = fmt_num(compare_accuracy_ref(c), "%.2f");
			row[k++] = fmt_num(compare_accuracy_x(c), "%.2f");
		} else {
			row[k++] = fmt("%lld", (long long)r->tol.samples);
			row[k++] = r->tol.nelem ? fmt("%.3g", r->tol.max_abs) :
			    xstrdup("-");
			row[k++] = fmt_num(dataset_cmp_snr(&r->tol), "%.1f");
			if (rp->show_top1) {
				row[k++] = fmt_num(compare_agreement(c),
				    "%.2f");
				row[k++] = fmt_num(compare_accuracy_x(c),
				    "%.2f");
				row[k++] = fmt_num(compare_accuracy_ref(c),
				    "%.2f");
			}
		}
		row[k++] = xstrdup(r->status);
		table_add(&t, row);
	}
	table_print(&t, stdout, 0);
}

static void
tensors_table(const struct report *rp)
{
	static const char *const head[] = { "tensor", "role", "type", "snr_db",
	    "worst_db", "mse", "max_abs", "cosine", "own_snr_db", "clip_%",
	    "grid_%" };
	struct table t = { 0 };
	const struct qdqerr *pt = rp->pt;

	t.ncols = 11;
	t.head = head;
	t.left = "lllrrrrrrrr";
	for (int i = 0; i < pt->match.npairs; i++) {
		int j = rp->sorted[i];
		const struct qdqmatch_pair *q = &pt->match.pairs[j];
		const struct compare *c = &pt->stats[j].carried;
		const char *ty = dtype_name(pt->stats[j].qtype);
		char *row[11];
		int k = 0;

		row[k++] = fmt_name(q->name);
		row[k++] = xstrdup(qdqmatch_role_name(q->role));
		row[k++] = xstrdup(ty ? ty : "?");
		row[k++] = fmt_num(qdqerr_carried_snr(pt, j), "%.1f");
		row[k++] = fmt_num(compare_worst_snr(c), "%.1f");
		row[k++] = fmt_num(compare_mse(c), "%.3g");
		row[k++] = fmt_num(compare_max_abs(c), "%.3g");
		row[k++] = fmt_num(compare_cosine(c), "%.6f");
		row[k++] = fmt_num(qdqerr_own_snr(pt, j), "%.1f");
		row[k++] = fmt_num(qdqerr_clip_pct(pt, j), "%.2f");
		row[k++] = fmt_num(qdqerr_grid_pct(pt, j), "%.1f");
		table_add(&t, row);
	}
	table_print(&t, stdout, 0);
}

/* TSV: outputs and tensors in one table, "-" where a column does not apply. */
enum {
	TV_KIND, TV_NAME, TV_SAMPLES, TV_SNR, TV_WORST, TV_WORST_SAMPLE,
	TV_MSE, TV_MAX_ABS, TV_COSINE, TV_TOP1, TV_ACC, TV_REF_ACC,
	TV_OUTSIDE, TV_STATUS, TV_DQ, TV_ROLE, TV_TYPE, TV_ORDER, TV_OWN_SNR,
	TV_OWN_MSE, TV_OWN_MAX_ABS, TV_CLIP, TV_GRID, TV_N
};

static const char *const tsv_head[TV_N] = { "kind", "name", "samples",
	"snr_db", "worst_snr_db", "worst_sample", "mse", "max_abs", "cosine",
	"top1_pct", "accuracy_pct", "ref_accuracy_pct", "outside_tol",
	"status", "dq", "role", "type", "order", "own_snr_db", "own_mse",
	"own_max_abs", "clip_pct", "grid_pct" };

static void
tsv_compare(char **row, const struct report *rp, const struct compare *c)
{
	const char *ws = sample_name(rp, c->worst_sample);

	row[TV_SAMPLES] = fmt("%lld", (long long)c->samples);
	row[TV_SNR] = fmt_num(compare_snr(c), "%.9g");
	row[TV_WORST] = fmt_num(compare_worst_snr(c), "%.9g");
	row[TV_WORST_SAMPLE] = ws ? fmt_name(ws) : xstrdup("-");
	row[TV_MSE] = fmt_num(compare_mse(c), "%.9g");
	row[TV_MAX_ABS] = fmt_num(compare_max_abs(c), "%.9g");
	row[TV_COSINE] = fmt_num(compare_cosine(c), "%.9g");
}

static void
tsv_report(const struct report *rp)
{
	static const char left[TV_N + 1] = "lllllllllllllllllllllll";
	struct table t = { 0 };

	t.ncols = TV_N;
	t.head = tsv_head;
	t.left = left;
	for (int i = 0; i < rp->nout; i++) {
		const struct outrow *r = &rp->rows[i];
		char *row[TV_N];

		for (int k = 0; k < TV_N; k++)
			row[k] = NULL;
		row[TV_KIND] = xstrdup("output");
		row[TV_NAME] = fmt_name(r->name);
		tsv_compare(row, rp, &r->cmp);
		row[TV_TOP1] = fmt_num(compare_agreement(&r->cmp), "%.9g");
		row[TV_ACC] = fmt_num(compare_accuracy_x(&r->cmp), "%.9g");
		row[TV_REF_ACC] = fmt_num(compare_accuracy_ref(&r->cmp),
		    "%.9g");
		if (!rp->two)
			row[TV_OUTSIDE] = fmt("%lld", (long long)r->tol.nbad);
		row[TV_STATUS] = xstrdup(r->status);
		for (int k = 0; k < TV_N; k++)
			if (!row[k])
				row[k] = xstrdup("-");
		table_add(&t, row);
	}
	for (int i = 0; rp->pt && i < rp->pt->match.npairs; i++) {
		const struct qdqerr *pt = rp->pt;
		int j = rp->sorted[i];
		const struct qdqmatch_pair *q = &pt->match.pairs[j];
		const char *ty = dtype_name(pt->stats[j].qtype);
		char *row[TV_N];

		for (int k = 0; k < TV_N; k++)
			row[k] = NULL;
		row[TV_KIND] = xstrdup("tensor");
		row[TV_NAME] = fmt_name(q->name);
		tsv_compare(row, rp, &pt->stats[j].carried);
		row[TV_DQ] = fmt_name(q->dq);
		row[TV_ROLE] = xstrdup(qdqmatch_role_name(q->role));
		row[TV_TYPE] = xstrdup(ty ? ty : "?");
		row[TV_ORDER] = fmt("%d", q->order);
		row[TV_OWN_SNR] = fmt_num(qdqerr_own_snr(pt, j), "%.9g");
		row[TV_OWN_MSE] = fmt_num(qdqerr_own_mse(pt, j), "%.9g");
		row[TV_OWN_MAX_ABS] = fmt_num(qdqerr_own_max_abs(pt, j),
		    "%.9g");
		row[TV_CLIP] = fmt_num(qdqerr_clip_pct(pt, j), "%.9g");
		row[TV_GRID] = fmt_num(qdqerr_grid_pct(pt, j), "%.9g");
		for (int k = 0; k < TV_N; k++)
			if (!row[k])
				row[k] = xstrdup("-");
		table_add(&t, row);
	}
	table_print(&t, stdout, 1);
}

static void
json_compare(FILE *fp, const struct report *rp, const struct compare *c,
    int *first)
{
	json_key(fp, "samples", (double)c->samples, first);
	json_key(fp, "snr_db", compare_snr(c), first);
	json_key(fp, "worst_snr_db", compare_worst_snr(c), first);
	json_skey(fp, "worst_sample", sample_name(rp, c->worst_sample), first);
	json_key(fp, "mse", compare_mse(c), first);
	json_key(fp, "max_abs", compare_max_abs(c), first);
	json_key(fp, "cosine", compare_cosine(c), first);
}

static void
json_report(const struct report *rp, int worse)
{
	const struct opts *o = rp->o;
	FILE *fp = stdout;
	int first = 1;

	fputs("{", fp);
	json_skey(fp, "model", o->model, &first);
	json_skey(fp, "qmodel", o->qmodel, &first);
	json_key(fp, "samples", dataset_count(rp->ds), &first);
	json_skey(fp, "status", worse ? "different" : "ok", &first);
	fputs(",\n \"outputs\": [", fp);
	for (int i = 0; i < rp->nout; i++) {
		const struct outrow *r = &rp->rows[i];
		const struct compare *c = &r->cmp;

		first = 1;
		fprintf(fp, "%s\n  {", i ? "," : "");
		json_skey(fp, "name", r->name, &first);
		json_compare(fp, rp, c, &first);
		json_key(fp, "top1_agreement_pct", compare_agreement(c),
		    &first);
		json_key(fp, "accuracy_pct", compare_accuracy_x(c), &first);
		json_key(fp, "ref_accuracy_pct", compare_accuracy_ref(c),
		    &first);
		if (!rp->two)
			json_key(fp, "outside_tol", (double)r->tol.nbad,
			    &first);
		json_key(fp, "min_snr_db", isinf(r->min_snr) ? NAN : r->min_snr,
		    &first);
		json_skey(fp, "status", r->status, &first);
		fputs("}", fp);
	}
	fputs("\n ]", fp);
	if (rp->pt) {
		const struct qdqerr *pt = rp->pt;

		fputs(",\n \"tensors\": [", fp);
		for (int i = 0; i < pt->match.npairs; i++) {
			int j = rp->sorted[i];
			const struct qdqmatch_pair *q = &pt->match.pairs[j];
			const struct qdqmatch_source *src = q->src < 0 ? NULL :
			    &pt->match.sources[q->src];
			const char *ty = dtype_name(pt->stats[j].qtype);

			first = 1;
			fprintf(fp, "%s\n  {", i ? "," : "");
			json_skey(fp, "name", q->name, &first);
			json_skey(fp, "dq", q->dq, &first);
			json_skey(fp, "role", qdqmatch_role_name(q->role),
			    &first);
			json_skey(fp, "type", ty, &first);
			json_key(fp, "order", q->order, &first);
			json_compare(fp, rp, &pt->stats[j].carried, &first);
			json_key(fp, "own_snr_db", qdqerr_own_snr(pt, j), &first);
			json_key(fp, "own_worst_snr_db",
			    qdqerr_own_worst_snr(pt, j), &first);
			json_key(fp, "own_mse", qdqerr_own_mse(pt, j), &first);
			json_key(fp, "own_max_abs", qdqerr_own_max_abs(pt, j),
			    &first);
			json_key(fp, "clip_pct", qdqerr_clip_pct(pt, j), &first);
			json_key(fp, "grid_pct", qdqerr_grid_pct(pt, j), &first);
			if (src && src->clamp) {
				fputs(", \"clamp\": [", fp);
				json_num(fp, src->lo);
				fputs(", ", fp);
				json_num(fp, src->hi);
				fputs("]", fp);
			} else
				fputs(", \"clamp\": null", fp);
			fputs("}", fp);
		}
		fputs("\n ],\n \"unmatched\": [", fp);
		for (int i = 0; i < pt->match.nunmatched; i++) {
			fputs(i ? ", " : "", fp);
			json_str(fp, pt->match.unmatched[i]);
		}
		fputs("]", fp);
	}
	fputs("\n}\n", fp);
}

static int
write_plot(const struct report *rp, struct err *e)
{
	const struct qdqerr *pt = rp->pt;
	size_t n = (size_t)pt->match.npairs;
	double *x = calloc(3 * n + 3, sizeof *x), *y = x ? x + n + 1 : NULL,
	    *y2 = x ? y + n + 1 : NULL;
	double *wx = calloc(2 * n + 2, sizeof *wx);
	double *wy = wx ? wx + n + 1 : NULL;
	double *ax = calloc(n + 1, sizeof *ax);
	char **tips = calloc(2 * n + 2, sizeof *tips), **wtips = tips ? tips +
	    n + 1 : NULL;
	int *order = calloc(n + 1, sizeof *order);
	struct svgplot_series s[3];
	struct svgplot p = { 0 };
	struct outfile *of = NULL;
	size_t na = 0, nw = 0;
	int r = -1;

	if (!x || !wx || !ax || !tips || !order) {
		err_nomem(e);
		goto out;
	}
	if (qdqerr_sort(pt, QDQERR_SORT_GRAPH, order) < 0) {
		err_nomem(e);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		int j = order[i];
		const struct qdqmatch_pair *q = &pt->match.pairs[j];
		const char *ty = dtype_name(pt->stats[j].qtype);
		double snr = qdqerr_carried_snr(pt, j);
		double own = qdqerr_own_snr(pt, j);
		char tip[512];

		snprintf(tip, sizeof tip, "%zu %s (%s %s): snr %.1f dB, "
		    "own %.1f dB", i, q->name, qdqmatch_role_name(q->role),
		    ty ? ty : "?", snr, own);
		if (q->role == QDQMATCH_ACT) {
			ax[na] = (double)i;
			y[na] = snr;
			y2[na] = own;
			tips[na++] = xstrdup(tip);
		} else {
			wx[nw] = (double)i;
			wy[nw] = own;
			wtips[nw++] = xstrdup(tip);
		}
	}
	s[0] = (struct svgplot_series){ "activation vs fp32", "#1f77b4",
	    SVGPLOT_LINE, na, ax, y, (const char *const *)tips };
	s[1] = (struct svgplot_series){ "activation quantized alone", "#ff7f0e",
	    SVGPLOT_DOTS, na, ax, y2, (const char *const *)tips };
	s[2] = (struct svgplot_series){ "weight/bias", "#2ca02c",
	    SVGPLOT_SQUARES, nw, wx, wy, (const char *const *)wtips };
	p.title = "SNR of quantized tensors along the graph";
	p.xlabel = "quantized tensor, in graph order";
	p.ylabel = "SNR (dB)";
	p.series = s;
	p.nseries = 3;
	if (!(of = outfile_open(rp->o->plot, e)))
		goto out;
	if (svgplot_write(outfile_fp(of), &p, e) < 0) {
		err_prefix(e, "%s", rp->o->plot);
		outfile_abort(of);
		goto out;
	}
	r = outfile_commit(of, e);
out:
	for (size_t i = 0; tips && i < 2 * n + 2; i++)
		free(tips[i]);
	free(tips);
	free(x);
	free(wx);
	free(ax);
	free(order);
	return r;
}

/* Statuses from the gates; returns 1 when some output is outside them. */
static int
judge(struct report *rp)
{
	const struct opts *o = rp->o;
	int worse = 0;

	for (int i = 0; i < rp->nout; i++) {
		struct outrow *r = &rp->rows[i];
		double snr = rp->two ? compare_snr(&r->cmp) :
		    dataset_cmp_snr(&r->tol);
		double agree = compare_agreement(&r->cmp);

		r->status = "ok";
		if (rp->two ? r->cmp.nmismatch > 0 : r->tol.nmismatch > 0)
			r->status = "mismatch";
		else if (!rp->two && !dataset_cmp_ok(&r->tol))
			r->status = "fail";
		else if (snr < r->min_snr)
			r->status = "low-snr";
		else if (!isnan(o->min_agreement) && !isnan(agree) &&
		    agree < o->min_agreement)
			r->status = "low-agreement";
		if (strcmp(r->status, "ok") != 0)
			worse = 1;
	}
	return worse;
}

/* The problems behind the statuses, on stderr. */
static void
explain(const struct report *rp)
{
	const struct opts *o = rp->o;

	for (int i = 0; i < rp->nout; i++) {
		const struct outrow *r = &rp->rows[i];

		if (!rp->two && r->tol.nbad && !r->tol.nmismatch)
			cli_warn("output %s: %lld of %lld elements outside "
			    "tolerance (rtol %g, atol %g)", r->name,
			    (long long)r->tol.nbad, (long long)r->tol.nelem,
			    o->rtol, o->atol);
		else if (strcmp(r->status, "low-snr") == 0)
			cli_warn("output %s: snr %.1f db is below %g db", r->name,
			    rp->two ? compare_snr(&r->cmp) :
			    dataset_cmp_snr(&r->tol), r->min_snr);
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

/*
 * Print the report in the chosen format; 1 when outside the gates, 0
 * within, 2 on trouble.
 */
static int
report(struct report *rp)
{
	const struct opts *o = rp->o;
	int worse = judge(rp), any_top1 = 0;
	struct err e;

	progress_end(&bar);
	for (int i = 0; i < rp->nout; i++)
		any_top1 |= rp->rows[i].cmp.rows > 0;
	if (!isnan(o->min_agreement) && !any_top1) {
		cli_warn("--min-agreement: no classifier-like output to check");
		return EXIT_TROUBLE;
	}
	if (o->labels) {
		int any = 0;

		for (int i = 0; i < rp->nout; i++)
			any |= rp->rows[i].cmp.labeled > 0;
		if (!any) {
			cli_warn("%s: no classifier-like output to check the "
			    "labels against", o->labels);
			return EXIT_TROUBLE;
		}
	}
	if (rp->pt) {
		const struct qdqmatch *m = &rp->pt->match;

		rp->sorted = calloc((size_t)m->npairs + 1, sizeof *rp->sorted);
		if (!rp->sorted || qdqerr_sort(rp->pt, o->sort,
		    rp->sorted) < 0) {
			cli_warn("out of memory");
			return EXIT_TROUBLE;
		}
		if (m->nunmatched && !o->quiet)
			cli_warn("per-tensor: %d quantized tensors not matched "
			    "to the fp32 model (first: %s)", m->nunmatched,
			    m->unmatched[0]);
	}
	if (o->plot && write_plot(rp, &e) < 0) {
		cli_warn("%s", e.msg);
		return EXIT_TROUBLE;
	}
	if (o->quiet)
		return worse;
	if (o->format == FMT_JSON)
		json_report(rp, worse);
	else if (o->format == FMT_TSV)
		tsv_report(rp);
	else {
		outputs_table(rp);
		if (rp->pt) {
			putchar('\n');
			tensors_table(rp);
		}
	}
	explain(rp);
	return worse;
}

/* Runs. */

/*
 * The fp32 model as onnx-qdq-insert saw it (BatchNormalization folded),
 * for its weights. TODO: the model-loading helper lib/model.h is getting.
 */
static struct model *
load_prepped(const char *path, struct err *e)
{
	struct model *m = model_load(path, e);

	if (m && prep_model(m, NULL, e) < 0) {
		model_free(m);
		return NULL;
	}
	return m;
}

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

/* Set each output's SNR gate; an unknown NAME is trouble. */
static int
set_gates(const struct opts *o, struct outrow *rows, int n, struct err *e)
{
	for (int i = 0; i < n; i++)
		rows[i].min_snr = -INFINITY;
	for (int g = 0; g < o->ngates; g++) {
		int found = 0;

		for (int i = 0; i < n; i++)
			if (!o->gates[g].name ||
			    strcmp(o->gates[g].name, rows[i].name) == 0) {
				rows[i].min_snr = o->gates[g].db;
				found = 1;
			}
		if (!found)
			return err_set(e, "--min-snr: no output %s",
			    o->gates[g].name);
	}
	return 0;
}

/* Top-1 (and labels) of one output of one sample; -1 on a labels problem. */
static int
add_top1(struct outrow *r, const struct tensor *x, const struct tensor *ref,
    const struct labels *lb, int s, struct err *e)
{
	const int64_t *l = NULL;
	int64_t nl = 0, rows;

	if (!compare_is_classifier(ref))
		return 0;
	rows = compare_rows(ref);
	if (lb && lb->path) {
		l = lb->v[s];
		nl = lb->count[s];
		/* Labels of another count are another output's. */
		if (nl != rows)
			l = NULL;
		for (int64_t i = 0; l && i < nl; i++)
			if (l[i] >= ref->dims[ref->rank - 1])
				return err_set(e, "%s:%ld: class %lld out of "
				    "range for output %s (%lld classes)",
				    lb->path, lb->line[s], (long long)l[i],
				    r->name,
				    (long long)ref->dims[ref->rank - 1]);
	}
	compare_add_top1(&r->cmp, x, ref, l, l ? nl : 0);
	return 0;
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
	struct outrow *rows = NULL;
	struct tensor *in = NULL, *out = NULL, *exp = NULL;
	struct labels lb = { 0 };
	struct report rp = { 0 };
	struct err e;
	int ret = EXIT_TROUBLE, ni, no;

	if (runner_init(&r, o->model, o->threads, NULL, NULL, &e) < 0) {
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
	for (int k = 0; k < no; k++) {
		rows[k].name = r.out_names[k];
		compare_init(&rows[k].cmp);
		dataset_cmp_init(&rows[k].tol, o->rtol, o->atol);
	}
	if (set_gates(o, rows, no, &e) < 0) {
		cli_warn("%s", e.msg);
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
		for (int k = 0; k < no; k++)
			if (!exp[k].data) {
				cli_warn("%s: no expected value for output %s",
				    sname, r.out_names[k]);
				goto out;
			}
		if (interp_run(r.ip, in, out, &e) < 0) {
			cli_warn("%s: %s", sname, e.msg);
			goto out;
		}
		for (int k = 0; k < no; k++) {
			int64_t before = rows[k].tol.nmismatch;

			tensor_as_bfloat16(&exp[k], out[k].dtype);
			dataset_cmp_add(&rows[k].tol, &out[k], &exp[k]);
			compare_add(&rows[k].cmp, &out[k], &exp[k], s);
			if (add_top1(&rows[k], &out[k], &exp[k], &lb, s,
			    &e) < 0) {
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
		release_all(in, ni);
		release_all(out, no);
		release_all(exp, no);
		progress_update(&bar, s + 1);
	}
	rp.o = o;
	rp.ds = ds;
	rp.nout = no;
	rp.rows = rows;
	rp.show_top1 = o->labels || !isnan(o->min_agreement);
	ret = report(&rp);
out:
	progress_end(&bar);
	if (in)
		release_all(in, ni);
	if (out)
		release_all(out, no);
	if (exp)
		release_all(exp, no);
	free(in);
	free(out);
	free(exp);
	free(rows);
	free(rp.sorted);
	labels_free(&lb);
	dataset_free(ds);
	runner_free(&r);
	return ret;
}

/* Where each of a's names is in b's list; -1 with a message when missing. */
static int
match_names(const char *what, const char *bpath, const char *const *a, int na,
    const char *const *b, int nb, int *pos, struct err *e)
{
	for (int i = 0; i < na; i++) {
		pos[i] = -1;
		for (int j = 0; j < nb; j++)
			if (strcmp(a[i], b[j]) == 0) {
				pos[i] = j;
				break;
			}
		if (pos[i] < 0)
			return err_set(e, "%s: no %s %s, as the fp32 model has",
			    bpath, what, a[i]);
	}
	return 0;
}

/* MODEL and QMODEL side by side on the same samples. */
static int
run_pair(const struct opts *o)
{
	struct runner f = { 0 }, q = { 0 };
	struct qdqerr pt = { 0 }, *ptp = NULL;
	struct model *pm = NULL;
	struct dataset *ds = NULL;
	struct outrow *rows = NULL;
	struct tensor *in = NULL, *qin = NULL, *fout = NULL, *qout = NULL;
	struct labels lb = { 0 };
	struct report rp = { 0 };
	struct err e;
	int *inpos = NULL, *outpos = NULL;
	int ret = EXIT_TROUBLE, ni = 0, no = 0, nqo = 0;

	if (runner_init(&f, o->model, o->threads, o->per_tensor ?
	    qdqerr_observe_fp32 : NULL, &pt, &e) < 0 ||
	    runner_init(&q, o->qmodel, o->threads, o->per_tensor ?
	    qdqerr_observe_q : NULL, &pt, &e) < 0) {
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
	if (match_names("input", o->qmodel, q.in_names, ni, f.in_names, ni,
	    inpos, &e) < 0 ||
	    match_names("output", o->qmodel, f.out_names, no, q.out_names, nqo,
	    outpos, &e) < 0) {
		cli_warn("%s", e.msg);
		goto out;
	}
	for (int k = 0; k < no; k++) {
		rows[k].name = f.out_names[k];
		compare_init(&rows[k].cmp);
	}
	if (!(ds = dataset_open(o->dirs, o->ndirs, &e)) ||
	    (o->labels &&
	    labels_load(&lb, o->labels, dataset_count(ds), &e) < 0) ||
	    set_gates(o, rows, no, &e) < 0) {
		cli_warn("%s", e.msg);
		goto out;
	}
	if (o->per_tensor) {
		if (!(pm = load_prepped(o->model, &e)) ||
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
			if (add_top1(&rows[k], x, &fout[k], &lb, s, &e) < 0) {
				cli_warn("%s", e.msg);
				goto out;
			}
		}
		release_all(in, ni);
		release_all(fout, no);
		release_all(qout, nqo);
		progress_update(&bar, s + 1);
	}
	rp.o = o;
	rp.ds = ds;
	rp.nout = no;
	rp.rows = rows;
	rp.two = 1;
	rp.pt = ptp;
	ret = report(&rp);
out:
	progress_end(&bar);
	if (ptp)
		qdqerr_drop_held(ptp);
	if (in)
		release_all(in, ni);
	if (fout)
		release_all(fout, no);
	if (qout)
		release_all(qout, nqo);
	free(in);
	free(qin);
	free(fout);
	free(qout);
	free(inpos);
	free(outpos);
	free(rows);
	free(rp.sorted);
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

static int
parse_double(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return end != s && *end == '\0' && errno == 0 && !isnan(*v);
}

/* "DB" or "NAME=DB" (the last '=' splits, so names may hold '='). */
static int
parse_gate(char *arg, struct snr_gate *g)
{
	char *eq = strrchr(arg, '=');

	g->name = NULL;
	if (parse_double(arg, &g->db))
		return 1;
	if (!eq || eq == arg || !parse_double(eq + 1, &g->db))
		return 0;
	*eq = '\0';
	g->name = arg;
	return 1;
}

/* 0 to go on, or an exit status + 1 (so 1 means exit 0). */
static int
parse_args(int argc, char **argv, struct opts *o)
{
	enum { OPT_RTOL = 256, OPT_ATOL, OPT_MIN_SNR, OPT_SAVE, OPT_THREADS,
	    OPT_MIN_AGREE, OPT_LABELS, OPT_FORMAT, OPT_PLOT, OPT_PER_TENSOR,
	    OPT_SORT };
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
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	double v;
	int c;

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
			if (!parse_double(optarg, &v) || v < 0 || isinf(v)) {
				cli_warn("--%s: not a non-negative number: %s",
				    c == OPT_RTOL ? "rtol" : "atol", optarg);
				return EXIT_TROUBLE + 1;
			}
			*(c == OPT_RTOL ? &o->rtol : &o->atol) = v;
			o->tol_given = 1;
			break;
		case OPT_MIN_SNR:
			if (!parse_gate(optarg, &o->gates[o->ngates])) {
				cli_warn("--min-snr: not a number or "
				    "NAME=number: %s", optarg);
				return EXIT_TROUBLE + 1;
			}
			o->ngates++;
			break;
		case OPT_MIN_AGREE:
			if (!parse_double(optarg, &v) || v < 0 || v > 100) {
				cli_warn("--min-agreement: not a percentage "
				    "from 0 to 100: %s", optarg);
				return EXIT_TROUBLE + 1;
			}
			o->min_agreement = v;
			break;
		case OPT_LABELS:
			o->labels = optarg;
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "table") == 0)
				o->format = FMT_TABLE;
			else if (strcmp(optarg, "tsv") == 0)
				o->format = FMT_TSV;
			else if (strcmp(optarg, "json") == 0)
				o->format = FMT_JSON;
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
			if (!parse_double(optarg, &v) || v < 1 || v > 256 ||
			    v != (int)v) {
				cli_warn("--threads: not a count from 1 to "
				    "256: %s", optarg);
				return EXIT_TROUBLE + 1;
			}
			o->threads = (int)v;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'h':
			cli_usage(stdout);
			return EXIT_SUCCESS + 1;
		case 'V':
			printf(PROG " " ONNXQ_VERSION "\n");
			return EXIT_SUCCESS + 1;
		default:
			cli_bad_option(c, argv, longopts);
			return EXIT_TROUBLE + 1;
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
	if ((r = parse_args(argc, argv, &o)) != 0) {
		free(o.dirs);
		free(o.gates);
		return r - 1;
	}
	outfile_cleanup_on_signals();
	r = run(&o);
	free(o.dirs);
	free(o.gates);
	errno = 0;
	if (fflush(stdout) == EOF || ferror(stdout) || fclose(stdout) == EOF) {
		/* say why, as the programs writing through outfile do */
		int why = errno;

		cli_warn("<stdout>: write error%s%s", why ? ": " : "",
		    why ? strerror(why) : "");
		return EXIT_TROUBLE;
	}
	return r;
}
