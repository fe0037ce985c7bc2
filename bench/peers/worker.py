#!/usr/bin/env python3
"""One engine on one workload, in its own process (run.py starts one per
engine x workload x thread count, pinned with taskset):

    python worker.py ENGINE WORKLOAD --work DIR --threads N --reps R
        --warmup W --result OUT.json --check OUT.npz [--dlc PATH]

It loads the inputs and weights that prepare.py wrote, computes the row's
result once for the cross-check (forward: the output; training: the loss
of each of the first 3 Adam steps and, for the toy and digits MLPs, the
weights after them) into OUT.npz, then times WARMUP + REPS calls and writes
{"min_ms", "median_ms", "reps", "version", "note"} to OUT.json. An engine
that cannot run the row writes {"status": "n/a", "reason"}; anything else
that goes wrong exits non-zero and run.py shows the error.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (CHECK_STEPS, LR, MODELS, ROOT, WORKLOAD, build_torch,  # noqa: E402
                    model_dir, read_safetensors, summary, time_calls,
                    unsupported)


class NotAvailable(Exception):
    """The engine cannot run this workload; the message says why."""


# Peak memory of a row as a multiple of its weights' size: a forward pass
# holds the weights and a copy being loaded; a step the weights, gradients
# and Adam's two moments, and IREE's step (a function returning new weights
# and moments) inputs and outputs of each.
MEMORY_FACTOR = {"forward": 2.5, "train": 4.5, "iree-train": 8.0}


def memory_guard(engine, w, d):
    """Refuses a row that would not fit the memory available now (the big
    MLP), rather than let the kernel's OOM killer choose a process."""
    wfile = os.path.join(d, "weights.safetensors")
    if not os.path.exists(wfile):
        return
    key = "iree-train" if engine == "iree" and w["mode"] == "train" else w["mode"]
    need = os.path.getsize(wfile) * MEMORY_FACTOR[key] + (1 << 30)
    try:
        with open("/proc/meminfo") as f:
            info = dict(line.split(":", 1) for line in f)
        avail = int(info["MemAvailable"].split()[0]) * 1024
    except (OSError, KeyError, ValueError):
        return
    if need > avail:
        raise RuntimeError("not enough memory: needs about %.1f GB, %.1f GB "
                           "available" % (need / 1e9, avail / 1e9))


def load_inputs(d, spec):
    if spec["kind"] == "matmul":
        return {"a": np.load(os.path.join(d, "a.npy")),
                "b": np.load(os.path.join(d, "b.npy"))}
    return {"x": np.load(os.path.join(d, "x.npy")),
            "y": np.load(os.path.join(d, "y.npy"))}


def load_weights(d, copy=True):
    """The parameters, as writable copies, or (COPY false) read-only maps of
    the file for an engine that copies them into its own buffers."""
    m = read_safetensors(os.path.join(d, "weights.safetensors"))
    return {k: np.array(v) for k, v in m.items()} if copy else m


def check_params(spec):
    """Whether the training check also compares the weights (small models)."""
    return spec["kind"] == "mlp" and spec["sizes"][0] < 10000


# --------------------------------------------------------------------- dlc

def run_dlc(args, w, spec, d):
    dlc = args.dlc
    rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True).stdout.strip()
    version = "git " + (rev or "?")
    onnx_model = spec["kind"] in ("resnet18", "encoder")
    model = os.path.join(d, "model.onnx") if onnx_model else \
        os.path.join(ROOT, MODELS[w["model"]]["dlc"])
    base = [dlc, "run", model]
    if w["prec"] != "fp32":
        base.append("--precision=" + w["prec"])
    if spec["kind"] == "matmul":
        feeds = ["--input", "a=" + os.path.join(d, "a.npy"),
                 "--input", "b=" + os.path.join(d, "b.npy")]
    else:
        feeds = ["--input", "x=" + os.path.join(d, "x.npy")]
        if w["mode"] == "train":
            feeds += ["--input", "y=" + os.path.join(d, "y.npy")]
        if not onnx_model:
            feeds += ["--weights", os.path.join(d, "weights.safetensors")]
    if w["mode"] == "train":
        base.append("--train")
        if onnx_model:
            base += ["--loss", spec["loss"], "--optimizer", "adam",
                     "--lr", repr(LR)]
    env = dict(os.environ, DLC_NUM_THREADS=str(args.threads))

    def run(extra):
        p = subprocess.run(base + feeds + extra, env=env, capture_output=True,
                           text=True)
        if p.returncode != 0:
            raise RuntimeError("dlc run failed: " + (p.stderr or p.stdout).strip()[-800:])
        return p.stdout

    with tempfile.TemporaryDirectory() as tmp:
        check = {}
        if w["mode"] == "forward":
            out = os.path.join(tmp, "out.npy")
            name = "c" if spec["kind"] == "matmul" else \
                ("out" if onnx_model else "logits")
            text = run(["--output", name + "=" + out,
                        "--benchmark", str(args.reps)])
            check["out"] = np.load(out)
        else:
            ckpt = os.path.join(tmp, "ckpt.safetensors")
            extra = ["--steps", str(CHECK_STEPS), "--print-loss"]
            if check_params(spec):
                extra += ["--save", ckpt]
            text = run(extra)
            check["losses"] = np.array(
                [float(v) for v in re.findall(r"step \d+ loss (\S+)", text)])
            if check_params(spec):
                for k, v in read_safetensors(ckpt).items():
                    if not k.startswith("optimizer."):
                        check["param:" + k] = np.array(v)
            text = run(["--benchmark", str(args.reps)])
        m = re.search(r"min ([0-9.]+) ms, median ([0-9.]+) ms", text)
        if not m:
            raise RuntimeError("no benchmark line in dlc's output: " + text[-400:])
    res = {"min_ms": float(m.group(1)), "median_ms": float(m.group(2)),
           "reps": args.reps, "version": version,
           "note": "timed in-process by `dlc run --benchmark`"}
    return res, check


# ------------------------------------------------------------------- torch

def run_torch(args, w, spec, d, compiled):
    import contextlib
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(args.threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    torch.manual_seed(0)
    inputs = load_inputs(d, spec)
    if w["prec"] == "bf16":
        def autocast():
            return torch.autocast("cpu", dtype=torch.bfloat16)
    else:
        autocast = contextlib.nullcontext
    note = "torch.compile (inductor, default mode)" if compiled else "eager"
    check = {}
    if spec["kind"] == "matmul":
        a, b = torch.from_numpy(inputs["a"]), torch.from_numpy(inputs["b"])
        fn = torch.compile(torch.mm) if compiled else torch.mm
        call = lambda: fn(a, b)  # noqa: E731
        check["out"] = call().numpy()
        times = time_calls(call, args.reps, args.warmup)
        return dict(summary(times), version=torch.__version__, note=note), check

    state = {k: torch.from_numpy(v) for k, v in load_weights(d).items()}
    if spec["kind"] == "mlp":
        # No initialisation of the big MLP's 637M parameters that the
        # loaded ones would replace: build on the meta device, then assign.
        with torch.device("meta"):
            model = build_torch(w["model"], spec)
        missing, unexpected = model.load_state_dict(state, strict=False,
                                                    assign=True)
    else:
        model = build_torch(w["model"], spec)
        missing, unexpected = model.load_state_dict(state, strict=False)
    missing = [k for k in missing if not k.endswith("num_batches_tracked")]
    if missing or unexpected:
        raise RuntimeError("state_dict mismatch: missing %s, unexpected %s"
                           % (missing, unexpected))
    del state
    x = torch.from_numpy(inputs["x"])
    y = torch.from_numpy(inputs["y"])

    if w["mode"] == "forward":
        model.eval()
        fwd = torch.compile(model) if compiled else model

        def call():
            with torch.no_grad(), autocast():
                return fwd(x)
        check["out"] = call().float().numpy()
        times = time_calls(call, args.reps, args.warmup)
    else:
        model.train()
        loss_fn = F.mse_loss if spec["loss"] == "mse" else F.cross_entropy
        opt = torch.optim.Adam(model.parameters(), lr=LR)

        def forward_loss(x, y):
            with autocast():
                return loss_fn(model(x), y)
        if compiled:
            forward_loss = torch.compile(forward_loss)

            @torch.compile(fullgraph=False)
            def opt_step():
                opt.step()
        else:
            opt_step = opt.step

        def call():
            opt.zero_grad(set_to_none=True)
            loss = forward_loss(x, y)
            loss.backward()
            opt_step()
            return loss.item()
        check["losses"] = np.array([call() for _ in range(CHECK_STEPS)])
        if check_params(spec):
            for k, v in model.state_dict().items():
                check["param:" + k] = v.detach().numpy().copy()
        times = time_calls(call, args.reps, args.warmup)
    return dict(summary(times), version=torch.__version__, note=note), check


# --------------------------------------------------------------------- ort

def run_ort(args, w, spec, d):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(os.path.join(d, "model.onnx"), so,
                                providers=["CPUExecutionProvider"])
    inputs = load_inputs(d, spec)
    names = [i.name for i in sess.get_inputs()]
    feeds = {n: inputs[n] for n in names}
    check = {"out": sess.run(None, feeds)[0]}
    times = time_calls(lambda: sess.run(None, feeds), args.reps, args.warmup)
    return dict(summary(times), version=ort.__version__,
                note="InferenceSession, CPU provider, ORT_ENABLE_ALL"), check


# --------------------------------------------------------------------- jax

def jax_model(w, spec):
    """(forward(params, x), loss(params, x, y)) in JAX for the row's model,
    the same computation as the PyTorch module; bf16 casts the operands of
    every matmul to bfloat16 and accumulates in fp32 (autocast's rule)."""
    import jax
    import jax.numpy as jnp
    from jax import lax
    bf16 = w["prec"] == "bf16"

    def linear(h, wt, b):
        if bf16:
            out = jnp.matmul(h.astype(jnp.bfloat16), wt.T.astype(jnp.bfloat16),
                             preferred_element_type=jnp.float32)
        else:
            out = jnp.matmul(h, wt.T)
        return out + b

    kind = spec["kind"]
    if kind == "mlp":
        n = len(spec["sizes"]) - 1

        def forward(p, x):
            h = x
            for i in range(1, n + 1):
                h = linear(h, p["fc%d.weight" % i], p["fc%d.bias" % i])
                if i < n:
                    h = jax.nn.relu(h)
            return h
    elif kind == "resnet18":
        def conv(x, wt, stride, pad):
            return lax.conv_general_dilated(
                x, wt, (stride, stride), [(pad, pad), (pad, pad)],
                dimension_numbers=("NCHW", "OIHW", "NCHW"))

        def bn(p, name, x):
            scale = p[name + ".weight"] / jnp.sqrt(p[name + ".running_var"] + 1e-5)
            shift = p[name + ".bias"] - p[name + ".running_mean"] * scale
            return x * scale[None, :, None, None] + shift[None, :, None, None]

        def forward(p, x):
            h = jax.nn.relu(bn(p, "bn1", conv(x, p["conv1.weight"], 2, 3)))
            h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 1, 3, 3),
                                  (1, 1, 2, 2), ((0, 0), (0, 0), (1, 1), (1, 1)))
            for layer in range(1, 5):
                for blk in range(2):
                    pre = "layer%d.%d." % (layer, blk)
                    stride = 2 if layer > 1 and blk == 0 else 1
                    out = jax.nn.relu(bn(p, pre + "bn1",
                                         conv(h, p[pre + "conv1.weight"], stride, 1)))
                    out = bn(p, pre + "bn2", conv(out, p[pre + "conv2.weight"], 1, 1))
                    if pre + "downsample.0.weight" in p:
                        h = bn(p, pre + "downsample.1",
                               conv(h, p[pre + "downsample.0.weight"], stride, 0))
                    h = jax.nn.relu(out + h)
            h = jnp.mean(h, axis=(2, 3))
            return linear(h, p["fc.weight"], p["fc.bias"])
    else:   # nn.TransformerEncoderLayer, post-norm, ReLU, no dropout
        heads, dm = spec["heads"], spec["d_model"]

        def layer_norm(p, name, x):
            mu = jnp.mean(x, -1, keepdims=True)
            var = jnp.mean(jnp.square(x - mu), -1, keepdims=True)
            return (x - mu) / jnp.sqrt(var + 1e-5) * p[name + ".weight"] + p[name + ".bias"]

        def forward(p, x):
            B, S, _ = x.shape
            qkv = linear(x, p["self_attn.in_proj_weight"], p["self_attn.in_proj_bias"])
            q, k, v = jnp.split(qkv, 3, axis=-1)
            split = lambda t: t.reshape(B, S, heads, dm // heads).transpose(0, 2, 1, 3)  # noqa: E731
            q, k, v = split(q), split(k), split(v)
            s = jnp.einsum("bhqd,bhkd->bhqk", q, k) / jnp.sqrt(jnp.float32(dm // heads))
            a = jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(s, axis=-1), v)
            a = a.transpose(0, 2, 1, 3).reshape(B, S, dm)
            a = linear(a, p["self_attn.out_proj.weight"], p["self_attn.out_proj.bias"])
            h = layer_norm(p, "norm1", x + a)
            f = linear(jax.nn.relu(linear(h, p["linear1.weight"], p["linear1.bias"])),
                       p["linear2.weight"], p["linear2.bias"])
            return layer_norm(p, "norm2", h + f)

    def loss(p, x, y):
        out = forward(p, x).astype(jnp.float32)
        if spec["loss"] == "mse":
            return jnp.mean(jnp.square(out - y))
        logp = jax.nn.log_softmax(out, axis=-1)
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=-1))
    return forward, loss


def jax_adam_step(loss, trained):
    """step(params, m, v, t, x, y) -> (params, m, v, loss): one step of
    torch.optim.Adam (lr 1e-3, betas 0.9/0.999, eps 1e-8, its bias
    correction) on the parameters named in TRAINED; the others (batch
    norm's statistics) are passed through."""
    import jax
    import jax.numpy as jnp
    b1, b2, eps = 0.9, 0.999, 1e-8

    def step(params, m, v, t, x, y):
        def f(tp):
            return loss(dict(params, **tp), x, y)
        tp = {k: params[k] for k in trained}
        value, g = jax.value_and_grad(f)(tp)
        bc1 = 1.0 - b1 ** t
        bc2 = 1.0 - b2 ** t
        new_p, new_m, new_v = dict(params), {}, {}
        for k in trained:
            new_m[k] = b1 * m[k] + (1.0 - b1) * g[k]
            new_v[k] = b2 * v[k] + (1.0 - b2) * jnp.square(g[k])
            denom = jnp.sqrt(new_v[k]) / jnp.sqrt(bc2) + eps
            new_p[k] = params[k] - (LR / bc1) * new_m[k] / denom
        return new_p, new_m, new_v, value
    return step


def trained_names(params):
    return sorted(k for k in params if not k.endswith(("running_mean", "running_var")))


def run_jax(args, w, spec, d):
    import jax
    import jax.numpy as jnp
    inputs = load_inputs(d, spec)
    check = {}
    version = jax.__version__
    if spec["kind"] == "matmul":
        f = jax.jit(jnp.matmul)
        a, b = jnp.asarray(inputs["a"]), jnp.asarray(inputs["b"])
        check["out"] = np.asarray(f(a, b))
        times = time_calls(lambda: f(a, b).block_until_ready(), args.reps, args.warmup)
        return dict(summary(times), version=version, note="jax.jit"), check
    params = {k: jnp.asarray(v) for k, v in load_weights(d, copy=False).items()}
    x, y = jnp.asarray(inputs["x"]), jnp.asarray(inputs["y"])
    forward, loss = jax_model(w, spec)
    if w["mode"] == "forward":
        f = jax.jit(forward)
        check["out"] = np.asarray(f(params, x).astype(jnp.float32))
        times = time_calls(lambda: f(params, x).block_until_ready(),
                           args.reps, args.warmup)
        return dict(summary(times), version=version, note="jax.jit"), check
    trained = trained_names(params)
    step = jax.jit(jax_adam_step(loss, trained), donate_argnums=(0, 1, 2))
    state = {"p": params,
             "m": {k: jnp.zeros_like(params[k]) for k in trained},
             "v": {k: jnp.zeros_like(params[k]) for k in trained}, "t": 0}

    def call():
        state["t"] += 1
        p, m, v, value = step(state["p"], state["m"], state["v"],
                              jnp.float32(state["t"]), x, y)
        state.update(p=p, m=m, v=v)
        return float(value)
    check["losses"] = np.array([call() for _ in range(CHECK_STEPS)])
    if check_params(spec):
        for k, v in state["p"].items():
            check["param:" + k] = np.asarray(v)
    times = time_calls(call, args.reps, args.warmup)
    return dict(summary(times), version=version,
                note="jax.jit of the whole step, buffers donated"), check


# -------------------------------------------------------------------- iree

# --iree-opt-data-tiling packs matmul operands into the kernels' tiles (off
# by default in 3.13: 2.3x on the 1024^3 matmul here).
IREE_COMPILE_FLAGS = ["--iree-hal-target-device=local",
                      "--iree-hal-local-target-device-backends=llvm-cpu",
                      "--iree-llvmcpu-target-cpu=host",
                      "--iree-opt-data-tiling"]


def iree_tool(name):
    exe = os.path.join(os.path.dirname(sys.executable), name)
    return exe if os.path.exists(exe) else name


def iree_compile(src, vmfb, extra=()):
    """Compiles SRC into VMFB (once: later runs reuse it); where data
    tiling makes iree-compile fail, compiles without it and says so in
    VMFB.note. Returns that note ("" normally)."""
    if os.path.exists(vmfb):
        note = vmfb + ".note"
        return open(note).read() if os.path.exists(note) else ""
    note = ""
    for flags in (IREE_COMPILE_FLAGS,
                  [f for f in IREE_COMPILE_FLAGS if f != "--iree-opt-data-tiling"]):
        p = subprocess.run([iree_tool("iree-compile"), src] + flags + list(extra)
                           + ["-o", vmfb + ".tmp"], capture_output=True, text=True)
        if p.returncode == 0:
            break
        err = [ln for ln in p.stderr.splitlines() if "error:" in ln]
        first = (err[0].split("error:", 1)[1].strip() if err
                 else p.stderr.strip()[-300:])
        if flags is IREE_COMPILE_FLAGS:
            note = "compiled without --iree-opt-data-tiling, which fails (%s)" % first[:160]
        else:
            raise RuntimeError("iree-compile failed: " + first[:300])
    os.replace(vmfb + ".tmp", vmfb)
    if note:
        with open(vmfb + ".note", "w") as f:
            f.write(note)
    return note


def run_iree(args, w, spec, d, cache):
    import iree.runtime as rt
    try:
        from iree.compiler import version as cv
        version = cv.VERSION
    except Exception:  # noqa: BLE001 -- the version is informative only
        import importlib.metadata as md
        version = md.version("iree-base-compiler")
    rt.flags.parse_flags("--task_topology_max_group_count=%d" % args.threads)
    config = rt.Config("local-task")
    dev = config.device
    inputs = load_inputs(d, spec)
    check = {}
    import hashlib
    cache = os.path.join(cache, hashlib.sha1(
        " ".join(IREE_COMPILE_FLAGS + [version]).encode()).hexdigest()[:10])
    os.makedirs(cache, exist_ok=True)
    use_onnx = w["mode"] == "forward" and w["prec"] == "fp32"
    if use_onnx:
        # The ONNX file, imported by iree-import-onnx and compiled once. The
        # weights are constants in the module, but for the big MLP's 2.4 GB,
        # which are named parameters that the runtime reads from
        # weights.safetensors (IREE's parameter index reads safetensors).
        external = spec["kind"] == "mlp" and spec["sizes"][0] >= 10000
        vmfb = os.path.join(cache, w["id"] + ".vmfb")
        compile_note = ""
        if not os.path.exists(vmfb):
            mlir = os.path.join(cache, w["id"] + ".mlir")
            cmd = [iree_tool("iree-import-onnx"), os.path.join(d, "model.onnx"),
                   "-o", mlir]
            if external:
                cmd += ["--externalize-params", "--no-save-params",
                        "--num-elements-threshold", "0", "--large-model"]
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode != 0:
                raise RuntimeError("iree-import-onnx failed: " + p.stderr.strip()[-800:])
            compile_note = iree_compile(mlir, vmfb)
            os.remove(mlir)
        else:
            compile_note = iree_compile(None, vmfb)
        modules = []
        if external:
            idx = rt.ParameterIndex()
            idx.load(os.path.join(d, "weights.safetensors"))
            modules.append(rt.create_io_parameters_module(
                config.vm_instance, idx.create_provider(scope="model")))
        modules.append(rt.VmModule.mmap(config.vm_instance, vmfb))
        ctx = rt.SystemContext(vm_modules=modules, config=config)
        fn_name = [f for f in ctx.modules.module.vm_module.function_names
                   if not f.startswith("__") and "$" not in f][0]
        f = ctx.modules.module[fn_name]
        order = ["a", "b"] if spec["kind"] == "matmul" else ["x"]
        dargs = [rt.asdevicearray(dev, inputs[n]) for n in order]
        check["out"] = f(*dargs).to_host()
        times = time_calls(lambda: f(*dargs), args.reps, args.warmup)
        return dict(summary(times), version=version,
                    note="ONNX via iree-import-onnx, llvm-cpu, local-task",
                    compile_note=compile_note), check

    # Training and bf16 rows: no ONNX graph says what to do, so IREE runs
    # the JAX step (or forward pass) of worker.jax_model, lowered by JAX to
    # StableHLO and compiled by iree-compile (--iree-input-type=stablehlo).
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import jax.numpy as jnp
    params = load_weights(d, copy=False)
    forward, loss = jax_model(w, spec)
    x, y = inputs["x"], inputs["y"]
    if y.dtype == np.int64 and not jax.config.jax_enable_x64:
        y = y.astype(np.int32)      # what jax.numpy makes of int64 labels
    if w["mode"] == "forward":
        fn, example = forward, (params, x)
    else:
        trained = trained_names(params)
        zeros = {k: np.zeros(params[k].shape, np.float32) for k in trained}
        fn = jax_adam_step(loss, trained)
        example = (params, zeros, zeros, np.float32(1), x, y)
    flat, _ = jax.tree_util.tree_flatten(example)
    vmfb = os.path.join(cache, w["id"] + ".stablehlo.vmfb")
    compile_note = iree_compile(None, vmfb) if os.path.exists(vmfb) else None
    if compile_note is None:
        spec_args = jax.tree_util.tree_map(
            lambda a: jax.ShapeDtypeStruct(np.shape(a), np.asarray(a).dtype), example)
        text = jax.jit(fn, keep_unused=True).lower(*spec_args).as_text()
        mlir = os.path.join(cache, w["id"] + ".stablehlo.mlir")
        with open(mlir, "w") as fh:
            fh.write(text)
        compile_note = iree_compile(mlir, vmfb, ["--iree-input-type=stablehlo"])
    del jnp
    ctx = rt.SystemContext(vm_modules=[rt.VmModule.mmap(config.vm_instance, vmfb)],
                           config=config)
    mod_name = [k for k in ctx.modules.keys() if k != "hal"][0]
    f = ctx.modules[mod_name]["main"]
    dflat = [rt.asdevicearray(dev, np.asarray(a)) for a in flat]
    note = "JAX's step lowered to StableHLO, iree-compile llvm-cpu, local-task"
    if w["mode"] == "forward":
        check["out"] = np.asarray(f(*dflat).to_host(), np.float32)
        times = time_calls(lambda: f(*dflat), args.reps, args.warmup)
        return dict(summary(times), version=version,
                    note=note.replace("step", "forward pass"),
                    compile_note=compile_note), check
    n_p, n_t = len(params), len(trained)
    # flat = params (sorted), m, v, t, x, y; results = params, m, v, loss
    state = {"p": dflat[:n_p], "m": dflat[n_p:n_p + n_t],
             "v": dflat[n_p + n_t:n_p + 2 * n_t], "t": 0}
    xy = dflat[n_p + 2 * n_t + 1:]

    def call():
        state["t"] += 1
        t = rt.asdevicearray(dev, np.float32(state["t"]))
        out = f(*state["p"], *state["m"], *state["v"], t, *xy)
        state["p"] = list(out[:n_p])
        state["m"] = list(out[n_p:n_p + n_t])
        state["v"] = list(out[n_p + n_t:n_p + 2 * n_t])
        return float(out[-1].to_host())
    check["losses"] = np.array([call() for _ in range(CHECK_STEPS)])
    if check_params(spec):
        for k, a in zip(sorted(params), state["p"]):
            check["param:" + k] = a.to_host()
    times = time_calls(call, args.reps, args.warmup)
    return dict(summary(times), version=version, note=note,
                compile_note=compile_note), check


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("engine")
    ap.add_argument("workload")
    ap.add_argument("--work", required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--result", required=True)
    ap.add_argument("--check", required=True)
    ap.add_argument("--dlc", default=os.path.join(ROOT, "build", "bin", "dlc"))
    args = ap.parse_args()
    w = WORKLOAD[args.workload]
    spec = MODELS[w["model"]]
    d = model_dir(args.work, w["model"])
    try:
        reason = unsupported(args.engine, w)
        if reason:
            raise NotAvailable(reason)
        memory_guard(args.engine, w, d)
        if args.engine == "dlc":
            res, check = run_dlc(args, w, spec, d)
        elif args.engine in ("torch", "torch_compile"):
            try:
                import torch  # noqa: F401
            except ImportError as e:
                raise NotAvailable("PyTorch is not installed (%s)" % e)
            res, check = run_torch(args, w, spec, d, args.engine == "torch_compile")
        elif args.engine == "ort":
            try:
                import onnxruntime  # noqa: F401
            except ImportError as e:
                raise NotAvailable("onnxruntime is not installed (%s)" % e)
            res, check = run_ort(args, w, spec, d)
        elif args.engine == "jax":
            try:
                import jax  # noqa: F401
            except ImportError as e:
                raise NotAvailable("JAX is not installed (%s)" % e)
            res, check = run_jax(args, w, spec, d)
        elif args.engine == "iree":
            try:
                import iree.runtime  # noqa: F401
            except ImportError as e:
                raise NotAvailable("iree-base-runtime is not installed (%s)" % e)
            res, check = run_iree(args, w, spec, d,
                                  os.path.join(args.work, "iree-cache"))
        else:
            raise SystemExit("unknown engine " + args.engine)
    except NotAvailable as e:
        with open(args.result, "w") as f:
            json.dump({"status": "n/a", "reason": str(e)}, f)
        return
    res["status"] = "ok"
    np.savez(args.check, **check)
    with open(args.result, "w") as f:
        json.dump(res, f)


if __name__ == "__main__":
    main()
