#!/usr/bin/env python3
"""Re-runs every end-to-end test of this directory with extra `dlc run`
flags, e.g. the other CPU schedule, so that every code path is checked
against the PyTorch references whatever CPU the suite runs on.

  rerun_with.py TMPDIR [--tests DIR] FLAG...

Each `<model>.test` file's RUN lines (of this directory, or of DIR) are
executed with %s, %S, %t, %dlc_src and %python substituted and FLAGs appended
to the `dlc run` command; a test that REQUIRES a CPU feature this machine
lacks (avx512bf16, x86-64-v4) is skipped, as lit skips it. Prints one line
per model; exit status 1 if any failed."""
import glob
import os
import shlex
import subprocess
import sys

# What ends the arguments of a command on a RUN line.
REDIRECTS = (">", ">>", "<", "|", "2>&1")


def cpu_features():
    """The lit features of this CPU (test/lit.cfg.py's rule): a test that
    REQUIRES one it lacks is skipped, as lit skips it."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split()
                          for line in f if line.startswith("flags")), [])
    except OSError:
        flags = []
    return {"avx512bf16": "avx512_bf16" in flags,
            "x86-64-v4": all(f in flags for f in
                             ("avx512f", "avx512dq", "avx512bw", "avx512vl"))}


def missing_cpu_feature(test, have):
    """The CPU feature a test REQUIRES that this machine lacks, or None."""
    for line in open(test):
        if line.startswith("# REQUIRES:"):
            for feature in line.split(":", 1)[1].replace(",", " ").split():
                if feature in have and not have[feature]:
                    return feature
    return None


def run_lines(test):
    """The RUN lines of a lit test, with lit's `DEFINE: %{name} = value`
    substitutions applied."""
    defines, runs = {}, []
    for line in open(test):
        if line.startswith(("# DEFINE:", "# REDEFINE:")):
            key, value = line.split(":", 1)[1].split("=", 1)
            value = value.strip()
            for k in sorted(defines, key=len, reverse=True):
                value = value.replace(k, defines[k])
            defines[key.strip()] = value
        elif line.startswith("# RUN:"):
            cmd = line.split("RUN:", 1)[1].strip()
            for key in sorted(defines, key=len, reverse=True):
                cmd = cmd.replace(key, defines[key])
            runs.append(cmd)
    return runs


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.dirname(os.path.dirname(here))
    tmp, flags = sys.argv[1], sys.argv[2:]
    tests_dir = here
    if flags[:1] == ["--tests"]:
        tests_dir, flags = os.path.abspath(flags[1]), flags[2:]
    os.makedirs(tmp, exist_ok=True)
    failed = []
    have = cpu_features()
    tests = [t for t in sorted(glob.glob(os.path.join(tests_dir, "*.test")))
             if not missing_cpu_feature(t, have)]
    for test in tests:
        name = os.path.splitext(os.path.basename(test))[0]
        runs = run_lines(test)
        ok = True
        for cmd in runs:
            cmd = (cmd.replace("%S", tests_dir).replace("%dlc_src", src)
                   .replace("%s", test)
                   .replace("%t", os.path.join(tmp, name))
                   .replace("%python", shlex.quote(sys.executable)))
            # Error-path checks (`not ...`) are not about numbers: skipped.
            if cmd.startswith("not "):
                continue
            # FLAGs go after the `dlc run` arguments, before any redirection or
            # pipe; the line then runs in the shell, as under lit.
            if cmd.startswith("dlc run "):
                words = shlex.split(cmd)
                cut = next((i for i, w in enumerate(words)
                            if w in REDIRECTS), len(words))
                rest = cmd[len(cmd) - len(" ".join(words[cut:])):] if cut < len(words) else ""
                cmd = " ".join([shlex.join(words[:cut] + flags), rest])
            p = subprocess.run(cmd, shell=True, capture_output=True, text=True)
            if p.returncode != 0:
                ok = False
                print(f"{name}: FAILED: {cmd}\n{p.stdout}{p.stderr}")
                break
        if ok:
            print(f"{name}: ok")
        else:
            failed.append(name)
    print(f"{len(tests) - len(failed)} of {len(tests)} models match PyTorch with {' '.join(flags)}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
