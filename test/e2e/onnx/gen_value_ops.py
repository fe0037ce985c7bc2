#!/usr/bin/python3
"""Generate the end-to-end tests of ops on values computed at run time:
comparisons and boolean logic (Equal, Less, Greater, LessOrEqual,
GreaterOrEqual, And, Or, Xor, Not, Cast to bool, Where on them), Gather by
run-time indices along any axis, GatherElements, and integer arithmetic
(Cast between integer types, Add, Sub, Mul, CumSum): PyTorch exports and
their references.

Run with Debian's python3 (python3-torch 1.13, python3-numpy, python3-onnx):

    /usr/bin/python3 test/e2e/onnx/gen_value_ops.py [CASE ...]

For every case it writes test/e2e/onnx/data/<case>/ and the lit test
test/e2e/onnx/<case>.test:

  model.onnx  the export (torch.onnx.export, TorchScript, opset 17)
  <input>.npy every input (float32, or int64 token ids)
  y.npy       the reference: the module's forward pass in float64 from the
              float32 weights and inputs, stored as float32

padding_mask, gather_axes, gather_elements and position_ids also train: labels.npy (int64) and
losses.npy, 5 steps of
torch.optim.Adam(lr=1e-2) on F.cross_entropy, the module in float64 from
the export's own float32 weights (the mask's comparisons get no gradient;
the embeddings of padded positions get none either).
"""

import io
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = {}


def case(name, note):
    def deco(fn):
        CASES[name] = (fn, note)
        return fn
    return deco


class Fn(nn.Module):
    def __init__(self, fwd, **layers):
        super().__init__()
        self._fwd = fwd
        for k, v in layers.items():
            setattr(self, k, v)

    def forward(self, *xs):
        return self._fwd(self, *xs)


def values(rng, *shape):
    # Halves and quarters, so that comparisons meet equal values and the
    # thresholds exactly, and a few zeros.
    return (rng.integers(-8, 9, shape) / 4).astype(np.float32)


@case("mask_compare", "Where on comparisons of activations (>, <=, ==, !=, "
      ">=, <) with constants and with each other, broadcast.")
def _mask_compare(rng):
    def fwd(m, x, z):
        h = m.fc(x)
        a = torch.where(h > 0.25, h, -h)
        b = torch.where(x <= z, x, z)                        # broadcast [4,1]
        c = (x == z).float() * 3 + (x != 0.5).float()
        d = torch.where((x >= -1.0) & (x < 1.0), x * 2, x)
        return torch.cat([a, b, c, d], dim=1)
    m = Fn(fwd, fc=nn.Linear(6, 6))
    with torch.no_grad():
        m.fc.weight.copy_(torch.from_numpy(values(rng, 6, 6)))
        m.fc.bias.copy_(torch.from_numpy(values(rng, 6)))
    return m, {"x": values(rng, 4, 6), "z": values(rng, 4, 1)}


@case("mask_logic", "And, Or, Xor and Not of comparisons, a Cast of floats "
      "to bool (x.bool(): non-zero is true) and of bools to float.")
def _mask_logic(rng):
    def fwd(m, x, z):
        a, b = x > 0, z < 0
        y = torch.where(a & b, x, z)
        y = y + (a ^ b).float() + torch.where(~a | b, z, x * 0)
        return y + x.bool().float() * 2 + (~x.bool()).float() * 5
    return Fn(fwd), {"x": values(rng, 3, 5), "z": values(rng, 3, 5)}


@case("padding_mask", "A text classifier that masks its padding: ids != 0 "
      "(Not(Equal) on an int64 input), a masked mean of the embeddings, "
      "and a Where that keeps padded positions out of a max.")
def _padding_mask(rng):
    def fwd(m, ids):
        keep = ids != 0
        e = m.emb(ids)
        w = keep.unsqueeze(-1).float()
        mean = (e * w).sum(1) / w.sum(1).clamp(min=1.0)
        top = torch.where(keep.unsqueeze(-1), e, torch.full_like(e, -1e4))
        return m.fc(torch.cat([mean, top.amax(1)], dim=1))
    m = Fn(fwd, emb=nn.Embedding(20, 8), fc=nn.Linear(16, 3))
    ids = rng.integers(1, 20, (4, 10)).astype(np.int64)
    for i, n in enumerate([10, 7, 3, 1]):
        ids[i, n:] = 0
    return m, {"ids": ids}


@case("gather_axes", "Gather by run-time int64 indices along axes 1 and 2 "
      "(x[:, ids], x[..., ids]), as the ids' own shape, into a classifier.")
def _gather_axes(rng):
    def fwd(m, x, ids, pos):
        h = m.fc1(x)                                  # [4, 10]
        cols = h[:, ids]                              # Gather axis 1: [4, 3]
        t = h.reshape(4, 2, 5)[..., pos]              # Gather axis 2: [4, 2, 2, 2]
        return m.fc2(torch.cat([cols, t.reshape(4, 8)], dim=1))
    m = Fn(fwd, fc1=nn.Linear(6, 10), fc2=nn.Linear(11, 3))
    return m, {"x": values(rng, 4, 6),
               "ids": np.array([7, 0, 7], np.int64),
               "pos": np.array([[4, -1], [0, 2]], np.int64)}


@case("gather_elements", "GatherElements (torch.gather) by run-time int64 "
      "indices along axes 1 and 0, with repeated indices (their gradients add "
      "up), into a classifier.")
def _gather_elements(rng):
    def fwd(m, x, idx, idx0):
        h = m.fc1(x)                                     # [4, 10]
        a = torch.gather(h, 1, idx)                      # [4, 3]
        b = torch.gather(h.reshape(2, 2, 10), 0, idx0)   # [3, 2, 10]
        return m.fc2(torch.cat([a, b.reshape(4, 15)], dim=1))
    m = Fn(fwd, fc1=nn.Linear(6, 10), fc2=nn.Linear(18, 3))
    # (torch.gather takes no negative indices; ONNX's do count from the end,
    # which test/Conversion/lower_data_movement.mlir checks.)
    idx = np.array([[0, 9, 9], [9, 3, 3], [5, 5, 0], [2, 7, 1]], np.int64)
    idx0 = rng.integers(0, 2, (3, 2, 10)).astype(np.int64)
    return m, {"x": values(rng, 4, 6), "idx": idx, "idx0": idx0}


@case("position_ids", "Position ids computed from the token ids, as "
      "RoBERTa does (ids != pad, cast to int32, CumSum, Mul, cast to int64, "
      "Add): integer arithmetic on values, into a position embedding.")
def _position_ids(rng):
    def fwd(m, ids):
        mask = ids.ne(1).int()
        pos = (torch.cumsum(mask, dim=1).type_as(mask) * mask).long() + 1
        h = m.word(ids) + m.pos(pos)
        return m.fc(h.mean(1))
    m = Fn(fwd, word=nn.Embedding(20, 8), pos=nn.Embedding(14, 8),
           fc=nn.Linear(8, 3))
    ids = rng.integers(2, 20, (4, 10)).astype(np.int64)
    for i, n in enumerate([10, 6, 2, 8]):
        ids[i, n:] = 1
    return m, {"ids": ids}


TRAINED = {"padding_mask", "gather_axes", "gather_elements", "position_ids"}


def export(module, inputs):
    f = io.BytesIO()
    args = tuple(torch.from_numpy(v) for v in inputs.values())
    torch.onnx.export(module, args, f, opset_version=17,
                      input_names=list(inputs), output_names=["y"])
    return f.getvalue(), onnx.load_from_string(f.getvalue())


def reference(module, inputs):
    m64 = module.double()
    args = [torch.from_numpy(v).double() if v.dtype == np.float32
            else torch.from_numpy(v) for v in inputs.values()]
    with torch.no_grad():
        y = m64(*args).numpy()
    module.float()
    return y.astype(np.float32)


def train(module, inputs, labels, steps=5):
    m64 = module.double()
    opt = torch.optim.Adam(m64.parameters(), lr=1e-2)
    args = [torch.from_numpy(v).double() if v.dtype == np.float32
            else torch.from_numpy(v) for v in inputs.values()]
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(m64(*args), torch.from_numpy(labels))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    module.float()
    return np.array(losses, np.float64)


TEST = """# End-to-end numeric test of data/{name}/model.onnx (opset 17;
# generated by gen_value_ops.py, do not edit).
# Nodes: {nodes}
# {note}
# RUN: dlc run %S/data/{name}/model.onnx {feeds} --output %t.y.npy
# RUN: %python %S/../compare.py %t.y.npy %S/data/{name}/y.npy --rtol 1e-5
"""

TRAIN = """# Training through it: 5 Adam steps (lr 1e-2) of cross_entropy from
# the export's own weights, the per-step losses against torch.optim.Adam on
# the module in float64.
# RUN: dlc run %S/data/{name}/model.onnx --train --loss cross_entropy --optimizer adam --lr 1e-2 {feeds} --input y=%S/data/{name}/labels.npy --steps 5 --print-loss > %t.losses
# RUN: %python %S/../train/check_training.py %t.losses %S/data/{name}/losses.npy
"""


def generate(name):
    rng = np.random.default_rng(11)
    torch.manual_seed(11)
    fn, note = CASES[name]
    module, inputs = fn(rng)
    module.eval()
    data, mp = export(module, inputs)
    y = reference(module, inputs)
    out = os.path.join(HERE, "data", name)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "model.onnx"), "wb") as f:
        f.write(data)
    for k, v in inputs.items():
        np.save(os.path.join(out, k + ".npy"), v)
    np.save(os.path.join(out, "y.npy"), y)
    nodes = []
    for n in mp.graph.node:
        if n.op_type not in nodes:
            nodes.append(n.op_type)
    feeds = " ".join("--input %s=%%S/data/%s/%s.npy" % (k, name, k)
                     for k in inputs)
    text = TEST.format(name=name, nodes=" ".join(nodes), note=note,
                       feeds=feeds)
    if name in TRAINED:
        labels = np.array([0, 2, 1, 2], np.int64)
        np.save(os.path.join(out, "labels.npy"), labels)
        np.save(os.path.join(out, "losses.npy"), train(module, inputs, labels))
        text += TRAIN.format(name=name, feeds=feeds)
    with open(os.path.join(HERE, name + ".test"), "w") as f:
        f.write(text)
    print("%-14s %6d bytes  y %s" % (name, len(data), y.shape))


def main(argv):
    for n in argv or list(CASES):
        generate(n)


if __name__ == "__main__":
    main(sys.argv[1:])
