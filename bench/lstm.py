#!/usr/bin/env python3
"""LSTM sequence classifier: dlc vs PyTorch eager vs onnxruntime, one run.

The model of the recurrent-network issue: nn.Embedding(1000, 64), nn.LSTM(64,
128, batch_first=True), nn.Linear(128, 10) on the last hidden state, batch
32, sequence 50, exported once by torch.onnx.export (dynamo, PyTorch 2.x)
or the TorchScript exporter (PyTorch 1.x). Timed, with THREADS threads for
everybody (DLC_NUM_THREADS, torch.set_num_threads, intra_op_num_threads):

  forward  dlc: `dlc run --benchmark N` (the compiled forward in-process,
           min and median); PyTorch eager under torch.no_grad() (oneDNN's
           fused LSTM); onnxruntime's InferenceSession on the same file.
  train    one step of Adam(lr=1e-3) on cross entropy: dlc: `dlc run --train
           --benchmark N` (forward, backward, update in one compiled call);
           PyTorch eager: zero_grad, forward, loss, backward, step.

PyTorch and onnxruntime are timed from Python around each call. Prints
min / median ms and the peers' ratios to dlc (> 1: dlc is faster). Not part
of the test suite. Needs torch (and onnxruntime for its column):

    VENV/bin/python bench/lstm.py [--threads 1] [--reps 50] [--dlc build/bin/dlc]
"""
import argparse
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
import torch.nn.functional as F

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(1000, 64)
        self.rnn = nn.LSTM(64, 128, batch_first=True)
        self.fc = nn.Linear(128, 10)

    def forward(self, ids):
        return self.fc(self.rnn(self.emb(ids))[1][0][0])


def timed(fn, reps):
    for _ in range(3):
        fn()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t) * 1e3)
    return min(ts), statistics.median(ts)


def dlc_bench(dlc, model, feeds, train, reps, threads):
    cmd = [dlc, "run", model] + feeds + ["--benchmark", str(reps)]
    if train:
        cmd[3:3] = ["--train", "--loss", "cross_entropy", "--optimizer",
                    "adam", "--lr", "1e-3"]
    env = dict(os.environ, DLC_NUM_THREADS=str(threads))
    out = subprocess.run(cmd, env=env, check=True, capture_output=True,
                         text=True).stdout
    m = re.search(r"min ([0-9.]+) ms, median ([0-9.]+) ms", out)
    return float(m.group(1)), float(m.group(2))


def check_outputs(dlc, path, feeds, model, ids_t, labels, tmp):
    """The engines agree before anything is timed: dlc's logits against
    PyTorch's (and onnxruntime's, when installed) to 1e-4, and dlc's first
    training loss against PyTorch's to 1e-5 relative."""
    out = os.path.join(tmp, "logits.npy")
    subprocess.run([dlc, "run", path] + feeds + ["--output", out],
                   check=True, capture_output=True)
    got = np.load(out)
    with torch.no_grad():
        want = model(ids_t).numpy()
    refs = {"PyTorch": want}
    try:
        import onnxruntime as ort
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        refs["onnxruntime"] = sess.run(
            None, {sess.get_inputs()[0].name: ids_t.numpy()})[0]
    except ImportError:
        pass
    for name, ref in refs.items():
        err = float(np.abs(got - ref).max())
        if err > 1e-4:
            sys.exit("dlc's logits differ from %s's by %g" % (name, err))
    losses = subprocess.run(
        [dlc, "run", path, "--train", "--loss", "cross_entropy",
         "--optimizer", "adam", "--lr", "1e-3"] + feeds +
        ["--input", "y=" + os.path.join(tmp, "y.npy"), "--steps", "1",
         "--print-loss"], check=True, capture_output=True, text=True).stdout
    loss = float(re.search(r"loss ([-0-9.e+]+)", losses).group(1))
    with torch.no_grad():
        ref = F.cross_entropy(model(ids_t), torch.from_numpy(labels)).item()
    if abs(loss - ref) > 1e-5 * abs(ref):
        sys.exit("dlc's first loss %r differs from PyTorch's %r" % (loss, ref))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--dlc", default=os.path.join(ROOT, "build", "bin", "dlc"))
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = Classifier().eval()
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 1000, size=(32, 50)).astype(np.int64)
    labels = rng.integers(0, 10, size=(32,)).astype(np.int64)
    tmp = tempfile.mkdtemp()
    path = os.path.join(tmp, "lstm.onnx")
    ids_t = torch.from_numpy(ids)
    if int(torch.__version__.split(".")[0]) >= 2:
        torch.onnx.export(model, (ids_t,), path, dynamo=True,
                          input_names=["ids"], output_names=["logits"])
    else:
        torch.onnx.export(model, (ids_t,), path, opset_version=17,
                          input_names=["ids"], output_names=["logits"])
    np.save(os.path.join(tmp, "ids.npy"), ids)
    np.save(os.path.join(tmp, "y.npy"), labels)
    feeds = ["--input", "ids=" + os.path.join(tmp, "ids.npy")]
    check_outputs(args.dlc, path, feeds, model, ids_t, labels, tmp)
    rows = []

    # Forward.
    fwd = {"dlc": dlc_bench(args.dlc, path, feeds, False, args.reps,
                            args.threads)}
    with torch.no_grad():
        fwd["torch"] = timed(lambda: model(ids_t), args.reps)
    try:
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = args.threads
        so.inter_op_num_threads = 1
        sess = ort.InferenceSession(path, so,
                                    providers=["CPUExecutionProvider"])
        name = sess.get_inputs()[0].name
        fwd["onnxruntime"] = timed(lambda: sess.run(None, {name: ids}),
                                   args.reps)
    except ImportError:
        fwd["onnxruntime"] = None
    rows.append(("forward", fwd))

    # Training step.
    train = {"dlc": dlc_bench(
        args.dlc, path,
        feeds + ["--input", "y=" + os.path.join(tmp, "y.npy")], True,
        args.reps, args.threads)}
    tm = Classifier()
    tm.load_state_dict(model.state_dict())
    opt = torch.optim.Adam(tm.parameters(), lr=1e-3)
    y_t = torch.from_numpy(labels)

    def step():
        opt.zero_grad()
        F.cross_entropy(tm(ids_t), y_t).backward()
        opt.step()
    train["torch"] = timed(step, args.reps)
    train["onnxruntime"] = None
    rows.append(("train step", train))

    print("LSTM classifier, batch 32, sequence 50, %d thread(s), torch %s"
          % (args.threads, torch.__version__))
    print("| | dlc ms (min / median) | PyTorch eager | onnxruntime | "
          "torch/dlc | ort/dlc |")
    print("|---|---|---|---|---|---|")
    for what, r in rows:
        d = r["dlc"]
        cell = lambda v: "n/a" if v is None else "%.3f / %.3f" % v
        ratio = lambda v: "n/a" if v is None else "%.2f" % (v[0] / d[0])
        print("| %s | %s | %s | %s | %s | %s |" % (
            what, cell(d), cell(r["torch"]), cell(r["onnxruntime"]),
            ratio(r["torch"]), ratio(r["onnxruntime"])))


if __name__ == "__main__":
    main()
