#!/usr/bin/env python3
"""Training step, dlc's compiled train_step vs PyTorch eager, side by side.

Same model, batch, loss, optimizer and thread count in one run, for the
lesson's toy net (batch 16), the digits MLP (batch 64) and the big image MLP
(batch 64, ~10 GB with Adam: needs the memory for one of the two at a time),
and on request a 66-layer MLP of width 16 (batch 8).
Reports the time per step (min and median), the ratio, and the fraction of
the CPU's fp32 FMA peak each step reaches.

    /usr/bin/python3 bench/train_step.py [--models toy,digits,big]
        [--threads 1,2] [--reps N] [--peak-gflops G] [--precision fp32|bf16|both]

With bf16, dlc compiles with --precision=bf16 and PyTorch runs its forward
pass and loss under torch.autocast(device_type="cpu", dtype=torch.bfloat16).

The FLOPs of a step are 6 x the forward pass's multiply-adds (forward 2,
backward 4), read from `dlc MODEL --stats`. The fp32 FMA peak of one core
is measured by bench/fma_peak.c (compiled with the system's cc for the
native CPU) unless --peak-gflops gives it; the last column is the step's
time over the time that peak allows (1.0 = at peak). Not part of the test
suite: timings are never asserted.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

# name -> (model file, layer sizes, loss, batch, timed reps)
MODELS = {
    "toy": ("examples/toy.dlc", [10, 32, 1], "mse", 16, 2000),
    "digits": ("examples/digits.dlc", [784, 256, 10], "cross_entropy", 64, 300),
    "big": ("examples/big_mlp.dlc", [150528, 4096, 4096, 1000], "cross_entropy", 64, 3),
    # 66 hidden layers of 16 (dlc-share-repeated-loops): --models deep.
    "deep": ("test/dlc/Inputs/deep_mlp.dlc", [16] * 67 + [4], "cross_entropy", 8, 2000),
}


def torch_mlp(sizes):
    """The PyTorch twin of the models above: Linear and ReLU layers."""
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def torch_step_times(sizes, loss_kind, batch, threads, reps, precision="fp32"):
    torch.manual_seed(0)
    torch.set_num_threads(threads)
    model = torch_mlp(sizes)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(batch, sizes[0])
    if loss_kind == "mse":
        y, loss_fn = torch.randn(batch, sizes[-1]), F.mse_loss
    else:
        y, loss_fn = torch.randint(0, sizes[-1], (batch,)), F.cross_entropy

    def step():
        opt.zero_grad()
        if precision == "bf16":
            with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
                loss = loss_fn(model(x), y)
        else:
            loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()  # the lesson's loss.item(): the step is done

    for _ in range(3):
        step()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        step()
        times.append((time.perf_counter() - t) * 1e3)
    del model, opt
    return min(times), statistics.median(times)


def dlc_step_times(dlc, model, sizes, loss_kind, batch, threads, reps, tmp,
                   precision="fp32"):
    x = np.random.default_rng(0).standard_normal((batch, sizes[0]), np.float32)
    if loss_kind == "mse":
        y = np.random.default_rng(1).standard_normal((batch, sizes[-1]), np.float32)
    else:
        y = np.random.default_rng(1).integers(0, sizes[-1], batch, dtype=np.int64)
    np.save(os.path.join(tmp, "x.npy"), x)
    np.save(os.path.join(tmp, "y.npy"), y)
    env = dict(os.environ, DLC_NUM_THREADS=str(threads))
    out = subprocess.run(
        [dlc, "run", os.path.join(ROOT, model), "--train", "--seed", "0",
         "--precision=" + precision,
         "--input", "x=" + os.path.join(tmp, "x.npy"),
         "--input", "y=" + os.path.join(tmp, "y.npy"),
         "--benchmark", str(reps)],
        env=env, check=True, capture_output=True, text=True).stdout
    m = re.search(r"min ([0-9.]+) ms, median ([0-9.]+) ms", out)
    return float(m.group(1)), float(m.group(2))


def forward_macs(dlc, model):
    out = subprocess.run([dlc, os.path.join(ROOT, model), "--stats"],
                         check=True, capture_output=True, text=True).stdout
    return int(re.search(r"multiply-adds:\s+([0-9,]+)", out).group(1).replace(",", ""))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dlc", default=os.path.join(ROOT, "build", "bin", "dlc"))
    ap.add_argument("--models", default="toy,digits,big")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--reps", type=int, default=0, help="timed steps (default: per model)")
    ap.add_argument("--precision", default="fp32",
                    help="fp32, bf16 (dlc --precision=bf16 vs torch.autocast bf16), or both")
    ap.add_argument("--peak-gflops", type=float, default=0.0,
                    help="fp32 FMA peak of one core, GFLOP/s (default: measured)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if not args.peak_gflops:
            exe = os.path.join(tmp, "fma_peak")
            subprocess.run(["cc", "-O2", "-march=native",
                            os.path.join(ROOT, "bench", "fma_peak.c"), "-o", exe],
                           check=True)
            args.peak_gflops = float(subprocess.run([exe], check=True, capture_output=True,
                                                    text=True).stdout)
        print("PyTorch %s (mkldnn %s), Adam, fp32; times per step in ms (min / median);"
              % (torch.__version__, torch.backends.mkldnn.is_available()))
        print("FMA peak %.1f GFLOP/s per core; 'x peak' = min time / time at peak"
              % args.peak_gflops)
        print("%-12s %3s  %19s  %19s  %9s  %15s" % ("model", "thr", "dlc", "torch eager",
                                                   "torch/dlc", "x peak dlc/torch"))
        for name in args.models.split(","):
            model, sizes, loss_kind, batch, reps = MODELS[name]
            reps = args.reps or reps
            flops = 6 * forward_macs(args.dlc, model)
            precisions = ["fp32", "bf16"] if args.precision == "both" else [args.precision]
            for threads in [int(t) for t in args.threads.split(",")]:
                for prec in precisions:
                    d = dlc_step_times(args.dlc, model, sizes, loss_kind, batch, threads,
                                       reps, tmp, prec)
                    t = torch_step_times(sizes, loss_kind, batch, threads, reps, prec)
                    at_peak_ms = flops / (args.peak_gflops * 1e9 * threads) * 1e3
                    label = name if prec == "fp32" else name + "/bf16"
                    print("%-12s %3d  %8.3f / %8.3f  %8.3f / %8.3f  %9.2f  %6.2f / %6.2f"
                          % (label, threads, d[0], d[1], t[0], t[1], t[0] / d[0],
                             d[0] / at_peak_ms, t[0] / at_peak_ms), flush=True)


if __name__ == "__main__":
    main()
