#!/usr/bin/env python3
"""A cost model of a data-parallel training step on many GPUs, from the
model's own numbers (`dlc MODEL --stats`) and published hardware figures.

    python3 bench/scaling_model.py [--dlc build/bin/dlc] [MODEL.dlc ...]

For each model and each job (1 GPU; 8 GPUs in one node over NVLink; 64 and
512 GPUs in nodes of 8 over InfiniBand), at the model's batch per GPU:

  compute  = 6 x multiply-adds of one forward pass (forward 2, backward 4)
             / (peak x efficiency)
  all-reduce (ring, hierarchical across nodes) of the fp32 gradients,
  G = 4 x parameters bytes:
    in a node of g GPUs:  2 (g-1)/g x G / B_nvlink + 2 (g-1) x a_nvlink
    across m nodes:       + 2 (m-1)/m x (G/g) / B_ib + 2 (m-1) x a_ib
  step = compute + all-reduce (the all-reduce after the backward pass, as
  dlc does today), and with perfect overlap max(compute, all-reduce).

Prints throughput (rows/s) and the scaling efficiency against N single
GPUs. The figures are below (FIGURES); change them to model another
machine. Not a measurement: docs/distributed.md says how it compares.
"""
import argparse
import os
import re
import subprocess

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

# Published figures (NVIDIA H200 SXM datasheet: 989 TFLOPS dense BF16 tensor
# core, NVLink 900 GB/s per GPU in both directions together; InfiniBand
# NDR: 400 Gb/s per port, one port per GPU), and the share of them a real
# job gets (assumptions, stated as such).
FIGURES = {
    "peak_flops": 989e12,      # BF16 dense, per GPU
    "efficiency": 0.5,         # of peak, for large GEMMs
    "min_step_s": 50e-6,       # a step's floor: kernel launches of a small model
    "nvlink_Bps": 450e9 * 0.8,  # one direction, 80% achieved
    "nvlink_latency_s": 5e-6,  # per ring step
    "ib_Bps": 50e9 * 0.8,      # 400 Gb/s per GPU, 80% achieved
    "ib_latency_s": 10e-6,     # per ring step
    "gpus_per_node": 8,
}


def stats(dlc, model):
    out = subprocess.run([dlc, model, "--stats"], capture_output=True,
                         text=True, check=True).stdout
    batch = int(re.search(r"\(batch (\d+)\)", out).group(1))
    params = int(re.search(r"parameters:\s+([\d,]+)", out).group(1)
                 .replace(",", ""))
    macs = int(re.search(r"multiply-adds:\s+([\d,]+)", out).group(1)
               .replace(",", ""))
    return batch, params, macs


def allreduce_s(grad_bytes, gpus, f):
    g = min(gpus, f["gpus_per_node"])
    m = gpus // g
    t = 0.0
    if g > 1:
        t += 2 * (g - 1) / g * grad_bytes / f["nvlink_Bps"]
        t += 2 * (g - 1) * f["nvlink_latency_s"]
    if m > 1:
        t += 2 * (m - 1) / m * (grad_bytes / g) / f["ib_Bps"]
        t += 2 * (m - 1) * f["ib_latency_s"]
    return t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models", nargs="*",
                    default=[os.path.join(ROOT, "examples/digits.dlc"),
                             os.path.join(ROOT, "examples/big_mlp.dlc")])
    ap.add_argument("--dlc", default=os.path.join(ROOT, "build/bin/dlc"))
    args = ap.parse_args()
    f = FIGURES
    print("| model (batch per GPU) | GPUs | compute (ms) | all-reduce (ms) | "
          "rows/s, after the backward pass | efficiency | rows/s, overlapped "
          "| efficiency |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for model in args.models:
        batch, params, macs = stats(args.dlc, model)
        compute = max(6 * macs / (f["peak_flops"] * f["efficiency"]),
                      f["min_step_s"])
        one = batch / compute
        name = os.path.splitext(os.path.basename(model))[0]
        for gpus in (1, 8, 64, 512):
            comm = allreduce_s(4 * params, gpus, f)
            serial = gpus * batch / (compute + comm)
            overlap = gpus * batch / max(compute, comm)
            print("| %s (%d) | %d | %.3f | %.3f | %s | %.0f%% | %s | %.0f%% |"
                  % (name, batch, gpus, compute * 1e3, comm * 1e3,
                     "{:,.0f}".format(serial), 100 * serial / (gpus * one),
                     "{:,.0f}".format(overlap), 100 * overlap / (gpus * one)))


if __name__ == "__main__":
    main()
