#!/usr/bin/python3
"""Generate the reference data of dlc's end-to-end numeric tests.

Run with Debian's python3 (python3-torch, python3-numpy):

    /usr/bin/python3 test/e2e/gen_reference.py [MODEL ...]

For every model below (all of them when none is named) it builds the
equivalent torch.nn module from a fixed seed, in float32, and writes into
test/e2e/data/<model>/:

  weights.safetensors  the module's state_dict (F32, written by hand; the
                       names are the dlc parameter names <layer>.weight/.bias)
  <input>.npy          each input/label (float32 normal, or int64 labels)
  <output>.npy         each expected output, float32, computed by PyTorch in
                       float64 from the float32 weights and inputs

It also (re)writes the lit tests test/e2e/<model>.test, and checks that the
hand-written test/e2e/models/<model>.dlc (or <model>.mlir, in the dlc
dialect) agrees with the module: same model name, same inputs/labels (names,
dtypes, shapes), same outputs in the same order, and the same parameter
names.

Alongside, it prints for each output the error PyTorch itself makes in
float32 against the float64 reference (max abs, and scaled by
max(1, max|expected|) as compare.py does), to show how much slack the
tolerance leaves.
"""

import collections
import copy
import os
import re
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import safetensors_io

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")
MODELS_DIR = os.path.join(HERE, "models")

DEFAULT_RTOL = 1e-5

# state_dict entries that are no dlc parameter (BatchNorm's batch counter,
# an int64 that dlc's weight loading ignores).
NOT_PARAMS = (".num_batches_tracked",)

# --------------------------------------------------------------------------
# safetensors, by hand


def write_safetensors(path, tensors):
    """tensors: ordered mapping name -> float32 numpy array."""
    safetensors_io.write_safetensors(path, tensors, {"format": "pt"})


def read_safetensors(path):
    return safetensors_io.read_safetensors(path, {"F32": "<f4"}, exact=True)


# --------------------------------------------------------------------------
# the models
#
# Each builder returns (module, inputs, forward):
#   module  : nn.Module whose attributes are the dlc layers (fc1, ln, ...)
#   inputs  : ordered dict name -> numpy array, in the .dlc declaration order
#   forward : f(module, tensors: dict name->torch.Tensor) -> ordered dict of
#             outputs, in the .dlc `output` order
# An optional 4th element is the rtol to use in the lit test.

MODELS = collections.OrderedDict()


def model(name, seed):
    def deco(fn):
        MODELS[name] = (seed, fn)
        return fn

    return deco


class Layers(nn.Module):
    def __init__(self, **layers):
        super().__init__()
        for k, v in layers.items():
            setattr(self, k, v)


def randn(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def random_ln(n, eps=1e-5):
    """A LayerNorm with random, non-trivial affine parameters."""
    ln = nn.LayerNorm(n, eps=eps)
    with torch.no_grad():
        ln.weight.copy_(1.0 + 0.5 * torch.randn(n))
        ln.bias.copy_(0.5 * torch.randn(n))
    return ln


def od(*pairs):
    return collections.OrderedDict(pairs)


@model("digits", 1)
def _digits(rng):
    m = Layers(fc1=nn.Linear(784, 256), fc2=nn.Linear(256, 10))
    inputs = od(("x", randn(rng, 8, 784)))

    def fwd(m, t):
        h = F.relu(m.fc1(t["x"]))
        return od(("logits", m.fc2(h)))

    return m, inputs, fwd


def _mlp(rng, act):
    m = Layers(fc1=nn.Linear(16, 32), fc2=nn.Linear(32, 8))
    inputs = od(("x", randn(rng, 8, 16)))

    def fwd(m, t):
        return od(("y", m.fc2(act(m.fc1(t["x"])))))

    return m, inputs, fwd


@model("mlp_gelu", 2)
def _mlp_gelu(rng):
    return _mlp(rng, lambda h: F.gelu(h))


@model("mlp_gelu_tanh", 3)
def _mlp_gelu_tanh(rng):
    return _mlp(rng, lambda h: F.gelu(h, approximate="tanh"))


@model("mlp_tanh", 4)
def _mlp_tanh(rng):
    return _mlp(rng, torch.tanh)


@model("mlp_sigmoid", 5)
def _mlp_sigmoid(rng):
    return _mlp(rng, torch.sigmoid)


@model("mlp_softmax", 6)
def _mlp_softmax(rng):
    m = Layers(fc1=nn.Linear(16, 32), fc2=nn.Linear(32, 10))
    inputs = od(("x", randn(rng, 8, 16)))

    def fwd(m, t):
        logits = m.fc2(F.relu(m.fc1(t["x"])))
        return od(("logits", logits), ("probs", F.softmax(logits, dim=-1)))

    return m, inputs, fwd


@model("mlp_log_softmax", 7)
def _mlp_log_softmax(rng):
    m = Layers(fc1=nn.Linear(16, 32), fc2=nn.Linear(32, 10))
    inputs = od(("x", randn(rng, 8, 16)))

    def fwd(m, t):
        logits = m.fc2(F.relu(m.fc1(t["x"])))
        return od(("logp", F.log_softmax(logits, dim=-1)))

    return m, inputs, fwd


@model("flatten_mlp", 8)
def _flatten_mlp(rng):
    m = Layers(fc1=nn.Linear(784, 16), fc2=nn.Linear(16, 10))
    inputs = od(("x", randn(rng, 4, 1, 28, 28)))

    def fwd(m, t):
        f = torch.flatten(t["x"], 1)
        return od(("y", m.fc2(F.relu(m.fc1(f)))))

    return m, inputs, fwd


@model("residual_ln", 9)
def _residual_ln(rng):
    m = Layers(fc1=nn.Linear(32, 32), ln=random_ln(32))
    inputs = od(("x", randn(rng, 6, 32)))

    def fwd(m, t):
        x = t["x"]
        h = F.relu(m.fc1(x))
        return od(("y", m.ln(x + h)))

    return m, inputs, fwd


@model("dag", 10)
def _dag(rng):
    m = Layers(
        fc1=nn.Linear(16, 16),
        fc2=nn.Linear(16, 8, bias=False),
        ln=random_ln(8, eps=1e-3),
    )
    inputs = od(("x", randn(rng, 4, 16)))

    def fwd(m, t):
        x = t["x"]
        a = m.fc1(x)
        g = torch.tanh(a) * torch.sigmoid(a)
        h = (g + x) + a
        y = m.ln(m.fc2(h))
        z = y - y.mean(dim=[1], keepdim=True)
        return od(("y", y), ("z", z))

    return m, inputs, fwd


@model("elementwise", 11)
def _elementwise(rng):
    m = Layers()
    inputs = od(
        ("x", randn(rng, 4, 8)),
        ("b", randn(rng, 8)),
        ("c", randn(rng, 4, 1)),
        ("p", rng.uniform(0.5, 2.0, size=(4, 8)).astype(np.float32)),
    )

    def fwd(m, t):
        x, b, c, p = t["x"], t["b"], t["c"], t["p"]
        return od(
            ("d_sub", x - b),
            ("d_mul", x * c),
            ("d_div", x / p),
            ("d_divb", c / (b * b + 1.0)),
            ("d_bcast", c + b),
            ("d_add", x + p),
            ("e_exp", torch.exp(x)),
            ("e_log", torch.log(x * x + 1.0)),
            ("e_sqrt", torch.sqrt(p)),
            ("e_neg", -x),
            ("e_tanh", torch.tanh(x)),
            ("e_sig", torch.sigmoid(x)),
            ("e_relu", F.relu(x)),
        )

    return m, inputs, fwd


@model("scalars", 12)
def _scalars(rng):
    m = Layers()
    inputs = od(("x", randn(rng, 4, 8)))

    def fwd(m, t):
        x = t["x"]
        return od(
            ("a", x * 3),
            ("b", 1.0 - x),
            ("c", 2.0 / (x * x + 1.0)),
            ("d", x * -2.5 + 1e-3),
            ("e", x / 4),
        )

    return m, inputs, fwd


@model("reductions", 13)
def _reductions(rng):
    m = Layers()
    inputs = od(("x", randn(rng, 4, 6, 5)))

    def fwd(m, t):
        x = t["x"]
        return od(
            ("s1", x.sum(dim=[1])),
            ("s01k", x.sum(dim=[0, 1], keepdim=True)),
            ("s_all", x.sum()),
            ("m1k", x.mean(dim=[1], keepdim=True)),
            ("m01", x.mean(dim=[0, 1])),
            ("m2", x.mean(dim=[2], keepdim=False)),
            ("m_all", x.mean()),
            ("r1", x.reshape(4, 30)),
            ("r2", x.reshape(-1, 5)),
            ("t02", x.transpose(0, 2)),
            ("p201", x.permute(2, 0, 1)),
            ("c", (x.transpose(1, 2) * 2.0).sum(dim=[2])),
        )

    return m, inputs, fwd


@model("softmax_dims", 14)
def _softmax_dims(rng):
    m = Layers()
    inputs = od(("x", randn(rng, 4, 6, 5)))

    def fwd(m, t):
        x = t["x"]
        f = torch.flatten(x, start_dim=0, end_dim=1)
        return od(
            ("s0", F.softmax(x, dim=0)),
            ("s1", F.softmax(x, dim=1)),
            ("sm2", F.softmax(x, dim=-2)),
            ("l2", F.log_softmax(x, dim=2)),
            ("lm1", F.log_softmax(x, dim=-1)),
            ("g", F.gelu(f, approximate="none")),
        )

    return m, inputs, fwd


@model("matmul", 15)
def _matmul(rng):
    m = Layers()
    inputs = od(
        ("a", randn(rng, 5, 7)),
        ("b", randn(rng, 7, 3)),
        ("a3", randn(rng, 2, 5, 7)),
        ("b3", randn(rng, 2, 7, 3)),
    )

    def fwd(m, t):
        a, b = t["a"], t["b"]
        return od(
            ("mm", torch.matmul(a, b)),
            ("bmm", torch.matmul(t["a3"], t["b3"])),
            ("mmt", torch.matmul(b.transpose(0, 1), a.transpose(0, 1))),
        )

    return m, inputs, fwd


@model("attention", 16)
def _attention(rng):
    m = Layers(ln=random_ln(8))
    inputs = od(
        ("q", randn(rng, 2, 5, 8)),
        ("k", randn(rng, 2, 5, 8)),
        ("v", randn(rng, 2, 5, 8)),
    )

    def fwd(m, t):
        scores = torch.matmul(t["q"], t["k"].transpose(1, 2)) * 0.35355339059327373
        att = F.softmax(scores, dim=-1)
        o = torch.matmul(att, t["v"])
        return od(("att", att), ("y", m.ln(o)))

    return m, inputs, fwd


@model("losses", 17)
def _losses(rng):
    m = Layers(fc=nn.Linear(16, 10), reg=nn.Linear(16, 4))
    inputs = od(
        ("x", randn(rng, 8, 16)),
        ("y", rng.integers(0, 10, size=(8,)).astype(np.int64)),
        ("t", randn(rng, 8, 4)),
    )

    def fwd(m, t):
        x, y, tgt = t["x"], t["y"], t["t"]
        logits = m.fc(x)
        pred = m.reg(x)
        return od(
            ("ce", F.cross_entropy(logits, y)),
            ("ce_sum", F.cross_entropy(logits, y, reduction="sum")),
            ("mse", F.mse_loss(pred, tgt, reduction="mean")),
            ("mse_sum", F.mse_loss(pred, tgt, reduction="sum")),
        )

    return m, inputs, fwd


@model("decomposed", 18)
def _decomposed(rng):
    # models/decomposed.mlir: the subgraphs torch.onnx.export (opset 13)
    # writes for these modules, as the ONNX importer emits them.
    m = Layers(ln=random_ln(32))
    inputs = od(("x", randn(rng, 6, 32)))

    def fwd(m, t):
        x = t["x"]
        return od(
            ("erf", torch.erf(x)),
            ("erf_wide", torch.erf(2.5 * x)),
            ("gelu", F.gelu(x)),
            ("gelu_tanh", F.gelu(x, approximate="tanh")),
            ("ln", m.ln(x)),
            ("ln_plain", F.layer_norm(x, (32,), eps=1e-6)),
        )

    return m, inputs, fwd


def random_bn(n):
    """A BatchNorm2d with random affine parameters and running statistics."""
    bn = nn.BatchNorm2d(n)
    with torch.no_grad():
        bn.weight.copy_(1.0 + 0.5 * torch.randn(n))
        bn.bias.copy_(0.5 * torch.randn(n))
        bn.running_mean.copy_(0.5 * torch.randn(n))
        bn.running_var.copy_(0.5 + torch.rand(n))
    return bn


@model("cnn", 18)
def _cnn(rng):
    m = Layers(
        conv1=nn.Conv2d(3, 8, 3, padding=1),
        bn1=random_bn(8),
        conv2=nn.Conv2d(8, 16, 3, stride=2),
        fc=nn.Linear(64, 10),
    )
    inputs = od(("x", randn(rng, 4, 3, 16, 16)))

    def fwd(m, t):
        h1 = F.max_pool2d(F.relu(m.bn1(m.conv1(t["x"]))), 2)
        h2 = F.relu(m.conv2(h1))
        p = F.avg_pool2d(h2, 3, stride=2, padding=1, count_include_pad=False)
        return od(("y", m.fc(torch.flatten(p, 1))))

    return m, inputs, fwd


@model("conv_variants", 19)
def _conv_variants(rng):
    # Grouped, strided, dilated, non-square, asymmetrically padded.
    m = Layers(gconv=nn.Conv2d(4, 6, (3, 2), stride=(2, 1), dilation=(1, 2), groups=2))
    inputs = od(("x", randn(rng, 2, 4, 11, 10)))

    def fwd(m, t):
        # dlc padding [top, left, bottom, right] = [1, 0, 2, 1]
        a = m.gconv(F.pad(t["x"], (0, 1, 1, 2)))
        return od(
            ("mp", F.max_pool2d(a, 3, stride=2, padding=1)),
            ("mpd", F.max_pool2d(a, 2, stride=1, dilation=2)),
            ("ap", F.avg_pool2d(a, (2, 3), stride=(1, 2), padding=(1, 1))),
        )

    return m, inputs, fwd


@model("conv_direct", 20)
def _conv_direct(rng):
    # Convolutions with at most 16 input taps (C*KH*KW), which dlc computes
    # directly instead of through im2col + GEMM: one channel 3x3 padded,
    # then two channels (2, 3) strided, dilated and asymmetrically padded,
    # followed by a max pool (2x2, stride 2) and a strided 3x3 average pool.
    m = Layers(c1=nn.Conv2d(1, 2, 3, padding=1),
               c2=nn.Conv2d(2, 3, (2, 3), stride=(2, 1), dilation=(2, 1)))
    inputs = od(("x", randn(rng, 3, 1, 9, 11)))

    def fwd(m, t):
        a = F.relu(m.c1(t["x"]))
        # dlc padding [top, left, bottom, right] = [1, 2, 0, 1]
        b = m.c2(F.pad(a, (2, 1, 1, 0)))
        return od(
            ("a", a),
            ("b", b),
            ("mp", F.max_pool2d(b, 2, stride=2)),
            ("ap", F.avg_pool2d(a, 3, stride=2, padding=1,
                                count_include_pad=False)),
        )

    return m, inputs, fwd


@model("conv_channels", 21)
def _conv_channels(rng):
    # Convolutions whose output positions are no multiple of 16 (2 x 7 x 7
    # = 98) while their channels are (32, then 16): dlc's GEMM then has the
    # channels as its columns (y^T = col^T w^T). Strided and padded, then
    # a stride-1 3x3, a 1x1 and a bias-free one.
    m = Layers(c1=nn.Conv2d(8, 32, 3, stride=2, padding=1),
               c2=nn.Conv2d(32, 16, 3, padding=1),
               c3=nn.Conv2d(16, 32, 1, bias=False))
    inputs = od(("x", randn(rng, 2, 8, 13, 13)))

    def fwd(m, t):
        a = F.relu(m.c1(t["x"]))
        b = m.c2(a)
        return od(("a", a), ("b", b), ("c", m.c3(b)))

    return m, inputs, fwd


# --------------------------------------------------------------------------
# a light reading of the hand-written .dlc, to cross-check it


_DT = {"f32": np.float32, "i64": np.int64, "i32": np.int32}


def read_dlc(path):
    info = {"name": None, "inputs": collections.OrderedDict(), "outputs": [], "params": set()}
    with open(path) as f:
        for raw in f:
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            mm = re.match(r"model\s+([A-Za-z_]\w*)$", line)
            if mm:
                info["name"] = mm.group(1)
                continue
            mm = re.match(r"(input|label)\s+([A-Za-z_]\w*)\s*:\s*(\w+)\s*\[([^\]]*)\]$", line)
            if mm:
                dims = tuple(int(d) for d in mm.group(4).split(",") if d.strip())
                info["inputs"][mm.group(2)] = (mm.group(1), mm.group(3), dims)
                continue
            mm = re.match(r"output\s+(.*)$", line)
            if mm:
                info["outputs"] += [s.strip() for s in mm.group(1).split(",")]
                continue
            # parameters: every linear/conv2d(..., name=N[, bias=false]),
            # layer_norm(..., name=N) and batch_norm2d(..., name=N)
            for op in ("linear", "layer_norm", "conv2d", "batch_norm2d"):
                for start in [mm.end() for mm in re.finditer(r"\b%s\(" % op, line)]:
                    depth, i = 1, start
                    while depth:
                        depth += {"(": 1, ")": -1}.get(line[i], 0)
                        i += 1
                    call = line[start : i - 1]
                    # keep only this call's own top-level arguments
                    flat, depth = "", 0
                    for ch in call:
                        if ch in "([":
                            depth += 1
                        elif ch in ")]":
                            depth -= 1
                        elif depth == 0:
                            flat += ch
                    name = re.search(r"\bname\s*=\s*([A-Za-z_]\w*)", flat).group(1)
                    info["params"].add(name + ".weight")
                    if not re.search(r"\bbias\s*=\s*false\b", flat):
                        info["params"].add(name + ".bias")
                    if op == "batch_norm2d":
                        info["params"] |= {name + ".running_mean", name + ".running_var"}
    return info


def read_mlir(path):
    """The same facts from a .mlir model in the dlc dialect: the model name,
    the forward entry's named arguments and results, the parameters."""
    with open(path) as f:
        text = f.read()
    info = {"name": None, "inputs": collections.OrderedDict(), "outputs": [], "params": set()}
    mm = re.search(r'dlc\.model = "(\w+)"', text) or re.search(r"module @(\w+)", text)
    info["name"] = mm and mm.group(1)
    sig = re.search(r"func\.func @forward\((.*?)\)\s*->(.*?)attributes", text, re.S)
    arg = r'%\w+: tensor<((?:\d+x)*)(\w+)> \{dlc\.name = "(\w+)"\}'
    for dims, dt, name in re.findall(arg, sig.group(1)):
        shape = tuple(int(d) for d in dims.split("x") if d)
        info["inputs"][name] = ("input", dt, shape)
    info["outputs"] = re.findall(r'\{dlc\.name = "(\w+)"\}', sig.group(2))
    info["params"] = set(re.findall(r'dlc\.parameter @"?([\w.]+)"?', text))
    return info


def model_path(name):
    """models/<name>.dlc, or models/<name>.mlir for a model in the dialect."""
    for ext in (".dlc", ".mlir"):
        path = os.path.join(MODELS_DIR, name + ext)
        if os.path.exists(path):
            return path
    raise SystemExit("missing hand-written model file %s.dlc (or .mlir)" % os.path.join(MODELS_DIR, name))


def check_dlc(name, module, inputs, outputs):
    path = model_path(name)
    d = read_mlir(path) if path.endswith(".mlir") else read_dlc(path)
    errs = []
    if d["name"] != name:
        errs.append("model name %r != %r" % (d["name"], name))
    used = collections.OrderedDict((k, v) for k, v in d["inputs"].items() if k in inputs)
    if list(used) != list(inputs):
        errs.append("inputs %s != %s" % (list(used), list(inputs)))
    for k, arr in inputs.items():
        if k not in d["inputs"]:
            continue
        _, dt, dims = d["inputs"][k]
        if _DT.get(dt) != arr.dtype or dims != arr.shape:
            errs.append("input %s: %s%s vs %s%s" % (k, dt, list(dims), arr.dtype, list(arr.shape)))
    for k, (kind, _, _) in d["inputs"].items():
        if k not in inputs and kind == "input":
            errs.append("declared input %s has no data" % k)
    if d["outputs"] != list(outputs):
        errs.append("outputs %s != %s" % (d["outputs"], list(outputs)))
    sd = set(k for k in module.state_dict() if not k.endswith(NOT_PARAMS))
    if d["params"] != sd:
        errs.append("params %s != state_dict %s" % (sorted(d["params"]), sorted(sd)))
    if errs:
        raise SystemExit("%s: %s" % (path, "; ".join(errs)))


# --------------------------------------------------------------------------


def scaled_err(actual, expected):
    a = np.asarray(actual, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    if e.size == 0:
        return 0.0, 0.0
    abs_err = float(np.max(np.abs(a - e)))
    return abs_err, abs_err / max(1.0, float(np.max(np.abs(e))))


def write_test(name, inputs, outputs, rtol):
    rel = lambda p: "%S/" + p
    ins = " ".join(
        "--input %s=%s" % (k, rel("data/%s/%s.npy" % (name, k))) for k in inputs
    )
    if len(outputs) == 1:
        (o,) = outputs
        outs = "--output %%t.%s.npy" % o
    else:
        outs = " ".join("--output %s=%%t.%s.npy" % (o, o) for o in outputs)
    model = "models/" + os.path.basename(model_path(name))
    lines = [
        "# End-to-end numeric test of %s (generated by gen_reference.py)." % model,
        "# RUN: dlc run %s --weights %s %s %s"
        % (rel(model), rel("data/%s/weights.safetensors" % name), ins, outs),
    ]
    tol = "" if rtol == DEFAULT_RTOL else " --rtol %g" % rtol
    for o in outputs:
        lines.append(
            "# RUN: %%python %s %%t.%s.npy %s%s"
            % (rel("compare.py"), o, rel("data/%s/%s.npy" % (name, o)), tol)
        )
    with open(os.path.join(HERE, name + ".test"), "w") as f:
        f.write("\n".join(lines) + "\n")


def generate(name):
    seed, build = MODELS[name]
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    built = build(rng)
    module, inputs, fwd = built[:3]
    rtol = built[3] if len(built) > 3 else DEFAULT_RTOL
    module = module.float().eval()

    out_dir = os.path.join(DATA, name)
    os.makedirs(out_dir, exist_ok=True)
    for f in os.listdir(out_dir):
        os.remove(os.path.join(out_dir, f))

    sd = collections.OrderedDict(
        (k, v.detach().cpu().numpy().astype(np.float32))
        for k, v in module.state_dict().items()
        if not k.endswith(NOT_PARAMS)
    )
    if sd:
        write_safetensors(os.path.join(out_dir, "weights.safetensors"), sd)
        back = read_safetensors(os.path.join(out_dir, "weights.safetensors"))
        assert list(back) == list(sd) and all(np.array_equal(back[k], sd[k]) for k in sd)
    else:
        # A model without parameters still gets a (valid, empty) weights file,
        # so every test passes --weights the same way.
        write_safetensors(os.path.join(out_dir, "weights.safetensors"), sd)

    for k, arr in inputs.items():
        np.save(os.path.join(out_dir, k + ".npy"), arr)

    def run(dtype):
        m = copy.deepcopy(module).to(dtype)
        t = {
            k: (torch.from_numpy(a).to(dtype) if a.dtype.kind == "f" else torch.from_numpy(a))
            for k, a in inputs.items()
        }
        with torch.no_grad():
            return collections.OrderedDict(
                (k, v.detach().cpu().numpy()) for k, v in fwd(m, t).items()
            )

    ref = run(torch.float64)
    f32 = run(torch.float32)
    check_dlc(name, module, inputs, ref)

    report = []
    for k, v in ref.items():
        exp = np.asarray(v, dtype=np.float32)
        assert np.all(np.isfinite(exp)), (name, k)
        np.save(os.path.join(out_dir, k + ".npy"), exp)
        abs_e, sc_e = scaled_err(f32[k], v)
        report.append("%s%s f32-err %.2e (scaled %.2e)" % (k, list(exp.shape), abs_e, sc_e))
        assert sc_e <= rtol / 2, "%s/%s: float32 PyTorch itself is off by %.2e" % (name, k, sc_e)
    write_test(name, inputs, ref, rtol)
    print("%-16s params=%s inputs=%s" % (name, list(sd), ["%s%s" % (k, list(a.shape)) for k, a in inputs.items()]))
    for r in report:
        print("%16s   %s" % ("", r))


def main(argv):
    names = argv or list(MODELS)
    for n in names:
        if n not in MODELS:
            raise SystemExit("unknown model %r (have: %s)" % (n, ", ".join(MODELS)))
    torch.set_num_threads(1)
    for n in names:
        generate(n)
    total = 0
    for root, _, files in os.walk(DATA):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    print("data/ total: %d bytes (%.1f KiB)" % (total, total / 1024.0))


if __name__ == "__main__":
    main(sys.argv[1:])
