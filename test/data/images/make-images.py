#!/usr/bin/python3
"""make-images.py: write the image fixtures of test/calib-data.bats and
test/unit/image_test.c into this directory, with nothing but zlib and
numpy (no imaging library), so the decoders are checked against an
independent writer:

  rgb.png       8x6 RGB, 8 bits, a known pattern (the reference pattern)
  grey16.png    8x6 grey, 16 bits
  palette.png   8x6 palette of 4 colours
  alpha.png     8x6 RGBA (alpha must be dropped, not composited)
  interlaced.png  the pattern of rgb.png, Adam7 interlaced
  flat.jpg      16x16 baseline JPEG of four flat colour quadrants
  grey.jpg      16x8 baseline greyscale JPEG, a flat grey
  expected.npy  the 6x8x3 pattern of rgb.png as uint8 (height, width, RGB)

The JPEG writer is a minimal baseline encoder (4:4:4, the standard
tables of ITU T.81 annex K at quality 100), enough for flat colours to
decode within a few levels. The output is the same bytes on every run.
usage: test/data/images/make-images.py [OUTDIR]   (default: its own dir)
"""
import os
import struct
import sys
import zlib

import numpy as np


def chunk(kind, data):
    c = struct.pack(">I", len(data)) + kind + data
    return c + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png(path, rows, width, height, color_type, depth, extra=b"",
        interlace=0):
    ihdr = struct.pack(">IIBBBBB", width, height, depth, color_type, 0, 0,
                       interlace)
    raw = b"".join(b"\x00" + r for r in rows)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + extra +
                chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def pattern():
    y, x = np.mgrid[0:6, 0:8]
    img = np.zeros((6, 8, 3), np.uint8)
    img[..., 0] = x * 32 + 3
    img[..., 1] = y * 40 + 7
    img[..., 2] = (x * 7 + y * 11) % 256
    return img


ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4),
         (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]


def interlaced_rows(img):
    rows = []
    for x0, y0, dx, dy in ADAM7:
        sub = img[y0::dy, x0::dx]
        if sub.size == 0:
            continue
        rows += [r.tobytes() for r in sub]
    return rows


# Baseline JPEG.
ZIGZAG = [0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19,
          26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28, 35, 42, 49,
          56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45,
          38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63]
# Table K.3-K.6: code lengths counts (16) and values.
DC_LUM = ([0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0], list(range(12)))
AC_LUM = ([0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7d], bytes.fromhex(
    "01020300041105122131410613516107227114328191a1082342b1c11552d1f02433"
    "627282090a161718191a25262728292a3435363738393a434445464748494a535455"
    "565758595a636465666768696a737475767778797a838485868788898a9293949596"
    "9798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4c5c6c7c8c9cad2d3d4"
    "d5d6d7d8d9dae1e2e3e4e5e6e7e8e9eaf1f2f3f4f5f6f7f8f9fa"))


def huff_codes(spec):
    counts, values = spec
    codes, code, k = {}, 0, 0
    for length in range(1, 17):
        for _ in range(counts[length - 1]):
            codes[values[k]] = (code, length)
            code += 1
            k += 1
        code <<= 1
    return codes


class Bits:
    def __init__(self):
        self.out = bytearray()
        self.acc = 0
        self.n = 0

    def put(self, code, length):
        for i in range(length - 1, -1, -1):
            self.acc = (self.acc << 1) | ((code >> i) & 1)
            self.n += 1
            if self.n == 8:
                self.out.append(self.acc)
                if self.acc == 0xFF:
                    self.out.append(0)
                self.acc = self.n = 0

    def flush(self):
        while self.n:
            self.put(1, 1)
        return bytes(self.out)


def magnitude(v):
    n = int(abs(v)).bit_length()
    return n, (v if v >= 0 else v + (1 << n) - 1)


def dct_matrix():
    c = np.zeros((8, 8))
    for k in range(8):
        for n in range(8):
            a = np.sqrt(1 / 8) if k == 0 else np.sqrt(2 / 8)
            c[k, n] = a * np.cos(np.pi * (2 * n + 1) * k / 16)
    return c


def jpeg(path, planes):
    """planes: list of HxW float arrays (Y, Cb, Cr or Y), H, W multiples of 8."""
    h, w = planes[0].shape
    q = np.ones(64, np.int64)   # quality 100: all ones
    dc, ac = huff_codes(DC_LUM), huff_codes(AC_LUM)
    C = dct_matrix()
    bits = Bits()
    prev = [0] * len(planes)
    for by in range(0, h, 8):
        for bx in range(0, w, 8):
            for ci, p in enumerate(planes):
                blk = p[by:by + 8, bx:bx + 8] - 128
                coef = (C @ blk @ C.T).flatten()
                zz = [int(round(coef[ZIGZAG[i]] / q[i])) for i in range(64)]
                n, v = magnitude(zz[0] - prev[ci])
                prev[ci] = zz[0]
                bits.put(*dc[n])
                bits.put(v, n)
                run = 0
                for a in zz[1:]:
                    if a == 0:
                        run += 1
                        continue
                    while run > 15:
                        bits.put(*ac[0xF0])
                        run -= 16
                    n, v = magnitude(a)
                    bits.put(*ac[(run << 4) | n])
                    bits.put(v, n)
                    run = 0
                if run:
                    bits.put(*ac[0x00])
    data = bits.flush()
    nc = len(planes)
    dqt = b"\x00" + bytes(q[i] for i in range(64))
    sof = struct.pack(">BHHB", 8, h, w, nc) + b"".join(
        bytes([i + 1, 0x11, 0]) for i in range(nc))
    dht = (b"\x00" + bytes(DC_LUM[0]) + bytes(DC_LUM[1]) +
           b"\x10" + bytes(AC_LUM[0]) + bytes(AC_LUM[1]))
    sos = bytes([nc]) + b"".join(bytes([i + 1, 0x00]) for i in range(nc)) + \
        b"\x00\x3f\x00"

    def seg(marker, body):
        return b"\xff" + bytes([marker]) + struct.pack(">H", len(body) + 2) + body

    with open(path, "wb") as f:
        f.write(b"\xff\xd8" + seg(0xDB, dqt) + seg(0xC0, sof) +
                seg(0xC4, dht) + seg(0xDA, sos) + data + b"\xff\xd9")


def ycc(rgb):
    r, g, b = [rgb[..., i].astype(np.float64) for i in range(3)]
    y = 0.299 * r + 0.587 * g + 0.114 * b
    cb = 128 - 0.168736 * r - 0.331264 * g + 0.5 * b
    cr = 128 + 0.5 * r - 0.418688 * g - 0.081312 * b
    return [y, cb, cr]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.abspath(__file__))
    img = pattern()
    np.save(os.path.join(out, "expected.npy"), img)
    png(os.path.join(out, "rgb.png"), [r.tobytes() for r in img], 8, 6, 2, 8)
    png(os.path.join(out, "interlaced.png"), interlaced_rows(img), 8, 6, 2,
        8, interlace=1)
    grey = (img[..., 0].astype(np.uint16) * 257).astype(">u2")
    png(os.path.join(out, "grey16.png"), [r.tobytes() for r in grey], 8, 6,
        0, 16)
    pal = np.array([[255, 0, 0], [0, 255, 0], [0, 0, 255], [9, 99, 199]],
                   np.uint8)
    idx = (np.mgrid[0:6, 0:8].sum(axis=0) % 4).astype(np.uint8)
    png(os.path.join(out, "palette.png"), [r.tobytes() for r in idx], 8, 6,
        3, 8, extra=chunk(b"PLTE", pal.tobytes()))
    rgba = np.concatenate([img, np.full((6, 8, 1), 0, np.uint8)], axis=2)
    rgba[:, 4:, 3] = 255
    png(os.path.join(out, "alpha.png"), [r.tobytes() for r in rgba], 8, 6, 6,
        8)
    flat = np.zeros((16, 16, 3), np.uint8)
    flat[:8, :8] = (200, 30, 30)
    flat[:8, 8:] = (30, 200, 30)
    flat[8:, :8] = (30, 30, 200)
    flat[8:, 8:] = (128, 128, 128)
    jpeg(os.path.join(out, "flat.jpg"), ycc(flat))
    jpeg(os.path.join(out, "grey.jpg"), [np.full((8, 16), 77.0)])


main()
