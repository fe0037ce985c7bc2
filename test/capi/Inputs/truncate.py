#!/usr/bin/env python3
"""truncate.py IN OUT N: writes the first N bytes of IN to OUT (N < 0: all
but the last -N bytes)."""
import sys

with open(sys.argv[1], "rb") as f:
    data = f.read()
n = int(sys.argv[3])
with open(sys.argv[2], "wb") as f:
    f.write(data[:n] if n >= 0 else data[:len(data) + n])
