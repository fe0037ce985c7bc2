#!/usr/bin/env python3
"""bf16 linear layers of awkward shapes against an exact model of autocast.

For each shape, dlc runs `y = linear(x, N)` with --precision=bf16 (and any
extra dlc flags given on the command line, e.g. --cuda-emulate). autocast's
contract, computed here in float64 with PyTorch's bf16 rounding (round to
nearest even, from fp32; `bf16` below, in NumPy, so that the suite needs no
PyTorch): x, W and b rounded to bf16, products summed exactly, the result rounded to fp32 and
then to bf16. dlc sums in fp32 in its own order, so each output must be
within one bf16 ulp of that reference (a rounding boundary may fall between
the two sums) and most are equal. The shapes cover the dot-product path
(M <= 4), M tiles that the register tile does not divide, several M and N
cache tiles, and N not a multiple of the vector width; each runs through
the 16-bit packing of dlc-tile-and-vectorize, and on a CPU with AVX512_BF16
those whose matmul N is a multiple of 16 through its dot-product kernel.

    check_linear_shapes.py WORKDIR [dlc flags...]
"""
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from safetensors_io import write_safetensors  # noqa: E402

SHAPES = [(3, 40, 24), (5, 64, 8), (6, 100, 37), (9, 512, 512), (64, 784, 256),
          (130, 300, 20), (200, 33, 70), (257, 128, 130),
          # Matmuls whose N (the output features, or the batch when the
          # input is the transposed operand: the last shape) is a multiple
          # of 16 take AVX512_BF16's dot products where the CPU has them:
          # odd K, odd K tiles, several K tiles, M tiles that the 8-row
          # register tile does not divide, N of 16, 32 and 48 columns.
          (40, 45, 32), (32, 37, 48), (66, 33, 96), (48, 1030, 16),
          (64, 2050, 72)]


def bf16(a):
    """fp32 `a` rounded to bf16 (to nearest, ties to even), as float64: what
    PyTorch's `.to(torch.bfloat16)` does to finite fp32 values."""
    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def bf16_ulp(r):
    mag = np.maximum(np.abs(r), np.finfo(np.float32).tiny)
    return np.exp2(np.floor(np.log2(mag)) - 7)


def main():
    work, flags = sys.argv[1], sys.argv[2:]
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(7)
    failed = False
    total = equal = 0
    for b, k, n in SHAPES:
        d = os.path.join(work, "%dx%dx%d" % (b, k, n))
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "m.dlc"), "w") as f:
            f.write("model m\ninput x: f32[%d, %d]\ny = linear(x, %d, name=fc)\n"
                    "output y\n" % (b, k, n))
        x = rng.standard_normal((b, k)).astype(np.float32)
        w = rng.standard_normal((n, k)).astype(np.float32)
        bias = rng.standard_normal((n,)).astype(np.float32)
        write_safetensors(os.path.join(d, "w.safetensors"), {"fc.weight": w, "fc.bias": bias})
        np.save(os.path.join(d, "x.npy"), x)
        subprocess.run(["dlc", "run", os.path.join(d, "m.dlc"), "--precision=bf16", *flags,
                        "--weights", os.path.join(d, "w.safetensors"),
                        "--input", "x=" + os.path.join(d, "x.npy"),
                        "--output", "y=" + os.path.join(d, "y.npy")], check=True)
        y = np.load(os.path.join(d, "y.npy")).astype(np.float64)
        ref = bf16((bf16(x) @ bf16(w).T + bf16(bias)).astype(np.float32))
        off = np.abs(y - ref) / bf16_ulp(ref)
        total += ref.size
        equal += int(np.count_nonzero(y == ref))
        print("%4d x %4d x %4d: %d of %d outputs equal, worst %.2f bf16 ulp"
              % (b, k, n, np.count_nonzero(y == ref), ref.size, off.max()))
        if not np.all(off <= 1.0):
            failed = True
            print("  FAIL: more than one bf16 ulp from autocast's result")
    if failed:
        print("FAIL")
        return 1
    print("ok: %d of %d outputs equal to autocast's result, all within one ulp"
          % (equal, total))
    return 0


if __name__ == "__main__":
    sys.exit(main())
