#!/usr/bin/env bats
# signals.bats: nothing lost. A program that is killed, finds the disk
# full, loses its reader (SIGPIPE) or meets bad input half-way leaves the
# old output file in place (never a partial one) and no temporary beside
# it; -o onto the program's own input works; a closed pipe downstream
# ends the program quietly with status 141, also when the shell ignores
# SIGPIPE, while a SIGHUP or SIGINT ignored at start (nohup, background
# jobs) stays ignored. All five programs are checked for SIGPIPE (with
# a pipe whose reader is gone before they start) and for SIGTERM mid-run.
# Needs: the programs, awk, /dev/full; mount(8) and root for the
# disk-full case (skipped without them); /usr/bin/python3 with onnx and
# numpy for the large model of the onnx-qdq-insert and mid-run cases and
# for the closed pipe.
load helpers

M=$TESTDATA/malformed

# big N: a valid stream of N stat and N hist records on stdout.
big() {
	awk -v n="$1" 'BEGIN {
		printf "#onnxq\t1.0\n"
		for (i = 0; i < n; i++) {
			printf "stat\tt%d\tdtype=float\tshape=1x4\tn=4\tnan=0\tinf=0\tmin=-1\tmax=2\tbatches=1\tbmin=-1\tbmax=2\tsum=1\tsumsq=6\n", i
			printf "hist\tt%d\tmbits=7\tzero=0\tbins=-1:1,0.5:1,1:1,2:1\n", i
		}
		printf "end\t%d\n", 2 * n
	}'
}

# bigger N: big N, but a quarter of it under valgrind, where onnx-qparams
# runs some 50 times slower; its output is still well over 64 KiB (a
# pipe's buffer, the small disk below).
bigger() {
	if [ "${ONNXQ_VALGRIND:-}" = 1 ]; then
		big $(($1 / 4))
	else
		big "$1"
	fi
}

# no_temporaries DIR: nothing of outfile's left in DIR (.NAME.XXXXXX).
no_temporaries() {
	local left

	left=$(find "${1:-.}" -maxdepth 1 -name '.*.??????' -type f)
	[ -z "$left" ] || fail "temporaries left: $left"
}

# the_stream FILE: FILE is a whole stream (its last line the end record).
the_stream() {
	tail -n 1 "$1" | grep -q '^end	[0-9]*$' || fail "$1 is not a whole stream"
}

# same_but_prog A B: streams A and B agree but for their #prog lines.
same_but_prog() {
	diff <(grep -v '^#prog' "$1") <(grep -v '^#prog' "$2") ||
	    fail "$1 and $2 differ"
}

# big_model OUT: a model of 100000 weights, for outputs over a pipe's
# 64 KiB, and its stream OUT.stream.
big_model() {
	/usr/bin/python3 - "$1" <<-'EOF' || skip "no python3-onnx"
	import sys
	import numpy as np
	from onnx import TensorProto, helper, numpy_helper
	w = numpy_helper.from_array(
	    np.linspace(-1, 1, 100000, dtype=np.float32).reshape(1000, 100), 'W')
	g = helper.make_graph(
	    [helper.make_node('MatMul', ['x', 'W'], ['y'], name='mm')], 'g',
	    [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 1000])],
	    [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, 100])],
	    [w])
	m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])
	m.ir_version = 7
	open(sys.argv[1], 'wb').write(m.SerializeToString())
	EOF
	onnx-calib --weights-only "$1" | onnx-qparams >"$1.stream"
}

# stop_in_write PID FILE: wait until PID has its temporary beside FILE,
# then stop it (SIGSTOP) while the temporary is still there; 1 when PID
# finished, or renamed it, first, or after 2 minutes (20 under valgrind,
# where the programs take minutes to reach their output).
stop_in_write() {
	local pid=$1 end=$((SECONDS + 120))

	[ "${ONNXQ_VALGRIND:-}" = 1 ] && end=$((SECONDS + 1200))
	while ((SECONDS < end)); do
		if compgen -G ".$2.??????" >/dev/null; then
			kill -STOP "$pid"
			compgen -G ".$2.??????" >/dev/null && return 0
			kill -CONT "$pid"
			return 1
		fi
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.002
	done
	return 1
}

@test "SIGPIPE: a closed pipe downstream ends each program quietly, status 141" {
	bigger 4000 >b.stream
	for ign in '' "trap '' PIPE;"; do
		run --separate-stderr bash -c "$ign"'onnx-qparams b.stream | head -c 10 >/dev/null; exit ${PIPESTATUS[0]}'
		[ "$status" -eq 141 ] && [ -z "$stderr" ] ||
		    fail "onnx-qparams ($ign): status $status: $stderr"
		run --separate-stderr bash -c "$ign"'onnx-calib --merge b.stream | head -c 10 >/dev/null; exit ${PIPESTATUS[0]}'
		[ "$status" -eq 141 ] && [ -z "$stderr" ] ||
		    fail "onnx-calib --merge ($ign): status $status: $stderr"
		run --separate-stderr bash -c "$ign"'onnx-calib --merge b.stream | onnx-qparams | head -c 10 >/dev/null; exit $((PIPESTATUS[0] | PIPESTATUS[1]))'
		[ "$status" -eq 141 ] && [ -z "$stderr" ] ||
		    fail "pipeline ($ign): status $status: $stderr"
	done
}

@test "SIGPIPE: onnx-qdq-insert into a closed pipe" {
	big_model m.onnx
	for ign in '' "trap '' PIPE;"; do
		run --separate-stderr bash -c "$ign"'onnx-qdq-insert m.onnx m.onnx.stream | head -c 10 >/dev/null; exit ${PIPESTATUS[0]}'
		[ "$status" -eq 141 ] && [ -z "$stderr" ] ||
		    fail "onnx-qdq-insert ($ign): status $status: $stderr"
	done
}

# closed_pipe [ign] CMD...: CMD with its stdout a pipe whose reader is
# gone before CMD starts (so its first write fails, whatever its output's
# size), SIGPIPE at its default or, with ign, ignored; exits with CMD's
# status (128 + the signal's number when a signal ended it).
closed_pipe() {
	/usr/bin/python3 -c '
import os, signal, subprocess, sys
args = sys.argv[1:]
ign = args[0] == "ign"
if ign:
    args = args[1:]
r, w = os.pipe()
os.close(r)
pre = None
if ign:
    pre = lambda: signal.signal(signal.SIGPIPE, signal.SIG_IGN)
st = subprocess.run(args, stdout=w, preexec_fn=pre).returncode
sys.exit(128 - st if st < 0 else st)
' "$@"
}

@test "SIGPIPE: every program, its reader gone before the first write" {
	[ -x /usr/bin/python3 ] || skip "no /usr/bin/python3"
	mkdir -p d/s0 && cp "$M/npy/ok-x.npy" d/s0/x.npy
	m=$M/model/ok-vec.onnx
	onnx-calib -d d "$m" | onnx-qparams >q.stream
	onnx-qdq-insert -o q.onnx "$m" q.stream
	printf 'regions:\n  - nodes: [add]\n    type: uint16\n' >r.yaml
	# --float-outputs: mm, a positive-only model output, would warn
	for ign in '' ign; do
		for cmd in "onnx-calib -d d $m" "onnx-calib --weights-only $m" \
		    "onnx-calib --merge q.stream" \
		    "onnx-qparams --float-outputs q.stream" \
		    "onnx-qdq-insert $m q.stream" "onnx-mixprec -c r.yaml $m" \
		    "onnx-verify -d d $m q.onnx"; do
			# shellcheck disable=SC2086
			run --separate-stderr closed_pipe $ign $cmd <q.stream
			[ "$status" -eq 141 ] && [ -z "$stderr" ] ||
			    fail "$cmd (${ign:-default}): status $status: $stderr"
		done
	done
}

@test "onnx-mixprec: -o onto its input, a full stdout" {
	mkdir -p d/s0 && cp "$M/npy/ok-x.npy" d/s0/x.npy
	m=$M/model/ok-vec.onnx
	onnx-calib -d d "$m" | onnx-qparams >q.stream
	printf 'regions:\n  - nodes: [add]\n    type: uint16\n' >r.yaml
	onnx-mixprec -o want.stream -c r.yaml "$m" <q.stream
	cp q.stream own.stream
	run --separate-stderr onnx-mixprec -o own.stream -c r.yaml "$m" <own.stream
	[ "$status" -eq 0 ] && [ -z "$stderr" ]
	same_but_prog own.stream want.stream
	grep -q '^convert	' own.stream
	no_temporaries .
	[ -w /dev/full ] || skip "no /dev/full"
	run --separate-stderr bash -c "onnx-mixprec -c r.yaml '$m' <q.stream >/dev/full"
	[ "$status" -eq 1 ]
	[ "$stderr" = "onnx-mixprec: <stdout>: write error: No space left on device" ]
	# bad input half-way: the old output stays
	printf 'old\n' >out.stream
	head -c 600 q.stream >cut.stream
	run --separate-stderr onnx-mixprec -o out.stream -c r.yaml "$m" <cut.stream
	[ "$status" -eq 1 ]
	[ "$(cat out.stream)" = old ]
	no_temporaries .
}

@test "a full disk: -o fails with a message, the old file stays, no temporary" {
	bigger 4000 >b.stream
	mkdir full
	mount -t tmpfs -o size=64k tmpfs full 2>/dev/null ||
	    skip "cannot mount a small tmpfs (needs root)"
	printf 'old\n' >full/out.stream
	run --separate-stderr onnx-qparams -o full/out.stream b.stream
	umount_rc=0
	[ "$status" -eq 1 ] &&
	    [ "$stderr" = "onnx-qparams: full/out.stream: write error: No space left on device" ] &&
	    [ "$(cat full/out.stream)" = old ] || umount_rc=1
	left=$(find full -name '.*' -type f)
	run --separate-stderr onnx-calib --merge -o full/out.stream b.stream
	[ "$status" -eq 1 ] && [ "$(cat full/out.stream)" = old ] || umount_rc=1
	msg=$stderr
	umount full
	[ "$umount_rc" -eq 0 ] || fail "onnx-qparams or onnx-calib: status $status: $stderr"
	[ -z "$left" ] || fail "temporaries left: $left"
	[ "$msg" = "onnx-calib: full/out.stream: No space left on device" ] ||
	    [ "$msg" = "onnx-calib: full/out.stream: write error: No space left on device" ] ||
	    fail "onnx-calib: $msg"
}

@test "a full stdout (/dev/full) is an error, with a message" {
	[ -w /dev/full ] || skip "no /dev/full"
	big 100 >b.stream
	run --separate-stderr onnx-qparams b.stream
	[ "$status" -eq 0 ]
	run --separate-stderr bash -c 'onnx-qparams b.stream >/dev/full'
	[ "$status" -eq 1 ]
	[ "$stderr" = "onnx-qparams: <stdout>: write error: No space left on device" ]
	run --separate-stderr bash -c 'onnx-calib --merge b.stream >/dev/full'
	[ "$status" -eq 1 ]
	[[ $stderr == "onnx-calib: "*"No space left on device" ]]
	run --separate-stderr bash -c "onnx-calib --weights-only '$M/model/ok-vec.onnx' >/dev/full"
	[ "$status" -eq 1 ]
	[[ $stderr == "onnx-calib: "*"No space left on device" ]]
	onnx-calib --weights-only "$M/model/ok-vec.onnx" | onnx-qparams >q.stream
	run --separate-stderr bash -c "onnx-qdq-insert '$M/model/ok-vec.onnx' q.stream >/dev/full"
	[ "$status" -eq 1 ]
	[[ $stderr == "onnx-qdq-insert: "*"No space left on device" ]]
	# onnx-verify's trouble status is 2, as cmp(1)'s
	mkdir -p d/s0 && cp "$M/npy/ok-x.npy" d/s0/x.npy
	onnx-qdq-insert -o q.onnx "$M/model/ok-vec.onnx" q.stream
	run --separate-stderr bash -c "onnx-verify -d d '$M/model/ok-vec.onnx' q.onnx >/dev/full"
	[ "$status" -eq 2 ]
	[[ $stderr == "onnx-verify: "*"write error"* ]]
}

@test "-o onto the input's own path" {
	big 300 >s.stream
	cp s.stream orig.stream
	onnx-qparams orig.stream >want.stream
	run --separate-stderr onnx-qparams -o s.stream s.stream
	[ "$status" -eq 0 ] && [ -z "$stderr" ]
	same_but_prog s.stream want.stream
	cp orig.stream a.stream
	onnx-calib --merge orig.stream orig.stream >want.stream
	run --separate-stderr onnx-calib --merge -o a.stream a.stream orig.stream
	[ "$status" -eq 0 ] && [ -z "$stderr" ]
	same_but_prog a.stream want.stream
	cp "$M/model/ok-vec.onnx" m.onnx
	onnx-calib --weights-only m.onnx | onnx-qparams >q.stream
	onnx-qdq-insert m.onnx q.stream >want.onnx
	run --separate-stderr onnx-qdq-insert -o m.onnx m.onnx q.stream
	[ "$status" -eq 0 ] && [ -z "$stderr" ]
	cmp m.onnx want.onnx
	no_temporaries .
}

@test "bad input half-way: the old output stays, no temporary" {
	big 2000 >s.stream
	# record 1500 breaks
	awk 'NR == 1502 { print "stat\tbroken\tn=zz"; next } { print }' \
	    s.stream >bad.stream
	printf 'old\n' >out.stream
	run --separate-stderr onnx-qparams -o out.stream bad.stream
	[ "$status" -eq 1 ]
	[ "$stderr" = "onnx-qparams: bad.stream:1502: key dtype: missing in stat record" ]
	[ "$(cat out.stream)" = old ]
	run --separate-stderr onnx-calib --merge -o out.stream s.stream bad.stream
	[ "$status" -eq 1 ]
	[ "$stderr" = "onnx-calib: bad.stream:1502: key dtype: missing in stat record" ]
	[ "$(cat out.stream)" = old ]
	# a truncated stream (a writer that died) is refused too
	head -c 100000 s.stream >cut.stream
	run --separate-stderr onnx-qparams -o out.stream cut.stream
	[ "$status" -eq 1 ]
	[[ $stderr == "onnx-qparams: cut.stream:"*"(truncated stream?)" ]]
	[ "$(cat out.stream)" = old ]
	no_temporaries .
}

@test "killed mid-write (TERM, HUP, INT): the old output stays, no temporary" {
	bigger 8000 >b.stream
	for sig in TERM HUP INT; do
		stopped=
		for try in 1 2 3 4 5; do
			printf 'old\n' >out.stream
			# in a subshell with SIGINT at its default (a script's
			# background jobs ignore it)
			(trap - INT; exec onnx-qparams -o out.stream b.stream) &
			pid=$!
			if stop_in_write "$pid" out.stream; then
				stopped=1
				[ "$(cat out.stream)" = old ] ||
				    fail "$sig: out.stream replaced before the end"
				kill -"$sig" "$pid"
				kill -CONT "$pid"
			fi
			st=0
			wait "$pid" || st=$?
			[ -n "$stopped" ] && break
			the_stream out.stream
		done
		[ -n "$stopped" ] || skip "could not catch the program writing"
		[ "$st" -eq $((128 + $(kill -l "$sig"))) ] ||
		    fail "$sig: status $st"
		[ "$(cat out.stream)" = old ] || fail "$sig: out.stream changed"
		no_temporaries .
	done
}

@test "killed mid-run (TERM): each program's -o leaves the old output or a whole one" {
	big_model m.onnx
	/usr/bin/python3 - <<-'EOF'
	import os
	import numpy as np
	for i in range(200):
	    os.makedirs('d/s%03d' % i)
	    np.save('d/s%03d/x.npy' % i,
	            np.random.RandomState(i).randn(1, 1000).astype(np.float32))
	EOF
	onnx-calib -d d m.onnx | onnx-qparams >q.stream
	printf 'regions:\n  - nodes: [mm]\n    type: uint16\n' >r.yaml
	caught=
	for cmd in "onnx-calib -d d m.onnx" "onnx-calib --weights-only m.onnx" \
	    "onnx-qdq-insert m.onnx q.stream" "onnx-mixprec -c r.yaml m.onnx"; do
		for try in 1 2 3 4 5 6 7 8; do
			printf 'old\n' >out
			# shellcheck disable=SC2086
			(trap - INT; exec $cmd -o out <q.stream) &
			pid=$!
			stopped=
			if stop_in_write "$pid" out; then
				stopped=1
				kill -TERM "$pid"
				kill -CONT "$pid"
			fi
			st=0
			wait "$pid" || st=$?
			[ -n "$stopped" ] && break
		done
		[ -n "$stopped" ] || continue
		caught+=" ${cmd%% *}"
		[ "$st" -eq 143 ] || fail "$cmd: status $st"
		# SIGSTOP is not instant: a program may have put its whole
		# output in place just before it stopped
		if [ "$(cat out)" != old ]; then
			case $cmd in
			onnx-qdq-insert*)
				onnx-calib --weights-only out >/dev/null ||
				    fail "$cmd: out is no whole model" ;;
			*)
				the_stream out ;;
			esac
		fi
		no_temporaries .
	done
	[ -n "$caught" ] || skip "could not catch a program writing"
}

@test "killed with KILL mid-write: the old output stays" {
	bigger 8000 >b.stream
	stopped=
	for try in 1 2 3 4 5; do
		printf 'old\n' >out.stream
		onnx-qparams -o out.stream b.stream &
		pid=$!
		if stop_in_write "$pid" out.stream; then
			stopped=1
			kill -KILL "$pid"
		fi
		wait "$pid" || true
		[ -n "$stopped" ] && break
	done
	[ -n "$stopped" ] || skip "could not catch the program writing"
	[ "$(cat out.stream)" = old ]
	# SIGKILL cannot be caught: the temporary stays, under a dot name
	rm -f .out.stream.??????
}

@test "ignored at start, SIGHUP and SIGINT stay ignored (nohup)" {
	bigger 8000 >b.stream
	onnx-qparams b.stream >want.stream
	for sig in HUP INT; do
		stopped=
		for try in 1 2 3 4 5; do
			rm -f out.stream
			(trap '' "$sig"; exec onnx-qparams -o out.stream b.stream) &
			pid=$!
			if stop_in_write "$pid" out.stream; then
				stopped=1
				kill -"$sig" "$pid"
				kill -CONT "$pid"
			fi
			st=0
			wait "$pid" || st=$?
			[ -n "$stopped" ] && break
		done
		[ -n "$stopped" ] || skip "could not catch the program writing"
		[ "$st" -eq 0 ] || fail "$sig ignored: status $st"
		same_but_prog out.stream want.stream
	done
}
