#!/usr/bin/env python3
"""Inputs and references of large_reductions.test, written at test time
(1.2 MB an input: too large to commit).

    gen_large_reductions.py OUTDIR

Writes OUTDIR/normal/ (x and z standard normal, seed 11) and OUTDIR/ones/
(all ones, whose sums fp32 holds exactly: a dropped or doubled element
shows as an integer off), each with x.npy, z.npy and the references
rows.npy, total.npy, avg.npy and mid.npy, computed in float64 and stored as
float32 (NumPy: a sum needs no PyTorch to be exact)."""
import os
import sys

import numpy as np

SHAPE = (3, 100000)
Z_SHAPE = (40, 3, 1000)


def write(out, x, z):
    os.makedirs(out, exist_ok=True)
    np.save(os.path.join(out, "x.npy"), x)
    np.save(os.path.join(out, "z.npy"), z)
    x64 = x.astype(np.float64)
    refs = {"rows": x64.sum(axis=1), "total": x64.sum(), "avg": x64.mean(),
            "mid": z.astype(np.float64).sum(axis=(0, 2))}
    for name, value in refs.items():
        np.save(os.path.join(out, name + ".npy"),
                np.asarray(value, dtype=np.float32))


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(11)
    write(os.path.join(out, "normal"),
          rng.standard_normal(SHAPE).astype(np.float32),
          rng.standard_normal(Z_SHAPE).astype(np.float32))
    write(os.path.join(out, "ones"), np.ones(SHAPE, dtype=np.float32),
          np.ones(Z_SHAPE, dtype=np.float32))
    return 0


if __name__ == "__main__":
    sys.exit(main())
