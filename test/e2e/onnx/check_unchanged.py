#!/usr/bin/env python3
"""Check that tensors a training run must not touch are bit for bit unchanged
(numpy only).

    check_unchanged.py ACTUAL.safetensors EXPECTED.safetensors
        --suffix .running_mean --suffix .running_var

Every tensor of EXPECTED whose name ends with one of the suffixes must be in
ACTUAL with the same shape and the same float32 bits (compared as uint32,
so -0.0 vs 0.0 or a changed NaN payload would fail too). At least one tensor
must match a suffix. The files are read with check_training.py's reader.
Exits 0 on a pass, 1 on a failure.
"""

import argparse
import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "train"))
from check_training import read_safetensors  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("actual")
    ap.add_argument("expected")
    ap.add_argument("--suffix", action="append", required=True)
    args = ap.parse_args(argv)
    actual = read_safetensors(args.actual)
    expected = read_safetensors(args.expected)
    names = sorted(n for n in expected if n.endswith(tuple(args.suffix)))
    if not names:
        print("FAIL: no tensor of %s ends with %s"
              % (args.expected, " or ".join(args.suffix)))
        return 1
    ok = True
    for n in names:
        if n not in actual:
            print("FAIL: no tensor %r in %s" % (n, args.actual))
            ok = False
            continue
        a, e = actual[n], expected[n]
        if a.shape != e.shape:
            print("FAIL: %s has shape %s, expected %s" % (n, a.shape, e.shape))
            ok = False
            continue
        diff = int(np.count_nonzero(a.view(np.uint32) != e.view(np.uint32)))
        if diff:
            print("FAIL: %s: %d of %d elements changed (max |diff| %.3g)"
                  % (n, diff, e.size,
                     float(np.max(np.abs(a.astype(np.float64) - e)))))
            ok = False
    print("unchanged: %d tensors %s" % (len(names),
                                        "bit-exact" if ok else "DIFFER"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
