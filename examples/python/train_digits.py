#!/usr/bin/env python3
"""Train an MLP on scikit-learn's handwritten digits with dlc, and the same
loop in PyTorch from the same initial weights in the same batch order.

The data set (1,797 8x8 images) ships inside scikit-learn: nothing is
downloaded. The model is digits8x8.dlc (64 -> 128 -> ReLU -> 10); dlc
initialises it, and the PyTorch twin starts from those weights. Both train
with Adam and cross-entropy, in batches of 64 visited in the order of
np.random.default_rng(seed).permutation(n) per epoch (dlc's `fit` order),
and are evaluated on the same 20% held out.

  python3 examples/python/train_digits.py [--epochs 30] [--plot loss.png]

Needs the dlc package (pip install ./python, or PYTHONPATH=python) with the
tools found (DLC_COMPILER, or dlc on PATH), NumPy and scikit-learn; PyTorch
for the comparison and matplotlib for the plot, when installed.
"""
import argparse
import os
import sys
import time

import numpy as np

import dlc

HERE = os.path.dirname(os.path.abspath(__file__))


def load_data(seed):
    from sklearn.datasets import load_digits
    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32)
    y = y.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(x))
    n_val = len(x) // 5
    val, train = order[:n_val], order[n_val:]
    return x[train], y[train], x[val], y[val]


def train_dlc(args, data):
    x, y, xv, yv = data
    m = dlc.compile(os.path.join(HERE, "digits8x8.dlc"), batch=args.batch,
                    device=args.device, seed=args.seed,
                    train=dlc.Train(loss="cross_entropy",
                                    optimizer=dlc.Adam(lr=args.lr)))
    print(f"dlc: model {m.name} on {m.device}, batch {m.batch_size}")
    init = m.state_dict()
    hist = m.fit(x, y, epochs=args.epochs, shuffle=True, seed=args.seed,
                 validation=(xv, yv), progress=not args.quiet)
    return init, hist


def train_torch(args, data, init):
    """PyTorch's loop: the same weights, batches, optimizer and loss."""
    import torch

    class Digits(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Linear(64, 128)
            self.fc2 = torch.nn.Linear(128, 10)

        def forward(self, x):
            return self.fc2(torch.relu(self.fc1(x)))

    x, y, xv, yv = (torch.from_numpy(a) for a in data)
    net = Digits()
    net.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    opt = torch.optim.Adam(net.parameters(), lr=args.lr, foreach=False)
    rng = np.random.default_rng(args.seed)
    n, b = len(x), args.batch
    hist = {"loss": [], "val_loss": [], "val_accuracy": [],
            "samples_per_s": []}
    for _ in range(args.epochs):
        t0 = time.perf_counter()
        order = torch.from_numpy(rng.permutation(n))
        total = 0.0
        for lo in range(0, n, b):
            idx = order[lo:lo + b]
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(net(x[idx]), y[idx])
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
        hist["samples_per_s"].append(n / (time.perf_counter() - t0))
        hist["loss"].append(total / n)
        with torch.no_grad():
            logits = net(xv)
            hist["val_loss"].append(
                torch.nn.functional.cross_entropy(logits, yv).item())
            hist["val_accuracy"].append(
                (logits.argmax(1) == yv).double().mean().item())
    return hist


def plot(path, runs):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"--plot {path}: matplotlib is not installed (Debian: "
              "python3-matplotlib)", file=sys.stderr)
        return
    fig, ax = plt.subplots(figsize=(7, 4))
    # PyTorch's points fall on dlc's lines: markers, so both are seen.
    styles = {"dlc": ("-", "--", None), "PyTorch": ("", "", "o")}
    for name, h in runs.items():
        epochs = range(1, len(h["loss"]) + 1)
        train, val, marker = styles[name]
        line, = ax.plot(epochs, h["loss"], linestyle=train, marker=marker,
                        markersize=4, label=f"{name} train")
        ax.plot(epochs, h["val_loss"], linestyle=val, marker=marker and "x",
                markersize=4, color=line.get_color(),
                label=f"{name} validation")
    ax.set_xlabel("epoch")
    ax.set_ylabel("cross-entropy loss")
    ax.set_yscale("log")
    ax.set_title("MLP on scikit-learn's digits")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--no-torch", action="store_true",
                    help="skip the PyTorch comparison")
    ap.add_argument("--plot", metavar="PNG", help="plot the loss curves")
    ap.add_argument("--quiet", action="store_true", help="no progress bar")
    args = ap.parse_args()

    data = load_data(args.seed)
    print(f"digits: {len(data[0])} training and {len(data[2])} validation "
          "images of 8x8")
    init, runs = None, {}
    init, runs["dlc"] = train_dlc(args, data)
    if not args.no_torch:
        import importlib.util
        if importlib.util.find_spec("torch") is None:
            print("PyTorch is not installed: no comparison")
        else:
            runs["PyTorch"] = train_torch(args, data, init)

    # samples/s: the training of an epoch (not the validation), the median
    # over the epochs.
    print(f"\n{'':10} {'val accuracy':>12} {'val loss':>10} "
          f"{'train loss':>10} {'samples/s':>10}")
    for name, h in runs.items():
        print(f"{name:10} {h['val_accuracy'][-1]:12.4f} "
              f"{h['val_loss'][-1]:10.4f} {h['loss'][-1]:10.4f} "
              f"{np.median(h['samples_per_s']):10,.0f}")
    if "PyTorch" in runs:
        diff = max(abs(a - b) / b for a, b in zip(runs["dlc"]["loss"],
                                                  runs["PyTorch"]["loss"]))
        print(f"largest relative difference of the epoch losses: {diff:.2e}")
    if args.plot:
        plot(args.plot, runs)
    return 0 if runs["dlc"]["val_accuracy"][-1] >= 0.95 else 1


if __name__ == "__main__":
    sys.exit(main())
