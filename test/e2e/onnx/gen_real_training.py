#!/usr/bin/env python3
"""Training references for two models of the real-model corpus
(real/squeezenet_dynamo and real/shufflenet_dynamo, exported by
gen_real_models.py), for train_squeezenet_real.test and
train_shufflenet_real.test: `dlc run MODEL --train` must match
torch.optim step for step.

Run with a Python that has PyTorch, onnx and numpy:

    /tmp/tv/bin/python test/e2e/onnx/gen_real_training.py
    /tmp/tv/bin/python test/e2e/onnx/gen_real_training.py squeezenet_dynamo

The reference starts from the ONNX file's own weights, not from the PyTorch
module that was exported: the dynamo exporter folds BatchNorm into Conv and
renames parameters. So it is a small float64 interpreter of the ONNX graph
(Conv, Relu, MaxPool, Concat, Split, Transpose, Reshape, ReduceMean, Gemm,
with ONNX semantics and attributes) whose float initializers (the external
ones included) are torch.nn.Parameters -- every float initializer is a
trained parameter in dlc; the int64 ones are shapes and axes. Before
training, its forward pass is checked against the folder's y.npy (scaled
error max|out - y| / max|y| < 1e-5).

For each model it writes, into the model's folder:

  labels.npy   int64 [batch], classes in [0, 10) from a fixed seed (the
               label input `y` that `dlc run --train --loss cross_entropy`
               adds)
  losses.npy   float64 [STEPS]: the loss of every step, computed before that
               step's update (what `dlc run --print-loss` prints), of
               torch.optim.Adam(lr=LR, PyTorch's other defaults) on
               F.cross_entropy (mean over the batch), on the one batch x.npy
"""

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from onnx import numpy_helper  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REAL = os.path.join(HERE, "real")
MODELS = {"squeezenet_dynamo": 21, "shufflenet_dynamo": 22}  # -> label seed
STEPS = 5
LR = 1e-3
NUM_CLASSES = 10
FORWARD_TOL = 1e-5


def attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def pad_nchw(x, pads, value):
    """Pad the two spatial dims by ONNX pads [top, left, bottom, right]."""
    t, l, b, r = pads
    return F.pad(x, (l, r, t, b), value=value) if any(pads) else x


def conv(x, w, b, a):
    if a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
        raise SystemExit("Conv: auto_pad %r" % a["auto_pad"])
    if list(a.get("kernel_shape", w.shape[2:])) != list(w.shape[2:]):
        raise SystemExit("Conv: kernel_shape %s" % a["kernel_shape"])
    x = pad_nchw(x, a.get("pads", [0, 0, 0, 0]), 0.0)
    return F.conv2d(x, w, b, stride=a.get("strides", [1, 1]),
                    dilation=a.get("dilations", [1, 1]),
                    groups=a.get("group", 1))


def max_pool(x, a):
    if a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
        raise SystemExit("MaxPool: auto_pad %r" % a["auto_pad"])
    if a.get("storage_order", 0) != 0:
        raise SystemExit("MaxPool: storage_order %d" % a["storage_order"])
    k = a["kernel_shape"]
    pads = a.get("pads", [0, 0, 0, 0])
    strides = a.get("strides", [1, 1])
    dil = a.get("dilations", [1, 1])
    if pads[0] == pads[2] and pads[1] == pads[3]:
        # PyTorch's padding, ceil_mode included: the last window must start
        # inside the input or the left padding, as ONNX (opset >= 19) says.
        return F.max_pool2d(x, k, strides, (pads[0], pads[1]), dil,
                            ceil_mode=bool(a.get("ceil_mode", 0)))
    if a.get("ceil_mode", 0):
        raise SystemExit("MaxPool: ceil_mode with asymmetric pads")
    return F.max_pool2d(pad_nchw(x, pads, float("-inf")), k, strides, 0, dil)


def reshape(x, shape, a):
    shape = [int(d) for d in shape]
    if not a.get("allowzero", 0):
        shape = [x.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    return x.reshape(shape)


def split(x, node, a, ins):
    axis = a.get("axis", 0)
    n = len(node.output)
    if len(ins) > 1 and ins[1] is not None:
        sizes = [int(s) for s in ins[1]]
    else:
        if a.get("num_outputs", n) != n:
            raise SystemExit("Split: num_outputs %d, %d outputs"
                             % (a["num_outputs"], n))
        dim = x.shape[axis]
        chunk = -(-dim // n)  # ONNX: ceil; the last chunk may be smaller
        sizes = [chunk] * (n - 1) + [dim - chunk * (n - 1)]
    return list(torch.split(x, sizes, dim=axis))


def reduce_mean(x, ins, a):
    axes = ins[1] if len(ins) > 1 and ins[1] is not None else a.get("axes")
    keep = bool(a.get("keepdims", 1))
    if axes is None or len(axes) == 0:
        if a.get("noop_with_empty_axes", 0):
            return x
        axes = list(range(x.dim()))
    return x.mean(dim=[int(d) for d in axes], keepdim=keep)


def gemm(ins, a):
    A, B = ins[0], ins[1]
    if a.get("transA", 0):
        A = A.t()
    if a.get("transB", 0):
        B = B.t()
    y = a.get("alpha", 1.0) * (A @ B)
    if len(ins) > 2 and ins[2] is not None:
        y = y + a.get("beta", 1.0) * ins[2]
    return y


class OnnxGraph(torch.nn.Module):
    """A float64 PyTorch evaluation of an ONNX graph: the float
    initializers are parameters, the integer ones constants."""

    def __init__(self, model):
        super().__init__()
        self.graph = model.graph
        self.params = torch.nn.ParameterDict()
        self.names = {}  # ONNX name -> ParameterDict key
        self.consts = {}
        for init in model.graph.initializer:
            a = numpy_helper.to_array(init)
            if a.dtype.kind == "f":
                key = "p%d" % len(self.names)
                self.names[init.name] = key
                self.params[key] = torch.nn.Parameter(
                    torch.from_numpy(a.astype(np.float64)))
            else:
                self.consts[init.name] = a

    def parameter_names(self):
        return list(self.names)

    def forward(self, **inputs):
        env = dict(self.consts)  # integer shapes and axes, as numpy
        env.update({k: self.params[v] for k, v in self.names.items()})
        env.update(inputs)
        for node in self.graph.node:
            a = attrs(node)
            ins = [env[i] if i else None for i in node.input]
            op = node.op_type
            if op == "Conv":
                out = conv(ins[0], ins[1], ins[2] if len(ins) > 2 else None, a)
            elif op == "Relu":
                out = F.relu(ins[0])
            elif op == "MaxPool":
                if len(node.output) > 1:
                    raise SystemExit("MaxPool: indices output")
                out = max_pool(ins[0], a)
            elif op == "Concat":
                out = torch.cat(ins, dim=a["axis"])
            elif op == "Split":
                out = split(ins[0], node, a, ins)
            elif op == "Transpose":
                perm = a.get("perm", list(range(ins[0].dim()))[::-1])
                out = ins[0].permute(*perm)
            elif op == "Reshape":
                out = reshape(ins[0], ins[1], a)
            elif op == "ReduceMean":
                out = reduce_mean(ins[0], ins, a)
            elif op == "Gemm":
                out = gemm(ins, a)
            else:
                raise SystemExit("unsupported op %s" % op)
            outs = out if isinstance(out, list) else [out]
            if len(outs) != len(node.output):
                raise SystemExit("%s: %d outputs, %d produced"
                                 % (op, len(node.output), len(outs)))
            env.update(zip(node.output, outs))
        return [env[o.name] for o in self.graph.output]


def save_npy(path, a):
    np.save(path, a)
    print("  wrote %s %s %s" % (os.path.relpath(path, HERE), a.dtype,
                                list(a.shape)))


def generate(name, seed):
    folder = os.path.join(REAL, name)
    model = onnx.load(os.path.join(folder, "model.onnx"))  # + external data
    if [i.name for i in model.graph.input] != ["x"] or \
            len(model.graph.output) != 1:
        raise SystemExit("%s: inputs %s, outputs %s" % (
            name, [i.name for i in model.graph.input],
            [o.name for o in model.graph.output]))
    x = np.load(os.path.join(folder, "x.npy"))
    y_ref = np.load(os.path.join(folder, "y.npy"))
    assert x.dtype == np.float32, x.dtype
    net = OnnxGraph(model)
    xt = torch.from_numpy(x.astype(np.float64))

    # 1. the interpreter reproduces the corpus' reference output
    with torch.no_grad():
        (out,) = net(x=xt)
    err = float(np.max(np.abs(out.numpy() - y_ref)) / np.max(np.abs(y_ref)))
    print("%s: %d trained tensors (%d values), forward scaled error %.3g"
          % (name, len(net.names), sum(p.numel() for p in net.parameters()),
             err))
    if not err < FORWARD_TOL:
        raise SystemExit("%s: forward scaled error %.3g >= %g"
                         % (name, err, FORWARD_TOL))
    if out.shape != (x.shape[0], NUM_CLASSES):
        raise SystemExit("%s: output shape %s" % (name, list(out.shape)))

    # 2. labels, then 3. STEPS Adam steps on the one batch
    labels = np.random.default_rng(seed).integers(
        0, NUM_CLASSES, size=x.shape[0]).astype(np.int64)
    lt = torch.from_numpy(labels)
    opt = torch.optim.Adam(net.parameters(), lr=LR, foreach=False)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        (logits,) = net(x=xt)
        loss = F.cross_entropy(logits, lt)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    print("  labels %s, losses %s" % (labels.tolist(),
                                      " ".join("%.9g" % l for l in losses)))
    save_npy(os.path.join(folder, "labels.npy"), labels)
    save_npy(os.path.join(folder, "losses.npy"),
             np.array(losses, dtype=np.float64))


def main(argv):
    torch.set_default_dtype(torch.float64)
    names = argv or list(MODELS)
    for n in names:
        if n not in MODELS:
            raise SystemExit("unknown model %s (known: %s)"
                             % (n, ", ".join(MODELS)))
        generate(n, MODELS[n])


if __name__ == "__main__":
    main(sys.argv[1:])
