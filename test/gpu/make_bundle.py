#!/usr/bin/env python3
"""Builds the GPU suite: every end-to-end test of test/e2e (models, training
runs, ONNX models, mixed precision) as self-contained executables with their
data, for a machine that has a GPU and Python with NumPy but no LLVM, MLIR
or dlc.

  make_bundle.py OUT --lib DIR [--cpu CPU] [--ptxas PTXAS]

For each `dlc run` line of a test, the model is compiled here (dlc,
--target=all, for `--cpu`, default x86-64-v3) and linked with
test/capi/Inputs/run_model.c and libdlcrt (found next to the executables,
$ORIGIN/../lib, copied from DIR). The data files and check scripts the test names are copied
under OUT/data. OUT/cases.json lists, per test, the commands to run (the
runner instead of `dlc run`, then the test's own NumPy checks against the
PyTorch references); lines that need the compiler or FileCheck are left
out and counted. test/gpu/run.py executes the bundle on each device.
With --ptxas, each model's PTX (`dlc --emit=ptx`) is also assembled by
NVIDIA's ptxas for sm_80 and sm_90, which the GPU's driver would otherwise
be the first to do. Exit status 1 if a model fails to compile or link, or
its PTX to assemble."""
import argparse
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
E2E = os.path.join(SRC, "test", "e2e")
RUNNER = os.path.join(SRC, "test", "capi", "Inputs", "run_model.c")
sys.path.insert(0, E2E)
from rerun_with import REDIRECTS, run_lines  # noqa: E402

# Group, directory, compile flags added. The test models' GEMMs are small
# enough to be kernels (dlc-map-to-gpu's small GEMMs): the models and the
# training runs run once more with every GEMM a cuBLASLt call. Of the
# data-parallel tests, those whose steps run alone (one rank, NCCL on
# CUDA); the mpirun lines are left out.
CUBLAS = ["--cuda-small-gemm-fmas=0"]
TEST_DIRS = [("e2e", E2E, []), ("train", os.path.join(E2E, "train"), []),
             ("onnx", os.path.join(E2E, "onnx"), []),
             ("autocast", os.path.join(E2E, "autocast"), []),
             ("distributed", os.path.join(E2E, "distributed"), []),
             ("e2e-cublas", E2E, CUBLAS),
             ("train-cublas", os.path.join(E2E, "train"), CUBLAS)]

# `dlc run` options that belong to the run (the runner's), with a value.
RUN_VALUE = {"--weights", "--seed", "--input", "--output", "--steps", "--save",
             "--entry", "--benchmark"}
# Compile options that take a separate value.
COMPILE_VALUE = {"--loss", "--optimizer", "--lr", "--momentum", "--dampening",
                 "--nesterov", "--weight-decay", "--betas", "--eps",
                 "--precision", "--batch", "--input-shape", "--label",
                 "--init-loss-scale", "-x", "--vector-bits", "--register-tile",
                 "--cache-tile", "--device-memory"}


# What the PTX is assembled for with --ptxas: the chip it targets and the
# H100/H200.
PTXAS_ARCHS = ["sm_80", "sm_90"]


class Bundle:
    def __init__(self, out, cpu, ptxas=None):
        self.out, self.cpu, self.ptxas = out, cpu, ptxas
        self.objects = {}  # (model, flags) -> executable name
        self.ptxas_failures = []
        self.assembled = 0
        for d in ("bin", "lib", "obj", "data"):
            os.makedirs(os.path.join(out, d), exist_ok=True)

    def data(self, path):
        """A repository file as {data}/<relative path>, copied once."""
        rel = os.path.relpath(os.path.realpath(path), SRC)
        dest = os.path.join(self.out, "data", rel)
        if not os.path.exists(dest):
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copyfile(path, dest)
        return "{data}/" + rel

    def rewrite(self, word):
        """Repository paths inside a word (also NAME=PATH) become {data}."""
        name, eq, path = word.rpartition("=")
        cand = path if eq else word
        if os.path.isfile(cand) and os.path.realpath(cand).startswith(SRC + os.sep):
            return (name + eq if eq else "") + self.data(cand)
        return word

    def executable(self, model, flags):
        key = (os.path.realpath(model), tuple(flags))
        if key in self.objects:
            return self.objects[key]
        exe = "m%03d_%s" % (len(self.objects),
                            re.sub(r"[^A-Za-z0-9_]", "_",
                                   os.path.splitext(os.path.basename(model))[0]))
        obj = os.path.join(self.out, "obj", exe + ".o")
        subprocess.run(["dlc", model, *flags, "--cpu=" + self.cpu, "-o", obj],
                       check=True)
        header = open(obj[:-2] + ".h").read()
        desc = re.search(r"dlc_model_[A-Za-z0-9_]+", header.split("dlc_model_desc", 1)[1]).group(0)
        subprocess.run(
            [os.environ.get("CC", "cc"), "-std=c11", "-O2",
             "-I" + os.path.join(SRC, "runtime", "include"),
             "-include", obj[:-2] + ".h", "-DDLC_TEST_MODEL=" + desc, RUNNER,
             obj, "-L" + os.path.join(self.out, "lib"), "-ldlcrt",
             "-Wl,-rpath,$ORIGIN/../lib", "-o",
             os.path.join(self.out, "bin", exe)], check=True)
        if self.ptxas:
            self.assemble(model, flags, obj[:-2] + ".ptx")
        self.objects[key] = exe
        return exe

    def assemble(self, model, flags, ptx):
        """Assembles the model's PTX for PTXAS_ARCHS; failures are kept."""
        subprocess.run(["dlc", model, *flags, "--emit=ptx", "-o", ptx],
                       check=True)
        # A model whose every op is a cuBLASLt call has no PTX (dlc says so).
        if os.path.getsize(ptx) == 0:
            return
        self.assembled += 1
        for arch in PTXAS_ARCHS:
            r = subprocess.run([self.ptxas, "-arch=" + arch, ptx, "-o",
                                os.devnull], capture_output=True, text=True)
            if r.returncode:
                self.ptxas_failures.append(
                    f"{os.path.relpath(model, SRC)} {' '.join(flags)} "
                    f"({arch}): {r.stderr.strip()}")

    def translate_run(self, words, extra):
        """`dlc run MODEL ...` as a runner command, compiled with the flags
        `extra` added, or None."""
        model, args = words[2], words[3:]
        cut = next((i for i, w in enumerate(args) if w in REDIRECTS), len(args))
        args, tail = args[:cut], args[cut:]
        # A pipe into FileCheck checks text the bundle cannot check (no
        # FileCheck there); the outputs are still compared across devices.
        if "|" in tail and "FileCheck" in tail[tail.index("|") + 1:]:
            tail = tail[:tail.index("|")]
        flags, run, i = [], [], 0
        train, weights, seed = False, None, None
        while i < len(args):
            a = args[i]
            key = a.split("=", 1)[0] if a.startswith("--") else a
            inline = "=" in a and a.startswith("--")
            value = a.split("=", 1)[1] if inline else (args[i + 1] if i + 1 < len(args) else None)
            step = 1 if inline else 2
            if key in RUN_VALUE:
                if key == "--weights":
                    weights = self.rewrite(value)
                elif key == "--seed":
                    seed = value
                elif key == "--input":
                    if "=" not in value:
                        return None  # a .safetensors of inputs: not in the runner
                    run.append(self.rewrite(value))
                elif key == "--output":
                    run += ["--out", value]
                elif key == "--benchmark":
                    pass
                else:
                    run += [key, self.rewrite(value)]
                i += step
            elif key == "--print-loss":
                run.append(key)
                i += 1
            else:
                if key == "--train":
                    train = True
                    flags.append(a)
                    i += 1
                elif a == "--data-parallel":
                    # The runner is a job of one rank (no mpirun there).
                    flags.append("--data-parallel=1")
                    i += 1
                elif key in COMPILE_VALUE and not inline:
                    flags += [a, value]
                    i += 2
                else:
                    flags.append(a)
                    i += 1
        exe = self.executable(model, flags + extra)
        cmd = ["{bin}/" + exe]
        if train and "--entry" not in run:
            cmd += ["--entry", "train_step"]
        cmd += run
        cmd += [weights] if weights else ["--seed", seed or "0"]
        return " ".join(shlex.quote(c) if "{" not in c else c for c in cmd) + \
            ("" if not tail else " " + " ".join(tail))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--lib", required=True, help="the directory of libdlcrt.so")
    ap.add_argument("--cpu", default="x86-64-v3")
    ap.add_argument("--ptxas", help="also assemble every model's PTX with it")
    opts = ap.parse_args()
    out = os.path.abspath(opts.out)
    b = Bundle(out, opts.cpu, opts.ptxas)
    for f in glob.glob(os.path.join(opts.lib, "libdlcrt.so*")):
        shutil.copy(f, os.path.join(out, "lib"), follow_symlinks=False)
    # The NumPy check scripts (they import each other).
    for script in glob.glob(os.path.join(E2E, "**", "*.py"), recursive=True):
        b.data(script)
    shutil.copy(os.path.join(HERE, "run.py"), out)
    shutil.copy(os.path.join(HERE, "run.sh"), out)
    # The CUDA probe: the runtime's own answer, and why not.
    subprocess.run([os.environ.get("CC", "cc"), "-std=c11",
                    "-I" + os.path.join(SRC, "runtime", "include"),
                    os.path.join(HERE, "Inputs", "probe.c"), "-L" + os.path.join(out, "lib"),
                    "-ldlcrt", "-Wl,-rpath,$ORIGIN/../lib", "-o",
                    os.path.join(out, "bin", "probe")], check=True)

    cases, left_out = [], 0
    for group, d, extra in TEST_DIRS:
        for test in sorted(glob.glob(os.path.join(d, "*.test"))):
            name = group + "/" + os.path.splitext(os.path.basename(test))[0]
            commands, usable = [], True
            # A test that starts a job of several ranks needs mpirun, which
            # the bundle does not have: its later checks read what the job
            # wrote.
            lines = run_lines(test)
            if any("%mpirun" in cmd for cmd in lines):
                continue
            for cmd in lines:
                cmd = (cmd.replace("%S", d).replace("%dlc_src", SRC)
                       .replace("%s", test).replace("%python", "{python}"))
                cmd = cmd.replace("%t", "{out}/t")
                words = shlex.split(cmd)
                if words[:2] == ["dlc", "run"]:
                    runner = b.translate_run(words, extra)
                    if runner is None:
                        usable = False
                        break
                    commands.append(runner)
                elif words[:1] == ["{python}"] and "FileCheck" not in cmd:
                    commands.append(" ".join(b.rewrite(w) if "{" not in w else w
                                             for w in words))
                elif words[:1] in (["rm"], ["mkdir"]):
                    continue
                else:
                    left_out += 1
            if usable and any(c.startswith("{bin}/") for c in commands):
                cases.append({"name": name, "commands": commands})
    json.dump({"cases": cases}, open(os.path.join(out, "cases.json"), "w"),
              indent=1)
    shutil.rmtree(os.path.join(out, "obj"))
    size = sum(os.path.getsize(os.path.join(r, f))
               for r, _, fs in os.walk(out) for f in fs)
    print(f"{len(cases)} tests, {len(b.objects)} executables, "
          f"{left_out} compiler-only lines left out, {size / 2**20:.1f} MiB in {out}")
    if b.ptxas:
        for failure in b.ptxas_failures:
            print("ptxas refuses the PTX of " + failure, file=sys.stderr)
        if b.ptxas_failures:
            return 1
        print(f"ptxas: the PTX of all {b.assembled} models with kernels "
              f"(of {len(b.objects)}) assembles for "
              + " and ".join(PTXAS_ARCHS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
