/*
 * cli: see cli.h.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <getopt.h>
#include <string.h>

#include "cli.h"
#include "err.h"

static const char *prog_name = "onnxq";
static const char *usage_msg = "";
static void (*before)(void);

void
cli_init(const char *prog, const char *usage_text)
{
	prog_name = prog;
	usage_msg = usage_text;
}

void
cli_before_message(void (*fn)(void))
{
	before = fn;
}

const char *
cli_prog(void)
{
	return prog_name;
}

void
cli_usage(FILE *fp)
{
	fputs(usage_msg, fp);
}

void
cli_vwarn(const char *fmt, va_list ap)
{
	struct err line;

	if (before)
		before();
	err_vset(&line, fmt, ap);
	fprintf(stderr, "%s: %s\n", prog_name, line.msg);
}

void
cli_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_vwarn(fmt, ap);
	va_end(ap);
}

int
cli_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_vwarn(fmt, ap);
	va_end(ap);
	cli_usage(stderr);
	return 2;
}

/* The long option ARG ("--name" or "--name=value") names, or NULL; *n is
 * how many options it is a prefix of (getopt_long takes unique prefixes). */
static const struct option *
long_option(const char *arg, const struct option *longopts, int *n)
{
	size_t len = strcspn(arg + 2, "=");
	const struct option *found = NULL;

	*n = 0;
	for (const struct option *o = longopts; len && o && o->name; o++) {
		if (strncmp(o->name, arg + 2, len) != 0)
			continue;
		if (o->name[len] == '\0') {
			*n = 1;
			return o;
		}
		found = o;
		++*n;
	}
	return *n == 1 ? found : NULL;
}

int
cli_bad_option(int c, char **argv, const struct option *longopts)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "";
	const struct option *o;
	int n;

	/* A short option's letter is in optopt; a long one is still whole in
	 * the argument getopt_long stopped at, unless a short option bundled
	 * after it ("-vZ") was at fault. */
	if (strncmp(arg, "--", 2) == 0 && arg[2] != '\0' &&
	    (o = long_option(arg, longopts, &n)) != NULL) {
		int len = (int)strcspn(arg, "=");

		if (c == ':')
			return cli_usage_error("option %.*s needs an argument",
			    len, arg);
		if (o->has_arg == no_argument && arg[len] == '=')
			return cli_usage_error("option %.*s takes no argument",
			    len, arg);
	}
	if (optopt == 0 && strncmp(arg, "--", 2) == 0) {
		int len = (int)strcspn(arg, "=");

		long_option(arg, longopts, &n);
		return cli_usage_error("option %.*s is %s", len, arg,
		    n > 1 ? "ambiguous" : "unknown");
	}
	if (optopt > 0 && optopt < 256 && isgraph(optopt))
		return cli_usage_error("option -%c %s", optopt,
		    c == ':' ? "needs an argument" : "is unknown");
	return cli_usage_error("option %s is not understood", arg);
}

int
cli_default_option(int c, char **argv, const struct option *longopts)
{
	switch (c) {
	case 'h':
		cli_usage(stdout);
		return -1;
	case 'V':
		printf("%s %s\n", prog_name, ONNXQ_VERSION);
		return -1;
	default:
		return cli_bad_option(c, argv, longopts);
	}
}

int
cli_close_stdout(void)
{
	int why;

	errno = 0;
	if (fflush(stdout) != EOF && !ferror(stdout) && fclose(stdout) != EOF)
		return 0;
	why = errno;
	cli_warn("<stdout>: write error%s%s", why ? ": " : "",
	    why ? strerror(why) : "");
	return -1;
}

int
cli_number(const char *opt, const char *arg, double lo, double hi, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(arg, &end);
	if (end == arg || *end != '\0' || errno != 0 || !isfinite(*v) ||
	    *v < lo || *v > hi)
		return cli_usage_error("%s: '%s' is not a number from %g to %g",
		    opt, arg, lo, hi);
	return 0;
}

int
cli_count(const char *opt, const char *arg, long lo, long hi, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(arg, &end, 10);
	if (end == arg || *end != '\0' || errno != 0 || *v < lo || *v > hi)
		return cli_usage_error("%s: '%s' is not a whole number from %ld "
		    "to %ld", opt, arg, lo, hi);
	return 0;
}
