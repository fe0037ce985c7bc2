#!/usr/bin/python3
"""Compiles and runs every export of the real-model corpus (real/<arch>_<variant>/,
written by gen_real_models.py) and checks what a user of each would see.

For each folder, from its meta.json:
  * `dlc run model.onnx --input NAME=FILE ...` (the graph's own input names,
    as the exporter wrote them) must equal PyTorch's float64 output, y.npy,
    to --rtol (max-abs scaled, as compare.py);
  * the generated header must compile as C11 and as C++17 (`--emit=header`);
  * the architectures in REFUSED must instead be refused with exit status 1
    and a message naming the op (the recurrent ops are a later issue), and
    the folders in PENDING are skipped, and counted.

Usage: check_real_models.py --dlc dlc --cc cc --cxx c++ --include DIR --work DIR
       [--dlc-run-flag=--cuda-emulate]
Prints one line per model and a summary; exits 1 if any check fails.
"""

import argparse
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

# Architectures whose exports dlc refuses on purpose, and the op it names
# (none now: the recurrent ops, the last ones, import).
REFUSED = {}
# Exports not imported yet, by folder: the open part of the real-model
# work. Listed so that the summary says so.
PENDING = set()


def run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True)


def scaled_error(got, want):
    got = got.astype(np.float64)
    want = want.astype(np.float64)
    if got.shape != want.shape:
        return float("inf")
    return float(np.max(np.abs(got - want)) / max(1.0, np.max(np.abs(want))))


def check(folder, meta, args):
    model = os.path.join(folder, "model.onnx")
    name = os.path.basename(folder)
    work = os.path.join(args.work, name)
    os.makedirs(work, exist_ok=True)
    feeds = []
    for onnx_name, f in meta["inputs"].items():
        feeds += ["--input", "%s=%s" % (onnx_name, os.path.join(folder, f))]
    out_name, out_file = next(iter(meta["outputs"].items()))
    got_path = os.path.join(work, "y.npy")
    r = run([args.dlc, "run", model] + feeds + ["--output", got_path] +
            args.dlc_run_flag)
    arch = meta["arch"]
    if arch in REFUSED:
        ops = REFUSED[arch]
        if r.returncode != 1 or not any("'%s'" % op in r.stdout for op in ops):
            return "FAIL: expected a refusal naming %s, got exit %d: %s" % (
                " or ".join(ops), r.returncode, r.stdout.strip()[:300])
        return "refused as expected (%s)" % r.stdout.strip().splitlines()[0][:120]
    if r.returncode != 0:
        return "FAIL: dlc run exit %d: %s" % (r.returncode,
                                             r.stdout.strip()[:400])
    err = scaled_error(np.load(got_path), np.load(os.path.join(folder, out_file)))
    if not err <= args.rtol:
        return "FAIL: scaled error %.3g > %g" % (err, args.rtol)
    header = os.path.join(work, "model.h")
    r = run([args.dlc, model, "--emit=header", "-o", header])
    if r.returncode != 0:
        return "FAIL: --emit=header: %s" % r.stdout.strip()[:300]
    for compiler, std, lang in ((args.cc, "c11", "c"), (args.cxx, "c++17", "c++")):
        # Included, as a program includes it (compiled as the main file,
        # clang would warn about its unused static inline functions).
        r = run([compiler, "-std=" + std, "-fsyntax-only", "-Wall",
                 "-Werror", "-pedantic", "-I" + args.include,
                 "-include", header, "-x", lang, "/dev/null"])
        if r.returncode != 0:
            return "FAIL: the header does not compile as %s: %s" % (
                std, r.stdout.strip()[:300])
    return "ok (scaled error %.2g, header compiles as C11 and C++17)" % err


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default=os.path.join(HERE, "real"))
    ap.add_argument("--dlc", default="dlc")
    ap.add_argument("--cc", default="cc")
    ap.add_argument("--cxx", default="c++")
    ap.add_argument("--include", required=True, help="libdlcrt's include dir")
    ap.add_argument("--work", required=True)
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--dlc-run-flag", action="append", default=[],
                    help="an extra `dlc run` flag (--cuda-emulate)")
    args = ap.parse_args()
    failures = passed = refused = pending = 0
    for name in sorted(os.listdir(args.corpus)):
        folder = os.path.join(args.corpus, name)
        meta_path = os.path.join(folder, "meta.json")
        if not os.path.isfile(meta_path):
            continue
        with open(meta_path) as f:
            meta = json.load(f)
        if name in PENDING:
            pending += 1
            print("%-34s pending (not imported yet)" % name)
            continue
        verdict = check(folder, meta, args)
        print("%-34s %s" % (name, verdict))
        if verdict.startswith("FAIL"):
            failures += 1
        elif verdict.startswith("refused"):
            refused += 1
        else:
            passed += 1
    print("real models: %d pass, %d refused as expected, %d pending, "
          "%d failures" % (passed, refused, pending, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
