#!/usr/bin/env bats
# bounds.bats: hardening of data, file and model input (issue #22): what
# is not a regular file in a data directory is refused without blocking;
# a device as a model is refused before it is read; an .npz member is
# checked from its header before it is inflated; the interpreter's memory
# budget (ONNXQ_MEM_LIMIT); a long output name; input files named as the
# input is (#17); a model and its external data written as a pair; the
# statistics of 10^5 tiny tensors in bounded memory; the entropy search
# at its 65536-bin maximum on a real model. Every refusal must
# end in seconds (timeout) with one line naming the file.
# Needs: the built programs, /usr/bin/python3 with onnx and numpy.

load helpers

PY=/usr/bin/python3
# What the programs may map, where it can be limited: ASan reserves
# terabytes of address space for its shadow, so not under the sanitizers.
VLIMIT='ulimit -v 300000 &&'
[ "${ONNXQ_SANITIZE:-}" = 1 ] && VLIMIT=

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
g = h.make_graph([h.make_node("Add", ["x", "w"], ["y"], name="add")], "t",
    [h.make_tensor_value_info("x", T.FLOAT, [1, 256])],
    [h.make_tensor_value_info("y", T.FLOAT, [1, 256])],
    [nh.from_array(np.arange(256, dtype=np.float32).reshape(1, 256), "w")])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), "add.onnx")
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
def bomb(path, hdr, mib):
    hdr += " " * ((64 - (10 + len(hdr) + 1) % 64) % 64) + "\n"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        with z.open("x.npy", "w") as f:
            f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) +
                    hdr.encode())
            for i in range(mib // 16):
                f.write(bytes(1 << 24))
bomb("bomb.npz", hdr.rstrip(" \n"), 512)
# the right type, 256 MiB for an input of 1x4
bomb("shape.npz", "{'descr': '<f4', 'fortran_order': False, "
     "'shape': (1, 67108864), }", 256)
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

@test "data: a FIFO named as a data file is refused, not waited on" {
	mkdir -p a/s1 b/test_data_set_0 c
	mkfifo a/s1/x.npy b/test_data_set_0/input_0.pb c/s0.npz
	refused onnx-calib -q -d a relu.onnx 'onnx-calib: a/s1/x.npy: not a regular file'
	refused onnx-calib -q -d b relu.onnx \
	    'onnx-calib: b/test_data_set_0/input_0.pb: not a regular file'
	refused onnx-calib -q -d c relu.onnx 'onnx-calib: c/s0.npz: not a regular file'
	run --separate-stderr timeout 20 onnx-verify -d a relu.onnx
	[ "$status" -eq 2 ] || fail "onnx-verify: exit $status: $stderr"
	[ "$stderr" = 'onnx-verify: a/s1/x.npy: not a regular file' ] ||
	    fail "onnx-verify: $stderr"
}

@test "models: a device is refused before it is read; pipes still work" {
	refused onnx-calib --weights-only /dev/zero \
	    'onnx-calib: /dev/zero: not a regular file'
	run --separate-stderr onnx-calib --weights-only - <relu.onnx
	[ "$status" -eq 0 ] || fail "stdin: $stderr"
	run --separate-stderr onnx-calib --weights-only <(cat relu.onnx)
	[ "$status" -eq 0 ] || fail "pipe: $stderr"
}

@test "npz: a member is checked from its header before it is inflated" {
	mkdir z && cp "$BATS_FILE_TMPDIR/bomb.npz" z/s0.npz
	# 512 MiB would not fit in what the program is allowed here
	refused sh -c "$VLIMIT exec onnx-calib -q -d z relu.onnx" \
	    'onnx-calib: z/s0.npz: x.npy: dtype <f8 where the model wants float'
}

@test "npz: onnx-calib checks a member's shape from its header too" {
	mkdir z && cp "$BATS_FILE_TMPDIR/shape.npz" z/s0.npz
	refused sh -c "$VLIMIT exec onnx-calib -q -d z relu.onnx" \
	    'onnx-calib: z/s0.npz: input x: shape 1x67108864, the model wants 1x4'
}

@test "interp: a memory budget, refused with the node before it allocates" {
	mkdir -p d/s0
	"$PY" -c 'import numpy as np; np.save("d/s0/x.npy", np.ones(1, np.float32))'
	ONNXQ_MEM_LIMIT=1G refused onnx-calib -q -d d mem.onnx \
	    'onnx-calib: d/s0: node cos (ConstantOfShape): needs 8589934592 bytes, over the memory limit of 1073741824 (16 in use)'
	ONNXQ_MEM_LIMIT=lots refused onnx-calib -q -d d mem.onnx \
	    "onnx-calib: mem.onnx: ONNXQ_MEM_LIMIT: bad size 'lots' (bytes, or with K, M, G or T; 0 or none for no limit)"
	# a model that fits runs as before
	mkdir -p r/s0
	"$PY" -c 'import numpy as np; np.save("r/s0/x.npy", np.ones((1, 4), np.float32))'
	ONNXQ_MEM_LIMIT=64K run --separate-stderr onnx-calib -q -d r relu.onnx
	[ "$status" -eq 0 ] || fail "small model: $stderr"
}

@test "output: a legal 250-byte name is written (the temporary is cut)" {
	local name
	name=$(printf 'm%.0s' $(seq 245)).onnx
	run --separate-stderr onnx-calib --weights-only -o "$name" relu.onnx
	[ "$status" -eq 0 ] || fail "$stderr"
	[ -s "$name" ] || fail "not written"
	[ -z "$(ls -A | grep '^\.')" ] || fail "left behind: $(ls -A)"
}

@test "data: input files named as the input is, or the lone .npy (#17)" {
	mkdir -p a/s0 b/s0 c/s0
	"$PY" - <<'PYEOF'
import numpy as np
np.save("a/s0/onnx::Flatten_0.npy", np.ones((1, 4), np.float32))
np.save("b/s0/onnx%3A%3AFlatten_0.npy", np.ones((1, 4), np.float32))
np.save("c/s0/sample.npy", np.ones((1, 4), np.float32))
np.save("c/s0/other.npy", np.ones((1, 4), np.float32))
PYEOF
	run --separate-stderr onnx-calib -q -d a colon.onnx
	[ "$status" -eq 0 ] || fail "literal: $stderr"
	run --separate-stderr onnx-calib -q -d b colon.onnx
	[ "$status" -eq 0 ] || fail "encoded: $stderr"
	refused onnx-calib -q -d c colon.onnx \
	    'onnx-calib: c/s0/onnx%3A%3AFlatten_0.npy: missing (model input onnx::Flatten_0, nor onnx::Flatten_0.npy); found other.npy, sample.npy'
	rm c/s0/other.npy
	run --separate-stderr onnx-calib -q -d c colon.onnx
	[ "$status" -eq 0 ] || fail "lone file: $stderr"
}

@test "external data: the model and its data change together or not at all" {
	local first
	onnxq-roundtrip --external-data --external-min 16 add.onnx m.onnx
	first=$(ls | grep -x 'm\.onnx\.[A-Za-z0-9]\{6\}\.data') ||
	    fail "no data: $(ls)"
	# the model cannot be written: nothing new is left, the old pair stays
	mkdir d d/m.onnx
	run --separate-stderr onnxq-roundtrip --external-data --external-min 16 \
	    add.onnx d/m.onnx
	[ "$status" -ne 0 ] || fail "wrote over a directory"
	[ "$(ls -A d)" = m.onnx ] || fail "left behind: $(ls -A d)"
	# a new pair replaces the old one whole; the old data goes after
	onnxq-roundtrip --external-data --external-min 16 add.onnx m.onnx
	[ ! -e "$first" ] || fail "old data left: $(ls)"
	[ "$(ls | grep -c '^m\.onnx')" -eq 2 ] || fail "$(ls)"
	onnxq-roundtrip m.onnx back.onnx
	# a model written inline over it takes its data away too
	onnxq-roundtrip add.onnx m.onnx
	[ "$(ls | grep -c '^m\.onnx')" -eq 1 ] || fail "$(ls)"
	[ -z "$(ls -A | grep '^\.')" ] || fail "temporaries: $(ls -A)"
}

@test "qparams: --entropy-bins stops at 65536" {
	run --separate-stderr onnx-qparams -m entropy --entropy-bins 65537 </dev/null
	[ "$status" -eq 2 ] || fail "exit $status: $stderr"
	[ "${stderr%%$'\n'*}" = "onnx-qparams: --entropy-bins: '65537' is not a whole number from 16 to 65536" ] ||
	    fail "$stderr"
}

@test "qparams: 65536 entropy bins on a real model's statistics (#22)" {
	need_models
	run --separate-stderr "$PY" "$ONNXQ_ROOT/scripts/make-inputs.py" \
	    -n 1 --shape x=1x3x48x192 "$OCR_CLS" data
	[ "$status" -eq 0 ] || fail "make-inputs: $stderr"
	run --separate-stderr onnx-calib -q -o s -d data "$OCR_CLS"
	[ "$status" -eq 0 ] || fail "calib: $stderr"
	# four of its tensors (the whole search, 181 tensors, takes 30 s of
	# CPU): the stream less the others' stat and hist records
	keep=$(awk -F'\t' '$1 == "stat" { print $2 }' s | head -4)
	awk -F'\t' -v keep="$keep" 'BEGIN { n = split(keep, k, "\n")
	    for (i = 1; i <= n; i++) want[k[i]] = 1 }
	    $1 == "end" { next }
	    ($1 != "stat" && $1 != "hist") || ($2 in want) { print
	    if ($0 !~ /^#/) r++ }
	    END { printf "end\t%d\n", r }' s >s4
	[ "$(grep -c '^stat' s4)" -eq 4 ] || fail "$(grep -c '^stat' s4) stats"
	for bins in 2048 65536; do
		run --separate-stderr onnx-qparams -m entropy \
		    --entropy-bins "$bins" -o "q$bins" s4
		[ "$status" -eq 0 ] || fail "$bins bins: $stderr"
	done
	# the finer search chooses a range wherever the coarser one does
	n=$(grep -c '^qparam	.*	role=act	.*method=entropy' q2048) || true
	[ "$n" -ge 2 ] || fail "$n entropy ranges"
	[ "$(grep -c '^qparam	.*	role=act	.*method=entropy' q65536)" -eq \
	    "$n" ] || fail "$(grep '^qparam' q65536)"
}

@test "calib: 10^5 tiny tensors cost what their data needs (#22)" {
	# a chain of 100000 Neg nodes over 1x4: four values per tensor
	"$PY" - <<'PYEOF'
import numpy as np, onnx
from onnx import helper as h, TensorProto as T
n = 100000
nodes = [h.make_node("Neg", ["x" if i == 0 else "t%d" % (i - 1)],
    ["t%d" % i if i < n - 1 else "y"], name="n%d" % i) for i in range(n)]
g = h.make_graph(nodes, "chain",
    [h.make_tensor_value_info("x", T.FLOAT, [1, 4])],
    [h.make_tensor_value_info("y", T.FLOAT, [1, 4])])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), "chain.onnx")
np.save("x.npy", np.array([[1, 2, 3, 4]], np.float32))
PYEOF
	mkdir d && mv x.npy d/
	run --separate-stderr /usr/bin/time -f '%M' onnx-calib -o s chain.onnx -d d
	[ "$status" -eq 0 ] || fail "$stderr"
	# exact as ever: four one-value bins for each tensor
	grep -q '^hist	t3	mbits=7	zero=0	bins=1:1,2:1,3:1,4:1$' s ||
	    fail "$(grep '^hist	t3	' s)"
	[ "$(grep -c '^hist	' s)" -eq 100001 ]
	# about 1.1 GB before, when every histogram took 5 KB at least;
	# RSS means nothing under the sanitizers
	[ "${ONNXQ_SANITIZE:-}" = 1 ] && return 0
	[ "${stderr##*$'\n'}" -lt 700000 ] || fail "peak RSS ${stderr##*$'\n'} KB"
}
