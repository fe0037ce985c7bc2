#!/usr/bin/env python3
"""The PyTorch side of the GPU benchmarks (bench/gpu/run.py): the same
training steps as the bundle's models, eager and with torch.compile, and the
big MLP's GEMMs alone (what cuBLASLt reaches for them through torch.matmul).

  torch_steps.py [--device cuda|cpu] [--models a,b] [--runs N]

Each step is timed like step_bench times dlc's, in each of MODES: inputs
copied from the host, forward, loss, backward, optimizer step, the loss
copied back (one sync); and again with the batch on the device already
(the mode's name with -resident, to set beside dlc's entry alone). Prints one
`torch: MODEL MODE: min X us, median Y us` line per measurement; without
PyTorch, one `torch: not run: ...` line (and exit status 0: the report's
PyTorch cells are then empty)."""
import argparse
import contextlib
import statistics
import sys
import time

try:
    import torch
    import torch.nn as nn
except ImportError as e:
    print("torch: not run: PyTorch is not installed (%s)" % e)
    sys.exit(0)

# name -> (layer sizes, batch, loss, autocast dtype or None)
MODELS = {
    "digits": ([784, 256, 10], 64, "ce", None),
    "toy": ([10, 32, 1], 16, "mse", None),
    "big_mlp_bf16": ([150528, 4096, 4096, 1000], 256, "ce", torch.bfloat16),
    "big_mlp_bf16_b8192": ([150528, 4096, 4096, 1000], 8192, "ce",
                           torch.bfloat16),
}


def mlp(sizes):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i + 2 < len(sizes):
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def timed(fn, device, warmup, runs):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        if device == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e6)
    return min(times), statistics.median(times)


# mode -> what PyTorch runs: eager (Adam's fused kernel on CUDA, its
# fastest eager update), torch.compile's default mode (the optimizer eager,
# as in most scripts), and its "reduce-overhead" mode (forward and backward
# replayed as CUDA graphs) with the optimizer's step compiled too (PyTorch's
# recipe for compiling the optimizer).
MODES = ("eager", "compile", "reduce-overhead")


def step_fns(name, device, mode):
    """The step with the batch copied in, and with the batch on the device
    already; one model (compiled once) for both."""
    sizes, batch, loss_kind, amp = MODELS[name]
    model = mlp(sizes).to(device)
    fused = {"fused": True} if device == "cuda" and mode == "eager" else {}
    if mode == "compile":
        model = torch.compile(model)
    elif mode == "reduce-overhead":
        model = torch.compile(model, mode="reduce-overhead")
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, **fused)
    opt_step = torch.compile(opt.step) if mode == "reduce-overhead" else opt.step
    # step_bench's pattern: sin(0.37 * (i % 100003)).
    x_host = torch.sin(0.37 * (torch.arange(batch * sizes[0]) % 100003)
                       .double()).float().reshape(batch, sizes[0])
    if loss_kind == "ce":
        y_host = torch.zeros(batch, dtype=torch.long)
        loss_fn = nn.CrossEntropyLoss()
    else:
        y_host = torch.zeros(batch, sizes[-1])
        loss_fn = nn.MSELoss()
    if device == "cuda":
        x_host, y_host = x_host.pin_memory(), y_host.pin_memory()

    def train(x, y):
        with (torch.autocast(device_type=device, dtype=amp) if amp
              else contextlib.nullcontext()):
            loss = loss_fn(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt_step()
        return loss.item()

    def step():
        return train(x_host.to(device, non_blocking=True),
                     y_host.to(device, non_blocking=True))

    x_dev, y_dev = x_host.to(device), y_host.to(device)
    return step, lambda: train(x_dev, y_dev)


def gemms_alone(name, device, warmup, runs):
    """A big MLP's eight bf16 GEMMs of a step at its batch (forward: three;
    backward: two input gradients, three weight gradients), one after the
    other, as torch.matmul (cuBLASLt) runs them."""
    sizes, batch = MODELS[name][0], MODELS[name][1]
    bf = dict(device=device, dtype=torch.bfloat16)
    acts = [torch.randn(batch, n, **bf) for n in sizes]
    weights = [torch.randn(sizes[i + 1], sizes[i], **bf) for i in range(3)]
    grads = [torch.randn(batch, n, **bf) for n in sizes[1:]]

    def run():
        for i in range(3):
            acts[i] @ weights[i].t()                 # forward
        for i in (1, 2):
            grads[i] @ weights[i]                    # input gradients
        for i in range(3):
            grads[i].t() @ acts[i]                   # weight gradients
        if device == "cuda":
            torch.cuda.synchronize()

    return timed(run, device, warmup, runs)


def adam_alone(name, device, warmup, runs):
    """Adam's update of a big MLP's fp32 parameters (637M) alone (PyTorch's
    fused kernel on CUDA): a memory-bound floor under any step that keeps
    fp32 Adam state, whatever its GEMMs reach."""
    sizes = MODELS[name][0]
    params = []
    for i in range(3):
        for shape in ((sizes[i + 1], sizes[i]), (sizes[i + 1],)):
            p = torch.zeros(shape, device=device, requires_grad=True)
            p.grad = torch.full(shape, 1e-3, device=device)
            params.append(p)
    opt = torch.optim.Adam(params, lr=1e-3,
                           **({"fused": True} if device == "cuda" else {}))

    def run():
        opt.step()
        if device == "cuda":
            torch.cuda.synchronize()

    return timed(run, device, warmup, runs)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--no-compile", action="store_true")
    args = p.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        print("torch: no CUDA device: skipped")
        return
    for name in args.models.split(","):
        for mode in MODES[:1] if args.no_compile else MODES:
            try:
                steps = step_fns(name, args.device, mode)
                for suffix, step in zip(("", "-resident"), steps):
                    lo, med = timed(step, args.device, 3, args.runs)
                    print(f"torch: {name} {mode}{suffix}: min {lo:.1f} us, "
                          f"median {med:.1f} us")
            except Exception as e:  # torch.compile needs a toolchain
                print(f"torch: {name} {mode}: failed: {type(e).__name__}: {e}")
        if name.startswith("big_mlp_bf16"):
            lo, med = gemms_alone(name, args.device, 3, args.runs)
            print(f"torch: {name} gemms: min {lo:.1f} us, median {med:.1f} us")
            try:
                lo, med = adam_alone(name, args.device, 3, args.runs)
                print(f"torch: {name} adam: min {lo:.1f} us, median {med:.1f} us")
            except Exception as e:  # fused Adam needs PyTorch 2
                print(f"torch: {name} adam: failed: {type(e).__name__}: {e}")


if __name__ == "__main__":
    main()
