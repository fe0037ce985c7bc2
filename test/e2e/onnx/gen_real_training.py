#!/usr/bin/env python3
"""Training references for models of the real-model corpus (real/<name>/,
exported by gen_real_models.py), for the train_<arch>_real.test files:
`dlc run MODEL --train` must match torch.optim step for step, and its
checkpoint must hold the same weights at the end.

Run with a Python that has PyTorch, onnx and numpy:

    python3 test/e2e/onnx/gen_real_training.py
    python3 test/e2e/onnx/gen_real_training.py gpt_dynamo

The reference starts from the ONNX file's own weights, not from the PyTorch
module that was exported: the dynamo exporter folds BatchNorm into Conv,
pre-transposes Linear weights into MatMul operands, folds constants such as
the attention scale, a causal mask or a class token expanded to the batch
into initializers, merges equal initializers and renames parameters. So it
is a small float64 interpreter of the ONNX graph (the ops of MODELS, with
ONNX semantics and attributes: see OnnxGraph.forward) whose float
initializers (the external ones included) are torch.nn.Parameters, except
those dlc keeps constant as the exported module did (one-element ones such
as the attention scale, and masks holding -inf or float's lowest: see
trainable()); the integer and boolean ones are shapes, axes and indices. Before training,
its forward pass is checked against the folder's y.npy (scaled error
max|out - y| / max|y| < 1e-5).

For each model it writes, into the model's folder:

  labels.npy   int64, the output's shape without the classes' dimension,
               classes from a fixed seed (the label input `y` that
               `dlc run --train --loss cross_entropy` adds); gpt_dynamo's
               [N, T] labels have IGNORED positions set to -100
  losses.npy   float64 [STEPS]: the loss of every step, computed before that
               step's update (what `dlc run --print-loss` prints), of
               torch.optim.Adam(lr=LR, PyTorch's other defaults) on
               F.cross_entropy (mean over the batch; for an [N, T, C] output,
               `--class-dim -1`, over the positions whose label is not
               -100), on the one batch of the folder's inputs
  final.safetensors
               float32: every float initializer after the STEPS updates,
               under dlc's name for it (characters other than
               [A-Za-z0-9_.] become `_`), for check_training.py --weights;
               and for a tensor with elements whose gradient is rounding
               noise (an attention key's bias: the softmax of a row ignores
               a shift common to the row), which the test must leave out
               with the --skip flags printed here, Adam's first moment
               `optimizer.<name>.exp_avg`, as dlc's checkpoint names it
"""

import json
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from onnx import numpy_helper  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REAL = os.path.join(HERE, "real")
sys.path.insert(0, os.path.dirname(HERE))
from safetensors_io import write_safetensors  # noqa: E402

# name -> label seed, the expected output shape, the classes' dimension
# (dlc's --class-dim) and how many labels are set to ignore_index
MODELS = {
    "squeezenet_dynamo": dict(seed=21, out=[2, 10]),
    "shufflenet_dynamo": dict(seed=22, out=[1, 10]),
    "transformer_dynamo": dict(seed=23, out=[2, 5]),
    "vit_dynamo": dict(seed=24, out=[2, 3]),
    "embedding_classifier_dynamo": dict(seed=25, out=[4, 4]),
    "gpt_dynamo": dict(seed=26, out=[2, 8, 50], class_dim=-1, ignored=3),
}
STEPS = 5
LR = 1e-3
IGNORE_INDEX = -100
FORWARD_TOL = 1e-5
NOISE = 1e-10  # a gradient this much smaller than its tensor's is noise


def attrs(node):
    out = {}
    for a in node.attribute:
        v = onnx.helper.get_attribute_value(a)
        out[a.name] = v.decode() if isinstance(v, bytes) else v
    return out


def tt(v):
    """A torch tensor of an environment value (numpy for constants)."""
    if isinstance(v, torch.Tensor):
        return v
    v = np.asarray(v)
    if v.dtype.kind == "f":
        return torch.from_numpy(v.astype(np.float64))
    return torch.from_numpy(v.copy())


def ints(v):
    """An axes or shape operand as a list of Python ints."""
    if isinstance(v, torch.Tensor):
        v = v.numpy()
    return [int(d) for d in np.asarray(v).reshape(-1)]


def pad_nchw(x, pads, value):
    """Pad the two spatial dims by ONNX pads [top, left, bottom, right]."""
    t, l, b, r = pads
    return F.pad(x, (l, r, t, b), value=value) if any(pads) else x


def conv(x, w, b, a):
    if a.get("auto_pad", "NOTSET") != "NOTSET":
        raise SystemExit("Conv: auto_pad %r" % a["auto_pad"])
    if w.dim() != 4:
        raise SystemExit("Conv: %d-D kernel" % (w.dim() - 2))
    if list(a.get("kernel_shape", w.shape[2:])) != list(w.shape[2:]):
        raise SystemExit("Conv: kernel_shape %s" % a["kernel_shape"])
    x = pad_nchw(x, a.get("pads", [0, 0, 0, 0]), 0.0)
    return F.conv2d(x, w, b, stride=a.get("strides", [1, 1]),
                    dilation=a.get("dilations", [1, 1]),
                    groups=a.get("group", 1))


def max_pool(x, a):
    if a.get("auto_pad", "NOTSET") != "NOTSET":
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
    shape = ints(shape)
    if not a.get("allowzero", 0):
        shape = [x.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    elif 0 in shape and -1 in shape:
        raise SystemExit("Reshape: allowzero with both 0 and -1")
    return x.reshape(shape)


def split(x, node, a, ins, opset):
    axis = a.get("axis", 0)
    n = len(node.output)
    if len(ins) > 1 and ins[1] is not None:
        sizes = ints(ins[1])
    elif "split" in a:  # opset < 13
        sizes = list(a["split"])
    else:
        if a.get("num_outputs", n) != n:
            raise SystemExit("Split: num_outputs %d, %d outputs"
                             % (a["num_outputs"], n))
        dim = x.shape[axis]
        if opset < 18:  # equal parts only
            if dim % n:
                raise SystemExit("Split: %d into %d parts" % (dim, n))
            sizes = [dim // n] * n
        else:
            chunk = -(-dim // n)  # ONNX: ceil; the last chunk may be smaller
            sizes = [chunk] * (n - 1) + [dim - chunk * (n - 1)]
    if sum(sizes) != x.shape[axis] or len(sizes) != n:
        raise SystemExit("Split: sizes %s of %d for %d outputs"
                         % (sizes, x.shape[axis], n))
    return list(torch.split(x, sizes, dim=axis))


def axes_of(ins, a):
    """Axes from the second input (opset >= 13/18) or the attribute."""
    if len(ins) > 1 and ins[1] is not None:
        return ints(ins[1])
    return list(a["axes"]) if "axes" in a else None


def reduce_mean(x, ins, a):
    axes = axes_of(ins, a)
    keep = bool(a.get("keepdims", 1))
    if not axes:
        if a.get("noop_with_empty_axes", 0):
            return x
        axes = list(range(x.dim()))
    return x.mean(dim=axes, keepdim=keep)


def squeeze(x, ins, a):
    axes = axes_of(ins, a)
    if axes is None:
        return x.reshape([d for d in x.shape if d != 1])
    axes = sorted({d % x.dim() for d in axes})
    for d in axes:
        if x.shape[d] != 1:
            raise SystemExit("Squeeze: axis %d has size %d" % (d, x.shape[d]))
    return x.reshape([n for i, n in enumerate(x.shape) if i not in axes])


def unsqueeze(x, ins, a):
    axes = axes_of(ins, a)
    r = x.dim() + len(axes)
    axes = sorted(d % r for d in axes)
    if len(set(axes)) != len(axes):
        raise SystemExit("Unsqueeze: repeated axes %s" % axes)
    for d in axes:  # ascending: each lands at its place in the output
        x = x.unsqueeze(d)
    return x


def gather(data, indices, a):
    """ONNX Gather: out[i.., j.., k..] = data[i.., indices[j..], k..], with
    negative indices counting from the end. Its gradient accumulates over
    repeated indices (index_select's backward is an index_add)."""
    axis = a.get("axis", 0) % data.dim()
    idx = tt(indices).to(torch.int64)
    n = data.shape[axis]
    if bool(((idx < -n) | (idx >= n)).any()):
        raise SystemExit("Gather: index out of [-%d, %d)" % (n, n))
    idx = torch.where(idx < 0, idx + n, idx)
    out = torch.index_select(data, axis, idx.reshape(-1))
    return out.reshape(list(data.shape[:axis]) + list(idx.shape) +
                       list(data.shape[axis + 1:]))


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


def softmax(x, a, opset):
    if opset >= 13:
        return torch.softmax(x, dim=a.get("axis", -1))
    # opset < 13: the input is coerced to 2-D at axis
    axis = a.get("axis", 1) % x.dim()
    flat = x.reshape(list(x.shape[:axis]) + [-1])
    return torch.softmax(flat, dim=-1).reshape(x.shape)


def layer_norm(ins, a):
    """ONNX LayerNormalization over the dims axis..rank-1: Y =
    (X - Mean) / sqrt(Var + epsilon) * Scale + B; also Mean and InvStdDev
    (over the same dims, kept as size 1). stash_type (float32 in the
    exports) is the precision dlc computes the statistics in; the
    reference computes everything in float64."""
    x, scale = ins[0], ins[1]
    axis = a.get("axis", -1) % x.dim()
    eps = a.get("epsilon", 1e-5)
    dims = list(range(axis, x.dim()))
    mean = x.mean(dim=dims, keepdim=True)
    d = x - mean
    inv = 1.0 / torch.sqrt((d * d).mean(dim=dims, keepdim=True) + eps)
    y = d * inv * scale
    if len(ins) > 2 and ins[2] is not None:
        y = y + ins[2]
    return [y, mean, inv]


def gelu(x, a):
    approx = a.get("approximate", "none")
    if approx == "none":
        return 0.5 * x * (1.0 + torch.erf(x / np.sqrt(2.0)))
    if approx == "tanh":
        return 0.5 * x * (1.0 + torch.tanh(
            np.sqrt(2.0 / np.pi) * (x + 0.044715 * x * x * x)))
    raise SystemExit("Gelu: approximate %r" % approx)


def constant(a):
    if "value" in a:
        return numpy_helper.to_array(a["value"])
    for k, dt in (("value_float", np.float32), ("value_floats", np.float32),
                  ("value_int", np.int64), ("value_ints", np.int64)):
        if k in a:
            return np.array(a[k], dtype=dt)
    raise SystemExit("Constant: attributes %s" % sorted(a))


BINARY = {"Add": (torch.add, np.add), "Sub": (torch.sub, np.subtract),
          "Mul": (torch.mul, np.multiply), "Div": (torch.div, None)}


def binary(op, x, y):
    """Broadcasting arithmetic; on two constants (shape arithmetic) it
    stays in NumPy."""
    t_op, np_op = BINARY[op]
    if not isinstance(x, torch.Tensor) and not isinstance(y, torch.Tensor):
        if np_op is None:
            raise SystemExit("%s on constants" % op)
        return np_op(x, y)
    x, y = tt(x), tt(y)
    if op == "Div" and not (x.is_floating_point() and y.is_floating_point()):
        raise SystemExit("Div on integers")
    return t_op(x, y)


def trainable(a, name):
    """dlc's rule (docs/onnx.md, "What training updates"): a float
    initializer is trained unless it holds a non-finite value or float32's
    extreme (a -inf or float-min attention mask), or has one element and a
    name that is not a module path (val_68, not head.bias)."""
    if a.size == 1 and not re.fullmatch(r"\w+(\.\w+)+", name):
        return False
    return bool(np.all(np.isfinite(a) & (np.abs(a) < 3.4028234e38)))


class OnnxGraph(torch.nn.Module):
    """A float64 PyTorch evaluation of an ONNX graph: the float
    initializers are parameters, the integer ones constants."""

    def __init__(self, model):
        super().__init__()
        self.graph = model.graph
        self.opset = max([o.version for o in model.opset_import
                          if o.domain in ("", "ai.onnx")] or [1])
        self.params = torch.nn.ParameterDict()
        self.names = {}  # ONNX name -> ParameterDict key
        self.consts = {}
        for init in model.graph.initializer:
            a = numpy_helper.to_array(init)
            if a.dtype.kind == "f" and not trainable(a, init.name):
                # A constant (scale, mask): kept, never updated, as in dlc
                # and in the PyTorch module that was exported.
                self.consts[init.name] = torch.from_numpy(a.astype(np.float64))
            elif a.dtype.kind == "f":
                key = "p%d" % len(self.names)
                self.names[init.name] = key
                self.params[key] = torch.nn.Parameter(
                    torch.from_numpy(a.astype(np.float64)))
            else:
                self.consts[init.name] = a

    def parameter(self, onnx_name):
        return self.params[self.names[onnx_name]]

    def forward(self, **inputs):
        env = dict(self.consts)  # integer shapes, axes and indices, as numpy
        env.update({k: self.params[v] for k, v in self.names.items()})
        env.update(inputs)
        for node in self.graph.node:
            a = attrs(node)
            ins = [env[i] if i else None for i in node.input]
            op = node.op_type
            if node.domain not in ("", "ai.onnx"):
                raise SystemExit("op %s of domain %s" % (op, node.domain))
            if op == "Constant":
                out = constant(a)
            elif op in BINARY:
                out = binary(op, ins[0], ins[1])
            elif op == "Gather":
                out = gather(tt(ins[0]), ins[1], a)
            elif op == "Reshape":
                out = reshape(tt(ins[0]), ins[1], a)
            elif op == "Squeeze":
                out = squeeze(tt(ins[0]), ins, a)
            elif op == "Unsqueeze":
                out = unsqueeze(tt(ins[0]), ins, a)
            elif op == "Transpose":
                x = tt(ins[0])
                out = x.permute(*a.get("perm", list(range(x.dim()))[::-1]))
            elif op == "Concat":
                out = torch.cat([tt(i) for i in ins], dim=a["axis"])
            elif op == "Split":
                out = split(tt(ins[0]), node, a, ins, self.opset)
            elif op == "MatMul":
                out = torch.matmul(tt(ins[0]), tt(ins[1]))
            elif op == "Gemm":
                out = gemm([tt(i) if i is not None else None for i in ins], a)
            elif op == "Conv":
                out = conv(tt(ins[0]), tt(ins[1]),
                           tt(ins[2]) if len(ins) > 2 and ins[2] is not None
                           else None, a)
            elif op == "MaxPool":
                if len(node.output) > 1:
                    raise SystemExit("MaxPool: indices output")
                out = max_pool(tt(ins[0]), a)
            elif op == "ReduceMean":
                out = reduce_mean(tt(ins[0]), ins, a)
            elif op == "Softmax":
                out = softmax(tt(ins[0]), a, self.opset)
            elif op == "LayerNormalization":
                out = layer_norm([tt(i) if i is not None else None
                                  for i in ins], a)[:len(node.output)]
            elif op == "Gelu":
                out = gelu(tt(ins[0]), a)
            elif op == "Erf":
                out = torch.erf(tt(ins[0]))
            elif op == "Relu":
                out = F.relu(tt(ins[0]))
            elif op == "Where":
                out = torch.where(tt(ins[0]).to(torch.bool), tt(ins[1]),
                                  tt(ins[2]))
            else:
                raise SystemExit("unsupported op %s" % op)
            outs = out if isinstance(out, list) else [out]
            if len(outs) != len(node.output):
                raise SystemExit("%s: %d outputs, %d produced"
                                 % (op, len(node.output), len(outs)))
            env.update((k, v) for k, v in zip(node.output, outs) if k)
        return [env[o.name] for o in self.graph.output]


def dlc_name(name):
    """The parameter name dlc gives an ONNX initializer."""
    return re.sub(r"[^A-Za-z0-9_.]", "_", name)


def save_npy(path, a):
    np.save(path, a)
    print("  wrote %s %s %s" % (os.path.relpath(path, HERE), a.dtype,
                                list(a.shape)))


def cross_entropy(logits, labels, class_dim):
    if class_dim == -1:  # [N, T, C]: every position is a sample
        c = logits.shape[-1]
        return F.cross_entropy(logits.reshape(-1, c), labels.reshape(-1),
                               ignore_index=IGNORE_INDEX)
    return F.cross_entropy(logits, labels, ignore_index=IGNORE_INDEX)


def generate(name, cfg):
    folder = os.path.join(REAL, name)
    with open(os.path.join(folder, "meta.json")) as f:
        meta = json.load(f)
    model = onnx.load(os.path.join(folder, "model.onnx"))  # + external data
    in_names = [i.name for i in model.graph.input]
    if sorted(in_names) != sorted(meta["inputs"]) or \
            [o.name for o in model.graph.output] != list(meta["outputs"]):
        raise SystemExit("%s: inputs %s, outputs %s, meta.json %s %s" % (
            name, in_names, [o.name for o in model.graph.output],
            list(meta["inputs"]), list(meta["outputs"])))
    inputs = {}
    for n in in_names:
        v = np.load(os.path.join(folder, meta["inputs"][n]))
        if v.dtype not in (np.float32, np.int64):
            raise SystemExit("%s: input %s is %s" % (name, n, v.dtype))
        inputs[n] = tt(v)
    (y_file,) = meta["outputs"].values()
    y_ref = np.load(os.path.join(folder, y_file))
    net = OnnxGraph(model)
    keys = [dlc_name(k) for k in net.names]
    if len(set(keys)) != len(keys):
        raise SystemExit("%s: sanitised names collide: %s" % (name, keys))

    # 1. the interpreter reproduces the corpus' reference output
    with torch.no_grad():
        (out,) = net(**inputs)
    err = float(np.max(np.abs(out.numpy() - y_ref)) / np.max(np.abs(y_ref)))
    print("%s: %d trained tensors (%d values), forward scaled error %.3g"
          % (name, len(net.names), sum(p.numel() for p in net.parameters()),
             err))
    if not err < FORWARD_TOL:
        raise SystemExit("%s: forward scaled error %.3g >= %g"
                         % (name, err, FORWARD_TOL))
    if list(out.shape) != cfg["out"]:
        raise SystemExit("%s: output shape %s, expected %s"
                         % (name, list(out.shape), cfg["out"]))

    # 2. labels: the output's shape without the classes' dimension
    class_dim = cfg.get("class_dim", 1)
    shape = list(out.shape)
    classes = shape.pop(class_dim)
    rng = np.random.default_rng(cfg["seed"])
    labels = rng.integers(0, classes, size=shape).astype(np.int64)
    if cfg.get("ignored"):
        at = rng.choice(labels.size, size=cfg["ignored"], replace=False)
        labels.reshape(-1)[at] = IGNORE_INDEX
    lt = torch.from_numpy(labels)

    # 3. STEPS Adam steps on the one batch
    opt = torch.optim.Adam(net.parameters(), lr=LR, foreach=False)
    gmax = {k: torch.zeros(p.shape) for k, p in net.params.items()}
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        (logits,) = net(**inputs)
        loss = cross_entropy(logits, lt, class_dim)
        loss.backward()
        for k, p in net.params.items():
            if p.grad is not None:
                gmax[k] = torch.maximum(gmax[k], p.grad.abs())
        opt.step()
        losses.append(loss.item())
    print("  labels %s, losses %s" % (labels.reshape(-1).tolist(),
                                      " ".join("%.9g" % l for l in losses)))
    # Elements whose gradient is exactly 0 at every step (dead ReLUs, the
    # embedding rows no token selects, masked attention scores) keep their
    # value: dlc must leave them exactly as they were too.
    zero = {o: int((gmax[k] == 0).sum()) for o, k in net.names.items()}
    print("  gradient 0 at every step: %d of %d values%s" % (
        sum(zero.values()), sum(p.numel() for p in net.parameters()),
        "".join(", %s %d/%d" % (o, n, gmax[net.names[o]].numel())
                for o, n in zero.items()
                if n and (len(zero) < 25 or n == gmax[net.names[o]].numel()))))

    final = {}
    for onnx_name, k in net.names.items():
        final[dlc_name(onnx_name)] = \
            net.params[k].detach().numpy().astype(np.float32)
    # Elements whose gradient is rounding noise (zero in exact arithmetic,
    # NOISE times the tensor's largest gradient at most in float64): Adam
    # divides by sqrt(v), so float32 noise of ~1e-9 moves them by a good
    # part of lr per step, in PyTorch's float32 training as in dlc's, while
    # float64 noise leaves them in place. The test leaves them out of the
    # weight comparison (check_training.py --skip) and compares the
    # tensor's Adam first moment (exp_avg, an average of the gradients, not
    # divided by their size) instead, under dlc's checkpoint name.
    for onnx_name, k in net.names.items():
        g = gmax[k].reshape(-1)
        noise = ((g > 0) & (g <= NOISE * g.max())).numpy()
        if not noise.any():
            continue
        edges = np.flatnonzero(np.diff(np.concatenate(
            [[0], noise.astype(np.int8), [0]])))
        name = dlc_name(onnx_name)
        print("  %s: gradient at most %.3g (the tensor's: %.3g) in %d "
              "elements: --skip %s" % (
                  onnx_name, float(g[torch.from_numpy(noise)].max()),
                  float(g.max()), noise.sum(),
                  " --skip ".join("%s:%d:%d" % (name, b, e)
                                  for b, e in zip(edges[::2], edges[1::2]))))
        final["optimizer.%s.exp_avg" % name] = \
            opt.state[net.params[k]]["exp_avg"].numpy().astype(np.float32)
    save_npy(os.path.join(folder, "labels.npy"), labels)
    save_npy(os.path.join(folder, "losses.npy"),
             np.array(losses, dtype=np.float64))
    path = os.path.join(folder, "final.safetensors")
    write_safetensors(path, final)
    print("  wrote %s (%d tensors)" % (os.path.relpath(path, HERE),
                                       len(final)))


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
