"""What bench/peers runs: the models, the workloads (rows), the engines
(columns), which engine can run which row, and small helpers shared by
prepare.py, worker.py and run.py. Imports nothing beyond NumPy and the
standard library, so that each engine's process loads only its framework.
"""
import json
import os
import statistics
import struct
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))

# Models. "mlp" models have a .dlc file in examples/ and PyTorch state_dict
# names fc1.weight, fc1.bias, ...; "onnx" models are exported from PyTorch
# once by prepare.py and run from that file by dlc, onnxruntime and IREE.
MODELS = {
    "matmul": dict(kind="matmul", dlc="examples/matmul.dlc", n=1024),
    "toy": dict(kind="mlp", dlc="examples/toy.dlc", sizes=[10, 32, 1],
                batch=16, loss="mse"),
    "digits": dict(kind="mlp", dlc="examples/digits.dlc", sizes=[784, 256, 10],
                   batch=64, loss="cross_entropy"),
    "big": dict(kind="mlp", dlc="examples/big_mlp.dlc",
                sizes=[150528, 4096, 4096, 1000], batch=64,
                loss="cross_entropy"),
    "resnet18": dict(kind="resnet18", batch=8, loss="cross_entropy"),
    # nn.TransformerEncoderLayer(256, 4, dropout=0.0, batch_first=True)
    # (post-norm, ReLU, feed-forward 2048, PyTorch's defaults) on
    # [8, 128, 256]; trained on MSE against a random target.
    "encoder": dict(kind="encoder", batch=8, seq=128, d_model=256, heads=4,
                    ffn=2048, loss="mse"),
}

LR = 1e-3          # Adam(lr=1e-3), PyTorch's betas (0.9, 0.999) and eps 1e-8
CHECK_STEPS = 3    # training rows are checked on the losses of 3 steps

# The rows, in table order. reps: timed calls at full length (--reps-scale
# scales them); big: only with --big.
WORKLOADS = [
    dict(id="matmul", model="matmul", mode="forward", prec="fp32", reps=50,
         label="matmul 1024³ fp32"),
    dict(id="digits_fwd", model="digits", mode="forward", prec="fp32", reps=500,
         label="digits MLP forward (64)"),
    dict(id="big_fwd", model="big", mode="forward", prec="fp32", reps=5,
         label="big MLP forward (64)"),
    dict(id="toy_step", model="toy", mode="train", prec="fp32", reps=2000,
         label="toy Adam step (16)"),
    dict(id="digits_step", model="digits", mode="train", prec="fp32", reps=300,
         label="digits Adam step (64)"),
    dict(id="big_step", model="big", mode="train", prec="fp32", reps=3,
         big=True, label="big MLP Adam step (64)"),
    dict(id="resnet18_fwd", model="resnet18", mode="forward", prec="fp32",
         reps=10, label="ResNet-18 forward (8)"),
    dict(id="encoder_fwd", model="encoder", mode="forward", prec="fp32",
         reps=50, label="encoder layer forward (8x128)"),
    dict(id="encoder_step", model="encoder", mode="train", prec="fp32",
         reps=20, label="encoder layer Adam step (8x128)"),
    dict(id="big_fwd_bf16", model="big", mode="forward", prec="bf16", reps=5,
         label="big MLP forward bf16 (64)"),
    dict(id="digits_step_bf16", model="digits", mode="train", prec="bf16",
         reps=300, label="digits Adam step bf16 (64)"),
]
WORKLOAD = {w["id"]: w for w in WORKLOADS}

ENGINES = ["dlc", "torch", "torch_compile", "ort", "jax", "iree"]
ENGINE_LABEL = {"dlc": "dlc", "torch": "PyTorch eager",
                "torch_compile": "torch.compile", "ort": "onnxruntime",
                "jax": "JAX jit", "iree": "IREE"}

# Largest max relative difference against the reference that still counts
# as the same result.
TOLERANCE = {"fp32": 1e-4, "bf16": 5e-2}


def unsupported(engine, w):
    """Why ENGINE cannot run workload W, or None when it can."""
    if engine == "ort":
        if w["mode"] == "train":
            return ("onnxruntime (the inference package) has no training; "
                    "onnxruntime-training is a separate, discontinued build")
        if w["prec"] == "bf16":
            return ("onnxruntime runs the fp32 graph as exported; it has no "
                    "autocast to bf16")
    return None


def reference_engine(available):
    """The engine whose outputs the others are compared with."""
    for e in ("torch", "dlc", "jax"):
        if e in available:
            return e
    return available[0] if available else None


def build_torch(name, spec):
    """The PyTorch module of an "mlp", "resnet18" or "encoder" model, its
    parameters named as in weights.safetensors (initial values are
    replaced by load_state_dict)."""
    import collections
    import torch.nn as nn
    if spec["kind"] == "mlp":
        layers, sizes = [], spec["sizes"]
        for i in range(len(sizes) - 1):
            layers.append(("fc%d" % (i + 1), nn.Linear(sizes[i], sizes[i + 1])))
            if i < len(sizes) - 2:
                layers.append(("relu%d" % (i + 1), nn.ReLU()))
        return nn.Sequential(collections.OrderedDict(layers))
    if name == "resnet18":
        import torchvision
        return torchvision.models.resnet18(weights=None)
    return nn.TransformerEncoderLayer(spec["d_model"], spec["heads"],
                                      dim_feedforward=spec["ffn"], dropout=0.0,
                                      batch_first=True)


def model_dir(work, model):
    return os.path.join(work, model)


def time_calls(fn, reps, warmup):
    """Per-call times in ms of REPS calls of FN after WARMUP calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return times


def summary(times):
    return {"min_ms": min(times), "median_ms": statistics.median(times),
            "reps": len(times)}


def max_rel_diff(a, ref):
    """max |a - ref| / max |ref|: the scaled error of bench/onnx_inference.py
    (relative to the largest reference value, so that values near zero do
    not dominate)."""
    a = np.asarray(a, np.float64)
    ref = np.asarray(ref, np.float64)
    if a.shape != ref.shape:
        return float("inf")
    scale = float(np.max(np.abs(ref))) if ref.size else 0.0
    return float(np.max(np.abs(a - ref))) / max(scale, 1e-30)


def loss_rel_diff(a, ref):
    a = np.asarray(a, np.float64)
    ref = np.asarray(ref, np.float64)
    if a.shape != ref.shape:
        return float("inf")
    return float(np.max(np.abs(a - ref) / np.maximum(np.abs(ref), 1e-30)))


# --- safetensors, written by hand so that a 2.4 GB tensor can be streamed ---

def write_safetensors(path, specs, align=4096):
    """SPECS: list of (name, shape, dtype, fill) in file order, where
    fill(mm) writes the tensor's values into the writable memmap MM. The
    data section starts at a multiple of ALIGN (the header is padded with
    spaces, as the format allows), so an ONNX external-data reference into
    the file is page-aligned for every tensor whose predecessors' sizes are
    multiples of the page. Returns {name: absolute byte offset}."""
    codes = {np.dtype(np.float32): "F32", np.dtype(np.int64): "I64"}
    header, offset = {}, 0
    for name, shape, dtype, _ in specs:
        nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        header[name] = {"dtype": codes[np.dtype(dtype)], "shape": list(shape),
                        "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-(8 + len(h)) % align)
    base = 8 + len(h)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        f.truncate(base + offset)
    offsets = {}
    for name, shape, dtype, fill in specs:
        start = base + header[name]["data_offsets"][0]
        offsets[name] = start
        mm = np.memmap(path, dtype=dtype, mode="r+", offset=start,
                       shape=tuple(shape))
        fill(mm)
        mm.flush()
        del mm
    return offsets


def read_safetensors(path):
    """{name: read-only memmap} of a safetensors file (F32, I64, BF16 as
    uint16), without reading the data."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
    types = {"F32": np.float32, "I64": np.int64, "BF16": np.uint16,
             "I32": np.int32, "F16": np.float16}
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        dtype = types[info["dtype"]]
        if b == a:
            out[name] = np.zeros(info["shape"], dtype)
            continue
        out[name] = np.memmap(path, dtype=dtype, mode="r", offset=8 + n + a,
                              shape=tuple(info["shape"]))
    return out
