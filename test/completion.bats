#!/usr/bin/env bats
# completion.bats: bash completion for the five programs
# (share/bash-completion/completions/): sourcing it registers a completion
# function for each program; called with COMP_WORDS and COMP_CWORD as bash
# sets them, it offers every option of the program's --help, the values
# of TYPE, METHOD and a|b|c arguments, directories for DIR, *.onnx for
# MODEL arguments, any file for streams, and follows a program's --help
# when it changes. make install installs it under every program's name.
# Needs: bash, the built programs, make (for the install case).

load helpers

COMPDIR=$ONNXQ_ROOT/share/bash-completion/completions
PROGS='onnx-calib onnx-qparams onnx-qdq-insert onnx-mixprec onnx-verify'

# comp WORD...: complete the last WORD (may be '') of the command line
# WORD...; print the suggestions sorted, one per line.
comp() {
	local fn

	# shellcheck disable=SC1090
	. "$COMPDIR/$1"
	fn=$(complete -p "$1" | sed -n 's/.*-F \([^ ]*\) .*/\1/p')
	[ -n "$fn" ] || fail "no completion function for $1"
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMP_LINE="$*"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	"$fn" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	printf '%s\n' "${COMPREPLY[@]}" | sed '/^$/d' | LC_ALL=C sort
}

# files: a directory with models, streams and other files to complete.
files() {
	mkdir -p calib eval sub
	touch det.onnx rec.onnx rec.stats rec.qparams notes.txt recipe.yaml \
	    plot.svg
}

@test "completion: each program's file registers a function for it" {
	local p

	for p in $PROGS; do
		[ -e "$COMPDIR/$p" ] || fail "no completion file for $p"
		run bash -c '. "$1" && complete -p "$2"' _ "$COMPDIR/$p" "$p"
		[ "$status" -eq 0 ] || fail "$p: $output"
		[[ $output == *"-F _onnxq_complete $p"* ]] || fail "$p: $output"
	done
}

@test "completion: every option of --help is offered, and nothing else" {
	local p want got

	for p in $PROGS; do
		# The options as the usage lines write them, found independently
		# of the completion's own parsing.
		want=$({ "$p" --help | grep -oE '(^|[[ |])--?[A-Za-z0-9][-A-Za-z0-9]*' |
		    sed 's/^[[ |]//'; printf '%s\n' --help --version; } |
		    LC_ALL=C sort -u)
		[ "$(echo "$want" | wc -l)" -ge 4 ] || fail "$p: few options: $want"
		got=$(comp "$p" -)
		[ "$got" = "$want" ] ||
		    fail "$p: offered" "$got" "but --help has" "$want"
	done
}

@test "completion: prefixes, value lists and numbers" {
	files
	[ "$(comp onnx-qparams --per | tr '\n' ' ')" = \
	    "--per-channel --per-tensor --percentile --percentile-per-side " ]
	[ "$(comp onnx-qparams -m '' | tr '\n' ' ')" = \
	    "distribution entropy minmax mse percentile " ]
	[ "$(comp onnx-qparams -a u | tr '\n' ' ')" = "uint16 uint4 uint8 " ]
	[ "$(comp onnx-qparams --include-nodes '' )" = "" ]
	[ "$(comp onnx-verify --sort '' | tr '\n' ' ')" = "graph own snr " ]
	[ "$(comp onnx-verify --format t | tr '\n' ' ')" = "table tsv " ]
	[ "$(comp onnx-qdq-insert --qdq-domain o)" = onnx ]
	# A number gets nothing, not file names.
	[ "$(comp onnx-verify --min-snr '')" = "" ]
	[ "$(comp onnx-calib --limit '')" = "" ]
	# --opt=value, split at '=' by readline or not.
	[ "$(comp onnx-verify --format=j)" = json ]
	[ "$(comp onnx-qparams -m e)" = entropy ]
	[ "$(comp onnx-verify --sort = s)" = snr ]
}

@test "completion: directories for DIR, models for MODEL, files for streams" {
	files
	[ "$(comp onnx-calib -d '' | tr '\n' ' ')" = "calib eval sub " ]
	[ "$(comp onnx-verify --save-outputs e)" = eval ]
	# MODEL: *.onnx and directories (a model may be in one).
	[ "$(comp onnx-calib -d calib '' | tr '\n' ' ')" = \
	    "calib det.onnx eval rec.onnx sub " ]
	[ "$(comp onnx-calib -d calib r)" = rec.onnx ]
	[ "$(comp onnx-verify -d eval rec.onnx '' | tr '\n' ' ')" = \
	    "calib det.onnx eval rec.onnx sub " ]
	# After MODEL, onnx-qdq-insert reads a stream: any file.
	[ "$(comp onnx-qdq-insert -o q.onnx rec.onnx rec. | tr '\n' ' ')" = \
	    "rec.onnx rec.qparams rec.stats " ]
	# onnx-qparams and onnx-calib --merge read streams, as many as given.
	[ "$(comp onnx-qparams n)" = notes.txt ]
	[ "$(comp onnx-calib --merge rec.stats n)" = notes.txt ]
	# No third positional argument for onnx-verify.
	[ "$(comp onnx-verify rec.onnx q.onnx '')" = "" ]
	# Recipes, plots, output files.
	[ "$(comp onnx-qparams -c '' | tr '\n' ' ')" = \
	    "calib eval recipe.yaml sub " ]
	[ "$(comp onnx-verify --plot p)" = plot.svg ]
	[ "$(comp onnx-qparams -o n)" = notes.txt ]
}

@test "completion: follows the program's own --help" {
	files
	mkdir bin
	cat >bin/onnx-verify <<'EOF'
#!/bin/sh
echo 'usage: onnx-verify [--frobnicate a|b] [--quiet] -d DIR MODEL'
EOF
	chmod +x bin/onnx-verify
	PATH=$T/bin:$PATH
	[ "$(comp onnx-verify -- | tr '\n' ' ')" = \
	    "--frobnicate --help --quiet --version " ]
	[ "$(comp onnx-verify --frobnicate '' | tr '\n' ' ')" = "a b " ]
	# A program that is not there gets no completion, and no error.
	PATH=/usr/bin:/bin
	[ "$(comp onnx-qparams -)" = "" ]
}

@test "completion: make install installs it for every program" {
	local args=() d=$T/dest p

	eval "args=(${ONNXQ_MAKE_ARGS:-})"
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$ONNXQ_ROOT" -q \
	    --no-print-directory "${args[@]}" all ||
	    fail "build not up to date (run this through make check)"
	run env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$ONNXQ_ROOT" \
	    --no-print-directory "${args[@]}" install DESTDIR="$d" PREFIX=/usr
	[ "$status" -eq 0 ] || fail "make install: $output"
	for p in $PROGS; do
		f=$d/usr/share/bash-completion/completions/$p
		[ -f "$f" ] && [ ! -L "$f" ] || fail "not installed as a file: $f"
		run bash -c '. "$1" && complete -p "$2"' _ "$f" "$p"
		[[ $output == *"-F _onnxq_complete $p"* ]] || fail "$p: $output"
	done
	[ -f "$d/usr/share/onnxq/onnxq.mk" ] || fail "onnxq.mk not installed"
}
