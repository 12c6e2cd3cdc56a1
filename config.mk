# onnxq build configuration: edit here or override on the make command line.
VERSION = 0.1.0

PREFIX = /usr/local
BINDIR = $(PREFIX)/bin
MANPREFIX = $(PREFIX)/share/man
SHAREDIR = $(PREFIX)/share
DESTDIR =

# Where the ONNX schema comes from (Debian libonnx-dev).
# The schema is ONNX_INCLUDE/onnx/onnx.proto (its package path must stay onnx/).
ONNX_INCLUDE = /usr/include
ONNX_PROTO = $(ONNX_INCLUDE)/onnx/onnx.proto
PROTOC_C = protoc-c
PKG_CONFIG = pkg-config
PKGS = libprotobuf-c yaml-0.1 openblas libpng libjpeg

CC = cc
# CFLAGS and LDFLAGS are the user's; the Makefile adds what it needs to them.
CFLAGS = -O2 -g
LDFLAGS =
