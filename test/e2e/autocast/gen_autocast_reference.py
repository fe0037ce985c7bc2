#!/usr/bin/python3
"""Reference data of dlc's mixed-precision tests: PyTorch's own autocast.

    /usr/bin/python3 test/e2e/autocast/gen_autocast_reference.py

For each model below (the end-to-end models of test/e2e, with their stored
weights and inputs), runs the forward pass under
`torch.autocast(device_type="cpu", dtype=torch.bfloat16)` and writes each
output, as float32, to test/e2e/data/<model>/autocast_bf16.<output>.npy.
check_autocast.py then measures PyTorch's own error against the float64
reference already stored there and requires dlc's bf16 error to be no
worse than twice it.
"""
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
E2E = os.path.dirname(HERE)
sys.path.insert(0, E2E)
import gen_reference as G  # noqa: E402

# (Not `attention`: PyTorch 1.13's CPU autocast fails on its layer norm,
# "expected scalar type BFloat16 but found Float".)
MODELS = ["digits", "mlp_gelu", "mlp_tanh", "mlp_sigmoid", "residual_ln",
          "flatten_mlp", "mlp_softmax"]


def main():
    for name in MODELS:
        seed, build = G.MODELS[name]
        torch.manual_seed(seed)
        module, inputs, fwd = build(np.random.default_rng(seed))[:3]
        data = os.path.join(E2E, "data", name)
        weights = G.read_safetensors(os.path.join(data, "weights.safetensors"))
        module.load_state_dict({k: torch.from_numpy(v.copy())
                                for k, v in weights.items()})
        t = {k: torch.from_numpy(np.load(os.path.join(data, k + ".npy")))
             for k in inputs}
        with torch.no_grad(), torch.autocast(device_type="cpu",
                                             dtype=torch.bfloat16):
            outs = fwd(module, t)
        for k, v in outs.items():
            np.save(os.path.join(data, "autocast_bf16.%s.npy" % k),
                    v.float().numpy())
            ref = np.load(os.path.join(data, k + ".npy")).astype(np.float64)
            err = np.abs(v.float().numpy() - ref).max() / max(1.0, np.abs(ref).max())
            print("%-12s %-8s torch autocast bf16 error %.3g" % (name, k, err))


if __name__ == "__main__":
    main()
