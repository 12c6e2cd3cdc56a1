#!/usr/bin/env bats
# dynamic-lstm.bats: LSTM under dynamic quantization. onnx-qparams
# --dynamic quantizes an LSTM's W and R, onnx-qdq-insert writes
# com.microsoft DynamicQuantizeLSTM; ONNX Runtime loads and runs it, our
# interpreter agrees with it (node by node and over the whole model),
# and the result keeps the fp32 logits. The model is the keyword spotter
# test/data/dynlstm/make-fixtures.py makes at build time (input
# projection, bidirectional LSTM, forward LSTM, Gemm head). Also: the
# kernel alone against ORT with parameters per gate row, uint8 weights
# and every optional input; bad input.
# Needs: onnxq-teacher (test/tools), /usr/bin/python3 with onnx and
# numpy, node with onnxruntime-node (scripts/fetch-models).

load helpers
load pipeline

PY=/usr/bin/python3
M=$ONNXQ_FIXTURES/dynlstm/kws.onnx
DATA=$ONNXQ_FIXTURES/dynlstm/kws.data

# dynq OUT [QPARAMS OPTIONS...]: $T/OUT.onnx, the dynamic model of $M
# ($T/kws.w its weights' stream, $T/OUT.q the decisions).
dynq() {
	local out=$1

	shift
	onnx-calib -q --weights-only "$M" >"$T/kws.w" &&
	    onnx-qparams --dynamic "$@" "$T/kws.w" >"$T/$out.q" &&
	    onnx-qdq-insert -o "$T/$out.onnx" "$M" "$T/$out.q" ||
	    fail "the pipeline failed with $*"
}

# count OP MODEL: how many nodes of MODEL are OP.
count() {
	"$PY" -c 'import sys, onnx
print(sum(n.op_type == sys.argv[1] for n in onnx.load(sys.argv[2]).graph.node))' \
	    "$1" "$2"
}

# teacher MODEL SAMPLEDIR: ORT runs MODEL (every node output dumped), and
# each of our nodes computes from ORT's inputs what ORT did: the integer
# ops exactly, DynamicQuantizeLSTM within relative error 1e-5 (its
# activations are ORT's approximations, ours libm's; measured 2e-7).
teacher() {
	local tag=${1##*/}

	run --separate-stderr ort_node "$ONNXQ_ROOT/test/ort-dump.js" "$1" \
	    "$2" "$T/dump-$tag"
	[ "$status" -eq 0 ] || fail "ort-dump: $stderr" || return
	run --separate-stderr onnxq-teacher -v -r 1e-5 \
	    -e DynamicQuantizeLinear,MatMulInteger,Cast "$1" "$T/dump-$tag"
	grep 'DynamicQuantizeLSTM' <<<"$output" | sed "s/^/# $tag: /" >&3
	printf '# %s: %s\n' "$tag" "${lines[-1]}" >&3
	[ "$status" -eq 0 ] || fail "$output" "$stderr" || return
	[[ ${lines[-1]} == "teacher: "*" nodes, 0 failed, worst steps 0 "* ]] ||
	    fail "got: $output"
}

# ort_agrees MODEL: ORT's logits on $DATA and ours, 80 dB or better.
ort_agrees() {
	rm -rf "$T/ort"
	cp -r "$DATA" "$T/ort"
	run --separate-stderr ort_node "$ONNXQ_ROOT/test/ort-run.js" "$1" \
	    "$T/ort"
	[ "$status" -eq 0 ] || fail "ort-run: $stderr" || return
	snr_ok "${1##*/} vs ORT" 80 "$T/ort" "$1"
}

@test "dynamic LSTM: DynamicQuantizeLSTM, run by ORT as by us" {
	dynq kws
	[ "$(count DynamicQuantizeLSTM "$T/kws.onnx")" -eq 2 ] || fail "no"
	[ "$(count LSTM "$T/kws.onnx")" -eq 0 ] || fail "an LSTM is left"
	[ "$(count MatMulInteger "$T/kws.onnx")" -eq 2 ] || fail "MatMuls"
	checker_ok "$T/kws.onnx"
	teacher "$T/kws.onnx" "$DATA/s0"
	ort_agrees "$T/kws.onnx"
	# Measured: 35.5 dB against fp32 (8 samples), 28% of the size.
	snr_ok "kws vs fp32" 32 "$DATA" "$M" "$T/kws.onnx"
	[ "$(stat -c %s "$T/kws.onnx")" -lt "$(($(stat -c %s "$M") * 30 / 100))" ] ||
	    fail "too large: $(stat -c %s "$T/kws.onnx")"
}

@test "dynamic LSTM: uint8, per tensor, reduce-range; excluded stays" {
	for opts in "-w uint8" "--per-tensor --reduce-range"; do
		# shellcheck disable=SC2086
		dynq v $opts
		[ "$(count DynamicQuantizeLSTM "$T/v.onnx")" -eq 2 ] ||
		    fail "$opts: no DynamicQuantizeLSTM"
		ort_agrees "$T/v.onnx"
		snr_ok "kws $opts vs fp32" 28 "$DATA" "$M" "$T/v.onnx"
	done
	dynq x --exclude-nodes lstm1
	[ "$(count DynamicQuantizeLSTM "$T/x.onnx")" -eq 1 ] || fail "x"
	[ "$(count LSTM "$T/x.onnx")" -eq 1 ] || fail "lstm1 is not float"
	dynq o --include-ops LSTM
	[ "$(count DynamicQuantizeLSTM "$T/o.onnx")" -eq 2 ] || fail "o"
	[ "$(count MatMulInteger "$T/o.onnx")" -eq 0 ] || fail "o: MatMul"
}

@test "dynamic LSTM: the kernel with every input, per gate row, uint8" {
	# One DynamicQuantizeLSTM node: reverse or bidirectional, initial
	# states, peepholes, clip, W per gate row (int8, zero points 0) or
	# R per direction (uint8, zero point 128 and 120).
	"$PY" - "$T/k" <<-'PYEOF'
	import os, sys
	import numpy as np
	import onnx
	from onnx import helper, numpy_helper as nh, TensorProto as TP
	rng = np.random.default_rng(5)
	out = sys.argv[1]
	os.makedirs(out)
	T, I, H = 7, 5, 6
	for name, D, direction, wtype in (('rev', 1, 'reverse', 'int8'),
	                                  ('bi', 2, 'bidirectional', 'uint8')):
	    def q(k, dt, rows):
	        if dt == 'int8':
	            v = rng.integers(-127, 128, (D, k, 4 * H)).astype(np.int8)
	            z = np.zeros((D, 4 * H) if rows else (D,), np.int8)
	        else:
	            v = rng.integers(0, 256, (D, k, 4 * H)).astype(np.uint8)
	            z = np.array([128, 120][:D], np.uint8)
	            if rows:
	                z = np.full((D, 4 * H), 131, np.uint8)
	        s = (rng.random(z.shape) * 0.01 + 0.002).astype(np.float32)
	        return v, s, z
	    W, Ws, Wz = q(I, wtype, True)
	    R, Rs, Rz = q(H, wtype, False)
	    inits = [nh.from_array(a, n) for a, n in (
	        (W, 'W'), (R, 'R'), (Ws, 'Ws'), (Wz, 'Wz'), (Rs, 'Rs'), (Rz, 'Rz'),
	        ((rng.standard_normal((D, 8 * H)) * 0.2).astype(np.float32), 'B'),
	        ((rng.standard_normal((D, 3 * H)) * 0.3).astype(np.float32), 'P'))]
	    n = helper.make_node('DynamicQuantizeLSTM',
	        ['X', 'W', 'R', 'B', '', 'h0', 'c0', 'P', 'Ws', 'Wz', 'Rs', 'Rz'],
	        ['Y', 'Yh', 'Yc'], 'k', domain='com.microsoft', hidden_size=H,
	        direction=direction, clip=3.0)
	    vi = helper.make_tensor_value_info
	    g = helper.make_graph([n], name, [vi('X', TP.FLOAT, [T, 1, I]),
	        vi('h0', TP.FLOAT, [D, 1, H]), vi('c0', TP.FLOAT, [D, 1, H])],
	        [vi('Y', TP.FLOAT, None), vi('Yh', TP.FLOAT, None),
	         vi('Yc', TP.FLOAT, None)], initializer=inits)
	    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 14),
	        helper.make_opsetid('com.microsoft', 1)])
	    m.ir_version = 8
	    onnx.save(m, os.path.join(out, name + '.onnx'))
	    d = os.path.join(out, name)
	    os.makedirs(d)
	    for a, shape in (('X', (T, 1, I)), ('h0', (D, 1, H)),
	                     ('c0', (D, 1, H))):
	        np.save(os.path.join(d, a + '.npy'),
	                rng.standard_normal(shape).astype(np.float32))
	PYEOF
	[ -f "$T/k/bi.onnx" ] || fail "the kernel models were not made"
	teacher "$T/k/rev.onnx" "$T/k/rev"
	teacher "$T/k/bi.onnx" "$T/k/bi"
}

@test "dynamic LSTM: weights that are not constant stay float, with a note" {
	# R made a graph input: lstm1 is left in float (named when asked
	# for: by default only nodes with constant weights are looked at).
	"$PY" - "$M" "$T/input.onnx" <<-'PYEOF'
	import sys, onnx
	m = onnx.load(sys.argv[1])
	r = [i for i in m.graph.initializer if i.name == 'l1_R'][0]
	m.graph.initializer.remove(r)
	m.graph.input.append(onnx.helper.make_tensor_value_info('l1_R', 1,
	                                                        list(r.dims)))
	onnx.save(m, sys.argv[2])
	PYEOF
	onnx-calib -q --weights-only "$T/input.onnx" >"$T/input.w"
	run --separate-stderr onnx-qparams --dynamic -v \
	    --include-ops MatMul,Gemm,LSTM "$T/input.w"
	[ "$status" -eq 0 ] || fail "status $status: $stderr"
	[[ $stderr == *"lstm1 (LSTM): no constant weight: left in float"* ]] ||
	    fail "got: $stderr"
	! grep -q '^dynamic	lstm1' <<<"$output" || fail "$output"
	printf '%s\n' "$output" >"$T/input.q"
	onnx-qdq-insert -o "$T/input.dyn.onnx" "$T/input.onnx" "$T/input.q" ||
	    fail "onnx-qdq-insert failed"
	[ "$(count LSTM "$T/input.dyn.onnx")" -eq 1 ] || fail "lstm1"
	[ "$(count DynamicQuantizeLSTM "$T/input.dyn.onnx")" -eq 1 ] ||
	    fail "lstm2"
	# The full stream against that model: R is not constant there.
	dynq kws
	run --separate-stderr onnx-qdq-insert -v -o "$T/out.onnx" \
	    "$T/input.onnx" "$T/kws.q"
	[ "$status" -eq 0 ] || fail "status $status: $stderr"
	[[ $stderr == *"lstm1 (LSTM): its R is not a constant: left in float"* ]] ||
	    fail "got: $stderr"
	[ "$(count LSTM "$T/out.onnx")" -eq 1 ] || fail "lstm1 quantized"
	# A stream without R's decision does not fit: one line, no model.
	grep -v '^qparam	l1_R' "$T/kws.q" | grep -v '^end' >"$T/nor.q"
	printf 'end\t%d\n' "$(grep -vc '^#' "$T/nor.q")" >>"$T/nor.q"
	run --separate-stderr onnx-qdq-insert -o "$T/nor.onnx" "$M" "$T/nor.q"
	[ "$status" -eq 1 ] || fail "status $status: $stderr"
	[[ $stderr == "onnx-qdq-insert: $T/nor.q:"*": node lstm1: no qparam record of role weight for l1_R (R)" ]] ||
	    fail "got: $stderr"
	[ ! -e "$T/nor.onnx" ] || fail "a model was written"
	# Batch-major (layout 1) has no DynamicQuantizeLSTM form.
	"$PY" - "$M" "$T/lay.onnx" <<-'PYEOF'
	import sys, onnx
	m = onnx.load(sys.argv[1])
	n = [n for n in m.graph.node if n.name == 'lstm2'][0]
	n.attribute.append(onnx.helper.make_attribute('layout', 1))
	onnx.save(m, sys.argv[2])
	PYEOF
	run --separate-stderr onnx-qdq-insert -v -o "$T/lay.dyn.onnx" \
	    "$T/lay.onnx" "$T/kws.q"
	[ "$status" -eq 0 ] || fail "status $status: $stderr"
	[[ $stderr == *"lstm2 (LSTM): layout 1 (batch-major): left in float"* ]] ||
	    fail "got: $stderr"
	[ "$(count LSTM "$T/lay.dyn.onnx")" -eq 1 ] || fail "lstm2 quantized"
}

@test "dynamic LSTM: onnx-mixprec refuses a dynamic stream in one line" {
	dynq kws
	run --separate-stderr onnx-mixprec -o "$T/mp.q" --target-snr 40 \
	    -d "$DATA" "$M" <"$T/kws.q"
	[ "$status" -eq 1 ] || fail "status $status: $stderr"
	[[ $stderr == "onnx-mixprec: <stdin>:"*": dynamic records: mixed precision needs a static stream (leave nodes float with onnx-qparams --dynamic --exclude-nodes)" ]] ||
	    fail "got: $stderr"
	[ ! -e "$T/mp.q" ] || fail "a stream was written"
}
