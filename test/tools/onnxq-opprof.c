/*
 * onnxq-opprof: where the interpreter's time goes, per operator type, for
 * scripts/bench-ops. Not installed.
 *
 *	onnxq-opprof [-n RUNS] [-t THREADS] MODEL DIR
 *
 * Loads the first sample of the data directory DIR (any layout of
 * onnx-verify(1)), runs the model once to warm up, then RUNS times
 * (default 5). A node's time is the wall time from the previous node's
 * outputs (the observe callback) to its own, so it includes what the
 * interpreter does around the kernel. Prints one line per operator type,
 * slowest first, "OP<TAB>MS<TAB>PERCENT<TAB>NODES" (milliseconds per
 * run), then "total<TAB>MS". Exit 0 on success, 1 on error, 2 on usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "model.h"
#include "strmap.h"

struct prof {
	struct strmap *owner;		/* output name -> op type index */
	const char **op;		/* op type names */
	double *ms;
	int *nodes;
	int nop;
	double last;
};

static int
observe(void *ctx, const char *name, const struct tensor *t, struct err *e)
{
	struct prof *p = ctx;
	double t1 = now_ms();
	int k;

	(void)t, (void)e;
	if (strmap_get(p->owner, name, &k))
		p->ms[k] += t1 - p->last;
	p->last = now_ms();
	return 0;
}

/* Index of op type s in p->op, added when new; -1 when out of memory. */
static int
op_index(struct prof *p, const char *s)
{
	for (int k = 0; k < p->nop; k++)
		if (strcmp(p->op[k], s) == 0)
			return k;
	p->op[p->nop] = s;
	return p->nop++;
}

int
main(int argc, char **argv)
{
	struct interp_opts io = { .threads = 2 };
	struct prof p = { 0 };
	struct err e;
	struct model *m;
	struct interp *ip;
	struct dataset *ds;
	struct sample smp;
	const Onnx__GraphProto *g;
	int runs = 5, arg, *order;
	double total = 0;

	if ((arg = tool_args(argc, argv, &runs, &io.threads, NULL)) < 0)
		goto usage;
	io.observe = observe;
	io.observe_ctx = &p;
	if (!(m = model_load(argv[arg], &e)) ||
	    !(ip = interp_new(m, &io, &e)) ||
	    !(ds = dataset_open((const char **)&argv[arg + 1], 1, &e))) {
		fprintf(stderr, "onnxq-opprof: %s\n", e.msg);
		return 1;
	}
	g = m->proto->graph;
	p.owner = strmap_new();
	p.op = calloc(g->n_node + 1, sizeof *p.op);
	p.ms = calloc(g->n_node + 1, sizeof *p.ms);
	p.nodes = calloc(g->n_node + 1, sizeof *p.nodes);
	order = calloc(g->n_node + 1, sizeof *order);
	if (!p.owner || !p.op || !p.ms || !p.nodes || !order)
		goto nomem;
	for (size_t i = 0; i < g->n_node; i++) {
		int k = op_index(&p, g->node[i]->op_type);

		p.nodes[k]++;
		for (size_t j = 0; j < g->node[i]->n_output; j++)
			if (strmap_put(p.owner, g->node[i]->output[j], k) < 0)
				goto nomem;
	}
	if (sample_load(&smp, ip, ds, &e) < 0) {
		fprintf(stderr, "onnxq-opprof: %s\n", e.msg);
		return 1;
	}
	for (int r = -1; r < runs; r++) {
		if (r == 0)
			memset(p.ms, 0, (g->n_node + 1) * sizeof *p.ms);
		p.last = now_ms();
		if (sample_run(&smp, ip, &e) < 0) {
			fprintf(stderr, "onnxq-opprof: %s\n", e.msg);
			return 1;
		}
	}
	for (int k = 0; k < p.nop; k++) {
		order[k] = k;
		total += p.ms[k];
	}
	/* Slowest first (a handful of types: insertion sort). */
	for (int i = 1; i < p.nop; i++)
		for (int j = i; j > 0 && p.ms[order[j]] > p.ms[order[j - 1]];
		    j--) {
			int t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (int k = 0; k < p.nop; k++) {
		int o = order[k];

		printf("%s\t%.2f\t%.1f\t%d\n", p.op[o], p.ms[o] / runs,
		    total > 0 ? 100 * p.ms[o] / total : 0.0, p.nodes[o]);
	}
	printf("total\t%.2f\n", total / runs);
	sample_free(&smp);
	free(order);
	free(p.op), free(p.ms), free(p.nodes);
	strmap_free(p.owner);
	dataset_free(ds);
	interp_free(ip);
	model_free(m);
	return 0;
nomem:
	fprintf(stderr, "onnxq-opprof: out of memory\n");
	return 1;
usage:
	fputs("usage: onnxq-opprof [-n RUNS] [-t THREADS] MODEL DIR\n", stderr);
	return 2;
}
