#!/usr/bin/env bats
# calib-workers.bats: with --threads N and two batches or more, onnx-calib
# runs N workers over the batches, each on one interpreter thread with
# statistics of its own, merged exactly at the end (lib/calibpool.c);
# the stream must be byte for byte the serial run's (one engine on N
# threads, ONNXQ_CALIB_SERIAL=1): on the chains fixture at several thread
# counts, histogram widths, batches, limits and shards, node by node and
# with nothing derived, under a memory limit, with --annotate-model; on
# the real cls and rec; a bad sample among the others stops the run with
# the serial run's one-line error, no output left; SIGTERM ends it.
# Needs: the built onnx-calib, the fixtures make check generates,
# /usr/bin/python3 with numpy; the real-model test scripts/fetch-models.

load helpers

PY=/usr/bin/python3
DATA=$ONNXQ_FIXTURES/statderive

# Serial and on workers, with arguments "$@": the same bytes.
same_as_serial() {
	ONNXQ_CALIB_SERIAL=1 onnx-calib -q "$@" 2>serial.err >serial
	onnx-calib -q "$@" 2>workers.err >workers
	cmp serial workers
	cmp serial.err workers.err
	grep -q '^stat' workers
}

@test "calib-workers: chains fixture, streams as the serial run's" {
	same_as_serial -d "$DATA/in" "$DATA/chains.onnx"
	same_as_serial --threads 3 -d "$DATA/in" "$DATA/chains.onnx"
	same_as_serial --threads 4 --hist-bits 3 -d "$DATA/in" \
	    "$DATA/chains.onnx"
	same_as_serial --hist-bits 0 -d "$DATA/in" "$DATA/chains.onnx"
	same_as_serial --hist-bits 10 --limit 3 -d "$DATA/in" \
	    "$DATA/chains.onnx"
	same_as_serial --batch 2 --annotate -d "$DATA/in" "$DATA/chains.onnx"
	same_as_serial --batch 3 -d "$DATA/in" "$DATA/chains.onnx"
	same_as_serial --shard 2/2 -d "$DATA/in" "$DATA/chains.onnx"
	ONNXQ_NO_FUSE=1 same_as_serial -d "$DATA/in" "$DATA/chains.onnx"
	ONNXQ_NO_DERIVE=1 same_as_serial --threads 3 -d "$DATA/in" \
	    "$DATA/chains.onnx"
	# a memory limit that leaves room for fewer workers
	ONNXQ_MEM_LIMIT=1M same_as_serial --threads 3 -d "$DATA/in" \
	    "$DATA/chains.onnx"
	# one worker's stream is the same too, and the serial one on 1 thread
	onnx-calib -q --threads 1 -d "$DATA/in" "$DATA/chains.onnx" |
	    grep -v '^#prog' >one
	grep -v '^#prog' workers >w
	cmp one w
}

@test "calib-workers: --annotate-model, the same model and stream" {
	# the same command lines (#prog), in two directories
	mkdir serial workers
	(cd serial && ONNXQ_CALIB_SERIAL=1 onnx-calib -q --annotate-model \
	    m.onnx -d "$DATA/in" -o s "$DATA/chains.onnx")
	(cd workers && onnx-calib -q --annotate-model m.onnx -d "$DATA/in" \
	    -o s "$DATA/chains.onnx")
	cmp serial/s workers/s
	cmp serial/m.onnx workers/m.onnx
}

@test "calib-workers: a bad sample stops the run as the serial one" {
	cp -r "$DATA/in" in
	cp -r in/s1 in/s1b
	printf 'not a npy file' >in/s1b/x.npy
	for t in 1 2 3; do
		ONNXQ_CALIB_SERIAL=1 run --separate-stderr onnx-calib -q \
		    --threads $t -d in -o out "$DATA/chains.onnx"
		[ "$status" -ne 0 ]
		want=$stderr
		[[ $want == "onnx-calib: in/s1b/x.npy: "* ]] ||
		    fail "serial: $want"
		[ "$(printf '%s\n' "$want" | wc -l)" -eq 1 ]
		run --separate-stderr onnx-calib -q --threads $t -d in -o out \
		    "$DATA/chains.onnx"
		[ "$status" -ne 0 ]
		[ "$stderr" = "$want" ] || fail "threads $t: $stderr" "want $want"
		[ ! -e out ]
		[ -z "$(ls -A | grep -v -x -e in -e 'separate-stderr-.*')" ]
	done
}

@test "calib-workers: real cls and rec, streams as the serial run's" {
	need_models
	for m in "$OCR_CLS:1x3x48x192:4" "$OCR_REC:1x3x48x320:3"; do
		set -- ${m//:/ }
		rm -rf in
		"$PY" "$ONNXQ_ROOT/scripts/make-inputs.py" -n "$3" \
		    --shape "x=$2" "$1" in >/dev/null
		same_as_serial -d in "$1"
		[ "$1" != "$OCR_CLS" ] ||
		    same_as_serial --threads 3 --batch 2 -d in "$1"
	done
}

@test "calib-workers: SIGTERM while the workers run ends it, nothing left" {
	need_models
	"$PY" "$ONNXQ_ROOT/scripts/make-inputs.py" -n 150 \
	    --shape "x=1x3x48x320" "$OCR_REC" in >/dev/null
	onnx-calib -q --threads 2 -d in -o out "$OCR_REC" 2>err &
	pid=$!
	# stopped once the workers run (after start-up and batch 0)
	sleep 1.5
	kill -TERM "$pid"
	status=0
	wait "$pid" || status=$?
	[ "$status" -eq 143 ] || fail "status $status: $(cat err)"
	[ ! -s err ] || fail "$(cat err)"
	[ -z "$(ls -A | grep -v -x -e in -e err -e fetch-models.err)" ]
}
