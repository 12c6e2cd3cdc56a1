#!/usr/bin/env bats
# calib.bats: onnx-calib. --weights-only: the node, weight and bias
# records of the prepared model (BatchNormalization folded, Constant nodes
# as weights), per-channel ranges checked against numpy, the #model line
# (sha256 of the bytes, opset), stdin, atomic -o. --merge: shards of
# activation statistics (made by onnxq-statgen) merge into exactly the
# whole run's records, byte for byte, whatever the order and grouping of
# the inputs; conflicting records and streams of other models are
# refused, naming the files. Usage mistakes exit 2, errors 1.
# Needs: the built onnx-calib, onnxq-statgen (test/tools), /usr/bin/python3
# with onnx and numpy; the real-model test needs scripts/fetch-models.

load helpers

PY=/usr/bin/python3

setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	# A small model: Conv+BatchNormalization (folded), unnamed nodes, a
	# Constant, Gemm with transB, MatMul with a constant B, Gemm with
	# beta whose bias another node reads first, an int64 initializer
	# that is no weight.
	"$PY" - <<'EOF'
import onnx, numpy as np
from onnx import helper as h, TensorProto as T, numpy_helper as nh
rng = np.random.default_rng(1)
def init(name, shape, lo=-2, hi=2):
    return nh.from_array(rng.uniform(lo, hi, shape).astype(np.float32), name)
inits = [init("conv.w", (4, 3, 3, 3)), init("conv.b", (4,)),
    init("bn.scale", (4,), 0.5, 2), init("bn.bias", (4,)),
    init("bn.mean", (4,)), init("bn.var", (4,), 0.5, 2),
    init("fc.w", (5, 16)), init("fc.b", (5,)), init("mm.w", (5, 6)),
    nh.from_array(np.array([1, 16], dtype=np.int64), "shape")]
nodes = [
    h.make_node("Conv", ["x", "conv.w", "conv.b"], ["c"], name="conv 1",
        pads=[1, 1, 1, 1]),
    h.make_node("BatchNormalization",
        ["c", "bn.scale", "bn.bias", "bn.mean", "bn.var"], ["bn"], name="bn"),
    h.make_node("Relu", ["bn"], ["r"]),
    h.make_node("GlobalAveragePool", ["r"], ["p"]),
    h.make_node("Reshape", ["p", "shape"], ["f"], name="flat"),
    h.make_node("Constant", [], ["k"], name="kconst",
        value=nh.from_array(np.linspace(-1, 2, 16, dtype=np.float32)
            .reshape(1, 16))),
    h.make_node("Mul", ["f", "k"], ["f2"], name="mul"),
    h.make_node("Gemm", ["f2", "fc.w", "fc.b"], ["g"], name="fc", transB=1),
    h.make_node("MatMul", ["g", "mm.w"], ["y"], name="mm"),
    h.make_node("Add", ["y", "fc.b2"], ["z"], name="mm"),
    h.make_node("Gemm", ["z", "fc2.w", "fc.b2"], ["z2"], name="fc2",
        beta=0.5),
]
inits.append(nh.from_array(np.full((6,), 0.25, np.float32), "fc.b2"))
inits.append(init("fc2.w", (6, 6)))
g = h.make_graph(nodes, "t",
    [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 8, 8])],
    [h.make_tensor_value_info("z2", T.FLOAT, [1, 6])], inits)
m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
onnx.checker.check_model(m)
onnx.save(m, "small.onnx")
EOF
}

SMALL() { printf '%s\n' "$BATS_FILE_TMPDIR/small.onnx"; }

# records FILE: the record lines (no header lines).
records() { grep -v '^#' "$1"; }

# An awk check that a stream's end count is right.
end_ok() {
	awk -F'\t' '/^#/ { next } $1 == "end" { ok = n == $2; seen = 1; next }
	    { n++ } END { exit !(seen && ok) }' "$1"
}

@test "calib: usage mistakes exit 2 with the usage" {
	run --separate-stderr onnx-calib
	[ "$status" -eq 2 ]
	[[ ${stderr_lines[0]} == "onnx-calib: no calibration data: give -d DIR"* ]]
	[[ ${stderr_lines[1]} == "usage: onnx-calib "* ]]
	[ -z "$output" ]
	run --separate-stderr onnx-calib --weights-only --merge a
	[ "$status" -eq 2 ]
	[[ $stderr == "onnx-calib: --weights-only and --merge exclude each other"* ]]
	run --separate-stderr onnx-calib --merge -d dir a
	[ "$status" -eq 2 ]
	run --separate-stderr onnx-calib -d dir --limit 0 m.onnx
	[ "$status" -eq 2 ]
	[[ $stderr == "onnx-calib: --limit: '0' is not a whole number from 1 to 2147483647"* ]]
	run --separate-stderr onnx-calib -d dir --batch x m.onnx
	[ "$status" -eq 2 ]
	run --separate-stderr onnx-calib -d dir --threads 257 m.onnx
	[ "$status" -eq 2 ]
	[[ $stderr == "onnx-calib: --threads: '257' is not a whole number from 1 to 256"* ]]
	run --separate-stderr onnx-calib -d dir --hist-bits 13 m.onnx
	[ "$status" -eq 2 ]
	[[ $stderr == "onnx-calib: --hist-bits: '13' is not a whole number from 0 to 12"* ]]
	run --separate-stderr onnx-calib --weights-only --limit 3 m.onnx
	[ "$status" -eq 2 ]
	[[ $stderr == "onnx-calib: --limit and --batch need -d"* ]]
	run --separate-stderr onnx-calib --weights-only a.onnx b.onnx
	[ "$status" -eq 2 ]
	[[ $stderr == "onnx-calib: one model expected, got 2 arguments"* ]]
	run --separate-stderr onnx-calib -o
	[ "$status" -eq 2 ]
}

@test "calib: --weights-only describes the prepared model" {
	run --separate-stderr onnx-calib --weights-only "$(SMALL)"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	printf '%s\n' "$output" >s
	end_ok s || fail "bad end count: $(tail -1 s)"
	[ "$(sed -n 1p s)" = "#onnxq	1.0" ]
	[[ $(sed -n 2p s) == "#prog	onnx-calib	"*"	"*"onnx-calib%20--weights-only%20"* ]]
	sha=$(sha256sum "$(SMALL)" | cut -d' ' -f1)
	[ "$(sed -n 3p s)" = "#model	$(SMALL)	sha256=$sha	opset=13" ]
	# BN folded away, Constant gone; unnamed and repeated names made unique
	[ "$(grep -c '^node' s)" -eq 9 ]
	! grep -q 'op=BatchNormalization' s
	! grep -q 'op=Constant' s
	grep -q '^node	@1	op=Relu	in=bn	out=r$' s
	grep -q '^node	@2	op=GlobalAveragePool	in=r	out=p$' s
	grep -q '^node	mm@7	op=Add	in=y,fc.b2	out=z$' s
	grep -q '^node	conv%201	op=Conv	in=x,[^,]*,[^,]*	out=bn$' s
	# the int64 shape is no weight; every float constant has one record
	! grep -q '^weight	shape	' s
	[ "$(grep -c '^weight' s)" -eq 5 ]
	[ "$(grep -c '^bias' s)" -eq 3 ]
	grep -q '^weight	k	node=mul	op=Mul	dtype=float	shape=1x16	min=-1	max=2$' s
	grep -q '^weight	fc.w	node=fc	op=Gemm	dtype=float	shape=5x16	.*	axis=0	' s
	grep -q '^weight	mm.w	node=mm	op=MatMul	dtype=float	shape=5x6	.*	axis=1	' s
	grep -q '^bias	fc.b	node=fc	op=Gemm	input=f2	weight=fc.w	dtype=float	shape=5	' s
	# one record per tensor; a bias first; Gemm's beta
	! grep -q '^weight	fc.b2	' s
	grep -q '^bias	fc.b2	node=fc2	op=Gemm	input=z	weight=fc2.w	beta=0.5	dtype=float	shape=6	min=0.25	max=0.25	axis=0	cmin=0.25,0.25,0.25,0.25,0.25,0.25	cmax=0.25,0.25,0.25,0.25,0.25,0.25$' s
	grep -q '^weight	fc2.w	node=fc2	op=Gemm	dtype=float	shape=6x6	.*	axis=1	' s
	! grep '^bias	fc.b	.*beta=' s
	conv_w=$(awk -F'\t' '$1 == "node" && $2 == "conv%201" { split($4, a, "[=,]"); print a[3] }' s)
	grep -q "^weight	$conv_w	node=conv%201	op=Conv	dtype=float	shape=4x3x3x3	.*	axis=0	" s
	grep -q "^bias	[^	]*	node=conv%201	op=Conv	input=x	weight=$conv_w	dtype=float	shape=4	" s
}

@test "calib: weight ranges and per-channel ranges match numpy" {
	onnx-calib --weights-only -o s "$(SMALL)"
	"$PY" - "$(SMALL)" s <<'EOF'
import sys, onnx, numpy as np
from onnx import numpy_helper as nh
m = onnx.load(sys.argv[1])
w = {t.name: nh.to_array(t) for t in m.graph.initializer}
for n in m.graph.node:
    if n.op_type == "Constant":
        w[n.output[0]] = nh.to_array(n.attribute[0].t)
# the BN fold, as prep does it (eps 1e-5)
s = w["bn.scale"] / np.sqrt(w["bn.var"] + 1e-5)
folded_w = w["conv.w"] * s[:, None, None, None]
folded_b = (w["conv.b"] - w["bn.mean"]) * s + w["bn.bias"]
def check(rec, arr, tol):
    f = dict(kv.split("=", 1) for kv in rec[2:])
    assert f["shape"] == "x".join(map(str, arr.shape)), (rec[1], f["shape"])
    # float32 text reads back exactly
    assert abs(np.float32(f["min"]) - arr.min()) <= tol, (rec[1], f["min"], arr.min())
    assert abs(np.float32(f["max"]) - arr.max()) <= tol, (rec[1], f["max"], arr.max())
    if "axis" in f:
        ax = int(f["axis"])
        other = tuple(i for i in range(arr.ndim) if i != ax)
        cmin = np.array(f["cmin"].split(","), dtype=np.float32)
        cmax = np.array(f["cmax"].split(","), dtype=np.float32)
        assert np.allclose(cmin, arr.min(axis=other), rtol=0, atol=tol), rec[1]
        assert np.allclose(cmax, arr.max(axis=other), rtol=0, atol=tol), rec[1]
    return f
seen = 0
for line in open(sys.argv[2]):
    rec = line.rstrip("\n").split("\t")
    if rec[0] not in ("weight", "bias"):
        continue
    seen += 1
    if rec[1] in w:
        # untouched tensors: exact
        f = check(rec, w[rec[1]], 0)
    elif rec[0] == "weight":
        f = check(rec, folded_w, 1e-5)
    else:
        f = check(rec, folded_b, 1e-5)
    if rec[1] == "fc.w":
        assert f["axis"] == "0"
    if rec[1] == "mm.w":
        assert f["axis"] == "1"
assert seen == 8, seen
EOF
}

@test "calib: the model from stdin, the output through -o" {
	onnx-calib --weights-only -o a "$(SMALL)"
	onnx-calib --weights-only - <"$(SMALL)" >b
	diff <(records a) <(records b)
	grep -q '^#model	-	sha256=' b
	[ "$(grep '^#model' a | cut -f3-)" = "$(grep '^#model' b | cut -f3-)" ]
	# no argument is stdin too
	onnx-calib --weights-only <"$(SMALL)" >c
	diff <(grep -v '^#prog' b) <(grep -v '^#prog' c)
}

@test "calib: errors leave no output and keep an old one" {
	echo keep >out
	run --separate-stderr onnx-calib --weights-only -o out nosuch.onnx
	[ "$status" -eq 1 ]
	[ "$stderr" = "onnx-calib: nosuch.onnx: No such file or directory" ]
	[ "$(cat out)" = keep ]
	printf 'not a model' >bad.onnx
	run --separate-stderr onnx-calib --weights-only -o out bad.onnx
	[ "$status" -eq 1 ]
	[[ $stderr == "onnx-calib: bad.onnx"* ]]
	[ "$(cat out)" = keep ]
	left=$(ls -A | grep -v -x -e bad.onnx -e out -e "separate-stderr-.*") &&
	    fail "files left behind: $left"
	run --separate-stderr onnx-calib --weights-only "$T"
	[ "$status" -eq 1 ]
	[[ $stderr == *"is a directory" ]]
	if [ -w /dev/full ]; then
		run sh -c "onnx-calib --weights-only '$(SMALL)' >/dev/full"
		[ "$status" -eq 1 ]
	fi
}

@test "calib: merged shards equal the whole run, byte for byte" {
	onnxq-statgen -k 4 -b 13 s
	onnx-calib --merge s.0 s.1 s.2 s.3 >m0123
	diff <(records m0123) <(records s.whole)
	end_ok m0123
	# the same, whatever the order, also the header lines
	for order in "3 1 0 2" "2 3 1 0" "1 0 3 2"; do
		set -- $order
		onnx-calib --merge -o m s.$1 s.$2 s.$3 s.$4
		cmp <(grep -v '^#prog	onnx-calib' m) <(grep -v '^#prog	onnx-calib' m0123)
	done
	# merges of merges
	onnx-calib --merge s.3 s.0 >a
	onnx-calib --merge s.2 s.1 >b
	onnx-calib --merge b a >ab
	diff <(records ab) <(records s.whole)
	# stdin as one of the inputs
	onnx-calib --merge s.0 - s.2 s.3 <s.1 >c
	diff <(records c) <(records s.whole)
	# identical records were kept once
	[ "$(grep -c '^node	n0	' m0123)" -eq 1 ]
	[ "$(grep -c '^futurerecord	' m0123)" -eq 1 ]
	[ "$(grep -c '^#prog	onnxq-statgen' m0123)" -eq 1 ]
	[ "$(grep -c '^#prog	onnx-calib	' m0123)" -eq 1 ]
}

@test "calib: merge is exact at other sizes, with split hist records" {
	onnxq-statgen -s 7 -t 5 -k 3 -b 7 -n 30000 -m 11 big
	[ "$(awk -F'\t' '$1 == "hist" && $2 == "layer%200/out%2C%3D%25"' big.whole | wc -l)" -gt 1 ]
	awk '{ if (length($0) >= 65536) exit 1 }' big.whole
	onnx-calib --merge big.2 big.0 big.1 >m
	diff <(records m) <(records big.whole)
	onnxq-statgen -s 9 -k 1 one
	onnx-calib --merge one.0 >m
	diff <(records m) <(records one.whole)
	# the merge formats each bin edge once (up to 8 bits), statgen every time
	onnxq-statgen -s 5 -t 4 -k 3 -b 6 -n 20000 -m 8 e8
	onnx-calib --merge e8.1 e8.2 e8.0 >m
	diff <(records m) <(records e8.whole)
}

@test "calib: --annotate adds the derived keys" {
	onnxq-statgen -k 2 s
	onnx-calib --merge --annotate s.0 s.1 >m
	onnxq-statgen -a -k 2 t
	diff <(records m) <(records t.whole)
	grep '^stat' m | grep -v 'mean=' && fail "a stat record without mean"
	grep '^stat' m | head -1 | grep -q '	std=[^	]*	mavg_min=[^	]*	mavg_max=[^	]*$'
	# the derived keys are recomputed, not summed
	onnx-calib --merge m >m2
	diff <(records m2 | grep '^stat') <(records s.whole | grep '^stat')
}

@test "calib: merging conflicting streams fails, naming them" {
	onnxq-statgen -k 2 s
	sed 's/^\(weight	w	.*\)max=2/\1max=3/' s.1 >s.1x
	run --separate-stderr onnx-calib --merge s.0 s.1x
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	line=$(grep -n '^weight	w' s.1x | cut -d: -f1)
	[ "$stderr" = "onnx-calib: s.1x:$line: weight w differs from s.0:$line" ]
	# streams of two models
	onnx-calib --weights-only "$(SMALL)" >a
	sed 's/sha256=./sha256=X/' a >b
	run --separate-stderr onnx-calib --merge a b
	[ "$status" -eq 1 ]
	[[ $stderr == "onnx-calib: b:3: stream of another model (sha256 X"*", a:3 has "* ]]
	# the same model twice: kept once
	onnx-calib --merge a a >aa
	diff <(records aa) <(records a)
	# stat records of different types
	sed 's/^\(stat	layer%201[^	]*	\)dtype=float/\1dtype=float16/' s.1 >s.1t
	run --separate-stderr onnx-calib --merge s.0 s.1t
	[ "$status" -eq 1 ]
	[[ $stderr == "onnx-calib: s.1t:"*": stat layer 1/out,=%: dtype float differs from float16" ]]
}

@test "calib: real models (Gemm, Conv with folded BatchNormalization)" {
	need_models
	run --separate-stderr onnx-calib --weights-only "$OWW_HELLO"
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" >h
	end_ok h
	grep -q '	op=Gemm	' h
	# every Gemm weight is per channel, with one range per channel
	awk -F'\t' '$1 == "weight" && $4 == "op=Gemm" {
	    n++; split($6, s, "[=x]"); for (i = 1; i <= NF; i++) if ($i ~ /^axis=/) ax = substr($i, 6) + 2
	    for (i = 1; i <= NF; i++) if ($i ~ /^cmin=/) c = split(substr($i, 6), v, ",")
	    if (c != s[ax]) exit 1 } END { exit !n }' h
	run --separate-stderr onnx-calib --weights-only "$OCR_DET"
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" >d
	end_ok d
	! grep -q 'op=BatchNormalization' d
	[ "$(grep -c '^weight	.*	op=Conv	' d)" -gt 50 ]
	[ "$(grep -c '^bias	.*	op=Conv	' d)" -gt 50 ]
}
