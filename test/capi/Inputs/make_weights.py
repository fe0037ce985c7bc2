#!/usr/bin/env python3
"""make_weights.py SNIPPET.py X.npy WEIGHTS.safetensors EXPECTED.npy

Runs SNIPPET.py (the by-hand safetensors writer of docs/c-api.md), saves
random weights of the digits model with its save_safetensors(), plus tensors
the model does not use (other dtypes, a 0-d one), and writes the logits that
relu(x @ fc1.weight.T + fc1.bias) @ fc2.weight.T + fc2.bias gives for X in
float64 (PyTorch's nn.Linear layout). When torch is importable, also checks
that saving a torch state_dict with the same values gives the same bytes."""
import sys

import numpy as np

snippet, x_path, weights_path, expected_path = sys.argv[1:5]
env = {}
with open(snippet, encoding="utf-8") as f:
    exec(compile(f.read(), snippet, "exec"), env)
save_safetensors = env["save_safetensors"]

rng = np.random.default_rng(2024)
w = {
    "fc1.weight": rng.uniform(-0.05, 0.05, (256, 784)).astype(np.float32),
    "fc1.bias": rng.uniform(-0.05, 0.05, (256,)).astype(np.float32),
    "fc2.weight": rng.uniform(-0.1, 0.1, (10, 256)).astype(np.float32),
    "fc2.bias": rng.uniform(-0.1, 0.1, (10,)).astype(np.float32),
}
extra = {
    "step": np.array(12, dtype=np.int64),
    "ema.fc2.bias": rng.standard_normal(10).astype(np.float16),
    "counts": np.arange(6, dtype=np.uint8).reshape(2, 3),
}
save_safetensors(weights_path, {**w, **extra})

x = np.load(x_path).astype(np.float64)
h = np.maximum(x @ w["fc1.weight"].T.astype(np.float64) + w["fc1.bias"], 0.0)
logits = h @ w["fc2.weight"].T.astype(np.float64) + w["fc2.bias"]
np.save(expected_path, logits.astype(np.float32))

try:
    import torch
except ImportError:
    torch = None
if torch is not None:
    fc1, fc2 = torch.nn.Linear(784, 256), torch.nn.Linear(256, 10)
    with torch.no_grad():
        for layer, name in ((fc1, "fc1"), (fc2, "fc2")):
            layer.weight.copy_(torch.from_numpy(w[name + ".weight"]))
            layer.bias.copy_(torch.from_numpy(w[name + ".bias"]))
    model = torch.nn.Module()
    model.fc1, model.fc2 = fc1, fc2
    state = dict(model.state_dict())
    state.update({k: torch.from_numpy(v) for k, v in extra.items()})
    save_safetensors(weights_path + ".torch", state)
    with open(weights_path, "rb") as a, open(weights_path + ".torch", "rb") as b:
        if a.read() != b.read():
            sys.exit("a torch state_dict and its NumPy copy are saved differently")
print("saved %d tensors%s" % (len(w) + len(extra),
                              ", torch state_dict identical" if torch else ""))
