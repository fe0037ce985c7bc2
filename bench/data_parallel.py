#!/usr/bin/env python3
"""Data-parallel training step: dlc on MPI against PyTorch DDP on gloo.

For each model, the same per-rank batch and Adam step, one thread per rank,
each rank pinned to its own core, in one run:

  dlc, 1 rank      dlc run M --train --benchmark R             (taskset -c 0)
  dlc, 2 ranks     mpirun -np 2 --bind-to core dlc run M --train --data-parallel
                   (and with --overlap-comm: buckets of 4 MiB reduced on a
                   communication thread while the backward pass goes on;
                   and with --shard-optimizer-state: ZeRO stage 1)
  PyTorch, 1 rank  an nn.Sequential twin, torch.optim.Adam, eager
  PyTorch DDP      torchrun --nproc-per-node 2, DistributedDataParallel, gloo
                   (and with torch.distributed.optim.ZeroRedundancyOptimizer)

and prints the time per step (minimum and median over the rounds' minima
and medians), the throughput per rank (rows per second), the scaling from
1 to 2 ranks at the same per-rank batch (2 x T1 / T2) and the share of the
2-rank step that the second rank adds (communication and waiting: (T2 - T1)
/ T2). The sides alternate round by round.

    python bench/data_parallel.py [--models digits,wide] [--rounds 3]
        [--reps 200] [--dlc build/bin/dlc]

Needs PyTorch (a virtual environment: bench/peers/README.md) and Open MPI
(mpirun). Not part of the test suite: timings are never asserted.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

# name -> (layer sizes, per-rank batch, timed steps)
MODELS = {
    "digits": ([784, 256, 10], 64, 300),
    "wide": ([784, 2048, 2048, 10], 64, 60),
    "big": ([150528, 4096, 4096, 1000], 64, 3),
}

MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}

DDP_SCRIPT = r'''
import os, statistics, sys, time
import torch, torch.distributed as dist, torch.nn as nn, torch.nn.functional as F
import numpy as np
rank = int(os.environ.get("RANK", "0"))
world = int(os.environ.get("WORLD_SIZE", "1"))
os.sched_setaffinity(0, {rank % os.cpu_count()})
torch.set_num_threads(1)
sizes = [int(s) for s in sys.argv[1].split(",")]
batch, reps = int(sys.argv[2]), int(sys.argv[3])
layers = []
for i in range(len(sizes) - 1):
    layers.append(nn.Linear(sizes[i], sizes[i + 1]))
    if i < len(sizes) - 2:
        layers.append(nn.ReLU())
torch.manual_seed(0)
model = nn.Sequential(*layers)
if world > 1:
    dist.init_process_group("gloo")
    model = nn.parallel.DistributedDataParallel(model)
if world > 1 and len(sys.argv) > 4 and sys.argv[4] == "zero":
    from torch.distributed.optim import ZeroRedundancyOptimizer
    opt = ZeroRedundancyOptimizer(model.parameters(),
                                  optimizer_class=torch.optim.Adam, lr=1e-3)
else:
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
g = torch.Generator().manual_seed(rank)
x = torch.rand(batch, sizes[0], generator=g)
y = torch.randint(0, sizes[-1], (batch,), generator=g)
def step():
    opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
for _ in range(3):
    step()
ms = []
for _ in range(reps):
    if world > 1:
        dist.barrier()
    t0 = time.perf_counter()
    step()
    ms.append((time.perf_counter() - t0) * 1e3)
if rank == 0:
    print("min %.4f median %.4f" % (min(ms), statistics.median(ms)))
if world > 1 and isinstance(opt, torch.optim.Adam):
    dist.destroy_process_group()
else:
    # ZeroRedundancyOptimizer on gloo aborts when its process group is
    # destroyed ("terminate called without an active exception").
    sys.stdout.flush()
    os._exit(0)
'''


def dlc_model(path, sizes):
    lines = ["model mlp", "input x: f32[%d, %d]" % (64, sizes[0]),
             "label y: i64[%d]" % 64]
    prev = "x"
    for i, n in enumerate(sizes[1:]):
        last = i == len(sizes) - 2
        expr = "linear(%s, %d, name=fc%d)" % (prev, n, i + 1)
        name = "logits" if last else "h%d" % (i + 1)
        lines.append("%s = %s" % (name, expr if last else "relu(%s)" % expr))
        prev = name
    lines += ["output logits", "loss cross_entropy(logits, y)",
              "optim adam(lr=1e-3)"]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def parse(out, pattern):
    m = re.search(pattern, out)
    if not m:
        sys.exit("no timing in:\n" + out)
    return float(m.group(1)), float(m.group(2))


def run(cmd, env=None):
    proc = subprocess.run(cmd, env=dict(os.environ, **(env or {})),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
    if proc.returncode:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), proc.stdout))
    return proc.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="digits,wide")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=0,
                    help="timed steps per run (default: per model)")
    ap.add_argument("--dlc", default=os.path.join(ROOT, "build/bin/dlc"))
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="dlc-dp-")
    script = os.path.join(work, "ddp.py")
    with open(script, "w") as f:
        f.write(DDP_SCRIPT)
    py = sys.executable
    torchrun = os.path.join(os.path.dirname(py), "torchrun")
    dlc_re = r"min ([0-9.]+) ms, median ([0-9.]+) ms"
    torch_re = r"min ([0-9.]+) median ([0-9.]+)"
    print("| model | per-rank batch | side | 1 rank (ms, min / median) | "
          "2 ranks (ms) | rows/s per rank, 2 ranks | scaling 1 -> 2 | "
          "added by the 2nd rank |")
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    for name in args.models.split(","):
        sizes, batch, reps = MODELS[name]
        reps = args.reps or reps
        model = os.path.join(work, name + ".dlc")
        dlc_model(model, sizes)
        rng = np.random.default_rng(0)
        files = {}
        for ranks in (1, 2):
            x = rng.random((batch * ranks, sizes[0]), dtype=np.float32)
            y = rng.integers(0, sizes[-1], batch * ranks).astype(np.int64)
            files[ranks] = (os.path.join(work, "%s_x%d.npy" % (name, ranks)),
                            os.path.join(work, "%s_y%d.npy" % (name, ranks)))
            np.save(files[ranks][0], x)
            np.save(files[ranks][1], y)
        times = {k: [] for k in ("dlc1", "dlc2", "dlc2o", "dlc2z", "torch1",
                                 "ddp2", "zero2")}
        for _ in range(args.rounds):
            x1, y1 = files[1]
            x2, y2 = files[2]
            common = ["--train", "--seed", "0", "--benchmark", str(reps)]
            times["dlc1"].append(parse(run(
                ["taskset", "-c", "0", args.dlc, "run", model, "--batch",
                 str(batch), "--input", "x=" + x1, "--input", "y=" + y1] +
                common, {"DLC_NUM_THREADS": "1"}), dlc_re))
            times["torch1"].append(parse(run(
                [py, script, ",".join(map(str, sizes)), str(batch), str(reps)],
                {"OMP_NUM_THREADS": "1"}), torch_re))
            times["dlc2"].append(parse(run(
                ["mpirun", "--oversubscribe", "--bind-to", "core", "-np", "2",
                 "-x", "DLC_NUM_THREADS=1", args.dlc, "run", model,
                 "--data-parallel", "--input", "x=" + x2, "--input",
                 "y=" + y2] + common, MPI_ENV), dlc_re))
            times["dlc2o"].append(parse(run(
                ["mpirun", "--oversubscribe", "--bind-to", "core", "-np", "2",
                 "-x", "DLC_NUM_THREADS=1", args.dlc, "run", model,
                 "--data-parallel", "--overlap-comm", "--bucket-mb", "4",
                 "--input", "x=" + x2, "--input", "y=" + y2] + common,
                MPI_ENV), dlc_re))
            times["dlc2z"].append(parse(run(
                ["mpirun", "--oversubscribe", "--bind-to", "core", "-np", "2",
                 "-x", "DLC_NUM_THREADS=1", args.dlc, "run", model,
                 "--data-parallel", "--shard-optimizer-state",
                 "--input", "x=" + x2, "--input", "y=" + y2] + common,
                MPI_ENV), dlc_re))
            times["ddp2"].append(parse(run(
                [torchrun, "--nproc-per-node", "2", "--master-port", "29517",
                 script, ",".join(map(str, sizes)), str(batch), str(reps)],
                {"OMP_NUM_THREADS": "1"}), torch_re))
            times["zero2"].append(parse(run(
                [torchrun, "--nproc-per-node", "2", "--master-port", "29517",
                 script, ",".join(map(str, sizes)), str(batch), str(reps),
                 "zero"], {"OMP_NUM_THREADS": "1"}), torch_re))
        best = {k: (min(t[0] for t in v),
                    statistics.median(t[1] for t in v))
                for k, v in times.items()}
        for side, one, two in (("dlc", "dlc1", "dlc2"),
                               ("dlc, --overlap-comm", "dlc1", "dlc2o"),
                               ("dlc, --shard-optimizer-state", "dlc1",
                                "dlc2z"),
                               ("PyTorch DDP (gloo)", "torch1", "ddp2"),
                               ("DDP + ZeroRedundancyOptimizer", "torch1",
                                "zero2")):
            t1, t2 = best[one][0], best[two][0]
            print("| %s | %d | %s | %.3f / %.3f | %.3f / %.3f | %.0f | %.2fx "
                  "| %.0f%% |" % (
                      name, batch, side, best[one][0], best[one][1],
                      best[two][0], best[two][1], batch / t2 * 1e3,
                      2 * t1 / t2, 100 * max(t2 - t1, 0) / t2))
        print("| %s | | dlc / DDP, 2 ranks (min) | | %.2f | | | |" % (
            name, best["dlc2"][0] / best["ddp2"][0]))
        print("| %s | | dlc ZeRO-1 / DDP ZeRO, 2 ranks (min) | | %.2f | | | |"
              % (name, best["dlc2z"][0] / best["zero2"][0]))


if __name__ == "__main__":
    main()
