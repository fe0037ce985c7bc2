#!/usr/bin/env python3
"""Inputs and references of large_reductions.test, written at test time
(1.2 MB an input: too large to commit).

    gen_large_reductions.py OUTDIR

Writes OUTDIR/normal/ (x standard normal, seed 11) and OUTDIR/ones/ (x all
ones, whose sums fp32 holds exactly: a dropped or doubled element shows as
an integer off), each with x.npy and the references rows.npy, total.npy and
avg.npy, computed in float64 and stored as float32 (NumPy: a sum needs no
PyTorch to be exact)."""
import os
import sys

import numpy as np

SHAPE = (3, 100000)


def write(out, x):
    os.makedirs(out, exist_ok=True)
    np.save(os.path.join(out, "x.npy"), x)
    x64 = x.astype(np.float64)
    refs = {"rows": x64.sum(axis=1), "total": x64.sum(), "avg": x64.mean()}
    for name, value in refs.items():
        np.save(os.path.join(out, name + ".npy"),
                np.asarray(value, dtype=np.float32))


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(11)
    write(os.path.join(out, "normal"),
          rng.standard_normal(SHAPE).astype(np.float32))
    write(os.path.join(out, "ones"), np.ones(SHAPE, dtype=np.float32))
    return 0


if __name__ == "__main__":
    sys.exit(main())
