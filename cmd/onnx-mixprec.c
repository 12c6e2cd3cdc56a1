/*
 * onnx-mixprec: promote regions of a model to 16-bit quantization by adding
 * convert records to an onnxq stream: the regions a YAML file names, or as
 * many as it takes to reach a target SNR on evaluation data. That work
 * comes with a later issue; until then the program takes its options and
 * says that it cannot do the work yet.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG	"onnx-mixprec"
#define ISSUE	8	/* the issue that brings mixed precision */

struct opts {
	const char	*model;		/* the fp32 model */
	const char	*regions;	/* -c: YAML file naming regions */
	const char	*eval_dir;	/* -d: evaluation data for --target-snr */
	const char	*out;		/* stream out, "-" stdout */
	double		 target_snr;	/* dB; NAN unless --target-snr */
	int		 verbose;
};

static void
usage(FILE *fp)
{
	fprintf(fp, "usage: %s [-v] [-o FILE] -c REGIONS.yaml MODEL\n"
	    "       %s [-v] [-o FILE] --target-snr DB -d EVAL_DIR MODEL\n",
	    PROG, PROG);
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
	enum { OPT_TARGET_SNR = 256, OPT_HELP, OPT_VERSION };
	static const struct option longopts[] = {
		{ "target-snr",	required_argument, NULL, OPT_TARGET_SNR },
		{ "help",	no_argument,	NULL, OPT_HELP },
		{ "version",	no_argument,	NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 }
	};
	char *end;
	int c;

	memset(o, 0, sizeof *o);
	o->out = "-";
	o->target_snr = NAN;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:d:o:v", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->regions = optarg;
			break;
		case 'd':
			o->eval_dir = optarg;
			break;
		case 'o':
			o->out = optarg;
			break;
		case 'v':
			o->verbose = 1;
			break;
		case OPT_TARGET_SNR:
			errno = 0;
			o->target_snr = strtod(optarg, &end);
			if (end == optarg || *end != '\0' || errno != 0 ||
			    !isfinite(o->target_snr)) {
				fprintf(stderr, "%s: --target-snr: not a number "
				    "of dB: %s\n", PROG, optarg);
				usage(stderr);
				return 2;
			}
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
	if (argc != 1) {
		usage(stderr);
		return 2;
	}
	o->model = argv[0];
	if ((o->regions != NULL) == !isnan(o->target_snr)) {
		fprintf(stderr, "%s: give either -c or --target-snr\n", PROG);
		usage(stderr);
		return 2;
	}
	if ((o->eval_dir != NULL) != !isnan(o->target_snr)) {
		fprintf(stderr, o->eval_dir ? "%s: -d goes with --target-snr\n" :
		    "%s: --target-snr needs -d EVAL_DIR\n", PROG);
		usage(stderr);
		return 2;
	}
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
