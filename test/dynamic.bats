#!/usr/bin/env bats
# dynamic.bats: dynamic quantization. The kernels of lib/op_dynq.c
# (DynamicQuantizeLinear, MatMulInteger, ConvInteger, com.microsoft
# DynamicQuantizeMatMul and MatMulIntegerToFloat) bit for bit against ONNX
# Runtime on the dynq cases of test/tools/nn-cases.py; onnx-qparams
# --dynamic and the structure onnx-qdq-insert writes on the fixtures of
# test/data/make-dynamic-models.py (a transformer block, Gemm layers, Conv
# layers): the ops written, onnx.checker, every node as ORT computes it
# (onnxq-teacher), SNR floors; bad input; a recipe; PaddleOCR cls and
# openWakeWord's Gemm model against ORT and fp32. PaddleOCR rec's accuracy
# is in scripts/bench-dynamic (minutes).
# Needs: onnxq-conform and onnxq-teacher (test/tools), /usr/bin/python3
# with onnx and numpy, node with onnxruntime-node and the real models
# (scripts/fetch-models), scripts/make-ocr-data.

load helpers
load pipeline

PY=/usr/bin/python3

@test "dynamic: kernels agree with ONNX Runtime bit for bit" {
	NN_CASES=dynq "$PY" "$ONNXQ_ROOT/test/tools/nn-cases.py" write \
	    "$T/cases" >/dev/null
	ort_node "$ONNXQ_ROOT/test/tools/nn-cases.js" "$T"/cases/*
	run --separate-stderr env NN_CASES=dynq "$PY" \
	    "$ONNXQ_ROOT/test/tools/nn-cases.py" finish "$T/cases"
	[ "$status" -eq 0 ] || fail "$stderr"
	run --separate-stderr onnxq-conform -l dynq --rtol 0 --atol 0 \
	    "$T/cases"
	printf '# %s\n' "${lines[-1]}" >&3
	[ "$status" -eq 0 ] || fail "$output" "$stderr"
	[[ ${lines[-1]} == "conformance: dynq: 13 passed, 0 failed, "* ]] ||
	    fail "got: $output"
}

# models: the fixtures of test/data/make-dynamic-models.py in $T/m.
models() {
	"$PY" "$TESTDATA/make-dynamic-models.py" "$T/m" ||
	    fail "make-dynamic-models.py failed"
}

# dynq NAME [QPARAMS OPTIONS...]: $T/NAME.dyn.onnx from the weights-only
# stream of $T/m/NAME.onnx.
dynq() {
	local name=$1

	shift
	onnx-calib -q --weights-only "$T/m/$name.onnx" >"$T/$name.w" ||
	    fail "onnx-calib failed" || return
	run --separate-stderr onnx-qparams --dynamic "$@" "$T/$name.w"
	[ "$status" -eq 0 ] || fail "onnx-qparams: $stderr" || return
	printf '%s\n' "$output" >"$T/$name.q"
	run --separate-stderr onnx-qdq-insert -o "$T/$name.dyn.onnx" \
	    "$T/m/$name.onnx" "$T/$name.q"
	[ "$status" -eq 0 ] || fail "onnx-qdq-insert: $stderr"
}

# ops MODEL: the op types of MODEL's nodes, sorted, one per line.
ops() {
	"$PY" -c 'import sys, onnx
for n in onnx.load(sys.argv[1]).graph.node: print(n.op_type)' "$1" | sort
}

# agrees NAME: onnx.checker passes, ORT runs $T/NAME.dyn.onnx, and our
# interpreter computes each node as ORT does (onnxq-teacher on ORT's
# tensors: the integer ops, Cast and the float rescaling exactly).
agrees() {
	local q=$T/$1.dyn.onnx

	checker_ok "$q" || return
	run --separate-stderr ort_node "$ONNXQ_ROOT/test/ort-dump.js" "$q" \
	    "$T/m/$1.data/s0" "$T/dump-$1"
	[ "$status" -eq 0 ] || fail "ort-dump: $stderr" || return
	run --separate-stderr onnxq-teacher -e "$EXACT" "$q" "$T/dump-$1"
	printf '# %s: %s\n' "$1" "${lines[-1]}" >&3
	[ "$status" -eq 0 ] || fail "$output" "$stderr" || return
	[[ ${lines[-1]} == "teacher: "*" nodes, 0 failed, worst steps 0 "* ]] ||
	    fail "got: $output"
}

EXACT=DynamicQuantizeLinear,MatMulInteger,ConvInteger,Cast,Mul,Add

@test "dynamic: transformer block: MatMul with constant weights only" {
	models
	dynq tfm
	run ops "$T/tfm.dyn.onnx"
	[ "$(grep -c '^MatMulInteger$' <<<"$output")" -eq 6 ] || fail "$output"
	[ "$(grep -c '^DynamicQuantizeLinear$' <<<"$output")" -eq 4 ] ||
	    fail "q, k, v share one: $output"
	# The scores and the attention product (two activations) stay.
	[ "$(grep -c '^MatMul$' <<<"$output")" -eq 2 ] || fail "$output"
	agrees tfm
	snr_ok tfm 30 "$T/m/tfm.data" "$T/m/tfm.onnx" "$T/tfm.dyn.onnx"
	# A stream with activation statistics writes the same model.
	onnx-calib -q -d "$T/m/tfm.data" "$T/m/tfm.onnx" |
	    onnx-qparams --dynamic | onnx-qdq-insert -o "$T/full.onnx" \
	    "$T/m/tfm.onnx" || fail "pipeline from onnx-calib -d failed"
	cmp "$T/full.onnx" "$T/tfm.dyn.onnx" || fail "the models differ"
}

@test "dynamic: com.microsoft Attention as QAttention" {
	models
	dynq atn
	run ops "$T/atn.dyn.onnx"
	[ "$(grep -c '^QAttention$' <<<"$output")" -eq 2 ] || fail "$output"
	! grep -q '^Attention$' <<<"$output" || fail "left: $output"
	[ "$(grep -c '^MatMulInteger$' <<<"$output")" -eq 3 ] || fail "$output"
	# QAttention within 1e-3 relative (its product is exact, softmax
	# and the products with V float: measured 1.7e-7).
	agrees atn
	# ORT and our interpreter over every sample (padding masks too).
	cp -r "$T/m/atn.data" "$T/atn.ort"
	run --separate-stderr ort_node "$ONNXQ_ROOT/test/ort-run.js" \
	    "$T/atn.dyn.onnx" "$T/atn.ort"
	[ "$status" -eq 0 ] || fail "ort-run: $stderr"
	snr_ok "atn vs ORT" 80 "$T/atn.ort" "$T/atn.dyn.onnx"
	# Measured: 36.9 dB.
	snr_ok atn 33 "$T/m/atn.data" "$T/m/atn.onnx" "$T/atn.dyn.onnx"
	# What QAttention cannot take stays float, with a note.
	"$PY" - "$T/m/atn.onnx" "$T/past.onnx" <<-'PYEOF'
	import sys, onnx
	m = onnx.load(sys.argv[1])
	a = [n for n in m.graph.node if n.name == 'attn2'][0]
	a.attribute.append(onnx.helper.make_attribute('qkv_hidden_sizes',
	                                              [32, 32, 32]))
	onnx.save(m, sys.argv[2])
	PYEOF
	run --separate-stderr onnx-qdq-insert -v -o "$T/past.dyn.onnx" \
	    "$T/past.onnx" "$T/atn.q"
	[ "$status" -eq 0 ] || fail "status $status: $stderr"
	[[ $stderr == *"attn2 (Attention): qkv_hidden_sizes or rotary embeddings: left in float"* ]] ||
	    fail "got: $stderr"
	run ops "$T/past.dyn.onnx"
	[ "$(grep -c '^QAttention$' <<<"$output")" -eq 1 ] || fail "$output"
}

@test "dynamic: Gemm with transB, alpha, beta and bias" {
	models
	dynq gemm
	run ops "$T/gemm.dyn.onnx"
	[ "$(grep -c '^MatMulInteger$' <<<"$output")" -eq 3 ] || fail "$output"
	! grep -q '^Gemm$' <<<"$output" || fail "a Gemm is left: $output"
	agrees gemm
	snr_ok gemm 30 "$T/m/gemm.data" "$T/m/gemm.onnx" "$T/gemm.dyn.onnx"
}

@test "dynamic: Conv only with --all-ops, uint8 weights and per tensor" {
	models
	onnx-calib -q --weights-only "$T/m/conv.onnx" >"$T/conv.w"
	run --separate-stderr onnx-qparams --dynamic "$T/conv.w"
	[ "$status" -eq 1 ] || fail "status $status: $output"
	[ "$stderr" = "onnx-qparams: $T/conv.w: no MatMul, Gemm, LSTM, Attention node with a constant weight to quantize dynamically" ] ||
	    fail "got: $stderr"
	# The depthwise Conv stays float unless asked for.
	dynq conv --all-ops
	run ops "$T/conv.dyn.onnx"
	[ "$(grep -c '^ConvInteger$' <<<"$output")" -eq 2 ] || fail "$output"
	[ "$(grep -c '^Conv$' <<<"$output")" -eq 1 ] || fail "$output"
	for opts in "" "-w uint8" "--per-tensor --reduce-range"; do
		dynq conv --include-ops Conv $opts
		run ops "$T/conv.dyn.onnx"
		[ "$(grep -c '^ConvInteger$' <<<"$output")" -eq 3 ] ||
		    fail "$opts: $output"
		agrees conv
		snr_ok "conv $opts" 25 "$T/m/conv.data" "$T/m/conv.onnx" \
		    "$T/conv.dyn.onnx"
	done
}

@test "dynamic: bad input is one line, no model written" {
	models
	onnx-calib -q --weights-only "$T/m/gemm.onnx" >"$T/gemm.w"
	# A stream without weight records.
	grep -v '^weight' "$T/gemm.w" | grep -v '^end' >"$T/now.w"
	printf 'end\t%d\n' "$(grep -vc '^#' "$T/now.w")" >>"$T/now.w"
	run --separate-stderr onnx-qparams --dynamic "$T/now.w"
	[ "$status" -eq 1 ] || fail "status $status"
	[[ $stderr == "onnx-qparams: $T/now.w: no MatMul, Gemm, LSTM, Attention node with a constant weight to quantize dynamically" ]] ||
	    fail "got: $stderr"
	# An op type without a dynamic form.
	run --separate-stderr onnx-qparams --dynamic --include-ops Gemm,Relu \
	    "$T/gemm.w"
	[ "$status" -eq 1 ] || fail "status $status"
	[ "$stderr" = "onnx-qparams: op type Relu has no dynamic form (MatMul, Gemm, LSTM, Attention, Conv)" ] ||
	    fail "got: $stderr"
	# --format qdq cannot write dynamic records.
	onnx-qparams --dynamic "$T/gemm.w" >"$T/gemm.q"
	run --separate-stderr onnx-qdq-insert --format qdq -o "$T/out.onnx" \
	    "$T/m/gemm.onnx" "$T/gemm.q"
	[ "$status" -eq 1 ] || fail "status $status"
	[ "$stderr" = "onnx-qdq-insert: $T/gemm.q: dynamic records: --format qdq cannot write dynamic quantization (--format auto does)" ] ||
	    fail "got: $stderr"
	[ ! -e "$T/out.onnx" ] || fail "a model was written"
	# A weight that is not a constant of the model: made a graph input.
	"$PY" - "$T/m/gemm.onnx" "$T/input.onnx" <<-'PYEOF'
	import sys, onnx
	m = onnx.load(sys.argv[1])
	w = [i for i in m.graph.initializer if i.name == 'g2w'][0]
	m.graph.initializer.remove(w)
	m.graph.input.append(onnx.helper.make_tensor_value_info('g2w', 1, list(w.dims)))
	onnx.save(m, sys.argv[2])
	PYEOF
	run --separate-stderr onnx-qdq-insert -o "$T/out.onnx" \
	    "$T/input.onnx" "$T/gemm.q"
	[ "$status" -eq 1 ] || fail "status $status"
	# (after the warning that the stream is another model's)
	[[ ${stderr##*$'\n'} == "onnx-qdq-insert: $T/gemm.q:"*": node g2: weight g2w is not a constant of $T/input.onnx" ]] ||
	    fail "got: $stderr"
	[ ! -e "$T/out.onnx" ] || fail "a model was written"
	# From that model's own stream, g2 is left out with a note.
	onnx-calib -q --weights-only "$T/input.onnx" >"$T/input.w"
	run --separate-stderr onnx-qparams --dynamic --include-ops Gemm -v \
	    "$T/input.w"
	[ "$status" -eq 0 ] || fail "status $status: $stderr"
	[[ $stderr == *"g2 (Gemm): no constant weight: left in float"* ]] ||
	    fail "got: $stderr"
	[ "$(grep -c '^dynamic' <<<"$output")" -eq 2 ] || fail "$output"
}

@test "dynamic: a recipe's dynamic key and node lists" {
	models
	onnx-calib -q --weights-only "$T/m/tfm.onnx" >"$T/tfm.w"
	printf 'dynamic: true\nnodes:\n  exclude: [fc2]\nweights:\n  type: uint8\n' >r.yaml
	run --separate-stderr onnx-qparams -c r.yaml "$T/tfm.w"
	[ "$status" -eq 0 ] || fail "$stderr"
	[ "$(grep -c '^dynamic' <<<"$output")" -eq 5 ] || fail "$output"
	! grep -q '^dynamic	fc2' <<<"$output" || fail "fc2 is in: $output"
	! grep -q 'role=act' <<<"$output" || fail "activations: $output"
	[ "$(grep -c 'role=weight	type=uint8' <<<"$output")" -eq 5 ] ||
	    fail "$output"
}

# real NAME MODEL DATA MIN_SNR [QPARAMS OPTIONS...]: the dynamic model of
# MODEL; ORT runs it and our interpreter agrees with ORT (80 dB or
# better: the integer parts are exact); against fp32, MIN_SNR or better.
real() {
	local name=$1 model=$2 data=$3 snr=$4

	shift 4
	onnx-calib -q --weights-only "$model" >"$T/$name.w" &&
	    onnx-qparams --dynamic "$@" "$T/$name.w" >"$T/$name.q" &&
	    onnx-qdq-insert -o "$T/$name.onnx" "$model" "$T/$name.q" ||
	    fail "pipeline failed" || return
	checker_ok "$T/$name.onnx" || return
	cp -r "$data" "$T/$name.ort"
	run --separate-stderr ort_node "$ONNXQ_ROOT/test/ort-run.js" \
	    "$T/$name.onnx" "$T/$name.ort"
	[ "$status" -eq 0 ] || fail "ort-run: $stderr" || return
	snr_ok "$name vs ORT" 80 "$T/$name.ort" "$T/$name.onnx" || return
	snr_ok "$name vs fp32" "$snr" "$data" "$model" "$T/$name.onnx"
}

@test "dynamic: PaddleOCR cls with Conv, openWakeWord's Gemm model" {
	need_models
	"$ONNXQ_ROOT/scripts/make-ocr-data" -n 8 --seed 5 --task cls \
	    "$T/cls" >/dev/null 2>&1 || fail "make-ocr-data failed"
	"$PY" "$ONNXQ_ROOT/scripts/make-inputs.py" -n 8 --seed 5 \
	    "$OWW_HELLO" "$T/oww" >/dev/null || fail "make-inputs failed"
	# Measured: cls 112 dB (its softmax is sure), hello_deepa 45.6 dB.
	real cls "$OCR_CLS" "$T/cls" 80 --all-ops
	real oww "$OWW_HELLO" "$T/oww" 40
}
