#!/usr/bin/env python3
"""Random models, run by every code path of `dlc run` and compared.

    fuzz_models.py WORKDIR [--seeds A:B,N,...] [--train] [--torch] [--keep]
                   [--configs cpu,emu,...] [--jobs N] [--break-gradient F]
                   [--precision bf16|fp16 [--precision-tol T]]

For each seed, a random model in dlc's language: one or two inputs, 4 to 12
layers drawn from linear, matmul, the elementwise ops (with broadcasting and
scalars), the activations, softmax and log_softmax along any dim,
layer_norm, sums and means over any dims, transposes, permutes, reshapes
and flatten (and, for a quarter of the seeds, image inputs with conv2d of
any stride, padding, dilation and groups, max and average pools and
batch_norm2d); shapes from 1 to 130 wide, odd sizes included, so that both
the small GEMM kernels and the cuBLASLt calls of the CUDA lowering are hit.
Its weights and inputs are drawn by NumPy from the seed.

Every configuration runs the forward entry, and with --train one training
step that shows its gradients and three steps of a random loss and
optimizer:

  cpu           the x86 code
  emu           the CUDA lowering, kernels emulated on the host
  emu-rev       the same, each kernel's threads run last first (races)
  emu-cublas    the same, every GEMM a cuBLASLt call (its epilogues)

With --torch, each is compared with PyTorch: the forward in float64 from the
same float32 weights (scaled max-abs error within 1e-4); the first step's
gradients with PyTorch's float64 gradients, element by element, within 1e-4
of the tensor's largest, 256 times PyTorch's own float32 error on it, or
float32's unit roundoff times the model's loss or largest gradient,
whichever is largest (GRAD_TOL, GRAD_FLOOR: the floors are what a gradient
that is zero but for rounding can be compared by); the three steps with
torch.optim in float64: losses within 1e-4, weights within 1e-4 relative,
or four times PyTorch's own float32 error where that is larger. Weights are
compared only where the first gradient is larger than the error allowed it:
where it is rounding noise, Adam's first step is a full +-lr of either sign. --torch
needs PyTorch (Debian's python3-torch); with it, the differences from `cpu`
are reported, not checked (paths that are each close to PyTorch differ by at
most the sum of their errors).

Without it, each configuration is checked against `cpu`: outputs within
1e-5 (scaled); gradients within 1e-4 of the tensor's largest or 64 unit
roundoffs of the model's loss or largest gradient (PATH_NOISE), whichever
is larger; losses within 1e-4; weights, where the CPU's first gradient is
larger than the error allowed it, within 1e-4 relative or four times the
relative difference of the two first gradients, whichever is larger.

With --precision, every configuration runs the forward with autocast
(`--precision=bf16` or `fp16`) instead, checked against the fp32 reference
for gross errors only (scaled error within --precision-tol, 5e-2).

--break-gradient F scales the gradients of the last configuration by 1 + F
before they are compared: a check that the comparison can fail.

Prints one line per seed and a summary; exit status 1 if any seed failed.
A failing seed's model, data and logs stay in WORKDIR/<seed> (all of them
with --keep), so `dlc run` can be repeated by hand on it.
"""

import argparse
import collections
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys

import numpy as np

from safetensors_io import read_safetensors, write_safetensors

CONFIGS = {
    "cpu": [],
    "emu": ["--cuda-emulate"],
    "emu-rev": ["--cuda-emulate", "--cuda-emulate-reverse"],
    "emu-cublas": ["--cuda-emulate", "--cuda-small-gemm-fmas=0"],
}
MAX_ELEMENTS = 6144
# --train: the first step's gradients. One step of SGD with momentum and no
# weight decay leaves each parameter's gradient, unrounded, in its momentum
# buffer (the first step sets buf = g, in dlc as in PyTorch), so the
# checkpoint of this run holds every gradient that a configuration computes.
GRADIENT_STEP = ["--steps", "1", "--print-loss", "--optimizer", "sgd",
                 "--lr", "0.01", "--momentum", "0.9", "--weight-decay", "0"]
# Against PyTorch's float64 gradients (of the same float32 weights and
# inputs), an element is wrong when its error exceeds GRAD_TOL of the largest
# reference gradient of its tensor, GRAD_FLOOR times PyTorch's own float32
# error on the tensor (the largest over its elements) and float32's unit
# roundoff times the model's scale (its loss or largest gradient, whichever
# is larger). The floors are what make a gradient that is zero or small but
# for rounding comparable: there every float32 computation is noise, of a
# size that depends on the order of its sums. dlc sums in loop order where
# PyTorch's kernels sum in vector lanes and blocks, whose error grows more
# slowly with the length, so dlc's error may be many times PyTorch's: 98
# times in seed 1120 (the mean of 100 equal values, sequential against
# pairwise, made a layer_norm's normalised zeros 2.6e-6 where PyTorch's were
# 2.7e-8), and where PyTorch's float32 happens to be exact, any number of
# times: the model's scale bounds that (seed 168: a mean of a softmax along
# its dim, whose gradient dlc makes 3e-9, 1.6e-9 of the loss).
GRAD_TOL = 1e-4
GRAD_FLOOR = 256
UNIT_ROUNDOFF = 2.0 ** -24
# Without PyTorch, a configuration's gradients are compared with the CPU's:
# within GRAD_TOL of the tensor's largest CPU gradient or PATH_NOISE unit
# roundoffs of the model's scale, whichever is larger. With no float32 error
# to measure, the model's scale is the only floor, and it must cover the
# worst-conditioned gradients: seed 108's layer_norm of two softmax
# probabilities makes the gradients before it 4e-4 with rounding errors of
# 3e-7 (7 unit roundoffs of the scale) in PyTorch's float32 as in dlc's.
PATH_NOISE = 64
WIDTHS = [1, 2, 3, 5, 8, 16, 17, 32, 33, 64, 100, 130]


# ----------------------------------------------------------------------------
# The random model: dlc text, and the same computation as a Python function
# of a tensor library (torch), so that PyTorch can be the reference.

class Model:
    def __init__(self, rng):
        self.rng = rng
        self.lines = []            # dlc statements after the header
        self.header = []           # model, inputs and labels
        self.shapes = {}           # value name -> shape (tuple)
        self.steps = []            # (name, function(env, params, T) -> tensor)
        self.params = collections.OrderedDict()  # name -> np.float32 array
        self.inputs = collections.OrderedDict()  # name -> np array
        self.values = []           # float values usable as operands
        self.trained = set()       # values that depend on a parameter
        self.buffers = set()       # parameters that training leaves alone
        self.layers = 0

    # -- helpers -------------------------------------------------------------
    def fresh(self):
        return "v%d" % len(self.steps)

    def pick(self, pred=lambda s: True):
        cands = [v for v in self.values if pred(self.shapes[v])]
        return cands[self.rng.integers(len(cands))] if cands else None

    def bind(self, expr, shape, fn):
        name = self.fresh()
        self.lines.append("%s = %s" % (name, expr))
        if "name=" in expr or self.trained & set(re.findall(r"\w+", expr)):
            self.trained.add(name)
        self.shapes[name] = tuple(shape)
        self.steps.append((name, fn))
        self.values.append(name)
        return name

    def layer_name(self, kind):
        self.layers += 1
        return "%s%d" % (kind, self.layers)

    def uniform(self, shape, bound):
        return self.rng.uniform(-bound, bound, size=shape).astype(np.float32)

    def weight_and_bias(self, name, shape, fan_in, bias):
        """PyTorch's default init: weight and bias from U(-b, b), b = 1 /
        sqrt(fan_in)."""
        bound = 1 / np.sqrt(fan_in)
        self.params[name + ".weight"] = self.uniform(shape, bound)
        if bias:
            self.params[name + ".bias"] = self.uniform(shape[:1], bound)

    # -- ops -----------------------------------------------------------------
    def linear(self, a):
        s = self.shapes[a]
        rows = int(np.prod(s[:-1]))
        outs = [w for w in WIDTHS if rows * w <= MAX_ELEMENTS and w * s[-1] <= 20000]
        if not outs:
            return None
        out = int(outs[self.rng.integers(len(outs))])
        name = self.layer_name("fc")
        bias = bool(self.rng.integers(4))
        self.weight_and_bias(name, (out, s[-1]), s[-1], bias)
        expr = "linear(%s, %d, name=%s%s)" % (a, out, name,
                                               "" if bias else ", bias=false")

        def fn(env, p, T, a=a, name=name, bias=bias):
            return T.nn.functional.linear(
                env[a], p[name + ".weight"], p[name + ".bias"] if bias else None)
        return self.bind(expr, s[:-1] + (out,), fn)

    def unary(self, a):
        F = lambda T: T.nn.functional
        table = [
            ("relu(%s)", lambda T, x: T.relu(x)),
            ("tanh(%s)", lambda T, x: T.tanh(x)),
            ("sigmoid(%s)", lambda T, x: T.sigmoid(x)),
            ("erf(%s)", lambda T, x: T.erf(x)),
            ("neg(%s)", lambda T, x: -x),
            ("gelu(%s)", lambda T, x: F(T).gelu(x)),
            ('gelu(%s, approximate="tanh")',
             lambda T, x: F(T).gelu(x, approximate="tanh")),
            ("exp(tanh(%s))", lambda T, x: T.exp(T.tanh(x))),
            ("log(add(sigmoid(%s), 0.5))", lambda T, x: T.log(T.sigmoid(x) + 0.5)),
            ("sqrt(add(sigmoid(%s), 0.25))", lambda T, x: T.sqrt(T.sigmoid(x) + 0.25)),
        ]
        text, f = table[self.rng.integers(len(table))]
        return self.bind(text % a, self.shapes[a],
                         lambda env, p, T, a=a, f=f: f(T, env[a]))

    def binary(self, a):
        s = self.shapes[a]
        ops = [("add", lambda x, y: x + y), ("sub", lambda x, y: x - y),
               ("mul", lambda x, y: x * y)]
        kind = self.rng.integers(5)
        if kind == 0:  # a number
            op, f = ops[self.rng.integers(3)]
            c = float(np.round(self.rng.uniform(-2, 2), 3))
            if self.rng.integers(2):
                return self.bind("%s(%s, %r)" % (op, a, c), s,
                                 lambda env, p, T, a=a, f=f, c=c: f(env[a], c))
            return self.bind("%s(%r, %s)" % (op, c, a), s,
                             lambda env, p, T, a=a, f=f, c=c: f(c, env[a]))
        if kind == 1:  # divide by something kept away from zero
            b = self.pick(lambda t: _broadcasts(t, s)) or a
            return self.bind(
                "div(%s, add(sigmoid(%s), 0.5))" % (a, b), s,
                lambda env, p, T, a=a, b=b: env[a] / (T.sigmoid(env[b]) + 0.5))
        if kind == 2 and len(s) >= 1:  # broadcast a mean or sum back
            d = int(self.rng.integers(len(s)))
            red = ["sum", "mean"][self.rng.integers(2)]
            op, f = ops[self.rng.integers(3)]
            expr = "%s(%s, %s(%s, dims=[%d], keepdim=true))" % (op, a, red, a, d)

            def fn(env, p, T, a=a, d=d, red=red, f=f):
                x = env[a]
                r = x.sum(d, keepdim=True) if red == "sum" else x.mean(d, keepdim=True)
                return f(x, r)
            return self.bind(expr, s, fn)
        # another value of a shape that broadcasts against this one
        b = self.pick(lambda t: t != s and len(t) <= len(s)
                      and _broadcasts(t, s)) if kind == 3 else None
        b = b or self.pick(lambda t: t == s) or a
        op, f = ops[self.rng.integers(3)]
        first, second = (a, b) if self.rng.integers(2) else (b, a)
        return self.bind("%s(%s, %s)" % (op, first, second), s,
                         lambda env, p, T, x=first, y=second, f=f: f(env[x], env[y]))

    def softmax(self, a):
        s = self.shapes[a]
        d = int(self.rng.integers(-len(s), len(s)))
        log = bool(self.rng.integers(2))
        expr = "%s(%s, dim=%d)" % ("log_softmax" if log else "softmax", a, d)

        def fn(env, p, T, a=a, d=d, log=log):
            f = T.nn.functional.log_softmax if log else T.nn.functional.softmax
            return f(env[a], dim=d)
        return self.bind(expr, s, fn)

    def layer_norm(self, a):
        s = self.shapes[a]
        name = self.layer_name("ln")
        eps = [1e-5, 1e-3][self.rng.integers(2)]
        self.params[name + ".weight"] = (1 + self.uniform((s[-1],), 0.5))
        self.params[name + ".bias"] = self.uniform((s[-1],), 0.5)
        expr = "layer_norm(%s, name=%s%s)" % (a, name, "" if eps == 1e-5 else ", eps=%g" % eps)

        def fn(env, p, T, a=a, name=name, eps=eps, n=s[-1]):
            return T.nn.functional.layer_norm(
                env[a], (n,), p[name + ".weight"], p[name + ".bias"], eps)
        return self.bind(expr, s, fn)

    def reduce(self, a):
        s = self.shapes[a]
        keep = bool(self.rng.integers(2))
        k = int(self.rng.integers(1, len(s) + 1))
        if not keep:
            k = min(k, len(s) - 1)
        if k == 0:
            return None
        dims = sorted(int(d) for d in self.rng.choice(len(s), size=k, replace=False))
        red = ["sum", "mean"][self.rng.integers(2)]
        expr = "%s(%s, dims=[%s]%s)" % (red, a, ", ".join(map(str, dims)),
                                        ", keepdim=true" if keep else "")
        shape = tuple(1 if i in dims else n for i, n in enumerate(s)) if keep \
            else tuple(n for i, n in enumerate(s) if i not in dims)

        def fn(env, p, T, a=a, dims=dims, keep=keep, red=red):
            x = env[a]
            return (x.sum(dims, keepdim=keep) if red == "sum"
                    else x.mean(dims, keepdim=keep))
        return self.bind(expr, shape, fn)

    def reorder(self, a):
        s = self.shapes[a]
        if len(s) < 2:
            return None
        if len(s) == 3 and self.rng.integers(2):
            perm = [int(i) for i in self.rng.permutation(3)]
            return self.bind("permute(%s, [%s])" % (a, ", ".join(map(str, perm))),
                             tuple(s[i] for i in perm),
                             lambda env, p, T, a=a, perm=perm: env[a].permute(perm))
        d0, d1 = (int(d) for d in self.rng.choice(len(s), size=2, replace=False))
        shape = list(s)
        shape[d0], shape[d1] = shape[d1], shape[d0]
        return self.bind("transpose(%s, %d, %d)" % (a, d0, d1), shape,
                         lambda env, p, T, a=a, d0=d0, d1=d1: env[a].transpose(d0, d1))

    def reshape(self, a):
        s = self.shapes[a]
        if len(s) >= 3 and self.rng.integers(2):
            return self.bind("flatten(%s)" % a, (s[0], int(np.prod(s[1:]))),
                             lambda env, p, T, a=a: env[a].flatten(1))
        n = s[-1]
        divs = [d for d in range(2, n) if n % d == 0]
        if len(s) >= 3 or not divs:
            if len(s) < 2:
                return None
            # merge the last two dims ([-1, N] for a matrix: all in one row)
            if len(s) == 2:
                shape, expr = (1, s[0] * s[1]), "reshape(%s, [-1, %d])" % (a, s[0] * s[1])
            else:
                shape = s[:-2] + (s[-2] * s[-1],)
                expr = "reshape(%s, [%s])" % (a, ", ".join(map(str, shape)))
            return self.bind(expr, shape,
                             lambda env, p, T, a=a, shape=shape: env[a].reshape(shape))
        d = divs[self.rng.integers(len(divs))]
        shape = s[:-1] + (d, n // d)
        return self.bind("reshape(%s, [%s])" % (a, ", ".join(map(str, shape))),
                         shape, lambda env, p, T, a=a, shape=shape: env[a].reshape(shape))

    def matmul(self, a):
        s = self.shapes[a]
        if len(s) not in (2, 3):
            return None
        m, k = s[-2], s[-1]
        batch = s[:-2]
        # a @ b^T with b of shape [..., n, k], else a @ a^T or a^T @ a
        b = self.pick(lambda t: len(t) == len(s) and t[:-2] == batch
                      and t[-1] == k and t != s)
        choice = int(self.rng.integers(3))
        if b is not None and choice == 0:
            n = self.shapes[b][-2]
            if len(batch) and int(np.prod(batch)) * m * n > MAX_ELEMENTS:
                return None
            return self.bind("matmul(%s, transpose(%s, %d, %d))" % (a, b, len(s) - 2, len(s) - 1),
                             batch + (m, n),
                             lambda env, p, T, a=a, b=b: env[a] @ env[b].transpose(-2, -1))
        if choice == 1 and int(np.prod(batch or (1,))) * k * k <= MAX_ELEMENTS:
            return self.bind("matmul(transpose(%s, %d, %d), %s)" % (a, len(s) - 2, len(s) - 1, a),
                             batch + (k, k),
                             lambda env, p, T, a=a: env[a].transpose(-2, -1) @ env[a])
        if int(np.prod(batch or (1,))) * m * m <= MAX_ELEMENTS:
            return self.bind("matmul(%s, transpose(%s, %d, %d))" % (a, a, len(s) - 2, len(s) - 1),
                             batch + (m, m),
                             lambda env, p, T, a=a: env[a] @ env[a].transpose(-2, -1))
        return None

    # -- image ops (on [N, C, H, W]) ------------------------------------------
    def conv2d(self, a):
        s = self.shapes[a]
        if len(s) != 4:
            return None
        n, c, h, w = s
        r = self.rng
        k = int(r.choice([1, 2, 3]))
        stride = int(r.choice([1, 1, 2]))
        dil = int(r.choice([1, 1, 2]))
        pads = [(0, 0, 0, 0), (1, 1, 1, 1), (1, 0, 1, 0), (0, 1, 1, 0)]
        t, l, b, rt = pads[r.integers(len(pads))]
        out = int(r.choice([1, 2, 4, 8]))
        groups = c if c > 1 and out % c == 0 and r.integers(3) == 0 else 1
        oh = (h + t + b - dil * (k - 1) - 1) // stride + 1
        ow = (w + l + rt - dil * (k - 1) - 1) // stride + 1
        if oh < 1 or ow < 1 or n * out * oh * ow > MAX_ELEMENTS:
            return None
        name = self.layer_name("conv")
        bias = bool(r.integers(4))
        self.weight_and_bias(name, (out, c // groups, k, k), c // groups * k * k, bias)
        pad = "" if (t, l, b, rt) == (0, 0, 0, 0) else (
            ", padding=%d" % t if t == l == b == rt else
            ", padding=[%d, %d]" % (t, l) if (t, l) == (b, rt) else
            ", padding=[%d, %d, %d, %d]" % (t, l, b, rt))
        expr = "conv2d(%s, %d, %d%s%s%s%s, name=%s%s)" % (
            a, out, k, ", stride=%d" % stride if stride > 1 else "", pad,
            ", dilation=%d" % dil if dil > 1 else "",
            ", groups=%d" % groups if groups > 1 else "", name,
            "" if bias else ", bias=false")

        def fn(env, p, T, a=a, name=name, bias=bias, pad=(l, rt, t, b),
               stride=stride, dil=dil, groups=groups):
            x = T.nn.functional.pad(env[a], pad)
            return T.nn.functional.conv2d(
                x, p[name + ".weight"], p[name + ".bias"] if bias else None,
                stride=stride, dilation=dil, groups=groups)
        return self.bind(expr, (n, out, oh, ow), fn)

    def pool2d(self, a):
        s = self.shapes[a]
        if len(s) != 4:
            return None
        n, c, h, w = s
        r = self.rng
        k = int(r.choice([2, 3]))
        stride = int(r.choice([1, 2, k]))
        pad = int(r.integers(k // 2 + 1))
        oh = (h + 2 * pad - k) // stride + 1
        ow = (w + 2 * pad - k) // stride + 1
        if oh < 1 or ow < 1:
            return None
        opts = ", stride=%d" % stride if stride != k else ""
        opts += ", padding=%d" % pad if pad else ""
        if r.integers(2):
            return self.bind(
                "max_pool2d(%s, %d%s)" % (a, k, opts), (n, c, oh, ow),
                lambda env, p, T, a=a, k=k, stride=stride, pad=pad:
                T.nn.functional.max_pool2d(env[a], k, stride, pad))
        include = bool(r.integers(2))
        return self.bind(
            "avg_pool2d(%s, %d%s%s)" % (a, k, opts, "" if include else ", count_include_pad=false"),
            (n, c, oh, ow),
            lambda env, p, T, a=a, k=k, stride=stride, pad=pad, include=include:
            T.nn.functional.avg_pool2d(env[a], k, stride, pad, count_include_pad=include))

    def batch_norm2d(self, a):
        s = self.shapes[a]
        if len(s) != 4:
            return None
        c = s[1]
        name = self.layer_name("bn")
        self.params[name + ".weight"] = 1 + self.uniform((c,), 0.5)
        self.params[name + ".bias"] = self.uniform((c,), 0.5)
        self.params[name + ".running_mean"] = self.uniform((c,), 0.5)
        self.params[name + ".running_var"] = 1 + self.uniform((c,), 0.5)
        self.buffers.add(name + ".running_mean")
        self.buffers.add(name + ".running_var")

        def fn(env, p, T, a=a, name=name):
            return T.nn.functional.batch_norm(
                env[a], p[name + ".running_mean"], p[name + ".running_var"],
                p[name + ".weight"], p[name + ".bias"], training=False, eps=1e-5)
        return self.bind("batch_norm2d(%s, name=%s)" % (a, name), s, fn)

def _broadcasts(t, s):
    try:
        return np.broadcast_shapes(t, s) == s
    except ValueError:
        return False


def random_model(seed, train):
    rng = np.random.default_rng(seed)
    m = Model(rng)
    m.header.append("model fuzz%d" % seed)
    # A quarter of the seeds are image models, decided apart from the main
    # stream (which earlier seeds' models keep).
    image = np.random.default_rng((seed, 1)).random() < 0.25
    batch = int(rng.choice([1, 2, 3, 4, 7, 8, 16, 33]))
    rank3 = bool(rng.integers(3) == 0)
    width = int(rng.choice([w for w in WIDTHS if w > 1]))
    shape = (batch, int(rng.choice([2, 3, 5, 8])), width) if rank3 else (batch, width)
    if image:
        shape = (min(batch, 4), int(rng.choice([1, 2, 3, 4])),
                 int(rng.integers(4, 13)), int(rng.integers(4, 13)))
    while int(np.prod(shape)) > MAX_ELEMENTS:
        shape = shape[:-1] + (max(1, shape[-1] // 2),)
    for i in range(1 + int(rng.integers(2))):
        name = "x%d" % i
        m.header.append("input %s: f32[%s]" % (name, ", ".join(map(str, shape))))
        m.inputs[name] = rng.standard_normal(shape).astype(np.float32)
        m.shapes[name] = shape
        m.values.append(name)
    builders = [m.linear, m.linear, m.linear, m.unary, m.unary, m.binary,
                m.binary, m.softmax, m.layer_norm, m.reduce, m.reorder,
                m.reshape, m.matmul]
    target = 4 + int(rng.integers(9))
    while len(m.steps) < target:
        # mostly extend the newest value, sometimes an older one (a DAG)
        fresh = [v for v in m.values if v not in m.inputs]
        a = fresh[-1] if fresh and rng.integers(3) else m.values[rng.integers(len(m.values))]
        if len(m.shapes[a]) == 4 and rng.integers(3):
            build = [m.conv2d, m.conv2d, m.pool2d, m.batch_norm2d][rng.integers(4)]
        else:
            build = builders[rng.integers(len(builders))]
        build(a)
    last = m.steps[-1][0]
    if train and last not in m.trained:
        last = m.linear(last) or m.layer_norm(last)
    outs = [last]
    for v in rng.permutation([s[0] for s in m.steps[:-1]])[:int(rng.integers(3))]:
        outs.append(str(v))
    m.outputs = outs
    if train:
        add_loss(m, rng, last)
    return m


def add_loss(m, rng, last):
    s = m.shapes[last]
    if len(s) == 2 and s[1] >= 2 and rng.integers(2):
        red = ["mean", "sum"][rng.integers(2)]
        m.header.append("label y: i64[%d]" % s[0])
        m.inputs["y"] = rng.integers(s[1], size=(s[0],)).astype(np.int64)
        m.loss = ('cross_entropy(%s, y%s)' % (last, "" if red == "mean" else ', reduction="sum"'),
                  lambda env, T, red=red: T.nn.functional.cross_entropy(
                      env[last], env["y"], reduction=red))
    else:
        red = ["mean", "sum"][rng.integers(2)]
        m.header.append("label y: f32[%s]" % ", ".join(map(str, s)))
        m.inputs["y"] = rng.standard_normal(s).astype(np.float32)
        m.loss = ('mse_loss(%s, y%s)' % (last, "" if red == "mean" else ', reduction="sum"'),
                  lambda env, T, red=red: T.nn.functional.mse_loss(
                      env[last], env["y"], reduction=red))
    kind = int(rng.integers(3))
    if kind == 0:
        mom = float(rng.choice([0.0, 0.9]))
        nest = bool(mom and rng.integers(2))
        wd = float(rng.choice([0.0, 0.01]))
        m.optim = ("sgd(lr=0.01, momentum=%g, weight_decay=%g%s)"
                   % (mom, wd, ", nesterov=true" if nest else ""),
                   lambda T, ps: T.optim.SGD(ps, lr=0.01, momentum=mom,
                                             weight_decay=wd, nesterov=nest))
    else:
        cls = "adam" if kind == 1 else "adamw"
        wd = float(rng.choice([0.0, 0.01]))
        # dlc refuses amsgrad=true (it trained plain Adam under that name);
        # the draw stays, so that every seed keeps its model, and spells the
        # default out.
        spelled = bool(rng.integers(4) == 0)
        m.optim = ("%s(lr=0.01, weight_decay=%g%s)" % (cls, wd, ", amsgrad=false" if spelled else ""),
                   lambda T, ps: (T.optim.Adam if cls == "adam" else T.optim.AdamW)(
                       ps, lr=0.01, weight_decay=wd))


def model_text(m, train):
    lines = m.header + m.lines + ["output " + ", ".join(m.outputs)]
    if train:
        lines += ["loss " + m.loss[0], "optim " + m.optim[0]]
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------
# PyTorch references.

def torch_forward(m, torch):
    p = {k: torch.tensor(v, dtype=torch.float64) for k, v in m.params.items()}
    env = {k: torch.tensor(v, dtype=torch.float64) for k, v in m.inputs.items()
           if v.dtype == np.float32}
    for name, fn in m.steps:
        env[name] = fn(env, p, torch)
        if tuple(env[name].shape) != m.shapes[name]:  # the generator's own check
            raise AssertionError("%s: PyTorch computes shape %s, the model says %s"
                                 % (name, tuple(env[name].shape), m.shapes[name]))
    return {o: env[o].numpy() for o in m.outputs}


def torch_gradients(m, torch, dtype):
    """The gradient of the loss at the initial weights, by trained parameter,
    in float64 (a zero one where the loss does not depend on it), and the
    loss."""
    p = {k: torch.tensor(v, dtype=dtype, requires_grad=k not in m.buffers)
         for k, v in m.params.items()}
    env = {k: torch.tensor(v, dtype=dtype) if v.dtype == np.float32
           else torch.tensor(v) for k, v in m.inputs.items()}
    for name, fn in m.steps:
        env[name] = fn(env, p, torch)
    loss = m.loss[1](env, torch)
    loss.backward()
    return ({k: v.grad.numpy().astype(np.float64) if v.grad is not None
             else np.zeros(v.shape) for k, v in p.items() if k not in m.buffers},
            float(loss))


def torch_train(m, torch, steps, dtype):
    p = collections.OrderedDict(
        (k, torch.tensor(v, dtype=dtype, requires_grad=k not in m.buffers))
        for k, v in m.params.items())
    opt = m.optim[1](torch, [v for k, v in p.items() if k not in m.buffers])
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        env = {k: torch.tensor(v, dtype=dtype) if v.dtype == np.float32
               else torch.tensor(v) for k, v in m.inputs.items()}
        for name, fn in m.steps:
            env[name] = fn(env, p, torch)
        loss = m.loss[1](env, torch)
        loss.backward()
        opt.step()
        losses.append(float(loss))
    return np.array(losses), {k: v.detach().numpy() for k, v in p.items()}


def loss_error(a, e):
    """Relative error of a loss log: against each loss, or against a
    hundredth of the first once training has brought it near zero."""
    if len(a) != len(e):
        return float("inf")
    scale = np.maximum(np.abs(e), 1e-2 * abs(e[0]))
    return float(np.max(np.abs(np.asarray(a) - e) / scale))


# ----------------------------------------------------------------------------
# Running dlc and comparing.

def scaled_error(a, e):
    a, e = np.asarray(a, np.float64), np.asarray(e, np.float64)
    if a.shape != e.shape:
        return float("inf")
    if not np.all(np.isfinite(a)):
        return float("inf")
    if a.size == 0:
        return 0.0
    return float(np.max(np.abs(a - e)) / max(1.0, float(np.max(np.abs(e)))))


def relative_norm_error(a, e):
    a, e = np.asarray(a, np.float64), np.asarray(e, np.float64)
    if a.shape != e.shape or not np.all(np.isfinite(a)):
        return float("inf")
    return float(np.linalg.norm(a - e) / max(np.linalg.norm(e), 1e-30))


def run(cmd, log):
    p = subprocess.run(cmd, capture_output=True, text=True)
    with open(log, "a") as f:
        f.write("$ %s\n%s%s(exit %d)\n" % (" ".join(cmd), p.stdout, p.stderr, p.returncode))
    return p


def run_forward(args, model, weights, inputs, out, flags, log):
    """`dlc run` of the forward entry, its outputs written to `out`: the
    outputs by name, or None and a line saying why not."""
    p = run([args.dlc, "run", model, "--weights", weights] + inputs
            + ["--output", out] + flags, log)
    if p.returncode != 0:
        return None, "exit %d: %s" % (p.returncode, p.stderr.strip()[-300:])
    return read_safetensors(out), ""


def check_precision(args, torch, m, d, model, weights, inputs, log):
    """--precision: the forward in bf16 or fp16 (autocast) by every
    configuration, against the fp32 reference (PyTorch's float64, else the
    CPU's fp32 run), within a scaled error of --precision-tol: a check for
    gross errors (a wrong cast, a GEMM reading the wrong copy), not for
    rounding, whose size depends on the model."""
    problems, worst = [], collections.defaultdict(float)
    if torch is not None:
        ref = torch_forward(m, torch)
    else:
        ref, why = run_forward(args, model, weights, inputs,
                               os.path.join(d, "out-fp32.safetensors"), [], log)
        if ref is None:
            return ["cpu fp32 forward: " + why], worst
    for cfg in args.configs:
        got, why = run_forward(
            args, model, weights, inputs,
            os.path.join(d, "out-%s-%s.safetensors" % (cfg, args.precision)),
            ["--precision=" + args.precision] + CONFIGS[cfg], log)
        if got is None:
            problems.append("%s %s forward: %s" % (cfg, args.precision, why))
            continue
        for o in m.outputs:
            err = scaled_error(got.get(o, np.zeros(0)), ref[o])
            worst[args.precision + " fwd"] = max(worst[args.precision + " fwd"], err)
            if not err <= args.precision_tol:
                problems.append("%s %s forward %s: scaled error %.3g against fp32"
                                % (cfg, args.precision, o, err))
    return problems, worst


def check_seed(seed, args, torch):
    d = os.path.join(args.workdir, str(seed))
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    m = random_model(seed, args.train)
    model = os.path.join(d, "model.dlc")
    with open(model, "w") as f:
        f.write(model_text(m, args.train))
    weights = os.path.join(d, "weights.safetensors")
    write_safetensors(weights, m.params)
    for k, v in m.inputs.items():
        np.save(os.path.join(d, k + ".npy"), v)

    # An input that no output depends on is not an input of the compiled
    # model, and `dlc run` refuses names that are not: feed the inputs its
    # entries take (the header's entry comments list them).
    header = os.path.join(d, "model.h")
    p = subprocess.run([args.dlc, model, "--emit=header", "-o", header]
                       + (["--train"] if args.train else []),
                       capture_output=True, text=True)
    used = set()
    if p.returncode == 0:
        for line in open(header):
            m_entry = re.match(r"/\* \w+: (.*) ->", line)
            if m_entry:
                used |= {t.split()[0] for t in m_entry.group(1).split(", ")
                         if t.strip()}
    else:
        used = set(m.inputs)  # The runs below report the error.

    def feed(names):
        return [w for k in names if k in used
                for w in ("--input", "%s=%s" % (k, os.path.join(d, k + ".npy")))]
    feeds = feed(m.inputs)
    fwd_inputs = feed(k for k in m.inputs if k != "y")  # not the label
    log = os.path.join(d, "log.txt")
    if args.precision:
        problems, worst = check_precision(args, torch, m, d, model, weights,
                                          fwd_inputs, log)
    else:
        problems, worst = check_fp32(args, torch, m, d, model, weights, feeds,
                                     fwd_inputs, log)
    if not problems and not args.keep:
        shutil.rmtree(d)
    return seed, len(m.steps), problems, dict(worst)


def check_fp32(args, torch, m, d, model, weights, feeds, fwd_inputs, log):
    """The forward (and with --train, the training steps) by every
    configuration, against the CPU and PyTorch."""
    problems, worst = [], collections.defaultdict(float)
    results = {}
    for cfg in args.configs:
        got, why = run_forward(args, model, weights, fwd_inputs,
                               os.path.join(d, "out-%s.safetensors" % cfg),
                               CONFIGS[cfg], log)
        if got is None:
            problems.append("%s forward: %s" % (cfg, why))
        else:
            results[cfg] = got
    base = results.get("cpu")
    if torch is not None:
        ref = torch_forward(m, torch)
    # Against the CPU: within 1e-5. With PyTorch, its check is the one that
    # counts (two paths each close to it can only differ by the sum of their
    # errors), and this one is reported only.
    tol = 1e-5 if torch is None else float("inf")
    for cfg, got in results.items():
        for o in m.outputs:
            if o not in got:
                problems.append("%s: no output %s" % (cfg, o))
                continue
            if base is not None and cfg != "cpu":
                err = scaled_error(got[o], base[o])
                worst["fwd vs cpu"] = max(worst["fwd vs cpu"], err)
                if err > tol:
                    problems.append("%s forward %s: scaled error %.3g against cpu" % (cfg, o, err))
            if torch is not None:
                err = scaled_error(got[o], ref[o])
                worst["fwd vs torch"] = max(worst["fwd vs torch"], err)
                if err > 1e-4:
                    problems.append("%s forward %s: scaled error %.3g against PyTorch" % (cfg, o, err))

    if args.train:
        check_training(args, torch, m, d, model, weights, feeds, log,
                       problems, worst)
    return problems, worst


def step_losses(stdout):
    return np.array([float(line.split()[3]) for line in stdout.splitlines()
                     if line.startswith("step ")])


def dlc_gradients(args, m, d, model, weights, feeds, cfg, log):
    """The first training step's gradients by configuration `cfg`, by
    trained parameter, and its loss; or None, None and why not."""
    ckpt = os.path.join(d, "grad-%s.safetensors" % cfg)
    p = run([args.dlc, "run", model, "--train", "--weights", weights] + feeds
            + GRADIENT_STEP + ["--save", ckpt] + CONFIGS[cfg], log)
    if p.returncode != 0:
        return None, None, "exit %d: %s" % (p.returncode, p.stderr.strip()[-300:])
    state = read_safetensors(ckpt)
    # A parameter that the loss does not depend on has no state (it is not
    # trained).
    grads = {k: state.get("optimizer.%s.momentum_buffer" % k,
                          np.zeros(v.shape, np.float32)).astype(np.float64)
             for k, v in m.params.items() if k not in m.buffers}
    losses = step_losses(p.stdout)
    return grads, float(losses[0]) if len(losses) else float("nan"), ""


def compare_gradients(cfg, got, ref, bound, against, checked, problems,
                      worst):
    """Every element of every gradient within `bound` (by parameter) of
    `ref`; the worst error as a fraction of its bound goes to `worst`."""
    key = "grad vs " + ("torch" if against == "PyTorch" else against)
    for k, e in ref.items():
        g = got[k]
        if g.shape != e.shape:
            problems.append("%s gradient %s: shape %s, %s's %s"
                            % (cfg, k, g.shape, against, e.shape))
            continue
        if not np.all(np.isfinite(g)):
            problems.append("%s gradient %s: not finite" % (cfg, k))
            continue
        err = np.abs(g - e)
        over = err / np.where(bound[k] > 0, bound[k], np.inf)
        over[(err > 0) & (bound[k] == 0)] = np.inf
        if not over.size:
            continue
        i = np.unravel_index(int(np.argmax(over)), over.shape)
        worst[key + " (of bound)"] = max(worst[key + " (of bound)"], float(over[i]))
        if checked and over[i] > 1:
            problems.append(
                "%s gradient %s%s: %.6g, %s's %.6g (error %.3g, bound %.3g; "
                "%d of %d elements off)"
                % (cfg, k, list(i), g[i], against, e[i], err[i], bound[k],
                   int(np.sum(over > 1)), over.size))


def largest(a):
    return float(np.max(np.abs(a), initial=0))


def model_scale(loss, grads):
    """The loss or the largest gradient, whichever is larger."""
    return max([abs(loss)] + [largest(v) for v in grads.values()])


def masked_norm_error(a, e, mask):
    """relative_norm_error over the elements of `mask`."""
    a = np.asarray(a)
    if a.shape != e.shape:
        return float("inf")
    return relative_norm_error(a[mask], e[mask]) if np.any(mask) else 0.0


def check_training(args, torch, m, d, model, weights, feeds, log, problems,
                   worst):
    """--train: the first step's gradients by every configuration against
    PyTorch's float64 gradients, or without PyTorch against the CPU's; then
    three steps of the model's own loss and optimizer, whose losses and
    weights are compared where the first gradients determine them."""
    grads, first_loss = {}, {}
    for cfg in args.configs:
        g, loss, why = dlc_gradients(args, m, d, model, weights, feeds, cfg, log)
        if g is None:
            problems.append("%s gradients: %s" % (cfg, why))
            continue
        if args.break_gradient and cfg == args.configs[-1]:
            g = {k: v * (1 + args.break_gradient) for k, v in g.items()}
        grads[cfg], first_loss[cfg] = g, loss

    # The gradient references: (name, gradients, bound by parameter,
    # checked), and by parameter the elements whose first gradient is larger
    # than the error allowed it (resolved): where it is not, its sign is
    # rounding, Adam's first step a full +-lr of either sign, and the
    # weights after training are not comparable there.
    refs, resolved = [], {}
    if torch is not None:
        g64, loss64 = torch_gradients(m, torch, torch.float64)
        g32, _ = torch_gradients(m, torch, torch.float32)
        if np.isfinite(loss64) and all(np.all(np.isfinite(v)) for v in g64.values()):
            floor = UNIT_ROUNDOFF * model_scale(loss64, g64)
            noise = {k: max(GRAD_FLOOR * largest(g32[k] - e), floor)
                     for k, e in g64.items()}
            bound = {k: max(GRAD_TOL * largest(e), noise[k])
                     for k, e in g64.items()}
            refs.append(("PyTorch", g64, bound, True))
            resolved = {k: np.abs(e) > bound[k] for k, e in g64.items()}
    if "cpu" in grads and np.isfinite(first_loss["cpu"]):
        gc = grads["cpu"]
        noise = PATH_NOISE * UNIT_ROUNDOFF * model_scale(first_loss["cpu"], gc)
        bound = {k: max(GRAD_TOL * largest(v), noise) for k, v in gc.items()}
        # With PyTorch, reported only (as for the forward).
        refs.insert(0, ("cpu", gc, bound, torch is None))
        if torch is None:
            resolved = {k: np.abs(v) > bound[k] for k, v in gc.items()}
    for cfg, g in grads.items():
        for rname, ref, bound, checked in refs:
            if rname != cfg:
                compare_gradients(cfg, g, ref, bound, rname, checked, problems,
                                  worst)

    # Three steps of the model's loss and optimizer.
    steps = 3
    trained = {}
    for cfg in args.configs:
        ckpt = os.path.join(d, "ckpt-%s.safetensors" % cfg)
        p = run([args.dlc, "run", model, "--train", "--weights", weights] + feeds
                + ["--steps", str(steps), "--print-loss", "--save", ckpt]
                + CONFIGS[cfg], log)
        if p.returncode != 0:
            problems.append("%s train: exit %d: %s" % (cfg, p.returncode,
                                                        p.stderr.strip()[-300:]))
            continue
        trained[cfg] = (step_losses(p.stdout), read_safetensors(ckpt))
    diverged = [c for c, (l, _) in trained.items()
                if not np.all(np.isfinite(l)) or np.max(np.abs(l)) > 1e6]
    if diverged and len(diverged) == len(trained):
        # every configuration diverges: nothing to compare
        trained = {}
        worst["diverged"] += 1
    # References: (name, losses, weights, tolerance of the losses, tolerance
    # of a weight by configuration and parameter). PyTorch's is its float64
    # training; where its own float32 training is further from that than
    # 1e-4, four times that distance.
    refs = []

    def comparable(k):
        return resolved.get(k, np.ones(m.params[k].shape, bool))
    if torch is not None and trained:
        l64, w64 = torch_train(m, torch, steps, torch.float64)
        l32, w32 = torch_train(m, torch, steps, torch.float32)
        lt = max(1e-4, 4 * loss_error(l32, l64))
        torch_wt = {k: max(1e-4, 4 * masked_norm_error(w32[k], e, comparable(k)))
                    for k, e in w64.items()}
        refs.append(("PyTorch", l64, w64, lt, lambda cfg, k: torch_wt[k]))
    if "cpu" in trained:
        # Against the CPU, as against PyTorch: losses within 1e-4 (a loss
        # can be worse conditioned than the output it is computed from: the
        # square of a small difference of a sum of 800 values and its label
        # in seed 1110); weights within 1e-4, or four times the relative
        # difference of the first gradients where that is larger (Adam's
        # later steps divide each gradient's error by its size: seed 108's
        # gradients before a layer_norm of two softmax probabilities differ
        # by 7e-4 and move weights 6e-5 apart). With PyTorch, reported only.
        def path_wt(cfg, k):
            if torch is not None:
                return float("inf")
            if cfg not in grads or k not in grads["cpu"]:
                return 1e-4
            return max(1e-4, 4 * masked_norm_error(grads[cfg][k], grads["cpu"][k],
                                                   comparable(k)))
        cl, cw = trained["cpu"]
        refs.insert(0, ("cpu", cl, cw, 1e-4 if torch is None else float("inf"),
                        path_wt))
    for cfg, (losses, ck) in trained.items():
        for rname, rl, rw, lt, wt in refs:
            if rname == cfg:
                continue
            against = "cpu" if rname == "cpu" else "torch"
            err = loss_error(losses, rl)
            worst["loss vs " + against] = max(worst["loss vs " + against], err)
            if not err <= lt:
                problems.append("%s losses %s: relative error %.3g against %s"
                                % (cfg, losses, err, rname))
            # The parameters (the optimizer's state shows in them), where
            # the first gradient is resolved.
            for k, e in rw.items():
                if k.startswith("optimizer."):
                    continue
                err = masked_norm_error(ck.get(k, np.zeros(0)), e, comparable(k))
                worst["weights vs " + against] = max(worst["weights vs " + against], err)
                if not err <= wt(cfg, k):
                    problems.append("%s weight %s: relative error %.3g against %s"
                                    % (cfg, k, err, rname))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("workdir")
    ap.add_argument("--seeds", default="0:10",
                    help="A:B (the seeds A to B-1) or N, several joined by commas")
    ap.add_argument("--train", action="store_true", help="also three training steps")
    ap.add_argument("--torch", action="store_true", help="also compare with PyTorch")
    ap.add_argument("--keep", action="store_true", help="keep every seed's files")
    ap.add_argument("--precision", choices=["bf16", "fp16"],
                    help="instead: the forward with autocast, against fp32")
    ap.add_argument("--precision-tol", type=float, default=5e-2,
                    help="with --precision: the scaled error allowed (default 5e-2)")
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--break-gradient", type=float, default=0.0, metavar="F",
                    help="with --train: scale the gradients of the last "
                    "configuration by 1 + F before comparing them (a check "
                    "that the comparison can fail)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--dlc", default="dlc")
    args = ap.parse_args(argv)
    args.configs = args.configs.split(",")
    for c in args.configs:
        if c not in CONFIGS:
            ap.error("unknown configuration %r (%s)" % (c, ", ".join(CONFIGS)))
    torch = None
    if args.torch:
        import torch  # noqa: F811 - only with --torch
        torch.set_num_threads(1)
    seeds = []
    for part in args.seeds.split(","):
        a, _, b = part.partition(":")
        seeds += range(int(a), int(b)) if b else [int(a)]
    os.makedirs(args.workdir, exist_ok=True)
    failed = 0
    worst = collections.defaultdict(float)
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for seed, n, problems, w in pool.map(lambda s: check_seed(s, args, torch),
                                             seeds):
            for k, v in w.items():
                worst[k] = worst[k] + v if k == "diverged" else max(worst[k], v)
            if problems:
                failed += 1
                print("seed %d (%d layers): FAILED" % (seed, n))
                for p in problems:
                    print("  " + p)
            else:
                print("seed %d (%d layers): ok" % (seed, n))
            sys.stdout.flush()
    diverged = int(worst.pop("diverged", 0))
    print("worst: " + ", ".join("%s %.2e" % kv for kv in sorted(worst.items())))
    if diverged:
        print("%d model(s) diverged in training everywhere: their training "
              "was not compared" % diverged)
    print("%d of %d random models agree (%s%s%s)" % (
        len(seeds) - failed, len(seeds), ",".join(args.configs),
        ", " + args.precision if args.precision else
        ", training" if args.train else "", ", PyTorch" if torch else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
