#!/usr/bin/env python3
"""An epoch of training on scikit-learn's digits: dlc's `Model.fit` against
PyTorch's DataLoader loop, eager and under torch.compile, one run.

The model of examples/python/digits8x8.dlc (64-128-10 MLP, ReLU, Adam
lr=1e-3, cross entropy), the 1,438 training images of
examples/python/train_digits.py's split, batches of 64 shuffled every epoch,
THREADS threads for everybody (DLC_NUM_THREADS, torch.set_num_threads).
Each side trains EPOCHS epochs; the time of each epoch is measured (dlc:
around each fit(epochs=1) call with progress off; PyTorch: around the
DataLoader loop of zero_grad, forward, loss, backward, step), and the
minimum and median over the epochs after the first (torch.compile's first
epoch compiles) are printed with the ratios torch/dlc (> 1: dlc is faster).
Not part of the test suite. Needs torch (2.x for torch.compile) and
scikit-learn:

    PYTHONPATH=python DLC_COMPILER=build/bin/dlc VENV/bin/python bench/python_fit.py [--threads 1] [--epochs 8]
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "python"))


def load(seed=0):
    from sklearn.datasets import load_digits
    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32)
    y = y.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(x))
    train = order[len(x) // 5:]
    return x[train], y[train]


def summary(times):
    rest = times[1:] if len(times) > 1 else times
    return min(rest), statistics.median(rest)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--epochs", type=int, default=8)
    args = ap.parse_args()
    os.environ["DLC_NUM_THREADS"] = str(args.threads)
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import dlc
    torch.set_num_threads(args.threads)
    x, y = load()
    batch = 64

    m = dlc.compile(os.path.join(ROOT, "examples", "python", "digits8x8.dlc"),
                    batch=batch, seed=0,
                    train=dlc.Train(loss="cross_entropy",
                                    optimizer=dlc.Adam(lr=1e-3)))
    times = {"dlc fit": []}
    for e in range(args.epochs):
        t = time.perf_counter()
        m.fit(x, y, epochs=1, batch_size=batch, shuffle=True, seed=e,
              progress=False)
        times["dlc fit"].append((time.perf_counter() - t) * 1e3)

    ds = torch.utils.data.TensorDataset(torch.from_numpy(x),
                                        torch.from_numpy(y))

    def torch_run(name, compiled):
        torch.manual_seed(0)
        net = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
        opt = torch.optim.Adam(net.parameters(), lr=1e-3)
        step_model = torch.compile(net) if compiled else net
        loader = torch.utils.data.DataLoader(
            ds, batch_size=batch, shuffle=True,
            generator=torch.Generator().manual_seed(0))
        times[name] = []
        for _ in range(args.epochs):
            t = time.perf_counter()
            for xb, yb in loader:
                opt.zero_grad()
                F.cross_entropy(step_model(xb), yb).backward()
                opt.step()
            times[name].append((time.perf_counter() - t) * 1e3)

    torch_run("PyTorch eager", False)
    try:
        torch_run("torch.compile", True)
    except Exception as e:  # noqa: BLE001 - no compiler toolchain, old torch
        print("torch.compile: n/a (%s)" % str(e).splitlines()[0][:80])
    d = summary(times["dlc fit"])[0]
    print("digits, %d samples, batch %d, %d thread(s), torch %s" %
          (len(x), batch, args.threads, torch.__version__))
    print("| | ms per epoch (min / median) | samples/s | ratio to dlc |")
    print("|---|---|---|---|")
    for name, ts in times.items():
        lo, med = summary(ts)
        print("| %s | %.2f / %.2f | %.0f | %.1f |" % (
            name, lo, med, len(x) / lo * 1e3, lo / d))


if __name__ == "__main__":
    main()
