#!/usr/bin/env python3
"""Re-runs every end-to-end test of this directory with extra `dlc run`
flags, e.g. the other CPU schedule, so that every code path is checked
against the PyTorch references whatever CPU the suite runs on.

  rerun_with.py TMPDIR FLAG...

Each `<model>.test` file's RUN lines are executed with %S, %t and %python
substituted and FLAGs appended to the `dlc run` command. Prints one line per
model; exit status 1 if any failed."""
import glob
import os
import shlex
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
tmp, flags = sys.argv[1], sys.argv[2:]
os.makedirs(tmp, exist_ok=True)
failed = []
tests = sorted(glob.glob(os.path.join(here, "*.test")))
for test in tests:
    name = os.path.splitext(os.path.basename(test))[0]
    runs = [l.split("RUN:", 1)[1].strip() for l in open(test) if l.startswith("# RUN:")]
    ok = True
    for cmd in runs:
        cmd = (cmd.replace("%S", here).replace("%t", os.path.join(tmp, name))
               .replace("%python", shlex.quote(sys.executable)))
        argv = shlex.split(cmd)
        if argv[:2] == ["dlc", "run"]:
            argv += flags
        p = subprocess.run(argv, capture_output=True, text=True)
        if p.returncode != 0:
            ok = False
            print(f"{name}: FAILED: {' '.join(argv)}\n{p.stdout}{p.stderr}")
            break
    if ok:
        print(f"{name}: ok")
    else:
        failed.append(name)
print(f"{len(tests) - len(failed)} of {len(tests)} models match PyTorch with {' '.join(flags)}")
sys.exit(1 if failed else 0)
