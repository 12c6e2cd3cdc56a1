# onnxq: quantize fp32 ONNX models into QDQ models with small Unix filters.
# See README for the two commands that set up and test everything.
.POSIX:
include config.mk

# Out-of-tree builds: make BUILD=/tmp/b. SANITIZE=1 builds with ASan+UBSan
# into its own directory so the two never mix objects.
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
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)

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
FUZZ_SRC = $(sort $(wildcard test/fuzz/*.c))
MAN1 = $(PROGS:%=man/man1/%.1)
MAN5 = $(sort $(wildcard man/man5/*.5))

all: $(BINS)

$(GEN).c $(GEN).h: $(ONNX_PROTO)
	@mkdir -p $(BUILD)/gen
	$(PROTOC_C) --proto_path=$(ONNX_INCLUDE) --c_out=$(BUILD)/gen $(ONNX_PROTO)

$(GEN).o: $(GEN).c
	$(CC) $(OQ_CPPFLAGS) $(OQ_CFLAGS) -w -c -o $@ $<

$(BUILD)/lib/%.o: lib/%.c $(GEN).h
	@mkdir -p $(@D)
	$(CC) $(OQ_CPPFLAGS) $(OQ_CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/cmd/%.o: cmd/%.c $(GEN).h
	@mkdir -p $(@D)
	$(CC) $(OQ_CPPFLAGS) $(OQ_CFLAGS) -MMD -MP -c -o $@ $<

$(LIB): $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $(LIB_OBJ)

$(BUILD)/bin/%: $(BUILD)/cmd/%.o $(LIB)
	@mkdir -p $(@D)
	$(CC) $(OQ_LDFLAGS) -o $@ $< $(LIB) $(OQ_LIBS)

$(BUILD)/test/%: test/unit/%.c test/unit/unit.h $(LIB)
	@mkdir -p $(@D)
	$(CC) $(OQ_CPPFLAGS) -Itest/unit $(OQ_CFLAGS) $(OQ_LDFLAGS) -o $@ $< $(LIB) $(OQ_LIBS)

$(BUILD)/test/tools/%: test/tools/%.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(OQ_CPPFLAGS) $(OQ_CFLAGS) $(OQ_LDFLAGS) -o $@ $< $(LIB) $(OQ_LIBS)

tools: $(TOOLS)

# make check: unit tests, then the bats suites; one summary line at the end.
# TESTS=test/foo.bats runs one suite.
TESTS = $(sort $(wildcard test/*.bats))
check: $(BINS) $(UNITS) $(TOOLS)
	@ONNXQ_BUILD=$(abspath $(BUILD)) ONNXQ_BIN=$(abspath $(BUILD)/bin) ONNXQ_TOOLS=$(abspath $(BUILD)/test/tools) \
	  scripts/run-tests $(UNITS) -- $(TESTS)

bench: $(BINS)
	ONNXQ_BIN=$(abspath $(BUILD)/bin) scripts/bench

install: $(BINS)
	mkdir -p $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANPREFIX)/man1 $(DESTDIR)$(MANPREFIX)/man5
	cp -f $(BINS) $(DESTDIR)$(BINDIR)/
	cp -f $(MAN1) $(DESTDIR)$(MANPREFIX)/man1/
	cp -f $(MAN5) $(DESTDIR)$(MANPREFIX)/man5/
	mkdir -p $(DESTDIR)$(SHAREDIR)/onnxq
	cp -Rf share/onnxq/. $(DESTDIR)$(SHAREDIR)/onnxq/
	if [ -d share/bash-completion ]; then \
	  mkdir -p $(DESTDIR)$(SHAREDIR)/bash-completion/completions && \
	  cp -f share/bash-completion/completions/* $(DESTDIR)$(SHAREDIR)/bash-completion/completions/; fi

uninstall:
	for p in $(PROGS); do rm -f $(DESTDIR)$(BINDIR)/$$p \
	  $(DESTDIR)$(MANPREFIX)/man1/$$p.1 \
	  $(DESTDIR)$(SHAREDIR)/bash-completion/completions/$$p; done
	for m in $(MAN5); do rm -f $(DESTDIR)$(MANPREFIX)/man5/$${m##*/}; done
	rm -rf $(DESTDIR)$(SHAREDIR)/onnxq

clean:
	rm -rf build build-san build-fuzz

.PHONY: all tools check bench install uninstall clean
.SECONDARY:
-include $(LIB_OBJ:.o=.d) $(BINS:$(BUILD)/bin/%=$(BUILD)/cmd/%.d)
