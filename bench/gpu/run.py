#!/usr/bin/env python3
"""Runs the GPU benchmark bundle (bench/gpu/make_bench.py) and reports dlc's
training steps side by side with PyTorch's, as ratios.

  run.py BUNDLE [--device cuda|cpu] [--models a,b] [--runs N] [--no-compile]
         [--no-pageable]

Each model's step_bench runs on the device, with its inputs and outputs in
pinned memory (as PyTorch's side pins its batch) and again in malloc'd
memory; then torch_steps.py, if PyTorch is installed, times the same steps
eager, compiled (torch.compile's default mode) and compiled with mode
"reduce-overhead" (compile-ro: CUDA graphs, the optimizer's step compiled
too), and the big MLP's GEMMs alone. Two tables give, per model, the
median microseconds of each and speedups of dlc over PyTorch: whole steps
(the batch copied in), and the step alone (dlc's entry between CUDA events;
PyTorch's with the batch on the device). For the big MLP: the GEMMs alone over dlc's step alone
(the share of cuBLASLt's speed that the step reaches), and the GEMMs plus
PyTorch's fused Adam alone over it (the optimizer's memory traffic bounds
the GEMMs' share of any step)."""
import argparse
import os
import re
import subprocess
import sys

# A device is named "cpu" or "cuda:0 (NVIDIA H200)".
DEVICE = r"\S+(?: \([^)]*\))?"
LINE = re.compile(r"(?:step_bench|torch): (\S+) (?:\S+ on (" + DEVICE + r")|(\S+)): "
                  r"min ([\d.]+) us, median ([\d.]+) us")
ENTRY = re.compile(r"step_bench: \S+ \S+ on " + DEVICE + r": entry alone: "
                   r"min ([\d.]+) us, median ([\d.]+) us")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("bundle")
    p.add_argument("--device", default="cuda")
    p.add_argument("--models", default=None)
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--no-pageable", action="store_true",
                   help="skip the steps from malloc'd buffers")
    args = p.parse_args()
    names = sorted(os.listdir(os.path.join(args.bundle, "bin")))
    if args.models:
        names = [n for n in names if n in args.models.split(",")]
    median = {}  # (model, mode) -> us

    def step_bench(name, *flags):
        """Runs a model's step_bench; its output, or None if it failed."""
        r = subprocess.run([os.path.join(args.bundle, "bin", name), "--device",
                            args.device, "--runs", str(args.runs), *flags],
                           capture_output=True, text=True)
        sys.stdout.write(r.stdout + r.stderr)
        return None if r.returncode or not LINE.search(r.stdout) else r.stdout

    failed = False
    for name in names:
        out = step_bench(name)
        if out is None:
            failed = True
            continue
        median[(name, "dlc")] = float(LINE.search(out).group(5))
        m = ENTRY.search(out)
        if m:
            median[(name, "dlc-entry")] = float(m.group(2))
        # The same step from malloc'd buffers: what pinning the batch saves.
        if args.no_pageable:
            continue
        out = step_bench(name, "--pageable")
        if out is None:
            failed = True
            continue
        median[(name, "pageable")] = float(LINE.search(out).group(5))
    torch_cmd = [sys.executable, os.path.join(args.bundle, "torch_steps.py"),
                 "--device", args.device, "--models", ",".join(names),
                 "--runs", str(args.runs)]
    if args.no_compile:
        torch_cmd.append("--no-compile")
    try:
        r = subprocess.run(torch_cmd, capture_output=True, text=True)
        sys.stdout.write(r.stdout + r.stderr)
        for m in LINE.finditer(r.stdout):
            median[(m.group(1), m.group(3))] = float(m.group(5))
    except OSError as e:
        print("torch: not run:", e)
    fmt = lambda v: f"{v:10.1f}" if v else "         -"
    for title, dlc_key, suffix in (
            ("whole steps: the batch copied in, the loss out", "dlc", ""),
            ("the step alone: dlc's entry (on CUDA its graph, between CUDA "
             "events), PyTorch's with the batch on the device",
             "dlc-entry", "-resident")):
        print(f"\n{title}\n"
              "model          dlc us   eager us  compile us  compile-ro us"
              "  eager/dlc  compile/dlc  compile-ro/dlc")
        for name in names:
            dlc = median.get((name, dlc_key))
            cells = [median.get((name, k + suffix))
                     for k in ("eager", "compile", "reduce-overhead")]
            ratio = (lambda v, w: f"{v / dlc:{w}.2f}x" if v and dlc
                     else " " * w + "-")
            print(f"{name:12s} {fmt(dlc)} {fmt(cells[0])} {fmt(cells[1])}"
                  f"    {fmt(cells[2])} {ratio(cells[0], 10)} "
                  f"{ratio(cells[1], 11)} {ratio(cells[2], 14)}")
    print()
    for name in names:
        dlc = median.get((name, "dlc-entry"))
        whole, pageable = median.get((name, "dlc")), median.get((name, "pageable"))
        if pageable and whole:
            print(f"{name:12s} from pageable buffers: {pageable:.1f} us, "
                  f"{pageable / whole:.2f}x the step from pinned ones")
        gemms = median.get((name, "gemms"))
        if gemms and dlc:
            print(f"{name:12s} GEMMs alone {gemms:.1f} us: {100 * gemms / dlc:.0f}% "
                  f"of dlc's step alone (goal: >= 80%)")
        adam = median.get((name, "adam"))
        if gemms and adam and dlc:
            # The optimizer reads and writes every parameter's fp32 state
            # (28 bytes a parameter): memory-bound, it bounds the share the
            # GEMMs can have of any step, dlc's or PyTorch's.
            print(f"{name:12s} Adam alone {adam:.1f} us: GEMMs + Adam "
                  f"{gemms + adam:.1f} us, {100 * (gemms + adam) / dlc:.0f}% of "
                  f"dlc's step alone; no step with this optimizer can give its "
                  f"GEMMs more than {100 * gemms / (gemms + adam):.0f}%")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
