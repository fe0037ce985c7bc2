"""The Python package's fit on train_data.py's data, as `dlc train` runs it:
train_fit.py MODEL DIR EPOCHS SEED OUT.safetensors prints the history."""
import json
import sys

import numpy as np

import dlc

model, d, epochs, seed, out = sys.argv[1:6]
t, v = np.load(f"{d}/train.npz"), np.load(f"{d}/val.npz")
m = dlc.compile(model, train=dlc.Train(), device="cpu")
h = m.fit(t["x"], t["y"], epochs=int(epochs), shuffle=True, seed=int(seed),
          validation=(v["x"], v["y"]), progress=False)
m.save(out)
print(json.dumps(h))
