#!/usr/bin/env bats
# agreement.bats: our interpreter computes what ONNX Runtime (graph
# optimizations disabled) computes on the QDQ models our pipeline writes,
# node by node. test/ort-dump.js saves every tensor ORT computes for one
# sample; onnxq-teacher (test/tools) runs each node on ORT's values of its
# inputs and compares: every QuantizeLinear output, and every float output
# after the QuantizeLinear that reads it, must be within one quantization
# step of ORT's; the ops in $EXACT must agree exactly (their float results
# have one correct rounding, or we follow ORT's summation order: pools,
# Resize linear), the others (Conv, MatMul, Softmax, normalisations, ...)
# may differ in float rounding, which moves a value across a rounding tie
# of the next QuantizeLinear only rarely (the real model: at most 0.1 % of
# a node's elements). Models: test/data/agreement/make-fixture.py (every
# quantized op kind) as u8 per-tensor, s8 per-channel and a16/w8; the
# test/data/qdq fixtures; a mixed-precision model (convert chains) from
# onnx-mixprec; PaddleOCR rec 8-bit. Also that the checker does fail on a
# difference.
# Needs: onnxq-teacher, /usr/bin/python3 with onnx and numpy, node with
# onnxruntime-node and the real models (scripts/fetch-models),
# scripts/make-ocr-data (fonts, Pillow).

load helpers

PY=/usr/bin/python3
EXACT=QuantizeLinear,DequantizeLinear,AveragePool,GlobalAveragePool
EXACT=$EXACT,MaxPool,Resize,Pad,Add,Mul,Sub,Div,Relu,Clip,HardSwish
EXACT=$EXACT,HardSigmoid,Pow,Sqrt,Concat,Reshape,Transpose,Flatten,Squeeze
EXACT=$EXACT,Unsqueeze,Slice,Gather,Split

# quantize MODEL DATADIR OUT [QPARAMS OPTIONS...]: our whole pipeline.
quantize() {
	local model=$1 data=$2 out=$3

	shift 3
	onnx-calib --quiet -d "$data" "$model" >"$T/stats" 2>"$T/calib.err" ||
	    fail "onnx-calib: $(cat "$T/calib.err")" || return
	onnx-qparams "$@" "$T/stats" 2>"$T/qparams.err" |
	    onnx-qdq-insert "$model" >"$out" 2>"$T/insert.err" ||
	    fail "pipeline: $(cat "$T/qparams.err" "$T/insert.err")"
}

# teach MODEL SAMPLEDIR [TEACHER OPTIONS...]: ORT dumps, we check.
teach() {
	local model=$1 sample=$2 dump

	shift 2
	dump=$T/dump-$(basename "$model" .onnx)
	run --separate-stderr ort_node "$ONNXQ_ROOT/test/ort-dump.js" \
	    "$model" "$sample" "$dump"
	[ "$status" -eq 0 ] || fail "ort-dump: $stderr" || return
	run --separate-stderr onnxq-teacher -e "$EXACT" "$@" "$model" "$dump"
	printf '# %s: %s\n' "$(basename "$model")" "${lines[-1]}" >&3
	[ "$status" -eq 0 ] || fail "$output" "$stderr" || return
	[[ ${lines[-1]} == "teacher: "*" nodes, 0 failed, worst steps "[01]" "* ]] ||
	    fail "got: $output"
}

fixture() {
	"$PY" "$ONNXQ_ROOT/test/data/agreement/make-fixture.py" "$T/fx.onnx" &&
	    "$PY" "$ONNXQ_ROOT/scripts/make-inputs.py" -n 4 --seed 3 \
	    "$T/fx.onnx" "$T/data" >/dev/null
}

@test "agreement: every quantized op kind, u8 per-tensor" {
	fixture
	quantize "$T/fx.onnx" "$T/data" "$T/q.onnx" --all-ops
	teach "$T/q.onnx" "$T/data/s0"
}

@test "agreement: every quantized op kind, s8 per-channel" {
	fixture
	quantize "$T/fx.onnx" "$T/data" "$T/q.onnx" --all-ops -a int8 \
	    -w int8 --per-channel
	teach "$T/q.onnx" "$T/data/s0"
}

@test "agreement: every quantized op kind, a16/w8" {
	fixture
	quantize "$T/fx.onnx" "$T/data" "$T/q.onnx" --all-ops -a uint16 \
	    -w int8
	teach "$T/q.onnx" "$T/data/s0"
}

@test "agreement: the qdq fixtures (opsets 9 to 17)" {
	for f in ops ops2 opset9 upsample9; do
		"$PY" "$ONNXQ_ROOT/scripts/make-inputs.py" -n 3 --seed 5 \
		    "$TESTDATA/qdq/$f.onnx" "$T/d-$f" >/dev/null
		quantize "$TESTDATA/qdq/$f.onnx" "$T/d-$f" "$T/$f.onnx" \
		    --all-ops
		teach "$T/$f.onnx" "$T/d-$f/s0"
	done
}

@test "agreement: mixed precision convert chains (ORT's PR 19925 graph)" {
	local pr=$TESTDATA/mixprec/pr19925.onnx

	printf 'regions:\n  - nodes: [Op4, Op5]\n    type: uint16\n' >r.yaml
	onnx-calib --quiet -d "$TESTDATA/mixprec/calib" "$pr" |
	    onnx-qparams --all-ops |
	    onnx-mixprec -c r.yaml "$pr" | onnx-qdq-insert "$pr" >"$T/mp.onnx" ||
	    fail "pipeline failed"
	teach "$T/mp.onnx" "$TESTDATA/mixprec/calib/s0"
}

@test "agreement: PaddleOCR rec 8-bit QDQ, every node within one step" {
	need_models
	"$ONNXQ_ROOT/scripts/make-ocr-data" -n 3 --seed 11 --task rec \
	    "$T/rec" >/dev/null 2>&1 || fail "make-ocr-data failed"
	# --all-ops: AveragePool, Sigmoid, ... quantized too, more to check.
	quantize "$OCR_REC" "$T/rec" "$T/rec-u8.onnx" --all-ops
	teach "$T/rec-u8.onnx" "$T/rec/s0002" -p 0.001
}

@test "agreement: the checker fails on a one-step or one-ulp difference" {
	fixture
	quantize "$T/fx.onnx" "$T/data" "$T/q.onnx" --all-ops
	run --separate-stderr ort_node "$ONNXQ_ROOT/test/ort-dump.js" \
	    "$T/q.onnx" "$T/data/s0" "$T/dump"
	[ "$status" -eq 0 ] || fail "ort-dump: $stderr"
	run onnxq-teacher -e "$EXACT" "$T/q.onnx" "$T/dump"
	[ "$status" -eq 0 ] || fail "clean dump: $output"
	grep -q '^ok ap4_node AveragePool ap4 float->q ' <(onnxq-teacher -v \
	    "$T/q.onnx" "$T/dump") || fail "ap4 is not quantized"
	# Two steps off in one QuantizeLinear output; one ulp off in the
	# float output of an AveragePool, which must agree exactly.
	"$PY" - "$T/dump" <<-'EOF'
	import sys, numpy as np
	d = sys.argv[1]
	f = d + "/c1_QuantizeLinear_Output.npy"
	q = np.load(f)
	q.flat[5] = q.flat[5] + 2 if q.flat[5] < 100 else q.flat[5] - 2
	np.save(f, q)
	f = d + "/ap4.npy"
	a = np.load(f)
	a.flat[0] = np.nextafter(a.flat[0], np.float32(np.inf))
	np.save(f, a)
	EOF
	run onnxq-teacher -e "$EXACT" "$T/q.onnx" "$T/dump"
	[ "$status" -eq 1 ] || fail "status $status: $output"
	[[ $output == *"FAIL c1_QuantizeLinear QuantizeLinear"*"steps=2 share="* ]] ||
	    fail "no one-step failure: $output"
	[[ $output == *"FAIL ap4_node AveragePool ap4 "* ]] ||
	    fail "no exactness failure: $output"
	# The DequantizeLinear after the altered code is fed it, and fails too
	# (as do the readers of ap4).
	[[ $output == *"FAIL c1_DequantizeLinear DequantizeLinear"* ]] ||
	    fail "no failure downstream: $output"
	[[ ${lines[-1]} == "teacher: "*" nodes, "[3-9]" failed, worst steps 2 "* ]] ||
	    fail "got: $output"
}
