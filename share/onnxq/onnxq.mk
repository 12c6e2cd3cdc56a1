# onnxq.mk: pattern rules that quantize ONNX models with onnxq (GNU make).
#
#	MODEL.onnx --onnx-calib--> MODEL.stats --onnx-qparams--> MODEL.qparams
#	MODEL.onnx + MODEL.qparams --onnx-qdq-insert--> MODEL.qdq.onnx
#	MODEL.onnx + MODEL.qdq.onnx --onnx-verify--> MODEL.verified
#
# Use it from a Makefile of your own:
#
#	CALIB_DIR = calib
#	EVAL_DIR = eval
#	MIN_SNR = 25
#	include /usr/local/share/onnxq/onnxq.mk
#
#	all: det.verified rec.verified
#
# `make rec.verified` calibrates rec.onnx on the samples in CALIB_DIR,
# chooses scales and zero points, writes the quantized rec.qdq.onnx, runs
# both models on the samples in EVAL_DIR and fails, removing nothing but
# its own report, when an output's signal-to-noise ratio is below MIN_SNR
# dB. The report (onnx-verify's table) is kept in rec.verified. rec.stats
# and rec.qparams are kept too (calibration is the slow step), so
# `make rec.qdq.onnx QPARAMS_FLAGS='-m percentile'` redoes only the cheap
# steps.
#
# Variables (set them before or after the include, or on the command line):
#
#   CALIB_DIR      calibration samples: a data directory of onnx-calib(1)
#                  (default: calib). Several: CALIB_DIR = 'a -d b'.
#   EVAL_DIR       evaluation samples for onnx-verify(1) (default: CALIB_DIR)
#   MIN_SNR        the SNR floor in dB for every output (default: 30); also
#                  NAME=DB for one output, as --min-snr takes it
#   CALIB_FLAGS    more options of onnx-calib, e.g. --limit 100 (default:
#                  --quiet)
#   QPARAMS_FLAGS  options of onnx-qparams, e.g. -m percentile, -c RECIPE
#                  (default: none, so its defaults)
#   QDQ_FLAGS      options of onnx-qdq-insert (default: none)
#   VERIFY_FLAGS   more options of onnx-verify (default: none)
#   ONNXQ_BIN      where the programs are (default: found on PATH); or set
#                  ONNX_CALIB, ONNX_QPARAMS, ONNX_QDQ_INSERT, ONNX_VERIFY
#                  to each program's path
#
# A stats file depends on its model only: make does not see new samples
# in CALIB_DIR, so remove MODEL.stats (or make -B) after changing them.

CALIB_DIR ?= calib
EVAL_DIR ?= $(CALIB_DIR)
MIN_SNR ?= 30
CALIB_FLAGS ?= --quiet
QPARAMS_FLAGS ?=
QDQ_FLAGS ?=
VERIFY_FLAGS ?=
ONNXQ_BIN ?=
ONNX_CALIB ?= $(if $(ONNXQ_BIN),$(ONNXQ_BIN)/)onnx-calib
ONNX_QPARAMS ?= $(if $(ONNXQ_BIN),$(ONNXQ_BIN)/)onnx-qparams
ONNX_QDQ_INSERT ?= $(if $(ONNXQ_BIN),$(ONNXQ_BIN)/)onnx-qdq-insert
ONNX_VERIFY ?= $(if $(ONNXQ_BIN),$(ONNXQ_BIN)/)onnx-verify

# The programs write their outputs through a temporary file and rename it
# into place, so a failed step leaves no half-written target behind.
%.stats: %.onnx
	$(ONNX_CALIB) $(CALIB_FLAGS) -d $(CALIB_DIR) -o $@ $<

%.qparams: %.stats
	$(ONNX_QPARAMS) $(QPARAMS_FLAGS) -o $@ $<

%.qdq.onnx: %.onnx %.qparams
	$(ONNX_QDQ_INSERT) $(QDQ_FLAGS) -o $@ $< $*.qparams

# onnx-verify exits 1 below MIN_SNR: the report is shown, then removed, and
# the build stops.
%.verified: %.onnx %.qdq.onnx
	$(ONNX_VERIFY) -d $(EVAL_DIR) --min-snr $(MIN_SNR) $(VERIFY_FLAGS) \
	    $< $*.qdq.onnx >$@.tmp || { cat $@.tmp; rm -f $@.tmp; exit 1; }
	@cat $@.tmp
	@mv -f $@.tmp $@

# Keep the stats and qparams though make sees them as intermediate.
.PRECIOUS: %.stats %.qparams %.qdq.onnx
