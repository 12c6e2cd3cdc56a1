#!/usr/bin/python3
# proto-equal.py: check that pairs of ONNX files parse to equal ModelProto
# messages (test/model.bats). Reads "A<TAB>B" lines from the file given
# (or stdin); prints "equal N" and, for each pair that differs, "differ A B";
# exits 1 if any pair differs. External data is loaded as onnx.load does,
# so a model saved with external data compares equal to its inlined form.
# With --bytes it compares the files byte for byte instead; with
# --external, tensors whose data_location is DEFAULT compare equal to ones
# that leave it out (onnx.load sets it when it inlines external data).
import sys

import onnx
from onnx.external_data_helper import _get_all_tensors


def load(path, external):
    m = onnx.load(path)
    if external:
        for t in _get_all_tensors(m):
            if t.data_location == onnx.TensorProto.DEFAULT:
                t.ClearField('data_location')
    return m


def main():
    args = sys.argv[1:]
    raw = '--bytes' in args
    external = '--external' in args
    args = [a for a in args if a not in ('--bytes', '--external')]
    src = open(args[0]) if args else sys.stdin
    equal, bad = 0, 0
    for line in src:
        line = line.rstrip('\n')
        if not line:
            continue
        a, b = line.split('\t')
        if raw:
            same = open(a, 'rb').read() == open(b, 'rb').read()
        else:
            ma, mb = load(a, external), load(b, external)
            same = (ma.SerializeToString(deterministic=True) ==
                    mb.SerializeToString(deterministic=True))
        if same:
            equal += 1
        else:
            bad += 1
            print('differ', a, b)
    print('equal', equal)
    return 1 if bad else 0


sys.exit(main())
