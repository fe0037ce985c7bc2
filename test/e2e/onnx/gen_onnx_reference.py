#!/usr/bin/python3
"""Generate the ONNX end-to-end tests: PyTorch exports and their references.

Run with Debian's python3 (python3-torch 1.13, python3-numpy, python3-onnx):

    /usr/bin/python3 test/e2e/onnx/gen_onnx_reference.py [MODEL ...]

For every model below (all of them when none is named) it builds a torch.nn
module from a fixed seed, in float32, eval mode, exports it with
torch.onnx.export (do_constant_folding=True, input `x`, output `y`, the
model's opset) and writes into test/e2e/onnx/data/<model>/:

  model.onnx  the export, byte-for-byte reproducible
  x.npy       the input, float32 standard normal
  y.npy       the expected output, float32: PyTorch's forward pass computed in
              float64 from the float32 weights and input (as
              test/e2e/gen_reference.py does), stored as float32

and the lit test test/e2e/onnx/<model>.test, which runs the ONNX file with
`dlc run` and compares with compare.py (max-abs scaled, rtol 1e-5).

Before writing, it checks each export: onnx.checker.check_model passes; every
node's op type is one the importer supports (see SUPPORTED; a model may name
extra ones it needs on purpose); PyTorch's own float32 output and the graph
evaluated by the small NumPy interpreter onnx_numpy.py both agree with the
float64 reference to rtol/2 (scaled by max(1, max|y|), as compare.py does);
and each file is under 200 KiB.

The model `train_mlp` is different: a 784-64-10 ReLU MLP whose output is
named `logits` (the label of `dlc run --train` is the new input `y`). Its
directory holds model.onnx, x.npy (float32), y.npy (int64 class labels) and
losses.npy: the 10 per-step losses, float64, of PyTorch training the model
from the export's own initializers with Adam(lr=1e-3) and
nn.CrossEntropyLoss() on that one batch, as test/e2e/train/ does. Its test
checks them with test/e2e/train/check_training.py.

The model `train_cnn` trains a CNN with a BatchNormalization node (after a
ReLU, so the export keeps it): Conv Relu BatchNormalization MaxPool Conv Relu
GlobalAveragePool Flatten Gemm, input [8,3,16,16], output `logits`, opset
13. dlc imports batch norm in inference form, so the reference is PyTorch in
eval() mode (the running statistics normalise and are never updated) while
the convolutions, the BN affine and the classifier train: SGD(lr=0.05,
momentum=0.9), nn.CrossEntropyLoss(), 10 steps on one batch, from the
export's own initializers. Its directory holds model.onnx, x.npy, y.npy
(int64), losses.npy and final.safetensors: every initializer after the last
step, named as dlc names it (characters other than letters, digits, `_` and
`.` become `_`), float32; the running statistics in it are the export's
bit for bit (checked here). The test compares the losses and the weights
with check_training.py and the checkpoint's running statistics bit for bit
with check_unchanged.py.
"""

import collections
import copy
import io
import os
import re
import sys
import textwrap

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import onnx_numpy  # noqa: E402
sys.path.insert(0, os.path.join(HERE, "..", "train"))
from gen_train_reference import write_safetensors  # noqa: E402

RTOL = 1e-5
MAX_FILE_BYTES = 200 * 1024

# The importer's ops (the contract in the ONNX importer's issue).
SUPPORTED = {
    "Gemm", "MatMul", "Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Erf", "Relu",
    "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "Flatten", "Reshape",
    "Transpose", "Constant", "ReduceMean", "LayerNormalization", "Identity",
    "Dropout", "Conv", "MaxPool", "AveragePool", "GlobalAveragePool",
    "BatchNormalization", "Shape", "Gather", "Unsqueeze", "Concat", "Squeeze",
    "Slice", "Cast", "LeakyRelu", "Abs", "Elu", "Softplus", "HardSigmoid",
    "HardSwish", "Clip", "Exp", "Log", "Neg", "ReduceProd",
}

# --------------------------------------------------------------------------
# the models
#
# Each builder takes a numpy Generator and returns (module, x): the module in
# float32 (still in train mode; export() puts it in eval mode) and the input
# the reference is computed on.

MODELS = collections.OrderedDict()


def model(name, seed, opset, dynamic=False, export_batch=None, extra_ops=(),
          note=""):
    """dynamic: export with dynamic_axes {'x': {0: 'batch'}, 'y': {0: 'batch'}}
    (the test then passes --input-shape); export_batch: trace the export
    with this batch instead of x's; extra_ops: ops outside SUPPORTED that
    this model needs on purpose; note: a line for the test's header."""
    def deco(fn):
        MODELS[name] = dict(seed=seed, opset=opset, build=fn, dynamic=dynamic,
                            export_batch=export_batch, extra_ops=set(extra_ops),
                            note=note)
        return fn
    return deco


class Net(nn.Module):
    """Named layers (fc1, ln, ...) and a forward function."""

    def __init__(self, fwd, **layers):
        super().__init__()
        self._fwd = fwd
        for k, v in layers.items():
            setattr(self, k, v)

    def forward(self, x):
        return self._fwd(self, x)


def randn(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def random_ln(n):
    """A LayerNorm with a random, non-trivial affine (as gen_reference.py)."""
    ln = nn.LayerNorm(n)
    with torch.no_grad():
        ln.weight.copy_(1.0 + 0.5 * torch.randn(n))
        ln.bias.copy_(0.5 * torch.randn(n))
    return ln


def warm_bn(module, shape, steps=4):
    """Gives the BatchNorm layers of module non-trivial running statistics:
    a few train-mode forwards on shifted, scaled random batches."""
    module.train()
    with torch.no_grad():
        for _ in range(steps):
            module(torch.randn(*shape) * 2.0 + 0.5)
    return module


@model("mlp_acts", 11, 13)
def _mlp_acts(rng):
    m = nn.Sequential(
        nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.Tanh(),
        nn.Linear(32, 32), nn.Sigmoid(), nn.Linear(32, 32), nn.GELU(),
        nn.Linear(32, 10), nn.Softmax(dim=-1))
    return m, randn(rng, 8, 16)


@model("mlp_gelu_tanh", 12, 17)
def _mlp_gelu_tanh(rng):
    m = Net(lambda m, x: F.log_softmax(
                m.fc2(F.gelu(m.fc1(x), approximate="tanh")), dim=-1),
            fc1=nn.Linear(16, 32), fc2=nn.Linear(32, 10))
    return m, randn(rng, 8, 16)


@model("flatten_view", 13, 13)
def _flatten_view(rng):
    m = Net(lambda m, x: m.fc2(F.relu(m.fc1(torch.flatten(x, 1)))),
            fc1=nn.Linear(64, 16), fc2=nn.Linear(16, 10))
    return m, randn(rng, 4, 1, 8, 8)


@model("view_mlp", 14, 13, dynamic=True,
       note="Exported with a dynamic batch: a static one folds x.size(0) into "
            "a Constant.")
def _view_mlp(rng):
    m = Net(lambda m, x: m.fc2(F.relu(m.fc1(x.view(x.size(0), -1)))),
            fc1=nn.Linear(64, 16), fc2=nn.Linear(16, 10))
    return m, randn(rng, 4, 1, 8, 8)


@model("view_mlp_static", 14, 13,
       note="The static export of view_mlp: Constant shape + Reshape.")
def _view_mlp_static(rng):
    return _view_mlp(rng)


def _residual_ln(rng):
    m = Net(lambda m, x: m.ln(x + m.fc2(F.gelu(m.fc1(x)))),
            fc1=nn.Linear(16, 32), fc2=nn.Linear(32, 16), ln=random_ln(16))
    return m, randn(rng, 2, 5, 16)


model("residual_ln13", 15, 13,
      note="Layer norm decomposed (ReduceMean/Sub/Pow/Sqrt/Div); Linear on "
           "3-D exports MatMul+Add.")(_residual_ln)
model("residual_ln17", 15, 17,
      note="Layer norm as one LayerNormalization node.")(_residual_ln)


def _cnn_body(pool):
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
        nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, stride=2), nn.ReLU(), pool,
        nn.Flatten(), nn.Linear(16, 10))


@model("cnn", 16, 13,
       note="BatchNorm2d right after a Conv2d is folded into the Conv by the "
            "export; AvgPool2d(count_include_pad=False) exports a bare "
            "AveragePool.")
def _cnn(rng):
    # The default AvgPool2d (count_include_pad=True) exports Pad+AveragePool,
    # see cnn_avgpool_pad.
    m = warm_bn(_cnn_body(nn.AvgPool2d(2, count_include_pad=False)),
                (2, 3, 16, 16))
    return m, randn(rng, 2, 3, 16, 16)


@model("cnn_gap", 17, 13,
       note="BatchNorm2d after a ReLU stays a BatchNormalization node; "
            "AdaptiveAvgPool2d(1) exports GlobalAveragePool.")
def _cnn_gap(rng):
    m = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.BatchNorm2d(8),
        nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, stride=2), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10))
    warm_bn(m, (2, 3, 16, 16))
    return m, randn(rng, 2, 3, 16, 16)


@model("cnn_dropout", 18, 13,
       note="nn.Dropout/Dropout2d in eval mode: the export drops them, no "
            "Dropout node is left.")
def _cnn_dropout(rng):
    m = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
        nn.Dropout2d(0.25), nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, stride=2),
        nn.ReLU(), nn.AvgPool2d(2, count_include_pad=False), nn.Flatten(),
        nn.Dropout(0.5), nn.Linear(16, 10))
    warm_bn(m, (2, 3, 16, 16))
    return m, randn(rng, 2, 3, 16, 16)


@model("cnn_avgpool_pad", 19, 13, extra_ops={"Pad"},
       note="NEEDS Pad: nn.AvgPool2d with its default count_include_pad=True "
            "exports Constant+Pad(mode=constant)+AveragePool(pads=0): "
            "AvgPool2d(3, 2, 1) pads by [0,0,1,1,0,0,1,1], AvgPool2d(2) by "
            "zeros.")
def _cnn_avgpool_pad(rng):
    m = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AvgPool2d(3, 2, 1),
        nn.Conv2d(8, 16, 3, stride=2), nn.ReLU(), nn.AvgPool2d(2),
        nn.Flatten(), nn.Linear(16, 10))
    return m, randn(rng, 2, 3, 16, 16)


@model("cnn_ceil", 25, 13,
       note="MaxPool2d and AvgPool2d(count_include_pad=False) with "
            "ceil_mode=True: the last, partial windows count.")
def _cnn_ceil(rng):
    m = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
        nn.MaxPool2d(3, 2, ceil_mode=True),
        nn.Conv2d(8, 16, 3), nn.ReLU(),
        nn.AvgPool2d(3, 2, ceil_mode=True, count_include_pad=False),
        nn.Flatten(), nn.Linear(144, 10))
    return m, randn(rng, 2, 3, 16, 16)


@model("cnn1d", 26, 13,
       note="1-D convolutions and pools (dlc imports them as 2-D ones on an "
            "[N, C, 1, L] view).")
def _cnn1d(rng):
    m = nn.Sequential(
        nn.Conv1d(4, 8, 5, padding=2), nn.ReLU(), nn.MaxPool1d(2),
        nn.Conv1d(8, 8, 3, stride=2, dilation=2, groups=2), nn.ReLU(),
        nn.AvgPool1d(3, 2, ceil_mode=True, count_include_pad=False),
        nn.Flatten(), nn.Linear(24, 10))
    return m, randn(rng, 2, 4, 32)


@model("dynamic_batch", 20, 13, dynamic=True, export_batch=2,
       note="Traced at batch 2 with a dynamic batch; run at batch 6.")
def _dynamic_batch(rng):
    m = Net(lambda m, x: m.fc2(F.relu(m.fc1(x))),
            fc1=nn.Linear(20, 32), fc2=nn.Linear(32, 5))
    return m, randn(rng, 6, 20)


class TransposeMatmul(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(6, 5))

    def forward(self, x):
        g = x.transpose(1, 2) @ x        # [3,6,6]: rank-3 @ rank-3
        h = x @ (g @ self.w)             # [3,6,5] rank-3 @ rank-2, [3,4,5]
        return h.permute(2, 0, 1)        # [5,3,4]


@model("transpose_matmul", 21, 13,
       note="x.transpose(1,2) @ x, a rank-3 @ rank-2 MatMul with a "
            "parameter, another rank-3 @ rank-3 and a permute.")
def _transpose_matmul(rng):
    return TransposeMatmul(), randn(rng, 3, 4, 6)


class Acts2(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.ModuleList(nn.Linear(16, 16) for _ in range(7))
        self.out = nn.Linear(16, 6)

    def forward(self, x):
        f = self.fc
        h = F.leaky_relu(f[0](x), 0.1)
        h = F.relu6(f[1](h) * 4.0)                  # saturates at 6
        h = F.hardtanh(f[2](h), -0.5, 0.5)
        h = F.hardswish(f[3](h) * 4.0)              # both saturations
        h = F.elu(f[4](h), alpha=0.8)
        h = F.softplus(f[5](h) * 8.0)               # large |x| too
        h = F.mish(f[6](h))
        return self.out(h).clamp(min=-0.3).abs()


@model("mlp_acts2", 22, 14,
       note="Activations without a dlc op of their own: LeakyRelu, Clip "
            "(relu6, hardtanh, clamp), HardSigmoid+Mul (hardswish), Elu, "
            "Softplus (and mish: Softplus Tanh Mul), Abs.")
def _mlp_acts2(rng):
    return Acts2(), randn(rng, 8, 16)


class ManualMHA(nn.Module):
    def __init__(self, c=16, heads=4):
        super().__init__()
        self.h = heads
        self.qkv = nn.ModuleList(nn.Linear(c, c) for _ in range(3))
        self.o = nn.Linear(c, c)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = (m(x).view(b, t, self.h, c // self.h).transpose(1, 2)
                   for m in self.qkv)
        a = torch.softmax(q @ k.transpose(-2, -1) * (c // self.h) ** -0.5,
                          dim=-1)
        y = (a @ v).transpose(1, 2).reshape(b, t, c)
        return self.o(y) + x.var(-1, keepdim=True)


@model("mha_dynamic", 23, 13, dynamic=True,
       note="Attention written by hand with a dynamic batch: the head size "
            "c // h is shape arithmetic, Cast to float and raised to -0.5 "
            "(folded); x.var exports Shape ReduceProd Cast Sub Div.")
def _mha_dynamic(rng):
    return ManualMHA(), randn(rng, 2, 5, 16)


@model("matmul_broadcast", 24, 13,
       note="MatMul with broadcast batch dimensions: a [6,5] parameter "
            "times [B,5,8] (token mixing).")
def _matmul_broadcast(rng):
    m = Net(lambda m, x: m.fc(torch.matmul(m.tok, x)) + 1.0,
            tok=nn.Parameter(torch.randn(6, 5) * 0.5), fc=nn.Linear(8, 8))
    return m, randn(rng, 3, 5, 8)


# --------------------------------------------------------------------------
# export and checks


def export(module, x, opset, dynamic, output_name="y"):
    module.eval()
    f = io.BytesIO()
    kw = {}
    if dynamic:
        kw["dynamic_axes"] = {"x": {0: "batch"}, output_name: {0: "batch"}}
    torch.onnx.export(module, (torch.from_numpy(x),), f,
                      opset_version=opset, do_constant_folding=True,
                      input_names=["x"], output_names=[output_name], **kw)
    data = f.getvalue()
    mp = onnx.load_from_string(data)
    onnx.checker.check_model(mp)
    return data, mp


def scaled_err(a, e):
    a, e = np.asarray(a, np.float64), np.asarray(e, np.float64)
    return float(np.max(np.abs(a - e))) / max(1.0, float(np.max(np.abs(e))))


def ops_of(mp):
    return [n.op_type for n in mp.graph.node]


def save_npy(path, arr):
    np.save(path, arr, allow_pickle=False)


TEST = """\
# End-to-end numeric test of the PyTorch export data/{name}/model.onnx
# (opset {opset}; generated by gen_onnx_reference.py, do not edit).
# Nodes: {nodes}
{note}{runs}"""


def check_size(path):
    n = os.path.getsize(path)
    if n >= MAX_FILE_BYTES:
        sys.exit("%s: %d bytes, over the %d limit" % (path, n, MAX_FILE_BYTES))


def generate(name, c):
    torch.manual_seed(c["seed"])
    rng = np.random.default_rng(c["seed"])
    module, x = c["build"](rng)
    module.eval()
    xe = x
    if c["export_batch"]:
        xe = np.ascontiguousarray(x[: c["export_batch"]])
    data, mp = export(module, xe, c["opset"], c["dynamic"])
    ops = ops_of(mp)
    unsupported = sorted(set(ops) - SUPPORTED - c["extra_ops"])
    if unsupported:
        sys.exit("%s: export has unsupported ops %s" % (name, unsupported))

    with torch.no_grad():
        y32 = module(torch.from_numpy(x)).numpy()
        m64 = copy.deepcopy(module).double()
        ref = m64(torch.from_numpy(x).double()).numpy()
    err_torch = scaled_err(y32, ref)
    (_, y_np), = onnx_numpy.run(mp, {"x": x})
    err_onnx = scaled_err(y_np, ref)
    if y_np.shape != ref.shape:
        sys.exit("%s: the graph gives shape %s, PyTorch %s"
                 % (name, y_np.shape, ref.shape))
    if err_torch > RTOL / 2 or err_onnx > RTOL / 2:
        sys.exit("%s: torch f32 error %.3g, onnx graph error %.3g (> rtol/2)"
                 % (name, err_torch, err_onnx))

    out = os.path.join(DATA, name)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "model.onnx"), "wb") as f:
        f.write(data)
    save_npy(os.path.join(out, "x.npy"), x.astype(np.float32))
    save_npy(os.path.join(out, "y.npy"), ref.astype(np.float32))
    for fn in ("model.onnx", "x.npy", "y.npy"):
        check_size(os.path.join(out, fn))

    d = "%S/data/" + name
    shape = ""
    if c["dynamic"]:
        shape = " --input-shape x=" + ",".join(str(s) for s in x.shape)
    runs = ("# RUN: dlc run {d}/model.onnx{shape} --input x={d}/x.npy "
            "--output %t.y.npy\n"
            "# RUN: %python %S/../compare.py %t.y.npy {d}/y.npy --rtol 1e-5\n"
            ).format(d=d, shape=shape)
    if c["dynamic"]:
        runs += (
            "# Without --input-shape the dynamic batch is an error that names "
            "the input and\n# the dimension.\n"
            "# RUN: not dlc {d}/model.onnx --emit=dlc 2>&1 | FileCheck %s\n"
            "# CHECK: model.onnx: error:\n"
            "# CHECK-SAME: {{{{(input ['\"]?x['\"]?[^a-zA-Z0-9_].*dim(ension)? 0)|"
            "(dim(ension)? 0.*input ['\"]?x['\"]?([^a-zA-Z0-9_]|$))}}}}\n"
            ).format(d=d)
    note = "".join("# %s\n" % line for line in textwrap.wrap(c["note"], 76))
    with open(os.path.join(HERE, name + ".test"), "w") as f:
        f.write(TEST.format(name=name, opset=c["opset"], nodes=" ".join(ops),
                            note=note, runs=runs))
    print("%-18s opset %d  %7d bytes  torch f32 err %.2e  onnx graph err %.2e"
          "  %s" % (name, c["opset"], len(data), err_torch, err_onnx,
                    " ".join(ops)))


# --------------------------------------------------------------------------
# the training reference

TRAIN_STEPS = 10
TRAIN_BATCH = 32

TRAIN_TEST = """\
# Training the PyTorch export data/train_mlp/model.onnx (784-64-10 ReLU MLP,
# opset 13, output `logits`) with `dlc run --train`: the label becomes the new
# input `y`. {steps} Adam steps (lr 1e-3, cross entropy) on one batch of
# {batch}, from the model's own initializers, compared with PyTorch's
# per-step losses (generated by gen_onnx_reference.py, do not edit).
# Nodes: {nodes}
# RUN: dlc run %S/data/train_mlp/model.onnx --train --loss cross_entropy --optimizer adam --lr 1e-3 --input x=%S/data/train_mlp/x.npy --input y=%S/data/train_mlp/y.npy --steps {steps} --print-loss > %t.losses
# RUN: %python %S/../train/check_training.py %t.losses %S/data/train_mlp/losses.npy
"""


def generate_train():
    name = "train_mlp"
    torch.manual_seed(30)
    g = torch.Generator().manual_seed(31)
    m = Net(lambda m, x: m.fc2(F.relu(m.fc1(x))),
            fc1=nn.Linear(784, 64), fc2=nn.Linear(64, 10))
    x = torch.randn(TRAIN_BATCH, 784, generator=g)
    y = torch.randint(0, 10, (TRAIN_BATCH,), generator=g)
    data, mp = export(m, x.numpy(), 13, False, output_name="logits")
    ops = ops_of(mp)
    assert not set(ops) - SUPPORTED, ops

    # Start from the export's own initializers (not the module's state).
    inits = {i.name: numpy_helper.to_array(i) for i in mp.graph.initializer}
    sd = m.state_dict()
    if sorted(inits) != sorted(sd):
        sys.exit("train_mlp: initializers %s, state_dict %s"
                 % (sorted(inits), sorted(sd)))
    m.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in inits.items()})
    m.train()
    opt = torch.optim.Adam(m.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    for _ in range(TRAIN_STEPS):
        opt.zero_grad()
        loss = loss_fn(m(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())

    out = os.path.join(DATA, name)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "model.onnx"), "wb") as f:
        f.write(data)
    save_npy(os.path.join(out, "x.npy"), x.numpy())
    save_npy(os.path.join(out, "y.npy"), y.numpy())
    save_npy(os.path.join(out, "losses.npy"), np.array(losses, np.float64))
    for fn in ("model.onnx", "x.npy", "y.npy", "losses.npy"):
        check_size(os.path.join(out, fn))
    with open(os.path.join(HERE, name + ".test"), "w") as f:
        f.write(TRAIN_TEST.format(steps=TRAIN_STEPS, batch=TRAIN_BATCH,
                                  nodes=" ".join(ops)))
    print("%-18s opset 13  %7d bytes  loss %.6f -> %.6f  %s"
          % (name, len(data), losses[0], losses[-1], " ".join(ops)))


TRAIN_CNN_STEPS = 10
TRAIN_CNN_BATCH = 8
BN_STATS = (".running_mean", ".running_var")

TRAIN_CNN_TEST = """\
# Training the PyTorch export data/train_cnn/model.onnx (a CNN with a
# BatchNormalization node, opset 13, output `logits`) with `dlc run --train`:
# the label becomes the new input `y`. {steps} SGD steps (lr 0.05, momentum
# 0.9, cross entropy) on one batch of {batch}, from the model's own
# initializers, compared with PyTorch's per-step losses and final weights.
# Batch norm is in inference form, PyTorch's eval(): the running statistics
# normalise and must come out of training bit for bit unchanged, while the
# convolutions, the BN affine and the classifier train (generated by
# gen_onnx_reference.py, do not edit).
# Nodes: {nodes}
# RUN: dlc run %S/data/train_cnn/model.onnx --train --loss cross_entropy --optimizer sgd --lr 0.05 --momentum 0.9 --input x=%S/data/train_cnn/x.npy --input y=%S/data/train_cnn/y.npy --steps {steps} --print-loss --save %t.ckpt.safetensors > %t.losses
# RUN: %python %S/../train/check_training.py %t.losses %S/data/train_cnn/losses.npy --weights %t.ckpt.safetensors %S/data/train_cnn/final.safetensors
# RUN: %python %S/check_unchanged.py %t.ckpt.safetensors %S/data/train_cnn/final.safetensors --suffix .running_mean --suffix .running_var
"""


def dlc_name(name):
    """The parameter name dlc gives an ONNX initializer."""
    return re.sub(r"[^A-Za-z0-9_.]", "_", name)


def generate_train_cnn():
    name = "train_cnn"
    torch.manual_seed(40)
    g = torch.Generator().manual_seed(41)
    m = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.BatchNorm2d(8),
        nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, stride=2), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10))
    warm_bn(m, (TRAIN_CNN_BATCH, 3, 16, 16))
    x = torch.randn(TRAIN_CNN_BATCH, 3, 16, 16, generator=g)
    y = torch.randint(0, 10, (TRAIN_CNN_BATCH,), generator=g)
    data, mp = export(m, x.numpy(), 13, False, output_name="logits")
    ops = ops_of(mp)
    assert not set(ops) - SUPPORTED, ops
    if "BatchNormalization" not in ops:
        sys.exit("train_cnn: the export folded the batch norm: %s" % ops)

    # Start from the export's own initializers (not the module's state):
    # every initializer must be a state_dict entry, and every parameter and
    # running statistic an initializer.
    inits = collections.OrderedDict(
        (i.name, numpy_helper.to_array(i).copy()) for i in mp.graph.initializer)
    sd = m.state_dict()
    want = sorted(k for k in sd if not k.endswith(".num_batches_tracked"))
    if sorted(inits) != want:
        sys.exit("train_cnn: initializers %s, state_dict %s"
                 % (sorted(inits), want))
    for k, v in inits.items():
        if v.dtype != np.float32 or v.shape != tuple(sd[k].shape):
            sys.exit("train_cnn: initializer %s is %s %s, parameter %s"
                     % (k, v.dtype, v.shape, tuple(sd[k].shape)))
        if k.endswith(BN_STATS) and not np.any(v != {
                ".running_mean": 0.0, ".running_var": 1.0}[k[k.rfind("."):]]):
            sys.exit("train_cnn: %s is trivial" % k)
    dlc_names = [dlc_name(k) for k in inits]
    if len(set(dlc_names)) != len(dlc_names):
        sys.exit("train_cnn: sanitised names collide: %s" % dlc_names)
    m.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in inits.items()},
                      strict=False)
    m.eval()  # batch norm from the running statistics, as dlc imports it

    # The export computes the module: the graph evaluated in float64 against
    # PyTorch's float64 forward pass from the same initializers.
    with torch.no_grad():
        ref = copy.deepcopy(m).double()(x.double()).numpy()
    (_, y_np), = onnx_numpy.run(mp, {"x": x.numpy()})
    err_onnx = scaled_err(y_np, ref)
    if err_onnx > RTOL / 2:
        sys.exit("train_cnn: onnx graph error %.3g (> rtol/2)" % err_onnx)

    opt = torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    for _ in range(TRAIN_CNN_STEPS):
        opt.zero_grad()
        loss = loss_fn(m(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())

    final = collections.OrderedDict()
    sd = m.state_dict()
    for k, v0 in inits.items():
        v = sd[k].detach().numpy().copy()
        if k.endswith(BN_STATS):
            if v.view(np.uint32).tobytes() != v0.view(np.uint32).tobytes():
                sys.exit("train_cnn: training changed %s" % k)
        elif np.array_equal(v, v0):
            sys.exit("train_cnn: training left %s unchanged" % k)
        final[dlc_name(k)] = v

    out = os.path.join(DATA, name)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "model.onnx"), "wb") as f:
        f.write(data)
    save_npy(os.path.join(out, "x.npy"), x.numpy())
    save_npy(os.path.join(out, "y.npy"), y.numpy())
    save_npy(os.path.join(out, "losses.npy"), np.array(losses, np.float64))
    write_safetensors(os.path.join(out, "final.safetensors"), final)
    for fn in ("model.onnx", "x.npy", "y.npy", "losses.npy",
               "final.safetensors"):
        check_size(os.path.join(out, fn))
    with open(os.path.join(HERE, name + ".test"), "w") as f:
        f.write(TRAIN_CNN_TEST.format(steps=TRAIN_CNN_STEPS,
                                      batch=TRAIN_CNN_BATCH,
                                      nodes=" ".join(ops)))
    print("%-18s opset 13  %7d bytes  onnx graph err %.2e  loss %.6f -> %.6f"
          "  %s" % (name, len(data), err_onnx, losses[0], losses[-1],
                    " ".join(ops)))


def main(argv):
    torch.set_num_threads(1)  # the same float32 sums on every machine
    train = collections.OrderedDict(
        [("train_mlp", generate_train), ("train_cnn", generate_train_cnn)])
    names = argv or list(MODELS) + list(train)
    for n in names:
        if n in train:
            train[n]()
        elif n in MODELS:
            generate(n, MODELS[n])
        else:
            sys.exit("unknown model %r; models: %s"
                     % (n, ", ".join(list(MODELS) + list(train))))


if __name__ == "__main__":
    main(sys.argv[1:])
