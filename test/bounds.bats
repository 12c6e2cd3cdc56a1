#!/usr/bin/env bats
# bounds.bats: hardening of data, file and model input (issue #22): what
# is not a regular file in a data directory is refused without blocking;
# a device as a model is refused before it is read; an .npz member is
# checked from its header before it is inflated; the interpreter's memory
# budget (ONNXQ_MEM_LIMIT); a long output name; input files named as the
# input is (#17). Every case must end in seconds (timeout) with one line
# naming the file.
# Needs: the built programs, /usr/bin/python3 with onnx and numpy.

load helpers

PY=/usr/bin/python3

setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	"$PY" - <<'PYEOF'
import numpy as np
import onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh

def relu(path, name):
    g = h.make_graph([h.make_node("Relu", [name], ["y"], name="relu")], "t",
        [h.make_tensor_value_info(name, T.FLOAT, [1, 4])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 4])])
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), path)

relu("relu.onnx", "x")
relu("colon.onnx", "onnx::Flatten_0")
# three 8 GiB tensors from 199 bytes
g = h.make_graph([
    h.make_node("ConstantOfShape", ["shape"], ["c"], name="cos"),
    h.make_node("Neg", ["c"], ["n"], name="neg"),
    h.make_node("Add", ["c", "n"], ["y"], name="add")], "m",
    [h.make_tensor_value_info("x", T.FLOAT, [1])],
    [h.make_tensor_value_info("y", T.FLOAT, None)],
    [nh.from_array(np.array([2**31], np.int64), "shape")])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), "mem.onnx")
# 512 MiB of doubles in half a megabyte, for a model that wants float
import struct, zipfile
hdr = "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 67108864), }"
hdr += " " * ((64 - (10 + len(hdr) + 1) % 64) % 64) + "\n"
with zipfile.ZipFile("bomb.npz", "w", zipfile.ZIP_DEFLATED) as z:
    with z.open("x.npy", "w") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
        for i in range(32):
            f.write(bytes(1 << 24))
PYEOF
}

setup() {
	onnxq_setup
	cp "$BATS_FILE_TMPDIR"/*.onnx .
}

# refused CMD... MESSAGE: CMD fails within 20 s, saying MESSAGE alone.
refused() {
	local msg=${*: -1}

	run --separate-stderr timeout 20 "${@:1:$#-1}"
	[ "$status" -eq 1 ] || fail "$*: exit $status: $stderr"
	[ "$stderr" = "$msg" ] || fail "$*: $stderr"
}

@test "models: a device is refused before it is read; pipes still work" {
	refused onnx-calib --weights-only /dev/zero \
	    'onnx-calib: /dev/zero: not a regular file'
	run --separate-stderr onnx-calib --weights-only - <relu.onnx
	[ "$status" -eq 0 ] || fail "stdin: $stderr"
	run --separate-stderr onnx-calib --weights-only <(cat relu.onnx)
	[ "$status" -eq 0 ] || fail "pipe: $stderr"
}
