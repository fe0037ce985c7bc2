#!/usr/bin/env python3
"""dlc's mixed-precision error against PyTorch's own (numpy only).

    check_autocast.py DLC.npy TORCH_AUTOCAST.npy REFERENCE.npy [--factor 2]

Both errors are measured against the float64 REFERENCE as compare.py does
(max |a - ref| / max(1, max |ref|)); passes when dlc's is at most FACTOR
times PyTorch's autocast error (the bound the mixed-precision issue sets).
"""
import argparse
import sys

import numpy as np


def err(a, ref):
    return float(np.max(np.abs(a.astype(np.float64) - ref)) /
                 max(1.0, float(np.max(np.abs(ref)))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dlc")
    ap.add_argument("torch")
    ap.add_argument("reference")
    ap.add_argument("--factor", type=float, default=2.0)
    args = ap.parse_args()
    d, t = np.load(args.dlc), np.load(args.torch)
    ref = np.load(args.reference).astype(np.float64)
    if d.shape != ref.shape or not np.all(np.isfinite(d)):
        print("FAIL: shape %s (expected %s) or non-finite values" % (d.shape, ref.shape))
        return 1
    ed, et = err(d, ref), err(t, ref)
    ok = ed <= args.factor * et
    print("%s: dlc error %.3g, PyTorch autocast error %.3g (ratio %.2f, bound %.1f)"
          % ("PASS" if ok else "FAIL", ed, et, ed / et if et else float("inf"),
             args.factor))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
