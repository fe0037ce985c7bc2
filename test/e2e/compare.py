#!/usr/bin/env python3
"""Compare an output of `dlc run` with its reference: numpy only (no torch).

    compare.py ACTUAL.npy EXPECTED.npy [--rtol 1e-5] [--allclose-atol ATOL]

Checks, in order:
  * the shapes are equal (a 0-d scalar is shape (), not (1,));
  * the dtypes are equal;
  * every element of ACTUAL is finite (NaN/Inf also fail when EXPECTED has
    them: the references are all finite);
  * the default criterion, "relative, max-abs scaled":
        max|a - e| <= rtol * max(1, max|e|)
    or, with --allclose-atol ATOL, NumPy's elementwise allclose instead:
        |a - e| <= ATOL + rtol * |e|   for every element.
Prints one line (max abs error, scaled error, verdict) and exits 0 on a
pass, 1 on a failure, 2 on a usage or read error.
"""

import argparse
import sys

import numpy as np


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("actual")
    ap.add_argument("expected")
    ap.add_argument("--rtol", type=float, default=1e-5,
                    help="tolerance, scaled by max(1, max|expected|) (default 1e-5)")
    ap.add_argument("--allclose-atol", type=float, default=None, metavar="ATOL",
                    help="use the elementwise |a-e| <= ATOL + rtol*|e| criterion instead")
    args = ap.parse_args(argv)

    try:
        a = np.load(args.actual, allow_pickle=False)
        e = np.load(args.expected, allow_pickle=False)
    except Exception as exc:  # noqa: BLE001 - report any read error the same way
        print("compare: error: cannot read: %s" % exc)
        return 2

    tag = "%s vs %s" % (args.actual, args.expected)
    if a.shape != e.shape:
        print("FAIL %s: shape %s != expected %s" % (tag, a.shape, e.shape))
        return 1
    if a.dtype != e.dtype:
        print("FAIL %s: dtype %s != expected %s" % (tag, a.dtype, e.dtype))
        return 1

    a64 = a.astype(np.float64)
    e64 = e.astype(np.float64)
    if not np.all(np.isfinite(a64)):
        bad = int(np.size(a64) - np.count_nonzero(np.isfinite(a64)))
        print("FAIL %s: %d non-finite element(s) in actual" % (tag, bad))
        return 1
    if not np.all(np.isfinite(e64)):
        print("FAIL %s: non-finite element(s) in expected" % tag)
        return 1

    if a64.size == 0:
        print("PASS %s: empty, shape %s dtype %s" % (tag, a.shape, a.dtype))
        return 0

    diff = np.abs(a64 - e64)
    max_abs = float(np.max(diff))
    scale = max(1.0, float(np.max(np.abs(e64))))
    scaled = max_abs / scale
    if args.allclose_atol is None:
        ok = scaled <= args.rtol
        crit = "scaled err %.3e %s rtol %.1e" % (scaled, "<=" if ok else ">", args.rtol)
    else:
        bound = args.allclose_atol + args.rtol * np.abs(e64)
        nbad = int(np.count_nonzero(diff > bound))
        ok = nbad == 0
        crit = "scaled err %.3e; allclose(atol=%.1e, rtol=%.1e): %d element(s) outside" % (
            scaled, args.allclose_atol, args.rtol, nbad)
    worst = np.unravel_index(int(np.argmax(diff)), diff.shape) if diff.ndim else ()
    print("%s %s: max abs err %.3e at %s, %s, shape %s %s" % (
        "PASS" if ok else "FAIL", tag, max_abs, list(map(int, worst)), crit, a.shape, a.dtype))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
