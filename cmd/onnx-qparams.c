/*
 * onnx-qparams: the quantization-parameter stage (see onnx-qparams(1)).
 * Reads an onnxq stream (onnxq-stream(5)) with the statistics, weights
 * and graph onnx-calib wrote, chooses every activation's range, and
 * writes the stream back with `qparam` records (and `convert` records
 * for the converts a recipe asks for): scales and zero points computed
 * as ONNX Runtime computes them (qparams.h), int32 bias scales whose
 * weight scales are raised so that no bias clips, and `fold` records for
 * the Relu and Clip nodes the quantization clamp makes redundant. No
 * model is needed.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "blockq.h"
#include "config.h"
#include "engine.h"
#include "outfile.h"
#include "qparams.h"
#include "rangesel.h"
#include "settings.h"
#include "stream.h"

#define PROG "onnx-qparams"

struct opts {
	const char *config;
	const char *out;
	const char *in;
	struct settings cli;		/* the settings options give */
	const char *lists[ENGINE_NLISTS]; /* comma lists; NULL not given */
	int argc;
	char **argv;
	int verbose;
	int keep_acts;			/* no fold records */
	int all_ops;			/* no default op-type list */
	int weight_only;		/* blockq records only (blockq.h) */
};

static const char usage_text[] =
    "usage: onnx-qparams [-hVv] [-c CONFIG] [-a TYPE] [-w TYPE] [-m METHOD]\n"
    "                    [--percentile P] [--percentile-per-side] "
    "[--entropy-bins N]\n"
    "                    [--moving-average]\n"
    "                    [--activation-symmetric | "
    "--activation-asymmetric]\n"
    "                    [--weight-symmetric | --weight-asymmetric]\n"
    "                    [--per-channel | --per-tensor] [--reduce-range] "
    "[--power-of-two]\n"
    "                    [--min-real-range R] [--no-bias-weight-adjust]\n"
    "                    [--float-outputs | --quantize-outputs] "
    "[--float-head PCT]\n"
    "                    [--float-tail PCT]\n"
    "                    [--keep-activations] [--all-ops] [--dynamic]\n"
    "                    [--include-nodes LIST] [--exclude-nodes LIST]\n"
    "                    [--include-ops LIST] [--exclude-ops LIST] "
    "[-o FILE] [STATS]\n"
    "       onnx-qparams --weight-only [-v] [-c CONFIG] [-w TYPE] "
    "[--block-size N]\n"
    "                    [--hqq | --rtn] "
    "[--weight-symmetric | --weight-asymmetric]\n"
    "                    [-o FILE] [STATS]\n";

/*
 * The options that give a setting (settings.h): with an argument, its
 * value; without, the flag's value, for one or two settings.
 */
static const struct setting_opt {
	const char *name;
	int has_arg;
	int id, id2;			/* CG_*; id2 -1 for none */
	int value;			/* flags */
} setting_opts[] = {
	{ "activation-type", 1, CG_ACT_TYPE, -1, 0 },		/* -a */
	{ "weight-type", 1, CG_W_TYPE, -1, 0 },			/* -w */
	{ "method", 1, CG_METHOD, -1, 0 },			/* -m */
	{ "percentile", 1, CG_PERCENTILE, -1, 0 },
	{ "percentile-per-side", 0, CG_PER_SIDE, -1, 1 },
	{ "entropy-bins", 1, CG_ENTROPY_BINS, -1, 0 },
	{ "moving-average", 0, CG_MOVING_AVERAGE, -1, 1 },
	{ "activation-symmetric", 0, CG_ACT_SYMMETRIC, -1, 1 },
	{ "activation-asymmetric", 0, CG_ACT_SYMMETRIC, -1, 0 },
	{ "weight-symmetric", 0, CG_W_SYMMETRIC, -1, 1 },
	{ "weight-asymmetric", 0, CG_W_SYMMETRIC, -1, 0 },
	{ "per-channel", 0, CG_PER_CHANNEL, -1, 1 },
	{ "per-tensor", 0, CG_PER_CHANNEL, -1, 0 },
	{ "reduce-range", 0, CG_W_REDUCE_RANGE, -1, 1 },
	{ "power-of-two", 0, CG_ACT_POW2, CG_W_POW2, 1 },
	{ "min-real-range", 1, CG_MIN_REAL_RANGE, -1, 0 },
	{ "no-bias-weight-adjust", 0, CG_BIAS_ADJUST, -1, 0 },
	{ "dynamic", 0, CG_DYNAMIC, -1, 1 },
	{ "block-size", 1, CG_BLOCK_SIZE, -1, 0 },
	{ "hqq", 0, CG_BLOCK_HQQ, -1, 1 },
	{ "rtn", 0, CG_BLOCK_HQQ, -1, 0 },
	{ "float-outputs", 0, CG_FLOAT_OUTPUTS, -1, 1 },
	{ "quantize-outputs", 0, CG_FLOAT_OUTPUTS, -1, 0 },
	{ "float-head", 1, CG_FLOAT_HEAD, -1, 0 },
	{ "float-tail", 1, CG_FLOAT_TAIL, -1, 0 },
};
#define NSETTING_OPTS (sizeof setting_opts / sizeof setting_opts[0])

static void
print_msgs(const struct config_msgs *m, const char *path)
{
	for (size_t i = 0; i < m->n; i++)
		cli_warn("%s", m->v[i]);
	if (m->dropped)
		cli_warn("%s: %zu more errors not shown", path, m->dropped);
}

/* --weight-only: the stream with blockq records (blockq.h). */
static int
run_weight_only(const struct opts *o, const struct settings *s)
{
	struct blockq_opts bo;
	struct stream_reader *rd = NULL;
	struct stream_writer *sw = NULL;
	struct outfile *of = NULL;
	struct err e = { "" };
	long n = -1;

	if (blockq_opts_from_settings(&bo, s, &e) < 0) {
		cli_warn("%s", e.msg);
		return 1;
	}
	bo.prog = PROG;
	bo.version = ONNXQ_VERSION;
	bo.argc = o->argc;
	bo.argv = o->argv;
	bo.note = o->verbose ? cli_vwarn : NULL;
	if ((rd = stream_open(o->in ? o->in : "-", &e)) != NULL &&
	    (of = outfile_open(o->out ? o->out : "-", &e)) != NULL) {
		if (!(sw = stream_writer_new(outfile_fp(of), o->out ? o->out :
		    "<stdout>")))
			err_nomem(&e);
		else if ((n = blockq_filter(rd, sw, &bo, &e)) >= 0 &&
		    stream_write_end(sw, &e) < 0)
			n = -1;
		else if (n >= 0) {
			if (outfile_commit(of, &e) < 0)
				n = -1;
			of = NULL;
		}
	}
	if (n < 0)
		cli_warn("%s", e.msg);
	else if (n == 0)
		cli_warn("no MatMul weight to quantize: the stream has no "
		    "constant 2-D float input B of a MatMul");
	stream_writer_free(sw);
	outfile_abort(of);
	stream_reader_free(rd);
	return n < 0 ? 1 : 0;
}

static int
run(const struct opts *o)
{
	struct engine_opts eo;
	struct engine *g = NULL;
	struct config *cfg = NULL;
	struct config_msgs msgs = { 0 };
	struct stream_reader *rd = NULL;
	struct stream_writer *sw = NULL;
	struct outfile *of = NULL;
	struct err e = { "" };
	int rc = 1;

	memset(&eo, 0, sizeof eo);
	settings_default(&eo.s);
	if (o->config) {
		if ((cfg = config_load(o->config, &msgs, &e)) == NULL) {
			if (msgs.n)
				print_msgs(&msgs, o->config);
			else
				cli_warn("%s", e.msg);
			config_msgs_release(&msgs);
			return 1;
		}
		settings_apply(&eo.s, &cfg->g);
	}
	settings_apply(&eo.s, &o->cli);
	eo.cfg = cfg;
	memcpy(eo.lists, o->lists, sizeof eo.lists);
	eo.keep_acts = o->keep_acts;
	eo.all_ops = o->all_ops;
	eo.note = o->verbose ? cli_vwarn : NULL;
	eo.warn = cli_vwarn;
	if (o->weight_only) {
		rc = run_weight_only(o, &eo.s);
		config_free(cfg);
		return rc;
	}

	if ((g = engine_new(&eo, &e)) == NULL ||
	    (rd = stream_open(o->in ? o->in : "-", &e)) == NULL ||
	    engine_read(g, rd, &e) < 0)
		goto fail;
	if (engine_check_recipe(g, &msgs) > 0) {
		print_msgs(&msgs, o->config);
		config_msgs_release(&msgs);
		goto out;
	}
	if (engine_decide(g, &e) < 0 ||
	    (of = outfile_open(o->out ? o->out : "-", &e)) == NULL)
		goto fail;
	if ((sw = stream_writer_new(outfile_fp(of), o->out ? o->out :
	    "<stdout>")) == NULL) {
		err_nomem(&e);
		goto fail;
	}
	engine_put_headers(g, sw);
	stream_put_prog(sw, PROG, ONNXQ_VERSION, o->argc, o->argv);
	if (engine_put_records(g, sw, &e) < 0 ||
	    stream_write_end(sw, &e) < 0)
		goto fail;
	if (outfile_commit(of, &e) < 0) {
		of = NULL;
		goto fail;
	}
	of = NULL;
	rc = 0;
	goto out;
fail:
	cli_warn("%s", e.msg);
out:
	stream_writer_free(sw);
	outfile_abort(of);
	stream_reader_free(rd);
	engine_free(g);
	config_free(cfg);
	return rc;
}

/* The value of option so (given as opt) into s; 0, or exit status 2. */
static int
set_option(struct settings *s, const struct setting_opt *so, const char *opt,
    const char *arg)
{
	const struct setting_info *si = &settings_table[so->id];
	double d;
	long l;
	int v;

	if (!so->has_arg) {
		settings_set_int(s, so->id, so->value);
		if (so->id2 >= 0)
			settings_set_int(s, so->id2, so->value);
		return 0;
	}
	switch (si->kind) {
	case SETTING_TYPE:
		if ((v = qparams_type_parse(arg)) == DT_UNDEFINED)
			return cli_usage_error("unknown type '%s'", arg);
		break;
	case SETTING_METHOD:
		if ((v = rangesel_method_parse(arg)) < 0)
			return cli_usage_error("unknown method '%s'", arg);
		break;
	case SETTING_INT:
		if (cli_count(opt, arg, (long)si->lo, (long)si->hi, &l) != 0)
			return 2;
		v = (int)l;
		break;
	default:
		if (cli_number(opt, arg, si->lo, si->hi, &d) != 0)
			return 2;
		if (!settings_in_bounds(so->id, d))
			return cli_usage_error("%s: '%s' is not a number "
			    "above %g and up to %g", opt, arg, si->lo, si->hi);
		settings_set_real(s, so->id, d);
		return 0;
	}
	settings_set_int(s, so->id, v);
	return 0;
}

enum {
	OPT_SETTING = 256,		/* + index into setting_opts */
	OPT_INC_NODES = OPT_SETTING + 64, OPT_EXC_NODES, OPT_INC_OPS,
	OPT_EXC_OPS, OPT_KEEP_ACTS, OPT_ALL_OPS, OPT_WEIGHT_ONLY,
};

static const struct option fixed_opts[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "output", required_argument, NULL, 'o' },
	{ "include-nodes", required_argument, NULL, OPT_INC_NODES },
	{ "exclude-nodes", required_argument, NULL, OPT_EXC_NODES },
	{ "include-ops", required_argument, NULL, OPT_INC_OPS },
	{ "exclude-ops", required_argument, NULL, OPT_EXC_OPS },
	{ "keep-activations", no_argument, NULL, OPT_KEEP_ACTS },
	{ "all-ops", no_argument, NULL, OPT_ALL_OPS },
	{ "weight-only", no_argument, NULL, OPT_WEIGHT_ONLY },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
};
#define NFIXED_OPTS (sizeof fixed_opts / sizeof fixed_opts[0])

/* Parse argv into o: 0 to go on, -1 when done (help), or exit status 2. */
static int
parse_args(struct opts *o, int argc, char **argv)
{
	static struct option longopts[NFIXED_OPTS + NSETTING_OPTS + 1];
	char opt[64];
	int ch, k;

	memset(o, 0, sizeof *o);
	settings_default(&o->cli);
	o->argc = argc;
	o->argv = argv;
	memcpy(longopts, fixed_opts, sizeof fixed_opts);
	for (size_t i = 0; i < NSETTING_OPTS; i++)
		longopts[NFIXED_OPTS + i] = (struct option){
		    setting_opts[i].name, setting_opts[i].has_arg ?
		    required_argument : no_argument, NULL,
		    OPT_SETTING + (int)i };
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":a:c:hm:o:Vvw:", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'c':
			o->config = optarg;
			break;
		case 'o':
			o->out = optarg;
			break;
		case 'v':
			o->verbose = 1;
			break;
		case OPT_ALL_OPS:
			o->all_ops = 1;
			break;
		case OPT_KEEP_ACTS:
			o->keep_acts = 1;
			break;
		case OPT_WEIGHT_ONLY:
			o->weight_only = 1;
			break;
		case OPT_INC_NODES:
		case OPT_EXC_NODES:
		case OPT_INC_OPS:
		case OPT_EXC_OPS:
			o->lists[ch - OPT_INC_NODES] = optarg;
			break;
		default:
			k = ch == 'a' ? 0 : ch == 'w' ? 1 : ch == 'm' ? 2 :
			    ch - OPT_SETTING;
			if (k < 0 || (size_t)k >= NSETTING_OPTS)
				return cli_default_option(ch, argv,
				    longopts);
			snprintf(opt, sizeof opt, "--%s",
			    setting_opts[k].name);
			if (set_option(&o->cli, &setting_opts[k], opt,
			    optarg) != 0)
				return 2;
		}
	}
	if (argc - optind > 1)
		return cli_usage_error("too many arguments");
	if (argc - optind == 1)
		o->in = argv[optind];
	return 0;
}

int
main(int argc, char **argv)
{
	struct opts o;
	int status;

	cli_init(PROG, usage_text);
	if ((status = parse_args(&o, argc, argv)) < 0)	/* help, version */
		return cli_close_stdout() < 0 ? 1 : 0;
	if (status > 0)
		return status;
	outfile_cleanup_on_signals();
	return run(&o);
}
