"""Reads `dlc --memory-report=json` of one model at several sequence lengths
and checks that an entry's saved activations grow linearly with the length:
linear_growth.py ENTRY T1=REPORT1.json T2=REPORT2.json ...

Prints the bytes per step and the constant part, or why it is not linear."""
import json
import sys

entry = sys.argv[1]
points = []
for arg in sys.argv[2:]:
    t, path = arg.split("=", 1)
    with open(path) as f:
        report = json.load(f)
    points.append((int(t), report["entries"][entry]["saved_activations"]))
points.sort()
(t0, s0), (t1, s1) = points[0], points[1]
per_step, rest = divmod(s1 - s0, t1 - t0)
base = s0 - per_step * t0
bad = [(t, s) for t, s in points if s != base + per_step * t] + \
      ([("remainder", rest)] if rest else [])
if bad or per_step <= 0:
    print("not linear:", points)
    sys.exit(1)
print(f"{entry} saves {per_step} bytes per step, plus {base}, at "
      + ", ".join(f"T={t}: {s}" for t, s in points))
