#!/usr/bin/env bats
# verify.bats: onnx-verify with one model: the three data directory
# layouts (ONNX test_data_set_N/*.pb, SAMPLE/NAME.npy, SAMPLE.npz stored
# and deflated), the file-name rule for awkward tensor names, the report
# table, tolerances and --min-snr, --save-outputs, --quiet, and exit
# statuses 0 (within tolerance), 1 (outside) and 2 (trouble) with their
# messages. Needs: onnx-verify, /usr/bin/python3 with onnx and numpy, and
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
	save('old', [helper.make_node('Relu', ['x'], ['y'])],
	     [vi('x', TensorProto.FLOAT, [2])], [vi('y', TensorProto.FLOAT, [2])],
	     opset=6)
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
	[ "$stderr" = "onnx-verify: npy/s2/b.npy: missing (model input b)" ]
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
	run --separate-stderr onnx-verify -d d "$F/old.onnx"
	[ "$status" -eq 2 ]
	[ "$stderr" = "onnx-verify: $F/old.onnx: opset 6 of the default domain is not supported (7 to 21 are)" ]
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
	[ "$stderr" = "onnx-verify: --rtol: not a non-negative number: x" ]
	run --separate-stderr onnx-verify -d npy --threads 0 "$F/names.onnx"
	[ "$status" -eq 2 ]
	run --separate-stderr onnx-verify -d npy --min-snr abc "$F/names.onnx"
	[ "$status" -eq 2 ]
	run --separate-stderr onnx-verify -d npy a b c
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "onnx-verify: too many arguments" ]
	run --separate-stderr onnx-verify -d npy "$F/names.onnx" "$F/names.onnx"
	[ "$status" -eq 2 ]
	[ "$stderr" = "onnx-verify: comparing two models is not implemented yet" ]
}

@test "verify: a late write error on stdout is trouble" {
	[ -w /dev/full ] || skip "no /dev/full"
	run sh -c "onnx-verify -d npy '$F/names.onnx' >/dev/full"
	[ "$status" -eq 2 ]
	[[ $output == *"onnx-verify: stdout: write error"* ]]
}
