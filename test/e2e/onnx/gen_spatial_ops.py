#!/usr/bin/python3
"""Generate the end-to-end tests of ConvTranspose, InstanceNormalization,
GroupNormalization and Resize: PyTorch exports and their references.

Run with Debian's python3 (python3-torch 1.13, python3-numpy, python3-onnx):

    /usr/bin/python3 test/e2e/onnx/gen_spatial_ops.py [CASE ...]

For every case it writes test/e2e/onnx/data/<case>/ and the lit test
test/e2e/onnx/<case>.test:

  model.onnx  the export (torch.onnx.export, TorchScript, opset 17, input
              `x`, output `y`), or for the GroupNormalization cases a graph
              written with onnx.helper (that op is opset 18 and 21; PyTorch
              1.13 writes GroupNorm as InstanceNormalization of a view)
  x.npy       the input, float32
  y.npy       the reference: the module's forward pass computed in float64
              from the float32 weights and input (for the helper graphs,
              the op's definition in NumPy, float64), stored as float32

The case train_unet_ops trains a small encoder-decoder through all of them
(Conv, GroupNorm, ReLU, ConvTranspose, bilinear Resize, global average pool,
Linear): 5 steps of torch.optim.Adam(lr=1e-2) on F.cross_entropy, in float64
from the export's float32 initializers (exported without constant folding,
so every initializer keeps its module name); it writes labels.npy (int64),
losses.npy (float64) and final.safetensors (the weights after the steps) for
test/e2e/train/check_training.py.
"""

import io
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import helper, TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "train"))
from gen_train_reference import write_safetensors  # noqa: E402

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

    def forward(self, x):
        return self._fwd(self, x)


def randn(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


@case("conv_transpose", "ConvTranspose 2-D: stride 2 with output_padding, "
      "then groups, dilation and unequal strides and padding.")
def _conv_transpose(rng):
    m = Fn(lambda m, x: m.b(F.relu(m.a(x))),
           a=nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1),
           b=nn.ConvTranspose2d(6, 4, (3, 2), stride=(1, 2), padding=(1, 0),
                                groups=2, dilation=(2, 1), bias=False))
    return m, randn(rng, 2, 4, 5, 5)


@case("conv_transpose1d", "ConvTranspose 1-D (an [N, C, 1, L] view), "
      "stride 3, padding 2, output_padding 1, dilation 2.")
def _conv_transpose1d(rng):
    m = nn.Sequential(nn.ConvTranspose1d(3, 5, 4, stride=3, padding=2,
                                         output_padding=1, dilation=2),
                      nn.Tanh())
    return m, randn(rng, 2, 3, 7)


@case("group_norm", "GroupNorm (exported as InstanceNormalization of an "
      "[N, G, ...] view), InstanceNorm2d with an affine, InstanceNorm1d.")
def _group_norm(rng):
    def fwd(m, x):
        h = F.silu(m.gn(m.conv(x)))
        h = m.inorm(h)
        n, c = h.shape[:2]
        return m.inorm1(h.reshape(n, c, -1)).reshape(h.shape)
    m = Fn(fwd, conv=nn.Conv2d(3, 8, 3), gn=nn.GroupNorm(4, 8),
           inorm=nn.InstanceNorm2d(8, affine=True),
           inorm1=nn.InstanceNorm1d(8))
    with torch.no_grad():
        for p in (m.gn.weight, m.gn.bias, m.inorm.weight, m.inorm.bias):
            p.copy_(torch.randn(p.shape) * 0.5 + (1 if p.dim() else 0))
    return m, randn(rng, 2, 3, 7, 6)


@case("resize", "Resize: nearest x2 (a broadcast), bilinear x2 "
      "(half_pixel), bilinear to a size with align_corners, nearest to a "
      "non-multiple size, bilinear downsampling.")
def _resize(rng):
    def fwd(m, x):
        h = F.interpolate(x, scale_factor=2, mode="nearest")
        h = m.conv(h)
        h = F.interpolate(h, scale_factor=2, mode="bilinear",
                          align_corners=False)
        h = F.interpolate(h, size=(11, 17), mode="bilinear",
                          align_corners=True)
        h = F.interpolate(h, size=(7, 23), mode="nearest")
        return F.interpolate(h, size=(5, 9), mode="bilinear",
                             align_corners=False)
    m = Fn(fwd, conv=nn.Conv2d(3, 4, 3, padding=1))
    return m, randn(rng, 2, 3, 3, 4)


@case("resize1d", "Resize of [N, C, L]: linear x3 (half_pixel), nearest "
      "x2, linear with align_corners to a size.")
def _resize1d(rng):
    def fwd(m, x):
        h = F.interpolate(x, scale_factor=3, mode="linear",
                          align_corners=False)
        h = F.interpolate(h, scale_factor=2, mode="nearest")
        return F.interpolate(h, size=29, mode="linear", align_corners=True)
    return Fn(fwd), randn(rng, 2, 3, 5)


@case("resize_bicubic", "Resize cubic (bicubic, A = -0.75): x2 (half_pixel, "
      "taps past the edge read the edge), to a size with align_corners, and "
      "downsampling without antialias.")
def _resize_bicubic(rng):
    def fwd(m, x):
        h = F.interpolate(x, scale_factor=2, mode="bicubic",
                          align_corners=False)
        h = m.conv(h)
        h = F.interpolate(h, size=(9, 13), mode="bicubic", align_corners=True)
        return F.interpolate(h, size=(5, 6), mode="bicubic",
                             align_corners=False)
    m = Fn(fwd, conv=nn.Conv2d(3, 4, 3, padding=1))
    return m, randn(rng, 2, 3, 4, 5)


def export(module, x, constant_folding=True):
    f = io.BytesIO()
    torch.onnx.export(module, (torch.from_numpy(x),), f, opset_version=17,
                      do_constant_folding=constant_folding,
                      input_names=["x"], output_names=["y"])
    mp = onnx.load_from_string(f.getvalue())
    onnx.checker.check_model(mp)
    return f.getvalue(), mp


def reference(module, x):
    m64 = module.double().eval()
    with torch.no_grad():
        y = m64(torch.from_numpy(x).double()).numpy()
    module.float()
    return y


def group_norm_graph(opset, rng):
    """GroupNormalization (3 groups of 6 channels) as an opset-18 graph
    (scale and bias per group) or opset-21 graph (per channel)."""
    n, c, g = 2, 6, 3
    x = randn(rng, n, c, 4, 5)
    per = g if opset < 21 else c
    scale = randn(rng, per)
    bias = randn(rng, per)
    node = helper.make_node("GroupNormalization", ["x", "scale", "bias"],
                            ["y"], num_groups=g, epsilon=1e-4)
    graph = helper.make_graph(
        [node], "gn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor("scale", TensorProto.FLOAT, [per], scale),
         helper.make_tensor("bias", TensorProto.FLOAT, [per], bias)])
    mp = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    mp.ir_version = 8 if opset < 21 else 10
    xd = x.astype(np.float64).reshape(n, g, -1)
    mean = xd.mean(-1, keepdims=True)
    var = xd.var(-1, keepdims=True)
    yd = ((xd - mean) / np.sqrt(var + 1e-4)).reshape(x.shape)
    shape = (1, per, 1, 1) if per == c else None
    if per == c:
        yd = yd * scale.astype(np.float64).reshape(shape) + \
            bias.astype(np.float64).reshape(shape)
    else:
        yd = yd.reshape(n, g, -1) * scale.astype(np.float64)[None, :, None] + \
            bias.astype(np.float64)[None, :, None]
        yd = yd.reshape(x.shape)
    return mp.SerializeToString(), mp, x, yd


TEST = """\
# End-to-end numeric test of data/{name}/model.onnx (opset {opset};
# generated by gen_spatial_ops.py, do not edit).
# Nodes: {nodes}
# {note}
# RUN: dlc run %S/data/{name}/model.onnx --input x=%S/data/{name}/x.npy --output %t.y.npy
# RUN: %python %S/../compare.py %t.y.npy %S/data/{name}/y.npy --rtol 1e-5
"""


def write_case(name, note, data, mp, x, y):
    out = os.path.join(HERE, "data", name)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "model.onnx"), "wb") as f:
        f.write(data)
    np.save(os.path.join(out, "x.npy"), x)
    np.save(os.path.join(out, "y.npy"), y.astype(np.float32))
    nodes = []
    for nd in mp.graph.node:
        if nd.op_type not in nodes:
            nodes.append(nd.op_type)
    opset = max(o.version for o in mp.opset_import if o.domain in ("", "ai.onnx"))
    with open(os.path.join(HERE, name + ".test"), "w") as f:
        f.write(TEST.format(name=name, opset=opset, nodes=" ".join(nodes),
                            note=note))
    print("%-18s %6d bytes  y %s" % (name, len(data), y.shape))


def generate(name):
    rng = np.random.default_rng(7)
    torch.manual_seed(7)
    if name.startswith("group_norm_opset"):
        opset = int(name[len("group_norm_opset"):])
        data, mp, x, y = group_norm_graph(opset, rng)
        write_case(name, "GroupNormalization at opset %d (scale and bias per "
                   "%s)." % (opset, "group" if opset < 21 else "channel"),
                   data, mp, x, y)
        return
    if name == "train_unet_ops":
        return generate_train()
    fn, note = CASES[name]
    module, x = fn(rng)
    module.eval()
    data, mp = export(module, x)
    y = reference(module, x)
    # The float32 module agrees with the float64 reference.
    with torch.no_grad():
        y32 = module(torch.from_numpy(x)).numpy()
    err = np.max(np.abs(y32 - y)) / max(1.0, np.max(np.abs(y)))
    assert err < 5e-6, (name, err)
    write_case(name, note, data, mp, x, y)


class UNetOps(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.gn = nn.GroupNorm(2, 8)
        self.up = nn.ConvTranspose2d(8, 4, 2, stride=2)
        self.head = nn.Linear(4, 5)

    def forward(self, x):
        h = F.relu(self.gn(self.enc(x)))
        h = F.relu(self.up(h))
        h = F.interpolate(h, scale_factor=0.5, mode="bilinear",
                          align_corners=False)
        return self.head(h.mean((2, 3)))


TRAIN_TEST = """\
# Training through ConvTranspose, GroupNorm (InstanceNormalization of a
# view) and a bilinear Resize: data/train_unet_ops/model.onnx (TorchScript,
# opset 17, no constant folding, so the initializers keep their module
# names) trained by `dlc run --train` for 5 Adam steps (lr 1e-2, cross
# entropy) and compared with torch.optim.Adam on the same module in float64:
# the losses and every weight (generated by gen_spatial_ops.py, do not edit).
# Nodes: {nodes}
# RUN: dlc run %S/data/train_unet_ops/model.onnx --train --loss cross_entropy --optimizer adam --lr 1e-2 --input x=%S/data/train_unet_ops/x.npy --input y=%S/data/train_unet_ops/labels.npy --steps 5 --print-loss --save %t.ckpt.safetensors > %t.losses
# RUN: %python %S/../train/check_training.py %t.losses %S/data/train_unet_ops/losses.npy --weights %t.ckpt.safetensors %S/data/train_unet_ops/final.safetensors
"""


def generate_train():
    name = "train_unet_ops"
    rng = np.random.default_rng(11)
    torch.manual_seed(11)
    module = UNetOps().eval()
    with torch.no_grad():
        module.gn.weight.copy_(torch.randn(8) * 0.3 + 1)
        module.gn.bias.copy_(torch.randn(8) * 0.3)
    x = randn(rng, 4, 3, 8, 8)
    labels = rng.integers(0, 5, size=(4,)).astype(np.int64)
    data, mp = export(module, x, constant_folding=False)
    inits = {i.name for i in mp.graph.initializer}
    params = dict(module.named_parameters())
    assert set(params) <= inits, (set(params) - inits)
    m64 = module.double()
    opt = torch.optim.Adam(m64.parameters(), lr=1e-2)
    xt = torch.from_numpy(x).double()
    yt = torch.from_numpy(labels)
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = F.cross_entropy(m64(xt), yt)
        losses.append(loss.item())
        loss.backward()
        opt.step()
    out = os.path.join(HERE, "data", name)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "model.onnx"), "wb") as f:
        f.write(data)
    np.save(os.path.join(out, "x.npy"), x)
    np.save(os.path.join(out, "labels.npy"), labels)
    np.save(os.path.join(out, "losses.npy"), np.array(losses, np.float64))
    write_safetensors(os.path.join(out, "final.safetensors"),
                      {k: v.detach().numpy().astype(np.float32)
                       for k, v in m64.named_parameters()})
    nodes = []
    for nd in mp.graph.node:
        if nd.op_type not in nodes:
            nodes.append(nd.op_type)
    with open(os.path.join(HERE, name + ".test"), "w") as f:
        f.write(TRAIN_TEST.format(nodes=" ".join(nodes)))
    print("%-18s %6d bytes  losses %.6f .. %.6f" % (name, len(data),
                                                   losses[0], losses[-1]))


def main(argv):
    names = argv or list(CASES) + ["group_norm_opset18", "group_norm_opset21",
                                   "train_unet_ops"]
    for n in names:
        generate(n)


if __name__ == "__main__":
    main(sys.argv[1:])
