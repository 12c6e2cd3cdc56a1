#!/usr/bin/env bats
# examples.bats: every example recipe and regions file installed under
# share/onnxq/examples works as its comment says, on PaddleOCR v4 rec
# (calibrated on two deterministic inputs): onnx-qparams or onnx-mixprec
# accepts it, onnx-qdq-insert writes a model that passes onnx.checker, and
# ONNX Runtime (default optimizations) runs it.
# Needs: the model cache (scripts/fetch-models), onnxruntime-node,
# /usr/bin/python3 with onnx and numpy.

load helpers

EX=$ONNXQ_ROOT/share/onnxq/examples

setup() {
	onnxq_setup
	rec_calibrated 2
}

# written QPARAMS: the model from QPARAMS is valid and ORT runs it.
written() {
	run --separate-stderr onnx-qdq-insert -o q.onnx rec.onnx "$1"
	[ "$status" -eq 0 ] || fail "onnx-qdq-insert: $stderr"
	run --separate-stderr /usr/bin/python3 -c '
import sys, onnx
onnx.checker.check_model(onnx.load(sys.argv[1]))' q.onnx
	[ "$status" -eq 0 ] || fail "onnx.checker: $stderr"
	run --separate-stderr ort_node "$ONNXQ_ROOT/test/ort-run.js" --out ort \
	    q.onnx data
	[ "$status" -eq 0 ] || fail "ORT: $stderr"
}

@test "examples: every file is here and says how to use it" {
	local n=0 f
	for f in "$EX"/*.yaml; do
		n=$((n + 1))
		grep -q '^#   onnx-' "$f" || fail "$f: no usage line"
	done
	[ "$n" -ge 5 ] || fail "only $n examples"
}

@test "examples: the recipes quantize rec into models ORT runs" {
	local r
	for r in ort-static a16w8 accuracy; do
		run --separate-stderr onnx-qparams --all-ops -c "$EX/$r.yaml" rec.stats
		[ "$status" -eq 0 ] || fail "$r: $stderr"
		printf '%s\n' "$output" >"$r.qp"
		written "$r.qp"
	done
	# The recipes do what they say: a16w8 has 16-bit activations.
	grep -q $'^qparam\t.*role=act.*type=uint16' a16w8.qp
	! grep -q $'^qparam\t.*role=act.*type=uint16' ort-static.qp
}

@test "examples: the regions files promote rec into models ORT runs" {
	local g
	onnx-qparams --all-ops rec.stats >all.qp
	for g in regions-attention-uint16 regions-float-head; do
		run --separate-stderr onnx-mixprec -c "$EX/$g.yaml" -o "$g.qp" \
		    rec.onnx <all.qp
		[ "$status" -eq 0 ] || fail "$g: $stderr"
		written "$g.qp"
	done
	! cmp -s all.qp regions-attention-uint16.qp
}
