/*
 * onnx-qdq-insert: rewrite an fp32 ONNX model into a QDQ model, with
 * QuantizeLinear/DequantizeLinear pairs where the qparam records of an
 * onnxq stream say. The rewriting comes with a later issue; until then the
 * program takes its options and says that it cannot do the work yet.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#define PROG	"onnx-qdq-insert"
#define ISSUE	6	/* the issue that brings the rewriting */

struct opts {
	const char	*model;		/* fp32 model to rewrite */
	const char	*qparams;	/* stream with qparam records, "-" stdin */
	const char	*out;		/* QDQ model, "-" stdout */
	int		 dedicated_pairs; /* a DequantizeLinear per consumer */
	int		 external_data;	/* initializers in a file beside out */
	int		 verbose;
};

static void
usage(FILE *fp)
{
	fprintf(fp, "usage: %s [-v] [--dedicated-pairs] [--external-data] "
	    "[-o FILE] MODEL [QPARAMS]\n", PROG);
}

/* Say what getopt_long did not like: c is its ':' or '?'. */
static void
bad_option(int c, char **argv)
{
	const char *what = c == ':' ? "needs an argument" : "is unknown";

	if (c == '?' && optopt >= 256)
		what = "takes no argument";
	if (optopt > 0 && optopt < 256)
		fprintf(stderr, "%s: option -%c %s\n", PROG, optopt, what);
	else
		fprintf(stderr, "%s: option %s %s\n", PROG, argv[optind - 1],
		    what);
}

/* Parse argv into o: 0 to go on, -1 when done (help), or exit status 2. */
static int
parse_args(struct opts *o, int argc, char **argv)
{
	enum { OPT_DEDICATED = 256, OPT_EXTERNAL, OPT_HELP, OPT_VERSION };
	static const struct option longopts[] = {
		{ "dedicated-pairs",	no_argument,	NULL, OPT_DEDICATED },
		{ "external-data",	no_argument,	NULL, OPT_EXTERNAL },
		{ "help",		no_argument,	NULL, OPT_HELP },
		{ "version",		no_argument,	NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	memset(o, 0, sizeof *o);
	o->qparams = "-";
	o->out = "-";
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:v", longopts, NULL)) != -1) {
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
		case OPT_EXTERNAL:
			o->external_data = 1;
			break;
		case OPT_HELP:
			usage(stdout);
			return -1;
		case OPT_VERSION:
			printf("%s %s\n", PROG, ONNXQ_VERSION);
			return -1;
		default:
			bad_option(c, argv);
			usage(stderr);
			return 2;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1 || argc > 2) {
		usage(stderr);
		return 2;
	}
	o->model = argv[0];
	if (argc == 2)
		o->qparams = argv[1];
	return 0;
}

static int
run(const struct opts *o)
{
	(void)o;
	fprintf(stderr, "%s: not implemented yet (see issue %d)\n", PROG,
	    ISSUE);
	return 1;
}

int
main(int argc, char **argv)
{
	struct opts o;
	int status;

	status = parse_args(&o, argc, argv);
	if (status == 0)
		status = run(&o);
	else if (status < 0)
		status = 0;
	if (fclose(stdout) == EOF) {
		fprintf(stderr, "%s: stdout: %s\n", PROG, strerror(errno));
		return 1;
	}
	return status;
}
