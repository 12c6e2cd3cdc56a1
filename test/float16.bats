#!/usr/bin/env bats
# float16.bats: float16 and bfloat16 models (made by
# test/data/float16/make-fixtures.py) through onnx-calib | onnx-qparams |
# onnx-qdq-insert. They are quantized as float32 ones; their Q/DQ scales
# keep the model's float type so DequantizeLinear gives it back (at opset
# 17 that is the com.microsoft DequantizeLinear: the default domain's
# needs opset 19, beyond onnxq's opset table and Debian's onnx 1.12).
# The quantized model must pass onnx.checker and onnx-verify must find it
# above an SNR floor a few dB under what was measured. ONNX Runtime runs
# the float16 one; it has no bfloat16 kernels on CPU (not even Relu, for
# the float model), so the bfloat16 one runs in our interpreter only.
# Needs: /usr/bin/python3 with onnx; scripts/fetch-models
# (onnxruntime-node) and node for the float16 case.

load helpers
load pipeline

DATA=$ONNXQ_FIXTURES/float16
PY=/usr/bin/python3

# pipeline NAME MIN_SNR: quantize NAME.onnx into q.onnx, check it.
pipeline() {
	local name=$1 snr=$2

	onnx-calib -q -d "$DATA/$name-data" -o s.stream "$DATA/$name.onnx" ||
	    fail "onnx-calib failed"
	onnx-qparams -o qp s.stream || fail "onnx-qparams failed"
	onnx-qdq-insert -o q.onnx "$DATA/$name.onnx" qp 2>err ||
	    fail "onnx-qdq-insert: $(cat err)"
	checker_ok q.onnx
	snr_ok "$name" "$snr" "$DATA/$name-data" "$DATA/$name.onnx" q.onnx
}

# scales_are TYPE: q.onnx has Q/DQ pairs, every scale of type TYPE, and
# the graph's inputs and outputs keep their types.
scales_are() {
	run "$PY" - "$1" q.onnx <<-'EOF'
	import sys, onnx
	from onnx import TensorProto
	want = getattr(TensorProto, sys.argv[1])
	g = onnx.load(sys.argv[2]).graph
	qs = [n for n in g.node if n.op_type == 'QuantizeLinear']
	assert qs, 'no QuantizeLinear'
	sc = [t for t in g.initializer if t.name.endswith('_scale')]
	assert sc and all(t.data_type == want for t in sc), \
	    [(t.name, t.data_type) for t in sc]
	for v in list(g.input) + list(g.output):
	    assert v.type.tensor_type.elem_type == want, v
	EOF
	[ "$status" -eq 0 ] || fail "$output"
}

@test "float16: a float16 conv net is calibrated and quantized" {
	pipeline conv16 38
	grep -q '^stat	c1	dtype=float16	' s.stream || fail "no float16 stat"
	scales_are FLOAT16
	# ONNX Runtime runs it and agrees with our interpreter.
	cp -r "$DATA/conv16-data" data
	chmod -R u+w data
	run --separate-stderr ort_node "$ONNXQ_ROOT/test/ort-run.js" q.onnx data
	[ "$status" -eq 0 ] || fail "ort-run: $stderr"
	run --separate-stderr onnx-verify --min-snr 40 --atol 0.01 -d data q.onnx
	[ "$status" -eq 0 ] || fail "against ORT: $output" "$stderr"
}

@test "float16: a bfloat16 MLP is calibrated and quantized" {
	pipeline mlpbf16 30
	grep -q '^stat	mm	dtype=bfloat16	' s.stream || fail "no bfloat16 stat"
	scales_are BFLOAT16
}
