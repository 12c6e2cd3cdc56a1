#!/usr/bin/env bats
# malformed.bats: every parser of untrusted input fed the malformed-input
# corpus of test/data/malformed (made by make-corpus.py there; symlinks,
# hard links, FIFOs and huge files are made here): models (protobuf,
# graph, tensors that lie about their size, external data escaping its
# directory, shapes that disagree at run time, operators whose attributes
# or inputs are out of range), streams, YAML recipes, .npy/.npz/.pb
# samples and images. Each case must fail with exit status
# 1 (2 for onnx-verify, which exits as cmp(1)) and exactly the one-line
# message given, and must not write a complete stream or model.
# Needs: the programs only (the corpus is committed).
load helpers

M=$TESTDATA/malformed

# fails STATUS MESSAGE CMD...: CMD exits with STATUS, its stderr is the
# one line MESSAGE (or the lines of it), and whatever it wrote on stdout
# before it failed is no complete stream (no end record). A case that
# does otherwise is noted; cases_ok, at the end of each test, fails the
# test with every such case.
errors=
ncases=0
nbad=0
fails() {
	local want=$1 msg=$2

	shift 2
	ncases=$((ncases + 1))
	run --separate-stderr "$@"
	if [ "$status" -ne "$want" ] || [ "$stderr" != "$msg" ] ||
	    [[ $'\n'$output == *$'\nend\t'* ]]; then
		nbad=$((nbad + 1))
		errors+=$(printf '\ncommand: %s\nwant status %s and:\n%s\ngot status %s and:\n%s\nstdout: %s\n' \
		    "$*" "$want" "$msg" "$status" "$stderr" "${output:0:200}")
	fi
	return 0
}

cases_ok() {
	[ -z "$errors" ] || fail "$nbad of $ncases cases failed:$errors"
}

# model CASE MESSAGE: onnx-calib --weights-only reads model CASE.
model() {
	fails 1 "onnx-calib: $M/model/$1.onnx: $2" \
	    onnx-calib --weights-only "$M/model/$1.onnx"
}

# runs CASE MESSAGE: onnx-calib runs model CASE on one good sample (x, a
# 1x4 float), the model's shapes meet what flows at run time.
runs() {
	rm -rf d
	mkdir -p d/s0 && cp "$M/npy/ok-x.npy" d/s0/x.npy
	fails 1 "onnx-calib: $2" onnx-calib -d d "$M/model/$1.onnx"
}

# verifies CASE MESSAGE: onnx-verify on model CASE (trouble: status 2).
verifies() {
	rm -rf d
	mkdir -p d/s0 && cp "$M/npy/ok-x.npy" d/s0/x.npy
	fails 2 "onnx-verify: $2" onnx-verify -d d "$M/model/$1.onnx"
}

# stream CASE MESSAGE: onnx-qparams reads stream CASE on stdin.
stream() {
	fails 1 "onnx-qparams: <stdin>:$2" \
	    onnx-qparams <"$M/stream/$1.stream"
}

# merge CASE MESSAGE: onnx-calib --merge of a good shard and CASE.
merge() {
	printf '#onnxq\t1.0\nend\t0\n' >good.stream
	fails 1 "onnx-calib: $M/stream/$1.stream:$2" \
	    onnx-calib --merge good.stream "$M/stream/$1.stream"
}

# qdq RECORDS N MESSAGE: onnx-qdq-insert on model ok-vec with a stream of
# the records (N of them).
qdq() {
	printf '#onnxq\t1.0\n%s\nend\t%d\n' "$1" "$2" >q.stream
	fails 1 "onnx-qdq-insert: q.stream:$3" \
	    onnx-qdq-insert "$M/model/ok-vec.onnx" q.stream
}

# config CASE MESSAGE: onnx-qparams -c CASE.yaml on a good stream.
config() {
	fails 1 "onnx-qparams: $M/config/$1.yaml:$2" \
	    onnx-qparams -c "$M/config/$1.yaml" "$M/config/ok.stream"
}

# npy CASE MESSAGE, npz CASE MESSAGE, pb CASE MESSAGE: the sample of
# model ok-vec's input x in each of the data layouts.
npy() {
	rm -rf d
	mkdir -p d/s0 && cp "$M/npy/$1.npy" d/s0/x.npy
	fails 1 "onnx-calib: d/s0/x.npy: $2" \
	    onnx-calib -d d "$M/model/ok-vec.onnx"
}

npz() {
	rm -rf d
	mkdir -p d && cp "$M/npy/$1.npz" d/s0.npz
	fails 1 "onnx-calib: d/s0.npz: $2" \
	    onnx-calib -d d "$M/model/ok-vec.onnx"
}

pb() {
	rm -rf d
	mkdir -p d/test_data_set_0 &&
	    cp "$M/pb/$1.pb" d/test_data_set_0/input_0.pb
	fails 1 "onnx-calib: d/test_data_set_0/input_0.pb: $2" \
	    onnx-calib -d d "$M/model/ok-vec.onnx"
}

# image FILE MESSAGE: an image directory for model ok-image (1x3x8x8).
image() {
	rm -rf d
	mkdir -p d && cp "$M/image/$1" d/
	fails 1 "onnx-calib: d/$1: $2" onnx-calib -d d "$M/model/ok-image.onnx"
}

@test "the good inputs of the corpus are good" {
	mkdir -p d/s0 && cp "$M/npy/ok-x.npy" d/s0/x.npy
	run --separate-stderr onnx-calib -d d "$M/model/ok-vec.onnx"
	[ "$status" -eq 0 ] && [ -z "$stderr" ]
	printf '%s\n' "$output" | grep -q '^end	'
	run --separate-stderr onnx-calib -d d "$M/model/ok-relu.onnx"
	[ "$status" -eq 0 ] && [ -z "$stderr" ]
	run --separate-stderr onnx-qparams "$M/config/ok.stream"
	[ "$status" -eq 0 ] && [ -z "$stderr" ]
	rm -r d && mkdir -p d/test_data_set_0
	cp "$M/pb/ok-x.pb" d/test_data_set_0/input_0.pb
	run --separate-stderr onnx-calib -d d "$M/model/ok-vec.onnx"
	[ "$status" -eq 0 ] && [ -z "$stderr" ]
	# an arithmetic-coded JPEG that ends where it should
	rm -r d && mkdir d && cp "$M/image/arith-ok.jpg" d/
	run --separate-stderr onnx-calib -d d "$M/model/ok-image.onnx"
	[ "$status" -eq 0 ] && [ -z "$stderr" ]
	printf '%s\n' "$output" | grep -q '^stat	x	.*	n=192	'
}

@test "NaN and infinities in weights and data are counted, with a warning" {
	mkdir -p d/s0 && cp "$M/npy/nonfinite.npy" d/s0/x.npy
	run --separate-stderr onnx-calib -d d "$M/model/ok-vec.onnx"
	[ "$status" -eq 0 ]
	[ "$stderr" = "onnx-calib: warning: tensor x: 1 NaN and 2 infinite values, left out of its statistics
onnx-calib: warning: tensor mm: 3 NaN and 0 infinite values, left out of its statistics
onnx-calib: warning: tensor y: 3 NaN and 0 infinite values, left out of its statistics" ]
	printf '%s\n' "$output" | grep -q '^stat	x	.*	n=1	nan=1	inf=2	min=1	max=1	'
	# nor in its histogram, nor in the range its parameters are made of
	printf '%s\n' "$output" | grep -q '^hist	x	mbits=7	zero=0	bins=1:1$'
	printf '%s\n' "$output" >n.stream
	onnx-qparams --include-ops MatMul n.stream |
	    grep -q '^qparam	x	role=act	type=uint8	scale=0.003921569	zp=0	'
	cp "$M/npy/ok-x.npy" d/s0/x.npy
	run --separate-stderr onnx-calib -d d "$M/model/init-nonfinite.onnx"
	[ "$status" -eq 0 ]
	[ "$stderr" = "onnx-calib: warning: tensor a: 1 NaN and 2 infinite values, left out of its statistics
onnx-calib: warning: tensor y: 1 NaN and 1 infinite values, left out of its statistics" ]
	printf '%s\n' "$output" | grep -q '^weight	w	.*	min=-inf	max=inf$'
	# a weight that is not finite cannot be quantized (Add is not quantized
	# by default); a, positive only, reaches the output through a float op
	printf '%s\n' "$output" >s.stream
	fails 1 'onnx-qparams: warning: tensor a: reaches a model output, quantized over [0, 2] where calibration saw no negative value: negative ones will read 0; calibrate with samples of both signs, or leave it in float (--float-outputs)
onnx-qparams: weight w: range [-inf, inf] is not finite' \
	    onnx-qparams --include-ops Add s.stream
	cases_ok
}

@test "names with a newline or an escape sequence stay on one line" {
	mkdir -p d/s0 && cp "$M/npy/ok-x.npy" d/s0/x.npy
	run --separate-stderr onnx-calib -d d "$M/model/names-control.onnx"
	[ "$status" -eq 0 ]
	[ "$stderr" = "onnx-calib: warning: tensor a?b: 1 NaN and 1 infinite values, left out of its statistics
onnx-calib: warning: tensor y: 1 NaN and 1 infinite values, left out of its statistics" ]
	# in the stream the names are escaped
	printf '%s\n' "$output" | grep -q '^node	add%0Anode	op=Add	in=x,w%1B\[31m	out=a%0Ab$'
	printf '%s\n' "$output" >s.stream
	fails 1 'onnx-qparams: warning: tensor a?b: reaches a model output, quantized over [0, 6] where calibration saw no negative value: negative ones will read 0; calibrate with samples of both signs, or leave it in float (--float-outputs)
onnx-qparams: weight w?[31m: range [1, inf] is not finite' \
	    onnx-qparams --include-ops Add s.stream
	cases_ok
}

@test "the corpus has at least 100 cases" {
	n=$(grep -c '^	# case: ' "$BATS_TEST_FILENAME")
	[ "$n" -ge 100 ] || fail "only $n cases"
}

@test "models: the protobuf" {
	# case: model: empty file
	model empty 'not a valid ONNX model (no graph)'
	# case: model: truncated
	model truncated 'not a valid ONNX model (protobuf parse failed)'
	# case: model: random bytes
	model garbage 'not a valid ONNX model (protobuf parse failed)'
	# case: model: text
	model text 'not a valid ONNX model (protobuf parse failed)'
	# case: model: length past the end
	model bad-length 'not a valid ONNX model (protobuf parse failed)'
	# case: model: wire type group
	model wire-group 'not a valid ONNX model (protobuf parse failed)'
	# case: model: messages nested 900 deep
	model deep-wire 'not a valid ONNX model (messages nested deeper than 200)'
	# case: model: no graph
	model no-graph 'not a valid ONNX model (no graph)'
	# case: model: a directory
	mkdir m.onnx
	fails 1 'onnx-calib: m.onnx: is a directory' onnx-calib --weights-only m.onnx
	# case: model: missing
	fails 1 'onnx-calib: none.onnx: No such file or directory' onnx-calib --weights-only none.onnx
	# case: model: over 4 GiB (sparse)
	truncate -s 5G big.onnx &&
	    fails 1 'onnx-calib: big.onnx: larger than 4 GiB' onnx-calib --weights-only big.onnx
	cases_ok
}

@test "models: the graph" {
	# case: model: cycle
	model cycle 'cycle through node r1 (Relu)'
	# case: model: node reading its own output
	model self-loop 'cycle through node loop (Add)'
	# case: model: two producers of one value
	model dup-producer 'node r2 (Neg): output y is already produced by node r1 (Relu)'
	# case: model: duplicate initializer
	model dup-initializer 'initializer w is defined twice'
	# case: model: duplicate graph input
	model dup-input 'graph input x is listed twice'
	# case: model: undefined input
	model undefined-input 'node add (Add): input nowhere is not produced by any node, input or initializer'
	# case: model: output nobody produces
	model output-not-produced 'graph output ghost is not produced by any node, input or initializer'
	# case: model: subgraphs 65 deep
	model deep-subgraph 'node if64 (If): subgraphs nested deeper than 64'
	# case: model: node without op_type
	runs no-op-type "$M/model/no-op-type.onnx: unsupported operators: node relu ()"
	# case: model: unknown operator
	runs unknown-op "$M/model/unknown-op.onnx: unsupported operators: node relu (NoSuchOp)"
	# case: model: unknown domain
	runs unknown-domain "$M/model/unknown-domain.onnx: unsupported operators: node relu (Relu in com.example)"
	# case: model: names with newlines
	runs op-newline "$M/model/op-newline.onnx: unsupported operators: node relu?node (No?SuchOp)"
	# case: model: opset 99
	runs opset-99 "$M/model/opset-99.onnx: opset 99 of the default domain is not supported (1 to 21 are)"
	# case: model: Constant without a value
	runs constant-empty 'd/s0: node k (Constant): no value attribute'
	# case: model: string input
	runs input-string 'd/s0/x.npy: dtype <f4 where the model wants string'
	cases_ok
}

@test "models: tensors that lie about their size" {
	# case: model: 10^12 elements, 16 bytes of data
	model init-huge 'initializer w: raw data has 16 bytes, 1000000000000 elements of float need 4000000000000'
	# case: model: 2^33 elements, no data
	model init-huge-nodata 'initializer w: raw data has 0 bytes, 8589934592 elements of float need 34359738368'
	# case: model: element count overflows
	model init-overflow 'initializer w: element count overflows'
	# case: model: negative dimension
	model init-negative-dim 'initializer w: negative dimension -3'
	# case: model: rank 13
	model init-rank13 'initializer w: rank 13 is more than 12'
	# case: model: raw data short
	model init-raw-short 'initializer w: raw data has 15 bytes, 4 elements of float need 16'
	# case: model: raw data long
	model init-raw-long 'initializer w: raw data has 17 bytes, 4 elements of float need 16'
	# case: model: float_data short
	model init-float-data-short 'initializer w: float_data has 3 values, shape needs 4'
	# case: model: no data type
	runs init-no-dtype "$M/model/init-no-dtype.onnx: initializer w: no data type"
	# case: model: data type 99
	runs init-dtype-99 "$M/model/init-dtype-99.onnx: initializer w: unsupported data type 99"
	# case: model: string initializer
	runs init-string "$M/model/init-string.onnx: initializer w: string tensors are not supported"
	# case: model: segmented tensor
	model init-segment 'initializer w: segmented tensors are not supported'
	# case: model: initializer name with a newline
	model name-newline 'initializer w?evil: raw data has 3 bytes, 4 elements of float need 16'
	cases_ok
}

@test "models: external data" {
	# case: model: external data in ..
	model ext-dotdot "initializer w: external data ../w.bin: '..' in path not allowed"
	# case: model: external data in sub/../..
	model ext-dotdot-inner "initializer w: external data sub/../../w.bin: '..' in path not allowed"
	# case: model: external data at an absolute path
	model ext-absolute 'initializer w: external data /etc/passwd: absolute path not allowed'
	# case: model: external data missing
	model ext-missing 'initializer w: external data nonexistent.bin: No such file or directory'
	# case: model: external data without location
	model ext-no-location 'initializer w: external data has no location'
	# case: model: external data at an empty location
	model ext-empty-location 'initializer w: external data : empty location'
	# case: model: external data in a directory
	model ext-dir 'initializer w: external data .: not a regular file'
	# case: model: external data offset -4
	model ext-bad-offset "initializer w: external data w.bin: bad offset '-4'"
	# case: model: external data length 1e3
	model ext-bad-length "initializer w: external data w.bin: bad length '1e3'"
	# case: model: external data past the end
	model ext-past-end 'initializer w: external data w.bin: offset 60 + length 16 past end of file (16 bytes)'
	# case: model: external data length differs
	model ext-length-mismatch 'initializer w: external data w.bin: length 12 does not match tensor size 16 bytes'
	# case: model: external data of 2^40 elements
	model ext-huge 'initializer w: external data w.bin: offset 0 + length 4398046511104 past end of file (16 bytes)'
	# case: model: external data through a symlink
	cp "$M/model/ext-symlink.onnx" "$M/model/w.bin" . && ln -s w.bin link.bin
	fails 1 'onnx-calib: ext-symlink.onnx: initializer w: external data link.bin: symlink not allowed' \
	    onnx-calib --weights-only ext-symlink.onnx
	# case: model: external data through a symlinked directory
	cp "$M/model/ext-symdir.onnx" "$M/model/w.bin" . && ln -s . ld
	fails 1 'onnx-calib: ext-symdir.onnx: initializer w: external data ld/w.bin: symlink not allowed' \
	    onnx-calib --weights-only ext-symdir.onnx
	# case: model: external data with a hard link
	cp "$M/model/ext-hardlink.onnx" "$M/model/w.bin" . && ln w.bin hard.bin
	fails 1 'onnx-calib: ext-hardlink.onnx: initializer w: external data hard.bin: file has 2 hard links' \
	    onnx-calib --weights-only ext-hardlink.onnx
	# case: model: external data in a FIFO
	cp "$M/model/ext-fifo.onnx" . && mkfifo fifo
	fails 1 'onnx-calib: ext-fifo.onnx: initializer w: external data fifo: not a regular file' \
	    timeout 10 onnx-calib --weights-only ext-fifo.onnx
	# case: model: external data of a model on stdin
	fails 1 'onnx-qdq-insert: stdin: initializer w: external data ../w.bin: not allowed for a model read from stdin' \
	    onnx-qdq-insert - "$M/config/ok.stream" <"$M/model/ext-dotdot.onnx"
	cases_ok
}

@test "models: what flows at run time disagrees with the model" {
	# case: run: MatMul inner dimensions
	runs run-matmul-inner 'd/s0: node mm (MatMul): shapes 1x4 and 5x3: inner dimensions differ'
	# case: run: Add shapes do not broadcast
	runs run-add-broadcast 'd/s0: node add (Add): shapes 1x4 and 3 do not broadcast'
	# case: run: Reshape to the wrong size
	runs run-reshape 'd/s0: node reshape (Reshape): cannot reshape 1x4 (4 elements) into 3x5'
	# case: run: Gather index out of range
	runs run-gather-index 'd/s0: node gather (Gather): indices value 7 is out of range for an axis of size 4'
	# case: run: Concat shapes differ
	runs run-concat 'd/s0: node concat (Concat): input 1 has shape 1x5, input 0 has 1x4'
	# case: run: Conv on a rank 2 input
	runs run-conv-channels 'd/s0: node conv (Conv): input 0: expected rank 3 or more (N x C x spatial), got 2'
	# case: run: Expand to 2^42 elements fails fast
	runs run-expand-huge 'd/s0: node expand (Expand): tensor of shape 1048576x1048576x4 (float) is larger than 8589934592 bytes'
	# case: run: ConstantOfShape of 10^12 fails fast
	runs run-constantofshape-huge 'd/s0: node cos (ConstantOfShape): tensor of shape 1000000x1000000 (float) is larger than 8589934592 bytes'
	# case: run: the input's declared shape is enforced
	runs ok-image 'd/s0/x.npy: input x: shape 1x4, the model wants 1x3x8x8'
	# case: verify: cycle
	verifies cycle "$M/model/cycle.onnx: cycle through node r1 (Relu)"
	# case: verify: bad initializer
	verifies init-dtype-99 "$M/model/init-dtype-99.onnx: initializer w: unsupported data type 99"
	# case: verify: external data escaping
	verifies ext-dotdot "$M/model/ext-dotdot.onnx: initializer w: external data ../w.bin: '..' in path not allowed"
	# case: verify: unknown operator
	verifies unknown-op "$M/model/unknown-op.onnx: unsupported operators: node relu (NoSuchOp)"
	# case: verify: initializer name with a newline
	verifies name-newline "$M/model/name-newline.onnx: initializer w?evil: raw data has 3 bytes, 4 elements of float need 16"
	cases_ok
}

@test "models: operators whose attributes or inputs are out of range" {
	# case: run: Conv strides 0
	runs run-op-conv-stride0 'd/s0: node c (Conv): attribute strides: value 0 is out of range'
	# case: run: Conv negative pads
	runs run-op-conv-negpad 'd/s0: node c (Conv): attribute pads: value -5 is out of range'
	# case: run: Conv group does not divide the channels
	runs run-op-conv-group 'd/s0: node c (Conv): input 1: weight has 1 input channels per group, input 0 has 1 channels in 3 groups'
	# case: run: Conv kernel_shape differs from the weights
	runs run-op-conv-kernel "d/s0: node c (Conv): kernel_shape 9 on spatial axis 0 differs from the weights' 2"
	# case: run: Conv bias of the wrong length
	runs run-op-conv-bias 'd/s0: node c (Conv): input 2: bias must be 1-D with 1 values'
	# case: run: MaxPool kernel larger than the input
	runs run-op-maxpool-kernel 'd/s0: node p (MaxPool): kernel extent 100 is larger than the padded input 4 on spatial axis 0'
	# case: run: AveragePool pads of 2^30 fail fast
	runs run-op-avgpool-hugepad 'd/s0: node p (AveragePool): tensor of shape 1x1x2147483651x2147483651 (float) is larger than 8589934592 bytes'
	# case: run: Split sizes do not add up
	runs run-op-split-sum 'd/s0: node s (Split): split sums to 2, axis 1 has size 4'
	# case: run: Transpose perm repeats an axis
	runs run-op-transpose-perm 'd/s0: node t (Transpose): perm is not a permutation of 0..1'
	# case: run: Slice step 0
	runs run-op-slice-step0 'd/s0: node s (Slice): step for axis 1 is zero'
	# case: run: Reshape with two -1
	runs run-op-reshape-two-minus1 'd/s0: node r (Reshape): shape has more than one -1'
	# case: run: Pad crops below zero
	runs run-op-pad-negative 'd/s0: node p (Pad): pads shrink axis 1 of size 4 below zero'
	# case: run: Pad edge mode on an empty axis
	runs run-op-pad-empty-edge 'd/s0: node p (Pad): cannot pad an empty axis except in constant mode'
	# case: run: Resize scale NaN
	runs run-op-resize-nan 'd/s0: node r (Resize): scale nan is out of range'
	# case: run: Resize to a negative size
	runs run-op-resize-size 'd/s0: node r (Resize): size -4 is out of range'
	# case: run: Tile to 2^62 elements
	runs run-op-tile-huge 'd/s0: node t (Tile): element count overflows'
	# case: run: TopK k above the axis
	runs run-op-topk-k 'd/s0: node t (TopK): k 100 is out of range for axis of length 4'
	# case: run: GatherND index out of range
	runs run-op-gathernd-index 'd/s0: node g (GatherND): index 99 is out of range for axis 1 of size 4'
	# case: run: ScatterND index out of range
	runs run-op-scatternd-index 'd/s0: node s (ScatterND): index 99 is out of range for axis 1 of size 4'
	# case: run: Gemm inner dimensions
	runs run-op-gemm-inner 'd/s0: node g (Gemm): inner dimensions differ: 1 and 4'
	# case: run: BatchNormalization scale length
	runs run-op-batchnorm-len 'd/s0: node bn (BatchNormalization): input 1: expected 1 values, got 3'
	# case: run: Unsqueeze to rank 14
	runs run-op-unsqueeze-rank 'd/s0: node u (Unsqueeze): output rank 14 is more than 12'
	# case: run: Range of 2^62 elements fails fast
	runs run-op-range-huge 'd/s0: node r (Range): range of 4611686018427387904 elements is too large'
	# case: run: OneHot depth 2^40 fails fast
	runs run-op-onehot-depth 'd/s0: node o (OneHot): depth 1.09951e+12 is out of range'
	# case: run: Where shapes do not broadcast
	runs run-op-where-broadcast 'd/s0: node w (Where): shapes 3 and 1x4 do not broadcast'
	# case: run: Cast to type 99
	runs run-op-cast-99 'd/s0: node c (Cast): cannot cast to unknown (type 99)'
	# case: run: Einsum equation garbage
	runs run-op-einsum "d/s0: node e (Einsum): equation: unexpected '-'"
	cases_ok
}

@test "streams (1)" {
	# case: stream: empty
	stream empty '1: empty input (not an onnxq stream)'
	# case: stream: no #onnxq line
	stream no-magic '1: not an onnxq stream (no #onnxq line)'
	# case: stream: wrong magic
	stream bad-magic '1: not an onnxq stream (no #onnxq line)'
	# case: stream: version 2.0
	stream major-2 '1: unsupported stream version 2.0 (this reads 1.x)'
	# case: stream: version 'one'
	stream bad-version "1: bad stream version 'one'"
	# case: stream: binary
	stream binary '1: control character 0x03 in line'
	# case: stream: CRLF
	stream crlf '1: carriage return in line (CRLF line ends are not allowed)'
	# case: stream: no end record
	stream no-end '4: end of input before the end record (truncated stream?)'
	# case: stream: cut mid-line
	stream truncated-line '3: no newline at end of input (truncated stream?)'
	# case: stream: end count wrong
	stream end-count '4: end record says 5 records, stream has 1 (truncated or edited)'
	# case: stream: end count not a number
	stream end-bad "4: end record: bad count 'one'"
	# case: stream: data after the end
	stream after-end '5: data after the end record'
	# case: stream: header after a record
	stream header-after-record '4: header line after the first record'
	# case: stream: record without subject
	stream no-subject "3: record 'stat' has no subject"
	# case: stream: field without =
	stream key-no-equals "3: stat t: field 'noequals' is not key=value"
	# case: stream: empty key
	stream empty-key "3: stat t: bad key ''"
	# case: stream: duplicate key
	stream dup-key "3: stat t: duplicate key 'n'"
	# case: stream: bad escape
	stream bad-escape "3: stat record: subject: bad escape '%G1'"
	# case: stream: escaped NUL
	stream nul-escape "3: stat record: subject: escaped NUL byte '%00' not allowed"
	# case: stream: NUL byte
	stream nul-byte '3: NUL byte in line'
	# case: stream: stat without dtype
	stream stat-no-dtype '3: key dtype: missing in stat record'
	# case: stream: stat of unknown dtype
	stream stat-bad-dtype "3: key dtype: unknown type 'float128'"
	cases_ok
}

@test "streams (2)" {
	# case: stream: count not a number
	stream stat-bad-n "3: key n: bad count 'four'"
	# case: stream: negative count
	stream stat-negative-n "3: key n: bad count '-4'"
	# case: stream: count overflows
	stream stat-overflow-n "3: key n: bad count '99999999999999999999'"
	# case: stream: min NaN
	stream stat-min-nan '3: stat t: bad range min=nan max=2'
	# case: stream: min above max
	stream stat-min-above-max '3: stat t: bad range min=5 max=2'
	# case: stream: max inf
	stream stat-max-inf '3: stat t: bad range min=-1 max=inf'
	# case: stream: sum NaN
	stream stat-sum-nan "3: key sum: exact sum 'nan' is not finite"
	# case: stream: sumsq with an infinite part
	stream stat-sumsq-inf "3: key sumsq: exact sum '6:inf' is not finite"
	# case: stream: bmax -NaN
	stream stat-bmax-nan "3: key bmax: exact sum '-nan' is not finite"
	# case: stream: weight range min above max
	stream weight-min-above-max '3: weight W: bad range min=5 max=1'
	# case: stream: weight channel range NaN
	stream weight-cmin-nan '3: weight W: bad range min=nan max=1'
	# case: stream: bias range NaN
	stream bias-max-nan '3: bias B: bad range min=0 max=nan'
	# case: stream: hist edge -inf
	stream hist-inf-edge '4: key bins: element 1: histogram bin edge -inf is not finite'
	# case: stream: bad float
	stream stat-bad-float "3: key max: bad float '2.5.1'"
	# case: stream: rank 13
	stream stat-rank13 "3: key shape: shape '1x1x1x1x1x1x1x1x1x1x1x1x1': rank above 12"
	# case: stream: bad shape
	stream stat-bad-shape "3: key shape: bad shape '1xx4'"
	# case: stream: bad exact sum
	stream stat-bad-xsum "3: key sum: bad exact sum '1,zz'"
	# case: stream: duplicate stat
	stream stat-dup '4: stat t: given twice'
	# case: stream: hist mbits 99
	stream hist-mbits '4: key mbits: 99 not in 0..12'
	# case: stream: hist bins malformed
	stream hist-bad-bins "4: key bins: element 1: '1;4' is not EDGE:COUNT"
	# case: stream: hist edge NaN
	stream hist-nan-edge '4: key bins: element 1: histogram bin edge nan is not finite'
	# case: stream: name with an escaped newline
	stream name-newline-escaped '4: key mbits: 99 not in 0..12'
	# case: stream: hist without stat
	fails 1 'onnx-qparams: <stdin>: hist records of q without a stat record' \
	    onnx-qparams <"$M/stream/hist-no-stat.stream"
	# case: stream: line over 64 MiB
	{ printf '#onnxq\t1.0\nstat\tt\tx='
	  head -c 67200000 /dev/zero | tr '\0' a
	  printf '\nend\t1\n'; } >long.stream
	fails 1 'onnx-qparams: long.stream:2: line longer than 67108864 bytes' \
	    onnx-qparams long.stream
	# case: stream: merge of a truncated shard
	merge no-end '4: end of input before the end record (truncated stream?)'
	# case: stream: merge of a binary shard
	merge binary '1: control character 0x03 in line'
	# case: stream: merge of a bad stat
	merge stat-min-nan '3: stat t: bad range min=nan max=2'
	# case: stream: merge of counts that overflow
	s='stat	t	dtype=float	shape=1x4	n=18446744073709551615	nan=0	inf=0	min=-1	max=2	batches=1	bmin=-1	bmax=2	sum=1	sumsq=6'
	printf '#onnxq\t1.0\n%s\nend\t1\n' "$s" >a.stream
	printf '#onnxq\t1.0\n%s\nend\t1\n' "${s/n=18446744073709551615/n=4}" >b.stream
	fails 1 'onnx-calib: b.stream:2: stat t: value count overflows' \
	    onnx-calib --merge a.stream b.stream
	# case: stream: hist edges out of order
	stream hist-unsorted '4: key bins: element 2: edge 1 after 2 (bins go in increasing order, each once)'
	# case: stream: hist edge given twice
	stream hist-repeated '4: key bins: element 2: edge 1 after 1 (bins go in increasing order, each once)'
	# case: stream: hist edge 0 among the bins
	stream hist-zero-edge '4: key bins: element 1: edge 0 (the zero bin is key zero)'
	# case: stream: hist counts fewer values than the stat's n
	fails 1 'onnx-qparams: <stdin>: tensor t: histogram counts 3 values, stat n=4' \
	    onnx-qparams <"$M/stream/hist-count-short.stream"
	# case: stream: hist counts that overflow in total
	fails 1 'onnx-qparams: <stdin>: tensor t: histogram counts overflow' \
	    onnx-qparams <"$M/stream/hist-count-overflow.stream"
	# case: stream: merge of a hist that does not count the stat's n
	merge hist-count-short '4: hist t: histogram counts 3 values, stat n=4'
	# case: stream: nodes in a cycle
	stream node-cycle '4: node b: output y is read before it is produced (node records out of topological order, or a cycle)'
	# case: stream: a node reading its own output
	stream node-self-loop '3: node a: output y is read before it is produced (node records out of topological order, or a cycle)'
	# case: stream: two nodes producing one tensor
	stream node-two-producers '4: node b: output y is also produced by node a'
	# case: stream: onnx-mixprec on nodes in a cycle
	printf 'regions:\n  - nodes: [a]\n    type: uint16\n' >r.yaml
	fails 1 "onnx-mixprec: <stdin>:4: node b: output y is read before it is produced (node records out of topological order, or a cycle)" \
	    onnx-mixprec -c r.yaml "$M/model/ok-relu.onnx" <"$M/stream/node-cycle.stream"
	# case: stream: merge of dtypes that differ
	s='stat	t	dtype=float	shape=1x4	n=4	nan=0	inf=0	min=-1	max=2	batches=1	bmin=-1	bmax=2	sum=1	sumsq=6'
	printf '#onnxq\t1.0\n%s\nend\t1\n' "$s" >a.stream
	printf '#onnxq\t1.0\n%s\nend\t1\n' "${s/float/double}" >b.stream
	fails 1 'onnx-calib: b.stream:2: stat t: dtype float differs from double' \
	    onnx-calib --merge a.stream b.stream
	cases_ok
}

@test "qparam, fold and convert records (onnx-qdq-insert)" {
	# case: qdq: unknown tensor
	qdq "qparam	nosuch	role=act	type=uint8	scale=0.1	zp=0" 1 '2: tensor nosuch is not in '"$M"'/model/ok-vec.onnx'
	# case: qdq: scale NaN
	qdq "qparam	x	role=act	type=uint8	scale=nan	zp=0" 1 '2: key scale: nan is not a positive finite scale'
	# case: qdq: scale inf
	qdq "qparam	x	role=act	type=uint8	scale=inf	zp=0" 1 '2: key scale: inf is not a positive finite scale'
	# case: qdq: scale 0
	qdq "qparam	x	role=act	type=uint8	scale=0	zp=0" 1 '2: key scale: 0 is not a positive finite scale'
	# case: qdq: scale negative
	qdq "qparam	x	role=act	type=uint8	scale=-0.1	zp=0" 1 '2: key scale: -0.1 is not a positive finite scale'
	# case: qdq: zero point out of range
	qdq "qparam	x	role=act	type=uint8	scale=0.1	zp=300" 1 '2: key zp: 300 is out of the range of uint8'
	# case: qdq: unknown type
	qdq "qparam	x	role=act	type=uint9	scale=0.1	zp=0" 1 "2: key type: unsupported type 'uint9'"
	# case: qdq: unknown role
	qdq "qparam	x	role=other	type=uint8	scale=0.1	zp=0" 1 "2: key role: unknown role 'other'"
	# case: qdq: zero point missing
	qdq "qparam	x	role=act	type=uint8	scale=0.1" 1 '2: key zp: missing in qparam record'
	# case: qdq: channels differ
	qdq "qparam	W	role=weight	type=int8	axis=1	scale=0.5,0.5	zp=0,0" 1 '2: W: 2 channels, the tensor has 3 along axis 1'
	# case: qdq: axis out of range
	qdq "qparam	W	role=weight	type=int8	axis=5	scale=0.5,0.5,0.5	zp=0,0,0" 1 '2: W: axis 5 is out of range for rank 2'
	# case: qdq: scales and zero points differ
	qdq "qparam	W	role=weight	type=int8	axis=1	scale=0.5,0.5,0.5	zp=0,0" 1 '2: 3 scales and 2 zero points'
	# case: qdq: duplicate qparam
	qdq "qparam	x	role=act	type=uint8	scale=0.1	zp=0
qparam	x	role=act	type=uint8	scale=0.1	zp=0" 2 '3: a second qparam record for x'
	# case: qdq: fold of an unknown node
	qdq "fold	nosuch	into=mm" 1 '2: node nosuch is not in '"$M"'/model/ok-vec.onnx'
	# case: qdq: fold of an Add
	qdq "fold	add	into=mm" 1 '2: fold add: not a Relu or Clip'
	# case: qdq: convert without a qparam
	qdq "convert	x	type=uint16	scale=0.1	zp=0" 1 '2: convert x: no qparam record for it'
	# case: qdq: name with an escaped newline
	qdq "qparam	x%0Ay	role=act	type=uint8	scale=0.1	zp=0" 1 '2: tensor x?y is not in '"$M"'/model/ok-vec.onnx'
	cases_ok
}

@test "YAML recipes (1)" {
	# case: config: syntax error
	config syntax '3:1: while parsing a flow node: did not find expected node content'
	# case: config: tab indentation
	config tab-indent '2:1: while scanning for the next token: found character that cannot start any token'
	# case: config: two documents
	config two-docs '3:1: only one YAML document is allowed'
	# case: config: anchors and aliases
	config anchor '3:3: tensors: y: anchors and aliases are not supported'
	# case: config: a list
	config not-a-map '1:1: a recipe is a mapping of settings, not a list'
	# case: config: version 2
	config version '1:10: version: version 2 is not supported (this reads 1)'
	# case: config: unknown setting
	config unknown-setting "1:1: unknown setting 'no_such_setting'"
	# case: config: unknown key
	config unknown-key "3:5: tensor x: unknown key 'colour'"
	# case: config: unknown type
	config bad-type "2:9: activations: type: unknown type 'uint9' (uint8, int8, uint16, int16, uint4, int4)"
	# case: config: tensors as a list
	config tensors-list '1:10: tensors: expected a mapping, not a list'
	# case: config: scale NaN
	config scale-nan "3:12: tensor x: scale: '.nan' is not a finite number"
	# case: config: rmax inf
	config scale-inf "3:11: tensor x: rmax: '.inf' is not a finite number"
	# case: config: negative scale
	config scale-negative '3:5: tensor x: scale: -0.5 is not a positive normal float32'
	# case: config: scale without zero point
	config scale-no-zp '3:5: tensor x: scale: needs zero_point as well'
	# case: config: zero point out of range
	config zp-range '5:5: tensor x: zero_point: 300 does not fit uint8 (0..255)'
	# case: config: zero point 1.5
	config zp-not-int "4:17: tensor x: zero_point: '1.5' is not an integer"
	# case: config: zero point out of int64's range
	config zp-too-big '4:17: tensor x: zero_point: 99999999999999999999 is out of range'
	# case: config: duplicate tensor
	config dup-tensor "4:3: tensors: duplicate key 'x'"
	# case: config: duplicate key
	config dup-key "2:1: duplicate key 'version'"
	# case: config: percentile 101
	config percentile '2:15: activations: percentile: 101 is not in (0, 100]'
	# case: config: min_real_range too wide for a symmetric range
	config min-real-range '1:17: min_real_range: 3e+38 is not in 0..1.70141e+38'
	# case: config: entropy bins 0
	config entropy-bins '2:17: activations: entropy_bins: 0 is not in 16..65536'
	# case: config: rmin above rmax
	config rmin-rmax '3:5: tensor x: rmin: 2 is above rmax 1'
	# case: config: unknown tensor
	config unknown-tensor '2:3: tensor nosuch: not in the stream'
	cases_ok
}

@test "YAML recipes (2)" {
	# case: config: axis out of range
	config axis-range '3:5: tensor W: axis: 5 is out of range for rank 2'
	# case: config: channel count
	config channels '4:5: tensor W: 2 channel values for 3 channels along axis 1'
	# case: config: tensor name with a newline
	config name-newline '2:3: tensor x%0Ay: not in the stream'
	# case: config: value with a newline
	config value-newline "3:17: tensor x: quant_type: unknown type 'uint%0A8' (uint8, int8, uint16, int16, uint4, int4)"
	# case: config: lists nested 5000 deep
	config deep '1:73: nesting deeper than 64 levels'
	# case: config: mappings nested 3000 deep
	config deep-map '1:262: nesting deeper than 64 levels'
	# case: config: recv_nodes nested to 65 levels
	config deep-65 '4:79: nesting deeper than 64 levels'
	# case: config: binary
	config binary '1:1: control characters are not allowed'
	# case: config: bad UTF-8
	config bad-utf8 '1:1: invalid leading UTF-8 octet'
	# case: config: convert to an unknown node
	config recv-unknown '4:48: tensor x: convert: recv_nodes: node nosuch is not in the stream'
	# case: config: over 16 MiB (sparse)
	truncate -s 17M big.yaml
	fails 1 'onnx-qparams: big.yaml: larger than 16 MiB' \
	    onnx-qparams -c big.yaml "$M/config/ok.stream"
	cases_ok
}

@test ".npy samples" {
	# case: npy: empty
	npy empty 'not an npy file'
	# case: npy: bad magic
	npy bad-magic 'not an npy file'
	# case: npy: version 9.0
	npy version-9 'npy format version 9.0 is not supported'
	# case: npy: header past the end
	npy header-past-end 'truncated npy header'
	# case: npy: header not a dict
	npy not-a-dict 'bad npy header: not a dict'
	# case: npy: unknown key
	npy unknown-key "bad npy header: unknown key 'colour'"
	# case: npy: key with a newline
	npy newline-key 'bad npy header: bad key'
	# case: npy: no shape
	npy missing-shape 'bad npy header: missing shape'
	# case: npy: fortran_order Maybe
	npy bad-fortran 'bad npy header: bad fortran_order'
	# case: npy: complex
	npy complex 'npy dtype <c8 is not supported'
	# case: npy: object
	npy object 'npy dtype |O is not supported'
	# case: npy: structured
	npy structured 'structured npy dtypes are not supported'
	# case: npy: negative dimension
	npy negative-dim 'bad npy header: bad shape'
	# case: npy: 10^12 elements fails fast
	npy huge-shape 'input x: shape 1000000x1000000, the model wants ?x4'
	# case: npy: dimension overflows
	npy dim-overflow 'bad npy header: dimension too large'
	# case: npy: rank 13
	npy rank13 'npy shape has more than 12 dimensions'
	# case: npy: data truncated
	npy truncated-data '13 bytes of data where shape 1x4 of <f4 needs 16'
	# case: npy: data too long
	npy trailing-data '20 bytes of data where shape 1x4 of <f4 needs 16'
	# case: npy: wrong type for the model
	npy wrong-dtype 'dtype <f8 where the model wants float'
	# case: npy: wrong shape for the model
	npy wrong-shape 'input x: shape 1x5, the model wants ?x4'
	# case: npy: wrong rank for the model
	npy wrong-rank 'input x: shape 4, the model wants ?x4'
	cases_ok
}

@test ".npz samples" {
	# case: npz: not a zip
	npz not-zip 'not a zip file (no end of central directory)'
	# case: npz: truncated
	npz truncated 'not a zip file (no end of central directory)'
	# case: npz: directory count too large
	npz eocd-count 'bad zip central directory'
	# case: npz: corrupt deflate data
	npz corrupt-deflate 'x.npy: corrupt deflate data'
	# case: npz: crc mismatch
	npz crc 'x.npy: crc mismatch'
	# case: npz: encrypted
	npz encrypted 'x.npy: encrypted members are not supported'
	# case: npz: bzip2
	npz bzip2 'x.npy: compression method 12 is not supported'
	# case: npz: 4 GiB from a few bytes
	npz bomb 'x.npy: bad sizes for a deflated member'
	# case: npz: member missing
	npz no-member 'x.npy: missing (model input x)'
	# case: npz: member not npy
	npz bad-member 'x.npy: npy format version 32.103 is not supported'
	# case: npz: member name with a newline
	npz member-newline 'x.npy: missing (model input x)'
	# case: npz: member twice
	npz dup-member 'x.npy: in the archive twice'
	# case: npz: member outside the archive's directory
	npz member-dotdot 'x.npy: missing (model input x)'
	cases_ok
}

@test ".pb samples" {
	# case: pb: empty
	pb empty 'tensor (unnamed): no data type'
	# case: pb: random bytes
	pb garbage 'not a serialized TensorProto'
	# case: pb: truncated
	pb truncated 'not a serialized TensorProto'
	# case: pb: raw data short
	pb raw-short 'tensor x: raw data has 15 bytes, 4 elements of float need 16'
	# case: pb: float_data short
	pb float-data-short 'tensor x: float_data has 2 values, shape needs 4'
	# case: pb: 10^12 elements fails fast
	pb huge-dims 'tensor x: raw data has 0 bytes, 1000000000000 elements of float need 4000000000000'
	# case: pb: negative dimension
	pb negative-dim 'tensor x: negative dimension -1'
	# case: pb: external data
	pb external 'tensor x: external data x.bin: not allowed for a model read from memory'
	# case: pb: string
	pb string 'tensor x: string tensors are not supported'
	# case: pb: wrong type for the model
	pb wrong-dtype 'dtype double where the model wants float'
	# case: pb: wrong shape for the model
	pb wrong-shape 'input x: shape 2x5, the model wants ?x4'
	cases_ok
}

@test "images" {
	# case: image: empty PNG
	image empty.png 'not a PNG or JPEG file'
	# case: image: text named .png
	image text.png 'not a PNG or JPEG file'
	# case: image: truncated PNG
	image truncated.png 'bad PNG: file truncated'
	# case: image: PNG CRC error
	image bad-crc.png 'bad PNG: IHDR: CRC error'
	# case: image: PNG bit depth 7
	image bad-depth.png 'bad PNG: Invalid IHDR data'
	# case: image: PNG of width 0
	image zero-width.png 'bad PNG: Invalid IHDR data'
	# case: image: PNG of 2^40 pixels
	image huge.png 'image of 1048576x1048576 pixels is too large or empty'
	# case: image: empty JPEG
	image empty.jpg 'not a PNG or JPEG file'
	# case: image: JPEG of SOI only
	image soi-only.jpg 'bad JPEG: Premature end of JPEG file'
	# case: image: truncated JPEG
	image truncated.jpg 'bad JPEG: Premature end of JPEG file'
	# case: image: JPEG of 60000x60000 cut short fails fast
	image huge.jpg 'bad JPEG: Premature end of JPEG file'
	# case: image: arithmetic-coded JPEG of 4134x4096 cut short fails fast
	image arith-cut.jpg 'bad JPEG: Premature end of JPEG file'
	# case: image: JPEG of height 0
	image zero-height.jpg 'bad JPEG: Empty JPEG image (DNL not supported)'
	cases_ok
}
