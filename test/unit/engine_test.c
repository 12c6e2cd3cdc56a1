/*
 * engine: the decisions on a small stream (test/data/qparams/graph.stream:
 * conv -> relu -> softmax -> reshape -> mul by a constant): default
 * selection, weights per channel, int32 biases, folds, shared grids;
 * the settings table; one tensor decided outside a stream.
 */
#include <stdio.h>
#include <stdlib.h>

#include "engine.h"
#include "rangesel.h"
#include "unit.h"

static const char graph[] =
    "#onnxq\t1.0\n"
    "node\tconv\top=Conv\tin=x,W,B\tout=c\n"
    "node\trelu\top=Relu\tin=c\tout=r\n"
    "node\tsm\top=Softmax\tin=r\tout=s\n"
    "node\trs\top=Reshape\tin=s,shp\tout=q\n"
    "node\tmul\top=Mul\tin=q,k\tout=m\n"
    "weight\tW\tnode=conv\top=Conv\tdtype=float\tshape=2x1x1x1\t"
    "min=-0.5\tmax=2\taxis=0\tcmin=-0.5,-1\tcmax=0.25,2\n"
    "bias\tB\tnode=conv\top=Conv\tinput=x\tweight=W\tdtype=float\t"
    "shape=2\tmin=-1\tmax=3\taxis=0\tcmin=3,-1\tcmax=3,-1\n"
    "weight\tk\tnode=mul\top=Mul\tdtype=float\tshape=scalar\tmin=-1\t"
    "max=3\n"
    "stat\tx\tdtype=float\tn=4\tnan=0\tinf=0\tmin=-1\tmax=3\tbatches=1\t"
    "bmin=-1\tbmax=3\tsum=4\tsumsq=14\n"
    "stat\tc\tdtype=float\tn=8\tnan=0\tinf=0\tmin=-2\tmax=10\tbatches=1\t"
    "bmin=-2\tbmax=10\tsum=10\tsumsq=100\n"
    "stat\tr\tdtype=float\tn=8\tnan=0\tinf=0\tmin=0\tmax=6\tbatches=1\t"
    "bmin=0\tbmax=6\tsum=12\tsumsq=40\n"
    "stat\ts\tdtype=float\tn=8\tnan=0\tinf=0\tmin=0.01\tmax=0.6\t"
    "batches=1\tbmin=0.01\tbmax=0.6\tsum=1\tsumsq=0.5\n"
    "stat\tq\tdtype=float\tn=8\tnan=0\tinf=0\tmin=0.01\tmax=0.6\t"
    "batches=1\tbmin=0.01\tbmax=0.6\tsum=1\tsumsq=0.5\n"
    "stat\tm\tdtype=float\tn=8\tnan=0\tinf=0\tmin=-0.5\tmax=1.8\t"
    "batches=1\tbmin=-0.5\tbmax=1.8\tsum=2\tsumsq=4\n"
    "end\t14\n";

/* Run the engine over text; the stream written (malloc'd) or NULL. */
static char *
run(const char *text, struct engine_opts *o, struct err *e)
{
	FILE *in = fmemopen((void *)text, strlen(text), "r"), *out;
	struct stream_reader *rd = NULL;
	struct stream_writer *w = NULL;
	struct engine *g = NULL;
	char *buf = NULL;
	size_t len = 0;
	int ok = 0;

	if (in == NULL || (out = open_memstream(&buf, &len)) == NULL)
		return NULL;
	if ((rd = stream_reader_new(in, "s", e)) != NULL &&
	    (g = engine_new(o, e)) != NULL && engine_read(g, rd, e) == 0 &&
	    engine_decide(g, e) == 0 &&
	    (w = stream_writer_new(out, "out")) != NULL) {
		engine_put_headers(g, w);
		ok = engine_put_records(g, w, e) == 0 &&
		    stream_write_end(w, e) == 0;
	}
	stream_writer_free(w);
	engine_free(g);
	stream_reader_free(rd);
	fclose(out);
	if (!ok) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The record line of type and subject in s, without its LF, or "". */
static const char *
line(const char *s, const char *type, const char *subject)
{
	static char buf[512];
	char key[128];
	const char *p, *q;

	snprintf(key, sizeof key, "\n%s\t%s\t", type, subject);
	if (s == NULL || (p = strstr(s, key)) == NULL)
		return "";
	p++;
	q = strchr(p, '\n');
	snprintf(buf, sizeof buf, "%.*s", (int)(q - p), p);
	return buf;
}

static void
opts_default(struct engine_opts *o)
{
	memset(o, 0, sizeof *o);
	settings_default(&o->s);
}

static void
test_default_selection(void)
{
	struct engine_opts o;
	struct err e = { "" };
	char *s;

	opts_default(&o);
	s = run(graph, &o, &e);
	REQUIRE(s != NULL);
	CHECK_EQ_STR(e.msg, "");
	/* Only conv: its input and output, its weight and bias. */
	CHECK_EQ_STR(line(s, "qparam", "x"), "qparam\tx\trole=act\t"
	    "type=uint8\tscale=0.015686275\tzp=64\tmethod=minmax\t"
	    "rmin=-1\trmax=3");
	CHECK(*line(s, "qparam", "c"));
	CHECK_EQ_STR(line(s, "qparam", "r"), "");
	CHECK_EQ_STR(line(s, "qparam", "k"), "");
	CHECK_EQ_STR(line(s, "qparam", "W"), "qparam\tW\trole=weight\t"
	    "type=int8\taxis=0\tscale=0.003937008,0.015748031\tzp=0,0\t"
	    "method=minmax\trmin=-0.5,-1\trmax=0.25,2");
	CHECK_EQ_STR(line(s, "qparam", "B"), "qparam\tB\trole=bias\t"
	    "type=int32\taxis=0\tscale=6.175699e-05,0.00024702796\t"
	    "zp=0,0\tinput=x\tweight=W");
	CHECK_EQ_STR(line(s, "fold", "relu"), "");
	free(s);
}

static void
test_all_ops(void)
{
	struct engine_opts o;
	struct err e = { "" };
	char *s;

	opts_default(&o);
	o.all_ops = 1;
	s = run(graph, &o, &e);
	REQUIRE(s != NULL);
	/* Relu's only input takes its output's range; the quantization of
	 * r clamps at 0, so the Relu folds and c has no record. */
	CHECK_EQ_STR(line(s, "fold", "relu"), "fold\trelu\tinto=conv");
	CHECK_EQ_STR(line(s, "qparam", "c"), "");
	CHECK_EQ_STR(line(s, "qparam", "s"), "qparam\ts\trole=act\t"
	    "type=uint8\tscale=0.003921569\tzp=0\tmethod=minmax\t"
	    "rmin=0\trmax=1");
	CHECK_EQ_STR(line(s, "qparam", "q"), "qparam\tq\trole=act\t"
	    "type=uint8\tscale=0.003921569\tzp=0\tmethod=shared\tfrom=s");
	/* Mul's constant is quantized as an activation. */
	CHECK_EQ_STR(line(s, "qparam", "k"), "qparam\tk\trole=weight\t"
	    "type=uint8\tscale=0.015686275\tzp=64\tmethod=minmax\t"
	    "rmin=-1\trmax=3");
	free(s);

	o.keep_acts = 1;
	s = run(graph, &o, &e);
	REQUIRE(s != NULL);
	CHECK_EQ_STR(line(s, "fold", "relu"), "");
	CHECK(*line(s, "qparam", "c"));
	free(s);
}

static void
test_selection_needs_nodes(void)
{
	struct engine_opts o;
	struct err e = { "" };

	opts_default(&o);
	o.lists[ENGINE_OPS_EXCLUDE] = "Conv";
	CHECK(run("#onnxq\t1.0\nstat\tx\tdtype=float\tn=0\tnan=0\tinf=0\t"
	    "min=inf\tmax=-inf\tbatches=0\tbmin=0\tbmax=0\tsum=0\tsumsq=0\n"
	    "end\t1\n", &o, &e) == NULL);
	CHECK_EQ_STR(e.msg, "s: node and op-type selections need node "
	    "records");
}

static void
test_settings(void)
{
	struct settings a, b;

	CHECK_EQ_INT(settings_find("activations", "type"), CG_ACT_TYPE);
	CHECK_EQ_INT(settings_find("weights", "type"), CG_W_TYPE);
	CHECK_EQ_INT(settings_find(NULL, "min_real_range"), CG_MIN_REAL_RANGE);
	CHECK_EQ_INT(settings_find("bias", "weight_adjust"), CG_BIAS_ADJUST);
	CHECK_EQ_INT(settings_find("weights", "method"), -1);
	CHECK_EQ_INT(settings_find(NULL, "type"), -1);
	CHECK(!settings_in_bounds(CG_PERCENTILE, 0));
	CHECK(settings_in_bounds(CG_PERCENTILE, 100));
	CHECK(!settings_in_bounds(CG_ENTROPY_BINS, 15));
	settings_default(&a);
	settings_default(&b);
	settings_set_int(&b, CG_W_TYPE, DT_UINT8);
	settings_set_real(&b, CG_PERCENTILE, 99);
	b.pos[CG_W_TYPE].line = 3;
	b.act_type = DT_INT16;		/* not set: not taken */
	settings_apply(&a, &b);
	CHECK(a.w_type == DT_UINT8 && a.percentile == 99);
	CHECK(a.act_type == DT_UINT8 && a.pos[CG_W_TYPE].line == 3);
	CHECK(a.set == ((1u << CG_W_TYPE) | (1u << CG_PERCENTILE)));
}

/* What onnx-mixprec does to decide a tensor for another type. */
static void
test_one_tensor(void)
{
	struct settings s;
	struct tstats ts;
	struct qparams_opts o;
	struct qparam q = { 0 };
	struct err e = { "" };
	float x[4] = { -1, 0, 2, 3 }, lo, hi;
	int method, fixed;

	settings_default(&s);
	REQUIRE(tstats_init(&ts, 7, &e) == 0);
	REQUIRE(tstats_add_batch(&ts, x, 4, &e) == 0);
	CHECK(engine_select_range(&s, NULL, &ts, 0, &lo, &hi, &method,
	    &e) == 0);
	CHECK_EQ_INT(method, RANGESEL_MSE);
	CHECK(lo <= 0 && hi > 2);
	/* Without a histogram, the default method falls back to minmax. */
	tstats_release(&ts);
	REQUIRE(tstats_init(&ts, -1, &e) == 0);
	REQUIRE(tstats_add_batch(&ts, x, 4, &e) == 0);
	CHECK(engine_select_range(&s, NULL, &ts, 1, &lo, &hi, &method,
	    &e) == 0);
	CHECK(method == RANGESEL_MINMAX && lo == -1 && hi == 3);
	CHECK(engine_select_range(&s, NULL, &ts, 0, &lo, &hi, &method,
	    &e) < 0);
	CHECK_EQ_STR(e.msg, "method mse needs its hist records");
	tstats_release(&ts);

	o = engine_act_opts(&s);
	o.type = DT_UINT16;
	CHECK(engine_decide_range(&q, &fixed, NULL, o, -1, 3, "minmax",
	    &e) == 0);
	CHECK(q.type == DT_UINT16 && q.n == 1 && q.axis == -1 && !fixed);
	CHECK(q.zp[0] == 16384 && q.rmin[0] == -1 && q.rmax[0] == 3);
	CHECK_EQ_STR(q.method, "minmax");
	qparam_release(&q);
}

/*
 * A range on one side of 0 is quantized over [lo, 0] or [0, hi]: the
 * records say so (#17: rmin=-6.71 rmax=-5.83 with zp=255 read as a range
 * that excluded 0).
 */
static void
test_range_with_zero(void)
{
	struct settings s;
	struct engine_opts eo;
	struct qparam q = { 0 };
	struct err e = { "" };
	char text[sizeof graph + 16], *out;
	const char *p;
	int fixed;

	settings_default(&s);
	CHECK(engine_decide_range(&q, &fixed, NULL, engine_act_opts(&s),
	    -6.71f, -5.83f, "minmax", &e) == 0);
	CHECK(q.zp[0] == 255 && q.rmin[0] == -6.71f && q.rmax[0] == 0);
	CHECK(engine_decide_range(&q, &fixed, NULL, engine_act_opts(&s),
	    0.5f, 2, "minmax", &e) == 0);
	CHECK(q.zp[0] == 0 && q.rmin[0] == 0 && q.rmax[0] == 2);
	qparam_release(&q);
	/* per channel: W's first channel made positive */
	REQUIRE((p = strstr(graph, "cmin=-0.5,-1")) != NULL);
	snprintf(text, sizeof text, "%.*scmin=0.125,-1%s", (int)(p - graph),
	    graph, p + strlen("cmin=-0.5,-1"));
	opts_default(&eo);
	out = run(text, &eo, &e);
	REQUIRE(out != NULL);
	CHECK_EQ_STR(line(out, "qparam", "W"), "qparam\tW\trole=weight\t"
	    "type=int8\taxis=0\tscale=0.001968504,0.015748031\tzp=0,0\t"
	    "method=minmax\trmin=0,-1\trmax=0.25,2");
	free(out);
}

/* A classifier's head: gemm -> sigmoid, the logit calibrated negative. */
static const char head[] =
    "#onnxq\t1.0\n"
    "node\tgemm\top=Gemm\tin=x,W\tout=logit\n"
    "node\tsig\top=Sigmoid\tin=logit\tout=y\n"
    "weight\tW\tnode=gemm\top=Gemm\tdtype=float\tshape=1x1\tmin=-1\t"
    "max=-1\n"
    "stat\tx\tdtype=float\tn=4\tnan=0\tinf=0\tmin=-1\tmax=3\tbatches=1\t"
    "bmin=-1\tbmax=3\tsum=4\tsumsq=14\n"
    "stat\tlogit\tdtype=float\tn=4\tnan=0\tinf=0\tmin=-6.71\tmax=-5.83\t"
    "batches=1\tbmin=-6.71\tbmax=-5.83\tsum=-25\tsumsq=160\n"
    "stat\ty\tdtype=float\tn=4\tnan=0\tinf=0\tmin=0.001\tmax=0.003\t"
    "batches=1\tbmin=0.001\tbmax=0.003\tsum=0.008\tsumsq=0.0001\n"
    "end\t6\n";

static char warned[1024];

static void
keep_warning(const char *fmt, va_list ap)
{
	vsnprintf(warned, sizeof warned, fmt, ap);
}

/*
 * #17: a tensor reaching only outputs over a one-sided range warns; with
 * float_outputs it is left in float (y and logit both: Sigmoid is not
 * quantized by default, and y is read by nobody).
 */
static void
test_outputs(void)
{
	struct engine_opts o;
	struct err e = { "" };
	char *s;

	opts_default(&o);
	o.warn = keep_warning;
	warned[0] = '\0';
	s = run(head, &o, &e);
	REQUIRE(s != NULL);
	CHECK_EQ_STR(line(s, "qparam", "logit"), "qparam\tlogit\trole=act\t"
	    "type=uint8\tscale=0.026313726\tzp=255\tmethod=minmax\t"
	    "rmin=-6.71\trmax=0");
	CHECK_EQ_STR(warned, "warning: tensor logit: reaches a model output, "
	    "quantized over [-6.71, 0] where calibration saw no positive "
	    "value: positive ones will read 0; calibrate with samples of "
	    "both signs, or leave it in float (--float-outputs)");
	free(s);
	/* Sigmoid's own output keeps its sign: no warning. */
	warned[0] = '\0';
	o.all_ops = 1;
	s = run(head, &o, &e);
	REQUIRE(s != NULL);
	CHECK(*line(s, "qparam", "y"));
	CHECK(strstr(warned, "tensor y") == NULL);
	free(s);
	o.all_ops = 0;
	settings_set_int(&o.s, CG_FLOAT_OUTPUTS, 1);
	warned[0] = '\0';
	s = run(head, &o, &e);
	REQUIRE(s != NULL);
	CHECK_EQ_STR(line(s, "qparam", "logit"), "");
	CHECK(*line(s, "qparam", "x"));
	CHECK(*line(s, "qparam", "W"));
	CHECK_EQ_STR(warned, "");
	free(s);
	/* with all ops the Sigmoid is quantized: logit feeds it, y is left */
	o.all_ops = 1;
	s = run(head, &o, &e);
	REQUIRE(s != NULL);
	CHECK(*line(s, "qparam", "logit"));
	CHECK_EQ_STR(line(s, "qparam", "y"), "");
	free(s);
}

/* A bias re-decided for its activation's new scale (onnx-mixprec). */
static void
test_bias_scales(void)
{
	struct wb_rec b = { 0 };
	struct qparam w = { 0 }, q = { 0 };
	struct err e = { "" };
	float cmin[2] = { 3, -1 }, cmax[2] = { 3, -0.5f }, ws[2] = { 0.5f, 2 };
	float *babs;
	size_t nb = 0;

	b.axis = 0;
	b.cmin = cmin;
	b.cmax = cmax;
	b.nch = 2;
	REQUIRE((babs = engine_bias_absmax(&b, &nb)) != NULL);
	CHECK(nb == 2 && babs[0] == 3 && babs[1] == 1);
	free(babs);
	b.axis = -1;
	b.min = -4;
	b.max = 2;
	REQUIRE((babs = engine_bias_absmax(&b, &nb)) != NULL);
	CHECK(nb == 1 && babs[0] == 4);
	free(babs);

	/* Per channel when the weight and the bias are: act x weight. */
	w.n = 2;
	w.scale = ws;
	CHECK(engine_bias_scales(&q, 0.25f, &w, 2, 1, 0, &e) == 0);
	CHECK(q.type == DT_INT32 && q.n == 2 && q.axis == 0);
	CHECK(q.scale[0] == 0.125f && q.scale[1] == 0.5f);
	CHECK(q.rmin == NULL && q.method == NULL);
	/* Per tensor otherwise. */
	CHECK(engine_bias_scales(&q, 0.25f, &w, 1, 1, 0, &e) == 0);
	CHECK(q.n == 1 && q.axis == -1 && q.scale[0] == 0.5f);
	qparam_release(&q);
}

/* Dynamic: Conv only with all_ops; weights only, no acts, biases, folds. */
static void
test_dynamic(void)
{
	struct engine_opts o;
	struct err e = { "" };
	char *s;

	opts_default(&o);
	o.s.dynamic = 1;
	CHECK(run(graph, &o, &e) == NULL);
	CHECK_EQ_STR(e.msg, "s: no MatMul, Gemm, LSTM, Attention node with a "
	    "constant weight to quantize dynamically");
	/* W (2x1x1x1) looks depthwise: left out unless asked for. */
	o.all_ops = 1;
	CHECK(run(graph, &o, &e) == NULL);
	CHECK_EQ_STR(e.msg, "s: no MatMul, Gemm, LSTM, Attention or Conv node "
	    "with a constant weight to quantize dynamically");
	o.lists[ENGINE_OPS_INCLUDE] = "Conv";
	e.msg[0] = '\0';
	s = run(graph, &o, &e);
	REQUIRE(s != NULL);
	CHECK_EQ_STR(e.msg, "");
	CHECK_EQ_STR(line(s, "dynamic", "conv"), "dynamic\tconv\tweight=W");
	CHECK_EQ_STR(line(s, "qparam", "W"), "qparam\tW\trole=weight\t"
	    "type=int8\taxis=0\tscale=0.003937008,0.015748031\tzp=0,0\t"
	    "method=minmax\trmin=-0.5,-1\trmax=0.25,2");
	CHECK_EQ_STR(line(s, "qparam", "x"), "");
	CHECK_EQ_STR(line(s, "qparam", "B"), "");
	CHECK_EQ_STR(line(s, "qparam", "k"), "");
	CHECK_EQ_STR(line(s, "fold", "relu"), "");
	CHECK_EQ_STR(line(s, "dynamic", "mul"), "");
	free(s);
	o.lists[ENGINE_OPS_INCLUDE] = "Conv,Mul";
	CHECK(run(graph, &o, &e) == NULL);
	CHECK_EQ_STR(e.msg, "op type Mul has no dynamic form (MatMul, Gemm, "
	    "LSTM, Attention, Conv)");
}

UNIT_MAIN(test_range_with_zero, test_outputs, test_default_selection,
    test_all_ops, test_selection_needs_nodes, test_settings,
    test_one_tensor, test_bias_scales, test_dynamic)
