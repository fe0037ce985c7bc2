#!/usr/bin/env python3
"""Runs the GPU suite (make_bundle.py) on the CPU and on CUDA.

  run.py BUNDLE [--device cpu|cuda|both] [--cross-rtol 1e-4] [--jobs N]
                [--timeout S]

Each test's commands run once per device with DLC_DEVICE set: the compiled
model through the runner, then the test's own checks against the PyTorch
references. Then every output, loss log and checkpoint written on CUDA is
compared with the CPU's (max-abs error scaled by max(1, max|cpu|) within
--cross-rtol). Without a usable GPU the CUDA half is skipped, with the
runtime's reason. Tests run N at a time (--jobs, default the CPU count: one
GPU runs several small models at once); the lines come in the suite's order.
Prints one line per test and device; exit status 1 if any check fails."""
import argparse
import concurrent.futures
import glob
import json
import os
import re
import struct
import subprocess
import sys

import numpy as np


def read_safetensors(path):
    with open(path, "rb") as f:
        buf = f.read()
    (n,) = struct.unpack("<Q", buf[:8])
    header = json.loads(buf[8:8 + n].decode("utf-8"))
    data, out = buf[8 + n:], {}
    dtypes = {"F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4"}
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] not in dtypes:
            continue
        b, e = info["data_offsets"]
        out[name] = np.frombuffer(data[b:e], dtype=dtypes[info["dtype"]]).reshape(info["shape"])
    return out


def read_losses(path):
    return [float(m.group(1)) for line in open(path)
            for m in [re.fullmatch(r"step \d+ loss (\S+)( .*)?\n?", line)] if m]


def scaled_error(a, e):
    a, e = np.asarray(a, dtype=np.float64), np.asarray(e, dtype=np.float64)
    if a.shape != e.shape:
        return float("inf")
    if a.size == 0:
        return 0.0
    return float(np.max(np.abs(a - e)) / max(1.0, float(np.max(np.abs(e)))))


def skipped_elements(case):
    """The elements the test's own check leaves out (check_training.py's
    --skip NAME:START:STOP: a gradient that is zero in exact arithmetic, so
    Adam turns either side's rounding noise into updates of lr's size), as
    {tensor name: [(start, stop)]}."""
    skips = {}
    for cmd in case["commands"]:
        for name, start, stop in re.findall(r"--skip ([A-Za-z0-9_.]+):(\d+):(\d+)", cmd):
            skips.setdefault(name, []).append((int(start), int(stop)))
    return skips


def without(tensor, ranges):
    """The tensor's elements, flattened, outside the ranges."""
    keep = np.ones(tensor.size, dtype=bool)
    for start, stop in ranges:
        keep[start:stop] = False
    return tensor.reshape(-1)[keep]


def cross_check(cpu_dir, cuda_dir, rtol, skips):
    """CUDA's files against the CPU's: (worst error, what, problems). The
    elements in `skips` (skipped_elements) are left out of the weights."""
    worst, problems = 0.0, []
    for path in sorted(glob.glob(os.path.join(cpu_dir, "**", "*"), recursive=True)):
        if os.path.isdir(path):
            continue
        rel = os.path.relpath(path, cpu_dir)
        other = os.path.join(cuda_dir, rel)
        if not os.path.exists(other):
            problems.append(f"{rel}: not written on cuda")
            continue
        if path.endswith(".npy"):
            pairs = [(rel, np.load(other), np.load(path))]
        elif path.endswith(".safetensors"):
            got, want = read_safetensors(other), read_safetensors(path)
            pairs = []
            for name, w in want.items():
                g = got.get(name)
                if name in skips and g is not None:
                    g, w = without(g, skips[name]), without(w, skips[name])
                pairs.append((f"{rel}:{name}", g, w))
        else:
            la, le = read_losses(other), read_losses(path)
            if not le:
                continue
            pairs = [(rel + " (losses)", np.array(la), np.array(le))]
        for what, a, e in pairs:
            err = float("inf") if a is None else scaled_error(a, e)
            worst = max(worst, err)
            if not err <= rtol:
                problems.append(f"{what}: cuda differs from cpu by {err:.3g}")
    return worst, problems


def nccl_library():
    """NVIDIA's NCCL where Python has it (the nvidia-nccl wheel PyTorch
    depends on), for the data-parallel steps on CUDA; None to leave the
    runtime's default (libnccl.so.2 on the loader's path)."""
    for d in sys.path:
        for lib in glob.glob(os.path.join(d, "nvidia", "nccl", "lib",
                                          "libnccl.so.2")):
            return lib
    return None


def run_case(bundle, device, case, timeout):
    """Runs one test's commands on one device: None if they all pass, else
    the report of the first that failed."""
    out = os.path.join(bundle, "out", device, case["name"])
    os.makedirs(os.path.join(out, "t"), exist_ok=True)
    env = dict(os.environ, DLC_DEVICE=device)
    if "DLC_NCCL_LIBRARY" not in env and nccl_library():
        env["DLC_NCCL_LIBRARY"] = nccl_library()
    for cmd in case["commands"]:
        line = (cmd.replace("{bin}", os.path.join(bundle, "bin"))
                .replace("{data}", os.path.join(bundle, "data"))
                .replace("{out}", out)
                .replace("{python}", sys.executable))
        try:
            p = subprocess.run(line, shell=True, env=env, capture_output=True,
                               text=True, cwd=out, timeout=timeout)
        except subprocess.TimeoutExpired:
            return f"{device} {case['name']}: FAILED: {line}\nno result in {timeout} s"
        if p.returncode != 0:
            return f"{device} {case['name']}: FAILED: {line}\n{p.stdout}{p.stderr}"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bundle")
    ap.add_argument("--device", default="both", choices=["cpu", "cuda", "both"])
    ap.add_argument("--cross-rtol", type=float, default=1e-4)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--timeout", type=float, default=600,
                    help="seconds a command may run before it counts as failed")
    opts = ap.parse_args()
    bundle = os.path.abspath(opts.bundle)
    cases = json.load(open(os.path.join(bundle, "cases.json")))["cases"]
    probe = subprocess.run([os.path.join(bundle, "bin", "probe")],
                           capture_output=True, text=True)
    cuda_ok = probe.returncode == 0
    print(probe.stdout.strip() or probe.stderr.strip())

    devices = ["cpu", "cuda"] if opts.device == "both" else [opts.device]
    failed, passed = [], {}
    for device in devices:
        if device == "cuda" and not cuda_ok:
            print(f"cuda: skipped, no usable GPU ({probe.stdout.strip()})")
            continue
        passed[device] = 0
        with concurrent.futures.ThreadPoolExecutor(opts.jobs) as pool:
            runs = [pool.submit(run_case, bundle, device, case, opts.timeout) for case in cases]
            for case, run in zip(cases, runs):
                report = run.result()
                if report is None:
                    passed[device] += 1
                    print(f"{device} {case['name']}: ok", flush=True)
                else:
                    failed.append(f"{device} {case['name']}")
                    print(report, flush=True)

    if "cpu" in passed and "cuda" in passed:
        worst = 0.0
        for case in cases:
            w, problems = cross_check(os.path.join(bundle, "out", "cpu", case["name"]),
                                      os.path.join(bundle, "out", "cuda", case["name"]),
                                      opts.cross_rtol, skipped_elements(case))
            worst = max(worst, w)
            for p in problems:
                failed.append(f"cuda vs cpu {case['name']}")
                print(f"cuda vs cpu {case['name']}: {p}")
        print(f"cuda vs cpu: worst scaled difference {worst:.3g} (bound {opts.cross_rtol:g})")
    for device, n in passed.items():
        print(f"{device}: {n} of {len(cases)} tests match PyTorch")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
