#!/usr/bin/env bats
# verify.bats: onnx-verify with one model: the three data directory
# layouts (ONNX test_data_set_N/*.pb, SAMPLE/NAME.npy, SAMPLE.npz stored
# and deflated), the file-name rule for awkward tensor names, the report
# table, TSV and JSON, tolerances and --min-snr (all outputs or NAME=DB),
# top-1 agreement and --labels, --save-outputs, --quiet, and exit
# statuses 0 (within tolerance), 1 (outside) and 2 (trouble) with their
# messages. verify2.bats has the two-model form. Needs: onnx-verify, /usr/bin/python3 with onnx and numpy, and
# the ONNX backend test data for the .pb layout.

load helpers

NODE=/usr/share/libonnx-testdata/data/node

# Models and data made once for the file in $F.
setup_file() {
	F=$BATS_FILE_TMPDIR
	export F
	/usr/bin/python3 - "$F" <<-'EOF'
	import os, sys
	import numpy as np
	import onnx
	from onnx import TensorProto, helper

	F = sys.argv[1]

	def save(name, nodes, inputs, outputs, opset=13):
	    g = helper.make_graph(nodes, name, inputs, outputs)
	    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)])
	    m.ir_version = 7
	    onnx.save(m, os.path.join(F, name + '.onnx'))

	vi = helper.make_tensor_value_info
	# Awkward names: "in/x:0" is stored as in%2Fx%3A0.npy.
	save('names', [helper.make_node('Add', ['in/x:0', 'b'], ['out/y']),
	               helper.make_node('Relu', ['out/y'], ['z'])],
	     [vi('in/x:0', TensorProto.FLOAT, [2, 3]),
	      vi('b', TensorProto.FLOAT, [3])],
	     [vi('out/y', TensorProto.FLOAT, [2, 3]),
	      vi('z', TensorProto.FLOAT, [2, 3])])
	save('unsupported', [helper.make_node('Relu', ['x'], ['t'], name='r1'),
	                     helper.make_node('NoSuchOp', ['t'], ['u'], name='n1'),
	                     helper.make_node('Frobnicate', ['u'], ['y'], name='n2')],
	     [vi('x', TensorProto.FLOAT, [2])], [vi('y', TensorProto.FLOAT, [2])])
	save('future', [helper.make_node('Relu', ['x'], ['y'])],
	     [vi('x', TensorProto.FLOAT, [2])], [vi('y', TensorProto.FLOAT, [2])],
	     opset=99)
	save('static', [helper.make_node('Relu', ['x'], ['y'])],
	     [vi('x', TensorProto.FLOAT, [1, 3, 'h', 4])],
	     [vi('y', TensorProto.FLOAT, [1, 3, 'h', 4])])

	rng = np.random.default_rng(7)

	def sample(i):
	    x = rng.standard_normal((2, 3)).astype(np.float32)
	    b = rng.standard_normal(3).astype(np.float32)
	    y = x + b
	    return {'in/x:0': x, 'b': b, 'out/y': y, 'z': np.maximum(y, 0)}

	def enc(name):
	    safe = b'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-'
	    return ''.join(chr(c) if c in safe else '%%%02X' % c
	                   for c in name.encode())

	for s in ('s1', 's2', 's10'):
	    d = os.path.join(F, 'npy', s)
	    os.makedirs(d)
	    for k, v in sample(s).items():
	        np.save(os.path.join(d, enc(k) + '.npy'), v)
	os.makedirs(os.path.join(F, 'npz'))
	t = sample(0)
	np.savez(os.path.join(F, 'npz', 'a.npz'), **t)
	np.savez_compressed(os.path.join(F, 'npz', 'b.npz'),
	                    **{enc(k): v for k, v in sample(1).items()})
	EOF
}

setup() {
	onnxq_setup
	cp -r "$F/npy" "$T/npy"
}

@test "verify: ONNX test data layout, exact outputs" {
	[ -d "$NODE" ] || skip "no ONNX backend test data"
	run --separate-stderr onnx-verify -d "$NODE/test_relu" "$NODE/test_relu/model.onnx"
	[ "$status" -eq 0 ] || fail "exit $status: $stderr"
	[ -z "$stderr" ]
	[ "${lines[0]}" = "output  samples  max_abs_err   snr_db  status" ]
	[ "${lines[1]}" = "y             1            0      inf  ok" ]
	[ "${#lines[@]}" -eq 2 ]
	# A test_data_set_N directory given directly is one sample.
	run onnx-verify -q -d "$NODE/test_relu/test_data_set_0" "$NODE/test_relu/model.onnx"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "verify: npy layout with percent-encoded names, and npz members" {
	run --separate-stderr onnx-verify -d npy -d "$F/npz" "$F/names.onnx"
	[ "$status" -eq 0 ] || fail "exit $status: $stderr"
	[ "${lines[0]}" = "output  samples  max_abs_err   snr_db  status" ]
	[ "${lines[1]}" = "out/y         5            0      inf  ok" ]
	[ "${lines[2]}" = "z             5            0      inf  ok" ]
}

@test "verify: outside tolerance exits 1 and says how many elements" {
	/usr/bin/python3 -c '
import numpy as np, sys
p = "npy/s2/z.npy"; a = np.load(p); a[1, 2] += 0.5; a[0, 0] += 1e-5 * abs(a[0, 0]); np.save(p, a)'
	run --separate-stderr onnx-verify -d npy "$F/names.onnx"
	[ "$status" -eq 1 ]
	[ "${lines[1]}" = "out/y         3            0      inf  ok" ]
	[[ ${lines[2]} =~ ^z\ +3\ +0\.5\ +[0-9.]+\ +fail$ ]] || fail "got: ${lines[2]}"
	[ "$stderr" = "onnx-verify: output z: 1 of 18 elements outside tolerance (rtol 0.001, atol 1e-07)" ]
	# Looser tolerances accept it.
	run onnx-verify -q --atol 0.6 -d npy "$F/names.onnx"
	[ "$status" -eq 0 ]
	run onnx-verify -q --rtol 1000 -d npy "$F/names.onnx"
	[ "$status" -eq 0 ]
	run --separate-stderr onnx-verify --quiet -d npy "$F/names.onnx"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ -z "$stderr" ]
}

@test "verify: --min-snr fails an output below it" {
	/usr/bin/python3 -c '
import numpy as np
p = "npy/s1/z.npy"; a = np.load(p); a += np.float32(1e-6) * a; np.save(p, a)'
	run --separate-stderr onnx-verify --min-snr 100 -d npy "$F/names.onnx"
	[ "$status" -eq 0 ] || fail "exit $status: $output $stderr"
	[[ ${lines[2]} =~ ^z\ .*\ ok$ ]]
	snr=$(awk '$1 == "z" { print $4 }' <<<"$output")
	run --separate-stderr onnx-verify --min-snr 200 -d npy "$F/names.onnx"
	[ "$status" -eq 1 ]
	[[ ${lines[2]} =~ ^z\ .*\ low-snr$ ]] || fail "got: ${lines[2]}"
	[ "$stderr" = "onnx-verify: output z: snr $snr db is below 200 db" ]
}

@test "verify: shape and type differences are mismatches (exit 1)" {
	/usr/bin/python3 -c '
import numpy as np
np.save("npy/s1/z.npy", np.load("npy/s1/z.npy")[:1])
np.save("npy/s2/out%2Fy.npy", np.load("npy/s2/out%2Fy.npy").astype(np.float64))'
	run --separate-stderr onnx-verify -d npy "$F/names.onnx"
	[ "$status" -eq 1 ]
	[[ ${lines[1]} =~ ^out/y\ .*\ mismatch$ ]]
	[[ ${lines[2]} =~ ^z\ .*\ mismatch$ ]]
	[[ $stderr == *"npy/s1: output z: shape 2x3 where 1x3 was expected"* ]] || fail "$stderr"
	[[ $stderr == *"npy/s2: output out/y: type float where double was expected"* ]] || fail "$stderr"
}

@test "verify: --save-outputs writes the npy layout numpy reads back" {
	run --separate-stderr onnx-verify -d npy -d "$F/npz" --save-outputs out "$F/names.onnx"
	[ "$status" -eq 0 ] || fail "$stderr"
	[ "$(cd out && find . -type f | sort | tr '\n' ' ')" = "./a/out%2Fy.npy ./a/z.npy ./b/out%2Fy.npy ./b/z.npy ./s1/out%2Fy.npy ./s1/z.npy ./s10/out%2Fy.npy ./s10/z.npy ./s2/out%2Fy.npy ./s2/z.npy " ]
	/usr/bin/python3 -c '
import numpy as np
for s in ("s1", "s2", "s10"):
    for f in ("out%2Fy.npy", "z.npy"):
        a, b = np.load("out/%s/%s" % (s, f)), np.load("npy/%s/%s" % (s, f))
        assert a.dtype == b.dtype and a.shape == b.shape and (a == b).all(), (s, f)'
	# The saved outputs serve as expected values.
	cp npy/s1/in%2Fx%3A0.npy npy/s1/b.npy out/s1/
	run onnx-verify -q -d out/s1 "$F/names.onnx"
	[ "$status" -eq 0 ]
	# Two samples of one name would overwrite each other: refused.
	run --separate-stderr onnx-verify -d npy -d npy --save-outputs out2 "$F/names.onnx"
	[ "$status" -eq 2 ]
	[[ $stderr == "onnx-verify: npy/s1 and npy/s1: same sample name, outputs would collide" ]] || fail "$stderr"
}

@test "verify: --save-outputs on samples without expected outputs makes them" {
	mkdir -p in/s1 in/s2
	for s in s1 s2; do
		cp npy/$s/in%2Fx%3A0.npy npy/$s/b.npy in/$s/
	done
	run --separate-stderr onnx-verify -d in --save-outputs out "$F/names.onnx"
	[ "$status" -eq 0 ] || fail "exit $status: $stderr"
	[ -z "$output" ] || fail "report: $output"
	[ "$stderr" = "onnx-verify: 2 of 2 samples without expected outputs: their outputs saved in out, not compared" ] ||
	    fail "$stderr"
	cmp out/s2/z.npy npy/s2/z.npy || fail "not the outputs"
	# They serve as expected values; with some samples that have theirs,
	# the report covers those.
	cp out/s1/* in/s1/
	run --separate-stderr onnx-verify -d in --save-outputs out2 "$F/names.onnx"
	[ "$status" -eq 0 ] || fail "exit $status: $stderr"
	[[ ${lines[1]} =~ ^out/y\ +1\ .*\ ok$ ]] || fail "$output"
	[ "$stderr" = "onnx-verify: 1 of 2 samples without expected outputs: their outputs saved in out2, not compared" ] ||
	    fail "$stderr"
	# Without --save-outputs, or with some outputs only: trouble.
	run --separate-stderr onnx-verify -d in "$F/names.onnx"
	[ "$status" -eq 2 ] && [ "$stderr" = "onnx-verify: in/s2: no expected value for output out/y" ] ||
	    fail "exit $status: $stderr"
	rm in/s1/z.npy
	run --separate-stderr onnx-verify -d in --save-outputs out3 "$F/names.onnx"
	[ "$status" -eq 2 ] && [ "$stderr" = "onnx-verify: in/s1: no expected value for output z" ] ||
	    fail "exit $status: $stderr"
}

@test "verify: bad data files are trouble (exit 2), naming the file" {
	/usr/bin/python3 -c '
import numpy as np
np.save("npy/s2/b.npy", np.load("npy/s2/b.npy").astype("<f8"))'
	run --separate-stderr onnx-verify -d npy "$F/names.onnx"
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[ "$stderr" = "onnx-verify: npy/s2/b.npy: dtype <f8 where the model wants float" ]
	rm npy/s2/b.npy
	run --separate-stderr onnx-verify -d npy "$F/names.onnx"
	[ "$status" -eq 2 ]
	[ "$stderr" = "onnx-verify: npy/s2/b.npy: missing (model input b); found in%2Fx%3A0.npy" ]
	rm npy/s10/z.npy
	run --separate-stderr onnx-verify -d npy/s10 "$F/names.onnx"
	[ "$status" -eq 2 ]
	[ "$stderr" = "onnx-verify: npy/s10: no expected value for output z" ]
	printf 'garbage' >npy/s1/b.npy
	run --separate-stderr onnx-verify -d npy/s1 "$F/names.onnx"
	[ "$status" -eq 2 ]
	[ "$stderr" = "onnx-verify: npy/s1/b.npy: not an npy file" ]
	mkdir empty
	run --separate-stderr onnx-verify -d empty "$F/names.onnx"
	[ "$status" -eq 2 ]
	[[ $stderr == "onnx-verify: empty: no samples"* ]]
}

@test "verify: input shapes are checked against the model" {
	mkdir -p d/s0
	/usr/bin/python3 -c '
import numpy as np
x = np.zeros((1, 3, 5, 4), np.float32)
np.save("d/s0/x.npy", x); np.save("d/s0/y.npy", x)'
	run onnx-verify -q -d d "$F/static.onnx"
	[ "$status" -eq 0 ]
	/usr/bin/python3 -c '
import numpy as np
np.save("d/s0/x.npy", np.zeros((1, 3, 5, 5), np.float32))'
	run --separate-stderr onnx-verify -d d "$F/static.onnx"
	[ "$status" -eq 2 ]
	[ "$stderr" = "onnx-verify: d/s0: input x: shape 1x3x5x5 does not match the model's 1x3x?x4" ]
}

@test "verify: unsupported operators and opsets are trouble, all listed" {
	mkdir -p d/s0
	run --separate-stderr onnx-verify -d d "$F/unsupported.onnx"
	[ "$status" -eq 2 ]
	[ "$stderr" = "onnx-verify: $F/unsupported.onnx: unsupported operators: node n1 (NoSuchOp), node n2 (Frobnicate)" ]
	run --separate-stderr onnx-verify -d d "$F/future.onnx"
	[ "$status" -eq 2 ]
	[[ $stderr == "onnx-verify: $F/future.onnx: opset 99 of the default domain is not supported ("*" to 21 are)" ]] || fail "$stderr"
	run --separate-stderr onnx-verify -d d nonexistent.onnx
	[ "$status" -eq 2 ]
	[[ $stderr == "onnx-verify: nonexistent.onnx: "* ]]
}

@test "verify: usage mistakes exit 2 with the usage" {
	run --separate-stderr onnx-verify "$F/names.onnx"
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "onnx-verify: no data directory given (-d DIR)" ]
	[[ ${stderr_lines[1]} == "usage: onnx-verify "* ]]
	run --separate-stderr onnx-verify -d npy
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "onnx-verify: no model given" ]
	run --separate-stderr onnx-verify -d npy --rtol x "$F/names.onnx"
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "onnx-verify: --rtol: 'x' is not a number from 0 to inf" ]
	run --separate-stderr onnx-verify -d npy --threads 0 "$F/names.onnx"
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "onnx-verify: --threads: '0' is not a whole number from 1 to 256" ]
	run --separate-stderr onnx-verify -d npy --min-snr abc "$F/names.onnx"
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "onnx-verify: --min-snr: 'abc' is not a number from -inf to inf" ]
	run --separate-stderr onnx-verify -d npy a b c
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "onnx-verify: too many arguments" ]
	run --separate-stderr onnx-verify -d npy --per-tensor "$F/names.onnx"
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "onnx-verify: --per-tensor: needs MODEL and QMODEL" ]
	run --separate-stderr onnx-verify -d npy --labels l.txt --min-snr 3 --format tsv --bogus "$F/names.onnx"
	[ "$status" -eq 2 ]
	[[ ${stderr_lines[1]} == "usage: onnx-verify "* ]]
}

@test "verify: a late write error on stdout is trouble" {
	[ -w /dev/full ] || skip "no /dev/full"
	run sh -c "onnx-verify -d npy '$F/names.onnx' >/dev/full"
	[ "$status" -eq 2 ]
	[[ $output == *"onnx-verify: <stdout>: write error: No space left on device"* ]] || fail "$output"
}

@test "verify: --min-snr NAME=DB gates one output only" {
	/usr/bin/python3 -c '
import numpy as np
p = "npy/s1/z.npy"; a = np.load(p); a += np.float32(1e-6) * a; np.save(p, a)'
	run onnx-verify -q --min-snr z=100 -d npy "$F/names.onnx"
	[ "$status" -eq 0 ]
	run --separate-stderr onnx-verify --min-snr out/y=200 --min-snr z=200 -d npy "$F/names.onnx"
	[ "$status" -eq 1 ]
	[[ ${lines[1]} =~ ^out/y\ .*\ ok$ ]] || fail "${lines[1]}"
	[[ ${lines[2]} =~ ^z\ .*\ low-snr$ ]] || fail "${lines[2]}"
	run --separate-stderr onnx-verify --min-snr y=200 -d npy "$F/names.onnx"
	[ "$status" -eq 2 ]
	[ "$stderr" = "onnx-verify: --min-snr: no output y" ]
}

@test "verify: TSV and JSON reports with one model" {
	/usr/bin/python3 -c '
import numpy as np
p = "npy/s2/z.npy"; a = np.load(p); a[1, 2] += 0.5; np.save(p, a)'
	run --separate-stderr onnx-verify --format tsv -d npy "$F/names.onnx"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 3 ]
	[[ ${lines[0]} == "kind	name	samples	snr_db	worst_snr_db	worst_sample	"* ]] || fail "${lines[0]}"
	[ "$(cut -f1-5,13,14 <<<"${lines[1]}")" = "output	out/y	3	inf	inf	0	ok" ]
	[ "$(cut -f1-3,6,8,13,14 <<<"${lines[2]}")" = "output	z	3	npy/s2	0.5	1	fail" ]
	run --separate-stderr onnx-verify --format json -d npy "$F/names.onnx"
	[ "$status" -eq 1 ]
	printf '%s\n' "$output" >r.json
	/usr/bin/python3 - <<-'EOF'
	import json, math
	import numpy as np
	r = json.load(open("r.json"))
	assert r["qmodel"] is None and r["status"] == "different" and r["samples"] == 3
	y, z = r["outputs"]
	assert y["name"] == "out/y" and y["snr_db"] == math.inf and y["status"] == "ok"
	assert z["status"] == "fail" and z["outside_tol"] == 1 and z["max_abs"] == 0.5
	# The SNR of z over the three samples, as numpy has it.
	sig = noise = 0.0
	for s in ("s1", "s2", "s10"):
	    d = {k: np.load("npy/%s/%s.npy" % (s, k)).astype(np.float64)
	         for k in ("in%2Fx%3A0", "b", "z")}
	    want = np.maximum(d["in%2Fx%3A0"].astype(np.float32) + d["b"].astype(np.float32), 0)
	    sig += (d["z"] ** 2).sum()
	    noise += ((want - d["z"]) ** 2).sum()
	assert math.isclose(z["snr_db"], 10 * math.log10(sig / noise), rel_tol=1e-9), z
	assert z["worst_sample"] == "npy/s2", z
	# Top-1 along the last axis, rows of expected against rows of output.
	rows = agree = 0
	for s in ("s1", "s2", "s10"):
	    x = np.load("npy/%s/in%%2Fx%%3A0.npy" % s) + np.load("npy/%s/b.npy" % s)
	    ref = np.load("npy/%s/z.npy" % s)
	    agree += (np.maximum(x, 0).argmax(axis=1) == ref.argmax(axis=1)).sum()
	    rows += 2
	assert z["top1_agreement_pct"] == 100.0 * agree / rows, z
	EOF
}

@test "verify: top-1 and --labels with one model" {
	# z has rows of 3 classes: two rows a sample, so two labels a line.
	/usr/bin/python3 - <<-'EOF'
	import numpy as np
	with open("labels.txt", "w") as f:
	    for s in ("s1", "s2", "s10"):
	        z = np.load("npy/%s/z.npy" % s)
	        f.write("%d %d\n" % (z[0].argmax(), (z[1].argmax() + 1) % 3))
	EOF
	run --separate-stderr onnx-verify --labels labels.txt -d npy "$F/names.onnx"
	[ "$status" -eq 0 ] || fail "$stderr"
	[ "${lines[0]}" = "output  samples  max_abs_err   snr_db  top1_%  acc_%  ref_acc_%  status" ]
	[[ ${lines[2]} =~ ^z\ +3\ +0\ +inf\ +100\.00\ +50\.00\ +50\.00\ +ok$ ]] || fail "${lines[2]}"
	run onnx-verify -q --min-agreement 100 -d npy "$F/names.onnx"
	[ "$status" -eq 0 ]
	printf '1\n2\n0\n' >one.txt
	run --separate-stderr onnx-verify --labels one.txt -d npy "$F/static.onnx"
	[ "$status" -eq 2 ]
}

@test "verify: no progress bar on a terminal with --quiet, a bar without" {
	command -v script >/dev/null || skip "no script(1)"
	run script -qec "onnx-verify -d npy '$F/names.onnx' >/dev/null" out.txt
	[ "$status" -eq 0 ]
	[[ $(cat out.txt) == *"onnx-verify: [####################] 3/3 samples"* ]] || fail "$(cat -v out.txt)"
	run script -qec "onnx-verify -q -d npy '$F/names.onnx'" out.txt
	[ "$status" -eq 0 ]
	! grep -q "onnx-verify: " out.txt || fail "$(cat -v out.txt)"
}
