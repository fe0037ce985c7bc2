#!/usr/bin/env python3
"""Inference from ONNX: dlc vs onnxruntime vs PyTorch eager, side by side.

The lesson's digits MLP (784-256-10, ReLU, as examples/digits.dlc) and a
small CNN on 28x28 digit images (Conv 1->8 3x3 pad 1, BatchNorm, ReLU,
MaxPool 2, Conv 8->16 3x3 stride 2, ReLU, AvgPool 2, Linear 144->10), each
exported once with torch.onnx.export (opset 13, eval mode, a dynamic batch)
and run at batch 1 and 64 with 1 and 2 threads, same weights and input for
all three, in one run:

  dlc          `dlc run model.onnx --input-shape x=B,... --benchmark N` with
               DLC_NUM_THREADS (and OMP/OPENBLAS/MKL_NUM_THREADS) set to the
               thread count: dlc times N calls of the compiled forward pass
               in-process (min and median), like bench/digits_forward.py and
               bench/train_step.py. Its output is checked against PyTorch's.
  onnxruntime  InferenceSession on the same file, CPU provider, all graph
               optimizations, intra_op_num_threads = threads,
               inter_op_num_threads = 1, sequential execution.
  torch eager  the exported module under torch.no_grad(), with
               torch.set_num_threads(threads).
onnxruntime and PyTorch are timed from Python around each call (so at batch
1 their few microseconds of Python call overhead are in, dlc's are not).
Prints a markdown table: min / median ms per forward pass, and the ratios
onnxruntime/dlc and torch/dlc of the minimums (> 1: dlc is faster). Not part
of the test suite: timings are never asserted.

onnxruntime is needed for this script only, never for the tests. Install it
into a venv that still sees Debian's torch and numpy:

    /usr/bin/python3 -m venv --system-site-packages /tmp/venv-ort
    /tmp/venv-ort/bin/pip install onnxruntime
    /tmp/venv-ort/bin/python bench/onnx_inference.py [--models digits,cnn]
        [--batches 1,64] [--threads 1,2] [--reps N] [--backends dlc,ort,torch]
        [--keep DIR]

(A `pip install --user` into /usr/bin/python3 would also do, but can shadow
Debian's numpy and protobuf for the test suite's Python; the venv cannot.)
Without onnxruntime its column says n/a.
"""
import argparse
import io
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn as nn

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def digits_mlp():
    # examples/digits.dlc: relu(linear(x, 256, name=fc1)) -> linear(h, 10)
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))


def digits_cnn():
    m = nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
        nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, stride=2), nn.ReLU(),
        nn.AvgPool2d(2, count_include_pad=False), nn.Flatten(),
        nn.Linear(16 * 3 * 3, 10))
    m.train()                      # non-trivial BatchNorm running statistics
    with torch.no_grad():
        for _ in range(4):
            m(torch.randn(16, 1, 28, 28) * 2.0 + 0.5)
    return m


# name -> (builder, per-example input shape, timed reps at batch 1 and 64)
MODELS = {
    "digits": (digits_mlp, (784,), {1: 2000, 64: 500}),
    "cnn": (digits_cnn, (1, 28, 28), {1: 1000, 64: 200}),
}


def export(module, feature_shape, path):
    module.eval()
    f = io.BytesIO()
    torch.onnx.export(module, (torch.randn(2, *feature_shape),), f,
                      opset_version=13, do_constant_folding=True,
                      input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    with open(path, "wb") as out:
        out.write(f.getvalue())


def thread_env(threads):
    n = str(threads)
    return dict(os.environ, DLC_NUM_THREADS=n, OMP_NUM_THREADS=n,
                OPENBLAS_NUM_THREADS=n, MKL_NUM_THREADS=n)


def dlc_times(dlc, model_path, x, threads, reps, tmp):
    xp, yp = os.path.join(tmp, "x.npy"), os.path.join(tmp, "y.npy")
    np.save(xp, x)
    shape = ",".join(str(d) for d in x.shape)
    out = subprocess.run(
        [dlc, "run", model_path, "--input-shape", "x=" + shape,
         "--input", "x=" + xp, "--output", yp, "--benchmark", str(reps)],
        env=thread_env(threads), check=True, capture_output=True,
        text=True).stdout
    m = re.search(r"min ([0-9.]+) ms, median ([0-9.]+) ms", out)
    return (float(m.group(1)), float(m.group(2))), np.load(yp)


def time_calls(fn, reps):
    for _ in range(min(20, reps)):
        fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return min(times), statistics.median(times)


def ort_times(ort, model_path, x, threads, reps):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(model_path, so,
                                providers=["CPUExecutionProvider"])
    feeds = {"x": x}
    y = sess.run(None, feeds)[0]
    return time_calls(lambda: sess.run(None, feeds), reps), y


def torch_times(module, x, threads, reps):
    torch.set_num_threads(threads)
    xt = torch.from_numpy(x)
    with torch.no_grad():
        y = module(xt).numpy()
        return time_calls(lambda: module(xt), reps), y


def scaled_err(a, e):
    a, e = np.asarray(a, np.float64), np.asarray(e, np.float64)
    return float(np.max(np.abs(a - e))) / max(1.0, float(np.max(np.abs(e))))


def fmt(t):
    return "%.4f / %.4f" % t if t else "n/a"


def ratio(a, b):
    return "%.2f" % (a[0] / b[0]) if a and b else "n/a"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dlc", default=os.path.join(ROOT, "build", "bin", "dlc"))
    ap.add_argument("--models", default="digits,cnn")
    ap.add_argument("--batches", default="1,64")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--reps", type=int, default=0,
                    help="timed calls (default: per model and batch)")
    ap.add_argument("--backends", default="dlc,ort,torch")
    ap.add_argument("--keep", default=None, metavar="DIR",
                    help="write the exported .onnx files here and keep them")
    args = ap.parse_args()
    backends = set(args.backends.split(","))
    ort = None
    if "ort" in backends:
        try:
            import onnxruntime as ort
        except ImportError:
            print("note: no onnxruntime in %s; see the docstring to install "
                  "it into a venv" % sys.executable, file=sys.stderr)

    with tempfile.TemporaryDirectory() as tmp:
        outdir = args.keep or tmp
        os.makedirs(outdir, exist_ok=True)
        print("PyTorch %s, onnxruntime %s, opset 13; ms per forward pass, "
              "min / median; ratios of the minimums (> 1: dlc is faster)\n"
              % (torch.__version__, ort.__version__ if ort else "n/a"))
        print("| model | batch | threads | dlc | onnxruntime | torch eager "
              "| ort/dlc | torch/dlc | dlc err | ort err |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for name in args.models.split(","):
            build, feat, reps_by_batch = MODELS[name]
            torch.manual_seed(0)
            module = build()
            module.eval()
            path = os.path.join(outdir, name + ".onnx")
            export(module, feat, path)
            for batch in [int(b) for b in args.batches.split(",")]:
                reps = args.reps or reps_by_batch.get(batch, 200)
                x = np.random.default_rng(batch).standard_normal(
                    (batch,) + feat).astype(np.float32)
                for threads in [int(t) for t in args.threads.split(",")]:
                    t_torch, ref = torch_times(module, x, threads, reps)
                    if "torch" not in backends:
                        t_torch = None
                    t_dlc = t_ort = None
                    err_dlc = err_ort = "n/a"
                    if "dlc" in backends:
                        t_dlc, y = dlc_times(args.dlc, path, x, threads, reps,
                                             tmp)
                        err_dlc = "%.1e" % scaled_err(y, ref)
                    if ort is not None:
                        t_ort, y = ort_times(ort, path, x, threads, reps)
                        err_ort = "%.1e" % scaled_err(y, ref)
                    print("| %s | %d | %d | %s | %s | %s | %s | %s | %s | %s |"
                          % (name, batch, threads, fmt(t_dlc), fmt(t_ort),
                             fmt(t_torch), ratio(t_ort, t_dlc),
                             ratio(t_torch, t_dlc), err_dlc, err_ort),
                          flush=True)


if __name__ == "__main__":
    main()
