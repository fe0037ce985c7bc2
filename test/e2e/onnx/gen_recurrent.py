#!/usr/bin/env python3
"""Generate the end-to-end tests of ONNX LSTM, GRU and RNN: PyTorch exports and
their references.

Run once with each exporter:

    /usr/bin/python3 test/e2e/onnx/gen_recurrent.py      # PyTorch 1.13: TorchScript
    VENV/bin/python test/e2e/onnx/gen_recurrent.py       # PyTorch 2.x: dynamo

PyTorch 1.13 writes data/rnn_<case>_ts/ with torch.onnx.export (opset 17,
constants folded); PyTorch 2.x writes data/rnn_<case>_dynamo/ with
torch.onnx.export(dynamo=True) at its default opset (external data when the
exporter writes it). Each folder holds model.onnx, the inputs (<name>.npy,
float32) and y.npy: the module's output computed in float64 from the
float32 weights and inputs, stored as float32. Every model has one output
that joins what the recurrent op returns (Y, and Y_h / Y_c where the case
reads them), so a test checks all of them at once.

Both also write the training cases, data/rnn_train_<case>/ (PyTorch 1.13)
and data/rnn_train_<case>_dynamo/ (PyTorch 2.x): a sequence classifier
(Embedding, LSTM, Linear on the last hidden state; cross entropy) and a GRU
regressor (GRU, Linear on every step; MSE against float targets), their
inputs and labels, and losses.npy: 10 steps of torch.optim.Adam(lr=1e-2) on
the module in float64 from the export's own weights, the loss of each step
before its update. The dynamo exporter folds the zero initial state into
an initializer, which must not be trained. `gen_recurrent.py train` writes
the training cases alone.

The lit tests rnn_*.test are written too.
"""

import io
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
DYNAMO = int(torch.__version__.split(".")[0]) >= 2
TAG = "dynamo" if DYNAMO else "ts"


class LstmSeq(nn.Module):
    """1 layer, batch_first, the whole sequence out."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(8, 16, batch_first=True)

    def forward(self, x):
        return self.rnn(x)[0]


class LstmBi(nn.Module):
    """2 layers, bidirectional, sequence-first, given initial states; Y, Y_h
    and Y_c joined."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(6, 12, num_layers=2, bidirectional=True)

    def forward(self, x, h0, c0):
        y, (h, c) = self.rnn(x, (h0, c0))
        b = x.shape[1]
        return torch.cat([y.transpose(0, 1).reshape(b, -1),
                          h.transpose(0, 1).reshape(b, -1),
                          c.transpose(0, 1).reshape(b, -1)], 1)


class GruLast(nn.Module):
    """1 layer, batch_first, a linear head on the last hidden state."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(8, 16, batch_first=True)
        self.fc = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc(self.rnn(x)[1][0])


class GruBi(nn.Module):
    """2 layers, bidirectional, a given initial state; Y and Y_h joined."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(5, 10, num_layers=2, bidirectional=True)

    def forward(self, x, h0):
        y, h = self.rnn(x, h0)
        b = x.shape[1]
        return torch.cat([y.transpose(0, 1).reshape(b, -1),
                          h.transpose(0, 1).reshape(b, -1)], 1)


class RnnRelu(nn.Module):
    """nn.RNN: 2 layers of relu cells, batch_first."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(6, 8, num_layers=2, nonlinearity="relu",
                          batch_first=True)

    def forward(self, x):
        return self.rnn(x)[0]


class RnnTanhBi(nn.Module):
    """nn.RNN: tanh cells, bidirectional; Y and Y_h joined."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(4, 7, bidirectional=True)

    def forward(self, x):
        y, h = self.rnn(x)
        b = x.shape[1]
        return torch.cat([y.transpose(0, 1).reshape(b, -1),
                          h.transpose(0, 1).reshape(b, -1)], 1)


def f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


CASES = {
    "lstm_seq": (LstmSeq, lambda r: {"x": f32(r, 3, 7, 8)},
                 "LSTM, 1 layer, batch_first, no initial state: Y."),
    "lstm_bi": (LstmBi, lambda r: {"x": f32(r, 6, 2, 6),
                                   "h0": f32(r, 4, 2, 12),
                                   "c0": f32(r, 4, 2, 12)},
                "LSTM, 2 layers, bidirectional, initial states given: Y, "
                "Y_h and Y_c."),
    "gru_last": (GruLast, lambda r: {"x": f32(r, 3, 9, 8)},
                 "GRU (linear_before_reset), batch_first: the last state "
                 "through a linear head."),
    "gru_bi": (GruBi, lambda r: {"x": f32(r, 5, 2, 5),
                                 "h0": f32(r, 4, 2, 10)},
               "GRU, 2 layers, bidirectional, initial state given: Y and "
               "Y_h."),
    "rnn_relu": (RnnRelu, lambda r: {"x": f32(r, 2, 6, 6)},
                 "RNN, 2 layers of relu cells, batch_first: Y."),
    "rnn_tanh_bi": (RnnTanhBi, lambda r: {"x": f32(r, 5, 3, 4)},
                    "RNN, tanh cells, bidirectional: Y and Y_h."),
}

TEST = """\
# End-to-end numeric test of data/{folder}/model.onnx ({how}; generated by
# gen_recurrent.py, do not edit): {note}
# RUN: dlc run %S/data/{folder}/model.onnx {feeds} --output %t.y.npy
# RUN: %python %S/../compare.py %t.y.npy %S/data/{folder}/y.npy --rtol 1e-5
"""


def export(module, inputs, path):
    names = list(inputs)
    args = tuple(torch.from_numpy(v) for v in inputs.values())
    if DYNAMO:
        torch.onnx.export(module, args, path, dynamo=True, input_names=names,
                          output_names=["y"])
    else:
        torch.onnx.export(module, args, path, opset_version=17,
                          input_names=names, output_names=["y"])


def generate(name):
    cls, make, note = CASES[name]
    torch.manual_seed(5)
    rng = np.random.default_rng(5)
    module = cls().eval()
    inputs = make(rng)
    folder = "rnn_%s_%s" % (name, TAG)
    out = os.path.join(HERE, "data", folder)
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        os.remove(os.path.join(out, f))
    export(module, inputs, os.path.join(out, "model.onnx"))
    with torch.no_grad():
        y32 = module(*[torch.from_numpy(v) for v in inputs.values()]).numpy()
        m64 = module.double()
        y = m64(*[torch.from_numpy(v).double()
                  for v in inputs.values()]).numpy()
    err = np.max(np.abs(y32 - y)) / max(1.0, np.max(np.abs(y)))
    assert err < 1e-5, (name, err)
    for k, v in inputs.items():
        np.save(os.path.join(out, k + ".npy"), v)
    np.save(os.path.join(out, "y.npy"), y.astype(np.float32))
    feeds = " ".join("--input %s=%%S/data/%s/%s.npy" % (k, folder, k)
                     for k in inputs)
    how = ("torch.onnx.export(dynamo=True), PyTorch 2.x" if DYNAMO
           else "TorchScript exporter, opset 17")
    with open(os.path.join(HERE, folder + ".test"), "w") as f:
        f.write(TEST.format(folder=folder, how=how, note=note, feeds=feeds))
    print("%-24s y %s" % (folder, y.shape))


class SeqClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 8)
        self.rnn = nn.LSTM(8, 16, batch_first=True)
        self.fc = nn.Linear(16, 4)

    def forward(self, ids):
        return self.fc(self.rnn(self.emb(ids))[1][0][0])


class GruRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(5, 12)
        self.fc = nn.Linear(12, 1)

    def forward(self, x):
        return self.fc(self.rnn(x)[0])


TRAIN_TEST = """\
# Training {what} exported by the {how} with
# `dlc run --train` ({loss}): 10 Adam steps (lr 1e-2) from the export's own
# weights, the per-step losses against torch.optim.Adam on the module in
# float64 (generated by gen_recurrent.py, do not edit). The unrolled steps
# are differentiated: backpropagation through time.
# RUN: dlc run %S/data/{folder}/model.onnx --train --loss {loss} --optimizer adam --lr 1e-2 --input {xname}=%S/data/{folder}/{xname}.npy --input y=%S/data/{folder}/labels.npy --steps 10 --print-loss > %t.losses
# RUN: %python %S/../train/check_training.py %t.losses %S/data/{folder}/losses.npy
"""


def generate_train(name):
    torch.manual_seed(9)
    rng = np.random.default_rng(9)
    if name == "lstm_classifier":
        module = SeqClassifier()
        x = rng.integers(0, 20, size=(4, 6)).astype(np.int64)
        labels = rng.integers(0, 4, size=(4,)).astype(np.int64)
        xname, loss, what = "ids", "cross_entropy", \
            "an embedding + LSTM + linear sequence classifier"
    else:
        module = GruRegressor()
        x = f32(rng, 7, 3, 5)
        labels = f32(rng, 7, 3, 1)
        xname, loss, what = "x", "mse", "a GRU + linear regressor"
    module.eval()
    folder = "rnn_train_" + name + ("_dynamo" if DYNAMO else "")
    out = os.path.join(HERE, "data", folder)
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        os.remove(os.path.join(out, f))
    if DYNAMO:
        torch.onnx.export(module, (torch.from_numpy(x),),
                          os.path.join(out, "model.onnx"), dynamo=True,
                          external_data=False, input_names=[xname],
                          output_names=["out"])
    else:
        f = io.BytesIO()
        torch.onnx.export(module, (torch.from_numpy(x),), f, opset_version=17,
                          input_names=[xname], output_names=["out"])
        with open(os.path.join(out, "model.onnx"), "wb") as fh:
            fh.write(f.getvalue())
    m64 = module.double()
    opt = torch.optim.Adam(m64.parameters(), lr=1e-2)
    xt = torch.from_numpy(x) if x.dtype == np.int64 else \
        torch.from_numpy(x).double()
    yt = torch.from_numpy(labels) if labels.dtype == np.int64 else \
        torch.from_numpy(labels).double()
    losses = []
    for _ in range(10):
        opt.zero_grad()
        o = m64(xt)
        lo = F.cross_entropy(o, yt) if loss == "cross_entropy" else \
            F.mse_loss(o, yt)
        losses.append(lo.item())
        lo.backward()
        opt.step()
    np.save(os.path.join(out, xname + ".npy"), x)
    np.save(os.path.join(out, "labels.npy"), labels)
    np.save(os.path.join(out, "losses.npy"), np.array(losses, np.float64))
    with open(os.path.join(HERE, folder + ".test"), "w") as fh:
        how = ("dynamo exporter of PyTorch 2.x\n# (torch.onnx.export(dynamo=True))"
               if DYNAMO else "TorchScript exporter (opset 17)")
        fh.write(TRAIN_TEST.format(what=what, how=how, loss=loss,
                                   folder=folder, xname=xname))
    print("%-24s losses %.6f .. %.6f" % (folder, losses[0], losses[-1]))


def main(argv):
    train = argv == ["train"]
    if not train:
        for n in argv or list(CASES):
            generate(n)
    if train or not argv:
        for n in ("lstm_classifier", "gru_regressor"):
            generate_train(n)


if __name__ == "__main__":
    main(sys.argv[1:])
