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

# fixture [QPARAMS_FLAGS...]: fix.onnx, data/, qop.onnx, qdq.onnx and
# $qop_report (onnx-qdq-insert -v's), made once per file and flags.
fixture() {
	local keep=$BATS_FILE_TMPDIR/fixture${1:-}

	if [ ! -d "$keep" ]; then
		mkdir -p "$keep"
		(cd "$keep" && make_fixture "$@") || fail "fixture: $*"
	fi
	cp -r "$keep"/. .
	qop_report=$(cat report)
}

make_fixture() {
	"$PY" "$ONNXQ_ROOT/test/tools/qop-fixture.py" fix.onnx
	"$PY" "$ONNXQ_ROOT/scripts/make-inputs.py" -n 8 fix.onnx data >/dev/null
	onnx-calib -q -d data fix.onnx >fix.stats
	onnx-qparams "$@" <fix.stats >fix.qp
	onnx-qdq-insert -v --format qoperator fix.onnx fix.qp -o qop.onnx \
	    2>report
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

# column FILE MODEL COL: a column of test/ocr-eval.js's row for MODEL.
column() { awk -v m="$2" -v c="$3" '$1 == m { print $c }' "$1"; }

@test "qoperator: PaddleOCR cls end to end (--all-ops), as the QDQ model" {
	need_models
	"$ONNXQ_ROOT/scripts/make-ocr-data" -n 8 --seed 1 --task cls calib \
	    >/dev/null 2>&1 || fail "make-ocr-data failed"
	"$ONNXQ_ROOT/scripts/make-ocr-data" -n 24 --seed 2 --task cls eval \
	    >/dev/null 2>&1 || fail "make-ocr-data failed"
	cp "$OCR_CLS" cls.onnx
	onnx-calib -q -d calib cls.onnx | onnx-qparams --all-ops >cls.qp
	onnx-qdq-insert cls.onnx cls.qp >qdq.onnx
	run --separate-stderr onnx-qdq-insert -v --format qoperator \
	    cls.onnx cls.qp -o qop.onnx
	[ "$status" -eq 0 ] || fail "$stderr"
	printf '%s\n' "$stderr" | grep 'QLinear operators' | sed 's/^/# /' >&3
	checker_ok qop.onnx
	run "$PY" -c 'import sys, onnx
g = onnx.load(sys.argv[1]).graph
dq = {o for n in g.node if n.op_type == "DequantizeLinear" for o in n.output}
print(sum(i in dq for n in g.node if n.op_type in ("Conv", "MatMul", "Gemm") for i in n.input),
    sum(n.op_type == "QLinearConv" for n in g.node))' qop.onnx
	[[ $output == "0 "* && ${output#0 } -gt 10 ]] ||
	    fail "DequantizeLinear outputs read, QLinearConv: $output"
	run --separate-stderr ort_node "$ONNXQ_ROOT/test/ocr-eval.js" \
	    --task cls eval cls.onnx qdq.onnx qop.onnx
	[ "$status" -eq 0 ] || fail "$stderr"
	printf '# %s\n' "${lines[@]}" >&3
	printf '%s\n' "${lines[@]}" >eval.txt
	run --separate-stderr ort_node "$ONNXQ_ROOT/test/ocr-eval.js" \
	    --task none eval qdq.onnx qop.onnx
	[ "$status" -eq 0 ] || fail "$stderr"
	printf '%s\n' "${lines[@]}" >agree.txt
	# The same decisions: the QOperator model as the QDQ one, in ORT.
	local agree acc_qdq acc_qop ort ours
	agree=$(column agree.txt qop.onnx 5)
	printf '# ORT QOperator vs ORT QDQ: %s dB\n' "$agree" >&3
	[[ $agree == inf ]] || awk -v a="$agree" 'BEGIN { exit !(a >= 30) }' ||
	    fail "QOperator vs QDQ in ORT: $agree dB"
	acc_qdq=$(column eval.txt qdq.onnx 3)
	acc_qop=$(column eval.txt qop.onnx 3)
	awk -v a="$acc_qdq" -v b="$acc_qop" 'BEGIN { d = a - b
	    exit !(d <= 1 && d >= -1) }' ||
	    fail "accuracy: QDQ $acc_qdq%, QOperator $acc_qop%"
	# Our interpreter's SNR against fp32 within 1 dB of ORT's.
	ort=$(column eval.txt qop.onnx 5)
	run --separate-stderr onnx-verify --format tsv -d eval cls.onnx qop.onnx
	ours=$(printf '%s\n' "${lines[@]}" | awk -F '\t' 'NR == 1 {
	    for (i = 1; i <= NF; i++) if ($i == "snr_db") c = i; next }
	    { print $c; exit }')
	printf '# SNR against fp32: ORT %s dB, onnx-verify %s dB\n' "$ort" \
	    "$ours" >&3
	awk -v a="$ort" -v b="$ours" 'BEGIN { d = a - b
	    exit !(d <= 1 && d >= -1) }' ||
	    fail "SNR: ORT $ort dB, ours $ours dB"
}

@test "qoperator: onnx-verify --fused runs a QDQ model as ORT fuses it" {
	fixture --all-ops
	cp -r data ortd
	run --separate-stderr ort_node "$ONNXQ_ROOT/test/ort-run.js" qdq.onnx ortd
	[ "$status" -eq 0 ] || fail "ORT: $stderr"
	run --separate-stderr onnx-verify --format tsv -d ortd qdq.onnx
	literal=$(printf '%s\n' "${lines[@]}" | awk -F '\t' '$2 == "prob" { print $4 }')
	run --separate-stderr onnx-verify --fused --format tsv -d ortd qdq.onnx
	fused=$(printf '%s\n' "${lines[@]}" | awk -F '\t' '$2 == "prob" { print $4 }')
	printf '# against ORT on the QDQ model: literal %s dB, fused %s dB\n' \
	    "$literal" "$fused" >&3
	[ -n "$literal" ] && [ -n "$fused" ] || fail "no SNR: $output"
	awk -v l="$literal" -v f="$fused" 'BEGIN { exit !(f >= 40 && f > l + 3) }' ||
	    fail "fused $fused dB, literal $literal dB"
}

@test "qoperator: a 16-bit region stays QDQ, the rest QLinear; ORT runs it" {
	fixture --all-ops
	printf 'regions:\n  - name: attn\n    op_types: [Softmax, MatMul]\n    type: uint16\n' >r.yaml
	onnx-mixprec -c r.yaml fix.onnx <fix.qp >mix.qp
	grep -q '^convert' mix.qp || fail "no convert record"
	run --separate-stderr onnx-qdq-insert --format qoperator fix.onnx \
	    mix.qp -o mix.onnx
	[ "$status" -eq 0 ] || fail "$stderr"
	# Said without -v: the format cannot carry the 16-bit MatMul, Softmax.
	[[ $stderr == *"2 groups left in QDQ form"* ]] || fail "$stderr"
	checker_ok mix.onnx
	run ops mix.onnx
	[[ $output == *QLinearConv* && $output == *$'\n'MatMul$'\n'* &&
	    $output == *$'\n'Softmax$'\n'* ]] || fail "$output"
	cp -r data ortm
	run --separate-stderr ort_node "$ONNXQ_ROOT/test/ort-run.js" mix.onnx ortm
	[ "$status" -eq 0 ] || fail "ORT: $stderr"
	run --separate-stderr onnx-verify --atol 0.01 --min-snr 45 -d ortm mix.onnx
	printf '# ours vs ORT: %s\n' "${lines[@]}" >&3
	[ "$status" -eq 0 ] || fail "$output" "$stderr"
}
