#!/usr/bin/env python3
"""Compare a `dlc run --train --print-loss` log with PyTorch's (numpy only).

    check_training.py LOSSES.txt EXPECTED_LOSSES.npy
        [--weights ACTUAL.safetensors EXPECTED.safetensors
         [--skip NAME:START:STOP ...]] [--rtol 1e-5]

LOSSES.txt holds lines `step N loss X`. Each step's loss must be within
`rtol` of the expected one, relatively: |a - e| <= rtol * |e|. With
--weights, every tensor of EXPECTED must be in ACTUAL (which may hold more:
the optimizer state) with the same shape and a relative error
||a - e|| / ||e|| <= rtol (Euclidean norms over the tensor). Single
elements are not held to rtol: Adam divides by sqrt(v), so an element whose
gradient is tiny turns float32 rounding into a visible change of its update
(PyTorch's own float32 training moves such elements of the digits MLP by
1.7e-5 of the tensor's largest value against float64). The largest
elementwise error, scaled by the tensor's largest value, is printed too.
--skip leaves elements START..STOP-1 of EXPECTED's tensor NAME (flattened,
row-major) out of that tensor's comparison; they must still be finite. It
is for elements whose gradient is zero in exact arithmetic but not in
floating point (an attention key's bias: softmax ignores a shift common to
a row), where Adam turns rounding noise of either side into updates of
lr's size; the tensor's other elements are held to rtol as usual.
Exits 0 on a pass, 1 on a failure.
"""

import argparse
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import safetensors_io  # noqa: E402


def read_safetensors(path):
    return safetensors_io.read_safetensors(path, {"F32": "<f4"})


def read_losses(path):
    """The (step, loss) pairs of the `step N loss L` lines of a log."""
    out = []
    with open(path) as f:
        for line in f:
            m = re.fullmatch(r"step (\d+) loss (\S+)\n?", line)
            if m:
                out.append((int(m.group(1)), float(m.group(2))))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("losses")
    ap.add_argument("expected")
    ap.add_argument("--weights", nargs=2, metavar=("ACTUAL", "EXPECTED"))
    ap.add_argument("--skip", action="append", default=[],
                    metavar="NAME:START:STOP")
    ap.add_argument("--rtol", type=float, default=1e-5)
    args = ap.parse_args(argv)
    if args.skip and not args.weights:
        ap.error("--skip needs --weights")

    got = []
    for step, loss in read_losses(args.losses):
        if step != len(got) + 1:
            print("FAIL: step %d out of order" % step)
            return 1
        got.append(loss)
    want = np.load(args.expected)
    if len(got) != len(want):
        print("FAIL: %d steps logged, %d expected" % (len(got), len(want)))
        return 1
    ok = True
    got = np.array(got)
    rel = np.abs(got - want) / np.abs(want)
    worst = int(np.argmax(rel))
    print("losses: %d steps, %.6g -> %.6g, worst relative error %.3g at step %d"
          % (len(got), got[0], got[-1], rel[worst], worst + 1))
    if not np.all(np.isfinite(got)) or rel[worst] > args.rtol:
        print("FAIL: step %d loss %.9g, expected %.9g"
              % (worst + 1, got[worst], want[worst]))
        ok = False

    if args.weights:
        actual = read_safetensors(args.weights[0])
        expected = read_safetensors(args.weights[1])
        worst_w = worst_e = (0.0, "")
        skip = {}  # name -> boolean mask of the skipped elements
        for spec in args.skip:
            m = re.fullmatch(r"([A-Za-z0-9_.]+):(\d+):(\d+)", spec)
            if not m:
                ap.error("--skip %r: expected NAME:START:STOP" % spec)
            name, b, e = m.group(1), int(m.group(2)), int(m.group(3))
            if name not in expected or not b < e <= expected[name].size:
                print("FAIL: --skip %s: %s" % (spec, "no such tensor in %s"
                      % args.weights[1] if name not in expected else
                      "not a range of its %d elements"
                      % expected[name].size))
                return 1
            mask = skip.setdefault(name, np.zeros(expected[name].shape, bool))
            mask.reshape(-1)[b:e] = True
        for name, e in expected.items():
            if name not in actual:
                print("FAIL: no tensor %r in %s" % (name, args.weights[0]))
                ok = False
                continue
            a = actual[name]
            if a.shape != e.shape:
                print("FAIL: %s has shape %s, expected %s"
                      % (name, a.shape, e.shape))
                ok = False
                continue
            d = a.astype(np.float64) - e
            if name in skip:
                s = skip[name]
                print("%s: %d of %d elements skipped, max |a - e| there %.3g"
                      % (name, s.sum(), s.size, np.max(np.abs(d[s]))))
                d, e = d[~s], e[~s]
                if e.size == 0:
                    if not np.all(np.isfinite(a)):
                        print("FAIL: %s is not finite" % name)
                        ok = False
                    continue
            err = float(np.linalg.norm(d) / max(np.linalg.norm(e), 1e-30))
            elem = float(np.max(np.abs(d)) / max(np.max(np.abs(e)), 1e-30))
            if not np.all(np.isfinite(a)) or err > args.rtol:
                print("FAIL: %s relative error %.3g" % (name, err))
                ok = False
            worst_w = max(worst_w, (err, name))
            worst_e = max(worst_e, (elem, name))
        print("weights: %d tensors, worst relative error %.3g (%s); "
              "largest elementwise error %.3g of max|w| (%s)"
              % (len(expected), worst_w[0], worst_w[1], worst_e[0],
                 worst_e[1]))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
