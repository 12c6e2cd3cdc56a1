#!/usr/bin/env bats
# model.bats: model I/O, external data, the graph index and prep
# (lib/model.c, lib/graph.c, lib/prep.c) through test/tools/onnxq-roundtrip:
# load+save round trips of every ONNX backend test model and the real
# models compared with onnx.load, unknown fields kept byte for byte,
# external data read and refused (absolute, "..", symlinks, hard links,
# bad offsets and lengths), --external-data saves, malformed models (empty,
# truncated, random, nested too deep, directories, missing files), values,
# producers and consumers of small graphs, cycles and duplicate outputs,
# and prep (Constant nodes to initializers, BatchNormalization folding)
# checked for counts and, with ONNX Runtime, for outputs.
# Needs: the built onnxq-roundtrip (test/tools), /usr/bin/python3 with onnx
# and numpy, /usr/share/libonnx-testdata; the real models and
# onnxruntime-node come from scripts/fetch-models (helpers.bash).

load helpers

PY=/usr/bin/python3
FIX=$TESTDATA/models
MKFIX=$FIX/make-fixtures.py
EQUAL=$ONNXQ_ROOT/test/proto-equal.py
COMPARE=$ONNXQ_ROOT/test/ort-compare-models.js
BACKEND=/usr/share/libonnx-testdata/data

setup_file() {
	# External-data cases hold symlinks and hard links: made per run.
	"$PY" "$MKFIX" external "$BATS_FILE_TMPDIR/ext"
}

# The test's stderr is exactly one line, matching the extended regex $1.
one_line_error() {
	[ "$status" -eq 1 ] || fail "exit status $status, want 1"
	[ "${#stderr_lines[@]}" -eq 1 ] ||
	    fail "want one line on stderr, got: $stderr"
	[[ $stderr =~ $1 ]] || fail "stderr '$stderr' does not match '$1'"
}

# ort-compare-models.js's output ($output) says max_rel_diff < $1.
max_rel_below() {
	local got
	got=$(awk '/^max_rel_diff/ { print $2 }' <<<"$output")
	"$PY" -c 'import sys; assert float(sys.argv[1]) < float(sys.argv[2])' \
	    "$got" "$1" || fail "max_rel_diff '$got', want below $1"
}

# probe_bn MODEL SHAPE PATTERN N TOL: MODEL with every BatchNormalization
# output made a graph output, prepared; N outputs named like PATTERN are
# compared with the unprepared model's on x of SHAPE, within TOL.
probe_bn() {
	"$PY" "$MKFIX" probe-bn "$1" probe.onnx
	onnxq-roundtrip --prep probe.onnx probe-prep.onnx 2>/dev/null
	run ort_node "$COMPARE" probe.onnx probe-prep.onnx "x=$2"
	[ "$status" -eq 0 ] || fail "$output"
	[ "$(grep -c "$3" <<<"$output")" -eq "$4" ]
	max_rel_below "$5"
}

@test "round trip: every backend test model parses back equal" {
	local n
	find "$BACKEND"/node "$BACKEND"/pytorch-converted \
	    "$BACKEND"/pytorch-operator "$BACKEND"/real "$BACKEND"/simple \
	    -name model.onnx | sort |
	    awk '{ printf "%s\t%d.onnx\n", $0, NR }' >list
	n=$(wc -l <list)
	[ "$n" -ge 1000 ] || fail "only $n backend test models found"
	run --separate-stderr onnxq-roundtrip --batch list
	[ "$status" -eq 0 ] || fail "$stderr"
	run "$PY" "$EQUAL" list
	[ "$status" -eq 0 ] || fail "$output"
	[ "$output" = "equal $n" ]
	# protobuf-c writes what python's protobuf wrote, byte for byte
	run "$PY" "$EQUAL" --bytes list
	[ "$output" = "equal $n" ]
	echo "# $n backend test models round-tripped" >&3
}

@test "round trip: OCR det/rec/cls and openwakeword models" {
	need_models
	printf '%s\tdet.onnx\n%s\trec.onnx\n%s\tcls.onnx\n%s\thello.onnx\n' \
	    "$OCR_DET" "$OCR_REC" "$OCR_CLS" "$OWW_HELLO" >list
	run --separate-stderr onnxq-roundtrip --batch list
	[ "$status" -eq 0 ] || fail "$stderr"
	run "$PY" "$EQUAL" list
	[ "$output" = "equal 4" ] || fail "$output"
	cmp "$OCR_CLS" cls.onnx
}

@test "round trip: stdin to stdout, and a write error on stdout" {
	onnxq-roundtrip - - <"$FIX/small.onnx" >out.onnx
	cmp "$FIX/small.onnx" out.onnx
	run --separate-stderr sh -c 'onnxq-roundtrip "$1" - >/dev/full' sh \
	    "$FIX/small.onnx"
	one_line_error '^onnxq-roundtrip: (stdout|standard output): No space left on device$'
}

@test "unknown fields survive a round trip byte for byte" {
	local f=$FIX/unknown-field.onnx
	# the fixture does carry them: python drops nothing, the model ends
	# with field 999
	[ "$(tail -c 3 "$f" | od -An -tx1 | tr -d ' ')" = b83e01 ]
	onnxq-roundtrip "$f" out.onnx
	cmp "$f" out.onnx
	onnxq-roundtrip --prep "$f" prepped.onnx 2>/dev/null
	[ "$(tail -c 3 prepped.onnx | od -An -tx1 | tr -d ' ')" = b83e01 ]
}

@test "external data beside the model loads with the right values" {
	local d=$BATS_FILE_TMPDIR/ext
	onnxq-roundtrip "$d/ok/model.onnx" ok.onnx
	onnxq-roundtrip "$d/okdir/model.onnx" okdir.onnx
	"$PY" - <<'EOF'
import numpy as np, onnx
from onnx import numpy_helper as nh
for path in ('ok.onnx', 'okdir.onnx'):
    m = onnx.load(path, load_external_data=False)
    v = {t.name: t for t in m.graph.initializer}
    assert all(t.data_location == 0 and not t.external_data
               for t in v.values()), path
    assert (nh.to_array(v['w1']).ravel() == np.arange(6) * 0.5).all()
    assert (nh.to_array(v['w2']).ravel() == np.arange(1, 7)).all()
    assert (nh.to_array(v['w3']) == 2).all()
EOF
}

@test "external data: unsafe or wrong references are refused" {
	local d=$BATS_FILE_TMPDIR/ext c want
	while IFS='|' read -r c want; do
		run --separate-stderr onnxq-roundtrip "$d/$c/model.onnx" \
		    "$c.onnx"
		one_line_error "^onnxq-roundtrip: $d/$c/model.onnx: initializer w1: external data $want\$"
		[ ! -e "$c.onnx" ] || fail "$c: output written"
	done <<EOF
abs|$d/ok/weights.bin: absolute path not allowed
dotdot|\.\./ok/weights\.bin: '\.\.' in path not allowed
symlink|link\.bin: symlink not allowed
symdir|dir/weights\.bin: symlink not allowed
hardlink|w\.bin: file has 2 hard links
pastend|weights\.bin: offset 100 \+ length 24 past end of file \(88 bytes\)
badlength|weights\.bin: length 20 does not match tensor size 24 bytes
badoffset|weights\.bin: bad offset '-4'
missing|nothere\.bin: No such file or directory
fifo|weights\.bin: not a regular file
isdir|weights\.bin: not a regular file
EOF
	[ -z "$(ls -A | grep -v '^separate-stderr-')" ] ||
	    fail "left behind: $(ls -A)"
}

@test "external data: a model read from stdin has no directory" {
	run --separate-stderr onnxq-roundtrip - out.onnx \
	    <"$BATS_FILE_TMPDIR/ext/ok/model.onnx"
	one_line_error '^onnxq-roundtrip: stdin: initializer w1: external data weights\.bin: not allowed for a model read from stdin$'
}

@test "--external-data: saved apart, loads back to the same tensors" {
	local d=$BATS_FILE_TMPDIR/ext x
	mkdir a b
	onnxq-roundtrip --external-data --external-min 16 "$d/ok/model.onnx" \
	    a/m.onnx
	x=$(ls a | grep -x 'm\.onnx\.[A-Za-z0-9]\{6\}\.data') ||
	    fail "data: $(ls a)"
	# re-saved with external data over itself: a new pair, the old data
	# gone; then inlined elsewhere
	onnxq-roundtrip --external-data --external-min 16 a/m.onnx a/m.onnx
	[ "$(ls a | wc -l)" -eq 2 ] && [ ! -e "a/$x" ] || fail "left: $(ls a)"
	onnxq-roundtrip a/m.onnx b/inline.onnx
	[ "$(ls b)" = inline.onnx ] || fail "b: $(ls b)"
	"$PY" - <<'EOF'
import onnx
m = onnx.load('a/m.onnx', load_external_data=False)
locs = [(t.name, t.data_location, {e.key: e.value for e in t.external_data})
        for t in m.graph.initializer]
import re
assert all(dl == 1 and re.fullmatch(r'm\.onnx\.[A-Za-z0-9]{6}\.data', kv['location']) for _, dl, kv in locs), locs
assert len({kv['location'] for _, _, kv in locs}) == 1, locs
assert [int(kv['offset']) % 64 for _, _, kv in locs] == [0, 0, 0], locs
assert not any(t.raw_data for t in m.graph.initializer)
m = onnx.load('b/inline.onnx', load_external_data=False)
assert not any(t.external_data for t in m.graph.initializer)
EOF
	printf '%s\ta/m.onnx\n%s\tb/inline.onnx\n' "$d/ok/model.onnx" \
	    "$d/ok/model.onnx" >list
	run "$PY" "$EQUAL" --external list
	[ "$output" = "equal 2" ] || fail "$output"
	run --separate-stderr onnxq-roundtrip --external-data \
	    "$FIX/small.onnx" -
	one_line_error '^onnxq-roundtrip: stdout: cannot write external data when writing to standard output$'
}

@test "--external-data: the cls model, then inlined again" {
	need_models
	mkdir x
	onnxq-roundtrip --external-data "$OCR_CLS" x/cls.onnx
	[ "$(stat -c %s x/cls.onnx)" -lt 200000 ]
	[ "$(stat -c %s x/cls.onnx.*.data)" -gt 300000 ]
	onnxq-roundtrip x/cls.onnx back.onnx
	printf '%s\tx/cls.onnx\n%s\tback.onnx\n' "$OCR_CLS" "$OCR_CLS" >list
	run "$PY" "$EQUAL" --external list
	[ "$output" = "equal 2" ] || fail "$output"
}

@test "malformed models: one line naming the file, exit 1, nothing written" {
	local f k n=0 size
	need_models
	: >empty.onnx
	"$PY" -c 'import random, sys
random.seed(5)
sys.stdout.buffer.write(bytes(random.randrange(256) for _ in range(4096)))' \
	    >random.onnx
	mkdir adir
	size=$(stat -c %s "$OCR_CLS")
	for k in 1 2 3 7 50 1000 30000 $((size / 3)) $((size / 2)) \
	    $((size - 1)); do
		head -c "$k" "$OCR_CLS" >"trunc-$k.onnx"
	done
	for f in empty.onnx random.onnx adir missing.onnx trunc-*.onnx; do
		run --separate-stderr onnxq-roundtrip "$f" out.onnx
		one_line_error "^onnxq-roundtrip: $f: "
		[ ! -e out.onnx ]
		n=$((n + 1))
	done
	run --separate-stderr onnxq-roundtrip empty.onnx out.onnx
	one_line_error '^onnxq-roundtrip: empty.onnx: not a valid ONNX model \(no graph\)$'
	run --separate-stderr onnxq-roundtrip random.onnx out.onnx
	one_line_error '^onnxq-roundtrip: random.onnx: not a valid ONNX model \(protobuf parse failed\)$'
	run --separate-stderr onnxq-roundtrip adir out.onnx
	one_line_error '^onnxq-roundtrip: adir: is a directory$'
	run --separate-stderr onnxq-roundtrip missing.onnx out.onnx
	one_line_error '^onnxq-roundtrip: missing.onnx: No such file or directory$'
	run --separate-stderr onnxq-roundtrip - out.onnx </dev/null
	one_line_error '^onnxq-roundtrip: stdin: not a valid ONNX model \(no graph\)$'
	# refused from its size alone (a sparse file: nothing is read)
	truncate -s 5G big.onnx
	run --separate-stderr onnxq-roundtrip big.onnx out.onnx
	one_line_error '^onnxq-roundtrip: big.onnx: larger than 4 GiB$'
	rm big.onnx
	# no temporaries left beside the output
	[ -z "$(ls -A | grep '^\.')" ] || fail "left behind: $(ls -A)"
	echo "# $((n + 2)) malformed models refused" >&3
}

@test "malformed models: nesting that would overflow protobuf-c's stack" {
	# graph.node.attribute.g, 3000 times: 35 KB that crash a plain
	# protobuf-c unpack
	"$PY" - <<'EOF'
def varint(n):
    out = bytearray()
    while True:
        b, n = n & 0x7f, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)
def field(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload
g = b''
for _ in range(3000):
    g = field(1, field(5, field(6, g)))
open('deep.onnx', 'wb').write(field(7, g))
EOF
	run --separate-stderr onnxq-roundtrip deep.onnx out.onnx
	one_line_error '^onnxq-roundtrip: deep.onnx: not a valid ONNX model \(messages nested deeper than 200\)$'
}

@test "graph index: values, producers, consumers, order" {
	run --separate-stderr onnxq-roundtrip --index --topo "$FIX/small.onnx"
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf '%s\n' \
	    'x	input	-	1' 'w_in	initializer	-	1' \
	    'w	initializer	-	1' 'b	initializer	-	1' \
	    'y	node	relu	0' 'mul	node	mul	1' 'c	constant	const	1' \
	    'mm	node	matmul	1' 'add	node	addb	2' 'z	node	addz	0' \
	    const matmul addb mul relu addz)" ]
	# an If reading outer values, one of them two subgraphs down
	run --separate-stderr onnxq-roundtrip --index --topo \
	    "$FIX/subgraph.onnx"
	[ "$output" = "$(printf '%s\n' 'cond	input	-	2' 'x	input	-	2' \
	    'ifout	node	if	1' 'nx	node	pre	1' 'y	node	post	0' \
	    pre if post)" ]
}

@test "graph index: cycles, duplicate and undefined names are errors" {
	local c want
	while IFS='|' read -r c want; do
		run --separate-stderr onnxq-roundtrip --index "$FIX/$c.onnx"
		one_line_error "^onnxq-roundtrip: $FIX/$c.onnx: $want\$"
		[ -z "$output" ]
	done <<'EOF'
cycle|cycle through node node_(a|b|c) \((Add|Relu|Neg)\)
dup-output|node n2 \(Neg\): output a is already produced by node n1 \(Relu\)
shadow-init|node n1 \(Relu\): output w shadows an initializer
shadow-input|node n1 \(Relu\): output x shadows a graph input
undefined-input|node n1 \(Add\): input nope is not produced by any node, input or initializer
EOF
}

@test "graph index: subgraphs nest up to 64 deep" {
	"$PY" "$MKFIX" deep 64 d64.onnx
	"$PY" "$MKFIX" deep 65 d65.onnx
	run --separate-stderr onnxq-roundtrip --index d64.onnx
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "cond	input	-	2" ]
	[ "${lines[1]}" = "x	input	-	1" ]
	run --separate-stderr onnxq-roundtrip --index d65.onnx
	one_line_error '^onnxq-roundtrip: d65.onnx: node top \(If\): subgraphs nested deeper than 64$'
}

@test "prep: every folding case and Constant kind, outputs unchanged" {
	local want
	want=$("$PY" "$MKFIX" expect-prep "$FIX/prep-small.onnx")
	[ "$want" = "constants 5 folded_bn 6" ]
	run --separate-stderr onnxq-roundtrip --prep "$FIX/prep-small.onnx" \
	    p.onnx
	[ "$status" -eq 0 ]
	[ "$stderr" = "prep: $want" ]
	"$PY" - <<'EOF'
import collections, onnx
m = onnx.load('p.onnx')
onnx.checker.check_model(m)
ops = collections.Counter(n.op_type for n in m.graph.node)
# bn4 (its conv output has a second reader) and bn8 (scale computed) stay;
# value_strings and sparse_value Constants stay
assert ops['BatchNormalization'] == 2 and ops['Constant'] == 2, ops
names = {t.name for t in m.graph.initializer}
assert {'cf', 'cfs', 'cis', 'ct'} <= names, names
assert not {'W1', 'B1', 'G1', 'bn1_scale', 'ci'} & names, names
EOF
	# every BatchNormalization output made a graph output: each compared
	probe_bn "$FIX/prep-small.onnx" 1x4x5x5 '^b[0-9]	' 8 1e-5
}

@test "prep: initializers listed as inputs (IR 3: must be; IR 4 on: overridable)" {
	"$PY" - "$FIX/prep-small.onnx" <<'EOF'
import sys, onnx
from onnx import helper
m = onnx.load(sys.argv[1])
have = {i.name for i in m.graph.input}
m.graph.input.extend(helper.make_tensor_value_info(t.name, t.data_type,
                                                   list(t.dims))
                     for t in m.graph.initializer if t.name not in have)
for ir in (3, 7):
    m.ir_version = ir
    onnx.save(m, 'ir%d.onnx' % ir)
EOF
	run --separate-stderr onnxq-roundtrip --prep ir3.onnx ir3-prep.onnx
	[ "$stderr" = "prep: constants 5 folded_bn 6" ]
	# the checker wants every initializer, new ones too, among the inputs
	"$PY" -c 'import onnx; onnx.checker.check_model(onnx.load("ir3-prep.onnx"))'
	run ort_node "$COMPARE" ir3.onnx ir3-prep.onnx x=1x4x5x5
	[ "$status" -eq 0 ] || fail "$output"
	max_rel_below 1e-5
	run --separate-stderr onnxq-roundtrip --prep ir7.onnx ir7-prep.onnx
	[ "$stderr" = "prep: constants 5 folded_bn 0" ]
}

@test "prep: the cls model folds its 35 BatchNormalizations, outputs unchanged" {
	local want
	need_models
	want=$("$PY" "$MKFIX" expect-prep "$OCR_CLS")
	[ "$want" = "constants 250 folded_bn 35" ]
	run --separate-stderr onnxq-roundtrip --prep "$OCR_CLS" cls.onnx
	[ "$status" -eq 0 ]
	[ "$stderr" = "prep: $want" ]
	"$PY" -c 'import onnx; onnx.checker.check_model(onnx.load("cls.onnx"))'
	probe_bn "$OCR_CLS" 1x3x48x192 '^batch_norm' 35 1e-4
}

@test "prep: the rec and det models" {
	need_models
	run --separate-stderr onnxq-roundtrip --prep "$OCR_REC" rec.onnx
	[ "$stderr" = "prep: $("$PY" "$MKFIX" expect-prep "$OCR_REC")" ]
	run --separate-stderr onnxq-roundtrip --prep "$OCR_DET" det.onnx
	[ "$stderr" = "prep: $("$PY" "$MKFIX" expect-prep "$OCR_DET")" ]
	run ort_node "$COMPARE" "$OCR_REC" rec.onnx x=1x3x48x320
	[ "$status" -eq 0 ] || fail "$output"
	max_rel_below 1e-4
}
