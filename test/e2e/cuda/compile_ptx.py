#!/usr/bin/env python3
"""Compiles every model of the given directories to PTX (--emit=ptx) in
fp32, bf16 and fp16, with the training step where the model has a loss,
and assembles each with ptxas for sm_90.

  compile_ptx.py TMPDIR PTXAS DIR...

Exit status 1 if any model fails to compile or assemble, or if a PTX module
declares an external function."""
import glob
import os
import subprocess
import sys

tmp, ptxas, dirs = sys.argv[1], sys.argv[2], sys.argv[3:]
models = sorted(m for d in dirs for m in glob.glob(os.path.join(d, "*.dlc")))
failed, modules, gemm_only = [], 0, 0
for model in models:
    name = os.path.splitext(os.path.basename(model))[0]
    for precision in ("fp32", "bf16", "fp16"):
        ptx = os.path.join(tmp, f"{name}.{precision}.ptx")
        base = ["dlc", model, f"--precision={precision}", "--emit=ptx", "-o", ptx]
        # The training step where the model has a loss, else the forward.
        p = subprocess.run(base + ["--train"], capture_output=True, text=True)
        if p.returncode != 0:
            p = subprocess.run(base, capture_output=True, text=True)
        if p.returncode != 0:
            failed.append(f"{name} {precision}: dlc failed:\n{p.stderr}")
            continue
        text = open(ptx).read()
        if not text:
            # Every op is a cuBLASLt GEMM or a copy: no kernel, no PTX.
            gemm_only += 1
            continue
        if ".extern" in text:
            failed.append(f"{name} {precision}: the PTX declares an external function")
            continue
        a = subprocess.run([ptxas, "-arch=sm_90", ptx, "-o", ptx + ".cubin"],
                           capture_output=True, text=True)
        if a.returncode != 0:
            failed.append(f"{name} {precision}: ptxas failed:\n{a.stderr}")
            continue
        modules += 1
for f in failed:
    print(f)
print(f"{modules} PTX modules from {len(models)} models pass ptxas -arch=sm_90 "
      f"({gemm_only} without kernels)")
sys.exit(1 if failed else 0)
