#!/usr/bin/env bats
# ort-forms.bats: forms that ONNX Runtime's own quantizer writes and ONNX
# Runtime runs are run by onnx-verify too, with ORT's results: a scale of
# shape [1] beside a scalar zero point (and the other way round).
# Needs: onnxruntime-node, /usr/bin/python3 with onnx and numpy.

load helpers

# model SCALE_DIMS ZP_DIMS: q.onnx, x -> QuantizeLinear -> DequantizeLinear.
model() {
	/usr/bin/python3 - "$1" "$2" <<'PY'
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
sd = [int(d) for d in sys.argv[1].split("x") if d]
zd = [int(d) for d in sys.argv[2].split("x") if d]
s = numpy_helper.from_array(np.full(sd, 0.05, np.float32), "s")
z = numpy_helper.from_array(np.full(zd, 128, np.uint8), "z")
g = helper.make_graph(
    [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
     helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])],
    "forms", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])], [s, z])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 7
onnx.checker.check_model(m)
onnx.save(m, "q.onnx")
PY
}

check() {
	model "$1" "$2"
	/usr/bin/python3 "$ONNXQ_ROOT/scripts/make-inputs.py" -n 2 q.onnx data \
	    >/dev/null
	run --separate-stderr ort_node "$ONNXQ_ROOT/test/ort-run.js" q.onnx data
	[ "$status" -eq 0 ] || fail "ORT: $stderr"
	run --separate-stderr onnx-verify --min-snr 80 -d data q.onnx
	[ "$status" -eq 0 ] || fail "onnx-verify: exit $status" "$output" "$stderr"
}

@test "ort-forms: scale [1] with a scalar zero point" {
	check 1 ""
}

@test "ort-forms: scalar scale with a zero point [1]" {
	check "" 1
}

@test "ort-forms: per-axis scale with a scalar zero point is still refused" {
	model 8 ""
	/usr/bin/python3 "$ONNXQ_ROOT/scripts/make-inputs.py" -n 1 q.onnx data \
	    >/dev/null
	cp data/s0/x.npy data/s0/y.npy
	run --separate-stderr onnx-verify -d data q.onnx
	[ "$status" -eq 2 ] || fail "exit $status: $stderr"
	[[ $stderr == *"zero point shape differs"* ]] || fail "$stderr"
}
