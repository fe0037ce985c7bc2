#!/usr/bin/env python3
"""Writes every engine's inputs once, into WORK/<model>/ (run by run.py with
the venv's Python; a model whose READY file is there is left as it is):

  weights.safetensors  the parameters under PyTorch's state_dict names,
                       generated with NumPy (a fixed seed per model)
  x.npy, y.npy         the batch and its label (class ids, int64, or an MSE
                       target, float32); matmul: a.npy, b.npy
  model.onnx           the graph for onnxruntime, IREE and (ResNet-18, the
                       encoder layer) dlc: built with onnx.helper for the
                       matmul and the MLPs, exported with torch.onnx.export
                       (opset 18) after loading weights.safetensors for
                       ResNet-18 and the encoder layer. The big MLP's ONNX
                       file keeps no copy of its 2.4 GB: its initializers
                       are external data that point into weights.safetensors.

    python prepare.py WORK MODEL [MODEL ...]
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import MODELS, build_torch, model_dir, write_safetensors  # noqa: E402

FORMAT = "4"   # bump when what this script writes changes


def uniform(rng, shape, bound, chunk_rows=256):
    """fill(mm) writing U(-bound, bound) float32 rows in chunks (the big
    MLP's first weight is 2.4 GB)."""
    def fill(mm):
        if len(shape) == 0:
            mm[...] = rng.uniform(-bound, bound)
            return
        for i in range(0, shape[0], chunk_rows):
            n = min(chunk_rows, shape[0] - i)
            r = rng.random((n,) + tuple(shape[1:]), dtype=np.float32)
            mm[i:i + n] = (r * 2.0 - 1.0) * np.float32(bound)
    return fill


def const(values):
    def fill(mm):
        mm[...] = values
    return fill


def mlp_specs(sizes, seed):
    """PyTorch's nn.Linear initialisation, U(-1/sqrt(in), 1/sqrt(in)), for
    weight and bias; the weights first (their byte sizes are multiples of
    4096, so each stays page-aligned in the file), then the biases."""
    rng = np.random.default_rng(seed)
    weights, biases = [], []
    for i in range(len(sizes) - 1):
        bound = 1.0 / np.sqrt(sizes[i])
        weights.append(("fc%d.weight" % (i + 1), (sizes[i + 1], sizes[i]),
                        np.float32, uniform(rng, (sizes[i + 1], sizes[i]), bound)))
        biases.append(("fc%d.bias" % (i + 1), (sizes[i + 1],), np.float32,
                       uniform(rng, (sizes[i + 1],), bound)))
    return weights + biases


def mlp_onnx(path, sizes, batch, weights_file, offsets, external):
    """x -> Gemm(transB=1) -> Relu ... -> Gemm -> logits, the .dlc model's
    graph; initializers named as the state_dict, embedded or pointing into
    the safetensors file."""
    import onnx
    from onnx import TensorProto, helper
    from common import read_safetensors
    tensors = read_safetensors(weights_file)
    inits, nodes, prev = [], [], "x"
    for i in range(len(sizes) - 1):
        w, b = "fc%d.weight" % (i + 1), "fc%d.bias" % (i + 1)
        for name in (w, b):
            a = tensors[name]
            if external:
                t = TensorProto(name=name, data_type=TensorProto.FLOAT,
                                dims=list(a.shape))
                t.data_location = TensorProto.EXTERNAL
                for k, v in (("location", os.path.basename(weights_file)),
                             ("offset", str(offsets[name])),
                             ("length", str(a.nbytes))):
                    e = t.external_data.add()
                    e.key, e.value = k, v
            else:
                t = onnx.numpy_helper.from_array(np.asarray(a), name)
            inits.append(t)
        out = "logits" if i == len(sizes) - 2 else "h%d" % (i + 1)
        gemm_out = out if i == len(sizes) - 2 else out + "_pre"
        nodes.append(helper.make_node("Gemm", [prev, w, b], [gemm_out],
                                      transB=1))
        if i < len(sizes) - 2:
            nodes.append(helper.make_node("Relu", [gemm_out], [out]))
        prev = out
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, sizes[0]])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                       [batch, sizes[-1]])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    with open(path, "wb") as f:
        f.write(model.SerializeToString())


def prepare_matmul(d, spec):
    import onnx
    from onnx import TensorProto, helper
    n = spec["n"]
    rng = np.random.default_rng(100)
    np.save(os.path.join(d, "a.npy"), rng.standard_normal((n, n), dtype=np.float32))
    np.save(os.path.join(d, "b.npy"), rng.standard_normal((n, n), dtype=np.float32))
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["c"])], "matmul",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [n, n]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [n, n])],
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, [n, n])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.save(model, os.path.join(d, "model.onnx"))


def labels(rng, spec, shape_out):
    if spec["loss"] == "mse":
        return rng.standard_normal(shape_out, dtype=np.float32)
    return rng.integers(0, shape_out[-1], shape_out[0], dtype=np.int64)


def prepare_mlp(d, name, spec):
    sizes, batch = spec["sizes"], spec["batch"]
    seed = {"toy": 1, "digits": 2, "big": 3}[name]
    wfile = os.path.join(d, "weights.safetensors")
    offsets = write_safetensors(wfile, mlp_specs(sizes, seed))
    rng = np.random.default_rng(seed + 1000)
    np.save(os.path.join(d, "x.npy"),
            rng.standard_normal((batch, sizes[0]), dtype=np.float32))
    np.save(os.path.join(d, "y.npy"), labels(rng, spec, (batch, sizes[-1])))
    mlp_onnx(os.path.join(d, "model.onnx"), sizes, batch, wfile, offsets,
             external=(name == "big"))


def numpy_state(module, rng, kind):
    """A state_dict of NumPy values for MODULE's float tensors (names and
    shapes from PyTorch), with statistics that keep activations in range."""
    state = {}
    for name, t in module.state_dict().items():
        if not t.is_floating_point():
            continue
        shape = tuple(t.shape)
        leaf = name.rsplit(".", 1)[-1]
        is_norm = ("bn" in name or "downsample.1" in name or "norm" in name)
        if leaf == "running_mean":
            v = 0.1 * rng.standard_normal(shape)
        elif leaf == "running_var":
            v = rng.uniform(0.5, 1.5, shape)
        elif is_norm and leaf == "weight":
            v = rng.uniform(0.5, 1.5, shape) if kind == "resnet18" else \
                1.0 + 0.1 * rng.standard_normal(shape)
        elif leaf.endswith("bias"):
            v = 0.05 * rng.standard_normal(shape)
        elif len(shape) == 4:                      # conv: He normal
            fan_in = shape[1] * shape[2] * shape[3]
            v = rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)
        else:                                      # linear: PyTorch's bound
            v = rng.uniform(-1, 1, shape) / np.sqrt(shape[-1])
        state[name] = np.ascontiguousarray(v, dtype=np.float32)
    return state


def export_onnx(module, x, path):
    """torch.onnx.export at opset 18 (the dynamo exporter of PyTorch 2.x;
    the TorchScript one where that fails), weights embedded."""
    import torch
    errors = []
    for dynamo in (True, False):
        try:
            kw = dict(input_names=["x"], output_names=["out"],
                      opset_version=18, dynamo=dynamo)
            if dynamo:
                kw["external_data"] = False
            torch.onnx.export(module, (x,), path, **kw)
            return "dynamo" if dynamo else "torchscript"
        except Exception as e:  # noqa: BLE001 -- try the other exporter
            errors.append("%s: %s" % ("dynamo" if dynamo else "torchscript", e))
    raise RuntimeError("torch.onnx.export failed: " + " | ".join(errors))


def prepare_torch_model(d, name, spec):
    import torch
    torch.manual_seed(0)
    module = build_torch(name, spec).eval()
    rng = np.random.default_rng({"resnet18": 4, "encoder": 5}[name])
    state = numpy_state(module, rng, name)
    write_safetensors(os.path.join(d, "weights.safetensors"),
                      [(k, v.shape, np.float32, const(v)) for k, v in state.items()],
                      align=64)
    module.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()},
                           strict=False)
    if name == "resnet18":
        x = rng.standard_normal((spec["batch"], 3, 224, 224), dtype=np.float32)
        y = rng.integers(0, 1000, spec["batch"], dtype=np.int64)
    else:
        shape = (spec["batch"], spec["seq"], spec["d_model"])
        x = rng.standard_normal(shape, dtype=np.float32)
        y = rng.standard_normal(shape, dtype=np.float32)
    np.save(os.path.join(d, "x.npy"), x)
    np.save(os.path.join(d, "y.npy"), y)
    how = export_onnx(module, torch.from_numpy(x), os.path.join(d, "model.onnx"))
    with open(os.path.join(d, "exporter.txt"), "w") as f:
        f.write(how + "\n")


def main():
    work, names = sys.argv[1], sys.argv[2:]
    for name in names:
        d = model_dir(work, name)
        ready = os.path.join(d, "READY")
        if os.path.exists(ready) and open(ready).read().strip() == FORMAT:
            continue
        os.makedirs(d, exist_ok=True)
        if os.path.exists(ready):
            os.remove(ready)
        spec = MODELS[name]
        print("prepare: writing %s" % d, file=sys.stderr, flush=True)
        if spec["kind"] == "matmul":
            prepare_matmul(d, spec)
        elif spec["kind"] == "mlp":
            prepare_mlp(d, name, spec)
        else:
            prepare_torch_model(d, name, spec)
        with open(ready, "w") as f:
            f.write(FORMAT + "\n")


if __name__ == "__main__":
    main()
