/*
 * cli: what the programs say on stderr, the same way in each: their
 * name, then one line (a message quoting a name with a newline in it is
 * still one line, as err_vset makes it); a usage mistake adds the usage
 * and means exit status 2. cli_init() names the program and its usage
 * text once, at the start of main().
 */
#ifndef ONNXQ_CLI_H
#define ONNXQ_CLI_H

#include <stdarg.h>
#include <stdio.h>

void cli_init(const char *prog, const char *usage_text);
/* Called before each message (a progress bar erases itself); NULL: none. */
void cli_before_message(void (*fn)(void));
const char *cli_prog(void);
void cli_usage(FILE *fp);
/* "PROG: MESSAGE" on one line. */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_vwarn(const char *fmt, va_list ap);
/* The same, then the usage; returns 2, the exit status. */
int cli_usage_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
/*
 * What getopt_long (with opterr = 0 and an optstring starting with ':')
 * did not like, c being its '?' or ':', as a usage error: "option -x is
 * unknown", "option --out needs an argument"... Returns 2.
 */
struct option;
int cli_bad_option(int c, char **argv, const struct option *longopts);
/*
 * The default: case of every program's getopt_long switch: 'h' (-h,
 * --help) prints the usage and 'V' (-V, --version) "PROG VERSION" on
 * stdout, and return -1 (done, once stdout is closed); anything else is
 * cli_bad_option's usage error and its 2.
 */
int cli_default_option(int c, char **argv, const struct option *longopts);
/*
 * Flush and close stdout, where help, version and output to "-" went: 0,
 * or -1 after "PROG: <stdout>: write error: REASON" (the wording of
 * outfile's), so a full disk or a closed pipe is never a silent success.
 * A write that failed before counts (ferror): a program that reported
 * that failure already does not call it.
 */
int cli_close_stdout(void);

/*
 * An option's number: ARG must be all of a finite number in [lo, hi]
 * (cli_count: a whole one). 0, or the usage error "OPT: 'ARG' is not a
 * number from LO to HI" and its exit status 2. The one parser every
 * program's options use, so the messages and limits read the same.
 */
int cli_number(const char *opt, const char *arg, double lo, double hi,
    double *v);
int cli_count(const char *opt, const char *arg, long lo, long hi, long *v);

/* --threads: 1 to CLI_THREADS_MAX in every program. */
#define CLI_THREADS_MAX	256

#endif
