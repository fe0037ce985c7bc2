#!/usr/bin/env python3
"""Digits MLP forward pass ([784, 256, 10], batch 64), dlc vs PyTorch eager,
same weights, same input, same thread count, in one run.

Run with Debian's Python (numpy, torch): /usr/bin/python3 bench/digits_forward.py
Not part of the test suite: timings are never asserted.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch



def save_safetensors(path, tensors):
    import json
    import struct
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name], dtype=np.float32)
        header[name] = {"dtype": "F32", "shape": list(a.shape),
                        "data_offsets": [offset, offset + a.nbytes]}
        blobs.append(a.tobytes())
        offset += a.nbytes
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dlc", default=os.path.join(os.path.dirname(__file__), "..", "build", "bin", "dlc"))
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch", type=int, default=64)
    args = ap.parse_args()
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    model = torch.nn.Sequential()
    model.add_module("fc1", torch.nn.Linear(784, 256))
    model.add_module("relu", torch.nn.ReLU())
    model.add_module("fc2", torch.nn.Linear(256, 10))
    x = torch.randn(args.batch, 784)
    with tempfile.TemporaryDirectory() as tmp:
        save_safetensors(os.path.join(tmp, "w.safetensors"),
                         {k: v.numpy() for k, v in model.state_dict().items()})
        np.save(os.path.join(tmp, "x.npy"), x.numpy())
        env = dict(os.environ, DLC_NUM_THREADS=str(args.threads))
        out = subprocess.run(
            [args.dlc, "run", os.path.join(root, "examples", "digits.dlc"), "--batch", str(args.batch),
             "--weights", os.path.join(tmp, "w.safetensors"), "--input", "x=" + os.path.join(tmp, "x.npy"),
             "--output", os.path.join(tmp, "y.npy"), "--benchmark", str(args.reps)],
            env=env, check=True, capture_output=True, text=True).stdout
        dlc_ms = float(re.search(r"min ([0-9.]+) ms", out).group(1))
        y = np.load(os.path.join(tmp, "y.npy"))
    with torch.no_grad():
        ref = model(x).numpy()
        err = np.abs(y - ref).max() / max(1.0, np.abs(ref).max())
        model(x)
        best = float("inf")
        for _ in range(args.reps):
            t = time.perf_counter()
            model(x)
            best = min(best, time.perf_counter() - t)
    torch_ms = best * 1e3
    print(f"digits forward, batch {args.batch}, {args.threads} thread(s), best of {args.reps}; max scaled error {err:.1e}")
    print(f"  dlc           {dlc_ms * 1e3:8.1f} us")
    print(f"  torch eager   {torch_ms * 1e3:8.1f} us   torch/dlc = {torch_ms / dlc_ms:.2f}")


if __name__ == "__main__":
    main()
