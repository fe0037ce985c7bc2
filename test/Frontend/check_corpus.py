#!/usr/bin/env python3
"""Runs `dlc --emit=dlc` on every file of the bad-input corpus and checks the
contract: exit status exactly 1 (never a signal, never 0), and a first
diagnostic of the form `<file>:<line>:<col>: error: <message>` naming that
file. Prints one line per failure; exit status 1 if there is any."""
import glob
import os
import re
import subprocess
import sys

corpus = sys.argv[1]
files = sorted(glob.glob(os.path.join(corpus, "*.dlc")))
if len(files) < 25:
    sys.exit(f"only {len(files)} files in the corpus at {corpus}")
located = re.compile(r"^(?P<file>[^\n:]+\.dlc):(?P<line>\d+):(?P<col>\d+): error: \S")
bad = 0
for f in files:
    p = subprocess.run(["dlc", f, "--emit=dlc"], capture_output=True)
    err = p.stderr.decode("utf-8", "replace")
    m = located.match(err)
    if p.returncode != 1:
        print(f"{os.path.basename(f)}: exit status {p.returncode}, expected 1")
        bad += 1
    elif not m or os.path.basename(m.group("file")) != os.path.basename(f):
        print(f"{os.path.basename(f)}: no located error first: {err[:120]!r}")
        bad += 1
print(f"{len(files) - bad} of {len(files)} bad inputs rejected with a located error and exit status 1")
sys.exit(1 if bad else 0)
