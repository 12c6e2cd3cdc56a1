/* mixeval: see mixeval.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compare.h"
#include "dataset.h"
#include "foldcache.h"
#include "interp.h"
#include "mixcache.h"
#include "mixeval.h"
#include "mixskel.h"
#include "model.h"
#include "prep.h"
#include "qdq.h"
#include "qdqwcache.h"
#include "stream.h"
#include "strmap.h"
#include "tensor.h"
#include "util.h"

/* The evaluation data and the fp32 outputs, computed once. */
struct mixeval {
	struct mixeval_opts o;
	int nsamples;
	int ninputs, noutputs;
	char **out_names;
	char **probe_names;	/* noutputs */
	char **probe_nodes;	/* the Softmax writing the output, or NULL */
	size_t *probe_at;	/* its index in the last model (probes_in) */
	struct tensor *inputs;	/* nsamples * ninputs */
	struct tensor *ref;	/* nsamples * noutputs */
	struct tensor *probe_ref;	/* nsamples * noutputs */
	int classifier;		/* some output is classifier-like */
	int *order;		/* samples, the noisiest first (rank_samples) */
	double *signal;		/* each output's sum of squares, all samples */
	double *psignal;	/* the same of each probe (at_probes) */
	double *sample_noise;	/* each sample's squared error, last run */
	struct model *base;	/* the model after prep_model() */
	void *skel;		/* base packed without its initializers'
				   bytes, which each model borrows */
	size_t nskel;
	struct model *raised;	/* base raised ahead (qdq_raise_ahead()),
				   its initializers' bytes base's; or NULL */
	void *rskel;		/* and packed as skel is */
	size_t nrskel;
	int raise_tried;
	Onnx__TensorProto **lent;	/* the initializers of the model
					   now that hold base's bytes, or
					   wcache's (qdq_opts.lent) */
	size_t nlent, caplent;
	struct qdq_plan *facts;	/* the stream's stat, weight and bias
				   records, which every plan goes by */
	struct qdq_wcache *wcache;	/* the weights, quantized once */
	struct foldcache *folded;	/* and dequantized once */
	struct mixcache *cache;		/* the reference run's activations */
	struct mixskels *skels;		/* models made up to their
					   activations (make_model()) */
	struct strmap *qp_ix;		/* read_once()'s records */
	struct qparam_rec *qp;
	size_t nqp, capqp;
	int record;			/* the next run is the reference */
	struct mixeval_profile prof;
};

double
mixeval_cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* What the interpreter's callbacks need: the sample run. */
struct watch {
	struct mixeval *ev;
	int sample;
};

/* ev->raised, its initializers' bytes given back to base first. */
static void
free_raised(struct mixeval *ev)
{
	const Onnx__GraphProto *b = ev->base ? ev->base->proto->graph : NULL;
	Onnx__GraphProto *g;

	if (ev->raised == NULL)
		return;
	g = ev->raised->proto->graph;
	for (size_t i = 0; b && i < g->n_initializer && i < b->n_initializer;
	    i++)
		if (g->initializer[i]->raw_data.data ==
		    b->initializer[i]->raw_data.data) {
			g->initializer[i]->raw_data.data = NULL;
			g->initializer[i]->raw_data.len = 0;
		}
	model_free(ev->raised);
	free(ev->rskel);
	ev->raised = NULL;
	ev->rskel = NULL;
}

static void
evaldata_release(struct mixeval *ev)
{
	/* Also after a failed evaldata_init(): any array may be NULL. */
	for (int i = 0; ev->inputs && i < ev->nsamples * ev->ninputs; i++)
		tensor_release(&ev->inputs[i]);
	for (int i = 0; i < ev->nsamples * ev->noutputs; i++) {
		if (ev->ref)
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
	free(ev->probe_at);
	free(ev->inputs);
	free(ev->ref);
	free(ev->probe_ref);
	free(ev->order);
	free(ev->signal);
	free(ev->psignal);
	free(ev->sample_noise);
	free(ev->out_names);
	free(ev->probe_names);
	free_raised(ev);
	model_free(ev->base);
	free(ev->skel);
	free(ev->lent);
	for (size_t i = 0; i < ev->nqp; i++)
		qparam_rec_release(&ev->qp[i]);
	free(ev->qp);
	strmap_free(ev->qp_ix);
	qdq_plan_free(ev->facts);
	qdq_wcache_free(ev->wcache);
	foldcache_free(ev->folded);
	mixcache_free(ev->cache);
}

/*
 * Make name a graph output of m as well, so that runs give it back
 * without an observer (which would keep the interpreter from fusing
 * chains of elementwise nodes): its position among m's outputs, or -1
 * with e.
 */
static int
expose(struct model *m, const char *name, struct err *e)
{
	Onnx__GraphProto *g = m->proto->graph;
	Onnx__ValueInfoProto **v, *vi;

	for (size_t i = 0; i < g->n_output; i++)
		if (strcmp(str_or_empty(g->output[i]->name), name) == 0)
			return (int)i;
	if ((v = realloc(g->output, (g->n_output + 1) * sizeof *v)) == NULL)
		return err_nomem(e);
	g->output = v;
	if ((vi = malloc(sizeof *vi)) == NULL)
		return err_nomem(e);
	onnx__value_info_proto__init(vi);
	if ((vi->name = strdup(name)) == NULL) {
		free(vi);
		return err_nomem(e);
	}
	g->output[g->n_output] = vi;
	return (int)g->n_output++;
}

/* The probes' positions among m's outputs (ppos), exposed; -1 with e. */
static int
expose_probes(const struct mixeval *ev, struct model *m,
    const char *const *names, int *ppos, struct err *e)
{
	for (int k = 0; k < ev->noutputs; k++)
		if ((ppos[k] = expose(m, names[k], e)) < 0)
			return -1;
	return 0;
}

/*
 * The probe of each graph output of m: the output, or the input of the
 * named Softmax that writes it (found by its name in the quantized model,
 * where it reads a DequantizeLinear).
 */
static int
find_probes(struct mixeval *ev, const struct model *m, struct err *e)
{
	const Onnx__GraphProto *g = m->proto->graph;

	if ((ev->probe_names = calloc((size_t)ev->noutputs + 1,
	    sizeof *ev->probe_names)) == NULL ||
	    (ev->probe_nodes = calloc((size_t)ev->noutputs + 1,
	    sizeof *ev->probe_nodes)) == NULL ||
	    (ev->probe_at = calloc((size_t)ev->noutputs + 1,
	    sizeof *ev->probe_at)) == NULL)
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

/* Is node i of g the probe node named so (with an input)? */
static int
is_probe_node(const Onnx__GraphProto *g, size_t i, const char *name)
{
	return i < g->n_node && g->node[i]->name &&
	    strcmp(g->node[i]->name, name) == 0 && g->node[i]->n_input > 0;
}

/*
 * The probes' names in model m (names[k] points into m or ev): the
 * input of the last node named as the probe node. Where it was in the
 * last model (ev->probe_at) is tried first: then only the nodes after
 * it are looked at.
 */
static void
probes_in(struct mixeval *ev, const struct model *m, const char **names)
{
	const Onnx__GraphProto *g = m->proto->graph;

	for (int k = 0; k < ev->noutputs; k++) {
		const char *name = ev->probe_nodes[k];
		size_t at = ev->probe_at[k], found = g->n_node, i = 0;

		names[k] = ev->probe_names[k];
		if (name == NULL)
			continue;
		if (is_probe_node(g, at, name))
			found = at, i = at + 1;
		for (; i < g->n_node; i++)
			if (is_probe_node(g, i, name))
				found = i;
		if (found < g->n_node) {
			names[k] = g->node[found]->input[0];
			ev->probe_at[k] = found;
		}
	}
}

/*
 * Sample s's probes, of the fp32 run's outputs out (the probes at ppos):
 * taken from out when a probe is an output of its own (exposed: the
 * logits before a final Softmax, a megabyte a sample on PaddleOCR rec),
 * copied when it is one of the graph outputs, which the caller takes.
 */
static int
take_probes(struct mixeval *ev, int s, struct tensor *out, const int *ppos,
    struct err *e)
{
	struct tensor *pr = &ev->probe_ref[s * ev->noutputs];

	for (int k = 0; k < ev->noutputs; k++) {
		const struct tensor *from = &out[ppos[k]];

		/* (two outputs may share a probe: the second copies it) */
		for (int j = 0; j < k; j++)
			if (ppos[j] == ppos[k])
				from = &pr[j];
		if (ppos[k] >= ev->noutputs && from == &out[ppos[k]])
			tensor_move(&pr[k], &out[ppos[k]]);
		else if (tensor_copy(&pr[k], from, e) < 0)
			return -1;
	}
	return 0;
}

static int
evaldata_init(struct mixeval *ev, const struct mixeval_opts *o,
    struct err *e)
{
	struct interp_opts io = { .threads = o->threads };
	const char **in_names = NULL;
	int *in_dtypes = NULL, *ppos = NULL, nout = 0;
	struct tensor *out = NULL;
	struct dataset_spec spec;
	struct dataset *ds = NULL;
	struct interp *ip = NULL;
	struct model *m = NULL;
	int64_t dims[TENSOR_MAX_RANK];
	int rank, rc = -1;
	size_t n;

	if ((m = model_load_mem(o->model, o->len, o->name, o->dir, e)) == NULL ||
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
	if ((ppos = calloc((size_t)ev->noutputs + 1, sizeof *ppos)) == NULL) {
		err_nomem(e);
		goto out;
	}
	if (expose_probes(ev, m, (const char *const *)ev->probe_names, ppos,
	    e) < 0 || (ip = interp_new(m, &io, e)) == NULL)
		goto out;
	nout = interp_noutputs(ip);
	if (nout != (int)m->proto->graph->n_output) {
		err_set(e, "%s: %d outputs, %zu in the graph", o->name,
		    nout, m->proto->graph->n_output);
		goto out;
	}
	if ((out = calloc((size_t)nout + 1, sizeof *out)) == NULL) {
		err_nomem(e);
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
	ev->psignal = calloc((size_t)ev->noutputs + 1, sizeof *ev->psignal);
	ev->sample_noise = calloc((size_t)ev->nsamples + 1,
	    sizeof *ev->sample_noise);
	if (!in_names || !in_dtypes || !ev->inputs || !ev->ref ||
	    !ev->probe_ref || !ev->order || !ev->signal || !ev->psignal ||
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
		if (dataset_load(ds, s, &spec, in, NULL, e) < 0)
			goto out;
		if (interp_run(ip, in, out, e) < 0) {
			err_prefix(e, "%s: %s", dataset_sample_name(ds, s),
			    o->name);
			goto out;
		}
		if (take_probes(ev, s, out, ppos, e) < 0)
			goto out;
		/* the probes' signal: only a search by them reads it */
		for (int k = 0; o->at_probes && k < ev->noutputs; k++) {
			struct tensor *pr = &ev->probe_ref[s * ev->noutputs + k];
			struct compare c;

			compare_init(&c);
			compare_add(&c, pr, pr, s);
			ev->psignal[k] += c.signal;
		}
		for (int k = 0; k < ev->noutputs; k++) {
			struct compare c;

			tensor_move(&ref[k], &out[k]);
			compare_init(&c);
			compare_add(&c, &ref[k], &ref[k], s);
			ev->signal[k] += c.signal;
			if (compare_is_classifier(&ref[k]))
				ev->classifier = 1;
		}
		tensor_release_n(out, (size_t)nout);
	}
	rc = 0;
out:
	tensor_release_n(out, (size_t)nout);
	free(out);
	free(ppos);
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

/* interp_run_skip()'s values: the reference run's, of this sample. */
static const struct tensor *
cached_of(void *ctx, const char *name)
{
	struct watch *w = ctx;

	return mixcache_get(w->ev->cache, w->sample, name);
}

/* interp_run_keep(): the recorded run's values go to the cache as they are. */
static void
keep_value(void *ctx, const char *name, struct tensor *t)
{
	struct watch *w = ctx;

	mixcache_keep(w->ev->cache, w->sample, name, t);
}

/*
 * Run sample s: only the nodes that differ from the reference run when
 * it has the sample (skip: the nodes that do not), else all of them.
 * The reference run (w->recording) gives its values to the cache,
 * outputs included.
 */
static int
run_sample(struct mixeval *ev, struct interp *ip, struct watch *w, int s,
    const unsigned char *skip, int recording, struct tensor *out,
    struct err *e)
{
	const struct tensor *in = &ev->inputs[s * ev->ninputs];

	if (recording) {
		if (interp_run_keep(ip, in, keep_value, w, out, e) < 0)
			return -1;
		for (int j = 0; j < interp_noutputs(ip); j++)
			mixcache_record(ev->cache, s, interp_output_name(ip, j),
			    &out[j]);
		return 0;
	}
	if (skip == NULL || !mixcache_has(ev->cache, s))
		return interp_run(ip, in, out, e);
	return interp_run_skip(ip, in, skip, cached_of, w, out, e);
}

/*
 * Mark in skip the nodes of m that the probes (names[0..n)) do not
 * need: their outputs are the reference run's, unread. The count of
 * those newly marked, or -1 with e. (m is sorted: readers come after.)
 * None when a node holds a subgraph: it reads outer values its inputs do
 * not list.
 */
static int
skip_past_probes(const struct model *m, const char *const *names, int n,
    unsigned char *skip, struct err *e)
{
	const Onnx__GraphProto *g = m->proto->graph;
	struct strmap *need;
	int count = 0;

	for (size_t i = 0; i < g->n_node; i++)
		for (size_t j = 0; j < g->node[i]->n_attribute; j++)
			if (g->node[i]->attribute[j]->g ||
			    g->node[i]->attribute[j]->n_graphs)
				return 0;
	if ((need = strmap_new()) == NULL)
		return err_nomem(e);
	for (int k = 0; k < n; k++)
		if (strmap_put(need, names[k], 1) < 0)
			goto nomem;
	for (size_t i = g->n_node; i-- > 0; ) {
		const Onnx__NodeProto *nd = g->node[i];
		int needed = 0;

		for (size_t j = 0; !needed && j < nd->n_output; j++)
			needed = nd->output[j][0] && strmap_get(need,
			    nd->output[j], NULL);
		if (!needed) {
			count += !skip[i];
			skip[i] = 1;
			continue;
		}
		for (size_t j = 0; j < nd->n_input; j++)
			if (nd->input[j][0] && strmap_put(need, nd->input[j],
			    1) < 0)
				goto nomem;
	}
	strmap_free(need);
	return count;
nomem:
	strmap_free(need);
	return err_nomem(e);
}

/*
 * Each evaluation's model is ev->skel unpacked, its initializers given
 * base's bytes rather than copies (ten megabytes on PaddleOCR rec, most
 * of which qdq_apply() drops again): nothing writes them (qdq_apply()
 * adds new initializers and removes old ones, the interpreter reads
 * them), and they go back before the model is freed.
 */
static int
lend_data(struct mixeval *ev, const struct model *from, struct model *m,
    struct err *e)
{
	const Onnx__GraphProto *b = from->proto->graph;
	Onnx__GraphProto *g = m->proto->graph;

	ev->nlent = 0;
	if (g->n_initializer != b->n_initializer)
		return err_set(e, "%s: %zu initializers, the prepared model "
		    "has %zu", ev->o.name, g->n_initializer, b->n_initializer);
	if (ev->caplent < g->n_initializer) {
		free(ev->lent);
		ev->caplent = 0;
		if ((ev->lent = malloc(g->n_initializer *
		    sizeof *ev->lent)) == NULL)
			return err_nomem(e);
		ev->caplent = g->n_initializer;
	}
	for (size_t i = 0; i < g->n_initializer; i++) {
		Onnx__TensorProto *t = g->initializer[i];

		if (b->initializer[i]->raw_data.len == 0)
			continue;
		free(t->raw_data.data);	/* none: it was packed empty */
		t->raw_data = b->initializer[i]->raw_data;
		ev->lent[ev->nlent++] = t;
	}
	return 0;
}

/* Initializer t gives base's bytes back, if it has them. */
static void
give_back(struct mixeval *ev, Onnx__TensorProto *t)
{
	for (size_t i = 0; i < ev->nlent; i++)
		if (ev->lent[i] == t) {
			t->raw_data.data = NULL;
			t->raw_data.len = 0;
			ev->lent[i] = ev->lent[--ev->nlent];
			return;
		}
}

/*
 * qdq_opts.lent and the skeletons' lender: an initializer holding bytes
 * ev does not own there (wcache's, or the prepared or raised model's).
 */
static int
lent_initializer(void *ctx, Onnx__TensorProto *t)
{
	struct mixeval *ev = ctx;

	if (array_grow(&ev->lent, &ev->caplent, ev->nlent,
	    sizeof *ev->lent) < 0)
		return -1;
	ev->lent[ev->nlent++] = t;
	return 0;
}

/*
 * mixcache_begin_lent(): does t hold lent bytes, base's or wcache's,
 * which stay where they are for ev's life (qdqwcache.h)?
 */
static int
is_lent(void *ctx, const Onnx__TensorProto *t)
{
	struct mixeval *ev = ctx;

	for (size_t i = 0; i < ev->nlent; i++)
		if (ev->lent[i] == t)
			return 1;
	return 0;
}

/*
 * foldcache_set_stable(): are data the bytes of an initializer of the
 * model now that holds lent bytes (is_lent()), which stay for ev's life?
 */
static int
lent_bytes(void *ctx, const void *data)
{
	struct mixeval *ev = ctx;

	for (size_t i = 0; i < ev->nlent; i++)
		if (ev->lent[i]->raw_data.data == data)
			return 1;
	return 0;
}

/* qdq_opts.removed: an initializer qdq_apply() removed. */
static void
drop_initializer(void *ctx, Onnx__TensorProto *t)
{
	give_back(ctx, t);
	protobuf_c_message_free_unpacked(&t->base, NULL);
}

static void
free_model(struct mixeval *ev, struct model *m)
{
	for (size_t i = 0; i < ev->nlent; i++) {
		ev->lent[i]->raw_data.data = NULL;
		ev->lent[i]->raw_data.len = 0;
	}
	ev->nlent = 0;
	model_free(m);
}

static int check_model(struct mixeval *, const struct qdq_plan *,
    const struct model *, struct err *);
static int raise_ahead(struct mixeval *, struct err *);

/* mixskel_lender.free_model */
static void
free_lent_model(void *ctx, struct model *m)
{
	free_model(ctx, m);
}

/*
 * The model of plan made whole: skel unpacked, lent base's bytes,
 * rewritten by qdq_apply() in two steps; of ev->raised when raised. The
 * model after the first step is kept as a skeleton (mixskel.h) when all
 * its weights came from wcache, lent as a later whole build would lend
 * them (one whose weights were quantized here holds copies).
 */
static struct model *
make_whole(struct mixeval *ev, const struct qdq_plan *plan,
    const struct qdq_opts *qo, int raised, struct qdq_report *rep,
    struct err *e)
{
	const struct qdq_report *fr;
	struct qdq_front *f = NULL;
	struct model *m;
	long hits = qdq_wcache_hits(ev->wcache);
	int rc, kept = 0;

	if ((m = model_unpack_own(raised ? ev->rskel : ev->skel,
	    raised ? ev->nrskel : ev->nskel, ev->o.name, ev->o.dir,
	    e)) == NULL)
		return NULL;
	if (lend_data(ev, raised ? ev->raised : ev->base, m, e) < 0 ||
	    (rc = qdq_front_make(m, plan, qo, &f, e)) < 0)
		goto fail;
	if (rc > 0) {	/* (no front: fold records) */
		if (qdq_apply(m, plan, qo, rep, e) < 0)
			goto fail;
		return m;
	}
	fr = qdq_front_report(f);
	if (qdq_wcache_hits(ev->wcache) - hits == fr->weights + fr->biases) {
		kept = 1;
		if (mixskels_keep(ev->skels, raised, f, m, e) < 0)
			goto fail;	/* (f freed) */
	}
	rc = qdq_front_apply(m, plan, qo, f, rep, e);
	if (!kept)
		qdq_front_free(f);
	if (rc > 0)
		err_set(e, "%s: a plan does not fit its own front",
		    ev->o.name);
	if (rc == 0)
		return m;
fail:
	free_model(ev, m);
	return NULL;
}

/*
 * The model of plan: of a skeleton that fits it, else made whole. A plan
 * that quantizes nothing leaves the model at its own opset: that one is
 * made of base again.
 */
static struct model *
make_model(struct mixeval *ev, const struct qdq_plan *plan,
    const struct qdq_opts *qo, int raised, struct err *e)
{
	struct qdq_report rep;
	struct model *m;
	int rc;

	ev->nlent = 0;
	if ((rc = mixskels_make(ev->skels, raised, plan, qo, ev->o.name,
	    ev->o.dir, &m, &rep, e)) < 0)
		return NULL;
	if (rc == 0 && (m = make_whole(ev, plan, qo, raised, &rep,
	    e)) == NULL)
		return NULL;
	if (raised && (rep.opset_from != rep.opset_to || rep.acts +
	    rep.weights + rep.biases + rep.converts == 0)) {
		free_model(ev, m);
		return make_model(ev, plan, qo, 0, e);
	}
	if (ev->o.check_models && check_model(ev, plan, m, e) < 0) {
		free_model(ev, m);
		return NULL;
	}
	ev->prof.raised += raised;
	return m;
}

/*
 * mixeval_opts.check_models: m, made of a skeleton or in two steps, of
 * ev->raised or of base, packs to the bytes of the model plan makes of
 * base without the shortcuts: base's bytes copied, the weights quantized
 * again, the opset raised by qdq_apply(), in one step.
 */
static int
check_model(struct mixeval *ev, const struct qdq_plan *plan,
    const struct model *m, struct err *e)
{
	const Onnx__GraphProto *b = ev->base->proto->graph;
	struct qdq_opts qo = { .domain = QDQ_DOMAIN_AUTO };
	struct model *full;
	void *x = NULL, *y = NULL;
	size_t nx = 0, ny = 0;
	int rc = -1;

	if ((full = model_load_mem(ev->skel, ev->nskel, ev->o.name,
	    ev->o.dir, e)) == NULL)
		return -1;
	for (size_t i = 0; i < b->n_initializer; i++) {
		Onnx__TensorProto *t = full->proto->graph->initializer[i];
		size_t n = b->initializer[i]->raw_data.len;

		if (n == 0)
			continue;
		free(t->raw_data.data);
		if ((t->raw_data.data = malloc(n)) == NULL) {
			t->raw_data.len = 0;
			err_nomem(e);
			goto out;
		}
		memcpy(t->raw_data.data, b->initializer[i]->raw_data.data, n);
		t->raw_data.len = n;
	}
	if (qdq_apply(full, plan, &qo, NULL, e) < 0 ||
	    model_pack(full, &x, &nx, e) < 0 || model_pack(m, &y, &ny, e) < 0)
		goto out;
	if (nx != ny || memcmp(x, y, nx) != 0)
		err_set(e, "%s: the model made of the model raised ahead "
		    "is not the one made of the model (%zu bytes, %zu)",
		    ev->o.name, ny, nx);
	else
		rc = 0;
out:
	free(x);
	free(y);
	model_free(full);
	return rc;
}

/* plan_of()'s sink: mixprec_emit()'s records, added to plan p. */
struct planning {
	struct mixeval *ev;
	struct qdq_plan *p;
};

static int
add_qparam(void *ctx, struct qparam_rec *r, struct err *e)
{
	return qdq_plan_add_qparam(((struct planning *)ctx)->p, r, e);
}

static int
add_convert(void *ctx, struct convert_rec *c, struct err *e)
{
	return qdq_plan_add_convert(((struct planning *)ctx)->p, c, e);
}

/* A deep copy of s into d (empty). */
static int
qparam_rec_dup(struct qparam_rec *d, const struct qparam_rec *s,
    struct err *e)
{
	memset(d, 0, sizeof *d);
	d->q.axis = -1;
	d->role = s->role;
	d->adjusted = s->adjusted;
	d->line = s->line;
	if ((d->name = strdup(s->name)) == NULL ||
	    (s->input && (d->input = strdup(s->input)) == NULL) ||
	    (s->weight && (d->weight = strdup(s->weight)) == NULL) ||
	    qparam_copy(&d->q, &s->q, e) < 0) {
		qparam_rec_release(d);
		return err_nomem(e);
	}
	return 0;
}

/*
 * The qparam record rec, as qparam_rec_read() reads it: each record of
 * the stream (mp's own, the same for the search's life) is read once,
 * not once per evaluation (weights' per-channel scales are long lists).
 */
static int
read_once(struct mixeval *ev, const struct stream_rec *rec,
    struct qparam_rec *r, struct err *e)
{
	char key[64];
	int i;

	snprintf(key, sizeof key, "%p %ld", (const void *)rec, rec->line);
	if (!strmap_get(ev->qp_ix, key, &i) ||
	    strcmp(ev->qp[i].name, rec->subject) != 0) {
		if (array_grow(&ev->qp, &ev->capqp, ev->nqp,
		    sizeof *ev->qp) < 0)
			return err_nomem(e);
		if (qparam_rec_read(&ev->qp[ev->nqp], rec, e) != 0)
			return -1;
		if (strmap_put(ev->qp_ix, key, (int)ev->nqp) < 0) {
			qparam_rec_release(&ev->qp[ev->nqp]);
			return err_nomem(e);
		}
		i = (int)ev->nqp++;
	}
	return qparam_rec_dup(r, &ev->qp[i], e);
}

static int
read_qparam(void *ctx, const struct stream_rec *rec, struct qparam_rec *r,
    struct err *e)
{
	return read_once(((struct planning *)ctx)->ev, rec, r, e);
}

static int
add_rec(void *ctx, const struct stream_rec *rec, struct err *e)
{
	struct planning *pl = ctx;
	struct qparam_rec r;

	/* the plan has no use for node records (qdq_plan_add_rec() passes
	   them over), a quarter of the stream's; hist ones are not given;
	   the first emit alone gives stat, weight and bias ones */
	if (strcmp(rec->type, "node") == 0)
		return 0;
	if (strcmp(rec->type, "stat") == 0 ||
	    strcmp(rec->type, "weight") == 0 ||
	    strcmp(rec->type, "bias") == 0)
		return qdq_plan_add_rec(pl->ev->facts, rec, e);
	if (strcmp(rec->type, "qparam") != 0)
		return qdq_plan_add_rec(pl->p, rec, e);
	if (read_once(pl->ev, rec, &r, e) < 0)
		return -1;
	return qdq_plan_add_qparam(pl->p, &r, e);
}

/*
 * mp's current result, as a qdq plan. The records every result gives as
 * read (stat, weight, bias: the same stream's, for the search's life)
 * go to ev->facts on the first emit only, which every plan then goes
 * by (qdq_plan_new_like()).
 */
static struct qdq_plan *
plan_of(struct mixeval *ev, const struct mixprec *mp, struct err *e)
{
	struct planning pl = { ev, NULL };
	int first = ev->facts == NULL;
	struct mixprec_sink s = { &pl, add_qparam, add_convert, add_rec,
	    read_qparam, !first };

	if (first && (ev->facts = qdq_plan_new()) == NULL)
		goto nomem;
	if ((pl.p = qdq_plan_new_like(ev->facts)) == NULL)
		goto nomem;
	if (mixprec_emit(mp, &s, e) < 0)
		goto fail;
	return pl.p;
nomem:
	err_nomem(e);
fail:
	qdq_plan_free(pl.p);
	if (first) {	/* read them again next time */
		qdq_plan_free(ev->facts);
		ev->facts = NULL;
	}
	return NULL;
}

/*
 * Run the QDQ model of mp's current result on the first nsamples samples
 * (0: all; in the order of ev->order) and compare with the fp32 outputs;
 * struct mixsearch_eval's run (mixsearch.h) says the rest. The noise only
 * grows, sample after sample, the signal being the fp32 outputs'. With
 * probes_only, as its run_probes: past the probes, the nodes a sample
 * the reference holds does not need are not run, and the outputs are
 * not compared.
 */
static int
evaluate_as(struct mixeval *ev, const struct mixprec *mp, int nsamples,
    double stop, double head_stop, int probes_only,
    struct mixsearch_score *sc, struct err *e)
{
	struct qdq_opts qo = { .domain = QDQ_DOMAIN_AUTO,
	    .wcache = ev->wcache, .removed = drop_initializer,
	    .removed_ctx = ev, .lent = lent_initializer, .lent_ctx = ev };
	struct watch w = { ev, 0 };
	/* Each model runs on several samples: its weights dequantized once. */
	struct interp_opts io = { .threads = ev->o.threads,
	    .fold_constant_nodes = 1, .fold_cache = ev->folded };
	struct compare *cmp = NULL, *pcmp = NULL, *judge, top1;
	const double *sig;
	const char **names = NULL;
	struct qdq_plan *plan = NULL;
	struct interp *ip = NULL;
	struct model *m = NULL;
	struct tensor *out = NULL;
	unsigned char *skip = NULL;
	int *pos = NULL, *ppos = NULL, nout = 0, nskip = 0, rc = -1;
	int unprobed = 0;	/* a sample's probe reference was dropped */
	int record = ev->record && !ev->o.whole_runs, part;
	double t0 = mixeval_cpu_seconds(), t1 = 0, t2 = 0;

	ev->prof.evaluations++;
	if (nsamples <= 0 || nsamples > ev->nsamples)
		nsamples = ev->nsamples;
	if ((plan = plan_of(ev, mp, e)) == NULL)
		return -1;
	names = calloc((size_t)ev->noutputs + 1, sizeof *names);
	ppos = calloc((size_t)ev->noutputs + 1, sizeof *ppos);
	if (names == NULL || ppos == NULL) {
		err_nomem(e);
		goto out;
	}
	if (!ev->raise_tried && raise_ahead(ev, e) < 0)
		goto out;
	/* (a plan that raises the opset further is made of base) */
	if ((m = make_model(ev, plan, &qo, ev->raised != NULL &&
	    qdq_plan_max_opset(plan) > 13, e)) == NULL)
		goto out;
	probes_in(ev, m, names);
	if (expose_probes(ev, m, names, ppos, e) < 0)
		goto out;
	ev->record = 0;
	if (record) {
		if (mixcache_begin_lent(ev->cache, m, is_lent, ev, e) < 0)
			goto out;
	} else {
		if ((skip = malloc(m->proto->graph->n_node + 1)) == NULL) {
			err_nomem(e);
			goto out;
		}
		if ((nskip = mixcache_match(ev->cache, m, skip, e)) < 0)
			goto out;
		if (probes_only) {
			if ((part = skip_past_probes(m, names, ev->noutputs,
			    skip, e)) < 0)
				goto out;
			nskip += part;
		}
	}
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
	/* What the runs are judged by: the outputs, or the probes. */
	judge = ev->o.at_probes ? pcmp : cmp;
	sig = ev->o.at_probes ? ev->psignal : ev->signal;
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
	t1 = mixeval_cpu_seconds();
	ev->prof.build += t1 - t0;
	sc->samples = 0;
	for (int i = 0; i < nsamples; i++) {
		int s = ev->order[i];
		double before = 0, partial = 0;

		w.sample = s;
		if (run_sample(ev, ip, &w, s, nskip > 0 ? skip : NULL, record,
		    out, e) < 0)
			goto out;
		part = nskip > 0 && mixcache_has(ev->cache, s) ? nskip : 0;
		ev->prof.samples++;
		ev->prof.nodes_run += (long)m->proto->graph->n_node - part;
		ev->prof.nodes_skipped += part;
		for (int k = 0; k < ev->noutputs; k++)
			before += judge[k].noise;
		for (int k = 0; k < ev->noutputs; k++) {
			const struct tensor *pr =
			    &ev->probe_ref[s * ev->noutputs + k];

			if (pr->data)
				compare_add(&pcmp[k], &out[ppos[k]], pr, s);
			else if (probes_only) {
				err_set(e, "the probes' values of sample %d "
				    "are not kept", s);
				goto out;
			} else
				unprobed = 1;
		}
		sc->samples = i + 1;
		if (probes_only) {
			tensor_release_n(out, (size_t)nout);
			continue;
		}
		for (int k = 0; k < ev->noutputs; k++) {
			const struct tensor *ref = &ev->ref[s * ev->noutputs + k];

			/* interp_run_skip() leaves an output empty when its
			   node was skipped and not kept: never to be judged */
			if (out[pos[k]].data == NULL && ref->nelem > 0) {
				err_set(e, "output %s of sample %d was not made",
				    ev->out_names[k], s);
				goto out;
			}
			compare_add(&cmp[k], &out[pos[k]], ref, s);
			if (compare_is_classifier(ref))
				compare_add_top1(&top1, &out[pos[k]], ref, NULL,
				    0);
		}
		ev->sample_noise[s] = -before;
		for (int k = 0; k < ev->noutputs; k++) {
			ev->sample_noise[s] += judge[k].noise;
			partial += sig[k] > 0 ? judge[k].noise /
			    sig[k] : judge[k].noise > 0 ? INFINITY : 0;
			if (cmp[k].nonfinite > 0 || cmp[k].nmismatch > 0)
				partial = INFINITY;
		}
		tensor_release_n(out, (size_t)nout);
		if (i + 1 == MIXSEARCH_HEAD || i + 1 == nsamples)
			sc->head = partial;
		if (nsamples == ev->nsamples && (partial > stop ||
		    (i + 1 == MIXSEARCH_HEAD && partial > head_stop))) {
			sc->noise = partial;
			rc = 0;
			goto out;
		}
	}
	sc->pnoise = unprobed ? NAN : 0;
	for (int k = 0; k < ev->noutputs; k++)
		sc->pnoise += relative_noise(&pcmp[k]);
	if (probes_only) {
		sc->snr = sc->agree = sc->noise = sc->head = NAN;
		rc = 0;
		goto out;
	}
	sc->snr = INFINITY;
	sc->noise = 0;
	for (int k = 0; k < ev->noutputs; k++) {
		double snr = compare_snr(&judge[k]);

		if (snr < sc->snr || isnan(snr))
			sc->snr = snr;
		sc->noise += relative_noise(&judge[k]);
	}
	sc->agree = compare_agreement(&top1);
	rc = 0;
out:
	if (out)
		for (int j = 0; j < nout; j++)
			tensor_release(&out[j]);
	if (t1 > 0)
		ev->prof.run += (t2 = mixeval_cpu_seconds()) - t1;
	free(out);
	free(cmp);
	free(pcmp);
	free(pos);
	free(ppos);
	free(skip);
	interp_free(ip);
	free(names);
	free_model(ev, m);
	qdq_plan_free(plan);
	/* freeing the model and interpreter is part of making them */
	if (t1 > 0)
		ev->prof.build += mixeval_cpu_seconds() - t2;
	return rc;
}

static int
evaluate(void *ctx, const struct mixprec *mp, int nsamples, double stop,
    double head_stop, struct mixsearch_score *sc, struct err *e)
{
	return evaluate_as(ctx, mp, nsamples, stop, head_stop, 0, sc, e);
}

static int
evaluate_probes(void *ctx, const struct mixprec *mp, int nsamples,
    struct mixsearch_score *sc, struct err *e)
{
	return evaluate_as(ctx, mp, nsamples, INFINITY, INFINITY, 1, sc, e);
}

/*
 * The noisiest samples first, after a run of all of them: the pooled SNR
 * is theirs, mostly, so a few of them stand for all. (Insertion sort,
 * stable: sample sets are small.)
 */
static void
rank_samples(void *ctx)
{
	struct mixeval *ev = ctx;

	for (int i = 1; i < ev->nsamples; i++) {
		int s = ev->order[i], j = i;

		while (j > 0 && ev->sample_noise[ev->order[j - 1]] <
		    ev->sample_noise[s]) {
			ev->order[j] = ev->order[j - 1];
			j--;
		}
		ev->order[j] = s;
	}
	/*
	 * Going by the outputs, the search reads the probes on the
	 * MIXSEARCH_HEAD noisiest samples only: the others' references go
	 * back to the heap, for the reference runs to come (fresh memory
	 * is dear: first touches were a tenth of a rec search's CPU).
	 */
	for (int i = MIXSEARCH_HEAD; !ev->o.at_probes && i < ev->nsamples;
	    i++)
		tensor_release_n(&ev->probe_ref[ev->order[i] * ev->noutputs],
		    (size_t)ev->noutputs);
}

static void
next_is_reference(void *ctx)
{
	struct mixeval *ev = ctx;

	ev->record = 1;
}

/* m packed with its main graph's initializers empty. */
static int
pack_skeleton(struct model *m, void **skel, size_t *n, struct err *e)
{
	Onnx__GraphProto *g = m->proto->graph;
	size_t *len;
	int rc;

	if ((len = malloc((g->n_initializer + 1) * sizeof *len)) == NULL)
		return err_nomem(e);
	for (size_t i = 0; i < g->n_initializer; i++) {
		len[i] = g->initializer[i]->raw_data.len;
		g->initializer[i]->raw_data.len = 0;
	}
	rc = model_pack(m, skel, n, e);
	for (size_t i = 0; i < g->n_initializer; i++)
		g->initializer[i]->raw_data.len = len[i];
	free(len);
	return rc;
}

/*
 * An opset-9 model is raised to 10 by each evaluation's qdq_apply(), a
 * tenth of the making of a model on PaddleOCR rec: when every plan
 * would raise it so (qdq_raise_ahead()), it is raised once, here, before
 * the first model is made (the reference run's: the activation cache
 * knows initializers by address), into ev->raised, whose initializers
 * that base has too keep base's bytes. Without it, or when it fails,
 * the models are made of base.
 */
static int
raise_ahead(struct mixeval *ev, struct err *e)
{
	const Onnx__GraphProto *b = ev->base->proto->graph;
	Onnx__GraphProto *g;
	void *buf = NULL;
	size_t n;
	int rc;

	ev->raise_tried = 1;
	if (model_opset(ev->base, "") >= 10)
		return 0;	/* (nothing to raise: no copy) */
	if (model_pack(ev->base, &buf, &n, e) < 0)
		return -1;
	ev->raised = model_load_mem(buf, n, ev->o.name, ev->o.dir, e);
	free(buf);
	if (ev->raised == NULL)
		return -1;
	if ((rc = qdq_raise_ahead(ev->raised, ev->facts, e)) <= 0) {
		free_raised(ev);
		return rc;
	}
	g = ev->raised->proto->graph;
	for (size_t i = 0; i < g->n_initializer && i < b->n_initializer;
	    i++) {
		Onnx__TensorProto *t = g->initializer[i];

		if (b->initializer[i]->raw_data.len == 0 ||
		    t->raw_data.len != b->initializer[i]->raw_data.len ||
		    strcmp(str_or_empty(t->name),
		    str_or_empty(b->initializer[i]->name)) != 0 ||
		    memcmp(t->raw_data.data, b->initializer[i]->raw_data.data,
		    t->raw_data.len) != 0)	/* raising changed it */
			continue;
		free(t->raw_data.data);
		t->raw_data = b->initializer[i]->raw_data;
	}
	if (pack_skeleton(ev->raised, &ev->rskel, &ev->nrskel, e) < 0) {
		free_raised(ev);
		return -1;
	}
	return 0;
}

/*
 * The model as qdq_apply() takes it, prepared once for all evaluations:
 * ev->base, and ev->skel, base packed with its main graph's initializers
 * empty (lend_data() fills them).
 */
static int
prepare(struct mixeval *ev, struct err *e)
{
	if (ev->base == NULL && ((ev->base = model_load_mem(ev->o.model,
	    ev->o.len, ev->o.name, ev->o.dir, e)) == NULL ||
	    prep_model(ev->base, NULL, e) < 0))
		return -1;
	return pack_skeleton(ev->base, &ev->skel, &ev->nskel, e);
}

struct mixeval *
mixeval_new(const struct mixeval_opts *o, struct err *e)
{
	struct mixeval *ev;
	struct mixskel_lender l = { is_lent, lent_initializer,
	    free_lent_model, NULL };
	uint64_t lim;

	if ((ev = calloc(1, sizeof *ev)) == NULL) {
		model_free(o->prepared);
		err_nomem(e);
		return NULL;
	}
	ev->o = *o;
	ev->base = o->prepared;	/* ours now, freed with ev */
	ev->o.prepared = NULL;
	l.ctx = ev;
	if ((ev->wcache = qdq_wcache_new()) == NULL ||
	    (ev->skels = mixskels_new(&l)) == NULL ||
	    (ev->folded = foldcache_new()) == NULL ||
	    (ev->qp_ix = strmap_new()) == NULL) {
		err_nomem(e);
		mixeval_free(ev);
		return NULL;
	}
	foldcache_set_stable(ev->folded, lent_bytes, ev);
	ev->prof.reference = mixeval_cpu_seconds();
	if (evaldata_init(ev, o, e) < 0 || prepare(ev, e) < 0) {
		mixeval_free(ev);
		return NULL;
	}
	ev->prof.reference = mixeval_cpu_seconds() - ev->prof.reference;
	ev->o.model = NULL;	/* the caller's, read only up to here */
	ev->o.len = 0;
	/*
	 * The reference activations (a few samples of the quantized model)
	 * take at most a quarter of the memory limit (tensor.h): past that,
	 * whole runs.
	 */
	lim = tensor_mem_limit();
	if ((ev->cache = mixcache_new(lim / 4)) == NULL) {
		err_nomem(e);
		mixeval_free(ev);
		return NULL;
	}
	return ev;
}

void
mixeval_free(struct mixeval *ev)
{
	if (ev == NULL)
		return;
	evaldata_release(ev);
	mixskels_free(ev->skels);
	free(ev);
}

int
mixeval_classifier(const struct mixeval *ev)
{
	return ev->classifier;
}

void
mixeval_profile(const struct mixeval *ev, struct mixeval_profile *p)
{
	*p = ev->prof;
	p->skeletons = ev->skels ? mixskels_hits(ev->skels) : 0;
}

void
mixeval_bind(struct mixeval *ev, struct mixsearch_eval *fn)
{
	fn->nsamples = ev->nsamples;
	fn->run = evaluate;
	fn->rank = rank_samples;
	fn->reference = next_is_reference;
	fn->noutputs = ev->noutputs;
	fn->run_probes = evaluate_probes;
	fn->ctx = ev;
}
