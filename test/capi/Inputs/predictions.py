#!/usr/bin/env python3
"""Prints the predicted class of each row of a logits .npy file, as the
example program of docs/c-api.md does: "sample N: class C"."""
import sys

import numpy as np

for n, c in enumerate(np.load(sys.argv[1]).argmax(axis=1)):
    print("sample %d: class %d" % (n, c))
