/*
 * fuzz_model: the model loader and what every program does next with a
 * model: model_load_mem (wire check, unpack), graph_new (index, cycles,
 * duplicates), prep_model (Constant folding, BatchNormalization fusion),
 * the graph index again, the weight records of onnx-calib, interp_new
 * (kernel lookup, constants decoded, including external data) and
 * model_pack.
 *
 * External data is read relative to a directory made at start-up that
 * holds what a hostile model may point at: a data file, one in a
 * sub-directory, a symlink to it, a symlink out of the directory, a file
 * with two hard links, a FIFO; fuzz_model.dict names them.
 *
 * With FUZZ_RUN set (fuzz_interp.c) the model is also run: onnx-calib's
 * engine on inputs of the declared types and shapes (dynamic dimensions
 * 1, values from the input bytes), when they are small. Run time errors
 * are expected; crashes, leaks and out-of-bounds access are not.
 */
#include "fuzz.h"

#include <sys/stat.h>

#include "calib.h"
#include "graph.h"
#include "interp.h"
#include "model.h"
#include "prep.h"
#include "stream.h"
#include "weights.h"

#ifndef FUZZ_RUN
#define FUZZ_RUN 0
#endif
/* Inputs with more elements than this are not run (time, not safety). */
#define RUN_MAX_ELEM 4096

static char *ext_dir;

static void
remove_ext_dir(void)
{
	static const char *const names[] = {
		"sub/w.bin", "sub", "w.bin", "link.bin", "out.bin",
		"hard.bin", "hard2.bin", "fifo", NULL
	};
	char path[4200];

	if (!ext_dir)
		return;
	for (int i = 0; names[i]; i++) {
		snprintf(path, sizeof path, "%s/%s", ext_dir, names[i]);
		if (remove(path) < 0)
			continue;
	}
	rmdir(ext_dir);
	free(ext_dir);
	ext_dir = NULL;
}

static void
put_file(const char *dir, const char *name, size_t n)
{
	char path[4200];
	FILE *fp;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (!(fp = fopen(path, "w")))
		abort();
	for (size_t i = 0; i < n; i++)
		putc((int)((i * 37 + 11) & 0xff), fp);
	if (fclose(fp) != 0)
		abort();
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");
	char path[4200], target[4200];

	(void)argc;
	(void)argv;
	snprintf(path, sizeof path, "%s/onnxq-fuzz-model.XXXXXX",
	    tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(path) || !(ext_dir = strdup(path)))
		abort();
	atexit(remove_ext_dir);
	put_file(ext_dir, "w.bin", 4096);
	snprintf(path, sizeof path, "%s/sub", ext_dir);
	if (mkdir(path, 0700) < 0)
		abort();
	put_file(ext_dir, "sub/w.bin", 256);
	snprintf(path, sizeof path, "%s/link.bin", ext_dir);
	if (symlink("w.bin", path) < 0)
		abort();
	snprintf(path, sizeof path, "%s/out.bin", ext_dir);
	if (symlink("/etc/passwd", path) < 0)
		abort();
	put_file(ext_dir, "hard.bin", 64);
	snprintf(path, sizeof path, "%s/hard2.bin", ext_dir);
	snprintf(target, sizeof target, "%s/hard.bin", ext_dir);
	if (link(target, path) < 0)
		abort();
	snprintf(path, sizeof path, "%s/fifo", ext_dir);
	if (mkfifo(path, 0600) < 0)
		abort();
	return 0;
}

#if FUZZ_RUN
/* Small inputs of the declared types and shapes, or -1 to skip the run. */
static int
make_inputs(const struct interp *ip, const uint8_t *data, size_t size,
    struct tensor *in)
{
	int64_t dims[TENSOR_MAX_RANK];
	struct err e;
	int rank, dt;
	size_t k = 0;

	for (int i = 0; i < interp_ninputs(ip); i++) {
		dt = interp_input_type(ip, i, &rank, dims);
		if (dt == DT_UNDEFINED)
			dt = DT_FLOAT;
		if (rank < 0) {
			rank = 1;
			dims[0] = 1;
		}
		for (int d = 0; d < rank; d++)
			if (dims[d] < 0)
				dims[d] = 1;
		int64_t n = shape_nelem(rank, dims, &e);
		if (n < 0 || n > RUN_MAX_ELEM || dtype_size(dt) == 0 ||
		    tensor_alloc(&in[i], dt, rank, dims, &e) < 0)
			return -1;
		/* small values: indices, axes and counts stay plausible */
		for (int64_t j = 0; j < n && size > 0; j++, k++)
			tensor_set(&in[i], j, (double)((int)data[k % size] % 7 -
			    3) / (dtype_is_float(dt) ? 2 : 1));
	}
	return 0;
}

static void
run(const struct model *m, const uint8_t *data, size_t size)
{
	struct calib_opts o;
	struct calib *c;
	struct tensor *in;
	struct stream_writer *w;
	struct err e = { "" };
	int n;

	calib_opts_init(&o);
	o.threads = 1;
	if (!(c = calib_new(m, &o, &e))) {
		fuzz_check_err(&e);
		return;
	}
	n = interp_ninputs(calib_interp(c));
	if (!(in = calloc((size_t)n + 1, sizeof *in)))
		abort();
	if (make_inputs(calib_interp(c), data, size, in) == 0) {
		e.msg[0] = '\0';
		if (calib_run(c, in, &e) < 0)
			fuzz_check_err(&e);
		else {
			if (!(w = stream_writer_new(fuzz_devnull(), "null")))
				abort();
			e.msg[0] = '\0';
			if (calib_write(c, w, 1, &e) < 0)
				fuzz_check_err(&e);
			stream_writer_free(w);
		}
	}
	for (int i = 0; i < n; i++)
		tensor_release(&in[i]);
	free(in);
	calib_free(c);
}
#endif

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct model *m;
	struct graph *gr;
	struct interp *ip;
	struct interp_opts io = { .threads = 1 };
	struct stream_writer *w;
	struct err e = { "" };
	void *buf;
	size_t len;

	if (!(m = model_load_mem(data, size, "fuzz.onnx", ext_dir, &e))) {
		fuzz_check_err(&e);
		return 0;
	}
	if ((gr = graph_new(m->proto->graph, &e)))
		graph_free(gr);
	else
		fuzz_check_err(&e);
	e.msg[0] = '\0';
	if (prep_model(m, NULL, &e) < 0) {
		fuzz_check_err(&e);
		goto done;
	}
	if (!(gr = graph_new(m->proto->graph, &e))) {
		fuzz_check_err(&e);
		goto done;
	}
	if (!(w = stream_writer_new(fuzz_devnull(), "null")))
		abort();
	if (weights_emit(m, gr, w, &e) < 0)
		fuzz_check_err(&e);
	stream_writer_free(w);
	graph_free(gr);
	e.msg[0] = '\0';
	if ((ip = interp_new(m, &io, &e))) {
		interp_free(ip);
#if FUZZ_RUN
		run(m, data, size);
#endif
	} else
		fuzz_check_err(&e);
	e.msg[0] = '\0';
	if (model_pack(m, &buf, &len, &e) == 0)
		free(buf);
	else
		fuzz_check_err(&e);
done:
	model_free(m);
	return 0;
}
