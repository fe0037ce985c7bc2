#!/usr/bin/python3
"""Generate the hand-made ONNX files of the importer's lit tests.

Run with Debian's python3 (python3-onnx 1.12, python3-numpy; no torch):

    /usr/bin/python3 test/Frontend/onnx/gen_onnx_cases.py

It (re)writes test/Frontend/onnx/Inputs/<case>.onnx, byte-for-byte
reproducibly (fixed seeds; onnx.helper only). The lit tests next to this
script (*.test) are written by hand and FileCheck the output of
`dlc Inputs/<case>.onnx --emit=dlc`.

Valid cases pass onnx.checker.check_model (the script asserts it). The
invalid ones are meant to be rejected by the importer with
`<file>: error: ...` and exit status 1; those that onnx itself can still
load are listed in CHECKER_FAILS (the checker rejects them too) or
CHECKER_PASSES (well-formed ONNX that dlc rejects on its own terms); the
undecodable ones (truncated, garbage) are asserted not to parse.
"""

import collections
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
INPUTS = os.path.join(HERE, "Inputs")

F32 = TensorProto.FLOAT
I64 = TensorProto.INT64

CASES = collections.OrderedDict()


def case(name):
    def deco(fn):
        CASES[name] = fn
        return fn
    return deco


def rng_for(name):
    # One fixed seed per case, independent of the order of the cases.
    return np.random.default_rng(sum(name.encode()) * 7919 + len(name))


def vi(name, shape, elem=F32):
    return helper.make_tensor_value_info(name, elem, shape)


def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def i64(values):
    return np.array(values, dtype=np.int64)


def const_node(out, arr, name=None):
    return helper.make_node("Constant", [], [out], name=name or out,
                            value=numpy_helper.from_array(np.asarray(arr)))


def mk(nodes, inputs, outputs, inits=(), opset=13, graph="g"):
    g = helper.make_graph(nodes, graph, inputs, outputs,
                          initializer=list(inits))
    m = helper.make_model(g, producer_name="dlc-test",
                          opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


# --------------------------------------------------------------------------
# valid models


@case("gemm_transb")
def _gemm_transb(r):
    # What torch exports for nn.Linear: Gemm(x, W[out,in], b) with transB=1.
    return mk([helper.make_node("Gemm", ["x", "fc.weight", "fc.bias"], ["y"],
                                name="/fc/Gemm", alpha=1.0, beta=1.0,
                                transB=1)],
              [vi("x", [4, 8])], [vi("y", [4, 6])],
              [init("fc.weight", f32(r, 6, 8)), init("fc.bias", f32(r, 6))])


@case("gemm_plain")
def _gemm_plain(r):
    # transB=0 (W is [in,out]), alpha=0.5, beta=2, a bias broadcast over rows.
    return mk([helper.make_node("Gemm", ["x", "w", "c"], ["y"], name="gemm",
                                alpha=0.5, beta=2.0)],
              [vi("x", [4, 8])], [vi("y", [4, 6])],
              [init("w", f32(r, 8, 6)), init("c", f32(r, 6))])


@case("gemm_transa")
def _gemm_transa(r):
    # transA=1 on the activation, transB=1, no C.
    return mk([helper.make_node("Gemm", ["x", "w"], ["y"], name="gemm",
                                transA=1, transB=1)],
              [vi("x", [8, 4])], [vi("y", [4, 6])], [init("w", f32(r, 6, 8))])


@case("matmul2d")
def _matmul2d(r):
    return mk([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
              [vi("x", [4, 8])], [vi("y", [4, 6])], [init("w", f32(r, 8, 6))])


@case("matmul3d")
def _matmul3d(r):
    # What torch exports for nn.Linear on a rank-3 input: MatMul + Add.
    return mk([helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
               helper.make_node("Add", ["h", "b"], ["y"], name="add")],
              [vi("x", [2, 4, 8])], [vi("y", [2, 4, 6])],
              [init("w", f32(r, 8, 6)), init("b", f32(r, 6))])


@case("matmul_batched")
def _matmul_batched(r):
    return mk([helper.make_node("MatMul", ["a", "b"], ["y"], name="bmm")],
              [vi("a", [2, 4, 8]), vi("b", [2, 8, 3])], [vi("y", [2, 4, 3])])


@case("flatten")
def _flatten(r):
    return mk([helper.make_node("Flatten", ["x"], ["y"], name="f1", axis=1),
               helper.make_node("Flatten", ["x"], ["z"], name="f2", axis=2)],
              [vi("x", [2, 3, 4, 5])], [vi("y", [2, 60]), vi("z", [6, 20])])


@case("reshape")
def _reshape(r):
    # A shape from a Constant node with 0 (copy the dim) and -1 (infer), and
    # one from an int64 initializer.
    return mk([const_node("shape0", i64([0, -1])),
               helper.make_node("Reshape", ["x", "shape0"], ["y"], name="r1"),
               helper.make_node("Reshape", ["x", "shape1"], ["z"], name="r2")],
              [vi("x", [2, 3, 4])], [vi("y", [2, 12]), vi("z", [6, 4])],
              [init("shape1", i64([-1, 4]))])


@case("transpose")
def _transpose(r):
    return mk([helper.make_node("Transpose", ["x"], ["y"], name="t1",
                                perm=[0, 2, 1]),
               helper.make_node("Transpose", ["x"], ["z"], name="t2",
                                perm=[2, 0, 1]),
               helper.make_node("Transpose", ["x"], ["w"], name="t3")],
              [vi("x", [2, 3, 4])],
              [vi("y", [2, 4, 3]), vi("z", [4, 2, 3]), vi("w", [4, 3, 2])])


@case("softmax")
def _softmax(r):
    return mk([helper.make_node("Softmax", ["a"], ["y"], name="sm1", axis=1),
               helper.make_node("Softmax", ["b"], ["z"], name="sm2", axis=-1),
               helper.make_node("LogSoftmax", ["a"], ["w"], name="lsm",
                                axis=-1)],
              [vi("a", [4, 10]), vi("b", [2, 3, 5])],
              [vi("y", [4, 10]), vi("z", [2, 3, 5]), vi("w", [4, 10])])


@case("reducemean")
def _reducemean(r):
    return mk([helper.make_node("ReduceMean", ["x"], ["y"], name="m1",
                                axes=[-1], keepdims=1),
               helper.make_node("ReduceMean", ["x"], ["z"], name="m2",
                                axes=[1], keepdims=0)],
              [vi("x", [2, 3, 4])], [vi("y", [2, 3, 1]), vi("z", [2, 4])])


@case("constant_scalar")
def _constant_scalar(r):
    # A 0-d tensor Constant (torch's form) and a value_float Constant.
    return mk([const_node("k", np.array(2.5, np.float32)),
               helper.make_node("Mul", ["x", "k"], ["h"], name="mul"),
               helper.make_node("Constant", [], ["c"], name="c",
                                value_float=-1.25),
               helper.make_node("Add", ["h", "c"], ["y"], name="add")],
              [vi("x", [3, 4])], [vi("y", [3, 4])])


@case("identity_dropout")
def _identity_dropout(r):
    # Identity and inference Dropout (one without a ratio, one with a ratio
    # and the mask output, unused) are pass-throughs.
    return mk([helper.make_node("Identity", ["x"], ["a"], name="id"),
               helper.make_node("Dropout", ["a"], ["b"], name="drop1"),
               helper.make_node("Relu", ["b"], ["c"], name="relu"),
               const_node("ratio", np.array(0.3, np.float32)),
               helper.make_node("Dropout", ["c", "ratio"], ["y", "mask"],
                                name="drop2")],
              [vi("x", [3, 4])], [vi("y", [3, 4])])


@case("conv")
def _conv(r):
    # pads [top, left, bottom, right] = 1, stride 2: 8x8 -> 4x4.
    return mk([helper.make_node("Conv", ["x", "conv.weight", "conv.bias"],
                                ["y"], name="/conv/Conv", dilations=[1, 1],
                                group=1, kernel_shape=[3, 3],
                                pads=[1, 1, 1, 1], strides=[2, 2])],
              [vi("x", [1, 3, 8, 8])], [vi("y", [1, 4, 4, 4])],
              [init("conv.weight", f32(r, 4, 3, 3, 3)),
               init("conv.bias", f32(r, 4))])


@case("conv_asym")
def _conv_asym(r):
    # No bias, no strides/dilations attributes, asymmetric pads [0,1,1,0]:
    # H = 7+0+1-2+1 = 7, W = 7+1+0-2+1 = 7.
    return mk([helper.make_node("Conv", ["x", "w"], ["y"], name="conv",
                                kernel_shape=[2, 2], pads=[0, 1, 1, 0])],
              [vi("x", [1, 3, 7, 7])], [vi("y", [1, 2, 7, 7])],
              [init("w", f32(r, 2, 3, 2, 2))])


@case("conv_group")
def _conv_group(r):
    # group=2, dilations 2: 8 - (3-1)*2 = 4.
    return mk([helper.make_node("Conv", ["x", "w", "b"], ["y"], name="conv",
                                group=2, dilations=[2, 2],
                                kernel_shape=[3, 3])],
              [vi("x", [1, 4, 8, 8])], [vi("y", [1, 6, 4, 4])],
              [init("w", f32(r, 6, 2, 3, 3)), init("b", f32(r, 6))])


@case("conv_same_upper")
def _conv_same_upper(r):
    # auto_pad SAME_UPPER / SAME_LOWER, stride 2 on 6x6 with a 3x3 kernel:
    # out = ceil(6/2) = 3, total pad (3-1)*2+3-6 = 1 per spatial dim, the odd
    # one at the end for SAME_UPPER ([0,0,1,1]) and at the start for
    # SAME_LOWER ([1,1,0,0]).
    return mk([helper.make_node("Conv", ["x", "w"], ["y"], name="conv_upper",
                                auto_pad="SAME_UPPER", kernel_shape=[3, 3],
                                strides=[2, 2]),
               helper.make_node("Conv", ["x", "w"], ["z"], name="conv_lower",
                                auto_pad="SAME_LOWER", kernel_shape=[3, 3],
                                strides=[2, 2])],
              [vi("x", [1, 2, 6, 6])],
              [vi("y", [1, 4, 3, 3]), vi("z", [1, 4, 3, 3])],
              [init("w", f32(r, 4, 2, 3, 3))])


@case("maxpool")
def _maxpool(r):
    return mk([helper.make_node("MaxPool", ["x"], ["y"], name="p1",
                                kernel_shape=[2, 2], strides=[2, 2]),
               helper.make_node("MaxPool", ["x"], ["z"], name="p2",
                                kernel_shape=[3, 3], strides=[2, 2],
                                pads=[1, 1, 1, 1])],
              [vi("x", [1, 2, 6, 6])],
              [vi("y", [1, 2, 3, 3]), vi("z", [1, 2, 3, 3])])


@case("averagepool")
def _averagepool(r):
    return mk([helper.make_node("AveragePool", ["x"], ["y"], name="p1",
                                kernel_shape=[2, 2], strides=[2, 2]),
               helper.make_node("AveragePool", ["x"], ["z"], name="p2",
                                kernel_shape=[3, 3], strides=[2, 2],
                                pads=[1, 1, 1, 1], count_include_pad=1),
               helper.make_node("AveragePool", ["x"], ["w"], name="p3",
                                kernel_shape=[3, 3], strides=[2, 2],
                                pads=[1, 1, 1, 1], count_include_pad=0)],
              [vi("x", [1, 2, 6, 6])],
              [vi("y", [1, 2, 3, 3]), vi("z", [1, 2, 3, 3]),
               vi("w", [1, 2, 3, 3])])


@case("globalaveragepool")
def _gap(r):
    return mk([helper.make_node("GlobalAveragePool", ["x"], ["y"], name="gap")],
              [vi("x", [1, 4, 5, 5])], [vi("y", [1, 4, 1, 1])])


@case("batchnorm")
def _batchnorm(r):
    var = (0.5 + r.random(4)).astype(np.float32)
    return mk([helper.make_node("BatchNormalization",
                                ["x", "bn.weight", "bn.bias",
                                 "bn.running_mean", "bn.running_var"], ["y"],
                                name="/bn/BatchNormalization", epsilon=1e-3,
                                momentum=0.9)],
              [vi("x", [2, 4, 5, 5])], [vi("y", [2, 4, 5, 5])],
              [init("bn.weight", f32(r, 4)), init("bn.bias", f32(r, 4)),
               init("bn.running_mean", f32(r, 4)),
               init("bn.running_var", var)])


@case("layernorm17")
def _layernorm17(r):
    return mk([helper.make_node("LayerNormalization",
                                ["x", "ln.weight", "ln.bias"], ["y"],
                                name="/ln/LayerNormalization", axis=-1,
                                epsilon=1e-5)],
              [vi("x", [2, 5, 16])], [vi("y", [2, 5, 16])],
              [init("ln.weight", f32(r, 16)), init("ln.bias", f32(r, 16))],
              opset=17)


@case("elementwise")
def _elementwise(r):
    # Binary ops with a broadcast [8] initializer, Pow by constants 2 and
    # 0.5 (and 1, 3), Sqrt, Erf, Tanh, Sigmoid, Relu, in one chain.
    n = helper.make_node
    return mk([n("Add", ["x", "b"], ["a1"], name="add"),
               n("Sub", ["a1", "x"], ["a2"], name="sub"),
               n("Mul", ["a2", "x"], ["a3"], name="mul"),
               n("Div", ["a3", "b"], ["a4"], name="div"),
               const_node("two", np.array(2.0, np.float32)),
               n("Pow", ["a4", "two"], ["a5"], name="pow2"),
               const_node("half", np.array(0.5, np.float32)),
               n("Pow", ["a5", "half"], ["a6"], name="pow_half"),
               n("Sqrt", ["a6"], ["a7"], name="sqrt"),
               const_node("one", np.array(1.0, np.float32)),
               n("Pow", ["a7", "one"], ["a8"], name="pow1"),
               const_node("three", np.array(3.0, np.float32)),
               n("Pow", ["a8", "three"], ["a9"], name="pow3"),
               n("Erf", ["a9"], ["a10"], name="erf"),
               n("Tanh", ["a10"], ["a11"], name="tanh"),
               n("Sigmoid", ["a11"], ["a12"], name="sigmoid"),
               n("Relu", ["a12"], ["y"], name="relu")],
              [vi("x", [4, 8])], [vi("y", [4, 8])],
              [init("b", (1.0 + r.random(8)).astype(np.float32))])


@case("shape_arith")
def _shape_arith(r):
    # The int64 shape arithmetic torch emits for x.view(x.size(0), -1) with a
    # dynamic batch (Shape, Gather, Unsqueeze, Concat, Reshape), here on a
    # static input so it folds, plus Slice, Squeeze and Cast on the same
    # constant shape tensors: the target shape is [4, 1, -1] -> [4,1,64].
    n = helper.make_node
    return mk([n("Shape", ["x"], ["s"], name="shape"),
               const_node("i0", np.array(0, np.int64)),
               n("Gather", ["s", "i0"], ["d0"], name="gather", axis=0),
               const_node("ax0", i64([0])),
               n("Unsqueeze", ["d0", "ax0"], ["u0"], name="unsq"),
               n("Squeeze", ["u0", "ax0"], ["q0"], name="sq"),
               n("Unsqueeze", ["q0", "ax0"], ["u1"], name="unsq2"),
               n("Cast", ["u1"], ["c0"], name="cast", to=I64),
               const_node("st", i64([1])), const_node("en", i64([2])),
               n("Slice", ["s", "st", "en"], ["d1"], name="slice"),
               const_node("m1", i64([-1])),
               n("Concat", ["c0", "d1", "m1"], ["shape"], name="concat",
                 axis=0),
               n("Reshape", ["x", "shape"], ["y"], name="reshape")],
              [vi("x", [4, 1, 8, 8])], [vi("y", [4, 1, 64])])


@case("activations")
def _activations(r):
    # The activations written with relu/exp/log and arithmetic, and Pow by
    # negative constants. Clip's min is a float64 Constant cast to float, as
    # torch.onnx.export(do_constant_folding=False) writes clamp(min=0.1).
    n = helper.make_node
    return mk([n("LeakyRelu", ["x"], ["a1"], name="leaky", alpha=0.2),
               n("Abs", ["a1"], ["a2"], name="abs"),
               n("Elu", ["a2"], ["a3"], name="elu", alpha=0.7),
               n("Softplus", ["a3"], ["a4"], name="softplus"),
               n("HardSigmoid", ["a4"], ["a5"], name="hardsigmoid",
                 alpha=0.25, beta=0.4),
               n("HardSwish", ["a5"], ["a6"], name="hardswish"),
               const_node("lo64", np.array(0.1, np.float64)),
               n("Cast", ["lo64"], ["lo"], name="cast_lo", to=F32),
               n("Clip", ["a6", "lo"], ["a7"], name="clip_min"),
               const_node("hi", np.array(6.0, np.float32)),
               n("Clip", ["a7", "", "hi"], ["a8"], name="clip_max"),
               const_node("m1", np.array(-1.0, np.float32)),
               n("Pow", ["a8", "m1"], ["a9"], name="pow_m1"),
               const_node("mhalf", np.array(-0.5, np.float32)),
               n("Pow", ["a9", "mhalf"], ["a10"], name="pow_mhalf"),
               const_node("m2", np.array(-2.0, np.float32)),
               n("Pow", ["a10", "m2"], ["y"], name="pow_m2")],
              [vi("x", [4, 8])], [vi("y", [4, 8])], opset=14)


@case("float_shape_arith")
def _float_shape_arith(r):
    # Float arithmetic on shape values, folded: x * (x.shape[-1] // 4) **
    # -0.5 (hand-written attention scaling) and the n / (n - 1) of torch.var
    # (ReduceProd of a shape slice, Cast, Sub, Div): 16 // 4 = 4 -> 0.5, and
    # 16 / 15.
    n = helper.make_node
    return mk([n("Shape", ["x"], ["s"], name="shape"),
               const_node("i2", np.array(2, np.int64)),
               n("Gather", ["s", "i2"], ["c"], name="gather", axis=0),
               const_node("four", np.array(4, np.int64)),
               n("Div", ["c", "four"], ["hd"], name="div_int"),
               n("Cast", ["hd"], ["hdf"], name="cast_f", to=F32),
               const_node("mhalf", np.array(-0.5, np.float32)),
               n("Pow", ["hdf", "mhalf"], ["sc"], name="pow_scale"),
               n("Mul", ["x", "sc"], ["y1"], name="scale"),
               const_node("im1", i64([-1])),
               n("Gather", ["s", "im1"], ["last"], name="gather_last", axis=0),
               n("ReduceProd", ["last"], ["cnt"], name="count", keepdims=0),
               n("Cast", ["cnt"], ["cntf"], name="cast_cnt", to=F32),
               const_node("one", np.array(1.0, np.float32)),
               n("Sub", ["cntf", "one"], ["cm1"], name="sub_one"),
               n("Div", ["cntf", "cm1"], ["corr"], name="corr"),
               n("Mul", ["y1", "corr"], ["y"], name="correct")],
              [vi("x", [2, 3, 16])], [vi("y", [2, 3, 16])])


@case("matmul_broadcast")
def _matmul_broadcast(r):
    # MatMul with broadcast batch dimensions: [6,5] @ [2,5,8] and
    # [2,1,4,8] @ [3,8,5].
    n = helper.make_node
    return mk([n("MatMul", ["w", "x"], ["y"], name="mix"),
               n("MatMul", ["a", "b"], ["z"], name="bcast4d")],
              [vi("x", [2, 5, 8]), vi("a", [2, 1, 4, 8]), vi("b", [3, 8, 5])],
              [vi("y", [2, 6, 8]), vi("z", [2, 3, 4, 5])],
              [init("w", f32(r, 6, 5))])


# --------------------------------------------------------------------------
# models dlc must reject (with an error, exit status 1)


@case("einsum")
def _einsum(r):
    return mk([helper.make_node("Einsum", ["a", "b"], ["y"], name="my_einsum",
                                equation="ij,jk->ik")],
              [vi("a", [2, 3]), vi("b", [3, 4])], [vi("y", [2, 4])])


@case("lstm")
def _lstm(r):
    # LSTM imports; its 'clip' attribute does not.
    return mk([helper.make_node("LSTM", ["x", "W", "R"], ["", "y"],
                                name="/rnn/LSTM", hidden_size=4, clip=1.0)],
              [vi("x", [5, 2, 3])], [vi("y", [1, 2, 4])],
              [init("W", f32(r, 1, 16, 3)), init("R", f32(r, 1, 16, 4))],
              opset=14)


@case("lstm_seq")
def _lstm_seq(r):
    # An LSTM (hidden 32) whose sequence length T is a dimension the user
    # sets (--input-shape x=T,4,16): the training step's saved activations
    # grow linearly with T (lstm_memory.test).
    x = helper.make_tensor_value_info("x", F32, ["T", 4, 16])
    return mk([helper.make_node("LSTM", ["x", "W", "R", "B"], ["", "y"],
                                name="/rnn/LSTM", hidden_size=32)],
              [x], [vi("y", [1, 4, 32])],
              [init("W", f32(r, 1, 128, 16)), init("R", f32(r, 1, 128, 32)),
               init("B", f32(r, 1, 256))], opset=14)


@case("lstm_embed_seq")
def _lstm_embed_seq(r):
    # nn.Embedding then nn.LSTM(batch_first=False): ids [T, B], the
    # embedding [T, B, 8] read by the LSTM (layout 0) with T as its time
    # axis; --batch sets T (errors.test).
    n = helper.make_node
    return mk([n("Gather", ["emb", "ids"], ["x"], name="/emb/Gather"),
               n("LSTM", ["x", "W", "R"], ["", "y"], name="/rnn/LSTM",
                 hidden_size=4)],
              [vi("ids", [6, 2], TensorProto.INT64)], [vi("y", [1, 2, 4])],
              [init("emb", f32(r, 10, 8)), init("W", f32(r, 1, 16, 8)),
               init("R", f32(r, 1, 16, 4))], opset=14)


@case("static_views")
def _static_views(r):
    # A static export's views of x [2, 5, 8] (batch 2), as PyTorch's dynamo
    # exporter writes attention's: sequence-first [5, 2, 8], the batch merged
    # with two heads [5, 4, 4], heads first [4, 5, 4], split [2, 2, 5, 4],
    # back to [5, 2, 2, 4], merged with the sequence [10, 8], split again
    # [5, 2, 8], batch-first, then view(B, -1) and a linear layer. Every
    # target holds the exported batch (allowzero=1, as dynamo writes it);
    # with --batch 3 each gets the new one (static_batch.test). The
    # reference evaluates the graph at its own batch, with numpy: x's third
    # row is its first again, so the third output row is the first's.
    n = helper.make_node
    x2 = f32(r, 2, 5, 8)
    w = f32(r, 40, 3)
    views = [("t1", [5, 4, 4]), ("t3", [2, 2, 5, 4]), ("t5", [10, 8]),
             ("t6", [5, 2, 8]), ("t8", [2, 40])]
    nodes = [const_node("shape_" + v, i64(s)) for v, s in views]
    def view(src, dst):
        nodes.append(n("Reshape", [src, "shape_" + dst], [dst], name=dst,
                       allowzero=1))
    nodes.append(n("Transpose", ["x"], ["t0"], name="t0", perm=[1, 0, 2]))
    view("t0", "t1")
    nodes.append(n("Transpose", ["t1"], ["t2"], name="t2", perm=[1, 0, 2]))
    view("t2", "t3")
    nodes.append(n("Transpose", ["t3"], ["t4"], name="t4",
                   perm=[2, 0, 1, 3]))
    view("t4", "t5")
    view("t5", "t6")
    nodes.append(n("Transpose", ["t6"], ["t7"], name="t7", perm=[1, 0, 2]))
    view("t7", "t8")
    nodes.append(n("MatMul", ["t8", "w"], ["y"], name="linear"))
    t = np.transpose(x2.astype(np.float64), [1, 0, 2]).reshape(5, 4, 4)
    t = np.transpose(t, [1, 0, 2]).reshape(2, 2, 5, 4)
    t = np.transpose(t, [2, 0, 1, 3]).reshape(10, 8).reshape(5, 2, 8)
    y2 = np.transpose(t, [1, 0, 2]).reshape(2, 40) @ w
    x3 = np.concatenate([x2, x2[:1]])
    np.save(os.path.join(INPUTS, "static_views_x3.npy"), x3)
    np.save(os.path.join(INPUTS, "static_views_y3.npy"),
            np.concatenate([y2, y2[:1]]).astype(np.float32))
    return mk(nodes, [vi("x", [2, 5, 8])], [vi("y", [2, 3])],
              [init("w", w)], opset=14)


@case("static_expand")
def _static_expand(r):
    # A learned token repeated over the batch (cls_token.expand(B, -1, -1))
    # with the exported batch in Expand's shape, before a Concat with the
    # batch's own rows; --batch 3 repeats it 3 times (static_batch.test).
    n = helper.make_node
    return mk([const_node("shape", i64([2, 1, 8])),
               n("Expand", ["cls", "shape"], ["tok"], name="expand"),
               n("Concat", ["tok", "x"], ["y"], name="cat", axis=1)],
              [vi("x", [2, 5, 8])], [vi("y", [2, 6, 8])],
              [init("cls", f32(r, 1, 1, 8))], opset=14)


def _static_state(state):
    # As TorchScript exports nn.LSTM's zero initial state: a Constant node
    # written at the exported batch (2), expanded to [1, B, 4] with B read
    # from the input's shape, here added to the input's rows.
    n = helper.make_node
    return mk([const_node("state", state),
               n("Shape", ["x"], ["xs"], name="shape"),
               const_node("zero", i64(0)),
               n("Gather", ["xs", "zero"], ["b"], name="batch"),
               const_node("axes", i64([0])),
               n("Unsqueeze", ["b", "axes"], ["b1"], name="b1"),
               const_node("one", i64([1])),
               const_node("four", i64([4])),
               n("Concat", ["one", "b1", "four"], ["hs"], name="hs", axis=0),
               n("Expand", ["state", "hs"], ["h"], name="expand"),
               n("Unsqueeze", ["x", "axes"], ["x1"], name="x1"),
               n("Add", ["x1", "h"], ["y"], name="add")],
              [vi("x", [2, 4])], [vi("y", [1, 2, 4])], opset=14)


@case("static_state")
def _static_state_splat(r):
    # One value (0.5): any batch takes it (static_batch.test).
    return _static_state(np.full((1, 2, 4), 0.5, np.float32))


@case("static_state_values")
def _static_state_values(r):
    # Two rows that differ: no other batch (static_batch.test).
    return _static_state(f32(r, 1, 2, 4))


@case("static_mixed_view")
def _static_mixed_view(r):
    # x [2, 3] viewed as [3, 2]: the rows of the batch do not stay whole,
    # so no other batch can be given (static_batch.test).
    n = helper.make_node
    return mk([const_node("shape", i64([3, 2])),
               n("Reshape", ["x", "shape"], ["y"], name="mixed")],
              [vi("x", [2, 3])], [vi("y", [3, 2])], opset=14)


@case("unsqueeze_twice")
def _unsqueeze_twice(r):
    # Unsqueeze with an axis given twice (-1 and 2 of the rank-3 result):
    # an error, not a read past the input's shape (found by the fuzzer).
    n = helper.make_node
    return mk([const_node("axes", i64([2, -1])),
               n("Unsqueeze", ["x", "axes"], ["y"], name="unsq")],
              [vi("x", [4])], [vi("y", [4, 1, 1])])


def _relu_model(opset):
    return mk([helper.make_node("Relu", ["x"], ["y"], name="relu")],
              [vi("x", [2, 3])], [vi("y", [2, 3])], opset=opset)


@case("lstm_expand")
def _lstm_expand(r):
    # As nn.LSTM exports: an Expand of the initial state before the LSTM,
    # which imports; the LSTM's sequence_lens, a graph input, does not.
    n = helper.make_node
    return mk([const_node("shape", i64([1, 2, 4])),
               n("Expand", ["h0", "shape"], ["h"], name="/l/Expand"),
               n("LSTM", ["x", "W", "R", "", "lens", "h", "h"], ["", "y"],
                 name="/l/LSTM", hidden_size=4)],
              [vi("x", [5, 2, 3]), vi("h0", [1, 1, 4]),
               vi("lens", [2], TensorProto.INT32)], [vi("y", [1, 2, 4])],
              [init("W", f32(r, 1, 16, 3)), init("R", f32(r, 1, 16, 4))],
              opset=14)


@case("einsum_det")
def _einsum_det(r):
    # Two unsupported ops: the error names the first, a note the other.
    n = helper.make_node
    return mk([n("Einsum", ["a", "b"], ["c"], name="my_einsum",
                 equation="ij,jk->ik"),
               n("Det", ["m"], ["d"], name="/det")],
              [vi("a", [2, 3]), vi("b", [3, 4]), vi("m", [3, 3])],
              [vi("c", [2, 4]), vi("d", [])],
              opset=14)


@case("opset9")
def _opset9(r):
    return _relu_model(9)


@case("opset19")
def _opset19(r):
    # onnx 1.12 knows opsets up to 17, yet its checker lets this one pass.
    return _relu_model(19)


@case("names_torchscript")
def _names_torchscript(r):
    # The TorchScript exporter's names: an input "onnx::Gemm_0", outputs
    # "191" (a number) and "int" (a C keyword), an intermediate "input.1".
    n = helper.make_node
    return mk([n("Gemm", ["onnx::Gemm_0", "fc.weight", "fc.bias"], ["input.1"],
                 name="/fc/Gemm", transB=1),
               n("Relu", ["input.1"], ["191"], name="/relu/Relu"),
               n("Neg", ["191"], ["int"], name="/neg/Neg")],
              [vi("onnx::Gemm_0", [2, 3])], [vi("191", [2, 4]), vi("int", [2, 4])],
              [init("fc.weight", f32(r, 4, 3)), init("fc.bias", f32(r, 4))])


# --------------------------------------------------------------------------
# opsets 18 to 21 (newer than this onnx knows: not run through its checker)


@case("reducemean18")
def _reducemean18(r):
    # Opset 18: the reductions take their axes as an input.
    n = helper.make_node
    return mk([const_node("axes", i64([1])),
               n("ReduceMean", ["x", "axes"], ["y"], name="mean", keepdims=0)],
              [vi("x", [2, 3, 4])], [vi("y", [2, 4])], opset=18)


@case("pad18_axes")
def _pad18_axes(r):
    # Opset 18: Pad's `axes` input; the zero Pad of H and W is absorbed by
    # the Conv that reads it.
    n = helper.make_node
    return mk([const_node("pads", i64([1, 2, 1, 2])),
               const_node("axes", i64([2, 3])),
               n("Pad", ["x", "pads", "", "axes"], ["xp"], name="pad"),
               n("Conv", ["xp", "w"], ["y"], name="conv")],
              [vi("x", [1, 2, 5, 5])], [vi("y", [1, 3, 5, 7])],
              [init("w", f32(r, 3, 2, 3, 3))], opset=18)


def _pad_case(name, value, pads, shape, reader):
    """A Pad that no Conv or AveragePool absorbs (read by `reader`, or with
    a non-zero value): a real op. Writes <name>_x.npy and <name>_y.npy
    (NumPy's np.pad, then the reader)."""
    r = rng_for(name)
    x = f32(r, *shape)
    n = helper.make_node
    rank = len(shape)
    ins = ["x", "pads"] + (["value"] if value else [])
    nodes = [const_node("pads", i64(pads))]
    if value:
        nodes.append(const_node("value", np.array(value, np.float32)))
    nodes.append(n("Pad", ins, ["xp"], name="pad"))
    nodes.append(n(reader, ["xp"], ["y"], name="reader"))
    padded = np.pad(x.astype(np.float64),
                    [(pads[d], pads[d + rank]) for d in range(rank)],
                    constant_values=value)
    y = np.maximum(padded, 0) if reader == "Relu" else -padded
    np.save(os.path.join(INPUTS, name + "_x.npy"), x)
    np.save(os.path.join(INPUTS, name + "_y.npy"), y.astype(np.float32))
    return mk(nodes, [vi("x", list(shape))], [vi("y", list(y.shape))])


@case("pad_relu")
def _pad_relu(r):
    # Zero padding of every dimension, read by a Relu.
    return _pad_case("pad_relu", 0.0, [1, 0, 2, 0, 1, 1], (2, 3, 4), "Relu")


@case("pad_value")
def _pad_value(r):
    # A non-zero constant, read by a Neg.
    return _pad_case("pad_value", 1.5, [0, 2, 1, 3], (3, 2), "Neg")


@case("int_mask")
def _int_mask(r):
    # As BERT-like models take their attention mask: int64 token ids gather
    # an embedding, the int64 mask is unsqueezed, cast to float and turned
    # into an additive bias, (1 - m) * -10000. Writes int_mask_ids.npy,
    # int_mask_mask.npy and int_mask_y.npy (NumPy, float64).
    n = helper.make_node
    w = f32(r, 10, 8)
    ids = np.array([[1, 9, 0, 3], [4, 4, 7, 2]], np.int64)
    mask = np.array([[1, 1, 0, 1], [1, 0, 0, 1]], np.int64)
    emb = w.astype(np.float64)[ids]
    y = emb + (1.0 - mask[:, :, None].astype(np.float64)) * -10000.0
    np.save(os.path.join(INPUTS, "int_mask_ids.npy"), ids)
    np.save(os.path.join(INPUTS, "int_mask_mask.npy"), mask)
    np.save(os.path.join(INPUTS, "int_mask_y.npy"), y.astype(np.float32))
    return mk([n("Gather", ["emb.weight", "ids"], ["e"], name="embed"),
               const_node("axes", i64([2])),
               n("Unsqueeze", ["mask", "axes"], ["m3"], name="unsqueeze"),
               n("Cast", ["m3"], ["mf"], name="cast", to=TensorProto.FLOAT),
               const_node("one", np.array(1.0, np.float32)),
               n("Sub", ["one", "mf"], ["inv"], name="invert"),
               const_node("big", np.array(-10000.0, np.float32)),
               n("Mul", ["inv", "big"], ["bias"], name="scale"),
               n("Add", ["e", "bias"], ["y"], name="add_bias")],
              [vi("ids", [2, 4], I64), vi("mask", [2, 4], I64)],
              [vi("y", [2, 4, 8])], [init("emb.weight", w)])


@case("reciprocal")
def _reciprocal(r):
    return mk([helper.make_node("Reciprocal", ["x"], ["y"], name="recip")],
              [vi("x", [2, 3])], [vi("y", [2, 3])])


@case("slice_reverse")
def _slice_reverse(r):
    # torch.flip and x[:, ::-2]: Slices with negative steps, on values.
    # Writes slice_reverse_x.npy and slice_reverse_y.npy (NumPy).
    n = helper.make_node
    x = f32(r, 3, 7)
    y = np.flip(x, 0)[:, ::-2] + x[::-1, 5:0:-2][:, :1]
    np.save(os.path.join(INPUTS, "slice_reverse_x.npy"), x)
    np.save(os.path.join(INPUTS, "slice_reverse_y.npy"), y.astype(np.float32))
    big = 2**63 - 1
    return mk([const_node("s1", i64([-1, -1])), const_node("e1", i64([-big - 1, -big - 1])),
               const_node("a1", i64([0, 1])), const_node("st1", i64([-1, -2])),
               n("Slice", ["x", "s1", "e1", "a1", "st1"], ["f"], name="flip"),
               const_node("s2", i64([2, 5])), const_node("e2", i64([-4, 0])),
               const_node("st2", i64([-1, -2])),
               n("Slice", ["x", "s2", "e2", "a1", "st2"], ["g"], name="back"),
               const_node("s3", i64([0])), const_node("e3", i64([1])),
               const_node("a3", i64([1])),
               n("Slice", ["g", "s3", "e3", "a3"], ["g1"], name="first"),
               n("Add", ["f", "g1"], ["y"], name="add")],
              [vi("x", [3, 7])], [vi("y", list(y.shape))])


@case("slice_reverse_train")
def _slice_reverse_train(r):
    # y = reverse(x * w) along axis 1, trained with --loss mse: the gradient
    # goes back through the reversed slice (dlc.slice_grad with a negative
    # stride). Writes slice_reverse_train_{x,t,w1}.npy: the input, the
    # target, and w after one SGD step of lr 0.1 (NumPy, float64).
    n = helper.make_node
    x = f32(r, 2, 4)
    t = f32(r, 2, 4)
    w = f32(r, 1, 4)
    xd, td, wd = (a.astype(np.float64) for a in (x, t, w))
    y = (xd * wd)[:, ::-1]
    dy = 2.0 * (y - td) / y.size
    dw = (xd * dy[:, ::-1]).sum(axis=0, keepdims=True)
    np.save(os.path.join(INPUTS, "slice_reverse_train_x.npy"), x)
    np.save(os.path.join(INPUTS, "slice_reverse_train_t.npy"), t)
    np.save(os.path.join(INPUTS, "slice_reverse_train_w1.npy"),
            (wd - 0.1 * dw).astype(np.float32))
    big = 2**63 - 1
    return mk([n("Mul", ["x", "w"], ["xw"], name="mul"),
               const_node("s", i64([-1])), const_node("e", i64([-big - 1])),
               const_node("a", i64([1])), const_node("st", i64([-1])),
               n("Slice", ["xw", "s", "e", "a", "st"], ["y"], name="reverse")],
              [vi("x", [2, 4])], [vi("y", [2, 4])], [init("w", w)])


@case("tile")
def _tile(r):
    # np.tile order: whole copies, outermost first. Writes tile_x.npy and
    # tile_y.npy.
    x = f32(r, 2, 3)
    y = np.tile(x, (2, 3))
    np.save(os.path.join(INPUTS, "tile_x.npy"), x)
    np.save(os.path.join(INPUTS, "tile_y.npy"), y)
    return mk([const_node("reps", i64([2, 3])),
               helper.make_node("Tile", ["x", "reps"], ["y"], name="tile")],
              [vi("x", [2, 3])], [vi("y", [4, 9])])


@case("mask_fold")
def _mask_fold(r):
    # A shifted-window attention mask as swin_t's exports build it, from
    # constants only: ConstantOfShape zeros written region by region with
    # ScatterND (int64 indices; updates from a Constant node and a float
    # initializer), viewed and permuted into windows, compared pairwise
    # (Unsqueeze, a broadcasting Sub, Equal, Not, Where), then an N-D
    # reversed Slice and an N-D Concat; added to the input, through a
    # Dropout of ratio 0 in training mode (the identity). Everything but the
    # Add and the Dropout folds. Writes mask_fold_{x,y}.npy (NumPy).
    n = helper.make_node
    img = np.zeros((1, 6, 6), np.float32)
    regions = [(slice(0, 3), slice(0, 3), 1.0), (slice(3, 6), slice(0, 6), 2.0),
               (slice(0, 3), slice(3, 6), 3.0)]
    nodes = [const_node("shape", i64([1, 6, 6])),
             n("ConstantOfShape", ["shape"], ["m0"], name="zeros",
               value=helper.make_tensor("v", F32, [1], [0.0]))]
    inits = []
    cur = "m0"
    for k, (hs, ws, val) in enumerate(regions):
        idx = np.array([[0, h, w] for h in range(6)[hs] for w in range(6)[ws]],
                       np.int64)
        upd = np.full((len(idx),), val, np.float32)
        img[0, hs, ws] = val
        nodes.append(const_node("idx%d" % k, idx))
        if k == 1:
            inits.append(init("upd%d" % k, upd))
        else:
            nodes.append(const_node("upd%d" % k, upd))
        nodes.append(n("ScatterND", [cur, "idx%d" % k, "upd%d" % k],
                       ["m%d" % (k + 1)], name="scatter%d" % k))
        cur = "m%d" % (k + 1)
    # [1, 6, 6] -> [1, 2, 3, 2, 3] -> windows [1, 2, 2, 3, 3] -> [4, 9].
    win = img.reshape(1, 2, 3, 2, 3).transpose(0, 1, 3, 2, 4).reshape(4, 9)
    diff = win[:, None, :] - win[:, :, None]
    mask = np.where(diff != 0, -100.0, 0.0).astype(np.float32)   # [4, 9, 9]
    mask = mask[:, :, ::-1]
    mask = np.concatenate([mask, mask[:, :2]], axis=1)           # [4, 11, 9]
    nodes += [const_node("s5", i64([1, 2, 3, 2, 3])),
              n("Reshape", [cur, "s5"], ["r5"], name="view"),
              n("Transpose", ["r5"], ["t5"], name="permute", perm=[0, 1, 3, 2, 4]),
              const_node("s2", i64([4, 9])),
              n("Reshape", ["t5", "s2"], ["w"], name="windows"),
              const_node("a1", i64([1])), const_node("a2", i64([2])),
              n("Unsqueeze", ["w", "a1"], ["wa"], name="unsq1"),
              n("Unsqueeze", ["w", "a2"], ["wb"], name="unsq2"),
              n("Sub", ["wa", "wb"], ["d"], name="pairs"),
              const_node("zero", np.array(0.0, np.float32)),
              n("Equal", ["d", "zero"], ["eq"], name="eq"),
              n("Not", ["eq"], ["ne"], name="not"),
              const_node("neg", np.array(-100.0, np.float32)),
              n("Where", ["ne", "neg", "zero"], ["mk"], name="where"),
              const_node("st", i64([-1])), const_node("en", i64([-(2**63)])),
              const_node("ax", i64([2])), const_node("sp", i64([-1])),
              n("Slice", ["mk", "st", "en", "ax", "sp"], ["rev"], name="flip"),
              const_node("st2", i64([0])), const_node("en2", i64([2])),
              const_node("ax2", i64([1])),
              n("Slice", ["rev", "st2", "en2", "ax2"], ["head"], name="head"),
              n("Concat", ["rev", "head"], ["full"], name="cat", axis=1),
              const_node("ratio", np.array(0.0, np.float32)),
              const_node("train", np.array(True)),
              n("Dropout", ["x", "ratio", "train"], ["xd"], name="drop"),
              n("Add", ["xd", "full"], ["y"], name="add")]
    x = f32(r, 4, 11, 9)
    np.save(os.path.join(INPUTS, "mask_fold_x.npy"), x)
    np.save(os.path.join(INPUTS, "mask_fold_y.npy"), (x + mask).astype(np.float32))
    return mk(nodes, [vi("x", [4, 11, 9])], [vi("y", [4, 11, 9])], inits,
              opset=14)


@case("gather_nd")
def _gather_nd(r):
    # GatherND with constant [3, 2, 2] indices (pairs into the first two
    # dimensions, one negative) of a [4, 5, 3] value: a [3, 2, 3] result, as
    # the dynamo exporter's adaptive average pool writes it. Writes
    # gather_nd_{x,y}.npy (NumPy).
    x = f32(r, 4, 5, 3)
    idx = np.array([[[0, 1], [3, -1]], [[2, 2], [1, 0]], [[-4, 4], [0, 0]]],
                   np.int64)
    y = np.stack([np.stack([x[a, b] for a, b in row]) for row in idx])
    np.save(os.path.join(INPUTS, "gather_nd_x.npy"), x)
    np.save(os.path.join(INPUTS, "gather_nd_y.npy"), y)
    return mk([const_node("idx", idx),
               helper.make_node("GatherND", ["x", "idx"], ["y"], name="gnd")],
              [vi("x", [4, 5, 3])], [vi("y", [3, 2, 3])])


@case("gather_nd_rows")
def _gather_nd_rows(r):
    # GatherND by run-time index tuples of one entry ([2, 2, 1], one
    # negative) of a [4, 5, 3] value: rows, as the dynamo exporter writes
    # x[:, ids] after a transpose. Writes gather_nd_rows_{x,idx,y}.npy.
    x = f32(r, 4, 5, 3)
    idx = np.array([[[3], [-4]], [[1], [1]]], np.int64)
    y = x[idx[..., 0]]
    for k, v in (("x", x), ("idx", idx), ("y", y)):
        np.save(os.path.join(INPUTS, "gather_nd_rows_%s.npy" % k), v)
    return mk([helper.make_node("GatherND", ["x", "idx"], ["y"], name="gnd")],
              [vi("x", [4, 5, 3]), vi("idx", [2, 2, 1], TensorProto.INT64)],
              [vi("y", [2, 2, 5, 3])])


@case("gather_nd_runtime")
def _gather_nd_runtime(r):
    return mk([helper.make_node("GatherND", ["x", "idx"], ["y"], name="gnd")],
              [vi("x", [4, 5, 3]), vi("idx", [2, 2], TensorProto.INT64)],
              [vi("y", [2, 3])])


@case("reduce_extrema")
def _reduce_extrema(r):
    # ReduceMax over axis 1 (opset 18: axes input) minus ReduceMin over
    # axis 0 kept. Writes reduce_extrema_{x,y}.npy (NumPy).
    n = helper.make_node
    x = f32(r, 3, 5)
    y = x.max(axis=1, keepdims=True) - x.min(axis=0, keepdims=True)
    np.save(os.path.join(INPUTS, "reduce_extrema_x.npy"), x)
    np.save(os.path.join(INPUTS, "reduce_extrema_y.npy"), y)
    return mk([const_node("a1", i64([1])), const_node("a0", i64([0])),
               n("ReduceMax", ["x", "a1"], ["mx"], name="max", keepdims=1),
               n("ReduceMin", ["x", "a0"], ["mn"], name="min", keepdims=1),
               n("Sub", ["mx", "mn"], ["y"], name="sub")],
              [vi("x", [3, 5])], [vi("y", [3, 5])], opset=18)


@case("reduce_max_train")
def _reduce_max_train(r):
    # y = max over axis 1 of x * w, trained with --loss mse (SGD, lr 0.1):
    # row 0 of x has a tie for its maximum, which shares the gradient as
    # PyTorch's amax does. Writes reduce_max_train_{x,t,w1}.npy (NumPy).
    n = helper.make_node
    x = np.array([[3.0, 3.0, 1.0, 0.5], [0.2, -1.0, 2.5, 1.0]], np.float32)
    t = np.array([1.0, 2.0], np.float32)
    w = np.ones((1, 4), np.float32)
    xw = x.astype(np.float64) * w
    y = xw.max(axis=1)
    dy = 2.0 * (y - t) / y.size
    mask = (xw == y[:, None])
    dxw = mask * (dy / mask.sum(axis=1))[:, None]
    dw = (dxw * x).sum(axis=0, keepdims=True)
    np.save(os.path.join(INPUTS, "reduce_max_train_x.npy"), x)
    np.save(os.path.join(INPUTS, "reduce_max_train_t.npy"), t)
    np.save(os.path.join(INPUTS, "reduce_max_train_w1.npy"),
            (w - 0.1 * dw).astype(np.float32))
    return mk([n("Mul", ["x", "w"], ["xw"], name="mul"),
               n("ReduceMax", ["xw"], ["y"], name="max", axes=[1], keepdims=0)],
              [vi("x", [2, 4])], [vi("y", [2])], [init("w", w)])


@case("slice_int64_max")
def _slice_int64_max(r):
    # TorchScript writes x[:, 1:] with an end of INT64_MAX, sometimes through
    # a Cast of the constant to int64: the folded end must stay INT64_MAX
    # (through a double it became -2^63, and the slice came out empty).
    n = helper.make_node
    return mk([const_node("big", i64([2**63 - 1])),
               n("Cast", ["big"], ["end"], name="cast_end", to=I64),
               const_node("start", i64([1])), const_node("axis", i64([1])),
               n("Slice", ["x", "start", "end", "axis"], ["y"], name="slice")],
              [vi("x", [2, 5])], [vi("y", [2, 4])])


@case("cast_to_int")
def _cast_to_int(r):
    return mk([helper.make_node("Cast", ["x"], ["y"], name="cast",
                                to=TensorProto.INT64)],
              [vi("x", [2, 3])], [vi("y", [2, 3], I64)])


@case("compare_ids_table")
def _compare_ids_table(r):
    # Token ids compared with a multi-element int64 constant: integer data
    # dlc does not hold as a value.
    n = helper.make_node
    return mk([const_node("pads", i64([0, 1, 2, 3])),
               n("Equal", ["ids", "pads"], ["m"], name="eq"),
               n("Cast", ["m"], ["y"], name="cast", to=TensorProto.FLOAT)],
              [vi("ids", [2, 4], I64)], [vi("y", [2, 4])])


@case("compare_ids_huge")
def _compare_ids_huge(r):
    # A constant beyond 2^53, which a dlc.fill cannot hold exactly.
    n = helper.make_node
    return mk([const_node("big", i64([2**60 + 1])),
               n("Less", ["ids", "big"], ["m"], name="lt"),
               n("Cast", ["m"], ["y"], name="cast", to=TensorProto.FLOAT)],
              [vi("ids", [2, 4], I64)], [vi("y", [2, 4])])


@case("gather_elements_const")
def _gather_elements_const(r):
    n = helper.make_node
    return mk([const_node("idx", np.zeros([2, 1], np.int64)),
               n("GatherElements", ["x", "idx"], ["y"], name="ge", axis=1)],
              [vi("x", [2, 4])], [vi("y", [2, 1])])


@case("and_floats")
def _and_floats(r):
    n = helper.make_node
    return mk([n("And", ["x", "x"], ["m"], name="and"),
               n("Cast", ["m"], ["y"], name="cast", to=TensorProto.FLOAT)],
              [vi("x", [2, 4])], [vi("y", [2, 4])])


@case("trainable_scalars")
def _trainable_scalars(r):
    # A Linear with one output (its bias "head.bias" has one element: a
    # parameter) scaled by an exporter's constant "val_3" (one element, not
    # a module path: a constant), masked by an initializer holding -inf.
    n = helper.make_node
    return mk([n("Gemm", ["x", "head.weight", "head.bias"], ["h"], name="head",
                 transB=1),
               n("Mul", ["h", "val_3"], ["s"], name="scale"),
               n("Add", ["s", "mask"], ["y"], name="mask_add")],
              [vi("x", [2, 3])], [vi("y", [2, 1])],
              [init("head.weight", f32(r, 1, 3)), init("head.bias", f32(r, 1)),
               init("val_3", np.array(0.5, np.float32)),
               init("mask", np.array([[0.0], [-np.inf]], np.float32))])


@case("gelu20")
def _gelu20(r):
    return mk([helper.make_node("Gelu", ["x"], ["y"], name="gelu",
                                approximate="tanh")],
              [vi("x", [2, 3])], [vi("y", [2, 3])], opset=20)


@case("gelu17")
def _gelu17(r):
    # Gelu does not exist before opset 20.
    return mk([helper.make_node("Gelu", ["x"], ["y"], name="gelu")],
              [vi("x", [2, 3])], [vi("y", [2, 3])], opset=17)


@case("opset21")
def _opset21(r):
    return _relu_model(21)


@case("opset22")
def _opset22(r):
    return _relu_model(22)


# --------------------------------------------------------------------------
# integer folding and window arithmetic on hostile values (each crashed or
# overflowed once)


@case("fold_empty_add")
def _fold_empty_add(r):
    # An empty int64 constant plus a one-element one: an empty result.
    n = helper.make_node
    return mk([const_node("e", np.zeros([0], np.int64)),
               const_node("one", i64([1])),
               n("Add", ["e", "one"], ["s"], name="add_empty"),
               n("Relu", ["x"], ["y"], name="relu")],
              [vi("x", [2, 3])], [vi("y", [2, 3])])


@case("fold_concat_absent")
def _fold_concat_absent(r):
    n = helper.make_node
    return mk([const_node("a", i64([2, 3])),
               n("Concat", ["a", ""], ["s"], name="cat", axis=0),
               n("Reshape", ["x", "s"], ["y"], name="reshape")],
              [vi("x", [2, 3])], [vi("y", [2, 3])])


@case("fold_overflow")
def _fold_overflow(r):
    n = helper.make_node
    return mk([const_node("a", i64([2**62, 3])),
               const_node("two", i64([4])),
               n("Mul", ["a", "two"], ["s"], name="mul_big"),
               n("Reshape", ["x", "s"], ["y"], name="reshape")],
              [vi("x", [2, 3])], [vi("y", [2, 3])])


@case("conv_huge_pad")
def _conv_huge_pad(r):
    return mk([helper.make_node("Conv", ["x", "w"], ["y"], name="conv",
                                pads=[2**63 - 1, 0, 2**63 - 1, 0])],
              [vi("x", [1, 1, 8, 8])], [vi("y", [1, 1, 8, 6])],
              [init("w", f32(r, 1, 1, 3, 3))])


@case("input_huge")
def _input_huge(r):
    # Two inputs of 2^60 elements each: their bytes summed past 2^63 and the
    # model passed the memory check with a negative size.
    s = [2**30, 2**30]
    return mk([helper.make_node("Add", ["x", "z"], ["y"], name="add")],
              [vi("x", s), vi("z", s)], [vi("y", s)])


@case("conv_huge_dilation")
def _conv_huge_dilation(r):
    return mk([helper.make_node("Conv", ["x", "w"], ["y"], name="conv",
                                dilations=[2**63 - 1, 1])],
              [vi("x", [1, 1, 8, 8])], [vi("y", [1, 1, 8, 6])],
              [init("w", f32(r, 1, 1, 3, 3))])


# --------------------------------------------------------------------------
# external data: a Gemm whose weight lives in a file next to the model


def _external_gemm(r, location, offset=0, length=None, data_bytes=None,
                   second=None):
    """Gemm y = x W^T + b with W (4x3) stored externally at `location`.
    `data_bytes` is what the data file holds (W's bytes by default);
    `second` adds the bias as a second external tensor at that offset."""
    w = f32(r, 4, 3)
    b = f32(r, 4)
    wt = init("W", w)
    wt.ClearField("raw_data")
    wt.data_location = TensorProto.EXTERNAL
    entries = {"location": location, "offset": str(offset)}
    entries["length"] = str(w.nbytes if length is None else length)
    for k, v in entries.items():
        e = wt.external_data.add()
        e.key, e.value = k, v
    inits = [wt]
    blob = w.tobytes() if data_bytes is None else data_bytes
    if second is not None:
        bt = init("B", b)
        bt.ClearField("raw_data")
        bt.data_location = TensorProto.EXTERNAL
        for k, v in {"location": location, "offset": str(second),
                     "length": str(b.nbytes)}.items():
            e = bt.external_data.add()
            e.key, e.value = k, v
        inits.append(bt)
        blob = blob + b.tobytes()
    else:
        inits.append(init("B", b))
    m = mk([helper.make_node("Gemm", ["x", "W", "B"], ["y"], name="fc",
                             transB=1)],
           [vi("x", [2, 3])], [vi("y", [2, 4])], inits)
    return m, blob


EXTERNAL = collections.OrderedDict()


def external(name, data_file):
    """A case whose model reads `data_file` (written next to it, unless
    None) through external data."""
    def deco(fn):
        EXTERNAL[name] = (fn, data_file)
        return fn
    return deco


@external("ext_ok", "ext_ok.bin")
def _ext_ok(r):
    # Both tensors in one file, the bias right after the weight.
    return _external_gemm(r, "ext_ok.bin", second=48)


@external("ext_big", "ext_big.bin")
def _ext_big(r):
    # A weight over the importer's decoding threshold (4096 elements): it
    # becomes a parameter straight from the mapped file. The test runs it
    # against NumPy: ext_big_x.npy in, ext_big_y.npy (float64 reference).
    w = f32(r, 64, 128)
    b = f32(r, 64)
    x = f32(r, 2, 128)
    wt = init("W", w)
    wt.ClearField("raw_data")
    wt.data_location = TensorProto.EXTERNAL
    for k, v in {"location": "ext_big.bin", "offset": "0",
                 "length": str(w.nbytes)}.items():
        e = wt.external_data.add()
        e.key, e.value = k, v
    m = mk([helper.make_node("Gemm", ["x", "W", "B"], ["y"], name="fc",
                             transB=1)],
           [vi("x", [2, 128])], [vi("y", [2, 64])], [wt, init("B", b)])
    y = x.astype(np.float64) @ w.astype(np.float64).T + b
    np.save(os.path.join(INPUTS, "ext_big_x.npy"), x)
    np.save(os.path.join(INPUTS, "ext_big_y.npy"), y.astype(np.float32))
    return m, w.tobytes()


@external("ext_missing", None)
def _ext_missing(r):
    return _external_gemm(r, "no_such_file.bin")


@external("ext_past_end", "ext_past_end.bin")
def _ext_past_end(r):
    # The file holds 40 of the 48 bytes.
    m, blob = _external_gemm(r, "ext_past_end.bin")
    return m, blob[:40]


@external("ext_escape", None)
def _ext_escape(r):
    return _external_gemm(r, "../onnx/Inputs/ext_ok.bin")


@external("ext_absolute", None)
def _ext_absolute(r):
    return _external_gemm(r, "/etc/passwd")


@external("ext_overlap", "ext_overlap.bin")
def _ext_overlap(r):
    # The bias starts inside the weight's bytes.
    return _external_gemm(r, "ext_overlap.bin", second=40)


@external("ext_length", "ext_length.bin")
def _ext_length(r):
    return _external_gemm(r, "ext_length.bin", length=44)


@case("float64_input")
def _float64_input(r):
    return mk([helper.make_node("Relu", ["x"], ["y"], name="relu")],
              [vi("x", [2, 3], TensorProto.DOUBLE)],
              [vi("y", [2, 3], TensorProto.DOUBLE)])


@case("undefined_input")
def _undefined_input(r):
    return mk([helper.make_node("Relu", ["x"], ["h"], name="relu"),
               helper.make_node("Add", ["h", "nowhere"], ["y"],
                                name="add_undefined")],
              [vi("x", [2, 3])], [vi("y", [2, 3])])


@case("gemm_rank3")
def _gemm_rank3(r):
    return mk([helper.make_node("Gemm", ["x", "w", "b"], ["y"], name="gemm3",
                                transB=1)],
              [vi("x", [2, 4, 8])], [vi("y", [2, 4, 6])],
              [init("w", f32(r, 6, 8)), init("b", f32(r, 6))])


@case("maxpool_ceil")
def _maxpool_ceil(r):
    return mk([helper.make_node("MaxPool", ["x"], ["y"], name="pool_ceil",
                                kernel_shape=[2, 2], strides=[2, 2],
                                ceil_mode=1)],
              [vi("x", [1, 2, 5, 5])], [vi("y", [1, 2, 3, 3])])


@case("pow_1_7")
def _pow_1_7(r):
    return mk([const_node("e", np.array(1.7, np.float32)),
               helper.make_node("Pow", ["x", "e"], ["y"], name="pow_odd")],
              [vi("x", [2, 3])], [vi("y", [2, 3])])


@case("unknown_shape")
def _unknown_shape(r):
    # An input without a shape at all (unknown rank).
    return mk([helper.make_node("Relu", ["pixels"], ["y"], name="relu")],
              [helper.make_tensor_value_info("pixels", F32, None)],
              [helper.make_tensor_value_info("y", F32, None)])


@case("resize_lanczos")
def _resize_lanczos(r):
    # A mode ONNX does not define (cubic imports: resize_bicubic.test).
    return mk([helper.make_node("Resize", ["x", "", "s"], ["y"], name="up",
                                mode="lanczos")],
              [vi("x", [1, 2, 4, 4])], [vi("y", [1, 2, 8, 8])],
              [init("s", np.array([1, 1, 2, 2], np.float32))])


@case("resize_runtime_scales")
def _resize_runtime_scales(r):
    # The scales are a graph input: not known when compiling.
    return mk([helper.make_node("Resize", ["x", "", "s"], ["y"], name="up")],
              [vi("x", [1, 2, 4, 4]), vi("s", [4])], [vi("y", [1, 2, 8, 8])])


@case("conv_transpose_auto_pad")
def _conv_transpose_auto_pad(r):
    return mk([helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="up",
                                auto_pad="SAME_UPPER", strides=[2, 2])],
              [vi("x", [1, 2, 4, 4])], [vi("y", [1, 3, 8, 8])],
              [init("w", f32(r, 2, 3, 3, 3))])


@case("conv_transpose_huge_stride")
def _conv_transpose_huge_stride(r):
    return mk([helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="up",
                                strides=[2**62, 1])],
              [vi("x", [1, 2, 4, 4])], [vi("y", [1, 3, 8, 8])],
              [init("w", f32(r, 2, 3, 3, 3))])


@case("conv_transpose_outpad_dilation")
def _conv_transpose_outpad_dilation(r):
    # output_padding below the dilation but not below the stride (PyTorch
    # allows it): dlc.conv2d_grad_input cannot express it, and the importer
    # built one that failed its verifier (found by test/fuzz/fuzz_onnx_importer
    # in a long run).
    return mk([helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="up",
                                strides=[1], dilations=[2],
                                output_padding=[1], pads=[2, 2])],
              [vi("x", [2, 3, 7])], [vi("y", [2, 5, 10])],
              [init("w", f32(r, 3, 5, 4))])


@case("group_norm_groups")
def _group_norm_groups(r):
    # 4 groups do not divide 6 channels.
    return mk([helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"],
                                name="gn", num_groups=4)],
              [vi("x", [2, 6, 3, 3])], [vi("y", [2, 6, 3, 3])],
              [init("s", f32(r, 4)), init("b", f32(r, 4))], opset=18)


@case("pad_huge")
def _pad_huge(r):
    # A non-zero Pad of 2^30 on each side of two dimensions: 2^62 output
    # elements (the border mask's allocation threw and aborted).
    n = helper.make_node
    big = 2**30
    return mk([const_node("pads", i64([0, 0, big, big, 0, 0, big, big])),
               const_node("value", np.array(1.5, np.float32)),
               n("Pad", ["x", "pads", "value"], ["y"], name="pad")],
              [vi("x", [1, 1, 8, 8])],
              [vi("y", [1, 1, 2 * big + 8, 2 * big + 8])])


@case("pad_big_mask")
def _pad_big_mask(r):
    # A non-zero Pad to 10008x10008: a border mask of 10^8 elements, built
    # in the importer (800 MB, found by test/fuzz/fuzz_onnx_importer).
    n = helper.make_node
    return mk([const_node("pads", i64([0, 0, 5000, 5000, 0, 0, 5000, 5000])),
               const_node("value", np.array(1.5, np.float32)),
               n("Pad", ["x", "pads", "value"], ["y"], name="pad")],
              [vi("x", [1, 1, 8, 8])], [vi("y", [1, 1, 10008, 10008])])


@case("resize_wrap")
def _resize_wrap(r):
    # Linear Resize of 2^33 positions to 2^31: the [in, out] matrix's size
    # wrapped to 0 and was written out of bounds.
    return mk([helper.make_node("Resize", ["x", "", "", "sz"], ["y"],
                                name="down", mode="linear")],
              [vi("x", [2**33])], [vi("y", [2**31])],
              [init("sz", i64([2**31]))])


@case("resize_empty")
def _resize_empty(r):
    # An empty dimension (of a constant: graph inputs have none) resized to
    # 4 (it read outside the empty matrix).
    return mk([helper.make_node("Resize", ["e", "", "", "sz"], ["r"],
                                name="up", mode="linear"),
               helper.make_node("Add", ["x", "r"], ["y"], name="add")],
              [vi("x", [1, 4])], [vi("y", [1, 4])],
              [init("e", np.zeros((1, 0), np.float32)),
               init("sz", i64([1, 4]))])


@case("norm_nan_epsilon")
def _norm_nan_epsilon(r):
    # A NaN epsilon passed the op's verifier (NaN <= 0 is false) and
    # compiled to NaN outputs.
    return mk([helper.make_node("LayerNormalization",
                                ["x", "ln.weight", "ln.bias"], ["y"],
                                name="ln", axis=-1, epsilon=float("nan"))],
              [vi("x", [2, 16])], [vi("y", [2, 16])],
              [init("ln.weight", f32(r, 16)), init("ln.bias", f32(r, 16))],
              opset=17)


@case("norm_negative_epsilon")
def _norm_negative_epsilon(r):
    # A negative epsilon reached dlc.layer_norm, whose verifier refused it
    # (found by test/fuzz/fuzz_onnx_importer).
    return mk([helper.make_node("InstanceNormalization", ["x", "s", "b"],
                                ["y"], name="inorm", epsilon=-1e-5)],
              [vi("x", [1, 2, 3, 3])], [vi("y", [1, 2, 3, 3])],
              [init("s", f32(r, 2)), init("b", f32(r, 2))])


@case("tile_int")
def _tile_int(r):
    # Tile and Expand of an integer value: their dlc.broadcast_to takes
    # floats, and its verifier refused it (found by
    # test/fuzz/fuzz_onnx_importer).
    n = helper.make_node
    return mk([const_node("reps", i64([2, 3])),
               n("Tile", ["x", "reps"], ["y"], name="tile")],
              [vi("x", [2, 3], TensorProto.INT32)],
              [vi("y", [4, 9], TensorProto.INT32)])


@case("expand_int")
def _expand_int(r):
    n = helper.make_node
    return mk([const_node("shape", i64([4, 2, 3])),
               n("Expand", ["x", "shape"], ["y"], name="expand")],
              [vi("x", [2, 3], TensorProto.INT32)],
              [vi("y", [4, 2, 3], TensorProto.INT32)])


@case("tile_overflow")
def _tile_overflow(r):
    # Repeats each below the element bound whose product is not: the
    # result's element count overflowed int64 (UBSan, found by
    # test/fuzz/fuzz_onnx_importer in a long run).
    n = helper.make_node
    return mk([const_node("reps", i64([60129542146, 257630928899])),
               n("Tile", ["x", "reps"], ["y"], name="tile")],
              [vi("x", [2, 3])], [vi("y", [2, 3])])


@case("fold_reshape_wrap")
def _fold_reshape_wrap(r):
    # A constant of 4 elements reshaped to [2^62 + 1, 4]: the product of the
    # dimensions wrapped around to 4 and the folded constant took that shape
    # (signed overflow, found by test/fuzz/fuzz_onnx_importer under UBSan).
    n = helper.make_node
    return mk([const_node("a", np.array([1, 2, 3, 4], np.float32)),
               const_node("s", i64([2**62 + 1, 4])),
               n("Reshape", ["a", "s"], ["r"], name="reshape"),
               n("Add", ["x", "r"], ["y"], name="add")],
              [vi("x", [1, 4])], [vi("y", [1, 4])])


@case("relu_int")
def _relu_int(r):
    # An integer graph input into an op that computes on floats: it reached
    # the verifier of dlc.relu (found by test/fuzz/fuzz_onnx_importer).
    return mk([helper.make_node("Relu", ["x"], ["y"], name="relu")],
              [vi("x", [2, 3], I64)], [vi("y", [2, 3], I64)])


@case("matmul_int")
def _matmul_int(r):
    # ... and into any input of a MatMul.
    return mk([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
              [vi("x", [2, 3]), vi("w", [3, 4], TensorProto.INT32)],
              [vi("y", [2, 4])])


# Loadable by onnx, rejected by dlc. The checker rejects these too:
CHECKER_FAILS = {"undefined_input", "unknown_shape"}
# ... and these are well-formed ONNX that dlc rejects on its own terms:
CHECKER_PASSES = {"unsqueeze_twice", "and_floats", "einsum", "einsum_det", "cast_to_int", "lstm", "lstm_expand", "opset9", "float64_input",
                  "gemm_rank3", "maxpool_ceil", "pow_1_7", "fold_concat_absent",
                  "fold_overflow", "conv_huge_pad", "conv_huge_dilation",
                  "resize_lanczos", "resize_runtime_scales", "conv_transpose_auto_pad",
                  "conv_transpose_huge_stride", "conv_transpose_outpad_dilation",
                  "gather_nd_runtime", "pad_huge",
                  "pad_big_mask", "resize_wrap", "resize_empty", "norm_nan_epsilon",
                  "norm_negative_epsilon", "tile_int", "expand_int",
                  "fold_reshape_wrap", "relu_int", "matmul_int", "tile_overflow"}
# ... and these use opsets newer than the onnx package that writes them
# knows (1.12: opset 17), so its checker cannot judge them:
NEWER_OPSETS = {"reducemean18", "reduce_extrema", "pad18_axes", "gelu20", "gelu17", "opset19",
                "opset21", "opset22", "group_norm_groups"}

# Raw files, not ModelProtos (written after the cases above).
RAW = ["truncated", "garbage", "empty"]


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def parses(data):
    try:
        onnx.load_from_string(data)
        return True
    except Exception:  # noqa: BLE001 - DecodeError and friends
        return False


def main():
    os.makedirs(INPUTS, exist_ok=True)
    blobs = {}
    for name, fn in CASES.items():
        m = fn(rng_for(name))
        data = m.SerializeToString()
        blobs[name] = data
        if name in NEWER_OPSETS:
            write(os.path.join(INPUTS, name + ".onnx"), data)
            print("%-18s %5d bytes  opset %d, not checked" % (
                name, len(data), m.opset_import[0].version))
            continue
        try:
            onnx.checker.check_model(m)
            ok = True
        except Exception as e:  # noqa: BLE001
            ok, why = False, str(e).splitlines()[0]
        if name in CHECKER_FAILS:
            assert not ok, "%s: the checker accepts it" % name
        elif not ok:
            sys.exit("%s: check_model: %s" % (name, why))
        if name not in CHECKER_FAILS | CHECKER_PASSES:
            # Valid models: shape inference agrees with the declared outputs.
            inf = onnx.shape_inference.infer_shapes(m, strict_mode=True)
            want = {o.name: o.type for o in m.graph.output}
            got = {o.name: o.type for o in inf.graph.output}
            assert want == got, (name, want, got)
        write(os.path.join(INPUTS, name + ".onnx"), data)
        print("%-18s %5d bytes  %s" % (
            name, len(data),
            "invalid (checker rejects)" if name in CHECKER_FAILS else
            "valid ONNX, rejected by dlc" if name in CHECKER_PASSES else
            "valid"))

    # The first half of a valid model's bytes: cut inside the initializers.
    src = blobs["gemm_transb"]
    trunc = src[: len(src) // 2]
    assert not parses(trunc), "truncated gemm_transb still parses"
    write(os.path.join(INPUTS, "truncated.onnx"), trunc)
    # Random bytes from a fixed seed; asserted not to decode.
    garbage = np.random.default_rng(1234).integers(
        0, 256, 300, dtype=np.uint8).tobytes()
    assert not parses(garbage), "the garbage decodes"
    write(os.path.join(INPUTS, "garbage.onnx"), garbage)
    # Zero bytes decode as an empty ModelProto (no graph, no opset_import).
    write(os.path.join(INPUTS, "empty.onnx"), b"")
    for name in RAW:
        print("%-18s %5d bytes  raw, not a model"
              % (name, os.path.getsize(os.path.join(INPUTS, name + ".onnx"))))
    # External data: the model and, where the case has one, its data file.
    for name, (fn, data_file) in EXTERNAL.items():
        m, blob = fn(rng_for(name))
        write(os.path.join(INPUTS, name + ".onnx"), m.SerializeToString())
        if data_file:
            write(os.path.join(INPUTS, data_file), blob)
        print("%-18s %5d bytes  external data%s" % (
            name, m.ByteSize(), " in " + data_file if data_file else ""))


if __name__ == "__main__":
    main()
