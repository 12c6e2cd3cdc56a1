# onnxq: quantize fp32 ONNX models into QDQ models with small Unix filters.
# GNU make. README has the two commands that set up and test everything.
include config.mk

# Out-of-tree builds: make BUILD=/tmp/b. SANITIZE=1 builds with ASan+UBSan,
# by default into build-san so the two kinds of objects never mix.
SANITIZE =
ifeq ($(SANITIZE),1)
BUILD ?= build-san
SANFLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else
BUILD ?= build
SANFLAGS =
endif

PROGS = onnx-calib onnx-qparams onnx-qdq-insert onnx-mixprec onnx-verify
GEN = $(BUILD)/gen/onnx/onnx.pb-c

# Goals that need the libraries; clean and uninstall must work without them.
BUILDING = $(filter-out clean uninstall,$(or $(MAKECMDGOALS),all))
ifneq ($(BUILDING),)
ifneq ($(shell $(PKG_CONFIG) --exists $(PKGS) && echo ok),ok)
$(error missing libraries (pkg-config $(PKGS)); run scripts/bootstrap)
endif
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS))
PKG_LIBS := $(shell $(PKG_CONFIG) --libs $(PKGS))
endif

OQ_CPPFLAGS = -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -DONNXQ_VERSION='"$(VERSION)"' \
	-Ilib -I$(BUILD)/gen $(PKG_CFLAGS)
OQ_CFLAGS = -std=c11 -Wall -Wextra -fopenmp $(SANFLAGS) $(CFLAGS)
OQ_LDFLAGS = -fopenmp $(SANFLAGS) $(LDFLAGS)
OQ_LIBS = $(PKG_LIBS) -lm

LIB_SRC = $(sort $(wildcard lib/*.c))
LIB_OBJ = $(GEN).o $(LIB_SRC:%.c=$(BUILD)/%.o)
LIB = $(BUILD)/lib/libonnxq.a
BINS = $(PROGS:%=$(BUILD)/bin/%)
UNIT_SRC = $(sort $(wildcard test/unit/*.c))
UNITS = $(UNIT_SRC:test/unit/%.c=$(BUILD)/test/%)
# Test-only programs the bats suites call (not installed).
TOOL_SRC = $(sort $(wildcard test/tools/*.c))
TOOLS = $(TOOL_SRC:test/tools/%.c=$(BUILD)/test/tools/%)
BATS = $(sort $(wildcard test/*.bats))
MAN1 = $(PROGS:%=man/man1/%.1)
MAN5 = $(sort $(wildcard man/man5/*.5))

# Everything is built with the flags recorded in $(BUILD)/flags: changing CC,
# CFLAGS or SANITIZE for an existing BUILD dir rebuilds it all rather than
# linking objects of two kinds together.
sq = '$(subst ','\'',$(1))'
FLAGS_LINE = $(strip $(CC) $(OQ_CPPFLAGS) $(OQ_CFLAGS) : $(OQ_LDFLAGS) $(OQ_LIBS))
STAMP = $(BUILD)/flags
DRY_RUN = $(findstring n,$(firstword -$(MAKEFLAGS)))$(findstring q,$(firstword -$(MAKEFLAGS)))
ifneq ($(BUILDING),)
ifneq ($(FLAGS_LINE),$(strip $(shell cat $(STAMP) 2>/dev/null)))
ifeq ($(DRY_RUN),)
$(shell mkdir -p $(BUILD) && printf '%s\n' $(call sq,$(FLAGS_LINE)) >$(STAMP))
else
# make -n or -q: say that all would be rebuilt, but write nothing.
$(STAMP): FORCE
endif
endif
endif

all: $(BINS)

$(STAMP):
	@mkdir -p $(@D)
	@printf '%s\n' $(call sq,$(FLAGS_LINE)) >$@

$(GEN).c $(GEN).h &: $(ONNX_PROTO) $(STAMP)
	@mkdir -p $(BUILD)/gen
	$(PROTOC_C) --proto_path=$(ONNX_PROTO:%/onnx/onnx.proto=%) --c_out=$(BUILD)/gen $(ONNX_PROTO)

# Generated code is not ours to keep warning-free.
$(GEN).o: $(GEN).c
	$(CC) $(OQ_CPPFLAGS) $(OQ_CFLAGS) -w -c -o $@ $<

$(BUILD)/lib/%.o: lib/%.c $(GEN).h $(STAMP)
	@mkdir -p $(@D)
	$(CC) $(OQ_CPPFLAGS) $(OQ_CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/cmd/%.o: cmd/%.c $(GEN).h $(STAMP)
	@mkdir -p $(@D)
	$(CC) $(OQ_CPPFLAGS) $(OQ_CFLAGS) -MMD -MP -c -o $@ $<

$(LIB): $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $(LIB_OBJ)

$(BUILD)/bin/%: $(BUILD)/cmd/%.o $(LIB)
	@mkdir -p $(@D)
	$(CC) $(OQ_LDFLAGS) -o $@ $< $(LIB) $(OQ_LIBS)

$(BUILD)/test/%: test/unit/%.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(OQ_CPPFLAGS) -Itest/unit $(OQ_CFLAGS) $(OQ_LDFLAGS) -MMD -MP -MF $@.d \
	  -o $@ $< $(LIB) $(OQ_LIBS)

$(BUILD)/test/tools/%: test/tools/%.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(OQ_CPPFLAGS) $(OQ_CFLAGS) $(OQ_LDFLAGS) -MMD -MP -MF $@.d \
	  -o $@ $< $(LIB) $(OQ_LIBS)

tools: $(TOOLS)

# Fuzz targets, one per parser of untrusted input (test/fuzz; scripts/fuzz
# runs them). make fuzz builds them for libFuzzer with clang, ASan and
# UBSan in a build of their own, FUZZ_BUILD. In any build,
# $(BUILD)/test/fuzz/NAME is the same target with test/fuzz/standalone.c's
# main, which test/fuzz.bats replays the seed corpora through.
FUZZ_CC = clang
FUZZ_BUILD = $(if $(filter file,$(origin BUILD)),build-fuzz,$(BUILD)-fuzz)
FUZZ_SRC = $(sort $(wildcard test/fuzz/fuzz_*.c))
FUZZ_REPLAY = $(FUZZ_SRC:test/fuzz/%.c=$(BUILD)/test/fuzz/%)
FUZZERS = $(FUZZ_SRC:test/fuzz/%.c=$(BUILD)/fuzzers/%)

$(FUZZ_REPLAY): $(BUILD)/test/fuzz/%: test/fuzz/%.c test/fuzz/standalone.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(OQ_CPPFLAGS) $(OQ_CFLAGS) $(OQ_LDFLAGS) -MMD -MP -MF $@.d \
	  -o $@ $< test/fuzz/standalone.c $(LIB) $(OQ_LIBS)

$(FUZZERS): $(BUILD)/fuzzers/%: test/fuzz/%.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(OQ_CPPFLAGS) $(OQ_CFLAGS) $(OQ_LDFLAGS) -fsanitize=fuzzer \
	  -MMD -MP -MF $@.d -o $@ $< $(LIB) $(OQ_LIBS)

fuzzers: $(FUZZERS)

fuzz:
	@$(MAKE) --no-print-directory BUILD=$(call sq,$(FUZZ_BUILD)) \
	  CC=$(call sq,$(FUZZ_CC)) SANITIZE=1 \
	  CFLAGS='-O1 -g -fsanitize=fuzzer-no-link' fuzzers

# Small test models and their samples are made by the scripts beside
# where they used to be (test/data/DIR/make-fixtures.py), not kept in the
# tree: each writes its directory under $(BUILD)/test/fixtures.
FIXTURE_DIRS = interp control float16 dynlstm qdqscale fuse statderive
FIXTURES = $(FIXTURE_DIRS:%=$(BUILD)/test/fixtures/%/.made)
$(BUILD)/test/fixtures/%/.made: test/data/%/make-fixtures.py
	@rm -rf $(@D)
	$(PYTHON_ONNX) $< $(@D) && touch $@

# make check: unit tests, then the bats suites, one summary line at the end.
# TESTS picks some: make check TESTS='test/foo.bats test/unit/bar.c'.
TESTS = $(UNIT_SRC) $(BATS)
CHECK_UNITS = $(patsubst test/unit/%.c,$(BUILD)/test/%,$(filter test/unit/%.c,$(TESTS)))
CHECK_BATS = $(filter %.bats,$(TESTS))
# test/fuzz.bats replays corpora, and fuzzes briefly when clang is there.
CHECK_FUZZ = $(if $(filter test/fuzz.bats,$(CHECK_BATS)),$(FUZZ_REPLAY) \
	$(if $(shell command -v $(FUZZ_CC) 2>/dev/null),fuzz))
check: $(BINS) $(TOOLS) $(CHECK_UNITS) $(CHECK_FUZZ) $(FIXTURES)
	@scripts/run-tests $(CHECK_UNITS) -- $(CHECK_BATS)

# make check-valgrind: the same tests with every program, test tool (the
# interpreter's conformance runner among them) and unit test run under
# valgrind's memcheck (scripts/valgrind-wrap): a memory error or a leak
# fails the test that ran it. Slow (valgrind runs 20 to 50 times slower);
# TESTS picks some, as for make check.
VALGRIND_DIR = $(BUILD)/valgrind
check-valgrind: $(BINS) $(TOOLS) $(CHECK_UNITS) $(FIXTURES) \
	$(filter-out fuzz,$(CHECK_FUZZ))
	@mkdir -p $(VALGRIND_DIR)/bin $(VALGRIND_DIR)/tools $(VALGRIND_DIR)/test
	@for p in $(abspath $(BINS) $(TOOLS) $(CHECK_UNITS)); do \
	  case $$p in */bin/*) w=$(VALGRIND_DIR)/bin/$${p##*/};; \
	  */test/tools/*) w=$(VALGRIND_DIR)/tools/$${p##*/};; \
	  *) w=$(VALGRIND_DIR)/test/$${p##*/};; esac; \
	  printf '#!/bin/sh\nexec "%s/scripts/valgrind-wrap" "%s" "$$@"\n' \
	    "$(CURDIR)" "$$p" >$$w && chmod +x $$w || exit 1; done
	@ONNXQ_BIN=$(abspath $(VALGRIND_DIR)/bin) \
	  ONNXQ_TOOLS=$(abspath $(VALGRIND_DIR)/tools) \
	  ONNXQ_VALGRIND=1 ONNXQ_FUZZ_SMOKE=0 \
	  ONNXQ_TEST_TIMEOUT=$${ONNXQ_TEST_TIMEOUT:-14400} scripts/run-tests \
	  $(CHECK_UNITS:$(BUILD)/test/%=$(VALGRIND_DIR)/test/%) -- $(CHECK_BATS)

# What the test suites see: where the build is, and the make arguments that
# rebuild nothing in it (test/install.bats runs make install with them, from
# the top of the tree, so BUILD stays as given).
check check-valgrind bench: export ONNXQ_ROOT := $(CURDIR)
check check-valgrind bench: export ONNXQ_BUILD := $(abspath $(BUILD))
check check-valgrind bench: export ONNXQ_BIN := $(abspath $(BUILD)/bin)
check check-valgrind bench: export ONNXQ_TOOLS := $(abspath $(BUILD)/test/tools)
check check-valgrind: export ONNXQ_FIXTURES := $(abspath $(BUILD)/test/fixtures)
check check-valgrind bench: export ONNXQ_SANITIZE := $(SANITIZE)
check check-valgrind: export ONNXQ_FUZZ_BUILD := $(abspath $(FUZZ_BUILD))
check check-valgrind bench: export ONNXQ_MAKE_ARGS := BUILD=$(call sq,$(BUILD)) \
	SANITIZE=$(call sq,$(SANITIZE)) CC=$(call sq,$(CC)) \
	CFLAGS=$(call sq,$(CFLAGS)) LDFLAGS=$(call sq,$(LDFLAGS))

# Sanitizer runs: leaks are errors, UBSan stops at the first report with a
# stack trace; your own ASAN_OPTIONS/UBSAN_OPTIONS win. malloc'd memory is
# filled with 0xff bytes (float NaN), so a kernel that reads an output it
# allocated uninitialised (tensor_alloc_uninit) fails the tests.
ifeq ($(SANITIZE),1)
check bench: export ASAN_OPTIONS ?= detect_leaks=1:malloc_fill_byte=255:max_malloc_fill_size=2147483647
check bench: export UBSAN_OPTIONS ?= print_stacktrace=1:halt_on_error=1
endif

bench: $(BINS) $(TOOLS)
	@scripts/bench

install: all
	mkdir -p $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANPREFIX)/man1 $(DESTDIR)$(MANPREFIX)/man5
	for p in $(PROGS); do \
	  cp -f $(BUILD)/bin/$$p $(DESTDIR)$(BINDIR)/ && \
	  chmod 755 $(DESTDIR)$(BINDIR)/$$p || exit 1; done
	for m in $(wildcard $(MAN1)); do \
	  cp -f $$m $(DESTDIR)$(MANPREFIX)/man1/ && \
	  chmod 644 $(DESTDIR)$(MANPREFIX)/man1/$${m##*/} || exit 1; done
	for m in $(MAN5); do \
	  cp -f $$m $(DESTDIR)$(MANPREFIX)/man5/ && \
	  chmod 644 $(DESTDIR)$(MANPREFIX)/man5/$${m##*/} || exit 1; done
	if [ -d share/onnxq ]; then \
	  mkdir -p $(DESTDIR)$(SHAREDIR)/onnxq && \
	  cp -Rf share/onnxq/. $(DESTDIR)$(SHAREDIR)/onnxq/; fi
	if [ -d share/bash-completion/completions ]; then \
	  mkdir -p $(DESTDIR)$(SHAREDIR)/bash-completion/completions && \
	  cp -f share/bash-completion/completions/* \
	    $(DESTDIR)$(SHAREDIR)/bash-completion/completions/; fi

uninstall:
	for p in $(PROGS); do rm -f $(DESTDIR)$(BINDIR)/$$p \
	  $(DESTDIR)$(MANPREFIX)/man1/$$p.1 \
	  $(DESTDIR)$(SHAREDIR)/bash-completion/completions/$$p; done
	for m in $(MAN5); do rm -f $(DESTDIR)$(MANPREFIX)/man5/$${m##*/}; done
	rm -rf $(DESTDIR)$(SHAREDIR)/onnxq

# make clean: the build dirs in the tree; make clean BUILD=DIR: that one
# only, and only what the build makes there, so BUILD=/tmp does no harm.
ifeq ($(origin BUILD),file)
CLEAN_DIRS = build build-san build-werror build-fuzz
else
CLEAN_DIRS = $(BUILD)
endif
clean:
	for d in $(CLEAN_DIRS); do \
	  rm -rf $$d/bin $$d/cmd $$d/gen $$d/lib $$d/test $$d/flags \
	    $$d/fuzzers $$d/valgrind; \
	  rmdir $$d 2>/dev/null || true; done

FORCE:

.PHONY: all tools check check-valgrind bench install uninstall clean fuzz \
	fuzzers FORCE
.SECONDARY:
.DELETE_ON_ERROR:
-include $(LIB_OBJ:.o=.d) $(BINS:$(BUILD)/bin/%=$(BUILD)/cmd/%.d) \
	$(UNITS:=.d) $(TOOLS:=.d) $(FUZZ_REPLAY:=.d) $(FUZZERS:=.d)
