#!/usr/bin/env bats
# ort-load.bats: every writer path of onnx-qdq-insert gives a model that
# passes onnx.checker and that ONNX Runtime loads and runs at its default
# optimization level, on an opset-9 model (PaddleOCR v4 rec): 8-bit QDQ,
# 16-bit activations, com.microsoft Q/DQ, mixed precision by regions and
# weights kept float. ORT fuses DQ -> Conv -> Q into QLinearConv, which
# needs opset 10: a writer that leaves opset 9 in place fails here.
# Needs: the model cache, onnxruntime-node, /usr/bin/python3 with onnx.

load helpers

setup() {
	onnxq_setup
	rec_calibrated 1
}

# loads NAME QPARAMS [onnx-qdq-insert options]: NAME.onnx is valid, runs in
# ORT, and has a default-domain opset of 10 or more.
loads() {
	local name=$1 qp=$2
	shift 2
	run --separate-stderr onnx-qdq-insert "$@" -o "$name.onnx" rec.onnx "$qp"
	[ "$status" -eq 0 ] || fail "$name: onnx-qdq-insert: $stderr"
	run --separate-stderr /usr/bin/python3 -c '
import sys, onnx
m = onnx.load(sys.argv[1])
onnx.checker.check_model(m)
print(max(o.version for o in m.opset_import if o.domain in ("", "ai.onnx")))
' "$name.onnx"
	[ "$status" -eq 0 ] || fail "$name: onnx.checker: $stderr"
	[ "$output" -ge 10 ] || fail "$name: opset $output"
	run --separate-stderr ort_node "$ONNXQ_ROOT/test/ort-run.js" \
	    --out "ort-$name" "$name.onnx" data
	[ "$status" -eq 0 ] || fail "$name: ONNX Runtime: $stderr"
}

@test "ort-load: 8-bit, 16-bit and com.microsoft Q/DQ on opset 9 load in ORT" {
	onnx-qparams rec.stats >u8.qp
	onnx-qparams -a uint16 rec.stats >u16.qp
	loads u8 u8.qp
	loads u16 u16.qp
	loads ms u8.qp --qdq-domain com.microsoft
	loads wf u8.qp --weights-float
	loads pairs u16.qp --dedicated-pairs
}

@test "ort-load: mixed precision regions on opset 9 load in ORT" {
	onnx-qparams rec.stats >u8.qp
	printf 'regions:\n  - nodes: [p2o.Conv.0, p2o.Conv.1]\n    type: uint16\n' \
	    >regions.yaml
	onnx-mixprec -c regions.yaml -o mixed.qp rec.onnx <u8.qp
	grep -q $'^convert\t' mixed.qp
	loads mixed mixed.qp
}

# ONNX Runtime runs a ReduceMin or ReduceMax whose input and output share
# parameters on the 8-bit data, which opset 11 does not allow: its session
# refused such a model of ours until the writer raised the opset to 12.
@test "ort-load: --all-ops ReduceMin and ReduceMax on opset 11 load in ORT" {
	local t=/usr/share/libonnx-testdata/data/node
	t=$t/test_dynamicquantizelinear_max_adjusted_expanded
	[ -d "$t" ] || unavailable "libonnx-testdata" "no $t"
	onnx-calib -d "$t" "$t/model.onnx" | onnx-qparams --all-ops >r.qp
	run --separate-stderr onnx-qdq-insert -v -o r.onnx "$t/model.onnx" r.qp
	[ "$status" -eq 0 ] || fail "onnx-qdq-insert: $stderr"
	[[ $stderr == *"opset raised from 11 to 12"* ]] ||
	    fail "no opset note: $stderr"
	run --separate-stderr /usr/bin/python3 -c '
import sys, onnx
onnx.checker.check_model(onnx.load(sys.argv[1]))' r.onnx
	[ "$status" -eq 0 ] || fail "onnx.checker: $stderr"
	run --separate-stderr ort_node -e '
const ort = require("onnxruntime-node");
ort.InferenceSession.create(process.argv[1]).then(
    () => console.log("loaded"),
    (e) => { console.error(e.message); process.exit(1); });' r.onnx
	[ "$status" -eq 0 ] || fail "ONNX Runtime: $stderr"
}
