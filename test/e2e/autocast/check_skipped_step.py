#!/usr/bin/env python3
"""Check a checkpoint saved after skipped fp16 steps (numpy only).

    check_skipped_step.py CHECKPOINT INITIAL_WEIGHTS --scale S

Every weight of INITIAL_WEIGHTS must be in CHECKPOINT with the same bits
(the skipped update changed nothing and no NaN reached it), every other
optimizer state tensor must be zero (moments, step count, growth tracker),
and optimizer.loss_scale must be S.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "train"))
from check_training import read_safetensors as read  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("checkpoint")
    ap.add_argument("initial")
    ap.add_argument("--scale", type=float, required=True)
    args = ap.parse_args()
    ck, init = read(args.checkpoint), read(args.initial)
    bad = []
    for k, v in init.items():
        if k not in ck or ck[k].tobytes() != v.tobytes():
            bad.append("weight %s changed" % k)
    for k, v in ck.items():
        if k in init or k == "optimizer.loss_scale":
            continue
        if np.any(v != 0):
            bad.append("state %s is not zero" % k)
    if float(ck["optimizer.loss_scale"]) != args.scale:
        bad.append("loss scale %g, expected %g" % (float(ck["optimizer.loss_scale"]), args.scale))
    print("FAIL: " + "; ".join(bad) if bad else
          "PASS: %d weights bit-identical, optimizer state zero, scale %g"
          % (len(init), args.scale))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
