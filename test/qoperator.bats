#!/usr/bin/env bats
# qoperator.bats: onnx-qdq-insert --format qoperator on a fixture with
# every operator kind it writes (test/tools/qop-fixture.py): the model
# passes onnx.checker, holds the QLinear operators and no
# DequantizeLinear before a Conv, MatMul or Gemm; ONNX Runtime runs it,
# its outputs agree with the QDQ model's in ONNX Runtime, and our
# interpreter (onnx-verify) agrees with ONNX Runtime on it.
# Needs: /usr/bin/python3 with onnx and numpy, onnxruntime-node.

load helpers
load pipeline

PY=/usr/bin/python3

# fixture [QPARAMS_FLAGS...]: fix.onnx, data/, qop.onnx and qdq.onnx.
fixture() {
	"$PY" "$ONNXQ_ROOT/test/tools/qop-fixture.py" fix.onnx
	"$PY" "$ONNXQ_ROOT/scripts/make-inputs.py" -n 8 fix.onnx data >/dev/null
	onnx-calib -q -d data fix.onnx >fix.stats
	onnx-qparams "$@" <fix.stats >fix.qp
	run --separate-stderr onnx-qdq-insert -v --format qoperator fix.onnx \
	    fix.qp -o qop.onnx
	[ "$status" -eq 0 ] || fail "$stderr"
	qop_report=$stderr
	onnx-qdq-insert fix.onnx fix.qp -o qdq.onnx
}

# ops MODEL: the model's node types, sorted, one per line.
ops() {
	"$PY" -c 'import sys, onnx
print("\n".join(sorted(set(n.op_type for n in onnx.load(sys.argv[1]).graph.node))))' "$1"
}

@test "qoperator: every operator kind of the fixture in its QLinear form" {
	fixture --all-ops
	checker_ok qop.onnx
	run ops qop.onnx
	for op in QLinearConv QLinearMatMul QGemm QLinearAdd QLinearMul \
	    QLinearSigmoid QLinearLeakyRelu QLinearAveragePool \
	    QLinearGlobalAveragePool QLinearConcat QLinearSoftmax \
	    MaxPool Transpose Reshape Flatten; do
		[[ $'\n'$output$'\n' == *$'\n'$op$'\n'* ]] ||
		    fail "no $op in:" "$output"
	done
	for op in Conv MatMul Gemm Add Mul Sigmoid Relu; do
		[[ $'\n'$output$'\n' != *$'\n'$op$'\n'* ]] ||
		    fail "$op left in:" "$output"
	done
	[[ $qop_report == *"12 QLinear operators, 4 on quantized tensors, 0 groups left"* ]] ||
	    fail "$qop_report"
	# Only the graph outputs are dequantized.
	run "$PY" -c 'import sys, onnx
print(sum(n.op_type == "DequantizeLinear" for n in onnx.load(sys.argv[1]).graph.node))' qop.onnx
	[ "$output" = 2 ] || fail "$output DequantizeLinear nodes"
}

@test "qoperator: ORT runs it, agrees with the QDQ model; onnx-verify with ORT" {
	fixture --all-ops
	cp -r data ortq
	cp -r data ortd
	run --separate-stderr ort_node "$ONNXQ_ROOT/test/ort-run.js" qop.onnx ortq
	[ "$status" -eq 0 ] || fail "ORT: $stderr"
	run --separate-stderr ort_node "$ONNXQ_ROOT/test/ort-run.js" qdq.onnx ortd
	[ "$status" -eq 0 ] || fail "ORT: $stderr"
	run "$PY" "$ONNXQ_ROOT/test/tools/npy-snr.py" --min 30 ortd ortq \
	    prob logits
	printf '# ORT QOperator vs ORT QDQ: %s\n' "${lines[@]}" >&3
	[ "$status" -eq 0 ] || fail "$output"
	# Our interpreter on the QOperator model against ORT's outputs: a
	# step of the pools or the softmax differs here and there.
	run --separate-stderr onnx-verify --atol 0.01 --min-snr 35 -d ortq \
	    qop.onnx
	printf '# ours vs ORT: %s\n' "${lines[@]}" >&3
	[ "$status" -eq 0 ] || fail "$output" "$stderr"
	# And both quantized forms close to fp32.
	snr_ok "qoperator vs fp32" 25 data fix.onnx qop.onnx
}

@test "qoperator: the default decisions (Conv, MatMul, Gemm only)" {
	fixture
	checker_ok qop.onnx
	run ops qop.onnx
	[[ $output == *QLinearConv* && $output == *QLinearMatMul* &&
	    $output == *QGemm* ]] || fail "$output"
	# No DequantizeLinear feeds a Conv, MatMul or Gemm.
	run "$PY" -c 'import sys, onnx
g = onnx.load(sys.argv[1]).graph
dq = {o for n in g.node if n.op_type == "DequantizeLinear" for o in n.output}
print(sum(i in dq for n in g.node if n.op_type in ("Conv", "MatMul", "Gemm") for i in n.input))' qop.onnx
	[ "$output" = 0 ] || fail "$output DequantizeLinear outputs read by Conv, MatMul or Gemm"
	cp -r data ortq
	run --separate-stderr ort_node "$ONNXQ_ROOT/test/ort-run.js" qop.onnx ortq
	[ "$status" -eq 0 ] || fail "ORT: $stderr"
	snr_ok "ours vs ORT" 40 ortq qop.onnx
}
