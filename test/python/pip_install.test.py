"""Run by pip_install.test with the virtual environment's Python."""
import sys

import numpy as np

import dlc

print("installed:", dlc.__file__)
m = dlc.compile(sys.argv[1], device="cpu", train=dlc.Train())
print("model", m.name, "on", m.device)
x = np.random.default_rng(0).standard_normal((16, 10)).astype(np.float32)
y = x[:, :1] * 2
print("forward:", m(x).shape, m(x).dtype)
losses = [m.train_step(x, y) for _ in range(20)]
print("loss fell:", losses[-1] < losses[0])
