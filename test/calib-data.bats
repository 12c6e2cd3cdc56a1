#!/usr/bin/env bats
# calib-data.bats: onnx-calib -d, calibration on data. The stat and hist
# records of every float tensor (graph input, each node output in
# topological order; no constants, no integer tensors) checked against
# numpy: counts, exact ranges, the exact sums of per-batch minima and
# maxima (ONNX Runtime's moving average), sums, and every histogram bin;
# batches over a dynamic first dimension; NaN/Inf counted apart with a
# warning; the three data layouts and image directories (PNG, JPEG, with
# resizing and normalisation); errors naming the file, the input and the
# expected shape; --shard run with GNU parallel merging into exactly the
# whole run; --annotate-model; the progress bar only on a terminal; peak
# memory that does not grow with the number of samples; and on a real
# model (PaddleOCR cls) every tensor's range against ONNX Runtime's.
# Needs: the built onnx-calib, /usr/bin/python3 with onnx and numpy, GNU
# parallel, script(1) (util-linux), GNU time (/usr/bin/time),
# test/data/images; the last test scripts/fetch-models and node.

load helpers

PY=/usr/bin/python3
IMAGES=$TESTDATA/images

setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	"$PY" - <<'EOF'
import os
import numpy as np
import onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh

def model(path, batch, extra_in=False):
    nodes = [
        h.make_node("Relu", ["x"], ["r"], name="relu"),
        h.make_node("Mul", ["r", "two"], ["m"], name="mul"),
        h.make_node("Sub", ["m", "x"], ["s"], name="sub"),
        h.make_node("Shape", ["s"], ["shp"], name="shape"),
    ]
    ins = [h.make_tensor_value_info("x", T.FLOAT, [batch, 3, 4, 4])]
    if extra_in:
        ins.append(h.make_tensor_value_info("y", T.FLOAT, [1]))
    g = h.make_graph(nodes, "t", ins,
        [h.make_tensor_value_info("s", T.FLOAT, [batch, 3, 4, 4]),
         h.make_tensor_value_info("shp", T.INT64, [4])],
        [nh.from_array(np.array(2, np.float32), "two")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    onnx.save(m, path)

model("dyn.onnx", "N")
model("fixed.onnx", 1)
model("two.onnx", 1, extra_in=True)
rng = np.random.default_rng(5)
for i in range(10):
    os.makedirs(f"d/s{i}")
    np.save(f"d/s{i}/x.npy", rng.normal(0, 2, (1, 3, 4, 4)).astype(np.float32))
os.makedirs("z")
for i in range(3):
    np.savez(f"z/b{i}.npz", x=rng.normal(0, 3, (1, 3, 4, 4)).astype(np.float32))
for i in range(2):
    os.makedirs(f"p/test_data_set_{i}")
    t = nh.from_array(rng.normal(0, 1, (1, 3, 4, 4)).astype(np.float32), "x")
    open(f"p/test_data_set_{i}/input_0.pb", "wb").write(t.SerializeToString())
EOF
}

# records FILE: the record lines; body FILE: all but #prog lines.
records() { grep -v '^#' "$1"; }
body() { grep -v '^#prog	' "$1"; }

# check_stats STREAM BATCH DIR...: every stat and hist record against
# numpy, running the model in numpy on the samples in order.
check_stats() {
	"$PY" - "$@" <<'EOF'
import glob, math, os, sys
import numpy as np
import onnx
from onnx import numpy_helper as nh

stream, batch, dirs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def samples(d):
    out = []
    for p in sorted(os.listdir(d), key=lambda s: [int(t) if t.isdigit() else t
            for t in __import__("re").split(r"(\d+)", s)]):
        q = os.path.join(d, p)
        if p.endswith(".npz"):
            out.append(np.load(q)["x"])
        elif os.path.exists(os.path.join(q, "x.npy")):
            out.append(np.load(os.path.join(q, "x.npy")))
        elif os.path.exists(os.path.join(q, "input_0.pb")):
            t = onnx.TensorProto()
            t.ParseFromString(open(os.path.join(q, "input_0.pb"), "rb").read())
            out.append(nh.to_array(t))
    return out
xs = [x for d in dirs for x in samples(d)]
batches = [np.concatenate(xs[i:i + batch]) for i in range(0, len(xs), batch)]
def run(x):
    r = np.maximum(x, np.float32(0))
    m = r * np.float32(2)
    return {"x": x, "r": r, "m": m, "s": m - x}
per = [run(b) for b in batches]
names = ["x", "r", "m", "s"]

recs = [l.rstrip("\n").split("\t") for l in open(stream) if not l.startswith("#")]
stats = [(r[1], dict(kv.split("=", 1) for kv in r[2:])) for r in recs if r[0] == "stat"]
assert [s[0] for s in stats] == names, [s[0] for s in stats]
hists = {}
for r in recs:
    if r[0] == "hist":
        f = dict(kv.split("=", 1) for kv in r[2:])
        assert f["mbits"] == "7"
        hh = hists.setdefault(r[1], {"zero": 0, "bins": {}})
        hh["zero"] += int(f["zero"])
        for el in filter(None, f["bins"].split(",")):
            e, c = el.split(":")
            hh["bins"][np.float32(e).item()] = hh["bins"].get(np.float32(e).item(), 0) + int(c)

def xsum(s):
    return math.fsum(float(v) for v in s.split(":"))
for name, f in stats:
    vals = [p[name] for p in per]
    allv = np.concatenate([v.ravel() for v in vals])
    assert f["dtype"] == "float"
    assert int(f["n"]) == allv.size, (name, f["n"])
    assert f["nan"] == "0" and f["inf"] == "0"
    assert np.float32(f["min"]) == allv.min(), (name, f["min"], allv.min())
    assert np.float32(f["max"]) == allv.max(), (name, f["max"], allv.max())
    assert int(f["batches"]) == len(batches)
    # exact sums of the per-batch minima and maxima: fsum rounds exactly
    bmin = math.fsum(float(v.min()) + 0.0 for v in vals)
    bmax = math.fsum(float(v.max()) + 0.0 for v in vals)
    assert float(f["bmin"].split(":")[0]) == bmin, (name, f["bmin"], bmin)
    assert float(f["bmax"].split(":")[0]) == bmax, (name, f["bmax"], bmax)
    s = math.fsum(allv.astype(np.float64))
    q = math.fsum(allv.astype(np.float64) ** 2)
    assert abs(xsum(f["sum"]) - s) <= 1e-12 * max(1, abs(q)), (name, f["sum"], s)
    assert abs(xsum(f["sumsq"]) - q) <= 1e-12 * q, (name, f["sumsq"], q)
    shapes = {v.shape for v in vals}
    want = "x".join("?" if len({sh[i] for sh in shapes}) > 1 else str(vals[0].shape[i])
                    for i in range(4))
    assert f["shape"] == want, (name, f["shape"], want)
    if "mavg_min" in f:
        assert np.float32(f["mavg_min"]) == np.float32(bmin / len(vals))
        assert np.float32(f["mavg_max"]) == np.float32(bmax / len(vals))
        assert abs(float(f["mean"]) - s / allv.size) < 1e-9
        assert abs(float(f["std"]) - allv.astype(np.float64).std()) < 1e-6
    # every bin: the value with its mantissa cut to 7 bits
    u = allv.view(np.uint32)
    ex = (u >> 23) & 0xFF
    zero = int(np.count_nonzero(ex == 0))
    edges = (u[ex != 0] & np.uint32(0xFFFF0000)).view(np.float32)
    e, c = np.unique(edges, return_counts=True)
    want = {float(a): int(b) for a, b in zip(e, c)}
    assert hists[name]["zero"] == zero, (name, hists[name]["zero"], zero)
    assert hists[name]["bins"] == want, name
assert set(hists) == set(names)
EOF
}

@test "calib-data: statistics of every float tensor, as numpy computes them" {
	cd "$BATS_FILE_TMPDIR"
	run --separate-stderr onnx-calib -d d dyn.onnx
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	printf '%s\n' "$output" >"$T/s"
	check_stats "$T/s" 1 d
	# the model half is there too, and the end count is right
	grep -q '^node	relu	op=Relu	in=x	out=r$' "$T/s"
	grep -q '^weight	two	' "$T/s"
	! grep -q '^stat	two	' "$T/s"
	! grep -q '^stat	shp	' "$T/s"
	[ "$(tail -1 "$T/s")" = "end	$(records "$T/s" | grep -vc '^end')" ]
	[ "$(sed -n 3p "$T/s")" = "#model	dyn.onnx	sha256=$(sha256sum dyn.onnx | cut -d' ' -f1)	opset=13" ]
	# batches of 3 over the dynamic first dimension (the last one of 1),
	# with the derived keys; three layouts, in the order given
	onnx-calib -d d -d z -d p --batch 3 --annotate dyn.onnx >"$T/b"
	check_stats "$T/b" 3 d z p
	grep -q '^stat	x	dtype=float	shape=3x3x4x4	n=720	' "$T/b"
	# --limit takes the first samples
	onnx-calib -d z -d d --limit 4 --batch 2 dyn.onnx >"$T/l"
	grep -q '^stat	x	.*	n=192	.*	batches=2	' "$T/l"
	# the same stream on every run, and with one thread
	onnx-calib -d d --threads 1 dyn.onnx >"$T/s1"
	cmp <(body "$T/s") <(body "$T/s1")
}

@test "calib-data: big tensors, split over threads, merge exactly" {
	"$PY" - <<'EOF'
import os, numpy as np, onnx
from onnx import helper as h, TensorProto as T
g = h.make_graph([h.make_node("Relu", ["x"], ["r"], name="relu")], "t",
    [h.make_tensor_value_info("x", T.FLOAT, ["N", 600003])],
    [h.make_tensor_value_info("r", T.FLOAT, ["N", 600003])])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), "big.onnx")
rng = np.random.default_rng(2)
for i in range(6):
    os.makedirs(f"b/s{i}")
    x = rng.standard_cauchy((1, 600003)).astype(np.float32)
    x[0, :1000] = 0
    if i == 1:
        x[0, 300000] = np.nan
    if i == 4:
        x[0, 500000] = -np.inf
    np.save(f"b/s{i}/x.npy", x)
EOF
	onnx-calib -d b --batch 2 big.onnx >s
	onnx-calib -d b --batch 2 --threads 1 big.onnx >s1
	onnx-calib -d b --batch 2 --threads 3 big.onnx >s3
	cmp <(body s) <(body s1)
	cmp <(body s) <(body s3)
	# every version of the vector code sums in the same order
	for v in plain sse2 avx2; do
		ONNXQ_SIMD=$v onnx-calib -d b --batch 2 big.onnx >s$v
		cmp <(body s) <(body s$v)
	done
	grep -q '^stat	x	dtype=float	shape=2x600003	n=3600016	nan=1	inf=1	' s
	for k in 1 2 3; do
		onnx-calib -d b --batch 2 --shard $k/3 big.onnx >sh$k
	done
	onnx-calib --merge sh2 sh3 sh1 >m
	cmp <(body m) <(body s)
	# the histogram has every value; a long one is split
	[ "$(awk -F'\t' '$1 == "hist" && $2 == "x"' s | wc -l)" -gt 1 ]
	"$PY" - <<'EOF'
import numpy as np
n = 0
for l in open("s"):
    f = l.rstrip("\n").split("\t")
    if f[0] == "hist" and f[1] == "x":
        kv = dict(x.split("=", 1) for x in f[2:])
        n += int(kv["zero"]) + sum(int(b.split(":")[1]) for b in kv["bins"].split(",") if b)
assert n == 6 * 600003 - 2, n
EOF
}

@test "calib-data: the fast histogram (7 bits) is the 9-bit one coarsened, for floats of every kind" {
	# Up to 8 bits onnx-calib counts in flat per-thread arrays and scans
	# only the blocks a chunk's range can reach; above, the plain
	# histogram. Coarsened to 7 bits the two must agree to the count.
	"$PY" - <<'EOF'
import os, numpy as np, onnx
from onnx import helper as h, TensorProto as T
g = h.make_graph([h.make_node("Neg", ["x"], ["y"], name="neg")], "t",
    [h.make_tensor_value_info("x", T.FLOAT, [1, 300007])],
    [h.make_tensor_value_info("y", T.FLOAT, [1, 300007])])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), "k.onnx")
rng = np.random.default_rng(7)
for i in range(3):
    os.makedirs(f"k/s{i}")
    u = rng.integers(0, 2**32, 300007, dtype=np.uint64).astype(np.uint32)
    u[(u >> 23 & 0xff) == 0xff] &= ~np.uint32(1 << 30)    # finite
    x = u.view(np.float32).copy()
    # runs of one kind, as activations have: zeros, subnormals, tiny and
    # huge magnitudes, one sign only
    x[:9000] = 0
    x[9000:20000] = (u[9000:20000] & 0x807fffff | 1).view(np.float32)
    x[20000:40000] = np.abs(x[20000:40000])
    x[40000:60000] = -np.abs(x[40000:60000]) * np.float32(1e-30)
    # NaN and Inf in the first sample only: a chunk with them marks
    # every block it touches, which would hide counts left behind
    if i == 0:
        x[100] = np.nan
        x[200] = np.inf
    np.save(f"k/s{i}/x.npy", x.reshape(1, -1))
EOF
	onnx-calib -q -d k --hist-bits 7 k.onnx >h7 2>/dev/null
	onnx-calib -q -d k --hist-bits 9 k.onnx >h9 2>/dev/null
	"$PY" - <<'EOF'
import numpy as np
def hists(path):
    out, n = {}, {}
    for l in open(path):
        f = l.rstrip("\n").split("\t")
        kv = dict(x.split("=", 1) for x in f[2:] if "=" in x)
        if f[0] == "stat":
            n[f[1]] = int(kv["n"])
        if f[0] != "hist":
            continue
        d = out.setdefault(f[1], {})
        d[0.0] = d.get(0.0, 0) + int(kv["zero"])
        for b in kv["bins"].split(","):
            e, c = b.split(":")
            u = np.array([e], dtype=np.float32).view(np.uint32) & np.uint32(0xffff0000)
            k = float(u.view(np.float32)[0])
            d[k] = d.get(k, 0) + int(c)
    return out, n
a, na = hists("h7")
b, nb = hists("h9")
assert set(a) == {"x", "y"}, a.keys()
for t in a:
    assert a[t] == b[t], t
    assert sum(a[t].values()) == na[t] == nb[t], (t, sum(a[t].values()), na[t])
EOF
}

@test "calib-data: NaN and Inf are counted apart, with a warning" {
	"$PY" - <<'EOF'
import os, numpy as np
os.makedirs("n/s0")
x = np.arange(48, dtype=np.float32).reshape(1, 3, 4, 4) - 20
x[0, 0, 0, :3] = [np.nan, np.inf, -np.inf]
np.save("n/s0/x.npy", x)
EOF
	run --separate-stderr onnx-calib -d n "$BATS_FILE_TMPDIR/dyn.onnx"
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" >s
	[[ $stderr == *"onnx-calib: warning: tensor x: 1 NaN and 2 infinite values, left out of its statistics"* ]]
	grep -q '^stat	x	dtype=float	shape=1x3x4x4	n=45	nan=1	inf=2	min=-17	max=27	' s
	# Relu(-inf) = 0: the relu output has 1 NaN, 1 Inf
	[[ $stderr == *"tensor r: 1 NaN and 1 infinite values"* ]]
	grep -q '^stat	r	.*	n=46	nan=1	inf=1	min=0	max=27	' s
}

@test "calib-data: inputs that do not fit are errors naming file, input and shape" {
	cd "$BATS_FILE_TMPDIR"
	mkdir -p "$T/w/s0" "$T/t/s0"
	"$PY" -c "import numpy as np; np.save('$T/w/s0/x.npy', np.zeros((1, 3, 5, 4), np.float32)); np.save('$T/t/s0/x.npy', np.zeros((1, 3, 4, 4)))"
	run --separate-stderr onnx-calib -d "$T/w" -o "$T/out" dyn.onnx
	[ "$status" -eq 1 ]
	[ "$stderr" = "onnx-calib: $T/w/s0/x.npy: input x: shape 1x3x5x4, the model wants ?x3x4x4" ]
	[ ! -e "$T/out" ]
	run --separate-stderr onnx-calib -d "$T/t" dyn.onnx
	[ "$status" -eq 1 ]
	[ "$stderr" = "onnx-calib: $T/t/s0/x.npy: dtype <f8 where the model wants float" ]
	# batches need a dynamic first dimension
	run --separate-stderr onnx-calib -d d --batch 2 fixed.onnx
	[ "$status" -eq 1 ]
	[ "$stderr" = "onnx-calib: input x: the model's first dimension is fixed (1x3x4x4), so samples cannot be batched: leave out --batch" ]
	# samples of different shapes cannot share a batch
	mkdir -p "$T/v/s0" "$T/v/s1"
	"$PY" -c "import numpy as np; np.save('$T/v/s0/x.npy', np.zeros((1, 3, 4, 4), np.float32)); np.save('$T/v/s1/x.npy', np.zeros((2, 3, 4, 4), np.float32))"
	onnx-calib -d "$T/v" --batch 2 dyn.onnx >/dev/null
	run --separate-stderr onnx-calib -d "$T/v" fixed.onnx
	[ "$status" -eq 1 ]
	[ "$stderr" = "onnx-calib: $T/v/s1/x.npy: input x: shape 2x3x4x4, the model wants 1x3x4x4" ]
	# a missing input file, a directory without samples, no directory
	run --separate-stderr onnx-calib -d d two.onnx
	[ "$status" -eq 1 ]
	[ "$stderr" = "onnx-calib: d/s0/y.npy: missing (model input y); found x.npy" ]
	mkdir "$T/empty"
	run --separate-stderr onnx-calib -d "$T/empty" dyn.onnx
	[ "$status" -eq 1 ]
	[ "$stderr" = "onnx-calib: $T/empty: no samples (test_data_set_N/, SAMPLE/NAME.npy, SAMPLE.npz or .png/.jpg images)" ]
	run --separate-stderr onnx-calib -d "$T/nosuch" dyn.onnx
	[ "$status" -eq 1 ]
	[ "$stderr" = "onnx-calib: $T/nosuch: No such file or directory" ]
	# usage mistakes
	run --separate-stderr onnx-calib -d d --shard 4/3 dyn.onnx
	[ "$status" -eq 2 ]
	[[ ${stderr_lines[0]} == "onnx-calib: --shard: '4/3' is not K/N with 1 <= K <= N" ]]
	run --separate-stderr onnx-calib --weights-only --shard 1/2 dyn.onnx
	[ "$status" -eq 2 ]
	[[ ${stderr_lines[0]} == "onnx-calib: the calibration options need -d" ]]
	run --separate-stderr onnx-calib -d d --mean 1,2 dyn.onnx
	[ "$status" -eq 2 ]
	run --separate-stderr onnx-calib -d d --resize zoom dyn.onnx
	[ "$status" -eq 2 ]
	run --separate-stderr onnx-calib -d d --hist-bits 13 dyn.onnx
	[ "$status" -eq 2 ]
	run --separate-stderr onnx-calib -d d --size 8x6 dyn.onnx
	[ "$status" -eq 1 ]
	[ "$stderr" = "onnx-calib: image options given, but no -d directory holds images" ]
}

@test "calib-data: sharded with GNU parallel, merged: the whole run, byte for byte" {
	cd "$BATS_FILE_TMPDIR"
	for b in 1 2; do
		onnx-calib -d d -d z --batch $b dyn.onnx >"$T/whole"
		parallel --will-cite -j 2 "onnx-calib -q -d d -d z --batch $b --shard {}/3 -o '$T/shard{}' dyn.onnx" ::: 1 2 3
		onnx-calib --merge "$T/shard3" "$T/shard1" "$T/shard2" >"$T/merged"
		cmp <(body "$T/merged") <(body "$T/whole")
		# the shards took different batches
		! cmp -s <(records "$T/shard1") <(records "$T/shard2")
	done
	# more shards than batches: an empty shard, with a warning
	run --separate-stderr onnx-calib -d z --batch 2 --shard 3/3 dyn.onnx
	[ "$status" -eq 0 ]
	[ "$stderr" = "onnx-calib: warning: shard 3/3 has none of the 2 batches" ]
	! grep -q '^stat' <<<"$output"
}

@test "calib-data: image directories, preprocessed for the model" {
	mkdir imgs
	cp "$IMAGES/rgb.png" imgs/a1.png
	cp "$IMAGES/alpha.png" imgs/a2.PNG
	cp "$IMAGES/flat.jpg" imgs/a10.jpg
	echo notes >imgs/README
	"$PY" - <<'EOF'
import numpy as np, onnx
from onnx import helper as h, TensorProto as T
def model(path, shape):
    g = h.make_graph([h.make_node("Relu", ["x"], ["r"], name="relu")], "t",
        [h.make_tensor_value_info("x", T.FLOAT, shape)],
        [h.make_tensor_value_info("r", T.FLOAT, shape)])
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), path)
model("nchw.onnx", [1, 3, 6, 8])
model("nhwc.onnx", [1, 6, 8, 3])
model("dyn.onnx", ["N", 3, "H", "W"])
model("grey.onnx", [1, 1, 6, 8])
EOF
	onnx-calib -d imgs --limit 2 --scale 1 --mean 1,2,3 --std 2 nchw.onnx >s
	# rgb.png and alpha.png hold the same pattern, unresized
	"$PY" - "$IMAGES/expected.npy" <<'EOF'
import sys, numpy as np
px = np.load(sys.argv[1]).astype(np.float32).transpose(2, 0, 1)[None]
x = (px - np.array([1, 2, 3], np.float32).reshape(1, 3, 1, 1)) / np.float32(2)
x = np.concatenate([x, x])
f = [l.split("\t") for l in open("s") if l.startswith("stat\tx\t")][0]
kv = dict(v.split("=", 1) for v in f[2:])
assert kv["n"] == str(x.size) and kv["shape"] == "1x3x6x8", kv
assert np.float32(kv["min"]) == x.min() and np.float32(kv["max"]) == x.max(), kv
assert abs(float(kv["sum"].split(":")[0]) - x.astype(np.float64).sum()) < 1e-9
EOF
	# BGR: channel 2 is red now (its least value 3), the mean applies to it
	onnx-calib -d imgs --limit 1 --scale 1 --bgr --mean 0,0,1000 nchw.onnx >b
	grep -q '^stat	x	.*	min=-997	' b
	# NHWC from the model's shape; grey models get luma
	onnx-calib -d imgs --limit 1 nhwc.onnx >h
	grep -q '^stat	x	dtype=float	shape=1x6x8x3	n=144	' h
	onnx-calib -d imgs --limit 1 grey.onnx >g
	grep -q '^stat	x	dtype=float	shape=1x1x6x8	n=48	' g
	# all three images, JPEG too, resized to a size the model leaves open
	run --separate-stderr onnx-calib -d imgs dyn.onnx
	[ "$status" -eq 1 ]
	[ "$stderr" = "onnx-calib: dyn.onnx: input x: shape ?x3x?x?: the image size is not fixed: give --size WxH" ]
	onnx-calib -d imgs --size 16x12 --resize fit --scale 1 --pad 300 --batch 3 dyn.onnx >d
	grep -q '^stat	x	dtype=float	shape=3x3x12x16	n=1728	.*	max=300	' d
	# a broken image names the file
	printf 'not really' >imgs/bad.png
	run --separate-stderr onnx-calib -d imgs nchw.onnx
	[ "$status" -eq 1 ]
	[ "$stderr" = "onnx-calib: imgs/bad.png: not a PNG or JPEG file" ]
	rm imgs/bad.png
	# a JPEG of another size does not fit a static model without resizing: it is resized
	onnx-calib -d imgs --resize crop nchw.onnx >c
	grep -q '^stat	x	.*	batches=3	' c
	# an image directory after a directory of another layout: both count
	mkdir -p npy/s0
	"$PY" -c 'import numpy as np; np.save("npy/s0/x.npy", np.full((1, 3, 6, 8), 7, np.float32))'
	onnx-calib -d npy -d imgs --resize crop nchw.onnx >two
	grep -q '^stat	x	.*	n=576	.*	max=7	batches=4	' two
	# images for a model with two inputs
	run --separate-stderr onnx-calib -d imgs "$BATS_FILE_TMPDIR/two.onnx"
	[ "$status" -eq 1 ]
	[[ $stderr == "onnx-calib: "*"two.onnx: images feed models with one input, this one has 2" ]]
	# samples of another layout beside images: the images are not samples
	mv npy/s0 imgs/
	onnx-calib -d imgs nchw.onnx >m
	grep -q '^stat	x	.*	n=144	nan=0	inf=0	min=7	max=7	batches=1	' m
}

@test "calib-data: --annotate-model writes the stream into a copy of the model" {
	cd "$BATS_FILE_TMPDIR"
	onnx-calib -d d --annotate-model "$T/a.onnx" -o "$T/s" dyn.onnx
	"$PY" - "$T/a.onnx" "$T/s" dyn.onnx <<'EOF'
import sys, onnx
a, s, orig = onnx.load(sys.argv[1]), open(sys.argv[2]).read(), onnx.load(sys.argv[3])
props = {p.key: p.value for p in a.metadata_props}
assert props["onnxq.stats"] == s
del a.metadata_props[:]
assert a == orig
EOF
	# again over it: the entry is replaced, not added
	onnx-calib -d d --limit 2 --annotate-model "$T/a.onnx" "$T/a.onnx" >"$T/s2"
	"$PY" -c "import onnx,sys; m = onnx.load('$T/a.onnx'); p = [x for x in m.metadata_props if x.key == 'onnxq.stats']; assert len(p) == 1 and p[0].value == open('$T/s2').read()"
}

@test "calib-data: a progress line on a terminal only" {
	cd "$BATS_FILE_TMPDIR"
	run --separate-stderr onnx-calib -d d -o "$T/s" dyn.onnx
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	TERM=xterm script -qec "onnx-calib -d d -o '$T/s' dyn.onnx" /dev/null >"$T/tty"
	grep -q 'onnx-calib: \[####################\] 10/10 samples' "$T/tty"
	TERM=xterm script -qec "onnx-calib --quiet -d d -o '$T/s' dyn.onnx" /dev/null >"$T/tty"
	[ ! -s "$T/tty" ]
}

@test "calib-data: peak memory for 1000 samples within 10% of 10 samples" {
	# AddressSanitizer holds freed memory in quarantine; under valgrind
	# the peak is valgrind's own (shadow memory, translated code)
	[ "${ONNXQ_SANITIZE:-}" != 1 ] || skip "peak memory under ASan says nothing"
	[ "${ONNXQ_VALGRIND:-}" != 1 ] || skip "peak memory under valgrind is valgrind's"
	"$PY" - <<'EOF'
import os, numpy as np, onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh
rng = np.random.default_rng(3)
w = nh.from_array(rng.normal(0, 0.3, (16, 3, 3, 3)).astype(np.float32), "w")
g = h.make_graph([
    h.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
    h.make_node("Relu", ["c"], ["r"], name="relu"),
    h.make_node("GlobalAveragePool", ["r"], ["y"], name="gap")], "t",
    [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 32, 32])],
    [h.make_tensor_value_info("y", T.FLOAT, [1, 16, 1, 1])], [w])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), "conv.onnx")
for i in range(1000):
    os.makedirs(f"m/{i}")
    np.save(f"m/{i}/x.npy", rng.normal(0, 1, (1, 3, 32, 32)).astype(np.float32))
EOF
	# One thread: on a short run under load the second worker may never
	# start, so its memory would show as growth (calibpool.h). The least
	# of three runs each: a run's peak moves by some 5%.
	for i in 1 2 3; do
		/usr/bin/time -f %M -a -o rss10 onnx-calib --threads 1 -d m \
		    --limit 10 conv.onnx >s10
		/usr/bin/time -f %M -a -o rss1000 onnx-calib --threads 1 -d m \
		    conv.onnx >s1000
	done
	grep -q '^stat	x	.*	n=3072000	' s1000
	a=$(sort -n rss10 | head -1) b=$(sort -n rss1000 | head -1)
	echo "# peak RSS: 10 samples $a KiB, 1000 samples $b KiB" >&3
	[ "$b" -le $((a * 110 / 100)) ] || fail "1000 samples: $b KiB, 10 samples: $a KiB"
}

@test "calib-data: every range on a real model agrees with ONNX Runtime" {
	need_models
	"$PY" "$ONNXQ_ROOT/scripts/make-inputs.py" -n 3 --shape x=1x3x48x192 \
	    "$OCR_CLS" in >/dev/null
	onnx-calib -q -d in "$OCR_CLS" >s
	# the same model with every tensor of the stream as an output
	"$PY" - "$OCR_CLS" <<'EOF2'
import sys, onnx
from onnx import helper as h, TensorProto as T
m = onnx.load(sys.argv[1])
names = [l.split("\t")[1] for l in open("s") if l.startswith("stat\t")]
have = {o.name for o in m.graph.output} | {i.name for i in m.graph.input}
for n in names:
    if n not in have:
        m.graph.output.append(h.make_tensor_value_info(n, T.FLOAT, None))
onnx.save(m, "all.onnx")
open("names", "w").write("\n".join(names))
EOF2
	ort_node "$ONNXQ_ROOT/test/ort-run.js" --out ort all.onnx in >/dev/null
	"$PY" - <<'EOF2'
import os, urllib.parse
import numpy as np
ours = {}
for l in open("s"):
    f = l.rstrip("\n").split("\t")
    if f[0] == "stat":
        kv = dict(x.split("=", 1) for x in f[2:])
        ours[urllib.parse.unquote(f[1])] = (float(kv["min"]), float(kv["max"]),
            int(kv["n"]), int(kv["batches"]))
def fname(n):
    return "".join(c if c.isalnum() or c in "._-" else "%%%02X" % ord(c) for c in n)
checked = 0
for n, (lo, hi, cnt, b) in ours.items():
    arrs = []
    for s in sorted(os.listdir("in")):
        p = os.path.join("ort", s, fname(n) + ".npy")
        if not os.path.exists(p):
            p = os.path.join("in", s, fname(n) + ".npy")
        arrs.append(np.load(p))
    v = np.concatenate([a.ravel() for a in arrs])
    tol = 1e-4 * max(1.0, float(v.max() - v.min()))
    assert cnt == v.size and b == 3, (n, cnt, v.size)
    assert abs(lo - v.min()) <= tol and abs(hi - v.max()) <= tol, (n, lo, hi, v.min(), v.max())
    checked += 1
assert checked > 50, checked
print("# checked", checked, "tensors")
EOF2
}
