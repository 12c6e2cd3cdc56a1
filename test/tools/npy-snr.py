#!/usr/bin/python3
"""npy-snr.py: the SNR in dB of the outputs in one data directory (npy
layout of onnx-verify(1): DIR/SAMPLE/NAME.npy) against the same outputs
in another, over all samples: one line "NAME SNR" per output, and exit 1
when any is below MIN (default: no floor).

usage: npy-snr.py [--min DB] REFDIR DIR NAME...
"""
import math
import os
import sys

import numpy as np

args = sys.argv[1:]
floor = None
if args[:1] == ['--min']:
    floor, args = float(args[1]), args[2:]
if len(args) < 3:
    sys.exit(__doc__)
ref, got, names = args[0], args[1], args[2:]
bad = 0
for name in names:
    sig = err = 0.0
    for s in sorted(os.listdir(ref)):
        p = os.path.join(ref, s, name + '.npy')
        if not os.path.exists(p):
            continue
        a = np.load(p).astype(np.float64)
        b = np.load(os.path.join(got, s, name + '.npy')).astype(np.float64)
        sig += float((a * a).sum())
        err += float(((a - b) ** 2).sum())
    snr = math.inf if err == 0 else 10 * math.log10(sig / err) if sig else -math.inf
    print('%s %.1f' % (name, snr))
    if floor is not None and not snr >= floor:
        bad = 1
sys.exit(bad)
