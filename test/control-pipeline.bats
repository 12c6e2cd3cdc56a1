#!/usr/bin/env bats
# control-pipeline.bats: models with If, Loop, Scan and recurrent layers
# (made by test/data/control/make-fixtures.py) through the whole
# pipeline: onnx-calib | onnx-qparams | onnx-qdq-insert, then the quantized
# model must pass onnx.checker, ONNX Runtime must run it (test/ort-run.js,
# default optimizations) and onnx-verify must find every output above an
# SNR floor a few dB under what was measured. The main graph is quantized;
# subgraphs stay float and untouched.
# Needs: scripts/fetch-models (onnxruntime-node), node, /usr/bin/python3
# with onnx.

load helpers
load pipeline

DATA=$ONNXQ_FIXTURES/control
PY=/usr/bin/python3

# pipeline NAME MIN_SNR [QPARAMS OPTION...]: quantize NAME.onnx into
# q.onnx on its samples and check it as the header says.
pipeline() {
	local name=$1 snr=$2
	shift 2
	cp -r "$DATA/$name-data" data
	chmod -R u+w data
	onnx-calib -q -d data "$DATA/$name.onnx" | onnx-qparams "$@" |
	    onnx-qdq-insert -o q.onnx "$DATA/$name.onnx" 2>err ||
	    fail "pipeline failed: $(cat err)"
	checker_ok q.onnx
	run --separate-stderr ort_node "$ONNXQ_ROOT/test/ort-run.js" \
	    --out ort q.onnx data
	[ "$status" -eq 0 ] || fail "ort-run: $stderr"
	[ -n "$(ls ort/*/*.npy)" ] || fail "no ORT outputs"
	snr_ok "$name" "$snr" data "$DATA/$name.onnx" q.onnx
}

# Every subgraph of every node of q.onnx serializes to the same bytes as
# the original's, and every initializer a subgraph reads is still there,
# float.
subgraphs_intact() {
	run "$PY" - "$DATA/$1.onnx" q.onnx <<-'EOF'
	import sys, onnx
	from onnx import TensorProto
	a, b = (onnx.load(p).graph for p in sys.argv[1:])
	def subs(g):
	    return {(n.name, at.name): at.g.SerializeToString()
	            for n in g.node for at in n.attribute
	            if at.type == onnx.AttributeProto.GRAPH}
	sa, sb = subs(a), subs(b)
	assert sa and sa == sb, (sorted(sa), sorted(sb))
	inits = {t.name: t for t in b.initializer}
	for n in a.node:
	    for at in n.attribute:
	        if at.type != onnx.AttributeProto.GRAPH:
	            continue
	        for m in at.g.node:
	            for i in m.input:
	                old = [t for t in a.initializer if t.name == i]
	                if old:
	                    assert i in inits, i
	                    assert inits[i].data_type == old[0].data_type, i
	EOF
	[ "$status" -eq 0 ] || fail "subgraphs changed: $output"
}

@test "control-pipeline: vad (If, LSTMs, outer-scope weights)" {
	pipeline vad 54
	subgraphs_intact vad
	# The projection was quantized: the main graph holds Q/DQ.
	run "$PY" -c 'import sys, onnx
g = onnx.load(sys.argv[1]).graph
print(sum(n.op_type == "QuantizeLinear" for n in g.node))' q.onnx
	[ "$output" -ge 1 ] || fail "nothing quantized: $output"
}

# All operators: the Transpose whose output only the If's branches read
# gets its pair after it (ORT's QDQ propagation failed on the float one).
@test "control-pipeline: vad with --all-ops" {
	pipeline vad 46 --all-ops
	subgraphs_intact vad
}

@test "control-pipeline: Loop with a GRU" {
	pipeline loop 33
	subgraphs_intact loop
}

@test "control-pipeline: Scans and an RNN" {
	pipeline scan 38
	subgraphs_intact scan
}

@test "control-pipeline: a plain LSTM between a MatMul and a Gemm" {
	pipeline lstm 32
}

# Raising the opset checks the subgraphs' nodes too: a Squeeze with axes
# as an attribute (opset 12) inside a branch blocks it, so per-channel
# weights use the com.microsoft pair and the branch stays as it was.
@test "control-pipeline: a subgraph node blocks opset raising" {
	"$PY" - "$DATA/vad.onnx" vad12.onnx <<-'EOF'
	import sys, onnx
	from onnx import helper
	m = onnx.load(sys.argv[1])
	m.opset_import[0].version = 12
	for n in m.graph.node:
	    for a in n.attribute:
	        for s in (a.g.node if a.type == onnx.AttributeProto.GRAPH else []):
	            if s.op_type == 'Squeeze':
	                del s.input[1]
	                s.attribute.append(helper.make_attribute('axes', [0]))
	onnx.save(m, sys.argv[2])
	EOF
	cp -r "$DATA/vad-data" data
	onnx-calib -q -d data -o s.stream vad12.onnx || fail "onnx-calib failed"
	onnx-qparams --per-channel -o qp s.stream || fail "onnx-qparams failed"
	run --separate-stderr onnx-qdq-insert --qdq-domain onnx -o q.onnx \
	    vad12.onnx qp
	[ "$status" -ne 0 ] || fail "raised: $stderr"
	[[ $stderr == *"cannot be raised: subgraph: node sq16 (Squeeze): needs a rewrite for opset 13, done only in the main graph"* ]] ||
	    fail "got: $stderr"
	run --separate-stderr onnx-qdq-insert -o q.onnx vad12.onnx qp
	[ "$status" -eq 0 ] || fail "$stderr"
	checker_ok q.onnx
	run "$PY" -c 'import sys, onnx
m = onnx.load(sys.argv[1])
print(sorted((o.domain, o.version) for o in m.opset_import))' q.onnx
	[ "$output" = "[('', 12), ('com.microsoft', 1)]" ] || fail "$output"
}
