#!/usr/bin/env bats
# fuzz.bats: the fuzz targets of test/fuzz, one per parser of untrusted
# input (scripts/fuzz list), two ways.
#   replay  each target built with test/fuzz/standalone.c (any compiler,
#           $ONNXQ_BUILD/test/fuzz; under SANITIZE=1 with ASan and UBSan)
#           runs once on every seed of scripts/fuzz seeds: test/fuzz/corpus
#           (past findings among them), the matching files of test/data
#           and the malformed corpus. A finding aborts the program.
#   smoke   the libFuzzer builds (make fuzz: clang; $ONNXQ_FUZZ_BUILD) fuzz
#           for a few seconds each from the same seeds, with no finding.
# Needs: the replay programs (make check builds them); clang for the smoke
# (skipped without it, and when ONNXQ_FUZZ_SMOKE, its seconds, is 0).
# Under make check-valgrind (ONNXQ_VALGRIND=1) the replays run under
# scripts/valgrind-wrap. Long runs: scripts/fuzz all 1800 (see there).
load helpers

FUZZ_BIN=$ONNXQ_BUILD/test/fuzz
FUZZ_BUILD=${ONNXQ_FUZZ_BUILD:-$ONNXQ_ROOT/build-fuzz}
SMOKE_SECONDS=${ONNXQ_FUZZ_SMOKE:-3}

# replay TARGET: every seed through the standalone TARGET.
replay() {
	local seeds n

	[ -x "$FUZZ_BIN/$1" ] || fail "$FUZZ_BIN/$1 not built (make check builds it)"
	cd "$ONNXQ_ROOT" || return 1
	mapfile -t seeds < <(scripts/fuzz seeds "$1")
	n=${#seeds[@]}
	[ "$n" -ge 10 ] || fail "$1: only $n seeds"
	if [ "${ONNXQ_VALGRIND:-}" = 1 ]; then
		run --separate-stderr scripts/valgrind-wrap "$FUZZ_BIN/$1" "${seeds[@]}"
	else
		run --separate-stderr "$FUZZ_BIN/$1" "${seeds[@]}"
	fi
	[ "$status" -eq 0 ] || fail "$1: status $status: ${stderr:0:2000}"
	[ "$output" = "$n inputs" ] || fail "$1: $output"
}

# smoke TARGET: libFuzzer TARGET for SMOKE_SECONDS, in a work dir here.
smoke() {
	[ "$SMOKE_SECONDS" -gt 0 ] || skip "ONNXQ_FUZZ_SMOKE=0"
	[ -x "$FUZZ_BUILD/fuzzers/$1" ] ||
	    skip "no libFuzzer build in $FUZZ_BUILD (make fuzz, needs clang)"
	cd "$ONNXQ_ROOT" || return 1
	run --separate-stderr env ONNXQ_FUZZ_WORK="$T/work" \
	    FUZZ_BUILD="$FUZZ_BUILD" scripts/fuzz "$1" "$SMOKE_SECONDS"
	[ "$status" -eq 0 ] ||
	    fail "$1: status $status: $output $stderr $(tail -n 20 "$T/work/$1/log")"
	[[ $output =~ ^$1:\ ([0-9]+)\ executions\ in\ [0-9]+\ s,\ [0-9]+\ corpus\ inputs,\ 0\ findings$ ]] ||
	    fail "$1: $output"
	[ "${BASH_REMATCH[1]}" -gt 0 ] || fail "$1: no executions"
}

@test "every target is listed, built and documented" {
	cd "$ONNXQ_ROOT"
	for f in test/fuzz/fuzz_*.c; do
		t=${f##*/}
		t=${t%.c}
		scripts/fuzz list | grep -qx "$t" || fail "$t not in scripts/fuzz list"
		[ -x "$FUZZ_BIN/$t" ] || fail "$FUZZ_BIN/$t not built"
		head -n 3 "$f" | grep -q "^ \* $t: " || fail "$f: no header comment"
	done
	[ "$(scripts/fuzz list | wc -l)" -eq "$(ls test/fuzz/fuzz_*.c | wc -l)" ]
}

@test "replay: the driver runs every file given and names a missing one" {
	printf 'x' >one
	run --separate-stderr "$FUZZ_BIN/fuzz_stream" one "$T/none"
	[ "$status" -eq 1 ]
	[ "$output" = "1 inputs" ]
	[[ $stderr == *"$T/none"* ]]
}

@test "replay: fuzz_model" { replay fuzz_model; }
@test "replay: fuzz_interp" { replay fuzz_interp; }
@test "replay: fuzz_stream" { replay fuzz_stream; }
@test "replay: fuzz_config" { replay fuzz_config; }
@test "replay: fuzz_npy" { replay fuzz_npy; }
@test "replay: fuzz_npz" { replay fuzz_npz; }
@test "replay: fuzz_pb" { replay fuzz_pb; }
@test "replay: fuzz_image" { replay fuzz_image; }

@test "smoke: fuzz_model" { smoke fuzz_model; }
@test "smoke: fuzz_interp" { smoke fuzz_interp; }
@test "smoke: fuzz_stream" { smoke fuzz_stream; }
@test "smoke: fuzz_config" { smoke fuzz_config; }
@test "smoke: fuzz_npy" { smoke fuzz_npy; }
@test "smoke: fuzz_npz" { smoke fuzz_npz; }
@test "smoke: fuzz_pb" { smoke fuzz_pb; }
@test "smoke: fuzz_image" { smoke fuzz_image; }
