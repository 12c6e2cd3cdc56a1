/*
 * onnxq-qlinksweep: a fused QuantizeLinear -> DequantizeLinear chain
 * (lib/fuse.c) against the two kernels (lib/op_quant.c) one after the
 * other, on every one of the 2^32 float32 bit patterns (NaNs,
 * infinities, subnormals, ties and all), for scripts/bench-qlink. Too
 * slow for a unit test (seconds per parameter set). Not installed.
 *
 *	onnxq-qlinksweep [-t THREADS] TYPE SCALE ZERO [SCALE2 ZERO2]
 *
 * TYPE is uint8, int8, uint16, int16, uint4 or int4; SCALE and ZERO are
 * QuantizeLinear's (opset 21), SCALE2 and ZERO2 DequantizeLinear's
 * (default: the same). Prints "VALUES<TAB>DIFFERENT" and, for the first
 * value that differs, its bits and both results. Exit 0 when none
 * differ, 1 when some do or on error, 2 on usage.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuse.h"
#include "ops.h"

#define CHUNK ((int64_t)1 << 20)	/* values per kernel run */

/* The constants s, z (QuantizeLinear) and s2, z2 (DequantizeLinear). */
static const char *const names[4] = { "s", "z", "s2", "z2" };

static const struct tensor *
param(void *ctx, const char *name)
{
	const struct tensor *t = ctx;

	for (int i = 0; i < 4; i++)
		if (strcmp(name, names[i]) == 0)
			return &t[i];
	return NULL;
}

static int
scalar(struct tensor *t, int dtype, double v, struct err *e)
{
	if (tensor_alloc(t, dtype, 0, NULL, e) < 0)
		return -1;
	tensor_set(t, 0, v);
	return 0;
}

/* Run node nd's default-domain kernel at opset 21 on in[0..2] into y. */
static int
run_op(Onnx__NodeProto *nd, const struct tensor **in, struct tensor *y,
    struct err *e)
{
	const struct op_def *d = ops_find("", nd->op_type);
	void *state = NULL;
	struct op_ctx c;

	memset(&c, 0, sizeof c);
	c.node = nd, c.opset = 21, c.in = in, c.nin = 3;
	c.out = y, c.nout = 1, c.threads = 1, c.state = &state, c.err = e;
	return d ? d->run(&c) : err_set(e, "no kernel for %s", nd->op_type);
}

static int
type_of(const char *s)
{
	static const struct { const char *name; int dt; } t[] = {
		{ "uint8", DT_UINT8 }, { "int8", DT_INT8 },
		{ "uint16", DT_UINT16 }, { "int16", DT_INT16 },
		{ "uint4", DT_UINT4 }, { "int4", DT_INT4 },
	};

	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (!strcmp(s, t[i].name))
			return t[i].dt;
	return -1;
}

int
main(int argc, char **argv)
{
	char *qin[3] = { "x", "s", "z" }, *dqin[3] = { "q", "s2", "z2" };
	char *qout[1] = { "q" }, *dqout[1] = { "y" };
	Onnx__NodeProto qn, dqn;
	struct fuse_link l[2];
	struct tensor p[4];	/* by names[] */
	struct err e;
	int threads = 1, c, dt;
	int64_t bad = 0;
	uint64_t first = UINT64_MAX;	/* the lowest bits that differ */
	float firstgot = 0, firstref = 0;

	while ((c = getopt(argc, argv, "t:")) != -1)
		if (c == 't')
			threads = atoi(optarg);
		else
			return 2;
	argc -= optind, argv += optind;
	if ((argc != 3 && argc != 5) || (dt = type_of(argv[0])) < 0 ||
	    threads < 1) {
		fprintf(stderr, "usage: onnxq-qlinksweep [-t THREADS] TYPE "
		    "SCALE ZERO [SCALE2 ZERO2]\n");
		return 2;
	}
	memset(p, 0, sizeof p);
	for (int i = 0; i < 4; i++)
		if (scalar(&p[i], i % 2 ? dt : DT_FLOAT, strtod(argv[argc ==
		    5 ? i + 1 : i % 2 + 1], NULL), &e) < 0)
			goto fail;
	onnx__node_proto__init(&qn);
	onnx__node_proto__init(&dqn);
	qn.op_type = "QuantizeLinear", dqn.op_type = "DequantizeLinear";
	qn.input = qin, dqn.input = dqin;
	qn.n_input = dqn.n_input = 3;
	qn.output = qout, dqn.output = dqout;
	qn.n_output = dqn.n_output = 1;
	if (fuse_link_parse(&l[0], &qn, 21, "x", "x", param, p) < 0 ||
	    fuse_link_parse(&l[1], &dqn, 21, "q", "x", param, p) < 0) {
		fprintf(stderr, "onnxq-qlinksweep: not a chain\n");
		return 1;
	}
	#pragma omp parallel for num_threads(threads) schedule(dynamic) \
	    reduction(+:bad)
	for (int64_t at = 0; at < ((int64_t)1 << 32); at += CHUNK) {
		struct tensor x = { 0 }, q = { 0 }, y = { 0 };
		const struct tensor *in[3];
		float *got = malloc(CHUNK * sizeof *got), *outs[2];
		struct err te;
		int64_t d = 0;

		if (!got || tensor_alloc(&x, DT_FLOAT, 1,
		    (const int64_t[]){ CHUNK }, &te) < 0)
			abort();
		for (int64_t i = 0; i < CHUNK; i++) {
			uint32_t b = (uint32_t)(at + i);

			memcpy((float *)x.data + i, &b, sizeof b);
		}
		in[0] = &x, in[1] = &p[0], in[2] = &p[1];
		if (run_op(&qn, in, &q, &te) < 0)
			abort();
		in[0] = &q, in[1] = &p[2], in[2] = &p[3];
		if (run_op(&dqn, in, &y, &te) < 0)
			abort();
		outs[0] = NULL, outs[1] = got;
		fuse_run(l, 2, x.data, outs, CHUNK, 1);
		for (int64_t i = 0; i < CHUNK; i++)
			if (memcmp(got + i, (float *)y.data + i, 4) != 0 &&
			    d++ == 0) {
				#pragma omp critical
				if ((uint64_t)(at + i) < first) {
					first = (uint64_t)(at + i);
					firstgot = got[i];
					firstref = ((float *)y.data)[i];
				}
			}
		bad += d;
		free(got);
		tensor_release(&x), tensor_release(&q), tensor_release(&y);
	}
	printf("%" PRId64 "\t%" PRId64 "\n", (int64_t)1 << 32, bad);
	if (bad)
		printf("first: x bits 0x%08" PRIx64 ": fused %a, kernels %a\n",
		    first, firstgot, firstref);
	tensor_release_n(p, 4);
	return bad ? 1 : 0;
fail:
	fprintf(stderr, "onnxq-qlinksweep: %s\n", e.msg);
	return 1;
}
