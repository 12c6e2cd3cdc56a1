/*
 * onnx-qdq-insert: rewrite an fp32 ONNX model into a QDQ model, with
 * QuantizeLinear/DequantizeLinear nodes where the qparam, fold and convert
 * records of an onnxq stream say (lib/qdq.h does the rewriting).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "err.h"
#include "model.h"
#include "outfile.h"
#include "prep.h"
#include "qdq.h"
#include "stream.h"

#define PROG	"onnx-qdq-insert"

struct opts {
	const char	*model;		/* fp32 model to rewrite */
	const char	*qparams;	/* stream with qparam records, "-" stdin */
	const char	*out;		/* QDQ model, "-" stdout */
	int		 dedicated_pairs; /* a DequantizeLinear per consumer */
	int		 weights_float;	/* weights float behind Q -> DQ */
	int		 fold_scales;	/* Div/Mul by constants into scales */
	int		 fold_biases;	/* Add of constants into Conv biases */
	int		 resize_expand;	/* nearest Resize as Expand */
	int		 external_data;	/* initializers in a file beside out */
	enum qdq_domain	 domain;
	enum qdq_format	 format;
	int		 verbose;
};

static const char usage_text[] =
    "usage: " PROG " [-v] [--dedicated-pairs] [--weights-float]\n"
    "                       [--qdq-domain auto|onnx|com.microsoft] "
    "[--external-data]\n"
    "                       [--format auto|qdq|qoperator] [--fold-scales]\n"
    "                       [--fold-biases] [--resize-expand]\n"
    "                       [-o FILE] MODEL [QPARAMS]\n";

/* Parse argv into o: 0 to go on, -1 when done (help), or exit status 2. */
static int
parse_args(struct opts *o, int argc, char **argv)
{
	enum { OPT_DEDICATED = 256, OPT_WFLOAT, OPT_DOMAIN, OPT_EXTERNAL,
	    OPT_FORMAT, OPT_FOLD_SCALES, OPT_FOLD_BIASES,
	    OPT_RESIZE_EXPAND };
	static const struct option longopts[] = {
		{ "dedicated-pairs",	no_argument,	NULL, OPT_DEDICATED },
		{ "weights-float",	no_argument,	NULL, OPT_WFLOAT },
		{ "qdq-domain",		required_argument, NULL, OPT_DOMAIN },
		{ "external-data",	no_argument,	NULL, OPT_EXTERNAL },
		{ "format",		required_argument, NULL, OPT_FORMAT },
		{ "fold-scales",	no_argument,	NULL, OPT_FOLD_SCALES },
		{ "fold-biases",	no_argument,	NULL, OPT_FOLD_BIASES },
		{ "resize-expand",	no_argument,	NULL, OPT_RESIZE_EXPAND },
		{ "output",		required_argument, NULL, 'o' },
		{ "verbose",		no_argument,	NULL, 'v' },
		{ "help",		no_argument,	NULL, 'h' },
		{ "version",		no_argument,	NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	memset(o, 0, sizeof *o);
	o->qparams = "-";
	o->out = "-";
	o->domain = QDQ_DOMAIN_AUTO;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:vhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->out = optarg;
			break;
		case 'v':
			o->verbose = 1;
			break;
		case OPT_DEDICATED:
			o->dedicated_pairs = 1;
			break;
		case OPT_WFLOAT:
			o->weights_float = 1;
			break;
		case OPT_DOMAIN:
			if (qdq_domain_parse(optarg, &o->domain) != 0)
				return cli_usage_error("--qdq-domain: '%s' is "
				    "not auto, onnx or com.microsoft", optarg);
			break;
		case OPT_EXTERNAL:
			o->external_data = 1;
			break;
		case OPT_FOLD_SCALES:
			o->fold_scales = 1;
			break;
		case OPT_FOLD_BIASES:
			o->fold_biases = 1;
			break;
		case OPT_RESIZE_EXPAND:
			o->resize_expand = 1;
			break;
		case OPT_FORMAT:
			if (qdq_format_parse(optarg, &o->format) != 0)
				return cli_usage_error("--format: '%s' is not "
				    "auto or qdq", optarg);
			break;
		default:
			return cli_default_option(c, argv, longopts);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1 || argc > 2) {
		cli_usage(stderr);
		return 2;
	}
	o->model = argv[0];
	if (argc == 2)
		o->qparams = argv[1];
	if (strcmp(o->model, "-") == 0 && strcmp(o->qparams, "-") == 0)
		return cli_usage_error("MODEL and QPARAMS cannot both be the "
		    "standard input");
	return 0;
}

static void
print_note(void *ctx, const char *msg)
{
	const char *model = ctx;

	cli_warn("%s: %s", model, msg);
}

static void
report(const struct opts *o, const struct qdq_report *r, size_t before,
    size_t after)
{
	fprintf(stderr, "%s: %s: %d activations, %d weights, %d biases "
	    "quantized; %d converted, %d folded, %d left alone\n", PROG,
	    o->model, r->acts, r->weights, r->biases, r->converts, r->folds,
	    r->skipped);
	fprintf(stderr, "%s: %s: %d QuantizeLinear, %d DequantizeLinear "
	    "(%s); opset %d", PROG, o->model, r->quantize, r->dequantize,
	    r->ms_domain ? "com.microsoft" : "onnx", r->opset_from);
	if (r->opset_to != r->opset_from)
		fprintf(stderr, " raised to %d (%d nodes rewritten)",
		    r->opset_to, r->rewritten);
	if (o->fold_scales)
		fprintf(stderr, "\n%s: %s: %d Div/Mul folded into scales",
		    PROG, o->model, r->scale_folds);
	if (o->fold_biases)
		fprintf(stderr, "\n%s: %s: %d Add folded into biases",
		    PROG, o->model, r->bias_folds);
	if (o->resize_expand)
		fprintf(stderr, "\n%s: %s: %d Resize as Expand", PROG,
		    o->model, r->resize_rewrites);
	if (o->format == QDQ_FORMAT_QOPERATOR)
		fprintf(stderr, "\n%s: %s: %d QLinear operators, %d on "
		    "quantized tensors, %d groups left in QDQ form; %d "
		    "Q/DQ nodes removed", PROG, o->model, r->qlinear,
		    r->moved, r->left_qdq, r->qdq_removed);
	fprintf(stderr, "\n%s: %s: %zu bytes -> %zu bytes (%.1f%%)\n", PROG,
	    o->model, before, after, before ? 100.0 * (double)after /
	    (double)before : 0.0);
}

static int
run(const struct opts *o)
{
	struct err e;
	struct stream_reader *r = NULL;
	struct qdq_plan *plan = NULL;
	struct model *m = NULL;
	struct qdq_opts qo = { 0 };
	struct qdq_report rep;
	struct model_save_opts so = { 0 };
	void *buf = NULL;
	size_t len = 0, after;
	char hex[65];
	const char *sha;
	int rc = 1;

	/* the bytes only for their size, in the report */
	if ((m = model_load_hashed(o->model, hex, &buf, &len, &e)) == NULL)
		goto fail;
	free(buf);
	buf = NULL;
	if ((r = stream_open(o->qparams, &e)) == NULL ||
	    (plan = qdq_plan_new()) == NULL) {
		if (r != NULL)
			err_nomem(&e);
		goto fail;
	}
	if (qdq_plan_read(plan, r, &e) != 0)
		goto fail;
	sha = qdq_plan_model_sha256(plan);
	if (sha != NULL && strcmp(sha, hex) != 0)
		fprintf(stderr, "%s: warning: %s was made from another model "
		    "(sha256 %.12s..., %s has %.12s...)\n", PROG,
		    stream_name(r), sha, o->model, hex);
	if (prep_model(m, NULL, &e) != 0) {
		err_prefix(&e, "%s", o->model);
		goto fail;
	}
	qo.dedicated_pairs = o->dedicated_pairs;
	qo.weights_float = o->weights_float;
	qo.domain = o->domain;
	qo.format = o->format;
	qo.fold_scales = o->fold_scales;
	qo.fold_biases = o->fold_biases;
	qo.resize_expand = o->resize_expand;
	if (o->verbose) {
		qo.note = print_note;
		qo.note_ctx = (void *)o->model;
	}
	if (qdq_apply(m, plan, &qo, &rep, &e) != 0)
		goto fail;
	after = protobuf_c_message_get_packed_size(&m->proto->base);
	so.external_data = o->external_data;
	if (model_save(m, o->out, &so, &e) != 0)
		goto fail;
	if (o->verbose)
		report(o, &rep, len, after);
	else if (rep.left_qdq > 0)
		cli_warn("%s: %d groups left in QDQ form, which the QOperator "
		    "format cannot express (-v says which and why)", o->model,
		    rep.left_qdq);
	rc = 0;
	goto done;
fail:
	fprintf(stderr, "%s: %s\n", PROG, e.msg);
done:
	free(buf);
	qdq_plan_free(plan);
	stream_reader_free(r);
	model_free(m);
	return rc;
}

int
main(int argc, char **argv)
{
	struct opts o;
	int status;

	cli_init(PROG, usage_text);
	status = parse_args(&o, argc, argv);
	if (status == 0) {
		outfile_cleanup_on_signals();
		status = run(&o);
	} else if (status < 0)
		status = 0;
	/* a failure said so already, writing through outfile */
	if (status == 0 && cli_close_stdout() < 0)
		status = 1;
	return status;
}
