"""A small float64 NumPy interpreter for the ONNX graphs of these tests.

    from onnx_numpy import run
    outputs = run(model_proto, {"x": x})  # [(name, float64 array), ...]

It covers exactly the ops torch 1.13 emits for the models of
gen_onnx_reference.py (plus Pad, which nn.AvgPool2d brings along), with the
attribute semantics of opsets 13-17. gen_onnx_reference.py uses it to check
that each exported model.onnx really computes the reference y.npy, so a
reference never depends on PyTorch and the exporter agreeing by accident.
It is a checking aid for the generator, not part of the lit tests: it needs
the `onnx` package (Debian's python3-onnx) and NumPy only.
"""

import math

import numpy as np
from onnx import helper, numpy_helper

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _attrs(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _f64(a):
    a = np.asarray(a)
    return a.astype(np.float64) if a.dtype.kind == "f" else a


def _pads2d(a, kernel):
    pads = list(a.get("pads", [0] * (2 * len(kernel))))
    if a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
        raise NotImplementedError("auto_pad")
    return pads  # [top, left, bottom, right]


def _windows(x, kernel, strides, pads, dilations, fill):
    """x [N,C,H,W] -> view [N,C,OH,OW,KH,KW] of the padded, dilated windows."""
    t, l, b, r = pads
    xp = np.pad(x, ((0, 0), (0, 0), (t, b), (l, r)), constant_values=fill)
    kh, kw = kernel
    dh, dw = dilations
    eh, ew = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    win = np.lib.stride_tricks.sliding_window_view(xp, (eh, ew), axis=(2, 3))
    win = win[:, :, :: strides[0], :: strides[1], ::dh, ::dw]
    return win


def _as_2d(a):
    """The attributes of a 1-D Conv or pool for the 2-D form on [N, C, 1, L]."""
    a = dict(a)
    for k in ("kernel_shape", "strides", "dilations"):
        if k in a:
            a[k] = [1] + list(a[k])
    if "pads" in a:
        a["pads"] = [0, a["pads"][0], 0, a["pads"][1]]
    return a


def _conv(x, w, b, a):
    if x.ndim == 3:
        return _conv(x[:, :, None, :], w[:, :, None, :], b, _as_2d(a))[:, :, 0]
    kernel = list(a.get("kernel_shape", w.shape[2:]))
    strides = list(a.get("strides", [1, 1]))
    dil = list(a.get("dilations", [1, 1]))
    group = a.get("group", 1)
    win = _windows(x, kernel, strides, _pads2d(a, kernel), dil, 0.0)
    n, c = x.shape[:2]
    oc = w.shape[0]
    cg, ocg = c // group, oc // group
    outs = []
    for g in range(group):
        wg = w[g * ocg:(g + 1) * ocg]
        xg = win[:, g * cg:(g + 1) * cg]
        outs.append(np.einsum("nchwij,ocij->nohw", xg, wg))
    y = np.concatenate(outs, axis=1)
    if b is not None:
        y = y + b.reshape(1, -1, 1, 1)
    return y


def _ceil_pads(x, kernel, strides, pads, dil):
    """ceil_mode: extra end padding for the last, partial windows (PyTorch's
    rule: a window must start inside the input or its begin padding)."""
    pads = list(pads)
    for i in range(2):
        size = x.shape[2 + i] + pads[i] + pads[i + 2]
        span = dil[i] * (kernel[i] - 1) + 1
        out = -(-(size - span) // strides[i]) + 1
        if (out - 1) * strides[i] >= x.shape[2 + i] + pads[i]:
            out -= 1
        pads[i + 2] += max(0, (out - 1) * strides[i] + span - size)
    return pads


def _pool(x, a, kind):
    if x.ndim == 3:
        return _pool(x[:, :, None, :], _as_2d(a), kind)[:, :, 0]
    kernel = list(a["kernel_shape"])
    strides = list(a.get("strides", [1, 1]))
    dil = list(a.get("dilations", [1, 1]))
    pads = _pads2d(a, kernel)
    if a.get("ceil_mode", 0):
        if kind != "max" and a.get("count_include_pad", 0):
            raise NotImplementedError("ceil_mode with count_include_pad")
        pads = _ceil_pads(x, kernel, strides, pads, dil)
    if kind == "max":
        return _windows(x, kernel, strides, pads, dil, -np.inf).max(axis=(4, 5))
    s = _windows(x, kernel, strides, pads, dil, 0.0).sum(axis=(4, 5))
    if a.get("count_include_pad", 0):
        return s / (kernel[0] * kernel[1])
    ones = np.ones((1, 1) + x.shape[2:])
    cnt = _windows(ones, kernel, strides, pads, dil, 0.0).sum(axis=(4, 5))
    return s / cnt


def _softmax(x, axis):
    m = x - x.max(axis=axis, keepdims=True)
    e = np.exp(m)
    return e / e.sum(axis=axis, keepdims=True)


def _reshape(x, shape):
    shape = [int(s) for s in shape]
    shape = [x.shape[i] if s == 0 else s for i, s in enumerate(shape)]
    return x.reshape(shape)


def run(model, feeds):
    """Evaluates model (a ModelProto) on feeds (name -> array) in float64.
    Returns the graph outputs as an ordered list of (name, array)."""
    env = {}
    for init in model.graph.initializer:
        env[init.name] = _f64(numpy_helper.to_array(init))
    for name, value in feeds.items():
        env[name] = _f64(value)
    for node in model.graph.node:
        a = _attrs(node)
        ins = [env[i] if i else None for i in node.input]
        op = node.op_type
        x = ins[0] if ins else None
        if op == "Constant":
            if "value" in a:
                out = _f64(numpy_helper.to_array(a["value"]))
            elif "value_float" in a or "value_floats" in a:
                out = np.array(a.get("value_float", a.get("value_floats")),
                               np.float64)
            else:
                out = np.array(a.get("value_int", a.get("value_ints")),
                               np.int64)
        elif op == "Identity" or op == "Dropout":
            out = x
        elif op == "Gemm":
            A = x.T if a.get("transA", 0) else x
            B = ins[1].T if a.get("transB", 0) else ins[1]
            out = a.get("alpha", 1.0) * (A @ B)
            if len(ins) > 2 and ins[2] is not None:
                out = out + a.get("beta", 1.0) * ins[2]
        elif op == "MatMul":
            out = np.matmul(x, ins[1])
        elif op in ("Add", "Sub", "Mul", "Div", "Pow"):
            f = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply,
                 "Div": np.divide, "Pow": np.power}[op]
            out = f(x, ins[1])
            if x.dtype.kind == "i" and op == "Div":
                out = np.floor_divide(x, ins[1])
        elif op == "Sqrt":
            out = np.sqrt(x)
        elif op == "Erf":
            out = _erf(x)
        elif op == "Relu":
            out = np.maximum(x, 0.0)
        elif op == "Tanh":
            out = np.tanh(x)
        elif op == "Sigmoid":
            out = 1.0 / (1.0 + np.exp(-x))
        elif op == "Softmax":
            out = _softmax(x, a.get("axis", -1))
        elif op == "LogSoftmax":
            ax = a.get("axis", -1)
            m = x - x.max(axis=ax, keepdims=True)
            out = m - np.log(np.exp(m).sum(axis=ax, keepdims=True))
        elif op == "Flatten":
            ax = a.get("axis", 1) % max(x.ndim, 1)
            out = x.reshape(int(np.prod(x.shape[:ax])), -1)
        elif op == "Reshape":
            out = _reshape(x, ins[1])
        elif op == "Transpose":
            out = np.transpose(x, a.get("perm"))
        elif op == "ReduceMean":
            axes = tuple(a["axes"]) if "axes" in a else None
            out = x.mean(axis=axes, keepdims=bool(a.get("keepdims", 1)))
        elif op == "LayerNormalization":
            ax = a.get("axis", -1) % x.ndim
            axes = tuple(range(ax, x.ndim))
            mu = x.mean(axis=axes, keepdims=True)
            var = ((x - mu) ** 2).mean(axis=axes, keepdims=True)
            out = (x - mu) / np.sqrt(var + a.get("epsilon", 1e-5))
            out = out * ins[1]
            if len(ins) > 2 and ins[2] is not None:
                out = out + ins[2]
        elif op == "Conv":
            out = _conv(x, ins[1], ins[2] if len(ins) > 2 else None, a)
        elif op == "MaxPool":
            out = _pool(x, a, "max")
        elif op == "AveragePool":
            out = _pool(x, a, "avg")
        elif op == "GlobalAveragePool":
            out = x.mean(axis=(2, 3), keepdims=True)
        elif op == "BatchNormalization":
            sc, bi, mean, var = (v.reshape(1, -1, 1, 1) for v in ins[1:5])
            out = (x - mean) / np.sqrt(var + a.get("epsilon", 1e-5)) * sc + bi
        elif op == "Pad":
            if a.get("mode", b"constant") not in (b"constant", "constant"):
                raise NotImplementedError("Pad mode")
            p = [int(v) for v in ins[1]]
            r = x.ndim
            val = float(ins[2]) if len(ins) > 2 and ins[2] is not None else 0.0
            out = np.pad(x, [(p[i], p[i + r]) for i in range(r)],
                         constant_values=val)
        elif op == "Shape":
            out = np.array(x.shape, dtype=np.int64)
        elif op == "Gather":
            out = np.take(x, ins[1].astype(np.int64), axis=a.get("axis", 0))
        elif op == "Unsqueeze":
            out = x
            for ax in sorted(int(v) % (x.ndim + len(ins[1])) for v in ins[1]):
                out = np.expand_dims(out, ax)
        elif op == "Squeeze":
            axes = tuple(int(v) for v in ins[1]) if len(ins) > 1 else None
            out = np.squeeze(x, axis=axes)
        elif op == "Concat":
            out = np.concatenate(ins, axis=a["axis"])
        elif op == "Slice":
            starts, ends = ins[1], ins[2]
            axes = ins[3] if len(ins) > 3 else range(len(starts))
            steps = ins[4] if len(ins) > 4 else [1] * len(starts)
            sl = [slice(None)] * x.ndim
            for s, e, ax, st in zip(starts, ends, axes, steps):
                sl[int(ax)] = slice(int(s), int(e), int(st))
            out = x[tuple(sl)]
        elif op == "Exp":
            out = np.exp(x)
        elif op == "Log":
            out = np.log(x)
        elif op == "Neg":
            out = -x
        elif op == "Abs":
            out = np.abs(x)
        elif op == "LeakyRelu":
            out = np.where(x >= 0, x, a.get("alpha", 0.01) * x)
        elif op == "Elu":
            out = np.where(x > 0, x, a.get("alpha", 1.0) * np.expm1(np.minimum(x, 0)))
        elif op == "Softplus":
            out = np.logaddexp(0.0, x)
        elif op == "HardSigmoid":
            out = np.clip(a.get("alpha", 0.2) * x + a.get("beta", 0.5), 0, 1)
        elif op == "HardSwish":
            out = x * np.clip(x / 6.0 + 0.5, 0, 1)
        elif op == "Clip":
            lo = ins[1] if len(ins) > 1 and ins[1] is not None else -np.inf
            hi = ins[2] if len(ins) > 2 and ins[2] is not None else np.inf
            out = np.minimum(np.maximum(x, lo), hi)
        elif op == "ReduceProd":
            axes = tuple(a["axes"]) if "axes" in a else None
            out = np.prod(x, axis=axes, keepdims=bool(a.get("keepdims", 1)))
        elif op == "Cast":
            to = a["to"]
            out = x.astype(np.int64 if to == 7 else np.float64)
        else:
            raise NotImplementedError("onnx_numpy: no op %s" % op)
        if op == "Dropout" and len(node.output) > 1:
            env[node.output[1]] = np.ones(x.shape, dtype=bool)
        env[node.output[0]] = np.asarray(out)
    return [(o.name, env[o.name]) for o in model.graph.output]
