#!/usr/bin/env bats
# nbits.bats: weight-only blockwise quantization, end to end on the tiny
# LLM-shaped decoder of scripts/make-decoder.py (hidden 64, ffn 176: the
# down projections' K = 176 is not a multiple of 32, 64 or 128):
# onnx-calib --weights-only | onnx-qparams --weight-only | onnx-qdq-insert
# in both written forms (com.microsoft MatMulNBits; opset-21 blocked
# DequantizeLinear -> MatMul). ONNX Runtime must run each model at its
# default optimization level, our interpreter must agree with it (the
# output SNR against fp32 within 1 dB of ONNX Runtime's), the MatMulNBits
# form must pass onnx.checker (the installed onnx 1.12 knows no opset 21,
# so the qdq form is checked by ONNX Runtime only). Also: the stream's
# size (one record per weight), tiny and all-zero blocks, NaN refused.
# Needs: /usr/bin/python3 with onnx and numpy, node with onnxruntime-node
# (scripts/fetch-models).

load helpers
load pipeline

PY=/usr/bin/python3
MK=$ONNXQ_ROOT/scripts/make-decoder.py

# quantize MODEL OUT [QPARAMS OPTION...] [-- INSERT OPTION...]
quantize() {
	local model=$1 out=$2 qp=() ins=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		qp+=("$1")
		shift
	done
	[ $# -eq 0 ] || shift
	ins=("$@")
	onnx-calib --weights-only "$model" |
	    onnx-qparams --weight-only "${qp[@]}" >"$out.qp" ||
	    fail "onnx-qparams failed"
	onnx-qdq-insert "${ins[@]}" -o "$out" "$model" "$out.qp" 2>err ||
	    fail "onnx-qdq-insert failed: $(cat err)"
}

# snr DIR MODEL: the SNR of MODEL's output against DIR's saved outputs.
snr() {
	onnx-verify --format tsv -d "$1" "$2" 2>/dev/null |
	    awk -F'\t' '$1 == "output" { print $4 }'
}

# agrees_with_ort MODEL QMODEL DATA: ORT runs QMODEL; our SNR against fp32
# within 1 dB of ORT's; prints both to the log.
agrees_with_ort() {
	local model=$1 q=$2 data=$3 ours theirs
	rm -rf ref oq
	cp -r "$data" ref
	cp -r "$data" oq
	ort_node "$ONNXQ_ROOT/test/ort-run.js" "$model" ref >/dev/null ||
	    fail "ORT cannot run $model"
	run --separate-stderr ort_node "$ONNXQ_ROOT/test/ort-run.js" "$q" oq
	[ "$status" -eq 0 ] || fail "ORT cannot run $q: $stderr"
	ours=$(snr ref "$q")
	theirs=$(snr oq "$model")
	printf '# %s: SNR %s dB (interpreter), %s dB (ORT)\n' "$q" "$ours" \
	    "$theirs" >&3
	[ -n "$ours" ] && [ -n "$theirs" ] || fail "no SNR: '$ours' '$theirs'"
	awk -v a="$ours" -v b="$theirs" 'BEGIN { d = a - b; if (d < 0) d = -d;
	    exit !(d <= 1 && a > 3) }' ||
	    fail "SNR $ours dB (ours) and $theirs dB (ORT) differ by over 1 dB"
}

@test "nbits: MatMulNBits form: checker, ORT runs it, interpreter agrees" {
	"$PY" "$MK" --data data tiny.onnx >/dev/null
	quantize tiny.onnx q.onnx -w int4 --block-size 32
	checker_ok q.onnx
	[ "$(grep -c '^blockq' q.onnx.qp)" = 15 ] ||
	    fail "$(grep '^blockq' q.onnx.qp)"
	agrees_with_ort tiny.onnx q.onnx data
	# The com.microsoft op, and no float MatMul weight left.
	run "$PY" -c 'import onnx, sys
m = onnx.load(sys.argv[1])
ops = [n.op_type for n in m.graph.node]
print(ops.count("MatMulNBits"), ops.count("MatMul"))' q.onnx
	[ "$output" = "15 4" ] || fail "MatMulNBits, MatMul: $output"
	# The default is mse, whose whole zero points are packed (uint8),
	# ORT's fast path, not float as hqq's.
	[ "$(grep -c 'method=mse' q.onnx.qp)" = 15 ] || fail "not mse"
	run "$PY" -c 'import onnx, sys
m = onnx.load(sys.argv[1])
t = {i.name: i.data_type for i in m.graph.initializer}
print(sorted({t[n.input[3]] for n in m.graph.node
              if n.op_type == "MatMulNBits"}))' q.onnx
	[ "$output" = "[2]" ] || fail "zero point types: $output"
}

# snr2 QMODEL: the output SNR of QMODEL against tiny.onnx on data/.
snr2() {
	onnx-verify --format tsv -d data tiny.onnx "$1" 2>/dev/null |
	    awk -F'\t' '$1 == "output" { print $4 }'
}

@test "nbits: mse beats rtn on the tiny decoder (blocks of 64), both forms" {
	"$PY" "$MK" --opset 21 --data data --samples 8 tiny.onnx >/dev/null
	for f in auto qdq; do
		quantize tiny.onnx m-$f.onnx --block-size 64 -- --format $f
		quantize tiny.onnx r-$f.onnx --block-size 64 --rtn -- \
		    --format $f
		m=$(snr2 m-$f.onnx) r=$(snr2 r-$f.onnx)
		printf '# %s: SNR mse %s dB, rtn %s dB\n' $f "$m" "$r" >&3
		awk -v m="$m" -v r="$r" 'BEGIN { exit !(m > r + 0.1) }' ||
		    fail "$f: mse $m dB, rtn $r dB"
	done
	agrees_with_ort tiny.onnx m-qdq.onnx data
}

@test "nbits: qdq form at opset 21: ORT runs it, interpreter agrees" {
	"$PY" "$MK" --opset 21 --data data tiny.onnx >/dev/null
	quantize tiny.onnx q.onnx -w int4 --block-size 32 -- --format qdq
	run "$PY" -c 'import onnx, sys
m = onnx.load(sys.argv[1])
dq = [n for n in m.graph.node if n.op_type == "DequantizeLinear"]
bs = {a.i for n in dq for a in n.attribute if a.name == "block_size"}
print(len(dq), sorted(bs), [o.version for o in m.opset_import if o.domain in ("", "ai.onnx")])' q.onnx
	[ "$output" = "15 [32] [21]" ] || fail "$output"
	agrees_with_ort tiny.onnx q.onnx data
}

@test "nbits: the qdq form needs opset 21 and says so" {
	"$PY" "$MK" tiny.onnx >/dev/null
	onnx-calib --weights-only tiny.onnx | onnx-qparams --weight-only >qp
	run --separate-stderr onnx-qdq-insert --format qdq -o q.onnx tiny.onnx qp
	[ "$status" -eq 1 ] || fail "status $status"
	[[ $stderr == "onnx-qdq-insert: tiny.onnx: blocked DequantizeLinear needs opset 21, the model has 17 and cannot be raised: "* ]] ||
	    fail "$stderr"
	[ ! -e q.onnx ] || fail "q.onnx written"
}

@test "nbits: int8, uint4 symmetric, rtn, blocks of 16 and 128 agree with ORT" {
	"$PY" "$MK" --data data tiny.onnx >/dev/null
	quantize tiny.onnx a.onnx -w int8 --block-size 128 --rtn
	agrees_with_ort tiny.onnx a.onnx data
	quantize tiny.onnx b.onnx -w uint4 --block-size 16 --weight-symmetric
	grep -q 'symmetric=1' b.onnx.qp || fail "not symmetric"
	grep -q 'method=mse' b.onnx.qp || fail "symmetric is mse"
	agrees_with_ort tiny.onnx b.onnx data
	quantize tiny.onnx c.onnx -w uint4 --block-size 64 --rtn
	agrees_with_ort tiny.onnx c.onnx data
}

@test "nbits: the stream has one record per weight, no per-block values" {
	"$PY" "$MK" tiny.onnx >/dev/null
	onnx-calib --weights-only tiny.onnx >w
	onnx-qparams --weight-only --block-size 16 <w >qp
	[ "$(grep -c '^blockq' qp)" = 15 ] || fail "$(cat qp)"
	[ "$(awk '/^blockq/ && length($0) > 120' qp)" = "" ] ||
	    fail "long blockq lines"
	# Everything else passes through unchanged.
	[ "$(grep -v -e '^blockq' -e '^#prog' -e '^end' qp)" = \
	    "$(grep -v -e '^#prog' -e '^end' w)" ] || fail "changed"
	grep -q $'^blockq\tl0_q_w\tnode=matmul_7_n\ttype=int4\tblock=16\tmethod=mse\tsymmetric=0$' qp ||
	    fail "$(grep l0_q_w qp)"
}

@test "nbits: onnx-qparams --weight-only refuses what it cannot do" {
	"$PY" "$MK" tiny.onnx >/dev/null
	onnx-calib --weights-only tiny.onnx >w
	run --separate-stderr onnx-qparams --weight-only --block-size 48 w
	[ "$status" -eq 1 ] && [ "$stderr" = "onnx-qparams: block size 48 is not a power of two from 16 to 256" ] ||
	    fail "$status: $stderr"
	run --separate-stderr onnx-qparams --weight-only -w int16 w
	[ "$status" -eq 1 ] && [ "$stderr" = "onnx-qparams: weight-only type int16 is not int4, uint4, int8 or uint8" ] ||
	    fail "$status: $stderr"
	run --separate-stderr onnx-qparams --weight-only --block-size 512 w
	[ "$status" -eq 2 ] || fail "$status: $stderr"
}

@test "nbits: tiny and all-zero blocks, K of 40 in blocks of 32" {
	"$PY" - <<'EOF'
import numpy as np, onnx, os
from onnx import helper, numpy_helper, TensorProto as T
rng = np.random.default_rng(3)
w = rng.standard_normal((40, 24)).astype(np.float32)
w[:, 0] = 0              # all-zero blocks, the short one too
w[32:, 1] = 0            # the short last block, all zero
w[:32, 2] = 1e-30        # a tiny block
w[:, 3] = 1e-3 * w[:, 3]
g = helper.make_graph([helper.make_node('MatMul', ['x', 'w'], ['y'], name='mm')], 'g',
                      [helper.make_tensor_value_info('x', T.FLOAT, [2, 40])],
                      [helper.make_tensor_value_info('y', T.FLOAT, [2, 24])],
                      [numpy_helper.from_array(w, 'w')])
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 21)])
m.ir_version = 10
onnx.save(m, 'mm.onnx')
for s in range(3):
    os.makedirs('data/s%d' % s)
    np.save('data/s%d/x.npy' % s, rng.standard_normal((2, 40)).astype(np.float32))
EOF
	for f in auto qdq; do
		for m in hqq rtn; do
			quantize mm.onnx q-$f-$m.onnx --$m -- --format $f
			agrees_with_ort mm.onnx q-$f-$m.onnx data
			onnx-verify --save-outputs out-$f-$m -d data \
			    q-$f-$m.onnx >/dev/null 2>&1 ||
			    fail "onnx-verify --save-outputs q-$f-$m.onnx"
		done
	done
	# The zero column comes out exactly zero, nothing is NaN.
	run "$PY" -c 'import numpy as np, glob
fs = glob.glob("out-*/*/y.npy")
assert len(fs) == 12, fs
for f in fs:
    y = np.load(f)
    assert np.isfinite(y).all(), f
    assert (y[:, 0] == 0).all(), (f, y[:, :2])
print("ok")'
	[ "$output" = ok ] || fail "$output"
}

@test "nbits: a NaN weight is refused, naming it, and nothing is written" {
	"$PY" "$MK" --nan tiny.onnx >/dev/null
	onnx-calib --weights-only tiny.onnx | onnx-qparams --weight-only >qp
	run --separate-stderr onnx-qdq-insert -o q.onnx tiny.onnx qp
	[ "$status" -eq 1 ] || fail "status $status"
	[ "$stderr" = "onnx-qdq-insert: tiny.onnx: initializer l0_q_w: NaN or infinity at [0][0]" ] ||
	    fail "$stderr"
	[ ! -e q.onnx ] || fail "q.onnx written"
}

@test "nbits: weights mapped from external data give identical results" {
	# Small enough for a test, big enough that some weights are mapped
	# (model.h, MODEL_MAP_MIN_BYTES): fp32 weights, and the 4-bit
	# model's packed codes in its own external data.
	"$PY" "$MK" --size small --samples 2 --data data small.onnx >/dev/null
	"$PY" -c 'import onnx
onnx.save(onnx.load("small.onnx"), "ext.onnx", save_as_external_data=True,
          location="ext.onnx.data", size_threshold=0)'
	quantize small.onnx q.onnx
	quantize ext.onnx qx.onnx -- --external-data
	ls qx.onnx*.data >/dev/null || fail "no external data in qx.onnx"
	for m in small ext q qx; do
		onnx-verify --save-outputs out-$m -d data $m.onnx \
		    >/dev/null 2>&1 || fail "onnx-verify $m.onnx"
	done
	for f in sample0/logits.npy sample1/logits.npy; do
		cmp out-small/$f out-ext/$f || fail "fp32: $f differs"
		cmp out-q/$f out-qx/$f || fail "4-bit: $f differs"
	done
	cmp out-small/sample0/logits.npy out-q/sample0/logits.npy &&
	    fail "the 4-bit model gives fp32's outputs"
	true
}

@test "nbits: a model's mapped weights stay out of onnx-verify's peak memory" {
	[ "${ONNXQ_SANITIZE:-}" != 1 ] || skip "peak memory under ASan says nothing"
	# 17 MB of weights (the small decoder), inline and in external data:
	# the mapped ones are given back after each node, so the run's peak
	# is below the inline one's by over half the weights (the program
	# itself and its libraries take some 6 MB either way).
	"$PY" "$MK" --size small --samples 1 --data data small.onnx >/dev/null
	"$PY" -c 'import onnx
onnx.save(onnx.load("small.onnx"), "ext.onnx", save_as_external_data=True,
          location="ext.onnx.data", size_threshold=0)'
	for m in small ext; do
		/usr/bin/time -f %M -o $m.kib onnx-verify --save-outputs o-$m \
		    -d data $m.onnx \
		    >/dev/null 2>&1 || fail "onnx-verify $m.onnx"
	done
	bytes=$(stat -c %s ext.onnx.data)
	printf '# peak: %s KiB inline, %s KiB mapped, of %s bytes\n' \
	    "$(cat small.kib)" "$(cat ext.kib)" "$bytes" >&3
	[ $(($(cat ext.kib) * 1024 + bytes / 2)) -lt \
	    $(($(cat small.kib) * 1024)) ] || fail "mapped: $(cat ext.kib) KiB"
	[ $(($(cat small.kib) * 1024)) -gt "$bytes" ] ||
	    fail "inline: $(cat small.kib) KiB, the test shows nothing"
}
