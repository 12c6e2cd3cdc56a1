#!/usr/bin/env bats
# onnxq-mk.bats: the Makefile fragment share/onnxq/onnxq.mk. A Makefile
# that includes it turns a small Conv model into MODEL.stats,
# MODEL.qparams, MODEL.qdq.onnx and MODEL.verified; keeps the stats and
# qparams; redoes only what is out of date; fails, leaving no .verified,
# when MIN_SNR is not reached; finds the programs through ONNXQ_BIN; and
# documents every variable it sets. Needs: GNU make, /usr/bin/python3 with
# onnx and numpy, scripts/make-inputs.py, the built programs.

load helpers

MK=$ONNXQ_ROOT/share/onnxq/onnxq.mk

setup() {
	onnxq_setup
	# A small convolutional net: Conv, Relu, Conv, Relu, pool, Gemm.
	/usr/bin/python3 - <<'EOF' || fail "cannot make the model"
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(5)
def w(name, *shape):
    a = rng.standard_normal(shape).astype(np.float32) / np.sqrt(np.prod(shape[1:]))
    return numpy_helper.from_array(a, name)
inits = [w("w1", 8, 3, 3, 3), w("b1", 8), w("w2", 8, 8, 3, 3), w("b2", 8),
         w("g", 10, 8), w("gb", 10)]
nodes = [
    helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c1"], ["r1"]),
    helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c2"], ["r2"]),
    helper.make_node("GlobalAveragePool", ["r2"], ["p"]),
    helper.make_node("Flatten", ["p"], ["f"]),
    helper.make_node("Gemm", ["f", "g", "gb"], ["y"], transB=1),
]
g = helper.make_graph(nodes, "net",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(m)
onnx.save(m, "net.onnx")
EOF
	/usr/bin/python3 "$ONNXQ_ROOT/scripts/make-inputs.py" -n 4 --kind smooth \
	    net.onnx calib || fail "make-inputs failed"
	/usr/bin/python3 "$ONNXQ_ROOT/scripts/make-inputs.py" -n 3 --seed 2 \
	    --kind smooth net.onnx eval || fail "make-inputs failed"
	cat >Makefile <<EOF
CALIB_DIR = calib
EVAL_DIR = eval
MIN_SNR = 20
include $MK
EOF
}

# mk ARGS: make here, apart from any make this test runs under.
mk() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory "$@"
}

@test "onnxq.mk: MODEL.verified runs the whole pipeline and keeps its steps" {
	run --separate-stderr mk net.verified
	[ "$status" -eq 0 ] || fail "make: exit $status" "$output" "$stderr"
	# Each step ran once, in order, with the variables' values.
	[[ $output == *"onnx-calib --quiet -d calib -o net.stats net.onnx"* ]] ||
	    fail "no calibration step: $output"
	[[ $output == *"onnx-qparams  -o net.qparams net.stats"* ]] ||
	    fail "no qparams step: $output"
	[[ $output == *"onnx-qdq-insert  -o net.qdq.onnx net.onnx net.qparams"* ]] ||
	    fail "no insert step: $output"
	[[ $output == *"onnx-verify -d eval --min-snr 20"*"net.onnx net.qdq.onnx"* ]] ||
	    fail "no verify step: $output"
	head -n 1 net.stats | grep -q '^#onnxq' || fail "net.stats: not a stream"
	grep -q '^stat	' net.stats || fail "net.stats: no stat records"
	grep -q '^qparam	r1	' net.qparams || fail "net.qparams: no qparam r1 (c1 folds into the Relu)"
	/usr/bin/python3 -c '
import collections, onnx, sys
m = onnx.load("net.qdq.onnx")
ops = collections.Counter(n.op_type for n in m.graph.node)
sys.exit(0 if ops["QuantizeLinear"] >= 3 and ops["DequantizeLinear"] >= 6
         else "ops: %s" % dict(ops))' || fail "net.qdq.onnx is not a QDQ model"
	# The report is onnx-verify's, with the output at or above MIN_SNR.
	awk '$1 == "y" { found = 1; if ($3 + 0 < 20) exit 1 }
	    END { exit !found }' net.verified ||
	    fail "net.verified: $(cat net.verified)"
	# Intermediates are kept, and all is up to date afterwards.
	[ -s net.stats ] && [ -s net.qparams ] && [ -s net.qdq.onnx ]
	run mk -q net.verified
	[ "$status" -eq 0 ] || fail "make -q: not up to date after a build"
}

@test "onnxq.mk: a changed step redoes only what follows it" {
	run mk net.verified
	[ "$status" -eq 0 ] || fail "make: $output"
	sleep 1
	touch net.stats
	run mk -n net.verified
	[ "$status" -eq 0 ]
	[[ $output != *onnx-calib* ]] || fail "calibrates again: $output"
	[[ $output == *onnx-qparams*onnx-qdq-insert*onnx-verify* ]] ||
	    fail "does not redo the rest: $output"
	# Options reach the programs.
	run --separate-stderr mk -B net.qparams QPARAMS_FLAGS='-m percentile'
	[ "$status" -eq 0 ] || fail "make: $output $stderr"
	grep -q 'method=percentile' net.qparams || fail "QPARAMS_FLAGS not used"
}

@test "onnxq.mk: below MIN_SNR the build fails and leaves no .verified" {
	run --separate-stderr mk net.verified MIN_SNR=200
	[ "$status" -ne 0 ] || fail "make succeeded below MIN_SNR: $output"
	[ ! -e net.verified ] || fail "net.verified left behind"
	[ ! -e net.verified.tmp ] || fail "net.verified.tmp left behind"
	# The report is shown, and the model it judged is kept.
	[[ $output == *"low-snr"* ]] || fail "no report: $output $stderr"
	[ -s net.qdq.onnx ]
	# The same model passes a reachable floor without being rebuilt.
	run mk net.verified
	[ "$status" -eq 0 ] || fail "make: $output"
	[[ $output != *onnx-qdq-insert* ]] || fail "rebuilt: $output"
}

@test "onnxq.mk: ONNXQ_BIN names where the programs are" {
	local clean=(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u ONNXQ_BIN
	    PATH=/usr/bin:/bin make --no-print-directory)

	run "${clean[@]}" net.qparams
	[ "$status" -ne 0 ] || fail "found the programs without PATH: $output"
	run "${clean[@]}" net.qparams ONNXQ_BIN="$ONNXQ_BIN"
	[ "$status" -eq 0 ] || fail "make ONNXQ_BIN=...: $output"
	[[ $output == "$ONNXQ_BIN/onnx-calib "* ]] || fail "$output"
}

@test "onnxq.mk: every variable it sets is documented at its top" {
	local v missing=

	for v in $(sed -n 's/^\([A-Z_]*\) *?=.*/\1/p' "$MK"); do
		sed -n '1,/^[^#]/p' "$MK" | grep -qw "$v" || missing="$missing $v"
	done
	[ -z "$missing" ] || fail "undocumented:$missing"
	[ "$(grep -c '^[A-Z_]* *?=' "$MK")" -ge 10 ]
}
