#!/usr/bin/env python3
"""Compare the last losses of two `dlc run --train --print-loss` logs.

    check_final_loss.py REFERENCE.log OTHER.log --within 0.05

Passes when both logs have the same steps, every loss is finite, and the
last loss of OTHER is within the relative bound of REFERENCE's.
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "train"))
from check_training import read_losses  # noqa: E402


def losses(path):
    return [loss for _, loss in read_losses(path)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("reference")
    ap.add_argument("other")
    ap.add_argument("--within", type=float, required=True)
    args = ap.parse_args()
    ref, other = losses(args.reference), losses(args.other)
    if not ref or len(ref) != len(other):
        print("FAIL: %d and %d steps" % (len(ref), len(other)))
        return 1
    if not all(math.isfinite(v) for v in ref + other):
        print("FAIL: a loss is not finite")
        return 1
    rel = abs(other[-1] - ref[-1]) / abs(ref[-1])
    ok = rel <= args.within
    print("%s: final loss %.6g vs %.6g (relative difference %.3g, bound %g)"
          % ("PASS" if ok else "FAIL", other[-1], ref[-1], rel, args.within))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
