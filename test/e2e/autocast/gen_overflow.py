#!/usr/bin/env python3
"""Data of overflow_one_gradient.test (NumPy only).

    gen_overflow.py OUTDIR

Writes weights.safetensors for models/overflow_mlp.dlc, with column 500 of
fc1.weight zero, y.npy, x.npy (standard normal) and x_huge.npy (x with
x[3, 500] = 60000, which fp16 holds). The column of zeros keeps the huge
input out of the forward pass, so that the loss, every activation and all
gradients but fc1.weight's stay small; fc1.weight's gradient dH^T x has
60000 times the scaled dH in column 500, beyond fp16's 65504: one
gradient, of 32768 elements, overflows, and torch.amp.GradScaler's rule
skips the step."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from safetensors_io import write_safetensors  # noqa: E402


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(5)
    uniform = lambda shape, bound: rng.uniform(-bound, bound, shape).astype(np.float32)
    w1 = uniform((64, 512), 512 ** -0.5)
    w1[:, 500] = 0
    write_safetensors(os.path.join(out, "weights.safetensors"), {
        "fc1.weight": w1, "fc1.bias": uniform((64,), 512 ** -0.5),
        "fc2.weight": uniform((4, 64), 64 ** -0.5),
        "fc2.bias": uniform((4,), 64 ** -0.5)})
    x = rng.standard_normal((8, 512)).astype(np.float32)
    np.save(os.path.join(out, "x.npy"), x)
    x[3, 500] = 60000
    np.save(os.path.join(out, "x_huge.npy"), x)
    np.save(os.path.join(out, "y.npy"), rng.standard_normal((8, 4)).astype(np.float32))
    return 0


if __name__ == "__main__":
    sys.exit(main())
