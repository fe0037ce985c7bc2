#!/usr/bin/env python3
"""Memory of a training step: dlc's compile-time plan vs PyTorch's measured
peak, side by side.

    /usr/bin/python3 bench/memory.py [--models toy,digits,big]

For each model (Adam, fp32): dlc's plan from `dlc MODEL --train
--memory-report=json` (the peak of train_step: params and optimizer state,
the workspace, the inputs and outputs; and the workspace's reuse factor:
the sum of its buffers over its size), and PyTorch eager's peak resident
memory while it trains the same model on the same batch for three steps,
measured in a fresh process as the rise of its peak RSS over what it had
before creating the model (the batch is created first, as dlc counts it
too). The big image MLP needs about 10 GB in each. Not part of the test
suite: never asserted.
"""
import argparse
import json
import os
import subprocess
import sys

from train_step import MODELS  # the same models, sizes and batches

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(BENCH, "..")

TORCH = r"""
import resource, sys, torch, torch.nn.functional as F
sizes, loss_kind, batch = eval(sys.argv[1]), sys.argv[2], int(sys.argv[3])
sys.path.insert(0, sys.argv[4])
from train_step import torch_mlp
torch.set_num_threads(1)
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096
x = torch.randn(batch, sizes[0])
y = torch.randn(batch, sizes[-1]) if loss_kind == "mse" else torch.randint(0, sizes[-1], (batch,))
base = rss()
model = torch_mlp(sizes)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
fn = F.mse_loss if loss_kind == "mse" else F.cross_entropy
for _ in range(3):
    opt.zero_grad()
    loss = fn(model(x), y)
    loss.backward()
    opt.step()
    loss.item()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(peak - base + x.numel() * 4 + y.numel() * y.element_size())
"""


def human(n):
    for unit in ["B", "KiB", "MiB", "GiB"]:
        if abs(n) < 1024 or unit == "GiB":
            return "%.2f %s" % (n, unit) if unit != "B" else "%d B" % n
        n /= 1024.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dlc", default=os.path.join(ROOT, "build", "bin", "dlc"))
    ap.add_argument("--models", default="toy,digits,big")
    args = ap.parse_args()
    print("%-7s %14s %14s %8s %14s %10s" % ("model", "dlc plan", "buffers", "reuse",
                                           "torch peak", "torch/dlc"))
    for name in args.models.split(","):
        model, sizes, loss_kind, batch, _ = MODELS[name]
        report = json.loads(subprocess.run(
            [args.dlc, os.path.join(ROOT, model), "--train", "--memory-report=json"],
            check=True, capture_output=True, text=True).stdout)
        step = report["entries"]["train_step"]
        plan = step["peak"]
        reuse = step["buffers_without_reuse"] / max(step["workspace"], 1)
        torch_peak = int(subprocess.run(
            [sys.executable, "-c", TORCH, repr(sizes), loss_kind, str(batch), BENCH],
            check=True, capture_output=True, text=True).stdout)
        print("%-7s %14s %14s %8.2f %14s %10.2f" % (
            name, human(plan), human(step["buffers_without_reuse"]), reuse,
            human(torch_peak), torch_peak / plan), flush=True)


if __name__ == "__main__":
    main()
