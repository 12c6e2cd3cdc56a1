/*
 * onnxq-teacher: check our kernels node by node against ONNX Runtime by
 * teacher forcing, for test/agreement.bats. Not installed.
 *
 *	onnxq-teacher [-v] [-e OPS] [-s STEPS] [-p SHARE] [-r RTOL] MODEL
 *	    DUMPDIR
 *	onnxq-teacher -f MODEL DUMPDIR
 *
 * DUMPDIR holds every tensor ONNX Runtime computed for one sample, as
 * NAME.npy (test/ort-dump.js writes it; names percent-encoded as in
 * dataset.h). Each node of the main graph runs with ORT's values of its
 * inputs (initializers from the model), and each output is compared with
 * ORT's:
 *
 *   integer outputs of QuantizeLinear: the largest difference in
 *	quantization steps and the share of elements that differ;
 *   float outputs some QuantizeLinear reads: both ours and ORT's are
 *	quantized by that QuantizeLinear (our kernel), and compared the
 *	same way, so a float op is judged by whether it lands in the same
 *	quantization step; the relative error max|a-b| / max|b| is shown;
 *   other float outputs: the relative error;
 *   other outputs (shapes, indices): exact equality.
 *
 * A node fails when an output's step difference exceeds STEPS (default 1),
 * its share of differing elements exceeds SHARE (default 1, i.e. any), a
 * float output read by no QuantizeLinear has relative error above RTOL
 * (default 1e-3), or anything else differs. Nodes whose op type is in the
 * comma-separated list OPS must agree exactly: no element may differ after
 * quantization (float outputs read by no QuantizeLinear: bit for bit).
 * Prints one line per failing
 * node (every node with -v):
 *	ok|FAIL NODE OP OUTPUT kind steps=N share=X rel=Y
 * and last
 *	teacher: N nodes, F failed, worst steps S (NODE), worst share X (NODE)
 * Exit 1 when a node failed, 2 on usage or input errors.
 *
 * With -f (free running) the whole model runs in our interpreter from the
 * graph inputs in DUMPDIR, and every QuantizeLinear output and graph
 * output is compared with ORT's as it is produced, in run order:
 *	NODE-OUTPUT kind steps=N share=X rel=Y
 * showing where the two runs part and how the difference grows. Exit 0.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dataset.h"
#include "interp.h"
#include "model.h"
#include "npy.h"
#include "ops.h"

struct opts {
	int verbose;
	double steps, share, rtol;
	const char *exact;		/* -e: op types that must agree exactly */
};

/* Whether op is an element of the comma-separated list. */
static int
in_list(const char *list, const char *op)
{
	size_t n = strlen(op);

	for (const char *p = list; p && *p; ) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (len == n && strncmp(p, op, n) == 0)
			return 1;
		p = e ? e + 1 : NULL;
	}
	return 0;
}

struct worst {
	double steps, share;
	char steps_node[256], share_node[256];
};

static const char *
dom(const Onnx__NodeProto *n)
{
	return n->domain && *n->domain && strcmp(n->domain, "ai.onnx") != 0 ?
	    n->domain : "";
}

static const Onnx__TensorProto *
find_init(const Onnx__GraphProto *g, const char *name)
{
	for (size_t i = 0; i < g->n_initializer; i++)
		if (strcmp(g->initializer[i]->name, name) == 0)
			return g->initializer[i];
	return NULL;
}

/* ORT's value of name (from DUMPDIR) or the initializer; 1 if neither. */
static int
load_value(const struct model *m, const char *dir, const char *name,
    struct tensor *t, struct err *e)
{
	const Onnx__TensorProto *tp;
	char *enc, *path;
	size_t len;
	int r;

	if (!(enc = dataset_file_name(name)))
		return err_nomem(e);
	len = strlen(dir) + strlen(enc) + 8;
	if (!(path = malloc(len))) {
		free(enc);
		return err_nomem(e);
	}
	snprintf(path, len, "%s/%s.npy", dir, enc);
	free(enc);
	if (access(path, R_OK) == 0)
		r = npy_read(path, t, e);
	else if ((tp = find_init(m->proto->graph, name)))
		r = model_tensor_read(m, tp, t, e);
	else
		r = 1;
	free(path);
	return r;
}

/* Run node n on the given inputs into out[n->n_output]. */
static int
run_node(const struct model *m, const Onnx__NodeProto *n,
    const struct tensor *const *in, struct tensor *out, struct err *e)
{
	const struct op_def *def = ops_find(dom(n), n->op_type);

	if (!def)
		return err_set(e, "no kernel for %s", n->op_type);
	return ops_run_once(def, n, model_opset(m, dom(n)), in,
	    (int)n->n_input, out, (int)n->n_output, 1, e);
}

/* The first QuantizeLinear reading name as its input 0, or NULL. */
static const Onnx__NodeProto *
quantizer_of(const Onnx__GraphProto *g, const char *name)
{
	for (size_t i = 0; i < g->n_node; i++) {
		const Onnx__NodeProto *n = g->node[i];

		if (strcmp(n->op_type, "QuantizeLinear") == 0 &&
		    n->n_input > 0 && strcmp(n->input[0], name) == 0)
			return n;
	}
	return NULL;
}

/* Largest integer difference and share of differing elements. */
static void
int_diff(const struct tensor *a, const struct tensor *b, double *steps,
    double *share)
{
	int64_t ndiff = 0;
	double worst = 0;

	for (int64_t i = 0; i < a->nelem; i++) {
		double d = fabs(tensor_get(a, i) - tensor_get(b, i));

		if (d > 0)
			ndiff++;
		if (d > worst)
			worst = d;
	}
	*steps = worst;
	*share = a->nelem ? (double)ndiff / (double)a->nelem : 0;
}

static double
rel_err(const struct tensor *a, const struct tensor *b)
{
	double diff = 0, mag = 0;

	for (int64_t i = 0; i < a->nelem; i++) {
		double x = tensor_get(a, i), y = tensor_get(b, i);

		if (isnan(x) != isnan(y))
			return INFINITY;
		if (isnan(x))
			continue;
		if (fabs(x - y) > diff)
			diff = fabs(x - y);
		if (fabs(y) > mag)
			mag = fabs(y);
	}
	return mag > 0 ? diff / mag : diff;
}

/* Quantize ours and ORT's float value of an output with q; compare. */
static int
quantized_diff(const struct model *m, const char *dir,
    const Onnx__NodeProto *q, const struct tensor *ours,
    const struct tensor *ref, double *steps, double *share, struct err *e)
{
	struct tensor params[3], qo, qr;
	const struct tensor *in[3];
	int r = -1;

	memset(params, 0, sizeof params);
	memset(&qo, 0, sizeof qo);
	memset(&qr, 0, sizeof qr);
	in[0] = NULL, in[1] = NULL, in[2] = NULL;
	for (size_t i = 1; i < q->n_input && i < 3; i++) {
		int k;

		if (!*q->input[i])
			continue;
		if ((k = load_value(m, dir, q->input[i], &params[i], e)) != 0) {
			if (k == 1)
				err_set(e, "%s: no value", q->input[i]);
			goto out;
		}
		in[i] = &params[i];
	}
	in[0] = ours;
	if (run_node(m, q, in, &qo, e) != 0)
		goto out;
	in[0] = ref;
	if (run_node(m, q, in, &qr, e) != 0)
		goto out;
	int_diff(&qo, &qr, steps, share);
	r = 0;
out:
	for (int i = 0; i < 3; i++)
		tensor_release(&params[i]);
	tensor_release(&qo);
	tensor_release(&qr);
	return r;
}

/* Compare one output; returns 1 if it agrees, 0 if not, -1 on error. */
static int
check_output(const struct model *m, const char *dir, const struct opts *o,
    const Onnx__NodeProto *n, const char *name, const struct tensor *ours,
    struct worst *w, struct err *e)
{
	const Onnx__NodeProto *q;
	struct tensor ref;
	double steps = 0, share = 0, rel = 0;
	const char *kind;
	char sa[64], sb[64];
	int ok;

	memset(&ref, 0, sizeof ref);
	switch (load_value(m, dir, name, &ref, e)) {
	case 0:
		break;
	case 1:
		err_set(e, "%s: ORT's value is missing", name);
		/* FALLTHROUGH */
	default:
		return -1;
	}
	if (ref.dtype != ours->dtype || !shape_equal(&ref, ours)) {
		printf("FAIL %s %s %s shape: ours %s %s, ORT %s %s\n",
		    n->name, n->op_type, name, dtype_name(ours->dtype),
		    shape_str(ours->rank, ours->dims, sa, sizeof sa),
		    dtype_name(ref.dtype),
		    shape_str(ref.rank, ref.dims, sb, sizeof sb));
		tensor_release(&ref);
		return 0;
	}
	if (strcmp(n->op_type, "QuantizeLinear") == 0) {
		kind = "quantized";
		int_diff(ours, &ref, &steps, &share);
		ok = steps <= o->steps && share <= o->share;
	} else if (dtype_is_float(ref.dtype) &&
	    (q = quantizer_of(m->proto->graph, name))) {
		kind = "float->q";
		rel = rel_err(ours, &ref);
		if (quantized_diff(m, dir, q, ours, &ref, &steps, &share,
		    e) != 0) {
			tensor_release(&ref);
			return -1;
		}
		ok = steps <= o->steps && share <= o->share;
	} else if (dtype_is_float(ref.dtype)) {
		kind = "float";
		rel = rel_err(ours, &ref);
		ok = rel <= o->rtol;
	} else {
		kind = "exact";
		int_diff(ours, &ref, &steps, &share);
		ok = steps == 0;
	}
	if (in_list(o->exact, n->op_type) && (share > 0 || rel > 0))
		ok = 0;
	if (steps > w->steps) {
		w->steps = steps;
		snprintf(w->steps_node, sizeof w->steps_node, "%s", n->name);
	}
	if (share > w->share) {
		w->share = share;
		snprintf(w->share_node, sizeof w->share_node, "%s", n->name);
	}
	if (!ok || o->verbose)
		printf("%s %s %s %s %s steps=%g share=%.6f rel=%.3g\n",
		    ok ? "ok" : "FAIL", n->name, n->op_type, name, kind,
		    steps, share, rel);
	tensor_release(&ref);
	return ok;
}

static int
teach(const struct model *m, const char *dir, const struct opts *o)
{
	const Onnx__GraphProto *g = m->proto->graph;
	struct worst w;
	struct err e;
	int failed = 0, nodes = 0;

	memset(&w, 0, sizeof w);
	for (size_t i = 0; i < g->n_node; i++) {
		const Onnx__NodeProto *n = g->node[i];
		size_t nin = n->n_input, nout = n->n_output;
		struct tensor *vals = calloc(nin + 1, sizeof *vals);
		const struct tensor **in = calloc(nin + 1, sizeof *in);
		struct tensor *out = calloc(nout + 1, sizeof *out);
		int bad = 0, r = 0;

		if (!vals || !in || !out) {
			fprintf(stderr, "onnxq-teacher: out of memory\n");
			exit(2);
		}
		for (size_t j = 0; j < nin && r == 0; j++) {
			if (!*n->input[j])
				continue;
			r = load_value(m, dir, n->input[j], &vals[j], &e);
			if (r == 1) {
				err_set(&e, "input %s: no value", n->input[j]);
				r = -1;
			}
			in[j] = &vals[j];
		}
		if (r == 0)
			r = run_node(m, n, in, out, &e);
		for (size_t j = 0; r == 0 && j < nout; j++) {
			int k;

			if (!*n->output[j] || !out[j].data)
				continue;
			k = check_output(m, dir, o, n, n->output[j], &out[j],
			    &w, &e);
			if (k < 0)
				r = -1;
			else if (k == 0)
				bad = 1;
		}
		if (r != 0) {
			printf("FAIL %s %s: %s\n", n->name, n->op_type, e.msg);
			bad = 1;
		}
		nodes++;
		failed += bad;
		for (size_t j = 0; j < nin; j++)
			tensor_release(&vals[j]);
		for (size_t j = 0; j < nout; j++)
			tensor_release(&out[j]);
		free(vals);
		free(in);
		free(out);
	}
	printf("teacher: %d nodes, %d failed, worst steps %g (%s), "
	    "worst share %.6f (%s)\n", nodes, failed, w.steps,
	    w.steps_node[0] ? w.steps_node : "-", w.share,
	    w.share_node[0] ? w.share_node : "-");
	return failed ? 1 : 0;
}

struct follow {
	const struct model *m;
	const char *dir;
	struct err scratch;
};

static int
is_graph_output(const Onnx__GraphProto *g, const char *name)
{
	for (size_t i = 0; i < g->n_output; i++)
		if (strcmp(g->output[i]->name, name) == 0)
			return 1;
	return 0;
}

/* Observer of the free run: compare quantized tensors and outputs. */
static int
follow_observe(void *ctx, const char *name, const struct tensor *t,
    struct err *e)
{
	struct follow *f = ctx;
	struct tensor ref;
	double steps = 0, share = 0, rel = 0;
	int quant = !dtype_is_float(t->dtype) && t->dtype != DT_INT64 &&
	    t->dtype != DT_BOOL;

	(void)e;
	if (!quant && !is_graph_output(f->m->proto->graph, name))
		return 0;
	memset(&ref, 0, sizeof ref);
	if (load_value(f->m, f->dir, name, &ref, &f->scratch) != 0)
		return 0;
	if (ref.dtype == t->dtype && shape_equal(&ref, t)) {
		if (quant)
			int_diff(t, &ref, &steps, &share);
		else
			rel = rel_err(t, &ref);
		printf("%s %s steps=%g share=%.6f rel=%.3g\n", name,
		    quant ? "quantized" : "output", steps, share, rel);
	} else
		printf("%s differs in type or shape\n", name);
	tensor_release(&ref);
	return 0;
}

/* Run the model freely on DUMPDIR's graph inputs, comparing as it goes. */
static int
free_run(const struct model *m, const char *dir)
{
	struct interp_opts io;
	struct follow f;
	struct interp *ip;
	struct tensor *in, *out;
	struct err e;
	int n, nout, r = 2;

	memset(&io, 0, sizeof io);
	f.m = m, f.dir = dir;
	io.threads = 1;
	io.observe = follow_observe;
	io.observe_ctx = &f;
	if (!(ip = interp_new(m, &io, &e))) {
		fprintf(stderr, "onnxq-teacher: %s\n", e.msg);
		return 2;
	}
	n = interp_ninputs(ip), nout = interp_noutputs(ip);
	in = calloc((size_t)n + 1, sizeof *in);
	out = calloc((size_t)nout + 1, sizeof *out);
	if (!in || !out) {
		fprintf(stderr, "onnxq-teacher: out of memory\n");
		goto done;
	}
	for (int i = 0; i < n; i++)
		if (load_value(m, dir, interp_input_name(ip, i), &in[i],
		    &e) != 0) {
			fprintf(stderr, "onnxq-teacher: input %s: %s\n",
			    interp_input_name(ip, i), e.msg);
			goto done;
		}
	if (interp_run(ip, in, out, &e) != 0) {
		fprintf(stderr, "onnxq-teacher: %s\n", e.msg);
		goto done;
	}
	r = 0;
done:
	for (int i = 0; in && i < n; i++)
		tensor_release(&in[i]);
	for (int i = 0; out && i < nout; i++)
		tensor_release(&out[i]);
	free(in);
	free(out);
	interp_free(ip);
	return r;
}

static void
usage(void)
{
	fprintf(stderr, "usage: onnxq-teacher [-fv] [-e OPS] [-s STEPS] "
	    "[-p SHARE] [-r RTOL] MODEL DUMPDIR\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	struct opts o = { 0, 1, 1, 1e-3, NULL };
	struct model *m;
	struct err e;
	int ch, r, follow = 0;

	while ((ch = getopt(argc, argv, "e:fvs:p:r:")) != -1) {
		switch (ch) {
		case 'e':
			o.exact = optarg;
			break;
		case 'f':
			follow = 1;
			break;
		case 'v':
			o.verbose = 1;
			break;
		case 's':
			o.steps = atof(optarg);
			break;
		case 'p':
			o.share = atof(optarg);
			break;
		case 'r':
			o.rtol = atof(optarg);
			break;
		default:
			usage();
		}
	}
	if (argc - optind != 2)
		usage();
	if (access(argv[optind + 1], R_OK | X_OK) != 0) {
		fprintf(stderr, "onnxq-teacher: %s: cannot read the "
		    "directory\n", argv[optind + 1]);
		return 2;
	}
	if (!(m = model_load(argv[optind], &e))) {
		fprintf(stderr, "onnxq-teacher: %s\n", e.msg);
		return 2;
	}
	if (!m->proto->graph) {
		fprintf(stderr, "onnxq-teacher: %s: no graph\n", argv[optind]);
		return 2;
	}
	r = follow ? free_run(m, argv[optind + 1]) :
	    teach(m, argv[optind + 1], &o);
	model_free(m);
	return r;
}
