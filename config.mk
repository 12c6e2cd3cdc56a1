# onnxq build configuration: edit here or override on the make command line
# (make PREFIX=/usr CFLAGS='-O3 -march=native').
VERSION = 0.1.0

# Install paths; DESTDIR is prepended for staged installs.
PREFIX = /usr/local
BINDIR = $(PREFIX)/bin
MANPREFIX = $(PREFIX)/share/man
SHAREDIR = $(PREFIX)/share
DESTDIR =

# Where the ONNX schema comes from (Debian libonnx-dev).
ONNX_PROTO = /usr/include/onnx/onnx.proto
PROTOC_C = protoc-c
PKG_CONFIG = pkg-config
# The Python that builds test fixtures (Debian python3-onnx, numpy).
PYTHON_ONNX = /usr/bin/python3
PKGS = libprotobuf-c yaml-0.1 openblas libpng libjpeg zlib

CC = cc
AR = ar
# CFLAGS and LDFLAGS are the user's; the Makefile adds what it needs to them.
CFLAGS = -O2 -g
LDFLAGS =
