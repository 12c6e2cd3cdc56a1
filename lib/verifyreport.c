/* verifyreport: onnx-verify's report. See verifyreport.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream.h"
#include "svgplot.h"
#include "util.h"
#include "verifyreport.h"

/* A value for the table and TSV: "-" when undefined, "inf" as such. */
static char *
fmt_num(double v, const char *f)
{
	if (isnan(v))
		return strdup("-");
	if (isinf(v))
		return strdup(v > 0 ? "inf" : "-inf");
	return str_fmt(f, v);
}

static char *
fmt_name(const char *name)
{
	return stream_escape(name);
}

/* An aligned table: columns separated by two spaces, the last not padded. */
struct table {
	int ncols;
	const char *const *head;
	const int *minw;	/* per column, may be NULL */
	const char *left;	/* 'l' for left-aligned columns */
	char **cells;		/* nrows x ncols, malloc'd strings */
	int nrows, cap;
	int nomem;		/* a cell or row could not be allocated */
};

/* Takes the row's cells; a NULL cell or no room is noted for the end. */
static void
table_add(struct table *t, char **row)
{
	size_t cap = (size_t)t->cap * (size_t)t->ncols;

	for (int c = 0; c < t->ncols; c++)
		t->nomem |= !row[c];
	if (t->nomem || array_grow(&t->cells, &cap, ((size_t)t->nrows + 1) *
	    (size_t)t->ncols - 1, sizeof *t->cells) < 0) {
		for (int c = 0; c < t->ncols; c++)
			free(row[c]);
		t->nomem = 1;
		return;
	}
	t->cap = (int)(cap / (size_t)t->ncols);
	memcpy(t->cells + (size_t)t->nrows++ * (size_t)t->ncols, row,
	    (size_t)t->ncols * sizeof *row);
}

static void
table_free(struct table *t)
{
	for (int i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	t->cells = NULL;
	t->nrows = t->cap = 0;
}

/* Print and free the table; -1 when a cell was out of memory. */
static int
table_print(struct table *t, FILE *fp, int tsv, struct err *e)
{
	int w[64];

	if (t->nomem) {
		table_free(t);
		return err_nomem(e);
	}
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
	table_free(t);
	return 0;
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


static const char *
sample_name(const struct verifyreport *rp, int64_t i)
{
	return i >= 0 && i < dataset_count(rp->ds) ?
	    dataset_sample_name(rp->ds, (int)i) : NULL;
}

static int
outputs_table(FILE *fp, const struct verifyreport *rp, struct err *e)
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
		const struct verdict_row *r = &rp->rows[i];
		const struct compare *c = &r->cmp;
		char *row[11];
		int k = 0;

		row[k++] = fmt_name(r->name);
		if (rp->two) {
			row[k++] = str_fmt("%lld", (long long)c->samples);
			row[k++] = fmt_num(compare_snr(c), "%.1f");
			row[k++] = fmt_num(compare_worst_snr(c), "%.1f");
			row[k++] = fmt_num(compare_mse(c), "%.3g");
			row[k++] = fmt_num(compare_max_abs(c), "%.3g");
			row[k++] = fmt_num(compare_cosine(c), "%.6f");
			row[k++] = fmt_num(compare_agreement(c), "%.2f");
			row[k++] = fmt_num(compare_accuracy_ref(c), "%.2f");
			row[k++] = fmt_num(compare_accuracy_x(c), "%.2f");
		} else {
			row[k++] = str_fmt("%lld", (long long)r->tol.samples);
			row[k++] = r->tol.nelem ?
			    str_fmt("%.3g", r->tol.max_abs) :
			    strdup("-");
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
		row[k++] = strdup(r->status);
		table_add(&t, row);
	}
	return table_print(&t, fp, 0, e);
}

static int
tensors_table(FILE *fp, const struct verifyreport *rp, struct err *e)
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
		row[k++] = strdup(qdqmatch_role_name(q->role));
		row[k++] = strdup(ty ? ty : "?");
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
	return table_print(&t, fp, 0, e);
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
tsv_compare(char **row, const struct verifyreport *rp,
    const struct compare *c)
{
	const char *ws = sample_name(rp, c->worst_sample);

	row[TV_SAMPLES] = str_fmt("%lld", (long long)c->samples);
	row[TV_SNR] = fmt_num(compare_snr(c), "%.9g");
	row[TV_WORST] = fmt_num(compare_worst_snr(c), "%.9g");
	row[TV_WORST_SAMPLE] = ws ? fmt_name(ws) : strdup("-");
	row[TV_MSE] = fmt_num(compare_mse(c), "%.9g");
	row[TV_MAX_ABS] = fmt_num(compare_max_abs(c), "%.9g");
	row[TV_COSINE] = fmt_num(compare_cosine(c), "%.9g");
}

static int
tsv_report(FILE *fp, const struct verifyreport *rp, struct err *e)
{
	static const char left[TV_N + 1] = "lllllllllllllllllllllll";
	struct table t = { 0 };

	t.ncols = TV_N;
	t.head = tsv_head;
	t.left = left;
	for (int i = 0; i < rp->nout; i++) {
		const struct verdict_row *r = &rp->rows[i];
		char *row[TV_N];

		for (int k = 0; k < TV_N; k++)
			row[k] = NULL;
		row[TV_KIND] = strdup("output");
		row[TV_NAME] = fmt_name(r->name);
		tsv_compare(row, rp, &r->cmp);
		row[TV_TOP1] = fmt_num(compare_agreement(&r->cmp), "%.9g");
		row[TV_ACC] = fmt_num(compare_accuracy_x(&r->cmp), "%.9g");
		row[TV_REF_ACC] = fmt_num(compare_accuracy_ref(&r->cmp),
		    "%.9g");
		if (!rp->two)
			row[TV_OUTSIDE] = str_fmt("%lld",
			    (long long)r->tol.nbad);
		row[TV_STATUS] = strdup(r->status);
		for (int k = 0; k < TV_N; k++)
			if (!row[k])
				row[k] = strdup("-");
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
		row[TV_KIND] = strdup("tensor");
		row[TV_NAME] = fmt_name(q->name);
		tsv_compare(row, rp, &pt->stats[j].carried);
		row[TV_DQ] = fmt_name(q->dq);
		row[TV_ROLE] = strdup(qdqmatch_role_name(q->role));
		row[TV_TYPE] = strdup(ty ? ty : "?");
		row[TV_ORDER] = str_fmt("%d", q->order);
		row[TV_OWN_SNR] = fmt_num(qdqerr_own_snr(pt, j), "%.9g");
		row[TV_OWN_MSE] = fmt_num(qdqerr_own_mse(pt, j), "%.9g");
		row[TV_OWN_MAX_ABS] = fmt_num(qdqerr_own_max_abs(pt, j),
		    "%.9g");
		row[TV_CLIP] = fmt_num(qdqerr_clip_pct(pt, j), "%.9g");
		row[TV_GRID] = fmt_num(qdqerr_grid_pct(pt, j), "%.9g");
		for (int k = 0; k < TV_N; k++)
			if (!row[k])
				row[k] = strdup("-");
		table_add(&t, row);
	}
	return table_print(&t, fp, 1, e);
}

static void
json_compare(FILE *fp, const struct verifyreport *rp,
    const struct compare *c, int *first)
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
json_report(FILE *fp, const struct verifyreport *rp, int worse)
{
	int first = 1;

	fputs("{", fp);
	json_skey(fp, "model", rp->model, &first);
	json_skey(fp, "qmodel", rp->qmodel, &first);
	json_key(fp, "samples", dataset_count(rp->ds), &first);
	json_skey(fp, "status", worse ? "different" : "ok", &first);
	fputs(",\n \"outputs\": [", fp);
	for (int i = 0; i < rp->nout; i++) {
		const struct verdict_row *r = &rp->rows[i];
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
			json_key(fp, "own_snr_db", qdqerr_own_snr(pt, j),
			    &first);
			json_key(fp, "own_worst_snr_db",
			    qdqerr_own_worst_snr(pt, j), &first);
			json_key(fp, "own_mse", qdqerr_own_mse(pt, j), &first);
			json_key(fp, "own_max_abs", qdqerr_own_max_abs(pt, j),
			    &first);
			json_key(fp, "clip_pct", qdqerr_clip_pct(pt, j),
			    &first);
			json_key(fp, "grid_pct", qdqerr_grid_pct(pt, j),
			    &first);
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

int
verifyreport_plot(FILE *fp, const struct qdqerr *pt, struct err *e)
{
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
	size_t na = 0, nw = 0;
	int r = -1;

	if (!x || !wx || !ax || !tips || !order ||
	    qdqerr_sort(pt, QDQERR_SORT_GRAPH, order) < 0) {
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
			if (!(tips[na++] = strdup(tip)))
				goto nomem;
		} else {
			wx[nw] = (double)i;
			wy[nw] = own;
			if (!(wtips[nw++] = strdup(tip)))
				goto nomem;
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
	r = svgplot_write(fp, &p, e);
	goto out;
nomem:
	err_nomem(e);
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

int
verifyreport_write(FILE *fp, const struct verifyreport *rp, int format,
    int worse, struct err *e)
{
	if (format == VERIFYREPORT_JSON) {
		json_report(fp, rp, worse);
		return 0;
	}
	if (format == VERIFYREPORT_TSV)
		return tsv_report(fp, rp, e);
	if (outputs_table(fp, rp, e) < 0)
		return -1;
	if (!rp->pt)
		return 0;
	putc('\n', fp);
	return tensors_table(fp, rp, e);
}
