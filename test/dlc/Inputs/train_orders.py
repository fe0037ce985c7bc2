"""train_orders.py DLC MODEL: dlc train's shuffle against NumPy's
default_rng(seed).permutation(n), epoch after epoch from one generator,
for many seeds (one and two 32-bit words) and sizes."""
import subprocess
import sys

import numpy as np

dlc, model = sys.argv[1:3]
cases = 0
for seed in [0, 1, 3, 42, 12345, 2**31 - 1, 2**32, 2**32 + 5, 2**40 + 7,
             2**63 + 11, 2**64 - 1]:
    for n in [1, 2, 3, 10, 64, 100, 1000, 65537]:
        out = subprocess.run(
            [dlc, "train", model, "--shuffle-order", str(n), "--seed",
             str(seed), "--epochs", "3"],
            check=True, capture_output=True, text=True).stdout.split("\n")
        rng = np.random.default_rng(seed)
        for e in range(3):
            want = " ".join(map(str, rng.permutation(n)))
            assert out[e] == want, (seed, n, e)
        cases += 1
print("orders equal NumPy's in", cases, "cases")
