/*
 * onnxq-roundtrip: load an ONNX model and save it again, for the tests of
 * lib/model.c, lib/graph.c and lib/prep.c. Not installed.
 *
 *	onnxq-roundtrip [--external-data] [--external-min N] [--prep]
 *	    [--index] [--topo] IN [OUT]
 *	onnxq-roundtrip [options] --batch LIST
 *
 * --prep runs prep_model() before saving and reports its counts on stderr
 * ("prep: constants N folded_bn M"); --index prints one line per value
 * "name<TAB>kind<TAB>producer<TAB>nconsumers" and --topo one node per line
 * in topological order, both on stdout. OUT may be left out with --index
 * or --topo. --batch reads "IN<TAB>OUT" lines from LIST and does each
 * pair in this one process (starting a process per model is what makes
 * a thousand round trips slow), reporting failures and going on.
 * Exit 0 on success, 1 on error, 2 on usage.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "model.h"
#include "outfile.h"
#include "prep.h"

static const char usage[] =
    "usage: onnxq-roundtrip [--external-data] [--external-min N] [--prep]\n"
    "           [--index] [--topo] IN [OUT]\n"
    "       onnxq-roundtrip [options] --batch LIST\n";

struct opts {
	struct model_save_opts save;
	int prep, index, topo;
	const char *in, *out, *batch;
};

static const char *
node_ref(const Onnx__GraphProto *g, int i, char *buf, size_t size)
{
	if (i < 0)
		return "-";
	if (g->node[i]->name != NULL && *g->node[i]->name != '\0')
		return g->node[i]->name;
	snprintf(buf, size, "#%d", i);
	return buf;
}

static int
print_index(struct model *m, const struct opts *o, struct err *e)
{
	static const char *const kinds[] = { "input", "initializer",
	    "constant", "node" };
	Onnx__GraphProto *g = m->proto->graph;
	struct graph *gr;
	char buf[32];
	int i;

	if ((gr = graph_new(g, e)) == NULL)
		return err_prefix(e, "%s", m->path);
	if (o->index)
		for (i = 0; i < graph_nvalues(gr); i++) {
			struct graph_value *v = graph_value_at(gr, i);

			printf("%s\t%s\t%s\t%d\n", v->name, kinds[v->kind],
			    node_ref(g, v->producer, buf, sizeof buf),
			    v->nconsumers);
		}
	if (o->topo)
		for (i = 0; i < (int)g->n_node; i++)
			printf("%s\n", node_ref(g, graph_topo(gr)[i], buf,
			    sizeof buf));
	graph_free(gr);
	return 0;
}

static int
run(const struct opts *o, struct err *e)
{
	struct model *m;
	struct prep_report rep;
	int rc = -1;

	if ((m = model_load(o->in, e)) == NULL)
		return -1;
	if (o->prep) {
		if (prep_model(m, &rep, e) != 0)
			goto done;
		fprintf(stderr, "prep: constants %d folded_bn %d\n",
		    rep.constants, rep.folded_bn);
	}
	if ((o->index || o->topo) && print_index(m, o, e) != 0)
		goto done;
	if (o->out != NULL && model_save(m, o->out, &o->save, e) != 0)
		goto done;
	rc = 0;
done:
	model_free(m);
	return rc;
}

/* Each "IN<TAB>OUT" line of o->batch; returns the number of failures. */
static int
run_batch(struct opts *o)
{
	struct err e;
	FILE *fp;
	char *line = NULL, *tab;
	size_t cap = 0;
	ssize_t n;
	int failed = 0;

	if ((fp = fopen(o->batch, "r")) == NULL) {
		fprintf(stderr, "onnxq-roundtrip: %s: ", o->batch);
		perror(NULL);
		return 1;
	}
	while ((n = getline(&line, &cap, fp)) > 0) {
		if (line[n - 1] == '\n')
			line[n - 1] = '\0';
		if ((tab = strchr(line, '\t')) == NULL)
			continue;
		*tab = '\0';
		o->in = line;
		o->out = tab + 1;
		if (run(o, &e) != 0) {
			fprintf(stderr, "onnxq-roundtrip: %s\n", e.msg);
			failed++;
		}
	}
	free(line);
	fclose(fp);
	return failed;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "external-data", no_argument, NULL, 'x' },
		{ "external-min", required_argument, NULL, 'm' },
		{ "prep", no_argument, NULL, 'p' },
		{ "index", no_argument, NULL, 'i' },
		{ "topo", no_argument, NULL, 't' },
		{ "batch", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o;
	struct err e;
	int c;

	memset(&o, 0, sizeof o);
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'x':
			o.save.external_data = 1;
			break;
		case 'm':
			o.save.external_min_bytes = strtoul(optarg, NULL, 10);
			break;
		case 'p':
			o.prep = 1;
			break;
		case 'i':
			o.index = 1;
			break;
		case 't':
			o.topo = 1;
			break;
		case 'b':
			o.batch = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	argc -= optind;
	argv += optind;
	outfile_cleanup_on_signals();
	if (o.batch != NULL) {
		if (argc != 0) {
			fputs(usage, stderr);
			return 2;
		}
		return run_batch(&o) ? 1 : 0;
	}
	if (argc < 1 || argc > 2 || (argc == 1 && !o.index && !o.topo)) {
		fputs(usage, stderr);
		return 2;
	}
	o.in = argv[0];
	o.out = argc == 2 ? argv[1] : NULL;
	if (run(&o, &e) != 0) {
		fflush(stdout);
		fprintf(stderr, "onnxq-roundtrip: %s\n", e.msg);
		return 1;
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "onnxq-roundtrip: stdout: write error\n");
		return 1;
	}
	return 0;
}
