#!/usr/bin/env python3
"""1024^3 fp32 matmul, one core: dlc vs OpenBLAS (NumPy) vs PyTorch, same run.

Run with Debian's Python (numpy, torch): /usr/bin/python3 bench/matmul.py
It writes random inputs, times `dlc run --benchmark` (compiled for this CPU)
and the peers with the same thread count, and prints GFLOP/s and ratios.
Not part of the test suite: timings are never asserted.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

N = 1024
FLOP = 2.0 * N ** 3


def best_of(fn, reps):
    fn()
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dlc", default=os.path.join(os.path.dirname(__file__), "..", "build", "bin", "dlc"))
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    threads = str(args.threads)
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((N, N), dtype=np.float32)
    b = rng.standard_normal((N, N), dtype=np.float32)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        np.save(os.path.join(tmp, "a.npy"), a)
        np.save(os.path.join(tmp, "b.npy"), b)
        env = dict(os.environ, DLC_NUM_THREADS=threads)
        out = subprocess.run(
            [args.dlc, "run", os.path.join(root, "examples", "matmul.dlc"),
             "--input", "a=" + os.path.join(tmp, "a.npy"),
             "--input", "b=" + os.path.join(tmp, "b.npy"),
             "--output", "c=" + os.path.join(tmp, "c.npy"),
             "--benchmark", str(args.reps)],
            env=env, check=True, capture_output=True, text=True).stdout
        ms = float(re.search(r"min ([0-9.]+) ms", out).group(1))
        results["dlc"] = FLOP / (ms * 1e-3) / 1e9
        c = np.load(os.path.join(tmp, "c.npy"))
        ref = a.astype(np.float64) @ b.astype(np.float64)
        err = np.abs(c - ref).max() / np.abs(ref).max()
    # Peers in child processes so that their thread settings take effect.
    peer = r'''
import sys, time, numpy as np
N = 1024
a = np.random.default_rng(0).standard_normal((N, N), dtype=np.float32)
b = np.random.default_rng(1).standard_normal((N, N), dtype=np.float32)
which, reps = sys.argv[1], int(sys.argv[2])
if which == "torch":
    import torch
    torch.set_num_threads(int(sys.argv[3]))
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    fn = lambda: torch.mm(ta, tb)
else:
    fn = lambda: a @ b
fn()
best = min((lambda t: (fn(), time.perf_counter() - t)[1])(time.perf_counter()) for _ in range(reps))
print(2.0 * N ** 3 / best / 1e9)
'''
    penv = dict(os.environ, OPENBLAS_NUM_THREADS=threads, OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads)
    for name in ["openblas", "torch"]:
        try:
            r = subprocess.run([sys.executable, "-c", peer, "torch" if name == "torch" else "numpy",
                                str(args.reps), threads], env=penv, check=True,
                               capture_output=True, text=True)
            results[name] = float(r.stdout.strip())
        except (subprocess.CalledProcessError, ValueError) as e:
            print(f"{name}: unavailable ({e})", file=sys.stderr)
    print(f"1024^3 fp32 matmul, {threads} thread(s), best of {args.reps}; dlc max rel. error {err:.2e}")
    for name, g in results.items():
        print(f"  {name:9s} {g:7.1f} GFLOP/s   dlc/{name} = {results['dlc'] / g:.2f}")


if __name__ == "__main__":
    main()
