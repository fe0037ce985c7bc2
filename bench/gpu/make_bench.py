#!/usr/bin/env python3
"""Builds the GPU benchmark bundle: the training steps of issue 7's goals
compiled here (dlc, --target=all) and linked with bench/gpu/step_bench.c
and libdlcrt, for a machine with a GPU, PyTorch and no LLVM, MLIR or dlc.

  make_bench.py OUT --lib DIR [--cpu CPU]

OUT/bin holds one step_bench executable per model (OUT/lib the libdlcrt
copied from DIR), OUT/run.py and OUT/torch_steps.py measure them against
PyTorch (eager and torch.compile) and the big MLP's GEMMs alone. On the
GPU machine:  python3 OUT/run.py OUT [--device cuda]"""
import argparse
import os
import re
import shutil
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))

# name, model, compile flags: the digits MLP and the lesson's toy network
# (fp32, their own batches of 64 and 16), the big image MLP in bf16 at
# batch 256, and at batch 8192 (only when asked for: its batch is 4.9 GB),
# where its GEMMs can be 80% of a step with fp32 Adam (docs/gpu.md).
MODELS = [
    ("digits", "examples/digits.dlc", ["--train"]),
    ("toy", "examples/toy.dlc", ["--train"]),
    ("big_mlp_bf16", "examples/big_mlp.dlc",
     ["--train", "--precision=bf16", "--batch", "256"]),
    ("big_mlp_bf16_b8192", "examples/big_mlp.dlc",
     ["--train", "--precision=bf16", "--batch", "8192"]),
]
DEFAULT = ["digits", "toy", "big_mlp_bf16"]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out")
    p.add_argument("--lib", required=True, help="directory of libdlcrt.so*")
    p.add_argument("--cpu", default="x86-64-v3")
    p.add_argument("--models", default=",".join(DEFAULT),
                   help="of " + ", ".join(m[0] for m in MODELS))
    args = p.parse_args()
    wanted = args.models.split(",")
    for d in ("bin", "lib", "obj"):
        os.makedirs(os.path.join(args.out, d), exist_ok=True)
    for f in os.listdir(args.lib):
        if f.startswith("libdlcrt.so"):
            dest = os.path.join(args.out, "lib", f)
            if os.path.lexists(dest):
                os.remove(dest)
            shutil.copy2(os.path.join(args.lib, f), dest,
                         follow_symlinks=False)
    for name, model, flags in MODELS:
        if name not in wanted:
            continue
        obj = os.path.join(args.out, "obj", name + ".o")
        subprocess.run(["dlc", os.path.join(SRC, model), *flags,
                        "--cpu=" + args.cpu, "-o", obj], check=True)
        header = open(obj[:-2] + ".h").read()
        desc = re.search(r"dlc_model_[A-Za-z0-9_]+",
                         header.split("dlc_model_desc", 1)[1]).group(0)
        subprocess.run(
            [os.environ.get("CC", "cc"), "-std=c11", "-O2",
             "-D_POSIX_C_SOURCE=200809L",
             "-I" + os.path.join(SRC, "runtime", "include"),
             "-include", obj[:-2] + ".h", "-DDLC_BENCH_MODEL=" + desc,
             os.path.join(HERE, "step_bench.c"), obj,
             "-L" + os.path.join(args.out, "lib"), "-ldlcrt", "-lm",
             "-Wl,-rpath,$ORIGIN/../lib", "-o",
             os.path.join(args.out, "bin", name)], check=True)
        os.remove(obj)
    for f in ("run.py", "torch_steps.py"):
        shutil.copy2(os.path.join(HERE, f), os.path.join(args.out, f))


if __name__ == "__main__":
    main()
