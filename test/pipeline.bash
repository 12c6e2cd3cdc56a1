# pipeline.bash: checks of a quantized model that control-pipeline.bats
# and float16.bats share (load it after helpers).
#
#   checker_ok MODEL      onnx.checker (full_check) passes on MODEL.
#   snr_ok LABEL MIN_SNR DATA MODEL QMODEL
#                         onnx-verify finds every output of QMODEL above
#                         MIN_SNR dB against MODEL on DATA; its report goes
#                         to the bats log, each line prefixed by LABEL.

checker_ok() {
	run /usr/bin/python3 -c 'import sys, onnx
onnx.checker.check_model(onnx.load(sys.argv[1]), full_check=True)' "$1"
	[ "$status" -eq 0 ] || fail "onnx.checker: $output"
}

snr_ok() {
	local label=$1 snr=$2 data=$3

	shift 3
	run --separate-stderr onnx-verify --min-snr "$snr" -d "$data" "$@"
	for l in "${lines[@]:1}"; do
		printf '# %s: %s\n' "$label" "$l"
	done >&3
	[ "$status" -eq 0 ] || fail "onnx-verify: exit $status:" "$output" "$stderr"
	[ "${#lines[@]}" -ge 2 ] || fail "no report: $output"
}
