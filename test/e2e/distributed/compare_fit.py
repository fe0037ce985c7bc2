"""Compares two `dlc train --log` histories and two checkpoints: every
epoch's loss, val_loss and val_accuracy, and every tensor, within a
relative 1e-5 (tensors by their Euclidean norm).

usage: compare_fit.py A.jsonl B.jsonl A.safetensors B.safetensors
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
import safetensors_io  # noqa: E402

a_log, b_log, a_st, b_st = sys.argv[1:5]
a = [json.loads(line) for line in open(a_log)]
b = [json.loads(line) for line in open(b_log)]
if [r["epoch"] for r in a] != [r["epoch"] for r in b]:
    sys.exit("FAIL: epochs %s and %s" % ([r["epoch"] for r in a],
                                         [r["epoch"] for r in b]))
worst = 0.0
for ra, rb in zip(a, b):
    for key in ("loss", "val_loss", "val_accuracy"):
        if key not in ra:
            continue
        rel = abs(ra[key] - rb[key]) / max(abs(ra[key]), 1e-30)
        worst = max(worst, rel)
        if rel > 1e-5:
            sys.exit("FAIL: epoch %d %s %r against %r" %
                     (ra["epoch"], key, ra[key], rb[key]))
ta = safetensors_io.read_safetensors(a_st, {"F32": "<f4"})
tb = safetensors_io.read_safetensors(b_st, {"F32": "<f4"})
if sorted(ta) != sorted(tb):
    sys.exit("FAIL: tensors %s and %s" % (sorted(ta), sorted(tb)))
wt = 0.0
for name in ta:
    x, y = np.asarray(ta[name], np.float64), np.asarray(tb[name], np.float64)
    norm = np.linalg.norm(x)
    rel = np.linalg.norm(x - y) / norm if norm else np.linalg.norm(y)
    wt = max(wt, rel)
    if rel > 1e-5:
        sys.exit("FAIL: %s differs by %.3g" % (name, rel))
print("same fit over %d epochs: worst relative error %.3g (history), "
      "%.3g (%d tensors)" % (len(a), worst, wt, len(ta)))
