/*
 * onnxq-conform: run ONNX backend test cases with the interpreter in one
 * process, for test/conformance.bats. Not installed.
 *
 *	onnxq-conform [-fmv] [-l LABEL] [-t SECONDS] [-x CASE]...
 *	    [--rtol R] [--atol A] DIR...
 *
 * Each DIR is a case (it holds model.onnx and test_data_set_N/) or a
 * suite whose sub-directories are cases. A case passes when every output
 * of every data set is within tolerance (|out - exp| <= atol + rtol*|exp|,
 * defaults 1e-7 and 1e-3 as in ONNX's backend runner). It is skipped when
 * a node has no kernel ("unsupported ops"), or for another stated reason:
 * non-tensor inputs or outputs (sequences, optionals, maps), string
 * tensors, or a model importing no default-domain opset. Cases named
 * with -x have wrong reference data and are not
 * run. Everything else must pass. -t limits each case (default 60 s).
 * A crash or timeout ends the run with "FAIL CASE: crashed"; with -f each
 * case runs in a child process instead, so the run goes on (much slower:
 * OpenBLAS and OpenMP restart their threads at every fork).
 *
 * Prints "FAIL CASE: reason" per failure, with -v also "ok CASE" and
 * "skip CASE: reason", with -m the missing operators and how many cases
 * each blocks, and last the line
 *	conformance: LABEL: P passed, F failed, S skipped (unsupported ops),
 *	    O skipped (non-tensor or string data), B skipped (bad test data)
 * LABEL defaults to the last component of the first DIR. Exit 1 when a
 * case failed, 2 on usage errors.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dataset.h"
#include "interp.h"
#include "model.h"
#include "ops.h"

enum result { R_PASS, R_FAIL, R_SKIP_OPS, R_SKIP_OTHER, R_BAD_DATA };

struct opts {
	const char **bad;	/* -x: cases whose reference data is wrong */
	int nbad;
	int verbose, missing, fork;
	const char *label;
	int timeout;
	double rtol, atol;
};

/* Missing operators and how many cases each blocks. */
struct tally {
	char **op;
	int *count;
	int n;
};

/* The case running in this process, for the crash and timeout handler. */
static const char *volatile current_case;

static void
on_fatal(int sig)
{
	const char *c = current_case, *what = sig == SIGALRM ? "timed out" :
	    "crashed";

	/* Only async-signal-safe calls here. */
	if (write(1, "FAIL ", 5) < 0 || (c && write(1, c, strlen(c)) < 0) ||
	    write(1, ": ", 2) < 0 || write(1, what, strlen(what)) < 0 ||
	    write(1, "\n", 1) < 0)
		_exit(3);
	signal(sig, SIG_DFL);
	raise(sig);
}

static const char usage[] =
    "usage: onnxq-conform [-fmv] [-l LABEL] [-t SECONDS] [-x CASE]...\n"
    "           [--rtol R] [--atol A] DIR...\n";

static int
is_case(const char *dir)
{
	char path[8192];
	struct stat st;

	snprintf(path, sizeof path, "%s/model.onnx", dir);
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A kind of graph input/output the interpreter cannot take, or NULL. */
static const char *
io_problem(const Onnx__ValueInfoProto *vi)
{
	if (!vi->type)
		return NULL;
	if (vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
		return "non-tensor inputs or outputs";
	if (vi->type->tensor_type && vi->type->tensor_type->elem_type ==
	    DT_STRING)
		return "string tensors";
	return NULL;
}

/* Classify and run one case; msg says why it did not pass. */
static enum result
run_case(const char *dir, const struct opts *o, char *msg, size_t size)
{
	char path[4096];
	struct err e;
	struct model *m = NULL;
	struct interp *ip = NULL;
	struct dataset *ds = NULL;
	Onnx__GraphProto *g;
	const char *dirs[1] = { dir };
	enum result r = R_FAIL;
	const char **in_names = NULL, **out_names = NULL;
	int *in_dtypes = NULL;
	struct tensor *in = NULL, *out = NULL, *exp = NULL;
	int ni = 0, no = 0, opset;
	size_t len = 0;

	snprintf(path, sizeof path, "%s/model.onnx", dir);
	if (!(m = model_load(path, &e))) {
		snprintf(msg, size, "%s", e.msg);
		return R_FAIL;
	}
	g = m->proto->graph;
	for (size_t i = 0; g && i < g->n_input + g->n_output; i++) {
		const Onnx__ValueInfoProto *vi = i < g->n_input ? g->input[i] :
		    g->output[i - g->n_input];
		const char *p = io_problem(vi);

		if (p) {
			snprintf(msg, size, "%s (%s)", p, vi->name);
			r = R_SKIP_OTHER;
			goto out;
		}
	}
	msg[0] = '\0';
	for (size_t i = 0; g && i < g->n_node; i++) {
		const Onnx__NodeProto *n = g->node[i];

		if (ops_find(n->domain ? n->domain : "", n->op_type))
			continue;
		/* One mention per op type: "Loop If". */
		char word[300];
		snprintf(word, sizeof word, " %s%s%s ", n->domain && *n->domain ?
		    n->domain : "", n->domain && *n->domain ? ":" : "", n->op_type);
		char padded[4096];
		snprintf(padded, sizeof padded, " %s ", msg);
		if (strstr(padded, word))
			continue;
		len = strlen(msg);
		snprintf(msg + len, size - len, "%s%s", len ? " " : "", word + 1);
		msg[strlen(msg) - 1] = '\0';
		r = R_SKIP_OPS;
	}
	if (r == R_SKIP_OPS)
		goto out;
	/* Opset 0 means the model imports no default-domain opset. */
	opset = model_opset(m, "");
	if (opset < 1) {
		snprintf(msg, size, "opset %d", opset);
		r = R_SKIP_OTHER;
		goto out;
	}
	if (!(ip = interp_new(m, NULL, &e))) {
		snprintf(msg, size, "%s", e.msg);
		goto out;
	}
	ni = interp_ninputs(ip);
	no = interp_noutputs(ip);
	in_names = calloc(ni + 1, sizeof *in_names);
	in_dtypes = calloc(ni + 1, sizeof *in_dtypes);
	out_names = calloc(no + 1, sizeof *out_names);
	in = calloc(ni + 1, sizeof *in);
	out = calloc(no + 1, sizeof *out);
	exp = calloc(no + 1, sizeof *exp);
	if (!in_names || !in_dtypes || !out_names || !in || !out || !exp) {
		snprintf(msg, size, "out of memory");
		goto out;
	}
	for (int i = 0; i < ni; i++) {
		int64_t dims[TENSOR_MAX_RANK];
		int rank;

		in_names[i] = interp_input_name(ip, i);
		in_dtypes[i] = interp_input_type(ip, i, &rank, dims);
	}
	for (int i = 0; i < no; i++)
		out_names[i] = interp_output_name(ip, i);
	/* Types are checked after the bfloat16 fix-up below. */
	struct dataset_spec spec = { ni, in_names, NULL, no, out_names };
	if (!(ds = dataset_open(dirs, 1, &e))) {
		snprintf(msg, size, "%s", e.msg);
		goto out;
	}
	for (int s = 0; s < dataset_count(ds); s++) {
		const char *sname = strrchr(dataset_sample_name(ds, s), '/') + 1;

		if (dataset_load(ds, s, &spec, in, exp, &e) < 0) {
			snprintf(msg, size, "%s", e.msg);
			goto out;
		}
		/* ONNX 1.12's bfloat16 test data: see tensor_as_bfloat16. */
		for (int k = 0; k < ni; k++)
			tensor_as_bfloat16(&in[k], in_dtypes[k]);
		if (interp_run(ip, in, out, &e) < 0) {
			snprintf(msg, size, "%s: %s", sname, e.msg);
			goto out;
		}
		for (int k = 0; k < no; k++) {
			struct dataset_cmp c;

			if (!exp[k].data) {
				snprintf(msg, size, "%s: no expected value for output %s",
				    sname, out_names[k]);
				goto out;
			}
			tensor_as_bfloat16(&exp[k], out[k].dtype);
			dataset_cmp_init(&c, o->rtol, o->atol);
			dataset_cmp_add(&c, &out[k], &exp[k]);
			if (c.nmismatch) {
				snprintf(msg, size, "%s: output %s: %s", sname,
				    out_names[k], c.first_problem);
				goto out;
			}
			if (c.nbad) {
				snprintf(msg, size, "%s: output %s: %lld of %lld "
				    "elements outside tolerance, max abs error %g",
				    sname, out_names[k], (long long)c.nbad,
				    (long long)c.nelem, c.max_abs);
				goto out;
			}
		}
		for (int k = 0; k < ni; k++)
			tensor_release(&in[k]);
		for (int k = 0; k < no; k++) {
			tensor_release(&out[k]);
			tensor_release(&exp[k]);
		}
	}
	r = R_PASS;
	msg[0] = '\0';
out:
	for (int k = 0; in && k < ni; k++)
		tensor_release(&in[k]);
	for (int k = 0; out && exp && k < no; k++) {
		tensor_release(&out[k]);
		tensor_release(&exp[k]);
	}
	free(in);
	free(out);
	free(exp);
	free(in_names);
	free(in_dtypes);
	free(out_names);
	dataset_free(ds);
	interp_free(ip);
	model_free(m);
	return r;
}

static enum result
fork_case(const char *dir, const struct opts *o, char *msg, size_t size)
{
	int fd[2], status;
	pid_t pid;
	ssize_t n;
	size_t got = 0;
	char buf[4096];

	if (pipe(fd) < 0) {
		snprintf(msg, size, "pipe: %s", strerror(errno));
		return R_FAIL;
	}
	fflush(stdout);
	if ((pid = fork()) < 0) {
		snprintf(msg, size, "fork: %s", strerror(errno));
		return R_FAIL;
	}
	if (pid == 0) {
		enum result r;

		close(fd[0]);
		alarm(o->timeout);
		r = run_case(dir, o, buf + 2, sizeof buf - 2);
		buf[0] = (char)('0' + r);
		buf[1] = ' ';
		if (write(fd[1], buf, strlen(buf)) < 0)
			_exit(3);
		_exit(0);
	}
	close(fd[1]);
	while (got + 1 < sizeof buf &&
	    (n = read(fd[0], buf + got, sizeof buf - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	close(fd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(status)) {
		snprintf(msg, size, "%s (signal %d)", WTERMSIG(status) == SIGALRM ?
		    "timed out" : "crashed", WTERMSIG(status));
		return R_FAIL;
	}
	if (got < 2 || buf[0] < '0' || buf[0] > '3') {
		snprintf(msg, size, "no result (exit status %d)",
		    WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return R_FAIL;
	}
	snprintf(msg, size, "%s", buf + 2);
	return (enum result)(buf[0] - '0');
}

static void
tally_ops(struct tally *t, const char *ops)
{
	char *copy = strdup(ops), *save = NULL;

	for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		int i;

		for (i = 0; i < t->n; i++)
			if (strcmp(t->op[i], w) == 0)
				break;
		if (i == t->n) {
			t->op = realloc(t->op, (t->n + 1) * sizeof *t->op);
			t->count = realloc(t->count, (t->n + 1) * sizeof *t->count);
			t->op[t->n] = strdup(w);
			t->count[t->n++] = 0;
		}
		t->count[i]++;
	}
	free(copy);
}

/* Append the cases under dir (or dir itself) to *list. */
static void
collect(const char *dir, char ***list, int *n)
{
	DIR *d;
	struct dirent *de;
	int first = *n;

	if (is_case(dir)) {
		*list = realloc(*list, (*n + 1) * sizeof **list);
		(*list)[(*n)++] = strdup(dir);
		return;
	}
	if (!(d = opendir(dir))) {
		fprintf(stderr, "onnxq-conform: %s: %s\n", dir, strerror(errno));
		exit(2);
	}
	while ((de = readdir(d))) {
		char path[4096];

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if (!is_case(path))
			continue;
		*list = realloc(*list, (*n + 1) * sizeof **list);
		(*list)[(*n)++] = strdup(path);
	}
	closedir(d);
	qsort(*list + first, *n - first, sizeof **list, name_cmp);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "rtol", required_argument, NULL, 'r' },
		{ "atol", required_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .timeout = 60, .rtol = 1e-3, .atol = 1e-7 };
	struct tally t = { 0 };
	char **cases = NULL, msg[4096], label[256];
	int ncases = 0, c, count[5] = { 0 };

	interp_reexec_bounded_spin(argv);
	o.bad = calloc(argc + 1, sizeof *o.bad);
	while ((c = getopt_long(argc, argv, "fvml:t:x:", longopts, NULL)) != -1)
		switch (c) {
		case 'x': o.bad[o.nbad++] = optarg; break;
		case 'f': o.fork = 1; break;
		case 'v': o.verbose = 1; break;
		case 'm': o.missing = 1; break;
		case 'l': o.label = optarg; break;
		case 't': o.timeout = atoi(optarg); break;
		case 'r': o.rtol = atof(optarg); break;
		case 'a': o.atol = atof(optarg); break;
		default:
			fputs(usage, stderr);
			return 2;
		}
	if (optind == argc) {
		fputs(usage, stderr);
		return 2;
	}
	if (!o.label) {
		const char *s = argv[optind];
		size_t l = strlen(s);

		while (l > 1 && s[l - 1] == '/')
			l--;
		size_t b = l;
		while (b > 0 && s[b - 1] != '/')
			b--;
		snprintf(label, sizeof label, "%.*s", (int)(l - b), s + b);
		o.label = label;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGSEGV, on_fatal);
	signal(SIGBUS, on_fatal);
	signal(SIGFPE, on_fatal);
	signal(SIGILL, on_fatal);
	signal(SIGABRT, on_fatal);
	signal(SIGALRM, on_fatal);
	for (int i = optind; i < argc; i++)
		collect(argv[i], &cases, &ncases);
	for (int i = 0; i < ncases; i++) {
		const char *base = strrchr(cases[i], '/') ?
		    strrchr(cases[i], '/') + 1 : cases[i];
		enum result r = R_BAD_DATA;

		for (int b = 0; b < o.nbad; b++)
			if (strcmp(o.bad[b], base) == 0)
				goto counted;
		if (o.fork) {
			r = fork_case(cases[i], &o, msg, sizeof msg);
		} else {
			current_case = base;
			alarm(o.timeout);
			r = run_case(cases[i], &o, msg, sizeof msg);
			alarm(0);
			current_case = NULL;
		}
counted:

		count[r]++;
		if (r == R_FAIL)
			printf("FAIL %s: %s\n", base, msg);
		else if (o.verbose && r == R_PASS)
			printf("ok %s\n", base);
		else if (o.verbose && r == R_BAD_DATA)
			printf("skip %s: bad test data (-x)\n", base);
		else if (o.verbose)
			printf("skip %s: %s%s\n", base, r == R_SKIP_OPS ?
			    "unsupported ops: " : "", msg);
		if (r == R_SKIP_OPS)
			tally_ops(&t, msg);
	}
	if (o.missing) {
		/* Most blocking first. */
		for (int i = 0; i < t.n; i++)
			for (int j = i + 1; j < t.n; j++)
				if (t.count[j] > t.count[i] || (t.count[j] ==
				    t.count[i] && strcmp(t.op[j], t.op[i]) < 0)) {
					int tc = t.count[i];
					char *to = t.op[i];
					t.count[i] = t.count[j], t.op[i] = t.op[j];
					t.count[j] = tc, t.op[j] = to;
				}
		for (int i = 0; i < t.n; i++)
			printf("missing %s: %d case%s\n", t.op[i], t.count[i],
			    t.count[i] == 1 ? "" : "s");
	}
	printf("conformance: %s: %d passed, %d failed, %d skipped (unsupported "
	    "ops), %d skipped (non-tensor or string data), %d skipped "
	    "(bad test data)\n", o.label, count[R_PASS], count[R_FAIL],
	    count[R_SKIP_OPS], count[R_SKIP_OTHER], count[R_BAD_DATA]);
	for (int i = 0; i < ncases; i++)
		free(cases[i]);
	free(cases);
	for (int i = 0; i < t.n; i++)
		free(t.op[i]);
	free(t.op);
	free(t.count);
	free(o.bad);
	return count[R_FAIL] ? 1 : 0;
}
