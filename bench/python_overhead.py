#!/usr/bin/env python3
"""Per-call overhead of the Python package: `m(x)` and `m.train_step(x, y)`
against the compiled entry itself, for the toy and digits models.

For every call, the wall time of the Python call (time.perf_counter_ns
around it) minus the entry's own time as libdlcrt measured it
(dlc_model_measure_entries / dlc_model_last_entry_us: the wall clock around
the entry's call on the CPU) is the overhead: the binding's checks, the
ctypes call, dlc_model_run's own work and the output allocation. Printed:
the medians over many calls; "bare" is the same overhead for a bare ctypes
call of dlc_model_run with its pointers set once (the floor of any ctypes
binding), and "binding" the difference: what the package adds to it.

Run from the repository with the build's tools:
  PYTHONPATH=python DLC_COMPILER=build/bin/dlc /usr/bin/python3 bench/python_overhead.py
Not part of the test suite: timings are never asserted.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "python"))
import dlc  # noqa: E402
from dlc import _runtime  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def per_call(m, fn, calls):
    """Medians (microseconds) of the call, the entry and their difference."""
    m.measure_entries(True)
    for _ in range(min(200, calls)):
        fn()
    wall, entry, over = [], [], []
    for _ in range(calls):
        t0 = time.perf_counter_ns()
        fn()
        t1 = time.perf_counter_ns()
        e = m.last_entry_us
        w = (t1 - t0) / 1e3
        wall.append(w)
        entry.append(e)
        over.append(w - e)
    m.measure_entries(False)
    return np.median(wall), np.median(entry), np.median(over)


def bare(m, e, arrays, calls):
    """dlc_model_run of entry `e` through ctypes, pointers set once."""
    c = m._core
    outs = [np.empty(s.shape, s.dtype) for s in e.outputs]
    for i, a in enumerate(arrays):
        e.in_ptrs[i] = a.ctypes.data
    for i, o in enumerate(outs):
        e.out_ptrs[i] = o.ctypes.data
    run, h, idx, ia, oa = (c.L.dlc_model_run, c.handle, e.index, e.in_addr,
                           e.out_addr)
    m.measure_entries(True)
    over = []
    for _ in range(calls):
        t0 = time.perf_counter_ns()
        run(h, idx, ia, oa)
        t1 = time.perf_counter_ns()
        over.append((t1 - t0) / 1e3 - m.last_entry_us)
    m.measure_entries(False)
    return np.median(over)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=5000)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print(f"DLC_NUM_THREADS={os.environ.get('DLC_NUM_THREADS', '(unset)')}, "
          f"runtime {_runtime.runtime_path()}")
    print(f"{'model':8} {'call':12} {'wall us':>9} {'entry us':>9} "
          f"{'overhead us':>12} {'bare us':>9} {'binding':>9}")
    for name in ("toy", "digits"):
        m = dlc.compile(os.path.join(ROOT, "examples", f"{name}.dlc"),
                        train=dlc.Train(), device="cpu")
        (xn, xdt, xs), = m.inputs
        x = rng.standard_normal(xs).astype(xdt)
        if name == "toy":
            y = rng.standard_normal((xs[0], 1)).astype(np.float32)
        else:
            y = rng.integers(0, 10, xs[0]).astype(np.int64)
        for label, fn, entry, arrays in (
                ("m(x)", lambda: m(x), "forward", [x]),
                ("train_step", lambda: m.train_step(x, y), "train_step",
                 [x, y])):
            w, e, o = per_call(m, fn, args.calls)
            b = bare(m, m._core.entries[entry], arrays, args.calls)
            print(f"{name:8} {label:12} {w:9.2f} {e:9.2f} {o:12.2f} "
                  f"{b:9.2f} {o - b:9.2f}")
        m.close()


if __name__ == "__main__":
    main()
