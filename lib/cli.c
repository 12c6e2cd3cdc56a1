/*
 * cli: see cli.h.
 */
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
